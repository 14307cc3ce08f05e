// SPDX-License-Identifier: GPL-2.0
/*
 * Tag matching: an RC QP on an IBV_SRQT_TM SRQ, whose tag list
 * ibv_post_srq_ops() fills, and a client QP sending messages that begin
 * with a tag matching header (struct ibv_tmh). An EAGER message whose tag
 * a posted entry matches lands after its header in that entry's buffer;
 * any other lands whole in a plain receive of the SRQ, and a tagged one
 * that does is unexpected and stops matching until a SYNC reports it. A
 * rendezvous (RNDV, an RVH after the header) that matches has the data it
 * names read from the client's memory and a FIN sent back. Completions
 * are read with ibv_wc_read_tm_info() from an extended CQ.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <infiniband/tm_types.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/stag-abi.h>

#include "qp.h"

#define TMH		((int)sizeof(struct ibv_tmh))
#define RVH		((int)sizeof(struct ibv_rvh))
#define ALL		(~0ULL)
#define TM_WC_FLAGS	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO)
#define SYNC_WRID	0x5c

struct ibv_cq_ex *tm_cq_new(void)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 4 * DEPTH, .wc_flags = TM_WC_FLAGS };
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);

	if (!cq)
		t_fail("ibv_create_cq_ex with IBV_WC_EX_WITH_TM_INFO: %s", strerror(errno));
	else
		track(K_CQ, ibv_cq_ex_to_cq(cq), 0);
	return cq;
}

struct ibv_srq *tm_srq_try(struct ibv_cq *cq, uint32_t num_tags)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = DEPTH, .max_sge = MAX_SGE },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = pd,
		.cq = cq,
		.tm_cap = { .max_num_tags = num_tags, .max_ops = 16 },
	};
	struct ibv_srq *srq = ibv_create_srq_ex(ctx, &a);

	if (srq)
		track(K_SRQ, srq, 0);
	return srq;
}

/* The pair, @num_tags tags, the client's QP connected with @client_access. */
static bool tm_new(struct tm_pair *t, uint32_t num_tags, int client_access)
{
	struct conn cs, cc;

	memset(t, 0, sizeof(*t));
	t->cq = tm_cq_new();
	if (!t->cq)
		return false;
	t->srq = tm_srq_try(ibv_cq_ex_to_cq(t->cq), num_tags);
	if (!t->srq) {
		t_fail("ibv_create_srq_ex of a tag matching SRQ: %s", strerror(errno));
		return false;
	}
	t->server = end_on(IBV_QPT_RC, cq_new(), ibv_cq_ex_to_cq(t->cq), t->srq, true);
	t->client = end_new(IBV_QPT_RC, NULL, true);
	if (!t->server || !t->client)
		return false;
	cs = conn_default(t->client);
	cc = conn_default(t->server);
	cc.access = client_access;
	return pair_connect(t->server, &cs, t->client, &cc);
}

/* Up to one completion of the tag matching CQ within WAIT_MS. */
bool tm_poll(struct tm_pair *t, struct tm_wc *w)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_wc_tm_info ti;
	long end = now_ms() + WAIT_MS;
	int ret;

	do {
		ret = ibv_start_poll(t->cq, &pa);
		if (ret == ENOENT)
			usleep(100);
	} while (ret == ENOENT && now_ms() < end);
	if (ret) {
		memset(w, 0, sizeof(*w));
		return false;
	}
	ibv_wc_read_tm_info(t->cq, &ti);
	*w = (struct tm_wc) {
		.wr_id = t->cq->wr_id,
		.status = t->cq->status,
		.opcode = ibv_wc_read_opcode(t->cq),
		.flags = ibv_wc_read_wc_flags(t->cq),
		.byte_len = ibv_wc_read_byte_len(t->cq),
		.qp_num = ibv_wc_read_qp_num(t->cq),
		.tag = ti.tag,
		.priv = ti.priv,
	};
	ibv_end_poll(t->cq);
	return true;
}

/* The next completion is exactly this (flags: only the tag matching ones are compared). */
bool tm_expect(struct tm_pair *t, uint64_t wr_id, enum ibv_wc_status status, int opcode,
	       unsigned int flags, uint64_t tag, struct tm_wc *out, const char *what)
{
	unsigned int tm_flags = IBV_WC_TM_SYNC_REQ | IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID;
	struct tm_wc w;

	if (!tm_poll(t, &w)) {
		t_fail("%s: no completion in %d ms", what, WAIT_MS);
		return false;
	}
	t_check(w.wr_id == wr_id && w.status == status && w.opcode == opcode &&
		(w.flags & tm_flags) == flags && w.tag == tag,
		"%s: wr_id %#llx %s opcode %d flags %#x tag %#llx, expected %#llx %s %d %#x %#llx",
		what, (ull)w.wr_id, ibv_wc_status_str(w.status), w.opcode, w.flags & tm_flags,
		(ull)w.tag, (ull)wr_id, ibv_wc_status_str(status), opcode, flags, (ull)tag);
	if (out)
		*out = w;
	return !t_failing();
}

void tm_expect_none(struct tm_pair *t, const char *what)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int ret;

	usleep(QUIET_MS * 1000);
	ret = ibv_start_poll(t->cq, &pa);
	if (ret == ENOENT)
		return;
	if (ret) {
		t_fail("%s: ibv_start_poll: %s", what, strerror(ret));
		return;
	}
	t_fail("%s: a completion came (wr_id %#llx, opcode %d, %s)", what, (ull)t->cq->wr_id,
	       (int)ibv_wc_read_opcode(t->cq), ibv_wc_status_str(t->cq->status));
	ibv_end_poll(t->cq);
}

int tm_op(struct tm_pair *t, struct ibv_ops_wr *wr)
{
	struct ibv_ops_wr *bad = NULL;
	int ret = ibv_post_srq_ops(t->srq, wr, &bad);

	t_check(!ret || bad == wr, "ibv_post_srq_ops: bad_wr %p is not the failing %p",
		(void *)bad, (void *)wr);
	return ret;
}

/* Adds a tagged buffer, signaled, and takes its TM_ADD completion; its handle. */
uint32_t tm_add(struct tm_pair *t, uint64_t tag, uint64_t mask, uint64_t recv_wr_id,
		struct ibv_sge *sg, int n)
{
	struct ibv_ops_wr wr = {
		.wr_id = recv_wr_id | 0xadd00000,
		.opcode = IBV_WR_TAG_ADD,
		.flags = IBV_OPS_SIGNALED,
		.tm = {
			.unexpected_cnt = t->unexpected,
			.add = { .recv_wr_id = recv_wr_id, .sg_list = sg, .num_sge = n,
				 .tag = tag, .mask = mask },
		},
	};
	int ret = tm_op(t, &wr);

	if (ret) {
		t_fail("TAG_ADD of tag %#llx: %s", (ull)tag, strerror(ret));
		return ~0U;
	}
	tm_expect(t, wr.wr_id, IBV_WC_SUCCESS, IBV_WC_TM_ADD, 0, 0, NULL, "TM_ADD");
	return wr.tm.handle;
}

