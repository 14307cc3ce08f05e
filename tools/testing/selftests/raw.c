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

/*
 * Whether the case's device has FLUSH (both placement types in
 * device_cap_flags_ex); the case skips if not. Before 6.2 the kernel's
 * verbs refuse a region with the flush rights, and stag does not
 * advertise it there.
 */
bool raw_have_flush(void)
{
	struct ibv_device_attr_ex attr;

	if (ibv_query_device_ex(ctx, NULL, &attr) ||
	    (attr.device_cap_flags_ex & (3ULL << 38)) != 3ULL << 38) {
		case_skip("the device does not advertise FLUSH (a kernel before 6.2)");
		return false;
	}
	return true;
}

/* A signaled FLUSH WQE, as the provider of a newer rdma-core writes one. */
struct stag_send_wqe raw_wqe_flush(uint64_t wr_id, uint32_t rkey, uint64_t addr, uint64_t len,
				   uint8_t type, uint8_t level)
{
	struct stag_send_wqe w = { .wr_id = wr_id, .opcode = WR_FLUSH,
				   .send_flags = IBV_SEND_SIGNALED };

	w.wr.flush.remote_addr = addr;
	w.wr.flush.length = len;
	w.wr.flush.rkey = rkey;
	w.wr.flush.type = type;
	w.wr.flush.level = level;
	return w;
}
