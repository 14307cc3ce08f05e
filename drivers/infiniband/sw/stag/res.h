/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag object limits: how many of each verbs object a device may hold.
 */
#ifndef _STAG_RES_H
#define _STAG_RES_H

#include <linux/atomic.h>
#include <linux/types.h>

enum stag_res_type {
	STAG_RES_PD,
	STAG_RES_CQ,
	STAG_RES_QP,
	STAG_RES_SRQ,
	STAG_RES_MR,
	STAG_RES_MW,
	STAG_RES_AH,
	STAG_RES_XRCD,
	STAG_RES_WQ,
	STAG_RES_RWQ_IND_TBL,
	STAG_NR_RES,
};

/* A device's limits, fixed when it is created, and its counts against them. */
struct stag_res {
	u32 max[STAG_NR_RES];
	atomic_t count[STAG_NR_RES];
};

void stag_res_init(struct stag_res *res);
int stag_res_charge(struct stag_res *res, enum stag_res_type type);
void stag_res_charge_over(struct stag_res *res, enum stag_res_type type);
void stag_res_uncharge(struct stag_res *res, enum stag_res_type type);

#endif /* _STAG_RES_H */
