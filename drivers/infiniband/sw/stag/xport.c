// SPDX-License-Identifier: GPL-2.0
/*
 * Which transport a QP's sends take. A connected QP (RC, UC) whose peer
 * is on this host goes over loopback, unless the loopback module
 * parameter is off; every other goes on the wire, if the wire is up. A
 * UD QP decides send by send (roce_req.c). A Raw Packet QP's frames go to
 * its netdev (raweth.c).
 */

#include "qp.h"
#include "raweth.h"
#include "roce.h"
#include "route.h"
#include "xport.h"

/**
 * stag_xport_select() - the transport for a QP's sends
 * @qp: the QP, whose path (RC, UC) is set
 *
 * Context: under the QP's sq.mutex, at RTR.
 */
const struct stag_xport *stag_xport_select(struct stag_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return &stag_roce_ud_xport;
	case IB_QPT_RAW_PACKET:
		return &stag_raweth_xport;
	default:
		break;
	}
	if (!stag_roce_up() ||
	    (stag_roce_loopback_allowed() && stag_route_is_local(&qp->dgid)))
		return &stag_loopback_xport;
	return stag_qp_reliable(qp) ? &stag_roce_rc_xport : &stag_roce_uc_xport;
}
