// SPDX-License-Identifier: GPL-2.0
/*
 * Raw Packet QPs: a send is one Ethernet frame, written whole by the
 * consumer, headers and all, and a receive is one frame a flow of the QP
 * matched (flow.c), from its Ethernet header on.
 *
 * A send's frame goes out on the device's netdev as it is. One for a
 * group (multicast, broadcast) or for the netdev's own address also goes
 * to this host's flows, as a NIC's embedded switch loops it back; the
 * sending QP gets no copy, and a frame for the netdev's own address does
 * not go out. The frame's bytes are read through the gate like any send's.
 *
 * Frames received wait on the QP's rx_req queue and are placed by its
 * work, each into the next receive WQE through the gate: a QP with no
 * receive posted drops the frame (counted as no_recv), as a UD QP drops a
 * datagram; a frame longer than the receive's buffers fails it with a
 * local length error, as a UD message does.
 *
 * An RSS QP's frames go to the receive WQ its hash picks (rss.c), each
 * placed the same way and completed on that WQ's CQ, with the WQ's number
 * for the QP's. A WQ not ready, or with no receive posted, drops the
 * frame (no_recv); a receive that fails puts the WQ, not the QP, in
 * error.
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>

#include "counters.h"
#include "dev.h"
#include "flow.h"
#include "qp.h"
#include "raweth.h"
#include "req.h"
#include "resp.h"
#include "roce.h"
#include "rss.h"
#include "wq.h"
#include "xport.h"

/* Frames placed at one run of the QP's work; the rest wait for the next. */
#define RAWETH_BUDGET	64

/* What a frame may be: its Ethernet header whole, at most one tag past the MTU. */
static bool frame_len_ok(const struct net_device *ndev, u64 len)
{
	return len >= ETH_HLEN && len <= ndev->mtu + VLAN_ETH_HLEN;
}

/* Builds the send's frame and sends it; the status its completion has. */
static enum ib_wc_status send_frame(struct stag_qp *qp, struct stag_send *s,
				    struct net_device *ndev)
{
	u32 len = s->wqe.length;
	const struct ethhdr *eth;
	struct sk_buff *skb;
	bool self, loop;

	if (!frame_len_ok(ndev, len))
		return IB_WC_LOC_LEN_ERR;
	skb = alloc_skb(LL_RESERVED_SPACE(ndev) + len, GFP_KERNEL);
	if (!skb)
		return IB_WC_LOC_QP_OP_ERR;
	skb_reserve(skb, LL_RESERVED_SPACE(ndev));
	if (stag_req_read_payload(qp, s, skb_put(skb, len), 0, len)) {
		kfree_skb(skb);
		return IB_WC_LOC_PROT_ERR;
	}
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, ETH_HLEN);
	eth = eth_hdr(skb);
	skb->protocol = eth->h_proto;
	skb->dev = ndev;
	self = ether_addr_equal(eth->h_dest, ndev->dev_addr);
	loop = self || is_multicast_ether_addr(eth->h_dest);
	if (loop) {
		struct sk_buff *copy = self ? skb : skb_clone(skb, GFP_KERNEL);

		if (copy)
			stag_flow_loop(ndev, copy, qp);
		else
			stag_count_drop(to_stag_dev(qp->ibqp.device), STAG_CNT_DROP_TX,
					qp->ibqp.qp_num);
		if (self)
			return IB_WC_SUCCESS;
	}
	/* A frame the netdev drops is a frame lost on the wire: it was sent. */
	if (dev_queue_xmit(skb) != NET_XMIT_SUCCESS)
		stag_count_drop(to_stag_dev(qp->ibqp.device), STAG_CNT_DROP_TX, qp->ibqp.qp_num);
	return IB_WC_SUCCESS;
}

/* Every send completes where it starts: the frame is out, or it failed. */
static bool raweth_start(struct stag_qp *qp, struct stag_send *s)
{
	/*
	 * The core holds the netdev from link add until the device's
	 * unregistration has destroyed every QP (dev.h), this one too.
	 */
	struct net_device *ndev = to_stag_dev(qp->ibqp.device)->ndev;
	enum ib_wc_status status = IB_WC_LOC_QP_OP_ERR;

	lockdep_assert_held(&qp->sq.mutex);
	if (s->wqe.hdr.opcode == IB_WR_SEND)
		status = send_frame(qp, s, ndev);
	stag_req_done(qp, s, status);
	return true;
}

static void raweth_expire(struct stag_qp *qp)
{
}

const struct stag_xport stag_raweth_xport = {
	.name = "raweth",
	.start = raweth_start,
	.expire = raweth_expire,
};

/*
 * Copies a frame into the receive @wqe names, its keys checked through
 * the gate as @who's; the status of the receive's completion.
 */