static int tm_del_post(struct tm_pair *t, uint32_t handle, uint64_t wr_id)
{
	struct ibv_ops_wr wr = {
		.wr_id = wr_id,
		.opcode = IBV_WR_TAG_DEL,
		.flags = IBV_OPS_SIGNALED,
		.tm = { .handle = handle, .unexpected_cnt = t->unexpected },
	};

	return tm_op(t, &wr);
}

/* A SYNC reporting every unexpected message seen, and its completion. */
void tm_sync(struct tm_pair *t)
{
	struct ibv_ops_wr wr = {
		.wr_id = SYNC_WRID,
		.opcode = IBV_WR_TAG_SYNC,
		.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC,
		.tm = { .unexpected_cnt = t->unexpected },
	};
	int ret = tm_op(t, &wr);

	t_check(!ret, "TAG_SYNC: %s", strerror(ret));
	if (!ret)
		tm_expect(t, SYNC_WRID, IBV_WC_SUCCESS, IBV_WC_TM_SYNC, 0, 0, NULL, "TM_SYNC");
}

/* Writes a TMH at the start of @b's data. */
static void put_tmh(struct buf *b, uint8_t op, uint64_t tag, uint32_t app_ctx)
{
	struct ibv_tmh h = { .opcode = op, .app_ctx = htobe32(app_ctx), .tag = htobe64(tag) };

	memcpy(b->data, &h, sizeof(h));
}

/* The client sends @len bytes of @b and sees its send complete. */
static bool tm_send(struct tm_pair *t, struct buf *b, size_t len, uint64_t wr_id)
{
	struct ibv_sge s = sge_of(b, 0, len);
	struct ibv_send_wr wr = wr_send(wr_id, &s, 1);

	if (post(t->client, &wr))
		return false;
	return expect_wc(t->client->scq, wr_id, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "client send");
}

static void tm_caps(void)
{
	struct ibv_device_attr_ex a;
	struct ibv_srq *plain;
	struct ibv_cq_ex *cq;
	struct ibv_ops_wr wr = { .opcode = IBV_WR_TAG_SYNC };
	struct ibv_ops_wr *bad;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &a);
	if (ret) {
		t_fail("ibv_query_device_ex: %s", strerror(ret));
		return;
	}
	t_check(a.tm_caps.flags == IBV_TM_CAP_RC && a.tm_caps.max_num_tags == 1024 &&
		a.tm_caps.max_sge == STAG_TM_MAX_SGE && a.tm_caps.max_rndv_hdr_size == 64 &&
		a.tm_caps.max_ops == 1024,
		"the device's tag matching caps: flags %#x tags %u sge %u rndv %u ops %u",
		a.tm_caps.flags, a.tm_caps.max_num_tags, a.tm_caps.max_sge,
		a.tm_caps.max_rndv_hdr_size, a.tm_caps.max_ops);

	cq = tm_cq_new();
	if (!cq)
		return;
	errno = 0;
	t_check(!tm_srq_try(ibv_cq_ex_to_cq(cq), 1025) && errno == EINVAL,
		"a tag matching SRQ of 1025 tags: %s, expected EINVAL", strerror(errno));
	errno = 0;
	t_check(!tm_srq_try(ibv_cq_ex_to_cq(cq), 0) && errno == EINVAL,
		"a tag matching SRQ of no tags: %s, expected EINVAL", strerror(errno));
	t_check(tm_srq_try(ibv_cq_ex_to_cq(cq), 1024),
		"a tag matching SRQ of 1024 tags: %s", strerror(errno));

	/* An SRQ without a tag list takes no list operations. */
	plain = srq_new(DEPTH);
	if (!plain)
		return;
	bad = NULL;
	ret = ibv_post_srq_ops(plain, &wr, &bad);
	t_check(ret == EINVAL && bad == &wr, "ibv_post_srq_ops on a basic SRQ: %s (%d)",
		strerror(ret), ret);
}

static void tm_eager(void)
{
	struct buf *tagged[3], *plain, *msg;
	struct ibv_sge s;
	struct tm_wc w;
	uint32_t h[3];
	struct tm_pair t;
	int i;

	if (!tm_new(&t, 16, LW | RR))
		return;
	msg = buf_new(4096, LW);
	plain = buf_new(4096, LW);
	for (i = 0; i < 3; i++)
		tagged[i] = buf_new(1024, LW);
	if (!msg || !plain || !tagged[2])
		return;
	s = sge_of(plain, 0, 4096);
	if (post_srq(t.srq, 0x91a1, &s))
		return;
	for (i = 0; i < 3; i++) {
		s = sge_of(tagged[i], 0, 1024);
		h[i] = tm_add(&t, 0x100 + i, ALL, 0x700 + i, &s, 1);
	}
	t_check(h[0] != h[1] && h[1] != h[2] && h[0] != h[2], "handles %#x %#x %#x not distinct",
		h[0], h[1], h[2]);

	/* Tag 0x101 matches the second buffer: the 1024 bytes after the header, no more. */
	fill(msg->data, 4096, 7);
	put_tmh(msg, IBV_TMH_EAGER, 0x101, 0xc0ffee);
	if (!tm_send(&t, msg, TMH + 1024, 1))
		return;
	if (tm_expect(&t, 0x701, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
		      IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 0x101, &w, "matched EAGER")) {
		t_check(w.byte_len == 1024 && w.priv == 0xc0ffee &&
			w.qp_num == t.server->qp->qp_num,
			"matched EAGER: byte_len %u priv %#x qp %u", w.byte_len, w.priv, w.qp_num);
	}
	expect_bytes(tagged[1]->data, msg->data + TMH, 1024, "the tagged buffer");
	expect_guards(tagged[1], "the tagged buffer");
	expect_blank(tagged[0], "the first tagged buffer");
	expect_blank(tagged[2], "the third tagged buffer");
	expect_blank(plain, "the plain receive");

	/* Its handle names nothing now: a DEL of it fails, always completing. */
	t_check(!tm_del_post(&t, h[1], 0xde1), "DEL of a consumed tag was refused");
	tm_expect(&t, 0xde1, IBV_WC_TM_ERR, IBV_WC_TM_DEL, 0, 0, NULL, "DEL of a consumed tag");
	/* Tag 0x100 deleted: its message is unexpected, whole in the plain receive. */
	t_check(!tm_del_post(&t, h[0], 0xde0), "DEL of a posted tag was refused");
	tm_expect(&t, 0xde0, IBV_WC_SUCCESS, IBV_WC_TM_DEL, 0, 0, NULL, "DEL of a posted tag");
	put_tmh(msg, IBV_TMH_EAGER, 0x100, 1);
	if (!tm_send(&t, msg, 300, 2))
		return;
	if (tm_expect(&t, 0x91a1, IBV_WC_SUCCESS, IBV_WC_TM_RECV, 0, 0, &w, "unexpected EAGER"))
		t_check(w.byte_len == 300, "unexpected EAGER: byte_len %u, expected 300",
			w.byte_len);
	expect_bytes(plain->data, msg->data, 300, "the plain receive");
	expect_guards(plain, "the plain receive");
	expect_blank(tagged[0], "the deleted tag's buffer");
	tm_expect_none(&t, "after the messages");
}

