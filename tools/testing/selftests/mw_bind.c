// SPDX-License-Identifier: GPL-2.0
/*
 * mw_test's cases of allocation and binding: windows of type 1 and 2 and
 * what they report; every rule of a bind (a region with MW_BIND, one PD,
 * the window inside the region without wrapping, LOCAL_WRITE under remote
 * write or atomic rights, a free type 2 window), each violation completing
 * with MW_BIND_ERR and changing nothing; the new rkey of every bind;
 * zero-length binds; type 2 windows tied to their QP and freed by
 * LOCAL_INV or SEND_WITH_INV.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mw.h"

/* ---- allocation ---- */

static void alloc_type(enum ibv_mw_type type)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, type);
	int ret;

	if (!mw) {
		t_fail("ibv_alloc_mw type %d: %s", type, strerror(errno));
		return;
	}
	t_check(mw->type == type && mw->pd == pd && mw->context == ctx,
		"window: type %d, pd %p, context %p", mw->type, (void *)mw->pd,
		(void *)mw->context);
	ret = ibv_dealloc_mw(mw);
	t_check(!ret, "ibv_dealloc_mw: %s", strerror(ret));
}

static void mw_alloc_type1(void)
{
	alloc_type(IBV_MW_TYPE_1);
}

static void mw_alloc_type2(void)
{
	alloc_type(IBV_MW_TYPE_2);
}

static void mw_alloc_bad_type(void)
{
	struct ibv_mw *mw;

	errno = 0;
	mw = ibv_alloc_mw(pd, 3);
	if (mw) {
		own(O_MW, mw);
		t_fail("ibv_alloc_mw type 3 succeeded");
		return;
	}
	t_check(errno == EINVAL || errno == EOPNOTSUPP,
		"ibv_alloc_mw type 3: %s (%d), expected EINVAL or EOPNOTSUPP", strerror(errno),
		errno);
}

/* Two windows and a region of one PD: three different keys. */
static void mw_alloc_distinct_keys(void)
{
	struct ibv_mw *m1 = mw_new(IBV_MW_TYPE_1), *m2 = mw_new(IBV_MW_TYPE_2);

	if (!m1 || !m2 || !bufs_new(REGION, false))
		return;
	t_check(m1->rkey != m2->rkey && (m1->rkey >> 8) != (tgt.mr->rkey >> 8) &&
		(m2->rkey >> 8) != (tgt.mr->rkey >> 8),
		"rkeys %#x, %#x and the region's %#x share an index", m1->rkey, m2->rkey,
		tgt.mr->rkey);
}

/* A window holds its PD: dealloc_pd is EBUSY until the window is deallocated. */
static void mw_dealloc_frees(void)
{
	struct ibv_pd *p = ibv_alloc_pd(ctx);
	struct ibv_mw *mw = p ? ibv_alloc_mw(p, IBV_MW_TYPE_2) : NULL;
	int ret;

	if (!p || !mw) {
		t_fail("ibv_alloc_pd/ibv_alloc_mw: %s", strerror(errno));
		if (p)
			own(O_PD, p);
		return;
	}
	own(O_PD, p);
	own(O_MW, mw);
	ret = ibv_dealloc_pd(p);
	t_check(ret == EBUSY, "ibv_dealloc_pd with a window: %s, expected EBUSY",
		strerror(ret));
	if (!ret) {
		disown(p);
		return;
	}
	ret = ibv_dealloc_mw(mw);
	t_check(!ret, "ibv_dealloc_mw: %s", strerror(ret));
	if (ret)
		return;
	disown(mw);
	ret = ibv_dealloc_pd(p);
	t_check(!ret, "ibv_dealloc_pd after ibv_dealloc_mw: %s", strerror(ret));
	if (!ret)
		disown(p);
}

