// SPDX-License-Identifier: GPL-2.0
/*
 * Regions over dma-bufs (ibv_reg_dmabuf_mr): a range of a buffer another
 * driver exports, a udmabuf (memfd pages) or a DMA heap's, registered by
 * its fd, offset and length. The buffer is watched through its own mmap,
 * not the region: every case compares the bytes of the whole buffer, so
 * the bytes around the registered range are its guards. RC WRITE and
 * READ at its rkey, a SEND from its lkey, one byte past it refused with
 * nothing written, every refusal's errno, the buffer living on after its
 * fds are closed until the region goes, and a dereg racing WRITEs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "qp.h"

#define DB_LEN		(4 * 4096)	/* the buffer */
#define DB_OFF		1000		/* the region's range of it: not page-aligned */
#define DB_REG		(DB_LEN - 2 * DB_OFF - 3)
/* Anything with the offset's place in its page (the core's rule): the region's users name it so. */
#define DB_IOVA		(0x7e570000ull + DB_OFF)
#define DB_SEED		0xdb

enum exporter { UDMABUF, HEAP_SYSTEM };

struct dmabuf {
	int fd;
	char *map;	/* the buffer, through the dma-buf's own mmap */
};

/* A buffer of DB_LEN bytes from @how, mapped; false with a skip when the kernel has none. */
static bool dmabuf_new(enum exporter how, struct dmabuf *d)
{
	int dev, mfd = -1;

	d->fd = -1;
	if (how == UDMABUF) {
		struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = DB_LEN };

		dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
		if (dev < 0) {
			case_skip("no /dev/udmabuf (a kernel without CONFIG_UDMABUF)");
			return false;
		}
		/* udmabuf takes a memfd that can no longer shrink. */
		mfd = memfd_create("stag-dmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
		if (mfd < 0 || ftruncate(mfd, DB_LEN) || fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
			t_fail("memfd: %s", strerror(errno));
		} else {
			c.memfd = mfd;
			d->fd = ioctl(dev, UDMABUF_CREATE, &c);
			if (d->fd < 0)
				t_fail("UDMABUF_CREATE: %s", strerror(errno));
		}
		if (mfd >= 0)
			close(mfd);
	} else {
		struct dma_heap_allocation_data a = {
			.len = DB_LEN, .fd_flags = O_RDWR | O_CLOEXEC,
		};

		dev = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
		if (dev < 0) {
			case_skip("no /dev/dma_heap/system (a kernel without its DMA heaps)");
			return false;
		}
		if (ioctl(dev, DMA_HEAP_IOCTL_ALLOC, &a))
			t_fail("DMA_HEAP_IOCTL_ALLOC: %s", strerror(errno));
		else
			d->fd = a.fd;
	}
	close(dev);
	if (d->fd < 0)
		return false;
	d->map = mmap(NULL, DB_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, 0);
	if (d->map == MAP_FAILED) {
		t_fail("mmap of the dma-buf: %s", strerror(errno));
		close(d->fd);
		return false;
	}
	xfill(d->map, 0, DB_LEN, DB_SEED);
	return true;
}

static void dmabuf_free(struct dmabuf *d)
{
	munmap(d->map, DB_LEN);
	if (d->fd >= 0)
		close(d->fd);
}

static struct ibv_mr *dmabuf_reg(const struct dmabuf *d, int access)
{
	struct ibv_mr *mr = ibv_reg_dmabuf_mr(pd, DB_OFF, DB_REG, DB_IOVA, d->fd, access);

	if (!mr)
		t_fail("ibv_reg_dmabuf_mr of [%d, +%d) at %#llx: %s", DB_OFF, DB_REG, DB_IOVA,
		       strerror(errno));
	return mr;
}

/* A struct buf naming the region, for wr_rdma(): its iova and keys, no memory of ours. */
static struct buf remote_of(struct ibv_mr *mr)
{
	return (struct buf){ .data = (char *)(uintptr_t)DB_IOVA, .len = DB_REG, .mr = mr };
}

/* The whole buffer is DB_SEED's but [@off, +@len), which is @src's. */
static void expect_buffer(const struct dmabuf *d, size_t off, const void *src, size_t len,
			  const char *what)
{
	size_t first;

	if (xdiff(d->map, 0, off, DB_SEED, &first))
		t_fail("%s: byte %zu before the written range changed", what, first);
	if (len)
		expect_bytes(d->map + off, src, len, what);
	if (xdiff(d->map + off + len, off + len, DB_LEN - off - len, DB_SEED, &first))
		t_fail("%s: byte %zu after the written range changed", what, first);
}

