/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag's driver methods on the uverbs ioctl interface.
 */
#ifndef _STAG_UAPI_H
#define _STAG_UAPI_H

#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>

extern const struct uapi_definition stag_uapi_defs[];

/*
 * ib_core exports these for ib_uverbs but declares them only in its
 * private drivers/infiniband/core/restrack.h, which an out-of-tree module
 * cannot include. Signatures as of 6.12.
 */
void rdma_restrack_new(struct rdma_restrack_entry *res, enum rdma_restrack_type type);
void rdma_restrack_set_name(struct rdma_restrack_entry *res, const char *caller);
void rdma_restrack_add(struct rdma_restrack_entry *res);

#endif /* _STAG_UAPI_H */
