// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the packet codec. Every opcode's headers encoded and decoded,
 * what a parse must refuse, the opcodes of each packet of a message at
 * every MTU, PSN arithmetic across the 2^24 wrap, and the ICRC of packets
 * rdma_rxe put on the wire: captured with tcpdump between two guests
 * running ibv_rc_pingpong and ibv_ud_pingpong on the 6.12 rxe.
 */

#include <kunit/test.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/unaligned.h>
#include <rdma/ib_verbs.h>

#include "../pkt.h"

/* RC SEND_ONLY of 100 bytes, AckReq, 10.77.39.18 -> 10.77.39.17. */
static const u8 rxe_rc_send_only[] = {
	0x45, 0x00, 0x00, 0x90, 0xe9, 0x65, 0x40, 0x00, 0x40, 0x11, 0xee, 0x3a,
	0x0a, 0x4d, 0x27, 0x12, 0x0a, 0x4d, 0x27, 0x11, 0xc1, 0x21, 0x12, 0xb7,
	0x00, 0x7c, 0x00, 0x00, 0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
	0x80, 0x43, 0xd5, 0x0e, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0xbd, 0x13, 0x44, 0xa3,
};

/* The ACK of it: syndrome 0x1f (no credits), MSN 1. */
static const u8 rxe_rc_ack[] = {
	0x45, 0x00, 0x00, 0x30, 0x7c, 0x2b, 0x40, 0x00, 0x40, 0x11, 0x5b, 0xd5,
	0x0a, 0x4d, 0x27, 0x11, 0x0a, 0x4d, 0x27, 0x12, 0xc1, 0x21, 0x12, 0xb7,
	0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
	0x00, 0x43, 0xd5, 0x0e, 0x1f, 0x00, 0x00, 0x01, 0x24, 0x8d, 0xb4, 0xfb,
};

/* UD SEND_ONLY of 100 bytes, qkey 0x11111111, from QP 0x12. */
static const u8 rxe_ud_send_only[] = {
	0x45, 0x00, 0x00, 0x98, 0xeb, 0x15, 0x40, 0x00, 0x40, 0x11, 0xec, 0x82,
	0x0a, 0x4d, 0x27, 0x12, 0x0a, 0x4d, 0x27, 0x11, 0xf8, 0x06, 0x12, 0xb7,
	0x00, 0x84, 0x00, 0x00, 0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12,
	0x00, 0x7d, 0x67, 0x98, 0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x12,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
	0x7b, 0x7b, 0x7b, 0x7b, 0x49, 0x8c, 0xb6, 0xdc,
};

#define IP_UDP_LEN	(sizeof(struct iphdr) + 8)

static void free_skb_action(void *skb)
{
	kfree_skb(skb);
}

/* Bytes @from to @to of @v as the skb's next page fragment. */
static void vector_frag(struct kunit *test, struct sk_buff *skb, const u8 *v,
			unsigned int from, unsigned int to)
{
	struct page *page = alloc_page(GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, page);
	memcpy(page_address(page), v + from, to - from);
	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page, 0, to - from, PAGE_SIZE);
}

/*
 * The captured packet as an skb the way the receive path has it: IP at
 * the network header, UDP at the transport header. With @split, all but
 * the first @split bytes sit in a page fragment, as virtio-net delivers
 * packets of a full MTU; with @split2 too, the bytes from @split2 on sit
 * in a second one.
 */
static struct sk_buff *vector_skb2(struct kunit *test, const u8 *v, unsigned int len,
				   unsigned int split, unsigned int split2)
{
	struct sk_buff *skb = alloc_skb(len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, free_skb_action, skb), 0);
	skb_put_data(skb, v, split ? split : len);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, sizeof(struct iphdr));
	if (split) {
		vector_frag(test, skb, v, split, split2 ? split2 : len);
		if (split2)
			vector_frag(test, skb, v, split2, len);
	}
	return skb;
}

static struct sk_buff *vector_skb(struct kunit *test, const u8 *v, unsigned int len,
				  unsigned int split)
{
	return vector_skb2(test, v, len, split, 0);
}

