// SPDX-License-Identifier: GPL-2.0
/*
 * FLUSH (IBA 1.5, A19.4) over loopback: a range, or a whole region, made
 * globally visible or persistent at the responder. Debian 12's rdma-core
 * (44) has no ibv_wr_flush(): the FLUSH WQEs are written into the send
 * ring by hand (raw.c), in the layout the provider of a newer rdma-core
 * writes them (struct stag_send_wqe's wr.flush).
 *
 * Each case checks the completion's exact status and opcode, the target's
 * bytes and guards; the errors are every right missing (the region's, the
 * QP's, a window's), every bound crossed by one byte, another PD's region,
 * what the requester refuses before anything is sent, and the persistent
 * right refused at registration over memory that is not persistent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <rdma/stag-abi.h>

#include "qp.h"
#include "raw.h"

#define TGT	4096
#define QP_ALL	(LW | RW | RR | ACC_FLUSH_GLOBAL)

/* Two connected RC QPs; @b's QP takes @b_access. @a is written by hand. */
static bool fl_pair(struct end **a, struct end **b, int b_access, struct raw *raw)
{
	struct conn ca, cb;

	*a = end_new(IBV_QPT_RC, NULL, true);
	*b = end_new(IBV_QPT_RC, NULL, true);
	if (!*a || !*b)
		return false;
	ca = conn_default(*b);
	cb = conn_default(*a);
	cb.access = b_access;
	return pair_connect(*a, &ca, *b, &cb) && raw_open(*a, raw);
}

/* Whether a hand-written post went out; a failure is the case's. */
static bool posted(int ret, const char *what)
{
	if (ret)
		t_fail("%s: stagdv_qp_doorbell: %s", what, strerror(ret));
	return !ret;
}

/* A FLUSH of [off, off + len) of @t, by hand; its completion must be @status. */
static void flush_expect(struct end *a, struct raw *raw, const struct buf *t, uint64_t off,
			 uint64_t len, uint8_t type, uint8_t level, enum ibv_wc_status status,
			 const char *what)
{
	struct stag_send_wqe w = raw_wqe_flush(7, t->mr->rkey, (uintptr_t)t->data + off, len, type,
					   level);

	if (!posted(raw_post(raw, &w, NULL, 0), what))
		return;
	expect_wc(a->scq, 7, status, status == IBV_WC_SUCCESS ? WC_FLUSH : -1, NULL, what);
}

/* A WRITE of @src's bytes, then a FLUSH of them: both succeed, the bytes are there. */
static void fl_after_write(void)
{
	struct buf *src, *t;
	struct stag_send_wqe w = { .wr_id = 1, .opcode = IBV_WR_RDMA_WRITE, .num_sge = 1,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_sge s;
	struct end *a, *b;
	struct raw raw;

	if (!raw_have_flush())
		return;
	src = buf_new(TGT, LW);
	t = buf_new(TGT, LW | RW | ACC_FLUSH_GLOBAL);
	if (!src || !t || !fl_pair(&a, &b, QP_ALL, &raw))
		return;
	fill(src->data, TGT, 81);
	s = sge_of(src, 0, TGT);
	w.wr.rdma.remote_addr = (uintptr_t)t->data;
	w.wr.rdma.rkey = t->mr->rkey;
	raw_write(&raw, &w, &s, sizeof(s));
	w = raw_wqe_flush(2, t->mr->rkey, (uintptr_t)t->data, TGT, FLUSH_GLOBAL, FLUSH_RANGE);
	raw_write(&raw, &w, NULL, 0);
	if (!posted(raw_publish(&raw, raw.prod), "a WRITE and a FLUSH"))
		return;
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "the WRITE");
	expect_wc(a->scq, 2, IBV_WC_SUCCESS, WC_FLUSH, NULL, "the FLUSH after it");
	expect_data(t, 81, "the bytes written");
	expect_guards(t, "target");
	expect_state(b->qp, IBV_QPS_RTS, "responder");
}

/*
 * The range's bounds, against a region over the data alone (the guards
 * outside it): its last byte the region's last, then one byte more either
 * way.
 */
