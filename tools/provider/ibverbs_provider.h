/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stag's own declarations of the libibverbs provider interface.
 *
 * rdma-core does not install libibverbs/driver.h or kern-abi.h, so a
 * provider built outside rdma-core has to declare what it uses. This is the
 * minimal subset stag needs, written to match IBVERBS_PRIVATE_34 as shipped
 * by rdma-core 44.0 (Debian 12) up to and including rdma-core 56.1
 * (Debian 13), which both export the private ABI under the same version
 * node, and IBVERBS_PRIVATE_65 as rdma-core 65.0 (Debian unstable) ships
 * it: IBVERBS_PABI_VERSION (the Makefile reads it from the libibverbs it
 * links against) picks the layout. Sources: libibverbs/driver.h and
 * libibverbs/kern-abi.h of rdma-core (the v44-era tree, and the tree of
 * August 2026 for 65), cross-checked against the binaries:
 *
 *  - verbs_context_ops: the member order was read from the relocations of
 *    verbs_dummy_ops in libibverbs.a (dummy_ops.c.o) of both 44.0-2 and
 *    56.1-1; the two are identical, 76 entries, 608 bytes. "make abi-check"
 *    repeats that comparison against whatever libibverbs.a is installed.
 *    rdma-core keeps this struct sorted by name and never bumped the
 *    private ABI when it grew (query_qp_data_in_order, import_dm and
 *    unimport_dm arrived in the middle), so a rdma-core newer than 56 may
 *    move members without notice: rerun abi-check before trusting one.
 *  - verbs_device_ops, verbs_match_ent: the relocations and contents of
 *    siw_dev_ops and rnic_table in libsiw-rdmav34.a (44.0 and 56.1).
 *  - verbs_device: the offsets libibverbs.so.1 itself uses (refcount at
 *    0x2a0, core_support at 0x2c0) and siw's calloc size, both versions.
 *  - The ibv_cmd_* signatures and command sizes: the call sites in siw.c.o
 *    (44.0 and 56.1), which pass the same sizes as the structs below.
 *  - ibv_cmd_alloc_mw and ibv_cmd_dealloc_mw: driver.h and cmd.c, then
 *    the disassembly of both in libibverbs.a (44.0: the core sizes handed
 *    to _execute_cmd_write, the stores into the ibv_mw) and of
 *    rxe_alloc_mw in librxe-rdmav34.a (its sizes); "make abi-check"
 *    repeats it.
 *  - verbs_mr: the stores ibv_cmd_reg_mr makes into it in libibverbs.a
 *    (mr_type at 0x30, access at 0x34) and the calloc size of siw's and
 *    rxe's region (0x38, a verbs_mr and nothing else); "make abi-check"
 *    repeats both. The ibv_cmd_{reg,rereg,dereg}_mr argument orders were
 *    read from the same disassembly (44.0).
 *  - verbs_qp, verbs_cq, verbs_srq: driver.h, then the offsets libibverbs
 *    itself uses (44.0 and 56.1, listed with the structs). verbs_qp is
 *    where the two differ; "make abi-check" finds the offset in use.
 *  - ibv_cmd_create_{cq,cq_ex,qp_ex2,srq}, ibv_cmd_create_ah and the
 *    other queue commands: driver.h and cmd_{cq,qp,srq}.c, then the core
 *    sizes those functions hand _write_set_uhw() (what splits a buffer
 *    into core part and udata; "make abi-check" repeats it) and the
 *    arguments rxe.c.o passes at each call, identical in 44.0 and 56.1.
 *  - XRC (ibv_cmd_open_xrcd, _close_xrcd, _create_srq_ex, _open_qp and
 *    struct verbs_xrcd): driver.h, cmd.c, cmd_xrcd.c and cmd_srq.c of
 *    v44.0, v56.1 and the 65.0 tree, the same in all three; then, in the
 *    44.0, 56.1 and 65.0 archives, the core sizes and the verbs_xrcd
 *    stores in libibverbs.a and what libmlx5.a passes ("make abi-check"
 *    repeats them).
 *
 * rdma-core 65.0, checked the same way against its own archives: 17 more
 * context ops (93), verbs_register_driver_65, six more ops at the head of
 * the public struct verbs_context (so its ibv_context is at 0x170), and one
 * more argument each for ibv_cmd_get_context, ibv_cmd_create_cq_ex and
 * ibv_cmd_create_qp_ex2 (rxe 65.0 passes NULL for each, as stag does; see
 * stag_cmd_get_context() and the others at the end of this file). The other
 * structures stag uses are as in 56.
 *
 * Between 44 and 56 the public <infiniband/verbs.h> kept struct ibv_device,
 * ibv_context and verbs_context unchanged; struct ibv_port_attr grew
 * (active_speed_ex), which is why query_port only ever passes the caller's
 * buffer through and never copies a struct ibv_port_attr of its own.
 * struct ibv_qp_ex grew too (wr_flush), and that moved verbs_qp.comp_mask:
 * see struct verbs_qp. struct ibv_qp, ibv_cq_ex, ibv_srq, ibv_wc,
 * ibv_send_wr and ibv_qp_init_attr_ex are the same in both.
 */
