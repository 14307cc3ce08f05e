// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: memory windows. The bind rules as a table over
 * stag_mw_check_bind(), and the bounds and rights of a bound window as
 * the gate enforces them, through stag_gate_enter() on a real TPT: first
 * byte, last byte, one byte past, zero-based windows, windows at the top
 * of the address space.
 */

#include <kunit/test.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "../gate.h"
#include "../mw.h"
#include "../tpt.h"

#define LW	IB_ACCESS_LOCAL_WRITE
#define RR	IB_ACCESS_REMOTE_READ
#define RW	IB_ACCESS_REMOTE_WRITE
#define RA	IB_ACCESS_REMOTE_ATOMIC
#define MWB	IB_ACCESS_MW_BIND
#define ZB	IB_ZERO_BASED

/* The region every bind case uses, unless it says otherwise. */
#define MR_IOVA		0x10000ULL
#define MR_LEN		0x3000ULL

enum { SAME, OTHER };

struct bind_case {
	const char *name;
	enum ib_mw_type type;
	bool mw_bound;		/* the window is VALID already */
	int mw_pd;		/* SAME or OTHER than the QP's */
	bool no_mr;		/* the lkey names nothing */
	bool mr_invalid;
	int mr_pd;
	int mr_access;
	u64 mr_iova, mr_len;	/* 0, 0: MR_IOVA, MR_LEN */
	u64 addr, len;
	int access;
	bool other_index;	/* the new rkey names another entry */
	int expected;
};

static const struct bind_case bind_cases[] = {
	{ "type 1, whole region", IB_MW_TYPE_1, false, SAME, false, false, SAME, LW | MWB, 0, 0,
	  MR_IOVA, MR_LEN, RR | RW, false, 0 },
	{ "type 2, whole region", IB_MW_TYPE_2, false, SAME, false, false, SAME, LW | MWB, 0, 0,
	  MR_IOVA, MR_LEN, RR | RW | RA, false, 0 },
	{ "first byte only", IB_MW_TYPE_2, false, SAME, false, false, SAME, MWB, 0, 0,
	  MR_IOVA, 1, RR, false, 0 },
	{ "last byte only", IB_MW_TYPE_2, false, SAME, false, false, SAME, MWB, 0, 0,
	  MR_IOVA + MR_LEN - 1, 1, RR, false, 0 },
	{ "one byte before the region", IB_MW_TYPE_2, false, SAME, false, false, SAME, MWB, 0, 0,
	  MR_IOVA - 1, 2, RR, false, -ERANGE },
	{ "one byte past the region", IB_MW_TYPE_2, false, SAME, false, false, SAME, MWB, 0, 0,
	  MR_IOVA + MR_LEN - 1, 2, RR, false, -ERANGE },
	{ "length that wraps u64", IB_MW_TYPE_2, false, SAME, false, false, SAME, MWB, 0, 0,
	  MR_IOVA + 8, U64_MAX, RR, false, -ERANGE },
	{ "region ending at U64_MAX, last byte", IB_MW_TYPE_2, false, SAME, false, false, SAME,
	  MWB, U64_MAX - 0xfff, 0x1000, U64_MAX, 1, RR, false, 0 },
	{ "region ending at U64_MAX, window past it", IB_MW_TYPE_2, false, SAME, false, false,
	  SAME, MWB, U64_MAX - 0xfff, 0x1000, U64_MAX, 2, RR, false, -ERANGE },
	{ "zero-based type 2", IB_MW_TYPE_2, false, SAME, false, false, SAME, MWB, 0, 0,
	  MR_IOVA + 0x800, 0x100, RR | ZB, false, 0 },
	{ "zero-based type 1", IB_MW_TYPE_1, false, SAME, false, false, SAME, MWB, 0, 0,
	  MR_IOVA, 0x100, RR | ZB, false, -EINVAL },
	{ "region without MW_BIND", IB_MW_TYPE_2, false, SAME, false, false, SAME, LW | RR | RW,
	  0, 0, MR_IOVA, 8, RR, false, -EACCES },
	{ "remote write over a region without local write", IB_MW_TYPE_2, false, SAME, false,
	  false, SAME, MWB | RR, 0, 0, MR_IOVA, 8, RW, false, -EACCES },
	{ "remote atomic over a region without local write", IB_MW_TYPE_2, false, SAME, false,
	  false, SAME, MWB, 0, 0, MR_IOVA, 8, RA, false, -EACCES },
	{ "remote write the region itself lacks", IB_MW_TYPE_2, false, SAME, false, false, SAME,
	  LW | MWB, 0, 0, MR_IOVA, 8, RW, false, 0 },
	{ "local write asked of a window: ignored", IB_MW_TYPE_2, false, SAME, false, false,
	  SAME, LW | MWB, 0, 0, MR_IOVA, 8, LW | RW, false, 0 },
	{ "MW_BIND asked of a window", IB_MW_TYPE_2, false, SAME, false, false, SAME,
	  LW | MWB, 0, 0, MR_IOVA, 8, MWB | RW, false, -EINVAL },
	{ "window of another PD", IB_MW_TYPE_1, false, OTHER, false, false, SAME, MWB, 0, 0,
	  MR_IOVA, 8, RR, false, -EPERM },
	{ "region of another PD", IB_MW_TYPE_1, false, SAME, false, false, OTHER, MWB, 0, 0,
	  MR_IOVA, 8, RR, false, -EPERM },
	{ "no region", IB_MW_TYPE_1, false, SAME, true, false, SAME, MWB, 0, 0,
	  MR_IOVA, 8, RR, false, -ENOENT },
	{ "invalidated region", IB_MW_TYPE_1, false, SAME, false, true, SAME, MWB, 0, 0,
	  MR_IOVA, 8, RR, false, -ENOENT },
	{ "new rkey of another index", IB_MW_TYPE_1, false, SAME, false, false, SAME, MWB, 0, 0,
	  MR_IOVA, 8, RR, true, -EINVAL },
	{ "type 1 rebind while bound", IB_MW_TYPE_1, true, SAME, false, false, SAME, MWB, 0, 0,
	  MR_IOVA, 8, RR, false, 0 },
	{ "type 2 bind while bound", IB_MW_TYPE_2, true, SAME, false, false, SAME, MWB, 0, 0,
	  MR_IOVA, 8, RR, false, -EBUSY },
	{ "type 1 zero length: unbind, no region needed", IB_MW_TYPE_1, true, SAME, true, false,
	  SAME, 0, 0, 0, 0, 0, 0, false, 0 },
	{ "type 2 zero length", IB_MW_TYPE_2, false, SAME, false, false, SAME, MWB, 0, 0,
	  MR_IOVA, 0, RR, false, -EINVAL },
};

