/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag libibverbs provider: XRC domains. The kernel keeps all there is of
 * one; libibverbs' struct verbs_xrcd is the whole object here.
 */
#ifndef STAG_XRCD_H
#define STAG_XRCD_H

#include "stag.h"

struct ibv_xrcd *stag_open_xrcd(struct ibv_context *ctx, struct ibv_xrcd_init_attr *attr);
int stag_close_xrcd(struct ibv_xrcd *ibxrcd);

#endif /* STAG_XRCD_H */