/* The first posted entry whose mask takes the tag wins; an oversize message is the QP's error. */
static void tm_order(void)
{
	struct buf *a, *b, *msg;
	struct ibv_sge s;
	struct tm_pair t;

	if (!tm_new(&t, 16, LW | RR))
		return;
	a = buf_new(256, LW);
	b = buf_new(256, LW);
	msg = buf_new(512, LW);
	if (!a || !b || !msg)
		return;
	s = sge_of(a, 0, 256);
	tm_add(&t, 0x100, 0xf00, 0xa, &s, 1);
	s = sge_of(b, 0, 256);
	tm_add(&t, 0x1ab, 0xfff, 0xb, &s, 1);
	/* An entry's tag is compared as it is: bits outside its mask never match. */
	s = sge_of(b, 0, 256);
	tm_add(&t, 0x1ab, 0xf00, 0xc, &s, 1);
	fill(msg->data, 512, 3);
	put_tmh(msg, IBV_TMH_EAGER, 0x1ab, 0);
	if (!tm_send(&t, msg, TMH + 100, 1))
		return;
	tm_expect(&t, 0xa, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID,
		  0x1ab, NULL, "the first entry posted");
	if (!tm_send(&t, msg, TMH + 100, 2))
		return;
	tm_expect(&t, 0xb, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID,
		  0x1ab, NULL, "the second entry posted");
	expect_bytes(a->data, msg->data + TMH, 100, "the first buffer");
	expect_bytes(b->data, msg->data + TMH, 100, "the second buffer");

	/* One byte more than the buffer: LOC_LEN_ERR, the server QP in error. */
	s = sge_of(a, 0, 256);
	tm_add(&t, 0x200, ALL, 0xd, &s, 1);
	fill(a->data, 256, BLANK);
	put_tmh(msg, IBV_TMH_EAGER, 0x200, 0);
	s = sge_of(msg, 0, TMH + 257);
	{
		struct ibv_send_wr wr = wr_send(3, &s, 1);

		if (post(t.client, &wr))
			return;
	}
	expect_wc(t.client->scq, 3, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND, NULL, "oversize send");
	tm_expect(&t, 0xd, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 0, NULL, "oversize EAGER");
	expect_state(t.server->qp, IBV_QPS_ERR, "the server after an oversize EAGER");
	expect_blank(a, "the buffer an oversize EAGER matched");
	expect_guards(a, "the buffer an oversize EAGER matched");
}

/* An unexpected message stops matching until a SYNC says software saw it. */
static void tm_unexpected(void)
{
	struct buf *tagged, *plain[2], *msg;
	struct ibv_ops_wr wr;
	struct ibv_sge s;
	struct tm_pair t;
	int i;

	if (!tm_new(&t, 16, LW | RR))
		return;
	tagged = buf_new(256, LW);
	msg = buf_new(256, LW);
	for (i = 0; i < 2; i++)
		plain[i] = buf_new(256, LW);
	if (!tagged || !msg || !plain[1])
		return;
	for (i = 0; i < 2; i++) {
		s = sge_of(plain[i], 0, 256);
		if (post_srq(t.srq, 0x90 + i, &s))
			return;
	}
	s = sge_of(tagged, 0, 256);
	tm_add(&t, 7, ALL, 0x77, &s, 1);
	fill(msg->data, 256, 11);
	put_tmh(msg, IBV_TMH_EAGER, 8, 0);
	if (!tm_send(&t, msg, 64, 1))
		return;
	tm_expect(&t, 0x90, IBV_WC_SUCCESS, IBV_WC_TM_RECV, 0, 0, NULL, "tag 8, unexpected");
	/* Tag 7 is posted, but software has not seen the unexpected message yet. */
	put_tmh(msg, IBV_TMH_EAGER, 7, 0);
	if (!tm_send(&t, msg, 64, 2))
		return;
	tm_expect(&t, 0x91, IBV_WC_SUCCESS, IBV_WC_TM_RECV, 0, 0, NULL,
		  "tag 7 while out of sync");
	expect_bytes(plain[1]->data, msg->data, 64, "tag 7's message, whole");
	expect_blank(tagged, "tag 7's buffer while out of sync");

	/* An ADD with a stale count is done, and asks for a SYNC. */
	s = sge_of(tagged, 0, 256);
	wr = (struct ibv_ops_wr) {
		.wr_id = 0xadd, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_SIGNALED,
		.tm = { .unexpected_cnt = 1,
			.add = { .recv_wr_id = 0x78, .sg_list = &s, .num_sge = 1, .tag = 9,
				 .mask = ALL } },
	};
	t_check(!tm_op(&t, &wr), "ADD with a stale count was refused");
	tm_expect(&t, 0xadd, IBV_WC_SUCCESS, IBV_WC_TM_ADD, IBV_WC_TM_SYNC_REQ, 0, NULL,
		  "ADD with a stale count");
	/* A SYNC with a count still short leaves matching off. */
	t.unexpected = 1;
	wr = (struct ibv_ops_wr) {
		.wr_id = 0x5, .opcode = IBV_WR_TAG_SYNC,
		.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, .tm = { .unexpected_cnt = 1 },
	};
	t_check(!tm_op(&t, &wr), "SYNC was refused");
	tm_expect(&t, 0x5, IBV_WC_SUCCESS, IBV_WC_TM_SYNC, IBV_WC_TM_SYNC_REQ, 0, NULL,
		  "a SYNC one short");
	t.unexpected = 2;
	tm_sync(&t);
	if (!tm_send(&t, msg, 64, 3))
		return;
	tm_expect(&t, 0x77, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID,
		  7, NULL, "tag 7 in sync");
	expect_bytes(tagged->data, msg->data + TMH, 64 - TMH, "tag 7's buffer");
	tm_expect_none(&t, "after the messages");
}

/* NO_TAG, FIN, an unknown opcode and a message shorter than a header: whole, not unexpected. */
static void tm_no_tag(void)
{
	static const struct { uint8_t op; size_t len; } rows[] = {
		{ IBV_TMH_NO_TAG, 64 }, { IBV_TMH_FIN, 64 }, { 7, 64 }, { IBV_TMH_EAGER, TMH - 1 },
		{ IBV_TMH_EAGER, 0 },
	};
	struct buf *tagged, *plain, *msg;
	struct ibv_sge s;
	struct tm_wc w;
	struct tm_pair t;
	unsigned int i;

	if (!tm_new(&t, 16, LW | RR))
		return;
	tagged = buf_new(256, LW);
	plain = buf_new(256, LW);
	msg = buf_new(256, LW);
	if (!tagged || !plain || !msg)
		return;
	s = sge_of(tagged, 0, 256);
	tm_add(&t, 5, ALL, 0x55, &s, 1);
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		fill(plain->data, 256, BLANK);
		fill(msg->data, 256, 20 + i);
		if (rows[i].len >= (size_t)TMH)
			put_tmh(msg, rows[i].op, 5, 0);
		s = sge_of(plain, 0, 256);
		if (post_srq(t.srq, 0x100 + i, &s) || !tm_send(&t, msg, rows[i].len, i))
			return;
		if (tm_expect(&t, 0x100 + i, IBV_WC_SUCCESS, IBV_WC_TM_NO_TAG, 0, 0, &w, "no tag"))
			t_check(w.byte_len == rows[i].len, "row %u: byte_len %u, expected %zu", i,
				w.byte_len, rows[i].len);
		expect_bytes(plain->data, msg->data, rows[i].len, "a message without a tag");
		expect_guards(plain, "a message without a tag");
	}
	/* None of them was unexpected: tag 5 still matches without a SYNC. */
	put_tmh(msg, IBV_TMH_EAGER, 5, 0);
	if (!tm_send(&t, msg, TMH + 8, 9))
		return;
	tm_expect(&t, 0x55, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID,
		  5, NULL, "tag 5 after messages without tags");
	expect_blank(plain, "the plain receive");
}

