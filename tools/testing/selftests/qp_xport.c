// SPDX-License-Identifier: GPL-2.0
/*
 * qp_test's cases of the other transports and of shared receive queues:
 * UC (no acknowledgements, so no remote errors), UD (a GRH before the
 * data, qkeys, the path MTU as the message limit) and SRQs shared by two
 * QPs, with their limit event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/stag-abi.h>

#include "qp.h"

#define GRH_LEN	40

/* ---- UC ---- */

static void uc_send_write(void)
{
	struct buf *src = buf_new(1000, LW), *dst = buf_new(500, LW), *wdst = buf_new(500, LW | RW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s, w, r;
	struct ibv_wc wc;

	if (!src || !dst || !wdst || !pair_new(IBV_QPT_UC, &a, &b))
		return;
	fill(src->data, 1000, 31);
	s = sge_of(src, 0, 500);
	w = sge_of(src, 500, 500);
	r = sge_of(dst, 0, 500);
	if (post_recv(b, 10, &r, 1))
		return;
	/*
	 * The WRITE first: UC has no acknowledgements, so the sender's
	 * completion says nothing of the target; the SEND behind it, which
	 * UC delivers in order, says it landed.
	 */
	wr = wr_rdma(2, IBV_WR_RDMA_WRITE, &w, 1, wdst, 0);
	if (post(a, &wr))
		return;
	wr = wr_send(1, &s, 1);
	if (post(a, &wr))
		return;
	expect_wc(a->scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "UC WRITE");
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "UC SEND");
	if (expect_wc(b->rcq, 10, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "UC receiver"))
		t_check(wc.byte_len == 500, "byte_len %u, expected 500", wc.byte_len);
	expect_bytes(dst->data, src->data, 500, "sent");
	expect_bytes(wdst->data, src->data + 500, 500, "written");
	expect_guards(dst, "receive buffer");
	expect_guards(wdst, "written region");
}

static void uc_write_bad_rkey(void)
{
	struct buf *src = buf_new(100, LW), *dst = buf_new(100, LW | RW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;

	if (!src || !dst || !pair_new(IBV_QPT_UC, &a, &b))
		return;
	fill(src->data, 100, 32);
	fill(dst->data, 100, 33);
	s = sge_of(src, 0, 100);
	wr = wr_rdma(1, IBV_WR_RDMA_WRITE, &s, 1, dst, 0);
	wr.wr.rdma.rkey ^= 0x5a;
	if (post(a, &wr))
		return;
	/* UC has no acknowledgements: the requester cannot know. */
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "UC WRITE");
	expect_none(b->rcq, QUIET_MS, "UC responder");
	expect_data(dst, 33, "target region");
}

/*
 * UC has no SEND with Invalidate opcode (IBA 9.2, table 38; rxe agrees): it
 * fails as an operation the QP type does not take, the same on loopback as
 * on the wire, where it could not be sent at all. Nothing arrives.
 */