static void bind_case_desc(const struct bind_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s -> %d", c->name, c->expected);
}

KUNIT_ARRAY_PARAM(bind, bind_cases, bind_case_desc);

static void stag_mw_bind_rules(struct kunit *test)
{
	const struct bind_case *c = test->param_value;
	struct ib_pd *pds = kunit_kcalloc(test, 2, sizeof(*pds), GFP_KERNEL);
	struct stag_tpt_entry *mw = kunit_kzalloc(test, sizeof(*mw), GFP_KERNEL);
	struct stag_tpt_entry *mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);
	struct stag_mw_bind b = {
		.addr = c->addr, .length = c->len, .access = c->access,
		.mw_rkey = 0x123456, .mr_lkey = 0x654321,
	};

	KUNIT_ASSERT_NOT_NULL(test, pds);
	KUNIT_ASSERT_NOT_NULL(test, mw);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	stag_tpt_entry_init(mw, STAG_TPT_MW, NULL);
	mw->key = b.mw_rkey;
	mw->pd = &pds[c->mw_pd];
	stag_tpt_set_state(mw, c->mw_bound ? STAG_TPT_VALID : STAG_TPT_FREE);
	b.new_rkey = c->other_index ? 0x123556 : 0x123457;

	stag_tpt_entry_init(mr, STAG_TPT_MR, NULL);
	mr->key = b.mr_lkey;
	mr->pd = &pds[c->mr_pd];
	mr->access = c->mr_access;
	mr->iova = c->mr_len ? c->mr_iova : MR_IOVA;
	mr->length = c->mr_len ?: MR_LEN;
	stag_tpt_set_state(mr, c->mr_invalid ? STAG_TPT_INVALID : STAG_TPT_VALID);

	KUNIT_EXPECT_EQ(test, stag_mw_check_bind(mw, c->type, c->no_mr ? NULL : mr, &pds[SAME],
						 &b),
			c->expected);
}

/* A window a consumer would use, as the gate sees it. */
struct window_case {
	const char *name;
	u64 win_addr, win_len;	/* in the region's iova space */
	int win_access;
	u32 qpn;		/* bound through this QP (type 2); 0: type 1 */
	u32 who_qpn;		/* the QP the access arrives at */
	int access;
	u64 addr, len;		/* in the window's iova space */
	int expected;
	u64 offset;		/* into the region's page list, when it passes */
};

/* The region: iova MR_IOVA, its first byte 0x200 into its first page. */
#define PAGES_OFF	0x200ULL

