/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag UD duplicate filter: a window of PSNs taken, per sender.
 */
#ifndef _STAG_DEDUP_H
#define _STAG_DEDUP_H

#include <linux/bitmap.h>
#include <linux/types.h>

#define STAG_DEDUP_BITS		256	/* PSNs remembered behind the newest */
#define STAG_DEDUP_SENDERS	8	/* senders remembered, least recent replaced */
#define STAG_DEDUP_FORGET	HZ	/* silence after which a sender starts over */

/* One sender (source address and QP): the newest PSN taken and those before. */
struct stag_dedup_sender {
	bool used;
	u32 addr;		/* IPv4 source, or a hash of the IPv6 one */
	u32 sqpn;
	u32 top;		/* the newest PSN taken */
	unsigned long last;	/* jiffies when a packet was last taken */
	DECLARE_BITMAP(seen, STAG_DEDUP_BITS);	/* bit i: top - i taken */
};

struct stag_dedup {
	struct stag_dedup_sender sender[STAG_DEDUP_SENDERS];
};

enum stag_dedup_verdict {
	STAG_DEDUP_TAKE,	/* not seen: deliver it */
	STAG_DEDUP_TWICE,	/* taken already */
	STAG_DEDUP_STALE,	/* too far behind the window to tell */
};

void stag_dedup_reset(struct stag_dedup *d);
enum stag_dedup_verdict stag_dedup_take(struct stag_dedup *d, u32 addr, u32 sqpn, u32 psn,
					unsigned long now);

#endif /* _STAG_DEDUP_H */
