// SPDX-License-Identifier: GPL-2.0
/*
 * raweth_peer: Ethernet frames between Raw Packet QPs of two hosts
 * (raweth.sh).
 *
 *   raweth_peer DEVICE --recv N READY   a QP whose flow takes the frames
 *                                       to the test group, N receives
 *                                       posted; creates the file READY,
 *                                       then waits for N frames
 *   raweth_peer DEVICE --send N         sends N frames to the group
 *   raweth_peer DEVICE --recv-rss N READY
 *                                       an RSS QP over four receive WQs,
 *                                       N receives posted to each, whose
 *                                       flow takes IPv4 frames to the
 *                                       group; then as --recv
 *   raweth_peer DEVICE --send-ip N      sends N IPv4/UDP frames to the group
 *
 * Frame k carries k after its Ethernet header and fill(k) after that,
 * each of a length of its own between 60 and 1000 bytes. The receiver
 * checks each frame byte for byte and the bytes after it in its buffer,
 * that the frames come in the order sent, and that a frame for another
 * group or of another type, sent between every two, never arrives.
 * Frames are datagrams and a virtual link may lose one (a CI run lost
 * the 64th of 64 once, the peer guest busy): exit status 0 when every
 * frame that came is whole, in order, and no more than N/8 were lost.
 * With --recv-rss each frame must also land in the WQ the Toeplitz hash
 * of its addresses and ports names (testlib.c's, not the kernel's), in
 * that WQ's next receive.
 * The sender sends NWARM warm-up frames first, 10 ms apart (see WARM),
 * and paces the numbered ones, 2 ms after each three.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <infiniband/verbs.h>

#include "testlib.h"

#define SLOT		1024
#define GUARD		64
#define MAXN		256
#define ETYPE_TEST	0x88b5

static const uint8_t group[6] = { 0x01, 0x50, 0x56, 0x19, 0x20, 0xa9 };
static const uint8_t group2[6] = { 0x01, 0x50, 0x56, 0x19, 0x20, 0xaa };

static uint32_t frame_len(uint32_t k)
{
	return 60 + (k * 397) % (1000 - 60 + 1);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

/* ---- IPv4/UDP frames and RSS ---- */

#define RSS_NWQ		4
#define RSS_FIELDS	(IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
			 IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)
#define IP_DPORT	6000

/* pyverbs' test_rss_traffic key. */
static const uint8_t rss_key[40] = {
	0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2, 0x83, 0x19, 0xdb, 0x1a,
	0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9, 0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7,
	0xd9, 0x56, 0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a,
};

/*
 * Frame k of --send-ip: IPv4/UDP from 10.1.k.(7k) port 5000 + k to
 * 10.9.9.9 port IP_DPORT, k after the UDP header and fill(k) after that.
 */
static void ip_frame_build(uint8_t *p, uint32_t k, const uint8_t *dst)
{
	uint32_t len = frame_len(k), i, x = k * 2654435761u + 7;
	uint8_t *ip = p + 14;

	memcpy(p, dst, 6);
	memcpy(p + 6, (uint8_t[]){ 0x02, 0, 0, 0, 0, 0x01 }, 6);
	put16(p + 12, 0x0800);
	memset(ip, 0, 28);
	ip[0] = 0x45;
	put16(ip + 2, len - 14);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, (uint8_t[]){ 10, 1, k, k * 7, 10, 9, 9, 9 }, 8);
	put16(ip + 20, 5000 + k);
	put16(ip + 22, IP_DPORT);
	put16(ip + 24, len - 34);
	/* The header's checksum right: a frame the peer's IP stack also sees whole. */
	for (i = 0, x = 0; i < 20; i += 2)
		x += ip[i] << 8 | ip[i + 1];
	x = (x & 0xffff) + (x >> 16);
	put16(ip + 10, ~(x + (x >> 16)));
	x = k * 2654435761u + 7;
	memcpy(p + 42, &k, 4);
	for (i = 46; i < len; i++) {
		x = x * 1103515245 + 12345;
		p[i] = x >> 16;
	}
}

/* The WQ of RSS_NWQ that frame k must land in. */
static int rss_wq_of(uint32_t k)
{
	uint8_t in[12] = { 10, 1, k, k * 7, 10, 9, 9, 9, (5000 + k) >> 8, (5000 + k) & 0xff,
			   IP_DPORT >> 8, IP_DPORT & 0xff };

	return toeplitz(rss_key, in, sizeof(in)) & (RSS_NWQ - 1);
}

