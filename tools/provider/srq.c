// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: shared receive queues, basic, XRC and tag
 * matching alike. Receives are written into the SRQ's ring and published;
 * the kernel takes them as messages arrive, so posting never makes a
 * system call. A tag matching SRQ's list operations do, one each: the
 * kernel matches messages against the list as they arrive, and produces
 * the operations' completions into the SRQ's CQ.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "srq.h"
#include "stagdv.h"

struct stag_create_srq_resp_full {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct stag_create_srq_resp drv;
};

static_assert(offsetof(struct stag_create_srq_resp_full, drv) ==
	      sizeof(struct ib_uverbs_create_srq_resp), "padding before the udata");

struct stag_create_srq_full {
	struct ibv_create_srq ibv_cmd;
	struct stag_create_srq_cmd drv;
};

struct stag_create_xsrq_full {
	struct ibv_create_xsrq ibv_cmd;
	struct stag_create_srq_cmd drv;
};

static_assert(offsetof(struct stag_create_srq_full, drv) == sizeof(struct ibv_create_srq),
	      "padding before the udata");
static_assert(offsetof(struct stag_create_xsrq_full, drv) == sizeof(struct ibv_create_xsrq),
	      "padding before the udata");

/*
 * Memory for the ring from @pd's allocator, if it is a parent domain that
 * has one. Return: the command's size (with the driver tail only for
 * such memory), or 0 with errno set.
 */
static size_t srq_ring_alloc(struct stag_queue *q, struct ibv_pd *pd,
			     const struct ibv_srq_attr *attr, size_t cmd_size,
			     struct stag_create_srq_cmd *drv)
{
	int ret;

	ret = stag_queue_alloc(q, pd, STAGDV_RES_TYPE_SRQ, stag_ring_slots(attr->max_wr),
			       stag_recv_slot_size(attr->max_sge), &drv->ring);
	if (ret) {
		errno = ret;
		return 0;
	}
	return drv->ring.addr ? cmd_size + sizeof(*drv) : cmd_size;
}

/* What one slot of the SRQ's ring must hold: a WQE with max_sge entries. */
static uint64_t srq_min_slot(const struct stag_srq *srq)
{
	return sizeof(struct stag_recv_wqe) + (uint64_t)srq->max_sge * sizeof(struct stag_sge);
}

/*
 * Maps the ring of an SRQ the kernel just created, with @granted its
 * max_sge; an SRQ whose ring cannot be used is destroyed again.
 */
static int srq_map(struct stag_srq *srq, int cmd_fd, const struct ibv_srq_attr *granted,
		   const struct stag_create_srq_resp *drv)
{
	int ret;

	srq->max_sge = granted->max_sge;
	ret = stag_queue_map(&srq->queue, cmd_fd, drv->offset, drv->num_slots, drv->slot_size,
			     srq_min_slot(srq));
	if (ret) {
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		stag_queue_free(&srq->queue);
		return ret;
	}
	srq->vsrq.srq_num = drv->srq_num;
	return 0;
}

struct ibv_srq *stag_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct stag_create_srq_resp_full resp = {};
	struct stag_create_srq_full cmd = {};
	struct stag_srq *srq;
	size_t cmd_size;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	cmd_size = srq_ring_alloc(&srq->queue, pd, &attr->attr, sizeof(cmd.ibv_cmd), &cmd.drv);
	if (!cmd_size) {
		free(srq);
		return NULL;
	}

	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv_cmd, cmd_size, &resp.ibv_resp,
				 sizeof(resp));
	if (ret)
		stag_queue_free(&srq->queue);
	else
		ret = srq_map(srq, pd->context->cmd_fd, &attr->attr, &resp.drv);
	if (ret) {
		free(srq);
		errno = ret;
		return NULL;
	}
	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	return &srq->vsrq.srq;
}

/*
 * ibv_create_srq_ex() comes here for XRC and tag matching SRQs, and for a
 * basic one with more in its comp_mask than a PD; the ring and the udata
 * are a basic SRQ's in every case. A tag matching SRQ's operations
 * complete as they are posted, so any max_ops is met. Unlike
 * ibv_create_srq(), libibverbs fills nothing in after this returns.
 */
struct ibv_srq *stag_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr)
{
	struct stag_create_srq_resp_full resp = {};
	struct stag_create_xsrq_full cmd = {};
	struct stag_srq *srq;
	size_t cmd_size;
	int ret;

	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC &&
	    attr->srq_type != IBV_SRQT_XRC && attr->srq_type != IBV_SRQT_TM) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* libibverbs would send the domain's handle, which the kernel ignores for this type. */
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type == IBV_SRQT_TM &&
	    (attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD)) {
		errno = EINVAL;
		return NULL;
	}

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	cmd_size = srq_ring_alloc(&srq->queue, attr->comp_mask & IBV_SRQ_INIT_ATTR_PD ?
				  attr->pd : NULL, &attr->attr, sizeof(cmd.ibv_cmd), &cmd.drv);
	if (!cmd_size) {
		free(srq);
		return NULL;
	}

	ret = ibv_cmd_create_srq_ex(ctx, &srq->vsrq, attr, &cmd.ibv_cmd, cmd_size, &resp.ibv_resp,
				    sizeof(resp));
	if (ret)
		stag_queue_free(&srq->queue);
	else
		ret = srq_map(srq, ctx->cmd_fd, &attr->attr, &resp.drv);
	if (ret) {
		free(srq);
		errno = ret;
		return NULL;
	}
	srq->vsrq.srq.srq_context = attr->srq_context;
	srq->vsrq.srq.pd = attr->pd;
	srq->tm = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type == IBV_SRQT_TM;
	return &srq->vsrq.srq;
}

