// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs entry points. Each is a thin call into the object that owns
 * the work; the ops table lists one verb per line, alphabetically.
 */

#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>
#include <rdma/stag-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "ah.h"
#include "compat.h"
#include "counters.h"
#include "cq.h"
#include "dev.h"
#include "flow.h"
#include "mcast.h"
#include "mr.h"
#include "mw.h"
#include "pd.h"
#include "port.h"
#include "qp.h"
#include "queue.h"
#include "route.h"
#include "rss.h"
#include "srq.h"
#include "verbs.h"
#include "wq.h"
#include "xrcd.h"

static int stag_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	/*
	 * stag defines no driver data for this command. The core's own query
	 * at registration passes no udata from 7.x on.
	 */
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	*attr = to_stag_dev(ibdev)->attr;
	return 0;
}

static int stag_query_port(struct ib_device *ibdev, u32 port_num, struct ib_port_attr *attr)
{
	return stag_port_query(to_stag_dev(ibdev), attr);
}

static int stag_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				   struct ib_port_immutable *imm)
{
	return stag_port_immutable(to_stag_dev(ibdev), imm);
}

static enum rdma_link_layer stag_get_link_layer(struct ib_device *ibdev, u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int stag_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index, u16 *pkey)
{
	if (index >= STAG_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int stag_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct stag_alloc_ucontext_resp resp = {
		.abi_version = STAG_UVERBS_ABI_VERSION,
	};

	if (!udata->outlen)
		return 0;
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

static void stag_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * ibv_import_device(): the core has answered what it knows of the context;
 * stag has nothing to add (its ABI version is the device's, in sysfs).
 */
static int stag_query_ucontext(struct ib_ucontext *ibuc, struct uverbs_attr_bundle *attrs)
{
	return 0;
}

/*
 * Having this callback is what lets the core tear user contexts down on
 * device removal instead of waiting for every process to close its file:
 * the core zaps the user's mappings and destroys its objects itself, and
 * stag keeps no per-context state that needs more.
 */
static void stag_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

const struct ib_device_ops stag_verbs_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = STAG_UVERBS_ABI_VERSION,

	.add_gid = stag_route_add_gid,
	.advise_mr = stag_mr_advise,
	.alloc_hw_port_stats = stag_counters_alloc_port_stats,
	.alloc_mr = stag_mr_alloc,
	.alloc_mw = stag_mw_alloc,
	.alloc_pd = stag_pd_alloc,
	.alloc_ucontext = stag_alloc_ucontext,
	.alloc_xrcd = stag_xrcd_alloc,
	.attach_mcast = stag_mcast_attach,
	.create_ah = stag_ah_create,
	.create_cq = stag_cq_create,
	.create_flow = stag_flow_create,
	.create_qp = stag_qp_create,
	.create_rwq_ind_table = stag_rss_create_ind_table,
	.create_srq = stag_srq_create,
	.create_user_ah = stag_ah_create,
	.create_wq = stag_wq_create,
	.dealloc_driver = stag_dev_dealloc,
	.dealloc_mw = stag_mw_dealloc,
	.dealloc_pd = stag_pd_dealloc,
	.dealloc_ucontext = stag_dealloc_ucontext,
	.dealloc_xrcd = stag_xrcd_dealloc,
	.del_gid = stag_route_del_gid,
	.dereg_mr = stag_mr_dereg,
	.destroy_ah = stag_ah_destroy,
	.destroy_cq = stag_cq_destroy,
	.destroy_flow = stag_flow_destroy,
	.destroy_qp = stag_qp_destroy,
	.destroy_rwq_ind_table = stag_rss_destroy_ind_table,
	.destroy_srq = stag_srq_destroy,
	.destroy_wq = stag_wq_destroy,
	.detach_mcast = stag_mcast_detach,
	.disassociate_ucontext = stag_disassociate_ucontext,
	.fill_res_mr_entry = stag_mr_fill_res_entry,
	.fill_res_qp_entry = stag_qp_fill_res_entry,
	.get_dma_mr = stag_mr_get_dma,
	.get_hw_stats = stag_counters_get_stats,
	.get_link_layer = stag_get_link_layer,
	.get_port_immutable = stag_get_port_immutable,
	.map_mr_sg = stag_mr_map_sg,
	.mmap = stag_queue_mmap,
	.mmap_free = stag_queue_mmap_free,
	.modify_qp = stag_qp_modify,
	.modify_srq = stag_srq_modify,
	.modify_wq = stag_wq_modify,
	.poll_cq = stag_cq_poll,
	.post_recv = stag_qp_post_recv,
	.post_send = stag_qp_post_send,
	.post_srq_recv = stag_srq_post_recv,
	.query_device = stag_query_device,
	.query_pkey = stag_query_pkey,
	.query_port = stag_query_port,
	.query_qp = stag_qp_query,
	.query_srq = stag_srq_query,
	.query_ucontext = stag_query_ucontext,
	STAG_OPS_REG_USER_MR(stag_mr_reg_user),
	STAG_OPS_REG_DMABUF_MR(stag_mr_reg_dmabuf),
	.req_notify_cq = stag_cq_req_notify,
	.rereg_user_mr = stag_mr_rereg_user,
	STAG_OPS_REPORT_PORT_EVENT(stag_port_report_event)
	STAG_OPS_RESIZE_CQ(stag_cq_resize),

	INIT_RDMA_OBJ_SIZE(ib_ah, stag_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, stag_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, stag_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, stag_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, stag_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_rwq_ind_table, stag_rwq_ind_table, ibtbl),
	INIT_RDMA_OBJ_SIZE(ib_srq, stag_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, stag_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, stag_xrcd, ibxrcd),
};
