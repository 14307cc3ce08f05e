// SPDX-License-Identifier: GPL-2.0
/*
 * Counters. Each device counts per CPU, so that the data path adds to a
 * line no other CPU writes; rdma statistic sums them when it asks.
 *
 * Gate refusals are not counted here: the gate counts them in the TPT it
 * checked against (see stag_gate_enter()), and they are read from there.
 */

#include <rdma/ib_verbs.h>
#include <kunit/visibility.h>

#include "counters.h"
#include "dev.h"
#include "gate.h"
#include "trace.h"

static const struct rdma_stat_desc stag_counter_descs[] = {
	[STAG_CNT_SENT_PKTS].name		= "sent_pkts",
	[STAG_CNT_RCVD_PKTS].name		= "rcvd_pkts",
	[STAG_CNT_SENT_BYTES].name		= "sent_bytes",
	[STAG_CNT_RCVD_BYTES].name		= "rcvd_bytes",
	[STAG_CNT_SENT_BURSTS].name		= "sent_bursts",
	[STAG_CNT_RETRANSMITS].name		= "retransmitted_pkts",
	[STAG_CNT_ACK_TIMEOUTS].name		= "ack_timeouts",
	[STAG_CNT_DUP_REQ].name			= "duplicate_requests",
	[STAG_CNT_NAK_SENT_SEQ].name		= "nak_sent_psn_seq",
	[STAG_CNT_NAK_SENT_RNR].name		= "nak_sent_rnr",
	[STAG_CNT_NAK_SENT_INV].name		= "nak_sent_inv_req",
	[STAG_CNT_NAK_SENT_ACCESS].name		= "nak_sent_rem_access",
	[STAG_CNT_NAK_SENT_OP].name		= "nak_sent_rem_op",
	[STAG_CNT_NAK_RCVD_SEQ].name		= "nak_rcvd_psn_seq",
	[STAG_CNT_NAK_RCVD_RNR].name		= "nak_rcvd_rnr",
	[STAG_CNT_NAK_RCVD_INV].name		= "nak_rcvd_inv_req",
	[STAG_CNT_NAK_RCVD_ACCESS].name		= "nak_rcvd_rem_access",
	[STAG_CNT_NAK_RCVD_OP].name		= "nak_rcvd_rem_op",
	[STAG_CNT_RNR_WAITS].name		= "rnr_waits",
	[STAG_CNT_ICRC_ERR].name		= "icrc_errors",
	[STAG_CNT_DROP_MALFORMED].name		= "drop_malformed",
	[STAG_CNT_DROP_NO_QP].name		= "drop_no_qp",
	[STAG_CNT_DROP_QP_STATE].name		= "drop_qp_state",
	[STAG_CNT_DROP_NOT_PEER].name		= "drop_not_peer",
	[STAG_CNT_DROP_PSN].name		= "drop_psn",
	[STAG_CNT_DROP_OPCODE].name		= "drop_opcode",
	[STAG_CNT_DROP_QKEY].name		= "drop_qkey",
	[STAG_CNT_DROP_PKEY].name		= "drop_pkey",
	[STAG_CNT_DROP_BACKLOG].name		= "drop_backlog",
	[STAG_CNT_DROP_NO_RECV].name		= "drop_no_recv",
	[STAG_CNT_DROP_DUPLICATE].name		= "drop_duplicate",
	[STAG_CNT_DROP_STALE].name		= "drop_stale",
	[STAG_CNT_DROP_TX].name			= "drop_tx",
	[STAG_CNT_GATE_KEY].name		= "gate_refused_key",
	[STAG_CNT_GATE_PD].name			= "gate_refused_pd",
	[STAG_CNT_GATE_RIGHTS].name		= "gate_refused_rights",
	[STAG_CNT_GATE_BOUNDS].name		= "gate_refused_bounds",
};

static_assert(ARRAY_SIZE(stag_counter_descs) == STAG_CNT_NUM);
/* The gate's refusals end the list, in the order of enum stag_gate_refusal. */
static_assert(STAG_CNT_GATE_KEY + STAG_GATE_REFUSALS == STAG_CNT_NUM);

/**
 * stag_count_drop() - count a packet or message dropped, and trace it
 * @sdev: the device
 * @c: the counter of its reason
 * @qpn: the QP it was for or came from; 0 when none was found
 *
 * The counter says how often; the stag_drop event says which QP.
 *
 * Context: any.
 */
void stag_count_drop(struct stag_dev *sdev, enum stag_counter c, u32 qpn)
{
	stag_count(sdev, c);
	trace_stag_drop(&sdev->ibdev, stag_counter_descs[c].name, qpn);
}

int stag_counters_init(struct stag_dev *sdev)
{
	sdev->counters = alloc_percpu(struct stag_counters);
	return sdev->counters ? 0 : -ENOMEM;
}

void stag_counters_uninit(struct stag_dev *sdev)
{
	free_percpu(sdev->counters);
	sdev->counters = NULL;
}

/**
 * stag_counter_read() - the sum of a counter over every CPU
 * @sdev: the device
 * @c: the counter
 */
u64 stag_counter_read(struct stag_dev *sdev, enum stag_counter c)
{
	u64 sum = 0;
	int cpu;

	if (c >= STAG_CNT_GATE_KEY)
		return atomic64_read(&sdev->tpt.refused[c - STAG_CNT_GATE_KEY]);
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(sdev->counters, cpu)->v[c]);
	return sum;
}
EXPORT_SYMBOL_IF_KUNIT(stag_counter_read);

struct rdma_hw_stats *stag_counters_alloc_port_stats(struct ib_device *ibdev, u32 port_num)
{
	return rdma_alloc_hw_stats_struct(stag_counter_descs, STAG_CNT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int stag_counters_get_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats, u32 port,
			    int index)
{
	struct stag_dev *sdev = to_stag_dev(ibdev);
	int c;

	if (!port || !stats)
		return -EINVAL;
	for (c = 0; c < STAG_CNT_NUM; c++)
		stats->value[c] = stag_counter_read(sdev, c);
	return STAG_CNT_NUM;
}
