// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast groups. One table for every stag device of the host, keyed by
 * the group's GID, so that a send to a group reaches every attached QP of
 * the host, whatever device it is on (loopback.c), and a packet from the
 * wire reaches the QPs of the device it came in on (roce.c).
 *
 * A group's members are an array replaced whole under the group mutex
 * and read under RCU: a sender takes a reference to the array it found
 * and delivers to its QPs, which the array holds, without a lock. The
 * core refuses to destroy a QP that is attached (its usecnt), so an array
 * never outlives a QP's destroy by more than a delivery in flight, and
 * destroy waits for that one's reference.
 *
 * The first QP of a device to attach to a group makes the device's netdev
 * join it (IGMP for an IPv4-mapped GID, MLD otherwise), so that the
 * group's packets come in from the wire; the last to detach leaves.
 */

#include <kunit/visibility.h>
#include <linux/hashtable.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/jhash.h>
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/addrconf.h>

#include "dev.h"
#include "mcast.h"
#include "qp.h"

struct mcast_group {
	struct hlist_node node;
	union ib_gid mgid;
	struct stag_mcast_members __rcu *members;	/* never NULL while hashed */
	struct rcu_head rcu;
};

static DEFINE_HASHTABLE(mcast_table, 8);
static DEFINE_MUTEX(mcast_mutex);	/* attach and detach; before rtnl */
static unsigned int mcast_groups;	/* under mcast_mutex */

static u32 mgid_hash(const union ib_gid *mgid)
{
	return jhash(mgid->raw, sizeof(mgid->raw), 0);
}

static struct mcast_group *find_rcu(const union ib_gid *mgid)
{
	struct mcast_group *g;

