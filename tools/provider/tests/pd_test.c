// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pd_test: protection, parent and thread domains (pd.c) against a fake
 * kernel, on the host. The stand-ins below answer ibv_cmd_alloc_pd,
 * ibv_cmd_dealloc_pd and the query-PD ioctl as stag.ko would, and count
 * the deallocations that reached "the kernel". Each case names the
 * behaviour it proves; two threads race parent domains over one PD
 * against its deallocation. Prints one line per failed check and
 * "pd_test: N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "../pd.h"

#define PD_HANDLE	40	/* the first handle the fake kernel gives */
#define PDN		0x77
#define RACE_LOOPS	200000

/*
 * The leak check at exit reads /proc, which the chroots of
 * tools/testing/vm/userspace-chroot have not (nor can ASAN_OPTIONS reach
 * the sanitizer there: it reads the environment from /proc too).
 */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return access("/proc/self/maps", F_OK) ? "detect_leaks=0" : "";
}

/* ---- the fake kernel ---- */

#pragma GCC diagnostic ignored "-Wunused-parameter"

static uint32_t next_handle = PD_HANDLE;
static atomic_int kernel_deallocs;
static int dealloc_ret;		/* what the next deallocations answer */

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd, struct ibv_alloc_pd *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size)
{
	struct stag_alloc_pd_resp *drv = (void *)(resp + 1);

	if (resp_size < sizeof(*resp) + sizeof(*drv))
		abort();
	pd->context = context;
	pd->handle = next_handle++;
	drv->pdn = PDN;
	return 0;
}

int ibv_cmd_dealloc_pd(struct ibv_pd *pd)
{
	if (!dealloc_ret)
		atomic_fetch_add(&kernel_deallocs, 1);
	return dealloc_ret;
}

int stag_query_pd_ioctl(struct ibv_context *ctx, uint32_t pd_handle, uint32_t *pdn)
{
	if (pd_handle != PD_HANDLE)
		return ENOENT;
	*pdn = PDN;
	return 0;
}

/* ---- helpers ---- */

static struct ibv_context ctx, other_ctx;

static struct ibv_pd *parent_new(struct ibv_pd *pd, struct ibv_td *td)
{
	struct ibv_parent_domain_init_attr a = { .pd = pd, .td = td };

	return stag_alloc_parent_domain(&ctx, &a);
}

static void *my_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		      uint64_t resource_type)
{
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void my_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type)
{
}

/* ---- the cases ---- */

static void parent_carries_the_pd_handle(void)
{
	int cookie;
	struct ibv_pd *pd = stag_alloc_pd(&ctx);
	struct ibv_parent_domain_init_attr a = {
		.pd = pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = my_alloc, .free = my_free, .pd_context = &cookie,
	};
	struct ibv_pd *parent = pd ? stag_alloc_parent_domain(&ctx, &a) : NULL;
	int deallocs = atomic_load(&kernel_deallocs);
	struct stag_pd *p;

	if (!parent) {
		check(0, "alloc_pd and alloc_parent_domain: %d", errno);
		return;
	}
	p = to_stag_pd(parent);
	check(parent->handle == pd->handle && parent->context == &ctx && p->pdn == PDN &&
	      p->protection == to_stag_pd(pd) && p->alloc == my_alloc && p->free == my_free &&
	      p->pd_context == &cookie, "the parent domain: handle %u of %u", parent->handle,
	      pd->handle);
	check(stag_pd_is_parent(&ctx, parent) && !stag_pd_is_parent(&ctx, pd) &&
	      !stag_pd_is_parent(&other_ctx, parent) && !stag_pd_is_parent(&ctx, NULL),
	      "stag_pd_is_parent");
	check(stag_dealloc_pd(pd) == EBUSY && atomic_load(&kernel_deallocs) == deallocs,
	      "the PD under a parent domain: EBUSY, the kernel not asked");
	check(!stag_dealloc_pd(parent) && atomic_load(&kernel_deallocs) == deallocs,
	      "the parent domain goes without the kernel");
	check(!stag_dealloc_pd(pd) && atomic_load(&kernel_deallocs) == deallocs + 1,
	      "then the PD goes, through the kernel");
}

