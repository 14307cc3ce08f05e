// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ring_test: the provider's data path against a fake kernel, on the host.
 *
 * The provider's objects are linked with stand-ins for the libibverbs
 * calls they make: the ibv_cmd_* stand-ins answer as stag.ko would, with
 * rings in a memfd that plays the uverbs file (so mmap() works and each
 * doorbell write() lands in it, where it is counted). Each case names the
 * behaviour it proves. Prints one line per failed check and
 * "ring_test: N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "../ah.h"
#include "../cq.h"
#include "../mw.h"
#include "../qp.h"
#include "../srq.h"
#include "../stagdv.h"

#define MEMFD_SIZE	(64u * 1024 * 1024)
#define RINGS_START	(1024u * 1024)	/* doorbells are written below */
#define SQ_SLOTS	8
#define SQ_SLOT_SIZE	128
#define RQ_SLOTS	8
#define RQ_SLOT_SIZE	80
#define CQ_SLOTS	16
#define MAX_SGE		4
#define MAX_INLINE	64
#define AH_NUM		77

static int fd;
static uint64_t next_offset = RINGS_START;

/*
 * ---- the fake kernel ----
 *
 * The stand-ins take libibverbs' full argument lists and use few of them.
 * A response buffer too small for the udata is a provider bug: abort.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"

static uint64_t ring_alloc(uint32_t slots, uint32_t slot_size)
{
	uint64_t offset = next_offset;

	next_offset += (STAG_QUEUE_CTL_SIZE + (uint64_t)slots * slot_size + 4095) & ~4095ull;
	return offset;
}

/* The doorbells written since the last call, by command. */
static void doorbells(int *send, int *recv)
{
	off_t end = lseek(fd, 0, SEEK_CUR);
	struct ib_uverbs_cmd_hdr hdr;
	off_t pos;

	*send = *recv = 0;
	for (pos = 0; pos + 32 <= end; pos += 32) {
		if (pread(fd, &hdr, sizeof(hdr), pos) != sizeof(hdr))
			break;
		*send += hdr.command == IB_USER_VERBS_CMD_POST_SEND && hdr.in_words == 8;
		*recv += hdr.command == IB_USER_VERBS_CMD_POST_RECV && hdr.in_words == 8;
	}
	lseek(fd, 0, SEEK_SET);
}

/* What the kernel gives the next CQ and QP; a case may spoil it. */
static uint32_t cq_slots = CQ_SLOTS;
static bool cq_ts_slots_short;	/* a timestamp CQ gets 48-byte slots */
static uint32_t sq_slots = SQ_SLOTS;

int ibv_cmd_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
		      int comp_vector, struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp, size_t resp_size)
{
	struct stag_create_cq_resp *drv = (void *)(resp + 1);

	if (resp_size < sizeof(*resp) + sizeof(*drv))
		abort();
	cq->context = context;
	cq->cqe = cqe;
	drv->num_slots = cq_slots;
	drv->slot_size = sizeof(struct stag_cqe);
	drv->offset = ring_alloc(drv->num_slots, drv->slot_size);
	return 0;
}

/* The stand-ins take the arguments of the private ABI built for (ibverbs_provider.h). */
#if IBVERBS_PABI_VERSION >= 65
int ibv_cmd_create_cq_ex(struct ibv_context *context, const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_create_cq_prov_attr *prov_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd, size_t cmd_size,
#else
int ibv_cmd_create_cq_ex(struct ibv_context *context, const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd, size_t cmd_size,
#endif
			 struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
			 uint32_t cmd_flags)
{
	struct stag_create_cq_resp *drv = (void *)(resp + 1);
	const struct stag_create_cq_cmd *tail = (const void *)(cmd + 1);

	if (resp_size < sizeof(*resp) + sizeof(*drv))
		abort();
	cq->cq.context = context;
	cq->cq.cqe = cq_attr->cqe;
	drv->num_slots = cq_slots;
	/* As stag.ko: libibverbs asks for timestamps for either clock. */
	drv->slot_size = cq_attr->wc_flags & (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
					      IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK) &&
			 !cq_ts_slots_short ? sizeof(struct stag_cqe_ts) : sizeof(struct stag_cqe);
	/* And the tag's slots when the driver tail asks. */
	if (cmd_size >= sizeof(*cmd) + sizeof(*tail) && tail->flags & STAG_CQ_TM_INFO &&
	    !cq_ts_slots_short)
		drv->slot_size = sizeof(struct stag_cqe_tm);
	drv->offset = ring_alloc(drv->num_slots, drv->slot_size);
	return 0;
}

int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr, struct ibv_create_qp_ex *cmd,
			  size_t cmd_size, struct ib_uverbs_ex_create_qp_resp *resp,
#if IBVERBS_PABI_VERSION >= 65
			  size_t resp_size, struct ibv_command_buffer *driver)
#else
			  size_t resp_size)
#endif
{
	struct stag_create_qp_resp *drv = (void *)(resp + 1);

	if (resp_size < sizeof(*resp) + sizeof(*drv))
		abort();
	qp->qp.context = context;
	qp->qp.qp_type = qp_attr->qp_type;
	qp->qp.srq = qp_attr->srq;
	qp->qp.handle = 5;
	qp->comp_mask = 0;
	qp_attr->cap.max_send_sge = MAX_SGE;
	qp_attr->cap.max_recv_sge = MAX_SGE;
	qp_attr->cap.max_inline_data = MAX_INLINE;
	qp->qp.send_cq = qp_attr->send_cq;
	qp->qp.recv_cq = qp_attr->recv_cq;
	/* As stag.ko: an XRC TGT QP gets no ring, an INI no receive ring. */
	if (qp_attr->qp_type == IBV_QPT_XRC_RECV)
		return 0;
	drv->sq_slots = sq_slots;
	drv->sq_slot_size = SQ_SLOT_SIZE;
	drv->sq_offset = ring_alloc(drv->sq_slots, drv->sq_slot_size);
	drv->max_inline = MAX_INLINE;
	if (qp_attr->srq || qp_attr->qp_type == IBV_QPT_XRC_SEND)
		return 0;
	drv->rq_slots = RQ_SLOTS;
	drv->rq_slot_size = RQ_SLOT_SIZE;
	drv->rq_offset = ring_alloc(drv->rq_slots, drv->rq_slot_size);
	return 0;
}

/* An SRQ's ring and number, basic or XRC alike. */
static void srq_resp(struct ib_uverbs_create_srq_resp *resp, size_t resp_size,
		     struct ibv_srq_attr *attr, uint32_t srq_num)
{
	struct stag_create_srq_resp *drv = (void *)(resp + 1);

	if (resp_size < sizeof(*resp) + sizeof(*drv))
		abort();
	attr->max_sge = MAX_SGE;
	drv->num_slots = RQ_SLOTS;
	drv->slot_size = RQ_SLOT_SIZE;
	drv->offset = ring_alloc(drv->num_slots, drv->slot_size);
	drv->srq_num = srq_num;
}

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size)
{
	srq->context = pd->context;
	srq_resp(resp, resp_size, &attr->attr, 9);
	return 0;
}

#define XSRQ_NUM	0x4321

/* Fills the verbs_srq as libibverbs does, the number for XRC from the core. */
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex, struct ibv_create_xsrq *cmd,
			  size_t cmd_size, struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size)
{
	if (!(attr_ex->comp_mask & IBV_SRQ_INIT_ATTR_PD))
		return EINVAL;
	srq->srq.context = context;
	srq->srq_type = attr_ex->comp_mask & IBV_SRQ_INIT_ATTR_TYPE ? attr_ex->srq_type :
								       IBV_SRQT_BASIC;
	if (srq->srq_type == IBV_SRQT_XRC) {
		srq->xrcd = container_of(attr_ex->xrcd, struct verbs_xrcd, xrcd);
		srq->srq_num = XSRQ_NUM;
	}
	srq_resp(resp, resp_size, &attr_ex->attr, XSRQ_NUM);
	return 0;
}

