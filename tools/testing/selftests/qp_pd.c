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
 * The case's helpers make their objects in the global pd: a case points
 * it at its parent domain, and back before the parent domain goes (which
 * it may while its objects live: stag's keep no pointer to it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qp.h"

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

const struct qp_case pd_cases[] = {
	{ "parent domain: QP, extended CQ, SRQ and regions made in it move data with the PD's",
	  parent_traffic },
	{ "parent domain: EBUSY under it, EINVAL for another context's, a parent's parent, masks",
	  parent_refusals },
	{ "parent domain: two threads make and free them while a third deallocates their PD",
	  parent_race },
	{ NULL }
};
