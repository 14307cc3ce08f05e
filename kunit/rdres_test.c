// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the responder's duplicate rules (rdres.c). Which read or atomic a
 * duplicate's PSN finds, across the 2^24 wrap; that the oldest resource is
 * reused first and only max_dest_rd_atomic are kept; and which duplicate
 * reads may be answered again: the same R_Key and a part of the range
 * first asked, never more, never an atomic's resource, never through an
 * overflowing range.
 */

#include <kunit/test.h>
#include <linux/limits.h>

#include "../pkt.h"
#include "../rdres.h"

#define WRAP	(STAG_PSN_MASK - 1)	/* two PSNs before the wrap */

static int rdres_init(struct kunit *test)
{
	struct stag_rdres_table *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, stag_rdres_init(t), 0);
	test->priv = t;
	return 0;
}

static void rdres_exit(struct kunit *test)
{
	stag_rdres_uninit(test->priv);
}

#define MTU	1024	/* the path MTU of the reads below */

/* A read of @n PSNs from @psn. */
static struct stag_rdres *add_read(struct stag_rdres_table *t, u32 keep, u32 psn, u32 n,
				   u64 va, u32 rkey, u32 len)
{
	struct stag_rdres *r = stag_rdres_new(t, keep);

	r->first_psn = psn;
	r->last_psn = stag_psn_add(psn, n - 1);
	r->va = va;
	r->rkey = rkey;
	r->len = len;
	return r;
}

static void stag_rdres_find_across_the_wrap(struct kunit *test)
{
	struct stag_rdres_table *t = test->priv;
	struct stag_rdres *r = add_read(t, 4, WRAP, 5, 0x1000, 7, 5 * 1024);

	/* WRAP, WRAP + 1, 0, 1, 2 */
	KUNIT_EXPECT_PTR_EQ(test, stag_rdres_find(t, 4, WRAP), r);
	KUNIT_EXPECT_PTR_EQ(test, stag_rdres_find(t, 4, STAG_PSN_MASK), r);
	KUNIT_EXPECT_PTR_EQ(test, stag_rdres_find(t, 4, 0), r);
	KUNIT_EXPECT_PTR_EQ(test, stag_rdres_find(t, 4, 2), r);
	KUNIT_EXPECT_NULL(test, stag_rdres_find(t, 4, 3));
	KUNIT_EXPECT_NULL(test, stag_rdres_find(t, 4, WRAP - 1));
}

static void stag_rdres_oldest_goes_first(struct kunit *test)
{
	struct stag_rdres_table *t = test->priv;
	u32 i;

	/* Three kept; four reads of one PSN each at 10, 11, 12, 13. */
	for (i = 0; i < 4; i++)
		add_read(t, 3, 10 + i, 1, 0x1000 * i, i, 8);
	KUNIT_EXPECT_NULL(test, stag_rdres_find(t, 3, 10));
	for (i = 1; i < 4; i++) {
		struct stag_rdres *r = stag_rdres_find(t, 3, 10 + i);

		KUNIT_ASSERT_NOT_NULL(test, r);
		KUNIT_EXPECT_EQ(test, r->rkey, i);
	}
	/* A new one is cleared: nothing of the one it replaces stays. */
	KUNIT_EXPECT_EQ(test, stag_rdres_new(t, 3)->rkey, 0);
	KUNIT_EXPECT_NULL(test, stag_rdres_find(t, 3, 11));
}

static void stag_rdres_zero_keeps_one(struct kunit *test)
{
	struct stag_rdres_table *t = test->priv;

	add_read(t, 0, 5, 1, 0, 1, 8);
	add_read(t, 0, 6, 1, 0, 2, 8);
	KUNIT_EXPECT_NULL(test, stag_rdres_find(t, 0, 5));
	KUNIT_EXPECT_EQ(test, stag_rdres_find(t, 0, 6)->rkey, 2);
}

static void stag_rdres_reset_forgets(struct kunit *test)
{
	struct stag_rdres_table *t = test->priv;

	add_read(t, 2, 5, 1, 0, 1, 8);
	stag_rdres_reset(t);
	KUNIT_EXPECT_NULL(test, stag_rdres_find(t, 2, 5));
	KUNIT_EXPECT_EQ(test, t->next, 0);
}