/* Fills the ibv_qp as libibverbs does: no PD, CQs or SRQ, no rings. */
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp, int vqp_sz,
		    struct ibv_qp_open_attr *attr, struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size)
{
	if (cmd_size != sizeof(*cmd) || resp_size != sizeof(*resp) || vqp_sz < (int)sizeof(*qp))
		abort();
	memset(&qp->qp, 0, sizeof(qp->qp));
	qp->qp.handle = 6;
	qp->qp.context = context;
	qp->qp.qp_num = attr->qp_num;
	qp->qp.qp_type = attr->qp_type;
	qp->qp.state = IBV_QPS_UNKNOWN;
	return 0;
}

/* XRC domains are the kernel's alone: the provider only has to link. */
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd, int vxrcd_size,
		      struct ibv_xrcd_init_attr *attr, struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size)
{
	abort();
}

int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd)
{
	abort();
}

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah, struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size)
{
	struct stag_create_ah_resp *drv = (void *)(resp + 1);

	if (resp_size < sizeof(*resp) + sizeof(*drv))
		abort();
	ah->context = pd->context;
	drv->ah_num = AH_NUM;
	return 0;
}

/* What the kernel answers the next alloc_mw: 0 and this rkey, or an errno. */
static int alloc_mw_ret;
#define MW_RKEY		0x123456ff	/* the key byte wraps on the first bind */
#define MW_HANDLE	12

/* Fills the ibv_mw as libibverbs does; stag sends no udata either way. */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type, struct ibv_mw *mw,
		     struct ibv_alloc_mw *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size)
{
	if (cmd_size != sizeof(*cmd) || resp_size != sizeof(*resp))
		abort();
	if (alloc_mw_ret)
		return alloc_mw_ret;
	resp->rkey = MW_RKEY;
	resp->mw_handle = MW_HANDLE;
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = resp->rkey;
	mw->handle = resp->mw_handle;
	mw->type = type;
	return 0;
}

int ibv_cmd_dealloc_mw(struct ibv_mw *mw)
{
	return 0;
}

/* rdma-core 44's verbs_qp.comp_mask. */
struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct verbs_qp *vqp = (struct verbs_qp *)qp;

	return vqp->comp_mask & VERBS_QP_EX ? &vqp->qp_ex : NULL;
}

int ibv_cmd_destroy_cq(struct ibv_cq *cq)
{
	return 0;
}

int ibv_cmd_destroy_qp(struct ibv_qp *qp)
{
	return 0;
}

int ibv_cmd_destroy_srq(struct ibv_srq *srq)
{
	return 0;
}

int ibv_cmd_destroy_ah(struct ibv_ah *ah)
{
	return 0;
}

/* Not reached by the cases: the provider only has to link. */
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	abort();
}

/* Resizing needs the kernel's ring swap: the guest tests cover it. */
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size)
{
	abort();
}

/* The kernel agrees: what is checked is what the provider does after a reset. */
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, size_t cmd_size)
{
	return 0;
}

int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr, int attr_mask,
		     struct ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd,
		     size_t cmd_size)
{
	abort();
}

int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask,
		       struct ibv_modify_srq *cmd, size_t cmd_size)
{
	abort();
}

int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size)
{
	abort();
}

#if IBVERBS_PABI_VERSION >= 65
int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd,
			size_t cmd_size, struct ibv_fd_arr *fd_arr,
			struct ib_uverbs_get_context_resp *resp, size_t resp_size)
#else
int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd,
			size_t cmd_size, struct ib_uverbs_get_context_resp *resp,
			size_t resp_size)
#endif
{
	abort();
}

int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp, size_t *resp_size)
{
	abort();
}

int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr, struct ibv_query_port *cmd,
		       size_t cmd_size)
{
	abort();
}

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd, struct ibv_alloc_pd *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size)
{
	abort();
}

int ibv_cmd_dealloc_pd(struct ibv_pd *pd)
{
	abort();
}

int ibv_cmd_query_context(struct ibv_context *ctx, struct ibv_command_buffer *driver)
{
	abort();
}

int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr, uint32_t mr_handle)
{
	abort();
}

int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access,
		   struct verbs_mr *vmr, struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size)
{
	abort();
}

int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr, size_t length,
		     uint64_t hca_va, int access, struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp, size_t resp_sz)
{
	abort();
}

int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		      struct ibv_sge *sg_list, uint32_t num_sge)
{
	abort();
}

int ibv_cmd_dereg_mr(struct verbs_mr *vmr)
{
	abort();
}

int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
			  int fd, int access, struct verbs_mr *vmr,
			  struct ibv_command_buffer *driver)
{
	abort();
}

int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	abort();
}

int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	abort();
}

int ibv_cmd_create_flow(struct ibv_qp *qp, struct ibv_flow *flow_id,
			struct ibv_flow_attr *flow_attr, void *ucmd, size_t ucmd_size)
{
	abort();
}

int ibv_cmd_destroy_flow(struct ibv_flow *flow_id)
{
	abort();
}

int ibv_cmd_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr,
		      struct ibv_wq *wq, struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp, size_t resp_size)
{
	abort();
}

int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr, struct ibv_modify_wq *cmd,
		      size_t cmd_size)
{
	abort();
}

int ibv_cmd_destroy_wq(struct ibv_wq *wq)
{
	abort();
}

int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size)
{
	abort();
}

int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table)
{
	abort();
}

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    struct verbs_context *context_offset, uint32_t driver_id)
{
	abort();
}

void verbs_uninit_context(struct verbs_context *context)
{
	abort();
}

void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops)
{
	abort();
}

int ibv_dontfork_range(void *base, size_t size)
{
	abort();
}

int ibv_dofork_range(void *base, size_t size)
{
	abort();
}

/* The provider registers itself when loaded. */
void verbs_register_driver(const struct verbs_device_ops *ops)
{
}

/* ---- helpers ---- */

static struct verbs_device_ops dev_ops = { .name = "stag" };
static struct verbs_device dev = { .ops = &dev_ops };
static struct stag_context sctx;
static struct ibv_context *ctx = &sctx.ibv_ctx.context;
static struct ibv_pd pd = { .context = &sctx.ibv_ctx.context };

static struct stag_queue_ctl *ring_ctl(const struct stag_queue *q)
{
	return q->ctl;
}

static void *ring_slot(const struct stag_queue *q, uint32_t i)
{
	return stag_queue_slot(q, i);
}

static struct stag_qp *qp_new(enum ibv_qp_type type, struct ibv_srq *srq, uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = type,
		.srq = srq,
		.comp_mask = IBV_QP_INIT_ATTR_PD | (send_ops ? IBV_QP_INIT_ATTR_SEND_OPS_FLAGS : 0),
		.pd = &pd,
		.send_ops_flags = send_ops,
	};
	struct ibv_qp *qp = stag_create_qp_ex(ctx, &attr);

	/* As if connected: posting checks the state libibverbs keeps. */
	if (qp)
		qp->state = IBV_QPS_RTS;
	return qp ? to_stag_qp(qp) : NULL;
}

static void qp_free(struct stag_qp *qp)
{
	check(!stag_destroy_qp(&qp->vqp.qp), "destroy_qp");
}

static int post_send(struct stag_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	*bad = NULL;
	return stag_post_send(&qp->vqp.qp, wr, bad);
}

/* ---- the cases ---- */

