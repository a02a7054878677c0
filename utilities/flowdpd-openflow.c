/*
 * flowdpd's OpenFlow dispatch: what each message a connection sends does,
 * once the hello exchange (flowdpd-ofconn.c) has fixed its version.
 *
 * Theory of operation.  of_dispatch() looks at the header's type (and,
 * for statistics, multipart and vendor messages, the subtype), checks the
 * message's length for that type, and either answers from the daemon's
 * state or refuses with the error Open vSwitch 3.1 sends for a message it
 * does not take.  Every refusal carries the whole request (as Open
 * vSwitch's ofperr_encode_reply(); a bundled message's error, its first
 * 64 bytes), and leaves the connection and the tables as they were.
 *
 * What is answered here:
 *   - features (OpenFlow 1.0's with its ports), get/set config, barrier;
 *   - statistics/multipart: desc, port desc (OpenFlow 1.0's extension
 *     type 13 too), port stats, table stats, table features (the
 *     properties 1.3 requires; action and field lists empty);
 *   - role request (OpenFlow 1.2+ and Nicira's NXT_ROLE_REQUEST): equal,
 *     master, slave, with generation ids; a slave's changes are refused
 *     with OFPBRC_IS_SLAVE;
 *   - Nicira's NXT_SET_FLOW_FORMAT, NXT_SET_PACKET_IN_FORMAT,
 *     NXT_FLOW_MOD_TABLE_ID and NXT_SET_CONTROLLER_ID (settings of the
 *     connection);
 *   - flow mods, bundles of flow mods, flow and aggregate statistics
 *     ("Flow mods" below);
 *   - packet-outs (flowdpd-ofpin.c);
 *   - group, meter, TLV table and conntrack flush messages and their
 *     statistics (flowdpd-ofgroup.c, from the default case).
 * What is sent unasked: port status when a port is added or deleted
 * (of_port_status()); packet-ins (flowdpd-ofpin.c).
 * What is refused: port and table mods, flow monitors, async config,
 * NXT_RESUME: OFPBRC_BAD_TYPE, OFPBRC_BAD_STAT or OFPBRC_BAD_SUBTYPE, as
 * for a message Open vSwitch does not know.
 *
 * Ports are named "pN" for port N (flowdpd has no interface names), up
 * and live, their speed unknown; the local port (OFPP_LOCAL) is listed as
 * "flowdpd", administratively down with no link: flowdpd has no internal
 * interface behind it.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utilities/flowdpd.h"
#include "utilities/flowdpd-openflow.h"
#include "utilities/tool.h"
#include "lib/actions-internal.h"
#include "lib/ds.h"
#include "lib/match-internal.h"
#include "lib/ofp-msgs.h"

#include <jansson.h>

/* Types that differ by version. */
enum {
    OFPT10_PACKET_OUT = 13,
    OFPT10_FLOW_MOD = 14,
    OFPT10_PORT_MOD = 15,
    OFPT10_STATS_REQUEST = 16,
    OFPT10_STATS_REPLY = 17,
    OFPT10_BARRIER_REQUEST = 18,
    OFPT10_BARRIER_REPLY = 19,

    OFPT11_PACKET_OUT = 13,
    OFPT11_FLOW_MOD = 14,
    OFPT11_GROUP_MOD = 15,
    OFPT11_PORT_MOD = 16,
    OFPT11_TABLE_MOD = 17,
    OFPT11_MULTIPART_REQUEST = 18,
    OFPT11_MULTIPART_REPLY = 19,
    OFPT11_BARRIER_REQUEST = 20,
    OFPT11_BARRIER_REPLY = 21,
    OFPT12_ROLE_REQUEST = 24,
    OFPT12_ROLE_REPLY = 25,
    OFPT13_METER_MOD = 29,
    OFPT14_BUNDLE_CONTROL = 33,
    OFPT14_BUNDLE_ADD_MESSAGE = 34,
};

/* Statistics (multipart) types. */
enum {
    OFPMP_DESC = 0,
    OFPMP_TABLE = 3,
    OFPMP_PORT_STATS = 4,
    OFPMP_TABLE_FEATURES = 12,
    OFPMP_PORT_DESC = 13,
    OFPMP_VENDOR = 0xffff,
};

/* Nicira extension subtypes handled. */
enum {
    NXT_ROLE_REQUEST = 10,
    NXT_ROLE_REPLY = 11,
    NXT_SET_FLOW_FORMAT = 12,
    NXT_FLOW_MOD_TABLE_ID = 15,
    NXT_SET_PACKET_IN_FORMAT = 16,
    NXT_SET_CONTROLLER_ID = 20,
};

/* Port numbers. */
#define OFPP10_LOCAL 0xfffe
#define OFPP10_ANY 0xffff
#define OFPP11_LOCAL 0xfffffffe
#define OFPP11_ANY 0xffffffff
/* The tables a switch of Open vSwitch's shape reports (254 is hidden). */
#define N_TABLES 254
/* OFPMPF_REPLY_MORE. */
#define REPLY_MORE 1

/* ---------------------------------------------------------------------- */
/* Connections' settings.                                                  */

void
of_conn_init(struct ofconn *c, bool is_controller)
{
    c->role = OF_ROLE_EQUAL;
    /* As Open vSwitch: a service connection gets no asynchronous messages
     * until it sets a miss_send_len. */
    c->miss_send_len = is_controller ? 128 : 0;
    c->is_controller = is_controller;
}

/* The generation id of the last master or slave request, as OpenFlow
 * 1.2's role request defines it (one per switch). */
static bool generation_set;
static uint64_t generation_id;

/* ---------------------------------------------------------------------- */
/* Replies.                                                                */

/* Sends 'b' (a finished message) on 'c' and empties it. */
static void
send_buf(struct ofconn *c, struct fdp__ofpbuf *b)
{
    of_finish(b);
    if (!fdp__ofpbuf_failed(b)) {
        ofconn_send(c, b->data, b->size);
    } else {
        vlog(L_WARN, "%s: out of memory building a reply", ofconn_name(c));
    }
    fdp__ofpbuf_uninit(b);
}

/* A statistics (multipart) reply in parts of at most OFP_MAX_MSG bytes:
 * mp_start(), then mp_room() before each entry, and mp_end(). */
struct mp_reply {
    struct ofconn *c;
    struct fdp__ofpbuf b;
    uint32_t xid;
    uint16_t stat;
};

static void
mp_begin_part(struct mp_reply *m)
{
    uint8_t v = m->c->version;

    fdp__ofpbuf_init(&m->b);
    of_start(&m->b, v, v == FDP_OFP10 ? OFPT10_STATS_REPLY
                                      : OFPT11_MULTIPART_REPLY, m->xid);
    fdp__ofpbuf_put_be16(&m->b, m->stat);
    fdp__ofpbuf_put_be16(&m->b, 0);
    if (v != FDP_OFP10) {
        fdp__ofpbuf_put_be32(&m->b, 0);
    }
}

static void
mp_start(struct mp_reply *m, struct ofconn *c, const uint8_t *request,
         uint16_t stat)
{
    m->c = c;
    m->xid = fdp__ofp_get_be32(request + 4);
    m->stat = stat;
    mp_begin_part(m);
}

/* Makes room for an entry of 'n' bytes: sends the part so far with
 * "more" set if the entry would not fit in it. */
