// SPDX-License-Identifier: GPL-2.0
/*
 * The RoCE v2 responder: the requests that arrive for a QP.
 *
 * RC (IBA 9.7.5): a request runs when its PSN is the one expected. One
 * PSN sequence NAK answers a gap, and what follows the gap is dropped
 * until the expected PSN comes. A request before the expected PSN is a
 * duplicate: a SEND or WRITE is acknowledged again; a READ is answered
 * again from its responder resource, if it names the same R_Key and a
 * part of what it asked first, through the gate again; an ATOMIC gets the
 * result it had and is not executed twice, nor is an ATOMIC WRITE or a
 * FLUSH. ACKs are coalesced: one, for the last packet of a batch that
 * asked for one, goes out before anything else the responder sends (a
 * read response, an atomic result, a NAK).
 * The responder resources are max_dest_rd_atomic, reused oldest first.
 *
 * UC: a packet out of sequence drops what is left of its message; the
 * next FIRST or ONLY starts over. UD: every packet is a message.
 *
 * Every byte passes the gate first: a WRITE's or a READ's whole range
 * when its request arrives, then each packet's own part again (a window
 * can be rebound, a region invalidated, between two packets), and a
 * SEND's receive buffers for each packet's part of them. A payload is
 * copied once, from the packet into the checked pages.
 *
 * Context: the QP's work, process context, under resp_mutex.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ipv6.h>
#include <rdma/restrack.h>

#include "counters.h"
#include "dev.h"
#include "qp.h"
#include "resp.h"
#include "roce.h"
#include "roce_resp.h"

#define NO_OP		0xff	/* between messages */
#define RESP_BUDGET	64	/* requests per run; the work comes back for more */
#define GRH_SIZE	40

static struct stag_dev *dev_of(struct stag_qp *qp)
{
	return to_stag_dev(qp->ibqp.device);
}

/* ---- what the responder sends ---- */

/*
 * What carries an AETH back: an ACK, an RNR NAK or a NAK (@opcode ACK), or
 * an atomic's ACK with the value it found, @orig. @syndrome for @psn, with
 * the MSN.
 */
static void send_aeth(struct stag_qp *qp, u8 opcode, u8 syndrome, u32 psn, u64 orig)
{
	struct stag_pkt p = {
		.opcode = opcode | stag_roce_class(qp),
		.psn = psn,
		.pkey = STAG_PKEY_DEFAULT,
		.qpn = READ_ONCE(qp->attr.dest_qp_num),
		.syndrome = syndrome,
		.msn = qp->rresp.msn,
		.orig = orig,
	};
	struct sk_buff *skb;

	skb = stag_roce_alloc(qp, stag_pkt_ops[p.opcode].hlen + STAG_ICRC_LEN);
	/* Lost: the requester's timer sends the request again. */
	if (!skb)
		return;
	stag_pkt_build(skb->data, &p);
	/* After the read responses before it. */
	stag_roce_flush(qp, &qp->roce.tx_resp);
	stag_roce_xmit(qp, &qp->roce.path, skb);
}

static void send_ack(struct stag_qp *qp, u8 syndrome, u32 psn)
{
	send_aeth(qp, STAG_OP_ACK, syndrome, psn, 0);
}

/* The ACK owed, before anything else goes out. */
static void flush_ack(struct stag_qp *qp)
{
	struct stag_roce_resp *rr = &qp->rresp;

	if (!rr->ack)
		return;
	rr->ack = false;
	send_ack(qp, STAG_AETH_ACK | STAG_AETH_CREDITS_NONE, rr->ack_psn);
}

static void owe_ack(struct stag_qp *qp, u32 psn)
{
	qp->rresp.ack = true;
	qp->rresp.ack_psn = psn;
}

/* Forgets the message in progress; a receive it took stays for the next. */
static void end_message(struct stag_qp *qp)
{
	qp->rresp.op = NO_OP;
	qp->rresp.offset = 0;
}

/*
 * A NAK for the request at @psn. But for a PSN sequence error, it is a
 * class C error (IBA 9.9.3.1.3): the QP goes to the error state.
 */
static void nak(struct stag_qp *qp, u8 code, u32 psn)
{
	static const u8 counters[] = {
		[STAG_NAK_PSN_SEQ & 3] = STAG_CNT_NAK_SENT_SEQ,
		[STAG_NAK_INV_REQ & 3] = STAG_CNT_NAK_SENT_INV,
		[STAG_NAK_REM_ACCESS & 3] = STAG_CNT_NAK_SENT_ACCESS,
		[STAG_NAK_REM_OP & 3] = STAG_CNT_NAK_SENT_OP,
	};

	flush_ack(qp);
	stag_count(dev_of(qp), counters[code & 3]);
	send_ack(qp, code, psn);
	if (code == STAG_NAK_PSN_SEQ)
		return;
	end_message(qp);
	qp->rresp.have_wqe = false;
	stag_qp_error(qp);
}

