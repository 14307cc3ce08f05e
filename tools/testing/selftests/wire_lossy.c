// SPDX-License-Identifier: GPL-2.0
/*
 * wire_test --lossy: bulk traffic that a faulty link (lossy.sh puts netem
 * on both guests) must not change. RC moves STAG_LOSSY_MB MiB (default 64)
 * with each of WRITE, READ and SEND and every byte must land where it
 * belongs; the data is a position-unique stream (xfill()), judged where it
 * lies, so a retransmitted chunk placed one message off is caught as surely
 * as a flipped bit. RC FETCH_ADDs and ATOMIC_WRITEs must each run once.
 * UC and UD may lose messages, but what is delivered is whole, exact and
 * delivered once, and UC's in order. After each RC case the QPs must
 * still carry a message.
 *
 * Each case prints its goodput and what the client's port counted, for the
 * note comparing stag with rxe under the same profile.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wire.h"

#define MSGS		64	/* RC messages per case: one receive each fits DEPTH */
#define INFLIGHT	16	/* RC WRs posted and not yet completed */
#define ROUNDS		4	/* UC and UD: rounds of DEPTH messages */
#define STALL_MS	60000	/* the longest an RC WR may wait under the worst profile */
#define SEED_BULK	0x5eed0001ull
#define SEED_MSG	0x5eed1000ull

static size_t bulk_bytes(void)
{
	const char *env = getenv("STAG_LOSSY_MB");
	long mb = env ? atol(env) : 64;

	return (mb > 0 ? mb : 64) << 20;
}

/* ---- what the client's port counted ---- */

static const char * const watched[] = {
	"retransmitted_pkts", "ack_timeouts", "nak_rcvd_psn_seq", "nak_sent_psn_seq",
	"duplicate_requests", "icrc_errors", "drop_psn", "drop_malformed",
	/* rdma_rxe's names */
	"rcvd_seq_err", "out_of_seq_request", "duplicate_request", "completer_retry_err",
};

static void counters_take(long *v)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(watched); i++)
		v[i] = hw_counter(watched[i]);
}

static void report(const char *what, size_t bytes, long ms, const long *before)
{
	long after[ARRAY_SIZE(watched)];
	char line[512];
	unsigned int i;
	int n = 0;

	counters_take(after);
	for (i = 0; i < ARRAY_SIZE(watched) && n < (int)sizeof(line) - 64; i++) {
		if (before[i] >= 0 && after[i] > before[i])
			n += snprintf(line + n, sizeof(line) - n, " %s=%ld", watched[i],
				      after[i] - before[i]);
	}
	line[n] = 0;
	printf("# %s: %zu KiB in %ld ms, %.2f MiB/s;%s\n", what, bytes >> 10, ms,
	       ms ? (double)bytes / (1 << 20) * 1000 / ms : 0.0, n ? line : " nothing counted");
}

/* ---- checks of this side's buffers ---- */

/*
 * What the wrong bytes at @off of @b hold, to tell a misplaced packet from
 * one never written: the stream at another offset, or the BLANK fill.
 */
static void explain(const struct buf *b, size_t off, uint64_t seed)
{
	size_t n = b->len - off < 16 ? b->len - off : 16, at, end = off, step;
	char *blank = malloc(b->len);

	while (end < b->len && xdiff(b->data + end, end, 1, seed, NULL))
		end++;
	printf("#   wrong from %zu to %zu (%zu bytes)\n", off, end, end - off);
	if (blank) {
		fill(blank, b->len, BLANK);
		if (!memcmp(b->data + off, blank + off, n))
			printf("#   holding the buffer's first fill: never written\n");
		free(blank);
	}
	for (step = 8, at = 0; at + n <= b->len; at += step) {
		if (at != off && !xdiff(b->data + off, at, n, seed, NULL)) {
			printf("#   holding the bytes that belong at offset %zu (%+lld)\n", at,
			       (long long)at - (long long)off);
			break;
		}
	}
}

static void buf_xexpect(const struct buf *b, uint64_t seed, const char *what)
{
	size_t first = 0, bad = xdiff(b->data, 0, b->len, seed, &first);

	t_check(!bad, "%s: %zu of %zu bytes wrong, the first at offset %zu", what, bad, b->len,
		first);
	if (bad)
		explain(b, first, seed);
	t_check(!guards_changed(b), "%s: %zu guard bytes changed", what, guards_changed(b));
}

