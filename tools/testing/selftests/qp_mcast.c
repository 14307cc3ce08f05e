// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast (ibv_attach_mcast, ibv_detach_mcast): a UD SEND to
 * remote_qpn 0xffffff at a multicast GID reaches every QP attached to
 * the group, once each, and no other. Over loopback stag hands it to
 * each member directly; with stag.loopback=0 it goes out as one packet
 * to the group's IP address and comes back in through the netdev's
 * membership, which the first attach made it join. Each case checks the
 * data byte for byte after the GRH, the guards, the exact errno of every
 * refusal (a QP that is not UD, a GID that is not a group's, a detach
 * of what is not attached, the 57th QP of a group, the destroy of an
 * attached QP), and threads attaching, detaching and destroying members
 * while a group's traffic flows.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qp.h"

#define GRH_LEN		40
#define LEN		700
#define MCAST_QPN	0xffffff
#define MAX_ATTACH	56	/* stag's max_mcast_qp_attach, as rdma_rxe's */
#define RACE_MSGS	300

/* A group's GID in the port GID's family: 239.255.77.@n, or ff0e::77:@n. */
static union ibv_gid group(unsigned int n)
{
	union ibv_gid g = {};

	if (gid_is_v4(&gid)) {
		g.raw[10] = 0xff;
		g.raw[11] = 0xff;
		g.raw[12] = 239;
		g.raw[13] = 255;
		g.raw[14] = 77;
		g.raw[15] = n;
	} else {
		g.raw[0] = 0xff;
		g.raw[1] = 0x0e;
		g.raw[13] = 0x77;
		g.raw[15] = n;
	}
	return g;
}

/* Does /proc/net/@file list @want on a line of the netdev's? */
static bool proc_lists(const char *file, const char *want)
{
	const char *dev = getenv("STAG_NETDEV") ?: "eth0";
	char path[64], line[256], cur[64] = "";
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/net/%s", file);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		/* igmp names the device on a line of its own; the others on each line. */
		if (line[0] != '\t')
			sscanf(line, "%*s %63s", cur);
		found = !strcmp(cur, dev) && strcasestr(line, want);
	}
	fclose(f);
	return found;
}

/*
 * Has the netdev joined group @g: IGMP or MLD, and the link-layer address
 * it maps to (01:00:5e and the group's low 23 bits; 33:33 and its last 32)?
 */
static void expect_joined(const union ibv_gid *g, bool joined, const char *when)
{
	char ip[40], mac[16];
	bool listed;
	int i;

	if (gid_is_v4(g)) {
		/* igmp prints the address as a host-order integer of its network-order bytes. */
		snprintf(ip, sizeof(ip), "%02X%02X%02X%02X", g->raw[15], g->raw[14], g->raw[13],
			 g->raw[12]);
		snprintf(mac, sizeof(mac), "01005e%02x%02x%02x", g->raw[13] & 0x7f, g->raw[14],
			 g->raw[15]);
		/* A kernel without IP_MULTICAST (the debug guest's) has no IGMP to list. */
		listed = access("/proc/net/igmp", F_OK) ? joined : proc_lists("igmp", ip);
	} else {
		for (i = 0; i < 16; i++)
			snprintf(ip + 2 * i, sizeof(ip) - 2 * i, "%02x", g->raw[i]);
		snprintf(mac, sizeof(mac), "3333%02x%02x%02x%02x", g->raw[12], g->raw[13],
			 g->raw[14], g->raw[15]);
		listed = proc_lists("igmp6", ip);
	}
	t_check(listed == joined, "%s: the netdev %s group %s", when,
		listed ? "is in" : "is not in", ip);
	listed = proc_lists("dev_mcast", mac);
	t_check(listed == joined, "%s: the netdev %s link-layer address %s", when,
		listed ? "has" : "has not", mac);
}

/* A UD QP at RTS on the shared CQs. */
static struct end *member_new(struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct end *e = end_on(IBV_QPT_UD, scq, rcq, NULL, true);

	return e && ud_ready(e) ? e : NULL;
}

static int attach(struct end *e, const union ibv_gid *g)
{
	return ibv_attach_mcast(e->qp, g, 0);
}

static int detach(struct end *e, const union ibv_gid *g)
{
	return ibv_detach_mcast(e->qp, g, 0);
}

static bool skip_unless_stag(void)
{
	if (is_stag())
		return false;
	case_skip("multicast is checked on stag");
	return true;
}

/* SEND @len bytes of @src from @a to the group of @ah. */
static int send_group(struct end *a, struct ibv_ah *ah, uint64_t wr_id, struct buf *src,
		      size_t len)
{
	struct ibv_sge s = sge_of(src, 0, len);
	struct ibv_send_wr wr = wr_send(wr_id, &s, 1);

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = MCAST_QPN;
	wr.wr.ud.remote_qkey = QKEY;
	return post(a, &wr);
}

