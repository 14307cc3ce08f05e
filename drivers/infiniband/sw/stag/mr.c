// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions. A region is a TPT entry plus what backs it: pinned user
 * pages, a kernel page list (fast registration), or nothing (the DMA MR,
 * whose iova is a kernel virtual address).
 */

#include <linux/hugetlb.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <kunit/visibility.h>
#include <rdma/restrack.h>

#include "dev.h"
#include "dmabuf.h"
#include "gate.h"
#include "mr.h"
#include "odp.h"
#include "qp.h"
#include "pages.h"
#include "tpt.h"
#include "trace.h"

/**
 * stag_mr_check_access() - check the access flags of a registration
 * @access: IB_ACCESS_* flags
 *
 * Optional flags (IB_ACCESS_OPTIONAL) are hints and are ignored.
 *
 * Return: 0; -EINVAL for a flag the verbs do not define, or for remote
 * write or remote atomic without local write (IBA 10.6.3.2: a region the
 * remote side may write must be locally writable); -EOPNOTSUPP for a
 * defined flag stag does not implement (the ZERO_BASED flag: zero-based
 * regions are registered with iova 0 instead), and for IB_ACCESS_HUGETLB
 * without IB_ACCESS_ON_DEMAND (it tells the paging of a region what backs
 * it; a pinned region's pages are known).
 * IB_ACCESS_ON_DEMAND passes: only user regions take it.
 * IB_ACCESS_FLUSH_PERSISTENT passes: the registration checks its pages
 * (stag_pages_persistent()).
 */
int stag_mr_check_access(int access)
{
	if (access & ~IB_ACCESS_SUPPORTED)
		return -EINVAL;
	if (access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (access & ~STAG_MR_ACCESS)
		return -EOPNOTSUPP;
	if (access & IB_ACCESS_HUGETLB && !(access & IB_ACCESS_ON_DEMAND))
		return -EOPNOTSUPP;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_mr_check_access);

/*
 * IB_ACCESS_HUGETLB on a region paged on demand says it lies in huge
 * pages (hugetlbfs). As for the core's own paged regions, the mapping of
 * its first byte must be such a one, or the registration is -EINVAL; an
 * implicit region is no one mapping. stag pages in 4 KiB pieces either
 * way: the flag is checked, not needed.
 */
static int mr_check_hugetlb(u64 start, u64 length, int access)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	int ret = 0;

	if (!(access & IB_ACCESS_HUGETLB))
		return 0;
	if (!start && length == U64_MAX)
		return -EINVAL;
	mmap_read_lock(mm);
	vma = vma_lookup(mm, start);
	if (!vma || !is_vm_hugetlb_page(vma))
		ret = -EINVAL;
	mmap_read_unlock(mm);
	return ret;
}

static bool mr_writable(int access)
{
	return access & (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			 IB_ACCESS_REMOTE_ATOMIC);
}

/*
 * A new region, counted against max_mr; @replace for one that replaces a
 * region still counted (rereg). ERR_PTR(-EINVAL) at the limit.
 */
static struct stag_mr *mr_alloc(struct ib_pd *ibpd, int access, bool replace)
{
	struct stag_dev *sdev = to_stag_dev(ibpd->device);
	struct stag_mr *mr;
	int ret;

	if (replace) {
		stag_res_charge_over(&sdev->res, STAG_RES_MR);
	} else {
		ret = stag_res_charge(&sdev->res, STAG_RES_MR);
		if (ret)
			return ERR_PTR(ret);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		stag_res_uncharge(&sdev->res, STAG_RES_MR);
		return ERR_PTR(-ENOMEM);
	}
	stag_tpt_entry_init(&mr->entry, STAG_TPT_MR, mr);
	mr->entry.pd = ibpd;
	mr->entry.access = access;
	return mr;
}

/* Frees a region that was never in the table. */
static void mr_free(struct stag_dev *sdev, struct stag_mr *mr)
{
	kfree(mr);
	stag_res_uncharge(&sdev->res, STAG_RES_MR);
}

