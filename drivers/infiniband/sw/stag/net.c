// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE v2 packets out through the IP stack. The caller builds a packet's
 * transport headers, payload and pad, and leaves room for the ICRC; here
 * it gets its UDP header (source port from the path, checksum zero, as
 * rdma_rxe sends it) and IP header (DF set, TOS from the traffic class,
 * TTL from the hop limit, an ID from the stack's generator), then the
 * ICRC, which covers both, and goes to ip_local_out() or ip6_local_out()
 * on the route through the device's netdev: the neighbour table supplies
 * the MAC, and a destination on this host comes back in through lo. A
 * connection's packets of one length may go as a burst: one skb, split
 * again before the driver (stag_net_batch_build()).
 *
 * Routes of connected QPs are cached per QP (dst_cache, as UDP tunnels
 * do); a UD send looks its route up each time.
 */

#include <kunit/visibility.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/route.h>

#include "compat.h"
#include "dev.h"
#include "net.h"
#include "pkt.h"

/**
 * stag_net_alloc() - a packet of @len bytes from the BTH on
 * @sdev: the device it leaves from
 * @len: transport headers, payload, pad and ICRC
 * @gfp: GFP_ATOMIC or GFP_NOWAIT: the data path must not sleep for memory
 *
 * Return: the skb, its data the @len bytes to fill, or NULL.
 */
struct sk_buff *stag_net_alloc(struct stag_dev *sdev, unsigned int len, gfp_t gfp)
{
	struct sk_buff *skb = alloc_skb(STAG_NET_HEADROOM + len, gfp | __GFP_NOWARN);

	if (!skb)
		return NULL;
	skb_reserve(skb, STAG_NET_HEADROOM);
	skb_put(skb, len);
	return skb;
}
EXPORT_SYMBOL_IF_KUNIT(stag_net_alloc);

static void push_udp(struct sk_buff *skb, const struct stag_path *path)
{
	struct udphdr *uh;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(path->sport);
	uh->dest = htons(STAG_ROCE_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

static bool flush_icrc_rxe = true;
module_param(flush_icrc_rxe, bool, 0644);
MODULE_PARM_DESC(flush_icrc_rxe,
		 "FLUSHes carry rdma_rxe's ICRC, as rxe wants; N: the IBTA's (default: Y)");

/*
 * The ICRC goes last, once every byte it covers is in place. A FLUSH's is
 * rdma_rxe's unless told otherwise (stag_pkt_icrc_rxe_flush()): rxe is
 * the responder a FLUSH meets on the wire today, and stag takes either.
 */
static void put_icrc(struct sk_buff *skb)
{
	u8 *bth = skb_transport_header(skb) + sizeof(struct udphdr);
	u32 icrc;

	if (bth[0] == (STAG_OP_RC | STAG_OP_FLUSH) && READ_ONCE(flush_icrc_rxe))
		icrc = stag_pkt_icrc_rxe_flush(skb, bth);
	else
		icrc = stag_pkt_icrc(skb, bth);
	put_unaligned_le32(icrc, skb_tail_pointer(skb) - STAG_ICRC_LEN);
}

static u8 hop_limit(const struct stag_path *path)
{
	return path->hop_limit ?: 64;
}

/* The route of a path, a reference held; or an ERR_PTR(). */
static struct dst_entry *route4(struct stag_dev *sdev, const struct stag_path *path,
				struct dst_cache *cache)
{
	struct flowi4 fl = {
		.flowi4_oif = sdev->ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt = NULL;

	memcpy(&fl.saddr, path->sgid.raw + 12, 4);
	memcpy(&fl.daddr, path->dgid.raw + 12, 4);
	if (cache)
		rt = dst_cache_get_ip4(cache, &fl.saddr);
	if (!rt) {
		rt = ip_route_output_key(&init_net, &fl);
		if (IS_ERR(rt))
			return ERR_CAST(rt);
		if (cache)
			dst_cache_set_ip4(cache, &rt->dst, fl.saddr);
	}
	return &rt->dst;
}

static struct dst_entry *route6(struct stag_dev *sdev, const struct stag_path *path,
				struct dst_cache *cache)
{
	struct flowi6 fl = {
		.flowi6_oif = sdev->ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst = NULL;

	if (!IS_ENABLED(CONFIG_IPV6))
		return ERR_PTR(-EAFNOSUPPORT);
	memcpy(&fl.saddr, path->sgid.raw, sizeof(fl.saddr));
	memcpy(&fl.daddr, path->dgid.raw, sizeof(fl.daddr));
	if (cache)
		dst = dst_cache_get_ip6(cache, &fl.saddr);
	if (!dst) {
		dst = ip6_dst_lookup_flow(&init_net, NULL, &fl, NULL);
		if (IS_ERR(dst))
			return dst;
		if (cache)
			dst_cache_set_ip6(cache, dst, &fl.saddr);
	}
	return dst;
}

/* The UDP and IPv4 headers in front of @skb's BTH, but for the IP ID. */
static void headers4(struct sk_buff *skb, const struct stag_path *path)
{
	struct iphdr *iph;

	push_udp(skb, path);
	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = path->tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = hop_limit(path);
	iph->protocol = IPPROTO_UDP;
	memcpy(&iph->saddr, path->sgid.raw + 12, 4);
	memcpy(&iph->daddr, path->dgid.raw + 12, 4);
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
}

static void headers6(struct sk_buff *skb, const struct stag_path *path)
{
	struct ipv6hdr *ip6h;

	push_udp(skb, path);
	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	/* rdma_rxe sends flow label 0; the ICRC masks it anyway. */
	ip6_flow_hdr(ip6h, path->tclass, 0);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = hop_limit(path);
	memcpy(&ip6h->saddr, path->sgid.raw, sizeof(ip6h->saddr));
	memcpy(&ip6h->daddr, path->dgid.raw, sizeof(ip6h->daddr));
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
}

/*
 * Headers and ICRC on @n packets, @skb the first; an IPv4 packet's ID is
 * the first of @n the stack's generator hands out. Return: that ID.
 */
static u16 headers(struct sk_buff *skb, const struct stag_path *path, int n)
{
	if (path->ipv6) {
		headers6(skb, path);
		put_icrc(skb);
		return 0;
	}
	headers4(skb, path);
	__ip_select_ident(&init_net, ip_hdr(skb), n);
	put_icrc(skb);
	return ntohs(ip_hdr(skb)->id);
}

/* The route of @path, a reference held; or an ERR_PTR(). */
static struct dst_entry *route(struct stag_dev *sdev, const struct stag_path *path,
			       struct dst_cache *cache)
{
	return path->ipv6 ? route6(sdev, path, cache) : route4(sdev, path, cache);
}

/* @skb, its headers and ICRC on, down @dst (the reference is the skb's). */
static int output(const struct stag_path *path, struct dst_entry *dst, struct sk_buff *skb)
{
	skb_dst_set(skb, dst);
	if (path->ipv6)
		return ip6_local_out(&init_net, NULL, skb);
	return ip_local_out(&init_net, NULL, skb);
}

/**
 * stag_net_xmit() - send a packet built from its BTH on
 * @sdev: the device it leaves from
 * @path: where it goes
 * @cache: the QP's route cache, or NULL to look the route up
 * @skb: the packet, its data at the BTH, its last four bytes for the
 *	ICRC; consumed whatever happens
 *
 * Context: process context; runs the stack with bottom halves off (the
 * route cache is per CPU).
 * Return: 0, or a negative errno when the packet could not go (no route,
 * dropped on the way out); the caller treats it as lost.
 */
int stag_net_xmit(struct stag_dev *sdev, const struct stag_path *path, struct dst_cache *cache,
		  struct sk_buff *skb)
{
	struct dst_entry *dst;
	int ret;

	headers(skb, path, 1);
	local_bh_disable();
	dst = route(sdev, path, cache);
	if (IS_ERR(dst)) {
		kfree_skb(skb);
		ret = PTR_ERR(dst);
	} else {
		ret = output(path, dst, skb);
	}
	local_bh_enable();
	return net_xmit_eval(ret);
}

/**
 * stag_net_batch_add() - gather a packet into a batch
 * @b: the batch
 * @skb: a packet as stag_net_xmit() takes it
 *
 * Return: false, and @skb not taken, when the batch is full or its
 * packets are of another length: send the batch first.
 */
bool stag_net_batch_add(struct stag_net_batch *b, struct sk_buff *skb)
{
	if (b->n && (b->n == STAG_NET_BATCH_MAX || skb->len != b->len ||
		     (b->n + 1) * b->len > STAG_NET_BATCH_BYTES))
		return false;
	if (!b->n)
		b->head = skb;
	else
		b->tail->next = skb;
	b->tail = skb;
	b->len = skb->len;
	b->n++;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(stag_net_batch_add);

/*
 * @skb, its headers and ICRC on, as the next packet of @head's frag list.
 * Its data starts at the BTH, as in a list UDP GRO built: segmenting
 * takes it back to its Ethernet header through the network header.
 */
static void chain(struct sk_buff *head, struct sk_buff **tail, struct sk_buff *skb,
		  unsigned int hlen)
{
	__skb_pull(skb, hlen);
	if (*tail)
		(*tail)->next = skb;
	else
		skb_shinfo(head)->frag_list = skb;
	*tail = skb;
	head->len += skb->len;
	head->data_len += skb->len;
	head->truesize += skb->truesize;
}

/**
 * stag_net_batch_build() - the packets of a batch as one skb, and the
 *	batch emptied
 * @b: the batch
 * @path: where its packets go
 *
 * More than one packet make a UDP GSO skb: the first packet, the rest in
 * its frag list, each with its own headers and ICRC. The stack splits it
 * before the driver, which takes the packets as one burst and tells the
 * host once: a doorbell per packet was a tenth of a sender's time under
 * QEMU. Splitting a frag list keeps each packet's headers (their UDP
 * checksums stay zero) and rewrites only the IP lengths and IDs, to the
 * values the ICRCs were computed over: the first packet's ID and those
 * after it. A device that took the list whole would hand it on, and the
 * socket that received it would split it (stag_net_xmit_batch() gives
 * such a device the packets one by one).
 *
 * Return: the skb, its data at the IP header, or NULL for an empty batch.
 */
VISIBLE_IF_KUNIT struct sk_buff *stag_net_batch_build(struct stag_net_batch *b,
						      const struct stag_path *path)
{
	struct sk_buff *head = b->head, *skb, *next, *tail = NULL;
	unsigned int hlen, i, n = b->n;
	u16 id;

	b->head = NULL;
	b->tail = NULL;
	b->n = 0;
	if (!n)
		return NULL;
	next = head->next;
	head->next = NULL;
	id = headers(head, path, n);
	hlen = head->len - b->len;
	for (i = 1; (skb = next); i++) {
		next = skb->next;
		skb->next = NULL;
		if (path->ipv6) {
			headers6(skb, path);
		} else {
			headers4(skb, path);
			ip_hdr(skb)->id = htons(id + i);
		}
		put_icrc(skb);
		chain(head, &tail, skb, hlen);
	}
	if (n > 1) {
		skb_shinfo(head)->gso_size = b->len;
		skb_shinfo(head)->gso_segs = n;
		skb_shinfo(head)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
		/*
		 * No checksum to fill in (zero: none). CHECKSUM_NONE would
		 * have the stack split the list even for a device that takes
		 * it whole, and 6.1's UDP offload then declines (the device
		 * could) and warns of a bad offload.
		 */
		head->ip_summed = CHECKSUM_UNNECESSARY;
		/*
		 * The UDP length of the whole, as UDP GRO leaves it: a
		 * receiver given the list whole trims it to that length
		 * before it splits it. The split gives the first packet its
		 * own length back, the one its ICRC covers.
		 */
		udp_hdr(head)->len = htons(head->len - skb_transport_offset(head));
	}
	return head;
}
EXPORT_SYMBOL_IF_KUNIT(stag_net_batch_build);

static bool tx_bursts = true;
module_param(tx_bursts, bool, 0644);
MODULE_PARM_DESC(tx_bursts,
		 "A connection's packets go to the stack in bursts, split before the driver (default: Y)");

/*
 * May a burst go to @dev as one skb? Not to a device that would take it
 * whole (lo, veth, a bridge): a capture there would show the burst as one
 * packet, and the host receiving it would split it, with no driver to
 * save a doorbell. Nor when told not to: a qdisc above the driver, netem
 * for one, sees a burst as one packet, and would lose, duplicate or delay
 * it whole (lossy.sh and the bench's loss rows set tx_bursts=N).
 */
static bool bursts_ok(const struct net_device *dev)
{
	return READ_ONCE(tx_bursts) &&
	       !net_gso_ok(dev->features, SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST);
}

/**
 * stag_net_xmit_batch() - send the packets of a batch, and empty it
 * @sdev: the device they leave from
 * @path: where they go
 * @cache: the QP's route cache, or NULL to look the route up
 * @b: the batch; its packets are consumed whatever happens
 * @burst: set when they went as one skb (stag_net_batch_build())
 *
 * They go as one skb to a device that the stack splits them for, just
 * before its driver: a NIC's, a virtio device's. Otherwise (bursts_ok())
 * they go one by one.
 *
 * Context: as stag_net_xmit().
 * Return: how many of them could not go (no route, dropped on the way
 * out): lost.
 */
unsigned int stag_net_xmit_batch(struct stag_dev *sdev, const struct stag_path *path,
				 struct dst_cache *cache, struct stag_net_batch *b, bool *burst)
{
	unsigned int n = b->n, lost = 0;
	struct sk_buff *skb, *next;
	struct dst_entry *dst;
	int ret;

	*burst = false;
	if (!n)
		return 0;
	local_bh_disable();
	dst = route(sdev, path, cache);
	if (IS_ERR(dst)) {
		kfree_skb_list(b->head);
		lost = n;
	} else if (n > 1 && bursts_ok(dst->dev)) {
		*burst = true;
		/* net_xmit_eval() evaluates its argument twice. */
		ret = output(path, dst, stag_net_batch_build(b, path));
		if (net_xmit_eval(ret))
			lost = n;
		dst = NULL;
	} else {
		for (skb = b->head; skb; skb = next) {
			next = skb->next;
			skb->next = NULL;
			headers(skb, path, 1);
			ret = output(path, dst_clone(dst), skb);
			if (net_xmit_eval(ret))
				lost++;
		}
	}
	if (!IS_ERR_OR_NULL(dst))
		dst_release(dst);
	b->head = NULL;
	b->tail = NULL;
	b->n = 0;
	local_bh_enable();
	return lost;
}
