// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the TPT. Allocation, key rotation on index reuse, lookups that
 * must fail, and a random differential test against a naive table.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "../gate.h"
#include "../pages.h"
#include "../tpt.h"

/* The gate's view of an access by a QP of PD @p. */
#define WHO(p) (&(struct stag_gate_who){ .pd = (p) })

static void tpt_release(void *data)
{
	stag_tpt_uninit(data);
}

static struct stag_tpt *test_tpt(struct kunit *test, u32 max_index)
{
	struct stag_tpt *tpt = kunit_kzalloc(test, sizeof(*tpt), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, tpt);
	stag_tpt_init(tpt, max_index);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tpt_release, tpt), 0);
	return tpt;
}

static struct stag_tpt_entry *test_entry(struct kunit *test)
{
	struct stag_tpt_entry *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, e);
	stag_tpt_entry_init(e, STAG_TPT_MR, NULL);
	return e;
}

static void stag_tpt_add_gives_findable_key(struct kunit *test)
{
	struct stag_tpt *tpt = test_tpt(test, 1000);
	struct stag_tpt_entry *e = test_entry(test);

	KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e), 0);
	KUNIT_EXPECT_GE(test, stag_key_index(e->key), 1U);
	KUNIT_EXPECT_LE(test, stag_key_index(e->key), 1000U);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpt->count), 1);
	KUNIT_EXPECT_PTR_EQ(test, stag_tpt_lookup(tpt, e->key), e);
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 2U);
	stag_tpt_put(e);
	stag_tpt_remove(tpt, e);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpt->count), 0);
}

static void stag_tpt_lookup_needs_the_key_byte(struct kunit *test)
{
	struct stag_tpt *tpt = test_tpt(test, 1000);
	struct stag_tpt_entry *e = test_entry(test);

	KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e), 0);
	KUNIT_EXPECT_NULL(test, stag_tpt_lookup(tpt, e->key ^ 0x01));
	KUNIT_EXPECT_NULL(test, stag_tpt_lookup(tpt, e->key ^ 0x80));
	KUNIT_EXPECT_NULL(test, stag_tpt_lookup(tpt, e->key + 0x100));
	KUNIT_EXPECT_NULL(test, stag_tpt_lookup(tpt, 0));
	stag_tpt_remove(tpt, e);
}

static void stag_tpt_lookup_after_remove_fails(struct kunit *test)
{
	struct stag_tpt *tpt = test_tpt(test, 1000);
	struct stag_tpt_entry *e = test_entry(test);
	u32 key;

	KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e), 0);
	key = e->key;
	stag_tpt_remove(tpt, e);
	KUNIT_EXPECT_NULL(test, stag_tpt_lookup(tpt, key));
	KUNIT_EXPECT_EQ(test, e->state, STAG_TPT_INVALID);
}

static void stag_tpt_full_table_is_enomem(struct kunit *test)
{
	struct stag_tpt *tpt = test_tpt(test, 4);
	struct stag_tpt_entry *e[5];
	int i;

	for (i = 0; i < 4; i++) {
		e[i] = test_entry(test);
		KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e[i]), 0);
	}
	e[4] = test_entry(test);
	KUNIT_EXPECT_EQ(test, stag_tpt_add(tpt, e[4]), -ENOMEM);
	for (i = 0; i < 4; i++)
		stag_tpt_remove(tpt, e[i]);
}

/*
 * With 8 indexes and entries added and removed one at a time, every index
 * is reused many times; no reuse may bring back a key seen before at that
 * index (within 256 laps, far more than this runs).
 */
