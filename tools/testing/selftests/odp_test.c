// SPDX-License-Identifier: GPL-2.0
/*
 * odp_test: regions paged on demand (IBV_ACCESS_ON_DEMAND) over loopback.
 *
 *   odp_test [DEVICE [CASE-PATTERN...]]
 *
 * Registration pins and charges nothing, whatever the length. Data moves
 * into and out of pages the region has never touched, and an access to a
 * part of the range the process has no mapping for (or no write
 * permission, for a write) fails as an out-of-bounds one does. The
 * coherence cases change the mappings under the regions between
 * transfers in both directions (munmap and a new mmap, mremap away and
 * back, MADV_DONTNEED, fork's copy-on-write, a file truncated) and check
 * every byte against what the process sees afterwards. Prefetch
 * (ibv_advise_mr), implicit regions, windows and atomics over paged
 * regions, and a deregistration racing transfers close the list.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/mempolicy.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qp.h"

#define OD		IBV_ACCESS_ON_DEMAND
#define ALL		(LW | RW | RR | RA)
#define NPG		8			/* pages of data per region */
#define LEN		(NPG * PG - 2 * GUARD)	/* so that the mapping is NPG pages */
#define HALF		(LEN / 2)
#define ITERS		16

/* ---- paged regions ---- */

/* A region paged on demand over a new mapping: GUARD, @len bytes, GUARD. */
static struct buf *obuf_at(char *mem, size_t len, int access, bool touch)
{
	struct buf *b = calloc(1, sizeof(*b));

	b->len = len;
	b->mem = mem;
	b->data = mem + GUARD;
	if (touch)
		fill(b->data, len, BLANK);
	buf_guard(b);
	b->mr = ibv_reg_mr(pd, b->mem, 2 * GUARD + len, access | OD);
	if (!b->mr) {
		t_fail("ibv_reg_mr ON_DEMAND %zu: %s", 2 * GUARD + len, strerror(errno));
		return NULL;
	}
	track(K_MR, b->mr, 0);
	return b;
}

static size_t maplen(size_t len)
{
	return (2 * GUARD + len + PG - 1) / PG * PG;
}

static struct buf *obuf(size_t len, int access, bool touch)
{
	char *mem = map(maplen(len), PROT_READ | PROT_WRITE);

	if (!mem) {
		t_fail("mmap: %s", strerror(errno));
		return NULL;
	}
	track(K_MAP, mem, maplen(len));
	return obuf_at(mem, len, access, touch);
}

/* A driver attribute of the region's line in "rdma -dd resource show mr"; -1 if none. */
static long long odp_attr(const struct ibv_mr *mr, const char *name)
{
	char cmd[128], line[1024], want[64], *p;
	long long val = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma -dd resource show mr lkey %u 2>&1", mr->lkey);
	snprintf(want, sizeof(want), " drv_%s ", name);
	fflush(stdout);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, want);
		if (p)
			val = strtoll(p + strlen(want), NULL, 0);
	}
	pclose(f);
	return val;
}

/* One WR of @op from @e, @len bytes at @loff of @local, at @roff of @remote; its status. */
static bool xfer(struct end *e, uint64_t id, enum ibv_wr_opcode op, struct buf *local,
		 size_t loff, struct buf *remote, size_t roff, size_t len,
		 enum ibv_wc_status status, const char *what)
{
	struct ibv_sge sg = sge_of(local, loff, len);
	struct ibv_send_wr wr = wr_rdma(id, op, &sg, 1, remote, roff);

	return !post(e, &wr) && expect_wc(e->scq, id, status, -1, NULL, what);
}

/* @len bytes at @off of @b are stream @seed from its byte @soff. */
static void expect_stream(const struct buf *b, size_t off, size_t len, uint64_t seed,
			  size_t soff, const char *what)
{
	size_t first = 0, bad = xdiff(b->data + off, soff, len, seed, &first);

	t_check(!bad, "%s: %zu of %zu bytes differ, the first at %zu", what, bad, len,
		off + first);
}

/* ---- registration ---- */

static long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static void odp_pins_nothing(void)
{
	const size_t big = 64UL << 30;
	struct rlimit small = { 64 * KIB, 64 * KIB };
	long pins = pin_balance(), vmpin = vmpin_kb();
	struct ibv_mr *mr;
	char *mem;
	long t0;

	/* Reserved, not backed: a pinned registration could not even start. */
	mem = mmap(NULL, big, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED) {
		t_fail("mmap 64 GiB PROT_NONE: %s", strerror(errno));
		return;
	}
	track(K_MAP, mem, big);
	t_check(!setrlimit(RLIMIT_MEMLOCK, &small), "setrlimit: %s", strerror(errno));
	t0 = now_us();
	mr = ibv_reg_mr(pd, mem, big, ALL | OD);
	printf("# 64 GiB registered on demand in %ld us\n", now_us() - t0);
	if (!mr) {
		t_fail("ibv_reg_mr 64 GiB ON_DEMAND under a 64 KiB memlock limit: %s",
		       strerror(errno));
		return;
	}
	track(K_MR, mr, 0);
	t_check(odp_attr(mr, "pages") == (long long)(big / PG), "drv_pages %lld, expected %zu",
		odp_attr(mr, "pages"), big / PG);
	t_check(odp_attr(mr, "odp_mapped") == 0, "drv_odp_mapped %lld, expected 0",
		odp_attr(mr, "odp_mapped"));
	t_check(vmpin_kb() == vmpin, "VmPin %ld kB, was %ld", vmpin_kb(), vmpin);
	t_check(pin_balance() == pins, "FOLL_PIN balance %ld, was %ld", pin_balance(), pins);
}

