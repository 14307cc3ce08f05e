// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: control-path verbs, thin wrappers over the
 * ibv_cmd_* calls of libibverbs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "stag.h"

int stag_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp, &resp_size);
	if (ret)
		return ret;

	/* The kernel sends fw_ver as a number; the string is the provider's. */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u.%u",
		 (unsigned int)(fw >> 32) & 0xffff, (unsigned int)(fw >> 16) & 0xffff,
		 (unsigned int)fw & 0xffff);
	return 0;
}

/*
 * attr is the caller's buffer, sized for the libibverbs the application
 * runs with; ibv_cmd_query_port fills it field by field, so stag never
 * needs to know how large struct ibv_port_attr is.
 */
int stag_query_port(struct ibv_context *ctx, uint8_t port_num, struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ctx, port_num, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *stag_alloc_pd(struct ibv_context *ctx)
{
	struct stag_alloc_pd_resp_full resp = {};
	struct ibv_alloc_pd cmd = {};
	struct stag_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(ctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->pdn = resp.drv.pdn;
	return &pd->ibv_pd;
}

int stag_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret;

	/* On failure the kernel still holds the PD, so it must stay valid. */
	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(to_stag_pd(ibpd));
	return 0;
}
