// SPDX-License-Identifier: GPL-2.0
/*
 * Register Shared Memory Region from userspace, as an application does it:
 * through stagdv_reg_shared_mr() of the provider library it links
 * (stagdv.h). Keys, iova and PD of the shared region; pins (none of its
 * own, released with the last region); access rules; the handle checks;
 * restrack; and process exit. Runs in the guest as root.
 *
 *   shared_mr_test [DEVICE]	the cases, as TAP lines (default stag0)
 *
 * Pins are counted as in mr_test: VmPin of /proc/self/status and the
 * kernel-wide nr_foll_pin_acquired - nr_foll_pin_released of /proc/vmstat.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "stagdv.h"

#define PG		4096UL
#define KIB		1024UL
#define SEP		" \t\n"
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define LW	IBV_ACCESS_LOCAL_WRITE
#define RW	IBV_ACCESS_REMOTE_WRITE
#define RR	IBV_ACCESS_REMOTE_READ
#define RA	IBV_ACCESS_REMOTE_ATOMIC

/* The source regions: 5 pages' worth, starting 0x100 into the first. */
#define SRC_OFF		0x100UL
#define SRC_LEN		(4 * PG + 0x80)
#define SRC_PAGES	5
#define MAP_LEN		(6 * PG)

typedef unsigned long long ull;

static const char *dev_name = "stag0";
static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;

/* ---- TAP ---- */

static char t_detail[8192];
static size_t t_len;
static bool t_failed;

static void t_note(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t_len >= sizeof(t_detail) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t_detail + t_len, sizeof(t_detail) - t_len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n >= sizeof(t_detail) - t_len)
		n = sizeof(t_detail) - t_len - 1;
	if (n > 0)
		t_len += n;
	if (t_len < sizeof(t_detail) - 1)
		t_detail[t_len++] = '\n';
	t_detail[t_len] = 0;
}

#define t_fail(...) do { t_failed = true; t_note(__VA_ARGS__); } while (0)
#define t_check(cond, ...) do { if (!(cond)) t_fail(__VA_ARGS__); } while (0)

static void t_end(const char *name)
{
	char *line, *save;

	printf("%s - shared_mr: %s\n", t_failed ? "not ok" : "ok", name);
	for (line = strtok_r(t_detail, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		printf("#   %s\n", line);
	fflush(stdout);
	t_len = 0;
	t_detail[0] = 0;
	t_failed = false;
}

/* ---- pin accounting ---- */

static long vmpin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f;

	f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmPin:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

/* Pages pinned kernel-wide (FOLL_PIN) and not released; root only. */
static long pin_balance(void)
{
	long acquired = -1, released = -1;
	char name[64];
	long val;
	FILE *f;
	int fd;

	/* Fold the per-cpu deltas, or the counters lag by up to ~125 per cpu. */
	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1\n", 2) < 0)
			perror("# stat_refresh");
		close(fd);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return LONG_MIN;
	while (fscanf(f, "%63s %ld", name, &val) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acquired = val;
		else if (!strcmp(name, "nr_foll_pin_released"))
			released = val;
	}
	fclose(f);
	return acquired < 0 || released < 0 ? LONG_MIN : acquired - released;
}

struct pins {
	long vmpin_kb;
	long balance;
};

static struct pins pins_now(void)
{
	return (struct pins){ .vmpin_kb = vmpin_kb(), .balance = pin_balance() };
}

/* Checks that pins are exactly @pages more than at @base. */
static void expect_pins(struct pins base, long pages, const char *when)
{
	struct pins now = pins_now();

	t_check(now.vmpin_kb - base.vmpin_kb == pages * (long)(PG / KIB),
		"%s: VmPin %+ld kB, expected %+ld kB", when, now.vmpin_kb - base.vmpin_kb,
		pages * (long)(PG / KIB));
	t_check(now.balance - base.balance == pages, "%s: pin balance %+ld, expected %+ld",
		when, now.balance - base.balance, pages);
}

/* ---- device, memory, regions ---- */

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			c = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return c;
}

static char *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0x5a, len);
	return p;
}

