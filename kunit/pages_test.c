// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: page lists. Runs, translation of every byte of a region through
 * the gate, and the memory a list costs.
 */

#include <kunit/test.h>
#include <linux/sizes.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "../gate.h"
#include "../pages.h"
#include "../tpt.h"

/* The gate's view of an access by a QP of PD @p. */
#define WHO(p) (&(struct stag_gate_who){ .pd = (p) })

static void pages_release(void *data)
{
	stag_pages_put(data);
}

static void free_page_action(void *data)
{
	__free_page(data);
}

static struct stag_pages *test_pages(struct kunit *test, const u64 *runs, u32 nruns)
{
	struct stag_pages *pages;
	int err;

	pages = stag_pages_from_runs(runs, nruns, &err);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pages_release, pages), 0);
	return pages;
}

static void stag_pages_run_encoding(struct kunit *test)
{
	u64 run = stag_run_make(0x123456789UL, STAG_RUN_MAX_PAGES);

	KUNIT_EXPECT_EQ(test, stag_run_pfn(run), 0x123456789UL);
	KUNIT_EXPECT_EQ(test, stag_run_len(run), STAG_RUN_MAX_PAGES);
	KUNIT_EXPECT_EQ(test, stag_run_len(stag_run_make(7, 1)), 1UL);
}

/* Index -> pfn over many runs of varied lengths, across the marks. */
static void stag_pages_lookup_across_marks(struct kunit *test)
{
	enum { NRUNS = 300 };
	u64 *runs = kunit_kcalloc(test, NRUNS, sizeof(u64), GFP_KERNEL);
	struct stag_pages *pages;
	u64 pgidx = 0;
	u32 i, k;

	KUNIT_ASSERT_NOT_NULL(test, runs);
	/* Run i: pfn 1000 * (i + 1), length 1 + i % 5. */
	for (i = 0; i < NRUNS; i++)
		runs[i] = stag_run_make(1000 * (i + 1), 1 + i % 5);
	pages = test_pages(test, runs, NRUNS);
	KUNIT_EXPECT_EQ(test, pages->nruns, (u32)NRUNS);

	for (i = 0; i < NRUNS; i++) {
		for (k = 0; k < 1 + i % 5; k++, pgidx++)
			KUNIT_ASSERT_EQ(test, page_to_pfn(stag_pages_page(pages, pgidx)),
					1000UL * (i + 1) + k);
	}
	KUNIT_EXPECT_EQ(test, pages->npages, pgidx);
}

/*
 * The seed's example: VA 0x141200, 10000 bytes, on 4 KiB pages, spans 3
 * pages and starts 0x200 into the first. Every byte must translate to its
 * page and offset, and the byte after the last must not translate.
 */
static void stag_pages_seed_example_every_byte(struct kunit *test)
{
	const u64 va = 0x141200, len = 10000;
	struct stag_tpt *tpt = kunit_kzalloc(test, sizeof(*tpt), GFP_KERNEL);
	struct stag_tpt_entry *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	struct ib_pd *pd = kunit_kzalloc(test, sizeof(*pd), GFP_KERNEL);
	struct page *pg[3];
	struct stag_gate_ref ref;
	u64 runs[3], b;
	int i;

	if (PAGE_SIZE != 4096)
		kunit_skip(test, "the example is for 4 KiB pages");
	KUNIT_ASSERT_NOT_NULL(test, tpt);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_ASSERT_NOT_NULL(test, pd);
	for (i = 0; i < 3; i++) {
		pg[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pg[i]);
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, free_page_action, pg[i]), 0);
		runs[i] = stag_run_make(page_to_pfn(pg[i]), 1);
	}

	stag_tpt_init(tpt, 16);
	stag_tpt_entry_init(e, STAG_TPT_MR, NULL);
	e->pd = pd;
	e->iova = va;
	e->length = len;
	e->pages_offset = offset_in_page(va);
	e->pages = test_pages(test, runs, 3);
	KUNIT_ASSERT_EQ(test, e->pages->npages, 3ULL);
	KUNIT_ASSERT_EQ(test, e->pages_offset, 0x200ULL);
	KUNIT_ASSERT_EQ(test, stag_tpt_add(tpt, e), 0);
	stag_tpt_set_state(e, STAG_TPT_VALID);

	for (b = 0; b < len; b++) {
		u64 want = 0x200 + b;

		KUNIT_ASSERT_EQ(test, stag_gate_enter(tpt, e->key, WHO(pd), 0, va + b, 1, &ref), 0);
		KUNIT_ASSERT_EQ(test, ref.offset, want);
		KUNIT_ASSERT_PTR_EQ(test, stag_pages_page(e->pages, ref.offset >> PAGE_SHIFT),
				    pg[want / 4096]);
		KUNIT_ASSERT_EQ(test, offset_in_page(ref.offset), (unsigned long)(want % 4096));
		stag_gate_exit(&ref);
	}
	KUNIT_EXPECT_EQ(test, stag_gate_enter(tpt, e->key, WHO(pd), 0, va + len, 1, &ref), -ERANGE);
	KUNIT_EXPECT_EQ(test, stag_gate_enter(tpt, e->key, WHO(pd), 0, va - 1, 1, &ref), -ERANGE);
	stag_tpt_remove(tpt, e);
	stag_tpt_uninit(tpt);
}

/*
 * Memory per page: a fragmented list costs about a pointer per page; a
 * contiguous one a word per STAG_RUN_MAX_PAGES pages.
 */