struct vector {
	const char *name;
	const u8 *bytes;
	unsigned int len;
	unsigned int split;
	unsigned int split2;
};

static const struct vector vectors[] = {
	{ "RC SEND_ONLY", rxe_rc_send_only, sizeof(rxe_rc_send_only), 0 },
	{ "RC SEND_ONLY, payload in a fragment", rxe_rc_send_only, sizeof(rxe_rc_send_only), 60 },
	{ "RC SEND_ONLY, split mid-payload", rxe_rc_send_only, sizeof(rxe_rc_send_only), 99 },
	{ "RC SEND_ONLY, payload in two fragments", rxe_rc_send_only,
	  sizeof(rxe_rc_send_only), 60, 100 },
	{ "RC SEND_ONLY, the ICRC split between fragments", rxe_rc_send_only,
	  sizeof(rxe_rc_send_only), 60, sizeof(rxe_rc_send_only) - 2 },
	{ "RC SEND_ONLY, the ICRC alone in a fragment", rxe_rc_send_only,
	  sizeof(rxe_rc_send_only), sizeof(rxe_rc_send_only) - 4 },
	{ "RC ACK", rxe_rc_ack, sizeof(rxe_rc_ack), 0 },
	{ "UD SEND_ONLY", rxe_ud_send_only, sizeof(rxe_ud_send_only), 0 },
	{ "UD SEND_ONLY, split", rxe_ud_send_only, sizeof(rxe_ud_send_only), 77 },
};

static void vector_desc(const struct vector *v, char *desc)
{
	strscpy(desc, v->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vector, vectors, vector_desc);

/* stag computes the ICRC rxe put on the packet, linear or not. */
static void stag_pkt_icrc_of_rxe_packets(struct kunit *test)
{
	const struct vector *v = test->param_value;
	struct sk_buff *skb = vector_skb2(test, v->bytes, v->len, v->split, v->split2);
	u32 wire = get_unaligned_le32(v->bytes + v->len - STAG_ICRC_LEN);

	KUNIT_EXPECT_EQ(test, stag_pkt_icrc(skb, skb->data + IP_UDP_LEN), wire);
}

/* Any bit flipped outside the masked fields changes the ICRC. */
static void stag_pkt_icrc_sees_corruption(struct kunit *test)
{
	u8 *b = kunit_kmalloc(test, sizeof(rxe_rc_send_only), GFP_KERNEL);
	u32 wire = get_unaligned_le32(rxe_rc_send_only + sizeof(rxe_rc_send_only) - 4);
	static const unsigned int at[] = { 3, 12, 20, 29, 31, 35, 40, 139 };
	struct sk_buff *skb;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, b);
	for (i = 0; i < ARRAY_SIZE(at); i++) {
		memcpy(b, rxe_rc_send_only, sizeof(rxe_rc_send_only));
		b[at[i]] ^= 0x10;
		skb = vector_skb(test, b, sizeof(rxe_rc_send_only), 0);
		KUNIT_EXPECT_NE_MSG(test, stag_pkt_icrc(skb, skb->data + IP_UDP_LEN), wire,
				    "byte %u", at[i]);
	}
	/* TOS, TTL and the IP checksum are masked: changing them changes nothing. */
	memcpy(b, rxe_rc_send_only, sizeof(rxe_rc_send_only));
	b[1] = 0x68;
	b[8] = 3;
	b[10] = 0;
	skb = vector_skb(test, b, sizeof(rxe_rc_send_only), 0);
	KUNIT_EXPECT_EQ(test, stag_pkt_icrc(skb, skb->data + IP_UDP_LEN), wire);
}

