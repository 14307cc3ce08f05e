/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag XRC domain.
 */
#ifndef _STAG_XRCD_H
#define _STAG_XRCD_H

#include <rdma/ib_verbs.h>

#define STAG_MAX_XRCD		65536

/*
 * An XRC domain only names what belongs together: the XRC SRQs and the
 * XRC TGT QPs created in it. A TGT QP takes a message only for an SRQ of
 * its own domain (resp.c). Sharing the domain between processes, through
 * a file, is the core's (ib_uverbs_open_xrcd).
 */
struct stag_xrcd {
	struct ib_xrcd ibxrcd;
};

int stag_xrcd_alloc(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int stag_xrcd_dealloc(struct ib_xrcd *ibxrcd, struct ib_udata *udata);

#endif /* _STAG_XRCD_H */
