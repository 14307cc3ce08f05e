// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: queue pairs on a real stag device, driven the way a kernel
 * consumer drives them: the attribute checks and state transitions of
 * modify_qp, and the loopback data path through ib_post_send and
 * ib_post_recv, with fast registration (REG_MR) and LOCAL_INV.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/if_arp.h>
#include <linux/ip.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "../counters.h"
#include "../cq.h"
#include "../dev.h"
#include "../mr.h"
#include "../port.h"
#include "../qp.h"
#include "../queue.h"
#include "../roce.h"
#include "../srq.h"
#include "testdev.h"

struct attr_case {
	const char *name;
	int mask;
	struct ib_qp_attr attr;
	int expected;
};

static const struct attr_case attr_cases[] = {
	{ "port 1", IB_QP_PORT, { .port_num = 1 }, 0 },
	{ "port 2", IB_QP_PORT, { .port_num = 2 }, -EINVAL },
	{ "pkey index 0", IB_QP_PKEY_INDEX, { .pkey_index = 0 }, 0 },
	{ "pkey index 1", IB_QP_PKEY_INDEX, { .pkey_index = 1 }, -EINVAL },
	{ "path mtu 1024 = active", IB_QP_PATH_MTU, { .path_mtu = IB_MTU_1024 }, 0 },
	{ "path mtu 2048 > active", IB_QP_PATH_MTU, { .path_mtu = IB_MTU_2048 }, -EINVAL },
	{ "path mtu 0", IB_QP_PATH_MTU, { .path_mtu = 0 }, -EINVAL },
	{ "timeout 31", IB_QP_TIMEOUT, { .timeout = 31 }, 0 },
	{ "timeout 32", IB_QP_TIMEOUT, { .timeout = 32 }, -EINVAL },
	{ "retry 7", IB_QP_RETRY_CNT, { .retry_cnt = 7 }, 0 },
	{ "retry 8", IB_QP_RETRY_CNT, { .retry_cnt = 8 }, -EINVAL },
	{ "rnr retry 8", IB_QP_RNR_RETRY, { .rnr_retry = 8 }, -EINVAL },
	{ "min rnr timer 32", IB_QP_MIN_RNR_TIMER, { .min_rnr_timer = 32 }, -EINVAL },
	{ "rd atomic 128", IB_QP_MAX_QP_RD_ATOMIC, { .max_rd_atomic = 128 }, 0 },
	{ "rd atomic 129", IB_QP_MAX_QP_RD_ATOMIC, { .max_rd_atomic = 129 }, -EINVAL },
	{ "dest rd atomic 255", IB_QP_MAX_DEST_RD_ATOMIC, { .max_dest_rd_atomic = 255 }, -EINVAL },
	{ "dest qpn 2^24 - 1", IB_QP_DEST_QPN, { .dest_qp_num = 0xffffff }, 0 },
	{ "dest qpn 2^24", IB_QP_DEST_QPN, { .dest_qp_num = 0x1000000 }, -EINVAL },
	{ "access: remote rights", IB_QP_ACCESS_FLAGS,
	  { .qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			       IB_ACCESS_REMOTE_ATOMIC }, 0 },
	{ "access: region flags (rdma-core's ODP tests pass them)", IB_QP_ACCESS_FLAGS,
	  { .qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_ON_DEMAND |
			       IB_ACCESS_REMOTE_READ }, 0 },
	{ "access: zero-based flag", IB_QP_ACCESS_FLAGS,
	  { .qp_access_flags = IB_ZERO_BASED }, -EINVAL },
	{ "AV without GRH", IB_QP_AV, {}, -EINVAL },
	{ "alternate path", IB_QP_ALT_PATH, {}, -EOPNOTSUPP },
	{ "rate limit", IB_QP_RATE_LIMIT, {}, -EOPNOTSUPP },
};

static void attr_case_desc(const struct attr_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(attr, attr_cases, attr_case_desc);

static void stag_qp_attr_values(struct kunit *test)
{
	const struct attr_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, stag_qp_check_attr(NULL, &c->attr, c->mask, IB_MTU_1024),
			c->expected);
}

static void destroy_qp_action(void *qp)
{
	ib_destroy_qp(qp);
}

static void dereg_mr_action(void *mr)
{
	ib_dereg_mr(mr);
}

static struct ib_qp *qp_create(struct kunit *test, struct rig *r, enum ib_qp_type type)
{
	struct ib_qp_init_attr init = {
		.qp_type = type,
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
			 .max_recv_sge = 2 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
	};
	struct ib_qp *qp = ib_create_qp(r->pd, &init);

	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_qp_action, qp), 0);
	KUNIT_EXPECT_EQ(test, init.cap.max_send_wr, 16);
	return qp;
}

static int to_init(struct ib_qp *qp)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_ATOMIC,
	};

	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			    IB_QP_ACCESS_FLAGS);
}