#ifndef STAG_IBVERBS_PROVIDER_H
#define STAG_IBVERBS_PROVIDER_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>

/*
 * The private ABI the provider file name and the register symbol carry:
 * 34 for rdma-core 44 up to 56, then each release's own major (65 for
 * 65.0). The Makefile reads it from the libibverbs it links against.
 */
#ifndef IBVERBS_PABI_VERSION
#define IBVERBS_PABI_VERSION	34
#endif
#if IBVERBS_PABI_VERSION != 34 && IBVERBS_PABI_VERSION != 65
#error "ibverbs_provider.h matches IBVERBS_PRIVATE_34 (rdma-core 44..56) and _65 only"
#endif
#define STAG_PASTE2(a, b)	a##b
#define STAG_PASTE(a, b)	STAG_PASTE2(a, b)

/* Only ever pointed at, by ops and commands of rdma-core 65. */
struct ibv_buf;
struct ibv_dmah;
struct ibv_dmah_init_attr;
struct ibv_comp_cntr;
struct ibv_comp_cntr_caps;
struct ibv_comp_cntr_init_attr;
struct ibv_qp_attach_comp_cntr_attr;
struct ibv_mr_init_attr;
struct ibv_fd_arr;
struct ibv_command_buffer;
struct verbs_create_cq_prov_attr;

struct verbs_device;

/* ccan's struct list_node, as embedded in struct verbs_device. */
struct verbs_list_node {
	struct verbs_list_node *next;
	struct verbs_list_node *prev;
};

/*
 * An rdma device found in sysfs or over netlink. Owned by libibverbs and
 * grown by it between releases (num_ports, fw_ver), so stag never looks
 * inside.
 */
struct verbs_sysfs_dev;

enum {
	VERBS_MATCH_SENTINEL	= 0,
	VERBS_MATCH_PCI		= 1,
	VERBS_MATCH_MODALIAS	= 2,
	VERBS_MATCH_DRIVER_ID	= 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/*
 * libibverbs first tries "rdma_device:N<ibdev name>" against every
 * VERBS_MATCH_MODALIAS entry with fnmatch(), so this matches devices whose
 * name starts with the prefix, whatever their parent device is.
 */
#define VERBS_NAME_MATCH(_name_prefix, _data)				\
	{								\
		.driver_data = (_data),					\
		.u.modalias = "rdma_device:*N" _name_prefix "*",	\
		.kind = VERBS_MATCH_MODALIAS,				\
	}

#define VERBS_DRIVER_ID(_id)						\
	{								\
		.u.driver_id = (_id),					\
		.kind = VERBS_MATCH_DRIVER_ID,				\
	}

struct verbs_device_ops {
	const char *name;

	/* Bounds on the device's sysfs abi_version (ib_device_ops.uverbs_abi_ver). */
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;

	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device, int cmd_fd,
					       void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device, int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

/*
 * A memory region as libibverbs sees it: ibv_cmd_reg_mr fills ibv_mr's
 * handle and keys, mr_type and access; ibv_reg_mr fills pd, addr and
 * length afterwards. A provider's region embeds it first.
 */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

/* Every op a provider may supply, sorted by name as rdma-core keeps it. */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
			 struct ibv_sge *sg_list, uint32_t num_sges);
#if IBVERBS_PABI_VERSION >= 65
	void *(*alloc_buf)(struct ibv_pd *pd, size_t size, struct ibv_buf **buf);
#endif
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
#if IBVERBS_PABI_VERSION >= 65
	struct ibv_dmah *(*alloc_dmah)(struct ibv_context *context,
				       struct ibv_dmah_init_attr *attr);
#endif
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context, struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
#if IBVERBS_PABI_VERSION >= 65
	struct ibv_comp_cntr *(*create_comp_cntr)(struct ibv_context *context,
						  struct ibv_comp_cntr_init_attr *attr);
#endif
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel, int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp, struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(struct ibv_context *context,
							  struct ibv_rwq_ind_table_init_attr *attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
#if IBVERBS_PABI_VERSION >= 65
	int (*dealloc_dmah)(struct ibv_dmah *dmah);
#endif
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
#if IBVERBS_PABI_VERSION >= 65
	int (*destroy_comp_cntr)(struct ibv_comp_cntr *comp_cntr);
#endif
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
#if IBVERBS_PABI_VERSION >= 65
	int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);
	void (*free_buf)(struct ibv_buf *buf);
#endif
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context, uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context, uint32_t pd_handle);
#if IBVERBS_PABI_VERSION >= 65
	int (*inc_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t amount);
	int (*inc_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t amount);
#endif
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context, struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
#if IBVERBS_PABI_VERSION >= 65
	int (*qp_attach_comp_cntr)(struct ibv_qp *qp, struct ibv_comp_cntr *comp_cntr,
				   struct ibv_qp_attach_comp_cntr_attr *attr);
	int (*query_comp_cntr_caps)(struct ibv_context *context, struct ibv_comp_cntr_caps *caps,
				    size_t caps_size);
