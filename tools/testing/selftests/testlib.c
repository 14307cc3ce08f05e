// SPDX-License-Identifier: GPL-2.0
/*
 * What the guest test programs share, kept in one copy so that how a
 * verdict is printed, a pin counted or a region's restrack line read
 * cannot drift apart between them. See testlib.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define SEP	" \t\n"

const char *t_suite = "test";
const char *dev_name = "stag0";

/* ---- TAP ---- */

/* The failure messages of the case in progress, printed under its verdict. */
static char t_detail[8192];
static size_t t_len;
static bool t_failed;

/* Fails the case in progress; its checks go on, so that every failure is reported. */
/* Has the case in progress failed so far? (To stop a loop at its first failure.) */
bool t_failing(void)
{
	return t_failed;
}

void t_fail(const char *fmt, ...)
{
	va_list ap;
	int n;

	t_failed = true;
	if (t_len >= sizeof(t_detail) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t_detail + t_len, sizeof(t_detail) - t_len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n >= sizeof(t_detail) - t_len)
		n = sizeof(t_detail) - t_len - 1;
	if (n > 0)
		t_len += n;
	if (t_len < sizeof(t_detail) - 1)
		t_detail[t_len++] = '\n';
	t_detail[t_len] = 0;
}

static void t_reset(void)
{
	/* Before a fork() or popen(), or the child prints these lines again. */
	fflush(stdout);
	t_len = 0;
	t_detail[0] = 0;
	t_failed = false;
}

/* Prints the verdict of the case whose checks ran since the last one. */
void t_end(const char *fmt, ...)
{
	char name[256], *line, *save;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	printf("%s - %s: %s\n", t_failed ? "not ok" : "ok", t_suite, name);
	for (line = strtok_r(t_detail, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		printf("#   %s\n", line);
	t_reset();
}

void t_skip(const char *name, const char *why)
{
	printf("ok - %s: %s # SKIP %s\n", t_suite, name, why);
	t_reset();
}

/* ---- cases in child processes ---- */

static const char *case_name;
static int case_limit;

static void case_timeout(int sig)
{
	(void)sig;
	t_fail("timed out after %d s", case_limit);
	t_end("%s", case_name);
	fflush(stdout);
	_exit(0);
}

/* The seconds the running case has in all (0 outside a case). */
int t_case_seconds(void)
{
	return case_limit;
}

/* Does a case's name contain one of the patterns (or are there none)? */
bool t_case_wanted(const char *name, int npat, char **pat)
{
	int i;

	for (i = 0; i < npat; i++)
		if (strstr(name, pat[i]))
			return true;
	return !npat;
}

static void case_child(const char *name, int limit, const char *(*body)(const void *),
		       const void *arg)
{
	const char *skipped;

	case_name = name;
	case_limit = limit;
	signal(SIGALRM, case_timeout);
	alarm(limit);
	skipped = body(arg);
	alarm(0);
	if (skipped)
		t_skip(name, skipped);
	else
		t_end("%s", name);
	fflush(stdout);
	_exit(0);
}

/*
 * libibverbs dlopens every provider it has a .driver file for (about 20
 * on Debian) on its first device list: half a second of each case's child
 * under TCG on the debug kernel, most of a short case. Loaded once here,
 * before the first fork, every child inherits them; nothing else of
 * libibverbs is set up (no context, no registration), so a child starts
 * as a fresh process would.
 */
static void load_providers(void)
{
	static bool loaded;
	struct ibv_device **list;

	if (loaded)
		return;
	loaded = true;
	list = ibv_get_device_list(NULL);
	if (list)
		ibv_free_device_list(list);
}

/* The threads of process @pid, each with its state, where it sleeps, and its kernel stack. */
static void dump_process(pid_t pid)
{
	char path[64], line[256], comm[32], state;
	struct dirent *t;
	FILE *f;
	DIR *d;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (t = readdir(d))) {
		int tid = atoi(t->d_name);

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
		f = fopen(path, "r");
		if (!f || fscanf(f, "%*d (%31[^)]) %c", comm, &state) != 2) {
			state = '?';
			snprintf(comm, sizeof(comm), "?");
		}
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pid, tid);
		f = fopen(path, "r");
		if (!f || !fgets(line, sizeof(line), f))
			snprintf(line, sizeof(line), "-");
		if (f)
			fclose(f);
		printf("#   %d/%d %s: %c, in %s\n", pid, tid, comm, state, line);
		/* Where a running or blocked thread is in the kernel (root reads it). */
		if (state != 'R' && state != 'D')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, tid);
		f = fopen(path, "r");
		for (n = 0; f && n < 12 && fgets(line, sizeof(line), f); n++)
			printf("#     %s", line);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

static void dump_tree(pid_t pid, int depth);

/* The processes thread @tid of @pid started, each with its own. */
static void dump_children(pid_t pid, int tid, int depth)
{
	char path[64], kids[512], *p, *end;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(kids, sizeof(kids), f))
		for (p = kids; *p; p = end) {
			long kid = strtol(p, &end, 10);

			if (end == p)
				break;
			dump_tree(kid, depth + 1);
		}
	fclose(f);
}