static int to_rtr(struct rig *r, struct ib_qp *qp, u32 dest)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_RTR,
		.path_mtu = IB_MTU_1024,
		.dest_qp_num = dest,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
	};
	union ib_gid dgid = r->gid->gid;

	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &dgid, 0, r->gid->index, 1, 0);
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			    IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
}

static int to_rts(struct ib_qp *qp, u8 retry, u8 rnr_retry)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_RTS,
		.timeout = 8,
		.retry_cnt = retry,
		.rnr_retry = rnr_retry,
		.max_rd_atomic = 1,
	};

	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC);
}

static void connect(struct kunit *test, struct rig *r, struct ib_qp *a, struct ib_qp *b)
{
	KUNIT_ASSERT_EQ(test, to_init(a), 0);
	KUNIT_ASSERT_EQ(test, to_init(b), 0);
	KUNIT_ASSERT_EQ(test, to_rtr(r, a, b->qp_num), 0);
	KUNIT_ASSERT_EQ(test, to_rtr(r, b, a->qp_num), 0);
	KUNIT_ASSERT_EQ(test, to_rts(a, 1, 0), 0);
	KUNIT_ASSERT_EQ(test, to_rts(b, 1, 0), 0);
}

/* The next completion, waiting up to four seconds for the QP's work. */
static struct ib_wc poll_one(struct kunit *test, struct rig *r)
{
	struct ib_wc wc = {};
	int i;

	for (i = 0; i < 200; i++) {
		if (ib_poll_cq(r->cq, 1, &wc) == 1)
			return wc;
		msleep(20);
	}
	KUNIT_FAIL(test, "no completion");
	wc.status = -1;
	return wc;
}

static void expect_wc(struct kunit *test, struct rig *r, u64 wr_id, enum ib_wc_status status,
		      enum ib_wc_opcode opcode)
{
	struct ib_wc wc = poll_one(test, r);

	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ(test, wc.status, status);
	if (status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ(test, wc.opcode, opcode);
}

static void stag_qp_transitions(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagq0");
	struct ib_qp *qp = qp_create(test, r, IB_QPT_RC);
	struct ib_qp_init_attr init;
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTS };

	/* RESET to RTS skips states. */
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &a, IB_QP_STATE), -EINVAL);
	/* RESET to INIT without its required attributes. */
	a.qp_state = IB_QPS_INIT;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &a, IB_QP_STATE), -EINVAL);
	KUNIT_ASSERT_EQ(test, to_init(qp), 0);
	/* INIT to RTS skips RTR. */
	KUNIT_EXPECT_EQ(test, to_rts(qp, 7, 7), -EINVAL);
	/* A refused transition changed nothing. */
	KUNIT_ASSERT_EQ(test, ib_query_qp(qp, &a, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, a.qp_state, IB_QPS_INIT);
	KUNIT_ASSERT_EQ(test, to_rtr(r, qp, qp->qp_num), 0);
	KUNIT_ASSERT_EQ(test, to_rts(qp, 5, 6), 0);
	KUNIT_ASSERT_EQ(test, ib_query_qp(qp, &a, IB_QP_STATE | IB_QP_RETRY_CNT, &init), 0);
	KUNIT_EXPECT_EQ(test, a.qp_state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, a.retry_cnt, 5);
	KUNIT_EXPECT_EQ(test, a.rnr_retry, 6);
	KUNIT_EXPECT_EQ(test, a.timeout, 8);
	KUNIT_EXPECT_EQ(test, a.dest_qp_num, qp->qp_num);
	KUNIT_EXPECT_EQ(test, init.cap.max_send_wr, 16);
	/* Any state to ERR, ERR to RESET, RESET to INIT again. */
	a.qp_state = IB_QPS_ERR;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &a, IB_QP_STATE), 0);
	a.qp_state = IB_QPS_RTS;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &a, IB_QP_STATE), -EINVAL);
	a.qp_state = IB_QPS_RESET;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &a, IB_QP_STATE), 0);
	KUNIT_EXPECT_EQ(test, to_init(qp), 0);
}

/* Kernel memory a consumer would DMA-map; virtual DMA makes it its address. */
static u8 *kbuf(struct kunit *test, size_t len, u8 fill)
{
	u8 *buf = kunit_kmalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(buf, fill, len);
	return buf;
}

static int post_send(struct ib_qp *qp, u64 wr_id, enum ib_wr_opcode op, void *buf, u32 len,
		     u32 lkey)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ib_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .sg_list = &sge, .num_sge = 1,
		.send_flags = IB_SEND_SIGNALED,
	};

	return ib_post_send(qp, &wr, NULL);
}

static int post_recv(struct ib_qp *qp, u64 wr_id, void *buf, u32 len, u32 lkey)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(qp, &wr, NULL);
}

