// SPDX-License-Identifier: GPL-2.0
/*
 * The RoCE v2 requester: a QP's sends as packets, and what comes back.
 *
 * RC (IBA 9.7): each send takes PSNs, one per packet, a read one per
 * response packet it asks for. Packets go out in PSN order while fewer
 * than a window of about 64 KiB of PSNs are unacknowledged, with AckReq on
 * the last packet of each message and every half window. ACKs are
 * cumulative. A NAK for a PSN sequence error, a response that passes over a read or an
 * atomic still waiting for its own, a gap in a read's responses, or the
 * local ACK timeout sends again from the oldest unacknowledged PSN (go back
 * N), counting retry_cnt down; an RNR NAK waits for the responder's timer,
 * counting rnr_retry down (7: for ever); the other NAKs complete their
 * send with the status loopback gives them. A read is asked again for the
 * part whose response did not arrive. At most max_rd_atomic reads,
 * atomics and atomic writes are outstanding (an atomic write is answered
 * like a read, by an empty read response, and its responder keeps it).
 * A read longer than the window is asked for in parts of a window, one
 * read request after another: the responder, which nothing acknowledges,
 * sends no more than the requester can take (see read_part()).
 *
 * UC and UD: a send's packets go out once, and then it is done.
 *
 * Local buffers pass the gate for each packet built from them, and again
 * for each read response or atomic result placed into them.
 *
 * Context: process context, under the QP's sq.mutex.
 */

#include <linux/sizes.h>

#include "counters.h"
#include "dev.h"
#include "mcast.h"
#include "qp.h"
#include "req.h"
#include "roce.h"
#include "route.h"
#include "trace.h"
#include "xport.h"

/*
 * What a connection may have unacknowledged: about 64 KiB, in PSNs of its
 * MTU (64 at 1024, 16 at 4096). A software RoCE link is not lossless:
 * the receiving host's socket and ring buffers are what absorbs a burst,
 * and a window in packets that ignores their size overflows them at the
 * larger MTUs (a lost tail costs a whole ACK timeout). The same window
 * bounds the responses of the reads in flight, which a busy requester
 * receives while an idle responder sends them at full speed.
 */
#define STAG_ROCE_WINDOW_BYTES	SZ_64K
#define STAG_ROCE_WINDOW_MIN	16
#define STAG_ROCE_WINDOW_MAX	128
/* More packets than this in one message and PSN comparisons break. */
#define STAG_ROCE_MAX_PKTS	BIT(22)

static struct stag_dev *dev_of(struct stag_qp *qp)
{
	return to_stag_dev(qp->ibqp.device);
}

/* The PSNs a QP may have unacknowledged. */
static u32 window(struct stag_qp *qp)
{
	return clamp_t(u32, STAG_ROCE_WINDOW_BYTES / stag_roce_mtu(qp), STAG_ROCE_WINDOW_MIN,
		       STAG_ROCE_WINDOW_MAX);
}

/* The packets of a message: one per MTU of payload, at least one. */
static u32 npkts(const struct stag_send *s, u32 mtu)
{
	if (stag_wqe_is_atomic(s->wqe.hdr.opcode) || !s->wqe.length)
		return 1;
	return DIV_ROUND_UP_ULL(s->wqe.length, mtu);
}

/* Where a read resumes: the PSN of the first response it has not had. */
static u32 read_resume_psn(const struct stag_send *s, u32 mtu)
{
	return stag_psn_add(s->first_psn, div_u64(s->placed, mtu));
}

/*
 * The responses one read request asks for: a window. A read's responses
 * come at the responder's full speed, and no ACK paces them; one request
 * for a whole long read (a megabyte: a thousand packets) floods the
 * requester's host, and every response lost there costs the rest of the
 * read again (UCX's rendezvous moved 2.4 bytes for each one delivered,
 * and took five times as long). Asked for in parts, one after another
 * (in_window()), a read has a window in flight at most, and holds its one
 * responder resource. The parts fall at fixed places, so that a part
 * asked again is a duplicate of the request that asked it first (IBA
 * 9.7.5.2.9: no more than what that one asked). Half a window, two parts
 * in flight, took two responder resources and went slower on a link that
 * reorders: a request overtaken by the next costs both parts again.
 */
static u32 read_part(struct stag_qp *qp)
{
	return window(qp);
}

