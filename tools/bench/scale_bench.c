// SPDX-License-Identifier: GPL-2.0
/*
 * scale_bench: does the rate of small RDMA WRITEs depend on how many memory
 * regions the device holds? The cost under test is the key lookup.
 *
 *   scale_bench [-g GID_INDEX] [-t SECONDS] [-r REPS] DEVICE COUNT...
 *
 * Connects two RC QPs of one PD to each other over DEVICE (a loopback
 * pair), then for each COUNT, in increasing order, registers memory
 * regions until COUNT of them exist and times a loop of 8-byte RDMA WRITEs,
 * each to the rkey of a region chosen at random among them. Every region
 * covers one 4 KiB page of a 4 MiB buffer, so many regions share a page
 * (registrations may overlap) and the whole run pins only 4 MiB. Each loop
 * lasts SECONDS (default 1), REPS times (default 3); per COUNT it prints
 *
 *   scale_bench: dev=stag0 mrs=1000 reg_us=... samples=R1,R2,R3 ops_s=... min=... max=...
 *
 * (reg_us: the mean ibv_reg_mr() time of the regions added at this step;
 * samples: the WRITE rate of each loop; ops_s: their median, min and max
 * their extremes), and, when the
 * device has a stag debugfs file, the TPT's figures, among them the
 * page-list bytes per pinned page:
 *
 *   scale_bench: dev=stag0 mrs=1000 tpt_pinned_pages=... tpt_pagelist_bytes=...
 *                tpt_bytes_per_pinned_page=...
 *
 * A million regions need RLIMIT_MEMLOCK unlimited (or CAP_IPC_LOCK): each
 * registration is charged for its page even though the pages are shared.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchlib.h"

#define REGION		4096UL
#define NREGIONS	1024UL		/* 4 MiB of distinct pages */
#define DEPTH		128		/* WRITEs in flight */
#define BATCH		16		/* WRITEs per ibv_post_send(), the last signalled */
#define PORT		1
#define USAGE		"usage: scale_bench [-g GID_INDEX] [-t SECONDS] [-r 1..16] DEVICE COUNT..."

struct pair {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	struct ibv_mr *src;
	char *buf;
	struct ibv_mr **mrs;
	size_t nmrs;
};

static struct ibv_qp *qp_create(struct pair *p)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = p->cq,
		.recv_cq = p->cq,
		.cap = {
			.max_send_wr = DEPTH,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(p->pd, &attr);

	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	return qp;
}

/* Takes qp through INIT and RTR to RTS, connected to the QP numbered dqpn. */
static void qp_connect(struct ibv_qp *qp, uint32_t dqpn, int gid_index)
{
	struct ibv_port_attr port;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = PORT,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	union ibv_gid gid;
	int err;

	if (ibv_query_port(qp->context, PORT, &port) ||
	    ibv_query_gid(qp->context, PORT, gid_index, &gid))
		die("cannot query port %d, GID %d: %s", PORT, gid_index, strerror(errno));
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (err)
		die("QP to INIT: %s", strerror(err));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = port.active_mtu;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = PORT;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (err)
		die("QP to RTR: %s", strerror(err));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err)
		die("QP to RTS: %s", strerror(err));
}

static void pair_open(struct pair *p, const char *dev, int gid_index, size_t maxmrs)
{
	p->ctx = open_dev(dev);
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = ibv_create_cq(p->ctx, DEPTH, NULL, NULL, 0);
	if (!p->pd || !p->cq)
		die("ibv_alloc_pd / ibv_create_cq: %s", strerror(errno));
	p->qp[0] = qp_create(p);
	p->qp[1] = qp_create(p);
	qp_connect(p->qp[0], p->qp[1]->qp_num, gid_index);
	qp_connect(p->qp[1], p->qp[0]->qp_num, gid_index);

	p->buf = map_touched(REGION * NREGIONS);
	p->src = ibv_reg_mr(p->pd, p->buf, 8, IBV_ACCESS_LOCAL_WRITE);
	p->mrs = calloc(maxmrs, sizeof(*p->mrs));
	if (!p->src || !p->mrs)
		die("source region: %s", strerror(errno));
}

