// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for flows (flow.c): a frame's fields as the tap reads them,
 * a flow's specs as values and masks, and the match of one against the
 * other. Every received frame is hostile: each is parsed at every length
 * it could be cut to, from a buffer of exactly that length, so that KASAN
 * reports a byte read past it.
 */

#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/in.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/unaligned.h>

#include "../flow.h"

static const u8 dmac[ETH_ALEN] = { 0x01, 0x50, 0x56, 0x19, 0x20, 0xa7 };
static const u8 smac[ETH_ALEN] = { 0x24, 0x8a, 0x07, 0xa5, 0x28, 0xc8 };

/* Ethernet, optionally one 802.1Q tag, IPv4 (20 bytes) or IPv6, then UDP or TCP ports. */
static u32 frame(u8 *p, bool vlan, int ip, u8 l4, u16 frag_off)
{
	u32 off = ETH_HLEN;

	memset(p, 0xee, 128);
	ether_addr_copy(p, dmac);
	ether_addr_copy(p + 6, smac);
	if (vlan) {
		put_unaligned_be16(ETH_P_8021Q, p + 12);
		put_unaligned_be16(0x0c0c, p + 14);
		off = VLAN_ETH_HLEN;
	}
	put_unaligned_be16(ip == 4 ? ETH_P_IP : ETH_P_IPV6, p + off - 2);
	if (ip == 4) {
		p[off] = 0x45;
		p[off + 1] = 0x10;
		put_unaligned_be16(frag_off, p + off + 6);
		p[off + 8] = 64;
		p[off + 9] = l4;
		memcpy(p + off + 12, "\x01\x01\x01\x01\x02\x02\x02\x02", 8);
		off += 20;
	} else {
		put_unaligned_be32(6 << 28 | 0x12345, p + off);
		p[off + 6] = l4;
		p[off + 7] = 64;
		memset(p + off + 8, 0xa0, 16);
		memset(p + off + 24, 0xb0, 16);
		off += 40;
	}
	put_unaligned_be16(1234, p + off);
	put_unaligned_be16(5678, p + off + 2);
	return off + 8;
}

static void parse_exact(struct kunit *test, const u8 *p, u32 len, struct stag_flow_fields *f)
{
	u8 *copy = kunit_kmalloc(test, len ?: 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, copy);
	memcpy(copy, p, len);
	stag_flow_parse(copy, len, f);
	kunit_kfree(test, copy);
}

static void flow_parse_ipv4_udp(struct kunit *test)
{
	struct stag_flow_fields f;
	u8 p[128];
	u32 len = frame(p, false, 4, IPPROTO_UDP, 0x4000);

	parse_exact(test, p, len, &f);
	KUNIT_EXPECT_EQ(test, f.layers, STAG_FLOW_ETH | STAG_FLOW_IPV4 | STAG_FLOW_UDP);
	KUNIT_EXPECT_MEMEQ(test, f.eth.dst_mac, dmac, ETH_ALEN);
	KUNIT_EXPECT_MEMEQ(test, f.eth.src_mac, smac, ETH_ALEN);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(f.eth.ether_type), ETH_P_IP);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(f.ip4.src_ip), 0x01010101);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(f.ip4.dst_ip), 0x02020202);
	KUNIT_EXPECT_EQ(test, f.ip4.proto, IPPROTO_UDP);
	KUNIT_EXPECT_EQ(test, f.ip4.tos, 0x10);
	KUNIT_EXPECT_EQ(test, f.ip4.ttl, 64);
	KUNIT_EXPECT_EQ(test, f.ip4.flags, IB_IPV4_DONT_FRAG);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(f.l4.src_port), 1234);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(f.l4.dst_port), 5678);
}

static void flow_parse_vlan_ipv6_tcp(struct kunit *test)
{
	struct stag_flow_fields f;
	u8 p[128], a[16];
	u32 len = frame(p, true, 6, IPPROTO_TCP, 0);

	parse_exact(test, p, len, &f);
	KUNIT_EXPECT_EQ(test, f.layers, STAG_FLOW_ETH | STAG_FLOW_IPV6 | STAG_FLOW_TCP);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(f.eth.vlan_tag), 0x0c0c);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(f.eth.ether_type), ETH_P_IPV6);
	memset(a, 0xa0, sizeof(a));
	KUNIT_EXPECT_MEMEQ(test, f.ip6.src_ip, a, sizeof(a));
	memset(a, 0xb0, sizeof(a));
	KUNIT_EXPECT_MEMEQ(test, f.ip6.dst_ip, a, sizeof(a));
	KUNIT_EXPECT_EQ(test, be32_to_cpu(f.ip6.flow_label), 0x12345);
	KUNIT_EXPECT_EQ(test, f.ip6.next_hdr, IPPROTO_TCP);
	KUNIT_EXPECT_EQ(test, f.ip6.hop_limit, 64);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(f.l4.dst_port), 5678);
}

