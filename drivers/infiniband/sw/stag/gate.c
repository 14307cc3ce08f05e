// SPDX-License-Identifier: GPL-2.0
/*
 * The gate. Every access to registered memory, local (L_Key) or remote
 * (R_Key), by every opcode and transport, goes through stag_gate_enter():
 * lookup, then stag_gate_check(), then the translation. Nothing else in
 * stag turns a key into memory.
 */

#include <linux/overflow.h>
#include <rdma/ib_verbs.h>
#include <kunit/visibility.h>

#include "gate.h"
#include "tpt.h"
#include "trace.h"

/* Rights a requester can ask for; local read is always granted. */
#define STAG_GATE_REMOTE (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
			  IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_FLUSH_GLOBAL | \
			  IB_ACCESS_FLUSH_PERSISTENT)
#define STAG_GATE_RIGHTS (IB_ACCESS_LOCAL_WRITE | STAG_GATE_REMOTE)

/**
 * stag_gate_check() - may this access use this entry?
 * @e: the entry the key named
 * @key: the key presented
 * @who: the PD and QP number of the QP making the access
 * @access: the IB_ACCESS_* rights the access needs (0 for a local read)
 * @addr: the first byte, in the entry's iova space
 * @len: the number of bytes; zero moves nothing and needs no bounds
 *
 * The checks run in a fixed order and each fails with its own errno, so
 * the caller can tell which one failed and report it precisely. Regions
 * and memory windows are checked alike, each against its own bounds and
 * rights; a window serves remote accesses only (it is never an L_Key),
 * and a type 2 window only the QP it was bound through.
 *
 * Return: 0, or
 * -ENOENT when the key does not name a VALID entry,
 * -EPERM when the entry belongs to another PD, or is a window bound to
 * another QP,
 * -EACCES when it lacks a right the access needs, or is a window and the
 * access is local,
 * -ERANGE when [addr, addr + len) is not inside [iova, iova + length).
 */
int stag_gate_check(const struct stag_tpt_entry *e, u32 key, const struct stag_gate_who *who,
		    int access, u64 addr, u64 len)
{
	u64 last, limit;

	if (READ_ONCE(e->key) != key || stag_tpt_state(e) != STAG_TPT_VALID)
		return -ENOENT;
	if (e->pd != who->pd)
		return -EPERM;
	if (e->qpn && e->qpn != who->qpn)
		return -EPERM;
	if (access & ~STAG_GATE_RIGHTS || access & ~e->access)
		return -EACCES;
	if (e->type == STAG_TPT_MW && !(access & STAG_GATE_REMOTE))
		return -EACCES;
	if (!len)
		return 0;
	/*
	 * Compare last bytes, not ends: a region may end at U64_MAX, and
	 * there one past its end does not exist.
	 */
	if (!e->length || addr < e->iova || check_add_overflow(addr, len - 1, &last) ||
	    check_add_overflow(e->iova, e->length - 1, &limit) || last > limit)
		return -ERANGE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_gate_check);

/* Every refusal is counted in the table it was checked against, by reason. */
static void count_refusal(struct stag_tpt *tpt, int err)
{
	enum stag_gate_refusal why;

	switch (err) {
	case -ENOENT:
		why = STAG_REFUSED_KEY;
		break;
	case -EPERM:
		why = STAG_REFUSED_PD;
		break;
	case -EACCES:
		why = STAG_REFUSED_RIGHTS;
		break;
	default:
		why = STAG_REFUSED_BOUNDS;
		break;
	}
	atomic64_inc(&tpt->refused[why]);
}

/*
 * Looks @key up and checks it for [@addr, @addr + *@len), or with @whole
 * for all of the entry, from its first byte, *@len then set to its
 * length. On success the entry stays referenced in @ref.
 */
