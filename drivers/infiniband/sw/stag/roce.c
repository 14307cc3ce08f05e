// SPDX-License-Identifier: GPL-2.0
/*
 * The RoCE v2 transport's way in and out.
 *
 * In: one UDP tunnel socket per address family on port 4791 of the
 * initial network namespace, shared by every stag device and held while
 * any exists. rdma_rxe binds the same port when it loads; while it has it,
 * stag devices carry traffic between QPs of this host only, and say so
 * once. A packet is checked before anything of it is used: its headers
 * (pkt.c), the stag device its destination address belongs to, the QP it
 * names, the QP's type and state, for RC and UC the QP's peer as its
 * source and the QP's own address as its destination, the P_Key, a UD
 * Q_Key, and the ICRC. What fails is dropped and counted by reason; what
 * passes waits for the QP's work in one of its two bounded queues.
 *
 * Out: every packet a QP sends counts against it until the stack frees
 * it, and holds a reference to it meanwhile.
 */

#include <linux/in6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/udp_tunnel.h>
#include <kunit/visibility.h>
#include <rdma/restrack.h>

#include "compat.h"
#include "counters.h"
#include "dev.h"
#include "mcast.h"
#include "qp.h"
#include "roce.h"
#include "route.h"
#include "wqe.h"

static bool loopback = true;
module_param(loopback, bool, 0644);
MODULE_PARM_DESC(loopback,
		 "Hand messages between QPs of this host over directly, not as packets (default: Y)");

static DEFINE_MUTEX(roce_lock);
static struct socket *roce_sock4, *roce_sock6;
static unsigned int roce_users;
static bool roce_told;	/* that the port is taken, once */

bool stag_roce_loopback_allowed(void)
{
	return READ_ONCE(loopback);
}

/* ---- what comes in ---- */

/*
 * The GIDs of a packet's source and destination, from its IP header; false
 * when the header is not one a RoCE packet may have.
 */
static bool addresses(const struct sk_buff *skb, union ib_gid *sgid, union ib_gid *dgid)
{
	if (ip_hdr(skb)->version == 4) {
		const struct iphdr *iph = ip_hdr(skb);

		ipv6_addr_set_v4mapped(iph->saddr, (struct in6_addr *)sgid->raw);
		ipv6_addr_set_v4mapped(iph->daddr, (struct in6_addr *)dgid->raw);
		/* The ICRC covers a 20-byte header: options have no place. */
		return iph->ihl == 5;
	}
	memcpy(sgid->raw, &ipv6_hdr(skb)->saddr, sizeof(sgid->raw));
	memcpy(dgid->raw, &ipv6_hdr(skb)->daddr, sizeof(dgid->raw));
	return true;
}

/* May the QP take this packet? The counter of the reason why not, or STAG_CNT_NUM. */
static enum stag_counter check_qp(const struct stag_qp *qp, const struct stag_pkt *p,
				  const union ib_gid *sgid, const union ib_gid *dgid)
{
	enum ib_qp_state state = stag_qp_state(qp);

	/* A Raw Packet QP takes Ethernet frames its flows match, never RoCE. */
	if (qp->ibqp.qp_type == IB_QPT_RAW_PACKET)
		return STAG_CNT_DROP_QP_STATE;
	if ((p->opcode & STAG_OP_CLASS_MASK) != stag_roce_class(qp))
		return STAG_CNT_DROP_QP_STATE;
	/* An XRC INI QP takes only responses, a TGT QP only requests. */
	if ((qp->ibqp.qp_type == IB_QPT_XRC_INI && p->flags & STAG_PKT_REQ) ||
	    (qp->ibqp.qp_type == IB_QPT_XRC_TGT && !(p->flags & STAG_PKT_REQ)))
		return STAG_CNT_DROP_QP_STATE;
	if (p->flags & STAG_PKT_REQ) {
		if (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD &&
		    state != IB_QPS_SQE)
			return STAG_CNT_DROP_QP_STATE;
	} else if (state != IB_QPS_RTS && state != IB_QPS_SQD && state != IB_QPS_SQE) {
		return STAG_CNT_DROP_QP_STATE;
	}
	if ((p->pkey & 0x7fff) != 0x7fff)
		return STAG_CNT_DROP_PKEY;
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		u32 qkey = qp->ibqp.qp_type == IB_QPT_GSI ? STAG_GSI_QKEY :
							    READ_ONCE(qp->attr.qkey);

		return p->qkey == qkey ? STAG_CNT_NUM : STAG_CNT_DROP_QKEY;
	}
	/* An RC or UC QP hears its peer only, at its own address. */
	if (!smp_load_acquire(&qp->roce.wire) ||
	    memcmp(sgid, &qp->roce.path.dgid, sizeof(*sgid)) ||
	    memcmp(dgid, &qp->roce.path.sgid, sizeof(*dgid)))
		return STAG_CNT_DROP_NOT_PEER;
	return STAG_CNT_NUM;
}