/* A later fragment has no L4 header; a first one with more to come has. */
static void flow_parse_fragments(struct kunit *test)
{
	struct stag_flow_fields f;
	u8 p[128];
	u32 len;

	len = frame(p, false, 4, IPPROTO_UDP, 0x2000 | 100);
	parse_exact(test, p, len, &f);
	KUNIT_EXPECT_EQ(test, f.layers, STAG_FLOW_ETH | STAG_FLOW_IPV4);
	KUNIT_EXPECT_EQ(test, f.ip4.flags, IB_IPV4_MORE_FRAG);
	len = frame(p, false, 4, IPPROTO_UDP, 0x2000);
	parse_exact(test, p, len, &f);
	KUNIT_EXPECT_EQ(test, f.layers, STAG_FLOW_ETH | STAG_FLOW_IPV4 | STAG_FLOW_UDP);
}

/* A header is there only when it is whole: every length, from a buffer of that length. */
static void flow_parse_every_length(struct kunit *test)
{
	static const struct { bool vlan; int ip; u8 l4; } shapes[] = {
		{ false, 4, IPPROTO_UDP }, { true, 4, IPPROTO_TCP },
		{ false, 6, IPPROTO_TCP }, { true, 6, IPPROTO_UDP },
	};
	struct stag_flow_fields f;
	unsigned int i;
	u8 p[128];
	u32 len, n, l3, l4;

	for (i = 0; i < ARRAY_SIZE(shapes); i++) {
		len = frame(p, shapes[i].vlan, shapes[i].ip, shapes[i].l4, 0);
		l3 = (shapes[i].vlan ? VLAN_ETH_HLEN : ETH_HLEN) + (shapes[i].ip == 4 ? 20 : 40);
		l4 = l3 + 4;
		for (n = 0; n <= len; n++) {
			parse_exact(test, p, n, &f);
			KUNIT_EXPECT_EQ_MSG(test, !!(f.layers & STAG_FLOW_ETH), n >= ETH_HLEN,
					    "shape %u, %u bytes", i, n);
			KUNIT_EXPECT_EQ_MSG(test, !!(f.layers & (STAG_FLOW_IPV4 | STAG_FLOW_IPV6)),
					    n >= l3, "shape %u, %u bytes", i, n);
			KUNIT_EXPECT_EQ_MSG(test, !!(f.layers & (STAG_FLOW_TCP | STAG_FLOW_UDP)),
					    n >= l4, "shape %u, %u bytes", i, n);
		}
	}
}

/* Random bytes under the headers' types, at random lengths: only what is there is read. */
static void flow_parse_random(struct kunit *test)
{
	static const u16 types[] = { ETH_P_IP, ETH_P_IPV6, ETH_P_8021Q, 0x88b5 };
	struct stag_flow_fields f;
	u8 p[STAG_FLOW_PARSE_LEN + 16];
	unsigned int i;
	u32 len;

	for (i = 0; i < 20000; i++) {
		get_random_bytes(p, sizeof(p));
		put_unaligned_be16(types[i % 4], p + 12);
		if (types[i % 4] == ETH_P_8021Q)
			put_unaligned_be16(types[(i / 4) % 2], p + 16);
		/* Mostly IPv4 and IPv6 headers of the right version. */
		if (i % 3) {
			p[14] = (p[14] & 0x0f) | (types[i % 4] == ETH_P_IPV6 ? 0x60 : 0x40);
			p[18] = (p[18] & 0x0f) | 0x40;
		}
		len = get_random_u32_below(sizeof(p) + 1);
		parse_exact(test, p, len, &f);
		KUNIT_ASSERT_EQ(test, f.layers & ~(STAG_FLOW_ETH | STAG_FLOW_IPV4 | STAG_FLOW_IPV6 |
						  STAG_FLOW_TCP | STAG_FLOW_UDP), 0);
		KUNIT_ASSERT_NE(test, f.layers & (STAG_FLOW_IPV4 | STAG_FLOW_IPV6),
				STAG_FLOW_IPV4 | STAG_FLOW_IPV6);
		/*
		 * 20000 parses take 5 s on the debug kernel under TCG: without
		 * a reschedule the CPU ran nothing else that long (the guest's
		 * watch of its CPUs said so).
		 */
		if (!(i % 256))
			cond_resched();
	}
}