static void
mp_room(struct mp_reply *m, size_t n)
{
    if (m->b.size + n > OFP_MAX_MSG) {
        fdp__ofp_set_be16(m->b.data + 10, REPLY_MORE);
        send_buf(m->c, &m->b);
        mp_begin_part(m);
    }
}

static void
mp_end(struct mp_reply *m)
{
    send_buf(m->c, &m->b);
}

static void put_port(struct fdp__ofpbuf *, uint8_t version, uint32_t no,
                     bool local);

/* Pads a string into a fixed-size field. */
static void
put_string(struct fdp__ofpbuf *b, const char *s, size_t size)
{
    uint8_t *p = fdp__ofpbuf_put_zeros(b, size);

    if (p) {
        size_t n = strlen(s);
        memcpy(p, s, n < size - 1 ? n : size - 1);
    }
}

/* ---------------------------------------------------------------------- */
/* Ports.                                                                  */

/* OFPPC_PORT_DOWN and OFPPS_LINK_DOWN (both 1 in every version), and
 * 1.1's OFPPS_LIVE.  A port is up and live (1.0 has no LIVE); its
 * features and speed are unknown (0), as Open vSwitch reports a port whose
 * device does not say (its dummy ports): flowdp's ring and capture ports
 * have none, and it does not ask a device's driver. */
#define PORT_DOWN 1
#define LINK_DOWN 1
#define LIVE 4

/* Port 'no' (or the local port, 'local') in the connection's version's
 * port structure. */
static void
put_port(struct fdp__ofpbuf *b, uint8_t version, uint32_t no, bool local)
{
    char name[16];
    uint32_t config = local ? PORT_DOWN : 0;
    uint32_t state = local ? LINK_DOWN : version == FDP_OFP10 ? 0 : LIVE;
    uint32_t features = 0;
    static const uint8_t hw_addr[6];    /* flowdp's ports have none. */

    if (local) {
        snprintf(name, sizeof name, "flowdpd");
    } else {
        snprintf(name, sizeof name, "p%" PRIu32, no);
    }
    if (version == FDP_OFP10) {
        /* struct ofp10_phy_port, 48 bytes. */
        fdp__ofpbuf_put_be16(b, local ? OFPP10_LOCAL : (uint16_t) no);
        fdp__ofpbuf_put(b, hw_addr, 6);
        put_string(b, name, 16);
        fdp__ofpbuf_put_be32(b, config);
        fdp__ofpbuf_put_be32(b, state);
        fdp__ofpbuf_put_be32(b, features);      /* curr */
        fdp__ofpbuf_put_be32(b, 0);             /* advertised */
        fdp__ofpbuf_put_be32(b, 0);             /* supported */
        fdp__ofpbuf_put_be32(b, 0);             /* peer */
        return;
    }
    uint32_t speed = 0;                         /* kbps: unknown */
    fdp__ofpbuf_put_be32(b, local ? OFPP11_LOCAL : no);
    if (version <= FDP_OFP13) {
        /* struct ofp11_port, 64 bytes. */
        fdp__ofpbuf_put_be32(b, 0);
        fdp__ofpbuf_put(b, hw_addr, 6);
        fdp__ofpbuf_put_zeros(b, 2);
        put_string(b, name, 16);
        fdp__ofpbuf_put_be32(b, config);
        fdp__ofpbuf_put_be32(b, state);
        fdp__ofpbuf_put_be32(b, features);
        fdp__ofpbuf_put_be32(b, 0);
        fdp__ofpbuf_put_be32(b, 0);
        fdp__ofpbuf_put_be32(b, 0);
        fdp__ofpbuf_put_be32(b, speed);         /* curr_speed */
        fdp__ofpbuf_put_be32(b, 0);             /* max_speed */
        return;
    }
    /* struct ofp14_port (40 bytes) and its Ethernet property (32). */
    fdp__ofpbuf_put_be16(b, 72);
    fdp__ofpbuf_put_zeros(b, 2);
    fdp__ofpbuf_put(b, hw_addr, 6);
    fdp__ofpbuf_put_zeros(b, 2);
    put_string(b, name, 16);
    fdp__ofpbuf_put_be32(b, config);
    fdp__ofpbuf_put_be32(b, state);
    fdp__ofpbuf_put_be16(b, 0);                 /* OFPPDPT14_ETHERNET */
    fdp__ofpbuf_put_be16(b, 32);
    fdp__ofpbuf_put_zeros(b, 4);
    fdp__ofpbuf_put_be32(b, features);
    fdp__ofpbuf_put_be32(b, 0);
    fdp__ofpbuf_put_be32(b, 0);
    fdp__ofpbuf_put_be32(b, 0);
    fdp__ofpbuf_put_be32(b, speed);
    fdp__ofpbuf_put_be32(b, 0);
}

static size_t
port_size(uint8_t version)
{
    return version == FDP_OFP10 ? 48 : version <= FDP_OFP13 ? 64 : 72;
}

/* The daemon's port numbers, in increasing order; '*np' how many. */
static uint32_t *
list_ports(struct server *s, size_t *np)
{
    uint32_t *nos = malloc(MAX_PORTS * sizeof *nos);
    size_t n = nos ? fdp_dp_port_list(s->dp, nos, MAX_PORTS) : 0;

    *np = n < MAX_PORTS ? n : MAX_PORTS;
    return nos;
}

/* ---------------------------------------------------------------------- */
/* Handlers.                                                               */

static bool
check_len(struct ofconn *c, const uint8_t *msg, size_t len, size_t want,
          bool at_least)
{
    if (at_least ? len < want : len != want) {
        ofconn_send_error(c, FDP_OFPBRC_BAD_LEN, msg, len);
        return false;
    }
    return true;
}

static void
handle_features(struct server *s, struct ofconn *c, const uint8_t *msg,
                size_t len)
{
    struct fdp__ofpbuf b;

    if (!check_len(c, msg, len, OFP_HEADER_LEN, false)) {
        return;
    }
    fdp__ofpbuf_init(&b);
    of_start(&b, c->version, OFPT_FEATURES_REPLY,
             fdp__ofp_get_be32(msg + 4));
    /* datapath_id: flowdpd has one datapath and no bridge MAC; 1. */
    fdp__ofpbuf_put_be64(&b, 1);
    fdp__ofpbuf_put_be32(&b, 0);        /* n_buffers, as Open vSwitch. */
    fdp__ofpbuf_put_u8(&b, N_TABLES);
    if (c->version == FDP_OFP10) {
        fdp__ofpbuf_put_zeros(&b, 3);
        /* FLOW_STATS, TABLE_STATS, PORT_STATS, QUEUE_STATS,
         * ARP_MATCH_IP; every OpenFlow 1.0 action but ENQUEUE's queues
         * exist as Open vSwitch's do (all twelve bits). */
        fdp__ofpbuf_put_be32(&b, 0xc7);
        fdp__ofpbuf_put_be32(&b, 0xfff);
        size_t n;
        uint32_t *nos = list_ports(s, &n);
        for (size_t i = 0; nos && i < n
             && b.size + 48 <= OFP_MAX_MSG - 48; i++) {
            put_port(&b, c->version, nos[i], false);
        }
        put_port(&b, c->version, 0, true);
        free(nos);
    } else {
        fdp__ofpbuf_put_u8(&b, 0);      /* auxiliary_id */
        fdp__ofpbuf_put_zeros(&b, 2);
        /* FLOW, TABLE, PORT, GROUP, QUEUE stats; 1.4+ BUNDLES. */
        fdp__ofpbuf_put_be32(&b, 0x4f | (c->version >= FDP_OFP14
                                         ? 1u << 9 : 0));
        fdp__ofpbuf_put_be32(&b, 0);
    }
    send_buf(c, &b);
}

