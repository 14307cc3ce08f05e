// SPDX-License-Identifier: GPL-2.0
/*
 * Raw Packet QPs and flows: a send is an Ethernet frame, and a QP receives
 * the frames its flows (ibv_create_flow) match.
 *
 * Frames go to a group address, which the device loops back to this
 * host's flows as a NIC's switch does; the sending QP never gets its own.
 * Every received frame is compared byte for byte, with the bytes after it
 * and the guards unchanged; frames a flow does not match (one field off
 * by one) must not arrive. The refusals give their exact errno or status,
 * a process without CAP_NET_RAW gets EPERM, a RoCE send that names a raw
 * QP's number is dropped, and flows come and go while frames arrive.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/stag-abi.h>

#include "qp.h"
#include "stagdv.h"

#define FRAME		200	/* bytes of most frames sent */
#define RXLEN		512	/* bytes of a receive buffer */
#define ETYPE_TEST	0x88b5	/* IEEE local experimental */
#define PORT_A		5678

static const uint8_t group[6] = { 0x01, 0x50, 0x56, 0x19, 0x20, 0xa7 };
static const uint8_t group2[6] = { 0x01, 0x50, 0x56, 0x19, 0x20, 0xa8 };
static const uint8_t src_mac[6] = { 0x24, 0x8a, 0x07, 0xa5, 0x28, 0xc8 };
static const uint8_t ip6_dst[16] = { 0xb0, 0xb1, [12] = 0xb6, 0xb7, 0xb8, 0xb9 };

/* ---- frames ---- */

struct frame {
	const uint8_t *dst;
	int ip;			/* 0 (ETYPE_TEST), 4 or 6 */
	int l4;			/* 0, IPPROTO_UDP or IPPROTO_TCP */
	uint16_t dport;
	uint8_t dst_last;	/* the IPv4 destination is 2.2.2.<dst_last> */
	bool fragment;		/* IPv4: not the first fragment */
	uint16_t vid;		/* an 802.1Q tag with this VLAN ID, when not 0 */
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

/* @len bytes of fill(@seed) under the headers @f describes. */
static void frame_build(uint8_t *p, size_t len, const struct frame *f, unsigned int seed)
{
	size_t off = 14;

	fill(p, len, seed);
	memcpy(p, f->dst, 6);
	memcpy(p + 6, src_mac, 6);
	if (f->vid) {
		put16(p + 12, 0x8100);
		put16(p + 14, 0xa000 | f->vid);
		p += 4;
		len -= 4;
	}
	if (f->ip == 4) {
		put16(p + 12, 0x0800);
		p[14] = 0x45;
		p[15] = 0;
		put16(p + 16, len - 14);
		put16(p + 20, f->fragment ? 0x2000 | 100 : 0x4000);
		p[22] = 64;
		p[23] = f->l4 ?: 253;
		memcpy(p + 26, (uint8_t[]){ 1, 1, 1, 1 }, 4);
		memcpy(p + 30, (uint8_t[]){ 2, 2, 2, f->dst_last }, 4);
		off += 20;
	} else if (f->ip == 6) {
		put16(p + 12, 0x86dd);
		memcpy(p + 14, (uint8_t[]){ 0x60, 0, 0, 0 }, 4);
		put16(p + 18, len - 54);
		p[20] = f->l4 ?: 253;
		p[21] = 64;
		memset(p + 22, 0xa0, 16);
		memcpy(p + 38, ip6_dst, 16);
		off += 40;
	} else {
		put16(p + 12, ETYPE_TEST);
	}
	if (f->l4) {
		put16(p + off, 1234);
		put16(p + off + 2, f->dport);
	}
}

/* ---- flows ---- */

struct flow_buf {
	union {
		struct ibv_flow_attr attr;
		uint8_t b[512];
	};
};

static void fa_init(struct flow_buf *f, uint16_t priority)
{
	memset(f, 0, sizeof(*f));
	f->attr.type = IBV_FLOW_ATTR_NORMAL;
	f->attr.size = sizeof(f->attr);
	f->attr.priority = priority;
	f->attr.port = 1;
}

static void *fa_add(struct flow_buf *f, uint32_t type, uint16_t size)
{
	struct ibv_flow_spec *s = (struct ibv_flow_spec *)(f->b + f->attr.size);

	s->hdr.type = type;
	s->hdr.size = size;
	f->attr.size += size;
	f->attr.num_of_specs++;
	return s;
}

static void fa_eth(struct flow_buf *f, const uint8_t *dst, uint16_t etype)
{
	struct ibv_flow_spec_eth *e = fa_add(f, IBV_FLOW_SPEC_ETH, sizeof(*e));

	memcpy(e->val.dst_mac, dst, 6);
	memset(e->mask.dst_mac, 0xff, 6);
	if (etype) {
		e->val.ether_type = htons(etype);
		e->mask.ether_type = 0xffff;
	}
}

static void fa_ip4(struct flow_buf *f, uint8_t dst_last)
{
	struct ibv_flow_spec_ipv4_ext *s = fa_add(f, IBV_FLOW_SPEC_IPV4_EXT, sizeof(*s));

	memcpy(&s->val.dst_ip, (uint8_t[]){ 2, 2, 2, dst_last }, 4);
	s->mask.dst_ip = 0xffffffff;
}

static void fa_ip6(struct flow_buf *f)
{
	struct ibv_flow_spec_ipv6 *s = fa_add(f, IBV_FLOW_SPEC_IPV6, sizeof(*s));

	memcpy(s->val.dst_ip, ip6_dst, 16);
	memset(s->mask.dst_ip, 0xff, 16);
}

static void fa_l4(struct flow_buf *f, int proto, uint16_t dport)
{
	struct ibv_flow_spec_tcp_udp *s =
		fa_add(f, proto == IPPROTO_TCP ? IBV_FLOW_SPEC_TCP : IBV_FLOW_SPEC_UDP, sizeof(*s));

	s->val.dst_port = htons(dport);
	s->mask.dst_port = 0xffff;
}

static struct ibv_flow *flow_new(struct end *e, struct flow_buf *f)
{
	struct ibv_flow *flow = ibv_create_flow(e->qp, &f->attr);

	if (!flow) {
		t_fail("ibv_create_flow on QP %#x: %s", e->qp->qp_num, strerror(errno));
		return NULL;
	}
	track(K_FLOW, flow, 0);
	return flow;
}

static void expect_flow_refused(struct end *e, struct flow_buf *f, int err, const char *what)
{
	struct ibv_flow *flow = ibv_create_flow(e->qp, &f->attr);

	if (flow) {
		t_fail("%s: ibv_create_flow succeeded, expected %s", what, strerror(err));
		track(K_FLOW, flow, 0);
		return;
	}
	t_check(errno == err, "%s: ibv_create_flow: %s, expected %s", what, strerror(errno),
		strerror(err));
}

/* ---- QPs ---- */

/* A Raw Packet QP with CQs of its own, in RTS; NULL (the case skipped) where there is none. */
static struct end *raw_end(void)
{
	struct ibv_cq *scq = cq_new(), *rcq = cq_new();
	struct ibv_qp_init_attr a = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = MAX_SGE,
			 .max_recv_sge = MAX_SGE, .max_inline_data = MAX_INLINE },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct end *e;
	int ret;

	if (!scq || !rcq)
		return NULL;
	e = calloc(1, sizeof(*e));
	e->scq = scq;
	e->rcq = rcq;
	e->qp = ibv_create_qp(pd, &a);
	if (!e->qp) {
		if (errno == EOPNOTSUPP && !is_stag())
			case_skip("the device has no Raw Packet QPs");
		else
			t_fail("ibv_create_qp RAW_PACKET: %s", strerror(errno));
		return NULL;
	}
	track(K_QP, e->qp, 0);
	ret = ibv_modify_qp(e->qp, &attr, IBV_QP_STATE | IBV_QP_PORT);
	attr.qp_state = IBV_QPS_RTR;
	if (!ret)
		ret = ibv_modify_qp(e->qp, &attr, IBV_QP_STATE);
	attr.qp_state = IBV_QPS_RTS;
	if (!ret)
		ret = ibv_modify_qp(e->qp, &attr, IBV_QP_STATE);
	t_check(!ret, "raw QP %#x to RTS: %s", e->qp->qp_num, strerror(ret));
	return ret ? NULL : e;
}

/* Sends @len bytes of @tx as one frame; its completion must be @status. */
static bool send_frame(struct end *e, struct buf *tx, size_t len, uint64_t wr_id,
		       enum ibv_wc_status status, const char *what)
{
	struct ibv_sge sg = sge_of(tx, 0, len);
	struct ibv_send_wr wr = wr_send(wr_id, &sg, 1);

	return !post(e, &wr) && expect_wc(e->scq, wr_id, status, IBV_WC_SEND, NULL, what);
}

/* The frame must be in @rx whole, what follows it blank, the guards intact. */
static void expect_frame(struct end *e, struct buf *rx, uint64_t wr_id, const uint8_t *frame,
			 size_t len, const char *what)
{
	uint8_t want[RXLEN];
	struct ibv_wc wc;

	if (!expect_wc(e->rcq, wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, what))
		return;
	t_check(wc.byte_len == len, "%s: byte_len %u, expected %zu", what, wc.byte_len, len);
	fill(want, rx->len, BLANK);
	memcpy(want, frame, len);
	expect_bytes(rx->data, want, rx->len, what);
	expect_guards(rx, what);
}

