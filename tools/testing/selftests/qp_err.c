// SPDX-License-Identifier: GPL-2.0
/*
 * qp_test's RC error cases: each error completion the IBA requires, at
 * the requester and where there is one at the responder, with nothing
 * written where it must not be; the QP in ERR afterwards; and the work
 * requests behind an error flushed, in order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "qp.h"

/* A key that differs from @key only in its key byte: names the same entry, but stale. */
static uint32_t stale(uint32_t key)
{
	return key ^ 0x5a;
}

/* An RC pair whose requester @a has the given timeout, retry_cnt and rnr_retry. */
static bool pair_retry(struct end **a, struct end **b, uint8_t timeout, uint8_t retry_cnt,
		       uint8_t rnr_retry)
{
	struct conn ca, cb;

	if (!pair_ends(IBV_QPT_RC, a, b, &ca, &cb))
		return false;
	ca.timeout = timeout;
	ca.retry_cnt = retry_cnt;
	ca.rnr_retry = rnr_retry;
	return pair_connect(*a, &ca, *b, &cb);
}

/* A zero-length SEND as @id behind the WR under test: it must be flushed. */
static void post_trailer(struct end *e, uint64_t id)
{
	struct ibv_send_wr wr = wr_send(id, NULL, 0);

	post(e, &wr);
}

/* @wr_id failed with @status, the trailer @wr_id + 1 was flushed, the QP is in ERR. */
static void expect_req_error(struct end *e, uint64_t wr_id, enum ibv_wc_status status)
{
	if (expect_wc(e->scq, wr_id, status, -1, NULL, "requester"))
		expect_flushed(e->scq, wr_id + 1, 1, "requester's SEND behind it");
	expect_state(e->qp, IBV_QPS_ERR, "requester");
}

/* ---- length ---- */

static void rc_len_err(void)
{
	struct buf *src = buf_new(200, LW), *dst = buf_new(100, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s, r;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(src->data, 200, 20);
	s = sge_of(src, 0, 200);
	r = sge_of(dst, 0, 100);
	wr = wr_send(1, &s, 1);
	if (post_recv(b, 10, &r, 1) || post_recv(b, 11, &r, 1) || post(a, &wr))
		return;
	post_trailer(a, 2);
	if (expect_wc(b->rcq, 10, IBV_WC_LOC_LEN_ERR, -1, NULL, "receiver"))
		expect_flushed(b->rcq, 11, 1, "receiver's next receive");
	expect_state(b->qp, IBV_QPS_ERR, "receiver");
	expect_req_error(a, 1, IBV_WC_REM_INV_REQ_ERR);
	expect_guards(dst, "receive buffer (the 100 bytes may hold anything)");
}

/*
 * Spins for @e's next completion on @cq (no sleep between its arrival and
 * the query), checks it is @wr_id with @status, and queries @e's QP at
 * once. Return: the QP's state then, or -1 when no completion came.
 */
static int error_then_state(struct end *e, struct ibv_cq *cq, uint64_t wr_id,
			    enum ibv_wc_status status, int round, const char *who)
{
	long end = now_ms() + WAIT_MS;
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, &wc)) && now_ms() < end)
		;
	if (n != 1) {
		t_fail("round %d: no completion at the %s", round, who);
		return -1;
	}
	qa.qp_state = -1;
	t_check(!ibv_query_qp(e->qp, &qa, IBV_QP_STATE, &qi), "ibv_query_qp");
	t_check(wc.wr_id == wr_id && wc.status == status, "round %d: the %s's completion %#llx %s",
		round, who, (ull)wc.wr_id, ibv_wc_status_str(wc.status));
	return qa.qp_state;
}

#define ERR_STATE_ROUNDS	100

/*
 * An error completion says the QP is in error: a consumer that queries the
 * QP the moment it polls one must find ERR, on both sides. The kernel once
 * posted the completion first and moved the QP after, and a consumer
 * between the two found it still RTS (a CI run of qp_raweth's too-long
 * frame case). The pair is reset and connected again each round.
 */
