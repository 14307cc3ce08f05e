// SPDX-License-Identifier: GPL-2.0
/*
 * reg_bench: what ibv_reg_mr() and ibv_dereg_mr() of one buffer cost.
 *
 *   reg_bench DEVICE SIZE [REPS [SECONDS]]
 *
 * Maps SIZE bytes and writes every page first, so that page faults are not
 * part of the measurement. Then registers and deregisters the whole buffer
 * REPS times (default 100), stopping early once SECONDS (default 2) have
 * passed but never before 3 repetitions, and prints the median of each:
 *
 *   reg_bench: dev=stag0 size=4096 reps=100 reg_us=... dereg_us=... total_us=...
 *              min_us=... max_us=...
 *
 * total_us is the median of reg + dereg per repetition, not the sum of the
 * two medians; min_us and max_us are its extremes. On a stag device, with
 * debugfs mounted, the line goes on with what stag's TPT holds while the
 * buffer is registered once more (tpt_bytes_per_pinned_page=...). Large
 * sizes need RLIMIT_MEMLOCK (or CAP_IPC_LOCK).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

#define MIN_REPS	3

int main(int argc, char **argv)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	double *reg, *dereg, *total, limit = 2, start, t0, t1, t2;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	size_t reps = 100, n;
	uint64_t size;
	void *buf;

	if (argc < 3 || argc > 5)
		die("usage: reg_bench DEVICE SIZE [REPS [SECONDS]]");
	size = parse_size(argv[2]);
	if (argc > 3)
		reps = strtoul(argv[3], NULL, 0);
	if (argc > 4)
		limit = strtod(argv[4], NULL);
	if (!size || reps < MIN_REPS)
		die("SIZE must be positive and REPS at least %d", MIN_REPS);

	ctx = open_dev(argv[1]);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	buf = map_touched(size);
	reg = calloc(reps, sizeof(*reg));
	dereg = calloc(reps, sizeof(*dereg));
	total = calloc(reps, sizeof(*total));
	if (!reg || !dereg || !total)
		die("out of memory");

	start = now();
	for (n = 0; n < reps; n++) {
		if (n >= MIN_REPS && now() - start > limit)
			break;
		t0 = now();
		mr = ibv_reg_mr(pd, buf, size, access);
		t1 = now();
		if (!mr)
			die("ibv_reg_mr of %llu bytes on %s: %s",
			    (unsigned long long)size, argv[1], strerror(errno));
		if (ibv_dereg_mr(mr))
			die("ibv_dereg_mr: %s", strerror(errno));
		t2 = now();
		reg[n] = (t1 - t0) * 1e6;
		dereg[n] = (t2 - t1) * 1e6;
		total[n] = (t2 - t0) * 1e6;
	}
	printf("reg_bench: dev=%s size=%llu reps=%zu", argv[1], (unsigned long long)size, n);
	printf(" reg_us=%.2f dereg_us=%.2f total_us=%.2f min_us=%.2f max_us=%.2f",
	       median(reg, n), median(dereg, n), median(total, n), minimum(total, n),
	       maximum(total, n));

	/* Once more, untimed, to see what the registration holds. */
	mr = ibv_reg_mr(pd, buf, size, access);
	if (!mr)
		die("ibv_reg_mr: %s", strerror(errno));
	print_tpt(argv[1]);
	printf("\n");
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