/*
 * A SEND with Invalidate is never matched, whatever its header says: it
 * lands whole in a plain receive (TM_NO_TAG), the window it names is
 * invalidated, and the tag it names stays posted. Before the fix it took
 * the tagged buffer and its invalidation was skipped.
 */
static void tm_send_inv(void)
{
	struct buf *tagged, *plain, *msg, *win;
	struct ibv_send_wr wr;
	struct ibv_mw *mw;
	struct ibv_sge s;
	struct tm_wc w;
	struct tm_pair t;
	uint32_t rkey;

	if (!tm_new(&t, 16, LW | RR))
		return;
	tagged = buf_new(256, LW);
	plain = buf_new(256, LW);
	msg = buf_new(256, LW);
	win = buf_new(256, LW | RW | IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!tagged || !plain || !msg || !win || !mw) {
		t_check(mw, "ibv_alloc_mw: %s", strerror(errno));
		return;
	}
	/* The server binds a type 2 window for the client to invalidate. */
	rkey = ibv_inc_rkey(mw->rkey);
	wr = (struct ibv_send_wr) {
		.wr_id = 0xb1, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { .mr = win->mr, .addr = (uintptr_t)win->data,
					    .length = 64, .mw_access_flags = RW } },
	};
	if (post(t.server, &wr) ||
	    !expect_wc(t.server->scq, 0xb1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL, "the bind"))
		goto out;
	s = sge_of(plain, 0, 256);
	if (post_srq(t.srq, 0x90, &s))
		goto out;
	s = sge_of(tagged, 0, 256);
	tm_add(&t, 5, ALL, 0x55, &s, 1);
	fill(msg->data, 256, 9);
	put_tmh(msg, IBV_TMH_EAGER, 5, 0);
	s = sge_of(msg, 0, 100);
	wr = wr_send(1, &s, 1);
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.invalidate_rkey = rkey;
	if (post(t.client, &wr) ||
	    !expect_wc(t.client->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, NULL, "SEND_WITH_INV"))
		goto out;
	if (tm_expect(&t, 0x90, IBV_WC_SUCCESS, IBV_WC_TM_NO_TAG, 0, 0, &w, "SEND_WITH_INV"))
		t_check(w.byte_len == 100 && (w.flags & IBV_WC_WITH_INV),
			"SEND_WITH_INV: byte_len %u flags %#x", w.byte_len, w.flags);
	expect_bytes(plain->data, msg->data, 100, "SEND_WITH_INV's message, whole");
	expect_blank(tagged, "the tagged buffer");
	/* The tag is still there. */
	if (tm_send(&t, msg, 100, 2))
		tm_expect(&t, 0x55, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
			  IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 5, NULL, "tag 5 after it");
	/* The window is gone: a WRITE through it is refused. */
	s = sge_of(msg, 0, 8);
	wr = wr_send(3, &s, 1);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)win->data;
	wr.wr.rdma.rkey = rkey;
	if (!post(t.client, &wr))
		expect_wc(t.client->scq, 3, IBV_WC_REM_ACCESS_ERR, -1, NULL,
			  "a WRITE through the invalidated window");
	expect_blank(win, "the invalidated window's bytes");
out:
	t_check(!ibv_dealloc_mw(mw), "ibv_dealloc_mw: %s", strerror(errno));
}

/* The RNDV message: TMH, then the RVH naming @len bytes of @src at @off. */
static void put_rndv(struct buf *hdr, uint64_t tag, uint32_t app_ctx, const struct buf *src,
		     size_t off, uint32_t rkey, uint32_t len)
{
	struct ibv_rvh r = {
		.va = htobe64((uintptr_t)src->data + off),
		.rkey = htobe32(rkey),
		.len = htobe32(len),
	};

	put_tmh(hdr, IBV_TMH_RNDV, tag, app_ctx);
	memcpy(hdr->data + TMH, &r, sizeof(r));
}

/* A rendezvous's parts: the tagged buffer, the client's data, its header, the FIN's buffer. */
struct rndv {
	struct buf *tagged, *data, *hdr, *fin;
};

/* The pair, the parts, and a receive of the client's for the FIN. */
static bool rndv_new(struct tm_pair *t, struct rndv *r, size_t tagged_len, int client_access)
{
	struct ibv_sge s;

	if (!tm_new(t, 16, client_access))
		return false;
	r->tagged = buf_new(tagged_len, LW);
	r->data = buf_new(8192, LW | RR);
	r->hdr = buf_new(64, LW);
	r->fin = buf_new(64, LW);
	if (!r->tagged || !r->data || !r->hdr || !r->fin)
		return false;
	s = sge_of(r->fin, 0, 64);
	return !post_recv(t->client, 0xf1, &s, 1);
}