static void fl_bounds(void)
{
	struct buf *whole = buf_new(TGT, LW), exact;
	struct end *a, *b;
	struct buf *t = &exact;
	struct raw raw;

	if (!raw_have_flush())
		return;
	if (!whole)
		return;
	exact = *whole;
	exact.mr = reg_exact(whole, LW | RW | ACC_FLUSH_GLOBAL);
	if (!exact.mr || !fl_pair(&a, &b, QP_ALL, &raw))
		return;
	flush_expect(a, &raw, t, 0, TGT, FLUSH_GLOBAL, FLUSH_RANGE, IBV_WC_SUCCESS,
		     "the whole region as a range");
	flush_expect(a, &raw, t, TGT - 1, 1, FLUSH_GLOBAL, FLUSH_RANGE, IBV_WC_SUCCESS,
		     "its last byte");
	flush_expect(a, &raw, t, 1, TGT, FLUSH_GLOBAL, FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR,
		     "one byte past its end");
	expect_state(b->qp, IBV_QPS_ERR, "responder");
	if (!fl_pair(&a, &b, QP_ALL, &raw))
		return;
	flush_expect(a, &raw, t, -1, 2, FLUSH_GLOBAL, FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR,
		     "one byte before its start");
	expect_blank(t, "target");
}

/* The region selectivity: the range named is not looked at. */
static void fl_whole_region(void)
{
	struct buf *t;
	struct stag_send_wqe w;
	struct end *a, *b;
	struct raw raw;

	if (!raw_have_flush())
		return;
	t = buf_new(TGT, LW | RW | ACC_FLUSH_GLOBAL);
	if (!t || !fl_pair(&a, &b, QP_ALL, &raw))
		return;
	w = raw_wqe_flush(3, t->mr->rkey, 0x10, UINT64_MAX, FLUSH_GLOBAL, FLUSH_MR);
	if (!posted(raw_post(&raw, &w, NULL, 0), "the FLUSH"))
		return;
	expect_wc(a->scq, 3, IBV_WC_SUCCESS, WC_FLUSH, NULL, "a whole region, any range");
	expect_blank(t, "target");
	expect_state(b->qp, IBV_QPS_RTS, "responder");
}

/* A region without the right, and a right of the other type only. */
static void fl_region_rights(void)
{
	struct buf *t = buf_new(TGT, LW | RW | RR);
	struct end *a, *b;
	struct raw raw;

	if (!raw_have_flush())
		return;
	if (!t || !fl_pair(&a, &b, QP_ALL | ACC_FLUSH_PERSISTENT, &raw))
		return;
	flush_expect(a, &raw, t, 0, 8, FLUSH_GLOBAL, FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR,
		     "a region without FLUSH_GLOBAL");
	t = buf_new(TGT, LW | RW | ACC_FLUSH_GLOBAL);
	if (!t || !fl_pair(&a, &b, QP_ALL | ACC_FLUSH_PERSISTENT, &raw))
		return;
	flush_expect(a, &raw, t, 0, 8, FLUSH_PERSISTENT, FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR,
		     "a persistent FLUSH of a region with FLUSH_GLOBAL only");
	expect_blank(t, "target");
}

/* A QP not given the flush rights takes no FLUSH: an invalid request, as in rdma_rxe. */
static void fl_qp_rights(void)
{
	struct buf *t;
	struct end *a, *b;
	struct raw raw;

	if (!raw_have_flush())
		return;
	t = buf_new(TGT, LW | RW | ACC_FLUSH_GLOBAL);
	if (!t || !fl_pair(&a, &b, LW | RW | RR, &raw))
		return;
	flush_expect(a, &raw, t, 0, 8, FLUSH_GLOBAL, FLUSH_RANGE, IBV_WC_REM_INV_REQ_ERR,
		     "a QP without FLUSH_GLOBAL");
	expect_state(b->qp, IBV_QPS_ERR, "responder");
}

