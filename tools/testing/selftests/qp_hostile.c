// SPDX-License-Identifier: GPL-2.0
/*
 * qp_test's hostile process: it writes send queue slots itself (struct
 * stag_send_wqe, through stagdv_qp_rings() and stagdv_qp_doorbell())
 * instead of letting the provider do it, and names the lkey of another
 * process's region. The kernel must complete each malformed WQE with an
 * error, never touch the other process's memory, and stay clean (the
 * harness fails the run on any kernel report).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/stag-abi.h>

#include "qp.h"
#include "raw.h"

/* The kernel's IB_WR_REG_MR, which userspace must never be able to post. */
#define KERNEL_IB_WR_REG_MR	0x20

static struct stag_send_wqe wqe_send(uint64_t wr_id, uint8_t num_sge)
{
	return (struct stag_send_wqe){ .wr_id = wr_id, .opcode = IB_UVERBS_WR_SEND,
				       .num_sge = num_sge, .send_flags = IBV_SEND_SIGNALED };
}

/* ---- the cases ---- */

/* A well-formed WQE written by hand: proves the ring is used right. */
static void raw_good(void)
{
	struct buf *src = buf_new(100, LW), *dst = buf_new(100, LW);
	struct stag_send_wqe w = wqe_send(1, 1);
	struct ibv_sge s, r;
	struct end *a, *b;
	struct raw raw;
	int ret;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b) || !raw_open(a, &raw))
		return;
	fill(src->data, 100, 70);
	s = sge_of(src, 0, 100);
	r = sge_of(dst, 0, 100);
	if (post_recv(b, 10, &r, 1))
		return;
	ret = raw_post(&raw, &w, &s, sizeof(s));
	t_check(!ret, "stagdv_qp_doorbell: %s", strerror(ret));
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "a SEND written by hand");
	expect_wc(b->rcq, 10, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "receiver");
	expect_data(dst, 70, "received");
}

/* @w, with one good SGE after it, must fail with @status and move the QP to ERR. */
static void raw_bad(struct stag_send_wqe w, enum ibv_wc_status status)
{
	struct buf *src = buf_new(4096, LW | RR), *dst = buf_new(4096, LW | RW);
	struct ibv_sge s, r;
	struct end *a, *b;
	struct raw raw;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b) || !raw_open(a, &raw))
		return;
	fill(src->data, 4096, 71);
	s = sge_of(src, 0, 100);
	r = sge_of(dst, 0, 4096);
	if (post_recv(b, 10, &r, 1))
		return;
	w.wr.rdma.remote_addr = (uintptr_t)dst->data;
	w.wr.rdma.rkey = dst->mr->rkey;
	raw_post(&raw, &w, &s, sizeof(s));
	expect_wc(a->scq, w.wr_id, status, -1, NULL, "requester");
	expect_state(a->qp, IBV_QPS_ERR, "requester");
	expect_none(b->rcq, QUIET_MS, "receiver");
	expect_blank(dst, "receive buffer");
}

static void raw_opcode_ff(void)
{
	struct stag_send_wqe w = wqe_send(1, 1);

	w.opcode = 0xff;
	raw_bad(w, IBV_WC_LOC_QP_OP_ERR);
}

static void raw_opcode_reg_mr(void)
{
	struct stag_send_wqe w = wqe_send(1, 1);

	w.opcode = KERNEL_IB_WR_REG_MR;
	raw_bad(w, IBV_WC_LOC_QP_OP_ERR);
}

/* An atomic write's 8 bytes are in its header: one naming a buffer is refused. */
static void raw_atomic_write_sge(void)
{
	struct stag_send_wqe w = wqe_send(1, 1);

	w.opcode = IBV_WR_ATOMIC_WRITE;
	raw_bad(w, IBV_WC_LOC_QP_OP_ERR);
}