static void tm_rndv(void)
{
	struct buf *tagged, *data, *hdr, *fin;
	struct ibv_tmh got;
	struct ibv_sge s;
	struct tm_wc w;
	struct tm_pair t;
	struct rndv r;

	if (!rndv_new(&t, &r, 8192, LW | RR))
		return;
	tagged = r.tagged;
	data = r.data;
	hdr = r.hdr;
	fin = r.fin;
	s = sge_of(tagged, 0, 8192);
	tm_add(&t, 0x42, ALL, 0x4242, &s, 1);
	xfill(data->data, 0, 8192, 99);
	put_rndv(hdr, 0x42, 0xabcd, data, 0, data->mr->rkey, 8192);
	if (!tm_send(&t, hdr, TMH + RVH, 1))
		return;
	tm_expect(&t, 0x4242, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH, 0x42, &w,
		  "the rendezvous's match");
	t_check(w.priv == 0xabcd, "the match's priv %#x, expected 0xabcd", w.priv);
	if (stag_wire()) {
		/* On the wire stag reads nothing: the RVH is software's, and no FIN comes. */
		if (tm_expect(&t, 0x4242, IBV_WC_TM_RNDV_INCOMPLETE, IBV_WC_TM_RECV, 0, 0x42, &w,
			      "a rendezvous on the wire"))
			t_check(w.byte_len == RVH, "its byte_len %u, expected %d", w.byte_len, RVH);
		expect_bytes(tagged->data, hdr->data + TMH, RVH, "the RVH, for software");
		expect_none(t.client->rcq, QUIET_MS, "a FIN for a rendezvous not read");
		expect_state(t.server->qp, IBV_QPS_RTS, "the server after a rendezvous");
		return;
	}
	if (tm_expect(&t, 0x4242, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_DATA_VALID, 0, &w,
		      "the rendezvous's data"))
		t_check(w.byte_len == 8192, "the data's byte_len %u, expected 8192", w.byte_len);
	expect_bytes(tagged->data, data->data, 8192, "the data read");
	expect_guards(tagged, "the tagged buffer");
	/* The FIN: the header alone, after the send's completion, on the client's queue. */
	if (expect_wc(t.client->rcq, 0xf1, IBV_WC_SUCCESS, IBV_WC_RECV, NULL, "the FIN")) {
		memcpy(&got, fin->data, sizeof(got));
		t_check(got.opcode == IBV_TMH_FIN && be32toh(got.app_ctx) == 0xabcd &&
			be64toh(got.tag) == 0x42, "the FIN: opcode %u app_ctx %#x tag %#llx",
			got.opcode, be32toh(got.app_ctx), (ull)be64toh(got.tag));
		expect_guards(fin, "the FIN's buffer");
	}
	expect_state(t.server->qp, IBV_QPS_RTS, "the server after a rendezvous");
	tm_expect_none(&t, "after the rendezvous");
}

/* A read the gate refuses: REM_ACCESS_ERR, the server in error, no FIN. */
static void tm_rndv_refused(void)
{
	enum { BAD_RKEY, PAST_END, NO_QP_READ, NO_MR_READ };
	static const char *const why[] = { "a bad rkey", "one byte past the region",
		"a client QP without remote read", "a region without remote read" };
	struct ibv_mr *exact;
	struct ibv_sge s;
	struct tm_pair t;
	struct rndv r;
	int i;

	if (stag_wire()) {
		case_skip("on the wire stag leaves a rendezvous to software: it reads nothing");
		return;
	}
	for (i = BAD_RKEY; i <= NO_MR_READ && !t_failing(); i++) {
		if (!rndv_new(&t, &r, 4096, i == NO_QP_READ ? LW | RW : LW | RR))
			return;
		/* 4096 bytes of the data alone: one byte past them is past the region. */
		exact = ibv_reg_mr(pd, r.data->data, 4096, i == NO_MR_READ ? LW | RW : LW | RR);
		if (!exact) {
			t_fail("ibv_reg_mr: %s", strerror(errno));
			return;
		}
		track(K_MR, exact, 0);
		s = sge_of(r.tagged, 0, 4096);
		tm_add(&t, 1, ALL, 0x11, &s, 1);
		if (i == BAD_RKEY)
			put_rndv(r.hdr, 1, 0, r.data, 0, exact->rkey ^ 0x80, 4096);
		else if (i == PAST_END)
			put_rndv(r.hdr, 1, 0, r.data, 1, exact->rkey, 4096);
		else
			put_rndv(r.hdr, 1, 0, r.data, 0, exact->rkey, 4096);
		if (!tm_send(&t, r.hdr, TMH + RVH, 1))
			return;
		tm_expect(&t, 0x11, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH, 1, NULL,
			  why[i]);
		tm_expect(&t, 0x11, IBV_WC_REM_ACCESS_ERR, IBV_WC_TM_RECV, 0, 0, NULL, why[i]);
		expect_state(t.server->qp, IBV_QPS_ERR, why[i]);
		expect_blank(r.tagged, why[i]);
		expect_guards(r.tagged, why[i]);
		expect_none(t.client->rcq, QUIET_MS, why[i]);
	}
}

/* A rendezvous the buffer cannot take is left to software, with its RVH. */
static void tm_rndv_incomplete(void)
{
	struct buf *tagged, *data, *hdr;
	struct ibv_sge s;
	struct tm_wc w;
	struct tm_pair t;
	struct rndv r;

	if (!rndv_new(&t, &r, 1024, LW | RR))
		return;
	tagged = r.tagged;
	data = r.data;
	hdr = r.hdr;
	/* One byte more than the buffer holds. */
	s = sge_of(tagged, 0, 1024);
	tm_add(&t, 3, ALL, 0x33, &s, 1);
	fill(hdr->data, 64, 5);
	put_rndv(hdr, 3, 0x3c, data, 0, data->mr->rkey, 1025);
	if (!tm_send(&t, hdr, 64, 1))
		return;
	tm_expect(&t, 0x33, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH, 3, NULL, "match");
	if (tm_expect(&t, 0x33, IBV_WC_TM_RNDV_INCOMPLETE, IBV_WC_TM_RECV, 0, 3, &w, "too long"))
		t_check(w.byte_len == 64 - TMH && w.priv == 0x3c, "too long: byte_len %u priv %#x",
			w.byte_len, w.priv);
	expect_bytes(tagged->data, hdr->data + TMH, 64 - TMH, "the RVH and what follows it");
	/* A header alone, with no RVH: nothing to place. */
	tm_add(&t, 4, ALL, 0x44, &s, 1);
	put_tmh(hdr, IBV_TMH_RNDV, 4, 0);
	if (!tm_send(&t, hdr, TMH, 2))
		return;
	tm_expect(&t, 0x44, IBV_WC_SUCCESS, IBV_WC_TM_RECV, IBV_WC_TM_MATCH, 4, NULL, "no RVH");
	if (tm_expect(&t, 0x44, IBV_WC_TM_RNDV_INCOMPLETE, IBV_WC_TM_RECV, 0, 4, &w, "no RVH"))
		t_check(w.byte_len == 0, "no RVH: byte_len %u", w.byte_len);
	expect_state(t.server->qp, IBV_QPS_RTS, "the server after rendezvous left to software");
	expect_none(t.client->rcq, QUIET_MS, "a FIN for a rendezvous not read");
	expect_guards(tagged, "the tagged buffer");
}

