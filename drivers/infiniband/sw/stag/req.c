// SPDX-License-Identifier: GPL-2.0
/*
 * The requester: runs a QP's send queue in order, one WQE at a time.
 *
 * Each WQE is copied out of the ring once (wqe.c), its local buffers pass
 * the gate, and the message goes to the destination QP's responder, which
 * executes it whole and answers as an ACK or NAK would. An RNR NAK or no
 * answer at all keeps the WQE pending and arms the QP's timer; the WQE is
 * retried when it fires, until the retry counts run out. Everything after
 * a pending WQE waits for it, which is what keeps RC ordered.
 *
 * Context: process context (the user's doorbell syscall or the QP's work),
 * under sq.mutex.
 */

#include <linux/jiffies.h>

#include "ah.h"
#include "cq.h"
#include "dev.h"
#include "mr.h"
#include "mw.h"
#include "qp.h"
#include "req.h"
#include "resp.h"
#include "route.h"

/* IBA table 45: the RNR NAK timer field, in microseconds. */
static const u32 rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
	163840, 245760, 327680, 491520,
};

static unsigned long rnr_delay(u8 min_rnr_timer)
{
	return usecs_to_jiffies(rnr_usecs[min_rnr_timer & 31]);
}

/*
 * The local ACK timeout, 4.096 us * 2^timeout. Zero means infinite in the
 * IBA; a loopback retry costs nothing, so stag retries every second then
 * and never gives up.
 */
static unsigned long ack_timeout(u8 timeout)
{
	if (!timeout)
		return HZ;
	return usecs_to_jiffies(div_u64(4096ULL << min_t(u8, timeout, 31), 1000));
}

void stag_req_timer(struct timer_list *t)
{
	struct stag_qp *qp = from_timer(qp, t, sq.timer);

	/* The armed timer's reference passes to the work, or is dropped. */
	stag_qp_kick(qp);
	stag_qp_put(qp);
}

/* Arms the timer for the pending WQE; false once the QP is going away. */
static void arm_timer(struct stag_qp *qp, unsigned long delay)
{
	lockdep_assert_held(&qp->sq.mutex);
	if (qp->sq.dead)
		return;
	qp->sq.waiting = true;
	stag_qp_get(qp);
	if (mod_timer(&qp->sq.timer, jiffies + max(delay, 1UL)))
		stag_qp_put(qp);
}

static void complete_wqe(struct stag_qp *qp, enum ib_wc_status status)
{
	const struct stag_swqe *wqe = qp->sq.wqe;
	struct ib_wc wc = {
		.wr_id = wqe->hdr.wr_id,
		.status = status,
		.opcode = stag_wqe_wc_opcode(wqe->hdr.opcode),
		.byte_len = wqe->length,
		.qp = &qp->ibqp,
		.port_num = STAG_PORT_NUM,
	};

	qp->sq.pending = false;
	if (status == IB_WC_SUCCESS && !qp->sq.sig_all &&
	    !(wqe->hdr.send_flags & IB_SEND_SIGNALED))
		return;
	/* A full CQ is in error and has told its consumer; nothing more to do. */
	stag_cq_post(qp->scq, &wc, false);
	if (status != IB_WC_SUCCESS && status != IB_WC_WR_FLUSH_ERR)
		stag_qp_error(qp);
}

static bool fetch(struct stag_qp *qp)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);
	struct stag_queue *q = &qp->sq.queue;
	struct stag_swqe *wqe = qp->sq.wqe;
	enum ib_wc_status status;
	u32 avail;

	lockdep_assert_held(&qp->sq.mutex);
	if (stag_queue_avail(q, &avail)) {
		stag_qp_fatal(qp);
		return false;
	}
	if (!avail)
		return false;
	status = stag_wqe_fetch_send(&qp->sq.limits, stag_queue_head(q), q->slot_size, wqe);
	stag_queue_pop(q);
	if (!status && stag_wqe_is_send(wqe->hdr.opcode) &&
	    (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) &&
	    stag_ah_copy_av(sdev, wqe->hdr.wr.ud.ah, qp->ibqp.pd, &wqe->av))
		status = IB_WC_LOC_QP_OP_ERR;
	qp->sq.pending = true;
	qp->sq.status = status;
	qp->sq.retry_left = qp->attr.retry_cnt;
	qp->sq.rnr_left = qp->attr.rnr_retry;
	return true;
}

