// SPDX-License-Identifier: GPL-2.0
/*
 * wire_test's server: the far end of every case, in the peer guest. It
 * judges nothing: it does what the client asks and reports what it sees
 * (completions, the bytes of its buffers with their guards, its QP's
 * state), so that every assertion is made in one place, by the client.
 * What fails here (a verb the client needed) is answered with ERR and
 * fails the client's case; what fails while a connection's objects are
 * destroyed prints a "not ok" line, which wire.sh counts. See wire.h.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mw.h"
#include "wire.h"

#define MAXTOK		16
#define CONN_LIMIT	300	/* seconds one connection may last */
#define EXIT_BYE	3	/* a connection's process: the client said BYE */

void gid_hex(const union ibv_gid *g, char out[33])
{
	int i;

	for (i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", g->raw[i]);
}

bool gid_parse(const char *s, union ibv_gid *g)
{
	unsigned int x;
	int i;

	if (strlen(s) != 32)
		return false;
	for (i = 0; i < 16; i++) {
		if (sscanf(s + 2 * i, "%2x", &x) != 1)
			return false;
		g->raw[i] = x;
	}
	return true;
}

/* Connects through GID @index (-1: the one case_setup() picked), as the harness says. */
bool use_gid(int index)
{
	int ret;

	if (index < 0)
		return true;
	ret = ibv_query_gid(ctx, 1, index, &gid);
	if (ret) {
		t_fail("ibv_query_gid %s index %d: %s", dev_name, index, strerror(errno));
		return false;
	}
	gid_index = index;
	return true;
}

/* ---- what one connection holds ---- */

static struct buf *bufs[64];
static int nbufs;
static struct end *qps[16];
static int nqps;
static struct ibv_srq *srq;
static char case_name[256] = "(no HELLO)";

static void reply(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(FILE *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
	fflush(out);
}

static struct buf *buf_at(ull i, FILE *out)
{
	if (i < (ull)nbufs)
		return bufs[i];
	reply(out, "ERR no buffer %llu", i);
	return NULL;
}

static struct end *qp_at(ull i, FILE *out)
{
	if (i < (ull)nqps && qps[i])
		return qps[i];
	reply(out, "ERR no QP %llu", i);
	return NULL;
}

/* ---- commands: @v holds each token as a number, @tok the tokens, @rx the request stream ---- */

struct req {
	ull v[MAXTOK];
	char *tok[MAXTOK];
	const char *rest;	/* the line after the command */
	FILE *rx, *tx;
};

static void c_hello(const struct req *r)
{
	char g[33];

	snprintf(case_name, sizeof(case_name), "%s", r->rest);
	gid_hex(&gid, g);
	reply(r->tx, "OK %s %s %d %d %#x", dev_name, g, gid_index, port_attr.active_mtu,
	      dev_attr.device_cap_flags);
}

static void c_buf(const struct req *r)
{
	struct buf *b;

	if (nbufs == ARRAY_SIZE(bufs)) {
		reply(r->tx, "ERR more than %zu buffers", ARRAY_SIZE(bufs));
		return;
	}
	b = buf_new(r->v[1], r->v[2]);
	if (!b) {
		reply(r->tx, "ERR buf_new %llu access %#llx: %s", r->v[1], r->v[2],
		      strerror(errno));
		return;
	}
	fill(b->data, b->len, r->v[3]);
	bufs[nbufs] = b;
	reply(r->tx, "OK %d %#llx %#x", nbufs++, (ull)(uintptr_t)b->data, b->mr->rkey);
}

static void c_exact(const struct req *r)
{
	struct buf *b = buf_at(r->v[1], r->tx);
	struct ibv_mr *mr;

	if (!b)
		return;
	mr = reg_exact(b, r->v[2]);
	if (mr)
		reply(r->tx, "OK %#x", mr->rkey);
	else
		reply(r->tx, "ERR ibv_reg_mr: %s", strerror(errno));
}

static void c_put(const struct req *r)
{
	struct buf *b = buf_at(r->v[1], r->tx);
	ull off = r->v[2], n = r->v[3];
	char *tmp = malloc(n + 1);
	bool got = tmp && fread(tmp, 1, n, r->rx) == n;

	if (b && got && off <= b->len && n <= b->len - off) {
		memcpy(b->data + off, tmp, n);
		reply(r->tx, "OK");
	} else if (b) {
		reply(r->tx, "ERR PUT of %llu at %llu of %zu bytes%s", n, off, b->len,
		      got ? "" : ": short read");
	}
	free(tmp);
}

static void c_get(const struct req *r)
{
	struct buf *b = buf_at(r->v[1], r->tx);
	size_t n;

	if (!b)
		return;
	n = 2 * GUARD + b->len;
	fprintf(r->tx, "OK %zu\n", n);
	fwrite(b->mem, 1, n, r->tx);
	fflush(r->tx);
}

static void c_xfill(const struct req *r)
{
	struct buf *b = buf_at(r->v[1], r->tx);

	if (!b)
		return;
	xfill(b->data, 0, b->len, r->v[2]);
	reply(r->tx, "OK");
}

/* Bulk data is judged where it lies: only the count of wrong bytes travels. */
static void c_xcheck(const struct req *r)
{
	struct buf *b = buf_at(r->v[1], r->tx);
	ull off = r->v[2], n = r->v[3];
	size_t bad, first = 0;

	if (!b)
		return;
	if (off > b->len || n > b->len - off) {
		reply(r->tx, "ERR XCHECK of %llu at %llu of %zu bytes", n, off, b->len);
		return;
	}
	bad = xdiff(b->data + off, off, n, r->v[4], &first);
	reply(r->tx, "OK %zu %llu %zu", bad, bad ? off + first : 0, guards_changed(b));
}

static void c_srq(const struct req *r)
{
	if (!srq)
		srq = srq_new(r->v[1]);
	if (srq)
		reply(r->tx, "OK");
	else
		reply(r->tx, "ERR ibv_create_srq: %s", strerror(errno));
}

static void c_qp(const struct req *r)
{
	struct end *e;

	if (nqps == ARRAY_SIZE(qps) || (r->v[2] && !srq)) {
		reply(r->tx, "ERR %s", srq ? "too many QPs" : "no SRQ");
		return;
	}
	e = end_new(r->v[1], r->v[2] ? srq : NULL, true);
	if (!e) {
		reply(r->tx, "ERR ibv_create_qp type %llu: %s", r->v[1], strerror(errno));
		return;
	}
	qps[nqps] = e;
	reply(r->tx, "OK %d %#x", nqps++, e->qp->qp_num);
}

static void c_connect(const struct req *r)
{
	struct end *e = qp_at(r->v[1], r->tx);
	struct conn c = { 0 };
	bool ok;

	if (!e)
		return;
	if (!gid_parse(r->tok[3], &c.dgid)) {
		reply(r->tx, "ERR bad GID %s", r->tok[3]);
		return;
	}
	c.sgid_index = gid_index;
	c.dest_qpn = r->v[2];
	c.sq_psn = r->v[4];
	c.rq_psn = r->v[5];
	c.mtu = r->v[6];
	c.timeout = r->v[7];
	c.retry_cnt = r->v[8];
	c.rnr_retry = r->v[9];
	c.min_rnr_timer = r->v[10];
	c.access = r->v[11];
	ok = e->qp->qp_type == IBV_QPT_UD ? ud_ready(e) : connect_end(e, &c);
	if (ok)
		reply(r->tx, "OK");
	else
		reply(r->tx, "ERR connect QP %#x to %#x failed", e->qp->qp_num, c.dest_qpn);
}

/* The scatter entry of a RECV or SRECV: @v[0] the buffer (-1: none), @v[1] off, @v[2] len. */
static int recv_sge(const ull *v, struct ibv_sge *sg, FILE *out)
{
	struct buf *b;

	if ((long long)v[0] < 0)
		return 0;
	b = buf_at(v[0], out);
	if (!b)
		return -1;
	*sg = sge_of(b, v[1], v[2]);
	return 1;
}

static void c_recv(const struct req *r)
{
	struct end *e = qp_at(r->v[1], r->tx);
	struct ibv_sge sg;
	int n = e ? recv_sge(r->v + 3, &sg, r->tx) : -1, ret;

	if (n < 0)
		return;
	ret = post_recv(e, r->v[2], &sg, n);
	if (ret)
		reply(r->tx, "ERR ibv_post_recv: %s", strerror(ret));
	else
		reply(r->tx, "OK");
}

static void c_send(const struct req *r)
{
	struct end *e = qp_at(r->v[1], r->tx);
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	int n = e ? recv_sge(r->v + 3, &sg, r->tx) : -1, ret;

	if (n < 0)
		return;
	wr = wr_send(r->v[2], &sg, n);
	ret = post(e, &wr);
	if (ret)
		reply(r->tx, "ERR ibv_post_send: %s", strerror(ret));
	else
		reply(r->tx, "OK");
}

static void c_recvn(const struct req *r)
{
	struct end *e = qp_at(r->v[1], r->tx);
	struct buf *b = e ? buf_at(r->v[3], r->tx) : NULL;
	ull off = r->v[4], stride = r->v[5], len = r->v[6], n = r->v[7], i;
	struct ibv_sge sg;
	int ret = 0;

	if (!b)
		return;
	if (n && (off + (n - 1) * stride + len > b->len || len > stride)) {
		reply(r->tx, "ERR RECVN beyond the %zu bytes of buffer %llu", b->len, r->v[3]);
		return;
	}
	for (i = 0; i < n && !ret; i++) {
		sg = sge_of(b, off + i * stride, len);
		ret = post_recv(e, r->v[2] + i, &sg, 1);
	}
	if (ret)
		reply(r->tx, "ERR ibv_post_recv %llu of %llu: %s", i, n, strerror(ret));
	else
		reply(r->tx, "OK");
}

static void c_srecv(const struct req *r)
{
	struct ibv_sge sg;
	struct ibv_recv_wr wr = { .wr_id = r->v[1], .sg_list = &sg }, *bad;
	int ret;

	if (!srq) {
		reply(r->tx, "ERR no SRQ");
		return;
	}
	wr.num_sge = recv_sge(r->v + 2, &sg, r->tx);
	if (wr.num_sge < 0)
		return;
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	if (ret)
		reply(r->tx, "ERR ibv_post_srq_recv: %s", strerror(ret));
	else
		reply(r->tx, "OK");
}

static void c_poll(const struct req *r)
{
	struct end *e = qp_at(r->v[1], r->tx);
	struct ibv_wc wc[WIRE_POLL_MAX];
	int n = r->v[3] < WIRE_POLL_MAX ? r->v[3] : WIRE_POLL_MAX, got, i;

	if (!e)
		return;
	got = poll_n(r->tok[2][0] == 's' ? e->scq : e->rcq, wc, n, r->v[4]);
	fprintf(r->tx, "OK %d", got);
	/* imm_data and invalidated_rkey share a union: its raw bits travel. */
	for (i = 0; i < got; i++)
		fprintf(r->tx, " %#llx %d %d %u %#x %#x %#x %#x", (ull)wc[i].wr_id, wc[i].status,
			wc[i].opcode, wc[i].byte_len, wc[i].invalidated_rkey, wc[i].wc_flags,
			wc[i].src_qp, wc[i].qp_num);
	reply(r->tx, "%s", "");
}

static void c_bind(const struct req *r)
{
	struct end *e = qp_at(r->v[1], r->tx);
	struct buf *b = e ? buf_at(r->v[2], r->tx) : NULL;
	struct ibv_mw *mw = b ? mw_new(IBV_MW_TYPE_2) : NULL;
	uint32_t rkey;
	int ret;

	if (!b)
		return;
	if (!mw) {
		reply(r->tx, "ERR ibv_alloc_mw type 2: %s", strerror(errno));
		return;
	}
	rkey = ibv_inc_rkey(mw->rkey);
	ret = bind2_post(e, mw, r->v[6], rkey, b->mr, (uintptr_t)b->data + r->v[3], r->v[4],
			 r->v[5]);
	if (ret)
		reply(r->tx, "ERR BIND_MW: %s", strerror(ret));
	else
		reply(r->tx, "OK %#x", rkey);
}

static void c_state(const struct req *r)
{
	struct end *e = qp_at(r->v[1], r->tx);
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int ret;

	if (!e)
		return;
	ret = ibv_query_qp(e->qp, &a, IBV_QP_STATE, &init);
	if (ret)
		reply(r->tx, "ERR ibv_query_qp: %s", strerror(ret));
	else
		reply(r->tx, "OK %d", a.qp_state);
}

static void c_destroy(const struct req *r)
{
	struct end *e = qp_at(r->v[1], r->tx);
	int ret;

	if (!e)
		return;
	ret = ibv_destroy_qp(e->qp);
	if (ret) {
		reply(r->tx, "ERR ibv_destroy_qp: %s", strerror(ret));
		return;
	}
	untrack(e->qp);
	qps[r->v[1]] = NULL;
	reply(r->tx, "OK");
}

/* Groups QPs are attached to, detached before the QPs go (an attached QP cannot). */
static struct attached {
	struct ibv_qp *qp;
	union ibv_gid g;
} attached[16];
static int nattached;

static void detach_all(void)
{
	while (nattached > 0) {
		nattached--;
		ibv_detach_mcast(attached[nattached].qp, &attached[nattached].g, 0);
	}
}

static void c_mcast(const struct req *r)
{
	struct end *e = qp_at(r->v[1], r->tx);
	bool attach = !strcmp(r->tok[2], "attach");
	union ibv_gid g;
	int i, ret;

	if (!e)
		return;
	if (!gid_parse(r->tok[3], &g)) {
		reply(r->tx, "ERR bad GID %s", r->tok[3]);
		return;
	}
	if (attach && nattached == ARRAY_SIZE(attached)) {
		reply(r->tx, "ERR more than %zu attaches", ARRAY_SIZE(attached));
		return;
	}
	ret = attach ? ibv_attach_mcast(e->qp, &g, 0) : ibv_detach_mcast(e->qp, &g, 0);
	if (ret) {
		reply(r->tx, "ERR %d %s", ret, strerror(ret));
		return;
	}
	for (i = 0; i < nattached; i++) {
		if (attached[i].qp == e->qp && !memcmp(&attached[i].g, &g, sizeof(g)))
			break;
	}
	if (attach && i == nattached)
		attached[nattached++] = (struct attached){ e->qp, g };
	else if (!attach && i < nattached)
		attached[i] = attached[--nattached];
	reply(r->tx, "OK");
}

static void c_counter(const struct req *r)
{
	long v = strchr(r->tok[1], '/') ? -1 : hw_counter(r->tok[1]);

	if (v < 0)
		reply(r->tx, "ERR %s has no counter %s", dev_name, r->tok[1]);
	else
		reply(r->tx, "OK %ld", v);
}

/* The objects the device holds, and the pages pinned host-wide. */
static void c_res(const struct req *r)
{
	reply(r->tx, "OK %ld %ld %ld %ld", res_count(dev_name, "qp"), res_count(dev_name, "cq"),
	      res_count(dev_name, "mr"), pin_balance());
}

/* The marker a connection leaves before it has itself killed: wire_serve() expects it. */
static void die_marker(pid_t pid, char *path, size_t len)
{
	snprintf(path, len, "/tmp/wire_serve.die.%d", (int)pid);
}

static void *killer(void *arg)
{
	usleep((unsigned long)arg * 1000);
	kill(getpid(), SIGKILL);
	return NULL;
}

/*
 * A thread SIGKILLs this connection's process @ms after the reply: a peer
 * process dying in the middle of a transfer, with no chance to clean up.
 * (Not a child: it would hold the device's file open past the death.)
 */
static void c_die(const struct req *r)
{
	unsigned long ms = r->v[1];
	char path[64];
	pthread_t t;
	FILE *f;
	int ret;

	die_marker(getpid(), path, sizeof(path));
	f = fopen(path, "w");
	if (!f) {
		reply(r->tx, "ERR %s: %s", path, strerror(errno));
		return;
	}
	fclose(f);
	reply(r->tx, "OK");
	ret = pthread_create(&t, NULL, killer, (void *)ms);
	if (ret) {
		/* The client sees no death and fails its case. */
		unlink(path);
		fprintf(stderr, "wire_test: pthread_create: %s\n", strerror(ret));
	}
}

static const struct cmd {
	const char *name;
	int ntok;	/* with the command */
	void (*fn)(const struct req *r);
} cmds[] = {
	{ "HELLO", 1, c_hello },
	{ "BUF", 4, c_buf },
	{ "EXACT", 3, c_exact },
	{ "PUT", 4, c_put },
	{ "GET", 2, c_get },
	{ "XFILL", 3, c_xfill },
	{ "XCHECK", 5, c_xcheck },
	{ "SRQ", 2, c_srq },
	{ "QP", 3, c_qp },
	{ "CONNECT", 12, c_connect },
	{ "RECV", 6, c_recv },
	{ "RECVN", 8, c_recvn },
	{ "SEND", 6, c_send },
	{ "SRECV", 5, c_srecv },
	{ "POLL", 5, c_poll },
	{ "BIND", 7, c_bind },
	{ "STATE", 2, c_state },
	{ "DESTROY", 2, c_destroy },
	{ "MCAST", 4, c_mcast },
	{ "COUNTER", 2, c_counter },
	{ "RES", 1, c_res },
	{ "DIE", 2, c_die },
};

/* Serves one request line; false when the client said BYE. */
static bool serve_line(char *line, FILE *rx, FILE *tx)
{
	struct req r = { .rx = rx, .tx = tx };
	char rest[WIRE_LINE], *save, *t;
	unsigned int i;
	int n = 0;

	line[strcspn(line, "\n")] = 0;
	t = line + strcspn(line, " ");
	snprintf(rest, sizeof(rest), "%s", t + (*t == ' '));
	r.rest = rest;
	for (t = strtok_r(line, " ", &save); t && n < MAXTOK; t = strtok_r(NULL, " ", &save)) {
		r.tok[n] = t;
		r.v[n++] = strtoull(t, NULL, 0);
	}
	if (!n)
		return true;
	if (!strcmp(r.tok[0], "BYE")) {
		reply(tx, "OK");
		return false;
	}
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (strcmp(r.tok[0], cmds[i].name))
			continue;
		if (n < cmds[i].ntok)
			reply(tx, "ERR %s takes %d arguments", cmds[i].name, cmds[i].ntok - 1);
		else
			cmds[i].fn(&r);
		return true;
	}
	reply(tx, "ERR unknown command %s", r.tok[0]);
	return true;
}

/* One connection, in a process of its own: 0, or EXIT_BYE. */
static int serve_conn(int fd, int gid_arg)
{
	FILE *rx = fdopen(fd, "r"), *tx = fdopen(dup(fd), "w");
	char line[WIRE_LINE];
	bool bye = false;

	/* A client that hangs up early must not kill the clean-up with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	alarm(CONN_LIMIT);
	if (!rx || !tx)
		return 1;
	if (!case_setup() || !use_gid(gid_arg)) {
		t_end("open %s for a connection", dev_name);
		return 1;
	}
	while (!bye && fgets(line, sizeof(line), rx))
		bye = !serve_line(line, rx, tx);
	detach_all();
	release_owned();
	case_release();
	/* What failed here, a destroy above all, is this side's to report. */
	t_end("the objects of \"%s\" destroyed", case_name);
	fclose(rx);
	fclose(tx);
	return bye ? EXIT_BYE : 0;
}

static int listen_on(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 8)) {
		perror("wire_test: listen");
		return -1;
	}
	return fd;
}

/**
 * wire_serve() - serve the client's connections until one says BYE
 * @port: the TCP port to listen on
 * @gid_arg: the GID index to connect through, or -1
 *
 * Return: 0 when every connection's process ended normally, else 1.
 */
int wire_serve(int port, int gid_arg)
{
	int ls = listen_on(port), fd, status, failed = 0, live = 0;
	struct pollfd p = { .fd = ls, .events = POLLIN };
	char marker[64];
	bool bye = false;
	pid_t pid;

	if (ls < 0)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (!bye || live) {
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			live--;
			bye |= WIFEXITED(status) && WEXITSTATUS(status) == EXIT_BYE;
			if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
				/* Killed on the client's DIE is no failure. */
				die_marker(pid, marker, sizeof(marker));
				failed |= unlink(marker);
				continue;
			}
			failed |= !WIFEXITED(status) ||
				  (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != EXIT_BYE);
		}
		if (bye) {
			usleep(10000);
			continue;
		}
		if (poll(&p, 1, 100) != 1)
			continue;
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		fflush(stdout);
		pid = fork();
		if (!pid) {
			close(ls);
			_exit(serve_conn(fd, gid_arg));
		}
		live += pid > 0;
		close(fd);
	}
	close(ls);
	return failed;
}
