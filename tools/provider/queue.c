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

/* Maps a ring and points @q at it; only @q's lock is left as it was. */
static int ring_mmap(struct stag_queue *q, int cmd_fd, uint64_t offset, uint32_t num_slots,
		     uint32_t slot_size, uint64_t min_slot_size)
{
	uint64_t len = ring_len(offset, num_slots, slot_size, min_slot_size);
	void *map = MAP_FAILED;

	if (len)
		map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd, (off_t)offset);
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
 * @cmd_fd: the context's uverbs file
 * @offset: mmap offset of the new ring
 * @num_slots: its slot count
 * @slot_size: its slot size
 * @min_slot_size: what one slot must hold
 *
 * The lock stays as it is; the consumer index is the new ring's (0 for a
 * ring the kernel just filled from the start).
 *
 * Return: 0 (the old ring unmapped), or as stag_queue_map().
 */
int stag_queue_remap(struct stag_queue *q, int cmd_fd, uint64_t offset, uint32_t num_slots,
		     uint32_t slot_size, uint64_t min_slot_size)
{
	void *old = q->ctl;
	size_t old_len = q->map_len;
	int ret;

	ret = ring_mmap(q, cmd_fd, offset, num_slots, slot_size, min_slot_size);
	if (ret)
		return ret;
	munmap(old, old_len);
	q->index = __atomic_load_n(&q->ctl->cons, __ATOMIC_RELAXED);
	return 0;
}

void stag_queue_unmap(struct stag_queue *q)
{
	if (!stag_queue_mapped(q))
		return;
	pthread_spin_destroy(&q->lock);
	munmap(q->ctl, q->map_len);
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
