// SPDX-License-Identifier: GPL-2.0
/*
 * Flows (ibv_create_flow): which Ethernet frames a Raw Packet QP receives.
 *
 * A flow names a QP, a priority and at most one spec per header: Ethernet,
 * IPv4 or IPv6, TCP or UDP. A frame matches it when the frame carries each
 * header the flow names, and each field under the spec's mask equals the
 * spec's value under it. A frame that comes in on a stag device's netdev,
 * or that a Raw Packet QP of the device sends to a group or to the
 * netdev's own address (raweth.c), goes to the QPs whose flows match it at
 * the best (lowest) priority that any flow matching it has: one copy to
 * each of those QPs, however many of its flows match, as a NIC's steering
 * table sends a frame to each destination of its best entry.
 *
 * Frames are copied, not taken: the netdev's own stack still gets every
 * frame, as a NIC does for a flow with IB_FLOW_ATTR_FLAGS_DONT_TRAP. A
 * packet tap cannot take a frame, and an rx_handler would take the netdev
 * from a bridge or a bond that wants it.
 *
 * The flows are one list, sorted by priority then QP, written under
 * flows_lock and read under RCU by the tap. The tap is registered with the
 * first flow, and unregistered a second after the list empties: while it
 * is, every frame the host sends is cloned for it, and a consumer that
 * churns its only flow does not wait a grace period each time. The tap
 * matches on the netdev pointer only and never holds one: a netdev that
 * goes takes its stag device, and the device's flows, with it. A flow
 * holds its QP (the core also refuses to destroy a QP that has flows); the
 * QP's reference is put a grace period after the flow leaves the list, so
 * that a tap still walking it may queue a frame.
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>
#include <net/ipv6.h>

#include "compat.h"
#include "counters.h"
#include "dev.h"
#include "flow.h"
#include "qp.h"
#include "roce.h"

struct stag_flow {
	struct ib_flow ibflow;
	struct list_head node;		/* on flows, under flows_lock and RCU */
	struct stag_qp *qp;		/* referenced */
	struct net_device *ndev;	/* the QP's device's (dev.h) */
	bool listens;			/* added dst_mac to the netdev's filter */
	u16 priority;
	struct stag_flow_fields val;	/* already under the mask */
	struct stag_flow_fields mask;
	struct rcu_head rcu;
};

static LIST_HEAD(flows);
static DEFINE_MUTEX(flows_lock);
static unsigned int nflows;	/* under flows_lock */
static bool tap_on;		/* under flows_lock */

static void tap_off_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(tap_off, tap_off_fn);

static int tap_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
		   struct net_device *orig_dev);

static struct packet_type tap = {
	.type = cpu_to_be16(ETH_P_ALL),
	.func = tap_rcv,
	STAG_PTYPE_ALL_NET(&init_net)
};

/* ---- matching ---- */

/**
 * stag_flow_parse() - a frame's fields, as the flow specs lay them out
 * @frame: the frame's first bytes, from its Ethernet header
 * @len: how many there are (at most STAG_FLOW_PARSE_LEN are looked at)
 * @f: the fields; @f->layers has the headers the frame carries whole
 *
 * One 802.1Q tag is looked through: its TCI is the Ethernet vlan_tag, the
 * type after it the ether_type. An IP fragment but the first has no L4
 * header. IPv6 extension headers are not looked through: a frame with
 * one carries no TCP or UDP header for a flow.
 */
