// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag direct verbs (stagdv.h), and the PD query ibv_import_pd() needs:
 * driver methods of stag.ko, called through the uverbs ioctl interface.
 * libibverbs' ioctl helpers are private to rdma-core, so the command is
 * built here from the kernel uapi headers.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "qp.h"
#include "stag.h"
#include "stagdv.h"
#include "wq.h"

#define STAGDV_EXPORT __attribute__((visibility("default")))

enum {
	ATTR_HANDLE,
	ATTR_SRC_HANDLE,
	ATTR_PD_HANDLE,
	ATTR_IOVA,
	ATTR_ACCESS_FLAGS,
	ATTR_RESP_LKEY,
	ATTR_RESP_RKEY,
	ATTR_COUNT
};

struct reg_shared_mr_cmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[ATTR_COUNT];
};

static_assert(offsetof(struct reg_shared_mr_cmd, attrs) == sizeof(struct ib_uverbs_ioctl_hdr),
	      "attributes right after the header");

/* Only the stag provider's contexts can be handed its driver methods. */
static bool is_stag_context(struct ibv_context *ctx)
{
	const struct verbs_device *vdev = verbs_get_device(ctx->device);

	return vdev->ops && vdev->ops->name && !strcmp(vdev->ops->name, "stag");
}

static void set_attr(struct ib_uverbs_attr *attr, uint16_t id, uint16_t len, uint64_t data)
{
	attr->attr_id = id;
	attr->len = len;
	attr->flags = UVERBS_ATTR_F_MANDATORY;
	attr->data = data;
}

struct query_pd_cmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[2];
};

/*
 * STAG_METHOD_QUERY_PD: is @pd_handle a PD of the context, and its number.
 * Return: 0, or an errno (ENOENT: no such PD).
 */
int stag_query_pd_ioctl(struct ibv_context *ctx, uint32_t pd_handle, uint32_t *pdn)
{
	struct query_pd_cmd cmd = {};

	cmd.hdr.length = sizeof(cmd);
	cmd.hdr.object_id = UVERBS_OBJECT_PD;
	cmd.hdr.method_id = STAG_METHOD_QUERY_PD;
	cmd.hdr.num_attrs = 2;
	set_attr(&cmd.attrs[0], STAG_ATTR_QUERY_PD_HANDLE, 0, pd_handle);
	set_attr(&cmd.attrs[1], STAG_ATTR_QUERY_PD_RESP_PDN, sizeof(*pdn), (uintptr_t)pdn);
	return ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &cmd) ? errno : 0;
}

struct srq_ops_cmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[3];
};

/*
 * STAG_METHOD_SRQ_OPS: one tag list operation on a tag matching SRQ; an
 * ADD's handle in @handle. Return: 0, or an errno.
 */
int stag_srq_ops_ioctl(struct ibv_srq *srq, const struct stag_srq_op *op, uint32_t *handle)
{
	struct srq_ops_cmd cmd = {};

	cmd.hdr.length = sizeof(cmd);
	cmd.hdr.object_id = UVERBS_OBJECT_SRQ;
	cmd.hdr.method_id = STAG_METHOD_SRQ_OPS;
	cmd.hdr.num_attrs = 3;
	set_attr(&cmd.attrs[0], STAG_ATTR_SRQ_OPS_HANDLE, 0, srq->handle);
	set_attr(&cmd.attrs[1], STAG_ATTR_SRQ_OPS_OP, sizeof(*op), (uintptr_t)op);
	set_attr(&cmd.attrs[2], STAG_ATTR_SRQ_OPS_RESP_HANDLE, sizeof(*handle), (uintptr_t)handle);
	return ioctl(srq->context->cmd_fd, RDMA_VERBS_IOCTL, &cmd) ? errno : 0;
}