static const struct window_case window_cases[] = {
	{ "first byte", MR_IOVA + 0x100, 0x400, RW, 0, 7, RW, MR_IOVA + 0x100, 1, 0,
	  PAGES_OFF + 0x100 },
	{ "last byte", MR_IOVA + 0x100, 0x400, RW, 0, 7, RW, MR_IOVA + 0x4ff, 1, 0,
	  PAGES_OFF + 0x4ff },
	{ "whole window", MR_IOVA + 0x100, 0x400, RW, 0, 7, RW, MR_IOVA + 0x100, 0x400, 0,
	  PAGES_OFF + 0x100 },
	{ "one byte before", MR_IOVA + 0x100, 0x400, RW, 0, 7, RW, MR_IOVA + 0xff, 1, -ERANGE },
	{ "one byte past", MR_IOVA + 0x100, 0x400, RW, 0, 7, RW, MR_IOVA + 0x500, 1, -ERANGE },
	{ "last byte and one past", MR_IOVA + 0x100, 0x400, RW, 0, 7, RW, MR_IOVA + 0x4ff, 2,
	  -ERANGE },
	{ "inside the region, outside the window", MR_IOVA + 0x100, 0x400, RW, 0, 7, RW,
	  MR_IOVA, 8, -ERANGE },
	{ "length wrapping u64", MR_IOVA + 0x100, 0x400, RW, 0, 7, RW, MR_IOVA + 0x100,
	  U64_MAX, -ERANGE },
	{ "zero-based: offset 0", MR_IOVA + 0x800, 0x100, RR | ZB, 7, 7, RR, 0, 1, 0,
	  PAGES_OFF + 0x800 },
	{ "zero-based: last byte", MR_IOVA + 0x800, 0x100, RR | ZB, 7, 7, RR, 0xff, 1, 0,
	  PAGES_OFF + 0x8ff },
	{ "zero-based: one past", MR_IOVA + 0x800, 0x100, RR | ZB, 7, 7, RR, 0x100, 1,
	  -ERANGE },
	{ "zero-based: the region's own address", MR_IOVA + 0x800, 0x100, RR | ZB, 7, 7, RR,
	  MR_IOVA + 0x800, 1, -ERANGE },
	{ "right the window lacks", MR_IOVA, 0x400, RR, 0, 7, RW, MR_IOVA, 8, -EACCES },
	{ "atomic through a write window", MR_IOVA, 0x400, RW, 0, 7, RA, MR_IOVA, 8,
	  -EACCES },
	{ "local read through a window", MR_IOVA, 0x400, RR | RW, 0, 7, 0, MR_IOVA, 8,
	  -EACCES },
	{ "local write through a window", MR_IOVA, 0x400, LW | RR | RW, 0, 7, LW, MR_IOVA, 8,
	  -EACCES },
	{ "type 2 through its QP", MR_IOVA, 0x400, RW, 7, 7, RW, MR_IOVA, 8, 0, PAGES_OFF },
	{ "type 2 through another QP", MR_IOVA, 0x400, RW, 7, 8, RW, MR_IOVA, 8, -EPERM },
	{ "zero length passes unchecked", MR_IOVA, 0x400, RR, 0, 7, RW, 0, 0, 0, 0 },
};

static void window_case_desc(const struct window_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s -> %d", c->name, c->expected);
}

KUNIT_ARRAY_PARAM(window, window_cases, window_case_desc);

/* The key a bind would give: same index, the next key byte. */
static u32 next_key(u32 key)
{
	return stag_key_make(stag_key_index(key), stag_key_byte(key) + 1);
}

static void tpt_uninit_action(void *tpt)
{
	stag_tpt_uninit(tpt);
}

static void tpt_remove_action(void *data)
{
	struct stag_tpt_entry *e = data;

	stag_tpt_remove(e->owner, e);
}

static struct stag_tpt_entry *add_entry(struct kunit *test, struct stag_tpt *tpt,
					enum stag_tpt_type type)
{
	struct stag_tpt_entry *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, e);
	/* The owner is the table, for the removal action. */
	stag_tpt_entry_init(e, type, tpt);
	KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tpt_remove_action, e), 0);
	return e;
}