void stag_flow_parse(const u8 *frame, u32 len, struct stag_flow_fields *f)
{
	const struct ethhdr *eth = (const struct ethhdr *)frame;
	u32 off = ETH_HLEN;
	bool first = true;
	__be16 proto;
	u8 l4;

	memset(f, 0, sizeof(*f));
	if (len < ETH_HLEN)
		return;
	f->layers = STAG_FLOW_ETH;
	ether_addr_copy(f->eth.dst_mac, eth->h_dest);
	ether_addr_copy(f->eth.src_mac, eth->h_source);
	proto = eth->h_proto;
	if (proto == htons(ETH_P_8021Q) && len >= VLAN_ETH_HLEN) {
		const struct vlan_hdr *vh = (const struct vlan_hdr *)(frame + ETH_HLEN);

		f->eth.vlan_tag = vh->h_vlan_TCI;
		proto = vh->h_vlan_encapsulated_proto;
		off = VLAN_ETH_HLEN;
	}
	f->eth.ether_type = proto;
	if (proto == htons(ETH_P_IP) && len >= off + sizeof(struct iphdr)) {
		const struct iphdr *ip = (const struct iphdr *)(frame + off);

		if (ip->version != 4 || ip->ihl < 5)
			return;
		f->layers |= STAG_FLOW_IPV4;
		f->ip4.src_ip = ip->saddr;
		f->ip4.dst_ip = ip->daddr;
		f->ip4.proto = ip->protocol;
		f->ip4.tos = ip->tos;
		f->ip4.ttl = ip->ttl;
		if (ip->frag_off & htons(IP_DF))
			f->ip4.flags |= IB_IPV4_DONT_FRAG;
		if (ip->frag_off & htons(IP_MF))
			f->ip4.flags |= IB_IPV4_MORE_FRAG;
		first = !(ip->frag_off & htons(IP_OFFSET));
		l4 = ip->protocol;
		off += ip->ihl * 4;
	} else if (proto == htons(ETH_P_IPV6) && len >= off + sizeof(struct ipv6hdr)) {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)(frame + off);

		if (ip6->version != 6)
			return;
		f->layers |= STAG_FLOW_IPV6;
		memcpy(f->ip6.src_ip, &ip6->saddr, sizeof(f->ip6.src_ip));
		memcpy(f->ip6.dst_ip, &ip6->daddr, sizeof(f->ip6.dst_ip));
		f->ip6.flow_label = ip6_flowlabel(ip6);
		f->ip6.next_hdr = ip6->nexthdr;
		f->ip6.traffic_class = ip6_tclass(ip6_flowinfo(ip6));
		f->ip6.hop_limit = ip6->hop_limit;
		l4 = ip6->nexthdr;
		off += sizeof(struct ipv6hdr);
	} else {
		return;
	}
	/* Both ports, source first, are the first four bytes of either header. */
	if (!first || len < off + 4 || (l4 != IPPROTO_TCP && l4 != IPPROTO_UDP))
		return;
	f->layers |= l4 == IPPROTO_TCP ? STAG_FLOW_TCP : STAG_FLOW_UDP;
	memcpy(&f->l4.src_port, frame + off, 2);
	memcpy(&f->l4.dst_port, frame + off + 2, 2);
}
EXPORT_SYMBOL_IF_KUNIT(stag_flow_parse);

static bool masked_equal(const void *field, const void *val, const void *mask, size_t n)
{
	const u8 *f = field, *v = val, *m = mask;
	size_t i;

	for (i = 0; i < n; i++)
		if ((f[i] & m[i]) != v[i])
			return false;
	return true;
}

/**
 * stag_flow_fields_match() - does a frame match a flow
 * @f: the frame's fields (stag_flow_parse())
 * @val: the flow's values, already under @mask
 * @mask: the flow's masks; @mask->layers the headers it names
 */
