// SPDX-License-Identifier: GPL-2.0
/*
 * Routing. Every GID of every stag device is in one table, kept by the
 * core's add_gid/del_gid callbacks; a destination GID found there is a
 * stag device on this host, and the message goes to its QP directly
 * (loopback). Lookups run under RCU; a device's entries are all deleted
 * before it is freed, and stag_dev_dealloc() waits for a grace period.
 */

#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "dev.h"
#include "qp.h"
#include "route.h"

struct route_gid {
	struct hlist_node node;
	union ib_gid gid;
	struct stag_dev *sdev;
	struct rcu_head rcu;
};

static DEFINE_HASHTABLE(route_table, 8);
static DEFINE_SPINLOCK(route_lock);

static u32 gid_hash(const union ib_gid *gid)
{
	return jhash(gid->raw, sizeof(gid->raw), 0);
}

int stag_route_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct route_gid *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return -ENOMEM;
	r->gid = attr->gid;
	r->sdev = to_stag_dev(attr->device);
	spin_lock_bh(&route_lock);
	hash_add_rcu(route_table, &r->node, gid_hash(&r->gid));
	spin_unlock_bh(&route_lock);
	*context = r;
	return 0;
}

int stag_route_del_gid(const struct ib_gid_attr *attr, void **context)
{
	struct route_gid *r = *context;

	if (!r)
		return 0;
	spin_lock_bh(&route_lock);
	hash_del_rcu(&r->node);
	spin_unlock_bh(&route_lock);
	kfree_rcu(r, rcu);
	*context = NULL;
	return 0;
}

/**
 * stag_route_find_qp() - the local QP a destination names
 * @dgid: the destination GID
 * @qpn: the destination QP number
 *
 * Return: the QP with a reference (stag_qp_put()), or NULL when no stag
 * device here has the GID or it has no such QP.
 */
struct stag_qp *stag_route_find_qp(const union ib_gid *dgid, u32 qpn)
{
	struct stag_qp *qp = NULL;
	struct route_gid *r;

	rcu_read_lock();
	hash_for_each_possible_rcu(route_table, r, node, gid_hash(dgid)) {
		if (!memcmp(r->gid.raw, dgid->raw, sizeof(dgid->raw))) {
			qp = stag_qp_get_by_qpn(r->sdev, qpn);
			break;
		}
	}
	rcu_read_unlock();
	return qp;
}
