// SPDX-License-Identifier: GPL-2.0
/*
 * Object limits and ring memory (limits.sh).
 *
 *   res_test DEV GID_INDEX LIMIT [CASE-PATTERN...]
 *   res_test --ring DEV CGROUP
 *
 * DEV was created with LIMIT as the limit of every kind (the max_* module
 * parameters, read when a device is created). For each of PD, CQ, QP, SRQ,
 * MR, MW and AH:
 *   - the device reports the parameter's value as its max_*;
 *   - as many fit as the limit leaves, the one past fails with EINVAL (the
 *     errno rxe gives), one destroyed makes room for exactly one;
 *   - two threads racing for the last ones get exactly that many between
 *     them;
 *   - creates and destroys racing leave the count where it was;
 *   - what another process holds counts, until it is killed.
 * restrack ("rdma resource show") must come back to where it was.
 *
 * --ring: this process is in the memory cgroup CGROUP. CQ rings of 3 MiB
 * are created on DEV until one fails: the rings must be charged to the
 * cgroup, the one past its memory.max must fail with ENOMEM, and no
 * process may have been OOM-killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#define MAX_OBJS	64	/* far above any limit limits.sh sets */
#define CASE_LIMIT	60

/* What a case's process opens besides the objects it counts. */
struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	void *buf;
	union ibv_gid gid;
	struct ibv_device_attr attr;
};

#define NEED_PD	1
#define NEED_CQ	2

struct kind {
	const char *name;	/* for the case names */
	const char *param;	/* the module parameter */
	const char *restrack;	/* its count in "rdma resource show", or NULL */
	int needs;		/* NEED_* */
	void *(*create)(struct env *e);
	int (*destroy)(void *obj);
	int (*max)(const struct ibv_device_attr *a);
};

static int gid_index;
static int limit;

static void *pd_create(struct env *e) { return ibv_alloc_pd(e->ctx); }
static int pd_destroy(void *o) { return ibv_dealloc_pd(o); }
static int pd_max(const struct ibv_device_attr *a) { return a->max_pd; }

static void *cq_create(struct env *e) { return ibv_create_cq(e->ctx, 1, NULL, NULL, 0); }
static int cq_destroy(void *o) { return ibv_destroy_cq(o); }
static int cq_max(const struct ibv_device_attr *a) { return a->max_cq; }

static void *qp_create(struct env *e)
{
	struct ibv_qp_init_attr init = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(e->pd, &init);
}

static int qp_destroy(void *o) { return ibv_destroy_qp(o); }
static int qp_max(const struct ibv_device_attr *a) { return a->max_qp; }

static void *srq_create(struct env *e)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 1, .max_sge = 1 } };

	return ibv_create_srq(e->pd, &init);
}

static int srq_destroy(void *o) { return ibv_destroy_srq(o); }
static int srq_max(const struct ibv_device_attr *a) { return a->max_srq; }

static void *mr_create(struct env *e) { return ibv_reg_mr(e->pd, e->buf, PG, LW); }
static int mr_destroy(void *o) { return ibv_dereg_mr(o); }
static int mr_max(const struct ibv_device_attr *a) { return a->max_mr; }

static void *mw_create(struct env *e) { return ibv_alloc_mw(e->pd, IBV_MW_TYPE_1); }
static int mw_destroy(void *o) { return ibv_dealloc_mw(o); }
static int mw_max(const struct ibv_device_attr *a) { return a->max_mw; }

static void *ah_create(struct env *e)
{
	struct ibv_ah_attr attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = e->gid, .sgid_index = gid_index, .hop_limit = 64 },
	};

	return ibv_create_ah(e->pd, &attr);
}

static int ah_destroy(void *o) { return ibv_destroy_ah(o); }
static int ah_max(const struct ibv_device_attr *a) { return a->max_ah; }

static void *xrcd_create(struct env *e)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};

	return ibv_open_xrcd(e->ctx, &a);
}

