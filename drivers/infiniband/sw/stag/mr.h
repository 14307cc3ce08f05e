/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag memory region: a TPT entry over a page list.
 */
#ifndef _STAG_MR_H
#define _STAG_MR_H

#include <rdma/ib_verbs.h>

#include "compat.h"
#include "tpt.h"

/* Regions and windows share the TPT's index space. */
#define STAG_MAX_MR		STAG_KEY_INDEX_MAX
#define STAG_MAX_FRMR_PAGES	65536

/* Access flags a region may be registered with. */
#define STAG_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			IB_ACCESS_MW_BIND | IB_ACCESS_ON_DEMAND | IB_ACCESS_OPTIONAL | \
			IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT | IB_ACCESS_HUGETLB)

struct stag_mr {
	struct ib_mr ibmr;
	struct stag_tpt_entry entry;
	u64 user_start;		/* user VA of the first byte, for re-pinning */
	u64 *frmr_pages;	/* fast registration: page addresses from map_mr_sg */
	/*
	 * Fast registration: the page list every REG_MR rewrites in place,
	 * allocated with the region, so that the I/O path allocates nothing.
	 */
	struct stag_pages *frmr_list;
	u32 frmr_max;
	u32 frmr_npages;
	u32 frmr_offset;	/* of the first byte in the first page */
};

struct stag_dev;
struct stag_qp;
struct stag_reg_wr;

static inline struct stag_mr *to_stag_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct stag_mr, ibmr);
}

int stag_mr_check_access(int access);
struct ib_mr *stag_mr_get_dma(struct ib_pd *ibpd, int access);
struct ib_mr *stag_mr_reg_user(struct ib_pd *ibpd, u64 start, u64 length, u64 iova,
			       int access, struct ib_dmah *dmah, struct ib_udata *udata);
STAG_DEFINE_REG_USER_MR(stag_mr_reg_user)
struct ib_mr *stag_mr_reg_dmabuf(struct ib_pd *ibpd, u64 offset, u64 length, u64 iova, int fd,
				 int access, struct ib_dmah *dmah);
STAG_DEFINE_REG_DMABUF_MR(stag_mr_reg_dmabuf)
struct ib_mr *stag_mr_rereg_user(struct ib_mr *ibmr, int flags, u64 start, u64 length,
				 u64 iova, int access, struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *stag_mr_reg_shared(struct ib_pd *ibpd, struct ib_mr *ibsrc, u64 iova, int access);
struct ib_mr *stag_mr_alloc(struct ib_pd *ibpd, enum ib_mr_type type, u32 max_num_sg);
int stag_mr_map_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
int stag_mr_advise(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice, u32 flags,
		   struct ib_sge *sg_list, u32 num_sge, struct uverbs_attr_bundle *attrs);
int stag_mr_fill_res_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int stag_mr_dereg(struct ib_mr *ibmr, struct ib_udata *udata);
enum ib_wc_status stag_mr_fast_reg(struct stag_qp *qp, const struct stag_reg_wr *reg);

#endif /* _STAG_MR_H */
