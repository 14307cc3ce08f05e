// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: the send path. ibv_post_send() and the
 * ibv_wr_*() API both write struct stag_send_wqe slots into the send ring,
 * publish them, and ring one doorbell per call or batch.
 *
 * The provider checks only what keeps a WQE inside its slot and what the
 * verbs API defines as a posting error (too many scatter entries, too much
 * inline data, no address handle for a UD send). An opcode the QP type
 * does not take is written as given: the kernel completes it with an
 * error, and it must cope with any slot contents anyway.
 */
#include <errno.h>
#include <string.h>

#include "ah.h"
#include "qp.h"

/* The slot's opcodes are the kernel's, which equal the verbs' ones. */
#define SAME_VALUE(_ibv, _uverbs) static_assert((int)(_ibv) == (int)(_uverbs), #_ibv)
SAME_VALUE(IBV_WR_RDMA_WRITE, IB_UVERBS_WR_RDMA_WRITE);
SAME_VALUE(IBV_WR_RDMA_WRITE_WITH_IMM, IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
SAME_VALUE(IBV_WR_SEND, IB_UVERBS_WR_SEND);
SAME_VALUE(IBV_WR_SEND_WITH_IMM, IB_UVERBS_WR_SEND_WITH_IMM);
SAME_VALUE(IBV_WR_RDMA_READ, IB_UVERBS_WR_RDMA_READ);
SAME_VALUE(IBV_WR_ATOMIC_CMP_AND_SWP, IB_UVERBS_WR_ATOMIC_CMP_AND_SWP);
SAME_VALUE(IBV_WR_ATOMIC_FETCH_AND_ADD, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD);
SAME_VALUE(IBV_WR_LOCAL_INV, IB_UVERBS_WR_LOCAL_INV);
SAME_VALUE(IBV_WR_BIND_MW, IB_UVERBS_WR_BIND_MW);
SAME_VALUE(IBV_WR_SEND_WITH_INV, IB_UVERBS_WR_SEND_WITH_INV);
/* rdma-core 44's kernel headers predate 6.2's IB_UVERBS_WR_ATOMIC_WRITE. */
static_assert(IBV_WR_ATOMIC_WRITE == 15, "IB_UVERBS_WR_ATOMIC_WRITE");
/* A window's access flags travel as they are. */
SAME_VALUE(IBV_ACCESS_REMOTE_WRITE, IB_UVERBS_ACCESS_REMOTE_WRITE);
SAME_VALUE(IBV_ACCESS_REMOTE_READ, IB_UVERBS_ACCESS_REMOTE_READ);
SAME_VALUE(IBV_ACCESS_REMOTE_ATOMIC, IB_UVERBS_ACCESS_REMOTE_ATOMIC);
SAME_VALUE(IBV_ACCESS_ZERO_BASED, IB_UVERBS_ACCESS_ZERO_BASED);

static inline struct stag_sge *wqe_sges(struct stag_send_wqe *wqe)
{
	return (struct stag_sge *)(wqe + 1);
}

/*
 * The slot has a u8 for the opcode: a value beyond it must stay an unknown
 * opcode, not wrap onto a valid one.
 */
static uint8_t wqe_opcode(enum ibv_wr_opcode opcode)
{
	return (unsigned int)opcode > UINT8_MAX ? UINT8_MAX : opcode;
}

static void wqe_init(struct stag_send_wqe *wqe, uint64_t wr_id, enum ibv_wr_opcode opcode,
		     unsigned int send_flags)
{
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr_id;
	wqe->opcode = wqe_opcode(opcode);
	wqe->send_flags = send_flags;
}

static void wqe_set_rdma(struct stag_send_wqe *wqe, uint32_t rkey, uint64_t remote_addr)
{
	wqe->wr.rdma.remote_addr = remote_addr;
	wqe->wr.rdma.rkey = rkey;
}

static void wqe_set_atomic(struct stag_send_wqe *wqe, uint32_t rkey, uint64_t remote_addr,
			   uint64_t compare_add, uint64_t swap)
{
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.compare_add = compare_add;
	wqe->wr.atomic.swap = swap;
	wqe->wr.atomic.rkey = rkey;
}

/* An atomic write's value travels in the header, as its bytes are. */
static void wqe_set_atomic_write(struct stag_send_wqe *wqe, uint32_t rkey, uint64_t remote_addr,
				 const void *value)
{
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.rkey = rkey;
	memcpy(&wqe->wr.atomic.swap, value, sizeof(wqe->wr.atomic.swap));
}

static void wqe_set_ud(struct stag_send_wqe *wqe, struct ibv_ah *ah, uint32_t remote_qpn,
		       uint32_t remote_qkey)
{
	wqe->wr.ud.ah = to_stag_ah(ah)->ah_num;
	wqe->wr.ud.remote_qpn = remote_qpn;
	wqe->wr.ud.remote_qkey = remote_qkey;
}

static void wqe_set_bind(struct stag_send_wqe *wqe, struct ibv_mw *mw, uint32_t rkey,
			 const struct ibv_mw_bind_info *info)
{
	wqe->wr.bind.addr = info->addr;
	wqe->wr.bind.length = info->length;
	wqe->wr.bind.mw_rkey = mw->rkey;
	wqe->wr.bind.new_rkey = rkey;
	wqe->wr.bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->wr.bind.access = info->mw_access_flags;
}

static void wqe_set_sges(struct stag_send_wqe *wqe, const struct ibv_sge *sg, uint32_t num)
{
	wqe->send_flags &= ~IBV_SEND_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = num;
	if (num)
		memcpy(wqe_sges(wqe), sg, num * sizeof(*sg));
}

/* The caller checked the total against max_inline, which fits the slot. */
static void wqe_set_inline(struct stag_send_wqe *wqe, const void *addr, size_t length)
{
	if (length)
		memcpy((uint8_t *)wqe_sges(wqe) + wqe->inline_len, addr, length);
	wqe->inline_len += length;
	wqe->num_sge = 0;
	wqe->send_flags |= IBV_SEND_INLINE;
}

static bool ah_usable(const struct stag_qp *qp, const struct ibv_ah *ah)
{
	return ah && ah->context == qp->vqp.qp.context;
}

/* Only sends on UD QPs carry an address; other requests' union is theirs. */
static bool wr_is_ud_send(const struct stag_qp *qp, enum ibv_wr_opcode opcode)
{
	return qp->vqp.qp.qp_type == IBV_QPT_UD &&
	       (opcode == IBV_WR_SEND || opcode == IBV_WR_SEND_WITH_IMM);
}

static uint64_t sge_total(const struct ibv_sge *sg, int num)
{
	uint64_t total = 0;
	int i;

	/* At most 255 u32 lengths (max_send_sge was checked): no wrap. */
	for (i = 0; i < num; i++)
		total += sg[i].length;
	return total;
}

static bool send_wr_valid(const struct stag_qp *qp, const struct ibv_send_wr *wr)
{
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_send_sge)
		return false;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    sge_total(wr->sg_list, wr->num_sge) > qp->max_inline)
		return false;
	if (wr_is_ud_send(qp, wr->opcode) && !ah_usable(qp, wr->wr.ud.ah))
		return false;
	/* ibv_post_send()'s atomic write names its 8 bytes with its list. */
	if (wr->opcode == IBV_WR_ATOMIC_WRITE &&
	    sge_total(wr->sg_list, wr->num_sge) != sizeof(uint64_t))
		return false;
	return wr->opcode != IBV_WR_BIND_MW || wr->bind_mw.mw;
}

