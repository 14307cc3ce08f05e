/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag TPT: the translation and protection table. Maps a 32-bit key (24-bit
 * index << 8 | 8-bit key byte) to the entry of a memory region or window.
 */
#ifndef _STAG_TPT_H
#define _STAG_TPT_H

#include <linux/completion.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/wait_bit.h>
#include <linux/xarray.h>

struct ib_pd;
struct stag_pages;

#define STAG_KEY_INDEX_BITS	24
#define STAG_KEY_INDEX_MAX	((1U << STAG_KEY_INDEX_BITS) - 1)

static inline u32 stag_key_index(u32 key)
{
	return key >> 8;
}

static inline u8 stag_key_byte(u32 key)
{
	return key & 0xff;
}

static inline u32 stag_key_make(u32 index, u8 byte)
{
	return index << 8 | byte;
}

enum stag_tpt_type {
	STAG_TPT_MR = 1,
	STAG_TPT_MW,
};

enum stag_tpt_state {
	STAG_TPT_FREE,		/* allocated, never made valid (fast-reg MR, MW) */
	STAG_TPT_INVALID,	/* was valid; invalidated or being deregistered */
	STAG_TPT_VALID,
};

/* Which entries a Local Invalidate or a Send with Invalidate may name. */
enum stag_tpt_inv {
	STAG_TPT_INV_NONE,	/* user and DMA regions, type 1 windows */
	STAG_TPT_INV_REGION,	/* fast-registration regions */
	STAG_TPT_INV_WINDOW,	/* type 2 windows */
};

/*
 * What the gate reads is written before state becomes VALID and not
 * changed while it is VALID: a change of translation first makes the entry
 * INVALID (smp_store_release on state, smp_load_acquire in the gate).
 *
 * @pages is also read outside the gate (restrack, debugfs), under RCU:
 * it is changed with WRITE_ONCE() and a page list is freed only after a
 * grace period.
 */
struct stag_tpt_entry {
	refcount_t ref;
	u32 key;
	u8 type;		/* enum stag_tpt_type */
	u8 state;		/* enum stag_tpt_state */
	u8 inv;			/* enum stag_tpt_inv */
	int access;		/* IB_ACCESS_* */
	struct ib_pd *pd;
	u64 iova;
	u64 length;
	struct stag_pages *pages;	/* NULL: iova is a kernel address (DMA MR) */
	u64 pages_offset;	/* where iova falls in pages */
	u32 qpn;		/* a type 2 window: the only QP it may be used through */
	/* Under the table's lock: */
	struct stag_tpt_entry *parent;	/* a bound window: its region */
	atomic_t windows;	/* a region: windows bound over it */
	void *owner;		/* the stag_mr or stag_mw */
	atomic_t draining;	/* invalidations waiting for accesses to end */
	struct completion idle;	/* the last reference is gone */
	struct rcu_head rcu;
};

/*
 * @lock serialises every change of what a key names once the entry is
 * published: binds, unbinds and invalidations, deallocation of windows and
 * the deregistration of regions. Its holder may wait for accesses to drain
 * (stag_tpt_invalidate()), so the rule is: take @lock first, then look
 * entries up; never wait for @lock while holding a reference.
 */
struct stag_tpt {
	struct xarray xa;
	struct mutex lock;	/* key changes: see above */
	u32 next;		/* cyclic allocation cursor */
	u32 max_index;
	u8 lap;			/* bumped each time the cursor wraps */
	atomic_t count;
	atomic64_t refused[4];	/* the gate's refusals, by enum stag_gate_refusal */
};

/*
 * Accesses in flight hold entry references, and stag_tpt_invalidate()
 * waits for them to go: to lockdep, holding references for an access is
 * holding this map for read, and waiting for them is taking it for write.
 * A thread that waits for a lock while it holds references for an access,
 * where another may hold that lock while it waits for a drain, is then a
 * reported deadlock.
 */
#ifdef CONFIG_LOCKDEP
extern struct lockdep_map stag_tpt_access_map;
#endif

static inline void stag_tpt_access_begin(void)
{
	lock_map_acquire_read(&stag_tpt_access_map);
}

static inline void stag_tpt_access_end(void)
{
	lock_map_release(&stag_tpt_access_map);
}

void stag_tpt_init(struct stag_tpt *tpt, u32 max_index);
void stag_tpt_uninit(struct stag_tpt *tpt);
int __must_check stag_tpt_add(struct stag_tpt *tpt, struct stag_tpt_entry *e);
void stag_tpt_remove(struct stag_tpt *tpt, struct stag_tpt_entry *e);
struct stag_tpt_entry *stag_tpt_lookup(struct stag_tpt *tpt, u32 key);
struct stag_tpt_entry *stag_tpt_lookup_index(struct stag_tpt *tpt, u32 index);
void stag_tpt_entry_init(struct stag_tpt_entry *e, enum stag_tpt_type type, void *owner);
void stag_tpt_put(struct stag_tpt_entry *e);

void stag_tpt_invalidate(struct stag_tpt_entry *e);
void stag_tpt_unbind(struct stag_tpt *tpt, struct stag_tpt_entry *e);
int stag_tpt_invalidate_key(struct stag_tpt *tpt, u32 key, const struct ib_pd *pd, u32 qpn,
			    bool remote);

static inline void stag_tpt_set_state(struct stag_tpt_entry *e, enum stag_tpt_state state)
{
	/* Pairs with stag_tpt_state(): the fields are set before VALID shows. */
	smp_store_release(&e->state, state);
}

static inline enum stag_tpt_state stag_tpt_state(const struct stag_tpt_entry *e)
{
	/* Pairs with stag_tpt_set_state(). */
	return smp_load_acquire(&e->state);
}

#if IS_ENABLED(CONFIG_KUNIT)
void stag_tpt_put_gap(struct stag_tpt_entry *e);
#endif

#endif /* _STAG_TPT_H */
