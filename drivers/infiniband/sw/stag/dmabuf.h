/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag dma-buf page lists: the pages of a buffer another driver exports,
 * for a memory region over part of it.
 */
#ifndef _STAG_DMABUF_H
#define _STAG_DMABUF_H

#include <linux/types.h>

struct stag_pages;

#if IS_ENABLED(CONFIG_DMA_SHARED_BUFFER)
struct stag_pages *stag_dmabuf_pages(int fd, u64 offset, u64 length, int *err);
#else
static inline struct stag_pages *stag_dmabuf_pages(int fd, u64 offset, u64 length, int *err)
{
	*err = -EOPNOTSUPP;
	return NULL;
}
#endif

#endif /* _STAG_DMABUF_H */