static void post_needs_state(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_sge sg = { 0x1000, 10, 0x11 };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sg, .num_sge = 1 };
	struct ibv_send_wr *bad = NULL;
	struct ibv_recv_wr *rbad = NULL;
	enum ibv_qp_state st;

	if (!qp) {
		check(0, "create_qp");
		return;
	}
	for (st = IBV_QPS_RESET; st <= IBV_QPS_RTR; st++) {
		qp->vqp.qp.state = st;
		check(post_send(qp, &wr, &bad) == EINVAL && bad == &wr,
		      "post_send in state %d: EINVAL", st);
	}
	qp->vqp.qp.state = IBV_QPS_RESET;
	check(stag_post_recv(&qp->vqp.qp, &rwr, &rbad) == EINVAL && rbad == &rwr,
	      "post_recv in RESET: EINVAL");
	check(__atomic_load_n(&qp->sq.ctl->prod, __ATOMIC_RELAXED) == 0 &&
	      __atomic_load_n(&qp->rq.ctl->prod, __ATOMIC_RELAXED) == 0, "nothing published");
	qp_free(qp);
}

static void send_slot_has_the_request(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_sge sg[2] = { { 0x1000, 10, 0x11 }, { 0x2000, 20, 0x22 } };
	struct ibv_send_wr wr = {
		.wr_id = 42, .sg_list = sg, .num_sge = 2, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0xabcd),
		.wr.rdma = { .remote_addr = 0xfeed0000, .rkey = 0x99 },
	}, *bad;
	struct stag_send_wqe *wqe;
	struct stag_sge *sge;
	int ret, db_send, db_recv;

	doorbells(&db_send, &db_recv);
	ret = post_send(qp, &wr, &bad);
	check(!ret, "post_send: %s", strerror(ret));
	wqe = ring_slot(&qp->sq, 0);
	sge = (struct stag_sge *)(wqe + 1);
	check(wqe->wr_id == 42 && wqe->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM &&
	      wqe->num_sge == 2 && wqe->send_flags == IBV_SEND_SIGNALED &&
	      wqe->ex == htobe32(0xabcd) && wqe->inline_len == 0 &&
	      wqe->wr.rdma.remote_addr == 0xfeed0000 && wqe->wr.rdma.rkey == 0x99,
	      "send WQE header");
	check(sge[0].addr == 0x1000 && sge[0].length == 10 && sge[0].lkey == 0x11 &&
	      sge[1].addr == 0x2000 && sge[1].length == 20 && sge[1].lkey == 0x22,
	      "send WQE scatter list");
	check(ring_ctl(&qp->sq)->prod == 1, "prod %u after one send", ring_ctl(&qp->sq)->prod);
	doorbells(&db_send, &db_recv);
	check(db_send == 1 && db_recv == 0, "%d send, %d receive doorbells for one post",
	      db_send, db_recv);
	qp_free(qp);
}

static void send_empty_list_rings_once(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_send_wr *bad;
	int ret, db_send, db_recv;

	doorbells(&db_send, &db_recv);
	ret = post_send(qp, NULL, &bad);
	doorbells(&db_send, &db_recv);
	check(!ret && db_send == 1 && ring_ctl(&qp->sq)->prod == 0,
	      "empty post: ret %d, %d doorbells, prod %u", ret, db_send, ring_ctl(&qp->sq)->prod);
	qp_free(qp);
}

static void send_full_ring_enomem(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_send_wr wr[SQ_SLOTS + 2], *bad;
	int i, ret, db_send, db_recv;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < SQ_SLOTS + 2; i++) {
		wr[i].wr_id = i;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].next = i + 1 < SQ_SLOTS + 2 ? &wr[i + 1] : NULL;
	}
	doorbells(&db_send, &db_recv);
	ret = post_send(qp, wr, &bad);
	doorbells(&db_send, &db_recv);
	check(ret == ENOMEM && bad == &wr[SQ_SLOTS], "full ring: ret %d, bad_wr %td", ret,
	      bad ? bad - wr : -1);
	check(ring_ctl(&qp->sq)->prod == SQ_SLOTS && db_send == 1,
	      "full ring: prod %u, %d doorbells", ring_ctl(&qp->sq)->prod, db_send);

	/* The kernel consumes two: two more fit, wrapping around. */
	__atomic_store_n(&ring_ctl(&qp->sq)->cons, 2, __ATOMIC_RELEASE);
	wr[SQ_SLOTS + 1].next = NULL;
	ret = post_send(qp, &wr[SQ_SLOTS], &bad);
	check(!ret && ring_ctl(&qp->sq)->prod == SQ_SLOTS + 2,
	      "after consuming two: ret %d, prod %u", ret, ring_ctl(&qp->sq)->prod);
	check(((struct stag_send_wqe *)ring_slot(&qp->sq, 1))->wr_id == SQ_SLOTS + 1,
	      "the wrapped WQE is in slot 1");
	qp_free(qp);
}

static void send_limits_einval(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_sge sg[MAX_SGE + 1] = {};
	struct ibv_send_wr wr = { .sg_list = sg, .num_sge = MAX_SGE + 1, .opcode = IBV_WR_SEND },
			   *bad;
	int ret;

	ret = post_send(qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr, "num_sge over max_send_sge: %d", ret);
	wr.num_sge = -1;
	ret = post_send(qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr, "negative num_sge: %d", ret);
	sg[0].length = MAX_INLINE;
	sg[1].length = 1;
	wr.num_sge = 2;
	wr.send_flags = IBV_SEND_INLINE;
	ret = post_send(qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr, "inline one byte over max_inline: %d", ret);
	check(ring_ctl(&qp->sq)->prod == 0, "rejected requests left prod at %u",
	      ring_ctl(&qp->sq)->prod);
	qp_free(qp);
}

static void send_inline_copies_bytes(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	char a[MAX_INLINE - 3], b[3];
	struct ibv_sge sg[2] = { { (uintptr_t)a, sizeof(a), 0 }, { (uintptr_t)b, sizeof(b), 0 } };
	struct ibv_send_wr wr = { .sg_list = sg, .num_sge = 2, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE }, *bad;
	struct stag_send_wqe *wqe;
	int ret;

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	ret = post_send(qp, &wr, &bad);
	wqe = ring_slot(&qp->sq, 0);
	check(!ret && wqe->num_sge == 0 && wqe->inline_len == MAX_INLINE &&
	      (wqe->send_flags & IBV_SEND_INLINE), "inline WQE: ret %d num_sge %u inline_len %u",
	      ret, wqe->num_sge, wqe->inline_len);
	check(!memcmp(wqe + 1, a, sizeof(a)) && !memcmp((char *)(wqe + 1) + sizeof(a), b, 3),
	      "inline bytes, first to last");
	qp_free(qp);
}

static void send_ud_names_the_ah(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_UD, NULL, 0);
	struct ibv_ah_attr ah_attr = {};
	struct ibv_ah *ah = stag_create_ah(&pd, &ah_attr);
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND,
				  .wr.ud = { .ah = ah, .remote_qpn = 0x123, .remote_qkey = 7 } },
			   *bad;
	struct stag_send_wqe *wqe = ring_slot(&qp->sq, 0);
	int ret;

	ret = post_send(qp, &wr, &bad);
	check(!ret && wqe->wr.ud.ah == AH_NUM && wqe->wr.ud.remote_qpn == 0x123 &&
	      wqe->wr.ud.remote_qkey == 7, "UD WQE: ret %d ah %u qpn %#x qkey %u", ret,
	      wqe->wr.ud.ah, wqe->wr.ud.remote_qpn, wqe->wr.ud.remote_qkey);
	wr.wr.ud.ah = NULL;
	ret = post_send(qp, &wr, &bad);
	check(ret == EINVAL, "UD send without an AH: %d", ret);
	check(!stag_destroy_ah(ah), "destroy_ah");
	qp_free(qp);
}

