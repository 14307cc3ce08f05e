/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag device: one ib_device bound to one netdev.
 */
#ifndef _STAG_DEV_H
#define _STAG_DEV_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "counters.h"
#include "port.h"
#include "res.h"
#include "tpt.h"

/* Bits in stag_dev.flags. */
enum {
	STAG_DEV_UNREGISTERING,	/* an asynchronous unregistration is queued */
};

struct stag_dev {
	struct ib_device ibdev;
	struct stag_port port;
	struct ib_device_attr attr;

	/*
	 * The netdev this device was created on. The ib core holds a
	 * reference from ib_device_set_netdev() until unregistration, which
	 * destroys every QP before it lets go. The pointer is used to match
	 * netdev events and flows, and only a Raw Packet QP's send
	 * (raweth.c) and its flows' address filters (flow.c) dereference
	 * it, holding the QP.
	 */
	struct net_device *ndev;

	struct stag_tpt tpt;
	struct stag_counters __percpu *counters;
	atomic64_t pinned_pages;	/* user pages pinned by this device's regions */
	struct dentry *debugfs;
	/*
	 * The name rdma link add gave, which its debugfs directory keeps if
	 * the device is renamed: a later link add of it is refused (EEXIST)
	 * before it could meet that directory. Set before the device is on
	 * stag_devices, constant after.
	 */
	char link_name[IB_DEVICE_NAME_MAX];
	struct ida pd_ida;
	struct ida rwq_ind_tbl_ida;	/* indirection table numbers */
	struct xarray qps;	/* by QP number; a WQ's number reserved (NULL) */
	u32 qp_next;
	struct xarray ahs;	/* by ah_num */
	u32 ah_next;
	struct xarray srqs;	/* by SRQ number */
	u32 srq_next;
	struct stag_res res;	/* how many objects of each kind, and the most */
	unsigned long flags;
	struct list_head list;	/* on stag_devices, under stag_devices_lock */
};

static inline struct stag_dev *to_stag_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct stag_dev, ibdev);
}

#define stag_dbg_dev(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)

int stag_dev_add(const char *name, struct net_device *ndev);
void stag_dev_dealloc(struct ib_device *ibdev);
struct stag_dev *stag_dev_get_by_netdev(struct net_device *ndev);
void stag_dev_put(struct stag_dev *sdev);
void stag_dev_unregister_async(struct stag_dev *sdev);
void stag_dev_remove_all(void);

#if IS_ENABLED(CONFIG_KUNIT)
int stag_dev_check_name(const char *name);
int stag_dev_check_netdev(const struct net_device *ndev);
#endif

#endif /* _STAG_DEV_H */
