// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging: the TPT as a second MMU (the NIC-MMU design of the
 * seeds), kept coherent with the owning process's page tables.
 *
 * A region registered with IB_ACCESS_ON_DEMAND pins nothing. Its
 * translation is an xarray of chunks of hmm pfns, allocated as the data
 * path first touches them, so registering costs the same for a page and
 * for the whole address space. A page the data path needs and does not
 * find is faulted in with hmm_range_fault(): the process's own page
 * tables and VMA protections decide, so nothing is mapped that the
 * process could not touch itself. hmm_range_fault() rather than
 * ib_umem_odp: the latter keeps a dma address and a pfn per page of the
 * whole range from registration on (O(length)), and has DMA mapping stag
 * does not need.
 *
 * An mmu_interval_notifier over the range hears every change to the page
 * tables (munmap, mremap, MADV_DONTNEED, migration, fork's write
 * protection, truncation). It clears the entries in the range under the
 * region's lock, then waits for the accesses that still map a page: an
 * access takes its inflight reference under that lock, page by page, and
 * never faults while holding one. After the notifier returns no byte
 * moves to or from a page the process let go; the next access faults the
 * page it sees now.
 *
 * The same translation serves a source other than the page tables: a
 * dma-buf's exporter (dmabuf.c) fills it when the data path finds it
 * empty and empties it when the exporter moves the buffer. The rules for
 * accesses are the same.
 */

#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>

#include "odp.h"

/*
 * An access holding inflight references is holding this map for read; an
 * invalidation waiting for them takes it for write. Invalidations run
 * under mmap_lock (munmap) and page locks (migration), and from reclaim:
 * an access that faulted, taking mmap_lock, or allocated memory, entering
 * reclaim, while it held a reference would be a reported deadlock.
 */
#ifdef CONFIG_LOCKDEP
static struct lock_class_key stag_odp_access_key;
static struct lockdep_map stag_odp_access_map = STATIC_LOCKDEP_MAP_INIT("stag_odp_access",
									&stag_odp_access_key);
#endif

/* Asynchronous prefetches: module-owned, so that unload waits for them. */
static struct workqueue_struct *stag_odp_wq;

int stag_odp_wq_init(void)
{
	stag_odp_wq = alloc_workqueue("stag_odp", WQ_UNBOUND, 0);
	return stag_odp_wq ? 0 : -ENOMEM;
}

void stag_odp_wq_uninit(void)
{
	destroy_workqueue(stag_odp_wq);
}

/* Runs @work on the prefetch queue. */
void stag_odp_queue_work(struct work_struct *work)
{
	queue_work(stag_odp_wq, work);
}

/* Clears the entries of pages [first, last]; how many were mapped. */
static unsigned long clear_range(struct stag_odp *odp, unsigned long first, unsigned long last)
{
	unsigned long idx, i, from, to, cleared = 0;
	unsigned long *chunk;

	lockdep_assert_held(&odp->lock);
	xa_for_each_range(&odp->chunks, idx, chunk, first / STAG_ODP_CHUNK,
			  last / STAG_ODP_CHUNK) {
		from = idx == first / STAG_ODP_CHUNK ? first % STAG_ODP_CHUNK : 0;
		to = idx == last / STAG_ODP_CHUNK ? last % STAG_ODP_CHUNK : STAG_ODP_CHUNK - 1;
		for (i = from; i <= to; i++) {
			if (chunk[i] & HMM_PFN_VALID)
				cleared++;
			chunk[i] = 0;
		}
	}
	WRITE_ONCE(odp->mapped, odp->mapped - cleared);
	return cleared;
}

/*
 * Waits for the accesses that took a page before its entry was cleared:
 * after it no byte moves to or from the pages cleared.
 */
static void wait_accesses(struct stag_odp *odp)
{
	lock_map_acquire(&stag_odp_access_map);
	lock_map_release(&stag_odp_access_map);
	wait_var_event(&odp->inflight, !atomic_read(&odp->inflight));
}

