/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag requester: runs a QP's send queue.
 */
#ifndef _STAG_REQ_H
#define _STAG_REQ_H

#include <linux/timer.h>

struct stag_qp;

void stag_req_run(struct stag_qp *qp);
void stag_req_timer(struct timer_list *t);
unsigned long stag_req_rnr_delay(u8 min_rnr_timer);
unsigned long stag_req_ack_timeout(u8 timeout);

#endif /* _STAG_REQ_H */