#endif
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
#if IBVERBS_PABI_VERSION >= 65
	int (*query_port_speed)(struct ibv_context *context, uint32_t port_num, uint64_t *speed);
#endif
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context, struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
#if IBVERBS_PABI_VERSION >= 65
	int (*read_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t *value);
#endif
	int (*read_counters)(struct ibv_counters *counters, uint64_t *counters_value,
			     uint32_t ncounters, uint32_t flags);
#if IBVERBS_PABI_VERSION >= 65
	int (*read_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t *value);
#endif
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset,
				    size_t length, unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset, size_t length,
					uint64_t iova, int fd, int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
				 int access);
#if IBVERBS_PABI_VERSION >= 65
	struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *pd, struct ibv_mr_init_attr *mr_init_attr);
#endif
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr,
			size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
#if IBVERBS_PABI_VERSION >= 65
	int (*set_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t value);
#endif
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
#if IBVERBS_PABI_VERSION >= 65
	int (*set_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t value);
#endif
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/*
 * Offsets measured in the 44.0, 56.1 and 65.0 binaries (see the top of
 * this file); a wrong member here would make libibverbs call the wrong
 * function.
 */
#define VERBS_OP_SLOT(_op) (offsetof(struct verbs_context_ops, _op) / sizeof(void *))
#if IBVERBS_PABI_VERSION == 34
static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void *), "verbs_context_ops size");
static_assert(VERBS_OP_SLOT(alloc_pd) == 5, "verbs_context_ops.alloc_pd");
static_assert(VERBS_OP_SLOT(async_event) == 7, "verbs_context_ops.async_event");
static_assert(VERBS_OP_SLOT(dealloc_pd) == 26, "verbs_context_ops.dealloc_pd");
static_assert(VERBS_OP_SLOT(free_context) == 39, "verbs_context_ops.free_context");
static_assert(VERBS_OP_SLOT(query_device_ex) == 58, "verbs_context_ops.query_device_ex");
static_assert(VERBS_OP_SLOT(query_port) == 60, "verbs_context_ops.query_port");
static_assert(VERBS_OP_SLOT(reg_mr) == 68, "verbs_context_ops.reg_mr");
static_assert(VERBS_OP_SLOT(unimport_pd) == 75, "verbs_context_ops.unimport_pd");
/* Where rxe_ctx_ops (44.0 and 56.1) has its queue verbs. */
static_assert(VERBS_OP_SLOT(create_ah) == 13, "verbs_context_ops.create_ah");
static_assert(VERBS_OP_SLOT(create_cq_ex) == 16, "verbs_context_ops.create_cq_ex");
static_assert(VERBS_OP_SLOT(create_qp_ex) == 20, "verbs_context_ops.create_qp_ex");
static_assert(VERBS_OP_SLOT(create_srq) == 22, "verbs_context_ops.create_srq");
static_assert(VERBS_OP_SLOT(poll_cq) == 53, "verbs_context_ops.poll_cq");
static_assert(VERBS_OP_SLOT(post_send) == 55, "verbs_context_ops.post_send");
static_assert(VERBS_OP_SLOT(req_notify_cq) == 69, "verbs_context_ops.req_notify_cq");
/* And its memory window verbs. */
static_assert(VERBS_OP_SLOT(alloc_mw) == 2, "verbs_context_ops.alloc_mw");
static_assert(VERBS_OP_SLOT(bind_mw) == 10, "verbs_context_ops.bind_mw");
static_assert(VERBS_OP_SLOT(dealloc_mw) == 25, "verbs_context_ops.dealloc_mw");
#else
/* rdma-core 65.0: the relocations of its verbs_dummy_ops, 93 entries. */
static_assert(sizeof(struct verbs_context_ops) == 93 * sizeof(void *), "verbs_context_ops size");
static_assert(VERBS_OP_SLOT(alloc_pd) == 7, "verbs_context_ops.alloc_pd");
static_assert(VERBS_OP_SLOT(async_event) == 9, "verbs_context_ops.async_event");
static_assert(VERBS_OP_SLOT(dealloc_pd) == 30, "verbs_context_ops.dealloc_pd");
static_assert(VERBS_OP_SLOT(free_context) == 46, "verbs_context_ops.free_context");
static_assert(VERBS_OP_SLOT(query_device_ex) == 69, "verbs_context_ops.query_device_ex");
static_assert(VERBS_OP_SLOT(query_port) == 71, "verbs_context_ops.query_port");
static_assert(VERBS_OP_SLOT(reg_mr) == 82, "verbs_context_ops.reg_mr");
static_assert(VERBS_OP_SLOT(unimport_pd) == 92, "verbs_context_ops.unimport_pd");
static_assert(VERBS_OP_SLOT(create_ah) == 15, "verbs_context_ops.create_ah");
static_assert(VERBS_OP_SLOT(create_cq_ex) == 19, "verbs_context_ops.create_cq_ex");
static_assert(VERBS_OP_SLOT(create_qp_ex) == 23, "verbs_context_ops.create_qp_ex");
static_assert(VERBS_OP_SLOT(create_srq) == 25, "verbs_context_ops.create_srq");
static_assert(VERBS_OP_SLOT(poll_cq) == 62, "verbs_context_ops.poll_cq");
static_assert(VERBS_OP_SLOT(post_send) == 64, "verbs_context_ops.post_send");
static_assert(VERBS_OP_SLOT(req_notify_cq) == 84, "verbs_context_ops.req_notify_cq");
static_assert(VERBS_OP_SLOT(alloc_mw) == 4, "verbs_context_ops.alloc_mw");
static_assert(VERBS_OP_SLOT(bind_mw) == 12, "verbs_context_ops.bind_mw");
static_assert(VERBS_OP_SLOT(dealloc_mw) == 29, "verbs_context_ops.dealloc_mw");
#endif
static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops size");
static_assert(offsetof(struct verbs_device_ops, match_table) == 16, "verbs_device_ops.match_table");
static_assert(offsetof(struct verbs_device_ops, alloc_context) == 40,
	      "verbs_device_ops.alloc_context");
