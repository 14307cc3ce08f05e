/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag tracepoints: the "stag" trace system. Each event answers one
 * question a counter cannot: which key, which QP, which address.
 *
 *   gate refusals      why a key was refused, and what was asked of it
 *   QP states          every transition, by the consumer or the data path
 *   regions, windows   registration, deregistration, binding, invalidation
 *   drops              a packet dropped, received or refused by the IP stack on send,
 *                      under its counter's name
 *   retransmissions    a go-back-N round, and why it started
 *
 * Documentation/stag.rst shows how to read them with trace-cmd or tracefs.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM stag

#if !defined(_STAG_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _STAG_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "compat.h"

/* Read once: define_trace.h includes this header again. */
#ifndef _STAG_TRACE_ONCE
#define _STAG_TRACE_ONCE
/* Why a go-back-N round started (the stag_retransmit event). */
enum stag_retransmit_why {
	STAG_RETRANSMIT_TIMEOUT,	/* no ACK within the QP's timeout */
	STAG_RETRANSMIT_NAK,		/* a PSN sequence error NAK */
	STAG_RETRANSMIT_READ,		/* a read or atomic response missing */
	STAG_RETRANSMIT_RNR,		/* an RNR NAK's wait is over */
};
#endif

#define stag_show_refusal(err)						\
	__print_symbolic(err,						\
			 { ENOENT, "key" },				\
			 { EPERM, "pd" },				\
			 { EACCES, "rights" },				\
			 { ERANGE, "bounds" })

#define stag_show_access(a)						\
	__print_flags(a, "|",						\
		      { IB_ACCESS_LOCAL_WRITE, "LOCAL_WRITE" },		\
		      { IB_ACCESS_REMOTE_WRITE, "REMOTE_WRITE" },	\
		      { IB_ACCESS_REMOTE_READ, "REMOTE_READ" },		\
		      { IB_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC" },	\
		      { IB_ACCESS_MW_BIND, "MW_BIND" },			\
		      { IB_ZERO_BASED, "ZERO_BASED" },			\
		      { IB_ACCESS_ON_DEMAND, "ON_DEMAND" })

#define stag_show_qp_state(s)						\
	__print_symbolic(s,						\
			 { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" },			\
			 { IB_QPS_RTR, "RTR" },				\
			 { IB_QPS_RTS, "RTS" },				\
			 { IB_QPS_SQD, "SQD" },				\
			 { IB_QPS_SQE, "SQE" },				\
			 { IB_QPS_ERR, "ERR" })

#define stag_show_why(w)						\
	__print_symbolic(w,						\
			 { STAG_RETRANSMIT_TIMEOUT, "timeout" },	\
			 { STAG_RETRANSMIT_NAK, "nak_psn_seq" },	\
			 { STAG_RETRANSMIT_READ, "read_response_lost" },\
			 { STAG_RETRANSMIT_RNR, "rnr_wait_over" })

/* Enum values in print formats, resolved for trace-cmd and perf. */
TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);
TRACE_DEFINE_ENUM(IB_ACCESS_LOCAL_WRITE);
TRACE_DEFINE_ENUM(IB_ACCESS_REMOTE_WRITE);
TRACE_DEFINE_ENUM(IB_ACCESS_REMOTE_READ);
TRACE_DEFINE_ENUM(IB_ACCESS_REMOTE_ATOMIC);
TRACE_DEFINE_ENUM(IB_ACCESS_MW_BIND);
TRACE_DEFINE_ENUM(IB_ZERO_BASED);
TRACE_DEFINE_ENUM(IB_ACCESS_ON_DEMAND);
TRACE_DEFINE_ENUM(STAG_RETRANSMIT_TIMEOUT);
TRACE_DEFINE_ENUM(STAG_RETRANSMIT_NAK);
TRACE_DEFINE_ENUM(STAG_RETRANSMIT_READ);
TRACE_DEFINE_ENUM(STAG_RETRANSMIT_RNR);

/*
 * The gate refused an access: @err is its errno (key, PD, rights or
 * bounds), @access the rights asked for (none: a local read).
 */
TRACE_EVENT(stag_gate_refused,
	TP_PROTO(const struct ib_device *ibdev, u32 qpn, u32 key, int err, int access, u64 addr,
		 u64 len),
	TP_ARGS(ibdev, qpn, key, err, access, addr, len),
	TP_STRUCT__entry(
		__string(dev, ibdev ? dev_name(&ibdev->dev) : "-")
		__field(u32, qpn)
		__field(u32, key)
		__field(int, err)
		__field(int, access)
		__field(u64, addr)
		__field(u64, len)
	),
	TP_fast_assign(
		stag_assign_str(dev, ibdev ? dev_name(&ibdev->dev) : "-");
		__entry->qpn = qpn;
		__entry->key = key;
		__entry->err = -err;
		__entry->access = access;
		__entry->addr = addr;
		__entry->len = len;
	),
	TP_printk("%s qpn %u key 0x%08x refused: %s (asked %s at 0x%llx len %llu)",
		  __get_str(dev), __entry->qpn, __entry->key, stag_show_refusal(__entry->err),
		  __entry->access ? stag_show_access(__entry->access) : "LOCAL_READ",
		  __entry->addr, __entry->len)
);

TRACE_EVENT(stag_qp_state,
	TP_PROTO(const struct ib_qp *ibqp, enum ib_qp_state old, enum ib_qp_state new),
	TP_ARGS(ibqp, old, new),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(int, old)
		__field(int, new)
	),
	TP_fast_assign(
		stag_assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->old = old;
		__entry->new = new;
	),
	TP_printk("%s qpn %u %s -> %s", __get_str(dev), __entry->qpn,
		  stag_show_qp_state(__entry->old), stag_show_qp_state(__entry->new))
);

/* A region became VALID: registered, reregistered or fast-registered. */
TRACE_EVENT(stag_mr_reg,
	TP_PROTO(const struct ib_device *ibdev, const char *how, u32 key, u64 iova, u64 length,
		 int access),
	TP_ARGS(ibdev, how, key, iova, length, access),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__string(how, how)
		__field(u32, key)
		__field(u64, iova)
		__field(u64, length)
		__field(int, access)
	),
	TP_fast_assign(
		stag_assign_str(dev, dev_name(&ibdev->dev));
		stag_assign_str(how, how);
		__entry->key = key;
		__entry->iova = iova;
		__entry->length = length;
		__entry->access = access;
	),
	TP_printk("%s %s key 0x%08x iova 0x%llx length %llu access %s", __get_str(dev),
		  __get_str(how), __entry->key, __entry->iova, __entry->length,
		  stag_show_access(__entry->access))
);

TRACE_EVENT(stag_mr_dereg,
	TP_PROTO(const struct ib_device *ibdev, u32 key),
	TP_ARGS(ibdev, key),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, key)
	),
	TP_fast_assign(
		stag_assign_str(dev, dev_name(&ibdev->dev));
		__entry->key = key;
	),
	TP_printk("%s key 0x%08x", __get_str(dev), __entry->key)
);

