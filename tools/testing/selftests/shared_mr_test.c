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
 * Pins are counted as in mr_test, by testlib.c: VmPin of /proc/self/status
 * and the kernel-wide nr_foll_pin_acquired - nr_foll_pin_released of
 * /proc/vmstat.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stagdv.h"
#include "testlib.h"

/* The source regions: 5 pages' worth, starting 0x100 into the first. */
#define SRC_OFF		0x100UL
#define SRC_LEN		(4 * PG + 0x80)
#define SRC_PAGES	5
#define MAP_LEN		(6 * PG)

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;

/* ---- pin accounting ---- */

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

/* Memory for the source regions, its bytes set so that they are faulted in. */
static char *map_src(size_t len)
{
	char *p = map(len, PROT_READ | PROT_WRITE);

	if (p)
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

/* The source's length and pages, whichever region over them is listed. */
static void expect_src_listed(const struct ibv_mr *mr, uint64_t iova)
{
	struct res_mr r;

	if (!expect_listed(mr, iova, SRC_LEN, LIST_RKEY | LIST_IOVA, &r))
		return;
	t_check(r.has_pages && r.pages == SRC_PAGES, "lkey %#x: pages %llu, expected %d",
		mr->lkey, (ull)r.pages, SRC_PAGES);
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
		expect_src_listed(src, (uintptr_t)src->addr);
		expect_src_listed(mr, 0);
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
		expect_src_listed(second, source_first ? 0x10000 : (uintptr_t)buf + SRC_OFF);
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
		t_check(!mr || mr->rkey == mr->lkey, "no remote rights: rkey %#x, lkey %#x",
			mr ? mr->rkey : 0, mr ? mr->lkey : 0);
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

	if (src)
		expect_share_err(src, pd, LW | IBV_ACCESS_ZERO_BASED, EOPNOTSUPP);
	t_end("defined but unsupported flag ZERO_BASED: EOPNOTSUPP");
	if (src)
		expect_share_err(src, pd, LW | IBV_ACCESS_ON_DEMAND, EINVAL);
	t_end("ON_DEMAND over pinned pages (they are shared as they are): EINVAL");
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
	char *buf = map_src(MAP_LEN);
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

/* Registers a source and a shared region, reports, and exits holding both. */
static void child_exit(int up, int down)
{
	struct ibv_context *c = open_dev(dev_name);
	struct ibv_pd *p = c ? ibv_alloc_pd(c) : NULL;
	char *buf = map_src(MAP_LEN);
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
	if (pid == 0) {
		/* The parent's close of down[1] is the child's cue: no copy here. */
		close(up[0]);
		close(down[1]);
		child_exit(up[1], down[0]);
	}
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

	t_suite = "shared_mr";
	if (argc > 1)
		dev_name = argv[1];
	ctx = open_dev(dev_name);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	pd2 = ctx ? ibv_alloc_pd(ctx) : NULL;
	buf = map_src(MAP_LEN);
	if (!pd || !pd2 || !buf) {
		t_fail("%s", strerror(errno));
		t_end("open %s, allocate two PDs and a buffer", dev_name);
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
