// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows on one device over loopback, through libibverbs: type 1
 * windows bound with ibv_bind_mw(), type 2 windows bound with a BIND_MW
 * work request; every bind rule of the IBA with the exact completion
 * status (mw_bind.c); every access through a window checked against the
 * window's own bytes and rights, one byte inside and one byte outside,
 * with the target compared byte for byte and its guard bytes checked; the
 * ordering of a bind before what follows it, and the lifetime of a window
 * and its region. Runs in the guest as root.
 *
 *   mw_test [DEVICE [PATTERN...]]	the cases (whose names contain a
 *					PATTERN), as TAP lines (default stag0)
 *
 * Each case runs in a child process of its own, which opens the device,
 * creates and connects its own QPs and destroys them all at the end; it
 * has $STAG_MW_TIMEOUT seconds (default 30) before it counts as hung.
 *
 * A QP pair is a, the requester of the accesses, and b, the QP whose
 * process owns the target and which binds. An access error moves both
 * QPs to ERR (IBA class C), so a case that must look again after one uses
 * another pair of the same PD.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mw.h"

/* ---- accesses through a window: its own bounds and rights ---- */

struct acc {
	int mw_type;
	int access;		/* the window's */
	enum ibv_wr_opcode op;
	long x;			/* from the window's first byte */
	size_t len;
	enum ibv_wc_status status;
	bool abs;		/* x is the remote address itself */
};

#define OK	IBV_WC_SUCCESS
#define RAE	IBV_WC_REM_ACCESS_ERR
#define WR	IBV_WR_RDMA_WRITE
#define RD	IBV_WR_RDMA_READ
#define FA	IBV_WR_ATOMIC_FETCH_AND_ADD
#define CS	IBV_WR_ATOMIC_CMP_AND_SWP
#define AW	IBV_WR_ATOMIC_WRITE

/* One access through a fresh window over [WOFF, WOFF + WLEN) of the target. */
static void access_case(const void *arg)
{
	const struct acc *ac = arg;
	struct ibv_mw *mw = mw_new(ac->mw_type);
	struct end *a, *b;
	struct win w;
	bool ok;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b))
		return;
	if (ac->mw_type == IBV_MW_TYPE_1)
		ok = bind1(b, &w, mw, WOFF, WLEN, ac->access);
	else
		ok = bind2(b, &w, mw, ibv_inc_rkey(mw->rkey), WOFF, WLEN, ac->access);
	if (!ok)
		return;
	if (ac->abs)
		access_at(a, ac->op, ac->len, w.rkey, (uint64_t)ac->x, 0, ac->status,
			  "through the window");
	else
		access_win(a, &w, ac->op, ac->x, ac->len, ac->status, "through the window");
}

#define ACC(_type, _access, _op, _x, _len, _status) \
	(&(const struct acc){ _type, _access, _op, _x, _len, _status, false })
#define ACC_AT(_type, _access, _op, _addr, _len, _status) \
	(&(const struct acc){ _type, _access, _op, _addr, _len, _status, true })

/* ---- ordering ---- */

/* Each WRITE posted right behind the bind it uses the rkey of: all of them succeed. */
static void mw_bind1_then_write(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_1);
	uint64_t first = next_id;
	struct end *a, *b;
	int i;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b))
		return;
	/* The bind and the write go on one send queue: a's, targeting b's side. */
	for (i = 0; i < 16; i++) {
		fill(loc.b->data, TLEN, SRC + i);
		if (bind1_post(a, mw, next_id++, tgt.mr, tva(WOFF), WLEN, RW) ||
		    post_access(a, next_id++, IBV_WR_RDMA_WRITE, WLEN, mw->rkey, tva(WOFF), 0))
			return;
		/* The WRITE reads its source when it runs: one pair at a time. */
		if (!expect_wc(a->scq, first + 2 * i, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL,
			       "bind") ||
		    !expect_wc(a->scq, first + 2 * i + 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL,
			       "WRITE right behind it"))
			return;
		fill(loc.want, TLEN, SRC + i);
		apply(IBV_WR_RDMA_WRITE, WOFF, WLEN);
		expect_bufs("after the WRITE");
	}
}

