// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dmabuf_smoke: register a range of a udmabuf through libibverbs, as
 * whichever rdma-core it is built and run under does (rdma-core 55 gave
 * the private call under ibv_reg_dmabuf_mr() an argument without a new
 * private ABI: the provider picks the call by release). The region must
 * report the offset and length asked for; a region at an iova off the
 * offset's place in its page, and one over an fd that is not open, are
 * refused with EINVAL and EBADF. Prints "ok" and exits 0, "skip" and exits
 * 0 without /dev/udmabuf, or names what failed and exits 1.
 *
 *	dmabuf_smoke [device]	(default stag0)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define LEN	(4 * 4096)
#define OFF	1000
#define REG	(LEN - 2 * OFF)

static int fail(const char *what, int err)
{
	printf("FAIL: %s: %s (errno %d)\n", what, strerror(err), err);
	return 1;
}

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	errno = ENODEV;
	for (i = 0; i < n; i++) {
		if (!strcmp(ibv_get_device_name(list[i]), name)) {
			ctx = ibv_open_device(list[i]);
			break;
		}
	}
	ibv_free_device_list(list);
	return ctx;
}

/* A udmabuf of LEN bytes, or -1 (errno set). */
static int udmabuf_new(void)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = LEN };
	int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC), mfd, fd = -1;

	if (dev < 0)
		return -1;
	mfd = memfd_create("dmabuf_smoke", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd >= 0 && !ftruncate(mfd, LEN) && !fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		c.memfd = mfd;
		fd = ioctl(dev, UDMABUF_CREATE, &c);
	}
	if (mfd >= 0)
		close(mfd);
	close(dev);
	return fd;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx = open_by_name(argc > 1 ? argv[1] : "stag0");
	uint64_t iova = 0x5a000000ull + OFF;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	int fd, bad = 0;

	if (!ctx)
		return fail("ibv_open_device", errno);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return fail("ibv_alloc_pd", errno);
	fd = udmabuf_new();
	if (fd < 0) {
		if (errno == ENOENT) {
			printf("skip: no /dev/udmabuf\n");
			return 0;
		}
		return fail("udmabuf", errno);
	}
	mr = ibv_reg_dmabuf_mr(pd, OFF, REG, iova, fd, IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		return fail("ibv_reg_dmabuf_mr", errno);
	if ((uintptr_t)mr->addr != OFF || mr->length != REG || mr->lkey != mr->rkey) {
		printf("FAIL: the region's addr %p length %zu lkey %#x rkey %#x, expected %d, %d "
		       "and equal keys\n", mr->addr, mr->length, mr->lkey, mr->rkey, OFF, REG);
		bad = 1;
	}
	if (ibv_dereg_mr(mr))
		return fail("ibv_dereg_mr", errno);
	mr = ibv_reg_dmabuf_mr(pd, OFF, REG, iova + 1, fd, IBV_ACCESS_LOCAL_WRITE);
	if (mr || errno != EINVAL)
		bad |= fail("an iova off the offset's place: expected EINVAL", mr ? 0 : errno);
	mr = ibv_reg_dmabuf_mr(pd, OFF, REG, iova, 999, IBV_ACCESS_LOCAL_WRITE);
	if (mr || errno != EBADF)
		bad |= fail("fd 999, not open: expected EBADF", mr ? 0 : errno);
	close(fd);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	if (!bad)
		printf("ok\n");
	return bad;
}
