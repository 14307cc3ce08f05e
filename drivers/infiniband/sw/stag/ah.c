// SPDX-License-Identifier: GPL-2.0
/*
 * Address handles. Each has a number in its device's AH table; user UD
 * WQEs name their AH by it. The requester copies the address out under
 * the table's lock when it fetches a WQE, so an AH destroyed afterwards
 * cannot be used from under it, and no reference is needed.
 */

#include <rdma/ib_cache.h>
#include <rdma/stag-abi.h>

#include "ah.h"
#include "dev.h"

/**
 * stag_ah_av_from_attr() - the address vector of an AH or QP path
 * @attr: the attributes, with a GRH and a source GID attribute
 * @av: filled on success
 *
 * Return: 0, or -EINVAL without a GRH (RoCE needs one).
 */
int stag_ah_av_from_attr(const struct rdma_ah_attr *attr, struct stag_av *av)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) || !grh->sgid_attr)
		return -EINVAL;
	av->sgid = grh->sgid_attr->gid;
	av->dgid = grh->dgid;
	av->net_type = rdma_gid_attr_network_type(grh->sgid_attr);
	av->flow_label = grh->flow_label;
	av->traffic_class = grh->traffic_class;
	av->hop_limit = grh->hop_limit;
	av->sl = rdma_ah_get_sl(attr);
	return 0;
}

/**
 * stag_ah_create() - the create_ah and create_user_ah verbs
 * @ibah: the AH the core allocated
 * @init: its attributes; RDMA_CREATE_AH_SLEEPABLE in flags when it may sleep
 * @udata: the user's command, or NULL
 *
 * Return: 0; -EINVAL for an address without a GRH, for driver data in
 * the command, or when the device has max_ah AHs already; -ENOMEM.
 */
int stag_ah_create(struct ib_ah *ibah, struct rdma_ah_init_attr *init, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibah->device);
	struct stag_ah *ah = to_stag_ah(ibah);
	struct stag_create_ah_resp resp = {};
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL : GFP_ATOMIC;
	int ret;

	if (udata && udata->inlen)
		return -EINVAL;
	ret = stag_ah_av_from_attr(init->ah_attr, &ah->av);
	if (ret)
		return ret;
	ret = stag_res_charge(&sdev->res, STAG_RES_AH);
	if (ret)
		return ret;
	/* Within the limit, so that the numbers cannot run out. */
	ret = xa_alloc_cyclic_irq(&sdev->ahs, &ah->ah_num, ah, XA_LIMIT(1, STAG_MAX_AH),
				  &sdev->ah_next, gfp);
	if (ret < 0)
		goto err_uncharge;
	if (!udata)
		return 0;

	resp.ah_num = ah->ah_num;
	ret = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (ret)
		goto err_erase;
	return 0;

err_erase:
	xa_erase_irq(&sdev->ahs, ah->ah_num);
err_uncharge:
	stag_res_uncharge(&sdev->res, STAG_RES_AH);
	return ret;
}

int stag_ah_destroy(struct ib_ah *ibah, u32 flags)
{
	struct stag_dev *sdev = to_stag_dev(ibah->device);
	struct stag_ah *ah = to_stag_ah(ibah);
	unsigned long irqflags;

	xa_lock_irqsave(&sdev->ahs, irqflags);
	__xa_erase(&sdev->ahs, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ahs, irqflags);
	stag_res_uncharge(&sdev->res, STAG_RES_AH);
	return 0;
}

/**
 * stag_ah_copy_av() - the address of an AH named in a WQE
 * @sdev: the device
 * @ah_num: the number from the WQE
 * @pd: the PD of the QP that names it
 * @av: filled on success
 *
 * Return: 0, or -EINVAL when no AH of that PD has the number.
 */
int stag_ah_copy_av(struct stag_dev *sdev, u32 ah_num, const struct ib_pd *pd,
		    struct stag_av *av)
{
	struct stag_ah *ah;
	unsigned long flags;
	int ret = -EINVAL;

	xa_lock_irqsave(&sdev->ahs, flags);
	ah = xa_load(&sdev->ahs, ah_num);
	if (ah && ah->ibah.pd == pd) {
		*av = ah->av;
		ret = 0;
	}
	xa_unlock_irqrestore(&sdev->ahs, flags);
	return ret;
}
