// SPDX-License-Identifier: GPL-2.0
/*
 * dma-buf regions. A dma-buf (udmabuf, a DMA heap's buffer, a GPU's
 * buffer in system memory) is registered as a region by its fd and a
 * range of it.
 *
 * stag imports it as a device that DMAs would, dynamically: it attaches
 * the buffer with move notifications and maps the attachment under the
 * buffer's reservation lock. The exporter may then move the buffer at any
 * time; it tells its importers first (move_notify, under the same lock),
 * and stag empties the region's translation, waits out the accesses that
 * still hold a page of it and unmaps the attachment before the exporter
 * goes on. The next access maps the attachment again and finds the pages
 * where the buffer is now. An exporter that cannot move buffers (udmabuf,
 * the DMA heaps) maps them once, at attach, and never notifies.
 *
 * The translation is that of on-demand paging (odp.c), with the exporter
 * as its source instead of the page tables: the gate, the data path, and
 * the rule that an access never maps while holding a page are the same.
 *
 * stag's "DMA" is the CPU's. It attaches with a device of its own with a
 * 64-bit mask and no IOMMU, so the exporter's DMA addresses are physical
 * addresses (dma-direct), which name the buffer's pages. Where the DMA
 * layer would bounce (swiotlb=force, an encrypted guest) the address names
 * a copy, not the buffer: stag refuses those systems. Memory that is not
 * the CPU's own pages (I/O memory, another device's) is refused too:
 * nothing could copy to it page by page. Nothing is charged to
 * RLIMIT_MEMLOCK: the exporter owns the memory and accounts for it, as it
 * does for every device that imports the buffer.
 */
#include <linux/device.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/mem_encrypt.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/swiotlb.h>
#include <kunit/visibility.h>

#include "compat.h"
#include "dmabuf.h"
#include "odp.h"
#include "pages.h"

STAG_MODULE_IMPORT_NS_DMA_BUF;

/* The device stag attaches buffers with; NULL where there is no DMA. */
static struct device *stag_dma_dev;

struct stag_dmabuf {
	struct dma_buf_attachment *attach;
	/* The attachment's mapping now, or NULL; under the reservation lock. */
	struct sg_table *sgt;
	struct stag_odp *odp;
	unsigned long first;	/* the buffer's page of the region's page 0 */
};

/* Are the @n pages from @pfn the CPU's own, which it can map one by one? */
static bool cpu_pages(unsigned long pfn, unsigned long n)
{
	for (; n; n--, pfn++)
		if (!pfn_valid(pfn) || is_zone_device_page(pfn_to_page(pfn)))
			return false;
	return true;
}

/*
 * Finds the region's pages in the exporter's mapping and publishes them.
 * Return: 0; -EOPNOTSUPP for memory that is not the CPU's pages; -EFAULT
 * for a mapping shorter than the region; -ENOMEM.
 */
static int map_publish(struct stag_dmabuf *sd)
{
	unsigned long first = sd->first, end = first + sd->odp->npages, cur = 0, from, to, pfn;
	struct scatterlist *sg;
	dma_addr_t dma;
	unsigned int k;
	size_t len;
	int ret;

	for_each_sgtable_dma_sg(sd->sgt, sg, k) {
		if (cur >= end)
			break;
		dma = sg_dma_address(sg);
		len = sg_dma_len(sg);
		if (!PAGE_ALIGNED(dma) || !PAGE_ALIGNED(len))
			return -EOPNOTSUPP;
		from = max(cur, first);
		to = min(cur + (len >> PAGE_SHIFT), end);
		if (from < to) {
			/* Without an IOMMU the DMA address is the physical one. */
			pfn = PHYS_PFN(__sme_clr(dma)) + (from - cur);
			if (!cpu_pages(pfn, to - from))
				return -EOPNOTSUPP;
			ret = stag_odp_publish(sd->odp, from - first, pfn, to - from);
			if (ret)
				return ret;
		}
		cur += len >> PAGE_SHIFT;
	}
	return cur >= end ? 0 : -EFAULT;
}

