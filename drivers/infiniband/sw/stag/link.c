// SPDX-License-Identifier: GPL-2.0
/*
 * The link layer glue: "rdma link add NAME type stag netdev DEV" creates a
 * device, and netdev events move its port or remove it.
 */

#include <linux/netdevice.h>
#include <rdma/rdma_netlink.h>

#include "dev.h"
#include "link.h"

static int stag_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return stag_dev_add(ibdev_name, ndev);
}

static struct rdma_link_ops stag_link_ops = {
	.type = "stag",
	.newlink = stag_newlink,
};

static int stag_netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct stag_dev *sdev;

	switch (event) {
	case NETDEV_UNREGISTER:
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		break;
	default:
		return NOTIFY_DONE;
	}

	sdev = stag_dev_get_by_netdev(ndev);
	if (!sdev)
		return NOTIFY_DONE;

	if (event == NETDEV_UNREGISTER)
		stag_dev_unregister_async(sdev);
	else
		stag_port_netdev_event(sdev, event, ndev);

	stag_dev_put(sdev);
	return NOTIFY_OK;
}

static struct notifier_block stag_netdev_notifier = {
	.notifier_call = stag_netdev_event,
};

int stag_link_init(void)
{
	int ret;

	ret = register_netdevice_notifier(&stag_netdev_notifier);
	if (ret)
		return ret;
	rdma_link_register(&stag_link_ops);
	return 0;
}

/*
 * Order matters: once rdma_link_unregister() returns no stag_newlink() is
 * running or can start, so stag_dev_remove_all() sees every device; the
 * notifier goes last because devices must follow their netdev until they
 * are gone.
 */
void stag_link_uninit(void)
{
	rdma_link_unregister(&stag_link_ops);
	stag_dev_remove_all();
	unregister_netdevice_notifier(&stag_netdev_notifier);
}