static struct ibv_mr *reg_src(struct ibv_pd *p, char *buf, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(p, buf + SRC_OFF, SRC_LEN, access);

	t_check(mr, "ibv_reg_mr of the source: %s", strerror(errno));
	return mr;
}

/* errno is kept from the failure, 0 on success. */
static struct ibv_mr *share(struct ibv_mr *src, struct ibv_pd *p, uint64_t iova, int access,
			    int *err)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = stagdv_reg_shared_mr(src, p, iova, access);
	*err = mr ? 0 : errno;
	return mr;
}

static void dereg(struct ibv_mr *mr, const char *what)
{
	int ret;

	if (!mr)
		return;
	ret = ibv_dereg_mr(mr);
	t_check(!ret, "ibv_dereg_mr of the %s region: %s", what, strerror(ret));
}

/* A registration that must fail with @want; one that succeeds is released again. */
static void expect_share_err(struct ibv_mr *src, struct ibv_pd *p, int access, int want)
{
	struct ibv_mr *mr;
	int err;

	mr = share(src, p, 0, access, &err);
	if (mr) {
		t_fail("shared region registered (lkey %#x) with access %#x, expected %s",
		       mr->lkey, access, strerror(want));
		dereg(mr, "unexpected");
		return;
	}
	t_check(err == want, "access %#x: errno %d (%s), expected %d (%s)", access, err,
		strerror(err), want, strerror(want));
}

/* ---- rdma resource show mr ---- */

struct res_mr {
	uint32_t rkey;
	uint64_t iova, mrlen, pages;
	long pid;
	bool has_iova, has_pages;
};

/*
 * The line of "rdma -dd resource show mr" for this device and lkey; -dd
 * adds the driver's attributes (drv_iova, drv_pages).
 * Return: 1 and *out filled, 0 when no line matches, -1 when rdma fails.
 */
static int res_find(uint32_t lkey, struct res_mr *out)
{
	char line[1024], *tok, *val, *save;
	int found = 0;
	FILE *f;

	fflush(stdout);
	f = popen("rdma -dd resource show mr 2>&1", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct res_mr r = { .pid = -1 };
		bool dev_ok = false, key_ok = false;

		for (tok = strtok_r(line, SEP, &save); tok; tok = strtok_r(NULL, SEP, &save)) {
			val = strtok_r(NULL, SEP, &save);
			if (!val)
				break;
			if (!strcmp(tok, "dev"))
				dev_ok = !strcmp(val, dev_name);
			else if (!strcmp(tok, "lkey"))
				key_ok = strtoul(val, NULL, 0) == lkey;
			else if (!strcmp(tok, "rkey"))
				r.rkey = strtoul(val, NULL, 0);
			else if (!strcmp(tok, "drv_iova"))
				r.iova = strtoull(val, NULL, 0), r.has_iova = true;
			else if (!strcmp(tok, "drv_pages"))
				r.pages = strtoull(val, NULL, 0), r.has_pages = true;
			else if (!strcmp(tok, "mrlen"))
				r.mrlen = strtoull(val, NULL, 0);
			else if (!strcmp(tok, "pid"))
				r.pid = strtol(val, NULL, 0);
		}
		if (dev_ok && key_ok) {
			*out = r;
			found++;
		}
	}
	if (pclose(f))
		return -1;
	if (found > 1)
		t_fail("%d lines for lkey %#x", found, lkey);
	return found ? 1 : 0;
}

