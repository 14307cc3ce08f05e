// SPDX-License-Identifier: GPL-2.0
/*
 * Receive work queues. A WQ is a receive ring with its own CQ and state,
 * written by its process as an SRQ's is (its slots are an SRQ's), with no
 * QP of its own: an RSS QP's indirection table names the WQs, and the
 * RSS QP's work takes their receives for the frames it hashes to each
 * (rss.c, raweth.c). Only user WQs exist: the kernel has no verb that
 * posts to one.
 *
 * States, as a NIC's RQ has them:
 * - RESET: receives may be posted, none is taken; frames for the WQ are
 *   dropped (no_recv). Entering it drops the receives waiting, with no
 *   completion, as a QP's reset does.
 * - RDY: frames are placed.
 * - ERR: the receives waiting, and every one posted after (the provider
 *   rings, STAG_QUEUE_FLUSH), complete with IB_WC_WR_FLUSH_ERR.
 * A receive that fails (a frame longer than it, a key the gate refuses,
 * a malformed WQE) puts the WQ in ERR, as it does a QP.
 */

#include <rdma/stag-abi.h>

#include "cq.h"
#include "dev.h"
#include "qp.h"
#include "wq.h"

/**
 * stag_wq_create() - the create_wq verb
 * @pd: the WQ's PD: its receives' keys are checked against it
 * @init: its attributes; max_wr and max_sge are updated to what it got
 * @udata: the user's command; it may bring the ring's memory
 *	   (struct stag_create_wq_cmd)
 *
 * Return: the WQ; ERR_PTR of -EOPNOTSUPP for a kernel WQ, one of a type
 * other than IB_WQT_RQ, or create flags (VLAN stripping, FCS scatter,
 * delay drop, end padding: stag strips and pads nothing); -EINVAL for
 * sizes out of range, or when the device has max_wq_type_rq WQs already;
 * -ENOMEM; for the command and its memory, what stag_queue_cmd() and
 * stag_queue_init_mem() return.
 */
struct ib_wq *stag_wq_create(struct ib_pd *pd, struct ib_wq_init_attr *init,
			     struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(pd->device);
	struct stag_create_wq_resp resp = {};
	struct stag_create_wq_cmd cmd;
	struct stag_wq *wq;
	int ret;

	if (!udata || init->wq_type != IB_WQT_RQ || init->create_flags)
		return ERR_PTR(-EOPNOTSUPP);
	if (init->max_wr < 1 || init->max_wr > STAG_MAX_QP_WR || init->max_sge > STAG_MAX_SGE)
		return ERR_PTR(-EINVAL);
	ret = stag_queue_cmd(udata, &cmd, 0, sizeof(cmd));
	if (ret)
		return ERR_PTR(ret);
	ret = stag_res_charge(&sdev->res, STAG_RES_WQ);
	if (ret)
		return ERR_PTR(ret);
	wq = kzalloc(sizeof(*wq), GFP_KERNEL_ACCOUNT);
	if (!wq) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	mutex_init(&wq->mutex);
	wq->max_sge = max(init->max_sge, 1U);
	ret = stag_queue_init_mem(&wq->queue, stag_ring_slots(init->max_wr),
				  stag_wqe_recv_slot_size(wq->max_sge), &cmd.ring);
	if (ret)
		goto err_free;
	/*
	 * From the QPs' numbers, reserved there (NULL: no packet finds it):
	 * a WQ's completions carry its number as qp_num, and a CQ the WQ
	 * shares with a QP must tell them apart, as when the QP's reset
	 * cleans the CQ of its own.
	 */
	ret = xa_alloc_cyclic_bh(&sdev->qps, &wq->ibwq.wq_num, NULL,
				 XA_LIMIT(STAG_QPN_MIN, STAG_QPN_MAX), &sdev->qp_next, GFP_KERNEL);
	if (ret < 0) {
		ret = ret == -EBUSY ? -ENOMEM : ret;
		goto err_uninit_queue;
	}
	wq->ibwq.state = IB_WQS_RESET;
	/* The core passes these but leaves them to the driver to keep. */
	wq->ibwq.event_handler = init->event_handler;
	wq->ibwq.wq_context = init->wq_context;
	ret = stag_queue_share(&wq->queue, udata, &resp.offset);
	if (ret)
		goto err_free_num;
	resp.num_slots = wq->queue.num_slots;
	resp.slot_size = wq->queue.slot_size;
	ret = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (ret)
		goto err_free_num;
	init->max_wr = wq->queue.num_slots;
	init->max_sge = wq->max_sge;
	return &wq->ibwq;

err_free_num:
	xa_erase_bh(&sdev->qps, wq->ibwq.wq_num);
err_uninit_queue:
	stag_queue_uninit(&wq->queue);
err_free:
	mutex_destroy(&wq->mutex);
	kfree(wq);
err_uncharge:
	stag_res_uncharge(&sdev->res, STAG_RES_WQ);
	return ERR_PTR(ret);
}

