// SPDX-License-Identifier: GPL-2.0
/*
 * qp_test's cases of the verbs around the data path: completion channels
 * and solicited events, the QP state machine and its required and
 * allowed attributes, what ibv_query_qp reads back, and the extended
 * interfaces (ibv_qp_ex work request builders, ibv_cq_ex polling).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qp.h"

/* ---- completion channel ---- */

static bool channel_fires(struct ibv_comp_channel *ch, struct ibv_cq *cq, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (poll(&p, 1, ms) != 1)
		return false;
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx)) {
		t_fail("ibv_get_cq_event: %s", strerror(errno));
		return false;
	}
	ibv_ack_cq_events(ev_cq, 1);
	t_check(ev_cq == cq, "the event is for another CQ");
	t_check(ev_ctx == cq->cq_context, "the event's context is not the CQ's");
	return true;
}

static void send_one(struct end *a, struct ibv_sge *s, uint64_t wr_id, int flags)
{
	struct ibv_send_wr wr = wr_send(wr_id, s, 1);

	wr.send_flags |= flags;
	if (!post(a, &wr))
		expect_wc(a->scq, wr_id, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "sender");
}

static void cq_channel(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct buf *src = buf_new(64, LW), *dst = buf_new(4 * 64, LW);
	struct ibv_cq *cq = NULL;
	struct ibv_sge s, r;
	struct end *a, *b;
	int i, ret;

	if (!ch) {
		t_fail("ibv_create_comp_channel: %s", strerror(errno));
		return;
	}
	track(K_CHANNEL, ch, 0);
	cq = ibv_create_cq(ctx, 2 * DEPTH, NULL, ch, 0);
	if (!cq) {
		t_fail("ibv_create_cq on a channel: %s", strerror(errno));
		return;
	}
	track(K_CQ, cq, 0);
	a = end_new(IBV_QPT_RC, NULL, true);
	b = end_on(IBV_QPT_RC, cq_new(), cq, NULL, true);
	if (!src || !dst || !a || !b)
		return;
	if (!pair_connect_default(a, b))
		return;
	s = sge_of(src, 0, 64);
	for (i = 0; i < 4; i++) {
		r = sge_of(dst, 64 * i, 64);
		if (post_recv(b, 10 + i, &r, 1))
			return;
	}

	ret = ibv_req_notify_cq(cq, 0);
	t_check(!ret, "ibv_req_notify_cq: %s", strerror(ret));
	t_check(!channel_fires(ch, cq, QUIET_MS), "an event before any completion");
	send_one(a, &s, 1, 0);
	t_check(channel_fires(ch, cq, WAIT_MS), "no event for a completion on an armed CQ");
	expect_wc(cq, 10, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "the completion of the event");

	send_one(a, &s, 2, 0);
	t_check(!channel_fires(ch, cq, QUIET_MS), "an event on a CQ not armed again");
	expect_wc(cq, 11, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "a completion without event");

	ret = ibv_req_notify_cq(cq, 1);
	t_check(!ret, "ibv_req_notify_cq solicited only: %s", strerror(ret));
	send_one(a, &s, 3, 0);
	t_check(!channel_fires(ch, cq, QUIET_MS), "an event for an unsolicited SEND");
	expect_wc(cq, 12, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "an unsolicited SEND");
	send_one(a, &s, 4, IBV_SEND_SOLICITED);
	t_check(channel_fires(ch, cq, WAIT_MS), "no event for a solicited SEND");
	expect_wc(cq, 13, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "a solicited SEND");
}

/* ---- the state machine ---- */

static const struct ibv_qp_attr rts_attr = {
	.qp_state = IBV_QPS_RTS, .sq_psn = 1, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	.max_rd_atomic = 1,
};

#define RTS_MASK	(IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
			 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)
#define RTR_MASK	(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
			 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define INIT_MASK	(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)

static struct ibv_qp_attr rtr_attr(uint32_t dest)
{
	return (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = port_attr.active_mtu, .dest_qp_num = dest,
		.rq_psn = 1, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .sgid_index = gid_index, .hop_limit = 64 } },
	};
}

