/*
 * flowdpd's OpenFlow transport: listeners, controller connections,
 * framing, the hello exchange, echo, fail mode.
 *
 * Theory of operation.
 *
 * Every OpenFlow connection is a byte stream (a unix or TCP socket, TLS
 * over TCP) run non-blocking from the daemon's one poll loop (flowdpd.c
 * serve(): of_n_pollfds(), of_fill_pollfds(), of_run(), of_wake_time()),
 * as the JSON-RPC channel's are.  Connections come from two places:
 *
 *   - listeners ("service connections" in Open vSwitch's words):
 *     punix:PATH (by default <rundir>/flowdpd.mgmt, mode 0600, as
 *     ovs-vswitchd's br0.mgmt, which is where ovs-ofctl connects),
 *     ptcp:PORT[:IP] and pssl:PORT[:IP] (mutual TLS with the JSON-RPC
 *     channel's --private-key, --certificate and --ca-cert);
 *   - controllers (--controller=tcp:IP[:PORT]|ssl:IP[:PORT]|unix:PATH, or
 *     flowdp-ctl set-controller), which flowdpd connects to itself, as
 *     Open vSwitch's rconn does: a failed or lost connection is tried
 *     again after a back-off that starts at 1 s and doubles up to 8 s; a
 *     connection that stayed up for at least the longest back-off starts
 *     over at 1 s.  A controller connection that is silent for the probe
 *     interval (--inactivity-probe, 5 s) is sent an echo request, and one
 *     silent for twice the interval is dropped and retried.
 *
 * Framing.  A message is an 8-byte header (version, type, 16-bit length,
 * xid) and its body.  A connection reads into one buffer that holds a
 * whole message of the largest length (65535 bytes) plus what follows it,
 * and hands each complete message on; a length below 8 cannot be framed
 * and closes the connection (with an OFPBRC_BAD_LEN error first, naming
 * the header).  Output goes to a queue per connection.  Replies are always
 * queued, but a connection whose queue holds more than OUT_HIGH_WATER
 * bytes is not read until the peer drains it, so that a peer that sends
 * requests and reads no replies holds a bounded amount of memory and
 * never blocks the loop; asynchronous messages (packet-ins) are dropped
 * and counted once the queue holds ASYNC_LIMIT bytes.
 *
 * Hello.  Each side sends a hello as soon as the connection is up: ours
 * names the highest allowed version in its header and every allowed
 * version in a version bitmap element (OpenFlow 1.3.1+).  The version is
 * the highest both allow: the peer's bitmap if its hello has one, else
 * every version up to its header's (as Open vSwitch's
 * ofputil_decode_hello()).  With none in common, an OFPHFC_INCOMPATIBLE
 * error saying which versions each side supports is sent and the
 * connection closed; a first message other than a hello closes it too.
 * After the hello, a message in another version gets OFPBRC_BAD_VERSION
 * and is otherwise ignored (as Open vSwitch's vconn_recv()), except
 * hello, error and echo, which any version may carry.
 *
 * Fail mode.  With controllers configured, none of them connected for
 * three probe intervals, and --fail-mode=standalone, the daemon adds the
 * flow "priority=0,cookie=FAIL_OPEN_COOKIE,actions=NORMAL" to table 0 as
 * Open vSwitch's fail-open does (so that the switch keeps forwarding as a
 * learning switch), and deletes it (strictly, by its cookie) when a
 * controller connects.  The change goes through apply_op(), journalled as
 * any other.  In secure mode, nothing is added.
 *
 * Thread-safety: main thread only.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "utilities/flowdpd.h"
#include "utilities/flowdpd-openflow.h"
#include "lib/ofp-msgs.h"
#include "utilities/rpc.h"
#include "utilities/tool.h"

/* The queue length past which a connection is not read (see the theory
 * of operation): a few large replies (a flow dump part is at most one
 * 64 kB message) fit below it. */
#define OUT_HIGH_WATER (1u << 20)
/* Asynchronous messages are dropped once this much is queued: about 1000
 * packet-ins of a full 128-byte miss_send_len, a tenth of a second at
 * the rates a controller takes them. */
#define ASYNC_LIMIT (256u << 10)
/* The default TCP port of controllers, as Open vSwitch's (IANA's). */
#define OFP_DEFAULT_PORT "6653"
/* Reconnection back-off, as Open vSwitch's rconn: 1 s doubling to 8 s. */
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 8000
/* At most this many controllers and connections. */
#define MAX_OF_CONNS 256
/* The fail-open flow's cookie, which marks it as ours to delete. */
#define FAIL_OPEN_COOKIE "0xf0f0f0f0f0f0f0f0"
#define FAIL_OPEN_COOKIE_VALUE UINT64_C(0xf0f0f0f0f0f0f0f0)

/* A byte queue, consumed from the front. */
struct obuf {
    uint8_t *data;
    size_t start, len, cap;
};

enum conn_state {
    CS_CONNECTING,              /* Non-blocking connect() in progress. */
    CS_TLS,                     /* TLS handshake in progress. */
    CS_HELLO,                   /* Our hello sent; waiting for the peer's. */
    CS_ACTIVE,                  /* Negotiated: messages are dispatched. */
};

struct of_controller;

struct conn {
    struct ofconn pub;          /* What the dispatch sees: first member. */
    int fd;
    SSL *ssl;
    enum conn_state state;
    bool want_write;            /* TLS needs the socket writable. */
    bool closing;               /* Flush what is queued, then close. */
    bool dead;                  /* Close at the end of of_run(). */
    char name[160];
    uint8_t *in;                /* [IN_CAP] */
    size_t in_len;
    struct obuf out;
    uint32_t allowed;           /* Version bitmap we allow. */
    int64_t connected_at;       /* monotonic_ms() when it came up. */
    int64_t last_rx;            /* Last byte received. */
    bool probe_sent;
    int pollfd_index;           /* In the last of_fill_pollfds(), or -1. */
    struct of_controller *controller;   /* NULL for service connections. */
    bool snoop;                 /* On the .snoop socket: gets a copy of
                                 * the controllers' traffic. */
    struct openflow *of;
    uint64_t n_rx_msgs, n_tx_msgs;
};

#define IN_CAP (2 * (OFP_MAX_MSG + 1))

struct of_listener {
    int fd;
    SSL_CTX *ctx;               /* pssl only. */
    char *path;                 /* punix's file, removed at close. */
    char name[160];
    int pollfd_index;
    bool snoop;                 /* Its connections are snoops. */
};

struct of_controller {
    char *target;               /* As given: tcp:..., ssl:..., unix:... */
    struct conn *conn;          /* NULL while backing off. */
    int backoff_ms;             /* Last back-off, 0 before the first. */
    int64_t next_attempt;       /* monotonic_ms() of the next connect. */
    char last_error[128];
    uint64_t n_attempts, n_connects;
};

struct openflow {
    struct of_listener *listeners[MAX_LISTENERS + 2];
    size_t n_listeners;
    struct conn **conns;
    size_t n_conns;
    struct of_controller *controllers;
    size_t n_controllers;
    SSL_CTX *client_ctx;        /* For ssl: controllers, made when first
                                 * needed. */
    struct rpc_tls tls;
    int probe_ms;               /* --inactivity-probe. */
    bool standalone;            /* --fail-mode=standalone. */
    uint32_t versions;          /* Bitmap of allowed versions. */
    int64_t no_controller_since;        /* When the last one went. */
    bool fail_open;             /* The fail-open flow is in. */
    bool journal_controllers;   /* The journal set the controllers (which
                                 * then win over --controller). */
    bool journal_fail_mode;     /* The journal set the fail mode. */
    size_t n_snoops;            /* Snoop connections open. */
    int pin_pollfd_index;       /* The packet-in queue's, or -1. */
};

/* ---------------------------------------------------------------------- */
/* Options.                                                                */