/* A WRITE posted right behind a rebind, with the old rkey, fails. */
static void mw_rebind1_then_old_rkey(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_1);
	uint64_t id = next_id;
	struct end *a, *b;
	struct win w;

	next_id += 3;
	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) ||
	    !bind1(a, &w, mw, WOFF, WLEN, RW))
		return;
	if (bind1_post(a, mw, id, tgt.mr, tva(WOFF), WLEN, RW) ||
	    post_access(a, id + 1, IBV_WR_RDMA_WRITE, WLEN, w.rkey, tva(WOFF), 0))
		return;
	post_trailer(a, id + 2);
	expect_wc(a->scq, id, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL, "rebind");
	expect_error(a, id + 1, IBV_WC_REM_ACCESS_ERR, "WRITE with the old rkey right behind it");
	expect_bufs("after the WRITE");
}

/*
 * A type 2 bind and a SEND of its rkey in one post list: the peer, which
 * writes as soon as it has the SEND, finds the window bound.
 */
static void mw_bind2_then_send(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_2);
	struct ibv_send_wr bind, snd;
	struct end *a, *b;
	uint32_t rkey;
	struct win w;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b))
		return;
	rkey = ibv_inc_rkey(mw->rkey);
	bind = (struct ibv_send_wr){
		.wr_id = 1, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { .mr = tgt.mr, .addr = tva(WOFF), .length = WLEN,
					    .mw_access_flags = RW } },
		.next = &snd,
	};
	snd = wr_send(2, NULL, 0);
	snd.opcode = IBV_WR_SEND_WITH_IMM;
	snd.imm_data = htonl(rkey);
	if (post_recv(a, 3, NULL, 0) || post(b, &bind) ||
	    !expect_wc(a->rcq, 3, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "the rkey's SEND"))
		return;
	w = (struct win){ .mw = mw, .rkey = rkey, .off = WOFF };
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "on receipt");
	expect_wc(b->scq, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL, "bind");
	expect_wc(b->scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "SEND");
}

/* ---- lifetime ---- */

static int dereg_target(void)
{
	int ret = ibv_dereg_mr(tgt.mr);

	if (!ret)
		disown(tgt.mr);
	return ret;
}

/* A region with a bound type 1 window is EBUSY, and still works; unbound, it deregisters. */
static void mw_dereg_busy1(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_1);
	uint64_t id = next_id++;
	struct end *a, *b;
	struct win w;
	int ret;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) ||
	    !bind1(b, &w, mw, WOFF, WLEN, RW))
		return;
	ret = dereg_target();
	t_check(ret == EBUSY, "ibv_dereg_mr with a bound window: %s, expected EBUSY",
		strerror(ret));
	if (!ret)
		return;
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "after the EBUSY");
	if (bind1_post(b, mw, id, NULL, 0, 0, 0) ||
	    !expect_wc(b->scq, id, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL, "unbind"))
		return;
	ret = dereg_target();
	t_check(!ret, "ibv_dereg_mr after the unbind: %s", strerror(ret));
}

/* The same for type 2, freed with LOCAL_INV. */
static void mw_dereg_busy2(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_2);
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV, .send_flags = IBV_SEND_SIGNALED };
	struct end *a, *b;
	struct win w;
	int ret;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) ||
	    !bind2(b, &w, mw, ibv_inc_rkey(mw->rkey), WOFF, WLEN, RW))
		return;
	ret = dereg_target();
	t_check(ret == EBUSY, "ibv_dereg_mr with a bound window: %s, expected EBUSY",
		strerror(ret));
	if (!ret)
		return;
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "after the EBUSY");
	inv.wr_id = next_id++;
	inv.invalidate_rkey = w.rkey;
	if (post(b, &inv) ||
	    !expect_wc(b->scq, inv.wr_id, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, NULL, "LOCAL_INV"))
		return;
	ret = dereg_target();
	t_check(!ret, "ibv_dereg_mr after LOCAL_INV: %s", strerror(ret));
}

/* Deallocating a bound window unbinds it: its rkey stops working, the region deregisters. */
static void dealloc_bound(enum ibv_mw_type type)
{
	struct ibv_mw *mw = mw_new(type);
	struct end *a, *b;
	struct win w;
	bool ok;
	int ret;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b))
		return;
	if (type == IBV_MW_TYPE_1)
		ok = bind1(b, &w, mw, WOFF, WLEN, RW);
	else
		ok = bind2(b, &w, mw, ibv_inc_rkey(mw->rkey), WOFF, WLEN, RW);
	if (!ok)
		return;
	ret = ibv_dealloc_mw(mw);
	t_check(!ret, "ibv_dealloc_mw of a bound window: %s", strerror(ret));
	if (ret)
		return;
	disown(mw);
	ret = dereg_target();
	t_check(!ret, "ibv_dereg_mr after the dealloc: %s", strerror(ret));
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, 1, IBV_WC_REM_ACCESS_ERR,
		   "the deallocated window's rkey");
}