/* Posts the whole of @rx, blank again, as @e's receive @wr_id. */
static void post_rx(struct end *e, struct buf *rx, uint64_t wr_id)
{
	struct ibv_sge sg = sge_of(rx, 0, rx->len);

	fill(rx->data, rx->len, BLANK);
	post_recv(e, wr_id, &sg, 1);
}

/* Sends a frame from @a that only @b of @ends may receive, into its posted @rx. */
static void expect_only(struct end *a, struct buf *tx, const struct frame *f, struct end *b,
			struct buf *rx, struct end *const *ends, int n, const char *what)
{
	static unsigned int seed = 100;
	int i;

	frame_build((uint8_t *)tx->data, FRAME, f, ++seed);
	if (!send_frame(a, tx, FRAME, seed, IBV_WC_SUCCESS, what))
		return;
	if (b) {
		expect_frame(b, rx, 1, (uint8_t *)tx->data, FRAME, what);
		post_rx(b, rx, 1);
	}
	for (i = 0; i < n; i++)
		if (ends[i] != b)
			expect_none(ends[i]->rcq, QUIET_MS, what);
}

/* ---- cases ---- */

/* An Ethernet flow: the frame lands whole; the sender, a group off by one, a type: nothing. */
static void raweth_eth(void)
{
	struct end *a = raw_end(), *b = a ? raw_end() : NULL;
	struct buf *tx = buf_new(RXLEN, LW), *rx = buf_new(RXLEN, LW), *arx = buf_new(RXLEN, LW);
	struct frame f = { .dst = group };
	struct flow_buf fb;

	if (!b || !tx || !rx || !arx)
		return;
	fa_init(&fb, 0);
	fa_eth(&fb, group, ETYPE_TEST);
	if (!flow_new(b, &fb) || !flow_new(a, &fb))
		return;
	post_rx(b, rx, 1);
	post_rx(a, arx, 1);
	expect_only(a, tx, &f, b, rx, (struct end *[]){ a, b }, 2,
		    "a frame to the group its flow names (the sender's own flow too)");
	f.dst = group2;
	expect_only(a, tx, &f, NULL, rx, (struct end *[]){ a, b }, 2, "another group");
	f.dst = group;
	f.ip = 4;
	expect_only(a, tx, &f, NULL, rx, (struct end *[]){ a, b }, 2, "another ether type");

	/* A flow on a VLAN ID: the tag's priority bits are not compared. */
	fa_init(&fb, 0);
	fa_eth(&fb, group2, ETYPE_TEST);
	((struct ibv_flow_spec_eth *)(fb.b + sizeof(fb.attr)))->val.vlan_tag = htons(0x0c0c);
	((struct ibv_flow_spec_eth *)(fb.b + sizeof(fb.attr)))->mask.vlan_tag = htons(0x0fff);
	if (!flow_new(b, &fb))
		return;
	f = (struct frame){ .dst = group2, .vid = 0x0c0c };
	expect_only(a, tx, &f, b, rx, (struct end *[]){ a, b }, 2, "a frame of VLAN 0xc0c");
	f.vid = 0x0c0d;
	expect_only(a, tx, &f, NULL, rx, (struct end *[]){ a, b }, 2, "a frame of VLAN 0xc0d");
	f.vid = 0;
	expect_only(a, tx, &f, NULL, rx, (struct end *[]){ a, b }, 2, "an untagged frame");
	expect_guards(tx, "the frame sent");
	expect_blank(arx, "the sender's receive");
}

/* IPv4 with UDP, IPv6 with TCP: addresses and ports, each one off, and a later fragment. */
static void raweth_l3l4(void)
{
	struct end *a = raw_end(), *b = a ? raw_end() : NULL, *c = b ? raw_end() : NULL;
	struct buf *tx = buf_new(RXLEN, LW), *rxb = buf_new(RXLEN, LW), *rxc = buf_new(RXLEN, LW);
	struct frame f = { .dst = group, .ip = 4, .l4 = IPPROTO_UDP, .dport = PORT_A,
			   .dst_last = 2 };
	struct end *all[3] = { a, b, c };
	struct flow_buf fb;

	if (!c || !tx || !rxb || !rxc)
		return;
	fa_init(&fb, 0);
	fa_ip4(&fb, 2);
	fa_l4(&fb, IPPROTO_UDP, PORT_A);
	if (!flow_new(b, &fb))
		return;
	fa_init(&fb, 0);
	fa_eth(&fb, group, 0x86dd);
	fa_ip6(&fb);
	fa_l4(&fb, IPPROTO_TCP, PORT_A);
	if (!flow_new(c, &fb))
		return;
	post_rx(b, rxb, 1);
	post_rx(c, rxc, 1);

	expect_only(a, tx, &f, b, rxb, all, 3, "IPv4 UDP to 2.2.2.2 port 5678");
	f.dport = PORT_A + 1;
	expect_only(a, tx, &f, NULL, NULL, all, 3, "IPv4 UDP to port 5679");
	f.dport = PORT_A;
	f.dst_last = 3;
	expect_only(a, tx, &f, NULL, NULL, all, 3, "IPv4 UDP to 2.2.2.3");
	f.dst_last = 2;
	f.l4 = IPPROTO_TCP;
	expect_only(a, tx, &f, NULL, NULL, all, 3, "IPv4 TCP (the flow names UDP)");
	f.l4 = IPPROTO_UDP;
	f.fragment = true;
	expect_only(a, tx, &f, NULL, NULL, all, 3, "a later IPv4 fragment: no UDP header");
	f = (struct frame){ .dst = group, .ip = 6, .l4 = IPPROTO_TCP, .dport = PORT_A };
	expect_only(a, tx, &f, c, rxc, all, 3, "IPv6 TCP to b0b1::b6b7:b8b9 port 5678");
	f.l4 = IPPROTO_UDP;
	expect_only(a, tx, &f, NULL, NULL, all, 3, "IPv6 UDP (the flow names TCP)");
}

/* The best priority wins; QPs at it each get one copy, however many flows match. */
static void raweth_priority(void)
{
	struct end *a = raw_end(), *b = a ? raw_end() : NULL, *c = b ? raw_end() : NULL;
	struct buf *tx = buf_new(RXLEN, LW), *rxb = buf_new(RXLEN, LW), *rxc = buf_new(RXLEN, LW);
	struct frame f = { .dst = group };
	struct end *all[3] = { a, b, c };
	struct flow_buf fb;
	uint8_t frame[FRAME];
	struct ibv_flow *cf;

	if (!c || !tx || !rxb || !rxc)
		return;
	fa_init(&fb, 1);
	fa_eth(&fb, group, 0);
	if (!flow_new(b, &fb))
		return;
	fa_init(&fb, 0);
	fa_eth(&fb, group, 0);
	cf = flow_new(c, &fb);
	if (!cf)
		return;
	post_rx(b, rxb, 1);
	post_rx(c, rxc, 1);
	expect_only(a, tx, &f, c, rxc, all, 3, "priority 0 over priority 1");

	/* A second flow of c's at 0, and one of b's: each gets one copy. */
	fa_init(&fb, 0);
	fa_eth(&fb, group, ETYPE_TEST);
	if (!flow_new(c, &fb) || !flow_new(b, &fb))
		return;
	frame_build(frame, FRAME, &f, 77);
	memcpy(tx->data, frame, FRAME);
	if (!send_frame(a, tx, FRAME, 2, IBV_WC_SUCCESS, "two QPs at priority 0"))
		return;
	expect_frame(b, rxb, 1, frame, FRAME, "b, at priority 0 now");
	expect_frame(c, rxc, 1, frame, FRAME, "c, two flows at priority 0");
	post_rx(c, rxc, 1);
	expect_none(c->rcq, QUIET_MS, "c's second copy");
	expect_none(a->rcq, 0, "the sender");

	/* Another type matched c's first flow alone; with it gone, b's priority 1 flow. */
	f.ip = 4;
	expect_only(a, tx, &f, c, rxc, all, 3, "IPv4: c's flow for any type, at 0");
	t_check(!ibv_destroy_flow(cf), "ibv_destroy_flow: %s", strerror(errno));
	untrack(cf);
	post_rx(b, rxb, 1);
	expect_only(a, tx, &f, b, rxb, all, 3, "IPv4 after c's flow for any type is destroyed");
}

/* Reads the first line of @path into @buf, without its newline. */
static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");
	bool ok = fp && fgets(buf, len, fp);

	if (fp)
		fclose(fp);
	if (!ok) {
		t_fail("%s: %s", path, strerror(errno));
		return false;
	}
	buf[strcspn(buf, "\n")] = 0;
	return true;
}

/* The netdev's MTU: frames may be that much past their Ethernet and one VLAN header. */
static long netdev_mtu(void)
{
	char path[256], name[64], mtu[32];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/0",
		 dev_name);
	if (!read_line(path, name, sizeof(name)))
		return -1;
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", name);
	if (!read_line(path, mtu, sizeof(mtu)))
		return -1;
	return strtol(mtu, NULL, 10);
}