/* @pid and, a generation at a time, the processes under it. */
static void dump_tree(pid_t pid, int depth)
{
	char path[64];
	struct dirent *t;
	DIR *d;

	dump_process(pid);
	if (depth == 4)
		return;
	/* Every thread's children: a case's helper thread may have started one. */
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (t = readdir(d)))
		if (atoi(t->d_name) > 0)
			dump_children(pid, atoi(t->d_name), depth);
	if (d)
		closedir(d);
}

/* Set by the alarm, taken by the waiting loop. */
static int case_late;

static void case_late_alarm(int sig)
{
	(void)sig;
	__atomic_store_n(&case_late, 1, __ATOMIC_RELAXED);
}

/*
 * Waits for the case's process. A second before its own limit ends it,
 * says where each of its threads (and of its children's) is: a case that
 * times out on a loaded host and one stuck in the kernel look alike from
 * the verdict alone.
 */
static int case_wait(pid_t pid, int limit, int *status)
{
	struct sigaction sa = { .sa_handler = case_late_alarm }, old;
	pid_t got;

	/* No SA_RESTART: the alarm interrupts the wait. */
	sigaction(SIGALRM, &sa, &old);
	__atomic_store_n(&case_late, 0, __ATOMIC_RELAXED);
	alarm(limit > 2 ? limit - 1 : limit + 1);
	while ((got = waitpid(pid, status, 0)) < 0 && errno == EINTR) {
		if (!__atomic_exchange_n(&case_late, 0, __ATOMIC_RELAXED))
			continue;
		printf("# %d s into the case, its processes:\n", limit - 1);
		dump_tree(pid, 0);
		fflush(stdout);
	}
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	return got;
}

/**
 * t_case_run() - run one case in a child process, with a time limit
 * @name: the case, for its TAP line
 * @limit: seconds before the case fails as timed out
 * @body: runs the case; returns why it skipped, or NULL
 * @arg: for @body
 *
 * A case that hangs, crashes or leaks cannot take the next ones with it.
 * The child prints the verdict; one that dies without it fails here. A
 * case of CASE_SLOW seconds or more ($STAG_CASE_SLOW if set: 0 names every
 * case's time, for a profile of a suite) says how long it took: where a
 * run's time goes, and whether a case near its limit is.
 */
#define CASE_SLOW	5

static double case_slow(void)
{
	const char *s = getenv("STAG_CASE_SLOW");

	return s && *s ? atof(s) : CASE_SLOW;
}

void t_case_run(const char *name, int limit, const char *(*body)(const void *), const void *arg)
{
	struct timespec t0, t1;
	double took;
	int status;
	pid_t pid;

	load_providers();
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		t_fail("fork: %s", strerror(errno));
		t_end("%s", name);
		return;
	}
	if (!pid)
		case_child(name, limit, body, arg);
	if (case_wait(pid, limit, &status) != pid) {
		t_fail("waitpid: %s", strerror(errno));
		t_end("%s", name);
	} else if (WIFSIGNALED(status)) {
		t_fail("the case's process died of signal %d (%s)", WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
		t_end("%s", name);
	} else if (WEXITSTATUS(status)) {
		t_fail("the case's process exited with status %d", WEXITSTATUS(status));
		t_end("%s", name);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (took >= case_slow())
		printf("# the case took %.1f s\n", took);
}

/* ---- /proc and pin accounting ---- */

/**
 * file_field() - the number after "@field:" in a file of such lines
 * @path: a file like /proc/<pid>/status
 * @field: the name before the colon
 *
 * Return: the value of the last line naming @field, or -1.
 */
long file_field(const char *path, const char *field)
{
	size_t n = strlen(field);
	char line[256];
	long v = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

/* A field of /proc/<pid>/status in kB, of this process when @pid is 0. */
long status_kb(pid_t pid, const char *field)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid ? pid : getpid());
	return file_field(path, field);
}

/* The process's mm->pinned_vm, which the driver charges against RLIMIT_MEMLOCK. */
long vmpin_kb(void)
{
	return status_kb(0, "VmPin");
}

