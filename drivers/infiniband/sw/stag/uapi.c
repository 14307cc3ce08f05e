// SPDX-License-Identifier: GPL-2.0
/*
 * Driver methods on the uverbs ioctl interface: Register Shared Memory
 * Region, as a method of the core's MR object, the query of a PD by its
 * handle that ibv_import_pd() needs, as one of the PD object, and the tag
 * list operations of ibv_post_srq_ops(), as one of the SRQ object.
 */

#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>
#include <rdma/stag-abi.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_std_types.h>

#include "mr.h"
#include "pd.h"
#include "srq.h"
#include "uapi.h"

#define UVERBS_MODULE_NAME stag
#include <rdma/uverbs_named_ioctl.h>

/*
 * The rest of what ib_uverbs_reg_mr does once the driver has built the
 * region: the core's fields, the PD's use count, restrack.
 */
static void shared_mr_init(struct ib_mr *mr, struct ib_pd *pd, struct ib_uobject *uobj,
			   u64 iova, u64 length)
{
	mr->device = pd->device;
	mr->pd = pd;
	mr->type = IB_MR_TYPE_USER;
	mr->uobject = uobj;
	mr->iova = iova;
	mr->length = length;
	atomic_inc(&pd->usecnt);

	rdma_restrack_new(&mr->res, RDMA_RESTRACK_MR);
	rdma_restrack_set_name(&mr->res, NULL);
	rdma_restrack_add(&mr->res);
	uobj->object = mr;
}

/*
 * The IDR lookups have found the source region and the PD in the caller's
 * context and hold them (shared) until the method returns, so neither can
 * be deregistered or reregistered meanwhile.
 */
static int UVERBS_HANDLER(STAG_METHOD_REG_SHARED_MR)(struct uverbs_attr_bundle *attrs)
{
	struct ib_uobject *uobj = uverbs_attr_get_uobject(attrs, STAG_ATTR_REG_SHARED_MR_HANDLE);
	struct ib_mr *src = uverbs_attr_get_obj(attrs, STAG_ATTR_REG_SHARED_MR_SRC_HANDLE);
	struct ib_pd *pd = uverbs_attr_get_obj(attrs, STAG_ATTR_REG_SHARED_MR_PD_HANDLE);
	struct ib_mr *mr;
	u32 access;
	u64 iova;
	int ret;

	ret = uverbs_copy_from(&iova, attrs, STAG_ATTR_REG_SHARED_MR_IOVA);
	if (ret)
		return ret;
	ret = uverbs_get_flags32(&access, attrs, STAG_ATTR_REG_SHARED_MR_ACCESS_FLAGS,
				 IB_ACCESS_SUPPORTED);
	if (ret)
		return ret;
	ret = ib_check_mr_access(pd->device, access);
	if (ret)
		return ret;

	mr = stag_mr_reg_shared(pd, src, iova, access);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	shared_mr_init(mr, pd, uobj, iova, src->length);

	/*
	 * From here the uobject owns the region: if copying the keys out
	 * fails, the core aborts the uobject and its destroy hook
	 * (ib_dereg_mr_user) deregisters the region and drops the PD.
	 */
	uverbs_finalize_uobj_create(attrs, STAG_ATTR_REG_SHARED_MR_HANDLE);

	ret = uverbs_copy_to(attrs, STAG_ATTR_REG_SHARED_MR_RESP_LKEY, &mr->lkey,
			     sizeof(mr->lkey));
	if (ret)
		return ret;
	return uverbs_copy_to(attrs, STAG_ATTR_REG_SHARED_MR_RESP_RKEY, &mr->rkey,
			      sizeof(mr->rkey));
}

