// SPDX-License-Identifier: GPL-2.0
/*
 * Tag matching: the tag list of an IB_SRQT_TM SRQ. Software adds tagged
 * buffers (ibv_post_srq_ops); a message whose tag matching header names
 * a tag one of them matches lands in it, the first posted first, and any
 * other lands whole in a plain receive of the SRQ's ring. Everything here
 * runs under the SRQ's lock; the SRQ produces the completions.
 *
 * A handle is an entry's index and, above it, the entry's generation, so
 * that a DEL racing the message that consumed its tag, with the entry
 * already posted again for another tag, finds nothing to delete.
 */

#include <kunit/visibility.h>
#include <linux/slab.h>

#include "tm.h"

#define HANDLE_INDEX_BITS	16

static_assert(BIT(HANDLE_INDEX_BITS) >= STAG_TM_MAX_TAGS);

static u32 handle_of(const struct stag_tm *tm, const struct stag_tm_entry *e)
{
	return (u32)e->gen << HANDLE_INDEX_BITS | (u32)(e - tm->ent);
}

/**
 * stag_tm_alloc() - a tag list
 * @num_tags: how many tagged buffers it holds, 1 to STAG_TM_MAX_TAGS
 * @lock: the SRQ's lock, which guards it
 *
 * Return: the list, or NULL.
 */
struct stag_tm *stag_tm_alloc(u32 num_tags, spinlock_t *lock)
{
	struct stag_tm *tm;
	u32 i;

	tm = kvzalloc(struct_size(tm, ent, num_tags), GFP_KERNEL_ACCOUNT);
	if (!tm)
		return NULL;
	tm->lock = lock;
	tm->num_tags = num_tags;
	INIT_LIST_HEAD(&tm->posted);
	INIT_LIST_HEAD(&tm->free);
	for (i = 0; i < num_tags; i++)
		list_add_tail(&tm->ent[i].node, &tm->free);
	return tm;
}
EXPORT_SYMBOL_IF_KUNIT(stag_tm_alloc);

void stag_tm_free(struct stag_tm *tm)
{
	kvfree(tm);
}
EXPORT_SYMBOL_IF_KUNIT(stag_tm_free);

static bool in_sync(const struct stag_tm *tm)
{
	return tm->synced == tm->unexpected;
}

static int tm_add(struct stag_tm *tm, const struct stag_srq_op *op, u32 *handle)
{
	struct stag_tm_entry *e;

	if (op->num_sge > STAG_TM_MAX_SGE)
		return -EINVAL;
	e = list_first_entry_or_null(&tm->free, struct stag_tm_entry, node);
	if (!e)
		return -ENOMEM;
	e->tag = op->tag;
	e->mask = op->mask;
	e->wr_id = op->recv_wr_id;
	e->num_sge = op->num_sge;
	memcpy(e->sge, op->sge, op->num_sge * sizeof(e->sge[0]));
	e->posted = true;
	list_move_tail(&e->node, &tm->posted);
	*handle = handle_of(tm, e);
	return 0;
}

static void tm_retire(struct stag_tm_entry *e, struct stag_tm *tm)
{
	e->posted = false;
	e->gen++;
	list_move_tail(&e->node, &tm->free);
}

/* A handle that names no posted tag: its tag was consumed, or deleted. */
static enum ib_wc_status tm_del(struct stag_tm *tm, u32 handle)
{
	u32 index = handle & (BIT(HANDLE_INDEX_BITS) - 1);
	struct stag_tm_entry *e = &tm->ent[index];

	if (!e->posted || handle_of(tm, e) != handle)
		return (enum ib_wc_status)STAG_WC_TM_ERR;
	tm_retire(e, tm);
	return IB_WC_SUCCESS;
}

/**
 * stag_tm_op() - one tag list operation
 * @tm: the list, its SRQ's lock held
 * @op: the operation, copied from the caller once
 * @handle: an ADD's handle
 * @wc: filled with the operation's completion
 * @ctm: its tag matching part
 *
 * With STAG_TM_OPS_SYNC, or for a SYNC, the operation first brings the
 * count of unexpected messages software has seen; matching resumes when
 * it is all there were. Its completion asks for a SYNC (TM_SYNC_REQ)
 * while software is behind.
 *
 * Return: 0 with @wc filled, which is to be posted when signaled or an
 * error (a DEL of a tag consumed or deleted: IBV_WC_TM_ERR); -EINVAL for
 * an unknown opcode or flag, more elements than STAG_TM_MAX_SGE, or a
 * handle past the list; -ENOMEM when the list is full. Nothing changes
 * on an error return.
 */
