// SPDX-License-Identifier: GPL-2.0
/*
 * The responder: executes a message at its destination QP, whole, and
 * answers as the IBA's ACK and NAK codes would. Remote keys are checked by
 * the gate against the destination device's table and the destination
 * QP's PD; receive buffers against its L_Keys.
 *
 * Context: process context, under the destination's resp_mutex, called by
 * the requester with its own local buffers already through the gate.
 */

#include <linux/ip.h>
#include <net/ip.h>

#include "cq.h"
#include "dev.h"
#include "qp.h"
#include "resp.h"
#include "srq.h"

#define GRH_SIZE	40

static bool is_ud(const struct stag_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

static bool types_match(const struct stag_qp *src, const struct stag_qp *dst)
{
	if (is_ud(src))
		return is_ud(dst);
	if (src->ibqp.qp_type == IB_QPT_XRC_INI)
		return dst->ibqp.qp_type == IB_QPT_XRC_TGT;
	return src->ibqp.qp_type == dst->ibqp.qp_type;
}

/* Where a message's receive comes from: its XRC SRQ, the QP's SRQ, or NULL. */
static struct stag_srq *recv_srq(const struct stag_qp *qp)
{
	return qp->xsrq ?: qp->srq;
}

/**
 * stag_resp_xrc_begin() - find the XRC SRQ a message to a TGT QP names
 * @qp: the XRC TGT QP, its resp_mutex held
 * @srqn: the number the message carries
 *
 * Until stag_resp_xrc_end(), the message's receive, completion and
 * memory checks are the SRQ's (its ring, its CQ, its PD), and the SRQ
 * cannot be destroyed.
 *
 * Return: STAG_RESP_ACK; STAG_RESP_NAK_INV_REQ when @srqn names no XRC
 * SRQ of the QP's domain.
 */
enum stag_resp_result stag_resp_xrc_begin(struct stag_qp *qp, u32 srqn)
{
	lockdep_assert_held(&qp->resp_mutex);
	WARN_ON_ONCE(qp->xsrq);
	qp->xsrq = stag_srq_get_xrc(to_stag_dev(qp->ibqp.device), srqn, qp->xrcd);
	return qp->xsrq ? STAG_RESP_ACK : STAG_RESP_NAK_INV_REQ;
}

void stag_resp_xrc_end(struct stag_qp *qp)
{
	lockdep_assert_held(&qp->resp_mutex);
	if (qp->xsrq)
		stag_srq_put(qp->xsrq);
	qp->xsrq = NULL;
}

/* Takes the next receive WQE into rq.wqe. */
static int take_recv(struct stag_qp *qp)
{
	struct stag_queue *q = &qp->rq.queue;
	u32 avail;
	int ret;

	/* rq.wqe and the ring's consumer index are the responder's. */
	lockdep_assert_held(&qp->resp_mutex);
	if (recv_srq(qp))
		return stag_srq_take(recv_srq(qp), qp->rq.wqe);
	ret = stag_queue_avail(q, &avail);
	if (ret)
		return ret;
	if (!avail)
		return -ENOENT;
	ret = stag_wqe_fetch_recv(stag_queue_head(q), q->slot_size, qp->rq.max_sge, qp->rq.wqe);
	stag_queue_pop(q);
	return ret;
}

/*
 * Completes the receive WQE in rq.wqe, with @tm's part for a tag matching
 * completion. An error moves the QP to the error state, but for a
 * rendezvous left to software, which is no error of the QP's.
 */
static void complete_recv(struct stag_qp *qp, struct ib_wc *wc, const struct stag_cq_tm *tm,
			  bool solicited)
{
	struct stag_cq *cq = qp->xsrq ? to_stag_cq(qp->xsrq->ibsrq.ext.cq) : qp->rcq;

	lockdep_assert_held(&qp->resp_mutex);
	wc->wr_id = qp->rq.wqe->wr_id;
	wc->qp = &qp->ibqp;
	wc->port_num = STAG_PORT_NUM;
	/*
	 * The QP is in error before its consumer can see the completion that
	 * says so: one that polls it and queries the QP at once must find
	 * ERR. The flush this starts waits for resp_mutex, held here, so no
	 * flushed receive completes ahead of this one.
	 */
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR &&
	    wc->status != (enum ib_wc_status)STAG_WC_TM_RNDV_INCOMPLETE)
		stag_qp_error(qp);
	if (tm)
		stag_cq_post_tm(cq, wc, tm, solicited);
	else
		stag_cq_post(cq, wc, solicited);
}

