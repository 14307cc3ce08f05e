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

#include "tpt.h"

void stag_tpt_init(struct stag_tpt *tpt, u32 max_index)
{
	xa_init_flags(&tpt->xa, XA_FLAGS_ALLOC1);
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
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_uninit);

void stag_tpt_entry_init(struct stag_tpt_entry *e, enum stag_tpt_type type, void *owner)
{
	refcount_set(&e->ref, 1);
	init_completion(&e->idle);
	e->type = type;
	e->state = STAG_TPT_FREE;
	e->owner = owner;
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
 * Return: the entry with a reference, or NULL.
 */
struct stag_tpt_entry *stag_tpt_lookup_index(struct stag_tpt *tpt, u32 index)
{
	struct stag_tpt_entry *e;

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
 * Context: process context; sleeps. The caller holds no gate reference.
 */
void stag_tpt_invalidate(struct stag_tpt_entry *e)
{
	might_sleep();
	stag_tpt_set_state(e, STAG_TPT_INVALID);
	atomic_inc(&e->draining);
	/* Pairs with the barrier in stag_tpt_put(). */
	smp_mb__after_atomic();
	/* The owner's reference, and one per invalidation in progress. */
	wait_var_event(&e->ref, refcount_read(&e->ref) <= 1 + atomic_read(&e->draining));
	atomic_dec(&e->draining);
}
EXPORT_SYMBOL_IF_KUNIT(stag_tpt_invalidate);
