// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag libibverbs provider: the rings shared with stag.ko, the receive
 * slot format both receive rings and SRQs use, and the doorbells.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "pd.h"
#include "queue.h"
#include "stag.h"

/* Return: the length to map, or 0 for a ring the provider cannot use. */
static uint64_t ring_len(uint64_t offset, uint32_t num_slots, uint32_t slot_size,
			 uint64_t min_slot_size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t len;

	if (!num_slots || (num_slots & (num_slots - 1)))
		return 0;
	if (slot_size < min_slot_size || slot_size % sizeof(uint64_t))
		return 0;
	if (offset > INT64_MAX)
		return 0;
	/* At most (2^32 - 1)^2 + 128 + page - 1: no u64 overflow. */
	len = (uint64_t)num_slots * slot_size + STAG_QUEUE_CTL_SIZE;
	len = (len + page - 1) & ~(page - 1);
	return len <= SIZE_MAX ? len : 0;
}

/**
 * stag_queue_alloc() - memory for a ring from a parent domain's allocator
 * @q: the ring, zeroed; it keeps the memory until stag_queue_free()
 * @pd: the PD the ring's object is made in, a parent domain or not
 * @res_type: STAGDV_RES_TYPE_* of the ring
 * @num_slots: the ring's geometry, by the kernel's rule (stag-abi.h)
 * @slot_size: bytes per slot, by the same rule
 * @mem: filled for the command: the memory, or zero for a ring of the
 *	 kernel's (no allocator, IBV_ALLOCATOR_USE_DEFAULT, or a ring the
 *	 kernel refuses anyway)
 *
 * The allocator is asked for the ring's bytes rounded up to the page
 * size, page aligned, as the kernel maps it. A parent domain whose
 * allocator gave memory is not deallocated (EBUSY) until the memory is
 * given back.
 *
 * Return: 0, or ENOMEM when the allocator gave none.
 */
int stag_queue_alloc(struct stag_queue *q, struct ibv_pd *pd, uint64_t res_type,
		     uint32_t num_slots, uint32_t slot_size, struct stag_ring_mem *mem)
{
	struct stag_pd *parent = pd ? to_stag_pd(pd) : NULL;
	uint64_t len = ring_len(0, num_slots, slot_size, 0);
	void *p;

	memset(mem, 0, sizeof(*mem));
	if (!parent || !parent->protection || !parent->alloc || !parent->free)
		return 0;
	if (!len || len > STAG_RING_MAX_BYTES)
		return 0;
	p = parent->alloc(pd, parent->pd_context, len, (size_t)sysconf(_SC_PAGESIZE), res_type);
	if (p == IBV_ALLOCATOR_USE_DEFAULT)
		return 0;
	if (!p)
		return ENOMEM;
	atomic_fetch_add(&parent->users, 1);
	q->mem = p;
	q->mem_len = len;
	q->parent = parent;
	q->res_type = res_type;
	mem->addr = (uintptr_t)p;
	mem->len = len;
	return 0;
}

/**
 * stag_queue_alloc_next() - memory for the ring that is to replace another
 * @q: the ring now
 * @next: the new ring, zeroed, as for stag_queue_alloc()
 * @num_slots: the new ring's geometry
 * @slot_size: bytes per slot
 * @mem: filled for the command, as by stag_queue_alloc()
 *
 * A ring in a parent domain's memory is replaced by one in memory from
 * the same allocator; one in the kernel's memory by one of the kernel's.
 * Another thread may be replacing @q's ring meanwhile: what it is now is
 * read under @q's lock, which a replacement holds, and the allocator is
 * called without it.
 *
 * Return: as stag_queue_alloc().
 */
int stag_queue_alloc_next(struct stag_queue *q, struct stag_queue *next, uint32_t num_slots,
			  uint32_t slot_size, struct stag_ring_mem *mem)
{
	struct stag_pd *parent;
	uint64_t type;

	memset(mem, 0, sizeof(*mem));
	pthread_spin_lock(&q->lock);
	parent = q->mem ? q->parent : NULL;
	type = q->res_type;
	pthread_spin_unlock(&q->lock);
	if (!parent)
		return 0;
	return stag_queue_alloc(next, &parent->ibv_pd, type, num_slots, slot_size, mem);
}

/**
 * stag_queue_free() - give a ring's memory back to its allocator
 * @q: the ring; the kernel holds its memory no longer (the object is
 *     destroyed, its create failed, or the ring was replaced)
 */
void stag_queue_free(struct stag_queue *q)
{
	struct stag_pd *parent = q->parent;

	if (!q->mem)
		return;
	parent->free(&parent->ibv_pd, parent->pd_context, q->mem, q->res_type);
	atomic_fetch_sub(&parent->users, 1);
	q->mem = NULL;
	q->parent = NULL;
}

