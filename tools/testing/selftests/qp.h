/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of qp_test share: the device of the case in progress,
 * buffers with guard bytes, QPs and their CQs, connecting two QPs over
 * loopback, posting and polling. See qp_util.c.
 */
#ifndef STAG_SELFTESTS_QP_H
#define STAG_SELFTESTS_QP_H

#include "testlib.h"

#define GUARD		64	/* guard bytes before and after every buffer */
#define WAIT_MS		3000	/* how long a completion that must come may take */
#define QUIET_MS	200	/* how long "nothing arrives" is watched */
#define DEPTH		64	/* send and receive queue depth */
#define MAX_SGE		4
#define MAX_INLINE	64
#define QKEY		0x11111111
#define IMM		0x12345678
#define BLANK		0xb1	/* the fill() seed of every new buffer's data */

/* The device of the case in progress, opened by the child that runs it. */
extern struct ibv_context *ctx;
extern struct ibv_pd *pd;
extern struct ibv_device_attr dev_attr;
extern struct ibv_port_attr port_attr;
extern union ibv_gid gid;
extern int gid_index;

struct qp_case {
	const char *name;
	void (*run)(void);
};

int qp_cases_main(const char *suite, const char *timeout_env, int limit,
		  const struct qp_case *const *parts, unsigned int nparts, int argc, char **argv);

/* Each part's cases, ending with { NULL }. */
extern const struct qp_case rc_cases[], err_cases[], xport_cases[], api_cases[],
	hostile_cases[], atomic_write_cases[], flush_cases[], timestamp_cases[], import_cases[],
	pd_cases[], mcast_cases[], dmabuf_cases[], xrc_cases[], raweth_cases[], tm_cases[];

/* ---- buffers ---- */

/* GUARD bytes, len bytes of fill(BLANK), GUARD bytes: all of it one region. */
struct buf {
	char *mem;
	char *data;
	size_t len;
	struct ibv_mr *mr;
};

struct buf *buf_new(size_t len, int access);
void buf_guard(struct buf *b);
void fill(void *p, size_t len, unsigned int seed);
void xfill(void *p, size_t off, size_t len, uint64_t seed);
size_t xdiff(const void *p, size_t off, size_t len, uint64_t seed, size_t *first);
size_t guards_changed(const struct buf *b);
void expect_bytes(const void *got, const void *want, size_t len, const char *what);
void expect_guards(const struct buf *b, const char *what);
void expect_data(const struct buf *b, unsigned int seed, const char *what);
void expect_blank(const struct buf *b, const char *what);
struct ibv_sge sge_of(const struct buf *b, size_t off, size_t len);
struct ibv_mr *reg_exact(struct buf *b, int access);

/* ---- QPs ---- */

/* A QP and its send and receive CQs. */
struct end {
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	struct ibv_qp *qp;
};

/* How one side is connected; conn_default() fills it, a case changes it. */
struct conn {
	union ibv_gid dgid;	/* the peer's port: this port's own over loopback */
	int sgid_index;
	uint32_t dest_qpn;
	uint32_t sq_psn;
	uint32_t rq_psn;
	enum ibv_mtu mtu;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	int access;
};

struct ibv_cq *cq_new(void);
struct ibv_srq *srq_new(int max_wr);
struct end *end_on(enum ibv_qp_type type, struct ibv_cq *scq, struct ibv_cq *rcq,
		   struct ibv_srq *srq, bool sig_all);
struct end *end_new(enum ibv_qp_type type, struct ibv_srq *srq, bool sig_all);
struct end *end_ops(enum ibv_qp_type type, uint64_t send_ops);
struct conn conn_to(uint32_t qpn, const union ibv_gid *dgid);
struct conn conn_default(const struct end *peer);
int qp_to_init(struct ibv_qp *qp, int access);
int qp_to_rtr(struct ibv_qp *qp, const struct conn *c);
int qp_to_rts(struct ibv_qp *qp, const struct conn *c);
bool connect_end(struct end *e, const struct conn *c);
bool pair_new(enum ibv_qp_type type, struct end **a, struct end **b);
bool pair_ends(enum ibv_qp_type type, struct end **a, struct end **b, struct conn *ca,
	       struct conn *cb);
