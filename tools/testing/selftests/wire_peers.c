// SPDX-License-Identifier: GPL-2.0
/*
 * wire_test --peers: a peer that fails in the middle of a transfer, and
 * links that change under a live connection (peers.sh runs it, in a
 * two-guest run, against a stag device only: it changes this guest's
 * netdev). What each must end in, as Documentation/stag.rst says:
 *
 *  - the peer's process killed: the WQE in flight completes with
 *    RETRY_EXC_ERR once the retry budget, (retry_cnt + 1) local ACK
 *    timeouts, is spent, and not before; those behind it are flushed; the
 *    peer's device gets back every object and pinned page the process had;
 *  - the netdev down, then up again, within the retry budget: the transfer
 *    completes byte for byte, and the port said PORT_ERR, then ACTIVE;
 *  - the netdev's MTU shrunk below a live RC QP's path MTU: its packets no
 *    longer fit (the stack refuses them, DF set: drop_tx) and the QP ends
 *    in RETRY_EXC_ERR, as a hardware NIC's would; a QP made afterwards, at
 *    the MTU the port now has, works;
 *  - the peer's ACKs blackholed while 64 MiB of WRITEs wait: the SQ pushes
 *    back (ENOMEM), the requester holds its window and no more, and the
 *    kernel's memory stays bounded (peers.sh runs this one in a memory
 *    cgroup).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

#define CHUNK		(256 << 10)	/* bytes per WRITE */
#define INFLIGHT	16
#define SEED_PEERS	0x5eed2000ull

/* 4.096 us * 2^@timeout, in ms. */
static double timeout_ms(unsigned int timeout)
{
	return (1u << timeout) * 4096 / 1e6;
}

/* This guest's netdev under the connection's GID, and its MTU. */
static bool netdev_of(char *name, size_t len, long *mtu)
{
	char path[256];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/%d",
		 dev_name, gid_index);
	f = fopen(path, "r");
	ok = f && fgets(name, len, f);
	if (f)
		fclose(f);
	if (!ok) {
		t_fail("no netdev in %s", path);
		return false;
	}
	name[strcspn(name, "\n")] = 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", name);
	f = fopen(path, "r");
	ok = f && fscanf(f, "%ld", mtu) == 1;
	if (f)
		fclose(f);
	t_check(ok, "no MTU in %s", path);
	return ok;
}

static bool sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fflush(stdout);
	ret = system(cmd);
	t_check(ret == 0, "\"%s\": status %d", cmd, ret);
	return ret == 0;
}

/* The server's RES: its device's QPs, CQs, MRs, and the host's pinned pages. */
struct res {
	long qps, cqs, mrs, pins;
};

static bool rres(struct res *r)
{
	char ans[WIRE_LINE];

	if (!rpc(ans, sizeof(ans), "RES"))
		return false;
	if (sscanf(ans, "%ld %ld %ld %ld", &r->qps, &r->cqs, &r->mrs, &r->pins) != 4) {
		t_fail("server: RES: %s", ans);
		return false;
	}
	return true;
}

/*
 * Posts WRITEs of @lb's chunks to @rb, INFLIGHT at a time, round and round,
 * up to @max of them, until a completion is not a success. @at(chunks done)
 * is called after each success: it may break the link, and stops the
 * posting by returning false (those posted still complete). Returns the
 * failed completion in @bad (true), or false when all posted succeeded.
 */
