/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag Raw Packet QPs: Ethernet frames sent and received whole.
 */
#ifndef _STAG_RAWETH_H
#define _STAG_RAWETH_H

struct stag_qp;

extern const struct stag_xport stag_raweth_xport;

void stag_raweth_recv_run(struct stag_qp *qp);

#endif /* _STAG_RAWETH_H */