static void
handle_get_config(struct ofconn *c, const uint8_t *msg, size_t len)
{
    struct fdp__ofpbuf b;

    if (!check_len(c, msg, len, OFP_HEADER_LEN, false)) {
        return;
    }
    fdp__ofpbuf_init(&b);
    of_start(&b, c->version, OFPT_GET_CONFIG_REPLY,
             fdp__ofp_get_be32(msg + 4));
    fdp__ofpbuf_put_be16(&b, c->config_flags);
    fdp__ofpbuf_put_be16(&b, c->miss_send_len);
    send_buf(c, &b);
}

static void
handle_set_config(struct ofconn *c, const uint8_t *msg, size_t len)
{
    if (!check_len(c, msg, len, OFP_HEADER_LEN + 4, false)) {
        return;
    }
    uint16_t flags = fdp__ofp_get_be16(msg + 8);
    /* The fragment handling (low two bits: normal, drop, reasm) and, in
     * OpenFlow 1.0 to 1.2, invalid TTL to controller (bit 2). */
    if ((flags & 3) == 3 || flags & ~7u) {
        ofconn_send_error(c, FDP_OFPSCFC_BAD_FLAGS, msg, len);
        return;
    }
    c->config_flags = flags;
    c->miss_send_len = fdp__ofp_get_be16(msg + 10);
}

static void
handle_barrier(struct ofconn *c, const uint8_t *msg, size_t len)
{
    struct fdp__ofpbuf b;

    if (!check_len(c, msg, len, OFP_HEADER_LEN, false)) {
        return;
    }
    /* Every earlier request is done: they are handled in order, each to
     * its end (a flow change committed and journalled) before the next. */
    fdp__ofpbuf_init(&b);
    of_start(&b, c->version, c->version == FDP_OFP10
             ? OFPT10_BARRIER_REPLY : OFPT11_BARRIER_REPLY,
             fdp__ofp_get_be32(msg + 4));
    send_buf(c, &b);
}

static void
stats_desc(struct ofconn *c, const uint8_t *msg)
{
    struct mp_reply m;

    mp_start(&m, c, msg, OFPMP_DESC);
    put_string(&m.b, "flowdp", 256);
    put_string(&m.b, "flowdpd", 256);
    put_string(&m.b, PACKAGE_VERSION, 256);
    put_string(&m.b, "None", 32);
    put_string(&m.b, "None", 256);
    mp_end(&m);
}

static void
stats_port_desc(struct server *s, struct ofconn *c, const uint8_t *msg)
{
    struct mp_reply m;
    size_t n;
    uint32_t *nos = list_ports(s, &n);

    mp_start(&m, c, msg, OFPMP_PORT_DESC);
    for (size_t i = 0; nos && i < n; i++) {
        mp_room(&m, port_size(c->version));
        put_port(&m.b, c->version, nos[i], false);
    }
    mp_room(&m, port_size(c->version));
    put_port(&m.b, c->version, 0, true);
    mp_end(&m);
    free(nos);
}

/* Port statistics of one port in the connection's version. */
static void
put_port_stats(struct fdp__ofpbuf *b, uint8_t version, uint32_t no,
               const struct fdp_port_stats *ps)
{
    /* Counters a port does not keep are all-ones, as OpenFlow says. */
    const uint64_t none = UINT64_MAX;

    if (version == FDP_OFP10) {
        fdp__ofpbuf_put_be16(b, (uint16_t) no);
        fdp__ofpbuf_put_zeros(b, 6);
    } else if (version <= FDP_OFP13) {
        fdp__ofpbuf_put_be32(b, no);
        fdp__ofpbuf_put_zeros(b, 4);
    } else {
        fdp__ofpbuf_put_be16(b, 80 + 40);
        fdp__ofpbuf_put_zeros(b, 2);
        fdp__ofpbuf_put_be32(b, no);
        fdp__ofpbuf_put_be32(b, 0);     /* duration_sec */
        fdp__ofpbuf_put_be32(b, 0);     /* duration_nsec */
    }
    fdp__ofpbuf_put_be64(b, ps->rx_packets);
    fdp__ofpbuf_put_be64(b, ps->tx_packets);
    fdp__ofpbuf_put_be64(b, ps->rx_bytes);
    fdp__ofpbuf_put_be64(b, ps->tx_bytes);
    fdp__ofpbuf_put_be64(b, ps->rx_dropped);
    fdp__ofpbuf_put_be64(b, ps->tx_dropped);
    fdp__ofpbuf_put_be64(b, ps->rx_errors);
    fdp__ofpbuf_put_be64(b, 0);         /* tx_errors */
    if (version >= FDP_OFP14) {
        /* The Ethernet property: frame, overrun, CRC errors, collisions. */
        fdp__ofpbuf_put_be16(b, 0);
        fdp__ofpbuf_put_be16(b, 40);
        fdp__ofpbuf_put_zeros(b, 4);
    }
    fdp__ofpbuf_put_be64(b, none);
    fdp__ofpbuf_put_be64(b, none);
    fdp__ofpbuf_put_be64(b, none);
    fdp__ofpbuf_put_be64(b, none);
    if (version == FDP_OFP13) {
        fdp__ofpbuf_put_be32(b, 0);     /* duration_sec */
        fdp__ofpbuf_put_be32(b, 0);     /* duration_nsec */
    }
}

static size_t
port_stats_size(uint8_t version)
{
    return version == FDP_OFP10 ? 104 : version <= FDP_OFP13 ? 112 : 120;
}

static void
stats_port(struct server *s, struct ofconn *c, const uint8_t *msg,
           size_t len, size_t body)
{
    uint32_t want;

    if (c->version == FDP_OFP10) {
        if (!check_len(c, msg, len, body + 8, false)) {
            return;
        }
        want = fdp__ofp_get_be16(msg + body);
        want = want == OFPP10_ANY ? OFPP11_ANY
               : want == OFPP10_LOCAL ? OFPP11_LOCAL : want;
    } else {
        if (!check_len(c, msg, len, body + 8, false)) {
            return;
        }
        want = fdp__ofp_get_be32(msg + body);
    }
    struct mp_reply m;
    size_t n;
    uint32_t *nos = list_ports(s, &n);
    bool found = want == OFPP11_ANY;

    mp_start(&m, c, msg, OFPMP_PORT_STATS);
    for (size_t i = 0; nos && i < n; i++) {
        struct fdp_port_stats ps;
        const char *spec;
        if ((want != OFPP11_ANY && nos[i] != want)
            || fdp_dp_port_get_stats(s->dp, nos[i], &ps, &spec)) {
            continue;
        }
        found = true;
        mp_room(&m, port_stats_size(c->version));
        put_port_stats(&m.b, c->version, nos[i], &ps);
    }
    free(nos);
    if (want == OFPP11_ANY || want == OFPP11_LOCAL) {
        /* The local port, listed as the port descriptions list it: no
         * interface behind it, nothing counted. */
        static const struct fdp_port_stats zero;
        found = true;
        mp_room(&m, port_stats_size(c->version));
        put_port_stats(&m.b, c->version,
                       c->version == FDP_OFP10 ? OFPP10_LOCAL : OFPP11_LOCAL,
                       &zero);
    }
    if (!found) {
        /* As Open vSwitch: a port that does not exist is an error. */
        fdp__ofpbuf_uninit(&m.b);
        ofconn_send_error(c, FDP_OFPBRC_BAD_PORT, msg, len);
        return;
    }
    mp_end(&m);
}

