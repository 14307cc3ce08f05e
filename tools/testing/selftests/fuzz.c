// SPDX-License-Identifier: GPL-2.0
/*
 * A verbs fuzzer (fuzz.sh, make fuzz).
 *
 *   fuzz -d DEV -g GID_INDEX [-s SEED] [-t SECONDS] [-p PROCS] [-j THREADS] [-R]
 *
 * PROCS worker processes (default 3) of THREADS threads each (default 3)
 * run random sequences of every verb stag implements, on objects of their
 * own: PDs and parent domains over them (whose allocators give rings
 * their memory, or none, or leave them the kernel's: the objects made in
 * one, extended CQs naming one, take it), CQs, QPs (RC, UC, UD, Raw
 * Packet; with and without an SRQ)
 * connected to each other over loopback, flows on any of them (specs of
 * random bytes and sizes, some matching every frame), SRQs, MRs (a third paged on demand, some over
 * the worker's udmabuf, with hostile fds and ranges too), MWs of both
 * types, AHs, and XRC: domains (of no file, of a file of the worker's, of
 * a file every worker shares, of any descriptor), XRC SRQs, TGT QPs
 * created in a domain or opened by number (another worker's too), INI
 * QPs connected to TGT QPs whose requests name SRQ numbers of the
 * domain, of another, of basic SRQs, of SRQs gone, or garbage. Each
 * call's arguments are valid or hostile by chance: sizes, flags, states
 * and masks out of range, keys of regions deregistered a moment ago,
 * addresses outside every region, unmapped memory. Besides the verbs, a
 * thread may write random bytes into a QP's own send ring and ring the
 * doorbell (a TGT QP's too, which has no ring), attach a QP to a
 * multicast group or detach it (UD SENDs then go to the group's QPN,
 * 0xffffff, a third of the time), post a FLUSH there by hand (rdma-core
 * 44 has no ibv_wr_flush(); mostly of a region that exists, as a range or
 * whole, on a device with FLUSH, whose regions and RC QPs then often have
 * the global flush right), map new memory over a buffer that has regions
 * over it, or fork a child that writes to registered memory and exits.
 *
 * Threads of a worker share its objects. An object one thread uses is not
 * destroyed under it by another (libibverbs would be reading freed
 * memory); what races is what the kernel must order: a region
 * deregistered or a peer QP destroyed while WRs naming them run, a window
 * bound while its region goes, a CQ destroyed while QPs use it, an XRC
 * SRQ destroyed while INI QPs' requests name it, a TGT QP destroyed or
 * moved to another state while another worker has it open.
 *
 * The parent SIGKILLs each worker after a random lifetime of 0.2-3 s (or
 * lets one finish and tear down in order) and starts the next, until
 * SECONDS are up. A worker's thread t of generation g draws from the seed
 * (SEED, g, worker, t): the calls each thread makes are the same run after
 * run; their interleaving is the scheduler's.
 *
 * The exit status is 0 unless a worker died of anything but the parent's
 * SIGKILL (the kernel must not hand a process garbage it then trips on),
 * or of a domain that closed while SRQs or QPs of the worker's were in it
 * (status 4: the close must be EBUSY, and the domain must still find its
 * TGT QPs by number after it).
 * With -R the device may be removed meanwhile (fuzz.sh unloads stag under
 * it): a worker that cannot open it then exits with status 3, which is no
 * failure.
 * What the kernel must have done is checked by fuzz.sh: no report, no
 * pin, TPT entry or restrack object left.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/stag-abi.h>

#include "stagdv.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NSLOT		8	/* objects of each kind a worker keeps */
#define NBUF		4	/* buffers regions are registered over */
#define BUF_LEN		(64 * 4096)
#define QKEY		0x11111111
#define MAX_PROCS	16
#define MAX_THREADS	16
#define MAX_SGE		8	/* SGEs a WR may name, past every QP's limit */

enum kind { K_PD, K_CQ, K_QP, K_SRQ, K_MR, K_MW, K_AH, K_XRCD, K_FLOW, K_WQ, K_IND, K_NR };

/* One object a worker holds, and whether a thread is using it. */
struct slot {
	void *obj;
	int busy;		/* threads using it now */
	bool alone;		/* one thread has it to itself */
	int sub;		/* QP: type; SRQ: type; MW: type; MR: buffer */
	struct ibv_xrcd *xrcd;	/* XRC SRQ, TGT QP: the domain it was made or opened in */
};

/* A worker: its context and objects, shared by its threads. */
struct world {
	struct ibv_context *ctx;
	union ibv_gid gid;
	int gid_index;
	pthread_mutex_t lock;
	struct slot s[K_NR][NSLOT];
	char *buf[NBUF];
	int dmabuf_fd;		/* a udmabuf of BUF_LEN bytes, or -1 */
	int file_fd;		/* a file of the worker's own for XRC domains, or -1 */
};

/* XRC numbers each worker publishes for the others to open and to name. */
#define NNUM		16

/* Counters every process adds to, and the numbers, in memory the parent shares. */
struct stats {
	atomic_ulong calls, failed, einval, enomem, ebusy, other_err;
	atomic_ulong completions, wc_errors, wc_flushed, junk_rings, flushes, forks, remaps;
	atomic_ulong attaches, dmabufs, flows, wqs, ind_tables, rss_qps;
	atomic_ulong xrcds, xrcd_busy, xsrqs, tgts, opened, inis, xrc_posts, xrc_recvs;
	atomic_ulong parents, ring_allocs, ring_frees;
	atomic_ulong tm_srqs, tm_ops;
	atomic_ulong workers, killed, finished;
	atomic_uint tgt_qpn[NNUM], srqn[NNUM];
};

static struct stats *stats;

/* An unlinked file every worker inherits: their domains of it are one. */
static int shared_fd = -1;

/* -R: the device may go, and every destroy then succeeds (EIO is taken as done). */
static bool may_go;

/* The kernel's values (6.2's ib_user_verbs.h; Debian 12's headers are 6.1's). */
#define WR_FLUSH		14
#define ACC_FLUSH_GLOBAL	0x100
#define CAP_FLUSH		(3ULL << 38)	/* IB_UVERBS_DEVICE_FLUSH_{GLOBAL,PERSISTENT} */

/* ACC_FLUSH_GLOBAL where the device has FLUSH (Linux 6.2 on), else 0: set per worker. */
static int flush_access;

/* The multicast groups QPs attach to, in the family of the worker's GID. */
#define NGROUP		4
static union ibv_gid groups[NGROUP];

/* ---- randomness ---- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static __thread uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng = mix(rng + 0x9e3779b97f4a7c15ULL);
	return n ? (uint32_t)(rng % n) : 0;
}

/* True one time in @n. */
static bool one_in(uint32_t n)
{
	return rnd(n) == 0;
}

/* A hostile 32-bit value: the edges and random bits. */
static uint32_t wild32(void)
{
	static const uint32_t edge[] = { 0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe,
					 0x1000000, 0xffffff, 4096, 65536 };

	return one_in(2) ? edge[rnd(ARRAY_SIZE(edge))] : (uint32_t)mix(rng++);
}

static void count(int ret)
{
	atomic_fetch_add(&stats->calls, 1);
	if (!ret)
		return;
	atomic_fetch_add(&stats->failed, 1);
	if (ret == EINVAL)
		atomic_fetch_add(&stats->einval, 1);
	else if (ret == ENOMEM)
		atomic_fetch_add(&stats->enomem, 1);
	else if (ret == EBUSY)
		atomic_fetch_add(&stats->ebusy, 1);
	else
		atomic_fetch_add(&stats->other_err, 1);
}

/* A verb that returns an object: counted, errno on failure. */
static void *made(void *obj)
{
	count(obj ? 0 : errno ? errno : EINVAL);
	return obj;
}

/* ---- the object table ---- */

/* Takes a random object of @k for use; NULL when there is none. */
static void *take(struct world *w, enum kind k, int *sub)
{
	struct slot *s = &w->s[k][rnd(NSLOT)];
	void *obj = NULL;

	pthread_mutex_lock(&w->lock);
	if (s->obj && !s->alone) {
		s->busy++;
		obj = s->obj;
		if (sub)
			*sub = s->sub;
	}
	pthread_mutex_unlock(&w->lock);
	return obj;
}

static void give(struct world *w, enum kind k, void *obj)
{
	int i;

	pthread_mutex_lock(&w->lock);
	for (i = 0; i < NSLOT; i++)
		if (w->s[k][i].obj == obj) {
			w->s[k][i].busy--;
			break;
		}
	pthread_mutex_unlock(&w->lock);
}

/* The domain of a random XRC SRQ or TGT QP (@k) of the table, to compare with; NULL if none. */
static struct ibv_xrcd *some_domain(struct world *w, enum kind k)
{
	struct slot *s = &w->s[k][rnd(NSLOT)];
	struct ibv_xrcd *xrcd;

	pthread_mutex_lock(&w->lock);
	xrcd = s->obj ? s->xrcd : NULL;
	pthread_mutex_unlock(&w->lock);
	return xrcd;
}

/*
 * Takes a domain for a new XRC SRQ or TGT QP: mostly one that has TGT QPs
 * or SRQs (@other) already, so that requests to the one may name the
 * other; else any.
 */
static struct ibv_xrcd *take_domain(struct world *w, enum kind other)
{
	struct ibv_xrcd *xrcd = one_in(4) ? NULL : some_domain(w, other);
	struct slot *s;
	int i;

	pthread_mutex_lock(&w->lock);
	for (i = 0; xrcd && i < NSLOT; i++) {
		s = &w->s[K_XRCD][i];
		if (s->obj == xrcd && !s->alone) {
			s->busy++;
			break;
		}
	}
	if (i == NSLOT)
		xrcd = NULL;
	pthread_mutex_unlock(&w->lock);
	return xrcd ?: take(w, K_XRCD, NULL);
}

/*
 * Takes the PD of a random region, for an object whose traffic is to
 * land: an INI QP's requests and an XRC SRQ's receives then have regions
 * of their PD to name. NULL when there is no region, or its PD is not in
 * the table (a rereg moving it).
 */
static struct ibv_pd *take_pd_of_mr(struct world *w)
{
	struct slot *m = &w->s[K_MR][rnd(NSLOT)], *s;
	struct ibv_pd *pd = NULL;
	int i;

