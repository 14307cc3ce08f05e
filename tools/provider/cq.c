// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: completion queues. The kernel produces
 * completions into the ring; polling consumes them without a system call.
 * Notification requests go to the kernel (ibv_cmd_req_notify_cq), and
 * completion channels work through libibverbs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cq.h"
#include "pd.h"
#include "stagdv.h"

struct stag_resize_cq_resp_full {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct stag_create_cq_resp drv;
};

static_assert(offsetof(struct stag_resize_cq_resp_full, drv) ==
	      sizeof(struct ib_uverbs_resize_cq_resp), "padding before the udata");

struct stag_create_cq_resp_full {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct stag_create_cq_resp drv;
};

struct stag_create_cq_ex_full {
	struct ibv_create_cq_ex ibv_cmd;
	struct stag_create_cq_cmd drv;
};

struct stag_resize_cq_full {
	struct ibv_resize_cq ibv_cmd;
	struct stag_create_cq_cmd drv;
};

static_assert(offsetof(struct stag_create_cq_ex_full, drv) == sizeof(struct ibv_create_cq_ex),
	      "padding before the udata");
static_assert(offsetof(struct stag_resize_cq_full, drv) == sizeof(struct ibv_resize_cq),
	      "padding before the udata");

struct stag_create_cq_ex_resp_full {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct stag_create_cq_resp drv;
};

static_assert(offsetof(struct stag_create_cq_resp_full, drv) ==
	      sizeof(struct ib_uverbs_create_cq_resp), "padding before the udata");
static_assert(offsetof(struct stag_create_cq_ex_resp_full, drv) ==
	      sizeof(struct ib_uverbs_ex_create_cq_resp), "padding before the udata");

/* The slot layouts are ABI: 48 bytes, 64 with the two clocks, 80 with a tag. */
static_assert(sizeof(struct stag_cqe) == 48, "stag_cqe size");
static_assert(sizeof(struct stag_cqe_ts) == 64 &&
	      offsetof(struct stag_cqe_ts, completion_ts) == 48, "stag_cqe_ts layout");
static_assert(sizeof(struct stag_cqe_tm) == 80 && offsetof(struct stag_cqe_tm, tag) == 64,
	      "stag_cqe_tm layout");

/* The kernel's completion flags are those of struct ibv_wc. */
#define SAME_VALUE(_ibv, _stag) static_assert((int)(_ibv) == (int)(_stag), #_ibv)
SAME_VALUE(IBV_WC_GRH, STAG_WC_GRH);
SAME_VALUE(IBV_WC_WITH_IMM, STAG_WC_WITH_IMM);
SAME_VALUE(IBV_WC_WITH_INV, STAG_WC_WITH_INV);
SAME_VALUE(IBV_WC_TM_SYNC_REQ, STAG_WC_TM_SYNC_REQ);
SAME_VALUE(IBV_WC_TM_MATCH, STAG_WC_TM_MATCH);
SAME_VALUE(IBV_WC_TM_DATA_VALID, STAG_WC_TM_DATA_VALID);
SAME_VALUE(IBV_WC_TM_ADD, STAG_WC_TM_ADD);
SAME_VALUE(IBV_WC_TM_DEL, STAG_WC_TM_DEL);
SAME_VALUE(IBV_WC_TM_SYNC, STAG_WC_TM_SYNC);
SAME_VALUE(IBV_WC_TM_RECV, STAG_WC_TM_RECV);
SAME_VALUE(IBV_WC_TM_NO_TAG, STAG_WC_TM_NO_TAG);
SAME_VALUE(IBV_WC_TM_ERR, STAG_WC_TM_ERR);
SAME_VALUE(IBV_WC_TM_RNDV_INCOMPLETE, STAG_WC_TM_RNDV_INCOMPLETE);

/* The fields a stag_cqe carries, stag_cqe_ts's clocks and stag_cqe_tm's tag. */
#define TIMESTAMP_WC_FLAGS	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
				 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define SUPPORTED_WC_FLAGS	(IBV_WC_STANDARD_FLAGS | TIMESTAMP_WC_FLAGS | \
				 IBV_WC_EX_WITH_TM_INFO)

static inline struct stag_cq *ex_to_stag_cq(struct ibv_cq_ex *cq)
{
	return container_of(cq, struct stag_cq, vcq.cq_ex);
}