struct stag_modify_srq_full {
	struct ibv_modify_srq ibv_cmd;
	struct stag_modify_srq_cmd drv;
};

static_assert(offsetof(struct stag_modify_srq_full, drv) == sizeof(struct ibv_modify_srq),
	      "padding before the udata");

/*
 * A resize (IBV_SRQ_MAX_WR): the kernel copies the receives waiting into a
 * new ring and writes where it is into ring; posting stays locked out
 * until the new ring is mapped, so what the kernel copied is all there is.
 * A ring in a parent domain's memory moves to new memory from the same
 * allocator.
 */
int stag_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int attr_mask)
{
	struct stag_srq *srq = to_stag_srq(ibsrq);
	struct stag_modify_srq_full cmd = {};
	struct stag_srq_ring ring = {};
	struct stag_queue next = {};
	int ret;

	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
					  sizeof(cmd.ibv_cmd));
	ret = stag_queue_alloc_next(&srq->queue, &next, stag_ring_slots(attr->max_wr),
				    srq->queue.slot_size, &cmd.drv.ring);
	if (ret)
		return ret;
	cmd.drv.ring_addr = (uintptr_t)&ring;
	pthread_spin_lock(&srq->queue.lock);
	ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd, sizeof(cmd));
	if (!ret)
		ret = stag_queue_remap(&srq->queue, &next, ibsrq->context->cmd_fd, ring.offset,
				       ring.num_slots, ring.slot_size, srq_min_slot(srq));
	pthread_spin_unlock(&srq->queue.lock);
	/* The kernel refused it: the new memory was never its. */
	stag_queue_free(&next);
	return ret;
}

int stag_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int stag_destroy_srq(struct ibv_srq *ibsrq)
{
	struct stag_srq *srq = to_stag_srq(ibsrq);
	int ret;

	/* On failure the kernel still reads the ring: keep it mapped. */
	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;

	stag_queue_unmap(&srq->queue);
	free(srq);
	return 0;
}

/* Any SRQ's: what the kernel numbered it, which XRC INI QPs' sends name. */
int stag_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	*srq_num = to_stag_srq(ibsrq)->vsrq.srq_num;
	return 0;
}

/* The kernel takes SRQ receives when it needs one, for XRC too: no doorbell, ever. */
int stag_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct stag_srq *srq = to_stag_srq(ibsrq);

	return stag_queue_post_recv(&srq->queue, srq->max_sge, wr, bad_wr);
}

/* An operation as the kernel takes it; false for more elements than it holds. */
static bool op_from_wr(const struct ibv_ops_wr *wr, struct stag_srq_op *op)
{
	int i;

	memset(op, 0, sizeof(*op));
	op->wr_id = wr->wr_id;
	op->opcode = wr->opcode;
	op->flags = wr->flags;
	op->unexpected_cnt = wr->tm.unexpected_cnt;
	op->handle = wr->tm.handle;
	if (wr->opcode != IBV_WR_TAG_ADD)
		return true;
	if (wr->tm.add.num_sge < 0 || wr->tm.add.num_sge > STAG_TM_MAX_SGE)
		return false;
	op->recv_wr_id = wr->tm.add.recv_wr_id;
	op->tag = wr->tm.add.tag;
	op->mask = wr->tm.add.mask;
	op->num_sge = wr->tm.add.num_sge;
	for (i = 0; i < wr->tm.add.num_sge; i++) {
		op->sge[i].addr = wr->tm.add.sg_list[i].addr;
		op->sge[i].length = wr->tm.add.sg_list[i].length;
		op->sge[i].lkey = wr->tm.add.sg_list[i].lkey;
	}
	return true;
}

/*
 * ibv_post_srq_ops(): each operation is one command, done when it returns
 * (an ADD's handle written back into its request); the first that fails
 * stops the list. EINVAL for an SRQ without tag matching.
 */
int stag_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr, struct ibv_ops_wr **bad_wr)
{
	struct stag_srq *srq = to_stag_srq(ibsrq);
	struct stag_srq_op op;
	uint32_t handle;
	int ret = 0;

	for (; wr; wr = wr->next) {
		if (!srq->tm || !op_from_wr(wr, &op)) {
			ret = EINVAL;
			break;
		}
		handle = 0;
		ret = stag_srq_ops_ioctl(ibsrq, &op, &handle);
		if (ret)
			break;
		if (wr->opcode == IBV_WR_TAG_ADD)
			wr->tm.handle = handle;
	}
	if (ret)
		*bad_wr = wr;
	return ret;
}