	pthread_mutex_lock(&w->lock);
	for (i = 0; m->obj && i < NSLOT && !pd; i++) {
		s = &w->s[K_PD][i];
		if (s->obj && s->obj == ((struct ibv_mr *)m->obj)->pd && !s->alone) {
			s->busy++;
			pd = s->obj;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return pd;
}

/*
 * Takes a random object of @k nobody else uses, and keeps the others off
 * it until give_alone(): for writing into a QP's ring behind the
 * provider's back, which would otherwise scribble on a WQE the provider
 * is building in another thread (a fault of this process's own making).
 */
static struct slot *take_alone(struct world *w, enum kind k)
{
	struct slot *s = &w->s[k][rnd(NSLOT)];

	pthread_mutex_lock(&w->lock);
	if (!s->obj || s->busy || s->alone)
		s = NULL;
	else
		s->alone = true;
	pthread_mutex_unlock(&w->lock);
	return s;
}

static void give_alone(struct world *w, struct slot *s)
{
	pthread_mutex_lock(&w->lock);
	s->alone = false;
	pthread_mutex_unlock(&w->lock);
}

/* Removes a random object of @k nobody uses, for destruction. */
static void *remove_one(struct world *w, enum kind k, int *sub)
{
	struct slot *s = &w->s[k][rnd(NSLOT)];
	void *obj = NULL;

	pthread_mutex_lock(&w->lock);
	if (s->obj && !s->busy && !s->alone) {
		obj = s->obj;
		if (sub)
			*sub = s->sub;
		s->obj = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	return obj;
}

/*
 * Puts a new object, of the domain @xrcd if it is an XRC SRQ or a TGT
 * QP, in a free slot; false (the caller destroys it) when full.
 */
static bool add_in(struct world *w, enum kind k, void *obj, int sub, struct ibv_xrcd *xrcd)
{
	bool done = false;
	int i;

	pthread_mutex_lock(&w->lock);
	for (i = 0; i < NSLOT && !done; i++)
		if (!w->s[k][i].obj) {
			w->s[k][i] = (struct slot){ .obj = obj, .sub = sub, .xrcd = xrcd };
			done = true;
		}
	pthread_mutex_unlock(&w->lock);
	return done;
}

static bool add(struct world *w, enum kind k, void *obj, int sub)
{
	return add_in(w, k, obj, sub, NULL);
}

/*
 * Takes a random object of @k whose sub is @sub and, unless @xrcd is
 * NULL, of that domain, for use; NULL when there is none.
 */
static void *take_sub(struct world *w, enum kind k, int sub, struct ibv_xrcd *xrcd)
{
	int first = rnd(NSLOT), i;
	struct slot *s;
	void *obj = NULL;

	pthread_mutex_lock(&w->lock);
	for (i = 0; i < NSLOT && !obj; i++) {
		s = &w->s[k][(first + i) % NSLOT];
		if (s->obj && !s->alone && s->sub == sub && (!xrcd || s->xrcd == xrcd)) {
			s->busy++;
			obj = s->obj;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return obj;
}

/* The key of a random region or window, whether or not it still exists. */
static __thread uint32_t old_keys[16];

static uint32_t some_key(struct world *w, bool remote)
{
	bool window = remote && one_in(3);
	uint32_t key = old_keys[rnd(16)];
	struct slot *s;

	pthread_mutex_lock(&w->lock);
	s = &w->s[window ? K_MW : K_MR][rnd(NSLOT)];
	if (s->obj && !one_in(4)) {
		if (window)
			key = ((struct ibv_mw *)s->obj)->rkey;
		else if (remote)
			key = ((struct ibv_mr *)s->obj)->rkey;
		else
			key = ((struct ibv_mr *)s->obj)->lkey;
	}
	pthread_mutex_unlock(&w->lock);
	if (one_in(8))
		key = wild32();
	return key;
}

static void remember_key(uint32_t key)
{
	old_keys[rnd(16)] = key;
}

/* An address in one of the buffers, or near them, or anywhere. */
static uint64_t some_addr(struct world *w, uint32_t *len)
{
	char *b = w->buf[rnd(NBUF)];
	uint32_t off = rnd(BUF_LEN);

	*len = rnd(BUF_LEN - off + 1);
	if (one_in(6))
		*len = wild32();
	if (one_in(8))
		return (uint64_t)mix(rng++);
	return (uint64_t)(uintptr_t)(b + off);
}

/* Takes a random region of @pd for use; NULL when there is none. */
static struct ibv_mr *take_mr_of(struct world *w, struct ibv_pd *pd)
{
	int first = rnd(NSLOT), i;
	struct ibv_mr *mr = NULL;
	struct slot *s;

	pthread_mutex_lock(&w->lock);
	for (i = 0; i < NSLOT && !mr; i++) {
		s = &w->s[K_MR][(first + i) % NSLOT];
		if (s->obj && !s->alone && ((struct ibv_mr *)s->obj)->pd == pd) {
			s->busy++;
			mr = s->obj;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return mr;
}

/*
 * An SGE inside a region that exists now (it may be gone by the time the
 * WR runs), of @pd unless it is NULL, and the region's rkey and an
 * address inside it; false when there is no such region.
 */
static bool region_sge(struct world *w, struct ibv_pd *pd, struct ibv_sge *sge, uint32_t *rkey,
		       uint64_t *raddr)
{
	struct ibv_mr *mr = pd ? take_mr_of(w, pd) : take(w, K_MR, NULL);
	uint64_t off;

	if (!mr)
		return false;
	off = rnd(mr->length);
	sge->addr = (uint64_t)(uintptr_t)mr->addr + off;
	sge->length = rnd(mr->length - off + 1);
	sge->lkey = mr->lkey;
	*rkey = mr->rkey;
	*raddr = (uint64_t)(uintptr_t)mr->addr + rnd(mr->length);
	give(w, K_MR, mr);
	return true;
}

/* ---- the verbs ---- */

/*
 * A parent domain's allocator, for the rings of what is made in it:
 * memory, none (the create fails ENOMEM), or the kernel's ring.
 */
static void *ring_alloc(struct ibv_pd *pd, void *context, size_t size, size_t align,
			uint64_t type)
{
	void *p;

	(void)pd, (void)context, (void)type;
	if (one_in(8))
		return NULL;
	if (one_in(4))
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (posix_memalign(&p, align, size))
		return NULL;
	atomic_fetch_add(&stats->ring_allocs, 1);
	return p;
}

static void ring_free(struct ibv_pd *pd, void *context, void *ptr, uint64_t type)
{
	(void)pd, (void)context, (void)type;
	atomic_fetch_add(&stats->ring_frees, 1);
	free(ptr);
}

/*
 * A parent domain (slot sub 1) over a PD of the table (or a parent, which
 * is refused), with the allocators above or none: the objects made in it
 * take their rings from them.
 */
static struct ibv_pd *parent_new(struct world *w)
{
	struct ibv_parent_domain_init_attr a = {
		.alloc = ring_alloc, .free = ring_free,
		.comp_mask = one_in(4) ? 0 : IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS,
	};
	struct ibv_pd *pd;

	a.pd = take(w, K_PD, NULL);
	if (!a.pd)
		return NULL;
	pd = made(ibv_alloc_parent_domain(w->ctx, &a));
	give(w, K_PD, a.pd);
	if (pd)
		atomic_fetch_add(&stats->parents, 1);
	return pd;
}

static void op_pd(struct world *w)
{
	struct ibv_pd *pd;

	if (one_in(2)) {
		bool parent = one_in(3);

		pd = parent ? parent_new(w) : made(ibv_alloc_pd(w->ctx));
		if (pd && !add(w, K_PD, pd, parent))
			count(ibv_dealloc_pd(pd));
	} else {
		int sub;

		pd = remove_one(w, K_PD, &sub);
		if (!pd)
			return;
		/*
		 * EBUSY while its objects live (a PD's) or their rings hold its
		 * allocator's memory (a parent domain's): then it stays.
		 */
		if (ibv_dealloc_pd(pd)) {
			count(errno);
			add(w, K_PD, pd, sub);
		} else {
			count(0);
		}
	}
}

/* Whether @qpn is a TGT QP the worker has: a receive of an XRC SRQ completes as its. */
static bool is_tgt(struct world *w, uint32_t qpn)
{
	bool found = false;
	struct slot *s;
	int i;

	pthread_mutex_lock(&w->lock);
	for (i = 0; i < NSLOT && !found; i++) {
		s = &w->s[K_QP][i];
		found = s->obj && s->sub == IBV_QPT_XRC_RECV &&
			((struct ibv_qp *)s->obj)->qp_num == qpn;
	}
	pthread_mutex_unlock(&w->lock);
	return found;
}

/* An extended CQ naming a domain of the table: a parent domain's, or a PD refused EINVAL. */
static struct ibv_cq *cq_in_parent(struct world *w, int cqe)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = cqe, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_cq_ex *cq;

	a.parent_domain = take(w, K_PD, NULL);
	if (!a.parent_domain)
		return NULL;
	cq = made(ibv_create_cq_ex(w->ctx, &a));
	give(w, K_PD, a.parent_domain);
	return cq ? ibv_cq_ex_to_cq(cq) : NULL;
}

static void op_cq(struct world *w)
{
	struct ibv_cq *cq;
	int cqe = one_in(4) ? (int)wild32() : 1 + (int)rnd(256);

	switch (rnd(4)) {
	case 0:
		if (one_in(3)) {
			cq = cq_in_parent(w, cqe);
		} else {
			cq = made(ibv_create_cq(w->ctx, cqe, NULL, NULL,
						one_in(8) ? (int)wild32() : 0));
		}
		if (cq && !add(w, K_CQ, cq, 0))
			count(ibv_destroy_cq(cq));
		break;
	case 1:
		cq = remove_one(w, K_CQ, NULL);
		if (cq && ibv_destroy_cq(cq)) {
			count(errno);		/* EBUSY while a QP uses it */
			add(w, K_CQ, cq, 0);
		} else if (cq) {
			count(0);
		}
		break;
	case 2:
		cq = take(w, K_CQ, NULL);
		if (cq) {
			count(ibv_resize_cq(cq, cqe));
			give(w, K_CQ, cq);
		}
		break;
	default:
		cq = take(w, K_CQ, NULL);
		if (cq) {
			struct ibv_wc wc[16];
			int n = ibv_poll_cq(cq, 16, wc), i;

			for (i = 0; i < n; i++) {
				atomic_fetch_add(&stats->completions, 1);
				if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
					atomic_fetch_add(&stats->wc_flushed, 1);
				else if (wc[i].status != IBV_WC_SUCCESS)
					atomic_fetch_add(&stats->wc_errors, 1);
				else if (wc[i].opcode & IBV_WC_RECV && is_tgt(w, wc[i].qp_num))
					atomic_fetch_add(&stats->xrc_recvs, 1);
			}
			count(ibv_req_notify_cq(cq, rnd(2)));
			give(w, K_CQ, cq);
		}
	}
}

/* A udmabuf of BUF_LEN bytes over a sealed memfd, or -1 when the kernel has none. */
static int dmabuf_open(void)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = BUF_LEN };
	int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC), mfd, fd = -1;

	if (dev < 0)
		return -1;
	mfd = memfd_create("fuzz", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd >= 0 && !ftruncate(mfd, BUF_LEN) && !fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		c.memfd = mfd;
		fd = ioctl(dev, UDMABUF_CREATE, &c);
	}
	if (mfd >= 0)
		close(mfd);
	close(dev);
	return fd;
}

/*
 * A region over a range of the worker's udmabuf, at an iova equal to its
 * offset (the region's addr, as libibverbs reports it, so that SGEs built
 * from it are in range), or with a hostile fd (none, any descriptor of
 * the process), range or iova.
 */
static struct ibv_mr *dmabuf_mr(struct world *w, struct ibv_pd *pd, int access)
{
	uint64_t off = rnd(BUF_LEN), len = rnd(BUF_LEN - off) + 1, iova = off;
	int fd = w->dmabuf_fd;

	if (one_in(8))
		fd = one_in(2) ? -1 : (int)rnd(64);
	if (one_in(8))
		off = one_in(2) ? wild32() : ~0ULL - rnd(8192);
	if (one_in(8))
		len = one_in(2) ? wild32() : BUF_LEN + 1;
	if (one_in(8))
		iova = one_in(2) ? (uint64_t)wild32() << 32 | wild32() : off + 1;
	atomic_fetch_add(&stats->dmabufs, 1);
	return ibv_reg_dmabuf_mr(pd, off, len, iova, fd, access);
}

static void op_mr(struct world *w)
{
	int access = rnd(16) & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	uint32_t len;
	uint64_t addr;
	int b = rnd(NBUF);

	/* A third of the regions paged on demand: faults, notifiers, no pins. */
	if (one_in(3))
		access |= IBV_ACCESS_ON_DEMAND;
	if (one_in(2))
		access |= flush_access;
	if (one_in(2)) {
		access |= IBV_ACCESS_LOCAL_WRITE;
		if (one_in(6))
			access = (int)wild32();
		pd = take(w, K_PD, NULL);
		if (!pd)
			return;
		addr = (uint64_t)(uintptr_t)w->buf[b] + rnd(BUF_LEN);
		len = rnd((uint32_t)((uintptr_t)w->buf[b] + BUF_LEN - addr)) + 1;
		if (one_in(6))
			addr = some_addr(w, &len);
		if (one_in(5))
			mr = made(dmabuf_mr(w, pd, access));
		else
			mr = made(ibv_reg_mr(pd, (void *)(uintptr_t)addr, len, access));
		give(w, K_PD, pd);
		if (mr && !add(w, K_MR, mr, b))
			count(ibv_dereg_mr(mr));
	} else if (one_in(3)) {
		mr = take(w, K_MR, &b);
		if (mr) {
			int flags = rnd(8) & (IBV_REREG_MR_CHANGE_TRANSLATION |
					      IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS);

			pd = take(w, K_PD, NULL);
			if (!pd)
				flags &= ~IBV_REREG_MR_CHANGE_PD;
			/* The rereg may move the region anywhere in its buffer. */
			count(ibv_rereg_mr(mr, flags, pd, w->buf[b] + rnd(BUF_LEN / 2),
					   1 + rnd(BUF_LEN / 2), access | IBV_ACCESS_LOCAL_WRITE) ?
			      EINVAL : 0);
			if (pd)
				give(w, K_PD, pd);
			give(w, K_MR, mr);
		}
	} else {
		uint32_t key;

		mr = remove_one(w, K_MR, &b);
		if (!mr)
			return;
		key = mr->lkey;
		if (ibv_dereg_mr(mr)) {
			count(errno);		/* EBUSY while windows are bound */
			add(w, K_MR, mr, b);
		} else {
			count(0);
			remember_key(key);
		}
	}
}

static void op_mw(struct world *w)
{
	enum ibv_mw_type type = one_in(2) ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2;
	struct ibv_mw *mw;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	int sub;

	if (one_in(2)) {
		pd = take(w, K_PD, NULL);
		if (!pd)
			return;
		mw = made(ibv_alloc_mw(pd, type));
		give(w, K_PD, pd);
		if (mw && !add(w, K_MW, mw, type))
			count(ibv_dealloc_mw(mw));
	} else if (one_in(2)) {
		mw = remove_one(w, K_MW, NULL);
		if (mw) {
			remember_key(mw->rkey);
			count(ibv_dealloc_mw(mw));
		}
	} else {
		/* A type 1 bind through a QP; its region may be going. */
		mw = take(w, K_MW, &sub);
		qp = take(w, K_QP, NULL);
		mr = take(w, K_MR, NULL);
		if (mw && qp && mr && sub == IBV_MW_TYPE_1) {
			struct ibv_mw_bind bind = {
				.wr_id = 7,
				.send_flags = IBV_SEND_SIGNALED,
				.bind_info = {
					.mr = mr,
					.addr = (uint64_t)(uintptr_t)mr->addr + rnd(64),
					.length = one_in(4) ? wild32() : rnd(mr->length + 1),
					.mw_access_flags = rnd(16) & (IBV_ACCESS_REMOTE_WRITE |
								      IBV_ACCESS_REMOTE_READ |
								      IBV_ACCESS_REMOTE_ATOMIC),
				},
			};

			count(ibv_bind_mw(qp, mw, &bind));
		}
		if (mr)
			give(w, K_MR, mr);
		if (qp)
			give(w, K_QP, qp);
		if (mw)
			give(w, K_MW, mw);
	}
}

/*
 * A tag list operation, on any SRQ: wild opcodes, flags, counts and
 * handles; tags a message's random header may match (mask 0 takes every
 * EAGER and RNDV), over @sge's buffers.
 */
static void srq_ops(struct ibv_srq *srq, struct ibv_sge *sge)
{
	struct ibv_ops_wr op = {
		.wr_id = 10,
		.opcode = one_in(8) ? (enum ibv_ops_wr_opcode)wild32() :
				      (enum ibv_ops_wr_opcode)rnd(3),
		.flags = one_in(8) ? (int)wild32() : (int)rnd(4),
		.tm = {
			.unexpected_cnt = one_in(4) ? wild32() : rnd(4),
			.handle = one_in(4) ? wild32() : rnd(32),
			.add = {
				.recv_wr_id = 11,
				.sg_list = sge,
				.num_sge = one_in(8) ? (int)rnd(MAX_SGE + 2) : 1,
				.tag = one_in(2) ? 0 : rnd(8),
				.mask = one_in(2) ? 0 : ~0ULL,
			},
		},
	}, *bad;
	int ret;

	if (op.tm.add.num_sge > MAX_SGE)
		op.tm.add.num_sge = MAX_SGE;
	ret = ibv_post_srq_ops(srq, &op, &bad);
	count(ret);
	if (!ret)
		atomic_fetch_add(&stats->tm_ops, 1);
}

static void op_srq(struct world *w)
{
	struct ibv_srq *srq;
	struct ibv_pd *pd;

	switch (rnd(3)) {
	case 0: {
		struct ibv_srq_init_attr init = {
			.attr = { .max_wr = one_in(5) ? wild32() : 1 + rnd(64),
				  .max_sge = one_in(5) ? wild32() : 1 + rnd(4),
				  .srq_limit = one_in(5) ? wild32() : 0 },
		};

		pd = take(w, K_PD, NULL);
		if (!pd)
			return;
		srq = made(ibv_create_srq(pd, &init));
		give(w, K_PD, pd);
		if (srq && !add(w, K_SRQ, srq, 0))
			count(ibv_destroy_srq(srq));
		break;
	}
	case 1:
		srq = remove_one(w, K_SRQ, NULL);
		if (srq && ibv_destroy_srq(srq)) {
			count(errno);
			add(w, K_SRQ, srq, 0);
		} else if (srq) {
			count(0);
		}
		break;
	default:
		srq = take(w, K_SRQ, NULL);
		if (srq) {
			struct ibv_srq_attr a = { .max_wr = one_in(2) ? rnd(80) : wild32(),
						  .srq_limit = rnd(80) };
			struct ibv_sge sge[MAX_SGE];
			struct ibv_recv_wr wr = { .wr_id = 9, .sg_list = sge }, *bad;
			uint32_t len, rkey;
			uint64_t raddr;
			int i;

			/* Resizes too, with receives waiting and others posting. */
			count(ibv_modify_srq(srq, &a, one_in(4) ? (int)wild32() :
						  one_in(3) ? IBV_SRQ_MAX_WR : IBV_SRQ_LIMIT));
			/* Half the time into a region of its PD, where a message can land. */
			for (i = 0; i < MAX_SGE; i++) {
				if (one_in(2) && region_sge(w, srq->pd, &sge[i], &rkey, &raddr))
					continue;
				sge[i].addr = some_addr(w, &len);
				sge[i].length = len;
				sge[i].lkey = some_key(w, false);
			}
			wr.num_sge = one_in(8) ? (int)rnd(MAX_SGE + 1) : 1;
			count(ibv_post_srq_recv(srq, &wr, &bad));
			srq_ops(srq, sge);
			give(w, K_SRQ, srq);
		}
	}
}

static void op_ah(struct world *w)
{
	struct ibv_ah *ah;
	struct ibv_pd *pd;

	if (one_in(2)) {
		struct ibv_ah_attr a = {
			.is_global = !one_in(8),
			.port_num = one_in(8) ? rnd(4) : 1,
			.grh = { .dgid = w->gid, .hop_limit = 64,
				 .sgid_index = one_in(8) ? rnd(256) : (uint32_t)w->gid_index },
		};

		if (one_in(4))
			a.grh.dgid = groups[rnd(NGROUP)];
		pd = take(w, K_PD, NULL);
		if (!pd)
			return;
		ah = made(ibv_create_ah(pd, &a));
		give(w, K_PD, pd);
		if (ah && !add(w, K_AH, ah, 0))
			count(ibv_destroy_ah(ah));
	} else {
		ah = remove_one(w, K_AH, NULL);
		if (ah)
			count(ibv_destroy_ah(ah));
	}
}

/* 239.255.90.n or ff0e::90:n, n < NGROUP, as the worker's GID is IPv4 or not. */
static void groups_init(const union ibv_gid *gid)
{
	bool v4 = !memcmp(gid->raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
	int i;

	for (i = 0; i < NGROUP; i++) {
		memset(&groups[i], 0, sizeof(groups[i]));
		if (v4) {
			memcpy(groups[i].raw, gid->raw, 12);
			groups[i].raw[12] = 239;
			groups[i].raw[13] = 255;
			groups[i].raw[14] = 90;
		} else {
			groups[i].raw[0] = 0xff;
			groups[i].raw[1] = 0x0e;
			groups[i].raw[13] = 0x90;
		}
		groups[i].raw[15] = i;
	}
}

/*
 * A QP's destroy, which the core refuses (EBUSY) while it is attached to a
 * group: mostly after detaching it from every group (with either LID
 * op_mcast uses), as a process does; else the destroy is tried first.
 */
static int destroy_qp(void *o)
{
	struct ibv_qp *qp = o;
	int i, ret = EBUSY;

	if (one_in(4))
		ret = ibv_destroy_qp(qp);
	if (ret != EBUSY)
		return ret;
	/* No XRC QP was attached (op_mcast). */
	for (i = 0; i < 2 * NGROUP && qp->qp_type != IBV_QPT_XRC_RECV &&
	     qp->qp_type != IBV_QPT_XRC_SEND; i++)
		ibv_detach_mcast(qp, &groups[i / 2], i % 2);
	return ibv_destroy_qp(qp);
}

/* Attach a QP to a group or detach it: mostly a group of the worker's, else any GID. */
static void op_mcast(struct world *w)
{
	union ibv_gid g = groups[rnd(NGROUP)];
	struct ibv_qp *qp = take(w, K_QP, NULL);
	unsigned int i;
	int ret;

	if (!qp)
		return;
	/*
	 * Not on an XRC QP: ib_uverbs_open_qp() never initializes the
	 * handle's mcast_lock (Linux 6.12 and mainline), and the core's
	 * attach and detach take it before they look at the QP's type.
	 */
	if (qp->qp_type == IBV_QPT_XRC_RECV || qp->qp_type == IBV_QPT_XRC_SEND) {
		give(w, K_QP, qp);
		return;
	}
	if (one_in(8)) {
		for (i = 0; i < sizeof(g.raw); i++)
			g.raw[i] = rnd(256);
	} else if (one_in(8)) {
		g = w->gid;
	}
	if (rnd(3)) {
		ret = ibv_attach_mcast(qp, &g, rnd(2));
		count(ret);
		if (!ret)
			atomic_fetch_add(&stats->attaches, 1);
	} else {
		count(ibv_detach_mcast(qp, &g, rnd(2)));
	}
	give(w, K_QP, qp);
}

static const enum ibv_qp_type qp_types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
					     IBV_QPT_RAW_PACKET };

/*
 * A QP of @type. An INI QP (IBV_QPT_XRC_SEND) has no receive queue: the
 * kernel refuses it an SRQ, and it is given no receive CQ. The kernel
 * would not hold one, so it could be destroyed under the QP, and
 * libibverbs records it all the same: the provider's reset would then
 * clean a freed CQ (stag_modify_qp()).
 */
static void qp_create(struct world *w, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr init = {
		.qp_type = type,
		.sq_sig_all = rnd(2),
		.cap = { .max_send_wr = 1 + rnd(64), .max_recv_wr = 1 + rnd(64),
			 .max_send_sge = 1 + rnd(4), .max_recv_sge = 1 + rnd(4),
			 .max_inline_data = rnd(2) ? 0 : rnd(256) },
	};
	bool ini = type == IBV_QPT_XRC_SEND;
	struct ibv_cq *scq, *rcq = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_pd *pd;
	struct ibv_qp *qp;

	if (one_in(6)) {
		init.cap.max_send_wr = wild32();
		init.cap.max_send_sge = wild32() & 0xff;
		init.cap.max_inline_data = wild32();
	}
	pd = ini && !one_in(4) ? take_pd_of_mr(w) : take(w, K_PD, NULL);
	scq = take(w, K_CQ, NULL);
	if (!ini)
		rcq = take(w, K_CQ, NULL);
	if (type != IBV_QPT_UC && one_in(ini ? 8 : 3))
		srq = take(w, K_SRQ, NULL);
	if (pd && scq && (rcq || ini)) {
		init.send_cq = scq;
		init.recv_cq = rcq;
		init.srq = srq;
		qp = made(ibv_create_qp(pd, &init));
		if (qp && ini)
			atomic_fetch_add(&stats->inis, 1);
		if (qp && !add(w, K_QP, qp, type))
			count(ibv_destroy_qp(qp));
	}
	if (srq)
		give(w, K_SRQ, srq);
	if (rcq)
		give(w, K_CQ, rcq);
	if (scq)
		give(w, K_CQ, scq);
	if (pd)
		give(w, K_PD, pd);
}

/*
 * RESET to RTS towards @dest (any QP number), or a random transition;
 * @plain: never the random transition, and an MTU the port has, for a
 * pair that is to carry traffic.
 */
static void qp_connect(struct world *w, struct ibv_qp *qp, uint32_t dest, bool plain)
{
	static const enum ibv_mtu mtus[] = { IBV_MTU_256, IBV_MTU_1024, IBV_MTU_4096 };
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};
	bool ud = qp->qp_type == IBV_QPT_UD, rc = qp->qp_type == IBV_QPT_RC;
	/* An XRC TGT QP answers as an RC QP does, an INI QP asks as one does. */
	bool tgt = qp->qp_type == IBV_QPT_XRC_RECV, ini = qp->qp_type == IBV_QPT_XRC_SEND;
	int mask;

	if (rc && !one_in(4))
		a.qp_access_flags |= flush_access;
	if (qp->qp_type == IBV_QPT_UC)
		a.qp_access_flags &= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	if (!plain && one_in(5)) {
		/* Anything at all. */
		memset(&a, 0, sizeof(a));
		a.qp_state = rnd(8);
		a.path_mtu = rnd(8);
		a.timeout = rnd(32);
		a.retry_cnt = rnd(8);
		a.rnr_retry = rnd(8);
		a.max_rd_atomic = rnd(256);
		a.max_dest_rd_atomic = rnd(256);
		a.dest_qp_num = wild32();
		a.port_num = rnd(4);
		a.ah_attr.is_global = rnd(2);
		a.ah_attr.grh.sgid_index = rnd(256);
		count(ibv_modify_qp(qp, &a, (int)wild32() & 0x1fffff));
		return;
	}
	/* A Raw Packet QP: the port at INIT, then nothing but the state. */
	if (qp->qp_type == IBV_QPT_RAW_PACKET) {
		count(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT));
		a.qp_state = IBV_QPS_RTR;
		count(ibv_modify_qp(qp, &a, IBV_QP_STATE));
		a.qp_state = IBV_QPS_RTS;
		count(ibv_modify_qp(qp, &a, IBV_QP_STATE));
		return;
	}
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	count(ibv_modify_qp(qp, &a, mask));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = plain ? IBV_MTU_1024 : mtus[rnd(3)];
	a.dest_qp_num = dest;
	a.rq_psn = dest & 0xffffff;
	a.max_dest_rd_atomic = 1 + rnd(8);
	a.min_rnr_timer = 1;
	a.ah_attr = (struct ibv_ah_attr){
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = w->gid, .sgid_index = w->gid_index, .hop_limit = 64 },
	};
	mask = IBV_QP_STATE;
	if (!ud)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (rc || tgt)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	count(ibv_modify_qp(qp, &a, mask));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = qp->qp_num & 0xffffff;
	/* Short timeouts and finite retries: nothing waits for long. */
	a.timeout = 6 + rnd(6);
	a.retry_cnt = rnd(4);
	a.rnr_retry = rnd(4);
	a.max_rd_atomic = 1 + rnd(8);
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc || ini)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	else if (tgt)
		mask |= IBV_QP_TIMEOUT;
	count(ibv_modify_qp(qp, &a, mask));
}

