// SPDX-License-Identifier: GPL-2.0
/*
 * Sharing a context (ibv_import_device, ibv_import_pd, ibv_import_mr): a
 * duplicate of the context's command file opens it again, in this process
 * or in a child, whose QPs then use the PD and the regions the first one
 * made. Each case checks the keys and sizes imported, the data the
 * importer's QP moves byte for byte with the guards around it, handles
 * that name nothing, a region deregistered by its owner under the
 * importer, and that unimporting leaves the owner's objects working.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qp.h"

#define LEN	256
#define SEED	91
#define PSN_CHILD	0x111	/* what the child's QP sends first */
#define PSN_PARENT	0x222

/* A context imported through a duplicate of this one's command file, and its PD. */
struct imported {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static bool import_all(struct imported *im, int fd, const struct ibv_mr *mr)
{
	memset(im, 0, sizeof(*im));
	im->ctx = ibv_import_device(fd);
	if (!im->ctx) {
		t_fail("ibv_import_device: %s", strerror(errno));
		close(fd);
		return false;
	}
	im->pd = ibv_import_pd(im->ctx, pd->handle);
	if (!im->pd) {
		t_fail("ibv_import_pd of handle %u: %s", pd->handle, strerror(errno));
		return false;
	}
	if (!mr)
		return true;
	im->mr = ibv_import_mr(im->pd, mr->handle);
	if (!im->mr) {
		t_fail("ibv_import_mr of handle %u: %s", mr->handle, strerror(errno));
		return false;
	}
	return true;
}

/* An RC QP of the imported context on its imported PD, connected to @peer. */
static bool import_qp(struct imported *im, struct end *peer)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = MAX_SGE,
			 .max_recv_sge = MAX_SGE, .max_inline_data = MAX_INLINE },
	};
	struct end mine = { 0 };
	struct conn cm, cp;

	im->cq = ibv_create_cq(im->ctx, 2 * DEPTH, NULL, NULL, 0);
	if (!im->cq) {
		t_fail("ibv_create_cq on the imported context: %s", strerror(errno));
		return false;
	}
	a.send_cq = im->cq;
	a.recv_cq = im->cq;
	im->qp = ibv_create_qp(im->pd, &a);
	if (!im->qp) {
		t_fail("ibv_create_qp on the imported PD: %s", strerror(errno));
		return false;
	}
	mine = (struct end){ .scq = im->cq, .rcq = im->cq, .qp = im->qp };
	cm = conn_default(peer);
	cp = conn_default(&mine);
	return pair_connect(&mine, &cm, peer, &cp);
}

/* Everything imported goes, in the order objects depend on each other. */
static void import_release(struct imported *im)
{
	if (im->qp)
		t_check(!ibv_destroy_qp(im->qp), "ibv_destroy_qp (imported)");
	if (im->cq)
		t_check(!ibv_destroy_cq(im->cq), "ibv_destroy_cq (imported)");
	if (im->mr)
		ibv_unimport_mr(im->mr);
	if (im->pd)
		ibv_unimport_pd(im->pd);
	if (im->ctx)
		t_check(!ibv_close_device(im->ctx), "ibv_close_device (imported)");
	memset(im, 0, sizeof(*im));
}

/* @n bytes from @sg to @raddr through @rkey on the imported QP, completing with @status. */
static bool import_write(struct imported *im, struct ibv_sge *sg, uint64_t raddr, uint32_t rkey,
			 enum ibv_wc_status status, const char *what)
{
	struct ibv_send_wr wr = wr_send(1, sg, 1), *bad;
	struct ibv_wc wc;
	int ret;

	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ret = ibv_post_send(im->qp, &wr, &bad);
	if (ret) {
		t_fail("%s: ibv_post_send: %s", what, strerror(ret));
		return false;
	}
	return expect_wc(im->cq, 1, status, IBV_WC_RDMA_WRITE, &wc, what);
}

/*
 * The same process imports its own context, PD and region: the region's
 * keys and length come back, its address does not (NULL); a QP of the
 * imported context writes into the region through the imported rkey from
 * a buffer of the owner's; unimported and closed, the owner's objects work.
 */