/* The captured headers decode to what rxe sent. */
static void stag_pkt_parse_rxe_packets(struct kunit *test)
{
	struct stag_pkt p;

	KUNIT_ASSERT_EQ(test, stag_pkt_parse(rxe_rc_send_only + IP_UDP_LEN,
					     sizeof(rxe_rc_send_only) - IP_UDP_LEN, &p), 0);
	KUNIT_EXPECT_EQ(test, p.opcode, STAG_OP_SEND_ONLY);
	KUNIT_EXPECT_EQ(test, p.qpn, 0x11U);
	KUNIT_EXPECT_EQ(test, p.psn, 0x43d50eU);
	KUNIT_EXPECT_TRUE(test, p.ackreq);
	KUNIT_EXPECT_EQ(test, p.pkey, 0xffff);
	KUNIT_EXPECT_EQ(test, p.paylen, 100U);
	KUNIT_EXPECT_EQ(test, p.pad, 0);
	KUNIT_EXPECT_TRUE(test, p.flags & STAG_PKT_START && p.flags & STAG_PKT_END);

	KUNIT_ASSERT_EQ(test, stag_pkt_parse(rxe_rc_ack + IP_UDP_LEN,
					     sizeof(rxe_rc_ack) - IP_UDP_LEN, &p), 0);
	KUNIT_EXPECT_EQ(test, p.opcode, STAG_OP_ACK);
	KUNIT_EXPECT_EQ(test, p.syndrome, STAG_AETH_CREDITS_NONE);
	KUNIT_EXPECT_EQ(test, p.msn, 1U);
	KUNIT_EXPECT_EQ(test, p.psn, 0x43d50eU);
	KUNIT_EXPECT_EQ(test, p.paylen, 0U);

	KUNIT_ASSERT_EQ(test, stag_pkt_parse(rxe_ud_send_only + IP_UDP_LEN,
					     sizeof(rxe_ud_send_only) - IP_UDP_LEN, &p), 0);
	KUNIT_EXPECT_EQ(test, p.opcode, STAG_OP_UD | STAG_OP_SEND_ONLY);
	KUNIT_EXPECT_EQ(test, p.qkey, 0x11111111U);
	KUNIT_EXPECT_EQ(test, p.src_qpn, 0x12U);
	KUNIT_EXPECT_EQ(test, p.paylen, 100U);
}

/*
 * A FLUSH as rdma_rxe lays it out (rxe_opcode.c, rxe_hdr.h): BTH, then the
 * FETH (placement type in bits 3-0, selectivity in bits 5-4), then the
 * RETH, and no payload.
 */
static void stag_pkt_flush_layout(struct kunit *test)
{
	static const u8 want[32 + STAG_ICRC_LEN] = {
		0x1c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x05,
		0x00, 0x00, 0x00, 0x12,
		0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x50, 0x00, 0xab, 0xcd, 0xef, 0x01,
		0x00, 0x00, 0x10, 0x00,
	};
	struct stag_pkt in = {
		.opcode = STAG_OP_FLUSH, .pkey = 0xffff, .qpn = 0x11, .ackreq = true, .psn = 5,
		.flush_type = IB_FLUSH_PERSISTENT, .flush_level = IB_FLUSH_MR,
		.va = 0x7f0012345000ULL, .rkey = 0xabcdef01, .dmalen = 0x1000,
	};
	u8 buf[sizeof(want)];
	struct stag_pkt out;

	KUNIT_ASSERT_EQ(test, stag_pkt_ops[STAG_OP_FLUSH].hlen, 32);
	memset(buf, 0, sizeof(buf));
	stag_pkt_build(buf, &in);
	KUNIT_EXPECT_MEMEQ(test, buf, want, 32);
	KUNIT_ASSERT_EQ(test, stag_pkt_parse(want, sizeof(want), &out), 0);
	KUNIT_EXPECT_TRUE(test, out.flags & STAG_PKT_FLUSH && out.flags & STAG_PKT_REQ);
	KUNIT_EXPECT_EQ(test, out.flush_type, IB_FLUSH_PERSISTENT);
	KUNIT_EXPECT_EQ(test, out.flush_level, IB_FLUSH_MR);
	KUNIT_EXPECT_EQ(test, out.va, in.va);
	KUNIT_EXPECT_EQ(test, out.rkey, in.rkey);
	KUNIT_EXPECT_EQ(test, out.dmalen, in.dmalen);
	KUNIT_EXPECT_EQ(test, out.paylen, 0U);
}