static void
stats_table(struct server *s, struct ofconn *c, const uint8_t *msg)
{
    struct mp_reply m;

    mp_start(&m, c, msg, OFPMP_TABLE);
    for (unsigned int id = 0; id < N_TABLES; id++) {
        struct fdp_pipeline_table_stats st;
        memset(&st, 0, sizeof st);
        if (!fdp_pipeline_get_table_stats(s->pipeline, (uint8_t) id, &st)) {
            memset(&st, 0, sizeof st);
        }
        if (c->version == FDP_OFP10) {
            /* No name: as Open vSwitch's tables that were given none
             * (ofproto's query_tables()). */
            mp_room(&m, 64);
            fdp__ofpbuf_put_u8(&m.b, (uint8_t) id);
            fdp__ofpbuf_put_zeros(&m.b, 3);
            put_string(&m.b, "", 32);
            fdp__ofpbuf_put_be32(&m.b, 0x3fffff);       /* wildcards */
            fdp__ofpbuf_put_be32(&m.b, 1000000);        /* max_entries */
            fdp__ofpbuf_put_be32(&m.b, (uint32_t) st.n_flows);
            fdp__ofpbuf_put_be64(&m.b, st.n_matched + st.n_missed);
            fdp__ofpbuf_put_be64(&m.b, st.n_matched);
        } else {
            mp_room(&m, 24);
            fdp__ofpbuf_put_u8(&m.b, (uint8_t) id);
            fdp__ofpbuf_put_zeros(&m.b, 3);
            fdp__ofpbuf_put_be32(&m.b, (uint32_t) st.n_flows);
            fdp__ofpbuf_put_be64(&m.b, st.n_matched + st.n_missed);
            fdp__ofpbuf_put_be64(&m.b, st.n_matched);
        }
    }
    mp_end(&m);
}

/* Table features (OpenFlow 1.3+): each table with the properties 1.3 and
 * 1.4 require, of which flowdp fills in the instructions and the tables a
 * goto may name (any later one); the action, match and set-field lists
 * are left empty (their encodings belong to the codec of actions and
 * fields).  A request with a body would change the tables: refused. */
static void
put_table_feature_prop(struct fdp__ofpbuf *b, uint16_t type,
                       const uint8_t *payload, size_t n)
{
    size_t start = b->size;

    fdp__ofpbuf_put_be16(b, type);
    fdp__ofpbuf_put_be16(b, (uint16_t) (4 + n));
    fdp__ofpbuf_put(b, payload, n);
    fdp__ofpbuf_pad(b, start, 8);
}

static void
stats_table_features(struct ofconn *c, const uint8_t *msg, size_t len,
                     size_t body)
{
    /* goto_table, write_metadata, write_actions, apply_actions,
     * clear_actions, meter: instruction ids, type and length 4 each. */
    static const uint8_t instructions[] = {
        0, 1, 0, 4, 0, 2, 0, 4, 0, 3, 0, 4, 0, 4, 0, 4, 0, 5, 0, 4,
        0, 6, 0, 4,
    };
    uint8_t next[N_TABLES];
    struct mp_reply m;

    if (len > body) {
        ofconn_send_error(c, FDP_OFPTFFC_EPERM, msg, len);
        return;
    }
    mp_start(&m, c, msg, OFPMP_TABLE_FEATURES);
    for (unsigned int id = 0; id < N_TABLES; id++) {
        size_t n_next = 0;
        for (unsigned int t = id + 1; t < N_TABLES; t++) {
            next[n_next++] = (uint8_t) t;
        }
        /* 64 bytes of entry, 8 properties (the instructions' 24 bytes and
         * the next tables padded to 8). */
        mp_room(&m, 64 + 7 * 8 + 32 + ((4 + n_next + 7) / 8) * 8);
        size_t start = m.b.size;
        fdp__ofpbuf_put_be16(&m.b, 0);          /* length, below */
        fdp__ofpbuf_put_u8(&m.b, (uint8_t) id);
        fdp__ofpbuf_put_zeros(&m.b, 5);         /* 1.5: command REPLACE,
                                                 * features 0. */
        put_string(&m.b, "", 32);       /* No name, as Open vSwitch's. */
        fdp__ofpbuf_put_be64(&m.b, UINT64_MAX); /* metadata_match */
        fdp__ofpbuf_put_be64(&m.b, UINT64_MAX); /* metadata_write */
        fdp__ofpbuf_put_be32(&m.b, 0);          /* capabilities */
        fdp__ofpbuf_put_be32(&m.b, 1000000);    /* max_entries */
        put_table_feature_prop(&m.b, 0, instructions, sizeof instructions);
        put_table_feature_prop(&m.b, 2, next, n_next);
        for (uint16_t type = 4; type <= 14; type += 2) {
            /* Write and apply actions, match, wildcards, write and apply
             * set-field: empty lists. */
            put_table_feature_prop(&m.b, type, NULL, 0);
        }
        if (!m.b.failed) {
            fdp__ofp_set_be16(m.b.data + start,
                              (uint16_t) (m.b.size - start));
        }
    }
    mp_end(&m);
}

static void
handle_stats(struct server *s, struct ofconn *c, const uint8_t *msg,
             size_t len)
{
    size_t body = c->version == FDP_OFP10 ? 12 : 16;

    if (!check_len(c, msg, len, body, true)) {
        return;
    }
    uint16_t stat = fdp__ofp_get_be16(msg + 8);
    switch (stat) {
    case OFPMP_DESC:
        if (check_len(c, msg, len, body, false)) {
            stats_desc(c, msg);
        }
        return;
    case OFPMP_PORT_DESC:
        /* OpenFlow 1.5 adds a port_no (and padding) to the request. */
        if (check_len(c, msg, len, body, true)) {
            stats_port_desc(s, c, msg);
        }
        return;
    case OFPMP_PORT_STATS:
        stats_port(s, c, msg, len, body);
        return;
    case OFPMP_TABLE:
        if (check_len(c, msg, len, body, false)) {
            stats_table(s, c, msg);
        }
        return;
    case OFPMP_TABLE_FEATURES:
        stats_table_features(c, msg, len, body);
        return;
    case OFPMP_VENDOR:
        ofconn_send_error(c, len >= body + 4
                          && fdp__ofp_get_be32(msg + body) == NX_VENDOR_ID
                          ? FDP_OFPBRC_BAD_SUBTYPE : FDP_OFPBRC_BAD_VENDOR,
                          msg, len);
        return;
    default:
        ofconn_send_error(c, FDP_OFPBRC_BAD_STAT, msg, len);
        return;
    }
}

/* Makes 'c' a master: every other master becomes a slave (OpenFlow 1.2,
 * 6.3.4). */
static void
set_role(struct server *s, struct ofconn *c, enum of_role role)
{
    if (role == OF_ROLE_MASTER) {
        of_demote_masters(s, c);
    }
    c->role = role;
}

