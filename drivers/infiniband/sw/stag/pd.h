/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag protection domain.
 */
#ifndef _STAG_PD_H
#define _STAG_PD_H

#include <rdma/ib_verbs.h>

#define STAG_MAX_PD	65536

struct stag_pd {
	struct ib_pd ibpd;
	u32 pdn;		/* 1..STAG_MAX_PD, unique per device */
};

static inline struct stag_pd *to_stag_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct stag_pd, ibpd);
}

int stag_pd_alloc(struct ib_pd *ibpd, struct ib_udata *udata);
int stag_pd_dealloc(struct ib_pd *ibpd, struct ib_udata *udata);

#endif /* _STAG_PD_H */
