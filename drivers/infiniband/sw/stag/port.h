/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag port: the single RoCE v2 port of a stag device and how it follows
 * its netdev.
 */
#ifndef _STAG_PORT_H
#define _STAG_PORT_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

struct stag_dev;

#define STAG_PORT_NUM		1
#define STAG_GID_TBL_LEN	1024
#define STAG_PKEY_TBL_LEN	1
#define STAG_MAX_MTU		IB_MTU_4096
#define STAG_MAX_MSG_SZ		0x80000000U

struct stag_port {
	spinlock_t lock;		/* protects state and active_mtu */
	enum ib_port_state state;
	enum ib_mtu active_mtu;
};

void stag_port_init(struct stag_port *port, const struct net_device *ndev);
int stag_port_query(struct stag_dev *sdev, struct ib_port_attr *attr);
int stag_port_immutable(struct stag_dev *sdev, struct ib_port_immutable *imm);
void stag_port_report_event(struct ib_device *ibdev, struct net_device *ndev,
			    unsigned long event);
void stag_port_netdev_event(struct stag_dev *sdev, unsigned long event,
			    const struct net_device *ndev);

static inline enum ib_mtu stag_port_active_mtu(const struct stag_port *port)
{
	return READ_ONCE(port->active_mtu);
}

enum ib_mtu stag_port_mtu(unsigned int ndev_mtu);
enum ib_port_state stag_port_state(bool running, bool carrier);
enum ib_port_phys_state stag_port_phys_state(enum ib_port_state state);

#endif /* _STAG_PORT_H */
