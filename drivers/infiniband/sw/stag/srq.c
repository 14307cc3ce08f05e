// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues. Responders of every QP on the SRQ take WQEs from
 * it under its lock, each copied out once; the limit event fires when a
 * take leaves fewer WQEs than the armed limit.
 *
 * An XRC SRQ belongs to an XRC domain and has its own CQ. No QP is
 * created on it: each message to an XRC TGT QP names one by number, and
 * the TGT QP's responder finds it here (stag_srq_get_xrc), in the
 * device's table of SRQ numbers.
 *
 * A tag matching SRQ has a tag list (tm.c) beside its ring of plain
 * receives, and a CQ of its own for the list's operations; a message to
 * one of its QPs takes a tagged buffer or a plain receive under the
 * SRQ's lock, in one step (stag_srq_take_tm).
 */

#include <kunit/visibility.h>
#include <linux/log2.h>
#include <linux/uaccess.h>
#include <rdma/stag-abi.h>

#include "cq.h"
#include "dev.h"
#include "srq.h"

static int check_attr(const struct ib_srq_attr *attr, u32 max_wr)
{
	if (attr->max_wr < 1 || attr->max_wr > STAG_MAX_QP_WR || attr->max_sge > STAG_MAX_SGE)
		return -EINVAL;
	if (attr->srq_limit > max_wr)
		return -EINVAL;
	return 0;
}

/**
 * stag_srq_create() - the create_srq verb
 * @ibsrq: the SRQ the core allocated
 * @init: its attributes; max_wr and max_sge are updated to what it got
 * @udata: the user's command, or NULL; it may bring the ring's memory
 *	   (struct stag_create_srq_cmd)
 *
 * Return: 0; -EOPNOTSUPP for XRC and tag matching SRQs of the kernel;
 * -EINVAL for sizes out of range, an XRC SRQ without its domain or CQ, a
 * tag matching one without its CQ or with 0 or more than
 * STAG_TM_MAX_TAGS tags, or when the device has max_srq SRQs already;
 * -ENOMEM; for the command and its memory, what stag_queue_cmd() and
 * stag_queue_init_mem() return.
 */
int stag_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *init, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibsrq->device);
	struct stag_srq *srq = to_stag_srq(ibsrq);
	struct stag_create_srq_resp resp = {};
	struct stag_create_srq_cmd cmd;
	u32 slots;
	int ret;

	if (init->srq_type == IB_SRQT_XRC) {
		/* No kernel consumer uses XRC, and ib_post_send has no SRQ number. */
		if (!udata)
			return -EOPNOTSUPP;
		if (!init->ext.xrc.xrcd || !init->ext.cq)
			return -EINVAL;
	} else if (init->srq_type == IB_SRQT_TM) {
		/* ib_post_srq_ops does not exist: no kernel consumer can use one. */
		if (!udata)
			return -EOPNOTSUPP;
		if (!init->ext.cq || !init->ext.tag_matching.max_num_tags ||
		    init->ext.tag_matching.max_num_tags > STAG_TM_MAX_TAGS)
			return -EINVAL;
	} else if (init->srq_type != IB_SRQT_BASIC) {
		return -EOPNOTSUPP;
	}
	ret = check_attr(&init->attr, STAG_MAX_QP_WR);
	if (ret)
		return ret;
	if (init->attr.srq_limit)
		return -EINVAL;
	ret = stag_queue_cmd(udata, &cmd, 0, sizeof(cmd));
	if (ret)
		return ret;
	ret = stag_res_charge(&sdev->res, STAG_RES_SRQ);
	if (ret)
		return ret;

	refcount_set(&srq->ref, 1);
	init_completion(&srq->released);
	spin_lock_init(&srq->lock);
	srq->user = udata;
	srq->max_sge = max(init->attr.max_sge, 1U);
	slots = stag_ring_slots(init->attr.max_wr);
	ret = stag_queue_init_mem(&srq->queue, slots, stag_wqe_recv_slot_size(srq->max_sge),
				  &cmd.ring);
	if (ret)
		goto err_uncharge;
	if (init->srq_type == IB_SRQT_TM) {
		srq->tm = stag_tm_alloc(init->ext.tag_matching.max_num_tags, &srq->lock);
		if (!srq->tm) {
			ret = -ENOMEM;
			goto err_uninit_queue;
		}
	}
	srq->max_wr = slots;
	init->attr.max_wr = slots;
	init->attr.max_sge = srq->max_sge;
	/* Reserved, not yet findable: the entry stays NULL until the end. */
	ret = xa_alloc_cyclic_bh(&sdev->srqs, &srq->srq_num, NULL,
				 XA_LIMIT(1, STAG_SRQN_MAX), &sdev->srq_next, GFP_KERNEL);
	if (ret < 0)
		goto err_free_tm;
	ibsrq->ext.xrc.srq_num = srq->srq_num;

	if (udata) {
		ret = stag_queue_share(&srq->queue, udata, &resp.offset);
		if (ret)
			goto err_free_num;
		resp.num_slots = slots;
		resp.slot_size = srq->queue.slot_size;
		resp.srq_num = srq->srq_num;
		ret = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
		if (ret)
			goto err_free_num;
	}
	/* Last: from here a TGT QP's responder can find it. */
	xa_store_bh(&sdev->srqs, srq->srq_num, srq, GFP_KERNEL);
	return 0;

