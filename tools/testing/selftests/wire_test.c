// SPDX-License-Identifier: GPL-2.0
/*
 * QPs and memory windows between two guests on one link, over RoCE v2:
 * this device against another device in the peer guest (stag0 or rxe0),
 * which wire_test --serve runs (wire_serve.c). Each case asserts the exact
 * completion at both ends, the data byte for byte where it lands, and the
 * guard bytes around every buffer on both sides; the server's buffers and
 * completions are fetched and judged here. The cases: every RC operation at
 * sizes around the path MTU, atomics, atomic writes, FLUSHes (from stag,
 * written into its send ring by hand: rdma-core 44 has no ibv_wr_flush),
 * remote access errors
 * and the error state behind them, RNR and retry exhaustion, UC, UD with
 * its GRH, an SRQ, a type 2 window of the server's, and a stranger's QP
 * the server must not hear. Runs in the guest as root; wire.sh starts both halves.
 *
 *   wire_test -d DEV -g IDX -c ADDR:PORT [-x IDX] [PATTERN...]
 *	the cases (whose names contain a PATTERN) against the server at
 *	ADDR:PORT, through GID IDX of DEV; -x: the GID index of a second
 *	address of this host, for the stranger
 *   wire_test -d DEV -g IDX --serve PORT
 *	the server, until the client says BYE
 *
 * Each case runs in a child process of its own, with its own connection
 * to the server (whose own process serves it), and has $STAG_WIRE_TIMEOUT
 * seconds (default 60).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/tm_types.h>
#include <rdma/stag-abi.h>

#include "mw.h"
#include "raw.h"
#include "wire.h"

#define GRH_LEN		40
#define SEED_C		71	/* fill() seed of what the client sends */
#define SEED_S		72	/* and of what the server holds */
#define DLEN		256	/* the server's buffer in the error cases */
#define STRANGER_MS	300	/* how long the server must hear nothing */
#define QUICK_TIMEOUT	12	/* 16.8 ms: exhausts retries fast, yet outlasts an ACK */

static int gid_arg = -1, stranger_gid = -1;

/* ---- RC: every operation at sizes around the path MTU ---- */

static const struct size {
	const char *name;
	int mtus, add;
} sizes[] = {
	{ "1 byte", 0, 1 }, { "mtu-1 bytes", 1, -1 }, { "mtu bytes", 1, 0 },
	{ "mtu+1 bytes", 1, 1 }, { "3*mtu+7 bytes", 3, 7 }, { "65536+3 bytes", 0, 65539 },
};

static const struct op {
	const char *name;
	enum ibv_wr_opcode op;
} ops[] = {
	{ "SEND", IBV_WR_SEND }, { "SEND_WITH_IMM", IBV_WR_SEND_WITH_IMM },
	{ "RDMA_WRITE", IBV_WR_RDMA_WRITE }, { "RDMA_WRITE_WITH_IMM", IBV_WR_RDMA_WRITE_WITH_IMM },
	{ "RDMA_READ", IBV_WR_RDMA_READ },
};

#define XFER_CHECKS	"completions at both ends, data byte for byte, guards"

struct xfer {
	enum ibv_wr_opcode op;
	const struct size *sz;
};

/* What the server's end of @op completes: a receive of @op's kind, or -1 (nothing). */
static int resp_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return IBV_WC_RECV;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RECV_RDMA_WITH_IMM;
	default:
		return -1;
	}
}

static void rc_xfer(const void *arg)
{
	const struct xfer *x = arg;
	const uint32_t imm = IMM;
	size_t len = x->sz->mtus * mtu + x->sz->add;
	bool read = x->op == IBV_WR_RDMA_READ;
	bool with_imm = x->op == IBV_WR_SEND_WITH_IMM || x->op == IBV_WR_RDMA_WRITE_WITH_IMM;
	int resp = resp_opcode(x->op);
	unsigned int seed = read ? SEED_S : SEED_C;
	struct buf *lb = buf_new(len, LW);
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct ibv_wc wc;
	struct rbuf rb;
	struct end *e;
	struct rqp r;

	if (!lb || !rbuf_new(&rb, len, read ? LW | RR : LW | RW, read ? seed : BLANK) ||
	    !wire_pair(IBV_QPT_RC, false, &e, &r))
		return;
	if (!read)
		fill(lb->data, len, seed);
	/* A WRITE_WITH_IMM's data goes where it says: its receive needs no buffer. */
	if (resp >= 0 && !rrecv(&r, 2, resp == IBV_WC_RECV ? &rb : NULL, 0, len))
		return;
	s = sge_of(lb, 0, len);
	wr = wr_remote(1, x->op, &s, rb.addr, rb.rkey);
	wr.imm_data = htonl(imm);
	if (post(e, &wr))
		return;
	if (expect_wc(e->scq, 1, IBV_WC_SUCCESS, wc_opcode(x->op), &wc, "client") && read)
		t_check(wc.byte_len == len, "READ byte_len %u, expected %zu", wc.byte_len, len);
	if (resp >= 0 && rexpect_wc(&r, 'r', 2, IBV_WC_SUCCESS, resp, &wc, "server"))
		expect_recv(&wc, len, with_imm ? &imm : NULL, r.qpn, "server");
	else if (resp < 0)
		rexpect_none(&r, 'r', QUIET_MS, "server's receive CQ (nothing consumes a receive)");
	rexpect_none(&r, 's', 0, "server's send CQ");
	rbuf_expect_fill(&rb, seed, "server's buffer");
	expect_data(lb, seed, "client's buffer");
}

/*
 * A 64 KiB WRITE from here, then a READ of it back: the WRITE's middle
 * packets leave this host in bursts (net.c: one GSO skb, split before the
 * NIC's driver), so sent_bursts grows and a burst carries two packets or
 * more on average; the READ's responses leave the server's responder in
 * bursts too. Every byte arrives either way. Only stag counts bursts: an
 * rxe end is not asked.
 */
static void rc_bursts(const void *arg)
{
	const size_t len = 65536;
	struct buf *lb = buf_new(len, LW);
	struct counter mine, theirs;
	struct ibv_send_wr wr;
	long pkts0 = -1, pkts, bursts;
	struct ibv_sge s;
	struct rbuf rb;
	struct end *e;
	struct rqp r;

	(void)arg;
	if (!lb || !rbuf_new(&rb, len, LW | RW | RR, BLANK) ||
	    !wire_pair(IBV_QPT_RC, false, &e, &r))
		return;
	fill(lb->data, len, SEED_C);
	s = sge_of(lb, 0, len);
	mine = counter_start(false, "sent_bursts", NULL);
	if (mine.before >= 0)
		pkts0 = hw_counter("sent_pkts");
	wr = wr_remote(1, IBV_WR_RDMA_WRITE, &s, rb.addr, rb.rkey);
	if (post(e, &wr) || !expect_wc(e->scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "WRITE"))
		return;
	rbuf_expect_fill(&rb, SEED_C, "server's buffer after the WRITE");
	expect_counted(&mine, "the WRITE's packets went one by one");
	if (mine.before >= 0) {
		bursts = hw_counter("sent_bursts") - mine.before;
		pkts = hw_counter("sent_pkts") - pkts0;
		t_check(bursts > 0 && pkts >= 2 * bursts,
			"%ld packets in %ld bursts: not two a burst", pkts, bursts);
	}

	memset(lb->data, 0, len);
	theirs = counter_start(true, "sent_bursts", NULL);
	wr = wr_remote(2, IBV_WR_RDMA_READ, &s, rb.addr, rb.rkey);
	if (post(e, &wr) || !expect_wc(e->scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, NULL, "READ"))
		return;
	expect_data(lb, SEED_C, "client's buffer after the READ");
	expect_counted(&theirs, "the READ's responses went one by one");
}

/*
 * A READ of 1 MiB + 7 bytes, and behind it a FETCH_AND_ADD, max_rd_atomic
 * 1 at both ends (wire_pair()). A stag requester asks for a long read in
 * parts (roce_req.c: read_part()), so that no request has the responder
 * send more than the window of 64 KiB: it sends one READ request per 64
 * KiB at least, where one for the whole read let a responder's bursts
 * overflow the receiving host (UCX's rendezvous slowed fivefold). The
 * parts, one after another, share the read's one slot of max_rd_atomic:
 * the atomic waits for the read's end. Both complete; the data arrives
 * byte for byte.
 */
