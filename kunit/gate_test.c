// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the gate, over rights x requested access x PD x bounds, driven
 * through stag_gate_enter() on a real TPT so that the lookup is part of
 * every case.
 */

#include <kunit/test.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "../gate.h"
#include "../mr.h"
#include "../tpt.h"

/* The gate's view of an access by a QP of PD @p. */
#define WHO(p) (&(struct stag_gate_who){ .pd = (p) })

#define LW	IB_ACCESS_LOCAL_WRITE
#define RR	IB_ACCESS_REMOTE_READ
#define RW	IB_ACCESS_REMOTE_WRITE
#define RA	IB_ACCESS_REMOTE_ATOMIC
#define ALL	(LW | RR | RW | RA)

/* How the access presents itself. */
enum key_kind { KEY_OK, KEY_BAD_BYTE, KEY_INVALID, KEY_FREE, KEY_OTHER_PD };

enum region { STD, TOP, END, DMA, OFF, ZB };

/* The regions the cases use: iova, length and where iova falls in a page. */
static const struct {
	u64 iova, length, pages_offset;
} regions[] = {
	[STD] = { 0x1000, 0x100, 0 },
	[TOP] = { U64_MAX - 0xff, 0xff, 0 },		/* ends below U64_MAX */
	[END] = { U64_MAX - 0xff, 0x100, 0 },		/* last byte is U64_MAX */
	[DMA] = { 0, U64_MAX, 0 },			/* all of memory */
	[OFF] = { 0x7f0000001234, 0x3000, 0x234 },	/* iova != VA */
	[ZB] = { 0, 0x3000, 0x200 },			/* zero-based */
};

struct gate_case {
	const char *name;
	int rights;
	enum region region;
	enum key_kind key;
	int access;
	u64 addr, len;
	int expected;
	u64 offset;	/* checked when expected == 0 and len != 0 */
};

