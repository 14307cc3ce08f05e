/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag dma-buf regions: the pages of a buffer another driver exports, for
 * a memory region over part of it, following the exporter's moves.
 */
#ifndef _STAG_DMABUF_H
#define _STAG_DMABUF_H

#include <linux/types.h>

struct dma_buf;
struct stag_pages;

#if IS_ENABLED(CONFIG_DMA_SHARED_BUFFER)
struct stag_pages *stag_dmabuf_pages(int fd, u64 offset, u64 length, int *err);
struct stag_pages *stag_dmabuf_pages_of(struct dma_buf *dmabuf, u64 offset, u64 length, int *err);
int stag_dmabuf_init(void);
void stag_dmabuf_uninit(void);
#else
static inline struct stag_pages *stag_dmabuf_pages(int fd, u64 offset, u64 length, int *err)
{
	*err = -EOPNOTSUPP;
	return NULL;
}

static inline int stag_dmabuf_init(void)
{
	return 0;
}

static inline void stag_dmabuf_uninit(void)
{
}
#endif

#endif /* _STAG_DMABUF_H */
