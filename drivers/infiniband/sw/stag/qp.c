// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs: creation, the verbs state machine, lookup by number, and
 * teardown. The data path is in req.c (send queue) and resp.c (incoming
 * messages).
 *
 * Locking: attr_lock guards the attributes; sq.mutex serialises the
 * requester, resp_mutex the responder, always in that order. Each QP has
 * one work item that runs its requester and flushes its queues in the
 * error state; it and the retry timer hold a QP reference while queued or
 * armed.
 */

#include <linux/log2.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/stag-abi.h>
#include <kunit/visibility.h>

#include "ah.h"
#include "cq.h"
#include "dev.h"
#include "qp.h"
#include "raweth.h"
#include "rss.h"
#include "req.h"
#include "resp.h"
#include "roce.h"
#include "roce_resp.h"
#include "srq.h"
#include "trace.h"
#include "xport.h"

static struct workqueue_struct *stag_workqueue;
static struct workqueue_struct *stag_wire_workqueue;

/*
 * A QP on the wire has its work run at high priority (nice -20): there the
 * worker is the connection's clock, taking ACKs, sending what they let go
 * and answering the peer's packets, and the process it works for most
 * often busy-polls a CQ on the same CPU. At normal priority a woken worker
 * waited out the poller's time slice for each of those. Two guests of one
 * vCPU, stag to stag, medians of seven rounds each way: ib_send_bw 7.5 ->
 * 10.7 MiB/s, ib_write_bw 14.1 -> 16.0, ib_read_bw 15.2 -> 16.2,
 * ib_write_lat 743 -> 620 us. A loopback QP's work is the copy itself, and
 * a worker that preempts the process beside it costs more than it gains:
 * in one guest of two vCPUs, loopback at high priority did 8-byte WRITEs
 * at 0.175 Mpps against 0.29 and NVMe-oF at queue depth 32 at 6.7 kIOPS
 * against 7.9 (medians of four). Each run is bounded by the queues'
 * budgets, so a busy QP still lets the CPU go between runs.
 *
 * A QP goes on the wire once, at RTR, and never back, so it moves from
 * one queue to the other at most once. A work item still running on the
 * first queue may then run beside its next instance on the second: every
 * part of qp_work() takes the mutex of what it runs, and each queued
 * instance holds its reference on the QP, so that is safe.
 */
int stag_qp_wq_init(void)
{
	stag_workqueue = alloc_workqueue("stag", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!stag_workqueue)
		return -ENOMEM;
	stag_wire_workqueue = alloc_workqueue("stag_wire", WQ_UNBOUND | WQ_HIGHPRI |
					      WQ_MEM_RECLAIM, 0);
	if (!stag_wire_workqueue) {
		destroy_workqueue(stag_workqueue);
		return -ENOMEM;
	}
	return 0;
}

void stag_qp_wq_uninit(void)
{
	destroy_workqueue(stag_wire_workqueue);
	destroy_workqueue(stag_workqueue);
}

/**
 * stag_qp_get_by_qpn() - find a QP of a device by number
 * @sdev: the device
 * @qpn: the QP number
 *
 * Return: the QP with a reference the caller drops with stag_qp_put(), or
 * NULL. A QP being destroyed is not found.
 */
struct stag_qp *stag_qp_get_by_qpn(struct stag_dev *sdev, u32 qpn)
{
	struct stag_qp *qp;

