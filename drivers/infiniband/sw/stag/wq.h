/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag receive work queues (ibv_create_wq): the receive rings an RSS QP
 * spreads frames over (rss.c).
 */
#ifndef _STAG_WQ_H
#define _STAG_WQ_H

#include <linux/mutex.h>
#include <rdma/ib_verbs.h>

#include "queue.h"
#include "wqe.h"

#define STAG_MAX_WQ		65536

/*
 * A WQ has no reference count of its own: the core keeps it from being
 * destroyed while an indirection table names it (usecnt, EBUSY), and a
 * table while an RSS QP has it, and destroying the QP waits for its
 * work, the only thing that places frames into WQs.
 */
struct stag_wq {
	struct ib_wq ibwq;
	/*
	 * The consumer side of the ring and the state: held by whoever
	 * takes a receive, from the take through its completion, so that
	 * a flush completes the receives in the order they were posted.
	 */
	struct mutex mutex;
	struct stag_queue queue;
	u32 max_sge;
};

static inline struct stag_wq *to_stag_wq(struct ib_wq *ibwq)
{
	return container_of(ibwq, struct stag_wq, ibwq);
}

struct ib_wq *stag_wq_create(struct ib_pd *pd, struct ib_wq_init_attr *init,
			     struct ib_udata *udata);
int stag_wq_modify(struct ib_wq *ibwq, struct ib_wq_attr *attr, u32 mask, struct ib_udata *udata);
int stag_wq_destroy(struct ib_wq *ibwq, struct ib_udata *udata);
int stag_wq_take(struct stag_wq *wq, struct stag_rwqe *wqe);
void stag_wq_complete(struct stag_wq *wq, struct ib_wc *wc, u64 wr_id);

#endif /* _STAG_WQ_H */