static void odp_flags(void)
{
	char *mem = map(PG, PROT_READ | PROT_WRITE);
	struct ibv_mr *mr;

	track(K_MAP, mem, PG);
	mr = ibv_reg_mr(pd, mem, PG, RW | OD);
	t_check(!mr && errno == EINVAL, "ON_DEMAND|REMOTE_WRITE without LOCAL_WRITE: %s",
		mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, mem, 0, LW | OD);
	t_check(!mr && errno == EINVAL, "ON_DEMAND of 0 bytes: %s",
		mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

static void odp_caps(void)
{
	struct ibv_device_attr_ex a = {};
	const uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
			    IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC |
			    IBV_ODP_SUPPORT_SRQ_RECV;

	if (ibv_query_device_ex(ctx, NULL, &a)) {
		t_fail("ibv_query_device_ex: %s", strerror(errno));
		return;
	}
	t_check(a.odp_caps.general_caps == (IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT),
		"general_caps %#llx", (ull)a.odp_caps.general_caps);
	t_check(a.odp_caps.per_transport_caps.rc_odp_caps == rc, "rc_odp_caps %#x",
		a.odp_caps.per_transport_caps.rc_odp_caps);
	t_check(a.odp_caps.per_transport_caps.uc_odp_caps ==
		(rc & ~(IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC)),
		"uc_odp_caps %#x", a.odp_caps.per_transport_caps.uc_odp_caps);
	t_check(a.odp_caps.per_transport_caps.ud_odp_caps ==
		(IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV),
		"ud_odp_caps %#x", a.odp_caps.per_transport_caps.ud_odp_caps);
}

/* ---- data ---- */

static const char zero[PG];

/* Every opcode between two paged regions, neither touched by the data path before. */
static void odp_rc_traffic(void)
{
	struct buf *x = obuf(LEN, ALL, false), *y = obuf(LEN, ALL, false);
	struct ibv_recv_wr rwr = {}, *bad;
	struct ibv_sge rs, ss;
	struct ibv_send_wr wr;
	uint64_t *word, orig;
	struct end *a, *b;

	if (!x || !y || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	t_check(odp_attr(y->mr, "odp_mapped") == 0, "mapped before any access: %lld",
		odp_attr(y->mr, "odp_mapped"));
	/* A READ of pages nobody ever touched: zeroes, as the process would read. */
	memset(x->data, 0xee, PG);
	xfer(a, 1, IBV_WR_RDMA_READ, x, 0, y, 0, PG, IBV_WC_SUCCESS, "READ of untouched");
	t_check(!memcmp(x->data, zero, PG) && !memcmp(y->data, zero, PG),
		"READ of untouched pages: not zeroes");
	t_check(odp_attr(y->mr, "odp_mapped") > 0, "nothing mapped after a READ");

	xfill(x->data, 0, HALF, 1);
	xfer(a, 2, IBV_WR_RDMA_WRITE, x, 0, y, 0, HALF, IBV_WC_SUCCESS, "WRITE");
	expect_stream(y, 0, HALF, 1, 0, "WRITE into untouched pages");
	t_check(odp_attr(y->mr, "odp_faults") > 0, "no fault counted");

	xfill(y->data + HALF, HALF, HALF, 2);
	xfer(a, 3, IBV_WR_RDMA_READ, x, HALF, y, HALF, HALF, IBV_WC_SUCCESS, "READ");
	expect_stream(x, HALF, HALF, 2, HALF, "READ");

	xfill(x->data, 0, LEN, 3);
	rs = sge_of(y, 0, LEN);
	rwr = (struct ibv_recv_wr){ .wr_id = 4, .sg_list = &rs, .num_sge = 1 };
	t_check(!ibv_post_recv(b->qp, &rwr, &bad), "post_recv: %s", strerror(errno));
	ss = sge_of(x, 0, LEN);
	wr = wr_send(5, &ss, 1);
	if (!post(a, &wr)) {
		expect_wc(a->scq, 5, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "SEND");
		expect_wc(b->rcq, 4, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "RECV");
	}
	expect_stream(y, 0, LEN, 3, 0, "SEND");

	/* Atomics on a paged word. */
	word = (uint64_t *)(y->data + 2 * PG);
	*word = 40;
	ss = sge_of(x, 0, 8);
	wr = wr_rdma(6, IBV_WR_ATOMIC_FETCH_AND_ADD, &ss, 1, y, 2 * PG);
	wr.wr.atomic.remote_addr = (uintptr_t)word;
	wr.wr.atomic.rkey = y->mr->rkey;
	wr.wr.atomic.compare_add = 2;
	if (!post(a, &wr))
		expect_wc(a->scq, 6, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, NULL, "FETCH_ADD");
	memcpy(&orig, x->data, sizeof(orig));
	t_check(word[0] == 42 && orig == 40, "FETCH_ADD: word %llu, orig %llu", (ull)word[0],
		(ull)orig);
	wr.wr_id = 7;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 7;
	if (!post(a, &wr))
		expect_wc(a->scq, 7, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP, NULL, "CMP_AND_SWP");
	t_check(word[0] == 7, "CMP_AND_SWP: word %llu", (ull)word[0]);
	expect_guards(x, "x");
	expect_guards(y, "y");
}

/* A region over three pages of which the middle one is unmapped, the last read-only. */
static void odp_holes(void)
{
	struct buf *x = obuf(LEN, ALL, true), *y;
	char *mem = map(3 * PG, PROT_READ | PROT_WRITE);
	struct end *a, *b;

	if (!x || !mem)
		return;
	track(K_MAP, mem, 3 * PG);
	memset(mem, 0x5a, 3 * PG);
	y = obuf_at(mem, 3 * PG - 2 * GUARD, ALL, false);
	if (!y)
		return;
	t_check(!munmap(mem + PG, PG), "munmap: %s", strerror(errno));
	t_check(!mprotect(mem + 2 * PG, PG, PROT_READ), "mprotect: %s", strerror(errno));

	if (pair_new(IBV_QPT_RC, &a, &b)) {
		xfer(a, 1, IBV_WR_RDMA_WRITE, x, 0, y, PG - GUARD, 16,
		     IBV_WC_REM_ACCESS_ERR, "WRITE into the unmapped page");
		expect_state(a->qp, IBV_QPS_ERR, "the requester after REM_ACCESS_ERR");
	}
	if (pair_new(IBV_QPT_RC, &a, &b)) {
		xfer(a, 2, IBV_WR_RDMA_WRITE, x, 0, y, 2 * PG - GUARD, 16,
		     IBV_WC_REM_ACCESS_ERR, "WRITE into the read-only page");
		t_check(mem[2 * PG] == 0x5a, "the read-only page changed");
	}
	if (pair_new(IBV_QPT_RC, &a, &b)) {
		xfer(a, 3, IBV_WR_RDMA_READ, x, 0, y, 2 * PG - GUARD, 16, IBV_WC_SUCCESS,
		     "READ of the read-only page");
		t_check(x->data[0] == 0x5a && x->data[15] == 0x5a, "READ got %#x",
			(uint8_t)x->data[0]);
		/* The local side: a WRITE from the hole is a local protection error. */
		xfer(b, 4, IBV_WR_RDMA_WRITE, y, PG - GUARD, x, 0, 16, IBV_WC_LOC_PROT_ERR,
		     "WRITE from the unmapped page");
	}
	if (pair_new(IBV_QPT_RC, &a, &b))
		/* A READ's local side writes: into the read-only page it may not. */
		xfer(b, 5, IBV_WR_RDMA_READ, y, 2 * PG - GUARD, x, 0, 16, IBV_WC_LOC_PROT_ERR,
		     "READ into the read-only page");
	t_check(mem[2 * PG] == 0x5a && mem[GUARD] == 0x5a, "the region's pages changed");
}

/* ---- coherence ---- */

enum change { CH_REMAP, CH_MREMAP, CH_DONTNEED, CH_TRUNCATE, CH_MIGRATE };

/* Moves every page of [mem, mem + len) to the other of NUMA nodes 0 and 1. */
static void migrate(char *mem, size_t len)
{
	int n = len / PG, i, node[NPG + 1], status[NPG + 1];
	void *pages[NPG + 1];

	if (n > NPG + 1) {
		t_fail("%d pages to move: more than NPG + 1", n);
		return;
	}
	for (i = 0; i < n; i++)
		pages[i] = mem + i * PG;
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
		t_fail("move_pages (where): %s", strerror(errno));
		return;
	}
	for (i = 0; i < n; i++)
		node[i] = !status[0];
	if (syscall(SYS_move_pages, 0, n, pages, node, status, MPOL_MF_MOVE)) {
		t_fail("move_pages to node %d: %s", node[0], strerror(errno));
		return;
	}
	for (i = 0; i < n; i++)
		t_check(status[i] == node[0], "page %d on node %d after move_pages to %d", i,
			status[i], node[0]);
}

/*
 * Changes the mapping under @b the way @ch says; the content of the
 * mapping afterwards is what the process sees, and the guards are put
 * back.
 */
static void change(struct buf *b, enum change ch, int fd, char *spare)
{
	size_t ml = maplen(b->len);
	void *p;

	switch (ch) {
	case CH_REMAP:
		t_check(!munmap(b->mem, ml), "munmap: %s", strerror(errno));
		p = mmap(b->mem, ml, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		t_check(p == b->mem, "mmap again at %p: %s", b->mem, strerror(errno));
		break;
	case CH_MREMAP:
		p = mremap(b->mem, ml, ml, MREMAP_MAYMOVE | MREMAP_FIXED, spare);
		t_check(p == spare, "mremap away: %s", strerror(errno));
		p = mremap(spare, ml, ml, MREMAP_MAYMOVE | MREMAP_FIXED, b->mem);
		t_check(p == b->mem, "mremap back: %s", strerror(errno));
		/* The spare range is a hole now: reserve it again for the next time. */
		p = mmap(spare, ml, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		t_check(p == spare, "mmap spare: %s", strerror(errno));
		break;
	case CH_DONTNEED:
		t_check(!madvise(b->mem, ml, MADV_DONTNEED), "madvise: %s", strerror(errno));
		break;
	case CH_TRUNCATE:
		t_check(!ftruncate(fd, 0) && !ftruncate(fd, ml), "ftruncate: %s", strerror(errno));
		break;
	case CH_MIGRATE:
		migrate(b->mem, ml);
		break;
	}
	buf_guard(b);
}

/*
 * ITERS rounds: the mapping of both regions changes, then a writes half
 * of its region into the other half of b's, b the same into a's, and a
 * READs back what b wrote; every byte as the process sees it.
 */
static void coherence(enum change ch)
{
	size_t ml = maplen(LEN);
	struct buf *x, *y;
	char *spare = NULL, *mem[2];
	struct end *a, *b;
	int fd[2] = { -1, -1 }, i;
	uint64_t s;

	for (i = 0; i < 2; i++) {
		if (ch == CH_TRUNCATE) {
			fd[i] = memfd_create("odp", 0);
			if (fd[i] < 0 || ftruncate(fd[i], ml)) {
				t_fail("memfd: %s", strerror(errno));
				return;
			}
			mem[i] = mmap(NULL, ml, PROT_READ | PROT_WRITE, MAP_SHARED, fd[i], 0);
		} else {
			mem[i] = mmap(NULL, ml, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		}
		if (mem[i] == MAP_FAILED) {
			t_fail("mmap: %s", strerror(errno));
			return;
		}
		track(K_MAP, mem[i], ml);
	}
	if (ch == CH_MREMAP) {
		spare = mmap(NULL, ml, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		track(K_MAP, spare, ml);
	}
	x = obuf_at(mem[0], LEN, ALL, true);
	y = obuf_at(mem[1], LEN, ALL, true);
	if (!x || !y || !pair_new(IBV_QPT_RC, &a, &b))
		goto out;
	for (i = 0; i < ITERS; i++) {
		s = 100 + 3 * i;
		/* What is there before the change must still be there after it. */
		xfill(x->data, 0, HALF, s);
		xfill(y->data, 0, HALF, s + 1);
		change(x, ch, fd[0], spare);
		change(y, ch, fd[1], spare);
		if (ch == CH_MREMAP || ch == CH_MIGRATE) {
			expect_stream(x, 0, HALF, s, 0, "x after the move");
			expect_stream(y, 0, HALF, s + 1, 0, "y after the move");
		} else {
			xfill(x->data, 0, HALF, s);
			xfill(y->data, 0, HALF, s + 1);
		}
		if (!xfer(a, 3 * i, IBV_WR_RDMA_WRITE, x, 0, y, HALF, HALF, IBV_WC_SUCCESS,
			  "WRITE a to b") ||
		    !xfer(b, 3 * i + 1, IBV_WR_RDMA_WRITE, y, 0, x, HALF, HALF, IBV_WC_SUCCESS,
			  "WRITE b to a"))
			break;
		expect_stream(y, HALF, HALF, s, 0, "b's region after a's WRITE");
		expect_stream(x, HALF, HALF, s + 1, 0, "a's region after b's WRITE");
		memset(x->data + HALF, 0, HALF);
		if (!xfer(a, 3 * i + 2, IBV_WR_RDMA_READ, x, HALF, y, HALF, HALF, IBV_WC_SUCCESS,
			  "READ a from b"))
			break;
		expect_stream(x, HALF, HALF, s, 0, "a's region after its READ");
		if (ch == CH_TRUNCATE) {
			/* The file itself holds the data, not a page it let go. */
			char *back = malloc(HALF);

			t_check(pread(fd[1], back, HALF, GUARD + HALF) == (ssize_t)HALF &&
				!xdiff(back, 0, HALF, s, NULL), "the file lacks a's WRITE");
			free(back);
		}
		expect_guards(x, "x");
		expect_guards(y, "y");
	}
	/* The first change found nothing mapped yet; each later one did. */
	t_check(odp_attr(y->mr, "odp_invalidations") >= ITERS - 1,
		"%lld invalidations counted over %d changes",
		odp_attr(y->mr, "odp_invalidations"), ITERS);
out:
	for (i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

static void odp_munmap_mmap(void)
{
	coherence(CH_REMAP);
}

static void odp_mremap(void)
{
	coherence(CH_MREMAP);
}

static void odp_dontneed(void)
{
	coherence(CH_DONTNEED);
}

static void odp_truncate(void)
{
	coherence(CH_TRUNCATE);
}

static void odp_migrate(void)
{
	if (access("/sys/devices/system/node/node1", F_OK)) {
		case_skip("one NUMA node: nowhere to migrate to");
		return;
	}
	coherence(CH_MIGRATE);
}

/*
 * After a fork the parent's pages are the child's too, write-protected:
 * a WRITE into the parent's region must break the sharing and land in the
 * parent's page, never in the one the child still sees.
 */
static void odp_fork_cow(void)
{
	struct buf *x = obuf(LEN, ALL, true), *y = obuf(LEN, ALL, true);
	int go[2], i, status;
	struct end *a, *b;
	pid_t pid;

	if (!x || !y || !pair_new(IBV_QPT_RC, &a, &b) || pipe(go))
		return;
	for (i = 0; i < 4; i++) {
		xfill(y->data, 0, LEN, 200 + i);
		/* Mapped for the region before the fork. */
		xfill(x->data, 0, LEN, 300 + i);
		xfer(a, 10 * i, IBV_WR_RDMA_WRITE, x, 0, y, 0, PG, IBV_WC_SUCCESS, "first WRITE");
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			char c;
			/* The child sees what was there at the fork, whatever comes after. */
			if (read(go[0], &c, 1) != 1)
				_exit(2);
			_exit(xdiff(y->data + PG, PG, LEN - PG, 200 + i, NULL) ? 1 : 0);
		}
		t_check(pid > 0, "fork: %s", strerror(errno));
		if (pid < 0)
			return;
		xfer(a, 10 * i + 1, IBV_WR_RDMA_WRITE, x, PG, y, PG, LEN - PG, IBV_WC_SUCCESS,
		     "WRITE after the fork");
		expect_stream(y, 0, LEN, 300 + i, 0, "the parent's view after the fork");
		t_check(write(go[1], "g", 1) == 1, "pipe: %s", strerror(errno));
		t_check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			WEXITSTATUS(status) == 0,
			"the child's pages changed under it (status %#x)", status);
	}
	expect_guards(y, "y");
	close(go[0]);
	close(go[1]);
}

/* ---- prefetch, implicit regions, windows ---- */

static void odp_advise(void)
{
	struct buf *y = obuf(LEN, ALL, false);
	struct ibv_sge sg;
	long t0;
	int ret;

	if (!y)
		return;
	sg = sge_of(y, 0, 4 * PG - GUARD);
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sg, 1);
	t_check(!ret, "PREFETCH_NO_FAULT: %s", strerror(ret));
	t_check(odp_attr(y->mr, "odp_mapped") <= 1,
		"PREFETCH_NO_FAULT of untouched pages mapped %lld",
		odp_attr(y->mr, "odp_mapped"));
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH,
			    &sg, 1);
	t_check(!ret, "PREFETCH_WRITE: %s", strerror(ret));
	t_check(odp_attr(y->mr, "odp_mapped") == 4, "PREFETCH_WRITE of 4 pages mapped %lld",
		odp_attr(y->mr, "odp_mapped"));
	sg = sge_of(y, 4 * PG - GUARD, PG);
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, &sg, 1);
	t_check(!ret, "PREFETCH_WRITE (asynchronous): %s", strerror(ret));
	/* It runs on a work of its own: the page comes, a little later. */
	for (t0 = now_ms(); odp_attr(y->mr, "odp_mapped") < 5 && now_ms() - t0 < WAIT_MS;)
		usleep(10000);
	t_check(odp_attr(y->mr, "odp_mapped") == 5, "asynchronous PREFETCH_WRITE: %lld mapped",
		odp_attr(y->mr, "odp_mapped"));
	/* A deregistration with one still queued waits for it. */
	sg = sge_of(y, 5 * PG - GUARD, 2 * PG);
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sg, 1);
	t_check(!ret, "PREFETCH (asynchronous): %s", strerror(ret));

	sg.lkey ^= 0x5a;
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &sg, 1);
	t_check(ret == ENOENT, "PREFETCH with a key of nothing: %s, expected ENOENT",
		strerror(ret));
	sg = sge_of(y, 0, LEN + GUARD + 1);
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &sg, 1);
	t_check(ret == ERANGE, "PREFETCH past the region: %s, expected ERANGE", strerror(ret));
}