static void import_self(void)
{
	struct buf *tgt = buf_new(LEN, LW | RW), *src = buf_new(LEN, LW);
	struct end *b = end_new(IBV_QPT_RC, NULL, true);
	struct imported im = { 0 };
	struct ibv_sge s;

	if (!tgt || !src || !b || !import_all(&im, dup(ctx->cmd_fd), tgt->mr))
		goto out;
	t_check(im.mr->lkey == tgt->mr->lkey && im.mr->rkey == tgt->mr->rkey &&
		im.mr->length == tgt->mr->length && !im.mr->addr && im.mr->pd == im.pd &&
		im.mr->context == im.ctx,
		"imported region: lkey %#x rkey %#x length %zu addr %p, expected %#x %#x %zu NULL",
		im.mr->lkey, im.mr->rkey, im.mr->length, im.mr->addr, tgt->mr->lkey,
		tgt->mr->rkey, tgt->mr->length);
	t_check(im.pd->handle == pd->handle && im.pd->context == im.ctx,
		"imported PD: handle %u, expected %u", im.pd->handle, pd->handle);
	if (!import_qp(&im, b))
		goto out;
	fill(src->data, LEN, SEED);
	s = sge_of(src, 0, LEN);
	if (import_write(&im, &s, (uintptr_t)tgt->data, im.mr->rkey, IBV_WC_SUCCESS,
			 "the imported context's QP, the imported rkey"))
		expect_data(tgt, SEED, "target");
	expect_guards(src, "source");
out:
	import_release(&im);
	/* The owner's region and PD are untouched by the importer's going. */
	if (tgt && src && b) {
		struct ibv_send_wr wr;
		struct end *a;

		if (!pair_new(IBV_QPT_RC, &a, &b))
			return;
		fill(src->data, LEN, SEED + 1);
		s = sge_of(src, 0, LEN);
		wr = wr_rdma(2, IBV_WR_RDMA_WRITE, &s, 1, tgt, 0);
		if (!post(a, &wr) &&
		    expect_wc(a->scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL,
			      "the owner's write after the importer left"))
			expect_data(tgt, SEED + 1, "target");
	}
}

/* Handles that name no PD or region of the context: ENOENT, nothing made. */
static void import_bad_handles(void)
{
	struct buf *tgt = buf_new(LEN, LW | RW);
	struct imported im = { 0 };
	struct ibv_pd *p;
	struct ibv_mr *m;

	if (!tgt || !import_all(&im, dup(ctx->cmd_fd), NULL))
		goto out;
	errno = 0;
	p = ibv_import_pd(im.ctx, pd->handle + 1000);
	t_check(!p && errno == ENOENT, "ibv_import_pd of a handle of nothing: %p, %s", p,
		strerror(errno));
	errno = 0;
	m = ibv_import_mr(im.pd, tgt->mr->handle + 1000);
	t_check(!m && errno == ENOENT, "ibv_import_mr of a handle of nothing: %p, %s", m,
		strerror(errno));
	if (p)
		ibv_unimport_pd(p);
	if (m)
		ibv_unimport_mr(m);
out:
	import_release(&im);
}

/*
 * The owner deregisters the region while the importer still has it: the
 * importer's writes through its rkey fail with REM_ACCESS_ERR and touch
 * nothing; unimporting the stale copy is still fine.
 */
static void import_owner_deregisters(void)
{
	struct buf *tgt = buf_new(LEN, LW), *src = buf_new(LEN, LW);
	struct ibv_mr *mr = tgt ? ibv_reg_mr(pd, tgt->data, LEN, LW | RW) : NULL;
	struct end *b = end_new(IBV_QPT_RC, NULL, true);
	struct imported im = { 0 };
	struct ibv_sge s;

	if (!tgt || !src || !mr || !b || !import_all(&im, dup(ctx->cmd_fd), mr) ||
	    !import_qp(&im, b))
		goto out;
	t_check(!ibv_dereg_mr(mr), "the owner's ibv_dereg_mr");
	mr = NULL;
	fill(src->data, LEN, SEED);
	s = sge_of(src, 0, LEN);
	import_write(&im, &s, (uintptr_t)tgt->data, im.mr->rkey, IBV_WC_REM_ACCESS_ERR,
		     "a write through the deregistered region's rkey");
	expect_blank(tgt, "target");
out:
	if (mr)
		ibv_dereg_mr(mr);
	import_release(&im);
}

/*
 * A child process imports the context through the command file it
 * inherited, its PD and the parent's region, makes a QP of its own and
 * writes into the parent's region; the parent sees the bytes.
 */