/* The IBTA's ICRC, or for a FLUSH rdma_rxe's too (stag_pkt_icrc_rxe_flush()). */
static bool icrc_ok(const struct sk_buff *skb)
{
	__le32 wire;
	u32 icrc;

	if (skb_copy_bits(skb, skb->len - STAG_ICRC_LEN, &wire, sizeof(wire)))
		return false;
	icrc = le32_to_cpu(wire);
	if (icrc == stag_pkt_icrc(skb, skb->data))
		return true;
	return skb->data[0] == (STAG_OP_RC | STAG_OP_FLUSH) &&
	       icrc == stag_pkt_icrc_rxe_flush(skb, skb->data);
}

/**
 * stag_roce_qp_gen() - the number of a QP's RESETs, read before a check
 * @qp: the QP
 *
 * Read before check_qp(): a packet checked against a path a RESET has
 * since taken away then carries an older number than the QP's.
 */
u32 stag_roce_qp_gen(const struct stag_qp *qp)
{
	/* Pairs with stag_roce_qp_disconnect(): this number, then its flag. */
	return smp_load_acquire(&qp->roce.gen);
}
EXPORT_SYMBOL_IF_KUNIT(stag_roce_qp_gen);

/**
 * stag_roce_stale() - was a queued packet checked before the QP's last RESET?
 * @qp: the QP
 * @skb: a packet from its rx_req or rx_resp queue
 *
 * The check (deliver()) and the queueing hold nothing a RESET waits for,
 * and the RESET empties the queues between the two: a packet checked
 * against the old connection can be queued after it, and the QP connected
 * again since (on the wire, perhaps to the same peer, whose old PSNs may
 * fit the new connection). Dropped, counted under drop_qp_state.
 *
 * Context: the QP's work, under sq.mutex or resp_mutex (either keeps the
 * number still: stag_roce_qp_disconnect() runs under both).
 */
bool stag_roce_stale(struct stag_qp *qp, struct sk_buff *skb)
{
	if (likely(stag_roce_cb(skb)->gen == READ_ONCE(qp->roce.gen)))
		return false;
	stag_count_drop(to_stag_dev(qp->ibqp.device), STAG_CNT_DROP_QP_STATE, qp->ibqp.qp_num);
	return true;
}

/*
 * Queues a checked packet for its QP's work, with the number of RESETs
 * read before the check; false when the queue is full.
 */