static void stag_tpt_key_rotates_on_reuse(struct kunit *test)
{
	struct stag_tpt *tpt = test_tpt(test, 8);
	u32 *seen = kunit_kcalloc(test, 9 * 64, sizeof(u32), GFP_KERNEL);
	unsigned int nseen[9] = {};
	int round, i;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	for (round = 0; round < 8 * 32; round++) {
		struct stag_tpt_entry *e = test_entry(test);
		u32 idx;

		KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e), 0);
		idx = stag_key_index(e->key);
		KUNIT_ASSERT_LE(test, idx, 8U);
		for (i = 0; i < nseen[idx]; i++)
			KUNIT_ASSERT_NE(test, seen[idx * 64 + i], e->key);
		KUNIT_ASSERT_LT(test, nseen[idx], 64U);
		seen[idx * 64 + nseen[idx]++] = e->key;
		stag_tpt_remove(tpt, e);
	}
}

/*
 * Random adds, removes and lookups (of live, dead and random keys),
 * checked against a naive table that remembers every live key.
 */
static void stag_tpt_matches_naive_table(struct kunit *test)
{
	enum { SLOTS = 48, OPS = 4000 };
	struct stag_tpt *tpt = test_tpt(test, 32);
	struct stag_tpt_entry **live = kunit_kcalloc(test, SLOTS, sizeof(*live), GFP_KERNEL);
	u32 *dead = kunit_kcalloc(test, OPS, sizeof(u32), GFP_KERNEL);
	unsigned int ndead = 0, nlive = 0, op, s;

	KUNIT_ASSERT_NOT_NULL(test, live);
	KUNIT_ASSERT_NOT_NULL(test, dead);
	for (op = 0; op < OPS; op++) {
		struct stag_tpt_entry *e, *found;
		u32 key;

		s = get_random_u32_below(SLOTS);
		switch (get_random_u32_below(4)) {
		case 0:		/* add into an empty slot */
			if (live[s])
				break;
			e = kzalloc(sizeof(*e), GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, e);
			stag_tpt_entry_init(e, STAG_TPT_MR, NULL);
			if (stag_tpt_add(tpt, e)) {
				/* The naive table agrees that 32 are live. */
				KUNIT_EXPECT_EQ(test, nlive, 32U);
				kfree(e);
				break;
			}
			live[s] = e;
			nlive++;
			break;
		case 1:		/* remove */
			if (!live[s])
				break;
			dead[ndead++] = live[s]->key;
			stag_tpt_remove(tpt, live[s]);
			kfree_rcu(live[s], rcu);
			live[s] = NULL;
			nlive--;
			break;
		case 2:		/* look up a live key */
			if (!live[s])
				break;
			found = stag_tpt_lookup(tpt, live[s]->key);
			KUNIT_EXPECT_PTR_EQ(test, found, live[s]);
			if (found)
				stag_tpt_put(found);
			break;
		default:	/* a dead or random key finds nothing, or its live owner */
			key = ndead && get_random_u32_below(2) ?
			      dead[get_random_u32_below(ndead)] : get_random_u32();
			found = stag_tpt_lookup(tpt, key);
			for (e = NULL, s = 0; s < SLOTS; s++)
				if (live[s] && live[s]->key == key)
					e = live[s];
			KUNIT_EXPECT_PTR_EQ(test, found, e);
			if (found)
				stag_tpt_put(found);
		}
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&tpt->count), (int)nlive);
	for (s = 0; s < SLOTS; s++) {
		if (!live[s])
			continue;
		stag_tpt_remove(tpt, live[s]);
		kfree_rcu(live[s], rcu);
	}
}

struct reader {
	struct stag_tpt *tpt;
	struct ib_pd *pd;
	u32 key;
	atomic_t passed;
	atomic_t refused;
};

/* Goes through the gate on one key, as a data path would, until stopped. */
static int reader_fn(void *data)
{
	struct reader *r = data;
	struct stag_gate_ref ref;

	while (!kthread_should_stop()) {
		if (stag_gate_enter(r->tpt, r->key, WHO(r->pd), 0, 0x1000, 8, &ref)) {
			atomic_inc(&r->refused);
		} else {
			/* Use the entry while holding it: KASAN sees a use after free. */
			WARN_ON(READ_ONCE(ref.entry->iova) != 0x1000);
			atomic_inc(&r->passed);
			stag_gate_exit(&ref);
		}
		cond_resched();
	}
	return 0;
}

