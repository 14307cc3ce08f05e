// SPDX-License-Identifier: GPL-2.0
/*
 * Parent domains (ibv_alloc_parent_domain) and thread domains
 * (ibv_alloc_td). A parent domain is the provider's: the kernel sees only
 * the PD whose handle it carries, so what is made in one is in that PD,
 * and a QP of the plain PD may use its regions. Each case checks data
 * byte for byte with the guards around it, the exact errno of every
 * refusal (another context's PD, a parent's parent, an unknown mask, a
 * PD or thread domain still under a parent: EBUSY), and threads making
 * parent domains while another deallocates their PD.
 *
 * A parent domain's allocators give the rings their memory: every ring
 * of a CQ, QP, SRQ and WQ made in one, their resizes, the frees, VmPin,
 * RLIMIT_MEMLOCK, what the allocator may give that the kernel refuses,
 * and memory a hand-written command names.
 *
 * The case's helpers make their objects in the global pd: a case points
 * it at its parent domain, and back before the parent domain goes (which
 * it may while its objects live, unless their rings hold its
 * allocator's memory).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/stag-abi.h>

#include "qp.h"
#include "stagdv.h"

#define LEN		3000
#define SEED		57
#define RACE_LOOPS	20000

/* A parent domain over @over, in @td if set; skips where the device has none. */
static struct ibv_pd *parent_new(struct ibv_pd *over, struct ibv_td *td)
{
	struct ibv_parent_domain_init_attr a = { .pd = over, .td = td };
	struct ibv_pd *p = ibv_alloc_parent_domain(ctx, &a);

	if (!p && errno == EOPNOTSUPP && !is_stag())
		case_skip("the device has no parent domains");
	else if (!p)
		t_fail("ibv_alloc_parent_domain: %s", strerror(errno));
	return p;
}

/* An extended CQ naming @parent (IBV_CQ_INIT_ATTR_MASK_PD), released with the case. */
static struct ibv_cq *cq_in(struct ibv_pd *parent)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 2 * DEPTH, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = parent,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);

	if (!cq) {
		t_fail("ibv_create_cq_ex in the parent domain: %s", strerror(errno));
		return NULL;
	}
	track(K_CQ, ibv_cq_ex_to_cq(cq), 0);
	return ibv_cq_ex_to_cq(cq);
}

/*
 * A QP, its extended CQ, an SRQ and two regions made in a parent domain;
 * its peer in the plain PD. Two SENDs through the SRQ and a WRITE into the
 * parent domain's region land byte for byte; the peer's SEND takes its
 * data from a region made in the parent domain: one PD to the kernel.
 */