static u8 nak_code(enum stag_resp_result res)
{
	switch (res) {
	case STAG_RESP_NAK_INV_REQ:
		return STAG_NAK_INV_REQ;
	case STAG_RESP_NAK_ACCESS:
		return STAG_NAK_REM_ACCESS;
	default:
		return STAG_NAK_REM_OP;
	}
}

/* ---- executing requests ---- */

/*
 * Does @op continue the message in progress, or start one when none is?
 * A SEND or WRITE ends with its LAST or ONLY packet.
 */
static bool in_sequence(u8 prev, const struct stag_pkt *p)
{
	u32 prev_flags = prev == NO_OP ? 0 : stag_pkt_ops[prev].flags;

	if (prev_flags & STAG_PKT_SEND)
		return p->flags & STAG_PKT_SEND && !(p->flags & STAG_PKT_START);
	if (prev_flags & STAG_PKT_WRITE)
		return p->flags & STAG_PKT_WRITE && !(p->flags & STAG_PKT_START);
	return p->flags & STAG_PKT_START;
}

/*
 * The payload size rules of IBA 9.7.5.2.3: FIRST and MIDDLE carry a full
 * MTU, LAST at least a byte and at most an MTU, ONLY at most an MTU.
 */
static bool size_ok(struct stag_qp *qp, const struct stag_pkt *p)
{
	u32 mtu = stag_roce_mtu(qp);

	if (!(p->flags & STAG_PKT_END))
		return p->paylen == mtu;
	if (!(p->flags & STAG_PKT_START))
		return p->paylen && p->paylen <= mtu;
	return p->paylen <= mtu;
}

/* The 40 bytes a UD receive gets first: the packet's IP header (as rdma_rxe). */
static void grh_of(const struct sk_buff *skb, u8 *grh)
{
	memset(grh, 0, GRH_SIZE);
	if (ip_hdr(skb)->version == 4)
		memcpy(grh + GRH_SIZE - sizeof(struct iphdr), ip_hdr(skb), sizeof(struct iphdr));
	else
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
}

/*
 * Places a GRH, then the payload but its first @skip bytes (a tag
 * matching header), at the message's offset.
 */
static enum stag_resp_result place_recv(struct stag_qp *qp, const struct sk_buff *skb,
					const struct stag_pkt *p, const u8 *grh, u32 grh_len,
					u32 skip)
{
	u32 paylen = p->paylen - skip;
	struct stag_roce_resp *rr = &qp->rresp;
	struct stag_gate_who who = stag_qp_who(qp);
	struct stag_rwqe *wqe = qp->rq.wqe;
	struct stag_sgl *sgl = qp->rq.sgl;
	int ret;

	if (rr->offset + grh_len + paylen > wqe->length) {
		stag_resp_recv_error(qp, IB_WC_LOC_LEN_ERR);
		rr->have_wqe = false;
		return STAG_RESP_NAK_INV_REQ;
	}
	if (!grh_len && !paylen)
		return STAG_RESP_ACK;
	ret = stag_sgl_build_range(sgl, &dev_of(qp)->tpt, &who, wqe->sge, wqe->num_sge,
				   IB_ACCESS_LOCAL_WRITE, rr->offset, grh_len + paylen);
	if (!ret && grh_len)
		ret = stag_sgl_write(sgl, 0, grh, grh_len);
	if (!ret)
		ret = stag_sgl_copy_skb(sgl, grh_len, skb, p->hlen + skip, paylen);
	stag_sgl_release(sgl);
	if (ret) {
		stag_resp_recv_error(qp, IB_WC_LOC_PROT_ERR);
		rr->have_wqe = false;
		return STAG_RESP_NAK_OP;
	}
	rr->offset += grh_len + paylen;
	return STAG_RESP_ACK;
}

/* The end of a SEND: its receive completes; an invalidation it asks for happens. */
static enum stag_resp_result complete_send(struct stag_qp *qp, const struct stag_pkt *p,
					   bool grh, const struct sk_buff *skb)
{
	struct stag_roce_resp *rr = &qp->rresp;
	struct ib_wc wc = {
		.opcode = IB_WC_RECV,
		.byte_len = rr->offset,
		.src_qp = grh ? p->src_qpn : READ_ONCE(qp->attr.dest_qp_num),
	};

	rr->have_wqe = false;
	if (p->flags & STAG_PKT_IMM) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = p->imm;
	} else if (p->flags & STAG_PKT_IETH) {
		/* The data is placed and no gate reference is held: a drain may wait here. */
		if (stag_tpt_invalidate_key(&dev_of(qp)->tpt, p->inv_rkey, qp->ibqp.pd,
					    qp->ibqp.qp_num, true)) {
			stag_resp_recv_error(qp, IB_WC_LOC_PROT_ERR);
			return STAG_RESP_NAK_OP;
		}
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = p->inv_rkey;
	}
	if (grh) {
		wc.wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		wc.network_hdr_type = ip_hdr(skb)->version == 4 ? RDMA_NETWORK_IPV4 :
								   RDMA_NETWORK_IPV6;
	}
	if (stag_resp_is_tm(qp))
		stag_resp_complete_tm(qp, &wc, &rr->tm, p->se);
	else
		stag_resp_complete_recv(qp, &wc, p->se);
	return STAG_RESP_ACK;
}

