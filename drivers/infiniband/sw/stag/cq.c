// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues. Completions are produced by the requester and the
 * responder of any QP on the CQ, under the CQ's lock; user CQs are polled
 * by the provider straight from the ring, kernel CQs through poll_cq.
 */

#include <linux/ktime.h>
#include <linux/log2.h>
#include <rdma/ib_verbs.h>
#include <rdma/stag-abi.h>
#include <rdma/uverbs_ioctl.h>
#include <kunit/visibility.h>

#include "cq.h"
#include "dev.h"

/* The largest CQ's ring, of the largest slots, fits what a ring may take. */
static_assert((STAG_MAX_CQE + 1ULL) * sizeof(struct ib_wc) + STAG_QUEUE_CTL_SIZE <=
	      STAG_QUEUE_MAX_SIZE);
static_assert((STAG_MAX_CQE + 1ULL) * sizeof(struct stag_cqe_tm) + STAG_QUEUE_CTL_SIZE <=
	      STAG_QUEUE_MAX_SIZE);

/**
 * stag_cq_create() - the create_cq verb
 * @ibcq: the CQ the core allocated
 * @attr: cqe is the number of completions it must hold
 * @arg: the user's command (compat.h: its attribute bundle, or on older
 *	kernels its udata), or NULL for a kernel CQ
 *
 * A user CQ created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION has
 * struct stag_cqe_ts slots: each completion carries when it was written;
 * one whose command asks for STAG_CQ_TM_INFO has struct stag_cqe_tm
 * slots, which also carry tag matching completions' tags. The command
 * may bring the ring's memory (struct stag_create_cq_cmd).
 *
 * Return: 0; -EINVAL for 0 or more than STAG_MAX_CQE entries, a bad
 * completion vector, or when the device has max_cq CQs already;
 * -EOPNOTSUPP for other creation flags or driver flags, or timestamps on
 * a kernel CQ (struct ib_wc has no place for them); -ENOMEM; for the command and the
 * memory it brings, what stag_queue_cmd() and stag_queue_init_mem() return.
 */
int stag_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   stag_create_cq_arg_t *arg)
{
	struct ib_udata *udata = stag_create_cq_udata(arg);
	struct stag_dev *sdev = to_stag_dev(ibcq->device);
	struct stag_cq *cq = to_stag_cq(ibcq);
	struct stag_create_cq_resp resp = {};
	struct stag_create_cq_cmd cmd;
	u32 slots, slot_size;
	int ret;

	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION || (attr->flags && !udata))
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > STAG_MAX_CQE ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	ret = stag_queue_cmd(udata, &cmd, 0, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.flags & ~STAG_CQ_TM_INFO || cmd.reserved)
		return -EOPNOTSUPP;
	ret = stag_res_charge(&sdev->res, STAG_RES_CQ);
	if (ret)
		return ret;

	spin_lock_init(&cq->lock);
	cq->user = udata;
	cq->timestamps = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	if (!cq->user)
		slot_size = sizeof(struct ib_wc);
	else if (cmd.flags & STAG_CQ_TM_INFO)
		slot_size = sizeof(struct stag_cqe_tm);
	else if (cq->timestamps)
		slot_size = sizeof(struct stag_cqe_ts);
	else
		slot_size = sizeof(struct stag_cqe);
	/* One slot stays free so the provider never sees full as empty. */
	slots = stag_ring_slots(attr->cqe + 1);
	ret = stag_queue_init_mem(&cq->queue, slots, slot_size, &cmd.ring);
	if (ret)
		goto err_uncharge;
	ibcq->cqe = slots - 1;
	if (!cq->user)
		return 0;

	ret = stag_queue_share(&cq->queue, udata, &resp.offset);
	if (ret)
		goto err_uninit_queue;
	resp.num_slots = slots;
	resp.slot_size = cq->queue.slot_size;
	ret = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (ret)
		goto err_uninit_queue;
	return 0;

err_uninit_queue:
	stag_queue_uninit(&cq->queue);