static int dmabuf_map(struct stag_dmabuf *sd)
{
	struct dma_resv *resv = sd->attach->dmabuf->resv;
	struct sg_table *sgt;
	long left;

	dma_resv_assert_held(resv);
	if (!sd->sgt) {
		sgt = dma_buf_map_attachment(sd->attach, DMA_BIDIRECTIONAL);
		if (IS_ERR(sgt))
			return PTR_ERR(sgt);
		sd->sgt = sgt;
	}
	/* The pages are the buffer's now; their bytes once a move into them is done. */
	left = dma_resv_wait_timeout(resv, DMA_RESV_USAGE_KERNEL, false, MAX_SCHEDULE_TIMEOUT);
	if (left <= 0)
		return left ? left : -ETIMEDOUT;
	if (READ_ONCE(sd->odp->mapped) == sd->odp->npages)
		return 0;
	return map_publish(sd);
}

/* The source's fault: maps the attachment, if the exporter took it back. */
static int dmabuf_fault(struct stag_odp *odp)
{
	struct stag_dmabuf *sd = odp->owner;
	struct dma_resv *resv = sd->attach->dmabuf->resv;
	int ret;

	dma_resv_lock(resv, NULL);
	ret = dmabuf_map(sd);
	dma_resv_unlock(resv);
	return ret;
}

/* Empties the translation and unmaps; the reservation lock is held. */
static void dmabuf_unmap(struct stag_dmabuf *sd)
{
	dma_resv_assert_held(sd->attach->dmabuf->resv);
	stag_odp_invalidate(sd->odp);
	if (sd->sgt)
		dma_buf_unmap_attachment(sd->attach, sd->sgt, DMA_BIDIRECTIONAL);
	sd->sgt = NULL;
}

/*
 * The exporter is about to move the buffer: from when this returns no
 * byte moves to or from where it was.
 */
static void dmabuf_move_notify(struct dma_buf_attachment *attach)
{
	dmabuf_unmap(attach->importer_priv);
}

static const struct dma_buf_attach_ops dmabuf_attach_ops = {
	.allow_peer2peer = false,
	STAG_DMA_BUF_INVALIDATE_OP(dmabuf_move_notify),
};

static void dmabuf_release(struct stag_odp *odp)
{
	struct stag_dmabuf *sd = odp->owner;
	struct dma_buf *dmabuf = sd->attach->dmabuf;

	dma_resv_lock(dmabuf->resv, NULL);
	dmabuf_unmap(sd);
	dma_resv_unlock(dmabuf->resv);
	dma_buf_detach(dmabuf, sd->attach);
	dma_buf_put(dmabuf);
	kfree(sd);
}

static const struct stag_odp_source dmabuf_source = {
	.fault = dmabuf_fault,
	.release = dmabuf_release,
};

/**
 * stag_dmabuf_pages_of() - a page list over part of a dma-buf
 * @dmabuf: the buffer; the list takes a reference of its own
 * @offset: the first byte of the part, from the buffer's start
 * @length: its number of bytes, at least 1
 * @err: set to the errno on failure
 *
 * The list's first page holds byte @offset: a region over it starts at
 * offset_in_page(@offset) of that page. Its translation is filled here,
 * and again after each move of the buffer, on the next access.
 *
 * Context: process context; sleeps.
 * Return: the list with one reference, or NULL with *err set: -EINVAL
 * for a range that is empty, wraps or runs past the buffer's end,
 * -EOPNOTSUPP for a buffer the CPU cannot reach page by page (or a system
 * whose DMA bounces), -ENOMEM, or the exporter's error. Nothing of the
 * buffer is held on failure.
 */
struct stag_pages *stag_dmabuf_pages_of(struct dma_buf *dmabuf, u64 offset, u64 length, int *err)
{
	struct stag_pages *pages;
	struct stag_dmabuf *sd;
	u64 end, npages;
	int ret;

