// SPDX-License-Identifier: GPL-2.0
/*
 * Queues. A queue is a control block and a ring of slots in one vmalloc
 * area. User queues are mapped into the owner's address space through the
 * core's mmap entries; the kernel reads the user's index once per batch,
 * bounds it by its own, and copies each slot out before using it.
 *
 * A ring is charged to the memory cgroup of the process that creates it,
 * so that a user's rings count against what the user may take; over the
 * cgroup's limit the create fails with -ENOMEM rather than waking the OOM
 * killer. vmalloc_user() would not charge it, and the charging variant of
 * it is not exported, so the pages are mapped one by one, as
 * remap_vmalloc_range() maps them.
 */

#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <kunit/visibility.h>

#include <rdma/uverbs_ioctl.h>

#include "compat.h"
#include "queue.h"
#include "verbs.h"

/**
 * stag_queue_init() - allocate an empty ring
 * @q: the queue
 * @num_slots: a power of two, at least 1
 * @slot_size: bytes per slot
 *
 * Return: 0, -EINVAL for a bad geometry or more than STAG_QUEUE_MAX_SIZE
 * bytes, or -ENOMEM.
 */
int stag_queue_init(struct stag_queue *q, u32 num_slots, u32 slot_size)
{
	size_t size;

	memset(q, 0, sizeof(*q));
	if (!num_slots || !is_power_of_2(num_slots) || !slot_size)
		return -EINVAL;
	if (check_mul_overflow((size_t)num_slots, (size_t)slot_size, &size) ||
	    check_add_overflow(size, (size_t)STAG_QUEUE_CTL_SIZE, &size))
		return -EINVAL;
	/* Far above what the largest queue needs, far below what hurts. */
	if (size > STAG_QUEUE_MAX_SIZE)
		return -EINVAL;
	size = PAGE_ALIGN(size);
	/* Zeroed, as it is mapped to userspace: no stale kernel bytes. */
	q->ctl = __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_RETRY_MAYFAIL |
			   __GFP_NOWARN);
	if (!q->ctl)
		return -ENOMEM;
	q->slots = (void *)q->ctl + STAG_QUEUE_CTL_SIZE;
	q->num_slots = num_slots;
	q->slot_size = slot_size;
	q->size = size;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_queue_init);

/**
 * stag_queue_uninit() - withdraw a ring from userspace and free it
 * @q: the queue
 *
 * A shared ring belongs to its mmap entry, which an mmap() in progress
 * holds: it is freed in stag_queue_mmap_free(), once the last holder lets
 * go, never while stag_queue_mmap() may be reading it. A mapping the
 * process still has keeps its pages (the mapping holds page references),
 * so the process can go on scribbling on memory nobody reads.
 */
void stag_queue_uninit(struct stag_queue *q)
{
	if (q->mmap)
		rdma_user_mmap_entry_remove(&q->mmap->rdma);
	else
		vfree(q->ctl);
	q->mmap = NULL;
	q->ctl = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(stag_queue_uninit);

/**
 * stag_queue_share() - make a ring mappable by the user context of a command
 * @q: the queue
 * @udata: the command
 * @offset: set to the mmap offset the provider passes to mmap()
 *
 * Return: 0 or -ENOMEM.
 */
int stag_queue_share(struct stag_queue *q, struct ib_udata *udata, u64 *offset)
{
	struct stag_ucontext *uc = rdma_udata_to_drv_context(udata, struct stag_ucontext, ibuc);
	struct ib_ucontext *uctx = &uc->ibuc;
	struct stag_mmap_entry *entry;
	int ret;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->addr = q->ctl;
	ret = rdma_user_mmap_entry_insert(uctx, &entry->rdma, q->size);
	if (ret) {
		kfree(entry);
		return ret;
	}
	q->mmap = entry;
	*offset = rdma_user_mmap_get_offset(&entry->rdma);
	return 0;
}

/**
 * stag_queue_avail() - how many slots the producer has filled
 * @q: a queue the kernel consumes
 * @count: set to the number of slots ready at the kernel's index
 *
 * The producer's index is read once; one that claims more than a full
 * ring is a corrupted queue.
 *
 * Return: 0, or -EIO for a corrupted producer index.
 */
int stag_queue_avail(struct stag_queue *q, u32 *count)
{
	/* Pairs with the producer's release: slots are filled before prod moves. */
	u32 prod = smp_load_acquire(&q->ctl->prod);

	*count = prod - q->index;
	if (*count > q->num_slots) {
		*count = 0;
		return -EIO;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_queue_avail);

/**
 * stag_queue_full() - is there no free slot for the kernel to produce in?
 * @q: a queue the kernel produces
 *
 * A consumer index that is ahead of the kernel's, or more than a ring
 * behind, is a corrupted queue, and reads as full: the kernel never
 * overwrites a slot it cannot show to be free.
 */
bool stag_queue_full(struct stag_queue *q)
{
	u32 used = q->index - READ_ONCE(q->ctl->cons);

	return used >= q->num_slots;
}
EXPORT_SYMBOL_IF_KUNIT(stag_queue_full);

void stag_queue_set_flags(struct stag_queue *q, u32 flags)
{
	WRITE_ONCE(q->ctl->flags, flags);
}

/**
 * stag_queue_mmap() - the mmap verb: map a ring named by its offset
 * @uctx: the caller's context
 * @vma: the mapping; its offset names the entry
 *
 * The mapping must be the whole ring (rdma_user_mmap_entry_get() checks
 * its size). Each page gains a reference for the mapping, which keeps it
 * after the ring is freed, until the process unmaps it.
 *
 * Return: 0, -EINVAL for an unknown offset or a mapping of another size
 * than the ring, or the error of vm_insert_page().
 */
int stag_queue_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	struct stag_mmap_entry *entry;
	unsigned long off;
	int ret = 0;

	rdma = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma)
		return -EINVAL;
	entry = container_of(rdma, struct stag_mmap_entry, rdma);
	for (off = 0; off < vma->vm_end - vma->vm_start && !ret; off += PAGE_SIZE)
		ret = vm_insert_page(vma, vma->vm_start + off, vmalloc_to_page(entry->addr + off));
	if (!ret)
		vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	rdma_user_mmap_entry_put(rdma);
	return ret;
}

/* The last reference to a shared ring's entry is gone: free the ring. */
void stag_queue_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	struct stag_mmap_entry *entry = container_of(rdma, struct stag_mmap_entry, rdma);

	vfree(entry->addr);
	kfree(entry);
}