static void odp_advise_pinned(void)
{
	struct buf *p = buf_new(PG, LW);
	struct ibv_sge sg;
	int ret;

	if (!p)
		return;
	sg = sge_of(p, 0, PG);
	ret = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &sg, 1);
	t_check(ret == EINVAL, "PREFETCH of a pinned region: %s, expected EINVAL",
		strerror(ret));
}

/* A region over the whole address space: any address is its own iova. */
static void odp_implicit(void)
{
	struct buf *x = buf_new(LEN, ALL);
	char *heap = map(4 * PG, PROT_READ | PROT_WRITE);
	struct ibv_mr *imr;
	struct buf view;
	struct end *a, *b;

	if (!x || !heap)
		return;
	track(K_MAP, heap, 4 * PG);
	imr = ibv_reg_mr(pd, NULL, SIZE_MAX, ALL | OD);
	if (!imr) {
		t_fail("implicit ibv_reg_mr(NULL, SIZE_MAX): %s", strerror(errno));
		return;
	}
	track(K_MR, imr, 0);
	view = (struct buf){ .mem = heap, .data = heap + GUARD, .len = 4 * PG - 2 * GUARD,
			     .mr = imr };
	buf_guard(&view);
	if (!pair_new(IBV_QPT_RC, &a, &b))
		return;
	xfill(x->data, 0, 2 * PG, 9);
	xfer(a, 1, IBV_WR_RDMA_WRITE, x, 0, &view, PG, 2 * PG, IBV_WC_SUCCESS,
	     "WRITE through the implicit region");
	expect_stream(&view, PG, 2 * PG, 9, 0, "memory written through the implicit region");
	expect_guards(&view, "around it");
	/* Its local side too: a SEND's buffer named by the implicit lkey. */
	xfer(b, 2, IBV_WR_RDMA_WRITE, &view, PG, x, 0, 2 * PG, IBV_WC_SUCCESS,
	     "WRITE from the implicit region");
	/* An address no mapping covers. */
	t_check(!munmap(heap + 3 * PG, PG), "munmap: %s", strerror(errno));
	xfer(a, 3, IBV_WR_RDMA_WRITE, x, 0, &view, 3 * PG - GUARD, 16, IBV_WC_REM_ACCESS_ERR,
	     "WRITE through the implicit region into an unmapped page");
}

