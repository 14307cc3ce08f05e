// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows. A window is a TPT entry of its own over a slice of a
 * region's page list, with its own key, bounds and rights, so the gate
 * checks an access through a window against the window, byte by byte,
 * exactly as it checks a region.
 *
 * Binding, unbinding, deallocation and deregistration of a bound region
 * serialise on the TPT's lock, taken before any entry is looked up, so a
 * region's count of bound windows is exact when dereg reads it, and no
 * bind can find a window that dealloc is taking away. A window changes
 * only while it is not VALID, after the accesses in flight through it have
 * drained: an access that raced with a rebind fails its next chunk's check
 * and never reaches the new binding's memory.
 */

#include <linux/overflow.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "dev.h"
#include "mr.h"
#include "mw.h"
#include "pages.h"
#include "qp.h"
#include "trace.h"
#include "wqe.h"

/**
 * stag_mw_alloc() - the alloc_mw verb
 * @ibmw: the window the core allocated; type 1 or type 2
 * @udata: the user's command; stag takes no driver data
 *
 * The window starts unbound, with a key that names nothing accessible.
 *
 * Return: 0; -EINVAL for another type or driver data, or when the device
 * has max_mw windows already; -ENOMEM.
 */
int stag_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibmw->device);
	struct stag_mw *mw = to_stag_mw(ibmw);
	struct stag_tpt_entry *e;
	int ret;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (udata && udata->inlen)
		return -EINVAL;
	ret = stag_res_charge(&sdev->res, STAG_RES_MW);
	if (ret)
		return ret;
	ret = -ENOMEM;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		goto err_uncharge;
	stag_tpt_entry_init(e, STAG_TPT_MW, mw);
	e->pd = ibmw->pd;
	if (ibmw->type == IB_MW_TYPE_2)
		e->inv = STAG_TPT_INV_WINDOW;
	ret = stag_tpt_add(&sdev->tpt, e);
	if (ret)
		goto err_free;
	mw->entry = e;
	ibmw->rkey = e->key;
	return 0;

err_free:
	kfree(e);
err_uncharge:
	stag_res_uncharge(&sdev->res, STAG_RES_MW);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(stag_mw_alloc);

/**
 * stag_mw_dealloc() - the dealloc_mw verb
 * @ibmw: the window; a bound window is unbound first
 *
 * Unbinding and removal from the table happen under one hold of the
 * table's lock, so no bind can slip in between and bind a window that is
 * about to be freed.
 *
 * Return: 0.
 */
int stag_mw_dealloc(struct ib_mw *ibmw)
{
	struct stag_dev *sdev = to_stag_dev(ibmw->device);
	struct stag_mw *mw = to_stag_mw(ibmw);
	struct stag_tpt_entry *e = mw->entry;
	struct stag_tpt *tpt = &sdev->tpt;

	mutex_lock(&tpt->lock);
	/* The reference stag_tpt_unbind() wants its caller to hold. */
	refcount_inc(&e->ref);
	stag_tpt_unbind(tpt, e);
	stag_tpt_put(e);
	stag_tpt_remove(tpt, e);
	mutex_unlock(&tpt->lock);
	kfree_rcu(e, rcu);
	stag_res_uncharge(&sdev->res, STAG_RES_MW);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_mw_dealloc);

/**
 * stag_mw_check_bind() - may this bind happen?
 * @mw: the window's entry
 * @type: the window's type
 * @mr: the region's entry, or NULL when the lkey named none
 * @pd: the PD of the QP that binds
 * @b: the bind
 *
 * The rules of IBA 10.6.7 and C10-72 to C10-75, in a fixed order, each
 * with its own errno. A zero-length bind of a type 1 window unbinds it and
 * needs no region.
 *
 * Return: 0, or
 * -EPERM when the window or the region is of another PD than the QP,
 * -EINVAL for a new key of another index, rights a window cannot have
 * (MW_BIND, unknown bits), a zero-based type 1 window or a zero-length
 * type 2 bind,
 * -EBUSY for a type 2 window that is bound,
 * -ENOENT when the lkey names no valid region,
 * -EACCES for a region without MW_BIND, or remote write or atomic rights
 * over a region without local write,
 * -ERANGE when the window is not inside the region.
 */
