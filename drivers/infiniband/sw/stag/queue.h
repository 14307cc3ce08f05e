/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag queue: a ring of fixed-size slots in vmalloc memory, shared with
 * the provider by mmap for user objects and private for kernel ones.
 */
#ifndef _STAG_QUEUE_H
#define _STAG_QUEUE_H

#include <linux/sizes.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/stag-abi.h>

#define STAG_QUEUE_MAX_SIZE	STAG_RING_MAX_BYTES

struct stag_pages;

struct stag_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *addr;
};

/*
 * The kernel owns one index of each ring (cons of a ring it consumes, prod
 * of one it produces) and keeps it in @index, never reading it back from
 * @ctl, which userspace can write. The other index is read from @ctl and
 * checked against @index before use.
 */
struct stag_queue {
	struct stag_queue_ctl *ctl;
	void *slots;
	u32 num_slots;		/* a power of two */
	u32 slot_size;
	u32 index;		/* the kernel's own index */
	size_t size;		/* bytes at ctl, page aligned */
	struct stag_mmap_entry *mmap;	/* NULL until shared */
	struct stag_pages *upages;	/* the provider's memory, vmap()ed at ctl; or NULL */
};

int __must_check stag_queue_init(struct stag_queue *q, u32 num_slots, u32 slot_size);
int __must_check stag_queue_init_mem(struct stag_queue *q, u32 num_slots, u32 slot_size,
				     const struct stag_ring_mem *mem);
void stag_queue_uninit(struct stag_queue *q);
int stag_queue_cmd(struct ib_udata *udata, void *cmd, size_t min, size_t size);
int __must_check stag_queue_share(struct stag_queue *q, struct ib_udata *udata, u64 *offset);
int stag_queue_avail(struct stag_queue *q, u32 *count);
bool stag_queue_full(struct stag_queue *q);
void stag_queue_set_flags(struct stag_queue *q, u32 flags);

int stag_queue_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void stag_queue_mmap_free(struct rdma_user_mmap_entry *entry);

static inline void *stag_queue_slot(const struct stag_queue *q, u32 index)
{
	return q->slots + (size_t)(index & (q->num_slots - 1)) * q->slot_size;
}

/* Consumer side: the slot at the kernel's cons, and moving past it. */
static inline void *stag_queue_head(const struct stag_queue *q)
{
	return stag_queue_slot(q, q->index);
}

/*
 * Gives slots up to @cons back to the producer. A consumer that holds on
 * to what it took (the send queue, until a WQE completes) gives them back
 * later than it takes them.
 */
static inline void stag_queue_release(struct stag_queue *q, u32 cons)
{
	/* The slots have been copied out: the producer may reuse them. */
	smp_store_release(&q->ctl->cons, cons);
}

/* Takes the slot at the head, and gives it back at once. */
static inline void stag_queue_pop(struct stag_queue *q)
{
	q->index++;
	stag_queue_release(q, q->index);
}

/* Producer side: the slot at the kernel's prod, and publishing it. */
static inline void *stag_queue_tail(const struct stag_queue *q)
{
	return stag_queue_slot(q, q->index);
}

static inline void stag_queue_push(struct stag_queue *q)
{
	q->index++;
	/* The slot is written before the consumer can see it. */
	smp_store_release(&q->ctl->prod, q->index);
}

/*
 * The producer of a kernel-only ring the kernel consumes (a kernel QP's
 * send or receive queue, a kernel SRQ): post_send and post_recv, under
 * their queue's lock. The ring is not shared, so its indices are the
 * kernel's own.
 */
static inline bool stag_queue_kfull(const struct stag_queue *q)
{
	return q->ctl->prod - READ_ONCE(q->ctl->cons) >= q->num_slots;
}

static inline void *stag_queue_ktail(const struct stag_queue *q)
{
	return stag_queue_slot(q, q->ctl->prod);
}

static inline void stag_queue_kpush(struct stag_queue *q)
{
	/* The slot is written before the consumer can see it. */
	smp_store_release(&q->ctl->prod, q->ctl->prod + 1);
}

#endif /* _STAG_QUEUE_H */