	xa_lock_bh(&sdev->qps);
	qp = xa_load(&sdev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_bh(&sdev->qps);
	return qp;
}

/* Queue the QP's work: run the requester, flush in the error state. */
void stag_qp_kick(struct stag_qp *qp)
{
	/* Only which queue: nothing read here is published by the flag. */
	struct workqueue_struct *wq = READ_ONCE(qp->roce.wire) ? stag_wire_workqueue :
								 stag_workqueue;

	stag_qp_get(qp);
	if (!queue_work(wq, &qp->work))
		stag_qp_put(qp);
}

static void qp_work(struct work_struct *work)
{
	struct stag_qp *qp = container_of(work, struct stag_qp, work);

	if (qp->ibqp.qp_type == IB_QPT_RAW_PACKET)
		stag_raweth_recv_run(qp);
	else
		stag_roce_resp_run(qp);
	stag_req_run(qp);
	if (stag_qp_state(qp) == IB_QPS_ERR)
		stag_resp_flush(qp);
	stag_qp_put(qp);
}

static bool set_error(struct stag_qp *qp)
{
	enum ib_qp_state old;
	unsigned long flags;
	bool changed;

	spin_lock_irqsave(&qp->attr_lock, flags);
	old = qp->attr.qp_state;
	changed = old != IB_QPS_ERR && old != IB_QPS_RESET;
	if (changed) {
		WRITE_ONCE(qp->attr.qp_state, IB_QPS_ERR);
		/* Under the lock, so that the trace orders transitions as they happened. */
		trace_stag_qp_state(&qp->ibqp, old, IB_QPS_ERR);
	}
	spin_unlock_irqrestore(&qp->attr_lock, flags);
	return changed;
}

static void enter_error(struct stag_qp *qp)
{
	/* From now on the provider rings for every receive it posts. */
	if (!qp->srq)
		stag_queue_set_flags(&qp->rq.queue, STAG_QUEUE_FLUSH);
	/*
	 * Pairs with the provider's fence between publishing prod and
	 * reading the flag: either it sees the flag and rings, or the flush
	 * sees its receive.
	 */
	smp_mb();
	stag_qp_kick(qp);
}

/**
 * stag_qp_error() - move a QP to the error state from the data path
 * @qp: the QP
 *
 * Everything outstanding is flushed by the QP's work.
 *
 * Context: any.
 */
void stag_qp_error(struct stag_qp *qp)
{
	if (set_error(qp))
		enter_error(qp);
}

void stag_qp_event(struct stag_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/**
 * stag_qp_fatal() - a QP's queue is corrupted: error state and an event
 * @qp: the QP
 */
void stag_qp_fatal(struct stag_qp *qp)
{
	stag_dbg_qp(qp, "corrupted queue\n");
	if (set_error(qp)) {
		enter_error(qp);
		stag_qp_event(qp, IB_EVENT_QP_FATAL);
	}
}

static int check_init_attr(const struct ib_qp_init_attr *init, bool user)
{
	const struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (user)
			return -EINVAL;
		break;
	case IB_QPT_RAW_PACKET:
		/* The core lets only CAP_NET_RAW create one; no kernel consumer does. */
		if (!user)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_INI:
		/* No kernel consumer uses XRC, and ib_post_send has no SRQ number. */
		if (!user)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_TGT:
		/*
		 * The core makes every TGT QP a kernel QP (ib_create_qp_user()):
		 * it outlives the process that created it, as long as another
		 * has it open. It has no ring to share.
		 */
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	/*
	 * An RSS QP (rss.c) is a Raw Packet QP that only receives, into its
	 * indirection table's WQs: the core has refused receive sizes and
	 * an SRQ for it already, and it has no CQ.
	 */
	if (init->rwq_ind_tbl)
		return init->qp_type == IB_QPT_RAW_PACKET && !init->cap.max_send_wr ? 0 :
										-EOPNOTSUPP;
	/*
	 * An XRC INI QP only sends: it has no receive CQ. An XRC TGT QP only
	 * receives, into the SRQ each message names: the ioctl path may give
	 * it an XRC SRQ (refused) and CQs (ignored, stag_qp_create()), which
	 * the core holds for the creator's handle only.
	 */
	if (init->qp_type == IB_QPT_XRC_TGT)
		return init->xrcd && !init->srq ? 0 : -EINVAL;
	if (!init->send_cq || (!init->recv_cq && init->qp_type != IB_QPT_XRC_INI))
		return -EINVAL;
	if (cap->max_send_wr > STAG_MAX_QP_WR || cap->max_send_sge > STAG_MAX_SGE ||
	    cap->max_inline_data > STAG_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > STAG_MAX_QP_WR || cap->max_recv_sge > STAG_MAX_SGE))
		return -EINVAL;
	return 0;
}

/*
 * The requester's window: RC keeps many sends in flight on the wire; UC
 * and UD sends are through once they are sent, one at a time.
 */
#define STAG_SQ_WINDOW	64

static int alloc_scratch(struct stag_qp *qp, u32 sq_slots)
{
	u32 n = stag_qp_reliable(qp) ? min(sq_slots, STAG_SQ_WINDOW) : 1;

	qp->sq.sends = kvcalloc(n, sizeof(*qp->sq.sends), GFP_KERNEL_ACCOUNT);
	qp->sq.nsends = n;
	qp->sq.local = kmalloc(sizeof(*qp->sq.local), GFP_KERNEL);
	qp->rq.wqe = kmalloc(sizeof(*qp->rq.wqe), GFP_KERNEL);
	qp->rq.sgl = kmalloc(sizeof(*qp->rq.sgl), GFP_KERNEL);
	qp->rq.remote = kmalloc(sizeof(*qp->rq.remote), GFP_KERNEL);
	if (qp->sq.sends && qp->sq.local && qp->rq.wqe && qp->rq.sgl && qp->rq.remote)
		return 0;
	return -ENOMEM;
}

static void free_scratch(struct stag_qp *qp)
{
	kfree(qp->rq.remote);
	kfree(qp->rq.sgl);
	kfree(qp->rq.wqe);
	kfree(qp->sq.local);
	kvfree(qp->sq.sends);
}

/*
 * Sizes the rings and reports what the QP got in @cap. An XRC QP gets a
 * ring of one slot for each queue it lacks, never shared with its user
 * and never written: the requester and the responder's flush find it
 * empty, and need no case of their own.
 */
static int init_queues(struct stag_qp *qp, struct ib_qp_init_attr *init,
		       const struct stag_create_qp_cmd *cmd)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 slots, size;
	int ret;