VISIBLE_IF_KUNIT bool stag_roce_enqueue(struct stag_qp *qp, struct sk_buff *skb,
					const struct stag_pkt *p, u32 gen)
{
	struct sk_buff_head *q = p->flags & STAG_PKT_REQ ? &qp->roce.rx_req : &qp->roce.rx_resp;

	if (skb_queue_len_lockless(q) >= STAG_ROCE_RX_MAX)
		return false;
	stag_roce_cb(skb)->gen = gen;
	skb_queue_tail(q, skb);
	stag_qp_kick(qp);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(stag_roce_enqueue);

/*
 * The packet for a QP of @sdev: checked, then queued. The caller's RCU
 * read lock keeps the device until the QP is found, and the QP's
 * reference keeps it afterwards.
 */
static void deliver(struct stag_dev *sdev, struct sk_buff *skb, const union ib_gid *sgid,
		    const union ib_gid *dgid)
{
	enum stag_counter drop = STAG_CNT_DROP_MALFORMED;
	struct stag_qp *qp = NULL;
	struct stag_pkt p;
	u8 op = skb->data[0];
	unsigned int len;
	u32 qpn = 0, gen;

	if (!pskb_may_pull(skb, stag_pkt_ops[op].hlen ?: STAG_BTH_LEN) ||
	    stag_pkt_parse(skb->data, skb->len, &p))
		goto drop;
	qpn = p.qpn;
	drop = STAG_CNT_DROP_NO_QP;
	qp = stag_qp_get_by_qpn(sdev, p.qpn);
	if (!qp)
		goto drop;
	gen = stag_roce_qp_gen(qp);
	drop = check_qp(qp, &p, sgid, dgid);
	if (drop != STAG_CNT_NUM)
		goto drop;
	drop = STAG_CNT_ICRC_ERR;
	if (!icrc_ok(skb))
		goto drop;
	/*
	 * Taken or dropped, never both: rcvd_pkts counts what the QP's work
	 * got. The length is read first: once queued, the work may free it.
	 */
	len = skb->len;
	drop = STAG_CNT_DROP_BACKLOG;
	if (!stag_roce_enqueue(qp, skb, &p, gen))
		goto drop;
	stag_count(sdev, STAG_CNT_RCVD_PKTS);
	stag_count_add(sdev, STAG_CNT_RCVD_BYTES, len);
	stag_qp_put(qp);
	return;

drop:
	stag_count_drop(sdev, drop, qpn);
	if (qp)
		stag_qp_put(qp);
	kfree_skb(skb);
}

/* The first device of @members whose netdev @ndev is. */
static struct stag_dev *group_dev(const struct stag_mcast_members *members,
				  const struct net_device *ndev)
{
	struct stag_dev *sdev;
	unsigned int i;

	for (i = 0; i < members->n; i++) {
		sdev = to_stag_dev(members->m[i].qp->ibqp.device);
		if (sdev->ndev == ndev)
			return sdev;
	}
	return NULL;
}

/*
 * A packet for a multicast group: a UD SEND to STAG_MCAST_QPN, for every
 * QP attached to the group on a device of the netdev it came in on. Each
 * gets a copy of its own, checked as a packet for it alone (state,
 * Q_Key), and counted for it: taken or dropped under the reason. The
 * headers and the ICRC are checked once; a packet that is not a whole UD
 * SEND to the group (@whole: its IP header and BTH are there) counts
 * once, as malformed.
 */
static void deliver_group(struct sk_buff *skb, const union ib_gid *sgid,
			  const union ib_gid *dgid, bool whole)
{
	struct stag_mcast_members *members;
	enum stag_counter drop;
	struct stag_dev *sdev;
	struct sk_buff *copy;
	struct stag_qp *qp;
	struct stag_pkt p;
	unsigned int i;
	bool icrc;
	u32 gen;
	u8 op;

	/* This host's own send, looped back: its members had it directly. */
	if (skb->pkt_type == PACKET_LOOPBACK && stag_roce_loopback_allowed())
		goto free;
	members = stag_mcast_get(dgid);
	if (!members)
		goto free;
	sdev = group_dev(members, skb->dev);
	if (!sdev)
		goto put;
	op = whole ? skb->data[0] : 0;
	if (!whole || !pskb_may_pull(skb, stag_pkt_ops[op].hlen ?: STAG_BTH_LEN) ||
	    stag_pkt_parse(skb->data, skb->len, &p) ||
	    (p.opcode & STAG_OP_CLASS_MASK) != STAG_OP_UD || p.qpn != STAG_MCAST_QPN) {
		stag_count_drop(sdev, STAG_CNT_DROP_MALFORMED, STAG_MCAST_QPN);
		goto put;
	}
	icrc = icrc_ok(skb);
	for (i = 0; i < members->n; i++) {
		qp = members->m[i].qp;
		sdev = to_stag_dev(qp->ibqp.device);
		if (sdev->ndev != skb->dev)
			continue;
		gen = stag_roce_qp_gen(qp);
		drop = check_qp(qp, &p, sgid, dgid);
		if (drop == STAG_CNT_NUM && !icrc)
			drop = STAG_CNT_ICRC_ERR;
		if (drop != STAG_CNT_NUM) {
			stag_count_drop(sdev, drop, qp->ibqp.qp_num);
			continue;
		}
		copy = skb_clone(skb, GFP_ATOMIC);
		if (!copy || !stag_roce_enqueue(qp, copy, &p, gen)) {
			stag_count_drop(sdev, STAG_CNT_DROP_BACKLOG, qp->ibqp.qp_num);
			kfree_skb(copy);
			continue;
		}
		/* @skb, the original, is still this function's to read. */
		stag_count(sdev, STAG_CNT_RCVD_PKTS);
		stag_count_add(sdev, STAG_CNT_RCVD_BYTES, skb->len);
	}
put:
	stag_mcast_put(members);
free:
	kfree_skb(skb);
}

/* The UDP tunnel's receive hook: the skb's data is its UDP header. */
static int roce_rcv(struct sock *sk, struct sk_buff *skb)
{
	union ib_gid sgid, dgid;
	struct stag_dev *sdev;
	bool whole;

	/* The UDP layer pulled its header; a BTH must follow. */
	__skb_pull(skb, sizeof(struct udphdr));
	whole = addresses(skb, &sgid, &dgid);
	whole = pskb_may_pull(skb, STAG_BTH_LEN) && whole;
	if (stag_mcast_is_group(&dgid)) {
		deliver_group(skb, &sgid, &dgid, whole);
		return 0;
	}
	rcu_read_lock();
	sdev = stag_route_dev_rcu(&dgid);
	if (sdev && whole) {
		deliver(sdev, skb, &sgid, &dgid);
		skb = NULL;
	} else if (sdev) {
		/* Every packet for a device is counted, a stub of one too. */
		stag_count_drop(sdev, STAG_CNT_DROP_MALFORMED, 0);
	}
	rcu_read_unlock();
	/* Not for a stag device: nothing to count it in. */
	kfree_skb(skb);
	return 0;
}

static struct socket *open_sock(bool ipv6)
{
	struct udp_port_cfg cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.local_udp_port = htons(STAG_ROCE_UDP_PORT),
		/* RoCE v2 sends UDP checksum zero, over IPv6 too. */
		.ipv6_v6only = 1,
	};
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = roce_rcv,
	};
	struct socket *sock;
	int ret;

	ret = udp_sock_create(&init_net, &cfg, &sock);
	if (ret)
		return ERR_PTR(ret);
	setup_udp_tunnel_sock(&init_net, stag_udp_tunnel_sk(sock), &tcfg);
	return sock;
}

