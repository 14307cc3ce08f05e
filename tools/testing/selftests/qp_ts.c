// SPDX-License-Identifier: GPL-2.0
/*
 * Completion timestamps: extended CQs created with
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP (the free-running clock, whose
 * frequency hca_core_clock gives and whose now ibv_query_rt_values_ex()
 * reads) and IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK (real time, in
 * nanoseconds). Each completion's clocks must lie between the readings
 * taken before its post and after its poll, in order along the CQ; a
 * resize and the cleaning of a reset QP's completions keep each one's own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "qp.h"

#define TS_FLAGS	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define NSEC		1000000000ULL

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * NSEC + t.tv_nsec;
}

static struct ibv_cq_ex *ts_cq_new(uint64_t flags)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 2 * DEPTH,
		.wc_flags = IBV_WC_EX_WITH_QP_NUM | flags,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);

	if (!cq)
		t_fail("ibv_create_cq_ex with wc_flags %#llx: %s", (ull)a.wc_flags,
		       strerror(errno));
	else
		track(K_CQ, ibv_cq_ex_to_cq(cq), 0);
	return cq;
}

struct ts_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	uint32_t qp_num;
	uint64_t ts, wall;
};

/* Up to @n completions of @cq, with both clocks, within about @ms. */
static int poll_ts(struct ibv_cq_ex *cq, struct ts_wc *w, int n, int ms)
{
	struct ibv_poll_cq_attr pa = { 0 };
	long end = now_ms() + ms;
	int got = 0, ret;

	while (got < n && now_ms() < end) {
		ret = ibv_start_poll(cq, &pa);
		if (ret == ENOENT) {
			usleep(100);
			continue;
		}
		if (ret) {
			t_fail("ibv_start_poll: %s", strerror(ret));
			break;
		}
		do {
			w[got] = (struct ts_wc){
				.wr_id = cq->wr_id, .status = cq->status,
				.qp_num = ibv_wc_read_qp_num(cq),
				.ts = ibv_wc_read_completion_ts(cq),
				.wall = ibv_wc_read_completion_wallclock_ns(cq),
			};
			got++;
		} while (got < n && !(ret = ibv_next_poll(cq)));
		ibv_end_poll(cq);
	}
	return got;
}

/* Each of @n completions: its wr_id, and both clocks inside their window, in order. */
static void expect_ts(const struct ts_wc *w, int n, const uint64_t *wr_ids, uint64_t m0,
		      uint64_t m1, uint64_t r0, uint64_t r1, const char *what)
{
	int i;

	for (i = 0; i < n; i++) {
		t_check(w[i].wr_id == wr_ids[i] && w[i].status == IBV_WC_SUCCESS,
			"%s %d: wr_id %llu (expected %llu), %s", what, i, (ull)w[i].wr_id,
			(ull)wr_ids[i], ibv_wc_status_str(w[i].status));
		t_check(w[i].ts >= m0 && w[i].ts <= m1,
			"%s %d: free-running %llu outside [%llu, %llu] (CLOCK_MONOTONIC ns)",
			what, i, (ull)w[i].ts, (ull)m0, (ull)m1);
		t_check(w[i].wall >= r0 && w[i].wall <= r1,
			"%s %d: wall clock %llu outside [%llu, %llu] (CLOCK_REALTIME ns)", what, i,
			(ull)w[i].wall, (ull)r0, (ull)r1);
		if (i)
			t_check(w[i].ts >= w[i - 1].ts && w[i].wall >= w[i - 1].wall,
				"%s %d: its clocks before the one polled ahead of it", what, i);
	}
}

/* An RC QP sending on @scq, connected to a QP of its own. */
static struct end *ts_sender(struct ibv_cq_ex *scq)
{
	struct end *a = end_on(IBV_QPT_RC, ibv_cq_ex_to_cq(scq), cq_new(), NULL, true);
	struct end *b = end_new(IBV_QPT_RC, NULL, true);

	return a && b && pair_connect_default(a, b) ? a : NULL;
}

/* @n RDMA WRITEs of @src's 64 bytes into @dst on @a, as @ids. */
static bool ts_writes(struct end *a, const struct buf *src, const struct buf *dst,
		      const uint64_t *ids, int n)
{
	struct ibv_sge s = sge_of(src, 0, 64);
	struct ibv_send_wr wr;
	int i;

	for (i = 0; i < n; i++) {
		wr = wr_rdma(ids[i], IBV_WR_RDMA_WRITE, &s, 1, dst, 0);
		if (post(a, &wr))
			return false;
	}
	return true;
}

