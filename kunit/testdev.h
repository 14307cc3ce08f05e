/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit helpers: netdevs that carry stag devices, and the devices.
 */
#ifndef _STAG_KUNIT_TESTDEV_H
#define _STAG_KUNIT_TESTDEV_H

#include <kunit/test.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

extern const struct net_device_ops test_netdev_ops;

struct net_device *test_netdev_create(struct kunit *test, unsigned short type);
void test_netdev_set_up(struct net_device *ndev, bool up);
struct ib_device *test_get_ibdev(struct kunit *test, const char *name);

/* One stag device on a netdev of its own, a PD, and a CQ polled directly. */
struct rig {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	const struct ib_gid_attr *gid;
};

struct rig *rig_create(struct kunit *test, const char *name);

#endif /* _STAG_KUNIT_TESTDEV_H */