static void rc_read_parts(const void *arg)
{
	const size_t len = (1 << 20) + 7;
	const uint64_t before = 0x0123456789abcdefULL, add = 0x10;
	struct buf *lb = buf_new(len, LW), *res = buf_new(8, LW);
	struct ibv_send_wr wr[2];
	struct ibv_sge s[2];
	struct rbuf rb, ra;
	long sent0 = -1, sent;
	uint8_t want[64];
	struct end *e;
	struct rqp r;
	uint64_t old;

	(void)arg;
	if (!lb || !res || !rbuf_new(&rb, len, LW | RR, SEED_S) ||
	    !rbuf_new(&ra, sizeof(want), LW | RA, SEED_S) || !rbuf_put(&ra, 16, &before, 8) ||
	    !wire_pair(IBV_QPT_RC, false, &e, &r))
		return;
	if (is_stag())
		sent0 = hw_counter("sent_pkts");
	s[0] = sge_of(lb, 0, len);
	s[1] = sge_of(res, 0, 8);
	wr[0] = wr_remote(1, IBV_WR_RDMA_READ, &s[0], rb.addr, rb.rkey);
	wr[0].next = &wr[1];
	wr[1] = wr_send(2, &s[1], 1);
	wr[1].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr[1].wr.atomic.remote_addr = ra.addr + 16;
	wr[1].wr.atomic.rkey = ra.rkey;
	wr[1].wr.atomic.compare_add = add;
	if (post(e, &wr[0]) ||
	    !expect_wc(e->scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, NULL, "READ") ||
	    !expect_wc(e->scq, 2, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, NULL, "FETCH_AND_ADD"))
		return;
	expect_data(lb, SEED_S, "client's buffer after the READ");
	memcpy(&old, res->data, 8);
	t_check(old == before, "FETCH_AND_ADD returned %#llx, expected %#llx", (ull)old,
		(ull)before);
	fill(want, sizeof(want), SEED_S);
	old = before + add;
	memcpy(want + 16, &old, 8);
	rbuf_expect(&ra, want, "server's atomic target and the bytes around it");
	if (sent0 >= 0) {
		sent = hw_counter("sent_pkts") - sent0;
		t_check(sent >= (long)((len + 65535) / 65536) + 1,
			"%ld requests for a READ of %zu bytes and an atomic: more than 64 KiB "
			"asked at once", sent, len);
	}
}

/* ---- RC atomics ---- */

static const struct atomic {
	const char *name;
	enum ibv_wr_opcode op;
	uint64_t before, compare_add, swap, after;
} atomics[] = {
	/* The carry out of the low 32 bits must reach the high ones. */
	{ "RC ATOMIC_FETCH_AND_ADD: the sum with a carry, the old value returned",
	  IBV_WR_ATOMIC_FETCH_AND_ADD, 0x00000001ffffffffULL, 0x1000000000000001ULL, 0,
	  0x1000000200000000ULL },
	{ "RC ATOMIC_CMP_AND_SWP that matches: swapped, the old value returned",
	  IBV_WR_ATOMIC_CMP_AND_SWP, 0x0123456789abcdefULL, 0x0123456789abcdefULL,
	  0xfedcba9876543210ULL, 0xfedcba9876543210ULL },
	/* The compare value differs from the target only in its top bit. */
	{ "RC ATOMIC_CMP_AND_SWP that does not match: unchanged, the old value returned",
	  IBV_WR_ATOMIC_CMP_AND_SWP, 0x0123456789abcdefULL, 0x8123456789abcdefULL,
	  0xfedcba9876543210ULL, 0x0123456789abcdefULL },
};

static void rc_atomic(const void *arg)
{
	const struct atomic *a = arg;
	struct buf *res = buf_new(8, LW);
	struct ibv_send_wr wr;
	uint8_t want[64];
	struct ibv_sge s;
	struct ibv_wc wc;
	struct rbuf rb;
	struct end *e;
	struct rqp r;
	uint64_t old;

	if (!res || !rbuf_new(&rb, 64, LW | RA, SEED_S) || !rbuf_put(&rb, 16, &a->before, 8) ||
	    !wire_pair(IBV_QPT_RC, false, &e, &r))
		return;
	fill(res->data, 8, SEED_C);
	s = sge_of(res, 0, 8);
	wr = wr_send(1, &s, 1);
	wr.opcode = a->op;
	wr.wr.atomic.remote_addr = rb.addr + 16;
	wr.wr.atomic.rkey = rb.rkey;
	wr.wr.atomic.compare_add = a->compare_add;
	wr.wr.atomic.swap = a->swap;
	if (post(e, &wr))
		return;
	if (expect_wc(e->scq, 1, IBV_WC_SUCCESS, wc_opcode(a->op), &wc, "client"))
		t_check(wc.byte_len == 8, "byte_len %u, expected 8", wc.byte_len);
	memcpy(&old, res->data, 8);
	t_check(old == a->before, "returned %#llx, expected the old %#llx", (ull)old,
		(ull)a->before);
	expect_guards(res, "client's result buffer");
	fill(want, sizeof(want), SEED_S);
	memcpy(want + 16, &a->after, 8);
	rbuf_expect(&rb, want, "server's target and the bytes around it");
	rexpect_none(&r, 'r', 0, "server's receive CQ");
}

/* ---- RC atomic write ---- */

static const struct atomic_write {
	const char *name;
	int access;		/* of the server's region */
	size_t off;		/* where in it the 8 bytes go */
	enum ibv_wc_status status;
} atomic_writes[] = {
	{ "RC ATOMIC_WRITE: the 8 bytes land whole, the bytes around untouched",
	  LW | RW, 16, IBV_WC_SUCCESS },
	{ "RC ATOMIC_WRITE to a region with REMOTE_ATOMIC but not REMOTE_WRITE: REM_ACCESS_ERR",
	  LW | RA, 16, IBV_WC_REM_ACCESS_ERR },
	{ "RC ATOMIC_WRITE 4 bytes off alignment: REM_INV_REQ_ERR, nothing written",
	  LW | RW, 20, IBV_WC_REM_INV_REQ_ERR },
};

/*
 * ibv_wr_atomic_write() of 8 bytes to the server's region (the verbs'
 * only way on rdma_rxe, whose ibv_post_send() does not take one); the
 * answer is an empty read response.
 */
static void rc_atomic_write(const void *arg)
{
	const struct atomic_write *a = arg;
	uint8_t want[64], val[8];
	struct ibv_qp_ex *x;
	int ret;
	struct rbuf rb;
	struct end *e;
	struct rqp r;

	if (!rbuf_new(&rb, 64, a->access, SEED_S) ||
	    !wire_pair_ops(IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE, &e, &r))
		return;
	x = ibv_qp_to_qp_ex(e->qp);
	if (!x) {
		t_fail("ibv_qp_to_qp_ex: NULL");
		return;
	}
	fill(val, sizeof(val), SEED_C);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, rb.rkey, rb.addr + a->off, val);
	ret = ibv_wr_complete(x);
	if (ret) {
		t_fail("ibv_wr_complete: %s", strerror(ret));
		return;
	}
	fill(want, sizeof(want), SEED_S);
	if (a->status == IBV_WC_SUCCESS) {
		expect_wc(e->scq, 1, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, NULL, "client");
		memcpy(want + a->off, val, sizeof(val));
		rexpect_state(&r, IBV_QPS_RTS, "server's QP");
	} else {
		expect_fails(e, 1, a->status, "client");
		/* IBA class C: the responder that NAKs moves to the error state too. */
		rexpect_state(&r, IBV_QPS_ERR, "server's QP");
	}
	rbuf_expect(&rb, want, "server's region");
	rexpect_none(&r, 'r', 0, "server's receive CQ");
}

/* ---- RC FLUSH (IBA 1.5), from stag ---- */

#define FLEN			512