static void stag_qp_kernel_send_recv(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagq1");
	struct ib_qp *a = qp_create(test, r, IB_QPT_RC);
	struct ib_qp *b = qp_create(test, r, IB_QPT_RC);
	u32 lkey = r->pd->local_dma_lkey;
	u8 *src = kbuf(test, 300, 0x5a), *dst = kbuf(test, 302, 0xee);
	struct ib_wc wc;

	/* Posting before RTS is refused, as for every kernel consumer. */
	KUNIT_EXPECT_EQ(test, post_send(a, 1, IB_WR_SEND, src, 300, lkey), -EINVAL);
	connect(test, r, a, b);

	KUNIT_ASSERT_EQ(test, post_recv(b, 10, dst + 1, 300, lkey), 0);
	KUNIT_ASSERT_EQ(test, post_send(a, 11, IB_WR_SEND, src, 300, lkey), 0);
	/*
	 * Both QPs share the CQ. The receive completes when the data lands,
	 * the send when the requester hears back: receive first.
	 */
	wc = poll_one(test, r);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 10);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 300);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, b);
	expect_wc(test, r, 11, IB_WC_SUCCESS, IB_WC_SEND);
	KUNIT_EXPECT_MEMEQ(test, dst + 1, src, 300);
	/* Guard bytes on both sides. */
	KUNIT_EXPECT_EQ(test, dst[0], 0xee);
	KUNIT_EXPECT_EQ(test, dst[301], 0xee);

	/* A message longer than the receive buffer: both sides learn it. */
	KUNIT_ASSERT_EQ(test, post_recv(b, 20, dst, 100, lkey), 0);
	KUNIT_ASSERT_EQ(test, post_send(a, 21, IB_WR_SEND, src, 101, lkey), 0);
	wc = poll_one(test, r);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 20);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_LEN_ERR);
	expect_wc(test, r, 21, IB_WC_REM_INV_REQ_ERR, 0);
}

/* A region of kernel memory a peer may reach by rkey: fast registration. */
static struct ib_mr *frmr(struct kunit *test, struct rig *r, struct ib_qp *qp, void *buf,
			  u32 len, int access)
{
	struct ib_mr *mr = ib_alloc_mr(r->pd, IB_MR_TYPE_MEM_REG, 4);
	struct scatterlist sg;
	struct ib_reg_wr wr = {
		.wr = { .wr_id = 0xf00, .opcode = IB_WR_REG_MR, .send_flags = IB_SEND_SIGNALED },
		.access = access,
	};

	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dereg_mr_action, mr), 0);
	sg_init_one(&sg, buf, len);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(r->ibdev, &sg, 1, DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	ib_update_fast_reg_key(mr, 0x42);
	wr.mr = mr;
	wr.key = mr->rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &wr.wr, NULL), 0);
	expect_wc(test, r, 0xf00, IB_WC_SUCCESS, IB_WC_REG_MR);
	return mr;
}

static int post_rdma(struct ib_qp *qp, u64 wr_id, enum ib_wr_opcode op, void *buf, u32 len,
		     u32 lkey, u64 raddr, u32 rkey)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = op, .sg_list = &sge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

