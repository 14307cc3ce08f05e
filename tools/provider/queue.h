/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rings shared with stag.ko (see stag-abi.h): mapping them, producing into
 * and consuming from them, and the doorbells that tell the kernel to look.
 *
 * Each ring has one producer and one consumer, and each side owns one
 * index. The side that owns an index reads it back from the ring when it
 * starts a batch (a test may have produced into a ring directly, see
 * stagdv_qp_rings()), works on a private copy while it holds the ring's
 * lock, and publishes the copy with a release store. The other side's
 * index is only ever read with an acquire load.
 */
#ifndef STAG_QUEUE_H
#define STAG_QUEUE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/stag-abi.h>

#include "ibverbs_provider.h"

struct stag_pd;

/*
 * A ring lies in the kernel's memory, mmap()ed, or in memory a parent
 * domain's allocator gave (@mem), which the kernel pinned: freed with
 * that domain's free function once the kernel has let go of it.
 */
struct stag_queue {
	struct stag_queue_ctl *ctl;	/* start of the mapping; NULL if none */
	uint8_t *slots;
	size_t map_len;
	uint32_t num_slots;		/* a power of two */
	uint32_t slot_size;
	uint32_t index;			/* this side's index, under lock */
	pthread_spinlock_t lock;	/* serialises this side's users */
	void *mem;			/* the allocator's memory, or NULL */
	size_t mem_len;
	struct stag_pd *parent;		/* whose allocator gave @mem */
	uint64_t res_type;		/* STAGDV_RES_TYPE_* of @mem */
};

static_assert(sizeof(struct stag_queue_ctl) == STAG_QUEUE_CTL_SIZE, "stag_queue_ctl size");
static_assert(offsetof(struct stag_queue_ctl, flags) == 4, "stag_queue_ctl.flags");
static_assert(offsetof(struct stag_queue_ctl, cons) == 64, "stag_queue_ctl.cons");
static_assert(sizeof(struct stag_send_wqe) == STAG_SEND_WQE_HDR_SIZE, "stag_send_wqe size");
static_assert(sizeof(struct stag_recv_wqe) == 16, "stag_recv_wqe size");
static_assert(sizeof(struct stag_cqe) == 48, "stag_cqe size");
/* Scatter lists are copied into slots as the application gave them. */
static_assert(sizeof(struct ibv_sge) == sizeof(struct stag_sge), "ibv_sge size");
static_assert(offsetof(struct ibv_sge, length) == offsetof(struct stag_sge, length),
	      "ibv_sge.length");
static_assert(offsetof(struct ibv_sge, lkey) == offsetof(struct stag_sge, lkey), "ibv_sge.lkey");

int stag_queue_alloc(struct stag_queue *q, struct ibv_pd *pd, uint64_t res_type,
		     uint32_t num_slots, uint32_t slot_size, struct stag_ring_mem *mem);
int stag_queue_alloc_next(struct stag_queue *q, struct stag_queue *next, uint32_t num_slots,
			  uint32_t slot_size, struct stag_ring_mem *mem);
void stag_queue_free(struct stag_queue *q);
int stag_queue_map(struct stag_queue *q, int cmd_fd, uint64_t offset, uint32_t num_slots,
		   uint32_t slot_size, uint64_t min_slot_size);
int stag_queue_remap(struct stag_queue *q, struct stag_queue *next, int cmd_fd, uint64_t offset,
		     uint32_t num_slots, uint32_t slot_size, uint64_t min_slot_size);
void stag_queue_unmap(struct stag_queue *q);

static inline bool stag_queue_mapped(const struct stag_queue *q)
{
	return q->ctl;
}

static inline void *stag_queue_slot(const struct stag_queue *q, uint32_t i)
{
	return q->slots + (size_t)(i & (q->num_slots - 1)) * q->slot_size;
}

/* Producer side, between stag_queue_prod_begin() and _publish(), lock held. */
static inline void stag_queue_prod_begin(struct stag_queue *q)
{
	q->index = __atomic_load_n(&q->ctl->prod, __ATOMIC_RELAXED);
}

/* Return: the slot to fill next, or NULL when the ring is full. */
static inline void *stag_queue_prod_slot(const struct stag_queue *q)
{
	/* Pairs with the kernel's release of cons: it is done with the slot. */
	uint32_t cons = __atomic_load_n(&q->ctl->cons, __ATOMIC_ACQUIRE);

	if (q->index - cons >= q->num_slots)
		return NULL;
	return stag_queue_slot(q, q->index);
}

static inline void stag_queue_prod_advance(struct stag_queue *q)
{
	q->index++;
}

static inline void stag_queue_prod_publish(struct stag_queue *q)
{
	__atomic_store_n(&q->ctl->prod, q->index, __ATOMIC_RELEASE);
}

/* Consumer side, between stag_queue_cons_begin() and _publish(), lock held. */
static inline void stag_queue_cons_begin(struct stag_queue *q)
{
	q->index = __atomic_load_n(&q->ctl->cons, __ATOMIC_RELAXED);
}

/* Return: the slot to take next, or NULL when the ring is empty. */
static inline const void *stag_queue_cons_slot(const struct stag_queue *q)
{
	/* Pairs with the kernel's release of prod: the slot is filled. */
	uint32_t prod = __atomic_load_n(&q->ctl->prod, __ATOMIC_ACQUIRE);

	if (prod == q->index)
		return NULL;
	return stag_queue_slot(q, q->index);
}

static inline void stag_queue_cons_advance(struct stag_queue *q)
{
	q->index++;
}

static inline void stag_queue_cons_publish(struct stag_queue *q)
{
	__atomic_store_n(&q->ctl->cons, q->index, __ATOMIC_RELEASE);
}

int stag_queue_post_recv(struct stag_queue *q, uint32_t max_sge, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
bool stag_queue_flushing(const struct stag_queue *q);

int stag_sq_doorbell(struct ibv_qp *qp);
int stag_rq_doorbell(struct ibv_qp *qp);

#endif /* STAG_QUEUE_H */
