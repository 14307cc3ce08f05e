/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * stag: user/kernel ABI shared by stag.ko and its libibverbs provider.
 *
 * Every structure here is the driver-private tail of a uverbs command or
 * response (struct ib_uverbs_*). Sizes are multiples of 8 bytes so that
 * 32-bit and 64-bit userspace lay them out identically. New fields are only
 * ever appended; the kernel copies min(sizeof, udata length), so an old
 * provider keeps working with a newer module.
 */
#ifndef STAG_ABI_USER_H
#define STAG_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/* Reported as the device's uverbs ABI version (sysfs abi_version). */
#define STAG_UVERBS_ABI_VERSION		1

/* Device names start with this prefix; the provider matches on it. */
#define STAG_DEVICE_NAME_PREFIX		"stag"

struct stag_alloc_ucontext_resp {
	__u32 abi_version;	/* STAG_UVERBS_ABI_VERSION */
	__u32 reserved;
};

struct stag_alloc_pd_resp {
	__u32 pdn;		/* the PD's number, as restrack shows it */
	__u32 reserved;
};

/*
 * Driver methods (ioctl() on the uverbs file, RDMA_VERBS_IOCTL). Method
 * and attribute IDs live in the driver namespace, above the core's.
 */

/* Methods added to UVERBS_OBJECT_MR. */
enum stag_mr_methods {
	STAG_METHOD_REG_SHARED_MR = (1U << UVERBS_ID_NS_SHIFT),
};

/* Methods added to UVERBS_OBJECT_PD. */
enum stag_pd_methods {
	STAG_METHOD_QUERY_PD = (1U << UVERBS_ID_NS_SHIFT),
};

/* Methods added to UVERBS_OBJECT_SRQ. */
enum stag_srq_methods {
	STAG_METHOD_SRQ_OPS = (1U << UVERBS_ID_NS_SHIFT),
};

/*
 * STAG_METHOD_SRQ_OPS: one tag list operation (ibv_post_srq_ops) on a tag
 * matching SRQ, a struct stag_srq_op; an ADD's handle comes back.
 */
enum stag_srq_ops_attrs {
	STAG_ATTR_SRQ_OPS_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	STAG_ATTR_SRQ_OPS_OP,			/* struct stag_srq_op in */
	STAG_ATTR_SRQ_OPS_RESP_HANDLE,		/* u32 out */
};

/*
 * STAG_METHOD_QUERY_PD: a PD of the context by its handle, as a process
 * that imported the context (ibv_import_pd) learns it; ENOENT for a
 * handle that names none.
 */
enum stag_query_pd_attrs {
	STAG_ATTR_QUERY_PD_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	STAG_ATTR_QUERY_PD_RESP_PDN,		/* u32 out */
};

/*
 * STAG_METHOD_REG_SHARED_MR: Register Shared Memory Region. A new region
 * over the pages of a user region of the same context, with its own keys,
 * iova, PD and access flags (enum ib_uverbs_access_flags, as a 32- or
 * 64-bit flags attribute). No new pages are pinned.
 */
enum stag_reg_shared_mr_attrs {
	STAG_ATTR_REG_SHARED_MR_HANDLE = (1U << UVERBS_ID_NS_SHIFT),	/* new MR */
	STAG_ATTR_REG_SHARED_MR_SRC_HANDLE,	/* MR whose pages are shared */
	STAG_ATTR_REG_SHARED_MR_PD_HANDLE,	/* PD of the new MR */
	STAG_ATTR_REG_SHARED_MR_IOVA,		/* u64 in */
	STAG_ATTR_REG_SHARED_MR_ACCESS_FLAGS,	/* flags in */
	STAG_ATTR_REG_SHARED_MR_RESP_LKEY,	/* u32 out */
	STAG_ATTR_REG_SHARED_MR_RESP_RKEY,	/* u32 out */
};

/*
 * Queues shared with the provider.
 *
 * Every send queue, receive queue, shared receive queue and completion
 * queue is a ring the provider mmap()s at the offset the create command
 * returns: a control block of STAG_QUEUE_CTL_SIZE bytes, then num_slots
 * slots of slot_size bytes each (num_slots a power of two). Indices are
 * free-running 32-bit counters; slot i lives at
 * STAG_QUEUE_CTL_SIZE + (i & (num_slots - 1)) * slot_size.
 *
 * Each index has one writer. The kernel keeps its own copy of the index it
 * owns and never reads it back from the ring; it reads the other side's
 * index once, checks it against its own (at most num_slots ahead), and
 * copies each slot it consumes into kernel memory once before looking at
 * it. A process that scribbles on a ring corrupts only its own queue.
 *
 * Send, receive and SRQ rings: the provider produces, the kernel consumes.
 * Completion rings: the kernel produces, the provider consumes.
 */