/*
 * Points @q at a ring: the memory @q brought, which the kernel must have
 * taken (offset 0) for a geometry it holds, or a mapping of the kernel's
 * ring. Only @q's lock is left as it was.
 */
static int ring_mmap(struct stag_queue *q, int cmd_fd, uint64_t offset, uint32_t num_slots,
		     uint32_t slot_size, uint64_t min_slot_size)
{
	uint64_t len = ring_len(offset, num_slots, slot_size, min_slot_size);
	void *map = MAP_FAILED;

	if (q->mem) {
		if (!len || offset || len > q->mem_len)
			return EPROTO;
		map = q->mem;
	} else if (len) {
		map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd, (off_t)offset);
	}
	if (map == MAP_FAILED)
		return len ? errno : EPROTO;
	q->ctl = map;
	q->slots = (uint8_t *)map + STAG_QUEUE_CTL_SIZE;
	q->map_len = len;
	q->num_slots = num_slots;
	q->slot_size = slot_size;
	return 0;
}

/**
 * stag_queue_map() - map a ring the kernel created
 * @q: the ring, zeroed
 * @cmd_fd: the context's uverbs file
 * @offset: mmap offset from the create response
 * @num_slots: slot count from the create response
 * @slot_size: slot size from the create response
 * @min_slot_size: what one slot must hold for the capabilities granted
 *
 * The kernel sizes every ring; a ring whose slots cannot be indexed with a
 * mask, or cannot hold what the kernel said the queue takes, is refused
 * before anything is written into it.
 *
 * Return: 0, EPROTO for such a ring, or mmap()'s errno.
 */
int stag_queue_map(struct stag_queue *q, int cmd_fd, uint64_t offset, uint32_t num_slots,
		   uint32_t slot_size, uint64_t min_slot_size)
{
	int ret = ring_mmap(q, cmd_fd, offset, num_slots, slot_size, min_slot_size);

	if (!ret)
		pthread_spin_init(&q->lock, PTHREAD_PROCESS_PRIVATE);
	return ret;
}

/**
 * stag_queue_remap() - move a ring to the one the kernel replaced it with
 * @q: the ring, mapped, its lock held by the caller
 * @next: the memory stag_queue_alloc() gave for the new ring, which @q
 *	  takes over (none: the kernel's ring, mapped)
 * @cmd_fd: the context's uverbs file
 * @offset: mmap offset of the new ring
 * @num_slots: its slot count
 * @slot_size: its slot size
 * @min_slot_size: what one slot must hold
 *
 * The lock stays as it is; the consumer index is the new ring's (0 for a
 * ring the kernel just filled from the start). The old ring's memory goes,
 * as the kernel has let go of it.
 *
 * Return: 0, or as stag_queue_map(): @q is left on the old ring then. The
 * new ring's memory, which the kernel holds, is never given back to be
 * reused under it: it is the kernel's until the object goes, and lost.
 */
int stag_queue_remap(struct stag_queue *q, struct stag_queue *next, int cmd_fd, uint64_t offset,
		     uint32_t num_slots, uint32_t slot_size, uint64_t min_slot_size)
{
	struct stag_queue old = {
		.ctl = q->ctl, .map_len = q->map_len, .mem = q->mem, .mem_len = q->mem_len,
		.parent = q->parent, .res_type = q->res_type,
	};
	int ret;

	q->mem = next->mem;
	q->mem_len = next->mem_len;
	q->parent = next->parent;
	q->res_type = next->res_type;
	next->mem = NULL;
	ret = ring_mmap(q, cmd_fd, offset, num_slots, slot_size, min_slot_size);
	if (ret) {
		q->mem = old.mem;
		q->mem_len = old.mem_len;
		q->parent = old.parent;
		q->res_type = old.res_type;
		return ret;
	}
	if (old.mem)
		stag_queue_free(&old);
	else
		munmap(old.ctl, old.map_len);
	q->index = __atomic_load_n(&q->ctl->cons, __ATOMIC_RELAXED);
	return 0;
}

void stag_queue_unmap(struct stag_queue *q)
{
	if (!stag_queue_mapped(q)) {
		stag_queue_free(q);
		return;
	}
	pthread_spin_destroy(&q->lock);
	if (!q->mem)
		munmap(q->ctl, q->map_len);
	stag_queue_free(q);
	q->ctl = NULL;
}

static void recv_wqe_write(struct stag_recv_wqe *wqe, const struct ibv_recv_wr *wr)
{
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved = 0;
	if (wr->num_sge)
		memcpy(wqe + 1, wr->sg_list, wr->num_sge * sizeof(struct stag_sge));
}

