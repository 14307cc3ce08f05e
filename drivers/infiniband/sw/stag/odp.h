/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag on-demand paging: a region's translation, filled from the owning
 * process's page tables on first access and kept coherent with them.
 */
#ifndef _STAG_ODP_H
#define _STAG_ODP_H

#include <linux/atomic.h>
#include <linux/mmu_notifier.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>

struct page;
struct work_struct;

/* Pages per chunk of the translation: a chunk is allocated on first use. */
#define STAG_ODP_CHUNK		512
/* The most pages one fault asks the page tables for. */
#define STAG_ODP_FAULT_MAX	32

struct stag_odp {
	struct mmu_interval_notifier notifier;
	/*
	 * Guards the translation against the notifier: an entry is read,
	 * and an access takes its inflight reference, under it; an
	 * invalidation clears entries and moves the sequence under it.
	 */
	spinlock_t lock;
	struct xarray chunks;	/* chunk index -> unsigned long[STAG_ODP_CHUNK] */
	/* Pages mapped by accesses now: an invalidation waits for none. */
	atomic_t inflight;
	unsigned long start;	/* user address of page index 0 */
	unsigned long npages;
	/* Read under RCU by restrack: the struct is freed after a grace period. */
	unsigned long mapped;		/* entries valid now; under lock */
	atomic64_t faults;		/* pages faulted in */
	atomic64_t invalidations;	/* notifier calls that cleared something */
	struct rcu_head rcu;
};

int stag_odp_wq_init(void);
void stag_odp_wq_uninit(void);
void stag_odp_queue_work(struct work_struct *work);
struct stag_odp *stag_odp_create(u64 start, u64 length, int *err);
void stag_odp_destroy(struct stag_odp *odp);
struct page *stag_odp_get_page(struct stag_odp *odp, unsigned long pgidx, bool write);
void stag_odp_put_page(struct stag_odp *odp);
int stag_odp_fault(struct stag_odp *odp, unsigned long pgidx, unsigned long npages, bool write,
		   bool fault);

#endif /* _STAG_ODP_H */