/* Flows refused with their errno; frames refused with their status. */
static void raweth_refused(void)
{
	struct end *a = raw_end(), *b = a ? raw_end() : NULL, *c, *ud;
	long mtu = netdev_mtu();
	struct buf *tx = buf_new(70000, LW), *rx = buf_new(64, LW);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct frame f = { .dst = group };
	struct ibv_send_wr wr;
	struct flow_buf fb;
	struct ibv_sge sg;
	struct ibv_mr *mr2;
	int ret;

	if (!b || !tx || !rx || mtu <= 0 || !pd2)
		return;
	ud = end_new(IBV_QPT_UD, NULL, false);
	if (!ud)
		return;
	fa_init(&fb, 0);
	fa_eth(&fb, group, 0);
	expect_flow_refused(ud, &fb, EOPNOTSUPP, "a flow on a UD QP");
	fb.attr.port = 2;
	expect_flow_refused(b, &fb, EINVAL, "port 2");
	fb.attr.port = 1;
	fb.attr.type = IBV_FLOW_ATTR_ALL_DEFAULT;
	expect_flow_refused(b, &fb, EOPNOTSUPP, "an ALL_DEFAULT flow");
	fb.attr.type = IBV_FLOW_ATTR_NORMAL;
	fb.attr.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;
	expect_flow_refused(b, &fb, EOPNOTSUPP, "an egress flow");
	fa_init(&fb, 0);
	fa_eth(&fb, group, 0);
	fa_eth(&fb, group2, 0);
	expect_flow_refused(b, &fb, EINVAL, "two Ethernet specs");
	fa_init(&fb, 0);
	fa_ip4(&fb, 2);
	fa_ip6(&fb);
	expect_flow_refused(b, &fb, EINVAL, "IPv4 and IPv6 specs");
	fa_init(&fb, 0);
	fa_l4(&fb, IPPROTO_TCP, 1);
	fa_l4(&fb, IPPROTO_UDP, 1);
	expect_flow_refused(b, &fb, EINVAL, "TCP and UDP specs");
	fa_init(&fb, 0);
	fa_add(&fb, IBV_FLOW_SPEC_VXLAN_TUNNEL, sizeof(struct ibv_flow_spec_tunnel));
	expect_flow_refused(b, &fb, EOPNOTSUPP, "a VXLAN spec");
	fa_init(&fb, 0);
	fa_add(&fb, IBV_FLOW_SPEC_ACTION_DROP, sizeof(struct ibv_flow_spec_action_drop));
	expect_flow_refused(b, &fb, EOPNOTSUPP, "a drop action");

	fa_init(&fb, 0);
	fa_eth(&fb, group, 0);
	if (!flow_new(b, &fb))
		return;
	ret = ibv_destroy_qp(b->qp);
	t_check(ret == EBUSY, "ibv_destroy_qp of a QP with a flow: %s, expected EBUSY",
		strerror(ret));
	if (!ret)
		untrack(b->qp);

	/* Frames: the shortest (14) and the longest (MTU + 18) go, one byte past fails. */
	frame_build((uint8_t *)tx->data, 70000, &f, 9);
	send_frame(a, tx, 14, 1, IBV_WC_SUCCESS, "a 14-byte frame");
	send_frame(a, tx, mtu + 18, 2, IBV_WC_SUCCESS, "a frame of MTU + 18 bytes");
	send_frame(a, tx, 13, 3, IBV_WC_LOC_LEN_ERR, "a 13-byte frame");
	expect_state(a->qp, IBV_QPS_ERR, "after a 13-byte frame");

	a = raw_end();
	if (!a)
		return;
	send_frame(a, tx, mtu + 19, 4, IBV_WC_LOC_LEN_ERR, "a frame of MTU + 19 bytes");
	a = raw_end();
	if (!a)
		return;
	sg = sge_of(tx, 0, FRAME);
	wr = wr_send(5, &sg, 1);
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	if (!post(a, &wr))
		expect_wc(a->scq, 5, IBV_WC_LOC_QP_OP_ERR, IBV_WC_SEND, NULL,
			  "SEND with immediate");
	a = raw_end();
	if (!a)
		return;
	mr2 = ibv_reg_mr(pd2, tx->data, FRAME, LW);
	if (!mr2) {
		t_fail("ibv_reg_mr in another PD: %s", strerror(errno));
		return;
	}
	sg.lkey = mr2->lkey;
	wr = wr_send(6, &sg, 1);
	if (!post(a, &wr))
		expect_wc(a->scq, 6, IBV_WC_LOC_PROT_ERR, IBV_WC_SEND, NULL,
			  "a frame in an MR of another PD");
	t_check(!ibv_dereg_mr(mr2), "ibv_dereg_mr: %s", strerror(errno));

	/*
	 * A frame longer than the receive: LOC_LEN_ERR, the QP in error, the
	 * buffer blank. On a QP of its own, with a flow on another group: b
	 * had no receive for frames 1 and 2, which are dropped when b's work
	 * runs, not on arrival, and on a slow host the 14-byte one was still
	 * queued when a receive on b was posted, and filled it.
	 */
	a = raw_end();
	c = a ? raw_end() : NULL;
	if (!c)
		return;
	fa_init(&fb, 0);
	fa_eth(&fb, group2, 0);
	if (!flow_new(c, &fb))
		return;
	sg = sge_of(rx, 0, 64);
	post_recv(c, 7, &sg, 1);
	f.dst = group2;
	frame_build((uint8_t *)tx->data, FRAME, &f, 10);
	send_frame(a, tx, FRAME, 8, IBV_WC_SUCCESS, "a frame longer than the receive");
	expect_wc(c->rcq, 7, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, NULL,
		  "a frame longer than the receive");
	expect_state(c->qp, IBV_QPS_ERR, "after a frame longer than its receive");
	expect_blank(rx, "the receive too short");
	t_check(!ibv_dealloc_pd(pd2), "ibv_dealloc_pd: %s", strerror(errno));
}

/* Without CAP_NET_RAW: no Raw Packet QP (EPERM); a UD QP still. */
static void raweth_no_cap(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		t_fail("fork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RAW_PACKET,
					      .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						       .max_send_sge = 1, .max_recv_sge = 1 } };
		struct ibv_context *c;
		struct ibv_qp *qp;
		struct ibv_pd *p;

		if (syscall(SYS_capget, &h, d))
			_exit(10);
		d[CAP_NET_RAW / 32].effective &= ~(1u << (CAP_NET_RAW % 32));
		d[CAP_NET_RAW / 32].permitted &= ~(1u << (CAP_NET_RAW % 32));
		if (syscall(SYS_capset, &h, d))
			_exit(11);
		c = open_dev(dev_name);
		p = c ? ibv_alloc_pd(c) : NULL;
		a.send_cq = p ? ibv_create_cq(c, 4, NULL, NULL, 0) : NULL;
		a.recv_cq = a.send_cq;
		if (!a.send_cq)
			_exit(12);
		qp = ibv_create_qp(p, &a);
		if (qp)
			_exit(13);
		if (errno != EPERM)
			_exit(14);
		a.qp_type = IBV_QPT_UD;
		qp = ibv_create_qp(p, &a);
		_exit(qp ? 0 : 15);
	}
	if (waitpid(pid, &status, 0) != pid) {
		t_fail("waitpid: %s", strerror(errno));
		return;
	}
	t_check(WIFEXITED(status) && !WEXITSTATUS(status),
		"the child without CAP_NET_RAW: status %#x (13: a raw QP created, 14: not EPERM)",
		status);
}

/* A UD send naming a raw QP's number is not a frame: the raw QP gets nothing. */
static void raweth_not_roce(void)
{
	struct end *r = raw_end(), *ud = end_new(IBV_QPT_UD, NULL, false);
	struct buf *tx = buf_new(FRAME, LW), *rx = buf_new(RXLEN, LW);
	struct ibv_ah *ah = ah_new();
	struct ibv_send_wr wr;
	struct ibv_sge sg;

	/* No flow: nothing but a RoCE message taken for a frame could reach it. */
	if (!r || !ud || !tx || !rx || !ah || !ud_ready(ud))
		return;
	post_rx(r, rx, 1);
	sg = sge_of(tx, 0, FRAME);
	wr = wr_send(2, &sg, 1);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = r->qp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	if (!post(ud, &wr))
		expect_wc(ud->scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "a UD send to a raw QP");
	expect_none(r->rcq, QUIET_MS, "the raw QP the UD send named");
	expect_blank(rx, "the raw QP's receive");
}

struct churn {
	struct end *e;
	int rounds;
	int err;
	bool done;		/* written by the thread, read with __atomic_load_n */
};