static const struct ibv_qp_attr init_attr = {
	.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = LW | RW,
};

/* A modify that must fail with EINVAL and leave the QP in @state. */
static void expect_einval(struct ibv_qp *qp, struct ibv_qp_attr a, int mask,
			  enum ibv_qp_state state, const char *what)
{
	int ret = ibv_modify_qp(qp, &a, mask);

	t_check(ret == EINVAL, "%s: %s, expected EINVAL", what, ret ? strerror(ret) : "success");
	expect_state(qp, state, what);
}

static bool modify_ok(struct ibv_qp *qp, struct ibv_qp_attr a, int mask, const char *what)
{
	int ret = ibv_modify_qp(qp, &a, mask);

	t_check(!ret, "%s: %s", what, strerror(ret));
	return !ret;
}

static void qp_bad_transitions(void)
{
	struct end *e = end_new(IBV_QPT_RC, NULL, true);
	struct ibv_qp_attr a;

	if (!e)
		return;
	expect_einval(e->qp, rts_attr, RTS_MASK, IBV_QPS_RESET, "RESET->RTS");
	expect_einval(e->qp, rtr_attr(e->qp->qp_num), RTR_MASK, IBV_QPS_RESET, "RESET->RTR");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_SQD };
	expect_einval(e->qp, a, IBV_QP_STATE, IBV_QPS_RESET, "RESET->SQD");
	if (!modify_ok(e->qp, init_attr, INIT_MASK, "RESET->INIT"))
		return;
	expect_einval(e->qp, rts_attr, RTS_MASK, IBV_QPS_INIT, "INIT->RTS");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_SQD };
	expect_einval(e->qp, a, IBV_QP_STATE, IBV_QPS_INIT, "INIT->SQD");
	if (!modify_ok(e->qp, init_attr, INIT_MASK, "INIT->INIT") ||
	    !modify_ok(e->qp, rtr_attr(e->qp->qp_num), RTR_MASK, "INIT->RTR"))
		return;
	expect_einval(e->qp, init_attr, INIT_MASK, IBV_QPS_RTR, "RTR->INIT");
	if (!modify_ok(e->qp, rts_attr, RTS_MASK, "RTR->RTS"))
		return;
	expect_einval(e->qp, rtr_attr(e->qp->qp_num), RTR_MASK, IBV_QPS_RTS, "RTS->RTR");
}

static void qp_bad_attrs(void)
{
	struct end *e = end_new(IBV_QPT_RC, NULL, true), *u = end_new(IBV_QPT_UD, NULL, true);
	struct ibv_qp_attr ud_init = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };

	if (!e || !u)
		return;
	expect_einval(e->qp, init_attr, INIT_MASK & ~IBV_QP_PORT, IBV_QPS_RESET,
		      "RESET->INIT without IBV_QP_PORT");
	expect_einval(e->qp, init_attr, INIT_MASK & ~IBV_QP_ACCESS_FLAGS, IBV_QPS_RESET,
		      "RESET->INIT without IBV_QP_ACCESS_FLAGS");
	expect_einval(e->qp, init_attr, INIT_MASK | IBV_QP_SQ_PSN, IBV_QPS_RESET,
		      "RESET->INIT with IBV_QP_SQ_PSN, which it does not take");
	expect_einval(u->qp, ud_init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT,
		      IBV_QPS_RESET, "UD RESET->INIT without IBV_QP_QKEY");
	if (!modify_ok(e->qp, init_attr, INIT_MASK, "RESET->INIT"))
		return;
	expect_einval(e->qp, rtr_attr(e->qp->qp_num), RTR_MASK & ~IBV_QP_AV, IBV_QPS_INIT,
		      "INIT->RTR without IBV_QP_AV");
	expect_einval(e->qp, rtr_attr(e->qp->qp_num), RTR_MASK & ~IBV_QP_DEST_QPN, IBV_QPS_INIT,
		      "INIT->RTR without IBV_QP_DEST_QPN");
	expect_einval(e->qp, rtr_attr(e->qp->qp_num), RTR_MASK & ~IBV_QP_PATH_MTU, IBV_QPS_INIT,
		      "INIT->RTR without IBV_QP_PATH_MTU");
	expect_einval(e->qp, rtr_attr(e->qp->qp_num), RTR_MASK | IBV_QP_SQ_PSN, IBV_QPS_INIT,
		      "INIT->RTR with IBV_QP_SQ_PSN, which it does not take");
	if (!modify_ok(e->qp, rtr_attr(e->qp->qp_num), RTR_MASK, "INIT->RTR"))
		return;
	expect_einval(e->qp, rts_attr, RTS_MASK & ~IBV_QP_TIMEOUT, IBV_QPS_RTR,
		      "RTR->RTS without IBV_QP_TIMEOUT");
	expect_einval(e->qp, rts_attr, RTS_MASK & ~IBV_QP_SQ_PSN, IBV_QPS_RTR,
		      "RTR->RTS without IBV_QP_SQ_PSN");
	modify_ok(e->qp, rts_attr, RTS_MASK, "RTR->RTS");
}