/*
 * The receive of a SEND's first packet; at a tag matching SRQ, the one
 * its header, in that packet, chooses (never for a SEND with Invalidate,
 * which lands whole). A rendezvous that matches is not read on the wire:
 * it completes for software to finish (stag_resp_complete_tm()).
 */
static enum stag_resp_result get_recv(struct stag_qp *qp, const struct sk_buff *skb,
				      const struct stag_pkt *p)
{
	bool has_tmh = p->paylen >= sizeof(struct stag_tmh) && !(p->flags & STAG_PKT_IETH);
	struct stag_tmh tmh;

	if (!stag_resp_is_tm(qp))
		return stag_resp_get_recv(qp);
	if (has_tmh && skb_copy_bits(skb, p->hlen, &tmh, sizeof(tmh)))
		return STAG_RESP_NAK_INV_REQ;
	return stag_resp_get_recv_tm(qp, has_tmh ? &tmh : NULL, &qp->rresp.tm);
}

/* A packet of a SEND: its part of the receive buffers. */
static enum stag_resp_result recv_send(struct stag_qp *qp, const struct sk_buff *skb,
				       const struct stag_pkt *p)
{
	bool ud = qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
	struct stag_roce_resp *rr = &qp->rresp;
	enum stag_resp_result res;
	u8 grh[GRH_SIZE];
	u32 skip;

	if (!size_ok(qp, p))
		return STAG_RESP_NAK_INV_REQ;
	if (p->flags & STAG_PKT_START) {
		if (!rr->have_wqe) {
			res = get_recv(qp, skb, p);
			if (res != STAG_RESP_ACK)
				return res;
			rr->have_wqe = true;
		}
		rr->offset = 0;
	}
	if (ud)
		grh_of(skb, grh);
	/* A tagged buffer takes what follows the header. */
	skip = p->flags & STAG_PKT_START && stag_resp_is_tm(qp) && rr->tm.matched ?
	       sizeof(struct stag_tmh) : 0;
	res = place_recv(qp, skb, p, grh, ud ? GRH_SIZE : 0, skip);
	if (res != STAG_RESP_ACK || !(p->flags & STAG_PKT_END))
		return res;
	return complete_send(qp, p, ud, skb);
}

/* A packet of a WRITE: its part of the range its first packet named. */
static enum stag_resp_result recv_write(struct stag_qp *qp, const struct sk_buff *skb,
					const struct stag_pkt *p)
{
	struct stag_roce_resp *rr = &qp->rresp;
	enum stag_resp_result res;
	int ret;

	if (!size_ok(qp, p))
		return STAG_RESP_NAK_INV_REQ;
	if (p->flags & STAG_PKT_START) {
		if (p->dmalen > STAG_MAX_MSG_SIZE)
			return STAG_RESP_NAK_INV_REQ;
		/* The whole range, once, before a byte of it moves. */
		res = stag_resp_get_remote(qp, p->rkey, p->va, p->dmalen, IB_ACCESS_REMOTE_WRITE);
		if (res != STAG_RESP_ACK)
			return res;
		stag_sgl_release(qp->rq.remote);
		rr->va = p->va;
		rr->rkey = p->rkey;
		rr->length = p->dmalen;
		rr->offset = 0;
	}
	if (rr->offset + p->paylen > rr->length ||
	    (p->flags & STAG_PKT_END && rr->offset + p->paylen != rr->length))
		return STAG_RESP_NAK_INV_REQ;
	/* The immediate's receive first: an RNR NAK must leave nothing done. */
	if (p->flags & STAG_PKT_IMM) {
		res = stag_resp_get_recv(qp);
		if (res != STAG_RESP_ACK)
			return res;
	}
	if (p->paylen) {
		res = stag_resp_get_remote(qp, rr->rkey, rr->va + rr->offset, p->paylen,
					   IB_ACCESS_REMOTE_WRITE);
		if (res == STAG_RESP_ACK) {
			ret = stag_sgl_copy_skb(qp->rq.remote, 0, skb, p->hlen, p->paylen);
			stag_sgl_release(qp->rq.remote);
			res = ret ? STAG_RESP_NAK_ACCESS : STAG_RESP_ACK;
		}
		if (res != STAG_RESP_ACK) {
			if (p->flags & STAG_PKT_IMM)
				stag_resp_recv_error(qp, IB_WC_REM_ACCESS_ERR);
			return res;
		}
	}
	rr->offset += p->paylen;
	if (p->flags & STAG_PKT_IMM) {
		struct ib_wc wc = {
			.opcode = IB_WC_RECV_RDMA_WITH_IMM,
			.byte_len = rr->length,
			.src_qp = READ_ONCE(qp->attr.dest_qp_num),
			.wc_flags = IB_WC_WITH_IMM,
			.ex.imm_data = p->imm,
		};

		stag_resp_complete_recv(qp, &wc, p->se);
	}
	return STAG_RESP_ACK;
}

