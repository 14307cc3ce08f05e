/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces that differ between the kernels stag builds on
 * (Debian's 6.1, 6.12 and 7.2), in one place. Every difference is a test of
 * LINUX_VERSION_CODE against the release that changed the interface, and
 * gives the objects one spelling: the newest kernel's where it can be
 * written for the old ones, a stag_ name where it cannot. Nothing outside
 * this header tests a kernel version. make check builds and tests 6.1,
 * 6.12 and 7.2; the releases in between are covered by the same tests.
 * The releases of the 2026 changes (7.0, 7.1) are those of the merge window
 * after their patches reached the maintainers' trees: 7.2 has them all.
 */
#ifndef _STAG_COMPAT_H
#define _STAG_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/* 6.12 moved the unaligned accessors from asm/ to linux/. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * 6.3 made vma->vm_flags read-only outside the mm helpers; before them the
 * flags are set directly (mmap_lock is held for writing either way).
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/*
 * 6.10 gave create_cq the whole uverbs attribute bundle; before, the
 * driver's udata alone. stag_cq_create() takes either and reads only the
 * udata.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
typedef struct uverbs_attr_bundle stag_create_cq_arg_t;

static inline struct ib_udata *stag_create_cq_udata(stag_create_cq_arg_t *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
typedef struct ib_udata stag_create_cq_arg_t;

static inline struct ib_udata *stag_create_cq_udata(stag_create_cq_arg_t *udata)
{
	return udata;
}
#endif

/*
 * 6.10 dropped __assign_str()'s source argument: the string is copied from
 * what __string() named.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define stag_assign_str(dst, src)	__assign_str(dst)
#else
#define stag_assign_str(dst, src)	__assign_str(dst, src)
#endif

/*
 * 6.2 added RDMA Atomic Write and FLUSH (IBA 1.5): their send and
 * completion opcodes, the device capabilities, FLUSH's placement types
 * and selectivities and the regions' rights to it. stag takes both on
 * every kernel; before 6.2 only its own rings carry them, with the values
 * the verbs ABI gives them (and uverbs refuses a region with the flush
 * rights, so a flush there is always refused for want of them).
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define IB_WR_FLUSH			14
#define IB_WR_ATOMIC_WRITE		15
#define IB_WC_FLUSH			8
#define IB_WC_ATOMIC_WRITE		9
#define IB_DEVICE_FLUSH_GLOBAL		BIT_ULL(38)
#define IB_DEVICE_FLUSH_PERSISTENT	BIT_ULL(39)
#define IB_DEVICE_ATOMIC_WRITE		BIT_ULL(40)
#define IB_ACCESS_FLUSH_GLOBAL		BIT(8)
#define IB_ACCESS_FLUSH_PERSISTENT	BIT(9)
#define IB_FLUSH_GLOBAL			BIT(0)
#define IB_FLUSH_PERSISTENT		BIT(1)
#define IB_FLUSH_RANGE			0
#define IB_FLUSH_MR			1
/* Its uverbs refuses a region with the flush rights: no FLUSH can pass. */
#define STAG_DEVICE_FLUSH		0
#else
#define STAG_DEVICE_FLUSH		(IB_DEVICE_FLUSH_GLOBAL | IB_DEVICE_FLUSH_PERSISTENT)
#endif

/*
 * kunit/static_stub.h is 6.4's. Before it, the redirection a KUnit test
 * installs is not there; the suites that use it run on 6.12 only.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#include <kunit/static_stub.h>
#else
#define KUNIT_STATIC_STUB_REDIRECT(real_fn_name, args...) do { } while (0)
#endif

/* 6.16 renamed from_timer(). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 16, 0)
#define timer_container_of(var, timer, field)	from_timer(var, timer, field)
#endif

/*
 * 6.17 gave reg_user_mr a DMA handle (TPH steering hints), which
 * stag_mr_reg_user() takes on every kernel and refuses; before 6.17 the
 * ops table points at an adapter that passes none.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define STAG_OPS_REG_USER_MR(fn)	.reg_user_mr = fn
#define STAG_DEFINE_REG_USER_MR(fn)
#else
struct ib_dmah;

#define STAG_OPS_REG_USER_MR(fn)	.reg_user_mr = fn##_compat
#define STAG_DEFINE_REG_USER_MR(fn)					\
static inline struct ib_mr *fn##_compat(struct ib_pd *pd, u64 start,	\
					u64 length, u64 iova, int access, \
					struct ib_udata *udata)		\
{									\
	return fn(pd, start, length, iova, access, NULL, udata);	\
}
#endif

/*
 * reg_user_mr_dmabuf took the command's udata until 6.12, which passes the
 * uverbs attributes instead, and 6.17 added the DMA handle as for
 * reg_user_mr. stag_mr_reg_dmabuf() takes the handle on every kernel; an
 * adapter passes none before 6.17.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define STAG_DMABUF_MR_TAIL	struct ib_dmah *dmah, struct uverbs_attr_bundle *attrs
#define STAG_DMABUF_MR_DMAH	dmah
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define STAG_DMABUF_MR_TAIL	struct uverbs_attr_bundle *attrs
#define STAG_DMABUF_MR_DMAH	NULL
#else
#define STAG_DMABUF_MR_TAIL	struct ib_udata *udata
#define STAG_DMABUF_MR_DMAH	NULL
#endif
#define STAG_OPS_REG_DMABUF_MR(fn)	.reg_user_mr_dmabuf = fn##_compat
#define STAG_DEFINE_REG_DMABUF_MR(fn)					\
static inline struct ib_mr *fn##_compat(struct ib_pd *pd, u64 offset,	\
					u64 length, u64 iova, int fd,	\
					int access, STAG_DMABUF_MR_TAIL) \
{									\
	return fn(pd, offset, length, iova, fd, access, STAG_DMABUF_MR_DMAH); \
}

/* 6.2 split dma_buf_vmap() into a call under the reservation lock and one that takes it. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define stag_dma_buf_vmap	dma_buf_vmap_unlocked
#define stag_dma_buf_vunmap	dma_buf_vunmap_unlocked
#else
#define stag_dma_buf_vmap	dma_buf_vmap
#define stag_dma_buf_vunmap	dma_buf_vunmap
#endif

/*
 * 7.0 renamed the importer's move_notify to invalidate_mappings, and
 * dma_buf_move_notify() to dma_buf_invalidate_mappings() (commits of
 * 2026-01-24, the revocation series).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define STAG_DMA_BUF_INVALIDATE_OP(fn)	.invalidate_mappings = fn
#else
#define STAG_DMA_BUF_INVALIDATE_OP(fn)	.move_notify = fn
#define dma_buf_invalidate_mappings	dma_buf_move_notify
#endif

/* 6.13 made the namespace MODULE_IMPORT_NS() names a string. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define STAG_MODULE_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS("DMA_BUF")
#else
#define STAG_MODULE_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS(DMA_BUF)
#endif

/*
 * 7.1 renamed resize_cq to resize_user_cq (the core never resizes a kernel
 * CQ) and made the size unsigned. stag_cq_resize() takes it unsigned on
 * every kernel; before 7.1 an adapter refuses a negative size first.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 1, 0)
#define STAG_OPS_RESIZE_CQ(fn)		.resize_user_cq = fn
#define STAG_DEFINE_RESIZE_CQ(fn)
#else
#define STAG_OPS_RESIZE_CQ(fn)		.resize_cq = fn##_compat
#define STAG_DEFINE_RESIZE_CQ(fn)					\
static inline int fn##_compat(struct ib_cq *cq, int cqe,		\
			      struct ib_udata *udata)			\
{									\
	return cqe < 0 ? -EINVAL : fn(cq, cqe, udata);			\
}
#endif

/*
 * 6.14's core raises a RoCE port's ACTIVE and ERR events itself, from the
 * netdev's, for a device without report_port_event: stag, which raises them
 * from its own notifier on every kernel, sets it so that each transition is
 * raised once. The entry carries its comma: before 6.14 it is nothing.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
#define STAG_OPS_REPORT_PORT_EVENT(fn)	.report_port_event = fn,
#else
#define STAG_OPS_REPORT_PORT_EVENT(fn)
#endif

/*
 * 7.0 stopped exporting ib_device_get_by_name(). There a name another
 * driver's device has is found by the registration itself, whose ENFILE
 * stag reports as EEXIST; before, it is found up front. (stag's own names
 * are checked up front on every kernel: dev.c's link_in_use().)
 */
static inline bool stag_ib_name_taken(const char *name)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
	struct ib_device *ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);

	if (ibdev) {
		ib_device_put(ibdev);
		return true;
	}
#endif
	return false;
}

/*
 * 7.1 made setup_udp_tunnel_sock() and udp_tunnel_sock_release() take the
 * socket's sock rather than the socket (release still frees both).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 1, 0)
#define stag_udp_tunnel_sk(sock)	((sock)->sk)
#else
#define stag_udp_tunnel_sk(sock)	(sock)
#endif

/*
 * A packet_type for every protocol (ETH_P_ALL) names the netdev or the
 * namespace whose frames it takes since the lists of taps went per
 * namespace (6.15, by my reading: 6.12 has one global list, 7.2 warns
 * and refuses a tap that names neither). Before, it took every frame of
 * the host; since, the initial namespace's, where stag's netdevs are.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
#define STAG_PTYPE_ALL_NET(net)	.af_packet_net = (net),
#else
#define STAG_PTYPE_ALL_NET(net)
#endif

#endif /* _STAG_COMPAT_H */