err_free_num:
	xa_erase_bh(&sdev->srqs, srq->srq_num);
err_free_tm:
	stag_tm_free(srq->tm);
err_uninit_queue:
	stag_queue_uninit(&srq->queue);
err_uncharge:
	stag_res_uncharge(&sdev->res, STAG_RES_SRQ);
	return ret;
}

/*
 * Moves the receives waiting into @nq, in order, and makes it the SRQ's
 * ring. -EINVAL when more are waiting than @max_wr asked for (however many
 * the rounded-up ring would hold), or when @limit is above it; -EIO for a
 * corrupted ring. Nothing changes on failure.
 */
static int srq_swap_ring(struct stag_srq *srq, struct stag_queue *nq, u32 max_wr, u32 limit)
{
	struct stag_queue *q = &srq->queue;
	u32 n, i;
	int ret;

	lockdep_assert_held(&srq->lock);
	/*
	 * A user SRQ's provider holds its posting lock across the resize; a
	 * process that writes the ring itself meanwhile only changes bytes
	 * that are checked again when a responder takes them.
	 */
	ret = stag_queue_avail(q, &n);
	if (ret)
		return ret;
	if (n > max_wr || limit > max_wr)
		return -EINVAL;
	for (i = 0; i < n; i++)
		memcpy(stag_queue_slot(nq, i), stag_queue_slot(q, q->index + i), q->slot_size);
	nq->ctl->prod = n;
	swap(*q, *nq);
	WRITE_ONCE(srq->max_wr, q->num_slots);
	srq->limit = limit;
	return 0;
}

/*
 * A new ring for @max_wr receives, in memory the command brings or shared
 * with the user's process, which is told where it is at the address its
 * command names.
 */
static int srq_new_ring(struct stag_srq *srq, struct stag_queue *nq, u32 max_wr,
			struct ib_udata *udata)
{
	struct stag_modify_srq_cmd cmd;
	struct stag_srq_ring ring = {};
	int ret;

	/* The address to write to is all an older provider sends. */
	ret = stag_queue_cmd(srq->user ? udata : NULL, &cmd,
			     srq->user ? sizeof(cmd.ring_addr) : 0, sizeof(cmd));
	if (ret)
		return ret;
	ret = stag_queue_init_mem(nq, stag_ring_slots(max_wr), srq->queue.slot_size, &cmd.ring);
	if (ret || !srq->user)
		return ret;
	ret = stag_queue_share(nq, udata, &ring.offset);
	if (ret)
		goto err_uninit;
	ring.num_slots = nq->num_slots;
	ring.slot_size = nq->slot_size;
	if (copy_to_user(u64_to_user_ptr(cmd.ring_addr), &ring, sizeof(ring))) {
		ret = -EFAULT;
		goto err_uninit;
	}
	return 0;

err_uninit:
	stag_queue_uninit(nq);
	return ret;
}