static void expect_listed(const struct ibv_mr *mr, uint64_t iova)
{
	struct res_mr r;
	int ret = res_find(mr->lkey, &r);

	if (ret <= 0) {
		t_fail("lkey %#x: %s", mr->lkey,
		       ret ? "rdma resource show mr failed" : "not listed");
		return;
	}
	t_check(r.rkey == mr->rkey, "lkey %#x: rkey %#x listed, expected %#x", mr->lkey, r.rkey,
		mr->rkey);
	t_check(r.mrlen == SRC_LEN, "lkey %#x: mrlen %llu, expected %lu", mr->lkey,
		(ull)r.mrlen, SRC_LEN);
	t_check(r.pid == getpid(), "lkey %#x: pid %ld, expected %d", mr->lkey, r.pid, getpid());
	t_check(r.has_iova && r.iova == iova, "lkey %#x: iova %s%#llx, expected %#llx", mr->lkey,
		r.has_iova ? "" : "(none) ", (ull)r.iova, (ull)iova);
	t_check(r.has_pages && r.pages == SRC_PAGES, "lkey %#x: pages %llu, expected %d",
		mr->lkey, (ull)r.pages, SRC_PAGES);
}

static void expect_unlisted(uint32_t lkey)
{
	struct res_mr r;
	int ret = res_find(lkey, &r);

	t_check(ret == 0, "lkey %#x: %s", lkey, ret > 0 ? "still listed" : "rdma failed");
}

/* ---- cases ---- */

/*
 * The provider linked at start-up and the one libibverbs dlopen()s must be
 * one file, or the process runs two copies of it.
 */
static void case_one_provider(void)
{
	char line[512], first[512] = "", *path;
	int copies = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	t_check(f, "/proc/self/maps: %s", strerror(errno));
	while (f && fgets(line, sizeof(line), f)) {
		path = strchr(line, '/');
		if (!path || !strstr(path, "libstag-rdmav34.so"))
			continue;
		if (!first[0])
			snprintf(first, sizeof(first), "%s", path);
		else if (strcmp(first, path))
			copies++;
	}
	if (f)
		fclose(f);
	t_check(first[0], "libstag-rdmav34.so not mapped");
	t_check(!copies, "mapped from more than one file: %s and others", first);
	t_end("one copy of the provider: the linked library is the one libibverbs loads");
}

/*
 * Own keys, iova 0 (zero-based) and another PD over the same bytes; no
 * pins of its own; restrack lists both; both gone after dereg.
 */
static void cases_basic(char *buf)
{
	struct pins base = pins_now();
	struct ibv_mr *src, *mr = NULL;
	uint32_t lkey = 0, src_lkey = 0;
	int err = 0;

	src = reg_src(pd, buf, LW | RR | RW);
	if (src)
		mr = share(src, pd2, 0, LW | RR, &err);
	t_check(!src || mr, "stagdv_reg_shared_mr: %s", strerror(err));
	if (mr) {
		t_check(mr->lkey != src->lkey, "lkey %#x is the source's", mr->lkey);
		t_check(mr->rkey && mr->rkey != src->rkey, "rkey %#x (source %#x)", mr->rkey,
			src->rkey);
		t_check(mr->handle != src->handle, "handle %u is the source's", mr->handle);
		t_check(mr->pd == pd2 && mr->context == ctx, "pd/context not the ones given");
		t_check(mr->addr == src->addr && mr->length == src->length,
			"addr %p length %zu, source %p %zu", mr->addr, mr->length, src->addr,
			src->length);
	}
	t_end("own lkey, rkey and handle; iova 0 in another PD of the same context");

	if (mr)
		expect_pins(base, SRC_PAGES, "source and shared region registered");
	t_end("registering a shared region pins nothing new (VmPin, vmstat)");

	if (mr) {
		expect_listed(src, (uintptr_t)src->addr);
		expect_listed(mr, 0);
		lkey = mr->lkey;
		src_lkey = src->lkey;
	}
	dereg(mr, "shared");
	dereg(src, "source");
	if (mr) {
		expect_unlisted(lkey);
		expect_unlisted(src_lkey);
	}
	expect_pins(base, 0, "both deregistered");
	t_end("rdma resource show mr lists both with their iovas; both gone after dereg");
}