/* imm_data as the application gave it (network order), or an rkey. */
static uint32_t wr_ex(const struct ibv_send_wr *wr)
{
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return wr->imm_data;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		return wr->invalidate_rkey;
	default:
		return 0;
	}
}

static void wqe_set_wr(const struct stag_qp *qp, struct stag_send_wqe *wqe,
		       const struct ibv_send_wr *wr)
{
	wqe->ex = wr_ex(wr);
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe_set_rdma(wqe, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe_set_atomic(wqe, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr,
			       wr->wr.atomic.compare_add, wr->wr.atomic.swap);
		break;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		if (wr_is_ud_send(qp, wr->opcode))
			wqe_set_ud(wqe, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
				   wr->wr.ud.remote_qkey);
		break;
	case IBV_WR_BIND_MW:
		wqe_set_bind(wqe, wr->bind_mw.mw, wr->bind_mw.rkey, &wr->bind_mw.bind_info);
		break;
	default:
		break;
	}
}

/* The 8 bytes an ibv_post_send() atomic write's list names (checked: 8). */
static void wqe_set_atomic_write_wr(struct stag_send_wqe *wqe, const struct ibv_send_wr *wr)
{
	uint8_t value[sizeof(uint64_t)];
	size_t n = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		memcpy(value + n, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
		n += wr->sg_list[i].length;
	}
	wqe->send_flags &= ~IBV_SEND_INLINE;
	wqe_set_atomic_write(wqe, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, value);
}

