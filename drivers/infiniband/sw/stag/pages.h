/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag page list: the pages behind a memory region, as runs of physically
 * contiguous pages, shared by reference between regions.
 */
#ifndef _STAG_PAGES_H
#define _STAG_PAGES_H

#include <linux/mm_types.h>
#include <linux/refcount.h>
#include <linux/types.h>

/*
 * A run packs its first pfn and its length less one into a u64, so a
 * fragmented list costs what an array of page pointers would and a
 * contiguous one (huge pages, large folios) one word per 16 MiB.
 */
#define STAG_RUN_LEN_SHIFT	52
#define STAG_RUN_MAX_PAGES	(1UL << (64 - STAG_RUN_LEN_SHIFT))
#define STAG_RUNS_PER_MARK	64

/*
 * npages and nruns are also read outside the data path (restrack,
 * debugfs) under RCU: a list is freed only after a grace period.
 */
struct stag_pages {
	refcount_t ref;
	u64 npages;
	u32 nruns;
	u32 max_runs;		/* room in runs[] */
	bool user;		/* pinned from userspace: unpin at release */
	bool writable;		/* pinned for write: mark dirty at release */
	struct mm_struct *mm;	/* charged for the pins (mm->pinned_vm) */
	atomic64_t *pinned_stat;	/* a device's count of pinned pages, or NULL */
	/*
	 * On demand, or a dma-buf's: no runs, the translation is here, and
	 * its source's hold is let go at the last put.
	 */
	struct stag_odp *odp;
	u64 *marks;		/* first page index of every 64th run */
	struct rcu_head rcu;
	u64 runs[];
};

struct stag_odp;

struct stag_pages *stag_pages_pin_user(u64 start, u64 length, bool writable, int *err);
struct stag_pages *stag_pages_odp(u64 start, u64 length, int *err);
struct stag_pages *stag_pages_alloc(u32 max_runs);
void stag_pages_set_runs(struct stag_pages *pages, u32 nruns);
struct stag_pages *stag_pages_from_runs(const u64 *runs, u32 nruns, int *err);
struct page *stag_pages_page(const struct stag_pages *pages, u64 pgidx);
void stag_pages_put(struct stag_pages *pages);
size_t stag_pages_size(const struct stag_pages *pages);
bool stag_pages_persistent(const struct stag_pages *pages);

static inline void stag_pages_get(struct stag_pages *pages)
{
	refcount_inc(&pages->ref);
}

static inline unsigned long stag_run_pfn(u64 run)
{
	return run & ((1ULL << STAG_RUN_LEN_SHIFT) - 1);
}

static inline unsigned long stag_run_len(u64 run)
{
	return (run >> STAG_RUN_LEN_SHIFT) + 1;
}

static inline u64 stag_run_make(unsigned long pfn, unsigned long len)
{
	return (u64)(len - 1) << STAG_RUN_LEN_SHIFT | pfn;
}

#endif /* _STAG_PAGES_H */