/* Return: 0 with the new handle and keys in @vmr, or an errno. */
static int reg_shared_mr_ioctl(struct ibv_mr *src, struct ibv_pd *pd, uint64_t iova,
			       int access, struct verbs_mr *vmr)
{
	struct reg_shared_mr_cmd cmd = {};
	uint32_t lkey = 0, rkey = 0;

	cmd.hdr.length = sizeof(cmd);
	cmd.hdr.object_id = UVERBS_OBJECT_MR;
	cmd.hdr.method_id = STAG_METHOD_REG_SHARED_MR;
	cmd.hdr.num_attrs = ATTR_COUNT;
	/* Objects and inline values travel in data; an object's len must be 0. */
	set_attr(&cmd.attrs[ATTR_HANDLE], STAG_ATTR_REG_SHARED_MR_HANDLE, 0, 0);
	set_attr(&cmd.attrs[ATTR_SRC_HANDLE], STAG_ATTR_REG_SHARED_MR_SRC_HANDLE, 0,
		 src->handle);
	set_attr(&cmd.attrs[ATTR_PD_HANDLE], STAG_ATTR_REG_SHARED_MR_PD_HANDLE, 0, pd->handle);
	set_attr(&cmd.attrs[ATTR_IOVA], STAG_ATTR_REG_SHARED_MR_IOVA, sizeof(iova), iova);
	/* Flags go as 64 bits, as the kernel asks of new userspace. */
	set_attr(&cmd.attrs[ATTR_ACCESS_FLAGS], STAG_ATTR_REG_SHARED_MR_ACCESS_FLAGS,
		 sizeof(uint64_t), (uint32_t)access);
	set_attr(&cmd.attrs[ATTR_RESP_LKEY], STAG_ATTR_REG_SHARED_MR_RESP_LKEY, sizeof(lkey),
		 (uintptr_t)&lkey);
	set_attr(&cmd.attrs[ATTR_RESP_RKEY], STAG_ATTR_REG_SHARED_MR_RESP_RKEY, sizeof(rkey),
		 (uintptr_t)&rkey);

	if (ioctl(pd->context->cmd_fd, RDMA_VERBS_IOCTL, &cmd))
		return errno;

	/* The kernel writes the new object's handle back into its attribute. */
	vmr->ibv_mr.handle = cmd.attrs[ATTR_HANDLE].data;
	vmr->ibv_mr.lkey = lkey;
	vmr->ibv_mr.rkey = rkey;
	return 0;
}

/*
 * The region is filled as ibv_cmd_reg_mr() and ibv_reg_mr() fill one, so
 * that ibv_dereg_mr() releases it like any other: through the context's
 * dereg_mr (stag_dereg_mr), then undoing the DONTFORK count on the range.
 */
STAGDV_EXPORT struct ibv_mr *stagdv_reg_shared_mr(struct ibv_mr *src, struct ibv_pd *pd,
						  uint64_t iova, int access)
{
	struct stag_mr *mr;
	int ret;

	if (!src || !pd || src->context != pd->context || !is_stag_context(pd->context)) {
		errno = EINVAL;
		return NULL;
	}

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	/*
	 * ibv_dereg_mr() undoes a MADV_DONTFORK on the range of every
	 * IBV_MR_TYPE_MR region, as ibv_reg_mr() set one: a shared region
	 * takes its own count on the range too.
	 */
	if (!(access & IBV_ACCESS_ON_DEMAND) && ibv_dontfork_range(src->addr, src->length)) {
		ret = errno ? errno : ENOMEM;
		goto err_free_mr;
	}

	ret = reg_shared_mr_ioctl(src, pd, iova, access, &mr->vmr);
	if (ret)
		goto err_dofork;

	mr->vmr.ibv_mr.context = pd->context;
	mr->vmr.ibv_mr.pd = pd;
	mr->vmr.ibv_mr.addr = src->addr;
	mr->vmr.ibv_mr.length = src->length;
	mr->vmr.mr_type = IBV_MR_TYPE_MR;
	mr->vmr.access = access;
	return &mr->vmr.ibv_mr;

err_dofork:
	if (!(access & IBV_ACCESS_ON_DEMAND))
		ibv_dofork_range(src->addr, src->length);
err_free_mr:
	free(mr);
	errno = ret;
	return NULL;
}

static void ring_info(const struct stag_queue *q, struct stagdv_ring *ring)
{
	memset(ring, 0, sizeof(*ring));
	if (!stag_queue_mapped(q))
		return;
	ring->ctl = q->ctl;
	ring->slots = q->slots;
	ring->num_slots = q->num_slots;
	ring->slot_size = q->slot_size;
}

static int qp_rings(struct stag_qp *qp, struct stagdv_ring *sq, struct stagdv_ring *rq)
{
	if (sq)
		ring_info(&qp->sq, sq);
	if (rq)
		ring_info(&qp->rq, rq);
	return 0;
}

/* Every QP of a stag context is a struct stag_qp. */
static bool is_stag_qp(struct ibv_qp *qp)
{
	return qp && is_stag_context(qp->context);
}

STAGDV_EXPORT int stagdv_qp_rings(struct ibv_qp *ibqp, struct stagdv_ring *sq,
				  struct stagdv_ring *rq)
{
	return is_stag_qp(ibqp) ? qp_rings(to_stag_qp(ibqp), sq, rq) : EINVAL;
}

STAGDV_EXPORT int stagdv_wq_ring(struct ibv_wq *ibwq, struct stagdv_ring *rq)
{
	if (!ibwq || !is_stag_context(ibwq->context))
		return EINVAL;
	ring_info(&to_stag_wq(ibwq)->queue, rq);
	return 0;
}

STAGDV_EXPORT int stagdv_qp_doorbell(struct ibv_qp *ibqp)
{
	return is_stag_qp(ibqp) ? stag_sq_doorbell(ibqp) : EINVAL;
}