/*
 * WRITEs all of the region from @src, filled from @seed, and READs it
 * back into @dst: both complete, the bytes read are those written, @dst's
 * guards intact. False when a post fails.
 */
static bool write_read(struct end *a, struct buf *src, struct buf *dst, struct buf *rem,
		       unsigned int seed, const char *when)
{
	struct ibv_send_wr wr;
	struct ibv_sge s;
	char what[64];

	fill(src->data, DB_REG, seed);
	s = sge_of(src, 0, DB_REG);
	wr = wr_rdma(1, IBV_WR_RDMA_WRITE, &s, 1, rem, 0);
	if (post(a, &wr))
		return false;
	snprintf(what, sizeof(what), "WRITE of the region, %s", when);
	expect_wc(a->scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, what);
	s = sge_of(dst, 0, DB_REG);
	wr = wr_rdma(2, IBV_WR_RDMA_READ, &s, 1, rem, 0);
	if (post(a, &wr))
		return false;
	snprintf(what, sizeof(what), "READ of the region, %s", when);
	expect_wc(a->scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, NULL, what);
	expect_data(dst, seed, what);
	expect_guards(dst, what);
	return true;
}

/*
 * WRITE all of the region, READ it back, SEND from it, then a WRITE of
 * its last byte and the one past it: the first lands, the second is
 * REM_ACCESS_ERR and writes nothing.
 */
static void data_moves(enum exporter how)
{
	struct buf *src = buf_new(DB_REG, LW), *dst = buf_new(DB_REG, LW);
	struct ibv_send_wr wr;
	struct ibv_sge s;
	struct end *a, *b;
	struct dmabuf d;
	struct ibv_mr *mr;
	struct buf rem;

	if (!src || !dst || !dmabuf_new(how, &d))
		return;
	mr = dmabuf_reg(&d, LW | RW | RR);
	if (!mr || !pair_new(IBV_QPT_RC, &a, &b))
		goto out;
	t_check(mr->length == DB_REG && (uintptr_t)mr->addr == DB_OFF,
		"the region's length %zu and addr %p, expected %d and the offset %d", mr->length,
		mr->addr, DB_REG, DB_OFF);
	rem = remote_of(mr);
	if (!write_read(a, src, dst, &rem, 41, "then back"))
		goto out;
	expect_buffer(&d, DB_OFF, src->data, DB_REG, "the buffer after the WRITE");

	/* The region's lkey as a SEND's source: the buffer's bytes at the receiver. */
	buf_guard(dst);
	memset(dst->data, BLANK, DB_REG);
	s = (struct ibv_sge){ .addr = DB_IOVA + 100, .length = 1000, .lkey = mr->lkey };
	{
		struct ibv_sge r = sge_of(dst, 0, 1000);

		if (post_recv(b, 3, &r, 1))
			goto out;
	}
	wr = wr_send(4, &s, 1);
	if (post(a, &wr))
		goto out;
	expect_wc(a->scq, 4, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "SEND from the region");
	expect_wc(b->rcq, 3, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "its receive");
	expect_bytes(dst->data, d.map + DB_OFF + 100, 1000, "the SEND's bytes");

	/* The last byte, then one past it. */
	src->data[0] = 0x5a;
	s = sge_of(src, 0, 1);
	wr = wr_rdma(5, IBV_WR_RDMA_WRITE, &s, 1, &rem, DB_REG - 1);
	if (post(a, &wr))
		goto out;
	expect_wc(a->scq, 5, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL, "WRITE of the last byte");
	t_check(d.map[DB_OFF + DB_REG - 1] == 0x5a, "the last byte is %#x, expected 0x5a",
		(unsigned char)d.map[DB_OFF + DB_REG - 1]);
	s = sge_of(src, 0, 2);
	wr = wr_rdma(6, IBV_WR_RDMA_WRITE, &s, 1, &rem, DB_REG - 1);
	if (post(a, &wr))
		goto out;
	expect_wc(a->scq, 6, IBV_WC_REM_ACCESS_ERR, -1, NULL, "WRITE of 2 bytes from the last");
	{
		size_t first;

		if (xdiff(d.map + DB_OFF + DB_REG, DB_OFF + DB_REG, DB_LEN - DB_OFF - DB_REG,
			  DB_SEED, &first))
			t_fail("byte %zu past the region changed", first);
	}
out:
	if (mr && ibv_dereg_mr(mr))
		t_fail("ibv_dereg_mr: %s", strerror(errno));
	dmabuf_free(&d);
}

static void dmabuf_udmabuf(void)
{
	data_moves(UDMABUF);
}

static void dmabuf_heap(void)
{
	data_moves(HEAP_SYSTEM);
}

