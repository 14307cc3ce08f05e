/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag libibverbs provider: protection domains, the parent domains made
 * over them (ibv_alloc_parent_domain) and thread domains (ibv_alloc_td).
 */
#ifndef STAG_PD_H
#define STAG_PD_H

#include <pthread.h>
#include <stdatomic.h>

#include "stag.h"

/*
 * A thread domain: the application's promise that one thread at a time
 * uses what is made in it. stag's queues take their locks anyway, so it
 * holds nothing but the parent domains' references.
 */
struct stag_td {
	struct ibv_td ibv_td;
	atomic_uint refs;	/* 1 for its owner, 1 for each parent domain in it */
};

/*
 * A protection domain, or a parent domain over one (@protection set). A
 * parent domain's ibv_pd carries its protection domain's handle, so every
 * command that names it reaches the kernel as that PD; the kernel never
 * hears of parent domains.
 *
 * A PD is not deallocated while parent domains hold its handle (EBUSY).
 * @lock makes that answer and a new parent domain wait for each other, so
 * neither sees the other half done; an imported PD unimported under its
 * parent domains (@orphan) is freed by the last of them.
 */
struct stag_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	pthread_mutex_t lock;
	unsigned int parents;	/* under @lock */
	bool orphan;		/* under @lock */
	struct stag_pd *protection;
	struct stag_td *td;
	/*
	 * The allocators of IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS: they give
	 * the rings of the CQs, QPs, SRQs and WQs made in the parent domain
	 * their memory (queue.c), and @users counts the rings that have it,
	 * which keep the parent domain from going (EBUSY, as mlx5's).
	 */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		       uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
	atomic_uint users;
};

static inline struct stag_pd *to_stag_pd(struct ibv_pd *pd)
{
	return container_of(pd, struct stag_pd, ibv_pd);
}

static inline struct stag_td *to_stag_td(struct ibv_td *td)
{
	return container_of(td, struct stag_td, ibv_td);
}

struct ibv_pd *stag_alloc_pd(struct ibv_context *ctx);
int stag_dealloc_pd(struct ibv_pd *pd);
struct ibv_pd *stag_import_pd(struct ibv_context *ctx, uint32_t pd_handle);
void stag_unimport_pd(struct ibv_pd *pd);
struct ibv_pd *stag_alloc_parent_domain(struct ibv_context *ctx,
					struct ibv_parent_domain_init_attr *attr);
bool stag_pd_is_parent(struct ibv_context *ctx, struct ibv_pd *pd);
struct ibv_td *stag_alloc_td(struct ibv_context *ctx, struct ibv_td_init_attr *attr);
int stag_dealloc_td(struct ibv_td *td);

#endif /* STAG_PD_H */
