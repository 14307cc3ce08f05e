// SPDX-License-Identifier: GPL-2.0
/*
 * XRC, the eXtended Reliable Connected transport, over loopback: an INI
 * QP connected to a TGT QP of an XRC domain sends into whichever XRC SRQ
 * of the domain each request names, and its RDMA is checked against the
 * PD of the SRQ it names. Each case checks exact completion statuses, the
 * data byte for byte with the guards around it, requests that name no SRQ
 * of the domain (REM_INV_REQ_ERR), what the verbs refuse, a domain that
 * two processes share through a file, an SRQ or a TGT QP destroyed while
 * sends name it, two threads posting on one INI QP at once, and forged
 * packets (bin/inject) at a connection. Over stag.loopback=0 every
 * message crosses the wire as XRC packets.
 *
 * rdma_rxe has no XRC: on a device that does not advertise
 * IBV_DEVICE_XRC the cases skip (stag must advertise it).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qp.h"

#define LEN		3000
#define SEED		71
#define MSG		64	/* one packet: a message of the race lands whole or not at all */
#define NRACE		DEPTH	/* the race's sends, as many as the SRQ has receives */
#define RACE_AT		8	/* how many land before the SRQ is destroyed */
#define FORGED_PKTS	3000
#define ROUND		8	/* SENDs of one round of the stream forged packets fall among */
#define SRQ_MASK	(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | \
			 IBV_SRQ_INIT_ATTR_CQ)

/* XRC on this device: stag must have it, another device may not. */
static bool have_xrc(void)
{
	if (dev_attr.device_cap_flags & IBV_DEVICE_XRC)
		return true;
	if (is_stag())
		t_fail("%s does not advertise IBV_DEVICE_XRC", dev_name);
	else
		case_skip("the device has no XRC (IBV_DEVICE_XRC)");
	return false;
}

/* The XRC domain of the file @fd in @c (-1 with O_CREAT: a new one of no file). */
static struct ibv_xrcd *xrcd_open(struct ibv_context *c, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(c, &a);
}

/* @obj, just made by @what, released with the case; NULL fails the case. */
static void *made(enum kind kind, void *obj, const char *what)
{
	if (!obj)
		t_fail("%s: %s", what, strerror(errno));
	else
		track(kind, obj, 0);
	return obj;
}

/* An XRC domain of the file @fd (-1: of none), closed with the case. */
static struct ibv_xrcd *xrcd_new(int fd)
{
	return made(K_XRCD, xrcd_open(ctx, fd, O_CREAT), "ibv_open_xrcd O_CREAT");
}

/* What makes an XRC SRQ of @x in @p that completes into @cq. */
static struct ibv_srq_init_attr_ex xsrq_attr(struct ibv_xrcd *x, struct ibv_pd *p,
					     struct ibv_cq *cq)
{
	return (struct ibv_srq_init_attr_ex){
		.attr = { .max_wr = DEPTH, .max_sge = MAX_SGE },
		.comp_mask = SRQ_MASK,
		.srq_type = IBV_SRQT_XRC,
		.pd = p,
		.xrcd = x,
		.cq = cq,
	};
}

/* An XRC SRQ of @x in the case's PD, with a CQ of its own (*@cq); both released with the case. */
static struct ibv_srq *xsrq_new(struct ibv_xrcd *x, struct ibv_cq **cq)
{
	struct ibv_srq_init_attr_ex a;

	*cq = cq_new();
	if (!x || !*cq)
		return NULL;
	a = xsrq_attr(x, pd, *cq);
	return made(K_SRQ, ibv_create_srq_ex(ctx, &a), "ibv_create_srq_ex XRC");
}

/* The number INI QPs' requests name @srq by. */
static uint32_t srq_num(struct ibv_srq *srq)
{
	uint32_t n = 0;
	int ret = ibv_get_srq_num(srq, &n);

	t_check(!ret, "ibv_get_srq_num: %s", strerror(ret));
	return n;
}

/* A TGT QP of @x, in RESET, released with the case. */
static struct ibv_qp *tgt_new(struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = x,
	};

	return x ? made(K_QP, ibv_create_qp_ex(ctx, &a), "ibv_create_qp_ex XRC_RECV") : NULL;
}

/* An INI QP with a send CQ of its own and no receive queue, in RESET. */
static struct end *ini_new(void)
{
	struct end *e = calloc(1, sizeof(*e));
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = DEPTH, .max_send_sge = MAX_SGE,
			 .max_inline_data = MAX_INLINE },
	};

	e->scq = cq_new();
	if (!e->scq)
		return NULL;
	a.send_cq = e->scq;
	e->qp = made(K_QP, ibv_create_qp(pd, &a), "ibv_create_qp XRC_SEND");
	return e->qp ? e : NULL;
}

/*
 * @ini to RTS towards @tgt, @tgt to RTR from @ini: as RC QPs connect.
 * With @quick the INI gives up on a silent TGT after one retry of 16 ms.
 */
static bool xrc_connect_as(struct end *ini, struct ibv_qp *tgt, bool quick)
{
	struct conn ci = conn_to(tgt->qp_num, &gid), ct = conn_to(ini->qp->qp_num, &gid);
	int ret;

	ci.sq_psn = ct.rq_psn;
	if (quick) {
		ci.timeout = 12;
		ci.retry_cnt = 1;
	}
	ret = qp_to_init(tgt, ct.access);
	if (!ret)
		ret = qp_to_rtr(tgt, &ct);
	t_check(!ret, "TGT QP %#x to RTR: %s", tgt->qp_num, strerror(ret));
	return !ret && connect_end(ini, &ci);
}

static bool xrc_connect(struct end *ini, struct ibv_qp *tgt)
{
	return xrc_connect_as(ini, tgt, false);
}

/* An XRC domain and an SRQ of it; an INI QP connected to a TGT QP of the domain. */
struct xrc {
	struct ibv_xrcd *xrcd;
	struct ibv_cq *cq;	/* the SRQ's */
	struct ibv_srq *srq;
	struct ibv_qp *tgt;
	struct end *ini;
};