static void frame_build(uint8_t *p, uint32_t k, const uint8_t *dst, uint16_t type)
{
	uint32_t len = frame_len(k), i, x = k * 2654435761u + 1;

	memcpy(p, dst, 6);
	memcpy(p + 6, (uint8_t[]){ 0x02, 0, 0, 0, 0, 0x01 }, 6);
	p[12] = type >> 8;
	p[13] = type;
	memcpy(p + 14, &k, 4);
	for (i = 18; i < len; i++) {
		x = x * 1103515245 + 12345;
		p[i] = x >> 16;
	}
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct ibv_qp *raw_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 4, .max_recv_wr = MAXN, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(pd, &a);
	int ret;

	if (!qp) {
		fprintf(stderr, "ibv_create_qp RAW_PACKET: %s\n", strerror(errno));
		return NULL;
	}
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PORT);
	attr.qp_state = IBV_QPS_RTR;
	ret = ret ?: ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	attr.qp_state = IBV_QPS_RTS;
	ret = ret ?: ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (ret) {
		fprintf(stderr, "raw QP to RTS: %s\n", strerror(ret));
		return NULL;
	}
	return qp;
}

static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	long end = now_ms() + ms;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, wc)) && now_ms() < end)
		;
	return n;
}

/*
 * Warm-up frames, numbered WARM, go before the numbered ones. A burst's
 * first frames may be lost below the receiving guest, counted nowhere in
 * it: its netdev's RX packets showed 92 of 128 group frames, the IPv4
 * ones the IP stack saw (IpInAddrErrors) those that came, the rest a
 * prefix of the burst (a CI run lost 13 of 64 that way, runs by hand up
 * to 49). The receiver takes warm-up frames into receives of their own
 * and counts them only if one comes after a numbered frame.
 */
#define WARM		0xfffffffeu
#define NWARM		32

static bool say_ready(const char *ready)
{
	FILE *f;

	f = fopen(ready, "w");
	if (!f)
		return false;
	fclose(f);
	return true;
}

static int do_send(struct ibv_pd *pd, struct ibv_cq *cq, int n, bool ip)
{
	uint8_t *buf = calloc(1, SLOT);
	struct ibv_mr *mr = buf ? ibv_reg_mr(pd, buf, SLOT, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp *qp = mr ? raw_qp(pd, cq) : NULL;
	struct ibv_sge sg = { .addr = (uintptr_t)buf, .lkey = mr ? mr->lkey : 0 };
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int k, j;

	if (!qp)
		return 1;
	for (k = 0; k < NWARM; k++) {
		uint32_t warm = WARM;

		if (ip)
			ip_frame_build(buf, 0, group);
		else
			frame_build(buf, 0, group, ETYPE_TEST);
		memcpy(buf + (ip ? 42 : 14), &warm, 4);
		sg.length = frame_len(0);
		wr.wr_id = ~0ULL;
		if (ibv_post_send(qp, &wr, &bad) || wait_wc(cq, &wc, 5000) != 1 ||
		    wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "send of warm-up frame %d failed\n", k);
			return 1;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	for (k = 0; k < n; k++) {
		/* Frame k, then one for another group and one of another type. */
		for (j = 0; j < 3; j++) {
			if (ip && j < 2)
				ip_frame_build(buf, k, j == 1 ? group2 : group);
			else if (ip)
				frame_build(buf, k, group, ETYPE_TEST);
			else
				frame_build(buf, k, j == 1 ? group2 : group,
					    j == 2 ? 0x0800 : ETYPE_TEST);
			sg.length = frame_len(k);
			wr.wr_id = k * 3 + j;
			if (ibv_post_send(qp, &wr, &bad) || wait_wc(cq, &wc, 5000) != 1 ||
			    wc.status != IBV_WC_SUCCESS || wc.wr_id != wr.wr_id) {
				fprintf(stderr, "send of frame %d.%d failed\n", k, j);
				return 1;
			}
		}
		nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
	}
	printf("# sent %d frames, and %d for another group or of another type\n", n, 2 * n);
	return 0;
}

static int do_recv(struct ibv_pd *pd, struct ibv_cq *cq, int n, const char *ready)
{
	size_t len = 2 * GUARD + (size_t)(n + NWARM) * SLOT;
	uint8_t *mem = malloc(len), *want = malloc(SLOT), *data;
	struct ibv_mr *mr = mem ? ibv_reg_mr(pd, mem, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp *qp = mr ? raw_qp(pd, cq) : NULL;
	/* As libibverbs reads it: the specs right after the attributes (no padding either way). */
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} fa = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(fa), .num_of_specs = 1,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(fa.eth),
			 .val.ether_type = htons(ETYPE_TEST), .mask.ether_type = 0xffff },
	};
	struct ibv_recv_wr wr = { .num_sge = 1 }, *bad;
	struct ibv_flow *flow;
	struct ibv_sge sg;
	struct ibv_wc wc;
	int k, got = 0, idx = 0, bad_frames = 0, last = -1;

	if (!qp || !want)
		return 1;
	memset(mem, 0xa5, len);
	data = mem + GUARD;
	memcpy(fa.eth.val.dst_mac, group, 6);
	memset(fa.eth.mask.dst_mac, 0xff, 6);
	flow = ibv_create_flow(qp, &fa.attr);
	if (!flow) {
		fprintf(stderr, "ibv_create_flow: %s\n", strerror(errno));
		return 1;
	}
	for (k = 0; k < n + NWARM; k++) {
		sg = (struct ibv_sge){ .addr = (uintptr_t)(data + k * SLOT), .length = SLOT,
				       .lkey = mr->lkey };
		wr.wr_id = k;
		wr.sg_list = &sg;
		if (ibv_post_recv(qp, &wr, &bad)) {
			fprintf(stderr, "ibv_post_recv %d failed\n", k);
			return 1;
		}
	}
	if (!say_ready(ready))
		return 1;
	/* The first frame may take the sender's start; then 5 s of silence ends it. */
	while (got < n && idx < n + NWARM && wait_wc(cq, &wc, idx ? 5000 : 30000) == 1) {
		uint8_t *slot = data + idx * SLOT;
		uint32_t fk;

		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)idx) {
			fprintf(stderr, "receive %d: %s, wr_id %llu\n", idx,
				ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
			return 1;
		}
		idx++;
		/* Frame fk, after frame last: anything else is not as sent. */
		memcpy(&fk, slot + 14, 4);
		if (fk == WARM) {
			bad_frames += got > 0;
			continue;
		}
		memset(want, 0xa5, SLOT);
		if (fk < (uint32_t)n)
			frame_build(want, fk, group, ETYPE_TEST);
		if (fk >= (uint32_t)n || (int)fk <= last || wc.byte_len != frame_len(fk) ||
		    memcmp(slot, want, SLOT)) {
			fprintf(stderr, "receive %d: frame %u, %u bytes, not as sent\n", got, fk,
				wc.byte_len);
			bad_frames++;
		}
		last = fk;
		got++;
	}
	for (k = 0; k < GUARD; k++)
		if (mem[k] != 0xa5 || mem[len - 1 - k] != 0xa5)
			bad_frames++;
	/* Nothing more: the frames for another group or of another type never came. */
	if (wait_wc(cq, &wc, 500))
		bad_frames++;
	printf("# received %d of %d frames, %d not as sent or unexpected\n", got, n, bad_frames);
	ibv_destroy_flow(flow);
	return got >= n - n / 8 && !bad_frames ? 0 : 1;
}

