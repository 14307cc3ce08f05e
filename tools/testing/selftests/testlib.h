/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest test programs share: TAP reporting, pin accounting,
 * opening a device by name, and the lines of "rdma resource show mr".
 */
#ifndef STAG_SELFTESTS_TESTLIB_H
#define STAG_SELFTESTS_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#define PG		4096UL
#define KIB		1024UL
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define LW	IBV_ACCESS_LOCAL_WRITE
#define RW	IBV_ACCESS_REMOTE_WRITE
#define RR	IBV_ACCESS_REMOTE_READ
#define RA	IBV_ACCESS_REMOTE_ATOMIC

typedef unsigned long long ull;

/* Each program names its suite ("ok - <t_suite>: <case>") and may change the device. */
extern const char *t_suite;
extern const char *dev_name;

/* ---- TAP ---- */

void t_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool t_failing(void);
/* A macro, so that the message's arguments are only evaluated on failure. */
#define t_check(cond, ...) do { if (!(cond)) t_fail(__VA_ARGS__); } while (0)
void t_end(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void t_skip(const char *name, const char *why);

/* ---- cases in child processes ---- */

bool t_case_wanted(const char *name, int npat, char **pat);
int t_case_seconds(void);
void t_case_run(const char *name, int limit, const char *(*body)(const void *),
		const void *arg);

/* ---- /proc and pin accounting ---- */

long file_field(const char *path, const char *field);
long status_kb(pid_t pid, const char *field);
long vmpin_kb(void);
long pin_balance(void);
long res_count(const char *dev, const char *what);

/* ---- device, memory, processes ---- */

struct ibv_context *open_dev(const char *name);
void *map(size_t len, int prot);
int read_byte(int fd, int ms);

int res_qp_attrs(uint32_t qpn, const char *const *names, long long *vals, int n);

/* ---- rdma resource show mr ---- */

struct res_mr {
	uint32_t lkey, rkey;
	uint64_t iova, mrlen, pages;
	long pid;
	bool has_rkey, has_iova, has_pages;
};

#define LIST_RKEY	1	/* check the rkey too */
#define LIST_IOVA	2	/* check the iova too */

bool expect_listed(const struct ibv_mr *mr, uint64_t iova, uint64_t len, int what,
		   struct res_mr *out);
void expect_unlisted(uint32_t lkey);

uint32_t toeplitz(const uint8_t *key, const uint8_t *in, size_t len);

#endif /* STAG_SELFTESTS_TESTLIB_H */