static void parent_traffic(void)
{
	struct ibv_pd *prot = pd, *parent = parent_new(pd, NULL);
	struct buf *dst = NULL, *src = NULL, *psrc = NULL;
	struct end *a = NULL, *b = NULL;
	struct ibv_send_wr wr;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_sge s;
	int i;

	if (!parent)
		return;
	pd = parent;
	cq = cq_in(parent);
	srq = srq_new(DEPTH);
	dst = buf_new(2 * LEN, LW | RW);
	psrc = buf_new(LEN, LW);
	if (cq && srq)
		a = end_on(IBV_QPT_RC, cq, cq, srq, true);
	pd = prot;
	src = buf_new(LEN, LW);
	b = end_new(IBV_QPT_RC, NULL, true);
	if (!a || !b || !dst || !src || !psrc || !pair_connect_default(a, b))
		goto out;
	t_check(a->qp->pd == parent && dst->mr->pd == parent && srq->pd == parent,
		"the objects name the parent domain: QP %p, region %p, SRQ %p, parent %p",
		(void *)a->qp->pd, (void *)dst->mr->pd, (void *)srq->pd, (void *)parent);
	for (i = 0; i < 2; i++) {
		struct ibv_recv_wr rwr = { .wr_id = 10 + i, .num_sge = 1 }, *rbad;

		s = sge_of(dst, i * LEN, LEN);
		rwr.sg_list = &s;
		if (ibv_post_srq_recv(srq, &rwr, &rbad)) {
			t_fail("ibv_post_srq_recv");
			goto out;
		}
	}
	/* b's SEND from its own region, then one from the parent domain's region. */
	fill(src->data, LEN, SEED);
	s = sge_of(src, 0, LEN);
	wr = wr_send(1, &s, 1);
	if (post(b, &wr) || !expect_wc(b->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "SEND 1") ||
	    !expect_wc(cq, 10, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receive 1 from the SRQ"))
		goto out;
	fill(psrc->data, LEN, SEED + 1);
	s = sge_of(psrc, 0, LEN);
	wr = wr_send(2, &s, 1);
	if (post(b, &wr) ||
	    !expect_wc(b->scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND, NULL,
		       "SEND 2 from the parent domain's region, on a QP of the plain PD") ||
	    !expect_wc(cq, 11, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receive 2 from the SRQ"))
		goto out;
	{
		uint8_t want[2 * LEN];

		fill(want, LEN, SEED);
		fill(want + LEN, LEN, SEED + 1);
		expect_bytes(dst->data, want, 2 * LEN, "the parent domain's region after 2 SENDs");
		expect_guards(dst, "the parent domain's region");
	}
	/* a's WRITE from the parent domain's region into b's. */
	fill(psrc->data, LEN, SEED + 2);
	s = sge_of(psrc, 0, LEN);
	dst = buf_new(LEN, LW | RW);
	if (!dst)
		goto out;
	wr = wr_rdma(3, IBV_WR_RDMA_WRITE, &s, 1, dst, 0);
	if (!post(a, &wr) && expect_wc(cq, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL,
				       "WRITE from the parent domain's QP"))
		expect_data(dst, SEED + 2, "the plain PD's region after the WRITE");
	expect_guards(psrc, "the parent domain's source region");
out:
	pd = prot;
	t_check(!ibv_dealloc_pd(parent), "ibv_dealloc_pd of the parent domain, its objects alive");
}

/*
 * What a parent or thread domain is refused, with nothing made: the PD
 * and the thread domain under a parent (EBUSY, still whole after), a
 * parent's parent, another context's PD or thread domain, an unknown
 * mask bit, a thread domain with a mask, an extended CQ naming a plain
 * PD or another context's parent domain (EINVAL).
 */
static void parent_refusals(void)
{
	struct ibv_td_init_attr ta = { 0 }, tbad = { .comp_mask = 1 };
	struct ibv_context *other = ibv_open_device(ctx->device);
	struct ibv_pd *parent = NULL, *opd = NULL, *oparent = NULL, *p;
	struct ibv_parent_domain_init_attr a = { .pd = pd };
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4, .wc_flags = IBV_WC_STANDARD_FLAGS, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_td *td = NULL, *otd = NULL, *t;
	struct ibv_cq_ex *cq;
	int ret;

	if (!other) {
		t_fail("a second context: %s", strerror(errno));
		return;
	}
	td = ibv_alloc_td(ctx, &ta);
	if (!td && errno == EOPNOTSUPP && !is_stag()) {
		case_skip("the device has no thread domains");
		goto out;
	}
	opd = ibv_alloc_pd(other);
	otd = ibv_alloc_td(other, &ta);
	if (!td || !opd || !otd) {
		t_fail("ibv_alloc_td, ibv_alloc_pd, ibv_alloc_td of the second context: %s",
		       strerror(errno));
		goto out;
	}
	parent = parent_new(pd, td);
	if (!parent)
		goto out;
	a.pd = opd;
	oparent = ibv_alloc_parent_domain(other, &a);
	a.pd = pd;
	if (!oparent) {
		t_fail("a parent domain of the second context: %s", strerror(errno));
		goto out;
	}

	ret = ibv_dealloc_pd(pd);
	t_check(ret == EBUSY, "ibv_dealloc_pd of the PD under a parent domain: %s", strerror(ret));
	ret = ibv_dealloc_td(td);
	t_check(ret == EBUSY, "ibv_dealloc_td of the thread domain under a parent domain: %s",
		strerror(ret));

	a.pd = parent;
	errno = 0;
	p = ibv_alloc_parent_domain(ctx, &a);
	t_check(!p && errno == EINVAL, "a parent domain's parent: %p, %s", (void *)p,
		strerror(errno));
	a.pd = opd;
	errno = 0;
	p = ibv_alloc_parent_domain(ctx, &a);
	t_check(!p && errno == EINVAL, "a parent over another context's PD: %p, %s", (void *)p,
		strerror(errno));
	a.pd = pd;
	a.td = otd;
	errno = 0;
	p = ibv_alloc_parent_domain(ctx, &a);
	t_check(!p && errno == EINVAL, "a parent in another context's thread domain: %p, %s",
		(void *)p, strerror(errno));
	a.td = NULL;
	a.comp_mask = 1u << 2;
	errno = 0;
	p = ibv_alloc_parent_domain(ctx, &a);
	t_check(!p && errno == EINVAL, "a parent with an unknown comp_mask bit: %p, %s",
		(void *)p, strerror(errno));
	errno = 0;
	t = ibv_alloc_td(ctx, &tbad);
	t_check(!t && errno == EINVAL, "a thread domain with a comp_mask: %p, %s", (void *)t,
		strerror(errno));

	ca.parent_domain = pd;
	errno = 0;
	cq = ibv_create_cq_ex(ctx, &ca);
	t_check(!cq && errno == EINVAL, "an extended CQ naming a plain PD: %p, %s", (void *)cq,
		strerror(errno));
	ca.parent_domain = oparent;
	errno = 0;
	cq = ibv_create_cq_ex(ctx, &ca);
	t_check(!cq && errno == EINVAL, "an extended CQ naming another context's parent: %p, %s",
		(void *)cq, strerror(errno));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));

	/* Refused, and still whole: a region registers in the PD through the parent. */
	{
		struct ibv_pd *prot = pd;
		struct buf *b;

		pd = parent;
		b = buf_new(64, LW | RW);
		pd = prot;
		t_check(b && b->mr->lkey, "a region in the parent domain after the refusals");
	}
out:
	if (parent)
		t_check(!ibv_dealloc_pd(parent), "ibv_dealloc_pd of the parent domain");
	if (td) {
		ret = ibv_dealloc_td(td);
		t_check(!ret, "then ibv_dealloc_td: %s", strerror(ret));
	}
	if (oparent)
		ibv_dealloc_pd(oparent);
	if (otd)
		ibv_dealloc_td(otd);
	if (opd)
		ibv_dealloc_pd(opd);
	ibv_close_device(other);
}

/*
 * Two threads make and free parent domains over one PD while a third
 * keeps deallocating it: the PD has a region, so whenever the provider
 * let a deallocation through (no parent at that moment) the kernel
 * refused it EBUSY too. Every deallocation is EBUSY, every parent domain
 * is made (one made during a deallocation waits for the kernel's answer),
 * and afterwards a parent domain still registers into the PD.
 */
struct race {
	atomic_bool stop;
	long made, refused, other;
};

static void *race_parents(void *arg)
{
	struct race *r = arg;
	struct ibv_parent_domain_init_attr a = { .pd = pd };
	long i;

	for (i = 0; i < RACE_LOOPS; i++) {
		struct ibv_pd *p = ibv_alloc_parent_domain(ctx, &a);

		if (!p) {
			if (errno == EINVAL)
				r->refused++;
			else
				r->other++;
			continue;
		}
		r->made++;
		if (p->handle != pd->handle || ibv_dealloc_pd(p))
			r->other++;
	}
	return NULL;
}

static void *race_dealloc(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop)) {
		if (ibv_dealloc_pd(pd) == EBUSY)
			r->made++;
		else
			r->other++;
	}
	return NULL;
}

static void parent_race(void)
{
	struct race r1 = { 0 }, r2 = { 0 }, d = { 0 };
	struct buf *keep = buf_new(64, LW);
	struct ibv_pd *prot = pd, *parent;
	pthread_t t1, t2, td;
	struct buf *b;

	if (!keep)
		return;
	parent = parent_new(pd, NULL);
	if (!parent)
		return;
	t_check(!ibv_dealloc_pd(parent), "a first parent domain comes and goes");
	if (pthread_create(&td, NULL, race_dealloc, &d)) {
		t_fail("pthread_create");
		return;
	}
	if (pthread_create(&t1, NULL, race_parents, &r1) ||
	    pthread_create(&t2, NULL, race_parents, &r2)) {
		t_fail("pthread_create");
		exit(1);
	}
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	atomic_store(&d.stop, true);
	pthread_join(td, NULL);
	printf("# parent domains made %ld; deallocations of their PD EBUSY %ld\n",
	       r1.made + r2.made, d.made);
	t_check(!r1.other && !r2.other && !r1.refused && !r2.refused && !d.other,
		"no outcome but made and EBUSY: %ld, %ld (%ld, %ld EINVAL); %ld", r1.other,
		r2.other, r1.refused, r2.refused, d.other);
	t_check(r1.made + r2.made == 2 * RACE_LOOPS && d.made > 0,
		"every parent domain made, the PD's deallocation tried");
	parent = parent_new(pd, NULL);
	if (!parent)
		return;
	pd = parent;
	b = buf_new(64, LW | RW);
	pd = prot;
	t_check(b && b->mr->pd == parent, "a region through a parent domain after the race");
	t_check(!ibv_dealloc_pd(parent), "and the parent domain goes");
}