/* Takes a region that never reached the core out of the table, and frees it. */
static void mr_destroy(struct stag_dev *sdev, struct stag_mr *mr)
{
	stag_tpt_remove(&sdev->tpt, &mr->entry);
	if (mr->frmr_list)
		stag_pages_put(mr->frmr_list);
	else if (mr->entry.pages)
		stag_pages_put(mr->entry.pages);
	kvfree(mr->frmr_pages);
	kfree_rcu(mr, entry.rcu);
	stag_res_uncharge(&sdev->res, STAG_RES_MR);
}

/* Publishes the region: from here on the gate may let accesses through. */
static int mr_publish(struct stag_dev *sdev, struct stag_mr *mr, bool valid)
{
	int ret = stag_tpt_add(&sdev->tpt, &mr->entry);

	if (ret)
		return ret;
	/*
	 * The rkey is the key whatever the rights, as on rxe and mlx5:
	 * consumers exchange it once and may add remote rights later by
	 * rereg. Remote access the region lacks is refused by the gate.
	 */
	mr->ibmr.lkey = mr->entry.key;
	mr->ibmr.rkey = mr->entry.key;
	if (valid) {
		const struct stag_tpt_entry *e = &mr->entry;
		const char *how = !e->pages ? "dma" : !e->pages->odp ? "reg" :
				  e->pages->odp->source ? "reg_dmabuf" : "reg_odp";

		stag_tpt_set_state(&mr->entry, STAG_TPT_VALID);
		trace_stag_mr_reg(&sdev->ibdev, how, e->key, e->iova, e->length, e->access);
	}
	return 0;
}

/**
 * stag_mr_get_dma() - the get_dma_mr verb: all of kernel memory
 * @ibpd: the PD
 * @access: IB_ACCESS_* flags
 *
 * With virtual DMA, kernel consumers' "DMA addresses" are kernel virtual
 * addresses, so the region spans [0, U64_MAX) and the gate's translation
 * of an address is the address itself.
 */
struct ib_mr *stag_mr_get_dma(struct ib_pd *ibpd, int access)
{
	struct stag_dev *sdev = to_stag_dev(ibpd->device);
	struct stag_mr *mr;
	int ret;

