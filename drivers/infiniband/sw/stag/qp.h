/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag queue pair: its state machine, its queues, and how it is found.
 */
#ifndef _STAG_QP_H
#define _STAG_QP_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "port.h"
#include "queue.h"
#include "roce.h"
#include "roce_resp.h"
#include "sgl.h"
#include "srq.h"
#include "tm.h"
#include "wqe.h"

#define STAG_MAX_QP		65536
#define STAG_MAX_RD_ATOMIC	128
#define STAG_QPN_MIN		16
#define STAG_QPN_MAX		((1U << 24) - 1)

struct stag_cq;
struct stag_dev;
struct stag_xport;

/*
 * A WQE the requester fetched and has not completed yet: its kernel copy,
 * and how far its transport got with it.
 */
struct stag_send {
	struct stag_swqe wqe;
	bool started;		/* its transport took it on */
	bool done;		/* and is through with it: complete with status */
	bool rd_atomic;		/* counted in stag_sq.rd_atomic */
	enum ib_wc_status status;
	/* RoCE: */
	u32 first_psn;
	u32 last_psn;
	u32 next_psn;		/* its next packet to send; last_psn + 1 once sent */
	u64 placed;		/* a read: bytes of its response placed */
	/* Loopback: a rendezvous it carried was read; the peer's FIN follows its completion. */
	bool fin_owed;
	struct stag_tmh fin;
};

/* Bits in stag_sq.flags. */
enum {
	STAG_SQ_EXPIRED,	/* the timer fired; the run acts on it */
};

/* The requester's side: see req.c. */
struct stag_sq {
	struct stag_queue queue;
	spinlock_t lock;	/* kernel producers (post_send) */
	struct mutex mutex;	/* the requester: one runs at a time */
	struct stag_wqe_limits limits;
	u32 max_wr;
	bool sig_all;
	unsigned long flags;
	struct timer_list timer;	/* holds a QP reference while armed */
	/* Under mutex: */
	const struct stag_xport *xport;
	struct stag_send *sends;	/* the window: fetched, not completed */
	u32 nsends;		/* its slots, a power of two */
	u32 head;		/* the oldest send */
	u32 start;		/* the first not started */
	u32 tail;		/* where the next is fetched to */
	bool waiting;		/* for the timer: nothing starts meanwhile */
	bool dead;		/* being destroyed: arm nothing */
	bool drain_event;	/* SQD: tell the consumer once the window is empty */
	u8 retry_left;
	u8 rnr_left;
	u8 rnr_timer;		/* loopback: the responder's min_rnr_timer */
	struct stag_sgl *local;	/* loopback: the send's local buffers */
	/* RoCE: */
	u32 psn;		/* the next new PSN */
	u32 una;		/* the oldest PSN not acknowledged */
	u32 hi_psn;		/* the first PSN never sent */
	u32 next;		/* the first send with packets to go */
	u32 noack;		/* packets since the last AckReq */
	u32 rd_atomic;		/* reads and atomics outstanding */
	u32 rd_psn;		/* the response PSN a read awaits next */
	bool nak_retry;		/* a go-back-N for a NAK or a gap is under way */
	bool goback_sent;	/* its first packet has gone out again */
	u32 goback_psn;
	u32 ooo_psn;		/* the last read response past a gap */
};

/* The responder's side: see resp.c. */
struct stag_rq {
	struct stag_queue queue;	/* unused with an SRQ */
	spinlock_t lock;	/* kernel producers (post_recv) */
	u32 max_wr;
	u32 max_sge;
	/* Under stag_qp.resp_mutex: */
	struct stag_rwqe *wqe;
	struct stag_sgl *sgl;
	struct stag_sgl *remote;	/* the target of a write, read or atomic */
};

/*
 * Reference rule: the creator's reference lives until destroy; lookups
 * (stag_qp_get_by_qpn), armed timers and queued work hold one each, and
 * destroy waits for all of them before the core frees the QP.
 */
