// SPDX-License-Identifier: GPL-2.0
/*
 * The requester: runs a QP's send queue.
 *
 * Each WQE is copied out of its ring slot once (wqe.c) into the QP's
 * window: the sends fetched and not completed yet, oldest first. The QP's
 * transport (xport.h) takes them on in order and says when each is done;
 * WQEs that act on the local TPT only (REG_MR, LOCAL_INV, BIND_MW), and
 * WQEs with a fence, wait until every send before them is done. Sends
 * complete in order, from the oldest, and a ring slot goes back to the
 * producer only when its WQE completes: the WQEs a consumer has
 * outstanding never exceed the depth of its queue.
 *
 * A send that fails where it is fetched (a malformed WQE) completes in
 * its turn, and nothing after it starts: its error moves the QP to the
 * error state, and the rest are flushed.
 *
 * Context: process context (the user's doorbell syscall or the QP's work),
 * under sq.mutex.
 */

#include <linux/jiffies.h>
#include <rdma/restrack.h>

#include "ah.h"
#include "compat.h"
#include "cq.h"
#include "dev.h"
#include "mr.h"
#include "mw.h"
#include "qp.h"
#include "req.h"
#include "xport.h"

/* IBA table 45: the RNR NAK timer field, in microseconds. */
static const u32 rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
	163840, 245760, 327680, 491520,
};

unsigned long stag_req_rnr_delay(u8 min_rnr_timer)
{
	return usecs_to_jiffies(rnr_usecs[min_rnr_timer & 31]);
}

/*
 * The local ACK timeout, 4.096 us * 2^timeout. Zero means infinite in the
 * IBA; stag retries every second then and never gives up.
 */
unsigned long stag_req_ack_timeout(u8 timeout)
{
	if (!timeout)
		return HZ;
	return usecs_to_jiffies(div_u64(4096ULL << min_t(u8, timeout, 31), 1000));
}

struct stag_send *stag_req_send(struct stag_qp *qp, u32 index)
{
	return &qp->sq.sends[index & (qp->sq.nsends - 1)];
}

/**
 * stag_req_done() - a transport is through with a send
 * @qp: its QP
 * @s: the send, started
 * @status: what it completes with, in its turn
 */
void stag_req_done(struct stag_qp *qp, struct stag_send *s, enum ib_wc_status status)
{
	lockdep_assert_held(&qp->sq.mutex);
	s->done = true;
	s->status = status;
}

/**
 * stag_req_read_payload() - bytes of a send's message, through the gate
 * @qp: the send's QP, its sq.mutex held
 * @s: the send
 * @dst: where they go
 * @off: from this offset of the message
 * @len: this many
 *
 * From the WQE itself for inline data and an atomic write's eight bytes;
 * from the send's buffers, checked against the QP's L_Keys, otherwise.
 *
 * Return: 0, or the gate's error.
 */
int stag_req_read_payload(struct stag_qp *qp, const struct stag_send *s, void *dst, u64 off,
			  u32 len)
{
	const struct stag_swqe *wqe = &s->wqe;
	struct stag_gate_who who = stag_qp_who(qp);
	int ret;

	lockdep_assert_held(&qp->sq.mutex);
	if (!len)
		return 0;
	if (stag_wqe_is_atomic_write(wqe->hdr.opcode)) {
		memcpy(dst, &wqe->hdr.wr.atomic.swap, len);
		return 0;
	}
	if (wqe->hdr.send_flags & IB_SEND_INLINE) {
		memcpy(dst, wqe->inline_data + off, len);
		return 0;
	}
	ret = stag_sgl_build_range(qp->sq.local, &to_stag_dev(qp->ibqp.device)->tpt, &who,
				   wqe->sge, wqe->hdr.num_sge, 0, off, len);
	if (ret)
		return ret;
	ret = stag_sgl_read(qp->sq.local, 0, dst, len);
	stag_sgl_release(qp->sq.local);
	return ret;
}

void stag_req_timer(struct timer_list *t)
{
	struct stag_qp *qp = timer_container_of(qp, t, sq.timer);

	/* The run acts on it; the armed timer's reference goes to the work. */
	set_bit(STAG_SQ_EXPIRED, &qp->sq.flags);
	stag_qp_kick(qp);
	stag_qp_put(qp);
}

