// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: memory windows. alloc and dealloc wrap
 * ibv_cmd_alloc_mw and ibv_cmd_dealloc_mw; ibv_bind_mw posts a BIND_MW
 * send WQE, as rdma-core's rxe provider does, and the kernel checks every
 * rule of the bind when it executes it (a violation completes the WQE
 * with IBV_WC_MW_BIND_ERR). Type 2 windows are bound with a BIND_MW work
 * request of the application's own (send.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "mw.h"
#include "qp.h"

/* Both directions carry the core command and response only. */
struct ibv_mw *stag_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct stag_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;

	/* The kernel refuses a type other than 1 and 2. */
	ret = ibv_cmd_alloc_mw(pd, type, &mw->ibv_mw, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return &mw->ibv_mw;
}

int stag_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	/* On failure the kernel still holds the window, so it must stay valid. */
	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;

	free(to_stag_mw(mw));
	return 0;
}

/*
 * Only type 1 windows bind through ibv_bind_mw, and a type 1 window is
 * never zero-based (IBA o10-36.2.2); both are the caller's mistakes, found
 * before anything is posted. The new rkey is the old one with the next key
 * byte. mw->rkey takes it once the WQE is posted: the bind completes later
 * on the send CQ, and an application that sees IBV_WC_MW_BIND_ERR there
 * knows that the window kept its old rkey.
 */
int stag_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1 ||
	    (mw_bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED))
		ret = EINVAL;
	else
		ret = stag_post_send(qp, &wr, &bad);
	if (ret) {
		errno = ret;
		return ret;
	}
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