struct stag_qp {
	struct ib_qp ibqp;
	refcount_t ref;
	struct completion released;
	bool user;

	/*
	 * Attributes. Written under attr_lock by modify_qp and by error
	 * transitions; the data path reads the state with READ_ONCE.
	 */
	spinlock_t attr_lock;
	struct ib_qp_attr attr;
	union ib_gid sgid;	/* RC/UC: this QP's GID, from the path */
	union ib_gid dgid;	/* RC/UC: the peer's */
	enum rdma_network_type net_type;

	struct stag_sq sq;
	struct stag_rq rq;
	struct mutex resp_mutex;	/* the responder; after sq.mutex */
	struct stag_roce_resp rresp;	/* the RoCE responder's, under resp_mutex */
	struct stag_roce_qp roce;	/* the QP's side of the wire */
	struct stag_srq *srq;
	struct stag_cq *scq;
	struct stag_cq *rcq;
	struct work_struct work;	/* runs the requester and flushes */
	/*
	 * XRC TGT: its domain, and the XRC SRQ the message being placed
	 * names, referenced, under resp_mutex; NULL between messages. That
	 * SRQ's receives, CQ and PD are the message's (stag_qp_who).
	 */
	struct ib_xrcd *xrcd;
	struct stag_srq *xsrq;
	/* An RSS QP's table and hash (rss.c); NULL for every other QP. Constant. */
	struct stag_rss *rss;
};

static inline struct stag_qp *to_stag_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct stag_qp, ibqp);
}

/*
 * The QP as the gate sees it when it makes an access. An XRC TGT QP has
 * no PD: a message it takes is checked against the PD of the XRC SRQ the
 * message names, as the IBA defines XRC.
 */
static inline struct stag_gate_who stag_qp_who(const struct stag_qp *qp)
{
	struct ib_pd *pd = qp->xsrq ? qp->xsrq->ibsrq.pd : qp->ibqp.pd;

	return (struct stag_gate_who) { .pd = pd, .qpn = qp->ibqp.qp_num };
}

static inline bool stag_qp_is_xrc(const struct stag_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_INI || qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/* RC and XRC: acknowledged, retried, in order; their responders error out. */
static inline bool stag_qp_reliable(const struct stag_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || stag_qp_is_xrc(qp);
}

static inline enum ib_qp_state stag_qp_state(const struct stag_qp *qp)
{
	return READ_ONCE(qp->attr.qp_state);
}

static inline void stag_qp_get(struct stag_qp *qp)
{
	refcount_inc(&qp->ref);
}

static inline void stag_qp_put(struct stag_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

#define stag_dbg_qp(qp, fmt, ...) do {						\
	const struct stag_qp *__qp = (qp);					\
										\
	ibdev_dbg(__qp->ibqp.device, "qp#%u %s: " fmt, __qp->ibqp.qp_num, __func__,	\
		  ##__VA_ARGS__);						\
} while (0)

int stag_qp_create(struct ib_qp *ibqp, struct ib_qp_init_attr *init, struct ib_udata *udata);
int stag_qp_modify(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int stag_qp_query(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int stag_qp_destroy(struct ib_qp *ibqp, struct ib_udata *udata);
int stag_qp_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr);
int stag_qp_fill_res_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int stag_qp_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);

int stag_qp_wq_init(void);
void stag_qp_wq_uninit(void);
struct stag_qp *stag_qp_get_by_qpn(struct stag_dev *sdev, u32 qpn);
void stag_qp_kick(struct stag_qp *qp);
void stag_qp_error(struct stag_qp *qp);
void stag_qp_fatal(struct stag_qp *qp);
void stag_qp_event(struct stag_qp *qp, enum ib_event_type type);

#if IS_ENABLED(CONFIG_KUNIT)
int stag_qp_check_attr(const struct stag_qp *qp, const struct ib_qp_attr *attr, int mask,
		       enum ib_mtu port_mtu);
#endif

#endif /* _STAG_QP_H */
