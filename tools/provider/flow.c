// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: flows, thin wrappers over ibv_cmd_create_flow
 * and ibv_cmd_destroy_flow. stag has no driver data for a flow.
 */
#include <errno.h>
#include <stdlib.h>

#include "flow.h"

struct ibv_flow *stag_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr)
{
	struct ibv_flow *flow;
	int ret;

	flow = calloc(1, sizeof(*flow));
	if (!flow)
		return NULL;

	ret = ibv_cmd_create_flow(qp, flow, attr, NULL, 0);
	if (ret) {
		free(flow);
		errno = ret;
		return NULL;
	}
	return flow;
}

int stag_destroy_flow(struct ibv_flow *flow)
{
	int ret;

	/* On failure the kernel still has the flow: its handle stays valid. */
	ret = ibv_cmd_destroy_flow(flow);
	if (ret)
		return ret;

	free(flow);
	return 0;
}