static int xrcd_destroy(void *o) { return ibv_close_xrcd(o); }
/* The verbs do not advertise a most: the device has what it was created with. */
static int xrcd_max(const struct ibv_device_attr *a)
{
	(void)a;
	return limit;
}

static const struct kind kinds[] = {
	{ "PD", "max_pd", "pd", 0, pd_create, pd_destroy, pd_max },
	{ "CQ", "max_cq", "cq", 0, cq_create, cq_destroy, cq_max },
	{ "QP", "max_qp", "qp", NEED_PD | NEED_CQ, qp_create, qp_destroy, qp_max },
	{ "SRQ", "max_srq", "srq", NEED_PD, srq_create, srq_destroy, srq_max },
	{ "MR", "max_mr", "mr", NEED_PD, mr_create, mr_destroy, mr_max },
	{ "MW", "max_mw", NULL, NEED_PD, mw_create, mw_destroy, mw_max },
	{ "AH", "max_ah", NULL, NEED_PD, ah_create, ah_destroy, ah_max },
	{ "XRCD", "max_xrcd", NULL, 0, xrcd_create, xrcd_destroy, xrcd_max },
};

static bool env_open(struct env *e, const struct kind *k)
{
	memset(e, 0, sizeof(*e));
	e->ctx = open_dev(dev_name);
	if (!e->ctx) {
		t_fail("open %s: %s", dev_name, strerror(errno));
		return false;
	}
	if (ibv_query_device(e->ctx, &e->attr) || ibv_query_gid(e->ctx, 1, gid_index, &e->gid)) {
		t_fail("query %s: %s", dev_name, strerror(errno));
		return false;
	}
	e->buf = map(PG, PROT_READ | PROT_WRITE);
	if (k->needs & NEED_PD) {
		e->pd = ibv_alloc_pd(e->ctx);
		t_check(e->pd, "alloc_pd: %s", strerror(errno));
	}
	if (k->needs & NEED_CQ) {
		e->cq = ibv_create_cq(e->ctx, 4, NULL, NULL, 0);
		t_check(e->cq, "create_cq: %s", strerror(errno));
	}
	return e->buf && (e->pd || !(k->needs & NEED_PD)) && (e->cq || !(k->needs & NEED_CQ));
}

static void env_close(struct env *e)
{
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->buf)
		munmap(e->buf, PG);
	if (e->ctx)
		ibv_close_device(e->ctx);
}