/* The device says it has type 1 and type 2B windows. */
static void mw_device_caps(void)
{
	t_check(dev_attr.max_mw > 0, "max_mw %d", dev_attr.max_mw);
	t_check(dev_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW,
		"device_cap_flags %#x: no IBV_DEVICE_MEM_WINDOW", dev_attr.device_cap_flags);
	t_check(dev_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B,
		"device_cap_flags %#x: no IBV_DEVICE_MEM_WINDOW_TYPE_2B",
		dev_attr.device_cap_flags);
}

/* ---- type 1 binds ---- */

/* A refused ibv_bind_mw posts nothing: the QP stays in RTS, no completion. */
static void bind1_refused(int mw_type, int access)
{
	struct ibv_mw *mw = mw_new(mw_type);
	struct ibv_mw_bind bind = {
		.wr_id = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .addr = 0, .length = 0, .mw_access_flags = access },
	};
	struct end *a, *b;
	uint32_t rkey;
	int ret;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b))
		return;
	bind.bind_info.mr = tgt.mr;
	bind.bind_info.addr = tva(WOFF);
	bind.bind_info.length = WLEN;
	rkey = mw->rkey;
	ret = ibv_bind_mw(b->qp, mw, &bind);
	t_check(ret == EINVAL, "ibv_bind_mw: %s (%d), expected EINVAL", strerror(ret), ret);
	t_check(mw->rkey == rkey, "rkey %#x after a refused bind, was %#x", mw->rkey, rkey);
	expect_none(b->scq, QUIET_MS, "binding QP");
	expect_state(b->qp, IBV_QPS_RTS, "binding QP");
}

static void mw_bind1_type2_einval(void)
{
	bind1_refused(IBV_MW_TYPE_2, RW);
}

/* IBA o10-36.2.2: a type 1 window is never zero-based. */
static void mw_bind1_zero_based_einval(void)
{
	bind1_refused(IBV_MW_TYPE_1, RW | ZB);
}

static void mw_bind1_write_read(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_1);
	struct end *a, *b;
	struct win w;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) ||
	    !bind1(b, &w, mw, WOFF, WLEN, RW | RR))
		return;
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "whole window");
	fill(tgt.b->data + WOFF, WLEN, 62);
	fill(tgt.want + WOFF, WLEN, 62);
	access_win(a, &w, IBV_WR_RDMA_READ, 0, WLEN, IBV_WC_SUCCESS, "whole window");
}

/* Each bind gives the next key; the rkey of the one before stops working. */
static void rebind_old_rkey(enum ibv_wr_opcode op)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_1);
	struct end *a, *b, *c, *d;
	struct win w1, w2;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) || !rc_pair(&c, &d) ||
	    !bind1(b, &w1, mw, WOFF, WLEN, RW | RR))
		return;
	access_win(a, &w1, op, 0, 8, IBV_WC_SUCCESS, "first binding");
	if (!bind1(b, &w2, mw, WOFF, WLEN, RW | RR))
		return;
	t_check(w2.rkey != w1.rkey, "the rebind kept rkey %#x", w1.rkey);
	access_win(a, &w1, op, 0, 8, IBV_WC_REM_ACCESS_ERR, "rkey of the first binding");
	access_win(c, &w2, op, 0, 8, IBV_WC_SUCCESS, "rkey of the second binding");
}

static void mw_rebind1_old_rkey_write(void)
{
	rebind_old_rkey(IBV_WR_RDMA_WRITE);
}

static void mw_rebind1_old_rkey_read(void)
{
	rebind_old_rkey(IBV_WR_RDMA_READ);
}

/* The window over the region's first to last byte binds; both bytes are reachable. */
static void mw_bind1_whole_region(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_1);
	struct end *a, *b;
	struct win w;

	if (!mw || !bufs_new(REGION, true) || !rc_pair(&a, &b) ||
	    !bind1(b, &w, mw, 0, TLEN, RW))
		return;
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, 1, IBV_WC_SUCCESS, "the region's first byte");
	access_win(a, &w, IBV_WR_RDMA_WRITE, TLEN - 1, 1, IBV_WC_SUCCESS,
		   "the region's last byte");
}

