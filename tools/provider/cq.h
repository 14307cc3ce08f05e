/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag libibverbs provider: completion queues, polled from their ring with
 * no system call.
 */
#ifndef STAG_CQ_H
#define STAG_CQ_H

#include "queue.h"
#include "stag.h"

struct stag_cq {
	struct verbs_cq vcq;
	struct stag_queue queue;
	bool timestamps;	/* slots are struct stag_cqe_ts */
	bool tm;		/* slots are struct stag_cqe_tm */
	struct stag_cqe cur;	/* the completion an extended poll is at */
	uint64_t cur_ts;	/* and, with timestamps, its two clocks */
	uint64_t cur_wallclock_ns;
	uint64_t cur_tag;	/* and, with tag matching, its tag and app_ctx */
	uint32_t cur_priv;
};

static inline struct stag_cq *to_stag_cq(struct ibv_cq *cq)
{
	return container_of(cq, struct stag_cq, vcq.cq);
}

struct ibv_cq *stag_create_cq(struct ibv_context *ctx, int cqe, struct ibv_comp_channel *channel,
			      int comp_vector);
struct ibv_cq_ex *stag_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr);
int stag_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int stag_destroy_cq(struct ibv_cq *ibcq);
void stag_cq_clean(struct ibv_cq *ibcq, uint32_t qpn);
int stag_resize_cq(struct ibv_cq *ibcq, int cqe);

#endif /* STAG_CQ_H */