static void close_socks(void)
{
	if (roce_sock6)
		udp_tunnel_sock_release(stag_udp_tunnel_sk(roce_sock6));
	if (roce_sock4)
		udp_tunnel_sock_release(stag_udp_tunnel_sk(roce_sock4));
	roce_sock6 = NULL;
	roce_sock4 = NULL;
}

static int open_socks(void)
{
	struct socket *sock;

	lockdep_assert_held(&roce_lock);
	sock = open_sock(false);
	if (IS_ERR(sock))
		return PTR_ERR(sock);
	roce_sock4 = sock;
	if (IS_ENABLED(CONFIG_IPV6)) {
		sock = open_sock(true);
		if (IS_ERR(sock) && PTR_ERR(sock) != -EAFNOSUPPORT) {
			close_socks();
			return PTR_ERR(sock);
		}
		roce_sock6 = IS_ERR(sock) ? NULL : sock;
	}
	return 0;
}

/**
 * stag_roce_get() - a device wants the wire
 *
 * Opens the sockets when nobody has them yet, which also happens for a
 * device added after rdma_rxe let the port go.
 *
 * Return: 0 when the wire is up; -EADDRINUSE when another has UDP port
 * 4791 (the device then carries traffic between QPs of this host only);
 * another errno when the sockets could not be opened.
 */
int stag_roce_get(void)
{
	int ret = 0;

	mutex_lock(&roce_lock);
	roce_users++;
	if (!roce_sock4) {
		ret = open_socks();
		if (ret == -EADDRINUSE && !roce_told) {
			pr_info("UDP port %u is taken (rdma_rxe?): stag devices carry traffic between QPs of this host only\n",
				STAG_ROCE_UDP_PORT);
			roce_told = true;
		} else if (!ret) {
			roce_told = false;
		}
	}
	mutex_unlock(&roce_lock);
	return ret;
}