	/* Memory for a ring the QP has none of, or keeps from its user. */
	if ((cmd->sq.addr && init->qp_type == IB_QPT_XRC_TGT) ||
	    (cmd->rq.addr && (init->srq || init->qp_type == IB_QPT_XRC_INI ||
			      init->qp_type == IB_QPT_XRC_TGT)))
		return -EINVAL;
	slots = stag_ring_slots(cap->max_send_wr);
	size = stag_wqe_send_slot_size(max(cap->max_send_sge, 1U), cap->max_inline_data);
	ret = stag_queue_init_mem(&qp->sq.queue, slots, size, &cmd->sq);
	if (ret)
		return ret;
	qp->sq.max_wr = slots;
	qp->sq.limits.max_sge = min_t(u32, STAG_MAX_SGE,
				      (size - STAG_SEND_WQE_HDR_SIZE) / sizeof(struct stag_sge));
	qp->sq.limits.max_inline = min_t(u32, size - STAG_SEND_WQE_HDR_SIZE, STAG_MAX_INLINE);
	cap->max_send_wr = slots;
	cap->max_send_sge = qp->sq.limits.max_sge;
	cap->max_inline_data = qp->sq.limits.max_inline;
	if (init->srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return 0;
	}

	slots = stag_ring_slots(cap->max_recv_wr);
	qp->rq.max_sge = max(cap->max_recv_sge, 1U);
	ret = stag_queue_init_mem(&qp->rq.queue, slots, stag_wqe_recv_slot_size(qp->rq.max_sge),
				  &cmd->rq);
	if (ret) {
		stag_queue_uninit(&qp->sq.queue);
		return ret;
	}
	qp->rq.max_wr = slots;
	cap->max_recv_wr = slots;
	cap->max_recv_sge = qp->rq.max_sge;
	if (init->qp_type == IB_QPT_XRC_TGT) {
		cap->max_send_wr = 0;
		cap->max_send_sge = 0;
		cap->max_inline_data = 0;
	}
	if (init->qp_type == IB_QPT_XRC_INI || init->qp_type == IB_QPT_XRC_TGT) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	return 0;
}