/*
 * A bind of @mw_type that breaks a rule fails with MW_BIND_ERR and changes
 * nothing. The target's region is good; the bad bind names it or a region
 * of its own over the same bytes, and is posted on the binding QP or on a
 * QP of another PD. Type 1: the window first gets a good binding, which
 * still works afterwards, and the rkey the refused bind would have given
 * does not. Type 2: the window is free before, and after the refusal still
 * binds (on another QP), with the same key.
 */
struct bad_bind {
	int mw_type;
	int region;		/* access of the bad bind's own region; 0: the target's */
	bool exact;		/* the target's region covers the data alone */
	bool other_pd_qp;	/* posted on a QP of another PD */
	bool other_pd_mr;	/* a region of another PD over the same bytes */
	long addr;		/* the window's start, from the data's first byte */
	uint64_t len;		/* 0: WLEN */
	bool wrap;		/* len is such that addr + len wraps to 1 */
	int access;
};

static uint64_t bad_len(const struct bad_bind *bb, uint64_t addr)
{
	if (bb->wrap)
		return (uint64_t)0 - addr + 1;
	return bb->len ? bb->len : WLEN;
}

static struct ibv_mr *bad_region(const struct bad_bind *bb)
{
	struct ibv_pd *p = pd;
	struct ibv_mr *mr;

	if (!bb->region && !bb->other_pd_mr)
		return tgt.mr;
	if (bb->other_pd_mr)
		p = pd_new();
	if (!p)
		return NULL;
	mr = ibv_reg_mr(p, tgt.b->mem, 2 * GUARD + TLEN, bb->region ? bb->region : REGION);
	if (mr)
		own(O_MR, mr);
	else
		t_fail("ibv_reg_mr for the bad bind: %s", strerror(errno));
	return mr;
}

/* Where the bad bind goes: @b, or a QP of another PD connected to a QP of the case's PD. */
static struct end *bad_binder(const struct bad_bind *bb, struct end *b)
{
	struct ibv_pd *p;
	struct end *x, *y;

	if (!bb->other_pd_qp)
		return b;
	p = pd_new();
	if (!p || !pair_across(p, &x, &y))
		return NULL;
	return x;
}

static void bad_bind1(const struct bad_bind *bb)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_1);
	struct end *a, *b, *c, *d, *e, *f, *binder;
	uint64_t addr, id = next_id;
	struct ibv_mr *mr;
	struct win w, bad;

	next_id += 2;
	if (!mw || !bufs_new(REGION, bb->exact) || !rc_pair(&a, &b) || !rc_pair(&c, &d) ||
	    !rc_pair(&e, &f) || !bind1(b, &w, mw, WOFF, WLEN, RW))
		return;
	mr = bad_region(bb);
	binder = bad_binder(bb, b);
	if (!mr || !binder)
		return;
	addr = tva(0) + bb->addr;
	if (bind1_post(binder, mw, id, mr, addr, bad_len(bb, addr), bb->access))
		return;
	/* ibv_bind_mw moved mw->rkey on at posting: the refusal leaves the old one. */
	bad = (struct win){ .mw = mw, .rkey = mw->rkey, .off = WOFF };
	mw->rkey = w.rkey;
	expect_bind_err(binder, id);
	/* The pairs still connected: (a, b) too if the bad bind went elsewhere. */
	access_win(binder == b ? c : a, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS,
		   "the binding before the refused one");
	access_win(e, &bad, IBV_WR_RDMA_WRITE, 0, 1, IBV_WC_REM_ACCESS_ERR,
		   "the refused bind's rkey");
}