/* A new INI QP connected to a new TGT QP of @x's domain. */
static bool xrc_pair(struct xrc *x)
{
	x->tgt = tgt_new(x->xrcd);
	x->ini = ini_new();
	return x->tgt && x->ini && xrc_connect(x->ini, x->tgt);
}

/* The domain of @fd (-1: of no file), its SRQ and a pair; false (failed) if not. */
static bool xrc_new(struct xrc *x, int fd)
{
	if (!have_xrc())
		return false;
	x->xrcd = xrcd_new(fd);
	x->srq = xsrq_new(x->xrcd, &x->cq);
	return x->srq && xrc_pair(x);
}

/* Posts @wr on @ini for the XRC SRQ numbered @srqn. */
static int xpost(struct end *ini, struct ibv_send_wr wr, uint32_t srqn)
{
	wr.qp_type.xrc.remote_srqn = srqn;
	return post(ini, &wr);
}

/*
 * A SEND of @len bytes of fill(@seed) from @src to the SRQ numbered
 * @srqn: the INI's completion must be @status.
 */
static bool xsend(struct end *ini, struct buf *src, size_t len, unsigned int seed,
		  uint32_t srqn, enum ibv_wc_status status, const char *what)
{
	struct ibv_sge s = sge_of(src, 0, len);

	fill(src->data, len, seed);
	return !xpost(ini, wr_send(seed, &s, 1), srqn) &&
	       expect_wc(ini->scq, seed, status, IBV_WC_SEND, NULL, what);
}

/*
 * An RDMA WRITE or READ of LEN bytes between @local and the data of
 * @remote, through @rkey, for the SRQ numbered @srqn: its completion must
 * be @status.
 */
static bool xrdma(struct end *ini, enum ibv_wr_opcode op, struct buf *local,
		  const struct buf *remote, uint32_t rkey, uint32_t srqn,
		  enum ibv_wc_status status, const char *what)
{
	struct ibv_sge s = sge_of(local, 0, LEN);
	struct ibv_send_wr wr = wr_rdma(op, op, &s, 1, remote, 0);

	wr.wr.rdma.rkey = rkey;
	return !xpost(ini, wr, srqn) &&
	       expect_wc(ini->scq, op, status,
			 op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE, NULL, what);
}

/* The receive @wr_id in @cq: LEN bytes from @tgt. */
static void expect_recv(struct ibv_cq *cq, uint64_t wr_id, const struct ibv_qp *tgt,
			const char *what)
{
	struct ibv_wc wc;

	if (!expect_wc(cq, wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, what))
		return;
	t_check(wc.byte_len == LEN, "%s: byte_len %u, expected %u", what, wc.byte_len, LEN);
	t_check(wc.qp_num == tgt->qp_num, "%s: qp_num %#x, expected the TGT's %#x", what,
		wc.qp_num, tgt->qp_num);
}

/*
 * Two SRQs of one domain, each with its own CQ, a receive posted on each:
 * a SEND naming the first lands in the first, one naming the second in
 * the second, byte for byte, each completion on its SRQ's CQ as the TGT
 * QP's.
 */
static void xrc_send(void)
{
	struct buf *src = buf_new(LEN, LW), *dst[2] = { buf_new(LEN, LW), buf_new(LEN, LW) };
	static const char * const name[] = { "the first SRQ", "the second SRQ" };
	struct ibv_srq *srq2;
	struct ibv_cq *cq2;
	struct ibv_sge r[2];
	uint32_t n[2];
	struct xrc x;
	int i;

	if (!src || !dst[0] || !dst[1] || !xrc_new(&x, -1))
		return;
	srq2 = xsrq_new(x.xrcd, &cq2);
	if (!srq2)
		return;
	n[0] = srq_num(x.srq);
	n[1] = srq_num(srq2);
	t_check(n[0] != n[1], "two SRQs numbered %#x", n[0]);
	for (i = 0; i < 2; i++) {
		r[i] = sge_of(dst[i], 0, LEN);
		if (post_srq(i ? srq2 : x.srq, 10 + i, &r[i]))
			return;
	}
	for (i = 0; i < 2; i++) {
		if (!xsend(x.ini, src, LEN, SEED + i, n[i], IBV_WC_SUCCESS, name[i]))
			return;
		expect_recv(i ? cq2 : x.cq, 10 + i, x.tgt, name[i]);
		expect_none(i ? x.cq : cq2, 0, "the SRQ the SEND did not name");
		expect_data(dst[i], SEED + i, name[i]);
	}
	expect_data(src, SEED + 1, "sent");
}

/*
 * RDMA through a TGT QP, which has no PD of its own: a WRITE and a READ of
 * a region in the named SRQ's PD succeed byte for byte; a WRITE to a
 * region of another PD is REM_ACCESS_ERR and leaves it untouched.
 */
static void xrc_rdma_pd(void)
{
	struct buf *src = buf_new(LEN, LW), *rd = buf_new(LEN, LW);
	struct buf *tgt = buf_new(LEN, LW | RW | RR), *far = buf_new(LEN, LW);
	struct ibv_pd *other = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = NULL;
	struct xrc x;
	uint32_t n;

	if (!other) {
		t_fail("ibv_alloc_pd: %s", strerror(errno));
		return;
	}
	if (!src || !rd || !tgt || !far || !xrc_new(&x, -1))
		goto out;
	mr = ibv_reg_mr(other, far->data, LEN, LW | RW | RR);
	if (!mr) {
		t_fail("ibv_reg_mr in another PD: %s", strerror(errno));
		goto out;
	}
	n = srq_num(x.srq);
	fill(src->data, LEN, SEED);
	if (!xrdma(x.ini, IBV_WR_RDMA_WRITE, src, tgt, tgt->mr->rkey, n, IBV_WC_SUCCESS,
		   "WRITE to the SRQ's PD"))
		goto out;
	expect_data(tgt, SEED, "the WRITE's target");
	if (!xrdma(x.ini, IBV_WR_RDMA_READ, rd, tgt, tgt->mr->rkey, n, IBV_WC_SUCCESS,
		   "READ from the SRQ's PD"))
		goto out;
	expect_data(rd, SEED, "what the READ brought back");
	expect_none(x.cq, 0, "the SRQ's CQ after RDMA");
	xrdma(x.ini, IBV_WR_RDMA_WRITE, src, far, mr->rkey, n, IBV_WC_REM_ACCESS_ERR,
	      "WRITE to another PD's region");
	expect_blank(far, "the other PD's region");
out:
	if (mr)
		t_check(!ibv_dereg_mr(mr), "ibv_dereg_mr of the other PD's region");
	t_check(!ibv_dealloc_pd(other), "ibv_dealloc_pd of the other PD");
}

