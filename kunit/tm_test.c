// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the tag list of a tag matching SRQ (tm.c). A message matches an
 * entry when its tag masked by the entry's mask is the entry's tag, the
 * oldest such entry first; only EAGER and RNDV messages match, and none
 * while software is behind on unexpected ones; a handle names its entry
 * until the entry is consumed or deleted, and never again after, even
 * once the entry holds another tag; a full list refuses an ADD and changes
 * nothing.
 */

#include <kunit/test.h>
#include <linux/spinlock.h>

#include "../tm.h"

#define TAGS	4

struct tm_fixture {
	spinlock_t lock;	/* the SRQ's, which the list asserts held */
	struct stag_tm *tm;
	struct stag_rwqe wqe;
};

static int tm_init(struct kunit *test)
{
	struct tm_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	spin_lock_init(&f->lock);
	f->tm = stag_tm_alloc(TAGS, &f->lock);
	KUNIT_ASSERT_NOT_NULL(test, f->tm);
	test->priv = f;
	return 0;
}

static void tm_exit(struct kunit *test)
{
	struct tm_fixture *f = test->priv;

	stag_tm_free(f->tm);
}

/* One operation under the lock; its return, its completion's status and flags in *@wc. */
static int op(struct kunit *test, u32 opcode, u64 tag, u64 mask, u32 handle, u32 unexp,
	      u32 flags, u32 *out, struct ib_wc *wc, u32 *tm_flags)
{
	struct tm_fixture *f = test->priv;
	struct stag_srq_op o = {
		.wr_id = 0x77, .recv_wr_id = tag + 0x1000, .tag = tag, .mask = mask,
		.opcode = opcode, .flags = flags, .unexpected_cnt = unexp, .handle = handle,
		.num_sge = 1, .sge = { { .addr = 0x1000, .length = 64, .lkey = 5 } },
	};
	struct stag_cq_tm ctm;
	int ret;

	spin_lock_irq(&f->lock);
	ret = stag_tm_op(f->tm, &o, out, wc, &ctm);
	spin_unlock_irq(&f->lock);
	if (tm_flags)
		*tm_flags = ctm.flags;
	return ret;
}

static u32 add(struct kunit *test, u64 tag, u64 mask)
{
	struct ib_wc wc;
	u32 h = ~0U;

	KUNIT_EXPECT_EQ(test, op(test, STAG_TM_OP_ADD, tag, mask, 0, 0, 0, &h, &wc, NULL), 0);
	KUNIT_EXPECT_EQ(test, (int)wc.opcode, STAG_WC_TM_ADD);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	return h;
}

static enum ib_wc_status del(struct kunit *test, u32 handle)
{
	struct ib_wc wc;
	u32 h;

	KUNIT_EXPECT_EQ(test, op(test, STAG_TM_OP_DEL, 0, 0, handle, 0, 0, &h, &wc, NULL), 0);
	return wc.status;
}

/* A message of @opcode and @tag: true with the entry's wr_id when it matched. */
static bool msg(struct kunit *test, u8 opcode, u64 tag, u64 *wr_id)
{
	struct tm_fixture *f = test->priv;
	struct stag_tmh h = {
		.opcode = opcode,
		.app_ctx = cpu_to_be32(9),
		.tag = cpu_to_be64(tag),
	};
	struct stag_tm_recv r;
	bool m;

	stag_tm_classify(&h, &r);
	spin_lock_irq(&f->lock);
	m = stag_tm_match(f->tm, &r, &f->wqe);
	if (!m)
		stag_tm_unexpected(f->tm, &r);
	spin_unlock_irq(&f->lock);
	KUNIT_EXPECT_EQ(test, m, r.matched);
	if (m) {
		KUNIT_EXPECT_EQ(test, r.tag, tag);
		KUNIT_EXPECT_EQ(test, r.app_ctx, 9U);
		KUNIT_EXPECT_EQ(test, f->wqe.num_sge, 1U);
		KUNIT_EXPECT_EQ(test, f->wqe.length, 64ULL);
		*wr_id = f->wqe.wr_id;
	}
	return m;
}

static void stag_tm_mask_and_order(struct kunit *test)
{
	u64 id = 0;

	add(test, 0x100, 0xf00);
	add(test, 0x1ab, 0xfff);
	/* Bits of the entry's tag outside its mask never match. */
	add(test, 0x1ab, 0xf00);
	KUNIT_EXPECT_TRUE(test, msg(test, STAG_TMH_EAGER, 0x1ab, &id));
	KUNIT_EXPECT_EQ(test, id, 0x1100ULL);
	KUNIT_EXPECT_TRUE(test, msg(test, STAG_TMH_RNDV, 0x1ab, &id));
	KUNIT_EXPECT_EQ(test, id, 0x11abULL);
	id = 0;
	KUNIT_EXPECT_FALSE(test, msg(test, STAG_TMH_EAGER, 0x1ab, &id));
}