#define STAG_QUEUE_CTL_SIZE		128

struct stag_queue_ctl {
	__u32 prod;		/* next slot the producer fills */
	__u32 flags;		/* STAG_QUEUE_*, written by the kernel */
	__u32 reserved0[14];
	__u32 cons;		/* next slot the consumer takes */
	__u32 reserved1[15];
};

enum stag_queue_flags {
	/*
	 * Receive ring of a QP in the error state: receives posted now must
	 * be flushed, so the provider rings the receive doorbell after
	 * posting (a POST_RECV command with no work requests).
	 */
	STAG_QUEUE_FLUSH = 1 << 0,
};

/*
 * Ordering around STAG_QUEUE_FLUSH: the provider publishes prod, then a
 * full fence, then reads flags; the kernel sets the flag, then a full
 * barrier, then reads prod to flush. One side always sees the other.
 */

/*
 * Ring memory of the provider's own. A parent domain's allocator
 * (ibv_alloc_parent_domain) gives the provider memory for a ring; the
 * command that creates the ring (or resizes it) names it, and the kernel
 * pins it (charged to RLIMIT_MEMLOCK, as a region's pages are) and uses
 * it in place of a ring of its own, until the object is destroyed or its
 * ring replaced: the response's mmap offset is then 0. addr is page
 * aligned and len at least stag_ring_bytes() of the ring's geometry,
 * rounded up to the page size; addr 0 asks for the kernel's ring.
 *
 * The geometry is the kernel's rule, here so that both sides follow it:
 * a ring for n work requests has stag_ring_slots(n) slots (a completion
 * ring for cqe completions, stag_ring_slots(cqe + 1)), of
 * stag_send_slot_size() or stag_recv_slot_size() bytes, or the size of a
 * completion slot.
 */
struct stag_ring_mem {
	__aligned_u64 addr;
	__aligned_u64 len;
};

/* The most a ring may take, its control block included. */
#define STAG_RING_MAX_BYTES		(64U << 20)

static inline __u32 stag_ring_slots(__u32 n)
{
	__u32 slots = 1;

	while (slots < n && slots < (1U << 31))
		slots <<= 1;
	return slots;
}

static inline __u64 stag_ring_bytes(__u32 num_slots, __u32 slot_size)
{
	return (__u64)num_slots * slot_size + STAG_QUEUE_CTL_SIZE;
}

/* A scatter/gather element, laid out as struct ibv_sge. */
struct stag_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * A send queue slot: this header, then num_sge stag_sge or, with
 * IB_SEND_INLINE, inline_len bytes of data. opcode is an
 * enum ib_uverbs_wr_opcode, send_flags IB_SEND_* (== IBV_SEND_*).
 */
struct stag_send_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 num_sge;
	__u16 reserved0;
	__u32 send_flags;
	__u32 ex;		/* imm_data (network order) or invalidate_rkey */
	__u32 inline_len;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 length;
			__u32 rkey;
			__u8 type;		/* IB_FLUSH_GLOBAL | IB_FLUSH_PERSISTENT */
			__u8 level;		/* IB_FLUSH_RANGE or IB_FLUSH_MR */
			__u16 reserved;
		} flush;
		struct {
			__u32 ah;		/* ah_num from the create_ah response */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mw_rkey;		/* the window's current rkey */
			__u32 new_rkey;		/* the rkey it is to have */
			__u32 mr_lkey;
			__u32 access;		/* IB_ACCESS_* of the window */
		} bind;
		__u8 raw[32];
	} wr;
	__u32 xrc_srqn;		/* XRC INI: the remote XRC SRQ's number */
	__u32 reserved1;
};

#define STAG_SEND_WQE_HDR_SIZE		64

/* A receive or SRQ slot: this header, then num_sge stag_sge. */
struct stag_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