static void stag_qp_kernel_rdma_frmr(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagq2");
	struct ib_qp *a = qp_create(test, r, IB_QPT_RC);
	struct ib_qp *b = qp_create(test, r, IB_QPT_RC);
	u32 lkey = r->pd->local_dma_lkey;
	u8 *target = kbuf(test, 2 * PAGE_SIZE, 0x11);
	u8 *src = kbuf(test, 64, 0x77), *back = kbuf(test, 64, 0);
	struct ib_mr *mr;

	connect(test, r, a, b);
	mr = frmr(test, r, b, target, 2 * PAGE_SIZE,
		  IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, mr->rkey & 0xff, 0x42);

	/* Across the page boundary of the registered pages. */
	KUNIT_ASSERT_EQ(test, post_rdma(a, 1, IB_WR_RDMA_WRITE, src, 64, lkey,
					mr->iova + PAGE_SIZE - 32, mr->rkey), 0);
	expect_wc(test, r, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_MEMEQ(test, target + PAGE_SIZE - 32, src, 64);
	KUNIT_EXPECT_EQ(test, target[PAGE_SIZE - 33], 0x11);
	KUNIT_EXPECT_EQ(test, target[PAGE_SIZE + 32], 0x11);

	KUNIT_ASSERT_EQ(test, post_rdma(a, 2, IB_WR_RDMA_READ, back, 64, lkey,
					mr->iova + PAGE_SIZE - 32, mr->rkey), 0);
	expect_wc(test, r, 2, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	KUNIT_EXPECT_MEMEQ(test, back, src, 64);

	/* One byte past the registration. */
	KUNIT_ASSERT_EQ(test, post_rdma(a, 3, IB_WR_RDMA_WRITE, src, 2, lkey,
					mr->iova + 2 * PAGE_SIZE - 1, mr->rkey), 0);
	expect_wc(test, r, 3, IB_WC_REM_ACCESS_ERR, 0);
	KUNIT_EXPECT_EQ(test, target[2 * PAGE_SIZE - 1], 0x11);
}

static void stag_qp_kernel_local_inv(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagq3");
	struct ib_qp *a = qp_create(test, r, IB_QPT_RC);
	struct ib_qp *b = qp_create(test, r, IB_QPT_RC);
	u32 lkey = r->pd->local_dma_lkey;
	u8 *target = kbuf(test, PAGE_SIZE, 0x11), *src = kbuf(test, 8, 0x77);
	struct ib_send_wr inv = { .wr_id = 0xf01, .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_mr *mr;

	connect(test, r, a, b);
	mr = frmr(test, r, b, target, PAGE_SIZE, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	inv.ex.invalidate_rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(b, &inv, NULL), 0);
	expect_wc(test, r, 0xf01, IB_WC_SUCCESS, IB_WC_LOCAL_INV);

	/* The rkey is dead: the write is refused and nothing moves. */
	KUNIT_ASSERT_EQ(test, post_rdma(a, 4, IB_WR_RDMA_WRITE, src, 8, lkey, mr->iova,
					mr->rkey), 0);
	expect_wc(test, r, 4, IB_WC_REM_ACCESS_ERR, 0);
	KUNIT_EXPECT_EQ(test, target[0], 0x11);
	/* The responder's QP went to error with the NAK (class C). */
	KUNIT_EXPECT_EQ(test, stag_qp_state(to_stag_qp(b)), IB_QPS_ERR);
}

/*
 * A kernel SRQ resized with receives waiting: refused below what waits,
 * then grown, the waiting receives taken first and in order.
 */
static void stag_srq_kernel_resize(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagqa");
	struct ib_srq_init_attr init = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ib_sge sge = { .addr = (uintptr_t)kbuf(test, 64, 0), .length = 64,
			      .lkey = r->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct ib_srq_attr attr = {};
	struct stag_rwqe wqe;
	struct ib_srq *srq;
	u64 i;

	srq = ib_create_srq(r->pd, &init);
	KUNIT_ASSERT_FALSE(test, IS_ERR(srq));
	for (i = 1; i <= 4; i++) {
		wr.wr_id = i;
		KUNIT_EXPECT_EQ(test, ib_post_srq_recv(srq, &wr, NULL), 0);
	}
	attr.max_wr = 3;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_MAX_WR), -EINVAL);
	attr.max_wr = 16;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_MAX_WR), 0);
	attr.max_wr = 0;
	KUNIT_EXPECT_EQ(test, ib_query_srq(srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.max_wr, 16);
	for (i = 5; i <= 16; i++) {
		wr.wr_id = i;
		KUNIT_EXPECT_EQ(test, ib_post_srq_recv(srq, &wr, NULL), 0);
	}
	wr.wr_id = 17;
	KUNIT_EXPECT_EQ(test, ib_post_srq_recv(srq, &wr, NULL), -ENOMEM);
	for (i = 1; i <= 16; i++) {
		KUNIT_EXPECT_EQ(test, stag_srq_take(to_stag_srq(srq), &wqe), 0);
		KUNIT_EXPECT_EQ(test, wqe.wr_id, i);
	}
	KUNIT_EXPECT_EQ(test, stag_srq_take(to_stag_srq(srq), &wqe), -ENOENT);
	ib_destroy_srq(srq);
}

static void stag_qp_kernel_atomics(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagq4");
	struct ib_qp *a = qp_create(test, r, IB_QPT_RC);
	struct ib_qp *b = qp_create(test, r, IB_QPT_RC);
	u32 lkey = r->pd->local_dma_lkey;
	u64 *target = (u64 *)kbuf(test, PAGE_SIZE, 0), *orig = (u64 *)kbuf(test, 8, 0xff);
	struct ib_sge sge = { .addr = (uintptr_t)orig, .length = 8, .lkey = lkey };
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 5, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.compare_add = 3,
	};
	struct ib_mr *mr;

	connect(test, r, a, b);
	mr = frmr(test, r, b, target, PAGE_SIZE, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC);
	target[1] = 40;
	wr.remote_addr = mr->iova + 8;
	wr.rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(a, &wr.wr, NULL), 0);
	expect_wc(test, r, 5, IB_WC_SUCCESS, IB_WC_FETCH_ADD);
	KUNIT_EXPECT_EQ(test, *orig, 40);
	KUNIT_EXPECT_EQ(test, target[1], 43);

	wr.wr.wr_id = 6;
	wr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	wr.compare_add = 43;
	wr.swap = 99;
	KUNIT_ASSERT_EQ(test, ib_post_send(a, &wr.wr, NULL), 0);
	expect_wc(test, r, 6, IB_WC_SUCCESS, IB_WC_COMP_SWAP);
	KUNIT_EXPECT_EQ(test, *orig, 43);
	KUNIT_EXPECT_EQ(test, target[1], 99);

	/* Misaligned: an invalid request, and the target is untouched. */
	wr.wr.wr_id = 7;
	wr.remote_addr = mr->iova + 4;
	KUNIT_ASSERT_EQ(test, ib_post_send(a, &wr.wr, NULL), 0);
	expect_wc(test, r, 7, IB_WC_REM_INV_REQ_ERR, 0);
	KUNIT_EXPECT_EQ(test, target[0], 0);
	KUNIT_EXPECT_EQ(test, target[1], 99);
}