static const struct {
    const char *name;
    uint8_t version;
} version_names[] = {
    { "OpenFlow10", FDP_OFP10 },
    { "OpenFlow13", FDP_OFP13 },
    { "OpenFlow14", FDP_OFP14 },
    { "OpenFlow15", FDP_OFP15 },
};

#define DEFAULT_VERSIONS (1u << FDP_OFP10 | 1u << FDP_OFP13 \
                          | 1u << FDP_OFP14 | 1u << FDP_OFP15)

void
of_config_init(struct of_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->probe_ms = 5000;
    cfg->versions = DEFAULT_VERSIONS;
}

/* Checks the syntax of a controller target; 0 or EINVAL with a message in
 * '*msgp' (freed by the caller). */
static int
check_target(const char *t, char **msgp)
{
    *msgp = NULL;
    if (!strncmp(t, "unix:", 5) && t[5]) {
        return 0;
    }
    if ((!strncmp(t, "tcp:", 4) || !strncmp(t, "ssl:", 4)) && t[4]) {
        return 0;
    }
    *msgp = xasprintf("\"%s\": a controller is tcp:IP[:PORT], "
                      "ssl:IP[:PORT] or unix:PATH", t);
    return EINVAL;
}

static int
check_listener(const char *t, char **msgp)
{
    *msgp = NULL;
    if ((!strncmp(t, "punix:", 6) && t[6])
        || (!strncmp(t, "ptcp:", 5) && t[5])
        || (!strncmp(t, "pssl:", 5) && t[5])) {
        return 0;
    }
    *msgp = xasprintf("\"%s\": an OpenFlow listener is punix:PATH, "
                      "ptcp:PORT[:IP] or pssl:PORT[:IP]", t);
    return EINVAL;
}

void
of_option(struct of_config *cfg, enum of_opt opt, const char *arg)
{
    char *msg = NULL;

    switch (opt) {
    case OF_OPT_LISTEN:
        if (check_listener(arg, &msg)) {
            fatal("--openflow: %s", msg);
        }
        if (cfg->n_listen == MAX_LISTENERS) {
            fatal("--openflow: at most %d", MAX_LISTENERS);
        }
        cfg->listen[cfg->n_listen++] = arg;
        break;
    case OF_OPT_NONE:
        cfg->no_openflow = true;
        break;
    case OF_OPT_CONTROLLER:
        if (check_target(arg, &msg)) {
            fatal("--controller: %s", msg);
        }
        if (cfg->n_controllers == MAX_CONTROLLERS) {
            fatal("--controller: at most %d", MAX_CONTROLLERS);
        }
        cfg->controllers[cfg->n_controllers++] = arg;
        break;
    case OF_OPT_PROBE: {
        char *end;
        errno = 0;
        long v = strtol(arg, &end, 10);
        /* Open vSwitch allows no probe interval under 5 s (rconn.c);
         * flowdpd allows 100 ms, which tests use, and 0 to turn probes
         * off. */
        if (errno || *end || v < 0 || v > 3600000 || (v && v < 100)) {
            fatal("--inactivity-probe: \"%s\": expected milliseconds, 0 "
                  "(off) or from 100 to 3600000", arg);
        }
        cfg->probe_ms = (int) v;
        break;
    }
    case OF_OPT_FAIL_MODE:
        if (!strcmp(arg, "standalone")) {
            cfg->standalone = true;
        } else if (!strcmp(arg, "secure")) {
            cfg->standalone = false;
        } else {
            fatal("--fail-mode: \"%s\": expected secure or standalone", arg);
        }
        break;
    case OF_OPT_VERSIONS: {
        char *copy = strdup(arg), *save = NULL;
        uint32_t v = 0;
        if (!copy) {
            fatal("out of memory");
        }
        for (char *w = strtok_r(copy, ",", &save); w;
             w = strtok_r(NULL, ",", &save)) {
            size_t i;
            for (i = 0; i < sizeof version_names / sizeof version_names[0];
                 i++) {
                if (!strcmp(w, version_names[i].name)) {
                    v |= 1u << version_names[i].version;
                    break;
                }
            }
            if (i == sizeof version_names / sizeof version_names[0]) {
                fatal("--openflow-versions: \"%s\": expected a list of "
                      "OpenFlow10, OpenFlow13, OpenFlow14, OpenFlow15", w);
            }
        }
        free(copy);
        if (!v) {
            fatal("--openflow-versions: no version given");
        }
        cfg->versions = v;
        break;
    }
    }
}

/* ---------------------------------------------------------------------- */
/* Byte queue.                                                             */

static int
obuf_append(struct obuf *b, const void *data, size_t n)
{
    if (b->start + b->len + n > b->cap && b->start) {
        memmove(b->data, b->data + b->start, b->len);
        b->start = 0;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) {
            cap *= 2;
        }
        uint8_t *p = realloc(b->data, cap);
        if (!p) {
            return ENOMEM;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->start + b->len, data, n);
    b->len += n;
    return 0;
}