static_assert(offsetof(struct verbs_device_ops, alloc_device) == 56,
	      "verbs_device_ops.alloc_device");
static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent size");
static_assert(offsetof(struct verbs_match_ent, kind) == 20, "verbs_match_ent.kind");
static_assert(offsetof(struct verbs_device, refcount) == 0x2a0, "verbs_device.refcount");
static_assert(offsetof(struct verbs_device, core_support) == 0x2c0, "verbs_device.core_support");
static_assert(sizeof(struct verbs_device) == 0x2c8, "verbs_device size");
/* rdma-core 65's public verbs_context starts with six more ops (alloc_dmah..free_buf). */
#if IBVERBS_PABI_VERSION >= 65
static_assert(offsetof(struct verbs_context, context) == 0x170, "verbs_context.context");
#else
static_assert(offsetof(struct verbs_context, context) == 0x140, "verbs_context.context");
#endif
static_assert(offsetof(struct verbs_mr, mr_type) == 0x30, "verbs_mr.mr_type");
static_assert(offsetof(struct verbs_mr, access) == 0x34, "verbs_mr.access");
static_assert(sizeof(struct verbs_mr) == 0x38, "verbs_mr size");

static inline struct verbs_mr *verbs_get_mr(struct ibv_mr *mr)
{
	return (struct verbs_mr *)((char *)mr - offsetof(struct verbs_mr, ibv_mr));
}

static inline struct verbs_device *verbs_get_device(const struct ibv_device *dev)
{
	return (struct verbs_device *)((char *)dev - offsetof(struct verbs_device, device));
}

/*
 * An XRC domain as libibverbs sees it. ibv_cmd_open_xrcd() fills context
 * and, when the size it is given covers handle, handle (setting
 * VERBS_XRCD_HANDLE, 1, in comp_mask); the core's XRC SRQ, QP and close
 * commands read handle. A provider's domain embeds it first.
 */
struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

/*
 * The stores ibv_cmd_open_xrcd makes (44.0, 56.1 and 65.0, "make
 * abi-check" repeats it), and mlx5's calloc of a bare verbs_xrcd.
 */
static_assert(offsetof(struct verbs_xrcd, comp_mask) == 0x8, "verbs_xrcd.comp_mask");
static_assert(offsetof(struct verbs_xrcd, handle) == 0xc, "verbs_xrcd.handle");
static_assert(sizeof(struct verbs_xrcd) == 0x10, "verbs_xrcd size");

enum verbs_qp_mask {
	VERBS_QP_XRCD		= 1 << 0,
	VERBS_QP_EX		= 1 << 1,
};

/*
 * A queue pair as libibverbs sees it, laid out as rdma-core 44 has it.
 * ibv_cmd_create_qp_ex2() fills the ibv_qp and zeroes comp_mask; the
 * provider sets VERBS_QP_EX in it for ibv_qp_to_qp_ex() to hand out the
 * ibv_qp_ex.
 *
 * rdma-core 45..56 appended wr_flush to the public struct ibv_qp_ex without
 * changing the private ABI: in rdma-core 56 comp_mask is at 0x168, and
 * 0x160 is the application's wr_flush pointer. A provider therefore never
 * writes comp_mask by name: it asks libibverbs where the bit is read (see
 * stag_qp_ex_mask_offset()) and leaves VERBS_QP_ROOM bytes for the object.
 */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/* Room for verbs_qp as any rdma-core up to 8 more ibv_qp_ex ops lays it out. */
#define VERBS_QP_ROOM		(sizeof(struct verbs_qp) + 64)

