// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: dma-buf regions follow their exporter. A fake exporter here
 * moves its buffer between two sets of pages the way a GPU driver moves
 * one between VRAM and system memory: under the buffer's reservation
 * lock, notifying its importers first, then copying. stag's translation
 * must be empty when the notification returns, must have waited for the
 * accesses that held a page, and must find the new pages on the next
 * access.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "../compat.h"
#include "../dmabuf.h"
#include "../odp.h"
#include "../pages.h"

STAG_MODULE_IMPORT_NS_DMA_BUF;

#define FAKE_PAGES	4

/*
 * The exporter's state. It outlives the test when the last file reference
 * goes late (a delayed fput): the buffer's release frees it.
 */
struct fake_buf {
	struct page *pages[2][FAKE_PAGES];
	int cur;		/* the set the buffer is in now */
	int map_err;		/* what map returns, when not 0 */
	bool misalign;		/* map hands out an address off a page boundary */
	atomic_t maps, unmaps, attaches, detaches;
	struct dma_buf *dmabuf;
};

static int fake_attach(struct dma_buf *dmabuf, struct dma_buf_attachment *attach)
{
	atomic_inc(&((struct fake_buf *)dmabuf->priv)->attaches);
	return 0;
}

static void fake_detach(struct dma_buf *dmabuf, struct dma_buf_attachment *attach)
{
	atomic_inc(&((struct fake_buf *)dmabuf->priv)->detaches);
}

/* Pin and unpin make the exporter dynamic: it may move unpinned buffers. */
static int fake_pin(struct dma_buf_attachment *attach)
{
	return 0;
}

static void fake_unpin(struct dma_buf_attachment *attach)
{
}

static struct sg_table *fake_map(struct dma_buf_attachment *attach, enum dma_data_direction dir)
{
	struct fake_buf *fb = attach->dmabuf->priv;
	struct sg_table *sgt;
	int ret;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (fb->map_err)
		return ERR_PTR(fb->map_err);
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table_from_pages(sgt, fb->pages[fb->cur], FAKE_PAGES, 0,
					FAKE_PAGES * PAGE_SIZE, GFP_KERNEL);
	if (ret)
		goto err_free;
	ret = dma_map_sgtable(attach->dev, sgt, dir, 0);
	if (ret)
		goto err_table;
	if (fb->misalign)
		sg_dma_address(sgt->sgl) += 8;
	atomic_inc(&fb->maps);
	return sgt;

err_table:
	sg_free_table(sgt);
err_free:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void fake_unmap(struct dma_buf_attachment *attach, struct sg_table *sgt,
		       enum dma_data_direction dir)
{
	struct fake_buf *fb = attach->dmabuf->priv;

	if (fb->misalign)
		sg_dma_address(sgt->sgl) -= 8;
	dma_unmap_sgtable(attach->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(sgt);
	atomic_inc(&fb->unmaps);
}

static void fake_release(struct dma_buf *dmabuf)
{
	struct fake_buf *fb = dmabuf->priv;
	int s, i;

	for (s = 0; s < 2; s++)
		for (i = 0; i < FAKE_PAGES; i++)
			__free_page(fb->pages[s][i]);
	kfree(fb);
}

static const struct dma_buf_ops fake_ops = {
	.attach = fake_attach,
	.detach = fake_detach,
	.pin = fake_pin,
	.unpin = fake_unpin,
	.map_dma_buf = fake_map,
	.unmap_dma_buf = fake_unmap,
	.release = fake_release,
};

static void fake_put(void *data)
{
	dma_buf_put(data);
}

/* A buffer of FAKE_PAGES pages, its bytes 0, 1, 2... in set 0. */
static struct fake_buf *fake_buf_new(struct kunit *test)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct fake_buf *fb;
	int s, i;