static enum ib_wc_status copy_frame(struct stag_qp *qp, const struct stag_gate_who *who,
				    const struct stag_rwqe *wqe, const struct sk_buff *skb)
{
	struct stag_sgl *sgl = qp->rq.sgl;
	enum ib_wc_status status = IB_WC_SUCCESS;

	if (skb->len > wqe->length)
		return IB_WC_LOC_LEN_ERR;
	if (stag_sgl_build_range(sgl, &to_stag_dev(qp->ibqp.device)->tpt, who, wqe->sge,
				 wqe->num_sge, IB_ACCESS_LOCAL_WRITE, 0, skb->len))
		return IB_WC_LOC_PROT_ERR;
	if (stag_sgl_copy_skb(sgl, 0, skb, 0, skb->len))
		status = IB_WC_LOC_PROT_ERR;
	stag_sgl_release(sgl);
	return status;
}

/* Places one frame into the QP's next receive WQE and completes it. */
static void place(struct stag_qp *qp, const struct sk_buff *skb)
{
	struct stag_gate_who who = stag_qp_who(qp);
	struct ib_wc wc = {
		.opcode = IB_WC_RECV,
		.byte_len = skb->len,
	};

	lockdep_assert_held(&qp->resp_mutex);
	switch (stag_resp_get_recv(qp)) {
	case STAG_RESP_ACK:
		break;
	case STAG_RESP_RNR:
		stag_count_drop(to_stag_dev(qp->ibqp.device), STAG_CNT_DROP_NO_RECV,
				qp->ibqp.qp_num);
		return;
	default:
		/* A malformed receive WQE: the QP is in error already. */
		return;
	}
	wc.status = copy_frame(qp, &who, qp->rq.wqe, skb);
	stag_resp_complete_recv(qp, &wc, false);
}

/*
 * An RSS QP's frame: into the next receive of the WQ its hash picks,
 * with that WQ's PD, completed on that WQ's CQ. rq.wqe and rq.sgl are
 * the QP's scratch, under resp_mutex as for any receive.
 */
static void place_rss(struct stag_qp *qp, const struct sk_buff *skb)
{
	struct stag_wq *wq = stag_rss_pick(qp->rss, skb);
	struct stag_gate_who who = { .pd = wq->ibwq.pd, .qpn = qp->ibqp.qp_num };
	struct ib_wc wc = {
		.opcode = IB_WC_RECV,
		.byte_len = skb->len,
	};
	int ret;

	lockdep_assert_held(&qp->resp_mutex);
	mutex_lock(&wq->mutex);
	ret = stag_wq_take(wq, qp->rq.wqe);
	switch (ret) {
	case 0:
		wc.status = copy_frame(qp, &who, qp->rq.wqe, skb);
		break;
	case -EINVAL:
		wc.status = IB_WC_LOC_QP_OP_ERR;
		break;
	case -EIO:
		/* A corrupted ring: the WQ is in error, its consumer told. */
		goto out_unlock;
	default:
		/* Not ready, or no receive posted. */
		stag_count_drop(to_stag_dev(qp->ibqp.device), STAG_CNT_DROP_NO_RECV,
				qp->ibqp.qp_num);
		goto out_unlock;
	}
	stag_wq_complete(wq, &wc, qp->rq.wqe->wr_id);
out_unlock:
	mutex_unlock(&wq->mutex);
}

/**
 * stag_raweth_recv_run() - place the frames the QP's flows queued
 * @qp: the Raw Packet QP
 *
 * A QP that does not take frames now (not RTR, RTS or SQD) drops them;
 * an RSS QP takes them in any state, its WQs' states decide. Runs at
 * most RAWETH_BUDGET frames, then leaves the rest to the QP's work.
 *
 * Context: the QP's work.
 */
void stag_raweth_recv_run(struct stag_qp *qp)
{
	u32 budget = RAWETH_BUDGET;
	enum ib_qp_state state;
	struct sk_buff *skb;

	if (skb_queue_empty_lockless(&qp->roce.rx_req))
		return;
	mutex_lock(&qp->resp_mutex);
	if (qp->rss) {
		while (budget && (skb = skb_dequeue(&qp->roce.rx_req))) {
			budget--;
			place_rss(qp, skb);
			kfree_skb(skb);
		}
		goto out_budget;
	}
	state = stag_qp_state(qp);
	if (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD) {
		skb_queue_purge(&qp->roce.rx_req);
		goto out_unlock;
	}
	while (budget && (skb = skb_dequeue(&qp->roce.rx_req))) {
		budget--;
		place(qp, skb);
		kfree_skb(skb);
		/* A failed receive moved the QP to the error state: the rest is flushed. */
		if (stag_qp_state(qp) == IB_QPS_ERR) {
			skb_queue_purge(&qp->roce.rx_req);
			break;
		}
	}
out_budget:
	if (!budget)
		stag_qp_kick(qp);
out_unlock:
	mutex_unlock(&qp->resp_mutex);
}