/* The last PSN of the part of read @s that holds @psn. */
static u32 part_end(struct stag_qp *qp, const struct stag_send *s, u32 psn)
{
	u32 part = read_part(qp), idx = (psn - s->first_psn) & STAG_PSN_MASK;
	u32 end = stag_psn_add(s->first_psn, (idx / part + 1) * part - 1);

	return stag_psn_cmp(end, s->last_psn) > 0 ? s->last_psn : end;
}

/* ---- building request packets ---- */

/* The headers a send's packet at @psn carries, and its payload's place. */
static void request_headers(struct stag_qp *qp, const struct stag_send *s, u32 psn,
			    struct stag_pkt *p, u64 *off, u32 *len)
{
	const struct stag_swqe *wqe = &s->wqe;
	u8 op = wqe->hdr.opcode;
	u32 mtu = stag_roce_mtu(qp);
	bool first = true, last = true;

	*off = 0;
	*len = 0;
	if (stag_roce_class(qp) == STAG_OP_UD) {
		/*
		 * One packet, whole: its length was held against the MTU
		 * when it started, and a netdev MTU changed since must not
		 * cut it into a packet UD has no opcode for.
		 */
		*len = wqe->length;
	} else if (stag_wqe_is_send(op) || stag_wqe_is_write(op)) {
		u32 idx = (psn - s->first_psn) & STAG_PSN_MASK;

		*off = (u64)idx * mtu;
		*len = min_t(u64, mtu, wqe->length - *off);
		first = !idx;
		last = *off + *len >= wqe->length;
	} else if (stag_wqe_is_atomic_write(op)) {
		*len = wqe->length;
	}
	memset(p, 0, sizeof(*p));
	p->opcode = stag_pkt_opcode(stag_roce_class(qp), op, first, last);
	p->psn = psn;
	p->pkey = STAG_PKEY_DEFAULT;
	p->pad = stag_pkt_pad(*len);
	p->qpn = READ_ONCE(qp->attr.dest_qp_num);
	p->se = last && wqe->hdr.send_flags & IB_SEND_SOLICITED &&
		(stag_wqe_is_send(op) || op == IB_WR_RDMA_WRITE_WITH_IMM);
	if (op == IB_WR_RDMA_READ) {
		/*
		 * A read asked again resumes at the response its PSN names:
		 * PSN and address come from one number, or the responses of
		 * one part would be placed where another's belong.
		 */
		u64 done = (u64)((psn - s->first_psn) & STAG_PSN_MASK) * mtu;

		p->va = wqe->hdr.wr.rdma.remote_addr + done;
		p->rkey = wqe->hdr.wr.rdma.rkey;
		/* To the end of its part: the last response may be short. */
		p->dmalen = min_t(u64, wqe->length - done,
				  (u64)(((part_end(qp, s, psn) - psn) & STAG_PSN_MASK) + 1) * mtu);
	} else if (stag_wqe_is_write(op) && first) {
		p->va = wqe->hdr.wr.rdma.remote_addr;
		p->rkey = wqe->hdr.wr.rdma.rkey;
		p->dmalen = wqe->length;
	} else if (stag_wqe_is_atomic_write(op)) {
		p->va = wqe->hdr.wr.atomic.remote_addr;
		p->rkey = wqe->hdr.wr.atomic.rkey;
		p->dmalen = wqe->length;
	} else if (stag_wqe_is_flush(op)) {
		/* No payload (IBA oA19-2); a whole region's range is not looked at. */
		p->va = wqe->hdr.wr.flush.remote_addr;
		p->rkey = wqe->hdr.wr.flush.rkey;
		p->dmalen = lower_32_bits(wqe->hdr.wr.flush.length);
		p->flush_type = wqe->hdr.wr.flush.type;
		p->flush_level = wqe->hdr.wr.flush.level;
	} else if (stag_wqe_is_atomic(op)) {
		p->va = wqe->hdr.wr.atomic.remote_addr;
		p->rkey = wqe->hdr.wr.atomic.rkey;
		p->swap_add = op == IB_WR_ATOMIC_CMP_AND_SWP ? wqe->hdr.wr.atomic.swap :
							       wqe->hdr.wr.atomic.compare_add;
		p->compare = op == IB_WR_ATOMIC_CMP_AND_SWP ? wqe->hdr.wr.atomic.compare_add : 0;
	}
	if (op == IB_WR_SEND_WITH_INV)
		p->inv_rkey = wqe->hdr.ex;
	else
		p->imm = (__force __be32)wqe->hdr.ex;
	if (stag_roce_class(qp) == STAG_OP_UD) {
		p->qpn = wqe->hdr.wr.ud.remote_qpn & STAG_PSN_MASK;
		p->src_qpn = qp->ibqp.qp_num;
		/* A qkey with the high bit set means the QP's own (IBA 10.2.5). */
		if (qp->ibqp.qp_type == IB_QPT_GSI)
			p->qkey = STAG_GSI_QKEY;
		else if (wqe->hdr.wr.ud.remote_qkey & 0x80000000)
			p->qkey = READ_ONCE(qp->attr.qkey);
		else
			p->qkey = wqe->hdr.wr.ud.remote_qkey;
	}
	p->xrc_srqn = wqe->hdr.xrc_srqn;
	if (stag_qp_reliable(qp) && (last || ++qp->sq.noack >= window(qp) / 2)) {
		p->ackreq = true;
		qp->sq.noack = 0;
	}
}

