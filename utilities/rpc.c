/*
 * The control channel: see rpc.h.
 *
 * Framing is one JSON text per line (jansson writes compact JSON, which
 * has no raw newline).  Requests and replies are JSON-RPC 2.0:
 *   {"jsonrpc":"2.0","id":1,"method":"add-flows","params":{...}}
 *   {"jsonrpc":"2.0","id":1,"result":{...}}
 *   {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"..."}}
 *
 * TLS uses OpenSSL with both peers verified against the CA given
 * (SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT on the server), TLS
 * 1.2 at least.  As in Open vSwitch, the CA is the trust anchor: host
 * names are not checked.
 */
#include <config.h>

#include "utilities/rpc.h"
#include "utilities/tool.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Replies queued beyond this stop the connection's reading until the
 * client drains them: a client that never reads cannot grow our memory
 * without bound. */
#define OUT_HIGH_WATER (4u << 20)

/* A byte queue.  Bytes are appended at the end and consumed from the
 * front by moving 'start', so that sending a large reply a socket buffer at
 * a time, or answering many pipelined requests, costs time in proportion
 * to the bytes, not to the bytes times the number of writes (a memmove of
 * the rest after each one).  The front is reclaimed when the queue empties
 * or when an append would otherwise have to grow the allocation.
 * 'scanned' counts the bytes from the front already known to hold no
 * newline, so that looking for the end of a long message as it arrives in
 * pieces reads each byte once. */
struct buf {
    char *data;
    size_t start;               /* Offset of the first byte queued. */
    size_t len;                 /* Bytes queued, from 'start'. */
    size_t cap;                 /* Bytes allocated. */
    size_t scanned;             /* Bytes from 'start' without a newline. */
};

/* A buffer that grew past this is freed once it is empty again, so that a
 * connection that once sent or received a large message does not keep its
 * memory. */
#define BUF_KEEP_MAX (1u << 20)

static const char *
buf_head(const struct buf *b)
{
    return b->data + b->start;
}

static int
buf_append(struct buf *b, const void *data, size_t n)
{
    if (b->start + b->len + n + 1 > b->cap && b->start) {
        memmove(b->data, b->data + b->start, b->len);
        b->start = 0;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) {
            cap *= 2;
        }
        char *p = realloc(b->data, cap);
        if (!p) {
            return ENOMEM;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->start + b->len, data, n);
    b->len += n;
    b->data[b->start + b->len] = '\0';
    return 0;
}

static void
buf_consume(struct buf *b, size_t n)
{
    b->start += n;
    b->len -= n;
    b->scanned = b->scanned > n ? b->scanned - n : 0;
    if (!b->len) {
        b->start = 0;
        if (b->cap > BUF_KEEP_MAX) {
            free(b->data);
            b->data = NULL;
            b->cap = 0;
        } else if (b->data) {
            b->data[0] = '\0';
        }
    }
}

/* The first newline queued, or NULL if there is none yet. */
static const char *
buf_find_newline(struct buf *b)
{
    const char *nl = NULL;

    if (b->len > b->scanned) {
        nl = memchr(buf_head(b) + b->scanned, '\n', b->len - b->scanned);
        b->scanned = nl ? (size_t) (nl - buf_head(b)) : b->len;
    }
    return nl;
}

struct rpc_conn {
    int fd;
    SSL *ssl;
    SSL_CTX *ctx;               /* Clients own theirs; NULL for servers. */
    bool handshaken;
    bool want_write;            /* TLS needs the socket writable. */
    bool closing;               /* Flush the replies, then close. */
    char name[128];
    struct buf in, out;
    json_int_t next_id;
};

struct rpc_listener {
    int fd;
    SSL_CTX *ctx;               /* NULL for unix sockets. */
    char *path;                 /* Unix socket file, to remove. */
    char name[160];
};