/* Operations refused as posted change nothing; a full list; stale handles. */
static void tm_ops_refused(void)
{
	struct ibv_ops_wr wr, wr2;
	struct buf *b, *msg;
	struct ibv_sge s[STAG_TM_MAX_SGE + 1];
	uint32_t h[4], old;
	int i, ret;
	struct tm_pair t;

	if (!tm_new(&t, 4, LW | RR))
		return;
	b = buf_new(256, LW);
	msg = buf_new(256, LW);
	if (!b || !msg)
		return;
	for (i = 0; i <= STAG_TM_MAX_SGE; i++)
		s[i] = sge_of(b, i * 32, 32);

	wr = (struct ibv_ops_wr) { .wr_id = 1, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_SIGNALED,
		.tm.add = { .sg_list = s, .num_sge = STAG_TM_MAX_SGE + 1, .mask = ALL } };
	ret = tm_op(&t, &wr);
	t_check(ret == EINVAL, "ADD of %d elements: %s", STAG_TM_MAX_SGE + 1, strerror(ret));
	wr.tm.add.num_sge = 1;
	wr.opcode = 9;
	ret = tm_op(&t, &wr);
	t_check(ret == EINVAL, "opcode 9: %s", strerror(ret));
	wr.opcode = IBV_WR_TAG_ADD;
	wr.flags = 1 << 2;
	ret = tm_op(&t, &wr);
	t_check(ret == EINVAL, "flag 1 << 2: %s", strerror(ret));
	wr = (struct ibv_ops_wr) { .wr_id = 2, .opcode = IBV_WR_TAG_DEL, .tm.handle = 4 };
	ret = tm_op(&t, &wr);
	t_check(ret == EINVAL, "DEL of handle 4 of a list of 4: %s", strerror(ret));
	/* A list stops at the first it refuses, the ones before it done. */
	wr = (struct ibv_ops_wr) { .wr_id = 3, .opcode = IBV_WR_TAG_SYNC, .next = &wr2,
		.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC };
	wr2 = (struct ibv_ops_wr) { .wr_id = 4, .opcode = 9 };
	{
		struct ibv_ops_wr *bad = NULL;

		ret = ibv_post_srq_ops(t.srq, &wr, &bad);
		t_check(ret == EINVAL && bad == &wr2, "a list of SYNC, opcode 9: %s, bad %s",
			strerror(ret), bad == &wr ? "the SYNC" : bad == &wr2 ? "the second" : "?");
	}
	tm_expect(&t, 3, IBV_WC_SUCCESS, IBV_WC_TM_SYNC, 0, 0, NULL, "the SYNC before a refusal");
	tm_expect_none(&t, "after refused operations");

	/* A DEL naming an entry never added completes in error even unsignaled. */
	wr = (struct ibv_ops_wr) { .wr_id = 5, .opcode = IBV_WR_TAG_DEL, .tm.handle = 2 };
	t_check(!tm_op(&t, &wr), "DEL of an entry never added was refused");
	tm_expect(&t, 5, IBV_WC_TM_ERR, IBV_WC_TM_DEL, 0, 0, NULL, "DEL of an entry never added");

	/* Four tags fill the list: a fifth is ENOMEM and takes nothing. */
	for (i = 0; i < 4; i++)
		h[i] = tm_add(&t, 0x10 + i, ALL, 0x20 + i, &s[0], 1);
	wr = (struct ibv_ops_wr) { .wr_id = 6, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_SIGNALED,
		.tm.add = { .sg_list = s, .num_sge = 1, .tag = 0x99, .mask = ALL } };
	ret = tm_op(&t, &wr);
	t_check(ret == ENOMEM, "ADD to a full list: %s", strerror(ret));
	tm_expect_none(&t, "after an ADD to a full list");

	/* A handle freed and given out again: the old one names nothing. */
	old = h[2];
	t_check(!tm_del_post(&t, h[2], 7), "DEL was refused");
	tm_expect(&t, 7, IBV_WC_SUCCESS, IBV_WC_TM_DEL, 0, 0, NULL, "DEL");
	for (i = 0; i < 3; i++) {
		t_check(!tm_del_post(&t, h[i == 2 ? 3 : i], 8), "DEL was refused");
		tm_expect(&t, 8, IBV_WC_SUCCESS, IBV_WC_TM_DEL, 0, 0, NULL, "DEL");
	}
	h[0] = tm_add(&t, 0x77, ALL, 0x70, &s[0], 1);
	for (i = 1; i < 4 && (h[i - 1] & 0xffff) != (old & 0xffff); i++)
		h[i] = tm_add(&t, 0x77, ALL, 0x70 + i, &s[0], 1);
	t_check(!tm_del_post(&t, old, 9), "DEL of a stale handle was refused");
	tm_expect(&t, 9, IBV_WC_TM_ERR, IBV_WC_TM_DEL, 0, 0, NULL, "DEL of a stale handle");
	/* The entry now in its place still matches. */
	fill(msg->data, 256, 1);
	put_tmh(msg, IBV_TMH_EAGER, 0x77, 0);
	if (tm_send(&t, msg, TMH + 32, 1))
		tm_expect(&t, 0x70, IBV_WC_SUCCESS, IBV_WC_TM_RECV,
			  IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 0x77, NULL, "after a stale DEL");
}

struct srq_ops_ioctl {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[3];
};

/* STAG_METHOD_SRQ_OPS written by hand, on @fd, naming SRQ handle @handle. */
static int raw_op(int fd, uint32_t handle, const struct stag_srq_op *op, size_t len,
		  uint32_t *out)
{
	struct srq_ops_ioctl c = {
		.hdr = { .length = sizeof(c), .object_id = UVERBS_OBJECT_SRQ,
			 .method_id = STAG_METHOD_SRQ_OPS, .num_attrs = 3 },
		.attrs = {
			{ .attr_id = STAG_ATTR_SRQ_OPS_HANDLE, .flags = UVERBS_ATTR_F_MANDATORY,
			  .data = handle },
			{ .attr_id = STAG_ATTR_SRQ_OPS_OP, .len = len,
			  .flags = UVERBS_ATTR_F_MANDATORY, .data = (uintptr_t)op },
			{ .attr_id = STAG_ATTR_SRQ_OPS_RESP_HANDLE, .len = sizeof(*out),
			  .flags = UVERBS_ATTR_F_MANDATORY, .data = (uintptr_t)out },
		},
	};

	return ioctl(fd, RDMA_VERBS_IOCTL, &c) ? errno : 0;
}

/* Hand-written operations: reserved bytes, short ones, another context naming the SRQ. */
static void tm_ops_hostile(void)
{
	struct stag_srq_op op = { .opcode = STAG_TM_OP_SYNC, .flags = STAG_TM_OPS_SIGNALED };
	struct ibv_context *other;
	struct ibv_device **list;
	uint32_t out = 0;
	struct tm_pair t;
	int ret, n;

	if (!tm_new(&t, 4, LW | RR))
		return;
	ret = raw_op(ctx->cmd_fd, t.srq->handle, &op, sizeof(op), &out);
	t_check(!ret, "a SYNC written by hand: %s", strerror(ret));
	tm_expect(&t, 0, IBV_WC_SUCCESS, IBV_WC_TM_SYNC, 0, 0, NULL, "a SYNC written by hand");
	op.reserved = 1;
	ret = raw_op(ctx->cmd_fd, t.srq->handle, &op, sizeof(op), &out);
	t_check(ret == EINVAL, "reserved bytes set: %s", strerror(ret));
	op.reserved = 0;
	ret = raw_op(ctx->cmd_fd, t.srq->handle, &op, sizeof(op) - 8, &out);
	t_check(ret == EINVAL, "an operation 8 bytes short: %s", strerror(ret));
	ret = raw_op(ctx->cmd_fd, t.srq->handle + 1000, &op, sizeof(op), &out);
	t_check(ret == ENOENT, "an SRQ handle naming none: %s", strerror(ret));
	op.opcode = STAG_TM_OP_ADD;
	op.num_sge = 0xffffffff;
	ret = raw_op(ctx->cmd_fd, t.srq->handle, &op, sizeof(op), &out);
	t_check(ret == EINVAL, "an ADD of 2^32 - 1 elements: %s", strerror(ret));

	/* Another context, as another process would have, cannot name it. */
	list = ibv_get_device_list(&n);
	other = list && n ? ibv_open_device(list[0]) : NULL;
	for (ret = 0; list && ret < n && strcmp(ibv_get_device_name(list[ret]),
						ibv_get_device_name(ctx->device)); ret++)
		;
	if (other && ret < n && ret != 0) {
		ibv_close_device(other);
		other = ibv_open_device(list[ret]);
	}
	if (list)
		ibv_free_device_list(list);
	if (!other) {
		t_fail("a second context: %s", strerror(errno));
		return;
	}
	op.opcode = STAG_TM_OP_SYNC;
	op.num_sge = 0;
	ret = raw_op(other->cmd_fd, t.srq->handle, &op, sizeof(op), &out);
	t_check(ret == ENOENT, "another context naming the SRQ's handle: %s", strerror(ret));
	ibv_close_device(other);
	tm_expect_none(&t, "after refused hand-written operations");
}

