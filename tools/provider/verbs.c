// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: control-path verbs, thin wrappers over the
 * ibv_cmd_* calls of libibverbs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "rdma_core.h"
#include "stag.h"

int stag_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp, &resp_size);
	if (ret)
		return ret;

	/* The kernel sends fw_ver as a number; the string is the provider's. */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u.%u",
		 (unsigned int)(fw >> 32) & 0xffff, (unsigned int)(fw >> 16) & 0xffff,
		 (unsigned int)fw & 0xffff);
	return 0;
}

/*
 * The free-running clock of completion timestamps, now: CLOCK_MONOTONIC in
 * nanoseconds, which the kernel stamps completions with (hca_core_clock is
 * 1 GHz). As mlx5 gives its cycles, the count is in raw_clock.tv_nsec.
 */
int stag_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values)
{
	struct timespec now;

	(void)ctx;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (!(values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
		return 0;
	if (clock_gettime(CLOCK_MONOTONIC, &now))
		return errno;
	values->raw_clock.tv_sec = 0;
	values->raw_clock.tv_nsec = (uint64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	return 0;
}

/*
 * attr is the caller's buffer, sized for the libibverbs the application
 * runs with; ibv_cmd_query_port fills it field by field, so stag never
 * needs to know how large struct ibv_port_attr is.
 */
int stag_query_port(struct ibv_context *ctx, uint8_t port_num, struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ctx, port_num, attr, &cmd, sizeof(cmd));
}

/* ibv_import_mr(): its keys and length from the kernel; its address is not known. */
struct ibv_mr *stag_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct stag_mr *mr;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	ret = ibv_cmd_query_mr(pd, &mr->vmr, mr_handle);
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}
	return &mr->vmr.ibv_mr;
}

void stag_unimport_mr(struct ibv_mr *mr)
{
	free(to_stag_mr(container_of(mr, struct verbs_mr, ibv_mr)));
}

/*
 * hca_va is the iova the region's users name its first byte by: the VA for
 * ibv_reg_mr, anything for ibv_reg_mr_iova (0 for a zero-based region).
 * The kernel checks it; it passes through unchanged.
 */
struct ibv_mr *stag_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
			   int access)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibv_reg_mr cmd = {};
	struct stag_mr *mr;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;

	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, &mr->vmr, &cmd, sizeof(cmd),
			     &resp, sizeof(resp));
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}
	return &mr->vmr.ibv_mr;
}

/* ibv_cmd_reg_dmabuf_mr() before rdma-core 55. */
typedef int (*reg_dmabuf_mr_54)(struct ibv_pd *pd, uint64_t offset, size_t length,
				uint64_t iova, int fd, int access, struct verbs_mr *vmr);

/*
 * A region over part of a dma-buf: the kernel maps it and checks the
 * range. Which ibv_cmd_reg_dmabuf_mr() this is, the release tells, not
 * the private ABI (ibverbs_provider.h).
 */
struct ibv_mr *stag_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				  uint64_t iova, int fd, int access)
{
	reg_dmabuf_mr_54 reg_54 = (reg_dmabuf_mr_54)(void (*)(void))ibv_cmd_reg_dmabuf_mr;
	struct stag_mr *mr;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	if (stag_rdma_core_release() >= 55)
		ret = ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, &mr->vmr, NULL);
	else
		ret = reg_54(pd, offset, length, iova, fd, access, &mr->vmr);
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}
	return &mr->vmr.ibv_mr;
}

/*
 * ibv_rereg_mr has no iova argument: a new translation is registered at
 * its VA, as every rdma-core provider does. ibv_cmd_rereg_mr updates the
 * keys (and the context for a new PD); ibv_rereg_mr the rest.
 */
int stag_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
		  size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp = {};
	struct ibv_rereg_mr cmd = {};
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr, access, pd, &cmd,
			       sizeof(cmd), &resp, sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
}

int stag_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	/* On failure the kernel still holds the region, so it must stay valid. */
	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	free(to_stag_mr(vmr));
	return 0;
}
