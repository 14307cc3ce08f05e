// SPDX-License-Identifier: GPL-2.0
/*
 * XRC domains. The core keeps which TGT QPs a domain has and who opened
 * it; stag counts the domains against the device's limit.
 */

#include "dev.h"
#include "xrcd.h"

/**
 * stag_xrcd_alloc() - the alloc_xrcd verb
 * @ibxrcd: the domain, allocated and zeroed by the core
 * @udata: the user's command; stag takes no driver data
 *
 * Return: 0, or -EINVAL when the device has max_xrcd domains already.
 */
int stag_xrcd_alloc(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return stag_res_charge(&to_stag_dev(ibxrcd->device)->res, STAG_RES_XRCD);
}

int stag_xrcd_dealloc(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	stag_res_uncharge(&to_stag_dev(ibxrcd->device)->res, STAG_RES_XRCD);
	return 0;
}
