// SPDX-License-Identifier: GPL-2.0
/*
 * Work queue entries. A WQE is read from its ring exactly once, by one
 * memcpy of the header and one of its scatter list or inline data, into
 * kernel memory; every check and every later use looks only at that copy.
 * The ring may be rewritten by its process at any moment, and nothing it
 * writes after the copy can change what the kernel does.
 */

#include <linux/overflow.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "ah.h"
#include "wqe.h"

/* Kernel consumers' scatter lists are copied into slots as they are. */
static_assert(sizeof(struct ib_sge) == sizeof(struct stag_sge));

#define SEND_FLAGS (IB_SEND_FENCE | IB_SEND_SIGNALED | IB_SEND_SOLICITED | IB_SEND_INLINE)

/* The rule is the ABI's: a provider sizes the memory it brings by it. */
u32 stag_wqe_send_slot_size(u32 max_sge, u32 max_inline)
{
	return stag_send_slot_size(max_sge, max_inline);
}
EXPORT_SYMBOL_IF_KUNIT(stag_wqe_send_slot_size);

u32 stag_wqe_recv_slot_size(u32 max_sge)
{
	return stag_recv_slot_size(max_sge);
}
EXPORT_SYMBOL_IF_KUNIT(stag_wqe_recv_slot_size);

/*
 * Which opcodes each QP type takes; kernel-only ones are checked apart.
 * An XRC INI QP has RC's opcodes of IBA 1.2 (XRC's table 38 rows);
 * memory windows are bound to RC and UC QPs only, and atomic write and
 * flush are RC's alone (IBA 1.5).
 */
static bool opcode_allowed(enum ib_qp_type type, u8 opcode)
{
	bool rc = type == IB_QPT_RC || type == IB_QPT_XRC_INI;

	/* A Raw Packet QP sends frames, nothing else. */
	if (type == IB_QPT_RAW_PACKET)
		return opcode == IB_WR_SEND;
	switch (opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
		return type != IB_QPT_XRC_TGT;
	case IB_WR_SEND_WITH_INV:
		/* UC has no SEND with Invalidate opcode (IBA 9.2): RC only. */
		return rc;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return rc || type == IB_QPT_UC;
	case IB_WR_BIND_MW:
		return type == IB_QPT_RC || type == IB_QPT_UC;
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return rc;
	case IB_WR_ATOMIC_WRITE:
	case IB_WR_FLUSH:
		return type == IB_QPT_RC;
	default:
		return false;
	}
}

/**
 * stag_wqe_check_send() - check a send WQE header against its QP
 * @lim: what the QP allows
 * @hdr: the header, already copied into kernel memory
 *
 * Return: IB_WC_SUCCESS, or IB_WC_LOC_QP_OP_ERR for an opcode the QP type
 * does not take (or a kernel-only one from userspace), unknown flags,
 * more scatter entries or inline bytes than the QP was created with, an
 * atomic write or a flush that names buffers, or a flush of an unknown
 * placement type or selectivity.
 */
enum ib_wc_status stag_wqe_check_send(const struct stag_wqe_limits *lim,
				      const struct stag_send_wqe *hdr)
{
	if (!opcode_allowed(lim->type, hdr->opcode))
		return IB_WC_LOC_QP_OP_ERR;
	if (hdr->opcode == IB_WR_REG_MR && lim->user)
		return IB_WC_LOC_QP_OP_ERR;
	if (hdr->send_flags & ~SEND_FLAGS)
		return IB_WC_LOC_QP_OP_ERR;
	/* An atomic write's value is in its header: it names no buffers. */
	if (stag_wqe_is_bufferless(hdr->opcode) &&
	    (hdr->send_flags & IB_SEND_INLINE || hdr->num_sge))
		return IB_WC_LOC_QP_OP_ERR;
	if (stag_wqe_is_flush(hdr->opcode) &&
	    !stag_wqe_flush_valid(hdr->wr.flush.type, hdr->wr.flush.level))
		return IB_WC_LOC_QP_OP_ERR;
	if (hdr->send_flags & IB_SEND_INLINE) {
		if (!stag_wqe_is_send(hdr->opcode) && !stag_wqe_is_write(hdr->opcode))
			return IB_WC_LOC_QP_OP_ERR;
		if (hdr->inline_len > lim->max_inline)
			return IB_WC_LOC_QP_OP_ERR;
	} else if (hdr->num_sge > lim->max_sge) {
		return IB_WC_LOC_QP_OP_ERR;
	}
	return IB_WC_SUCCESS;
}
EXPORT_SYMBOL_IF_KUNIT(stag_wqe_check_send);