/* OpenSSL's queued errors, as one string. */
static const char *
ssl_errors(void)
{
    static __thread char msg[512];
    unsigned long e;
    size_t len = 0;

    msg[0] = '\0';
    while ((e = ERR_get_error()) && len < sizeof msg - 2) {
        if (len) {
            msg[len++] = ';';
            msg[len++] = ' ';
        }
        ERR_error_string_n(e, msg + len, sizeof msg - len);
        len = strlen(msg);
    }
    return msg[0] ? msg : "unknown TLS error";
}

static SSL_CTX *
make_ctx(const struct rpc_tls *tls, bool server, char **errorp)
{
    SSL_CTX *ctx;

    if (!tls || !tls->private_key || !tls->certificate || !tls->ca_cert) {
        *errorp = xasprintf("ssl: needs --private-key, --certificate and "
                            "--ca-cert");
        return NULL;
    }
    ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (!ctx) {
        *errorp = xasprintf("ssl: %s", ssl_errors());
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE
                          | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (SSL_CTX_use_certificate_chain_file(ctx, tls->certificate) != 1) {
        *errorp = xasprintf("ssl: certificate %s: %s", tls->certificate,
                            ssl_errors());
    } else if (SSL_CTX_use_PrivateKey_file(ctx, tls->private_key,
                                           SSL_FILETYPE_PEM) != 1) {
        *errorp = xasprintf("ssl: private key %s: %s", tls->private_key,
                            ssl_errors());
    } else if (SSL_CTX_check_private_key(ctx) != 1) {
        *errorp = xasprintf("ssl: private key %s does not match "
                            "certificate %s", tls->private_key,
                            tls->certificate);
    } else if (SSL_CTX_load_verify_locations(ctx, tls->ca_cert, NULL) != 1) {
        *errorp = xasprintf("ssl: CA certificate %s: %s", tls->ca_cert,
                            ssl_errors());
    } else {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER
                                | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        return ctx;
    }
    SSL_CTX_free(ctx);
    return NULL;
}

struct ssl_ctx_st *
rpc_tls_context(const struct rpc_tls *tls, bool server, char **errorp)
{
    *errorp = NULL;
    return make_ctx(tls, server, errorp);
}

/* Splits "HOST:PORT" (HOST may be empty or an [IPv6] literal). */
static int
split_host_port(const char *s, char **host, char **port, char **errorp)
{
    const char *colon = strrchr(s, ':');

    if (!colon || !colon[1]) {
        *errorp = xasprintf("\"%s\": expected HOST:PORT", s);
        return EINVAL;
    }
    size_t hlen = (size_t) (colon - s);
    if (hlen >= 2 && s[0] == '[' && s[hlen - 1] == ']') {
        s++;
        hlen -= 2;
    }
    *host = strndup(s, hlen);
    *port = strdup(colon + 1);
    if (!*host || !*port) {
        free(*host);
        free(*port);
        return ENOMEM;
    }
    return 0;
}

static int
unix_address(const char *path, struct sockaddr_un *sun, char **errorp)
{
    memset(sun, 0, sizeof *sun);
    sun->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sun->sun_path) {
        *errorp = xasprintf("unix:%s: path longer than %zu bytes", path,
                            sizeof sun->sun_path - 1);
        return ENAMETOOLONG;
    }
    strcpy(sun->sun_path, path);
    return 0;
}

static struct rpc_conn *
conn_new(int fd, const char *name)
{
    struct rpc_conn *c = calloc(1, sizeof *c);

    if (c) {
        c->fd = fd;
        c->handshaken = true;
        snprintf(c->name, sizeof c->name, "%s", name);
    }
    return c;
}

/* ---------------------------------------------------------------------- */
/* Clients.                                                                */

