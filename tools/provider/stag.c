// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: device matching, context setup and teardown,
 * and registration with libibverbs.
 */
#include <errno.h>
#include <stdlib.h>

#include "ah.h"
#include "cq.h"
#include "flow.h"
#include "mw.h"
#include "pd.h"
#include "qp.h"
#include "srq.h"
#include "wq.h"
#include "stag.h"
#include "xrcd.h"

/*
 * verbs_set_ops() copies only the ops set here; the rest keep libibverbs'
 * verbs_dummy_ops, which fail with EOPNOTSUPP, as the module does for every
 * verb it does not implement yet.
 */
static void stag_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops stag_context_ops = {
	.advise_mr = ibv_cmd_advise_mr,
	.alloc_mw = stag_alloc_mw,
	.alloc_parent_domain = stag_alloc_parent_domain,
	.alloc_pd = stag_alloc_pd,
	.alloc_td = stag_alloc_td,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = stag_bind_mw,
	.close_xrcd = stag_close_xrcd,
	.create_ah = stag_create_ah,
	.create_cq = stag_create_cq,
	.create_cq_ex = stag_create_cq_ex,
	.create_flow = stag_create_flow,
	.create_qp = stag_create_qp,
	.create_qp_ex = stag_create_qp_ex,
	.create_rwq_ind_table = stag_create_rwq_ind_table,
	.create_srq = stag_create_srq,
	.create_srq_ex = stag_create_srq_ex,
	.create_wq = stag_create_wq,
	.dealloc_mw = stag_dealloc_mw,
	.dealloc_pd = stag_dealloc_pd,
	.dealloc_td = stag_dealloc_td,
	.dereg_mr = stag_dereg_mr,
	.destroy_ah = stag_destroy_ah,
	.destroy_cq = stag_destroy_cq,
	.destroy_flow = stag_destroy_flow,
	.destroy_qp = stag_destroy_qp,
	.destroy_rwq_ind_table = stag_destroy_rwq_ind_table,
	.destroy_srq = stag_destroy_srq,
	.destroy_wq = stag_destroy_wq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = stag_free_context,
	.get_srq_num = stag_get_srq_num,
	.import_mr = stag_import_mr,
	.import_pd = stag_import_pd,
	.modify_qp = stag_modify_qp,
	.modify_srq = stag_modify_srq,
	.modify_wq = stag_modify_wq,
	.open_qp = stag_open_qp,
	.open_xrcd = stag_open_xrcd,
	.poll_cq = stag_poll_cq,
	.post_recv = stag_post_recv,
	.post_send = stag_post_send,
	.post_srq_recv = stag_post_srq_recv,
	.post_srq_ops = stag_post_srq_ops,
	.query_device_ex = stag_query_device_ex,
	.query_port = stag_query_port,
	.query_qp = stag_query_qp,
	.query_rt_values = stag_query_rt_values,
	.query_srq = stag_query_srq,
	.reg_dmabuf_mr = stag_reg_dmabuf_mr,
	.reg_mr = stag_reg_mr,
	.req_notify_cq = ibv_cmd_req_notify_cq,
	.rereg_mr = stag_rereg_mr,
	.resize_cq = stag_resize_cq,
	.unimport_mr = stag_unimport_mr,
	.unimport_pd = stag_unimport_pd,
};

static void context_init(struct stag_context *ctx, uint32_t abi_version)
{
	ctx->abi_version = abi_version;
	ctx->qp_ex_mask_offset = stag_qp_ex_mask_offset();
	verbs_set_ops(&ctx->ibv_ctx, &stag_context_ops);
}

static struct verbs_context *stag_alloc_context(struct ibv_device *ibdev, int cmd_fd,
						void *private_data)
{
	struct stag_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct stag_context *ctx;
	int ret;

	(void)private_data;

	/* The kernel has no driver id for stag; it is found by name. */
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, struct stag_context, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	ret = stag_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_uninit_context;

	/*
	 * sysfs already matched the module's ABI; a different answer here
	 * means the module and its sysfs disagree, and nothing else it says
	 * can be trusted.
	 */
	if (resp.drv.abi_version != STAG_UVERBS_ABI_VERSION) {
		ret = EPROTO;
		goto err_uninit_context;
	}
	context_init(ctx, resp.drv.abi_version);
	return &ctx->ibv_ctx;

err_uninit_context:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = ret;
	return NULL;
}

/*
 * ibv_import_device(): a context another process (or this one) opened,
 * through a duplicate of its command file. The kernel's answer has nothing
 * of stag's: the ABI is the one sysfs matched when the device was found.
 */
static struct verbs_context *stag_import_context(struct ibv_device *ibdev, int cmd_fd)
{
	struct stag_context *ctx;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, struct stag_context, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	ret = ibv_cmd_query_context(&ctx->ibv_ctx.context, NULL);
	if (ret) {
		verbs_uninit_context(&ctx->ibv_ctx);
		free(ctx);
		errno = ret;
		return NULL;
	}
	context_init(ctx, STAG_UVERBS_ABI_VERSION);
	ctx->imported = true;
	return &ctx->ibv_ctx;
}

static void stag_free_context(struct ibv_context *ibctx)
{
	struct stag_context *ctx = to_stag_ctx(ibctx);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *stag_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct stag_device *dev;

	(void)sysfs_dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void stag_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct stag_device, ibv_dev));
}

static const struct verbs_match_ent stag_match_table[] = {
	VERBS_NAME_MATCH(STAG_DEVICE_NAME_PREFIX, NULL),
	{},
};

static const struct verbs_device_ops stag_dev_ops = {
	.name = "stag",
	/* libibverbs compares these with the device's sysfs abi_version. */
	.match_min_abi_version = STAG_UVERBS_ABI_VERSION,
	.match_max_abi_version = STAG_UVERBS_ABI_VERSION,
	.match_table = stag_match_table,
	.alloc_device = stag_alloc_device,
	.uninit_device = stag_uninit_device,
	.alloc_context = stag_alloc_context,
	.import_context = stag_import_context,
};

PROVIDER_DRIVER(stag, stag_dev_ops);
