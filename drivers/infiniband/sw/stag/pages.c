// SPDX-License-Identifier: GPL-2.0
/*
 * Page lists. User memory is pinned with pin_user_pages_fast(FOLL_LONGTERM)
 * in batches, charged to the owner's mm->pinned_vm against RLIMIT_MEMLOCK,
 * and kept as runs of physically contiguous pages. Every run is unpinned
 * (and dirtied if writable) when the last region sharing the list lets go.
 */

#include <linux/ioport.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "odp.h"
#include "pages.h"

#define PIN_BATCH	(PAGE_SIZE / sizeof(struct page *))

/*
 * Sizes here follow what was pinned, which RLIMIT_MEMLOCK bounds only
 * without CAP_IPC_LOCK: one that is too large for kvmalloc is -ENOMEM,
 * quietly.
 */
#define PAGES_GFP	(GFP_KERNEL_ACCOUNT | __GFP_NOWARN)

/**
 * stag_pages_alloc() - an empty page list with room for some runs
 * @max_runs: the room, at least 1
 *
 * For kernel memory, whose runs the caller writes and then publishes with
 * stag_pages_set_runs(), as often as it likes while the list is its own:
 * nothing is pinned or charged, and release only frees the list.
 *
 * Return: the list with one reference, or NULL.
 */
struct stag_pages *stag_pages_alloc(u32 max_runs)
{
	struct stag_pages *pages;
	u32 nmarks = DIV_ROUND_UP(max_runs, STAG_RUNS_PER_MARK);

	pages = kvzalloc(struct_size(pages, runs, max_runs), PAGES_GFP);
	if (!pages)
		return NULL;
	pages->marks = kvcalloc(max(nmarks, 1U), sizeof(u64), PAGES_GFP);
	if (!pages->marks) {
		kvfree(pages);
		return NULL;
	}
	refcount_set(&pages->ref, 1);
	pages->max_runs = max_runs;
	return pages;
}
EXPORT_SYMBOL_IF_KUNIT(stag_pages_alloc);

/**
 * stag_pages_set_runs() - index the first @nruns runs of a list
 * @pages: the list, whose runs[] the caller has written
 * @nruns: how many, at most pages->max_runs
 */
void stag_pages_set_runs(struct stag_pages *pages, u32 nruns)
{
	u64 pgidx = 0;
	u32 i;

	if (WARN_ON_ONCE(nruns > pages->max_runs))
		nruns = pages->max_runs;
	for (i = 0; i < nruns; i++) {
		if (i % STAG_RUNS_PER_MARK == 0)
			pages->marks[i / STAG_RUNS_PER_MARK] = pgidx;
		pgidx += stag_run_len(pages->runs[i]);
	}
	WRITE_ONCE(pages->nruns, nruns);
	WRITE_ONCE(pages->npages, pgidx);
}
EXPORT_SYMBOL_IF_KUNIT(stag_pages_set_runs);

/* Appends a page to the runs being built; returns the new run count. */
static u32 runs_append(u64 *runs, u32 nruns, unsigned long pfn)
{
	u64 *last = nruns ? &runs[nruns - 1] : NULL;

	if (last && stag_run_pfn(*last) + stag_run_len(*last) == pfn &&
	    stag_run_len(*last) < STAG_RUN_MAX_PAGES) {
		*last += 1ULL << STAG_RUN_LEN_SHIFT;
		return nruns;
	}
	runs[nruns] = stag_run_make(pfn, 1);
	return nruns + 1;
}

/*
 * A region of CAP_IPC_LOCK's may hold millions of runs: on a kernel that
 * does not preempt, releasing it must let others run now and then.
 */
#define UNPIN_RESCHED_RUNS	1024

static void runs_unpin(const u64 *runs, u32 nruns, bool dirty)
{
	u32 i;

	for (i = 0; i < nruns; i++) {
		unpin_user_page_range_dirty_lock(pfn_to_page(stag_run_pfn(runs[i])),
						 stag_run_len(runs[i]), dirty);
		if (i % UNPIN_RESCHED_RUNS == UNPIN_RESCHED_RUNS - 1)
			cond_resched();
	}
}

