/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag verbs: the ib_device_ops table, and the user context.
 */
#ifndef _STAG_VERBS_H
#define _STAG_VERBS_H

#include <rdma/ib_verbs.h>

struct stag_ucontext {
	struct ib_ucontext ibuc;
};

/*
 * Objects the core allocates for verbs stag does not implement yet; the
 * core sizes them from the ops table and must not get a zero size.
 */
struct stag_cq {
	struct ib_cq ibcq;
};

struct stag_qp {
	struct ib_qp ibqp;
};

extern const struct ib_device_ops stag_verbs_ops;

#endif /* _STAG_VERBS_H */
