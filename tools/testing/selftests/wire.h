/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two halves of wire_test. The client (wire_test.c) runs the cases in
 * guest b; the server (wire_serve.c) in the peer guest owns the far end of
 * every QP and answers the client's requests over a TCP connection, one
 * connection per case:
 *
 *   client: "CMD arg...\n"            server: "OK value...\n" or "ERR why\n"
 *
 * Numbers are C literals (decimal or 0x hex), a GID is 32 hex digits. PUT
 * and GET move raw bytes after the line: "PUT b off n\n" and n bytes; "OK
 * n\n" and n bytes. The server holds buffers (guards included, as qp_util's
 * buf_new() makes them), QPs with their CQs, one SRQ and windows, each
 * named by its index in the order it was made. Each connection is served
 * by a process of its own that opens the device, and destroys everything
 * when the client hangs up.
 *
 *   HELLO name                      OK dev gid gid_index active_mtu device_cap_flags
 *   BUF len access seed             OK b addr rkey      (data fill()ed with seed)
 *   EXACT b access                  OK rkey             (a region over the data only)
 *   PUT b off n / GET b             see above           (GET: guards and data)
 *   XFILL b seed                    OK                  (its data: xfill() stream seed)
 *   XCHECK b off n seed             OK bad first guards (bytes off..off+n against the
 *                                                        stream at off: how many differ,
 *                                                        the first, guard bytes changed)
 *   SRQ max_wr                      OK
 *   QP type srq                     OK q qpn            (srq 1: on the SRQ)
 *   CONNECT q dqpn dgid sq_psn rq_psn mtu timeout retry_cnt rnr_retry min_rnr access
 *                                   OK                  (UD: to RTS, the rest unused)
 *   RECV q wr_id b off len          OK                  (b -1: no scatter entry)
 *   RECVN q wr_id b off stride len n
 *                                   OK                  (n receives: wr_id + i at
 *                                                        off + i * stride)
 *   SRECV wr_id b off len           OK                  (on the SRQ)
 *   SEND q wr_id b off len          OK                  (a signaled SEND of those bytes;
 *                                                        poll q's s CQ)
 *   POLL q s|r n ms                 OK count {wr_id status opcode byte_len imm flags
 *                                             src_qp qp_num}...
 *   BIND q b off len access wr_id   OK rkey             (a new type 2 window, bound by
 *                                                        a BIND_MW on q; poll q's s CQ)
 *   STATE q                         OK state
 *   DESTROY q                       OK
 *   MCAST q attach|detach gid       OK                  (ibv_attach_mcast or
 *                                                        ibv_detach_mcast; ERR errno why)
 *   COUNTER name                    OK value            (of the port's hw_counters)
 *   RES                             OK qps cqs mrs pins (the device's objects, from rdma
 *                                                        resource show; pages FOLL_PINned
 *                                                        host-wide and not released)
 *   DIE ms                          OK, and the connection's process is SIGKILLed ms
 *                                   later: a peer dying mid-transfer, nothing cleaned up
 *   BYE                             OK, and the server exits
 */
#ifndef STAG_SELFTESTS_WIRE_H
#define STAG_SELFTESTS_WIRE_H

#include "qp.h"

#define WIRE_LINE	4096
#define WIRE_POLL_MAX	16	/* completions one POLL may return */

void gid_hex(const union ibv_gid *g, char out[33]);
bool gid_parse(const char *s, union ibv_gid *g);
bool use_gid(int index);

/* ---- the server (wire_serve.c) ---- */

int wire_serve(int port, int gid_arg);

/* ---- the client's side of the conversation (wire_client.c) ---- */

extern const char *server_addr;
extern int server_port;

/* What the server's HELLO said. */
struct wire_peer {
	char dev[64];
	union ibv_gid gid;
	int gid_index;
	unsigned int caps;	/* device_cap_flags */
};

extern struct wire_peer peer;
extern enum ibv_mtu path_mtu;	/* the smaller of both ports' active MTU */
extern size_t mtu;		/* in bytes */

bool rpc(char *ans, size_t alen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool server_open(void);
void server_close(void);
bool hello(const char *name);
bool peer_is_rxe(void);
bool stag_loopback(void);

/* A buffer of the server's: its index there, and where a remote access finds it. */
struct rbuf {
	int id;
	uint64_t addr;
	uint32_t rkey;
	size_t len;
};

bool rbuf_new(struct rbuf *rb, size_t len, int access, unsigned int seed);
bool rbuf_exact(const struct rbuf *rb, int access, uint32_t *rkey);
bool rbuf_put(const struct rbuf *rb, size_t off, const void *data, size_t n);
bool rbuf_get(const struct rbuf *rb, struct buf *copy);
void rbuf_expect(const struct rbuf *rb, const void *want, const char *what);
void rbuf_expect_fill(const struct rbuf *rb, unsigned int seed, const char *what);
void rbuf_xexpect(const struct rbuf *rb, size_t off, size_t n, uint64_t seed, const char *what);

/* A QP of the server's. */
struct rqp {
	int id;
	uint32_t qpn;
};

bool rqp_new(struct rqp *r, enum ibv_qp_type type, bool on_srq);
bool rqp_connect(const struct rqp *r, const struct conn *c);
bool rrecv(const struct rqp *r, uint64_t wr_id, const struct rbuf *rb, size_t off, size_t len);
int rpoll(const struct rqp *r, char cq, struct ibv_wc *wc, int n, int ms);
bool rexpect_wc(const struct rqp *r, char cq, uint64_t wr_id, enum ibv_wc_status status,
		int opcode, struct ibv_wc *out, const char *what);
void rexpect_none(const struct rqp *r, char cq, int ms, const char *what);
void rexpect_state(const struct rqp *r, enum ibv_qp_state state, const char *what);
long rcounter(const char *name);

/* A port counter that must grow: this device's, or the server's. */
struct counter {
	const char *name;	/* NULL: the device counts no such thing */
	bool server;
	long before;
};

struct counter counter_start(bool server, const char *stag_name, const char *rxe_name);
void expect_counted(const struct counter *c, const char *what);

void conns(const struct end *e, const struct rqp *r, struct conn *mine, struct conn *theirs);
bool wire_new(enum ibv_qp_type type, bool on_srq, struct end **e, struct rqp *r,
	      struct conn *mine, struct conn *theirs);
bool wire_connect(struct end *e, const struct rqp *r, struct conn *mine, struct conn *theirs);
bool wire_pair(enum ibv_qp_type type, bool on_srq, struct end **e, struct rqp *r);
bool wire_pair_ops(enum ibv_qp_type type, uint64_t send_ops, struct end **e, struct rqp *r);

void expect_recv(const struct ibv_wc *wc, uint32_t len, const uint32_t *imm, uint32_t qpn,
		 const char *what);
void expect_fails(struct end *e, uint64_t id, enum ibv_wc_status status, const char *what);
struct ibv_send_wr wr_remote(uint64_t id, enum ibv_wr_opcode op, struct ibv_sge *s,
			     uint64_t raddr, uint32_t rkey);

/* ---- the cases (wire_test.c; wire_lossy.c for --lossy, wire_peers.c for --peers) ---- */

void wire_run(const char *name, void (*fn)(const void *), const void *arg, int limit,
	      int npat, char **pat);
void lossy_run(int limit, int npat, char **pat);
void peers_run(int limit, int npat, char **pat);

#endif /* STAG_SELFTESTS_WIRE_H */