static void send_unknown_opcode_stays_unknown(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_send_wr wr = { .opcode = 0x100 + IBV_WR_SEND }, *bad;
	struct stag_send_wqe *wqe = ring_slot(&qp->sq, 0);
	int ret;

	ret = post_send(qp, &wr, &bad);
	check(!ret && wqe->opcode == 0xff, "opcode 0x102: ret %d, slot opcode %#x", ret,
	      wqe->opcode);
	qp_free(qp);
}

static void recv_rings_only_when_flushing(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_sge sg = { 0x3000, 30, 0x33 };
	struct ibv_recv_wr wr = { .wr_id = 8, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;
	struct stag_recv_wqe *wqe = ring_slot(&qp->rq, 0);
	int ret, db_send, db_recv;

	doorbells(&db_send, &db_recv);
	ret = stag_post_recv(&qp->vqp.qp, &wr, &bad);
	doorbells(&db_send, &db_recv);
	check(!ret && db_send + db_recv == 0 && ring_ctl(&qp->rq)->prod == 1,
	      "receive: ret %d, %d doorbells, prod %u", ret, db_recv, ring_ctl(&qp->rq)->prod);
	check(wqe->wr_id == 8 && wqe->num_sge == 1 &&
	      !memcmp(wqe + 1, &sg, sizeof(sg)), "receive WQE");

	ring_ctl(&qp->rq)->flags = STAG_QUEUE_FLUSH;
	ret = stag_post_recv(&qp->vqp.qp, &wr, &bad);
	doorbells(&db_send, &db_recv);
	check(!ret && db_recv == 1 && db_send == 0, "flushing: ret %d, %d receive doorbells",
	      ret, db_recv);

	wr.num_sge = MAX_SGE + 1;
	ret = stag_post_recv(&qp->vqp.qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr, "receive over max_recv_sge: %d", ret);
	qp_free(qp);
}

static void srq_posts_without_doorbell(void)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = stag_create_srq(&pd, &attr);
	struct stag_qp *qp = qp_new(IBV_QPT_RC, srq, 0);
	struct ibv_recv_wr wr[RQ_SLOTS + 1] = {}, *bad = NULL;
	struct stagdv_ring sq, rq;
	int i, ret, db_send, db_recv;

	check(srq && to_stag_srq(srq)->vsrq.srq_num == 9, "SRQ number");
	check(!stagdv_qp_rings(&qp->vqp.qp, &sq, &rq) && sq.num_slots == SQ_SLOTS &&
	      !rq.ctl && !rq.num_slots, "stagdv_qp_rings with an SRQ");
	ret = stag_post_recv(&qp->vqp.qp, wr, &bad);
	check(ret == EINVAL, "receive on a QP with an SRQ: %d", ret);

	for (i = 0; i < RQ_SLOTS + 1; i++)
		wr[i].next = i < RQ_SLOTS ? &wr[i + 1] : NULL;
	to_stag_srq(srq)->queue.ctl->flags = STAG_QUEUE_FLUSH;
	doorbells(&db_send, &db_recv);
	ret = stag_post_srq_recv(srq, wr, &bad);
	doorbells(&db_send, &db_recv);
	check(ret == ENOMEM && bad == &wr[RQ_SLOTS] && db_recv == 0,
	      "SRQ: ret %d, %d doorbells", ret, db_recv);
	qp_free(qp);
	check(!stag_destroy_srq(srq), "destroy_srq");
}

static void wr_batch_publishes_once(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, IBV_QP_EX_WITH_SEND |
				    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP);
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(&qp->vqp.qp);
	struct ibv_sge sg[MAX_SGE + 1] = {};
	struct stag_send_wqe *wqe;
	int ret, db_send, db_recv;
	char inl[8] = "inline!";

	check(qpx == &qp->vqp.qp_ex, "ibv_qp_to_qp_ex");
	if (!qpx)
		return;
	doorbells(&db_send, &db_recv);
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, inl, sizeof(inl));
	qpx->wr_id = 2;
	ibv_wr_rdma_write(qpx, 0x55, 0xbeef);
	ibv_wr_set_sge(qpx, 0x66, 0x4000, 40);
	qpx->wr_id = 3;
	ibv_wr_atomic_cmp_swp(qpx, 0x77, 0x8000, 1, 2);
	ibv_wr_set_sge(qpx, 0x66, 0x5000, 8);
	check(ring_ctl(&qp->sq)->prod == 0, "nothing published before wr_complete");
	ret = ibv_wr_complete(qpx);
	doorbells(&db_send, &db_recv);
	check(!ret && ring_ctl(&qp->sq)->prod == 3 && db_send == 1,
	      "batch of 3: ret %d, prod %u, %d doorbells", ret, ring_ctl(&qp->sq)->prod, db_send);
	wqe = ring_slot(&qp->sq, 0);
	check(wqe->opcode == IBV_WR_SEND && (wqe->send_flags & IBV_SEND_INLINE) &&
	      wqe->inline_len == sizeof(inl) && !memcmp(wqe + 1, inl, sizeof(inl)),
	      "wr_send with inline data");
	wqe = ring_slot(&qp->sq, 1);
	check(wqe->wr_id == 2 && wqe->opcode == IBV_WR_RDMA_WRITE && wqe->num_sge == 1 &&
	      !(wqe->send_flags & IBV_SEND_INLINE) && wqe->wr.rdma.rkey == 0x55 &&
	      wqe->wr.rdma.remote_addr == 0xbeef, "wr_rdma_write");
	wqe = ring_slot(&qp->sq, 2);
	check(wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP && wqe->wr.atomic.compare_add == 1 &&
	      wqe->wr.atomic.swap == 2 && wqe->wr.atomic.rkey == 0x77, "wr_atomic_cmp_swp");

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_abort(qpx);
	check(ring_ctl(&qp->sq)->prod == 3, "wr_abort publishes nothing");

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, MAX_SGE + 1, sg);
	ibv_wr_send(qpx);
	ret = ibv_wr_complete(qpx);
	doorbells(&db_send, &db_recv);
	check(ret == EINVAL && ring_ctl(&qp->sq)->prod == 3 && db_send == 0,
	      "failed batch: ret %d, prod %u, %d doorbells", ret, ring_ctl(&qp->sq)->prod,
	      db_send);
	qp_free(qp);
}

static void qp_refuses_what_it_cannot_do(void)
{
	struct stag_qp *qp;

	qp = qp_new(IBV_QPT_RC, NULL, IBV_QP_EX_WITH_TSO);
	check(!qp && errno == EOPNOTSUPP, "send_ops_flags with TSO: errno %d", errno);
	sq_slots = 6;
	qp = qp_new(IBV_QPT_RC, NULL, 0);
	check(!qp && errno == EPROTO, "a send ring of 6 slots: errno %d", errno);
	sq_slots = SQ_SLOTS;
}

static struct stag_cqe *cqe_put(struct stag_cq *cq, uint64_t wr_id, uint32_t opcode)
{
	uint32_t prod = cq->queue.ctl->prod;
	struct stag_cqe *cqe = ring_slot(&cq->queue, prod);

	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = wr_id;
	cqe->opcode = opcode;
	__atomic_store_n(&cq->queue.ctl->prod, prod + 1, __ATOMIC_RELEASE);
	return cqe;
}