/*
 * rdma_rxe's ICRC of a FLUSH (stag_pkt_icrc_rxe_flush()): rxe's CRC goes
 * on over the 32 bytes from the BTH a second time, as its RC_FLUSH entry,
 * with no payload offset, makes rxe_icrc_generate() and rxe_icrc_check()
 * take them for the payload. Not the IBTA's, which a change of one header
 * byte changes too.
 */
static void stag_pkt_icrc_of_rxe_flush(struct kunit *test)
{
	/* IPv4 and UDP from rxe_rc_ack, the lengths those of a FLUSH. */
	u8 *b = kunit_kzalloc(test, 28 + 32 + STAG_ICRC_LEN, GFP_KERNEL);
	struct stag_pkt in = {
		.opcode = STAG_OP_FLUSH, .pkey = 0xffff, .qpn = 0x11, .ackreq = true, .psn = 5,
		.flush_type = IB_FLUSH_GLOBAL, .flush_level = IB_FLUSH_RANGE,
		.va = 0x7f0012345000ULL, .rkey = 0xabcdef01, .dmalen = 0x200,
	};
	struct sk_buff *skb;
	u32 ibta, rxe;

	KUNIT_ASSERT_NOT_NULL(test, b);
	memcpy(b, rxe_rc_ack, 28);
	b[3] = 28 + 32 + STAG_ICRC_LEN;
	b[25] = 8 + 32 + STAG_ICRC_LEN;
	stag_pkt_build(b + 28, &in);
	skb = vector_skb(test, b, 28 + 32 + STAG_ICRC_LEN, 0);
	ibta = stag_pkt_icrc(skb, skb->data + IP_UDP_LEN);
	rxe = stag_pkt_icrc_rxe_flush(skb, skb->data + IP_UDP_LEN);
	KUNIT_EXPECT_NE(test, rxe, ibta);
	KUNIT_EXPECT_EQ(test, rxe, ~crc32_le(~ibta, b + 28, 32));
	skb->data[IP_UDP_LEN + 20] ^= 1;
	KUNIT_EXPECT_NE(test, stag_pkt_icrc_rxe_flush(skb, skb->data + IP_UDP_LEN), rxe);
}

/*
 * Every opcode the table has: random values in every field its headers
 * carry go out and come back; the length of what is written is the
 * table's, and a payload rides behind.
 */