static struct ibv_wq *rss_wq(struct ibv_pd *pd, struct ibv_cq *cq, int n)
{
	struct ibv_wq_init_attr a = { .wq_type = IBV_WQT_RQ, .max_wr = n, .max_sge = 1,
				      .pd = pd, .cq = cq };
	struct ibv_wq_attr rdy = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY };
	struct ibv_wq *wq = ibv_create_wq(pd->context, &a);

	if (!wq || ibv_modify_wq(wq, &rdy)) {
		fprintf(stderr, "a receive WQ, ready: %s\n", strerror(errno));
		return NULL;
	}
	return wq;
}

/* An RSS QP over @wqs hashing IPv4 addresses and UDP ports, with a flow for IPv4 to the group. */
static struct ibv_qp *rss_qp(struct ibv_pd *pd, struct ibv_wq **wqs, struct ibv_flow **flow)
{
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 2, .ind_tbl = wqs };
	struct ibv_rwq_ind_table *t = ibv_create_rwq_ind_table(pd->context, &ta);
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET, .pd = pd, .rwq_ind_tbl = t,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
				  .rx_hash_key_len = sizeof(rss_key),
				  .rx_hash_key = (uint8_t *)rss_key,
				  .rx_hash_fields_mask = RSS_FIELDS },
	};
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} fa = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(fa), .num_of_specs = 1,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(fa.eth),
			 .val.ether_type = htons(0x0800), .mask.ether_type = 0xffff },
	};
	struct ibv_qp *qp = t ? ibv_create_qp_ex(pd->context, &a) : NULL;

	if (!qp) {
		fprintf(stderr, "an RSS QP: %s\n", strerror(errno));
		return NULL;
	}
	memcpy(fa.eth.val.dst_mac, group, 6);
	memset(fa.eth.mask.dst_mac, 0xff, 6);
	*flow = ibv_create_flow(qp, &fa.attr);
	if (!*flow) {
		fprintf(stderr, "ibv_create_flow on the RSS QP: %s\n", strerror(errno));
		return NULL;
	}
	return qp;
}

/*
 * Receives frames from --send-ip, spread over RSS_NWQ WQs: each in the
 * WQ its hash names, in that WQ's next receive, whole; in the order sent.
 */