static const struct flush {
	const char *name;
	int access;		/* of the server's region */
	int qp_access;		/* of the server's QP */
	bool exact;		/* a region over the data alone, the guards outside it */
	bool write;		/* a WRITE of the range first */
	uint8_t level;
	size_t off, len;
	enum ibv_wc_status status;
} flushes[] = {
	{ "RC FLUSH (global, a range) after a WRITE: both complete, the bytes are there",
	  LW | RW | ACC_FLUSH_GLOBAL, ACC_FLUSH_GLOBAL, false, true, FLUSH_RANGE, 0, FLEN,
	  IBV_WC_SUCCESS },
	{ "RC FLUSH of a whole region, the range naming nothing of it: SUCCESS",
	  LW | RW | ACC_FLUSH_GLOBAL, ACC_FLUSH_GLOBAL, false, false, FLUSH_MR, 1 << 20, 1,
	  IBV_WC_SUCCESS },
	{ "RC FLUSH of a range to a region's last byte: SUCCESS",
	  LW | RW | ACC_FLUSH_GLOBAL, ACC_FLUSH_GLOBAL, true, false, FLUSH_RANGE, FLEN - 1, 1,
	  IBV_WC_SUCCESS },
	{ "RC FLUSH of a range one byte past a region's end: REM_ACCESS_ERR",
	  LW | RW | ACC_FLUSH_GLOBAL, ACC_FLUSH_GLOBAL, true, false, FLUSH_RANGE, 1, FLEN,
	  IBV_WC_REM_ACCESS_ERR },
	{ "RC FLUSH of a region without the global flush right: REM_ACCESS_ERR",
	  LW | RW, ACC_FLUSH_GLOBAL, false, false, FLUSH_RANGE, 0, FLEN, IBV_WC_REM_ACCESS_ERR },
	{ "RC FLUSH to a QP without the global flush right: REM_INV_REQ_ERR",
	  LW | RW | ACC_FLUSH_GLOBAL, 0, false, false, FLUSH_RANGE, 0, FLEN,
	  IBV_WC_REM_INV_REQ_ERR },
};

/*
 * A FLUSH of the server's region (after a WRITE of its range, if @f->write)
 * as stag's provider of a newer rdma-core posts it; the server is stag or
 * rdma_rxe, whose FETH and opcode stag's must be. An error leaves the
 * server's QP in ERR (class C); nothing of the region changes but what
 * the WRITE wrote.
 */
static void rc_flush(const void *arg)
{
	const struct flush *f = arg;
	struct stag_send_wqe w;
	struct buf *src = buf_new(FLEN, LW);
	struct conn mine, theirs;
	uint8_t want[FLEN];
	uint32_t rkey;
	struct rbuf rb;
	struct raw raw;
	struct end *e;
	struct rqp r;
	uint64_t base;

	if (!is_stag()) {
		case_skip("rdma-core 44 posts no FLUSH: stag's are written into its ring by hand");
		return;
	}
	if (!raw_have_flush())
		return;
	if (!src || !rbuf_new(&rb, FLEN, f->exact ? LW : f->access, SEED_S) ||
	    !wire_new(IBV_QPT_RC, false, &e, &r, &mine, &theirs))
		return;
	rkey = rb.rkey;
	if (f->exact && !rbuf_exact(&rb, f->access, &rkey)) {
		t_fail("a region of the server's over its data alone");
		return;
	}
	theirs.access |= f->qp_access;
	if (!wire_connect(e, &r, &mine, &theirs) || !raw_open(e, &raw))
		return;
	fill(want, FLEN, SEED_S);
	base = rb.addr;
	if (f->write) {
		struct stag_send_wqe wr = { .wr_id = 1, .opcode = IBV_WR_RDMA_WRITE, .num_sge = 1,
					    .send_flags = IBV_SEND_SIGNALED };
		struct ibv_sge sg = sge_of(src, 0, FLEN);

		fill(src->data, FLEN, SEED_C);
		wr.wr.rdma.remote_addr = base;
		wr.wr.rdma.rkey = rkey;
		raw_write(&raw, &wr, &sg, sizeof(sg));
		fill(want, FLEN, SEED_C);
	}
	w = raw_wqe_flush(2, rkey, base + f->off, f->len, FLUSH_GLOBAL, f->level);
	raw_write(&raw, &w, NULL, 0);
	if (raw_publish(&raw, raw.prod)) {
		t_fail("stagdv_qp_doorbell");
		return;
	}
	if (f->write)
		expect_wc(e->scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "the WRITE");
	expect_wc(e->scq, 2, f->status, f->status == IBV_WC_SUCCESS ? WC_FLUSH : -1, NULL,
		  "the FLUSH");
	rexpect_state(&r, f->status == IBV_WC_SUCCESS ? IBV_QPS_RTS : IBV_QPS_ERR,
		      "server's QP");
	rbuf_expect(&rb, want, "server's region");
	rexpect_none(&r, 'r', 0, "server's receive CQ");
	expect_guards(src, "client's source");
}

/* ---- RC remote access errors ---- */

static const struct denial {
	const char *name;
	enum ibv_wr_opcode op;
	int access;	/* of the region accessed */
	bool exact;	/* that region is the data alone, the guards outside it */
	bool stale;	/* the rkey's key byte is changed */
	size_t off, len;
} denials[] = {
	{ "RC RDMA_WRITE with a stale rkey: REM_ACCESS_ERR, nothing written, both QPs in ERR",
	  IBV_WR_RDMA_WRITE, LW | RW, false, true, 0, 64 },
	{ "RC RDMA_WRITE of the byte past a region's end: REM_ACCESS_ERR, nothing written",
	  IBV_WR_RDMA_WRITE, LW | RW, true, false, DLEN, 1 },
	{ "RC RDMA_WRITE of a region's last byte and the one past: REM_ACCESS_ERR, nothing written",
	  IBV_WR_RDMA_WRITE, LW | RW, true, false, DLEN - 1, 2 },
	{ "RC RDMA_READ of the byte past a region's end: REM_ACCESS_ERR, nothing read",
	  IBV_WR_RDMA_READ, LW | RR, true, false, DLEN, 1 },
	{ "RC RDMA_READ of a region without REMOTE_READ: REM_ACCESS_ERR, nothing read",
	  IBV_WR_RDMA_READ, LW | RW, false, false, 0, 64 },
};

/*
 * The same access first, but one byte lower (inside the region) or with
 * the key that is not stale: it succeeds, so the error that follows is the
 * bound's or the key's and nothing else's. Its effect goes into what each
 * side must hold.
 */
static bool probe(struct end *e, const struct denial *d, const struct rbuf *rb, uint32_t rkey,
		  struct buf *lb, uint8_t *want_s, uint8_t *want_c)
{
	size_t off = d->exact ? d->off - 1 : d->off;
	struct ibv_sge s = sge_of(lb, 0, d->len);
	struct ibv_send_wr wr = wr_remote(10, d->op, &s, rb->addr + off, rkey);

	if (post(e, &wr) ||
	    !expect_wc(e->scq, 10, IBV_WC_SUCCESS, wc_opcode(d->op), NULL, "the access allowed"))
		return false;
	if (d->op == IBV_WR_RDMA_READ)
		memcpy(want_c, want_s + off, d->len);
	else
		memcpy(want_s + off, want_c, d->len);
	return true;
}

static void rc_denied(const void *arg)
{
	const struct denial *d = arg;
	struct buf *lb = buf_new(DLEN, LW);
	uint8_t want_s[DLEN], want_c[DLEN];
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct rbuf rb;
	struct end *e;
	struct rqp r;
	uint32_t rkey;

	if (!lb || !rbuf_new(&rb, DLEN, d->exact ? LW : d->access, BLANK))
		return;
	rkey = rb.rkey;
	if ((d->exact && !rbuf_exact(&rb, d->access, &rkey)) ||
	    !wire_pair(IBV_QPT_RC, false, &e, &r))
		return;
	fill(lb->data, DLEN, SEED_C);
	fill(want_c, DLEN, SEED_C);
	fill(want_s, DLEN, BLANK);
	if ((d->exact || d->stale) && !probe(e, d, &rb, rkey, lb, want_s, want_c))
		return;
	if (d->stale)
		rkey ^= 0x5a;
	s = sge_of(lb, 0, d->len);
	wr = wr_remote(1, d->op, &s, rb.addr + d->off, rkey);
	if (post(e, &wr))
		return;
	expect_fails(e, 1, IBV_WC_REM_ACCESS_ERR, "client");
	/* IBA class C: the responder that NAKs an access moves to the error state too. */
	rexpect_state(&r, IBV_QPS_ERR, "server's QP");
	rexpect_none(&r, 'r', 0, "server's receive CQ");
	rbuf_expect(&rb, want_s, "server's buffer");
	expect_bytes(lb->data, want_c, DLEN, "client's buffer");
	expect_guards(lb, "client's buffer");
}

