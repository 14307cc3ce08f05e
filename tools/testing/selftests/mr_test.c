// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions from userspace, through libibverbs: alignment, access
 * rules, bad ranges, iovas, RLIMIT_MEMLOCK, overlapping and large
 * registrations and what "rdma resource show mr" reports. What pinning
 * costs is make bench's (tools/bench/reg_bench.c). Runs in the guest as
 * root.
 *
 *   mr_test [DEVICE]		the cases, as TAP lines (default stag0)
 *
 * Pin accounting is read from two places: VmPin in /proc/self/status (the
 * process's mm->pinned_vm, which the driver charges against
 * RLIMIT_MEMLOCK) and the kernel-wide nr_foll_pin_acquired -
 * nr_foll_pin_released of /proc/vmstat (every page pinned with FOLL_PIN
 * and not yet released), folded through /proc/sys/vm/stat_refresh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)
#define NOBODY		65534

#define MWB	IBV_ACCESS_MW_BIND

static struct ibv_context *ctx;
static struct ibv_pd *pd;

/* ---- pin accounting ---- */

/* Pages a registration of [addr, addr + len) pins. */
static unsigned long span_pages(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;

	return ((a + len + PG - 1) / PG) - a / PG;
}

/* ---- regions ---- */

/* Registers at iova; errno is kept from the failure, 0 on success. */
static struct ibv_mr *reg(void *addr, size_t len, uint64_t iova, int access, int *err)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr_iova2(pd, addr, len, iova, access);
	*err = mr ? 0 : errno;
	return mr;
}

static struct ibv_mr *reg_va(void *addr, size_t len, int access, int *err)
{
	return reg(addr, len, (uintptr_t)addr, access, err);
}

static void dereg(struct ibv_mr *mr, const char *what)
{
	int ret = ibv_dereg_mr(mr);

	t_check(!ret, "ibv_dereg_mr of %s: %s", what, strerror(ret));
}

/*
 * Expects a registration to fail with want; a region that registers
 * anyway is released again so that it cannot leak into later cases.
 */
static void expect_err(void *addr, size_t len, uint64_t iova, int access, int want)
{
	struct ibv_mr *mr;
	int err;

	mr = reg(addr, len, iova, access, &err);
	if (mr) {
		t_fail("registered (lkey %#x) with access %#x, expected %s", mr->lkey, access,
		       strerror(want));
		dereg(mr, "unexpected region");
		return;
	}
	t_check(err == want, "errno %d (%s), expected %d (%s)", err, strerror(err), want,
		strerror(want));
}

/* ---- cases ---- */

/* Registers [base + off, +len), checks key and VmPin, deregisters. */
static void case_unaligned(const char *name, size_t off, size_t len)
{
	size_t maplen = (off + len + PG - 1) / PG * PG;
	char *base = map(maplen, PROT_READ | PROT_WRITE);
	long pin0 = vmpin_kb(), want;
	struct ibv_mr *mr;
	int err;

	if (!base) {
		t_fail("mmap %zu: %s", maplen, strerror(errno));
		t_end("%s", name);
		return;
	}
	want = span_pages(base + off, len) * (PG / KIB);
	mr = reg_va(base + off, len, LW | RR, &err);
	if (!mr) {
		t_fail("reg %zu bytes at page offset %#zx: %s", len, off % PG, strerror(err));
	} else {
		t_check(mr->lkey, "lkey is 0");
		t_check(vmpin_kb() - pin0 == want, "VmPin grew by %ld kB, expected %ld kB",
			vmpin_kb() - pin0, want);
		dereg(mr, name);
		t_check(vmpin_kb() == pin0, "VmPin %ld kB after dereg, expected %ld kB", vmpin_kb(),
			pin0);
	}
	munmap(base, maplen);
	t_end("%s", name);
}

static void cases_unaligned(void)
{
	case_unaligned("1 byte at page offset 0x123", 0x123, 1);
	case_unaligned("1 byte at the last byte of a page", PG - 1, 1);
	case_unaligned("10000 bytes at page offset 0x200 (3 pages)", 0x200, 10000);
	case_unaligned("200 bytes straddling a page boundary", PG - 100, 200);
	case_unaligned("ends on the last byte of a page", 0x100, PG - 0x100);
	case_unaligned("odd length 12345 at page offset 0x7", 0x7, 12345);
}