/*
 * How many objects of kind @what ("qp", "mr", "cq", "pd", "ctx"...) device
 * @dev holds, from "rdma resource show": "0: stag0: pd 1 cq 2 qp 1 ...";
 * -1 when the tool or the device does not say.
 */
long res_count(const char *dev, const char *what)
{
	char line[512], word[64], *p;
	long v = -1, n;
	size_t dlen = strlen(dev);
	FILE *f;
	int used;

	f = popen("rdma resource show 2>/dev/null", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = strchr(line, ' ');
		if (!p || strncmp(p + 1, dev, dlen) || p[1 + dlen] != ':')
			continue;
		for (p += 2 + dlen; sscanf(p, "%63s %ld%n", word, &n, &used) == 2; p += used)
			if (!strcmp(word, what))
				v = n;
	}
	pclose(f);
	return v;
}

/* Pages pinned kernel-wide (FOLL_PIN) and not released; root only. */
long pin_balance(void)
{
	long acquired = -1, released = -1;
	char name[64];
	long val;
	FILE *f;
	int fd;

	/* Fold the per-cpu deltas, or the counters lag by up to ~125 per cpu. */
	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1\n", 2) < 0)
			perror("# stat_refresh");
		close(fd);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return LONG_MIN;
	while (fscanf(f, "%63s %ld", name, &val) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acquired = val;
		else if (!strcmp(name, "nr_foll_pin_released"))
			released = val;
	}
	fclose(f);
	return acquired < 0 || released < 0 ? LONG_MIN : acquired - released;
}

/* ---- device, memory, processes ---- */

/* NULL with errno set when no device has that name or it cannot be opened. */
struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;
	bool found = false;
	int i, err;

	for (i = 0; list && list[i]; i++) {
		if (!strcmp(ibv_get_device_name(list[i]), name)) {
			found = true;
			c = ibv_open_device(list[i]);
		}
	}
	err = list && !found ? ENODEV : errno;
	if (list)
		ibv_free_device_list(list);
	errno = err;
	return c;
}

/* Private anonymous memory, or NULL (not MAP_FAILED) with errno set. */
void *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Waits up to ms for one byte on fd: how a forked child reports its progress. */
int read_byte(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) != 1 || read(fd, &c, 1) != 1)
		return -1;
	return c;
}

/* ---- rdma resource show qp ---- */

/**
 * res_qp_attrs() - driver attributes of a QP in "rdma -dd resource show qp"
 * @qpn: the QP, of dev_name
 * @names: the attributes, without rdma's "drv_" prefix
 * @vals: filled: each one's value, or -1 when the QP's entry lacks it
 * @n: how many
 *
 * An entry starts at its "link" and may run over several lines.
 *
 * Return: 1 when the QP is listed, 0 when it is not, -1 when rdma fails.
 */
int res_qp_attrs(uint32_t qpn, const char *const *names, long long *vals, int n)
{
	char out[16384], cmd[128], *tok, *val, *save;
	bool mine = false, dev_ok = false, found = false;
	size_t len = 0, got;
	int i;
	FILE *f;

	for (i = 0; i < n; i++)
		vals[i] = -1;
	snprintf(cmd, sizeof(cmd), "rdma -dd resource show qp lqpn %u 2>&1", qpn);
	fflush(stdout);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (len < sizeof(out) - 1 && (got = fread(out + len, 1, sizeof(out) - 1 - len, f)))
		len += got;
	out[len] = 0;
	if (pclose(f))
		return -1;
	for (tok = strtok_r(out, SEP, &save); tok; tok = strtok_r(NULL, SEP, &save)) {
		val = strtok_r(NULL, SEP, &save);
		if (!val)
			break;
		if (!strcmp(tok, "link")) {
			dev_ok = !strncmp(val, dev_name, strlen(dev_name)) &&
				 val[strlen(dev_name)] == '/';
			mine = false;
		} else if (!strcmp(tok, "lqpn")) {
			mine = dev_ok && strtoul(val, NULL, 0) == qpn;
			found |= mine;
		} else if (mine && !strncmp(tok, "drv_", 4)) {
			for (i = 0; i < n; i++)
				if (!strcmp(tok + 4, names[i]))
					vals[i] = strtoll(val, NULL, 0);
		}
	}
	return found;
}

/* ---- rdma resource show mr ---- */

/**
 * res_find() - the line of "rdma -dd resource show mr" for dev_name and an lkey
 * @lkey: the region's lkey
 * @out: filled when found
 *
 * The core never reports a region's iova (it is not in the netlink
 * message); -dd adds the driver's attributes (drv_iova, drv_pages), where
 * a driver may. More than one matching line fails the case in progress.
 *
 * Return: 1 and *@out filled, 0 when no line matches, -1 when rdma fails.
 */