/* Where the message goes: the connected peer, or the WQE's address. */
static struct stag_qp *route(struct stag_qp *qp, struct stag_msg *msg)
{
	const struct stag_swqe *wqe = msg->wqe;

	if (qp->ibqp.qp_type != IB_QPT_UD && qp->ibqp.qp_type != IB_QPT_GSI)
		return stag_route_find_qp(&qp->dgid, READ_ONCE(qp->attr.dest_qp_num));
	msg->av = &wqe->av;
	/* A qkey with the high bit set means the QP's own (IBA 10.2.5). */
	msg->qkey = wqe->hdr.wr.ud.remote_qkey & 0x80000000 ? READ_ONCE(qp->attr.qkey) :
							      wqe->hdr.wr.ud.remote_qkey;
	return stag_route_find_qp(&wqe->av.dgid, wqe->hdr.wr.ud.remote_qpn & 0xffffff);
}

static enum ib_wc_status nak_status(enum stag_resp_result result)
{
	switch (result) {
	case STAG_RESP_NAK_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case STAG_RESP_NAK_INV_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/* Acts on the answer; an RNR NAK or silence leaves the WQE pending. */
static void answer(struct stag_qp *qp, enum stag_resp_result result)
{
	bool reliable = qp->ibqp.qp_type == IB_QPT_RC;

	if (!reliable || result == STAG_RESP_ACK) {
		complete_wqe(qp, IB_WC_SUCCESS);
		return;
	}
	switch (result) {
	case STAG_RESP_RNR:
		if (!qp->sq.rnr_left) {
			complete_wqe(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		/* Seven means retry for ever (IBA 9.7.5.2.8). */
		if (qp->sq.rnr_left != 7)
			qp->sq.rnr_left--;
		arm_timer(qp, rnr_delay(qp->sq.rnr_timer));
		return;
	case STAG_RESP_DROP:
		if (!qp->sq.retry_left) {
			complete_wqe(qp, IB_WC_RETRY_EXC_ERR);
			return;
		}
		if (READ_ONCE(qp->attr.timeout))
			qp->sq.retry_left--;
		arm_timer(qp, ack_timeout(READ_ONCE(qp->attr.timeout)));
		return;
	default:
		complete_wqe(qp, nak_status(result));
	}
}

static enum ib_wc_status check_length(struct stag_qp *qp, const struct stag_swqe *wqe)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);

	if (qp->ibqp.qp_type != IB_QPT_UD && qp->ibqp.qp_type != IB_QPT_GSI)
		return IB_WC_SUCCESS;
	if (wqe->length > ib_mtu_enum_to_int(stag_port_active_mtu(&sdev->port)))
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}

/* Sends the pending WQE to its destination and acts on the answer. */
static void transmit(struct stag_qp *qp)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);
	const struct stag_swqe *wqe = qp->sq.wqe;
	u8 op = wqe->hdr.opcode;
	struct stag_msg msg = {
		.src = qp,
		.wqe = wqe,
		.local = qp->sq.local,
		.length = wqe->length,
		.src_qpn = qp->ibqp.qp_num,
	};
	struct stag_gate_who who = stag_qp_who(qp);
	enum stag_resp_result result;
	enum ib_wc_status status;
	struct stag_qp *dst;
	int access = 0;

	status = check_length(qp, wqe);
	if (status) {
		complete_wqe(qp, status);
		return;
	}
	dst = route(qp, &msg);
	if (!dst) {
		answer(qp, STAG_RESP_DROP);
		return;
	}
	if (op == IB_WR_RDMA_READ || stag_wqe_is_atomic(op))
		access = IB_ACCESS_LOCAL_WRITE;