static const char *access_str(int a)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s%s%s%s%s%s", a & LW ? "LW|" : "", a & RW ? "RW|" : "",
		 a & RR ? "RR|" : "", a & RA ? "RA|" : "", a & MWB ? "MWB|" : "",
		 a ? "" : "none|");
	buf[strlen(buf) - 1] = 0;
	return buf;
}

/* Every combination of the five rights: valid ones register, with the rkey rule. */
static void case_access_combinations(char *buf)
{
	struct ibv_mr *mr;
	int a, err;

	for (a = 0; a < 32; a++) {
		bool valid = !(a & (RW | RA)) || (a & LW);

		mr = reg_va(buf, PG, a, &err);
		if (!valid) {
			t_check(!mr && err == EINVAL, "%s: %s, expected EINVAL", access_str(a),
				mr ? "registered" : strerror(err));
		} else if (!mr) {
			t_fail("%s: %s", access_str(a), strerror(err));
		} else {
			t_check(mr->lkey, "%s: lkey 0", access_str(a));
			t_check(mr->rkey == mr->lkey, "%s: rkey %#x, expected the lkey %#x",
				access_str(a), mr->rkey, mr->lkey);
		}
		if (mr)
			dereg(mr, access_str(a));
	}
	t_end("all 32 combinations of LW, RW, RR, RA, MW_BIND: %s",
	      "valid ones register, rkey = lkey");
}

static void cases_access(void)
{
	char *buf = map(PG, PROT_READ | PROT_WRITE);
	struct ibv_mr *mr;
	int err;

	if (!buf) {
		t_fail("mmap: %s", strerror(errno));
		t_end("access rules");
		return;
	}
	expect_err(buf, PG, (uintptr_t)buf, RW, EINVAL);
	t_end("REMOTE_WRITE without LOCAL_WRITE: EINVAL");
	expect_err(buf, PG, (uintptr_t)buf, RA, EINVAL);
	t_end("REMOTE_ATOMIC without LOCAL_WRITE: EINVAL");
	expect_err(buf, PG, (uintptr_t)buf, RR | RW | RA | MWB, EINVAL);
	t_end("every remote right but LOCAL_WRITE: EINVAL");
	/*
	 * libibverbs clears only the optional range (bits 20-29) and only when
	 * the kernel lacks optional-access support; bits 10-19 and 30 reach the
	 * kernel as they are.
	 */
	expect_err(buf, PG, (uintptr_t)buf, LW | (1 << 10), EINVAL);
	t_end("unknown access bit 1<<10: EINVAL");
	expect_err(buf, PG, (uintptr_t)buf, LW | (1 << 19), EINVAL);
	t_end("unknown access bit 1<<19: EINVAL");
	expect_err(buf, PG, (uintptr_t)buf, LW | (1 << 30), EINVAL);
	t_end("unknown access bit 1<<30: EINVAL");
	expect_err(buf, PG, (uintptr_t)buf, LW | IBV_ACCESS_ZERO_BASED, EOPNOTSUPP);
	t_end("ZERO_BASED flag (zero-based is iova 0 instead): EOPNOTSUPP");
	expect_err(buf, PG, (uintptr_t)buf, LW | IBV_ACCESS_HUGETLB, EOPNOTSUPP);
	t_end("HUGETLB flag: EOPNOTSUPP");
	expect_err(buf, PG, (uintptr_t)buf, RW | IBV_ACCESS_ON_DEMAND, EINVAL);
	t_end("ON_DEMAND with remote write but no local write: EINVAL");

	mr = reg_va(buf, PG, LW | IBV_ACCESS_RELAXED_ORDERING | (1 << 28), &err);
	t_check(mr, "LW|RELAXED_ORDERING|1<<28: %s", strerror(err));
	if (mr)
		dereg(mr, "optional bits");
	t_end("optional access bits (RELAXED_ORDERING, 1<<28) are ignored");

	case_access_combinations(buf);

	/*
	 * As on rxe and mlx5, and as rdma-core's tests expect (they exchange
	 * the rkey, then add remote rights by rereg): the gate, not the key,
	 * keeps remote peers out of a region without remote rights.
	 */
	mr = reg_va(buf, PG, LW, &err);
	t_check(mr, "LW: %s", strerror(err));
	if (mr) {
		t_check(mr->rkey == mr->lkey, "rkey %#x, expected the lkey %#x", mr->rkey,
			mr->lkey);
		dereg(mr, "LW");
	}
	t_end("LOCAL_WRITE only: rkey = lkey");
	munmap(buf, PG);
}