/*
 * Until libibverbs initialises the CQ (after create returns), its mutex
 * and condition variable are calloc()'s zeroes, which glibc takes as the
 * static initialisers, and no events are outstanding: destroying it then
 * does not wait.
 */
static void cq_undo_create(struct stag_cq *cq)
{
	ibv_cmd_destroy_cq(&cq->vcq.cq);
}

/* What a slot must hold: a kernel without timestamps or tags refused the create. */
static size_t cqe_size(const struct stag_cq *cq)
{
	if (cq->tm)
		return sizeof(struct stag_cqe_tm);
	return cq->timestamps ? sizeof(struct stag_cqe_ts) : sizeof(struct stag_cqe);
}

static int cq_map(struct stag_cq *cq, struct ibv_context *ctx,
		  const struct stag_create_cq_resp *drv)
{
	return stag_queue_map(&cq->queue, ctx->cmd_fd, drv->offset, drv->num_slots,
			      drv->slot_size, cqe_size(cq));
}

struct ibv_cq *stag_create_cq(struct ibv_context *ctx, int cqe, struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct stag_create_cq_resp_full resp = {};
	struct ibv_create_cq cmd = {};
	struct stag_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->vcq.cq, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free_cq;

	ret = cq_map(cq, ctx, &resp.drv);
	if (ret)
		goto err_destroy_cq;
	return &cq->vcq.cq;

err_destroy_cq:
	cq_undo_create(cq);
err_free_cq:
	free(cq);
	errno = ret;
	return NULL;
}

/* Each poll reads the slot once: the ring is the kernel's to rewrite after. */
static void cqe_to_wc(const struct stag_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	/* imm_data is already in network order; the union holds the rkey too. */
	wc->imm_data = cqe->ex;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

int stag_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct stag_cq *cq = to_stag_cq(ibcq);
	const struct stag_cqe *cqe;
	int n;

	pthread_spin_lock(&cq->queue.lock);
	stag_queue_cons_begin(&cq->queue);
	for (n = 0; n < num_entries; n++) {
		cqe = stag_queue_cons_slot(&cq->queue);
		if (!cqe)
			break;
		cqe_to_wc(cqe, &wc[n]);
		stag_queue_cons_advance(&cq->queue);
	}
	if (n)
		stag_queue_cons_publish(&cq->queue);
	pthread_spin_unlock(&cq->queue.lock);
	return n;
}

/*
 * Extended polling: start_poll takes the ring's lock and end_poll drops
 * it; each completion is copied out as it is taken, and the kernel gets
 * the slots back at end_poll.
 */
static bool take_cqe(struct stag_cq *cq)
{
	const struct stag_cqe *cqe = stag_queue_cons_slot(&cq->queue);

	if (!cqe)
		return false;
	memcpy(&cq->cur, cqe, sizeof(cq->cur));
	if (cq->timestamps) {
		const struct stag_cqe_ts *t = (const struct stag_cqe_ts *)cqe;

		cq->cur_ts = t->completion_ts;
		cq->cur_wallclock_ns = t->wallclock_ns;
	}
	if (cq->tm) {
		const struct stag_cqe_tm *t = (const struct stag_cqe_tm *)cqe;

		cq->cur_tag = t->tag;
		cq->cur_priv = t->priv;
	}
	stag_queue_cons_advance(&cq->queue);
	cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
	cq->vcq.cq_ex.status = cq->cur.status;
	return true;
}

static int cq_next_poll(struct ibv_cq_ex *ibcq)
{
	return take_cqe(ex_to_stag_cq(ibcq)) ? 0 : ENOENT;
}

static int cq_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct stag_cq *cq = ex_to_stag_cq(ibcq);
	int ret;

	/* No poll attributes are defined. */
	ret = attr->comp_mask ? EINVAL : 0;
	if (ret)
		return ret;

	pthread_spin_lock(&cq->queue.lock);
	stag_queue_cons_begin(&cq->queue);
	ret = cq_next_poll(ibcq);
	/* An error ends the poll: the caller does not call end_poll. */
	if (ret)
		pthread_spin_unlock(&cq->queue.lock);
	return ret;
}