/**
 * stag_srq_modify() - the modify_srq verb
 * @ibsrq: the SRQ
 * @attr: the new size (IB_SRQ_MAX_WR) and limit (IB_SRQ_LIMIT)
 * @mask: IB_SRQ_MAX_WR, IB_SRQ_LIMIT or both
 * @udata: the user's command: where to say where a resized ring is
 *
 * A resize moves the receives waiting to a new ring, in order, and keeps
 * the armed limit unless a new one comes with it.
 *
 * Return: 0; -EINVAL for a size out of range or smaller than the receives
 * waiting, a limit above the size, or a user resize without the address
 * to write the ring's place to; -EFAULT when that address is not
 * writable; -EIO for a corrupted ring; -ENOMEM; for the new ring's memory
 * the command brings, what stag_queue_init_mem() returns. Nothing changes
 * on failure.
 */
int stag_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr, enum ib_srq_attr_mask mask,
		    struct ib_udata *udata)
{
	struct stag_srq *srq = to_stag_srq(ibsrq);
	struct stag_queue nq;
	unsigned long flags;
	u32 limit;
	int ret;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (!(mask & IB_SRQ_MAX_WR)) {
		if (!(mask & IB_SRQ_LIMIT))
			return 0;
		spin_lock_irqsave(&srq->lock, flags);
		ret = attr->srq_limit > srq->max_wr ? -EINVAL : 0;
		if (!ret)
			srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
		return ret;
	}

	if (attr->max_wr < 1 || attr->max_wr > STAG_MAX_QP_WR)
		return -EINVAL;
	ret = srq_new_ring(srq, &nq, attr->max_wr, udata);
	if (ret)
		return ret;
	spin_lock_irqsave(&srq->lock, flags);
	limit = mask & IB_SRQ_LIMIT ? attr->srq_limit : srq->limit;
	ret = srq_swap_ring(srq, &nq, attr->max_wr, limit);
	spin_unlock_irqrestore(&srq->lock, flags);
	/* On success nq holds the old ring now: it goes either way. */
	stag_queue_uninit(&nq);
	return ret;
}

int stag_srq_query(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct stag_srq *srq = to_stag_srq(ibsrq);

	attr->max_wr = READ_ONCE(srq->max_wr);
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

/**
 * stag_srq_get_xrc() - find an XRC SRQ of a domain by number
 * @sdev: the device
 * @srqn: the number an XRC message names
 * @xrcd: the domain of the TGT QP the message arrived at
 *
 * Return: the SRQ with a reference the caller drops with stag_srq_put(),
 * or NULL when @srqn names no SRQ, one that is not XRC, one of another
 * domain, or one being destroyed.
 */
struct stag_srq *stag_srq_get_xrc(struct stag_dev *sdev, u32 srqn, const struct ib_xrcd *xrcd)
{
	struct stag_srq *srq;

	xa_lock_bh(&sdev->srqs);
	srq = xa_load(&sdev->srqs, srqn);
	if (srq && (srq->ibsrq.srq_type != IB_SRQT_XRC || srq->ibsrq.ext.xrc.xrcd != xrcd ||
		    !refcount_inc_not_zero(&srq->ref)))
		srq = NULL;
	xa_unlock_bh(&sdev->srqs);
	return srq;
}

/*
 * After the erase no responder finds the SRQ; one that found it before
 * holds a reference, and the wait is for its message to be placed.
 */
int stag_srq_destroy(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibsrq->device);
	struct stag_srq *srq = to_stag_srq(ibsrq);

	might_sleep();
	xa_erase_bh(&sdev->srqs, srq->srq_num);
	stag_srq_put(srq);
	wait_for_completion(&srq->released);
	stag_tm_free(srq->tm);
	stag_queue_uninit(&srq->queue);
	stag_res_uncharge(&sdev->res, STAG_RES_SRQ);
	return 0;
}

int stag_srq_post_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct stag_srq *srq = to_stag_srq(ibsrq);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		if (stag_queue_kfull(&srq->queue)) {
			ret = -ENOMEM;
			break;
		}
		ret = stag_wqe_from_recv_wr(wr, srq->max_sge, stag_queue_ktail(&srq->queue));
		if (ret)
			break;
		stag_queue_kpush(&srq->queue);
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (ret)
		*bad_wr = wr;
	return ret;
}

