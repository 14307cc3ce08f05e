// SPDX-License-Identifier: GPL-2.0
/*
 * Scatter/gather lists over gate references, and the copies between them.
 *
 * Every byte the data path moves goes through stag_sgl_copy(),
 * stag_sgl_write() or stag_sgl_atomic(), and every FLUSH through
 * stag_sgl_flush(), from and to entries that
 * stag_gate_enter() checked and still holds. Before each page-sized chunk
 * the entries are checked again to still be valid under the key that was
 * presented: an access in flight when its region or window is invalidated
 * or rebound stops there with -EACCES, and never touches memory of the new
 * binding.
 */

#include <linux/highmem.h>
#include <linux/libnvdimm.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "odp.h"
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
 * kernel memory addressed by their iova (the DMA MR). ERR_PTR(-EAGAIN):
 * an on-demand page not mapped for the access (@write) now.
 */
static void *ent_map(const struct stag_sgl_ent *ent, u64 off, u64 len, bool write, u64 *chunk)
{
	const struct stag_tpt_entry *e = ent->ref.entry;
	u64 pos = ent->ref.offset + off;
	struct page *page;

	if (!e->pages) {
		*chunk = len;
		return (void *)(uintptr_t)pos;
	}
	if (e->pages->odp) {
		page = stag_odp_get_page(e->pages->odp, pos >> PAGE_SHIFT, write);
		if (!page)
			return ERR_PTR(-EAGAIN);
	} else {
		page = stag_pages_page(e->pages, pos >> PAGE_SHIFT);
		if (!page)
			return ERR_PTR(-EACCES);
	}
	*chunk = min_t(u64, len, PAGE_SIZE - offset_in_page(pos));
	return kmap_local_page(page) + offset_in_page(pos);
}

static void ent_unmap(const struct stag_sgl_ent *ent, void *addr)
{
	const struct stag_pages *pages = ent->ref.entry->pages;

	if (!pages)
		return;
	kunmap_local(addr);
	if (pages->odp)
		stag_odp_put_page(pages->odp);
}

/*
 * Faults in the on-demand pages under @len bytes of an entry from @off,
 * for an access that found one missing. The pages are all the access's
 * own, so one the process has not mapped fails it.
 */
static int ent_fault(const struct stag_sgl_ent *ent, u64 off, u64 len, bool write)
{
	u64 pos = ent->ref.offset + off;
	unsigned long first = pos >> PAGE_SHIFT, n;

	len = min(len, ent->len - off);
	n = min_t(unsigned long, ((pos + len - 1) >> PAGE_SHIFT) - first + 1, STAG_ODP_FAULT_MAX);
	return stag_odp_fault(ent->ref.entry->pages->odp, first, n, write, true);
}

/*
 * Faults on one stretch of a copy, without a byte moving between them:
 * more means invalidations keep taking the pages away.
 */
#define SGL_MAX_FAULTS	8

/* A cursor over a list: which entry, and where in it. */
struct cursor {
	const struct stag_sgl *sgl;
	u32 idx;
	u64 off;
	bool write;		/* the list is written: on-demand pages for write */
	u32 faults;		/* since bytes last moved */
};

static void cursor_init(struct cursor *c, const struct stag_sgl *sgl, u64 off, bool write)
{
	c->sgl = sgl;
	c->idx = 0;
	c->off = off;
	c->write = write;
	c->faults = 0;
	if (sgl->kbuf)
		return;
	while (c->idx < sgl->num && c->off >= sgl->ent[c->idx].len) {
		c->off -= sgl->ent[c->idx].len;
		c->idx++;
	}
}

/*
 * Maps up to @len bytes at the cursor. ERR_PTR(-EACCES) when the entry
 * is no longer valid, ERR_PTR(-EAGAIN) when its page must be faulted in.
 */