static void send_wqe_write(const struct stag_qp *qp, struct stag_send_wqe *wqe,
			   const struct ibv_send_wr *wr)
{
	int i;

	wqe_init(wqe, wr->wr_id, wr->opcode, wr->send_flags);
	wqe_set_wr(qp, wqe, wr);
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		wqe->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	if (wr->opcode == IBV_WR_ATOMIC_WRITE) {
		wqe_set_atomic_write_wr(wqe, wr);
	} else if (wr->send_flags & IBV_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++)
			wqe_set_inline(wqe, (void *)(uintptr_t)wr->sg_list[i].addr,
				       wr->sg_list[i].length);
	} else {
		wqe_set_sges(wqe, wr->sg_list, wr->num_sge);
	}
}

/*
 * Every request before a failing one is posted. One doorbell per call,
 * also for an empty list. A doorbell that cannot be written means the QP
 * or the device is gone and nothing posted will complete: the whole list
 * is reported as not posted.
 */
/* Sends are posted from RTS on (and flushed in the error states). */
static bool can_send(const struct ibv_qp *ibqp)
{
	return ibqp->state != IBV_QPS_RESET && ibqp->state != IBV_QPS_INIT &&
	       ibqp->state != IBV_QPS_RTR;
}

int stag_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct stag_qp *qp = to_stag_qp(ibqp);
	struct ibv_send_wr *first = wr;
	struct stag_send_wqe *wqe;
	int ret = 0, db;

	/* An XRC TGT QP has no send queue, whatever its state. */
	if (!stag_queue_mapped(&qp->sq) || !can_send(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->sq.lock);
	stag_queue_prod_begin(&qp->sq);
	for (; wr; wr = wr->next) {
		wqe = stag_queue_prod_slot(&qp->sq);
		if (!send_wr_valid(qp, wr))
			ret = EINVAL;
		else if (!wqe)
			ret = ENOMEM;
		if (ret) {
			*bad_wr = wr;
			break;
		}
		send_wqe_write(qp, wqe, wr);
		stag_queue_prod_advance(&qp->sq);
	}
	stag_queue_prod_publish(&qp->sq);
	pthread_spin_unlock(&qp->sq.lock);

	db = stag_sq_doorbell(ibqp);
	if (db && !ret) {
		*bad_wr = first;
		ret = db;
	}
	return ret;
}

static inline struct stag_qp *qpx_to_stag_qp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct stag_qp, vqp.qp_ex);
}

/*
 * The ibv_wr_*() API. wr_start takes the send ring's lock; each wr_<op>()
 * takes the next slot and each wr_set_*() fills it; wr_complete publishes
 * the batch and rings the doorbell, wr_abort drops it. The first error
 * drops the whole batch: wr_complete returns it and publishes nothing.
 */
static void wr_fail(struct stag_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct stag_qp *qp = qpx_to_stag_qp(qpx);

	pthread_spin_lock(&qp->sq.lock);
	stag_queue_prod_begin(&qp->sq);
	qp->wr_cur = NULL;
	qp->wr_err = 0;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct stag_qp *qp = qpx_to_stag_qp(qpx);
	int ret = qp->wr_err;

	if (!ret && !can_send(&qp->vqp.qp))
		ret = EINVAL;
	if (!ret)
		stag_queue_prod_publish(&qp->sq);
	pthread_spin_unlock(&qp->sq.lock);
	if (ret)
		return ret;
	return stag_sq_doorbell(&qp->vqp.qp);
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	pthread_spin_unlock(&qpx_to_stag_qp(qpx)->sq.lock);
}

/* Return: the new WQE, or NULL once the batch has failed. */
static struct stag_send_wqe *wr_new(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode)
{
	struct stag_qp *qp = qpx_to_stag_qp(qpx);
	struct stag_send_wqe *wqe;

	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	wqe = stag_queue_prod_slot(&qp->sq);
	if (!wqe) {
		wr_fail(qp, ENOMEM);
		return NULL;
	}
	stag_queue_prod_advance(&qp->sq);