static void limit_reached(struct stag_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

static int srq_pop(struct stag_srq *srq, struct stag_rwqe *wqe, u32 *left)
{
	struct stag_queue *q = &srq->queue;
	u32 avail;
	int ret;

	lockdep_assert_held(&srq->lock);
	ret = stag_queue_avail(q, &avail);
	if (ret)
		return ret;
	if (!avail)
		return -ENOENT;
	ret = stag_wqe_fetch_recv(stag_queue_head(q), q->slot_size, srq->max_sge, wqe);
	stag_queue_pop(q);
	*left = avail - 1;
	return ret;
}

/* Takes the next plain receive; true in *@event when the limit fired. */
static int srq_take(struct stag_srq *srq, struct stag_rwqe *wqe, bool *event)
{
	u32 left = 0;
	int ret;

	ret = srq_pop(srq, wqe, &left);
	if (ret != -ENOENT && ret != -EIO && srq->limit && left < srq->limit) {
		srq->limit = 0;
		*event = true;
	}
	return ret;
}

/**
 * stag_srq_take() - take the next receive WQE
 * @srq: the SRQ
 * @wqe: the kernel copy to fill
 *
 * Return: 0; -ENOENT when the SRQ is empty; -EINVAL for a malformed WQE
 * (taken, and to be completed in error); -EIO for a corrupted ring.
 */
int stag_srq_take(struct stag_srq *srq, struct stag_rwqe *wqe)
{
	unsigned long flags;
	bool event = false;
	int ret;

	spin_lock_irqsave(&srq->lock, flags);
	ret = srq_take(srq, wqe, &event);
	spin_unlock_irqrestore(&srq->lock, flags);
	if (event)
		limit_reached(srq);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(stag_srq_take);

/**
 * stag_srq_take_tm() - the buffer for a message to a tag matching SRQ
 * @srq: the SRQ, of IB_SRQT_TM
 * @tmh: the message's header, copied, or NULL when it is too short for one
 * @wqe: the kernel copy to fill: a tagged buffer or a plain receive
 * @r: what the message is, and whether it matched
 *
 * A message that finds no tagged buffer takes a plain receive whole, and
 * one that carried a tag is then unexpected. A message that finds no
 * buffer at all changes nothing: it is retried as any RNR is.
 *
 * Return: as stag_srq_take().
 */
int stag_srq_take_tm(struct stag_srq *srq, const struct stag_tmh *tmh, struct stag_rwqe *wqe,
		     struct stag_tm_recv *r)
{
	unsigned long flags;
	bool event = false;
	int ret = 0;

	stag_tm_classify(tmh, r);
	spin_lock_irqsave(&srq->lock, flags);
	if (!stag_tm_match(srq->tm, r, wqe)) {
		ret = srq_take(srq, wqe, &event);
		if (!ret)
			stag_tm_unexpected(srq->tm, r);
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (event)
		limit_reached(srq);
	return ret;
}

/**
 * stag_srq_tm_op() - a tag list operation (ibv_post_srq_ops)
 * @srq: the SRQ
 * @op: the operation, copied from the caller
 * @handle: an ADD's handle
 *
 * The completion goes to the SRQ's CQ under the SRQ's lock, so the
 * operations' completions come in the order they were done.
 *
 * Return: 0; -EINVAL for an SRQ without tag matching; what stag_tm_op()
 * returns.
 */
int stag_srq_tm_op(struct stag_srq *srq, const struct stag_srq_op *op, u32 *handle)
{
	struct stag_cq_tm ctm;
	unsigned long flags;
	struct ib_wc wc;
	int ret;

	if (!srq->tm)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	ret = stag_tm_op(srq->tm, op, handle, &wc, &ctm);
	if (!ret && (op->flags & STAG_TM_OPS_SIGNALED || wc.status != IB_WC_SUCCESS))
		stag_cq_post_tm(to_stag_cq(srq->ibsrq.ext.cq), &wc, &ctm, false);
	spin_unlock_irqrestore(&srq->lock, flags);
	return ret;
}