static void rc_err_state_at_completion(void)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct buf *src = buf_new(200, LW), *dst = buf_new(100, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s, r;
	int i, sa, sb, ret;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	s = sge_of(src, 0, 200);
	r = sge_of(dst, 0, 100);
	for (i = 0; i < ERR_STATE_ROUNDS && !t_failing(); i++) {
		wr = wr_send(1, &s, 1);
		if (post_recv(b, 10, &r, 1) || post(a, &wr))
			return;
		sb = error_then_state(b, b->rcq, 10, IBV_WC_LOC_LEN_ERR, i, "receiver");
		sa = error_then_state(a, a->scq, 1, IBV_WC_REM_INV_REQ_ERR, i, "requester");
		if (sb < 0 || sa < 0)
			return;
		t_check(sb == IBV_QPS_ERR && sa == IBV_QPS_ERR,
			"round %d: at their error completions the receiver was in state %d, "
			"the requester in %d, expected %d", i, sb, sa, IBV_QPS_ERR);
		ret = ibv_modify_qp(b->qp, &reset, IBV_QP_STATE) ?:
		      ibv_modify_qp(a->qp, &reset, IBV_QP_STATE);
		if (ret) {
			t_fail("round %d: ERR->RESET: %s", i, strerror(ret));
			return;
		}
		if (!pair_connect_default(a, b))
			return;
	}
	expect_none(a->scq, 0, "requester's send CQ afterwards");
	expect_none(b->rcq, 0, "receiver's CQ afterwards");
	expect_guards(dst, "receive buffer (the 100 bytes may hold anything)");
}

/* ---- remote access ---- */

/* A 64-byte WRITE into a region of @access, with a stale rkey if @bad_key. */
static void write_denied(int access, bool bad_key)
{
	struct buf *src = buf_new(64, LW), *dst = buf_new(4096, access);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(src->data, 64, 21);
	fill(dst->data, 4096, 22);
	s = sge_of(src, 0, 64);
	wr = wr_rdma(1, IBV_WR_RDMA_WRITE, &s, 1, dst, 100);
	if (bad_key)
		wr.wr.rdma.rkey = stale(dst->mr->rkey);
	if (post(a, &wr))
		return;
	post_trailer(a, 2);
	expect_req_error(a, 1, IBV_WC_REM_ACCESS_ERR);
	expect_data(dst, 22, "target region");
}

static void rc_write_bad_rkey(void)
{
	write_denied(LW | RW, true);
}

static void rc_write_no_right(void)
{
	write_denied(LW | RR | RA, false);
}