static void uninit_queues(struct stag_qp *qp)
{
	if (!qp->srq)
		stag_queue_uninit(&qp->rq.queue);
	stag_queue_uninit(&qp->sq.queue);
}

static int share_queues(struct stag_qp *qp, struct ib_udata *udata)
{
	struct stag_create_qp_resp resp = {};
	int ret;

	/* An RSS QP has no ring its process writes. */
	if (qp->rss)
		return 0;
	ret = stag_queue_share(&qp->sq.queue, udata, &resp.sq_offset);
	if (ret)
		return ret;
	if (!qp->srq && !stag_qp_is_xrc(qp)) {
		ret = stag_queue_share(&qp->rq.queue, udata, &resp.rq_offset);
		if (ret)
			return ret;
		resp.rq_slots = qp->rq.queue.num_slots;
		resp.rq_slot_size = qp->rq.queue.slot_size;
	}
	resp.sq_slots = qp->sq.queue.num_slots;
	resp.sq_slot_size = qp->sq.queue.slot_size;
	resp.max_inline = qp->sq.limits.max_inline;
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

static int insert_qp(struct stag_dev *sdev, struct stag_qp *qp)
{
	u32 qpn;
	int ret;

	if (qp->ibqp.qp_type == IB_QPT_GSI) {
		ret = xa_insert_bh(&sdev->qps, 1, qp, GFP_KERNEL);
		qpn = 1;
	} else {
		ret = xa_alloc_cyclic_bh(&sdev->qps, &qpn, qp,
					 XA_LIMIT(STAG_QPN_MIN, STAG_QPN_MAX), &sdev->qp_next,
					 GFP_KERNEL);
		if (ret > 0)
			ret = 0;
	}
	if (ret)
		return ret == -EBUSY && qp->ibqp.qp_type != IB_QPT_GSI ? -ENOMEM : ret;
	qp->ibqp.qp_num = qpn;
	return 0;
}

static void init_attr(struct stag_qp *qp, const struct ib_qp_init_attr *init)
{
	struct ib_qp_attr *attr = &qp->attr;

	attr->qp_state = IB_QPS_RESET;
	attr->cur_qp_state = IB_QPS_RESET;
	attr->path_mtu = IB_MTU_1024;
	attr->port_num = STAG_PORT_NUM;
	attr->cap = init->cap;
	if (init->qp_type == IB_QPT_GSI)
		attr->qkey = IB_QP1_QKEY;
}

/**
 * stag_qp_create() - the create_qp verb
 * @ibqp: the QP the core allocated
 * @init: its attributes; cap is updated to what the QP got
 * @udata: the user's command, or NULL
 *
 * Return: 0; -EOPNOTSUPP for QP types and flags stag lacks, for XRC
 * INI QPs of the kernel, and for an indirection table on a QP other than
 * a receive-only Raw Packet QP; -EINVAL for sizes out of range, a missing
 * CQ or XRC domain, a GSI QP from userspace, a hash configuration in the
 * command of a QP without a table (a QP with one: stag_rss_create()),
 * ring memory for a ring the QP does not share, or when the device has
 * max_qp QPs already (QP1 counts); -EBUSY for a second GSI QP; -ENOMEM;
 * for the command and the ring memory it brings, what stag_queue_cmd()
 * and stag_queue_init_mem() return.
 */
int stag_qp_create(struct ib_qp *ibqp, struct ib_qp_init_attr *init, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibqp->device);
	struct stag_qp *qp = to_stag_qp(ibqp);
	struct stag_create_qp_cmd cmd;
	int ret;

	ret = check_init_attr(init, udata);
	if (ret)
		return ret;
	/* A TGT QP has no queues: what a consumer asked for sizes nothing. */
	if (init->qp_type == IB_QPT_XRC_TGT) {
		memset(&init->cap, 0, sizeof(init->cap));
		init->send_cq = NULL;
		init->recv_cq = NULL;
	}
	/*
	 * An RSS QP's command must have its hash; any other's may bring
	 * memory for its rings, and has no hash.
	 */
	ret = stag_queue_cmd(udata, &cmd,
			     init->rwq_ind_tbl ? offsetof(struct stag_create_qp_cmd, sq) : 0,
			     sizeof(cmd));
	if (ret)
		return ret;
	if (init->rwq_ind_tbl)
		memset(&init->cap, 0, sizeof(init->cap));
	else if (memchr_inv(&cmd, 0, offsetof(struct stag_create_qp_cmd, sq)))
		return -EINVAL;
	ret = stag_res_charge(&sdev->res, STAG_RES_QP);
	if (ret)
		return ret;
	if (init->rwq_ind_tbl) {
		qp->rss = stag_rss_create(init->rwq_ind_tbl, &cmd);
		if (IS_ERR(qp->rss)) {
			ret = PTR_ERR(qp->rss);
			qp->rss = NULL;
			goto err_uncharge;
		}
	}

	qp->user = udata;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	spin_lock_init(&qp->attr_lock);
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	mutex_init(&qp->sq.mutex);
	mutex_init(&qp->resp_mutex);
	INIT_WORK(&qp->work, qp_work);
	timer_setup(&qp->sq.timer, stag_req_timer, 0);
	qp->srq = init->srq ? to_stag_srq(init->srq) : NULL;
	qp->rcq = init->recv_cq ? to_stag_cq(init->recv_cq) : NULL;
	qp->scq = init->send_cq ? to_stag_cq(init->send_cq) : NULL;
	qp->xrcd = init->xrcd;
	qp->sq.sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->sq.limits.type = init->qp_type;
	qp->sq.limits.user = qp->user;
	qp->sq.xport = &stag_loopback_xport;

	ret = init_queues(qp, init, &cmd);
	if (ret)
		goto err_free_rss;
	ret = alloc_scratch(qp, qp->sq.max_wr);
	if (ret)
		goto err_free_scratch;
	ret = stag_roce_qp_init(qp);
	if (ret)
		goto err_roce_uninit;
	ret = stag_roce_resp_init(qp);
	if (ret)
		goto err_roce_uninit;
	init_attr(qp, init);
	if (udata) {
		ret = share_queues(qp, udata);
		if (ret)
			goto err_resp_uninit;
	}
	/* Last: from here the QP can be found. */
	ret = insert_qp(sdev, qp);
	if (ret)
		goto err_resp_uninit;
	stag_dbg_qp(qp, "type %d sq %u rq %u\n", init->qp_type, qp->sq.max_wr, qp->rq.max_wr);
	return 0;

err_resp_uninit:
	stag_roce_resp_uninit(qp);
err_roce_uninit:
	stag_roce_qp_uninit(qp);
err_free_scratch:
	free_scratch(qp);
	uninit_queues(qp);
err_free_rss:
	if (qp->rss)
		stag_rss_free(qp->rss);
err_uncharge:
	stag_res_uncharge(&sdev->res, STAG_RES_QP);
	return ret;
}