/* hca_core_clock, the timestamp mask, and ibv_query_rt_values_ex. */
static void ts_clock(void)
{
	struct ibv_device_attr_ex attr;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	uint64_t m0, m1, raw;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &attr);
	t_check(!ret, "ibv_query_device_ex: %s", strerror(ret));
	if (!ret) {
		t_check(attr.hca_core_clock == 1000000, "hca_core_clock %llu kHz, expected 1000000",
			(ull)attr.hca_core_clock);
		t_check(attr.completion_timestamp_mask == UINT64_MAX,
			"completion_timestamp_mask %#llx, expected all ones",
			(ull)attr.completion_timestamp_mask);
	}
	m0 = clock_ns(CLOCK_MONOTONIC);
	ret = ibv_query_rt_values_ex(ctx, &v);
	m1 = clock_ns(CLOCK_MONOTONIC);
	t_check(!ret, "ibv_query_rt_values_ex: %s", strerror(ret));
	if (ret)
		return;
	raw = v.raw_clock.tv_nsec;
	t_check(v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK && !v.raw_clock.tv_sec &&
		raw >= m0 && raw <= m1,
		"raw clock %lld.%llu (comp_mask %#x) outside [0.%llu, 0.%llu]",
		(long long)v.raw_clock.tv_sec, (ull)raw, v.comp_mask, (ull)m0, (ull)m1);
	v.comp_mask = 1U << 7;
	ret = ibv_query_rt_values_ex(ctx, &v);
	t_check(ret == EINVAL,
		"ibv_query_rt_values_ex with an unknown mask bit: %s, expected EINVAL",
		strerror(ret));
}

/* Sends and receives on timestamping CQs: both clocks of each, in their windows. */
static void ts_completions(void)
{
	struct ibv_cq_ex *scq = ts_cq_new(TS_FLAGS), *rcq = ts_cq_new(TS_FLAGS);
	struct buf *src = buf_new(256, LW), *dst = buf_new(256, LW);
	static const uint64_t sids[] = { 1, 2, 3, 4 }, rids[] = { 10, 11, 12, 13 };
	uint64_t m0, m1, r0, r1;
	struct ts_wc w[4];
	struct end *a, *b;
	struct ibv_sge s, r;
	struct ibv_send_wr wr;
	int i;

	if (!scq || !rcq || !src || !dst)
		return;
	a = end_on(IBV_QPT_RC, ibv_cq_ex_to_cq(scq), cq_new(), NULL, true);
	b = end_on(IBV_QPT_RC, cq_new(), ibv_cq_ex_to_cq(rcq), NULL, true);
	if (!a || !b || !pair_connect_default(a, b))
		return;
	for (i = 0; i < 4; i++) {
		r = sge_of(dst, 64 * i, 64);
		if (post_recv(b, rids[i], &r, 1))
			return;
	}
	m0 = clock_ns(CLOCK_MONOTONIC);
	r0 = clock_ns(CLOCK_REALTIME);
	for (i = 0; i < 4; i++) {
		s = sge_of(src, 64 * i, 64);
		wr = wr_send(sids[i], &s, 1);
		if (post(a, &wr))
			return;
	}
	if (poll_ts(scq, w, 4, WAIT_MS) != 4) {
		t_fail("fewer than 4 send completions");
		return;
	}
	expect_ts(w, 4, sids, m0, clock_ns(CLOCK_MONOTONIC), r0, clock_ns(CLOCK_REALTIME),
		  "send");
	if (poll_ts(rcq, w, 4, WAIT_MS) != 4) {
		t_fail("fewer than 4 receive completions");
		return;
	}
	m1 = clock_ns(CLOCK_MONOTONIC);
	r1 = clock_ns(CLOCK_REALTIME);
	expect_ts(w, 4, rids, m0, m1, r0, r1, "receive");
}

