// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: address handles, thin wrappers over
 * ibv_cmd_create_ah and ibv_cmd_destroy_ah. The kernel resolves the
 * address; the provider only keeps the number that names it.
 */
#include <errno.h>
#include <stdlib.h>

#include "ah.h"

struct stag_create_ah_resp_full {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct stag_create_ah_resp drv;
};

/* The core response is one u32: the udata starts 4 bytes in. */
static_assert(offsetof(struct stag_create_ah_resp_full, drv) ==
	      sizeof(struct ib_uverbs_create_ah_resp), "padding before the udata");

struct ibv_ah *stag_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct stag_create_ah_resp_full resp = {};
	struct stag_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_num = resp.drv.ah_num;
	return &ah->ibv_ah;
}

int stag_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	/* On failure the kernel still holds the AH, so it must stay valid. */
	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;

	free(to_stag_ah(ibah));
	return 0;
}
