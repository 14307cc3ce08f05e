/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag libibverbs provider: address handles. The kernel keeps the address;
 * UD send WQEs name it by its number.
 */
#ifndef STAG_AH_H
#define STAG_AH_H

#include "stag.h"

struct stag_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_num;
};

static inline struct stag_ah *to_stag_ah(struct ibv_ah *ah)
{
	return container_of(ah, struct stag_ah, ibv_ah);
}

struct ibv_ah *stag_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int stag_destroy_ah(struct ibv_ah *ibah);

#endif /* STAG_AH_H */