static void bad_bind2(const struct bad_bind *bb)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_2);
	struct end *a, *b, *c, *d, *binder;
	uint64_t addr, id = next_id;
	struct ibv_mr *mr;
	uint32_t rkey;
	struct win w;

	next_id += 2;
	if (!mw || !bufs_new(REGION, bb->exact) || !rc_pair(&a, &b) || !rc_pair(&c, &d))
		return;
	mr = bad_region(bb);
	binder = bad_binder(bb, b);
	if (!mr || !binder)
		return;
	rkey = ibv_inc_rkey(mw->rkey);
	addr = tva(0) + bb->addr;
	if (bind2_post(binder, mw, id, rkey, mr, addr, bad_len(bb, addr), bb->access))
		return;
	expect_bind_err(binder, id);
	if (bind2(d, &w, mw, rkey, WOFF, WLEN, RW))
		access_win(c, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS,
			   "the window bound after the refused bind");
}

static void bad_bind(const void *arg)
{
	const struct bad_bind *bb = arg;

	if (bb->mw_type == IBV_MW_TYPE_1)
		bad_bind1(bb);
	else
		bad_bind2(bb);
}

#define BAD(_type, ...)	(&(const struct bad_bind){ .mw_type = _type, __VA_ARGS__ })

/* A window may grant remote rights its region lacks; READ needs no LOCAL_WRITE. */
static void grants(int region, int access, enum ibv_wr_opcode op)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_1);
	struct end *a, *b;
	struct win w;

	if (!mw || !bufs_new(region, false) || !rc_pair(&a, &b) ||
	    !bind1(b, &w, mw, WOFF, WLEN, access))
		return;
	access_win(a, &w, op, 0, WLEN, IBV_WC_SUCCESS, "through the window");
}

static void mw_grants_write_region_lacks(void)
{
	grants(LW | MWB, RW, IBV_WR_RDMA_WRITE);
}

static void mw_grants_read_without_lw(void)
{
	grants(MWB, RR, IBV_WR_RDMA_READ);
}

/* LOCAL_WRITE among a window's flags means nothing, as rdma-core's tests bind them. */
static void mw_local_write_flag(void)
{
	grants(REGION, LW | RW, IBV_WR_RDMA_WRITE);
}

/* ---- zero-length binds and invalidation ---- */

/* A zero-length bind (with the region, or with none) leaves a type 1 window no byte. */
static void unbind1(bool with_mr)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_1);
	struct end *a, *b, *c, *d;
	uint64_t id = next_id++;
	struct win w, z;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) || !rc_pair(&c, &d) ||
	    !bind1(b, &w, mw, WOFF, WLEN, RW | RR))
		return;
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "bound");
	if (bind1_post(b, mw, id, with_mr ? tgt.mr : NULL, with_mr ? tva(WOFF) : 0, 0, 0) ||
	    !expect_wc(b->scq, id, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL, "zero-length bind"))
		return;
	z = (struct win){ .mw = mw, .rkey = mw->rkey, .off = WOFF };
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, 1, IBV_WC_REM_ACCESS_ERR, "the old rkey");
	access_win(c, &z, IBV_WR_RDMA_WRITE, 0, 1, IBV_WC_REM_ACCESS_ERR,
		   "the zero-length bind's rkey");
}

static void mw_unbind1_zero_length(void)
{
	unbind1(true);
}

static void mw_unbind1_no_region(void)
{
	unbind1(false);
}

/* ---- type 2 ---- */

static void mw_bind2_write_read(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_2);
	struct end *a, *b;
	struct win w;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) ||
	    !bind2(b, &w, mw, ibv_inc_rkey(mw->rkey), WOFF, WLEN, RW | RR))
		return;
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "whole window");
	fill(tgt.b->data + WOFF, WLEN, 63);
	fill(tgt.want + WOFF, WLEN, 63);
	access_win(a, &w, IBV_WR_RDMA_READ, 0, WLEN, IBV_WC_SUCCESS, "whole window");
}

/* The application's key byte, any of them: here one far from the allocated one. */
static void mw_bind2_key_byte(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_2);
	struct end *a, *b;
	struct win w;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) ||
	    !bind2(b, &w, mw, (mw->rkey & ~0xffu) | ((mw->rkey + 0x80) & 0xff), WOFF, WLEN, RW))
		return;
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "the chosen key");
}