/* @e's one receive of @dst took the message of @src: data after the GRH, guards, src_qp. */
static void expect_copy(struct end *e, uint64_t wr_id, struct buf *dst, const struct buf *src,
			uint32_t src_qpn, const char *who)
{
	struct ibv_wc wc;

	if (!expect_wc(e->rcq, wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, who))
		return;
	t_check(wc.qp_num == e->qp->qp_num, "%s: qp_num %#x, expected %#x", who, wc.qp_num,
		e->qp->qp_num);
	t_check(wc.byte_len == GRH_LEN + LEN, "%s: byte_len %u, expected %d", who, wc.byte_len,
		GRH_LEN + LEN);
	t_check(wc.src_qp == src_qpn, "%s: src_qp %#x, expected %#x", who, wc.src_qp, src_qpn);
	t_check(wc.wc_flags & IBV_WC_GRH, "%s: IBV_WC_GRH not set", who);
	expect_bytes(dst->data + GRH_LEN, src->data, LEN, who);
	expect_guards(dst, who);
}

/*
 * Three members, the sender one of them, and a QP outside the group, each
 * on a CQ of its own: one SEND reaches each member once and not the
 * outsider; a member with another qkey drops it; after a detach the next
 * SEND reaches the members left. The core keeps one attach of a QP to a
 * group: attached twice, it goes at the first detach.
 */
static void delivery(unsigned int n)
{
	union ibv_gid g = group(n);
	struct buf *src = buf_new(LEN, LW), *dst[4];
	struct end *e[4];	/* members 0 (the sender), 1, 2; 3 outside */
	struct ibv_sge r;
	struct ibv_ah *ah;
	char who[64];
	int i, ret;

	if (!src)
		return;
	for (i = 0; i < 4; i++) {
		dst[i] = buf_new(GRH_LEN + LEN, LW);
		e[i] = member_new(cq_new(), cq_new());
		if (!dst[i] || !e[i])
			return;
	}
	ah = ah_to(&g);
	if (!ah)
		return;
	for (i = 0; i < 3; i++) {
		ret = attach(e[i], &g);
		t_check(!ret, "ibv_attach_mcast of QP %d: %s", i, strerror(ret));
		if (ret)
			goto out;
	}
	/* The core keeps one attach of a (QP, GID, LID): a second is a no-op. */
	ret = attach(e[1], &g);
	t_check(!ret, "a second ibv_attach_mcast of QP 1: %s", strerror(ret));
	expect_joined(&g, true, "three QPs attached");

	fill(src->data, LEN, 91);
	for (i = 0; i < 4; i++) {
		r = sge_of(dst[i], 0, GRH_LEN + LEN);
		if (post_recv(e[i], 10 + i, &r, 1))
			goto out;
	}
	if (send_group(e[0], ah, 1, src, LEN))
		goto out;
	expect_wc(e[0]->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "the group's sender");
	for (i = 0; i < 3; i++) {
		snprintf(who, sizeof(who), "member %d", i);
		expect_copy(e[i], 10 + i, dst[i], src, e[0]->qp->qp_num, who);
		expect_none(e[i]->rcq, QUIET_MS, who);
	}
	expect_none(e[3]->rcq, QUIET_MS, "the QP outside the group");
	expect_blank(dst[3], "the outsider's receive buffer");

	/* Member 2 leaves. */
	ret = detach(e[2], &g);
	t_check(!ret, "ibv_detach_mcast of QP 2: %s", strerror(ret));
	ret = detach(e[2], &g);
	t_check(ret == EINVAL, "a second ibv_detach_mcast of QP 2: %s, expected EINVAL",
		strerror(ret));
	fill(src->data, LEN, 92);
	for (i = 0; i < 3; i++) {
		r = sge_of(dst[i], 0, GRH_LEN + LEN);
		if (post_recv(e[i], 20 + i, &r, 1))
			goto out;
	}
	if (send_group(e[0], ah, 2, src, LEN))
		goto out;
	expect_wc(e[0]->scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "the group's sender");
	expect_copy(e[0], 20, dst[0], src, e[0]->qp->qp_num, "member 0 after the detaches");
	expect_copy(e[1], 21, dst[1], src, e[0]->qp->qp_num, "member 1 after QP 2's detach");
	expect_none(e[2]->rcq, QUIET_MS, "QP 2 after its detach");
	expect_none(e[3]->rcq, QUIET_MS, "the QP outside the group");

	/* Member 1's qkey changes: it drops the group's next message. */
	{
		struct ibv_qp_attr a = { .qkey = QKEY ^ 0x0505 };

		ret = ibv_modify_qp(e[1]->qp, &a, IBV_QP_QKEY);
		t_check(!ret, "ibv_modify_qp QKEY: %s", strerror(ret));
	}
	fill(src->data, LEN, 93);
	r = sge_of(dst[0], 0, GRH_LEN + LEN);
	if (post_recv(e[0], 30, &r, 1) || send_group(e[0], ah, 3, src, LEN))
		goto out;
	expect_wc(e[0]->scq, 3, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "the group's sender");
	expect_copy(e[0], 30, dst[0], src, e[0]->qp->qp_num, "member 0, the right qkey");
	expect_none(e[1]->rcq, QUIET_MS, "member 1 of another qkey");
	expect_none(e[2]->rcq, QUIET_MS, "QP 2 after its detach");

	/* Attached twice, QP 1 is gone after one detach. */
	ret = detach(e[1], &g);
	t_check(!ret, "ibv_detach_mcast of QP 1: %s", strerror(ret));
	ret = detach(e[1], &g);
	t_check(ret == EINVAL, "a second ibv_detach_mcast of QP 1: %s, expected EINVAL",
		strerror(ret));
	expect_joined(&g, true, "QP 0 still attached");
	ret = detach(e[0], &g);
	t_check(!ret, "ibv_detach_mcast of QP 0: %s", strerror(ret));
	expect_joined(&g, false, "every QP detached");
	return;
out:
	detach(e[0], &g);
	detach(e[1], &g);
	detach(e[2], &g);
}

