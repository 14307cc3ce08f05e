/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag libibverbs provider: shared receive queues, basic, XRC and tag
 * matching, posted into their ring with no system call.
 */
#ifndef STAG_SRQ_H
#define STAG_SRQ_H

#include "queue.h"
#include "stag.h"

struct stag_srq {
	struct verbs_srq vsrq;
	struct stag_queue queue;
	uint32_t max_sge;
	bool tm;		/* IBV_SRQT_TM: tag list operations go to the kernel */
};

static inline struct stag_srq *to_stag_srq(struct ibv_srq *srq)
{
	return container_of(srq, struct stag_srq, vsrq.srq);
}

struct ibv_srq *stag_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
struct ibv_srq *stag_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr);
int stag_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int attr_mask);
int stag_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int stag_destroy_srq(struct ibv_srq *ibsrq);
int stag_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
int stag_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
int stag_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr, struct ibv_ops_wr **bad_wr);

#endif /* STAG_SRQ_H */