/**
 * stag_qp_check_attr() - check the attributes of a modify_qp
 * @qp: the QP
 * @attr: the attributes
 * @mask: which of them are given
 * @port_mtu: the port's active MTU
 *
 * The transition and the attribute mask were checked by
 * ib_modify_qp_is_ok(); this checks the values.
 *
 * Return: 0, -EINVAL for a value out of range, or -EOPNOTSUPP for an
 * alternate path or a rate limit.
 */
VISIBLE_IF_KUNIT int stag_qp_check_attr(const struct stag_qp *qp, const struct ib_qp_attr *attr,
					int mask, enum ib_mtu port_mtu)
{
	if (mask & (IB_QP_ALT_PATH | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	if (mask & IB_QP_PORT && attr->port_num != STAG_PORT_NUM)
		return -EINVAL;
	if (mask & IB_QP_PKEY_INDEX && attr->pkey_index >= STAG_PKEY_TBL_LEN)
		return -EINVAL;
	if (mask & IB_QP_PATH_MTU &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > port_mtu))
		return -EINVAL;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC && attr->max_rd_atomic > STAG_MAX_RD_ATOMIC)
		return -EINVAL;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC && attr->max_dest_rd_atomic > STAG_MAX_RD_ATOMIC)
		return -EINVAL;
	/*
	 * Region flags a consumer passes here as well (local write, window
	 * bind, on demand: rdma-core's ODP tests do) mean nothing for a QP
	 * and are taken as they are, as rxe and mlx5 take them.
	 */
	if (mask & IB_QP_ACCESS_FLAGS &&
	    attr->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
				      IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
				      IB_ACCESS_MW_BIND | IB_ACCESS_ON_DEMAND |
				      IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT))
		return -EINVAL;
	if (mask & IB_QP_TIMEOUT && attr->timeout > 31)
		return -EINVAL;
	if (mask & IB_QP_RETRY_CNT && attr->retry_cnt > 7)
		return -EINVAL;
	if (mask & IB_QP_RNR_RETRY && attr->rnr_retry > 7)
		return -EINVAL;
	if (mask & IB_QP_MIN_RNR_TIMER && attr->min_rnr_timer > 31)
		return -EINVAL;
	if (mask & IB_QP_DEST_QPN && attr->dest_qp_num > STAG_QPN_MAX)
		return -EINVAL;
	if (mask & IB_QP_AV && !(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_qp_check_attr);

/* Copies the given attributes; the caller holds attr_lock. */
static void apply_attr(struct stag_qp *qp, const struct ib_qp_attr *attr, int mask,
		       const struct stag_av *av)
{
	struct ib_qp_attr *cur = &qp->attr;

	lockdep_assert_held(&qp->attr_lock);
	if (mask & IB_QP_PKEY_INDEX)
		cur->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		cur->qkey = attr->qkey;
	if (mask & IB_QP_ACCESS_FLAGS)
		cur->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PORT)
		cur->port_num = attr->port_num;
	if (mask & IB_QP_AV) {
		cur->ah_attr = attr->ah_attr;
		/* The core holds the GID attribute for the QP; stag keeps values. */
		cur->ah_attr.grh.sgid_attr = NULL;
		qp->sgid = av->sgid;
		qp->dgid = av->dgid;
		qp->net_type = av->net_type;
	}
	if (mask & IB_QP_PATH_MTU)
		cur->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		cur->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		cur->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		cur->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		cur->rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_SQ_PSN)
		cur->sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		cur->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		cur->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		cur->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_DEST_QPN)
		cur->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_PATH_MIG_STATE)
		cur->path_mig_state = attr->path_mig_state;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		cur->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_STATE)
		WRITE_ONCE(cur->qp_state, attr->qp_state);
}

