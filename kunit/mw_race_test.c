// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: memory windows on a real device, under interleavings a test has
 * to force: a thread that blocks on the TPT's lock while another holds it
 * (and could be draining), a bind against a dealloc of the same window,
 * two binds of one window from two threads.
 *
 * The rule under test: no thread waits for the TPT's lock while it holds
 * a reference to an entry, because the lock's holder may be waiting for
 * that very reference to drain.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "../dev.h"
#include "../mr.h"
#include "../mw.h"
#include "../qp.h"
#include "testdev.h"

#define LW	IB_ACCESS_LOCAL_WRITE
#define RW	IB_ACCESS_REMOTE_WRITE
#define MWB	IB_ACCESS_MW_BIND

/* A DMA region windows may be bound over, and a QP to bind through. */
struct mw_rig {
	struct rig *r;
	struct stag_dev *sdev;
	struct ib_mr *mr;
	struct stag_qp *qp[2];
};

static void destroy_qp_action(void *qp)
{
	ib_destroy_qp(qp);
}

static void dereg_dma_mr_action(void *data)
{
	struct mw_rig *m = data;

	if (m->mr)
		stag_mr_dereg(m->mr, NULL);
}

static struct stag_qp *rig_qp(struct kunit *test, struct rig *r)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ib_qp *qp = ib_create_qp(r->pd, &init);

	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_qp_action, qp), 0);
	return to_stag_qp(qp);
}

static struct mw_rig *mw_rig_create(struct kunit *test, const char *name)
{
	struct mw_rig *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, m);
	m->r = rig_create(test, name);
	m->sdev = to_stag_dev(m->r->ibdev);
	m->mr = stag_mr_get_dma(m->r->pd, LW | MWB);
	KUNIT_ASSERT_FALSE(test, IS_ERR(m->mr));
	/* What the core sets after get_dma_mr. */
	m->mr->device = m->r->ibdev;
	m->mr->pd = m->r->pd;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dereg_dma_mr_action, m), 0);
	m->qp[0] = rig_qp(test, m->r);
	m->qp[1] = rig_qp(test, m->r);
	return m;
}

static struct stag_mw *mw_new(struct kunit *test, struct mw_rig *m, enum ib_mw_type type)
{
	struct stag_mw *mw = kzalloc(sizeof(*mw), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, mw);
	mw->ibmw.device = m->r->ibdev;
	mw->ibmw.pd = m->r->pd;
	mw->ibmw.type = type;
	KUNIT_ASSERT_EQ(test, stag_mw_alloc(&mw->ibmw, NULL), 0);
	return mw;
}

static void mw_free(struct stag_mw *mw)
{
	stag_mw_dealloc(&mw->ibmw);
	kfree(mw);
}

/* A BIND_MW of @mw over the DMA region's first page, with the next key byte. */
static enum ib_wc_status mw_bind(struct mw_rig *m, struct stag_qp *qp, struct stag_mw *mw)
{
	struct stag_swqe *w = kzalloc(sizeof(*w), GFP_KERNEL);
	u32 key = READ_ONCE(mw->ibmw.rkey);
	enum ib_wc_status status;

	if (!w)
		return IB_WC_GENERAL_ERR;
	w->hdr.opcode = IB_WR_BIND_MW;
	w->hdr.wr.bind.addr = 0x1000;
	w->hdr.wr.bind.length = 0x100;
	w->hdr.wr.bind.mw_rkey = key;
	w->hdr.wr.bind.new_rkey = stag_key_make(stag_key_index(key), stag_key_byte(key) + 1);
	w->hdr.wr.bind.mr_lkey = m->mr->lkey;
	w->hdr.wr.bind.access = RW;
	status = stag_mw_bind(qp, w);
	kfree(w);
	return status;
}

/*
 * A bind or a dealloc in a thread of its own. A bind reads the window's
 * key before it blocks on the lock; after that it knows the window by its
 * index only, so a dealloc may free the window meanwhile.
 */
struct job {
	struct mw_rig *m;
	struct stag_mw *mw;
	struct stag_qp *qp;
	bool dealloc;
	int rounds;
	enum ib_wc_status status;
	atomic_t failed;
	struct completion done;
};

static int job_fn(void *data)
{
	struct job *j = data;
	int i;

	if (j->dealloc) {
		mw_free(j->mw);
	} else {
		for (i = 0; i < j->rounds; i++) {
			j->status = mw_bind(j->m, j->qp, j->mw);
			if (j->status != IB_WC_SUCCESS)
				atomic_inc(&j->failed);
		}
	}
	complete(&j->done);
	return 0;
}

static struct job *job_start(struct kunit *test, struct mw_rig *m, struct stag_mw *mw,
			     struct stag_qp *qp, bool dealloc, int rounds)
{
	struct job *j = kunit_kzalloc(test, sizeof(*j), GFP_KERNEL);
	struct task_struct *t;

	KUNIT_ASSERT_NOT_NULL(test, j);
	*j = (struct job) { .m = m, .mw = mw, .qp = qp, .dealloc = dealloc, .rounds = rounds };
	init_completion(&j->done);
	t = kthread_run(job_fn, j, "stag_mw_job");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	return j;
}