/*
 * Removal against concurrent readers: once stag_tpt_remove() returns, no
 * reader holds the entry, so it can be freed at once (kfree_rcu covers
 * lookups still inside xa_load); readers after that are refused.
 */
static void stag_tpt_remove_waits_for_readers(struct kunit *test)
{
	struct stag_tpt *tpt = test_tpt(test, 64);
	struct reader *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct task_struct *t[2];
	struct stag_tpt_entry *e;
	int i, refused;

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->pd = kunit_kzalloc(test, sizeof(*r->pd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->pd);
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	stag_tpt_entry_init(e, STAG_TPT_MR, NULL);
	e->pd = r->pd;
	e->iova = 0x1000;
	e->length = 0x1000;
	KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e), 0);
	stag_tpt_set_state(e, STAG_TPT_VALID);
	r->tpt = tpt;
	r->key = e->key;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		t[i] = kthread_run(reader_fn, r, "stag_reader%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t[i]));
	}
	for (i = 0; i < 100 && atomic_read(&r->passed) < 1000; i++)
		msleep(20);
	stag_tpt_remove(tpt, e);
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 0U);
	kfree_rcu(e, rcu);

	refused = atomic_read(&r->refused);
	for (i = 0; i < 100 && atomic_read(&r->refused) < refused + 1000; i++)
		msleep(20);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		kthread_stop(t[i]);
	KUNIT_EXPECT_GT(test, atomic_read(&r->passed), 0);
	KUNIT_EXPECT_GE(test, atomic_read(&r->refused), refused + 1000);
}

/* An invalidation in a thread of its own, holding its one reference. */
struct invalidator {
	struct stag_tpt *tpt;
	u32 key;
	struct completion done;
};

static int invalidator_fn(void *data)
{
	struct invalidator *inv = data;
	struct stag_tpt_entry *e = stag_tpt_lookup(inv->tpt, inv->key);

	if (e) {
		stag_tpt_invalidate(e);
		stag_tpt_put(e);
	}
	complete(&inv->done);
	return 0;
}

static struct invalidator *start_invalidator(struct kunit *test, struct stag_tpt *tpt, u32 key)
{
	struct invalidator *inv = kunit_kzalloc(test, sizeof(*inv), GFP_KERNEL);
	struct task_struct *t;

	KUNIT_ASSERT_NOT_NULL(test, inv);
	inv->tpt = tpt;
	inv->key = key;
	init_completion(&inv->done);
	t = kthread_run(invalidator_fn, inv, "stag_inval");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	return inv;
}

/*
 * An invalidation returns only once the accesses in flight have let go,
 * so the owner may reuse the memory; two at once on one entry each count
 * themselves out and both return; the entry stays in the table, not VALID.
 */
static void stag_tpt_invalidate_waits_for_accesses(struct kunit *test)
{
	struct stag_tpt *tpt = test_tpt(test, 64);
	struct stag_tpt_entry *e = test_entry(test);
	struct invalidator *a, *b;
	struct stag_tpt_entry *held;

	KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e), 0);
	stag_tpt_set_state(e, STAG_TPT_VALID);
	/* An access in flight. */
	held = stag_tpt_lookup(tpt, e->key);
	KUNIT_ASSERT_PTR_EQ(test, held, e);

	a = start_invalidator(test, tpt, e->key);
	b = start_invalidator(test, tpt, e->key);
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&a->done, HZ / 5), 0);
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&b->done, HZ / 5), 0);
	KUNIT_EXPECT_EQ(test, stag_tpt_state(e), STAG_TPT_INVALID);

	stag_tpt_put(held);
	KUNIT_EXPECT_NE(test, wait_for_completion_timeout(&a->done, 5 * HZ), 0);
	KUNIT_EXPECT_NE(test, wait_for_completion_timeout(&b->done, 5 * HZ), 0);
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&e->draining), 0);
	/* Still in the table under its key, for its owner to change or remove. */
	held = stag_tpt_lookup(tpt, e->key);
	KUNIT_EXPECT_PTR_EQ(test, held, e);
	if (held)
		stag_tpt_put(held);
	stag_tpt_remove(tpt, e);
}

