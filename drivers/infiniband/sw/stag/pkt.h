/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag packet codec: the RoCE v2 transport headers of IBA volume 1,
 * chapter 9 and annex A17, laid out as rdma_rxe puts them on the wire, and
 * the ICRC. It knows nothing of QPs: it turns header bytes into a struct
 * stag_pkt and back, and says which headers each opcode carries.
 */
#ifndef _STAG_PKT_H
#define _STAG_PKT_H

#include <linux/types.h>

struct sk_buff;

#define STAG_ROCE_UDP_PORT	4791

#define STAG_BTH_LEN		12
#define STAG_RETH_LEN		16
#define STAG_AETH_LEN		4
#define STAG_ATMETH_LEN		28
#define STAG_ATMACK_LEN		8
#define STAG_IMM_LEN		4
#define STAG_IETH_LEN		4
#define STAG_DETH_LEN		8
#define STAG_ICRC_LEN		4
#define STAG_FETH_LEN		4
#define STAG_XRCETH_LEN		4
/* The longest run of transport headers an opcode has: BTH, XRCETH and AtomicETH. */
#define STAG_HDR_MAX		(STAG_BTH_LEN + STAG_XRCETH_LEN + STAG_ATMETH_LEN)

#define STAG_PKEY_DEFAULT	0xffff
#define STAG_GSI_QKEY		0x80010000
#define STAG_PSN_MASK		0xffffff

/* Transport classes: the top three bits of an opcode. */
#define STAG_OP_RC		0x00
#define STAG_OP_UC		0x20
#define STAG_OP_UD		0x60
#define STAG_OP_XRC		0xa0
#define STAG_OP_CLASS_MASK	0xe0

/*
 * The opcodes of IBA table 38 that stag sends or takes, RC numbering. XRC
 * has the same numbers for all but atomic write and flush, and its
 * requests carry an XRCETH after the BTH.
 */
enum stag_opcode {
	STAG_OP_SEND_FIRST		= 0x00,
	STAG_OP_SEND_MIDDLE		= 0x01,
	STAG_OP_SEND_LAST		= 0x02,
	STAG_OP_SEND_LAST_IMM		= 0x03,
	STAG_OP_SEND_ONLY		= 0x04,
	STAG_OP_SEND_ONLY_IMM		= 0x05,
	STAG_OP_WRITE_FIRST		= 0x06,
	STAG_OP_WRITE_MIDDLE		= 0x07,
	STAG_OP_WRITE_LAST		= 0x08,
	STAG_OP_WRITE_LAST_IMM		= 0x09,
	STAG_OP_WRITE_ONLY		= 0x0a,
	STAG_OP_WRITE_ONLY_IMM		= 0x0b,
	STAG_OP_READ_REQUEST		= 0x0c,
	STAG_OP_READ_RESP_FIRST		= 0x0d,
	STAG_OP_READ_RESP_MIDDLE	= 0x0e,
	STAG_OP_READ_RESP_LAST		= 0x0f,
	STAG_OP_READ_RESP_ONLY		= 0x10,
	STAG_OP_ACK			= 0x11,
	STAG_OP_ATOMIC_ACK		= 0x12,
	STAG_OP_CMP_SWAP		= 0x13,
	STAG_OP_FETCH_ADD		= 0x14,
	STAG_OP_SEND_LAST_INV		= 0x16,
	STAG_OP_SEND_ONLY_INV		= 0x17,
	STAG_OP_FLUSH			= 0x1c,	/* IBA 1.5, RC only */
	STAG_OP_ATOMIC_WRITE		= 0x1d,	/* IBA 1.5, RC only */
};