err_uncharge:
	stag_res_uncharge(&sdev->res, STAG_RES_CQ);
	return ret;
}

/*
 * Moves the completions waiting in the ring into @nq, in order, and makes
 * it the CQ's ring. -EINVAL when more are waiting than the @cqe asked for
 * (IBA 11.2.6.3), however much the rounded-up ring would hold.
 */
static int cq_swap_ring(struct stag_cq *cq, struct stag_queue *nq, u32 cqe)
{
	struct stag_queue *q = &cq->queue;
	u32 cons, n, i;

	lockdep_assert_held(&cq->lock);
	/* A user CQ's consumer holds its polling lock across the resize. */
	cons = READ_ONCE(q->ctl->cons);
	n = q->index - cons;
	if (n > q->num_slots || n > cqe)
		return -EINVAL;
	for (i = 0; i < n; i++)
		memcpy(stag_queue_slot(nq, i), stag_queue_slot(q, cons + i), q->slot_size);
	nq->index = n;
	nq->ctl->prod = n;
	swap(*q, *nq);
	cq->ibcq.cqe = q->num_slots - 1;
	return 0;
}

/**
 * stag_cq_resize() - the resize_cq verb
 * @ibcq: the CQ
 * @cqe: the number of completions it must hold
 * @udata: the user's command; the response says where the new ring is
 *
 * The completions waiting move to a new ring, in order, in memory the
 * command brings or the kernel's. The provider holds the CQ's polling lock
 * across the command and maps the new ring after it.
 *
 * Return: 0; -EINVAL for a size out of range or smaller than the number of
 * completions waiting, or driver flags (the slots stay as created);
 * -ENOMEM; as stag_queue_cmd() and
 * stag_queue_init_mem() for the command. Nothing changes on failure.
 */
int stag_cq_resize(struct ib_cq *ibcq, unsigned int cqe, struct ib_udata *udata)
{
	struct stag_cq *cq = to_stag_cq(ibcq);
	struct stag_create_cq_resp resp = {};
	struct stag_create_cq_cmd cmd;
	struct stag_queue nq;
	unsigned long flags;
	u32 slots;
	int ret;

	if (cqe < 1 || cqe > STAG_MAX_CQE)
		return -EINVAL;
	if (cq->user && udata->outlen < sizeof(resp))
		return -EINVAL;
	ret = stag_queue_cmd(udata, &cmd, 0, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.flags || cmd.reserved)
		return -EINVAL;
	slots = stag_ring_slots(cqe + 1);
	ret = stag_queue_init_mem(&nq, slots, cq->queue.slot_size, &cmd.ring);
	if (ret)
		return ret;
	if (cq->user) {
		ret = stag_queue_share(&nq, udata, &resp.offset);
		if (ret)
			goto err_uninit_queue;
		resp.num_slots = slots;
		resp.slot_size = nq.slot_size;
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret)
			goto err_uninit_queue;
	}

	spin_lock_irqsave(&cq->lock, flags);
	ret = cq_swap_ring(cq, &nq, cqe);
	spin_unlock_irqrestore(&cq->lock, flags);
	/* On success nq holds the old ring now: it goes either way. */
err_uninit_queue:
	stag_queue_uninit(&nq);
	return ret;
}

int stag_cq_destroy(struct ib_cq *ibcq, struct ib_udata *udata)
{
	stag_queue_uninit(&to_stag_cq(ibcq)->queue);
	stag_res_uncharge(&to_stag_dev(ibcq->device)->res, STAG_RES_CQ);
	return 0;
}

/*
 * RoCE carries no SL. Where a user completion of a UD receive has it, mlx5
 * hardware reports the packet's type (bit 3: over UDP, RoCE v2; bits 2:0:
 * 1 IPv6, 2 IPv4), and so does stag: UCX before 1.19 reads the type there
 * to find the destination address in the GRH, and with the 0 of an IB SL
 * looks for an IPv6 one, finds none of its GIDs and drops every packet.
 */