/* The responder resources this QP keeps: max_dest_rd_atomic. */
static u32 nres(struct stag_qp *qp)
{
	return READ_ONCE(qp->attr.max_dest_rd_atomic);
}

static void start_reply(struct stag_qp *qp, u32 psn, u64 va, u32 rkey, u64 len)
{
	qp->rresp.reading = (struct stag_reading) {
		.active = true, .psn = psn, .va = va, .rkey = rkey, .left = len,
		.xrc_srqn = qp->xsrq ? qp->xsrq->srq_num : 0,
	};
}

/* A read request: checked whole, remembered, and answered from here on. */
static enum stag_resp_result recv_read(struct stag_qp *qp, const struct stag_pkt *p)
{
	struct stag_roce_resp *rr = &qp->rresp;
	u32 n = p->dmalen ? DIV_ROUND_UP(p->dmalen, stag_roce_mtu(qp)) : 1;
	enum stag_resp_result res;
	struct stag_rdres *r;

	if (p->dmalen > STAG_MAX_MSG_SIZE || !READ_ONCE(qp->attr.max_dest_rd_atomic))
		return STAG_RESP_NAK_INV_REQ;
	res = stag_resp_get_remote(qp, p->rkey, p->va, p->dmalen, IB_ACCESS_REMOTE_READ);
	if (res != STAG_RESP_ACK)
		return res;
	stag_sgl_release(qp->rq.remote);

	r = stag_rdres_new(&rr->res, nres(qp));
	r->first_psn = p->psn;
	r->last_psn = stag_psn_add(p->psn, n - 1);
	r->va = p->va;
	r->rkey = p->rkey;
	r->len = p->dmalen;
	rr->epsn = stag_psn_add(p->psn, n);
	rr->msn = stag_psn_add(rr->msn, 1);
	flush_ack(qp);
	start_reply(qp, p->psn, p->va, p->rkey, p->dmalen);
	return STAG_RESP_ACK;
}

static void send_atomic_ack(struct stag_qp *qp, u32 psn, u64 orig)
{
	flush_ack(qp);
	send_aeth(qp, STAG_OP_ATOMIC_ACK, STAG_AETH_ACK | STAG_AETH_CREDITS_NONE, psn, orig);
}

/* An atomic executed: its result is kept for a duplicate, which gets it again. */
static void keep_atomic(struct stag_qp *qp, const struct stag_pkt *p, u64 orig)
{
	struct stag_roce_resp *rr = &qp->rresp;
	struct stag_rdres *r = stag_rdres_new(&rr->res, nres(qp));

	r->atomic = true;
	r->opcode = p->opcode;
	r->first_psn = p->psn;
	r->last_psn = p->psn;
	r->orig = orig;
	rr->epsn = stag_psn_add(p->psn, 1);
	rr->msn = stag_psn_add(rr->msn, 1);
}

/* An atomic: executed once, its result kept for a duplicate. */
static enum stag_resp_result recv_atomic(struct stag_qp *qp, const struct stag_pkt *p)
{
	bool cas = (p->opcode & 0x1f) == STAG_OP_CMP_SWAP;
	enum stag_resp_result res;
	u64 orig;

	if (!READ_ONCE(qp->attr.max_dest_rd_atomic))
		return STAG_RESP_NAK_INV_REQ;
	res = stag_resp_atomic(qp, p->rkey, p->va, IB_ACCESS_REMOTE_ATOMIC,
			       cas ? IB_WR_ATOMIC_CMP_AND_SWP : IB_WR_ATOMIC_FETCH_AND_ADD,
			       cas ? p->compare : p->swap_add, p->swap_add, &orig);
	if (res != STAG_RESP_ACK)
		return res;
	keep_atomic(qp, p, orig);
	send_atomic_ack(qp, p->psn, orig);
	return STAG_RESP_ACK;
}

/* The answer to an atomic write or a flush: a read response with nothing in it. */
static void send_bufferless_ack(struct stag_qp *qp, u32 psn)
{
	flush_ack(qp);
	send_aeth(qp, STAG_OP_READ_RESP_ONLY, STAG_AETH_ACK | STAG_AETH_CREDITS_NONE, psn, 0);
}

/*
 * An atomic write (IBA 1.5): exactly 8 bytes, no pad, written whole with
 * the remote write right (as rdma_rxe checks it), executed once.
 */