/* ---- RNR and retries ---- */

static void rc_rnr_exceeded(const void *arg)
{
	struct buf *lb = buf_new(100, LW);
	struct conn mine, theirs;
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct end *e;
	struct rqp r;

	(void)arg;
	if (!lb || !wire_new(IBV_QPT_RC, false, &e, &r, &mine, &theirs))
		return;
	mine.rnr_retry = 0;
	if (!wire_connect(e, &r, &mine, &theirs))
		return;
	s = sge_of(lb, 0, 100);
	wr = wr_send(1, &s, 1);
	if (post(e, &wr))
		return;
	expect_fails(e, 1, IBV_WC_RNR_RETRY_EXC_ERR, "client");
	/* Receiver not ready is no error of the responder's. */
	rexpect_state(&r, IBV_QPS_RTS, "server's QP");
	rexpect_none(&r, 'r', 0, "server's receive CQ");
}

#define RNR_WAIT_MS	300
#define RNR_TIMER	18	/* 5.12 ms: a few dozen RNR NAKs while the client waits */

static void rc_rnr_retried(const void *arg)
{
	size_t len = 3 * mtu + 7;
	struct buf *lb = buf_new(len, LW);
	struct conn mine, theirs;
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct ibv_wc wc = { 0 };
	struct counter said, heard;
	struct rbuf rb;
	struct end *e;
	struct rqp r;

	(void)arg;
	if (!lb || !rbuf_new(&rb, len, LW, BLANK) ||
	    !wire_new(IBV_QPT_RC, false, &e, &r, &mine, &theirs))
		return;
	mine.rnr_retry = 7;
	theirs.min_rnr_timer = RNR_TIMER;
	if (!wire_connect(e, &r, &mine, &theirs))
		return;
	said = counter_start(true, "nak_sent_rnr", "send_rnr_err");
	heard = counter_start(false, "nak_rcvd_rnr", "rcvd_rnr_err");
	fill(lb->data, len, SEED_C);
	s = sge_of(lb, 0, len);
	wr = wr_send(1, &s, 1);
	if (post(e, &wr))
		return;
	usleep(RNR_WAIT_MS * 1000);
	t_check(!poll_n(e->scq, &wc, 1, 0), "completed (%s) before any receive was posted",
		ibv_wc_status_str(wc.status));
	if (!rrecv(&r, 2, &rb, 0, len))
		return;
	expect_wc(e->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "client");
	if (rexpect_wc(&r, 'r', 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "server"))
		expect_recv(&wc, len, NULL, r.qpn, "server");
	rbuf_expect_fill(&rb, SEED_C, "server's buffer");
	expect_data(lb, SEED_C, "client's buffer");
	/* Not a retry after an ACK timeout that happened to come late enough. */
	if (!stag_loopback()) {
		expect_counted(&said, "no RNR NAK sent");
		expect_counted(&heard, "no RNR NAK heard");
	}
}

static void rc_retry_exceeded(const void *arg)
{
	struct buf *lb = buf_new(100, LW);
	struct conn mine, theirs;
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct rbuf rb;
	struct end *e;
	struct rqp r;

	(void)arg;
	if (!lb || !rbuf_new(&rb, 100, LW, BLANK) ||
	    !wire_new(IBV_QPT_RC, false, &e, &r, &mine, &theirs))
		return;
	mine.timeout = QUICK_TIMEOUT;
	mine.retry_cnt = 2;
	if (!wire_connect(e, &r, &mine, &theirs))
		return;
	/* The pair works while the server's QP lives. */
	fill(lb->data, 100, SEED_C);
	s = sge_of(lb, 0, 100);
	wr = wr_send(1, &s, 1);
	if (!rrecv(&r, 2, &rb, 0, 100) || post(e, &wr) ||
	    !expect_wc(e->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "the SEND before") ||
	    !rexpect_wc(&r, 'r', 2, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "server"))
		return;
	rbuf_expect_fill(&rb, SEED_C, "server's buffer");
	if (!rpc(NULL, 0, "DESTROY %d", r.id))
		return;
	wr.wr_id = 3;
	if (!post(e, &wr))
		expect_fails(e, 3, IBV_WC_RETRY_EXC_ERR, "the SEND after the server's QP is gone");
}

/* ---- UC ---- */

static void uc_multi(const void *arg)
{
	size_t len = 3 * mtu + 7;
	struct buf *lw = buf_new(len, LW), *ls = buf_new(len, LW);
	const uint32_t imm = IMM;
	struct ibv_send_wr w, snd;
	struct ibv_wc wc[2];
	struct ibv_sge s[2];
	struct rbuf rw, rs;
	struct end *e;
	struct rqp r;

	(void)arg;
	if (!lw || !ls || !rbuf_new(&rw, len, LW | RW, BLANK) || !rbuf_new(&rs, len, LW, BLANK) ||
	    !wire_pair(IBV_QPT_UC, false, &e, &r))
		return;
	fill(lw->data, len, SEED_C);
	fill(ls->data, len, SEED_C + 1);
	s[0] = sge_of(lw, 0, len);
	s[1] = sge_of(ls, 0, len);
	/* Receives are taken in order: the WRITE_WITH_IMM's (no buffer), then the SEND's. */
	if (!rrecv(&r, 10, NULL, 0, 0) || !rrecv(&r, 11, &rs, 0, len))
		return;
	w = wr_remote(1, IBV_WR_RDMA_WRITE_WITH_IMM, &s[0], rw.addr, rw.rkey);
	w.imm_data = htonl(imm);
	snd = wr_send(2, &s[1], 1);
	w.next = &snd;
	if (post(e, &w))
		return;
	expect_wc(e->scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "client's WRITE_WITH_IMM");
	expect_wc(e->scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "client's SEND");
	if (rexpect_wc(&r, 'r', 10, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, &wc[0],
		       "server's WRITE_WITH_IMM receive"))
		expect_recv(&wc[0], len, &imm, r.qpn, "server's WRITE_WITH_IMM receive");
	if (rexpect_wc(&r, 'r', 11, IBV_WC_SUCCESS, IBV_WC_RECV, &wc[1], "server's SEND receive"))
		expect_recv(&wc[1], len, NULL, r.qpn, "server's SEND receive");
	rbuf_expect_fill(&rw, SEED_C, "server's written buffer");
	rbuf_expect_fill(&rs, SEED_C + 1, "server's receive buffer");
	expect_data(lw, SEED_C, "client's WRITE buffer");
	expect_data(ls, SEED_C + 1, "client's SEND buffer");
}

/* ---- UD ---- */

/* The IPv4 header in the last 20 bytes of a GRH names the client and the server. */
static void expect_grh_v4(const uint8_t *grh)
{
	const uint8_t *ip = grh + 20;

	if (memcmp(gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) ||
	    memcmp(peer.gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))
		return;
	t_check(ip[0] == 0x45, "GRH: IPv4 version and length byte %#x, expected 0x45", ip[0]);
	t_check(ip[9] == IPPROTO_UDP, "GRH: IP protocol %u, expected UDP", ip[9]);
	t_check(!memcmp(ip + 12, gid.raw + 12, 4), "GRH: the source is not the client's address");
	t_check(!memcmp(ip + 16, peer.gid.raw + 12, 4),
		"GRH: the destination is not the server's address");
}

