// SPDX-License-Identifier: GPL-2.0
/*
 * Object limits. A device advertises in query_device how many PDs, CQs,
 * QPs, SRQs, MRs, MWs and AHs it can hold, receive WQs and indirection
 * tables (and XRC domains, which the verbs do not advertise), and refuses the one past each
 * with -EINVAL, the errno rdma_rxe gives, before anything of it is
 * allocated. The counts are per device, over all its users, as a NIC's
 * are; what one user's objects may take of kernel memory is bounded
 * besides by the memory cgroup their rings are charged to (queue.c) and
 * RLIMIT_MEMLOCK for what regions pin (pages.c).
 *
 * The limits are module parameters, read when a device is created: an
 * administrator may lower them for the devices created after, down to 1,
 * never raise them past what stag's numbering allows.
 */

#include <linux/moduleparam.h>
#include <linux/sysfs.h>
#include <kunit/visibility.h>

#include "ah.h"
#include "cq.h"
#include "mr.h"
#include "mw.h"
#include "pd.h"
#include "qp.h"
#include "res.h"
#include "rss.h"
#include "srq.h"
#include "wq.h"
#include "xrcd.h"

struct res_limit {
	unsigned int val;
	const unsigned int max;
};

static struct res_limit limits[STAG_NR_RES] = {
	[STAG_RES_PD]	= { STAG_MAX_PD, STAG_MAX_PD },
	[STAG_RES_CQ]	= { STAG_MAX_CQ, STAG_MAX_CQ },
	[STAG_RES_QP]	= { STAG_MAX_QP, STAG_MAX_QP },
	[STAG_RES_SRQ]	= { STAG_MAX_SRQ, STAG_MAX_SRQ },
	[STAG_RES_MR]	= { STAG_MAX_MR, STAG_MAX_MR },
	[STAG_RES_MW]	= { STAG_MAX_MW, STAG_MAX_MW },
	[STAG_RES_AH]	= { STAG_MAX_AH, STAG_MAX_AH },
	[STAG_RES_XRCD]	= { STAG_MAX_XRCD, STAG_MAX_XRCD },
	[STAG_RES_WQ]	= { STAG_MAX_WQ, STAG_MAX_WQ },
	[STAG_RES_RWQ_IND_TBL] = { STAG_MAX_RWQ_IND_TBL, STAG_MAX_RWQ_IND_TBL },
};

static int limit_set(const char *val, const struct kernel_param *kp)
{
	struct res_limit *l = kp->arg;
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;
	if (v < 1 || v > l->max)
		return -EINVAL;
	WRITE_ONCE(l->val, v);
	return 0;
}

static int limit_get(char *buf, const struct kernel_param *kp)
{
	const struct res_limit *l = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(l->val));
}

static const struct kernel_param_ops limit_ops = {
	.set = limit_set,
	.get = limit_get,
};

/* Each: the most a device created from now on holds, 1 to the default. */
module_param_cb(max_pd, &limit_ops, &limits[STAG_RES_PD], 0644);
MODULE_PARM_DESC(max_pd, "The most PDs of a device created from now on");
module_param_cb(max_cq, &limit_ops, &limits[STAG_RES_CQ], 0644);
MODULE_PARM_DESC(max_cq, "The most CQs of a device created from now on");
module_param_cb(max_qp, &limit_ops, &limits[STAG_RES_QP], 0644);
MODULE_PARM_DESC(max_qp, "The most QPs, QP1 included, of a device created from now on");
module_param_cb(max_srq, &limit_ops, &limits[STAG_RES_SRQ], 0644);
MODULE_PARM_DESC(max_srq, "The most SRQs of a device created from now on");
module_param_cb(max_mr, &limit_ops, &limits[STAG_RES_MR], 0644);
MODULE_PARM_DESC(max_mr, "The most memory regions of a device created from now on");
module_param_cb(max_mw, &limit_ops, &limits[STAG_RES_MW], 0644);
MODULE_PARM_DESC(max_mw, "The most memory windows of a device created from now on");
module_param_cb(max_ah, &limit_ops, &limits[STAG_RES_AH], 0644);
MODULE_PARM_DESC(max_ah, "The most address handles of a device created from now on");
module_param_cb(max_xrcd, &limit_ops, &limits[STAG_RES_XRCD], 0644);
MODULE_PARM_DESC(max_xrcd, "The most XRC domains of a device created from now on");
module_param_cb(max_wq, &limit_ops, &limits[STAG_RES_WQ], 0644);
MODULE_PARM_DESC(max_wq, "The most receive work queues of a device created from now on");
module_param_cb(max_rwq_ind_tbl, &limit_ops, &limits[STAG_RES_RWQ_IND_TBL], 0644);
MODULE_PARM_DESC(max_rwq_ind_tbl, "The most RSS indirection tables of a device created from now on");

/**
 * stag_res_init() - a new device's limits, from the module parameters
 * @res: the device's limits and counts
 */
void stag_res_init(struct stag_res *res)
{
	int i;

	for (i = 0; i < STAG_NR_RES; i++) {
		res->max[i] = READ_ONCE(limits[i].val);
		atomic_set(&res->count[i], 0);
	}
}
EXPORT_SYMBOL_IF_KUNIT(stag_res_init);

/**
 * stag_res_charge() - count one more object against its limit
 * @res: the device's limits and counts
 * @type: the kind of object
 *
 * Two creators racing for the last one cannot both have it: each counts
 * itself in before it looks, and the one that went over counts itself
 * out again.
 *
 * Return: 0, or -EINVAL when the device holds its limit already.
 */
int stag_res_charge(struct stag_res *res, enum stag_res_type type)
{
	if (atomic_inc_return(&res->count[type]) <= res->max[type])
		return 0;
	atomic_dec(&res->count[type]);
	return -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(stag_res_charge);

/**
 * stag_res_charge_over() - count an object that replaces one still counted
 * @res: the device's limits and counts
 * @type: the kind of object
 *
 * For the new region of a rereg: the core deregisters the old one as soon
 * as the new one exists, so the count is over the limit by one only in
 * between, and a rereg at the limit still works, as it does on rxe (which
 * changes the region in place).
 */
void stag_res_charge_over(struct stag_res *res, enum stag_res_type type)
{
	atomic_inc(&res->count[type]);
}
EXPORT_SYMBOL_IF_KUNIT(stag_res_charge_over);

/**
 * stag_res_uncharge() - count out an object that is gone
 * @res: the device's limits and counts
 * @type: the kind of object
 */
void stag_res_uncharge(struct stag_res *res, enum stag_res_type type)
{
	WARN_ON_ONCE(atomic_dec_return(&res->count[type]) < 0);
}
EXPORT_SYMBOL_IF_KUNIT(stag_res_uncharge);