/* After the storm: one SEND each way of 3 MTUs and a bit, exact. */
static void still_usable(struct end *e, const struct rqp *r, const char *what)
{
	size_t len = 3 * mtu + 7;
	struct buf *lb = buf_new(len, LW);
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct ibv_wc wc;
	struct rbuf rb;

	if (!lb || !rbuf_new(&rb, len, LW, BLANK) || !rrecv(r, 0x51, &rb, 0, len))
		return;
	xfill(lb->data, 0, len, SEED_MSG - 1);
	s = sge_of(lb, 0, len);
	wr = wr_send(0x50, &s, 1);
	if (post(e, &wr))
		return;
	if (!expect_wc(e->scq, 0x50, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, what))
		return;
	if (rexpect_wc(r, 'r', 0x51, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, what))
		expect_recv(&wc, len, NULL, r->qpn, what);
	rbuf_xexpect(&rb, 0, len, SEED_MSG - 1, what);
	if (e->qp->qp_type != IBV_QPT_UD) {
		expect_state(e->qp, IBV_QPS_RTS, what);
		rexpect_state(r, IBV_QPS_RTS, what);
	}
}

/* ---- RC: every byte, in its place ---- */

static const struct bulk {
	const char *name;
	enum ibv_wr_opcode op;
	enum ibv_wc_opcode wc;
} bulks[] = {
	{ "RDMA_WRITE", IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE },
	{ "RDMA_READ", IBV_WR_RDMA_READ, IBV_WC_RDMA_READ },
	{ "SEND", IBV_WR_SEND, IBV_WC_SEND },
};

/* Posts the @MSGS chunks of @lb, at most INFLIGHT at once; true when each completed in order. */
static bool bulk_post(struct end *e, const struct bulk *k, struct buf *lb, const struct rbuf *rb)
{
	size_t chunk = lb->len / MSGS;
	unsigned int posted = 0, done = 0;
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct ibv_wc wc;

	while (done < MSGS) {
		while (posted < MSGS && posted - done < INFLIGHT) {
			s = sge_of(lb, posted * chunk, chunk);
			wr = wr_remote(posted, k->op, &s, rb->addr + posted * chunk, rb->rkey);
			if (post(e, &wr))
				return false;
			posted++;
		}
		if (poll_n(e->scq, &wc, 1, STALL_MS) != 1) {
			t_fail("%s %u of %u: no completion in %d ms", k->name, done, MSGS,
			       STALL_MS);
			return false;
		}
		if (!expect_wc_is(&wc, done, IBV_WC_SUCCESS, k->wc, "client"))
			return false;
		done++;
	}
	return true;
}

static void rc_bulk(const void *arg)
{
	const struct bulk *k = arg;
	size_t len = bulk_bytes(), chunk = len / MSGS;
	bool read = k->op == IBV_WR_RDMA_READ, send = k->op == IBV_WR_SEND;
	long before[ARRAY_SIZE(watched)], t0;
	struct ibv_wc wc[WIRE_POLL_MAX];
	unsigned int got = 0, i;
	struct buf *lb;
	struct rbuf rb;
	struct end *e;
	struct rqp r;
	int n;

	lb = buf_new(len, LW);
	if (!lb || !rbuf_new(&rb, len, LW | (read ? RR : RW), BLANK) ||
	    !wire_pair(IBV_QPT_RC, false, &e, &r))
		return;
	if (read ? !rpc(NULL, 0, "XFILL %d %#llx", rb.id, SEED_BULK) :
		   (xfill(lb->data, 0, len, SEED_BULK), false))
		return;
	if (send && !rpc(NULL, 0, "RECVN %d 0 %d 0 %zu %zu %d", r.id, rb.id, chunk, chunk, MSGS))
		return;
	counters_take(before);
	t0 = now_ms();
	if (!bulk_post(e, k, lb, &rb))
		return;
	/* The server's receives, all of them, in order, each a whole chunk. */
	while (send && got < MSGS) {
		n = rpoll(&r, 'r', wc, WIRE_POLL_MAX, WAIT_MS);
		if (n <= 0) {
			t_fail("server: %u of %u receives completed", got, MSGS);
			return;
		}
		for (i = 0; i < (unsigned int)n; i++, got++) {
			if (expect_wc_is(&wc[i], got, IBV_WC_SUCCESS, IBV_WC_RECV, "server"))
				expect_recv(&wc[i], chunk, NULL, r.qpn, "server");
		}
	}
	report(k->name, len, now_ms() - t0, before);
	if (read)
		buf_xexpect(lb, SEED_BULK, "client's buffer");
	else
		rbuf_xexpect(&rb, 0, len, SEED_BULK, "server's buffer");
	rexpect_none(&r, 's', 0, "server's send CQ");
	if (!send)
		rexpect_none(&r, 'r', 0, "server's receive CQ");
	still_usable(e, &r, "a SEND afterwards");
}