static void parent_refuses_bad_attributes(void)
{
	struct ibv_pd *pd = stag_alloc_pd(&ctx), *parent, *p;
	struct ibv_td_init_attr ta = {};
	struct ibv_td *td = stag_alloc_td(&other_ctx, &ta);
	struct ibv_parent_domain_init_attr a = { .pd = pd };
	struct ibv_pd foreign = { .context = &other_ctx, .handle = PD_HANDLE };

	parent = pd ? parent_new(pd, NULL) : NULL;
	if (!parent || !td) {
		check(0, "alloc_pd, alloc_parent_domain, alloc_td: %d", errno);
		return;
	}
	errno = 0;
	check(!stag_alloc_parent_domain(&ctx, NULL) && errno == EINVAL, "no attributes: EINVAL");
	errno = 0;
	check(!parent_new(NULL, NULL) && errno == EINVAL, "no PD: EINVAL");
	errno = 0;
	check(!parent_new(&foreign, NULL) && errno == EINVAL, "another context's PD: EINVAL");
	errno = 0;
	check(!parent_new(parent, NULL) && errno == EINVAL, "a parent domain's parent: EINVAL");
	errno = 0;
	check(!parent_new(pd, td) && errno == EINVAL, "another context's thread domain: EINVAL");
	a.comp_mask = 1u << 2;
	errno = 0;
	p = stag_alloc_parent_domain(&ctx, &a);
	check(!p && errno == EINVAL, "an unknown comp_mask bit: EINVAL");
	check(to_stag_pd(pd)->parents == 1 && atomic_load(&to_stag_td(td)->refs) == 1,
	      "the refusals took no reference: PD %u parents, thread domain %u references",
	      to_stag_pd(pd)->parents, atomic_load(&to_stag_td(td)->refs));
	check(!stag_dealloc_pd(parent) && !stag_dealloc_pd(pd) && !stag_dealloc_td(td),
	      "all of it deallocates");
}

/* The kernel refuses: the PD stays whole and usable, its parents still possible. */
static void dealloc_failure_keeps_the_pd(void)
{
	struct ibv_pd *pd = stag_alloc_pd(&ctx), *parent;

	if (!pd) {
		check(0, "alloc_pd: %d", errno);
		return;
	}
	dealloc_ret = EIO;
	check(stag_dealloc_pd(pd) == EIO, "the kernel's EIO comes back");
	dealloc_ret = 0;
	parent = parent_new(pd, NULL);
	check(parent && parent->handle == pd->handle, "a parent domain after the failure");
	check(parent && !stag_dealloc_pd(parent), "dealloc the parent");
	check(!stag_dealloc_pd(pd), "then the PD");
}

static void thread_domain_outlives_its_parents(void)
{
	struct ibv_td_init_attr ta = {}, bad = { .comp_mask = 1 };
	struct ibv_pd *pd = stag_alloc_pd(&ctx), *p1, *p2;
	struct ibv_td *td = stag_alloc_td(&ctx, &ta);

	errno = 0;
	check(!stag_alloc_td(&ctx, &bad) && errno == EINVAL, "alloc_td with a comp_mask: EINVAL");
	errno = 0;
	check(!stag_alloc_td(&ctx, NULL) && errno == EINVAL, "alloc_td without attributes: EINVAL");
	if (!pd || !td) {
		check(0, "alloc_pd, alloc_td: %d", errno);
		return;
	}
	check(td->context == &ctx, "the thread domain's context");
	p1 = parent_new(pd, td);
	p2 = parent_new(pd, td);
	if (!p1 || !p2) {
		check(0, "two parent domains in a thread domain: %d", errno);
		return;
	}
	check(stag_dealloc_td(td) == EBUSY, "the thread domain under two parents: EBUSY");
	check(!stag_dealloc_pd(p1), "dealloc the first parent");
	check(stag_dealloc_td(td) == EBUSY, "under one: EBUSY");
	check(!stag_dealloc_pd(p2), "dealloc the second");
	check(!stag_dealloc_td(td), "then the thread domain goes");
	check(!stag_dealloc_pd(pd), "and the PD");
}

