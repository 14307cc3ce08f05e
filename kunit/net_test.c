// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: a batch of packets (stag_net_batch_build()) split by the stack as
 * it splits one before a driver that cannot take it whole
 * (skb_gso_segment() with no offloads). Each packet must come out as it
 * went in, as stag_net_xmit() would have sent it alone: its own BTH and
 * payload, its UDP checksum zero, its lengths its own, its IPv4 ID the
 * batch's first plus its place, and an ICRC that holds over what the split
 * left. The same over IPv6, and for a batch of one (no GSO at all).
 */

#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include <net/gso.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "../net.h"
#include "../pkt.h"

#define PAYLOAD	1024

struct batch_case {
	const char *name;
	bool ipv6;
	unsigned int n;
};

static const struct batch_case batch_cases[] = {
	{ "ipv4, 5 packets", false, 5 },
	{ "ipv6, 5 packets", true, 5 },
	{ "ipv4, as many as a batch takes", false, STAG_NET_BATCH_MAX },
	{ "ipv4, one packet", false, 1 },
};

static void batch_case_desc(const struct batch_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(batch, batch_cases, batch_case_desc);

static void set_path(struct stag_path *path, bool ipv6)
{
	static const u8 v4s[4] = { 10, 77, 39, 18 }, v4d[4] = { 10, 77, 39, 17 };
	static const u8 v6s[16] = { 0xfd, 0, [15] = 2 }, v6d[16] = { 0xfd, 0, [15] = 1 };

	memset(path, 0, sizeof(*path));
	path->ipv6 = ipv6;
	if (ipv6) {
		memcpy(path->sgid.raw, v6s, 16);
		memcpy(path->dgid.raw, v6d, 16);
	} else {
		ipv6_addr_set_v4mapped(*(const __be32 *)v4s, (struct in6_addr *)path->sgid.raw);
		ipv6_addr_set_v4mapped(*(const __be32 *)v4d, (struct in6_addr *)path->dgid.raw);
	}
	path->sport = 0xc121;
	path->tclass = 0x10;
	path->hop_limit = 17;
}

/* Packet @i: an RC SEND MIDDLE of PSN 100 + i, its payload bytes i + j. */
static struct sk_buff *packet(struct kunit *test, unsigned int i)
{
	const struct stag_pkt p = {
		.opcode = STAG_OP_RC | STAG_OP_SEND_MIDDLE,
		.psn = 100 + i,
		.pkey = STAG_PKEY_DEFAULT,
		.qpn = 0x11,
	};
	unsigned int hlen = stag_pkt_ops[p.opcode].hlen, j;
	struct sk_buff *skb;

	skb = stag_net_alloc(NULL, hlen + PAYLOAD + STAG_ICRC_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	stag_pkt_build(skb->data, &p);
	for (j = 0; j < PAYLOAD; j++)
		skb->data[hlen + j] = i + j;
	return skb;
}

/* Segment @i, its data at the Ethernet header the split left on it. */
static void check_segment(struct kunit *test, const struct stag_path *path, struct sk_buff *seg,
			  unsigned int i, u16 id0)
{
	unsigned int nhlen = path->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	unsigned int plen = STAG_BTH_LEN + PAYLOAD + STAG_ICRC_LEN, j;
	const struct udphdr *uh;
	struct stag_pkt p;
	const u8 *bth;

	KUNIT_ASSERT_FALSE(test, skb_is_nonlinear(seg));
	KUNIT_ASSERT_EQ(test, seg->len, ETH_HLEN + nhlen + sizeof(*uh) + plen);
	KUNIT_ASSERT_EQ(test, skb_network_offset(seg), ETH_HLEN);
	KUNIT_ASSERT_EQ(test, skb_transport_offset(seg), ETH_HLEN + nhlen);
	if (path->ipv6) {
		const struct ipv6hdr *h = ipv6_hdr(seg);

		KUNIT_EXPECT_EQ(test, ntohs(h->payload_len), sizeof(*uh) + plen);
		KUNIT_EXPECT_EQ(test, h->hop_limit, 17);
		KUNIT_EXPECT_EQ(test, h->nexthdr, IPPROTO_UDP);
		KUNIT_EXPECT_EQ(test, memcmp(&h->daddr, path->dgid.raw, 16), 0);
	} else {
		const struct iphdr *h = ip_hdr(seg);

		KUNIT_EXPECT_EQ(test, ntohs(h->tot_len), nhlen + sizeof(*uh) + plen);
		KUNIT_EXPECT_EQ(test, ntohs(h->id), (u16)(id0 + i));
		KUNIT_EXPECT_EQ(test, ntohs(h->frag_off), IP_DF);
		KUNIT_EXPECT_EQ(test, h->ttl, 17);
		KUNIT_EXPECT_EQ(test, h->tos, 0x10);
		KUNIT_EXPECT_EQ(test, ip_fast_csum(h, h->ihl), 0);
		KUNIT_EXPECT_EQ(test, memcmp(&h->daddr, path->dgid.raw + 12, 4), 0);
	}
	uh = udp_hdr(seg);
	KUNIT_EXPECT_EQ(test, uh->check, 0);
	KUNIT_EXPECT_EQ(test, ntohs(uh->len), sizeof(*uh) + plen);
	KUNIT_EXPECT_EQ(test, ntohs(uh->source), 0xc121);
	KUNIT_EXPECT_EQ(test, ntohs(uh->dest), STAG_ROCE_UDP_PORT);
	bth = (const u8 *)(uh + 1);
	KUNIT_ASSERT_EQ(test, stag_pkt_parse(bth, plen, &p), 0);
	KUNIT_EXPECT_EQ(test, p.psn, 100 + i);
	KUNIT_EXPECT_EQ(test, p.opcode, STAG_OP_RC | STAG_OP_SEND_MIDDLE);
	for (j = 0; j < PAYLOAD; j++)
		if (bth[STAG_BTH_LEN + j] != (u8)(i + j))
			break;
	KUNIT_EXPECT_EQ(test, j, PAYLOAD);
	KUNIT_EXPECT_EQ(test, stag_pkt_icrc(seg, bth),
			get_unaligned_le32(skb_tail_pointer(seg) - STAG_ICRC_LEN));
}

static void stag_net_batch_splits_into_its_packets(struct kunit *test)
{
	const struct batch_case *c = test->param_value;
	struct stag_net_batch b = {};
	struct sk_buff *head, *segs, *seg, *next;
	struct stag_path path;
	unsigned int i;
	struct ethhdr *eth;
	u16 id0 = 0;

	set_path(&path, c->ipv6);
	for (i = 0; i < c->n; i++)
		KUNIT_ASSERT_TRUE(test, stag_net_batch_add(&b, packet(test, i)));
	head = stag_net_batch_build(&b, &path);
	KUNIT_ASSERT_NOT_NULL(test, head);
	KUNIT_EXPECT_EQ(test, b.n, 0);
	KUNIT_EXPECT_NULL(test, b.head);
	KUNIT_EXPECT_EQ(test, skb_is_gso(head), c->n > 1);
	KUNIT_EXPECT_EQ(test, skb_network_offset(head), 0);
	/* The UDP length of the whole: a device may hand the list on whole. */
	KUNIT_EXPECT_EQ(test, ntohs(udp_hdr(head)->len), head->len - skb_transport_offset(head));
	/* What ip_local_out() does: the lengths of the whole, the checksum. */
	if (c->ipv6) {
		ipv6_hdr(head)->payload_len = htons(head->len - sizeof(struct ipv6hdr));
	} else {
		id0 = ntohs(ip_hdr(head)->id);
		ip_hdr(head)->tot_len = htons(head->len);
		ip_send_check(ip_hdr(head));
	}
	/* What the neighbour layer and dev_queue_xmit() do before the split. */
	eth = skb_push(head, ETH_HLEN);
	memset(eth, 0, ETH_HLEN);
	eth->h_proto = c->ipv6 ? htons(ETH_P_IPV6) : htons(ETH_P_IP);
	skb_reset_mac_header(head);
	head->protocol = eth->h_proto;
	if (c->n == 1) {
		check_segment(test, &path, head, 0, id0);
		kfree_skb(head);
		return;
	}
	segs = skb_gso_segment(head, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, segs);
	/* The split returns the first packet, a reference of its own. */
	KUNIT_EXPECT_PTR_EQ(test, segs, head);
	consume_skb(head);
	i = 0;
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		if (i < c->n)
			check_segment(test, &path, seg, i, id0);
		kfree_skb(seg);
		i++;
	}
	KUNIT_EXPECT_EQ(test, i, c->n);
}

/* A batch takes packets of one length only, and no more than it may. */
static void stag_net_batch_refuses(struct kunit *test)
{
	struct stag_net_batch b = {};
	struct sk_buff *odd, *head;
	struct stag_path path;
	unsigned int i;

	set_path(&path, false);
	for (i = 0; i < STAG_NET_BATCH_MAX; i++)
		KUNIT_ASSERT_TRUE(test, stag_net_batch_add(&b, packet(test, i)));
	odd = packet(test, i);
	KUNIT_EXPECT_FALSE(test, stag_net_batch_add(&b, odd));
	KUNIT_EXPECT_EQ(test, b.n, STAG_NET_BATCH_MAX);
	head = stag_net_batch_build(&b, &path);
	kfree_skb(head);

	KUNIT_ASSERT_TRUE(test, stag_net_batch_add(&b, odd));
	odd = stag_net_alloc(NULL, STAG_BTH_LEN + 8 + STAG_ICRC_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, odd);
	KUNIT_EXPECT_FALSE(test, stag_net_batch_add(&b, odd));
	KUNIT_EXPECT_EQ(test, b.n, 1);
	kfree_skb(odd);
	kfree_skb(stag_net_batch_build(&b, &path));
	KUNIT_EXPECT_NULL(test, stag_net_batch_build(&b, &path));
}

static struct kunit_case stag_net_cases[] = {
	KUNIT_CASE_PARAM(stag_net_batch_splits_into_its_packets, batch_gen_params),
	KUNIT_CASE(stag_net_batch_refuses),
	{}
};

static struct kunit_suite stag_net_suite = {
	.name = "stag_net",
	.test_cases = stag_net_cases,
};

kunit_test_suite(stag_net_suite);
