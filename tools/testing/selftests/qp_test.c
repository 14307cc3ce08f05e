// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs on one device over loopback, through libibverbs: every RC
 * operation with its data compared byte for byte and the guard bytes
 * around every buffer checked; the error completions the IBA requires
 * and the flushing after them (qp_err.c); UC, UD and SRQ (qp_xport.c);
 * completion channels, the QP state machine, ibv_qp_ex and ibv_cq_ex
 * (qp_api.c); WQEs written straight into the send ring by a hostile
 * process (qp_hostile.c); RDMA Atomic Write (qp_atomic.c); completion
 * timestamps (qp_ts.c); a context shared by import (qp_import.c);
 * parent and thread domains (qp_pd.c); XRC (qp_xrc.c); and tag
 * matching (qp_tm.c). Runs in the guest as root.
 *
 *   qp_test [DEVICE [PATTERN...]]	the cases (whose names contain a
 *					PATTERN), as TAP lines (default stag0)
 *
 * Each case runs in a child process of its own, which opens the device,
 * creates and connects its own QPs and destroys them all at the end; it
 * has $STAG_QP_TIMEOUT seconds (default 30) before it counts as hung.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qp.h"

/* ---- SEND / RECV ---- */

static void rc_send(void)
{
	struct buf *src = buf_new(1000, LW), *dst = buf_new(1000, LW);
	struct ibv_sge s, r;
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_wc wc;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(src->data, 1000, 1);
	r = sge_of(dst, 0, 1000);
	s = sge_of(src, 0, 1000);
	wr = wr_send(1, &s, 1);
	if (post_recv(b, 2, &r, 1) || post(a, &wr))
		return;
	if (expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, &wc, "sender"))
		t_check(wc.qp_num == a->qp->qp_num, "sender qp_num %#x, expected %#x", wc.qp_num,
			a->qp->qp_num);
	if (expect_wc(b->rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "receiver")) {
		t_check(wc.byte_len == 1000, "byte_len %u, expected 1000", wc.byte_len);
		t_check(wc.qp_num == b->qp->qp_num, "receiver qp_num %#x, expected %#x",
			wc.qp_num, b->qp->qp_num);
		t_check(!(wc.wc_flags & IBV_WC_WITH_IMM), "IBV_WC_WITH_IMM set without one");
	}
	expect_data(dst, 1, "received");
	expect_data(src, 1, "sent");
	expect_none(a->rcq, 0, "sender's receive CQ");
	expect_none(b->scq, 0, "receiver's send CQ");
}

/*
 * Three gather pieces (7, 1000 and 33 bytes, the middle one from another
 * region) scattered into four receive pieces (500, 12, 600 and 100
 * bytes): each piece is its own buffer with guards.
 */
static void rc_send_sge(void)
{
	static const size_t glen[] = { 7, 1000, 33 }, slen[] = { 500, 12, 600, 100 };
	struct buf *g[3], *s[4];
	struct ibv_sge gs[3], ss[4];
	char sent[1040], *p = sent;
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_wc wc;
	size_t off = 0;
	int i;

	for (i = 0; i < 3; i++) {
		g[i] = buf_new(glen[i] + 16, LW);
		if (!g[i])
			return;
		fill(g[i]->data, glen[i] + 16, 10 + i);
		gs[i] = sge_of(g[i], 16, glen[i]);
		memcpy(p, g[i]->data + 16, glen[i]);
		p += glen[i];
	}
	for (i = 0; i < 4; i++) {
		s[i] = buf_new(slen[i], LW);
		if (!s[i])
			return;
		ss[i] = sge_of(s[i], 0, slen[i]);
	}
	if (!pair_new(IBV_QPT_RC, &a, &b))
		return;
	wr = wr_send(1, gs, 3);
	if (post_recv(b, 2, ss, 4) || post(a, &wr))
		return;
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "sender");
	if (expect_wc(b->rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "receiver"))
		t_check(wc.byte_len == sizeof(sent), "byte_len %u, expected %zu", wc.byte_len,
			sizeof(sent));
	for (i = 0; i < 4; i++) {
		size_t n = off + slen[i] <= sizeof(sent) ? slen[i] : sizeof(sent) - off;
		char what[32], blank[600];

		snprintf(what, sizeof(what), "receive piece %d", i);
		fill(blank, slen[i], BLANK);
		expect_bytes(s[i]->data, sent + off, n, what);
		expect_bytes(s[i]->data + n, blank + n, slen[i] - n, what);
		expect_guards(s[i], what);
		off += n;
	}
	for (i = 0; i < 3; i++)
		expect_guards(g[i], "gather piece");
}

