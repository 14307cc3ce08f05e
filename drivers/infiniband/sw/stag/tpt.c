// SPDX-License-Identifier: GPL-2.0
/*
 * The TPT maps keys to entries. Indexes come from an xarray, allocated
 * cyclically from a random start; lookup is one xa_load() under RCU.
 *
 * Key bytes. A new entry gets the table's lap counter as its key byte, and
 * the lap counter moves on each time cyclic allocation wraps. An index is
 * handed out at most once per lap, so a key that was ever valid cannot be
 * matched again by a later entry at the same index before 256 laps
 * (2^32 allocations) have gone by. Entries whose key changes in place (a
 * memory window bind, a fast-registration) move the key byte themselves.
 */

#include <linux/random.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "compat.h"
#include "pages.h"
#include "tpt.h"
#include "trace.h"

#ifdef CONFIG_LOCKDEP
static struct lock_class_key stag_tpt_access_key;
struct lockdep_map stag_tpt_access_map = STATIC_LOCKDEP_MAP_INIT("stag_tpt_access",
								 &stag_tpt_access_key);
#endif

/* Waiting for accesses to drain, as lockdep sees it. */
static void access_drain_wait_begin(void)
{
	lock_map_acquire(&stag_tpt_access_map);
	lock_map_release(&stag_tpt_access_map);
}

void stag_tpt_init(struct stag_tpt *tpt, u32 max_index)
{
	xa_init_flags(&tpt->xa, XA_FLAGS_ALLOC1);
	mutex_init(&tpt->lock);
	tpt->max_index = min(max_index, STAG_KEY_INDEX_MAX);
	tpt->next = get_random_u32_inclusive(1, tpt->max_index);
	tpt->lap = get_random_u8();
	atomic_set(&tpt->count, 0);
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_init);

void stag_tpt_uninit(struct stag_tpt *tpt)
{
	WARN_ON(!xa_empty(&tpt->xa));
	xa_destroy(&tpt->xa);
	mutex_destroy(&tpt->lock);
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_uninit);

void stag_tpt_entry_init(struct stag_tpt_entry *e, enum stag_tpt_type type, void *owner)
{
	refcount_set(&e->ref, 1);
	init_completion(&e->idle);
	e->type = type;
	e->state = STAG_TPT_FREE;
	e->owner = owner;
	atomic_set(&e->windows, 0);
	atomic_set(&e->draining, 0);
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_entry_init);

/**
 * stag_tpt_add() - give an entry a key and make it findable
 * @tpt: the table
 * @e: the entry, initialised, in any state
 *
 * Context: process or softirq context; takes the xarray lock.
 * Return: 0 with e->key set, or -ENOMEM when the table is full.
 */
int stag_tpt_add(struct stag_tpt *tpt, struct stag_tpt_entry *e)
{
	u32 index;
	int ret;

	xa_lock_bh(&tpt->xa);
	ret = __xa_alloc_cyclic(&tpt->xa, &index, e, XA_LIMIT(1, tpt->max_index),
				&tpt->next, GFP_ATOMIC);
	if (ret == 1) {
		tpt->lap++;
		ret = 0;
	}
	if (!ret)
		WRITE_ONCE(e->key, stag_key_make(index, tpt->lap));
	xa_unlock_bh(&tpt->xa);
	if (ret < 0)
		return ret == -EBUSY ? -ENOMEM : ret;
	atomic_inc(&tpt->count);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_add);

/**
 * stag_tpt_remove() - make an entry unfindable and wait until it is idle
 * @tpt: the table
 * @e: the entry, whose initial reference the caller gives up here
 *
 * Afterwards no lookup can return @e and no access through it is in
 * flight: the caller may free what the entry points to, and then the
 * entry itself with kfree_rcu() (a lookup may still be reading it).
 *
 * Context: process context; sleeps.
 */
