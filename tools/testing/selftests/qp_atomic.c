// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA Atomic Write (IBA 1.5) over loopback: 8 bytes that land whole at
 * an aligned address of a region or window with the remote write right,
 * posted with ibv_wr_atomic_write() or with ibv_post_send() and a list of
 * 8 bytes. Each case checks the completion's exact status, the target's
 * bytes and the bytes around them, and the guards; the errors are every
 * right missing, every bound crossed by one byte, a misaligned address,
 * another PD's region, and what the verbs refuse at post time. Two
 * threads post on one QP at once; a reader watches the target for a torn
 * value; a region goes while atomic writes run at it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>

#include "qp.h"

#define TGT	64	/* the target buffer; the value lands at OFF */
#define OFF	16
/* Every byte of each differs from every other's at the same place. */
#define VAL_A	0x0123456789abcdefULL
#define VAL_B	0xfedcba9876543210ULL
#define AW	IBV_WR_ATOMIC_WRITE

/* @a, which takes ibv_wr_*(), connected to a plain @b whose QP allows @b_access. */
static bool aw_pair(struct end **a, struct end **b, int b_access)
{
	struct conn ca, cb;

	*a = end_ops(IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE);
	*b = end_new(IBV_QPT_RC, NULL, true);
	if (!*a || !*b)
		return false;
	ca = conn_default(*b);
	cb = conn_default(*a);
	cb.access = b_access;
	return pair_connect(*a, &ca, *b, &cb);
}

static int wr_aw(struct end *e, uint64_t wr_id, uint32_t rkey, uint64_t raddr, uint64_t val)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(e->qp);

	if (!x) {
		t_fail("ibv_qp_to_qp_ex: NULL");
		return -1;
	}
	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, rkey, raddr, &val);
	return ibv_wr_complete(x);
}

/* The target's bytes: fill(seed 9), with @val at OFF when it landed. */
static void expect_target(const struct buf *tgt, const uint64_t *val, const char *what)
{
	char want[TGT];

	fill(want, TGT, 9);
	if (val)
		memcpy(want + OFF, val, 8);
	expect_bytes(tgt->data, want, TGT, what);
	expect_guards(tgt, what);
}

/* One atomic write at @off of @tgt through @rkey: completes with @status. */
static void aw_once(struct buf *tgt, uint32_t rkey, uint64_t raddr, int b_access,
		    enum ibv_wc_status status)
{
	uint64_t val = VAL_A;
	struct end *a, *b;

	if (!aw_pair(&a, &b, b_access))
		return;
	fill(tgt->data, TGT, 9);
	if (wr_aw(a, 1, rkey, raddr, val))
		return;
	expect_wc(a->scq, 1, status, IBV_WC_ATOMIC_WRITE, NULL, "requester");
	expect_target(tgt, status == IBV_WC_SUCCESS ? &val : NULL, "target");
	expect_none(b->rcq, 0, "responder's receive CQ (no receive is consumed)");
	expect_state(b->qp, status == IBV_WC_SUCCESS ? IBV_QPS_RTS : IBV_QPS_ERR,
		     "responder (a NAKed access is a class C error)");
}

static void aw_lands(void)
{
	struct buf *tgt = buf_new(TGT, LW | RW);

	if (tgt)
		aw_once(tgt, tgt->mr->rkey, (uintptr_t)tgt->data + OFF, LW | RW, IBV_WC_SUCCESS);
}

/* ibv_post_send(): the 8 bytes its list names, here 3 + 5 of two regions. */
static void aw_post_send(void)
{
	struct buf *tgt = buf_new(TGT, LW | RW), *src = buf_new(32, 0);
	uint64_t val = VAL_B;
	struct ibv_sge s[2];
	struct ibv_send_wr wr;
	struct end *a, *b;

	if (!tgt || !src || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(tgt->data, TGT, 9);
	memcpy(src->data + 1, &val, 3);
	memcpy(src->data + 20, (char *)&val + 3, 5);
	s[0] = sge_of(src, 1, 3);
	s[1] = sge_of(src, 20, 5);
	wr = wr_rdma(1, AW, s, 2, tgt, OFF);
	if (post(a, &wr))
		return;
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, NULL, "requester");
	expect_target(tgt, &val, "target");
	expect_guards(src, "source");
}

