// SPDX-License-Identifier: GPL-2.0
/*
 * Creation and removal of stag devices.
 *
 * Devices are created by rdma link add (stag_dev_add) and removed by the
 * ib core, from rdma link delete, from netdev unregistration (queued) or
 * from module unload (stag_dev_remove_all). Whatever the path, the core
 * calls stag_dev_dealloc() exactly once, and that is where a device leaves
 * stag_devices.
 */

#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <linux/string.h>
#include <net/addrconf.h>
#include <kunit/visibility.h>
#include <rdma/stag-abi.h>

#include "debugfs.h"
#include "dev.h"
#include "ah.h"
#include "compat.h"
#include "cq.h"
#include "mcast.h"
#include "mr.h"
#include "mw.h"
#include "pd.h"
#include "qp.h"
#include "roce.h"
#include "rss.h"
#include "srq.h"
#include "tm.h"
#include "uapi.h"
#include "verbs.h"

/*
 * The netdev notifier looks devices up under rtnl, and registering a
 * device takes rtnl inside the core (RoCE GID rescan), so the list is
 * guarded by a spinlock that is never held across a call into the core.
 * stag_link_mutex serialises rdma link add, so that two adds for the same
 * netdev or name cannot both pass their checks.
 */
static LIST_HEAD(stag_devices);
static DEFINE_SPINLOCK(stag_devices_lock);
static DEFINE_MUTEX(stag_link_mutex);

/**
 * stag_dev_check_name() - check a name given to rdma link add
 * @name: the requested ib_device name
 *
 * The provider finds stag devices by their name prefix, and a name with a
 * '%' would be expanded by the core into something else.
 *
 * Return: 0, or -EINVAL for a name that is not "stag" plus at least one
 * character, is too long, or has a '%' or '/'.
 */
VISIBLE_IF_KUNIT int stag_dev_check_name(const char *name)
{
	size_t prefix = strlen(STAG_DEVICE_NAME_PREFIX);
	size_t len = strnlen(name, IB_DEVICE_NAME_MAX);

	if (len == IB_DEVICE_NAME_MAX || len <= prefix)
		return -EINVAL;
	if (strncmp(name, STAG_DEVICE_NAME_PREFIX, prefix))
		return -EINVAL;
	if (strpbrk(name, "%/"))
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_dev_check_name);

/**
 * stag_dev_check_netdev() - check a netdev given to rdma link add
 * @ndev: the netdev
 *
 * RoCE needs Ethernet framing; loopback is accepted too, for same-host
 * use.
 *
 * Return: 0, or -EINVAL for any other link type.
 */
