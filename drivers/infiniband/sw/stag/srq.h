/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag shared receive queue.
 */
#ifndef _STAG_SRQ_H
#define _STAG_SRQ_H

#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "queue.h"
#include "tm.h"
#include "wqe.h"

#define STAG_MAX_SRQ		65536
#define STAG_SRQN_MAX		((1U << 24) - 1)

struct stag_dev;

/*
 * Reference rule, as for QPs: the creator's reference lives until
 * destroy; an XRC TGT QP's responder holds one for the message it is
 * placing (stag_srq_get_xrc), and destroy waits for it.
 */
struct stag_srq {
	struct ib_srq ibsrq;
	refcount_t ref;
	struct completion released;
	spinlock_t lock;	/* consumers, the limit, and kernel producers */
	struct stag_queue queue;
	u32 max_sge;
	u32 max_wr;
	u32 limit;		/* armed when non-zero */
	u32 srq_num;
	bool user;
	struct stag_tm *tm;	/* IB_SRQT_TM: the tag list */
};

static inline struct stag_srq *to_stag_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct stag_srq, ibsrq);
}

int stag_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *init, struct ib_udata *udata);
int stag_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int stag_srq_query(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int stag_srq_destroy(struct ib_srq *ibsrq, struct ib_udata *udata);
int stag_srq_post_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
int stag_srq_take(struct stag_srq *srq, struct stag_rwqe *wqe);
int stag_srq_take_tm(struct stag_srq *srq, const struct stag_tmh *tmh, struct stag_rwqe *wqe,
		     struct stag_tm_recv *r);
int stag_srq_tm_op(struct stag_srq *srq, const struct stag_srq_op *op, u32 *handle);
struct stag_srq *stag_srq_get_xrc(struct stag_dev *sdev, u32 srqn, const struct ib_xrcd *xrcd);

static inline void stag_srq_put(struct stag_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->released);
}

#endif /* _STAG_SRQ_H */
