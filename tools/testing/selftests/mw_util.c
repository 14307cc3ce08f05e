// SPDX-License-Identifier: GPL-2.0
/*
 * The helpers of mw_test. A window lies over part of the target's data
 * inside a region that covers more (the data's guard bytes at least), so
 * that an access one byte outside the window is still inside the region:
 * only the window's own bounds can refuse it. Every access is followed by
 * a byte-for-byte check of the target and the requester's buffer against
 * what they must hold, guard bytes included. Objects qp_util.c does not
 * track (windows, regions a case may deregister itself, a second PD and
 * its QPs) the case owns, and they are released before qp_util's, newest
 * first. See mw.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw.h"

/* ---- objects a case releases itself, before qp_util's (case_release()) ---- */

static struct owned {
	enum okind kind;
	void *obj;
} owned[64];
static int nowned;

void own(enum okind kind, void *obj)
{
	if (nowned == ARRAY_SIZE(owned)) {
		t_fail("more than %zu objects of one case", ARRAY_SIZE(owned));
		return;
	}
	owned[nowned++] = (struct owned){ kind, obj };
}

/* The case destroyed @obj itself. */
void disown(void *obj)
{
	int i;

	for (i = 0; i < nowned; i++)
		if (owned[i].obj == obj)
			owned[i].obj = NULL;
}

static int destroy(const struct owned *o)
{
	switch (o->kind) {
	case O_MW:
		return ibv_dealloc_mw(o->obj);
	case O_MR:
		return ibv_dereg_mr(o->obj);
	case O_QP:
		return ibv_destroy_qp(o->obj);
	default:
		return ibv_dealloc_pd(o->obj);
	}
}

/* Destroys the windows the case still owns, or everything else; newest first. */
static void release(bool windows)
{
	static const char * const names[] = { "ibv_dealloc_mw", "ibv_dereg_mr",
		"ibv_destroy_qp", "ibv_dealloc_pd" };
	int i, ret;

	for (i = nowned - 1; i >= 0; i--) {
		bool is_mw = owned[i].kind == O_MW;

		if (!owned[i].obj || is_mw != windows)
			continue;
		ret = destroy(&owned[i]);
		t_check(!ret, "%s: %s", names[owned[i].kind], strerror(ret));
		owned[i].obj = NULL;
	}
}

/*
 * Windows first, whenever they were made: a region with a bound window
 * cannot be deregistered. Then the rest newest first, each before its PD.
 */
void release_owned(void)
{
	release(true);
	release(false);
	nowned = 0;
}

/* ---- the target, the requester's buffer, and what each must hold ---- */

struct target tgt;
struct source loc;

/*
 * The target and the requester's buffer. The region windows bind to has
 * @access and covers the data and its guards, or with @exact the data
 * alone; the case owns it, so that it may deregister it.
 */
bool bufs_new(int access, bool exact)
{
	tgt.b = buf_new(TLEN, LW);
	loc.b = buf_new(TLEN, LW);
	if (!tgt.b || !loc.b)
		return false;
	fill(tgt.want, TLEN, BLANK);
	fill(loc.b->data, TLEN, SRC);
	fill(loc.want, TLEN, SRC);
	if (exact)
		tgt.mr = ibv_reg_mr(pd, tgt.b->data, TLEN, access);
	else
		tgt.mr = ibv_reg_mr(pd, tgt.b->mem, 2 * GUARD + TLEN, access);
	if (!tgt.mr) {
		t_fail("ibv_reg_mr access %#x: %s", access, strerror(errno));
		return false;
	}
	own(O_MR, tgt.mr);
	return true;
}

/* Both buffers hold what they must, and their guards are intact. */
void expect_bufs(const char *what)
{
	char w[128];

	snprintf(w, sizeof(w), "%s: target", what);
	expect_bytes(tgt.b->data, tgt.want, TLEN, w);
	expect_guards(tgt.b, w);
	snprintf(w, sizeof(w), "%s: requester's buffer", what);
	expect_bytes(loc.b->data, loc.want, TLEN, w);
	expect_guards(loc.b, w);
}

uint64_t tva(size_t off)
{
	return (uintptr_t)tgt.b->data + off;
}

/* ---- windows ---- */

/* A window of the case's PD, which the case owns. */
struct ibv_mw *mw_new(enum ibv_mw_type type)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, type);

	if (!mw)
		t_fail("ibv_alloc_mw type %d: %s", type, strerror(errno));
	else
		own(O_MW, mw);
	return mw;
}

/* The address of byte @x of @w (which may lie outside it). */
uint64_t win_addr(const struct win *w, long x)
{
	return w->zb ? (uint64_t)x : tva(w->off) + x;
}

