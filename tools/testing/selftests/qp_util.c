// SPDX-License-Identifier: GPL-2.0
/*
 * The helpers of qp_test: the device each case opens, buffers whose guard
 * bytes tell when something wrote outside them, QPs connected over
 * loopback through the port's RoCE v2 GID, posting, and polling with a
 * deadline. Every object a case creates is tracked and destroyed after
 * the case, in reverse order, and each destroy must succeed. See qp.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "qp.h"

struct ibv_context *ctx;
struct ibv_pd *pd;
struct ibv_device_attr dev_attr;
struct ibv_port_attr port_attr;
union ibv_gid gid;
int gid_index;

/* ---- the case in progress ---- */

static struct tracked {
	enum kind kind;
	void *obj;
	size_t len;
} tracked[256];
static int ntracked;
static const char *skip_why;

void track(enum kind kind, void *obj, size_t len)
{
	if (ntracked == ARRAY_SIZE(tracked)) {
		t_fail("more than %zu objects in one case", ARRAY_SIZE(tracked));
		return;
	}
	tracked[ntracked++] = (struct tracked){ kind, obj, len };
}

/* The case destroyed @obj itself. */
void untrack(void *obj)
{
	int i;

	for (i = 0; i < ntracked && tracked[i].obj != obj; i++)
		;
	if (i == ntracked)
		return;
	ntracked--;
	memmove(&tracked[i], &tracked[i + 1], (ntracked - i) * sizeof(*tracked));
}

static int release(const struct tracked *t)
{
	switch (t->kind) {
	case K_MAP:
		return munmap(t->obj, t->len) ? errno : 0;
	case K_MR:
		return ibv_dereg_mr(t->obj);
	case K_CHANNEL:
		return ibv_destroy_comp_channel(t->obj);
	case K_CQ:
		return ibv_destroy_cq(t->obj);
	case K_SRQ:
		return ibv_destroy_srq(t->obj);
	case K_QP:
		return ibv_destroy_qp(t->obj);
	case K_AH:
		return ibv_destroy_ah(t->obj);
	case K_FLOW:
		return ibv_destroy_flow(t->obj);
	case K_WQ:
		return ibv_destroy_wq(t->obj);
	case K_RWQ_IND:
		return ibv_destroy_rwq_ind_table(t->obj);
	default:
		return ibv_close_xrcd(t->obj);
	}
}

/* Destroys what the case created, newest first: QPs in whatever state they are in. */
void case_release(void)
{
	static const char * const names[] = { "munmap", "ibv_dereg_mr",
		"ibv_destroy_comp_channel", "ibv_destroy_cq", "ibv_destroy_srq",
		"ibv_destroy_qp", "ibv_destroy_ah", "ibv_close_xrcd", "ibv_destroy_flow",
		"ibv_destroy_wq", "ibv_destroy_rwq_ind_table" };
	int ret;

	while (ntracked > 0) {
		ntracked--;
		ret = release(&tracked[ntracked]);
		t_check(!ret, "%s: %s", names[tracked[ntracked].kind], strerror(ret));
	}
	ret = pd ? ibv_dealloc_pd(pd) : 0;
	t_check(!ret, "ibv_dealloc_pd: %s", strerror(ret));
	if (ctx)
		t_check(!ibv_close_device(ctx), "ibv_close_device: %s", strerror(errno));
	pd = NULL;
	ctx = NULL;
}

void case_skip(const char *why)
{
	skip_why = why;
}

const char *case_skipped(void)
{
	return skip_why;
}

bool is_stag(void)
{
	return !strncmp(dev_name, "stag", 4);
}

/* Is stag putting messages between QPs of this host on the wire? */
bool stag_wire(void)
{
	FILE *f = fopen("/sys/module/stag/parameters/loopback", "r");
	int c = f ? fgetc(f) : 'Y';

	if (f)
		fclose(f);
	return is_stag() && c == 'N';
}

/* Is @g an IPv4-mapped GID (::ffff:a.b.c.d)? */
bool gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, v4, sizeof(v4));
}