/* Another PD's region, and a window (which never has the flush rights). */
static void fl_other_keys(void)
{
	struct ibv_pd *pd2;
	char *mem;
	struct ibv_mr *mr2 = NULL;
	struct buf other;
	struct end *a, *b;
	struct raw raw;

	if (!raw_have_flush())
		return;
	pd2 = ibv_alloc_pd(ctx);
	mem = calloc(1, TGT);
	if (!pd2 || !mem) {
		t_fail("ibv_alloc_pd or calloc");
		goto out;
	}
	mr2 = ibv_reg_mr(pd2, mem, TGT, LW | RW | ACC_FLUSH_GLOBAL);
	if (!mr2) {
		t_fail("ibv_reg_mr in a second PD: %s", strerror(errno));
		goto out;
	}
	other = (struct buf){ .mem = mem, .data = mem, .len = TGT, .mr = mr2 };
	if (!fl_pair(&a, &b, QP_ALL, &raw))
		goto out;
	flush_expect(a, &raw, &other, 0, 8, FLUSH_GLOBAL, FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR,
		     "another PD's region");
out:
	if (mr2)
		ibv_dereg_mr(mr2);
	if (pd2)
		ibv_dealloc_pd(pd2);
	free(mem);
}

/*
 * A zero-length range FLUSH names a key and no bytes: the key is still
 * checked (key, PD, rights), as rdma_rxe checks it, where a zero-length
 * READ or WRITE passes unchecked (IBA C9-88). Before, stag acknowledged
 * one with any R_Key.
 */
static void fl_zero_length(void)
{
	struct buf *t = buf_new(TGT, LW | RW | ACC_FLUSH_GLOBAL), *nof = buf_new(TGT, LW | RW);
	struct buf bad;
	struct end *a, *b;
	struct raw raw;

	if (!raw_have_flush())
		return;
	if (!t || !nof || !fl_pair(&a, &b, QP_ALL, &raw))
		return;
	flush_expect(a, &raw, t, 0, 0, FLUSH_GLOBAL, FLUSH_RANGE, IBV_WC_SUCCESS,
		     "0 bytes of a region with FLUSH_GLOBAL");
	flush_expect(a, &raw, t, 2 * TGT, 0, FLUSH_GLOBAL, FLUSH_RANGE, IBV_WC_SUCCESS,
		     "0 bytes past its end: no bytes, no bounds");
	expect_state(b->qp, IBV_QPS_RTS, "responder");

	bad = *t;
	bad.mr = &(struct ibv_mr){ .rkey = t->mr->rkey ^ 0x5a };
	flush_expect(a, &raw, &bad, 0, 0, FLUSH_GLOBAL, FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR,
		     "0 bytes under a key with a wrong key byte");
	expect_state(b->qp, IBV_QPS_ERR, "responder");

	if (!fl_pair(&a, &b, QP_ALL, &raw))
		return;
	flush_expect(a, &raw, nof, 0, 0, FLUSH_GLOBAL, FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR,
		     "0 bytes of a region without FLUSH_GLOBAL");
	expect_guards(t, "target");
	expect_guards(nof, "the region without the right");
}

/* What the requester refuses: nothing is sent, the QP goes to ERR. */
static void fl_bad_wqe(uint8_t type, uint8_t level, uint64_t len, int num_sge,
		       enum ibv_wc_status status, const char *what)
{
	struct buf *t;
	struct stag_send_wqe w;
	struct ibv_sge s;
	struct end *a, *b;
	struct raw raw;

	if (!raw_have_flush())
		return;
	t = buf_new(TGT, LW | RW | ACC_FLUSH_GLOBAL);
	if (!t || !fl_pair(&a, &b, QP_ALL, &raw))
		return;
	s = sge_of(t, 0, 8);
	w = raw_wqe_flush(9, t->mr->rkey, (uintptr_t)t->data, len, type, level);
	w.num_sge = num_sge;
	if (!posted(raw_post(&raw, &w, &s, sizeof(s)), "the FLUSH"))
		return;
	expect_wc(a->scq, 9, status, -1, NULL, what);
	expect_state(a->qp, IBV_QPS_ERR, what);
	expect_state(b->qp, IBV_QPS_RTS, "responder");
}