#define RACE_N		200

struct race {
	struct tm_pair *t;
	uint32_t handle;
	pthread_barrier_t *go;
	int ret;
};

static void *race_del(void *arg)
{
	struct race *r = arg;

	pthread_barrier_wait(r->go);
	r->ret = tm_del_post(r->t, r->handle, 0xde1);
	return NULL;
}

/*
 * A DEL racing the message that matches its tag: exactly one of them has
 * the entry. Either the DEL succeeds and the message is unexpected (in a
 * plain receive, whole), or the message matches and the DEL fails with
 * TM_ERR; never both, never neither.
 */
static void tm_race_del(void)
{
	struct buf *tagged, *plain, *msg;
	int matched = 0, deleted = 0, i;
	bool need_plain = true;
	pthread_barrier_t go;
	struct ibv_sge s;
	struct tm_wc w[2];
	struct race r;
	pthread_t th;
	struct tm_pair t;

	if (!tm_new(&t, 16, LW | RR))
		return;
	tagged = buf_new(256, LW);
	plain = buf_new(256, LW);
	msg = buf_new(256, LW);
	if (!tagged || !plain || !msg)
		return;
	r.t = &t;
	r.go = &go;
	fill(msg->data, 256, 4);
	for (i = 0; i < RACE_N && !t_failing(); i++) {
		bool del_won;

		/* One plain receive waits, for the message that loses. */
		s = sge_of(plain, 0, 256);
		if (need_plain && post_srq(t.srq, 0x5000 + i, &s))
			return;
		need_plain = false;
		s = sge_of(tagged, 0, 256);
		r.handle = tm_add(&t, i, ALL, 0x6000 + i, &s, 1);
		put_tmh(msg, IBV_TMH_EAGER, i, 0);
		pthread_barrier_init(&go, NULL, 2);
		pthread_create(&th, NULL, race_del, &r);
		pthread_barrier_wait(&go);
		tm_send(&t, msg, 100, i);
		pthread_join(th, NULL);
		pthread_barrier_destroy(&go);
		t_check(!r.ret, "round %d: DEL refused: %s", i, strerror(r.ret));
		if (!tm_poll(&t, &w[0]) || !tm_poll(&t, &w[1])) {
			t_fail("round %d: two completions did not come", i);
			break;
		}
		/* The two completions come in either order. */
		if (w[0].opcode != IBV_WC_TM_DEL) {
			struct tm_wc x = w[0];

			w[0] = w[1];
			w[1] = x;
		}
		del_won = w[0].status == IBV_WC_SUCCESS;
		t_check(w[0].opcode == IBV_WC_TM_DEL && w[0].wr_id == 0xde1 &&
			(w[0].status == IBV_WC_SUCCESS || w[0].status == IBV_WC_TM_ERR),
			"round %d: the DEL's completion: opcode %d %s", i, w[0].opcode,
			ibv_wc_status_str(w[0].status));
		if (del_won) {
			t_check(w[1].wr_id >= 0x5000u && w[1].wr_id <= 0x5000u + i &&
				w[1].flags == 0 && w[1].tag == 0,
				"round %d: the DEL won, the message took %#llx flags %#x", i,
				(ull)w[1].wr_id, w[1].flags);
			need_plain = true;
			expect_bytes(plain->data, msg->data, 100, "the unexpected message");
			t.unexpected++;
			tm_sync(&t);
			deleted++;
		} else {
			t_check(w[1].wr_id == 0x6000u + i && w[1].tag == (uint64_t)i &&
				(w[1].flags & IBV_WC_TM_MATCH),
				"round %d: the message won, but took %#llx tag %#llx", i,
				(ull)w[1].wr_id, (ull)w[1].tag);
			expect_bytes(tagged->data, msg->data + TMH, 100 - TMH,
				     "the matched message");
			/* Its plain receive is still there: the next round's message may use it. */
			matched++;
		}
	}
	printf("# %d rounds: the DEL won %d, the message %d\n", i, deleted, matched);
}

#define ADDERS		2
#define ADDS		120	/* both threads' completions fit the CQ */

static void *race_add(void *arg)
{
	struct race *r = arg;
	struct ibv_sge s = { .addr = 0, .length = 0, .lkey = 0 };
	uintptr_t id = r->handle;
	int i, ret;

	pthread_barrier_wait(r->go);
	for (i = 0; i < ADDS; i++) {
		struct ibv_ops_wr wr = {
			.wr_id = id << 16 | i, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_SIGNALED,
			.tm.add = { .recv_wr_id = i, .sg_list = &s, .num_sge = 1,
				    .tag = id << 16 | i, .mask = ALL },
		};
		struct ibv_ops_wr *bad;

		ret = ibv_post_srq_ops(r->t->srq, &wr, &bad);
		if (ret) {
			r->ret = ret;
			break;
		}
	}
	return NULL;
}

/* Two threads add to one list at once: every ADD completes once, every handle its own. */
static void tm_race_add(void)
{
	static uint8_t seen[ADDERS][ADDS];
	struct race r[ADDERS];
	pthread_barrier_t go;
	pthread_t th[ADDERS];
	struct tm_wc w;
	struct tm_pair t;
	int i, n;

	if (!tm_new(&t, 1024, LW | RR))
		return;
	memset(seen, 0, sizeof(seen));
	pthread_barrier_init(&go, NULL, ADDERS);
	for (i = 0; i < ADDERS; i++) {
		r[i] = (struct race) { .t = &t, .handle = i + 1, .go = &go };
		pthread_create(&th[i], NULL, race_add, &r[i]);
	}
	for (i = 0; i < ADDERS; i++) {
		pthread_join(th[i], NULL);
		t_check(!r[i].ret, "adder %d: %s", i, strerror(r[i].ret));
	}
	pthread_barrier_destroy(&go);
	for (n = 0; n < ADDERS * ADDS && tm_poll(&t, &w); n++) {
		unsigned int who = (w.wr_id >> 16) - 1, i2 = w.wr_id & 0xffff;

		if (w.status != IBV_WC_SUCCESS || w.opcode != IBV_WC_TM_ADD || who >= ADDERS ||
		    i2 >= ADDS || seen[who][i2]++) {
			t_fail("completion %d: wr_id %#llx %s opcode %d", n, (ull)w.wr_id,
			       ibv_wc_status_str(w.status), w.opcode);
			break;
		}
	}
	t_check(n == ADDERS * ADDS, "%d ADD completions, expected %d", n, ADDERS * ADDS);
	tm_expect_none(&t, "after the ADDs");
}