static void
obuf_consume(struct obuf *b, size_t n)
{
    b->start += n;
    b->len -= n;
    if (!b->len) {
        b->start = 0;
        /* A queue that grew for a burst gives its memory back. */
        if (b->cap > OUT_HIGH_WATER) {
            free(b->data);
            b->data = NULL;
            b->cap = 0;
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Messages the transport writes itself.                                   */

void
of_start(struct fdp__ofpbuf *b, uint8_t version, uint8_t type, uint32_t xid)
{
    fdp__ofpbuf_put_u8(b, version);
    fdp__ofpbuf_put_u8(b, type);
    fdp__ofpbuf_put_be16(b, 0);
    fdp__ofpbuf_put_be32(b, xid);
}

void
of_finish(struct fdp__ofpbuf *b)
{
    if (!b->failed && b->size >= OFP_HEADER_LEN) {
        fdp__ofp_set_be16(b->data + 2, (uint16_t) (b->size > 0xffff
                                                   ? 0xffff : b->size));
    }
}

static struct conn *
conn_of(struct ofconn *c)
{
    return (struct conn *) c;
}

const char *
ofconn_name(const struct ofconn *c)
{
    return ((const struct conn *) c)->name;
}

/* Copies one message of controller connection 'from' (sent or
 * received) to every snoop, as Open vSwitch's rconn monitors: a snoop
 * that does not keep up loses copies (counted), never the controller
 * its messages. */
static void
snoop_copy(const struct conn *from, const void *msg, size_t len)
{
    struct openflow *of = from->of;

    for (size_t i = 0; of->n_snoops && i < of->n_conns; i++) {
        struct conn *sn = of->conns[i];
        if (sn->snoop && sn->state == CS_ACTIVE && !sn->dead) {
            if (sn->out.len + len > ASYNC_LIMIT
                || obuf_append(&sn->out, msg, len)) {
                sn->pub.n_async_dropped++;
            }
        }
    }
}

static void
queue_bytes(struct conn *c, const void *msg, size_t len)
{
    if (c->closing && c->dead) {
        return;
    }
    if (obuf_append(&c->out, msg, len)) {
        vlog(L_WARN, "%s: out of memory queueing a message: closing",
             c->name);
        c->dead = true;
        return;
    }
    c->n_tx_msgs++;
    if (c->controller) {
        snoop_copy(c, msg, len);
    }
}

void
ofconn_send(struct ofconn *c_, const void *msg, size_t len)
{
    queue_bytes(conn_of(c_), msg, len);
}

static int conn_flush(struct conn *);

void
ofconn_flush(struct ofconn *c_)
{
    struct conn *c = conn_of(c_);

    /* An error is found again, and the connection closed, by the next
     * conn_run(). */
    if (c->state == CS_ACTIVE && !c->dead) {
        (void) conn_flush(c);
    }
}

bool
ofconn_send_async(struct ofconn *c_, const void *msg, size_t len)
{
    struct conn *c = conn_of(c_);

    if (c->state != CS_ACTIVE || c->out.len + len > ASYNC_LIMIT) {
        c->pub.n_async_dropped++;
        return false;
    }
    queue_bytes(c, msg, len);
    return true;
}

void
ofconn_send_error(struct ofconn *c, enum fdp_ofperr error,
                  const uint8_t *request, size_t len)
{
    struct fdp__ofpbuf b;

    fdp__ofpbuf_init(&b);
    if (!fdp_ofp_encode_error(&b, error, request, len, c->version)) {
        ofconn_send(c, b.data, b.size);
    }
    fdp__ofpbuf_uninit(&b);
}

/* The highest version in 'bitmap' (nonzero). */
static uint8_t
highest_version(uint32_t bitmap)
{
    return (uint8_t) (31 - __builtin_clz(bitmap));
}

/* "1.0, 1.3" for a bitmap, into 'buf'. */
static void
format_versions(uint32_t bitmap, char *buf, size_t size)
{
    size_t len = 0;

    buf[0] = '\0';
    for (unsigned int v = 1; v < 32 && len < size; v++) {
        if (bitmap & (1u << v)) {
            int n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
                             v <= 6 ? (const char *[]) { "", "1.0", "1.1",
                                                         "1.2", "1.3", "1.4",
                                                         "1.5" }[v]
                                    : "?");
            len += n > 0 ? (size_t) n : 0;
        }
    }
}

static void
send_hello(struct conn *c)
{
    struct fdp__ofpbuf b;
    uint8_t version = highest_version(c->allowed);

    fdp__ofpbuf_init(&b);
    of_start(&b, version, OFPT_HELLO, 0);
    /* The version bitmap element (OpenFlow 1.3.1, 7.5.1): type 1, its
     * length, one 32-bit bitmap; padded to 8 bytes.  An OpenFlow 1.0
     * peer ignores a hello's body. */
    fdp__ofpbuf_put_be16(&b, 1);
    fdp__ofpbuf_put_be16(&b, 8);
    fdp__ofpbuf_put_be32(&b, c->allowed);
    of_finish(&b);
    if (!fdp__ofpbuf_failed(&b)) {
        queue_bytes(c, b.data, b.size);
    } else {
        c->dead = true;
    }
    fdp__ofpbuf_uninit(&b);
}

/* The versions the peer's hello 'msg' ('len' bytes) allows. */
static uint32_t
peer_versions(const uint8_t *msg, size_t len)
{
    struct fdp__ofp_reader r;
    uint32_t bitmap = 0;
    uint8_t version = msg[0];

    fdp__ofp_reader_init(&r, msg + OFP_HEADER_LEN, len - OFP_HEADER_LEN);
    while (r.left >= 4) {
        const uint8_t *h = fdp__ofp_pull(&r, 4);
        uint16_t type = fdp__ofp_get_be16(h);
        uint16_t elen = fdp__ofp_get_be16(h + 2);
        struct fdp__ofp_reader body;
        if (elen < 4 || !fdp__ofp_pull_reader(&r, elen - 4, &body)) {
            break;
        }
        if (type == 1) {
            /* Only the first 32 versions matter to us. */
            const uint8_t *w = fdp__ofp_pull(&body, 4);
            if (w) {
                bitmap |= fdp__ofp_get_be32(w);
            }
        }
        /* Elements are padded to a multiple of 8 bytes. */
        size_t pad = (8 - elen % 8) % 8;
        fdp__ofp_pull(&r, pad < r.left ? pad : r.left);
    }
    if (!bitmap) {
        /* No bitmap: every version up to the header's. */
        bitmap = version >= 31 ? 0xfffffffe
                               : ((1u << (version + 1)) - 1) & ~1u;
    }
    return bitmap;
}

/* ---------------------------------------------------------------------- */
/* Connections.                                                            */

static struct conn *
conn_new(struct openflow *of, int fd, const char *name,
         struct of_controller *controller)
{
    struct conn *c = calloc(1, sizeof *c);

    if (!c || !(c->in = malloc(IN_CAP))) {
        free(c);
        return NULL;
    }
    c->fd = fd;
    c->of = of;
    c->pollfd_index = -1;
    c->allowed = of->versions;
    c->controller = controller;
    c->connected_at = c->last_rx = monotonic_ms();
    snprintf(c->name, sizeof c->name, "%s", name);
    of_conn_init(&c->pub, controller != NULL);
    return c;
}

static void
conn_free(struct conn *c)
{
    if (!c) {
        return;
    }
    if (c->ssl) {
        if (c->state > CS_TLS) {
            SSL_shutdown(c->ssl);
        }
        SSL_free(c->ssl);
    }
    if (c->fd >= 0) {
        close(c->fd);
    }
    free(c->in);
    free(c->out.data);
    of_conn_destroy(&c->pub);
    free(c);
}

static bool
add_conn(struct openflow *of, struct conn *c)
{
    if (of->n_conns >= MAX_OF_CONNS) {
        vlog(L_WARN, "%s: refused: already %d OpenFlow connections",
             c->name, MAX_OF_CONNS);
        return false;
    }
    struct conn **p = realloc(of->conns, (of->n_conns + 1) * sizeof *p);
    if (!p) {
        return false;
    }
    of->conns = p;
    of->conns[of->n_conns++] = c;
    return true;
}

static ssize_t
conn_write(struct conn *c, const void *data, size_t n)
{
    return rpc_stream_write(c->fd, c->ssl, &c->want_write, data, n);
}

/* Bytes read, 0 at EOF, -1 with errno. */
static ssize_t
conn_read(struct conn *c, void *data, size_t n)
{
    return rpc_stream_read(c->fd, c->ssl, &c->want_write, data, n);
}

/* Writes what is queued as far as the socket takes it; 0 or an errno. */
static int
conn_flush(struct conn *c)
{
    c->want_write = false;
    while (c->out.len) {
        ssize_t n = conn_write(c, c->out.data + c->out.start, c->out.len);
        if (n < 0) {
            return errno == EAGAIN || errno == EINTR ? 0 : errno;
        }
        obuf_consume(&c->out, (size_t) n);
    }
    return 0;
}

static void on_active(struct server *, struct conn *);

/* The peer's hello 'msg': negotiates the version.  False if the
 * connection must close (after the error queued is sent). */
static bool
handle_hello(struct server *s, struct conn *c, const uint8_t *msg,
             size_t len)
{
    uint32_t peer = peer_versions(msg, len);
    uint32_t common = peer & c->allowed;
    char ours[64], theirs[64];

    format_versions(c->allowed, ours, sizeof ours);
    format_versions(peer, theirs, sizeof theirs);
    if (!common) {
        char text[192];
        struct fdp__ofpbuf b;
        snprintf(text, sizeof text, "We support versions %s, you support "
                 "versions %s, no common versions.", ours, theirs);
        vlog(L_WARN, "%s: version negotiation failed (we support %s, peer "
             "supports %s)", c->name, ours, theirs);
        fdp__ofpbuf_init(&b);
        if (!fdp_ofp_encode_hello_error(&b, FDP_OFPHFC_INCOMPATIBLE,
                                        highest_version(peer), text)) {
            queue_bytes(c, b.data, b.size);
        }
        fdp__ofpbuf_uninit(&b);
        return false;
    }
    c->pub.version = highest_version(common);
    c->state = CS_ACTIVE;
    vlog(L_DBG, "%s: negotiated OpenFlow version 0x%02x (we support %s, "
         "peer supports %s)", c->name, c->pub.version, ours, theirs);
    on_active(s, c);
    return true;
}

/* One whole message from the peer.  False if the connection must close
 * once its queue is sent. */
static bool
handle_message(struct server *s, struct conn *c, const uint8_t *msg,
               size_t len)
{
    uint8_t type = msg[1];

    c->n_rx_msgs++;
    if (c->controller) {
        snoop_copy(c, msg, len);
    }
    if (c->state == CS_HELLO) {
        if (type != OFPT_HELLO) {
            vlog(L_WARN, "%s: received message type %u while expecting "
                 "hello: closing", c->name, type);
            return false;
        }
        return handle_hello(s, c, msg, len);
    }
    if (type == OFPT_HELLO) {
        return true;            /* A repeated hello means nothing. */
    }
    if (c->snoop && type != OFPT_ECHO_REQUEST) {
        return true;            /* A snoop only watches. */
    }
    if (msg[0] != c->pub.version && type != OFPT_ERROR
        && type != OFPT_ECHO_REQUEST && type != OFPT_ECHO_REPLY) {
        ofconn_send_error(&c->pub, FDP_OFPBRC_BAD_VERSION, msg, len);
        return true;
    }
    switch (type) {
    case OFPT_ECHO_REQUEST: {
        /* The reply carries the request's body back, in its version. */
        uint8_t *reply = malloc(len);
        if (reply) {
            memcpy(reply, msg, len);
            reply[1] = OFPT_ECHO_REPLY;
            queue_bytes(c, reply, len);
            free(reply);
        }
        return true;
    }
    case OFPT_ECHO_REPLY:
        return true;            /* It is traffic: last_rx is updated. */
    case OFPT_ERROR:
        vlog(L_DBG, "%s: received an OpenFlow error (type %u, code %u)",
             c->name, len >= 12 ? fdp__ofp_get_be16(msg + 8) : 0,
             len >= 12 ? fdp__ofp_get_be16(msg + 10) : 0);
        return true;
    default:
        return of_dispatch(s, &c->pub, msg, len);
    }
}

/* Frames and handles what 'c->in' holds.  False to close. */
static bool
process_input(struct server *s, struct conn *c)
{
    size_t off = 0;
    bool keep = true;

    while (keep && c->in_len - off >= OFP_HEADER_LEN
           && c->out.len < OUT_HIGH_WATER) {
        const uint8_t *msg = c->in + off;
        size_t len = fdp__ofp_get_be16(msg + 2);
        if (len < OFP_HEADER_LEN) {
            vlog(L_WARN, "%s: message length %zu is shorter than the "
                 "header: closing", c->name, len);
            ofconn_send_error(&c->pub, FDP_OFPBRC_BAD_LEN, msg,
                              OFP_HEADER_LEN);
            keep = false;
            break;
        }
        if (c->in_len - off < len) {
            break;
        }
        keep = handle_message(s, c, msg, len);
        off += len;
    }
    if (off) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
    return keep;
}

/* Reads and handles what the peer sent; 0, or EOF or an errno to close. */
static int
conn_receive(struct server *s, struct conn *c)
{
    while (!c->closing && c->out.len < OUT_HIGH_WATER) {
        if (c->in_len == IN_CAP) {
            /* A full buffer holds a whole message: handle it before
             * reading more (a read of 0 bytes would look like EOF). */
            if (!process_input(s, c)) {
                c->closing = true;
            }
            if (c->in_len == IN_CAP) {
                break;
            }
        }
        ssize_t n = conn_read(c, c->in + c->in_len, IN_CAP - c->in_len);
        if (n == 0) {
            return EOF;
        }
        if (n < 0) {
            return errno == EAGAIN || errno == EINTR ? 0 : errno;
        }
        c->in_len += (size_t) n;
        c->last_rx = monotonic_ms();
        c->probe_sent = false;
        if (!process_input(s, c)) {
            c->closing = true;
        }
    }
    return 0;
}

/* Does the connection's I/O after poll() said 'revents'.  0 to keep it,
 * or EOF or an errno value to close it. */
static int
conn_run(struct server *s, struct conn *c, short revents)
{
    if (c->state == CS_CONNECTING) {
        if (!(revents & (POLLOUT | POLLERR | POLLHUP))) {
            return 0;
        }
        int err = 0;
        socklen_t elen = sizeof err;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &elen) || err) {
            return err ? err : errno;
        }
        c->state = c->ssl ? CS_TLS : CS_HELLO;
        if (c->state == CS_HELLO) {
            send_hello(c);
        }
    }
    if (c->state == CS_TLS) {
        int r = SSL_do_handshake(c->ssl);
        if (r != 1) {
            int e = SSL_get_error(c->ssl, r);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
                c->want_write = e == SSL_ERROR_WANT_WRITE;
                return 0;
            }
            ERR_clear_error();
            return EPROTO;
        }
        c->state = CS_HELLO;
        send_hello(c);
    }
    int error = conn_flush(c);
    if (!error && (revents & (POLLIN | POLLHUP | POLLERR))) {
        error = conn_receive(s, c);
        if (!error) {
            /* Input handled while the queue was over its mark is taken
             * up again as soon as the queue drains. */
            if (!c->closing && !process_input(s, c)) {
                c->closing = true;
            }
        }
    } else if (!error && c->in_len && c->out.len < OUT_HIGH_WATER) {
        if (!process_input(s, c)) {
            c->closing = true;
        }
    }
    if (!error) {
        error = conn_flush(c);
    }
    if (!error && c->closing && !c->out.len) {
        error = EOF;
    }
    return error;
}