static void fl_bad_type(void)
{
	fl_bad_wqe(0, FLUSH_RANGE, 8, 0, IBV_WC_LOC_QP_OP_ERR, "placement type 0");
	fl_bad_wqe(4, FLUSH_RANGE, 8, 0, IBV_WC_LOC_QP_OP_ERR, "placement type 4");
	fl_bad_wqe(FLUSH_GLOBAL, 2, 8, 0, IBV_WC_LOC_QP_OP_ERR, "selectivity 2");
	fl_bad_wqe(FLUSH_GLOBAL, FLUSH_RANGE, 8, 1, IBV_WC_LOC_QP_OP_ERR, "a FLUSH naming an SGE");
	fl_bad_wqe(FLUSH_GLOBAL, FLUSH_RANGE, (1ULL << 31) + 1, 0, IBV_WC_LOC_LEN_ERR,
		   "a range of 2 GiB + 1");
}

/* UC has no FLUSH (IBA A19.4: RC only). */
static void fl_uc(void)
{
	struct buf *t;
	struct stag_send_wqe w;
	struct end *a, *b;
	struct raw raw;

	if (!raw_have_flush())
		return;
	t = buf_new(TGT, LW | RW | ACC_FLUSH_GLOBAL);
	if (!t || !pair_new(IBV_QPT_UC, &a, &b) || !raw_open(a, &raw))
		return;
	w = raw_wqe_flush(4, t->mr->rkey, (uintptr_t)t->data, 8, FLUSH_GLOBAL, FLUSH_RANGE);
	if (!posted(raw_post(&raw, &w, NULL, 0), "the FLUSH"))
		return;
	expect_wc(a->scq, 4, IBV_WC_LOC_QP_OP_ERR, -1, NULL, "UC FLUSH");
}

/* The persistent right over memory that is not persistent: EINVAL, as rdma_rxe. */
static void fl_reg_persistent(void)
{
	char *mem;
	struct ibv_mr *mr;

	if (!raw_have_flush())
		return;
	mem = calloc(1, TGT);
	if (!mem) {
		t_fail("calloc");
		return;
	}
	errno = 0;
	mr = ibv_reg_mr(pd, mem, TGT, LW | RW | ACC_FLUSH_PERSISTENT);
	t_check(!mr && errno == EINVAL, "ibv_reg_mr(FLUSH_PERSISTENT) of anonymous memory: %s, %s",
		mr ? "a region" : "NULL", strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, mem, TGT, LW | RW | ACC_FLUSH_GLOBAL);
	t_check(mr, "ibv_reg_mr(FLUSH_GLOBAL): %s", strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	free(mem);
}

/* From 6.2 on the device must advertise both types (the other cases skip without them). */
static void fl_device_cap(void)
{
	struct ibv_device_attr_ex attr;
	unsigned int major = 0, minor = 0;
	struct utsname u;
	int ret;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2) {
		t_fail("uname: the kernel release");
		return;
	}
	if (major < 6 || (major == 6 && minor < 2)) {
		case_skip("a kernel before 6.2: its verbs have no FLUSH");
		return;
	}
	ret = ibv_query_device_ex(ctx, NULL, &attr);

	t_check(!ret, "ibv_query_device_ex: %s", strerror(ret));
	if (!ret)
		t_check((attr.device_cap_flags_ex & (3ULL << 38)) == 3ULL << 38,
			"device_cap_flags_ex %#llx without both flush bits (1 << 38, 1 << 39)",
			(unsigned long long)attr.device_cap_flags_ex);
}

#define RACE_FLUSHES	(DEPTH - 4)

struct flusher {
	struct raw *raw;
	uint32_t rkey;
	uint64_t addr;
	int posted;
};

/* Flushes one at a time, of the region and of ranges in turn. */
static void *flush_many(void *arg)
{
	struct flusher *f = arg;
	int i;

	for (i = 0; i < RACE_FLUSHES; i++) {
		struct stag_send_wqe w = raw_wqe_flush(100 + i, f->rkey, f->addr + (i % 8) * 512,
						   512, FLUSH_GLOBAL,
						   i % 3 ? FLUSH_RANGE : FLUSH_MR);

		if (raw_post(f->raw, &w, NULL, 0))
			break;
		f->posted++;
		usleep(100);
	}
	return NULL;
}

/*
 * The region goes while flushes of it run: each completes, in order,
 * SUCCESS until one REM_ACCESS_ERR, and WR_FLUSH_ERR after it; none is
 * lost and no other status comes. The debug kernel's KASAN and kmemleak
 * watch the responder's gate reference across the deregistration.
 */