static void mw_bind2_wr_api(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_2);
	struct ibv_mw_bind_info info;
	struct end *a, *b;
	struct ibv_qp_ex *qpx;
	struct win w;
	int ret;

	if (!mw || !bufs_new(REGION, false))
		return;
	a = end_new(IBV_QPT_RC, NULL, true);
	b = end_ex();
	if (!a || !b)
		return;
	if (!pair_connect_default(a, b))
		return;
	qpx = ibv_qp_to_qp_ex(b->qp);
	if (!qpx) {
		t_fail("ibv_qp_to_qp_ex: NULL");
		return;
	}
	info = (struct ibv_mw_bind_info){ .mr = tgt.mr, .addr = tva(WOFF), .length = WLEN,
					  .mw_access_flags = RW };
	w = (struct win){ .mw = mw, .rkey = ibv_inc_rkey(mw->rkey), .off = WOFF };
	ibv_wr_start(qpx);
	qpx->wr_id = 7;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, mw, w.rkey, &info);
	ret = ibv_wr_complete(qpx);
	t_check(!ret, "ibv_wr_complete: %s", strerror(ret));
	if (ret || !expect_wc(b->scq, 7, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL, "ibv_wr_bind_mw"))
		return;
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "through the window");
}

/* Only the binding QP's peer reaches a type 2 window. */
static void mw_bind2_other_qp(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_2);
	struct end *a, *b, *c, *d;
	struct win w;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) || !rc_pair(&c, &d) ||
	    !bind2(b, &w, mw, ibv_inc_rkey(mw->rkey), WOFF, WLEN, RW | RR))
		return;
	access_win(c, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_REM_ACCESS_ERR,
		   "arriving at another QP of the PD");
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "arriving at the binder");
}

/*
 * A bound type 2 window is not FREE: a second bind fails, from another QP
 * of the PD and from its own, and the first binding keeps working.
 */
static void mw_bind2_not_free(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_2);
	uint64_t id = next_id;
	struct end *a, *b, *c, *d;
	struct win w;

	next_id += 4;
	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) || !rc_pair(&c, &d) ||
	    !bind2(b, &w, mw, ibv_inc_rkey(mw->rkey), WOFF, WLEN, RW))
		return;
	if (bind2_post(d, mw, id, ibv_inc_rkey(w.rkey), tgt.mr, tva(0), TLEN, RW | RR))
		return;
	expect_bind_err(d, id);
	access_win(a, &w, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS,
		   "the first binding, after a bind from another QP");
	if (bind2_post(b, mw, id + 2, ibv_inc_rkey(w.rkey), tgt.mr, tva(0), TLEN, RW | RR))
		return;
	expect_bind_err(b, id + 2);
}

/* LOCAL_INV of a type 2 window's rkey frees it: the rkey stops working, it binds again. */
static void mw_local_inv2(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_2);
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV, .send_flags = IBV_SEND_SIGNALED };
	struct end *a, *b, *c, *d;
	struct win w1, w2;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) || !rc_pair(&c, &d) ||
	    !bind2(b, &w1, mw, ibv_inc_rkey(mw->rkey), WOFF, WLEN, RW))
		return;
	access_win(a, &w1, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "bound");
	inv.wr_id = next_id++;
	inv.invalidate_rkey = w1.rkey;
	if (post(b, &inv) ||
	    !expect_wc(b->scq, inv.wr_id, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, NULL, "LOCAL_INV"))
		return;
	access_win(a, &w1, IBV_WR_RDMA_WRITE, 0, 1, IBV_WC_REM_ACCESS_ERR, "invalidated rkey");
	if (!bind2(d, &w2, mw, ibv_inc_rkey(w1.rkey), WOFF, WLEN, RW))
		return;
	access_win(c, &w2, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "bound again");
	access_win(c, &w1, IBV_WR_RDMA_WRITE, 0, 1, IBV_WC_REM_ACCESS_ERR,
		   "the first binding's rkey after the second bind");
}