static void cq_end_poll(struct ibv_cq_ex *ibcq)
{
	struct stag_cq *cq = ex_to_stag_cq(ibcq);

	stag_queue_cons_publish(&cq->queue);
	pthread_spin_unlock(&cq->queue.lock);
}

static enum ibv_wc_opcode cq_read_opcode(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur.opcode;
}

static uint32_t cq_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur.vendor_err;
}

static uint32_t cq_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur.byte_len;
}

static __be32 cq_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur.ex;
}

static uint32_t cq_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur.qp_num;
}

static uint32_t cq_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur.src_qp;
}

static unsigned int cq_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur.wc_flags;
}

static uint32_t cq_read_slid(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur.slid;
}

static uint8_t cq_read_sl(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur.sl;
}

static uint8_t cq_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur.dlid_path_bits;
}

static uint64_t cq_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur_ts;
}

static uint64_t cq_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	return ex_to_stag_cq(ibcq)->cur_wallclock_ns;
}

static void cq_read_tm_info(struct ibv_cq_ex *ibcq, struct ibv_wc_tm_info *tm_info)
{
	struct stag_cq *cq = ex_to_stag_cq(ibcq);

	tm_info->tag = cq->cur_tag;
	tm_info->priv = cq->cur_priv;
}

static void cq_set_ex_ops(struct ibv_cq_ex *cq)
{
	cq->start_poll = cq_start_poll;
	cq->next_poll = cq_next_poll;
	cq->end_poll = cq_end_poll;
	cq->read_opcode = cq_read_opcode;
	cq->read_vendor_err = cq_read_vendor_err;
	cq->read_byte_len = cq_read_byte_len;
	cq->read_imm_data = cq_read_imm_data;
	cq->read_qp_num = cq_read_qp_num;
	cq->read_src_qp = cq_read_src_qp;
	cq->read_wc_flags = cq_read_wc_flags;
	cq->read_slid = cq_read_slid;
	cq->read_sl = cq_read_sl;
	cq->read_dlid_path_bits = cq_read_dlid_path_bits;
	cq->read_completion_ts = cq_read_completion_ts;
	cq->read_completion_wallclock_ns = cq_read_completion_wallclock_ns;
	cq->read_tm_info = cq_read_tm_info;
}

/*
 * Single-threaded CQs may skip locking; stag locks anyway. The parent
 * domain a CQ may name (IBV_CQ_INIT_ATTR_MASK_PD) lends it its allocators
 * for the ring; its thread domain stag has no use for.
 */
static bool cq_attr_supported(const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD))
		return false;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return false;
	return !(attr->wc_flags & ~(uint64_t)SUPPORTED_WC_FLAGS);
}

/*
 * Memory for the ring of a CQ of @cqe completions from @pd's allocator, if
 * it is a parent domain that has one; the command has a driver tail only
 * for such memory or for tag matching slots. Return: the command's size,
 * or 0 with errno set.
 */
static size_t cq_ring_alloc(struct stag_cq *cq, struct ibv_pd *pd, uint32_t cqe,
			    size_t cmd_size, struct stag_create_cq_cmd *drv)
{
	int ret;

	ret = stag_queue_alloc(&cq->queue, pd, STAGDV_RES_TYPE_CQ, stag_ring_slots(cqe + 1),
			       cqe_size(cq), &drv->ring);
	if (ret) {
		errno = ret;
		return 0;
	}
	if (cq->tm)
		drv->flags = STAG_CQ_TM_INFO;
	return drv->ring.addr || drv->flags ? cmd_size + sizeof(*drv) : cmd_size;
}