static void ud_send(const void *arg)
{
	size_t len = arg ? mtu : 256;
	struct buf *lb = buf_new(len, LW), copy;
	struct ibv_send_wr wr;
	struct ibv_ah *ah;
	struct ibv_sge s;
	struct ibv_wc wc;
	struct rbuf rb;
	struct end *e;
	struct rqp r;

	ah = ah_to(&peer.gid);
	if (!lb || !ah || !rbuf_new(&rb, GRH_LEN + len, LW, BLANK) ||
	    !wire_pair(IBV_QPT_UD, false, &e, &r) || !rrecv(&r, 2, &rb, 0, GRH_LEN + len))
		return;
	fill(lb->data, len, SEED_C);
	s = sge_of(lb, 0, len);
	wr = wr_send(1, &s, 1);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = r.qpn;
	wr.wr.ud.remote_qkey = QKEY;
	if (post(e, &wr))
		return;
	expect_wc(e->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "client");
	if (!rexpect_wc(&r, 'r', 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "server"))
		return;
	t_check(wc.byte_len == GRH_LEN + len, "byte_len %u, expected %zu (GRH + data)",
		wc.byte_len, GRH_LEN + len);
	t_check(wc.wc_flags & IBV_WC_GRH, "IBV_WC_GRH not set");
	t_check(wc.src_qp == e->qp->qp_num, "src_qp %#x, expected the client's %#x", wc.src_qp,
		e->qp->qp_num);
	t_check(wc.qp_num == r.qpn, "qp_num %#x, expected %#x", wc.qp_num, r.qpn);
	if (rbuf_get(&rb, &copy)) {
		expect_grh_v4((uint8_t *)copy.data);
		expect_bytes(copy.data + GRH_LEN, lb->data, len, "server's buffer after the GRH");
		expect_guards(&copy, "server's buffer");
	}
	free(copy.mem);
	expect_data(lb, SEED_C, "client's buffer");
}

/* ---- multicast ---- */

#define MCAST_QPN	0xffffff

/* The group of the cases, in the client's address family: 239.255.78.1 or ff0e::78:1. */
static union ibv_gid mcast_group(void)
{
	union ibv_gid g = {};

	if (!memcmp(gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12)) {
		memcpy(g.raw, gid.raw, 12);
		g.raw[12] = 239;
		g.raw[13] = 255;
		g.raw[14] = 78;
	} else {
		g.raw[0] = 0xff;
		g.raw[1] = 0x0e;
		g.raw[13] = 0x78;
	}
	g.raw[15] = 1;
	return g;
}

static bool rmcast(const struct rqp *r, bool attach, const union ibv_gid *g)
{
	char ans[WIRE_LINE], hex[33];

	gid_hex(g, hex);
	return rpc(ans, sizeof(ans), "MCAST %d %s %s", r->id, attach ? "attach" : "detach", hex);
}

/* One SEND of @lb to the group; each of @n server QPs in @got takes it, the rest not. */
static void mcast_round(struct end *e, struct ibv_ah *ah, struct buf *lb, size_t len,
			const struct rqp *r, const struct rbuf *rb, const bool *got, int n,
			uint64_t id)
{
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct ibv_wc wc;
	struct buf copy;
	char what[64];
	int i;

	for (i = 0; i < n; i++) {
		if (!rrecv(&r[i], id, &rb[i], 0, GRH_LEN + len))
			return;
	}
	s = sge_of(lb, 0, len);
	wr = wr_send(id, &s, 1);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = MCAST_QPN;
	wr.wr.ud.remote_qkey = QKEY;
	if (post(e, &wr))
		return;
	expect_wc(e->scq, id, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "client");
	for (i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "server QP %d (%s)", i, got[i] ? "member" : "not");
		if (!got[i]) {
			rexpect_none(&r[i], 'r', QUIET_MS, what);
			continue;
		}
		if (!rexpect_wc(&r[i], 'r', id, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, what))
			continue;
		t_check(wc.byte_len == GRH_LEN + len, "%s: byte_len %u, expected %zu", what,
			wc.byte_len, GRH_LEN + len);
		t_check(wc.src_qp == e->qp->qp_num, "%s: src_qp %#x, expected the client's %#x",
			what, wc.src_qp, e->qp->qp_num);
		rexpect_none(&r[i], 'r', 50, what);
		if (!rbuf_get(&rb[i], &copy))
			continue;
		expect_bytes(copy.data + GRH_LEN, lb->data, len, what);
		expect_guards(&copy, what);
		free(copy.mem);
	}
}

/*
 * A SEND to a multicast group crosses the link as one packet to the
 * group's IP address: the server's netdev joined the group when its first
 * QP attached, and each attached QP takes its own copy, the detached and
 * the never attached none.
 */
static void ud_mcast(const void *arg)
{
	union ibv_gid g = mcast_group();
	size_t len = 600;
	bool got[3] = { true, true, false };
	struct buf *lb = buf_new(len, LW);
	struct conn mine, theirs;
	struct rbuf rb[3];
	struct ibv_ah *ah;
	struct rqp r[3];
	struct end *e;
	int i;

	(void)arg;
	if (peer_is_rxe()) {
		/* Seen: stag to stag and rxe to stag pass; stag to rxe, nothing arrives. */
		case_skip("rdma_rxe joins no IP group (rxe_mcast.c adds only the MAC of an IPv6 "
			  "group): the server's IP stack drops the group's packets");
		return;
	}
	ah = ah_to(&g);
	if (!lb || !ah || !wire_new(IBV_QPT_UD, false, &e, &r[0], &mine, &theirs) ||
	    !wire_connect(e, &r[0], &mine, &theirs))
		return;
	for (i = 0; i < 3; i++) {
		if ((i && (!rqp_new(&r[i], IBV_QPT_UD, false) || !rqp_connect(&r[i], &theirs))) ||
		    !rbuf_new(&rb[i], GRH_LEN + len, LW, BLANK))
			return;
	}
	if (!rmcast(&r[0], true, &g) || !rmcast(&r[1], true, &g))
		return;
	fill(lb->data, len, SEED_C);
	mcast_round(e, ah, lb, len, r, rb, got, 3, 1);
	if (!rmcast(&r[1], false, &g))
		return;
	got[1] = false;
	fill(lb->data, len, SEED_C + 1);
	mcast_round(e, ah, lb, len, r, rb, got, 3, 2);
	rmcast(&r[0], false, &g);
}

/* ---- SRQ ---- */

/* A tag matching header, as a message from the server starts. */
static void tmh_at(uint8_t *p, uint8_t op, uint64_t tag, uint32_t app_ctx)
{
	struct ibv_tmh h = { .opcode = op, .app_ctx = htobe32(app_ctx), .tag = htobe64(tag) };

	memcpy(p, &h, sizeof(h));
}

/* The server sends @len bytes of @rb from @off, and its send completes. */
static bool rsend(const struct rqp *r, const struct rbuf *rb, size_t off, size_t len,
		  uint64_t wr_id)
{
	return rpc(NULL, 0, "SEND %d %#llx %d %zu %zu", r->id, (ull)wr_id, rb->id, off, len) &&
	       rexpect_wc(r, 's', wr_id, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "the server's SEND");
}

/*
 * Tag matching on the wire: this QP is on a tag matching SRQ, the server
 * sends. A multi-packet EAGER lands after its header in the buffer its tag
 * matches (the header only in the first packet); an unmatched one lands
 * whole in a plain receive and stops matching until a SYNC; a rendezvous
 * that matches is left to software (RNDV_INCOMPLETE, the RVH in the
 * buffer): stag's responder issues no READ on the wire.
 */