/* A failed registration must leave nothing pinned, in the mm or anywhere. */
static void expect_nothing_pinned(long pin0, long bal0)
{
	long bal = pin_balance();

	t_check(vmpin_kb() == pin0, "VmPin %ld kB, expected %ld kB", vmpin_kb(), pin0);
	t_check(bal == bal0, "pin balance %ld, was %ld before", bal, bal0);
}

static void cases_ranges(void)
{
	long pin0 = vmpin_kb(), bal0 = pin_balance();
	char *buf = map(4 * PG, PROT_READ | PROT_WRITE);
	struct ibv_mr *mr;
	int err;

	expect_err(buf, 0, (uintptr_t)buf, LW, EINVAL);
	t_end("length 0: EINVAL");

	munmap(buf + 2 * PG, 2 * PG);
	expect_err(buf + 2 * PG, PG, (uintptr_t)buf + 2 * PG, 0, EFAULT);
	expect_nothing_pinned(pin0, bal0);
	t_end("unmapped address: EFAULT, nothing pinned");
	expect_err(buf, 4 * PG, (uintptr_t)buf, LW, EFAULT);
	expect_nothing_pinned(pin0, bal0);
	t_end("2 mapped pages then 2 unmapped: EFAULT, the first 2 unpinned again");
	expect_err(buf, 4 * PG, (uintptr_t)buf, 0, EFAULT);
	expect_nothing_pinned(pin0, bal0);
	t_end("same without write rights: EFAULT, nothing pinned");

	memset(buf, 0x5a, 2 * PG);
	mprotect(buf, 2 * PG, PROT_READ);
	expect_err(buf, 2 * PG, (uintptr_t)buf, LW, EFAULT);
	expect_nothing_pinned(pin0, bal0);
	t_end("read-only mapping with LOCAL_WRITE: EFAULT");
	expect_err(buf, 2 * PG, (uintptr_t)buf, LW | RW | RR, EFAULT);
	t_end("read-only mapping with LOCAL_WRITE|REMOTE_WRITE: EFAULT");
	mr = reg_va(buf, 2 * PG, RR, &err);
	t_check(mr, "REMOTE_READ: %s", strerror(err));
	if (mr) {
		t_check(vmpin_kb() - pin0 == 8, "VmPin grew by %ld kB, expected 8",
			vmpin_kb() - pin0);
		dereg(mr, "read-only");
	}
	expect_nothing_pinned(pin0, bal0);
	t_end("read-only mapping without write rights (REMOTE_READ): registers");
	munmap(buf, 2 * PG);

	/*
	 * 2^28 pages, of which only the first is mapped: the kernel must find
	 * that out by pinning, not by first allocating for every page (which
	 * warned in kvmalloc). Any kernel report fails the guest run.
	 */
	buf = mmap((void *)(4UL << 30), PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (buf == MAP_FAILED) {
		t_fail("mmap at 4 GiB: %s", strerror(errno));
	} else {
		expect_err(buf, 1UL << 40, (uintptr_t)buf, LW, EFAULT);
		expect_nothing_pinned(pin0, bal0);
		munmap(buf, PG);
	}
	t_end("1 TiB with only its first page mapped: EFAULT, nothing pinned, no warning");
}

static void cases_iova(void)
{
	char *buf = map(4 * PG, PROT_READ | PROT_WRITE);
	const uint64_t other = 0x123450000ULL;
	struct ibv_mr *a, *z;
	int err;

	a = reg(buf, 3 * PG, other, LW | RR, &err);
	t_check(a, "iova %#llx: %s", (ull)other, strerror(err));
	if (a)
		expect_listed(a, other, 3 * PG, LIST_RKEY | LIST_IOVA, NULL);
	t_end("iova other than the VA: registers, listed with that iova");

	z = reg(buf + PG, 2 * PG + 100, 0, LW | RW, &err);
	t_check(z, "iova 0: %s", strerror(err));
	if (z)
		expect_listed(z, 0, 2 * PG + 100, LIST_RKEY | LIST_IOVA, NULL);
	t_end("zero-based (iova 0): registers, listed with iova 0");
	if (a)
		dereg(a, "iova");
	if (z)
		dereg(z, "zero-based");
	t_end("dereg of both");

	/* The core insists iova and VA share their offset in the page. */
	expect_err(buf + 0x10, PG, 0x20, LW, EINVAL);
	t_end("iova at another page offset than the VA: EINVAL");
	/* Same offset (0xff5), so only the driver's overflow check can refuse it. */
	expect_err(buf + PG - 11, PG, UINT64_MAX - 10, LW, EINVAL);
	t_end("iova range wrapping past U64_MAX (U64_MAX - 10, 4096 bytes): EINVAL");
	expect_err(buf, 2 * PG, UINT64_MAX - PG + 1, LW, EINVAL);
	t_end("iova range wrapping by one page (U64_MAX - 4095, 8192 bytes): EINVAL");
	a = reg(buf, PG, UINT64_MAX - PG + 1, LW | RR, &err);
	t_check(a, "iova U64_MAX - 4095, 4096 bytes (last byte U64_MAX): %s", strerror(err));
	if (a)
		dereg(a, "top of the iova space");
	t_end("iova range whose last byte is U64_MAX: registers");
	munmap(buf, 4 * PG);
}

/* The restrack line of a region, field by field. */
static void case_restrack(void)
{
	char *buf = map(4 * PG, PROT_READ | PROT_WRITE);
	struct ibv_mr *mr;
	uint32_t lkey;
	int err;

	mr = reg_va(buf + 0x80, 3 * PG, LW | RR | RW, &err);
	t_check(mr, "reg: %s", strerror(err));
	if (mr) {
		t_check(mr->rkey == mr->lkey, "rkey %#x != lkey %#x", mr->rkey, mr->lkey);
		expect_listed(mr, (uintptr_t)buf + 0x80, 3 * PG, LIST_RKEY | LIST_IOVA, NULL);
		lkey = mr->lkey;
		dereg(mr, "restrack");
		expect_unlisted(lkey);
	}
	t_end("rdma resource show mr: lkey, rkey, iova, mrlen and pid match; gone after dereg");
	munmap(buf, 4 * PG);
}

/* A field of the device's debugfs TPT file, or -1. */
static long tpt_stat(const char *field)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/debug/stag/%s/tpt", dev_name);
	return file_field(path, field);
}

