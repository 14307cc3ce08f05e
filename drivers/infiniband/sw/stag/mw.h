/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag memory window: a TPT entry over part of a region's page list,
 * bound and rebound by work requests.
 */
#ifndef _STAG_MW_H
#define _STAG_MW_H

#include <rdma/ib_verbs.h>

#include "tpt.h"

#define STAG_MAX_MW		65536

/* Rights a window may grant. */
#define STAG_MW_ACCESS (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)

struct stag_mr;
struct stag_qp;
struct stag_swqe;
struct stag_dev;

struct stag_mw {
	struct ib_mw ibmw;
	/*
	 * Allocated apart and freed after an RCU grace period: a lookup may
	 * still read it when the core frees the ib_mw right after dealloc.
	 */
	struct stag_tpt_entry *entry;
};

static inline struct stag_mw *to_stag_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct stag_mw, ibmw);
}

/* The checked arguments of a bind. */
struct stag_mw_bind {
	u64 addr;		/* in the region's iova space */
	u64 length;
	u32 mw_rkey;
	u32 new_rkey;
	u32 mr_lkey;
	int access;		/* STAG_MW_ACCESS | IB_ZERO_BASED */
};

int stag_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata);
int stag_mw_dealloc(struct ib_mw *ibmw);
enum ib_wc_status stag_mw_bind(struct stag_qp *qp, const struct stag_swqe *wqe);
int stag_mw_check_bind(const struct stag_tpt_entry *mw, enum ib_mw_type type,
		       const struct stag_tpt_entry *mr, const struct ib_pd *pd,
		       const struct stag_mw_bind *b);

#if IS_ENABLED(CONFIG_KUNIT)
void stag_mw_set_window(struct stag_tpt_entry *e, const struct stag_tpt_entry *mre,
			const struct stag_mw_bind *b, u32 qpn);
#endif

#endif /* _STAG_MW_H */