static void mcast_delivery(void)
{
	if (!skip_unless_stag())
		delivery(1);
}

/* The same with an IPv6 group, its packets from the port's IPv6 GID: MLD. */
static void mcast_delivery_v6(void)
{
	struct ibv_gid_entry *e = calloc(port_attr.gid_tbl_len, sizeof(*e));
	ssize_t n = e ? ibv_query_gid_table(ctx, e, port_attr.gid_tbl_len, 0) : -ENOMEM;
	int i;

	for (i = 0; i < n; i++) {
		if (e[i].port_num == 1 && e[i].gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !gid_is_v4(&e[i].gid))
			break;
	}
	if (skip_unless_stag()) {
		free(e);
		return;
	}
	if (i >= n) {
		case_skip("the port has no IPv6 RoCE v2 GID");
		free(e);
		return;
	}
	gid = e[i].gid;
	gid_index = e[i].gid_index;
	free(e);
	delivery(5);
}

/*
 * A member on another stag device of this host, stag_mc on lo, made for
 * the case: a SEND from this device's QP reaches it and this device's
 * member alike, byte for byte. Over loopback only: with stag.loopback=0
 * a group's message comes back in through the sending netdev alone.
 */
static void mcast_other_device(void)
{
	union ibv_gid g = group(6);
	struct buf *src = buf_new(LEN, LW), *dst = buf_new(GRH_LEN + LEN, LW);
	size_t len2 = GUARD + GRH_LEN + LEN + GUARD;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD, .sq_sig_all = 1,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	struct ibv_qp_attr rtr = { .qp_state = IBV_QPS_RTR };
	struct ibv_context *ctx2 = NULL;
	struct ibv_pd *pd2 = NULL;
	struct ibv_cq *cq2 = NULL;
	struct ibv_qp *qp2 = NULL;
	struct ibv_mr *mr2 = NULL;
	char *mem2 = NULL;
	struct end *a, *m;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	bool attached = false;
	int ret, i;

	if (skip_unless_stag())
		return;
	if (stag_wire()) {
		case_skip("stag.loopback=0: a group's message returns through its own netdev only");
		return;
	}
	a = end_new(IBV_QPT_UD, NULL, true);
	m = end_new(IBV_QPT_UD, NULL, true);
	ah = ah_to(&g);
	if (!src || !dst || !a || !m || !ah || !ud_ready(a) || !ud_ready(m))
		return;
	if (system("rdma link add stag_mc type stag netdev lo")) {
		t_fail("rdma link add stag_mc type stag netdev lo failed");
		return;
	}
	ctx2 = open_dev("stag_mc");
	pd2 = ctx2 ? ibv_alloc_pd(ctx2) : NULL;
	cq2 = ctx2 ? ibv_create_cq(ctx2, 4, NULL, NULL, 0) : NULL;
	mem2 = malloc(len2);
	mr2 = pd2 && mem2 ? ibv_reg_mr(pd2, mem2, len2, LW) : NULL;
	if (!mr2 || !cq2) {
		t_fail("stag_mc: a PD, a CQ and a region: %s", strerror(errno));
		goto out;
	}
	ia.send_cq = cq2;
	ia.recv_cq = cq2;
	qp2 = ibv_create_qp(pd2, &ia);
	ret = qp2 ? ibv_modify_qp(qp2, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_QKEY) : errno;
	ret = ret ?: ibv_modify_qp(qp2, &rtr, IBV_QP_STATE);
	t_check(!ret, "stag_mc: a UD QP at RTR: %s", strerror(ret));
	if (ret)
		goto out;
	memset(mem2, BLANK, len2);
	{
		struct ibv_sge r = { (uintptr_t)mem2 + GUARD, GRH_LEN + LEN, mr2->lkey };
		struct ibv_recv_wr w = { .wr_id = 7, .sg_list = &r, .num_sge = 1 }, *bad;

		ret = ibv_post_recv(qp2, &w, &bad);
		t_check(!ret, "stag_mc: ibv_post_recv: %s", strerror(ret));
	}
	ret = ret ?: ibv_attach_mcast(qp2, &g, 0);
	attached = !ret;
	ret = ret ?: attach(m, &g);
	t_check(!ret, "ibv_attach_mcast: %s", strerror(ret));
	if (ret)
		goto out;
	fill(src->data, LEN, 96);
	{
		struct ibv_sge r = sge_of(dst, 0, GRH_LEN + LEN);

		if (post_recv(m, 8, &r, 1) || send_group(a, ah, 1, src, LEN))
			goto out;
	}
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "the group's sender");
	expect_copy(m, 8, dst, src, a->qp->qp_num, "the member on this device");
	for (i = 0; i < WAIT_MS && ibv_poll_cq(cq2, 1, &wc) == 0; i++)
		usleep(1000);
	if (i == WAIT_MS) {
		t_fail("the member on stag_mc took nothing in %d ms", WAIT_MS);
		goto out;
	}
	t_check(wc.status == IBV_WC_SUCCESS && wc.wr_id == 7 && wc.byte_len == GRH_LEN + LEN,
		"the member on stag_mc: status %d wr_id %llu byte_len %u", wc.status,
		(unsigned long long)wc.wr_id, wc.byte_len);
	expect_bytes(mem2 + GUARD + GRH_LEN, src->data, LEN, "the member on stag_mc");
	for (i = 0; i < GUARD; i++) {
		if ((uint8_t)mem2[i] != BLANK || (uint8_t)mem2[len2 - GUARD + i] != BLANK) {
			t_fail("the guard bytes of stag_mc's buffer changed");
			break;
		}
	}