static void raw_atomic_write_inline(void)
{
	struct stag_send_wqe w = wqe_send(1, 0);

	w.opcode = IBV_WR_ATOMIC_WRITE;
	w.send_flags |= IBV_SEND_INLINE;
	w.inline_len = 8;
	raw_bad(w, IBV_WC_LOC_QP_OP_ERR);
}

static void raw_num_sge(void)
{
	raw_bad(wqe_send(1, 255), IBV_WC_LOC_QP_OP_ERR);
}

static void raw_inline_len(void)
{
	struct stag_send_wqe w = wqe_send(1, 0);

	w.send_flags |= IBV_SEND_INLINE;
	w.inline_len = 0xffffffff;
	raw_bad(w, IBV_WC_LOC_QP_OP_ERR);
}

/* ---- another process's region ---- */

struct other {
	pid_t pid;
	int to, from;		/* pipes to and from it */
	uint64_t addr;
	uint32_t lkey;
};

#define OTHER_LEN	4096

/*
 * The other process: registers a region of its own (writable, so that
 * only the PD stands between it and a foreign QP), reports its address
 * and lkey, and when asked checks that not one byte of it changed.
 */
static void other_main(int in, int out)
{
	struct ibv_context *c = open_dev(dev_name);
	struct ibv_pd *p = c ? ibv_alloc_pd(c) : NULL;
	char *buf = map(OTHER_LEN, PROT_READ | PROT_WRITE), want[OTHER_LEN];
	struct ibv_mr *mr = p && buf ? ibv_reg_mr(p, buf, OTHER_LEN, LW | RW | RR) : NULL;
	uint64_t msg[2] = { 0, 0 };
	char ok;

	if (mr) {
		fill(buf, OTHER_LEN, 72);
		msg[0] = (uintptr_t)buf;
		msg[1] = mr->lkey;
	}
	if (write(out, msg, sizeof(msg)) != sizeof(msg) || !mr || read_byte(in, 60000) < 0)
		_exit(1);
	fill(want, OTHER_LEN, 72);
	ok = memcmp(buf, want, OTHER_LEN) ? 'x' : 'k';
	if (write(out, &ok, 1) != 1)
		_exit(1);
	_exit(0);
}