	hash_for_each_possible_rcu(mcast_table, g, node, mgid_hash(mgid),
				   lockdep_is_held(&mcast_mutex)) {
		if (!memcmp(g->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			return g;
	}
	return NULL;
}

static struct stag_mcast_members *members_of(struct mcast_group *g)
{
	return rcu_dereference_protected(g->members, lockdep_is_held(&mcast_mutex));
}

static void members_release(struct kref *ref)
{
	struct stag_mcast_members *m = container_of(ref, struct stag_mcast_members, ref);
	unsigned int i;

	for (i = 0; i < m->n; i++)
		stag_qp_put(m->m[i].qp);
	/* A reader may have found the array and failed to take it. */
	kfree_rcu(m, rcu);
}

/**
 * stag_mcast_put() - done with a group's members
 * @members: from stag_mcast_get()
 *
 * Context: any; may drop the last reference to a QP.
 */
void stag_mcast_put(struct stag_mcast_members *members)
{
	kref_put(&members->ref, members_release);
}
EXPORT_SYMBOL_IF_KUNIT(stag_mcast_put);

/**
 * stag_mcast_get() - the QPs of this host attached to a group
 * @mgid: the group's GID
 *
 * Context: any, softirq included.
 * Return: the members, held until stag_mcast_put(); NULL when no QP is
 * attached.
 */
struct stag_mcast_members *stag_mcast_get(const union ib_gid *mgid)
{
	struct stag_mcast_members *m = NULL;
	struct mcast_group *g;

	rcu_read_lock();
	g = find_rcu(mgid);
	while (g) {
		m = rcu_dereference(g->members);
		/* Replaced meanwhile: the new array is in place already. */
		if (kref_get_unless_zero(&m->ref))
			break;
		m = NULL;
		g = find_rcu(mgid);
	}
	rcu_read_unlock();
	return m;
}
EXPORT_SYMBOL_IF_KUNIT(stag_mcast_get);

/* A copy of @old with room for @n members, each QP held again. */
static struct stag_mcast_members *members_alloc(const struct stag_mcast_members *old,
						unsigned int n, gfp_t gfp)
{
	struct stag_mcast_members *m = kzalloc(struct_size(m, m, n), gfp);

	if (!m)
		return NULL;
	kref_init(&m->ref);
	m->n = n;
	if (old)
		memcpy(m->m, old->m, min(n, old->n) * sizeof(m->m[0]));
	return m;
}

static void members_hold(struct stag_mcast_members *m)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		stag_qp_get(m->m[i].qp);
}

static bool has_dev(const struct stag_mcast_members *m, const struct ib_device *ibdev)
{
	unsigned int i;

	for (i = 0; m && i < m->n; i++) {
		if (m->m[i].qp->ibqp.device == ibdev)
			return true;
	}
	return false;
}

/*
 * The netdev joins or leaves the group, so that its packets come in: an
 * IPv4 group through the netdev's IGMP, any other through MLD. Both under
 * rtnl, which IGMP needs everywhere and MLD up to Linux 6.1. A netdev
 * without the address family cannot join: -ENODEV.
 */
static int membership(struct stag_dev *sdev, const union ib_gid *mgid, bool join)
{
	const struct in6_addr *addr6 = (const struct in6_addr *)mgid->raw;
	struct in_device *in_dev;
	int ret = 0;
	__be32 addr;

	/* Joins and leaves follow the members, which change under it. */
	lockdep_assert_held(&mcast_mutex);
	if (!ipv6_addr_v4mapped(addr6) && !IS_ENABLED(CONFIG_IPV6))
		return -ENODEV;
	rtnl_lock();
	if (ipv6_addr_v4mapped(addr6)) {
		memcpy(&addr, mgid->raw + 12, sizeof(addr));
		in_dev = __in_dev_get_rtnl(sdev->ndev);
		if (!in_dev)
			ret = -ENODEV;
		else if (join)
			ip_mc_inc_group(in_dev, addr);
		else
			ip_mc_dec_group(in_dev, addr);
	} else if (join) {
		ret = ipv6_dev_mc_inc(sdev->ndev, addr6);
	} else {
		ret = ipv6_dev_mc_dec(sdev->ndev, addr6);
	}
	rtnl_unlock();
	return ret == -EINVAL ? -ENODEV : ret;
}

/**
 * stag_mcast_attach() - attach a UD QP to a multicast group
 * @ibqp: the QP
 * @gid: the group's GID
 * @lid: unused on RoCE
 *
 * Attaching again counts: the QP stays until as many detaches.
 *
 * Return: 0; -EINVAL for a QP that is not UD or a GID that is not a
 * group's; -ENOMEM for a group with STAG_MAX_MCAST_QP_ATTACH QPs, or the
 * host with STAG_MAX_MCAST_GRP groups (rdma_rxe's errno); -ENODEV when
 * the netdev cannot join the group.
 */
int stag_mcast_attach(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct stag_qp *qp = to_stag_qp(ibqp);
	struct stag_mcast_members *old, *new;
	struct mcast_group *g, *created = NULL;
	unsigned int i, n;
	int ret;

	if (ibqp->qp_type != IB_QPT_UD || !stag_mcast_is_group(gid))
		return -EINVAL;

	mutex_lock(&mcast_mutex);
	g = find_rcu(gid);
	old = g ? members_of(g) : NULL;
	n = old ? old->n : 0;
	for (i = 0; i < n; i++) {
		if (old->m[i].qp == qp) {
			old->m[i].count++;
			ret = 0;
			goto out;
		}
	}
	ret = -ENOMEM;
	if (n >= STAG_MAX_MCAST_QP_ATTACH || (!g && mcast_groups >= STAG_MAX_MCAST_GRP))
		goto out;
	if (!g) {
		created = kzalloc(sizeof(*created), GFP_KERNEL);
		if (!created)
			goto out;
		created->mgid = *gid;
	}
	new = members_alloc(old, n + 1, GFP_KERNEL);
	if (!new)
		goto err_free;
	if (!has_dev(old, ibqp->device)) {
		ret = membership(to_stag_dev(ibqp->device), gid, true);
		if (ret)
			goto err_members;
	}
	new->m[n].qp = qp;
	new->m[n].count = 1;
	members_hold(new);
	if (created) {
		rcu_assign_pointer(created->members, new);
		hash_add_rcu(mcast_table, &created->node, mgid_hash(gid));
		mcast_groups++;
	} else {
		rcu_assign_pointer(g->members, new);
		stag_mcast_put(old);
	}
	mutex_unlock(&mcast_mutex);
	return 0;

err_members:
	kfree(new);
err_free:
	kfree(created);
out:
	mutex_unlock(&mcast_mutex);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(stag_mcast_attach);

/**
 * stag_mcast_detach() - detach a QP from a multicast group
 * @ibqp: the QP
 * @gid: the group's GID
 * @lid: unused on RoCE
 *
 * Return: 0; -EINVAL when the QP is not attached to the group.
 */
int stag_mcast_detach(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct stag_qp *qp = to_stag_qp(ibqp);
	struct stag_mcast_members *old, *new = NULL;
	struct mcast_group *g;
	unsigned int i, n;
	int ret = -EINVAL;

	mutex_lock(&mcast_mutex);
	g = find_rcu(gid);
	if (!g)
		goto out;
	old = members_of(g);
	for (i = 0; i < old->n && old->m[i].qp != qp; i++)
		;
	if (i == old->n)
		goto out;
	ret = 0;
	if (--old->m[i].count)
		goto out;
	n = old->n - 1;
	if (n) {
		/* A detach cannot fail for memory: the array is small. */
		new = members_alloc(old, n, GFP_KERNEL | __GFP_NOFAIL);
		if (i < n)
			new->m[i] = old->m[n];
		members_hold(new);
		rcu_assign_pointer(g->members, new);
	} else {
		hash_del_rcu(&g->node);
		mcast_groups--;
		kfree_rcu(g, rcu);
	}
	if (!has_dev(new, ibqp->device))
		membership(to_stag_dev(ibqp->device), gid, false);
	stag_mcast_put(old);
out:
	mutex_unlock(&mcast_mutex);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(stag_mcast_detach);
