// SPDX-License-Identifier: GPL-2.0
/*
 * The loopback transport: a send whose destination is a QP of this host
 * is handed to that QP's responder whole, with its local buffers already
 * through the gate, and the responder answers as an ACK or NAK would
 * (resp.c). Data moves once, from the sender's pages to the receiver's.
 *
 * Sends run one at a time. An RNR NAK or no answer at all keeps the send
 * started and arms the QP's timer; the send runs again when it fires,
 * until the retry counts run out. Nothing after a send that waits starts,
 * which is what keeps RC ordered.
 */

#include "ah.h"
#include "dev.h"
#include "mcast.h"
#include "qp.h"
#include "req.h"
#include "resp.h"
#include "route.h"
#include "xport.h"

/* The QP a destination names on this host, with a reference; or NULL. */
static struct stag_qp *find_qp(const union ib_gid *dgid, u32 qpn)
{
	struct stag_qp *qp = NULL;
	struct stag_dev *sdev;

	rcu_read_lock();
	sdev = stag_route_dev_rcu(dgid);
	if (sdev)
		qp = stag_qp_get_by_qpn(sdev, qpn);
	rcu_read_unlock();
	return qp;
}

/* A UD send's address and qkey. */
static void ud_address(struct stag_qp *qp, struct stag_msg *msg)
{
	const struct stag_swqe *wqe = msg->wqe;

	msg->av = &wqe->av;
	/* A qkey with the high bit set means the QP's own (IBA 10.2.5). */
	msg->qkey = wqe->hdr.wr.ud.remote_qkey & 0x80000000 ? READ_ONCE(qp->attr.qkey) :
							      wqe->hdr.wr.ud.remote_qkey;
}

/* Where the message goes: the connected peer, or the WQE's address. */
static struct stag_qp *route(struct stag_qp *qp, struct stag_msg *msg)
{
	const struct stag_swqe *wqe = msg->wqe;

