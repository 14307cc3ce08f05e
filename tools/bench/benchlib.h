/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the benchmark programs share: sizes on the command line, a
 * monotonic clock, medians, and opening a device by name.
 */
#ifndef STAG_BENCHLIB_H
#define STAG_BENCHLIB_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
uint64_t parse_size(const char *s);
double now(void);
double median(double *v, size_t n);
double minimum(const double *v, size_t n);
double maximum(const double *v, size_t n);
void *map_touched(size_t len);
struct ibv_context *open_dev(const char *name);
void print_tpt(const char *dev);

#endif