static const struct gate_case gate_cases[] = {
	/* key and state */
	{ "valid key", ALL, STD, KEY_OK, 0, 0x1000, 1, 0, 0 },
	{ "wrong key byte", ALL, STD, KEY_BAD_BYTE, 0, 0x1000, 1, -ENOENT },
	{ "invalidated entry", ALL, STD, KEY_INVALID, 0, 0x1000, 1, -ENOENT },
	{ "never-valid entry", ALL, STD, KEY_FREE, 0, 0x1000, 1, -ENOENT },
	/* PD comes before rights and bounds */
	{ "other PD", ALL, STD, KEY_OTHER_PD, 0, 0x1000, 1, -EPERM },
	{ "other PD, bad bounds too", ALL, STD, KEY_OTHER_PD, RW, 0x9000, 1, -EPERM },
	/* rights: local read is always granted */
	{ "local read, no rights", 0, STD, KEY_OK, 0, 0x1000, 0x100, 0, 0 },
	{ "local write granted", LW, STD, KEY_OK, LW, 0x1000, 1, 0, 0 },
	{ "local write missing", RR, STD, KEY_OK, LW, 0x1000, 1, -EACCES },
	{ "remote read granted", RR, STD, KEY_OK, RR, 0x1000, 1, 0, 0 },
	{ "remote read missing", LW | RW, STD, KEY_OK, RR, 0x1000, 1, -EACCES },
	{ "remote write granted", LW | RW, STD, KEY_OK, RW, 0x1000, 1, 0, 0 },
	{ "remote write missing", LW | RR, STD, KEY_OK, RW, 0x1000, 1, -EACCES },
	{ "remote atomic granted", LW | RA, STD, KEY_OK, RA, 0x1000, 8, 0, 0 },
	{ "remote atomic missing", LW | RW, STD, KEY_OK, RA, 0x1000, 8, -EACCES },
	{ "two rights, one missing", LW | RR, STD, KEY_OK, RR | RW, 0x1000, 1, -EACCES },
	{ "unknown right", ALL, STD, KEY_OK, IB_ACCESS_MW_BIND, 0x1000, 1, -EACCES },
	{ "rights before bounds", RR, STD, KEY_OK, RW, 0x9000, 1, -EACCES },
	/* bounds */
	{ "first byte", ALL, STD, KEY_OK, RW, 0x1000, 1, 0, 0 },
	{ "last byte", ALL, STD, KEY_OK, RW, 0x10ff, 1, 0, 0xff },
	{ "whole region", ALL, STD, KEY_OK, RW, 0x1000, 0x100, 0, 0 },
	{ "one byte before", ALL, STD, KEY_OK, RW, 0xfff, 1, -ERANGE },
	{ "one byte past", ALL, STD, KEY_OK, RW, 0x1100, 1, -ERANGE },
	{ "straddles the end", ALL, STD, KEY_OK, RW, 0x10ff, 2, -ERANGE },
	{ "straddles the start", ALL, STD, KEY_OK, RW, 0xfff, 2, -ERANGE },
	{ "one byte too long", ALL, STD, KEY_OK, RW, 0x1000, 0x101, -ERANGE },
	{ "zero length inside", ALL, STD, KEY_OK, RW, 0x1080, 0, 0 },
	{ "zero length far outside", ALL, STD, KEY_OK, RW, 0x9000, 0, 0 },
	{ "zero length, bad key", ALL, STD, KEY_BAD_BYTE, RW, 0x1000, 0, 0 },
	/* wrap past U64_MAX */
	{ "len wraps past U64_MAX", ALL, STD, KEY_OK, RW, 0x1000, U64_MAX, -ERANGE },
	{ "addr + len wraps to inside", ALL, STD, KEY_OK, RW, U64_MAX, 0x1002, -ERANGE },
	{ "below U64_MAX: last byte", ALL, TOP, KEY_OK, RW, U64_MAX - 1, 1, 0, 0xfe },
	{ "below U64_MAX: U64_MAX itself", ALL, TOP, KEY_OK, RW, U64_MAX, 1, -ERANGE },
	{ "at U64_MAX: last byte", ALL, END, KEY_OK, RW, U64_MAX, 1, 0, 0xff },
	{ "at U64_MAX: whole region", ALL, END, KEY_OK, RW, U64_MAX - 0xff, 0x100, 0, 0 },
	{ "at U64_MAX: one too many", ALL, END, KEY_OK, RW, U64_MAX - 0xff, 0x101, -ERANGE },
	{ "DMA region: near the top", ALL, DMA, KEY_OK, RW, U64_MAX - 1, 1, 0, U64_MAX - 1 },
	{ "DMA region: wraps", ALL, DMA, KEY_OK, RW, U64_MAX - 1, 2, -ERANGE },
	/* iova != VA, and zero-based: the offset is into the pages */
	{ "iova differs from VA", ALL, OFF, KEY_OK, RW, 0x7f0000002000, 0x10, 0, 0x1000 },
	{ "zero-based: first byte", ALL, ZB, KEY_OK, RW, 0, 1, 0, 0x200 },
	{ "zero-based: last byte", ALL, ZB, KEY_OK, RW, 0x2fff, 1, 0, 0x31ff },
	{ "zero-based: one past", ALL, ZB, KEY_OK, RW, 0x3000, 1, -ERANGE },
};

static void gate_case_desc(const struct gate_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(gate, gate_cases, gate_case_desc);

static void tpt_release(void *data)
{
	stag_tpt_uninit(data);
}

static void entry_release(void *data)
{
	struct stag_tpt_entry *e = data;

	stag_tpt_remove(e->owner, e);
}

/*
 * A table with one entry over region @r with @rights, in @pd, added but not
 * yet VALID; both are released by kunit actions.
 */
static struct stag_tpt_entry *test_entry(struct kunit *test, struct ib_pd *pd, int rights,
					 enum region r)
{
	struct stag_tpt *tpt = kunit_kzalloc(test, sizeof(*tpt), GFP_KERNEL);
	struct stag_tpt_entry *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, tpt);
	KUNIT_ASSERT_NOT_NULL(test, e);
	stag_tpt_init(tpt, 1024);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tpt_release, tpt), 0);

	/* The owner field carries the table for the release action. */
	stag_tpt_entry_init(e, STAG_TPT_MR, tpt);
	e->pd = pd;
	e->access = rights;
	e->iova = regions[r].iova;
	e->length = regions[r].length;
	e->pages_offset = regions[r].pages_offset;
	KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, entry_release, e), 0);
	return e;
}