int stag_mw_check_bind(const struct stag_tpt_entry *mw, enum ib_mw_type type,
		       const struct stag_tpt_entry *mr, const struct ib_pd *pd,
		       const struct stag_mw_bind *b)
{
	u64 last, mr_last;

	if (mw->pd != pd)
		return -EPERM;
	if (stag_key_index(b->new_rkey) != stag_key_index(mw->key))
		return -EINVAL;
	/*
	 * Local write means nothing for a window, which serves remote
	 * accesses only; consumers (rdma-core's tests among them) pass it,
	 * so it is let through and ignored.
	 */
	if (b->access & ~(STAG_MW_ACCESS | IB_ZERO_BASED | IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (type == IB_MW_TYPE_1 && b->access & IB_ZERO_BASED)
		return -EINVAL;
	if (type == IB_MW_TYPE_2 && stag_tpt_state(mw) == STAG_TPT_VALID)
		return -EBUSY;
	if (!b->length)
		return type == IB_MW_TYPE_1 ? 0 : -EINVAL;
	if (!mr || mr->type != STAG_TPT_MR || mr->key != b->mr_lkey ||
	    stag_tpt_state(mr) != STAG_TPT_VALID)
		return -ENOENT;
	if (mr->pd != pd)
		return -EPERM;
	if (!(mr->access & IB_ACCESS_MW_BIND))
		return -EACCES;
	if (b->access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	/* Last bytes, as in the gate: a region may end at U64_MAX. */
	if (b->addr < mr->iova || check_add_overflow(b->addr, b->length - 1, &last) ||
	    check_add_overflow(mr->iova, mr->length - 1, &mr_last) || last > mr_last)
		return -ERANGE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_mw_check_bind);

/**
 * stag_mw_set_window() - the translation of a window over a region
 * @e: the window's entry, not VALID
 * @mre: the region's entry, checked by stag_mw_check_bind()
 * @b: the bind
 * @qpn: for a type 2 window, the QP it is bound through; else 0
 *
 * The window names bytes [b->addr, b->addr + b->length) of the region as
 * [iova, iova + length), where iova is b->addr, or 0 for a zero-based
 * window; its page-list offset is where b->addr falls in the region's.
 */
VISIBLE_IF_KUNIT void stag_mw_set_window(struct stag_tpt_entry *e,
					 const struct stag_tpt_entry *mre,
					 const struct stag_mw_bind *b, u32 qpn)
{
	e->pages = mre->pages;
	e->pages_offset = b->addr - mre->iova + mre->pages_offset;
	e->iova = b->access & IB_ZERO_BASED ? 0 : b->addr;
	e->length = b->length;
	e->access = b->access & STAG_MW_ACCESS;
	e->qpn = qpn;
	WRITE_ONCE(e->key, b->new_rkey);
}
EXPORT_SYMBOL_IF_KUNIT(stag_mw_set_window);

/* Points the window at its slice of the region; the caller checked it. */
static void bind(struct stag_tpt *tpt, struct stag_mw *mw, struct stag_tpt_entry *mre,
		 const struct stag_mw_bind *b, u32 qpn)
{
	struct stag_tpt_entry *e = mw->entry;

	lockdep_assert_held(&tpt->lock);
	if (mre->pages)
		stag_pages_get(mre->pages);
	stag_mw_set_window(e, mre, b, mw->ibmw.type == IB_MW_TYPE_2 ? qpn : 0);
	atomic_inc(&mre->windows);
	e->parent = mre;
	mw->ibmw.rkey = b->new_rkey;
	stag_tpt_set_state(e, STAG_TPT_VALID);
}

static enum ib_wc_status bind_locked(struct stag_qp *qp, struct stag_mw *mw,
				     const struct stag_mw_bind *b)
{
	struct stag_tpt *tpt = &to_stag_dev(qp->ibqp.device)->tpt;
	struct stag_tpt_entry *mre = NULL;
	int ret;

	lockdep_assert_held(&tpt->lock);
	if (b->length)
		mre = stag_tpt_lookup(tpt, b->mr_lkey);
	ret = stag_mw_check_bind(mw->entry, mw->ibmw.type, mre, qp->ibqp.pd, b);
	if (ret) {
		stag_dbg_qp(qp, "bind of %#x: %d\n", b->mw_rkey, ret);
		goto out_put;
	}
	/* A type 1 window rebinds in place: the old binding ends first. */
	stag_tpt_unbind(tpt, mw->entry);
	if (b->length)
		bind(tpt, mw, mre, b, qp->ibqp.qp_num);
	else
		WRITE_ONCE(mw->entry->key, b->new_rkey);
out_put:
	if (mre)
		stag_tpt_put(mre);
	return ret ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
}

/**
 * stag_mw_bind() - run a BIND_MW work request
 * @qp: the QP whose send queue runs it
 * @wqe: the work request, copied and checked for its opcode
 *
 * Context: process context, under the QP's send mutex; takes the TPT's
 * lock and waits for accesses through the window to drain.
 * Return: IB_WC_SUCCESS, or IB_WC_MW_BIND_ERR with nothing changed.
 */
enum ib_wc_status stag_mw_bind(struct stag_qp *qp, const struct stag_swqe *wqe)
{
	struct stag_tpt *tpt = &to_stag_dev(qp->ibqp.device)->tpt;
	struct stag_mw_bind b = {
		.addr = wqe->hdr.wr.bind.addr,
		.length = wqe->hdr.wr.bind.length,
		.mw_rkey = wqe->hdr.wr.bind.mw_rkey,
		.new_rkey = wqe->hdr.wr.bind.new_rkey,
		.mr_lkey = wqe->hdr.wr.bind.mr_lkey,
		.access = wqe->hdr.wr.bind.access,
	};
	enum ib_wc_status status = IB_WC_MW_BIND_ERR;
	struct stag_tpt_entry *e;

	/*
	 * The window is named by its index: a consumer may still hold the key
	 * it was allocated with (a type 2 window's key is the consumer's and
	 * only travels in the bind). Its PD is what entitles the binding.
	 * The lock comes first: a reference held while waiting for it could
	 * be the one its holder waits to drain.
	 */
	mutex_lock(&tpt->lock);
	e = stag_tpt_lookup_index(tpt, stag_key_index(b.mw_rkey));
	if (e && e->type == STAG_TPT_MW)
		status = bind_locked(qp, e->owner, &b);
	if (e)
		stag_tpt_put(e);
	mutex_unlock(&tpt->lock);
	trace_stag_mw_bind(&qp->ibqp, b.mw_rkey, b.new_rkey, b.mr_lkey, b.addr, b.length,
			   b.access, status);
	return status;
}
EXPORT_SYMBOL_IF_KUNIT(stag_mw_bind);