/* A completion queue: libibverbs reads the ibv_cq_ex part too. */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* A shared receive queue; the tail is for XRC and tag matching. */
struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/*
 * rdma-core 44 and 56 alike: ibv_qp_to_qp_ex() tests comp_mask at 0x160
 * (44; 0x168 in 56), ibv_cmd_create_srq_ex() stores srq_type, xrcd, cq and
 * srq_num at 0x80, 0x88, 0x90 and 0x98, libibverbs' create_cq_ex wrapper
 * initialises the ibv_cq_ex's mutex at 0x20 and cond at 0x48.
 */
/*
 * verbs_qp as the public struct ibv_qp_ex the provider is built against
 * lays it out: 44's, or 45..56's with wr_flush (built on Debian 13). The
 * provider reads where comp_mask is at run time either way.
 */
static_assert(offsetof(struct verbs_qp, comp_mask) == 0x160 ||
	      offsetof(struct verbs_qp, comp_mask) == 0x168, "verbs_qp.comp_mask");
static_assert(offsetof(struct verbs_qp, xrcd) == offsetof(struct verbs_qp, comp_mask) + 8,
	      "verbs_qp.xrcd");
static_assert(sizeof(struct verbs_qp) == offsetof(struct verbs_qp, comp_mask) + 16,
	      "verbs_qp size");
static_assert(sizeof(struct verbs_cq) == 0x120, "verbs_cq size");
static_assert(offsetof(struct ibv_cq_ex, mutex) == 0x20, "ibv_cq_ex.mutex");
static_assert(offsetof(struct ibv_cq_ex, cond) == 0x48, "ibv_cq_ex.cond");
static_assert(offsetof(struct verbs_srq, srq_type) == 0x80, "verbs_srq.srq_type");
static_assert(offsetof(struct verbs_srq, xrcd) == 0x88, "verbs_srq.xrcd");
static_assert(offsetof(struct verbs_srq, cq) == 0x90, "verbs_srq.cq");
static_assert(offsetof(struct verbs_srq, srq_num) == 0x98, "verbs_srq.srq_num");
static_assert(sizeof(struct verbs_srq) == 0xa0, "verbs_srq size");

/*
 * The private ABI version is part of the symbol name so that a provider
 * built for another ABI fails to load instead of misbehaving.
 */
#define verbs_register_driver STAG_PASTE(verbs_register_driver_, IBVERBS_PABI_VERSION)
void verbs_register_driver(const struct verbs_device_ops *ops);

/*
 * rdma-core's PROVIDER_DRIVER also aliases the ops to verbs_provider_<name>
 * for statically linked libibverbs; an out-of-tree provider is only ever
 * dlopen()ed, so the constructor alone is enough. It registers only under
 * an rdma-core release whose layouts this file matches (rdma_core.c).
 */
bool stag_rdma_core_check(void);
#define PROVIDER_DRIVER(_provider_name, _drv_struct)				\
	static __attribute__((constructor)) void _provider_name##_register_driver(void) \
	{									\
		if (stag_rdma_core_check())					\
			verbs_register_driver(&(_drv_struct));			\
	}

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    struct verbs_context *context_offset, uint32_t driver_id);

/*
 * Allocates and zeroes a driver context of the given type, whose member
 * ctx_memb is the verbs_context, and initialises that member. rdma-core's
 * macro takes a pointer variable instead of the type; the call is the same.
 */
#define verbs_init_and_alloc_context(ibdev, cmd_fd, type, ctx_memb, driver_id)		\
	((type *)_verbs_init_and_alloc_context((ibdev), (cmd_fd), sizeof(type),		\
					       (struct verbs_context *)offsetof(type, ctx_memb), \
					       (driver_id)))

void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops);

/*
 * Write-path command buffers: a uverbs header followed by the kernel's
 * request struct (kern-abi.h's DECLARE_CMD). A provider with a request tail
 * of its own puts it right after one of these.
 */
struct ibv_get_context {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context core_payload;
};

struct ibv_query_port {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_port core_payload;
};

struct ibv_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_pd core_payload;
};

struct ibv_reg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_reg_mr core_payload;
};

struct ibv_rereg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_rereg_mr core_payload;
};

struct ibv_alloc_mw {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_mw core_payload;
};

/* Extended write commands carry a second header (kern-abi.h's DECLARE_CMD_EX). */
struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

struct ibv_create_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_cq core_payload;
};

struct ibv_create_cq_ex {
	struct ex_hdr hdr;
	struct ib_uverbs_ex_create_cq core_payload;
};

struct ibv_create_qp_ex {
	struct ex_hdr hdr;
	struct ib_uverbs_ex_create_qp core_payload;
};

struct ibv_modify_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_qp core_payload;
};

struct ibv_query_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_qp core_payload;
};

struct ibv_create_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_srq core_payload;
};

struct ibv_modify_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_srq core_payload;
};

struct ibv_query_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_srq core_payload;
};

/*
 * Legacy post commands; a provider with its own queues writes them with no
 * work requests as a doorbell. core_payload ends in a flexible array.
 */
struct ibv_post_send {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_post_send core_payload;
};

struct ibv_post_recv {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_post_recv core_payload;
};