out:
	detach(m, &g);
	if (attached)
		ibv_detach_mcast(qp2, &g, 0);
	if (qp2)
		t_check(!ibv_destroy_qp(qp2), "stag_mc: ibv_destroy_qp");
	if (mr2)
		ibv_dereg_mr(mr2);
	if (cq2)
		ibv_destroy_cq(cq2);
	if (pd2)
		ibv_dealloc_pd(pd2);
	if (ctx2)
		ibv_close_device(ctx2);
	free(mem2);
	t_check(!system("rdma link delete stag_mc"), "rdma link delete stag_mc failed");
}

/*
 * Every refusal, with its errno: an RC QP, a unicast GID, a detach of a
 * group the QP is not in, the 57th QP of a group (ENOMEM, as rdma_rxe),
 * and the destroy of an attached QP (EBUSY); after the detach it goes.
 */
static void mcast_refusals(void)
{
	union ibv_gid g = group(2), g2 = group(3);
	struct ibv_cq *scq = cq_new(), *rcq = cq_new();
	struct end *ud[MAX_ATTACH + 1], *rc;
	int i, n = 0, ret;

	if (skip_unless_stag() || !scq || !rcq)
		return;
	t_check(dev_attr.max_mcast_qp_attach == MAX_ATTACH,
		"max_mcast_qp_attach %d, expected %d", dev_attr.max_mcast_qp_attach, MAX_ATTACH);
	t_check(dev_attr.max_mcast_grp == 8192, "max_mcast_grp %d, expected 8192",
		dev_attr.max_mcast_grp);
	rc = end_on(IBV_QPT_RC, scq, rcq, NULL, true);
	if (!rc)
		return;
	ret = attach(rc, &g);
	t_check(ret == EINVAL, "ibv_attach_mcast of an RC QP: %s, expected EINVAL",
		strerror(ret));
	for (i = 0; i <= MAX_ATTACH; i++) {
		ud[i] = member_new(scq, rcq);
		if (!ud[i])
			goto out;
	}
	ret = attach(ud[0], &gid);
	t_check(ret == EINVAL, "ibv_attach_mcast to the port's unicast GID: %s, expected EINVAL",
		strerror(ret));
	ret = detach(ud[0], &g);
	t_check(ret == EINVAL, "ibv_detach_mcast of a group never joined: %s, expected EINVAL",
		strerror(ret));
	for (n = 0; n < MAX_ATTACH; n++) {
		ret = attach(ud[n], &g);
		t_check(!ret, "ibv_attach_mcast of member %d: %s", n, strerror(ret));
		if (ret)
			goto out;
	}
	ret = attach(ud[MAX_ATTACH], &g);
	t_check(ret == ENOMEM, "ibv_attach_mcast of the %dth QP: %s, expected ENOMEM",
		MAX_ATTACH + 1, strerror(ret));
	/* Another group has room for it. */
	ret = attach(ud[MAX_ATTACH], &g2);
	t_check(!ret, "ibv_attach_mcast of it to another group: %s", strerror(ret));
	ret = detach(ud[1], &g2);
	t_check(ret == EINVAL, "ibv_detach_mcast from a group of another QP: %s, expected EINVAL",
		strerror(ret));
	ret = ibv_destroy_qp(ud[MAX_ATTACH]->qp);
	t_check(ret == EBUSY, "ibv_destroy_qp of an attached QP: %s, expected EBUSY",
		strerror(ret));
	ret = detach(ud[MAX_ATTACH], &g2);
	t_check(!ret, "ibv_detach_mcast: %s", strerror(ret));
	/* A member gone, the group has room again. */
	ret = detach(ud[0], &g);
	t_check(!ret, "ibv_detach_mcast of member 0: %s", strerror(ret));
	ret = attach(ud[MAX_ATTACH], &g);
	t_check(!ret, "ibv_attach_mcast into the room it left: %s", strerror(ret));
	ret = detach(ud[MAX_ATTACH], &g);
	t_check(!ret, "ibv_detach_mcast: %s", strerror(ret));
out:
	for (i = 1; i < n; i++)
		detach(ud[i], &g);
}

