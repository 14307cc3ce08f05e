/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which rdma-core's libibverbs the provider runs under, and whether its
 * private provider interface is one ibverbs_provider.h was checked against.
 */
#ifndef STAG_PROVIDER_RDMA_CORE_H
#define STAG_PROVIDER_RDMA_CORE_H

#include <stdbool.h>
#include <stddef.h>

int stag_rdma_core_parse(const char *path, char *version, size_t len);
bool stag_rdma_core_known(const char *version);
bool stag_rdma_core_check(void);
unsigned long stag_rdma_core_release(void);

#endif
