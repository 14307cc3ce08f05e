// SPDX-License-Identifier: GPL-2.0
/*
 * Scatter/gather lists over gate references, and the copies between them.
 *
 * Every byte the data path moves goes through stag_sgl_copy(),
 * stag_sgl_write() or stag_sgl_atomic(), from and to entries that
 * stag_gate_enter() checked and still holds. Before each page-sized chunk
 * the entries are checked again to still be valid under the key that was
 * presented: an access in flight when its region or window is invalidated
 * or rebound stops there with -EACCES, and never touches memory of the new
 * binding.
 */

#include <linux/highmem.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "pages.h"
#include "sgl.h"

/* Atomics are atomic against each other, on every QP of every device. */
static DEFINE_SPINLOCK(stag_atomic_lock);

void stag_sgl_init_kbuf(struct stag_sgl *sgl, const void *buf, u64 len)
{
	sgl->num = 0;
	sgl->kbuf = buf;
	sgl->length = len;
}

void stag_sgl_release(struct stag_sgl *sgl)
{
	u32 i;

	for (i = 0; i < sgl->num; i++)
		stag_gate_exit(&sgl->ent[i].ref);
	if (sgl->num)
		stag_tpt_access_end();
	sgl->num = 0;
	sgl->length = 0;
}

/**
 * stag_sgl_build() - pass every entry of a scatter list through the gate
 * @sgl: filled on success; empty on failure
 * @tpt: the table the keys belong to
 * @who: the QP making the access
 * @sge: the entries, from a WQE's kernel copy
 * @num: their number, at most STAG_MAX_SGE
 * @access: the rights every entry needs
 *
 * A list that holds entries holds gate references: until it is released,
 * its thread must not wait for a lock a drain may be waited under
 * (stag_tpt_access_map tells lockdep so).
 *
 * Return: 0, or the gate's errno for the first entry that fails.
 */
int stag_sgl_build(struct stag_sgl *sgl, struct stag_tpt *tpt, const struct stag_gate_who *who,
		   const struct stag_sge *sge, u32 num, int access)
{
	return stag_sgl_build_range(sgl, tpt, who, sge, num, access, 0, U64_MAX);
}

/**
 * stag_sgl_build_range() - pass the part of a scatter list that a range
 * of its bytes covers through the gate
 * @sgl: filled on success, with exactly the range; empty on failure
 * @tpt: the table the keys belong to
 * @who: the QP making the access
 * @sge: the entries, from a WQE's kernel copy
 * @num: their number, at most STAG_MAX_SGE
 * @access: the rights every entry needs
 * @off: the first byte of the range, counted over the entries in order
 * @len: its length; U64_MAX for everything from @off on
 *
 * A packet of a message names a piece of its scatter list: only the
 * entries (or the parts of them) under that piece are looked up and
 * checked, each for the bytes the piece takes of it.
 *
 * Return: 0; the gate's errno for the first entry that fails; -ERANGE
 * when the entries end before the range does.
 */
int stag_sgl_build_range(struct stag_sgl *sgl, struct stag_tpt *tpt,
			 const struct stag_gate_who *who, const struct stag_sge *sge, u32 num,
			 int access, u64 off, u64 len)
{
	bool all = len == U64_MAX;
	u32 i;
	int ret;

	sgl->num = 0;
	sgl->length = 0;
	sgl->kbuf = NULL;
	for (i = 0; i < num && len; i++) {
		struct stag_sgl_ent *ent = &sgl->ent[sgl->num];
		u64 n;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = min_t(u64, sge[i].length - off, len);
		ret = stag_gate_enter(tpt, sge[i].lkey, who, access, sge[i].addr + off, n,
				      &ent->ref);
		if (ret) {
			stag_sgl_release(sgl);
			return ret;
		}
		if (!sgl->num)
			stag_tpt_access_begin();
		ent->len = n;
		sgl->length += n;
		sgl->num++;
		off = 0;
		if (!all)
			len -= n;
	}
	if (len && !all) {
		stag_sgl_release(sgl);
		return -ERANGE;
	}
	return 0;
}