/* bin/inject, beside this program: into @path, if it is there. */
static bool inject_path(char *path, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", path, len - sizeof("inject"));
	char *slash;

	if (n <= 0)
		return false;
	path[n] = 0;
	slash = strrchr(path, '/');
	if (!slash)
		return false;
	memcpy(slash + 1, "inject", sizeof("inject"));
	return !access(path, X_OK);
}

/*
 * Can bin/inject (into @path) aim at this device: over the wire (@why
 * says what loopback lacks), with an IPv4-mapped GID? Else the case is
 * skipped, or fails when bin/inject is missing.
 */
bool inject_ready(char *path, size_t len, const char *why)
{
	if (is_stag() && !stag_wire()) {
		case_skip(why);
		return false;
	}
	if (!gid_is_v4(&gid)) {
		case_skip("inject sends IPv4 and the port's GID is not IPv4-mapped");
		return false;
	}
	if (!inject_path(path, len)) {
		t_fail("no bin/inject beside qp_test");
		return false;
	}
	return true;
}

/*
 * bin/inject with @argv, in the background, killed with this process,
 * its output into the pipe *@out, which the caller closes; its pid, or -1
 * (the case failed, no pipe).
 */
pid_t inject_start(char *const argv[], int *out)
{
	pid_t pid, parent = getpid();
	int fds[2];

	if (pipe(fds)) {
		t_fail("pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	pid = fork();
	if (!pid) {
		/* A case that times out exits at once: inject must not outlive it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		dup2(fds[1], 1);
		close(fds[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	if (pid < 0) {
		t_fail("fork: %s", strerror(errno));
		close(fds[0]);
		return -1;
	}
	*out = fds[0];
	return pid;
}

/*
 * inject's -T: the case's time less 8 s, so a slow inject ends first and
 * says how far it got, rather than dying unheard with the case.
 */
void inject_deadline(char *arg, size_t len)
{
	int t = t_case_seconds() - 8;

	snprintf(arg, len, "%d", t > 5 ? t : 5);
}

/* A value under the port's hw_counters in sysfs, or -1. */
static long hw_file(const char *name)
{
	char path[256];
	FILE *f;
	long v = -1;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 dev_name, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * One of the port's counters. The core caches them for "lifespan"
 * milliseconds after each read: wait that out, so the value is current.
 */
long hw_counter(const char *name)
{
	long ms = hw_file("lifespan");

	usleep((ms > 0 ? ms : 10) * 1000 + 5000);
	return hw_file(name);
}

/*
 * What became of the RoCE v2 packets the device was handed: taken
 * (rcvd_pkts) or dropped under one reason, each once. The counters are
 * read together, within one lifespan of the first; -1 if one is missing.
 */
long hw_rx_fates(void)
{
	static const char *const fates[] = {
		"rcvd_pkts", "icrc_errors", "drop_malformed", "drop_no_qp", "drop_qp_state",
		"drop_not_peer", "drop_qkey", "drop_pkey", "drop_backlog",
	};
	long sum = hw_counter(fates[0]), v;
	size_t i;

	for (i = 1; i < ARRAY_SIZE(fates) && sum >= 0; i++) {
		v = hw_file(fates[i]);
		sum = v < 0 ? -1 : sum + v;
	}
	return sum;
}

/* The UDP layer's datagrams delivered to a socket (/proc/net/snmp), or -1. */
static long udp_in(void)
{
	char names[512], values[512], *n, *v, *sn, *sv;
	FILE *f = fopen("/proc/net/snmp", "r");
	long ret = -1;

	if (!f)
		return -1;
	while (fgets(names, sizeof(names), f) && fgets(values, sizeof(values), f)) {
		if (strncmp(names, "Udp:", 4))
			continue;
		n = strtok_r(names, "\t\n ", &sn);
		v = strtok_r(values, "\t\n ", &sv);
		while (n && v && strcmp(n, "InDatagrams")) {
			n = strtok_r(NULL, "\t\n ", &sn);
			v = strtok_r(NULL, "\t\n ", &sv);
		}
		if (n && v)
			ret = atol(v);
		break;
	}
	fclose(f);
	return ret;
}

/*
 * UDP's datagrams delivered and, in @fates, hw_rx_fates(), read while no
 * datagram arrived: a packet between the two reads would be in one and
 * not the other. On the debug kernel a READ flood's responses still
 * arrive seconds after it (53 of them once, in CI). Tries for up to 30 s;
 * -1 when the traffic never paused.
 */
long udp_in_datagrams(long *fates)
{
	long before, after, end = now_ms() + 30000;

	do {
		before = udp_in();
		*fates = hw_rx_fates();
		after = udp_in();
		if (before >= 0 && before == after)
			return after;
	} while (now_ms() < end);
	return -1;
}

/* The port's RoCE v2 GID, an IPv4-mapped one if there is one: what connects QPs. */
static bool pick_gid(void)
{
	struct ibv_gid_entry *e = calloc(port_attr.gid_tbl_len, sizeof(*e));
	ssize_t n = e ? ibv_query_gid_table(ctx, e, port_attr.gid_tbl_len, 0) : -ENOMEM;
	int best = -1, i;

	for (i = 0; i < n; i++) {
		bool v4 = gid_is_v4(&e[i].gid);

		if (e[i].port_num != 1 || e[i].gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (best < 0 || v4) {
			best = i;
			if (v4)
				break;
		}
	}
	if (best >= 0) {
		gid = e[best].gid;
		gid_index = e[best].gid_index;
	} else {
		t_fail("%s port 1 has no RoCE v2 GID (%zd entries)", dev_name, n);
	}
	free(e);
	return best >= 0;
}

/*
 * Another RoCE v2 GID of the port than the one QPs connect through, of the
 * same family, or -1: a second address of this host.
 */
int other_gid_index(void)
{
	struct ibv_gid_entry *e = calloc(port_attr.gid_tbl_len, sizeof(*e));
	ssize_t n = e ? ibv_query_gid_table(ctx, e, port_attr.gid_tbl_len, 0) : -ENOMEM;
	bool v4 = gid_is_v4(&gid);
	int found = -1, i;

	for (i = 0; i < n && found < 0; i++) {
		bool ev4 = gid_is_v4(&e[i].gid);

		if (e[i].port_num == 1 && e[i].gid_type == IBV_GID_TYPE_ROCE_V2 && ev4 == v4 &&
		    memcmp(e[i].gid.raw, gid.raw, sizeof(gid.raw)))
			found = e[i].gid_index;
	}
	free(e);
	return found;
}

/* Opens the device in the process that runs a case. */
bool case_setup(void)
{
	int flags;

	ctx = open_dev(dev_name);
	if (!ctx) {
		t_fail("open %s: %s", dev_name, strerror(errno));
		return false;
	}
	flags = fcntl(ctx->async_fd, F_GETFL);
	if (flags < 0 || fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
		t_fail("async_fd O_NONBLOCK: %s", strerror(errno));
	if (ibv_query_device(ctx, &dev_attr) || ibv_query_port(ctx, 1, &port_attr)) {
		t_fail("query %s: %s", dev_name, strerror(errno));
		return false;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		t_fail("ibv_alloc_pd: %s", strerror(errno));
		return false;
	}
	return pick_gid();
}

/* ---- buffers ---- */

static uint8_t guard_byte(size_t i)
{
	return 0xa5 ^ (i * 29);
}

/* A pattern with no runs, different for each seed. */
void fill(void *p, size_t len, unsigned int seed)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = seed * 0x9d + i * 31 + (i >> 8) * 7 + 1;
}

/*
 * A pattern in which no two places of one stream agree for long: byte @i of
 * stream @seed comes from a hash of (@seed, @i / 8), so a chunk that lands
 * at the wrong offset, a stale page or a chunk of another stream differs
 * from what belongs there. (fill()'s pattern repeats every 64 KiB.)
 */
static uint64_t xword(uint64_t seed, uint64_t k)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15ull + k + 1;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Bytes @off to @off + @len of stream @seed, into @p. */
void xfill(void *p, size_t off, size_t len, uint64_t seed)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = xword(seed, (off + i) / 8) >> ((off + i) % 8 * 8);
}

/* How many of @len bytes at @p differ from stream @seed at @off; the first in *@first. */
size_t xdiff(const void *p, size_t off, size_t len, uint64_t seed, size_t *first)
{
	const uint8_t *b = p;
	size_t i, bad = 0;
	uint64_t w = 0;

	for (i = 0; i < len; i++) {
		if (i == 0 || (off + i) % 8 == 0)
			w = xword(seed, (off + i) / 8);
		if (b[i] != (uint8_t)(w >> ((off + i) % 8 * 8)) && !bad++ && first)
			*first = i;
	}
	return bad;
}

/* Guard bytes of @b that are not what buf_new() wrote. */
size_t guards_changed(const struct buf *b)
{
	size_t i, bad = 0;

	for (i = 0; i < GUARD; i++) {
		bad += (uint8_t)b->mem[i] != guard_byte(i);
		bad += (uint8_t)b->data[b->len + i] != guard_byte(GUARD + i);
	}
	return bad;
}

void expect_bytes(const void *got, const void *want, size_t len, const char *what)
{
	const uint8_t *g = got, *w = want;
	size_t i, bad = 0, first = 0;

	for (i = 0; i < len; i++) {
		if (g[i] != w[i] && !bad++)
			first = i;
	}
	t_check(!bad, "%s: %zu of %zu bytes differ, the first at offset %zu: %#x, expected %#x",
		what, bad, len, first, bad ? g[first] : 0, bad ? w[first] : 0);
}

void expect_guards(const struct buf *b, const char *what)
{
	uint8_t want[2 * GUARD];
	size_t i;

	for (i = 0; i < 2 * GUARD; i++)
		want[i] = guard_byte(i);
	expect_bytes(b->mem, want, GUARD, what);
	expect_bytes(b->data + b->len, want + GUARD, GUARD, what);
}

/* The whole of a buffer is fill(seed) and its guards are intact. */
void expect_data(const struct buf *b, unsigned int seed, const char *what)
{
	char *want = malloc(b->len + 1);

	fill(want, b->len, seed);
	expect_bytes(b->data, want, b->len, what);
	expect_guards(b, what);
	free(want);
}

/* Nothing was written to @b, data or guards. */
void expect_blank(const struct buf *b, const char *what)
{
	expect_data(b, BLANK, what);
}

/* Writes the guard bytes around the data of @b. */
void buf_guard(struct buf *b)
{
	size_t i;

	for (i = 0; i < GUARD; i++) {
		b->mem[i] = guard_byte(i);
		b->data[b->len + i] = guard_byte(GUARD + i);
	}
}

struct buf *buf_new(size_t len, int access)
{
	size_t maplen = (2 * GUARD + len + PG - 1) / PG * PG;
	struct buf *b = calloc(1, sizeof(*b));

	b->len = len;
	b->mem = map(maplen, PROT_READ | PROT_WRITE);
	if (!b->mem) {
		t_fail("mmap %zu: %s", maplen, strerror(errno));
		return NULL;
	}
	track(K_MAP, b->mem, maplen);
	b->data = b->mem + GUARD;
	fill(b->data, len, BLANK);
	buf_guard(b);
	b->mr = ibv_reg_mr(pd, b->mem, 2 * GUARD + len, access);
	if (!b->mr) {
		t_fail("ibv_reg_mr %zu: %s", 2 * GUARD + len, strerror(errno));
		return NULL;
	}
	track(K_MR, b->mr, 0);
	return b;
}

struct ibv_sge sge_of(const struct buf *b, size_t off, size_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)b->data + off, .length = len,
				 .lkey = b->mr->lkey };
}

/* A second region over exactly the data of @b, so that its guards lie outside it. */
struct ibv_mr *reg_exact(struct buf *b, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, b->data, b->len, access);

	t_check(mr, "ibv_reg_mr: %s", strerror(errno));
	if (mr)
		track(K_MR, mr, 0);
	return mr;
}

/* ---- QPs ---- */

struct ibv_cq *cq_new(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);

	if (!cq)
		t_fail("ibv_create_cq: %s", strerror(errno));
	else
		track(K_CQ, cq, 0);
	return cq;
}

struct ibv_srq *srq_new(int max_wr)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = max_wr, .max_sge = MAX_SGE } };
	struct ibv_srq *srq = ibv_create_srq(pd, &a);

	if (!srq)
		t_fail("ibv_create_srq: %s", strerror(errno));
	else
		track(K_SRQ, srq, 0);
	return srq;
}