VISIBLE_IF_KUNIT bool stag_flow_fields_match(const struct stag_flow_fields *f,
					     const struct stag_flow_fields *val,
					     const struct stag_flow_fields *mask)
{
	if ((f->layers & mask->layers) != mask->layers)
		return false;
	if ((mask->layers & STAG_FLOW_ETH) &&
	    !masked_equal(&f->eth, &val->eth, &mask->eth, sizeof(f->eth)))
		return false;
	if ((mask->layers & STAG_FLOW_IPV4) &&
	    !masked_equal(&f->ip4, &val->ip4, &mask->ip4, sizeof(f->ip4)))
		return false;
	if ((mask->layers & STAG_FLOW_IPV6) &&
	    !masked_equal(&f->ip6, &val->ip6, &mask->ip6, sizeof(f->ip6)))
		return false;
	if ((mask->layers & (STAG_FLOW_TCP | STAG_FLOW_UDP)) &&
	    !masked_equal(&f->l4, &val->l4, &mask->l4, sizeof(f->l4)))
		return false;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(stag_flow_fields_match);

/* Copies a spec's value and mask, the value under the mask. */
static void take_filter(void *val, void *mask, const void *sval, const void *smask, size_t n)
{
	u8 *v = val, *m = mask;
	const u8 *sv = sval;
	size_t i;

	memcpy(m, smask, n);
	for (i = 0; i < n; i++)
		v[i] = sv[i] & m[i];
}

/**
 * stag_flow_compile() - a flow's specs as values and masks
 * @attr: the flow's attributes, its specs after it
 * @val: the values, under the masks
 * @mask: the masks; @mask->layers (and @val->layers) the headers named
 *
 * Return: 0; -EOPNOTSUPP for a spec stag does not match on (inner
 * headers, tunnels, IB, ESP, MPLS) or an action; -EINVAL for a spec whose
 * size is not its type's, two specs of one header, or IPv4 with IPv6 or
 * TCP with UDP, which no frame carries together.
 */
VISIBLE_IF_KUNIT int stag_flow_compile(const struct ib_flow_attr *attr,
				       struct stag_flow_fields *val,
				       struct stag_flow_fields *mask)
{
	const union ib_flow_spec *spec = attr->flows;
	size_t left;
	u32 layer, i;

	memset(val, 0, sizeof(*val));
	memset(mask, 0, sizeof(*mask));
	if (attr->size < sizeof(*attr))
		return -EINVAL;
	left = attr->size - sizeof(*attr);
	for (i = 0; i < attr->num_of_specs; i++) {
		if (left < offsetofend(union ib_flow_spec, size) || spec->size > left)
			return -EINVAL;
		switch (spec->type) {
		case IB_FLOW_SPEC_ETH:
			if (spec->size != sizeof(spec->eth))
				return -EINVAL;
			layer = STAG_FLOW_ETH;
			take_filter(&val->eth, &mask->eth, &spec->eth.val, &spec->eth.mask,
				    sizeof(val->eth));
			break;
		case IB_FLOW_SPEC_IPV4:
			if (spec->size != sizeof(spec->ipv4))
				return -EINVAL;
			layer = STAG_FLOW_IPV4;
			take_filter(&val->ip4, &mask->ip4, &spec->ipv4.val, &spec->ipv4.mask,
				    sizeof(val->ip4));
			break;
		case IB_FLOW_SPEC_IPV6:
			if (spec->size != sizeof(spec->ipv6))
				return -EINVAL;
			layer = STAG_FLOW_IPV6;
			take_filter(&val->ip6, &mask->ip6, &spec->ipv6.val, &spec->ipv6.mask,
				    sizeof(val->ip6));
			break;
		case IB_FLOW_SPEC_TCP:
		case IB_FLOW_SPEC_UDP:
			if (spec->size != sizeof(spec->tcp_udp))
				return -EINVAL;
			layer = spec->type == IB_FLOW_SPEC_TCP ? STAG_FLOW_TCP : STAG_FLOW_UDP;
			if (mask->layers & (STAG_FLOW_TCP | STAG_FLOW_UDP))
				return -EINVAL;
			take_filter(&val->l4, &mask->l4, &spec->tcp_udp.val, &spec->tcp_udp.mask,
				    sizeof(val->l4));
			break;
		default:
			return -EOPNOTSUPP;
		}
		if (mask->layers & layer)
			return -EINVAL;
		mask->layers |= layer;
		left -= spec->size;
		spec = (const union ib_flow_spec *)((const u8 *)spec + spec->size);
	}
	if ((mask->layers & STAG_FLOW_IPV4) && (mask->layers & STAG_FLOW_IPV6))
		return -EINVAL;
	val->layers = mask->layers;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_flow_compile);

/* ---- delivery ---- */

/* Queues a frame for a QP's work (raweth.c); consumes @skb. */
static void give(struct stag_qp *qp, struct sk_buff *skb)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);
	enum ib_qp_state state = stag_qp_state(qp);

	/* An RSS QP has no state to be in: its WQs' states decide (rss.c). */
	if (!qp->rss && state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD) {
		stag_count_drop(sdev, STAG_CNT_DROP_QP_STATE, qp->ibqp.qp_num);
		kfree_skb(skb);
		return;
	}
	if (skb_queue_len_lockless(&qp->roce.rx_req) >= STAG_ROCE_RX_MAX) {
		stag_count_drop(sdev, STAG_CNT_DROP_BACKLOG, qp->ibqp.qp_num);
		kfree_skb(skb);
		return;
	}
	skb_queue_tail(&qp->roce.rx_req, skb);
	stag_qp_kick(qp);
}

/*
 * A QP's copy of a frame: its data moved back to the Ethernet header
 * (@mac_len bytes before it), and a VLAN tag the netdev took out put back
 * where the frame had it. NULL when memory is short.
 */
static struct sk_buff *copy_frame(struct sk_buff *skb, u32 mac_len)
{
	struct sk_buff *copy = skb_clone(skb, GFP_ATOMIC);

	if (!copy)
		return NULL;
	skb_push(copy, mac_len);
	if (skb_vlan_tag_present(copy))
		copy = __vlan_hwaccel_push_inside(copy);
	return copy;
}

/*
 * A frame for the flows of @ndev's device, whose fields are @f: each QP
 * they go to gets its copy of @skb (copy_frame()), whose Ethernet header
 * is @mac_len bytes before its data. @sender, a QP whose own frame this
 * is, gets none. Under the RCU read lock, bottom halves off.
 */