static void op_qp(struct world *w)
{
	struct ibv_qp *qp, *peer;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	uint32_t dest;

	switch (rnd(5)) {
	case 0:
		qp_create(w, qp_types[rnd(ARRAY_SIZE(qp_types))]);
		break;
	case 1:
		qp = remove_one(w, K_QP, NULL);
		if (qp)
			count(destroy_qp(qp));
		break;
	case 2:
	case 3:
		qp = take(w, K_QP, NULL);
		if (!qp)
			break;
		peer = take(w, K_QP, NULL);
		dest = peer ? peer->qp_num : wild32() & 0xffffff;
		if (one_in(3)) {
			a.qp_state = IBV_QPS_RESET;
			count(ibv_modify_qp(qp, &a, IBV_QP_STATE));
		}
		qp_connect(w, qp, dest, false);
		/* Half the time both ways: a pair that carries traffic. */
		if (peer && peer != qp && one_in(2)) {
			a.qp_state = IBV_QPS_RESET;
			count(ibv_modify_qp(peer, &a, IBV_QP_STATE));
			qp_connect(w, peer, qp->qp_num, false);
		}
		if (peer)
			give(w, K_QP, peer);
		give(w, K_QP, qp);
		break;
	default:
		qp = take(w, K_QP, NULL);
		if (qp) {
			count(ibv_query_qp(qp, &a, (int)wild32(), &init));
			give(w, K_QP, qp);
		}
	}
}