static int
connect_tcp(const char *hostport, char **errorp)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *p;
    char *host, *port;
    int error = split_host_port(hostport, &host, &port, errorp);
    int fd = -1;

    if (error) {
        return -error;
    }
    int r = getaddrinfo(host, port, &hints, &ai);
    if (r) {
        *errorp = xasprintf("ssl:%s: %s", hostport, gai_strerror(r));
        free(host);
        free(port);
        return -EINVAL;
    }
    error = ECONNREFUSED;
    for (p = ai; p; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC,
                    p->ai_protocol);
        if (fd >= 0 && !connect(fd, p->ai_addr, p->ai_addrlen)) {
            break;
        }
        error = errno;
        if (fd >= 0) {
            close(fd);
        }
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        *errorp = xasprintf("ssl:%s: %s", hostport, strerror(error));
    }
    free(host);
    free(port);
    return fd < 0 ? -error : fd;
}

int
rpc_connect(const char *remote, const struct rpc_tls *tls,
            struct rpc_conn **connp, char **errorp)
{
    struct rpc_conn *c;
    int fd;

    *connp = NULL;
    *errorp = NULL;
    if (!strncmp(remote, "unix:", 5)) {
        struct sockaddr_un sun;
        int error = unix_address(remote + 5, &sun, errorp);
        if (error) {
            return error;
        }
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sun, sizeof sun)) {
            error = errno;
            *errorp = xasprintf("%s: %s", remote, strerror(error));
            if (fd >= 0) {
                close(fd);
            }
            return error;
        }
        c = conn_new(fd, remote);
    } else if (!strncmp(remote, "ssl:", 4)) {
        SSL_CTX *ctx = make_ctx(tls, false, errorp);
        if (!ctx) {
            return EINVAL;
        }
        fd = connect_tcp(remote + 4, errorp);
        if (fd < 0) {
            SSL_CTX_free(ctx);
            return -fd;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c = conn_new(fd, remote);
        if (c) {
            c->ctx = ctx;
            c->ssl = SSL_new(ctx);
        }
        if (!c || !c->ssl || !SSL_set_fd(c->ssl, fd)
            || SSL_connect(c->ssl) != 1) {
            *errorp = xasprintf("%s: TLS handshake failed: %s", remote,
                                ssl_errors());
            if (c) {
                rpc_close(c);
            } else {
                SSL_CTX_free(ctx);
                close(fd);
            }
            return EPROTO;
        }
    } else {
        *errorp = xasprintf("\"%s\": a remote is unix:PATH or "
                            "ssl:HOST:PORT", remote);
        return EINVAL;
    }
    if (!c) {
        close(fd);
        return ENOMEM;
    }
    *connp = c;
    return 0;
}

ssize_t
rpc_stream_write(int fd, struct ssl_st *ssl, bool *want_write,
                 const void *data, size_t n)
{
    if (ssl) {
        int r = SSL_write(ssl, data, (int) (n > INT32_MAX ? INT32_MAX : n));
        if (r > 0) {
            return r;
        }
        int e = SSL_get_error(ssl, r);
        errno = e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE
                ? EAGAIN : e == SSL_ERROR_SYSCALL && errno ? errno : EPROTO;
        *want_write = e == SSL_ERROR_WANT_WRITE;
        return -1;
    }
    return send(fd, data, n, MSG_NOSIGNAL);
}

ssize_t
rpc_stream_read(int fd, struct ssl_st *ssl, bool *want_write, void *data,
                size_t n)
{
    if (ssl) {
        int r = SSL_read(ssl, data, (int) n);
        if (r > 0) {
            return r;
        }
        int e = SSL_get_error(ssl, r);
        if (e == SSL_ERROR_ZERO_RETURN) {
            return 0;
        }
        *want_write = e == SSL_ERROR_WANT_WRITE;
        errno = e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE
                ? EAGAIN : e == SSL_ERROR_SYSCALL && errno ? errno : EPROTO;
        return e == SSL_ERROR_SYSCALL && !errno ? 0 : -1;
    }
    return read(fd, data, n);
}

static ssize_t
conn_write(struct rpc_conn *c, const void *data, size_t n)
{
    return rpc_stream_write(c->fd, c->ssl, &c->want_write, data, n);
}