/* An XRC INI QP's requests name the remote SRQ; every other QP's slot has 0 there. */
static void xrc_ini_names_the_srq(void)
{
	struct stag_qp *ini = qp_new(IBV_QPT_XRC_SEND, NULL, 0), *rc = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_sge sg = { 0x1000, 10, 0x11 };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .wr.rdma = { .remote_addr = 0xfeed0000, .rkey = 0x99 },
				  .qp_type.xrc.remote_srqn = 0x5678 }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sg, .num_sge = 1 }, *rbad = NULL;
	struct stag_send_wqe *wqe;
	int ret;

	if (!ini || !rc) {
		check(0, "create XRC INI and RC QPs");
		return;
	}
	check(stag_queue_mapped(&ini->sq) && !stag_queue_mapped(&ini->rq),
	      "an XRC INI QP has a send ring and no receive ring");
	ret = post_send(ini, &wr, &bad);
	wqe = ring_slot(&ini->sq, 0);
	check(!ret && wqe->xrc_srqn == 0x5678 && wqe->wr.rdma.rkey == 0x99 &&
	      wqe->wr.rdma.remote_addr == 0xfeed0000, "XRC WRITE: ret %d, xrc_srqn %#x", ret,
	      wqe->xrc_srqn);
	ret = post_send(rc, &wr, &bad);
	wqe = ring_slot(&rc->sq, 0);
	check(!ret && wqe->xrc_srqn == 0, "RC WRITE with remote_srqn set: xrc_srqn %#x",
	      wqe->xrc_srqn);
	ret = stag_post_recv(&ini->vqp.qp, &rwr, &rbad);
	check(ret == EINVAL && rbad == &rwr, "receive on an XRC INI QP: %d", ret);
	qp_free(rc);
	qp_free(ini);
}

/* ibv_wr_set_xrc_srqn(): an XRC INI QP's alone, and it fills the slot. */
static void xrc_wr_set_xrc_srqn(void)
{
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
	struct stag_qp *ini = qp_new(IBV_QPT_XRC_SEND, NULL, ops);
	struct stag_qp *rc = qp_new(IBV_QPT_RC, NULL, ops);
	struct ibv_qp_ex *qpx = ini ? ibv_qp_to_qp_ex(&ini->vqp.qp) : NULL;
	struct stag_send_wqe *wqe;
	int ret;

	if (!qpx || !rc) {
		check(0, "XRC INI and RC QPs with send_ops_flags");
		return;
	}
	check(!rc->vqp.qp_ex.wr_set_xrc_srqn, "an RC QP has no wr_set_xrc_srqn");
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	ibv_wr_send(qpx);
	ibv_wr_set_xrc_srqn(qpx, 0x77);
	ibv_wr_set_sge(qpx, 0x66, 0x4000, 40);
	qpx->wr_id = 2;
	ibv_wr_rdma_read(qpx, 0x55, 0xbeef);
	ibv_wr_set_xrc_srqn(qpx, 0x78);
	ibv_wr_set_sge(qpx, 0x66, 0x5000, 8);
	ret = ibv_wr_complete(qpx);
	check(!ret && ring_ctl(&ini->sq)->prod == 2, "XRC batch of 2: ret %d", ret);
	wqe = ring_slot(&ini->sq, 0);
	check(wqe->opcode == IBV_WR_SEND && wqe->xrc_srqn == 0x77 && wqe->num_sge == 1,
	      "wr_send to SRQ 0x77: xrc_srqn %#x", wqe->xrc_srqn);
	wqe = ring_slot(&ini->sq, 1);
	check(wqe->opcode == IBV_WR_RDMA_READ && wqe->xrc_srqn == 0x78 &&
	      wqe->wr.rdma.rkey == 0x55, "wr_rdma_read to SRQ 0x78: xrc_srqn %#x", wqe->xrc_srqn);
	qp_free(rc);
	qp_free(ini);
}

/* Nothing is posted to a TGT QP, made or opened; a reset with no CQs is fine. */
static void xrc_tgt_has_no_rings(void)
{
	struct verbs_xrcd xrcd = { .xrcd.context = ctx, .handle = 3 };
	struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_XRC_RECV,
					    .comp_mask = IBV_QP_INIT_ATTR_XRCD,
					    .xrcd = &xrcd.xrcd };
	struct ibv_qp_open_attr oattr = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = 0x99, .xrcd = &xrcd.xrcd, .qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND }, *bad = NULL;
	struct ibv_recv_wr rwr = { 0 }, *rbad = NULL;
	struct ibv_qp *qps[2];
	int i, ret;

	qps[0] = stag_create_qp_ex(ctx, &attr);
	qps[1] = stag_open_qp(ctx, &oattr);
	check(qps[0] && qps[1], "create and open XRC TGT QPs: errno %d", errno);
	for (i = 0; i < 2 && qps[i]; i++) {
		struct stag_qp *qp = to_stag_qp(qps[i]);

		qps[i]->state = IBV_QPS_RTS;
		check(!stag_queue_mapped(&qp->sq) && !stag_queue_mapped(&qp->rq),
		      "TGT QP %d: no rings", i);
		ret = stag_post_send(qps[i], &wr, &bad);
		check(ret == EINVAL && bad == &wr, "send on TGT QP %d: %d", i, ret);
		ret = stag_post_recv(qps[i], &rwr, &rbad);
		check(ret == EINVAL && rbad == &rwr, "receive on TGT QP %d: %d", i, ret);
		check(!stag_modify_qp(qps[i], &reset, IBV_QP_STATE), "TGT QP %d to RESET", i);
		check(!stag_destroy_qp(qps[i]), "destroy TGT QP %d", i);
	}
	attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	attr.send_ops_flags = IBV_QP_EX_WITH_SEND;
	qps[0] = stag_create_qp_ex(ctx, &attr);
	check(!qps[0] && errno == EOPNOTSUPP, "a TGT QP with send_ops_flags: errno %d", errno);
}

/* An XRC INI QP reset with a send CQ and no receive CQ. */
static void xrc_ini_reset_without_recv_cq(void)
{
	struct ibv_cq *cq = stag_create_cq(ctx, 10, NULL, 0);
	struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_XRC_SEND,
					    .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = &pd,
					    .send_cq = cq };
	struct ibv_qp *qp = cq ? stag_create_qp_ex(ctx, &attr) : NULL;
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };

	if (!qp) {
		check(0, "an XRC INI QP with a send CQ");
		return;
	}
	cqe_put(to_stag_cq(cq), 1, IBV_WC_SEND)->qp_num = qp->qp_num;
	check(!stag_modify_qp(qp, &reset, IBV_QP_STATE), "INI QP to RESET");
	check(to_stag_cq(cq)->queue.ctl->cons == 1, "the INI's completion dropped from its CQ");
	check(!stag_destroy_qp(qp), "destroy INI QP");
	check(!stag_destroy_cq(cq), "destroy_cq");
}

/*
 * create_srq_ex: XRC, basic and tag matching SRQs on a basic SRQ's ring;
 * tag matching naming an XRC domain refused.
 */