static void rc_read_no_right(void)
{
	struct buf *src = buf_new(256, LW | RW | RA), *dst = buf_new(256, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(src->data, 256, 23);
	fill(dst->data, 256, 24);
	s = sge_of(dst, 0, 256);
	wr = wr_rdma(1, IBV_WR_RDMA_READ, &s, 1, src, 0);
	if (post(a, &wr))
		return;
	post_trailer(a, 2);
	expect_req_error(a, 1, IBV_WC_REM_ACCESS_ERR);
	expect_data(dst, 24, "local buffer of the READ");
	expect_data(src, 23, "remote region");
}

/* An atomic FETCH_AND_ADD on a region of @access at byte @off: fails with @status. */
static void atomic_denied(int access, size_t off, enum ibv_wc_status status)
{
	struct buf *res = buf_new(8, LW), *tgt = buf_new(64, access);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;

	if (!res || !tgt || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(tgt->data, 64, 25);
	fill(res->data, 8, 26);
	s = sge_of(res, 0, 8);
	wr = wr_send(1, &s, 1);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = (uintptr_t)tgt->data + off;
	wr.wr.atomic.rkey = tgt->mr->rkey;
	wr.wr.atomic.compare_add = 0x0101010101010101ULL;
	if (post(a, &wr))
		return;
	post_trailer(a, 2);
	expect_req_error(a, 1, status);
	expect_data(tgt, 25, "target region");
	expect_data(res, 26, "result buffer");
}

static void rc_atomic_no_right(void)
{
	atomic_denied(LW | RW | RR, 16, IBV_WC_REM_ACCESS_ERR);
}

static void rc_atomic_misaligned(void)
{
	atomic_denied(LW | RA, 20, IBV_WC_REM_INV_REQ_ERR);
}

/* ---- bounds ---- */

#define BLEN	4096

/* An RDMA @op of @len bytes at @off of a BLEN-byte region (that may be outside it). */
static void bounds(enum ibv_wr_opcode op, long off, size_t len, enum ibv_wc_status status)
{
	struct buf *loc = buf_new(BLEN, LW), *rem = buf_new(BLEN, LW);
	struct ibv_mr *mr = rem ? reg_exact(rem, LW | RW | RR) : NULL;
	char want[BLEN];
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;

	if (!loc || !mr || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(loc->data, BLEN, 27);
	fill(rem->data, BLEN, 28);
	s = sge_of(loc, 0, len);
	wr = wr_rdma(1, op, &s, 1, rem, 0);
	wr.wr.rdma.remote_addr = (uintptr_t)rem->data + off;
	wr.wr.rdma.rkey = mr->rkey;
	if (post(a, &wr))
		return;
	if (status != IBV_WC_SUCCESS) {
		post_trailer(a, 2);
		expect_req_error(a, 1, status);
		expect_data(rem, 28, "remote region and its guards");
		expect_data(loc, 27, "local buffer");
		return;
	}
	expect_wc(a->scq, 1, status, op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
		  IBV_WC_RDMA_WRITE, NULL, "requester");
	if (op == IBV_WR_RDMA_READ) {
		fill(want, BLEN, 27);
		memcpy(want, rem->data + off, len);
		expect_bytes(loc->data, want, BLEN, "local buffer after the READ");
	} else {
		fill(want, BLEN, 28);
		memcpy(want + off, loc->data, len);
		expect_bytes(rem->data, want, BLEN, "remote region after the WRITE");
	}
	expect_guards(rem, "remote region");
	expect_guards(loc, "local buffer");
}

static void rc_bounds_ok(void)
{
	bounds(IBV_WR_RDMA_WRITE, 0, 1, IBV_WC_SUCCESS);
	bounds(IBV_WR_RDMA_WRITE, BLEN - 1, 1, IBV_WC_SUCCESS);
	bounds(IBV_WR_RDMA_WRITE, 0, BLEN, IBV_WC_SUCCESS);
	bounds(IBV_WR_RDMA_READ, 0, 1, IBV_WC_SUCCESS);
	bounds(IBV_WR_RDMA_READ, BLEN - 1, 1, IBV_WC_SUCCESS);
	bounds(IBV_WR_RDMA_READ, 0, BLEN, IBV_WC_SUCCESS);
}

static void rc_write_past_end(void)
{
	bounds(IBV_WR_RDMA_WRITE, BLEN, 1, IBV_WC_REM_ACCESS_ERR);
}

static void rc_write_last_and_past(void)
{
	bounds(IBV_WR_RDMA_WRITE, BLEN - 1, 2, IBV_WC_REM_ACCESS_ERR);
}

static void rc_write_whole_and_one(void)
{
	bounds(IBV_WR_RDMA_WRITE, 0, BLEN + 1, IBV_WC_REM_ACCESS_ERR);
}

static void rc_write_before_start(void)
{
	bounds(IBV_WR_RDMA_WRITE, -1, 2, IBV_WC_REM_ACCESS_ERR);
}

static void rc_read_past_end(void)
{
	bounds(IBV_WR_RDMA_READ, BLEN, 1, IBV_WC_REM_ACCESS_ERR);
}

/* ---- local protection ---- */

static void rc_send_bad_lkey(void)
{
	struct buf *src = buf_new(100, LW), *dst = buf_new(100, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s, r;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	s = sge_of(src, 0, 100);
	s.lkey = stale(s.lkey);
	r = sge_of(dst, 0, 100);
	wr = wr_send(1, &s, 1);
	if (post_recv(b, 10, &r, 1) || post(a, &wr))
		return;
	post_trailer(a, 2);
	expect_req_error(a, 1, IBV_WC_LOC_PROT_ERR);
	expect_none(b->rcq, QUIET_MS, "receiver");
	expect_blank(dst, "receive buffer");
}

static void rc_recv_bad_lkey(void)
{
	struct buf *src = buf_new(100, LW), *dst = buf_new(100, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s, r;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(src->data, 100, 29);
	s = sge_of(src, 0, 100);
	r = sge_of(dst, 0, 100);
	r.lkey = stale(r.lkey);
	wr = wr_send(1, &s, 1);
	if (post_recv(b, 10, &r, 1) || post(a, &wr))
		return;
	post_trailer(a, 2);
	expect_wc(b->rcq, 10, IBV_WC_LOC_PROT_ERR, -1, NULL, "receiver");
	expect_state(b->qp, IBV_QPS_ERR, "receiver");
	expect_req_error(a, 1, IBV_WC_REM_OP_ERR);
	expect_blank(dst, "receive buffer");
}

static void rc_unsignaled_error(void)
{
	struct buf *src = buf_new(100, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;

	if (!src)
		return;
	a = end_new(IBV_QPT_RC, NULL, false);
	b = end_new(IBV_QPT_RC, NULL, false);
	if (!a || !b)
		return;
	if (!pair_connect_default(a, b))
		return;
	s = sge_of(src, 0, 100);
	s.lkey = stale(s.lkey);
	wr = wr_send(1, &s, 1);
	wr.send_flags = 0;
	if (post(a, &wr))
		return;
	expect_wc(a->scq, 1, IBV_WC_LOC_PROT_ERR, -1, NULL, "unsignaled SEND");
	expect_state(a->qp, IBV_QPS_ERR, "requester");
}

/* ---- RNR and retries ---- */

static void rc_rnr_exceeded(void)
{
	struct buf *src = buf_new(100, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;

	if (!src || !pair_retry(&a, &b, 14, 7, 0))
		return;
	s = sge_of(src, 0, 100);
	wr = wr_send(1, &s, 1);
	if (post(a, &wr))
		return;
	post_trailer(a, 2);
	expect_req_error(a, 1, IBV_WC_RNR_RETRY_EXC_ERR);
	expect_none(b->rcq, 0, "receiver");
}

static void rc_rnr_retried(void)
{
	struct buf *src = buf_new(100, LW), *dst = buf_new(100, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_wc wc = { 0 };
	struct ibv_sge s, r;

	if (!src || !dst || !pair_retry(&a, &b, 14, 7, 7))
		return;
	fill(src->data, 100, 30);
	s = sge_of(src, 0, 100);
	r = sge_of(dst, 0, 100);
	wr = wr_send(1, &s, 1);
	if (post(a, &wr))
		return;
	usleep(50000);
	t_check(!poll_n(a->scq, &wc, 1, 0), "completed (%s) before any receive was posted",
		ibv_wc_status_str(wc.status));
	if (post_recv(b, 10, &r, 1))
		return;
	expect_wc(b->rcq, 10, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receiver");
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "sender");
	expect_data(dst, 30, "received");
}

/* What "rdma -dd resource show qp" says of the requester, and its wire side. */
enum { RQ_SENDS, RQ_RNR_WAIT, RQ_RNR_LEFT, RQ_TIMER, RQ_NEXT, RQ_UNA, RQ_HI, RQ_N };
static const char *const rq_names[RQ_N] = {
	"sends", "rnr_wait", "rnr_left", "timer_ms", "next_psn", "una_psn", "hi_psn",
};

static bool rq_read(const struct end *e, long long *v)
{
	int ret = res_qp_attrs(e->qp->qp_num, rq_names, v, RQ_N);

	t_check(ret == 1, "QP %u: %s", e->qp->qp_num,
		ret ? "rdma -dd resource show qp failed" : "not listed");
	return ret == 1;
}

static bool rnr_waiting(const struct end *e, long long *v)
{
	return res_qp_attrs(e->qp->qp_num, rq_names, v, RQ_N) == 1 && v[RQ_RNR_WAIT] == 1;
}

/*
 * A SEND in an RNR wait, and after: rdma resource show qp -dd tells what
 * the requester waits for. The responder's min_rnr_timer is 31 (491.52
 * ms), so the wait is long enough to be seen. The ACK timeout is 18 (1.07
 * s) rather than the suites' 67 ms: each RNR retry waits for its NAK, and
 * eight NAKs late by 67 ms (a TCG guest on a host that stalls) would end
 * the QP in RETRY_EXC_ERR, never again in a wait. Each rdma call takes 0.1
 * s or more here, so the wait is looked for over 5 s of the clock, not a
 * count of calls.
 */
static void rc_rnr_shown(void)
{
	struct buf *src = buf_new(100, LW), *dst = buf_new(100, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct conn ca, cb;
	struct ibv_sge s, r;
	long long v[RQ_N];
	long deadline;
	int i;

	if (!is_stag()) {
		case_skip("the driver attributes are stag's");
		return;
	}
	if (!src || !dst || !pair_ends(IBV_QPT_RC, &a, &b, &ca, &cb))
		return;
	cb.min_rnr_timer = 31;
	ca.timeout = 18;
	if (!pair_connect(a, &ca, b, &cb))
		return;
	if (!rq_read(a, v))
		return;
	t_check(v[RQ_SENDS] == 0 && v[RQ_RNR_WAIT] == 0 && v[RQ_RNR_LEFT] == 7 &&
		v[RQ_TIMER] == -1, "idle: sends %lld rnr_wait %lld rnr_left %lld timer_ms %lld, "
		"expected 0 0 7 and none", v[RQ_SENDS], v[RQ_RNR_WAIT], v[RQ_RNR_LEFT],
		v[RQ_TIMER]);
	fill(src->data, 100, 31);
	s = sge_of(src, 0, 100);
	wr = wr_send(1, &s, 1);
	if (post(a, &wr))
		return;
	deadline = now_ms() + 5000;
	for (i = 1; !rnr_waiting(a, v) && now_ms() < deadline; i++)
		usleep(10000);
	if (v[RQ_RNR_WAIT] != 1) {
		struct ibv_wc wc = { .status = IBV_WC_SUCCESS };

		t_fail("no RNR wait shown in 5 s, %d reads: the last sends %lld rnr_wait %lld "
		       "rnr_left %lld timer_ms %lld next_psn %#llx una_psn %#llx hi_psn %#llx; "
		       "the sender's completion: %s", i, v[RQ_SENDS], v[RQ_RNR_WAIT],
		       v[RQ_RNR_LEFT], v[RQ_TIMER], v[RQ_NEXT], v[RQ_UNA], v[RQ_HI],
		       poll_n(a->scq, &wc, 1, 0) ? ibv_wc_status_str(wc.status) : "none");
		return;
	}
	t_check(v[RQ_SENDS] == 1, "waiting: sends %lld, expected 1", v[RQ_SENDS]);
	t_check(v[RQ_RNR_LEFT] == 7, "waiting: rnr_left %lld, expected 7 (for ever)",
		v[RQ_RNR_LEFT]);
	/* 491.52 ms, rounded up to jiffies, and one more. */
	t_check(v[RQ_TIMER] >= 0 && v[RQ_TIMER] <= 520, "waiting: timer_ms %lld, expected "
		"0 to 520", v[RQ_TIMER]);
	if (stag_wire())
		t_check(v[RQ_UNA] == ((v[RQ_NEXT] - 1) & 0xffffff) && v[RQ_HI] == v[RQ_NEXT],
			"waiting on the wire: una_psn %#llx hi_psn %#llx next_psn %#llx, expected "
			"the SEND's one PSN sent and not acknowledged", v[RQ_UNA], v[RQ_HI],
			v[RQ_NEXT]);
	r = sge_of(dst, 0, 100);
	if (post_recv(b, 10, &r, 1))
		return;
	expect_wc(b->rcq, 10, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receiver");
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "sender");
	expect_data(dst, 31, "received");
	if (!rq_read(a, v))
		return;
	t_check(v[RQ_SENDS] == 0 && v[RQ_RNR_WAIT] == 0 && v[RQ_TIMER] == -1,
		"done: sends %lld rnr_wait %lld timer_ms %lld, expected 0 0 and none",
		v[RQ_SENDS], v[RQ_RNR_WAIT], v[RQ_TIMER]);
	if (stag_wire())
		t_check(v[RQ_UNA] >= 0 && v[RQ_UNA] == v[RQ_HI] && v[RQ_HI] == v[RQ_NEXT],
			"done on the wire: una_psn %#llx hi_psn %#llx next_psn %#llx, expected "
			"all three equal", v[RQ_UNA], v[RQ_HI], v[RQ_NEXT]);
	else
		t_check(v[RQ_UNA] == -1, "over loopback: una_psn %#llx shown", v[RQ_UNA]);
}

/* SENDs to @dest_qpn with timeout 8 (about 1 ms) and retry_cnt 1. */
static void retry_exceeded(struct end *a, uint32_t dest_qpn)
{
	struct buf *src = buf_new(100, LW);
	struct end peer = { 0 };
	struct ibv_qp fake = { .qp_num = dest_qpn };
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct conn c;

	if (!src)
		return;
	peer.qp = &fake;
	c = conn_default(&peer);
	c.timeout = 8;
	c.retry_cnt = 1;
	c.sq_psn = 0x100;
	if (!connect_end(a, &c))
		return;
	s = sge_of(src, 0, 100);
	wr = wr_send(1, &s, 1);
	if (post(a, &wr))
		return;
	post_trailer(a, 2);
	expect_req_error(a, 1, IBV_WC_RETRY_EXC_ERR);
}

static void rc_retry_no_qp(void)
{
	struct end *a = end_new(IBV_QPT_RC, NULL, true);

	/* QP numbers are 24 bits; none this high is handed out by a fresh device. */
	if (a)
		retry_exceeded(a, 0xfffff3);
}

static void rc_retry_peer_init(void)
{
	struct end *a = end_new(IBV_QPT_RC, NULL, true), *b = end_new(IBV_QPT_RC, NULL, true);
	int ret;

	if (!a || !b)
		return;
	ret = qp_to_init(b->qp, LW | RW);
	t_check(!ret, "peer to INIT: %s", strerror(ret));
	if (!ret)
		retry_exceeded(a, b->qp->qp_num);
	expect_none(b->rcq, 0, "the peer in INIT");
	expect_state(b->qp, IBV_QPS_INIT, "the peer");
}

/* ---- flushing ---- */

/*
 * Four receives and, behind a SEND that fails (stale lkey), three good
 * ones: the receives and the three SENDs are flushed, in order, and so
 * are a receive and a SEND posted afterwards.
 */
static void rc_flush(void)
{
	struct buf *src = buf_new(100, LW), *dst = buf_new(100, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s, bad, r;
	int i;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	s = sge_of(src, 0, 100);
	bad = s;
	bad.lkey = stale(s.lkey);
	r = sge_of(dst, 0, 100);
	for (i = 0; i < 4; i++)
		if (post_recv(a, 100 + i, &r, 1) || post_recv(b, 200 + i, &r, 1))
			return;
	wr = wr_send(1, &bad, 1);
	if (post(a, &wr))
		return;
	for (i = 2; i <= 4; i++) {
		wr = wr_send(i, &s, 1);
		if (post(a, &wr))
			return;
	}
	if (expect_wc(a->scq, 1, IBV_WC_LOC_PROT_ERR, -1, NULL, "the failing SEND"))
		expect_flushed(a->scq, 2, 3, "the SENDs behind it");
	expect_state(a->qp, IBV_QPS_ERR, "requester");
	expect_flushed(a->rcq, 100, 4, "requester's receives");
	if (!post_recv(a, 104, &r, 1))
		expect_flushed(a->rcq, 104, 1, "a receive posted in ERR");
	wr = wr_send(5, &s, 1);
	if (!post(a, &wr))
		expect_flushed(a->scq, 5, 1, "a SEND posted in ERR");
	expect_none(a->scq, 0, "requester's send CQ afterwards");
	expect_none(a->rcq, 0, "requester's receive CQ afterwards");
	expect_none(b->rcq, QUIET_MS, "the peer");
}

const struct qp_case err_cases[] = {
	{ "RC SEND larger than the receive: IBV_WC_LOC_LEN_ERR there, IBV_WC_REM_INV_REQ_ERR here",
	  rc_len_err },
	{ "RC error completions, 100 rounds: the QP is in ERR when one is polled, on both sides",
	  rc_err_state_at_completion },
	{ "RC RDMA_WRITE with a stale rkey: IBV_WC_REM_ACCESS_ERR, nothing written",
	  rc_write_bad_rkey },
	{ "RC RDMA_WRITE to a region without REMOTE_WRITE: IBV_WC_REM_ACCESS_ERR",
	  rc_write_no_right },
	{ "RC RDMA_READ of a region without REMOTE_READ: IBV_WC_REM_ACCESS_ERR",
	  rc_read_no_right },
	{ "RC atomic on a region without REMOTE_ATOMIC: IBV_WC_REM_ACCESS_ERR",
	  rc_atomic_no_right },
	{ "RC atomic at remote_addr % 8 == 4: IBV_WC_REM_INV_REQ_ERR, target unchanged",
	  rc_atomic_misaligned },
	{ "RC RDMA_WRITE and READ of a region's first byte, last byte, all of it: success",
	  rc_bounds_ok },
	{ "RC RDMA_WRITE of the byte past a region's end: IBV_WC_REM_ACCESS_ERR",
	  rc_write_past_end },
	{ "RC RDMA_WRITE of a region's last byte and the one past it: IBV_WC_REM_ACCESS_ERR",
	  rc_write_last_and_past },
	{ "RC RDMA_WRITE of a whole region and one byte more: IBV_WC_REM_ACCESS_ERR",
	  rc_write_whole_and_one },
	{ "RC RDMA_WRITE of the byte before a region and its first: IBV_WC_REM_ACCESS_ERR",
	  rc_write_before_start },
	{ "RC RDMA_READ of the byte past a region's end: IBV_WC_REM_ACCESS_ERR",
	  rc_read_past_end },
	{ "RC SEND with a stale lkey: IBV_WC_LOC_PROT_ERR, nothing received", rc_send_bad_lkey },
	{ "RC SEND into a stale lkey: IBV_WC_LOC_PROT_ERR there, IBV_WC_REM_OP_ERR here",
	  rc_recv_bad_lkey },
	{ "RC unsignaled SEND that fails completes with its error", rc_unsignaled_error },
	{ "RC SEND with no receive and rnr_retry 0: IBV_WC_RNR_RETRY_EXC_ERR", rc_rnr_exceeded },
	{ "RC SEND with rnr_retry 7 completes once a receive is posted 50 ms later",
	  rc_rnr_retried },
	{ "rdma -dd resource show qp: an RC SEND in its RNR wait (rnr_wait 1, timer_ms <= 520, "
	  "sends 1; on the wire one PSN unacknowledged), and after it (all clear)", rc_rnr_shown },
	{ "RC SEND to a QP number that does not exist (timeout 8, retry_cnt 1): RETRY_EXC_ERR",
	  rc_retry_no_qp },
	{ "RC SEND to a peer left in INIT (timeout 8, retry_cnt 1): RETRY_EXC_ERR",
	  rc_retry_peer_init },
	{ "RC after an error: QP in ERR, sends and receives flushed in order, later posts too",
	  rc_flush },
	{ NULL }
};
