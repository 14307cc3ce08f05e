/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag libibverbs provider: receive WQs, posted into their ring with no
 * system call, and the indirection tables an RSS QP spreads frames over.
 */
#ifndef STAG_WQ_H
#define STAG_WQ_H

#include "queue.h"
#include "stag.h"

struct stag_wq {
	struct ibv_wq wq;
	struct stag_queue queue;
	uint32_t max_sge;
};

static inline struct stag_wq *to_stag_wq(struct ibv_wq *wq)
{
	return container_of(wq, struct stag_wq, wq);
}

struct ibv_wq *stag_create_wq(struct ibv_context *ctx, struct ibv_wq_init_attr *attr);
int stag_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr);
int stag_destroy_wq(struct ibv_wq *wq);
struct ibv_rwq_ind_table *stag_create_rwq_ind_table(struct ibv_context *ctx,
						    struct ibv_rwq_ind_table_init_attr *attr);
int stag_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl);

#endif /* STAG_WQ_H */
