// SPDX-License-Identifier: GPL-2.0
/*
 * Receive side scaling, as a RoCE NIC does it for DPDK and for pyverbs'
 * test_rss_traffic: an RSS QP is a Raw Packet QP created with an
 * indirection table of receive WQs (wq.c) and a hash configuration. It
 * has no rings of its own and needs no modify_qp: the frames its flows
 * take (flow.c) are hashed, and each goes to the WQ the hash's low bits
 * name in the table, whatever the QP's state (raweth.c places it).
 *
 * The hash is Toeplitz over the fields the configuration names, in the
 * order NICs and Microsoft's RSS specification use: source address,
 * destination address, source port, destination port. A field the frame
 * lacks (no IPv4 header, a UDP port of a TCP segment, the ports of any
 * fragment: a later one has none, and the first is hashed as they are)
 * is left out; a frame with none of them hashes to 0.
 *
 * The configuration comes in the create_qp command's driver data (struct
 * stag_create_qp_cmd), as mlx5's does: the verbs' command has no room for
 * it.
 */

#include <kunit/visibility.h>
#include <linux/slab.h>

#include "dev.h"
#include "flow.h"
#include "rss.h"
#include "wq.h"

/**
 * stag_rss_create_ind_table() - the create_rwq_ind_table verb
 * @ibtbl: the table the core allocated, its WQs in ind_tbl[]
 * @init: its size
 * @udata: the user's command
 *
 * stag defines no driver data for the command, and the 6.12 core's
 * command has none to pass (UAPI_DEF_WRITE_IO_EX, no udata); a core that
 * passed some on would get -EINVAL, as every other verb without driver
 * data does.
 *
 * Return: 0; -EINVAL for more than 2^STAG_MAX_LOG_IND_TBL_SIZE WQs, driver
 * data, or when the device has max_rwq_indirection_tables already;
 * -ENOMEM.
 */
int stag_rss_create_ind_table(struct ib_rwq_ind_table *ibtbl,
			      struct ib_rwq_ind_table_init_attr *init, struct ib_udata *udata)
{
	struct stag_dev *sdev = to_stag_dev(ibtbl->device);
	int ret;

	if (init->log_ind_tbl_size > STAG_MAX_LOG_IND_TBL_SIZE || (udata && udata->inlen))
		return -EINVAL;
	ret = stag_res_charge(&sdev->res, STAG_RES_RWQ_IND_TBL);
	if (ret)
		return ret;
	ret = ida_alloc_range(&sdev->rwq_ind_tbl_ida, 1, STAG_MAX_RWQ_IND_TBL, GFP_KERNEL);
	if (ret < 0) {
		stag_res_uncharge(&sdev->res, STAG_RES_RWQ_IND_TBL);
		return ret;
	}
	ibtbl->ind_tbl_num = ret;
	return 0;
}

int stag_rss_destroy_ind_table(struct ib_rwq_ind_table *ibtbl)
{
	struct stag_dev *sdev = to_stag_dev(ibtbl->device);

	ida_free(&sdev->rwq_ind_tbl_ida, ibtbl->ind_tbl_num);
	stag_res_uncharge(&sdev->res, STAG_RES_RWQ_IND_TBL);
	return 0;
}

/**
 * stag_rss_check_conf() - can stag hash as a create_qp command asks
 * @cmd: the command's driver data
 * @log_size: the log2 of the indirection table's size
 *
 * No field over a table of one WQ is steering without hashing, as mlx5
 * takes it: every frame goes to that WQ, and the function and key are
 * not used.
 *
 * Return: 0; -EOPNOTSUPP for a function other than Toeplitz, or a field
 * stag cannot hash (inner headers, IPsec SPI); -EINVAL for a key that is
 * not STAG_RX_HASH_KEY_LEN bytes, no field over a table of more than one
 * WQ, IPv4 with IPv6 fields, TCP with UDP ports, a reserved byte set, or
 * memory for rings (an RSS QP has none).
 */