static void wq_event(struct stag_wq *wq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = wq->ibwq.device,
		.element.wq = &wq->ibwq,
		.event = type,
	};

	if (wq->ibwq.event_handler)
		wq->ibwq.event_handler(&ev, wq->ibwq.wq_context);
}

/* A corrupted ring: nothing more is taken from it. */
static void wq_fatal(struct stag_wq *wq)
{
	lockdep_assert_held(&wq->mutex);
	WRITE_ONCE(wq->ibwq.state, IB_WQS_ERR);
	stag_queue_set_flags(&wq->queue, 0);
	wq_event(wq, IB_EVENT_WQ_FATAL);
}

/* A completion of the WQ's: its CQ's number for it is the WQ's. */
static void wq_post(struct stag_wq *wq, struct ib_wc *wc, u64 wr_id)
{
	wc->wr_id = wr_id;
	wc->port_num = STAG_PORT_NUM;
	stag_cq_post_wq(to_stag_cq(wq->ibwq.cq), wc, wq->ibwq.wq_num);
}

/* Completes every receive waiting with IB_WC_WR_FLUSH_ERR. */
static void wq_flush(struct stag_wq *wq)
{
	struct ib_wc wc = { .status = IB_WC_WR_FLUSH_ERR, .opcode = IB_WC_RECV };
	struct stag_queue *q = &wq->queue;
	struct stag_recv_wqe hdr;
	u32 n;

	lockdep_assert_held(&wq->mutex);
	if (stag_queue_avail(q, &n)) {
		wq_fatal(wq);
		return;
	}
	while (n--) {
		/* Only wr_id is read: a malformed WQE is flushed like any. */
		memcpy(&hdr, stag_queue_head(q), sizeof(hdr));
		stag_queue_pop(q);
		wq_post(wq, &wc, hdr.wr_id);
	}
}

/* Drops the receives waiting, as a reset does: no completion. */
static int wq_discard(struct stag_wq *wq)
{
	struct stag_queue *q = &wq->queue;
	u32 n;
	int ret;

	lockdep_assert_held(&wq->mutex);
	ret = stag_queue_avail(q, &n);
	if (ret)
		return ret;
	q->index += n;
	stag_queue_release(q, q->index);
	return 0;
}

static void wq_enter_error(struct stag_wq *wq)
{
	lockdep_assert_held(&wq->mutex);
	WRITE_ONCE(wq->ibwq.state, IB_WQS_ERR);
	/* From now on the provider rings for every receive it posts. */
	stag_queue_set_flags(&wq->queue, STAG_QUEUE_FLUSH);
	/*
	 * Pairs with the provider's fence between publishing prod and
	 * reading the flag: either it sees the flag and rings, or the
	 * flush sees its receive.
	 */
	smp_mb();
	wq_flush(wq);
}

