/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag libibverbs provider: queue pairs. The control path (qp.c) wraps the
 * ibv_cmd_* calls and maps the rings; the send path (send.c) writes send
 * WQEs for ibv_post_send() and for the ibv_wr_*() API.
 */
#ifndef STAG_QP_H
#define STAG_QP_H

#include "queue.h"
#include "stag.h"

struct stag_qp {
	union {
		struct verbs_qp vqp;
		/* libibverbs may place comp_mask further in; see verbs_qp. */
		uint8_t vqp_room[VERBS_QP_ROOM];
	};
	struct stag_queue sq;		/* not mapped for an XRC TGT QP */
	struct stag_queue rq;		/* not mapped with an SRQ, nor for XRC */
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	/*
	 * The ibv_wr_*() batch, from wr_start to wr_complete or wr_abort,
	 * with sq.lock held: the WQE the wr_set_*() calls fill (NULL after an
	 * error), and the first error, which drops the whole batch.
	 */
	struct stag_send_wqe *wr_cur;
	int wr_err;
};

static inline struct stag_qp *to_stag_qp(struct ibv_qp *qp)
{
	return container_of(qp, struct stag_qp, vqp.qp);
}

int stag_qp_ex_mask_offset(void);
struct ibv_qp *stag_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *stag_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *stag_open_qp(struct ibv_context *ctx, struct ibv_qp_open_attr *attr);
int stag_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask);
int stag_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr);
int stag_destroy_qp(struct ibv_qp *ibqp);
int stag_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/* send.c */
#define STAG_QP_SEND_OPS	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
				 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |	     \
				 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
				 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |			     \
				 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW |	     \
				 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_ATOMIC_WRITE | \
				 STAG_QP_EX_WITH_FLUSH)

/*
 * ibv_wr_flush() is rdma-core 45's: the provider built against an older
 * one (Debian 12's 44) has no slot for it (the Makefile probes).
 */
#ifdef STAG_HAVE_WR_FLUSH
#define STAG_QP_EX_WITH_FLUSH	IBV_QP_EX_WITH_FLUSH
#else
#define STAG_QP_EX_WITH_FLUSH	0
#endif

void stag_qp_set_ex_ops(struct stag_qp *qp);
int stag_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);

#endif /* STAG_QP_H */