static void qp_mtu_too_big(void)
{
	struct end *e = end_new(IBV_QPT_RC, NULL, true);
	struct ibv_qp_attr a;

	if (port_attr.active_mtu == IBV_MTU_4096) {
		case_skip("the port's active MTU is 4096, the largest there is");
		return;
	}
	if (!e || !modify_ok(e->qp, init_attr, INIT_MASK, "RESET->INIT"))
		return;
	a = rtr_attr(e->qp->qp_num);
	a.path_mtu = port_attr.active_mtu + 1;
	expect_einval(e->qp, a, RTR_MASK, IBV_QPS_INIT, "INIT->RTR with path_mtu above active");
	a.path_mtu = port_attr.active_mtu;
	modify_ok(e->qp, a, RTR_MASK, "INIT->RTR with the active MTU");
}

/* ---- ibv_query_qp ---- */

static void attr_eq(const char *name, ull got, ull want)
{
	t_check(got == want, "%s %llu, expected %llu", name, got, want);
}

static void qp_query(void)
{
	struct end *e = end_new(IBV_QPT_RC, NULL, false), *peer = end_new(IBV_QPT_RC, NULL, true);
	struct ibv_qp_attr want, got;
	struct ibv_qp_init_attr init;
	int ret;

	if (!e || !peer)
		return;
	want = rtr_attr(peer->qp->qp_num);
	want.port_num = 1;
	want.qp_access_flags = LW | RW | RR;
	want.path_mtu = IBV_MTU_512;
	want.rq_psn = 0x654321;
	want.min_rnr_timer = 12;
	want.max_dest_rd_atomic = dev_attr.max_qp_rd_atom >= 2 ? 2 : 1;
	want.sq_psn = 0x123456;
	want.timeout = 17;
	want.retry_cnt = 5;
	want.rnr_retry = 6;
	want.max_rd_atomic = dev_attr.max_qp_init_rd_atom >= 2 ? 2 : 1;
	want.qp_state = IBV_QPS_INIT;
	if (!modify_ok(e->qp, want, INIT_MASK, "RESET->INIT"))
		return;
	want.qp_state = IBV_QPS_RTR;
	if (!modify_ok(e->qp, want, RTR_MASK, "INIT->RTR"))
		return;
	want.qp_state = IBV_QPS_RTS;
	if (!modify_ok(e->qp, want, RTS_MASK, "RTR->RTS"))
		return;

	memset(&got, 0xee, sizeof(got));
	ret = ibv_query_qp(e->qp, &got, INIT_MASK | RTR_MASK | RTS_MASK, &init);
	if (ret) {
		t_fail("ibv_query_qp: %s", strerror(ret));
		return;
	}
	attr_eq("qp_state", got.qp_state, want.qp_state);
	attr_eq("qp_access_flags", got.qp_access_flags, want.qp_access_flags);
	attr_eq("pkey_index", got.pkey_index, want.pkey_index);
	attr_eq("port_num", got.port_num, want.port_num);
	attr_eq("path_mtu", got.path_mtu, want.path_mtu);
	attr_eq("dest_qp_num", got.dest_qp_num, want.dest_qp_num);
	attr_eq("rq_psn", got.rq_psn, want.rq_psn);
	attr_eq("sq_psn", got.sq_psn, want.sq_psn);
	attr_eq("min_rnr_timer", got.min_rnr_timer, want.min_rnr_timer);
	attr_eq("max_dest_rd_atomic", got.max_dest_rd_atomic, want.max_dest_rd_atomic);
	attr_eq("max_rd_atomic", got.max_rd_atomic, want.max_rd_atomic);
	attr_eq("timeout", got.timeout, want.timeout);
	attr_eq("retry_cnt", got.retry_cnt, want.retry_cnt);
	attr_eq("rnr_retry", got.rnr_retry, want.rnr_retry);
	attr_eq("ah_attr.is_global", got.ah_attr.is_global, want.ah_attr.is_global);
	attr_eq("ah_attr.port_num", got.ah_attr.port_num, want.ah_attr.port_num);
	attr_eq("ah_attr.grh.sgid_index", got.ah_attr.grh.sgid_index, want.ah_attr.grh.sgid_index);
	/* Not hop_limit: for RoCE the core replaces it with the route's. */
	t_check(!memcmp(&got.ah_attr.grh.dgid, &gid, sizeof(gid)), "ah_attr.grh.dgid differs");
	t_check(init.qp_type == IBV_QPT_RC, "qp_type %d", init.qp_type);
	t_check(!init.sq_sig_all, "sq_sig_all %d, expected 0", init.sq_sig_all);
	t_check(init.send_cq == e->scq && init.recv_cq == e->rcq, "not the CQs it was created on");
	t_check(init.cap.max_send_wr >= DEPTH && init.cap.max_recv_wr >= DEPTH,
		"max_send_wr %u, max_recv_wr %u, asked for %d", init.cap.max_send_wr,
		init.cap.max_recv_wr, DEPTH);
	t_check(init.cap.max_send_sge >= MAX_SGE && init.cap.max_recv_sge >= MAX_SGE,
		"max_send_sge %u, max_recv_sge %u, asked for %d", init.cap.max_send_sge,
		init.cap.max_recv_sge, MAX_SGE);
	t_check(init.cap.max_inline_data >= MAX_INLINE, "max_inline_data %u, asked for %d",
		init.cap.max_inline_data, MAX_INLINE);
}