/* A device is gone; the last one closes the sockets. */
void stag_roce_put(void)
{
	mutex_lock(&roce_lock);
	if (!--roce_users)
		close_socks();
	mutex_unlock(&roce_lock);
}

/* Is the wire up? Without it, only destinations on this host are reached. */
bool stag_roce_up(void)
{
	return READ_ONCE(roce_sock4);
}

/* ---- a QP on the wire ---- */

int stag_roce_qp_init(struct stag_qp *qp)
{
	skb_queue_head_init(&qp->roce.rx_req);
	skb_queue_head_init(&qp->roce.rx_resp);
	atomic_set(&qp->roce.tx_skbs, 0);
	memset(&qp->roce.tx_req, 0, sizeof(qp->roce.tx_req));
	memset(&qp->roce.tx_resp, 0, sizeof(qp->roce.tx_resp));
	return dst_cache_init(&qp->roce.dst, GFP_KERNEL);
}

/* After the QP's last reference: nobody can queue a packet for it any more. */
void stag_roce_qp_uninit(struct stag_qp *qp)
{
	skb_queue_purge(&qp->roce.rx_req);
	skb_queue_purge(&qp->roce.rx_resp);
	/* Each side sends what it gathered before it lets go of its lock. */
	WARN_ON_ONCE(qp->roce.tx_req.n || qp->roce.tx_resp.n);
	dst_cache_destroy(&qp->roce.dst);
}

/**
 * stag_roce_fill_res() - a QP's side of the wire, for rdma resource show qp -dd
 * @msg: the netlink message, inside the QP's driver table
 * @qp: the QP
 *
 * Packets the stack holds (tx_blocked: the QP waits for them to go) and
 * packets received, not run yet. Nothing for a QP that is not on the wire.
 *
 * Return: 0, or -EMSGSIZE when the message is full.
 */
int stag_roce_fill_res(struct sk_buff *msg, struct stag_qp *qp)
{
	/* Only a flag: nothing read here is published by it. */
	if (!READ_ONCE(qp->roce.wire))
		return 0;
	if (rdma_nl_put_driver_u32(msg, "mtu", stag_roce_mtu(qp)) ||
	    rdma_nl_put_driver_u32(msg, "tx_skbs", atomic_read(&qp->roce.tx_skbs)) ||
	    rdma_nl_put_driver_u32(msg, "tx_blocked",
				   test_bit(STAG_ROCE_TX_BLOCKED, &qp->roce.flags)) ||
	    rdma_nl_put_driver_u32(msg, "rx_req", skb_queue_len_lockless(&qp->roce.rx_req)) ||
	    rdma_nl_put_driver_u32(msg, "rx_resp", skb_queue_len_lockless(&qp->roce.rx_resp)))
		return -EMSGSIZE;
	return 0;
}

/**
 * stag_roce_path() - where a packet for an address vector goes
 * @path: filled
 * @av: the address vector, of a QP's path or a UD WQE's AH
 * @lqpn: the sending QP
 * @rqpn: the QP it sends to
 */
void stag_roce_path(struct stag_path *path, const struct stag_av *av, u32 lqpn, u32 rqpn)
{
	path->sgid = av->sgid;
	path->dgid = av->dgid;
	path->ipv6 = av->net_type == RDMA_NETWORK_IPV6;
	path->sport = rdma_get_udp_sport(av->flow_label, lqpn, rqpn);
	path->tclass = av->traffic_class;
	path->hop_limit = av->hop_limit;
}

/**
 * stag_roce_qp_connect() - an RC or UC QP's path is set (RTR)
 * @qp: the QP, its path and destination QP in its attributes
 *
 * Context: under sq.mutex, before any packet of the connection moves.
 */