/*
 * Builds and sends a send's packet at @psn. Return: 0; -ENOMEM when no
 * packet could be had (try again later); the gate's errno when the local
 * buffers refused (the send fails with LOC_PROT_ERR).
 */
static int send_packet(struct stag_qp *qp, struct stag_send *s, u32 psn)
{
	const struct stag_path *path = &qp->roce.path;
	struct stag_path ud_path;
	struct stag_pkt p;
	struct sk_buff *skb;
	unsigned int hlen;
	u32 len, end;
	u64 off;
	int ret;

	request_headers(qp, s, psn, &p, &off, &len);
	hlen = stag_pkt_ops[p.opcode].hlen;
	skb = stag_roce_alloc(qp, hlen + len + p.pad + STAG_ICRC_LEN);
	if (!skb)
		return -ENOMEM;
	stag_pkt_build(skb->data, &p);
	ret = stag_req_read_payload(qp, s, skb->data + hlen, off, len);
	if (ret) {
		kfree_skb(skb);
		return ret;
	}
	memset(skb->data + hlen + len, 0, p.pad);
	if (stag_roce_class(qp) == STAG_OP_UD) {
		stag_roce_path(&ud_path, &s->wqe.av, qp->ibqp.qp_num, p.qpn);
		path = &ud_path;
	}
	/* A read's request stands for the PSNs of all the responses it asks for. */
	end = s->wqe.hdr.opcode == IB_WR_RDMA_READ ? part_end(qp, s, psn) : psn;
	if (stag_psn_cmp(psn, qp->sq.hi_psn) < 0)
		stag_count(dev_of(qp), STAG_CNT_RETRANSMITS);
	if (psn == qp->sq.goback_psn)
		qp->sq.goback_sent = true;
	if (stag_psn_cmp(end, qp->sq.hi_psn) >= 0)
		qp->sq.hi_psn = stag_psn_add(end, 1);
	/*
	 * A packet the stack dropped is a packet lost on the wire. A
	 * connection's go in bursts: the push that sends them flushes.
	 */
	if (path == &qp->roce.path)
		stag_roce_queue(qp, &qp->roce.tx_req, skb);
	else
		stag_roce_xmit(qp, path, skb);
	return 0;
}

/* ---- RC: sending ---- */

/*
 * May the send's next packet go? Its PSN must lie in the window; a read's
 * request stands for the responses it asks for, which must fit too, unless
 * it is the oldest thing waiting. A read's part, a window long, so waits
 * until every response of the part before it came.
 */
static bool in_window(struct stag_qp *qp, const struct stag_send *s)
{
	u32 end = stag_psn_add(qp->sq.una, window(qp));

	if (stag_psn_cmp(s->next_psn, end) >= 0)
		return false;
	if (s->wqe.hdr.opcode != IB_WR_RDMA_READ || s->next_psn == qp->sq.una)
		return true;
	return stag_psn_cmp(part_end(qp, s, s->next_psn), end) < 0;
}

static bool rc_start(struct stag_qp *qp, struct stag_send *s)
{
	struct stag_sq *sq = &qp->sq;
	u8 op = s->wqe.hdr.opcode;
	u32 n = npkts(s, stag_roce_mtu(qp));

	if (n > STAG_ROCE_MAX_PKTS) {
		stag_req_done(qp, s, IB_WC_LOC_LEN_ERR);
		return true;
	}
	if (stag_wqe_is_rd_atomic(op)) {
		/* max_rd_atomic 0 would stall for ever: it counts as one. */
		if (sq->rd_atomic >= max_t(u8, READ_ONCE(qp->attr.max_rd_atomic), 1))
			return false;
		sq->rd_atomic++;
		s->rd_atomic = true;
	}
	s->first_psn = sq->psn;
	s->last_psn = stag_psn_add(sq->psn, n - 1);
	s->next_psn = s->first_psn;
	sq->psn = stag_psn_add(sq->psn, n);
	return true;
}

