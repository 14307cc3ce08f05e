// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for RSS (rss.c): the Toeplitz hash against the verification
 * vectors of Microsoft's RSS specification, the fields an RSS QP's
 * configuration names taken from a frame's headers in their order (and
 * left out when the frame lacks them), and the configurations refused.
 */

#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/in.h>
#include <linux/unaligned.h>
#include <net/ip.h>

#include "../rss.h"

/* The key of the specification's vectors. */
static const u8 ms_key[STAG_RX_HASH_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct vec {
	u8 src[16], dst[16];
	u16 sport, dport;
	u32 ip_only, with_ports;
};

static const struct vec v4[] = {
	{ { 66, 9, 149, 187 }, { 161, 142, 100, 80 }, 2794, 1766, 0x323e8fc2, 0x51ccc178 },
	{ { 199, 92, 111, 2 }, { 65, 69, 140, 83 }, 14230, 4739, 0xd718262a, 0xc626b0ea },
};

static const struct vec v6[] = {
	{ { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, [15] = 7 },
	  { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, [15] = 1 },
	  2794, 1766, 0x2cc18cd5, 0x40207d3d },
};

/* The hash input as the specification lays it out: addresses, then ports. */
static void toeplitz_vectors(struct kunit *test)
{
	u8 in[36];
	int i;

	for (i = 0; i < ARRAY_SIZE(v4); i++) {
		memcpy(in, v4[i].src, 4);
		memcpy(in + 4, v4[i].dst, 4);
		put_unaligned_be16(v4[i].sport, in + 8);
		put_unaligned_be16(v4[i].dport, in + 10);
		KUNIT_EXPECT_EQ(test, stag_rss_toeplitz(ms_key, in, 8), v4[i].ip_only);
		KUNIT_EXPECT_EQ(test, stag_rss_toeplitz(ms_key, in, 12), v4[i].with_ports);
	}
	memcpy(in, v6[0].src, 16);
	memcpy(in + 16, v6[0].dst, 16);
	put_unaligned_be16(v6[0].sport, in + 32);
	put_unaligned_be16(v6[0].dport, in + 34);
	KUNIT_EXPECT_EQ(test, stag_rss_toeplitz(ms_key, in, 32), v6[0].ip_only);
	KUNIT_EXPECT_EQ(test, stag_rss_toeplitz(ms_key, in, 36), v6[0].with_ports);
	KUNIT_EXPECT_EQ(test, stag_rss_toeplitz(ms_key, in, 0), 0);
}

/* An Ethernet frame with IPv4 or IPv6 of @v, then its ports under @l4. */
static u32 frame(u8 *p, int ip, const struct vec *v, u8 l4, u16 frag_off)
{
	u32 off = ETH_HLEN;

	memset(p, 0xee, 128);
	eth_broadcast_addr(p);
	put_unaligned_be16(ip == 4 ? ETH_P_IP : ETH_P_IPV6, p + 12);
	if (ip == 4) {
		p[off] = 0x45;
		put_unaligned_be16(frag_off, p + off + 6);
		p[off + 9] = l4;
		memcpy(p + off + 12, v->src, 4);
		memcpy(p + off + 16, v->dst, 4);
		off += 20;
	} else {
		p[off] = 0x60;
		memset(p + off + 1, 0, 3);
		p[off + 6] = l4;
		memcpy(p + off + 8, v->src, 16);
		memcpy(p + off + 24, v->dst, 16);
		off += 40;
	}
	put_unaligned_be16(v->sport, p + off);
	put_unaligned_be16(v->dport, p + off + 2);
	return off + 8;
}

#define IP4	(STAG_RX_HASH_SRC_IPV4 | STAG_RX_HASH_DST_IPV4)
#define IP6	(STAG_RX_HASH_SRC_IPV6 | STAG_RX_HASH_DST_IPV6)
#define TCP	(STAG_RX_HASH_SRC_PORT_TCP | STAG_RX_HASH_DST_PORT_TCP)
#define UDP	(STAG_RX_HASH_SRC_PORT_UDP | STAG_RX_HASH_DST_PORT_UDP)

static u32 hash_of(u64 fields, const u8 *p, u32 len)
{
	struct stag_rss rss = { .fields = fields };

	memcpy(rss.key, ms_key, sizeof(rss.key));
	return stag_rss_hash(&rss, p, len);
}

/* The fields a configuration names, taken from the frame where it has them. */
static void hash_frames(struct kunit *test)
{
	u8 p[128];
	u32 len, cut;

	len = frame(p, 4, &v4[0], IPPROTO_TCP, 0);
	KUNIT_EXPECT_EQ(test, hash_of(IP4 | TCP, p, len), v4[0].with_ports);
	KUNIT_EXPECT_EQ(test, hash_of(IP4, p, len), v4[0].ip_only);
	/* UDP ports of a TCP segment, IPv6 addresses of an IPv4 packet: not in it. */
	KUNIT_EXPECT_EQ(test, hash_of(IP4 | UDP, p, len), v4[0].ip_only);
	KUNIT_EXPECT_EQ(test, hash_of(IP6 | TCP, p, len),
			stag_rss_toeplitz(ms_key, p + ETH_HLEN + 20, 4));
	len = frame(p, 4, &v4[1], IPPROTO_UDP, 0);
	KUNIT_EXPECT_EQ(test, hash_of(IP4 | UDP, p, len), v4[1].with_ports);
	/* A later fragment has no ports. */
	len = frame(p, 4, &v4[1], IPPROTO_UDP, 100);
	KUNIT_EXPECT_EQ(test, hash_of(IP4 | UDP, p, len), v4[1].ip_only);
	/*
	 * Nor is the first hashed over its ports (IP_MF, offset 0): every
	 * fragment of a datagram goes to one WQ, as Microsoft's RSS has it.
	 */
	len = frame(p, 4, &v4[1], IPPROTO_UDP, IP_MF);
	KUNIT_EXPECT_EQ(test, hash_of(IP4 | UDP, p, len), v4[1].ip_only);
	len = frame(p, 6, &v6[0], IPPROTO_TCP, 0);
	KUNIT_EXPECT_EQ(test, hash_of(IP6 | TCP, p, len), v6[0].with_ports);
	KUNIT_EXPECT_EQ(test, hash_of(IP6, p, len), v6[0].ip_only);
	KUNIT_EXPECT_EQ(test, hash_of(IP4, p, len), 0);
	/* Cut anywhere: no read past the end (KASAN), and a hash of what is whole. */
	for (cut = 0; cut <= len; cut++) {
		u8 *copy = kunit_kmalloc(test, cut ?: 1, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, copy);
		memcpy(copy, p, cut);
		hash_of(IP6 | TCP, copy, cut);
	}
}

static void conf_refused(struct kunit *test)
{
	static const struct {
		u64 fields;
		u8 fn, key_len, reserved;
		int err;
	} rows[] = {
		{ IP4 | UDP, STAG_RX_HASH_FUNC_TOEPLITZ, 40, 0, 0 },
		{ IP6, STAG_RX_HASH_FUNC_TOEPLITZ, 40, 0, 0 },
		{ TCP, STAG_RX_HASH_FUNC_TOEPLITZ, 40, 0, 0 },
		{ IP4, STAG_RX_HASH_FUNC_TOEPLITZ, 39, 0, -EINVAL },
		{ IP4, STAG_RX_HASH_FUNC_TOEPLITZ, 41, 0, -EINVAL },
		{ IP4, 2, 40, 0, -EOPNOTSUPP },
		{ IP4, 0, 40, 0, -EOPNOTSUPP },
		{ 0, STAG_RX_HASH_FUNC_TOEPLITZ, 40, 0, -EINVAL },
		{ IP4 | BIT(8), STAG_RX_HASH_FUNC_TOEPLITZ, 40, 0, -EOPNOTSUPP },
		{ IP4 | BIT_ULL(31), STAG_RX_HASH_FUNC_TOEPLITZ, 40, 0, -EOPNOTSUPP },
		{ IP4 | BIT_ULL(63), STAG_RX_HASH_FUNC_TOEPLITZ, 40, 0, -EOPNOTSUPP },
		{ STAG_RX_HASH_SRC_IPV4 | STAG_RX_HASH_DST_IPV6, STAG_RX_HASH_FUNC_TOEPLITZ, 40, 0,
		  -EINVAL },
		{ STAG_RX_HASH_SRC_PORT_TCP | STAG_RX_HASH_DST_PORT_UDP, STAG_RX_HASH_FUNC_TOEPLITZ,
		  40, 0, -EINVAL },
		{ IP4, STAG_RX_HASH_FUNC_TOEPLITZ, 40, 1, -EINVAL },
	};
	struct stag_create_qp_cmd cmd;
	int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		memset(&cmd, 0, sizeof(cmd));
		cmd.rx_hash_fields_mask = rows[i].fields;
		cmd.rx_hash_function = rows[i].fn;
		cmd.rx_hash_key_len = rows[i].key_len;
		cmd.reserved[5] = rows[i].reserved;
		KUNIT_EXPECT_EQ_MSG(test, stag_rss_check_conf(&cmd, 1), rows[i].err, "row %d", i);
	}

	/* No field over one WQ: steering without hashing, whatever function and key. */
	memset(&cmd, 0, sizeof(cmd));
	KUNIT_EXPECT_EQ(test, stag_rss_check_conf(&cmd, 0), 0);
	cmd.rx_hash_function = 2;
	KUNIT_EXPECT_EQ(test, stag_rss_check_conf(&cmd, 0), 0);
	cmd.reserved[0] = 1;
	KUNIT_EXPECT_EQ(test, stag_rss_check_conf(&cmd, 0), -EINVAL);
	cmd.reserved[0] = 0;
	cmd.rq.addr = 4096;
	KUNIT_EXPECT_EQ(test, stag_rss_check_conf(&cmd, 0), -EINVAL);
	cmd.rq.addr = 0;
	cmd.rx_hash_fields_mask = STAG_RX_HASH_SRC_IPV4;
	KUNIT_EXPECT_EQ(test, stag_rss_check_conf(&cmd, 0), -EOPNOTSUPP);
}

static struct kunit_case stag_rss_cases[] = {
	KUNIT_CASE(toeplitz_vectors),
	KUNIT_CASE(hash_frames),
	KUNIT_CASE(conf_refused),
	{}
};

static struct kunit_suite stag_rss_suite = {
	.name = "stag_rss",
	.test_cases = stag_rss_cases,
};

kunit_test_suites(&stag_rss_suite);