/*
 * A SEND to each SRQ number the TGT QP's domain does not have, on a new
 * connection each (the first puts the INI in the error state): one of an
 * SRQ destroyed, of a basic SRQ, of an XRC SRQ of another domain. Each is
 * REM_INV_REQ_ERR; nothing lands anywhere.
 */
static void xrc_bad_srqn(void)
{
	static const char * const what[] = { "a destroyed SRQ's number", "a basic SRQ",
					     "an XRC SRQ of another domain" };
	struct buf *src = buf_new(LEN, LW), *dst = buf_new(LEN, LW);
	struct ibv_srq *gone, *basic, *far;
	struct ibv_cq *gone_cq, *far_cq;
	struct ibv_sge r;
	uint32_t n[3];
	struct xrc x;
	int i;

	if (!src || !dst || !xrc_new(&x, -1))
		return;
	gone = xsrq_new(x.xrcd, &gone_cq);
	basic = srq_new(DEPTH);
	far = xsrq_new(xrcd_new(-1), &far_cq);
	if (!gone || !basic || !far)
		return;
	n[0] = srq_num(gone);
	untrack(gone);
	t_check(!ibv_destroy_srq(gone), "ibv_destroy_srq");
	n[1] = srq_num(basic);
	n[2] = srq_num(far);
	r = sge_of(dst, 0, LEN);
	if (post_srq(x.srq, 1, &r) || post_srq(basic, 2, &r) || post_srq(far, 3, &r))
		return;
	for (i = 0; i < 3; i++) {
		if ((i && !xrc_pair(&x)) ||
		    !xsend(x.ini, src, LEN, SEED + i, n[i], IBV_WC_REM_INV_REQ_ERR, what[i]))
			return;
	}
	expect_none(x.cq, QUIET_MS, "the TGT's domain's SRQ");
	expect_none(far_cq, 0, "the other domain's SRQ");
	expect_blank(dst, "the receives' buffer");
}

/* A new empty file for a domain to be of (@path: its template, then its name), or -1. */
static int file_new(char *path)
{
	int fd = mkstemp(path);

	if (fd < 0)
		t_fail("mkstemp %s: %s", path, strerror(errno));
	return fd;
}

/* The child's half of xrc_shared(); its exit status says how far it got. */
struct shared {
	const char *path;	/* the file of the domain */
	uint32_t tgt_qpn, ini_qpn;
	int to_parent;
};

static int child_run(const struct shared *sh)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = sh->tgt_qpn,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad = NULL;
	char *mem = calloc(1, LEN);
	struct ibv_sge s = { .addr = (uintptr_t)mem, .length = LEN };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &s, .num_sge = 1 }, *rbad;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_context *c = open_dev(dev_name);
	int fd = open(sh->path, O_RDWR);
	struct ibv_qp *oq, *bad;
	char want[LEN];
	struct ibv_xrcd *x;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	struct ibv_pd *p;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	uint32_t n;

	x = c && fd >= 0 && mem ? xrcd_open(c, fd, 0) : NULL;
	if (!x)
		return 10;
	oa.xrcd = x;
	oq = ibv_open_qp(c, &oa);
	if (!oq || oq->qp_num != sh->tgt_qpn || oq->qp_type != IBV_QPT_XRC_RECV)
		return 11;
	if (ibv_post_send(oq, &swr, &sbad) != EINVAL || sbad != &swr)
		return 12;
	oa.qp_num = sh->ini_qpn;
	errno = 0;
	bad = ibv_open_qp(c, &oa);
	if (bad || errno != EINVAL)
		return 13;
	p = ibv_alloc_pd(c);
	mr = p ? ibv_reg_mr(p, mem, LEN, LW) : NULL;
	cq = ibv_create_cq(c, DEPTH, NULL, NULL, 0);
	if (!mr || !cq)
		return 14;
	sa = xsrq_attr(x, p, cq);
	srq = ibv_create_srq_ex(c, &sa);
	s.lkey = mr->lkey;
	if (!srq || ibv_get_srq_num(srq, &n) || ibv_post_srq_recv(srq, &rwr, &rbad))
		return 15;
	if (write(sh->to_parent, &n, sizeof(n)) != sizeof(n))
		return 16;
	fill(want, LEN, SEED);
	if (poll_n(cq, &wc, 1, WAIT_MS) != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != 7 ||
	    wc.opcode != IBV_WC_RECV || wc.byte_len != LEN || wc.qp_num != sh->tgt_qpn ||
	    memcmp(mem, want, LEN))
		return 17;
	/* Its own objects go, the domain and the TGT QP stay the parent's. */
	if (ibv_destroy_qp(oq) || ibv_destroy_srq(srq) || ibv_destroy_cq(cq) ||
	    ibv_dereg_mr(mr) || ibv_dealloc_pd(p) || ibv_close_xrcd(x) || ibv_close_device(c))
		return 18;
	return 0;
}

/*
 * A domain of a file, shared with a child process: the child opens it
 * through the file, opens the parent's TGT QP by number (not the INI's:
 * EINVAL) and makes an XRC SRQ of the domain; the parent's INI sends into
 * the child's SRQ, and the bytes land in the child's memory. After the
 * child has gone, a SEND to the parent's SRQ still lands, and one to the
 * child's is REM_INV_REQ_ERR.
 */
