/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * stag: user/kernel ABI shared by stag.ko and its libibverbs provider.
 *
 * Every structure here is the driver-private tail of a uverbs command or
 * response (struct ib_uverbs_*). Sizes are multiples of 8 bytes so that
 * 32-bit and 64-bit userspace lay them out identically. New fields are only
 * ever appended; the kernel copies min(sizeof, udata length), so an old
 * provider keeps working with a newer module.
 */
#ifndef STAG_ABI_USER_H
#define STAG_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/* Reported as the device's uverbs ABI version (sysfs abi_version). */
#define STAG_UVERBS_ABI_VERSION		1

/* Device names start with this prefix; the provider matches on it. */
#define STAG_DEVICE_NAME_PREFIX		"stag"

struct stag_alloc_ucontext_resp {
	__u32 abi_version;	/* STAG_UVERBS_ABI_VERSION */
	__u32 reserved;
};

struct stag_alloc_pd_resp {
	__u32 pdn;		/* the PD's number, as restrack shows it */
	__u32 reserved;
};

/*
 * Driver methods (ioctl() on the uverbs file, RDMA_VERBS_IOCTL). Method
 * and attribute IDs live in the driver namespace, above the core's.
 */

/* Methods added to UVERBS_OBJECT_MR. */
enum stag_mr_methods {
	STAG_METHOD_REG_SHARED_MR = (1U << UVERBS_ID_NS_SHIFT),
};

/*
 * STAG_METHOD_REG_SHARED_MR: Register Shared Memory Region. A new region
 * over the pages of a user region of the same context, with its own keys,
 * iova, PD and access flags (enum ib_uverbs_access_flags, as a 32- or
 * 64-bit flags attribute). No new pages are pinned.
 */
enum stag_reg_shared_mr_attrs {
	STAG_ATTR_REG_SHARED_MR_HANDLE = (1U << UVERBS_ID_NS_SHIFT),	/* new MR */
	STAG_ATTR_REG_SHARED_MR_SRC_HANDLE,	/* MR whose pages are shared */
	STAG_ATTR_REG_SHARED_MR_PD_HANDLE,	/* PD of the new MR */
	STAG_ATTR_REG_SHARED_MR_IOVA,		/* u64 in */
	STAG_ATTR_REG_SHARED_MR_ACCESS_FLAGS,	/* flags in */
	STAG_ATTR_REG_SHARED_MR_RESP_LKEY,	/* u32 out */
	STAG_ATTR_REG_SHARED_MR_RESP_RKEY,	/* u32 out */
};

#endif /* STAG_ABI_USER_H */