	fb = kzalloc(sizeof(*fb), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fb);
	for (s = 0; s < 2; s++)
		for (i = 0; i < FAKE_PAGES; i++) {
			fb->pages[s][i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
			KUNIT_ASSERT_NOT_NULL(test, fb->pages[s][i]);
			if (!s)
				memset(page_address(fb->pages[s][i]), i + 1, PAGE_SIZE);
		}
	info.ops = &fake_ops;
	info.size = FAKE_PAGES * PAGE_SIZE;
	info.flags = O_RDWR;
	info.priv = fb;
	fb->dmabuf = dma_buf_export(&info);
	KUNIT_ASSERT_FALSE(test, IS_ERR(fb->dmabuf));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fake_put, fb->dmabuf), 0);
	return fb;
}

/*
 * Moves the buffer to the other set of pages, as an exporter does:
 * importers are told under the reservation lock, then the bytes move, and
 * the old pages are scribbled on, so that a late access shows.
 */
static void fake_move(struct fake_buf *fb)
{
	int i, to = !fb->cur;

	dma_resv_lock(fb->dmabuf->resv, NULL);
	dma_buf_invalidate_mappings(fb->dmabuf);
	for (i = 0; i < FAKE_PAGES; i++) {
		memcpy(page_address(fb->pages[to][i]), page_address(fb->pages[fb->cur][i]),
		       PAGE_SIZE);
		memset(page_address(fb->pages[fb->cur][i]), 0x5a, PAGE_SIZE);
	}
	fb->cur = to;
	dma_resv_unlock(fb->dmabuf->resv);
}

static void pages_release(void *data)
{
	stag_pages_put(data);
}

/* A region over bytes [@offset, @offset + @length) of the buffer. */
static struct stag_pages *fake_region(struct kunit *test, struct fake_buf *fb, u64 offset,
				      u64 length)
{
	struct stag_pages *pages;
	int err = 0;

	pages = stag_dmabuf_pages_of(fb->dmabuf, offset, length, &err);
	KUNIT_ASSERT_NOT_NULL_MSG(test, pages, "err %d", err);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pages_release, pages), 0);
	return pages;
}

/* The page the translation gives for page @pgidx of the region, let go at once. */
static struct page *region_page(struct stag_odp *odp, unsigned long pgidx)
{
	struct page *page = stag_odp_get_page(odp, pgidx, true);

	if (page)
		stag_odp_put_page(odp);
	return page;
}

/*
 * Bytes [PAGE_SIZE + 100, + 2 pages) of the buffer: pages 1 to 3. Mapped
 * at registration; a move empties the translation and unmaps; the next
 * fault maps again and finds the other set; the last put unmaps and
 * detaches.
 */
static void stag_dmabuf_region_follows_moves(struct kunit *test)
{
	struct fake_buf *fb = fake_buf_new(test);
	struct stag_pages *pages;
	struct stag_odp *odp;
	unsigned long i;
	int err;

	pages = stag_dmabuf_pages_of(fb->dmabuf, PAGE_SIZE + 100, 2 * PAGE_SIZE, &err);
	KUNIT_ASSERT_NOT_NULL_MSG(test, pages, "err %d", err);
	odp = pages->odp;
	KUNIT_ASSERT_NOT_NULL(test, odp);
	KUNIT_EXPECT_EQ(test, pages->npages, 3ULL);
	KUNIT_EXPECT_EQ(test, odp->npages, 3UL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(odp->mapped), 3UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&fb->attaches), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&fb->maps), 1);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_PTR_EQ(test, region_page(odp, i), fb->pages[0][i + 1]);
	KUNIT_EXPECT_NULL(test, region_page(odp, 3));

	fake_move(fb);
	KUNIT_EXPECT_EQ(test, atomic_read(&fb->unmaps), 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(odp->mapped), 0UL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&odp->invalidations), 1LL);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_NULL(test, region_page(odp, i));

	/* As the data path does when it finds a page missing. */
	KUNIT_EXPECT_EQ(test, stag_odp_fault(odp, 1, 1, true, true), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&fb->maps), 2);
	KUNIT_EXPECT_EQ(test, READ_ONCE(odp->mapped), 3UL);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_PTR_EQ(test, region_page(odp, i), fb->pages[1][i + 1]);
	/* The bytes came along. */
	KUNIT_EXPECT_EQ(test, *(u8 *)page_address(region_page(odp, 2)), 4);

	stag_pages_put(pages);
	KUNIT_EXPECT_EQ(test, atomic_read(&fb->unmaps), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&fb->detaches), 1);
}