static bool odp_invalidate(struct mmu_interval_notifier *mni,
			   const struct mmu_notifier_range *range, unsigned long cur_seq)
{
	struct stag_odp *odp = container_of(mni, struct stag_odp, notifier);
	unsigned long end = odp->start + (odp->npages << PAGE_SHIFT);
	unsigned long first, last, cleared;
	bool blockable = mmu_notifier_range_blockable(range);

	if (blockable)
		spin_lock(&odp->lock);
	else if (!spin_trylock(&odp->lock))
		return false;
	mmu_interval_set_seq(mni, cur_seq);
	first = (max(range->start, odp->start) - odp->start) >> PAGE_SHIFT;
	last = (min(range->end, end) - 1 - odp->start) >> PAGE_SHIFT;
	cleared = range->start < end && range->end > odp->start ?
		  clear_range(odp, first, last) : 0;
	spin_unlock(&odp->lock);
	if (!cleared)
		return true;
	atomic64_inc(&odp->invalidations);
	/*
	 * Entries are gone: no access takes a page of the range any more.
	 * Those that took one before finish their page first. Without
	 * sleeping (the OOM reaper) that cannot be waited for: the caller
	 * comes back, and finds the entries clear.
	 */
	if (!blockable)
		return !atomic_read(&odp->inflight);
	wait_accesses(odp);
	return true;
}

static const struct mmu_interval_notifier_ops odp_ops = {
	.invalidate = odp_invalidate,
};

static struct stag_odp *odp_alloc(void)
{
	struct stag_odp *odp = kzalloc(sizeof(*odp), GFP_KERNEL_ACCOUNT);

	if (!odp)
		return NULL;
	spin_lock_init(&odp->lock);
	xa_init(&odp->chunks);
	return odp;
}

/**
 * stag_odp_create() - an empty translation over a user range, watched
 * @start: the first byte, any alignment; 0 with @length U64_MAX for the
 *         whole address space (an implicit region)
 * @length: the number of bytes, at least 1
 * @err: set to the errno on failure
 *
 * Context: process context of the owning process; sleeps.
 * Return: the translation, or NULL with *err set: -EINVAL for an empty
 * range or one past the address space, -ENOMEM.
 */
struct stag_odp *stag_odp_create(u64 start, u64 length, int *err)
{
	struct stag_odp *odp;
	u64 end;

	might_sleep();
	*err = -EINVAL;
	if (!start && length == U64_MAX)
		end = TASK_SIZE;
	else if (!length || check_add_overflow(start, length, &end) || end > TASK_SIZE)
		return NULL;
	*err = -ENOMEM;
	odp = odp_alloc();
	if (!odp)
		return NULL;
	odp->start = start & PAGE_MASK;
	odp->npages = (PAGE_ALIGN(end) - odp->start) >> PAGE_SHIFT;
	*err = mmu_interval_notifier_insert(&odp->notifier, current->mm, odp->start,
					    odp->npages << PAGE_SHIFT, &odp_ops);
	if (*err) {
		kfree(odp);
		return NULL;
	}
	return odp;
}
EXPORT_SYMBOL_IF_KUNIT(stag_odp_create);

/**
 * stag_odp_create_source() - an empty translation another source fills
 * @npages: its number of pages, at least 1
 * @source: what fills it on a fault and lets go of its pages at destroy
 * @owner: the source's own, for its calls
 *
 * The source publishes pages with stag_odp_publish() and takes them back
 * with stag_odp_invalidate(), never both at once: a dma-buf's exporter
 * does both under the buffer's reservation lock.
 *
 * Return: the translation, or NULL without memory.
 */
struct stag_odp *stag_odp_create_source(unsigned long npages, const struct stag_odp_source *source,
					void *owner)
{
	struct stag_odp *odp = odp_alloc();

	if (!odp)
		return NULL;
	odp->npages = npages;
	odp->source = source;
	odp->owner = owner;
	return odp;
}
EXPORT_SYMBOL_IF_KUNIT(stag_odp_create_source);

/**
 * stag_odp_invalidate() - take every page of a translation back
 * @odp: the translation, of a source
 *
 * Context: process context; sleeps until the accesses that hold a page
 * have finished with it. Must not be called by one that holds a page.
 */
void stag_odp_invalidate(struct stag_odp *odp)
{
	unsigned long cleared;

	might_sleep();
	spin_lock(&odp->lock);
	cleared = clear_range(odp, 0, odp->npages - 1);
	spin_unlock(&odp->lock);
	if (!cleared)
		return;
	atomic64_inc(&odp->invalidations);
	wait_accesses(odp);
}
EXPORT_SYMBOL_IF_KUNIT(stag_odp_invalidate);