	ret = stag_mr_check_access(access);
	if (ret)
		return ERR_PTR(ret);
	if (access & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EOPNOTSUPP);
	/* All of kernel memory is not persistent. */
	if (access & IB_ACCESS_FLUSH_PERSISTENT)
		return ERR_PTR(-EINVAL);
	mr = mr_alloc(ibpd, access, false);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->entry.iova = 0;
	mr->entry.length = U64_MAX;
	ret = mr_publish(sdev, mr, true);
	if (ret) {
		mr_free(sdev, mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}
EXPORT_SYMBOL_IF_KUNIT(stag_mr_get_dma);

/*
 * Builds a user region over [start, start + length), pinning it, or over
 * @share when given (a page list for exactly that range, which gains a
 * reference and no pins). @replace: see mr_alloc().
 */
static struct ib_mr *user_mr_create(struct ib_pd *ibpd, u64 start, u64 length, u64 iova,
				    int access, struct stag_pages *share, bool replace)
{
	struct stag_dev *sdev = to_stag_dev(ibpd->device);
	struct stag_pages *pages;
	struct stag_mr *mr;
	u64 iova_last;
	int ret;

	ret = stag_mr_check_access(access);
	if (ret)
		return ERR_PTR(ret);
	/* The last byte may be U64_MAX; only a range past it wraps. */
	if (!length || check_add_overflow(iova, length - 1, &iova_last))
		return ERR_PTR(-EINVAL);
	/* An implicit region names the address space: addresses are iovas. */
	if (access & IB_ACCESS_ON_DEMAND && !start && length == U64_MAX && iova)
		return ERR_PTR(-EINVAL);

	mr = mr_alloc(ibpd, access, replace);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	if (share) {
		pages = share;
		stag_pages_get(pages);
	} else if (access & IB_ACCESS_ON_DEMAND) {
		ret = mr_check_hugetlb(start, length, access);
		if (ret)
			goto err_free_mr;
		pages = stag_pages_odp(start, length, &ret);
		if (!pages)
			goto err_free_mr;
	} else {
		pages = stag_pages_pin_user(start, length, mr_writable(access), &ret);
		if (!pages)
			goto err_free_mr;
		pages->pinned_stat = &sdev->pinned_pages;
		atomic64_add(pages->npages, pages->pinned_stat);
	}
	/* As rdma_rxe: the persistent right only over persistent memory. */
	if (access & IB_ACCESS_FLUSH_PERSISTENT && !stag_pages_persistent(pages)) {
		ret = -EINVAL;
		goto err_put_pages;
	}
	mr->user_start = start;
	/* The core sets these after reg_user_mr, but not after rereg. */
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->entry.pages = pages;
	mr->entry.pages_offset = offset_in_page(start);
	mr->entry.iova = iova;
	mr->entry.length = length;

	ret = mr_publish(sdev, mr, true);
	if (ret)
		goto err_put_pages;
	stag_dbg_dev(sdev, "lkey %#x iova %#llx length %llu pages %llu runs %u\n",
		     mr->ibmr.lkey, iova, length, pages->npages, pages->nruns);
	return &mr->ibmr;

err_put_pages:
	stag_pages_put(pages);
err_free_mr:
	mr_free(sdev, mr);
	return ERR_PTR(ret);
}

/**
 * stag_mr_reg_user() - the reg_user_mr verb
 * @ibpd: the PD
 * @start: the user virtual address of the first byte, any alignment
 * @length: the number of bytes, at least 1
 * @iova: the address the region's users name its first byte by
 * @access: IB_ACCESS_* flags
 * @dmah: a DMA handle (steering hints for a device's PCIe writes), which
 *	stag has no use for; NULL on kernels before 6.17
 * @udata: unused: stag has no driver data for this command
 *
 * Return: the region, or ERR_PTR(-EINVAL) for bad flags, an empty range,
 * one whose iova range wraps, or with max_mr regions on the device
 * already; -ENOMEM past RLIMIT_MEMLOCK or with the TPT full; -EFAULT for
 * memory that is not mapped; -EOPNOTSUPP with a DMA handle. Nothing is
 * pinned after a failure.
 */
struct ib_mr *stag_mr_reg_user(struct ib_pd *ibpd, u64 start, u64 length, u64 iova,
			       int access, struct ib_dmah *dmah, struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return user_mr_create(ibpd, start, length, iova, access, NULL, false);
}

/**
 * stag_mr_reg_dmabuf() - the reg_user_mr_dmabuf verb
 * @ibpd: the PD
 * @offset: the region's first byte, from the dma-buf's start
 * @length: the number of bytes, at least 1
 * @iova: the address the region's users name its first byte by
 * @fd: the dma-buf's file descriptor
 * @access: IB_ACCESS_* flags
 * @dmah: a DMA handle, which stag has no use for; NULL before 6.17
 *
 * The region's translation follows the exporter's (dmabuf.c): it is
 * emptied when the exporter moves the buffer and filled again by the next
 * access, as one paged on demand. The gate checks every access to it as
 * to any region. A rereg of its translation makes it a region over user
 * memory.
 *
 * Return: the region, or ERR_PTR(): as stag_mr_reg_user() for the flags,
 * the length and the iova; as stag_dmabuf_pages() for the fd and the
 * range; -EOPNOTSUPP with a DMA handle or IB_ACCESS_ON_DEMAND (the
 * exporter, not the page tables, says where the buffer is).
 */
struct ib_mr *stag_mr_reg_dmabuf(struct ib_pd *ibpd, u64 offset, u64 length, u64 iova, int fd,
				 int access, struct ib_dmah *dmah)
{
	struct stag_pages *pages;
	struct ib_mr *ibmr;
	int ret;

	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	ret = stag_mr_check_access(access);
	if (ret)
		return ERR_PTR(ret);
	if (access & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EOPNOTSUPP);
	pages = stag_dmabuf_pages(fd, offset, length, &ret);
	if (!pages)
		return ERR_PTR(ret);
	ibmr = user_mr_create(ibpd, offset, length, iova, access, pages, false);
	stag_pages_put(pages);
	return ibmr;
}

/*
 * A new PD or new rights keep the region and its keys, as consumers expect
 * (rdma-core's own tests exchange an rkey once and rereg around it). Pins
 * for write, when the new rights need them, are taken before anything
 * changes; then accesses in flight are waited out, and the entry changes
 * while it is not VALID.
 */
static struct ib_mr *rereg_in_place(struct stag_mr *mr, int flags, int access,
				    struct ib_pd *ibpd)
{
	struct stag_dev *sdev = to_stag_dev(mr->ibmr.device);
	struct stag_tpt_entry *e = &mr->entry;
	struct stag_pages *pages = NULL;
	int ret;

	if (!(flags & IB_MR_REREG_ACCESS))
		access = e->access;
	if (!(flags & IB_MR_REREG_PD))
		ibpd = e->pd;
	ret = stag_mr_check_access(access);
	if (ret)
		return ERR_PTR(ret);
	/* Paged on demand or pinned: that is the translation, which stays. */
	if ((access ^ e->access) & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EINVAL);
	if (access & ~e->access & IB_ACCESS_HUGETLB) {
		ret = mr_check_hugetlb(mr->user_start, e->length, access);
		if (ret)
			return ERR_PTR(ret);
	}
	if (mr_writable(access) && !e->pages->writable) {
		pages = stag_pages_pin_user(mr->user_start, e->length, true, &ret);
		if (!pages)
			return ERR_PTR(ret);
		pages->pinned_stat = &sdev->pinned_pages;
		atomic64_add(pages->npages, pages->pinned_stat);
	}
	if (access & IB_ACCESS_FLUSH_PERSISTENT && !stag_pages_persistent(pages ?: e->pages)) {
		if (pages)
			stag_pages_put(pages);
		return ERR_PTR(-EINVAL);
	}

	/* stag_tpt_invalidate() wants its caller to hold a reference. */
	refcount_inc(&e->ref);
	stag_tpt_invalidate(e);
	if (pages) {
		struct stag_pages *old = e->pages;

		WRITE_ONCE(e->pages, pages);
		pages = old;
	}
	e->pd = ibpd;
	e->access = access;
	stag_tpt_set_state(e, STAG_TPT_VALID);
	trace_stag_mr_reg(&sdev->ibdev, "rereg", e->key, e->iova, e->length, access);
	stag_tpt_put(e);
	if (pages)
		stag_pages_put(pages);
	return NULL;
}

/**
 * stag_mr_rereg_user() - the rereg_user_mr verb
 * @ibmr: the region
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD and/or IB_MR_REREG_ACCESS
 * @start: the new user address (IB_MR_REREG_TRANS)
 * @length: the new length (IB_MR_REREG_TRANS)
 * @iova: the new iova (IB_MR_REREG_TRANS)
 * @access: the new access flags (IB_MR_REREG_ACCESS)
 * @ibpd: the new PD (IB_MR_REREG_PD)
 * @udata: unused
 *
 * A new translation makes a new region with new keys, built beside the
 * old one; the core then deregisters the old region, so a failure leaves
 * the old region exactly as it was. A new PD or new rights alone change
 * the region in place and keep its keys; a failure changes nothing there
 * either.
 *
 * The core clears IB_MR_REREG_PD when the PD named is the region's own, so
 * a rereg may arrive with no flag left: nothing changes, and it succeeds.
 *
 * Return: the new region; NULL when the region changed in place (or did
 * not need to); or ERR_PTR(): -EINVAL for bad flags or arguments, -EBUSY
 * while windows are bound, and as for reg_user_mr.
 */
struct ib_mr *stag_mr_rereg_user(struct ib_mr *ibmr, int flags, u64 start, u64 length,
				 u64 iova, int access, struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibmr->device);
	struct stag_mr *old = to_stag_mr(ibmr);
	struct stag_tpt *tpt = &sdev->tpt;
	struct ib_mr *ret;

	if (flags & ~IB_MR_REREG_SUPPORTED)
		return ERR_PTR(-EINVAL);
	if (!old->entry.pages || !old->entry.pages->user)
		return ERR_PTR(-EINVAL);
	if (!flags)
		return NULL;
	if (!(flags & IB_MR_REREG_TRANS)) {
		/* No window may bind while the region changes under it. */
		mutex_lock(&tpt->lock);
		ret = atomic_read(&old->entry.windows) ? ERR_PTR(-EBUSY) :
			rereg_in_place(old, flags, access, ibpd);
		mutex_unlock(&tpt->lock);
		return ret;
	}

	if (!(flags & IB_MR_REREG_PD))
		ibpd = old->entry.pd;
	if (!(flags & IB_MR_REREG_ACCESS))
		access = old->entry.access;
	ret = user_mr_create(ibpd, start, length, iova, access, NULL, true);
	if (IS_ERR(ret))
		return ret;
	/*
	 * The core deregisters the old region once this returns, and a dereg
	 * that fails then would orphan it: the old region stops being VALID
	 * under the lock every bind takes, after the last look at its
	 * windows, so that none binds over it any more.
	 */
	mutex_lock(&tpt->lock);
	if (atomic_read(&old->entry.windows)) {
		mutex_unlock(&tpt->lock);
		mr_destroy(sdev, to_stag_mr(ret));
		return ERR_PTR(-EBUSY);
	}
	stag_tpt_set_state(&old->entry, STAG_TPT_INVALID);
	mutex_unlock(&tpt->lock);
	return ret;
}

/**
 * stag_mr_reg_shared() - a new region over the page list of another
 * @ibpd: the PD of the new region
 * @ibsrc: the user region whose pages and translation are shared
 * @iova: the address the new region's users name its first byte by
 * @access: IB_ACCESS_* flags of the new region
 *
 * The IBA's Register Shared Memory Region: the new region has its own
 * keys, iova, PD and rights over the same bytes as @ibsrc. It takes no
 * pins of its own; the page list stays pinned until the last region using
 * it is deregistered. The caller has checked that @ibsrc and @ibpd belong
 * to the same user context.
 *
 * Return: the new region, or ERR_PTR(): -EINVAL for bad flags, a source
 * that is not a user region, or an iova range that wraps; -EACCES for
 * write rights over pages that were pinned read-only; -EBUSY when the
 * source is not valid; as for reg_user_mr otherwise.
 */
struct ib_mr *stag_mr_reg_shared(struct ib_pd *ibpd, struct ib_mr *ibsrc, u64 iova, int access)
{
	struct stag_mr *src = to_stag_mr(ibsrc);
	struct stag_pages *pages = src->entry.pages;