/* A QP of @type on the CQs given, in RESET. */
struct end *end_on(enum ibv_qp_type type, struct ibv_cq *scq, struct ibv_cq *rcq,
		   struct ibv_srq *srq, bool sig_all)
{
	struct end *e = calloc(1, sizeof(*e));
	struct ibv_qp_init_attr a = {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = type,
		.srq = srq,
		.sq_sig_all = sig_all,
		.cap = {
			.max_send_wr = DEPTH,
			.max_recv_wr = srq ? 0 : DEPTH,
			.max_send_sge = MAX_SGE,
			.max_recv_sge = srq ? 0 : MAX_SGE,
			.max_inline_data = type == IBV_QPT_UD ? 0 : MAX_INLINE,
		},
	};

	if (!scq || !rcq)
		return NULL;
	e->scq = scq;
	e->rcq = rcq;
	e->qp = ibv_create_qp(pd, &a);
	if (!e->qp) {
		t_fail("ibv_create_qp type %d: %s", type, strerror(errno));
		return NULL;
	}
	track(K_QP, e->qp, 0);
	return e;
}

/*
 * A QP of @type created with ibv_create_qp_ex() to take the ibv_wr_*() of
 * @send_ops (IBV_QP_EX_WITH_*), with CQs of its own, in RESET.
 */