/* debugfs follows registrations: entries, regions and pinned pages. */
static void case_debugfs(void)
{
	char *buf = map(64 * PG, PROT_READ | PROT_WRITE);
	long mrs0 = tpt_stat("mrs"), pinned0 = tpt_stat("pinned_pages");
	struct ibv_mr *a, *b;
	int err;

	/* Other devices (rxe0, for comparison) have no such file. */
	if (mrs0 < 0 && strncmp(dev_name, "stag", 4)) {
		t_skip("debugfs TPT file", "not a stag device");
		munmap(buf, 64 * PG);
		return;
	}
	t_check(mrs0 >= 0, "no /sys/kernel/debug/stag/%s/tpt", dev_name);
	a = reg_va(buf + 0x10, 16 * PG, LW, &err);
	t_check(a, "a: %s", strerror(err));
	b = reg_va(buf, 64 * PG, RR, &err);
	t_check(b, "b: %s", strerror(err));
	t_check(tpt_stat("mrs") - mrs0 == 2, "mrs +%ld, expected +2", tpt_stat("mrs") - mrs0);
	/* 16 pages at offset 0x10 span 17. */
	t_check(tpt_stat("pinned_pages") - pinned0 == 17 + 64, "pinned_pages +%ld, expected +81",
		tpt_stat("pinned_pages") - pinned0);
	if (a)
		dereg(a, "a");
	if (b)
		dereg(b, "b");
	t_check(tpt_stat("mrs") == mrs0, "mrs %ld after dereg, expected %ld",
		tpt_stat("mrs"), mrs0);
	t_check(tpt_stat("pinned_pages") == pinned0, "pinned_pages %ld after dereg, expected %ld",
		tpt_stat("pinned_pages"), pinned0);
	t_end("debugfs tpt: regions and pinned pages follow reg and dereg");
	munmap(buf, 64 * PG);
}

