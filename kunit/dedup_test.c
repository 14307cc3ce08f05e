// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the UD duplicate filter (dedup.c). Each PSN of a sender is taken
 * once, in any order inside the window and across the 2^24 wrap; a
 * duplicate late by far more packets than a small ring would hold is still
 * caught; a PSN behind the window is dropped until the sender has been
 * silent long enough to be a new QP; senders are told apart by address and
 * source QP, and the least recently heard one is the one forgotten.
 */

#include <kunit/test.h>
#include <linux/jiffies.h>

#include "../dedup.h"
#include "../pkt.h"

#define A	0x0a000001	/* a source address */
#define T0	1000UL		/* jiffies of the first packet */

static int dedup_init(struct kunit *test)
{
	struct stag_dedup *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, d);
	stag_dedup_reset(d);
	test->priv = d;
	return 0;
}

static enum stag_dedup_verdict take(struct kunit *test, u32 sqpn, u32 psn)
{
	return stag_dedup_take(test->priv, A, sqpn, psn, T0);
}

static void stag_dedup_each_psn_once(struct kunit *test)
{
	u32 psn;

	for (psn = 100; psn < 110; psn++)
		KUNIT_EXPECT_EQ(test, take(test, 5, psn), STAG_DEDUP_TAKE);
	for (psn = 100; psn < 110; psn++)
		KUNIT_EXPECT_EQ(test, take(test, 5, psn), STAG_DEDUP_TWICE);
}

static void stag_dedup_out_of_order_inside_the_window(struct kunit *test)
{
	/* Newest first, then the ones it overtook, then all of them again. */
	KUNIT_EXPECT_EQ(test, take(test, 5, 300), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 300 - STAG_DEDUP_BITS + 1), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 299), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 200), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 300), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 299), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 200), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 300 - STAG_DEDUP_BITS + 1), STAG_DEDUP_TWICE);
	/* One behind the window: too old to tell, while the sender speaks. */
	KUNIT_EXPECT_EQ(test, take(test, 5, 300 - STAG_DEDUP_BITS), STAG_DEDUP_STALE);
	/* Never taken in between, still not taken. */
	KUNIT_EXPECT_EQ(test, take(test, 5, 250), STAG_DEDUP_TAKE);
}

static void stag_dedup_late_duplicate(struct kunit *test)
{
	u32 psn;

	/*
	 * A duplicate delayed behind 200 later packets (netem: delay 10ms
	 * reorder 10% duplicate 2%) is still one: the ring of 16 packets
	 * this replaced let it through.
	 */
	for (psn = 0; psn <= 200; psn++)
		KUNIT_ASSERT_EQ(test, take(test, 5, psn), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 0), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 17), STAG_DEDUP_TWICE);
}

static void stag_dedup_across_the_wrap(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, take(test, 5, STAG_PSN_MASK - 1), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 1), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, STAG_PSN_MASK), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 0), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, STAG_PSN_MASK - 1), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, take(test, 5, STAG_PSN_MASK), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 0), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 1), STAG_DEDUP_TWICE);
}

static void stag_dedup_jump_clears_the_window(struct kunit *test)
{
	/* A sender that sent to other QPs meanwhile: its PSNs jump. */
	KUNIT_EXPECT_EQ(test, take(test, 5, 10), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 10 + 5 * STAG_DEDUP_BITS), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 11 + 4 * STAG_DEDUP_BITS), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 11 + 4 * STAG_DEDUP_BITS), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, take(test, 5, 10 + 5 * STAG_DEDUP_BITS), STAG_DEDUP_TWICE);
}

static void stag_dedup_a_silent_sender_starts_over(struct kunit *test)
{
	struct stag_dedup *d = test->priv;

	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 5, 5000, T0), STAG_DEDUP_TAKE);
	/* Its QP number, given to a new QP that starts far behind. */
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 5, 7, T0 + STAG_DEDUP_FORGET - 1),
			STAG_DEDUP_STALE);
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 5, 8, T0 + STAG_DEDUP_FORGET),
			STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 5, 7, T0 + STAG_DEDUP_FORGET),
			STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 5, 8, T0 + STAG_DEDUP_FORGET),
			STAG_DEDUP_TWICE);
}

static void stag_dedup_senders_apart(struct kunit *test)
{
	struct stag_dedup *d = test->priv;

	/* The same PSN from another QP, or another host, is another packet. */
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 5, 42, T0), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 6, 42, T0), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A + 1, 5, 42, T0), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 5, 42, T0), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 6, 42, T0), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A + 1, 5, 42, T0), STAG_DEDUP_TWICE);
}

static void stag_dedup_least_recent_forgotten(struct kunit *test)
{
	struct stag_dedup *d = test->priv;
	u32 i;

	for (i = 0; i < STAG_DEDUP_SENDERS; i++)
		KUNIT_ASSERT_EQ(test, stag_dedup_take(d, A, i, 1, T0 + i), STAG_DEDUP_TAKE);
	/* Sender 0 is heard again; sender 1 is now the least recent. */
	KUNIT_ASSERT_EQ(test, stag_dedup_take(d, A, 0, 2, T0 + 100), STAG_DEDUP_TAKE);
	KUNIT_ASSERT_EQ(test, stag_dedup_take(d, A, 99, 1, T0 + 101), STAG_DEDUP_TAKE);
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 0, 1, T0 + 102), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 2, 1, T0 + 102), STAG_DEDUP_TWICE);
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 99, 1, T0 + 102), STAG_DEDUP_TWICE);
	/* Forgotten: a packet from it is new again (the limit, bounded memory). */
	KUNIT_EXPECT_EQ(test, stag_dedup_take(d, A, 1, 1, T0 + 102), STAG_DEDUP_TAKE);
}

static void stag_dedup_reset_forgets(struct kunit *test)
{
	struct stag_dedup *d = test->priv;

	KUNIT_EXPECT_EQ(test, take(test, 5, 9), STAG_DEDUP_TAKE);
	stag_dedup_reset(d);
	KUNIT_EXPECT_EQ(test, take(test, 5, 9), STAG_DEDUP_TAKE);
}

static struct kunit_case stag_dedup_cases[] = {
	KUNIT_CASE(stag_dedup_each_psn_once),
	KUNIT_CASE(stag_dedup_out_of_order_inside_the_window),
	KUNIT_CASE(stag_dedup_late_duplicate),
	KUNIT_CASE(stag_dedup_across_the_wrap),
	KUNIT_CASE(stag_dedup_jump_clears_the_window),
	KUNIT_CASE(stag_dedup_a_silent_sender_starts_over),
	KUNIT_CASE(stag_dedup_senders_apart),
	KUNIT_CASE(stag_dedup_least_recent_forgotten),
	KUNIT_CASE(stag_dedup_reset_forgets),
	{}
};

static struct kunit_suite stag_dedup_suite = {
	.name = "stag_dedup",
	.init = dedup_init,
	.test_cases = stag_dedup_cases,
};

kunit_test_suite(stag_dedup_suite);
