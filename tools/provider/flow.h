/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag libibverbs provider: flows, which steer Ethernet frames to Raw
 * Packet QPs. The kernel keeps all there is of one; the ibv_flow holds its
 * handle.
 */
#ifndef STAG_FLOW_H
#define STAG_FLOW_H

#include "stag.h"

struct ibv_flow *stag_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr);
int stag_destroy_flow(struct ibv_flow *flow);

#endif /* STAG_FLOW_H */