/* IPv4 with a header length under 5 words is no IPv4 header; options are stepped over. */
static void flow_parse_ihl(struct kunit *test)
{
	struct stag_flow_fields f;
	u8 p[128];
	u32 len = frame(p, false, 4, IPPROTO_UDP, 0);

	p[ETH_HLEN] = 0x44;
	parse_exact(test, p, len, &f);
	KUNIT_EXPECT_EQ(test, f.layers, STAG_FLOW_ETH);
	/* 15 words: the ports would be 40 bytes on, past these 8. */
	p[ETH_HLEN] = 0x4f;
	parse_exact(test, p, len, &f);
	KUNIT_EXPECT_EQ(test, f.layers, STAG_FLOW_ETH | STAG_FLOW_IPV4);
	p[ETH_HLEN] = 0x55;
	parse_exact(test, p, len, &f);
	KUNIT_EXPECT_EQ(test, f.layers, STAG_FLOW_ETH);
}

/* A flow's attributes and up to three specs after them. */
struct attr_buf {
	struct ib_flow_attr attr;
	u8 specs[3 * sizeof(union ib_flow_spec)];
};

static void *add_spec(struct attr_buf *b, u32 type, u16 size)
{
	union ib_flow_spec *s = (union ib_flow_spec *)((u8 *)&b->attr + b->attr.size);

	s->type = type;
	s->size = size;
	b->attr.size += size;
	b->attr.num_of_specs++;
	return s;
}

static void init_attr(struct attr_buf *b)
{
	memset(b, 0, sizeof(*b));
	b->attr.type = IB_FLOW_ATTR_NORMAL;
	b->attr.size = sizeof(b->attr);
	b->attr.port = 1;
}

static void flow_compile_refusals(struct kunit *test)
{
	struct stag_flow_fields val, mask;
	struct attr_buf b;

	init_attr(&b);
	add_spec(&b, IB_FLOW_SPEC_ETH, sizeof(struct ib_flow_spec_eth));
	KUNIT_EXPECT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), 0);
	KUNIT_EXPECT_EQ(test, mask.layers, STAG_FLOW_ETH);

	add_spec(&b, IB_FLOW_SPEC_ETH, sizeof(struct ib_flow_spec_eth));
	KUNIT_EXPECT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), -EINVAL);

	init_attr(&b);
	add_spec(&b, IB_FLOW_SPEC_ETH, sizeof(struct ib_flow_spec_eth) - 2);
	KUNIT_EXPECT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), -EINVAL);

	init_attr(&b);
	add_spec(&b, IB_FLOW_SPEC_IPV4, sizeof(struct ib_flow_spec_ipv4));
	add_spec(&b, IB_FLOW_SPEC_IPV6, sizeof(struct ib_flow_spec_ipv6));
	KUNIT_EXPECT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), -EINVAL);

	init_attr(&b);
	add_spec(&b, IB_FLOW_SPEC_TCP, sizeof(struct ib_flow_spec_tcp_udp));
	add_spec(&b, IB_FLOW_SPEC_UDP, sizeof(struct ib_flow_spec_tcp_udp));
	KUNIT_EXPECT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), -EINVAL);

	init_attr(&b);
	add_spec(&b, IB_FLOW_SPEC_ETH | IB_FLOW_SPEC_INNER, sizeof(struct ib_flow_spec_eth));
	KUNIT_EXPECT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), -EOPNOTSUPP);

	init_attr(&b);
	add_spec(&b, IB_FLOW_SPEC_VXLAN_TUNNEL, sizeof(struct ib_flow_spec_tunnel));
	KUNIT_EXPECT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), -EOPNOTSUPP);

	/* More specs than the size holds, and a spec larger than what is left. */
	init_attr(&b);
	add_spec(&b, IB_FLOW_SPEC_ETH, sizeof(struct ib_flow_spec_eth));
	b.attr.num_of_specs = 2;
	KUNIT_EXPECT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), -EINVAL);
	init_attr(&b);
	add_spec(&b, IB_FLOW_SPEC_ETH, sizeof(struct ib_flow_spec_eth));
	b.attr.size -= 1;
	KUNIT_EXPECT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), -EINVAL);
	b.attr.size = sizeof(b.attr) - 1;
	KUNIT_EXPECT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), -EINVAL);
}

