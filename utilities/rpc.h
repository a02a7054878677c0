/*
 * The control channel of flowdpd and flowdp-ctl: JSON-RPC 2.0 over a unix
 * socket or mutual TLS, one JSON object per line.
 *
 * Remotes are written "unix:PATH" or "ssl:HOST:PORT" (clients) and
 * "unix:PATH" or "ssl:ADDR:PORT" (listeners; ADDR may be empty for every
 * address).  TLS needs a private key, its certificate and a CA
 * certificate: each side requires the other's certificate to be signed by
 * that CA (TLS 1.2 or later).
 *
 * Servers run every connection non-blocking from one poll loop: a client
 * that sends half a request, or reads no replies, holds only its own
 * buffers.  A request longer than the server's limit, or one that is not
 * JSON, gets an error reply and the connection is closed.
 *
 * Thread-safety: a connection or listener belongs to one thread.
 */
#ifndef FDP_RPC_H
#define FDP_RPC_H 1

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* JSON-RPC 2.0 error codes. */
#define RPC_PARSE_ERROR (-32700)
#define RPC_INVALID_REQUEST (-32600)
#define RPC_METHOD_NOT_FOUND (-32601)
#define RPC_INVALID_PARAMS (-32602)
#define RPC_FAILED (-32000)        /* The request was understood and
                                     * refused: message says why. */

struct rpc_tls {
    const char *private_key;
    const char *certificate;
    const char *ca_cert;
};

struct rpc_conn;
struct rpc_listener;

/* ---- Clients (blocking) ---- */

/* Connects to 'remote'.  Returns 0 or an errno value with a message in
 * '*errorp' (the caller frees it). */
int rpc_connect(const char *remote, const struct rpc_tls *,
                struct rpc_conn **, char **errorp);

/* Sends a request for 'method' with 'params' (a reference is stolen) and
 * waits for the reply.  On success returns 0 and '*resultp' (the caller
 * decrefs it).  A JSON-RPC error reply returns EPROTO with its message in
 * '*errorp'; a broken connection an errno value with a message. */
int rpc_call(struct rpc_conn *, const char *method, json_t *params,
             json_t **resultp, char **errorp);

/* As rpc_call(), for a method whose result may come in parts: before the
 * reply, the server may send notifications named METHOD".part" whose
 * params are {"id": ID of this request, ...}; each is passed to 'part'
 * (which must not keep 'params' past the call) and the final reply
 * returned as by rpc_call().  'part' returns 0 to go on or an errno value
 * to stop the call with it. */
int rpc_call_parts(struct rpc_conn *, const char *method, json_t *params,
                   int (*part)(const json_t *params, void *aux), void *aux,
                   json_t **resultp, char **errorp);

/* As rpc_call_parts(), and each part whose line begins as a server
 * writes them, {"jsonrpc":"2.0","method":"METHOD.part","params":{"id":ID,
 * is first offered as it came, the 'len' bytes after that prefix, to
 * 'raw_part', which returns true if it took the part (then it is not
 * decoded: the text parts of a large dump are most of a client's work
 * when jansson decodes them) or false to have it decoded and passed to
 * 'part'. */
int rpc_call_parts_raw(struct rpc_conn *, const char *method, json_t *params,
                       int (*part)(const json_t *params, void *aux),
                       bool (*raw_part)(const char *rest, size_t len,
                                        void *aux),
                       void *aux, json_t **resultp, char **errorp);

/* Sends the raw bytes 'data' (tests of the server's input checks). */
int rpc_send_raw(struct rpc_conn *, const void *data, size_t size);

/* Reads one line and parses it as JSON: 0, EOF (closed) or an errno. */
int rpc_recv(struct rpc_conn *, json_t **msgp, char **errorp);

void rpc_close(struct rpc_conn *);

/* A TLS context as the channel's own (both peers verified against the
 * CA, TLS 1.2 or later), for the OpenFlow channel's pssl: and ssl: (an
 * SSL_CTX *, which the caller frees with SSL_CTX_free()).  NULL with a
 * message in '*errorp' if 'tls' lacks a file or one is wrong. */
/* One write or read on a non-blocking socket 'fd', through 'ssl' if it
 * is nonnull (the JSON-RPC and OpenFlow channels share them): bytes
 * moved, or -1 with errno (EAGAIN when the socket, or TLS, must wait;
 * '*want_write' then says TLS waits for the socket to be writable); the
 * read returns 0 at end of stream. */
struct ssl_st;
ssize_t rpc_stream_write(int fd, struct ssl_st *ssl, bool *want_write,
                         const void *data, size_t n);
ssize_t rpc_stream_read(int fd, struct ssl_st *ssl, bool *want_write,
                        void *data, size_t n);

struct ssl_ctx_st *rpc_tls_context(const struct rpc_tls *, bool server,
                                   char **errorp);

/* ---- Servers (non-blocking) ---- */

/* Listens on 'spec'; a unix socket gets mode 0600 and replaces a stale
 * socket file.  Returns 0 or an errno value with a message. */
int rpc_listen(const char *spec, const struct rpc_tls *,
               struct rpc_listener **, char **errorp);
int rpc_listener_fd(const struct rpc_listener *);
const char *rpc_listener_name(const struct rpc_listener *);
/* Accepts one pending connection: 0, EAGAIN if none, or an errno. */
int rpc_accept(struct rpc_listener *, struct rpc_conn **);
/* Closes the listener and removes its socket file. */
void rpc_listener_close(struct rpc_listener *);

int rpc_conn_fd(const struct rpc_conn *);
const char *rpc_conn_name(const struct rpc_conn *);

/* Does the connection's I/O: handshake, reading (requests of at most
 * 'max_request' bytes), writing queued replies.  Each complete request is
 * passed to 'handle', which answers with rpc_reply()/rpc_reply_error().
 * Returns 0 to keep the connection, or EOF or an errno to close it. */
int rpc_conn_run(struct rpc_conn *, size_t max_request,
                 void (*handle)(struct rpc_conn *, json_t *request,
                                void *aux),
                 void *aux);

/* What rpc_conn_run() waits for: POLLIN and/or POLLOUT. */
short rpc_conn_events(const struct rpc_conn *);

/* Queues 'len' bytes of 'text', one complete JSON-RPC message in compact
 * JSON (no newline), followed by the newline that ends it.  For servers
 * that write a large message directly rather than build it with jansson.
 * Returns 0 or ENOMEM (then the connection is closed). */
int rpc_queue_text(struct rpc_conn *, const char *text, size_t len);

/* Writes what is queued on 'c' as far as the socket takes it now,
 * without waiting: a server writing a long reply in parts lets the client
 * start on the first while it makes the next.  Returns 0 or an errno
 * value (then rpc_conn_run() will close the connection). */
int rpc_flush(struct rpc_conn *c);

/* The id of 'request' as JSON text ("null" if it has none), for messages
 * written with rpc_queue_text(); the caller frees it.  NULL if out of
 * memory. */
char *rpc_request_id_text(const json_t *request);

/* Queues the reply to 'request': 'result' (stolen) or an error. */
void rpc_reply(struct rpc_conn *, const json_t *request, json_t *result);
void rpc_reply_error(struct rpc_conn *, const json_t *request, int code,
                     const char *format, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* FDP_RPC_H */