struct end *end_ops(enum ibv_qp_type type, uint64_t send_ops)
{
	struct end *e = calloc(1, sizeof(*e));
	struct ibv_qp_init_attr_ex a = {
		.qp_type = type,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = MAX_SGE,
			 .max_recv_sge = MAX_SGE,
			 .max_inline_data = type == IBV_QPT_UD ? 0 : MAX_INLINE },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = send_ops,
	};

	if (!e)
		return NULL;
	e->scq = cq_new();
	e->rcq = cq_new();
	if (!e->scq || !e->rcq)
		return NULL;
	a.send_cq = e->scq;
	a.recv_cq = e->rcq;
	e->qp = ibv_create_qp_ex(ctx, &a);
	if (!e->qp) {
		t_fail("ibv_create_qp_ex with send_ops_flags %#llx: %s", (ull)send_ops,
		       strerror(errno));
		return NULL;
	}
	track(K_QP, e->qp, 0);
	return e;
}

/* A QP of @type with a send and a receive CQ of its own, in RESET. */
struct end *end_new(enum ibv_qp_type type, struct ibv_srq *srq, bool sig_all)
{
	struct ibv_cq *scq = cq_new();

	return end_on(type, scq, cq_new(), srq, sig_all);
}

/* PSNs derived from the QP numbers, so that each direction has its own. */
static uint32_t psn_of(uint32_t qpn)
{
	return (qpn * 0x9e3779u) & 0xffffff;
}