static void srq_ex_types(void)
{
	struct verbs_xrcd xrcd = { .xrcd.context = ctx, .handle = 3 };
	struct ibv_srq_init_attr_ex attr = {
		.srq_context = &xrcd, .attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = &pd, .xrcd = &xrcd.xrcd,
	};
	struct ibv_sge sg = { 0x3000, 30, 0x33 };
	struct ibv_recv_wr wr = { .wr_id = 8, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;
	struct ibv_srq *srq;
	uint32_t num = 0;
	int ret;

	srq = stag_create_srq_ex(ctx, &attr);
	if (!srq) {
		check(0, "create_srq_ex XRC: errno %d", errno);
		return;
	}
	check(!stag_get_srq_num(srq, &num) && num == XSRQ_NUM, "XRC SRQ number %#x", num);
	check(srq->srq_context == &xrcd && srq->pd == &pd, "srq_context and pd filled in");
	ret = stag_post_srq_recv(srq, &wr, &bad);
	check(!ret && to_stag_srq(srq)->queue.ctl->prod == 1 &&
	      ((struct stag_recv_wqe *)ring_slot(&to_stag_srq(srq)->queue, 0))->wr_id == 8,
	      "receive on the XRC SRQ: %d", ret);
	check(!stag_destroy_srq(srq), "destroy XRC SRQ");

	attr.srq_type = IBV_SRQT_BASIC;
	srq = stag_create_srq_ex(ctx, &attr);
	check(srq && to_stag_srq(srq)->vsrq.srq_type == IBV_SRQT_BASIC &&
	      stag_queue_mapped(&to_stag_srq(srq)->queue), "create_srq_ex BASIC");
	if (srq)
		check(!stag_destroy_srq(srq), "destroy basic SRQ");

	attr.srq_type = IBV_SRQT_TM;
	errno = 0;
	srq = stag_create_srq_ex(ctx, &attr);
	check(!srq && errno == EINVAL, "create_srq_ex TM naming a domain: errno %d", errno);
	attr.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
			 IBV_SRQ_INIT_ATTR_TM;
	attr.tm_cap.max_num_tags = 4;
	srq = stag_create_srq_ex(ctx, &attr);
	check(srq && to_stag_srq(srq)->tm && stag_queue_mapped(&to_stag_srq(srq)->queue),
	      "create_srq_ex TM: errno %d", errno);
	if (srq)
		check(!stag_destroy_srq(srq), "destroy tag matching SRQ");
	/* A basic SRQ takes no list operations, without asking the kernel. */
	attr.srq_type = IBV_SRQT_BASIC;
	srq = stag_create_srq_ex(ctx, &attr);
	if (srq) {
		struct ibv_ops_wr op = { .opcode = IBV_WR_TAG_SYNC }, *obad = NULL;

		check(stag_post_srq_ops(srq, &op, &obad) == EINVAL && obad == &op,
		      "ops on a basic SRQ");
		check(!stag_destroy_srq(srq), "destroy basic SRQ");
	}
}

static void cq_poll_takes_what_the_kernel_put(void)
{
	struct ibv_cq *ibcq = stag_create_cq(ctx, 10, NULL, 0);
	struct stag_cq *cq = to_stag_cq(ibcq);
	struct stag_cqe *cqe;
	struct ibv_wc wc[4];
	int n;

	cqe = cqe_put(cq, 1, IBV_WC_RECV);
	cqe->status = IBV_WC_SUCCESS;
	cqe->byte_len = 123;
	cqe->ex = htobe32(0x1234);
	cqe->wc_flags = STAG_WC_WITH_IMM;
	cqe->qp_num = 0x42;
	cqe->src_qp = 0x43;
	cqe->pkey_index = 1;
	cqe->slid = 2;
	cqe->sl = 3;
	cqe->dlid_path_bits = 4;
	cqe_put(cq, 2, IBV_WC_SEND);
	cqe_put(cq, 3, IBV_WC_RDMA_WRITE);

	n = stag_poll_cq(ibcq, 2, wc);
	check(n == 2 && cq->queue.ctl->cons == 2, "poll 2 of 3: %d, cons %u", n,
	      cq->queue.ctl->cons);
	check(wc[0].wr_id == 1 && wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 123 &&
	      wc[0].imm_data == htobe32(0x1234) && (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
	      wc[0].qp_num == 0x42 && wc[0].src_qp == 0x43 && wc[0].pkey_index == 1 &&
	      wc[0].slid == 2 && wc[0].sl == 3 && wc[0].dlid_path_bits == 4,
	      "completion fields");
	n = stag_poll_cq(ibcq, 4, wc);
	check(n == 1 && wc[0].wr_id == 3, "poll the last: %d", n);
	n = stag_poll_cq(ibcq, 4, wc);
	check(n == 0, "poll an empty CQ: %d", n);
	check(!stag_destroy_cq(ibcq), "destroy_cq");
}

static void cq_ex_polls_in_order(void)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 10, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_cq_ex *cqx = stag_create_cq_ex(ctx, &attr);
	struct stag_cq *cq = to_stag_cq(ibv_cq_ex_to_cq(cqx));
	struct ibv_poll_cq_attr pa = {};
	int ret;

	ret = ibv_start_poll(cqx, &pa);
	check(ret == ENOENT, "start_poll on an empty CQ: %d", ret);
	cqe_put(cq, 7, IBV_WC_SEND)->byte_len = 70;
	cqe_put(cq, 8, IBV_WC_RDMA_READ)->status = IBV_WC_REM_ACCESS_ERR;
	ret = ibv_start_poll(cqx, &pa);
	check(!ret && cqx->wr_id == 7 && cqx->status == IBV_WC_SUCCESS &&
	      ibv_wc_read_byte_len(cqx) == 70, "start_poll: %d, wr_id %llu", ret,
	      (unsigned long long)cqx->wr_id);
	ret = ibv_next_poll(cqx);
	check(!ret && cqx->wr_id == 8 && cqx->status == IBV_WC_REM_ACCESS_ERR &&
	      ibv_wc_read_opcode(cqx) == IBV_WC_RDMA_READ, "next_poll: %d", ret);
	ret = ibv_next_poll(cqx);
	check(ret == ENOENT, "next_poll past the end: %d", ret);
	check(cq->queue.ctl->cons == 0, "slots held until end_poll");
	ibv_end_poll(cqx);
	check(cq->queue.ctl->cons == 2, "end_poll gives back 2: cons %u", cq->queue.ctl->cons);

	check(!stag_destroy_cq(ibv_cq_ex_to_cq(cqx)), "destroy_cq");
}

/* A timestamp CQ's 64-byte slots: both clocks of each completion, as written. */
static void cq_ex_reads_timestamps(void)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 10,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_cq_ex *cqx = stag_create_cq_ex(ctx, &attr);
	struct ibv_poll_cq_attr pa = {};
	struct stag_cqe_ts *t;
	struct stag_cq *cq;
	int i, ret;

	check(cqx, "create a timestamp CQ: errno %d", errno);
	if (!cqx)
		return;
	cq = to_stag_cq(ibv_cq_ex_to_cq(cqx));
	check(cq->queue.slot_size == sizeof(*t), "slot size %u", cq->queue.slot_size);
	for (i = 0; i < 2; i++) {
		t = (struct stag_cqe_ts *)cqe_put(cq, 20 + i, IBV_WC_SEND);
		t->completion_ts = 1000 + i;
		t->wallclock_ns = 0x1122334455667788ULL + i;
	}
	ret = ibv_start_poll(cqx, &pa);
	check(!ret && cqx->wr_id == 20 && ibv_wc_read_completion_ts(cqx) == 1000 &&
	      ibv_wc_read_completion_wallclock_ns(cqx) == 0x1122334455667788ULL,
	      "first: %d, ts %llu", ret, (unsigned long long)ibv_wc_read_completion_ts(cqx));
	ret = ibv_next_poll(cqx);
	check(!ret && cqx->wr_id == 21 && ibv_wc_read_completion_ts(cqx) == 1001 &&
	      ibv_wc_read_completion_wallclock_ns(cqx) == 0x1122334455667789ULL,
	      "second: %d", ret);
	ibv_end_poll(cqx);
	check(!stag_destroy_cq(ibv_cq_ex_to_cq(cqx)), "destroy_cq");

	/* Slots too small for the clocks (a kernel that lied): refused, not overrun. */
	cq_ts_slots_short = true;
	errno = 0;
	check(!stag_create_cq_ex(ctx, &attr) && errno == EPROTO,
	      "timestamps in 48-byte slots: errno %d", errno);
	cq_ts_slots_short = false;
}

