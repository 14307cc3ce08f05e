/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag libibverbs provider: private objects and the verbs the context
 * table points at. Each object embeds the libibverbs one as its first
 * member, so libibverbs' pointers convert back with container_of().
 */
#ifndef STAG_PROVIDER_H
#define STAG_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/stag-abi.h>

#include "ibverbs_provider.h"

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct stag_device {
	struct verbs_device ibv_dev;
};

struct stag_context {
	struct verbs_context ibv_ctx;
	uint32_t abi_version;
	int qp_ex_mask_offset;	/* stag_qp_ex_mask_offset() */
	bool imported;		/* ibv_import_device(): doorbells by ioctl (queue.c) */
};

/* A user memory region: stag has no driver data for it either way. */
struct stag_mr {
	struct verbs_mr vmr;
};

/*
 * Responses as the kernel writes them: the core uverbs response, then the
 * driver's udata right after it (kern-abi.h's DECLARE_DRV_CMD layout).
 */
struct stag_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct stag_alloc_ucontext_resp drv;
};

struct stag_alloc_pd_resp_full {
	struct ib_uverbs_alloc_pd_resp ibv_resp;
	struct stag_alloc_pd_resp drv;
};

static_assert(offsetof(struct stag_get_context_resp, drv) ==
	      sizeof(struct ib_uverbs_get_context_resp), "padding before the udata");
static_assert(offsetof(struct stag_alloc_pd_resp_full, drv) ==
	      sizeof(struct ib_uverbs_alloc_pd_resp), "padding before the udata");

static inline struct stag_context *to_stag_ctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct stag_context, ibv_ctx.context);
}

static inline struct stag_mr *to_stag_mr(struct verbs_mr *vmr)
{
	return container_of(vmr, struct stag_mr, vmr);
}

int stag_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int stag_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values);
int stag_query_port(struct ibv_context *ctx, uint8_t port_num, struct ibv_port_attr *attr);
struct ibv_mr *stag_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
			   int access);
struct ibv_mr *stag_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				  uint64_t iova, int fd, int access);
int stag_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
		  size_t length, int access);
int stag_dereg_mr(struct verbs_mr *vmr);
struct ibv_mr *stag_import_mr(struct ibv_pd *pd, uint32_t mr_handle);
void stag_unimport_mr(struct ibv_mr *mr);
int stag_query_pd_ioctl(struct ibv_context *ctx, uint32_t pd_handle, uint32_t *pdn);
int stag_srq_ops_ioctl(struct ibv_srq *srq, const struct stag_srq_op *op, uint32_t *handle);

#endif /* STAG_PROVIDER_H */