/* Until @j is asleep: blocked on the lock the test holds. */
static void wait_blocked(struct kunit *test, struct job *j)
{
	msleep(100);
	KUNIT_EXPECT_FALSE(test, completion_done(&j->done));
}

/*
 * A bind blocked on the TPT's lock holds no reference to the window: the
 * lock's holder could be waiting for the window's accesses to drain.
 */
static void stag_mw_bind_waits_for_lock_unreferenced(struct kunit *test)
{
	struct mw_rig *m = mw_rig_create(test, "stagw0");
	struct stag_mw *mw = mw_new(test, m, IB_MW_TYPE_1);
	struct job *j;

	mutex_lock(&m->sdev->tpt.lock);
	j = job_start(test, m, mw, m->qp[0], false, 1);
	wait_blocked(test, j);
	KUNIT_EXPECT_EQ(test, refcount_read(&mw->entry->ref), 1U);
	KUNIT_EXPECT_EQ(test, refcount_read(&to_stag_mr(m->mr)->entry.ref), 1U);
	mutex_unlock(&m->sdev->tpt.lock);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&j->done, 10 * HZ), 0);
	KUNIT_EXPECT_EQ(test, j->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, atomic_read(&to_stag_mr(m->mr)->entry.windows), 1);
	mw_free(mw);
	KUNIT_EXPECT_EQ(test, atomic_read(&to_stag_mr(m->mr)->entry.windows), 0);
}

/* The same for a dealloc, which must not take its window's reference first. */
static void stag_mw_dealloc_waits_for_lock_unreferenced(struct kunit *test)
{
	struct mw_rig *m = mw_rig_create(test, "stagw1");
	struct stag_mw *mw = mw_new(test, m, IB_MW_TYPE_1);
	struct stag_tpt_entry *e = mw->entry;
	struct job *j;

	KUNIT_ASSERT_EQ(test, mw_bind(m, m->qp[0], mw), IB_WC_SUCCESS);
	mutex_lock(&m->sdev->tpt.lock);
	j = job_start(test, m, mw, NULL, true, 0);
	wait_blocked(test, j);
	KUNIT_EXPECT_EQ(test, refcount_read(&e->ref), 1U);
	mutex_unlock(&m->sdev->tpt.lock);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&j->done, 10 * HZ), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&to_stag_mr(m->mr)->entry.windows), 0);
}

/*
 * A bind queued behind a dealloc of the same window: whichever runs first,
 * the window ends unbound and freed, and the region counts no window (a
 * count left at one makes its dereg EBUSY for ever).
 */
static void stag_mw_bind_racing_dealloc(struct kunit *test)
{
	struct mw_rig *m = mw_rig_create(test, "stagw2");
	struct stag_mw *mw = mw_new(test, m, IB_MW_TYPE_1);
	struct job *d, *b;

	mutex_lock(&m->sdev->tpt.lock);
	d = job_start(test, m, mw, NULL, true, 0);
	wait_blocked(test, d);
	b = job_start(test, m, mw, m->qp[0], false, 1);
	wait_blocked(test, b);
	mutex_unlock(&m->sdev->tpt.lock);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&d->done, 10 * HZ), 0);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&b->done, 10 * HZ), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&to_stag_mr(m->mr)->entry.windows), 0);
	KUNIT_EXPECT_EQ(test, stag_mr_dereg(m->mr, NULL), 0);
	m->mr = NULL;
}

/* Two threads bind one type 1 window through two QPs, over and over. */
static void stag_mw_two_binds_of_one_window(struct kunit *test)
{
	struct mw_rig *m = mw_rig_create(test, "stagw3");
	struct stag_mw *mw = mw_new(test, m, IB_MW_TYPE_1);
	struct job *a, *b;

	a = job_start(test, m, mw, m->qp[0], false, 500);
	b = job_start(test, m, mw, m->qp[1], false, 500);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&a->done, 60 * HZ), 0);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&b->done, 60 * HZ), 0);
	/* The window is named by its index: every bind goes through. */
	KUNIT_EXPECT_EQ(test, atomic_read(&a->failed), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->failed), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&to_stag_mr(m->mr)->entry.windows), 1);
	mw_free(mw);
	KUNIT_EXPECT_EQ(test, atomic_read(&to_stag_mr(m->mr)->entry.windows), 0);
}

static struct kunit_case stag_mw_race_cases[] = {
	KUNIT_CASE(stag_mw_bind_waits_for_lock_unreferenced),
	KUNIT_CASE(stag_mw_dealloc_waits_for_lock_unreferenced),
	KUNIT_CASE(stag_mw_bind_racing_dealloc),
	KUNIT_CASE_SLOW(stag_mw_two_binds_of_one_window),
	{}
};

static struct kunit_suite stag_mw_race_suite = {
	.name = "stag_mw_race",
	.test_cases = stag_mw_race_cases,
};

kunit_test_suite(stag_mw_race_suite);