/* Three regions over the same pages each charge and hold their own pins. */
static void case_overlap(void)
{
	char *buf = map(12 * PG, PROT_READ | PROT_WRITE);
	long pin0 = vmpin_kb(), bal0 = pin_balance();
	struct ibv_mr *a, *b, *c;
	uint32_t bkey = 0;
	int err;

	a = reg_va(buf, 8 * PG, LW | RR, &err);
	t_check(a, "a: %s", strerror(err));
	t_check(vmpin_kb() - pin0 == 32, "after a: VmPin +%ld kB, expected +32", vmpin_kb() - pin0);
	b = reg_va(buf, 8 * PG, LW | RR, &err);
	t_check(b, "b: %s", strerror(err));
	t_check(vmpin_kb() - pin0 == 64, "after b: VmPin +%ld kB, expected +64", vmpin_kb() - pin0);
	c = reg_va(buf + 4 * PG, 8 * PG, LW, &err);
	t_check(c, "c: %s", strerror(err));
	t_check(vmpin_kb() - pin0 == 96, "after c: VmPin +%ld kB, expected +96", vmpin_kb() - pin0);
	t_check(pin_balance() - bal0 == 24, "pin balance +%ld, expected +24", pin_balance() - bal0);
	if (!a || !b || !c)
		goto out;
	t_check(a->lkey != b->lkey && b->lkey != c->lkey && a->lkey != c->lkey,
		"lkeys not distinct: %#x %#x %#x", a->lkey, b->lkey, c->lkey);
	bkey = b->lkey;
	dereg(b, "b");
	b = NULL;
	t_check(vmpin_kb() - pin0 == 64, "after dereg b: VmPin +%ld kB, expected +64",
		vmpin_kb() - pin0);
	expect_listed(a, (uintptr_t)buf, 8 * PG, LIST_RKEY, NULL);
	expect_listed(c, (uintptr_t)buf + 4 * PG, 8 * PG, LIST_RKEY, NULL);
	expect_unlisted(bkey);
out:
	if (a)
		dereg(a, "a");
	if (b)
		dereg(b, "b");
	if (c)
		dereg(c, "c");
	expect_nothing_pinned(pin0, bal0);
	t_end("overlapping regions: each pins its own pages; dereg of one leaves the others");
	munmap(buf, 12 * PG);
}

static bool fits(size_t len)
{
	long avail_kb = -1;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &avail_kb) == 1)
			break;
	if (f)
		fclose(f);
	return avail_kb > 0 && (size_t)avail_kb * KIB > len + 256 * MIB;
}

/*
 * The big region: 1 GiB, or STAG_MR_BIG_MIB MiB. The debug kernel's run
 * asks for less: pinning a GiB there took most of a minute, and a smaller
 * region takes the same paths (many pin batches, runs of pages, the
 * killed owner's release) under KASAN and kmemleak; the other kernels
 * pin the whole GiB.
 */
static size_t big = GIB;
static char big_name[32] = "1 GiB";

static void big_init(void)
{
	const char *env = getenv("STAG_MR_BIG_MIB");
	unsigned long mib = env ? strtoul(env, NULL, 10) : 0;

	if (!mib || mib >= 1024 || GIB % (mib * MIB))
		return;
	big = mib * MIB;
	snprintf(big_name, sizeof(big_name), "%lu MiB", mib);
}