static void
handle_role(struct server *s, struct ofconn *c, const uint8_t *msg,
            size_t len)
{
    struct fdp__ofpbuf b;

    if (!check_len(c, msg, len, OFP_HEADER_LEN + 16, false)) {
        return;
    }
    uint32_t role = fdp__ofp_get_be32(msg + 8);
    uint64_t gen = fdp__ofp_get_be64(msg + 16);
    if (role > OF_ROLE_SLAVE) {
        ofconn_send_error(c, FDP_OFPRRFC_BAD_ROLE, msg, len);
        return;
    }
    if (role == OF_ROLE_MASTER || role == OF_ROLE_SLAVE) {
        /* A generation id older than the last one is stale (compared as
         * a signed difference, which survives wrap-around). */
        if (generation_set && (int64_t) (gen - generation_id) < 0) {
            ofconn_send_error(c, FDP_OFPRRFC_STALE, msg, len);
            return;
        }
        generation_set = true;
        generation_id = gen;
    }
    if (role) {
        set_role(s, c, (enum of_role) role);
    }
    fdp__ofpbuf_init(&b);
    of_start(&b, c->version, OFPT12_ROLE_REPLY, fdp__ofp_get_be32(msg + 4));
    fdp__ofpbuf_put_be32(&b, c->role);
    fdp__ofpbuf_put_zeros(&b, 4);
    fdp__ofpbuf_put_be64(&b, generation_set ? generation_id : UINT64_MAX);
    send_buf(c, &b);
}

static void
handle_nicira(struct server *s, struct ofconn *c, const uint8_t *msg,
              size_t len)
{
    if (!check_len(c, msg, len, 16, true)) {
        return;
    }
    uint32_t subtype = fdp__ofp_get_be32(msg + 12);
    switch (subtype) {
    case NXT_ROLE_REQUEST: {
        /* Nicira's roles: 0 other (equal), 1 master, 2 slave. */
        if (!check_len(c, msg, len, 20, false)) {
            return;
        }
        uint32_t nx_role = fdp__ofp_get_be32(msg + 16);
        if (nx_role > 2) {
            ofconn_send_error(c, FDP_OFPRRFC_BAD_ROLE, msg, len);
            return;
        }
        set_role(s, c, (enum of_role) (nx_role + 1));
        struct fdp__ofpbuf b;
        fdp__ofpbuf_init(&b);
        of_start(&b, c->version, OFPT_VENDOR, fdp__ofp_get_be32(msg + 4));
        fdp__ofpbuf_put_be32(&b, NX_VENDOR_ID);
        fdp__ofpbuf_put_be32(&b, NXT_ROLE_REPLY);
        fdp__ofpbuf_put_be32(&b, c->role - 1);
        send_buf(c, &b);
        return;
    }
    case NXT_SET_FLOW_FORMAT:
        /* OpenFlow 1.0 matches (0) or NXM (2): the codec decides which it
         * reads; the choice is accepted. */
        if (check_len(c, msg, len, 20, false)) {
            uint32_t f = fdp__ofp_get_be32(msg + 16);
            if (f != 0 && f != 2) {
                ofconn_send_error(c, FDP_OFPBRC_EPERM, msg, len);
            } else {
                c->nxm = f == 2;
            }
        }
        return;
    case NXT_SET_PACKET_IN_FORMAT:
        if (check_len(c, msg, len, 20, false)) {
            uint32_t f = fdp__ofp_get_be32(msg + 16);
            if (f > 2) {
                ofconn_send_error(c, FDP_OFPBRC_EPERM, msg, len);
            } else {
                c->packet_in_format = (uint8_t) f;
            }
        }
        return;
    case NXT_FLOW_MOD_TABLE_ID:
        if (check_len(c, msg, len, 24, false)) {
            c->flow_mod_table_id = msg[16] != 0;
        }
        return;
    case NXT_SET_CONTROLLER_ID:
        if (check_len(c, msg, len, 24, false)) {
            c->controller_id = fdp__ofp_get_be16(msg + 22);
        }
        return;
    default:
        ofconn_send_error(c, FDP_OFPBRC_BAD_SUBTYPE, msg, len);
        return;
    }
}

/* Does a message of 'type' change the switch (refused to a slave)? */
static bool
is_modification(enum fdp_ofptype type)
{
    switch (type) {
    case FDP_OFPTYPE_PACKET_OUT:
    case FDP_OFPTYPE_FLOW_MOD:
    case FDP_OFPTYPE_GROUP_MOD:
    case FDP_OFPTYPE_PORT_MOD:
    case FDP_OFPTYPE_TABLE_MOD:
    case FDP_OFPTYPE_METER_MOD:
    case FDP_OFPTYPE_BUNDLE_CONTROL:
    case FDP_OFPTYPE_BUNDLE_ADD_MESSAGE:
    case FDP_OFPTYPE_NXT_TLV_TABLE_MOD:
    case FDP_OFPTYPE_CT_FLUSH_ZONE:
    case FDP_OFPTYPE_CT_FLUSH:
        return true;
    default:
        return false;
    }
}

/* ---------------------------------------------------------------------- */
/* Flow mods.                                                              */

/* Flow mods go through the same flow operations as flowdp-ctl's (one
 * pipeline transaction, journalled with --db), as decoded flows: a flow mod
 * becomes a struct flow_change, which apply_flow_changes()
 * (flowdpd-flows.c) applies directly and writes as flowdp-ctl's text only
 * for the journal.  A flow added over OpenFlow and one added by
 * flowdp-ctl are the same flow, journalled alike; a bundle of many flows
 * costs no text without a journal. */

/* The OpenFlow error for a failed flow change, from the reason the
 * operation gave. */
static enum fdp_ofperr
flow_mod_error(const struct op_result *r)
{
    switch (r->why) {
    case OPW_BAD_GROUP:
        return FDP_OFPBAC_BAD_OUT_GROUP;
    case OPW_BAD_METER:
        /* Open vSwitch's check of a flow's meter (ofproto's
         * check_meter()), not the meter mods' UNKNOWN_METER. */
        return FDP_OFPMMFC_INVALID_METER;
    case OPW_INCONSISTENT:
        return FDP_OFPBAC_MATCH_INCONSISTENT;
    case OPW_NOMEM:
        return FDP_OFPFMFC_TABLE_FULL;
    case OPW_OVERLAP:
        return FDP_OFPFMFC_OVERLAP;
    case OPW_BAD_TABLE:
        return FDP_OFPFMFC_BAD_TABLE_ID;
    case OPW_RANGES:
    case OPW_JOURNAL:
    case OPW_OTHER:
    default:
        return FDP_OFPFMFC_UNKNOWN;
    }
}

/* Decodes flow mod 'msg' into the change that does it ('*fc', which the
 * caller destroys).  Returns 0 or the OpenFlow error (then '*fc' holds
 * nothing). */