VISIBLE_IF_KUNIT int stag_rss_check_conf(const struct stag_create_qp_cmd *cmd, u32 log_size)
{
	u64 f = cmd->rx_hash_fields_mask;

	if (memchr_inv(cmd->reserved, 0, sizeof(cmd->reserved)) || cmd->sq.addr || cmd->rq.addr)
		return -EINVAL;
	if (!f && !log_size)
		return 0;
	if (cmd->rx_hash_function != STAG_RX_HASH_FUNC_TOEPLITZ || f & ~(u64)STAG_RX_HASH_FIELDS)
		return -EOPNOTSUPP;
	if (cmd->rx_hash_key_len != STAG_RX_HASH_KEY_LEN || !f)
		return -EINVAL;
	if ((f & (STAG_RX_HASH_SRC_IPV4 | STAG_RX_HASH_DST_IPV4)) &&
	    (f & (STAG_RX_HASH_SRC_IPV6 | STAG_RX_HASH_DST_IPV6)))
		return -EINVAL;
	if ((f & (STAG_RX_HASH_SRC_PORT_TCP | STAG_RX_HASH_DST_PORT_TCP)) &&
	    (f & (STAG_RX_HASH_SRC_PORT_UDP | STAG_RX_HASH_DST_PORT_UDP)))
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(stag_rss_check_conf);

/**
 * stag_rss_create() - an RSS QP's hash configuration
 * @tbl: the QP's indirection table
 * @cmd: the create_qp command's driver data (stag_queue_cmd() read it:
 *	 zero where the provider sent none)
 *
 * Return: the configuration, to free with stag_rss_free(); ERR_PTR of
 * stag_rss_check_conf()'s errors, or of -ENOMEM.
 */
struct stag_rss *stag_rss_create(struct ib_rwq_ind_table *tbl,
				 const struct stag_create_qp_cmd *cmd)
{
	struct stag_rss *rss;
	int ret;

	ret = stag_rss_check_conf(cmd, tbl->log_ind_tbl_size);
	if (ret)
		return ERR_PTR(ret);
	rss = kzalloc(sizeof(*rss), GFP_KERNEL_ACCOUNT);
	if (!rss)
		return ERR_PTR(-ENOMEM);
	rss->tbl = tbl;
	rss->fields = cmd->rx_hash_fields_mask;
	memcpy(rss->key, cmd->rx_hash_key, sizeof(rss->key));
	return rss;
}

void stag_rss_free(struct stag_rss *rss)
{
	kfree_sensitive(rss);
}

/**
 * stag_rss_toeplitz() - the Toeplitz hash of some bytes
 * @key: STAG_RX_HASH_KEY_LEN bytes
 * @in: the input
 * @len: its length, at most STAG_RX_HASH_KEY_LEN - 4
 *
 * For each bit of the input that is set, the 32 bits of the key that
 * start at that bit's position are XORed into the hash.
 */
VISIBLE_IF_KUNIT u32 stag_rss_toeplitz(const u8 *key, const u8 *in, unsigned int len)
{
	u32 hash = 0, window = (u32)key[0] << 24 | key[1] << 16 | key[2] << 8 | key[3];
	unsigned int i, b;

	for (i = 0; i < len; i++) {
		for (b = 0; b < 8; b++) {
			if (in[i] & (0x80 >> b))
				hash ^= window;
			window = window << 1 | ((key[i + 4] >> (7 - b)) & 1);
		}
	}
	return hash;
}
EXPORT_SYMBOL_IF_KUNIT(stag_rss_toeplitz);

/* Appends @n bytes of a field when the configuration names it. */
static unsigned int put(u8 *in, unsigned int at, u64 fields, u64 field, const void *val, size_t n)
{
	if (!(fields & field))
		return at;
	memcpy(in + at, val, n);
	return at + n;
}

/**
 * stag_rss_hash() - an RSS QP's hash of a frame
 * @rss: the QP's configuration
 * @frame: the frame's first bytes, from its Ethernet header
 * @len: how many there are
 */
VISIBLE_IF_KUNIT u32 stag_rss_hash(const struct stag_rss *rss, const u8 *frame, u32 len)
{
	u8 in[2 * 16 + 2 * 2];
	struct stag_flow_fields f;
	unsigned int n = 0;
	u64 ports = 0;

	stag_flow_parse(frame, len, &f);
	if (f.layers & STAG_FLOW_IPV4) {
		n = put(in, n, rss->fields, STAG_RX_HASH_SRC_IPV4, &f.ip4.src_ip, 4);
		n = put(in, n, rss->fields, STAG_RX_HASH_DST_IPV4, &f.ip4.dst_ip, 4);
	} else if (f.layers & STAG_FLOW_IPV6) {
		n = put(in, n, rss->fields, STAG_RX_HASH_SRC_IPV6, f.ip6.src_ip, 16);
		n = put(in, n, rss->fields, STAG_RX_HASH_DST_IPV6, f.ip6.dst_ip, 16);
	}
	/*
	 * The first fragment of a datagram has its ports, the others not:
	 * none is hashed over them, so that all go to one WQ.
	 */
	if (f.ip4.flags & IB_IPV4_MORE_FRAG)
		ports = 0;
	else if (f.layers & STAG_FLOW_TCP)
		ports = rss->fields & (STAG_RX_HASH_SRC_PORT_TCP | STAG_RX_HASH_DST_PORT_TCP);
	else if (f.layers & STAG_FLOW_UDP)
		ports = rss->fields & (STAG_RX_HASH_SRC_PORT_UDP | STAG_RX_HASH_DST_PORT_UDP);
	n = put(in, n, ports, STAG_RX_HASH_SRC_PORT_TCP | STAG_RX_HASH_SRC_PORT_UDP,
		&f.l4.src_port, 2);
	n = put(in, n, ports, STAG_RX_HASH_DST_PORT_TCP | STAG_RX_HASH_DST_PORT_UDP,
		&f.l4.dst_port, 2);
	return stag_rss_toeplitz(rss->key, in, n);
}
EXPORT_SYMBOL_IF_KUNIT(stag_rss_hash);

/**
 * stag_rss_pick() - the WQ a frame goes to
 * @rss: the RSS QP's configuration
 * @skb: the frame, from its Ethernet header
 *
 * Context: the RSS QP's work: the table and its WQs live as long as the QP.
 */
struct stag_wq *stag_rss_pick(const struct stag_rss *rss, const struct sk_buff *skb)
{
	u8 buf[STAG_FLOW_PARSE_LEN];
	u32 len = min_t(u32, skb->len, sizeof(buf));
	const u8 *frame = skb_header_pointer(skb, 0, len, buf);
	u32 hash = frame ? stag_rss_hash(rss, frame, len) : 0;

	return to_stag_wq(rss->tbl->ind_tbl[hash & (BIT(rss->tbl->log_ind_tbl_size) - 1)]);
}