static void case_1g(void)
{
	long pin0 = vmpin_kb(), bal0 = pin_balance(), bal;
	long kb = big / KIB, pages = big / PG;
	struct ibv_mr *mr;
	char *buf, name[64];
	int err;

	if (!fits(big)) {
		snprintf(name, sizeof(name), "%s region", big_name);
		t_skip(name, "less than its size and 256 MiB available");
		return;
	}
	buf = map(big, PROT_READ | PROT_WRITE);
	if (!buf) {
		t_fail("mmap %s: %s", big_name, strerror(errno));
		t_end("%s region", big_name);
		return;
	}
	mr = reg_va(buf, big, LW | RR | RW, &err);
	t_check(mr, "reg: %s", strerror(err));
	if (mr) {
		bal = pin_balance();
		t_check(vmpin_kb() - pin0 == kb, "VmPin +%ld kB, expected +%ld",
			vmpin_kb() - pin0, kb);
		t_check(bal - bal0 == pages, "pin balance +%ld, expected +%ld", bal - bal0, pages);
		dereg(mr, big_name);
	}
	expect_nothing_pinned(pin0, bal0);
	t_end("%s region: VmPin +%ld kB, %ld pins, all released by dereg", big_name, kb, pages);
	munmap(buf, big);
}

static void child_1g(int up)
{
	struct ibv_context *c = open_dev(dev_name);
	struct ibv_pd *p = c ? ibv_alloc_pd(c) : NULL;
	char *buf = map(big, PROT_READ | PROT_WRITE);

	if (!p || !buf || !ibv_reg_mr(p, buf, big, LW | RR | RW))
		_exit(write(up, "E", 1) == 1 ? 1 : 2);
	if (write(up, "R", 1) != 1)
		_exit(3);
	for (;;)
		pause();
}