/**
 * stag_req_arm() - (re)arm the QP's timer
 * @qp: the QP
 * @delay: jiffies from now
 *
 * The armed timer holds a QP reference. Nothing is armed once the QP is
 * being destroyed.
 */
void stag_req_arm(struct stag_qp *qp, unsigned long delay)
{
	lockdep_assert_held(&qp->sq.mutex);
	if (qp->sq.dead)
		return;
	stag_qp_get(qp);
	if (mod_timer(&qp->sq.timer, jiffies + max(delay, 1UL)))
		stag_qp_put(qp);
}

/* Stops the QP's timer if it is armed, with the reference it held. */
void stag_req_disarm(struct stag_qp *qp)
{
	lockdep_assert_held(&qp->sq.mutex);
	if (timer_delete(&qp->sq.timer))
		stag_qp_put(qp);
}

static void complete_send(struct stag_qp *qp, const struct stag_send *s)
{
	const struct stag_swqe *wqe = &s->wqe;
	struct ib_wc wc = {
		.wr_id = wqe->hdr.wr_id,
		.status = s->status,
		.opcode = stag_wqe_wc_opcode(wqe->hdr.opcode),
		.byte_len = wqe->length,
		.qp = &qp->ibqp,
		.port_num = STAG_PORT_NUM,
	};

	lockdep_assert_held(&qp->sq.mutex);
	if (s->status == IB_WC_SUCCESS && !qp->sq.sig_all &&
	    !(wqe->hdr.send_flags & IB_SEND_SIGNALED))
		return;
	/*
	 * In error before the completion shows, as a receive's (resp.c); the
	 * flush waits for sq.mutex, held here.
	 */
	if (s->status != IB_WC_SUCCESS && s->status != IB_WC_WR_FLUSH_ERR)
		stag_qp_error(qp);
	/* A full CQ is in error and has told its consumer; nothing more to do. */
	stag_cq_post(qp->scq, &wc, false);
}

/*
 * Completes the done sends at the head of the window. Each gives its ring
 * slot back before its completion shows: a consumer that posts again as
 * soon as it polls must find the room.
 */
static void retire(struct stag_qp *qp)
{
	struct stag_sq *sq = &qp->sq;

	while (sq->head != sq->tail && stag_req_send(qp, sq->head)->done) {
		struct stag_send *s = stag_req_send(qp, sq->head);

		if (s->rd_atomic)
			sq->rd_atomic--;
		sq->head++;
		stag_queue_release(&sq->queue, sq->queue.index - (sq->tail - sq->head));
		complete_send(qp, s);
		if (s->fin_owed && sq->xport->fin)
			sq->xport->fin(qp, &s->fin);
		s->fin_owed = false;
	}
	if ((s32)(sq->start - sq->head) < 0)
		sq->start = sq->head;
}

/* Copies the next WQE into the window; false when there is none or no room. */
static bool fetch(struct stag_qp *qp)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);
	struct stag_sq *sq = &qp->sq;
	struct stag_queue *q = &sq->queue;
	enum ib_wc_status status;
	struct stag_send *s;
	u32 avail;

	lockdep_assert_held(&sq->mutex);
	if (sq->tail - sq->head == sq->nsends)
		return false;
	if (stag_queue_avail(q, &avail)) {
		stag_qp_fatal(qp);
		return false;
	}
	if (!avail)
		return false;
	s = stag_req_send(qp, sq->tail);
	status = stag_wqe_fetch_send(&sq->limits, stag_queue_head(q), q->slot_size, &s->wqe);
	/* Taken, not given back: the slot is freed when the WQE completes. */
	q->index++;
	if (!status && stag_wqe_is_send(s->wqe.hdr.opcode) &&
	    (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI)) {
		if (stag_ah_copy_av(sdev, s->wqe.hdr.wr.ud.ah, qp->ibqp.pd, &s->wqe.av))
			status = IB_WC_LOC_QP_OP_ERR;
		else if (s->wqe.length > ib_mtu_enum_to_int(stag_port_active_mtu(&sdev->port)))
			status = IB_WC_LOC_LEN_ERR;
	}
	s->started = false;
	s->done = status != IB_WC_SUCCESS;
	s->status = status;
	s->rd_atomic = false;
	s->placed = 0;
	s->fin_owed = false;
	sq->tail++;
	return true;
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