/* A send slot holds the header and max_sge entries or max_inline bytes. */
static inline __u32 stag_send_slot_size(__u32 max_sge, __u32 max_inline)
{
	__u32 body = max_sge * (__u32)sizeof(struct stag_sge);

	if (body < max_inline)
		body = max_inline;
	return (STAG_SEND_WQE_HDR_SIZE + body + 63) & ~63U;
}

static inline __u32 stag_recv_slot_size(__u32 max_sge)
{
	return (__u32)sizeof(struct stag_recv_wqe) + (max_sge ? max_sge : 1) *
	       (__u32)sizeof(struct stag_sge);
}

/*
 * A completion queue slot. status is an enum ib_wc_status (the values of
 * enum ibv_wc_status), opcode an enum ibv_wc_opcode value (the kernel's
 * enum ib_wc_opcode has the same values for every completion a user QP
 * can have: IB_UVERBS_WC_* and RECV = 128, RECV_RDMA_WITH_IMM = 129),
 * wc_flags
 * STAG_WC_* (the values of enum ibv_wc_flags, which differ from the
 * kernel's enum ib_wc_flags).
 */
struct stag_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 ex;		/* imm_data (network order) or invalidated rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u16 reserved;
};

/*
 * The slot of a CQ created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION
 * (its slot_size says so): the completion, then when the kernel wrote it,
 * on the two clocks the verbs read. The free-running clock counts the
 * nanoseconds of CLOCK_MONOTONIC (hca_core_clock is 1000000 kHz); the
 * wall clock is CLOCK_REALTIME in nanoseconds.
 */
struct stag_cqe_ts {
	struct stag_cqe cqe;
	__aligned_u64 completion_ts;
	__aligned_u64 wallclock_ns;
};

/*
 * The slot of a CQ created with STAG_CQ_TM_INFO: a stag_cqe_ts (its clocks
 * written only for a CQ with timestamps), then a tag matching completion's
 * tag and the app_ctx of its header, as ibv_wc_read_tm_info() reads them.
 */
struct stag_cqe_tm {
	struct stag_cqe_ts ts;
	__aligned_u64 tag;
	__u32 priv;
	__u32 reserved;
};

enum stag_wc_flags {
	STAG_WC_GRH = 1 << 0,
	STAG_WC_WITH_IMM = 1 << 1,
	STAG_WC_WITH_INV = 1 << 3,
	STAG_WC_TM_SYNC_REQ = 1 << 4,
	STAG_WC_TM_MATCH = 1 << 5,
	STAG_WC_TM_DATA_VALID = 1 << 6,
};

/* Tag matching completions: enum ibv_wc_opcode and ibv_wc_status values. */
enum stag_wc_tm_opcode {
	STAG_WC_TM_ADD = 130,
	STAG_WC_TM_DEL,
	STAG_WC_TM_SYNC,
	STAG_WC_TM_RECV,
	STAG_WC_TM_NO_TAG,
};

enum stag_wc_tm_status {
	STAG_WC_TM_ERR = 22,
	STAG_WC_TM_RNDV_INCOMPLETE,
};

/*
 * Driver tails of the create_cq and resize_cq commands: the ring's memory,
 * if the provider brings it.
 */
struct stag_create_cq_cmd {
	struct stag_ring_mem ring;
	__u32 flags;		/* STAG_CQ_*; 0 in a resize */
	__u32 reserved;
};

enum stag_cq_flags {
	/* Slots are struct stag_cqe_tm (IBV_WC_EX_WITH_TM_INFO). */
	STAG_CQ_TM_INFO = 1 << 0,
};

/* Driver tails of the create responses. */
struct stag_create_cq_resp {
	__aligned_u64 offset;	/* mmap offset of the completion ring */
	__u32 num_slots;
	__u32 slot_size;
};

/*
 * An XRC INI QP has no receive ring, an XRC TGT QP no ring at all: their
 * offsets and slot counts are 0.
 */
struct stag_create_qp_resp {
	__aligned_u64 sq_offset;	/* mmap offset of the send ring */
	__aligned_u64 rq_offset;	/* of the receive ring; 0 with an SRQ */
	__u32 sq_slots;
	__u32 sq_slot_size;
	__u32 rq_slots;
	__u32 rq_slot_size;
	__u32 max_inline;
	__u32 reserved;
};

/* The Toeplitz key of an RSS QP: 40 bytes, as a NIC's. */
#define STAG_RX_HASH_KEY_LEN	40

/*
 * Hash functions and fields: the values of enum ibv_rx_hash_function_flags
 * and enum ibv_rx_hash_fields.
 */