/* PDs of the kernel's (the MAD layer's), each with the DMA region the core gives it. */
static long kernel_pds(void)
{
	char cmd[128], line[512];
	long n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma resource show pd dev %s 2>/dev/null", dev_name);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "comm ["))
			n++;
	pclose(f);
	return n;
}

/*
 * How many of a kind the device holds now; 0 for a kind restrack has no
 * count of. The region the core makes for each kernel PD (stag has no
 * local DMA lkey) counts against max_mr but is not in restrack.
 */
static long count(const struct kind *k)
{
	long n = k->restrack ? res_count(dev_name, k->restrack) : 0;

	if (n < 0)
		n = 0;
	if (!strcmp(k->name, "MR"))
		n += kernel_pds();
	return n;
}

/* Creates until one fails, at most @room; returns how many, and the errno of the failure. */
static int fill(const struct kind *k, struct env *e, void **objs, int room, int *err)
{
	int n;

	*err = 0;
	for (n = 0; n < room; n++) {
		objs[n] = k->create(e);
		if (!objs[n]) {
			*err = errno;
			break;
		}
	}
	return n;
}

static void empty(const struct kind *k, void **objs, int n)
{
	while (n-- > 0)
		t_check(!k->destroy(objs[n]), "destroy %s: %s", k->name, strerror(errno));
}

static long param(const struct kind *k)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/stag/parameters/%s", k->param);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static const char *case_fill(const void *arg)
{
	const struct kind *k = arg;
	void *objs[MAX_OBJS], *one;
	int n, max, err;
	long base;
	struct env e;

	if (!env_open(&e, k))
		goto out;
	max = k->max(&e.attr);
	base = count(k);
	/* limits.sh put the parameters back after creating the device. */
	t_check(max == limit, "the device reports %s %d; it was created with %d (now %ld)",
		k->param, max, limit, param(k));
	n = fill(k, &e, objs, MAX_OBJS, &err);
	t_check(n == max - base, "%d %ss created; %s %d, %ld there already", n, k->name,
		k->param, max, base);
	t_check(err == EINVAL, "the one past the limit: %s, expected EINVAL", strerror(err));
	if (k->restrack)
		t_check(count(k) == max, "restrack counts %ld %ss (kernel PDs' MRs too), not %d",
			count(k), k->name, max);
	if (n > 0) {
		/* One destroyed makes room for one, and no more. */
		t_check(!k->destroy(objs[n - 1]), "destroy: %s", strerror(errno));
		objs[n - 1] = k->create(&e);
		t_check(objs[n - 1], "after one destroyed, a create: %s", strerror(errno));
		if (!objs[n - 1])
			n--;
		one = k->create(&e);
		t_check(!one && errno == EINVAL, "the one past it again: %s",
			one ? "created" : strerror(errno));
		if (one)
			k->destroy(one);
	}
	empty(k, objs, n);
	t_check(count(k) == base, "restrack counts %ld %ss after all were destroyed, %ld before",
		count(k), k->name, base);
out:
	env_close(&e);
	return NULL;
}

struct racer {
	const struct kind *k;
	struct env *e;
	pthread_barrier_t *start;
	void *objs[MAX_OBJS];
	int n, err;
	int churn;		/* create-destroy rounds, for a churner */
	int churn_err;		/* a churner's failure other than EINVAL */
};

static void *race_fill(void *arg)
{
	struct racer *r = arg;

	pthread_barrier_wait(r->start);
	r->n = fill(r->k, r->e, r->objs, MAX_OBJS, &r->err);
	return NULL;
}

static const char *case_race(const void *arg)
{
	const struct kind *k = arg;
	struct racer r[2] = {};
	pthread_barrier_t start;
	struct env e;
	int i, max;
	long base;

	if (!env_open(&e, k))
		goto out;
	max = k->max(&e.attr);
	base = count(k);
	pthread_barrier_init(&start, NULL, 2);
	for (i = 0; i < 2; i++) {
		r[i].k = k;
		r[i].e = &e;
		r[i].start = &start;
	}
	{
		pthread_t t;

		pthread_create(&t, NULL, race_fill, &r[1]);
		race_fill(&r[0]);
		pthread_join(t, NULL);
	}
	t_check(r[0].n + r[1].n == max - base,
		"%d + %d %ss created by two threads; %s %d, %ld there already", r[0].n, r[1].n,
		k->name, k->param, max, base);
	for (i = 0; i < 2; i++) {
		t_check(r[i].err == EINVAL, "thread %d's last create: %s, expected EINVAL", i,
			strerror(r[i].err));
		empty(k, r[i].objs, r[i].n);
	}
	t_check(count(k) == base, "restrack counts %ld %ss after, %ld before", count(k), k->name,
		base);
	pthread_barrier_destroy(&start);
out:
	env_close(&e);
	return NULL;
}

static void *churn(void *arg)
{
	struct racer *r = arg;
	void *o;
	int i;

	pthread_barrier_wait(r->start);
	for (i = 0; i < r->churn; i++) {
		o = r->k->create(r->e);
		if (o)
			r->k->destroy(o);
		else if (errno != EINVAL)
			r->churn_err = errno;
	}
	return NULL;
}

static const char *case_churn(const void *arg)
{
	const struct kind *k = arg;
	struct racer filler = {}, churner = {};
	pthread_barrier_t start;
	pthread_t t;
	struct env e;
	int round, max, n;
	long base;

	if (!env_open(&e, k))
		goto out;
	max = k->max(&e.attr);
	base = count(k);
	pthread_barrier_init(&start, NULL, 2);
	churner = (struct racer){ .k = k, .e = &e, .start = &start, .churn = 400 };
	filler = (struct racer){ .k = k, .e = &e };
	pthread_create(&t, NULL, churn, &churner);
	pthread_barrier_wait(&start);
	for (round = 0; round < 20; round++) {
		n = fill(k, &e, filler.objs, MAX_OBJS, &filler.err);
		t_check(n <= max - base, "round %d: %d %ss held at once; %s %d, %ld there already",
			round, n, k->name, k->param, max, base);
		t_check(filler.err == EINVAL, "round %d: the last create: %s, expected EINVAL",
			round, strerror(filler.err));
		empty(k, filler.objs, n);
	}
	pthread_join(t, NULL);
	t_check(!churner.churn_err, "a churning create: %s", strerror(churner.churn_err));
	/* Neither lost nor gained: exactly as many fit as before the race. */
	n = fill(k, &e, filler.objs, MAX_OBJS, &filler.err);
	t_check(n == max - base, "%d %ss fit after the race; %s %d, %ld there already", n,
		k->name, k->param, max, base);
	empty(k, filler.objs, n);
	t_check(count(k) == base, "restrack counts %ld %ss after, %ld before", count(k), k->name,
		base);
	pthread_barrier_destroy(&start);
out:
	env_close(&e);
	return NULL;
}

/* A process that takes every one left, says how many, and waits to be killed. */
static void hog(const struct kind *k, int out)
{
	void *objs[MAX_OBJS];
	struct env e;
	int n = -1, err;

	if (env_open(&e, k))
		n = fill(k, &e, objs, MAX_OBJS, &err);
	if (write(out, &n, sizeof(n)) != sizeof(n))
		_exit(1);
	pause();
	_exit(0);
}

static const char *case_process(const void *arg)
{
	const struct kind *k = arg;
	void *objs[MAX_OBJS], *one;
	int fds[2], held = -1, n, err;
	struct env e;
	pid_t pid;

	if (!env_open(&e, k))
		goto out;
	if (pipe(fds)) {
		t_fail("pipe: %s", strerror(errno));
		goto out;
	}
	fflush(stdout);
	pid = fork();
	if (!pid)
		hog(k, fds[1]);
	if (read(fds[0], &held, sizeof(held)) != sizeof(held) || held < 0) {
		t_fail("the other process did not fill the device");
		goto kill;
	}
	one = k->create(&e);
	t_check(!one && errno == EINVAL, "with the other process holding %d: %s, expected EINVAL",
		held, one ? "created" : strerror(errno));
	if (one)
		k->destroy(one);
kill:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* Its objects went with its file: as many as it held fit now. */
	n = fill(k, &e, objs, MAX_OBJS, &err);
	t_check(n == held, "%d %ss fit once the other process was killed; it held %d", n,
		k->name, held);
	empty(k, objs, n);
	close(fds[0]);
	close(fds[1]);
out:
	env_close(&e);
	return NULL;
}

/* ---- --ring ---- */

#define RING_CQE	65535	/* 64 Ki slots of 48 bytes: 3 MiB */
#define RING_BYTES	(65536UL * 48)

static long cg_value(const char *cg, const char *file, const char *field)
{
	char path[512], line[256], name[64];
	long v = -1, n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!field)
			v = strtol(line, NULL, 10);
		else if (field && sscanf(line, "%63s %ld", name, &n) == 2 && !strcmp(name, field))
			v = n;
	}
	fclose(f);
	return v;
}