static short
conn_events(const struct conn *c)
{
    short events = 0;

    if (c->state == CS_CONNECTING) {
        return POLLOUT;
    }
    if (!c->closing && c->out.len < OUT_HIGH_WATER) {
        events |= POLLIN;
    }
    if (c->out.len || c->want_write) {
        events |= POLLOUT;
    }
    return events;
}

/* ---------------------------------------------------------------------- */
/* Listeners.                                                              */

static int
set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    return flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) ? errno : 0;
}

/* "PORT[:IP]" (ptcp/pssl) into a bound, listening socket. */
static int
listen_inet(struct of_listener *l, const char *kind, const char *spec,
            char **msgp)
{
    char port[16], host[128] = "";
    const char *colon = strchr(spec, ':');
    size_t plen = colon ? (size_t) (colon - spec) : strlen(spec);
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICHOST
                                          | AI_NUMERICSERV };
    struct addrinfo *ai;

    if (!plen || plen >= sizeof port) {
        *msgp = xasprintf("%s:%s: expected PORT[:IP]", kind, spec);
        return EINVAL;
    }
    memcpy(port, spec, plen);
    port[plen] = '\0';
    if (colon) {
        const char *h = colon + 1;
        size_t hlen = strlen(h);
        if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
            h++;
            hlen -= 2;
        }
        if (hlen >= sizeof host) {
            *msgp = xasprintf("%s:%s: address too long", kind, spec);
            return EINVAL;
        }
        memcpy(host, h, hlen);
        host[hlen] = '\0';
    }
    int r = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (r) {
        *msgp = xasprintf("%s:%s: %s", kind, spec, gai_strerror(r));
        return EINVAL;
    }
    int one = 1, error = 0;
    l->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                   ai->ai_protocol);
    if (l->fd < 0
        || setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one)
        || bind(l->fd, ai->ai_addr, ai->ai_addrlen) || listen(l->fd, 64)) {
        error = errno;
        *msgp = xasprintf("%s:%s: %s", kind, spec, strerror(error));
    } else {
        /* Name the port bound (PORT may be 0: any free one). */
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        char h[NI_MAXHOST], p[NI_MAXSERV];
        getsockname(l->fd, (struct sockaddr *) &ss, &len);
        getnameinfo((struct sockaddr *) &ss, len, h, sizeof h, p, sizeof p,
                    NI_NUMERICHOST | NI_NUMERICSERV);
        snprintf(l->name, sizeof l->name, "%s:%.16s:%.100s", kind, p, h);
    }
    freeaddrinfo(ai);
    return error;
}