static void deliver(const struct net_device *ndev, struct sk_buff *skb, u32 mac_len,
		    const struct stag_flow_fields *f, const struct stag_qp *sender)
{
	struct stag_qp *last = NULL;
	struct stag_flow *flow;
	struct sk_buff *copy;
	int best = -1;

	/* Sorted by priority, then QP: a QP's flows of one priority are together. */
	list_for_each_entry_rcu(flow, &flows, node) {
		if (best >= 0 && flow->priority != best)
			break;
		if (flow->ndev != ndev || flow->qp == sender || flow->qp == last ||
		    !stag_flow_fields_match(f, &flow->val, &flow->mask))
			continue;
		best = flow->priority;
		last = flow->qp;
		copy = copy_frame(skb, mac_len);
		if (!copy) {
			stag_count_drop(to_stag_dev(last->ibqp.device), STAG_CNT_DROP_BACKLOG,
					last->ibqp.qp_num);
			continue;
		}
		give(last, copy);
	}
}

/*
 * The tap: every frame of every netdev while a flow exists. It reads the
 * frame's headers in place, as the wire had them, and copies the frame
 * only for the QPs it goes to. Frames this host sends are the raw QPs'
 * own (stag_flow_loop()) or its stack's, which a NIC's receive steering
 * never sees.
 */
static int tap_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
		   struct net_device *orig_dev)
{
	struct stag_flow_fields f;
	u8 buf[STAG_FLOW_PARSE_LEN];
	u32 hlen = ETH_HLEN, len;

	if (skb->pkt_type == PACKET_OUTGOING || !skb_mac_header_was_set(skb) ||
	    dev->type != ARPHRD_ETHER || skb->data - skb_mac_header(skb) != ETH_HLEN)
		goto out;
	memcpy(buf, skb_mac_header(skb), ETH_HLEN);
	if (skb_vlan_tag_present(skb)) {
		/* The tag the netdev took out, back before the type it came with. */
		memcpy(buf + VLAN_ETH_HLEN - 2, buf + ETH_HLEN - 2, 2);
		memcpy(buf + ETH_HLEN - 2, &skb->vlan_proto, 2);
		put_unaligned_be16(skb_vlan_tag_get(skb), buf + ETH_HLEN);
		hlen = VLAN_ETH_HLEN;
	}
	len = min_t(u32, skb->len, sizeof(buf) - hlen);
	if (skb_copy_bits(skb, 0, buf + hlen, len))
		goto out;
	stag_flow_parse(buf, hlen + len, &f);
	deliver(dev, skb, ETH_HLEN, &f, NULL);
out:
	kfree_skb(skb);
	return NET_RX_SUCCESS;
}

/**
 * stag_flow_loop() - a frame a Raw Packet QP sends, to this host's flows
 * @ndev: the netdev it goes out on
 * @skb: the frame, its data the Ethernet header; consumed
 * @sender: the QP that sends it, which gets no copy
 *
 * Context: process context.
 */
void stag_flow_loop(const struct net_device *ndev, struct sk_buff *skb,
		    const struct stag_qp *sender)
{
	struct stag_flow_fields f;
	u8 buf[STAG_FLOW_PARSE_LEN];
	u32 len = min_t(u32, skb->len, sizeof(buf));

	if (!skb_copy_bits(skb, 0, buf, len)) {
		stag_flow_parse(buf, len, &f);
		local_bh_disable();
		rcu_read_lock();
		deliver(ndev, skb, 0, &f, sender);
		rcu_read_unlock();
		local_bh_enable();
	}
	kfree_skb(skb);
}

/* ---- the verbs ---- */

/*
 * A flow for one destination address has the netdev take frames for it,
 * as a NIC's steering does whatever the netdev asked for: a group joins
 * the netdev's multicast filter, another station's address its unicast
 * one (dev_mc_add() and dev_uc_add() count each address's users).
 */
static int listen_on(struct stag_flow *flow)
{
	const u8 *mac = flow->val.eth.dst_mac;
	int ret;

	if (!(flow->mask.layers & STAG_FLOW_ETH) ||
	    !is_broadcast_ether_addr(flow->mask.eth.dst_mac) || is_broadcast_ether_addr(mac) ||
	    ether_addr_equal(mac, flow->ndev->dev_addr))
		return 0;
	if (is_multicast_ether_addr(mac))
		ret = dev_mc_add(flow->ndev, mac);
	else
		ret = dev_uc_add(flow->ndev, mac);
	flow->listens = !ret;
	return ret;
}