/* Creates and destroys a flow without end, while frames arrive. */
static void *churn_flows(void *arg)
{
	struct churn *c = arg;
	struct flow_buf fb;
	struct ibv_flow *flow;
	int i;

	fa_init(&fb, 0);
	fa_eth(&fb, group, ETYPE_TEST);
	for (i = 0; i < c->rounds && !c->err; i++) {
		flow = ibv_create_flow(c->e->qp, &fb.attr);
		if (!flow) {
			c->err = errno;
			break;
		}
		if (ibv_destroy_flow(flow))
			c->err = errno ?: EIO;
	}
	__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static bool t_check_len(uint32_t len)
{
	t_check(len == FRAME, "byte_len %u, expected %d", len, FRAME);
	return len == FRAME;
}

/* Frame @i: fill(1000 + @i) under the headers, @i in the four bytes after them. */
static void race_frame(uint8_t *p, uint32_t i)
{
	struct frame f = { .dst = group };

	frame_build(p, FRAME, &f, 1000 + i);
	memcpy(p + 14, &i, sizeof(i));
}

/*
 * Takes the frames received so far, each checked against the frame its
 * number names, numbers rising (frames arrive in the order sent, some
 * not at all), and posts their receives again.
 */
static void race_take(struct end *b, struct buf *rx, int ms, uint32_t *last, int *got)
{
	struct ibv_wc wc[DEPTH];
	uint8_t want[FRAME];
	int i, n;

	while ((n = poll_n(b->rcq, wc, DEPTH, ms)) > 0) {
		for (i = 0; i < n; i++) {
			char *slot = rx->data + wc[i].wr_id * FRAME;
			struct ibv_sge sg = sge_of(rx, wc[i].wr_id * FRAME, FRAME);
			uint32_t k;

			if (!expect_wc_is(&wc[i], wc[i].wr_id, IBV_WC_SUCCESS, IBV_WC_RECV,
					  "a frame received") || !t_check_len(wc[i].byte_len))
				return;
			memcpy(&k, slot + 14, sizeof(k));
			race_frame(want, k);
			t_check(!memcmp(slot, want, FRAME), "frame %u received is not as sent", k);
			t_check(*got == 0 || k > *last, "frame %u received after frame %u", k,
				*last);
			*last = k;
			(*got)++;
			fill(slot, FRAME, BLANK);
			post_recv(b, wc[i].wr_id, &sg, 1);
		}
		if (t_failing())
			return;
	}
}

/* Flows created and destroyed while frames arrive: each lands whole, in order. */
static void raweth_race(void)
{
	struct end *a = raw_end(), *b = a ? raw_end() : NULL;
	struct buf *tx = buf_new(FRAME, LW), *rx = buf_new(FRAME * DEPTH, LW);
	struct churn c = { .rounds = 3000 };
	int i, got = 0, sent = 0;
	uint32_t last = 0;
	pthread_t t;

	if (!b || !tx || !rx)
		return;
	for (i = 0; i < DEPTH; i++) {
		struct ibv_sge sg = sge_of(rx, i * FRAME, FRAME);

		post_recv(b, i, &sg, 1);
	}
	c.e = b;
	if (pthread_create(&t, NULL, churn_flows, &c)) {
		t_fail("pthread_create");
		return;
	}
	while ((!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE) || sent < DEPTH) && sent < 20000 &&
	       !t_failing()) {
		race_frame((uint8_t *)tx->data, sent);
		if (!send_frame(a, tx, FRAME, sent, IBV_WC_SUCCESS, "a frame while flows churn"))
			break;
		sent++;
		race_take(b, rx, 0, &last, &got);
	}
	pthread_join(t, NULL);
	t_check(!c.err, "creating and destroying flows: %s", strerror(c.err));
	race_take(b, rx, QUIET_MS, &last, &got);
	t_check(got <= sent, "%d frames received of %d sent", got, sent);
	expect_guards(rx, "the receives");
	expect_guards(tx, "the frame sent");
	printf("# %d of %d frames sent while %d flows came and went were received\n", got, sent,
	       c.rounds);
}

/* ---- RSS: receive WQs, indirection tables, RSS QPs ---- */

#define RSS_LOG		2		/* WQs in the table: 4 */
#define RSS_NWQ		4		/* 1 << RSS_LOG */
#define RSS_SLOTS	8		/* receives posted to each WQ */
#define RSS_UDP4	(IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
			 IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

/* pyverbs' test_rss_traffic key. */
static const uint8_t rss_key[40] = {
	0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2, 0x83, 0x19, 0xdb, 0x1a,
	0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9, 0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7,
	0xd9, 0x56, 0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a,
};

/* Where frame_build()'s IPv4/UDP frame to 2.2.2.@d, port @dport, must go. */
static int rss_index(uint8_t d, uint16_t dport)
{
	uint8_t in[12] = { 1, 1, 1, 1, 2, 2, 2, d, 1234 >> 8, 1234 & 0xff, dport >> 8, dport };

	return toeplitz(rss_key, in, sizeof(in)) & (RSS_NWQ - 1);
}

static struct ibv_wq *wq_new(struct ibv_cq *cq, uint32_t max_wr)
{
	struct ibv_wq_init_attr a = {
		.wq_type = IBV_WQT_RQ, .max_wr = max_wr, .max_sge = MAX_SGE, .pd = pd, .cq = cq,
	};
	struct ibv_wq *wq = ibv_create_wq(ctx, &a);

	if (!wq) {
		t_fail("ibv_create_wq: %s", strerror(errno));
		return NULL;
	}
	track(K_WQ, wq, 0);
	return wq;
}

static int wq_to(struct ibv_wq *wq, enum ibv_wq_state state)
{
	struct ibv_wq_attr a = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = state };

	return ibv_modify_wq(wq, &a);
}

static struct ibv_rwq_ind_table *table_new(struct ibv_wq **wqs, uint32_t log)
{
	struct ibv_rwq_ind_table_init_attr a = { .log_ind_tbl_size = log, .ind_tbl = wqs };
	struct ibv_rwq_ind_table *t = ibv_create_rwq_ind_table(ctx, &a);

	if (!t) {
		t_fail("ibv_create_rwq_ind_table: %s", strerror(errno));
		return NULL;
	}
	track(K_RWQ_IND, t, 0);
	return t;
}

/* An RSS QP's attributes over @t; the caller may spoil them. */
static struct ibv_qp_init_attr_ex rss_attr(struct ibv_rwq_ind_table *t, uint64_t fields)
{
	return (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_RAW_PACKET, .pd = pd, .rwq_ind_tbl = t,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
				  .rx_hash_key_len = sizeof(rss_key),
				  .rx_hash_key = (uint8_t *)rss_key,
				  .rx_hash_fields_mask = fields },
	};
}

/* An RSS QP over @t with a flow that takes IPv4 frames to the group; NULL skips. */
static struct ibv_qp *rss_qp(struct ibv_rwq_ind_table *t, uint64_t fields)
{
	struct ibv_qp_init_attr_ex a = rss_attr(t, fields);
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);
	struct flow_buf fb;
	struct ibv_flow *flow;

	if (!qp) {
		t_fail("ibv_create_qp_ex, an RSS QP: %s", strerror(errno));
		return NULL;
	}
	track(K_QP, qp, 0);
	fa_init(&fb, 0);
	fa_eth(&fb, group, 0x0800);
	flow = ibv_create_flow(qp, &fb.attr);
	if (!flow) {
		t_fail("ibv_create_flow on the RSS QP: %s", strerror(errno));
		return NULL;
	}
	track(K_FLOW, flow, 0);
	return qp;
}

static void expect_qp_refused(struct ibv_qp_init_attr_ex *a, int err, const char *what)
{
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, a);

	if (qp) {
		t_fail("%s: ibv_create_qp_ex succeeded, expected %s", what, strerror(err));
		track(K_QP, qp, 0);
		return;
	}
	t_check(errno == err, "%s: ibv_create_qp_ex: %s, expected %s", what, strerror(errno),
		strerror(err));
}

/* Posts @rx's slot @i (RXLEN bytes, blank again) to @wq as receive @i. */
static void wq_post(struct ibv_wq *wq, struct buf *rx, uint64_t i, uint32_t len)
{
	struct ibv_sge sg = sge_of(rx, i * RXLEN, len);
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1 }, *bad;
	int ret;

	fill(rx->data + i * RXLEN, RXLEN, BLANK);
	ret = ibv_post_wq_recv(wq, &wr, &bad);
	t_check(!ret, "ibv_post_wq_recv to WQ %#x: %s", wq->wq_num, strerror(ret));
}

/* The next completion on @cq must be receive @wr_id of @wq, @status. */
static bool expect_wq_wc(struct ibv_cq *cq, struct ibv_wq *wq, uint64_t wr_id,
			 enum ibv_wc_status status, struct ibv_wc *wc, const char *what)
{
	if (!expect_wc(cq, wr_id, status, IBV_WC_RECV, wc, what))
		return false;
	t_check(wc->qp_num == wq->wq_num, "%s: qp_num %#x, expected the WQ's %#x", what,
		wc->qp_num, wq->wq_num);
	return wc->qp_num == wq->wq_num;
}