	if (!pages || !pages->user)
		return ERR_PTR(-EINVAL);
	if (stag_tpt_state(&src->entry) != STAG_TPT_VALID)
		return ERR_PTR(-EBUSY);
	if (mr_writable(access) && !pages->writable)
		return ERR_PTR(-EACCES);
	/* The pages are shared as they are: pinned, or paged on demand. */
	if (!(access & IB_ACCESS_ON_DEMAND) != !pages->odp)
		return ERR_PTR(-EINVAL);
	return user_mr_create(ibpd, src->user_start, src->entry.length, iova, access, pages,
			      false);
}

/* An asynchronous prefetch: the range's gate reference goes with it. */
struct prefetch {
	struct work_struct work;
	struct stag_gate_ref ref;
	unsigned long first;
	unsigned long npages;
	bool write;
	bool fault;
};

static int prefetch_run(struct prefetch *p)
{
	int ret;

	stag_tpt_access_begin();
	ret = stag_odp_fault(p->ref.entry->pages->odp, p->first, p->npages, p->write, p->fault);
	stag_tpt_access_end();
	stag_gate_exit(&p->ref);
	return ret;
}

static void prefetch_work(struct work_struct *work)
{
	struct prefetch *p = container_of(work, struct prefetch, work);

	prefetch_run(p);
	kfree(p);
}

/**
 * stag_mr_advise() - the advise_mr verb: prefetch on-demand pages
 * @ibpd: the PD the keys must belong to
 * @advice: PREFETCH (for reading), PREFETCH_WRITE, or PREFETCH_NO_FAULT
 *          (take what is mapped already, fault nothing)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: the pages are there on return,
 *         and a failure to fault them is reported
 * @sg_list: the ranges, by lkey, address and length
 * @num_sge: their number
 * @attrs: unused
 *
 * Every range passes the gate as a local access would (key, PD, bounds,
 * and local write for PREFETCH_WRITE): that failure is reported either
 * way. Without FLUSH the faulting runs on a work that holds the range's
 * gate reference (a deregistration waits for it), and says nothing of
 * pages it could not fault, as an advice is free to be ignored.
 *
 * Return: 0; the gate's errno; -EINVAL for a region that is not paged on
 * demand; -EOPNOTSUPP for another advice; with FLUSH, as stag_odp_fault().
 */
int stag_mr_advise(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice, u32 flags,
		   struct ib_sge *sg_list, u32 num_sge, struct uverbs_attr_bundle *attrs)
{
	struct stag_dev *sdev = to_stag_dev(ibpd->device);
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	bool flush = flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH;
	struct stag_gate_who who = { .pd = ibpd };
	struct prefetch one, *p;
	int ret = 0;
	u32 i;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH && !write && fault)
		return -EOPNOTSUPP;
	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EOPNOTSUPP;
	for (i = 0; i < num_sge && !ret; i++) {
		if (!sg_list[i].length)
			continue;
		/* Without memory for the work, the prefetch runs here. */
		p = flush ? NULL : kmalloc(sizeof(*p), GFP_KERNEL);
		if (!p)
			p = &one;
		ret = stag_gate_enter(&sdev->tpt, sg_list[i].lkey, &who,
				      write ? IB_ACCESS_LOCAL_WRITE : 0, sg_list[i].addr,
				      sg_list[i].length, &p->ref);
		if (!ret && (!p->ref.entry->pages || !p->ref.entry->pages->odp)) {
			stag_gate_exit(&p->ref);
			ret = -EINVAL;
		}
		if (ret) {
			if (p != &one)
				kfree(p);
			break;
		}
		p->first = p->ref.offset >> PAGE_SHIFT;
		p->npages = ((p->ref.offset + sg_list[i].length - 1) >> PAGE_SHIFT) - p->first + 1;
		p->write = write;
		p->fault = fault;
		if (p != &one) {
			INIT_WORK(&p->work, prefetch_work);
			stag_odp_queue_work(&p->work);
			continue;
		}
		ret = prefetch_run(p);
		if (!flush)
			ret = 0;
	}
	return ret;
}

