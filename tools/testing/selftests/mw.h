/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of mw_test share: the target a window lies over and the
 * requester's buffer, with what each must hold; windows and their binds;
 * accesses through them, checked byte for byte; the objects a case
 * releases itself. Built on qp_test's helpers (qp.h). See mw_util.c.
 */
#ifndef STAG_SELFTESTS_MW_H
#define STAG_SELFTESTS_MW_H

#include "qp.h"

#define MWB		IBV_ACCESS_MW_BIND
#define ZB		IBV_ACCESS_ZERO_BASED
#define REGION		(LW | RW | RR | RA | MWB)	/* a region any window may use */
#define TLEN		256	/* the target's data */
#define WOFF		64	/* where in it the windows of most cases start */
#define WLEN		128	/* and how long they are */
#define SRC		61	/* fill() seed of the requester's buffer */
#define ADD		0x0101010101010101ULL
#define SWAP		0x5a5a5a5a5a5a5a5aULL

struct mw_case {
	const char *name;
	void (*run)(void);
	void (*run_arg)(const void *arg);
	const void *arg;
};

#define CASE(_name, _fn)		{ _name, _fn, NULL, NULL }
#define CASE_ARG(_name, _fn, _arg)	{ _name, NULL, _fn, _arg }

/* Each part's cases, ending with { NULL }. */
extern const struct mw_case bind_cases[], access_cases[], race_cases[];

/* ---- objects a case releases itself, before qp_util's (case_release()) ---- */

enum okind { O_MW, O_MR, O_QP, O_PD };

void own(enum okind kind, void *obj);
void disown(void *obj);
void release_owned(void);

/* ---- the target, the requester's buffer, and what each must hold ---- */

struct target {
	struct buf *b;		/* TLEN bytes of data between guards */
	struct ibv_mr *mr;	/* the region windows bind to; the case owns it */
	uint8_t want[TLEN];	/* what the data must hold */
};

struct source {
	struct buf *b;		/* source of WRITEs, sink of READs and atomics */
	uint8_t want[TLEN];
};

extern struct target tgt;
extern struct source loc;

bool bufs_new(int access, bool exact);
void expect_bufs(const char *what);
uint64_t tva(size_t off);

/* ---- windows ---- */

struct win {
	struct ibv_mw *mw;
	uint32_t rkey;		/* of its binding */
	size_t off;		/* where in the target's data it starts */
	bool zb;
};

/* Work request ids: each helper takes the next ones. */
extern uint64_t next_id;

struct ibv_mw *mw_new(enum ibv_mw_type type);
uint64_t win_addr(const struct win *w, long x);
int bind1_post(struct end *e, struct ibv_mw *mw, uint64_t wr_id, struct ibv_mr *mr,
	       uint64_t addr, uint64_t len, int access);
int bind2_post(struct end *e, struct ibv_mw *mw, uint64_t wr_id, uint32_t rkey,
	       struct ibv_mr *mr, uint64_t addr, uint64_t len, int access);
bool bind1(struct end *e, struct win *w, struct ibv_mw *mw, size_t off, size_t len,
	   int access);
bool bind2(struct end *e, struct win *w, struct ibv_mw *mw, uint32_t rkey, size_t off,
	   size_t len, int access);
void post_trailer(struct end *e, uint64_t id);
void expect_error(struct end *e, uint64_t wr_id, enum ibv_wc_status status, const char *what);
void expect_bind_err(struct end *e, uint64_t wr_id);

/* ---- accesses ---- */

int wc_opcode(enum ibv_wr_opcode op);
int post_access(struct end *e, uint64_t wr_id, enum ibv_wr_opcode op, size_t len,
		uint32_t rkey, uint64_t raddr, uint64_t compare);
void apply(enum ibv_wr_opcode op, size_t o, size_t len);
void access_at(struct end *e, enum ibv_wr_opcode op, size_t len, uint32_t rkey,
	       uint64_t raddr, size_t o, enum ibv_wc_status status, const char *what);
void access_win(struct end *e, const struct win *w, enum ibv_wr_opcode op, long x,
		size_t len, enum ibv_wc_status status, const char *what);

/* ---- QPs ---- */

bool rc_pair(struct end **a, struct end **b);
struct ibv_pd *pd_new(void);
bool pair_across(struct ibv_pd *p, struct end **x, struct end **y);
struct end *end_ex(void);

#endif /* STAG_SELFTESTS_MW_H */
