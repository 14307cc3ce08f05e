// SPDX-License-Identifier: GPL-2.0
/*
 * stag: a software RDMA provider. Module setup only; see
 * Documentation/stag.rst for the architecture.
 */

#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "debugfs.h"
#include "dmabuf.h"
#include "flow.h"
#include "link.h"
#include "odp.h"
#include "qp.h"

static int __init stag_mod_init(void)
{
	int ret;

	stag_debugfs_init();
	ret = stag_qp_wq_init();
	if (ret)
		goto err_debugfs;
	ret = stag_odp_wq_init();
	if (ret)
		goto err_qp_wq;
	ret = stag_dmabuf_init();
	if (ret)
		goto err_odp_wq;
	ret = stag_link_init();
	if (ret)
		goto err_dmabuf;
	pr_info("loaded\n");
	return 0;

err_dmabuf:
	stag_dmabuf_uninit();
err_odp_wq:
	stag_odp_wq_uninit();
err_qp_wq:
	stag_qp_wq_uninit();
err_debugfs:
	stag_debugfs_uninit();
	return ret;
}

static void __exit stag_mod_exit(void)
{
	stag_link_uninit();
	stag_flow_uninit();
	stag_dmabuf_uninit();
	stag_odp_wq_uninit();
	stag_qp_wq_uninit();
	stag_debugfs_uninit();
	pr_info("unloaded\n");
}

module_init(stag_mod_init);
module_exit(stag_mod_exit);

MODULE_DESCRIPTION("stag: software RDMA provider with a byte-granular TPT");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK("stag");