/* Is every packet of the send out (a read: its request)? */
static bool all_sent(const struct stag_send *s)
{
	return stag_psn_cmp(s->next_psn, s->last_psn) > 0;
}

static void rc_push(struct stag_qp *qp)
{
	struct stag_sq *sq = &qp->sq;
	struct stag_send *s;
	int ret;

	if ((s32)(sq->next - sq->head) < 0)
		sq->next = sq->head;
	while (sq->next != sq->start && !sq->waiting) {
		s = stag_req_send(qp, sq->next);
		if (s->done || all_sent(s)) {
			sq->next++;
			continue;
		}
		/* Responses placed since a go-back need not be asked for again. */
		if (s->wqe.hdr.opcode == IB_WR_RDMA_READ) {
			u32 resume = read_resume_psn(s, stag_roce_mtu(qp));

			if (stag_psn_cmp(resume, s->next_psn) > 0)
				s->next_psn = resume;
		}
		if (!in_window(qp, s) || !stag_roce_tx_room(qp))
			break;
		ret = send_packet(qp, s, s->next_psn);
		if (ret == -ENOMEM) {
			/* Out of packets: try again in a tick, retry counts untouched. */
			if (!timer_pending(&sq->timer))
				stag_req_arm(qp, 1);
			break;
		}
		if (ret) {
			stag_req_done(qp, s, IB_WC_LOC_PROT_ERR);
			break;
		}
		if (s->wqe.hdr.opcode == IB_WR_RDMA_READ)
			s->next_psn = stag_psn_add(part_end(qp, s, s->next_psn), 1);
		else
			s->next_psn = stag_psn_add(s->next_psn, 1);
	}
	stag_roce_flush(qp, &qp->roce.tx_req);
	/* The local ACK timeout runs from the oldest packet not acknowledged. */
	if (sq->una != sq->hi_psn && !timer_pending(&sq->timer))
		stag_req_arm(qp, stag_req_ack_timeout(READ_ONCE(qp->attr.timeout)));
}

/* Sends everything again from @psn on: go back N. */
static void go_back(struct stag_qp *qp, u32 psn, enum stag_retransmit_why why)
{
	struct stag_sq *sq = &qp->sq;
	u32 mtu = stag_roce_mtu(qp), i;
	bool found = false;

	trace_stag_retransmit(&qp->ibqp, psn, sq->una, sq->hi_psn, sq->retry_left, why);
	sq->goback_psn = psn;
	sq->goback_sent = false;

	for (i = sq->head; i != sq->start; i++) {
		struct stag_send *s = stag_req_send(qp, i);

		if (s->done || stag_psn_cmp(s->last_psn, psn) < 0)
			continue;
		if (!found)
			sq->next = i;
		found = true;
		if (s->wqe.hdr.opcode == IB_WR_RDMA_READ)
			s->next_psn = read_resume_psn(s, mtu);
		else if (stag_psn_cmp(s->first_psn, psn) >= 0 ||
			 stag_wqe_is_atomic(s->wqe.hdr.opcode))
			s->next_psn = s->first_psn;
		else
			s->next_psn = psn;
	}
}

/* The oldest send not done yet, or NULL. */
static struct stag_send *oldest(struct stag_qp *qp)
{
	u32 i;

	for (i = qp->sq.head; i != qp->sq.start; i++) {
		struct stag_send *s = stag_req_send(qp, i);

		if (!s->done)
			return s;
	}
	return NULL;
}

/* Counts a retry down and goes back to @psn; out of retries, the oldest send fails. */
static void retry(struct stag_qp *qp, u32 psn, enum stag_retransmit_why why)
{
	struct stag_sq *sq = &qp->sq;
	struct stag_send *s = oldest(qp);

	if (!s)
		return;
	if (!sq->retry_left) {
		stag_req_done(qp, s, IB_WC_RETRY_EXC_ERR);
		return;
	}
	/* Timeout zero is infinite (IBA 11.2.4.2): retry for ever. */
	if (READ_ONCE(qp->attr.timeout))
		sq->retry_left--;
	go_back(qp, psn, why);
}