/**
 * stag_wq_modify() - the modify_wq verb
 * @ibwq: the WQ
 * @attr: the state it is in (IB_WQ_CUR_STATE) and the one it goes to
 * @mask: IB_WQ_STATE, with or without IB_WQ_CUR_STATE
 * @udata: the user's command; stag takes no driver data
 *
 * RESET and RDY go to RDY, any state to RESET or ERR. ERR to ERR is the
 * provider's doorbell, which names ERR as the current state: it flushes
 * what was posted since.
 *
 * Return: 0; -EINVAL for a current state that is not the WQ's, a
 * transition not listed, or driver data; -EOPNOTSUPP for flags; -EIO
 * when a reset finds the ring corrupted. A corrupted ring leaves the WQ
 * fatal in ERR whichever modify finds it (a modify to ERR still returns
 * 0); the other failures change nothing.
 */
int stag_wq_modify(struct ib_wq *ibwq, struct ib_wq_attr *attr, u32 mask, struct ib_udata *udata)
{
	struct stag_wq *wq = to_stag_wq(ibwq);
	enum ib_wq_state cur;
	int ret = 0;

	if (mask & IB_WQ_FLAGS)
		return -EOPNOTSUPP;
	if (mask & ~(IB_WQ_STATE | IB_WQ_CUR_STATE) || (udata && udata->inlen))
		return -EINVAL;
	if (!(mask & IB_WQ_STATE))
		return 0;
	mutex_lock(&wq->mutex);
	cur = ibwq->state;
	if ((mask & IB_WQ_CUR_STATE) && attr->curr_wq_state != cur) {
		ret = -EINVAL;
		goto out_unlock;
	}
	switch (attr->wq_state) {
	case IB_WQS_RESET:
		ret = wq_discard(wq);
		if (ret) {
			wq_fatal(wq);
			break;
		}
		stag_queue_set_flags(&wq->queue, 0);
		WRITE_ONCE(ibwq->state, IB_WQS_RESET);
		break;
	case IB_WQS_RDY:
		if (cur == IB_WQS_ERR)
			ret = -EINVAL;
		else
			WRITE_ONCE(ibwq->state, IB_WQS_RDY);
		break;
	case IB_WQS_ERR:
		wq_enter_error(wq);
		break;
	default:
		ret = -EINVAL;
	}
out_unlock:
	mutex_unlock(&wq->mutex);
	return ret;
}

int stag_wq_destroy(struct ib_wq *ibwq, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibwq->device);
	struct stag_wq *wq = to_stag_wq(ibwq);

	xa_erase_bh(&sdev->qps, ibwq->wq_num);
	stag_queue_uninit(&wq->queue);
	mutex_destroy(&wq->mutex);
	kfree(wq);
	stag_res_uncharge(&sdev->res, STAG_RES_WQ);
	return 0;
}

/**
 * stag_wq_take() - take the next receive WQE for a frame
 * @wq: the WQ, its mutex held
 * @wqe: the kernel copy to fill
 *
 * Return: 0; -EAGAIN when the WQ is not ready (RESET or ERR); -ENOENT
 * when no receive is posted; -EINVAL for a malformed WQE, taken, whose
 * completion (stag_wq_complete()) is an error; -EIO for a corrupted ring,
 * after which the WQ is in error.
 */
int stag_wq_take(struct stag_wq *wq, struct stag_rwqe *wqe)
{
	struct stag_queue *q = &wq->queue;
	u32 avail;
	int ret;

	lockdep_assert_held(&wq->mutex);
	if (wq->ibwq.state != IB_WQS_RDY)
		return -EAGAIN;
	ret = stag_queue_avail(q, &avail);
	if (ret) {
		wq_fatal(wq);
		return ret;
	}
	if (!avail)
		return -ENOENT;
	ret = stag_wqe_fetch_recv(stag_queue_head(q), q->slot_size, wq->max_sge, wqe);
	stag_queue_pop(q);
	return ret;
}

/**
 * stag_wq_complete() - complete a receive stag_wq_take() took
 * @wq: the WQ, its mutex held
 * @wc: the completion, but for wr_id and port
 * @wr_id: the receive's
 *
 * A receive that failed puts the WQ in error: the rest are flushed.
 */
void stag_wq_complete(struct stag_wq *wq, struct ib_wc *wc, u64 wr_id)
{
	lockdep_assert_held(&wq->mutex);
	wq_post(wq, wc, wr_id);
	if (wc->status != IB_WC_SUCCESS)
		wq_enter_error(wq);
}
