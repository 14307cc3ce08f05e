// SPDX-License-Identifier: GPL-2.0
/*
 * stag: a software RDMA provider. Module setup only; see
 * Documentation/stag.rst for the architecture.
 */

#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "link.h"

static int __init stag_mod_init(void)
{
	int ret;

	ret = stag_link_init();
	if (ret)
		return ret;
	pr_info("loaded\n");
	return 0;
}

static void __exit stag_mod_exit(void)
{
	stag_link_uninit();
	pr_info("unloaded\n");
}

module_init(stag_mod_init);
module_exit(stag_mod_exit);

MODULE_DESCRIPTION("stag: software RDMA provider with a byte-granular TPT");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK("stag");