/* Values under masks; a field the mask leaves out matches anything. */
static void flow_compile_match(struct kunit *test)
{
	struct stag_flow_fields val, mask, f;
	struct ib_flow_spec_tcp_udp *l4;
	struct ib_flow_spec_ipv4 *ip;
	struct ib_flow_spec_eth *eth;
	struct attr_buf b;
	u8 p[128];
	u32 len = frame(p, false, 4, IPPROTO_UDP, 0);

	parse_exact(test, p, len, &f);
	init_attr(&b);
	eth = add_spec(&b, IB_FLOW_SPEC_ETH, sizeof(*eth));
	ether_addr_copy(eth->val.dst_mac, dmac);
	eth_broadcast_addr(eth->mask.dst_mac);
	/* Bits outside the mask are not compared: a source the mask ignores. */
	memset(eth->val.src_mac, 0x5a, ETH_ALEN);
	ip = add_spec(&b, IB_FLOW_SPEC_IPV4, sizeof(*ip));
	ip->val.dst_ip = cpu_to_be32(0x02020200);
	ip->mask.dst_ip = cpu_to_be32(0xffffff00);
	l4 = add_spec(&b, IB_FLOW_SPEC_UDP, sizeof(*l4));
	l4->val.dst_port = cpu_to_be16(5678);
	l4->mask.dst_port = cpu_to_be16(0xffff);
	KUNIT_ASSERT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), 0);
	KUNIT_EXPECT_EQ(test, mask.layers, STAG_FLOW_ETH | STAG_FLOW_IPV4 | STAG_FLOW_UDP);
	KUNIT_EXPECT_TRUE(test, stag_flow_fields_match(&f, &val, &mask));

	f.l4.dst_port = cpu_to_be16(5679);
	KUNIT_EXPECT_FALSE(test, stag_flow_fields_match(&f, &val, &mask));
	f.l4.dst_port = cpu_to_be16(5678);
	f.ip4.dst_ip = cpu_to_be32(0x020202ff);
	KUNIT_EXPECT_TRUE(test, stag_flow_fields_match(&f, &val, &mask));
	f.ip4.dst_ip = cpu_to_be32(0x02020302);
	KUNIT_EXPECT_FALSE(test, stag_flow_fields_match(&f, &val, &mask));
	f.ip4.dst_ip = cpu_to_be32(0x02020202);
	f.eth.dst_mac[5] ^= 1;
	KUNIT_EXPECT_FALSE(test, stag_flow_fields_match(&f, &val, &mask));
	f.eth.dst_mac[5] ^= 1;
	/* The frame must carry each header the flow names. */
	f.layers &= ~STAG_FLOW_UDP;
	KUNIT_EXPECT_FALSE(test, stag_flow_fields_match(&f, &val, &mask));
	f.layers |= STAG_FLOW_TCP;
	KUNIT_EXPECT_FALSE(test, stag_flow_fields_match(&f, &val, &mask));

	/* No spec: every frame, even one too short for an Ethernet header. */
	init_attr(&b);
	KUNIT_ASSERT_EQ(test, stag_flow_compile(&b.attr, &val, &mask), 0);
	memset(&f, 0, sizeof(f));
	KUNIT_EXPECT_TRUE(test, stag_flow_fields_match(&f, &val, &mask));
}

static struct kunit_case stag_flow_cases[] = {
	KUNIT_CASE(flow_parse_ipv4_udp),
	KUNIT_CASE(flow_parse_vlan_ipv6_tcp),
	KUNIT_CASE(flow_parse_fragments),
	KUNIT_CASE(flow_parse_every_length),
	KUNIT_CASE(flow_parse_ihl),
	KUNIT_CASE(flow_parse_random),
	KUNIT_CASE(flow_compile_refusals),
	KUNIT_CASE(flow_compile_match),
	{}
};

static struct kunit_suite stag_flow_suite = {
	.name = "stag_flow",
	.test_cases = stag_flow_cases,
};

kunit_test_suites(&stag_flow_suite);