/*
 * RESET drops every posted WQE without a completion: the kernel's
 * consumer indices jump to the producers'.
 */
static void reset_queues(struct stag_qp *qp)
{
	u32 avail;

	mutex_lock(&qp->sq.mutex);
	mutex_lock(&qp->resp_mutex);
	stag_req_reset(qp);
	stag_roce_qp_disconnect(qp);
	skb_queue_purge(&qp->roce.rx_req);
	skb_queue_purge(&qp->roce.rx_resp);
	if (!qp->srq) {
		if (!stag_queue_avail(&qp->rq.queue, &avail))
			while (avail--)
				stag_queue_pop(&qp->rq.queue);
		stag_queue_set_flags(&qp->rq.queue, 0);
	}
	mutex_unlock(&qp->resp_mutex);
	mutex_unlock(&qp->sq.mutex);
}

/*
 * The requester's side of a transition: the transport once the path is
 * known, the send PSN, and the drain event of SQD.
 */
static void ready_queues(struct stag_qp *qp, enum ib_qp_state cur, enum ib_qp_state new,
			 int mask)
{
	struct stag_sq *sq = &qp->sq;

	mutex_lock(&sq->mutex);
	if (new == IB_QPS_RTR && cur != IB_QPS_RTR) {
		sq->xport = stag_xport_select(qp);
		if (sq->xport == &stag_roce_rc_xport || sq->xport == &stag_roce_uc_xport)
			stag_roce_qp_connect(qp);
		mutex_lock(&qp->resp_mutex);
		stag_roce_resp_reset(qp);
		mutex_unlock(&qp->resp_mutex);
	}
	if (mask & IB_QP_SQ_PSN)
		stag_req_set_psn(qp, READ_ONCE(qp->attr.sq_psn));
	if (new == IB_QPS_SQD && cur == IB_QPS_RTS && qp->attr.en_sqd_async_notify)
		sq->drain_event = true;
	mutex_unlock(&sq->mutex);
	if (new == IB_QPS_RTS || new == IB_QPS_SQD)
		stag_qp_kick(qp);
}