/**
 * stag_odp_destroy() - stop watching and free a translation
 * @odp: the translation, which no access uses any more
 *
 * Context: process context; sleeps (waits out a running invalidation).
 */
void stag_odp_destroy(struct stag_odp *odp)
{
	unsigned long idx, *chunk;

	if (odp->source)
		odp->source->release(odp);
	else
		mmu_interval_notifier_remove(&odp->notifier);
	WARN_ON_ONCE(atomic_read(&odp->inflight));
	xa_for_each(&odp->chunks, idx, chunk)
		kfree(chunk);
	xa_destroy(&odp->chunks);
	kfree_rcu(odp, rcu);
}
EXPORT_SYMBOL_IF_KUNIT(stag_odp_destroy);

/**
 * stag_odp_get_page() - the page at a page index, held for one access
 * @odp: the translation
 * @pgidx: the page index
 * @write: the access writes the page
 *
 * Does not sleep: atomics call it under a spinlock.
 *
 * Return: the page, with an inflight reference that stag_odp_put_page()
 * drops; NULL when the page is not mapped for the access (not yet, no
 * longer, or read-only for a write): stag_odp_fault() it, holding no
 * reference, and try again.
 */
struct page *stag_odp_get_page(struct stag_odp *odp, unsigned long pgidx, bool write)
{
	unsigned long *chunk, v = 0;
	struct page *page = NULL;

	if (pgidx >= odp->npages)
		return NULL;
	spin_lock(&odp->lock);
	chunk = xa_load(&odp->chunks, pgidx / STAG_ODP_CHUNK);
	if (chunk)
		v = chunk[pgidx % STAG_ODP_CHUNK];
	if ((v & HMM_PFN_VALID) && (!write || (v & HMM_PFN_WRITE))) {
		page = hmm_pfn_to_page(v);
		atomic_inc(&odp->inflight);
		lock_map_acquire_read(&stag_odp_access_map);
	}
	spin_unlock(&odp->lock);
	return page;
}
EXPORT_SYMBOL_IF_KUNIT(stag_odp_get_page);

/* Drops the reference stag_odp_get_page() took. */
void stag_odp_put_page(struct stag_odp *odp)
{
	lock_map_release(&stag_odp_access_map);
	if (atomic_dec_and_test(&odp->inflight))
		wake_up_var(&odp->inflight);
}
EXPORT_SYMBOL_IF_KUNIT(stag_odp_put_page);

/* A chunk of the translation, allocated on first use; NULL without memory. */
static unsigned long *chunk_get(struct stag_odp *odp, unsigned long idx)
{
	unsigned long *chunk = xa_load(&odp->chunks, idx), *old;

	if (chunk)
		return chunk;
	chunk = kcalloc(STAG_ODP_CHUNK, sizeof(*chunk), GFP_KERNEL_ACCOUNT);
	if (!chunk)
		return NULL;
	old = xa_cmpxchg(&odp->chunks, idx, NULL, chunk, GFP_KERNEL_ACCOUNT);
	if (!old)
		return chunk;
	kfree(chunk);
	return xa_is_err(old) ? NULL : old;
}

/*
 * Faults pages [pgidx, pgidx + n) of one chunk, n at most
 * STAG_ODP_FAULT_MAX, and publishes them unless an invalidation came in
 * between: then again, for up to HMM_RANGE_DEFAULT_TIMEOUT.
 */
static int fault_piece(struct stag_odp *odp, struct mm_struct *mm, unsigned long pgidx,
		       unsigned long n, unsigned long flags)
{
	unsigned long timeout = jiffies + msecs_to_jiffies(HMM_RANGE_DEFAULT_TIMEOUT);
	unsigned long pfns[STAG_ODP_FAULT_MAX], *chunk, off = pgidx % STAG_ODP_CHUNK, i, got;
	struct hmm_range range = {
		.notifier = &odp->notifier,
		.start = odp->start + (pgidx << PAGE_SHIFT),
		.end = odp->start + ((pgidx + n) << PAGE_SHIFT),
		.hmm_pfns = pfns,
		.default_flags = flags,
	};
	int ret;

	chunk = chunk_get(odp, pgidx / STAG_ODP_CHUNK);
	if (!chunk)
		return -ENOMEM;
	for (;;) {
		if (time_after(jiffies, timeout))
			return -EBUSY;
		range.notifier_seq = mmu_interval_read_begin(&odp->notifier);
		mmap_read_lock(mm);
		ret = hmm_range_fault(&range);
		mmap_read_unlock(mm);
		if (ret == -EBUSY)
			continue;
		if (ret)
			return ret;
		spin_lock(&odp->lock);
		if (!mmu_interval_read_retry(&odp->notifier, range.notifier_seq))
			break;
		spin_unlock(&odp->lock);
	}
	for (i = 0, got = 0; i < n; i++) {
		if (!(pfns[i] & HMM_PFN_VALID))
			continue;
		if (!(chunk[off + i] & HMM_PFN_VALID))
			WRITE_ONCE(odp->mapped, odp->mapped + 1);
		chunk[off + i] = pfns[i];
		got++;
	}
	spin_unlock(&odp->lock);
	atomic64_add(got, &odp->faults);
	return 0;
}

