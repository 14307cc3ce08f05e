/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag transports: how a QP's sends reach their destination. Loopback
 * hands a message whole to a QP of this host; RoCE puts it on the wire
 * as packets. The requester (req.c) owns the window of sends and their
 * order; a transport takes sends on, and says when each is done.
 */
#ifndef _STAG_XPORT_H
#define _STAG_XPORT_H

#include <linux/types.h>

struct stag_qp;
struct stag_send;
struct stag_tmh;

/*
 * Every callback runs under the QP's sq.mutex, in process context.
 *
 * @start: take on @s, the oldest send not started yet; false when the
 *	transport cannot now (its window, read credits, a wait), and the
 *	requester tries again later.
 * @push: send what may be sent of the sends taken on; may be NULL.
 * @expire: the QP's timer fired.
 * @receive: take what came back from the peer (ACKs, responses); may be
 *	NULL.
 * @fin: @s has completed, and a rendezvous it carried was read by the
 *	peer's tag matching SRQ: deliver the peer's FIN, @tmh; may be NULL.
 */
struct stag_xport {
	const char *name;
	bool (*start)(struct stag_qp *qp, struct stag_send *s);
	void (*push)(struct stag_qp *qp);
	void (*expire)(struct stag_qp *qp);
	void (*receive)(struct stag_qp *qp);
	void (*fin)(struct stag_qp *qp, const struct stag_tmh *tmh);
};

extern const struct stag_xport stag_loopback_xport;
int stag_loopback_mcast(struct stag_qp *qp, struct stag_send *s);

const struct stag_xport *stag_xport_select(struct stag_qp *qp);

#endif /* _STAG_XPORT_H */
