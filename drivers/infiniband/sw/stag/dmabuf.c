// SPDX-License-Identifier: GPL-2.0
/*
 * dma-buf page lists. A dma-buf (udmabuf, a DMA heap's buffer, a GPU's
 * buffer in system memory) is registered as a region by its fd and a
 * range of it. A device that DMAs would attach and map the buffer for its
 * own bus; stag's "DMA" is the CPU's, so it maps the buffer into the
 * kernel (dma_buf_vmap) and takes the pages behind that mapping into a
 * page list of runs like any other. The gate, the data path and the
 * region's life are then those of a pinned region.
 *
 * stag relies on what every kernel user of dma_buf_vmap() relies on: the
 * mapping, and so the pages behind it, stays valid until it is undone.
 * udmabuf's pages (a sealed memfd's, pinned by udmabuf) and a DMA heap's
 * never move; make check registers both. An exporter that could move a
 * buffer must keep it where it is while it is vmapped; one that cannot
 * promise that should refuse the vmap. stag makes no attachment, so it
 * gets no move_notify and would not notice a move. The list holds the
 * mapping and a reference on the dma-buf, and lets both go at its last
 * put, after the last access that could touch the pages. Memory that is
 * not the CPU's (I/O memory, a vmap the kernel cannot walk to pages) is
 * refused: nothing could copy to it page by page.
 * Nothing is charged to RLIMIT_MEMLOCK: the exporter owns the memory and
 * accounts for it, as it does for every device that imports the buffer.
 */
#include <linux/dma-buf.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "dmabuf.h"
#include "pages.h"

STAG_MODULE_IMPORT_NS_DMA_BUF;

struct stag_dmabuf {
	struct dma_buf *dmabuf;
	struct iosys_map map;
};

/* The page of the kernel mapping at @vaddr, or NULL. */
static struct page *map_page(void *vaddr)
{
	if (is_vmalloc_addr(vaddr))
		return vmalloc_to_page(vaddr);
	if (virt_addr_valid(vaddr))
		return virt_to_page(vaddr);
	return NULL;
}

/*
 * Walks the pages of [first, first + npages) of the mapping, runs of
 * contiguous ones into @runs when given. Return: how many runs they make,
 * or 0 when one of them is not a page the kernel can map.
 */
static u32 map_runs(const struct stag_dmabuf *sd, u64 first, u64 npages, u64 *runs)
{
	unsigned long pfn, start = 0, len = 0;
	struct page *page;
	u32 n = 0;
	u64 i;

	for (i = 0; i < npages; i++) {
		page = map_page(sd->map.vaddr + ((first + i) << PAGE_SHIFT));
		if (!page)
			return 0;
		pfn = page_to_pfn(page);
		if (len && pfn == start + len && len < STAG_RUN_MAX_PAGES) {
			len++;
			continue;
		}
		if (len) {
			if (runs)
				runs[n] = stag_run_make(start, len);
			n++;
		}
		start = pfn;
		len = 1;
		if (!(i % 4096))
			cond_resched();
	}
	if (runs)
		runs[n] = stag_run_make(start, len);
	return n + 1;
}

static void dmabuf_release(struct stag_pages *pages)
{
	struct stag_dmabuf *sd = pages->owner;

	stag_dma_buf_vunmap(sd->dmabuf, &sd->map);
	dma_buf_put(sd->dmabuf);
	kfree(sd);
}

/**
 * stag_dmabuf_pages() - a page list over part of a dma-buf
 * @fd: the dma-buf's file descriptor, in the calling process
 * @offset: the first byte of the part, from the buffer's start
 * @length: its number of bytes, at least 1
 * @err: set to the errno on failure
 *
 * The list's first page holds byte @offset: a region over it starts at
 * offset_in_page(@offset) of that page.
 *
 * Context: process context; sleeps.
 * Return: the list with one reference, or NULL with *err set: -EBADF for
 * an fd that is not open, -EINVAL for one that is not a dma-buf's or a
 * range that is empty, wraps or runs past the buffer's end, -EOPNOTSUPP
 * for a buffer the CPU cannot reach page by page, -ENOMEM. Nothing of the
 * buffer is held on failure.
 */
struct stag_pages *stag_dmabuf_pages(int fd, u64 offset, u64 length, int *err)
{
	struct stag_pages *pages;
	struct stag_dmabuf *sd;
	u64 end, first, npages;
	u32 nruns;
	int ret;

	might_sleep();
	if (!length || check_add_overflow(offset, length, &end)) {
		*err = -EINVAL;
		return NULL;
	}
	sd = kzalloc(sizeof(*sd), GFP_KERNEL_ACCOUNT);
	if (!sd) {
		*err = -ENOMEM;
		return NULL;
	}
	sd->dmabuf = dma_buf_get(fd);
	if (IS_ERR(sd->dmabuf)) {
		ret = PTR_ERR(sd->dmabuf);
		goto err_free;
	}
	ret = -EINVAL;
	if (end > sd->dmabuf->size)
		goto err_put;
	first = offset >> PAGE_SHIFT;
	npages = (PAGE_ALIGN(end) >> PAGE_SHIFT) - first;
	if (npages > U32_MAX)
		goto err_put;
	ret = stag_dma_buf_vmap(sd->dmabuf, &sd->map);
	if (ret)
		goto err_put;
	ret = -EOPNOTSUPP;
	if (sd->map.is_iomem)
		goto err_vunmap;
	nruns = map_runs(sd, first, npages, NULL);
	if (!nruns)
		goto err_vunmap;
	ret = -ENOMEM;
	pages = stag_pages_alloc(nruns);
	if (!pages)
		goto err_vunmap;
	map_runs(sd, first, npages, pages->runs);
	stag_pages_set_runs(pages, nruns);
	pages->writable = true;
	pages->release = dmabuf_release;
	pages->owner = sd;
	return pages;

err_vunmap:
	stag_dma_buf_vunmap(sd->dmabuf, &sd->map);
err_put:
	dma_buf_put(sd->dmabuf);
err_free:
	kfree(sd);
	*err = ret;
	return NULL;
}