/**
 * stag_resp_complete_recv() - complete the receive WQE in rq.wqe
 * @qp: the QP, its resp_mutex held
 * @wc: the completion, but for wr_id, qp and port
 * @solicited: the message was solicited
 *
 * An error completion moves the QP to the error state. A receive of an
 * XRC SRQ completes in that SRQ's CQ.
 */
void stag_resp_complete_recv(struct stag_qp *qp, struct ib_wc *wc, bool solicited)
{
	complete_recv(qp, wc, NULL, solicited);
}

void stag_resp_recv_error(struct stag_qp *qp, enum ib_wc_status status)
{
	struct ib_wc wc = { .status = status, .opcode = IB_WC_RECV };

	stag_resp_complete_recv(qp, &wc, false);
}

/*
 * What went wrong with a receive WQE taken (@ret, as take_recv() says) is
 * the receiver's error (a completion, or for a corrupted ring a fatal
 * event) and the requester's NAK.
 */
static enum stag_resp_result recv_taken(struct stag_qp *qp, int ret)
{
	if (!ret)
		return STAG_RESP_ACK;
	if (ret == -ENOENT)
		return STAG_RESP_RNR;
	if (ret == -EIO)
		stag_qp_fatal(qp);
	else
		stag_resp_recv_error(qp, IB_WC_LOC_QP_OP_ERR);
	return STAG_RESP_NAK_OP;
}

/**
 * stag_resp_get_recv() - take a receive WQE into rq.wqe for a message
 * @qp: the QP, its resp_mutex held
 *
 * Return: STAG_RESP_ACK with the WQE taken; STAG_RESP_RNR when there is
 * none; STAG_RESP_NAK_OP when it was malformed.
 */
enum stag_resp_result stag_resp_get_recv(struct stag_qp *qp)
{
	return recv_taken(qp, take_recv(qp));
}

/*
 * The GRH a RoCE v2 receiver finds in its first 40 bytes: an IPv6 header,
 * or for IPv4 GIDs an IPv4 header in the last 20 (as rdma_rxe and the
 * core's ib_get_gids_from_rdma_hdr() have it).
 */
static void make_grh(const struct stag_av *av, u64 len, u8 *buf)
{
	memset(buf, 0, GRH_SIZE);
	if (av->net_type == RDMA_NETWORK_IPV4) {
		struct iphdr *ip = (struct iphdr *)(buf + 20);

		ip->version = 4;
		ip->ihl = 5;
		ip->tos = av->traffic_class;
		ip->tot_len = htons(min_t(u64, len + 20 + 8 + 12 + 8 + 4, U16_MAX));
		ip->ttl = av->hop_limit;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, av->sgid.raw + 12, 4);
		memcpy(&ip->daddr, av->dgid.raw + 12, 4);
		ip->check = ip_fast_csum((u8 *)ip, ip->ihl);
	} else {
		struct ib_grh *grh = (struct ib_grh *)buf;

		grh->version_tclass_flow = cpu_to_be32(6 << 28 | av->traffic_class << 20 |
						       (av->flow_label & 0xfffff));
		grh->paylen = cpu_to_be16(min_t(u64, len + 8 + 12 + 8 + 4, U16_MAX));
		grh->next_hdr = IPPROTO_UDP;
		grh->hop_limit = av->hop_limit;
		grh->sgid = av->sgid;
		grh->dgid = av->dgid;
	}
}

static void fill_ud_wc(const struct stag_msg *msg, struct ib_wc *wc)
{
	wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	wc->network_hdr_type = msg->av->net_type;
	wc->sl = msg->av->sl;
}

/*
 * Places the data of a send into the receive buffers, after the GRH; the
 * first @skip bytes of the message (a tag matching header) stay out.
 */