struct mover {
	struct fake_buf *fb;
	struct completion done;
};

static int mover_fn(void *data)
{
	struct mover *m = data;

	fake_move(m->fb);
	complete(&m->done);
	return 0;
}

/*
 * An access holding a page keeps the exporter's move waiting in the
 * notification until it lets the page go: the bytes it writes are in the
 * page the move copies from.
 */
static void stag_dmabuf_move_waits_for_access(struct kunit *test)
{
	struct fake_buf *fb = fake_buf_new(test);
	struct stag_pages *pages = fake_region(test, fb, 0, FAKE_PAGES * PAGE_SIZE);
	struct mover *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct task_struct *t;
	struct page *page;
	u8 *p;

	KUNIT_ASSERT_NOT_NULL(test, m);
	m->fb = fb;
	init_completion(&m->done);
	/*
	 * The mover exists before the access begins: nothing allocates while
	 * an access holds a page, the rule stag_odp_access states (a fork's
	 * invalidation waits for accesses, and reclaim may invalidate). Made
	 * under the access, lockdep saw the cycle once the guest suites
	 * forked after this suite in one kernel.
	 */
	t = kthread_create(mover_fn, m, "stag_kunit_mover");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	page = stag_odp_get_page(pages->odp, 2, true);
	if (page != fb->pages[0][2]) {
		if (page)
			stag_odp_put_page(pages->odp);
		kthread_stop(t);
		KUNIT_FAIL(test, "page 2 of the region: %p, not the buffer's %p", page,
			   fb->pages[0][2]);
		return;
	}
	wake_up_process(t);
	msleep(200);
	KUNIT_EXPECT_FALSE(test, completion_done(&m->done));
	p = kmap_local_page(page);
	p[7] = 0xee;
	kunmap_local(p);
	stag_odp_put_page(pages->odp);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&m->done, 10 * HZ), 0UL);

	KUNIT_EXPECT_EQ(test, ((u8 *)page_address(fb->pages[1][2]))[7], 0xee);
	KUNIT_EXPECT_EQ(test, ((u8 *)page_address(fb->pages[0][2]))[7], 0x5a);
	KUNIT_EXPECT_NULL(test, region_page(pages->odp, 2));
}

struct writer {
	struct stag_odp *odp;
	u32 last;		/* the last value written */
	int err;
	bool done;
};

/* Writes 1, 2, 3... into byte 0 of page 1, faulting as the data path does. */
static int writer_fn(void *data)
{
	struct writer *w = data;
	struct page *page;
	u32 *p;
	u32 n;

	for (n = 1; n <= 20000 && !w->err; n++) {
		while (!(page = stag_odp_get_page(w->odp, 1, true))) {
			w->err = stag_odp_fault(w->odp, 1, 1, true, true);
			if (w->err)
				goto out;
		}
		p = kmap_local_page(page);
		WRITE_ONCE(*p, n);
		kunmap_local(p);
		stag_odp_put_page(w->odp);
		w->last = n;
		if (!(n % 256))
			cond_resched();
	}
out:
	WRITE_ONCE(w->done, true);
	return 0;
}

/*
 * Two threads, one writing through the region and one moving the buffer
 * back and forth: no write is lost in pages the buffer has left.
 */