/*
 * A kernel consumer's atomic write: its 8 bytes are what its list names,
 * written to the target with the remote write right; a list of any other
 * length is refused at post time.
 */
static void stag_qp_kernel_atomic_write(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagqb");
	struct ib_qp *a = qp_create(test, r, IB_QPT_RC);
	struct ib_qp *b = qp_create(test, r, IB_QPT_RC);
	u32 lkey = r->pd->local_dma_lkey;
	u64 *target = (u64 *)kbuf(test, PAGE_SIZE, 0), *val = (u64 *)kbuf(test, 8, 0);
	struct ib_sge sge = { .addr = (uintptr_t)val, .length = 8, .lkey = lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 8, .opcode = IB_WR_ATOMIC_WRITE, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
	};
	const struct ib_send_wr *bad;
	struct ib_mr *mr;

	connect(test, r, a, b);
	mr = frmr(test, r, b, target, PAGE_SIZE, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	*val = 0x0123456789abcdefULL;
	wr.remote_addr = mr->iova + 16;
	wr.rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(a, &wr.wr, NULL), 0);
	expect_wc(test, r, 8, IB_WC_SUCCESS, IB_WC_ATOMIC_WRITE);
	KUNIT_EXPECT_EQ(test, target[2], 0x0123456789abcdefULL);
	KUNIT_EXPECT_EQ(test, target[1], 0);
	KUNIT_EXPECT_EQ(test, target[3], 0);

	sge.length = 4;
	KUNIT_EXPECT_EQ(test, ib_post_send(a, &wr.wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr.wr);
}

/* struct ib_wc has no place for a timestamp: a kernel CQ cannot ask for one. */
/*
 * A user CQE of a UD receive over RoCE v2 has the packet's type where the
 * SL goes, as mlx5's do (UCX 1.13 drops every packet without it); other
 * completions keep the SL.
 */
static void stag_cq_cqe_roce_packet_type(struct kunit *test)
{
	struct ib_wc wc = {
		.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE,
		.network_hdr_type = RDMA_NETWORK_IPV4, .sl = 3,
	};
	struct ib_qp qp = { .qp_num = 0x12 };
	struct stag_cqe cqe;

	wc.qp = &qp;
	stag_cq_wc_to_cqe(&wc, &cqe);
	KUNIT_EXPECT_EQ(test, cqe.sl, 0xa);
	KUNIT_EXPECT_EQ(test, cqe.wc_flags, STAG_WC_GRH);
	KUNIT_EXPECT_EQ(test, cqe.qp_num, 0x12);
	wc.network_hdr_type = RDMA_NETWORK_IPV6;
	stag_cq_wc_to_cqe(&wc, &cqe);
	KUNIT_EXPECT_EQ(test, cqe.sl, 0x9);
	wc.wc_flags = 0;
	stag_cq_wc_to_cqe(&wc, &cqe);
	KUNIT_EXPECT_EQ(test, cqe.sl, 3);
	KUNIT_EXPECT_EQ(test, cqe.wc_flags, 0);
}

static void stag_cq_kernel_timestamps_refused(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagqc");
	struct ib_cq_init_attr attr = {
		.cqe = 8, .flags = IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION,
	};
	struct ib_cq *cq = ib_create_cq(r->ibdev, NULL, NULL, NULL, &attr);

	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(cq), -EOPNOTSUPP);
	if (!IS_ERR(cq))
		ib_destroy_cq(cq);
}

/* After an error every outstanding request is flushed, in order. */
static void stag_qp_kernel_flush(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagq5");
	struct ib_qp *a = qp_create(test, r, IB_QPT_RC);
	struct ib_qp *b = qp_create(test, r, IB_QPT_RC);
	u32 lkey = r->pd->local_dma_lkey;
	u8 *buf = kbuf(test, 64, 0);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	connect(test, r, a, b);
	KUNIT_ASSERT_EQ(test, post_recv(a, 30, buf, 64, lkey), 0);
	KUNIT_ASSERT_EQ(test, post_recv(a, 31, buf, 64, lkey), 0);
	/* No receive at b and rnr_retry 0: the first send fails. */
	KUNIT_ASSERT_EQ(test, post_send(a, 32, IB_WR_SEND, buf, 8, lkey), 0);
	KUNIT_ASSERT_EQ(test, post_send(a, 33, IB_WR_SEND, buf, 8, lkey), 0);
	expect_wc(test, r, 32, IB_WC_RNR_RETRY_EXC_ERR, 0);
	expect_wc(test, r, 33, IB_WC_WR_FLUSH_ERR, 0);
	expect_wc(test, r, 30, IB_WC_WR_FLUSH_ERR, 0);
	expect_wc(test, r, 31, IB_WC_WR_FLUSH_ERR, 0);
	/* Posted in the error state: flushed too. */
	KUNIT_ASSERT_EQ(test, post_recv(a, 34, buf, 64, lkey), 0);
	expect_wc(test, r, 34, IB_WC_WR_FLUSH_ERR, 0);
	KUNIT_ASSERT_EQ(test, post_send(a, 35, IB_WR_SEND, buf, 8, lkey), 0);
	expect_wc(test, r, 35, IB_WC_WR_FLUSH_ERR, 0);
	KUNIT_EXPECT_EQ(test, ib_modify_qp(b, &attr, IB_QP_STATE), 0);
}