/* Moved to ERR by hand: its receives are flushed; back to RESET, it connects again. */
static void qp_reset_reconnect(void)
{
	struct buf *src = buf_new(64, LW), *dst = buf_new(64, LW);
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR }, reset = { .qp_state = IBV_QPS_RESET };
	struct end *a, *b;
	struct ibv_sge s, r;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	r = sge_of(dst, 0, 64);
	if (post_recv(b, 10, &r, 1) || post_recv(b, 11, &r, 1) ||
	    !modify_ok(b->qp, err, IBV_QP_STATE, "RTS->ERR"))
		return;
	expect_flushed(b->rcq, 10, 2, "receives of a QP moved to ERR");
	if (!modify_ok(b->qp, reset, IBV_QP_STATE, "ERR->RESET") ||
	    !modify_ok(a->qp, reset, IBV_QP_STATE, "RTS->RESET"))
		return;
	expect_state(b->qp, IBV_QPS_RESET, "after ERR->RESET");
	if (!pair_connect_default(a, b))
		return;
	fill(src->data, 64, 60);
	s = sge_of(src, 0, 64);
	if (post_recv(b, 12, &r, 1))
		return;
	send_one(a, &s, 1, 0);
	expect_wc(b->rcq, 12, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receiver after the reconnect");
	expect_data(dst, 60, "received after the reconnect");
	expect_none(b->rcq, 0, "receiver afterwards");
}

/* ---- ibv_qp_ex ---- */