/* ---- ring memory from a parent domain's allocators ---- */

#define MAX_RINGS	(RESIZE_LOOPS + 16)
#define NOBODY		65534
#define RESIZE_LOOPS	100

/* Page aligned, and below mmap_min_addr: nothing is ever mapped there. */
#define UNMAPPED	((void *)0x4000)

/* What the test's allocator gives: each a way the provider or the kernel must take. */
enum give { GIVE_MEM, GIVE_DEFAULT, GIVE_NONE, GIVE_MISALIGNED, GIVE_READONLY, GIVE_UNMAPPED };

/* Every allocation and free the provider asks for, checked against each other. */
struct ring_log {
	enum give give;
	pthread_mutex_t lock;	/* a resize in one thread, a create in another */
	int nalloc, nfree, bad_free;
	struct ring {
		void *p;
		size_t size, align;
		uint64_t type;
		struct ibv_pd *pd;
		enum give give;
		bool freed;
	} r[MAX_RINGS];
};

static void *ring_alloc(struct ibv_pd *p, void *context, size_t size, size_t align,
			uint64_t type)
{
	struct ring_log *log = context;
	struct ring *r;
	void *mem = NULL;

	if (log->give == GIVE_DEFAULT)
		return IBV_ALLOCATOR_USE_DEFAULT;
	pthread_mutex_lock(&log->lock);
	if (log->nalloc == MAX_RINGS)
		goto out;
	switch (log->give) {
	case GIVE_MEM:
	case GIVE_MISALIGNED:
		mem = mmap(NULL, size + align, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			mem = NULL;
		else if (log->give == GIVE_MISALIGNED)
			mem = (uint8_t *)mem + 64;
		else
			memset(mem, 0x5a, size);
		break;
	case GIVE_READONLY:
		mem = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			mem = NULL;
		break;
	case GIVE_UNMAPPED:
		mem = UNMAPPED;
		break;
	default:
		break;
	}
	r = &log->r[log->nalloc++];
	*r = (struct ring){ .p = mem, .size = size, .align = align, .type = type, .pd = p,
			    .give = log->give };
out:
	pthread_mutex_unlock(&log->lock);
	return mem;
}

/* Unmaps what the allocator mapped, unless the case has unmapped it itself. */
static void ring_unmap(struct ring *r)
{
	if (r->give == GIVE_MEM || r->give == GIVE_READONLY)
		munmap(r->p, r->size + (r->give == GIVE_MEM ? r->align : 0));
	else if (r->give == GIVE_MISALIGNED)
		munmap((uint8_t *)r->p - 64, r->size + r->align);
}

static void ring_free(struct ibv_pd *p, void *context, void *ptr, uint64_t type)
{
	struct ring_log *log = context;
	int i;

	pthread_mutex_lock(&log->lock);
	for (i = 0; i < log->nalloc; i++) {
		struct ring *r = &log->r[i];

		/* Every UNMAPPED piece has the one address: the type tells them apart. */
		if (r->p != ptr || r->freed || r->type != type || r->pd != p)
			continue;
		r->freed = true;
		log->nfree++;
		ring_unmap(r);
		pthread_mutex_unlock(&log->lock);
		return;
	}
	log->bad_free++;
	pthread_mutex_unlock(&log->lock);
}

/* The parent domain over the case's PD whose allocators log into @log. */
static struct ibv_pd *parent_alloc(struct ring_log *log)
{
	struct ibv_parent_domain_init_attr a = {
		.pd = pd, .alloc = ring_alloc, .free = ring_free, .pd_context = log,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
	};
	struct ibv_pd *p;

	pthread_mutex_init(&log->lock, NULL);
	p = ibv_alloc_parent_domain(ctx, &a);
	if (!p && errno == EOPNOTSUPP && !is_stag())
		case_skip("the device has no parent domains");
	else if (!p)
		t_fail("ibv_alloc_parent_domain with allocators: %s", strerror(errno));
	return p;
}

static size_t page_up(uint64_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (n + page - 1) & ~(page - 1);
}

/* The bytes the allocator is asked for: the kernel's ring, rounded to pages. */
static size_t cq_bytes(int cqe)
{
	return page_up(stag_ring_bytes(stag_ring_slots(cqe + 1), sizeof(struct stag_cqe)));
}

static size_t recv_bytes(int max_wr, int max_sge)
{
	return page_up(stag_ring_bytes(stag_ring_slots(max_wr), stag_recv_slot_size(max_sge)));
}

static size_t send_bytes(void)
{
	return page_up(stag_ring_bytes(stag_ring_slots(DEPTH),
				       stag_send_slot_size(MAX_SGE, MAX_INLINE)));
}

/* Allocation @i of @log was for @type and @size, page aligned, asked by @parent. */
static bool expect_ring(const struct ring_log *log, int i, uint64_t type, size_t size,
			struct ibv_pd *parent, const char *what)
{
	const struct ring *r = &log->r[i];

	if (i >= log->nalloc) {
		t_fail("%s: no allocation %d (%d made)", what, i, log->nalloc);
		return false;
	}
	t_check(r->type == type && r->size == size && r->pd == parent &&
		r->align == (size_t)sysconf(_SC_PAGESIZE),
		"%s: type %#llx size %zu alignment %zu pd %p, expected %#llx %zu %ld %p", what,
		(unsigned long long)r->type, r->size, r->align, (void *)r->pd,
		(unsigned long long)type, size, sysconf(_SC_PAGESIZE), (void *)parent);
	return true;
}

/* An extended CQ of @cqe in @parent, not released with the case: the case destroys it. */
static struct ibv_cq *cq_own(struct ibv_pd *parent, int cqe)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = cqe, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = parent,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);

	return cq ? ibv_cq_ex_to_cq(cq) : NULL;
}

static struct ibv_srq *srq_own(struct ibv_pd *in, int max_wr)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = max_wr, .max_sge = MAX_SGE } };

	return ibv_create_srq(in, &a);
}