/* Frames spread over 4 WQs on 2 CQs as the hash says, each whole in the next receive. */
static void rss_spread(void)
{
	struct ibv_cq *cqs[2] = { cq_new(), cq_new() };
	struct end *a = raw_end();
	struct ibv_wq *wqs[RSS_NWQ];
	struct buf *rx[RSS_NWQ], *tx = buf_new(RXLEN, LW);
	int i, n[RSS_NWQ] = { 0 }, used = 0;
	/* Microsoft's first IPv4 vector: 66.9.149.187:2794 to 161.142.100.80:1766. */
	static const uint8_t ms_key[40] = {
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
		0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
		0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	};
	static const uint8_t ms_in[12] = { 66, 9, 149, 187, 161, 142, 100, 80,
					   0x0a, 0xea, 0x06, 0xe6 };

	t_check(toeplitz(ms_key, ms_in, 8) == 0x323e8fc2 &&
		toeplitz(ms_key, ms_in, 12) == 0x51ccc178,
		"this test's Toeplitz: %#x and %#x, expected 0x323e8fc2 and 0x51ccc178",
		toeplitz(ms_key, ms_in, 8), toeplitz(ms_key, ms_in, 12));
	if (!cqs[0] || !cqs[1] || !a || !tx)
		return;
	for (i = 0; i < RSS_NWQ; i++) {
		rx[i] = buf_new(RXLEN * RSS_SLOTS, LW);
		wqs[i] = rx[i] ? wq_new(cqs[i % 2], RSS_SLOTS) : NULL;
		if (!wqs[i] || wq_to(wqs[i], IBV_WQS_RDY)) {
			t_fail("WQ %d to RDY", i);
			return;
		}
	}
	if (!rss_qp(table_new(wqs, RSS_LOG), RSS_UDP4))
		return;
	for (i = 0; i < RSS_NWQ; i++)
		for (int k = 0; k < RSS_SLOTS; k++)
			wq_post(wqs[i], rx[i], k, RXLEN);

	/* Each frame to its own port: at most RSS_SLOTS per WQ. */
	for (i = 0; i < 16 && !t_failing(); i++) {
		struct frame f = { .dst = group, .ip = 4, .l4 = IPPROTO_UDP, .dst_last = i,
				   .dport = PORT_A + i };
		int w = rss_index(i, PORT_A + i);
		uint8_t want[RXLEN];
		struct ibv_wc wc;

		if (n[w] == RSS_SLOTS)
			continue;
		frame_build((uint8_t *)tx->data, FRAME, &f, 300 + i);
		if (!send_frame(a, tx, FRAME, i, IBV_WC_SUCCESS, "a frame to the RSS QP's group") ||
		    !expect_wq_wc(cqs[w % 2], wqs[w], n[w], IBV_WC_SUCCESS, &wc,
				  "the frame in the WQ its hash names"))
			return;
		t_check(wc.byte_len == FRAME, "byte_len %u, expected %d", wc.byte_len, FRAME);
		fill(want, RXLEN, BLANK);
		memcpy(want, tx->data, FRAME);
		expect_bytes(rx[w]->data + n[w] * RXLEN, want, RXLEN, "the frame received");
		used += !n[w]++;
	}
	t_check(used >= 2, "the frames went to %d WQ of %d: the hash spreads nothing", used,
		RSS_NWQ);
	expect_none(cqs[0], QUIET_MS, "no other completion");
	expect_none(cqs[1], 0, "no other completion");
	for (i = 0; i < RSS_NWQ; i++) {
		for (int k = n[i]; k < RSS_SLOTS; k++) {
			uint8_t want[RXLEN];

			fill(want, RXLEN, BLANK);
			expect_bytes(rx[i]->data + k * RXLEN, want, RXLEN, "a receive not used");
		}
		expect_guards(rx[i], "the WQs' buffers");
	}
	printf("# frames per WQ: %d %d %d %d\n", n[0], n[1], n[2], n[3]);
}

static void send_ip4(struct end *a, struct buf *tx, uint64_t wr_id, size_t len)
{
	struct frame f = { .dst = group, .ip = 4, .l4 = IPPROTO_UDP, .dport = PORT_A };

	frame_build((uint8_t *)tx->data, len, &f, 400 + wr_id);
	send_frame(a, tx, len, wr_id, IBV_WC_SUCCESS, "a frame to the RSS QP");
}

/* RESET takes nothing, RDY places, ERR flushes (what waits and what comes after), RESET drops. */
static void rss_states(void)
{
	struct ibv_cq *cq = cq_new();
	struct end *a = raw_end();
	struct buf *rx = buf_new(RXLEN * RSS_SLOTS, LW), *tx = buf_new(RXLEN, LW);
	struct ibv_wq *wq = cq && rx ? wq_new(cq, RSS_SLOTS) : NULL;
	struct ibv_wq_attr wa = { .attr_mask = IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE };
	struct ibv_wc wc;
	long drops;
	int ret;

	if (!wq || !a || !tx || !rss_qp(table_new(&wq, 0), RSS_UDP4))
		return;
	wq_post(wq, rx, 0, RXLEN);
	drops = hw_counter("drop_no_recv");
	send_ip4(a, tx, 1, FRAME);
	expect_none(cq, QUIET_MS, "a frame while the WQ is in RESET");
	t_check(hw_counter("drop_no_recv") == drops + 1, "drop_no_recv %ld, expected %ld",
		hw_counter("drop_no_recv"), drops + 1);

	t_check(!wq_to(wq, IBV_WQS_RDY), "RESET to RDY");
	send_ip4(a, tx, 2, FRAME);
	if (expect_wq_wc(cq, wq, 0, IBV_WC_SUCCESS, &wc, "a frame once the WQ is RDY"))
		expect_bytes(rx->data, tx->data, FRAME, "the frame received");

	wq_post(wq, rx, 1, RXLEN);
	wq_post(wq, rx, 2, RXLEN);
	t_check(!wq_to(wq, IBV_WQS_ERR), "RDY to ERR");
	expect_wq_wc(cq, wq, 1, IBV_WC_WR_FLUSH_ERR, &wc, "a receive waiting at ERR");
	expect_wq_wc(cq, wq, 2, IBV_WC_WR_FLUSH_ERR, &wc, "a receive waiting at ERR");
	wq_post(wq, rx, 3, RXLEN);
	expect_wq_wc(cq, wq, 3, IBV_WC_WR_FLUSH_ERR, &wc, "a receive posted in ERR");
	send_ip4(a, tx, 3, FRAME);
	expect_none(cq, QUIET_MS, "a frame while the WQ is in ERR");

	ret = wq_to(wq, IBV_WQS_RDY);
	t_check(ret == EINVAL, "ERR to RDY: %s, expected EINVAL", strerror(ret));
	wa.curr_wq_state = IBV_WQS_RDY;
	wa.wq_state = IBV_WQS_RESET;
	ret = ibv_modify_wq(wq, &wa);
	t_check(ret == EINVAL, "a current state that is not the WQ's: %s, expected EINVAL",
		strerror(ret));
	wa.curr_wq_state = IBV_WQS_ERR;
	t_check(!ibv_modify_wq(wq, &wa), "ERR to RESET");
	wq_post(wq, rx, 4, RXLEN);
	t_check(!wq_to(wq, IBV_WQS_RESET), "RESET to RESET drops what waits");
	expect_none(cq, QUIET_MS, "a reset: no completion");
	wq_post(wq, rx, 5, 64);
	wq_post(wq, rx, 6, RXLEN);
	t_check(!wq_to(wq, IBV_WQS_RDY), "RESET to RDY");
	send_ip4(a, tx, 4, FRAME);
	expect_wq_wc(cq, wq, 5, IBV_WC_LOC_LEN_ERR, &wc, "a frame longer than the receive");
	expect_wq_wc(cq, wq, 6, IBV_WC_WR_FLUSH_ERR, &wc, "the next receive, the WQ in error");
	expect_none(cq, QUIET_MS, "nothing more");
	/* Receives 1 to 6 were posted blank; none got a byte. */
	for (int k = 1; k <= 6; k++) {
		uint8_t want[RXLEN];

		fill(want, RXLEN, BLANK);
		expect_bytes(rx->data + k * RXLEN, want, RXLEN, "a receive flushed or dropped");
	}
	expect_guards(rx, "the WQ's buffer");
}