void stag_tpt_remove(struct stag_tpt *tpt, struct stag_tpt_entry *e)
{
	might_sleep();
	stag_tpt_set_state(e, STAG_TPT_INVALID);
	xa_erase_bh(&tpt->xa, stag_key_index(e->key));
	atomic_dec(&tpt->count);
	stag_tpt_put(e);
	access_drain_wait_begin();
	wait_for_completion(&e->idle);
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_remove);

/**
 * stag_tpt_lookup() - find the entry a key names
 * @tpt: the table
 * @key: the full key, index and key byte
 *
 * Reference rule: a returned entry carries a reference that the caller
 * owns and must drop with stag_tpt_put() once its access is done. While
 * the reference is held, stag_tpt_remove() waits, so the entry and its
 * page list stay valid; the entry's state may still change.
 *
 * The entry is returned in whatever state it is in: whether it may be used
 * is for the gate to say.
 *
 * Context: any.
 * Return: the entry, or NULL when no entry has this key.
 */
struct stag_tpt_entry *stag_tpt_lookup(struct stag_tpt *tpt, u32 key)
{
	struct stag_tpt_entry *e;

	rcu_read_lock();
	e = xa_load(&tpt->xa, stag_key_index(key));
	if (e && (READ_ONCE(e->key) != key || !refcount_inc_not_zero(&e->ref)))
		e = NULL;
	rcu_read_unlock();
	return e;
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_lookup);

/**
 * stag_tpt_lookup_index() - find the entry at an index, whatever its key byte
 * @tpt: the table
 * @index: the 24-bit index
 *
 * For the owner of an entry naming it (binding a window); the data path
 * always uses stag_tpt_lookup(). Same reference rule.
 *
 * Context: under the table's lock, which every change of a binding takes.
 * Return: the entry with a reference, or NULL.
 */
struct stag_tpt_entry *stag_tpt_lookup_index(struct stag_tpt *tpt, u32 index)
{
	struct stag_tpt_entry *e;

	lockdep_assert_held(&tpt->lock);
	rcu_read_lock();
	e = xa_load(&tpt->xa, index);
	if (e && !refcount_inc_not_zero(&e->ref))
		e = NULL;
	rcu_read_unlock();
	return e;
}

/**
 * stag_tpt_invalidate() - make an entry INVALID and wait out its accesses
 * @e: the entry, with exactly one reference the caller holds (from
 *	stag_tpt_lookup(), or taken on an entry it owns)
 *
 * Afterwards no access through @e is in flight, so its owner may change
 * or release the memory behind it. Accesses take their references only
 * while they copy, never while waiting for anything, so the wait ends.
 * Concurrent invalidations of one entry each count themselves out.
 *
 * Context: process context; sleeps. The caller holds no reference for an
 * access (see stag_tpt_access_map).
 */
void stag_tpt_invalidate(struct stag_tpt_entry *e)
{
	might_sleep();
	stag_tpt_set_state(e, STAG_TPT_INVALID);
	atomic_inc(&e->draining);
	access_drain_wait_begin();
	/* The owner's reference, and one per invalidation in progress. */
	wait_var_event(&e->ref, refcount_read(&e->ref) <= 1 + atomic_read(&e->draining));
	atomic_dec(&e->draining);
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_invalidate);

/*
 * Between the decrement and the wake-up in stag_tpt_put(), where another
 * thread may drop the last reference and the owner free the entry. KUnit
 * puts that other thread here.
 */
VISIBLE_IF_KUNIT void stag_tpt_put_gap(struct stag_tpt_entry *e)
{
	KUNIT_STATIC_STUB_REDIRECT(stag_tpt_put_gap, e);
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_put_gap);

/**
 * stag_tpt_put() - drop a reference
 * @e: the entry
 *
 * Once the count is down the entry may be freed at any moment by the
 * thread that drops the last reference, so nothing here reads it after
 * the decrement: a drain waiting for the count is woken by the entry's
 * address alone.
 *
 * Context: any.
 */