/*
 * What another thread does in the gap stag_tpt_put() leaves between its
 * decrement and its wake-up: drops the last reference, and the owner
 * removes the entry and frees it at once.
 */
static struct stag_tpt *gap_tpt;

static void free_in_put_gap(struct stag_tpt_entry *e)
{
	stag_tpt_remove(gap_tpt, e);
	kfree(e);
}

/*
 * A put that is not the last never reads the entry after its decrement:
 * the entry may be gone by then (KASAN reports the read if it does).
 */
static void stag_tpt_put_leaves_entry_alone(struct kunit *test)
{
	struct stag_tpt *tpt = test_tpt(test, 64);
	struct stag_tpt_entry *e = kzalloc(sizeof(*e), GFP_KERNEL);
	struct stag_tpt_entry *held;

	KUNIT_ASSERT_NOT_NULL(test, e);
	stag_tpt_entry_init(e, STAG_TPT_MR, NULL);
	KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e), 0);
	stag_tpt_set_state(e, STAG_TPT_VALID);
	held = stag_tpt_lookup(tpt, e->key);
	KUNIT_ASSERT_PTR_EQ(test, held, e);

	gap_tpt = tpt;
	kunit_activate_static_stub(test, stag_tpt_put_gap, free_in_put_gap);
	stag_tpt_put(held);
	kunit_deactivate_static_stub(test, stag_tpt_put_gap);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpt->count), 0);
}

struct inv_case {
	const char *name;
	enum stag_tpt_type type;
	enum stag_tpt_inv inv;
	bool other_pd;
	bool remote;
	bool other_qp;		/* a type 2 window bound through another QP */
	bool unbound;		/* a window that is not VALID */
	bool windows;		/* a region with a window bound over it */
	int expected;
};

static const struct inv_case inv_cases[] = {
	{ "fast-reg region", STAG_TPT_MR, STAG_TPT_INV_REGION, false, false, false, false,
	  false, 0 },
	{ "fast-reg region, remote", STAG_TPT_MR, STAG_TPT_INV_REGION, false, true, false, false,
	  false, 0 },
	{ "user region", STAG_TPT_MR, STAG_TPT_INV_NONE, false, false, false, false, false,
	  -EINVAL },
	{ "type 1 window", STAG_TPT_MW, STAG_TPT_INV_NONE, false, false, false, false, false,
	  -EINVAL },
	{ "region of another PD", STAG_TPT_MR, STAG_TPT_INV_REGION, true, false, false, false,
	  false, -EPERM },
	{ "region with a window bound", STAG_TPT_MR, STAG_TPT_INV_REGION, false, false, false,
	  false, true, -EBUSY },
	{ "type 2 window, local", STAG_TPT_MW, STAG_TPT_INV_WINDOW, false, false, false, false,
	  false, 0 },
	{ "type 2 window, local, another QP of its PD", STAG_TPT_MW, STAG_TPT_INV_WINDOW, false,
	  false, true, false, false, 0 },
	{ "type 2 window, remote, its QP", STAG_TPT_MW, STAG_TPT_INV_WINDOW, false, true, false,
	  false, false, 0 },
	{ "type 2 window, remote, another QP", STAG_TPT_MW, STAG_TPT_INV_WINDOW, false, true,
	  true, false, false, -EPERM },
	{ "type 2 window of another PD", STAG_TPT_MW, STAG_TPT_INV_WINDOW, true, false, false,
	  false, false, -EPERM },
	{ "type 2 window not bound", STAG_TPT_MW, STAG_TPT_INV_WINDOW, false, false, false, true,
	  false, -ENOENT },
};