/**
 * stag_queue_post_recv() - post receive work requests into a ring
 * @q: a receive ring or an SRQ ring
 * @max_sge: the most scatter entries one request may have
 * @wr: the list
 * @bad_wr: set to the first request not posted, on error
 *
 * Every request before the failing one is posted; nothing rings a doorbell.
 *
 * Return: 0, EINVAL for too many scatter entries, ENOMEM when full.
 */
int stag_queue_post_recv(struct stag_queue *q, uint32_t max_sge, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr)
{
	struct stag_recv_wqe *wqe;
	int ret = 0;

	pthread_spin_lock(&q->lock);
	stag_queue_prod_begin(q);
	for (; wr; wr = wr->next) {
		wqe = stag_queue_prod_slot(q);
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
			ret = EINVAL;
		else if (!wqe)
			ret = ENOMEM;
		if (ret) {
			*bad_wr = wr;
			break;
		}
		recv_wqe_write(wqe, wr);
		stag_queue_prod_advance(q);
	}
	stag_queue_prod_publish(q);
	pthread_spin_unlock(&q->lock);
	return ret;
}

/*
 * Whether the kernel flushes this receive ring (its QP is in the error
 * state) and so wants a doorbell for what was just published. The full
 * barrier orders the publishing store of prod before the load of flags; it
 * pairs with the kernel's barrier between setting STAG_QUEUE_FLUSH and
 * reading prod, so that one of the two sides sees the other's write.
 */
bool stag_queue_flushing(const struct stag_queue *q)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&q->ctl->flags, __ATOMIC_RELAXED) & STAG_QUEUE_FLUSH;
}

static int write_cmd(struct ibv_context *ctx, const void *cmd, size_t size)
{
	ssize_t n = write(ctx->cmd_fd, cmd, size);

	if (n == (ssize_t)size)
		return 0;
	return n < 0 ? errno : EIO;
}

/*
 * A context imported by another process (ibv_import_device) may not
 * write() to its command file: the kernel refuses a write under other
 * credentials than the opener's (ib_safe_file_access). Its commands go
 * through the ioctl that carries write commands, as libibverbs sends its
 * own: @in is the command without its header, @out the response.
 */
static int invoke_write(struct ibv_context *ctx, uint32_t command, const void *in, size_t in_len,
			void *out, size_t out_len)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[3];
	} cmd = {
		.hdr = {
			.length = sizeof(cmd),
			.object_id = UVERBS_OBJECT_DEVICE,
			.method_id = UVERBS_METHOD_INVOKE_WRITE,
			.num_attrs = 3,
		},
		.attrs = {
			{ .attr_id = UVERBS_ATTR_WRITE_CMD, .len = sizeof(uint64_t),
			  .flags = UVERBS_ATTR_F_MANDATORY, .data = command },
			{ .attr_id = UVERBS_ATTR_CORE_IN, .len = in_len,
			  .flags = UVERBS_ATTR_F_MANDATORY, .data = (uintptr_t)in },
			{ .attr_id = UVERBS_ATTR_CORE_OUT, .len = out_len,
			  .flags = UVERBS_ATTR_F_MANDATORY, .data = (uintptr_t)out },
		},
	};

	/* An input of 8 bytes or less would travel in data itself. */
	static_assert(sizeof(struct ib_uverbs_post_send) > sizeof(uint64_t), "CORE_IN inline");
	static_assert(sizeof(struct ib_uverbs_post_recv) > sizeof(uint64_t), "CORE_IN inline");
	return ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &cmd) ? errno : 0;
}

/*
 * The doorbells are the legacy post commands with no work requests: the
 * kernel then looks at the rings. wqe_size is still checked against the
 * size of one request.
 */
int stag_sq_doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.core_payload = {
			.response = (uintptr_t)&resp,
			.qp_handle = qp->handle,
			.wqe_size = sizeof(struct ib_uverbs_send_wr),
		},
	};

	if (to_stag_ctx(qp->context)->imported)
		return invoke_write(qp->context, IB_USER_VERBS_CMD_POST_SEND, &cmd.core_payload,
				    sizeof(cmd.core_payload), &resp, sizeof(resp));
	return write_cmd(qp->context, &cmd, sizeof(cmd));
}

int stag_rq_doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_recv_resp resp;
	struct ibv_post_recv cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_RECV,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.core_payload = {
			.response = (uintptr_t)&resp,
			.qp_handle = qp->handle,
			.wqe_size = sizeof(struct ib_uverbs_recv_wr),
		},
	};

	if (to_stag_ctx(qp->context)->imported)
		return invoke_write(qp->context, IB_USER_VERBS_CMD_POST_RECV, &cmd.core_payload,
				    sizeof(cmd.core_payload), &resp, sizeof(resp));
	return write_cmd(qp->context, &cmd, sizeof(cmd));
}