static void xrc_shared(void)
{
	struct buf *src = buf_new(LEN, LW), *dst = buf_new(LEN, LW);
	char path[] = "/tmp/stag-xrcd-XXXXXX";
	int fd = file_new(path), pipefd[2] = { -1, -1 }, status;
	struct shared sh = { .path = path };
	uint32_t child_srqn = 0;
	struct ibv_sge r;
	struct xrc x;
	pid_t pid;

	if (fd < 0)
		return;
	if (!src || !dst || !xrc_new(&x, fd))
		goto out;
	if (pipe(pipefd)) {
		t_fail("pipe: %s", strerror(errno));
		goto out;
	}
	sh.tgt_qpn = x.tgt->qp_num;
	sh.ini_qpn = x.ini->qp->qp_num;
	sh.to_parent = pipefd[1];
	fflush(stdout);
	pid = fork();
	if (!pid) {
		close(pipefd[0]);
		_exit(child_run(&sh));
	}
	close(pipefd[1]);
	if (pid < 0) {
		t_fail("fork: %s", strerror(errno));
		goto out;
	}
	/* The child's SRQ number, or EOF if it failed before it had one. */
	if (read(pipefd[0], &child_srqn, sizeof(child_srqn)) == sizeof(child_srqn))
		xsend(x.ini, src, LEN, SEED, child_srqn, IBV_WC_SUCCESS,
		      "SEND to the child's SRQ");
	waitpid(pid, &status, 0);
	t_check(WIFEXITED(status) && !WEXITSTATUS(status),
		"the child that shared the domain: status %#x (exit 10+ is how far it got)",
		status);

	r = sge_of(dst, 0, LEN);
	if (post_srq(x.srq, 1, &r) ||
	    !xsend(x.ini, src, LEN, SEED + 1, srq_num(x.srq), IBV_WC_SUCCESS,
		   "SEND to the parent's SRQ after the child left"))
		goto out;
	expect_recv(x.cq, 1, x.tgt, "the parent's SRQ");
	expect_data(dst, SEED + 1, "the parent's SRQ");
	if (child_srqn)
		xsend(x.ini, src, LEN, SEED + 2, child_srqn, IBV_WC_REM_INV_REQ_ERR,
		      "SEND to the SRQ the child destroyed");
out:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	close(fd);
	unlink(path);
}

/* ibv_create_srq_ex(@a) must fail with @err. */
static void srq_refused(struct ibv_srq_init_attr_ex *a, int err, const char *what)
{
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq_ex(ctx, a);
	t_check(!srq && errno == err, "%s: %p, %s, expected %s", what, (void *)srq,
		strerror(errno), strerror(err));
	if (srq)
		track(K_SRQ, srq, 0);
}

/* ibv_open_xrcd(@fd, @oflags) must fail with @err. */
static void xrcd_refused(int fd, int oflags, int err, const char *what)
{
	struct ibv_xrcd *x;

	errno = 0;
	x = xrcd_open(ctx, fd, oflags);
	t_check(!x && errno == err, "%s: %p, %s, expected %s", what, (void *)x, strerror(errno),
		strerror(err));
	if (x)
		track(K_XRCD, x, 0);
}

/*
 * What the verbs refuse: an XRC SRQ without a domain or without a CQ
 * (EINVAL), a tag-matching SRQ naming an XRC domain (EINVAL); a file with no domain yet,
 * opened without O_CREAT (EAGAIN), and its domain opened again with
 * O_EXCL (EINVAL); closing a domain that still has an SRQ or a TGT QP
 * (EBUSY, then it closes); a receive on an INI QP and a send on a TGT QP
 * in RTS (EINVAL, the request named as the bad one).
 */
static void xrc_refusals(void)
{
	char path[] = "/tmp/stag-xrcd-XXXXXX";
	int fd = file_new(path);
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad = NULL;
	struct ibv_send_wr swr = { .wr_id = 2, .opcode = IBV_WR_SEND }, *sbad = NULL;
	struct ibv_srq_init_attr_ex a;
	struct xrc x;
	struct conn c;
	int ret;

	if (fd < 0)
		return;
	if (!xrc_new(&x, -1))
		goto out;
	a = xsrq_attr(x.xrcd, pd, x.cq);
	a.comp_mask &= ~IBV_SRQ_INIT_ATTR_XRCD;
	srq_refused(&a, EINVAL, "an XRC SRQ without a domain");
	a.comp_mask ^= IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	srq_refused(&a, EINVAL, "an XRC SRQ without a CQ");
	a = xsrq_attr(x.xrcd, pd, x.cq);
	a.srq_type = IBV_SRQT_TM;
	a.comp_mask |= IBV_SRQ_INIT_ATTR_TM;
	a.tm_cap.max_num_tags = 1;
	srq_refused(&a, EINVAL, "a tag-matching SRQ naming an XRC domain");

	xrcd_refused(fd, 0, EAGAIN, "a file with no domain, without O_CREAT");
	if (xrcd_new(fd))
		xrcd_refused(fd, O_CREAT | O_EXCL, EINVAL, "a file's domain with O_EXCL");

	ret = ibv_close_xrcd(x.xrcd);
	t_check(ret == EBUSY, "closing a domain with an SRQ and a TGT QP: %s", strerror(ret));
	untrack(x.srq);
	t_check(!ibv_destroy_srq(x.srq), "ibv_destroy_srq");
	ret = ibv_post_recv(x.ini->qp, &rwr, &rbad);
	t_check(ret == EINVAL && rbad == &rwr, "a receive on an INI QP: %s", strerror(ret));
	c = conn_to(x.ini->qp->qp_num, &gid);
	ret = qp_to_rts(x.tgt, &c);
	t_check(!ret, "TGT QP to RTS: %s", strerror(ret));
	ret = ibv_post_send(x.tgt, &swr, &sbad);
	t_check(ret == EINVAL && sbad == &swr, "a send on a TGT QP: %s", strerror(ret));
	ret = ibv_close_xrcd(x.xrcd);
	t_check(ret == EBUSY, "closing a domain with a TGT QP: %s", strerror(ret));
	untrack(x.tgt);
	t_check(!ibv_destroy_qp(x.tgt), "ibv_destroy_qp of the TGT");
	ret = ibv_close_xrcd(x.xrcd);
	t_check(!ret, "closing the domain once it has nothing: %s", strerror(ret));
	if (!ret)
		untrack(x.xrcd);
out:
	close(fd);
	unlink(path);
}