static int
listen_unix(struct of_listener *l, const char *path, char **msgp)
{
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    struct stat st;
    int error;

    if (strlen(path) >= sizeof sun.sun_path) {
        *msgp = xasprintf("punix:%s: path longer than %zu bytes", path,
                          sizeof sun.sun_path - 1);
        return ENAMETOOLONG;
    }
    strcpy(sun.sun_path, path);
    /* A socket file a dead daemon left is replaced; a live one is not. */
    if (!lstat(path, &st)) {
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool live = probe >= 0 && S_ISSOCK(st.st_mode)
                    && !connect(probe, (struct sockaddr *) &sun, sizeof sun);
        if (probe >= 0) {
            close(probe);
        }
        if (live) {
            *msgp = xasprintf("punix:%s: another daemon is listening", path);
            return EADDRINUSE;
        }
        if (!S_ISSOCK(st.st_mode)) {
            *msgp = xasprintf("punix:%s: exists and is not a socket", path);
            return EEXIST;
        }
        unlink(path);
    }
    l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l->fd < 0) {
        error = errno;
        *msgp = xasprintf("punix:%s: %s", path, strerror(error));
        return error;
    }
    /* Created 0600: only the daemon's user may program the switch. */
    mode_t old = umask(0177);
    int r = bind(l->fd, (struct sockaddr *) &sun, sizeof sun);
    umask(old);
    if (r || listen(l->fd, 64)) {
        error = errno;
        *msgp = xasprintf("punix:%s: %s", path, strerror(error));
        return error;
    }
    l->path = strdup(path);
    snprintf(l->name, sizeof l->name, "punix:%.150s", path);
    return l->path ? 0 : ENOMEM;
}

static void
listener_close(struct of_listener *l)
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

static int
listener_open(struct openflow *of, const char *spec,
              struct of_listener **lp, char **msgp)
{
    struct of_listener *l = calloc(1, sizeof *l);
    int error;

    *lp = NULL;
    *msgp = NULL;
    if (!l) {
        return ENOMEM;
    }
    l->fd = -1;
    if (!strncmp(spec, "punix:", 6)) {
        error = listen_unix(l, spec + 6, msgp);
    } else if (!strncmp(spec, "ptcp:", 5)) {
        error = listen_inet(l, "ptcp", spec + 5, msgp);
    } else if (!strncmp(spec, "pssl:", 5)) {
        l->ctx = (SSL_CTX *) rpc_tls_context(&of->tls, true, msgp);
        error = l->ctx ? listen_inet(l, "pssl", spec + 5, msgp) : EINVAL;
    } else {
        error = check_listener(spec, msgp);
    }
    if (!error) {
        error = set_nonblocking(l->fd);
    }
    if (error) {
        if (!l->path) {
            listener_close(l);
        } else {
            listener_close(l);
        }
        return error;
    }
    *lp = l;
    return 0;
}

static void
listener_accept(struct openflow *of, struct of_listener *l)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd = accept4(l->fd, (struct sockaddr *) &ss, &len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        char name[160];
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                vlog(L_WARN, "%s: accept: %s", l->name, strerror(errno));
            }
            return;
        }
        if (ss.ss_family == AF_UNIX) {
            snprintf(name, sizeof name, "%.140s<->#%d", l->name, fd);
        } else {
            char h[NI_MAXHOST], p[NI_MAXSERV];
            getnameinfo((struct sockaddr *) &ss, len, h, sizeof h, p,
                        sizeof p, NI_NUMERICHOST | NI_NUMERICSERV);
            snprintf(name, sizeof name, "%s:%.100s:%.16s",
                     l->ctx ? "ssl" : "tcp", h, p);
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        struct conn *c = conn_new(of, fd, name, NULL);
        if (!c) {
            close(fd);
            continue;
        }
        c->snoop = l->snoop;
        if (l->ctx) {
            c->ssl = SSL_new(l->ctx);
            if (!c->ssl || !SSL_set_fd(c->ssl, fd)) {
                conn_free(c);
                continue;
            }
            SSL_set_accept_state(c->ssl);
            c->state = CS_TLS;
        } else {
            c->state = CS_HELLO;
            send_hello(c);
        }
        if (!add_conn(of, c)) {
            conn_free(c);
            continue;
        }
        of->n_snoops += c->snoop;
        vlog(L_DBG, "%s: connected", c->name);
    }
}

/* ---------------------------------------------------------------------- */
/* Controllers.                                                            */

/* Starts a non-blocking connection to controller 'ctl'.  0 or an errno
 * value with a message in 'ctl->last_error'. */
static int
controller_connect(struct openflow *of, struct of_controller *ctl)
{
    const char *t = ctl->target;
    int fd = -1, error = 0;
    bool tls = !strncmp(t, "ssl:", 4);

    ctl->n_attempts++;
    if (!strncmp(t, "unix:", 5)) {
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        if (strlen(t + 5) >= sizeof sun.sun_path) {
            snprintf(ctl->last_error, sizeof ctl->last_error,
                     "path too long");
            return ENAMETOOLONG;
        }
        strcpy(sun.sun_path, t + 5);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || (connect(fd, (struct sockaddr *) &sun, sizeof sun)
                       && errno != EINPROGRESS && errno != EAGAIN)) {
            error = errno;
        }
    } else {
        /* "IP[:PORT]": numeric only, so that no name lookup blocks the
         * loop. */
        char host[128], port[16] = OFP_DEFAULT_PORT;
        const char *hp = t + 4;
        const char *colon = strrchr(hp, ':');
        size_t hlen = strlen(hp);
        if (hp[0] == '[') {
            const char *close_br = strchr(hp, ']');
            colon = close_br && close_br[1] == ':' ? close_br + 1 : NULL;
            hlen = close_br ? (size_t) (close_br - hp - 1) : hlen;
            hp++;
        } else if (colon && strchr(hp, ':') != colon) {
            colon = NULL;       /* A bare IPv6 address. */
        } else if (colon) {
            hlen = (size_t) (colon - hp);
        }
        if (colon) {
            snprintf(port, sizeof port, "%s", colon + 1);
        }
        if (hlen >= sizeof host) {
            snprintf(ctl->last_error, sizeof ctl->last_error,
                     "address too long");
            return EINVAL;
        }
        memcpy(host, hp, hlen);
        host[hlen] = '\0';
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                                  .ai_flags = AI_NUMERICHOST
                                              | AI_NUMERICSERV };
        struct addrinfo *ai;
        int r = getaddrinfo(host, port, &hints, &ai);
        if (r) {
            snprintf(ctl->last_error, sizeof ctl->last_error, "%s",
                     gai_strerror(r));
            return EINVAL;
        }
        fd = socket(ai->ai_family,
                    ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
        if (fd < 0 || (connect(fd, ai->ai_addr, ai->ai_addrlen)
                       && errno != EINPROGRESS)) {
            error = errno;
        }
        freeaddrinfo(ai);
        if (!error) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
    }
    if (error) {
        snprintf(ctl->last_error, sizeof ctl->last_error, "%s",
                 strerror(error));
        if (fd >= 0) {
            close(fd);
        }
        return error;
    }
    struct conn *c = conn_new(of, fd, t, ctl);
    if (!c) {
        close(fd);
        snprintf(ctl->last_error, sizeof ctl->last_error, "out of memory");
        return ENOMEM;
    }
    if (tls) {
        char *msg = NULL;
        if (!of->client_ctx) {
            of->client_ctx = (SSL_CTX *) rpc_tls_context(&of->tls, false,
                                                         &msg);
        }
        c->ssl = of->client_ctx ? SSL_new(of->client_ctx) : NULL;
        if (!c->ssl || !SSL_set_fd(c->ssl, fd)) {
            snprintf(ctl->last_error, sizeof ctl->last_error, "%s",
                     msg ? msg : "TLS setup failed");
            free(msg);
            conn_free(c);
            return EINVAL;
        }
        SSL_set_connect_state(c->ssl);
    }
    if (!add_conn(of, c)) {
        conn_free(c);
        snprintf(ctl->last_error, sizeof ctl->last_error,
                 "too many connections");
        return ENOSPC;
    }
    c->state = CS_CONNECTING;
    ctl->conn = c;
    return 0;
}

/* Controller 'ctl''s connection failed or ended: waits before the next
 * attempt, as rconn does. */
