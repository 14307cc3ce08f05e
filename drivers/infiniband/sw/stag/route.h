/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag routing: where a GID lives, on a stag device of this host or not.
 */
#ifndef _STAG_ROUTE_H
#define _STAG_ROUTE_H

#include <rdma/ib_verbs.h>

struct stag_dev;

int stag_route_add_gid(const struct ib_gid_attr *attr, void **context);
int stag_route_del_gid(const struct ib_gid_attr *attr, void **context);
struct stag_dev *stag_route_dev_rcu(const union ib_gid *gid);
bool stag_route_is_local(const union ib_gid *gid);

#endif /* _STAG_ROUTE_H */