/* A one-entry list: the target of an RDMA or atomic operation. */
int stag_sgl_build_one(struct stag_sgl *sgl, struct stag_tpt *tpt, const struct stag_gate_who *who,
		       u32 key, u64 addr, u64 len, int access)
{
	struct stag_sge sge = { .addr = addr, .length = len, .lkey = key };

	if (len > U32_MAX)
		return -ERANGE;
	return stag_sgl_build(sgl, tpt, who, &sge, 1, access);
}

/*
 * The kernel address of byte @off of an entry, and how many bytes from
 * there are contiguous (at most @len). Regions without a page list are
 * kernel memory addressed by their iova (the DMA MR).
 */
static void *ent_map(const struct stag_sgl_ent *ent, u64 off, u64 len, u64 *chunk)
{
	const struct stag_tpt_entry *e = ent->ref.entry;
	u64 pos = ent->ref.offset + off;
	struct page *page;

	if (!e->pages) {
		*chunk = len;
		return (void *)(uintptr_t)pos;
	}
	page = stag_pages_page(e->pages, pos >> PAGE_SHIFT);
	if (!page)
		return NULL;
	*chunk = min_t(u64, len, PAGE_SIZE - offset_in_page(pos));
	return kmap_local_page(page) + offset_in_page(pos);
}

static void ent_unmap(const struct stag_sgl_ent *ent, void *addr)
{
	if (ent->ref.entry->pages)
		kunmap_local(addr);
}

/* A cursor over a list: which entry, and where in it. */
struct cursor {
	const struct stag_sgl *sgl;
	u32 idx;
	u64 off;
};

static void cursor_init(struct cursor *c, const struct stag_sgl *sgl, u64 off)
{
	c->sgl = sgl;
	c->idx = 0;
	c->off = off;
	if (sgl->kbuf)
		return;
	while (c->idx < sgl->num && c->off >= sgl->ent[c->idx].len) {
		c->off -= sgl->ent[c->idx].len;
		c->idx++;
	}
}

/* Maps up to @len bytes at the cursor; NULL when the entry is no longer valid. */
static void *cursor_map(struct cursor *c, u64 len, u64 *chunk)
{
	const struct stag_sgl_ent *ent;

	if (c->sgl->kbuf) {
		*chunk = len;
		return (void *)c->sgl->kbuf + c->off;
	}
	ent = &c->sgl->ent[c->idx];
	if (!stag_gate_still_valid(&ent->ref))
		return NULL;
	return ent_map(ent, c->off, min(len, ent->len - c->off), chunk);
}

static void cursor_unmap(struct cursor *c, void *addr)
{
	if (!c->sgl->kbuf)
		ent_unmap(&c->sgl->ent[c->idx], addr);
}

static void cursor_advance(struct cursor *c, u64 n)
{
	c->off += n;
	if (!c->sgl->kbuf && c->off == c->sgl->ent[c->idx].len) {
		c->idx++;
		c->off = 0;
	}
}

static int sgl_copy(struct stag_sgl *dst, u64 dst_off, const struct stag_sgl *src, u64 src_off,
		    u64 len, bool may_sleep)
{
	struct cursor d, s;

	if (WARN_ON_ONCE(dst_off + len > dst->length || src_off + len > src->length))
		return -EINVAL;
	cursor_init(&d, dst, dst_off);
	cursor_init(&s, src, src_off);
	while (len) {
		u64 dn, sn, n;
		void *dp, *sp;

		dp = cursor_map(&d, len, &dn);
		if (!dp)
			return -EACCES;
		sp = cursor_map(&s, dn, &sn);
		if (!sp) {
			cursor_unmap(&d, dp);
			return -EACCES;
		}
		n = min(dn, sn);
		memcpy(dp, sp, n);
		cursor_unmap(&s, sp);
		cursor_unmap(&d, dp);
		cursor_advance(&d, n);
		cursor_advance(&s, n);
		len -= n;
		if (may_sleep)
			cond_resched();
	}
	return 0;
}