/* Returns bytes read, 0 at EOF, -1 with errno. */
static ssize_t
conn_read(struct rpc_conn *c, void *data, size_t n)
{
    return rpc_stream_read(c->fd, c->ssl, &c->want_write, data, n);
}

int
rpc_send_raw(struct rpc_conn *c, const void *data_, size_t size)
{
    const char *data = data_;

    while (size) {
        ssize_t n = conn_write(c, data, size);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        data += n;
        size -= (size_t) n;
    }
    return 0;
}

/* Reads until a whole line is in 'c->in'; its length (without the
 * newline) goes to '*lenp', and the caller consumes it.  0, EOF or an
 * errno value with a message. */
static int
recv_line(struct rpc_conn *c, size_t *lenp, char **errorp)
{
    char tmp[65536];

    for (;;) {
        const char *nl = buf_find_newline(&c->in);
        if (nl) {
            *lenp = (size_t) (nl - buf_head(&c->in));
            return 0;
        }
        ssize_t n = conn_read(c, tmp, sizeof tmp);
        if (n == 0) {
            return EOF;
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            int error = errno;
            *errorp = xasprintf("%s: %s", c->name,
                                c->ssl ? ssl_errors() : strerror(error));
            return error;
        }
        if (buf_append(&c->in, tmp, (size_t) n)) {
            return ENOMEM;
        }
    }
}

/* Parses the line of 'len' bytes recv_line() found, and consumes it. */
static int
parse_line(struct rpc_conn *c, size_t len, json_t **msgp, char **errorp)
{
    json_error_t jerr;

    *msgp = json_loadb(buf_head(&c->in), len, 0, &jerr);
    buf_consume(&c->in, len + 1);
    if (!*msgp) {
        *errorp = xasprintf("%s: bad JSON from peer: %s", c->name,
                            jerr.text);
        return EPROTO;
    }
    return 0;
}

int
rpc_recv(struct rpc_conn *c, json_t **msgp, char **errorp)
{
    size_t len;
    int error = recv_line(c, &len, errorp);

    *msgp = NULL;
    return error ? error : parse_line(c, len, msgp, errorp);
}

int
rpc_call(struct rpc_conn *c, const char *method, json_t *params,
         json_t **resultp, char **errorp)
{
    return rpc_call_parts(c, method, params, NULL, NULL, resultp, errorp);
}

/* If 'msg' is a part of the reply to request 'id' of 'method' (see
 * rpc_call_parts()), returns its params, else NULL. */
static const json_t *
reply_part(const json_t *msg, const char *method, json_int_t id)
{
    const char *name = json_string_value(json_object_get(msg, "method"));
    const json_t *params = json_object_get(msg, "params");
    const json_t *pid = json_object_get(params, "id");
    size_t n = strlen(method);

    return (name && !strncmp(name, method, n) && !strcmp(name + n, ".part")
            && json_is_integer(pid) && json_integer_value(pid) == id
            ? params : NULL);
}

/* The message for an error the server sent with a null id, in answer to
 * a request of 'size' bytes: one it could not take as a request at all.
 * This client sends only well-formed requests, so that is one over the
 * server's size limit (flowdpd --max-request), and the message says so. */
static char *
refused_message(const json_t *err, size_t size)
{
    const char *m = json_string_value(json_object_get(err, "message"));

    return xasprintf("the daemon refused a request of %zu bytes: %s%s", size,
                     m ? m : "(no message)",
                     json_integer_value(json_object_get(err, "code"))
                     == RPC_INVALID_REQUEST
                     ? " (flowdpd --max-request sets the limit)" : "");
}

int
rpc_call_parts(struct rpc_conn *c, const char *method, json_t *params,
               int (*part)(const json_t *params, void *aux), void *aux,
               json_t **resultp, char **errorp)
{
    return rpc_call_parts_raw(c, method, params, part, NULL, aux, resultp,
                              errorp);
}