static int charge_pinned(struct mm_struct *mm, u64 npages)
{
	u64 limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	u64 pinned = atomic64_add_return(npages, &mm->pinned_vm);

	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The runs pinned so far. The buffer grows with what is pinned, never
 * ahead of it: a range that cannot be pinned costs nothing, however long.
 */
struct run_buf {
	u64 *runs;
	u32 n;
	u32 room;
};

static int run_buf_reserve(struct run_buf *rb, u32 more)
{
	u64 want = max_t(u64, (u64)rb->room * 2, (u64)rb->n + more);
	u64 *runs;

	if (rb->n + more <= rb->room)
		return 0;
	if (want > U32_MAX)
		return -ENOMEM;
	runs = kvmalloc_array(want, sizeof(*runs), PAGES_GFP);
	if (!runs)
		return -ENOMEM;
	if (rb->n)
		memcpy(runs, rb->runs, rb->n * sizeof(*runs));
	kvfree(rb->runs);
	rb->runs = runs;
	rb->room = want;
	return 0;
}

/* Pins [start, start + npages pages) into @rb; unpins it all on failure. */
static int pin_runs(u64 start, u64 npages, unsigned int gup_flags, struct run_buf *rb)
{
	struct page **batch;
	u64 done = 0;
	long got, i;
	int ret = 0;

	batch = (struct page **)__get_free_page(GFP_KERNEL);
	if (!batch)
		return -ENOMEM;
	while (done < npages) {
		got = pin_user_pages_fast(start + done * PAGE_SIZE,
					  min_t(u64, npages - done, PIN_BATCH), gup_flags, batch);
		if (got <= 0) {
			ret = got ? got : -EFAULT;
			break;
		}
		ret = run_buf_reserve(rb, got);
		if (ret) {
			unpin_user_pages(batch, got);
			break;
		}
		for (i = 0; i < got; i++)
			rb->n = runs_append(rb->runs, rb->n, page_to_pfn(batch[i]));
		done += got;
		cond_resched();
	}
	free_page((unsigned long)batch);
	if (ret)
		runs_unpin(rb->runs, rb->n, false);
	return ret;
}

/**
 * stag_pages_pin_user() - pin a user range into a new page list
 * @start: the first byte, any alignment
 * @length: the number of bytes, at least 1
 * @writable: pin for write (the region may be written locally or remotely)
 * @err: set to the errno on failure
 *
 * Context: process context of the owning process; sleeps.
 * Return: the list with one reference, or NULL with *err set: -EINVAL for
 * an empty or wrapping range, -ENOMEM past RLIMIT_MEMLOCK or out of
 * memory, -EFAULT for an unmapped range. Nothing stays pinned or charged
 * on failure, and nothing is allocated for pages that were not pinned.
 */
struct stag_pages *stag_pages_pin_user(u64 start, u64 length, bool writable, int *err)
{
	unsigned int gup_flags = FOLL_LONGTERM | (writable ? FOLL_WRITE : 0);
	struct mm_struct *mm = current->mm;
	struct run_buf rb = {};
	struct stag_pages *pages;
	u64 end, npages;

	might_sleep();
	*err = -EINVAL;
	if (!length || check_add_overflow(start, length, &end) || end > TASK_SIZE)
		return NULL;
	npages = (PAGE_ALIGN(end) - (start & PAGE_MASK)) >> PAGE_SHIFT;
	if (npages > U32_MAX)
		return NULL;

	*err = charge_pinned(mm, npages);
	if (*err)
		return NULL;

	*err = pin_runs(start & PAGE_MASK, npages, gup_flags, &rb);
	if (*err)
		goto err_free_runs;
	*err = -ENOMEM;
	pages = stag_pages_alloc(rb.n);
	if (!pages)
		goto err_unpin;
	memcpy(pages->runs, rb.runs, rb.n * sizeof(*rb.runs));
	kvfree(rb.runs);

	pages->user = true;
	pages->writable = writable;
	pages->mm = mm;
	mmgrab(mm);
	stag_pages_set_runs(pages, rb.n);
	return pages;

err_unpin:
	runs_unpin(rb.runs, rb.n, false);
err_free_runs:
	kvfree(rb.runs);
	atomic64_sub(npages, &mm->pinned_vm);
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(stag_pages_pin_user);

/**
 * stag_pages_odp() - a page list over a user range, paged on demand
 * @start: the first byte, any alignment (0 with @length U64_MAX: the
 *         whole address space)
 * @length: the number of bytes, at least 1
 * @err: set to the errno on failure
 *
 * Pins and charges nothing, allocates nothing per page: the list has no
 * runs, and the data path asks its translation (odp.c) page by page.
 *
 * Context: process context of the owning process; sleeps.
 * Return: the list with one reference, or NULL with *err set as by
 * stag_odp_create().
 */
struct stag_pages *stag_pages_odp(u64 start, u64 length, int *err)
{
	struct stag_pages *pages;

	pages = stag_pages_alloc(1);
	if (!pages) {
		*err = -ENOMEM;
		return NULL;
	}
	pages->odp = stag_odp_create(start, length, err);
	if (!pages->odp) {
		stag_pages_put(pages);
		return NULL;
	}
	pages->user = true;
	pages->writable = true;
	pages->npages = pages->odp->npages;
	return pages;
}
EXPORT_SYMBOL_IF_KUNIT(stag_pages_odp);

/**
 * stag_pages_from_runs() - a page list over pages the caller keeps alive
 * @runs: runs built with stag_run_make()
 * @nruns: their number, at least 1
 * @err: set to the errno on failure
 *
 * For kernel memory (fast registration) and tests: nothing is pinned or
 * charged, and release only frees the list.
 */
struct stag_pages *stag_pages_from_runs(const u64 *runs, u32 nruns, int *err)
{
	struct stag_pages *pages;

	*err = -EINVAL;
	if (!nruns)
		return NULL;
	*err = -ENOMEM;
	pages = stag_pages_alloc(nruns);
	if (!pages)
		return NULL;
	memcpy(pages->runs, runs, nruns * sizeof(*runs));
	stag_pages_set_runs(pages, nruns);
	*err = 0;
	return pages;
}
EXPORT_SYMBOL_IF_KUNIT(stag_pages_from_runs);

/**
 * stag_pages_page() - the page at a page index of the list
 * @pages: the list
 * @pgidx: the index, below pages->npages
 *
 * Binary search over the marks, then at most STAG_RUNS_PER_MARK runs.
 */
struct page *stag_pages_page(const struct stag_pages *pages, u64 pgidx)
{
	u32 lo = 0, hi = DIV_ROUND_UP(pages->nruns, STAG_RUNS_PER_MARK), mid, i;
	u64 first;

	if (WARN_ON_ONCE(pgidx >= pages->npages || pages->odp))
		return NULL;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (pages->marks[mid] <= pgidx)
			lo = mid;
		else
			hi = mid;
	}
	first = pages->marks[lo];
	for (i = lo * STAG_RUNS_PER_MARK; i < pages->nruns; i++) {
		u64 len = stag_run_len(pages->runs[i]);

		if (pgidx < first + len)
			return pfn_to_page(stag_run_pfn(pages->runs[i]) + (pgidx - first));
		first += len;
	}
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(stag_pages_page);

/**
 * stag_pages_persistent() - is every page of a list persistent memory?
 * @pages: the list
 *
 * A region may take the right to persistent FLUSHes only over persistent
 * memory (IBA A19.4.1.1): a write-back of the CPU caches makes nothing
 * else persistent. Pages paged on demand are not known before they fault.
 *
 * Return: true when every run lies in persistent memory.
 */
bool stag_pages_persistent(const struct stag_pages *pages)
{
	u32 i;

	if (pages->odp)
		return false;
	for (i = 0; i < pages->nruns; i++) {
		u64 run = pages->runs[i];

		if (region_intersects(PFN_PHYS(stag_run_pfn(run)), stag_run_len(run) << PAGE_SHIFT,
				      IORESOURCE_MEM, IORES_DESC_PERSISTENT_MEMORY) !=
		    REGION_INTERSECTS)
			return false;
	}
	return true;
}

/**
 * stag_pages_size() - bytes of kernel memory the list takes
 * @pages: the list
 */
size_t stag_pages_size(const struct stag_pages *pages)
{
	return struct_size(pages, runs, pages->max_runs) +
	       max(DIV_ROUND_UP(pages->max_runs, STAG_RUNS_PER_MARK), 1U) * sizeof(u64);
}
EXPORT_SYMBOL_IF_KUNIT(stag_pages_size);

/**
 * stag_pages_put() - drop a reference; the last one unpins and uncharges
 * @pages: the list
 *
 * Context: process context; sleeps (unpinning dirties pages under their
 * lock).
 */
void stag_pages_put(struct stag_pages *pages)
{
	if (!refcount_dec_and_test(&pages->ref))
		return;
	if (pages->odp) {
		stag_odp_destroy(pages->odp);
	} else if (pages->user) {
		runs_unpin(pages->runs, pages->nruns, pages->writable);
		atomic64_sub(pages->npages, &pages->mm->pinned_vm);
		mmdrop(pages->mm);
		if (pages->pinned_stat)
			atomic64_sub(pages->npages, pages->pinned_stat);
	}
	kvfree(pages->marks);
	/* Readers outside the gate may still look at the counts. */
	kvfree_rcu(pages, rcu);
}
EXPORT_SYMBOL_IF_KUNIT(stag_pages_put);
