/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag address handle.
 */
#ifndef _STAG_AH_H
#define _STAG_AH_H

#include <rdma/ib_verbs.h>

#include "wqe.h"

#define STAG_MAX_AH		65536

struct stag_ah {
	struct ib_ah ibah;
	u32 ah_num;		/* index in the device's AH table */
	struct stag_av av;
};

static inline struct stag_ah *to_stag_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct stag_ah, ibah);
}

struct stag_dev;

int stag_ah_create(struct ib_ah *ibah, struct rdma_ah_init_attr *init, struct ib_udata *udata);
int stag_ah_destroy(struct ib_ah *ibah, u32 flags);
int stag_ah_av_from_attr(const struct rdma_ah_attr *attr, struct stag_av *av);
int stag_ah_copy_av(struct stag_dev *sdev, u32 ah_num, const struct ib_pd *pd,
		    struct stag_av *av);

#endif /* _STAG_AH_H */