static void
controller_backoff(struct of_controller *ctl, int64_t now, bool was_active,
                   int64_t connected_at)
{
    if (was_active && now - connected_at >= BACKOFF_MAX_MS) {
        ctl->backoff_ms = BACKOFF_MIN_MS;
    } else if (!ctl->backoff_ms) {
        ctl->backoff_ms = BACKOFF_MIN_MS;
    } else {
        ctl->backoff_ms = ctl->backoff_ms * 2 > BACKOFF_MAX_MS
                          ? BACKOFF_MAX_MS : ctl->backoff_ms * 2;
    }
    ctl->next_attempt = now + ctl->backoff_ms;
}

static bool
any_controller_active(const struct openflow *of)
{
    for (size_t i = 0; i < of->n_controllers; i++) {
        const struct conn *c = of->controllers[i].conn;
        if (c && c->state == CS_ACTIVE) {
            return true;
        }
    }
    return false;
}

/* Adds or removes the fail-open flow. */
static void
set_fail_open(struct server *s, bool on)
{
    struct openflow *of = s->of;
    struct op_result r;
    json_t *op = on
        ? json_pack("{s:s, s:[s]}", "op", "add", "flows",
                    "priority=0,cookie=" FAIL_OPEN_COOKIE ",actions=NORMAL")
        : json_pack("{s:s, s:s, s:b}", "op", "del", "match",
                    "table=0,priority=0,cookie=" FAIL_OPEN_COOKIE "/-1",
                    "strict", 1);

    if (!op) {
        return;
    }
    int error = apply_op(s, op, &r);
    json_decref(op);
    if (error) {
        vlog(L_WARN, "fail mode: %s the NORMAL flow failed: %s",
             on ? "adding" : "removing", r.msg ? r.msg : strerror(error));
    } else {
        vlog(L_INFO, "fail mode standalone: %s", on
             ? "no controller connected: added priority=0,actions=NORMAL"
             : "a controller connected: removed the NORMAL flow");
        of->fail_open = on;
    }
    free(r.msg);
}

/* fdp_pipeline_for_each() callback: is 'rule' the fail-open flow? */
static bool
find_fail_open(const struct fdp_rule *rule, void *found_)
{
    bool *found = found_;
    struct fdp_flow_spec spec;

    get_spec(rule, &spec);
    if (spec.priority == 0 && spec.cookie == FAIL_OPEN_COOKIE_VALUE) {
        *found = true;
        return false;
    }
    return true;
}

static void
on_active(struct server *s, struct conn *c)
{
    if (c->controller) {
        c->controller->n_connects++;
        c->controller->last_error[0] = '\0';
        vlog(L_INFO, "%s: connected (OpenFlow version 0x%02x)", c->name,
             c->pub.version);
        if (s->of->fail_open) {
            set_fail_open(s, false);
        }
    }
}

/* The fail-open rule: in standalone mode with controllers configured, on
 * after three probe intervals without one connected. */
static void
fail_mode_run(struct server *s, int64_t now)
{
    struct openflow *of = s->of;
    bool active = any_controller_active(of);

    if (active || !of->n_controllers) {
        of->no_controller_since = now;
        if (of->fail_open && !of->n_controllers) {
            set_fail_open(s, false);
        }
        return;
    }
    int64_t interval = of->probe_ms ? of->probe_ms : 5000;
    if (of->standalone && !of->fail_open
        && now - of->no_controller_since >= 3 * interval) {
        set_fail_open(s, true);
    } else if (!of->standalone && of->fail_open) {
        set_fail_open(s, false);
    }
}

/* Inactivity probes of controller connections. */
static void
probe_run(struct openflow *of, struct conn *c, int64_t now)
{
    if (!c->controller || c->state != CS_ACTIVE || !of->probe_ms
        || c->dead || c->closing) {
        return;
    }
    int64_t idle = now - c->last_rx;
    if (idle >= 2 * (int64_t) of->probe_ms) {
        vlog(L_WARN, "%s: no response to inactivity probe after %.3g "
             "seconds, disconnecting", c->name, idle / 1000.0);
        snprintf(c->controller->last_error,
                 sizeof c->controller->last_error, "inactivity probe");
        c->dead = true;
    } else if (idle >= of->probe_ms && !c->probe_sent) {
        struct fdp__ofpbuf b;
        fdp__ofpbuf_init(&b);
        of_start(&b, c->pub.version, OFPT_ECHO_REQUEST, 0);
        of_finish(&b);
        if (!fdp__ofpbuf_failed(&b)) {
            queue_bytes(c, b.data, b.size);
        }
        fdp__ofpbuf_uninit(&b);
        c->probe_sent = true;
    }
}

/* ---------------------------------------------------------------------- */
/* The daemon's hooks.                                                     */

static int
set_controllers(struct server *s, const char *const *targets, size_t n)
{
    struct openflow *of = s->of;
    struct of_controller *ctls = n ? calloc(n, sizeof *ctls) : NULL;

    if (n && !ctls) {
        return ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        ctls[i].target = strdup(targets[i]);
        if (!ctls[i].target) {
            for (size_t j = 0; j < i; j++) {
                free(ctls[j].target);
            }
            free(ctls);
            return ENOMEM;
        }
        /* A controller kept from before keeps its connection. */
        for (size_t j = 0; j < of->n_controllers; j++) {
            struct of_controller *old = &of->controllers[j];
            if (old->target && !strcmp(old->target, targets[i])) {
                free(ctls[i].target);
                ctls[i] = *old;
                old->target = NULL;
                old->conn = NULL;
                break;
            }
        }
    }
    for (size_t j = 0; j < of->n_controllers; j++) {
        struct of_controller *old = &of->controllers[j];
        if (old->conn) {
            vlog(L_INFO, "%s: controller removed: disconnecting",
                 old->conn->name);
            old->conn->dead = true;
            old->conn->controller = NULL;
        }
        free(old->target);
    }
    free(of->controllers);
    of->controllers = ctls;
    of->n_controllers = n;
    for (size_t i = 0; i < n; i++) {
        if (ctls[i].conn) {
            ctls[i].conn->controller = &ctls[i];
        }
    }
    of->no_controller_since = monotonic_ms();
    return 0;
}

void
of_demote_masters(struct server *s, struct ofconn *keep)
{
    for (size_t i = 0; s->of && i < s->of->n_conns; i++) {
        struct ofconn *c = &s->of->conns[i]->pub;
        if (c != keep && c->role == OF_ROLE_MASTER) {
            c->role = OF_ROLE_SLAVE;
        }
    }
}

void
of_open(struct server *s, const struct of_config *cfg,
        const struct rpc_tls *tls)
{
    /* Replaying the journal may have made the structure already, with
     * the controllers and fail mode it set (of_set_commit()). */
    struct openflow *of = s->of ? s->of : calloc(1, sizeof *of);

    if (!of) {
        fatal("out of memory");
    }
    s->of = of;
    of->pin_pollfd_index = -1;
    of->tls = *tls;
    of->probe_ms = cfg->probe_ms;
    if (!of->journal_fail_mode) {
        of->standalone = cfg->standalone;
    }
    of->versions = cfg->versions;
    of->no_controller_since = monotonic_ms();

    const char *specs[MAX_LISTENERS + 2];
    size_t n = 0;
    char *default_spec = NULL, *snoop_spec = NULL;
    if (!cfg->no_openflow) {
        if (!cfg->n_listen) {
            char *path = default_path("flowdpd.mgmt");
            default_spec = path ? xasprintf("punix:%s", path) : NULL;
            free(path);
            if (!default_spec) {
                fatal("out of memory");
            }
            specs[n++] = default_spec;
            /* And, as ovs-vswitchd's bridge.snoop, the socket where
             * ovs-ofctl snoop watches the controllers' traffic. */
            path = default_path("flowdpd.snoop");
            snoop_spec = path ? xasprintf("punix:%s", path) : NULL;
            free(path);
            if (!snoop_spec) {
                fatal("out of memory");
            }
            specs[n++] = snoop_spec;
        }
        for (size_t i = 0; i < cfg->n_listen; i++) {
            specs[n++] = cfg->listen[i];
        }
    }
    for (size_t i = 0; i < n; i++) {
        char *msg = NULL;
        int error = listener_open(of, specs[i], &of->listeners[i], &msg);
        if (error) {
            fatal("--openflow: %s", msg ? msg : strerror(error));
        }
        of->n_listeners++;
        of->listeners[i]->snoop = specs[i] == snoop_spec;
        vlog(L_INFO, "OpenFlow: listening on %s%s", of->listeners[i]->name,
             of->listeners[i]->snoop ? " (snoop)" : "");
    }
    free(default_spec);
    free(snoop_spec);
    pin_start(s);
    /* A journal may hold the fail-open flow of a run that stopped with no
     * controller connected: it is ours to delete when one connects. */
    fdp_table_read_lock();
    fdp_pipeline_for_each(s->pipeline, 0, find_fail_open, &of->fail_open);
    fdp_table_read_unlock();
    /* The journal's controllers (restored before this) win over
     * --controller, as the journal's flows win over nothing. */
    if (!of->journal_controllers && cfg->n_controllers
        && set_controllers(s, cfg->controllers, cfg->n_controllers)) {
        fatal("out of memory");
    }
}