/* A send to a QP number nobody has: no answer, retries, then RETRY_EXC. */
static void stag_qp_kernel_retry_exceeded(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagq6");
	struct ib_qp *a = qp_create(test, r, IB_QPT_RC);
	u8 *buf = kbuf(test, 8, 0);

	KUNIT_ASSERT_EQ(test, to_init(a), 0);
	KUNIT_ASSERT_EQ(test, to_rtr(r, a, 0xabcdef), 0);
	KUNIT_ASSERT_EQ(test, to_rts(a, 1, 0), 0);
	KUNIT_ASSERT_EQ(test, post_send(a, 40, IB_WR_SEND, buf, 8, r->pd->local_dma_lkey), 0);
	expect_wc(test, r, 40, IB_WC_RETRY_EXC_ERR, 0);
}

/*
 * A REG_MR runs on the I/O path of storage ULPs, in a WQ_MEM_RECLAIM work:
 * an allocation there could wait on the writeback it is part of. It
 * allocates nothing: run here with preemption off, where an allocation
 * that may sleep is reported. A second registration after LOCAL_INV
 * reuses the region's list for other pages.
 */
static void stag_qp_kernel_fast_reg_allocates_nothing(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagq7");
	struct ib_qp *a = qp_create(test, r, IB_QPT_RC);
	struct ib_qp *b = qp_create(test, r, IB_QPT_RC);
	u8 *one = kbuf(test, PAGE_SIZE, 0x11), *two = kbuf(test, PAGE_SIZE, 0x22);
	u8 *src = kbuf(test, 8, 0x77);
	struct ib_mr *mr = ib_alloc_mr(r->pd, IB_MR_TYPE_MEM_REG, 4);
	struct stag_reg_wr reg = { .access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE };
	struct ib_send_wr inv = { .wr_id = 0xf01, .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED };
	enum ib_wc_status status;
	struct scatterlist sg;
	u8 *buf[] = { one, two };
	int i;

	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dereg_mr_action, mr), 0);
	connect(test, r, a, b);
	for (i = 0; i < ARRAY_SIZE(buf); i++) {
		sg_init_one(&sg, buf[i], PAGE_SIZE);
		KUNIT_ASSERT_EQ(test, ib_dma_map_sg(r->ibdev, &sg, 1, DMA_BIDIRECTIONAL), 1);
		KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
		ib_update_fast_reg_key(mr, 0x40 + i);
		reg.mr = (uintptr_t)mr;
		reg.key = mr->rkey;
		preempt_disable();
		status = stag_mr_fast_reg(to_stag_qp(b), &reg);
		preempt_enable();
		KUNIT_ASSERT_EQ(test, status, IB_WC_SUCCESS);

		KUNIT_ASSERT_EQ(test, post_rdma(a, i, IB_WR_RDMA_WRITE, src, 8,
						r->pd->local_dma_lkey, mr->iova, mr->rkey), 0);
		expect_wc(test, r, i, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
		KUNIT_EXPECT_MEMEQ(test, buf[i], src, 8);

		inv.ex.invalidate_rkey = mr->rkey;
		KUNIT_ASSERT_EQ(test, ib_post_send(b, &inv, NULL), 0);
		expect_wc(test, r, 0xf01, IB_WC_SUCCESS, IB_WC_LOCAL_INV);
	}
	KUNIT_EXPECT_EQ(test, two[8], 0x22);
	KUNIT_EXPECT_EQ(test, one[8], 0x11);
}

/*
 * A ring shared with a process belongs to its mmap entry: destroying the
 * queue while an mmap() holds the entry (inside remap_vmalloc_range())
 * must leave the ring there until the entry's last holder lets go.
 */
