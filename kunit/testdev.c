// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit helpers: netdevs that carry stag devices, and the devices.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "../dev.h"
#include "../port.h"

#include "testdev.h"

/* A netdev that drops what it is given: enough to carry a stag device. */
static netdev_tx_t test_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	dev_kfree_skb(skb);
	return NETDEV_TX_OK;
}

const struct net_device_ops test_netdev_ops = {
	.ndo_start_xmit = test_xmit,
};

static void test_netdev_release(void *data)
{
	struct net_device *ndev = data;

	/* Waits until stag's queued device removal dropped its reference. */
	unregister_netdev(ndev);
	free_netdev(ndev);
}

struct net_device *test_netdev_create(struct kunit *test, unsigned short type)
{
	struct net_device *ndev;
	int ret;

	ndev = alloc_etherdev(0);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	ndev->netdev_ops = &test_netdev_ops;
	ndev->type = type;
	ndev->max_mtu = 65535;
	/* Each device gets GIDs of its own: routing tells them apart by GID. */
	eth_hw_addr_random(ndev);
	strscpy(ndev->name, "stagt%d", IFNAMSIZ);
	ret = register_netdev(ndev);
	if (ret)
		free_netdev(ndev);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, test_netdev_release, ndev), 0);
	return ndev;
}

void test_netdev_set_up(struct net_device *ndev, bool up)
{
	rtnl_lock();
	if (up) {
		dev_open(ndev, NULL);
		netif_carrier_on(ndev);
	} else {
		dev_close(ndev);
	}
	rtnl_unlock();
}

KUNIT_DEFINE_ACTION_WRAPPER(ib_device_put_action, ib_device_put, struct ib_device *);

struct ib_device *test_get_ibdev(struct kunit *test, const char *name)
{
	struct ib_device *ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);

	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, ib_device_put_action, ibdev), 0);
	return ibdev;
}

KUNIT_DEFINE_ACTION_WRAPPER(dealloc_pd_action, ib_dealloc_pd, struct ib_pd *);
KUNIT_DEFINE_ACTION_WRAPPER(free_cq_action, ib_free_cq, struct ib_cq *);
static void put_gid_action(void *gid)
{
	rdma_put_gid_attr(gid);
}

struct rig *rig_create(struct kunit *test, const char *name)
{
	struct net_device *ndev = test_netdev_create(test, ARPHRD_ETHER);
	struct rig *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, r);
	test_netdev_set_up(ndev, true);
	KUNIT_ASSERT_EQ(test, stag_dev_add(name, ndev), 0);
	r->ibdev = test_get_ibdev(test, name);

	/* The core fills the GID table from a work queue. */
	for (i = 0; i < 100; i++) {
		r->gid = rdma_get_gid_attr(r->ibdev, STAG_PORT_NUM, 0);
		if (!IS_ERR(r->gid))
			break;
		msleep(20);
	}
	KUNIT_ASSERT_FALSE(test, IS_ERR(r->gid));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, put_gid_action, (void *)r->gid), 0);

	r->pd = ib_alloc_pd(r->ibdev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(r->pd));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dealloc_pd_action, r->pd), 0);
	r->cq = ib_alloc_cq(r->ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	KUNIT_ASSERT_FALSE(test, IS_ERR(r->cq));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, free_cq_action, r->cq), 0);
	return r;
}