static enum fdp_ofperr
flow_mod_to_change(struct server *s, struct ofconn *c, const uint8_t *msg,
                   size_t len, struct flow_change *fc)
{
    struct fdp_ofp_flow_mod fm;
    int error = fdp_ofp_decode_flow_mod(msg, len,
                                        fdp_pipeline_tlv_map(s->pipeline),
                                        c->flow_mod_table_id, &fm);

    memset(fc, 0, sizeof *fc);
    if (error) {
        return (enum fdp_ofperr) error;
    }
    fc->spec = fm.spec;
    memset(&fm.spec, 0, sizeof fm.spec);
    fdp_ofp_flow_mod_destroy(&fm);
    fc->out_port = FDP_OFPP_ANY;
    fc->out_group = FDP_OFPG_ANY;
    fc->strict = (fm.command == FDP_OFPFC_MODIFY_STRICT
                  || fm.command == FDP_OFPFC_DELETE_STRICT);
    switch (fm.command) {
    case FDP_OFPFC_ADD:
        fc->kind = FC_ADD;
        if (!fm.table_given) {
            fc->spec.table_id = 0;
        }
        fc->spec.cookie_mask = 0;
        fc->check_overlap = (fm.flags & FDP_OFPFF_CHECK_OVERLAP) != 0;
        break;
    case FDP_OFPFC_MODIFY:
    case FDP_OFPFC_MODIFY_STRICT:
        /* As Open vSwitch: out_port and out_group select nothing in a
         * modify.  Without a cookie mask the cookie is no selector, and
         * the flows take the new cookie when the message has one. */
        fc->kind = FC_MODIFY;
        fc->all_tables = !fm.table_given;
        fc->set_cookie = (!fc->spec.cookie_mask
                          && fm.new_cookie != UINT64_MAX);
        fc->new_cookie = fm.new_cookie;
        fc->may_add = fc->set_cookie;
        break;
    case FDP_OFPFC_DELETE:
    case FDP_OFPFC_DELETE_STRICT:
    default:
        fc->kind = FC_DELETE;
        fc->all_tables = !fm.table_given;
        fc->out_port = fm.out_port;
        fc->out_group = fm.out_group;
        break;
    }
    if (fc->kind != FC_DELETE && fc->spec.actions && !fc->all_tables) {
        /* goto_table only goes forward: Open vSwitch checks the
         * instruction against the flow mod's table
         * (OFPBIC_BAD_TABLE_ID), before any prerequisite. */
        for (const struct fdp__action *a
                 = fdp__actions_first(fc->spec.actions);
             a; a = fdp__actions_next(fc->spec.actions, a)) {
            if (a->type == FDP_ACT_GOTO_TABLE
                && a->arg <= fc->spec.table_id) {
                flow_change_destroy(fc);
                memset(fc, 0, sizeof *fc);
                return FDP_OFPBIC_BAD_TABLE_ID;
            }
        }
    }
    return FDP_OFPERR_NONE;
}

/* Applies the 'n' changes 'fcs' (one transaction, journalled); on failure
 * the OpenFlow error and, in '*failed', the change that failed. */
static enum fdp_ofperr
flow_changes_apply(struct server *s, struct ofconn *c,
                   const struct flow_change *fcs, size_t n, size_t *failed)
{
    struct op_result r;
    enum fdp_ofperr oerr = FDP_OFPERR_NONE;
    int error = apply_flow_changes(s, fcs, n, &r);

    if (error) {
        vlog(L_INFO, "%s: flow mod refused: %s", ofconn_name(c),
             r.msg ? r.msg : strerror(error));
        oerr = flow_mod_error(&r);
        *failed = r.index;
    }
    free(r.msg);
    return oerr;
}

static void
handle_flow_mod(struct server *s, struct ofconn *c, const uint8_t *msg,
                size_t len)
{
    struct flow_change fc;
    enum fdp_ofperr error = flow_mod_to_change(s, c, msg, len, &fc);

    if (!error) {
        size_t failed;
        error = flow_changes_apply(s, c, &fc, 1, &failed);
        flow_change_destroy(&fc);
    }
    if (error) {
        ofconn_send_error(c, error, msg, len);
    }
}

/* Bundles: at most this many messages in one (a bundle of ovs-ofctl
 * --bundle add-flows carries a whole file). */
#define BUNDLE_MAX_MSGS 4000000

/* The start of a bundled message, which an error about it carries (as
 * ofconn_send_error() does, the first 64 bytes). */
struct bundle_head {
    uint16_t len;
    uint8_t bytes[64];
};

/* The open bundle of a connection: its flow mods, decoded, in order. */
struct of_bundle {
    struct flow_change *changes;
    struct bundle_head *heads;
    size_t n, alloc;
};

void
of_conn_destroy(struct ofconn *c)
{
    struct of_bundle *b = c->bundle;

    if (b) {
        for (size_t i = 0; i < b->n; i++) {
            flow_change_destroy(&b->changes[i]);
        }
        free(b->changes);
        free(b->heads);
        free(b);
        c->bundle = NULL;
    }
}

/* Opens a bundle on 'c'; false if out of memory. */
static bool
bundle_open(struct ofconn *c, uint32_t id, uint16_t flags)
{
    c->bundle = calloc(1, sizeof *c->bundle);
    c->bundle_id = id;
    c->bundle_flags = flags;
    return c->bundle != NULL;
}

/* Appends 'fc' (taken) and the start of its message 'msg' to 'b'; false
 * if out of memory (then 'fc' is destroyed). */
static bool
bundle_append(struct of_bundle *b, struct flow_change *fc,
              const uint8_t *msg, size_t len)
{
    if (b->n == b->alloc) {
        size_t alloc = b->alloc ? 2 * b->alloc : 64;
        struct flow_change *changes = realloc(b->changes,
                                              alloc * sizeof *changes);
        if (changes) {
            b->changes = changes;
        }
        struct bundle_head *heads = realloc(b->heads, alloc * sizeof *heads);
        if (heads) {
            b->heads = heads;
        }
        if (!changes || !heads) {
            flow_change_destroy(fc);
            return false;
        }
        b->alloc = alloc;
    }
    if (flow_change_pack(fc)) {
        flow_change_destroy(fc);
        return false;
    }
    b->changes[b->n] = *fc;
    struct bundle_head *h = &b->heads[b->n];
    h->len = (uint16_t) (len < sizeof h->bytes ? len : sizeof h->bytes);
    memcpy(h->bytes, msg, h->len);
    b->n++;
    return true;
}

static void
bundle_reply(struct ofconn *c, const struct fdp_ofp_header *h,
             uint32_t id, uint16_t type, uint16_t flags)
{
    struct fdp_ofp_bundle_ctrl bc = { .bundle_id = id, .type = type,
                                      .flags = flags };
    struct fdp__ofpbuf b;

    fdp__ofpbuf_init(&b);
    if (!fdp_ofp_encode_bundle_ctrl(&b, h, &bc) && !fdp__ofpbuf_failed(&b)) {
        ofconn_send(c, b.data, b.size);
    }
    fdp__ofpbuf_uninit(&b);
}

/* One bundle at a time per connection, of flow mods (adds, modifies and
 * deletes, mixed): committed as ONE transaction, in order, so all of it
 * or none is in the tables and the journal (atomic and ordered, whatever
 * the flags ask).  A commit that fails sends, as Open vSwitch does, the
 * error of the message that failed (carrying that message) and then
 * OFPBFC_MSG_FAILED. */