/* An RC QP for the ibv_wr_*() of qp_ex(). */
static struct end *end_ex(void)
{
	return end_ops(IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				   IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
				   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
}

static void qp_ex(void)
{
	struct buf *src = buf_new(1024, LW), *dst = buf_new(1024, LW | RW | RR | RA);
	struct buf *loc = buf_new(512, LW);
	struct end *a = end_ex(), *b = end_new(IBV_QPT_RC, NULL, true);
	struct ibv_sge r[3], two[2];
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	char inl[32], want[1024];
	uint64_t old, v;
	int i, ret;

	if (!src || !dst || !loc || !a || !b)
		return;
	if (!pair_connect_default(a, b))
		return;
	x = ibv_qp_to_qp_ex(a->qp);
	if (!x) {
		t_fail("ibv_qp_to_qp_ex: NULL");
		return;
	}
	fill(src->data, 1024, 61);
	fill(dst->data, 1024, 62);
	fill(inl, sizeof(inl), 63);
	for (i = 0; i < 3; i++) {
		r[i] = sge_of(loc, 128 * i, 128);
		if (post_recv(b, 10 + i, &r[i], 1))
			return;
	}

	/* An aborted batch posts nothing. */
	ibv_wr_start(x);
	x->wr_id = 99;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, src->mr->lkey, (uintptr_t)src->data, 16);
	ibv_wr_abort(x);
	expect_none(a->scq, QUIET_MS, "after ibv_wr_abort");

	old = *(uint64_t *)(dst->data + 512);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, src->mr->lkey, (uintptr_t)src->data, 100);
	x->wr_id = 2;
	ibv_wr_rdma_write(x, dst->mr->rkey, (uintptr_t)dst->data);
	ibv_wr_set_sge(x, src->mr->lkey, (uintptr_t)src->data + 100, 200);
	x->wr_id = 3;
	ibv_wr_send_imm(x, htonl(IMM));
	two[0] = sge_of(src, 300, 50);
	two[1] = sge_of(src, 400, 50);
	ibv_wr_set_sge_list(x, 2, two);
	x->wr_id = 4;
	ibv_wr_rdma_read(x, dst->mr->rkey, (uintptr_t)dst->data + 256);
	ibv_wr_set_sge(x, src->mr->lkey, (uintptr_t)src->data + 600, 64);
	x->wr_id = 5;
	ibv_wr_atomic_fetch_add(x, dst->mr->rkey, (uintptr_t)dst->data + 512, 5);
	ibv_wr_set_sge(x, src->mr->lkey, (uintptr_t)src->data + 704, 8);
	x->wr_id = 6;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, inl, sizeof(inl));
	ret = ibv_wr_complete(x);
	if (ret) {
		t_fail("ibv_wr_complete: %s", strerror(ret));
		return;
	}
	memset(inl, 0, sizeof(inl));

	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "ibv_wr_send");
	expect_wc(a->scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "ibv_wr_rdma_write");
	expect_wc(a->scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "ibv_wr_send_imm");
	expect_wc(a->scq, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, NULL, "ibv_wr_rdma_read");
	expect_wc(a->scq, 5, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, NULL, "ibv_wr_atomic_fetch_add");
	expect_wc(a->scq, 6, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "inline ibv_wr_send");
	if (expect_wc(b->rcq, 10, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "receive of the SEND"))
		t_check(wc.byte_len == 100, "byte_len %u, expected 100", wc.byte_len);
	if (expect_wc(b->rcq, 11, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "receive of the SEND_IMM")) {
		t_check(wc.byte_len == 100, "byte_len %u, expected 100", wc.byte_len);
		t_check((wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == IMM,
			"imm %#x (flags %#x), expected %#x", ntohl(wc.imm_data), wc.wc_flags, IMM);
	}
	expect_wc(b->rcq, 12, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receive of the inline SEND");

	expect_bytes(loc->data, src->data, 100, "sent");
	expect_bytes(loc->data + 128, src->data + 300, 50, "first SGE of the SEND_IMM");
	expect_bytes(loc->data + 178, src->data + 400, 50, "second SGE of the SEND_IMM");
	fill(want, sizeof(inl), 63);
	expect_bytes(loc->data + 256, want, sizeof(inl), "inline data");
	expect_bytes(dst->data, src->data + 100, 200, "written");
	fill(want, 1024, 62);
	expect_bytes(src->data + 600, want + 256, 64, "read");
	memcpy(&v, src->data + 704, 8);
	t_check(v == old, "fetch_add returned %#llx, expected %#llx", (ull)v, (ull)old);
	memcpy(&v, dst->data + 512, 8);
	t_check(v == old + 5, "fetch_add left %#llx, expected %#llx", (ull)v, (ull)(old + 5));
	expect_guards(dst, "remote region");
	expect_guards(loc, "receive buffers");
}

/* ---- ibv_cq_ex ---- */

static struct ibv_cq_ex *cq_ex_new(void)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 2 * DEPTH,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
			    IBV_WC_EX_WITH_SRC_QP,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);

	if (!cq)
		t_fail("ibv_create_cq_ex: %s", strerror(errno));
	else
		track(K_CQ, ibv_cq_ex_to_cq(cq), 0);
	return cq;
}