static void stag_rdres_atomic_keeps_its_result(struct kunit *test)
{
	struct stag_rdres_table *t = test->priv;
	struct stag_rdres *r = stag_rdres_new(t, 2);
	struct stag_pkt p = { .psn = 77, .va = 0x1000, .rkey = 9, .dmalen = 8 };

	r->atomic = true;
	r->first_psn = 77;
	r->last_psn = 77;
	r->va = 0x1000;
	r->rkey = 9;
	r->len = 8;
	r->orig = 0x1122334455667788ULL;
	KUNIT_EXPECT_EQ(test, stag_rdres_find(t, 2, 77)->orig, 0x1122334455667788ULL);
	/* A read naming an atomic's PSN is no replay of it. */
	KUNIT_EXPECT_FALSE(test, stag_rdres_may_replay(r, &p, MTU));
}

struct replay_case {
	const char *what;
	u32 psn;
	u64 va;
	u32 rkey;
	u32 len;
	bool ok;
};

/* The read first asked: 4096 bytes at 0x10000 under R_Key 0x1234, PSNs 100 to 103. */
static const struct replay_case replay_cases[] = {
	{ "the same request", 100, 0x10000, 0x1234, 4096, true },
	{ "its second half", 102, 0x10800, 0x1234, 2048, true },
	{ "its last response", 103, 0x10c00, 0x1234, 1024, true },
	{ "its second half, shorter", 102, 0x10800, 0x1234, 1000, true },
	{ "another R_Key", 100, 0x10000, 0x1235, 4096, false },
	{ "one byte more", 100, 0x10000, 0x1234, 4097, false },
	{ "one byte before", 100, 0xffff, 0x1234, 2, false },
	{ "its last byte, not where a response starts", 103, 0x10fff, 0x1234, 1, false },
	/* The responses would carry one part's bytes under another's PSNs. */
	{ "its second half under its first PSN", 100, 0x10800, 0x1234, 2048, false },
	{ "its start under a later PSN", 101, 0x10000, 0x1234, 4096, false },
	{ "past its end", 104, 0x11000, 0x1234, 1, false },
	{ "a range that wraps", 100, U64_MAX - 1, 0x1234, 4096, false },
};

static void replay_desc(const struct replay_case *c, char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(replay, replay_cases, replay_desc);

static void stag_rdres_read_replay_rules(struct kunit *test)
{
	const struct replay_case *c = test->param_value;
	struct stag_rdres_table *t = test->priv;
	struct stag_rdres *r = add_read(t, 1, 100, 4, 0x10000, 0x1234, 4096);
	struct stag_pkt p = { .psn = c->psn, .va = c->va, .rkey = c->rkey, .dmalen = c->len };

	KUNIT_EXPECT_EQ(test, stag_rdres_may_replay(r, &p, MTU), c->ok);
}

static void stag_rdres_replay_of_a_wrapping_resource(struct kunit *test)
{
	struct stag_rdres_table *t = test->priv;
	struct stag_rdres *r = add_read(t, 1, 100, 1, U64_MAX - 7, 1, 16);
	struct stag_pkt p = { .psn = 100, .va = U64_MAX - 7, .rkey = 1, .dmalen = 4 };

	/* A resource whose range overflows (never made so) answers nothing. */
	KUNIT_EXPECT_FALSE(test, stag_rdres_may_replay(r, &p, MTU));
}

static struct kunit_case stag_rdres_cases[] = {
	KUNIT_CASE(stag_rdres_find_across_the_wrap),
	KUNIT_CASE(stag_rdres_oldest_goes_first),
	KUNIT_CASE(stag_rdres_zero_keeps_one),
	KUNIT_CASE(stag_rdres_reset_forgets),
	KUNIT_CASE(stag_rdres_atomic_keeps_its_result),
	KUNIT_CASE_PARAM(stag_rdres_read_replay_rules, replay_gen_params),
	KUNIT_CASE(stag_rdres_replay_of_a_wrapping_resource),
	{}
};

static struct kunit_suite stag_rdres_suite = {
	.name = "stag_rdres",
	.init = rdres_init,
	.exit = rdres_exit,
	.test_cases = stag_rdres_cases,
};

kunit_test_suite(stag_rdres_suite);