/* Progress: the retry counts start over, the timer runs from now. */
static void progress(struct stag_qp *qp, u32 una)
{
	struct stag_sq *sq = &qp->sq;

	if (stag_psn_cmp(una, sq->una) <= 0)
		return;
	sq->una = una;
	sq->retry_left = READ_ONCE(qp->attr.retry_cnt);
	sq->rnr_left = READ_ONCE(qp->attr.rnr_retry);
	sq->nak_retry = false;
	/*
	 * A timer that fired while this ACK waited behind a long push is
	 * stale: the peer answered. Acting on it would go back N over
	 * packets in flight and start a storm of duplicate ACKs.
	 */
	clear_bit(STAG_SQ_EXPIRED, &sq->flags);
	if (sq->una == sq->hi_psn)
		stag_req_disarm(qp);
	else
		stag_req_arm(qp, stag_req_ack_timeout(READ_ONCE(qp->attr.timeout)));
}

/*
 * Everything up to @psn is acknowledged: sends and writes whose last
 * packet it covers are done. A read or atomic it covers without its
 * response had that response lost: ask again (an implicit NAK).
 */
static void ack_to(struct stag_qp *qp, u32 psn)
{
	struct stag_sq *sq = &qp->sq;
	u32 i, una = stag_psn_add(psn, 1);

	for (i = sq->head; i != sq->start; i++) {
		struct stag_send *s = stag_req_send(qp, i);

		if (s->done)
			continue;
		if (stag_psn_cmp(s->first_psn, psn) > 0)
			break;
		if (stag_wqe_is_rd_atomic(s->wqe.hdr.opcode)) {
			una = s->first_psn;
			if (!sq->nak_retry) {
				sq->nak_retry = true;
				retry(qp, read_resume_psn(s, stag_roce_mtu(qp)),
				      STAG_RETRANSMIT_READ);
			}
			break;
		}
		if (stag_psn_cmp(s->last_psn, psn) > 0) {
			una = stag_psn_add(psn, 1);
			break;
		}
		stag_req_done(qp, s, IB_WC_SUCCESS);
	}
	progress(qp, una);
}

