/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A QP's send ring written by hand. See raw.c.
 */
#ifndef STAG_SELFTESTS_RAW_H
#define STAG_SELFTESTS_RAW_H

#include "qp.h"
#include "stagdv.h"

struct raw {
	struct end *e;
	struct stagdv_ring sq;
	struct stag_queue_ctl *ctl;
	uint32_t prod;
};

bool raw_open(struct end *e, struct raw *r);
void raw_write(struct raw *r, const struct stag_send_wqe *w, const void *tail, size_t len);
int raw_publish(struct raw *r, uint32_t prod);
int raw_post(struct raw *r, const struct stag_send_wqe *w, const void *tail, size_t len);

/*
 * FLUSH (IBA 1.5), which Debian 12's rdma-core (44) cannot post: its WQEs
 * are written by hand. The kernel's values (6.2's ib_user_verbs.h; Debian
 * 12's headers are 6.1's).
 */
#define WR_FLUSH		14
#define WC_FLUSH		8
#define ACC_FLUSH_GLOBAL	0x100
#define ACC_FLUSH_PERSISTENT	0x200
#define FLUSH_GLOBAL		1
#define FLUSH_PERSISTENT	2
#define FLUSH_RANGE		0
#define FLUSH_MR		1

bool raw_have_flush(void);
struct stag_send_wqe raw_wqe_flush(uint64_t wr_id, uint32_t rkey, uint64_t addr, uint64_t len,
				   uint8_t type, uint8_t level);

#endif /* STAG_SELFTESTS_RAW_H */
