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

extern const struct ib_device_ops stag_verbs_ops;

#endif /* _STAG_VERBS_H */