static void destroy_end(struct end *e, const char *what)
{
	int ret;

	if (!e)
		return;
	untrack(e->qp);
	ret = ibv_destroy_qp(e->qp);
	t_check(!ret, "ibv_destroy_qp of %s: %s", what, strerror(ret));
}

/* The rings' memory, zero wherever the allocator had left 0x5a: the kernel's fresh ring. */
static bool all_zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	return len && !b[0] && !memcmp(b, b + 1, len - 1);
}

/* Everything the allocator gave (not NULL) was freed, once, with its type. */
static void expect_all_freed(const struct ring_log *log, const char *what)
{
	int i, given = 0, freed = 0;

	for (i = 0; i < log->nalloc; i++) {
		given += !!log->r[i].p;
		freed += log->r[i].p && log->r[i].freed;
	}
	t_check(freed == given && log->nfree == given && !log->bad_free,
		"%s: %d of %d pieces given freed, %d frees, %d wrong", what, freed, given,
		log->nfree, log->bad_free);
}

/* One SEND from @from into @to's posted receive of @dst, completing on @cq. */
static bool send_one(struct end *from, struct end *to, struct ibv_srq *srq, struct ibv_cq *cq,
		     struct buf *src, struct buf *dst, unsigned int seed, const char *what)
{
	struct ibv_sge s = sge_of(dst, 0, LEN), d;
	struct ibv_send_wr wr;

	fill(src->data, LEN, seed);
	if (srq ? post_srq(srq, seed, &s) : post_recv(to, seed, &s, 1)) {
		t_fail("%s: posting the receive", what);
		return false;
	}
	d = sge_of(src, 0, LEN);
	wr = wr_send(seed, &d, 1);
	if (post(from, &wr) ||
	    !expect_wc(from->scq, seed, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, what) ||
	    !expect_wc(cq, seed, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, what))
		return false;
	expect_data(dst, seed, what);
	expect_guards(dst, what);
	return true;
}

/*
 * Every ring of the CQ, the QPs, the SRQ and the WQ made in a parent domain
 * with allocators lies in memory they gave: one request per ring, of the
 * kernel's geometry rounded to pages, page aligned; the kernel zeroes it,
 * pins it (VmPin grows by exactly the rings' bytes) and moves messages
 * through it; the parent domain is EBUSY while rings hold its memory; a
 * resized CQ and SRQ move to new memory from it and give the old back;
 * each piece is freed once, with its type, when its object goes, and VmPin
 * is back where it was.
 */
static void parent_rings(void)
{
	static struct ring_log log;
	struct ibv_pd *prot = pd, *parent;
	struct end *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	struct buf *src = NULL, *dst = NULL, *sdst = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_wq *wq = NULL;
	struct stagdv_ring sq, rq;
	struct ibv_srq_attr sa = { .max_wr = 2 * DEPTH };
	long pin0, want;
	int i, ret;

	memset(&log, 0, sizeof(log));
	src = buf_new(LEN, LW);
	dst = buf_new(LEN, LW | RW);
	sdst = buf_new(LEN, LW);
	b = end_new(IBV_QPT_RC, NULL, true);
	d = end_new(IBV_QPT_RC, NULL, true);
	parent = parent_alloc(&log);
	if (!parent || !src || !dst || !sdst || !b || !d)
		return;
	pin0 = vmpin_kb();
	cq = cq_own(parent, 2 * DEPTH);
	srq = cq ? srq_own(parent, DEPTH) : NULL;
	pd = parent;
	if (srq) {
		a = end_on(IBV_QPT_RC, cq, cq, NULL, true);
		c = end_on(IBV_QPT_RC, cq, cq, srq, true);
	}
	pd = prot;
	if (!cq || !srq || !a || !c) {
		t_fail("objects in the parent domain: CQ %p SRQ %p QPs %p %p: %s", (void *)cq,
		       (void *)srq, (void *)a, (void *)c, strerror(errno));
		goto out;
	}
	t_check(log.nalloc == 5, "%d allocations for a CQ, an SRQ, a QP and a QP on the SRQ, "
		"expected 5", log.nalloc);
	expect_ring(&log, 0, STAGDV_RES_TYPE_CQ, cq_bytes(2 * DEPTH), parent, "the CQ's ring");
	expect_ring(&log, 1, STAGDV_RES_TYPE_SRQ, recv_bytes(DEPTH, MAX_SGE), parent,
		    "the SRQ's ring");
	expect_ring(&log, 2, STAGDV_RES_TYPE_SQ, send_bytes(), parent, "a's send ring");
	expect_ring(&log, 3, STAGDV_RES_TYPE_RQ, recv_bytes(DEPTH, MAX_SGE), parent,
		    "a's receive ring");
	expect_ring(&log, 4, STAGDV_RES_TYPE_SQ, send_bytes(), parent, "c's send ring");
	for (i = 0, want = 0; i < log.nalloc; i++) {
		t_check(all_zero(log.r[i].p, log.r[i].size), "ring %d's memory zeroed", i);
		want += log.r[i].size / 1024;
	}
	t_check(vmpin_kb() - pin0 == want, "VmPin grew by %ld kB with the rings, expected %ld kB",
		vmpin_kb() - pin0, want);
	ret = stagdv_qp_rings(a->qp, &sq, &rq);
	t_check(!ret && sq.ctl == log.r[2].p && rq.ctl == log.r[3].p,
		"a's rings at %p and %p, the allocator's %p and %p", sq.ctl, rq.ctl, log.r[2].p,
		log.r[3].p);
	ret = stagdv_qp_rings(c->qp, &sq, &rq);
	t_check(!ret && sq.ctl == log.r[4].p && !rq.ctl, "c's send ring at %p, the allocator's %p",
		sq.ctl, log.r[4].p);
	ret = ibv_dealloc_pd(parent);
	t_check(ret == EBUSY, "ibv_dealloc_pd of the parent domain, its memory in rings: %s",
		strerror(ret));

	if (!pair_connect_default(a, b) || !pair_connect_default(c, d))
		goto out;
	if (!send_one(b, a, NULL, cq, src, dst, SEED, "a SEND into a's receive ring") ||
	    !send_one(d, c, srq, cq, src, sdst, SEED + 1, "a SEND into the SRQ's ring"))
		goto out;
	t_check(((struct stag_queue_ctl *)log.r[0].p)->prod == 2 &&
		((struct stag_queue_ctl *)log.r[1].p)->prod == 1,
		"the allocator's memory holds the rings' indices: CQ prod %u, SRQ prod %u",
		((struct stag_queue_ctl *)log.r[0].p)->prod,
		((struct stag_queue_ctl *)log.r[1].p)->prod);

	/* Resized, each moves to new memory and gives the old back. */
	ret = ibv_resize_cq(cq, 4 * DEPTH);
	t_check(!ret, "ibv_resize_cq: %s", strerror(ret));
	ret = ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
	t_check(!ret, "ibv_modify_srq(IBV_SRQ_MAX_WR): %s", strerror(ret));
	if (log.nalloc != 7) {
		t_fail("%d allocations after the resizes, expected 7", log.nalloc);
		goto out;
	}
	expect_ring(&log, 5, STAGDV_RES_TYPE_CQ, cq_bytes(4 * DEPTH), parent, "the resized CQ");
	expect_ring(&log, 6, STAGDV_RES_TYPE_SRQ, recv_bytes(2 * DEPTH, MAX_SGE), parent,
		    "the resized SRQ");
	t_check(log.r[0].freed && log.r[1].freed && log.nfree == 2 && !log.bad_free,
		"the old rings' memory freed: CQ %d SRQ %d, %d frees, %d wrong", log.r[0].freed,
		log.r[1].freed, log.nfree, log.bad_free);
	want += (long)(log.r[5].size + log.r[6].size - log.r[0].size - log.r[1].size) / 1024;
	t_check(vmpin_kb() - pin0 == want, "VmPin grew by %ld kB after the resizes, expected %ld",
		vmpin_kb() - pin0, want);
	if (!send_one(b, a, NULL, cq, src, dst, SEED + 2, "a SEND after the CQ's resize") ||
	    !send_one(d, c, srq, cq, src, sdst, SEED + 3, "a SEND after the SRQ's resize"))
		goto out;
	t_check(((struct stag_queue_ctl *)log.r[5].p)->prod == 2,
		"the resized CQ's memory holds its prod: %u",
		((struct stag_queue_ctl *)log.r[5].p)->prod);

	/* A receive WQ's ring, from the same allocator. */
	{
		struct ibv_wq_init_attr wa = {
			.wq_type = IBV_WQT_RQ, .max_wr = DEPTH, .max_sge = 1, .pd = parent,
			.cq = cq,
		};
		struct stagdv_ring wr;

		wq = ibv_create_wq(ctx, &wa);
		t_check(wq, "ibv_create_wq in the parent domain: %s", strerror(errno));
		if (wq) {
			expect_ring(&log, 7, STAGDV_RES_TYPE_WQ, recv_bytes(DEPTH, 1), parent,
				    "the WQ's ring");
			ret = stagdv_wq_ring(wq, &wr);
			t_check(!ret && wr.ctl == log.r[7].p,
				"the WQ's ring at %p, the allocator's %p", wr.ctl, log.r[7].p);
			ret = ibv_destroy_wq(wq);
			t_check(!ret && log.r[7].freed, "ibv_destroy_wq: %s, its memory freed %d",
				strerror(ret), log.r[7].freed);
		}
	}
out:
	destroy_end(a, "a");
	destroy_end(c, "c");
	ret = srq ? ibv_destroy_srq(srq) : 0;
	t_check(!ret, "ibv_destroy_srq: %s", strerror(ret));
	ret = cq ? ibv_destroy_cq(cq) : 0;
	t_check(!ret, "ibv_destroy_cq: %s", strerror(ret));
	expect_all_freed(&log, "with the objects gone");
	t_check(vmpin_kb() == pin0, "VmPin %ld kB with the objects gone, expected %ld kB",
		vmpin_kb(), pin0);
	ret = ibv_dealloc_pd(parent);
	t_check(!ret, "ibv_dealloc_pd of the parent domain after: %s", strerror(ret));
}