static int do_recv_rss(struct ibv_pd *pd, struct ibv_cq *cq, int n, const char *ready)
{
	size_t per = n + NWARM, len = 2 * GUARD + RSS_NWQ * per * SLOT;
	uint8_t *mem = malloc(len), *want = malloc(SLOT), *data;
	struct ibv_mr *mr = mem ? ibv_reg_mr(pd, mem, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	int next[RSS_NWQ] = { 0 }, real[RSS_NWQ] = { 0 }, k, w, got = 0, bad_frames = 0;
	int last = -1;
	bool seen[MAXN] = { false };
	struct ibv_wq *wqs[RSS_NWQ];
	struct ibv_flow *flow;
	struct ibv_wc wc;

	if (!mr || !want)
		return 1;
	memset(mem, 0xa5, len);
	data = mem + GUARD;
	for (w = 0; w < RSS_NWQ; w++) {
		wqs[w] = rss_wq(pd, cq, per);
		if (!wqs[w])
			return 1;
		for (k = 0; k < (int)per; k++) {
			uint8_t *slot = data + (w * per + k) * SLOT;
			struct ibv_sge sg = { .addr = (uintptr_t)slot, .length = SLOT,
					      .lkey = mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sg, .num_sge = 1 }, *bad;

			if (ibv_post_wq_recv(wqs[w], &wr, &bad)) {
				fprintf(stderr, "ibv_post_wq_recv %d.%d failed\n", w, k);
				return 1;
			}
		}
	}
	if (!rss_qp(pd, wqs, &flow))
		return 1;
	if (!say_ready(ready))
		return 1;
	while (got < n && wait_wc(cq, &wc, got ? 5000 : 30000) == 1) {
		uint8_t *slot;
		uint32_t fk;

		for (w = 0; w < RSS_NWQ && wqs[w]->wq_num != wc.qp_num; w++)
			;
		if (wc.status != IBV_WC_SUCCESS || w == RSS_NWQ || wc.wr_id != (uint64_t)next[w]) {
			fprintf(stderr, "receive %d: %s, WQ %#x, wr_id %llu\n", got,
				ibv_wc_status_str(wc.status), wc.qp_num,
				(unsigned long long)wc.wr_id);
			return 1;
		}
		slot = data + (w * per + next[w]) * SLOT;
		memcpy(&fk, slot + 42, 4);
		if (fk == WARM) {
			bad_frames += got > 0;
			next[w]++;
			continue;
		}
		memset(want, 0xa5, SLOT);
		if (fk < (uint32_t)n)
			ip_frame_build(want, fk, group);
		if (fk >= (uint32_t)n || (int)fk <= last || rss_wq_of(fk) != w ||
		    wc.byte_len != frame_len(fk) || memcmp(slot, want, SLOT)) {
			fprintf(stderr, "receive %d: frame %u, %u bytes, in WQ %d: not as sent\n",
				got, fk, wc.byte_len, w);
			bad_frames++;
		}
		if (fk < (uint32_t)n)
			seen[fk] = true;
		last = fk;
		next[w]++;
		real[w]++;
		got++;
	}
	for (k = 0; k < GUARD; k++)
		if (mem[k] != 0xa5 || mem[len - 1 - k] != 0xa5)
			bad_frames++;
	if (wait_wc(cq, &wc, 500))
		bad_frames++;
	printf("# received %d of %d frames, %d not as sent, in another WQ or unexpected; "
	       "per WQ: %d %d %d %d\n", got, n, bad_frames, real[0], real[1], real[2], real[3]);
	if (got < n) {
		printf("# missing:");
		for (k = 0; k < n; k++)
			if (!seen[k])
				printf(" %d", k);
		printf("\n");
	}
	ibv_destroy_flow(flow);
	/* The frames must spread: at least two WQs got some. */
	return got >= n - n / 8 && !bad_frames &&
	       (real[0] > 0) + (real[1] > 0) + (real[2] > 0) + (real[3] > 0) >= 2 ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i, n;

	bool send = argc >= 4 && (!strcmp(argv[2], "--send") || !strcmp(argv[2], "--send-ip"));
	bool recv = argc >= 5 && (!strcmp(argv[2], "--recv") || !strcmp(argv[2], "--recv-rss"));

	if (!send && !recv) {
		fprintf(stderr, "usage: raweth_peer DEVICE --send N | --send-ip N |\n"
			"                   --recv N READY | --recv-rss N READY\n");
		return 2;
	}
	n = atoi(argv[3]);
	if (n <= 0 || n > MAXN)
		return 2;
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "no device %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 2 * MAXN, NULL, NULL, 0) : NULL;
	if (!cq)
		return 1;
	if (send)
		return do_send(pd, cq, n, !strcmp(argv[2], "--send-ip"));
	return !strcmp(argv[2], "--recv") ? do_recv(pd, cq, n, argv[4]) :
					    do_recv_rss(pd, cq, n, argv[4]);
}
