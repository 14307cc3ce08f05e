// SPDX-License-Identifier: GPL-2.0
/*
 * Holds a user context on a device across its removal.
 *
 *   ctx_hold DEVICE
 *
 * Opens DEVICE and allocates a PD, prints "ready", waits for a line on
 * stdin (the test removes the device meanwhile), then checks that the
 * context was disassociated: a new PD must fail with EIO. Exits 0 if so.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "testlib.h"

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "stag0";
	struct ibv_context *ctx;
	struct ibv_pd *pd, *late;
	char line[16];

	ctx = open_dev(name);
	if (!ctx) {
		fprintf(stderr, "# cannot open %s: %s\n", name, strerror(errno));
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, "# ibv_alloc_pd: %s\n", strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;

	errno = 0;
	late = ibv_alloc_pd(ctx);
	if (late) {
		printf("# ibv_alloc_pd after removal succeeded\n");
		return 1;
	}
	if (errno != EIO) {
		printf("# ibv_alloc_pd after removal: errno %d (%s), expected EIO\n",
		       errno, strerror(errno));
		return 1;
	}
	/* The PD is already gone with the device; this must not crash. */
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
