// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: queue pair control path and receives. Creating
 * a QP maps its send ring and, without an SRQ, its receive ring (an XRC
 * INI QP has only a send ring, a TGT QP none); receives are written into
 * the ring with no system call unless the kernel is flushing it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cq.h"
#include "qp.h"
#include "stagdv.h"

struct stag_create_qp_resp_full {
	struct ib_uverbs_ex_create_qp_resp ibv_resp;
	struct stag_create_qp_resp drv;
};

static_assert(offsetof(struct stag_create_qp_resp_full, drv) ==
	      sizeof(struct ib_uverbs_ex_create_qp_resp), "padding before the udata");

/* Nonzero create_flags are refused apart: stag supports none of them. */
#define SUPPORTED_QP_COMP_MASK	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | \
				 IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | \
				 IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH)

/* An RSS QP: one with an indirection table, and its hash in the driver data. */
#define QP_RSS_MASK		(IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH)

struct stag_create_qp_full {
	struct ibv_create_qp_ex ibv_cmd;
	struct stag_create_qp_cmd drv;
};

static_assert(offsetof(struct stag_create_qp_full, drv) == sizeof(struct ibv_create_qp_ex),
	      "padding before the udata");

/* What a verbs_qp of VERBS_QP_ROOM bytes has room for after comp_mask. */
#define QP_MASK_TAIL		(sizeof(uint64_t) + sizeof(void *))

/**
 * stag_qp_ex_mask_offset() - where libibverbs looks for VERBS_QP_EX
 *
 * ibv_qp_to_qp_ex() hands out a QP's ibv_qp_ex only when VERBS_QP_EX is set
 * in verbs_qp.comp_mask, whose offset depends on the rdma-core release
 * (see struct verbs_qp). It is asked about a zeroed QP with the bit set at
 * each place comp_mask can be, in order.
 *
 * Return: the offset within struct verbs_qp, or -1 if none fits in
 * VERBS_QP_ROOM (the ibv_wr_*() API is then not offered).
 */
int stag_qp_ex_mask_offset(void)
{
	union {
		struct verbs_qp vqp;
		uint8_t room[VERBS_QP_ROOM];
	} probe;
	uint32_t mask = VERBS_QP_EX;
	size_t off;

	for (off = offsetof(struct verbs_qp, comp_mask); off + QP_MASK_TAIL <= VERBS_QP_ROOM;
	     off += sizeof(uint64_t)) {
		memset(&probe, 0, sizeof(probe));
		memcpy(probe.room + off, &mask, sizeof(mask));
		if (ibv_qp_to_qp_ex(&probe.vqp.qp))
			return off;
	}
	return -1;
}

static void qp_set_ex_mask(struct stag_qp *qp, int off)
{
	uint32_t mask;

	memcpy(&mask, qp->vqp_room + off, sizeof(mask));
	mask |= VERBS_QP_EX;
	memcpy(qp->vqp_room + off, &mask, sizeof(mask));
}

static bool qp_attr_supported(const struct stag_context *ctx,
			      const struct ibv_qp_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)SUPPORTED_QP_COMP_MASK)
		return false;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)
		return false;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return true;
	/* An XRC TGT QP sends nothing: no ibv_wr_*() for it. */
	return !(attr->send_ops_flags & ~(uint64_t)STAG_QP_SEND_OPS) &&
	       attr->qp_type != IBV_QPT_XRC_RECV && ctx->qp_ex_mask_offset >= 0;
}

/*
 * Which rings the kernel made: an XRC TGT QP and an RSS QP have none (an
 * RSS QP's receives are its WQs'), an INI no receive ring.
 */
static bool qp_has_sq(const struct ibv_qp_init_attr_ex *attr)
{
	return attr->qp_type != IBV_QPT_XRC_RECV && !(attr->comp_mask & QP_RSS_MASK);
}

static bool qp_has_rq(const struct ibv_qp_init_attr_ex *attr)
{
	return attr->qp_type != IBV_QPT_XRC_SEND && attr->qp_type != IBV_QPT_XRC_RECV &&
	       !attr->srq && !(attr->comp_mask & QP_RSS_MASK);
}

/*
 * An RSS QP's hash configuration, for the kernel to check; the key is
 * copied as long as it is, up to the 40 bytes there is room for.
 */
