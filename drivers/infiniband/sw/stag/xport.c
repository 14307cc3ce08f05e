// SPDX-License-Identifier: GPL-2.0
/*
 * Which transport a QP's sends take. Until RoCE exists, every destination
 * is a QP of this host.
 */

#include "qp.h"
#include "xport.h"

/**
 * stag_xport_select() - the transport for a QP's sends
 * @qp: the QP, whose path (RC, UC) is set
 *
 * Context: under the QP's sq.mutex.
 */
const struct stag_xport *stag_xport_select(struct stag_qp *qp)
{
	return &stag_loopback_xport;
}