void stag_roce_qp_connect(struct stag_qp *qp)
{
	struct stag_av av = {
		.sgid = qp->sgid,
		.dgid = qp->dgid,
		.net_type = qp->net_type,
		.flow_label = rdma_ah_read_grh(&qp->attr.ah_attr)->flow_label,
		.traffic_class = rdma_ah_read_grh(&qp->attr.ah_attr)->traffic_class,
		.hop_limit = rdma_ah_read_grh(&qp->attr.ah_attr)->hop_limit,
	};

	lockdep_assert_held(&qp->sq.mutex);
	stag_roce_path(&qp->roce.path, &av, qp->ibqp.qp_num, qp->attr.dest_qp_num);
	dst_cache_reset(&qp->roce.dst);
	/* Pairs with check_qp(): the path is in place before packets are taken. */
	smp_store_release(&qp->roce.wire, true);
}

/**
 * stag_roce_qp_disconnect() - a QP goes back to RESET
 * @qp: the QP (an RC, UC or XRC one had the flag up; the others never do)
 *
 * Its peer's packets are not its own any more. With the flag left up, a
 * QP once on the wire, reset and connected to a QP of this host
 * (loopback, no path of its own) went on taking the SENDs of its old
 * peer's address; and connected on the wire again, its path was written
 * while check_qp() could read it. Down here, up again at RTR once the new
 * path is in place (stag_roce_qp_connect()).
 *
 * Context: under sq.mutex and resp_mutex, the QP's work kept out.
 */
void stag_roce_qp_disconnect(struct stag_qp *qp)
{
	lockdep_assert_held(&qp->sq.mutex);
	lockdep_assert_held(&qp->resp_mutex);
	/* Lowered, it publishes nothing: check_qp() then reads no path. */
	WRITE_ONCE(qp->roce.wire, false);
	/*
	 * Whatever was checked before this is stale (stag_roce_stale()); a
	 * check that reads the new number reads the flag down, or up again
	 * with the next path.
	 */
	smp_store_release(&qp->roce.gen, qp->roce.gen + 1);
}

/* ---- what goes out ---- */

/* The opcode class of a QP's packets: RC, UC, XRC, or UD (GSI too). */
u8 stag_roce_class(const struct stag_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return STAG_OP_RC;
	case IB_QPT_UC:
		return STAG_OP_UC;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return STAG_OP_XRC;
	default:
		return STAG_OP_UD;
	}
}

/* The MTU of a QP's packets: its path MTU, or for UD the port's. */
u32 stag_roce_mtu(struct stag_qp *qp)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);

	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI)
		return ib_mtu_enum_to_int(stag_port_active_mtu(&sdev->port));
	return ib_mtu_enum_to_int(READ_ONCE(qp->attr.path_mtu));
}

/*
 * May the QP hand the stack another packet? When not, it is told by a
 * kick once enough of its packets are gone.
 */
bool stag_roce_tx_room(struct stag_qp *qp)
{
	if (atomic_read(&qp->roce.tx_skbs) < STAG_ROCE_TX_HIGH)
		return true;
	set_bit(STAG_ROCE_TX_BLOCKED, &qp->roce.flags);
	/* The packets may all have gone meanwhile: look again. */
	smp_mb__after_atomic();
	if (atomic_read(&qp->roce.tx_skbs) < STAG_ROCE_TX_HIGH &&
	    test_and_clear_bit(STAG_ROCE_TX_BLOCKED, &qp->roce.flags))
		return true;
	return false;
}

static void tx_done(struct sk_buff *skb)
{
	struct stag_qp *qp = skb_shinfo(skb)->destructor_arg;

	/*
	 * Once only. A packet of a batch's frag list (stag_net_xmit_batch())
	 * has its head state released when the stack splits the list
	 * (skb_segment_list()), which leaves the destructor set, and again
	 * when it is freed.
	 */
	skb->destructor = NULL;

	if (atomic_dec_return(&qp->roce.tx_skbs) <= STAG_ROCE_TX_LOW &&
	    test_bit(STAG_ROCE_TX_BLOCKED, &qp->roce.flags) &&
	    test_and_clear_bit(STAG_ROCE_TX_BLOCKED, &qp->roce.flags))
		stag_qp_kick(qp);
	stag_qp_put(qp);
}

/**
 * stag_roce_alloc() - a packet of @len bytes from the BTH on, for a QP
 * @qp: the QP that sends it
 * @len: transport headers, payload, pad and ICRC
 *
 * The data path allocates without sleeping: it may run on a storage ULP's
 * I/O path. A packet that cannot be had is sent later (RC) or lost (UC,
 * UD), as on a congested link.
 */