VISIBLE_IF_KUNIT int stag_dev_check_netdev(const struct net_device *ndev)
{
	if (ndev->type == ARPHRD_ETHER || ndev->type == ARPHRD_LOOPBACK)
		return 0;
	return -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(stag_dev_check_netdev);

/*
 * Is the netdev, or the name, one of stag's own devices already has? The
 * name is the one its link was added under, which its debugfs directory
 * keeps across a rename. (From 7.0 the core finds a taken name only when
 * registering, after that directory was made, so stag's own names are
 * checked here on every kernel.)
 */
static bool link_in_use(const char *name, const struct net_device *ndev)
{
	struct stag_dev *sdev;
	bool found = false;

	spin_lock(&stag_devices_lock);
	list_for_each_entry(sdev, &stag_devices, list) {
		if (sdev->ndev == ndev || !strcmp(sdev->link_name, name)) {
			found = true;
			break;
		}
	}
	spin_unlock(&stag_devices_lock);
	return found;
}

static int check_link_args(const char *name, struct net_device *ndev)
{
	int ret;

	lockdep_assert_held(&stag_link_mutex);

	ret = stag_dev_check_name(name);
	if (ret)
		return ret;
	ret = stag_dev_check_netdev(ndev);
	if (ret)
		return ret;
	if (link_in_use(name, ndev) || stag_ib_name_taken(name))
		return -EEXIST;
	return 0;
}

static void init_attr(struct stag_dev *sdev)
{
	struct ib_device_attr *attr = &sdev->attr;

	/*
	 * Only what is implemented is advertised: every limit of an object
	 * stag cannot create yet stays zero.
	 */
	attr->vendor_id = 0xffffff;
	attr->sys_image_guid = sdev->ibdev.node_guid;
	attr->max_pd = sdev->res.max[STAG_RES_PD];
	attr->max_mr = sdev->res.max[STAG_RES_MR];
	attr->max_qp = sdev->res.max[STAG_RES_QP];
	attr->max_raw_ethy_qp = attr->max_qp;
	/* RSS: Raw Packet QPs spreading frames over receive WQs (rss.c). */
	attr->max_wq_type_rq = sdev->res.max[STAG_RES_WQ];
	attr->rss_caps.supported_qpts = BIT(IB_QPT_RAW_PACKET);
	attr->rss_caps.max_rwq_indirection_tables = sdev->res.max[STAG_RES_RWQ_IND_TBL];
	attr->rss_caps.max_rwq_indirection_table_size = BIT(STAG_MAX_LOG_IND_TBL_SIZE);
	attr->max_qp_wr = STAG_MAX_QP_WR;
	attr->max_send_sge = STAG_MAX_SGE;
	attr->max_recv_sge = STAG_MAX_SGE;
	attr->max_sge_rd = STAG_MAX_SGE;
	attr->max_cq = sdev->res.max[STAG_RES_CQ];
	attr->max_cqe = STAG_MAX_CQE;
	attr->max_qp_rd_atom = STAG_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = STAG_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = STAG_MAX_RD_ATOMIC * attr->max_qp;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_srq = sdev->res.max[STAG_RES_SRQ];
	attr->max_srq_wr = STAG_MAX_QP_WR;
	attr->max_srq_sge = STAG_MAX_SGE;
	/* Tag matching SRQs, for RC, rendezvous included (tm.c). */
	attr->tm_caps.max_rndv_hdr_size = STAG_TM_MAX_RNDV_HDR;
	attr->tm_caps.max_num_tags = STAG_TM_MAX_TAGS;
	attr->tm_caps.flags = IB_TM_CAP_RNDV_RC;
	attr->tm_caps.max_ops = STAG_TM_MAX_OPS;
	attr->tm_caps.max_sge = STAG_TM_MAX_SGE;
	attr->max_ah = sdev->res.max[STAG_RES_AH];
	attr->max_mw = sdev->res.max[STAG_RES_MW];
	attr->max_mcast_grp = STAG_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = STAG_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = STAG_MAX_MCAST_GRP * STAG_MAX_MCAST_QP_ATTACH;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN | IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID | IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_UD_AV_PORT_ENFORCE | IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B | IB_DEVICE_SRQ_RESIZE |
				 IB_DEVICE_ATOMIC_WRITE | STAG_DEVICE_FLUSH | IB_DEVICE_XRC;
	/* Completion timestamps are CLOCK_MONOTONIC nanoseconds (cq.c). */
	attr->hca_core_clock = STAG_CORE_CLOCK_KHZ;
	attr->timestamp_mask = U64_MAX;
	attr->max_mr_size = U64_MAX;
	attr->max_fast_reg_page_list_len = STAG_MAX_FRMR_PAGES;
	attr->max_pkeys = STAG_PKEY_TBL_LEN;
	attr->local_ca_ack_delay = 15;
	attr->page_size_cap = PAGE_SIZE;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_ON_DEMAND_PAGING;
	/*
	 * Every access, on every transport, goes through the sgl copies,
	 * which fault on-demand pages in: all of it works paged.
	 */
	attr->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE |
		IB_ODP_SUPPORT_READ | IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.uc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE |
		IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.ud_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_SRQ_RECV;
	/* An XRC message's receive is always its SRQ's. */
	attr->odp_caps.per_transport_caps.xrc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
}

static void init_ibdev(struct stag_dev *sdev, const struct net_device *ndev)
{
	struct ib_device *ibdev = &sdev->ibdev;

	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid, ndev->dev_addr);
	strscpy(ibdev->node_desc, "stag", sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	/*
	 * The doorbells: a user QP's send queue runs in the POST_SEND
	 * syscall, and receives posted in the error state are flushed on
	 * POST_RECV. Completion notification is armed by REQ_NOTIFY_CQ.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ibdev, &stag_verbs_ops);
	if (IS_ENABLED(CONFIG_INFINIBAND_USER_ACCESS))
		ibdev->driver_def = stag_uapi_defs;
}

/*
 * Bind the device to the netdev unless the netdev is already on its way
 * out. Under rtnl, a netdev that is still NETREG_REGISTERED will deliver
 * NETDEV_UNREGISTER only after this, and by then the device is on
 * stag_devices where the notifier finds it.
 */
static int bind_netdev(struct stag_dev *sdev, struct net_device *ndev)
{
	int ret = -ENODEV;

	rtnl_lock();
	if (ndev->reg_state == NETREG_REGISTERED)
		ret = ib_device_set_netdev(&sdev->ibdev, ndev, STAG_PORT_NUM);
	rtnl_unlock();
	return ret;
}

static void list_add_dev(struct stag_dev *sdev)
{
	spin_lock(&stag_devices_lock);
	list_add_tail(&sdev->list, &stag_devices);
	spin_unlock(&stag_devices_lock);
}

static void list_del_dev(struct stag_dev *sdev)
{
	spin_lock(&stag_devices_lock);
	list_del_init(&sdev->list);
	spin_unlock(&stag_devices_lock);
}

/*
 * The netdev may have started unregistering while the device was being
 * registered; the notifier could not take a reference then and skipped
 * the device, so catch that here.
 */
static int check_still_bound(struct stag_dev *sdev, struct net_device *ndev)
{
	bool gone;

	rtnl_lock();
	gone = ndev->reg_state != NETREG_REGISTERED;
	rtnl_unlock();
	if (!gone)
		return 0;
	/* A concurrent rdma link delete may have got there first. */
	if (ib_device_try_get(&sdev->ibdev)) {
		stag_dev_unregister_async(sdev);
		stag_dev_put(sdev);
	}
	return -ENODEV;
}

/**
 * stag_dev_add() - create and register a stag device on a netdev
 * @name: the ib_device name, "stag" followed by anything
 * @ndev: the netdev, held by the caller for the duration of the call
 *
 * Context: process context; takes rtnl.
 * Return: 0, -EINVAL for a bad name or a netdev that is not Ethernet,
 * -EEXIST when the name or the netdev is taken, -ENODEV when the netdev
 * goes away meanwhile, or -ENOMEM.
 */
int stag_dev_add(const char *name, struct net_device *ndev)
{
	struct stag_dev *sdev;
	int ret;

	might_sleep();
	mutex_lock(&stag_link_mutex);
	ret = check_link_args(name, ndev);
	if (ret)
		goto out_unlock;

	ret = -ENOMEM;
	sdev = ib_alloc_device(stag_dev, ibdev);
	if (!sdev)
		goto out_unlock;
	if (stag_counters_init(sdev))
		goto err_dealloc;
	sdev->ndev = ndev;
	ida_init(&sdev->pd_ida);
	ida_init(&sdev->rwq_ind_tbl_ida);
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	xa_init_flags(&sdev->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->srqs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	stag_tpt_init(&sdev->tpt, STAG_KEY_INDEX_MAX);
	INIT_LIST_HEAD(&sdev->list);
	stag_res_init(&sdev->res);
	stag_port_init(&sdev->port, ndev);
	init_ibdev(sdev, ndev);
	init_attr(sdev);

	strscpy(sdev->link_name, name, sizeof(sdev->link_name));
	/* Without the wire the device still serves QPs of this host. */
	stag_roce_get();
	list_add_dev(sdev);
	ret = bind_netdev(sdev, ndev);
	if (ret)
		goto err_list_del;

	/*
	 * Once registered, the core owns sdev and may free it (rdma link
	 * delete needs only the name); this reference keeps the memory until
	 * the last look at it below.
	 */
	get_device(&sdev->ibdev.dev);
	/* Before registration: once registered, dealloc may run at any time. */
	stag_debugfs_add_dev(sdev, sdev->link_name);
	ret = ib_register_device(&sdev->ibdev, name, NULL);
	if (ret)
		goto err_debugfs;

	ret = check_still_bound(sdev, ndev);
	put_device(&sdev->ibdev.dev);
	mutex_unlock(&stag_link_mutex);
	return ret;

err_debugfs:
	stag_debugfs_remove_dev(sdev);
	put_device(&sdev->ibdev.dev);
err_list_del:
	list_del_dev(sdev);
	stag_roce_put();
	xa_destroy(&sdev->srqs);
	xa_destroy(&sdev->ahs);
	xa_destroy(&sdev->qps);
	stag_tpt_uninit(&sdev->tpt);
	ida_destroy(&sdev->rwq_ind_tbl_ida);
	ida_destroy(&sdev->pd_ida);
	stag_counters_uninit(sdev);
err_dealloc:
	ib_dealloc_device(&sdev->ibdev);
out_unlock:
	mutex_unlock(&stag_link_mutex);
	/* The core reports a taken name as ENFILE; say what it means. */
	return ret == -ENFILE ? -EEXIST : ret;
}
EXPORT_SYMBOL_IF_KUNIT(stag_dev_add);

/**
 * stag_dev_dealloc() - the ib core's dealloc_driver callback
 * @ibdev: the device, already unregistered
 *
 * Runs once per device, after every user object is gone and before the
 * core frees the memory.
 */
void stag_dev_dealloc(struct ib_device *ibdev)
{
	struct stag_dev *sdev = to_stag_dev(ibdev);

	stag_debugfs_remove_dev(sdev);
	list_del_dev(sdev);
	/* Routing lookups that found this device through a GID are over. */
	synchronize_rcu();
	WARN_ON(!xa_empty(&sdev->qps));
	xa_destroy(&sdev->qps);
	xa_destroy(&sdev->ahs);
	WARN_ON(!xa_empty(&sdev->srqs));
	xa_destroy(&sdev->srqs);
	stag_tpt_uninit(&sdev->tpt);
	ida_destroy(&sdev->rwq_ind_tbl_ida);
	ida_destroy(&sdev->pd_ida);
	stag_counters_uninit(sdev);
	stag_roce_put();
}

/**
 * stag_dev_get_by_netdev() - find the registered stag device on a netdev
 * @ndev: the netdev
 *
 * Context: any; takes a spinlock.
 * Return: the device with a registration reference that the caller drops
 * with stag_dev_put(), or NULL when there is none or it is not (or no
 * longer) registered.
 */
struct stag_dev *stag_dev_get_by_netdev(struct net_device *ndev)
{
	struct stag_dev *sdev, *found = NULL;

	spin_lock(&stag_devices_lock);
	list_for_each_entry(sdev, &stag_devices, list) {
		if (sdev->ndev == ndev && ib_device_try_get(&sdev->ibdev)) {
			found = sdev;
			break;
		}
	}
	spin_unlock(&stag_devices_lock);
	return found;
}

void stag_dev_put(struct stag_dev *sdev)
{
	ib_device_put(&sdev->ibdev);
}

/**
 * stag_dev_unregister_async() - queue the removal of a device
 * @sdev: the device, registered, with a reference held by the caller
 *
 * Used where the caller cannot wait for users to go (the netdev notifier
 * runs under rtnl). Queues at most once per device.
 */
void stag_dev_unregister_async(struct stag_dev *sdev)
{
	if (!test_and_set_bit(STAG_DEV_UNREGISTERING, &sdev->flags))
		ib_unregister_device_queued(&sdev->ibdev);
}

/**
 * stag_dev_remove_all() - unregister every stag device, synchronously
 *
 * Called at module unload, after rdma link add can no longer create
 * devices. Open user contexts are disassociated by the core (stag has
 * disassociate_ucontext), so this does not wait for applications to exit:
 * their resources are destroyed and their later verbs calls fail with EIO.
 */
void stag_dev_remove_all(void)
{
	struct stag_dev *sdev;

	might_sleep();
	for (;;) {
		spin_lock(&stag_devices_lock);
		sdev = list_first_entry_or_null(&stag_devices, struct stag_dev, list);
		/* Keeps the memory, not the registration, across the unlock. */
		if (sdev)
			get_device(&sdev->ibdev.dev);
		spin_unlock(&stag_devices_lock);
		if (!sdev)
			break;

		/*
		 * Waits for a concurrent unregistration of the same device;
		 * either way stag_dev_dealloc() has run when this returns.
		 */
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}