/**
 * stag_mr_alloc() - the alloc_mr verb: a region for fast registration
 * @ibpd: the PD
 * @type: only IB_MR_TYPE_MEM_REG
 * @max_num_sg: the most pages map_mr_sg may give it
 *
 * The region starts FREE: it has a key but no translation until an
 * IB_WR_REG_MR makes it valid.
 */
struct ib_mr *stag_mr_alloc(struct ib_pd *ibpd, enum ib_mr_type type, u32 max_num_sg)
{
	struct stag_dev *sdev = to_stag_dev(ibpd->device);
	struct stag_mr *mr;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > STAG_MAX_FRMR_PAGES)
		return ERR_PTR(-EINVAL);

	mr = mr_alloc(ibpd, 0, false);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->entry.inv = STAG_TPT_INV_REGION;
	ret = -ENOMEM;
	mr->frmr_pages = kvcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->frmr_pages)
		goto err_free_mr;
	/* A run per page at worst. */
	mr->frmr_list = stag_pages_alloc(max_num_sg);
	if (!mr->frmr_list)
		goto err_free_pages;
	mr->frmr_max = max_num_sg;
	ret = mr_publish(sdev, mr, false);
	if (ret)
		goto err_put_list;
	return &mr->ibmr;

err_put_list:
	stag_pages_put(mr->frmr_list);