/*
 * What the allocator gives that is not a ring: NULL (ENOMEM), memory not
 * page aligned (EINVAL), read-only or unmapped memory (EFAULT), for a CQ,
 * a QP's two rings and an SRQ; each refused with nothing pinned, whatever
 * was given freed, and the parent domain free to go. IBV_ALLOCATOR_USE_
 * DEFAULT leaves the rings the kernel's: they work, nothing is freed,
 * and the parent domain holds nothing.
 */
static void parent_bad_rings(void)
{
	static const struct {
		enum give give;
		int err;
		const char *what;
	} rows[] = {
		{ GIVE_NONE, ENOMEM, "NULL" },
		{ GIVE_MISALIGNED, EINVAL, "memory 64 bytes past a page" },
		{ GIVE_READONLY, EFAULT, "read-only memory" },
		{ GIVE_UNMAPPED, EFAULT, "unmapped memory" },
	};
	static struct ring_log log;
	struct ibv_pd *prot = pd, *parent;
	struct ibv_cq *cq, *pcq = cq_new();
	struct buf *src = buf_new(LEN, LW), *dst = buf_new(LEN, LW | RW);
	struct ibv_qp_init_attr qa = {
		.send_cq = pcq, .recv_cq = pcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct end *a, *b;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct stagdv_ring sq, rq;
	int ret, n_given;
	long pin0;
	size_t i;

	memset(&log, 0, sizeof(log));
	parent = parent_alloc(&log);
	if (!parent || !pcq || !src || !dst)
		return;
	pin0 = vmpin_kb();
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		int n0 = log.nalloc;

		log.give = rows[i].give;
		errno = 0;
		cq = cq_own(parent, DEPTH);
		t_check(!cq && errno == rows[i].err, "a CQ's ring in %s: %p, %s (expected %s)",
			rows[i].what, (void *)cq, strerror(errno), strerror(rows[i].err));
		errno = 0;
		qp = ibv_create_qp(parent, &qa);
		t_check(!qp && errno == rows[i].err, "a QP's rings in %s: %p, %s (expected %s)",
			rows[i].what, (void *)qp, strerror(errno), strerror(rows[i].err));
		errno = 0;
		srq = srq_own(parent, DEPTH);
		t_check(!srq && errno == rows[i].err, "an SRQ's ring in %s: %p, %s (expected %s)",
			rows[i].what, (void *)srq, strerror(errno), strerror(rows[i].err));
		if (cq)
			ibv_destroy_cq(cq);
		if (qp)
			ibv_destroy_qp(qp);
		if (srq)
			ibv_destroy_srq(srq);
		/* NULL stops the QP at its send ring; the others reach the kernel with both. */
		t_check(log.nalloc - n0 == (rows[i].give == GIVE_NONE ? 3 : 4),
			"%s: %d allocations asked for", rows[i].what, log.nalloc - n0);
		expect_all_freed(&log, rows[i].what);
		t_check(vmpin_kb() == pin0, "%s: VmPin %ld kB, expected %ld", rows[i].what,
			vmpin_kb(), pin0);
	}

	n_given = log.nalloc;
	/* IBV_ALLOCATOR_USE_DEFAULT: the kernel's rings, which move data. */
	log.give = GIVE_DEFAULT;
	pd = parent;
	a = end_on(IBV_QPT_RC, pcq, pcq, NULL, true);
	pd = prot;
	b = end_new(IBV_QPT_RC, NULL, true);
	if (!a || !b || !pair_connect_default(a, b))
		goto out;
	ret = stagdv_qp_rings(a->qp, &sq, &rq);
	t_check(!ret && sq.ctl && rq.ctl, "the kernel's rings mapped: %s", strerror(ret));
	send_one(b, a, NULL, pcq, src, dst, SEED, "a SEND into a ring of the kernel's");
	/* The parent domain holds nothing for rings that are the kernel's. */
	ret = ibv_dealloc_pd(parent);
	t_check(!ret, "ibv_dealloc_pd of the parent domain under the QP: %s", strerror(ret));
	parent = NULL;
	destroy_end(a, "a");
	t_check(log.nalloc == n_given, "%d allocations logged with IBV_ALLOCATOR_USE_DEFAULT",
		log.nalloc - n_given);
out:
	expect_all_freed(&log, "IBV_ALLOCATOR_USE_DEFAULT");
	ret = parent ? ibv_dealloc_pd(parent) : 0;
	t_check(!ret, "ibv_dealloc_pd of the parent domain: %s", strerror(ret));
}