static void inv_case_desc(const struct inv_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(inv, inv_cases, inv_case_desc);

/*
 * The rules of invalidation by key, each with its errno; what is refused
 * stays VALID, what is invalidated is not, and a window lets go of its
 * region.
 */
static void stag_tpt_invalidate_key_rules(struct kunit *test)
{
	const struct inv_case *c = test->param_value;
	struct stag_tpt *tpt = test_tpt(test, 64);
	struct stag_tpt_entry *e = test_entry(test);
	struct stag_tpt_entry *region = test_entry(test);
	struct ib_pd *pd = kunit_kzalloc(test, 2 * sizeof(*pd), GFP_KERNEL);
	u32 key;

	KUNIT_ASSERT_NOT_NULL(test, pd);
	e->type = c->type;
	e->inv = c->inv;
	e->pd = c->other_pd ? &pd[1] : &pd[0];
	e->qpn = c->type == STAG_TPT_MW ? 17 : 0;
	if (c->type == STAG_TPT_MW) {
		e->parent = region;
		atomic_inc(&region->windows);
	}
	if (c->windows)
		atomic_inc(&e->windows);
	KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e), 0);
	if (!c->unbound)
		stag_tpt_set_state(e, STAG_TPT_VALID);
	key = e->key;

	KUNIT_EXPECT_EQ(test, stag_tpt_invalidate_key(tpt, key, &pd[0], c->other_qp ? 18 : 17,
						      c->remote), c->expected);
	if (c->expected) {
		KUNIT_EXPECT_EQ(test, stag_tpt_state(e),
				c->unbound ? STAG_TPT_FREE : STAG_TPT_VALID);
	} else {
		KUNIT_EXPECT_EQ(test, stag_tpt_state(e), STAG_TPT_INVALID);
		if (c->type == STAG_TPT_MW) {
			KUNIT_EXPECT_NULL(test, e->parent);
			KUNIT_EXPECT_EQ(test, atomic_read(&region->windows), 0);
		}
	}
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 1U);
	/* A key nothing has is ENOENT. */
	KUNIT_EXPECT_EQ(test, stag_tpt_invalidate_key(tpt, key ^ 1, &pd[0], 17, false), -ENOENT);
	stag_tpt_remove(tpt, e);
}

/*
 * Page lists are read outside the gate under RCU (restrack, debugfs)
 * while a rereg or a fast registration lets them go: the last put frees
 * a list only after a grace period.
 */
static void stag_tpt_page_list_outlives_readers(struct kunit *test)
{
	u64 run = stag_run_make(page_to_pfn(ZERO_PAGE(0)), 1);
	struct stag_pages *pages;
	u64 npages;
	int err;

	pages = stag_pages_from_runs(&run, 1, &err);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	rcu_read_lock();
	stag_pages_put(pages);
	npages = READ_ONCE(pages->npages);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, npages, 1ULL);
}

static struct kunit_case stag_tpt_cases[] = {
	KUNIT_CASE(stag_tpt_add_gives_findable_key),
	KUNIT_CASE(stag_tpt_lookup_needs_the_key_byte),
	KUNIT_CASE(stag_tpt_lookup_after_remove_fails),
	KUNIT_CASE(stag_tpt_full_table_is_enomem),
	KUNIT_CASE(stag_tpt_key_rotates_on_reuse),
	KUNIT_CASE(stag_tpt_matches_naive_table),
	KUNIT_CASE_SLOW(stag_tpt_remove_waits_for_readers),
	KUNIT_CASE(stag_tpt_invalidate_waits_for_accesses),
	KUNIT_CASE(stag_tpt_put_leaves_entry_alone),
	KUNIT_CASE_PARAM(stag_tpt_invalidate_key_rules, inv_gen_params),
	KUNIT_CASE(stag_tpt_page_list_outlives_readers),
	{}
};

static struct kunit_suite stag_tpt_suite = {
	.name = "stag_tpt",
	.test_cases = stag_tpt_cases,
};

kunit_test_suite(stag_tpt_suite);