static void stag_mw_window_bounds(struct kunit *test)
{
	const struct window_case *c = test->param_value;
	struct stag_tpt *tpt = kunit_kzalloc(test, sizeof(*tpt), GFP_KERNEL);
	struct ib_pd *pd = kunit_kzalloc(test, sizeof(*pd), GFP_KERNEL);
	struct stag_gate_who who = { .pd = pd, .qpn = c->who_qpn };
	struct stag_tpt_entry *mr, *mw;
	struct stag_mw_bind b;
	struct stag_gate_ref ref;
	u32 key, old;

	KUNIT_ASSERT_NOT_NULL(test, tpt);
	KUNIT_ASSERT_NOT_NULL(test, pd);
	stag_tpt_init(tpt, 1024);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tpt_uninit_action, tpt), 0);

	mr = add_entry(test, tpt, STAG_TPT_MR);
	mr->pd = pd;
	mr->access = LW | RR | RW | RA | MWB;
	mr->iova = MR_IOVA;
	mr->length = MR_LEN;
	mr->pages_offset = PAGES_OFF;
	stag_tpt_set_state(mr, STAG_TPT_VALID);

	mw = add_entry(test, tpt, STAG_TPT_MW);
	mw->pd = pd;
	b = (struct stag_mw_bind) {
		.addr = c->win_addr, .length = c->win_len, .access = c->win_access,
		.mw_rkey = mw->key, .new_rkey = next_key(mw->key), .mr_lkey = mr->key,
	};
	KUNIT_ASSERT_EQ(test, stag_mw_check_bind(mw, c->qpn ? IB_MW_TYPE_2 : IB_MW_TYPE_1, mr,
						 pd, &b), 0);
	old = mw->key;
	stag_mw_set_window(mw, mr, &b, c->qpn);
	stag_tpt_set_state(mw, STAG_TPT_VALID);
	key = b.new_rkey;

	KUNIT_EXPECT_EQ(test, stag_gate_enter(tpt, key, &who, c->access, c->addr, c->len, &ref),
			c->expected);
	if (!c->expected && c->len) {
		KUNIT_EXPECT_PTR_EQ(test, ref.entry, mw);
		KUNIT_EXPECT_EQ(test, ref.offset, c->offset);
	}
	stag_gate_exit(&ref);
	/* The window's old key is dead; the region's key never served it. */
	KUNIT_EXPECT_EQ(test, stag_gate_enter(tpt, old, &who, RR, c->win_addr, 1, &ref),
			-ENOENT);
}

/* A window invalidated under an access stops it at its next check. */
static void stag_mw_rebind_stops_access(struct kunit *test)
{
	struct stag_tpt *tpt = kunit_kzalloc(test, sizeof(*tpt), GFP_KERNEL);
	struct ib_pd *pd = kunit_kzalloc(test, sizeof(*pd), GFP_KERNEL);
	struct stag_gate_who who = { .pd = pd };
	struct stag_tpt_entry *mr, *mw;
	struct stag_gate_ref held;
	struct stag_mw_bind b;

	KUNIT_ASSERT_NOT_NULL(test, tpt);
	KUNIT_ASSERT_NOT_NULL(test, pd);
	stag_tpt_init(tpt, 1024);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tpt_uninit_action, tpt), 0);
	mr = add_entry(test, tpt, STAG_TPT_MR);
	mr->pd = pd;
	mr->access = LW | MWB;
	mr->iova = MR_IOVA;
	mr->length = MR_LEN;
	stag_tpt_set_state(mr, STAG_TPT_VALID);
	mw = add_entry(test, tpt, STAG_TPT_MW);
	mw->pd = pd;
	b = (struct stag_mw_bind) { .addr = MR_IOVA, .length = 0x100, .access = RW,
				    .new_rkey = next_key(mw->key), .mr_lkey = mr->key };
	stag_mw_set_window(mw, mr, &b, 0);
	stag_tpt_set_state(mw, STAG_TPT_VALID);

	KUNIT_ASSERT_EQ(test, stag_gate_enter(tpt, b.new_rkey, &who, RW, MR_IOVA, 8, &held), 0);
	KUNIT_EXPECT_TRUE(test, stag_gate_still_valid(&held));
	/* A rebind gives the window a new key while the access is in flight. */
	stag_tpt_set_state(mw, STAG_TPT_INVALID);
	b.new_rkey = next_key(b.new_rkey);
	stag_mw_set_window(mw, mr, &b, 0);
	stag_tpt_set_state(mw, STAG_TPT_VALID);
	KUNIT_EXPECT_FALSE(test, stag_gate_still_valid(&held));
	stag_gate_exit(&held);
}

static struct kunit_case stag_mw_cases[] = {
	KUNIT_CASE_PARAM(stag_mw_bind_rules, bind_gen_params),
	KUNIT_CASE_PARAM(stag_mw_window_bounds, window_gen_params),
	KUNIT_CASE(stag_mw_rebind_stops_access),
	{}
};

static struct kunit_suite stag_mw_suite = {
	.name = "stag_mw",
	.test_cases = stag_mw_cases,
};

kunit_test_suites(&stag_mw_suite);