/* ---- RC atomics: executed once, whatever is lost ---- */

#define NATOMIC		256	/* FETCH_ADDs, and as many ATOMIC_WRITEs between them */
#define AW_SLOTS	8	/* the ATOMIC_WRITEs take turns at these */
#define AW_VALUE(i)	(0x5eed000000000000ull | (i))

/* WR @i: even ones add 1 to the counter (result to slot i/2 of @lb), odd ones write. */
static int atomic_post(struct ibv_qp_ex *x, unsigned int i, const struct buf *lb,
		       const struct rbuf *rb)
{
	uint64_t v = AW_VALUE(i);

	ibv_wr_start(x);
	x->wr_id = i;
	x->wr_flags = IBV_SEND_SIGNALED;
	if (i & 1) {
		ibv_wr_atomic_write(x, rb->rkey, rb->addr + 8 * (1 + (i / 2) % AW_SLOTS), &v);
	} else {
		ibv_wr_atomic_fetch_add(x, rb->rkey, rb->addr, 1);
		ibv_wr_set_sge(x, lb->mr->lkey, (uintptr_t)lb->data + 8 * (i / 2), 8);
	}
	return ibv_wr_complete(x);
}

/*
 * FETCH_ADDs of 1 and ATOMIC_WRITEs in turn, INFLIGHT at a time: the
 * responder answers a request asked again from its resource and never
 * executes it twice, so FETCH_ADD n returns n and the counter ends at
 * NATOMIC, and each ATOMIC_WRITE slot holds the last value sent to it.
 */
static void rc_atomics(const void *arg)
{
	size_t rlen = 8 * (1 + AW_SLOTS);
	struct buf *lb = buf_new(8 * NATOMIC, LW), copy;
	unsigned int posted = 0, done = 0, i;
	long before[ARRAY_SIZE(watched)], t0;
	uint64_t zero = 0, got, want;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	struct rbuf rb;
	struct end *e;
	struct rqp r;
	int ret;

	(void)arg;
	if (!lb || !rbuf_new(&rb, rlen, LW | RA | RW, BLANK) ||
	    !rbuf_put(&rb, 0, &zero, 8) ||
	    !wire_pair_ops(IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			   IBV_QP_EX_WITH_ATOMIC_WRITE, &e, &r))
		return;
	x = ibv_qp_to_qp_ex(e->qp);
	counters_take(before);
	t0 = now_ms();
	while (done < 2 * NATOMIC) {
		while (posted < 2 * NATOMIC && posted - done < INFLIGHT) {
			ret = atomic_post(x, posted, lb, &rb);
			if (ret) {
				t_fail("WR %u: ibv_wr_complete: %s", posted, strerror(ret));
				return;
			}
			posted++;
		}
		if (poll_n(e->scq, &wc, 1, STALL_MS) != 1) {
			t_fail("atomic %u of %u: no completion in %d ms", done, 2 * NATOMIC,
			       STALL_MS);
			return;
		}
		if (!expect_wc_is(&wc, done, IBV_WC_SUCCESS,
				  done & 1 ? IBV_WC_ATOMIC_WRITE : IBV_WC_FETCH_ADD, "client"))
			return;
		done++;
	}
	report("FETCH_ADD and ATOMIC_WRITE", 16 * NATOMIC, now_ms() - t0, before);
	for (i = 0; i < NATOMIC; i++) {
		memcpy(&got, lb->data + 8 * i, 8);
		if (got != i) {
			t_fail("FETCH_ADD %u returned %llu: a request executed twice or lost", i,
			       (ull)got);
			break;
		}
	}
	expect_guards(lb, "client's results");
	if (!rbuf_get(&rb, &copy))
		return;
	memcpy(&got, copy.data, 8);
	t_check(got == NATOMIC, "the counter is %llu after %u FETCH_ADDs of 1", (ull)got,
		NATOMIC);
	for (i = 0; i < AW_SLOTS; i++) {
		/* The last odd WR that wrote slot i: WR 2k+1 writes slot k % AW_SLOTS. */
		want = AW_VALUE(2 * (NATOMIC - AW_SLOTS + i) + 1);
		memcpy(&got, copy.data + 8 * (1 + i), 8);
		t_check(got == want, "ATOMIC_WRITE slot %u holds %#llx, expected %#llx", i,
			(ull)got, (ull)want);
	}
	free(copy.mem);
	still_usable(e, &r, "a SEND afterwards");
}