err_free_pages:
	kvfree(mr->frmr_pages);
err_free_mr:
	mr_free(sdev, mr);
	return ERR_PTR(ret);
}

static int frmr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct stag_mr *mr = to_stag_mr(ibmr);

	if (mr->frmr_npages == mr->frmr_max)
		return -ENOMEM;
	mr->frmr_pages[mr->frmr_npages++] = addr;
	return 0;
}

/**
 * stag_mr_map_sg() - the map_mr_sg verb
 * @ibmr: a region from stag_mr_alloc()
 * @sg: the scatterlist, DMA-mapped (virtual DMA: kernel addresses)
 * @sg_nents: its length
 * @sg_offset: the offset into the first entry, updated
 *
 * Records the page list, page size, iova and length; the registration
 * itself happens when an IB_WR_REG_MR executes.
 *
 * Return: the number of entries mapped.
 */
int stag_mr_map_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct stag_mr *mr = to_stag_mr(ibmr);
	int ret;

	if (!mr->frmr_pages)
		return -EINVAL;
	mr->frmr_npages = 0;
	ret = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, frmr_set_page);
	mr->frmr_offset = ibmr->iova & (ibmr->page_size - 1);
	return ret;
}

/**
 * stag_mr_fill_res_entry() - driver attributes for rdma resource show mr
 * @msg: the netlink message
 * @ibmr: the region
 *
 * The core reports keys and length but not the iova. A user VA tells
 * where a process's memory lies, so only CAP_NET_ADMIN readers get it.
 * The number of memory windows bound to the region goes along.
 *
 * A rereg or a fast registration may swap the page list meanwhile: its
 * counts are read under RCU, which keeps a list that was let go.
 *
 * Return: 0, or -EMSGSIZE when the message is full.
 */