/* WQs, tables and RSS QPs refused with their errno; what an RSS QP does not do. */
static void rss_refused(void)
{
	struct ibv_cq *cq = cq_new();
	struct ibv_wq *wq = cq ? wq_new(cq, 4) : NULL;
	struct ibv_wq *many[512];
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 9, .ind_tbl = many };
	struct ibv_wq_init_attr wa = {
		.wq_type = IBV_WQT_RQ, .max_wr = 4, .max_sge = 1, .pd = pd, .cq = cq,
	};
	struct ibv_rwq_ind_table *t;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct buf *rx = buf_new(RXLEN, LW), *tx = buf_new(RXLEN, LW);
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_mr *mr2;
	struct ibv_qp *qp;
	struct end *a;
	struct ibv_wc wc;
	int i, ret;

	if (!wq || !pd2 || !rx || !tx)
		return;
	struct { uint32_t max_wr, max_sge, flags; int err; const char *what; } bad[] = {
		{ 0, 1, 0, EINVAL, "max_wr 0" },
		{ dev_attr.max_qp_wr + 1, 1, 0, EINVAL, "max_wr past max_qp_wr" },
		{ 4, dev_attr.max_sge + 1, 0, EINVAL, "max_sge past the device's" },
		{ 4, 1, IBV_WQ_FLAGS_CVLAN_STRIPPING, EOPNOTSUPP, "VLAN stripping" },
		{ 4, 1, IBV_WQ_FLAGS_SCATTER_FCS, EOPNOTSUPP, "FCS scatter" },
	};
	for (i = 0; i < (int)ARRAY_SIZE(bad); i++) {
		struct ibv_wq *w;

		wa.max_wr = bad[i].max_wr;
		wa.max_sge = bad[i].max_sge;
		wa.create_flags = bad[i].flags;
		wa.comp_mask = bad[i].flags ? IBV_WQ_INIT_ATTR_FLAGS : 0;
		w = ibv_create_wq(ctx, &wa);
		if (w) {
			track(K_WQ, w, 0);
			t_fail("ibv_create_wq, %s: succeeded, expected %s", bad[i].what,
			       strerror(bad[i].err));
			continue;
		}
		t_check(errno == bad[i].err, "ibv_create_wq, %s: %s, expected %s", bad[i].what,
			strerror(errno), strerror(bad[i].err));
	}

	for (i = 0; i < 512; i++)
		many[i] = wq;
	t = ibv_create_rwq_ind_table(ctx, &ta);
	if (t)
		track(K_RWQ_IND, t, 0);
	t_check(!t && errno == EINVAL, "a table of 512 WQs: %s, expected EINVAL",
		t ? "created" : strerror(errno));
	t = table_new(&wq, 0);
	if (!t)
		return;

	const uint8_t tz = IBV_RX_HASH_FUNC_TOEPLITZ;
	struct { uint64_t fields; uint8_t fn, key_len; int err; const char *what; } conf[] = {
		{ RSS_UDP4, tz, 39, EINVAL, "a key of 39 bytes" },
		{ RSS_UDP4, 2, 40, EOPNOTSUPP, "a function other than Toeplitz" },
		{ IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_INNER, tz, 40, EOPNOTSUPP, "inner headers" },
		{ IBV_RX_HASH_IPSEC_SPI, tz, 40, EOPNOTSUPP, "IPsec SPI" },
		{ IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV6, tz, 40, EINVAL, "IPv4 with IPv6" },
		{ IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_UDP, tz, 40, EINVAL,
		  "TCP with UDP ports" },
	};
	for (i = 0; i < (int)ARRAY_SIZE(conf); i++) {
		qa = rss_attr(t, conf[i].fields);
		qa.rx_hash_conf.rx_hash_function = conf[i].fn;
		qa.rx_hash_conf.rx_hash_key_len = conf[i].key_len;
		expect_qp_refused(&qa, conf[i].err, conf[i].what);
	}
	qa = rss_attr(t, RSS_UDP4);
	qa.comp_mask &= ~IBV_QP_INIT_ATTR_RX_HASH;
	expect_qp_refused(&qa, EINVAL, "a table without a hash");
	qa = rss_attr(t, RSS_UDP4);
	qa.comp_mask &= ~IBV_QP_INIT_ATTR_IND_TABLE;
	expect_qp_refused(&qa, EINVAL, "a hash without a table");
	qa = rss_attr(t, RSS_UDP4);
	qa.qp_type = IBV_QPT_UD;
	expect_qp_refused(&qa, EOPNOTSUPP, "a UD QP with a table");
	qa = rss_attr(t, RSS_UDP4);
	qa.cap.max_send_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.send_cq = cq;
	expect_qp_refused(&qa, EOPNOTSUPP, "an RSS QP that sends");
	qa = rss_attr(t, RSS_UDP4);
	qa.cap.max_recv_wr = 1;
	expect_qp_refused(&qa, EINVAL, "an RSS QP with receives of its own");

	qp = rss_qp(t, RSS_UDP4);
	if (!qp)
		return;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PORT);
	t_check(ret == EOPNOTSUPP, "modify_qp of an RSS QP: %s, expected EOPNOTSUPP",
		strerror(ret));
	ret = ibv_post_send(qp, &swr, &sbad);
	t_check(ret == EINVAL, "post_send to an RSS QP: %s, expected EINVAL", strerror(ret));
	ret = ibv_post_recv(qp, &rwr, &rbad);
	t_check(ret == EINVAL, "post_recv to an RSS QP: %s, expected EINVAL", strerror(ret));
	ret = ibv_destroy_wq(wq);
	t_check(ret == EBUSY, "destroying a WQ a table names: %s, expected EBUSY", strerror(ret));
	ret = ibv_destroy_rwq_ind_table(t);
	t_check(ret == EBUSY, "destroying a table an RSS QP has: %s, expected EBUSY",
		strerror(ret));

	/* A receive with another PD's key: the gate refuses it, the WQ goes to ERR. */
	mr2 = ibv_reg_mr(pd2, rx->data, RXLEN, LW);
	a = raw_end();
	if (!mr2 || !a)
		return;
	track(K_MR, mr2, 0);
	t_check(!wq_to(wq, IBV_WQS_RDY), "RESET to RDY");
	{
		struct ibv_sge sg = { .addr = (uintptr_t)rx->data, .length = RXLEN,
				      .lkey = mr2->lkey };
		struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sg, .num_sge = 1 }, *bad2;

		fill(rx->data, RXLEN, BLANK);
		t_check(!ibv_post_wq_recv(wq, &wr, &bad2), "ibv_post_wq_recv");
	}
	send_ip4(a, tx, 9, FRAME);
	expect_wq_wc(cq, wq, 7, IBV_WC_LOC_PROT_ERR, &wc, "a receive with another PD's lkey");
	expect_blank(rx, "the buffer of another PD's region");
	ret = wq_to(wq, IBV_WQS_RDY);
	t_check(ret == EINVAL, "the WQ is in ERR after it: %s", strerror(ret));
}

/*
 * No hash field over a table of one WQ is steering without hashing, as
 * mlx5 takes it: frames of different flows all land in that WQ. Over a
 * table of two WQs it is EINVAL.
 */
static void rss_no_hash(void)
{
	struct ibv_cq *cq = cq_new();
	struct end *a = raw_end();
	struct ibv_wq *wq = cq ? wq_new(cq, 4) : NULL;
	struct ibv_wq *two[2] = { wq, wq };
	struct buf *rx = buf_new(2 * RXLEN, LW), *tx = buf_new(RXLEN, LW);
	struct ibv_rwq_ind_table *t1, *t2;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_wc wc;
	int i;

	if (!a || !wq || !rx || !tx)
		return;
	t1 = table_new(&wq, 0);
	t2 = table_new(two, 1);
	if (!t1 || !t2)
		return;
	qa = rss_attr(t2, 0);
	expect_qp_refused(&qa, EINVAL, "no hash field over a table of two WQs");
	if (!rss_qp(t1, 0) || wq_to(wq, IBV_WQS_RDY))
		return;
	for (i = 0; i < 2; i++)
		wq_post(wq, rx, i, RXLEN);
	/* Two flows: other destination addresses and ports. */
	for (i = 0; i < 2; i++) {
		struct frame f = { .dst = group, .ip = 4, .l4 = IPPROTO_UDP,
				   .dport = PORT_A + i, .dst_last = 1 + i };

		frame_build((uint8_t *)tx->data, FRAME, &f, 420 + i);
		send_frame(a, tx, FRAME, 20 + i, IBV_WC_SUCCESS, "a frame, no hash field");
		if (expect_wq_wc(cq, wq, i, IBV_WC_SUCCESS, &wc, "a frame, no hash field"))
			expect_bytes((uint8_t *)rx->data + i * RXLEN, tx->data, FRAME,
				     "the frame in the one WQ");
	}
	expect_guards(rx, "the WQ's receives");
}

struct rss_churn {
	struct ibv_rwq_ind_table *t;
	int rounds, done_rounds, err;
	bool done;
};

/* Creates RSS QPs over the table, with their flows, and destroys them. */
static void *churn_rss(void *arg)
{
	struct rss_churn *c = arg;
	struct flow_buf fb;
	int i;

	fa_init(&fb, 0);
	fa_eth(&fb, group, 0x0800);
	for (i = 0; i < c->rounds && !c->err; i++) {
		struct ibv_qp_init_attr_ex a = rss_attr(c->t, RSS_UDP4);
		struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);
		struct ibv_flow *flow = qp ? ibv_create_flow(qp, &fb.attr) : NULL;

		if (!flow) {
			c->err = errno ?: EIO;
			if (qp)
				ibv_destroy_qp(qp);
			break;
		}
		if (ibv_destroy_flow(flow) || ibv_destroy_qp(qp))
			c->err = errno ?: EIO;
		c->done_rounds++;
	}
	__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Takes the frames the WQ received so far, each checked against the frame
 * its number names, numbers rising, and posts their receives again.
 */
static bool rss_take(struct ibv_cq *cq, struct ibv_wq *wq, struct buf *rx, uint32_t *last,
		     int *got)
{
	struct ibv_wc wc[DEPTH];
	uint8_t want[FRAME];
	int i, n;

	while ((n = poll_n(cq, wc, DEPTH, 0)) > 0) {
		for (i = 0; i < n; i++) {
			char *slot = rx->data + wc[i].wr_id * RXLEN;
			bool ok = wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len == FRAME &&
				  wc[i].qp_num == wq->wq_num && wc[i].wr_id < DEPTH;
			uint32_t k;

			t_check(ok, "a frame received: %s, %u bytes, WQ %#x, wr_id %llu",
				ibv_wc_status_str(wc[i].status), wc[i].byte_len, wc[i].qp_num,
				(unsigned long long)wc[i].wr_id);
			if (!ok)
				return false;
			memcpy(&k, slot + 14, sizeof(k));
			race_frame(want, k);
			want[12] = 0x08;
			want[13] = 0x00;
			t_check(!memcmp(slot, want, FRAME), "frame %u not as sent", k);
			t_check(!*got || k > *last, "frame %u after frame %u", k, *last);
			*last = k;
			(*got)++;
			wq_post(wq, rx, wc[i].wr_id, RXLEN);
		}
	}
	return !t_failing();
}

/* RSS QPs come and go over one table while frames arrive: each lands whole, in order. */
static void rss_race(void)
{
	struct ibv_cq *cq = cq_new();
	struct end *a = raw_end();
	struct buf *rx = buf_new(RXLEN * DEPTH, LW), *tx = buf_new(RXLEN, LW);
	struct ibv_wq *wq = cq && rx ? wq_new(cq, DEPTH) : NULL;
	struct rss_churn c = { .rounds = 300 };
	int got = 0, sent = 0, i;
	uint32_t last = 0;
	pthread_t th;

	if (!wq || !a || !tx || wq_to(wq, IBV_WQS_RDY))
		return;
	c.t = table_new(&wq, 0);
	if (!c.t)
		return;
	for (i = 0; i < DEPTH; i++)
		wq_post(wq, rx, i, RXLEN);
	if (pthread_create(&th, NULL, churn_rss, &c)) {
		t_fail("pthread_create");
		return;
	}
	while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE) && sent < 20000 && !t_failing()) {
		race_frame((uint8_t *)tx->data, sent);
		tx->data[12] = 0x08;	/* IPv4's type, for the RSS QPs' flows */
		tx->data[13] = 0x00;
		if (!send_frame(a, tx, FRAME, sent, IBV_WC_SUCCESS, "a frame while RSS QPs churn"))
			break;
		sent++;
		if (!rss_take(cq, wq, rx, &last, &got))
			break;
	}
	pthread_join(th, NULL);
	t_check(!c.err, "creating and destroying RSS QPs: %s", strerror(c.err));
	expect_guards(rx, "the WQ's buffer");
	printf("# %d of %d frames sent while %d RSS QPs came and went were received\n", got,
	       sent, c.done_rounds);
}

