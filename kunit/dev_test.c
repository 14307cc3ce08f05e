// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: rdma link add argument checks, and a device on a test netdev:
 * port attributes, the default GID, port state transitions with their
 * events, and removal when the netdev goes away.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "../dev.h"
#include "../port.h"
#include "testdev.h"

struct name_case {
	const char *name;
	int expected;
};

static const struct name_case name_cases[] = {
	{ "stag0",	0 },
	{ "stagX",	0 },
	{ "stag_lo",	0 },
	{ "stag",	-EINVAL },
	{ "",		-EINVAL },
	{ "rxe0",	-EINVAL },
	{ "Stag0",	-EINVAL },
	{ "xstag0",	-EINVAL },
	{ "stag%d",	-EINVAL },
	{ "stag/0",	-EINVAL },
	/* 63 characters fit IB_DEVICE_NAME_MAX (64) with the NUL; 64 do not. */
	{ "stag56789012345678901234567890123456789012345678901234567890123", 0 },
	{ "stag567890123456789012345678901234567890123456789012345678901234", -EINVAL },
};

static void name_case_desc(const struct name_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%.20s\" (%zu chars) -> %d",
		 c->name, strlen(c->name), c->expected);
}

KUNIT_ARRAY_PARAM(name, name_cases, name_case_desc);

static void stag_link_name_check(struct kunit *test)
{
	const struct name_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, stag_dev_check_name(c->name), c->expected);
}

struct type_case {
	unsigned short type;
	int expected;
};

static const struct type_case type_cases[] = {
	{ ARPHRD_ETHER,		0 },
	{ ARPHRD_LOOPBACK,	0 },
	{ ARPHRD_NONE,		-EINVAL },
	{ ARPHRD_INFINIBAND,	-EINVAL },
	{ ARPHRD_TUNNEL,	-EINVAL },
	{ ARPHRD_IEEE80211,	-EINVAL },
};

static void type_case_desc(const struct type_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "ARPHRD %u -> %d", c->type, c->expected);
}

KUNIT_ARRAY_PARAM(type, type_cases, type_case_desc);

static void stag_link_netdev_type_check(struct kunit *test)
{
	const struct type_case *c = test->param_value;
	struct net_device *ndev = kunit_kzalloc(test, sizeof(*ndev), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ndev);
	ndev->type = c->type;
	KUNIT_EXPECT_EQ(test, stag_dev_check_netdev(ndev), c->expected);
}

static struct kunit_case stag_link_cases[] = {
	KUNIT_CASE_PARAM(stag_link_name_check, name_gen_params),
	KUNIT_CASE_PARAM(stag_link_netdev_type_check, type_gen_params),
	{}
};

static struct kunit_suite stag_link_suite = {
	.name = "stag_link",
	.test_cases = stag_link_cases,
};

static void stag_dev_port_attributes(struct kunit *test)
{
	struct net_device *ndev = test_netdev_create(test, ARPHRD_ETHER);
	struct ib_port_attr attr;
	struct ib_device *ibdev;

	test_netdev_set_up(ndev, true);
	KUNIT_ASSERT_EQ(test, stag_dev_add("stagk0", ndev), 0);
	ibdev = test_get_ibdev(test, "stagk0");

	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, STAG_PORT_NUM, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.state, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, attr.phys_state, IB_PORT_PHYS_STATE_LINK_UP);
	KUNIT_EXPECT_EQ(test, attr.active_mtu, IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, attr.max_mtu, IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, attr.gid_tbl_len, STAG_GID_TBL_LEN);
	KUNIT_EXPECT_EQ(test, attr.pkey_tbl_len, STAG_PKEY_TBL_LEN);
	KUNIT_EXPECT_EQ(test, rdma_port_get_link_layer(ibdev, STAG_PORT_NUM),
			IB_LINK_LAYER_ETHERNET);
	KUNIT_EXPECT_TRUE(test, rdma_protocol_roce_udp_encap(ibdev, STAG_PORT_NUM));
	KUNIT_EXPECT_FALSE(test, rdma_protocol_roce_eth_encap(ibdev, STAG_PORT_NUM));
	KUNIT_EXPECT_EQ(test, ibdev->phys_port_cnt, 1);
	KUNIT_EXPECT_EQ(test, ibdev->ops.driver_id, RDMA_DRIVER_UNKNOWN);
}

static void stag_dev_default_gid_from_mac(struct kunit *test)
{
	struct net_device *ndev = test_netdev_create(test, ARPHRD_ETHER);
	const struct ib_gid_attr *gattr;
	struct ib_device *ibdev;
	union ib_gid expected = {};
	int i;

	test_netdev_set_up(ndev, true);
	KUNIT_ASSERT_EQ(test, stag_dev_add("stagk1", ndev), 0);
	ibdev = test_get_ibdev(test, "stagk1");

	/* fe80::<EUI-64 of the MAC>, the RoCE default GID. */
	expected.raw[0] = 0xfe;
	expected.raw[1] = 0x80;
	addrconf_addr_eui48(&expected.raw[8], ndev->dev_addr);

	/* The core fills the GID table from a work queue. */
	for (i = 0; i < 100; i++) {
		gattr = rdma_get_gid_attr(ibdev, STAG_PORT_NUM, 0);
		if (!IS_ERR(gattr))
			break;
		msleep(20);
	}
	KUNIT_ASSERT_FALSE(test, IS_ERR(gattr));
	KUNIT_EXPECT_MEMEQ(test, gattr->gid.raw, expected.raw, sizeof(expected.raw));
	KUNIT_EXPECT_EQ(test, gattr->gid_type, IB_GID_TYPE_ROCE_UDP_ENCAP);
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, rdma_read_gid_attr_ndev_rcu(gattr), ndev);
	rcu_read_unlock();
	rdma_put_gid_attr(gattr);
}

