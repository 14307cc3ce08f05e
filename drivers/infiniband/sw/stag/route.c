// SPDX-License-Identifier: GPL-2.0
/*
 * Routing. Every GID of every stag device is in one table, kept by the
 * core's add_gid/del_gid callbacks; a destination GID found there is a
 * stag device on this host, and a message for it can go to its QP
 * directly (loopback). Lookups run under RCU; a device's entries are all
 * deleted before it is freed, and stag_dev_dealloc() waits for a grace
 * period.
 */

#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "dev.h"
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
 * stag_route_dev_rcu() - the stag device of this host that has a GID
 * @gid: the GID
 *
 * Route answers only where a GID lives: on this host (a stag device), or
 * elsewhere (NULL, the wire). The caller looks the QP up itself.
 *
 * Context: under rcu_read_lock(), which keeps the device valid (its GIDs
 * are all deleted, and a grace period passes, before it is freed).
 * Return: the device, or NULL.
 */
struct stag_dev *stag_route_dev_rcu(const union ib_gid *gid)
{
	struct route_gid *r;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "route lookup outside RCU");
	hash_for_each_possible_rcu(route_table, r, node, gid_hash(gid)) {
		if (!memcmp(r->gid.raw, gid->raw, sizeof(gid->raw)))
			return r->sdev;
	}
	return NULL;
}

/**
 * stag_route_is_local() - does a stag device of this host have a GID?
 * @gid: the GID
 */
bool stag_route_is_local(const union ib_gid *gid)
{
	bool local;

	rcu_read_lock();
	local = stag_route_dev_rcu(gid);
	rcu_read_unlock();
	return local;
}