static void tm_wire(const void *arg)
{
	size_t len = 2 * mtu + 7, tmh = sizeof(struct ibv_tmh);
	struct buf *tagged, *plain, *want;
	struct conn mine, theirs;
	struct ibv_rvh rvh;
	struct tm_pair t = { 0 };
	struct ibv_sge s;
	struct tm_wc w;
	struct rbuf rb;
	struct rqp r;

	(void)arg;
	if (!is_stag()) {
		case_skip("tag matching is stag's: this device has none");
		return;
	}
	tagged = buf_new(len, LW);
	plain = buf_new(len, LW);
	want = buf_new(len, LW);
	t.cq = tm_cq_new();
	t.srq = t.cq ? tm_srq_try(ibv_cq_ex_to_cq(t.cq), 16) : NULL;
	if (!tagged || !plain || !want || !t.srq || !rbuf_new(&rb, len, LW | RR, SEED_S))
		return;
	t.server = end_on(IBV_QPT_RC, cq_new(), ibv_cq_ex_to_cq(t.cq), t.srq, true);
	if (!t.server || !rqp_new(&r, IBV_QPT_RC, false))
		return;
	conns(t.server, &r, &mine, &theirs);
	if (!wire_connect(t.server, &r, &mine, &theirs))
		return;
	s = sge_of(plain, 0, len);
	if (post_srq(t.srq, 0x91, &s))
		return;
	s = sge_of(tagged, 0, len);
	tm_add(&t, 0x1234, ~0ULL, 0x71, &s, 1);

	/* EAGER, three packets: what follows the header, byte for byte. */
	fill(want->data, len, SEED_S);
	tmh_at((uint8_t *)want->data, IBV_TMH_EAGER, 0x1234, 0xfeed);
	if (!rbuf_put(&rb, 0, want->data, tmh) || !rsend(&r, &rb, 0, len, 1))
		return;
	if (tm_expect(&t, 0x71, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		      IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 0x1234, &w, "a multi-packet EAGER"))
		t_check(w.byte_len == len - tmh && w.priv == 0xfeed,
			"a multi-packet EAGER: byte_len %u priv %#x", w.byte_len, w.priv);
	expect_bytes(tagged->data, want->data + tmh, len - tmh, "the tagged buffer");
	expect_guards(tagged, "the tagged buffer");

	/* Unexpected: whole, in the plain receive; then a SYNC. */
	tmh_at((uint8_t *)want->data, IBV_TMH_EAGER, 0x99, 0);
	if (!rbuf_put(&rb, 0, want->data, tmh) || !rsend(&r, &rb, 0, len, 2))
		return;
	if (tm_expect(&t, 0x91, IBV_WC_SUCCESS, IBV_WC_TM_RECV, 0, 0, &w, "an unexpected EAGER"))
		t_check(w.byte_len == len, "an unexpected EAGER: byte_len %u", w.byte_len);
	expect_bytes(plain->data, want->data, len, "the plain receive");
	expect_guards(plain, "the plain receive");
	t.unexpected++;
	tm_sync(&t);

	/* A rendezvous: matched, then left to software with its RVH. */
	fill(tagged->data, len, BLANK);
	s = sge_of(tagged, 0, len);
	tm_add(&t, 0x77, ~0ULL, 0x72, &s, 1);
	tmh_at((uint8_t *)want->data, IBV_TMH_RNDV, 0x77, 0xab);
	rvh = (struct ibv_rvh) { .va = htobe64(rb.addr), .rkey = htobe32(rb.rkey),
				 .len = htobe32(64) };
	memcpy(want->data + tmh, &rvh, sizeof(rvh));
	if (!rbuf_put(&rb, 0, want->data, tmh + sizeof(rvh)) ||
	    !rsend(&r, &rb, 0, tmh + sizeof(rvh), 3))
		return;
	tm_expect(&t, 0x72, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH, 0x77, NULL,
		  "a rendezvous's match");
	if (tm_expect(&t, 0x72, IBV_WC_TM_RNDV_INCOMPLETE, IBV_WC_TM_RECV, 0, 0x77, &w,
		      "a rendezvous on the wire"))
		t_check(w.byte_len == sizeof(rvh), "a rendezvous on the wire: byte_len %u",
			w.byte_len);
	expect_bytes(tagged->data, &rvh, sizeof(rvh), "the RVH, for software");
	expect_state(t.server->qp, IBV_QPS_RTS, "this QP after the messages");
	tm_expect_none(&t, "after the messages");
}

static void srq_recv(const void *arg)
{
	size_t len = mtu + 1;
	struct buf *lb = buf_new(2 * len, LW);
	struct ibv_send_wr wr[2];
	uint8_t *want = malloc(3 * len);
	struct ibv_sge s[2];
	struct ibv_wc wc;
	struct rbuf rb;
	struct end *e;
	struct rqp r;
	char what[64];
	int i;

	(void)arg;
	if (!want || !lb || !rbuf_new(&rb, 3 * len, LW, BLANK) || !rpc(NULL, 0, "SRQ 16") ||
	    !wire_pair(IBV_QPT_RC, true, &e, &r))
		goto out;
	for (i = 0; i < 3; i++)
		if (!rpc(NULL, 0, "SRECV %d %d %zu %zu", 100 + i, rb.id, i * len, len))
			goto out;
	fill(lb->data, 2 * len, SEED_C);
	for (i = 0; i < 2; i++) {
		s[i] = sge_of(lb, i * len, len);
		wr[i] = wr_send(i, &s[i], 1);
	}
	wr[0].next = &wr[1];
	if (post(e, wr))
		goto out;
	for (i = 0; i < 2; i++) {
		snprintf(what, sizeof(what), "SEND %d", i);
		expect_wc(e->scq, i, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, what);
		snprintf(what, sizeof(what), "server's SRQ receive %d", i);
		if (rexpect_wc(&r, 'r', 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, what))
			expect_recv(&wc, len, NULL, r.qpn, what);
	}
	rexpect_none(&r, 'r', 0, "server's receive CQ after two SENDs");
	/* Two receives filled in order, the third untouched. */
	fill(want, 3 * len, BLANK);
	memcpy(want, lb->data, 2 * len);
	rbuf_expect(&rb, want, "server's SRQ buffers");
	expect_data(lb, SEED_C, "client's buffer");
out:
	free(want);
}

/* ---- a type 2 window of the server's ---- */

/* A pair, and the server's window over [WOFF, WOFF + WLEN) of its TLEN-byte buffer. */
struct rwin {
	struct end *e;
	struct rqp r;
	struct rbuf rb;
	uint32_t rkey;
	uint8_t want[TLEN];	/* what the server's buffer must hold */
};

static bool mw_setup(struct rwin *w)
{
	char ans[WIRE_LINE];

	if (!(peer.caps & (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B))) {
		case_skip("the server's device has no type 2 memory windows");
		return false;
	}
	fill(w->want, TLEN, BLANK);
	if (!rbuf_new(&w->rb, TLEN, REGION, BLANK) || !wire_pair(IBV_QPT_RC, false, &w->e, &w->r) ||
	    !rpc(ans, sizeof(ans), "BIND %d %d %d %d %#x 7", w->r.id, w->rb.id, WOFF, WLEN, RW))
		return false;
	w->rkey = strtoul(ans, NULL, 0);
	return rexpect_wc(&w->r, 's', 7, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL, "server's bind");
}

/* A WRITE of @len bytes at byte @x of the window, which must end with @status. */
static void mw_write(struct rwin *w, long x, size_t len, enum ibv_wc_status status)
{
	struct buf *lb = buf_new(len, LW);
	struct ibv_send_wr wr;
	struct ibv_sge s;

	if (!lb)
		return;
	fill(lb->data, len, SEED_C);
	s = sge_of(lb, 0, len);
	wr = wr_remote(20, IBV_WR_RDMA_WRITE, &s, w->rb.addr + WOFF + x, w->rkey);
	if (post(w->e, &wr))
		return;
	if (status != IBV_WC_SUCCESS) {
		expect_fails(w->e, 20, status, "WRITE through the window");
	} else if (expect_wc(w->e->scq, 20, status, IBV_WC_RDMA_WRITE, NULL,
			     "WRITE through the window")) {
		memcpy(w->want + WOFF + x, lb->data, len);
	}
	rbuf_expect(&w->rb, w->want, "server's buffer under the window");
}

static void mw_inside(const void *arg)
{
	struct rwin w;

	(void)arg;
	if (mw_setup(&w))
		mw_write(&w, 0, WLEN, IBV_WC_SUCCESS);
}

static void mw_outside(const void *arg)
{
	struct rwin w;

	(void)arg;
	if (peer_is_rxe()) {
		/* Documentation/stag.rst, "Memory windows". */
		case_skip("rdma_rxe checks an access through a window against its region's bounds");
		return;
	}
	if (!mw_setup(&w))
		return;
	/* The last byte goes through: the one after it is the window's bound, not the key. */
	mw_write(&w, WLEN - 1, 1, IBV_WC_SUCCESS);
	mw_write(&w, WLEN, 1, IBV_WC_REM_ACCESS_ERR);
}

/*
 * A SEND_WITH_INV naming the window's rkey: the server's receive says so
 * (@arg: its IBV_WC_WITH_INV flag is what the case is about), and the
 * window is gone (!@arg: a WRITE with its rkey is refused).
 */