/* ---- XRC ---- */

/* Publishes @n for the other workers, in place of a random earlier number. */
static void publish(atomic_uint *board, uint32_t n)
{
	atomic_store(&board[rnd(NNUM)], n);
}

/* A number some worker published, maybe of an object long gone; 0 before any. */
static uint32_t published(atomic_uint *board)
{
	return atomic_load(&board[rnd(NNUM)]);
}

/* An empty file of no name (the worker's own, or the one every worker shares), or -1. */
static int file_new(void)
{
	char path[] = "/tmp/fuzz-xrcd-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

/*
 * What a domain is opened through: no file (-1), the worker's own file,
 * the file every worker shares (its domain is theirs too), any descriptor
 * of the process (the device's own among them), or one that is not open.
 */
static int xrcd_fd(struct world *w)
{
	switch (rnd(8)) {
	case 0:
	case 1:
		return -1;
	case 2:
	case 3:
		return w->file_fd;
	case 4:
	case 5:
		return shared_fd;
	case 6:
		return (int)rnd(64);
	default:
		return one_in(2) ? 4096 + (int)rnd(4096) : -2 - (int)rnd(1000);
	}
}

/*
 * A domain, mostly with O_CREAT; else without it (EAGAIN for a file with
 * no domain yet), with O_EXCL (EINVAL for one that has), with any flags,
 * or with a flag missing from the mask or one libibverbs does not know.
 */
static void xrcd_open(struct world *w)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = xrcd_fd(w),
		.oflags = O_CREAT,
	};
	struct ibv_xrcd *x;

	switch (rnd(8)) {
	case 0:
	case 1:
		a.oflags = 0;
		break;
	case 2:
		a.oflags |= O_EXCL;
		break;
	case 3:
		a.oflags = wild32();
		break;
	}
	if (one_in(16))
		a.comp_mask = rnd(8);
	x = made(ibv_open_xrcd(w->ctx, &a));
	if (!x)
		return;
	atomic_fetch_add(&stats->xrcds, 1);
	if (!add(w, K_XRCD, x, 0))
		count(ibv_close_xrcd(x));
}

/* What the kernel must not do, and did: say what, and fail the run. */
static void violation(const char *what, uint32_t qpn)
{
	fprintf(stderr, "fuzz: worker %d: %s (TGT QP %#x)\n", getpid(), what, qpn);
	_exit(4);
}

/* Whether an SRQ or QP in the table is of @x, and a TGT QP's number (0: none); lock held. */
static bool xrcd_used(struct world *w, struct ibv_xrcd *x, uint32_t *tgt)
{
	bool used = false;
	struct slot *s;
	int i;

	*tgt = 0;
	for (i = 0; i < NSLOT; i++) {
		s = &w->s[K_SRQ][i];
		used |= s->obj && s->xrcd == x;
		s = &w->s[K_QP][i];
		if (s->obj && s->xrcd == x) {
			used = true;
			*tgt = ((struct ibv_qp *)s->obj)->qp_num;
		}
	}
	return used;
}

