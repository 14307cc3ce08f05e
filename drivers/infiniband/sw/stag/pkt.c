// SPDX-License-Identifier: GPL-2.0
/*
 * The packet codec. Headers are big-endian on the wire and may sit at any
 * alignment in a packet, so every field goes through get_unaligned_be*()
 * and put_unaligned_be*(); the layouts are IBA volume 1, 9.2 to 9.3, with
 * the opcodes and header orders of table 38 as rdma_rxe sends them.
 *
 * The ICRC (IBA A17.3.3) is a CRC-32 over the IP, UDP and transport
 * headers with their variant fields masked to ones, then the payload and
 * its pad. rdma_rxe stores it as the CRC's little-endian image, and stag
 * does the same: that is what every RoCE v2 peer of rxe accepts.
 */

#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <rdma/ib_verbs.h>
#include <kunit/visibility.h>

#include "compat.h"
#include "pkt.h"

#define H(x)	STAG_PKT_##x
#define SEND_PKT	(H(REQ) | H(SEND) | H(PAYLOAD))
#define WRITE_PKT	(H(REQ) | H(WRITE) | H(PAYLOAD))
#define ONLY	(H(START) | H(END))

/* Each opcode's headers and meaning; RC, UC and XRC share the sends and writes. */
#define F_SEND_FIRST		(SEND_PKT | H(START) | H(RECV))
#define F_SEND_MIDDLE		(SEND_PKT)
#define F_SEND_LAST		(SEND_PKT | H(END) | H(COMP))
#define F_SEND_LAST_IMM		(SEND_PKT | H(END) | H(COMP) | H(IMM))
#define F_SEND_ONLY		(SEND_PKT | ONLY | H(RECV) | H(COMP))
#define F_SEND_ONLY_IMM		(SEND_PKT | ONLY | H(RECV) | H(COMP) | H(IMM))
#define F_WRITE_FIRST		(WRITE_PKT | H(START) | H(RETH))
#define F_WRITE_MIDDLE		(WRITE_PKT)
#define F_WRITE_LAST		(WRITE_PKT | H(END))
#define F_WRITE_LAST_IMM	(WRITE_PKT | H(END) | H(IMM) | H(RECV) | H(COMP))
#define F_WRITE_ONLY		(WRITE_PKT | ONLY | H(RETH))
#define F_WRITE_ONLY_IMM	(WRITE_PKT | ONLY | H(RETH) | H(IMM) | H(RECV) | H(COMP))
#define F_READ_REQUEST		(H(REQ) | H(READ) | ONLY | H(RETH))
#define F_ATOMIC		(H(REQ) | H(ATOMIC) | ONLY | H(ATMETH))
#define F_SEND_LAST_INV		(SEND_PKT | H(END) | H(COMP) | H(IETH))
#define F_SEND_ONLY_INV		(SEND_PKT | ONLY | H(RECV) | H(COMP) | H(IETH))

#define OP_SEND_FIRST		{ F_SEND_FIRST, 12 }
#define OP_SEND_MIDDLE		{ F_SEND_MIDDLE, 12 }
#define OP_SEND_LAST		{ F_SEND_LAST, 12 }
#define OP_SEND_LAST_IMM	{ F_SEND_LAST_IMM, 16 }
#define OP_SEND_ONLY		{ F_SEND_ONLY, 12 }
#define OP_SEND_ONLY_IMM	{ F_SEND_ONLY_IMM, 16 }
#define OP_WRITE_FIRST		{ F_WRITE_FIRST, 28 }
#define OP_WRITE_MIDDLE		{ F_WRITE_MIDDLE, 12 }
#define OP_WRITE_LAST		{ F_WRITE_LAST, 12 }
#define OP_WRITE_LAST_IMM	{ F_WRITE_LAST_IMM, 16 }
#define OP_WRITE_ONLY		{ F_WRITE_ONLY, 28 }
#define OP_WRITE_ONLY_IMM	{ F_WRITE_ONLY_IMM, 32 }
#define OP_READ_REQUEST		{ F_READ_REQUEST, 28 }
#define OP_READ_RESP_FIRST	{ H(READ_RESP) | H(PAYLOAD) | H(START) | H(AETH), 16 }
#define OP_READ_RESP_MIDDLE	{ H(READ_RESP) | H(PAYLOAD), 12 }
#define OP_READ_RESP_LAST	{ H(READ_RESP) | H(PAYLOAD) | H(END) | H(AETH), 16 }
#define OP_READ_RESP_ONLY	{ H(READ_RESP) | H(PAYLOAD) | ONLY | H(AETH), 16 }
#define OP_ACK			{ H(ACK) | ONLY | H(AETH), 16 }
#define OP_ATOMIC_ACK		{ H(ATOMIC_ACK) | ONLY | H(AETH) | H(ATMACK), 24 }
#define OP_ATOMIC		{ F_ATOMIC, 40 }
#define OP_SEND_LAST_INV	{ F_SEND_LAST_INV, 16 }
#define OP_SEND_ONLY_INV	{ F_SEND_ONLY_INV, 16 }

