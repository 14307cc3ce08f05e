// SPDX-License-Identifier: GPL-2.0
/*
 * The buffers of pyverbs' dma-buf tests, preloaded (LD_PRELOAD) into the
 * suite by pyverbs.sh.
 *
 * pyverbs allocates a test's dma-buf from a GPU through the five
 * functions of its pyverbs/dmabuf_alloc.h: from an amdgpu or i915 render
 * node, and from nothing at all in Debian 12's build, which lacks the DRM
 * headers and compiles the stub that always fails with EOPNOTSUPP. The
 * guest has no GPU either. pyverbs calls the five through its module's
 * PLT, so a preloaded library's take their place.
 *
 * These make the buffer a udmabuf over a sealed memfd: a real dma-buf,
 * registered with ibv_reg_dmabuf_mr() as any other. The "render node"
 * pyverbs maps to read and write the buffer's bytes is the memfd itself,
 * at offset 0: the same pages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

struct dmabuf {
	int memfd;	/* the pages, and what pyverbs maps */
	int fd;		/* the dma-buf */
};

/* @gpu and @gtt choose a GPU and its memory: there is one kind here. */
struct dmabuf *dmabuf_alloc(uint64_t size, int gpu, int gtt)
{
	uint64_t page = sysconf(_SC_PAGESIZE);
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC };
	struct dmabuf *d;
	int dev, err;

	(void)gpu;
	(void)gtt;
	if (!size || size > UINT64_MAX - page) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	c.size = (size + page - 1) & ~(page - 1);
	d->memfd = memfd_create("pyverbs-dmabuf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (d->memfd < 0)
		goto err;
	/* udmabuf takes a memfd that cannot shrink under it. */
	if (ftruncate(d->memfd, c.size) || fcntl(d->memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		goto err;
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		goto err;
	c.memfd = d->memfd;
	d->fd = ioctl(dev, UDMABUF_CREATE, &c);
	close(dev);
	if (d->fd < 0)
		goto err;
	return d;

err:
	err = errno;
	if (d->memfd >= 0)
		close(d->memfd);
	free(d);
	errno = err;
	return NULL;
}

void dmabuf_free(struct dmabuf *dmabuf)
{
	if (!dmabuf)
		return;
	close(dmabuf->fd);
	close(dmabuf->memfd);
	free(dmabuf);
}

int dmabuf_get_drm_fd(struct dmabuf *dmabuf)
{
	return dmabuf ? dmabuf->memfd : -1;
}

int dmabuf_get_fd(struct dmabuf *dmabuf)
{
	return dmabuf ? dmabuf->fd : -1;
}

uint64_t dmabuf_get_offset(struct dmabuf *dmabuf)
{
	(void)dmabuf;
	return 0;
}