struct ibv_resize_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_resize_cq core_payload;
};

/* XRC: a domain, an SRQ of a domain (or of any type), a TGT QP of a domain by number. */
struct ibv_open_xrcd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_open_xrcd core_payload;
};

struct ibv_create_xsrq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_xsrq core_payload;
};

struct ibv_open_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_open_qp core_payload;
};

/* Receive WQs: extended commands. */
struct ibv_create_wq {
	struct ex_hdr hdr;
	struct ib_uverbs_ex_create_wq core_payload;
};

struct ibv_modify_wq {
	struct ex_hdr hdr;
	struct ib_uverbs_ex_modify_wq core_payload;
};

static_assert(sizeof(struct ibv_get_context) == 16, "ibv_get_context size");
static_assert(sizeof(struct ibv_query_port) == 24, "ibv_query_port size");
static_assert(sizeof(struct ibv_alloc_pd) == 16, "ibv_alloc_pd size");
/* The core request sizes ibv_cmd_reg_mr and ibv_cmd_rereg_mr send (44.0). */
static_assert(sizeof(struct ibv_reg_mr) == 0x30, "ibv_reg_mr size");
static_assert(sizeof(struct ibv_rereg_mr) == 0x38, "ibv_rereg_mr size");
static_assert(sizeof(struct ib_uverbs_reg_mr_resp) == 12, "ib_uverbs_reg_mr_resp size");
static_assert(sizeof(struct ib_uverbs_rereg_mr_resp) == 8, "ib_uverbs_rereg_mr_resp size");
/*
 * The core sizes ibv_cmd_alloc_mw hands _execute_cmd_write (44.0), and
 * what rxe's alloc_mw passes it as cmd_size and resp_size (44.0): no udata
 * either way. ibv_cmd_alloc_mw fills the ibv_mw (rxe callocs 0x20 for it)
 * at these offsets.
 */
static_assert(sizeof(struct ibv_alloc_mw) == 0x18, "ibv_alloc_mw size");
static_assert(sizeof(struct ib_uverbs_alloc_mw_resp) == 8, "ib_uverbs_alloc_mw_resp size");
static_assert(sizeof(struct ibv_mw) == 0x20, "ibv_mw size");
static_assert(offsetof(struct ibv_mw, rkey) == 0x10, "ibv_mw.rkey");
static_assert(offsetof(struct ibv_mw, handle) == 0x14, "ibv_mw.handle");
static_assert(offsetof(struct ibv_mw, type) == 0x18, "ibv_mw.type");
/*
 * The sizes ibv_cmd_create_{cq,cq_ex,qp_ex2,srq} (44.0 and 56.1) take as
 * their core request and response: what follows is the driver's udata.
 */
static_assert(sizeof(struct ex_hdr) == 24, "ex_hdr size");
static_assert(sizeof(struct ibv_create_cq) == 0x28, "ibv_create_cq size");
static_assert(sizeof(struct ib_uverbs_create_cq_resp) == 8, "ib_uverbs_create_cq_resp size");
static_assert(sizeof(struct ibv_create_cq_ex) == 0x38, "ibv_create_cq_ex size");
static_assert(sizeof(struct ib_uverbs_ex_create_cq_resp) == 0x10,
	      "ib_uverbs_ex_create_cq_resp size");
static_assert(sizeof(struct ibv_create_qp_ex) == 0x58, "ibv_create_qp_ex size");
static_assert(sizeof(struct ib_uverbs_ex_create_qp_resp) == 0x28,
	      "ib_uverbs_ex_create_qp_resp size");
static_assert(sizeof(struct ibv_create_srq) == 0x28, "ibv_create_srq size");
static_assert(sizeof(struct ib_uverbs_create_srq_resp) == 0x10, "ib_uverbs_create_srq_resp size");
/* ibv_cmd_create_ah sends its own 0x40-byte command; the udata follows ah_handle. */
static_assert(sizeof(struct ib_uverbs_create_ah_resp) == 4, "ib_uverbs_create_ah_resp size");
/* The sizes rxe (44.0 and 56.1) passes to ibv_cmd_{modify,query}_{qp,srq}. */
static_assert(sizeof(struct ibv_modify_qp) == 0x78, "ibv_modify_qp size");
static_assert(sizeof(struct ibv_query_qp) == 0x18, "ibv_query_qp size");
static_assert(sizeof(struct ibv_modify_srq) == 0x18, "ibv_modify_srq size");
static_assert(sizeof(struct ibv_query_srq) == 0x18, "ibv_query_srq size");
/* The kernel takes exactly in_words * 4 bytes: header and core request. */
static_assert(sizeof(struct ibv_post_send) == 0x20, "ibv_post_send size");
static_assert(sizeof(struct ibv_resize_cq) == 0x18, "ibv_resize_cq size");
static_assert(sizeof(struct ib_uverbs_resize_cq_resp) == 8, "ib_uverbs_resize_cq_resp size");
static_assert(sizeof(struct ibv_post_recv) == 0x20, "ibv_post_recv size");
/*
 * The core sizes ibv_cmd_open_xrcd and ibv_cmd_open_qp hand
 * _execute_cmd_write and ibv_cmd_create_srq_ex hands _write_set_uhw (44.0,
 * 56.1 and 65.0), and what mlx5 passes to the first two: no udata.
 */