static void *cursor_map(struct cursor *c, u64 len, u64 *chunk)
{
	const struct stag_sgl_ent *ent;

	if (c->sgl->kbuf) {
		*chunk = len;
		return (void *)c->sgl->kbuf + c->off;
	}
	ent = &c->sgl->ent[c->idx];
	if (!stag_gate_still_valid(&ent->ref))
		return ERR_PTR(-EACCES);
	return ent_map(ent, c->off, min(len, ent->len - c->off), c->write, chunk);
}

/*
 * After cursor_map() failed with @err: 0 when the page is now faulted in
 * and the map may be tried again, else the copy's errno. Where the copy
 * may not sleep, -EAGAIN goes to its caller.
 */
static int cursor_fault(struct cursor *c, int err, u64 len, bool may_sleep)
{
	if (err != -EAGAIN || !may_sleep)
		return err;
	if (++c->faults > SGL_MAX_FAULTS)
		return -EFAULT;
	return ent_fault(&c->sgl->ent[c->idx], c->off, len, c->write);
}

static void cursor_unmap(struct cursor *c, void *addr)
{
	if (!c->sgl->kbuf)
		ent_unmap(&c->sgl->ent[c->idx], addr);
}

static void cursor_advance(struct cursor *c, u64 n)
{
	c->off += n;
	c->faults = 0;
	if (!c->sgl->kbuf && c->off == c->sgl->ent[c->idx].len) {
		c->idx++;
		c->off = 0;
	}
}

/*
 * Never holds a mapped page while it faults: an invalidation may be
 * waiting for that page, under the mmap_lock the fault takes.
 */