#define STAG_CQE_SL_ROCE_V2	0x8
#define STAG_CQE_SL_IPV6	0x1
#define STAG_CQE_SL_IPV4	0x2

static u8 cqe_sl(const struct ib_wc *wc)
{
	if (!(wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE))
		return wc->sl;
	return STAG_CQE_SL_ROCE_V2 | (wc->network_hdr_type == RDMA_NETWORK_IPV4 ?
				      STAG_CQE_SL_IPV4 : STAG_CQE_SL_IPV6);
}

/**
 * stag_cq_wc_to_cqe() - a kernel completion in the provider's format
 * @wc: the completion
 * @cqe: the slot to fill
 *
 * The provider's flag bits are libibverbs', which differ from the
 * kernel's IB_WC_* bits. A RoCE UD receive's SL is its packet type.
 */
VISIBLE_IF_KUNIT void stag_cq_wc_to_cqe(const struct ib_wc *wc, struct stag_cqe *cqe)
{
	u32 flags = 0;

	if (wc->wc_flags & IB_WC_GRH)
		flags |= STAG_WC_GRH;
	if (wc->wc_flags & IB_WC_WITH_IMM)
		flags |= STAG_WC_WITH_IMM;
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		flags |= STAG_WC_WITH_INV;

	*cqe = (struct stag_cqe) {
		.wr_id = wc->wr_id,
		.status = wc->status,
		.opcode = wc->opcode,
		.vendor_err = wc->vendor_err,
		.byte_len = wc->byte_len,
		.ex = wc->wc_flags & IB_WC_WITH_INVALIDATE ? wc->ex.invalidate_rkey :
			(__force u32)wc->ex.imm_data,
		.qp_num = wc->qp ? wc->qp->qp_num : 0,
		.src_qp = wc->src_qp,
		.wc_flags = flags,
		.pkey_index = wc->pkey_index,
		.slid = wc->slid,
		.sl = cqe_sl(wc),
		.dlid_path_bits = wc->dlid_path_bits,
	};
}
EXPORT_SYMBOL_IF_KUNIT(stag_cq_wc_to_cqe);

/*
 * A user CQ's slot; with timestamps, the two clocks as it is written; in
 * a tag matching slot, @tm's part (zero for a completion without one). A
 * completion of a receive WQ has no QP: @wq_num is its number, 0 for a
 * QP's completion.
 */
static void cq_write_cqe(struct stag_cq *cq, const struct ib_wc *wc, const struct stag_cq_tm *tm,
			 u32 wq_num, void *slot)
{
	struct stag_cqe_tm *t = slot;

	stag_cq_wc_to_cqe(wc, slot);
	if (wq_num)
		t->ts.cqe.qp_num = wq_num;
	if (tm)
		t->ts.cqe.wc_flags |= tm->flags;
	if (cq->queue.slot_size >= sizeof(*t)) {
		t->tag = tm ? tm->tag : 0;
		t->priv = tm ? tm->priv : 0;
		t->reserved = 0;
	}
	if (!cq->timestamps)
		return;
	t->ts.completion_ts = ktime_get_ns();
	t->ts.wallclock_ns = ktime_get_real_ns();
}

static void cq_overflow(struct stag_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * The consumer's completion handler. ib_core's IB_POLL_SOFTIRQ handler
 * raises a softirq: from a task, as stag's workers are, that wakes
 * ksoftirqd and costs a switch to it before the consumer sees the
 * completion. With bottom halves off, the softirq runs instead at
 * local_bh_enable(), here, on this CPU. Not with interrupts off, where
 * local_bh_enable() may not be called.
 */
static void cq_notify(struct stag_cq *cq)
{
	if (irqs_disabled()) {
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		return;
	}
	local_bh_disable();
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	local_bh_enable();
}

static int cq_post(struct stag_cq *cq, const struct ib_wc *wc, const struct stag_cq_tm *tm,
		   u32 wq_num, bool solicited)
{
	unsigned long flags;
	bool notify, overflow;

	spin_lock_irqsave(&cq->lock, flags);
	overflow = cq->overflow || stag_queue_full(&cq->queue);
	if (overflow) {
		cq->overflow = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		cq_overflow(cq);
		return -ENOSPC;
	}
	if (cq->user)
		cq_write_cqe(cq, wc, tm, wq_num, stag_queue_tail(&cq->queue));
	else
		memcpy(stag_queue_tail(&cq->queue), wc, sizeof(*wc));
	stag_queue_push(&cq->queue);

	notify = cq->notify == IB_CQ_NEXT_COMP ||
		 (cq->notify == IB_CQ_SOLICITED && (solicited || wc->status != IB_WC_SUCCESS));
	if (notify)
		cq->notify = 0;
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify && cq->ibcq.comp_handler)
		cq_notify(cq);
	return 0;
}