static void stag_qp_shared_ring_outlives_mmap(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagq8");
	struct ib_ucontext *uctx = kunit_kzalloc(test, sizeof(*uctx), GFP_KERNEL);
	struct stag_mmap_entry *entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	struct stag_queue_ctl *ctl;
	struct stag_queue q;

	KUNIT_ASSERT_NOT_NULL(test, uctx);
	KUNIT_ASSERT_NOT_NULL(test, entry);
	uctx->device = r->ibdev;
	xa_init_flags(&uctx->mmap_xa, XA_FLAGS_ALLOC);
	KUNIT_ASSERT_EQ(test, stag_queue_init(&q, 4, 64), 0);
	/* As rdma_user_mmap_entry_insert() leaves it: one reference. */
	kref_init(&entry->rdma.ref);
	entry->rdma.ucontext = uctx;
	entry->addr = q.ctl;
	q.mmap = entry;

	/* An mmap() in progress: rdma_user_mmap_entry_get() took the entry. */
	kref_get(&entry->rdma.ref);
	stag_queue_uninit(&q);
	/* What remap_vmalloc_range() looks up; vfree() would have unmapped it. */
	KUNIT_EXPECT_NOT_NULL(test, vmalloc_to_page(entry->addr));
	ctl = entry->addr;
	WRITE_ONCE(ctl->prod, 7);
	KUNIT_EXPECT_EQ(test, READ_ONCE(ctl->prod), 7);
	/* The mmap() ends: the ring goes with the entry (stag_queue_mmap_free()). */
	rdma_user_mmap_entry_put(&entry->rdma);
}

/* A stranger on this host connects to a QP that has a peer: it is not heard. */
static void stag_qp_kernel_stranger_dropped(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagq9");
	struct ib_qp *a = qp_create(test, r, IB_QPT_RC);
	struct ib_qp *b = qp_create(test, r, IB_QPT_RC);
	struct ib_qp *x = qp_create(test, r, IB_QPT_RC);
	struct stag_dev *sdev = to_stag_dev(r->ibdev);
	u32 lkey = r->pd->local_dma_lkey;
	u8 *src = kbuf(test, 8, 0x66), *dst = kbuf(test, 8, 0xee);
	u64 dropped = stag_counter_read(sdev, STAG_CNT_DROP_NOT_PEER);

	connect(test, r, a, b);
	KUNIT_ASSERT_EQ(test, to_init(x), 0);
	KUNIT_ASSERT_EQ(test, to_rtr(r, x, b->qp_num), 0);
	KUNIT_ASSERT_EQ(test, to_rts(x, 0, 0), 0);
	KUNIT_ASSERT_EQ(test, post_recv(b, 50, dst, 8, lkey), 0);
	KUNIT_ASSERT_EQ(test, post_send(x, 51, IB_WR_SEND, src, 8, lkey), 0);
	expect_wc(test, r, 51, IB_WC_RETRY_EXC_ERR, 0);
	KUNIT_EXPECT_EQ(test, dst[0], 0xee);
	KUNIT_EXPECT_EQ(test, stag_counter_read(sdev, STAG_CNT_DROP_NOT_PEER), dropped + 1);
	KUNIT_EXPECT_EQ(test, stag_qp_state(to_stag_qp(b)), IB_QPS_RTS);
	/* The receive is still there for the real peer. */
	KUNIT_ASSERT_EQ(test, post_send(a, 52, IB_WR_SEND, src, 8, lkey), 0);
	expect_wc(test, r, 50, IB_WC_SUCCESS, IB_WC_RECV);
	expect_wc(test, r, 52, IB_WC_SUCCESS, IB_WC_SEND);
	KUNIT_EXPECT_MEMEQ(test, dst, src, 8);
}

#define STALE_QKEY	0x11110000
#define GRH_LEN		40

/* A UD QP through INIT and RTR to RTS. */
static int ud_ready(struct ib_qp *qp)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT, .port_num = 1, .qkey = STALE_QKEY };
	int ret;

	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY);
	a.qp_state = IB_QPS_RTR;
	ret = ret ?: ib_modify_qp(qp, &a, IB_QP_STATE);
	a.qp_state = IB_QPS_RTS;
	return ret ?: ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN);
}

/*
 * A UD SEND-only of @len bytes of @fill to @qpn as roce_rcv() hands it on:
 * the data at the BTH, the IPv4 header before it; parsed into @p.
 */
static struct sk_buff *ud_packet(struct kunit *test, u32 qpn, u8 fill, u32 len,
				 struct stag_pkt *p)
{
	struct stag_pkt in = {
		.opcode = STAG_OP_UD | STAG_OP_SEND_ONLY, .pkey = 0xffff, .qpn = qpn, .psn = 1,
		.qkey = STALE_QKEY, .src_qpn = 0x123, .pad = stag_pkt_pad(len),
	};
	u32 hlen = stag_pkt_ops[in.opcode].hlen;
	struct sk_buff *skb = alloc_skb(sizeof(struct iphdr) + hlen + len + in.pad + STAG_ICRC_LEN,
					GFP_KERNEL);
	struct iphdr *iph;

