/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag tag matching: the tag list of a tag matching SRQ.
 */
#ifndef _STAG_TM_H
#define _STAG_TM_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/stag-abi.h>

#include "cq.h"
#include "wqe.h"

#define STAG_TM_MAX_TAGS	1024
/* Operations complete as they are posted: any number may be asked for. */
#define STAG_TM_MAX_OPS		STAG_TM_MAX_TAGS
/* A rendezvous message: its TMH and RVH, and room for the sender's own header. */
#define STAG_TM_MAX_RNDV_HDR	64

/* The tag matching header a message starts with (struct ibv_tmh). */
struct stag_tmh {
	u8 opcode;		/* STAG_TMH_* */
	u8 reserved[3];
	__be32 app_ctx;
	__be64 tag;
};

/* A rendezvous message's header, after its TMH (struct ibv_rvh). */
struct stag_rvh {
	__be64 va;
	__be32 rkey;
	__be32 len;
};

/* enum ibv_tmh_op */
enum stag_tmh_op {
	STAG_TMH_NO_TAG,
	STAG_TMH_RNDV,
	STAG_TMH_FIN,
	STAG_TMH_EAGER,
};

/* A tagged buffer: on the list of posted tags, or free. */
struct stag_tm_entry {
	struct list_head node;
	u64 tag;
	u64 mask;
	u64 wr_id;
	u16 gen;		/* the handle's upper half: a stale handle names nothing */
	bool posted;
	u8 num_sge;
	struct stag_sge sge[STAG_TM_MAX_SGE];
};

/*
 * The list and its phase: a message that finds no tag is unexpected,
 * and matching stops until software says it has seen them all (an
 * operation with STAG_TM_OPS_SYNC and the count), so that no tag posted
 * for a message that already came unexpected matches a later one.
 */
struct stag_tm {
	spinlock_t *lock;	/* the SRQ's: it guards everything here */
	u32 num_tags;
	u32 unexpected;		/* messages taken as unexpected */
	u32 synced;		/* the count software last reported */
	struct list_head posted;	/* oldest first: the first match wins */
	struct list_head free;
	struct stag_tm_entry ent[];
};

/* What became of a message at a tag matching SRQ. */
struct stag_tm_recv {
	u64 tag;
	u32 app_ctx;
	u8 op;			/* STAG_TMH_*; NO_TAG for one too short for a TMH */
	bool matched;		/* it took a tagged buffer, not a plain receive */
};

/* EAGER and RNDV carry a tag to match; nothing else does. */
static inline bool stag_tm_is_tagged(const struct stag_tm_recv *r)
{
	return r->op == STAG_TMH_EAGER || r->op == STAG_TMH_RNDV;
}

struct stag_tm *stag_tm_alloc(u32 num_tags, spinlock_t *lock);
void stag_tm_free(struct stag_tm *tm);
int stag_tm_op(struct stag_tm *tm, const struct stag_srq_op *op, u32 *handle, struct ib_wc *wc,
	       struct stag_cq_tm *ctm);
void stag_tm_classify(const struct stag_tmh *tmh, struct stag_tm_recv *r);
bool stag_tm_match(struct stag_tm *tm, struct stag_tm_recv *r, struct stag_rwqe *wqe);
void stag_tm_unexpected(struct stag_tm *tm, const struct stag_tm_recv *r);

#endif /* _STAG_TM_H */