static bool writes(struct end *e, struct buf *lb, const struct rbuf *rb, unsigned int max,
		   bool (*at)(unsigned int done, void *arg), void *arg, struct ibv_wc *bad,
		   unsigned int *posted_out, unsigned int *done_out)
{
	unsigned int chunks = lb->len / CHUNK, posted = 0, done = 0;
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct ibv_wc wc;
	bool failed = false;
	char when[16];
	time_t since;

	*posted_out = 0;
	*done_out = 0;
	while (done < max && !failed) {
		while (posted < max && posted - done < INFLIGHT) {
			s = sge_of(lb, posted % chunks * CHUNK, CHUNK);
			wr = wr_remote(posted, IBV_WR_RDMA_WRITE, &s,
				       rb->addr + posted % chunks * CHUNK, rb->rkey);
			if (post(e, &wr))
				return false;
			posted++;
		}
		since = time(NULL);
		if (poll_n(e->scq, &wc, 1, 60000) != 1) {
			/* The wall clock, as peers.sh stamps its QP samples. */
			strftime(when, sizeof(when), "%T", localtime(&since));
			t_fail("WRITE %u of %u: no completion in 60 s (waiting since %s)", done,
			       posted, when);
			/* What the requester waits for, twice: what moves and what does not. */
			sh("for i in 1 2; do rdma -dd resource show qp lqpn %u; sleep 2; done | "
			   "sed 's/^/# /'", e->qp->qp_num);
			break;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			*bad = wc;
			failed = true;
			break;
		}
		if (!expect_wc_is(&wc, done, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "client"))
			break;
		done++;
		if (at && !at(done, arg))
			max = posted;
	}
	*posted_out = posted;
	*done_out = done;
	return failed;
}

/* After the failed WR @first: each one posted behind it flushed, in order. */
static void rest_flushed(struct end *e, unsigned int first, unsigned int posted)
{
	struct ibv_wc wc;
	unsigned int i;

	for (i = first + 1; i < posted; i++) {
		if (poll_n(e->scq, &wc, 1, WAIT_MS) != 1) {
			t_fail("WR %u of %u behind the failed one: no completion", i, posted);
			return;
		}
		if (!expect_wc_is(&wc, i, IBV_WC_WR_FLUSH_ERR, -1, "behind the failed WR"))
			return;
	}
	expect_none(e->scq, 0, "the send CQ once all are flushed");
	expect_state(e->qp, IBV_QPS_ERR, "the client's QP");
}

/* Fails the case unless @what took between @lo and @hi ms. */
static void expect_took(const char *what, long ms, double lo, double hi)
{
	printf("# %s after %ld ms (retry budget %.0f ms)\n", what, ms, lo);
	/* The last ACK may have come a little before the death. */
	t_check(ms >= lo * 0.75, "%s after %ld ms: before the retry budget, %.0f ms, was spent",
		what, ms, lo);
	t_check(ms <= hi, "%s after %ld ms: more than %.0f ms", what, ms, hi);
}

/* ---- the peer's process dies ---- */

#define KILL_TIMEOUT	14	/* 67 ms */
#define KILL_RETRY	3

static bool die_after(unsigned int done, void *arg)
{
	long *died = arg;

	/* Some WRITEs through first: the connection works, then its peer goes. */
	if (done == INFLIGHT && !*died) {
		if (!rpc(NULL, 0, "DIE 50"))
			return false;
		*died = now_ms() + 50;
	}
	return true;
}