static void stag_gate_table(struct kunit *test)
{
	const struct gate_case *c = test->param_value;
	struct ib_pd *pd = kunit_kzalloc(test, sizeof(*pd), GFP_KERNEL);
	struct ib_pd *other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	struct stag_tpt_entry *e;
	struct stag_tpt *tpt;
	struct stag_gate_ref ref;
	u32 key;

	KUNIT_ASSERT_NOT_NULL(test, pd);
	KUNIT_ASSERT_NOT_NULL(test, other);
	e = test_entry(test, pd, c->rights, c->region);
	tpt = e->owner;
	if (c->key != KEY_FREE)
		stag_tpt_set_state(e, c->key == KEY_INVALID ? STAG_TPT_INVALID : STAG_TPT_VALID);

	key = c->key == KEY_BAD_BYTE ? e->key ^ 0x5a : e->key;
	if (c->key == KEY_OTHER_PD)
		pd = other;
	KUNIT_EXPECT_EQ(test, stag_gate_enter(tpt, key, WHO(pd), c->access, c->addr, c->len, &ref),
			c->expected);
	if (c->expected || !c->len) {
		KUNIT_EXPECT_NULL(test, ref.entry);
		/* A failed or empty access holds nothing. */
		KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 1U);
		return;
	}
	KUNIT_EXPECT_PTR_EQ(test, ref.entry, e);
	KUNIT_EXPECT_EQ(test, ref.offset, c->offset);
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 2U);
	stag_gate_exit(&ref);
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 1U);
}

struct access_case {
	int access;
	int expected;
};

static const struct access_case access_cases[] = {
	{ 0, 0 },
	{ LW, 0 },
	{ RR, 0 },
	{ LW | RW, 0 },
	{ LW | RA, 0 },
	{ ALL, 0 },
	{ LW | IB_ACCESS_MW_BIND, 0 },
	{ RW, -EINVAL },
	{ RA, -EINVAL },
	{ RR | RW, -EINVAL },
	{ RR | RA, -EINVAL },
	{ IB_ZERO_BASED, -EOPNOTSUPP },
	{ IB_ACCESS_ON_DEMAND, 0 },
	{ LW | RR | IB_ACCESS_ON_DEMAND, 0 },
	{ IB_ACCESS_HUGETLB, -EOPNOTSUPP },
	{ LW | RW | IB_ACCESS_FLUSH_GLOBAL, 0 },
	{ LW | IB_ACCESS_FLUSH_PERSISTENT, 0 },		/* its pages are checked later */
	{ RW | IB_ACCESS_ON_DEMAND, -EINVAL },
	{ IB_ACCESS_RELAXED_ORDERING, 0 },
	{ 1 << 29, 0 },
	{ 1 << 30, -EINVAL },
};

static void access_case_desc(const struct access_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "access %#x -> %d", c->access, c->expected);
}

KUNIT_ARRAY_PARAM(access, access_cases, access_case_desc);

static void stag_gate_mr_access_flags(struct kunit *test)
{
	const struct access_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, stag_mr_check_access(c->access), c->expected);
}

/*
 * A FLUSH of a whole region: the key, PD and rights as for any access,
 * the bounds the entry's own, whatever they are.
 */
static void stag_gate_whole_region(struct kunit *test)
{
	struct ib_pd *pd = kunit_kzalloc(test, sizeof(*pd), GFP_KERNEL);
	struct ib_pd *other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	const int fg = IB_ACCESS_FLUSH_GLOBAL;
	struct stag_gate_ref ref;
	struct stag_tpt_entry *e;
	struct stag_tpt *tpt;
	u64 len;

	KUNIT_ASSERT_NOT_NULL(test, pd);
	KUNIT_ASSERT_NOT_NULL(test, other);
	e = test_entry(test, pd, LW | RW | fg, OFF);
	tpt = e->owner;
	stag_tpt_set_state(e, STAG_TPT_VALID);

	KUNIT_ASSERT_EQ(test, stag_gate_enter_whole(tpt, e->key, WHO(pd), fg, &len, &ref), 0);
	KUNIT_EXPECT_EQ(test, len, regions[OFF].length);
	KUNIT_EXPECT_PTR_EQ(test, ref.entry, e);
	KUNIT_EXPECT_EQ(test, ref.offset, regions[OFF].pages_offset);
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 2U);
	stag_gate_exit(&ref);

	KUNIT_EXPECT_EQ(test, stag_gate_enter_whole(tpt, e->key, WHO(pd),
						    IB_ACCESS_FLUSH_PERSISTENT, &len, &ref),
			-EACCES);
	KUNIT_EXPECT_EQ(test, stag_gate_enter_whole(tpt, e->key, WHO(other), fg, &len, &ref),
			-EPERM);
	KUNIT_EXPECT_EQ(test, stag_gate_enter_whole(tpt, e->key ^ 0x5a, WHO(pd), fg, &len, &ref),
			-ENOENT);
	stag_tpt_set_state(e, STAG_TPT_INVALID);
	KUNIT_EXPECT_EQ(test, stag_gate_enter_whole(tpt, e->key, WHO(pd), fg, &len, &ref),
			-ENOENT);
	KUNIT_EXPECT_NULL(test, ref.entry);
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 1U);
}