int
rpc_call_parts_raw(struct rpc_conn *c, const char *method, json_t *params,
                   int (*part)(const json_t *params, void *aux),
                   bool (*raw_part)(const char *rest, size_t len, void *aux),
                   void *aux, json_t **resultp, char **errorp)
{
    json_int_t id = ++c->next_id;
    json_t *req = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id",
                            id, "method", method, "params",
                            params ? params : json_object());
    char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
    int error;

    *resultp = NULL;
    *errorp = NULL;
    json_decref(req);
    if (!text) {
        return ENOMEM;
    }
    size_t size = strlen(text);
    error = rpc_send_raw(c, text, size);
    if (!error) {
        error = rpc_send_raw(c, "\n", 1);
    }
    free(text);
    if (error) {
        /* A server that refuses a request (one over its size limit) says
         * why and closes while the rest is still being sent: its reply is
         * the message to give, not "Broken pipe". */
        json_t *msg = NULL;
        char *ignored = NULL;
        const json_t *err = NULL;
        if ((error == EPIPE || error == ECONNRESET)
            && !rpc_recv(c, &msg, &ignored)) {
            err = json_object_get(msg, "error");
        }
        if (err) {
            *errorp = refused_message(err, size + 1);
            error = EPROTO;
        } else {
            *errorp = xasprintf("%s: %s", c->name, strerror(error));
        }
        json_decref(msg);
        free(ignored);
        return error;
    }
    /* How the server begins a part (as flowdpd writes them). */
    char prefix[256];
    int prefix_len = snprintf(prefix, sizeof prefix, "{\"jsonrpc\":\"2.0\","
                              "\"method\":\"%s.part\",\"params\":{\"id\":%"
                              JSON_INTEGER_FORMAT ",", method, id);
    if (prefix_len < 0 || (size_t) prefix_len >= sizeof prefix) {
        raw_part = NULL;
    }
    for (;;) {
        json_t *msg;
        if (raw_part) {
            size_t len;
            error = recv_line(c, &len, errorp);
            if (!error) {
                const char *line = buf_head(&c->in);
                size_t n = (size_t) prefix_len;
                if (len >= n && !memcmp(line, prefix, n)
                    && raw_part(line + n, len - n, aux)) {
                    buf_consume(&c->in, len + 1);
                    continue;
                }
                error = parse_line(c, len, &msg, errorp);
            }
        } else {
            error = rpc_recv(c, &msg, errorp);
        }
        if (error == EOF) {
            *errorp = xasprintf("%s: connection closed by the daemon",
                                c->name);
            return EPIPE;
        } else if (error) {
            return error;
        }
        const json_t *part_params = part ? reply_part(msg, method, id)
                                         : NULL;
        if (part_params) {
            error = part(part_params, aux);
            json_decref(msg);
            if (error) {
                *errorp = xasprintf("%s: %s", c->name, strerror(error));
                return error;
            }
            continue;
        }
        json_t *rid = json_object_get(msg, "id");
        if (!json_is_integer(rid) || json_integer_value(rid) != id) {
            json_t *err = json_object_get(msg, "error");
            if (json_is_null(rid) && err) {
                *errorp = refused_message(err, size + 1);
                json_decref(msg);
                return EPROTO;
            }
            json_decref(msg);
            continue;
        }
        json_t *err = json_object_get(msg, "error");
        if (err && !json_is_null(err)) {
            const char *m = json_string_value(json_object_get(err,
                                                              "message"));
            *errorp = xasprintf("%s", m ? m : "error without a message");
            json_decref(msg);
            return EPROTO;
        }
        *resultp = json_incref(json_object_get(msg, "result"));
        json_decref(msg);
        if (!*resultp) {
            *errorp = xasprintf("%s: reply without a result", c->name);
            return EPROTO;
        }
        return 0;
    }
}

void
rpc_close(struct rpc_conn *c)
{
    if (!c) {
        return;
    }
    if (c->ssl) {
        if (c->handshaken) {
            SSL_shutdown(c->ssl);
        }
        SSL_free(c->ssl);
    }
    if (c->ctx) {
        SSL_CTX_free(c->ctx);
    }
    close(c->fd);
    free(c->in.data);
    free(c->out.data);
    free(c);
}