static enum stag_resp_result place_send(struct stag_qp *dst, struct stag_msg *msg, u32 grh,
					u64 skip)
{
	struct stag_dev *sdev = to_stag_dev(dst->ibqp.device);
	struct stag_rwqe *rwqe = dst->rq.wqe;
	struct stag_gate_who who = stag_qp_who(dst);
	struct stag_sgl *sgl = dst->rq.sgl;
	u8 hdr[GRH_SIZE];
	int ret;

	if (stag_sgl_build(sgl, &sdev->tpt, &who, rwqe->sge, rwqe->num_sge,
			   IB_ACCESS_LOCAL_WRITE)) {
		stag_resp_recv_error(dst, IB_WC_LOC_PROT_ERR);
		return STAG_RESP_NAK_OP;
	}
	if (grh + msg->length - skip > sgl->length) {
		stag_sgl_release(sgl);
		stag_resp_recv_error(dst, IB_WC_LOC_LEN_ERR);
		return STAG_RESP_NAK_INV_REQ;
	}
	ret = 0;
	if (grh) {
		make_grh(msg->av, msg->length, hdr);
		ret = stag_sgl_write(sgl, 0, hdr, grh);
	}
	if (!ret)
		ret = stag_sgl_copy(sgl, grh, msg->local, skip, msg->length - skip);
	stag_sgl_release(sgl);
	if (ret) {
		stag_resp_recv_error(dst, IB_WC_LOC_PROT_ERR);
		return STAG_RESP_NAK_OP;
	}
	return STAG_RESP_ACK;
}

/* The tag matching SRQ an RC QP's messages go through, or NULL. */
static struct stag_srq *tm_srq(const struct stag_qp *qp)
{
	if (qp->ibqp.qp_type != IB_QPT_RC || !qp->srq || !qp->srq->tm)
		return NULL;
	return qp->srq;
}

/* Whether @qp's sends go through a tag list: an RC QP on a tag matching SRQ. */
bool stag_resp_is_tm(const struct stag_qp *qp)
{
	return tm_srq(qp);
}

/**
 * stag_resp_get_recv_tm() - take the buffer of a message to a tag matching SRQ
 * @qp: an RC QP on one (stag_resp_is_tm()), its resp_mutex held
 * @tmh: the message's header, copied, or NULL when it is too short for one
 * @r: what became of the message
 *
 * A rendezvous that matched has its first completion here: the match.
 *
 * Return: as stag_resp_get_recv().
 */
enum stag_resp_result stag_resp_get_recv_tm(struct stag_qp *qp, const struct stag_tmh *tmh,
					    struct stag_tm_recv *r)
{
	enum stag_resp_result res;

	res = recv_taken(qp, stag_srq_take_tm(tm_srq(qp), tmh, qp->rq.wqe, r));
	if (res == STAG_RESP_ACK && r->matched && r->op == STAG_TMH_RNDV) {
		struct stag_cq_tm tm = {
			.tag = r->tag,
			.priv = r->app_ctx,
			.flags = STAG_WC_TM_MATCH,
		};
		struct ib_wc wc = {
			.opcode = (enum ib_wc_opcode)STAG_WC_TM_RECV,
			.src_qp = READ_ONCE(qp->attr.dest_qp_num),
		};

		complete_recv(qp, &wc, &tm, false);
	}
	return res;
}

/**
 * stag_resp_complete_tm() - complete a message to a tag matching SRQ
 * @qp: the QP, its resp_mutex held
 * @wc: the completion, as a plain receive's would be; its opcode, and a
 *	rendezvous's status, are set here
 * @r: what became of the message
 * @solicited: the message was solicited
 *
 * One that matched completes with MATCH and DATA_VALID, its tag and
 * app_ctx, its data after its TMH; a rendezvous that matched but was not
 * read as IBV_WC_TM_RNDV_INCOMPLETE, with what follows its TMH (the RVH
 * first) in the buffer for software to act on; an unexpected one as
 * TM_RECV without flags, whole in a plain receive; one without a tag as
 * TM_NO_TAG.
 */