/* How to reach QP @qpn at the port of GID @dgid, from this port's GID. */
struct conn conn_to(uint32_t qpn, const union ibv_gid *dgid)
{
	return (struct conn){
		.dgid = *dgid,
		.sgid_index = gid_index,
		.dest_qpn = qpn,
		.rq_psn = psn_of(qpn),
		.mtu = port_attr.active_mtu,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.min_rnr_timer = 1,	/* 0.01 ms */
		.access = LW | RW | RR | RA,
	};
}

/* How to reach @peer, a QP of this port, over loopback. */
struct conn conn_default(const struct end *peer)
{
	return conn_to(peer->qp->qp_num, &gid);
}

int qp_to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = access,
		.qkey = QKEY,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	if (qp->qp_type == IBV_QPT_UC)
		a.qp_access_flags &= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	return ibv_modify_qp(qp, &a, mask);
}

int qp_to_rtr(struct ibv_qp *qp, const struct conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = c->mtu,
		.dest_qp_num = c->dest_qpn,
		.rq_psn = c->rq_psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = c->min_rnr_timer,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = c->dgid, .sgid_index = c->sgid_index, .hop_limit = 64 },
			.port_num = 1,
		},
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	/* An XRC TGT QP is a responder as an RC QP is; an INI is not. */
	if (qp->qp_type == IBV_QPT_UD)
		mask = IBV_QP_STATE;
	else if (qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_RECV)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, mask);
}

