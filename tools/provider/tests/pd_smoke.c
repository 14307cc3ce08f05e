// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pd_smoke: open a stag device through libibverbs, query it, and allocate
 * and free protection domains. Prints "ok" and exits 0, or names the call
 * that failed and its errno.
 *
 *	pd_smoke [device]	(default stag0)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#define NR_PDS	64

static int fail(const char *call, int err)
{
	printf("FAIL: %s: %s (errno %d)\n", call, strerror(err), err);
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

/* Allocate all PDs first so the kernel holds many at once, then free them. */
static int pd_cycle(struct ibv_context *ctx)
{
	struct ibv_pd *pds[NR_PDS];
	int i, ret = 0;

	for (i = 0; i < NR_PDS; i++) {
		pds[i] = ibv_alloc_pd(ctx);
		if (!pds[i]) {
			ret = fail("ibv_alloc_pd", errno);
			break;
		}
	}
	while (i-- > 0) {
		int err = ibv_dealloc_pd(pds[i]);

		if (err && !ret)
			ret = fail("ibv_dealloc_pd", err);
	}
	return ret;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "stag0";
	struct ibv_device_attr dev_attr;
	struct ibv_port_attr port_attr;
	struct ibv_context *ctx;
	int ret;

	ctx = open_by_name(name);
	if (!ctx)
		return fail("ibv_open_device", errno);

	ret = ibv_query_device(ctx, &dev_attr);
	if (ret) {
		fail("ibv_query_device", ret);
		goto out_close;
	}
	if (dev_attr.phys_port_cnt < 1) {
		ret = fail("ibv_query_device: phys_port_cnt", EINVAL);
		goto out_close;
	}

	ret = ibv_query_port(ctx, 1, &port_attr);
	if (ret) {
		fail("ibv_query_port", ret);
		goto out_close;
	}

	ret = pd_cycle(ctx);

out_close:
	if (ibv_close_device(ctx) && !ret)
		ret = fail("ibv_close_device", errno);
	if (!ret)
		printf("ok\n");
	return ret ? 1 : 0;
}