/*
 * Closes a domain. While SRQs or QPs of the worker's are in it the close
 * must fail, EBUSY, and change nothing: the domain still finds its TGT
 * QPs by number. The table stays locked meanwhile, so that none of them
 * is destroyed before the close; one being destroyed already may make it
 * EBUSY too. With the device gone (-R) every close succeeds.
 */
static void xrcd_close(struct world *w)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_xrcd *x = remove_one(w, K_XRCD, NULL);
	struct ibv_qp *qp = NULL;
	bool used;
	int ret;

	if (!x)
		return;
	pthread_mutex_lock(&w->lock);
	used = xrcd_used(w, x, &oa.qp_num);
	ret = ibv_close_xrcd(x);
	if (ret == EBUSY && oa.qp_num) {
		oa.xrcd = x;
		qp = ibv_open_qp(w->ctx, &oa);
		if (!qp && errno == EINVAL && !may_go)
			violation("a domain that refused to close lost its TGT QP", oa.qp_num);
	}
	pthread_mutex_unlock(&w->lock);
	count(ret);
	if (qp)
		count(ibv_destroy_qp(qp));
	if (!ret && used && !may_go)
		violation("a domain closed under its SRQs or QPs", oa.qp_num);
	if (ret == EBUSY)
		atomic_fetch_add(&stats->xrcd_busy, 1);
	if (ret)
		add(w, K_XRCD, x, 0);
}

/*
 * An XRC SRQ in a domain, completing into a CQ, in a PD, any of the
 * worker's (a CQ may be QPs' too); now and then with sizes out of range,
 * with the domain, the CQ, the PD or the type left out of the mask, of
 * another type, or with bits libibverbs does not know. No type is a basic
 * SRQ, whatever else the mask has.
 */
static void xsrq_create(struct world *w)
{
	const uint32_t need = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	struct ibv_srq_init_attr_ex init = {
		.attr = { .max_wr = one_in(5) ? wild32() : 1 + rnd(64),
			  .max_sge = one_in(5) ? wild32() : 1 + rnd(4),
			  .srq_limit = one_in(5) ? wild32() : 0 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | need,
		.srq_type = IBV_SRQT_XRC,
	};
	enum ibv_srq_type type;
	struct ibv_srq *srq;
	uint32_t n;

	init.pd = one_in(4) ? take(w, K_PD, NULL) : take_pd_of_mr(w);
	init.cq = take(w, K_CQ, NULL);
	init.xrcd = take_domain(w, K_QP);
	if (one_in(8))
		init.comp_mask &= ~(1U << rnd(4));
	if (one_in(16))
		init.comp_mask |= rnd(64) & ~need;
	if (one_in(8))
		init.srq_type = one_in(2) ? IBV_SRQT_TM : (enum ibv_srq_type)wild32();
	/* A tag matching SRQ: its list's size, and no domain most of the time. */
	if (init.srq_type == IBV_SRQT_TM) {
		init.comp_mask |= IBV_SRQ_INIT_ATTR_TM;
		if (!one_in(4))
			init.comp_mask &= ~IBV_SRQ_INIT_ATTR_XRCD;
		init.tm_cap.max_num_tags = one_in(5) ? wild32() : 1 + rnd(16);
		init.tm_cap.max_ops = one_in(5) ? wild32() : 1 + rnd(16);
	}
	/* libibverbs reads every pointer the mask names. */
	if (!init.pd)
		init.comp_mask &= ~IBV_SRQ_INIT_ATTR_PD;
	if (!init.cq)
		init.comp_mask &= ~IBV_SRQ_INIT_ATTR_CQ;
	if (!init.xrcd)
		init.comp_mask &= ~IBV_SRQ_INIT_ATTR_XRCD;
	type = init.comp_mask & IBV_SRQ_INIT_ATTR_TYPE ? init.srq_type : IBV_SRQT_BASIC;
	srq = made(ibv_create_srq_ex(w->ctx, &init));
	if (srq && type == IBV_SRQT_TM)
		atomic_fetch_add(&stats->tm_srqs, 1);
	if (srq && type == IBV_SRQT_XRC) {
		atomic_fetch_add(&stats->xsrqs, 1);
		if (!ibv_get_srq_num(srq, &n))
			publish(stats->srqn, n);
	}
	if (srq && !add_in(w, K_SRQ, srq, type, type == IBV_SRQT_XRC ? init.xrcd : NULL))
		count(ibv_destroy_srq(srq));
	if (init.xrcd)
		give(w, K_XRCD, init.xrcd);
	if (init.cq)
		give(w, K_CQ, init.cq);
	if (init.pd)
		give(w, K_PD, init.pd);
}

/*
 * A TGT QP of a domain; now and then with sizes out of range (a TGT QP
 * has no queue of its own to size), with an SRQ of the worker's (the core
 * takes an XRC one, and refuses a basic one), or with creation flags.
 */
static void tgt_create(struct world *w)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_qp *qp;

	init.xrcd = take_domain(w, K_SRQ);
	if (!init.xrcd)
		return;
	if (one_in(6))
		init.cap = (struct ibv_qp_cap){ .max_send_wr = wild32(), .max_recv_wr = wild32(),
						.max_send_sge = wild32(), .max_recv_sge = wild32(),
						.max_inline_data = wild32() };
	if (one_in(4))
		init.srq = take(w, K_SRQ, NULL);
	if (one_in(16)) {
		init.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		init.create_flags = wild32();
	}
	qp = made(ibv_create_qp_ex(w->ctx, &init));
	if (qp) {
		atomic_fetch_add(&stats->tgts, 1);
		publish(stats->tgt_qpn, qp->qp_num);
		if (!add_in(w, K_QP, qp, IBV_QPT_XRC_RECV, init.xrcd))
			count(destroy_qp(qp));
	}
	if (init.srq)
		give(w, K_SRQ, init.srq);
	give(w, K_XRCD, init.xrcd);
}

/*
 * A TGT QP opened by number in a domain: one of the worker's (in that
 * domain or not), one another worker published (its domain is this one
 * when both are of the shared file), any QP of the worker's, or garbage;
 * now and then as another type, or with the mask short of a field.
 */
static void tgt_open(struct world *w)
{
	struct ibv_qp_open_attr a = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp *qp = NULL;

	a.xrcd = take(w, K_XRCD, NULL);
	if (!a.xrcd)
		return;
	if (one_in(8))
		a.qp_num = wild32();
	else if (one_in(2))
		qp = one_in(3) ? take(w, K_QP, NULL) : take_sub(w, K_QP, IBV_QPT_XRC_RECV, NULL);
	if (qp) {
		a.qp_num = qp->qp_num;
		give(w, K_QP, qp);
	} else if (!a.qp_num) {
		a.qp_num = published(stats->tgt_qpn);
	}
	if (one_in(8))
		a.qp_type = one_in(2) ? qp_types[rnd(ARRAY_SIZE(qp_types))] :
					(enum ibv_qp_type)wild32();
	if (one_in(16))
		a.comp_mask = rnd(32);
	qp = made(ibv_open_qp(w->ctx, &a));
	if (qp) {
		atomic_fetch_add(&stats->opened, 1);
		if (!add_in(w, K_QP, qp, qp->qp_type, a.xrcd))
			count(destroy_qp(qp));
	}
	give(w, K_XRCD, a.xrcd);
}

/*
 * The SRQ number an INI QP's request names: mostly an XRC SRQ of @xrcd,
 * the domain of the TGT QP the INI was just connected to, if known; else
 * an XRC SRQ of the worker's (of any of its domains), any SRQ of the
 * worker's (a basic one too), one another worker published (of the shared
 * domain, of its own, or gone), or garbage.
 */
static uint32_t some_srqn(struct world *w, struct ibv_xrcd *xrcd)
{
	struct ibv_srq *srq = NULL;
	uint32_t n;

	if (one_in(8))
		return wild32();
	if (one_in(4))
		return published(stats->srqn);
	if (xrcd && !one_in(4))
		srq = take_sub(w, K_SRQ, IBV_SRQT_XRC, xrcd);
	if (!srq)
		srq = one_in(4) ? take(w, K_SRQ, NULL) : take_sub(w, K_SRQ, IBV_SRQT_XRC, NULL);
	if (!srq)
		return wild32() & 0xffffff;
	if (ibv_get_srq_num(srq, &n))
		n = 0;
	give(w, K_SRQ, srq);
	return n;
}

static const enum ibv_wr_opcode opcodes[] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
	IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	IBV_WR_LOCAL_INV, IBV_WR_SEND_WITH_INV, IBV_WR_BIND_MW, IBV_WR_ATOMIC_WRITE,
};

/* An INI QP's: RC's but windows, invalidation, atomic write and flush. */
static const enum ibv_wr_opcode xrc_opcodes[] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
	IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
};

/*
 * A WR posted on @qp, a QP of type @sub the caller has taken: a receive,
 * or a send of any kind; an INI QP's names an SRQ, mostly of @xrcd if
 * that is known.
 */
