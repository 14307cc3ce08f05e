/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag responder resources: the reads and atomics an RC responder keeps
 * so that a requester may ask for them again (IBA 9.7.5.1.5).
 */
#ifndef _STAG_RDRES_H
#define _STAG_RDRES_H

#include <linux/types.h>

struct stag_pkt;

/*
 * One read or atomic: the read's range, or the atomic's result. An atomic
 * write is kept as an atomic without a result, under its own opcode.
 */
struct stag_rdres {
	bool used;
	bool atomic;
	u8 opcode;		/* an atomic's: a duplicate must have the same */
	u32 first_psn;
	u32 last_psn;
	u64 va;
	u32 rkey;
	u32 len;
	u64 orig;
};

/* max_dest_rd_atomic of them, reused oldest first. */
struct stag_rdres_table {
	struct stag_rdres *res;	/* STAG_RDRES_MAX of them */
	u32 next;
};

#define STAG_RDRES_MAX	128

int stag_rdres_init(struct stag_rdres_table *t);
void stag_rdres_uninit(struct stag_rdres_table *t);
void stag_rdres_reset(struct stag_rdres_table *t);
struct stag_rdres *stag_rdres_new(struct stag_rdres_table *t, u32 n);
struct stag_rdres *stag_rdres_find(struct stag_rdres_table *t, u32 n, u32 psn);
bool stag_rdres_may_replay(const struct stag_rdres *r, const struct stag_pkt *p, u32 mtu);

#endif /* _STAG_RDRES_H */