uint64_t next_id = 100;

/* ibv_bind_mw on @e, signaled; returns its result. */
int bind1_post(struct end *e, struct ibv_mw *mw, uint64_t wr_id, struct ibv_mr *mr,
	       uint64_t addr, uint64_t len, int access)
{
	struct ibv_mw_bind bind = {
		.wr_id = wr_id,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = addr, .length = len, .mw_access_flags = access },
	};
	int ret = ibv_bind_mw(e->qp, mw, &bind);

	t_check(!ret, "ibv_bind_mw %#llx: %s", (ull)wr_id, strerror(ret));
	return ret;
}

/* A BIND_MW work request on @e giving @mw the rkey @rkey. */
int bind2_post(struct end *e, struct ibv_mw *mw, uint64_t wr_id, uint32_t rkey,
	       struct ibv_mr *mr, uint64_t addr, uint64_t len, int access)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = {
			.mw = mw,
			.rkey = rkey,
			.bind_info = { .mr = mr, .addr = addr, .length = len,
				       .mw_access_flags = access },
		},
	};

	return post(e, &wr);
}

/* Binds type 1 @mw on @e over @len bytes at @off of the target's data. */
bool bind1(struct end *e, struct win *w, struct ibv_mw *mw, size_t off, size_t len,
	   int access)
{
	uint32_t old = mw->rkey;
	uint64_t id = next_id++;

	if (bind1_post(e, mw, id, tgt.mr, tva(off), len, access))
		return false;
	t_check(mw->rkey == ibv_inc_rkey(old), "type 1 bind: rkey %#x after %#x, expected %#x",
		mw->rkey, old, ibv_inc_rkey(old));
	*w = (struct win){ .mw = mw, .rkey = mw->rkey, .off = off };
	return expect_wc(e->scq, id, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL, "type 1 bind");
}

/* Binds type 2 @mw on @e with @rkey over @len bytes at @off of the data. */
bool bind2(struct end *e, struct win *w, struct ibv_mw *mw, uint32_t rkey, size_t off,
	   size_t len, int access)
{
	uint64_t id = next_id++;

	if (bind2_post(e, mw, id, rkey, tgt.mr, tva(off), len, access))
		return false;
	*w = (struct win){ .mw = mw, .rkey = rkey, .off = off, .zb = access & ZB };
	return expect_wc(e->scq, id, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL, "type 2 bind");
}

/* A zero-length SEND as @id behind the WR under test: it must be flushed. */
void post_trailer(struct end *e, uint64_t id)
{
	struct ibv_send_wr wr = wr_send(id, NULL, 0);

	post(e, &wr);
}

/* @wr_id failed with @status, the trailer behind it was flushed, the QP is in ERR. */
void expect_error(struct end *e, uint64_t wr_id, enum ibv_wc_status status,
		  const char *what)
{
	char w[128];

	snprintf(w, sizeof(w), "%s: the SEND behind it", what);
	if (expect_wc(e->scq, wr_id, status, -1, NULL, what))
		expect_flushed(e->scq, wr_id + 1, 1, w);
	expect_state(e->qp, IBV_QPS_ERR, what);
}

/* The bind @wr_id on @e failed: MW_BIND_ERR, the QP in ERR, the next WR flushed. */
void expect_bind_err(struct end *e, uint64_t wr_id)
{
	post_trailer(e, wr_id + 1);
	expect_error(e, wr_id, IBV_WC_MW_BIND_ERR, "bind");
}

/* ---- accesses ---- */

static bool is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP;
}

/* The opcode of the requester's completion of a work request of @op. */
int wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	default:
		return IBV_WC_SEND;
	}
}

static const char *op_name(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
		return "WRITE";
	case IBV_WR_RDMA_READ:
		return "READ";
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return "FETCH_ADD";
	case IBV_WR_ATOMIC_WRITE:
		return "ATOMIC_WRITE";
	default:
		return "CMP_SWP";
	}
}

/*
 * @op of @len bytes (8 for an atomic) at @raddr through @rkey, on @e as
 * @wr_id; an atomic adds ADD, or compares with @compare and swaps in SWAP;
 * an atomic write writes the requester's first 8 bytes.
 */
int post_access(struct end *e, uint64_t wr_id, enum ibv_wr_opcode op, size_t len,
		uint32_t rkey, uint64_t raddr, uint64_t compare)
{
	struct ibv_sge s = sge_of(loc.b, 0, len);
	struct ibv_send_wr wr = wr_send(wr_id, &s, 1);

	wr.opcode = op;
	if (is_atomic(op)) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? ADD : compare;
		wr.wr.atomic.swap = SWAP;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return post(e, &wr);
}