#define POSTERS		2			/* threads posting to the WQ */
#define PER_POSTER	(DEPTH / POSTERS)	/* receives each posts a round */

struct wq_poster {
	struct ibv_wq *wq;
	struct buf *rx;
	int id, posted, err;
};

/* Posts PER_POSTER receives one at a time, wr_id (id << 16) | i, slot id * PER_POSTER + i. */
static void *post_wq(void *arg)
{
	struct wq_poster *p = arg;
	int i;

	for (i = 0; i < PER_POSTER; i++) {
		uint32_t slot = p->id * PER_POSTER + i;
		struct ibv_sge sg = sge_of(p->rx, slot * RXLEN, RXLEN);
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)p->id << 16 | i, .sg_list = &sg,
					  .num_sge = 1 }, *bad;

		p->err = ibv_post_wq_recv(p->wq, &wr, &bad);
		if (p->err)
			break;
		p->posted++;
		if (i % 4 == 3)
			sched_yield();
	}
	return NULL;
}

/*
 * One round of rss_post_race's: the posters' receives all complete once,
 * each poster's in its order, the frames placed before the ERR whole and
 * numbered as sent, the rest WR_FLUSH_ERR with nothing written. Returns
 * how many frames were placed.
 */
static int post_race_check(struct ibv_cq *cq, struct ibv_wq *wq, struct buf *rx, int round)
{
	int seen[POSTERS] = { 0 }, got = 0, ok = 0, flushed = 0;
	uint32_t last = 0;
	struct ibv_wc wc;

	while (got < DEPTH && !t_failing()) {
		uint8_t want[FRAME], blank[RXLEN];
		uint32_t id, i, k;
		char *slot;

		if (poll_n(cq, &wc, 1, 5000) != 1) {
			t_fail("round %d: %d of %d receives completed, then none in 5 s", round,
			       got, DEPTH);
			return ok;
		}
		got++;
		id = wc.wr_id >> 16;
		i = wc.wr_id & 0xffff;
		if (id >= POSTERS || i != (uint32_t)seen[id] || wc.qp_num != wq->wq_num) {
			t_fail("round %d: completion %d is wr_id %#llx of WQ %#x, expected the "
			       "next of a poster's of WQ %#x", round, got,
			       (unsigned long long)wc.wr_id, wc.qp_num, wq->wq_num);
			return ok;
		}
		seen[id]++;
		slot = rx->data + (id * PER_POSTER + i) * RXLEN;
		if (wc.status == IBV_WC_WR_FLUSH_ERR) {
			flushed++;
			fill(blank, RXLEN, BLANK);
			expect_bytes(slot, blank, RXLEN, "a receive flushed");
			continue;
		}
		t_check(wc.status == IBV_WC_SUCCESS && !flushed && wc.byte_len == FRAME,
			"round %d: wr_id %#llx: %s, %u bytes, after %d flushed", round,
			(unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), wc.byte_len,
			flushed);
		memcpy(&k, slot + 14, sizeof(k));
		race_frame(want, k);
		want[12] = 0x08;
		want[13] = 0x00;
		fill(blank, RXLEN, BLANK);
		t_check(!memcmp(slot, want, FRAME) && (!ok || k > last),
			"round %d: frame %u not as sent, or after frame %u", round, k, last);
		expect_bytes(slot + FRAME, blank + FRAME, RXLEN - FRAME,
			     "the receive past the frame");
		last = k;
		ok++;
	}
	expect_none(cq, 0, "no completion past the posted receives");
	return ok;
}

/*
 * Two threads post to a WQ while frames arrive and the WQ moves to ERR: no
 * receive lost, none completed twice, none flushed before one placed.
 */
static void rss_post_race(void)
{
	struct ibv_cq *cq = cq_new();
	struct end *a = raw_end();
	struct buf *rx = buf_new(RXLEN * DEPTH, LW), *tx = buf_new(RXLEN, LW);
	struct ibv_wq *wq = cq && rx ? wq_new(cq, DEPTH) : NULL;
	uint32_t sent = 0;
	int round, i, placed = 0;

	if (!wq || !a || !tx || !rss_qp(table_new(&wq, 0), RSS_UDP4))
		return;
	for (round = 0; round < 40 && !t_failing(); round++) {
		struct wq_poster p[POSTERS];
		pthread_t th[POSTERS];

		for (i = 0; i < DEPTH; i++)
			fill(rx->data + i * RXLEN, RXLEN, BLANK);
		if (wq_to(wq, IBV_WQS_RESET) || wq_to(wq, IBV_WQS_RDY)) {
			t_fail("round %d: the WQ through RESET to RDY", round);
			return;
		}
		for (i = 0; i < POSTERS; i++) {
			p[i] = (struct wq_poster){ .wq = wq, .rx = rx, .id = i };
			if (pthread_create(&th[i], NULL, post_wq, &p[i])) {
				t_fail("pthread_create");
				while (i--)
					pthread_join(th[i], NULL);
				return;
			}
		}
		/* From none to a few frames before the ERR, as the round goes. */
		for (i = 0; i < round % 5; i++, sent++) {
			race_frame((uint8_t *)tx->data, sent);
			tx->data[12] = 0x08;
			tx->data[13] = 0x00;
			send_frame(a, tx, FRAME, sent, IBV_WC_SUCCESS, "a frame while posts race");
		}
		t_check(!wq_to(wq, IBV_WQS_ERR), "round %d: RDY to ERR while two threads post",
			round);
		for (i = 0; i < POSTERS; i++) {
			pthread_join(th[i], NULL);
			t_check(!p[i].err && p[i].posted == PER_POSTER,
				"round %d: poster %d posted %d of %d: %s", round, i, p[i].posted,
				PER_POSTER, strerror(p[i].err));
		}
		placed += post_race_check(cq, wq, rx, round);
	}
	expect_guards(rx, "the WQ's buffer");
	printf("# %d rounds: %u frames sent, %d placed, the other receives of %d flushed\n",
	       round, sent, placed, round * DEPTH);
}

/*
 * A WQ whose ring's prod runs a whole ring ahead of its cons: the modify
 * that would read it fails with EIO, and the WQ's owner hears
 * IBV_EVENT_WQ_FATAL on the async fd.
 */
static void rss_fatal(void)
{
	struct ibv_cq *cq = cq_new();
	struct ibv_wq *wq = cq ? wq_new(cq, 4) : NULL;
	struct stag_queue_ctl *ctl;
	struct stagdv_ring ring;
	int ret;

	if (!wq)
		return;
	ret = stagdv_wq_ring(wq, &ring);
	if (ret || !ring.ctl) {
		t_fail("stagdv_wq_ring: %s", strerror(ret));
		return;
	}
	ctl = ring.ctl;
	__atomic_store_n(&ctl->prod, ctl->cons + ring.num_slots + 1, __ATOMIC_RELEASE);
	ret = wq_to(wq, IBV_WQS_RESET);
	t_check(ret == EIO, "a reset over a corrupted ring: %s, expected EIO", strerror(ret));
	t_check(async_event(IBV_EVENT_WQ_FATAL, wq, 2000),
		"no IBV_EVENT_WQ_FATAL for the WQ in 2 s");
	ret = wq_to(wq, IBV_WQS_RDY);
	t_check(ret == EINVAL, "the fatal WQ to RDY: %s, expected EINVAL", strerror(ret));
	expect_none(cq, 0, "a fatal WQ's CQ");
}

/*
 * A WQ's completions carry its number as qp_num: it is taken from the QPs'
 * numbers, so no QP has it. One made between two QPs falls between them
 * (the numbers are handed out in turn); on a CQ the WQ shares with a QP,
 * the QP's reset leaves the WQ's completion there.
 */