static bool other_start(struct other *o)
{
	int to[2], from[2];
	uint64_t msg[2];

	if (pipe(to) || pipe(from)) {
		t_fail("pipe: %s", strerror(errno));
		return false;
	}
	fflush(stdout);
	o->pid = fork();
	if (!o->pid) {
		close(to[1]);
		close(from[0]);
		other_main(to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	o->to = to[1];
	o->from = from[0];
	if (o->pid < 0 || read(o->from, msg, sizeof(msg)) != sizeof(msg) || !msg[1]) {
		t_fail("the other process did not register its region");
		return false;
	}
	o->addr = msg[0];
	o->lkey = msg[1];
	return true;
}

/* Asks the other process whether its region is untouched, and lets it exit. */
static void other_check(struct other *o)
{
	int status, c;

	if (write(o->to, "?", 1) != 1)
		t_fail("the other process is gone");
	c = read_byte(o->from, WAIT_MS);
	t_check(c == 'k', "the other process's region %s",
		c == 'x' ? "CHANGED" : "was not checked");
	close(o->to);
	close(o->from);
	if (waitpid(o->pid, &status, 0) == o->pid)
		t_check(WIFEXITED(status) && !WEXITSTATUS(status), "the other process failed");
}

/* An RDMA READ whose local SGE is the other process's region: must not land there. */
static void foreign_read(bool raw)
{
	struct buf *src = buf_new(OTHER_LEN, LW | RR);
	struct ibv_send_wr wr;
	struct stag_send_wqe w = wqe_send(1, 1);
	struct other o = { .pid = -1 };
	struct ibv_sge s;
	struct end *a, *b;
	struct raw r;

	if (!src || !pair_new(IBV_QPT_RC, &a, &b) || (raw && !raw_open(a, &r)) ||
	    !other_start(&o))
		goto out;
	fill(src->data, OTHER_LEN, 73);
	s = (struct ibv_sge){ .addr = o.addr, .length = OTHER_LEN, .lkey = o.lkey };
	if (raw) {
		w.opcode = IB_UVERBS_WR_RDMA_READ;
		w.wr.rdma.remote_addr = (uintptr_t)src->data;
		w.wr.rdma.rkey = src->mr->rkey;
		raw_post(&r, &w, &s, sizeof(s));
	} else {
		wr = wr_rdma(1, IBV_WR_RDMA_READ, &s, 1, src, 0);
		post(a, &wr);
	}
	expect_wc(a->scq, 1, IBV_WC_LOC_PROT_ERR, -1, NULL, "READ into a foreign region");
	expect_state(a->qp, IBV_QPS_ERR, "requester");
out:
	if (o.pid > 0)
		other_check(&o);
}

static void raw_foreign_read(void)
{
	foreign_read(true);
}

static void foreign_read_posted(void)
{
	foreign_read(false);
}

/* A SEND gathering from the other process's region: nothing of it may leave. */
static void foreign_send_posted(void)
{
	struct buf *dst = buf_new(OTHER_LEN, LW);
	struct other o = { .pid = -1 };
	struct ibv_send_wr wr;
	struct ibv_sge s, r;
	struct end *a, *b;

	if (!dst || !pair_new(IBV_QPT_RC, &a, &b) || !other_start(&o))
		goto out;
	r = sge_of(dst, 0, OTHER_LEN);
	s = (struct ibv_sge){ .addr = o.addr, .length = OTHER_LEN, .lkey = o.lkey };
	wr = wr_send(1, &s, 1);
	if (post_recv(b, 10, &r, 1) || post(a, &wr))
		goto out;
	expect_wc(a->scq, 1, IBV_WC_LOC_PROT_ERR, -1, NULL, "SEND from a foreign region");
	expect_none(b->rcq, QUIET_MS, "receiver");
	expect_blank(dst, "receive buffer");
out:
	if (o.pid > 0)
		other_check(&o);
}

/* A new pair still carries a SEND: the device survived what came before. */
static void expect_device_works(void)
{
	struct buf *src = buf_new(64, LW), *dst = buf_new(64, LW);
	struct ibv_send_wr wr;
	struct ibv_sge s, r;
	struct end *a, *b;

	if (!src || !dst || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	fill(src->data, 64, 74);
	s = sge_of(src, 0, 64);
	r = sge_of(dst, 0, 64);
	wr = wr_send(1, &s, 1);
	if (post_recv(b, 10, &r, 1) || post(a, &wr))
		return;
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "a new pair afterwards");
	expect_wc(b->rcq, 10, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "a new pair afterwards");
	expect_data(dst, 74, "a new pair afterwards");
}

static void raw_prod_ahead(void)
{
	struct end *a, *b;
	struct raw r;
	uint32_t cons;
	bool fatal = false;
	int i, ret;

	if (!pair_new(IBV_QPT_RC, &a, &b) || !raw_open(a, &r))
		return;
	cons = __atomic_load_n(&r.ctl->cons, __ATOMIC_ACQUIRE);
	ret = raw_publish(&r, cons + 1000000);
	printf("# stagdv_qp_doorbell with prod = cons + 1000000: %s\n", strerror(ret));
	for (i = 0; i < WAIT_MS / 100 && !fatal; i++) {
		struct ibv_qp_init_attr init;
		struct ibv_qp_attr at;

		fatal = async_event(IBV_EVENT_QP_FATAL, a->qp, 100) ||
			(!ibv_query_qp(a->qp, &at, IBV_QP_STATE, &init) &&
			 at.qp_state == IBV_QPS_ERR);
	}
	t_check(fatal, "the QP is neither in ERR nor reported IBV_EVENT_QP_FATAL");
	expect_device_works();
}

/*
 * 32 slots of random bytes (a fixed seed) published at once. The responder
 * has receives and the requester no RNR retries, so that whatever the
 * junk happens to mean, nothing can wait forever: some WQE fails, the QP
 * goes to ERR, and everything after it is flushed.
 */
static void raw_fuzz(void)
{
	struct buf *dst = buf_new(4096, LW);
	struct stag_send_wqe w;
	uint8_t junk[512];
	struct ibv_wc wc[64];
	struct end *a, *b;
	struct conn ca, cb;
	struct ibv_sge r;
	struct raw raw;
	unsigned int i, j, seed = 0x5eed, errors = 0;
	int n;

	if (!dst || !pair_ends(IBV_QPT_RC, &a, &b, &ca, &cb))
		return;
	ca.rnr_retry = 0;
	ca.retry_cnt = 0;
	if (!pair_connect(a, &ca, b, &cb) || !raw_open(a, &raw))
		return;
	r = sge_of(dst, 0, 4096);
	for (i = 0; i < 32; i++)
		if (post_recv(b, 100 + i, &r, 1))
			return;
	for (i = 0; i < 32; i++) {
		for (j = 0; j < sizeof(junk); j++)
			junk[j] = rand_r(&seed);
		memcpy(&w, junk, sizeof(w));
		w.wr_id = 1000 + i;
		raw_write(&raw, &w, junk + sizeof(w), sizeof(junk) - sizeof(w));
	}
	raw_publish(&raw, raw.prod);
	n = poll_n(a->scq, wc, 64, WAIT_MS);
	for (i = 0; i < (unsigned int)n; i++)
		errors += wc[i].status != IBV_WC_SUCCESS;
	printf("# 32 junk WQEs: %d completions, %u errors, the first %s\n", n, errors,
	       n ? ibv_wc_status_str(wc[0].status) : "-");
	t_check(errors, "no junk WQE failed");
	expect_state(a->qp, IBV_QPS_ERR, "QP fed junk");
	expect_device_works();
}

/* ---- a stranger connects to a QP that has a peer ---- */

#define STRANGER_LEN	64

/* The stranger's attacks, each from a fresh QP connected to @victim_qpn. */
enum attack { A_SEND, A_WRITE_RKEY0, A_SEND_WITH_INV, A_NUM };

/*
 * A process of its own: its own context and PD, an RC QP connected to the
 * victim's QP number at the victim's GID. Exits 0 when every attack went
 * unanswered (IBV_WC_RETRY_EXC_ERR).
 */
static void stranger_main(uint32_t victim_qpn, uint32_t rkey)
{
	struct end victim = {};
	struct ibv_qp fake = { .qp_num = victim_qpn };
	struct buf *src;
	int a, bad = 0;

	victim.qp = &fake;
	if (!case_setup())
		_exit(2);
	/*
	 * From another address of this host, where there is one: on the wire
	 * a QP knows its peer by address, and one of the same host looks the
	 * same (RoCE cannot tell them apart; see Documentation/stag.rst).
	 */
	if (other_gid_index() >= 0)
		gid_index = other_gid_index();
	src = buf_new(STRANGER_LEN, LW);
	if (!src)
		_exit(2);
	fill(src->data, STRANGER_LEN, 99);
	for (a = 0; a < A_NUM; a++) {
		struct end *x = end_new(IBV_QPT_RC, NULL, false);
		struct conn c = conn_default(&victim);
		struct ibv_sge s = sge_of(src, 0, STRANGER_LEN);
		struct ibv_send_wr wr = wr_send(a, &s, 1);

		c.retry_cnt = 0;
		c.timeout = 8;
		if (!x || !connect_end(x, &c))
			_exit(2);
		if (a == A_WRITE_RKEY0) {
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.wr.rdma.remote_addr = 0x1000;
			wr.wr.rdma.rkey = 0;
		} else if (a == A_SEND_WITH_INV) {
			wr.opcode = IBV_WR_SEND_WITH_INV;
			wr.invalidate_rkey = rkey;
		}
		if (post(x, &wr) ||
		    !expect_wc(x->scq, a, IBV_WC_RETRY_EXC_ERR, -1, NULL, "the stranger's WQE"))
			bad++;
	}
	_exit(bad ? 1 : 0);
}

/*
 * Another process connects its own QP to a victim QP that has a real peer,
 * and sends a SEND, an RDMA WRITE with rkey 0, and a SEND_WITH_INV naming
 * the victim's type 2 window. None is heard: each is dropped and counted
 * in drop_not_peer, the victim stays in RTS with its receive posted and
 * its window bound, and its real peer's messages still land.
 */
static void stranger_dropped(void)
{
	struct buf *dst = buf_new(STRANGER_LEN, LW);
	struct buf *win = buf_new(STRANGER_LEN, LW | RW | IBV_ACCESS_MW_BIND);
	struct ibv_send_wr bind, wr;
	struct ibv_sge r, s;
	struct end *peer, *victim;
	struct ibv_mw *mw;
	long dropped;
	int status;
	pid_t pid;

	if (!is_stag()) {
		case_skip("drop_not_peer is a stag counter");
		return;
	}
	if (stag_wire() && other_gid_index() < 0) {
		case_skip("on the wire a stranger needs another address of this host");
		return;
	}
	if (!dst || !win || !pair_new(IBV_QPT_RC, &peer, &victim))
		return;
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mw) {
		t_fail("ibv_alloc_mw: %s", strerror(errno));
		return;
	}
	bind = (struct ibv_send_wr){
		.wr_id = 7, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = ibv_inc_rkey(mw->rkey),
			     .bind_info = { .mr = win->mr, .addr = (uintptr_t)win->data,
					    .length = STRANGER_LEN,
					    .mw_access_flags = IBV_ACCESS_REMOTE_WRITE } },
	};
	r = sge_of(dst, 0, STRANGER_LEN);
	if (post(victim, &bind) ||
	    !expect_wc(victim->scq, 7, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL, "bind") ||
	    post_recv(victim, 8, &r, 1))
		goto out;
	dropped = hw_counter("drop_not_peer");

	fflush(stdout);
	pid = fork();
	if (!pid)
		stranger_main(victim->qp->qp_num, bind.bind_mw.rkey);
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		t_fail("the stranger process: %s", strerror(errno));
		goto out;
	}
	t_check(WIFEXITED(status) && !WEXITSTATUS(status),
		"the stranger's WQEs were not all unanswered (status %#x)", status);
	t_check(hw_counter("drop_not_peer") == dropped + A_NUM,
		"drop_not_peer %ld, expected %ld", hw_counter("drop_not_peer"), dropped + A_NUM);
	expect_state(victim->qp, IBV_QPS_RTS, "victim");
	expect_none(victim->rcq, QUIET_MS, "victim's receive CQ");
	expect_blank(dst, "victim's receive buffer");

	/* The real peer: its SEND takes the receive, its WRITE goes through the window. */
	fill(win->data, STRANGER_LEN, 41);
	s = sge_of(win, 0, STRANGER_LEN);
	wr = wr_send(9, &s, 1);
	if (post(peer, &wr))
		goto out;
	expect_wc(victim->rcq, 8, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "the peer's SEND");
	expect_wc(peer->scq, 9, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "the peer's SEND");
	expect_data(dst, 41, "received from the peer");
	wr.wr_id = 10;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)win->data;
	wr.wr.rdma.rkey = bind.bind_mw.rkey;
	if (!post(peer, &wr))
		expect_wc(peer->scq, 10, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL,
			  "the peer's WRITE through the window");