/*
 * As uid nobody under an RLIMIT_MEMLOCK of 0, ring memory from an
 * allocator is pinned memory like a region's: the create fails ENOMEM,
 * the memory is freed and VmPin stays 0; with the kernel's rings the same
 * CQ is made. In a child, which says what failed in its exit status.
 */
static int memlock_child(void)
{
	static struct ring_log log;
	struct rlimit rl = { 0, 0 };
	struct ibv_pd *parent;
	struct ibv_cq *cq;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) || setgid(NOBODY) ||
	    setuid(NOBODY))
		return 10;
	ctx = open_dev(dev_name);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	memset(&log, 0, sizeof(log));
	parent = pd ? parent_alloc(&log) : NULL;
	if (!parent)
		return 11;
	errno = 0;
	cq = cq_own(parent, 4 * DEPTH);
	if (cq)
		return 12;
	if (errno != ENOMEM)
		return 13;
	if (log.nalloc != 1 || log.nfree != 1 || vmpin_kb())
		return 14;
	log.give = GIVE_DEFAULT;
	cq = cq_own(parent, 4 * DEPTH);
	if (!cq || ibv_destroy_cq(cq))
		return 15;
	return ibv_dealloc_pd(parent) ? 16 : 0;
}

static void parent_memlock(void)
{
	static const char * const why[] = {
		[10] = "setrlimit or dropping to nobody failed",
		[11] = "no parent domain as nobody",
		[12] = "the CQ was made past RLIMIT_MEMLOCK",
		[13] = "the CQ failed with another errno than ENOMEM",
		[14] = "the memory was not freed once, or VmPin is not 0",
		[15] = "no CQ with the kernel's ring",
		[16] = "the parent domain did not go",
	};
	int status = 0, code;
	pid_t pid;

	if (!is_stag()) {
		case_skip("stag's ring memory");
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		t_fail("fork: %s", strerror(errno));
		return;
	}
	if (!pid)
		_exit(memlock_child());
	if (waitpid(pid, &status, 0) != pid) {
		t_fail("waitpid: %s", strerror(errno));
		return;
	}
	code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	t_check(!code, "the child as nobody: status %#x: %s", status,
		code >= 10 && code <= 16 ? why[code] : "killed");
}

/*
 * A parent domain whose allocators log into @log, a CQ and an RC QP (a)
 * made in it, and a peer (b) of the plain PD connected to a; VmPin before
 * the rings, for ring_pair_end() to compare with.
 */
struct ring_pair {
	struct ring_log *log;
	struct ibv_pd *parent;
	struct ibv_cq *cq;
	struct end *a, *b;
	long pin0;
};

static bool ring_pair_new(struct ring_pair *rp, struct ring_log *log)
{
	struct ibv_pd *prot = pd;

	memset(log, 0, sizeof(*log));
	memset(rp, 0, sizeof(*rp));
	rp->log = log;
	rp->b = end_new(IBV_QPT_RC, NULL, true);
	rp->parent = rp->b ? parent_alloc(log) : NULL;
	if (!rp->parent)
		return false;
	rp->pin0 = vmpin_kb();
	rp->cq = cq_own(rp->parent, 2 * DEPTH);
	pd = rp->parent;
	rp->a = rp->cq ? end_on(IBV_QPT_RC, rp->cq, rp->cq, NULL, true) : NULL;
	pd = prot;
	return rp->a && pair_connect_default(rp->a, rp->b);
}

/* Destroys a and the CQ: every piece freed once, VmPin back, the parent domain gone. */
static void ring_pair_end(struct ring_pair *rp, const char *what)
{
	int ret;

	if (!rp->parent)
		return;
	destroy_end(rp->a, "a");
	ret = rp->cq ? ibv_destroy_cq(rp->cq) : 0;
	t_check(!ret, "ibv_destroy_cq: %s", strerror(ret));
	expect_all_freed(rp->log, what);
	t_check(vmpin_kb() == rp->pin0, "%s: VmPin %ld kB with the objects gone, expected %ld kB",
		what, vmpin_kb(), rp->pin0);
	ret = ibv_dealloc_pd(rp->parent);
	t_check(!ret, "ibv_dealloc_pd of the parent domain: %s", strerror(ret));
}

struct resize_race {
	struct ibv_cq *cq;
	atomic_bool stop;
	int resized, failed;
};

static void *resize_loop(void *arg)
{
	struct resize_race *r = arg;
	int i;

	for (i = 0; i < RESIZE_LOOPS && !atomic_load(&r->stop); i++) {
		if (ibv_resize_cq(r->cq, i % 2 ? 2 * DEPTH : 4 * DEPTH))
			r->failed++;
		else
			r->resized++;
	}
	return NULL;
}

/*
 * One thread resizes a CQ in a parent domain's memory back and forth while
 * another moves SENDs whose receives complete on it: every completion
 * comes, in order, and every ring given is freed once. Then the process
 * unmaps the CQ ring's memory under the live CQ, as a hostile one may:
 * the kernel's pins hold the pages, a message still lands without a
 * fault, and destroying the objects lets every pin go.
 */
