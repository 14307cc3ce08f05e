/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag flows (ibv_create_flow): which Ethernet frames a Raw Packet QP
 * receives.
 */
#ifndef _STAG_FLOW_H
#define _STAG_FLOW_H

#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

struct stag_qp;

/* The most flows of the host; a list walked for every frame while any exists. */
#define STAG_MAX_FLOWS		1024

/* The headers a flow can name; a frame has those it carries whole. */
enum {
	STAG_FLOW_ETH	= BIT(0),
	STAG_FLOW_IPV4	= BIT(1),
	STAG_FLOW_IPV6	= BIT(2),
	STAG_FLOW_TCP	= BIT(3),
	STAG_FLOW_UDP	= BIT(4),
};

/*
 * A frame's fields as the flow specs lay them out, or a flow's values or
 * masks in the same layout.
 */
struct stag_flow_fields {
	u32 layers;
	struct ib_flow_eth_filter eth;
	struct ib_flow_ipv4_filter ip4;
	struct ib_flow_ipv6_filter ip6;
	struct ib_flow_tcp_udp_filter l4;
};

/* The bytes of a frame that stag_flow_parse() looks at, at most. */
#define STAG_FLOW_PARSE_LEN	(VLAN_ETH_HLEN + 60 + 4)

struct ib_flow *stag_flow_create(struct ib_qp *ibqp, struct ib_flow_attr *attr,
				 struct ib_udata *udata);
int stag_flow_destroy(struct ib_flow *ibflow);
void stag_flow_loop(const struct net_device *ndev, struct sk_buff *skb,
		    const struct stag_qp *sender);
void stag_flow_uninit(void);

void stag_flow_parse(const u8 *frame, u32 len, struct stag_flow_fields *f);

#if IS_ENABLED(CONFIG_KUNIT)
int stag_flow_compile(const struct ib_flow_attr *attr, struct stag_flow_fields *val,
		      struct stag_flow_fields *mask);
bool stag_flow_fields_match(const struct stag_flow_fields *f, const struct stag_flow_fields *val,
			    const struct stag_flow_fields *mask);
#endif

#endif /* _STAG_FLOW_H */