static enum ib_wc_status nak_status(u8 syndrome)
{
	switch (syndrome) {
	case STAG_NAK_INV_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case STAG_NAK_REM_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/* The send whose PSNs hold @psn, or NULL. */
static struct stag_send *send_of(struct stag_qp *qp, u32 psn)
{
	u32 i;

	for (i = qp->sq.head; i != qp->sq.start; i++) {
		struct stag_send *s = stag_req_send(qp, i);

		if (!s->done && stag_psn_cmp(s->first_psn, psn) <= 0 &&
		    stag_psn_cmp(s->last_psn, psn) >= 0)
			return s;
	}
	return NULL;
}

static void on_rnr(struct stag_qp *qp, u32 psn, u8 timer)
{
	struct stag_sq *sq = &qp->sq;
	struct stag_send *s = send_of(qp, psn);

	stag_count(dev_of(qp), STAG_CNT_NAK_RCVD_RNR);
	if (!s)
		return;
	if (!sq->rnr_left) {
		stag_req_done(qp, s, IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	/* Seven means retry for ever (IBA 9.7.5.2.8). */
	if (sq->rnr_left != 7)
		sq->rnr_left--;
	stag_count(dev_of(qp), STAG_CNT_RNR_WAITS);
	sq->waiting = true;
	stag_req_arm(qp, stag_req_rnr_delay(timer));
}

static void on_ack(struct stag_qp *qp, const struct stag_pkt *p)
{
	struct stag_dev *sdev = dev_of(qp);
	struct stag_send *s;

	switch (p->syndrome & STAG_AETH_TYPE_MASK) {
	case STAG_AETH_ACK:
		ack_to(qp, p->psn);
		return;
	case STAG_AETH_RNR:
		ack_to(qp, stag_psn_add(p->psn, STAG_PSN_MASK));
		on_rnr(qp, p->psn, p->syndrome & 0x1f);
		return;
	case STAG_AETH_NAK:
		break;
	default:
		stag_count_drop(sdev, STAG_CNT_DROP_MALFORMED, qp->ibqp.qp_num);
		return;
	}
	/* A NAK acknowledges every packet before the one it names. */
	ack_to(qp, stag_psn_add(p->psn, STAG_PSN_MASK));
	if (p->syndrome == STAG_NAK_PSN_SEQ) {
		stag_count(sdev, STAG_CNT_NAK_RCVD_SEQ);
		/*
		 * Once the go-back's first packet is out again, a NAK means
		 * the new round lost its head as well: go back again, on the
		 * retry already counted (a peer that answers is not gone).
		 * Before, it is the same NAK twice.
		 */
		if (!qp->sq.nak_retry) {
			qp->sq.nak_retry = true;
			retry(qp, p->psn, STAG_RETRANSMIT_NAK);
		} else if (qp->sq.goback_sent) {
			go_back(qp, p->psn, STAG_RETRANSMIT_NAK);
		}
		return;
	}
	stag_count(sdev, p->syndrome == STAG_NAK_INV_REQ ? STAG_CNT_NAK_RCVD_INV :
		   p->syndrome == STAG_NAK_REM_ACCESS ? STAG_CNT_NAK_RCVD_ACCESS :
		   STAG_CNT_NAK_RCVD_OP);
	s = send_of(qp, p->psn);
	if (s)
		stag_req_done(qp, s, nak_status(p->syndrome));
}

/* Places @len bytes of the packet at @off of the send's local buffers. */
static int place(struct stag_qp *qp, struct stag_send *s, u64 off, const struct sk_buff *skb,
		 u32 skb_off, u32 len)
{
	const struct stag_swqe *wqe = &s->wqe;
	struct stag_gate_who who = stag_qp_who(qp);
	int ret;

	ret = stag_sgl_build_range(qp->sq.local, &dev_of(qp)->tpt, &who, wqe->sge,
				   wqe->hdr.num_sge, IB_ACCESS_LOCAL_WRITE, off, len);
	if (ret)
		return ret;
	ret = stag_sgl_copy_skb(qp->sq.local, 0, skb, skb_off, len);
	stag_sgl_release(qp->sq.local);
	return ret;
}

/*
 * An atomic write's or a flush's answer: a READ_RESP_ONLY without payload
 * at its PSN (as rdma_rxe answers them). Anything else answers nothing of
 * it.
 */
static void on_bufferless_response(struct stag_qp *qp, struct stag_send *s,
				   const struct stag_pkt *p)
{
	if ((p->opcode & ~STAG_OP_CLASS_MASK) != STAG_OP_READ_RESP_ONLY ||
	    p->psn != s->first_psn || p->paylen) {
		stag_count_drop(dev_of(qp), STAG_CNT_DROP_MALFORMED, qp->ibqp.qp_num);
		return;
	}
	ack_to(qp, stag_psn_add(p->psn, STAG_PSN_MASK));
	stag_req_done(qp, s, IB_WC_SUCCESS);
	progress(qp, stag_psn_add(p->psn, 1));
}

/*
 * A read response: it must be the next the oldest read awaits. Its
 * FIRST, MIDDLE, LAST or ONLY is not held against it (a peer that replays
 * a read from its middle starts with MIDDLE); its size is: a full MTU
 * unless it ends the read.
 */
static void on_read_response(struct stag_qp *qp, const struct sk_buff *skb,
			     const struct stag_pkt *p)
{
	struct stag_send *s = oldest(qp);
	u32 mtu = stag_roce_mtu(qp), want;
	u64 left;

	if (!s || (s->wqe.hdr.opcode != IB_WR_RDMA_READ &&
		   !stag_wqe_is_bufferless(s->wqe.hdr.opcode)) ||
	    stag_psn_cmp(p->psn, s->first_psn) < 0 || stag_psn_cmp(p->psn, s->last_psn) > 0)
		return;
	if (p->flags & STAG_PKT_AETH && (p->syndrome & STAG_AETH_TYPE_MASK) != STAG_AETH_ACK)
		return;
	if (stag_wqe_is_bufferless(s->wqe.hdr.opcode)) {
		on_bufferless_response(qp, s, p);
		return;
	}
	/* It answers the read: everything before the read arrived. */
	ack_to(qp, stag_psn_add(s->first_psn, STAG_PSN_MASK));
	want = read_resume_psn(s, mtu);
	if (p->psn != want) {
		/*
		 * Before: a duplicate. After: a response went missing; ask
		 * again. Ask once more, on the retry already counted, when
		 * the request went out again and the peer has evidently
		 * started over (a PSN just past the one awaited, below the
		 * last one past the gap) but the first response of its new
		 * round was lost too. A response merely reordered is seldom
		 * that close.
		 */
		u32 new_round = stag_psn_add(want, STAG_ROCE_NEW_ROUND);

		if (stag_psn_cmp(p->psn, want) > 0) {
			if (!qp->sq.nak_retry) {
				qp->sq.nak_retry = true;
				retry(qp, want, STAG_RETRANSMIT_READ);
			} else if (qp->sq.goback_sent && stag_psn_cmp(p->psn, qp->sq.ooo_psn) < 0 &&
				   stag_psn_cmp(p->psn, new_round) <= 0) {
				go_back(qp, want, STAG_RETRANSMIT_READ);
			}
			qp->sq.ooo_psn = p->psn;
		}
		return;
	}
	left = s->wqe.length - s->placed;
	if (p->paylen > left || (p->paylen < left && p->paylen != mtu) ||
	    (p->paylen == left && !(p->flags & STAG_PKT_END))) {
		stag_count_drop(dev_of(qp), STAG_CNT_DROP_MALFORMED, qp->ibqp.qp_num);
		return;
	}
	if (place(qp, s, s->placed, skb, p->hlen, p->paylen)) {
		stag_req_done(qp, s, IB_WC_LOC_PROT_ERR);
		return;
	}
	s->placed += p->paylen;
	if (s->placed == s->wqe.length) {
		stag_req_done(qp, s, IB_WC_SUCCESS);
		progress(qp, stag_psn_add(s->last_psn, 1));
	} else {
		progress(qp, stag_psn_add(p->psn, 1));
	}
}

/* An atomic's result: the original value goes into its local buffer. */
static void on_atomic_ack(struct stag_qp *qp, const struct stag_pkt *p)
{
	struct stag_gate_who who = stag_qp_who(qp);
	struct stag_send *s = oldest(qp);
	u64 orig = p->orig;

	if (!s || !stag_wqe_is_atomic(s->wqe.hdr.opcode) || p->psn != s->first_psn ||
	    (p->syndrome & STAG_AETH_TYPE_MASK) != STAG_AETH_ACK)
		return;
	ack_to(qp, stag_psn_add(p->psn, STAG_PSN_MASK));
	if (stag_sgl_build(qp->sq.local, &dev_of(qp)->tpt, &who, s->wqe.sge, s->wqe.hdr.num_sge,
			   IB_ACCESS_LOCAL_WRITE) ||
	    stag_sgl_write(qp->sq.local, 0, &orig, sizeof(orig))) {
		stag_sgl_release(qp->sq.local);
		stag_req_done(qp, s, IB_WC_LOC_PROT_ERR);
		return;
	}
	stag_sgl_release(qp->sq.local);
	stag_req_done(qp, s, IB_WC_SUCCESS);
	progress(qp, stag_psn_add(p->psn, 1));
}

/* What came back from the peer: ACKs, NAKs, read responses, atomic results. */
static void rc_receive(struct stag_qp *qp)
{
	enum ib_qp_state state = stag_qp_state(qp);
	struct stag_sq *sq = &qp->sq;
	struct sk_buff *skb;
	struct stag_pkt p;

	if (state != IB_QPS_RTS && state != IB_QPS_SQD) {
		skb_queue_purge(&qp->roce.rx_resp);
		return;
	}
	while ((skb = skb_dequeue(&qp->roce.rx_resp))) {
		/*
		 * Checked on the way in, for this connection if not stale.
		 * One that answers nothing outstanding (an ACK again, a NAK
		 * of a stranger's gap) is dropped, counted.
		 */
		if (stag_roce_stale(qp, skb)) {
			kfree_skb(skb);
			continue;
		}
		if (stag_pkt_parse(skb->data, skb->len, &p))
			stag_count_drop(dev_of(qp), STAG_CNT_DROP_MALFORMED, qp->ibqp.qp_num);
		else if (stag_psn_cmp(p.psn, sq->hi_psn) >= 0 || stag_psn_cmp(p.psn, sq->una) < 0)
			stag_count_drop(dev_of(qp), STAG_CNT_DROP_PSN, qp->ibqp.qp_num);
		else if (p.flags & STAG_PKT_ACK)
			on_ack(qp, &p);
		else if (p.flags & STAG_PKT_READ_RESP)
			on_read_response(qp, skb, &p);
		else if (p.flags & STAG_PKT_ATOMIC_ACK)
			on_atomic_ack(qp, &p);
		kfree_skb(skb);
	}
}

/* The timer: an RNR wait is over, or no answer came in time. */
static void rc_expire(struct stag_qp *qp)
{
	struct stag_sq *sq = &qp->sq;

	if (sq->waiting) {
		sq->waiting = false;
		go_back(qp, sq->una, STAG_RETRANSMIT_RNR);
		return;
	}
	if (sq->una == sq->hi_psn)
		return;
	stag_count(dev_of(qp), STAG_CNT_ACK_TIMEOUTS);
	retry(qp, sq->una, STAG_RETRANSMIT_TIMEOUT);
}

const struct stag_xport stag_roce_rc_xport = {
	.name = "roce-rc",
	.start = rc_start,
	.push = rc_push,
	.expire = rc_expire,
	.receive = rc_receive,
};

/* ---- UC and UD: sent once ---- */

static bool unreliable_start(struct stag_qp *qp, struct stag_send *s)
{
	struct stag_sq *sq = &qp->sq;
	u32 n = npkts(s, stag_roce_mtu(qp));

	/* A UD message longer than the MTU now: it shrank since the WQE was taken. */
	if (stag_roce_class(qp) == STAG_OP_UD && n > 1) {
		stag_req_done(qp, s, IB_WC_LOC_LEN_ERR);
		return true;
	}
	if (stag_pkt_opcode(stag_roce_class(qp), s->wqe.hdr.opcode, true, n == 1) == 0xff) {
		stag_req_done(qp, s, IB_WC_LOC_QP_OP_ERR);
		return true;
	}
	s->first_psn = sq->psn;
	s->last_psn = stag_psn_add(sq->psn, n - 1);
	s->next_psn = s->first_psn;
	sq->psn = stag_psn_add(sq->psn, n);
	return true;
}

static void unreliable_push(struct stag_qp *qp)
{
	struct stag_sq *sq = &qp->sq;
	struct stag_send *s;
	int ret;

	if ((s32)(sq->next - sq->head) < 0)
		sq->next = sq->head;
	while (sq->next != sq->start) {
		s = stag_req_send(qp, sq->next);
		if (s->done) {
			sq->next++;
			continue;
		}
		if (!stag_roce_tx_room(qp))
			break;
		ret = send_packet(qp, s, s->next_psn);
		/* No packet to be had is a packet lost: no one waits for it. */
		if (ret && ret != -ENOMEM) {
			stag_req_done(qp, s, IB_WC_LOC_PROT_ERR);
			continue;
		}
		if (ret)
			stag_count_drop(dev_of(qp), STAG_CNT_DROP_TX, qp->ibqp.qp_num);
		s->next_psn = stag_psn_add(s->next_psn, 1);
		if (all_sent(s))
			stag_req_done(qp, s, IB_WC_SUCCESS);
	}
	stag_roce_flush(qp, &qp->roce.tx_req);
}

static void unreliable_expire(struct stag_qp *qp)
{
}

const struct stag_xport stag_roce_uc_xport = {
	.name = "roce-uc",
	.start = unreliable_start,
	.push = unreliable_push,
	.expire = unreliable_expire,
};

/*
 * A UD send goes to a QP of this host directly when loopback may be
 * used, or whenever the wire is not up; to the wire otherwise.
 */
static bool ud_start(struct stag_qp *qp, struct stag_send *s)
{
	bool loopback = stag_roce_loopback_allowed();

	if (!stag_roce_up() || (loopback && stag_route_is_local(&s->wqe.av.dgid)))
		return stag_loopback_xport.start(qp, s);
	/*
	 * A group's members on this host get the message directly, the
	 * others as a packet, whose copy the stack loops back to this host
	 * is dropped on the way in (roce.c). Without loopback that copy is
	 * how this host's members get it.
	 */
	if (loopback && stag_mcast_send(qp->ibqp.qp_type, &s->wqe) && stag_loopback_mcast(qp, s)) {
		stag_req_done(qp, s, IB_WC_LOC_PROT_ERR);
		return true;
	}
	return unreliable_start(qp, s);
}

static void ud_expire(struct stag_qp *qp)
{
	stag_loopback_xport.expire(qp);
}

const struct stag_xport stag_roce_ud_xport = {
	.name = "roce-ud",
	.start = ud_start,
	.push = unreliable_push,
	.expire = ud_expire,
};