int qp_to_rts(struct ibv_qp *qp, const struct conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = c->sq_psn,
		.timeout = c->timeout,
		.retry_cnt = c->retry_cnt,
		.rnr_retry = c->rnr_retry,
		.max_rd_atomic = 1,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	/* An XRC INI QP is a requester as an RC QP is; a TGT takes a timeout alone. */
	if (qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_SEND)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	else if (qp->qp_type == IBV_QPT_XRC_RECV)
		mask |= IBV_QP_TIMEOUT;
	return ibv_modify_qp(qp, &a, mask);
}

/* RESET to RTS: INIT, RTR, RTS as @c says. */
bool connect_end(struct end *e, const struct conn *c)
{
	int ret;

	ret = qp_to_init(e->qp, c->access);
	if (!ret)
		ret = qp_to_rtr(e->qp, c);
	if (!ret)
		ret = qp_to_rts(e->qp, c);
	t_check(!ret, "connect QP %#x to %#x: %s", e->qp->qp_num, c->dest_qpn, strerror(ret));
	return !ret;
}

/* Connects @a and @b to each other; the sq_psn of each is the other's rq_psn. */
bool pair_connect(struct end *a, const struct conn *ca, struct end *b, const struct conn *cb)
{
	struct conn x = *ca, y = *cb;

	x.sq_psn = y.rq_psn;
	y.sq_psn = x.rq_psn;
	return connect_end(a, &x) && connect_end(b, &y);
}

/* Connects @a and @b to each other, each as conn_default() has it. */
bool pair_connect_default(struct end *a, struct end *b)
{
	struct conn ca = conn_default(b), cb = conn_default(a);

	return pair_connect(a, &ca, b, &cb);
}

/*
 * Two QPs of @type (RC or UC), not connected yet: @ca and @cb say how they
 * will be, for the case to change before pair_connect().
 */
bool pair_ends(enum ibv_qp_type type, struct end **a, struct end **b, struct conn *ca,
	       struct conn *cb)
{
	*a = end_new(type, NULL, true);
	*b = end_new(type, NULL, true);
	if (!*a || !*b)
		return false;
	*ca = conn_default(*b);
	*cb = conn_default(*a);
	return true;
}

/* Two QPs of @type (RC or UC) connected to each other. */
bool pair_new(enum ibv_qp_type type, struct end **a, struct end **b)
{
	struct conn ca, cb;

	return pair_ends(type, a, b, &ca, &cb) && pair_connect(*a, &ca, *b, &cb);
}

/* An address handle to the port of GID @dgid. */
struct ibv_ah *ah_to(const union ibv_gid *dgid)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.grh = { .dgid = *dgid, .sgid_index = gid_index, .hop_limit = 64 },
		.port_num = 1,
	};
	struct ibv_ah *ah = ibv_create_ah(pd, &a);

	if (!ah)
		t_fail("ibv_create_ah: %s", strerror(errno));
	else
		track(K_AH, ah, 0);
	return ah;
}

/* An address handle to this port's own GID: loopback for UD. */
struct ibv_ah *ah_new(void)
{
	return ah_to(&gid);
}

bool ud_ready(struct end *e)
{
	struct conn c = { .sq_psn = psn_of(e->qp->qp_num) };
	int ret;

	ret = qp_to_init(e->qp, 0);
	if (!ret)
		ret = qp_to_rtr(e->qp, &c);
	if (!ret)
		ret = qp_to_rts(e->qp, &c);
	t_check(!ret, "UD QP %#x to RTS: %s", e->qp->qp_num, strerror(ret));
	return !ret;
}

