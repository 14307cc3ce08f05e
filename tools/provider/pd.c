// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: protection domains, parent domains and thread
 * domains.
 *
 * A parent domain is this provider's alone: the kernel sees only the
 * protection domain whose handle it carries. What stag must get right is
 * that handle's lifetime: a PD with parent domains over it refuses to go
 * (EBUSY, as mlx5 does), and so does a thread domain one of them names,
 * with threads making and freeing domains at once agreeing on which came
 * first.
 */
#include <errno.h>
#include <stdlib.h>

#include "pd.h"

/* A thread domain's reference for a new parent domain, unless its owner's is gone. */
static bool td_get(struct stag_td *td)
{
	unsigned int n = atomic_load(&td->refs);

	do {
		if (!n)
			return false;
	} while (!atomic_compare_exchange_weak(&td->refs, &n, n + 1));
	return true;
}

static void pd_free(struct stag_pd *pd)
{
	pthread_mutex_destroy(&pd->lock);
	free(pd);
}

/* A PD as the kernel or an import made it: no parent domain yet. */
static void pd_init(struct stag_pd *pd)
{
	pthread_mutex_init(&pd->lock, NULL);
}

struct ibv_pd *stag_alloc_pd(struct ibv_context *ctx)
{
	struct stag_alloc_pd_resp_full resp = {};
	struct ibv_alloc_pd cmd = {};
	struct stag_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(ctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->pdn = resp.drv.pdn;
	pd_init(pd);
	return &pd->ibv_pd;
}

/* A parent domain goes at once: no ring holds its allocator's memory. */
static void parent_free(struct stag_pd *parent)
{
	struct stag_pd *pd = parent->protection;
	bool last;

	/* A thread domain's owner cannot go before its parent domains (EBUSY). */
	if (parent->td)
		atomic_fetch_sub(&parent->td->refs, 1);
	pthread_mutex_lock(&pd->lock);
	last = !--pd->parents && pd->orphan;
	pthread_mutex_unlock(&pd->lock);
	if (last)
		pd_free(pd);
	free(parent);
}

int stag_dealloc_pd(struct ibv_pd *ibpd)
{
	struct stag_pd *pd = to_stag_pd(ibpd);
	int ret;

	if (pd->protection) {
		/* Rings hold its allocator's memory, which its free function gives back. */
		if (atomic_load(&pd->users))
			return EBUSY;
		parent_free(pd);
		return 0;
	}
	/* A parent domain being made waits for the kernel's answer. */
	pthread_mutex_lock(&pd->lock);
	ret = pd->parents ? EBUSY : ibv_cmd_dealloc_pd(ibpd);
	pthread_mutex_unlock(&pd->lock);
	/* On failure the kernel still holds the PD, so it must stay valid. */
	if (ret)
		return ret;
	pd_free(pd);
	return 0;
}

/*
 * ibv_import_pd(): a PD of a context this process imported (or its own),
 * by handle. The kernel says whether the handle names one; the PD stays
 * the kernel's, and unimporting frees only what the provider holds.
 */
struct ibv_pd *stag_import_pd(struct ibv_context *ctx, uint32_t pd_handle)
{
	struct stag_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	ret = stag_query_pd_ioctl(ctx, pd_handle, &pd->pdn);
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->ibv_pd.context = ctx;
	pd->ibv_pd.handle = pd_handle;
	pd_init(pd);
	return &pd->ibv_pd;
}

/* Unimporting cannot fail: parent domains over the PD keep its memory until they go. */
void stag_unimport_pd(struct ibv_pd *ibpd)
{
	struct stag_pd *pd = to_stag_pd(ibpd);
	bool last;

	pthread_mutex_lock(&pd->lock);
	pd->orphan = true;
	last = !pd->parents;
	pthread_mutex_unlock(&pd->lock);
	if (last)
		pd_free(pd);
}

/*
 * ibv_alloc_parent_domain(): over a PD of this context that is not itself
 * a parent domain, optionally in a thread domain of this context. The
 * allocators and their context are kept for the rings of the objects
 * made in it (stag_queue_alloc()).
 */
struct ibv_pd *stag_alloc_parent_domain(struct ibv_context *ctx,
					struct ibv_parent_domain_init_attr *attr)
{
	struct stag_pd *parent, *pd;
	struct stag_td *td = NULL;

	if (!attr || !attr->pd || attr->pd->context != ctx ||
	    (attr->td && attr->td->context != ctx) ||
	    (attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
					   IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT))) {
		errno = EINVAL;
		return NULL;
	}
	pd = to_stag_pd(attr->pd);
	if (pd->protection) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->td)
		td = to_stag_td(attr->td);

	parent = calloc(1, sizeof(*parent));
	if (!parent)
		return NULL;
	/* Only a thread domain already being deallocated is refused here. */
	if (td && !td_get(td)) {
		free(parent);
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&pd->lock);
	pd->parents++;
	pthread_mutex_unlock(&pd->lock);

	parent->ibv_pd.context = ctx;
	parent->ibv_pd.handle = pd->ibv_pd.handle;
	parent->pdn = pd->pdn;
	parent->protection = pd;
	parent->td = td;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		parent->alloc = attr->alloc;
		parent->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		parent->pd_context = attr->pd_context;
	return &parent->ibv_pd;
}

/* Whether @pd is a parent domain of @ctx, as ibv_create_cq_ex's PD must be. */
bool stag_pd_is_parent(struct ibv_context *ctx, struct ibv_pd *pd)
{
	return pd && pd->context == ctx && to_stag_pd(pd)->protection;
}

struct ibv_td *stag_alloc_td(struct ibv_context *ctx, struct ibv_td_init_attr *attr)
{
	struct stag_td *td;

	if (!attr || attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td)
		return NULL;
	td->ibv_td.context = ctx;
	atomic_init(&td->refs, 1);
	return &td->ibv_td;
}

/* EBUSY while a parent domain names the thread domain: nothing changed. */
int stag_dealloc_td(struct ibv_td *ibtd)
{
	struct stag_td *td = to_stag_td(ibtd);
	unsigned int one = 1;

	if (!atomic_compare_exchange_strong(&td->refs, &one, 0))
		return EBUSY;
	free(td);
	return 0;
}