/* ---------------------------------------------------------------------- */
/* Servers.                                                                */

static int
set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    return flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) ? errno : 0;
}

static int
listen_unix(struct rpc_listener *l, const char *path, char **errorp)
{
    struct sockaddr_un sun;
    struct stat st;
    int error = unix_address(path, &sun, errorp);

    if (error) {
        return error;
    }
    /* A socket file left by a daemon that died is replaced; a live one
     * (something accepts connections on it) is not. */
    if (!lstat(path, &st)) {
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool live = probe >= 0 && S_ISSOCK(st.st_mode)
                    && !connect(probe, (struct sockaddr *) &sun, sizeof sun);
        if (probe >= 0) {
            close(probe);
        }
        if (live) {
            *errorp = xasprintf("unix:%s: another daemon is listening",
                                path);
            return EADDRINUSE;
        }
        if (!S_ISSOCK(st.st_mode)) {
            *errorp = xasprintf("unix:%s: exists and is not a socket", path);
            return EEXIST;
        }
        unlink(path);
    }
    l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l->fd < 0) {
        error = errno;
        *errorp = xasprintf("unix:%s: %s", path, strerror(error));
        return error;
    }
    /* Created 0600: only the daemon's user may control it. */
    mode_t old = umask(0177);
    int r = bind(l->fd, (struct sockaddr *) &sun, sizeof sun);
    umask(old);
    if (r || listen(l->fd, 64)) {
        error = errno;
        *errorp = xasprintf("unix:%s: %s", path, strerror(error));
        return error;
    }
    l->path = strdup(path);
    snprintf(l->name, sizeof l->name, "unix:%s", path);
    return l->path ? 0 : ENOMEM;
}

static int
listen_tcp(struct rpc_listener *l, const char *addrport, char **errorp)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE }, *ai;
    char *host, *port;
    int error = split_host_port(addrport, &host, &port, errorp);

    if (error) {
        return error;
    }
    int r = getaddrinfo(*host ? host : NULL, port, &hints, &ai);
    if (r) {
        *errorp = xasprintf("ssl:%s: %s", addrport, gai_strerror(r));
        free(host);
        free(port);
        return EINVAL;
    }
    l->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                   ai->ai_protocol);
    int one = 1;
    if (l->fd < 0
        || setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one)
        || bind(l->fd, ai->ai_addr, ai->ai_addrlen) || listen(l->fd, 64)) {
        error = errno;
        *errorp = xasprintf("ssl:%s: %s", addrport, strerror(error));
    } else {
        /* Name the port actually bound (PORT may be 0: any free one). */
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        char hbuf[NI_MAXHOST], pbuf[NI_MAXSERV];
        getsockname(l->fd, (struct sockaddr *) &ss, &len);
        getnameinfo((struct sockaddr *) &ss, len, hbuf, sizeof hbuf, pbuf,
                    sizeof pbuf, NI_NUMERICHOST | NI_NUMERICSERV);
        snprintf(l->name, sizeof l->name, "ssl:%.100s:%.16s", hbuf, pbuf);
    }
    freeaddrinfo(ai);
    free(host);
    free(port);
    return error;
}

int
rpc_listen(const char *spec, const struct rpc_tls *tls,
           struct rpc_listener **lp, char **errorp)
{
    struct rpc_listener *l = calloc(1, sizeof *l);
    int error;

    *lp = NULL;
    *errorp = NULL;
    if (!l) {
        return ENOMEM;
    }
    l->fd = -1;
    if (!strncmp(spec, "unix:", 5)) {
        error = listen_unix(l, spec + 5, errorp);
    } else if (!strncmp(spec, "ssl:", 4)) {
        l->ctx = make_ctx(tls, true, errorp);
        error = l->ctx ? listen_tcp(l, spec + 4, errorp) : EINVAL;
    } else {
        *errorp = xasprintf("\"%s\": listen on unix:PATH or ssl:ADDR:PORT",
                            spec);
        error = EINVAL;
    }
    if (!error) {
        error = set_nonblocking(l->fd);
    }
    if (error) {
        l->path = NULL;         /* Not ours to remove. */
        rpc_listener_close(l);
        return error;
    }
    *lp = l;
    return 0;
}