/* ---- members coming and going while the group's traffic flows ---- */

struct churn {
	union ibv_gid g;
	struct ibv_cq *scq;
	atomic_bool stop;
	unsigned long rounds;
	unsigned long got;
	int err;
};

/*
 * A QP made, attached, given receives, detached and destroyed, over and
 * over: whatever it takes is a whole message; its destroy waits for
 * deliveries to it in flight.
 */
static void *churn_run(void *arg)
{
	struct churn *c = arg;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD, .sq_sig_all = 1,
		.cap = { .max_send_wr = 4, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	struct ibv_qp_attr rtr = { .qp_state = IBV_QPS_RTR };
	char *mem = malloc(8 * (GRH_LEN + LEN));
	struct ibv_mr *mr = mem ? ibv_reg_mr(pd, mem, 8 * (GRH_LEN + LEN), LW) : NULL;
	struct ibv_cq *rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_wc wc[8];
	struct ibv_qp *qp;
	int i, n, ret;

	if (!mr || !rcq) {
		c->err = ENOMEM;
		goto out;
	}
	ia.send_cq = c->scq;
	ia.recv_cq = rcq;
	while (!atomic_load(&c->stop) && !c->err) {
		qp = ibv_create_qp(pd, &ia);
		if (!qp) {
			c->err = errno;
			break;
		}
		ret = ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_QKEY);
		ret = ret ?: ibv_modify_qp(qp, &rtr, IBV_QP_STATE);
		for (i = 0; !ret && i < 8; i++) {
			struct ibv_sge s = { (uintptr_t)mem + i * (GRH_LEN + LEN), GRH_LEN + LEN,
					     mr->lkey };
			struct ibv_recv_wr w = { .wr_id = i, .sg_list = &s, .num_sge = 1 }, *bad;

			ret = ibv_post_recv(qp, &w, &bad);
		}
		ret = ret ?: ibv_attach_mcast(qp, &c->g, 0);
		if (!ret) {
			usleep(500);
			ret = ibv_detach_mcast(qp, &c->g, 0);
		}
		if (ret)
			c->err = ret;
		if (ibv_destroy_qp(qp) && !c->err)
			c->err = errno ?: EIO;
		/* What it took before it went: whole, or flushed. */
		while ((n = ibv_poll_cq(rcq, 8, wc)) > 0) {
			for (i = 0; i < n; i++) {
				if (wc[i].status == IBV_WC_SUCCESS &&
				    wc[i].byte_len != GRH_LEN + LEN && !c->err)
					c->err = EBADMSG;
				c->got += wc[i].status == IBV_WC_SUCCESS;
			}
		}
		c->rounds++;
	}
out:
	if (rcq)
		ibv_destroy_cq(rcq);
	if (mr)
		ibv_dereg_mr(mr);
	free(mem);
	return NULL;
}

