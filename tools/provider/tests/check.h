/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The provider's host tests (ring_test, pd_test): check() counts a check
 * and prints the ones that fail; main() prints "NAME: N passed, N failed".
 */
#ifndef STAG_PROVIDER_TESTS_CHECK_H
#define STAG_PROVIDER_TESTS_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int passed, failed;

__attribute__((format(printf, 2, 3)))
static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		passed++;
		return;
	}
	failed++;
	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#endif /* STAG_PROVIDER_TESTS_CHECK_H */