static void rc_send_zero(void)
{
	struct buf *dst = buf_new(64, LW);
	struct ibv_send_wr wr = wr_send(1, NULL, 0);
	struct end *a, *b;
	struct ibv_sge r;
	struct ibv_wc wc;

	if (!dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(dst->data, 64, 3);
	r = sge_of(dst, 0, 64);
	if (post_recv(b, 2, &r, 1) || post(a, &wr))
		return;
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "sender");
	if (expect_wc(b->rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "receiver"))
		t_check(wc.byte_len == 0, "byte_len %u, expected 0", wc.byte_len);
	expect_data(dst, 3, "receive buffer");
}

static void rc_send_imm(void)
{
	struct buf *src = buf_new(300, LW), *dst = buf_new(300, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s, r;
	struct ibv_wc wc;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(src->data, 300, 4);
	s = sge_of(src, 0, 300);
	r = sge_of(dst, 0, 300);
	wr = wr_send(1, &s, 1);
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(IMM);
	if (post_recv(b, 2, &r, 1) || post(a, &wr))
		return;
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "sender");
	if (expect_wc(b->rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "receiver")) {
		t_check(wc.wc_flags & IBV_WC_WITH_IMM, "IBV_WC_WITH_IMM not set");
		t_check(ntohl(wc.imm_data) == IMM, "imm_data %#x, expected %#x",
			ntohl(wc.imm_data), IMM);
		t_check(wc.byte_len == 300, "byte_len %u, expected 300", wc.byte_len);
	}
	expect_data(dst, 4, "received");
}

/* ---- RDMA ---- */

static void rc_write(void)
{
	struct buf *src = buf_new(4096, LW), *dst = buf_new(8192, LW | RW);
	char want[8192];
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(src->data, 4096, 5);
	fill(dst->data, 8192, 6);
	memcpy(want, dst->data, 8192);
	memcpy(want + 1000, src->data, 4096);
	s = sge_of(src, 0, 4096);
	wr = wr_rdma(1, IBV_WR_RDMA_WRITE, &s, 1, dst, 1000);
	if (post(a, &wr))
		return;
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "sender");
	expect_bytes(dst->data, want, 8192, "target region");
	expect_guards(dst, "target region");
	expect_none(b->rcq, QUIET_MS, "receiver (a WRITE consumes no receive)");
}

static void rc_write_imm(void)
{
	struct buf *src = buf_new(2000, LW), *dst = buf_new(2000, LW | RW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;
	struct ibv_wc wc;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(src->data, 2000, 7);
	s = sge_of(src, 0, 2000);
	wr = wr_rdma(1, IBV_WR_RDMA_WRITE_WITH_IMM, &s, 1, dst, 0);
	wr.imm_data = htonl(IMM);
	/* The data goes where the WRITE says: the receive needs no buffer. */
	if (post_recv(b, 2, NULL, 0) || post(a, &wr))
		return;
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "sender");
	if (expect_wc(b->rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, &wc, "receiver")) {
		t_check(wc.wc_flags & IBV_WC_WITH_IMM, "IBV_WC_WITH_IMM not set");
		t_check(ntohl(wc.imm_data) == IMM, "imm_data %#x, expected %#x",
			ntohl(wc.imm_data), IMM);
		/* IBA: the number of bytes the WRITE transferred, as rxe and mlx5 report. */
		t_check(wc.byte_len == 2000, "byte_len %u, expected 2000", wc.byte_len);
	}
	expect_data(dst, 7, "target region");
}