/* ---- UC and UD: lost, never damaged ---- */

/*
 * Message @seq is @len bytes: the first 8 its number, the rest stream
 * SEED_MSG + @seq. A receive slot holds exactly one message (after UD's
 * GRH), so a longer one could not fit and a shorter one shows in byte_len.
 */
struct msgs {
	enum ibv_qp_type type;
	size_t len;	/* of a message */
	size_t slot;	/* of a receive: the GRH and a message */
	size_t off;	/* of the message in its slot */
	bool posted[DEPTH];
	uint64_t slot_wr[DEPTH];	/* the wr_id last posted on each slot */
	unsigned int sent, delivered, last;
	bool *seen;
};

static void msg_fill(char *p, size_t len, uint64_t seq)
{
	memcpy(p, &seq, sizeof(seq));
	xfill(p + 8, 8, len - 8, SEED_MSG + seq);
}

/* Judges the receive completion @wc against the copy @copy of the server's slots. */
static void msg_judge(struct msgs *m, const struct ibv_wc *wc, const struct buf *copy,
		      const char *what)
{
	unsigned int slot = wc->wr_id % DEPTH;
	const char *p = copy->data + slot * m->slot + m->off;
	uint64_t seq;
	size_t bad;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV || slot >= DEPTH ||
	    !m->posted[slot] || wc->wr_id != m->slot_wr[slot]) {
		t_fail("%s: completion %#llx status %s opcode %d: not a receive of a posted slot",
		       what, (ull)wc->wr_id, ibv_wc_status_str(wc->status), wc->opcode);
		return;
	}
	m->posted[slot] = false;
	if (wc->byte_len != m->off + m->len) {
		t_fail("%s: byte_len %u, expected %zu", what, wc->byte_len, m->off + m->len);
		return;
	}
	memcpy(&seq, p, sizeof(seq));
	if (seq >= m->sent) {
		t_fail("%s: message number %llu, only %u sent", what, (ull)seq, m->sent);
		return;
	}
	t_check(!m->seen[seq], "%s: message %llu delivered twice", what, (ull)seq);
	/* UC's PSNs put its messages in order; UD datagrams may pass each other. */
	t_check(m->type != IBV_QPT_UC || !m->delivered || seq > m->last,
		"%s: message %llu after %u", what, (ull)seq, m->last);
	bad = xdiff(p + 8, 8, m->len - 8, SEED_MSG + seq, NULL);
	t_check(!bad, "%s: message %llu has %zu wrong bytes", what, (ull)seq, bad);
	m->seen[seq] = true;
	m->last = seq;
	m->delivered++;
}