static u64 sge_total(const struct stag_sge *sge, u32 num)
{
	u64 total = 0;
	u32 i;

	/* At most STAG_MAX_SGE u32 lengths: the u64 sum cannot wrap. */
	for (i = 0; i < num; i++)
		total += sge[i].length;
	return total;
}

/**
 * stag_wqe_fetch_send() - copy a send WQE out of its ring and check it
 * @lim: what the QP allows
 * @slot: the ring slot
 * @slot_size: its size, which bounds every copy
 * @wqe: the kernel copy to fill
 *
 * Return: IB_WC_SUCCESS; as stag_wqe_check_send(); IB_WC_LOC_LEN_ERR for a
 * message over 2 GiB, an atomic whose local buffer is not 8 bytes, or a
 * flush of a range over 2 GiB (a RETH's length has 32 bits).
 */
enum ib_wc_status stag_wqe_fetch_send(const struct stag_wqe_limits *lim, const void *slot,
				      u32 slot_size, struct stag_swqe *wqe)
{
	u32 room = slot_size - STAG_SEND_WQE_HDR_SIZE;
	enum ib_wc_status status;

	memcpy(&wqe->hdr, slot, sizeof(wqe->hdr));
	slot += STAG_SEND_WQE_HDR_SIZE;
	wqe->length = 0;
	status = stag_wqe_check_send(lim, &wqe->hdr);
	if (status)
		return status;

	if (wqe->hdr.send_flags & IB_SEND_INLINE) {
		if (wqe->hdr.inline_len > room)
			return IB_WC_LOC_QP_OP_ERR;
		wqe->hdr.num_sge = 0;
		memcpy(wqe->inline_data, slot, wqe->hdr.inline_len);
		wqe->length = wqe->hdr.inline_len;
	} else {
		if (wqe->hdr.num_sge * sizeof(struct stag_sge) > room)
			return IB_WC_LOC_QP_OP_ERR;
		memcpy(wqe->sge, slot, wqe->hdr.num_sge * sizeof(struct stag_sge));
		wqe->length = sge_total(wqe->sge, wqe->hdr.num_sge);
	}

	if (stag_wqe_is_atomic_write(wqe->hdr.opcode))
		wqe->length = sizeof(wqe->hdr.wr.atomic.swap);
	if (wqe->length > STAG_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	if (stag_wqe_is_flush(wqe->hdr.opcode) && wqe->hdr.wr.flush.level == IB_FLUSH_RANGE &&
	    wqe->hdr.wr.flush.length > STAG_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	if (stag_wqe_is_atomic(wqe->hdr.opcode) && wqe->length != sizeof(u64))
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}
EXPORT_SYMBOL_IF_KUNIT(stag_wqe_fetch_send);

/**
 * stag_wqe_fetch_recv() - copy a receive WQE out of its ring and check it
 * @slot: the ring slot
 * @slot_size: its size
 * @max_sge: the most scatter entries the queue was created with
 * @wqe: the kernel copy to fill
 *
 * Return: 0, or -EINVAL for too many scatter entries.
 */
int stag_wqe_fetch_recv(const void *slot, u32 slot_size, u32 max_sge, struct stag_rwqe *wqe)
{
	struct stag_recv_wqe hdr;

	memcpy(&hdr, slot, sizeof(hdr));
	wqe->wr_id = hdr.wr_id;
	wqe->num_sge = 0;
	wqe->length = 0;
	if (hdr.num_sge > max_sge ||
	    hdr.num_sge * sizeof(struct stag_sge) > slot_size - sizeof(hdr))
		return -EINVAL;
	wqe->num_sge = hdr.num_sge;
	memcpy(wqe->sge, slot + sizeof(hdr), hdr.num_sge * sizeof(struct stag_sge));
	wqe->length = sge_total(wqe->sge, wqe->num_sge);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_wqe_fetch_recv);

static int copy_inline(const struct ib_send_wr *wr, u32 max_inline, u8 *dst, u32 *len)
{
	u32 total = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		u32 n = wr->sg_list[i].length;

		if (n > max_inline - total)
			return -EINVAL;
		/* Kernel consumers' addresses are kernel virtual (virtual DMA). */
		memcpy(dst + total, (void *)(uintptr_t)wr->sg_list[i].addr, n);
		total += n;
	}
	*len = total;
	return 0;
}

static void fill_wr_fields(const struct ib_send_wr *wr, struct stag_send_wqe *hdr)
{
	/* Not a case below: before 6.2 enum ib_wr_opcode has no such value. */
	if (stag_wqe_is_atomic_write(wr->opcode)) {
		hdr->wr.atomic.remote_addr = rdma_wr(wr)->remote_addr;
		hdr->wr.atomic.rkey = rdma_wr(wr)->rkey;
		return;
	}
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		hdr->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		hdr->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		hdr->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		hdr->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		hdr->wr.atomic.swap = atomic_wr(wr)->swap;
		hdr->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR: {
		struct stag_reg_wr *reg = (struct stag_reg_wr *)hdr->wr.raw;

		reg->mr = (uintptr_t)reg_wr(wr)->mr;
		reg->key = reg_wr(wr)->key;
		reg->access = reg_wr(wr)->access;
		break;
	}
	default:
		break;
	}
}

