/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag RoCE responder: the requests a QP receives from the wire.
 */
#ifndef _STAG_ROCE_RESP_H
#define _STAG_ROCE_RESP_H

#include <linux/types.h>

#include "dedup.h"
#include "rdres.h"
#include "tm.h"

struct stag_qp;

/* A read being answered, and how far. */
struct stag_reading {
	bool active;
	u32 psn;		/* of its next response packet */
	u64 va;			/* of that packet's first byte */
	u32 rkey;
	u64 left;		/* bytes still to send */
	bool started;		/* its first response is out */
	u32 xrc_srqn;		/* XRC: the SRQ whose PD checks it */
};

/* The responder's side of a QP on the wire; under resp_mutex. */
struct stag_roce_resp {
	u32 epsn;		/* the PSN expected next */
	u32 msn;		/* messages completed, mod 2^24 */
	bool nak_sent;		/* one PSN sequence NAK per gap... */
	u32 ooo_psn;		/* ...and round: the last PSN past the gap */
	bool drop_msg;		/* UC: drop until the next FIRST or ONLY */
	u8 op;			/* the message in progress: its last opcode; 0xff none */
	bool have_wqe;		/* rq.wqe is the receive of the SEND in progress */
	struct stag_tm_recv tm;	/* and, at a tag matching SRQ, what it took */
	u64 offset;		/* bytes of the message in progress placed */
	u64 va;			/* the WRITE in progress, from its RETH */
	u32 rkey;
	u32 length;
	u32 xrc_srqn;		/* XRC: the SRQ of the message in progress */
	bool ack;		/* an ACK is owed, for ack_psn */
	u32 ack_psn;
	struct stag_rdres_table res;	/* RC only */
	struct stag_reading reading;
	struct stag_dedup dedup;	/* UD only */
};

int stag_roce_resp_init(struct stag_qp *qp);
void stag_roce_resp_uninit(struct stag_qp *qp);
void stag_roce_resp_reset(struct stag_qp *qp);
void stag_roce_resp_run(struct stag_qp *qp);
int stag_roce_resp_fill_res(struct sk_buff *msg, struct stag_qp *qp);

#endif /* _STAG_ROCE_RESP_H */