/**
 * stag_qp_modify() - the modify_qp verb
 * @ibqp: the QP
 * @attr: the attributes
 * @mask: which of them are given
 * @udata: the user's command; stag takes no driver data
 *
 * Return: 0; -EINVAL for a transition the IBA does not allow, a missing
 * required or a forbidden attribute, or a value out of range; -EOPNOTSUPP
 * for attributes stag lacks.
 */
int stag_qp_modify(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibqp->device);
	struct stag_qp *qp = to_stag_qp(ibqp);
	enum ib_qp_state cur, new;
	struct stag_av av = {};
	unsigned long flags;
	int ret;

	might_sleep();
	/* An RSS QP has no state: its WQs have (rss.c). */
	if (mask & ~IB_QP_ATTR_STANDARD_BITS || qp->rss)
		return -EOPNOTSUPP;
	if (udata && udata->inlen)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		ret = stag_ah_av_from_attr(&attr->ah_attr, &av);
		if (ret)
			return ret;
	}

	spin_lock_irqsave(&qp->attr_lock, flags);
	cur = qp->attr.qp_state;
	new = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask))
		ret = -EINVAL;
	else
		ret = stag_qp_check_attr(qp, attr, mask, stag_port_active_mtu(&sdev->port));
	if (!ret) {
		apply_attr(qp, attr, mask, &av);
		if (new != cur)
			trace_stag_qp_state(ibqp, cur, new);
	}
	spin_unlock_irqrestore(&qp->attr_lock, flags);
	if (ret) {
		stag_dbg_qp(qp, "%d -> %d mask %#x: %d\n", cur, new, mask, ret);
		return ret;
	}

	if (new == IB_QPS_RESET && cur != IB_QPS_RESET)
		reset_queues(qp);
	else if (new == IB_QPS_ERR && cur != IB_QPS_ERR)
		enter_error(qp);
	else
		ready_queues(qp, cur, new, mask);
	return 0;
}

int stag_qp_query(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct stag_qp *qp = to_stag_qp(ibqp);
	unsigned long flags;

	spin_lock_irqsave(&qp->attr_lock, flags);
	*attr = qp->attr;
	spin_unlock_irqrestore(&qp->attr_lock, flags);
	attr->cur_qp_state = attr->qp_state;
	attr->sq_draining = 0;

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq.sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/**
 * stag_qp_fill_res_entry() - driver attributes for rdma resource show qp
 * @msg: the netlink message
 * @ibqp: the QP
 *
 * "rdma -dd resource show qp" shows where the requester, the wire and the
 * responder stand: enough to tell what a transfer that stopped waits for.
 * The core holds the QP for the call; destroy waits for it.
 *
 * Return: 0, -EMSGSIZE when the message is full, or -EINTR.
 */
int stag_qp_fill_res_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct stag_qp *qp = to_stag_qp(ibqp);
	struct nlattr *table;
	int ret;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	ret = stag_req_fill_res(msg, qp);
	if (!ret)
		ret = stag_roce_fill_res(msg, qp);
	if (!ret)
		ret = stag_roce_resp_fill_res(msg, qp);
	if (ret) {
		nla_nest_cancel(msg, table);
		return ret;
	}
	nla_nest_end(msg, table);
	return 0;
}

/*
 * After this the requester cannot arm the timer or be queued by it again,
 * and no other thread can find the QP; what is in flight holds a
 * reference and is waited for.
 */