/* A type 2 window bound over a paged region: the window's rkey moves data into it. */
static void odp_window(void)
{
	struct buf *x = buf_new(LEN, ALL), *y = obuf(LEN, ALL | IBV_ACCESS_MW_BIND, false);
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_mw *mw;
	struct end *a, *b;
	struct buf win;

	if (!x || !y || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mw) {
		t_fail("ibv_alloc_mw: %s", strerror(errno));
		return;
	}
	wr.wr_id = 1;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = y->mr, .addr = (uintptr_t)y->data + PG, .length = 2 * PG,
		.mw_access_flags = RW | RR,
	};
	t_check(!ibv_post_send(b->qp, &wr, &bad), "bind: %s", strerror(errno));
	if (expect_wc(b->scq, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL, "type 2 bind")) {
		win = *y;
		win.mr = &(struct ibv_mr){ .rkey = wr.bind_mw.rkey };
		xfill(x->data, 0, 2 * PG, 11);
		xfer(a, 2, IBV_WR_RDMA_WRITE, x, 0, &win, PG, 2 * PG, IBV_WC_SUCCESS,
		     "WRITE through the window");
		expect_stream(y, PG, 2 * PG, 11, 0, "the region under the window");
		xfer(a, 3, IBV_WR_RDMA_WRITE, x, 0, &win, 3 * PG, 1, IBV_WC_REM_ACCESS_ERR,
		     "WRITE past the window");
	}
	t_check(!ibv_dealloc_mw(mw), "ibv_dealloc_mw: %s", strerror(errno));
}

