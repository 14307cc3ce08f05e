// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: work queue entries and the rings they come from. A WQE is copied
 * out of its slot once and checked there; these cases feed slots the way a
 * hostile process would write them.
 */

#include <kunit/test.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "../queue.h"
#include "../wqe.h"

struct send_case {
	const char *name;
	enum ib_qp_type type;
	bool user;
	u8 opcode;
	u8 num_sge;
	u32 flags;
	u32 inline_len;
	u32 sge_len;		/* each entry's length */
	enum ib_wc_status expected;
};

#define LIM_SGE		4
#define LIM_INLINE	64

static const struct send_case send_cases[] = {
	{ "RC send", IB_QPT_RC, true, IB_WR_SEND, 2, 0, 0, 100, IB_WC_SUCCESS },
	{ "RC send, no sge", IB_QPT_RC, true, IB_WR_SEND, 0, 0, 0, 0, IB_WC_SUCCESS },
	{ "RC send, max sge", IB_QPT_RC, true, IB_WR_SEND, LIM_SGE, 0, 0, 1, IB_WC_SUCCESS },
	{ "RC send, one sge too many", IB_QPT_RC, true, IB_WR_SEND, LIM_SGE + 1, 0, 0, 1,
	  IB_WC_LOC_QP_OP_ERR },
	{ "RC send, 255 sge", IB_QPT_RC, true, IB_WR_SEND, 255, 0, 0, 1, IB_WC_LOC_QP_OP_ERR },
	{ "RC write", IB_QPT_RC, true, IB_WR_RDMA_WRITE, 1, 0, 0, 8, IB_WC_SUCCESS },
	{ "RC read", IB_QPT_RC, true, IB_WR_RDMA_READ, 1, 0, 0, 8, IB_WC_SUCCESS },
	{ "RC cmp&swap, 8 bytes", IB_QPT_RC, true, IB_WR_ATOMIC_CMP_AND_SWP, 1, 0, 0, 8,
	  IB_WC_SUCCESS },
	{ "RC fetch&add, 4 bytes", IB_QPT_RC, true, IB_WR_ATOMIC_FETCH_AND_ADD, 1, 0, 0, 4,
	  IB_WC_LOC_LEN_ERR },
	{ "RC fetch&add, 2x8 bytes", IB_QPT_RC, true, IB_WR_ATOMIC_FETCH_AND_ADD, 2, 0, 0, 8,
	  IB_WC_LOC_LEN_ERR },
	{ "RC atomic write", IB_QPT_RC, true, IB_WR_ATOMIC_WRITE, 0, 0, 0, 0, IB_WC_SUCCESS },
	{ "RC atomic write naming an sge", IB_QPT_RC, true, IB_WR_ATOMIC_WRITE, 1, 0, 0, 8,
	  IB_WC_LOC_QP_OP_ERR },
	{ "RC atomic write inline", IB_QPT_RC, true, IB_WR_ATOMIC_WRITE, 0, IB_SEND_INLINE, 8, 0,
	  IB_WC_LOC_QP_OP_ERR },
	{ "UC atomic write", IB_QPT_UC, true, IB_WR_ATOMIC_WRITE, 0, 0, 0, 0, IB_WC_LOC_QP_OP_ERR },
	{ "UD atomic write", IB_QPT_UD, true, IB_WR_ATOMIC_WRITE, 0, 0, 0, 0, IB_WC_LOC_QP_OP_ERR },
	{ "RC local inv", IB_QPT_RC, true, IB_WR_LOCAL_INV, 0, 0, 0, 0, IB_WC_SUCCESS },
	{ "RC reg_mr from user", IB_QPT_RC, true, IB_WR_REG_MR, 0, 0, 0, 0, IB_WC_LOC_QP_OP_ERR },
	{ "RC reg_mr from kernel", IB_QPT_RC, false, IB_WR_REG_MR, 0, 0, 0, 0, IB_WC_SUCCESS },
	{ "RC opcode 0xff", IB_QPT_RC, true, 0xff, 0, 0, 0, 0, IB_WC_LOC_QP_OP_ERR },
	{ "RC TSO", IB_QPT_RC, true, IB_WR_LSO, 0, 0, 0, 0, IB_WC_LOC_QP_OP_ERR },
	{ "RC unknown flag", IB_QPT_RC, true, IB_WR_SEND, 0, 0x100, 0, 0, IB_WC_LOC_QP_OP_ERR },
	{ "RC inline send", IB_QPT_RC, true, IB_WR_SEND, 0, IB_SEND_INLINE, LIM_INLINE, 0,
	  IB_WC_SUCCESS },
	{ "RC inline one byte too long", IB_QPT_RC, true, IB_WR_SEND, 0, IB_SEND_INLINE,
	  LIM_INLINE + 1, 0, IB_WC_LOC_QP_OP_ERR },
	{ "RC inline read", IB_QPT_RC, true, IB_WR_RDMA_READ, 0, IB_SEND_INLINE, 8, 0,
	  IB_WC_LOC_QP_OP_ERR },
	{ "UC write", IB_QPT_UC, true, IB_WR_RDMA_WRITE, 1, 0, 0, 8, IB_WC_SUCCESS },
	{ "UC read", IB_QPT_UC, true, IB_WR_RDMA_READ, 1, 0, 0, 8, IB_WC_LOC_QP_OP_ERR },
	{ "UC atomic", IB_QPT_UC, true, IB_WR_ATOMIC_CMP_AND_SWP, 1, 0, 0, 8,
	  IB_WC_LOC_QP_OP_ERR },
	{ "UC send with inv", IB_QPT_UC, true, IB_WR_SEND_WITH_INV, 1, 0, 0, 8,
	  IB_WC_LOC_QP_OP_ERR },
	{ "RC send with inv", IB_QPT_RC, true, IB_WR_SEND_WITH_INV, 1, 0, 0, 8, IB_WC_SUCCESS },
	{ "UD send with imm", IB_QPT_UD, true, IB_WR_SEND_WITH_IMM, 1, 0, 0, 8, IB_WC_SUCCESS },
	{ "UD write", IB_QPT_UD, true, IB_WR_RDMA_WRITE, 1, 0, 0, 8, IB_WC_LOC_QP_OP_ERR },
	{ "raw send", IB_QPT_RAW_PACKET, true, IB_WR_SEND, 1, 0, 0, 8, IB_WC_SUCCESS },
	{ "raw send with imm", IB_QPT_RAW_PACKET, true, IB_WR_SEND_WITH_IMM, 1, 0, 0, 8,
	  IB_WC_LOC_QP_OP_ERR },
	{ "raw write", IB_QPT_RAW_PACKET, true, IB_WR_RDMA_WRITE, 1, 0, 0, 8, IB_WC_LOC_QP_OP_ERR },
	{ "raw local inv", IB_QPT_RAW_PACKET, true, IB_WR_LOCAL_INV, 0, 0, 0, 0,
	  IB_WC_LOC_QP_OP_ERR },
	{ "UD send with inv", IB_QPT_UD, true, IB_WR_SEND_WITH_INV, 1, 0, 0, 8,
	  IB_WC_LOC_QP_OP_ERR },
	{ "RC 2 GiB message", IB_QPT_RC, true, IB_WR_SEND, 2, 0, 0, 0x40000000, IB_WC_SUCCESS },
	{ "RC 2 GiB + 1", IB_QPT_RC, true, IB_WR_SEND, 3, 0, 0, 0x2aaaaaab, IB_WC_LOC_LEN_ERR },
	{ "RC 4 x 4 GiB - 1", IB_QPT_RC, true, IB_WR_SEND, 4, 0, 0, U32_MAX, IB_WC_LOC_LEN_ERR },
};