void stag_resp_complete_tm(struct stag_qp *qp, struct ib_wc *wc, const struct stag_tm_recv *r,
			   bool solicited)
{
	struct stag_cq_tm tm = {};

	wc->opcode = (enum ib_wc_opcode)STAG_WC_TM_RECV;
	if (r->matched) {
		tm.tag = r->tag;
		tm.priv = r->app_ctx;
		if (r->op == STAG_TMH_RNDV)
			wc->status = (enum ib_wc_status)STAG_WC_TM_RNDV_INCOMPLETE;
		else
			tm.flags = STAG_WC_TM_MATCH | STAG_WC_TM_DATA_VALID;
	} else if (!stag_tm_is_tagged(r)) {
		wc->opcode = (enum ib_wc_opcode)STAG_WC_TM_NO_TAG;
	}
	complete_recv(qp, wc, &tm, solicited);
}

/*
 * The header of a message to a tag matching SRQ, read once from the
 * sender's checked buffers. A SEND with Invalidate is never matched: it
 * lands whole, its invalidation done as for any receive.
 */
static enum stag_resp_result get_recv_tm(struct stag_qp *dst, struct stag_msg *msg,
					 struct stag_tm_recv *r)
{
	bool has_tmh = msg->length >= sizeof(struct stag_tmh) &&
		       msg->wqe->hdr.opcode != IB_WR_SEND_WITH_INV;
	struct stag_tmh tmh;

	if (has_tmh && stag_sgl_read(msg->local, 0, &tmh, sizeof(tmh)))
		return STAG_RESP_NAK_OP;
	return stag_resp_get_recv_tm(dst, has_tmh ? &tmh : NULL, r);
}

/*
 * Reads a rendezvous's data, which @rvh names in the sender's memory,
 * into the tagged buffer in rq.wqe: a remote read of the sender's region
 * by the matching QP, through the gate against the sender's table, PD and
 * QP rights, as an RDMA READ from it would be.
 */
static enum ib_wc_status rndv_read(struct stag_qp *dst, const struct stag_msg *msg,
				   const struct stag_rvh *rvh, u32 len)
{
	struct stag_dev *sdev = to_stag_dev(dst->ibqp.device);
	struct stag_gate_who who = stag_qp_who(dst);
	struct stag_gate_who src_who = stag_qp_who(msg->src);
	struct stag_rwqe *rwqe = dst->rq.wqe;
	int ret;

	if (stag_sgl_build(dst->rq.sgl, &sdev->tpt, &who, rwqe->sge, rwqe->num_sge,
			   IB_ACCESS_LOCAL_WRITE))
		return IB_WC_LOC_PROT_ERR;
	if (!(READ_ONCE(msg->src->attr.qp_access_flags) & IB_ACCESS_REMOTE_READ) ||
	    stag_sgl_build_one(dst->rq.remote, &to_stag_dev(msg->src->ibqp.device)->tpt, &src_who,
			       be32_to_cpu(rvh->rkey), be64_to_cpu(rvh->va), len,
			       IB_ACCESS_REMOTE_READ)) {
		stag_sgl_release(dst->rq.sgl);
		return IB_WC_REM_ACCESS_ERR;
	}
	ret = stag_sgl_copy(dst->rq.sgl, 0, dst->rq.remote, 0, len);
	stag_sgl_release(dst->rq.remote);
	stag_sgl_release(dst->rq.sgl);
	return ret ? IB_WC_REM_ACCESS_ERR : IB_WC_SUCCESS;
}

/*
 * A rendezvous that matched, on loopback: the data it names is read into
 * the tagged buffer, and a second completion says it is there (tag 0, as
 * mlx5's); a read refused is the QP's error. Once the data is in, the
 * sender is owed a FIN (msg->fin), which its transport delivers after the
 * send's completion. False, with nothing done, for a request the buffer
 * cannot take (no RVH, or more data than the buffer holds): the caller
 * leaves it to software (stag_resp_complete_tm()).
 */