/*
 * rereg: new rights keep the region paged and its keys; dropping
 * ON_DEMAND in place is EINVAL, the region unchanged; a new translation
 * over another mapping is paged too, and data lands there.
 */
static void odp_rereg(void)
{
	struct buf *x = buf_new(LEN, ALL), *y = obuf(LEN, LW | RR, false);
	char *other = map(maplen(LEN), PROT_READ | PROT_WRITE);
	uint32_t lkey;
	struct end *a, *b;
	int ret;

	if (!x || !y || !other || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	track(K_MAP, other, maplen(LEN));
	lkey = y->mr->lkey;
	ret = ibv_rereg_mr(y->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, ALL | OD);
	t_check(!ret && y->mr->lkey == lkey, "rereg ACCESS: %d (%s), lkey %#x was %#x", ret,
		strerror(errno), y->mr->lkey, lkey);
	xfill(x->data, 0, PG, 21);
	xfer(a, 1, IBV_WR_RDMA_WRITE, x, 0, y, 0, PG, IBV_WC_SUCCESS, "WRITE after new rights");
	expect_stream(y, 0, PG, 21, 0, "WRITE after new rights");

	ret = ibv_rereg_mr(y->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, ALL);
	t_check(ret == IBV_REREG_MR_ERR_CMD && errno == EINVAL,
		"rereg dropping ON_DEMAND in place: %d (%s), expected EINVAL", ret,
		strerror(errno));
	t_check(y->mr->lkey == lkey, "keys changed by a failed rereg");

	ret = ibv_rereg_mr(y->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, other, maplen(LEN),
			   0);
	t_check(!ret, "rereg TRANSLATION: %d (%s)", ret, strerror(errno));
	if (ret)
		return;
	y->mem = other;
	y->data = other + GUARD;
	buf_guard(y);
	t_check(odp_attr(y->mr, "odp_mapped") == 0, "the new translation starts with %lld mapped",
		odp_attr(y->mr, "odp_mapped"));
	xfill(x->data, 0, 2 * PG, 22);
	xfer(a, 2, IBV_WR_RDMA_WRITE, x, 0, y, PG, 2 * PG, IBV_WC_SUCCESS,
	     "WRITE into the new translation");
	expect_stream(y, PG, 2 * PG, 22, 0, "the other mapping");
	expect_guards(y, "y");
}

/* ---- races ---- */

struct racer {
	struct buf *y;
	bool stop;		/* read and written with __atomic */
	long changes;
};

static void *dontneed_loop(void *arg)
{
	struct racer *r = arg;

	/*
	 * A pause between changes: without one every change of the page
	 * tables invalidates each fault before it can be published, and an
	 * access can only give up (as a NIC's would), which is not what
	 * this case is about.
	 */
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		madvise(r->y->mem, maplen(r->y->len), MADV_DONTNEED);
		r->changes++;
		usleep(200);
	}
	return NULL;
}

