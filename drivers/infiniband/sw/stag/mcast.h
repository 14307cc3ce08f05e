/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag multicast groups: which UD QPs of this host are attached to a
 * multicast GID, and the netdevs' memberships that bring the group's
 * packets in from the wire.
 */
#ifndef _STAG_MCAST_H
#define _STAG_MCAST_H

#include <linux/kref.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>

#include "wqe.h"

/* As rdma_rxe advertises. */
#define STAG_MAX_MCAST_GRP		8192
#define STAG_MAX_MCAST_QP_ATTACH	56

/* The QPN a UD send names to reach every QP attached to its DGID. */
#define STAG_MCAST_QPN			0xffffff

struct stag_qp;

struct stag_mcast_member {
	struct stag_qp *qp;
	unsigned int count;	/* attaches of the QP; under the group mutex */
};

/*
 * A group's members at one moment: replaced whole when a QP comes or goes,
 * so a sender holds it (stag_mcast_get()) for as long as it delivers. It
 * holds a reference to each QP. Only the counts change in place, and only
 * attach and detach read them.
 */
struct stag_mcast_members {
	struct kref ref;
	struct rcu_head rcu;
	unsigned int n;
	struct stag_mcast_member m[] __counted_by(n);
};

int stag_mcast_attach(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int stag_mcast_detach(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
struct stag_mcast_members *stag_mcast_get(const union ib_gid *mgid);
void stag_mcast_put(struct stag_mcast_members *members);

static inline bool stag_mcast_is_group(const union ib_gid *gid)
{
	return rdma_is_multicast_addr((struct in6_addr *)gid->raw);
}

/* Is the send of a QP of @type one to a multicast group (UD only)? */
static inline bool stag_mcast_send(enum ib_qp_type type, const struct stag_swqe *wqe)
{
	return type == IB_QPT_UD &&
	       (wqe->hdr.wr.ud.remote_qpn & 0xffffff) == STAG_MCAST_QPN &&
	       stag_mcast_is_group(&wqe->av.dgid);
}

#endif /* _STAG_MCAST_H */
