/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag direct verbs: what the stag provider offers beyond libibverbs.
 * Applications include this header and link the provider library
 * (-lstag-rdmav34 from libibverbs' provider directory), as mlx5dv users
 * link libmlx5.
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

#ifdef __cplusplus
}
#endif

#endif /* STAGDV_H */