static void expect_refused(int fd, uint64_t off, size_t len, int access, int err,
			   const char *what)
{
	/* The iova has the offset's place in its page: the core refuses another at once. */
	uint64_t iova = (DB_IOVA & ~4095ull) | (off & 4095);
	struct ibv_mr *mr = ibv_reg_dmabuf_mr(pd, off, len, iova, fd, access);

	if (mr) {
		t_fail("%s: registered, expected %s", what, strerror(err));
		ibv_dereg_mr(mr);
		return;
	}
	t_check(errno == err, "%s: %s, expected %s", what, strerror(errno), strerror(err));
}

/* Every refusal its errno; the buffer's bytes untouched by them all. */
static void dmabuf_refusals(void)
{
	struct dmabuf d;
	int mfd;

	if (!dmabuf_new(UDMABUF, &d))
		return;
	expect_refused(-1, 0, 4096, LW, EBADF, "fd -1");
	expect_refused(999, 0, 4096, LW, EBADF, "fd 999, not open");
	mfd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
	if (mfd >= 0 && !ftruncate(mfd, DB_LEN))
		expect_refused(mfd, 0, 4096, LW, EINVAL, "a memfd, not a dma-buf");
	if (mfd >= 0)
		close(mfd);
	expect_refused(d.fd, 0, DB_LEN + 1, LW, EINVAL, "one byte past the buffer");
	expect_refused(d.fd, DB_LEN, 1, LW, EINVAL, "at the buffer's end");
	expect_refused(d.fd, UINT64_MAX - 10, 100, LW, EINVAL, "an offset that wraps");
	expect_refused(d.fd, 0, 0, LW, EINVAL, "length 0");
	expect_refused(d.fd, 0, 4096, RW, EINVAL, "REMOTE_WRITE without LOCAL_WRITE");
	/* The core takes none of the other rights for a dma-buf: ON_DEMAND, MW_BIND... */
	expect_refused(d.fd, 0, 4096, LW | IBV_ACCESS_ON_DEMAND, EINVAL, "ON_DEMAND");
	expect_refused(d.fd, 0, 4096, LW | IBV_ACCESS_MW_BIND, EINVAL, "MW_BIND");
	{
		struct ibv_mr *mr = ibv_reg_dmabuf_mr(pd, DB_OFF, 4096, DB_IOVA + 1, d.fd, LW);

		t_check(!mr && errno == EINVAL, "an iova off the offset's place in its page: %s, "
			"expected EINVAL", mr ? "registered" : strerror(errno));
		if (mr)
			ibv_dereg_mr(mr);
	}
	/* A hint stag may ignore is taken, as on any region. */
	{
		struct ibv_mr *mr = ibv_reg_dmabuf_mr(pd, 0, 4096, DB_IOVA & ~4095ull, d.fd,
						      LW | IBV_ACCESS_RELAXED_ORDERING);

		t_check(mr, "RELAXED_ORDERING: %s, expected a region", strerror(errno));
		if (mr && ibv_dereg_mr(mr))
			t_fail("ibv_dereg_mr: %s", strerror(errno));
	}
	expect_buffer(&d, 0, NULL, 0, "the buffer after the refusals");
	dmabuf_free(&d);
}

/* How many buffers udmabuf exports now, from debugfs; -1 without it. */
static int udmabufs(void)
{
	FILE *f = fopen("/sys/kernel/debug/dma_buf/bufinfo", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, "udmabuf");
	fclose(f);
	return n;
}

/*
 * The region holds the buffer: with every fd and mapping of it gone, a
 * WRITE and a READ through the region still move the bytes; the dereg
 * lets it go (debugfs lists one udmabuf fewer).
 */
static void dmabuf_outlives_fd(void)
{
	struct buf *src = buf_new(DB_REG, LW), *dst = buf_new(DB_REG, LW);
	struct end *a, *b;
	struct dmabuf d;
	struct ibv_mr *mr;
	struct buf rem;
	int before, held, after;

	before = udmabufs();
	if (!src || !dst || !dmabuf_new(UDMABUF, &d))
		return;
	mr = dmabuf_reg(&d, LW | RW | RR);
	dmabuf_free(&d);
	if (!mr || !pair_new(IBV_QPT_RC, &a, &b))
		return;
	held = udmabufs();
	rem = remote_of(mr);
	write_read(a, src, dst, &rem, 42, "the fds closed");
	if (ibv_dereg_mr(mr))
		t_fail("ibv_dereg_mr: %s", strerror(errno));
	after = udmabufs();
	if (before < 0) {
		printf("# no debugfs: the buffer's release is not watched\n");
		return;
	}
	t_check(held == before + 1 && after == before, "udmabufs listed: %d before, %d while "
		"the region held it, %d after its dereg; expected %d, %d, %d", before, held, after,
		before, before + 1, before);
}