/* Lists of 7 and 9 bytes are refused at post time: EINVAL, nothing posted. */
static void aw_post_bad_len(void)
{
	struct buf *tgt = buf_new(TGT, LW | RW), *src = buf_new(16, 0);
	static const unsigned int lens[] = { 7, 9, 0 };
	struct ibv_send_wr wr, *bad = NULL;
	struct end *a, *b;
	struct ibv_sge s;
	unsigned int i;
	int ret;

	if (!tgt || !src || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(tgt->data, TGT, 9);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		s = sge_of(src, 0, lens[i]);
		wr = wr_rdma(i, AW, &s, 1, tgt, OFF);
		ret = ibv_post_send(a->qp, &wr, &bad);
		t_check(ret == EINVAL && bad == &wr,
			"ATOMIC_WRITE of %u bytes: %s, expected EINVAL and bad_wr set", lens[i],
			strerror(ret));
	}
	expect_none(a->scq, QUIET_MS, "requester");
	expect_target(tgt, NULL, "target");
}

/* The region's rights: REMOTE_ATOMIC or REMOTE_READ is not enough. */
static void aw_region_no_write(void)
{
	struct buf *tgt = buf_new(TGT, LW | RA | RR);

	if (tgt)
		aw_once(tgt, tgt->mr->rkey, (uintptr_t)tgt->data + OFF, LW | RW | RR | RA,
			IBV_WC_REM_ACCESS_ERR);
}

/* The responder QP's rights: REMOTE_ATOMIC without REMOTE_WRITE is not enough. */
static void aw_qp_no_write(void)
{
	struct buf *tgt = buf_new(TGT, LW | RW | RA);

	if (tgt)
		aw_once(tgt, tgt->mr->rkey, (uintptr_t)tgt->data + OFF, LW | RR | RA,
			IBV_WC_REM_ACCESS_ERR);
}

static void aw_stale_rkey(void)
{
	struct buf *tgt = buf_new(TGT, LW | RW);

	if (tgt)
		aw_once(tgt, tgt->mr->rkey ^ 0x5a, (uintptr_t)tgt->data + OFF, LW | RW,
			IBV_WC_REM_ACCESS_ERR);
}

/* IBA 9.4.5, oA19-28: the address is 8-byte aligned. */
static void aw_misaligned(void)
{
	struct buf *tgt = buf_new(TGT, LW | RW);

	if (tgt)
		aw_once(tgt, tgt->mr->rkey, (uintptr_t)tgt->data + OFF + 4, LW | RW,
			IBV_WC_REM_INV_REQ_ERR);
}

/*
 * Bounds, each crossed by one byte: a region that ends 7 bytes into the
 * target (the last byte of the write is past it), and one that starts at
 * the write's second byte. The same write within each bound lands.
 */
static void aw_bounds(void)
{
	struct buf *tgt = buf_new(TGT, LW);
	uint64_t val = VAL_A, at;
	struct ibv_mr *end7, *start1;
	struct end *a, *b;

	if (!tgt || !aw_pair(&a, &b, LW | RW))
		return;
	at = (uintptr_t)tgt->data + OFF;
	fill(tgt->data, TGT, 9);
	end7 = ibv_reg_mr(pd, tgt->data, OFF + 7, LW | RW);
	start1 = ibv_reg_mr(pd, tgt->data + OFF + 1, TGT - OFF - 1, LW | RW);
	if (!end7 || !start1) {
		t_fail("ibv_reg_mr: %s", strerror(errno));
		return;
	}
	track(K_MR, end7, 0);
	track(K_MR, start1, 0);
	if (wr_aw(a, 1, end7->rkey, at, val))
		return;
	expect_wc(a->scq, 1, IBV_WC_REM_ACCESS_ERR, IBV_WC_ATOMIC_WRITE, NULL,
		  "the last byte one past the region's end");
	expect_target(tgt, NULL, "target after the first");
	/* The responder is in ERR now: a fresh pair for the second bound. */
	if (!aw_pair(&a, &b, LW | RW) || wr_aw(a, 2, start1->rkey, at, val))
		return;
	expect_wc(a->scq, 2, IBV_WC_REM_ACCESS_ERR, IBV_WC_ATOMIC_WRITE, NULL,
		  "the first byte one before the region's start");
	expect_target(tgt, NULL, "target after the second");
	if (!aw_pair(&a, &b, LW | RW) || wr_aw(a, 3, end7->rkey, at - 8, val))
		return;
	expect_wc(a->scq, 3, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, NULL,
		  "the 8 bytes before, inside the first region");
	memcpy(&at, tgt->data + OFF - 8, 8);
	t_check(at == val, "landed %#llx, expected %#llx", (ull)at, (ull)val);
}

/* A region of another PD, named by its own valid rkey: REM_ACCESS_ERR. */
static void aw_other_pd(void)
{
	struct buf *tgt = buf_new(TGT, LW);
	struct ibv_pd *other = ibv_alloc_pd(ctx);
	struct ibv_mr *mr;

	if (!tgt || !other) {
		t_fail("ibv_alloc_pd: %s", strerror(errno));
		return;
	}
	mr = ibv_reg_mr(other, tgt->data, TGT, LW | RW);
	if (!mr) {
		t_fail("ibv_reg_mr: %s", strerror(errno));
		ibv_dealloc_pd(other);
		return;
	}
	aw_once(tgt, mr->rkey, (uintptr_t)tgt->data + OFF, LW | RW, IBV_WC_REM_ACCESS_ERR);
	t_check(!ibv_dereg_mr(mr) && !ibv_dealloc_pd(other), "releasing the other PD");
}