bool pair_connect_default(struct end *a, struct end *b);
bool pair_connect(struct end *a, const struct conn *ca, struct end *b, const struct conn *cb);
struct ibv_ah *ah_to(const union ibv_gid *dgid);
struct ibv_ah *ah_new(void);
bool ud_ready(struct end *e);
int other_gid_index(void);

/* ---- posting ---- */

int post_recv(struct end *e, uint64_t wr_id, struct ibv_sge *sg, int n);
int post(struct end *e, struct ibv_send_wr *wr);
int post_srq(struct ibv_srq *srq, uint64_t wr_id, struct ibv_sge *sg);
struct ibv_send_wr wr_send(uint64_t wr_id, struct ibv_sge *sg, int n);
struct ibv_send_wr wr_rdma(uint64_t wr_id, enum ibv_wr_opcode op, struct ibv_sge *sg, int n,
			   const struct buf *remote, size_t off);

/* ---- completions ---- */

long now_ms(void);
int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms);
bool expect_wc_is(const struct ibv_wc *wc, uint64_t wr_id, enum ibv_wc_status status,
		  int opcode, const char *what);
bool expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status, int opcode,
	       struct ibv_wc *out, const char *what);
void expect_none(struct ibv_cq *cq, int ms, const char *what);
void expect_flushed(struct ibv_cq *cq, uint64_t first, int n, const char *what);
void expect_state(struct ibv_qp *qp, enum ibv_qp_state state, const char *what);
bool async_event(enum ibv_event_type type, void *obj, int ms);

/* ---- tag matching (qp_tm.c) ---- */

/*
 * A QP on a tag matching SRQ (the server of the messages), and over
 * loopback a client QP connected to it (wire_test's server is remote).
 */
struct tm_pair {
	struct ibv_cq_ex *cq;	/* the SRQ's and the server QP's */
	struct ibv_srq *srq;
	struct end *server;
	struct end *client;
	uint32_t unexpected;	/* unexpected messages seen, for SYNC */
};

struct tm_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	int opcode;
	unsigned int flags;
	uint32_t byte_len;
	uint32_t qp_num;
	uint64_t tag;
	uint32_t priv;
};

struct ibv_cq_ex *tm_cq_new(void);
struct ibv_srq *tm_srq_try(struct ibv_cq *cq, uint32_t num_tags);
bool tm_poll(struct tm_pair *t, struct tm_wc *w);
bool tm_expect(struct tm_pair *t, uint64_t wr_id, enum ibv_wc_status status, int opcode,
	       unsigned int flags, uint64_t tag, struct tm_wc *out, const char *what);
void tm_expect_none(struct tm_pair *t, const char *what);
int tm_op(struct tm_pair *t, struct ibv_ops_wr *wr);
uint32_t tm_add(struct tm_pair *t, uint64_t tag, uint64_t mask, uint64_t recv_wr_id,
		struct ibv_sge *sg, int n);
void tm_sync(struct tm_pair *t);

/* ---- the case in progress ---- */

enum kind { K_MAP, K_MR, K_CHANNEL, K_CQ, K_SRQ, K_QP, K_AH, K_XRCD, K_FLOW, K_WQ, K_RWQ_IND };

void track(enum kind kind, void *obj, size_t len);
void untrack(void *obj);
bool case_setup(void);
void case_release(void);
void case_skip(const char *why);
const char *case_skipped(void);
bool is_stag(void);
bool stag_wire(void);
bool gid_is_v4(const union ibv_gid *g);
bool inject_ready(char *path, size_t len, const char *why);
pid_t inject_start(char *const argv[], int *out);
void inject_deadline(char *arg, size_t len);
long hw_counter(const char *name);
long hw_rx_fates(void);
long udp_in_datagrams(long *fates);

#endif /* STAG_SELFTESTS_QP_H */