/* A tag matching CQ's 80-byte slots: each completion's tag and app_ctx, and its clocks. */
static void cq_ex_reads_tm_info(void)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 10,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_cq_ex *cqx = stag_create_cq_ex(ctx, &attr);
	struct ibv_poll_cq_attr pa = {};
	struct ibv_wc_tm_info ti;
	struct stag_cqe_tm *t;
	struct stag_cq *cq;
	int i, ret;

	check(cqx, "create a tag matching CQ: errno %d", errno);
	if (!cqx)
		return;
	cq = to_stag_cq(ibv_cq_ex_to_cq(cqx));
	check(cq->queue.slot_size == sizeof(*t), "slot size %u", cq->queue.slot_size);
	for (i = 0; i < 2; i++) {
		t = (struct stag_cqe_tm *)cqe_put(cq, 30 + i, IBV_WC_TM_RECV);
		t->ts.cqe.wc_flags = IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID;
		t->ts.completion_ts = 2000 + i;
		t->tag = 0x1122334455667788ULL + i;
		t->priv = 0xabc0 + i;
	}
	ret = ibv_start_poll(cqx, &pa);
	ibv_wc_read_tm_info(cqx, &ti);
	check(!ret && cqx->wr_id == 30 && ibv_wc_read_opcode(cqx) == IBV_WC_TM_RECV &&
	      ibv_wc_read_wc_flags(cqx) == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID) &&
	      ti.tag == 0x1122334455667788ULL && ti.priv == 0xabc0 &&
	      ibv_wc_read_completion_ts(cqx) == 2000, "first: %d, tag %#llx", ret,
	      (unsigned long long)ti.tag);
	ret = ibv_next_poll(cqx);
	ibv_wc_read_tm_info(cqx, &ti);
	check(!ret && cqx->wr_id == 31 && ti.tag == 0x1122334455667789ULL && ti.priv == 0xabc1 &&
	      ibv_wc_read_completion_ts(cqx) == 2001, "second: %d", ret);
	ibv_end_poll(cqx);
	check(!stag_destroy_cq(ibv_cq_ex_to_cq(cqx)), "destroy_cq");

	/* Slots too small for the tag (a kernel that lied): refused, not overrun. */
	cq_ts_slots_short = true;
	errno = 0;
	check(!stag_create_cq_ex(ctx, &attr) && errno == EPROTO,
	      "tags in 48-byte slots: errno %d", errno);
	cq_ts_slots_short = false;
}

static void doorbell_leaves_the_ring_alone(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	int ret, db_send, db_recv;

	doorbells(&db_send, &db_recv);
	ret = stagdv_qp_doorbell(&qp->vqp.qp);
	doorbells(&db_send, &db_recv);
	check(!ret && db_send == 1 && ring_ctl(&qp->sq)->prod == 0,
	      "stagdv_qp_doorbell: ret %d, %d doorbells", ret, db_send);
	qp_free(qp);
}

static void mw_alloc_as_the_kernel_answers(void)
{
	struct ibv_mw *mw;

	mw = stag_alloc_mw(&pd, IBV_MW_TYPE_2);
	check(mw && mw->rkey == MW_RKEY && mw->handle == MW_HANDLE &&
	      mw->type == IBV_MW_TYPE_2 && mw->pd == &pd, "alloc_mw type 2");
	if (mw)
		check(!stag_dealloc_mw(mw), "dealloc_mw");

	alloc_mw_ret = EINVAL;
	errno = 0;
	mw = stag_alloc_mw(&pd, 3);
	check(!mw && errno == EINVAL, "alloc_mw the kernel refuses: errno %d", errno);
	alloc_mw_ret = 0;
}

static struct ibv_mw_bind mw_bind_of(struct ibv_mr *mr, uint64_t addr, uint64_t length,
				     unsigned int access)
{
	return (struct ibv_mw_bind){
		.wr_id = 0x77,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = addr, .length = length,
			       .mw_access_flags = access },
	};
}