out:
	ibv_dealloc_mw(mw);
}

/* ---- a READ flood that matches a connection exactly ---- */

/*
 * 2500 requests: the responder answers for as long as the injector sends
 * (the guest's CPUs do both), so the case takes time in proportion to
 * them: 5000 took 25-39 s of the debug kernel's run, 2500 take 16 s, and
 * still ask three times what FLOOD_MEM_MAX lets them cost, and overflow
 * the backlog of a guest of two CPUs.
 */
#define FLOOD_REQS	2500
#define FLOOD_LEN	(64 << 10)	/* 64 responses at a path MTU of 1024: 160 MiB in all */
#define FLOOD_BIG	(1024 * 1024)	/* every FLOOD_EVERY-th asks for the whole region */
#define FLOOD_EVERY	1250
#define FLOOD_MIN_READS	64		/* reads answered: 64 times max_dest_rd_atomic (1) */
/*
 * What the flood may cost the guest, in bytes: a seventh of what it asks
 * for, with room for what the debug kernel's KASAN keeps of freed packets
 * (20 MiB of MemAvailable for four times as many packets).
 */
#define FLOOD_MEM_MAX	(48L << 20)

/* A line of /proc/meminfo, in bytes; -1 if there is none. */
static long meminfo_bytes(const char *key)
{
	char line[128];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':' &&
		    sscanf(line + n + 1, "%ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v < 0 ? -1 : v * 1024;
}

/*
 * The injector run to its end while this process watches the guest's
 * memory: its output into @out, the lowest MemAvailable and the highest
 * Slab seen in *@avail_min and *@slab_max. Exit status, or -1.
 */
static int flood_run(char *const argv[], char *out, size_t olen, long *avail_min,
		     long *slab_max)
{
	int fd, status = -1;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	pid = inject_start(argv, &fd);
	if (pid < 0)
		return -1;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (;;) {
		long a = meminfo_bytes("MemAvailable"), s = meminfo_bytes("Slab");
		pid_t done = waitpid(pid, &status, WNOHANG);

		if (a >= 0 && a < *avail_min)
			*avail_min = a;
		if (s > *slab_max)
			*slab_max = s;
		while (got + 1 < olen && (n = read(fd, out + got, olen - 1 - got)) > 0)
			got += n;
		if (done == pid)
			break;
		usleep(20000);
	}
	out[got] = 0;
	close(fd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * What the IBA cannot refuse: RDMA READ requests that match a connection
 * exactly (the peer's address, the QP, the next PSN, the real R_Key), from
 * a peer that ignores max_dest_rd_atomic (1): FLOOD_REQS of them as fast as
 * bin/inject's raw socket sends them, 64 KiB each and some the whole
 * region, 160 MiB asked for in all. A responder that took every request
 * and built its answer would need that much; stag keeps max_dest_rd_atomic
 * resources and 512 queued requests per QP, answers what it took one read
 * after another, and drops the rest (drop_backlog, then one NAK and
 * drop_psn for the gap), so the guest's memory stays where it was. The
 * responses reach a requester that asked for none, which drops them:
 * nothing completes, nothing of its memory changes. The connection itself
 * is lost, as RoCE defines it: the responder now expects PSNs the requester
 * never sent, so the requester's next WRITE is taken for a duplicate, never
 * lands, and ends in IBV_WC_RETRY_EXC_ERR. Other QPs of the device work.
 */
static void read_flood(void)
{
	struct buf *region = buf_new(FLOOD_BIG, LW | RR | RW), *small = buf_new(64, LW);
	long avail0, avail_min, slab0, slab_max, backlog = 0, sent, udp0 = -1, fates0 = -1;
	unsigned long responses = 0, reads = 0, resyncs = 0;
	char prog[256], target[INET_ADDRSTRLEN], spec[160], big[32], mtus[16], count[16], t[16];
	char *const inj[] = { prog, "-T", t, "-t", target, "-p", target, "-i", "lo", "-m", mtus,
			       "-n", count, "-R", spec, "-B", big, NULL };
	char out[4096], *line;
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct conn ca, cb;
	struct end *a, *b;
	int rc;

	if (!inject_ready(prog, sizeof(prog),
			  "over loopback no packet reaches the responder (stag.loopback=0 does)"))
		return;
	if (!region || !small)
		return;
	fill(region->data, FLOOD_BIG, 61);
	if (!pair_ends(IBV_QPT_RC, &a, &b, &ca, &cb))
		return;
	ca.timeout = 12;	/* 16 ms */
	ca.retry_cnt = 1;
	if (!pair_connect(a, &ca, b, &cb))
		return;

	/* One real READ first: the connection works, and B expects rq_psn + 1. */
	s = sge_of(small, 0, 64);
	wr = wr_rdma(1, IBV_WR_RDMA_READ, &s, 1, region, 0);
	sent = is_stag() ? hw_counter("sent_pkts") : 0;
	if (post(a, &wr) ||
	    !expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, NULL, "a real READ first"))
		return;
	expect_bytes(small->data, region->data, 64, "the real READ");
	/* Without UDP port 4791 (rdma_rxe has it), stag keeps its traffic in this host. */
	if (is_stag() && hw_counter("sent_pkts") == sent) {
		t_fail("stag.loopback=0, yet the READ sent no packet: UDP port 4791 is not stag's");
		return;
	}
	/*
	 * The real READ's buffer is where a requester that took the forged
	 * responses for its own would place them.
	 */
	fill(small->data, 64, 63);

	inet_ntop(AF_INET, gid.raw + 12, target, sizeof(target));
	snprintf(spec, sizeof(spec), "%#x:%#x:%#x:%#x:%#lx:%u", b->qp->qp_num, a->qp->qp_num,
		 (cb.rq_psn + 1) & 0xffffff, region->mr->rkey, (unsigned long)region->data,
		 FLOOD_LEN);
	snprintf(big, sizeof(big), "%u:%u", FLOOD_BIG, FLOOD_EVERY);
	snprintf(mtus, sizeof(mtus), "%u", 128u << port_attr.active_mtu);
	snprintf(count, sizeof(count), "%u", FLOOD_REQS);
	inject_deadline(t, sizeof(t));
	if (is_stag()) {
		backlog = hw_counter("drop_backlog");
		udp0 = udp_in_datagrams(&fates0);
	}
	avail0 = meminfo_bytes("MemAvailable");
	avail_min = avail0;
	slab0 = meminfo_bytes("Slab");
	slab_max = slab0;
	rc = flood_run(inj, out, sizeof(out), &avail_min, &slab_max);
	for (line = out; (line = strstr(line, "# inject: ")); line++)
		printf("%.*s\n", (int)strcspn(line, "\n"), line);
	line = strstr(out, "flood: ");
	if (line)
		sscanf(line, "flood: %lu responses to QP %*x opening %lu reads, %lu resyncs",
		       &responses, &reads, &resyncs);
	printf("# %s: %lu responses opening %lu reads, %lu restarts after a NAK; "
	       "MemAvailable -%ld KiB at most, Slab +%ld KiB at most\n", target, responses, reads,
	       resyncs, (avail0 - avail_min) / 1024, (slab_max - slab0) / 1024);
	t_check(rc == 0, "inject %s -R %s: exit status %d", target, spec, rc);
	t_check(reads >= FLOOD_MIN_READS,
		"the responder answered %lu forged reads, not %d or more: no flood was taken",
		reads, FLOOD_MIN_READS);
	t_check(avail0 > 0 && avail0 - avail_min < FLOOD_MEM_MAX,
		"MemAvailable fell by %ld KiB during the flood (at most %ld)",
		(avail0 - avail_min) / 1024, FLOOD_MEM_MAX / 1024);

	/*
	 * With one CPU the injector's sends and the responder's work take
	 * turns on it, and the queue never filled (the 6.1 and 7.2 guests
	 * of make check, 5000 of a flood of 5000 queued): the limit cannot be shown
	 * there. The memory bound above still holds; guests of two CPUs
	 * (the debug kernel's) show the drops.
	 */
	if (is_stag() && sysconf(_SC_NPROCESSORS_ONLN) < 2)
		printf("# one CPU: drop_backlog +%ld, the backlog's limit not reached\n",
		       hw_counter("drop_backlog") - backlog);
	else if (is_stag())
		t_check(hw_counter("drop_backlog") > backlog,
			"drop_backlog did not grow: the responder queued all %d requests",
			FLOOD_REQS);

	/* The responses asked for nothing: dropped, nothing placed, nothing completed. */
	expect_none(a->scq, QUIET_MS, "the requester after the flood");
	expect_none(b->rcq, 0, "the responder after the flood");
	if (is_stag()) {
		long fates, udp = udp_in_datagrams(&fates);

		/* Every datagram for port 4791 taken or dropped, once: none counted twice. */
		t_check(udp0 >= 0 && fates0 >= 0 && udp >= 0 && udp - udp0 == fates - fates0,
			"%ld datagrams delivered to UDP during the flood, %ld taken or dropped "
			"by %s (drop_backlog +%ld)", udp - udp0, fates - fates0, dev_name,
			hw_counter("drop_backlog") - backlog);
	}
	expect_data(small, 63, "the requester's buffer of its last READ");
	expect_data(region, 61, "the region read by the flood");
	expect_state(b->qp, IBV_QPS_RTS, "the responder");

	/*
	 * The connection is lost: the responder takes the requester's PSNs
	 * for old ones. The region takes remote writes, so a WRITE the
	 * responder ran would land and complete.
	 */
	fill(small->data, 64, 62);
	s = sge_of(small, 0, 64);
	wr = wr_rdma(2, IBV_WR_RDMA_WRITE, &s, 1, region, 0);
	if (!post(a, &wr))
		expect_wc(a->scq, 2, IBV_WC_RETRY_EXC_ERR, -1, NULL,
			  "a WRITE after the flood (the responder expects other PSNs)");
	expect_data(region, 61, "the region after that WRITE");
	expect_device_works();
}

const struct qp_case hostile_cases[] = {
	{ "raw WQE: a well-formed SEND written into the ring by hand completes", raw_good },
	{ "raw WQE with opcode 0xff: IBV_WC_LOC_QP_OP_ERR, the QP in ERR", raw_opcode_ff },
	{ "raw WQE with opcode 0x20 (the kernel's IB_WR_REG_MR): IBV_WC_LOC_QP_OP_ERR",
	  raw_opcode_reg_mr },
	{ "raw ATOMIC_WRITE naming an SGE: IBV_WC_LOC_QP_OP_ERR, the QP in ERR",
	  raw_atomic_write_sge },
	{ "raw ATOMIC_WRITE with 8 bytes inline: IBV_WC_LOC_QP_OP_ERR, the QP in ERR",
	  raw_atomic_write_inline },
	{ "raw WQE with num_sge 255: IBV_WC_LOC_QP_OP_ERR", raw_num_sge },
	{ "raw inline WQE with inline_len 0xffffffff: IBV_WC_LOC_QP_OP_ERR", raw_inline_len },
	{ "raw RDMA_READ into another process's region by its lkey: IBV_WC_LOC_PROT_ERR, untouched",
	  raw_foreign_read },
	{ "RDMA_READ into another process's region by its lkey: IBV_WC_LOC_PROT_ERR, untouched",
	  foreign_read_posted },
	{ "SEND from another process's region by its lkey: IBV_WC_LOC_PROT_ERR, nothing sent",
	  foreign_send_posted },
	{ "send ring prod 1000000 ahead of cons: the QP goes to ERR, the device still works",
	  raw_prod_ahead },
	{ "another process's QP connected to a victim with a peer: its SEND, WRITE and "
	  "SEND_WITH_INV are dropped, counted, and change nothing", stranger_dropped },
	{ "32 WQEs of random bytes: errors, no hang, the QP in ERR, the device still works",
	  raw_fuzz },
	{ "2500 forged READ requests that match a connection exactly: answered from fixed "
	  "resources, memory bounded, the requester untouched, the connection lost", read_flood },
	{ NULL }
};
