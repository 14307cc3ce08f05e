/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag work queue entries: how a send or receive WQE is copied out of its
 * ring into kernel memory once and checked there.
 */
#ifndef _STAG_WQE_H
#define _STAG_WQE_H

#include <rdma/ib_verbs.h>
#include <rdma/stag-abi.h>

#include "compat.h"

#define STAG_MAX_SGE		32
#define STAG_MAX_INLINE		512
#define STAG_MAX_QP_WR		16384
#define STAG_MAX_MSG_SIZE	0x80000000ULL

static_assert(sizeof(struct stag_send_wqe) == STAG_SEND_WQE_HDR_SIZE);

/* Kernel-only opcode in a kernel QP's ring: wr.raw carries stag_reg_wr. */
struct stag_reg_wr {
	u64 mr;			/* struct ib_mr * */
	u32 key;
	u32 access;
};

/* An address vector, copied out of an AH when a UD WQE is fetched. */
struct stag_av {
	union ib_gid sgid;
	union ib_gid dgid;
	enum rdma_network_type net_type;
	u32 flow_label;
	u8 traffic_class;
	u8 hop_limit;
	u8 sl;
};

/* A send WQE as the requester runs it. */
struct stag_swqe {
	struct stag_send_wqe hdr;
	struct stag_av av;	/* UD: the AH's address, copied */
	u64 length;		/* bytes the WQE moves */
	union {
		struct stag_sge sge[STAG_MAX_SGE];
		u8 inline_data[STAG_MAX_INLINE];
	};
};

/* A receive WQE as the responder uses it. */
struct stag_rwqe {
	u64 wr_id;
	u32 num_sge;
	u64 length;		/* bytes its buffers hold */
	struct stag_sge sge[STAG_MAX_SGE];
};

/* What a QP allows in its WQEs. */
struct stag_wqe_limits {
	enum ib_qp_type type;
	bool user;		/* user QPs may not use kernel-only opcodes */
	u32 max_sge;
	u32 max_inline;
};

u32 stag_wqe_send_slot_size(u32 max_sge, u32 max_inline);
u32 stag_wqe_recv_slot_size(u32 max_sge);
enum ib_wc_status stag_wqe_check_send(const struct stag_wqe_limits *lim,
				      const struct stag_send_wqe *hdr);
enum ib_wc_status stag_wqe_fetch_send(const struct stag_wqe_limits *lim, const void *slot,
				      u32 slot_size, struct stag_swqe *wqe);
int stag_wqe_fetch_recv(const void *slot, u32 slot_size, u32 max_sge, struct stag_rwqe *wqe);
int stag_wqe_from_send_wr(const struct stag_wqe_limits *lim, const struct ib_send_wr *wr,
			  void *slot);
int stag_wqe_from_recv_wr(const struct ib_recv_wr *wr, u32 max_sge, void *slot);
enum ib_wc_opcode stag_wqe_wc_opcode(u8 opcode);

static inline bool stag_wqe_is_send(u8 opcode)
{
	return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM ||
	       opcode == IB_WR_SEND_WITH_INV;
}

static inline bool stag_wqe_is_write(u8 opcode)
{
	return opcode == IB_WR_RDMA_WRITE || opcode == IB_WR_RDMA_WRITE_WITH_IMM;
}

static inline bool stag_wqe_is_atomic(u8 opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP || opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * RDMA Atomic Write (IBA 1.5): 8 bytes that land whole, with the R_Key's
 * remote write right, answered like a read. Its value travels in the
 * header (wr.atomic.swap, as the bytes are in memory) and its target in
 * wr.atomic.remote_addr and rkey: it has no local buffers.
 */
static inline bool stag_wqe_is_atomic_write(u8 opcode)
{
	return opcode == IB_WR_ATOMIC_WRITE;
}

/*
 * FLUSH (IBA 1.5, A19.4): makes what was placed in a range, or in a whole
 * region, globally visible or persistent, with the R_Key's flush rights;
 * answered like a read. Its target, placement type and selectivity are in
 * wr.flush: it has no local buffers, and moves no byte.
 */
static inline bool stag_wqe_is_flush(u8 opcode)
{
	return opcode == IB_WR_FLUSH;
}

/*
 * A FLUSH's placement type (IB_FLUSH_GLOBAL, IB_FLUSH_PERSISTENT or both)
 * and selectivity (IB_FLUSH_RANGE, IB_FLUSH_MR) as the verbs define them:
 * what the requester refuses to send and the responder to execute.
 */
static inline bool stag_wqe_flush_valid(u8 type, u8 level)
{
	return type && !(type & ~(IB_FLUSH_GLOBAL | IB_FLUSH_PERSISTENT)) &&
	       level <= IB_FLUSH_MR;
}

/* Requests with nothing to place at the requester, answered like a read. */
static inline bool stag_wqe_is_bufferless(u8 opcode)
{
	return stag_wqe_is_atomic_write(opcode) || stag_wqe_is_flush(opcode);
}

/* The requests that hold a responder resource: max_rd_atomic counts them. */
static inline bool stag_wqe_is_rd_atomic(u8 opcode)
{
	return opcode == IB_WR_RDMA_READ || stag_wqe_is_atomic(opcode) ||
	       stag_wqe_is_bufferless(opcode);
}

static inline bool stag_wqe_is_local(u8 opcode)
{
	return opcode == IB_WR_LOCAL_INV || opcode == IB_WR_REG_MR || opcode == IB_WR_BIND_MW;
}

#endif /* _STAG_WQE_H */