/* Unimporting cannot fail: a parent domain over the PD keeps its memory until it goes. */
static void unimport_under_a_parent(void)
{
	struct ibv_pd *pd, *parent;
	int deallocs = atomic_load(&kernel_deallocs);

	errno = 0;
	check(!stag_import_pd(&ctx, PD_HANDLE + 1) && errno == ENOENT,
	      "import of a handle of nothing: ENOENT");
	pd = stag_import_pd(&ctx, PD_HANDLE);
	parent = pd ? parent_new(pd, NULL) : NULL;
	if (!parent) {
		check(0, "import_pd and a parent domain over it: %d", errno);
		return;
	}
	check(pd->handle == PD_HANDLE && parent->handle == PD_HANDLE, "the imported handle");
	stag_unimport_pd(pd);
	/* The parent still reads its protection domain here: ASan or valgrind would see. */
	check(to_stag_pd(parent)->protection->pdn == PDN, "the parent's PD after unimport");
	check(!stag_dealloc_pd(parent) && atomic_load(&kernel_deallocs) == deallocs,
	      "the parent goes last, and the kernel's PD is not deallocated");
}

/*
 * Two threads make and free parent domains over one PD while a third
 * keeps trying to deallocate it, which the kernel refuses (EIO): every
 * deallocation that saw no parent reached the kernel, every other one was
 * EBUSY; every parent domain was made (one made during a deallocation
 * waits for the kernel's answer); nothing else happened, and no parent is
 * counted at the end.
 */
struct race {
	struct ibv_pd *pd;
	atomic_bool stop;
	long made, refused, other;
};

static void *race_parents(void *arg)
{
	struct race *r = arg;
	long i;

	for (i = 0; i < RACE_LOOPS; i++) {
		struct ibv_pd *p = parent_new(r->pd, NULL);

		if (!p) {
			if (errno == EINVAL)
				r->refused++;
			else
				r->other++;
			continue;
		}
		r->made++;
		if (p->handle != r->pd->handle || stag_dealloc_pd(p))
			r->other++;
	}
	return NULL;
}

static void *race_dealloc(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop)) {
		int ret = stag_dealloc_pd(r->pd);

		if (ret == EIO)
			r->refused++;
		else if (ret == EBUSY)
			r->made++;
		else
			r->other++;
	}
	return NULL;
}

static void parents_race_the_dealloc(void)
{
	struct race a = { 0 }, b = { 0 }, d = { 0 };
	pthread_t ta, tb, td;
	int deallocs;

	a.pd = stag_alloc_pd(&ctx);
	b.pd = a.pd;
	d.pd = a.pd;
	if (!a.pd) {
		check(0, "alloc_pd: %d", errno);
		return;
	}
	dealloc_ret = EIO;
	if (pthread_create(&td, NULL, race_dealloc, &d) ||
	    pthread_create(&ta, NULL, race_parents, &a) ||
	    pthread_create(&tb, NULL, race_parents, &b)) {
		check(0, "pthread_create");
		exit(1);
	}
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	atomic_store(&d.stop, true);
	pthread_join(td, NULL);
	dealloc_ret = 0;
	printf("# race: parents made %ld; deallocs EIO %ld, EBUSY %ld\n", a.made + b.made,
	       d.refused, d.made);
	check(!a.other && !b.other && !d.other && !a.refused && !b.refused,
	      "no other outcome: %ld %ld in the parents' threads (%ld %ld refused), %ld in the "
	      "dealloc's", a.other, b.other, a.refused, b.refused, d.other);
	check(a.made + b.made == 2 * RACE_LOOPS && d.refused && d.made,
	      "every parent made, deallocations both EIO and EBUSY");
	check(!to_stag_pd(a.pd)->parents, "no parent counted at the end: %u",
	      to_stag_pd(a.pd)->parents);
	deallocs = atomic_load(&kernel_deallocs);
	check(!stag_dealloc_pd(a.pd) && atomic_load(&kernel_deallocs) == deallocs + 1,
	      "then the PD deallocates");
}

int main(void)
{
	parent_carries_the_pd_handle();
	parent_refuses_bad_attributes();
	dealloc_failure_keeps_the_pd();
	thread_domain_outlives_its_parents();
	unimport_under_a_parent();
	parents_race_the_dealloc();

	printf("pd_test: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
