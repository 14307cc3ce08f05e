/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag direct verbs: what the stag provider offers beyond libibverbs.
 * Applications include this header and link the provider library
 * (-lstag-rdmav34, or -lstag-rdmav65 under rdma-core 65, from libibverbs'
 * provider directory), as mlx5dv users link libmlx5.
 */
#ifndef STAGDV_H
#define STAGDV_H

#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * stagdv_reg_shared_mr() - Register Shared Memory Region
 * @src: a region of a stag device, registered with ibv_reg_mr() (or
 *	 another shared region)
 * @pd: the new region's protection domain, of the same context as @src
 * @iova: the address the new region's users name its first byte by (0
 *	  for a zero-based region)
 * @access: IBV_ACCESS_* flags of the new region
 *
 * The new region covers the same bytes as @src with its own lkey, rkey,
 * iova, PD and access rights. It pins nothing of its own: the pages stay
 * pinned until both regions are deregistered, in either order, with
 * ibv_dereg_mr().
 *
 * Return: the new region, or NULL with errno set: EINVAL for a source or
 * PD that is not of one stag context, unknown access flags or remote
 * write or atomic without local write; EACCES for write rights over a
 * source whose pages were pinned without any; whatever the kernel
 * returns otherwise.
 */
struct ibv_mr *stagdv_reg_shared_mr(struct ibv_mr *src, struct ibv_pd *pd, uint64_t iova,
				    int access);

/*
 * The resource types a parent domain's allocator is asked for, one per
 * ring (ibv_alloc_parent_domain(), IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS):
 * a completion queue's, a QP's send and receive queues', a shared receive
 * queue's and a receive WQ's. Each request is for the ring's bytes rounded
 * up to the page size, page aligned; the kernel pins the memory (charged
 * to RLIMIT_MEMLOCK) until the object is destroyed or the ring resized,
 * then the free function gets it back. An allocator that returns
 * IBV_ALLOCATOR_USE_DEFAULT leaves the ring in the kernel's memory.
 */
#define STAGDV_RES_TYPE(n)	((uint64_t)0x73746167 << 32 | (n))	/* "stag" */
#define STAGDV_RES_TYPE_CQ	STAGDV_RES_TYPE(1)
#define STAGDV_RES_TYPE_SQ	STAGDV_RES_TYPE(2)
#define STAGDV_RES_TYPE_RQ	STAGDV_RES_TYPE(3)
#define STAGDV_RES_TYPE_SRQ	STAGDV_RES_TYPE(4)
#define STAGDV_RES_TYPE_WQ	STAGDV_RES_TYPE(5)

/* Tests built against an older stagdv.h declare these themselves. */
#define STAGDV_HAS_QP_RINGS	1

/**
 * struct stagdv_ring - where a ring shared with stag.ko lies in this process
 * @ctl: the control block (struct stag_queue_ctl in <rdma/stag-abi.h>)
 * @slots: slot 0; slot i is at @slots + (i & (@num_slots - 1)) * @slot_size
 * @num_slots: the slot count, a power of two
 * @slot_size: bytes per slot
 */
struct stagdv_ring {
	void *ctl;
	void *slots;
	uint32_t num_slots;
	uint32_t slot_size;
};

/**
 * stagdv_qp_rings() - Locate a QP's send and receive rings
 * @qp: a QP of a stag device
 * @sq: filled with the send ring, if not NULL
 * @rq: filled with the receive ring, if not NULL; all zero when the QP
 *	has an SRQ
 *
 * For tests that write WQEs, valid or not, straight into a ring: fill
 * slots from the ring's prod on, store the new prod (a release store),
 * then ring the doorbell with stagdv_qp_doorbell(). ibv_post_send() and
 * ibv_post_recv() continue from whatever prod the ring holds. The rings
 * stay mapped until ibv_destroy_qp() succeeds. Nothing here is locked
 * against the QP's other users.
 *
 * Return: 0, or EINVAL when @qp is not of a stag device.
 */
int stagdv_qp_rings(struct ibv_qp *qp, struct stagdv_ring *sq, struct stagdv_ring *rq);

/**
 * stagdv_qp_doorbell() - Ring a QP's send doorbell
 * @qp: a QP of a stag device
 *
 * Tells the kernel to look at the send ring, as ibv_post_send() does
 * after publishing, without writing or publishing anything.
 *
 * Return: 0, EINVAL when @qp is not of a stag device, or the errno of the
 * doorbell command.
 */
int stagdv_qp_doorbell(struct ibv_qp *qp);

#define STAGDV_HAS_WQ_RING	1

/**
 * stagdv_wq_ring() - Locate a receive WQ's ring
 * @wq: a WQ of a stag device
 * @rq: filled with its ring, laid out as an SRQ's
 *
 * For tests that write into the ring, as stagdv_qp_rings() is. The ring
 * stays mapped until ibv_destroy_wq() succeeds.
 *
 * Return: 0, or EINVAL when @wq is not of a stag device.
 */
int stagdv_wq_ring(struct ibv_wq *wq, struct stagdv_ring *rq);

#ifdef __cplusplus
}
#endif

#endif /* STAGDV_H */