/* The race's sender: NRACE SENDs, one at a time, each waited for. */
struct sender {
	struct end *ini;
	struct buf *src;
	uint32_t srqn;
	atomic_int done;	/* completions polled so far */
	struct ibv_wc wc[NRACE];
	int post_err;
};

static void *sender_run(void *arg)
{
	struct sender *s = arg;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sg;
	int i;

	for (i = 0; i < NRACE; i++) {
		sg = sge_of(s->src, i * MSG, MSG);
		wr = wr_send(i, &sg, 1);
		wr.qp_type.xrc.remote_srqn = s->srqn;
		s->post_err = ibv_post_send(s->ini->qp, &wr, &bad);
		if (s->post_err || poll_n(s->ini->scq, &s->wc[i], 1, WAIT_MS) != 1)
			break;
		atomic_store(&s->done, i + 1);
	}
	return NULL;
}

/*
 * Checks the INI's completions @wc[0 .. @n): SUCCESS (opcode SEND), then
 * one @err, then WR_FLUSH_ERR, each of its own wr_id in order, the last a
 * flush. Returns how many succeeded.
 */
static int expect_race_wcs(const struct ibv_wc *wc, int n, enum ibv_wc_status err)
{
	enum ibv_wc_status want = IBV_WC_SUCCESS;
	int i, ok = 0;
	char what[64];

	for (i = 0; i < n; i++) {
		if (want == IBV_WC_SUCCESS && wc[i].status != IBV_WC_SUCCESS)
			want = err;
		snprintf(what, sizeof(what), "send %d of the race", i);
		if (!expect_wc_is(&wc[i], i, want, IBV_WC_SEND, what))
			break;
		ok += want == IBV_WC_SUCCESS;
		if (want == err)
			want = IBV_WC_WR_FLUSH_ERR;
	}
	t_check(want == IBV_WC_WR_FLUSH_ERR && wc[n - 1].status == IBV_WC_WR_FLUSH_ERR,
		"the last send after the race: %s, expected a flush",
		ibv_wc_status_str(wc[n - 1].status));
	return ok;
}

/* Bytes @off to the end of @b are as buf_new() left them, and so are its guards. */
static void expect_blank_from(const struct buf *b, size_t off, const char *what)
{
	char *want = malloc(b->len);

	fill(want, b->len, BLANK);
	expect_bytes(b->data + off, want + off, b->len - off, what);
	expect_guards(b, what);
	free(want);
}

/*
 * The race of the two cases below, on @x, a pair connected with a short
 * retry: @x's SRQ gets NRACE receives into @dst; a thread sends @src's
 * NRACE messages one at a time; once RACE_AT have landed the main thread
 * destroys the SRQ (@tgt false) or the TGT QP (@tgt true), and two SENDs
 * follow the thread's, for over loopback the race may be over first. The
 * INI's completions are SUCCESS, then one @err, then WR_FLUSH_ERR; the
 * SRQ's CQ has one RECV for each success, with its bytes. Returns the
 * successes, or -1 when the race could not be run.
 */
static int race_destroy(struct xrc *x, struct buf *src, struct buf *dst, bool tgt,
			enum ibv_wc_status err)
{
	const char *victim = tgt ? "the TGT QP" : "the SRQ";
	struct ibv_wc wc[NRACE + 2];
	struct sender s = { 0 };
	int i, n, ok, got;
	struct ibv_sge r;
	long deadline;
	pthread_t th;
	char what[64];

	for (i = 0; i < NRACE; i++) {
		fill(src->data + i * MSG, MSG, SEED + i);
		r = sge_of(dst, i * MSG, MSG);
		if (post_srq(x->srq, 100 + i, &r))
			return -1;
	}
	s.ini = x->ini;
	s.src = src;
	s.srqn = srq_num(x->srq);
	if (pthread_create(&th, NULL, sender_run, &s)) {
		t_fail("pthread_create");
		return -1;
	}
	deadline = now_ms() + WAIT_MS;
	while (atomic_load(&s.done) < RACE_AT && now_ms() < deadline)
		usleep(10);
	snprintf(what, sizeof(what), "destroying %s while sends name it", victim);
	untrack(tgt ? (void *)x->tgt : (void *)x->srq);
	t_check(!(tgt ? ibv_destroy_qp(x->tgt) : ibv_destroy_srq(x->srq)), "%s", what);
	pthread_join(th, NULL);
	n = atomic_load(&s.done);
	if (n != NRACE) {
		t_fail("the race's send %d: post %s, or no completion in %d ms", n,
		       strerror(s.post_err), WAIT_MS);
		return -1;
	}
	memcpy(wc, s.wc, n * sizeof(*wc));
	for (i = 0; i < 2; i++) {
		struct ibv_sge sg = sge_of(src, 0, MSG);

		if (xpost(x->ini, wr_send(n, &sg, 1), s.srqn))
			return -1;
		if (poll_n(x->ini->scq, &wc[n], 1, WAIT_MS) != 1) {
			t_fail("send %d, after the race: no completion in %d ms", n, WAIT_MS);
			return -1;
		}
		n++;
	}
	ok = expect_race_wcs(wc, n, err);
	printf("# %d of %d sends landed before %s went\n", ok, n, victim);
	t_check(ok >= RACE_AT, "%d sends landed, expected %d or more", ok, RACE_AT);
	got = poll_n(x->cq, wc, NRACE, QUIET_MS);
	t_check(got == ok, "%d receives completed for %d sends that succeeded", got, ok);
	for (i = 0; i < got; i++) {
		if (!expect_wc_is(&wc[i], 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV, "a race's receive"))
			break;
		t_check(wc[i].byte_len == MSG, "receive %d: byte_len %u", i, wc[i].byte_len);
	}
	expect_bytes(dst->data, src->data, ok * MSG, "the messages that landed");
	return ok;
}