static void peer_killed(const void *arg)
{
	double budget = (KILL_RETRY + 1) * timeout_ms(KILL_TIMEOUT);
	long died = 0, qps0 = res_count(dev_name, "qp"), t, ms;
	struct buf *lb = buf_new(4 * CHUNK, LW);
	long timeouts = hw_counter("ack_timeouts");
	unsigned int posted, done;
	struct conn mine, theirs;
	struct res before, after;
	struct ibv_wc bad;
	struct rbuf rb;
	struct end *e;
	struct rqp r;

	(void)arg;
	if (!lb || !rres(&before) || !rbuf_new(&rb, 4 * CHUNK, LW | RW, BLANK) ||
	    !wire_new(IBV_QPT_RC, false, &e, &r, &mine, &theirs))
		return;
	mine.timeout = KILL_TIMEOUT;
	mine.retry_cnt = KILL_RETRY;
	if (!wire_connect(e, &r, &mine, &theirs))
		return;
	xfill(lb->data, 0, lb->len, SEED_PEERS);
	if (!writes(e, lb, &rb, 1u << 30, die_after, &died, &bad, &posted, &done))
		return;
	ms = now_ms() - died;
	if (!expect_wc_is(&bad, done, IBV_WC_RETRY_EXC_ERR, -1, "the WRITE in flight"))
		return;
	/*
	 * The DIE goes out once INFLIGHT WRITEs have completed: those prove
	 * the connection worked. Whether more land in the 50 ms before the
	 * death depends on how fast the guests run, not on stag.
	 */
	t_check(done >= INFLIGHT, "only %u WRITEs completed before the error", done);
	expect_took("RETRY_EXC_ERR", ms, budget, budget * 3 + 2000);
	t_check(hw_counter("ack_timeouts") - timeouts >= KILL_RETRY + 1,
		"%ld ACK timeouts counted, expected retry_cnt + 1 = %d at least",
		hw_counter("ack_timeouts") - timeouts, KILL_RETRY + 1);
	rest_flushed(e, done, posted);

	/* This side: the QP destroyed, the device holds what it held before. */
	if (!ibv_destroy_qp(e->qp))
		untrack(e->qp);
	t_check(res_count(dev_name, "qp") == qps0, "%ld QPs after destroy, %ld before",
		res_count(dev_name, "qp"), qps0);

	/* That side: a new connection's process finds everything given back. */
	server_close();
	if (!server_open() || !hello("after the kill"))
		return;
	for (t = now_ms(); now_ms() - t < 10000; usleep(100000)) {
		if (!rres(&after))
			return;
		if (!memcmp(&after, &before, sizeof(after)))
			break;
	}
	t_check(!memcmp(&after, &before, sizeof(after)),
		"server's device after the kill: QPs %ld CQs %ld MRs %ld pinned pages %ld; "
		"before: %ld %ld %ld %ld", after.qps, after.cqs, after.mrs, after.pins,
		before.qps, before.cqs, before.mrs, before.pins);
	printf("# server's device after the kill: QPs %ld CQs %ld MRs %ld, pinned pages %ld\n",
	       after.qps, after.cqs, after.mrs, after.pins);
}

/* ---- the link goes down and comes back ---- */

#define BOUNCE_TIMEOUT	16	/* 268 ms */
#define BOUNCE_RETRY	7
#define BOUNCE_DOWN_MS	300

struct bounce {
	const char *ndev;
	const char *marker;	/* exists once the link is up again */
	unsigned int at;	/* WRITEs done when it went down */
	unsigned int after;	/* and when it was seen up again */
};

/*
 * Down and up again in the background, while WRITEs stay in flight; then
 * 16 more WRITEs after it is up, and the posting stops.
 */
static bool bounce_at(unsigned int done, void *arg)
{
	struct bounce *b = arg;

	if (!b->at && done == INFLIGHT / 2) {
		b->at = done;
		unlink(b->marker);
		return sh("(ip link set dev %s down && sleep %.1f && ip link set dev %s up; "
			  "touch %s) >/dev/null 2>&1 &", b->ndev, BOUNCE_DOWN_MS / 1000.0, b->ndev,
			  b->marker);
	}
	if (b->at && !b->after && !access(b->marker, F_OK))
		b->after = done;
	return !b->after || done < b->after + INFLIGHT;
}