/* A bind work request executed: its outcome is @status. */
TRACE_EVENT(stag_mw_bind,
	TP_PROTO(const struct ib_qp *ibqp, u32 mw_rkey, u32 new_rkey, u32 mr_lkey, u64 addr,
		 u64 length, int access, enum ib_wc_status status),
	TP_ARGS(ibqp, mw_rkey, new_rkey, mr_lkey, addr, length, access, status),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(u32, mw_rkey)
		__field(u32, new_rkey)
		__field(u32, mr_lkey)
		__field(u64, addr)
		__field(u64, length)
		__field(int, access)
		__field(int, status)
	),
	TP_fast_assign(
		stag_assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->mw_rkey = mw_rkey;
		__entry->new_rkey = new_rkey;
		__entry->mr_lkey = mr_lkey;
		__entry->addr = addr;
		__entry->length = length;
		__entry->access = access;
		__entry->status = status;
	),
	TP_printk("%s qpn %u window 0x%08x -> 0x%08x over 0x%08x at 0x%llx length %llu access %s: %s",
		  __get_str(dev), __entry->qpn, __entry->mw_rkey, __entry->new_rkey,
		  __entry->mr_lkey, __entry->addr, __entry->length,
		  stag_show_access(__entry->access), ib_wc_status_msg(__entry->status))
);

/* Invalidation by key: Local Invalidate, or a Send with Invalidate's. */
TRACE_EVENT(stag_invalidate,
	TP_PROTO(const struct ib_device *ibdev, u32 qpn, u32 key, bool remote, int err),
	TP_ARGS(ibdev, qpn, key, remote, err),
	TP_STRUCT__entry(
		__string(dev, ibdev ? dev_name(&ibdev->dev) : "-")
		__field(u32, qpn)
		__field(u32, key)
		__field(bool, remote)
		__field(int, err)
	),
	TP_fast_assign(
		stag_assign_str(dev, ibdev ? dev_name(&ibdev->dev) : "-");
		__entry->qpn = qpn;
		__entry->key = key;
		__entry->remote = remote;
		__entry->err = err;
	),
	TP_printk("%s qpn %u key 0x%08x by the %s: %d", __get_str(dev), __entry->qpn,
		  __entry->key, __entry->remote ? "peer" : "consumer", __entry->err)
);

/* A packet or message dropped, received or sent (drop_tx); @qpn 0 when no QP was found. */
TRACE_EVENT(stag_drop,
	TP_PROTO(const struct ib_device *ibdev, const char *reason, u32 qpn),
	TP_ARGS(ibdev, reason, qpn),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__string(reason, reason)
		__field(u32, qpn)
	),
	TP_fast_assign(
		stag_assign_str(dev, dev_name(&ibdev->dev));
		stag_assign_str(reason, reason);
		__entry->qpn = qpn;
	),
	TP_printk("%s qpn %u %s", __get_str(dev), __entry->qpn, __get_str(reason))
);

TRACE_EVENT(stag_retransmit,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u32 una, u32 hi_psn, u8 retry_left,
		 enum stag_retransmit_why why),
	TP_ARGS(ibqp, psn, una, hi_psn, retry_left, why),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, una)
		__field(u32, hi_psn)
		__field(u8, retry_left)
		__field(int, why)
	),
	TP_fast_assign(
		stag_assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->psn = psn;
		__entry->una = una;
		__entry->hi_psn = hi_psn;
		__entry->retry_left = retry_left;
		__entry->why = why;
	),
	TP_printk("%s qpn %u back to psn %u (unacked from %u, next new %u), %s, %u retries left",
		  __get_str(dev), __entry->qpn, __entry->psn, __entry->una, __entry->hi_psn,
		  stag_show_why(__entry->why), __entry->retry_left)
);

#endif /* _STAG_TRACE_H */

/* Out of tree, define_trace.h finds this header by path. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
