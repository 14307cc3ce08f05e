/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag RoCE: the RoCE v2 transport. roce.c takes packets in from UDP port
 * 4791 and hands them to their QP, and sends a QP's packets out; the
 * requester's protocol is in roce_req.c, the responder's in roce_resp.c.
 */
#ifndef _STAG_ROCE_H
#define _STAG_ROCE_H

#include <linux/skbuff.h>
#include <net/dst_cache.h>

#include "net.h"
#include "pkt.h"

struct stag_av;
struct stag_dev;
struct stag_qp;

/* Bits in stag_roce_qp.flags. */
enum {
	STAG_ROCE_TX_BLOCKED,	/* waits for packets in flight to go */
};

/*
 * A QP's side of the wire. Received packets wait in rx_req (requests, for
 * the responder) and rx_resp (responses, for the requester) until the
 * QP's work takes them; both are bounded. tx_skbs counts the QP's packets
 * the stack has not freed yet: past STAG_ROCE_TX_HIGH the QP stops
 * sending until they drain.
 */
struct stag_roce_qp {
	struct sk_buff_head rx_req;
	struct sk_buff_head rx_resp;
	atomic_t tx_skbs;
	unsigned long flags;
	/* RC, UC: set at RTR, read by both sides. */
	struct stag_path path;
	struct dst_cache dst;
	/* Packets on their way out, under sq.mutex and resp_mutex. */
	struct stag_net_batch tx_req;
	struct stag_net_batch tx_resp;
	bool wire;		/* the QP's peer is reached through the wire */
	/*
	 * Raised at each RESET, after the flag above is lowered. A packet
	 * carries the number it was checked under (stag_roce_cb) to the QP's
	 * work, which drops it when they differ: a RESET and a new
	 * connection came between the check and the work.
	 */
	u32 gen;
};

/* What a received packet carries in skb->cb from its check to the QP's work. */
struct stag_roce_cb {
	u32 gen;
};

static inline struct stag_roce_cb *stag_roce_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct stag_roce_cb) > sizeof(skb->cb));
	return (struct stag_roce_cb *)skb->cb;
}

#define STAG_ROCE_RX_MAX	512
#define STAG_ROCE_TX_HIGH	128
#define STAG_ROCE_TX_LOW	32

/*
 * How close past the PSN awaited a packet must be to show that its sender
 * went back and started a new round whose first packet was lost too (a
 * packet merely reordered is seldom that close): the second NAK, or the
 * read asked again, that saves an ACK timeout.
 */
#define STAG_ROCE_NEW_ROUND	8

int stag_roce_get(void);
void stag_roce_put(void);
bool stag_roce_up(void);

int stag_roce_qp_init(struct stag_qp *qp);
void stag_roce_qp_uninit(struct stag_qp *qp);
void stag_roce_qp_connect(struct stag_qp *qp);
void stag_roce_qp_disconnect(struct stag_qp *qp);
u32 stag_roce_qp_gen(const struct stag_qp *qp);
bool stag_roce_stale(struct stag_qp *qp, struct sk_buff *skb);
int stag_roce_fill_res(struct sk_buff *msg, struct stag_qp *qp);
void stag_roce_path(struct stag_path *path, const struct stag_av *av, u32 lqpn, u32 rqpn);

bool stag_roce_tx_room(struct stag_qp *qp);
struct sk_buff *stag_roce_alloc(struct stag_qp *qp, unsigned int len);
int stag_roce_xmit(struct stag_qp *qp, const struct stag_path *path, struct sk_buff *skb);
void stag_roce_queue(struct stag_qp *qp, struct stag_net_batch *b, struct sk_buff *skb);
void stag_roce_flush(struct stag_qp *qp, struct stag_net_batch *b);
u32 stag_roce_mtu(struct stag_qp *qp);
u8 stag_roce_class(const struct stag_qp *qp);
bool stag_roce_loopback_allowed(void);

#if IS_ENABLED(CONFIG_KUNIT)
bool stag_roce_enqueue(struct stag_qp *qp, struct sk_buff *skb, const struct stag_pkt *p,
		       u32 gen);
#endif

/* The requester's protocol (roce_req.c). */
extern const struct stag_xport stag_roce_rc_xport;
extern const struct stag_xport stag_roce_uc_xport;
extern const struct stag_xport stag_roce_ud_xport;

#endif /* _STAG_ROCE_H */