#define DESTROY_ROUNDS	20

struct race_ops {
	int fd;
	uint32_t handle;
	pthread_barrier_t *go;
	long done;
	int ret;
};

/* SYNC operations, unsignaled, on a handle until the kernel says it is gone. */
static void *race_ops(void *arg)
{
	struct stag_srq_op op = { .opcode = STAG_TM_OP_SYNC };
	struct race_ops *r = arg;
	uint32_t out;

	pthread_barrier_wait(r->go);
	/* EBUSY: the destroy holds the SRQ at this moment. */
	while (!(r->ret = raw_op(r->fd, r->handle, &op, sizeof(op), &out)) || r->ret == EBUSY)
		r->done += !r->ret;
	return NULL;
}

/*
 * ibv_destroy_srq() racing a thread that keeps posting list operations to
 * the SRQ by its handle: each side is refused with EBUSY while the other
 * holds the SRQ, the destroy succeeds in the end, and every operation
 * after it is refused with ENOENT, the handle gone. Nothing completes (they are
 * unsignaled), and the kernel must not touch the SRQ after it is gone
 * (the debug kernel's KASAN judges that).
 */
static void tm_race_destroy(void)
{
	long ops = 0, busy = 0;
	pthread_barrier_t go;
	struct race_ops r;
	struct tm_pair t;
	pthread_t th;
	int i, ret;

	memset(&t, 0, sizeof(t));
	t.cq = tm_cq_new();
	if (!t.cq)
		return;
	for (i = 0; i < DESTROY_ROUNDS && !t_failing(); i++) {
		struct ibv_srq *srq = tm_srq_try(ibv_cq_ex_to_cq(t.cq), 16);

		if (!srq) {
			t_fail("round %d: a tag matching SRQ: %s", i, strerror(errno));
			return;
		}
		r = (struct race_ops) { .fd = ctx->cmd_fd, .handle = srq->handle, .go = &go };
		pthread_barrier_init(&go, NULL, 2);
		pthread_create(&th, NULL, race_ops, &r);
		pthread_barrier_wait(&go);
		usleep(i * 100);
		while ((ret = ibv_destroy_srq(srq)) == EBUSY)
			busy++;
		pthread_join(th, NULL);
		pthread_barrier_destroy(&go);
		if (!ret)
			untrack(srq);
		t_check(!ret, "round %d: ibv_destroy_srq: %s", i, strerror(ret));
		t_check(r.ret == ENOENT, "round %d: an operation after the destroy: %s (%ld done)",
			i, strerror(r.ret), r.done);
		ops += r.done;
	}
	printf("# %d rounds: %ld operations done before the destroys, %ld destroys refused busy\n",
	       i, ops, busy);
	tm_expect_none(&t, "after unsignaled operations");
}

#define RESIZE_OPS	200	/* fits the CQ at either size */

struct race_resize {
	struct tm_pair *t;
	pthread_barrier_t *go;
	bool done;		/* __atomic: the resizer reads it */
	int ret;
};

static void *race_syncs(void *arg)
{
	struct race_resize *r = arg;
	int i;

	pthread_barrier_wait(r->go);
	for (i = 0; i < RESIZE_OPS && !r->ret; i++) {
		struct ibv_ops_wr wr = {
			.wr_id = i, .opcode = IBV_WR_TAG_SYNC,
			.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC,
		};
		struct ibv_ops_wr *bad;

		r->ret = ibv_post_srq_ops(r->t->srq, &wr, &bad);
		/* Spread over many resizes, each a command and a new mapping. */
		usleep(100);
	}
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The SRQ's CQ resized, again and again, while a thread posts signaled
 * list operations whose completions the kernel writes into it: every
 * completion arrives once, in order, in the tag matching slot layout,
 * whichever ring it was written to.
 */
static void tm_race_resize(void)
{
	struct race_resize r;
	pthread_barrier_t go;
	struct tm_pair t;
	int i, n = 0, ret;
	struct tm_wc w;
	pthread_t th;

	memset(&t, 0, sizeof(t));
	t.cq = tm_cq_new();
	if (!t.cq)
		return;
	t.srq = tm_srq_try(ibv_cq_ex_to_cq(t.cq), 16);
	if (!t.srq) {
		t_fail("a tag matching SRQ: %s", strerror(errno));
		return;
	}
	r = (struct race_resize) { .t = &t, .go = &go };
	pthread_barrier_init(&go, NULL, 2);
	pthread_create(&th, NULL, race_syncs, &r);
	pthread_barrier_wait(&go);
	for (i = 0; !__atomic_load_n(&r.done, __ATOMIC_ACQUIRE) || i < 4; i++) {
		ret = ibv_resize_cq(ibv_cq_ex_to_cq(t.cq), i & 1 ? 8 * DEPTH : 4 * DEPTH);
		if (ret) {
			t_fail("resize %d: %s", i, strerror(ret));
			break;
		}
	}
	pthread_join(th, NULL);
	pthread_barrier_destroy(&go);
	t_check(!r.ret, "ibv_post_srq_ops: %s", strerror(r.ret));
	for (n = 0; n < RESIZE_OPS && tm_poll(&t, &w); n++) {
		if (w.wr_id != (uint64_t)n || w.status != IBV_WC_SUCCESS ||
		    w.opcode != IBV_WC_TM_SYNC || w.tag) {
			t_fail("completion %d: wr_id %#llx %s opcode %d tag %#llx", n,
			       (ull)w.wr_id, ibv_wc_status_str(w.status), w.opcode, (ull)w.tag);
			break;
		}
	}
	t_check(n == RESIZE_OPS, "%d TM_SYNC completions, expected %d", n, RESIZE_OPS);
	printf("# %d resizes while %d operations completed\n", i, RESIZE_OPS);
	tm_expect_none(&t, "after the operations");
}

const struct qp_case tm_cases[] = {
	{ "tm_caps", tm_caps },
	{ "tm_eager", tm_eager },
	{ "tm_order", tm_order },
	{ "tm_unexpected", tm_unexpected },
	{ "tm_no_tag", tm_no_tag },
	{ "tm_send_inv", tm_send_inv },
	{ "tm_rndv", tm_rndv },
	{ "tm_rndv_refused", tm_rndv_refused },
	{ "tm_rndv_incomplete", tm_rndv_incomplete },
	{ "tm_ops_refused", tm_ops_refused },
	{ "tm_ops_hostile", tm_ops_hostile },
	{ "tm_race_del", tm_race_del },
	{ "tm_race_add", tm_race_add },
	{ "tm_race_destroy", tm_race_destroy },
	{ "tm_race_resize", tm_race_resize },
	{ NULL },
};