static void rss_numbers(void)
{
	struct ibv_cq *cq = cq_new();
	struct end *ea = end_on(IBV_QPT_UD, cq, cq, NULL, false);
	struct ibv_wq *wq = ea ? wq_new(cq, 4) : NULL;
	struct end *eb = wq ? end_on(IBV_QPT_UD, cq, cq, NULL, false) : NULL;
	struct buf *rx = buf_new(3 * RXLEN, LW);
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET }, err = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp *a, *b;
	struct ibv_sge s;
	struct ibv_wc wc;
	uint32_t n;

	if (!eb || !rx)
		return;
	s = sge_of(rx, 2 * RXLEN, RXLEN);
	a = ea->qp;
	b = eb->qp;
	n = wq->wq_num;
	t_check(n != a->qp_num && n != b->qp_num,
		"WQ %#x has the number of a QP (%#x, %#x)", n, a->qp_num, b->qp_num);
	t_check(b->qp_num < a->qp_num || (a->qp_num < n && n < b->qp_num),
		"WQ %#x made between QPs %#x and %#x is not numbered between them", n,
		a->qp_num, b->qp_num);
	wq_post(wq, rx, 0, RXLEN);
	t_check(!wq_to(wq, IBV_WQS_ERR), "the WQ to ERR");
	t_check(!ibv_modify_qp(a, &reset, IBV_QP_STATE), "a QP on the CQ to RESET");
	expect_wq_wc(cq, wq, 0, IBV_WC_WR_FLUSH_ERR, &wc,
		     "the WQ's flush, after a reset of a QP on its CQ");

	/* And the WQ's reset takes its own completions off the CQ, as mlx5's does. */
	wq_post(wq, rx, 1, RXLEN);
	t_check(!qp_to_init(b, 0) && !ibv_modify_qp(b, &err, IBV_QP_STATE),
		"another QP on the CQ through INIT to ERR");
	if (post_recv(eb, 7, &s, 1)) {
		t_fail("a receive on the QP in ERR");
		return;
	}
	t_check(!wq_to(wq, IBV_WQS_RESET), "the WQ from ERR to RESET");
	expect_wc(cq, 7, IBV_WC_WR_FLUSH_ERR, -1, NULL,
		  "the QP's flush: the WQ's, before it, went with the WQ's reset");
	expect_none(cq, QUIET_MS, "no completion of the WQ after its reset");
}

/* rss_doorbell_race's last receive: a wr_id no post of its thread has. */
#define LAST_WR		0x10000000000ULL

struct wq_resetter {
	struct ibv_wq *wq;
	int rounds, err;
	bool stop;
};

/* ERR, RESET, RDY, round and round, while the test's thread posts. */
static void *reset_wq(void *arg)
{
	struct wq_resetter *r = arg;
	int i;

	for (i = 0; i < r->rounds && !r->err; i++) {
		r->err = wq_to(r->wq, IBV_WQS_ERR) ?: wq_to(r->wq, IBV_WQS_RESET) ?:
			 wq_to(r->wq, IBV_WQS_RDY);
		/*
		 * No pause: a reset and a ready must fit between a post's
		 * look at the flag and its doorbell (with a 50 us sleep here,
		 * 2 runs of 2 missed the bug this case was written for).
		 */
		sched_yield();
	}
	__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Posts while another thread takes the WQ through ERR, RESET and RDY: a
 * post's doorbell for the ERR it saw must not put back in ERR a WQ made
 * ready since. Once the thread is done the WQ is RDY, and a frame is
 * placed.
 */
static void rss_doorbell_race(void)
{
	struct ibv_cq *cq = cq_new();
	struct end *a = raw_end();
	struct buf *rx = buf_new(RXLEN, LW), *tx = buf_new(RXLEN, LW);
	struct ibv_wq *wq = cq && rx ? wq_new(cq, DEPTH) : NULL;
	struct wq_resetter r = { .rounds = 2000 };
	struct stagdv_ring ring;
	struct ibv_wc wc[DEPTH];
	uint64_t posted = 0, done = 0;
	int n, ret, post_err = 0;
	pthread_t th;

	if (!wq || !a || !tx || !rss_qp(table_new(&wq, 0), RSS_UDP4))
		return;

	/*
	 * First without a thread: the flag a post saw before the WQ was made
	 * ready is the flag written into the ring of a ready WQ by hand. The
	 * post's doorbell must leave the WQ ready, its receive posted.
	 */
	if (stagdv_wq_ring(wq, &ring) || !ring.ctl || wq_to(wq, IBV_WQS_RDY)) {
		t_fail("the WQ's ring, and the WQ to RDY");
		return;
	}
	__atomic_store_n(&((struct stag_queue_ctl *)ring.ctl)->flags, STAG_QUEUE_FLUSH,
			 __ATOMIC_RELEASE);
	wq_post(wq, rx, 0, RXLEN);
	t_check(wq->state == IBV_WQS_RDY, "a doorbell for a stale ERR: the WQ's state %d, "
		"expected RDY", wq->state);
	send_ip4(a, tx, 1, FRAME);
	if (expect_wq_wc(cq, wq, 0, IBV_WC_SUCCESS, wc, "a frame after a stale doorbell"))
		expect_bytes(rx->data, tx->data, FRAME, "the frame received");
	__atomic_store_n(&((struct stag_queue_ctl *)ring.ctl)->flags, 0, __ATOMIC_RELEASE);

	r.wq = wq;
	if (pthread_create(&th, NULL, reset_wq, &r)) {
		t_fail("pthread_create");
		return;
	}
	while (!__atomic_load_n(&r.stop, __ATOMIC_ACQUIRE)) {
		struct ibv_sge sg = sge_of(rx, 0, RXLEN);
		struct ibv_recv_wr wr = { .wr_id = posted, .sg_list = &sg, .num_sge = 1 }, *bad;

		/* A full ring waits for the next reset to empty it: ENOMEM meanwhile. */
		ret = ibv_post_wq_recv(wq, &wr, &bad);
		if (!ret)
			posted++;
		else if (ret != ENOMEM || bad != &wr)
			post_err = ret;
		while ((n = poll_n(cq, wc, DEPTH, 0)) > 0)
			done += n;
	}
	pthread_join(th, NULL);
	t_check(!r.err, "ERR, RESET and RDY while another thread posts: %s", strerror(r.err));
	t_check(!post_err, "a post while the WQ goes round: %s, expected 0 or ENOMEM",
		strerror(post_err));
	t_check(wq->state == IBV_WQS_RDY, "the WQ's state %d once the thread is done, "
		"expected RDY", wq->state);
	while ((n = poll_n(cq, wc, DEPTH, 100)) > 0)
		done += n;
	/* One more receive; the frame takes the oldest, maybe one the thread left. */
	{
		struct ibv_sge sg = sge_of(rx, 0, RXLEN);
		struct ibv_recv_wr wr = { .wr_id = LAST_WR, .sg_list = &sg, .num_sge = 1 }, *bad;

		fill(rx->data, RXLEN, BLANK);
		t_check(!ibv_post_wq_recv(wq, &wr, &bad), "a receive posted at the end");
	}
	send_ip4(a, tx, 1, FRAME);
	if (poll_n(cq, wc, 1, WAIT_MS) != 1) {
		t_fail("a frame to the WQ, RDY at the end: no completion");
		return;
	}
	t_check(wc[0].status == IBV_WC_SUCCESS && wc[0].byte_len == FRAME &&
		(wc[0].wr_id == LAST_WR || wc[0].wr_id < posted),
		"a frame to the WQ, RDY at the end: wr_id %#llx, %s, %u bytes",
		(unsigned long long)wc[0].wr_id, ibv_wc_status_str(wc[0].status), wc[0].byte_len);
	expect_bytes(rx->data, tx->data, FRAME, "the frame received");
	printf("# %llu receives posted, %llu completed over %d rounds of ERR, RESET, RDY\n",
	       (unsigned long long)posted, (unsigned long long)done, r.rounds);
}

#define CASE(desc, fn) { desc, fn }

const struct qp_case raweth_cases[] = {
	CASE("raw: a frame to the group an Ethernet flow names lands whole; the sender's own "
	     "flow, another group, another type, another VLAN: nothing", raweth_eth),
	CASE("raw: IPv4/UDP and IPv6/TCP flows match addresses and ports; one off, the other "
	     "L4, a later fragment: nothing", raweth_l3l4),
	CASE("raw: the best priority wins; a QP with two flows at it gets one copy",
	     raweth_priority),
	CASE("raw: flows refused (UD QP, port, type, egress, specs) with their errno; frames of "
	     "13 bytes, MTU + 19, SEND_WITH_IMM, another PD's lkey, too long for the receive: "
	     "their statuses", raweth_refused),
	CASE("raw: without CAP_NET_RAW a Raw Packet QP is EPERM", raweth_no_cap),
	CASE("raw: a UD send naming a Raw Packet QP's number is not received", raweth_not_roce),
	CASE("raw: flows created and destroyed while frames arrive: each lands whole, in order",
	     raweth_race),
	CASE("rss: frames spread over 4 WQs on 2 CQs as the Toeplitz hash says, each whole in "
	     "its WQ's next receive, the WQ's number in the completion", rss_spread),
	CASE("rss: a WQ in RESET takes nothing, RDY places, ERR flushes what waits and what is "
	     "posted after, RESET drops; a frame too long: LOC_LEN_ERR", rss_states),
	CASE("rss: WQs, tables and RSS QPs refused with their errno; an RSS QP does not send, "
	     "receive or modify; another PD's lkey: LOC_PROT_ERR", rss_refused),
	CASE("rss: RSS QPs created and destroyed over a table while frames arrive: each lands "
	     "whole, in order", rss_race),
	CASE("rss: two threads post to a WQ while frames arrive and it moves to ERR: every "
	     "receive completes once, in its poster's order, placed whole or flushed blank",
	     rss_post_race),
	CASE("rss: no hash field: every frame to the one WQ of its table; EINVAL over two WQs",
	     rss_no_hash),
	CASE("rss: a WQ's number is one no QP has, taken in turn with theirs; a reset of a QP "
	     "sharing its CQ leaves its completions, the WQ's reset takes them", rss_numbers),
	CASE("rss: a WQ whose ring's prod is past its end: a modify EIO, IBV_EVENT_WQ_FATAL, "
	     "the WQ no longer ready", rss_fatal),
	CASE("rss: a post's flush doorbell for an ERR gone (the flag stale, or another thread "
	     "resetting and readying the WQ) leaves the WQ ready: a frame is placed",
	     rss_doorbell_race),
	{ NULL }
};