static void mw_dealloc_bound1(void)
{
	dealloc_bound(IBV_MW_TYPE_1);
}

static void mw_dealloc_bound2(void)
{
	dealloc_bound(IBV_MW_TYPE_2);
}

const struct mw_case access_cases[] = {
	CASE_ARG("type 1 WRITE of the window's first byte", access_case, ACC(1, RW, WR, 0, 1, OK)),
	CASE_ARG("type 1 WRITE of the window's last byte", access_case,
		 ACC(1, RW, WR, WLEN - 1, 1, OK)),
	CASE_ARG("type 1 WRITE one byte before the window: REM_ACCESS_ERR, untouched",
		 access_case, ACC(1, RW, WR, -1, 1, RAE)),
	CASE_ARG("type 1 WRITE one byte past the window: REM_ACCESS_ERR, untouched",
		 access_case, ACC(1, RW, WR, WLEN, 1, RAE)),
	CASE_ARG("type 1 WRITE of the last byte and one past: REM_ACCESS_ERR", access_case,
		 ACC(1, RW, WR, WLEN - 1, 2, RAE)),
	CASE_ARG("type 1 WRITE of the whole window and one byte: REM_ACCESS_ERR", access_case,
		 ACC(1, RW, WR, 0, WLEN + 1, RAE)),
	CASE_ARG("type 1 WRITE of the byte before and the first: REM_ACCESS_ERR", access_case,
		 ACC(1, RW, WR, -1, 2, RAE)),
	CASE_ARG("type 1 WRITE at 2^64-1 of 2 bytes (wraps): REM_ACCESS_ERR", access_case,
		 ACC_AT(1, RW, WR, -1, 2, RAE)),
	CASE_ARG("type 1 READ of the window's first byte", access_case, ACC(1, RR, RD, 0, 1, OK)),
	CASE_ARG("type 1 READ of the window's last byte", access_case,
		 ACC(1, RR, RD, WLEN - 1, 1, OK)),
	CASE_ARG("type 1 READ one byte before the window: REM_ACCESS_ERR, nothing read",
		 access_case, ACC(1, RR, RD, -1, 1, RAE)),
	CASE_ARG("type 1 READ one byte past the window: REM_ACCESS_ERR, nothing read",
		 access_case, ACC(1, RR, RD, WLEN, 1, RAE)),
	CASE_ARG("type 1 FETCH_ADD of the window's first 8 bytes", access_case,
		 ACC(1, RA, FA, 0, 8, OK)),
	CASE_ARG("type 1 CMP_SWP of the window's last 8 bytes", access_case,
		 ACC(1, RA, CS, WLEN - 8, 8, OK)),
	CASE_ARG("type 1 FETCH_ADD of the 8 bytes past the window: REM_ACCESS_ERR", access_case,
		 ACC(1, RA, FA, WLEN, 8, RAE)),
	CASE_ARG("type 1 FETCH_ADD of the 8 bytes before the window: REM_ACCESS_ERR",
		 access_case, ACC(1, RA, FA, -8, 8, RAE)),
	CASE_ARG("type 1 REMOTE_READ window (region has all rights): WRITE REM_ACCESS_ERR",
		 access_case, ACC(1, RR, WR, 0, 1, RAE)),
	CASE_ARG("type 1 REMOTE_WRITE window (region has all rights): READ REM_ACCESS_ERR",
		 access_case, ACC(1, RW, RD, 0, 1, RAE)),
	CASE_ARG("type 1 READ and WRITE window (region has all rights): FETCH_ADD REM_ACCESS_ERR",
		 access_case, ACC(1, RW | RR, FA, 0, 8, RAE)),
	CASE_ARG("type 1 ATOMIC_WRITE of the window's first 8 bytes (REMOTE_WRITE)", access_case,
		 ACC(1, RW, AW, 0, 8, OK)),
	CASE_ARG("type 2 ATOMIC_WRITE of the window's last 8 bytes (REMOTE_WRITE)", access_case,
		 ACC(2, RW, AW, WLEN - 8, 8, OK)),
	CASE_ARG("type 2 ATOMIC_WRITE of the 8 bytes past the window: REM_ACCESS_ERR, untouched",
		 access_case, ACC(2, RW, AW, WLEN, 8, RAE)),
	CASE_ARG("type 2 ATOMIC_WRITE of the 8 bytes before the window: REM_ACCESS_ERR",
		 access_case, ACC(2, RW, AW, -8, 8, RAE)),
	CASE_ARG("type 2 ATOMIC window (region has all rights): ATOMIC_WRITE REM_ACCESS_ERR",
		 access_case, ACC(2, RA, AW, 0, 8, RAE)),
	CASE_ARG("type 1 READ window (region has all rights): ATOMIC_WRITE REM_ACCESS_ERR",
		 access_case, ACC(1, RR, AW, 0, 8, RAE)),
	CASE_ARG("type 2 zero-based: ATOMIC_WRITE at length - 8, the window's last 8 bytes",
		 access_case, ACC(2, RW | ZB, AW, WLEN - 8, 8, OK)),
	CASE_ARG("type 2 WRITE of the window's last byte", access_case,
		 ACC(2, RW, WR, WLEN - 1, 1, OK)),
	CASE_ARG("type 2 WRITE one byte before the window: REM_ACCESS_ERR, untouched",
		 access_case, ACC(2, RW, WR, -1, 1, RAE)),
	CASE_ARG("type 2 WRITE one byte past the window: REM_ACCESS_ERR, untouched",
		 access_case, ACC(2, RW, WR, WLEN, 1, RAE)),
	CASE_ARG("type 2 REMOTE_READ window: WRITE REM_ACCESS_ERR", access_case,
		 ACC(2, RR, WR, 0, 1, RAE)),
	CASE_ARG("type 2 zero-based: WRITE at 0 lands on the window's first byte", access_case,
		 ACC(2, RW | ZB, WR, 0, 1, OK)),
	CASE_ARG("type 2 zero-based: WRITE at length - 1, the window's last byte", access_case,
		 ACC(2, RW | ZB, WR, WLEN - 1, 1, OK)),
	CASE_ARG("type 2 zero-based: the whole window from 0", access_case,
		 ACC(2, RW | ZB, WR, 0, WLEN, OK)),
	CASE_ARG("type 2 zero-based: WRITE at length, one past: REM_ACCESS_ERR", access_case,
		 ACC(2, RW | ZB, WR, WLEN, 1, RAE)),
	CASE_ARG("type 2 zero-based: WRITE at 2^64-1 of 2 bytes (wraps to 0): REM_ACCESS_ERR",
		 access_case, ACC(2, RW | ZB, WR, -1, 2, RAE)),
	CASE_ARG("type 2 zero-based: READ of the last byte", access_case,
		 ACC(2, RR | ZB, RD, WLEN - 1, 1, OK)),

	CASE("16 type 1 binds each followed at once by a WRITE with its new rkey: all succeed",
	     mw_bind1_then_write),
	CASE("a WRITE right behind a rebind, with the old rkey: REM_ACCESS_ERR",
	     mw_rebind1_then_old_rkey),
	CASE("type 2 bind and a SEND of its rkey in one list: the peer's WRITE succeeds",
	     mw_bind2_then_send),

	CASE("region with a bound type 1 window: dereg EBUSY, still works; unbound, dereg",
	     mw_dereg_busy1),
	CASE("region with a bound type 2 window: dereg EBUSY, still works; LOCAL_INV, dereg",
	     mw_dereg_busy2),
	CASE("dealloc of a bound type 1 window unbinds it: region dereg, rkey REM_ACCESS_ERR",
	     mw_dealloc_bound1),
	CASE("dealloc of a bound type 2 window unbinds it: region dereg, rkey REM_ACCESS_ERR",
	     mw_dealloc_bound2),
	{ NULL }
};

/* ---- running the cases ---- */

static const char *run_one(const void *arg)
{
	const struct mw_case *c = arg;

	if (case_setup()) {
		if (c->run)
			c->run();
		else
			c->run_arg(c->arg);
	}
	release_owned();
	case_release();
	return NULL;
}

int main(int argc, char **argv)
{
	const struct mw_case *parts[] = { bind_cases, access_cases, race_cases };
	const char *env = getenv("STAG_MW_TIMEOUT");
	const struct mw_case *c;
	unsigned int i;
	int limit = 30;

	t_suite = "mw";
	if (argc > 1)
		dev_name = argv[1];
	if (env && atoi(env) > 0)
		limit = atoi(env);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < ARRAY_SIZE(parts); i++)
		for (c = parts[i]; c->name; c++)
			if (t_case_wanted(c->name, argc > 2 ? argc - 2 : 0, argv + 2))
				t_case_run(c->name, limit, run_one, c);
	return 0;
}