void
of_close(struct server *s)
{
    struct openflow *of = s->of;

    if (!of) {
        return;
    }
    pin_stop(s);
    for (size_t i = 0; i < of->n_conns; i++) {
        conn_free(of->conns[i]);
    }
    free(of->conns);
    for (size_t i = 0; i < of->n_listeners; i++) {
        listener_close(of->listeners[i]);
    }
    for (size_t i = 0; i < of->n_controllers; i++) {
        free(of->controllers[i].target);
    }
    free(of->controllers);
    SSL_CTX_free(of->client_ctx);
    free(of);
    s->of = NULL;
}

size_t
of_n_pollfds(const struct server *s)
{
    /* The listeners, the connections and the packet-in queue's eventfd. */
    return s->of ? s->of->n_listeners + s->of->n_conns + 1 : 0;
}

struct ofconn *
of_next_active(struct server *s, const struct ofconn *prev)
{
    struct openflow *of = s->of;
    size_t i = 0;

    if (prev) {
        while (i < of->n_conns && &of->conns[i]->pub != prev) {
            i++;
        }
        i++;
    }
    for (; of && i < of->n_conns; i++) {
        struct conn *c = of->conns[i];
        if (c->state == CS_ACTIVE && !c->dead && !c->closing) {
            return &c->pub;
        }
    }
    return NULL;
}

/* Tells the upcall whether anyone wants packet-ins now. */
static void
update_pin_wanted(struct server *s)
{
    bool action = false, miss = false;

    for (struct ofconn *c = of_next_active(s, NULL); c;
         c = of_next_active(s, c)) {
        action |= pin_conn_wants(c, false);
        miss |= pin_conn_wants(c, true);
    }
    pin_set_wanted(action, miss);
}

void
of_fill_pollfds(struct server *s, struct pollfd *fds)
{
    struct openflow *of = s->of;
    size_t k = 0;

    if (!of) {
        return;
    }
    for (size_t i = 0; i < of->n_listeners; i++) {
        of->listeners[i]->pollfd_index = (int) k;
        fds[k++] = (struct pollfd) { .fd = of->listeners[i]->fd,
                                     .events = POLLIN };
    }
    for (size_t i = 0; i < of->n_conns; i++) {
        of->conns[i]->pollfd_index = (int) k;
        fds[k++] = (struct pollfd) { .fd = of->conns[i]->fd,
                                     .events = conn_events(of->conns[i]) };
    }
    of->pin_pollfd_index = (int) k;
    fds[k++] = (struct pollfd) { .fd = pin_fd(), .events = POLLIN };
}

int64_t
of_wake_time(const struct server *s)
{
    const struct openflow *of = s->of;
    int64_t wake = INT64_MAX;

    if (!of) {
        return wake;
    }
    for (size_t i = 0; i < of->n_controllers; i++) {
        const struct of_controller *ctl = &of->controllers[i];
        if (!ctl->conn && ctl->next_attempt < wake) {
            wake = ctl->next_attempt;
        }
        const struct conn *c = ctl->conn;
        if (c && c->state == CS_ACTIVE && of->probe_ms) {
            int64_t t = c->last_rx + (c->probe_sent ? 2 : 1)
                        * (int64_t) of->probe_ms;
            wake = t < wake ? t : wake;
        }
    }
    if (of->n_controllers && of->standalone && !of->fail_open) {
        int64_t interval = of->probe_ms ? of->probe_ms : 5000;
        int64_t t = of->no_controller_since + 3 * interval;
        wake = t < wake ? t : wake;
    }
    return wake;
}

static void
close_conn(struct openflow *of, size_t i, int error, int64_t now)
{
    struct conn *c = of->conns[i];
    struct of_controller *ctl = c->controller;

    if (ctl) {
        bool was_active = c->state == CS_ACTIVE;
        if (error && error != EOF && !ctl->last_error[0]) {
            snprintf(ctl->last_error, sizeof ctl->last_error, "%s",
                     error == EPROTO ? "TLS or protocol error"
                     : strerror(error));
        } else if (error == EOF && !ctl->last_error[0]) {
            snprintf(ctl->last_error, sizeof ctl->last_error,
                     "connection closed by peer");
        }
        vlog(was_active ? L_INFO : L_DBG, "%s: %s", c->name,
             was_active ? "disconnected" : ctl->last_error);
        controller_backoff(ctl, now, was_active, c->connected_at);
        ctl->conn = NULL;
    } else {
        vlog(L_DBG, "%s: %s", c->name, error == EOF ? "closed"
             : error == EPROTO ? "TLS handshake or protocol error"
             : error ? strerror(error) : "closed");
    }
    of->n_snoops -= c->snoop;
    conn_free(c);
    of->conns[i] = of->conns[--of->n_conns];
}

void
of_run(struct server *s, const struct pollfd *fds)
{
    struct openflow *of = s->of;
    int64_t now = monotonic_ms();

    if (!of) {
        return;
    }

    /* Connections first, by the pollfd each had (new ones have none). */
    for (size_t i = 0; i < of->n_conns; i++) {
        struct conn *c = of->conns[i];
        short revents = c->pollfd_index >= 0 && fds
                        ? fds[c->pollfd_index].revents : 0;
        if (c->dead) {
            continue;
        }
        if (revents || (c->in_len && c->out.len < OUT_HIGH_WATER)) {
            int error = conn_run(s, c, revents);
            if (error) {
                c->dead = true;
                if (c->controller && error != EOF) {
                    snprintf(c->controller->last_error,
                             sizeof c->controller->last_error, "%s",
                             error == EPROTO ? "TLS or protocol error"
                             : strerror(error));
                }
            }
        }
        probe_run(of, c, now);
    }
    for (size_t i = of->n_conns; i-- > 0; ) {
        if (of->conns[i]->dead) {
            close_conn(of, i, EOF, now);
        }
    }
    for (size_t i = 0; i < of->n_listeners; i++) {
        struct of_listener *l = of->listeners[i];
        if (fds && l->pollfd_index >= 0 && fds[l->pollfd_index].revents) {
            listener_accept(of, l);
        }
    }
    if (fds && of->pin_pollfd_index >= 0
        && fds[of->pin_pollfd_index].revents) {
        pin_run(s);
    }
    of->pin_pollfd_index = -1;
    for (size_t i = 0; i < of->n_controllers; i++) {
        struct of_controller *ctl = &of->controllers[i];
        if (!ctl->conn && now >= ctl->next_attempt) {
            if (controller_connect(of, ctl)) {
                vlog(L_DBG, "%s: connection failed (%s)", ctl->target,
                     ctl->last_error);
                controller_backoff(ctl, now, false, 0);
            }
        }
    }
    for (size_t i = 0; i < of->n_conns; i++) {
        of->conns[i]->pollfd_index = -1;
    }
    for (size_t i = 0; i < of->n_listeners; i++) {
        of->listeners[i]->pollfd_index = -1;
    }
    fail_mode_run(s, now);
    update_pin_wanted(s);
}