/*
 * A member stays while two threads keep making QPs, attaching them,
 * detaching and destroying them: the staying member takes every one of
 * RACE_MSGS messages, once, in order, each byte for byte; every SEND
 * completes successfully; a churned QP takes only whole messages; each
 * thread's attach, detach and destroy succeed.
 */
static void mcast_churn_race(void)
{
	struct churn c[2] = { { .g = group(4) }, { .g = group(4) } };
	struct buf *src = buf_new(LEN, LW), *dst = buf_new(DEPTH * (GRH_LEN + LEN), LW);
	struct end *a, *m;
	struct ibv_ah *ah;
	pthread_t th[2];
	int i, sent = 0, got = 0, ret, started = 0;
	struct ibv_wc wc;
	long deadline;
	char *slot;

	if (skip_unless_stag() || !src || !dst)
		return;
	a = end_new(IBV_QPT_UD, NULL, true);
	m = end_new(IBV_QPT_UD, NULL, true);
	ah = ah_to(&c[0].g);
	if (!a || !m || !ah || !ud_ready(a) || !ud_ready(m))
		return;
	ret = attach(m, &c[0].g);
	t_check(!ret, "ibv_attach_mcast: %s", strerror(ret));
	if (ret)
		return;
	for (i = 0; i < DEPTH; i++) {
		struct ibv_sge r = sge_of(dst, i * (GRH_LEN + LEN), GRH_LEN + LEN);

		if (post_recv(m, i, &r, 1))
			goto out;
	}
	for (i = 0; i < 2; i++) {
		c[i].scq = a->scq;
		if (pthread_create(&th[i], NULL, churn_run, &c[i]))
			break;
		started++;
	}
	deadline = now_ms() + 60000;
	while (got < RACE_MSGS && now_ms() < deadline) {
		/* At most DEPTH / 2 in flight: the member's receives keep up. */
		if (sent < RACE_MSGS && sent - got < DEPTH / 2) {
			xfill(src->data, 0, LEN, sent);
			if (send_group(a, ah, sent, src, LEN))
				break;
			if (!expect_wc(a->scq, sent, IBV_WC_SUCCESS, IBV_WC_SEND, NULL,
				       "a SEND to the group"))
				break;
			sent++;
		}
		if (ibv_poll_cq(m->rcq, 1, &wc) != 1)
			continue;
		if (!expect_wc_is(&wc, got % DEPTH, IBV_WC_SUCCESS, IBV_WC_RECV,
				  "the staying member's receive"))
			break;
		slot = dst->data + (got % DEPTH) * (GRH_LEN + LEN);
		if (xdiff(slot + GRH_LEN, 0, LEN, got, NULL)) {
			t_fail("message %d arrived changed", got);
			break;
		}
		{
			struct ibv_sge r = sge_of(dst, (got % DEPTH) * (GRH_LEN + LEN),
						  GRH_LEN + LEN);

			if (post_recv(m, got % DEPTH, &r, 1))
				break;
		}
		got++;
	}
	t_check(got == RACE_MSGS, "the staying member took %d of %d messages", got, RACE_MSGS);
	expect_none(m->rcq, QUIET_MS, "the staying member, after the last message");
	expect_guards(dst, "the staying member's buffer");
out:
	for (i = 0; i < 2; i++)
		atomic_store(&c[i].stop, true);
	for (i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		t_check(!c[i].err, "churn thread %d: %s", i, strerror(c[i].err));
		t_check(c[i].rounds > 0, "churn thread %d made no QP", i);
		printf("# churn thread %d: %lu QPs attached and destroyed, %lu messages taken\n", i,
		       c[i].rounds, c[i].got);
	}
	detach(m, &c[0].g);
}

/* ---- forged packets at a group ---- */

#define FORGED_PKTS	4000
#define FORGED_RECVS	1024	/* more than inject's packets that can be taken */
#define SLOT		(GRH_LEN + 4096)

/* The UDP layer's datagrams delivered to a socket (a tunnel's included), or -1. */
static long udp_in(void)
{
	char line[1024], *tok, *save;
	int col = -1, i;
	long v = -1;
	FILE *f = fopen("/proc/net/snmp", "r");

	while (f && v < 0 && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Udp:", 4))
			continue;
		for (i = 0, tok = strtok_r(line, "\n ", &save); tok;
		     i++, tok = strtok_r(NULL, "\n ", &save)) {
			if (col < 0 && !strcmp(tok, "InDatagrams"))
				col = i;
			else if (col >= 0 && i == col && isdigit((unsigned char)tok[0]))
				v = atol(tok);
		}
	}
	if (f)
		fclose(f);
	return v;
}

/* Where a packet for a member ends, once for each member: taken or dropped. */
static const char *const member_ends[] = {
	"rcvd_pkts", "icrc_errors", "drop_qkey", "drop_qp_state", "drop_pkey", "drop_not_peer",
	"drop_backlog",
};

