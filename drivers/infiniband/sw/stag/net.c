// SPDX-License-Identifier: GPL-2.0
/*
 * RoCE v2 packets out through the IP stack. The caller builds a packet's
 * transport headers, payload and pad, and leaves room for the ICRC; here
 * it gets its UDP header (source port from the path, checksum zero, as
 * rdma_rxe sends it) and IP header (DF set, TOS from the traffic class,
 * TTL from the hop limit, an ID from the stack's generator), then the
 * ICRC, which covers both, and goes to ip_local_out() or ip6_local_out()
 * on the route through the device's netdev: the neighbour table supplies
 * the MAC, and a destination on this host comes back in through lo.
 *
 * Routes of connected QPs are cached per QP (dst_cache, as UDP tunnels
 * do); a UD send looks its route up each time.
 */

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

static int xmit4(struct stag_dev *sdev, const struct stag_path *path, struct dst_cache *cache,
		 struct sk_buff *skb)
{
	struct flowi4 fl = {
		.flowi4_oif = sdev->ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt = NULL;
	struct iphdr *iph;

	memcpy(&fl.saddr, path->sgid.raw + 12, 4);
	memcpy(&fl.daddr, path->dgid.raw + 12, 4);
	if (cache)
		rt = dst_cache_get_ip4(cache, &fl.saddr);
	if (!rt) {
		rt = ip_route_output_key(&init_net, &fl);
		if (IS_ERR(rt)) {
			kfree_skb(skb);
			return PTR_ERR(rt);
		}
		if (cache)
			dst_cache_set_ip4(cache, &rt->dst, fl.saddr);
	}

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
	iph->saddr = fl.saddr;
	iph->daddr = fl.daddr;
	__ip_select_ident(&init_net, iph, 1);
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	skb_dst_set(skb, &rt->dst);
	put_icrc(skb);
	return ip_local_out(&init_net, NULL, skb);
}

static int xmit6(struct stag_dev *sdev, const struct stag_path *path, struct dst_cache *cache,
		 struct sk_buff *skb)
{
	struct flowi6 fl = {
		.flowi6_oif = sdev->ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst = NULL;
	struct ipv6hdr *ip6h;

	if (!IS_ENABLED(CONFIG_IPV6)) {
		kfree_skb(skb);
		return -EAFNOSUPPORT;
	}
	memcpy(&fl.saddr, path->sgid.raw, sizeof(fl.saddr));
	memcpy(&fl.daddr, path->dgid.raw, sizeof(fl.daddr));
	if (cache)
		dst = dst_cache_get_ip6(cache, &fl.saddr);
	if (!dst) {
		dst = ip6_dst_lookup_flow(&init_net, NULL, &fl, NULL);
		if (IS_ERR(dst)) {
			kfree_skb(skb);
			return PTR_ERR(dst);
		}
		if (cache)
			dst_cache_set_ip6(cache, dst, &fl.saddr);
	}

	push_udp(skb, path);
	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	/* rdma_rxe sends flow label 0; the ICRC masks it anyway. */
	ip6_flow_hdr(ip6h, path->tclass, 0);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = hop_limit(path);
	ip6h->saddr = fl.saddr;
	ip6h->daddr = fl.daddr;
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	skb_dst_set(skb, dst);
	put_icrc(skb);
	return ip6_local_out(&init_net, NULL, skb);
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
	int ret;

	local_bh_disable();
	if (path->ipv6)
		ret = xmit6(sdev, path, cache, skb);
	else
		ret = xmit4(sdev, path, cache, skb);
	local_bh_enable();
	return net_xmit_eval(ret);
}