static void uc_send_with_inv(void)
{
	struct buf *src = buf_new(100, LW), *dst = buf_new(100, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s, r;

	if (!src || !dst || !pair_new(IBV_QPT_UC, &a, &b))
		return;
	s = sge_of(src, 0, 100);
	r = sge_of(dst, 0, 100);
	if (post_recv(b, 10, &r, 1))
		return;
	wr = wr_send(1, &s, 1);
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.invalidate_rkey = src->mr->rkey;
	if (post(a, &wr))
		return;
	expect_wc(a->scq, 1, IBV_WC_LOC_QP_OP_ERR, IBV_WC_SEND, NULL, "UC SEND_WITH_INV");
	expect_none(b->rcq, QUIET_MS, "UC responder");
	expect_blank(dst, "receive buffer");
}

/* ---- UD ---- */

struct ud {
	struct end *a, *b;	/* sender, receiver */
	struct ibv_ah *ah;
};

static bool ud_new(struct ud *u)
{
	u->a = end_new(IBV_QPT_UD, NULL, true);
	u->b = end_new(IBV_QPT_UD, NULL, true);
	u->ah = ah_new();
	return u->a && u->b && u->ah && ud_ready(u->a) && ud_ready(u->b);
}

static int ud_send(struct ud *u, uint64_t wr_id, struct ibv_sge *s, uint32_t qkey)
{
	struct ibv_send_wr wr = wr_send(wr_id, s, 1);

	wr.wr.ud.ah = u->ah;
	wr.wr.ud.remote_qpn = u->b->qp->qp_num;
	wr.wr.ud.remote_qkey = qkey;
	return post(u->a, &wr);
}

static void ud_send_grh(void)
{
	bool v4 = gid_is_v4(&gid);
	struct buf *src = buf_new(512, LW), *dst = buf_new(GRH_LEN + 512, LW);
	uint8_t pkt_type = v4 ? 0xa : 0x9;
	struct ibv_ah_attr ah;
	struct ibv_sge s, r;
	struct ibv_wc wc;
	struct ud u;
	int ret;

	if (!src || !dst || !ud_new(&u))
		return;
	fill(src->data, 512, 34);
	s = sge_of(src, 0, 512);
	r = sge_of(dst, 0, GRH_LEN + 512);
	if (post_recv(u.b, 10, &r, 1) || ud_send(&u, 1, &s, QKEY))
		return;
	expect_wc(u.a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "UD sender");
	if (!expect_wc(u.b->rcq, 10, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "UD receiver"))
		return;
	t_check(wc.byte_len == GRH_LEN + 512, "byte_len %u, expected %d (GRH + data)",
		wc.byte_len, GRH_LEN + 512);
	t_check(wc.wc_flags & IBV_WC_GRH, "IBV_WC_GRH not set");
	t_check(wc.src_qp == u.a->qp->qp_num, "src_qp %#x, expected the sender's %#x", wc.src_qp,
		u.a->qp->qp_num);
	t_check(wc.qp_num == u.b->qp->qp_num, "qp_num %#x, expected %#x", wc.qp_num,
		u.b->qp->qp_num);
	/* RoCE v2's packet type where the SL goes, as mlx5 has it (UCX reads it) */
	t_check(wc.sl == pkt_type, "sl %#x, expected the RoCE v2 packet type %#x", wc.sl, pkt_type);
	expect_bytes(dst->data + GRH_LEN, src->data, 512, "data after the GRH");
	expect_guards(dst, "receive buffer");
	/* The GRH (for IPv4, the IP header in its last 20 bytes) names the sender. */
	ret = ibv_init_ah_from_wc(ctx, 1, &wc, (struct ibv_grh *)dst->data, &ah);
	t_check(!ret, "ibv_init_ah_from_wc: %s", strerror(errno));
	if (!ret)
		t_check(!memcmp(&ah.grh.dgid, &gid, sizeof(gid)),
			"the GRH's source is not the sender's GID");
}

static void ud_qkey_mismatch(void)
{
	struct buf *src = buf_new(256, LW), *dst = buf_new(GRH_LEN + 256, LW);
	struct ibv_sge s, r;
	struct ud u;

	if (!src || !dst || !ud_new(&u))
		return;
	fill(src->data, 256, 35);
	s = sge_of(src, 0, 256);
	r = sge_of(dst, 0, GRH_LEN + 256);
	if (post_recv(u.b, 10, &r, 1) || ud_send(&u, 1, &s, QKEY ^ 0x2222))
		return;
	expect_wc(u.a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "sender of the wrong qkey");
	expect_none(u.b->rcq, QUIET_MS, "receiver of the wrong qkey");
	expect_blank(dst, "receive buffer");
	/* The receive is still there for a datagram with the right qkey. */
	if (ud_send(&u, 2, &s, QKEY))
		return;
	expect_wc(u.a->scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "sender of the right qkey");
	expect_wc(u.b->rcq, 10, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receiver of the right qkey");
	expect_bytes(dst->data + GRH_LEN, src->data, 256, "data after the GRH");
}

static void ud_too_long(void)
{
	size_t mtu = 128u << port_attr.active_mtu;
	struct buf *src = buf_new(mtu + 1, LW), *dst = buf_new(GRH_LEN + mtu + 1, LW);
	struct ibv_sge s, r;
	struct ud u;

	if (!src || !dst || !ud_new(&u))
		return;
	s = sge_of(src, 0, mtu + 1);
	r = sge_of(dst, 0, GRH_LEN + mtu + 1);
	if (post_recv(u.b, 10, &r, 1) || ud_send(&u, 1, &s, QKEY))
		return;
	expect_wc(u.a->scq, 1, IBV_WC_LOC_LEN_ERR, -1, NULL, "sender of MTU + 1 bytes");
	expect_none(u.b->rcq, QUIET_MS, "receiver");
	expect_blank(dst, "receive buffer");
}

/* ---- SRQ ---- */

/* An RC pair whose responder @b takes its receives from @srq. */
static bool pair_srq(struct ibv_srq *srq, struct end **a, struct end **b)
{
	*a = end_new(IBV_QPT_RC, NULL, true);
	*b = end_new(IBV_QPT_RC, srq, true);
	if (!*a || !*b)
		return false;
	return pair_connect_default(*a, *b);
}

/*
 * Receives @first .. @first + @n - 1 into @srq: receive i takes 100 bytes
 * at 100 * i in @dst, as wr_id 100 + i; @r holds their scatter entries.
 */
static bool post_srq_n(struct ibv_srq *srq, struct buf *dst, struct ibv_sge *r, int first, int n)
{
	int i;

	for (i = first; i < first + n; i++) {
		r[i] = sge_of(dst, 100 * i, 100);
		if (post_srq(srq, 100 + i, &r[i]))
			return false;
	}
	return true;
}

/* A 100-byte SEND of fill(@seed) from @a, waited for. */
static bool send_wait(struct end *a, struct buf *src, unsigned int seed, uint64_t wr_id)
{
	struct ibv_send_wr wr;
	struct ibv_sge s;

	fill(src->data, 100, seed);
	s = sge_of(src, 0, 100);
	wr = wr_send(wr_id, &s, 1);
	return !post(a, &wr) && expect_wc(a->scq, wr_id, IBV_WC_SUCCESS, IBV_WC_SEND, NULL,
					  "sender");
}

static void srq_shared(void)
{
	static const int from[] = { 1, 2, 1 };
	struct buf *src = buf_new(100, LW), *dst = buf_new(4 * 100, LW);
	struct ibv_srq *srq = srq_new(16);
	struct end *a[3], *b[3];
	struct ibv_sge r[4];
	struct ibv_wc wc;
	char want[4 * 100], what[48];
	int i;

	if (!src || !dst || !srq || !pair_srq(srq, &a[1], &b[1]) || !pair_srq(srq, &a[2], &b[2]))
		return;
	if (!post_srq_n(srq, dst, r, 0, 4))
		return;
	for (i = 0; i < 3; i++) {
		snprintf(what, sizeof(what), "message %d through QP %d", i, from[i]);
		if (!send_wait(a[from[i]], src, 40 + i, i) ||
		    !expect_wc(b[from[i]]->rcq, 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, what))
			return;
		t_check(wc.qp_num == b[from[i]]->qp->qp_num, "%s: qp_num %#x, expected %#x", what,
			wc.qp_num, b[from[i]]->qp->qp_num);
		fill(want, 100, 40 + i);
		expect_bytes(dst->data + 100 * i, want, 100, what);
	}
	expect_none(b[1]->rcq, 0, "first responder afterwards");
	expect_none(b[2]->rcq, 0, "second responder afterwards");
	fill(want, 4 * 100, BLANK);
	expect_bytes(dst->data + 300, want + 300, 100, "the receive not consumed");
	expect_guards(dst, "SRQ buffers");
}

static void srq_limit_event(void)
{
	struct ibv_srq_attr attr = { .srq_limit = 4 };
	struct buf *src = buf_new(100, LW), *dst = buf_new(8 * 100, LW);
	struct ibv_srq *srq = srq_new(16);
	struct ibv_sge r[8];
	struct end *a, *b;
	int i, ret;

	if (!src || !dst || !srq || !pair_srq(srq, &a, &b))
		return;
	if (!post_srq_n(srq, dst, r, 0, 8))
		return;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
	if (ret) {
		t_fail("ibv_modify_srq IBV_SRQ_LIMIT 4: %s", strerror(ret));
		return;
	}
	for (i = 0; i < 4; i++)
		if (!send_wait(a, src, 50 + i, i) ||
		    !expect_wc(b->rcq, 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receiver"))
			return;
	t_check(!async_event(IBV_EVENT_SRQ_LIMIT_REACHED, srq, QUIET_MS),
		"IBV_EVENT_SRQ_LIMIT_REACHED with 4 receives left, the limit 4");
	if (!send_wait(a, src, 54, 4) ||
	    !expect_wc(b->rcq, 104, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receiver"))
		return;
	t_check(async_event(IBV_EVENT_SRQ_LIMIT_REACHED, srq, WAIT_MS),
		"no IBV_EVENT_SRQ_LIMIT_REACHED with 3 receives left, the limit 4");
	ret = ibv_query_srq(srq, &attr);
	t_check(!ret, "ibv_query_srq: %s", strerror(ret));
	t_check(!ret && attr.srq_limit == 0, "srq_limit %u after the event, expected 0 (disarmed)",
		attr.srq_limit);
	if (!send_wait(a, src, 55, 5) ||
	    !expect_wc(b->rcq, 105, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receiver"))
		return;
	t_check(!async_event(IBV_EVENT_SRQ_LIMIT_REACHED, srq, QUIET_MS),
		"a second IBV_EVENT_SRQ_LIMIT_REACHED: the limit was not disarmed");
}

static bool srq_resize(struct ibv_srq *srq, uint32_t max_wr, int want, const char *what)
{
	struct ibv_srq_attr attr = { .max_wr = max_wr };
	int ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);

	t_check(ret == want, "%s: ibv_modify_srq IBV_SRQ_MAX_WR %u: %s, expected %s", what,
		max_wr, strerror(ret), strerror(want));
	return ret == want;
}

static void expect_srq_size(struct ibv_srq *srq, uint32_t max_wr, uint32_t limit,
			    const char *what)
{
	struct ibv_srq_attr attr = {};
	int ret = ibv_query_srq(srq, &attr);

	t_check(!ret && attr.max_wr == max_wr && attr.srq_limit == limit,
		"%s: ibv_query_srq %s, max_wr %u limit %u, expected %u and %u", what,
		strerror(ret), attr.max_wr, attr.srq_limit, max_wr, limit);
}

/* @n 100-byte SENDs a -> b, each taken by receive 100 + @first + i, in order. */
static bool srq_drain(struct end *a, struct end *b, struct buf *src, struct buf *dst,
		      int first, int n)
{
	char want[100], what[48];
	int i;

	for (i = first; i < first + n; i++) {
		snprintf(what, sizeof(what), "receive %d", i);
		if (!send_wait(a, src, 60 + i, i) ||
		    !expect_wc(b->rcq, 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, what))
			return false;
		fill(want, 100, 60 + i);
		expect_bytes(dst->data + 100 * i, want, 100, what);
	}
	return true;
}

static void srq_resize_grows(void)
{
	struct buf *src = buf_new(100, LW), *dst = buf_new(16 * 100, LW);
	struct ibv_srq *srq = srq_new(4);
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge r[16];
	struct end *a, *b;
	int ret;

	t_check(dev_attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE,
		"device_cap_flags %#x: no IBV_DEVICE_SRQ_RESIZE", dev_attr.device_cap_flags);
	if (!src || !dst || !srq || !pair_srq(srq, &a, &b))
		return;
	if (!post_srq_n(srq, dst, r, 0, 4))
		return;
	if (!srq_resize(srq, 16, 0, "4 waiting"))
		return;
	expect_srq_size(srq, 16, 0, "grown");
	if (!post_srq_n(srq, dst, r, 4, 12))
		return;
	/* The seventeenth does not fit. */
	wr = (struct ibv_recv_wr){ .wr_id = 116, .sg_list = &r[0], .num_sge = 1 };
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	t_check(ret == ENOMEM, "a 17th receive in 16 slots: %s, expected ENOMEM", strerror(ret));
	if (!srq_drain(a, b, src, dst, 0, 16))
		return;
	expect_none(b->rcq, QUIET_MS, "responder afterwards");
	expect_guards(dst, "SRQ buffers");
}

static void srq_resize_refused(void)
{
	struct ibv_srq_attr attr = { .max_wr = 8, .srq_limit = 9 };
	struct buf *src = buf_new(100, LW), *dst = buf_new(8 * 100, LW);
	struct ibv_srq *srq = srq_new(16);
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge r[8];
	struct end *a, *b;
	int ret;

	if (!src || !dst || !srq || !pair_srq(srq, &a, &b))
		return;
	if (!post_srq_n(srq, dst, r, 0, 8))
		return;
	srq_resize(srq, 7, EINVAL, "8 waiting");
	srq_resize(srq, 0, EINVAL, "size 0");
	srq_resize(srq, dev_attr.max_srq_wr + 1, EINVAL, "max_srq_wr + 1");
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT);
	t_check(ret == EINVAL, "size 8 with limit 9: %s, expected EINVAL", strerror(ret));
	expect_srq_size(srq, 16, 0, "after the refusals");
	/* Exactly what waits: taken, and the ring is full. */
	if (!srq_resize(srq, 8, 0, "8 waiting"))
		return;
	expect_srq_size(srq, 8, 0, "shrunk to 8");
	wr = (struct ibv_recv_wr){ .wr_id = 108, .sg_list = &r[0], .num_sge = 1 };
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	t_check(ret == ENOMEM, "a 9th receive in 8 slots: %s, expected ENOMEM", strerror(ret));
	/* A limit comes with a size, and stays armed across another. */
	attr = (struct ibv_srq_attr){ .max_wr = 8, .srq_limit = 2 };
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT);
	t_check(!ret, "size 8 with limit 2: %s", strerror(ret));
	if (!srq_resize(srq, 32, 0, "8 waiting, limit 2"))
		return;
	expect_srq_size(srq, 32, 2, "grown to 32, limit 2");
	if (!srq_drain(a, b, src, dst, 0, 6))
		return;
	t_check(!async_event(IBV_EVENT_SRQ_LIMIT_REACHED, srq, QUIET_MS),
		"IBV_EVENT_SRQ_LIMIT_REACHED with 2 receives left, the limit 2");
	if (!srq_drain(a, b, src, dst, 6, 2))
		return;
	t_check(async_event(IBV_EVENT_SRQ_LIMIT_REACHED, srq, WAIT_MS),
		"no IBV_EVENT_SRQ_LIMIT_REACHED below the limit 2 kept across the resize");
	expect_guards(dst, "SRQ buffers");
}

/*
 * modify_srq written to the uverbs file by hand, as a process that skips
 * the provider may: a resize naming an address the kernel cannot write
 * where the new ring is (EFAULT), and one without that address (EINVAL),
 * each changing nothing.
 */
static void srq_resize_hostile(void)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_modify_srq core;
		struct stag_modify_srq_cmd drv;
	} cmd = {};
	struct buf *src = buf_new(100, LW), *dst = buf_new(2 * 100, LW);
	struct ibv_srq *srq = srq_new(4);
	struct ibv_sge r[2];
	struct end *a, *b;
	ssize_t n;

	if (!src || !dst || !srq || !pair_srq(srq, &a, &b))
		return;
	if (!post_srq_n(srq, dst, r, 0, 2))
		return;
	cmd.hdr.command = IB_USER_VERBS_CMD_MODIFY_SRQ;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.core.srq_handle = srq->handle;
	cmd.core.attr_mask = IBV_SRQ_MAX_WR;
	cmd.core.max_wr = 16;
	cmd.drv.ring_addr = 8;
	n = write(srq->context->cmd_fd, &cmd, sizeof(cmd));
	t_check(n < 0 && errno == EFAULT, "ring_addr 8: %zd (%s), expected EFAULT", n,
		n < 0 ? strerror(errno) : "written");
	cmd.hdr.in_words = (sizeof(cmd) - sizeof(cmd.drv)) / 4;
	n = write(srq->context->cmd_fd, &cmd, sizeof(cmd) - sizeof(cmd.drv));
	t_check(n < 0 && errno == EINVAL, "no ring_addr: %zd (%s), expected EINVAL", n,
		n < 0 ? strerror(errno) : "written");
	expect_srq_size(srq, 4, 0, "after the refused resizes");
	srq_drain(a, b, src, dst, 0, 2);
	expect_guards(dst, "SRQ buffers");
}

struct resizer {
	struct ibv_srq *srq;
	bool stop;		/* atomic: set by the main thread */
	int resizes;		/* atomic: the main thread waits for the first */
	int failures;
};

static void *resize_loop(void *arg)
{
	struct resizer *z = arg;
	struct ibv_srq_attr attr = {};

	while (!__atomic_load_n(&z->stop, __ATOMIC_RELAXED)) {
		attr.max_wr = z->resizes & 1 ? 16 : 32;
		if (ibv_modify_srq(z->srq, &attr, IBV_SRQ_MAX_WR))
			z->failures++;
		__atomic_fetch_add(&z->resizes, 1, __ATOMIC_RELAXED);
		/*
		 * A resize holds the SRQ's posting spinlock across its system
		 * call, as rdma_rxe's provider does. Taken again at once, it
		 * left the poster a window of a few instructions: on a host
		 * that ran both vCPUs on one CPU (a nice -10 loop on the
		 * other) the poster never got it, and the case timed out.
		 */
		usleep(100);
	}
	return NULL;
}

/*
 * One thread resizes the SRQ over and over while this one posts receives
 * and sends into them: every receive is taken once, in order, its data
 * exact, and no resize fails (at most one receive waits).
 */
static void srq_resize_race(void)
{
	struct buf *src = buf_new(100, LW), *dst = buf_new(64 * 100, LW);
	struct ibv_srq *srq = srq_new(16);
	struct resizer z = { .srq = srq };
	struct ibv_sge r;
	struct end *a, *b;
	pthread_t t;
	char want[100], what[48];
	int i;

	if (!src || !dst || !srq || !pair_srq(srq, &a, &b))
		return;
	if (pthread_create(&t, NULL, resize_loop, &z)) {
		t_fail("pthread_create");
		return;
	}
	/*
	 * The receives start once the resizes have: on a loaded host the
	 * thread may not run before all 64 are through, and the case, which
	 * then saw "0 resizes", would test nothing.
	 */
	for (i = 0; i < 5000 && !__atomic_load_n(&z.resizes, __ATOMIC_RELAXED); i++)
		usleep(1000);
	for (i = 0; i < 64; i++) {
		r = sge_of(dst, 100 * i, 100);
		snprintf(what, sizeof(what), "receive %d, resizes going on", i);
		if (post_srq(srq, 100 + i, &r) || !send_wait(a, src, 60 + i, i) ||
		    !expect_wc(b->rcq, 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, what))
			break;
		fill(want, 100, 60 + i);
		expect_bytes(dst->data + 100 * i, want, 100, what);
	}
	__atomic_store_n(&z.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	printf("# %d resizes during 64 receives\n", z.resizes);
	t_check(z.resizes > 0 && !z.failures, "%d resizes, %d failed", z.resizes, z.failures);
	expect_none(b->rcq, QUIET_MS, "responder afterwards");
	expect_guards(dst, "SRQ buffers");
}

const struct qp_case xport_cases[] = {
	{ "UC SEND/RECV and RDMA_WRITE: the data lands, guards intact", uc_send_write },
	{ "UC RDMA_WRITE with a stale rkey: success at the sender, nothing written",
	  uc_write_bad_rkey },
	{ "UC SEND_WITH_INV: IBV_WC_LOC_QP_OP_ERR, nothing arrives", uc_send_with_inv },
	{ "UD SEND: a 40-byte GRH naming the sender, IBV_WC_GRH, src_qp, the data after it",
	  ud_send_grh },
	{ "UD SEND with the wrong qkey is dropped; the receive stays for the right one",
	  ud_qkey_mismatch },
	{ "UD SEND of the path MTU + 1 bytes: IBV_WC_LOC_LEN_ERR at the sender", ud_too_long },
	{ "SRQ shared by two RC QPs: receives taken in order, qp_num names the QP",
	  srq_shared },
	{ "SRQ limit 4: no event at 4 left, IBV_EVENT_SRQ_LIMIT_REACHED at 3, then disarmed",
	  srq_limit_event },
	{ "SRQ resized from 4 to 16 with 4 waiting: 16 taken in order, the 17th ENOMEM",
	  srq_resize_grows },
	{ "SRQ resize below what waits, to 0, past max_srq_wr, under its limit: EINVAL, unchanged",
	  srq_resize_refused },
	{ "SRQ resized over and over while receives are posted and taken: in order, exact",
	  srq_resize_race },
	{ "SRQ resize by hand, ring_addr unwritable: EFAULT; without it: EINVAL; unchanged",
	  srq_resize_hostile },
	{ NULL }
};