/* A UC QP has no atomic write: LOC_QP_OP_ERR, nothing written. */
static void aw_uc(void)
{
	struct buf *tgt = buf_new(TGT, LW | RW), *src = buf_new(8, 0);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;

	if (!tgt || !src || !pair_new(IBV_QPT_UC, &a, &b))
		return;
	fill(tgt->data, TGT, 9);
	s = sge_of(src, 0, 8);
	wr = wr_rdma(1, AW, &s, 1, tgt, OFF);
	if (post(a, &wr))
		return;
	expect_wc(a->scq, 1, IBV_WC_LOC_QP_OP_ERR, -1, NULL, "UC requester");
	expect_target(tgt, NULL, "target");
}

/* ---- two at once ---- */

#define NTHREAD_WR	400

struct poster {
	struct end *e;
	struct buf *tgt;
	size_t off;
	uint64_t base;
	int n;
	int ret;
};

static void *post_many(void *arg)
{
	struct poster *p = arg;
	int i;

	for (i = 0; i < p->n && !p->ret; i++) {
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(p->e->qp);
		uint64_t v = p->base + i;

		ibv_wr_start(x);
		x->wr_id = p->base + i;
		x->wr_flags = 0;
		ibv_wr_atomic_write(x, p->tgt->mr->rkey, (uintptr_t)p->tgt->data + p->off, &v);
		p->ret = ibv_wr_complete(x);
		/* Unsignaled: the ring drains as the kernel runs them. */
		if (p->ret == ENOMEM) {
			p->ret = 0;
			i--;
			sched_yield();
		}
	}
	return NULL;
}

/*
 * Two threads post atomic writes on one QP at once, each to its own 8
 * bytes: each place ends with its thread's last value, nothing else moved.
 */
static void aw_two_threads(void)
{
	struct buf *tgt = buf_new(TGT, LW | RW);
	struct poster p[2];
	struct end *a, *b;
	pthread_t th[2];
	char want[TGT];
	uint64_t v;
	int i;

	if (!tgt || !aw_pair(&a, &b, LW | RW))
		return;
	fill(tgt->data, TGT, 9);
	for (i = 0; i < 2; i++) {
		p[i] = (struct poster){ a, tgt, 8 + 32 * i, (uint64_t)(i + 1) << 40,
					NTHREAD_WR, 0 };
		pthread_create(&th[i], NULL, post_many, &p[i]);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		t_check(!p[i].ret, "thread %d: ibv_wr_complete: %s", i, strerror(p[i].ret));
	}
	/* A signaled one last: once it completes, every one before it has. */
	if (wr_aw(a, 7, tgt->mr->rkey, (uintptr_t)tgt->data + 48, VAL_A))
		return;
	expect_wc(a->scq, 7, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, NULL, "the last one");
	fill(want, TGT, 9);
	for (i = 0; i < 2; i++) {
		v = p[i].base + NTHREAD_WR - 1;
		memcpy(want + p[i].off, &v, 8);
	}
	v = VAL_A;
	memcpy(want + 48, &v, 8);
	expect_bytes(tgt->data, want, TGT, "target");
	expect_guards(tgt, "target");
}

struct watcher {
	uint64_t *at;
	int stop;
	long reads, torn;
	uint64_t seen;
};

/* One 8-byte load each time: what a reader of the memory sees. */
static void *watch(void *arg)
{
	struct watcher *w = arg;

	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) {
		uint64_t v = __atomic_load_n(w->at, __ATOMIC_RELAXED);

		w->reads++;
		if (v != VAL_A && v != VAL_B) {
			w->torn++;
			w->seen = v;
		}
	}
	return NULL;
}

/*
 * A reader spins on the target while VAL_A and VAL_B, which differ in
 * every byte, are written there in turn: it never sees a mix of them.
 */