/*
 * A key checked for no bytes (a zero-length range FLUSH): the key, PD and
 * rights as for any access, and no bounds, where stag_gate_enter() takes
 * a zero-length access without a lookup.
 */
static void stag_gate_key_only(struct kunit *test)
{
	struct ib_pd *pd = kunit_kzalloc(test, sizeof(*pd), GFP_KERNEL);
	struct ib_pd *other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	const int fg = IB_ACCESS_FLUSH_GLOBAL;
	struct stag_gate_ref ref;
	struct stag_tpt_entry *e;
	struct stag_tpt *tpt;

	KUNIT_ASSERT_NOT_NULL(test, pd);
	KUNIT_ASSERT_NOT_NULL(test, other);
	e = test_entry(test, pd, LW | RW | fg, STD);
	tpt = e->owner;
	stag_tpt_set_state(e, STAG_TPT_VALID);

	KUNIT_EXPECT_EQ(test, stag_gate_enter(tpt, e->key ^ 0x5a, WHO(pd), fg, 0, 0, &ref), 0);
	KUNIT_EXPECT_NULL(test, ref.entry);

	KUNIT_ASSERT_EQ(test, stag_gate_enter_key(tpt, e->key, WHO(pd), fg, &ref), 0);
	KUNIT_EXPECT_PTR_EQ(test, ref.entry, e);
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 2U);
	stag_gate_exit(&ref);

	KUNIT_EXPECT_EQ(test, stag_gate_enter_key(tpt, e->key, WHO(pd),
						  IB_ACCESS_FLUSH_PERSISTENT, &ref), -EACCES);
	KUNIT_EXPECT_EQ(test, stag_gate_enter_key(tpt, e->key, WHO(other), fg, &ref), -EPERM);
	KUNIT_EXPECT_EQ(test, stag_gate_enter_key(tpt, e->key ^ 0x5a, WHO(pd), fg, &ref),
			-ENOENT);
	stag_tpt_set_state(e, STAG_TPT_INVALID);
	KUNIT_EXPECT_EQ(test, stag_gate_enter_key(tpt, e->key, WHO(pd), fg, &ref), -ENOENT);
	KUNIT_EXPECT_NULL(test, ref.entry);
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 1U);
}

/* An entry invalidated while an access holds it: the access keeps its
 * reference, no new access passes, and removal waits for the holder.
 */
static void stag_gate_invalidate_under_access(struct kunit *test)
{
	struct ib_pd *pd = kunit_kzalloc(test, sizeof(*pd), GFP_KERNEL);
	struct stag_gate_ref held, late;
	struct stag_tpt_entry *e;
	struct stag_tpt *tpt;

	KUNIT_ASSERT_NOT_NULL(test, pd);
	e = test_entry(test, pd, ALL, STD);
	tpt = e->owner;
	stag_tpt_set_state(e, STAG_TPT_VALID);

	KUNIT_ASSERT_EQ(test, stag_gate_enter(tpt, e->key, WHO(pd), RW, 0x1000, 16, &held), 0);
	stag_tpt_set_state(e, STAG_TPT_INVALID);
	KUNIT_EXPECT_EQ(test, stag_gate_enter(tpt, e->key, WHO(pd), RW, 0x1000, 16, &late),
			-ENOENT);
	KUNIT_EXPECT_FALSE(test, completion_done(&e->idle));
	stag_gate_exit(&held);
	/* Runs stag_tpt_remove() now, which must not wait any more. */
	kunit_release_action(test, entry_release, e);
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 0U);
}

static struct kunit_case stag_gate_cases[] = {
	KUNIT_CASE_PARAM(stag_gate_table, gate_gen_params),
	KUNIT_CASE_PARAM(stag_gate_mr_access_flags, access_gen_params),
	KUNIT_CASE(stag_gate_whole_region),
	KUNIT_CASE(stag_gate_key_only),
	KUNIT_CASE(stag_gate_invalidate_under_access),
	{}
};

static struct kunit_suite stag_gate_suite = {
	.name = "stag_gate",
	.test_cases = stag_gate_cases,
};

kunit_test_suite(stag_gate_suite);