/*
 * Pages taken away while transfers run into them and out of them: every
 * transfer completes successfully, none waits for ever, nothing crashes.
 * What lands may be zeroed again at once, so only the guards and the
 * statuses are checked.
 */
static void odp_race_dontneed(void)
{
	struct buf *x = buf_new(LEN, ALL), *y = obuf(LEN, ALL, true);
	struct racer r = { .y = y };
	struct end *a, *b;
	pthread_t t;
	int i;

	if (!x || !y || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	if (pthread_create(&t, NULL, dontneed_loop, &r)) {
		t_fail("pthread_create");
		return;
	}
	for (i = 0; i < 200 && !t_failing(); i++) {
		xfer(a, 2 * i, IBV_WR_RDMA_WRITE, x, 0, y, 0, LEN, IBV_WC_SUCCESS,
		     "WRITE while pages go");
		xfer(a, 2 * i + 1, IBV_WR_RDMA_READ, x, 0, y, 0, LEN, IBV_WC_SUCCESS,
		     "READ while pages go");
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	expect_guards(x, "x");
	printf("# %ld MADV_DONTNEED during 400 transfers; %lld invalidations\n", r.changes,
	       odp_attr(y->mr, "odp_invalidations"));
}

/* The region deregistered while WRITEs into it are in flight: each succeeds or fails cleanly. */
static void odp_race_dereg(void)
{
	struct buf *x = buf_new(LEN, ALL), *y = obuf(LEN, ALL, false);
	struct ibv_sge sg;
	struct ibv_send_wr wr;
	struct ibv_wc wc[DEPTH];
	struct end *a, *b;
	int i, n, got = 0, ok = 0;

	if (!x || !y || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	sg = sge_of(x, 0, LEN);
	for (i = 0; i < DEPTH / 2; i++) {
		wr = wr_rdma(i, IBV_WR_RDMA_WRITE, &sg, 1, y, 0);
		if (post(a, &wr))
			break;
	}
	t_check(!ibv_dereg_mr(y->mr), "ibv_dereg_mr: %s", strerror(errno));
	untrack(y->mr);
	while (got < i && (n = poll_n(a->scq, wc, 1, WAIT_MS)) == 1) {
		got++;
		if (wc[0].status == IBV_WC_SUCCESS)
			ok++;
		else
			t_check(wc[0].status == IBV_WC_REM_ACCESS_ERR ||
				wc[0].status == IBV_WC_WR_FLUSH_ERR,
				"WRITE %llu: %s", (ull)wc[0].wr_id,
				ibv_wc_status_str(wc[0].status));
	}
	t_check(got == i, "%d of %d WRITEs completed", got, i);
	printf("# %d of %d WRITEs landed before the deregistration\n", ok, i);
}

/* ---- huge pages ---- */

#define HPG		(2UL << 20)
#define NR_HUGEPAGES	"/proc/sys/vm/nr_hugepages"

static long hugepages(long set)
{
	long n = -1;
	FILE *f;

	if (set >= 0) {
		f = fopen(NR_HUGEPAGES, "w");
		if (!f)
			return -1;
		fprintf(f, "%ld\n", set);
		if (fclose(f))
			return -1;
	}
	f = fopen(NR_HUGEPAGES, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/*
 * IBV_ACCESS_HUGETLB: over two 2 MiB huge pages, a region in the first and
 * one across the boundary of the two, paged on demand: WRITE and READ land
 * byte for byte. Over normal pages EINVAL, as the core's own paged
 * regions; without ON_DEMAND EOPNOTSUPP; an implicit region EINVAL.
 */
static void odp_hugetlb(void)
{
	long old = hugepages(-1), got;
	struct buf *x, *y;
	struct end *a, *b;
	struct ibv_mr *mr;
	char *h, *n;

	/* The debug kernel is built without hugetlbfs; Debian's have it. */
	if (old < 0 && errno == ENOENT) {
		case_skip("the kernel has no hugetlbfs (" NR_HUGEPAGES ")");
		return;
	}
	got = old < 0 ? -1 : hugepages(old + 2);
	if (got < old + 2) {
		t_fail("%s: %ld huge pages, could not add 2 (%s)", NR_HUGEPAGES, got,
		       strerror(errno));
		goto out;
	}
	h = mmap(NULL, 2 * HPG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB,
		 -1, 0);
	if (h == MAP_FAILED) {
		t_fail("mmap of 2 huge pages: %s", strerror(errno));
		goto out;
	}
	track(K_MAP, h, 2 * HPG);
	n = map(PG, PROT_READ | PROT_WRITE);
	track(K_MAP, n, PG);

	mr = ibv_reg_mr(pd, n, PG, LW | OD | IBV_ACCESS_HUGETLB);
	t_check(!mr && errno == EINVAL, "HUGETLB over normal pages: %s",
		mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, h, PG, LW | IBV_ACCESS_HUGETLB);
	t_check(!mr && errno == EOPNOTSUPP, "HUGETLB without ON_DEMAND: %s",
		mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, NULL, SIZE_MAX, LW | OD | IBV_ACCESS_HUGETLB);
	t_check(!mr && errno == EINVAL, "HUGETLB implicit: %s",
		mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);

	x = obuf_at(h, LEN, ALL | IBV_ACCESS_HUGETLB, true);
	y = obuf_at(h + HPG - NPG / 2 * PG, LEN, ALL | IBV_ACCESS_HUGETLB, false);
	if (!x || !y || !pair_new(IBV_QPT_RC, &a, &b))
		goto out;
	xfill(x->data, 0, LEN, 11);
	xfer(a, 1, IBV_WR_RDMA_WRITE, x, 0, y, 0, LEN, IBV_WC_SUCCESS, "WRITE across huge pages");
	expect_stream(y, 0, LEN, 11, 0, "WRITE across the boundary of two huge pages");
	xfill(y->data, 0, LEN, 12);
	xfer(a, 2, IBV_WR_RDMA_READ, x, 0, y, 0, LEN, IBV_WC_SUCCESS, "READ across huge pages");
	expect_stream(x, 0, LEN, 12, 0, "READ across the boundary of two huge pages");
	t_check(odp_attr(y->mr, "odp_faults") > 0, "no fault counted");
	expect_guards(x, "x");
	expect_guards(y, "y");
out:
	if (old >= 0)
		hugepages(old);
}

/* ---- running the cases ---- */

#define CASE(n, f) { n, f }

static const struct qp_case odp_cases[] = {
	CASE("64 GiB ON_DEMAND under a 64 KiB memlock limit: no pin, no charge, nothing mapped",
	     odp_pins_nothing),
	CASE("ON_DEMAND flags: remote write without local write EINVAL, 0 bytes EINVAL",
	     odp_flags),
	CASE("odp_caps: implicit; RC all, UC send/recv/write, UD send/recv", odp_caps),
	CASE("RC WRITE, READ, SEND and atomics between untouched paged regions", odp_rc_traffic),
	CASE("a hole REM_ACCESS_ERR; read-only: READ ok, WRITE REM_ACCESS_ERR; local: LOC_PROT_ERR",
	     odp_holes),
	CASE("munmap and mmap again between transfers both ways: every byte lands in the new pages",
	     odp_munmap_mmap),
	CASE("mremap away and back between transfers: data kept, transfers land in the moved pages",
	     odp_mremap),
	CASE("MADV_DONTNEED on every iteration: transfers both ways land in the new pages",
	     odp_dontneed),
	CASE("truncating a shared file mapping: transfers land in the file's new pages",
	     odp_truncate),
	CASE("move_pages() to the other NUMA node between transfers: they land in the new pages",
	     odp_migrate),
	CASE("fork: a WRITE after it lands in the parent's page, the child's copy unchanged",
	     odp_fork_cow),
	CASE("ibv_advise_mr: NO_FAULT maps nothing new, PREFETCH_WRITE maps (async too), bad key",
	     odp_advise),
	CASE("ibv_advise_mr on a pinned region: EINVAL", odp_advise_pinned),
	CASE("implicit region (NULL, SIZE_MAX): WRITE to and from any mapping, none at a hole",
	     odp_implicit),
	CASE("type 2 window over a paged region: WRITE through it lands, past it REM_ACCESS_ERR",
	     odp_window),
	CASE("rereg: rights keep paging and keys, pinned in place EINVAL, a new translation paged",
	     odp_rereg),
	CASE("HUGETLB: WRITE and READ across two 2 MiB pages land; over normal pages EINVAL, "
	     "without ON_DEMAND EOPNOTSUPP, implicit EINVAL", odp_hugetlb),
	CASE("MADV_DONTNEED in a loop while WRITEs and READs run: all succeed", odp_race_dontneed),
	CASE("deregistration while WRITEs into the region fly: each succeeds or fails cleanly",
	     odp_race_dereg),
	{ NULL }
};

int main(int argc, char **argv)
{
	const struct qp_case *parts[] = { odp_cases };

	return qp_cases_main("odp", "STAG_ODP_TIMEOUT", 60, parts, ARRAY_SIZE(parts), argc, argv);
}