static void aw_whole(void)
{
	struct buf *tgt = buf_new(TGT, LW | RW);
	struct watcher w = { 0 };
	struct end *a, *b;
	pthread_t th;
	int i;

	if (!tgt || !aw_pair(&a, &b, LW | RW))
		return;
	w.at = (uint64_t *)(tgt->data + OFF);
	*w.at = VAL_A;
	pthread_create(&th, NULL, watch, &w);
	for (i = 0; i < 1000; i++) {
		if (wr_aw(a, i, tgt->mr->rkey, (uintptr_t)tgt->data + OFF, i & 1 ? VAL_A : VAL_B))
			break;
		if (!expect_wc(a->scq, i, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, NULL, "write"))
			break;
	}
	__atomic_store_n(&w.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	t_check(!w.torn, "%ld of %ld reads saw a torn value (last %#llx)", w.torn, w.reads,
		(ull)w.seen);
}

/*
 * The region goes while atomic writes run at it: each completes with
 * success or REM_ACCESS_ERR (then the rest are flushed), none lands after
 * the deregistration returned, nothing else is touched.
 */
static void aw_dereg_race(void)
{
	struct buf *tgt = buf_new(TGT, LW);
	struct ibv_mr *mr = ibv_reg_mr(pd, tgt ? tgt->data : NULL, TGT, LW | RW);
	struct poster p = { 0 };
	struct ibv_wc wc[DEPTH];
	struct end *a, *b;
	pthread_t th;
	uint64_t after;
	int n, i, bad = 0;
	long t0;

	if (!tgt || !mr || !aw_pair(&a, &b, LW | RW)) {
		t_check(mr, "ibv_reg_mr: %s", strerror(errno));
		return;
	}
	fill(tgt->data, TGT, 9);
	/* Fewer than the CQ holds: the ones after an error are flushed to it. */
	p = (struct poster){ a, tgt, OFF, 1, DEPTH - 4, 0 };
	/* post_many() names tgt->mr: the racing region stands in for it. */
	tgt->mr = mr;
	pthread_create(&th, NULL, post_many, &p);
	usleep(2000);
	t_check(!ibv_dereg_mr(mr), "ibv_dereg_mr while in use");
	memcpy(&after, tgt->data + OFF, 8);
	pthread_join(th, NULL);
	/* Drain whatever completed with an error (the writes are unsignaled). */
	t0 = now_ms();
	while (now_ms() - t0 < QUIET_MS) {
		n = poll_n(a->scq, wc, DEPTH, 10);
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_REM_ACCESS_ERR &&
			    wc[i].status != IBV_WC_WR_FLUSH_ERR)
				bad++;
	}
	t_check(!bad, "%d completions neither REM_ACCESS_ERR nor WR_FLUSH_ERR", bad);
	t_check(!memcmp(&after, tgt->data + OFF, 8),
		"the target changed after ibv_dereg_mr returned");
	tgt->mr = NULL;
}

/* The device says it has atomic write (IB_UVERBS_DEVICE_ATOMIC_WRITE). */
static void aw_device_cap(void)
{
	struct ibv_device_attr_ex attr;
	int ret = ibv_query_device_ex(ctx, NULL, &attr);

	t_check(!ret, "ibv_query_device_ex: %s", strerror(ret));
	if (!ret)
		t_check(attr.device_cap_flags_ex & (1ULL << 40),
			"device_cap_flags_ex %#llx without the atomic write bit (1 << 40)",
			(ull)attr.device_cap_flags_ex);
}

const struct qp_case atomic_write_cases[] = {
	{ "RC ATOMIC_WRITE (ibv_wr_atomic_write): 8 bytes land, the bytes around untouched",
	  aw_lands },
	{ "RC ATOMIC_WRITE (ibv_post_send, a list of 3+5 bytes): those 8 bytes land",
	  aw_post_send },
	{ "RC ATOMIC_WRITE with a list of 7, 9 or 0 bytes: EINVAL at post, nothing posted",
	  aw_post_bad_len },
	{ "RC ATOMIC_WRITE to a region without REMOTE_WRITE (ATOMIC, READ): REM_ACCESS_ERR",
	  aw_region_no_write },
	{ "RC ATOMIC_WRITE to a QP without REMOTE_WRITE (ATOMIC, READ): REM_ACCESS_ERR",
	  aw_qp_no_write },
	{ "RC ATOMIC_WRITE with a stale rkey: REM_ACCESS_ERR, the responder in ERR",
	  aw_stale_rkey },
	{ "RC ATOMIC_WRITE at an address 4 bytes off alignment: REM_INV_REQ_ERR", aw_misaligned },
	{ "RC ATOMIC_WRITE one byte past a region's end or before its start: REM_ACCESS_ERR",
	  aw_bounds },
	{ "RC ATOMIC_WRITE to another PD's region: REM_ACCESS_ERR", aw_other_pd },
	{ "UC ATOMIC_WRITE: LOC_QP_OP_ERR, nothing written", aw_uc },
	{ "RC ATOMIC_WRITE from two threads on one QP: each place has its thread's last value",
	  aw_two_threads },
	{ "RC ATOMIC_WRITE 1000 times under a spinning reader: never a torn value", aw_whole },
	{ "RC ATOMIC_WRITE while its region is deregistered: no write after, no other status",
	  aw_dereg_race },
	{ "the device reports atomic write in device_cap_flags_ex", aw_device_cap },
	{ NULL }
};