static void parent_resize_race(void)
{
	static struct ring_log log;
	struct buf *src = buf_new(LEN, LW), *dst = buf_new(LEN, LW | RW);
	struct resize_race r = { 0 };
	struct ring_pair rp = { 0 };
	struct ring *ring;
	pthread_t t;
	int i;

	if (!src || !dst || !ring_pair_new(&rp, &log))
		goto out;
	r.cq = rp.cq;
	if (pthread_create(&t, NULL, resize_loop, &r)) {
		t_fail("pthread_create");
		goto out;
	}
	for (i = 0; i < RESIZE_LOOPS; i++)
		if (!send_one(rp.b, rp.a, NULL, rp.cq, src, dst, SEED + i,
			      "a SEND while the CQ is resized"))
			break;
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	printf("# %d resizes during %d SENDs\n", r.resized, i);
	t_check(i == RESIZE_LOOPS && r.resized > 0 && !r.failed,
		"%d SENDs of %d, %d resizes, %d failed", i, RESIZE_LOOPS, r.resized, r.failed);
	t_check(log.nfree == log.nalloc - 3 && !log.bad_free,
		"every replaced CQ ring freed: %d frees of %d pieces (3 live), %d wrong", log.nfree,
		log.nalloc, log.bad_free);

	/* The live CQ's memory unmapped by the process: the pins keep it for the kernel. */
	pthread_mutex_lock(&log.lock);
	for (ring = NULL, i = 0; i < log.nalloc; i++)
		if (log.r[i].type == STAGDV_RES_TYPE_CQ && !log.r[i].freed)
			ring = &log.r[i];
	if (ring) {
		munmap(ring->p, ring->size + ring->align);
		ring->give = GIVE_UNMAPPED;
	}
	pthread_mutex_unlock(&log.lock);
	t_check(ring, "a live CQ ring in the log");
	{
		struct ibv_sge s = sge_of(dst, 0, LEN), d = sge_of(src, 0, LEN);
		struct ibv_send_wr wr = wr_send(7, &d, 1);

		fill(src->data, LEN, SEED - 1);
		if (!post_recv(rp.a, 7, &s, 1) && !post(rp.b, &wr) &&
		    expect_wc(rp.b->scq, 7, IBV_WC_SUCCESS, IBV_WC_SEND, NULL,
			      "a SEND whose receive completes into unmapped ring memory"))
			expect_data(dst, SEED - 1, "the receive under the unmapped CQ ring");
		expect_guards(dst, "the receive under the unmapped CQ ring");
	}
out:
	ring_pair_end(&rp, "after the race");
}

/*
 * A child forked after a QP and CQ took their rings from an allocator
 * fills every byte of its copy of them with 0xff: the kernel's pins keep
 * the parent's pages the parent's (fork copies a pinned page for the
 * child), so the parent's receive, send and completion rings work on as
 * before, and nothing of the child's reaches them.
 */
static void parent_rings_fork(void)
{
	static struct ring_log log;
	struct buf *src = buf_new(LEN, LW), *dst = buf_new(LEN, LW | RW);
	struct ring_pair rp = { 0 };
	struct ibv_send_wr wr;
	struct ibv_sge s;
	int i, status = 0;
	pid_t pid;

	if (!src || !dst || !ring_pair_new(&rp, &log))
		goto out;
	t_check(log.nalloc == 3, "%d allocations for a CQ and a QP, expected 3", log.nalloc);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		t_fail("fork: %s", strerror(errno));
		goto out;
	}
	if (!pid) {
		for (i = 0; i < log.nalloc; i++)
			memset(log.r[i].p, 0xff, log.r[i].size);
		_exit(0);
	}
	t_check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status),
		"the child that filled its copy of the rings: status %#x", status);
	for (i = 0; i < log.nalloc; i++)
		t_check(!((struct stag_queue_ctl *)log.r[i].p)->reserved0[0],
			"ring %d's control block in the parent untouched by the child", i);
	if (!send_one(rp.b, rp.a, NULL, rp.cq, src, dst, SEED,
		      "a SEND into a's rings after the fork"))
		goto out;
	/* a's send ring and its CQ: a WRITE into the peer's region. */
	fill(src->data, LEN, SEED + 1);
	s = sge_of(src, 0, LEN);
	wr = wr_rdma(2, IBV_WR_RDMA_WRITE, &s, 1, dst, 0);
	if (!post(rp.a, &wr) && expect_wc(rp.cq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL,
					  "a WRITE from a's send ring after the fork"))
		expect_data(dst, SEED + 1, "the WRITE's data");
	expect_guards(dst, "after the fork");
out:
	ring_pair_end(&rp, "after the fork");
}

/*
 * create_cq written to the uverbs file by hand, as a process that skips
 * the provider may, naming ring memory the kernel must refuse: not page
 * aligned or shorter than the ring (EINVAL), unmapped or read-only
 * (EFAULT), in the kernel's half of the address space (EINVAL), too short
 * for the tag matching slots its flags ask (EINVAL), a flag or reserved
 * word it does not know, and a tail longer than the module knows with a
 * byte set past it (EOPNOTSUPP). Nothing is made and nothing stays
 * pinned.
 */