static bool do_rndv(struct stag_qp *dst, struct stag_msg *msg, const struct stag_tm_recv *r)
{
	struct stag_cq_tm tm = {};
	struct ib_wc wc = {
		.opcode = (enum ib_wc_opcode)STAG_WC_TM_RECV,
		.src_qp = msg->src_qpn,
	};
	struct stag_rvh rvh;
	u32 len;

	if (msg->length < sizeof(struct stag_tmh) + sizeof(rvh) ||
	    stag_sgl_read(msg->local, sizeof(struct stag_tmh), &rvh, sizeof(rvh)))
		return false;
	len = be32_to_cpu(rvh.len);
	if (len > dst->rq.wqe->length)
		return false;
	wc.status = rndv_read(dst, msg, &rvh, len);
	if (wc.status == IB_WC_SUCCESS) {
		wc.byte_len = len;
		tm.flags = STAG_WC_TM_DATA_VALID;
		msg->fin_owed = true;
		msg->fin = (struct stag_tmh) {
			.opcode = STAG_TMH_FIN,
			.app_ctx = cpu_to_be32(r->app_ctx),
			.tag = cpu_to_be64(r->tag),
		};
	}
	complete_recv(dst, &wc, &tm, false);
	return true;
}

/*
 * A send: into the next receive, or for an RC QP on a tag matching SRQ
 * into the tagged buffer its header matches (after that header), else
 * whole into a plain receive of the SRQ.
 */
static enum stag_resp_result do_send(struct stag_qp *dst, struct stag_msg *msg)
{
	const struct stag_send_wqe *hdr = &msg->wqe->hdr;
	u32 grh = is_ud(dst) ? GRH_SIZE : 0;
	bool tm = stag_resp_is_tm(dst);
	struct stag_tm_recv r = {};
	enum stag_resp_result res;
	u64 skip = 0;
	struct ib_wc wc = {
		.opcode = IB_WC_RECV,
		.src_qp = msg->src_qpn,
	};

	res = tm ? get_recv_tm(dst, msg, &r) : stag_resp_get_recv(dst);
	if (res != STAG_RESP_ACK)
		return res;
	if (r.matched) {
		if (r.op == STAG_TMH_RNDV && do_rndv(dst, msg, &r))
			return STAG_RESP_ACK;
		skip = sizeof(struct stag_tmh);
	}
	res = place_send(dst, msg, grh, skip);
	if (res != STAG_RESP_ACK)
		return res;
	wc.byte_len = grh + msg->length - skip;

	if (hdr->opcode == IB_WR_SEND_WITH_IMM) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = (__force __be32)hdr->ex;
	} else if (hdr->opcode == IB_WR_SEND_WITH_INV) {
		/*
		 * The data is placed: the sender's buffers are let go first,
		 * so that the invalidation's wait for accesses to drain can
		 * never wait on this thread.
		 */
		stag_sgl_release(msg->local);
		if (stag_tpt_invalidate_key(&to_stag_dev(dst->ibqp.device)->tpt, hdr->ex,
					    stag_qp_who(dst).pd, dst->ibqp.qp_num, true)) {
			stag_resp_recv_error(dst, IB_WC_LOC_PROT_ERR);
			return STAG_RESP_NAK_OP;
		}
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = hdr->ex;
	}
	if (grh)
		fill_ud_wc(msg, &wc);
	if (tm)
		stag_resp_complete_tm(dst, &wc, &r, hdr->send_flags & IB_SEND_SOLICITED);
	else
		stag_resp_complete_recv(dst, &wc, hdr->send_flags & IB_SEND_SOLICITED);
	return STAG_RESP_ACK;
}

/**
 * stag_resp_get_remote() - the target of an RDMA or atomic operation, in
 * rq.remote, through the gate
 * @dst: the QP the request arrived at, its resp_mutex held
 * @rkey: the R_Key
 * @addr: the first byte
 * @len: the number of bytes
 * @access: IB_ACCESS_REMOTE_READ, _WRITE or _ATOMIC
 *
 * Return: STAG_RESP_ACK with rq.remote built; STAG_RESP_NAK_ACCESS when
 * the QP does not allow the operation or the gate refuses.
 */