static enum stag_resp_result recv_atomic_write(struct stag_qp *qp, const struct sk_buff *skb,
					       const struct stag_pkt *p)
{
	enum stag_resp_result res;
	u64 val, orig;

	if (p->dmalen != sizeof(val) || p->paylen != sizeof(val) || p->pad ||
	    !READ_ONCE(qp->attr.max_dest_rd_atomic))
		return STAG_RESP_NAK_INV_REQ;
	if (skb_copy_bits(skb, p->hlen, &val, sizeof(val)))
		return STAG_RESP_NAK_INV_REQ;
	res = stag_resp_atomic(qp, p->rkey, p->va, IB_ACCESS_REMOTE_WRITE, IB_WR_ATOMIC_WRITE, 0,
			       val, &orig);
	if (res != STAG_RESP_ACK)
		return res;
	keep_atomic(qp, p, 0);
	send_bufferless_ack(qp, p->psn);
	return STAG_RESP_ACK;
}

/*
 * A FLUSH (IBA 1.5): through the gate with the flush rights, executed
 * once; a duplicate is answered again without a second flush.
 */
static enum stag_resp_result recv_flush(struct stag_qp *qp, const struct stag_pkt *p)
{
	enum stag_resp_result res;

	if (!READ_ONCE(qp->attr.max_dest_rd_atomic))
		return STAG_RESP_NAK_INV_REQ;
	res = stag_resp_do_flush(qp, p->rkey, p->va, p->dmalen, p->flush_type, p->flush_level);
	if (res != STAG_RESP_ACK)
		return res;
	keep_atomic(qp, p, 0);
	send_bufferless_ack(qp, p->psn);
	return STAG_RESP_ACK;
}

/* ---- answering a read ---- */

/* The opcode of the read response now due. */
static u8 reply_opcode(const struct stag_reading *rd, u32 mtu)
{
	bool last = rd->left <= mtu;

	if (!rd->started)
		return last ? STAG_OP_READ_RESP_ONLY : STAG_OP_READ_RESP_FIRST;
	return last ? STAG_OP_READ_RESP_LAST : STAG_OP_READ_RESP_MIDDLE;
}

/* One response of the read being answered; false when it must wait. */
static bool reply_one(struct stag_qp *qp)
{
	struct stag_reading *rd = &qp->rresp.reading;
	u32 mtu = stag_roce_mtu(qp), len = min_t(u64, rd->left, mtu);
	struct stag_pkt p = {
		.opcode = reply_opcode(rd, mtu) | stag_roce_class(qp),
		.psn = rd->psn,
		.pkey = STAG_PKEY_DEFAULT,
		.qpn = READ_ONCE(qp->attr.dest_qp_num),
		.pad = stag_pkt_pad(len),
		.syndrome = STAG_AETH_ACK | STAG_AETH_CREDITS_NONE,
		.msn = qp->rresp.msn,
	};
	unsigned int hlen = stag_pkt_ops[p.opcode].hlen;
	enum stag_resp_result res;
	struct sk_buff *skb;
	int ret;

	if (!stag_roce_tx_room(qp))
		return false;
	skb = stag_roce_alloc(qp, hlen + len + p.pad + STAG_ICRC_LEN);
	if (!skb) {
		/* No packet to be had now: the work comes back for it. */
		stag_qp_kick(qp);
		return false;
	}
	stag_pkt_build(skb->data, &p);
	/*
	 * Each packet's part of the range through the gate again; for an
	 * XRC TGT QP under the PD of the SRQ the read named, if it is still
	 * there.
	 */
	res = STAG_RESP_ACK;
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		res = stag_resp_xrc_begin(qp, rd->xrc_srqn);
	if (res == STAG_RESP_ACK)
		res = stag_resp_get_remote(qp, rd->rkey, rd->va, len, IB_ACCESS_REMOTE_READ);
	if (res == STAG_RESP_ACK) {
		ret = stag_sgl_read(qp->rq.remote, 0, skb->data + hlen, len);
		stag_sgl_release(qp->rq.remote);
		res = ret ? STAG_RESP_NAK_ACCESS : STAG_RESP_ACK;
	}
	stag_resp_xrc_end(qp);
	if (res != STAG_RESP_ACK) {
		kfree_skb(skb);
		rd->active = false;
		nak(qp, nak_code(res), rd->psn);
		return true;
	}
	memset(skb->data + hlen + len, 0, p.pad);
	stag_roce_queue(qp, &qp->roce.tx_resp, skb);
	rd->psn = stag_psn_add(rd->psn, 1);
	rd->va += len;
	rd->left -= len;
	rd->started = true;
	if (stag_pkt_ops[p.opcode].flags & STAG_PKT_END)
		rd->active = false;
	return true;
}

/*
 * A read asked again from before the response about to be sent waits at
 * the head of the queue: the requester lost a response and ignores every
 * one until the one it lost comes. The read in progress yields to it
 * (duplicate() restarts the answer where asked).
 *
 * Not to one asked from further on: a requester going back over several
 * reads asks for each again at once, and they must be answered in order.
 * Yielding to each would leave only the last answered, and a requester
 * that waits for the first would ask for all of them again, for ever
 * (rdma_rxe, whose retry_cnt 7 never runs out, hung so in ib_read_bw).
 */
