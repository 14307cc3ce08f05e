/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag RSS: indirection tables of receive WQs, and the Raw Packet QPs
 * that spread the frames their flows take over one by a Toeplitz hash.
 */
#ifndef _STAG_RSS_H
#define _STAG_RSS_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>
#include <rdma/stag-abi.h>

struct stag_wq;

#define STAG_MAX_RWQ_IND_TBL		1024
/* At most 256 WQs in a table. */
#define STAG_MAX_LOG_IND_TBL_SIZE	8

/* The hash fields stag can take: outer IPv4 or IPv6 addresses, TCP or UDP ports. */
#define STAG_RX_HASH_FIELDS	(STAG_RX_HASH_SRC_IPV4 | STAG_RX_HASH_DST_IPV4 |		\
				 STAG_RX_HASH_SRC_IPV6 | STAG_RX_HASH_DST_IPV6 |		\
				 STAG_RX_HASH_SRC_PORT_TCP | STAG_RX_HASH_DST_PORT_TCP |	\
				 STAG_RX_HASH_SRC_PORT_UDP | STAG_RX_HASH_DST_PORT_UDP)

struct stag_rwq_ind_table {
	struct ib_rwq_ind_table ibtbl;
};

/* An RSS QP's: the core's table (its WQs held, ind_tbl[]) and how frames are hashed. */
struct stag_rss {
	struct ib_rwq_ind_table *tbl;
	u64 fields;
	u8 key[STAG_RX_HASH_KEY_LEN];
};

int stag_rss_create_ind_table(struct ib_rwq_ind_table *ibtbl,
			      struct ib_rwq_ind_table_init_attr *init, struct ib_udata *udata);
int stag_rss_destroy_ind_table(struct ib_rwq_ind_table *ibtbl);
struct stag_rss *stag_rss_create(struct ib_rwq_ind_table *tbl,
				 const struct stag_create_qp_cmd *cmd);
void stag_rss_free(struct stag_rss *rss);
struct stag_wq *stag_rss_pick(const struct stag_rss *rss, const struct sk_buff *skb);

#if IS_ENABLED(CONFIG_KUNIT)
u32 stag_rss_toeplitz(const u8 *key, const u8 *in, unsigned int len);
u32 stag_rss_hash(const struct stag_rss *rss, const u8 *frame, u32 len);
int stag_rss_check_conf(const struct stag_create_qp_cmd *cmd, u32 log_size);
#endif

#endif /* _STAG_RSS_H */