/*
 * An SRQ destroyed under a thread that sends into it: SUCCESS, then
 * REM_INV_REQ_ERR, then flushes; nothing else landed.
 */
static void xrc_srq_destroyed(void)
{
	struct buf *src = buf_new(NRACE * MSG, LW), *dst = buf_new(NRACE * MSG, LW);
	struct xrc x;
	int ok;

	if (!src || !dst || !xrc_new(&x, -1))
		return;
	ok = race_destroy(&x, src, dst, false, IBV_WC_REM_INV_REQ_ERR);
	if (ok >= 0)
		expect_blank_from(dst, ok * MSG, "the receives the destroyed SRQ took with it");
}

/*
 * What a consumer may pass that XRC QPs have no use for, and the kernel
 * does not hold: a TGT QP's sizes (65536 WRs each: no queue is made, the
 * QP reports none) and CQs; an INI QP's receive CQ. The CQs can be
 * destroyed under the QPs, and a reset must not touch them (the provider
 * once cleaned the INI's receive CQ, freed by then, and crashed). The
 * pair still works after.
 */
static void xrc_unheld(void)
{
	struct buf *src = buf_new(LEN, LW), *dst = buf_new(LEN, LW);
	struct ibv_cq *gone = ibv_create_cq(ctx, DEPTH, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex ta = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.cap = { .max_send_wr = 65536, .max_recv_wr = 65536, .max_send_sge = 32,
			 .max_recv_sge = 32, .max_inline_data = 512 },
		.send_cq = gone,
		.recv_cq = gone,
	};
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = DEPTH, .max_send_sge = MAX_SGE },
		.recv_cq = gone,
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr qa;
	struct ibv_sge r;
	struct xrc x;
	int ret;

	if (!src || !dst || !gone || !have_xrc()) {
		if (gone)
			ibv_destroy_cq(gone);
		return;
	}
	x.xrcd = xrcd_new(-1);
	x.srq = xsrq_new(x.xrcd, &x.cq);
	ta.xrcd = x.xrcd;
	x.tgt = x.srq ? made(K_QP, ibv_create_qp_ex(ctx, &ta), "a TGT QP with sizes and CQs") :
			NULL;
	x.ini = calloc(1, sizeof(*x.ini));
	if (x.ini) {
		x.ini->scq = cq_new();
		ia.send_cq = x.ini->scq;
		x.ini->qp = made(K_QP, ibv_create_qp(pd, &ia), "an INI QP with a receive CQ");
	}
	if (!x.tgt || !x.ini || !x.ini->qp) {
		ibv_destroy_cq(gone);
		return;
	}
	ret = ibv_query_qp(x.tgt, &qa, IBV_QP_CAP, &init);
	t_check(!ret && !init.cap.max_send_wr && !init.cap.max_recv_wr && !init.cap.max_send_sge,
		"the TGT QP's sizes: %s, send %u recv %u sge %u, expected none", strerror(ret),
		init.cap.max_send_wr, init.cap.max_recv_wr, init.cap.max_send_sge);
	ret = ibv_destroy_cq(gone);
	t_check(!ret, "destroying the CQ the XRC QPs were given: %s", strerror(ret));
	qa.qp_state = IBV_QPS_RESET;
	t_check(!ibv_modify_qp(x.ini->qp, &qa, IBV_QP_STATE), "the INI QP to RESET");
	t_check(!ibv_modify_qp(x.tgt, &qa, IBV_QP_STATE), "the TGT QP to RESET");
	r = sge_of(dst, 0, LEN);
	if (!xrc_connect(x.ini, x.tgt) || post_srq(x.srq, 5, &r))
		return;
	if (xsend(x.ini, src, LEN, SEED, srq_num(x.srq), IBV_WC_SUCCESS, "the pair after"))
		expect_recv(x.cq, 5, x.tgt, "the pair after");
	expect_data(dst, SEED, "the pair after");
}

/* One of two threads posting on one INI QP, each naming its own SRQ. */
struct poster {
	struct end *ini;
	const struct buf *src;	/* MSG bytes for each of its sends */
	uint32_t srqn;
	int id;			/* wr_id: id * 1000 + i */
	int err;
};

static void *poster_run(void *arg)
{
	struct poster *p = arg;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sg;
	int i;

	for (i = 0; i < DEPTH && !p->err; i++) {
		sg = sge_of(p->src, i * MSG, MSG);
		wr = wr_send(p->id * 1000 + i, &sg, 1);
		wr.qp_type.xrc.remote_srqn = p->srqn;
		/* The send queue is shared: full is a wait, not a failure. */
		while ((p->err = ibv_post_send(p->ini->qp, &wr, &bad)) == ENOMEM)
			usleep(100);
	}
	return NULL;
}

/*
 * Two threads post DEPTH SENDs each on one INI QP at once, each naming its
 * own SRQ of the domain: every send completes SUCCESS, each SRQ gets its
 * thread's messages, all of them, in the order that thread posted them,
 * byte for byte, and none of the other's.
 */