/* Either order of deregistration: the pages stay pinned until the last. */
static void case_dereg_order(char *buf, bool source_first)
{
	struct pins base = pins_now();
	struct ibv_mr *src, *mr = NULL, *first, *second;
	int err = 0;

	src = reg_src(pd, buf, LW | RR);
	if (src)
		mr = share(src, pd, 0x10000, RR, &err);
	t_check(!src || mr, "stagdv_reg_shared_mr: %s", strerror(err));
	if (mr) {
		first = source_first ? src : mr;
		second = source_first ? mr : src;
		dereg(first, source_first ? "source" : "shared");
		expect_pins(base, SRC_PAGES, "after the first dereg");
		expect_listed(second, source_first ? 0x10000 : (uintptr_t)buf + SRC_OFF);
		dereg(second, source_first ? "shared" : "source");
		expect_pins(base, 0, "after the second dereg");
	} else {
		dereg(src, "source");
	}
	t_end(source_first ?
	      "source deregistered first: shared one stays, pages pinned until it goes too" :
	      "shared deregistered first: source stays, pages pinned until it goes too");
}

/* Access rights: what the source's pins allow, and the rules of reg_mr. */
static void cases_access(char *buf)
{
	struct ibv_mr *src, *mr;
	int err;

	/* Remote read only: the pages are pinned without write access. */
	src = reg_src(pd, buf, RR);
	if (src) {
		expect_share_err(src, pd, LW, EACCES);
		expect_share_err(src, pd, LW | RW, EACCES);
		expect_share_err(src, pd, LW | RA, EACCES);
	}
	t_end("write rights over a source pinned read-only: EACCES");

	if (src) {
		mr = share(src, pd, 0, RR, &err);
		t_check(mr, "read-only shared region: %s", strerror(err));
		dereg(mr, "read-only shared");
		mr = share(src, pd, 0, 0, &err);
		t_check(mr, "shared region with no rights: %s", strerror(err));
		t_check(!mr || !mr->rkey, "no remote rights, rkey %#x", mr ? mr->rkey : 0);
		dereg(mr, "no-rights shared");
	}
	t_end("read-only and no-rights shared regions over a read-only source");
	dereg(src, "source");

	src = reg_src(pd, buf, LW | RR | RW | RA);
	if (src) {
		expect_share_err(src, pd, LW | (1 << 10), EINVAL);
		expect_share_err(src, pd, LW | (1 << 30), EINVAL);
		expect_share_err(src, pd, LW | (1U << 31), EINVAL);
	}
	t_end("unknown access flag (bits 10, 30, 31): EINVAL");

	if (src) {
		expect_share_err(src, pd, RW, EINVAL);
		expect_share_err(src, pd, RR | RW, EINVAL);
		expect_share_err(src, pd, RA, EINVAL);
	}
	t_end("remote write or atomic without local write: EINVAL");

	if (src) {
		expect_share_err(src, pd, LW | IBV_ACCESS_ZERO_BASED, EOPNOTSUPP);
		expect_share_err(src, pd, LW | IBV_ACCESS_ON_DEMAND, EOPNOTSUPP);
	}
	t_end("defined but unsupported flags (ZERO_BASED, ON_DEMAND): EOPNOTSUPP");
	dereg(src, "source");
}

/*
 * A source of another context. The provider refuses it (EINVAL) before
 * the kernel sees a handle number it would resolve in the PD's context.
 * The kernel's own check is the IDR lookup in the caller's context: a
 * forged ibv_mr carrying the other context's handle is sent on this
 * context's fd to see it.
 */
