// SPDX-License-Identifier: GPL-2.0
/*
 * Responder resources (IBA 9.7.5.1.5). An RC responder remembers each read
 * and atomic it executed, so that a requester that lost the response can
 * ask again: a read is answered again from the memory (through the gate
 * again, by the caller), an atomic gets the result it had and is not
 * executed a second time. A QP keeps max_dest_rd_atomic of them, and the
 * oldest goes when a new one is needed: a requester has at most
 * max_rd_atomic (at most our max_dest_rd_atomic) outstanding, so the one
 * that goes is one it no longer waits for.
 *
 * Nothing here knows a QP: the caller serializes (the responder's mutex).
 */

#include <linux/overflow.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "pkt.h"
#include "rdres.h"

int stag_rdres_init(struct stag_rdres_table *t)
{
	t->next = 0;
	t->res = kcalloc(STAG_RDRES_MAX, sizeof(*t->res), GFP_KERNEL);
	return t->res ? 0 : -ENOMEM;
}
EXPORT_SYMBOL_IF_KUNIT(stag_rdres_init);

void stag_rdres_uninit(struct stag_rdres_table *t)
{
	kfree(t->res);
	t->res = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(stag_rdres_uninit);

/* Forgets everything: the connection starts over. */
void stag_rdres_reset(struct stag_rdres_table *t)
{
	t->next = 0;
	if (t->res)
		memset(t->res, 0, STAG_RDRES_MAX * sizeof(*t->res));
}
EXPORT_SYMBOL_IF_KUNIT(stag_rdres_reset);

static u32 count(u32 n)
{
	return clamp_t(u32, n, 1, STAG_RDRES_MAX);
}

/**
 * stag_rdres_new() - the resource for a new read or atomic
 * @t: the table
 * @n: how many the QP keeps (max_dest_rd_atomic; 0 counts as one)
 *
 * Return: a cleared resource marked used: the oldest of the @n, when all
 * are taken.
 */
struct stag_rdres *stag_rdres_new(struct stag_rdres_table *t, u32 n)
{
	struct stag_rdres *r = &t->res[t->next++ % count(n)];

	memset(r, 0, sizeof(*r));
	r->used = true;
	return r;
}
EXPORT_SYMBOL_IF_KUNIT(stag_rdres_new);

/**
 * stag_rdres_find() - the read or atomic whose PSNs hold @psn
 * @t: the table
 * @n: how many the QP keeps
 * @psn: a duplicate request's PSN
 *
 * Return: the resource, or NULL when none is kept (too old: the requester
 * asks again from the last ACK, so it cannot be waiting for it).
 */
struct stag_rdres *stag_rdres_find(struct stag_rdres_table *t, u32 n, u32 psn)
{
	u32 i;

	n = count(n);
	for (i = 0; i < n; i++) {
		struct stag_rdres *r = &t->res[i];

		if (r->used && stag_psn_cmp(psn, r->first_psn) >= 0 &&
		    stag_psn_cmp(psn, r->last_psn) <= 0)
			return r;
	}
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(stag_rdres_find);

/**
 * stag_rdres_may_replay() - may a duplicate read be answered from @r?
 * @r: the resource its PSN found
 * @p: the duplicate read request
 * @mtu: the QP's path MTU in bytes
 *
 * A read asked again must name the same R_Key, and resume at the response
 * its PSN names: the address of that response's first byte, up to the end
 * of the range asked first at most (a requester resumes a read from its
 * first missing response). Anything else is not the request we answered:
 * its responses would carry the bytes of one place under the PSN of
 * another, and a forged one must not reach memory it never asked for. The
 * memory is checked again by the gate when the responses are built.
 */
bool stag_rdres_may_replay(const struct stag_rdres *r, const struct stag_pkt *p, u32 mtu)
{
	u64 off = (u64)((p->psn - r->first_psn) & STAG_PSN_MASK) * mtu, at, end, r_end;

	if (r->atomic || p->rkey != r->rkey)
		return false;
	if (check_add_overflow(r->va, off, &at) ||
	    check_add_overflow(p->va, (u64)p->dmalen, &end) ||
	    check_add_overflow(r->va, (u64)r->len, &r_end))
		return false;
	return p->va == at && end <= r_end;
}
EXPORT_SYMBOL_IF_KUNIT(stag_rdres_may_replay);
