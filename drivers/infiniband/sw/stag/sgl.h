/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stag scatter/gather lists: buffers that have passed the gate, and the
 * copies between them. Bytes move only between entries the gate checked.
 */
#ifndef _STAG_SGL_H
#define _STAG_SGL_H

#include <linux/types.h>

struct sk_buff;

#include "gate.h"
#include "wqe.h"

struct stag_sgl_ent {
	struct stag_gate_ref ref;
	u64 len;
};

struct stag_sgl {
	u32 num;
	u64 length;
	const u8 *kbuf;		/* inline data instead of entries */
	struct stag_sgl_ent ent[STAG_MAX_SGE];
};

int __must_check stag_sgl_build(struct stag_sgl *sgl, struct stag_tpt *tpt,
				const struct stag_gate_who *who, const struct stag_sge *sge,
				u32 num, int access);
int __must_check stag_sgl_build_range(struct stag_sgl *sgl, struct stag_tpt *tpt,
				      const struct stag_gate_who *who, const struct stag_sge *sge,
				      u32 num, int access, u64 off, u64 len);
int __must_check stag_sgl_build_one(struct stag_sgl *sgl, struct stag_tpt *tpt,
				    const struct stag_gate_who *who, u32 key, u64 addr, u64 len,
				    int access);
void stag_sgl_init_kbuf(struct stag_sgl *sgl, const void *buf, u64 len);
void stag_sgl_release(struct stag_sgl *sgl);
int __must_check stag_sgl_fault_in(const struct stag_sgl *sgl, bool write);
int __must_check stag_sgl_copy(struct stag_sgl *dst, u64 dst_off, const struct stag_sgl *src,
			       u64 src_off, u64 len);
int __must_check stag_sgl_write(struct stag_sgl *dst, u64 dst_off, const void *buf, u64 len);
int __must_check stag_sgl_read(const struct stag_sgl *src, u64 src_off, void *buf, u64 len);
int __must_check stag_sgl_copy_skb(struct stag_sgl *dst, u64 dst_off, const struct sk_buff *skb,
				   u32 skb_off, u64 len);
int __must_check stag_sgl_atomic(struct stag_sgl *target, u8 opcode, u64 compare_add,
				 u64 swap, u64 *orig);
int __must_check stag_sgl_flush(struct stag_sgl *sgl, struct stag_tpt *tpt,
				const struct stag_gate_who *who, u32 key, u64 addr, u64 len,
				int access, bool whole);

#endif /* _STAG_SGL_H */
