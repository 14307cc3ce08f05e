// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues. Responders of every QP on the SRQ take WQEs from
 * it under its lock, each copied out once; the limit event fires when a
 * take leaves fewer WQEs than the armed limit.
 */

#include <linux/log2.h>
#include <rdma/stag-abi.h>

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
 * @udata: the user's command, or NULL
 *
 * Return: 0; -EOPNOTSUPP for SRQ types other than basic; -EINVAL for
 * sizes out of range, or when the device has max_srq SRQs already;
 * -ENOMEM.
 */
int stag_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *init, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibsrq->device);
	struct stag_srq *srq = to_stag_srq(ibsrq);
	struct stag_create_srq_resp resp = {};
	u32 slots;
	int ret;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	ret = check_attr(&init->attr, STAG_MAX_QP_WR);
	if (ret)
		return ret;
	if (init->attr.srq_limit)
		return -EINVAL;
	if (udata && udata->inlen)
		return -EINVAL;
	ret = stag_res_charge(&sdev->res, STAG_RES_SRQ);
	if (ret)
		return ret;

	spin_lock_init(&srq->lock);
	srq->user = udata;
	srq->max_sge = max(init->attr.max_sge, 1U);
	slots = roundup_pow_of_two(init->attr.max_wr);
	ret = stag_queue_init(&srq->queue, slots, stag_wqe_recv_slot_size(srq->max_sge));
	if (ret)
		goto err_uncharge;
	srq->max_wr = slots;
	init->attr.max_wr = slots;
	init->attr.max_sge = srq->max_sge;
	srq->srq_num = atomic_inc_return(&sdev->srq_next) & 0xffffff;
	if (!udata)
		return 0;

	ret = stag_queue_share(&srq->queue, udata, &resp.offset);
	if (ret)
		goto err_uninit_queue;
	resp.num_slots = slots;
	resp.slot_size = srq->queue.slot_size;
	resp.srq_num = srq->srq_num;
	ret = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (ret)
		goto err_uninit_queue;
	return 0;

err_uninit_queue:
	stag_queue_uninit(&srq->queue);
err_uncharge:
	stag_res_uncharge(&sdev->res, STAG_RES_SRQ);
	return ret;
}

/**
 * stag_srq_modify() - the modify_srq verb
 * @ibsrq: the SRQ
 * @attr: the new limit (IB_SRQ_LIMIT)
 * @mask: IB_SRQ_LIMIT; IB_SRQ_MAX_WR (resizing) is not supported
 * @udata: unused
 *
 * Return: 0; -EOPNOTSUPP for a resize; -EINVAL for a limit above the size.
 */
int stag_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr, enum ib_srq_attr_mask mask,
		    struct ib_udata *udata)
{
	struct stag_srq *srq = to_stag_srq(ibsrq);

	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & ~IB_SRQ_LIMIT)
		return -EINVAL;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->max_wr)
		return -EINVAL;
	spin_lock_bh(&srq->lock);
	srq->limit = attr->srq_limit;
	spin_unlock_bh(&srq->lock);
	return 0;
}

int stag_srq_query(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct stag_srq *srq = to_stag_srq(ibsrq);

	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int stag_srq_destroy(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	stag_queue_uninit(&to_stag_srq(ibsrq)->queue);
	stag_res_uncharge(&to_stag_dev(ibsrq->device)->res, STAG_RES_SRQ);
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
	u32 left = 0;
	int ret;

	spin_lock_irqsave(&srq->lock, flags);
	ret = srq_pop(srq, wqe, &left);
	if (ret != -ENOENT && ret != -EIO && srq->limit && left < srq->limit) {
		srq->limit = 0;
		event = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (event)
		limit_reached(srq);
	return ret;
}