static_assert(sizeof(struct ibv_open_xrcd) == 0x18, "ibv_open_xrcd size");
static_assert(sizeof(struct ib_uverbs_open_xrcd_resp) == 4, "ib_uverbs_open_xrcd_resp size");
static_assert(sizeof(struct ibv_create_xsrq) == 0x38, "ibv_create_xsrq size");
static_assert(sizeof(struct ibv_open_qp) == 0x28, "ibv_open_qp size");
static_assert(sizeof(struct ib_uverbs_create_qp_resp) == 0x20, "ib_uverbs_create_qp_resp size");

/*
 * cmd/resp point at the whole buffer, sizes include the driver tail: the
 * core part is sent as the uverbs attributes, whatever follows it as the
 * driver's udata.
 */
#if IBVERBS_PABI_VERSION >= 65
int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd,
			size_t cmd_size, struct ibv_fd_arr *fd_arr,
			struct ib_uverbs_get_context_resp *resp, size_t resp_size);
#else
int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd,
			size_t cmd_size, struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
#endif
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp, size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr, struct ibv_query_port *cmd,
		       size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd, struct ibv_alloc_pd *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

/*
 * Importing: the core's view of a context opened elsewhere (num_comp_vectors,
 * with no driver attributes when @driver is NULL), and a region of it by its
 * handle (keys, length, handle, context, pd; addr NULL; IBV_MR_TYPE_IMPORTED_MR).
 */
int ibv_cmd_query_context(struct ibv_context *ctx, struct ibv_command_buffer *driver);
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr, uint32_t mr_handle);

/*
 * On success ibv_cmd_reg_mr fills vmr's handle, keys, context, mr_type and
 * access; the caller (ibv_reg_mr) sets pd, addr and length. On failure
 * these return the errno (and leave it in errno).
 */
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access,
		   struct verbs_mr *vmr, struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr, size_t length,
		     uint64_t hca_va, int access, struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp, size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
/*
 * A region over part of a dma-buf (UVERBS_METHOD_REG_DMABUF_MR): fills vmr
 * whole (IBV_MR_TYPE_DMABUF_MR, addr the offset). rdma-core 55 added the
 * driver's attributes without a new private ABI: 44 has the function
 * without @driver, under the same IBVERBS_PRIVATE_34 as 56 with it. This
 * is 55's; the provider calls 44's by its own type (verbs.c).
 */
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
			  int fd, int access, struct verbs_mr *vmr,
			  struct ibv_command_buffer *driver);
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		      struct ibv_sge *sg_list, uint32_t num_sge);

/*
 * Memory windows. On success ibv_cmd_alloc_mw fills the ibv_mw's context,
 * pd, rkey, handle and type; cmd_size and resp_size are the core sizes,
 * as stag has no driver data for a window.
 */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type, struct ibv_mw *mw,
		     struct ibv_alloc_mw *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

/*
 * Completion queues. ibv_cmd_create_cq fills handle, cqe and context;
 * libibverbs initialises the rest (verbs_init_cq) after the provider
 * returns, for ibv_create_cq and ibv_create_cq_ex alike. cmd_flags are
 * rdma-core's CREATE_CQ_CMD_FLAGS_*; stag passes 0.
 */
int ibv_cmd_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
		      int comp_vector, struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp, size_t resp_size);
#if IBVERBS_PABI_VERSION >= 65
int ibv_cmd_create_cq_ex(struct ibv_context *context, const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_create_cq_prov_attr *prov_attr, struct verbs_cq *cq,
			 struct ibv_create_cq_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
			 uint32_t cmd_flags);
#else
int ibv_cmd_create_cq_ex(struct ibv_context *context, const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
			 uint32_t cmd_flags);
#endif
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/* On success the core response's cqe is what the CQ now holds (cq->cqe). */
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);

/*
 * Queue pairs. ibv_cmd_create_qp_ex2 fills the ibv_qp (handle, qp_num,
 * context, pd, CQs, SRQ, type, state, mutex, cond), zeroes the verbs_qp's
 * comp_mask and writes the capabilities the kernel granted into
 * qp_attr->cap.
 */
#if IBVERBS_PABI_VERSION >= 65
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr, struct ibv_create_qp_ex *cmd,
			  size_t cmd_size, struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size, struct ibv_command_buffer *driver);
#else
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr, struct ibv_create_qp_ex *cmd,
			  size_t cmd_size, struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);
#endif
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr, int attr_mask,
		     struct ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd,
		     size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
/*
 * Opens the XRC TGT QP attr->qp_num of attr->xrcd: fills the ibv_qp
 * (handle, context, qp_num, type; no PD, CQs or SRQ; state
 * IBV_QPS_UNKNOWN) and, when vqp_sz covers it, the verbs_qp's xrcd.
 */
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp, int vqp_sz,
		    struct ibv_qp_open_attr *attr, struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