static void post_one(struct world *w, struct ibv_qp *qp, int sub, struct ibv_xrcd *xrcd)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_mw *mw = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_ah *ah = NULL;
	uint32_t len, rkey = 0;
	uint64_t raddr = 0;
	struct ibv_pd *pd = NULL;
	bool valid;
	int i, n;

	/* An INI QP's traffic is to land in SRQs: its regions are of its own PD. */
	if (sub == IBV_QPT_XRC_SEND)
		pd = qp->pd;
	n = one_in(8) ? (int)rnd(MAX_SGE + 1) : 1 + (int)rnd(3);
	/*
	 * One bad WR puts an RC QP in the error state for good, so QPs of even
	 * number are mostly given WRs that name regions that exist: traffic
	 * that moves while regions, windows and peers come and go.
	 */
	valid = qp->qp_num & 1 ? one_in(2) : !one_in(64);
	for (i = 0; i < MAX_SGE; i++) {
		if (valid && region_sge(w, pd, &sge[i], &rkey, &raddr))
			continue;
		sge[i].addr = some_addr(w, &len);
		sge[i].length = len;
		sge[i].lkey = some_key(w, false);
	}
	if (one_in(3)) {
		rwr.wr_id = rnd(1000);
		rwr.sg_list = sge;
		rwr.num_sge = n;
		count(ibv_post_recv(qp, &rwr, &rbad));
		goto out;
	}
	wr.wr_id = rnd(1000);
	wr.sg_list = sge;
	wr.num_sge = n;
	wr.opcode = one_in(16) ? (enum ibv_wr_opcode)rnd(32) : opcodes[rnd(ARRAY_SIZE(opcodes))];
	wr.send_flags = rnd(16) & (IBV_SEND_SIGNALED | IBV_SEND_FENCE | IBV_SEND_SOLICITED |
				   IBV_SEND_INLINE);
	/*
	 * An INI QP's traffic that may land: an opcode XRC has, a few bytes of
	 * one region of its PD (a receive or a target region is as likely to
	 * hold them as not), no inline data, and a completion to show for it.
	 */
	if (pd && valid && !one_in(8)) {
		wr.opcode = xrc_opcodes[rnd(ARRAY_SIZE(xrc_opcodes))];
		wr.num_sge = 1;
		wr.send_flags = (wr.send_flags & ~IBV_SEND_INLINE) | IBV_SEND_SIGNALED;
		if (sge[0].length > 64)
			sge[0].length = rnd(65);
	}
	if (wr.send_flags & IBV_SEND_INLINE) {
		/* The provider copies inline data here: only from memory that is mapped. */
		for (i = 0; i < MAX_SGE; i++) {
			sge[i].addr = (uint64_t)(uintptr_t)w->buf[rnd(NBUF)] + rnd(BUF_LEN / 2);
			sge[i].length = rnd(one_in(4) ? BUF_LEN / 2 : 128);
		}
	}
	wr.imm_data = wild32();
	wr.wr.rdma.remote_addr = valid && rkey ? raddr : some_addr(w, &len);
	wr.wr.rdma.rkey = valid && rkey ? rkey : some_key(w, true);
	if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (valid && rkey ? raddr : some_addr(w, &len)) & ~7ULL;
		if (one_in(4))
			wr.wr.atomic.remote_addr |= rnd(8);
		wr.wr.atomic.rkey = valid && rkey ? rkey : some_key(w, true);
		wr.wr.atomic.compare_add = 1;
		sge[0].length = 8;
	}
	/*
	 * The provider reads an atomic write's 8 bytes at post time, like
	 * inline data: only from memory that is mapped. Mostly one entry of
	 * 8 bytes to an aligned address; else lists that may add up to 8.
	 */
	if (wr.opcode == IBV_WR_ATOMIC_WRITE) {
		for (i = 0; i < MAX_SGE; i++) {
			sge[i].addr = (uint64_t)(uintptr_t)w->buf[rnd(NBUF)] + rnd(BUF_LEN / 2);
			sge[i].length = rnd(9);
		}
		if (!one_in(4)) {
			wr.wr.rdma.remote_addr &= ~7ULL;
			wr.num_sge = 1;
			sge[0].length = 8;
		}
	}
	if (wr.opcode == IBV_WR_LOCAL_INV || wr.opcode == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = some_key(w, true);
	if (wr.opcode == IBV_WR_BIND_MW) {
		mw = take(w, K_MW, NULL);
		mr = take(w, K_MR, NULL);
		if (!mw || !mr)
			goto out;
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
		wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
			.mr = mr, .addr = (uint64_t)(uintptr_t)mr->addr,
			.length = one_in(4) ? wild32() : mr->length,
			.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		};
	}
	if (sub == IBV_QPT_UD) {
		ah = take(w, K_AH, NULL);
		if (!ah)
			goto out;
		wr.wr.ud.ah = ah;
		/* A group's QPN a third of the time: every QP attached to the AH's group. */
		wr.wr.ud.remote_qpn = one_in(3) ? 0xffffff :
				      one_in(2) ? qp->qp_num : wild32() & 0xffffff;
		wr.wr.ud.remote_qkey = one_in(4) ? wild32() : QKEY;
	}
	if (sub == IBV_QPT_XRC_SEND) {
		wr.qp_type.xrc.remote_srqn = some_srqn(w, xrcd);
		atomic_fetch_add(&stats->xrc_posts, 1);
	}
	count(ibv_post_send(qp, &wr, &bad));
out:
	if (ah)
		give(w, K_AH, ah);
	if (mr)
		give(w, K_MR, mr);
	if (mw)
		give(w, K_MW, mw);
}

/*
 * Flows on any QP (a Raw Packet QP's take; the others' are refused):
 * up to four specs of the kinds stag matches and of others, their bytes
 * random, their sizes mostly right; now and then one that matches every
 * frame, which then reaches the raw QPs' receives from the frames raw QPs
 * send to a group (op_post's random bytes: half their addresses are
 * groups). Destroyed at random, and before the QPs at teardown.
 */
static void op_flow(struct world *w)
{
	static const uint32_t types[] = { IBV_FLOW_SPEC_ETH, IBV_FLOW_SPEC_IPV4_EXT,
					  IBV_FLOW_SPEC_IPV6, IBV_FLOW_SPEC_TCP,
					  IBV_FLOW_SPEC_UDP, IBV_FLOW_SPEC_VXLAN_TUNNEL,
					  IBV_FLOW_SPEC_ACTION_DROP, IBV_FLOW_SPEC_IPV4 };
	static const uint16_t sizes[] = { sizeof(struct ibv_flow_spec_eth),
					  sizeof(struct ibv_flow_spec_ipv4_ext),
					  sizeof(struct ibv_flow_spec_ipv6),
					  sizeof(struct ibv_flow_spec_tcp_udp),
					  sizeof(struct ibv_flow_spec_tcp_udp),
					  sizeof(struct ibv_flow_spec_tunnel),
					  sizeof(struct ibv_flow_spec_action_drop),
					  sizeof(struct ibv_flow_spec_ipv4) };
	union {
		struct ibv_flow_attr attr;
		uint8_t b[512];
	} f;
	struct ibv_flow_spec *spec;
	struct ibv_flow *flow;
	struct ibv_qp *qp;
	uint32_t i, n, t;
	uint16_t size, j;

	if (one_in(3)) {
		flow = remove_one(w, K_FLOW, NULL);
		if (flow)
			count(ibv_destroy_flow(flow));
		return;
	}
	qp = take(w, K_QP, NULL);
	if (!qp)
		return;
	memset(&f, 0, sizeof(f));
	f.attr.type = one_in(8) ? rnd(4) : IBV_FLOW_ATTR_NORMAL;
	f.attr.size = sizeof(f.attr);
	f.attr.priority = rnd(4);
	f.attr.port = one_in(8) ? rnd(4) : 1;
	f.attr.flags = one_in(8) ? rnd(8) : 0;
	n = one_in(3) ? 0 : 1 + rnd(4);
	for (i = 0; i < n; i++) {
		t = rnd(ARRAY_SIZE(types));
		size = one_in(10) ? rnd(64) : sizes[t];
		if ((size_t)f.attr.size + size + 8 > sizeof(f) || size < sizeof(spec->hdr))
			break;
		spec = (struct ibv_flow_spec *)(f.b + f.attr.size);
		for (j = 0; j < size; j++)
			f.b[f.attr.size + j] = one_in(3) ? 0xff : (uint8_t)rnd(256);
		spec->hdr.type = types[t];
		spec->hdr.size = size;
		f.attr.size += size;
		f.attr.num_of_specs++;
	}
	flow = made(ibv_create_flow(qp, &f.attr));
	if (flow) {
		atomic_fetch_add(&stats->flows, 1);
		if (!add(w, K_FLOW, flow, 0))
			count(ibv_destroy_flow(flow));
	}
	give(w, K_QP, qp);
}

/*
 * Receive WQs, indirection tables of them, and RSS QPs over the tables:
 * sizes, flags, states and hash configurations valid or not, receives
 * into regions of the WQ's PD or anywhere, WQs destroyed while a table
 * names them (EBUSY) and tables while an RSS QP has them. An RSS QP is a
 * QP like any to the other operations: flows, posts, destroys.
 */
static void op_wq(struct world *w)
{
	struct ibv_rwq_ind_table *tbl;
	struct ibv_wq *wq;

	switch (rnd(6)) {
	case 0: {
		struct ibv_wq_init_attr a = {
			.wq_type = one_in(10) ? rnd(3) : IBV_WQT_RQ,
			.max_wr = one_in(5) ? wild32() : 1 + rnd(64),
			.max_sge = one_in(5) ? wild32() : 1 + rnd(4),
			.comp_mask = one_in(5) ? IBV_WQ_INIT_ATTR_FLAGS : 0,
			.create_flags = one_in(2) ? rnd(16) : wild32(),
		};

		a.pd = take(w, K_PD, NULL);
		a.cq = a.pd ? take(w, K_CQ, NULL) : NULL;
		if (a.cq) {
			wq = made(ibv_create_wq(w->ctx, &a));
			if (wq) {
				atomic_fetch_add(&stats->wqs, 1);
				if (!add(w, K_WQ, wq, 0))
					count(ibv_destroy_wq(wq));
			}
			give(w, K_CQ, a.cq);
		}
		if (a.pd)
			give(w, K_PD, a.pd);
		break;
	}
	case 1:
		wq = remove_one(w, K_WQ, NULL);
		if (wq && ibv_destroy_wq(wq)) {
			count(errno);
			add(w, K_WQ, wq, 0);
		} else if (wq) {
			count(0);
		}
		tbl = one_in(2) ? remove_one(w, K_IND, NULL) : NULL;
		if (tbl && ibv_destroy_rwq_ind_table(tbl)) {
			count(errno);
			add(w, K_IND, tbl, 0);
		} else if (tbl) {
			count(0);
		}
		break;
	case 2:
		wq = take(w, K_WQ, NULL);
		if (wq) {
			/*
			 * States are RESET, RDY or ERR only: Linux's
			 * ib_uverbs_ex_modify_wq() (6.12 and later) returns
			 * EINVAL for a later one without putting the WQ's
			 * read lock, a core bug no driver sees, which
			 * WARNs and leaks the WQ when its process exits.
			 */
			struct ibv_wq_attr a = {
				.attr_mask = one_in(6) ? wild32() : IBV_WQ_ATTR_STATE |
					     (one_in(3) ? IBV_WQ_ATTR_CURR_STATE : 0),
				.wq_state = rnd(3),
				.curr_wq_state = rnd(3),
			};

			count(ibv_modify_wq(wq, &a));
			give(w, K_WQ, wq);
		}
		break;
	case 3:
		wq = take(w, K_WQ, NULL);
		if (wq) {
			struct ibv_sge sge[MAX_SGE];
			struct ibv_recv_wr wr = { .wr_id = 11, .sg_list = sge }, *bad;
			uint32_t len, rkey;
			uint64_t raddr;
			int i;

			for (i = 0; i < MAX_SGE; i++) {
				if (one_in(2) && region_sge(w, wq->pd, &sge[i], &rkey, &raddr))
					continue;
				sge[i].addr = some_addr(w, &len);
				sge[i].length = len;
				sge[i].lkey = some_key(w, false);
			}
			wr.num_sge = one_in(8) ? (int)rnd(MAX_SGE + 1) : 1;
			count(ibv_post_wq_recv(wq, &wr, &bad));
			give(w, K_WQ, wq);
		}
		break;
	case 4: {
		/* One WQ in every entry: a table may name a WQ more than once. */
		struct ibv_wq *wqs[16];
		struct ibv_rwq_ind_table_init_attr a = { .log_ind_tbl_size = rnd(5),
							 .ind_tbl = wqs };
		int i;

		wq = take(w, K_WQ, NULL);
		if (!wq)
			break;
		for (i = 0; i < 16; i++)
			wqs[i] = wq;
		tbl = made(ibv_create_rwq_ind_table(w->ctx, &a));
		give(w, K_WQ, wq);
		if (tbl) {
			atomic_fetch_add(&stats->ind_tables, 1);
			if (!add(w, K_IND, tbl, 0))
				count(ibv_destroy_rwq_ind_table(tbl));
		}
		break;
	}
	default: {
		uint8_t key[40];
		struct ibv_qp_init_attr_ex a = {
			.qp_type = one_in(8) ? IBV_QPT_UD : IBV_QPT_RAW_PACKET,
			/*
			 * One of the two may be missing, never both: without a
			 * table libibverbs reads the CQs, which this QP has not.
			 */
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     (one_in(10) ? IBV_QP_INIT_ATTR_IND_TABLE :
				      one_in(9) ? IBV_QP_INIT_ATTR_RX_HASH :
				      IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH),
			.rx_hash_conf = {
				.rx_hash_function = one_in(8) ? rnd(4) : IBV_RX_HASH_FUNC_TOEPLITZ,
				.rx_hash_key_len = one_in(8) ? rnd(64) : 40,
				.rx_hash_key = key,
				.rx_hash_fields_mask = one_in(4) ? (uint64_t)wild32() << rnd(33) :
						       rnd(256),
			},
			.cap = { .max_send_wr = one_in(8) ? 1 : 0 },
		};
		struct ibv_qp *qp;
		size_t i;

		for (i = 0; i < sizeof(key); i++)
			key[i] = rnd(256);
		a.rwq_ind_tbl = take(w, K_IND, NULL);
		a.pd = a.rwq_ind_tbl ? take(w, K_PD, NULL) : NULL;
		if (a.pd) {
			qp = made(ibv_create_qp_ex(w->ctx, &a));
			if (qp) {
				atomic_fetch_add(&stats->rss_qps, 1);
				if (!add(w, K_QP, qp, IBV_QPT_RAW_PACKET))
					count(ibv_destroy_qp(qp));
			}
			give(w, K_PD, a.pd);
		}
		if (a.rwq_ind_tbl)
			give(w, K_IND, a.rwq_ind_tbl);
	}
	}
}

