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

#endif /* _STAG_REQ_H */