enum stag_resp_result stag_resp_get_remote(struct stag_qp *dst, u32 rkey, u64 addr, u64 len,
					   int access)
{
	struct stag_dev *sdev = to_stag_dev(dst->ibqp.device);
	struct stag_gate_who who = stag_qp_who(dst);

	if (!(READ_ONCE(dst->attr.qp_access_flags) & access))
		return STAG_RESP_NAK_ACCESS;
	if (stag_sgl_build_one(dst->rq.remote, &sdev->tpt, &who, rkey, addr, len, access))
		return STAG_RESP_NAK_ACCESS;
	return STAG_RESP_ACK;
}

static enum stag_resp_result do_write(struct stag_qp *dst, struct stag_msg *msg)
{
	const struct stag_send_wqe *hdr = &msg->wqe->hdr;
	enum stag_resp_result res;
	struct ib_wc wc = {
		.opcode = IB_WC_RECV_RDMA_WITH_IMM,
		.src_qp = msg->src_qpn,
		.byte_len = msg->length,
		.wc_flags = IB_WC_WITH_IMM,
		.ex.imm_data = (__force __be32)hdr->ex,
	};
	int ret;

	res = stag_resp_get_remote(dst, hdr->wr.rdma.rkey, hdr->wr.rdma.remote_addr,
				   msg->length, IB_ACCESS_REMOTE_WRITE);
	if (res != STAG_RESP_ACK)
		return res;
	if (hdr->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		res = stag_resp_get_recv(dst);
		if (res != STAG_RESP_ACK) {
			stag_sgl_release(dst->rq.remote);
			return res;
		}
	}
	ret = stag_sgl_copy(dst->rq.remote, 0, msg->local, 0, msg->length);
	stag_sgl_release(dst->rq.remote);
	if (ret) {
		if (hdr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
			stag_resp_recv_error(dst, IB_WC_REM_ACCESS_ERR);
		return STAG_RESP_NAK_ACCESS;
	}
	if (hdr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		stag_resp_complete_recv(dst, &wc, hdr->send_flags & IB_SEND_SOLICITED);
	return STAG_RESP_ACK;
}

static enum stag_resp_result do_read(struct stag_qp *dst, struct stag_msg *msg)
{
	const struct stag_send_wqe *hdr = &msg->wqe->hdr;
	enum stag_resp_result res;
	int ret;

	res = stag_resp_get_remote(dst, hdr->wr.rdma.rkey, hdr->wr.rdma.remote_addr,
				   msg->length, IB_ACCESS_REMOTE_READ);
	if (res != STAG_RESP_ACK)
		return res;
	ret = stag_sgl_copy(msg->local, 0, dst->rq.remote, 0, msg->length);
	stag_sgl_release(dst->rq.remote);
	return ret ? STAG_RESP_NAK_ACCESS : STAG_RESP_ACK;
}

/**
 * stag_resp_atomic() - an atomic or an atomic write, through the gate
 * @dst: the QP the request arrived at, its resp_mutex held
 * @rkey: the R_Key
 * @addr: the target's first byte
 * @access: IB_ACCESS_REMOTE_ATOMIC, or _WRITE for an atomic write
 * @opcode: as stag_sgl_atomic() takes it
 * @compare_add: as stag_sgl_atomic() takes it
 * @swap: as stag_sgl_atomic() takes it
 * @orig: set to the value before the operation
 *
 * Return: STAG_RESP_ACK; STAG_RESP_NAK_INV_REQ for a target not naturally
 * aligned (IBA 9.4.5) or bytes that cannot be written whole (oA19-28);
 * STAG_RESP_NAK_ACCESS when the QP or the gate refuses.
 */
enum stag_resp_result stag_resp_atomic(struct stag_qp *dst, u32 rkey, u64 addr, int access,
				       u8 opcode, u64 compare_add, u64 swap, u64 *orig)
{
	enum stag_resp_result res;
	int ret;

	if (addr & (sizeof(u64) - 1))
		return STAG_RESP_NAK_INV_REQ;
	res = stag_resp_get_remote(dst, rkey, addr, sizeof(u64), access);
	if (res != STAG_RESP_ACK)
		return res;
	ret = stag_sgl_atomic(dst->rq.remote, opcode, compare_add, swap, orig);
	stag_sgl_release(dst->rq.remote);
	if (!ret)
		return STAG_RESP_ACK;
	return ret == -EINVAL ? STAG_RESP_NAK_INV_REQ : STAG_RESP_NAK_ACCESS;
}

static enum stag_resp_result do_atomic(struct stag_qp *dst, struct stag_msg *msg)
{
	const struct stag_send_wqe *hdr = &msg->wqe->hdr;
	enum stag_resp_result res;
	u64 orig;

	res = stag_resp_atomic(dst, hdr->wr.atomic.rkey, hdr->wr.atomic.remote_addr,
			       IB_ACCESS_REMOTE_ATOMIC, hdr->opcode, hdr->wr.atomic.compare_add,
			       hdr->wr.atomic.swap, &orig);
	if (res != STAG_RESP_ACK)
		return res;
	/* The original value goes back into the requester's checked buffer. */
	if (stag_sgl_write(msg->local, 0, &orig, sizeof(orig)))
		return STAG_RESP_NAK_OP;
	return STAG_RESP_ACK;
}

/*
 * An atomic write: the 8 bytes of its header, with the remote write right
 * (as rdma_rxe and the verbs tests check it), executed once. Its answer
 * carries nothing back.
 */
static enum stag_resp_result do_atomic_write(struct stag_qp *dst, struct stag_msg *msg)
{
	const struct stag_send_wqe *hdr = &msg->wqe->hdr;
	u64 orig;

	return stag_resp_atomic(dst, hdr->wr.atomic.rkey, hdr->wr.atomic.remote_addr,
				IB_ACCESS_REMOTE_WRITE, IB_WR_ATOMIC_WRITE, 0, hdr->wr.atomic.swap,
				&orig);
}

/**
 * stag_resp_do_flush() - execute a FLUSH, for loopback and the wire alike
 * @dst: the QP the request arrived at, its resp_mutex held
 * @rkey: the R_Key
 * @addr: the first byte of the range
 * @len: its length
 * @type: the placement type (IB_FLUSH_GLOBAL, IB_FLUSH_PERSISTENT)
 * @level: the selectivity (IB_FLUSH_RANGE, IB_FLUSH_MR)
 *
 * The QP must have been given the flush rights of every type asked for;
 * as rdma_rxe, a QP without them takes no FLUSH at all: an invalid
 * request. The key then needs them too, from the gate.
 *
 * Return: STAG_RESP_ACK; STAG_RESP_NAK_INV_REQ for an unknown type or
 * selectivity or a QP without the rights; STAG_RESP_NAK_ACCESS when the
 * gate refuses.
 */
enum stag_resp_result stag_resp_do_flush(struct stag_qp *dst, u32 rkey, u64 addr, u64 len,
					 u8 type, u8 level)
{
	struct stag_dev *sdev = to_stag_dev(dst->ibqp.device);
	struct stag_gate_who who = stag_qp_who(dst);
	int need = 0;

	lockdep_assert_held(&dst->resp_mutex);
	if (!stag_wqe_flush_valid(type, level))
		return STAG_RESP_NAK_INV_REQ;
	if (type & IB_FLUSH_GLOBAL)
		need |= IB_ACCESS_FLUSH_GLOBAL;
	if (type & IB_FLUSH_PERSISTENT)
		need |= IB_ACCESS_FLUSH_PERSISTENT;
	if ((READ_ONCE(dst->attr.qp_access_flags) & need) != need)
		return STAG_RESP_NAK_INV_REQ;
	if (stag_sgl_flush(dst->rq.remote, &sdev->tpt, &who, rkey, addr, len, need,
			   level == IB_FLUSH_MR))
		return STAG_RESP_NAK_ACCESS;
	return STAG_RESP_ACK;
}

/*
 * An RC or UC QP hears only its connected peer: the QP its dest_qp_num
 * names, at its destination GID, sending to its own source GID. On
 * loopback the sending QP is known, so the check is exact.
 */
static bool from_peer(const struct stag_qp *dst, const struct stag_msg *msg)
{
	const struct stag_qp *src = msg->src;

	return src->ibqp.qp_num == READ_ONCE(dst->attr.dest_qp_num) &&
	       !memcmp(src->sgid.raw, dst->dgid.raw, sizeof(dst->dgid.raw)) &&
	       !memcmp(src->dgid.raw, dst->sgid.raw, sizeof(dst->sgid.raw));
}

/* Why a message is dropped, as the counter it goes to; STAG_CNT_NUM: it is not. */
static enum stag_counter drop_reason(const struct stag_qp *dst, const struct stag_msg *msg)
{
	enum ib_qp_state state = stag_qp_state(dst);

	if (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD &&
	    state != IB_QPS_SQE)
		return STAG_CNT_DROP_QP_STATE;
	if (!types_match(msg->src, dst))
		return STAG_CNT_DROP_QP_STATE;
	/* A UD message with the wrong qkey is dropped (IBA 10.2.5). */
	if (is_ud(dst))
		return msg->qkey == READ_ONCE(dst->attr.qkey) ? STAG_CNT_NUM : STAG_CNT_DROP_QKEY;
	return from_peer(dst, msg) ? STAG_CNT_NUM : STAG_CNT_DROP_NOT_PEER;
}

/**
 * stag_resp_deliver() - execute a message at its destination
 * @dst: the destination QP, referenced, its resp_mutex held
 * @msg: the message
 *
 * A message the QP does not take (its state, its transport, a UD qkey, or
 * for RC and UC a sender that is not its connected peer) is dropped and
 * counted, and leaves the QP untouched. An RC responder that NAKs a
 * request for a bad key, a right it lacks or an invalid request moves to
 * the error state (IBA class C errors).
 *
 * Return: the answer the requester gets.
 */
enum stag_resp_result stag_resp_deliver(struct stag_qp *dst, struct stag_msg *msg)
{
	enum stag_counter drop = drop_reason(dst, msg);
	u8 op = msg->wqe->hdr.opcode;
	enum stag_resp_result res;

	lockdep_assert_held(&dst->resp_mutex);
	if (drop != STAG_CNT_NUM) {
		stag_count_drop(to_stag_dev(dst->ibqp.device), drop, dst->ibqp.qp_num);
		return STAG_RESP_DROP;
	}

	if (dst->ibqp.qp_type == IB_QPT_XRC_TGT) {
		res = stag_resp_xrc_begin(dst, msg->xrc_srqn);
		if (res != STAG_RESP_ACK)
			goto out;
	}
	if (stag_wqe_is_send(op))
		res = do_send(dst, msg);
	else if (stag_wqe_is_write(op))
		res = do_write(dst, msg);
	else if (op == IB_WR_RDMA_READ)
		res = do_read(dst, msg);
	else if (stag_wqe_is_atomic(op))
		res = do_atomic(dst, msg);
	else if (stag_wqe_is_atomic_write(op))
		res = do_atomic_write(dst, msg);
	else if (stag_wqe_is_flush(op))
		res = stag_resp_do_flush(dst, msg->wqe->hdr.wr.flush.rkey,
					 msg->wqe->hdr.wr.flush.remote_addr,
					 msg->wqe->hdr.wr.flush.length, msg->wqe->hdr.wr.flush.type,
					 msg->wqe->hdr.wr.flush.level);
	else
		res = STAG_RESP_NAK_INV_REQ;
	stag_resp_xrc_end(dst);

out:
	if (stag_qp_reliable(dst) &&
	    (res == STAG_RESP_NAK_ACCESS || res == STAG_RESP_NAK_INV_REQ))
		stag_qp_error(dst);
	return res;
}

/**
 * stag_resp_flush() - complete every posted receive with WR_FLUSH_ERR
 * @qp: a QP in the error state
 *
 * A shared receive queue, XRC ones included, is not the QP's to flush.
 */
void stag_resp_flush(struct stag_qp *qp)
{
	struct ib_wc wc = { .status = IB_WC_WR_FLUSH_ERR, .opcode = IB_WC_RECV };
	int ret;

	if (qp->srq || stag_qp_is_xrc(qp))
		return;
	mutex_lock(&qp->resp_mutex);
	while ((ret = take_recv(qp)) != -ENOENT && ret != -EIO)
		stag_resp_complete_recv(qp, &wc, false);
	mutex_unlock(&qp->resp_mutex);
}
