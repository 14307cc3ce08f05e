// SPDX-License-Identifier: GPL-2.0
/*
 * inject: forged RoCE v2 packets at a host, as any machine on its L2
 * segment could send them, reproducible by seed.
 *
 *   inject -t TARGET [-n COUNT] [-s SEED] [-i IFACE -p PEER] [-m MTU]
 *   inject -t GROUP -G QKEY -p ADDRESS [-n COUNT] [-s SEED] [-m MTU]
 *
 * Packets go out of a raw IPv4 socket (IP_HDRINCL, so the source address
 * is ours to choose) to UDP port 4791 of TARGET. Each is one of these
 * kinds, drawn from the seed:
 *
 *   random      random bytes after the UDP header's eight
 *   header      a BTH and extension headers all random, a wrong ICRC
 *   valid       a well-formed packet of a random opcode (RC, UC, UD or
 *               XRC) with random QPN, PSN, R_Key, VA, length and payload,
 *               an XRC request's SRQ number often one of the first 16 or
 *               one a watched request named (-i), and a valid ICRC
 *   truncated   a valid packet cut short, its ICRC made for what is left
 *               half of the time
 *   oversized   a payload beyond the MTU, a valid ICRC
 *   pad         a pad count that does not match the payload, a valid ICRC
 *   huge_reth   an RDMA WRITE whose RETH length is far beyond the MTU
 *   huge_read   an RDMA READ request for up to 4 GiB
 *   atomic      an atomic at an address that is not 8-byte aligned
 *
 * With -i, packets this host sends to TARGET over IFACE are watched (a
 * packet socket), and the QPNs and PSNs of TARGET's live QPs they name are
 * learnt: a third of the packets of the later kinds name one of them. They
 * come from an address that is not the peer's (-p), or, for an RC QP, from
 * the peer's own with a PSN at least 2^20 away from the last one seen:
 * outside any window. A packet that matches a connection exactly (the
 * peer's address and a PSN inside the window; for UC any PSN is, for UD
 * any address with the Q_Key, which is random here) can break it, and
 * RoCE cannot tell it from the peer's: those are never sent.
 *
 * With -R, every packet is instead an RDMA READ request that matches a
 * connection exactly: from the peer's address (-p) to the responder's QP,
 * at the next PSN it expects, with its real R_Key, each asking for LEN
 * bytes at VA (and with -B, every EVERY-th for BIG bytes). This is the one
 * attack RoCE cannot refuse, and it shows what the responder keeps for
 * reads it has taken: a READ flood from a peer that ignores
 * max_dest_rd_atomic. Watching IFACE (-i), the flood counts the responses
 * sent to PEERQPN (it sees them only where they leave from, the
 * responder's host: TARGET and PEER one address, IFACE lo, as qp_test
 * runs it) and, when the responder NAKs a sequence error (its
 * backlog overflowed and a request was dropped), goes on from the PSN the
 * NAK names, as a requester would. With -w, at most WINDOW reads are left
 * unanswered, and 300 ms without a response also sends the flood back to
 * the PSN after the last one answered: a paced flood, every request of
 * which the responder takes. The count goes on for 2 s after the last
 * request.
 *
 * With -G, TARGET is a multicast group's IPv4 address and the packets go
 * out of the interface of ADDRESS (-p), looped back to this host too, from
 * other addresses of its /24. Half of them are UD SENDs to the group's QPN
 * 0xffffff, half of those with the Q_Key QKEY: what any host may send a
 * group, the members take. The kinds above still cut, pad, stretch and
 * scramble them.
 *
 * With -T, inject gives up after SECONDS: it says how many packets it had
 * sent and exits with status 3.
 *
 * Output: what was sent, by kind. Exit status 0 when every packet was
 * handed to the stack.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ROCE_PORT	4791
#define BTH_LEN		12
#define ICRC_LEN	4
#define ICRC_SEED	0xdebb20e3u	/* the CRC-32 of 8 bytes of ones, standing for the LRH */
#define MAX_PKT		1500
#define LEARNT_MAX	64
#define FAR		0x100000u	/* a PSN this far from the live one is outside any window */
#define PSN_MASK	0xffffffu
#define MCAST_QPN	0xffffffu
#define OUR_TTL		37	/* the watch knows our own packets by it (the ICRC masks it) */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define WATCH_BATCH	64	/* packets read by one recvmmsg() */
#define WATCH_SNAP	128	/* bytes of each: IPv4, UDP, BTH and an extension header */

