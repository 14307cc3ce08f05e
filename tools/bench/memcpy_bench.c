// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy_bench: how fast this machine copies memory, the ceiling any
 * loopback RDMA transfer is measured against.
 *
 *   memcpy_bench SIZE [SECONDS]
 *
 * Copies one SIZE-byte buffer to another, as perftest moves one buffer over
 * and over, for SECONDS (default 0.5) in all, three ways: glibc's memcpy(),
 * a bare "rep movsb" (what the kernel's memcpy() is on a CPU with fast
 * short rep movsb, as QEMU's -cpu max has) and a loop of 8-byte loads and
 * stores. Under TCG their speeds differ by large factors and in ways that
 * change with the size, so the ceiling is the fastest of them:
 *
 *   memcpy_bench: size=65536 glibc_mib_s=... movsb_mib_s=... loop_mib_s=... mib_s=...
 *
 * in MiB (2^20 bytes) per second, perftest's unit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

struct method {
	const char *name;
	void (*copy)(void *dst, const void *src, size_t size);
};

static void copy_glibc(void *dst, const void *src, size_t size)
{
	memcpy(dst, src, size);
	/* Keeps the compiler from proving the copies useless. */
	__asm__ __volatile__("" : : "r"(dst) : "memory");
}

static void copy_movsb(void *dst, const void *src, size_t size)
{
	__asm__ __volatile__("rep movsb" : "+D"(dst), "+S"(src), "+c"(size) : : "memory");
}

/* The Makefile keeps gcc from turning this loop back into memcpy(). */
static void copy_loop(void *dst, const void *src, size_t size)
{
	const uint64_t *s = src;
	uint64_t *d = dst;
	size_t i;

	for (i = 0; i < size / 8; i++)
		d[i] = s[i];
	__asm__ __volatile__("" : : "r"(dst) : "memory");
}

static const struct method methods[] = {
	{ "glibc", copy_glibc },
	{ "movsb", copy_movsb },
	{ "loop", copy_loop },
};

/* Copies for secs seconds after a tenth of that to warm up; MiB/s. */
static double rate(const struct method *m, void *dst, const void *src, size_t size, double secs)
{
	uint64_t copies = 0;
	double t, end;
	int i;

	end = now() + secs / 10;
	while (now() < end)
		m->copy(dst, src, size);
	t = now();
	end = t + secs;
	do {
		for (i = 0; i < 16; i++)
			m->copy(dst, src, size);
		copies += 16;
	} while (now() < end);
	return copies * (double)size / (now() - t) / (1 << 20);
}

int main(int argc, char **argv)
{
	double secs = 0.5, best = 0, r;
	uint64_t size;
	void *src, *dst;
	size_t i;

	if (argc < 2 || argc > 3)
		die("usage: memcpy_bench SIZE [SECONDS]");
	size = parse_size(argv[1]);
	if (argc > 2)
		secs = strtod(argv[2], NULL);
	if (!size || size % 8 || secs <= 0)
		die("SIZE must be a positive multiple of 8 and SECONDS positive");
	src = map_touched(size);
	dst = map_touched(size);

	printf("memcpy_bench: size=%llu", (unsigned long long)size);
	for (i = 0; i < ARRAY_SIZE(methods); i++) {
		r = rate(&methods[i], dst, src, size, secs / 3);
		printf(" %s_mib_s=%.2f", methods[i].name, r);
		if (r > best)
			best = r;
	}
	printf(" mib_s=%.2f\n", best);
	return 0;
}