static int sgl_copy(struct stag_sgl *dst, u64 dst_off, const struct stag_sgl *src, u64 src_off,
		    u64 len, bool may_sleep)
{
	struct cursor d, s;
	int ret;

	if (WARN_ON_ONCE(dst_off + len > dst->length || src_off + len > src->length))
		return -EINVAL;
	cursor_init(&d, dst, dst_off, true);
	cursor_init(&s, src, src_off, false);
	while (len) {
		u64 dn, sn, n;
		void *dp, *sp;

		dp = cursor_map(&d, len, &dn);
		if (IS_ERR(dp)) {
			ret = cursor_fault(&d, PTR_ERR(dp), len, may_sleep);
			if (ret)
				return ret;
			continue;
		}
		sp = cursor_map(&s, dn, &sn);
		if (IS_ERR(sp)) {
			cursor_unmap(&d, dp);
			ret = cursor_fault(&s, PTR_ERR(sp), dn, may_sleep);
			if (ret)
				return ret;
			continue;
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
 * stag_sgl_fault_in() - fault in the on-demand pages a list lacks
 * @sgl: the list
 * @write: for writing
 *
 * Where it matters which side of a copy failed (loopback, where one copy
 * moves a message from one QP's buffers to the other's), the local side
 * is faulted in first: a page its process has not mapped is then that
 * side's own error (LOC_PROT_ERR), not its peer's. A page taken away
 * again before the copy is faulted in again there.
 *
 * Context: process context, holding no mapped page; sleeps.
 * Return: 0, or as stag_odp_fault().
 */
int stag_sgl_fault_in(const struct stag_sgl *sgl, bool write)
{
	u32 i;
	int ret;

	for (i = 0; i < sgl->num; i++) {
		const struct stag_sgl_ent *ent = &sgl->ent[i];
		struct stag_odp *odp;
		u64 off = 0, pos;

		if (!ent->len || !ent->ref.entry->pages || !ent->ref.entry->pages->odp)
			continue;
		odp = ent->ref.entry->pages->odp;
		while (off < ent->len) {
			pos = ent->ref.offset + off;
			if (stag_odp_get_page(odp, pos >> PAGE_SHIFT, write)) {
				stag_odp_put_page(odp);
				off += PAGE_SIZE - offset_in_page(pos);
				continue;
			}
			ret = ent_fault(ent, off, ent->len - off, write);
			if (ret)
				return ret;
			off += (STAG_ODP_FAULT_MAX << PAGE_SHIFT) - offset_in_page(pos);
		}
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
 * On-demand pages missing are faulted in on the way, the other list's
 * page let go first.
 *
 * Context: process context (maps pages with kmap_local_page, faults).
 * Return: 0; -EACCES when an entry was invalidated during the copy;
 * -EFAULT for an on-demand page the process has not mapped, or not for
 * the access; -ENOMEM. What was copied before stays copied.
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
 * Return: 0, or as stag_sgl_copy().
 */
int stag_sgl_copy_skb(struct stag_sgl *dst, u64 dst_off, const struct sk_buff *skb, u32 skb_off,
		      u64 len)
{
	struct cursor d;
	int ret;

	might_sleep();
	if (WARN_ON_ONCE(dst_off + len > dst->length || (u64)skb_off + len > skb->len))
		return -EINVAL;
	cursor_init(&d, dst, dst_off, true);
	while (len) {
		u64 n;
		void *dp = cursor_map(&d, len, &n);

		if (IS_ERR(dp)) {
			ret = cursor_fault(&d, PTR_ERR(dp), len, true);
			if (ret)
				return ret;
			continue;
		}
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

/*
 * The operation on the target's 8 bytes, every page of them (at most two)
 * mapped for write from before the read until after the write: an
 * invalidation cannot take one between, and a page missing is found
 * before anything is written.
 */
static int atomic_locked(struct stag_sgl *target, u8 opcode, u64 compare_add, u64 swap,
			 u64 *orig)
{
	const struct stag_sgl_ent *ent = &target->ent[0];
	u64 val, new, off, n[2];
	void *p[2];
	u32 k = 0, i;
	int ret = 0;

	lockdep_assert_held(&stag_atomic_lock);
	if (WARN_ON_ONCE(target->num != 1 || ent->len != sizeof(val)))
		return -EINVAL;
	if (!stag_gate_still_valid(&ent->ref))
		return -EACCES;
	for (off = 0; off < sizeof(val); off += n[k++]) {
		if (WARN_ON_ONCE(k == ARRAY_SIZE(p))) {
			ret = -EINVAL;
			goto out_unmap;
		}
		p[k] = ent_map(ent, off, sizeof(val) - off, true, &n[k]);
		if (IS_ERR(p[k])) {
			ret = PTR_ERR(p[k]);
			goto out_unmap;
		}
	}
	if (opcode == IB_WR_ATOMIC_WRITE) {
		/*
		 * It lands whole (IBA oA19-28): one aligned 8-byte store,
		 * which no reader of the page sees half done. An aligned
		 * iova is aligned in its page for every region the core
		 * registers (uverbs keeps a user iova's page offset); bytes
		 * that are not could not be stored so, and are refused.
		 */
		if (k != 1 || !IS_ALIGNED((uintptr_t)p[0], sizeof(u64))) {
			ret = -EINVAL;
			goto out_unmap;
		}
		WRITE_ONCE(*(u64 *)p[0], swap);
		*orig = 0;
		goto out_unmap;
	}
	for (i = 0, off = 0; i < k; off += n[i++])
		memcpy((u8 *)&val + off, p[i], n[i]);
	if (opcode == IB_WR_ATOMIC_CMP_AND_SWP)
		new = val == compare_add ? swap : val;
	else
		new = val + compare_add;
	for (i = 0, off = 0; new != val && i < k; off += n[i++])
		memcpy(p[i], (u8 *)&new + off, n[i]);
	*orig = val;
out_unmap:
	while (k--)
		ent_unmap(ent, p[k]);
	return ret;
}

/**
 * stag_sgl_atomic() - an atomic operation on the 8 bytes a list names
 * @target: a one-entry list of 8 bytes, checked for remote atomic access
 *	(remote write for an atomic write)
 * @opcode: IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD or
 *	IB_WR_ATOMIC_WRITE
 * @compare_add: the value compared with, or added
 * @swap: the value swapped in, or written (as its bytes are in memory)
 * @orig: set to the value before the operation (0 for a write)
 *
 * The 8 bytes may straddle pages (the iova need not be aligned like the
 * pages are), so they are read and written bytewise under one lock that
 * every atomic takes; an atomic write's must not. An on-demand page
 * missing is faulted in for write outside the lock, and the operation
 * starts over: it wrote nothing.
 *
 * Return: 0; -EINVAL for an atomic write whose bytes are not 8-byte
 * aligned in their page; or as stag_sgl_copy().
 */
int stag_sgl_atomic(struct stag_sgl *target, u8 opcode, u64 compare_add, u64 swap, u64 *orig)
{
	u32 tries = 0;
	int ret;

	for (;;) {
		spin_lock(&stag_atomic_lock);
		ret = atomic_locked(target, opcode, compare_add, swap, orig);
		spin_unlock(&stag_atomic_lock);
		if (ret != -EAGAIN)
			return ret;
		if (++tries > SGL_MAX_FAULTS)
			return -EFAULT;
		ret = ent_fault(&target->ent[0], 0, sizeof(u64), true);
		if (ret)
			return ret;
	}
}

/*
 * Writes the CPU caches over a list back to the persistent memory under
 * it. Only pinned regions have the persistent right (stag_mr checks every
 * page when it registers one), so no page is missing here.
 */
static int wb_pmem(const struct stag_sgl *sgl)
{
	u64 len = sgl->length, n;
	struct cursor c;
	void *p;

	cursor_init(&c, sgl, 0, false);
	while (len) {
		p = cursor_map(&c, len, &n);
		if (IS_ERR(p))
			return PTR_ERR(p);
		arch_wb_cache_pmem(p, n);
		cursor_unmap(&c, p);
		cursor_advance(&c, n);
		len -= n;
		cond_resched();
	}
	return 0;
}

/**
 * stag_sgl_flush() - a FLUSH (IBA 1.5, A19.4): its target through the
 * gate, then what its placement type asks for
 * @sgl: the responder's target list; empty again on return
 * @tpt: the table the key belongs to
 * @who: the QP the request arrived at
 * @key: the R_Key
 * @addr: the first byte of the range
 * @len: its length
 * @access: the rights its placement types need: IB_ACCESS_FLUSH_GLOBAL,
 *	IB_ACCESS_FLUSH_PERSISTENT or both; the persistent one writes back
 * @whole: the region selectivity (IB_FLUSH_MR): all that @key names, from
 *	its first byte; @addr and @len are not looked at. A range of no
 *	bytes still has its key checked, without bounds
 *
 * stag places every byte a WRITE or an atomic moves with CPU stores, and
 * answers it only after: a FLUSH, which its QP executes after them, finds
 * them placed, and a write barrier orders them before its own answer.
 * That is global visibility. Persistence needs the CPU caches over the
 * range written back to the persistent memory under it, page by page.
 *
 * Context: process context; sleeps.
 * Return: 0; the gate's errno for @access; -EACCES for a region
 * invalidated during the write-back.
 */
int stag_sgl_flush(struct stag_sgl *sgl, struct stag_tpt *tpt, const struct stag_gate_who *who,
		   u32 key, u64 addr, u64 len, int access, bool whole)
{
	struct stag_sgl_ent *ent = &sgl->ent[0];
	int ret;

	sgl->num = 0;
	sgl->length = 0;
	sgl->kbuf = NULL;
	if (whole)
		ret = stag_gate_enter_whole(tpt, key, who, access, &len, &ent->ref);
	else if (!len)
		ret = stag_gate_enter_key(tpt, key, who, access, &ent->ref);
	else
		ret = stag_gate_enter(tpt, key, who, access, addr, len, &ent->ref);
	if (ret)
		return ret;
	if (ent->ref.entry) {
		stag_tpt_access_begin();
		ent->len = len;
		sgl->length = len;
		sgl->num = 1;
	}
	if (access & IB_ACCESS_FLUSH_PERSISTENT)
		ret = wb_pmem(sgl);
	/* Every store placed before, and the write-back, before the answer. */
	wmb();
	stag_sgl_release(sgl);
	return ret;
}