/*
 * What a successful @op of @len bytes landing at byte @o of the target does
 * to both buffers. A CMP_SWP was given the value there: it swaps.
 */
void apply(enum ibv_wr_opcode op, size_t o, size_t len)
{
	uint64_t old, val;

	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_ATOMIC_WRITE:
		memcpy(tgt.want + o, loc.want, len);
		break;
	case IBV_WR_RDMA_READ:
		memcpy(loc.want, tgt.want + o, len);
		break;
	default:
		memcpy(&old, tgt.want + o, 8);
		val = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? old + ADD : SWAP;
		memcpy(loc.want, &old, 8);
		memcpy(tgt.want + o, &val, 8);
		break;
	}
}

/*
 * @op of @len bytes through @rkey at @raddr, posted on @e: completes with
 * @status, and on success lands at byte @o of the target's data. Both
 * buffers are checked afterwards.
 */
void access_at(struct end *e, enum ibv_wr_opcode op, size_t len, uint32_t rkey,
	       uint64_t raddr, size_t o, enum ibv_wc_status status, const char *what)
{
	uint64_t id = next_id, compare = 0;
	char w[160];

	next_id += 2;
	snprintf(w, sizeof(w), "%s: %s of %zu at %#llx, rkey %#x", what, op_name(op), len,
		 (ull)raddr, rkey);
	if (status == IBV_WC_SUCCESS && is_atomic(op))
		memcpy(&compare, tgt.want + o, 8);
	if (post_access(e, id, op, len, rkey, raddr, compare))
		return;
	if (status == IBV_WC_SUCCESS) {
		if (expect_wc(e->scq, id, status, wc_opcode(op), NULL, w))
			apply(op, o, len);
	} else {
		post_trailer(e, id + 1);
		expect_error(e, id, status, w);
	}
	expect_bufs(w);
}

/* @op of @len bytes at byte @x of window @w, through its rkey. */
void access_win(struct end *e, const struct win *w, enum ibv_wr_opcode op, long x,
		size_t len, enum ibv_wc_status status, const char *what)
{
	access_at(e, op, len, w->rkey, win_addr(w, x), w->off + x, status, what);
}

/* ---- QPs ---- */

/* A connected RC pair of the case's PD. */
bool rc_pair(struct end **a, struct end **b)
{
	return pair_new(IBV_QPT_RC, a, b);
}

struct ibv_pd *pd_new(void)
{
	struct ibv_pd *p = ibv_alloc_pd(ctx);

	if (!p)
		t_fail("ibv_alloc_pd: %s", strerror(errno));
	else
		own(O_PD, p);
	return p;
}

/* A QP of @p (another PD than the case's), in RESET; the case owns it. */
static struct end *end_in(struct ibv_pd *p)
{
	struct end *e = calloc(1, sizeof(*e));
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = MAX_SGE,
			 .max_recv_sge = MAX_SGE },
	};

	e->scq = cq_new();
	e->rcq = cq_new();
	if (!e->scq || !e->rcq)
		return NULL;
	a.send_cq = e->scq;
	a.recv_cq = e->rcq;
	e->qp = ibv_create_qp(p, &a);
	if (!e->qp) {
		t_fail("ibv_create_qp: %s", strerror(errno));
		return NULL;
	}
	own(O_QP, e->qp);
	return e;
}

/* @x, a QP of another PD, connected to @y of the case's PD. */
bool pair_across(struct ibv_pd *p, struct end **x, struct end **y)
{
	struct conn cx, cy;

	*x = end_in(p);
	*y = end_new(IBV_QPT_RC, NULL, true);
	if (!*x || !*y)
		return false;
	cx = conn_default(*y);
	cy = conn_default(*x);
	return pair_connect(*x, &cx, *y, &cy);
}

/* An RC QP whose ibv_qp_ex offers BIND_MW and RDMA_WRITE. */
struct end *end_ex(void)
{
	struct end *e = calloc(1, sizeof(*e));
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = MAX_SGE,
			 .max_recv_sge = MAX_SGE },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_RDMA_WRITE,
	};

	e->scq = cq_new();
	e->rcq = cq_new();
	if (!e->scq || !e->rcq)
		return NULL;
	a.send_cq = e->scq;
	a.recv_cq = e->rcq;
	e->qp = ibv_create_qp_ex(ctx, &a);
	if (!e->qp) {
		t_fail("ibv_create_qp_ex with BIND_MW: %s", strerror(errno));
		return NULL;
	}
	track(K_QP, e->qp, 0);
	return e;
}
