/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag TPT: the translation and protection table. Maps a 32-bit key (24-bit
 * index << 8 | 8-bit key byte) to the entry of a memory region or window.
 */
#ifndef _STAG_TPT_H
#define _STAG_TPT_H

#include <linux/completion.h>
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

/*
 * What the gate reads is written before state becomes VALID and not
 * changed while it is VALID: a change of translation first makes the entry
 * INVALID (smp_store_release on state, smp_load_acquire in the gate).
 */
struct stag_tpt_entry {
	refcount_t ref;
	u32 key;
	u8 type;		/* enum stag_tpt_type */
	u8 state;		/* enum stag_tpt_state */
	int access;		/* IB_ACCESS_* */
	struct ib_pd *pd;
	u64 iova;
	u64 length;
	struct stag_pages *pages;	/* NULL: iova is a kernel address (DMA MR) */
	u64 pages_offset;	/* where iova falls in pages */
	u32 qpn;		/* a type 2 window: the only QP it may be used through */
	void *owner;		/* the stag_mr or stag_mw */
	atomic_t draining;	/* invalidations waiting for accesses to end */
	struct completion idle;	/* the last reference is gone */
	struct rcu_head rcu;
};

struct stag_tpt {
	struct xarray xa;
	u32 next;		/* cyclic allocation cursor */
	u32 max_index;
	u8 lap;			/* bumped each time the cursor wraps */
	atomic_t count;
};

void stag_tpt_init(struct stag_tpt *tpt, u32 max_index);
void stag_tpt_uninit(struct stag_tpt *tpt);
int __must_check stag_tpt_add(struct stag_tpt *tpt, struct stag_tpt_entry *e);
void stag_tpt_remove(struct stag_tpt *tpt, struct stag_tpt_entry *e);
struct stag_tpt_entry *stag_tpt_lookup(struct stag_tpt *tpt, u32 key);
struct stag_tpt_entry *stag_tpt_lookup_index(struct stag_tpt *tpt, u32 index);
void stag_tpt_entry_init(struct stag_tpt_entry *e, enum stag_tpt_type type, void *owner);

void stag_tpt_invalidate(struct stag_tpt_entry *e);

static inline void stag_tpt_put(struct stag_tpt_entry *e)
{
	if (refcount_dec_and_test(&e->ref)) {
		complete(&e->idle);
		return;
	}
	/* Pairs with the barrier in stag_tpt_invalidate(). */
	smp_mb__after_atomic();
	if (atomic_read(&e->draining))
		wake_up_var(&e->ref);
}

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

#endif /* _STAG_TPT_H */