static void import_child(void)
{
	struct buf *tgt = buf_new(LEN, LW | RW);
	int to_parent[2], to_child[2], status;
	uint32_t qpn = 0, peer;
	struct end *b = NULL;
	pid_t pid;

	if (!tgt)
		return;
	b = end_new(IBV_QPT_RC, NULL, true);
	if (!b)
		return;
	if (pipe(to_parent) || pipe(to_child)) {
		t_fail("pipe: %s", strerror(errno));
		return;
	}
	peer = b->qp->qp_num;
	pid = fork();
	if (pid < 0) {
		t_fail("fork: %s", strerror(errno));
		return;
	}
	/* Each side keeps its ends only: a child that dies early is EOF. */
	close(pid ? to_parent[1] : to_parent[0]);
	close(pid ? to_child[0] : to_child[1]);
	if (!pid) {
		struct imported im;
		char data[MAX_INLINE];
		struct ibv_sge s = { .addr = (uintptr_t)data, .length = MAX_INLINE };
		struct ibv_send_wr wr = wr_send(1, &s, 1), *bad;
		struct ibv_wc wc = { 0 };
		struct end mine;
		struct conn c;
		int ok = 0, n;
		char go;

		/* A case in the child: no TAP lines, only its exit status. */
		if (!import_all(&im, ctx->cmd_fd, tgt->mr))
			_exit(2);
		im.cq = ibv_create_cq(im.ctx, DEPTH, NULL, NULL, 0);
		if (im.cq) {
			struct ibv_qp_init_attr a = {
				.qp_type = IBV_QPT_RC, .send_cq = im.cq, .recv_cq = im.cq,
				.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
					 .max_recv_sge = 1, .max_inline_data = MAX_INLINE },
			};

			im.qp = ibv_create_qp(im.pd, &a);
		}
		if (!im.qp)
			_exit(3);
		qpn = im.qp->qp_num;
		if (write(to_parent[1], &qpn, sizeof(qpn)) != sizeof(qpn) ||
		    read(to_child[0], &go, 1) != 1)
			_exit(4);
		mine = (struct end){ .scq = im.cq, .rcq = im.cq, .qp = im.qp };
		c = conn_to(peer, &gid);
		c.sq_psn = PSN_CHILD;
		c.rq_psn = PSN_PARENT;
		if (!connect_end(&mine, &c))
			_exit(5);
		fill(data, MAX_INLINE, SEED);
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags |= IBV_SEND_INLINE;
		wr.wr.rdma.remote_addr = (uintptr_t)tgt->data + 64;
		wr.wr.rdma.rkey = im.mr->rkey;
		n = ibv_post_send(im.qp, &wr, &bad);
		if (!n && poll_n(im.cq, &wc, 1, WAIT_MS) == 1)
			ok = wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE;
		if (!ok)
			fprintf(stderr, "# child: post %d, completion %s, opcode %d\n", n,
				ibv_wc_status_str(wc.status), wc.opcode);
		ibv_destroy_qp(im.qp);
		ibv_destroy_cq(im.cq);
		ibv_unimport_mr(im.mr);
		ibv_unimport_pd(im.pd);
		ibv_close_device(im.ctx);
		_exit(ok ? 0 : 6);
	}
	if (read(to_parent[0], &qpn, sizeof(qpn)) == sizeof(qpn)) {
		struct conn c = conn_to(qpn, &gid);
		char go = 1;

		c.sq_psn = PSN_PARENT;
		c.rq_psn = PSN_CHILD;
		if (connect_end(b, &c))
			t_check(write(to_child[1], &go, 1) == 1, "pipe to the child");
	}
	close(to_parent[0]);
	close(to_child[1]);
	waitpid(pid, &status, 0);
	t_check(WIFEXITED(status) && !WEXITSTATUS(status),
		"the child that imported the context: status %#x", status);
	{
		uint8_t want[LEN];

		fill(want, LEN, BLANK);
		fill(want + 64, MAX_INLINE, SEED);
		expect_bytes(tgt->data, want, LEN, "the parent's region after the child's write");
		expect_guards(tgt, "the parent's region");
	}
}

const struct qp_case import_cases[] = {
	{ "import: this process's own context, PD and region: keys, length, a write through them",
	  import_self },
	{ "import: a PD or region handle that names nothing: ENOENT", import_bad_handles },
	{ "import: the owner deregisters the region: the importer's write REM_ACCESS_ERR",
	  import_owner_deregisters },
	{ "import: a child imports the context, PD and region and writes into the parent's",
	  import_child },
	{ NULL }
};