static void mw_send_inv(const void *arg)
{
	struct ibv_send_wr snd = wr_send(30, NULL, 0);
	bool flag = arg;
	struct ibv_wc wc;
	struct rwin w;

	if (flag && peer_is_rxe()) {
		/* drivers/infiniband/sw/rxe/rxe_resp.c, do_complete(). */
		case_skip("rdma_rxe puts the kernel's IB_WC_WITH_INVALIDATE (1 << 2) in a user "
			  "CQE: libibverbs reads IBV_WC_IP_CSUM_OK there, never IBV_WC_WITH_INV");
		return;
	}
	if (!mw_setup(&w))
		return;
	mw_write(&w, 0, 1, IBV_WC_SUCCESS);
	snd.opcode = IBV_WR_SEND_WITH_INV;
	snd.invalidate_rkey = w.rkey;
	if (!rrecv(&w.r, 31, NULL, 0, 0) || post(w.e, &snd))
		return;
	expect_wc(w.e->scq, 30, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "SEND_WITH_INV");
	if (rexpect_wc(&w.r, 'r', 31, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "server's receive")) {
		t_check(!flag || wc.wc_flags & IBV_WC_WITH_INV, "server's receive: wc_flags %#x "
			"without IBV_WC_WITH_INV", wc.wc_flags);
		t_check(wc.invalidated_rkey == w.rkey, "invalidated_rkey %#x, expected %#x",
			wc.invalidated_rkey, w.rkey);
		t_check(wc.byte_len == 0, "byte_len %u, expected 0", wc.byte_len);
	}
	if (!flag)
		mw_write(&w, 0, 1, IBV_WC_REM_ACCESS_ERR);
}

/* ---- a stranger ---- */

/*
 * The server's QP has a peer; a second QP of this host, connected to the
 * server's QP number, SENDs to it. From another address of this host it
 * sends the very PSN the server expects next, so that only the address
 * tells it apart; from the peer's own address, a PSN far ahead. Either way
 * the server must take no receive, answer only its peer, and go on
 * serving the peer.
 */
static void not_the_peer(const void *arg)
{
	bool other_addr = arg;
	/* On stag's loopback path the sending QP is known: not the peer's. */
	bool loop = stag_loopback();
	struct buf *lb = buf_new(64, LW), *lx = buf_new(64, LW);
	struct conn mine, theirs, cx;
	struct ibv_send_wr wr;
	struct counter refused, stale = { .before = -1 };
	struct ibv_sge s;
	struct ibv_wc wc;
	struct end *e, *x;
	struct rbuf rb;
	struct rqp r;

	if (other_addr && stranger_gid < 0) {
		case_skip("no second address of this host (wire.sh adds one, -x)");
		return;
	}
	x = end_new(IBV_QPT_RC, NULL, true);
	if (!lb || !lx || !x || !rbuf_new(&rb, 64, LW, BLANK) ||
	    !wire_new(IBV_QPT_RC, false, &e, &r, &mine, &theirs) ||
	    !wire_connect(e, &r, &mine, &theirs) || !rrecv(&r, 2, &rb, 0, 64))
		return;
	cx = mine;
	cx.timeout = QUICK_TIMEOUT;
	cx.retry_cnt = 1;
	if (other_addr)
		cx.sgid_index = stranger_gid;
	else
		cx.sq_psn = (mine.sq_psn + 0x100000) & 0xffffff;
	if (!connect_end(x, &cx))
		return;
	/* How the server counts the stranger's first packet (rxe: not by address). */
	if (other_addr || loop)
		refused = counter_start(true, "drop_not_peer", NULL);
	else
		refused = counter_start(true, "nak_sent_psn_seq", "out_of_seq_request");
	/* ...and the server's NAK of that gap, at its peer: dropped, counted. */
	if (!other_addr && !loop)
		stale = counter_start(false, "drop_psn", NULL);
	fill(lx->data, 64, SEED_C + 1);
	s = sge_of(lx, 0, 64);
	wr = wr_send(1, &s, 1);
	if (post(x, &wr))
		return;
	/* Whatever the server answers goes to its peer: the stranger hears nothing. */
	expect_wc(x->scq, 1, IBV_WC_RETRY_EXC_ERR, -1, NULL, "stranger");
	rexpect_none(&r, 'r', STRANGER_MS, "server's receive CQ while the stranger sends");
	rexpect_state(&r, IBV_QPS_RTS, "server's QP after the stranger");
	rbuf_expect_fill(&rb, BLANK, "server's receive buffer after the stranger");
	expect_counted(&refused, "the stranger's SEND never arrived");
	/*
	 * A NAK of the stranger's gap goes to the server's peer, which sent
	 * nothing it names: it must ignore it, and its next SEND must land.
	 */
	expect_none(e->scq, 0, "peer's send CQ after the stranger");
	expect_counted(&stale, "the NAK naming nothing the peer sent");

	fill(lb->data, 64, SEED_C);
	s = sge_of(lb, 0, 64);
	wr = wr_send(3, &s, 1);
	if (post(e, &wr))
		return;
	expect_wc(e->scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "peer's SEND afterwards");
	if (rexpect_wc(&r, 'r', 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "server, from its peer"))
		expect_recv(&wc, 64, NULL, r.qpn, "server, from its peer");
	rbuf_expect_fill(&rb, SEED_C, "server's receive buffer after the peer's SEND");
}

/* ---- a QP that leaves the wire ---- */

/*
 * An RC QP connected to the server, then reset and connected to a QP of
 * this host, which stag's loopback serves without packets. The server's
 * QP still takes the client's address for its peer and SENDs on, to the
 * very PSN the QP now expects: only the QP being off the wire tells the
 * SEND from its new peer's. It must be refused (drop_not_peer), the
 * server's SEND retried out, and the receive left for the new peer.
 */
static void left_the_wire(const void *arg)
{
	struct buf *got = buf_new(64, LW), *ly = buf_new(64, LW);
	struct conn mine, theirs, ce, cy;
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct counter refused;
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct ibv_wc wc;
	struct end *e, *y;
	struct rbuf rb;
	const char *why = NULL;
	struct rqp r;
	int ret;

	(void)arg;
	if (!is_stag())
		why = "the client is not stag: no loopback of its own";
	else if (stag_wire())
		why = "stag.loopback=0: every QP of this host is on the wire";
	else if (stag_loopback())
		why = "the server is this device: no wire to leave";
	if (why) {
		case_skip(why);
		return;
	}
	y = end_new(IBV_QPT_RC, NULL, true);
	if (!got || !ly || !y || !rbuf_new(&rb, 64, LW, SEED_S) ||
	    !wire_new(IBV_QPT_RC, false, &e, &r, &mine, &theirs))
		return;
	/* Retried out in a few tens of ms once nobody answers. */
	theirs.timeout = QUICK_TIMEOUT;
	theirs.retry_cnt = 3;
	if (!wire_connect(e, &r, &mine, &theirs))
		return;
	s = sge_of(got, 0, 64);
	if (post_recv(e, 1, &s, 1) || !rsend(&r, &rb, 0, 64, 1))
		return;
	if (expect_wc(e->rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "client, on the wire"))
		expect_recv(&wc, 64, NULL, e->qp->qp_num, "client, on the wire");
	expect_data(got, SEED_S, "the server's SEND on the wire");

	/* RESET, then connected here, expecting the server's next PSN. */
	ret = ibv_modify_qp(e->qp, &reset, IBV_QP_STATE);
	if (ret) {
		t_fail("client's QP to RESET: %s", strerror(ret));
		return;
	}
	ce = conn_to(y->qp->qp_num, &gid);
	cy = conn_to(e->qp->qp_num, &gid);
	ce.rq_psn = (theirs.sq_psn + 1) & 0xffffff;
	if (!pair_connect(e, &ce, y, &cy))
		return;
	fill(got->data, 64, BLANK);
	if (post_recv(e, 2, &s, 1))
		return;

	refused = counter_start(false, "drop_not_peer", NULL);
	if (!rpc(NULL, 0, "SEND %d 2 %d 0 64", r.id, rb.id))
		return;
	rexpect_wc(&r, 's', 2, IBV_WC_RETRY_EXC_ERR, -1, NULL,
		   "server's SEND to the QP that left the wire");
	expect_none(e->rcq, 0, "client's receive CQ after its old peer's SEND");
	expect_data(got, BLANK, "client's receive buffer after its old peer's SEND");
	expect_counted(&refused, "the old peer's SEND was taken");

	/* Its new peer's SEND takes that receive. */
	fill(ly->data, 64, SEED_C);
	s = sge_of(ly, 0, 64);
	wr = wr_send(3, &s, 1);
	if (post(y, &wr))
		return;
	expect_wc(y->scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "the new peer's SEND");
	if (expect_wc(e->rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "client, from its new peer"))
		expect_recv(&wc, 64, NULL, e->qp->qp_num, "client, from its new peer");
	expect_data(got, SEED_C, "client's receive buffer after its new peer's SEND");
}