static void op_post(struct world *w)
{
	struct ibv_qp *qp;
	int sub;

	qp = take(w, K_QP, &sub);
	if (!qp)
		return;
	post_one(w, qp, sub, NULL);
	give(w, K_QP, qp);
}

/*
 * A message that should land, on @ini connected to a TGT QP of @xrcd: a
 * few bytes of a region of the INI QP's PD sent to an XRC SRQ of the
 * domain (a receive of a region of the SRQ's PD posted there first), or
 * written to or read from that region. Races may undo any part of it.
 */
static void xrc_message(struct world *w, struct ibv_qp *ini, struct ibv_xrcd *xrcd)
{
	static const enum ibv_wr_opcode op[] = { IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ };
	struct ibv_srq *srq = xrcd ? take_sub(w, K_SRQ, IBV_SRQT_XRC, xrcd) : NULL;
	struct ibv_sge sge, rsge;
	struct ibv_recv_wr rwr = { .wr_id = 11, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = {
		.wr_id = 12, .sg_list = &sge, .num_sge = 1, .opcode = op[rnd(ARRAY_SIZE(op))],
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t rkey, unused;
	uint64_t raddr;

	if (!srq)
		return;
	if (region_sge(w, ini->pd, &sge, &unused, &raddr) &&
	    region_sge(w, srq->pd, &rsge, &rkey, &raddr) &&
	    !ibv_get_srq_num(srq, &wr.qp_type.xrc.remote_srqn)) {
		sge.length = rnd(65);
		if (sge.length > rsge.length)
			sge.length = rsge.length;
		wr.wr.rdma.remote_addr = rsge.addr;
		wr.wr.rdma.rkey = rkey;
		if (wr.opcode == IBV_WR_SEND)
			count(ibv_post_srq_recv(srq, &rwr, &rbad));
		count(ibv_post_send(ini, &wr, &bad));
		atomic_fetch_add(&stats->xrc_posts, 1);
	}
	give(w, K_SRQ, srq);
}

/*
 * An INI QP and a TGT QP reset and connected to each other, and a few WRs
 * posted on the INI at once: most of what else befalls an INI QP (a reset,
 * a peer of another type, junk in its ring) leaves it no traffic to carry.
 */
static void xrc_pair(struct world *w)
{
	struct ibv_qp *ini = take_sub(w, K_QP, IBV_QPT_XRC_SEND, NULL);
	struct ibv_qp *tgt = take_sub(w, K_QP, IBV_QPT_XRC_RECV, NULL);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_xrcd *xrcd = NULL;
	uint32_t i, n = rnd(5);
	struct slot *s;

	pthread_mutex_lock(&w->lock);
	for (i = 0; tgt && i < NSLOT; i++) {
		s = &w->s[K_QP][i];
		if (s->obj == tgt)
			xrcd = s->xrcd;
	}
	pthread_mutex_unlock(&w->lock);

	if (ini && tgt) {
		count(ibv_modify_qp(ini, &a, IBV_QP_STATE));
		count(ibv_modify_qp(tgt, &a, IBV_QP_STATE));
		qp_connect(w, tgt, ini->qp_num, true);
		qp_connect(w, ini, tgt->qp_num, true);
		xrc_message(w, ini, xrcd);
		for (i = 0; i < n; i++)
			post_one(w, ini, IBV_QPT_XRC_SEND, xrcd);
	}
	if (tgt)
		give(w, K_QP, tgt);
	if (ini)
		give(w, K_QP, ini);
}

/*
 * XRC's own verbs. Its SRQs and QPs are in the tables with the others,
 * where the other operations use and destroy them: an SRQ is modified,
 * posted to and destroyed as a basic one is, a TGT QP moved through
 * states, queried and destroyed as any QP, an INI QP posted to.
 */
static void op_xrc(struct world *w)
{
	switch (rnd(8)) {
	case 0:
		xrcd_open(w);
		break;
	case 1:
		xrcd_close(w);
		break;
	case 2:
		xsrq_create(w);
		break;
	case 3:
		tgt_create(w);
		break;
	case 4:
		tgt_open(w);
		break;
	case 5:
		qp_create(w, IBV_QPT_XRC_SEND);
		break;
	default:
		xrc_pair(w);
	}
}

/*
 * Random bytes into a QP's own send ring, published, and the doorbell
 * rung; a QP with no send ring (TGT) has its doorbell rung all the same.
 */
static void op_junk_ring(struct world *w)
{
	struct stagdv_ring sq = {};
	struct ibv_qp *qp;
	struct slot *s;
	uint32_t prod, n, i, j;

	s = take_alone(w, K_QP);
	if (!s)
		return;
	qp = s->obj;
	stagdv_qp_rings(qp, &sq, NULL);
	if (sq.num_slots) {
		struct stag_queue_ctl *ctl = sq.ctl;

		prod = ctl->prod;
		n = 1 + rnd(4);
		for (i = 0; i < n; i++) {
			uint8_t *slot = (uint8_t *)sq.slots +
					((prod + i) & (sq.num_slots - 1)) * sq.slot_size;

			for (j = 0; j < sq.slot_size; j++)
				slot[j] = (uint8_t)rnd(256);
		}
		/* Now and then a producer index that claims too much. */
		__atomic_store_n(&ctl->prod, one_in(4) ? wild32() : prod + n, __ATOMIC_RELEASE);
		count(stagdv_qp_doorbell(qp));
		atomic_fetch_add(&stats->junk_rings, 1);
	} else {
		count(stagdv_qp_doorbell(qp));
	}
	give_alone(w, s);
}

/*
 * A FLUSH written into a QP's own send ring and published, as the provider
 * of a newer rdma-core writes it: mostly of a region that exists, a range
 * in it (one byte past it now and then) or the whole of it, globally;
 * else with any type, selectivity, key, address and length.
 */
static void op_flush(struct world *w)
{
	struct stag_send_wqe wqe = { .opcode = WR_FLUSH };
	struct stagdv_ring sq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct slot *s;
	uint32_t len;

	if (!flush_access)
		return;
	s = take_alone(w, K_QP);
	if (!s)
		return;
	qp = s->obj;
	/* XRC has no FLUSH: an INI QP of even number is kept for traffic that may land. */
	if (s->sub == IBV_QPT_XRC_SEND && !(qp->qp_num & 1)) {
		give_alone(w, s);
		return;
	}
	mr = take(w, K_MR, NULL);
	wqe.wr_id = rnd(1000);
	wqe.send_flags = one_in(2) ? IBV_SEND_SIGNALED : 0;
	if (mr && !one_in(8)) {
		uint64_t off = rnd(mr->length);

		wqe.wr.flush.rkey = mr->rkey;
		wqe.wr.flush.remote_addr = (uint64_t)(uintptr_t)mr->addr + off;
		wqe.wr.flush.length = rnd(mr->length - off + 1) + one_in(8);
		wqe.wr.flush.type = 1;	/* IB_FLUSH_GLOBAL */
		wqe.wr.flush.level = one_in(4);
	} else {
		wqe.wr.flush.rkey = some_key(w, true);
		wqe.wr.flush.remote_addr = some_addr(w, &len);
		wqe.wr.flush.length = one_in(2) ? len : wild32();
		wqe.wr.flush.type = rnd(8);
		wqe.wr.flush.level = rnd(4);
	}
	if (mr)
		give(w, K_MR, mr);
	if (!stagdv_qp_rings(qp, &sq, NULL) && sq.num_slots) {
		struct stag_queue_ctl *ctl = sq.ctl;
		uint32_t prod = __atomic_load_n(&ctl->prod, __ATOMIC_ACQUIRE);
		uint8_t *slot = (uint8_t *)sq.slots + (prod & (sq.num_slots - 1)) * sq.slot_size;

		memset(slot, 0, sq.slot_size);
		memcpy(slot, &wqe, sizeof(wqe));
		__atomic_store_n(&ctl->prod, prod + 1, __ATOMIC_RELEASE);
		count(stagdv_qp_doorbell(qp));
		atomic_fetch_add(&stats->flushes, 1);
	}
	give_alone(w, s);
}

/* A child writes to registered memory (copy on write under pinned pages) and exits. */
static void op_fork(struct world *w)
{
	char *b = w->buf[rnd(NBUF)];
	pid_t pid;

	if (!one_in(8))
		return;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		memset(b + rnd(BUF_LEN - 4096), 0x5a, 4096);
		_exit(0);
	}
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		atomic_fetch_add(&stats->forks, 1);
	}
}

/*
 * New memory mapped over a buffer with regions over it: the regions keep
 * the pages they pinned, new ones see the new pages. The address stays
 * mapped, as the provider reads inline data from it.
 */
static void op_remap(struct world *w)
{
	char *b = w->buf[rnd(NBUF)];

	if (!one_in(8))
		return;
	if (mmap(b, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) != b)
		return;
	memset(b, 0xa5, BUF_LEN);
	atomic_fetch_add(&stats->remaps, 1);
}