int stag_mr_fill_res_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct stag_mr *mr = to_stag_mr(ibmr);
	struct stag_pages *pages;
	struct nlattr *table;
	u64 npages = 0, odp[3] = {};
	bool listed, paged = false;
	u32 nruns = 0;

	rcu_read_lock();
	pages = READ_ONCE(mr->entry.pages);
	listed = pages;
	if (pages) {
		npages = READ_ONCE(pages->npages);
		nruns = READ_ONCE(pages->nruns);
		if (pages->odp) {
			paged = true;
			odp[0] = READ_ONCE(pages->odp->mapped);
			odp[1] = atomic64_read(&pages->odp->faults);
			odp[2] = atomic64_read(&pages->odp->invalidations);
		}
	}
	rcu_read_unlock();

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (capable(CAP_NET_ADMIN) &&
	    rdma_nl_put_driver_u64_hex(msg, "iova", mr->entry.iova))
		goto err_cancel;
	if (listed && (rdma_nl_put_driver_u64(msg, "pages", npages) ||
		       rdma_nl_put_driver_u32(msg, "runs", nruns)))
		goto err_cancel;
	if (paged && (rdma_nl_put_driver_u64(msg, "odp_mapped", odp[0]) ||
		      rdma_nl_put_driver_u64(msg, "odp_faults", odp[1]) ||
		      rdma_nl_put_driver_u64(msg, "odp_invalidations", odp[2])))
		goto err_cancel;
	/* The 6.12 core has no restrack type for windows: show them here. */
	if (rdma_nl_put_driver_u32(msg, "mw", atomic_read(&mr->entry.windows)))
		goto err_cancel;
	nla_nest_end(msg, table);
	return 0;

err_cancel:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

/**
 * stag_mr_dereg() - the dereg_mr verb
 * @ibmr: the region
 * @udata: unused
 *
 * Invalidates the entry so that new lookups fail, waits until accesses in
 * flight have let go, then unpins and frees.
 *
 * Return: 0, or -EBUSY while memory windows are bound to the region
 * (nothing changes then).
 */