static void cases_other_context(void)
{
	struct ibv_mr *others[40] = {}, forged, *src, *mr;
	struct ibv_context *ctx2 = open_dev(dev_name);
	struct ibv_pd *p2 = ctx2 ? ibv_alloc_pd(ctx2) : NULL;
	char *buf = map(MAP_LEN);
	size_t i, n = 0;
	int err;

	t_check(p2 && buf, "second context, PD and buffer: %s", strerror(errno));
	/* Enough objects that the last handle is beyond any this context has. */
	for (i = 0; p2 && buf && i < ARRAY_SIZE(others); i++, n++) {
		others[i] = ibv_reg_mr(p2, buf + SRC_OFF, SRC_LEN, LW | RR);
		if (!others[i]) {
			t_fail("ibv_reg_mr %zu in the second context: %s", i, strerror(errno));
			break;
		}
	}
	src = n ? others[n - 1] : NULL;
	if (src) {
		expect_share_err(src, pd, LW, EINVAL);
		mr = share(src, p2, 0, LW, &err);
		t_check(mr, "shared region in the source's own context: %s", strerror(err));
		dereg(mr, "second context's shared");
	}
	t_end("source of another context: EINVAL from the provider; its own context works");

	if (src) {
		forged = *src;
		forged.context = ctx;
		expect_share_err(&forged, pd, LW, ENOENT);
		forged.handle = pd->handle;
		expect_share_err(&forged, pd, LW, EINVAL);
	}
	t_end("kernel: handle absent from the caller's context ENOENT, a PD's handle EINVAL");

	for (i = 0; i < n; i++)
		dereg(others[i], "second context's");
	if (p2)
		ibv_dealloc_pd(p2);
	if (ctx2)
		ibv_close_device(ctx2);
	if (buf)
		munmap(buf, MAP_LEN);
}

/* Waits up to ms for one byte on fd. */
static int read_byte(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) != 1 || read(fd, &c, 1) != 1)
		return -1;
	return c;
}

/* Registers a source and a shared region, reports, and exits holding both. */
static void child_exit(int up, int down)
{
	struct ibv_context *c = open_dev(dev_name);
	struct ibv_pd *p = c ? ibv_alloc_pd(c) : NULL;
	char *buf = map(MAP_LEN);
	struct ibv_mr *src;

	src = p && buf ? ibv_reg_mr(p, buf + SRC_OFF, SRC_LEN, LW | RR) : NULL;
	if (!src || !stagdv_reg_shared_mr(src, p, 0, LW | RR))
		_exit(write(up, "E", 1) == 1 ? 1 : 2);
	if (write(up, "R", 1) != 1)
		_exit(3);
	read_byte(down, 60000);
	_exit(0);
}

static void case_exit(void)
{
	long bal0 = pin_balance(), bal;
	int up[2], down[2], status, c;
	pid_t pid;

	if (pipe(up) || pipe(down)) {
		t_fail("pipe: %s", strerror(errno));
		t_end("process exit with a source and a shared region releases every pin");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		child_exit(up[1], down[0]);
	close(up[1]);
	close(down[0]);
	c = read_byte(up[0], 60000);
	t_check(c == 'R', "child did not register (%s)", c == 'E' ? "failed" : "timeout");
	if (c == 'R') {
		bal = pin_balance();
		t_check(bal - bal0 == SRC_PAGES, "child registered: pin balance %+ld, expected %+d",
			bal - bal0, SRC_PAGES);
	}
	close(down[1]);
	waitpid(pid, &status, 0);
	t_check(WIFEXITED(status) && !WEXITSTATUS(status), "child status %#x", status);
	bal = pin_balance();
	t_check(bal == bal0, "after waitpid: pin balance %ld, was %ld before", bal, bal0);
	close(up[0]);
	t_end("process exit with a source and a shared region releases every pin");
}

int main(int argc, char **argv)
{
	char *buf;

	if (argc > 1)
		dev_name = argv[1];
	ctx = open_dev(dev_name);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	pd2 = ctx ? ibv_alloc_pd(ctx) : NULL;
	buf = map(MAP_LEN);
	if (!pd || !pd2 || !buf) {
		printf("not ok - shared_mr: open %s, allocate two PDs and a buffer\n#   %s\n",
		       dev_name, strerror(errno));
		return 1;
	}
	case_one_provider();
	cases_basic(buf);
	case_dereg_order(buf, true);
	case_dereg_order(buf, false);
	cases_access(buf);
	cases_other_context();
	case_exit();
	munmap(buf, MAP_LEN);
	ibv_dealloc_pd(pd2);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