/**
 * stag_wqe_from_send_wr() - write a kernel consumer's send WR into a slot
 * @lim: what the QP allows
 * @wr: the work request
 * @slot: the ring slot, sized for @lim
 *
 * Kernel consumers learn of malformed requests at post time.
 *
 * Return: 0, or -EINVAL for a request the QP cannot take.
 */
int stag_wqe_from_send_wr(const struct stag_wqe_limits *lim, const struct ib_send_wr *wr,
			  void *slot)
{
	struct stag_send_wqe *hdr = slot;
	u32 inline_len = 0;

	if (wr->opcode > U8_MAX || wr->num_sge < 0 || wr->num_sge > U8_MAX)
		return -EINVAL;
	memset(hdr, 0, sizeof(*hdr));
	hdr->wr_id = wr->wr_id;
	hdr->opcode = wr->opcode;
	hdr->send_flags = wr->send_flags;
	hdr->num_sge = wr->num_sge;
	if (wr->opcode == IB_WR_SEND_WITH_INV || wr->opcode == IB_WR_LOCAL_INV)
		hdr->ex = wr->ex.invalidate_rkey;
	else
		hdr->ex = (__force u32)wr->ex.imm_data;
	if ((lim->type == IB_QPT_UD || lim->type == IB_QPT_GSI) && stag_wqe_is_send(wr->opcode)) {
		hdr->wr.ud.ah = to_stag_ah(ud_wr(wr)->ah)->ah_num;
		hdr->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		hdr->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
	} else {
		fill_wr_fields(wr, hdr);
	}
	/* The kernel's send WRs have no form of a flush's fields. */
	if (stag_wqe_is_flush(wr->opcode))
		return -EINVAL;
	/*
	 * A kernel consumer's atomic write names its 8 bytes with its
	 * scatter list (kernel virtual addresses); they go into the header.
	 */
	if (stag_wqe_is_atomic_write(wr->opcode)) {
		if (wr->send_flags & IB_SEND_INLINE ||
		    copy_inline(wr, sizeof(hdr->wr.atomic.swap), (u8 *)&hdr->wr.atomic.swap,
				&inline_len) || inline_len != sizeof(hdr->wr.atomic.swap))
			return -EINVAL;
		hdr->num_sge = 0;
		return stag_wqe_check_send(lim, hdr) ? -EINVAL : 0;
	}
	/* The copy is bounded by max_inline; the opcode is checked after it. */
	if (wr->send_flags & IB_SEND_INLINE) {
		if (copy_inline(wr, lim->max_inline, slot + STAG_SEND_WQE_HDR_SIZE, &inline_len))
			return -EINVAL;
		hdr->inline_len = inline_len;
		hdr->num_sge = 0;
	}
	if (stag_wqe_check_send(lim, hdr) != IB_WC_SUCCESS)
		return -EINVAL;
	if (!(wr->send_flags & IB_SEND_INLINE))
		memcpy(slot + STAG_SEND_WQE_HDR_SIZE, wr->sg_list,
		       wr->num_sge * sizeof(struct ib_sge));
	return 0;
}

/**
 * stag_wqe_from_recv_wr() - write a kernel consumer's receive WR into a slot
 * @wr: the work request
 * @max_sge: the most scatter entries the queue takes
 * @slot: the ring slot
 *
 * Return: 0, or -EINVAL for too many scatter entries.
 */
int stag_wqe_from_recv_wr(const struct ib_recv_wr *wr, u32 max_sge, void *slot)
{
	struct stag_recv_wqe *hdr = slot;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	hdr->wr_id = wr->wr_id;
	hdr->num_sge = wr->num_sge;
	hdr->reserved = 0;
	memcpy(slot + sizeof(*hdr), wr->sg_list, wr->num_sge * sizeof(struct ib_sge));
	return 0;
}

enum ib_wc_opcode stag_wqe_wc_opcode(u8 opcode)
{
	switch (opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_ATOMIC_WRITE:
		return IB_WC_ATOMIC_WRITE;
	case IB_WR_FLUSH:
		return IB_WC_FLUSH;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;
	}
}
EXPORT_SYMBOL_IF_KUNIT(stag_wqe_wc_opcode);