/* A SEND_WITH_INV from the peer invalidates the window it names. */
static void mw_send_inv2(void)
{
	struct ibv_mw *mw = mw_new(IBV_MW_TYPE_2);
	struct end *a, *b, *c, *d;
	struct ibv_send_wr snd;
	struct ibv_wc wc;
	struct win w1, w2;

	if (!mw || !bufs_new(REGION, false) || !rc_pair(&a, &b) || !rc_pair(&c, &d) ||
	    !bind2(b, &w1, mw, ibv_inc_rkey(mw->rkey), WOFF, WLEN, RW))
		return;
	snd = wr_send(next_id++, NULL, 0);
	snd.opcode = IBV_WR_SEND_WITH_INV;
	snd.invalidate_rkey = w1.rkey;
	if (post_recv(b, 1, NULL, 0) || post(a, &snd))
		return;
	expect_wc(a->scq, snd.wr_id, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "SEND_WITH_INV");
	if (expect_wc(b->rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "its receive")) {
		t_check(wc.wc_flags & IBV_WC_WITH_INV, "receive: wc_flags %#x without WITH_INV",
			wc.wc_flags);
		t_check(wc.invalidated_rkey == w1.rkey, "invalidated_rkey %#x, expected %#x",
			wc.invalidated_rkey, w1.rkey);
	}
	access_win(a, &w1, IBV_WR_RDMA_WRITE, 0, 1, IBV_WC_REM_ACCESS_ERR, "invalidated rkey");
	if (bind2(d, &w2, mw, ibv_inc_rkey(w1.rkey), WOFF, WLEN, RW))
		access_win(c, &w2, IBV_WR_RDMA_WRITE, 0, WLEN, IBV_WC_SUCCESS, "bound again");
}