	/*
	 * Gate references are taken only under the responder's mutex, so no
	 * thread ever waits for a mutex while it holds one: an invalidation
	 * that waits for accesses to drain cannot wait on itself.
	 */
	mutex_lock(&dst->resp_mutex);
	if (wqe->hdr.send_flags & IB_SEND_INLINE) {
		stag_sgl_init_kbuf(qp->sq.local, wqe->inline_data, wqe->length);
	} else if (stag_sgl_build(qp->sq.local, &sdev->tpt, &who, wqe->sge, wqe->hdr.num_sge,
				  access)) {
		mutex_unlock(&dst->resp_mutex);
		stag_qp_put(dst);
		complete_wqe(qp, IB_WC_LOC_PROT_ERR);
		return;
	}
	result = stag_resp_deliver(dst, &msg);
	stag_sgl_release(qp->sq.local);
	mutex_unlock(&dst->resp_mutex);
	qp->sq.rnr_timer = READ_ONCE(dst->attr.min_rnr_timer);
	stag_qp_put(dst);
	answer(qp, result);
}

/* A WQE that acts on the local TPT only. */
static enum ib_wc_status local_op(struct stag_qp *qp, const struct stag_swqe *wqe)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);
	int ret;

	switch (wqe->hdr.opcode) {
	case IB_WR_LOCAL_INV:
		ret = stag_tpt_invalidate_key(&sdev->tpt, wqe->hdr.ex, qp->ibqp.pd,
					      qp->ibqp.qp_num, false);
		if (ret == -EINVAL || ret == -EBUSY)
			return IB_WC_LOC_QP_OP_ERR;
		return ret ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
	case IB_WR_REG_MR:
		return stag_mr_fast_reg(qp, (const struct stag_reg_wr *)wqe->hdr.wr.raw);
	case IB_WR_BIND_MW:
		return stag_mw_bind(qp, wqe);
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

/* Runs the pending WQE; false when the queue must stop for now. */
static bool step(struct stag_qp *qp)
{
	enum ib_qp_state state = stag_qp_state(qp);

	lockdep_assert_held(&qp->sq.mutex);
	if (qp->sq.dead)
		return false;
	/* In error, what waits is flushed at once. */
	if (state == IB_QPS_ERR || state == IB_QPS_SQE) {
		if (!qp->sq.pending && !fetch(qp))
			return false;
		qp->sq.waiting = false;
		complete_wqe(qp, IB_WC_WR_FLUSH_ERR);
		return true;
	}
	if (qp->sq.waiting)
		return false;
	if (state == IB_QPS_RESET || state == IB_QPS_INIT || state == IB_QPS_RTR)
		return false;
	if (!qp->sq.pending) {
		if (state == IB_QPS_SQD || !fetch(qp))
			return false;
	}
	if (qp->sq.status) {
		complete_wqe(qp, qp->sq.status);
		return true;
	}
	if (stag_wqe_is_local(qp->sq.wqe->hdr.opcode))
		complete_wqe(qp, local_op(qp, qp->sq.wqe));
	else
		transmit(qp);
	return !qp->sq.waiting;
}

/**
 * stag_req_run() - run a QP's send queue as far as it goes
 * @qp: the QP
 *
 * Runs at most a ring's worth of WQEs, then leaves the rest to the QP's
 * work, so that a process posting without end cannot hold a syscall.
 */
void stag_req_run(struct stag_qp *qp)
{
	u32 budget = qp->sq.queue.num_slots;

	might_sleep();
	mutex_lock(&qp->sq.mutex);
	/* A timer that fired ends the wait it was armed for. */
	if (qp->sq.waiting && !timer_pending(&qp->sq.timer))
		qp->sq.waiting = false;
	while (budget && step(qp))
		budget--;
	mutex_unlock(&qp->sq.mutex);
	if (!budget)
		stag_qp_kick(qp);
}