static void unreliable(const void *arg)
{
	const enum ibv_qp_type *type = arg;
	struct msgs m = { .type = *type };
	long before[ARRAY_SIZE(watched)], t0;
	struct ibv_wc wc[WIRE_POLL_MAX];
	unsigned int round, i, j, nfree;
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct buf *lb, copy = { 0 };
	struct rbuf rb;
	struct end *e;
	struct ibv_ah *ah = NULL;
	struct rqp r;
	int n;

	m.len = m.type == IBV_QPT_UD ? mtu : 3 * mtu + 7;
	m.off = m.type == IBV_QPT_UD ? 40 : 0;
	m.slot = m.off + m.len;
	m.seen = calloc(ROUNDS * DEPTH, 1);
	lb = buf_new(DEPTH * m.len, LW);
	if (!m.seen || !lb || !rbuf_new(&rb, DEPTH * m.slot, LW, BLANK) ||
	    !wire_pair(m.type, false, &e, &r))
		goto out;
	if (m.type == IBV_QPT_UD) {
		ah = ah_to(&peer.gid);
		if (!ah)
			goto out;
	}
	counters_take(before);
	t0 = now_ms();
	for (round = 0; round < ROUNDS; round++) {
		/* Every free slot gets a receive; those left from the last round stay first. */
		for (i = 0, nfree = 0; i < DEPTH; i++) {
			if (m.posted[i])
				continue;
			m.slot_wr[i] = round * DEPTH + i;
			if (!rrecv(&r, m.slot_wr[i], &rb, i * m.slot, m.slot))
				goto out;
			m.posted[i] = true;
			nfree++;
		}
		/* As many messages as there are free slots: none can meet an empty queue. */
		for (i = 0; i < nfree; i++, m.sent++) {
			msg_fill(lb->data + i * m.len, m.len, m.sent);
			s = sge_of(lb, i * m.len, m.len);
			wr = wr_send(m.sent, &s, 1);
			if (ah) {
				wr.wr.ud.ah = ah;
				wr.wr.ud.remote_qpn = r.qpn;
				wr.wr.ud.remote_qkey = QKEY;
			}
			if (post(e, &wr))
				goto out;
		}
		for (i = m.sent - nfree; i < m.sent; i++) {
			if (!expect_wc(e->scq, i, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "client"))
				goto out;
		}
		/* Whatever arrives, arrives within a moment of the last send. */
		n = rpoll(&r, 'r', wc, WIRE_POLL_MAX, QUIET_MS);
		if (n > 0 && !rbuf_get(&rb, &copy))
			goto out;
		while (n > 0) {
			for (j = 0; j < (unsigned int)n; j++)
				msg_judge(&m, &wc[j], &copy, "server's receive");
			n = rpoll(&r, 'r', wc, WIRE_POLL_MAX, 0);
			if (n > 0) {
				free(copy.mem);
				copy.mem = NULL;
				if (!rbuf_get(&rb, &copy))
					goto out;
			}
		}
		free(copy.mem);
		copy.mem = NULL;
	}
	report(m.type == IBV_QPT_UD ? "UD SEND" : "UC SEND", (size_t)m.delivered * m.len,
	       now_ms() - t0, before);
	printf("# %u of %u messages delivered\n", m.delivered, m.sent);
	/* A link that loses a few percent still delivers most of them. */
	t_check(m.delivered * 2 > m.sent, "%u of %u messages delivered", m.delivered, m.sent);
	rexpect_none(&r, 's', 0, "server's send CQ");
out:
	free(copy.mem);
	free(m.seen);
}

static const enum ibv_qp_type uc = IBV_QPT_UC, ud = IBV_QPT_UD;

static void lossy_cases(int limit, int npat, char **pat)
{
	char names[ARRAY_SIZE(bulks)][160];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bulks); i++) {
		snprintf(names[i], sizeof(names[i]),
			 "RC %s of %zu MiB in %d messages, %d in flight: every byte in its "
			 "place, guards intact, the QPs still usable", bulks[i].name,
			 bulk_bytes() >> 20, MSGS, INFLIGHT);
		wire_run(names[i], rc_bulk, &bulks[i], limit, npat, pat);
	}
	wire_run("RC FETCH_ADD and ATOMIC_WRITE, 256 of each in turn: each executed once, "
		 "the counter exact, the last value written in each slot", rc_atomics, NULL,
		 limit, npat, pat);
	wire_run("UC SEND of 3*mtu+7 bytes, 4 rounds of 64: those delivered are whole, exact, "
		 "in order and delivered once", unreliable, &uc, limit, npat,
		 pat);
	wire_run("UD SEND of the path MTU, 4 rounds of 64: those delivered are whole, exact "
		 "and delivered once", unreliable, &ud, limit, npat, pat);
}

/* The cases once, or with STAG_LOSSY_UNTIL again and again until that file exists. */
void lossy_run(int limit, int npat, char **pat)
{
	const char *until = getenv("STAG_LOSSY_UNTIL");
	static char suite[96];
	const char *base = t_suite;
	int round;

	for (round = 1;; round++) {
		if (round > 1) {
			snprintf(suite, sizeof(suite), "%s, round %d", base, round);
			t_suite = suite;
		}
		lossy_cases(limit, npat, pat);
		if (!until || !access(until, F_OK))
			break;
	}
	t_suite = base;
}