/**
 * stag_sgl_copy() - copy bytes between two checked lists
 * @dst: the destination list
 * @dst_off: where in it to start
 * @src: the source list
 * @src_off: where in it to start
 * @len: how many bytes; both lists must hold them
 *
 * Context: process context (maps pages with kmap_local_page).
 * Return: 0, or -EACCES when an entry was invalidated during the copy
 * (what was copied before stays copied).
 */
int stag_sgl_copy(struct stag_sgl *dst, u64 dst_off, const struct stag_sgl *src, u64 src_off,
		  u64 len)
{
	might_sleep();
	return sgl_copy(dst, dst_off, src, src_off, len, true);
}

/* Copy a kernel buffer into a checked list. */
int stag_sgl_write(struct stag_sgl *dst, u64 dst_off, const void *buf, u64 len)
{
	struct stag_sgl src;

	stag_sgl_init_kbuf(&src, buf, len);
	return stag_sgl_copy(dst, dst_off, &src, 0, len);
}

/* Copy from a checked list into a kernel buffer (a packet being built). */
int stag_sgl_read(const struct stag_sgl *src, u64 src_off, void *buf, u64 len)
{
	struct stag_sgl dst;

	stag_sgl_init_kbuf(&dst, buf, len);
	return stag_sgl_copy(&dst, 0, src, src_off, len);
}

/**
 * stag_sgl_copy_skb() - copy bytes of a received packet into a checked list
 * @dst: the list
 * @dst_off: where in it to start
 * @skb: the packet, linear or not
 * @skb_off: where its bytes start, from skb->data
 * @len: how many; both must hold them
 *
 * The payload goes from the packet straight into the pages the gate
 * checked, a page at a time, each checked again as in stag_sgl_copy().
 *
 * Context: process context.
 * Return: 0, or -EACCES when an entry was invalidated meanwhile.
 */
int stag_sgl_copy_skb(struct stag_sgl *dst, u64 dst_off, const struct sk_buff *skb, u32 skb_off,
		      u64 len)
{
	struct cursor d;

	might_sleep();
	if (WARN_ON_ONCE(dst_off + len > dst->length || (u64)skb_off + len > skb->len))
		return -EINVAL;
	cursor_init(&d, dst, dst_off);
	while (len) {
		u64 n;
		void *dp = cursor_map(&d, len, &n);

		if (!dp)
			return -EACCES;
		n = skb_copy_bits(skb, skb_off, dp, n) ? 0 : n;
		cursor_unmap(&d, dp);
		if (!n)
			return -EINVAL;
		cursor_advance(&d, n);
		skb_off += n;
		len -= n;
		cond_resched();
	}
	return 0;
}

/**
 * stag_sgl_atomic() - an atomic operation on the 8 bytes a list names
 * @target: a one-entry list of 8 bytes, checked for remote atomic access
 * @opcode: IB_WR_ATOMIC_CMP_AND_SWP or IB_WR_ATOMIC_FETCH_AND_ADD
 * @compare_add: the value compared with, or added
 * @swap: the value swapped in
 * @orig: set to the value before the operation
 *
 * The 8 bytes may straddle pages (the iova need not be aligned like the
 * pages are), so they are read and written bytewise under one lock that
 * every atomic takes.
 *
 * Return: 0, or -EACCES when the target was invalidated meanwhile.
 */
int stag_sgl_atomic(struct stag_sgl *target, u8 opcode, u64 compare_add, u64 swap, u64 *orig)
{
	struct stag_sgl buf;
	u64 val, new;
	int ret;

	stag_sgl_init_kbuf(&buf, &val, sizeof(val));
	spin_lock(&stag_atomic_lock);
	ret = sgl_copy(&buf, 0, target, 0, sizeof(val), false);
	if (ret)
		goto out_unlock;
	*orig = val;
	if (opcode == IB_WR_ATOMIC_CMP_AND_SWP)
		new = val == compare_add ? swap : val;
	else
		new = val + compare_add;
	if (new != val) {
		stag_sgl_init_kbuf(&buf, &new, sizeof(new));
		ret = sgl_copy(target, 0, &buf, 0, sizeof(new), false);
	}
out_unlock:
	spin_unlock(&stag_atomic_lock);
	return ret;
}