static void link_bounce(const void *arg)
{
	unsigned int chunks = 32, posted, done;
	long retx = hw_counter("retransmitted_pkts"), mtu0;
	struct bounce b = { .marker = "/tmp/wire_peers.bounced" };
	struct conn mine, theirs;
	struct buf *lb = buf_new(chunks * CHUNK, LW);
	struct ibv_wc bad;
	char ndev[64];
	struct rbuf rb;
	struct end *e;
	struct rqp r;

	(void)arg;
	if (!lb || !netdev_of(ndev, sizeof(ndev), &mtu0) ||
	    !rbuf_new(&rb, chunks * CHUNK, LW | RW, BLANK) ||
	    !wire_new(IBV_QPT_RC, false, &e, &r, &mine, &theirs))
		return;
	b.ndev = ndev;
	mine.timeout = BOUNCE_TIMEOUT;
	mine.retry_cnt = BOUNCE_RETRY;
	theirs.timeout = BOUNCE_TIMEOUT;
	theirs.retry_cnt = BOUNCE_RETRY;
	if (!wire_connect(e, &r, &mine, &theirs))
		return;
	xfill(lb->data, 0, lb->len, SEED_PEERS + 1);
	if (writes(e, lb, &rb, 1u << 30, bounce_at, &b, &bad, &posted, &done)) {
		t_fail("WRITE %u: %s across the link's outage", done,
		       ibv_wc_status_str(bad.status));
		return;
	}
	t_check(b.after, "the link did not come back");
	printf("# %u WRITEs of %d KiB: down after %u, up again after %u\n", done, CHUNK >> 10,
	       b.at, b.after);
	t_check(async_event(IBV_EVENT_PORT_ERR, NULL, WAIT_MS), "no PORT_ERR event");
	t_check(async_event(IBV_EVENT_PORT_ACTIVE, NULL, WAIT_MS), "no PORT_ACTIVE event");
	t_check(hw_counter("retransmitted_pkts") > retx, "nothing retransmitted");
	rbuf_xexpect(&rb, 0, rb.len, SEED_PEERS + 1, "server's buffer");
	expect_state(e->qp, IBV_QPS_RTS, "the client's QP");
	rexpect_state(&r, IBV_QPS_RTS, "the server's QP");
}

/* ---- the MTU shrinks under a live connection ---- */

#define MTU_TIMEOUT	14	/* 67 ms */
#define MTU_RETRY	3

struct shrink {
	const char *ndev;
	long mtu;
	long when;
};

static bool shrink_at(unsigned int done, void *arg)
{
	struct shrink *m = arg;

	if (done != INFLIGHT || m->when)
		return true;
	m->when = now_ms();
	return sh("ip link set dev %s mtu %ld", m->ndev, m->mtu);
}

static void mtu_shrink(const void *arg)
{
	double budget = (MTU_RETRY + 1) * timeout_ms(MTU_TIMEOUT);
	long drops = hw_counter("drop_tx"), mtu0, ms;
	struct buf *lb = buf_new(4 * CHUNK, LW);
	unsigned int posted, done;
	struct conn mine, theirs;
	struct shrink m = {};
	struct ibv_wc bad;
	struct end *e2;
	char ndev[64];
	struct rbuf rb;
	struct end *e;
	struct rqp r, r2;
	bool failed;

	(void)arg;
	if (!lb || !netdev_of(ndev, sizeof(ndev), &mtu0) ||
	    !rbuf_new(&rb, 4 * CHUNK, LW | RW, BLANK) ||
	    !wire_new(IBV_QPT_RC, false, &e, &r, &mine, &theirs))
		return;
	/* IP, UDP and BTH take 40 bytes: a full packet of the path MTU no longer fits. */
	m.ndev = ndev;
	m.mtu = mtu + 40 - 1;
	mine.timeout = MTU_TIMEOUT;
	mine.retry_cnt = MTU_RETRY;
	if (!wire_connect(e, &r, &mine, &theirs))
		return;
	xfill(lb->data, 0, lb->len, SEED_PEERS + 2);
	failed = writes(e, lb, &rb, 1u << 30, shrink_at, &m, &bad, &posted, &done);
	ms = now_ms() - m.when;
	/* Whatever happened, the link gets its MTU back. */
	sh("ip link set dev %s mtu %ld", ndev, mtu0);
	if (!failed || !m.when)
		return;
	printf("# netdev %s: MTU %ld -> %ld under a QP of path MTU %zu\n", ndev, mtu0, m.mtu, mtu);
	if (!expect_wc_is(&bad, done, IBV_WC_RETRY_EXC_ERR, -1, "the WRITE in flight"))
		return;
	expect_took("RETRY_EXC_ERR", ms, budget, budget * 3 + 2000);
	t_check(hw_counter("drop_tx") > drops, "drop_tx did not grow");
	rest_flushed(e, done, posted);
	rexpect_state(&r, IBV_QPS_RTS, "the server's QP (it heard nothing wrong)");

	/* A new pair, at the MTU the port has again, carries a WRITE. */
	if (!wire_pair(IBV_QPT_RC, false, &e2, &r2))
		return;
	failed = writes(e2, lb, &rb, 4, NULL, NULL, &bad, &posted, &done);
	t_check(!failed && done == 4, "a new pair after the MTU came back: %u of 4 WRITEs, %s",
		done, failed ? ibv_wc_status_str(bad.status) : "no error");
	rbuf_xexpect(&rb, 0, rb.len, SEED_PEERS + 2, "server's buffer");
}