/* ---------------------------------------------------------------------- */
/* Settings at run time (JSON-RPC) and in the journal.                     */

/* The settings as the journal keeps them:
 * {"controllers":[TARGET...], "fail_mode":"secure"|"standalone"}. */
json_t *
of_snapshot(struct server *s)
{
    struct openflow *of = s->of;
    json_t *ctls = json_array();

    if (!of || (!of->journal_controllers && !of->journal_fail_mode)) {
        /* Nothing set at run time: the snapshot leaves the command line's
         * settings in force, as the journal did. */
        json_decref(ctls);
        return json_null();
    }
    for (size_t i = 0; of && i < of->n_controllers; i++) {
        json_array_append_new(ctls, json_string(of->controllers[i].target));
    }
    return json_pack("{s:o, s:s}", "controllers", ctls, "fail_mode",
                     of && of->standalone ? "standalone" : "secure");
}

/* Checks an "openflow-set" operation: {"controllers":[...]?,
 * "fail_mode":...?}. */
int
op_of_set(struct server *s, const json_t *op, struct op_result *r)
{
    const json_t *ctls = json_object_get(op, "controllers");
    const json_t *mode = json_object_get(op, "fail_mode");

    (void) s;
    if (ctls) {
        if (!json_is_array(ctls) || json_array_size(ctls) > MAX_CONTROLLERS) {
            return op_fail(r, RPC_INVALID_PARAMS, "\"controllers\": "
                           "expected an array of at most %d targets",
                           MAX_CONTROLLERS);
        }
        for (size_t i = 0; i < json_array_size(ctls); i++) {
            const char *t = json_string_value(json_array_get(ctls, i));
            char *msg = NULL;
            if (!t) {
                return op_fail(r, RPC_INVALID_PARAMS, "controllers[%zu]: "
                               "not a string", i);
            }
            if (check_target(t, &msg)) {
                op_fail(r, RPC_INVALID_PARAMS, "%s", msg);
                free(msg);
                return EINVAL;
            }
        }
    }
    if (mode && (!json_is_string(mode)
                 || (strcmp(json_string_value(mode), "secure")
                     && strcmp(json_string_value(mode), "standalone")))) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"fail_mode\": expected "
                       "\"secure\" or \"standalone\"");
    }
    return 0;
}

/* Makes an "openflow-set" operation once it is journalled and committed
 * (also while replaying, before of_open(): then it only records). */
void
of_set_commit(struct server *s, const json_t *op)
{
    const json_t *ctls = json_object_get(op, "controllers");
    const json_t *mode = json_object_get(op, "fail_mode");

    if (!s->of) {
        /* Replaying the journal before of_open(): keep the settings in a
         * bare structure that of_open() completes. */
        s->of = calloc(1, sizeof *s->of);
        if (!s->of) {
            fatal("out of memory");
        }
    }
    if (ctls) {
        const char *targets[MAX_CONTROLLERS];
        size_t n = json_array_size(ctls);
        for (size_t i = 0; i < n && i < MAX_CONTROLLERS; i++) {
            targets[i] = json_string_value(json_array_get(ctls, i));
        }
        s->of->journal_controllers = true;
        if (set_controllers(s, targets, n < MAX_CONTROLLERS
                            ? n : MAX_CONTROLLERS)) {
            vlog(L_ERR, "controllers: out of memory");
        } else if (!s->replaying) {
            vlog(L_INFO, "controllers set: %zu", n);
        }
    }
    if (mode) {
        s->of->journal_fail_mode = true;
        s->of->standalone = !strcmp(json_string_value(mode), "standalone");
        s->of->no_controller_since = monotonic_ms();
    }
}

/* The snapshot's "openflow" member while replaying. */
int
of_restore(struct server *s, const json_t *j, struct op_result *r)
{
    if (!j) {
        return 0;
    }
    if (!s->replaying) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"openflow\": only a "
                       "journal's snapshot holds the controllers beside "
                       "flows");
    }
    int error = op_of_set(s, j, r);
    if (!error) {
        of_set_commit(s, j);
    }
    return error;
}

static json_t *
of_change(struct server *s, json_t *op, struct op_result *r)
{
    if (!op) {
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    int error = apply_op(s, op, r);
    json_decref(op);
    return error ? NULL : json_object();
}

json_t *
h_set_controller(struct server *s, const json_t *params, struct op_result *r)
{
    const json_t *t = json_object_get(params, "targets");

    if (!json_is_array(t)) {
        op_fail(r, RPC_INVALID_PARAMS, "\"targets\": expected an array");
        return NULL;
    }
    return of_change(s, json_pack("{s:s, s:O}", "op", "openflow-set",
                                  "controllers", t), r);
}

json_t *
h_del_controller(struct server *s, const json_t *params, struct op_result *r)
{
    (void) params;
    return of_change(s, json_pack("{s:s, s:[]}", "op", "openflow-set",
                                  "controllers"), r);
}

json_t *
h_set_fail_mode(struct server *s, const json_t *params, struct op_result *r)
{
    const json_t *m = json_object_get(params, "mode");

    if (!json_is_string(m)) {
        op_fail(r, RPC_INVALID_PARAMS, "\"mode\": expected \"secure\" or "
                "\"standalone\"");
        return NULL;
    }
    return of_change(s, json_pack("{s:s, s:O}", "op", "openflow-set",
                                  "fail_mode", m), r);
}

static const char *
state_name(const struct conn *c)
{
    static const char *const names[] = {
        [CS_CONNECTING] = "CONNECTING", [CS_TLS] = "TLS",
        [CS_HELLO] = "HELLO", [CS_ACTIVE] = "ACTIVE",
    };
    return names[c->state];
}

json_t *
h_get_controller(struct server *s, const json_t *params, struct op_result *r)
{
    struct openflow *of = s->of;
    json_t *ctls = json_array();
    json_t *conns = json_array();
    json_t *listeners = json_array();
    int64_t now = monotonic_ms();

    (void) params;
    (void) r;
    for (size_t i = 0; of && i < of->n_controllers; i++) {
        const struct of_controller *ctl = &of->controllers[i];
        const struct conn *c = ctl->conn;
        json_array_append_new(ctls, json_pack(
            "{s:s, s:s, s:b, s:s, s:I, s:I, s:i}",
            "target", ctl->target,
            "state", c ? state_name(c) : "BACKOFF",
            "is_connected", c && c->state == CS_ACTIVE,
            "last_error", ctl->last_error,
            "attempts", (json_int_t) ctl->n_attempts,
            "connects", (json_int_t) ctl->n_connects,
            "backoff_ms", c ? 0 : ctl->backoff_ms));
    }
    for (size_t i = 0; of && i < of->n_conns; i++) {
        const struct conn *c = of->conns[i];
        json_array_append_new(conns, json_pack(
            "{s:s, s:s, s:i, s:s, s:I, s:I, s:I, s:I, s:I}",
            "name", c->name, "state", state_name(c),
            "version", c->pub.version,
            "role", c->pub.role == OF_ROLE_MASTER ? "master"
                    : c->pub.role == OF_ROLE_SLAVE ? "slave" : "equal",
            "rx", (json_int_t) c->n_rx_msgs,
            "tx", (json_int_t) c->n_tx_msgs,
            "queued_bytes", (json_int_t) c->out.len,
            "async_dropped", (json_int_t) c->pub.n_async_dropped,
            "seconds", (json_int_t) ((now - c->connected_at) / 1000)));
    }
    for (size_t i = 0; of && i < of->n_listeners; i++) {
        json_array_append_new(listeners,
                              json_string(of->listeners[i]->name));
    }
    return json_pack("{s:o, s:o, s:o, s:s, s:b, s:i}",
                     "controllers", ctls, "connections", conns,
                     "listeners", listeners,
                     "fail_mode", of && of->standalone ? "standalone"
                                                       : "secure",
                     "fail_open_active", of && of->fail_open,
                     "inactivity_probe_ms", of ? of->probe_ms : 0);
}