static int ring_case(const char *cg)
{
	struct ibv_cq *cqs[MAX_OBJS];
	struct ibv_context *ctx;
	long c0, c1, c2, max;
	int n, err = 0;

	t_suite = "limits";
	max = cg_value(cg, "memory.max", NULL);
	ctx = open_dev(dev_name);
	if (!ctx || max <= 0) {
		t_fail("open %s: %s; %s/memory.max %ld", dev_name, strerror(errno), cg, max);
		t_end("CQ rings charged to the creator's memory cgroup");
		return 1;
	}
	c0 = cg_value(cg, "memory.current", NULL);
	for (n = 0; n < MAX_OBJS; n++) {
		cqs[n] = ibv_create_cq(ctx, RING_CQE, NULL, NULL, 0);
		if (!cqs[n]) {
			err = errno;
			break;
		}
	}
	c1 = cg_value(cg, "memory.current", NULL);
	printf("# %d CQs of %lu KiB before the failure; memory.current %ld -> %ld KiB of %ld\n",
	       n, RING_BYTES / KIB, c0 / 1024, c1 / 1024, max / 1024);
	t_check(n < MAX_OBJS, "%d CQs of %lu KiB (%lu MiB) in a cgroup of %ld MiB: not charged",
		n, RING_BYTES / KIB, n * RING_BYTES >> 20, max >> 20);
	t_check(err == ENOMEM, "the CQ past the cgroup's limit: %s, expected ENOMEM",
		strerror(err));
	t_check(n > 0, "not even one CQ fit");
	t_check(c1 - c0 >= (long)(n * RING_BYTES * 9 / 10),
		"memory.current grew by %ld KiB for %d rings of %lu KiB", (c1 - c0) / 1024, n,
		RING_BYTES / KIB);
	t_check(cg_value(cg, "memory.events", "oom_kill") == 0, "oom_kill %ld in memory.events",
		cg_value(cg, "memory.events", "oom_kill"));
	while (n-- > 0)
		t_check(!ibv_destroy_cq(cqs[n]), "destroy_cq: %s", strerror(errno));
	c2 = cg_value(cg, "memory.current", NULL);
	t_check(c2 - c0 < (long)RING_BYTES,
		"memory.current %ld KiB after every CQ was destroyed, %ld KiB before", c2 / 1024,
		c0 / 1024);
	cqs[0] = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	t_check(cqs[0], "a small CQ after: %s", strerror(errno));
	if (cqs[0])
		ibv_destroy_cq(cqs[0]);
	t_end("CQ rings are charged to the creator's memory cgroup: %s",
	      "past memory.max ENOMEM, no OOM kill, all returned");
	ibv_close_device(ctx);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *what;
		const char *(*body)(const void *arg);
	} cases[] = {
		{ "as many as max_%s, the one past EINVAL, one destroyed makes room for one",
		  case_fill },
		{ "two threads race for the last %ss: exactly as many between them", case_race },
		{ "creates and destroys of %ss racing: the count does not drift", case_churn },
		{ "%ss another process holds count, until it is killed", case_process },
	};
	char name[256], lower[8];
	const char *word;
	size_t i, j, c;

	if (argc == 4 && !strcmp(argv[1], "--ring")) {
		dev_name = argv[2];
		return ring_case(argv[3]);
	}
	if (argc < 4) {
		fprintf(stderr, "usage: res_test DEV GID_INDEX LIMIT [CASE-PATTERN...]\n"
				"       res_test --ring DEV CGROUP\n");
		return 2;
	}
	t_suite = "limits";
	dev_name = argv[1];
	gid_index = atoi(argv[2]);
	limit = atoi(argv[3]);
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		for (j = 0; kinds[i].name[j] && j < sizeof(lower) - 1; j++)
			lower[j] = kinds[i].name[j] | 0x20;
		lower[j] = 0;
		for (c = 0; c < ARRAY_SIZE(cases); c++) {
			/* The parameter's name in lower case, the object's as it is. */
			word = kinds[i].name;
			if (!c)
				word = lower;
			snprintf(name, sizeof(name), "%s: ", kinds[i].name);
			snprintf(name + strlen(name), sizeof(name) - strlen(name), cases[c].what,
				 word);
			if (t_case_wanted(name, argc - 4, argv + 4))
				t_case_run(name, CASE_LIMIT, cases[c].body, &kinds[i]);
		}
	}
	return 0;
}
