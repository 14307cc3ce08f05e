/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag libibverbs provider: memory windows. Allocation and deallocation
 * are system calls; a bind is a send WQE the kernel executes in order
 * with the rest of the send queue.
 */
#ifndef STAG_MW_H
#define STAG_MW_H

#include "stag.h"

/* A memory window: stag has no driver data for it. */
struct stag_mw {
	struct ibv_mw ibv_mw;
};

static inline struct stag_mw *to_stag_mw(struct ibv_mw *mw)
{
	return container_of(mw, struct stag_mw, ibv_mw);
}

struct ibv_mw *stag_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int stag_dealloc_mw(struct ibv_mw *mw);
int stag_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);

#endif /* STAG_MW_H */
