/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag completion queue.
 */
#ifndef _STAG_CQ_H
#define _STAG_CQ_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "compat.h"
#include "queue.h"

#define STAG_MAX_CQ		65536
/*
 * libfabric 1.17's RDM endpoints ask for (384 + 384) * 256 = 196608
 * entries (its queues' depths times the universe size) and fail below.
 * 2^19 slots is the most whose ring fits STAG_QUEUE_MAX_SIZE whatever the
 * slot (cq.c asserts it): every size up to max_cqe can be created, as
 * pyverbs checks. The ring is charged to the creator's memory cgroup.
 */
#define STAG_MAX_CQE		((1 << 19) - 1)
/* Completion timestamps count nanoseconds: a 1 GHz clock, in kHz. */
#define STAG_CORE_CLOCK_KHZ	1000000

/*
 * User CQs hold struct stag_cqe slots the provider polls (struct
 * stag_cqe_ts with completion timestamps, struct stag_cqe_tm with tag
 * matching's part); kernel CQs hold struct ib_wc
 * slots stag_cq_poll() hands out.
 */
struct stag_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* producers, kernel pollers, notify and error */
	struct stag_queue queue;
	u8 notify;		/* IB_CQ_SOLICITED or IB_CQ_NEXT_COMP when armed */
	bool user;
	bool timestamps;	/* user slots are struct stag_cqe_ts */
	bool overflow;		/* a completion was lost: the CQ is in error */
};

/* A completion's tag matching part, as struct stag_cqe_tm has it. */
struct stag_cq_tm {
	u64 tag;
	u32 priv;
	u32 flags;		/* STAG_WC_TM_* */
};

static inline struct stag_cq *to_stag_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct stag_cq, ibcq);
}

int stag_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   stag_create_cq_arg_t *arg);
int stag_cq_destroy(struct ib_cq *ibcq, struct ib_udata *udata);
int stag_cq_resize(struct ib_cq *ibcq, unsigned int cqe, struct ib_udata *udata);
STAG_DEFINE_RESIZE_CQ(stag_cq_resize)
int stag_cq_poll(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int stag_cq_req_notify(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int stag_cq_post(struct stag_cq *cq, const struct ib_wc *wc, bool solicited);
int stag_cq_post_tm(struct stag_cq *cq, const struct ib_wc *wc, const struct stag_cq_tm *tm,
		    bool solicited);
int stag_cq_post_wq(struct stag_cq *cq, const struct ib_wc *wc, u32 wq_num);

#if IS_ENABLED(CONFIG_KUNIT)
void stag_cq_wc_to_cqe(const struct ib_wc *wc, struct stag_cqe *cqe);
#endif

#endif /* _STAG_CQ_H */