/* A CQ asked for the wall clock alone gets timestamps all the same. */
static void ts_wallclock_only(void)
{
	struct ibv_cq_ex *scq = ts_cq_new(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
	struct buf *src = buf_new(64, LW), *dst = buf_new(64, LW | RW);
	static const uint64_t ids[] = { 5 };
	uint64_t m0, r0;
	struct end *a = scq ? ts_sender(scq) : NULL;
	struct ts_wc w;

	if (!a || !src || !dst)
		return;
	m0 = clock_ns(CLOCK_MONOTONIC);
	r0 = clock_ns(CLOCK_REALTIME);
	if (!ts_writes(a, src, dst, ids, 1))
		return;
	if (poll_ts(scq, &w, 1, WAIT_MS) != 1) {
		t_fail("no completion");
		return;
	}
	expect_ts(&w, 1, ids, m0, clock_ns(CLOCK_MONOTONIC), r0, clock_ns(CLOCK_REALTIME),
		  "RDMA_WRITE");
}

/* Completions waiting through a resize keep their own clocks. */
static void ts_resize(void)
{
	struct ibv_cq_ex *scq = ts_cq_new(TS_FLAGS);
	struct buf *src = buf_new(64, LW), *dst = buf_new(64, LW | RW);
	static const uint64_t ids[] = { 1, 2, 3 };
	uint64_t m0, r0;
	struct end *a = scq ? ts_sender(scq) : NULL;
	struct ts_wc w[3];
	int ret;

	if (!a || !src || !dst)
		return;
	m0 = clock_ns(CLOCK_MONOTONIC);
	r0 = clock_ns(CLOCK_REALTIME);
	if (!ts_writes(a, src, dst, ids, 3))
		return;
	usleep(QUIET_MS * 1000);
	ret = ibv_resize_cq(ibv_cq_ex_to_cq(scq), 4 * DEPTH);
	t_check(!ret, "ibv_resize_cq: %s", strerror(ret));
	if (poll_ts(scq, w, 3, WAIT_MS) != 3) {
		t_fail("fewer than 3 completions after the resize");
		return;
	}
	expect_ts(w, 3, ids, m0, clock_ns(CLOCK_MONOTONIC), r0, clock_ns(CLOCK_REALTIME),
		  "after the resize");
}

/*
 * Two QPs on one CQ; one is reset, and the provider drops its completions,
 * moving the other's up over them. Each moved completion keeps its own
 * clocks: the first of the kept ones was written before @mid, the second
 * after (a slot moved without its clocks would show the dropped one's).
 */
static void ts_clean(void)
{
	struct ibv_cq_ex *scq = ts_cq_new(TS_FLAGS);
	struct buf *src = buf_new(64, LW), *dst = buf_new(64, LW | RW);
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	static const uint64_t ids[] = { 21, 22 };
	uint64_t m0, r0, mid;
	struct end *a, *b, *c, *d;
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct ts_wc w[2];
	int i, ret;

	if (!scq || !src || !dst)
		return;
	a = end_on(IBV_QPT_RC, ibv_cq_ex_to_cq(scq), cq_new(), NULL, true);
	c = end_on(IBV_QPT_RC, ibv_cq_ex_to_cq(scq), cq_new(), NULL, true);
	b = end_new(IBV_QPT_RC, NULL, true);
	d = end_new(IBV_QPT_RC, NULL, true);
	if (!a || !b || !c || !d || !pair_connect_default(a, b) || !pair_connect_default(c, d))
		return;
	m0 = clock_ns(CLOCK_MONOTONIC);
	r0 = clock_ns(CLOCK_REALTIME);
	s = sge_of(src, 0, 64);
	mid = 0;
	for (i = 0; i < 2; i++) {
		/* a's (dropped), then c's (kept); then the same once more. */
		wr = wr_rdma(11 + i, IBV_WR_RDMA_WRITE, &s, 1, dst, 0);
		if (post(a, &wr))
			return;
		usleep(10000);
		wr = wr_rdma(ids[i], IBV_WR_RDMA_WRITE, &s, 1, dst, 0);
		if (post(c, &wr))
			return;
		usleep(QUIET_MS * 1000);
		if (!i)
			mid = clock_ns(CLOCK_MONOTONIC);
	}
	ret = ibv_modify_qp(a->qp, &reset, IBV_QP_STATE);
	t_check(!ret, "ibv_modify_qp to RESET: %s", strerror(ret));
	if (poll_ts(scq, w, 2, WAIT_MS) != 2) {
		t_fail("fewer than 2 completions of the QP kept");
		return;
	}
	expect_ts(w, 2, ids, m0, clock_ns(CLOCK_MONOTONIC), r0, clock_ns(CLOCK_REALTIME),
		  "kept");
	t_check(w[0].ts < mid && w[1].ts > mid,
		"kept completions at %llu and %llu, expected one before %llu and one after",
		(ull)w[0].ts, (ull)w[1].ts, (ull)mid);
	t_check(poll_ts(scq, w, 1, QUIET_MS) == 0, "a completion of the reset QP polled");
}

const struct qp_case timestamp_cases[] = {
	{ "completion timestamps: hca_core_clock 1 GHz, mask all ones, ibv_query_rt_values_ex",
	  ts_clock },
	{ "completion timestamps: sends and receives, both clocks inside their windows, in order",
	  ts_completions },
	{ "completion timestamps: a CQ asked for the wall clock alone", ts_wallclock_only },
	{ "completion timestamps: completions waiting through ibv_resize_cq keep their clocks",
	  ts_resize },
	{ "completion timestamps: a reset QP's completions dropped, the others keep their clocks",
	  ts_clean },
	{ NULL }
};
