/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag requester: runs a QP's send queue, and what its transports use of
 * it.
 */
#ifndef _STAG_REQ_H
#define _STAG_REQ_H

#include <linux/timer.h>
#include <rdma/ib_verbs.h>

struct sk_buff;
struct stag_qp;
struct stag_send;

void stag_req_run(struct stag_qp *qp);
void stag_req_reset(struct stag_qp *qp);
void stag_req_set_psn(struct stag_qp *qp, u32 psn);
void stag_req_timer(struct timer_list *t);

struct stag_send *stag_req_send(struct stag_qp *qp, u32 index);
void stag_req_done(struct stag_qp *qp, struct stag_send *s, enum ib_wc_status status);
int stag_req_read_payload(struct stag_qp *qp, const struct stag_send *s, void *dst, u64 off,
			  u32 len);
void stag_req_arm(struct stag_qp *qp, unsigned long delay);
void stag_req_disarm(struct stag_qp *qp);
unsigned long stag_req_rnr_delay(u8 min_rnr_timer);
unsigned long stag_req_ack_timeout(u8 timeout);
int stag_req_fill_res(struct sk_buff *msg, struct stag_qp *qp);

#endif /* _STAG_REQ_H */
