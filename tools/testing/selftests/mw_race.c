// SPDX-License-Identifier: GPL-2.0
/*
 * mw_test's races: one window bound from two threads through two QPs, and
 * a window deallocated while a thread keeps binding it. The threads write
 * BIND_MW slots by hand (raw.h) naming the window by its rkey, so that no
 * thread uses a libibverbs object another may free; the kernel finds the
 * window by the rkey's index. A hang (a deadlock on the TPT's lock) is
 * the case timing out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/stag-abi.h>

#include "mw.h"
#include "raw.h"

#define ROUNDS		200	/* binds per thread */
#define DEALLOCS	40	/* windows deallocated under a binding thread */

/* A thread that binds one window through its own QP, again and again. */
struct binder {
	pthread_t t;
	struct raw raw;
	uint32_t mw_rkey;	/* the window's index, with any key byte */
	uint32_t mr_lkey;
	uint64_t addr;
	int rounds;		/* 0: until a bind fails or stop is set */
	bool stop;		/* atomic: set by the main thread */
	int done;		/* binds that succeeded */
	enum ibv_wc_status last;
};

/* One BIND_MW of the window over WLEN bytes at @b->addr, waited for. */
static enum ibv_wc_status bind_raw(struct binder *b, uint8_t key)
{
	struct stag_send_wqe w = {
		.wr_id = key,
		.opcode = IB_UVERBS_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	w.wr.bind.addr = b->addr;
	w.wr.bind.length = WLEN;
	w.wr.bind.mw_rkey = b->mw_rkey;
	w.wr.bind.new_rkey = (b->mw_rkey & ~0xffu) | key;
	w.wr.bind.mr_lkey = b->mr_lkey;
	w.wr.bind.access = IBV_ACCESS_REMOTE_WRITE;
	if (raw_post(&b->raw, &w, NULL, 0))
		return IBV_WC_GENERAL_ERR;
	if (poll_n(b->raw.e->scq, &wc, 1, WAIT_MS) != 1)
		return IBV_WC_GENERAL_ERR;
	return wc.status;
}

static void *binder_fn(void *arg)
{
	struct binder *b = arg;
	uint8_t key = b->mw_rkey;

	while (!__atomic_load_n(&b->stop, __ATOMIC_RELAXED) &&
	       (!b->rounds || b->done < b->rounds)) {
		b->last = bind_raw(b, ++key);
		if (b->last != IBV_WC_SUCCESS)
			break;
		b->done++;
	}
	return NULL;
}

static bool binder_start(struct binder *b, struct end *e, struct ibv_mw *mw, int rounds)
{
	*b = (struct binder){ .mw_rkey = mw->rkey, .mr_lkey = tgt.mr->lkey, .addr = tva(WOFF),
			      .rounds = rounds };
	if (!raw_open(e, &b->raw))
		return false;
	if (pthread_create(&b->t, NULL, binder_fn, b)) {
		t_fail("pthread_create: %s", strerror(errno));
		return false;
	}
	return true;
}

/*
 * Two threads bind one type 1 window through two QPs of its PD, ROUNDS
 * times each: every bind completes with success (the window is named by
 * its index), none hangs, and the window then works with the rkey of the
 * last bind and deallocates.
 */
static void mw_two_binders(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_1);
	struct end *a, *b, *c, *d;
	struct binder x, y;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) || !rc_pair(&c, &d))
		return;
	if (!binder_start(&x, b, mw, ROUNDS))
		return;
	if (!binder_start(&y, d, mw, ROUNDS)) {
		__atomic_store_n(&x.stop, true, __ATOMIC_RELAXED);
		pthread_join(x.t, NULL);
		return;
	}
	pthread_join(x.t, NULL);
	pthread_join(y.t, NULL);
	t_check(x.done == ROUNDS && y.done == ROUNDS,
		"binds done %d and %d of %d, the last %s and %s", x.done, y.done, ROUNDS,
		ibv_wc_status_str(x.last), ibv_wc_status_str(y.last));
}

static void sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	nanosleep(&ts, NULL);
}

/*
 * A window deallocated while a thread keeps binding it, DEALLOCS times:
 * the binds after the dealloc fail, no bind survives it, and so the
 * region deregisters at the end (a window bound after its dealloc would
 * keep it EBUSY for ever, and its pins with it).
 */
static void mw_dealloc_under_binds(void)
{
	struct end *a, *b;
	struct binder x;
	long pin0;
	int i, ret;

	if (!bufs_new(REGION, false))
		return;
	pin0 = vmpin_kb();
	for (i = 0; i < DEALLOCS; i++) {
		struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);

		if (!mw) {
			t_fail("ibv_alloc_mw: %s", strerror(errno));
			return;
		}
		/* A failed bind moves the QP to ERR: a fresh pair each round. */
		if (!rc_pair(&a, &b) || !binder_start(&x, b, mw, 0)) {
			ibv_dealloc_mw(mw);
			return;
		}
		sleep_us(200 + i * 97 % 2000);
		ret = ibv_dealloc_mw(mw);
		t_check(!ret, "ibv_dealloc_mw under binds: %s", strerror(ret));
		__atomic_store_n(&x.stop, true, __ATOMIC_RELAXED);
		pthread_join(x.t, NULL);
	}
	ret = ibv_dereg_mr(tgt.mr);
	t_check(!ret, "ibv_dereg_mr after %d windows deallocated under binds: %s", DEALLOCS,
		strerror(ret));
	if (!ret)
		disown(tgt.mr);
	/* The region over one page of the target is gone, and its pin with it. */
	t_check(vmpin_kb() == pin0 - (long)(PG / KIB), "VmPin %ld kB, expected %ld kB", vmpin_kb(),
		pin0 - (long)(PG / KIB));
}

const struct mw_case race_cases[] = {
	CASE("two threads bind one type 1 window through two QPs, 200 times each: all complete",
	     mw_two_binders),
	CASE("40 windows deallocated while a thread binds them: no hang, the region deregisters",
	     mw_dealloc_under_binds),
	{ NULL }
};
