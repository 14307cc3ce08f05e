// SPDX-License-Identifier: GPL-2.0
/*
 * Send queue slots written by hand (struct stag_send_wqe, through
 * stagdv_qp_rings() and stagdv_qp_doorbell()) instead of by the provider:
 * what a hostile process does, and what a test does that must never touch
 * a libibverbs object another thread may free. See raw.h.
 */
#include <stdio.h>
#include <string.h>

#include <rdma/stag-abi.h>

#include "raw.h"

bool raw_open(struct end *e, struct raw *r)
{
	struct stagdv_ring rq;
	int ret;

	if (!is_stag()) {
		case_skip("raw WQEs are stag's ring format");
		return false;
	}
	r->e = e;
	ret = stagdv_qp_rings(e->qp, &r->sq, &rq);
	if (ret) {
		t_fail("stagdv_qp_rings: %s", strerror(ret));
		return false;
	}
	if (!r->sq.num_slots || r->sq.num_slots & (r->sq.num_slots - 1) ||
	    r->sq.slot_size < STAG_SEND_WQE_HDR_SIZE + sizeof(struct stag_sge)) {
		t_fail("send ring of %u slots of %u bytes", r->sq.num_slots, r->sq.slot_size);
		return false;
	}
	r->ctl = r->sq.ctl;
	r->prod = __atomic_load_n(&r->ctl->prod, __ATOMIC_ACQUIRE);
	return true;
}

/* Fills the next slot with @w and @tail after its header, without publishing it. */
void raw_write(struct raw *r, const struct stag_send_wqe *w, const void *tail, size_t len)
{
	char *slot = (char *)r->sq.slots + (r->prod & (r->sq.num_slots - 1)) * r->sq.slot_size;

	if (len > r->sq.slot_size - STAG_SEND_WQE_HDR_SIZE)
		len = r->sq.slot_size - STAG_SEND_WQE_HDR_SIZE;
	memset(slot, 0, r->sq.slot_size);
	memcpy(slot, w, sizeof(*w));
	memcpy(slot + STAG_SEND_WQE_HDR_SIZE, tail, len);
	r->prod++;
}

/* Publishes what raw_write() wrote (a release store of prod) and rings the doorbell. */
int raw_publish(struct raw *r, uint32_t prod)
{
	__atomic_store_n(&r->ctl->prod, prod, __ATOMIC_RELEASE);
	return stagdv_qp_doorbell(r->e->qp);
}

int raw_post(struct raw *r, const struct stag_send_wqe *w, const void *tail, size_t len)
{
	raw_write(r, w, tail, len);
	return raw_publish(r, r->prod);
}