/* Registers regions until there are n; returns the mean time of one, in us. */
static double pair_grow(struct pair *p, size_t n)
{
	double t = now();
	size_t first = p->nmrs;

	for (; p->nmrs < n; p->nmrs++) {
		char *addr = p->buf + p->nmrs % NREGIONS * REGION;

		p->mrs[p->nmrs] = ibv_reg_mr(p->pd, addr, REGION, IBV_ACCESS_LOCAL_WRITE |
					     IBV_ACCESS_REMOTE_WRITE);
		if (!p->mrs[p->nmrs])
			die("ibv_reg_mr number %zu: %s", p->nmrs + 1, strerror(errno));
	}
	return n > first ? (now() - t) * 1e6 / (n - first) : 0;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Waits for one signalled completion, which retires a batch. */
static void reap(struct pair *p)
{
	struct ibv_wc wc;
	int n;

	do
		n = ibv_poll_cq(p->cq, 1, &wc);
	while (n == 0);
	if (n < 0)
		die("ibv_poll_cq failed");
	if (wc.status != IBV_WC_SUCCESS)
		die("RDMA WRITE completed with %s", ibv_wc_status_str(wc.status));
}

/* WRITEs to random regions for secs seconds; returns the rate per second. */
static double pair_write(struct pair *p, double secs)
{
	struct ibv_sge sge[BATCH];
	struct ibv_send_wr wr[BATCH], *bad;
	uint64_t seed = 0x9e3779b97f4a7c15ULL, ops = 0;
	double t, end;
	int i, inflight = 0, err;

	t = now();
	end = t + secs;
	while (now() < end || inflight) {
		if (inflight == DEPTH / BATCH || now() >= end) {
			reap(p);
			inflight--;
			ops += BATCH;
			continue;
		}
		for (i = 0; i < BATCH; i++) {
			struct ibv_mr *mr = p->mrs[xorshift(&seed) % p->nmrs];

			sge[i] = (struct ibv_sge){ (uintptr_t)p->buf, 8, p->src->lkey };
			wr[i] = (struct ibv_send_wr){
				.next = i + 1 < BATCH ? &wr[i + 1] : NULL,
				.sg_list = &sge[i],
				.num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags = i + 1 < BATCH ? 0 : IBV_SEND_SIGNALED,
				.wr.rdma = { (uintptr_t)mr->addr, mr->rkey },
			};
		}
		err = ibv_post_send(p->qp[0], wr, &bad);
		if (err)
			die("ibv_post_send: %s", strerror(err));
		inflight++;
	}
	return ops / (now() - t);
}

int main(int argc, char **argv)
{
	double secs = 1, rate[16], reg_us;
	int opt, gid_index = 1, reps = 3, i;
	struct pair p = {};
	size_t n, maxmrs = 0;

	while ((opt = getopt(argc, argv, "g:t:r:")) != -1) {
		switch (opt) {
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 't':
			secs = strtod(optarg, NULL);
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		default:
			die(USAGE);
		}
	}
	if (argc - optind < 2 || reps < 1 || reps > 16 || secs <= 0)
		die(USAGE);
	for (i = optind + 1; i < argc; i++) {
		n = parse_size(argv[i]);
		if (n <= maxmrs)
			die("the COUNTs must increase");
		maxmrs = n;
	}

	pair_open(&p, argv[optind], gid_index, maxmrs);
	for (i = optind + 1; i < argc; i++) {
		int r;

		reg_us = pair_grow(&p, parse_size(argv[i]));
		pair_write(&p, secs / 10);
		for (r = 0; r < reps; r++)
			rate[r] = pair_write(&p, secs);
		printf("scale_bench: dev=%s mrs=%zu reg_us=%.2f samples=", argv[optind], p.nmrs,
		       reg_us);
		for (r = 0; r < reps; r++)
			printf("%s%.0f", r ? "," : "", rate[r]);
		printf(" ops_s=%.0f min=%.0f max=%.0f\n", median(rate, reps), minimum(rate, reps),
		       maximum(rate, reps));
		printf("scale_bench: dev=%s mrs=%zu", argv[optind], p.nmrs);
		print_tpt(argv[optind]);
		printf("\n");
		fflush(stdout);
	}
	/*
	 * Closing the device would release every region too, but in one
	 * system call: a million in a row can look like a soft lockup.
	 */
	while (p.nmrs)
		if (ibv_dereg_mr(p.mrs[--p.nmrs]))
			die("ibv_dereg_mr: %s", strerror(errno));
	return 0;
}
