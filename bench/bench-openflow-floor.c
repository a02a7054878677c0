/*
 * flowdp-bench openflow suite, the client floor (see bench-openflow.c for
 * the suite): how long ovs-ofctl itself takes, with a switch that costs
 * nothing.
 *
 * Theory of operation.  A stub switch, a thread of this process listening
 * on a unix socket, speaks just enough OpenFlow 1.3 to 1.5 for the suite's
 * two commands and does no work a real switch would:
 *   - hello: answered with the client's version (1.3, 1.4 or 1.5);
 *   - echo, barrier, features, get-config: answered at once;
 *   - bundle control: open, close, commit and discard answered at once;
 *   - bundle add (and a bare flow mod): the inner flow mod's bytes are
 *     turned into the flow statistics entry a switch would later report
 *     for it (the fixed parts moved, the match and instructions copied:
 *     the two wire forms carry them alike; in 1.5 with zero OXS
 *     statistics between them), with no decoding;
 *   - flow statistics request: every entry kept, in multipart replies of
 *     at most 64 kB, whatever the request selects (the suite dumps
 *     everything); table features (ovs-ofctl asks for them before it
 *     parses a flow file, to read table names): table 0 alone, with no
 *     name or properties; any other statistics request: an empty reply.
 * Anything else gets OFPBRC_BAD_TYPE.  So "ovs-ofctl --bundle add-flows"
 * into the stub times ovs-ofctl's parsing and encoding of the file and the
 * socket writes; "ovs-ofctl dump-flows" times the socket reads and
 * ovs-ofctl's decoding and printing of the entries.  Any switch's time
 * for the same command is that floor plus its own work: a switch can be
 * at most (its competitor's time / floor) times faster than its
 * competitor, which is what the suite's goal has to be read against.
 *
 * The stub runs on its own thread while ovs-ofctl runs as a process: on a
 * two-core machine each has a core, as flowdpd and ovs-ofctl do.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bench/bench.h"

/* Message types of OpenFlow 1.3 to 1.5 (the same numbers in each). */
enum {
    T_HELLO = 0,
    T_ERROR = 1,
    T_ECHO_REQUEST = 2,
    T_ECHO_REPLY = 3,
    T_FEATURES_REQUEST = 5,
    T_FEATURES_REPLY = 6,
    T_GET_CONFIG_REQUEST = 7,
    T_GET_CONFIG_REPLY = 8,
    T_FLOW_MOD = 14,
    T_MULTIPART_REQUEST = 18,
    T_MULTIPART_REPLY = 19,
    T_BARRIER_REQUEST = 20,
    T_BARRIER_REPLY = 21,
    T_BUNDLE_CONTROL = 33,
    T_BUNDLE_ADD = 34,
};

#define OFPMP_FLOW 1
#define OFPMP_TABLE_FEATURES 12
#define OFPMPF_REPLY_MORE 1
/* A multipart reply's header: the message header, type, flags, pad. */
#define MP_HEADER 16
/* An OpenFlow 1.3+ flow mod's fixed part, header included, and a flow
 * statistics entry's fixed part (both before the match). */
#define FLOW_MOD_FIXED 48
#define FLOW_STATS_FIXED 48
/* The largest OpenFlow message. */
#define MAX_MSG 65535

struct floor_switch {
    int listen_fd;
    pthread_t thread;
    volatile bool stop;
    uint8_t version;            /* The last connection's. */

    /* The flow statistics entries of the flows received, back to back. */
    uint8_t *entries;
    size_t size, alloc;
    size_t n_entries;
    bool failed;                /* Out of memory: the dump is short. */
};

static uint16_t
get16(const uint8_t *p)
{
    return (uint16_t) (p[0] << 8 | p[1]);
}

static void
put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

/* Writes all of 'n' bytes; false if the connection failed. */
static bool
write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return false;
        }
        p += w;
        n -= (size_t) w;
    }
    return true;
}

