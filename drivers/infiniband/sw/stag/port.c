// SPDX-License-Identifier: GPL-2.0
/*
 * The port of a stag device follows its netdev: the netdev's operational
 * state is the port state and its MTU bounds the port's active MTU.
 */

#include <linux/netdevice.h>
#include <kunit/visibility.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>

#include "dev.h"
#include "port.h"

/**
 * stag_port_mtu() - the IB MTU a netdev MTU can carry
 * @ndev_mtu: the netdev's MTU in bytes
 *
 * RoCE v2 puts IP, UDP, BTH, the largest extended header and the ICRC in
 * front of the payload, so the largest IB MTU that fits after them is the
 * one to use. A netdev too small for even 256 bytes of payload still gets
 * IB_MTU_256, as rdma_rxe does: such a port is of no use for RoCE, but it
 * stays well-formed.
 *
 * Return: the active MTU, never above STAG_MAX_MTU.
 */
enum ib_mtu stag_port_mtu(unsigned int ndev_mtu)
{
	enum ib_mtu mtu = iboe_get_mtu(min_t(unsigned int, ndev_mtu, INT_MAX));

	if (!mtu)
		return IB_MTU_256;
	return min_t(enum ib_mtu, mtu, STAG_MAX_MTU);
}
EXPORT_SYMBOL_IF_KUNIT(stag_port_mtu);

/**
 * stag_port_state() - the port state a netdev's state maps to
 * @running: the netdev is administratively up (netif_running())
 * @carrier: the netdev has carrier (netif_carrier_ok())
 *
 * Return: IB_PORT_ACTIVE only when the netdev can pass traffic.
 */
enum ib_port_state stag_port_state(bool running, bool carrier)
{
	return running && carrier ? IB_PORT_ACTIVE : IB_PORT_DOWN;
}
EXPORT_SYMBOL_IF_KUNIT(stag_port_state);

/**
 * stag_port_phys_state() - the physical state reported beside a port state
 * @state: the logical port state
 */
enum ib_port_phys_state stag_port_phys_state(enum ib_port_state state)
{
	return state == IB_PORT_ACTIVE ? IB_PORT_PHYS_STATE_LINK_UP :
					 IB_PORT_PHYS_STATE_DISABLED;
}
EXPORT_SYMBOL_IF_KUNIT(stag_port_phys_state);

static enum ib_port_state netdev_port_state(const struct net_device *ndev)
{
	return stag_port_state(netif_running(ndev), netif_carrier_ok(ndev));
}

void stag_port_init(struct stag_port *port, const struct net_device *ndev)
{
	spin_lock_init(&port->lock);
	port->state = netdev_port_state(ndev);
	port->active_mtu = stag_port_mtu(READ_ONCE(ndev->mtu));
}

int stag_port_query(struct stag_dev *sdev, struct ib_port_attr *attr)
{
	struct stag_port *port = &sdev->port;
	/* The core zeroed *attr; only what differs from zero is set. */
	attr->max_mtu = STAG_MAX_MTU;
	attr->gid_tbl_len = STAG_GID_TBL_LEN;
	attr->pkey_tbl_len = STAG_PKEY_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = STAG_MAX_MSG_SZ;
	attr->max_vl_num = 1;

	spin_lock_bh(&port->lock);
	attr->state = port->state;
	attr->active_mtu = port->active_mtu;
	spin_unlock_bh(&port->lock);
	attr->phys_state = stag_port_phys_state(attr->state);

	return ib_get_eth_speed(&sdev->ibdev, STAG_PORT_NUM, &attr->active_speed,
				&attr->active_width);
}

int stag_port_immutable(struct stag_dev *sdev, struct ib_port_immutable *imm)
{
	imm->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	imm->pkey_tbl_len = STAG_PKEY_TBL_LEN;
	imm->gid_tbl_len = STAG_GID_TBL_LEN;
	imm->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static void dispatch_port_event(struct stag_dev *sdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = STAG_PORT_NUM,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/*
 * The core's report_port_event, which takes the place of the events the
 * core would raise itself (compat.h): stag_port_netdev_event() has raised
 * them already.
 */
void stag_port_report_event(struct ib_device *ibdev, struct net_device *ndev,
			    unsigned long event)
{
}

/**
 * stag_port_netdev_event() - follow a change of the netdev
 * @sdev: the device, registered, with a reference held by the caller
 * @event: the NETDEV_* notifier event
 * @ndev: the netdev, which the notifier chain keeps alive
 *
 * Port state changes raise IB_EVENT_PORT_ACTIVE or IB_EVENT_PORT_ERR once
 * per transition, whatever sequence of netdev events led to it.
 */
void stag_port_netdev_event(struct stag_dev *sdev, unsigned long event,
			    const struct net_device *ndev)
{
	struct stag_port *port = &sdev->port;
	enum ib_port_state state = netdev_port_state(ndev);
	bool changed;

	ASSERT_RTNL();

	spin_lock_bh(&port->lock);
	port->active_mtu = stag_port_mtu(READ_ONCE(ndev->mtu));
	changed = port->state != state;
	port->state = state;
	spin_unlock_bh(&port->lock);

	if (!changed)
		return;
	stag_dbg_dev(sdev, "port %s after netdev event %lu\n",
		     state == IB_PORT_ACTIVE ? "active" : "down", event);
	dispatch_port_event(sdev, state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
							    IB_EVENT_PORT_ERR);
}