/* ---- running the cases ---- */

struct wire_case {
	const char *name;
	void (*run)(const void *arg);
	const void *arg;
};

static const struct wire_case cases[] = {
	{ "RC SEND with no receive and rnr_retry 0: RNR_RETRY_EXC_ERR, flushed behind, the "
	  "server's QP still in RTS", rc_rnr_exceeded, NULL },
	{ "RC SEND of 3*mtu+7 bytes, rnr_retry 7, the receive posted 300 ms later: completes, "
	  "data intact", rc_rnr_retried, NULL },
	{ "RC SEND after the server destroyed its QP (timeout 12, retry_cnt 2): RETRY_EXC_ERR",
	  rc_retry_exceeded, NULL },
	{ "UC RDMA_WRITE_WITH_IMM and SEND of 3*mtu+7 bytes: receives in order, imm, data, "
	  "guards", uc_multi, NULL },
	{ "UD SEND of 256 bytes: 40-byte GRH naming both addresses, IBV_WC_GRH, src_qp, data",
	  ud_send, NULL },
	{ "UD SEND of exactly the path MTU: arrives whole after the GRH", ud_send, "mtu" },
	{ "UD SEND to a multicast group: each of the server's two attached QPs takes it once, "
	  "data and guards; a QP never attached and, after its detach, a member none",
	  ud_mcast, NULL },
	{ "RC RDMA_WRITE of 64 KiB, then a READ of it: the packets leave in bursts "
	  "(sent_bursts, two packets a burst or more), byte for byte", rc_bursts, NULL },
	{ "RC RDMA_READ of 1 MiB+7 bytes and a FETCH_AND_ADD behind it, max_rd_atomic 1: "
	  "asked for 64 KiB at most at a time, both complete, byte for byte", rc_read_parts,
	  NULL },
	{ "SRQ: the server's QP takes two multi-packet SENDs from its SRQ, in order",
	  srq_recv, NULL },
	{ "tag matching: a multi-packet EAGER into its tagged buffer, an unexpected one whole, "
	  "a rendezvous left to software", tm_wire, NULL },
	{ "type 2 window of the server's: a WRITE of all of it lands, the bytes around it "
	  "untouched", mw_inside, NULL },
	{ "type 2 window of the server's: its last byte written, the byte past it "
	  "REM_ACCESS_ERR", mw_outside, NULL },
	{ "type 2 window: SEND_WITH_INV of its rkey: the server's receive has IBV_WC_WITH_INV "
	  "and the rkey", mw_send_inv, "flag" },
	{ "type 2 window: SEND_WITH_INV of its rkey invalidates it: a WRITE with it then "
	  "REM_ACCESS_ERR, nothing written", mw_send_inv, NULL },
	{ "a stranger QP from another address of this host, sending the expected PSN: the "
	  "server hears nothing, its peer goes on", not_the_peer, "other address" },
	{ "a stranger QP from the peer's own address, PSNs far ahead: the server hears "
	  "nothing, its peer goes on", not_the_peer, NULL },
	{ "an RC QP once on the wire, reset and connected to a QP of this host: its old "
	  "peer's SEND to the PSN it expects is refused (drop_not_peer), its new peer's lands",
	  left_the_wire, NULL },
};

static const char *run_one(const void *arg)
{
	const struct wire_case *c = arg;

	if (case_setup() && use_gid(gid_arg) && hello(c->name))
		c->run(c->arg);
	release_owned();
	case_release();
	server_close();
	return case_skipped();
}

void wire_run(const char *name, void (*fn)(const void *), const void *arg, int limit,
	      int npat, char **pat)
{
	struct wire_case c = { name, fn, arg };

	if (t_case_wanted(name, npat, pat))
		t_case_run(name, limit, run_one, &c);
}

/* Tells the server the run is over: it exits. */
static void bye(void)
{
	char ans[WIRE_LINE];

	if (!server_open() || !rpc(ans, sizeof(ans), "BYE"))
		t_end("tell the server the run is over");
	server_close();
}

static int bad_args(void)
{
	fprintf(stderr, "usage: wire_test -d DEV -g IDX -c ADDR:PORT [-x IDX] [--lossy|--peers]"
			" [PAT]...\n"
			"       wire_test -d DEV -g IDX --serve PORT\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "serve", required_argument, NULL, 's' },
					       { "lossy", no_argument, NULL, 'L' },
					       { "peers", no_argument, NULL, 'P' }, { 0 } };
	const char *env = getenv("STAG_WIRE_TIMEOUT");
	int limit = env && atoi(env) > 0 ? atoi(env) : 60, serve = 0, c, npat;
	static char suite[64];
	bool lossy = false, peers = false;
	char names[ARRAY_SIZE(ops) * ARRAY_SIZE(sizes)][128], *colon, **pat;
	struct xfer xfers[ARRAY_SIZE(ops) * ARRAY_SIZE(sizes)];
	unsigned int i, j, n = 0;

	while ((c = getopt_long(argc, argv, "d:g:c:x:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dev_name = optarg;
			break;
		case 'g':
			gid_arg = atoi(optarg);
			break;
		case 'x':
			stranger_gid = atoi(optarg);
			break;
		case 's':
			serve = atoi(optarg);
			break;
		case 'L':
			lossy = true;
			break;
		case 'P':
			peers = true;
			break;
		case 'c':
			colon = strrchr(optarg, ':');
			if (!colon)
				return bad_args();
			*colon = 0;
			server_addr = optarg;
			server_port = atoi(colon + 1);
			break;
		default:
			return bad_args();
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (serve) {
		t_suite = "wire server";
		return wire_serve(serve, gid_arg);
	}
	if (!server_addr)
		return bad_args();
	t_suite = "wire";
	npat = argc - optind;
	pat = argv + optind;
	if (lossy) {
		/* Each profile's run of the same cases under a name of its own. */
		snprintf(suite, sizeof(suite), "lossy %s", getenv("STAG_LOSSY_PROFILE") ?: "");
		t_suite = suite;
		lossy_run(limit, npat, pat);
		bye();
		return 0;
	}
	if (peers) {
		t_suite = "peers";
		peers_run(limit, npat, pat);
		bye();
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		for (j = 0; j < ARRAY_SIZE(sizes); j++, n++) {
			xfers[n] = (struct xfer){ ops[i].op, &sizes[j] };
			snprintf(names[n], sizeof(names[n]), "RC %s of %s: %s", ops[i].name,
				 sizes[j].name, XFER_CHECKS);
			wire_run(names[n], rc_xfer, &xfers[n], limit, npat, pat);
		}
	}
	for (i = 0; i < ARRAY_SIZE(atomics); i++)
		wire_run(atomics[i].name, rc_atomic, &atomics[i], limit, npat, pat);
	for (i = 0; i < ARRAY_SIZE(atomic_writes); i++)
		wire_run(atomic_writes[i].name, rc_atomic_write, &atomic_writes[i], limit, npat,
			 pat);
	for (i = 0; i < ARRAY_SIZE(flushes); i++)
		wire_run(flushes[i].name, rc_flush, &flushes[i], limit, npat, pat);
	for (i = 0; i < ARRAY_SIZE(denials); i++)
		wire_run(denials[i].name, rc_denied, &denials[i], limit, npat, pat);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		wire_run(cases[i].name, cases[i].run, cases[i].arg, limit, npat, pat);
	bye();
	return 0;
}