void stag_tpt_put(struct stag_tpt_entry *e)
{
	if (refcount_dec_and_test(&e->ref)) {
		complete(&e->idle);
		return;
	}
	stag_tpt_put_gap(e);
	/*
	 * Pairs with the barrier in wait_var_event(): either the drain sees
	 * the new count, or it is on the wait queue wake_up_var() looks at.
	 */
	smp_mb__after_atomic();
	wake_up_var(&e->ref);
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_put);

/**
 * stag_tpt_unbind() - invalidate a window and release its binding
 * @tpt: the window's table; the caller holds its lock
 * @e: the window's entry, with one reference the caller holds
 *
 * Afterwards no access through the window is in flight and it names no
 * memory: its page list is let go and its region counts one window less,
 * so the region may be deregistered.
 *
 * Context: process context; waits for accesses to drain.
 */
void stag_tpt_unbind(struct stag_tpt *tpt, struct stag_tpt_entry *e)
{
	struct stag_pages *pages = e->pages;

	lockdep_assert_held(&tpt->lock);
	stag_tpt_invalidate(e);
	WRITE_ONCE(e->pages, NULL);
	e->length = 0;
	e->qpn = 0;
	if (e->parent)
		atomic_dec(&e->parent->windows);
	e->parent = NULL;
	if (pages)
		stag_pages_put(pages);
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_unbind);

/* The rules of IBA 10.6.7.2 and 10.8.5, in a fixed order, each with its errno. */
static int check_invalidate(const struct stag_tpt_entry *e, const struct ib_pd *pd, u32 qpn,
			    bool remote)
{
	if (e->inv == STAG_TPT_INV_NONE)
		return -EINVAL;
	if (e->pd != pd)
		return -EPERM;
	if (e->inv == STAG_TPT_INV_WINDOW) {
		if (remote && e->qpn != qpn)
			return -EPERM;
		return stag_tpt_state(e) == STAG_TPT_VALID ? 0 : -ENOENT;
	}
	return atomic_read(&e->windows) ? -EBUSY : 0;
}

/**
 * stag_tpt_invalidate_key() - Local Invalidate, or the invalidation a Send
 * with Invalidate asks for
 * @tpt: the table that holds the key
 * @key: the key to invalidate
 * @pd: the PD of the QP that invalidates (for a Send with Invalidate, the
 *	QP it arrived at)
 * @qpn: that QP's number
 * @remote: the request came from the QP's peer
 *
 * Fast-registration regions and type 2 windows can be invalidated by key;
 * a type 2 window by the peer of the QP it was bound through, or locally
 * by any QP of its PD. A window is unbound as well, so that its region may
 * be deregistered afterwards.
 *
 * Context: process context; takes the table's lock and waits for accesses
 * in flight through the entry. The caller holds no reference.
 * Return: 0; -ENOENT when the key names nothing, or names a window that is
 * not bound; -EINVAL for an entry that cannot be invalidated by key;
 * -EPERM for one of another PD, or a window bound through another QP than
 * the one a remote request arrived at; -EBUSY for a region with windows
 * bound over it.
 */
int stag_tpt_invalidate_key(struct stag_tpt *tpt, u32 key, const struct ib_pd *pd, u32 qpn,
			    bool remote)
{
	struct stag_tpt_entry *e;
	int ret = -ENOENT;

	might_sleep();
	mutex_lock(&tpt->lock);
	e = stag_tpt_lookup(tpt, key);
	if (!e)
		goto out_unlock;
	ret = check_invalidate(e, pd, qpn, remote);
	if (!ret && e->inv == STAG_TPT_INV_WINDOW)
		stag_tpt_unbind(tpt, e);
	else if (!ret)
		stag_tpt_invalidate(e);
	stag_tpt_put(e);
out_unlock:
	mutex_unlock(&tpt->lock);
	trace_stag_invalidate(pd ? pd->device : NULL, qpn, key, remote, ret);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_invalidate_key);