struct event_log {
	struct ib_event_handler handler;
	struct completion got;
	enum ib_event_type last;
};

static void record_event(struct ib_event_handler *h, struct ib_event *ev)
{
	struct event_log *log = container_of(h, struct event_log, handler);

	if (ev->event != IB_EVENT_PORT_ACTIVE && ev->event != IB_EVENT_PORT_ERR)
		return;
	WRITE_ONCE(log->last, ev->event);
	complete(&log->got);
}

static void unregister_log(void *data)
{
	struct event_log *log = data;

	ib_unregister_event_handler(&log->handler);
}

static enum ib_event_type wait_event_type(struct kunit *test, struct event_log *log)
{
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&log->got, 5 * HZ), 0);
	return READ_ONCE(log->last);
}

static enum ib_port_state port_state(struct ib_device *ibdev)
{
	struct ib_port_attr attr;

	if (ib_query_port(ibdev, STAG_PORT_NUM, &attr))
		return IB_PORT_NOP;
	return attr.state;
}

static void stag_dev_port_follows_netdev(struct kunit *test)
{
	struct net_device *ndev = test_netdev_create(test, ARPHRD_ETHER);
	struct ib_port_attr attr;
	struct ib_device *ibdev;
	struct event_log *log;

	/* Created on a netdev that is down: the port starts down. */
	KUNIT_ASSERT_EQ(test, stag_dev_add("stagk2", ndev), 0);
	ibdev = test_get_ibdev(test, "stagk2");
	KUNIT_EXPECT_EQ(test, port_state(ibdev), IB_PORT_DOWN);

	log = kunit_kzalloc(test, sizeof(*log), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, log);
	init_completion(&log->got);
	INIT_IB_EVENT_HANDLER(&log->handler, ibdev, record_event);
	ib_register_event_handler(&log->handler);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, unregister_log, log), 0);

	test_netdev_set_up(ndev, true);
	KUNIT_EXPECT_EQ(test, wait_event_type(test, log), IB_EVENT_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, port_state(ibdev), IB_PORT_ACTIVE);

	test_netdev_set_up(ndev, false);
	KUNIT_EXPECT_EQ(test, wait_event_type(test, log), IB_EVENT_PORT_ERR);
	KUNIT_EXPECT_EQ(test, port_state(ibdev), IB_PORT_DOWN);

	rtnl_lock();
	KUNIT_EXPECT_EQ(test, dev_set_mtu(ndev, 9000), 0);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, STAG_PORT_NUM, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.active_mtu, IB_MTU_4096);
	/* An MTU change alone is no port transition. */
	KUNIT_EXPECT_FALSE(test, completion_done(&log->got));
}

static void stag_dev_add_rejects_duplicates(struct kunit *test)
{
	struct net_device *ndev = test_netdev_create(test, ARPHRD_ETHER);
	struct net_device *other = test_netdev_create(test, ARPHRD_ETHER);

	KUNIT_ASSERT_EQ(test, stag_dev_add("stagk3", ndev), 0);
	KUNIT_EXPECT_EQ(test, stag_dev_add("stagk4", ndev), -EEXIST);
	KUNIT_EXPECT_EQ(test, stag_dev_add("stagk3", other), -EEXIST);
	KUNIT_EXPECT_EQ(test, stag_dev_add("rxe9", other), -EINVAL);
	KUNIT_EXPECT_NULL(test, ib_device_get_by_name("stagk4", RDMA_DRIVER_UNKNOWN));
	/* The failures left the netdev free for a good request. */
	KUNIT_EXPECT_EQ(test, stag_dev_add("stagk5", other), 0);
}

static void stag_dev_add_rejects_non_ethernet(struct kunit *test)
{
	struct net_device *ndev = test_netdev_create(test, ARPHRD_NONE);

	KUNIT_EXPECT_EQ(test, stag_dev_add("stagk6", ndev), -EINVAL);
	KUNIT_EXPECT_NULL(test, ib_device_get_by_name("stagk6", RDMA_DRIVER_UNKNOWN));
}

static void stag_dev_removed_with_netdev(struct kunit *test)
{
	struct net_device *ndev;
	struct ib_device *ibdev;
	int i;

	ndev = alloc_etherdev(0);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	ndev->netdev_ops = &test_netdev_ops;
	eth_hw_addr_random(ndev);
	KUNIT_ASSERT_EQ(test, register_netdev(ndev), 0);
	KUNIT_ASSERT_EQ(test, stag_dev_add("stagk7", ndev), 0);

	/* Returns only once the device let go of the netdev. */
	unregister_netdev(ndev);
	free_netdev(ndev);

	for (i = 0; i < 100; i++) {
		ibdev = ib_device_get_by_name("stagk7", RDMA_DRIVER_UNKNOWN);
		if (!ibdev)
			break;
		ib_device_put(ibdev);
		msleep(20);
	}
	KUNIT_EXPECT_NULL(test, ibdev);
}

static struct kunit_case stag_dev_cases[] = {
	KUNIT_CASE(stag_dev_port_attributes),
	KUNIT_CASE(stag_dev_default_gid_from_mac),
	KUNIT_CASE(stag_dev_port_follows_netdev),
	KUNIT_CASE(stag_dev_add_rejects_duplicates),
	KUNIT_CASE(stag_dev_add_rejects_non_ethernet),
	KUNIT_CASE(stag_dev_removed_with_netdev),
	{}
};

static struct kunit_suite stag_dev_suite = {
	.name = "stag_dev",
	.test_cases = stag_dev_cases,
};

kunit_test_suites(&stag_link_suite, &stag_dev_suite);