	/* Inline or not is what the wr_set_*() call says. */
	wqe_init(wqe, qpx->wr_id, opcode, qpx->wr_flags & ~IBV_SEND_INLINE);
	qp->wr_cur = wqe;
	return wqe;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	wr_new(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct stag_send_wqe *wqe = wr_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->ex = imm_data;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct stag_send_wqe *wqe = wr_new(qpx, IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->ex = invalidate_rkey;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	struct stag_send_wqe *wqe = wr_new(qpx, IBV_WR_RDMA_WRITE);

	if (wqe)
		wqe_set_rdma(wqe, rkey, remote_addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      __be32 imm_data)
{
	struct stag_send_wqe *wqe = wr_new(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	if (!wqe)
		return;
	wqe_set_rdma(wqe, rkey, remote_addr);
	wqe->ex = imm_data;
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	struct stag_send_wqe *wqe = wr_new(qpx, IBV_WR_RDMA_READ);

	if (wqe)
		wqe_set_rdma(wqe, rkey, remote_addr);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      uint64_t compare, uint64_t swap)
{
	struct stag_send_wqe *wqe = wr_new(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);

	if (wqe)
		wqe_set_atomic(wqe, rkey, remote_addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
				uint64_t add)
{
	struct stag_send_wqe *wqe = wr_new(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD);

	if (wqe)
		wqe_set_atomic(wqe, rkey, remote_addr, add, 0);
}

static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			    const void *atomic_wr)
{
	struct stag_send_wqe *wqe = wr_new(qpx, IBV_WR_ATOMIC_WRITE);

	if (wqe)
		wqe_set_atomic_write(wqe, rkey, remote_addr, atomic_wr);
}

#ifdef STAG_HAVE_WR_FLUSH
/* A FLUSH: its target, placement type and selectivity, and no buffers. */
static void wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, size_t len,
		     uint8_t type, uint8_t level)
{
	struct stag_send_wqe *wqe = wr_new(qpx, IBV_WR_FLUSH);

	if (!wqe)
		return;
	wqe->wr.flush.remote_addr = remote_addr;
	wqe->wr.flush.length = len;
	wqe->wr.flush.rkey = rkey;
	wqe->wr.flush.type = type;
	wqe->wr.flush.level = level;
}
#endif

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct stag_send_wqe *wqe = wr_new(qpx, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->ex = invalidate_rkey;
}

static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *bind_info)
{
	struct stag_send_wqe *wqe = wr_new(qpx, IBV_WR_BIND_MW);

	if (!wqe)
		return;
	if (!mw || !bind_info) {
		wr_fail(qpx_to_stag_qp(qpx), EINVAL);
		return;
	}
	wqe_set_bind(wqe, mw, rkey, bind_info);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct stag_qp *qp = qpx_to_stag_qp(qpx);

	if (!qp->wr_cur)
		return;
	if (!ah_usable(qp, ah)) {
		wr_fail(qp, EINVAL);
		return;
	}
	wqe_set_ud(qp->wr_cur, ah, remote_qpn, remote_qkey);
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct stag_qp *qp = qpx_to_stag_qp(qpx);
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	if (!qp->wr_cur)
		return;
	if (!qp->max_send_sge) {
		wr_fail(qp, EINVAL);
		return;
	}
	wqe_set_sges(qp->wr_cur, &sge, 1);
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg_list)
{
	struct stag_qp *qp = qpx_to_stag_qp(qpx);

	if (!qp->wr_cur)
		return;
	if (num_sge > qp->max_send_sge) {
		wr_fail(qp, EINVAL);
		return;
	}
	wqe_set_sges(qp->wr_cur, sg_list, num_sge);
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct stag_qp *qp = qpx_to_stag_qp(qpx);

	if (!qp->wr_cur)
		return;
	if (length > qp->max_inline) {
		wr_fail(qp, EINVAL);
		return;
	}
	qp->wr_cur->inline_len = 0;
	wqe_set_inline(qp->wr_cur, addr, length);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct stag_qp *qp = qpx_to_stag_qp(qpx);
	size_t i, total = 0;

	if (!qp->wr_cur)
		return;
	for (i = 0; i < num_buf; i++) {
		if (buf_list[i].length > qp->max_inline - total) {
			wr_fail(qp, EINVAL);
			return;
		}
		total += buf_list[i].length;
	}

	qp->wr_cur->inline_len = 0;
	for (i = 0; i < num_buf; i++)
		wqe_set_inline(qp->wr_cur, buf_list[i].addr, buf_list[i].length);
}

/* The remote XRC SRQ an XRC INI QP's request is for; the WQEs of others have 0. */
static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct stag_qp *qp = qpx_to_stag_qp(qpx);

	if (qp->wr_cur)
		qp->wr_cur->xrc_srqn = remote_srqn;
}

/*
 * TSO and, without rdma-core 45's slot, flush stay NULL: create refuses
 * those ops. wr_set_xrc_srqn is only an XRC INI QP's, as mlx5 has it.
 */
void stag_qp_set_ex_ops(struct stag_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	qpx->wr_send = wr_send;
	qpx->wr_send_imm = wr_send_imm;
	qpx->wr_send_inv = wr_send_inv;
	qpx->wr_rdma_write = wr_rdma_write;
	qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	qpx->wr_rdma_read = wr_rdma_read;
	qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_atomic_write = wr_atomic_write;
#ifdef STAG_HAVE_WR_FLUSH
	qpx->wr_flush = wr_flush;
#endif
	qpx->wr_local_inv = wr_local_inv;
	qpx->wr_bind_mw = wr_bind_mw;
	qpx->wr_set_ud_addr = wr_set_ud_addr;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
}
