/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag responder: executes an incoming message at its destination QP.
 */
#ifndef _STAG_RESP_H
#define _STAG_RESP_H

#include <rdma/ib_verbs.h>

#include "sgl.h"
#include "tm.h"
#include "wqe.h"

struct stag_qp;

/* What the requester hears back, as an IBA ACK or NAK would say it. */
enum stag_resp_result {
	STAG_RESP_ACK,		/* executed */
	STAG_RESP_DROP,		/* silently dropped: no answer */
	STAG_RESP_RNR,		/* receiver not ready */
	STAG_RESP_NAK_INV_REQ,	/* invalid request */
	STAG_RESP_NAK_ACCESS,	/* remote access error */
	STAG_RESP_NAK_OP,	/* remote operational error */
};

/* A message on its way from a requester to a responder. */
struct stag_msg {
	struct stag_qp *src;
	const struct stag_swqe *wqe;
	struct stag_sgl *local;		/* the requester's checked buffers */
	u64 length;
	u32 src_qpn;
	u32 qkey;			/* UD: the qkey the message carries */
	u32 xrc_srqn;			/* XRC: the SRQ it names */
	const struct stag_av *av;	/* UD: its address */
	/* Set by the responder: a rendezvous was read, and the sender is owed this FIN. */
	bool fin_owed;
	struct stag_tmh fin;
};

enum stag_resp_result stag_resp_deliver(struct stag_qp *dst, struct stag_msg *msg);
void stag_resp_flush(struct stag_qp *qp);

/* What the RoCE responder shares with loopback's. */
enum stag_resp_result stag_resp_get_recv(struct stag_qp *qp);
enum stag_resp_result stag_resp_xrc_begin(struct stag_qp *qp, u32 srqn);
void stag_resp_xrc_end(struct stag_qp *qp);
void stag_resp_complete_recv(struct stag_qp *qp, struct ib_wc *wc, bool solicited);
bool stag_resp_is_tm(const struct stag_qp *qp);
enum stag_resp_result stag_resp_get_recv_tm(struct stag_qp *qp, const struct stag_tmh *tmh,
					    struct stag_tm_recv *r);
void stag_resp_complete_tm(struct stag_qp *qp, struct ib_wc *wc, const struct stag_tm_recv *r,
			   bool solicited);
void stag_resp_recv_error(struct stag_qp *qp, enum ib_wc_status status);
enum stag_resp_result stag_resp_get_remote(struct stag_qp *dst, u32 rkey, u64 addr, u64 len,
					   int access);
enum stag_resp_result stag_resp_atomic(struct stag_qp *dst, u32 rkey, u64 addr, int access,
				       u8 opcode, u64 compare_add, u64 swap, u64 *orig);
enum stag_resp_result stag_resp_do_flush(struct stag_qp *dst, u32 rkey, u64 addr, u64 len,
					 u8 type, u8 level);

#endif /* _STAG_RESP_H */