/* What an opcode carries and means (stag_pkt_ops[]). */
enum stag_pkt_flag {
	STAG_PKT_RETH		= BIT(0),
	STAG_PKT_AETH		= BIT(1),
	STAG_PKT_ATMETH		= BIT(2),
	STAG_PKT_ATMACK		= BIT(3),
	STAG_PKT_IMM		= BIT(4),
	STAG_PKT_IETH		= BIT(5),
	STAG_PKT_DETH		= BIT(6),
	STAG_PKT_PAYLOAD	= BIT(7),
	STAG_PKT_START		= BIT(8),	/* the first packet of a message */
	STAG_PKT_END		= BIT(9),	/* the last one */
	STAG_PKT_REQ		= BIT(10),	/* a request, for the responder */
	STAG_PKT_SEND		= BIT(11),
	STAG_PKT_WRITE		= BIT(12),
	STAG_PKT_READ		= BIT(13),	/* a read request */
	STAG_PKT_READ_RESP	= BIT(14),
	STAG_PKT_ATOMIC		= BIT(15),
	STAG_PKT_ACK		= BIT(16),	/* ACKNOWLEDGE */
	STAG_PKT_ATOMIC_ACK	= BIT(17),
	STAG_PKT_RECV		= BIT(18),	/* takes a receive WQE */
	STAG_PKT_COMP		= BIT(19),	/* completes a receive */
	STAG_PKT_ATOMIC_WRITE	= BIT(20),	/* answered by an empty READ_RESP_ONLY */
	STAG_PKT_FETH		= BIT(21),
	STAG_PKT_FLUSH		= BIT(22),	/* answered as an atomic write is */
	STAG_PKT_XRCETH		= BIT(23),	/* an XRC request: the SRQ it names */
};

struct stag_pkt_op {
	u32 flags;	/* enum stag_pkt_flag; 0: stag does not know the opcode */
	u8 hlen;	/* BTH and the extension headers */
};

extern const struct stag_pkt_op stag_pkt_ops[256];

/* AETH syndromes (IBA 9.7.5.1.8). */
#define STAG_AETH_TYPE_MASK	0xe0
#define STAG_AETH_ACK		0x00
#define STAG_AETH_RNR		0x20
#define STAG_AETH_NAK		0x60
#define STAG_AETH_CREDITS_NONE	0x1f	/* "invalid": end-to-end credits not used */
#define STAG_NAK_PSN_SEQ	0x60
#define STAG_NAK_INV_REQ	0x61
#define STAG_NAK_REM_ACCESS	0x62
#define STAG_NAK_REM_OP		0x63

/*
 * The FLUSH extended transport header (IBA 1.5, 9.3.5): the placement
 * type in bits 3-0 (IB_FLUSH_GLOBAL, IB_FLUSH_PERSISTENT), the
 * selectivity in bits 5-4 (IB_FLUSH_RANGE, IB_FLUSH_MR).
 */
#define STAG_XRCETH_SRQN_MASK	0xffffff

#define STAG_FETH_PLT_MASK	0x0f
#define STAG_FETH_SEL_MASK	0x30
#define STAG_FETH_SEL_SHIFT	4

/*
 * A packet's transport headers, decoded. Only the fields of the headers
 * its opcode carries mean anything.
 */
struct stag_pkt {
	u8 opcode;
	u8 pad;			/* bytes of pad after the payload */
	bool se;		/* solicited event */
	bool ackreq;
	u16 pkey;
	u32 qpn;		/* the destination QP */
	u32 psn;
	u32 flags;		/* stag_pkt_ops[opcode].flags */
	u32 hlen;		/* BTH and extension headers */
	u32 paylen;		/* payload, without pad and ICRC */
	u64 va;			/* RETH or AtomicETH */
	u32 rkey;
	u32 dmalen;		/* RETH */
	u8 flush_type;		/* FETH: its placement type */
	u8 flush_level;		/* and selectivity */
	u64 swap_add;		/* AtomicETH */
	u64 compare;
	u8 syndrome;		/* AETH */
	u32 msn;
	u64 orig;		/* AtomicAckETH */
	__be32 imm;		/* ImmDt, as the wire has it */
	u32 inv_rkey;		/* IETH */
	u32 qkey;		/* DETH */
	u32 src_qpn;
	u32 xrc_srqn;		/* XRCETH */
};

int stag_pkt_parse(const void *hdr, u32 len, struct stag_pkt *p);
void stag_pkt_build(void *hdr, const struct stag_pkt *p);
u8 stag_pkt_opcode(u8 class, u8 wr_opcode, bool first, bool last);
u32 stag_pkt_icrc(const struct sk_buff *skb, const void *bth);
u32 stag_pkt_icrc_rxe_flush(const struct sk_buff *skb, const void *bth);

/* 24-bit PSN arithmetic: a > b, a == b or a < b within half the space. */
static inline int stag_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8);
}

static inline u32 stag_psn_add(u32 psn, u32 n)
{
	return (psn + n) & STAG_PSN_MASK;
}

/* Bytes of pad that round @len up to a multiple of four. */
static inline u8 stag_pkt_pad(u32 len)
{
	return -len & 3;
}

#endif /* _STAG_PKT_H */