static int qp_rss_cmd(const struct ibv_qp_init_attr_ex *attr, struct stag_create_qp_cmd *drv)
{
	const struct ibv_rx_hash_conf *h = &attr->rx_hash_conf;

	if ((attr->comp_mask & QP_RSS_MASK) != QP_RSS_MASK || !attr->rwq_ind_tbl ||
	    h->rx_hash_key_len > sizeof(drv->rx_hash_key) ||
	    (h->rx_hash_key_len && !h->rx_hash_key))
		return EINVAL;
	/*
	 * An RSS QP only receives, as the kernel says too; refused here, a
	 * send queue without a send CQ would have libibverbs read the CQ's
	 * handle through NULL.
	 */
	if (attr->cap.max_send_wr)
		return EOPNOTSUPP;
	drv->rx_hash_fields_mask = h->rx_hash_fields_mask;
	drv->rx_hash_function = h->rx_hash_function;
	drv->rx_hash_key_len = h->rx_hash_key_len;
	if (h->rx_hash_key_len)
		memcpy(drv->rx_hash_key, h->rx_hash_key, h->rx_hash_key_len);
	return 0;
}

/*
 * The least a send slot must hold for what the QP was granted. A send WQE
 * counts scatter entries in a u8: no slot is large enough for more.
 */
static uint64_t send_slot_min(const struct stag_qp *qp)
{
	uint64_t body = (uint64_t)qp->max_send_sge * sizeof(struct stag_sge);

	if (qp->max_send_sge > UINT8_MAX)
		return UINT64_MAX;
	if (body < qp->max_inline)
		body = qp->max_inline;
	return STAG_SEND_WQE_HDR_SIZE + body;
}

/*
 * The kernel granted @attr->cap and sized the rings; a slot too small for
 * what it granted is refused, so that no WQE the provider writes crosses
 * its slot.
 */
static int qp_map(struct stag_qp *qp, int cmd_fd, const struct ibv_qp_init_attr_ex *attr,
		  const struct stag_create_qp_resp *drv)
{
	uint64_t recv_slot;
	int ret;

	qp->max_send_sge = attr->cap.max_send_sge;
	qp->max_recv_sge = attr->cap.max_recv_sge;
	qp->max_inline = drv->max_inline;
	if (!qp_has_sq(attr))
		return 0;
	ret = stag_queue_map(&qp->sq, cmd_fd, drv->sq_offset, drv->sq_slots, drv->sq_slot_size,
			     send_slot_min(qp));
	if (ret || !qp_has_rq(attr))
		return ret;

	recv_slot = sizeof(struct stag_recv_wqe) +
		    (uint64_t)qp->max_recv_sge * sizeof(struct stag_sge);
	return stag_queue_map(&qp->rq, cmd_fd, drv->rq_offset, drv->rq_slots, drv->rq_slot_size,
			      recv_slot);
}

/*
 * Memory for the rings from the parent domain the QP is made in, if it
 * has allocators; sized by the kernel's rule for the capabilities asked.
 */
static int qp_rings_alloc(struct stag_qp *qp, const struct ibv_qp_init_attr_ex *attr,
			  struct stag_create_qp_cmd *drv)
{
	const struct ibv_qp_cap *cap = &attr->cap;
	struct ibv_pd *pd = attr->comp_mask & IBV_QP_INIT_ATTR_PD ? attr->pd : NULL;
	uint32_t sge;
	int ret;

	if (!pd || !qp_has_sq(attr))
		return 0;
	sge = cap->max_send_sge ? cap->max_send_sge : 1;
	ret = stag_queue_alloc(&qp->sq, pd, STAGDV_RES_TYPE_SQ, stag_ring_slots(cap->max_send_wr),
			       stag_send_slot_size(sge, cap->max_inline_data), &drv->sq);
	if (ret || !qp_has_rq(attr))
		return ret;
	return stag_queue_alloc(&qp->rq, pd, STAGDV_RES_TYPE_RQ, stag_ring_slots(cap->max_recv_wr),
				stag_recv_slot_size(cap->max_recv_sge), &drv->rq);
}

static struct stag_qp *qp_create(struct ibv_context *ibctx, struct ibv_qp_init_attr_ex *attr)
{
	struct stag_context *ctx = to_stag_ctx(ibctx);
	struct stag_create_qp_resp_full resp = {};
	struct stag_create_qp_full cmd = {};
	size_t cmd_size = sizeof(cmd.ibv_cmd);
	struct stag_qp *qp;
	int ret;

