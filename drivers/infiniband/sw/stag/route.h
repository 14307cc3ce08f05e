/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag routing: which local QP a destination GID and QPN name.
 */
#ifndef _STAG_ROUTE_H
#define _STAG_ROUTE_H

#include <rdma/ib_verbs.h>

struct stag_qp;

int stag_route_add_gid(const struct ib_gid_attr *attr, void **context);
int stag_route_del_gid(const struct ib_gid_attr *attr, void **context);
struct stag_qp *stag_route_find_qp(const union ib_gid *dgid, u32 qpn);

#endif /* _STAG_ROUTE_H */
