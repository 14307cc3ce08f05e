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

#endif /* STAG_ABI_USER_H */