static bool reread_waiting(struct stag_qp *qp)
{
	struct sk_buff_head *q = &qp->roce.rx_req;
	struct stag_pkt p;
	struct sk_buff *skb;
	bool yes = false;

	if (skb_queue_empty_lockless(q))
		return false;
	spin_lock_bh(&q->lock);
	skb = skb_peek(q);
	if (skb && !stag_pkt_parse(skb->data, skb->len, &p))
		yes = p.flags & STAG_PKT_READ && stag_psn_cmp(p.psn, qp->rresp.reading.psn) < 0;
	spin_unlock_bh(&q->lock);
	return yes;
}

/* Answers the read in progress as far as the QP may send; false: not through. */
static bool continue_reply(struct stag_qp *qp)
{
	while (qp->rresp.reading.active) {
		if (reread_waiting(qp))
			return true;
		if (!reply_one(qp))
			return false;
	}
	return true;
}

/* ---- duplicates ---- */

static void duplicate(struct stag_qp *qp, const struct stag_pkt *p)
{
	struct stag_roce_resp *rr = &qp->rresp;
	struct stag_rdres *r;

	stag_count(dev_of(qp), STAG_CNT_DUP_REQ);
	if (p->flags & (STAG_PKT_SEND | STAG_PKT_WRITE)) {
		owe_ack(qp, stag_psn_add(rr->epsn, STAG_PSN_MASK));
		return;
	}
	r = stag_rdres_find(&rr->res, nres(qp), p->psn);
	if (!r)
		return;
	if (p->flags & (STAG_PKT_ATOMIC | STAG_PKT_ATOMIC_WRITE | STAG_PKT_FLUSH)) {
		if (!r->atomic || r->first_psn != p->psn || r->opcode != p->opcode)
			return;
		if (p->flags & STAG_PKT_ATOMIC)
			send_atomic_ack(qp, p->psn, r->orig);
		else
			send_bufferless_ack(qp, p->psn);
		return;
	}
	/* A read asked again: the same key, the rest of what it asked first. */
	if (!stag_rdres_may_replay(r, p, stag_roce_mtu(qp)))
		return;
	/*
	 * The requester went back to this read: whatever is being answered
	 * now (this read or a later one) it will ask for again, and it
	 * ignores responses until this one's arrive. Answer this one first:
	 * leaving it for later costs the requester an ACK timeout.
	 */
	flush_ack(qp);
	start_reply(qp, p->psn, p->va, p->rkey, p->dmalen);
}

/* ---- the transports ---- */

/* A request that did not run: an RNR NAK, or a NAK. */
static void refuse(struct stag_qp *qp, const struct stag_pkt *p, enum stag_resp_result res)
{
	if (res == STAG_RESP_RNR) {
		flush_ack(qp);
		stag_count(dev_of(qp), STAG_CNT_NAK_SENT_RNR);
		send_ack(qp, STAG_AETH_RNR | (READ_ONCE(qp->attr.min_rnr_timer) & 0x1f), p->psn);
		return;
	}
	nak(qp, nak_code(res), p->psn);
}

static void rc_request(struct stag_qp *qp, const struct sk_buff *skb, const struct stag_pkt *p)
{
	struct stag_roce_resp *rr = &qp->rresp;
	int diff = stag_psn_cmp(p->psn, rr->epsn);
	enum stag_resp_result res;

	if (diff > 0) {
		/*
		 * One NAK per gap, unless the requester has evidently gone
		 * back already (a PSN just past the one expected, below the
		 * last one out of order) and the first packet of its new
		 * round was lost too: without a second NAK only its ACK
		 * timeout would tell it.
		 */
		if (rr->nak_sent && (stag_psn_cmp(p->psn, rr->ooo_psn) >= 0 ||
				     stag_psn_cmp(p->psn, stag_psn_add(rr->epsn,
								       STAG_ROCE_NEW_ROUND)) > 0)) {
			rr->ooo_psn = p->psn;
			stag_count_drop(dev_of(qp), STAG_CNT_DROP_PSN, qp->ibqp.qp_num);
			return;
		}
		rr->nak_sent = true;
		rr->ooo_psn = p->psn;
		nak(qp, STAG_NAK_PSN_SEQ, rr->epsn);
		return;
	}
	if (diff < 0) {
		duplicate(qp, p);
		return;
	}
	rr->nak_sent = false;
	if (!in_sequence(rr->op, p)) {
		nak(qp, STAG_NAK_INV_REQ, p->psn);
		return;
	}
	if (p->flags & STAG_PKT_READ)
		res = recv_read(qp, p);
	else if (p->flags & STAG_PKT_ATOMIC)
		res = recv_atomic(qp, p);
	else if (p->flags & STAG_PKT_ATOMIC_WRITE)
		res = recv_atomic_write(qp, skb, p);
	else if (p->flags & STAG_PKT_FLUSH)
		res = recv_flush(qp, p);
	else if (p->flags & STAG_PKT_SEND)
		res = recv_send(qp, skb, p);
	else
		res = recv_write(qp, skb, p);
	if (res != STAG_RESP_ACK) {
		refuse(qp, p, res);
		return;
	}
	if (p->flags & (STAG_PKT_READ | STAG_PKT_ATOMIC | STAG_PKT_ATOMIC_WRITE | STAG_PKT_FLUSH))
		return;
	rr->epsn = stag_psn_add(p->psn, 1);
	rr->op = p->flags & STAG_PKT_END ? NO_OP : p->opcode;
	if (p->flags & STAG_PKT_END)
		rr->msn = stag_psn_add(rr->msn, 1);
	if (p->ackreq)
		owe_ack(qp, p->psn);
}

