// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_core_test: the provider's reading of the rdma-core release it runs
 * under (rdma_core.c): file names parsed, releases known or not, and the
 * check against the libibverbs this program is linked with.
 *
 * Prints "rdma_core_test: N passed, N failed"; exits 1 on a failure.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rdma_core.h"

static int passed, failed;

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (ok)
		passed++;
	else
		failed++;
}

/* dl_iterate_phdr() callback: the path this test loaded libibverbs.so.1 from. */
static int find_lib(struct dl_phdr_info *info, size_t size, void *data)
{
	const char **path = data;

	(void)size;
	if (!strstr(info->dlpi_name, "/libibverbs.so."))
		return 0;
	*path = info->dlpi_name;
	return 1;
}

static void parses(const char *path, const char *want)
{
	char got[16] = "untouched";
	int ret = stag_rdma_core_parse(path, got, sizeof(got));

	if (want)
		check(!ret && !strcmp(got, want), "%s is rdma-core %s (got %d, %s)", path, want,
		      ret, got);
	else
		check(ret == -1 && !strcmp(got, "untouched"),
		      "%s is refused, version untouched (got %d, %s)", path, ret, got);
}

int main(void)
{
	char small[4];

	parses("/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0", "44.0");
	parses("libibverbs.so.1.14.56.1", "56.1");
	parses("/lib/libibverbs.so.1.15.65.0", "65.0");
	parses("/usr/lib/libibverbs.so.1", NULL);
	parses("/usr/lib/libibverbs.so.1.14", NULL);
	parses("/usr/lib/libibverbs.so.1.14.", NULL);
	parses("/usr/lib/libibverbs.so.1.14.44.", NULL);
	parses("/usr/lib/libibverbs.so.1.14.44.0.bak", NULL);
	parses("/usr/lib/libibverbs.so.1.x.44.0", NULL);
	parses("/usr/lib/librxe.so.1.14.44.0", NULL);
	parses("/usr/lib/libibverbs.so.1.14.44.0/", NULL);
	parses("", NULL);
	check(stag_rdma_core_parse("libibverbs.so.1.14.1234.5", small, sizeof(small)) == -1,
	      "a release longer than the room is refused");

#if IBVERBS_PABI_VERSION == 65
	check(stag_rdma_core_known("65.0"), "65.0 is known to a PABI 65 build");
	check(!stag_rdma_core_known("44.0"), "44.0 is not known to a PABI 65 build");
	check(!stag_rdma_core_known("56.1"), "56.1 is not known to a PABI 65 build");
	check(!stag_rdma_core_known("64.0"), "64.0 is not known to a PABI 65 build");
#else
	check(stag_rdma_core_known("44.0"), "44.0 is known");
	check(stag_rdma_core_known("56.1"), "56.1 is known");
	check(!stag_rdma_core_known("65.0"), "65.0 is not known to a PABI 34 build");
#endif
	check(!stag_rdma_core_known("45.0"), "45.0 is not known");
	check(!stag_rdma_core_known("4.0"), "4.0 is not known");
	check(!stag_rdma_core_known("440"), "440 is not known");
	check(!stag_rdma_core_known("44x"), "44x is not known");
	check(!stag_rdma_core_known(""), "an empty release is not known");

	/* This host's libibverbs is the one the build is checked against. */
	check(stag_rdma_core_check(), "the libibverbs this test links with is known");
	{
		char version[32] = "";
		const char *path = NULL;
		char *real;

		dl_iterate_phdr(find_lib, &path);
		real = path ? realpath(path, NULL) : NULL;
		check(real && !stag_rdma_core_parse(real, version, sizeof(version)) &&
		      stag_rdma_core_release() == strtoul(version, NULL, 10),
		      "stag_rdma_core_release() is the major of the release loaded (%s)", version);
		free(real);
	}

	printf("rdma_core_test: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