/* ---- the peer's ACKs blackholed: the window holds, the SQ pushes back ---- */

#define HOLE_TIMEOUT	18	/* 1.07 s: 8 of them outlast the hole */
#define HOLE_RETRY	7
#define HOLE_MS		4000
#define HOLE_CHUNK	(1024 * 1024)
#define HOLE_GROWTH_KB	(16 << 10)	/* 64 MiB posted: far less may be held */

static long meminfo_kb(const char *field)
{
	return file_field("/proc/meminfo", field);
}

/*
 * Every RoCE packet the client would receive is dropped at its netdev's
 * ingress (tc), so its WRITEs are never acknowledged. Posting goes on until
 * the SQ is full: ibv_post_send says ENOMEM, the application's back-pressure.
 * For HOLE_MS the requester retransmits, but holds at most its window of
 * packets: the kernel's memory grows by far less than the 64 MiB posted,
 * and the packets sent stay within a few windows. When ACKs flow again,
 * every WRITE completes and every byte is in place.
 */
static void acks_blackholed(const void *arg)
{
	long avail0, slab0, sent0, grew, slab, sent;
	struct buf *lb = buf_new(HOLE_CHUNK, LW);
	struct ibv_send_wr wr, *badwr;
	unsigned int posted = 0, i;
	struct conn mine, theirs;
	struct ibv_wc wc;
	struct ibv_sge s;
	struct rbuf rb;
	struct end *e;
	struct rqp r;
	char ndev[64];
	long mtu0;
	int ret;

	(void)arg;
	if (!lb || !netdev_of(ndev, sizeof(ndev), &mtu0) ||
	    !rbuf_new(&rb, HOLE_CHUNK, LW | RW, BLANK) ||
	    !wire_new(IBV_QPT_RC, false, &e, &r, &mine, &theirs))
		return;
	mine.timeout = HOLE_TIMEOUT;
	mine.retry_cnt = HOLE_RETRY;
	if (!wire_connect(e, &r, &mine, &theirs))
		return;
	xfill(lb->data, 0, lb->len, SEED_PEERS + 4);
	s = sge_of(lb, 0, HOLE_CHUNK);
	if (!sh("tc qdisc add dev %s clsact && tc filter add dev %s ingress protocol ip u32 "
		"match ip protocol 17 0xff match ip dport 4791 0xffff action drop", ndev, ndev))
		goto out;
	avail0 = meminfo_kb("MemAvailable");
	slab0 = meminfo_kb("Slab");
	sent0 = hw_counter("sent_pkts");
	do {
		wr = wr_remote(posted, IBV_WR_RDMA_WRITE, &s, rb.addr, rb.rkey);
		ret = ibv_post_send(e->qp, &wr, &badwr);
		posted += !ret;
	} while (!ret && posted < 100000);
	t_check(ret == ENOMEM, "ibv_post_send with the SQ full: %s, expected ENOMEM",
		strerror(ret));
	usleep(HOLE_MS * 1000);
	grew = avail0 - meminfo_kb("MemAvailable");
	slab = meminfo_kb("Slab") - slab0;
	sent = hw_counter("sent_pkts") - sent0;
	printf("# %u WRITEs of 1 MiB posted (%u MiB); in %d ms without ACKs: %ld packets sent, "
	       "MemAvailable -%ld kB, Slab %+ld kB\n", posted, posted, HOLE_MS, sent, grew, slab);
	t_check(grew < HOLE_GROWTH_KB, "MemAvailable fell by %ld kB with ACKs blackholed", grew);
	t_check(slab < HOLE_GROWTH_KB, "Slab grew by %ld kB with ACKs blackholed", slab);
	/* A window per retransmission round, and a few rounds. */
	t_check(sent < 8 * 128 * 2, "%ld packets sent in %d ms without an ACK", sent, HOLE_MS);
	t_check(!poll_n(e->scq, &wc, 1, 0), "a WRITE completed (%s) with no ACK",
		ibv_wc_status_str(wc.status));
out:
	sh("tc qdisc del dev %s clsact", ndev);
	for (i = 0; i < posted; i++) {
		if (poll_n(e->scq, &wc, 1, 30000) != 1) {
			t_fail("WRITE %u of %u: no completion once the ACKs came back", i, posted);
			return;
		}
		if (!expect_wc_is(&wc, i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "once ACKs flow"))
			return;
	}
	rbuf_xexpect(&rb, 0, rb.len, SEED_PEERS + 4, "server's buffer");
	expect_state(e->qp, IBV_QPS_RTS, "the client's QP");
}