#define RACE_WRITES	2000

struct writer {
	struct end *a;
	struct buf *src;
	struct buf rem;
	int ok, refused, other;
};

/* WRITEs of 512 bytes into the region, one at a time, until one is refused. */
static void *writer_run(void *arg)
{
	struct writer *w = arg;
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	struct ibv_sge s = sge_of(w->src, 0, 512);
	int i;

	for (i = 0; i < RACE_WRITES; i++) {
		wr = wr_rdma(i, IBV_WR_RDMA_WRITE, &s, 1, &w->rem, (i * 512) % (DB_REG - 512));
		if (post(w->a, &wr) || poll_n(w->a->scq, &wc, 1, WAIT_MS) != 1) {
			w->other++;
			break;
		}
		if (wc.status == IBV_WC_SUCCESS) {
			w->ok++;
			continue;
		}
		/* Once the region is gone: refused, and the QP in error. */
		if (wc.status == IBV_WC_REM_ACCESS_ERR)
			w->refused++;
		else
			w->other++;
		break;
	}
	return NULL;
}

/*
 * A dereg racing WRITEs: two threads, each on a QP of its own, WRITE into
 * the region one after another while it is deregistered. Each WRITE
 * lands until the dereg; then the next is REM_ACCESS_ERR and its QP in
 * error: each thread ends with exactly one refused. No other status; no
 * byte outside the region ever changes.
 */
static void dmabuf_dereg_race(void)
{
	struct writer w[2] = {};
	pthread_t th[2];
	struct end *b[2];
	struct dmabuf d;
	struct ibv_mr *mr;
	int i, started = 0;
	size_t first;

	if (!dmabuf_new(UDMABUF, &d))
		return;
	mr = dmabuf_reg(&d, LW | RW);
	if (!mr)
		goto out;
	for (i = 0; i < 2; i++) {
		w[i].src = buf_new(512, LW);
		if (!w[i].src || !pair_new(IBV_QPT_RC, &w[i].a, &b[i]))
			goto out;
		fill(w[i].src->data, 512, 50 + i);
		w[i].rem = remote_of(mr);
	}
	for (i = 0; i < 2; i++) {
		if (pthread_create(&th[i], NULL, writer_run, &w[i]))
			break;
		started++;
	}
	usleep(20000);
	if (ibv_dereg_mr(mr))
		t_fail("ibv_dereg_mr: %s", strerror(errno));
	mr = NULL;
	for (i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		printf("# writer %d: %d WRITEs landed, %d refused\n", i, w[i].ok, w[i].refused);
		t_check(!w[i].other && (w[i].refused == 1 || w[i].ok == RACE_WRITES),
			"writer %d: %d landed, %d refused, %d neither: expected one refused after "
			"the dereg", i, w[i].ok, w[i].refused, w[i].other);
	}
	if (xdiff(d.map, 0, DB_OFF, DB_SEED, &first) ||
	    xdiff(d.map + DB_OFF + DB_REG, DB_OFF + DB_REG, DB_LEN - DB_OFF - DB_REG, DB_SEED,
		  &first))
		t_fail("byte %zu outside the region changed", first);
out:
	if (mr)
		ibv_dereg_mr(mr);
	dmabuf_free(&d);
}

const struct qp_case dmabuf_cases[] = {
	{ "dma-buf region (udmabuf), bytes 1000 to 15381 of 16 KiB at an iova of its own: RC "
	  "WRITE of all of it, READ back, a SEND from its lkey; its last byte written, the one "
	  "past it REM_ACCESS_ERR; every byte of the buffer around it untouched", dmabuf_udmabuf },
	{ "dma-buf region (the system DMA heap's buffer): the same", dmabuf_heap },
	{ "dma-buf region refused: fd -1 and one not open EBADF; a memfd EINVAL; past the "
	  "buffer, at its end, a wrapping offset, length 0, REMOTE_WRITE alone, ON_DEMAND, "
	  "MW_BIND, an iova off the offset's place in its page EINVAL; RELAXED_ORDERING taken; "
	  "nothing changed",
	  dmabuf_refusals },
	{ "dma-buf region holds its buffer: with the fds and mapping closed, a WRITE and a READ "
	  "still move the bytes; its dereg releases the buffer", dmabuf_outlives_fd },
	{ "dma-buf region deregistered while two threads WRITE into it: each WRITE lands or is "
	  "REM_ACCESS_ERR, nothing outside the region changes", dmabuf_dereg_race },
	{ NULL }
};