static int enter(struct stag_tpt *tpt, u32 key, const struct stag_gate_who *who, int access,
		 u64 addr, u64 *len, bool whole, struct stag_gate_ref *ref)
{
	struct stag_tpt_entry *e;
	int ret = -ENOENT;

	e = stag_tpt_lookup(tpt, key);
	if (e) {
		if (whole) {
			addr = READ_ONCE(e->iova);
			*len = READ_ONCE(e->length);
		}
		ret = stag_gate_check(e, key, who, access, addr, *len);
	}
	if (ret) {
		if (e)
			stag_tpt_put(e);
		count_refusal(tpt, ret);
		trace_stag_gate_refused(who->pd ? who->pd->device : NULL, who->qpn, key, ret,
					access, addr, *len);
		return ret;
	}
	ref->entry = e;
	ref->key = key;
	ref->offset = addr - e->iova + e->pages_offset;
	return 0;
}

/**
 * stag_gate_enter() - check an access and pin what it names
 * @tpt: the device's table
 * @key: the L_Key or R_Key presented
 * @who: the PD and QP number of the QP making the access
 * @access: the IB_ACCESS_* rights the access needs (0 for a local read)
 * @addr: the first byte, in the entry's iova space
 * @len: the number of bytes
 * @ref: filled on success
 *
 * A zero-length access moves nothing, and the IBA (C9-88, o10-35) has the
 * key and address of a zero-length transfer go unchecked, so it passes
 * without a lookup.
 *
 * On success the entry stays referenced, so it cannot be deregistered
 * under the access, until stag_gate_exit(). An entry invalidated during
 * the access keeps its pages until then; the access is the last to use
 * the old translation, and none that starts later can.
 *
 * Return: 0 or the errno of the failed check (see stag_gate_check()).
 */
int stag_gate_enter(struct stag_tpt *tpt, u32 key, const struct stag_gate_who *who, int access,
		    u64 addr, u64 len, struct stag_gate_ref *ref)
{
	ref->entry = NULL;
	ref->offset = 0;
	if (!len)
		return 0;
	return enter(tpt, key, who, access, addr, &len, false, ref);
}
EXPORT_SYMBOL_IF_KUNIT(stag_gate_enter);

/**
 * stag_gate_enter_key() - check a key for an access of no bytes
 * @tpt: the device's table
 * @key: the R_Key presented
 * @who: the PD and QP number of the QP making the access
 * @access: the IB_ACCESS_* rights the access needs
 * @ref: filled on success
 *
 * A zero-length READ or WRITE passes unchecked (stag_gate_enter()), but
 * a FLUSH is a request about the key itself: a zero-length range FLUSH
 * still needs a valid key of the QP's PD with the flush rights, as
 * rdma_rxe checks it. There are no bytes, so no bounds.
 *
 * Return: 0 or the errno of the failed check (see stag_gate_check()).
 */
int stag_gate_enter_key(struct stag_tpt *tpt, u32 key, const struct stag_gate_who *who,
			int access, struct stag_gate_ref *ref)
{
	u64 len = 0;

	ref->entry = NULL;
	ref->offset = 0;
	return enter(tpt, key, who, access, 0, &len, false, ref);
}
EXPORT_SYMBOL_IF_KUNIT(stag_gate_enter_key);

/**
 * stag_gate_enter_whole() - check an access to all that a key names
 * @tpt: the device's table
 * @key: the R_Key presented
 * @who: the PD and QP number of the QP making the access
 * @access: the IB_ACCESS_* rights the access needs
 * @len: set to the number of bytes checked, from the entry's first
 * @ref: filled on success; its entry is set even for an empty one
 *
 * A FLUSH of a whole region (IBA A19.4.1.2, the region selectivity) names
 * a key and no range: the bounds checked are the entry's own, as it has
 * them when it is checked. Everything else is stag_gate_enter()'s.
 *
 * Return: 0 or the errno of the failed check (see stag_gate_check()).
 */
int stag_gate_enter_whole(struct stag_tpt *tpt, u32 key, const struct stag_gate_who *who,
			  int access, u64 *len, struct stag_gate_ref *ref)
{
	ref->entry = NULL;
	ref->offset = 0;
	*len = 0;
	return enter(tpt, key, who, access, 0, len, true, ref);
}
EXPORT_SYMBOL_IF_KUNIT(stag_gate_enter_whole);

void stag_gate_exit(struct stag_gate_ref *ref)
{
	if (ref->entry)
		stag_tpt_put(ref->entry);
	ref->entry = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(stag_gate_exit);