static int res_find(uint32_t lkey, struct res_mr *out)
{
	char line[1024], *tok, *val, *save;
	int found = 0;
	FILE *f;

	fflush(stdout);
	f = popen("rdma -dd resource show mr 2>&1", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct res_mr r = { .pid = -1 };
		bool dev_ok = false, key_ok = false;

		for (tok = strtok_r(line, SEP, &save); tok; tok = strtok_r(NULL, SEP, &save)) {
			val = strtok_r(NULL, SEP, &save);
			if (!val)
				break;
			if (!strcmp(tok, "dev"))
				dev_ok = !strcmp(val, dev_name);
			else if (!strcmp(tok, "lkey"))
				key_ok = (r.lkey = strtoul(val, NULL, 0)) == lkey;
			else if (!strcmp(tok, "rkey"))
				r.rkey = strtoul(val, NULL, 0), r.has_rkey = true;
			else if (!strcmp(tok, "drv_iova"))
				r.iova = strtoull(val, NULL, 0), r.has_iova = true;
			else if (!strcmp(tok, "drv_pages"))
				r.pages = strtoull(val, NULL, 0), r.has_pages = true;
			else if (!strcmp(tok, "mrlen"))
				r.mrlen = strtoull(val, NULL, 0);
			else if (!strcmp(tok, "pid"))
				r.pid = strtol(val, NULL, 0);
		}
		if (dev_ok && key_ok) {
			*out = r;
			found++;
		}
	}
	if (pclose(f))
		return -1;
	if (found > 1)
		t_fail("%d lines for lkey %#x", found, lkey);
	return found ? 1 : 0;
}

/**
 * expect_listed() - check a region's line of "rdma resource show mr"
 * @mr: the region
 * @iova: its expected iova, checked with LIST_IOVA
 * @len: its expected mrlen
 * @what: LIST_RKEY, LIST_IOVA: what to check besides mrlen and pid
 * @out: NULL, or filled with the line for checks of the caller's own
 *
 * Return: whether the region is listed; if not, the case has failed.
 */
bool expect_listed(const struct ibv_mr *mr, uint64_t iova, uint64_t len, int what,
		   struct res_mr *out)
{
	struct res_mr r;
	int ret = res_find(mr->lkey, &r);

	if (ret <= 0) {
		t_fail("lkey %#x: %s", mr->lkey,
		       ret ? "rdma resource show mr failed" : "not listed");
		return false;
	}
	if (what & LIST_IOVA && !r.has_iova)
		t_fail("lkey %#x: no iova listed, expected %#llx", mr->lkey, (ull)iova);
	else if (what & LIST_IOVA)
		t_check(r.iova == iova, "lkey %#x: iova %#llx, expected %#llx", mr->lkey,
			(ull)r.iova, (ull)iova);
	t_check(r.mrlen == len, "lkey %#x: mrlen %llu, expected %llu", mr->lkey, (ull)r.mrlen,
		(ull)len);
	t_check(r.pid == getpid(), "lkey %#x: pid %ld, expected %d", mr->lkey, r.pid, getpid());
	if (what & LIST_RKEY)
		t_check(r.has_rkey && r.rkey == mr->rkey, "lkey %#x: rkey %#x, expected %#x",
			mr->lkey, r.rkey, mr->rkey);
	if (out)
		*out = r;
	return true;
}

void expect_unlisted(uint32_t lkey)
{
	struct res_mr r;
	int ret = res_find(lkey, &r);

	t_check(ret == 0, "lkey %#x: %s", lkey, ret > 0 ? "still listed" : "rdma failed");
}

/**
 * toeplitz() - the Toeplitz hash of Microsoft's RSS specification
 * @key: the key, at least @len + 4 bytes
 * @in: the input
 * @len: its length
 *
 * Written apart from the kernel's, bit by bit from the definition, for
 * the tests to say where RSS must put a frame.
 */
uint32_t toeplitz(const uint8_t *key, const uint8_t *in, size_t len)
{
	uint32_t hash = 0;
	size_t bit;

	for (bit = 0; bit < len * 8; bit++) {
		/* The 32 key bits that start at this input bit. */
		size_t byte = bit / 8, shift = bit % 8;
		uint64_t k = (uint64_t)key[byte] << 32 | (uint64_t)key[byte + 1] << 24 |
			     (uint64_t)key[byte + 2] << 16 | (uint64_t)key[byte + 3] << 8 |
			     key[byte + 4];

		if (in[byte] & (0x80 >> shift))
			hash ^= (uint32_t)(k >> (8 - shift));
	}
	return hash;
}