static long member_ends_sum(void)
{
	long sum = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(member_ends); i++)
		sum += hw_counter(member_ends[i]);
	return sum;
}

/* A UD member on an SRQ and a CQ of its own, each FORGED_RECVS deep, every receive posted. */
static struct end *forged_member(struct buf *dst)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, FORGED_RECVS + 1, NULL, NULL, 0);
	struct ibv_srq *srq = srq_new(FORGED_RECVS);
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge r;
	struct end *e;
	int i, ret;

	if (!cq) {
		t_fail("ibv_create_cq of %d: %s", FORGED_RECVS + 1, strerror(errno));
		return NULL;
	}
	track(K_CQ, cq, 0);
	e = srq ? end_on(IBV_QPT_UD, cq, cq, srq, true) : NULL;
	if (!e || !ud_ready(e))
		return NULL;
	for (i = 0; i < FORGED_RECVS; i++) {
		r = sge_of(dst, (size_t)i * SLOT, SLOT);
		wr = (struct ibv_recv_wr){ .wr_id = i, .sg_list = &r, .num_sge = 1 };
		ret = ibv_post_srq_recv(srq, &wr, &bad);
		if (ret) {
			t_fail("ibv_post_srq_recv %d: %s", i, strerror(ret));
			return NULL;
		}
	}
	return e;
}

/*
 * Takes every completion of a forged member: each SUCCESS, a RECV of a
 * GRH and at most the path MTU; its count, or -1.
 */
static int forged_taken(struct end *e, const char *who)
{
	unsigned int mtu = 128u << port_attr.active_mtu;
	struct ibv_wc wc;
	int n = 0;

	while (ibv_poll_cq(e->rcq, 1, &wc) == 1) {
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
		    wc.byte_len < GRH_LEN || wc.byte_len > GRH_LEN + mtu ||
		    wc.qp_num != e->qp->qp_num || !(wc.wc_flags & IBV_WC_GRH)) {
			t_fail("%s: a forged message completed %s, opcode %d, byte_len %u, qp_num "
			       "%#x, flags %#x: expected SUCCESS, a RECV of %d to %u bytes",
			       who, ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len,
			       wc.qp_num, wc.wc_flags, GRH_LEN, GRH_LEN + mtu);
			return -1;
		}
		n++;
	}
	return n;
}

/*
 * Forged packets at a group: bin/inject -G sends FORGED_PKTS of every kind
 * it makes to the group's address, from other addresses of this host's
 * /24, half of them UD SENDs to QPN 0xffffff and half of those with the
 * members' Q_Key. Those with the Q_Key, whole and with their ICRC, are
 * what any host may send a group: each member takes each of them, so both
 * take as many. Every other one is dropped and counted: once as malformed
 * when it is no whole UD SEND to the group (a stub of a BTH too), else
 * once for each member, under the reason. So the datagrams UDP delivered
 * are drop_malformed's growth and half of the members' ends. Each message
 * taken completes whole, within the path MTU; no byte outside the
 * receives changes; and then a real SEND reaches both members, byte for
 * byte. Over the wire only (stag.loopback=0): over loopback a packet this
 * host sends a group is its members' already, and comes back dropped.
 */