/* The kernel checks the bind; the provider writes it as asked. */
static void bind_mw_posts_a_bind_wqe(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_mw *mw = stag_alloc_mw(&pd, IBV_MW_TYPE_1);
	struct ibv_mr mr = { .lkey = 0xabcd01, .rkey = 0xabcd01 };
	struct ibv_mw_bind bind = mw_bind_of(&mr, 0x10000, 0x2000, IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ);
	struct stag_send_wqe *wqe = ring_slot(&qp->sq, 0);
	int ret, db_send, db_recv;

	doorbells(&db_send, &db_recv);
	ret = stag_bind_mw(&qp->vqp.qp, mw, &bind);
	doorbells(&db_send, &db_recv);
	check(!ret && ring_ctl(&qp->sq)->prod == 1 && db_send == 1,
	      "bind_mw: ret %d, prod %u, %d doorbells", ret, ring_ctl(&qp->sq)->prod, db_send);
	check(wqe->wr_id == 0x77 && wqe->opcode == IB_UVERBS_WR_BIND_MW &&
	      wqe->send_flags == IBV_SEND_SIGNALED && wqe->num_sge == 0 &&
	      wqe->inline_len == 0 && wqe->ex == 0, "bind WQE header");
	check(wqe->wr.bind.addr == 0x10000 && wqe->wr.bind.length == 0x2000 &&
	      wqe->wr.bind.mw_rkey == MW_RKEY && wqe->wr.bind.new_rkey == 0x12345600 &&
	      wqe->wr.bind.mr_lkey == 0xabcd01 &&
	      wqe->wr.bind.access == (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
	      "bind WQE: addr %#llx length %#llx mw_rkey %#x new_rkey %#x mr_lkey %#x access %#x",
	      (unsigned long long)wqe->wr.bind.addr, (unsigned long long)wqe->wr.bind.length,
	      wqe->wr.bind.mw_rkey, wqe->wr.bind.new_rkey, wqe->wr.bind.mr_lkey,
	      wqe->wr.bind.access);
	check(mw->rkey == 0x12345600, "the window's rkey after the bind: %#x", mw->rkey);

	/* A second bind starts from the rkey the first one gave. */
	ret = stag_bind_mw(&qp->vqp.qp, mw, &bind);
	wqe = ring_slot(&qp->sq, 1);
	check(!ret && wqe->wr.bind.mw_rkey == 0x12345600 && wqe->wr.bind.new_rkey == 0x12345601 &&
	      mw->rkey == 0x12345601, "second bind: mw_rkey %#x new_rkey %#x, rkey %#x",
	      wqe->wr.bind.mw_rkey, wqe->wr.bind.new_rkey, mw->rkey);
	check(!stag_dealloc_mw(mw), "dealloc_mw");
	qp_free(qp);
}

/* A zero-length bind with no region unbinds a type 1 window: lkey 0. */
static void bind_mw_without_a_region(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_mw *mw = stag_alloc_mw(&pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = mw_bind_of(NULL, 0, 0, 0);
	struct stag_send_wqe *wqe = ring_slot(&qp->sq, 0);
	int ret;

	memset(wqe, 0xee, SQ_SLOT_SIZE);
	ret = stag_bind_mw(&qp->vqp.qp, mw, &bind);
	check(!ret && wqe->opcode == IB_UVERBS_WR_BIND_MW && wqe->wr.bind.addr == 0 &&
	      wqe->wr.bind.length == 0 && wqe->wr.bind.mr_lkey == 0 && wqe->wr.bind.access == 0 &&
	      wqe->ex == 0 && wqe->num_sge == 0 && wqe->inline_len == 0 && wqe->reserved0 == 0,
	      "unbind WQE: ret %d mr_lkey %#x length %llu", ret, wqe->wr.bind.mr_lkey,
	      (unsigned long long)wqe->wr.bind.length);
	check(!stag_dealloc_mw(mw), "dealloc_mw");
	qp_free(qp);
}

static void bind_mw_refused(struct stag_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind,
			    const char *what)
{
	uint32_t rkey = mw->rkey;
	int ret, db_send, db_recv;

	doorbells(&db_send, &db_recv);
	errno = 0;
	ret = stag_bind_mw(&qp->vqp.qp, mw, bind);
	doorbells(&db_send, &db_recv);
	check(ret == EINVAL && errno == EINVAL, "%s: ret %d, errno %d", what, ret, errno);
	check(mw->rkey == rkey && ring_ctl(&qp->sq)->prod == 0 && db_send == 0,
	      "%s: rkey %#x, prod %u, %d doorbells", what, mw->rkey, ring_ctl(&qp->sq)->prod,
	      db_send);
}

static void bind_mw_refuses_before_posting(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_mw *mw1 = stag_alloc_mw(&pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = stag_alloc_mw(&pd, IBV_MW_TYPE_2);
	struct ibv_mr mr = { .lkey = 0x42 };
	struct ibv_mw_bind bind = mw_bind_of(&mr, 0x1000, 0x1000, IBV_ACCESS_REMOTE_READ);
	enum ibv_qp_state st;

	bind_mw_refused(qp, mw2, &bind, "ibv_bind_mw of a type 2 window");
	bind.bind_info.mw_access_flags |= IBV_ACCESS_ZERO_BASED;
	bind_mw_refused(qp, mw1, &bind, "zero-based type 1 window");
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	for (st = IBV_QPS_RESET; st <= IBV_QPS_RTR; st++) {
		qp->vqp.qp.state = st;
		bind_mw_refused(qp, mw1, &bind, "QP before RTS");
	}
	check(!stag_dealloc_mw(mw1) && !stag_dealloc_mw(mw2), "dealloc_mw");
	qp_free(qp);
}

/* Type 2: the rkey is the application's; the provider keeps mw->rkey as it is. */
static void post_send_bind_mw_type_2(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, 0);
	struct ibv_mw *mw = stag_alloc_mw(&pd, IBV_MW_TYPE_2);
	struct ibv_mr mr = { .lkey = 0x5501 };
	struct ibv_send_wr wr = {
		.wr_id = 9, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_FENCE,
		.bind_mw = { .mw = mw, .rkey = 0x12345642,
			     .bind_info = { .mr = &mr, .addr = 0x7000, .length = 1,
					    .mw_access_flags = IBV_ACCESS_ZERO_BASED |
							       IBV_ACCESS_REMOTE_ATOMIC } },
	}, *bad;
	struct stag_send_wqe *wqe = ring_slot(&qp->sq, 0);
	int ret;

	ret = post_send(qp, &wr, &bad);
	check(!ret && wqe->wr_id == 9 && wqe->opcode == IB_UVERBS_WR_BIND_MW &&
	      wqe->send_flags == IBV_SEND_FENCE && wqe->num_sge == 0, "type 2 bind WQE: ret %d",
	      ret);
	check(wqe->wr.bind.mw_rkey == MW_RKEY && wqe->wr.bind.new_rkey == 0x12345642 &&
	      wqe->wr.bind.mr_lkey == 0x5501 && wqe->wr.bind.addr == 0x7000 &&
	      wqe->wr.bind.length == 1 &&
	      wqe->wr.bind.access == (IBV_ACCESS_ZERO_BASED | IBV_ACCESS_REMOTE_ATOMIC),
	      "type 2 bind fields: mw_rkey %#x new_rkey %#x", wqe->wr.bind.mw_rkey,
	      wqe->wr.bind.new_rkey);
	check(mw->rkey == MW_RKEY, "mw->rkey %#x after a type 2 bind", mw->rkey);

	wr.bind_mw.mw = NULL;
	ret = post_send(qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr && ring_ctl(&qp->sq)->prod == 1,
	      "BIND_MW without a window: ret %d", ret);
	check(!stag_dealloc_mw(mw), "dealloc_mw");
	qp_free(qp);
}

static void wr_bind_mw_fills_the_slot(void)
{
	struct stag_qp *qp = qp_new(IBV_QPT_RC, NULL, IBV_QP_EX_WITH_BIND_MW |
				    IBV_QP_EX_WITH_RDMA_WRITE);
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(&qp->vqp.qp);
	struct ibv_mw *mw = stag_alloc_mw(&pd, IBV_MW_TYPE_2);
	struct ibv_mr mr = { .lkey = 0x6601 };
	struct ibv_mw_bind_info info = { .mr = &mr, .addr = 0x9000, .length = 0x100,
					 .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct stag_send_wqe *wqe;
	int ret;

	ibv_wr_start(qpx);
	qpx->wr_id = 5;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, mw, ibv_inc_rkey(mw->rkey), &info);
	qpx->wr_id = 6;
	ibv_wr_rdma_write(qpx, ibv_inc_rkey(mw->rkey), 0x9000);
	ibv_wr_set_sge(qpx, 0x6601, 0x9000, 0x10);
	ret = ibv_wr_complete(qpx);
	wqe = ring_slot(&qp->sq, 0);
	check(!ret && ring_ctl(&qp->sq)->prod == 2, "bind and write batch: ret %d", ret);
	check(wqe->wr_id == 5 && wqe->opcode == IB_UVERBS_WR_BIND_MW &&
	      wqe->send_flags == IBV_SEND_SIGNALED && wqe->wr.bind.mw_rkey == MW_RKEY &&
	      wqe->wr.bind.new_rkey == 0x12345600 && wqe->wr.bind.mr_lkey == 0x6601 &&
	      wqe->wr.bind.addr == 0x9000 && wqe->wr.bind.length == 0x100 &&
	      wqe->wr.bind.access == IBV_ACCESS_REMOTE_WRITE, "wr_bind_mw slot");
	wqe = ring_slot(&qp->sq, 1);
	check(wqe->wr_id == 6 && wqe->wr.rdma.rkey == 0x12345600, "the write after the bind");

	ibv_wr_start(qpx);
	ibv_wr_bind_mw(qpx, mw, 1, NULL);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL && ring_ctl(&qp->sq)->prod == 2, "wr_bind_mw without bind_info: %d",
	      ret);
	check(!stag_dealloc_mw(mw), "dealloc_mw");
	qp_free(qp);
}

int main(void)
{
	fd = memfd_create("uverbs", 0);
	if (fd < 0 || ftruncate(fd, MEMFD_SIZE)) {
		perror("memfd");
		return 1;
	}
	sctx.ibv_ctx.context.cmd_fd = fd;
	sctx.ibv_ctx.context.device = &dev.device;
	sctx.qp_ex_mask_offset = stag_qp_ex_mask_offset();
	/* Where the stand-in ibv_qp_to_qp_ex() reads: 0x160 (rdma-core 44), 0x168 (56 on). */
	check(sctx.qp_ex_mask_offset == (int)offsetof(struct verbs_qp, comp_mask),
	      "qp_ex mask offset %#x, the headers' %#zx", sctx.qp_ex_mask_offset,
	      offsetof(struct verbs_qp, comp_mask));

	post_needs_state();
	send_slot_has_the_request();
	send_empty_list_rings_once();
	send_full_ring_enomem();
	send_limits_einval();
	send_inline_copies_bytes();
	send_ud_names_the_ah();
	send_unknown_opcode_stays_unknown();
	recv_rings_only_when_flushing();
	srq_posts_without_doorbell();
	wr_batch_publishes_once();
	qp_refuses_what_it_cannot_do();
	cq_poll_takes_what_the_kernel_put();
	cq_ex_polls_in_order();
	cq_ex_reads_timestamps();
	cq_ex_reads_tm_info();
	doorbell_leaves_the_ring_alone();
	mw_alloc_as_the_kernel_answers();
	bind_mw_posts_a_bind_wqe();
	bind_mw_without_a_region();
	bind_mw_refuses_before_posting();
	post_send_bind_mw_type_2();
	wr_bind_mw_fills_the_slot();
	xrc_ini_names_the_srq();
	xrc_wr_set_xrc_srqn();
	xrc_tgt_has_no_rings();
	xrc_ini_reset_without_recv_cq();
	srq_ex_types();

	printf("ring_test: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