/* Hands the fetched sends to the transport, in order, as far as it goes. */
static void start_sends(struct stag_qp *qp)
{
	struct stag_sq *sq = &qp->sq;
	struct stag_send *s;

	while (sq->start != sq->tail && !sq->waiting) {
		s = stag_req_send(qp, sq->start);
		if (s->done) {
			/* Failed when fetched: nothing after it may start. */
			if (s->status != IB_WC_SUCCESS)
				return;
			sq->start++;
			continue;
		}
		if (stag_wqe_is_local(s->wqe.hdr.opcode) || s->wqe.hdr.send_flags & IB_SEND_FENCE) {
			if (sq->start != sq->head)
				return;
			if (stag_wqe_is_local(s->wqe.hdr.opcode)) {
				s->started = true;
				stag_req_done(qp, s, local_op(qp, &s->wqe));
				sq->start++;
				continue;
			}
		}
		if (!sq->xport->start(qp, s))
			return;
		s->started = true;
		sq->start++;
	}
}

/*
 * The error state: every send in the window that is not done yet, then
 * every WQE in the ring, completes with WR_FLUSH_ERR, in order; a send
 * already done (the one that failed among them) keeps its status. What is
 * posted later is flushed by the next doorbell or run.
 */
static void flush(struct stag_qp *qp)
{
	struct stag_sq *sq = &qp->sq;
	u32 budget = sq->queue.num_slots;
	struct stag_send *s;
	u32 i;

	sq->waiting = false;
	for (i = sq->head; i != sq->tail; i++) {
		s = stag_req_send(qp, i);
		if (!s->done)
			stag_req_done(qp, s, IB_WC_WR_FLUSH_ERR);
		s->started = true;
	}
	sq->start = sq->tail;
	retire(qp);
	while (budget-- && fetch(qp)) {
		s = stag_req_send(qp, sq->tail - 1);
		s->started = true;
		stag_req_done(qp, s, IB_WC_WR_FLUSH_ERR);
		sq->start = sq->tail;
		retire(qp);
	}
}

/* One round of the requester; false when nothing moved. */
static bool step(struct stag_qp *qp)
{
	struct stag_sq *sq = &qp->sq;
	enum ib_qp_state state = stag_qp_state(qp);
	u32 head = sq->head, start = sq->start, tail = sq->tail;

	lockdep_assert_held(&sq->mutex);
	retire(qp);
	if (sq->dead)
		return false;
	if (state == IB_QPS_ERR || state == IB_QPS_SQE) {
		flush(qp);
		return false;
	}
	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return false;
	/* A drained queue takes no new WQEs; those started finish. */
	if (state == IB_QPS_RTS)
		fetch(qp);
	start_sends(qp);
	if (sq->xport->push)
		sq->xport->push(qp);
	retire(qp);
	return sq->head != head || sq->start != start || sq->tail != tail;
}

/**
 * stag_req_run() - run a QP's send queue as far as it goes
 * @qp: the QP
 *
 * Runs at most a ring's worth of rounds, then leaves the rest to the QP's
 * work, so that a process posting without end cannot hold a syscall.
 */
void stag_req_run(struct stag_qp *qp)
{
	struct stag_sq *sq = &qp->sq;
	u32 budget = sq->queue.num_slots;
	enum ib_qp_state state;
	bool drained = false;

	might_sleep();
	mutex_lock(&sq->mutex);
	state = stag_qp_state(qp);
	if (sq->xport->receive)
		sq->xport->receive(qp);
	if (test_and_clear_bit(STAG_SQ_EXPIRED, &sq->flags) && !sq->dead &&
	    (state == IB_QPS_RTS || state == IB_QPS_SQD))
		sq->xport->expire(qp);
	while (budget && step(qp))
		budget--;
	if (sq->drain_event && sq->head == sq->tail && stag_qp_state(qp) == IB_QPS_SQD) {
		sq->drain_event = false;
		drained = true;
	}
	mutex_unlock(&sq->mutex);
	if (drained)
		stag_qp_event(qp, IB_EVENT_SQ_DRAINED);
	if (!budget)
		stag_qp_kick(qp);
}

/*
 * The first PSN of the sends to come (modify_qp's sq_psn); the retry
 * counts start full.
 */