static void stag_dmabuf_moves_race_writes(struct kunit *test)
{
	struct fake_buf *fb = fake_buf_new(test);
	struct stag_pages *pages = fake_region(test, fb, 0, FAKE_PAGES * PAGE_SIZE);
	struct writer *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	struct task_struct *t;
	int moves = 0;

	KUNIT_ASSERT_NOT_NULL(test, w);
	w->odp = pages->odp;
	/* Held, so that kthread_stop() may find it finished. */
	t = kthread_create(writer_fn, w, "stag_kunit_writer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	wake_up_process(t);
	while (!READ_ONCE(w->done) && moves < 1000000) {
		fake_move(fb);
		moves++;
		if (!(moves % 16))
			cond_resched();
	}
	kthread_stop(t);
	put_task_struct(t);
	fake_move(fb);
	kunit_info(test, "%d moves, %u writes", moves + 1, w->last);
	KUNIT_EXPECT_EQ(test, w->err, 0);
	KUNIT_EXPECT_GT(test, w->last, 0U);
	KUNIT_EXPECT_GT(test, moves, 1);
	KUNIT_EXPECT_EQ(test, *(u32 *)page_address(fb->pages[fb->cur][1]), w->last);
	KUNIT_EXPECT_EQ(test, atomic64_read(&pages->odp->invalidations),
			(s64)atomic_read(&fb->unmaps));
}

/*
 * Refusals change nothing: the buffer is neither attached nor held after
 * them. A map that fails after a move fails the access, as a page the
 * process lacks does.
 */
static void stag_dmabuf_refusals(struct kunit *test)
{
	struct fake_buf *fb = fake_buf_new(test);
	long files = file_count(fb->dmabuf->file);
	struct stag_pages *pages;
	int err;

	KUNIT_EXPECT_NULL(test, stag_dmabuf_pages_of(fb->dmabuf, 0, 0, &err));
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	KUNIT_EXPECT_NULL(test, stag_dmabuf_pages_of(fb->dmabuf, 1, FAKE_PAGES * PAGE_SIZE, &err));
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	KUNIT_EXPECT_NULL(test, stag_dmabuf_pages_of(fb->dmabuf, U64_MAX, 2, &err));
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(&fb->attaches), 0);

	fb->map_err = -EIO;
	KUNIT_EXPECT_NULL(test, stag_dmabuf_pages_of(fb->dmabuf, 0, PAGE_SIZE, &err));
	KUNIT_EXPECT_EQ(test, err, -EIO);
	fb->map_err = 0;
	fb->misalign = true;
	KUNIT_EXPECT_NULL(test, stag_dmabuf_pages_of(fb->dmabuf, 0, PAGE_SIZE, &err));
	KUNIT_EXPECT_EQ(test, err, -EOPNOTSUPP);
	fb->misalign = false;
	KUNIT_EXPECT_EQ(test, atomic_read(&fb->attaches), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&fb->detaches), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&fb->maps), atomic_read(&fb->unmaps));
	KUNIT_EXPECT_EQ(test, file_count(fb->dmabuf->file), files);

	pages = fake_region(test, fb, 0, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, file_count(fb->dmabuf->file), files + 1);
	fb->map_err = -EIO;
	fake_move(fb);
	KUNIT_EXPECT_EQ(test, stag_odp_fault(pages->odp, 0, 1, true, true), -EFAULT);
	KUNIT_EXPECT_NULL(test, region_page(pages->odp, 0));
	fb->map_err = 0;
	KUNIT_EXPECT_EQ(test, stag_odp_fault(pages->odp, 0, 1, true, true), 0);
	KUNIT_EXPECT_PTR_EQ(test, region_page(pages->odp, 0), fb->pages[1][0]);
}

static struct kunit_case stag_dmabuf_cases[] = {
	KUNIT_CASE(stag_dmabuf_region_follows_moves),
	KUNIT_CASE(stag_dmabuf_move_waits_for_access),
	KUNIT_CASE(stag_dmabuf_moves_race_writes),
	KUNIT_CASE(stag_dmabuf_refusals),
	{}
};

static struct kunit_suite stag_dmabuf_suite = {
	.name = "stag_dmabuf",
	.test_cases = stag_dmabuf_cases,
};

kunit_test_suite(stag_dmabuf_suite);