	might_sleep();
	if (!length || check_add_overflow(offset, length, &end) || end > dmabuf->size) {
		*err = -EINVAL;
		return NULL;
	}
	npages = (PAGE_ALIGN(end) >> PAGE_SHIFT) - (offset >> PAGE_SHIFT);
	if (npages > U32_MAX) {
		*err = -EINVAL;
		return NULL;
	}
	if (!stag_dma_dev || is_swiotlb_force_bounce(stag_dma_dev)) {
		*err = -EOPNOTSUPP;
		return NULL;
	}
	*err = -ENOMEM;
	pages = stag_pages_alloc(1);
	if (!pages)
		return NULL;
	sd = kzalloc(sizeof(*sd), GFP_KERNEL_ACCOUNT);
	if (!sd)
		goto err_put_pages;
	sd->first = offset >> PAGE_SHIFT;
	sd->odp = stag_odp_create_source(npages, &dmabuf_source, sd);
	if (!sd->odp)
		goto err_free;
	get_dma_buf(dmabuf);
	sd->attach = dma_buf_dynamic_attach(dmabuf, stag_dma_dev, &dmabuf_attach_ops, sd);
	if (IS_ERR(sd->attach)) {
		*err = PTR_ERR(sd->attach);
		goto err_dmabuf_put;
	}
	pages->odp = sd->odp;
	pages->npages = npages;
	pages->writable = true;
	/* Mapped now, so that memory stag cannot reach is refused here. */
	dma_resv_lock(dmabuf->resv, NULL);
	ret = dmabuf_map(sd);
	dma_resv_unlock(dmabuf->resv);
	if (ret) {
		/* The last put destroys the translation, and it releases the rest. */
		stag_pages_put(pages);
		*err = ret;
		return NULL;
	}
	return pages;

err_dmabuf_put:
	dma_buf_put(dmabuf);
	/* Empty and unseen: not one for stag_odp_destroy(), which releases. */
	kfree(sd->odp);
err_free:
	kfree(sd);
err_put_pages:
	stag_pages_put(pages);
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(stag_dmabuf_pages_of);

/**
 * stag_dmabuf_pages() - a page list over part of a dma-buf, by its fd
 * @fd: the dma-buf's file descriptor, in the calling process
 * @offset: as stag_dmabuf_pages_of()
 * @length: as stag_dmabuf_pages_of()
 * @err: set to the errno on failure
 *
 * Context: process context; sleeps.
 * Return: as stag_dmabuf_pages_of(), and -EBADF for an fd that is not
 * open, -EINVAL for one that is not a dma-buf's.
 */
struct stag_pages *stag_dmabuf_pages(int fd, u64 offset, u64 length, int *err)
{
	struct stag_pages *pages;
	struct dma_buf *dmabuf;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf)) {
		*err = PTR_ERR(dmabuf);
		return NULL;
	}
	pages = stag_dmabuf_pages_of(dmabuf, offset, length, err);
	dma_buf_put(dmabuf);
	return pages;
}

/**
 * stag_dmabuf_init() - make the device stag attaches dma-bufs with
 *
 * A kernel without DMA (UML) has no use for one: dma-buf regions are then
 * refused with -EOPNOTSUPP, and the module loads.
 *
 * Return: 0, or -errno when the device cannot be made.
 */
int stag_dmabuf_init(void)
{
	struct device *dev = root_device_register("stag_dma");

	if (IS_ERR(dev))
		return PTR_ERR(dev);
	if (dma_coerce_mask_and_coherent(dev, DMA_BIT_MASK(64))) {
		root_device_unregister(dev);
		return 0;
	}
	stag_dma_dev = dev;
	return 0;
}

void stag_dmabuf_uninit(void)
{
	if (stag_dma_dev)
		root_device_unregister(stag_dma_dev);
	stag_dma_dev = NULL;
}
