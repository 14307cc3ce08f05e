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
 *
 * Frame k carries k after its Ethernet header and fill(k) after that,
 * each of a length of its own between 60 and 1000 bytes. The receiver
 * checks each frame byte for byte and the bytes after it in its buffer,
 * that the frames come in the order sent, and that a frame for another
 * group or of another type, sent between every two, never arrives.
 * Frames are datagrams and a virtual link may lose one (a CI run lost
 * the 64th of 64 once, the peer guest busy): exit status 0 when every
 * frame that came is whole, in order, and no more than N/8 were lost.
 * The sender paces its frames, 2 ms after each three: sent back to back,
 * 192 frames overran the receiving guest's link under a loaded CI host
 * (13 of 64 lost, none of them counted by stag or the netdev).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include <infiniband/verbs.h>

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

static int do_send(struct ibv_pd *pd, struct ibv_cq *cq, int n)
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
	for (k = 0; k < n; k++) {
		/* Frame k, then one for another group and one of another type. */
		for (j = 0; j < 3; j++) {
			frame_build(buf, k, j == 1 ? group2 : group, j == 2 ? 0x0800 : ETYPE_TEST);
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
	size_t len = 2 * GUARD + (size_t)n * SLOT;
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
	int k, got = 0, bad_frames = 0, last = -1;
	FILE *f;

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
	for (k = 0; k < n; k++) {
		sg = (struct ibv_sge){ .addr = (uintptr_t)(data + k * SLOT), .length = SLOT,
				       .lkey = mr->lkey };
		wr.wr_id = k;
		wr.sg_list = &sg;
		if (ibv_post_recv(qp, &wr, &bad)) {
			fprintf(stderr, "ibv_post_recv %d failed\n", k);
			return 1;
		}
	}
	f = fopen(ready, "w");
	if (!f)
		return 1;
	fclose(f);
	/* The first frame may take the sender's start; then 5 s of silence ends it. */
	while (got < n && wait_wc(cq, &wc, got ? 5000 : 30000) == 1) {
		uint32_t fk;

		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)got) {
			fprintf(stderr, "receive %d: %s, wr_id %llu\n", got,
				ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
			return 1;
		}
		/* Frame fk, after frame last: anything else is not as sent. */
		memcpy(&fk, data + got * SLOT + 14, 4);
		memset(want, 0xa5, SLOT);
		if (fk < (uint32_t)n)
			frame_build(want, fk, group, ETYPE_TEST);
		if (fk >= (uint32_t)n || (int)fk <= last || wc.byte_len != frame_len(fk) ||
		    memcmp(data + got * SLOT, want, SLOT)) {
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

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i, n;

	if (argc < 4 || (strcmp(argv[2], "--send") && (strcmp(argv[2], "--recv") || argc < 5))) {
		fprintf(stderr, "usage: raweth_peer DEVICE --send N | --recv N READY\n");
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
	return !strcmp(argv[2], "--send") ? do_send(pd, cq, n) : do_recv(pd, cq, n, argv[4]);
}