enum stag_rx_hash {
	STAG_RX_HASH_FUNC_TOEPLITZ	= 1 << 0,

	STAG_RX_HASH_SRC_IPV4		= 1 << 0,
	STAG_RX_HASH_DST_IPV4		= 1 << 1,
	STAG_RX_HASH_SRC_IPV6		= 1 << 2,
	STAG_RX_HASH_DST_IPV6		= 1 << 3,
	STAG_RX_HASH_SRC_PORT_TCP	= 1 << 4,
	STAG_RX_HASH_DST_PORT_TCP	= 1 << 5,
	STAG_RX_HASH_SRC_PORT_UDP	= 1 << 6,
	STAG_RX_HASH_DST_PORT_UDP	= 1 << 7,
};

/*
 * The driver tail of create_qp: the hash configuration of a QP with an
 * indirection table (an RSS QP, ibv_create_qp_ex() with
 * IBV_QP_INIT_ATTR_RX_HASH), all zero for any other QP; then the memory
 * of the QP's rings, if the provider brings it (never for an RSS QP,
 * which has none). A command may end after rx_hash_key.
 */
struct stag_create_qp_cmd {
	__aligned_u64 rx_hash_fields_mask;	/* STAG_RX_HASH_{SRC,DST}_* */
	__u8 rx_hash_function;		/* STAG_RX_HASH_FUNC_TOEPLITZ */
	__u8 rx_hash_key_len;		/* STAG_RX_HASH_KEY_LEN */
	__u8 reserved[6];
	__u8 rx_hash_key[STAG_RX_HASH_KEY_LEN];
	/* Memory of the provider's for the send and receive rings. */
	struct stag_ring_mem sq;
	struct stag_ring_mem rq;
};

/* A receive WQ's ring: its slots are an SRQ's. */
struct stag_create_wq_cmd {
	struct stag_ring_mem ring;
};

struct stag_create_wq_resp {
	__aligned_u64 offset;	/* mmap offset of the WQ's ring */
	__u32 num_slots;
	__u32 slot_size;
};

struct stag_create_srq_cmd {
	struct stag_ring_mem ring;
};

struct stag_create_srq_resp {
	__aligned_u64 offset;	/* mmap offset of the SRQ ring */
	__u32 num_slots;
	__u32 slot_size;
	__u32 srq_num;
	__u32 reserved;
};

/*
 * The driver tail of modify_srq, whose command has no response. A resize
 * (IB_SRQ_MAX_WR) of a user SRQ moves it to a new ring and writes where
 * that is, a struct stag_srq_ring, at ring_addr in the caller's memory,
 * as rxe's provider learns its resized SRQ.
 */
struct stag_modify_srq_cmd {
	__aligned_u64 ring_addr;
	struct stag_ring_mem ring;	/* the new ring's memory, if the provider's */
};

/*
 * Tag matching (IB_SRQT_TM). A tag list operation: opcode and flags are
 * the values of enum ibv_ops_wr_opcode and enum ibv_ops_flags; an ADD
 * brings num_sge (at most the device's tm_caps.max_sge) elements in sge.
 */
enum stag_tm_op {
	STAG_TM_OP_ADD,
	STAG_TM_OP_DEL,
	STAG_TM_OP_SYNC,
};

enum stag_tm_op_flags {
	STAG_TM_OPS_SIGNALED = 1 << 0,
	STAG_TM_OPS_SYNC = 1 << 1,
};

#define STAG_TM_MAX_SGE		4

struct stag_srq_op {
	__aligned_u64 wr_id;
	__aligned_u64 recv_wr_id;
	__aligned_u64 tag;
	__aligned_u64 mask;
	__u32 opcode;		/* STAG_TM_OP_* */
	__u32 flags;		/* STAG_TM_OPS_* */
	__u32 unexpected_cnt;
	__u32 handle;		/* DEL: what the ADD returned */
	__u32 num_sge;
	__u32 reserved;
	struct stag_sge sge[STAG_TM_MAX_SGE];
};

struct stag_srq_ring {
	__aligned_u64 offset;	/* mmap offset of the SRQ's new ring */
	__u32 num_slots;
	__u32 slot_size;
};

struct stag_create_ah_resp {
	__u32 ah_num;		/* names the AH in UD send WQEs */
	__u32 reserved;
};

#endif /* STAG_ABI_USER_H */