static void mcast_forged(void)
{
	union ibv_gid g = group(7);
	struct buf *src = buf_new(LEN, LW), *dst[2];
	char prog[256], grp[INET_ADDRSTRLEN], own[INET_ADDRSTRLEN], cmd[512], out[2048], t[16];
	long malformed = hw_counter("drop_malformed"), icrc = hw_counter("icrc_errors");
	long qkey = hw_counter("drop_qkey"), ends = member_ends_sum(), udp = udp_in();
	struct end *e[2], *a;
	struct ibv_ah *ah;
	int n[2], i, ret, status;
	size_t got = 0;
	FILE *f;

	if (skip_unless_stag())
		return;
	if (!inject_ready(prog, sizeof(prog),
			  "over loopback this host's packets at a group come back dropped"))
		return;
	for (i = 0; i < 2; i++) {
		dst[i] = buf_new((size_t)FORGED_RECVS * SLOT, LW);
		e[i] = dst[i] ? forged_member(dst[i]) : NULL;
		if (!e[i])
			return;
	}
	a = member_new(cq_new(), cq_new());
	ah = a ? ah_to(&g) : NULL;
	if (!src || !ah)
		return;
	for (i = 0; i < 2; i++) {
		ret = attach(e[i], &g);
		t_check(!ret, "ibv_attach_mcast of member %d: %s", i, strerror(ret));
		if (ret)
			goto out;
	}

	inet_ntop(AF_INET, g.raw + 12, grp, sizeof(grp));
	inet_ntop(AF_INET, gid.raw + 12, own, sizeof(own));
	inject_deadline(t, sizeof(t));
	snprintf(cmd, sizeof(cmd), "%s -T %s -t %s -G %#x -p %s -n %d -s %ld -m %u 2>&1", prog, t,
		 grp, QKEY, own, FORGED_PKTS, (long)getpid(), 128u << port_attr.active_mtu);
	fflush(stdout);
	f = popen(cmd, "r");
	while (f && got < sizeof(out) - 1 && (ret = fread(out + got, 1, sizeof(out) - 1 - got, f)))
		got += ret;
	out[got] = 0;
	status = f ? pclose(f) : -1;
	t_check(status == 0, "%s: status %#x: %s", cmd, status, out);
	/* What is still on its way from the stack. */
	usleep(500000);

	for (i = 0; i < 2; i++) {
		char who[32];

		snprintf(who, sizeof(who), "member %d", i);
		n[i] = forged_taken(e[i], who);
		expect_guards(dst[i], who);
	}
	printf("# %d forged packets at %s: members took %d and %d; dropped: malformed %ld, "
	       "icrc %ld, qkey %ld\n", FORGED_PKTS, grp, n[0], n[1],
	       hw_counter("drop_malformed") - malformed, hw_counter("icrc_errors") - icrc,
	       hw_counter("drop_qkey") - qkey);
	t_check(n[0] > 0 && n[0] == n[1] && n[0] < FORGED_RECVS, "the members took %d and %d "
		"forged messages, expected as many, some, and fewer than %d", n[0], n[1],
		FORGED_RECVS);
	t_check(hw_counter("drop_malformed") > malformed && hw_counter("icrc_errors") > icrc &&
		hw_counter("drop_qkey") > qkey, "drop_malformed, icrc_errors and drop_qkey "
		"did not all grow");
	ends = member_ends_sum() - ends;
	udp = udp_in() - udp;
	malformed = hw_counter("drop_malformed") - malformed;
	t_check(ends % 2 == 0 && udp == malformed + ends / 2, "UDP delivered %ld datagrams; "
		"stag counted %ld malformed and %ld ends at the two members: %ld uncounted",
		udp, malformed, ends, udp - malformed - ends / 2);

	if (t_failing())
		goto out;

	/* The group still works: a real SEND, byte for byte, in each member's next receive. */
	fill(src->data, LEN, 94);
	if (send_group(a, ah, 1, src, LEN))
		goto out;
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "the real SEND");
	for (i = 0; i < 2; i++) {
		struct ibv_wc wc;
		char who[48];
		char *slot;

		snprintf(who, sizeof(who), "member %d, the real SEND", i);
		if (!expect_wc(e[i]->rcq, n[i], IBV_WC_SUCCESS, IBV_WC_RECV, &wc, who))
			continue;
		slot = dst[i]->data + (size_t)n[i] * SLOT;
		t_check(wc.byte_len == GRH_LEN + LEN && wc.src_qp == a->qp->qp_num,
			"%s: byte_len %u src_qp %#x, expected %d and %#x", who, wc.byte_len,
			wc.src_qp, GRH_LEN + LEN, a->qp->qp_num);
		expect_bytes(slot + GRH_LEN, src->data, LEN, who);
		expect_guards(dst[i], who);
	}
out:
	detach(e[0], &g);
	detach(e[1], &g);
}

const struct qp_case mcast_cases[] = {
	{ "UD multicast: one SEND reaches each member once (the sender too), not an outsider, "
	  "not a member of another qkey; detached, a QP gets nothing; attached twice, it goes at "
	  "one detach; the netdev's IGMP membership and 01:00:5e address while a QP is attached",
	  mcast_delivery },
	{ "UD multicast to an IPv6 group from the port's IPv6 GID: the same, the netdev's MLD "
	  "membership and 33:33 address while a QP is attached", mcast_delivery_v6 },
	{ "UD multicast to a group with a member on another stag device of the host (stag_mc on "
	  "lo): it and this device's member each take the message", mcast_other_device },
	{ "UD multicast refused: an RC QP, a unicast GID, a detach never attached: EINVAL; the "
	  "57th QP of a group: ENOMEM; the destroy of an attached QP: EBUSY", mcast_refusals },
	{ "UD multicast race: two threads attach, detach and destroy QPs while 300 SENDs go to "
	  "the group: a staying member takes all, in order, byte for byte", mcast_churn_race },
	{ "UD multicast, 4000 forged packets at the group (bin/inject -G): the members take the "
	  "same ones whole, the rest are dropped and counted, no byte around a receive changes, "
	  "and a real SEND then reaches both", mcast_forged },
	{ NULL }
};