static void unlisten(struct stag_flow *flow)
{
	const u8 *mac = flow->val.eth.dst_mac;

	if (!flow->listens)
		return;
	if (is_multicast_ether_addr(mac))
		dev_mc_del(flow->ndev, mac);
	else
		dev_uc_del(flow->ndev, mac);
}

/**
 * stag_flow_create() - the create_flow verb
 * @ibqp: the QP the flow's frames go to
 * @attr: the flow
 * @udata: the user's command; stag takes no driver data
 *
 * Return: the flow; ERR_PTR of -EOPNOTSUPP for a QP that is not a Raw
 * Packet QP, a flow type but NORMAL, the EGRESS flag, or a spec stag does
 * not match on; -EINVAL for a port but stag's or a malformed spec list
 * (stag_flow_compile()); -ENOMEM past STAG_MAX_FLOWS, or the netdev's
 * error adding the flow's address to its filter.
 */
struct ib_flow *stag_flow_create(struct ib_qp *ibqp, struct ib_flow_attr *attr,
				 struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibqp->device);
	struct stag_qp *qp = to_stag_qp(ibqp);
	struct stag_flow *flow, *pos;
	int ret;

	if (udata && udata->inlen)
		return ERR_PTR(-EINVAL);
	if (ibqp->qp_type != IB_QPT_RAW_PACKET || attr->type != IB_FLOW_ATTR_NORMAL ||
	    attr->flags & ~IB_FLOW_ATTR_FLAGS_DONT_TRAP)
		return ERR_PTR(-EOPNOTSUPP);
	if (attr->port != STAG_PORT_NUM)
		return ERR_PTR(-EINVAL);
	flow = kzalloc(sizeof(*flow), GFP_KERNEL_ACCOUNT);
	if (!flow)
		return ERR_PTR(-ENOMEM);
	ret = stag_flow_compile(attr, &flow->val, &flow->mask);
	if (ret)
		goto err_free;
	flow->priority = attr->priority;
	flow->ndev = sdev->ndev;
	flow->qp = qp;

	mutex_lock(&flows_lock);
	ret = -ENOMEM;
	if (nflows >= STAG_MAX_FLOWS)
		goto err_unlock;
	ret = listen_on(flow);
	if (ret)
		goto err_unlock;
	if (!tap_on)
		dev_add_pack(&tap);
	tap_on = true;
	nflows++;
	stag_qp_get(qp);
	/* Before the first of a higher priority, or of this one and a later QP. */
	list_for_each_entry(pos, &flows, node)
		if (pos->priority > flow->priority ||
		    (pos->priority == flow->priority && (unsigned long)pos->qp > (unsigned long)qp))
			break;
	list_add_tail_rcu(&flow->node, &pos->node);
	mutex_unlock(&flows_lock);
	return &flow->ibflow;

err_unlock:
	mutex_unlock(&flows_lock);
err_free:
	kfree(flow);
	return ERR_PTR(ret);
}

static void free_flow(struct rcu_head *head)
{
	struct stag_flow *flow = container_of(head, struct stag_flow, rcu);

	stag_qp_put(flow->qp);
	kfree(flow);
}

/**
 * stag_flow_destroy() - the destroy_flow verb
 * @ibflow: the flow
 *
 * No frame is queued for the QP by the flow once this returns but by a
 * tap already past it; those the QP's work takes as it would any other.
 *
 * Return: 0.
 */
int stag_flow_destroy(struct ib_flow *ibflow)
{
	struct stag_flow *flow = container_of(ibflow, struct stag_flow, ibflow);

	mutex_lock(&flows_lock);
	list_del_rcu(&flow->node);
	unlisten(flow);
	if (!--nflows)
		mod_delayed_work(system_wq, &tap_off, HZ);
	mutex_unlock(&flows_lock);
	call_rcu(&flow->rcu, free_flow);
	return 0;
}

static void tap_off_fn(struct work_struct *work)
{
	mutex_lock(&flows_lock);
	/* dev_remove_pack() waits for the taps running. */
	if (!nflows && tap_on)
		dev_remove_pack(&tap);
	tap_on = tap_on && nflows;
	mutex_unlock(&flows_lock);
}

/*
 * Module unload: every flow went with its device. The tap goes now if it
 * has not yet, and the flows' last puts run.
 */
void stag_flow_uninit(void)
{
	cancel_delayed_work_sync(&tap_off);
	tap_off_fn(NULL);
	rcu_barrier();
}