static void stag_pkt_every_opcode_round_trip(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 256, GFP_KERNEL);
	struct stag_pkt in, out;
	unsigned int op, n = 0;
	bool xrc_req;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (op = 0; op < 256; op++) {
		u32 flags = stag_pkt_ops[op].flags;
		u32 pay = flags & STAG_PKT_PAYLOAD ? 13 : 0;

		if (!flags)
			continue;
		n++;
		memset(&in, 0, sizeof(in));
		in.opcode = op;
		in.se = get_random_u32() & 1;
		in.ackreq = get_random_u32() & 1;
		in.pkey = get_random_u16();
		in.qpn = get_random_u32() & STAG_PSN_MASK;
		in.psn = get_random_u32() & STAG_PSN_MASK;
		in.pad = stag_pkt_pad(pay);
		in.va = get_random_u64();
		in.rkey = get_random_u32();
		in.dmalen = get_random_u32();
		in.flush_type = get_random_u8() & STAG_FETH_PLT_MASK;
		in.flush_level = get_random_u8() & (STAG_FETH_SEL_MASK >> STAG_FETH_SEL_SHIFT);
		in.swap_add = get_random_u64();
		in.compare = get_random_u64();
		in.syndrome = get_random_u8();
		in.msn = get_random_u32() & STAG_PSN_MASK;
		in.orig = get_random_u64();
		in.imm = (__force __be32)get_random_u32();
		in.inv_rkey = get_random_u32();
		in.qkey = get_random_u32();
		in.src_qpn = get_random_u32() & STAG_PSN_MASK;
		in.xrc_srqn = get_random_u32() & STAG_XRCETH_SRQN_MASK;
		memset(buf, 0xee, 256);
		stag_pkt_build(buf, &in);
		KUNIT_EXPECT_EQ_MSG(test, buf[stag_pkt_ops[op].hlen], 0xee, "opcode %#x", op);
		KUNIT_ASSERT_EQ_MSG(test, stag_pkt_parse(buf, stag_pkt_ops[op].hlen + pay + in.pad +
							 STAG_ICRC_LEN, &out), 0,
				    "opcode %#x", op);
		KUNIT_EXPECT_EQ(test, out.opcode, op);
		KUNIT_EXPECT_EQ(test, out.se, in.se);
		KUNIT_EXPECT_EQ(test, out.ackreq, in.ackreq);
		KUNIT_EXPECT_EQ(test, out.pkey, in.pkey);
		KUNIT_EXPECT_EQ(test, out.qpn, in.qpn);
		KUNIT_EXPECT_EQ(test, out.psn, in.psn);
		KUNIT_EXPECT_EQ(test, out.pad, in.pad);
		KUNIT_EXPECT_EQ(test, out.paylen, pay);
		if (flags & (STAG_PKT_RETH | STAG_PKT_ATMETH)) {
			KUNIT_EXPECT_EQ(test, out.va, in.va);
			KUNIT_EXPECT_EQ(test, out.rkey, in.rkey);
		}
		if (flags & STAG_PKT_RETH)
			KUNIT_EXPECT_EQ(test, out.dmalen, in.dmalen);
		if (flags & STAG_PKT_FETH) {
			KUNIT_EXPECT_EQ(test, out.flush_type, in.flush_type);
			KUNIT_EXPECT_EQ(test, out.flush_level, in.flush_level);
		}
		if (flags & STAG_PKT_ATMETH) {
			KUNIT_EXPECT_EQ(test, out.swap_add, in.swap_add);
			KUNIT_EXPECT_EQ(test, out.compare, in.compare);
		}
		if (flags & STAG_PKT_AETH) {
			KUNIT_EXPECT_EQ(test, out.syndrome, in.syndrome);
			KUNIT_EXPECT_EQ(test, out.msn, in.msn);
		}
		if (flags & STAG_PKT_ATMACK)
			KUNIT_EXPECT_EQ(test, out.orig, in.orig);
		if (flags & STAG_PKT_IMM)
			KUNIT_EXPECT_EQ(test, out.imm, in.imm);
		if (flags & STAG_PKT_IETH)
			KUNIT_EXPECT_EQ(test, out.inv_rkey, in.inv_rkey);
		if (flags & STAG_PKT_DETH) {
			KUNIT_EXPECT_EQ(test, out.qkey, in.qkey);
			KUNIT_EXPECT_EQ(test, out.src_qpn, in.src_qpn);
		}
		if (flags & STAG_PKT_XRCETH)
			KUNIT_EXPECT_EQ(test, out.xrc_srqn, in.xrc_srqn);
		/* XRC's requests, and only they, name an SRQ. */
		xrc_req = (op & STAG_OP_CLASS_MASK) == STAG_OP_XRC && flags & STAG_PKT_REQ;
		KUNIT_EXPECT_EQ_MSG(test, !!(flags & STAG_PKT_XRCETH), xrc_req, "opcode %#x", op);
	}
	/* 25 RC (atomic write and flush among them), 12 UC, 2 UD, 23 XRC. */
	KUNIT_EXPECT_EQ(test, n, 62U);
}

/*
 * An XRC SEND ONLY: the XRCETH (8 reserved bits, the 24-bit SRQ number)
 * right after the BTH, then the payload; the same opcode with RC's
 * number in the low five bits.
 */
