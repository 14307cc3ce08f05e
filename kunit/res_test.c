// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: object limits (res.c). A device holds at most its limit of each
 * kind, the one past is -EINVAL and leaves the count alone, kinds are
 * counted apart, a rereg's replacement may go one over, and two threads
 * racing for the last ones get exactly the limit between them.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/kthread.h>

#include "../ah.h"
#include "../cq.h"
#include "../mr.h"
#include "../mw.h"
#include "../pd.h"
#include "../qp.h"
#include "../res.h"
#include "../srq.h"

static struct stag_res *res_new(struct kunit *test, u32 max)
{
	struct stag_res *res = kunit_kzalloc(test, sizeof(*res), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, res);
	stag_res_init(res);
	for (i = 0; i < STAG_NR_RES; i++)
		res->max[i] = max;
	return res;
}

static void stag_res_defaults_are_the_maxima(struct kunit *test)
{
	struct stag_res *res = kunit_kzalloc(test, sizeof(*res), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, res);
	stag_res_init(res);
	KUNIT_EXPECT_EQ(test, res->max[STAG_RES_PD], STAG_MAX_PD);
	KUNIT_EXPECT_EQ(test, res->max[STAG_RES_CQ], STAG_MAX_CQ);
	KUNIT_EXPECT_EQ(test, res->max[STAG_RES_QP], STAG_MAX_QP);
	KUNIT_EXPECT_EQ(test, res->max[STAG_RES_SRQ], STAG_MAX_SRQ);
	KUNIT_EXPECT_EQ(test, res->max[STAG_RES_MR], STAG_MAX_MR);
	KUNIT_EXPECT_EQ(test, res->max[STAG_RES_MW], STAG_MAX_MW);
	KUNIT_EXPECT_EQ(test, res->max[STAG_RES_AH], STAG_MAX_AH);
	KUNIT_EXPECT_EQ(test, atomic_read(&res->count[STAG_RES_QP]), 0);
}

static void stag_res_the_one_past_is_einval(struct kunit *test)
{
	struct stag_res *res = res_new(test, 3);
	int i;

	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_CQ), 0);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_CQ), -EINVAL);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_CQ), -EINVAL);
	/* A refusal leaves the count as it was. */
	KUNIT_EXPECT_EQ(test, atomic_read(&res->count[STAG_RES_CQ]), 3);
	stag_res_uncharge(res, STAG_RES_CQ);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_CQ), 0);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_CQ), -EINVAL);
}

static void stag_res_kinds_apart(struct kunit *test)
{
	struct stag_res *res = res_new(test, 1);

	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_PD), 0);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_PD), -EINVAL);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_MR), 0);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_MW), 0);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_MR), -EINVAL);
}

/* A rereg at the limit: the new region goes one over until the old one goes. */
static void stag_res_replacement_goes_one_over(struct kunit *test)
{
	struct stag_res *res = res_new(test, 2);

	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_MR), 0);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_MR), 0);
	stag_res_charge_over(res, STAG_RES_MR);
	KUNIT_EXPECT_EQ(test, atomic_read(&res->count[STAG_RES_MR]), 3);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_MR), -EINVAL);
	stag_res_uncharge(res, STAG_RES_MR);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_MR), -EINVAL);
	stag_res_uncharge(res, STAG_RES_MR);
	KUNIT_EXPECT_EQ(test, stag_res_charge(res, STAG_RES_MR), 0);
}

#define RACE_MAX	20000

struct racer {
	struct stag_res *res;
	struct completion *go;
	struct completion done;
	int got;
};

static int race_fn(void *arg)
{
	struct racer *r = arg;

	wait_for_completion(r->go);
	while (!stag_res_charge(r->res, STAG_RES_QP))
		r->got++;
	complete(&r->done);
	return 0;
}

static void stag_res_two_threads_race_for_the_last(struct kunit *test)
{
	struct stag_res *res = res_new(test, RACE_MAX);
	DECLARE_COMPLETION_ONSTACK(go);
	struct racer r[2] = {};
	struct task_struct *t;
	int i;

	for (i = 0; i < 2; i++) {
		r[i].res = res;
		r[i].go = &go;
		init_completion(&r[i].done);
		t = kthread_run(race_fn, &r[i], "stag_res_race%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	complete_all(&go);
	for (i = 0; i < 2; i++)
		wait_for_completion(&r[i].done);
	KUNIT_EXPECT_EQ(test, r[0].got + r[1].got, RACE_MAX);
	KUNIT_EXPECT_EQ(test, atomic_read(&res->count[STAG_RES_QP]), RACE_MAX);
	kunit_info(test, "thread 0 got %d, thread 1 got %d\n", r[0].got, r[1].got);
}

static struct kunit_case stag_res_cases[] = {
	KUNIT_CASE(stag_res_defaults_are_the_maxima),
	KUNIT_CASE(stag_res_the_one_past_is_einval),
	KUNIT_CASE(stag_res_kinds_apart),
	KUNIT_CASE(stag_res_replacement_goes_one_over),
	KUNIT_CASE(stag_res_two_threads_race_for_the_last),
	{}
};

static struct kunit_suite stag_res_suite = {
	.name = "stag_res",
	.test_cases = stag_res_cases,
};

kunit_test_suite(stag_res_suite);