int stag_mr_dereg(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibmr->device);
	struct stag_mr *mr = to_stag_mr(ibmr);
	struct stag_tpt *tpt = &sdev->tpt;

	/* Under the lock binds take, so that none binds after the count is read. */
	mutex_lock(&tpt->lock);
	if (atomic_read(&mr->entry.windows)) {
		mutex_unlock(&tpt->lock);
		return -EBUSY;
	}
	stag_tpt_set_state(&mr->entry, STAG_TPT_INVALID);
	mutex_unlock(&tpt->lock);
	trace_stag_mr_dereg(&sdev->ibdev, mr->entry.key);
	mr_destroy(sdev, mr);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_mr_dereg);

/*
 * Writes the page list of a fast registration (page_size pages, kernel
 * addresses) into the region's own list: no allocation on the I/O path.
 * The list is the region's alone here, as an invalidation with windows
 * bound over the region is refused.
 */
static int frmr_build_pages(struct stag_mr *mr)
{
	struct stag_pages *pages = mr->frmr_list;
	u32 per = mr->ibmr.page_size >> PAGE_SHIFT;
	u64 *runs = pages->runs;
	u32 i, n = 0;

	if (!per || mr->ibmr.page_size & (PAGE_SIZE - 1) || !mr->frmr_npages)
		return -EINVAL;
	if (WARN_ON_ONCE(refcount_read(&pages->ref) != 1))
		return -EBUSY;
	for (i = 0; i < mr->frmr_npages; i++) {
		unsigned long pfn = PHYS_PFN(virt_to_phys((void *)(uintptr_t)mr->frmr_pages[i]));

		if (n && stag_run_pfn(runs[n - 1]) + stag_run_len(runs[n - 1]) == pfn &&
		    stag_run_len(runs[n - 1]) + per <= STAG_RUN_MAX_PAGES)
			runs[n - 1] += (u64)per << STAG_RUN_LEN_SHIFT;
		else
			runs[n++] = stag_run_make(pfn, per);
	}
	stag_pages_set_runs(pages, n);
	return 0;
}

/**
 * stag_mr_fast_reg() - run a REG_MR work request
 * @qp: the QP whose send queue runs it (kernel QPs only)
 * @reg: the request: the region, its new key and rights
 *
 * Return: IB_WC_SUCCESS; IB_WC_LOC_PROT_ERR for a region that is not a
 * fast-registration region of the QP's PD; IB_WC_LOC_QP_OP_ERR for a key
 * of another index, a region that is valid, bad rights or page sizes.
 */
enum ib_wc_status stag_mr_fast_reg(struct stag_qp *qp, const struct stag_reg_wr *reg)
{
	struct stag_mr *mr = to_stag_mr((struct ib_mr *)(uintptr_t)reg->mr);
	struct stag_tpt_entry *e = &mr->entry;

	if (!mr->frmr_list || mr->ibmr.pd != qp->ibqp.pd)
		return IB_WC_LOC_PROT_ERR;
	if (stag_key_index(reg->key) != stag_key_index(e->key) ||
	    stag_tpt_state(e) == STAG_TPT_VALID || stag_mr_check_access(reg->access) ||
	    reg->access & (IB_ACCESS_ON_DEMAND | IB_ACCESS_FLUSH_PERSISTENT))
		return IB_WC_LOC_QP_OP_ERR;

	/*
	 * The entry is not VALID, and its last invalidation waited out every
	 * access, so nothing reads these fields until it is VALID again.
	 */
	if (frmr_build_pages(mr))
		return IB_WC_LOC_QP_OP_ERR;
	WRITE_ONCE(e->pages, mr->frmr_list);
	e->pages_offset = mr->frmr_offset;
	e->iova = mr->ibmr.iova;
	e->length = mr->ibmr.length;
	e->access = reg->access;
	WRITE_ONCE(e->key, reg->key);
	stag_tpt_set_state(e, STAG_TPT_VALID);
	trace_stag_mr_reg(mr->ibmr.device, "fast_reg", reg->key, e->iova, e->length, e->access);
	return IB_WC_SUCCESS;
}
EXPORT_SYMBOL_IF_KUNIT(stag_mr_fast_reg);
