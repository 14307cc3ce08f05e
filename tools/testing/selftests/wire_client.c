// SPDX-License-Identifier: GPL-2.0
/*
 * wire_test's client side of the conversation with the server (wire.h):
 * requests and answers, the server's buffers fetched and compared here
 * byte for byte with their guards, the server's QPs, their completions
 * polled there and judged here, and connecting a QP of each side to the
 * other through the RoCE v2 GIDs of both guests.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mw.h"
#include "wire.h"

const char *server_addr;
int server_port;

/* ---- the connection to the server ---- */

static FILE *rx, *tx;

struct wire_peer peer;
enum ibv_mtu path_mtu;
size_t mtu;

static bool vrpc(const void *data, size_t dlen, char *ans, size_t alen, const char *fmt,
		 va_list ap)
{
	char req[WIRE_LINE], line[WIRE_LINE];

	vsnprintf(req, sizeof(req), fmt, ap);
	if (fprintf(tx, "%s\n", req) < 0 || (dlen && fwrite(data, 1, dlen, tx) != dlen) ||
	    fflush(tx) || !fgets(line, sizeof(line), rx)) {
		t_fail("server: %s: the connection is lost", req);
		return false;
	}
	line[strcspn(line, "\n")] = 0;
	if (strncmp(line, "OK", 2)) {
		t_fail("server: %s: %s", req, line);
		return false;
	}
	if (ans)
		snprintf(ans, alen, "%s", line + 2 + (line[2] == ' '));
	return true;
}

/* One request; true when the server answered OK, with what follows OK in @ans. */
bool rpc(char *ans, size_t alen, const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = vrpc(NULL, 0, ans, alen, fmt, ap);
	va_end(ap);
	return ok;
}