/*
 * An XRC TGT QP is RC's responder, each request run under the XRC SRQ its
 * XRCETH names (stag_resp_xrc_begin()): that SRQ's receives, CQ and PD.
 * The request the QP expects must name an SRQ of the QP's domain, and a
 * message, or a receive taken for it, keeps the SRQ it started with:
 * anything else is an invalid request. A duplicate or a request past a
 * gap is RC's to judge; one that would touch memory through an SRQ gone
 * since meets the gate with no PD, and is refused there.
 */
static void xrc_request(struct stag_qp *qp, const struct sk_buff *skb, const struct stag_pkt *p)
{
	struct stag_roce_resp *rr = &qp->rresp;
	enum stag_resp_result res;

	if (p->psn == rr->epsn) {
		if ((rr->op != NO_OP || rr->have_wqe) && p->xrc_srqn != rr->xrc_srqn) {
			nak(qp, STAG_NAK_INV_REQ, p->psn);
			return;
		}
		res = stag_resp_xrc_begin(qp, p->xrc_srqn);
		if (res != STAG_RESP_ACK) {
			nak(qp, nak_code(res), p->psn);
			return;
		}
		rr->xrc_srqn = p->xrc_srqn;
	} else {
		/* Found or not: see above. */
		stag_resp_xrc_begin(qp, p->xrc_srqn);
	}
	rc_request(qp, skb, p);
	stag_resp_xrc_end(qp);
}

static void uc_request(struct stag_qp *qp, const struct sk_buff *skb, const struct stag_pkt *p)
{
	struct stag_roce_resp *rr = &qp->rresp;
	enum stag_resp_result res;

	if (rr->drop_msg || p->psn != rr->epsn) {
		/* Out of step: wait for the next message to start over. */
		if (!(p->flags & STAG_PKT_START)) {
			rr->drop_msg = true;
			rr->epsn = stag_psn_add(p->psn, 1);
			stag_count_drop(dev_of(qp), STAG_CNT_DROP_PSN, qp->ibqp.qp_num);
			return;
		}
		rr->drop_msg = false;
		end_message(qp);
	}
	rr->epsn = stag_psn_add(p->psn, 1);
	if (!in_sequence(rr->op, p)) {
		stag_count_drop(dev_of(qp), STAG_CNT_DROP_OPCODE, qp->ibqp.qp_num);
		rr->drop_msg = true;
		end_message(qp);
		return;
	}
	res = p->flags & STAG_PKT_SEND ? recv_send(qp, skb, p) : recv_write(qp, skb, p);
	if (res != STAG_RESP_ACK) {
		/* UC has no NAKs: the message is lost to its sender. */
		rr->drop_msg = !(p->flags & STAG_PKT_END);
		end_message(qp);
		return;
	}
	rr->op = p->flags & STAG_PKT_END ? NO_OP : p->opcode;
	if (p->flags & STAG_PKT_END)
		rr->msn = stag_psn_add(rr->msn, 1);
}

static void ud_request(struct stag_qp *qp, const struct sk_buff *skb, const struct stag_pkt *p)
{
	u32 addr = ip_hdr(skb)->version == 4 ? (__force u32)ip_hdr(skb)->saddr :
					       ipv6_addr_hash(&ipv6_hdr(skb)->saddr);

	/* Taken already, or too far behind to tell: dedup.c. */
	switch (stag_dedup_take(&qp->rresp.dedup, addr, p->src_qpn, p->psn, jiffies)) {
	case STAG_DEDUP_TWICE:
		stag_count_drop(dev_of(qp), STAG_CNT_DROP_DUPLICATE, qp->ibqp.qp_num);
		return;
	case STAG_DEDUP_STALE:
		stag_count_drop(dev_of(qp), STAG_CNT_DROP_STALE, qp->ibqp.qp_num);
		return;
	case STAG_DEDUP_TAKE:
		break;
	}
	qp->rresp.have_wqe = false;
	/* No receive posted, a message too big: dropped, UD has no answers. */
	if (recv_send(qp, skb, p) != STAG_RESP_ACK)
		stag_count_drop(dev_of(qp), STAG_CNT_DROP_NO_RECV, qp->ibqp.qp_num);
}