static void fl_dereg_race(void)
{
	struct buf *t = buf_new(TGT, LW);
	struct ibv_mr *mr = t ? ibv_reg_mr(pd, t->data, TGT, LW | RW | ACC_FLUSH_GLOBAL) : NULL;
	struct flusher f = { 0 };
	struct ibv_wc wc[DEPTH];
	int got = 0, n, i, stage = 0;
	struct end *a, *b;
	struct raw raw;
	pthread_t th;
	long t0;

	if (!raw_have_flush())
		goto out;
	if (!t || !mr) {
		t_fail("ibv_reg_mr: %s", strerror(errno));
		goto out;
	}
	if (!fl_pair(&a, &b, QP_ALL, &raw))
		goto out;
	f = (struct flusher){ &raw, mr->rkey, (uintptr_t)t->data, 0 };
	if (pthread_create(&th, NULL, flush_many, &f)) {
		t_fail("pthread_create");
		goto out;
	}
	usleep(2000);
	t_check(!ibv_dereg_mr(mr), "ibv_dereg_mr while flushes run");
	mr = NULL;
	pthread_join(th, NULL);
	t0 = now_ms();
	while (got < f.posted && now_ms() - t0 < WAIT_MS) {
		n = poll_n(a->scq, wc, DEPTH, 10);
		for (i = 0; i < n; i++, got++) {
			enum ibv_wc_status want[] = { IBV_WC_SUCCESS, IBV_WC_REM_ACCESS_ERR,
						      IBV_WC_WR_FLUSH_ERR };

			if (wc[i].wr_id != 100 + (uint64_t)got) {
				t_fail("completion %d is of WR %llu", got,
				       (unsigned long long)wc[i].wr_id);
				return;
			}
			/* SUCCESS*, then REM_ACCESS_ERR once, then WR_FLUSH_ERR*. */
			if (stage == 1)
				stage = 2;
			else if (!stage && wc[i].status != IBV_WC_SUCCESS)
				stage = 1;
			if (wc[i].status != want[stage]) {
				t_fail("completion %d: %s after %s", got,
				       ibv_wc_status_str(wc[i].status),
				       ibv_wc_status_str(want[stage]));
				return;
			}
		}
	}
	printf("# %d flushes posted, %d completed; the region went %s\n", f.posted, got,
	       stage ? "in the middle" : "after the last");
	t_check(f.posted == RACE_FLUSHES && got == f.posted,
		"%d of %d flushes posted, %d completions", f.posted, RACE_FLUSHES, got);
	expect_blank(t, "target");
out:
	if (mr)
		ibv_dereg_mr(mr);
}

const struct qp_case flush_cases[] = {
	{ "RC FLUSH (global, a range) after a WRITE: both complete, the bytes are there",
	  fl_after_write },
	{ "RC FLUSH of a region's range to its last byte: SUCCESS; one byte past: REM_ACCESS_ERR",
	  fl_bounds },
	{ "RC FLUSH of a whole region: SUCCESS whatever range it names", fl_whole_region },
	{ "RC FLUSH of 0 bytes: its key still checked (a wrong key byte, no FLUSH_GLOBAL: "
	  "REM_ACCESS_ERR), its bounds not", fl_zero_length },
	{ "RC FLUSH of a region without the placement type's right: REM_ACCESS_ERR",
	  fl_region_rights },
	{ "RC FLUSH to a QP without FLUSH_GLOBAL: REM_INV_REQ_ERR, the responder in ERR",
	  fl_qp_rights },
	{ "RC FLUSH of another PD's region: REM_ACCESS_ERR", fl_other_keys },
	{ "RC FLUSH with a bad type, selectivity, SGE or length: refused locally", fl_bad_type },
	{ "UC FLUSH: LOC_QP_OP_ERR", fl_uc },
	{ "ibv_reg_mr with FLUSH_PERSISTENT over anonymous memory: EINVAL", fl_reg_persistent },
	{ "the device reports both flush types in device_cap_flags_ex (from Linux 6.2 on)",
	  fl_device_cap },
	{ "RC FLUSHes while their region is deregistered: in order, none lost, no other status",
	  fl_dereg_race },
	{ NULL }
};
