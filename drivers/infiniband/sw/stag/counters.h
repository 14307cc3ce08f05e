/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag counters: what rdma statistic shows for a port.
 */
#ifndef _STAG_COUNTERS_H
#define _STAG_COUNTERS_H

#include <linux/percpu.h>
#include <rdma/ib_verbs.h>

enum stag_counter {
	STAG_CNT_SENT_PKTS,
	STAG_CNT_RCVD_PKTS,
	STAG_CNT_SENT_BYTES,
	STAG_CNT_RCVD_BYTES,
	STAG_CNT_SENT_BURSTS,
	STAG_CNT_RETRANSMITS,
	STAG_CNT_ACK_TIMEOUTS,
	STAG_CNT_DUP_REQ,
	STAG_CNT_NAK_SENT_SEQ,
	STAG_CNT_NAK_SENT_RNR,
	STAG_CNT_NAK_SENT_INV,
	STAG_CNT_NAK_SENT_ACCESS,
	STAG_CNT_NAK_SENT_OP,
	STAG_CNT_NAK_RCVD_SEQ,
	STAG_CNT_NAK_RCVD_RNR,
	STAG_CNT_NAK_RCVD_INV,
	STAG_CNT_NAK_RCVD_ACCESS,
	STAG_CNT_NAK_RCVD_OP,
	STAG_CNT_RNR_WAITS,
	STAG_CNT_ICRC_ERR,
	STAG_CNT_DROP_MALFORMED,
	STAG_CNT_DROP_NO_QP,
	STAG_CNT_DROP_QP_STATE,
	STAG_CNT_DROP_NOT_PEER,
	STAG_CNT_DROP_PSN,
	STAG_CNT_DROP_OPCODE,
	STAG_CNT_DROP_QKEY,
	STAG_CNT_DROP_PKEY,
	STAG_CNT_DROP_BACKLOG,
	STAG_CNT_DROP_NO_RECV,
	STAG_CNT_DROP_DUPLICATE,
	STAG_CNT_DROP_STALE,
	STAG_CNT_DROP_TX,
	STAG_CNT_GATE_KEY,
	STAG_CNT_GATE_PD,
	STAG_CNT_GATE_RIGHTS,
	STAG_CNT_GATE_BOUNDS,
	STAG_CNT_NUM
};

struct stag_counters {
	u64 v[STAG_CNT_NUM];
};

/* Counting on the data path: on this CPU's copy, in any context. */
#define stag_count(sdev, c)		this_cpu_inc((sdev)->counters->v[c])
#define stag_count_add(sdev, c, n)	this_cpu_add((sdev)->counters->v[c], n)

struct stag_dev;

void stag_count_drop(struct stag_dev *sdev, enum stag_counter c, u32 qpn);
int stag_counters_init(struct stag_dev *sdev);
void stag_counters_uninit(struct stag_dev *sdev);
u64 stag_counter_read(struct stag_dev *sdev, enum stag_counter c);
struct rdma_hw_stats *stag_counters_alloc_port_stats(struct ib_device *ibdev, u32 port_num);
int stag_counters_get_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats, u32 port,
			    int index);

#endif /* _STAG_COUNTERS_H */