	KUNIT_ASSERT_NOT_NULL(test, skb);
	iph = skb_put_zero(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = htonl(0x0a000002);
	iph->daddr = htonl(0x0a000001);
	skb_reset_network_header(skb);
	stag_pkt_build(skb_put(skb, hlen), &in);
	memset(skb_put(skb, len), fill, len);
	skb_put_zero(skb, in.pad + STAG_ICRC_LEN);
	__skb_pull(skb, sizeof(*iph));
	if (stag_pkt_parse(skb->data, skb->len, p)) {
		kfree_skb(skb);
		KUNIT_FAIL_AND_ABORT(test, "the packet built does not parse");
	}
	return skb;
}

/*
 * deliver() reads the QP's number of RESETs, checks a packet for it, and
 * queues it, holding nothing a RESET waits for. A packet checked, then
 * queued only after the QP went through RESET and back to RTS (on the
 * wire: connected again, perhaps to the same peer, whose old PSNs may fit)
 * belongs to the QP's past: its work drops it, counted under
 * drop_qp_state, and the receive posted since waits for a packet of its
 * own. The test stands in deliver()'s gap, between the check and the
 * queueing; the same packet checked after the RESET lands.
 */
static void stag_qp_kernel_stale_packet_dropped(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagq10");
	struct ib_qp *b = qp_create(test, r, IB_QPT_UD);
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	struct stag_dev *sdev = to_stag_dev(r->ibdev);
	struct stag_qp *qp = to_stag_qp(b);
	u8 *dst = kbuf(test, GRH_LEN + 8, 0xee);
	struct stag_pkt p;
	struct sk_buff *skb;
	struct ib_wc wc;
	u64 dropped;
	u32 gen;
	int i;

	KUNIT_ASSERT_EQ(test, ud_ready(b), 0);
	gen = stag_roce_qp_gen(qp);
	skb = ud_packet(test, b->qp_num, 0x5a, 8, &p);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(b, &reset, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(test, ud_ready(b), 0);
	KUNIT_EXPECT_NE(test, stag_roce_qp_gen(qp), gen);
	KUNIT_ASSERT_EQ(test, post_recv(b, 60, dst, GRH_LEN + 8, r->pd->local_dma_lkey), 0);
	dropped = stag_counter_read(sdev, STAG_CNT_DROP_QP_STATE);
	if (!stag_roce_enqueue(qp, skb, &p, gen)) {
		kfree_skb(skb);
		KUNIT_FAIL_AND_ABORT(test, "the QP's queue is full");
	}
	for (i = 0; i < 200 && stag_counter_read(sdev, STAG_CNT_DROP_QP_STATE) == dropped; i++)
		msleep(20);
	KUNIT_EXPECT_EQ(test, stag_counter_read(sdev, STAG_CNT_DROP_QP_STATE), dropped + 1);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(r->cq, 1, &wc), 0);
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(dst, 0xee, GRH_LEN + 8), NULL);

	skb = ud_packet(test, b->qp_num, 0x5a, 8, &p);
	if (!stag_roce_enqueue(qp, skb, &p, stag_roce_qp_gen(qp))) {
		kfree_skb(skb);
		KUNIT_FAIL_AND_ABORT(test, "the QP's queue is full");
	}
	expect_wc(test, r, 60, IB_WC_SUCCESS, IB_WC_RECV);
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(dst + GRH_LEN, 0x5a, 8), NULL);
	KUNIT_EXPECT_EQ(test, stag_counter_read(sdev, STAG_CNT_DROP_QP_STATE), dropped + 1);
}

static struct kunit_case stag_qp_cases[] = {
	KUNIT_CASE_PARAM(stag_qp_attr_values, attr_gen_params),
	KUNIT_CASE(stag_qp_transitions),
	KUNIT_CASE(stag_qp_kernel_send_recv),
	KUNIT_CASE(stag_qp_kernel_rdma_frmr),
	KUNIT_CASE(stag_qp_kernel_local_inv),
	KUNIT_CASE(stag_qp_kernel_atomics),
	KUNIT_CASE(stag_qp_kernel_atomic_write),
	KUNIT_CASE(stag_cq_kernel_timestamps_refused),
	KUNIT_CASE(stag_cq_cqe_roce_packet_type),
	KUNIT_CASE(stag_srq_kernel_resize),
	KUNIT_CASE(stag_qp_kernel_flush),
	KUNIT_CASE(stag_qp_kernel_retry_exceeded),
	KUNIT_CASE(stag_qp_kernel_fast_reg_allocates_nothing),
	KUNIT_CASE(stag_qp_shared_ring_outlives_mmap),
	KUNIT_CASE(stag_qp_kernel_stranger_dropped),
	KUNIT_CASE(stag_qp_kernel_stale_packet_dropped),
	{}
};

static struct kunit_suite stag_qp_suite = {
	.name = "stag_qp",
	.test_cases = stag_qp_cases,
};

kunit_test_suites(&stag_qp_suite);