/* ---- the seed's generator (xorshift64*) ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static void rnd_bytes(uint8_t *p, size_t n)
{
	while (n--)
		*p++ = rnd();
}

/* ---- the ICRC, as IBA A17.3.3 and rdma_rxe compute it ---- */

static uint32_t crc_table[256];

static void crc_init(void)
{
	uint32_t c, i, k;

	for (i = 0; i < 256; i++) {
		for (c = i, k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32_le(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

/* The ICRC of @len bytes from the IP header at @pkt: the variant fields as ones. */
static uint32_t icrc(const uint8_t *pkt, size_t len)
{
	uint8_t ph[20 + 8 + BTH_LEN];
	uint32_t crc;

	memcpy(ph, pkt, sizeof(ph));
	ph[1] = 0xff;			/* TOS */
	ph[8] = 0xff;			/* TTL */
	memset(ph + 10, 0xff, 2);	/* header checksum */
	memset(ph + 26, 0xff, 2);	/* UDP checksum */
	ph[28 + 4] = 0xff;		/* FECN, BECN, reserved */
	crc = crc32_le(ICRC_SEED, ph, sizeof(ph));
	crc = crc32_le(crc, pkt + sizeof(ph), len - sizeof(ph));
	return ~crc;
}

/* ---- opcodes: what follows the BTH ---- */

enum {
	RETH = 1, IMM = 2, AETH = 4, ATOMIC = 8, ATOMIC_ACK = 16, IETH = 32, DETH = 64,
	PAYLOAD = 128, XRCETH = 256,
};

static const struct op {
	uint8_t code;
	uint16_t has;
} ops[] = {
	/* RC */
	{ 0x00, PAYLOAD }, { 0x01, PAYLOAD }, { 0x02, PAYLOAD }, { 0x03, IMM | PAYLOAD },
	{ 0x04, PAYLOAD }, { 0x05, IMM | PAYLOAD }, { 0x06, RETH | PAYLOAD }, { 0x07, PAYLOAD },
	{ 0x08, PAYLOAD }, { 0x09, IMM | PAYLOAD }, { 0x0a, RETH | PAYLOAD },
	{ 0x0b, RETH | IMM | PAYLOAD }, { 0x0c, RETH }, { 0x0d, AETH | PAYLOAD },
	{ 0x0e, PAYLOAD }, { 0x0f, AETH | PAYLOAD }, { 0x10, AETH | PAYLOAD }, { 0x11, AETH },
	{ 0x12, AETH | ATOMIC_ACK }, { 0x13, ATOMIC }, { 0x14, ATOMIC },
	{ 0x16, IETH | PAYLOAD }, { 0x17, IETH | PAYLOAD },
	/* UC */
	{ 0x20, PAYLOAD }, { 0x21, PAYLOAD }, { 0x22, PAYLOAD }, { 0x23, IMM | PAYLOAD },
	{ 0x24, PAYLOAD }, { 0x25, IMM | PAYLOAD }, { 0x26, RETH | PAYLOAD }, { 0x27, PAYLOAD },
	{ 0x28, PAYLOAD }, { 0x29, IMM | PAYLOAD }, { 0x2a, RETH | PAYLOAD },
	{ 0x2b, RETH | IMM | PAYLOAD },
	/* UD */
	{ 0x64, DETH | PAYLOAD }, { 0x65, DETH | IMM | PAYLOAD },
	/* XRC: RC's requests with an XRCETH first, RC's responses as they are */
	{ 0xa0, XRCETH | PAYLOAD }, { 0xa1, XRCETH | PAYLOAD }, { 0xa2, XRCETH | PAYLOAD },
	{ 0xa3, XRCETH | IMM | PAYLOAD }, { 0xa4, XRCETH | PAYLOAD },
	{ 0xa5, XRCETH | IMM | PAYLOAD }, { 0xa6, XRCETH | RETH | PAYLOAD },
	{ 0xa7, XRCETH | PAYLOAD }, { 0xa8, XRCETH | PAYLOAD }, { 0xa9, XRCETH | IMM | PAYLOAD },
	{ 0xaa, XRCETH | RETH | PAYLOAD }, { 0xab, XRCETH | RETH | IMM | PAYLOAD },
	{ 0xac, XRCETH | RETH }, { 0xad, AETH | PAYLOAD }, { 0xae, PAYLOAD },
	{ 0xaf, AETH | PAYLOAD }, { 0xb0, AETH | PAYLOAD }, { 0xb1, AETH },
	{ 0xb2, AETH | ATOMIC_ACK }, { 0xb3, XRCETH | ATOMIC }, { 0xb4, XRCETH | ATOMIC },
	{ 0xb6, XRCETH | IETH | PAYLOAD }, { 0xb7, XRCETH | IETH | PAYLOAD },
};

static const struct op *op_of(uint8_t code)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (ops[i].code == code)
			return &ops[i];
	return NULL;
}

static size_t ext_len(uint16_t has)
{
	return (has & RETH ? 16 : 0) + (has & IMM ? 4 : 0) + (has & AETH ? 4 : 0) +
	       (has & ATOMIC ? 28 : 0) + (has & ATOMIC_ACK ? 8 : 0) + (has & IETH ? 4 : 0) +
	       (has & DETH ? 8 : 0) + (has & XRCETH ? 4 : 0);
}

/* ---- what the watch learnt ---- */

struct learnt {
	uint32_t qpn;
	uint32_t psn;
	bool rc;		/* named by RC or XRC opcodes: reliable */
	unsigned long seen;	/* when, in packets sent */
};

static struct learnt learnt[LEARNT_MAX];
static unsigned int nlearnt;
static uint32_t srqns[8];	/* SRQ numbers XRC requests named, the latest first */
static unsigned int nsrqns;
static unsigned long xrc_seen;	/* XRC requests watched */
static int watch_fd = -1;
static struct in_addr target, peer;
static bool have_peer;
static bool group;		/* -G: TARGET is a multicast group */
static uint32_t group_qkey;

static void flood_seen(const uint8_t *b, size_t n, const struct sockaddr_ll *from);

/* One packet the packet socket held: to TARGET's port 4791, or passed over. */
static void watched(const uint8_t *b, ssize_t n, const struct sockaddr_ll *from,
		    unsigned long now)
{
	const struct iphdr *ip = (const void *)b;
	const struct udphdr *uh;
	const struct op *op;
	uint32_t qpn, psn;
	unsigned int i, old;

	if (from->sll_protocol != htons(ETH_P_IP) || n < 20 + 8 + BTH_LEN ||
	    ip->version != 4 || ip->ihl != 5 || ip->ttl == OUR_TTL ||
	    ip->protocol != IPPROTO_UDP || ip->daddr != target.s_addr)
		return;
	uh = (const void *)(b + 20);
	if (ntohs(uh->dest) != ROCE_PORT)
		return;
	flood_seen(b, n, from);
	qpn = (b[28 + 5] << 16 | b[28 + 6] << 8 | b[28 + 7]);
	psn = (b[28 + 9] << 16 | b[28 + 10] << 8 | b[28 + 11]);
	/* An XRC request's XRCETH names an SRQ of TARGET's. */
	op = op_of(b[28]);
	if (op && (op->has & XRCETH) && n >= 28 + BTH_LEN + 4) {
		memmove(srqns + 1, srqns, sizeof(srqns) - sizeof(srqns[0]));
		srqns[0] = b[28 + BTH_LEN + 1] << 16 | b[28 + BTH_LEN + 2] << 8 |
			   b[28 + BTH_LEN + 3];
		if (nsrqns < ARRAY_SIZE(srqns))
			nsrqns++;
		xrc_seen++;
	}
	if (qpn == 1)
		return;
	for (i = 0, old = 0; i < nlearnt && learnt[i].qpn != qpn; i++)
		if (learnt[i].seen < learnt[old].seen)
			old = i;
	/* A QP not heard of lately is gone: the longest silent makes room. */
	if (i == nlearnt && nlearnt < LEARNT_MAX)
		nlearnt++;
	else if (i == nlearnt)
		i = old;
	learnt[i] = (struct learnt){ qpn, psn, b[28] >> 5 == 0 || b[28] >> 5 == 5, now };
}

/*
 * Reads what the packet socket holds, WATCH_BATCH packets a call: a flood's
 * responses come in thousands, and one call for each, on a debug kernel
 * under TCG, left the flood's sends behind the responder's answers.
 */
static void watch(unsigned long now)
{
	static uint8_t b[WATCH_BATCH][WATCH_SNAP];
	static struct sockaddr_ll from[WATCH_BATCH];
	struct mmsghdr m[WATCH_BATCH];
	struct iovec v[WATCH_BATCH];
	int n, j;

	if (watch_fd < 0)
		return;
	do {
		for (j = 0; j < WATCH_BATCH; j++) {
			v[j] = (struct iovec){ .iov_base = b[j], .iov_len = sizeof(b[j]) };
			m[j].msg_hdr = (struct msghdr){ .msg_name = &from[j],
							.msg_namelen = sizeof(from[j]),
							.msg_iov = &v[j], .msg_iovlen = 1 };
		}
		n = recvmmsg(watch_fd, m, WATCH_BATCH, MSG_DONTWAIT, NULL);
		for (j = 0; j < n; j++)
			watched(b[j], m[j].msg_len, &from[j], now);
	} while (n == WATCH_BATCH);
}

/* Only a socket for every protocol sees what this host sends, not just what it receives. */
static int watch_open(const char *iface, bool leaving_only)
{
	static struct sock_filter leaving[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, WATCH_SNAP),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	static const struct sock_fprog outgoing = { .len = ARRAY_SIZE(leaving),
						    .filter = leaving };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int rcvbuf = 8 << 20;

	sll.sll_ifindex = if_nametoindex(iface);
	watch_fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL));
	/* Room for what a flood's responses bring between two looks (root may force it). */
	if (watch_fd >= 0 &&
	    setsockopt(watch_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(watch_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/*
	 * A flood counts only what leaves (flood_seen()): on lo the kernel
	 * keeps the arriving copy of each packet out of the queue, and only
	 * the first WATCH_SNAP bytes of the rest in it.
	 */
	if (watch_fd >= 0 && leaving_only &&
	    setsockopt(watch_fd, SOL_SOCKET, SO_ATTACH_FILTER, &outgoing, sizeof(outgoing))) {
		fprintf(stderr, "inject: SO_ATTACH_FILTER: %s\n", strerror(errno));
		return -1;
	}
	if (watch_fd < 0 || !sll.sll_ifindex ||
	    bind(watch_fd, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, "inject: watch %s: %s\n", iface, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- building ---- */

enum kind { K_RANDOM, K_HEADER, K_VALID, K_TRUNCATED, K_OVERSIZED, K_PAD, K_HUGE_RETH,
	    K_HUGE_READ, K_ATOMIC, K_NUM };

static const char * const kind_names[K_NUM] = {
	"random", "header", "valid", "truncated", "oversized", "pad", "huge_reth", "huge_read",
	"atomic",
};

static unsigned int mtu = 1024;

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

/* The IP and UDP headers of a packet of @len bytes from @src, to TARGET's port 4791. */
static void ip_udp(uint8_t *pkt, size_t len, struct in_addr src, uint8_t tos)
{
	struct iphdr *ip = (struct iphdr *)pkt;
	struct udphdr *uh = (struct udphdr *)(pkt + 20);

	ip->version = 4;
	ip->ihl = 5;
	ip->tos = tos;
	ip->tot_len = htons(len);
	ip->id = htons(1 + below(65535));
	ip->frag_off = htons(IP_DF);
	ip->ttl = OUR_TTL;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = src.s_addr;
	ip->daddr = target.s_addr;
	uh->source = htons(49152 + below(16384));
	uh->dest = htons(ROCE_PORT);
	uh->len = htons(len - 20);
}

/* A valid ICRC in the last four bytes of the packet of @len bytes at @pkt. */
static void put_icrc(uint8_t *pkt, size_t len)
{
	uint32_t c = icrc(pkt, len - ICRC_LEN);

	pkt[len - 4] = c;
	pkt[len - 3] = c >> 8;
	pkt[len - 2] = c >> 16;
	pkt[len - 1] = c >> 24;
}

/*
 * The source address and the QP and PSN a packet names. A third of them
 * name a QP the watch learnt; those never come from the peer's address
 * with a PSN near the live one.
 */
static void pick_target(struct in_addr *src, uint32_t *qpn, uint32_t *psn)
{
	const struct learnt *l = nlearnt && below(3) == 0 ? &learnt[below(nlearnt)] : NULL;
	uint32_t host = ntohl(group ? peer.s_addr : target.s_addr);
	unsigned int i;

	/* Half of those the QP heard from last: most learnt QPs are gone by now. */
	for (i = 0; l && below(2) && i < nlearnt; i++)
		if (learnt[i].seen > l->seen)
			l = &learnt[i];

	/* An address of TARGET's /24 (a group's: ADDRESS's), not its own nor the peer's. */
	do {
		src->s_addr = htonl((host & ~0xffu) | (1 + below(254)));
	} while (src->s_addr == target.s_addr || (have_peer && src->s_addr == peer.s_addr));
	*qpn = below(8) == 0 ? 1 : below(PSN_MASK + 1);
	*psn = below(PSN_MASK + 1);
	if (!l)
		return;
	*qpn = l->qpn;
	/*
	 * UC takes any PSN as the start of what comes next: from the peer's
	 * address, every PSN is inside its window. So is every PSN of UD,
	 * from any address, with the right Q_Key (never sent: see build()).
	 */
	if (have_peer && l->rc && below(2)) {
		*src = peer;
		*psn = (l->psn + (below(2) ? 1 : -1) * (FAR + below((1u << 23) - 2 * FAR))) &
		       PSN_MASK;
	}
}

/* A packet of @kind from the IP header on, into @pkt; its length. */
static size_t build(uint8_t *pkt, enum kind kind)
{
	uint8_t *bth = pkt + 28, *ext = bth + BTH_LEN, *after, *pay;
	const struct op *op = &ops[below(ARRAY_SIZE(ops))];
	size_t elen, paylen = 0, len, cut;
	uint32_t qpn, psn, pad;
	struct in_addr src;
	bool fix_icrc = true;

	pick_target(&src, &qpn, &psn);
	if (group && below(2)) {
		op = op_of(below(2) ? 0x64 : 0x65);
		qpn = MCAST_QPN;
	}
	if (kind == K_HUGE_RETH)
		op = op_of(below(2) ? 0x06 : 0x0a);
	else if (kind == K_HUGE_READ)
		op = op_of(0x0c);
	else if (kind == K_ATOMIC)
		op = op_of(below(2) ? 0x13 : 0x14);
	elen = ext_len(op->has);
	if (op->has & PAYLOAD)
		paylen = below(mtu + 1);
	/* Beyond the MTU, within the link's 1500 bytes (a path MTU of 1024 leaves room). */
	if (kind == K_OVERSIZED && 28 + BTH_LEN + elen + mtu + 4 + ICRC_LEN < MAX_PKT)
		paylen = mtu + 1 + below(MAX_PKT - 28 - BTH_LEN - elen - ICRC_LEN - mtu - 4);
	pad = -paylen & 3;
	if (kind == K_PAD)
		pad = (pad + 1 + below(3)) & 3;

	memset(pkt, 0, 28);
	bth[0] = op->code;
	bth[1] = (below(4) == 0 ? 0x80 : 0) | (pad & 3) << 4;	/* SE, pad, TVer 0 */
	memset(bth + 2, 0xff, 2);	/* the default P_Key */
	bth[4] = 0;
	put24(bth + 5, qpn);
	bth[8] = below(2) ? 0x80 : 0;
	put24(bth + 9, psn);
	rnd_bytes(ext, elen);
	/* The DETH comes first of a UD packet's headers: its Q_Key, then the source QP. */
	if ((op->has & DETH) && qpn == MCAST_QPN && below(2)) {
		ext[0] = group_qkey >> 24;
		ext[1] = group_qkey >> 16;
		ext[2] = group_qkey >> 8;
		ext[3] = group_qkey;
	}
	/*
	 * The XRCETH comes first of an XRC request's headers. Its SRQ number
	 * is, half of the time, one a watched request named or a neighbour
	 * of it (SRQs of one domain are often numbered in a row), else one of
	 * the first a device gives out (from 1), else random. @after is
	 * where the headers that follow it start.
	 */
	after = ext;
	if (op->has & XRCETH) {
		ext[0] = 0;
		if (nsrqns && below(2))
			put24(ext + 1, srqns[below(nsrqns)] + below(5) - 2);
		else if (below(2))
			put24(ext + 1, 1 + below(16));
		after += 4;
	}
	if (op->has & RETH) {
		uint8_t *reth = after;
		uint32_t dmalen = paylen;

		if (kind == K_HUGE_RETH || kind == K_HUGE_READ)
			dmalen = (below(2) ? 1u << 31 : 0) | below(1u << 31);
		else if (below(2))
			dmalen = below(1u << 16);
		reth[12] = dmalen >> 24;
		reth[13] = dmalen >> 16;
		reth[14] = dmalen >> 8;
		reth[15] = dmalen;
	}
	if (op->has & ATOMIC) {
		uint8_t *va = after;

		/* Not 8-byte aligned in K_ATOMIC; else half of them are. */
		if (kind == K_ATOMIC)
			va[7] = (va[7] & ~7) | (1 + below(7));
		else if (below(2))
			va[7] &= ~7;
	}
	pay = ext + elen;
	rnd_bytes(pay, paylen + pad);
	len = 28 + BTH_LEN + elen + paylen + pad + ICRC_LEN;

	if (kind == K_RANDOM) {
		len = 28 + below(MAX_PKT - 28 + 1);
		rnd_bytes(bth, len - 28);
		fix_icrc = false;
	} else if (kind == K_HEADER) {
		rnd_bytes(bth, BTH_LEN + elen);
		fix_icrc = false;
	} else if (kind == K_TRUNCATED) {
		cut = 1 + below(len - 28 - 1);
		len -= cut;
		fix_icrc = below(2) && len >= 28 + BTH_LEN + ICRC_LEN;
	}
	if (len > MAX_PKT)
		len = MAX_PKT;

	ip_udp(pkt, len, src, below(256));
	if (fix_icrc)
		put_icrc(pkt, len);
	else if (kind == K_HEADER)
		rnd_bytes(pkt + len - ICRC_LEN, ICRC_LEN);
	return len;
}

/* ---- a READ flood that matches a connection (-R) ---- */

static struct {
	bool on;
	uint32_t qpn, peer_qpn, psn, rkey, len, big, every, window;
	uint32_t expected;		/* the PSN after the last response seen */
	uint64_t va;
	unsigned long sent, responses, answered, resyncs;
} flood;

/*
 * What the responder sent the flood's victim: read responses, counted once
 * (on lo a packet socket sees each packet leave and arrive), and the NAK
 * of a sequence error, whose PSN is the one the responder expects.
 */
static void flood_seen(const uint8_t *b, size_t n, const struct sockaddr_ll *from)
{
	const uint8_t *bth = b + 28;
	uint8_t op = bth[0];
	uint32_t psn = bth[9] << 16 | bth[10] << 8 | bth[11];

	if (!flood.on || from->sll_pkttype != PACKET_OUTGOING ||
	    (uint32_t)(bth[5] << 16 | bth[6] << 8 | bth[7]) != flood.peer_qpn)
		return;
	if (op >= 0x0d && op <= 0x10) {
		flood.responses++;
		/* FIRST and ONLY open a response: one read answered. */
		flood.answered += op == 0x0d || op == 0x10;
		flood.expected = (psn + 1) & PSN_MASK;
	} else if (op == 0x11 && n >= 28 + BTH_LEN + 4 && bth[BTH_LEN] == 0x60) {
		flood.psn = psn;
		flood.sent = flood.answered;
		flood.resyncs++;
	}
}

/* Until fewer than the window's reads are unanswered; or 300 ms of silence: then resync. */
static void flood_wait(unsigned long now)
{
	unsigned long seen = flood.responses;
	struct pollfd p = { .fd = watch_fd, .events = POLLIN };
	int quiet = 0;

	while (flood.window && flood.sent - flood.answered >= flood.window) {
		if (poll(&p, 1, 10) <= 0)
			quiet += 10;
		watch(now);
		if (flood.responses != seen) {
			seen = flood.responses;
			quiet = 0;
		} else if (quiet >= 300) {
			flood.psn = flood.expected;
			flood.sent = flood.answered;
			flood.resyncs++;
		}
	}
}

/* The next READ request of the flood, from the IP header on, into @pkt; its length. */
static size_t build_read(uint8_t *pkt, unsigned long i)
{
	uint8_t *bth = pkt + 28, *reth = bth + BTH_LEN;
	uint32_t len = flood.every && i % flood.every == 0 ? flood.big : flood.len;
	size_t n = 28 + BTH_LEN + 16 + ICRC_LEN;
	int k;

	memset(pkt, 0, n);
	bth[0] = 0x0c;
	memset(bth + 2, 0xff, 2);
	put24(bth + 5, flood.qpn);
	bth[8] = 0x80;			/* AckReq */
	put24(bth + 9, flood.psn);
	for (k = 0; k < 8; k++)
		reth[k] = flood.va >> (56 - 8 * k);
	for (k = 0; k < 4; k++) {
		reth[8 + k] = flood.rkey >> (24 - 8 * k);
		reth[12 + k] = len >> (24 - 8 * k);
	}
	/* The responder takes one PSN for each response it owes. */
	flood.sent++;
	flood.psn = (flood.psn + (len ? (len + mtu - 1) / mtu : 1)) & PSN_MASK;

	ip_udp(pkt, n, peer, 0);
	put_icrc(pkt, n);
	return n;
}

static bool flood_args(const char *r, const char *b)
{
	unsigned long long v[6];

	if (r && sscanf(r, "%lli:%lli:%lli:%lli:%lli:%lli", &v[0], &v[1], &v[2], &v[3], &v[4],
			&v[5]) == 6) {
		flood.on = true;
		flood.qpn = v[0] & PSN_MASK;
		flood.peer_qpn = v[1] & PSN_MASK;
		flood.psn = v[2] & PSN_MASK;
		flood.rkey = v[3];
		flood.va = v[4];
		flood.len = v[5];
		flood.expected = flood.psn;
	} else if (r) {
		return false;
	}
	if (b && sscanf(b, "%i:%i", &flood.big, &flood.every) != 2)
		return false;
	return true;
}

static int bad_args(void)
{
	fprintf(stderr, "usage: inject [-T SECONDS] -t TARGET [-n COUNT] [-s SEED] "
		"[-i IFACE -p PEER] %s %s\n"
		"       inject [-T SECONDS] -t GROUP -G QKEY -p ADDRESS [-n COUNT] [-s SEED] "
		"[-m MTU]\n",
		"[-m MTU]", "[-R QPN:PEERQPN:PSN:RKEY:VA:LEN [-B BIG:EVERY] [-w WINDOW]]");
	return 2;
}

/*
 * -T: where the loop was when the deadline came, said before exiting, so a
 * test that gave up on inject learns whether it sent slowly or not at all.
 */
static atomic_ulong progress, progress_failed;

static void on_alarm(int sig)
{
	char b[128];
	int n;

	(void)sig;
	n = snprintf(b, sizeof(b), "# inject: deadline: %lu sent, %lu not taken; "
		     "flood: %lu responses\n", progress, progress_failed, flood.responses);
	if (n > 0 && write(1, b, n) < 0)
		_exit(4);
	_exit(3);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long count = 1000000, sent[K_NUM] = { 0 }, failed = 0, i;
	struct sockaddr_in dst = { .sin_family = AF_INET };
	const char *iface = NULL, *read_arg = NULL, *big_arg = NULL;
	unsigned int limit = 0;
	uint64_t seed = 1;
	uint8_t pkt[MAX_PKT];
	double t0, t;
	enum kind k;
	size_t len;
	int fd, c, err = 0;

	while ((c = getopt(argc, argv, "t:n:s:i:p:m:R:B:w:G:T:")) != -1) {
		switch (c) {
		case 't':
			if (!inet_aton(optarg, &target))
				return bad_args();
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'i':
			iface = optarg;
			break;
		case 'p':
			if (!inet_aton(optarg, &peer))
				return bad_args();
			have_peer = true;
			break;
		case 'm':
			mtu = atoi(optarg);
			break;
		case 'R':
			read_arg = optarg;
			break;
		case 'B':
			big_arg = optarg;
			break;
		case 'w':
			flood.window = strtoul(optarg, NULL, 0);
			break;
		case 'T':
			limit = strtoul(optarg, NULL, 0);
			break;
		case 'G':
			group = true;
			group_qkey = strtoul(optarg, NULL, 0);
			break;
		default:
			return bad_args();
		}
	}
	if (!target.s_addr || mtu < 256 || mtu > 4096 || !flood_args(read_arg, big_arg) ||
	    (flood.on && (!have_peer || !iface)) ||
	    (group && (!IN_MULTICAST(ntohl(target.s_addr)) || !have_peer || iface || flood.on)))
		return bad_args();
	crc_init();
	rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0 || (iface && watch_open(iface, flood.on))) {
		perror("inject: socket");
		return 1;
	}
	if (group) {
		struct ip_mreqn m = { .imr_address = peer };

		/* Out of ADDRESS's interface; looped back to this host's members as well. */
		if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &m, sizeof(m))) {
			perror("inject: IP_MULTICAST_IF");
			return 1;
		}
	}
	dst.sin_addr = target;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# inject: %lu packets at %s, seed %llu, MTU %u\n", count, inet_ntoa(target),
	       (unsigned long long)seed, mtu);
	signal(SIGALRM, on_alarm);
	alarm(limit);
	t0 = now();
	for (i = 0; i < count; i++) {
		progress = i;
		progress_failed = failed;
		if (!(i & (flood.on ? 15 : 255)))
			watch(i);
		if (flood.on)
			flood_wait(i);
		k = flood.on ? K_VALID : below(K_NUM);
		len = flood.on ? build_read(pkt, i) : build(pkt, k);
		if (sendto(fd, pkt, len, 0, (struct sockaddr *)&dst, sizeof(dst)) != (ssize_t)len) {
			/* A full socket buffer is the link's loss; anything else is ours. */
			if (errno != ENOBUFS && errno != EAGAIN && !err) {
				err = errno;
				fprintf(stderr, "inject: sendto %zu bytes: %s\n", len,
					strerror(err));
			}
			failed++;
			continue;
		}
		sent[k]++;
	}
	t = now() - t0;
	t = t > 0 ? t : 1;
	printf("# inject: %lu sent in %.1f s (%.0f/s), %lu not taken by the stack; %s: %u; "
	       "XRC requests seen: %lu\n", count - failed, t, (count - failed) / t, failed,
	       "QPs learnt", nlearnt, xrc_seen);
	if (flood.on) {
		/* The responder is still answering what it took: watch it for 2 s more. */
		for (t0 = now(); now() - t0 < 2;) {
			usleep(10000);
			watch(i);
		}
		printf("flood: %lu responses to QP %#x opening %lu reads, %lu resyncs\n",
		       flood.responses, flood.peer_qpn, flood.answered, flood.resyncs);
		return err ? 1 : 0;
	}
	for (k = 0; k < K_NUM; k++)
		printf("#   %-10s %lu\n", kind_names[k], sent[k]);
	return err ? 1 : 0;
}