/* Multicast: the kernel attaches the UD QP; nothing of it is in user space. */
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
/*
 * Flows: the kernel keeps them; the ibv_flow holds the handle. Its specs
 * are the user's, which libibverbs converts to the kernel's layout.
 */
int ibv_cmd_create_flow(struct ibv_qp *qp, struct ibv_flow *flow_id,
			struct ibv_flow_attr *flow_attr, void *ucmd, size_t ucmd_size);
int ibv_cmd_destroy_flow(struct ibv_flow *flow_id);

/*
 * Receive WQs and indirection tables (RSS). ibv_cmd_create_wq fills the
 * WQ's context, cq, pd, wq_type, handle and wq_num and writes the granted
 * max_wr and max_sge into the attributes; ibv_create_wq sets wq_context,
 * mutex and cond after the provider returns, and ibv_cmd_destroy_wq
 * waits on them. ibv_cmd_modify_wq records a new state in wq->state. An
 * indirection table's command has no driver data.
 */
int ibv_cmd_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr,
		      struct ibv_wq *wq, struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp, size_t resp_size);
int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr, struct ibv_modify_wq *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_wq(struct ibv_wq *wq);
int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size);
int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table);

/*
 * Shared receive queues. ibv_cmd_create_srq fills the handle and writes the
 * granted max_wr and max_sge into attr->attr; ibv_create_srq sets context,
 * srq_context, pd, mutex and cond after the provider returns.
 */
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask,
		       struct ibv_modify_srq *cmd, size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
/*
 * An SRQ of any type (attr_ex->comp_mask must have IBV_SRQ_INIT_ATTR_PD;
 * an XRC one needs an XRCD and a CQ too): fills the handle, context, mutex
 * and cond, the verbs_srq's srq_type, cq and, for XRC, xrcd and srq_num,
 * and writes the granted max_wr and max_sge into attr_ex->attr. The
 * driver's udata is the same as ibv_cmd_create_srq's.
 */
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex, struct ibv_create_xsrq *cmd,
			  size_t cmd_size, struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);

/* XRC domains; ibv_cmd_open_xrcd requires attr's fd and oflags in its comp_mask. */
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd, int vxrcd_size,
		      struct ibv_xrcd_init_attr *attr, struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);

/*
 * Address handles. ibv_cmd_create_ah builds its own command; resp_size
 * covers the driver's udata, which starts right after the 4-byte
 * ah_handle. It fills handle and context; ibv_create_ah sets pd.
 */
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah, struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

/*
 * Exported by libibverbs (IBVERBS_1.1) for providers that register memory
 * outside ibv_reg_mr(): ibv_dereg_mr() undoes one ibv_dontfork_range().
 */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

/*
 * rdma-core 65 gave three commands one more argument each: get_context
 * file descriptors to pass, create_cq_ex a CQ buffer the application
 * supplies, create_qp_ex2 driver attributes. stag has none of them, so it
 * passes NULL (as rxe 65.0 does at each call) through these.
 */
static inline int stag_cmd_get_context(struct verbs_context *context,
				       struct ibv_get_context *cmd, size_t cmd_size,
				       struct ib_uverbs_get_context_resp *resp,
				       size_t resp_size)
{
#if IBVERBS_PABI_VERSION >= 65
	return ibv_cmd_get_context(context, cmd, cmd_size, NULL, resp, resp_size);
#else
	return ibv_cmd_get_context(context, cmd, cmd_size, resp, resp_size);
#endif
}

static inline int stag_cmd_create_cq_ex(struct ibv_context *context,
					const struct ibv_cq_init_attr_ex *cq_attr,
					struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
					size_t cmd_size,
					struct ib_uverbs_ex_create_cq_resp *resp,
					size_t resp_size, uint32_t cmd_flags)
{
#if IBVERBS_PABI_VERSION >= 65
	return ibv_cmd_create_cq_ex(context, cq_attr, NULL, cq, cmd, cmd_size, resp, resp_size,
				    cmd_flags);
#else
	return ibv_cmd_create_cq_ex(context, cq_attr, cq, cmd, cmd_size, resp, resp_size,
				    cmd_flags);
#endif
}

static inline int stag_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
					 struct ibv_qp_init_attr_ex *qp_attr,
					 struct ibv_create_qp_ex *cmd, size_t cmd_size,
					 struct ib_uverbs_ex_create_qp_resp *resp,
					 size_t resp_size)
{
#if IBVERBS_PABI_VERSION >= 65
	return ibv_cmd_create_qp_ex2(context, qp, qp_attr, cmd, cmd_size, resp, resp_size, NULL);
#else
	return ibv_cmd_create_qp_ex2(context, qp, qp_attr, cmd, cmd_size, resp, resp_size);
#endif
}

#endif /* STAG_IBVERBS_PROVIDER_H */