static void xrc_two_posters(void)
{
	struct buf *src[2], *dst[2];
	struct poster p[2] = { 0 };
	struct ibv_cq *cq[2];
	struct ibv_srq *srq[2];
	struct ibv_wc wc[2 * DEPTH];
	int i, t, got = 0, ok = 0;
	pthread_t th[2];
	struct ibv_sge r;
	long deadline;
	char what[64];
	struct xrc x;

	for (t = 0; t < 2; t++) {
		src[t] = buf_new(DEPTH * MSG, LW);
		dst[t] = buf_new(DEPTH * MSG, LW);
		if (!src[t] || !dst[t])
			return;
	}
	if (!xrc_new(&x, -1))
		return;
	srq[0] = x.srq;
	cq[0] = x.cq;
	srq[1] = xsrq_new(x.xrcd, &cq[1]);
	if (!srq[1])
		return;
	for (t = 0; t < 2; t++) {
		for (i = 0; i < DEPTH; i++) {
			fill(src[t]->data + i * MSG, MSG, SEED + 100 * t + i);
			r = sge_of(dst[t], i * MSG, MSG);
			if (post_srq(srq[t], i, &r))
				return;
		}
		p[t] = (struct poster){ .ini = x.ini, .src = src[t], .srqn = srq_num(srq[t]),
					.id = t + 1 };
	}
	for (t = 0; t < 2; t++)
		if (pthread_create(&th[t], NULL, poster_run, &p[t])) {
			t_fail("pthread_create");
			while (t--)
				pthread_join(th[t], NULL);
			return;
		}
	/* The main thread takes the INI's completions meanwhile: the queue drains. */
	deadline = now_ms() + 4 * WAIT_MS;
	while (got < 2 * DEPTH && now_ms() < deadline)
		got += poll_n(x.ini->scq, wc + got, 2 * DEPTH - got, 10);
	for (t = 0; t < 2; t++) {
		pthread_join(th[t], NULL);
		t_check(!p[t].err, "thread %d: ibv_post_send: %s", t, strerror(p[t].err));
	}
	t_check(got == 2 * DEPTH, "%d send completions, expected %d", got, 2 * DEPTH);
	for (i = 0; i < got; i++)
		ok += wc[i].status == IBV_WC_SUCCESS && wc[i].opcode == IBV_WC_SEND;
	t_check(ok == got, "%d of %d sends completed SEND/SUCCESS", ok, got);

	for (t = 0; t < 2; t++) {
		struct ibv_wc rwc[DEPTH];
		int n = poll_n(cq[t], rwc, DEPTH, WAIT_MS);

		snprintf(what, sizeof(what), "SRQ %d", t);
		t_check(n == DEPTH, "%s: %d receives completed, expected %d", what, n, DEPTH);
		for (i = 0; i < n; i++) {
			snprintf(what, sizeof(what), "SRQ %d's receive %d", t, i);
			if (!expect_wc_is(&rwc[i], i, IBV_WC_SUCCESS, IBV_WC_RECV, what))
				break;
		}
		snprintf(what, sizeof(what), "thread %d's messages in SRQ %d", t, t);
		expect_bytes(dst[t]->data, src[t]->data, DEPTH * MSG, what);
		expect_guards(dst[t], what);
	}
}

/*
 * The TGT QP destroyed (its last handle closed) under a thread that sends
 * to it from its INI: SUCCESS, then, with nobody to answer, one
 * RETRY_EXC_ERR, then WR_FLUSH_ERR; the SRQ keeps only what landed and
 * lives on for a new pair.
 */
static void xrc_tgt_destroyed(void)
{
	struct buf *src = buf_new(NRACE * MSG, LW), *dst = buf_new(NRACE * MSG, LW);
	struct buf *next = buf_new(MSG, LW);
	struct ibv_sge r;
	struct xrc x;
	int ok;

	if (!src || !dst || !next || !have_xrc())
		return;
	x.xrcd = xrcd_new(-1);
	x.srq = xsrq_new(x.xrcd, &x.cq);
	x.tgt = tgt_new(x.xrcd);
	x.ini = ini_new();
	if (!x.srq || !x.tgt || !x.ini || !xrc_connect_as(x.ini, x.tgt, true))
		return;
	ok = race_destroy(&x, src, dst, true, IBV_WC_RETRY_EXC_ERR);
	if (ok < 0)
		return;
	expect_blank_from(dst, ok * MSG, "the receives no message reached");

	/* The domain's SRQ outlives the TGT QP: a new pair sends into it. */
	r = sge_of(next, 0, MSG);
	if (!xrc_pair(&x) || post_srq(x.srq, 1000, &r))
		return;
	if (xsend(x.ini, src, MSG, SEED + 50, srq_num(x.srq), IBV_WC_SUCCESS,
		  "a new pair, the same SRQ"))
		expect_wc(x.cq, ok < NRACE ? 100 + ok : 1000, IBV_WC_SUCCESS, IBV_WC_RECV, NULL,
			  "the SRQ's next receive");
}

/*
 * Round @k of the stream: ROUND SENDs of MSG bytes from @src into
 * receives of @x's SRQ in @dst, each completing SUCCESS at both ends, in
 * order, byte for byte.
 */
static bool forged_round(struct xrc *x, struct buf *src, struct buf *dst, int k)
{
	struct ibv_sge r, s;
	struct ibv_wc wc;
	char what[48];
	int i;

	memset(dst->data, 0, ROUND * MSG);
	for (i = 0; i < ROUND; i++) {
		r = sge_of(dst, i * MSG, MSG);
		if (post_srq(x->srq, k * ROUND + i, &r))
			return false;
	}
	for (i = 0; i < ROUND; i++) {
		fill(src->data + i * MSG, MSG, SEED + k * ROUND + i);
		s = sge_of(src, i * MSG, MSG);
		if (xpost(x->ini, wr_send(k * ROUND + i, &s, 1), srq_num(x->srq)))
			return false;
	}
	for (i = 0; i < ROUND; i++) {
		snprintf(what, sizeof(what), "round %d, SEND %d", k, i);
		if (!expect_wc(x->ini->scq, k * ROUND + i, IBV_WC_SUCCESS, IBV_WC_SEND, NULL,
			       what) ||
		    !expect_wc(x->cq, k * ROUND + i, IBV_WC_SUCCESS, IBV_WC_RECV, &wc, what))
			return false;
		t_check(wc.byte_len == MSG && wc.qp_num == x->tgt->qp_num,
			"%s: byte_len %u qp_num %#x, expected %d and %#x", what, wc.byte_len,
			wc.qp_num, MSG, x->tgt->qp_num);
	}
	expect_bytes(dst->data, src->data, ROUND * MSG, "a round's receives");
	expect_guards(dst, "a round's receives");
	return !t_failing();
}

