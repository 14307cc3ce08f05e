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

#endif /* STAG_SELFTESTS_RAW_H */