static bool rpc_data(const void *data, size_t dlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static bool rpc_data(const void *data, size_t dlen, const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = vrpc(data, dlen, NULL, 0, fmt, ap);
	va_end(ap);
	return ok;
}

bool server_open(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(server_port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || inet_pton(AF_INET, server_addr, &a.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		t_fail("connect to the server at %s:%d: %s", server_addr, server_port,
		       strerror(errno));
		return false;
	}
	rx = fdopen(fd, "r");
	tx = fdopen(dup(fd), "w");
	return rx && tx;
}

void server_close(void)
{
	if (rx)
		fclose(rx);
	if (tx)
		fclose(tx);
	rx = NULL;
	tx = NULL;
}

bool hello(const char *name)
{
	char ans[WIRE_LINE], g[33];
	int mtu_enum;

	if (!server_open() || !rpc(ans, sizeof(ans), "HELLO %s", name))
		return false;
	if (sscanf(ans, "%63s %32s %d %d %x", peer.dev, g, &peer.gid_index, &mtu_enum,
		   &peer.caps) != 5 || !gid_parse(g, &peer.gid)) {
		t_fail("server: HELLO: %s", ans);
		return false;
	}
	path_mtu = port_attr.active_mtu;
	if (mtu_enum < (int)path_mtu)
		path_mtu = mtu_enum;
	mtu = 128u << path_mtu;
	return true;
}

bool peer_is_rxe(void)
{
	return !strncmp(peer.dev, "rxe", 3);
}

/* The server is this stag device, which moves messages to itself without packets. */
bool stag_loopback(void)
{
	return !memcmp(peer.gid.raw, gid.raw, sizeof(gid.raw)) && is_stag() && !stag_wire();
}

/* ---- the server's buffers ---- */

/* @len bytes at the server, fill()ed with @seed, between guards, in a region of @access. */
bool rbuf_new(struct rbuf *rb, size_t len, int access, unsigned int seed)
{
	char ans[WIRE_LINE];
	ull addr;

	if (!rpc(ans, sizeof(ans), "BUF %zu %#x %u", len, access, seed))
		return false;
	if (sscanf(ans, "%d %llx %x", &rb->id, &addr, &rb->rkey) != 3) {
		t_fail("server: BUF: %s", ans);
		return false;
	}
	rb->addr = addr;
	rb->len = len;
	return true;
}

/* A second region over exactly the data of @rb, of @access: its rkey in @rkey. */
bool rbuf_exact(const struct rbuf *rb, int access, uint32_t *rkey)
{
	char ans[WIRE_LINE];

	return rpc(ans, sizeof(ans), "EXACT %d %#x", rb->id, access) &&
	       sscanf(ans, "%x", rkey) == 1;
}

bool rbuf_put(const struct rbuf *rb, size_t off, const void *data, size_t n)
{
	return rpc_data(data, n, "PUT %d %zu %zu", rb->id, off, n);
}

/* The server's bytes of @rb, guards and data, in @copy (free copy->mem). */
bool rbuf_get(const struct rbuf *rb, struct buf *copy)
{
	size_t n = 2 * GUARD + rb->len;
	char ans[WIRE_LINE];

	copy->mem = malloc(n);
	copy->data = copy->mem + GUARD;
	copy->len = rb->len;
	copy->mr = NULL;
	if (!copy->mem) {
		t_fail("malloc %zu: %s", n, strerror(errno));
		return false;
	}
	if (!rpc(ans, sizeof(ans), "GET %d", rb->id))
		return false;
	if (strtoull(ans, NULL, 0) != n || fread(copy->mem, 1, n, rx) != n) {
		t_fail("server: GET %d: %s bytes, expected %zu", rb->id, ans, n);
		return false;
	}
	return true;
}

/* The server's @rb holds @want, and its guards are intact. */
void rbuf_expect(const struct rbuf *rb, const void *want, const char *what)
{
	struct buf copy;

	if (rbuf_get(rb, &copy)) {
		expect_bytes(copy.data, want, rb->len, what);
		expect_guards(&copy, what);
	}
	free(copy.mem);
}

/* The server's @rb holds fill(@seed), and its guards are intact. */
void rbuf_expect_fill(const struct rbuf *rb, unsigned int seed, const char *what)
{
	struct buf copy;

	if (rbuf_get(rb, &copy))
		expect_data(&copy, seed, what);
	free(copy.mem);
}

/* ---- the server's QPs ---- */

/* Bytes @off..@off+@n of @rb hold the xfill() stream @seed, its guards intact. */
void rbuf_xexpect(const struct rbuf *rb, size_t off, size_t n, uint64_t seed, const char *what)
{
	unsigned long long bad, first, guards;
	char ans[WIRE_LINE];

	if (!rpc(ans, sizeof(ans), "XCHECK %d %zu %zu %#llx", rb->id, off, n,
		 (unsigned long long)seed))
		return;
	if (sscanf(ans, "%llu %llu %llu", &bad, &first, &guards) != 3) {
		t_fail("server: XCHECK: %s", ans);
		return;
	}
	t_check(!bad, "%s: %llu of %zu bytes wrong, the first at offset %llu", what, bad, n,
		first);
	t_check(!guards, "%s: %llu guard bytes changed", what, guards);
}

bool rqp_new(struct rqp *r, enum ibv_qp_type type, bool on_srq)
{
	char ans[WIRE_LINE];

	if (!rpc(ans, sizeof(ans), "QP %d %d", type, on_srq))
		return false;
	if (sscanf(ans, "%d %x", &r->id, &r->qpn) != 2) {
		t_fail("server: QP: %s", ans);
		return false;
	}
	return true;
}

bool rqp_connect(const struct rqp *r, const struct conn *c)
{
	char g[33];

	gid_hex(&c->dgid, g);
	return rpc(NULL, 0, "CONNECT %d %#x %s %#x %#x %d %d %d %d %d %#x", r->id, c->dest_qpn, g,
		   c->sq_psn, c->rq_psn, c->mtu, c->timeout, c->retry_cnt, c->rnr_retry,
		   c->min_rnr_timer, c->access);
}

/* A receive on the server's QP: @len bytes at @off of @rb, or no scatter entry if !@rb. */
bool rrecv(const struct rqp *r, uint64_t wr_id, const struct rbuf *rb, size_t off, size_t len)
{
	return rpc(NULL, 0, "RECV %d %#llx %d %zu %zu", r->id, (ull)wr_id, rb ? rb->id : -1, off,
		   len);
}

/* Up to @n completions of the server's send ('s') or receive ('r') CQ within @ms. */
int rpoll(const struct rqp *r, char cq, struct ibv_wc *wc, int n, int ms)
{
	char ans[WIRE_LINE], *p = ans;
	int got, i;

	if (!rpc(ans, sizeof(ans), "POLL %d %c %d %d", r->id, cq, n, ms))
		return -1;
	got = strtol(p, &p, 0);
	for (i = 0; i < got && i < n; i++) {
		memset(&wc[i], 0, sizeof(wc[i]));
		wc[i].wr_id = strtoull(p, &p, 0);
		wc[i].status = strtoul(p, &p, 0);
		wc[i].opcode = strtoul(p, &p, 0);
		wc[i].byte_len = strtoul(p, &p, 0);
		wc[i].invalidated_rkey = strtoul(p, &p, 0);
		wc[i].wc_flags = strtoul(p, &p, 0);
		wc[i].src_qp = strtoul(p, &p, 0);
		wc[i].qp_num = strtoul(p, &p, 0);
	}
	return got;
}

/* expect_wc() of the server's CQ @cq ('s' or 'r'). */
bool rexpect_wc(const struct rqp *r, char cq, uint64_t wr_id, enum ibv_wc_status status,
		int opcode, struct ibv_wc *out, const char *what)
{
	struct ibv_wc wc;
	int got = rpoll(r, cq, &wc, 1, WAIT_MS);

	if (got != 1) {
		if (!got)
			t_fail("%s: no completion of %#llx in %d ms, expected %s", what,
			       (ull)wr_id, WAIT_MS, ibv_wc_status_str(status));
		return false;
	}
	expect_wc_is(&wc, wr_id, status, opcode, what);
	if (out)
		*out = wc;
	return true;
}

void rexpect_none(const struct rqp *r, char cq, int ms, const char *what)
{
	struct ibv_wc wc;

	if (rpoll(r, cq, &wc, 1, ms) > 0)
		t_fail("%s: unexpected completion of %#llx, %s", what, (ull)wc.wr_id,
		       ibv_wc_status_str(wc.status));
}

void rexpect_state(const struct rqp *r, enum ibv_qp_state state, const char *what)
{
	char ans[WIRE_LINE];

	if (rpc(ans, sizeof(ans), "STATE %d", r->id))
		t_check(atoi(ans) == (int)state, "%s: QP %#x in state %d, expected %d", what,
			r->qpn, atoi(ans), state);
}

/* A counter of the server's port, or -1 (a device without it). */
long rcounter(const char *name)
{
	char ans[WIRE_LINE];

	return rpc(ans, sizeof(ans), "COUNTER %s", name) ? atol(ans) : -1;
}

/* A counter of this port, or with @server the server's, by its name on stag and on rxe. */
struct counter counter_start(bool server, const char *stag_name, const char *rxe_name)
{
	struct counter c = { .server = server, .before = -1 };

	c.name = (server ? peer_is_rxe() : !is_stag()) ? rxe_name : stag_name;
	if (c.name)
		c.before = server ? rcounter(c.name) : hw_counter(c.name);
	return c;
}

/* The counter grew since counter_start(), if the device has it: @what happened. */
void expect_counted(const struct counter *c, const char *what)
{
	long now;

	if (c->before < 0)
		return;
	now = c->server ? rcounter(c->name) : hw_counter(c->name);
	t_check(now > c->before, "%s's %s stayed %ld: %s?", c->server ? peer.dev : dev_name,
		c->name, c->before, what);
}

/* ---- connecting ---- */

/* How each end reaches the other: the client's @mine, the server's @theirs. */
void conns(const struct end *e, const struct rqp *r, struct conn *mine, struct conn *theirs)
{
	*mine = conn_to(r->qpn, &peer.gid);
	*theirs = conn_to(e->qp->qp_num, &gid);
	mine->mtu = path_mtu;
	theirs->mtu = path_mtu;
}

/*
 * A QP of @type here and one at the server (on its SRQ if @on_srq), not
 * connected yet: @mine and @theirs say how they will be, for the case to
 * change before wire_connect().
 */
bool wire_new(enum ibv_qp_type type, bool on_srq, struct end **e, struct rqp *r,
	      struct conn *mine, struct conn *theirs)
{
	*e = end_new(type, NULL, true);
	if (!*e || !rqp_new(r, type, on_srq))
		return false;
	conns(*e, r, mine, theirs);
	return true;
}

/* The server's end first, so that it listens before the client sends; UD ends to RTS. */
bool wire_connect(struct end *e, const struct rqp *r, struct conn *mine, struct conn *theirs)
{
	mine->sq_psn = theirs->rq_psn;
	theirs->sq_psn = mine->rq_psn;
	if (!rqp_connect(r, theirs))
		return false;
	return e->qp->qp_type == IBV_QPT_UD ? ud_ready(e) : connect_end(e, mine);
}

/* A QP of @type here and one at the server (on its SRQ if @on_srq), connected. */
bool wire_pair(enum ibv_qp_type type, bool on_srq, struct end **e, struct rqp *r)
{
	struct conn mine, theirs;

	return wire_new(type, on_srq, e, r, &mine, &theirs) && wire_connect(*e, r, &mine, &theirs);
}

/* As wire_pair(), RC or UC, with a QP here that takes the ibv_wr_*() of @send_ops. */
bool wire_pair_ops(enum ibv_qp_type type, uint64_t send_ops, struct end **e, struct rqp *r)
{
	struct conn mine, theirs;

	*e = end_ops(type, send_ops);
	if (!*e || !rqp_new(r, type, false))
		return false;
	conns(*e, r, &mine, &theirs);
	return wire_connect(*e, r, &mine, &theirs);
}

/* ---- checks ---- */

/* A receive completion of @len bytes for QP @qpn, with the immediate *@imm if @imm. */
void expect_recv(const struct ibv_wc *wc, uint32_t len, const uint32_t *imm,
		 uint32_t qpn, const char *what)
{
	t_check(wc->byte_len == len, "%s: byte_len %u, expected %u", what, wc->byte_len, len);
	t_check(wc->qp_num == qpn, "%s: qp_num %#x, expected %#x", what, wc->qp_num, qpn);
	t_check(!(wc->wc_flags & IBV_WC_WITH_INV), "%s: IBV_WC_WITH_INV set", what);
	if (!imm) {
		t_check(!(wc->wc_flags & IBV_WC_WITH_IMM), "%s: IBV_WC_WITH_IMM without one",
			what);
		return;
	}
	t_check(wc->wc_flags & IBV_WC_WITH_IMM, "%s: IBV_WC_WITH_IMM not set", what);
	t_check(ntohl(wc->imm_data) == *imm, "%s: imm_data %#x, expected %#x", what,
		ntohl(wc->imm_data), *imm);
}

/*
 * The WR @id just posted on @e fails with @status: the SEND posted behind it
 * and one posted once the error is seen are flushed, the QP is in ERR.
 */
void expect_fails(struct end *e, uint64_t id, enum ibv_wc_status status, const char *what)
{
	struct ibv_send_wr wr = wr_send(id + 2, NULL, 0);

	post_trailer(e, id + 1);
	expect_error(e, id, status, what);
	if (!post(e, &wr))
		expect_flushed(e->scq, id + 2, 1, "a SEND posted after the error");
}

struct ibv_send_wr wr_remote(uint64_t id, enum ibv_wr_opcode op, struct ibv_sge *s,
			     uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = wr_send(id, s, 1);

	wr.opcode = op;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return wr;
}
