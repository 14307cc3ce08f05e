// SPDX-License-Identifier: GPL-2.0
/*
 * Protection domains. A PD is only a number here: what it protects is
 * decided where objects meet (the gate compares PDs), not in this file.
 */

#include <linux/idr.h>
#include <rdma/ib_verbs.h>
#include <rdma/stag-abi.h>

#include "dev.h"
#include "pd.h"

/**
 * stag_pd_alloc() - the alloc_pd verb
 * @ibpd: the PD, allocated and zeroed by the core
 * @udata: the user's response buffer, or NULL for a kernel PD
 *
 * Return: 0, -EINVAL when the device has max_pd PDs already, or -EFAULT
 * when the response cannot be written (nothing is left allocated).
 */
int stag_pd_alloc(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibpd->device);
	struct stag_pd *pd = to_stag_pd(ibpd);
	struct stag_alloc_pd_resp resp = {};
	int id, ret;

	ret = stag_res_charge(&sdev->res, STAG_RES_PD);
	if (ret)
		return ret;
	/* Within the limit, so that the space cannot run out. */
	id = ida_alloc_range(&sdev->pd_ida, 1, STAG_MAX_PD, GFP_KERNEL);
	if (id < 0) {
		ret = id;
		goto err_uncharge;
	}
	pd->pdn = id;

	if (udata && udata->outlen) {
		resp.pdn = pd->pdn;
		ret = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
		if (ret)
			goto err_free_pdn;
	}
	return 0;

err_free_pdn:
	ida_free(&sdev->pd_ida, pd->pdn);
err_uncharge:
	stag_res_uncharge(&sdev->res, STAG_RES_PD);
	return ret;
}

int stag_pd_dealloc(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibpd->device);

	ida_free(&sdev->pd_ida, to_stag_pd(ibpd)->pdn);
	stag_res_uncharge(&sdev->res, STAG_RES_PD);
	return 0;
}