static void stag_pkt_xrc_layout(struct kunit *test)
{
	static const u8 want[16 + 4 + STAG_ICRC_LEN] = {
		0xa4, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12, 0x80, 0x00, 0x00, 0x07,
		0x00, 0xab, 0xcd, 0xef,
		'x', 'r', 'c', '!',
	};
	struct stag_pkt in = {
		.opcode = STAG_OP_XRC | STAG_OP_SEND_ONLY, .pkey = 0xffff, .qpn = 0x12,
		.ackreq = true, .psn = 7, .xrc_srqn = 0xabcdef,
	};
	u8 buf[sizeof(want)];
	struct stag_pkt out;

	KUNIT_ASSERT_EQ(test, stag_pkt_ops[in.opcode].hlen, 16);
	memset(buf, 0, sizeof(buf));
	stag_pkt_build(buf, &in);
	KUNIT_EXPECT_MEMEQ(test, buf, want, 16);
	KUNIT_ASSERT_EQ(test, stag_pkt_parse(want, sizeof(want), &out), 0);
	KUNIT_EXPECT_EQ(test, out.xrc_srqn, 0xabcdefU);
	KUNIT_EXPECT_EQ(test, out.paylen, 4U);
	KUNIT_EXPECT_TRUE(test, out.flags & STAG_PKT_SEND && out.flags & STAG_PKT_RECV);
	/* Its answers carry no XRCETH: RC's layouts in XRC's numbers. */
	KUNIT_EXPECT_EQ(test, stag_pkt_ops[STAG_OP_XRC | STAG_OP_ACK].hlen, 16);
	KUNIT_EXPECT_EQ(test, stag_pkt_ops[STAG_OP_XRC | STAG_OP_ATOMIC_ACK].hlen, 24);
	KUNIT_EXPECT_EQ(test, stag_pkt_ops[STAG_OP_XRC | STAG_OP_CMP_SWAP].hlen, 44);
	/* A packet cut inside its XRCETH is malformed. */
	KUNIT_EXPECT_EQ(test, stag_pkt_parse(want, 14 + STAG_ICRC_LEN, &out), -EINVAL);
}

struct bad_case {
	const char *name;
	u8 opcode;
	u8 flags;	/* BTH byte 1 */
	unsigned int len;	/* from the BTH, ICRC included */
};

static const struct bad_case bad_cases[] = {
	{ "shorter than a BTH and an ICRC", STAG_OP_SEND_ONLY, 0, 15 },
	{ "opcode 0x15 (reserved)", 0x15, 0, 40 },
	{ "opcode 0x18 (reserved)", 0x18, 0, 40 },
	{ "UC read request (0x2c)", STAG_OP_UC | STAG_OP_READ_REQUEST, 0, 40 },
	{ "UC send with invalidate (0x37)", STAG_OP_UC | STAG_OP_SEND_ONLY_INV, 0, 40 },
	{ "RD send (0x44)", 0x44, 0, 40 },
	{ "UD send first (0x60)", STAG_OP_UD | STAG_OP_SEND_FIRST, 0, 40 },
	{ "CNP (0x81)", 0x81, 0, 40 },
	{ "transport version 1", STAG_OP_SEND_ONLY, 0x01, 40 },
	{ "WRITE_ONLY without room for its RETH", STAG_OP_WRITE_ONLY, 0, 12 + 15 + 4 },
	{ "atomic without room for its AtomicETH", STAG_OP_FETCH_ADD, 0, 12 + 27 + 4 },
	{ "pad of 3 on a 2-byte payload: no room", STAG_OP_SEND_ONLY, 0x30, 12 + 2 + 4 },
	{ "ACK with a payload", STAG_OP_ACK, 0, 16 + 4 + 4 },
	{ "ACK with pad", STAG_OP_ACK, 0x10, 16 + 1 + 4 },
	{ "read request with a payload", STAG_OP_READ_REQUEST, 0, 28 + 8 + 4 },
	{ "UC atomic write (0x3d)", STAG_OP_UC | STAG_OP_ATOMIC_WRITE, 0, 28 + 8 + 4 },
	{ "atomic write without room for its RETH", STAG_OP_ATOMIC_WRITE, 0, 12 + 15 + 4 },
	{ "UC flush (0x3c)", STAG_OP_UC | STAG_OP_FLUSH, 0, 32 + 4 },
	{ "flush with a payload", STAG_OP_FLUSH, 0, 32 + 4 + 4 },
	{ "flush with pad", STAG_OP_FLUSH, 0x10, 32 + 1 + 4 },
	{ "flush without room for its RETH", STAG_OP_FLUSH, 0, 12 + 4 + 15 + 4 },
};

static void bad_case_desc(const struct bad_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bad, bad_cases, bad_case_desc);

