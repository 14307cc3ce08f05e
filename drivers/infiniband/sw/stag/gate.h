/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag gate: the one check every data-path access passes before a byte
 * moves.
 */
#ifndef _STAG_GATE_H
#define _STAG_GATE_H

#include <linux/types.h>

#include "tpt.h"

struct ib_pd;

/* Why the gate refused an access, in the order it checks. */
enum stag_gate_refusal {
	STAG_REFUSED_KEY,	/* -ENOENT */
	STAG_REFUSED_PD,	/* -EPERM */
	STAG_REFUSED_RIGHTS,	/* -EACCES */
	STAG_REFUSED_BOUNDS,	/* -ERANGE */
	STAG_GATE_REFUSALS
};

static_assert(ARRAY_SIZE(((struct stag_tpt *)0)->refused) == STAG_GATE_REFUSALS);

/* A passed check: what may be accessed, and where it starts. */
struct stag_gate_ref {
	struct stag_tpt_entry *entry;	/* holds a reference; NULL for len 0 */
	u64 offset;			/* byte offset into entry->pages */
	u32 key;			/* the key that passed */
};

/* Who makes an access: the PD and QP number of the QP it arrives at. */
struct stag_gate_who {
	const struct ib_pd *pd;
	u32 qpn;
};

int stag_gate_check(const struct stag_tpt_entry *e, u32 key, const struct stag_gate_who *who,
		    int access, u64 addr, u64 len);
int __must_check stag_gate_enter(struct stag_tpt *tpt, u32 key, const struct stag_gate_who *who,
				 int access, u64 addr, u64 len, struct stag_gate_ref *ref);
int __must_check stag_gate_enter_key(struct stag_tpt *tpt, u32 key,
				     const struct stag_gate_who *who, int access,
				     struct stag_gate_ref *ref);
int __must_check stag_gate_enter_whole(struct stag_tpt *tpt, u32 key,
				       const struct stag_gate_who *who, int access, u64 *len,
				       struct stag_gate_ref *ref);
void stag_gate_exit(struct stag_gate_ref *ref);

/*
 * Is a passed check still good? False once the entry was invalidated or
 * its key moved on (a window rebound): the access must stop.
 */
static inline bool stag_gate_still_valid(const struct stag_gate_ref *ref)
{
	return stag_tpt_state(ref->entry) == STAG_TPT_VALID &&
	       READ_ONCE(ref->entry->key) == ref->key;
}

#endif /* _STAG_GATE_H */