/* ---- a victim for peers.sh: WRITEs until the peer's device is gone ---- */

#define VICTIM_MS	120000

static bool until_deadline(unsigned int done, void *arg)
{
	const long *t0 = arg;

	/* peers.sh waits for this line before it unloads a module. */
	if (done == INFLIGHT)
		printf("# flowing\n");
	return now_ms() - *t0 < VICTIM_MS;
}

static void until_gone(const void *arg)
{
	struct buf *lb = buf_new(4 * CHUNK, LW);
	unsigned int posted, done;
	long t0 = now_ms();
	struct ibv_wc bad;
	struct rbuf rb;
	struct end *e;
	struct rqp r;

	(void)arg;
	if (!lb || !rbuf_new(&rb, 4 * CHUNK, LW | RW, BLANK) ||
	    !wire_pair(IBV_QPT_RC, false, &e, &r))
		return;
	xfill(lb->data, 0, lb->len, SEED_PEERS + 3);
	if (!writes(e, lb, &rb, 1u << 30, until_deadline, &t0, &bad, &posted, &done)) {
		t_fail("%u WRITEs in %d s and the peer never went", done, VICTIM_MS / 1000);
		return;
	}
	printf("# %u WRITEs done, then %s\n", done, ibv_wc_status_str(bad.status));
	if (expect_wc_is(&bad, done, IBV_WC_RETRY_EXC_ERR, -1, "the WRITE in flight"))
		rest_flushed(e, done, posted);
}

void peers_run(int limit, int npat, char **pat)
{
	wire_run("RC WRITEs in flight when the server's process is SIGKILLed: RETRY_EXC_ERR "
		 "after the retry budget, the rest flushed, both devices get everything back",
		 peer_killed, NULL, limit, npat, pat);
	wire_run("RC WRITEs while the client's netdev goes down for 300 ms and up: every "
		 "byte lands, PORT_ERR then PORT_ACTIVE, the QPs in RTS", link_bounce, NULL,
		 limit, npat, pat);
	wire_run("RC WRITEs while the client's netdev MTU shrinks below the path MTU: "
		 "RETRY_EXC_ERR after the retry budget, drop_tx; a new pair works once it is back",
		 mtu_shrink, NULL, limit, npat, pat);
	/*
	 * Only when asked for by name: peers.sh runs the first in a memory
	 * cgroup; the second waits for someone to unload a module.
	 */
	if (!npat)
		return;
	wire_run("RC WRITEs with the peer's ACKs blackholed 4 s: ENOMEM once the SQ is full, "
		 "at most a few windows sent, kernel memory bounded, all complete afterwards",
		 acks_blackholed, NULL, limit, npat, pat);
	wire_run("RC WRITEs until the peer's device is gone: RETRY_EXC_ERR, the rest flushed",
		 until_gone, NULL, limit, npat, pat);
}