struct ibv_cq_ex *stag_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	struct stag_create_cq_ex_resp_full resp = {};
	struct stag_create_cq_ex_full cmd = {};
	struct ibv_cq_init_attr_ex kattr;
	struct ibv_pd *parent;
	struct stag_cq *cq;
	size_t cmd_size;
	int ret;

	if (!cq_attr_supported(attr)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    !stag_pd_is_parent(ctx, attr->parent_domain)) {
		errno = EINVAL;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	/* libibverbs asks the kernel for timestamps for either clock. */
	cq->timestamps = attr->wc_flags & TIMESTAMP_WC_FLAGS;
	cq->tm = attr->wc_flags & IBV_WC_EX_WITH_TM_INFO;

	parent = attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD ? attr->parent_domain : NULL;
	cmd_size = cq_ring_alloc(cq, parent, attr->cqe, sizeof(cmd.ibv_cmd), &cmd.drv);
	if (!cmd_size) {
		free(cq);
		return NULL;
	}

	/* libibverbs' command refuses the PD mask: the kernel hears nothing of it. */
	kattr = *attr;
	kattr.comp_mask &= ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_PD;
	ret = stag_cmd_create_cq_ex(ctx, &kattr, &cq->vcq, &cmd.ibv_cmd, cmd_size, &resp.ibv_resp,
				    sizeof(resp), 0);
	if (ret)
		goto err_free_cq;

	ret = cq_map(cq, ctx, &resp.drv);
	if (ret)
		goto err_destroy_cq;

	cq_set_ex_ops(&cq->vcq.cq_ex);
	return &cq->vcq.cq_ex;

err_destroy_cq:
	cq_undo_create(cq);
err_free_cq:
	stag_queue_free(&cq->queue);
	free(cq);
	errno = ret;
	return NULL;
}

int stag_destroy_cq(struct ibv_cq *ibcq)
{
	struct stag_cq *cq = to_stag_cq(ibcq);
	int ret;

	/* On failure the kernel still writes into the ring: keep it mapped. */
	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	stag_queue_unmap(&cq->queue);
	free(cq);
	return 0;
}

/**
 * stag_cq_clean() - drop the completions of one QP from a CQ
 * @ibcq: the CQ
 * @qpn: the QP, just moved to RESET
 *
 * As mlx5's provider does: completions of a QP that was reset are gone
 * with it, so that a QP reused after RESET does not poll the flushes of
 * its past life. The kernel produces nothing for the QP once the reset
 * has returned, and only ever writes at or beyond the producer index read
 * here: walking back from it, every other QP's completion moves up over
 * the dropped ones, and the consumer index then moves past the gap.
 */
void stag_cq_clean(struct ibv_cq *ibcq, uint32_t qpn)
{
	struct stag_queue *q = &to_stag_cq(ibcq)->queue;
	uint32_t prod, cons, i, dropped = 0;

	pthread_spin_lock(&q->lock);
	stag_queue_cons_begin(q);
	cons = q->index;
	/* Pairs with the kernel's release of prod: the slots are filled. */
	prod = __atomic_load_n(&q->ctl->prod, __ATOMIC_ACQUIRE);
	if (prod - cons > q->num_slots)
		goto out_unlock;
	for (i = prod; i != cons;) {
		const struct stag_cqe *cqe = stag_queue_slot(q, --i);

		if (cqe->qp_num == qpn)
			dropped++;
		else if (dropped)
			memcpy(stag_queue_slot(q, i + dropped), cqe, cqe_size(to_stag_cq(ibcq)));
	}
	if (dropped) {
		q->index = cons + dropped;
		stag_queue_cons_publish(q);
	}
out_unlock:
	pthread_spin_unlock(&q->lock);
}

/*
 * The kernel copies the completions waiting into a new ring and tells
 * where it is; polling stays locked out until the new ring is mapped, so
 * the consumer index the kernel read is the last the old ring had. A ring
 * in a parent domain's memory moves to new memory from the same
 * allocator.
 */
int stag_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct stag_cq *cq = to_stag_cq(ibcq);
	struct stag_resize_cq_resp_full resp = {};
	struct stag_resize_cq_full cmd = {};
	struct stag_queue next = {};
	size_t cmd_size = sizeof(cmd.ibv_cmd);
	int ret;

	ret = stag_queue_alloc_next(&cq->queue, &next, stag_ring_slots((uint32_t)cqe + 1),
				    cqe_size(cq), &cmd.drv.ring);
	if (ret)
		return ret;
	if (cmd.drv.ring.addr)
		cmd_size = sizeof(cmd);
	pthread_spin_lock(&cq->queue.lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, cmd_size, &resp.ibv_resp, sizeof(resp));
	if (!ret)
		ret = stag_queue_remap(&cq->queue, &next, ibcq->context->cmd_fd, resp.drv.offset,
				       resp.drv.num_slots, resp.drv.slot_size, cqe_size(cq));
	pthread_spin_unlock(&cq->queue.lock);
	/* The kernel refused it: the new memory was never its. */
	stag_queue_free(&next);
	return ret;
}