/* Sends a message of 'type' with 'body' ('n' bytes), with request 'rq''s
 * version and xid. */
static bool
reply(int fd, const uint8_t *rq, uint8_t type, const uint8_t *body, size_t n)
{
    uint8_t msg[256];

    if (n > sizeof msg - 8) {
        return false;
    }
    msg[0] = rq[0];
    msg[1] = type;
    put16(msg + 2, (uint16_t) (8 + n));
    memcpy(msg + 4, rq + 4, 4);
    if (n) {
        memcpy(msg + 8, body, n);
    }
    return write_all(fd, msg, 8 + n);
}

/* OpenFlow 1.5's flow description: its fixed part, and the OXS
 * statistics a switch puts between the match and the instructions
 * (struct ofp_oxs_stat with duration, idle time, packet and byte counts,
 * as Open vSwitch and flowdpd send: 4 + 4 * 12 bytes, padded to 8). */
#define FLOW_DESC_FIXED 24
#define OXS_STATS_LEN 56
#define OXS_HEADER(FIELD, LEN) (0x80020000u | (FIELD) << 9 | (LEN))

static void
put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t) (v >> 16));
    put16(p + 2, (uint16_t) v);
}

/* Keeps flow mod 'fm' ('len' bytes) as a flow statistics entry of its
 * version: OpenFlow 1.3 and 1.4's struct ofp13_flow_stats, or 1.5's flow
 * description with OXS statistics after the match. */
static void
keep_flow(struct floor_switch *fs, const uint8_t *fm, size_t len)
{
    if (len < FLOW_MOD_FIXED + 4 || fm[25] != 0 /* OFPFC_ADD */) {
        return;
    }
    size_t rest = len - FLOW_MOD_FIXED;
    bool v15 = fm[0] >= 6;
    size_t match_len = (get16(fm + FLOW_MOD_FIXED + 2) + 7u) / 8 * 8;
    if (match_len > rest) {
        return;
    }
    size_t entry = (v15 ? FLOW_DESC_FIXED + OXS_STATS_LEN : FLOW_STATS_FIXED)
                   + rest;
    if (entry > MAX_MSG - MP_HEADER) {
        return;
    }
    if (fs->size + entry > fs->alloc) {
        size_t alloc = fs->alloc ? 2 * fs->alloc : 1 << 20;
        while (alloc < fs->size + entry) {
            alloc *= 2;
        }
        uint8_t *p = realloc(fs->entries, alloc);
        if (!p) {
            fs->failed = true;
            return;
        }
        fs->entries = p;
        fs->alloc = alloc;
    }
    uint8_t *e = fs->entries + fs->size;
    if (v15) {
        memset(e, 0, FLOW_DESC_FIXED + OXS_STATS_LEN);
        put16(e, (uint16_t) entry);
        e[4] = fm[24];                  /* table_id */
        memcpy(e + 6, fm + 30, 2);      /* priority */
        memcpy(e + 8, fm + 26, 4);      /* idle and hard timeouts */
        memcpy(e + 12, fm + 44, 4);     /* flags, importance */
        memcpy(e + 16, fm + 8, 8);      /* cookie */
        memcpy(e + FLOW_DESC_FIXED, fm + FLOW_MOD_FIXED, match_len);
        uint8_t *oxs = e + FLOW_DESC_FIXED + match_len;
        put16(oxs + 2, 4 + 4 * 12);
        put32(oxs + 4, OXS_HEADER(0, 8));       /* duration: 0 */
        put32(oxs + 16, OXS_HEADER(1, 8));      /* idle_time: 0 */
        put32(oxs + 28, OXS_HEADER(4, 8));      /* packet_count: 0 */
        put32(oxs + 40, OXS_HEADER(5, 8));      /* byte_count: 0 */
        memcpy(oxs + OXS_STATS_LEN, fm + FLOW_MOD_FIXED + match_len,
               rest - match_len);
        fs->size += entry;
        fs->n_entries++;
        return;
    }
    memset(e, 0, FLOW_STATS_FIXED);
    put16(e, (uint16_t) entry);
    e[2] = fm[24];                      /* table_id */
    memcpy(e + 12, fm + 30, 2);         /* priority */
    memcpy(e + 14, fm + 26, 4);         /* idle and hard timeouts */
    memcpy(e + 18, fm + 44, 2);         /* flags */
    if (fm[0] >= 5) {
        memcpy(e + 20, fm + 46, 2);     /* importance (1.4) */
    }
    memcpy(e + 24, fm + 8, 8);          /* cookie */
    memcpy(e + FLOW_STATS_FIXED, fm + FLOW_MOD_FIXED, rest);
    fs->size += entry;
    fs->n_entries++;
}