/**
 * stag_odp_publish() - map contiguous pages of a source's translation
 * @odp: the translation, of a source
 * @pgidx: the first page index
 * @pfn: the pfn of its page; the next pages follow it
 * @n: how many pages, all below odp->npages
 *
 * The pages are mapped for reading and writing.
 *
 * Context: process context, serialized with stag_odp_invalidate() by the
 * source; may allocate.
 * Return: 0, or -ENOMEM.
 */
int stag_odp_publish(struct stag_odp *odp, unsigned long pgidx, unsigned long pfn,
		     unsigned long n)
{
	unsigned long *chunk, got = 0, i, end = pgidx + n;

	if (WARN_ON_ONCE(!odp->source || pgidx >= odp->npages || n > odp->npages - pgidx))
		return -EINVAL;
	while (pgidx < end) {
		chunk = chunk_get(odp, pgidx / STAG_ODP_CHUNK);
		if (!chunk)
			return -ENOMEM;
		spin_lock(&odp->lock);
		do {
			i = pgidx % STAG_ODP_CHUNK;
			if (!(chunk[i] & HMM_PFN_VALID)) {
				WRITE_ONCE(odp->mapped, odp->mapped + 1);
				got++;
			}
			chunk[i] = pfn | HMM_PFN_VALID | HMM_PFN_WRITE;
			pfn++;
			pgidx++;
		} while (pgidx < end && pgidx % STAG_ODP_CHUNK);
		spin_unlock(&odp->lock);
	}
	atomic64_add(got, &odp->faults);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_odp_publish);

/**
 * stag_odp_fault() - map pages of the range from the page tables
 * @odp: the translation
 * @pgidx: the first page index
 * @npages: how many pages
 * @write: map them for writing (a write fault: copy-on-write breaks here)
 * @fault: fault in what is not present; false only takes what is
 *
 * A translation of a source (stag_odp_create_source()) asks the source,
 * which maps all its pages whatever @write and @fault say.
 *
 * Context: process context, holding no inflight reference; sleeps, takes
 * mmap_lock of the region's process.
 * Return: 0; -EFAULT when a page is outside the range or the process's
 * mappings, or lacks the protection (@write) asked for, or the process is
 * gone; -ENOMEM; -EBUSY when invalidations kept coming.
 */
int stag_odp_fault(struct stag_odp *odp, unsigned long pgidx, unsigned long npages, bool write,
		   bool fault)
{
	unsigned long flags = fault ? HMM_PFN_REQ_FAULT | (write ? HMM_PFN_REQ_WRITE : 0) : 0;
	struct mm_struct *mm = odp->notifier.mm;
	unsigned long n;
	int ret = 0;

	might_sleep();
	if (!npages || pgidx >= odp->npages || npages > odp->npages - pgidx)
		return -EFAULT;
	if (odp->source) {
		ret = odp->source->fault(odp);
		goto out;
	}
	if (!mmget_not_zero(mm))
		return -EFAULT;
	while (npages && !ret) {
		n = min3(npages, (unsigned long)STAG_ODP_FAULT_MAX,
			 STAG_ODP_CHUNK - pgidx % STAG_ODP_CHUNK);
		ret = fault_piece(odp, mm, pgidx, n, flags);
		pgidx += n;
		npages -= n;
		cond_resched();
	}
	mmput(mm);
out:
	/* hmm_range_fault() says -EPERM for a write to a read-only mapping. */
	if (ret && ret != -ENOMEM && ret != -EBUSY)
		ret = -EFAULT;
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(stag_odp_fault);