struct sk_buff *stag_roce_alloc(struct stag_qp *qp, unsigned int len)
{
	return stag_net_alloc(to_stag_dev(qp->ibqp.device), len, GFP_ATOMIC);
}

/* The packet holds a reference to the QP until the stack frees it. */
static void hold(struct stag_qp *qp, struct sk_buff *skb)
{
	stag_qp_get(qp);
	atomic_inc(&qp->roce.tx_skbs);
	skb_shinfo(skb)->destructor_arg = qp;
	skb->destructor = tx_done;
}

/* @n packets of @bytes in all went (@lost of them did not), @burst as one. */
static void sent(struct stag_qp *qp, unsigned int n, unsigned int bytes, unsigned int lost,
		 bool burst)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);

	while (lost--)
		stag_count_drop(sdev, STAG_CNT_DROP_TX, qp->ibqp.qp_num);
	stag_count_add(sdev, STAG_CNT_SENT_PKTS, n);
	stag_count_add(sdev, STAG_CNT_SENT_BYTES, bytes);
	if (burst)
		stag_count(sdev, STAG_CNT_SENT_BURSTS);
}

/**
 * stag_roce_xmit() - send a QP's packet
 * @qp: the QP
 * @path: where it goes (the QP's for RC and UC, a WQE's for UD)
 * @skb: from stag_roce_alloc(), filled but for the ICRC; consumed
 *
 * Return: 0, or the errno of a packet that could not go (it is counted).
 */
int stag_roce_xmit(struct stag_qp *qp, const struct stag_path *path, struct sk_buff *skb)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);
	unsigned int len = skb->len;
	bool connected = path == &qp->roce.path;
	int ret;

	hold(qp, skb);
	ret = stag_net_xmit(sdev, path, connected ? &qp->roce.dst : NULL, skb);
	if (ret)
		sent(qp, 0, 0, 1, false);
	else
		sent(qp, 1, len, 0, false);
	return ret;
}

/*
 * A batch belongs to one side of its QP: the requester's is used under
 * sq.mutex, the responder's under resp_mutex. Two sides on one batch would
 * interleave their packets, and lose some.
 */
static void assert_batch_owned(struct stag_qp *qp, struct stag_net_batch *b)
{
	if (b == &qp->roce.tx_req)
		lockdep_assert_held(&qp->sq.mutex);
	else if (b == &qp->roce.tx_resp)
		lockdep_assert_held(&qp->resp_mutex);
	else
		WARN_ON_ONCE(1);
}

/**
 * stag_roce_flush() - send the packets a connected QP gathered
 * @qp: the QP
 * @b: its requester's batch or its responder's, under the lock that
 *	side holds
 *
 * Lost packets are counted, as stag_roce_xmit() counts them.
 */
void stag_roce_flush(struct stag_qp *qp, struct stag_net_batch *b)
{
	struct stag_dev *sdev = to_stag_dev(qp->ibqp.device);
	unsigned int n = b->n, len = b->len, lost;
	bool burst;

	assert_batch_owned(qp, b);
	if (!n)
		return;
	lost = stag_net_xmit_batch(sdev, &qp->roce.path, &qp->roce.dst, b, &burst);
	sent(qp, n - lost, (n - lost) * len, lost, burst);
}

/**
 * stag_roce_queue() - send a connected QP's packet with those after it
 * @qp: the QP
 * @b: as for stag_roce_flush()
 * @skb: as for stag_roce_xmit()
 *
 * The packet waits in @b for the next of its length, and goes with them
 * at the latest when the side that sends it calls stag_roce_flush(),
 * before it lets go of its lock: what it sends otherwise (an ACK, a
 * packet of another length) flushes @b first, and keeps the order.
 */
void stag_roce_queue(struct stag_qp *qp, struct stag_net_batch *b, struct sk_buff *skb)
{
	assert_batch_owned(qp, b);
	hold(qp, skb);
	if (stag_net_batch_add(b, skb))
		return;
	stag_roce_flush(qp, b);
	/* An empty batch takes any packet. */
	stag_net_batch_add(b, skb);
}