struct wc_ex {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, qp_num, imm;
	unsigned int flags;
};

/* Up to @n completions of @cq through start/next/end_poll within about @ms. */
static int poll_ex(struct ibv_cq_ex *cq, struct wc_ex *w, int n, int ms)
{
	struct ibv_poll_cq_attr pa = { 0 };
	long end = now_ms() + ms;
	int got = 0, ret;

	/*
	 * By the clock, not by tries: a usleep(100) takes over a millisecond
	 * under TCG, and ms * 10 tries watched QUIET_MS for 7 s.
	 */
	while (got < n && now_ms() < end) {
		ret = ibv_start_poll(cq, &pa);
		if (ret == ENOENT) {
			usleep(100);
			continue;
		}
		if (ret) {
			t_fail("ibv_start_poll: %s", strerror(ret));
			break;
		}
		do {
			w[got] = (struct wc_ex){
				.wr_id = cq->wr_id, .status = cq->status,
				.opcode = ibv_wc_read_opcode(cq),
				.byte_len = ibv_wc_read_byte_len(cq),
				.qp_num = ibv_wc_read_qp_num(cq),
				.flags = ibv_wc_read_wc_flags(cq),
			};
			if (w[got].flags & IBV_WC_WITH_IMM)
				w[got].imm = ntohl(ibv_wc_read_imm_data(cq));
			got++;
		} while (got < n && !(ret = ibv_next_poll(cq)));
		ibv_end_poll(cq);
		if (ret && ret != ENOENT) {
			t_fail("ibv_next_poll: %s", strerror(ret));
			break;
		}
	}
	return got;
}