/* An XRC request: RC's, with the XRCETH right after the BTH. */
#define XREQ(f, h)		{ (f) | H(XRCETH), (h) + STAG_XRCETH_LEN }

/*
 * Indexed by the opcode byte; a zero entry is an opcode a stag QP never
 * takes (RD, CNP, reserved ones), which the receive path drops as
 * malformed.
 */
const struct stag_pkt_op stag_pkt_ops[256] = {
	[STAG_OP_RC | STAG_OP_SEND_FIRST] = OP_SEND_FIRST,
	[STAG_OP_RC | STAG_OP_SEND_MIDDLE] = OP_SEND_MIDDLE,
	[STAG_OP_RC | STAG_OP_SEND_LAST] = OP_SEND_LAST,
	[STAG_OP_RC | STAG_OP_SEND_LAST_IMM] = OP_SEND_LAST_IMM,
	[STAG_OP_RC | STAG_OP_SEND_ONLY] = OP_SEND_ONLY,
	[STAG_OP_RC | STAG_OP_SEND_ONLY_IMM] = OP_SEND_ONLY_IMM,
	[STAG_OP_RC | STAG_OP_WRITE_FIRST] = OP_WRITE_FIRST,
	[STAG_OP_RC | STAG_OP_WRITE_MIDDLE] = OP_WRITE_MIDDLE,
	[STAG_OP_RC | STAG_OP_WRITE_LAST] = OP_WRITE_LAST,
	[STAG_OP_RC | STAG_OP_WRITE_LAST_IMM] = OP_WRITE_LAST_IMM,
	[STAG_OP_RC | STAG_OP_WRITE_ONLY] = OP_WRITE_ONLY,
	[STAG_OP_RC | STAG_OP_WRITE_ONLY_IMM] = OP_WRITE_ONLY_IMM,
	[STAG_OP_RC | STAG_OP_READ_REQUEST] = OP_READ_REQUEST,
	[STAG_OP_RC | STAG_OP_READ_RESP_FIRST] = OP_READ_RESP_FIRST,
	[STAG_OP_RC | STAG_OP_READ_RESP_MIDDLE] = OP_READ_RESP_MIDDLE,
	[STAG_OP_RC | STAG_OP_READ_RESP_LAST] = OP_READ_RESP_LAST,
	[STAG_OP_RC | STAG_OP_READ_RESP_ONLY] = OP_READ_RESP_ONLY,
	[STAG_OP_RC | STAG_OP_ACK] = OP_ACK,
	[STAG_OP_RC | STAG_OP_ATOMIC_ACK] = OP_ATOMIC_ACK,
	[STAG_OP_RC | STAG_OP_CMP_SWAP] = OP_ATOMIC,
	[STAG_OP_RC | STAG_OP_FETCH_ADD] = OP_ATOMIC,
	[STAG_OP_RC | STAG_OP_FLUSH] = { H(REQ) | H(FLUSH) | ONLY | H(FETH) | H(RETH), 32 },
	[STAG_OP_RC | STAG_OP_ATOMIC_WRITE] = {
		H(REQ) | H(ATOMIC_WRITE) | ONLY | H(RETH) | H(PAYLOAD), 28 },
	[STAG_OP_RC | STAG_OP_SEND_LAST_INV] = OP_SEND_LAST_INV,
	[STAG_OP_RC | STAG_OP_SEND_ONLY_INV] = OP_SEND_ONLY_INV,

	[STAG_OP_UC | STAG_OP_SEND_FIRST] = OP_SEND_FIRST,
	[STAG_OP_UC | STAG_OP_SEND_MIDDLE] = OP_SEND_MIDDLE,
	[STAG_OP_UC | STAG_OP_SEND_LAST] = OP_SEND_LAST,
	[STAG_OP_UC | STAG_OP_SEND_LAST_IMM] = OP_SEND_LAST_IMM,
	[STAG_OP_UC | STAG_OP_SEND_ONLY] = OP_SEND_ONLY,
	[STAG_OP_UC | STAG_OP_SEND_ONLY_IMM] = OP_SEND_ONLY_IMM,
	[STAG_OP_UC | STAG_OP_WRITE_FIRST] = OP_WRITE_FIRST,
	[STAG_OP_UC | STAG_OP_WRITE_MIDDLE] = OP_WRITE_MIDDLE,
	[STAG_OP_UC | STAG_OP_WRITE_LAST] = OP_WRITE_LAST,
	[STAG_OP_UC | STAG_OP_WRITE_LAST_IMM] = OP_WRITE_LAST_IMM,
	[STAG_OP_UC | STAG_OP_WRITE_ONLY] = OP_WRITE_ONLY,
	[STAG_OP_UC | STAG_OP_WRITE_ONLY_IMM] = OP_WRITE_ONLY_IMM,

	[STAG_OP_UD | STAG_OP_SEND_ONLY] = { SEND_PKT | ONLY | H(RECV) | H(COMP) | H(DETH), 20 },
	[STAG_OP_UD | STAG_OP_SEND_ONLY_IMM] = {
		SEND_PKT | ONLY | H(RECV) | H(COMP) | H(DETH) | H(IMM), 24 },

	[STAG_OP_XRC | STAG_OP_SEND_FIRST] = XREQ(F_SEND_FIRST, 12),
	[STAG_OP_XRC | STAG_OP_SEND_MIDDLE] = XREQ(F_SEND_MIDDLE, 12),
	[STAG_OP_XRC | STAG_OP_SEND_LAST] = XREQ(F_SEND_LAST, 12),
	[STAG_OP_XRC | STAG_OP_SEND_LAST_IMM] = XREQ(F_SEND_LAST_IMM, 16),
	[STAG_OP_XRC | STAG_OP_SEND_ONLY] = XREQ(F_SEND_ONLY, 12),
	[STAG_OP_XRC | STAG_OP_SEND_ONLY_IMM] = XREQ(F_SEND_ONLY_IMM, 16),
	[STAG_OP_XRC | STAG_OP_WRITE_FIRST] = XREQ(F_WRITE_FIRST, 28),
	[STAG_OP_XRC | STAG_OP_WRITE_MIDDLE] = XREQ(F_WRITE_MIDDLE, 12),
	[STAG_OP_XRC | STAG_OP_WRITE_LAST] = XREQ(F_WRITE_LAST, 12),
	[STAG_OP_XRC | STAG_OP_WRITE_LAST_IMM] = XREQ(F_WRITE_LAST_IMM, 16),
	[STAG_OP_XRC | STAG_OP_WRITE_ONLY] = XREQ(F_WRITE_ONLY, 28),
	[STAG_OP_XRC | STAG_OP_WRITE_ONLY_IMM] = XREQ(F_WRITE_ONLY_IMM, 32),
	[STAG_OP_XRC | STAG_OP_READ_REQUEST] = XREQ(F_READ_REQUEST, 28),
	[STAG_OP_XRC | STAG_OP_READ_RESP_FIRST] = OP_READ_RESP_FIRST,
	[STAG_OP_XRC | STAG_OP_READ_RESP_MIDDLE] = OP_READ_RESP_MIDDLE,
	[STAG_OP_XRC | STAG_OP_READ_RESP_LAST] = OP_READ_RESP_LAST,
	[STAG_OP_XRC | STAG_OP_READ_RESP_ONLY] = OP_READ_RESP_ONLY,
	[STAG_OP_XRC | STAG_OP_ACK] = OP_ACK,
	[STAG_OP_XRC | STAG_OP_ATOMIC_ACK] = OP_ATOMIC_ACK,
	[STAG_OP_XRC | STAG_OP_CMP_SWAP] = XREQ(F_ATOMIC, 40),
	[STAG_OP_XRC | STAG_OP_FETCH_ADD] = XREQ(F_ATOMIC, 40),
	[STAG_OP_XRC | STAG_OP_SEND_LAST_INV] = XREQ(F_SEND_LAST_INV, 16),
	[STAG_OP_XRC | STAG_OP_SEND_ONLY_INV] = XREQ(F_SEND_ONLY_INV, 16),
};
EXPORT_SYMBOL_IF_KUNIT(stag_pkt_ops);