/* What the headers alone show to be malformed is refused. */
static void stag_pkt_parse_refuses(struct kunit *test)
{
	const struct bad_case *c = test->param_value;
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct stag_pkt p;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	buf[0] = c->opcode;
	buf[1] = c->flags;
	KUNIT_EXPECT_EQ(test, stag_pkt_parse(buf, c->len, &p), -EINVAL);
}

/* The packets of a message of @len bytes at @mtu, as the requester cuts it. */
static void expect_segments(struct kunit *test, u8 class, u8 wr, u32 len, u32 mtu, u8 first_op,
			    u8 middle_op, u8 last_op, u8 only_op)
{
	u32 n = len ? DIV_ROUND_UP(len, mtu) : 1, i, sum = 0;

	for (i = 0; i < n; i++) {
		u8 op = stag_pkt_opcode(class, wr, i == 0, i == n - 1);
		u32 pay = min(mtu, len - sum);
		u8 want = n == 1 ? only_op : !i ? first_op : i == n - 1 ? last_op : middle_op;

		KUNIT_EXPECT_EQ_MSG(test, op, want | class, "len %u mtu %u packet %u", len, mtu, i);
		/* FIRST and MIDDLE carry a full MTU; LAST the rest, at least a byte. */
		if (i < n - 1)
			KUNIT_EXPECT_EQ(test, pay, mtu);
		else if (len)
			KUNIT_EXPECT_GT(test, pay, 0U);
		sum += pay;
	}
	KUNIT_EXPECT_EQ(test, sum, len);
}

static void segments_of_all(struct kunit *test, u8 class, u32 len, u32 mtu)
{
	expect_segments(test, class, IB_WR_SEND, len, mtu, STAG_OP_SEND_FIRST,
			STAG_OP_SEND_MIDDLE, STAG_OP_SEND_LAST, STAG_OP_SEND_ONLY);
	expect_segments(test, class, IB_WR_SEND_WITH_IMM, len, mtu, STAG_OP_SEND_FIRST,
			STAG_OP_SEND_MIDDLE, STAG_OP_SEND_LAST_IMM, STAG_OP_SEND_ONLY_IMM);
	expect_segments(test, class, IB_WR_RDMA_WRITE, len, mtu, STAG_OP_WRITE_FIRST,
			STAG_OP_WRITE_MIDDLE, STAG_OP_WRITE_LAST, STAG_OP_WRITE_ONLY);
	expect_segments(test, class, IB_WR_RDMA_WRITE_WITH_IMM, len, mtu, STAG_OP_WRITE_FIRST,
			STAG_OP_WRITE_MIDDLE, STAG_OP_WRITE_LAST_IMM, STAG_OP_WRITE_ONLY_IMM);
}

/* At every IB MTU, around its multiples: the opcodes and payload of each packet. */
static void stag_pkt_segments_at_every_mtu(struct kunit *test)
{
	static const u8 classes[] = { STAG_OP_RC, STAG_OP_UC, STAG_OP_XRC };
	enum ib_mtu m;
	int c;

	for (m = IB_MTU_256; m <= IB_MTU_4096; m++) {
		u32 mtu = ib_mtu_enum_to_int(m);
		u32 lens[] = { 0, 1, mtu - 1, mtu, mtu + 1, 2 * mtu, 2 * mtu + 1, 7 * mtu - 3 };
		unsigned int i;

		for (c = 0; c < ARRAY_SIZE(classes); c++)
			for (i = 0; i < ARRAY_SIZE(lens); i++)
				segments_of_all(test, classes[c], lens[i], mtu);
		expect_segments(test, STAG_OP_RC, IB_WR_SEND_WITH_INV, 3 * mtu, mtu,
				STAG_OP_SEND_FIRST, STAG_OP_SEND_MIDDLE, STAG_OP_SEND_LAST_INV,
				STAG_OP_SEND_ONLY_INV);
	}
}