int
rpc_listener_fd(const struct rpc_listener *l)
{
    return l->fd;
}

const char *
rpc_listener_name(const struct rpc_listener *l)
{
    return l->name;
}

int
rpc_accept(struct rpc_listener *l, struct rpc_conn **connp)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd = accept4(l->fd, (struct sockaddr *) &ss, &len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    char name[128];

    *connp = NULL;
    if (fd < 0) {
        return errno == EWOULDBLOCK ? EAGAIN : errno;
    }
    if (ss.ss_family == AF_UNIX) {
        snprintf(name, sizeof name, "%.100s#%d", l->name, fd);
    } else {
        char h[NI_MAXHOST], p[NI_MAXSERV];
        getnameinfo((struct sockaddr *) &ss, len, h, sizeof h, p, sizeof p,
                    NI_NUMERICHOST | NI_NUMERICSERV);
        snprintf(name, sizeof name, "ssl:%.100s:%.16s", h, p);
    }
    struct rpc_conn *c = conn_new(fd, name);
    if (!c) {
        close(fd);
        return ENOMEM;
    }
    if (l->ctx) {
        c->ssl = SSL_new(l->ctx);
        if (!c->ssl || !SSL_set_fd(c->ssl, fd)) {
            rpc_close(c);
            return ENOMEM;
        }
        SSL_set_accept_state(c->ssl);
        c->handshaken = false;
    }
    *connp = c;
    return 0;
}

void
rpc_listener_close(struct rpc_listener *l)
{
    if (!l) {
        return;
    }
    if (l->fd >= 0) {
        close(l->fd);
    }
    if (l->path) {
        unlink(l->path);
        free(l->path);
    }
    SSL_CTX_free(l->ctx);
    free(l);
}

int
rpc_conn_fd(const struct rpc_conn *c)
{
    return c->fd;
}

const char *
rpc_conn_name(const struct rpc_conn *c)
{
    return c->name;
}

short
rpc_conn_events(const struct rpc_conn *c)
{
    short events = 0;

    if (!c->closing && c->out.len < OUT_HIGH_WATER) {
        events |= POLLIN;
    }
    if (c->out.len || c->want_write) {
        events |= POLLOUT;
    }
    return events;
}

static void
queue_json(struct rpc_conn *c, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);

    if (!text || buf_append(&c->out, text, strlen(text))
        || buf_append(&c->out, "\n", 1)) {
        c->closing = true;      /* Out of memory: give up on this one. */
    }
    free(text);
    json_decref(msg);
}

int
rpc_queue_text(struct rpc_conn *c, const char *text, size_t len)
{
    if (buf_append(&c->out, text, len) || buf_append(&c->out, "\n", 1)) {
        c->closing = true;      /* Out of memory: give up on this one. */
        return ENOMEM;
    }
    return 0;
}

char *
rpc_request_id_text(const json_t *request)
{
    json_t *id = request ? json_object_get(request, "id") : NULL;

    return id ? json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY)
              : strdup("null");
}

static json_t *
reply_id(const json_t *request)
{
    json_t *id = request ? json_object_get(request, "id") : NULL;

    return id ? json_incref(id) : json_null();
}

void
rpc_reply(struct rpc_conn *c, const json_t *request, json_t *result)
{
    queue_json(c, json_pack("{s:s, s:o, s:o}", "jsonrpc", "2.0", "id",
                            reply_id(request), "result",
                            result ? result : json_null()));
}