static void send_case_desc(const struct send_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(send, send_cases, send_case_desc);

static u32 slot_size(void)
{
	return stag_wqe_send_slot_size(LIM_SGE, LIM_INLINE);
}

/* A slot as a process would write it, with poison after what it says. */
static void *make_slot(struct kunit *test, const struct send_case *c)
{
	struct stag_send_wqe *hdr;
	struct stag_sge *sge;
	u8 *slot;
	u32 i, n;

	slot = kunit_kzalloc(test, slot_size(), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, slot);
	memset(slot, 0xa5, slot_size());
	hdr = (struct stag_send_wqe *)slot;
	memset(hdr, 0, sizeof(*hdr));
	hdr->wr_id = 0x1234;
	hdr->opcode = c->opcode;
	hdr->num_sge = c->num_sge;
	hdr->send_flags = c->flags;
	hdr->inline_len = c->inline_len;
	sge = (struct stag_sge *)(slot + STAG_SEND_WQE_HDR_SIZE);
	n = min_t(u32, c->num_sge, (slot_size() - STAG_SEND_WQE_HDR_SIZE) / sizeof(*sge));
	for (i = 0; i < n; i++) {
		sge[i].addr = 0x1000 * i;
		sge[i].length = c->sge_len;
		sge[i].lkey = 0x100 + i;
	}
	return slot;
}

static void stag_wqe_send_rules(struct kunit *test)
{
	const struct send_case *c = test->param_value;
	struct stag_wqe_limits lim = {
		.type = c->type, .user = c->user, .max_sge = LIM_SGE, .max_inline = LIM_INLINE,
	};
	struct stag_swqe *wqe = kunit_kzalloc(test, sizeof(*wqe), GFP_KERNEL);
	void *slot = make_slot(test, c);

	KUNIT_ASSERT_NOT_NULL(test, wqe);
	KUNIT_EXPECT_EQ(test, stag_wqe_fetch_send(&lim, slot, slot_size(), wqe), c->expected);
	KUNIT_EXPECT_EQ(test, wqe->hdr.wr_id, 0x1234);
	/* An atomic write moves the 8 bytes of its header. */
	if (c->expected == IB_WC_SUCCESS && c->opcode == IB_WR_ATOMIC_WRITE)
		KUNIT_EXPECT_EQ(test, wqe->length, 8ULL);
	else if (c->expected == IB_WC_SUCCESS && !(c->flags & IB_SEND_INLINE))
		KUNIT_EXPECT_EQ(test, wqe->length, (u64)c->num_sge * c->sge_len);
}

/* One FLUSH WQE: how it is written, and what fetching it must give. */
struct flush_case {
	const char *name;
	enum ib_qp_type type;
	u8 num_sge;
	u8 ftype;
	u8 level;
	u64 len;
	enum ib_wc_status expected;
};

static const struct flush_case flush_cases[] = {
	{ "global, a range", IB_QPT_RC, 0, IB_FLUSH_GLOBAL, IB_FLUSH_RANGE, 4096, IB_WC_SUCCESS },
	{ "both types, a whole region of any length", IB_QPT_RC, 0,
	  IB_FLUSH_GLOBAL | IB_FLUSH_PERSISTENT, IB_FLUSH_MR, U64_MAX, IB_WC_SUCCESS },
	{ "a range of 2 GiB", IB_QPT_RC, 0, IB_FLUSH_GLOBAL, IB_FLUSH_RANGE, 1ULL << 31,
	  IB_WC_SUCCESS },
	{ "a range of 2 GiB + 1", IB_QPT_RC, 0, IB_FLUSH_GLOBAL, IB_FLUSH_RANGE,
	  (1ULL << 31) + 1, IB_WC_LOC_LEN_ERR },
	{ "type 0", IB_QPT_RC, 0, 0, IB_FLUSH_RANGE, 8, IB_WC_LOC_QP_OP_ERR },
	{ "type 4", IB_QPT_RC, 0, 4, IB_FLUSH_RANGE, 8, IB_WC_LOC_QP_OP_ERR },
	{ "selectivity 2", IB_QPT_RC, 0, IB_FLUSH_GLOBAL, 2, 8, IB_WC_LOC_QP_OP_ERR },
	{ "naming an sge", IB_QPT_RC, 1, IB_FLUSH_GLOBAL, IB_FLUSH_RANGE, 8, IB_WC_LOC_QP_OP_ERR },
	{ "UC", IB_QPT_UC, 0, IB_FLUSH_GLOBAL, IB_FLUSH_RANGE, 8, IB_WC_LOC_QP_OP_ERR },
	{ "UD", IB_QPT_UD, 0, IB_FLUSH_GLOBAL, IB_FLUSH_RANGE, 8, IB_WC_LOC_QP_OP_ERR },
};

static void flush_case_desc(const struct flush_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(flush, flush_cases, flush_case_desc);

/* A FLUSH names no buffers and moves no byte; its fields are checked as fetched. */
static void stag_wqe_flush_rules(struct kunit *test)
{
	const struct flush_case *c = test->param_value;
	struct stag_wqe_limits lim = {
		.type = c->type, .user = true, .max_sge = LIM_SGE, .max_inline = LIM_INLINE,
	};
	struct stag_swqe *wqe = kunit_kzalloc(test, sizeof(*wqe), GFP_KERNEL);
	u8 *slot = kunit_kzalloc(test, slot_size(), GFP_KERNEL);
	struct stag_send_wqe *hdr = (struct stag_send_wqe *)slot;

	KUNIT_ASSERT_NOT_NULL(test, wqe);
	KUNIT_ASSERT_NOT_NULL(test, slot);
	hdr->wr_id = 0x1234;
	hdr->opcode = IB_WR_FLUSH;
	hdr->num_sge = c->num_sge;
	hdr->wr.flush.remote_addr = 0x7f0000001000ULL;
	hdr->wr.flush.length = c->len;
	hdr->wr.flush.rkey = 0x1234567;
	hdr->wr.flush.type = c->ftype;
	hdr->wr.flush.level = c->level;
	KUNIT_EXPECT_EQ(test, stag_wqe_fetch_send(&lim, slot, slot_size(), wqe), c->expected);
	if (c->expected != IB_WC_SUCCESS)
		return;
	KUNIT_EXPECT_EQ(test, wqe->length, 0ULL);
	KUNIT_EXPECT_EQ(test, wqe->hdr.wr.flush.length, c->len);
	KUNIT_EXPECT_EQ(test, wqe->hdr.wr.flush.type, c->ftype);
	KUNIT_EXPECT_EQ(test, wqe->hdr.wr.flush.level, c->level);
	KUNIT_EXPECT_TRUE(test, stag_wqe_is_rd_atomic(IB_WR_FLUSH));
	KUNIT_EXPECT_EQ(test, stag_wqe_wc_opcode(IB_WR_FLUSH), IB_WC_FLUSH);
}

/* What the kernel uses is its copy: a later write to the slot changes nothing. */
static void stag_wqe_send_copied_once(struct kunit *test)
{
	static const struct send_case c = { "", IB_QPT_RC, true, IB_WR_SEND, 2, 0, 0, 100 };
	struct stag_wqe_limits lim = {
		.type = IB_QPT_RC, .user = true, .max_sge = LIM_SGE, .max_inline = LIM_INLINE,
	};
	struct stag_swqe *wqe = kunit_kzalloc(test, sizeof(*wqe), GFP_KERNEL);
	struct stag_send_wqe *hdr;
	void *slot = make_slot(test, &c);

	KUNIT_ASSERT_NOT_NULL(test, wqe);
	KUNIT_ASSERT_EQ(test, stag_wqe_fetch_send(&lim, slot, slot_size(), wqe), IB_WC_SUCCESS);
	hdr = slot;
	hdr->num_sge = 255;
	hdr->opcode = 0xff;
	((struct stag_sge *)(slot + STAG_SEND_WQE_HDR_SIZE))[0].lkey = 0xdead;
	KUNIT_EXPECT_EQ(test, wqe->hdr.num_sge, 2);
	KUNIT_EXPECT_EQ(test, wqe->hdr.opcode, IB_WR_SEND);
	KUNIT_EXPECT_EQ(test, wqe->sge[0].lkey, 0x100);
	KUNIT_EXPECT_EQ(test, wqe->length, 200);
}

/* Inline data is copied up to its length and no further. */
static void stag_wqe_send_inline_copied(struct kunit *test)
{
	static const struct send_case c = { "", IB_QPT_RC, true, IB_WR_SEND, 3, IB_SEND_INLINE,
					    5, 0 };
	struct stag_wqe_limits lim = {
		.type = IB_QPT_RC, .user = true, .max_sge = LIM_SGE, .max_inline = LIM_INLINE,
	};
	struct stag_swqe *wqe = kunit_kzalloc(test, sizeof(*wqe), GFP_KERNEL);
	u8 *slot = make_slot(test, &c);

	KUNIT_ASSERT_NOT_NULL(test, wqe);
	memcpy(slot + STAG_SEND_WQE_HDR_SIZE, "hello", 5);
	KUNIT_ASSERT_EQ(test, stag_wqe_fetch_send(&lim, slot, slot_size(), wqe), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wqe->length, 5);
	KUNIT_EXPECT_EQ(test, wqe->hdr.num_sge, 0);
	KUNIT_EXPECT_MEMEQ(test, wqe->inline_data, "hello", 5);
}

/* A slot too small for what the QP's limits allow is caught too. */
static void stag_wqe_send_bounded_by_slot(struct kunit *test)
{
	static const struct send_case c = { "", IB_QPT_RC, true, IB_WR_SEND, LIM_SGE, 0, 0, 1 };
	struct stag_wqe_limits lim = {
		.type = IB_QPT_RC, .user = true, .max_sge = LIM_SGE, .max_inline = LIM_INLINE,
	};
	struct stag_swqe *wqe = kunit_kzalloc(test, sizeof(*wqe), GFP_KERNEL);
	void *slot = make_slot(test, &c);

	KUNIT_ASSERT_NOT_NULL(test, wqe);
	KUNIT_EXPECT_EQ(test, stag_wqe_fetch_send(&lim, slot, STAG_SEND_WQE_HDR_SIZE + 16, wqe),
			IB_WC_LOC_QP_OP_ERR);
}

static void stag_wqe_recv_rules(struct kunit *test)
{
	u32 size = stag_wqe_recv_slot_size(LIM_SGE);
	struct stag_rwqe *wqe = kunit_kzalloc(test, sizeof(*wqe), GFP_KERNEL);
	u8 *slot = kunit_kzalloc(test, size, GFP_KERNEL);
	struct stag_recv_wqe *hdr = (struct stag_recv_wqe *)slot;
	struct stag_sge *sge = (struct stag_sge *)(slot + sizeof(*hdr));

	KUNIT_ASSERT_NOT_NULL(test, wqe);
	KUNIT_ASSERT_NOT_NULL(test, slot);
	hdr->wr_id = 77;
	hdr->num_sge = LIM_SGE;
	sge[0].length = 10;
	sge[LIM_SGE - 1].length = 20;
	KUNIT_EXPECT_EQ(test, stag_wqe_fetch_recv(slot, size, LIM_SGE, wqe), 0);
	KUNIT_EXPECT_EQ(test, wqe->wr_id, 77);
	KUNIT_EXPECT_EQ(test, wqe->length, 30);

	hdr->num_sge = LIM_SGE + 1;
	KUNIT_EXPECT_EQ(test, stag_wqe_fetch_recv(slot, size, LIM_SGE, wqe), -EINVAL);
	/* The wr_id is kept, so the bad WQE can still be completed in error. */
	KUNIT_EXPECT_EQ(test, wqe->wr_id, 77);
	hdr->num_sge = U32_MAX;
	KUNIT_EXPECT_EQ(test, stag_wqe_fetch_recv(slot, size, U32_MAX, wqe), -EINVAL);
}

static void stag_wqe_slot_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, stag_wqe_send_slot_size(1, 0), 128);
	KUNIT_EXPECT_EQ(test, stag_wqe_send_slot_size(4, 0), 128);
	KUNIT_EXPECT_EQ(test, stag_wqe_send_slot_size(4, 65), 192);
	KUNIT_EXPECT_EQ(test, stag_wqe_send_slot_size(STAG_MAX_SGE, STAG_MAX_INLINE), 576);
	KUNIT_EXPECT_EQ(test, stag_wqe_recv_slot_size(0), 32);
	KUNIT_EXPECT_EQ(test, stag_wqe_recv_slot_size(2), 48);
}

