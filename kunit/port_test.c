// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the pure helpers behind port attributes.
 */

#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "../port.h"

struct mtu_case {
	unsigned int ndev_mtu;
	enum ib_mtu expected;
};

/*
 * RoCE v2 needs 40 (GRH) + 8 (UDP) + 12 (BTH) + 4 (XRCETH) + 28 (AtomicETH)
 * + 4 (ICRC) = 96 bytes beside the payload (iboe_get_mtu()). Each step is
 * tested one byte below and at its threshold.
 */
static const struct mtu_case mtu_cases[] = {
	{ 0,		IB_MTU_256 },
	{ 255,		IB_MTU_256 },
	{ 351,		IB_MTU_256 },
	{ 352,		IB_MTU_256 },
	{ 607,		IB_MTU_256 },
	{ 608,		IB_MTU_512 },
	{ 1119,		IB_MTU_512 },
	{ 1120,		IB_MTU_1024 },
	{ 1500,		IB_MTU_1024 },
	{ 2143,		IB_MTU_1024 },
	{ 2144,		IB_MTU_2048 },
	{ 4191,		IB_MTU_2048 },
	{ 4192,		IB_MTU_4096 },
	{ 9000,		IB_MTU_4096 },
	{ 65536,	IB_MTU_4096 },
	{ UINT_MAX,	IB_MTU_4096 },
};

static void mtu_case_desc(const struct mtu_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "netdev mtu %u -> ib mtu %d",
		 c->ndev_mtu, ib_mtu_enum_to_int(c->expected));
}

KUNIT_ARRAY_PARAM(mtu, mtu_cases, mtu_case_desc);

static void stag_port_mtu_from_netdev(struct kunit *test)
{
	const struct mtu_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, stag_port_mtu(c->ndev_mtu), c->expected);
}

static void stag_port_state_needs_running_and_carrier(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, stag_port_state(true, true), IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, stag_port_state(true, false), IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, stag_port_state(false, true), IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, stag_port_state(false, false), IB_PORT_DOWN);
}

static void stag_port_phys_state_follows_state(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, stag_port_phys_state(IB_PORT_ACTIVE),
			IB_PORT_PHYS_STATE_LINK_UP);
	KUNIT_EXPECT_EQ(test, stag_port_phys_state(IB_PORT_DOWN),
			IB_PORT_PHYS_STATE_DISABLED);
}

static struct kunit_case stag_port_cases[] = {
	KUNIT_CASE_PARAM(stag_port_mtu_from_netdev, mtu_gen_params),
	KUNIT_CASE(stag_port_state_needs_running_and_carrier),
	KUNIT_CASE(stag_port_phys_state_follows_state),
	{}
};

static struct kunit_suite stag_port_suite = {
	.name = "stag_port",
	.test_cases = stag_port_cases,
};

kunit_test_suite(stag_port_suite);

MODULE_DESCRIPTION("KUnit tests for stag");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