/**
 * stag_cq_post() - add a completion
 * @cq: the CQ
 * @wc: the completion; wc->qp is the QP it belongs to
 * @solicited: the completion is of a solicited message
 *
 * Context: any; takes the CQ's lock and may call the consumer's
 * completion handler.
 * Return: 0, or -ENOSPC when the CQ is full: the completion is lost, the
 * CQ is in error and its consumer gets IB_EVENT_CQ_ERR.
 */
int stag_cq_post(struct stag_cq *cq, const struct ib_wc *wc, bool solicited)
{
	return cq_post(cq, wc, NULL, 0, solicited);
}

/**
 * stag_cq_post_tm() - add a tag matching completion
 * @cq: a user CQ, as a tag matching SRQ's QPs' and the SRQ's own are
 * @wc: the completion; its opcode an enum ibv_wc_opcode value
 * @tm: its flags (STAG_WC_TM_*), and the tag and app_ctx a CQ created
 *	with STAG_CQ_TM_INFO gives
 * @solicited: the completion is of a solicited message
 *
 * Return: as stag_cq_post(); -EINVAL for a kernel CQ.
 */
int stag_cq_post_tm(struct stag_cq *cq, const struct ib_wc *wc, const struct stag_cq_tm *tm,
		    bool solicited)
{
	if (WARN_ON_ONCE(!cq->user))
		return -EINVAL;
	return cq_post(cq, wc, tm, 0, solicited);
}

/**
 * stag_cq_post_wq() - add a completion of a receive WQ
 * @cq: the WQ's CQ, a user CQ as every WQ's is
 * @wc: the completion; wc->qp is NULL
 * @wq_num: the WQ's number, which the completion gives as its qp_num
 *
 * Return: as stag_cq_post(); -EINVAL for a kernel CQ, which has no room
 * for a number without a QP.
 */
int stag_cq_post_wq(struct stag_cq *cq, const struct ib_wc *wc, u32 wq_num)
{
	if (WARN_ON_ONCE(!cq->user))
		return -EINVAL;
	return cq_post(cq, wc, NULL, wq_num, false);
}

/*
 * A kernel CQ's ring is the kernel's at both ends, so its consumer index
 * is read from the ring like the producer's is.
 */
int stag_cq_poll(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct stag_cq *cq = to_stag_cq(ibcq);
	struct stag_queue *q = &cq->queue;
	unsigned long flags;
	int n = 0;

	if (WARN_ON_ONCE(cq->user))
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	for (; n < num_entries; n++) {
		u32 cons = q->ctl->cons;

		if (cons == q->index)
			break;
		memcpy(&wc[n], stag_queue_slot(q, cons), sizeof(*wc));
		q->ctl->cons = cons + 1;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * stag_cq_req_notify() - the req_notify_cq verb
 * @ibcq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, and IB_CQ_REPORT_MISSED_EVENTS
 *
 * Return: with IB_CQ_REPORT_MISSED_EVENTS, 1 when completions are already
 * waiting (the caller must poll, no event will come for them); else 0.
 */
int stag_cq_req_notify(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct stag_cq *cq = to_stag_cq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if (flags & IB_CQ_REPORT_MISSED_EVENTS &&
	    READ_ONCE(cq->queue.ctl->cons) != cq->queue.index)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