struct thread_arg {
	struct world *w;
	uint64_t seed;
	unsigned long ops;
};

/* Each operation, and how often a thread draws it. */
static const struct {
	void (*fn)(struct world *w);
	uint32_t weight;
} ops[] = {
	{ op_pd, 3 }, { op_cq, 4 }, { op_mr, 5 }, { op_mw, 3 }, { op_srq, 2 }, { op_ah, 2 },
	{ op_qp, 6 }, { op_post, 12 }, { op_junk_ring, 1 }, { op_flush, 2 }, { op_fork, 1 },
	{ op_remap, 1 }, { op_mcast, 2 }, { op_xrc, 4 }, { op_flow, 2 }, { op_wq, 2 },
};

static void *thread_main(void *arg)
{
	struct thread_arg *t = arg;
	uint32_t total = 0, r;
	unsigned long i;
	size_t j;

	rng = t->seed;
	for (j = 0; j < ARRAY_SIZE(ops); j++)
		total += ops[j].weight;
	for (i = 0; i < t->ops; i++) {
		r = rnd(total);
		for (j = 0; r >= ops[j].weight; j++)
			r -= ops[j].weight;
		ops[j].fn(t->w);
	}
	return NULL;
}

static int destroy_ah(void *o) { return ibv_destroy_ah(o); }
static int dealloc_mw(void *o) { return ibv_dealloc_mw(o); }
static int dereg_mr(void *o) { return ibv_dereg_mr(o); }
static int destroy_srq(void *o) { return ibv_destroy_srq(o); }
static int destroy_cq(void *o) { return ibv_destroy_cq(o); }
static int dealloc_pd(void *o) { return ibv_dealloc_pd(o); }
static int close_xrcd(void *o) { return ibv_close_xrcd(o); }
static int destroy_flow(void *o) { return ibv_destroy_flow(o); }
static int destroy_wq(void *o) { return ibv_destroy_wq(o); }
static int destroy_ind(void *o) { return ibv_destroy_rwq_ind_table(o); }

/* Destroys what a worker holds, in an order the verbs allow. */
static void teardown(struct world *w)
{
	static const struct {
		enum kind k;
		int (*destroy)(void *o);
	} order[] = {
		{ K_FLOW, destroy_flow }, { K_QP, destroy_qp }, { K_IND, destroy_ind },
		{ K_WQ, destroy_wq }, { K_AH, destroy_ah },
		{ K_MW, dealloc_mw },
		{ K_MR, dereg_mr }, { K_SRQ, destroy_srq }, { K_CQ, destroy_cq },
		{ K_PD, dealloc_pd }, { K_PD, dealloc_pd }, { K_XRCD, close_xrcd },
	};
	size_t i;
	int j;

	/* PDs twice: parent domains (sub 1) first, then the PDs under them. */
	for (i = 0; i < ARRAY_SIZE(order); i++)
		for (j = 0; j < NSLOT; j++) {
			struct slot *s = &w->s[order[i].k][j];
			bool first = i + 1 < ARRAY_SIZE(order) && order[i].k == K_PD &&
				     order[i + 1].k == K_PD;

			if (s->obj && (!first || s->sub)) {
				count(order[i].destroy(s->obj));
				s->obj = NULL;
			}
		}
	ibv_close_device(w->ctx);
}

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			c = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return c;
}

static struct world *the_world;

/* A worker's own fault: say where, for addr2line, and die of it. */
static void fault(int sig, siginfo_t *si, void *uc)
{
	void *frames[32];
	int n = backtrace(frames, 32);

	(void)uc;
	fprintf(stderr, "fuzz: worker %d: signal %d at %p (buffers %p %p %p %p); backtrace:\n",
		getpid(), sig, si->si_addr, the_world->buf[0], the_world->buf[1],
		the_world->buf[2], the_world->buf[3]);
	backtrace_symbols_fd(frames, n, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void worker(const char *dev, int gid_index, uint64_t seed, int threads)
{
	struct thread_arg targ[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	struct sigaction sa = { .sa_sigaction = fault, .sa_flags = SA_SIGINFO };
	struct world w = { .gid_index = gid_index };
	int i;

	rng = seed;
	the_world = &w;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	pthread_mutex_init(&w.lock, NULL);
	w.ctx = open_by_name(dev);
	if (!w.ctx || ibv_query_gid(w.ctx, 1, gid_index, &w.gid))
		_exit(3);
	groups_init(&w.gid);
	{
		struct ibv_device_attr_ex attr;

		if (!ibv_query_device_ex(w.ctx, NULL, &attr) &&
		    (attr.device_cap_flags_ex & CAP_FLUSH) == CAP_FLUSH)
			flush_access = ACC_FLUSH_GLOBAL;
	}
	for (i = 0; i < NBUF; i++) {
		w.buf[i] = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (w.buf[i] == MAP_FAILED)
			_exit(3);
		memset(w.buf[i], i, BUF_LEN);
	}
	w.dmabuf_fd = dmabuf_open();
	w.file_fd = file_new();
	/* Something to start from: two PDs and two CQs. */
	for (i = 0; i < 2; i++) {
		add(&w, K_PD, made(ibv_alloc_pd(w.ctx)), 0);
		add(&w, K_CQ, made(ibv_create_cq(w.ctx, 64, NULL, NULL, 0)), 0);
	}
	for (i = 0; i < threads; i++) {
		targ[i] = (struct thread_arg){ .w = &w, .seed = mix(seed + i + 1), .ops = 20000 };
		pthread_create(&tid[i], NULL, thread_main, &targ[i]);
	}
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	if (rnd(2))
		teardown(&w);
	atomic_fetch_add(&stats->finished, 1);
	_exit(0);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A worker process; end is when it is killed, or -1 once it has been. */
struct proc {
	pid_t pid;
	double end;
};

/* Reaps a worker that has ended; false if it ended in a way that fails the run. */
static bool reap(struct proc *p, int status)
{
	bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && p->end < 0;
	bool gone = may_go && WIFEXITED(status) && WEXITSTATUS(status) == 3;
	pid_t pid = p->pid;

	p->pid = 0;
	if (killed)
		atomic_fetch_add(&stats->killed, 1);
	if (killed || gone || (WIFEXITED(status) && !WEXITSTATUS(status)))
		return true;
	if (WIFSIGNALED(status))
		fprintf(stderr, "fuzz: worker %d died of signal %d\n", pid, WTERMSIG(status));
	else
		fprintf(stderr, "fuzz: worker %d exited with %d\n", pid, WEXITSTATUS(status));
	return false;
}

int main(int argc, char **argv)
{
	struct proc procs[MAX_PROCS] = {};
	int nprocs = 3, threads = 3, gid_index = -1, opt, i, status, bad = 0;
	double seconds = 60, deadline;
	uint64_t seed = 1, gen = 0;
	const char *dev = NULL;

	while ((opt = getopt(argc, argv, "d:g:s:t:p:j:R")) != -1) {
		if (opt == 'd')
			dev = optarg;
		else if (opt == 'g')
			gid_index = atoi(optarg);
		else if (opt == 's')
			seed = strtoull(optarg, NULL, 0);
		else if (opt == 't')
			seconds = atof(optarg);
		else if (opt == 'p')
			nprocs = atoi(optarg);
		else if (opt == 'j')
			threads = atoi(optarg);
		else if (opt == 'R')
			may_go = true;
		else
			goto usage;
	}
	if (!dev || gid_index < 0 || nprocs < 1 || nprocs > MAX_PROCS || threads < 1 ||
	    threads > MAX_THREADS)
		goto usage;
	stats = mmap(NULL, sizeof(*stats), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (stats == MAP_FAILED)
		return 2;
	shared_fd = file_new();
	printf("# fuzz: %s, seed %llu, %.0f s, %d processes of %d threads\n", dev,
	       (unsigned long long)seed, seconds, nprocs, threads);
	fflush(stdout);
	rng = seed;
	deadline = now() + seconds;
	for (;;) {
		bool over = now() >= deadline, any = false;

		for (i = 0; i < nprocs; i++) {
			if (procs[i].pid) {
				any = true;
				if (waitpid(procs[i].pid, &status, WNOHANG) == procs[i].pid) {
					bad += !reap(&procs[i], status);
				} else if (procs[i].end > 0 && (now() > procs[i].end || over)) {
					kill(procs[i].pid, SIGKILL);
					procs[i].end = -1;
				}
				continue;
			}
			if (over)
				continue;
			any = true;
			gen++;
			fflush(stdout);
			procs[i].pid = fork();
			if (!procs[i].pid)
				worker(dev, gid_index, mix(seed ^ (gen << 8) ^ i), threads);
			atomic_fetch_add(&stats->workers, 1);
			/* Most are killed mid-flight; a fifth may finish and tear down. */
			procs[i].end = one_in(5) ? now() + 60 : now() + 0.2 + rnd(2800) / 1000.0;
		}
		if (over && !any)
			break;
		usleep(20000);
	}
	printf("# fuzz: %lu workers (%lu killed, %lu finished), %lu verbs calls, %lu failed "
	       "(EINVAL %lu, ENOMEM %lu, EBUSY %lu, other %lu), %lu completions polled "
	       "(%lu flushed, %lu other errors), %lu junk rings, %lu FLUSHes, %lu forks, "
	       "%lu remaps, %lu multicast attaches, %lu dma-buf registrations, %lu flows, "
	       "%lu WQs, %lu indirection tables, %lu RSS QPs, %lu parent domains, %lu rings in "
	       "their allocators' memory (%lu freed)\n",
	       stats->workers, stats->killed, stats->finished, stats->calls, stats->failed,
	       stats->einval, stats->enomem, stats->ebusy, stats->other_err, stats->completions,
	       stats->wc_flushed, stats->wc_errors, stats->junk_rings, stats->flushes,
	       stats->forks, stats->remaps, stats->attaches, stats->dmabufs, stats->flows,
	       stats->wqs, stats->ind_tables, stats->rss_qps, stats->parents, stats->ring_allocs,
	       stats->ring_frees);
	printf("# fuzz: XRC objects: %lu domains opened (%lu closes refused EBUSY), %lu XRC SRQs, "
	       "%lu TGT QPs created and %lu opened by number, %lu INI QPs; %lu INI posts, %lu "
	       "receives through TGT QPs\n",
	       stats->xrcds, stats->xrcd_busy, stats->xsrqs, stats->tgts, stats->opened,
	       stats->inis, stats->xrc_posts, stats->xrc_recvs);
	printf("# fuzz: tag matching: %lu SRQs, %lu list operations done\n", stats->tm_srqs,
	       stats->tm_ops);
	return bad ? 1 : 0;

usage:
	fprintf(stderr, "usage: fuzz -d DEV -g GID_INDEX [-s SEED] [-t SECONDS] [-p PROCS] "
			"[-j THREADS] [-R]\n");
	return 2;
}
