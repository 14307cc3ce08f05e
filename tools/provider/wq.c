// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: receive WQs and indirection tables. A WQ's
 * ring is laid out as an SRQ's; the kernel takes its receives as frames
 * arrive, so posting makes no system call unless the WQ is in the error
 * state: then the kernel flushes what was posted when the provider rings,
 * and a WQ's doorbell is a modify to the state it is in (ERR).
 */
#include <errno.h>
#include <stdlib.h>

#include "cq.h"
#include "stagdv.h"
#include "wq.h"

struct stag_create_wq_resp_full {
	struct ib_uverbs_ex_create_wq_resp ibv_resp;
	struct stag_create_wq_resp drv;
};

static_assert(offsetof(struct stag_create_wq_resp_full, drv) ==
	      sizeof(struct ib_uverbs_ex_create_wq_resp), "padding before the udata");

/*
 * The kernel flushes the ring: ring for what was just posted. The
 * doorbell is a modify from ERR to ERR, and only from ERR: another thread
 * may have reset the WQ, and made it ready, since this one saw the flag.
 * The kernel then refuses the modify (EINVAL), the WQ left alone, and
 * there is nothing to flush.
 */
static int wq_doorbell(struct ibv_wq *ibwq)
{
	struct ibv_wq_attr attr = {
		.attr_mask = IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE,
		.wq_state = IBV_WQS_ERR,
		.curr_wq_state = IBV_WQS_ERR,
	};
	struct ibv_modify_wq cmd = {};
	int ret;

	ret = ibv_cmd_modify_wq(ibwq, &attr, &cmd, sizeof(cmd));
	return ret == EINVAL ? 0 : ret;
}

/*
 * A doorbell that cannot be written means the WQ or the device is gone
 * and nothing posted will complete: the whole list is reported as not
 * posted, as for a QP.
 */
static int stag_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr)
{
	struct stag_wq *wq = to_stag_wq(ibwq);
	int ret, db;

	ret = stag_queue_post_recv(&wq->queue, wq->max_sge, wr, bad_wr);
	if (!stag_queue_flushing(&wq->queue))
		return ret;
	db = wq_doorbell(ibwq);
	if (db && !ret) {
		*bad_wr = wr;
		ret = db;
	}
	return ret;
}

struct stag_create_wq_full {
	struct ibv_create_wq ibv_cmd;
	struct stag_create_wq_cmd drv;
};

static_assert(offsetof(struct stag_create_wq_full, drv) == sizeof(struct ibv_create_wq),
	      "padding before the udata");

struct ibv_wq *stag_create_wq(struct ibv_context *ctx, struct ibv_wq_init_attr *attr)
{
	struct stag_create_wq_resp_full resp = {};
	struct stag_create_wq_full cmd = {};
	size_t cmd_size = sizeof(cmd.ibv_cmd);
	struct stag_wq *wq;
	int ret;

	wq = calloc(1, sizeof(*wq));
	if (!wq)
		return NULL;
	/* The ring's memory from the parent domain the WQ is made in, if it has allocators. */
	ret = stag_queue_alloc(&wq->queue, attr->pd, STAGDV_RES_TYPE_WQ,
			       stag_ring_slots(attr->max_wr), stag_recv_slot_size(attr->max_sge),
			       &cmd.drv.ring);
	if (ret)
		goto err_free;
	if (cmd.drv.ring.addr)
		cmd_size = sizeof(cmd);

	ret = ibv_cmd_create_wq(ctx, attr, &wq->wq, &cmd.ibv_cmd, cmd_size, &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto err_free;
	wq->max_sge = attr->max_sge;
	ret = stag_queue_map(&wq->queue, ctx->cmd_fd, resp.drv.offset, resp.drv.num_slots,
			     resp.drv.slot_size,
			     sizeof(struct stag_recv_wqe) +
			     (uint64_t)wq->max_sge * sizeof(struct stag_sge));
	if (ret) {
		ibv_cmd_destroy_wq(&wq->wq);
		goto err_free;
	}
	wq->wq.state = IBV_WQS_RESET;
	wq->wq.post_recv = stag_post_wq_recv;
	return &wq->wq;

err_free:
	stag_queue_free(&wq->queue);
	free(wq);
	errno = ret;
	return NULL;
}

/*
 * A WQ moved to RESET leaves no completions behind in its CQ, as a QP's
 * reset does not (and as mlx5's provider does for its WQs): the kernel
 * produces none for the WQ once the reset has returned.
 */
int stag_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr)
{
	struct ibv_modify_wq cmd = {};
	int ret;

	ret = ibv_cmd_modify_wq(ibwq, attr, &cmd, sizeof(cmd));
	if (!ret && (attr->attr_mask & IBV_WQ_ATTR_STATE) && attr->wq_state == IBV_WQS_RESET)
		stag_cq_clean(ibwq->cq, ibwq->wq_num);
	return ret;
}

int stag_destroy_wq(struct ibv_wq *ibwq)
{
	struct stag_wq *wq = to_stag_wq(ibwq);
	int ret;

	/* On failure (a table still names it) the kernel still reads the ring. */
	ret = ibv_cmd_destroy_wq(ibwq);
	if (ret)
		return ret;
	stag_queue_unmap(&wq->queue);
	free(wq);
	return 0;
}

struct ibv_rwq_ind_table *stag_create_rwq_ind_table(struct ibv_context *ctx,
						    struct ibv_rwq_ind_table_init_attr *attr)
{
	struct ib_uverbs_ex_create_rwq_ind_table_resp resp = {};
	struct ibv_rwq_ind_table *tbl;
	int ret;

	tbl = calloc(1, sizeof(*tbl));
	if (!tbl)
		return NULL;
	ret = ibv_cmd_create_rwq_ind_table(ctx, attr, tbl, &resp, sizeof(resp));
	if (ret) {
		free(tbl);
		errno = ret;
		return NULL;
	}
	return tbl;
}

int stag_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl)
{
	int ret;

	ret = ibv_cmd_destroy_rwq_ind_table(tbl);
	if (ret)
		return ret;
	free(tbl);
	return 0;
}