static void quiesce(struct stag_qp *qp)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);

	set_error(qp);
	mutex_lock(&qp->sq.mutex);
	qp->sq.dead = true;
	mutex_unlock(&qp->sq.mutex);
	xa_erase_bh(&sdev->qps, qp->ibqp.qp_num);
	if (timer_delete_sync(&qp->sq.timer))
		stag_qp_put(qp);
	if (cancel_work_sync(&qp->work))
		stag_qp_put(qp);
	stag_qp_put(qp);
	wait_for_completion(&qp->released);
}

int stag_qp_destroy(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct stag_qp *qp = to_stag_qp(ibqp);

	might_sleep();
	quiesce(qp);
	stag_roce_resp_uninit(qp);
	stag_roce_qp_uninit(qp);
	uninit_queues(qp);
	free_scratch(qp);
	if (qp->rss)
		stag_rss_free(qp->rss);
	stag_res_uncharge(&to_stag_dev(ibqp->device)->res, STAG_RES_QP);
	return 0;
}

/**
 * stag_qp_post_send() - the post_send verb, and the user's send doorbell
 * @ibqp: the QP
 * @wr: a kernel consumer's work requests; NULL for a user QP's doorbell
 * @bad_wr: set to the first request not posted
 *
 * A user QP's WQEs are in its ring already and the requester runs right
 * here, in the caller's context. A kernel consumer's are written into the
 * ring and run by the QP's work.
 *
 * Return: 0; -EINVAL for a malformed request, an XRC TGT QP (it has no
 * send queue), or before the QP is ready to send; -ENOMEM when the send
 * queue is full.
 */
int stag_qp_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr)
{
	struct stag_qp *qp = to_stag_qp(ibqp);
	enum ib_qp_state state = stag_qp_state(qp);
	unsigned long flags;
	int ret = 0;

	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		stag_req_run(qp);
		return 0;
	}
	if (state == IB_QPS_RESET || state == IB_QPS_INIT || state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->sq.lock, flags);
	for (; wr; wr = wr->next) {
		if (stag_queue_kfull(&qp->sq.queue)) {
			ret = -ENOMEM;
			break;
		}
		ret = stag_wqe_from_send_wr(&qp->sq.limits, wr, stag_queue_ktail(&qp->sq.queue));
		if (ret)
			break;
		stag_queue_kpush(&qp->sq.queue);
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (ret)
		*bad_wr = wr;
	stag_qp_kick(qp);
	return ret;
}

/**
 * stag_qp_post_recv() - the post_recv verb, and the user's receive doorbell
 * @ibqp: the QP
 * @wr: a kernel consumer's work requests; NULL for a user QP's doorbell
 * @bad_wr: set to the first request not posted
 *
 * Users post receives without a syscall; they ring only in the error
 * state, so that what they posted gets flushed.
 *
 * Return: 0; -EINVAL for a QP with an SRQ, an XRC QP, one in RESET, or a
 * malformed request; -ENOMEM when the receive queue is full.
 */
int stag_qp_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct stag_qp *qp = to_stag_qp(ibqp);
	unsigned long flags;
	int ret = 0;

	if (qp->srq || stag_qp_is_xrc(qp) || stag_qp_state(qp) == IB_QPS_RESET ||
	    (qp->user && wr)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (!qp->user) {
		spin_lock_irqsave(&qp->rq.lock, flags);
		for (; wr; wr = wr->next) {
			if (stag_queue_kfull(&qp->rq.queue)) {
				ret = -ENOMEM;
				break;
			}
			ret = stag_wqe_from_recv_wr(wr, qp->rq.max_sge,
						    stag_queue_ktail(&qp->rq.queue));
			if (ret)
				break;
			stag_queue_kpush(&qp->rq.queue);
		}
		spin_unlock_irqrestore(&qp->rq.lock, flags);
		if (ret)
			*bad_wr = wr;
	}
	if (stag_qp_state(qp) == IB_QPS_ERR)
		stag_qp_kick(qp);
	return ret;
}