static void queue_uninit_action(void *q)
{
	stag_queue_uninit(q);
}

static struct stag_queue *make_queue(struct kunit *test, u32 slots)
{
	struct stag_queue *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_EQ(test, stag_queue_init(q, slots, 64), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, queue_uninit_action, q), 0);
	return q;
}

/* The producer index is the other side's: anything more than a ring ahead is refused. */
static void stag_queue_producer_index_checked(struct kunit *test)
{
	struct stag_queue *q = make_queue(test, 8);
	u32 n;

	KUNIT_EXPECT_EQ(test, stag_queue_avail(q, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 0);
	q->ctl->prod = 8;
	KUNIT_EXPECT_EQ(test, stag_queue_avail(q, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 8);
	q->ctl->prod = 9;
	KUNIT_EXPECT_EQ(test, stag_queue_avail(q, &n), -EIO);
	KUNIT_EXPECT_EQ(test, n, 0);
	/* Behind the consumer reads as a huge count: refused too. */
	q->ctl->prod = (u32)-1;
	KUNIT_EXPECT_EQ(test, stag_queue_avail(q, &n), -EIO);

	/* Indices wrap: 2^32 - 2 .. 2 is four slots. */
	q->index = (u32)-2;
	q->ctl->prod = 2;
	KUNIT_EXPECT_EQ(test, stag_queue_avail(q, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 4);
	stag_queue_pop(q);
	KUNIT_EXPECT_EQ(test, q->ctl->cons, (u32)-1);
}

/* The kernel's own index is never taken from the ring. */
static void stag_queue_consumer_index_private(struct kunit *test)
{
	struct stag_queue *q = make_queue(test, 4);
	u32 n;

	q->ctl->prod = 2;
	q->ctl->cons = 1000;	/* scribbled */
	KUNIT_EXPECT_EQ(test, stag_queue_avail(q, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 2);
	KUNIT_EXPECT_PTR_EQ(test, stag_queue_head(q), q->slots);
}

/* A consumer index the kernel cannot trust reads as a full ring. */
static void stag_queue_full_when_consumer_lies(struct kunit *test)
{
	struct stag_queue *q = make_queue(test, 4);

	KUNIT_EXPECT_FALSE(test, stag_queue_full(q));
	stag_queue_push(q);
	stag_queue_push(q);
	KUNIT_EXPECT_FALSE(test, stag_queue_full(q));
	q->ctl->cons = 5;	/* ahead of what was produced */
	KUNIT_EXPECT_TRUE(test, stag_queue_full(q));
	q->ctl->cons = (u32)-3;	/* more than a ring behind */
	KUNIT_EXPECT_TRUE(test, stag_queue_full(q));
	q->ctl->cons = 2;
	KUNIT_EXPECT_FALSE(test, stag_queue_full(q));
	stag_queue_push(q);
	stag_queue_push(q);
	stag_queue_push(q);
	stag_queue_push(q);
	KUNIT_EXPECT_TRUE(test, stag_queue_full(q));
}

static void stag_queue_geometry(struct kunit *test)
{
	struct stag_queue q;

	KUNIT_EXPECT_EQ(test, stag_queue_init(&q, 0, 64), -EINVAL);
	KUNIT_EXPECT_EQ(test, stag_queue_init(&q, 3, 64), -EINVAL);
	KUNIT_EXPECT_EQ(test, stag_queue_init(&q, 4, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, stag_queue_init(&q, 1U << 31, U32_MAX), -EINVAL);
	KUNIT_EXPECT_EQ(test, stag_queue_init(&q, 1U << 20, 65), -EINVAL);
	KUNIT_ASSERT_EQ(test, stag_queue_init(&q, 1, 1), 0);
	KUNIT_EXPECT_EQ(test, q.size, PAGE_SIZE);
	stag_queue_uninit(&q);
}

static struct kunit_case stag_wqe_cases[] = {
	KUNIT_CASE_PARAM(stag_wqe_send_rules, send_gen_params),
	KUNIT_CASE_PARAM(stag_wqe_flush_rules, flush_gen_params),
	KUNIT_CASE(stag_wqe_send_copied_once),
	KUNIT_CASE(stag_wqe_send_inline_copied),
	KUNIT_CASE(stag_wqe_send_bounded_by_slot),
	KUNIT_CASE(stag_wqe_recv_rules),
	KUNIT_CASE(stag_wqe_slot_sizes),
	{}
};

static struct kunit_suite stag_wqe_suite = {
	.name = "stag_wqe",
	.test_cases = stag_wqe_cases,
};

static struct kunit_case stag_queue_cases[] = {
	KUNIT_CASE(stag_queue_producer_index_checked),
	KUNIT_CASE(stag_queue_consumer_index_private),
	KUNIT_CASE(stag_queue_full_when_consumer_lies),
	KUNIT_CASE(stag_queue_geometry),
	{}
};

static struct kunit_suite stag_queue_suite = {
	.name = "stag_queue",
	.test_cases = stag_queue_cases,
};

kunit_test_suites(&stag_wqe_suite, &stag_queue_suite);