/* ---- posting ---- */

int post_recv(struct end *e, uint64_t wr_id, struct ibv_sge *sg, int n)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = n }, *bad;
	int ret = ibv_post_recv(e->qp, &wr, &bad);

	t_check(!ret, "ibv_post_recv %#llx: %s", (ull)wr_id, strerror(ret));
	return ret;
}

int post(struct end *e, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int ret = ibv_post_send(e->qp, wr, &bad);

	t_check(!ret, "ibv_post_send %#llx: %s", (ull)wr->wr_id, strerror(ret));
	return ret;
}

struct ibv_send_wr wr_send(uint64_t wr_id, struct ibv_sge *sg, int n)
{
	return (struct ibv_send_wr){ .wr_id = wr_id, .sg_list = sg, .num_sge = n,
				     .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
}

/* RDMA WRITE, WRITE_WITH_IMM or READ to @off of the data of @remote. */
struct ibv_send_wr wr_rdma(uint64_t wr_id, enum ibv_wr_opcode op, struct ibv_sge *sg, int n,
			   const struct buf *remote, size_t off)
{
	struct ibv_send_wr wr = wr_send(wr_id, sg, n);

	wr.opcode = op;
	wr.wr.rdma.remote_addr = (uintptr_t)remote->data + off;
	wr.wr.rdma.rkey = remote->mr->rkey;
	return wr;
}

int post_srq(struct ibv_srq *srq, uint64_t wr_id, struct ibv_sge *sg)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = 1 }, *bad;
	int ret = ibv_post_srq_recv(srq, &wr, &bad);

	t_check(!ret, "ibv_post_srq_recv %#llx: %s", (ull)wr_id, strerror(ret));
	return ret;
}

/* ---- completions ---- */

long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Polls @cq until it has given @n completions or @ms have passed; returns how many. */
int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	long end = now_ms() + ms;
	int got = 0, ret;

	while (got < n) {
		ret = ibv_poll_cq(cq, n - got, wc + got);
		if (ret < 0) {
			t_fail("ibv_poll_cq: %d", ret);
			break;
		}
		got += ret;
		if (got < n && !ret) {
			if (now_ms() > end)
				break;
			usleep(100);
		}
	}
	return got;
}

static const char *opcode_str(int op)
{
	static const char * const names[] = {
		[IBV_WC_SEND] = "SEND", [IBV_WC_RDMA_WRITE] = "RDMA_WRITE",
		[IBV_WC_RDMA_READ] = "RDMA_READ", [IBV_WC_COMP_SWAP] = "COMP_SWAP",
		[IBV_WC_FETCH_ADD] = "FETCH_ADD", [IBV_WC_BIND_MW] = "BIND_MW",
		[IBV_WC_LOCAL_INV] = "LOCAL_INV", [IBV_WC_ATOMIC_WRITE] = "ATOMIC_WRITE",
	};

	if (op == IBV_WC_RECV)
		return "RECV";
	if (op == IBV_WC_RECV_RDMA_WITH_IMM)
		return "RECV_RDMA_WITH_IMM";
	if (op >= 0 && op < (int)ARRAY_SIZE(names) && names[op])
		return names[op];
	return "?";
}

/*
 * Checks that completion @wc is @wr_id with @status and, on success and
 * unless @opcode is -1, @opcode. Returns whether all three are as expected.
 */
bool expect_wc_is(const struct ibv_wc *wc, uint64_t wr_id, enum ibv_wc_status status,
		  int opcode, const char *what)
{
	bool ok = true;

	if (wc->wr_id != wr_id) {
		t_fail("%s: completion of %#llx, expected %#llx", what, (ull)wc->wr_id,
		       (ull)wr_id);
		ok = false;
	}
	if (wc->status != status) {
		t_fail("%s: %#llx completed with %s (%d), expected %s (%d)", what,
		       (ull)wc->wr_id, ibv_wc_status_str(wc->status), wc->status,
		       ibv_wc_status_str(status), status);
		ok = false;
	}
	if (status == IBV_WC_SUCCESS && opcode >= 0 && (int)wc->opcode != opcode) {
		t_fail("%s: opcode %s (%d), expected %s (%d)", what, opcode_str(wc->opcode),
		       wc->opcode, opcode_str(opcode), opcode);
		ok = false;
	}
	return ok;
}