void stag_req_set_psn(struct stag_qp *qp, u32 psn)
{
	lockdep_assert_held(&qp->sq.mutex);
	qp->sq.retry_left = READ_ONCE(qp->attr.retry_cnt);
	qp->sq.rnr_left = READ_ONCE(qp->attr.rnr_retry);
	qp->sq.psn = psn;
	qp->sq.una = psn;
	qp->sq.hi_psn = psn;
	qp->sq.rd_psn = psn;
	qp->sq.noack = 0;
}

/**
 * stag_req_reset() - drop every WQE without a completion (RESET)
 * @qp: the QP
 *
 * The window empties and the kernel's consumer index jumps to the
 * producer's.
 */
void stag_req_reset(struct stag_qp *qp)
{
	struct stag_sq *sq = &qp->sq;
	struct stag_queue *q = &sq->queue;
	u32 avail;

	lockdep_assert_held(&sq->mutex);
	stag_req_disarm(qp);
	if (!stag_queue_avail(q, &avail))
		q->index += avail;
	stag_queue_release(q, q->index);
	sq->head = 0;
	sq->start = 0;
	sq->tail = 0;
	sq->next = 0;
	sq->waiting = false;
	sq->drain_event = false;
	sq->rd_atomic = 0;
	sq->nak_retry = false;
	sq->goback_sent = false;
}

/**
 * stag_req_fill_res() - the requester's state for rdma resource show qp -dd
 * @msg: the netlink message, inside the QP's driver table
 * @qp: the QP
 *
 * A consistent picture, read under sq.mutex: what a stalled transfer is
 * waiting for (the timer, an RNR wait, ACKs up to una_psn, room in the
 * stack) is there to be read. A reader killed while the requester holds
 * the mutex gives up.
 *
 * Return: 0, -EMSGSIZE when the message is full, or -EINTR.
 */
int stag_req_fill_res(struct sk_buff *msg, struct stag_qp *qp)
{
	struct stag_sq *sq = &qp->sq;
	u32 sends, retry_left, rnr_left, next_psn, una, hi_psn, rd_atomic, fetched, posted;
	bool wire = READ_ONCE(qp->roce.wire);
	long timer_ms = -1;
	bool rnr_wait;

	if (mutex_lock_killable(&sq->mutex))
		return -EINTR;
	sends = sq->tail - sq->head;
	/* WQEs taken from the ring, and those the process says it posted. */
	fetched = sq->queue.index;
	posted = READ_ONCE(sq->queue.ctl->prod);
	retry_left = sq->retry_left;
	rnr_left = sq->rnr_left;
	rnr_wait = sq->waiting;
	if (timer_pending(&sq->timer))
		timer_ms = jiffies_to_msecs(max_t(long, sq->timer.expires - jiffies, 0));
	next_psn = sq->psn;
	una = sq->una;
	hi_psn = sq->hi_psn;
	rd_atomic = sq->rd_atomic;
	mutex_unlock(&sq->mutex);

	if (rdma_nl_put_driver_u32(msg, "sends", sends) ||
	    rdma_nl_put_driver_u32(msg, "sq_fetched", fetched) ||
	    rdma_nl_put_driver_u32(msg, "sq_posted", posted))
		return -EMSGSIZE;
	/* An XRC TGT QP has no send CQ. */
	if (qp->scq && rdma_nl_put_driver_u32(msg, "scq_overflow", READ_ONCE(qp->scq->overflow)))
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "retry_left", retry_left) ||
	    rdma_nl_put_driver_u32(msg, "rnr_left", rnr_left) ||
	    rdma_nl_put_driver_u32(msg, "rnr_wait", rnr_wait))
		return -EMSGSIZE;
	/* Absent: the timer is not armed. */
	if (timer_ms >= 0 && rdma_nl_put_driver_u32(msg, "timer_ms", timer_ms))
		return -EMSGSIZE;
	if (wire && (rdma_nl_put_driver_u32_hex(msg, "next_psn", next_psn) ||
		     rdma_nl_put_driver_u32_hex(msg, "una_psn", una) ||
		     rdma_nl_put_driver_u32_hex(msg, "hi_psn", hi_psn) ||
		     rdma_nl_put_driver_u32(msg, "rd_atomic", rd_atomic)))
		return -EMSGSIZE;
	return 0;
}