static void
handle_bundle_ctrl(struct server *s, struct ofconn *c, const uint8_t *msg,
                   size_t len, const struct fdp_ofp_header *h)
{
    struct fdp_ofp_bundle_ctrl bc;
    int error = fdp_ofp_decode_bundle_ctrl(msg, len, &bc);

    if (error) {
        ofconn_send_error(c, (enum fdp_ofperr) error, msg, len);
        return;
    }
    bool open = c->bundle != NULL;
    switch (bc.type) {
    case FDP_OFPBCT_OPEN_REQUEST:
        if (open) {
            ofconn_send_error(c, c->bundle_id == bc.bundle_id
                                 ? FDP_OFPBFC_BAD_ID
                                 : FDP_OFPBFC_OUT_OF_BUNDLES, msg, len);
            return;
        }
        if (!bundle_open(c, bc.bundle_id, bc.flags)) {
            ofconn_send_error(c, FDP_OFPERR_NOMEM, msg, len);
            return;
        }
        bundle_reply(c, h, bc.bundle_id, FDP_OFPBCT_OPEN_REPLY, bc.flags);
        return;
    case FDP_OFPBCT_CLOSE_REQUEST:
        if (!open || c->bundle_id != bc.bundle_id) {
            ofconn_send_error(c, FDP_OFPBFC_BAD_ID, msg, len);
            return;
        }
        bundle_reply(c, h, bc.bundle_id, FDP_OFPBCT_CLOSE_REPLY, bc.flags);
        return;
    case FDP_OFPBCT_DISCARD_REQUEST:
    case FDP_OFPBCT_COMMIT_REQUEST:
        if (!open || c->bundle_id != bc.bundle_id) {
            ofconn_send_error(c, FDP_OFPBFC_BAD_ID, msg, len);
            return;
        }
        if (bc.type == FDP_OFPBCT_COMMIT_REQUEST && c->bundle->n) {
            struct of_bundle *b = c->bundle;
            size_t failed = 0;
            enum fdp_ofperr e = flow_changes_apply(s, c, b->changes, b->n,
                                                   &failed);
            if (e) {
                if (failed < b->n) {
                    ofconn_send_error(c, e, b->heads[failed].bytes,
                                      b->heads[failed].len);
                }
                of_conn_destroy(c);
                ofconn_send_error(c, FDP_OFPBFC_MSG_FAILED, msg, len);
                return;
            }
        }
        of_conn_destroy(c);
        bundle_reply(c, h, bc.bundle_id,
                     bc.type == FDP_OFPBCT_COMMIT_REQUEST
                     ? FDP_OFPBCT_COMMIT_REPLY : FDP_OFPBCT_DISCARD_REPLY,
                     bc.flags);
        return;
    default:
        ofconn_send_error(c, FDP_OFPBFC_BAD_TYPE, msg, len);
        return;
    }
}

static void
handle_bundle_add(struct server *s, struct ofconn *c, const uint8_t *msg,
                  size_t len)
{
    struct fdp_ofp_bundle_add ba;
    int error = fdp_ofp_decode_bundle_add(msg, len, &ba);

    if (error) {
        ofconn_send_error(c, (enum fdp_ofperr) error, msg, len);
        return;
    }
    if (!c->bundle) {
        /* OpenFlow 1.4 opens a bundle implicitly with its first message;
         * Open vSwitch does too. */
        if (!bundle_open(c, ba.bundle_id, ba.flags)) {
            ofconn_send_error(c, FDP_OFPERR_NOMEM, msg, len);
            return;
        }
    } else if (ba.bundle_id != c->bundle_id) {
        ofconn_send_error(c, FDP_OFPBFC_BAD_ID, msg, len);
        return;
    }
    if (ba.inner_type != FDP_OFPTYPE_FLOW_MOD) {
        ofconn_send_error(c, FDP_OFPBFC_MSG_UNSUP, msg, len);
        return;
    }
    if (c->bundle->n >= BUNDLE_MAX_MSGS) {
        ofconn_send_error(c, FDP_OFPBFC_MSG_TOO_MANY, msg, len);
        return;
    }
    struct flow_change fc;
    enum fdp_ofperr e = flow_mod_to_change(s, c, ba.inner, ba.inner_len,
                                           &fc);
    if (e) {
        ofconn_send_error(c, e, ba.inner, ba.inner_len);
        return;
    }
    if (!bundle_append(c->bundle, &fc, ba.inner, ba.inner_len)) {
        ofconn_send_error(c, FDP_OFPERR_NOMEM, msg, len);
    }
}

/* Flow statistics and aggregates: the flows the request selects, as
 * Open vSwitch selects them (a match that covers the flow's, the cookie
 * under its mask, one table or all, and actions that output to out_port
 * and out_group), encoded in the request's form.  Each reply of a
 * multipart answer is queued, and the socket written, as soon as it is
 * full, so that the client decodes one part while the next is encoded. */
struct flow_stats_walk {
    const struct fdp_ofp_flow_stats_request *rq;
    struct ofconn *c;
    struct fdp_ofpmp *mp;                   /* NULL for an aggregate. */
    const struct fdp_tlv_map *tlv;
    struct fdp_ofp_aggregate_stats agg;
    int64_t now;
    int error;
};

/* Sends the replies 'mp' has finished (all before the one it fills). */
static void
flow_stats_send_finished(struct flow_stats_walk *w)
{
    struct fdp_ofpmp *mp = w->mp;
    struct fdp__ofpbuf *b = mp->b;
    size_t ofs = 0;

    if (!mp->start || fdp__ofpbuf_failed(b)) {
        return;
    }
    while (ofs < mp->start) {
        size_t n = fdp__ofp_get_be16(b->data + ofs + 2);
        ofconn_send(w->c, b->data + ofs, n);
        ofs += n;
    }
    memmove(b->data, b->data + mp->start, b->size - mp->start);
    b->size -= mp->start;
    mp->start = 0;
    ofconn_flush(w->c);
}

static bool
flow_stats_one(const struct fdp_rule *rule, void *w_)
{
    struct flow_stats_walk *w = w_;
    struct fdp_flow_spec spec;
    struct fdp_rule_stats st;

    if ((fdp_rule_get_cookie(rule) & w->rq->cookie_mask)
        != (w->rq->cookie & w->rq->cookie_mask)) {
        return true;
    }
    get_spec(rule, &spec);
    if ((w->rq->match && !fdp_match_covers(w->rq->match, spec.match))
        || !actions_output_to_port(spec.actions, w->rq->out_port)
        || !actions_output_to_group(spec.actions, w->rq->out_group)) {
        return true;
    }
    fdp_rule_get_stats(rule, &st);
    if (!w->mp) {
        w->agg.packet_count += st.n_packets;
        w->agg.byte_count += st.n_bytes;
        w->agg.flow_count++;
        return true;
    }
    int64_t age = w->now - st.created_ms;
    int64_t idle = w->now - (st.used_ms ? st.used_ms : st.created_ms);
    int64_t hard = w->now - st.modified_ms;
    struct fdp_ofp_flow_stats fs = {
        .spec = &spec,
        .duration_sec = (uint32_t) (age / 1000),
        .duration_nsec = (uint32_t) (age % 1000) * 1000000u,
        .idle_age = idle / 1000 > 0xfffe ? 0xfffe : (uint16_t) (idle / 1000),
        .hard_age = hard / 1000 > 0xfffe ? 0xfffe : (uint16_t) (hard / 1000),
        .packet_count = st.n_packets,
        .byte_count = st.n_bytes,
        .flags = spec.flags,
    };
    int error = fdp_ofp_put_flow_stats(w->mp, &fs, w->tlv);
    if (error == EINVAL && fdp__match_has_ranges(spec.match)) {
        /* A flow OpenFlow cannot describe (a range that is no prefix,
         * flowdp's extension) is left out of the reply, as no OpenFlow
         * switch could hold it. */
        return true;
    }
    if (error) {
        w->error = error;
        return false;
    }
    flow_stats_send_finished(w);
    return true;
}