/*
 * Expects the next completion of @cq to be @wr_id with @status and, on
 * success and unless @opcode is -1, @opcode. Returns whether there was
 * one; @out receives it.
 */
bool expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status, int opcode,
	       struct ibv_wc *out, const char *what)
{
	struct ibv_wc wc;

	if (poll_n(cq, &wc, 1, WAIT_MS) != 1) {
		t_fail("%s: no completion of %#llx in %d ms, expected %s", what, (ull)wr_id,
		       WAIT_MS, ibv_wc_status_str(status));
		return false;
	}
	expect_wc_is(&wc, wr_id, status, opcode, what);
	if (out)
		*out = wc;
	return true;
}

void expect_none(struct ibv_cq *cq, int ms, const char *what)
{
	struct ibv_wc wc;

	if (poll_n(cq, &wc, 1, ms))
		t_fail("%s: unexpected completion of %#llx, %s", what, (ull)wc.wr_id,
		       ibv_wc_status_str(wc.status));
}

/* @n completions of @first, @first + 1, ... with IBV_WC_WR_FLUSH_ERR, in that order. */
void expect_flushed(struct ibv_cq *cq, uint64_t first, int n, const char *what)
{
	char w[128];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(w, sizeof(w), "%s (flush %d of %d)", what, i + 1, n);
		if (!expect_wc(cq, first + i, IBV_WC_WR_FLUSH_ERR, -1, NULL, w))
			return;
	}
}

void expect_state(struct ibv_qp *qp, enum ibv_qp_state state, const char *what)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int ret = ibv_query_qp(qp, &a, IBV_QP_STATE, &init);

	if (ret)
		t_fail("%s: ibv_query_qp: %s", what, strerror(ret));
	else
		t_check(a.qp_state == state, "%s: QP %#x in state %d, expected %d", what,
			qp->qp_num, a.qp_state, state);
}

/* Waits up to @ms for an async event @type about @obj (a QP, CQ or SRQ; NULL: any). */
bool async_event(enum ibv_event_type type, void *obj, int ms)
{
	long end = now_ms() + ms;
	struct ibv_async_event ev;
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	while (now_ms() <= end) {
		if (poll(&p, 1, 10) != 1 || ibv_get_async_event(ctx, &ev))
			continue;
		ibv_ack_async_event(&ev);
		if (ev.event_type == type && (!obj || ev.element.qp == obj))
			return true;
		printf("# async event %s (%d) while waiting for %s\n",
		       ibv_event_type_str(ev.event_type), ev.event_type, ibv_event_type_str(type));
	}
	return false;
}

/* ---- running the cases ---- */

static const char *run_one(const void *arg)
{
	const struct qp_case *c = arg;

	if (case_setup())
		c->run();
	case_release();
	return case_skipped();
}

/**
 * qp_cases_main() - the main() of a program of qp_case lists
 * @suite: its TAP suite name
 * @timeout_env: the variable that may give the seconds one case may take
 * @limit: those seconds without it
 * @parts: the case lists, each ending with { NULL }
 * @nparts: their number
 * @argc: main()'s, for [DEVICE [CASE-PATTERN...]]
 * @argv: main()'s
 *
 * Each case wanted runs in a child process of its own (t_case_run()).
 */
int qp_cases_main(const char *suite, const char *timeout_env, int limit,
		  const struct qp_case *const *parts, unsigned int nparts, int argc, char **argv)
{
	const char *env = getenv(timeout_env);
	const struct qp_case *c;
	unsigned int i;

	t_suite = suite;
	if (argc > 1)
		dev_name = argv[1];
	if (env && atoi(env) > 0)
		limit = atoi(env);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < nparts; i++)
		for (c = parts[i]; c->name; c++)
			if (t_case_wanted(c->name, argc > 2 ? argc - 2 : 0, argv + 2))
				t_case_run(c->name, limit, run_one, c);
	return 0;
}