static void rc_read(void)
{
	struct buf *src = buf_new(3000, LW | RR), *dst = buf_new(3000, LW);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;
	struct ibv_wc wc;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(src->data, 3000, 8);
	s = sge_of(dst, 0, 3000);
	wr = wr_rdma(1, IBV_WR_RDMA_READ, &s, 1, src, 0);
	if (post(a, &wr))
		return;
	if (expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, &wc, "reader"))
		t_check(wc.byte_len == 3000, "byte_len %u, expected 3000", wc.byte_len);
	expect_data(dst, 8, "read into");
	expect_data(src, 8, "read from");
	expect_none(b->rcq, 0, "responder");
}

/* ---- atomics ---- */

struct atomic_case {
	enum ibv_wr_opcode op;
	uint64_t before, compare_add, swap, after;
	int wc_opcode;
};

static void rc_atomic(const struct atomic_case *c)
{
	struct buf *res = buf_new(8, LW), *tgt = buf_new(64, LW | RA);
	struct ibv_send_wr wr;
	struct end *a, *b;
	struct ibv_sge s;
	struct ibv_wc wc;
	uint64_t *t, old, now;
	char want[64];

	if (!res || !tgt || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(tgt->data, 64, 9);
	t = (uint64_t *)(tgt->data + 16);
	*t = c->before;
	*(uint64_t *)res->data = 0x5555555555555555ULL;
	s = sge_of(res, 0, 8);
	wr = wr_send(1, &s, 1);
	wr.opcode = c->op;
	wr.wr.atomic.remote_addr = (uintptr_t)t;
	wr.wr.atomic.rkey = tgt->mr->rkey;
	wr.wr.atomic.compare_add = c->compare_add;
	wr.wr.atomic.swap = c->swap;
	if (post(a, &wr))
		return;
	if (expect_wc(a->scq, 1, IBV_WC_SUCCESS, c->wc_opcode, &wc, "requester"))
		t_check(wc.byte_len == 8, "byte_len %u, expected 8", wc.byte_len);
	old = *(uint64_t *)res->data;
	now = *t;
	t_check(old == c->before, "returned %#llx, expected the old %#llx", (ull)old,
		(ull)c->before);
	t_check(now == c->after, "target %#llx, expected %#llx", (ull)now, (ull)c->after);
	fill(want, 64, 9);
	memcpy(want + 16, &c->after, 8);
	expect_bytes(tgt->data, want, 64, "the target and the bytes around it");
	expect_guards(tgt, "target region");
	expect_guards(res, "result buffer");
}

static void rc_cas_match(void)
{
	static const struct atomic_case c = {
		IBV_WR_ATOMIC_CMP_AND_SWP, 0x0123456789abcdefULL, 0x0123456789abcdefULL,
		0xfedcba9876543210ULL, 0xfedcba9876543210ULL, IBV_WC_COMP_SWAP
	};

	rc_atomic(&c);
}

static void rc_cas_mismatch(void)
{
	/* The compare value differs from the target only in its top bit. */
	static const struct atomic_case c = {
		IBV_WR_ATOMIC_CMP_AND_SWP, 0x0123456789abcdefULL, 0x8123456789abcdefULL,
		0xfedcba9876543210ULL, 0x0123456789abcdefULL, IBV_WC_COMP_SWAP
	};

	rc_atomic(&c);
}

static void rc_fetch_add(void)
{
	/* The carry out of the low 32 bits must reach the high ones. */
	static const struct atomic_case c = {
		IBV_WR_ATOMIC_FETCH_AND_ADD, 0x00000001ffffffffULL, 0x1000000000000001ULL, 0,
		0x1000000200000000ULL, IBV_WC_FETCH_ADD
	};

	rc_atomic(&c);
}

/* ---- inline, unsignaled, ordering ---- */

static void rc_inline(void)
{
	struct buf *dst = buf_new(MAX_INLINE, LW), *wdst = buf_new(MAX_INLINE, LW | RW);
	char data[MAX_INLINE], want[MAX_INLINE];
	struct ibv_sge s = { .addr = (uintptr_t)data, .length = MAX_INLINE, .lkey = 0xdead };
	struct ibv_send_wr wr = wr_send(1, &s, 1);
	struct end *a, *b;
	struct ibv_sge r;
	struct ibv_wc wc;

	if (!dst || !wdst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	r = sge_of(dst, 0, MAX_INLINE);
	fill(want, MAX_INLINE, 11);
	/* Unregistered memory and a made-up lkey: inline data is copied at post time. */
	memcpy(data, want, MAX_INLINE);
	wr.send_flags |= IBV_SEND_INLINE;
	if (post_recv(b, 2, &r, 1) || post(a, &wr))
		return;
	memset(data, 0, MAX_INLINE);
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "inline SEND");
	if (expect_wc(b->rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, "receiver"))
		t_check(wc.byte_len == MAX_INLINE, "byte_len %u, expected %d", wc.byte_len,
			MAX_INLINE);
	expect_data(dst, 11, "received");

	fill(data, MAX_INLINE, 12);
	wr = wr_rdma(3, IBV_WR_RDMA_WRITE, &s, 1, wdst, 0);
	wr.send_flags |= IBV_SEND_INLINE;
	if (post(a, &wr))
		return;
	memset(data, 0, MAX_INLINE);
	expect_wc(a->scq, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "inline WRITE");
	expect_data(wdst, 12, "written");
}

static void rc_unsignaled(void)
{
	struct buf *src = buf_new(10 * 100, LW), *dst = buf_new(10 * 100, LW);
	struct ibv_sge s[10], r[10];
	struct ibv_send_wr wr;
	struct end *a, *b;
	int i;

	if (!src || !dst)
		return;
	a = end_new(IBV_QPT_RC, NULL, false);
	b = end_new(IBV_QPT_RC, NULL, false);
	if (!a || !b)
		return;
	if (!pair_connect_default(a, b))
		return;
	fill(src->data, 1000, 13);
	for (i = 0; i < 10; i++) {
		r[i] = sge_of(dst, i * 100, 100);
		s[i] = sge_of(src, i * 100, 100);
		if (post_recv(b, 100 + i, &r[i], 1))
			return;
	}
	for (i = 0; i < 10; i++) {
		wr = wr_send(i, &s[i], 1);
		wr.send_flags = i == 9 ? IBV_SEND_SIGNALED : 0;
		if (post(a, &wr))
			return;
	}
	for (i = 0; i < 10; i++)
		expect_wc(b->rcq, 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receiver");
	expect_wc(a->scq, 9, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "the only signaled SEND");
	expect_none(a->scq, QUIET_MS, "after the signaled SEND");
	expect_data(dst, 13, "received");
}

/*
 * 60 WRs: WRITE to slot i, SEND i, for 28 slots, and a READ of every
 * seventh slot right after its SEND. When the receive of SEND i completes
 * the WRITE before it must be visible, a READ returns what was written
 * before it, and every completion comes in posting order.
 */
#define NSLOT	28
#define NWR	(2 * NSLOT + NSLOT / 7)

static int wc_opcode_of(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
	       op == IBV_WR_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE;
}

static void rc_ordering(void)
{
	struct buf *src = buf_new(64 * NSLOT, LW), *slots = buf_new(64 * NSLOT, LW | RW | RR);
	struct buf *msg = buf_new(4 * NSLOT, LW), *rd = buf_new(64 * NSLOT / 7, LW);
	struct ibv_sge ws[NSLOT], ss[NSLOT], rs[NSLOT], ds[NSLOT / 7];
	struct ibv_send_wr wr[NWR];
	char what[64];
	struct end *a, *b;
	int i, n = 0;

	if (!src || !slots || !msg || !rd || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(src->data, 64 * NSLOT, 14);
	for (i = 0; i < NSLOT; i++) {
		rs[i] = sge_of(msg, 4 * i, 4);
		if (post_recv(b, 1000 + i, &rs[i], 1))
			return;
	}
	for (i = 0; i < NSLOT; i++) {
		ws[i] = sge_of(src, 64 * i, 64);
		wr[n] = wr_rdma(n, IBV_WR_RDMA_WRITE, &ws[i], 1, slots, 64 * i);
		n++;
		ss[i] = sge_of(src, 64 * i, 4);
		wr[n] = wr_send(n, &ss[i], 1);
		n++;
		if (i % 7 == 6) {
			ds[i / 7] = sge_of(rd, 64 * (i / 7), 64);
			wr[n] = wr_rdma(n, IBV_WR_RDMA_READ, &ds[i / 7], 1, slots, 64 * i);
			n++;
		}
	}
	for (i = 0; i < n - 1; i++)
		wr[i].next = &wr[i + 1];
	if (post(a, wr))
		return;
	for (i = 0; i < NSLOT; i++) {
		snprintf(what, sizeof(what), "receive %d", i);
		if (!expect_wc(b->rcq, 1000 + i, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, what))
			break;
		snprintf(what, sizeof(what), "slot %d when SEND %d arrived", i, i);
		expect_bytes(slots->data + 64 * i, src->data + 64 * i, 64, what);
		snprintf(what, sizeof(what), "message %d", i);
		expect_bytes(msg->data + 4 * i, src->data + 64 * i, 4, what);
	}
	for (i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "requester, WR %d of %d in posting order", i + 1, n);
		if (!expect_wc(a->scq, wr[i].wr_id, IBV_WC_SUCCESS, wc_opcode_of(wr[i].opcode),
			       NULL, what))
			break;
	}
	for (i = 0; i < NSLOT / 7; i++)
		expect_bytes(rd->data + 64 * i, src->data + 64 * (7 * i + 6), 64,
			     "a READ after the WRITE to its slot");
	expect_guards(slots, "slots");
	expect_guards(rd, "read buffer");
	expect_guards(msg, "messages");
}

const struct qp_case rc_cases[] = {
	{ "RC SEND/RECV: data, byte_len, opcodes, qp_num; guards intact", rc_send },
	{ "RC SEND of 3 SGEs (7+1000+33) into a RECV of 4 (500+12+600+100): byte for byte",
	  rc_send_sge },
	{ "RC zero-length SEND: byte_len 0, the receive buffer untouched", rc_send_zero },
	{ "RC SEND_WITH_IMM: IBV_WC_WITH_IMM and the immediate in network order",
	  rc_send_imm },
	{ "RC RDMA_WRITE at offset 1000: the bytes around it untouched, no receive consumed",
	  rc_write },
	{ "RC RDMA_WRITE_WITH_IMM: takes a receive of 0 SGEs, RECV_RDMA_WITH_IMM, imm, byte_len",
	  rc_write_imm },
	{ "RC RDMA_READ: data, byte_len, both regions' guards", rc_read },
	{ "RC ATOMIC_CMP_AND_SWP that matches: swapped, the old value returned", rc_cas_match },
	{ "RC ATOMIC_CMP_AND_SWP that does not match: unchanged, the old value returned",
	  rc_cas_mismatch },
	{ "RC ATOMIC_FETCH_AND_ADD: the sum with a carry across 32 bits, the old value returned",
	  rc_fetch_add },
	{ "RC inline SEND and RDMA_WRITE: the data is taken at post time, no lkey needed",
	  rc_inline },
	{ "RC 10 unsignaled SENDs but the last: 10 receives, one send completion", rc_unsignaled },
	{ "RC 60 WRs (WRITE, SEND, READ): completions in order, each WRITE visible at its SEND",
	  rc_ordering },
	{ NULL }
};

int main(int argc, char **argv)
{
	const struct qp_case *parts[] = { rc_cases, err_cases, xport_cases, api_cases,
					  hostile_cases, atomic_write_cases, flush_cases,
					  timestamp_cases, import_cases, pd_cases, mcast_cases,
					  dmabuf_cases, xrc_cases, raweth_cases, tm_cases };

	return qp_cases_main("qp", "STAG_QP_TIMEOUT", 30, parts, ARRAY_SIZE(parts), argc, argv);
}
