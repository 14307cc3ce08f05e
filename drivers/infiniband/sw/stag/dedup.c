// SPDX-License-Identifier: GPL-2.0
/*
 * The UD duplicate filter. A network may deliver a datagram twice (a
 * flooding switch, a link layer that retries, a netem duplicate that is
 * then delayed behind a hundred others) and UD has no ACKs to tell; but a
 * sender numbers every packet it sends with the next PSN of its QP (IBA
 * 9.7.1; rxe and hardware do), so a receiver can do what IPsec and
 * WireGuard do with their counters: remember, per sender, the newest PSN
 * taken and which of the STAG_DEDUP_BITS before it were taken too.
 *
 * A PSN ahead of the newest moves the window; one inside it is taken once;
 * one behind it cannot be told from a duplicate and is dropped, unless the
 * sender has been silent for STAG_DEDUP_FORGET: a QP destroyed and its
 * number given to a new one starts at a random PSN, and must not be
 * silenced for good because that PSN happens to lie behind the old one's.
 * An old duplicate that arrives after such a silence is taken: the window
 * bounds the memory, not the network's delay. So does the number of
 * senders: the least recently heard one is forgotten for a new one.
 *
 * Nothing here knows a QP: the caller serializes (the responder's mutex).
 */

#include <linux/jiffies.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "dedup.h"
#include "pkt.h"

void stag_dedup_reset(struct stag_dedup *d)
{
	memset(d, 0, sizeof(*d));
}
EXPORT_SYMBOL_IF_KUNIT(stag_dedup_reset);

static void start(struct stag_dedup_sender *s, u32 addr, u32 sqpn, u32 psn)
{
	s->used = true;
	s->addr = addr;
	s->sqpn = sqpn;
	s->top = psn;
	bitmap_zero(s->seen, STAG_DEDUP_BITS);
}

/* The sender's entry, or the least recently heard one, started over. */
static struct stag_dedup_sender *sender(struct stag_dedup *d, u32 addr, u32 sqpn, u32 psn)
{
	struct stag_dedup_sender *s, *lru = NULL;

	for (s = d->sender; s < d->sender + STAG_DEDUP_SENDERS; s++) {
		if (s->used && s->addr == addr && s->sqpn == sqpn)
			return s;
		if (!lru || !s->used || (lru->used && time_before(s->last, lru->last)))
			lru = s;
	}
	start(lru, addr, sqpn, psn);
	return lru;
}

/**
 * stag_dedup_take() - is this UD packet one to deliver?
 * @d: the QP's filter
 * @addr: the packet's source address (IPv4, or a hash of IPv6)
 * @sqpn: its DETH source QP
 * @psn: its PSN
 * @now: jiffies
 *
 * Return: STAG_DEDUP_TAKE, and the PSN is remembered as taken; or why not.
 */
enum stag_dedup_verdict stag_dedup_take(struct stag_dedup *d, u32 addr, u32 sqpn, u32 psn,
					unsigned long now)
{
	struct stag_dedup_sender *s;
	int ahead;
	u32 back;

	s = sender(d, addr, sqpn, psn);
	ahead = stag_psn_cmp(psn, s->top) >> 8;	/* sign-extended distance */
	if (ahead > 0) {
		if (ahead >= STAG_DEDUP_BITS)
			bitmap_zero(s->seen, STAG_DEDUP_BITS);
		else
			bitmap_shift_left(s->seen, s->seen, ahead, STAG_DEDUP_BITS);
		s->top = psn;
		back = 0;
	} else {
		back = -ahead;
		if (back >= STAG_DEDUP_BITS) {
			if (time_before(now, s->last + STAG_DEDUP_FORGET))
				return STAG_DEDUP_STALE;
			start(s, addr, sqpn, psn);
			back = 0;
		}
	}
	if (test_bit(back, s->seen))
		return STAG_DEDUP_TWICE;
	__set_bit(back, s->seen);
	s->last = now;
	return STAG_DEDUP_TAKE;
}
EXPORT_SYMBOL_IF_KUNIT(stag_dedup_take);