/* What a transport has no packet for. */
static void stag_pkt_opcode_refuses(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_UC, IB_WR_SEND_WITH_INV, true, true), 0xff);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_UC, IB_WR_RDMA_READ, true, true), 0xff);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_UC, IB_WR_ATOMIC_FETCH_AND_ADD, true, true),
			0xff);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_UD, IB_WR_RDMA_WRITE, true, true), 0xff);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_UD, IB_WR_SEND, true, false), 0xff);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_RC, IB_WR_LOCAL_INV, true, true), 0xff);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_UC, IB_WR_ATOMIC_WRITE, true, true), 0xff);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_RC, IB_WR_RDMA_READ, true, true),
			STAG_OP_READ_REQUEST);
	/* IBA 1.5's RDMA ATOMIC WRITE, 0x1d as rdma_rxe sends it. */
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_RC, IB_WR_ATOMIC_WRITE, true, true), 0x1d);
	/* And its FLUSH, 0x1c, RC only. */
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_RC, IB_WR_FLUSH, true, true), 0x1c);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_UC, IB_WR_FLUSH, true, true), 0xff);
	/* XRC has RC's opcodes of IBA 1.2, not 1.5's atomic write and flush. */
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_XRC, IB_WR_FLUSH, true, true), 0xff);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_XRC, IB_WR_ATOMIC_WRITE, true, true), 0xff);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_XRC, IB_WR_RDMA_READ, true, true), 0xac);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_XRC, IB_WR_SEND_WITH_INV, true, true), 0xb7);
	KUNIT_EXPECT_EQ(test, stag_pkt_opcode(STAG_OP_UD, IB_WR_SEND_WITH_IMM, true, true),
			STAG_OP_UD | STAG_OP_SEND_ONLY_IMM);
}

/* PSNs are 24 bits: comparisons hold across the wrap, additions wrap. */
static void stag_pkt_psn_wraps(struct kunit *test)
{
	KUNIT_EXPECT_GT(test, stag_psn_cmp(0, 0xffffff), 0);
	KUNIT_EXPECT_LT(test, stag_psn_cmp(0xffffff, 0), 0);
	KUNIT_EXPECT_EQ(test, stag_psn_cmp(0x123456, 0x123456), 0);
	KUNIT_EXPECT_GT(test, stag_psn_cmp(5, 0xfffff0), 0);
	KUNIT_EXPECT_LT(test, stag_psn_cmp(0xfffff0, 5), 0);
	/* Half the space apart is the limit of what can be told apart. */
	KUNIT_EXPECT_GT(test, stag_psn_cmp(0x7fffff, 0), 0);
	KUNIT_EXPECT_LT(test, stag_psn_cmp(0x800001, 0), 0);
	KUNIT_EXPECT_EQ(test, stag_psn_add(0xffffff, 1), 0U);
	KUNIT_EXPECT_EQ(test, stag_psn_add(0xfffffe, 5), 3U);
	KUNIT_EXPECT_EQ(test, stag_psn_add(3, 0xffffff), 2U);
	KUNIT_EXPECT_EQ(test, stag_pkt_pad(0), 0);
	KUNIT_EXPECT_EQ(test, stag_pkt_pad(1), 3);
	KUNIT_EXPECT_EQ(test, stag_pkt_pad(1023), 1);
	KUNIT_EXPECT_EQ(test, stag_pkt_pad(1024), 0);
}

static struct kunit_case stag_pkt_cases[] = {
	KUNIT_CASE_PARAM(stag_pkt_icrc_of_rxe_packets, vector_gen_params),
	KUNIT_CASE(stag_pkt_icrc_sees_corruption),
	KUNIT_CASE(stag_pkt_parse_rxe_packets),
	KUNIT_CASE(stag_pkt_flush_layout),
	KUNIT_CASE(stag_pkt_icrc_of_rxe_flush),
	KUNIT_CASE(stag_pkt_every_opcode_round_trip),
	KUNIT_CASE(stag_pkt_xrc_layout),
	KUNIT_CASE_PARAM(stag_pkt_parse_refuses, bad_gen_params),
	KUNIT_CASE(stag_pkt_segments_at_every_mtu),
	KUNIT_CASE(stag_pkt_opcode_refuses),
	KUNIT_CASE(stag_pkt_psn_wraps),
	{}
};

static struct kunit_suite stag_pkt_suite = {
	.name = "stag_pkt",
	.test_cases = stag_pkt_cases,
};

kunit_test_suite(stag_pkt_suite);