const struct mw_case bind_cases[] = {
	CASE("the device reports type 1 and type 2B windows (max_mw, capability flags)",
	     mw_device_caps),
	CASE("alloc type 1: type, PD and context; dealloc succeeds", mw_alloc_type1),
	CASE("alloc type 2: type, PD and context; dealloc succeeds", mw_alloc_type2),
	CASE("alloc type 3: EINVAL or EOPNOTSUPP", mw_alloc_bad_type),
	CASE("two windows and a region of a PD: keys of three different indexes",
	     mw_alloc_distinct_keys),
	CASE("a window holds its PD: dealloc_pd EBUSY until dealloc_mw", mw_dealloc_frees),

	CASE("ibv_bind_mw of a type 2 window: EINVAL, nothing posted", mw_bind1_type2_einval),
	CASE("ibv_bind_mw of a zero-based type 1 window: EINVAL, nothing posted",
	     mw_bind1_zero_based_einval),
	CASE("type 1 bind: rkey ibv_inc_rkey'd, BIND_MW completion, WRITE and READ the window",
	     mw_bind1_write_read),
	CASE("type 1 rebind: a new rkey; WRITE with the old one REM_ACCESS_ERR, untouched",
	     mw_rebind1_old_rkey_write),
	CASE("type 1 rebind: READ with the old rkey REM_ACCESS_ERR, nothing read",
	     mw_rebind1_old_rkey_read),
	CASE("type 1 window over a region's first to last byte: binds, both bytes written",
	     mw_bind1_whole_region),
	CASE_ARG("type 1 bind, region without MW_BIND: MW_BIND_ERR, ERR, flush, no change",
		 bad_bind, BAD(1, .region = LW | RW | RR | RA, .addr = WOFF, .access = RW)),
	CASE_ARG("type 1 bind one byte past the region: MW_BIND_ERR, no change", bad_bind,
		 BAD(1, .exact = true, .len = TLEN + 1, .access = RW)),
	CASE_ARG("type 1 bind of the byte after the region's last: MW_BIND_ERR, no change",
		 bad_bind, BAD(1, .exact = true, .addr = TLEN, .len = 1, .access = RW)),
	CASE_ARG("type 1 bind from one byte before the region: MW_BIND_ERR, no change",
		 bad_bind, BAD(1, .exact = true, .addr = -1, .len = 2, .access = RW)),
	CASE_ARG("type 1 bind of length 2^64-1: MW_BIND_ERR, no change", bad_bind,
		 BAD(1, .exact = true, .len = UINT64_MAX, .access = RW)),
	CASE_ARG("type 1 bind whose addr + length wraps to 1: MW_BIND_ERR, no change",
		 bad_bind, BAD(1, .exact = true, .wrap = true, .access = RW)),
	CASE_ARG("type 1 REMOTE_WRITE window, region without LOCAL_WRITE: MW_BIND_ERR",
		 bad_bind, BAD(1, .region = RR | MWB, .addr = WOFF, .access = RW)),
	CASE_ARG("type 1 REMOTE_ATOMIC window, region without LOCAL_WRITE: MW_BIND_ERR",
		 bad_bind, BAD(1, .region = RR | MWB, .addr = WOFF, .access = RA)),
	CASE_ARG("type 1 bind posted on a QP of another PD: MW_BIND_ERR, no change", bad_bind,
		 BAD(1, .other_pd_qp = true, .addr = WOFF, .access = RW)),
	CASE("a window grants REMOTE_WRITE its region lacks: WRITE succeeds",
	     mw_grants_write_region_lacks),
	CASE("a REMOTE_READ window on a region without LOCAL_WRITE: binds, READ succeeds",
	     mw_grants_read_without_lw),
	CASE("a window's flags with LOCAL_WRITE besides REMOTE_WRITE: binds, WRITE succeeds",
	     mw_local_write_flag),

	CASE("type 1 zero-length bind: no byte through the old rkey or the new one",
	     mw_unbind1_zero_length),
	CASE("type 1 zero-length bind without a region: unbinds the same way",
	     mw_unbind1_no_region),

	CASE("type 2 bind with ibv_post_send: the application's rkey; WRITE and READ",
	     mw_bind2_write_read),
	CASE("type 2 bind with any key byte the application picks", mw_bind2_key_byte),
	CASE("type 2 bind with ibv_wr_bind_mw: WRITE through it", mw_bind2_wr_api),
	CASE("type 2: an access arriving at another QP of the PD: REM_ACCESS_ERR, untouched",
	     mw_bind2_other_qp),
	CASE("type 2 bound (not FREE): binds from another QP and its own MW_BIND_ERR",
	     mw_bind2_not_free),
	CASE_ARG("type 2 bind, region without MW_BIND: MW_BIND_ERR, ERR, flush, still free",
		 bad_bind, BAD(2, .region = LW | RW | RR | RA, .addr = WOFF, .access = RW)),
	CASE_ARG("type 2 bind one byte past the region: MW_BIND_ERR, still free", bad_bind,
		 BAD(2, .exact = true, .len = TLEN + 1, .access = RW)),
	CASE_ARG("type 2 bind whose addr + length wraps to 1: MW_BIND_ERR, still free",
		 bad_bind, BAD(2, .exact = true, .wrap = true, .access = RW)),
	CASE_ARG("type 2 REMOTE_WRITE window, region without LOCAL_WRITE: MW_BIND_ERR",
		 bad_bind, BAD(2, .region = RR | MWB, .addr = WOFF, .access = RW)),
	CASE_ARG("type 2 bind to a region of another PD: MW_BIND_ERR, still free", bad_bind,
		 BAD(2, .other_pd_mr = true, .addr = WOFF, .access = RW)),
	CASE_ARG("type 2 bind posted on a QP of another PD: MW_BIND_ERR, still free", bad_bind,
		 BAD(2, .other_pd_qp = true, .addr = WOFF, .access = RW)),
	CASE("type 2 LOCAL_INV: its rkey REM_ACCESS_ERR; binds again with a new rkey",
	     mw_local_inv2),
	CASE("type 2 SEND_WITH_INV: WITH_INV, invalidated_rkey; its rkey REM_ACCESS_ERR",
	     mw_send_inv2),

	{ NULL }
};
