// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for multicast groups (mcast.c) as a kernel consumer meets
 * them: the core's ib_attach_mcast() without uverbs' bookkeeping, so that
 * one QP may attach to a group twice (two LIDs) and stays until as many
 * detaches; the refusals; and threads attaching and detaching while
 * another takes the group's members as a sender does.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <rdma/ib_verbs.h>

#include "../mcast.h"
#include "../qp.h"

#include "testdev.h"

#define RACE_ROUNDS	2000

static void destroy_qp_action(void *qp)
{
	ib_destroy_qp(qp);
}

static struct ib_qp *ud_qp(struct kunit *test, struct rig *r, enum ib_qp_type type)
{
	struct ib_qp_init_attr init = {
		.qp_type = type,
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
	};
	struct ib_qp *qp = ib_create_qp(r->pd, &init);

	KUNIT_ASSERT_FALSE(test, IS_ERR(qp));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_qp_action, qp), 0);
	return qp;
}

/* 239.255.91.@n, IPv4-mapped. */
static union ib_gid group(u8 n)
{
	union ib_gid g = { .raw = { [10] = 0xff, [11] = 0xff, 239, 255, 91, n } };

	return g;
}

/* How many QPs stag_mcast_get() finds in the group, and whether @qp is one. */
static unsigned int members(const union ib_gid *g, struct ib_qp *qp, bool *has)
{
	struct stag_mcast_members *m = stag_mcast_get(g);
	unsigned int i, n;

	*has = false;
	if (!m)
		return 0;
	n = m->n;
	for (i = 0; i < n; i++)
		*has |= &m->m[i].qp->ibqp == qp;
	stag_mcast_put(m);
	return n;
}

static void stag_mcast_attach_counts(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagm0");
	struct ib_qp *a = ud_qp(test, r, IB_QPT_UD), *b = ud_qp(test, r, IB_QPT_UD);
	union ib_gid g = group(1);
	bool has;

	KUNIT_ASSERT_EQ(test, ib_attach_mcast(a, &g, 0), 0);
	KUNIT_ASSERT_EQ(test, ib_attach_mcast(a, &g, 1), 0);
	KUNIT_ASSERT_EQ(test, ib_attach_mcast(b, &g, 0), 0);
	KUNIT_EXPECT_EQ(test, members(&g, a, &has), 2U);
	KUNIT_EXPECT_TRUE(test, has);
	/* Attached twice, it stays after one detach. */
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(a, &g, 1), 0);
	KUNIT_EXPECT_EQ(test, members(&g, a, &has), 2U);
	KUNIT_EXPECT_TRUE(test, has);
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(a, &g, 0), 0);
	KUNIT_EXPECT_EQ(test, members(&g, a, &has), 1U);
	KUNIT_EXPECT_FALSE(test, has);
	KUNIT_EXPECT_EQ(test, stag_mcast_detach(a, &g, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(b, &g, 0), 0);
	KUNIT_EXPECT_EQ(test, members(&g, b, &has), 0U);
	KUNIT_EXPECT_NULL(test, stag_mcast_get(&g));
}

static void stag_mcast_refusals(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagm1");
	struct ib_qp *rc = ud_qp(test, r, IB_QPT_RC), *ud = ud_qp(test, r, IB_QPT_UD);
	struct ib_qp *qp[STAG_MAX_MCAST_QP_ATTACH];
	union ib_gid g = group(2), unicast = r->gid->gid;
	unsigned int i;
	bool has;

	/* The driver's own checks, which ib_attach_mcast() makes first too. */
	KUNIT_EXPECT_EQ(test, stag_mcast_attach(rc, &g, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, stag_mcast_attach(ud, &unicast, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, stag_mcast_detach(ud, &g, 0), -EINVAL);
	for (i = 0; i < STAG_MAX_MCAST_QP_ATTACH; i++) {
		qp[i] = ud_qp(test, r, IB_QPT_UD);
		KUNIT_ASSERT_EQ(test, ib_attach_mcast(qp[i], &g, 0), 0);
	}
	KUNIT_EXPECT_EQ(test, ib_attach_mcast(ud, &g, 0), -ENOMEM);
	KUNIT_EXPECT_EQ(test, members(&g, ud, &has), STAG_MAX_MCAST_QP_ATTACH);
	KUNIT_EXPECT_FALSE(test, has);
	/* The core refuses to destroy an attached QP. */
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp[0]), -EBUSY);
	for (i = 0; i < STAG_MAX_MCAST_QP_ATTACH; i++)
		KUNIT_EXPECT_EQ(test, ib_detach_mcast(qp[i], &g, 0), 0);
	KUNIT_EXPECT_NULL(test, stag_mcast_get(&g));
}

struct churn {
	struct ib_qp *qp;
	union ib_gid g;
	int failed;
	struct completion done;
};

static int churn_fn(void *data)
{
	struct churn *c = data;
	int i;

	for (i = 0; i < RACE_ROUNDS; i++) {
		if (ib_attach_mcast(c->qp, &c->g, 0) || ib_detach_mcast(c->qp, &c->g, 0))
			c->failed++;
	}
	complete(&c->done);
	return 0;
}

/*
 * Two threads attach and detach a QP each while this one takes the
 * group's members as a sender does: every array it gets holds only those
 * QPs, at most both, each once; afterwards the group is gone.
 */
static void stag_mcast_attach_race(struct kunit *test)
{
	struct rig *r = rig_create(test, "stagm2");
	struct churn c[2];
	union ib_gid g = group(3);
	struct stag_mcast_members *m;
	unsigned int i, seen = 0, bad = 0;
	struct task_struct *t;

	for (i = 0; i < 2; i++) {
		c[i] = (struct churn) { .qp = ud_qp(test, r, IB_QPT_UD), .g = g };
		init_completion(&c[i].done);
	}
	for (i = 0; i < 2; i++) {
		t = kthread_run(churn_fn, &c[i], "stag_mcast_%u", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	while (!completion_done(&c[0].done) || !completion_done(&c[1].done)) {
		m = stag_mcast_get(&g);
		if (!m) {
			cond_resched();
			continue;
		}
		seen++;
		if (m->n < 1 || m->n > 2 || (m->n == 2 && m->m[0].qp == m->m[1].qp))
			bad++;
		for (i = 0; i < m->n; i++)
			bad += &m->m[i].qp->ibqp != c[0].qp && &m->m[i].qp->ibqp != c[1].qp;
		stag_mcast_put(m);
	}
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&c[0].done, 60 * HZ), 0);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&c[1].done, 60 * HZ), 0);
	KUNIT_EXPECT_EQ(test, c[0].failed, 0);
	KUNIT_EXPECT_EQ(test, c[1].failed, 0);
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_GT(test, seen, 0U);
	KUNIT_EXPECT_NULL(test, stag_mcast_get(&g));
}

static struct kunit_case stag_mcast_cases[] = {
	KUNIT_CASE(stag_mcast_attach_counts),
	KUNIT_CASE(stag_mcast_refusals),
	KUNIT_CASE_SLOW(stag_mcast_attach_race),
	{}
};

static struct kunit_suite stag_mcast_suite = {
	.name = "stag_mcast",
	.test_cases = stag_mcast_cases,
};

kunit_test_suites(&stag_mcast_suite);