static void stag_tm_only_tagged_messages_match(struct kunit *test)
{
	struct tm_fixture *f = test->priv;
	struct stag_tm_recv r;
	u64 id;

	add(test, 5, ~0ULL);
	KUNIT_EXPECT_FALSE(test, msg(test, STAG_TMH_NO_TAG, 5, &id));
	KUNIT_EXPECT_FALSE(test, msg(test, STAG_TMH_FIN, 5, &id));
	KUNIT_EXPECT_FALSE(test, msg(test, 0xff, 5, &id));
	/* No header at all. */
	stag_tm_classify(NULL, &r);
	KUNIT_EXPECT_EQ(test, r.op, STAG_TMH_NO_TAG);
	spin_lock_irq(&f->lock);
	KUNIT_EXPECT_FALSE(test, stag_tm_match(f->tm, &r, &f->wqe));
	spin_unlock_irq(&f->lock);
	/* None of them was unexpected: tag 5 still matches. */
	KUNIT_EXPECT_TRUE(test, msg(test, STAG_TMH_EAGER, 5, &id));
}

static void stag_tm_unexpected_stops_matching(struct kunit *test)
{
	struct ib_wc wc;
	u32 h, flags;
	u64 id;

	add(test, 1, ~0ULL);
	KUNIT_EXPECT_FALSE(test, msg(test, STAG_TMH_EAGER, 2, &id));
	KUNIT_EXPECT_FALSE(test, msg(test, STAG_TMH_EAGER, 1, &id));
	/* A stale count asks for a SYNC; one short leaves matching off. */
	op(test, STAG_TM_OP_ADD, 3, ~0ULL, 0, 0, 0, &h, &wc, &flags);
	KUNIT_EXPECT_EQ(test, flags, (u32)STAG_WC_TM_SYNC_REQ);
	op(test, STAG_TM_OP_SYNC, 0, 0, 0, 1, 0, &h, &wc, &flags);
	KUNIT_EXPECT_EQ(test, flags, (u32)STAG_WC_TM_SYNC_REQ);
	KUNIT_EXPECT_EQ(test, (int)wc.opcode, STAG_WC_TM_SYNC);
	KUNIT_EXPECT_FALSE(test, msg(test, STAG_TMH_EAGER, 1, &id));
	/* An ADD with STAG_TM_OPS_SYNC brings the count too. */
	op(test, STAG_TM_OP_ADD, 4, ~0ULL, 0, 3, STAG_TM_OPS_SYNC, &h, &wc, &flags);
	KUNIT_EXPECT_EQ(test, flags, 0U);
	KUNIT_EXPECT_TRUE(test, msg(test, STAG_TMH_EAGER, 1, &id));
	KUNIT_EXPECT_EQ(test, id, 0x1001ULL);
}

static void stag_tm_handles_name_one_life(struct kunit *test)
{
	u32 h[TAGS], old, again;
	struct ib_wc wc;
	int i;

	for (i = 0; i < TAGS; i++)
		h[i] = add(test, 0x10 + i, ~0ULL);
	/* Full: refused, nothing changes. */
	KUNIT_EXPECT_EQ(test, op(test, STAG_TM_OP_ADD, 0x99, ~0ULL, 0, 0, 0, &again, &wc, NULL),
			-ENOMEM);
	old = h[1];
	KUNIT_EXPECT_EQ(test, del(test, old), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, (int)del(test, old), STAG_WC_TM_ERR);
	again = add(test, 0x20, ~0ULL);
	/* The same entry, another life: the old handle names nothing. */
	KUNIT_EXPECT_EQ(test, again & 0xffff, old & 0xffff);
	KUNIT_EXPECT_NE(test, again, old);
	KUNIT_EXPECT_EQ(test, (int)del(test, old), STAG_WC_TM_ERR);
	KUNIT_EXPECT_EQ(test, del(test, again), IB_WC_SUCCESS);
	/* Past the list: refused as posted. */
	KUNIT_EXPECT_EQ(test, op(test, STAG_TM_OP_DEL, 0, 0, TAGS, 0, 0, &again, &wc, NULL),
			-EINVAL);
}

static void stag_tm_consumed_is_gone(struct kunit *test)
{
	u32 h = add(test, 7, ~0ULL);
	u64 id;

	KUNIT_EXPECT_TRUE(test, msg(test, STAG_TMH_EAGER, 7, &id));
	KUNIT_EXPECT_EQ(test, (int)del(test, h), STAG_WC_TM_ERR);
	KUNIT_EXPECT_FALSE(test, msg(test, STAG_TMH_EAGER, 7, &id));
}

static void stag_tm_refused_ops(struct kunit *test)
{
	struct ib_wc wc;
	u32 h;

	KUNIT_EXPECT_EQ(test, op(test, 3, 0, 0, 0, 0, 0, &h, &wc, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, op(test, STAG_TM_OP_SYNC, 0, 0, 0, 0, 1 << 2, &h, &wc, NULL),
			-EINVAL);
}

static struct kunit_case stag_tm_cases[] = {
	KUNIT_CASE(stag_tm_mask_and_order),
	KUNIT_CASE(stag_tm_only_tagged_messages_match),
	KUNIT_CASE(stag_tm_unexpected_stops_matching),
	KUNIT_CASE(stag_tm_handles_name_one_life),
	KUNIT_CASE(stag_tm_consumed_is_gone),
	KUNIT_CASE(stag_tm_refused_ops),
	{}
};

static struct kunit_suite stag_tm_suite = {
	.name = "stag_tm",
	.init = tm_init,
	.exit = tm_exit,
	.test_cases = stag_tm_cases,
};

kunit_test_suite(stag_tm_suite);