	if (qp->ibqp.qp_type != IB_QPT_UD && qp->ibqp.qp_type != IB_QPT_GSI)
		return find_qp(&qp->dgid, READ_ONCE(qp->attr.dest_qp_num));
	ud_address(qp, msg);
	return find_qp(&wqe->av.dgid, wqe->hdr.wr.ud.remote_qpn & 0xffffff);
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

/* The send waits for the timer: nothing after it starts meanwhile. */
static void wait(struct stag_qp *qp, unsigned long delay)
{
	qp->sq.waiting = true;
	stag_req_arm(qp, delay);
}

/* Acts on the answer; an RNR NAK or silence leaves the send waiting. */
static void answer(struct stag_qp *qp, struct stag_send *s, enum stag_resp_result result)
{
	struct stag_sq *sq = &qp->sq;

	if (!stag_qp_reliable(qp) || result == STAG_RESP_ACK) {
		stag_req_done(qp, s, IB_WC_SUCCESS);
		return;
	}
	switch (result) {
	case STAG_RESP_RNR:
		if (!sq->rnr_left) {
			stag_req_done(qp, s, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		/* Seven means retry for ever (IBA 9.7.5.2.8). */
		if (sq->rnr_left != 7)
			sq->rnr_left--;
		wait(qp, stag_req_rnr_delay(sq->rnr_timer));
		return;
	case STAG_RESP_DROP:
		if (!sq->retry_left) {
			stag_req_done(qp, s, IB_WC_RETRY_EXC_ERR);
			return;
		}
		if (READ_ONCE(qp->attr.timeout))
			sq->retry_left--;
		wait(qp, stag_req_ack_timeout(READ_ONCE(qp->attr.timeout)));
		return;
	default:
		stag_req_done(qp, s, nak_status(result));
	}
}

/*
 * Hands the message to @dst, its local buffers through the gate first.
 * Return: true, the destination's answer in *@result; false when the gate
 * refused the send's local buffers (the send fails with LOC_PROT_ERR).
 */
static bool hand_over(struct stag_qp *qp, struct stag_qp *dst, struct stag_msg *msg,
		      enum stag_resp_result *result)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);
	const struct stag_swqe *wqe = msg->wqe;
	struct stag_gate_who who = stag_qp_who(qp);
	u8 op = wqe->hdr.opcode;
	bool local_error = false;
	int access = 0;

	if (op == IB_WR_RDMA_READ || stag_wqe_is_atomic(op))
		access = IB_ACCESS_LOCAL_WRITE;

	/*
	 * Gate references are taken only under the responder's mutex, so no
	 * thread ever waits for a mutex while it holds one: an invalidation
	 * that waits for accesses to drain cannot wait on itself. Faulting
	 * in on-demand pages takes mmap_lock with references held: nothing
	 * that holds mmap_lock waits for a drain (an invalidation waits only
	 * for pages mapped, and no page is mapped while faulting).
	 */
	mutex_lock(&dst->resp_mutex);
	if (wqe->hdr.send_flags & IB_SEND_INLINE) {
		stag_sgl_init_kbuf(qp->sq.local, wqe->inline_data, wqe->length);
	} else if (stag_sgl_build(qp->sq.local, &sdev->tpt, &who, wqe->sge, wqe->hdr.num_sge,
				  access)) {
		local_error = true;
	} else if (stag_sgl_fault_in(qp->sq.local, access & IB_ACCESS_LOCAL_WRITE)) {
		stag_sgl_release(qp->sq.local);
		local_error = true;
	}
	if (local_error) {
		mutex_unlock(&dst->resp_mutex);
		return false;
	}
	*result = stag_resp_deliver(dst, msg);
	stag_sgl_release(qp->sq.local);
	mutex_unlock(&dst->resp_mutex);
	return true;
}

static void init_msg(struct stag_qp *qp, const struct stag_swqe *wqe, struct stag_msg *msg)
{
	*msg = (struct stag_msg) {
		.src = qp,
		.wqe = wqe,
		.local = qp->sq.local,
		.length = wqe->length,
		.src_qpn = qp->ibqp.qp_num,
		.xrc_srqn = wqe->hdr.xrc_srqn & STAG_SRQN_MAX,
	};
}

/**
 * stag_loopback_mcast() - hand a UD send to every QP of this host
 * attached to its group
 * @qp: the sending QP
 * @s: the send, to STAG_MCAST_QPN at a multicast GID
 *
 * Each member is a destination of its own: its qkey and its receive
 * decide whether it takes the message, as on the wire, and the sender
 * is one too if it is attached. The send does not complete here.
 *
 * Context: under the QP's sq.mutex.
 * Return: 0, or -EACCES when the send's local buffers were refused.
 */
int stag_loopback_mcast(struct stag_qp *qp, struct stag_send *s)
{
	struct stag_mcast_members *members;
	enum stag_resp_result result;
	struct stag_msg msg;
	unsigned int i;
	int ret = 0;

	/* The QP's one scatter list for its local buffers (sq.local) is used. */
	lockdep_assert_held(&qp->sq.mutex);
	members = stag_mcast_get(&s->wqe.av.dgid);
	if (!members)
		return 0;
	for (i = 0; i < members->n; i++) {
		init_msg(qp, &s->wqe, &msg);
		ud_address(qp, &msg);
		if (!hand_over(qp, members->m[i].qp, &msg, &result)) {
			ret = -EACCES;
			break;
		}
	}
	stag_mcast_put(members);
	return ret;
}

/* Hands the send to its destination and acts on the answer. */
static void execute(struct stag_qp *qp, struct stag_send *s)
{
	enum stag_resp_result result;
	struct stag_qp *dst;
	struct stag_msg msg;
	bool handed;

	if (stag_mcast_send(qp->ibqp.qp_type, &s->wqe)) {
		if (stag_loopback_mcast(qp, s))
			stag_req_done(qp, s, IB_WC_LOC_PROT_ERR);
		else
			stag_req_done(qp, s, IB_WC_SUCCESS);
		return;
	}
	init_msg(qp, &s->wqe, &msg);
	dst = route(qp, &msg);
	if (!dst) {
		answer(qp, s, STAG_RESP_DROP);
		return;
	}
	handed = hand_over(qp, dst, &msg, &result);
	if (handed)
		qp->sq.rnr_timer = READ_ONCE(dst->attr.min_rnr_timer);
	if (handed && msg.fin_owed) {
		s->fin_owed = true;
		s->fin = msg.fin;
	}
	stag_qp_put(dst);
	if (!handed)
		stag_req_done(qp, s, IB_WC_LOC_PROT_ERR);
	else
		answer(qp, s, result);
}

static bool loopback_start(struct stag_qp *qp, struct stag_send *s)
{
	struct stag_sq *sq = &qp->sq;

	/* One at a time: what came before is done. */
	if (sq->start != sq->head)
		return false;
	sq->retry_left = READ_ONCE(qp->attr.retry_cnt);
	sq->rnr_left = READ_ONCE(qp->attr.rnr_retry);
	execute(qp, s);
	return true;
}

/* The wait is over: the waiting send, the oldest, runs again. */
static void loopback_expire(struct stag_qp *qp)
{
	struct stag_sq *sq = &qp->sq;
	struct stag_send *s;

	if (!sq->waiting || sq->head == sq->tail)
		return;
	sq->waiting = false;
	s = stag_req_send(qp, sq->head);
	if (s->started && !s->done)
		execute(qp, s);
}

/*
 * The FIN of a rendezvous the peer's tag matching SRQ read: a message of
 * its header only, from the peer into this QP's receive queue, after this
 * QP's send has completed, as a wire would order the send's ACK, the
 * peer's read and its FIN. The QP's resp_mutex is taken under its
 * sq.mutex, as for a send to itself. A FIN the QP does not take (no
 * receive posted, or it left RTR) is lost, as its RNR would end on a
 * wire.
 */
static void loopback_fin(struct stag_qp *qp, const struct stag_tmh *tmh)
{
	static const struct stag_swqe fin = { .hdr.opcode = IB_WR_SEND };
	struct stag_qp *peer = find_qp(&qp->dgid, READ_ONCE(qp->attr.dest_qp_num));
	struct stag_msg msg;

	if (!peer)
		return;
	msg = (struct stag_msg) {
		.src = peer,
		.wqe = &fin,
		.local = qp->sq.local,
		.length = sizeof(*tmh),
		.src_qpn = peer->ibqp.qp_num,
	};
	stag_sgl_init_kbuf(qp->sq.local, tmh, sizeof(*tmh));
	mutex_lock(&qp->resp_mutex);
	stag_resp_deliver(qp, &msg);
	mutex_unlock(&qp->resp_mutex);
	stag_qp_put(peer);
}

const struct stag_xport stag_loopback_xport = {
	.name = "loopback",
	.start = loopback_start,
	.expire = loopback_expire,
	.fin = loopback_fin,
};