DECLARE_UVERBS_NAMED_METHOD(STAG_METHOD_REG_SHARED_MR,
			    UVERBS_ATTR_IDR(STAG_ATTR_REG_SHARED_MR_HANDLE, UVERBS_OBJECT_MR,
					    UVERBS_ACCESS_NEW, UA_MANDATORY),
			    UVERBS_ATTR_IDR(STAG_ATTR_REG_SHARED_MR_SRC_HANDLE, UVERBS_OBJECT_MR,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_IDR(STAG_ATTR_REG_SHARED_MR_PD_HANDLE, UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(STAG_ATTR_REG_SHARED_MR_IOVA, UVERBS_ATTR_TYPE(u64),
					       UA_MANDATORY),
			    UVERBS_ATTR_FLAGS_IN(STAG_ATTR_REG_SHARED_MR_ACCESS_FLAGS,
						 enum ib_uverbs_access_flags, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(STAG_ATTR_REG_SHARED_MR_RESP_LKEY,
						UVERBS_ATTR_TYPE(u32), UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(STAG_ATTR_REG_SHARED_MR_RESP_RKEY,
						UVERBS_ATTR_TYPE(u32), UA_MANDATORY));

ADD_UVERBS_METHODS(stag_mr, UVERBS_OBJECT_MR, &UVERBS_METHOD(STAG_METHOD_REG_SHARED_MR));

/*
 * The IDR lookup has found the PD in the caller's context, or failed the
 * method with ENOENT; it holds it until the method returns.
 */
static int UVERBS_HANDLER(STAG_METHOD_QUERY_PD)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *pd = uverbs_attr_get_obj(attrs, STAG_ATTR_QUERY_PD_HANDLE);
	u32 pdn = to_stag_pd(pd)->pdn;

	return uverbs_copy_to(attrs, STAG_ATTR_QUERY_PD_RESP_PDN, &pdn, sizeof(pdn));
}

DECLARE_UVERBS_NAMED_METHOD(STAG_METHOD_QUERY_PD,
			    UVERBS_ATTR_IDR(STAG_ATTR_QUERY_PD_HANDLE, UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(STAG_ATTR_QUERY_PD_RESP_PDN,
						UVERBS_ATTR_TYPE(u32), UA_MANDATORY));

ADD_UVERBS_METHODS(stag_pd, UVERBS_OBJECT_PD, &UVERBS_METHOD(STAG_METHOD_QUERY_PD));

/*
 * The IDR lookup has found the SRQ in the caller's context and holds it
 * until the method returns: it cannot be destroyed meanwhile.
 */
static int UVERBS_HANDLER(STAG_METHOD_SRQ_OPS)(struct uverbs_attr_bundle *attrs)
{
	struct ib_srq *ibsrq = uverbs_attr_get_obj(attrs, STAG_ATTR_SRQ_OPS_HANDLE);
	struct stag_srq_op op;
	u32 handle = 0;
	int ret;

	ret = uverbs_copy_from(&op, attrs, STAG_ATTR_SRQ_OPS_OP);
	if (ret)
		return ret;
	if (op.reserved)
		return -EINVAL;
	ret = stag_srq_tm_op(to_stag_srq(ibsrq), &op, &handle);
	if (ret)
		return ret;
	return uverbs_copy_to(attrs, STAG_ATTR_SRQ_OPS_RESP_HANDLE, &handle, sizeof(handle));
}

DECLARE_UVERBS_NAMED_METHOD(STAG_METHOD_SRQ_OPS,
			    UVERBS_ATTR_IDR(STAG_ATTR_SRQ_OPS_HANDLE, UVERBS_OBJECT_SRQ,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(STAG_ATTR_SRQ_OPS_OP,
					       UVERBS_ATTR_TYPE(struct stag_srq_op), UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(STAG_ATTR_SRQ_OPS_RESP_HANDLE,
						UVERBS_ATTR_TYPE(u32), UA_MANDATORY));

ADD_UVERBS_METHODS(stag_srq, UVERBS_OBJECT_SRQ, &UVERBS_METHOD(STAG_METHOD_SRQ_OPS));

/* The device's driver_def: merged into the core's uverbs API at registration. */
const struct uapi_definition stag_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_MR, &stag_mr),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &stag_pd),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_SRQ, &stag_srq),
	{}
};
