/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag net: RoCE v2 packets in and out of the IP stack. A UDP tunnel
 * socket on port 4791 takes them in; on the way out each gets its UDP and
 * IP headers and its ICRC, and goes to ip_local_out() on the route
 * through the device's netdev.
 */
#ifndef _STAG_NET_H
#define _STAG_NET_H

#include <linux/skbuff.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

struct stag_dev;

/* Where a QP's packets go, and how they are marked (from an address vector). */
struct stag_path {
	union ib_gid sgid;
	union ib_gid dgid;
	bool ipv6;
	u16 sport;		/* UDP source port, rdma_get_udp_sport() */
	u8 tclass;
	u8 hop_limit;
};

/* Room for the Ethernet, IP and UDP headers in front of a packet. */
#define STAG_NET_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + sizeof(struct udphdr))

/*
 * Packets of one path, of one length, gathered to go to the stack at
 * once (stag_net_xmit_batch()); under the sender's lock.
 */
struct stag_net_batch {
	struct sk_buff *head;
	struct sk_buff *tail;
	unsigned int n;
	unsigned int len;	/* of each packet, from the BTH on */
};

/*
 * At most: the IP length of the whole, headers and all, must fit in 16
 * bits until the stack splits it (a device that takes it whole passes it
 * on as one IP packet).
 */
#define STAG_NET_BATCH_MAX	32
#define STAG_NET_BATCH_BYTES	60000

struct sk_buff *stag_net_alloc(struct stag_dev *sdev, unsigned int len, gfp_t gfp);
int stag_net_xmit(struct stag_dev *sdev, const struct stag_path *path, struct dst_cache *cache,
		  struct sk_buff *skb);
bool stag_net_batch_add(struct stag_net_batch *b, struct sk_buff *skb);
#if IS_ENABLED(CONFIG_KUNIT)
struct sk_buff *stag_net_batch_build(struct stag_net_batch *b, const struct stag_path *path);
#endif
unsigned int stag_net_xmit_batch(struct stag_dev *sdev, const struct stag_path *path,
				 struct dst_cache *cache, struct stag_net_batch *b, bool *burst);

#endif /* _STAG_NET_H */