static void cq_ex(void)
{
	struct ibv_cq_ex *scq = cq_ex_new(), *rcq = cq_ex_new();
	struct buf *src = buf_new(256, LW), *dst = buf_new(256, LW | RW);
	struct ibv_sge s, r[2];
	struct ibv_send_wr wr;
	struct wc_ex w[4];
	struct end *a, *b;
	int i;

	if (!scq || !rcq || !src || !dst)
		return;
	a = end_on(IBV_QPT_RC, ibv_cq_ex_to_cq(scq), cq_new(), NULL, true);
	b = end_on(IBV_QPT_RC, cq_new(), ibv_cq_ex_to_cq(rcq), NULL, true);
	if (!a || !b)
		return;
	if (!pair_connect_default(a, b))
		return;
	fill(src->data, 256, 64);
	for (i = 0; i < 2; i++) {
		r[i] = sge_of(dst, 128 * i, 128);
		if (post_recv(b, 10 + i, &r[i], 1))
			return;
	}
	s = sge_of(src, 0, 64);
	wr = wr_send(1, &s, 1);
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(IMM);
	if (post(a, &wr))
		return;
	s = sge_of(src, 64, 32);
	wr = wr_rdma(2, IBV_WR_RDMA_WRITE, &s, 1, dst, 200);
	if (post(a, &wr))
		return;
	s = sge_of(src, 128, 50);
	wr = wr_send(3, &s, 1);
	if (post(a, &wr))
		return;

	if (poll_ex(scq, w, 3, WAIT_MS) != 3) {
		t_fail("fewer than 3 send completions through ibv_start_poll");
		return;
	}
	for (i = 0; i < 3; i++) {
		static const enum ibv_wc_opcode op[] = { IBV_WC_SEND, IBV_WC_RDMA_WRITE,
							 IBV_WC_SEND };

		t_check(w[i].wr_id == (uint64_t)i + 1 && w[i].status == IBV_WC_SUCCESS &&
			w[i].opcode == op[i] && w[i].qp_num == a->qp->qp_num,
			"send completion %d: wr_id %llu status %s opcode %d qp_num %#x", i,
			(ull)w[i].wr_id, ibv_wc_status_str(w[i].status), w[i].opcode, w[i].qp_num);
	}
	if (poll_ex(rcq, w, 2, WAIT_MS) != 2) {
		t_fail("fewer than 2 receive completions through ibv_start_poll");
		return;
	}
	t_check(w[0].wr_id == 10 && w[0].status == IBV_WC_SUCCESS && w[0].opcode == IBV_WC_RECV &&
		w[0].byte_len == 64 && (w[0].flags & IBV_WC_WITH_IMM) && w[0].imm == IMM &&
		w[0].qp_num == b->qp->qp_num,
		"receive 1: wr_id %llu status %s opcode %d byte_len %u flags %#x imm %#x qp %#x",
		(ull)w[0].wr_id, ibv_wc_status_str(w[0].status), w[0].opcode, w[0].byte_len,
		w[0].flags, w[0].imm, w[0].qp_num);
	t_check(w[1].wr_id == 11 && w[1].status == IBV_WC_SUCCESS && w[1].opcode == IBV_WC_RECV &&
		w[1].byte_len == 50 && !(w[1].flags & IBV_WC_WITH_IMM),
		"receive 2: wr_id %llu status %s opcode %d byte_len %u flags %#x",
		(ull)w[1].wr_id, ibv_wc_status_str(w[1].status), w[1].opcode, w[1].byte_len,
		w[1].flags);
	expect_bytes(dst->data, src->data, 64, "SEND_WITH_IMM");
	expect_bytes(dst->data + 128, src->data + 128, 50, "SEND");
	expect_bytes(dst->data + 200, src->data + 64, 32, "RDMA_WRITE");
	t_check(poll_ex(scq, w, 1, QUIET_MS) == 0, "a fourth send completion");
}

/*
 * Resizing keeps the completions waiting, in order; a size too small for
 * them is EINVAL and changes nothing; completions after it land in the
 * new ring, also after shrinking an empty CQ.
 */