/* A process killed with a big region registered leaves nothing pinned. */
static void case_1g_killed(void)
{
	long bal0 = pin_balance(), bal, kb = big / KIB, pages = big / PG;
	int up[2], status, c;
	char name[64];
	pid_t pid;

	if (!fits(big)) {
		snprintf(name, sizeof(name), "%s region of a killed process", big_name);
		t_skip(name, "less than its size and 256 MiB available");
		return;
	}
	if (pipe(up)) {
		t_fail("pipe: %s", strerror(errno));
		t_end("%s region of a killed process", big_name);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		child_1g(up[1]);
	close(up[1]);
	c = read_byte(up[0], 300000);
	t_check(c == 'R', "child did not register %s (%s)", big_name,
		c == 'E' ? "failed" : "timeout");
	if (c == 'R') {
		bal = pin_balance();
		t_check(status_kb(pid, "VmPin") == kb, "child VmPin %ld kB, expected %ld",
			status_kb(pid, "VmPin"), kb);
		t_check(bal - bal0 == pages, "pin balance +%ld, expected +%ld", bal - bal0, pages);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	t_check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status %#x", status);
	bal = pin_balance();
	t_check(bal == bal0, "after waitpid: pin balance %ld, was %ld before", bal, bal0);
	close(up[0]);
	t_end("%s region of a SIGKILLed process: %s", big_name,
	      "every pin released by the time waitpid returns");
}

/*
 * The child of the memlock case, as nobody: it prints its own cases and
 * tells the parent (which alone may refresh vmstat) when the failed
 * registration is done.
 */
static void child_memlock(int up, int down)
{
	struct rlimit rl = { 64 * KIB, 64 * KIB };
	char *big = map(MIB, PROT_READ | PROT_WRITE);
	char *small = map(32 * KIB, PROT_READ | PROT_WRITE);
	struct ibv_mr *mr;
	int err;

	t_check(!setrlimit(RLIMIT_MEMLOCK, &rl), "setrlimit: %s", strerror(errno));
	t_check(!setgroups(0, NULL) && !setgid(NOBODY) && !setuid(NOBODY),
		"dropping to uid/gid %d: %s", NOBODY, strerror(errno));
	ctx = open_dev(dev_name);
	t_check(ctx, "open %s as uid %d: %s", dev_name, getuid(), strerror(errno));
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	t_check(!ctx || pd, "alloc_pd: %s", strerror(errno));
	if (pd && big)
		expect_err(big, MIB, (uintptr_t)big, LW, ENOMEM);
	t_check(vmpin_kb() == 0, "VmPin %ld kB after the failure, expected 0", vmpin_kb());
	t_end("memlock: 1 MiB over a 64 KiB RLIMIT_MEMLOCK as uid %d: ENOMEM, VmPin 0 kB", NOBODY);

	if (write(up, "F", 1) != 1 || read_byte(down, 60000) != 'A')
		_exit(1);

	mr = pd && small ? reg_va(small, 32 * KIB, LW, &err) : NULL;
	t_check(mr, "32 KiB: %s", pd ? strerror(err) : "no PD");
	if (mr) {
		t_check(vmpin_kb() == 32, "VmPin %ld kB, expected 32", vmpin_kb());
		dereg(mr, "32 KiB");
		t_check(vmpin_kb() == 0, "VmPin %ld kB after dereg, expected 0", vmpin_kb());
	}
	t_end("memlock: 32 KiB under the limit registers, VmPin 32 kB, 0 after dereg");
	fflush(stdout);
	_exit(0);
}

static void case_memlock(void)
{
	long bal0 = pin_balance(), bal;
	int up[2], down[2], status;
	pid_t pid;

	if (pipe(up) || pipe(down)) {
		t_fail("pipe: %s", strerror(errno));
		t_end("memlock");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		child_memlock(up[1], down[0]);
	close(up[1]);
	close(down[0]);
	if (read_byte(up[0], 60000) == 'F') {
		bal = pin_balance();
		t_check(bal == bal0, "pin balance %ld, was %ld before", bal, bal0);
		t_end("memlock: kernel-wide pin counters back at baseline after the ENOMEM");
		if (write(down[1], "A", 1) != 1)
			kill(pid, SIGKILL);
	} else {
		kill(pid, SIGKILL);
	}
	waitpid(pid, &status, 0);
	t_check(WIFEXITED(status) && !WEXITSTATUS(status), "child status %#x", status);
	t_end("memlock: the unprivileged child finished");
	close(up[0]);
	close(down[1]);
}

static int rereg(struct ibv_mr *mr, int flags, struct ibv_pd *npd, void *addr, size_t len,
		 int access, int *err)
{
	int ret;

	errno = 0;
	ret = ibv_rereg_mr(mr, flags, npd, addr, len, access);
	*err = ret ? errno : 0;
	return ret;
}

/* A rereg that fails must leave the region as it was. */
static void expect_rereg_err(struct ibv_mr *mr, int flags, void *addr, size_t len, int access,
			     int want)
{
	uint32_t lkey = mr->lkey, rkey = mr->rkey;
	int ret, err;

	ret = rereg(mr, flags, NULL, addr, len, access, &err);
	t_check(ret == IBV_REREG_MR_ERR_CMD && err == want,
		"ibv_rereg_mr: %d, errno %d (%s), expected %d and %s", ret, err, strerror(err),
		IBV_REREG_MR_ERR_CMD, strerror(want));
	t_check(mr->lkey == lkey && mr->rkey == rkey, "keys changed to %#x/%#x", mr->lkey,
		mr->rkey);
	expect_listed(mr, (uintptr_t)mr->addr, mr->length, LIST_RKEY, NULL);
}

static void cases_rereg(void)
{
	char *buf = map(8 * PG, PROT_READ | PROT_WRITE);
	long pin0 = vmpin_kb(), bal0 = pin_balance();
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *mr, *ro;
	uint32_t old;
	int err;

	mr = reg_va(buf, PG, LW, &err);
	if (!mr || !pd2) {
		t_fail("setup: %s", strerror(mr ? errno : err));
		t_end("rereg");
		goto out;
	}

	/* New rights alone keep the region and its keys (rdma-core's tests rely on it). */
	old = mr->lkey;
	t_check(!rereg(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, LW | RR, &err),
		"rereg: %s", strerror(err));
	t_check(mr->lkey == old && mr->rkey == old, "keys %#x/%#x, old key %#x", mr->lkey,
		mr->rkey, old);
	t_check(vmpin_kb() - pin0 == 4, "VmPin +%ld kB, expected +4 (the same pins)",
		vmpin_kb() - pin0);
	expect_listed(mr, (uintptr_t)buf, PG, LIST_RKEY, NULL);
	t_end("rereg access LW -> LW|RR: the same keys and pins");

	expect_rereg_err(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0, RW, EINVAL);
	t_end("rereg to REMOTE_WRITE without LOCAL_WRITE: EINVAL, the region unchanged");
	expect_rereg_err(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0, LW | IBV_ACCESS_HUGETLB,
			 EOPNOTSUPP);
	t_end("rereg to access with HUGETLB: EOPNOTSUPP, the region unchanged");
	expect_rereg_err(mr, IBV_REREG_MR_CHANGE_TRANSLATION, (void *)0x1000, PG, 0, EFAULT);
	t_end("rereg translation to an unmapped page: EFAULT, the region unchanged");

	old = mr->lkey;
	t_check(!rereg(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf + PG + 0x80, 3 * PG, 0, &err),
		"rereg: %s", strerror(err));
	t_check(mr->lkey != old, "lkey unchanged");
	t_check(mr->addr == buf + PG + 0x80 && mr->length == 3 * PG, "addr %p length %zu",
		mr->addr, mr->length);
	t_check(vmpin_kb() - pin0 == 16, "VmPin +%ld kB, expected +16 (4 pages)",
		vmpin_kb() - pin0);
	t_check(pin_balance() - bal0 == 4, "pin balance +%ld, expected +4", pin_balance() - bal0);
	expect_listed(mr, (uintptr_t)buf + PG + 0x80, 3 * PG, LIST_RKEY | LIST_IOVA, NULL);
	t_end("rereg translation: %s",
	      "new range pinned, old released, listed with the new iova and length");

	if (rereg(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0, &err)) {
		t_fail("rereg: %s", strerror(err));
	} else {
		t_check(mr->pd == pd2, "mr->pd not the new PD");
		err = ibv_dealloc_pd(pd2);
		t_check(err == EBUSY, "dealloc of the region's new PD: %s, expected EBUSY",
			strerror(err));
		if (!err)
			pd2 = NULL;
	}
	expect_listed(mr, (uintptr_t)mr->addr, mr->length, LIST_RKEY, NULL);
	t_end("rereg PD: the region moves to the new PD, which is then busy");

	/* libibverbs passes CHANGE_PD; the core drops it when the PD is the region's own. */
	old = mr->lkey;
	t_check(!rereg(mr, IBV_REREG_MR_CHANGE_PD, mr->pd, NULL, 0, 0, &err),
		"rereg to the region's own PD: %s", strerror(err));
	t_check(mr->lkey == old && mr->rkey == old, "keys %#x/%#x, old key %#x", mr->lkey,
		mr->rkey, old);
	expect_listed(mr, (uintptr_t)mr->addr, mr->length, LIST_RKEY, NULL);
	t_end("rereg PD to the PD the region has: succeeds, nothing changes");

	ro = reg_va(buf + 5 * PG, 2 * PG, RR, &err);
	t_check(ro, "RR region: %s", strerror(err));
	if (ro) {
		t_check(!rereg(ro, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, LW | RR, &err),
			"rereg: %s", strerror(err));
		t_check(vmpin_kb() - pin0 == 24, "VmPin +%ld kB, expected +24", vmpin_kb() - pin0);
		t_check(pin_balance() - bal0 == 6, "pin balance +%ld, expected +6",
			pin_balance() - bal0);
		expect_listed(ro, (uintptr_t)buf + 5 * PG, 2 * PG, LIST_RKEY, NULL);
		dereg(ro, "RR -> LW|RR");
	}
	t_end("rereg RR -> LW|RR: re-pinned for write, the read-only pins released");

	dereg(mr, "reregistered");
	mr = NULL;
	if (pd2)
		t_check(!ibv_dealloc_pd(pd2), "dealloc of the second PD after dereg");
	pd2 = NULL;
	expect_nothing_pinned(pin0, bal0);
	t_end("dereg after rereg: nothing left pinned");
out:
	if (mr)
		ibv_dereg_mr(mr);
	if (pd2)
		ibv_dealloc_pd(pd2);
	munmap(buf, 8 * PG);
}

int main(int argc, char **argv)
{
	t_suite = "mr";
	big_init();
	if (argc > 1)
		dev_name = argv[1];
	ctx = open_dev(dev_name);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		t_fail("%s", strerror(errno));
		t_end("open %s and allocate a PD", dev_name);
		return 1;
	}
	cases_unaligned();
	cases_access();
	cases_ranges();
	cases_iova();
	case_restrack();
	case_debugfs();
	case_overlap();
	cases_rereg();
	case_memlock();
	case_1g();
	case_1g_killed();
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