/**
 * stag_pkt_parse() - decode a packet's transport headers and check them
 * @hdr: the BTH, followed by at least the opcode's headers in one piece
 * @len: bytes from the BTH to the end of the packet, ICRC included
 * @p: filled on success
 *
 * Checks what the headers alone can tell: a known opcode, the transport
 * version, a length that holds the headers, the pad and the ICRC, and no
 * payload where the opcode carries none. The rest (the QP, the PSN, the
 * ICRC itself) is for the receive path.
 *
 * Return: 0, or -EINVAL for a packet that is malformed.
 */
int stag_pkt_parse(const void *hdr, u32 len, struct stag_pkt *p)
{
	const u8 *b = hdr, *x;
	const struct stag_pkt_op *op;
	u32 w;

	if (len < STAG_BTH_LEN + STAG_ICRC_LEN)
		return -EINVAL;
	p->opcode = b[0];
	op = &stag_pkt_ops[p->opcode];
	if (!op->flags)
		return -EINVAL;
	/* Transport header version 0 (IBA 9.2.5). */
	if (b[1] & 0x0f)
		return -EINVAL;
	p->flags = op->flags;
	p->hlen = op->hlen;
	p->se = b[1] & 0x80;
	p->pad = (b[1] >> 4) & 3;
	p->pkey = get_unaligned_be16(b + 2);
	p->qpn = get_unaligned_be32(b + 4) & STAG_PSN_MASK;
	w = get_unaligned_be32(b + 8);
	p->ackreq = w & BIT(31);
	p->psn = w & STAG_PSN_MASK;
	if (len < p->hlen + p->pad + STAG_ICRC_LEN)
		return -EINVAL;
	p->paylen = len - p->hlen - p->pad - STAG_ICRC_LEN;
	if (!(p->flags & STAG_PKT_PAYLOAD) && (p->paylen || p->pad))
		return -EINVAL;

	x = b + STAG_BTH_LEN;
	if (p->flags & STAG_PKT_DETH) {
		p->qkey = get_unaligned_be32(x);
		p->src_qpn = get_unaligned_be32(x + 4) & STAG_PSN_MASK;
		x += STAG_DETH_LEN;
	}
	if (p->flags & STAG_PKT_XRCETH) {
		p->xrc_srqn = get_unaligned_be32(x) & STAG_XRCETH_SRQN_MASK;
		x += STAG_XRCETH_LEN;
	}
	if (p->flags & STAG_PKT_FETH) {
		w = get_unaligned_be32(x);
		p->flush_type = w & STAG_FETH_PLT_MASK;
		p->flush_level = (w & STAG_FETH_SEL_MASK) >> STAG_FETH_SEL_SHIFT;
		x += STAG_FETH_LEN;
	}
	if (p->flags & STAG_PKT_RETH) {
		p->va = get_unaligned_be64(x);
		p->rkey = get_unaligned_be32(x + 8);
		p->dmalen = get_unaligned_be32(x + 12);
		x += STAG_RETH_LEN;
	}
	if (p->flags & STAG_PKT_AETH) {
		w = get_unaligned_be32(x);
		p->syndrome = w >> 24;
		p->msn = w & STAG_PSN_MASK;
		x += STAG_AETH_LEN;
	}
	if (p->flags & STAG_PKT_ATMETH) {
		p->va = get_unaligned_be64(x);
		p->rkey = get_unaligned_be32(x + 8);
		p->swap_add = get_unaligned_be64(x + 12);
		p->compare = get_unaligned_be64(x + 20);
		x += STAG_ATMETH_LEN;
	}
	if (p->flags & STAG_PKT_ATMACK) {
		p->orig = get_unaligned_be64(x);
		x += STAG_ATMACK_LEN;
	}
	if (p->flags & STAG_PKT_IMM) {
		p->imm = get_unaligned((const __be32 *)x);
		x += STAG_IMM_LEN;
	}
	if (p->flags & STAG_PKT_IETH) {
		p->inv_rkey = get_unaligned_be32(x);
		x += STAG_IETH_LEN;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_pkt_parse);

/**
 * stag_pkt_build() - encode a packet's transport headers
 * @hdr: where the BTH goes; stag_pkt_ops[p->opcode].hlen bytes are written
 * @p: the opcode and the fields of the headers it carries
 *
 * The migration bit, transport version and the reserved bits are zero,
 * and the FECN and BECN bits clear, as rdma_rxe sends them.
 */
void stag_pkt_build(void *hdr, const struct stag_pkt *p)
{
	u32 flags = stag_pkt_ops[p->opcode].flags;
	u8 *b = hdr, *x = b + STAG_BTH_LEN;

	b[0] = p->opcode;
	b[1] = (p->se ? 0x80 : 0) | (p->pad & 3) << 4;
	put_unaligned_be16(p->pkey, b + 2);
	put_unaligned_be32(p->qpn & STAG_PSN_MASK, b + 4);
	put_unaligned_be32((p->ackreq ? BIT(31) : 0) | (p->psn & STAG_PSN_MASK), b + 8);
	if (flags & STAG_PKT_DETH) {
		put_unaligned_be32(p->qkey, x);
		put_unaligned_be32(p->src_qpn & STAG_PSN_MASK, x + 4);
		x += STAG_DETH_LEN;
	}
	if (flags & STAG_PKT_XRCETH) {
		put_unaligned_be32(p->xrc_srqn & STAG_XRCETH_SRQN_MASK, x);
		x += STAG_XRCETH_LEN;
	}
	if (flags & STAG_PKT_FETH) {
		put_unaligned_be32((p->flush_type & STAG_FETH_PLT_MASK) |
				   (p->flush_level << STAG_FETH_SEL_SHIFT & STAG_FETH_SEL_MASK), x);
		x += STAG_FETH_LEN;
	}
	if (flags & STAG_PKT_RETH) {
		put_unaligned_be64(p->va, x);
		put_unaligned_be32(p->rkey, x + 8);
		put_unaligned_be32(p->dmalen, x + 12);
		x += STAG_RETH_LEN;
	}
	if (flags & STAG_PKT_AETH) {
		put_unaligned_be32((u32)p->syndrome << 24 | (p->msn & STAG_PSN_MASK), x);
		x += STAG_AETH_LEN;
	}
	if (flags & STAG_PKT_ATMETH) {
		put_unaligned_be64(p->va, x);
		put_unaligned_be32(p->rkey, x + 8);
		put_unaligned_be64(p->swap_add, x + 12);
		put_unaligned_be64(p->compare, x + 20);
		x += STAG_ATMETH_LEN;
	}
	if (flags & STAG_PKT_ATMACK) {
		put_unaligned_be64(p->orig, x);
		x += STAG_ATMACK_LEN;
	}
	if (flags & STAG_PKT_IMM) {
		put_unaligned(p->imm, (__be32 *)x);
		x += STAG_IMM_LEN;
	}
	if (flags & STAG_PKT_IETH)
		put_unaligned_be32(p->inv_rkey, x);
}
EXPORT_SYMBOL_IF_KUNIT(stag_pkt_build);

/* FIRST, MIDDLE, LAST or ONLY of a family whose FIRST is @first_op. */
static u8 seq_op(u8 first_op, bool first, bool last, u8 last_op, u8 only_op)
{
	if (first && last)
		return only_op;
	if (first)
		return first_op;
	return last ? last_op : first_op + 1;
}

/**
 * stag_pkt_opcode() - the opcode of one packet of a message
 * @class: STAG_OP_RC, STAG_OP_UC, STAG_OP_UD or STAG_OP_XRC
 * @wr_opcode: the message's IB_WR_* opcode
 * @first: the packet is the message's first
 * @last: the packet is the message's last
 *
 * Immediate data and invalidation ride on the last packet, as IBA 9.4.1
 * orders. A read request, an atomic, an atomic write, a flush and a UD
 * send are always one packet.
 *
 * Return: the opcode, or 0xff when @class has no packet for the message
 * (UC has no read, atomic or invalidate; UD sends only, in one packet;
 * XRC no atomic write or flush).
 */
u8 stag_pkt_opcode(u8 class, u8 wr_opcode, bool first, bool last)
{
	u8 op;

	switch (wr_opcode) {
	case IB_WR_SEND:
		op = seq_op(STAG_OP_SEND_FIRST, first, last, STAG_OP_SEND_LAST, STAG_OP_SEND_ONLY);
		break;
	case IB_WR_SEND_WITH_IMM:
		op = seq_op(STAG_OP_SEND_FIRST, first, last, STAG_OP_SEND_LAST_IMM,
			    STAG_OP_SEND_ONLY_IMM);
		break;
	case IB_WR_SEND_WITH_INV:
		op = seq_op(STAG_OP_SEND_FIRST, first, last, STAG_OP_SEND_LAST_INV,
			    STAG_OP_SEND_ONLY_INV);
		break;
	case IB_WR_RDMA_WRITE:
		op = seq_op(STAG_OP_WRITE_FIRST, first, last, STAG_OP_WRITE_LAST,
			    STAG_OP_WRITE_ONLY);
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		op = seq_op(STAG_OP_WRITE_FIRST, first, last, STAG_OP_WRITE_LAST_IMM,
			    STAG_OP_WRITE_ONLY_IMM);
		break;
	case IB_WR_RDMA_READ:
		op = STAG_OP_READ_REQUEST;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		op = STAG_OP_CMP_SWAP;
		break;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		op = STAG_OP_FETCH_ADD;
		break;
	case IB_WR_ATOMIC_WRITE:
		op = STAG_OP_ATOMIC_WRITE;
		break;
	case IB_WR_FLUSH:
		op = STAG_OP_FLUSH;
		break;
	default:
		return 0xff;
	}
	if (class == STAG_OP_UD && !(first && last))
		return 0xff;
	op |= class;
	return stag_pkt_ops[op].flags ? op : 0xff;
}
EXPORT_SYMBOL_IF_KUNIT(stag_pkt_opcode);

/*
 * The CRC-32 of @len bytes of @skb from @off on, continuing @crc: through
 * the linear part, the page fragments and the frag list alike, one mapped
 * piece at a time. (The skb checksum helpers took a CRC's update and
 * combine until 6.16 dropped both; this walk is the same on every kernel.)
 * The skb is only read: the sequential reader's prototype is not const.
 */
static u32 icrc_skb(const struct sk_buff *skb, unsigned int off, unsigned int len, u32 crc)
{
	struct skb_seq_state st;
	unsigned int n, at = 0;
	const u8 *data;

	skb_prepare_seq_read((struct sk_buff *)skb, off, off + len, &st);
	while ((n = skb_seq_read(at, &data, &st))) {
		/* A piece runs to its own end, past @len too. */
		if (n >= len - at) {
			crc = crc32_le(crc, data, len - at);
			skb_abort_seq_read(&st);
			break;
		}
		crc = crc32_le(crc, data, n);
		at += n;
	}
	return crc;
}

/* The CRC of eight bytes of ones, the LRH a RoCE v2 packet does not have. */
#define ICRC_SEED	0xdebb20e3

/* The ICRC's CRC before its final inversion (stag_pkt_icrc() says what it covers). */
static u32 icrc_crc(const struct sk_buff *skb, const void *bth)
{
	u8 ph[sizeof(struct ipv6hdr) + sizeof(struct udphdr) + STAG_BTH_LEN];
	struct udphdr *uh;
	unsigned int n, off;
	u32 crc;

	if (ip_hdr(skb)->version == 4) {
		struct iphdr *h = (struct iphdr *)ph;

		memcpy(h, ip_hdr(skb), sizeof(*h));
		h->tos = 0xff;
		h->ttl = 0xff;
		h->check = CSUM_MANGLED_0;
		n = sizeof(*h);
	} else {
		struct ipv6hdr *h = (struct ipv6hdr *)ph;

		memcpy(h, ipv6_hdr(skb), sizeof(*h));
		h->priority = 0xf;
		memset(h->flow_lbl, 0xff, sizeof(h->flow_lbl));
		h->hop_limit = 0xff;
		n = sizeof(*h);
	}
	uh = (struct udphdr *)(ph + n);
	memcpy(uh, udp_hdr(skb), sizeof(*uh));
	uh->check = CSUM_MANGLED_0;
	n += sizeof(*uh);
	memcpy(ph + n, bth, STAG_BTH_LEN);
	ph[n + 4] = 0xff;
	n += STAG_BTH_LEN;

	crc = crc32_le(ICRC_SEED, ph, n);
	off = (const u8 *)bth + STAG_BTH_LEN - skb->data;
	return icrc_skb(skb, off, skb->len - off - STAG_ICRC_LEN, crc);
}

/**
 * stag_pkt_icrc() - the ICRC of a RoCE v2 packet
 * @skb: the packet: IP header at its network header (IPv4 without
 *	options, or IPv6), UDP at its transport header, the ICRC in its last
 *	four bytes
 * @bth: the BTH, in the skb's linear part, after the UDP header
 *
 * The IP header is taken with its TOS (traffic class and flow label),
 * TTL (hop limit) and header checksum as ones, the UDP checksum as ones,
 * and the BTH's byte of FECN, BECN and reserved bits as ones; the rest of
 * the headers, the payload and the pad as they are.
 *
 * Return: the ICRC; put_unaligned_le32() stores it as the wire has it.
 */
u32 stag_pkt_icrc(const struct sk_buff *skb, const void *bth)
{
	return ~icrc_crc(skb, bth);
}
EXPORT_SYMBOL_IF_KUNIT(stag_pkt_icrc);

/**
 * stag_pkt_icrc_rxe_flush() - the ICRC rdma_rxe gives a FLUSH
 * @skb: the packet, as for stag_pkt_icrc()
 * @bth: its BTH
 *
 * rxe's opcode table gives RC FLUSH no payload offset, so rxe takes
 * everything from the BTH to the ICRC for the payload too: its ICRC goes
 * on from the IBTA's over the transport headers a second time, unmasked.
 * rxe drops a FLUSH with the IBTA's ICRC, and sends its own.
 *
 * Return: that ICRC, stored as stag_pkt_icrc()'s is.
 */
u32 stag_pkt_icrc_rxe_flush(const struct sk_buff *skb, const void *bth)
{
	unsigned int off = (const u8 *)bth - skb->data;

	return ~icrc_skb(skb, off, skb->len - off - STAG_ICRC_LEN, icrc_crc(skb, bth));
}
EXPORT_SYMBOL_IF_KUNIT(stag_pkt_icrc_rxe_flush);