/* Every entry kept, in multipart replies to request 'rq'. */
static bool
send_flow_stats(struct floor_switch *fs, int fd, const uint8_t *rq)
{
    size_t cap = fs->size + (fs->size / (MAX_MSG / 2) + 2) * MP_HEADER;
    uint8_t *out = malloc(cap);
    size_t n = 0;
    size_t ofs = 0;
    bool ok;

    if (!out) {
        return false;
    }
    do {
        size_t start = n;
        memset(out + n, 0, MP_HEADER);
        out[n] = rq[0];
        out[n + 1] = T_MULTIPART_REPLY;
        memcpy(out + n + 4, rq + 4, 4);
        put16(out + n + 8, OFPMP_FLOW);
        n += MP_HEADER;
        while (ofs < fs->size) {
            size_t len = get16(fs->entries + ofs);
            if (n - start + len > MAX_MSG) {
                put16(out + start + 10, OFPMPF_REPLY_MORE);
                break;
            }
            memcpy(out + n, fs->entries + ofs, len);
            n += len;
            ofs += len;
        }
        put16(out + start + 2, (uint16_t) (n - start));
    } while (ofs < fs->size);
    ok = write_all(fd, out, n);
    free(out);
    return ok;
}

/* Handles message 'm' ('len' bytes); false to close the connection. */
static bool
handle(struct floor_switch *fs, int fd, const uint8_t *m, size_t len)
{
    static const uint8_t bad_type[4] = { 0, 1, 0, 1 };  /* BAD_REQUEST,
                                                         * BAD_TYPE */
    uint8_t body[8 + 128];

    switch (m[1]) {
    case T_HELLO:
        /* The client's version, if the stub speaks it. */
        if (m[0] < 4 || m[0] > 6) {
            return false;
        }
        fs->version = m[0];
        return reply(fd, m, T_HELLO, NULL, 0);
    case T_ECHO_REQUEST:
        return reply(fd, m, T_ECHO_REPLY, m + 8, len - 8 > 128 ? 0 : len - 8);
    case T_FEATURES_REQUEST:
        memset(body, 0, 24);
        body[7] = 1;                    /* datapath_id 1 */
        body[12] = 254;                 /* n_tables */
        return reply(fd, m, T_FEATURES_REPLY, body, 24);
    case T_GET_CONFIG_REQUEST:
        memset(body, 0, 4);
        return reply(fd, m, T_GET_CONFIG_REPLY, body, 4);
    case T_BARRIER_REQUEST:
        return reply(fd, m, T_BARRIER_REPLY, NULL, 0);
    case T_BUNDLE_CONTROL:
        /* bundle_id, type (+1 makes the reply), flags. */
        if (len < 16) {
            return false;
        }
        memcpy(body, m + 8, 8);
        put16(body + 4, (uint16_t) (get16(m + 12) + 1));
        return reply(fd, m, T_BUNDLE_CONTROL, body, 8);
    case T_BUNDLE_ADD:
        if (len >= 16 + 8 && get16(m + 18) <= len - 16) {
            keep_flow(fs, m + 16, get16(m + 18));
        }
        return true;
    case T_FLOW_MOD:
        keep_flow(fs, m, len);
        return true;
    case T_MULTIPART_REQUEST:
        if (len >= 16 && get16(m + 8) == OFPMP_FLOW) {
            return send_flow_stats(fs, fd, m);
        }
        if (len >= 16 && get16(m + 8) == OFPMP_TABLE_FEATURES) {
            /* ovs-ofctl asks for them to accept table names: table 0
             * alone, with no name, its 64 bytes and the eight properties
             * OpenFlow requires, empty (4 bytes, padded to 8, each: types
             * 0, 2, ..., 14). */
            memset(body, 0, 8 + 128);
            body[1] = OFPMP_TABLE_FEATURES;
            body[9] = 128;
            for (int i = 0; i < 8; i++) {
                body[8 + 64 + 8 * i + 1] = (uint8_t) (2 * i);
                body[8 + 64 + 8 * i + 3] = 4;
            }
            return reply(fd, m, T_MULTIPART_REPLY, body, 8 + 128);
        }
        if (len >= 16) {
            /* Anything else: an empty reply. */
            memset(body, 0, 8);
            memcpy(body, m + 8, 2);
            return reply(fd, m, T_MULTIPART_REPLY, body, 8);
        }
        break;
    default:
        break;
    }
    memcpy(body, bad_type, 4);
    memcpy(body + 4, m, len < 60 ? len : 60);
    return reply(fd, m, T_ERROR, body, 4 + (len < 60 ? len : 60));
}