/*
 * Forged packets at an XRC connection: bin/inject sends FORGED_PKTS of
 * every kind it makes at this host while the INI sends round after round
 * to its SRQ. Watching lo, inject learns the TGT's and the INI's QPNs and
 * the SRQ number the requests name, and forges XRC requests naming it or
 * its neighbours: a second SRQ of the domain and an SRQ of another
 * domain, both with receives posted. It never sends what matches the
 * connection exactly (the peer's address and a PSN in the window). Every
 * SEND of the stream lands, in order, byte for byte; nothing else reaches
 * any of the three SRQs; the TGT stays in RTR, the INI in RTS.
 */
static void xrc_forged(void)
{
	struct buf *src = buf_new(ROUND * MSG, LW), *dst = buf_new(ROUND * MSG, LW);
	struct buf *idle = buf_new(MSG, LW);
	char prog[256], own[INET_ADDRSTRLEN], mtus[16], count[16], seed[16], t[16], out[4096];
	char *const inj[] = { prog, "-T", t, "-t", own, "-p", own, "-i", "lo", "-m", mtus,
			       "-n", count, "-s", seed, NULL };
	unsigned long learnt = 0, xrc_seen = 0;
	struct ibv_cq *cq2, *far_cq;
	struct ibv_srq *srq2, *far;
	int k = 0, status = -1, fd;
	bool reaped = false;
	long drops = 0;
	struct ibv_sge r;
	struct xrc x;
	char *line;
	ssize_t got;
	pid_t pid;

	if (!inject_ready(prog, sizeof(prog),
			  "over loopback no packet reaches the TGT QP (stag.loopback=0 does)") ||
	    !src || !dst || !idle || !xrc_new(&x, -1))
		return;
	srq2 = xsrq_new(x.xrcd, &cq2);
	far = xsrq_new(xrcd_new(-1), &far_cq);
	if (!srq2 || !far)
		return;
	r = sge_of(idle, 0, MSG);
	if (post_srq(srq2, 1, &r) || post_srq(far, 2, &r))
		return;
	if (!forged_round(&x, src, dst, k++))
		return;

	inet_ntop(AF_INET, gid.raw + 12, own, sizeof(own));
	snprintf(mtus, sizeof(mtus), "%u", 128u << port_attr.active_mtu);
	snprintf(count, sizeof(count), "%d", FORGED_PKTS);
	snprintf(seed, sizeof(seed), "%ld", (long)getpid());
	inject_deadline(t, sizeof(t));
	if (is_stag())
		drops = hw_counter("drop_not_peer") + hw_counter("drop_qp_state") +
			hw_counter("drop_malformed") + hw_counter("icrc_errors");
	/* Its few lines stay in the pipe until it exits. */
	pid = inject_start(inj, &fd);
	if (pid < 0)
		return;
	while (forged_round(&x, src, dst, k++) && !reaped)
		reaped = waitpid(pid, &status, WNOHANG) == pid;
	if (!reaped) {
		if (t_failing())
			kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	got = read(fd, out, sizeof(out) - 1);
	close(fd);
	out[got > 0 ? got : 0] = 0;
	for (line = out; (line = strstr(line, "# inject: ")); line++)
		printf("%.*s\n", (int)strcspn(line, "\n"), line);
	if (t_failing())
		return;
	t_check(WIFEXITED(status) && !WEXITSTATUS(status), "inject: status %#x", status);
	line = strstr(out, "QPs learnt: ");
	if (line)
		sscanf(line, "QPs learnt: %lu; XRC requests seen: %lu", &learnt, &xrc_seen);
	/* Else the packets aimed at nothing of the connection: the case would prove nothing. */
	t_check(learnt >= 2 && xrc_seen > 0, "inject learnt %lu QPs and saw %lu XRC requests, "
		"expected the INI's and the TGT's and some", learnt, xrc_seen);
	forged_round(&x, src, dst, k++);
	if (is_stag())
		drops = hw_counter("drop_not_peer") + hw_counter("drop_qp_state") +
			hw_counter("drop_malformed") + hw_counter("icrc_errors") - drops;
	printf("# %d forged packets during %d rounds of %d SENDs; %ld dropped as not the peer's, "
	       "malformed, for the QP's state or the ICRC\n", FORGED_PKTS, k, ROUND, drops);
	expect_none(x.cq, QUIET_MS, "the stream's SRQ after the last round");
	expect_none(cq2, 0, "the domain's second SRQ");
	expect_none(far_cq, 0, "another domain's SRQ");
	expect_blank(idle, "the idle SRQs' receive buffer");
	expect_state(x.tgt, IBV_QPS_RTR, "the TGT QP");
	expect_state(x.ini->qp, IBV_QPS_RTS, "the INI QP");
}

const struct qp_case xrc_cases[] = {
	{ "XRC: SEND from an XRC INI QP to a TGT QP lands in the SRQ it names", xrc_send },
	{ "XRC: RDMA WRITE and READ are checked against the named SRQ's PD", xrc_rdma_pd },
	{ "XRC: a send naming an SRQ that does not exist, or of another XRCD: "
	  "IBV_WC_REM_INV_REQ_ERR", xrc_bad_srqn },
	{ "XRC: the XRCD shared by two processes through a file", xrc_shared },
	{ "XRC: refusals", xrc_refusals },
	{ "XRC: sizes and CQs an XRC QP was given but has no use for: none held, none touched",
	  xrc_unheld },
	{ "XRC: an SRQ destroyed while an INI sends to it", xrc_srq_destroyed },
	{ "XRC: two threads post on one INI QP at once, each to its own SRQ: all land, in order",
	  xrc_two_posters },
	{ "XRC: the TGT QP destroyed while its INI sends: SUCCESS, RETRY_EXC_ERR, then flushes; "
	  "the SRQ lives on", xrc_tgt_destroyed },
	{ "XRC: 3000 forged packets (bin/inject) while an INI sends to its SRQ: every SEND lands "
	  "in order, nothing else reaches the domain's SRQs or another's", xrc_forged },
	{ NULL }
};