static void stag_pages_cost_per_page(struct kunit *test)
{
	enum { N = 4096 };
	u64 *runs = kunit_kcalloc(test, N, sizeof(u64), GFP_KERNEL);
	struct stag_pages *frag, *contig;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, runs);
	for (i = 0; i < N; i++)
		runs[i] = stag_run_make(2 * i + 10, 1);
	frag = test_pages(test, runs, N);
	runs[0] = stag_run_make(10, STAG_RUN_MAX_PAGES);
	contig = test_pages(test, runs, 1);

	kunit_info(test, "fragmented: %zu bytes for %llu pages; contiguous: %zu bytes for %llu pages\n",
		   stag_pages_size(frag), frag->npages, stag_pages_size(contig), contig->npages);
	KUNIT_EXPECT_LE(test, stag_pages_size(frag), N * (sizeof(u64) + 1) + 128);
	KUNIT_EXPECT_LE(test, stag_pages_size(contig), (size_t)128);
}

/*
 * Real user memory: pin 2 pages + 100 bytes at page offset 0x200 (three
 * pages), check the charge, read every byte through the page list,
 * write through it and see the write from userspace, then release.
 */
static void stag_pages_pin_user_round_trip(struct kunit *test)
{
	const u64 len = 2 * PAGE_SIZE + 100;
	struct stag_pages *pages;
	unsigned long base;
	u8 *pattern, *last, byte;
	s64 pinned0;
	u64 b;
	int err;

	base = kunit_vm_mmap(test, NULL, 0, 4 * PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(base));
	KUNIT_ASSERT_NE(test, base, 0UL);
	pattern = kunit_kmalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pattern);
	for (b = 0; b < len; b++)
		pattern[b] = b * 7 + 3;
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)(base + 0x200), pattern, len), 0UL);

	pinned0 = atomic64_read(&current->mm->pinned_vm);
	pages = stag_pages_pin_user(base + 0x200, len, true, &err);
	KUNIT_ASSERT_NOT_NULL_MSG(test, pages, "err %d", err);
	KUNIT_EXPECT_EQ(test, pages->npages, 3ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm) - pinned0, 3LL);

	for (b = 0; b < len; b++) {
		u64 off = 0x200 + b;
		u8 *va = kmap_local_page(stag_pages_page(pages, off >> PAGE_SHIFT));

		byte = va[offset_in_page(off)];
		kunmap_local(va);
		KUNIT_ASSERT_EQ_MSG(test, byte, pattern[b], "byte %llu", b);
	}

	/* The last byte, written through the pinned page, is what the user sees. */
	last = kmap_local_page(stag_pages_page(pages, (0x200 + len - 1) >> PAGE_SHIFT));
	last[offset_in_page(0x200 + len - 1)] = 0xa5;
	kunmap_local(last);
	KUNIT_EXPECT_EQ(test, copy_from_user(&byte, (void __user *)(base + 0x200 + len - 1), 1),
			0UL);
	KUNIT_EXPECT_EQ(test, byte, 0xa5);

	stag_pages_put(pages);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm), pinned0);
}

/* Bad ranges pin and charge nothing. */
static void stag_pages_pin_user_bad_ranges(struct kunit *test)
{
	unsigned long base;
	s64 pinned0;
	int err;

	base = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(base));
	pinned0 = atomic64_read(&current->mm->pinned_vm);

	KUNIT_EXPECT_NULL(test, stag_pages_pin_user(base, 0, false, &err));
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	KUNIT_EXPECT_NULL(test, stag_pages_pin_user(U64_MAX - 10, 100, false, &err));
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	/* The mapped page, then one that is not mapped. */
	KUNIT_EXPECT_NULL(test, stag_pages_pin_user(base, 2 * PAGE_SIZE, false, &err));
	KUNIT_EXPECT_EQ(test, err, -EFAULT);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm), pinned0);
}

/*
 * A registration of about a terabyte (2^28 pages) over memory that is not
 * mapped: it fails with EFAULT at the first unmapped page, having
 * allocated only for what it pinned (a buffer for all its pages would be
 * 2 GiB, which kvmalloc refuses with a warning), and leaves nothing
 * pinned or charged.
 */
static void stag_pages_pin_user_huge_unmapped(struct kunit *test)
{
	struct stag_pages *pages;
	unsigned long base;
	u64 len = 1ULL << 40;
	s64 pinned0;
	int err;

	/* Low, so that a terabyte above it is free address space. */
	base = kunit_vm_mmap(test, NULL, SZ_4G, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE | MAP_FIXED_NOREPLACE, 0);
	KUNIT_ASSERT_EQ(test, base, (unsigned long)SZ_4G);
	/* UML's address space is smaller than a terabyte: as much as fits. */
	if (len > TASK_SIZE - base)
		len = round_down(TASK_SIZE - base, PAGE_SIZE);
	KUNIT_ASSERT_GT(test, len >> PAGE_SHIFT, 1ULL << 26);
	pinned0 = atomic64_read(&current->mm->pinned_vm);

	pages = stag_pages_pin_user(base, len, true, &err);
	KUNIT_EXPECT_NULL(test, pages);
	KUNIT_EXPECT_EQ(test, err, -EFAULT);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm), pinned0);
}

static struct kunit_case stag_pages_cases[] = {
	KUNIT_CASE(stag_pages_run_encoding),
	KUNIT_CASE(stag_pages_lookup_across_marks),
	KUNIT_CASE(stag_pages_seed_example_every_byte),
	KUNIT_CASE(stag_pages_cost_per_page),
	KUNIT_CASE(stag_pages_pin_user_round_trip),
	KUNIT_CASE(stag_pages_pin_user_bad_ranges),
	KUNIT_CASE(stag_pages_pin_user_huge_unmapped),
	{}
};

static struct kunit_suite stag_pages_suite = {
	.name = "stag_pages",
	.test_cases = stag_pages_cases,
};

kunit_test_suite(stag_pages_suite);