/* Serves one connection until the client closes it. */
static void
serve(struct floor_switch *fs, int fd)
{
    size_t cap = 1 << 20;
    uint8_t *buf = malloc(cap);
    size_t have = 0;

    while (buf && !fs->stop) {
        ssize_t r = read(fd, buf + have, cap - have);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        have += (size_t) r;
        size_t ofs = 0;
        bool ok = true;
        while (ok && have - ofs >= 8) {
            size_t len = get16(buf + ofs + 2);
            if (len < 8) {
                ok = false;
            } else if (have - ofs < len) {
                break;
            } else {
                ok = handle(fs, fd, buf + ofs, len);
                ofs += len;
            }
        }
        if (!ok) {
            break;
        }
        memmove(buf, buf + ofs, have - ofs);
        have -= ofs;
    }
    free(buf);
    close(fd);
}

static void *
floor_main(void *fs_)
{
    struct floor_switch *fs = fs_;

    while (!fs->stop) {
        struct pollfd pfd = { .fd = fs->listen_fd, .events = POLLIN };
        if (poll(&pfd, 1, 100) <= 0) {
            continue;
        }
        int fd = accept(fs->listen_fd, NULL, NULL);
        if (fd >= 0) {
            serve(fs, fd);
        }
    }
    return NULL;
}

struct floor_switch *
floor_switch_start(const char *path)
{
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    struct floor_switch *fs = calloc(1, sizeof *fs);

    if (!fs || strlen(path) >= sizeof sun.sun_path) {
        free(fs);
        return NULL;
    }
    strcpy(sun.sun_path, path);
    unlink(path);
    fs->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fs->listen_fd < 0
        || bind(fs->listen_fd, (struct sockaddr *) &sun, sizeof sun)
        || listen(fs->listen_fd, 4)
        || pthread_create(&fs->thread, NULL, floor_main, fs)) {
        fprintf(stderr, "openflow: client floor: %s: %s\n", path,
                strerror(errno));
        if (fs->listen_fd >= 0) {
            close(fs->listen_fd);
        }
        free(fs);
        return NULL;
    }
    return fs;
}

void
floor_switch_stop(struct floor_switch *fs)
{
    if (fs) {
        fs->stop = true;
        pthread_join(fs->thread, NULL);
        close(fs->listen_fd);
        if (fs->failed) {
            fprintf(stderr, "openflow: client floor: out of memory keeping "
                    "flows\n");
        }
        free(fs->entries);
        free(fs);
    }
}