static bool takes_requests(const struct stag_qp *qp)
{
	enum ib_qp_state state = stag_qp_state(qp);

	/*
	 * A connected QP off the wire has no peer there: a packet checked
	 * against its old path and queued as a RESET emptied the queue is
	 * not for the QP connected since (a flag: nothing read under it).
	 */
	if (qp->ibqp.qp_type != IB_QPT_UD && qp->ibqp.qp_type != IB_QPT_GSI &&
	    !READ_ONCE(qp->roce.wire))
		return false;
	return state == IB_QPS_RTR || state == IB_QPS_RTS || state == IB_QPS_SQD ||
	       state == IB_QPS_SQE;
}

/**
 * stag_roce_resp_run() - run the requests the wire brought a QP
 * @qp: the QP
 *
 * Runs at most RESP_BUDGET requests, then leaves the rest to the QP's
 * work. A read being answered goes first: what came after it waits until
 * its last response is out, as the order of responses requires.
 *
 * Context: the QP's work.
 */
void stag_roce_resp_run(struct stag_qp *qp)
{
	u32 budget = RESP_BUDGET;
	struct sk_buff *skb;
	struct stag_pkt p;

	if (skb_queue_empty_lockless(&qp->roce.rx_req) && !qp->rresp.reading.active)
		return;
	mutex_lock(&qp->resp_mutex);
	if (!takes_requests(qp)) {
		skb_queue_purge(&qp->roce.rx_req);
		qp->rresp.reading.active = false;
		goto out_unlock;
	}
	while (continue_reply(qp) && budget && (skb = skb_dequeue(&qp->roce.rx_req))) {
		budget--;
		if (!stag_roce_stale(qp, skb) && !stag_pkt_parse(skb->data, skb->len, &p)) {
			if (qp->ibqp.qp_type == IB_QPT_RC)
				rc_request(qp, skb, &p);
			else if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
				xrc_request(qp, skb, &p);
			else if (qp->ibqp.qp_type == IB_QPT_UC)
				uc_request(qp, skb, &p);
			else
				ud_request(qp, skb, &p);
		}
		kfree_skb(skb);
	}
	flush_ack(qp);
	stag_roce_flush(qp, &qp->roce.tx_resp);
	if (!budget)
		stag_qp_kick(qp);
out_unlock:
	mutex_unlock(&qp->resp_mutex);
}

/**
 * stag_roce_resp_fill_res() - the responder's place, for rdma resource show qp -dd
 * @msg: the netlink message, inside the QP's driver table
 * @qp: the QP
 *
 * Read under resp_mutex; a reader killed while the responder holds it
 * gives up. Nothing for a QP that is not on the wire.
 *
 * Return: 0, -EMSGSIZE when the message is full, or -EINTR.
 */
int stag_roce_resp_fill_res(struct sk_buff *msg, struct stag_qp *qp)
{
	u32 epsn, msn;

	if (!READ_ONCE(qp->roce.wire))
		return 0;
	if (mutex_lock_killable(&qp->resp_mutex))
		return -EINTR;
	epsn = qp->rresp.epsn;
	msn = qp->rresp.msn;
	mutex_unlock(&qp->resp_mutex);
	if (rdma_nl_put_driver_u32_hex(msg, "epsn", epsn) ||
	    rdma_nl_put_driver_u32(msg, "msn", msn))
		return -EMSGSIZE;
	return 0;
}

int stag_roce_resp_init(struct stag_qp *qp)
{
	qp->rresp.op = NO_OP;
	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_XRC_TGT)
		return 0;
	/* Each read or atomic a QP may be asked to keep has its resource. */
	BUILD_BUG_ON(STAG_RDRES_MAX < STAG_MAX_RD_ATOMIC);
	return stag_rdres_init(&qp->rresp.res);
}

void stag_roce_resp_uninit(struct stag_qp *qp)
{
	stag_rdres_uninit(&qp->rresp.res);
}

/**
 * stag_roce_resp_reset() - the responder starts over (RTR)
 * @qp: the QP, its rq_psn set
 *
 * Context: under resp_mutex.
 */
void stag_roce_resp_reset(struct stag_qp *qp)
{
	struct stag_roce_resp *rr = &qp->rresp;

	lockdep_assert_held(&qp->resp_mutex);
	rr->epsn = READ_ONCE(qp->attr.rq_psn);
	rr->msn = 0;
	rr->nak_sent = false;
	rr->drop_msg = false;
	rr->have_wqe = false;
	rr->ack = false;
	rr->reading.active = false;
	stag_dedup_reset(&rr->dedup);
	end_message(qp);
	stag_rdres_reset(&rr->res);
}
