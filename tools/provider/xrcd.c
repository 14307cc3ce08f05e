// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: XRC domains, thin wrappers over
 * ibv_cmd_open_xrcd and ibv_cmd_close_xrcd. stag has no driver data for
 * a domain either way: the commands carry the core parts only.
 */
#include <errno.h>
#include <stdlib.h>

#include "xrcd.h"

struct ibv_xrcd *stag_open_xrcd(struct ibv_context *ctx, struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;

	ret = ibv_cmd_open_xrcd(ctx, xrcd, sizeof(*xrcd), attr, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

int stag_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int ret;

	/* EBUSY while SRQs or QPs of the domain live: it stays open, and valid. */
	ret = ibv_cmd_close_xrcd(xrcd);
	if (ret)
		return ret;

	free(xrcd);
	return 0;
}