void
rpc_reply_error(struct rpc_conn *c, const json_t *request, int code,
                const char *format, ...)
{
    va_list args;
    char msg[1024];

    va_start(args, format);
    vsnprintf(msg, sizeof msg, format, args);
    va_end(args);
    queue_json(c, json_pack("{s:s, s:o, s:{s:i, s:s}}", "jsonrpc", "2.0",
                            "id", reply_id(request), "error", "code", code,
                            "message", msg));
}

/* Writes what is queued; 0 or an errno value. */
static int
conn_flush(struct rpc_conn *c)
{
    c->want_write = false;
    while (c->out.len) {
        ssize_t n = conn_write(c, buf_head(&c->out), c->out.len);
        if (n < 0) {
            return errno == EAGAIN || errno == EINTR ? 0 : errno;
        }
        buf_consume(&c->out, (size_t) n);
    }
    return 0;
}

/* The error a request over the size limit gets (clients add that
 * flowdpd --max-request sets the limit). */
#define REQUEST_TOO_LONG "request longer than %zu bytes: closing"

int
rpc_flush(struct rpc_conn *c)
{
    return c->handshaken ? conn_flush(c) : 0;
}

/* Parses and hands over each complete line of the input. */
static void
conn_process(struct rpc_conn *c, size_t max_request,
             void (*handle)(struct rpc_conn *, json_t *, void *), void *aux)
{
    while (!c->closing && c->out.len < OUT_HIGH_WATER) {
        const char *nl = buf_find_newline(&c->in);
        if (!nl) {
            if (c->in.len > max_request) {
                rpc_reply_error(c, NULL, RPC_INVALID_REQUEST,
                                REQUEST_TOO_LONG, max_request);
                c->closing = true;
            }
            return;
        }
        size_t len = (size_t) (nl - buf_head(&c->in));
        json_error_t jerr;
        json_t *req = len <= max_request
                      ? json_loadb(buf_head(&c->in), len, 0, &jerr) : NULL;
        if (len > max_request) {
            rpc_reply_error(c, NULL, RPC_INVALID_REQUEST, REQUEST_TOO_LONG,
                            max_request);
            c->closing = true;
        } else if (!req) {
            rpc_reply_error(c, NULL, RPC_PARSE_ERROR,
                            "not JSON: %s (line %d, column %d)", jerr.text,
                            jerr.line, jerr.column);
        } else if (!json_is_object(req)
                   || !json_is_string(json_object_get(req, "method"))) {
            rpc_reply_error(c, req, RPC_INVALID_REQUEST,
                            "not a JSON-RPC request: an object with "
                            "\"method\" (a string) is expected");
        } else {
            handle(c, req, aux);
        }
        json_decref(req);
        buf_consume(&c->in, len + 1);
    }
}

int
rpc_conn_run(struct rpc_conn *c, size_t max_request,
             void (*handle)(struct rpc_conn *, json_t *, void *), void *aux)
{
    char tmp[65536];

    if (!c->handshaken) {
        int r = SSL_do_handshake(c->ssl);
        if (r != 1) {
            int e = SSL_get_error(c->ssl, r);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
                c->want_write = e == SSL_ERROR_WANT_WRITE;
                return 0;
            }
            ERR_clear_error();
            return EPROTO;      /* No or bad client certificate, ... */
        }
        c->handshaken = true;
    }

    int error = conn_flush(c);
    if (error) {
        return error;
    }
    while (!c->closing && c->out.len < OUT_HIGH_WATER) {
        ssize_t n = conn_read(c, tmp, sizeof tmp);
        if (n == 0) {
            /* The client is done sending: answer what it sent (a final
             * line without a newline is incomplete and ignored), then
             * close once the replies are out. */
            conn_process(c, max_request, handle, aux);
            c->closing = true;
            break;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                break;
            }
            return errno;
        }
        if (buf_append(&c->in, tmp, (size_t) n)) {
            return ENOMEM;
        }
        conn_process(c, max_request, handle, aux);
    }
    conn_process(c, max_request, handle, aux);
    error = conn_flush(c);
    if (error) {
        return error;
    }
    return c->closing && !c->out.len ? EOF : 0;
}