int stag_tm_op(struct stag_tm *tm, const struct stag_srq_op *op, u32 *handle, struct ib_wc *wc,
	       struct stag_cq_tm *ctm)
{
	int ret = 0;

	lockdep_assert_held(tm->lock);
	if (op->flags & ~(STAG_TM_OPS_SIGNALED | STAG_TM_OPS_SYNC))
		return -EINVAL;
	*wc = (struct ib_wc) { .wr_id = op->wr_id, .status = IB_WC_SUCCESS };
	*ctm = (struct stag_cq_tm) {};
	switch (op->opcode) {
	case STAG_TM_OP_ADD:
		wc->opcode = (enum ib_wc_opcode)STAG_WC_TM_ADD;
		ret = tm_add(tm, op, handle);
		break;
	case STAG_TM_OP_DEL:
		wc->opcode = (enum ib_wc_opcode)STAG_WC_TM_DEL;
		if ((op->handle & (BIT(HANDLE_INDEX_BITS) - 1)) >= tm->num_tags)
			return -EINVAL;
		wc->status = tm_del(tm, op->handle);
		break;
	case STAG_TM_OP_SYNC:
		wc->opcode = (enum ib_wc_opcode)STAG_WC_TM_SYNC;
		break;
	default:
		return -EINVAL;
	}
	if (ret)
		return ret;
	if (op->flags & STAG_TM_OPS_SYNC || op->opcode == STAG_TM_OP_SYNC)
		tm->synced = op->unexpected_cnt;
	if (op->unexpected_cnt != tm->unexpected)
		ctm->flags |= STAG_WC_TM_SYNC_REQ;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_tm_op);

/**
 * stag_tm_classify() - what a message's header says
 * @tmh: its first bytes, or NULL for a message shorter than a TMH
 * @r: filled: its opcode, tag and app_ctx, not yet matched
 */
void stag_tm_classify(const struct stag_tmh *tmh, struct stag_tm_recv *r)
{
	*r = (struct stag_tm_recv) { .op = STAG_TMH_NO_TAG };
	if (!tmh)
		return;
	r->op = tmh->opcode;
	r->tag = be64_to_cpu(tmh->tag);
	r->app_ctx = be32_to_cpu(tmh->app_ctx);
}
EXPORT_SYMBOL_IF_KUNIT(stag_tm_classify);

/**
 * stag_tm_match() - the tagged buffer a message takes
 * @tm: the list, its SRQ's lock held
 * @r: the message, classified; matched is set when a buffer is taken
 * @wqe: filled with the buffer, as a receive WQE
 *
 * A message matches an entry when its tag, masked by the entry's mask,
 * is the entry's tag (ibv_post_srq_ops(3)); the oldest such entry is
 * taken and its handle named nothing from then on. Only EAGER and RNDV
 * messages match, and none while software is behind on unexpected ones.
 *
 * Return: true when the message took a tagged buffer.
 */
bool stag_tm_match(struct stag_tm *tm, struct stag_tm_recv *r, struct stag_rwqe *wqe)
{
	struct stag_tm_entry *e;
	u32 i;

	lockdep_assert_held(tm->lock);
	if (!stag_tm_is_tagged(r) || !in_sync(tm))
		return false;
	list_for_each_entry(e, &tm->posted, node) {
		if ((r->tag & e->mask) != e->tag)
			continue;
		wqe->wr_id = e->wr_id;
		wqe->num_sge = e->num_sge;
		wqe->length = 0;
		for (i = 0; i < e->num_sge; i++) {
			wqe->sge[i] = e->sge[i];
			wqe->length += e->sge[i].length;
		}
		tm_retire(e, tm);
		r->matched = true;
		return true;
	}
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(stag_tm_match);

/**
 * stag_tm_unexpected() - a message took a plain receive
 * @tm: the list, its SRQ's lock held
 * @r: the message: one that carried a tag is unexpected, and matching
 *     stops until software has seen it
 */
void stag_tm_unexpected(struct stag_tm *tm, const struct stag_tm_recv *r)
{
	lockdep_assert_held(tm->lock);
	if (stag_tm_is_tagged(r))
		tm->unexpected++;
}
EXPORT_SYMBOL_IF_KUNIT(stag_tm_unexpected);
