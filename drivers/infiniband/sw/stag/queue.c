// SPDX-License-Identifier: GPL-2.0
/*
 * Queues. A queue is a control block and a ring of slots in one vmalloc
 * area. User queues are mapped into the owner's address space through the
 * core's mmap entries, or lie in memory the provider brought (a parent
 * domain's allocator), pinned and mapped into the kernel; either way the
 * kernel reads the user's index once per batch, bounds it by its own, and
 * copies each slot out before using it.
 *
 * A ring is charged to the memory cgroup of the process that creates it,
 * so that a user's rings count against what the user may take; over the
 * cgroup's limit the create fails with -ENOMEM rather than waking the OOM
 * killer. vmalloc_user() would not charge it, and the charging variant of
 * it is not exported, so the pages are mapped one by one, as
 * remap_vmalloc_range() maps them. The provider's memory is the process's
 * already, charged where it was allocated.
 */

#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <kunit/visibility.h>

#include <rdma/uverbs_ioctl.h>

#include "compat.h"
#include "pages.h"
#include "queue.h"
#include "verbs.h"

/* The bytes a ring takes, page aligned, or 0 for a geometry refused. */
static size_t queue_size(u32 num_slots, u32 slot_size)
{
	size_t size;

	if (!num_slots || !is_power_of_2(num_slots) || !slot_size)
		return 0;
	if (check_mul_overflow((size_t)num_slots, (size_t)slot_size, &size) ||
	    check_add_overflow(size, (size_t)STAG_QUEUE_CTL_SIZE, &size))
		return 0;
	/* Far above what the largest queue needs, far below what hurts. */
	if (size > STAG_QUEUE_MAX_SIZE)
		return 0;
	return PAGE_ALIGN(size);
}

static void queue_set(struct stag_queue *q, void *ctl, u32 num_slots, u32 slot_size,
		      size_t size)
{
	q->ctl = ctl;
	q->slots = ctl + STAG_QUEUE_CTL_SIZE;
	q->num_slots = num_slots;
	q->slot_size = slot_size;
	q->size = size;
}

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
	size_t size = queue_size(num_slots, slot_size);

	memset(q, 0, sizeof(*q));
	if (!size)
		return -EINVAL;
	/* Zeroed, as it is mapped to userspace: no stale kernel bytes. */
	q->ctl = __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_RETRY_MAYFAIL |
			   __GFP_NOWARN);
	if (!q->ctl)
		return -ENOMEM;
	queue_set(q, q->ctl, num_slots, slot_size, size);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_queue_init);

/*
 * The provider's memory as a ring: pinned for write and charged as a
 * region's pages are, then mapped into the kernel whole. The pages stay
 * the process's too; what it writes there is as hostile as what it writes
 * into a ring of the kernel's, and read the same way.
 */
static int queue_init_user(struct stag_queue *q, u32 num_slots, u32 slot_size,
			   const struct stag_ring_mem *mem)
{
	size_t size = queue_size(num_slots, slot_size);
	struct stag_pages *pages;
	struct page **map;
	size_t i, n;
	int ret;

	if (!size || !PAGE_ALIGNED(mem->addr) || mem->len < size)
		return -EINVAL;
	pages = stag_pages_pin_user(mem->addr, size, true, &ret);
	if (!pages)
		return ret;
	n = size >> PAGE_SHIFT;
	map = kvmalloc_array(n, sizeof(*map), GFP_KERNEL);
	if (!map) {
		ret = -ENOMEM;
		goto err_put;
	}
	for (i = 0; i < n; i++)
		map[i] = stag_pages_page(pages, i);
	q->ctl = vmap(map, n, VM_MAP, PAGE_KERNEL);
	kvfree(map);
	if (!q->ctl) {
		ret = -ENOMEM;
		goto err_put;
	}
	/* Both indices start at 0, whatever the memory held. */
	memset(q->ctl, 0, size);
	queue_set(q, q->ctl, num_slots, slot_size, size);
	q->upages = pages;
	return 0;

err_put:
	stag_pages_put(pages);
	return ret;
}

/**
 * stag_queue_init_mem() - an empty ring, in the provider's memory if it brings it
 * @q: the queue
 * @num_slots: a power of two, at least 1
 * @slot_size: bytes per slot
 * @mem: the provider's memory (struct stag_ring_mem), or NULL or addr 0
 *	 for a ring of the kernel's
 *
 * Return: as stag_queue_init(); with memory of the provider's, also
 * -EINVAL for an address that is not page aligned or a length short of the
 * ring, -EFAULT for memory the process cannot write, -ENOMEM past
 * RLIMIT_MEMLOCK.
 */
int stag_queue_init_mem(struct stag_queue *q, u32 num_slots, u32 slot_size,
			const struct stag_ring_mem *mem)
{
	if (!mem || !mem->addr)
		return stag_queue_init(q, num_slots, slot_size);
	memset(q, 0, sizeof(*q));
	return queue_init_user(q, num_slots, slot_size, mem);
}

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
	if (q->upages) {
		/* Unmapped before the caller returns: the process may reuse the memory then. */
		vunmap(q->ctl);
		stag_pages_put(q->upages);
	} else if (q->mmap) {
		rdma_user_mmap_entry_remove(&q->mmap->rdma);
	} else {
		vfree(q->ctl);
	}
	q->upages = NULL;
	q->mmap = NULL;
	q->ctl = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(stag_queue_uninit);

/**
 * stag_queue_cmd() - the driver tail of a command, as far as this module knows it
 * @udata: the command, or NULL for a kernel consumer's verb
 * @cmd: filled with the tail, zero past what the provider sent
 * @min: the fewest bytes a tail may have (0: none at all is fine)
 * @size: the tail's size here
 *
 * Return: 0; -EINVAL for a tail shorter than @min; -EOPNOTSUPP for one
 * longer than @size that is not zero past it (a newer provider's fields);
 * -EFAULT.
 */
int stag_queue_cmd(struct ib_udata *udata, void *cmd, size_t min, size_t size)
{
	size_t len = udata ? udata->inlen : 0;

	memset(cmd, 0, size);
	if (len < min)
		return -EINVAL;
	if (len > size) {
		if (!ib_is_udata_cleared(udata, size, len - size))
			return -EOPNOTSUPP;
		len = size;
	}
	return len ? ib_copy_from_udata(cmd, udata, len) : 0;
}

/**
 * stag_queue_share() - make a ring mappable by the user context of a command
 * @q: the queue
 * @udata: the command
 * @offset: set to the mmap offset the provider passes to mmap(); 0 for a
 *	    ring in the provider's own memory, which it has already
 *
 * Return: 0 or -ENOMEM.
 */
int stag_queue_share(struct stag_queue *q, struct ib_udata *udata, u64 *offset)
{
	struct stag_ucontext *uc = rdma_udata_to_drv_context(udata, struct stag_ucontext, ibuc);
	struct ib_ucontext *uctx = &uc->ibuc;
	struct stag_mmap_entry *entry;
	int ret;

	if (q->upages) {
		*offset = 0;
		return 0;
	}

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
