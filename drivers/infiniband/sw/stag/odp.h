/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag on-demand paging: a region's translation, filled on first access
 * and kept coherent with its source: the owning process's page tables, or
 * a dma-buf's exporter.
 */
#ifndef _STAG_ODP_H
#define _STAG_ODP_H

#include <linux/atomic.h>
#include <linux/mmu_notifier.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>

struct page;
struct stag_odp;
struct work_struct;

/*
 * A source other than the page tables. @fault maps every page of the
 * translation (a dma-buf is mapped whole); @release lets go of the source
 * when the translation is destroyed.
 */
struct stag_odp_source {
	int (*fault)(struct stag_odp *odp);
	void (*release)(struct stag_odp *odp);
};

/* Pages per chunk of the translation: a chunk is allocated on first use. */
#define STAG_ODP_CHUNK		512
/* The most pages one fault asks the page tables for. */
#define STAG_ODP_FAULT_MAX	32

struct stag_odp {
	struct mmu_interval_notifier notifier;	/* of the page tables only */
	const struct stag_odp_source *source;	/* NULL: the page tables */
	void *owner;				/* the source's */
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
struct stag_odp *stag_odp_create_source(unsigned long npages, const struct stag_odp_source *source,
					void *owner);
void stag_odp_destroy(struct stag_odp *odp);
int stag_odp_publish(struct stag_odp *odp, unsigned long pgidx, unsigned long pfn,
		     unsigned long n);
void stag_odp_invalidate(struct stag_odp *odp);
struct page *stag_odp_get_page(struct stag_odp *odp, unsigned long pgidx, bool write);
void stag_odp_put_page(struct stag_odp *odp);
int stag_odp_fault(struct stag_odp *odp, unsigned long pgidx, unsigned long npages, bool write,
		   bool fault);

#endif /* _STAG_ODP_H */