static void ring_cmd_hostile(void)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_cq core;
		struct stag_create_cq_cmd drv;
		uint64_t more;
	} cmd = {};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct stag_create_cq_resp drv;
	} resp;
	size_t need = cq_bytes(DEPTH), page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *mem = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *ro = mmap(NULL, need, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	const struct {
		uint64_t addr, len;
		uint32_t flags, reserved;
		uint64_t more;
		int err;
		const char *what;
	} rows[] = {
		{ (uintptr_t)mem + 8, need, 0, 0, 0, EINVAL, "8 bytes past a page" },
		{ (uintptr_t)mem, need - page, 0, 0, 0, EINVAL, "a page short of the ring" },
		{ (uintptr_t)UNMAPPED, need, 0, 0, 0, EFAULT, "unmapped memory" },
		{ (uintptr_t)ro, need, 0, 0, 0, EFAULT, "read-only memory" },
		{ 0xffff888000000000ULL, need, 0, 0, 0, EINVAL, "a kernel address" },
		{ (uintptr_t)mem, need, 0, 0, 1, EOPNOTSUPP, "a byte set past the tail" },
		/* Tag matching slots are 80 bytes: memory for 48-byte ones is short. */
		{ (uintptr_t)mem, need, STAG_CQ_TM_INFO, 0, 0, EINVAL,
		  "memory for plain slots, tag matching ones asked" },
		{ (uintptr_t)mem, need, 1U << 1, 0, 0, EOPNOTSUPP, "an unknown driver flag" },
		{ (uintptr_t)mem, need, 0, 1, 0, EOPNOTSUPP, "the tail's reserved word set" },
	};
	long pin0 = vmpin_kb();
	size_t i;
	ssize_t n;

	if (!is_stag()) {
		case_skip("stag's ring memory");
		return;
	}
	if (mem == MAP_FAILED || ro == MAP_FAILED) {
		t_fail("mmap: %s", strerror(errno));
		return;
	}
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		cmd.hdr.command = IB_USER_VERBS_CMD_CREATE_CQ;
		cmd.hdr.in_words = sizeof(cmd) / 4;
		cmd.hdr.out_words = sizeof(resp) / 4;
		cmd.core.response = (uintptr_t)&resp;
		cmd.core.cqe = DEPTH;
		cmd.core.comp_channel = -1;
		cmd.drv.ring.addr = rows[i].addr;
		cmd.drv.ring.len = rows[i].len;
		cmd.drv.flags = rows[i].flags;
		cmd.drv.reserved = rows[i].reserved;
		cmd.more = rows[i].more;
		n = write(ctx->cmd_fd, &cmd, sizeof(cmd));
		t_check(n < 0 && errno == rows[i].err, "ring memory %s: %zd (%s), expected %s",
			rows[i].what, n, n < 0 ? strerror(errno) : "a CQ made",
			strerror(rows[i].err));
		t_check(vmpin_kb() == pin0, "%s: VmPin %ld kB, expected %ld kB", rows[i].what,
			vmpin_kb(), pin0);
	}
	munmap(mem, need);
	munmap(ro, need);
}

/*
 * Ring memory a hand-written create_qp names where the QP has no such
 * ring: receive-ring memory for a QP on an SRQ, and a hash configuration
 * for a QP that is not an RSS QP. Both EINVAL; nothing is made and
 * nothing stays pinned. The same command without either makes a QP.
 */
static void ring_cmd_hostile_qp(void)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_qp core;
		struct stag_create_qp_cmd drv;
	} cmd;
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct stag_create_qp_resp drv;
	} resp;
	size_t need = recv_bytes(DEPTH, MAX_SGE);
	uint8_t *mem = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_cq *cq = cq_new();
	struct ibv_srq *srq = srq_new(DEPTH);
	long pin0 = vmpin_kb();
	ssize_t n;
	int i;

	if (!is_stag()) {
		case_skip("stag's ring memory");
		return;
	}
	if (mem == MAP_FAILED || !cq || !srq) {
		t_fail("mmap, CQ or SRQ: %s", strerror(errno));
		return;
	}
	for (i = 0; i < 3; i++) {
		memset(&cmd, 0, sizeof(cmd));
		cmd.hdr.command = IB_USER_VERBS_CMD_CREATE_QP;
		cmd.hdr.in_words = sizeof(cmd) / 4;
		cmd.hdr.out_words = sizeof(resp) / 4;
		cmd.core.response = (uintptr_t)&resp;
		cmd.core.pd_handle = pd->handle;
		cmd.core.send_cq_handle = cq->handle;
		cmd.core.recv_cq_handle = cq->handle;
		cmd.core.max_send_wr = DEPTH;
		cmd.core.max_send_sge = 1;
		cmd.core.qp_type = IBV_QPT_RC;
		if (i == 0) {
			cmd.core.srq_handle = srq->handle;
			cmd.core.is_srq = 1;
			cmd.drv.rq.addr = (uintptr_t)mem;
			cmd.drv.rq.len = need;
		} else {
			cmd.core.max_recv_wr = DEPTH;
			cmd.core.max_recv_sge = MAX_SGE;
			cmd.drv.rx_hash_fields_mask = i == 1 ? STAG_RX_HASH_SRC_IPV4 : 0;
		}
		n = write(ctx->cmd_fd, &cmd, sizeof(cmd));
		if (i == 2) {
			struct {
				struct ib_uverbs_cmd_hdr hdr;
				struct ib_uverbs_destroy_qp core;
			} d = { 0 };
			struct ib_uverbs_destroy_qp_resp dr;

			d.hdr.command = IB_USER_VERBS_CMD_DESTROY_QP;
			d.hdr.in_words = sizeof(d) / 4;
			d.hdr.out_words = sizeof(dr) / 4;
			t_check(n == sizeof(cmd), "the command without either: %zd (%s)", n,
				n < 0 ? strerror(errno) : "short");
			d.core.response = (uintptr_t)&dr;
			d.core.qp_handle = resp.core.qp_handle;
			t_check(n != sizeof(cmd) || write(ctx->cmd_fd, &d, sizeof(d)) == sizeof(d),
				"destroying it: %s", strerror(errno));
			break;
		}
		t_check(n < 0 && errno == EINVAL, "%s: %zd (%s), expected EINVAL",
			i ? "a hash on a QP without a table" : "receive memory for an SRQ's QP",
			n, n < 0 ? strerror(errno) : "a QP made");
		t_check(vmpin_kb() == pin0, "VmPin %ld kB, expected %ld kB", vmpin_kb(), pin0);
	}
	munmap(mem, need);
}

const struct qp_case pd_cases[] = {
	{ "parent domain: QP, extended CQ, SRQ and regions made in it move data with the PD's",
	  parent_traffic },
	{ "parent domain: EBUSY under it, EINVAL for another context's, a parent's parent, masks",
	  parent_refusals },
	{ "parent domain: two threads make and free them while a third deallocates their PD",
	  parent_race },
	{ "parent domain allocators: every ring in their memory, pinned, resized, freed once",
	  parent_rings },
	{ "parent domain allocators: NULL, unaligned, read-only, unmapped memory refused; default",
	  parent_bad_rings },
	{ "parent domain allocators: ring memory past RLIMIT_MEMLOCK as nobody: ENOMEM",
	  parent_memlock },
	{ "parent domain allocators: a CQ resized while SENDs complete on it; its memory unmapped",
	  parent_resize_race },
	{ "parent domain allocators: a forked child fills its copy of the rings; the parent's work",
	  parent_rings_fork },
	{ "ring memory a hand-written create_cq names: unaligned, short, unmapped, read-only",
	  ring_cmd_hostile },
	{ "ring memory a hand-written create_qp names for rings it has not: EINVAL",
	  ring_cmd_hostile_qp },
	{ NULL }
};