static void cq_resize(void)
{
	struct buf *src = buf_new(64, LW), *dst = buf_new(320, LW);
	struct ibv_send_wr wr;
	struct ibv_sge s, r;
	struct end *a, *b;
	int i, ret;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	/* One receive for each of the five sends below. */
	for (i = 0; i < 5; i++) {
		r = sge_of(dst, 64 * i, 64);
		if (post_recv(b, 10 + i, &r, 1))
			return;
	}
	s = sge_of(src, 0, 8);
	for (i = 0; i < 3; i++) {
		wr = wr_send(20 + i, &s, 1);
		if (post(a, &wr))
			return;
	}
	/*
	 * Three completions wait in a's send CQ, whose ring then holds at
	 * least 128. On the wire they come with the ACKs, after the receiver
	 * has its data: give those the time a round trip takes.
	 */
	for (i = 0; i < 3; i++)
		if (!expect_wc(b->rcq, 10 + i, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receiver"))
			return;
	usleep(QUIET_MS * 1000);
	ret = ibv_resize_cq(a->scq, 2);
	t_check(ret == EINVAL, "resize to 2 with 3 waiting: %s, expected EINVAL", strerror(ret));
	ret = ibv_resize_cq(a->scq, 300);
	t_check(!ret, "resize to 300: %s", strerror(ret));
	t_check(a->scq->cqe >= 300, "cqe %d after resizing to 300", a->scq->cqe);
	for (i = 0; i < 3; i++)
		if (!expect_wc(a->scq, 20 + i, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "waiting"))
			return;
	wr = wr_send(23, &s, 1);
	if (post(a, &wr) || !expect_wc(a->scq, 23, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "after"))
		return;
	ret = ibv_resize_cq(a->scq, 1);
	t_check(!ret, "shrink the empty CQ to 1: %s", strerror(ret));
	wr = wr_send(24, &s, 1);
	if (post(a, &wr) || !expect_wc(a->scq, 24, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "shrunk"))
		return;
	for (i = 3; i < 5; i++)
		if (!expect_wc(b->rcq, 10 + i, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receiver"))
			return;
}

/*
 * CQ depth: 2^19 - 1 entries, the most whose ring fits what a ring may
 * take. libfabric 1.17's RDM endpoints (ofi_rxm over verbs) ask for
 * (384 + 384) * 256 = 196608 and fail on a device with less (rdma_rxe has
 * 32767). A CQ of max_cqe entries can be created (pyverbs' test_create_cq
 * makes one) and resized to; one past max_cqe, or none, is EINVAL, for a
 * create and for a resize.
 */
#define RXM_CQE	196608

static void cq_depth(void)
{
	struct ibv_cq *cq;
	int ret;

	t_check(dev_attr.max_cqe == (1 << 19) - 1, "max_cqe %d, expected %d", dev_attr.max_cqe,
		(1 << 19) - 1);
	t_check(dev_attr.max_cqe >= RXM_CQE, "max_cqe %d: libfabric RDM's %d do not fit",
		dev_attr.max_cqe, RXM_CQE);
	errno = 0;
	cq = ibv_create_cq(ctx, dev_attr.max_cqe + 1, NULL, NULL, 0);
	t_check(!cq && errno == EINVAL, "create_cq of max_cqe + 1: %s, expected EINVAL",
		cq ? "created" : strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
	errno = 0;
	cq = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	t_check(!cq && errno == EINVAL, "create_cq of 0: %s, expected EINVAL",
		cq ? "created" : strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, dev_attr.max_cqe, NULL, NULL, 0);
	if (!cq) {
		t_fail("create_cq of max_cqe, %d: %s", dev_attr.max_cqe, strerror(errno));
		return;
	}
	t_check(cq->cqe >= dev_attr.max_cqe, "cqe %d, asked for %d", cq->cqe, dev_attr.max_cqe);
	ret = ibv_resize_cq(cq, dev_attr.max_cqe + 1);
	t_check(ret == EINVAL, "resize to max_cqe + 1: %s, expected EINVAL", strerror(ret));
	t_check(cq->cqe >= dev_attr.max_cqe, "cqe %d after the refused resize", cq->cqe);
	ret = ibv_resize_cq(cq, 16);
	t_check(!ret, "shrink the empty CQ to 16: %s", strerror(ret));
	ret = ibv_resize_cq(cq, RXM_CQE);
	t_check(!ret, "resize it to %d: %s", RXM_CQE, strerror(ret));
	t_check(!ibv_destroy_cq(cq), "destroy_cq: %s", strerror(errno));
}

const struct qp_case api_cases[] = {
	{ "completion channel: an event only when armed, one per arming, solicited only",
	  cq_channel },
	{ "QP state machine: RESET->RTS, RESET->RTR, INIT->RTS, RTR->INIT, RTS->RTR: EINVAL",
	  qp_bad_transitions },
	{ "QP modify without a required attribute or with one not allowed: EINVAL",
	  qp_bad_attrs },
	{ "QP path_mtu above the port's active MTU: EINVAL", qp_mtu_too_big },
	{ "ibv_query_qp reads back every attribute that was set", qp_query },
	{ "a QP moved to ERR flushes its receives, goes to RESET and connects again",
	  qp_reset_reconnect },
	{ "ibv_qp_ex: abort, then send, write, send_imm, read, fetch_add, inline in one batch",
	  qp_ex },
	{ "ibv_cq_ex: start/next/end_poll read wr_id, status, opcode, byte_len, imm, qp_num",
	  cq_ex },
	{ "ibv_resize_cq keeps the completions waiting; too small for them: EINVAL",
	  cq_resize },
	{ "CQ depth: max_cqe (2^19 - 1) fits, libfabric RDM's 196608 too; max_cqe + 1, 0: EINVAL",
	  cq_depth },
	{ NULL }
};