static void
handle_flow_stats(struct server *s, struct ofconn *c, const uint8_t *msg,
                  size_t len, const struct fdp_ofp_header *h)
{
    const struct fdp_tlv_map *tlv = fdp_pipeline_tlv_map(s->pipeline);
    struct fdp_ofp_flow_stats_request rq;
    int error = fdp_ofp_decode_flow_stats_request(msg, len, tlv, &rq);

    if (error) {
        ofconn_send_error(c, (enum fdp_ofperr) error, msg, len);
        return;
    }
    struct fdp__ofpbuf b;
    struct fdp_ofpmp mp;
    struct flow_stats_walk w = {
        .rq = &rq, .c = c, .tlv = tlv, .now = monotonic_ms(),
    };
    fdp__ofpbuf_init(&b);
    if (!rq.aggregate) {
        fdp_ofpmp_init(&mp, &b, h);
        w.mp = &mp;
    }
    fdp_table_read_lock();
    fdp_pipeline_for_each(s->pipeline,
                          rq.table_id == FDP_OFPTT_ALL ? FDP_TABLE_ALL
                                                       : rq.table_id,
                          flow_stats_one, &w);
    fdp_table_read_unlock();
    if (!w.error) {
        w.error = rq.aggregate ? fdp_ofp_encode_aggregate_reply(&b, h, &w.agg)
                               : fdp_ofpmp_finish(&mp);
    }
    if (w.error == EINVAL) {
        /* A form the codec does not write (OpenFlow 1.5's OXS
         * statistics). */
        ofconn_send_error(c, FDP_OFPBRC_BAD_STAT, msg, len);
    } else if (w.error || fdp__ofpbuf_failed(&b)) {
        ofconn_send_error(c, FDP_OFPERR_NOMEM, msg, len);
    } else {
        ofconn_send(c, b.data, b.size);
    }
    fdp__ofpbuf_uninit(&b);
    fdp_ofp_flow_stats_request_destroy(&rq);
}

bool
of_dispatch(struct server *s, struct ofconn *c, const uint8_t *msg,
            size_t len)
{
    struct fdp_ofp_header h;
    int error = fdp_ofp_decode_header(msg, len, &h);

    /* The codec classifies the message and checks its lengths against
     * its row (lib/ofp-msgs.c): unknown types, statistics, vendors and
     * subtypes, and bodies of the wrong length, get Open vSwitch's
     * errors from there. */
    if (error) {
        ofconn_send_error(c, (enum fdp_ofperr) error, msg, len);
        return true;
    }
    if (c->role == OF_ROLE_SLAVE && is_modification(h.type)) {
        ofconn_send_error(c, FDP_OFPBRC_IS_SLAVE, msg, len);
        return true;
    }
    switch (h.type) {
    case FDP_OFPTYPE_FEATURES_REQUEST:
        handle_features(s, c, msg, len);
        break;
    case FDP_OFPTYPE_GET_CONFIG_REQUEST:
        handle_get_config(c, msg, len);
        break;
    case FDP_OFPTYPE_SET_CONFIG:
        handle_set_config(c, msg, len);
        break;
    case FDP_OFPTYPE_BARRIER_REQUEST:
        handle_barrier(c, msg, len);
        break;
    case FDP_OFPTYPE_DESC_STATS_REQUEST:
    case FDP_OFPTYPE_PORT_DESC_STATS_REQUEST:
    case FDP_OFPTYPE_PORT_STATS_REQUEST:
    case FDP_OFPTYPE_TABLE_STATS_REQUEST:
    case FDP_OFPTYPE_TABLE_FEATURES_STATS_REQUEST:
        handle_stats(s, c, msg, len);
        break;
    case FDP_OFPTYPE_ROLE_REQUEST:
        if (h.vendor == NX_VENDOR_ID) {
            handle_nicira(s, c, msg, len);
        } else {
            handle_role(s, c, msg, len);
        }
        break;
    case FDP_OFPTYPE_PACKET_OUT:
        of_packet_out(s, c, msg, len);
        break;
    case FDP_OFPTYPE_FLOW_MOD:
        handle_flow_mod(s, c, msg, len);
        break;
    case FDP_OFPTYPE_BUNDLE_CONTROL:
        handle_bundle_ctrl(s, c, msg, len, &h);
        break;
    case FDP_OFPTYPE_BUNDLE_ADD_MESSAGE:
        handle_bundle_add(s, c, msg, len);
        break;
    case FDP_OFPTYPE_FLOW_STATS_REQUEST:
    case FDP_OFPTYPE_AGGREGATE_STATS_REQUEST:
        handle_flow_stats(s, c, msg, len, &h);
        break;
    case FDP_OFPTYPE_SET_FLOW_FORMAT:
    case FDP_OFPTYPE_FLOW_MOD_TABLE_ID:
    case FDP_OFPTYPE_SET_PACKET_IN_FORMAT:
    case FDP_OFPTYPE_SET_CONTROLLER_ID:
        handle_nicira(s, c, msg, len);
        break;
    default:
        /* Groups, meters, TLV tables, conntrack flushes; else a message
         * the codec knows that this switch does not take (yet: see the
         * theory of operation), as Open vSwitch answers a message it does
         * not implement. */
        if (!of_group_dispatch(s, c, msg, len, &h)) {
            ofconn_send_error(c, FDP_OFPBRC_BAD_TYPE, msg, len);
        }
        break;
    }
    return true;
}

/* Flow removed (a flow with send_flow_rem that timed out): to the
 * connections that take asynchronous messages as for port status, but
 * not to slaves (Open vSwitch's default asynchronous configuration gives
 * a slave no flow removed), in the connection's version (a 1.0
 * connection that chose NXM gets NXT_FLOW_REMOVED). */
void
of_flow_removed(struct server *s, const struct fdp_ofp_flow_removed *fr)
{
    for (struct ofconn *c = of_next_active(s, NULL); c;
         c = of_next_active(s, c)) {
        if ((!c->is_controller && !c->miss_send_len)
            || c->role == OF_ROLE_SLAVE) {
            continue;
        }
        enum fdp_ofpraw raw = (c->version == FDP_OFP10 && c->nxm
                               ? FDP_OFPRAW_NXT_FLOW_REMOVED
                               : fdp_ofpraw_for(FDP_OFPTYPE_FLOW_REMOVED,
                                                c->version));
        struct fdp__ofpbuf b;
        fdp__ofpbuf_init(&b);
        if (!fdp_ofp_encode_flow_removed(&b, fr, raw, c->version,
                                         fdp_pipeline_tlv_map(s->pipeline))
            && !fdp__ofpbuf_failed(&b)) {
            ofconn_send_async(c, b.data, b.size);
        }
        fdp__ofpbuf_uninit(&b);
    }
}

/* Port status: every connection that takes asynchronous messages (a
 * controller, or a service connection that set a miss_send_len; slaves
 * too, as Open vSwitch's default asynchronous configuration says) hears
 * of a port added or deleted. */
void
of_port_status(struct server *s, uint32_t port, bool added)
{
    for (struct ofconn *c = of_next_active(s, NULL); c;
         c = of_next_active(s, c)) {
        if (!c->is_controller && !c->miss_send_len) {
            continue;
        }
        struct fdp__ofpbuf b;
        fdp__ofpbuf_init(&b);
        of_start(&b, c->version, 12 /* OFPT_PORT_STATUS */, 0);
        fdp__ofpbuf_put_u8(&b, added ? 0 : 1);  /* OFPPR_ADD, _DELETE */
        fdp__ofpbuf_put_zeros(&b, 7);
        put_port(&b, c->version, port, false);
        of_finish(&b);
        if (!fdp__ofpbuf_failed(&b)) {
            ofconn_send_async(c, b.data, b.size);
        }
        fdp__ofpbuf_uninit(&b);
    }
}