	if (!qp_attr_supported(ctx, attr)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & QP_RSS_MASK) {
		ret = qp_rss_cmd(attr, &cmd.drv);
		if (ret) {
			errno = ret;
			return NULL;
		}
		cmd_size = sizeof(cmd);
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = qp_rings_alloc(qp, attr, &cmd.drv);
	if (ret)
		goto err_free_qp;
	if (cmd.drv.sq.addr || cmd.drv.rq.addr)
		cmd_size = sizeof(cmd);

	ret = stag_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd.ibv_cmd, cmd_size, &resp.ibv_resp,
				     sizeof(resp));
	if (ret)
		goto err_free_qp;

	ret = qp_map(qp, ibctx->cmd_fd, attr, &resp.drv);
	if (ret)
		goto err_destroy_qp;

	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		stag_qp_set_ex_ops(qp);
		qp_set_ex_mask(qp, ctx->qp_ex_mask_offset);
	}
	return qp;

err_destroy_qp:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free_qp:
	/* Unmapped and given back only once the kernel has let go. */
	stag_queue_unmap(&qp->rq);
	stag_queue_unmap(&qp->sq);
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *stag_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	struct stag_qp *qp = qp_create(ctx, attr);

	return qp ? &qp->vqp.qp : NULL;
}

struct ibv_qp *stag_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct stag_qp *qp;

	qp = qp_create(pd->context, &attr_ex);
	if (!qp)
		return NULL;
	attr->cap = attr_ex.cap;
	return &qp->vqp.qp;
}

/*
 * ibv_open_qp(): another process's XRC TGT QP, by number, in a domain both
 * share. It has no rings here: nothing is posted to a TGT QP.
 */
struct ibv_qp *stag_open_qp(struct ibv_context *ctx, struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd = {};
	struct stag_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	/* The room, for libibverbs to find its verbs_qp.xrcd inside it. */
	ret = ibv_cmd_open_qp(ctx, &qp->vqp, sizeof(qp->vqp_room), attr, &cmd, sizeof(cmd), &resp,
			      sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	return &qp->vqp.qp;
}

/*
 * libibverbs keeps ibqp->state from here on; the posting verbs check it.
 * A QP moved to RESET leaves no completions behind in its CQs. An XRC
 * TGT QP has no CQs of its own (its SRQs' CQs are not known here), an
 * INI QP no receive CQ: libibverbs keeps the ones a consumer passed for
 * them, which the kernel never held and which may be gone.
 */
int stag_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret || !(attr_mask & IBV_QP_STATE) || attr->qp_state != IBV_QPS_RESET)
		return ret;
	if (ibqp->qp_type == IBV_QPT_XRC_RECV)
		return 0;
	if (ibqp->send_cq)
		stag_cq_clean(ibqp->send_cq, ibqp->qp_num);
	if (ibqp->qp_type != IBV_QPT_XRC_SEND && ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		stag_cq_clean(ibqp->recv_cq, ibqp->qp_num);
	return 0;
}

int stag_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd, sizeof(cmd));
}

int stag_destroy_qp(struct ibv_qp *ibqp)
{
	struct stag_qp *qp = to_stag_qp(ibqp);
	int ret;

	/* On failure the kernel still uses the rings: keep them mapped. */
	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	stag_queue_unmap(&qp->rq);
	stag_queue_unmap(&qp->sq);
	free(qp);
	return 0;
}

/*
 * Receives need no system call: the kernel takes them from the ring when a
 * message arrives. Only a QP in the error state wants a doorbell, so that
 * the kernel flushes what was just posted. A doorbell that cannot be
 * written means the QP or the device is gone and nothing posted will
 * complete: the whole list is reported as not posted.
 */
int stag_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct stag_qp *qp = to_stag_qp(ibqp);
	int ret, db;

	/*
	 * With an SRQ, receives go to the SRQ, and an XRC QP takes none; none
	 * in RESET (IBA C10-97.2.1).
	 */
	ret = stag_queue_mapped(&qp->rq) && ibqp->state != IBV_QPS_RESET ? 0 : EINVAL;
	if (ret) {
		*bad_wr = wr;
		return ret;
	}

	ret = stag_queue_post_recv(&qp->rq, qp->max_recv_sge, wr, bad_wr);
	if (!stag_queue_flushing(&qp->rq))
		return ret;

	db = stag_rq_doorbell(ibqp);
	if (db && !ret) {
		*bad_wr = wr;
		ret = db;
	}
	return ret;
}
