/*
 * The datapath's connection tracker, seen from the control side: the
 * public fdp_dp_ct_*() API of <flowdp/datapath.h> over the internal
 * tracker (datapath/conntrack.h) that fdp__dp_ct() gives.
 *
 * Theory of operation
 * -------------------
 * Everything here is a thin, checked translation: the tracker's own
 * control calls are already safe to run concurrently with the pmds
 * (relaxed atomics for limits and timeouts, RCU-sliced dumps, a flush
 * that never makes a packet wait), so this file adds no lock of its own.
 * What it adds:
 *
 *   - The public tuple: the tracker keeps an ICMP tuple's type and code
 *     in 'src_port' and 'dst_port' (as Open vSwitch's ct_tp_src and
 *     ct_tp_dst), the public struct names them.
 *   - Timeouts: Open vSwitch's timeout policy attribute names map one to
 *     one onto the tracker's timeout classes, as its userspace tracker's
 *     tm_to_ct_dpif_tp() maps them (tcp_fin_wait is the "closing" class,
 *     tcp_time_wait the "FIN wait" one: its names, not ours).
 *   - Flush by partial tuples, as Open vSwitch 3.1's ct_dpif_flush(): a
 *     full original tuple and nothing else is one lookup in the tracker;
 *     anything else is a dump whose matching connections are then removed
 *     by their original tuple in their own zone (fdp__ct_flush_tuples(),
 *     one grace period per slice of removals).  The dump collects first
 *     and removes after, because reclaiming waits for a grace period and
 *     a dump callback runs inside a read-side section.
 *   - The text of dumps, byte for byte what ct_dpif_format_entry() prints
 *     for the userspace datapath's entries (which have no counters, no
 *     timestamps, id 0 and status 0).
 *
 * Clock: the datapath runs the tracker on CLOCK_MONOTONIC milliseconds
 * (as its flows' "used" times), so a dump's "timeout" is the expiry less
 * that clock's now.
 *
 * Example: a UDP connection 10.0.0.1:1234 -> 10.0.0.2:53 in zone 5 with
 * mark 1, 25 s before it expires, formats as
 *   udp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=1234,dport=53),
 *   reply=(src=10.0.0.2,dst=10.0.0.1,sport=53,dport=1234),zone=5,mark=1
 * (one line), with ",timeout=25" after zone=5 under FDP_CT_FORMAT_STATS.
 */
#include <config.h>

#include <flowdp/datapath.h>

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "datapath/conntrack.h"
#include "datapath/conntrack-private.h"
#include "datapath/dp-private.h"
#include "lib/ds.h"
#include "lib/field.h"

static_assert(FDP_CT_N_TCPS == FDP__CT_TCPS_TIME_WAIT + 1,
              "the public TCP states are the tracker's");

/* The tracker's clock (see the essay). */
static uint64_t
ct_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static bool
proto_is_icmp(uint8_t proto)
{
    return proto == FDP_IPPROTO_ICMP || proto == FDP_IPPROTO_ICMPV6;
}

/* ---- Tuples and entries ---- */

static void
tuple_from_ct(const struct fdp__ct_tuple *in, struct fdp_ct_tuple *out)
{
    memset(out, 0, sizeof *out);
    out->ipv6 = in->ipv6;
    out->proto = in->proto;
    out->src = in->src;
    out->dst = in->dst;
    if (proto_is_icmp(in->proto)) {
        out->icmp_id = in->icmp_id;
        out->icmp_type = (uint8_t) in->src_port;
        out->icmp_code = (uint8_t) in->dst_port;
    } else {
        out->src_port = in->src_port;
        out->dst_port = in->dst_port;
    }
}

static void
tuple_to_ct(const struct fdp_ct_tuple *in, bool ipv6, uint8_t proto,
            struct fdp__ct_tuple *out)
{
    memset(out, 0, sizeof *out);
    out->ipv6 = ipv6;
    out->proto = proto;
    out->src = in->src;
    out->dst = in->dst;
    if (proto_is_icmp(proto)) {
        out->icmp_id = in->icmp_id;
        out->src_port = in->icmp_type;
        out->dst_port = in->icmp_code;
    } else {
        out->src_port = in->src_port;
        out->dst_port = in->dst_port;
    }
}

/* Open vSwitch's tcp_peer_to_protoinfo_flags(): the wscale byte's flags
 * (conntrack-tcp.c: 0x80 the option was seen, 0x40 unknown). */
static uint8_t
tcp_flags_from_wscale(uint8_t wscale)
{
    return (uint8_t) ((wscale & 0x80 ? FDP_CT_TCPF_WINDOW_SCALE : 0)
                      | (wscale & 0x40 ? FDP_CT_TCPF_BE_LIBERAL : 0));
}

static void
entry_from_ct(const struct fdp__ct_entry *in, uint64_t now,
              struct fdp_ct_entry *out)
{
    memset(out, 0, sizeof *out);
    tuple_from_ct(&in->orig, &out->orig);
    tuple_from_ct(&in->reply, &out->reply);
    out->zone = in->zone;
    out->mark = in->mark;
    out->label = in->label;
    /* Whole seconds left, rounded down, as conn_to_ct_dpif_entry(). */
    out->timeout = in->expiry_ms > now
                   ? (uint32_t) ((in->expiry_ms - now) / 1000) : 0;
    if (in->orig.proto == FDP_IPPROTO_TCP) {
        for (int i = 0; i < 2; i++) {
            out->tcp_state[i] = in->tcp_state[i];
            out->tcp_wscale[i] = in->tcp_wscale[i] & 0xf;
            out->tcp_flags[i] = tcp_flags_from_wscale(in->tcp_wscale[i]);
        }
    }
}

/* ---- Dump ---- */

struct dump_aux {
    bool (*cb)(const struct fdp_ct_entry *, void *aux);
    void *aux;
    uint64_t now;
};

static bool
dump_one(const struct fdp__ct_entry *e, void *aux_)
{
    struct dump_aux *aux = aux_;
    struct fdp_ct_entry pub;

    entry_from_ct(e, aux->now, &pub);
    return aux->cb(&pub, aux->aux);
}

void
fdp_dp_ct_dump(struct fdp_dp *dp, const uint16_t *zone,
               bool (*cb)(const struct fdp_ct_entry *, void *aux), void *aux)
{
    struct dump_aux d = { cb, aux, ct_now_ms() };

    fdp__ct_dump(fdp__dp_ct(dp), zone, d.now, dump_one, &d);
}

/* ---- Flush ---- */

static bool
tuple_is_zero(const struct fdp_ct_tuple *t, uint8_t proto)
{
    bool zero = !t->src.hi && !t->src.lo && !t->dst.hi && !t->dst.lo;
    return proto_is_icmp(proto) ? zero
           : zero && !t->src_port && !t->dst_port;
}

/* Open vSwitch's ofp_ct_tuple_is_five_tuple(). */
static bool
tuple_is_full(const struct fdp_ct_tuple *t, uint8_t proto)
{
    bool full = (t->src.hi || t->src.lo) && (t->dst.hi || t->dst.lo);
    return proto_is_icmp(proto) ? full
           : full && t->src_port && t->dst_port;
}

static bool
match_is_zero(const struct fdp_ct_match *m)
{
    return !m->proto && !m->has_l3 && tuple_is_zero(&m->orig, m->proto)
           && tuple_is_zero(&m->reply, m->proto);
}

static bool
addr_matches(struct fdp_value want, struct fdp_value have)
{
    return (!want.hi && !want.lo) || (want.hi == have.hi
                                      && want.lo == have.lo);
}

/* ct_dpif_tuple_ip_cmp_partial(). */
static bool
tuple_matches(const struct fdp_ct_tuple *want,
              const struct fdp_ct_tuple *have, uint8_t proto)
{
    if (!addr_matches(want->src, have->src)
        || !addr_matches(want->dst, have->dst)) {
        return false;
    }
    if (proto_is_icmp(proto)) {
        return want->icmp_id == have->icmp_id
               && want->icmp_type == have->icmp_type
               && want->icmp_code == have->icmp_code;
    }
    return (!want->src_port || want->src_port == have->src_port)
           && (!want->dst_port || want->dst_port == have->dst_port);
}

/* ct_dpif_entry_cmp(). */
static bool
entry_matches(const struct fdp_ct_entry *e, const struct fdp_ct_match *m)
{
    if (m->has_l3 && m->ipv6 != e->orig.ipv6) {
        return false;
    }
    if (m->proto && m->proto != e->orig.proto) {
        return false;
    }
    return tuple_matches(&m->orig, &e->orig, m->proto)
           && tuple_matches(&m->reply, &e->reply, m->proto);
}

struct flush_aux {
    const struct fdp_ct_match *match;
    struct fdp_ct_entry *hits;
    size_t n, alloc;
    bool failed;
};

static bool
flush_collect(const struct fdp_ct_entry *e, void *aux_)
{
    struct flush_aux *aux = aux_;

    if (!entry_matches(e, aux->match)) {
        return true;
    }
    if (aux->n == aux->alloc) {
        size_t alloc = aux->alloc ? 2 * aux->alloc : 64;
        struct fdp_ct_entry *hits = realloc(aux->hits, alloc * sizeof *hits);
        if (!hits) {
            aux->failed = true;
            return false;
        }
        aux->hits = hits;
        aux->alloc = alloc;
    }
    aux->hits[aux->n++] = *e;
    return true;
}

int
fdp_dp_ct_flush(struct fdp_dp *dp, const uint16_t *zone,
                const struct fdp_ct_match *match, uint32_t *np)
{
    struct fdp__ct *ct = fdp__dp_ct(dp);
    uint32_t n = 0;

    if (!match || match_is_zero(match)) {
        n = fdp__ct_flush(ct, zone, NULL);
    } else if (tuple_is_full(&match->orig, match->proto)
               && tuple_is_zero(&match->reply, match->proto)) {
        struct fdp__ct_tuple t;
        tuple_to_ct(&match->orig, match->ipv6, match->proto, &t);
        uint16_t z = zone ? *zone : 0;
        n = fdp__ct_flush(ct, &z, &t);
    } else {
        /* Collect, then remove: see the essay.  Out of memory part way,
         * what was collected is still removed, a batch at a time. */
        struct flush_aux aux = { .match = match };
        do {
            aux.n = 0;
            aux.failed = false;
            fdp_dp_ct_dump(dp, zone, flush_collect, &aux);
            struct fdp__ct_tuple *tuples = malloc(aux.n * sizeof *tuples
                                                  + 1);
            uint16_t *zones = malloc(aux.n * sizeof *zones + 1);
            if (!tuples || !zones) {
                free(tuples);
                free(zones);
                aux.failed = true;
                break;
            }
            for (size_t i = 0; i < aux.n; i++) {
                const struct fdp_ct_entry *e = &aux.hits[i];
                zones[i] = e->zone;
                tuple_to_ct(&e->orig, e->orig.ipv6, e->orig.proto,
                            &tuples[i]);
            }
            n += fdp__ct_flush_tuples(ct, zones, tuples, aux.n);
            free(tuples);
            free(zones);
        } while (aux.failed && aux.n);
        free(aux.hits);
        if (aux.failed) {
            if (np) {
                *np = n;
            }
            return ENOMEM;
        }
    }
    if (np) {
        *np = n;
    }
    return 0;
}

/* ---- Parsing a flush tuple (ofp_ct_tuple_parse()) ---- */

static int parse_fail(char **errorp, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets '*errorp' (if nonnull) to the message; returns EINVAL, or ENOMEM
 * if the message could not be made. */
static int
parse_fail(char **errorp, const char *format, ...)
{
    if (errorp) {
        va_list args;
        va_start(args, format);
        int n = vasprintf(errorp, format, args);
        va_end(args);
        if (n < 0) {
            *errorp = NULL;
            return ENOMEM;
        }
    }
    return EINVAL;
}

/* Parses 'value' as a decimal number of at most 'max'. */
static bool
parse_uint(const char *value, uint32_t max, uint32_t *out)
{
    char *end;

    if (!*value || *value == '-' || *value == '+') {
        return false;
    }
    errno = 0;
    unsigned long long v = strtoull(value, &end, 0);
    if (errno || *end || v > max) {
        return false;
    }
    *out = (uint32_t) v;
    return true;
}

int
fdp_ct_match_parse_tuple(const char *s, bool reply,
                         struct fdp_ct_match *match, char **errorp)
{
    struct fdp_ct_tuple *t = reply ? &match->reply : &match->orig;
    char *copy = strdup(s);
    char *save = NULL;
    int error = 0;

    if (errorp) {
        *errorp = NULL;
    }
    if (!copy) {
        return ENOMEM;
    }
    for (char *field = strtok_r(copy, ",", &save); field && !error;
         field = strtok_r(NULL, ",", &save)) {
        char *value = strchr(field, '=');
        if (!value || !value[1]) {
            error = parse_fail(errorp, "field %s missing value", field);
            break;
        }
        *value++ = '\0';

        uint32_t v;
        if (!strcmp(field, "ct_nw_src") || !strcmp(field, "ct_nw_dst")
            || !strcmp(field, "ct_ipv6_src")
            || !strcmp(field, "ct_ipv6_dst")) {
            bool v6 = field[3] == 'i';
            struct fdp_value *addr = field[v6 ? 8 : 6] == 's' ? &t->src
                                                               : &t->dst;
            if (match->has_l3 && match->ipv6 != v6) {
                error = parse_fail(errorp, "the L3 protocol does not match "
                                   "%s", value);
            } else if (addr->hi || addr->lo) {
                error = parse_fail(errorp, "%s is set multiple times",
                                   field);
            } else if (v6) {
                uint8_t b[16];
                if (inet_pton(AF_INET6, value, b) != 1) {
                    error = parse_fail(errorp, "failed to parse field %s",
                                       field);
                    break;
                }
                addr->hi = addr->lo = 0;
                for (int i = 0; i < 8; i++) {
                    addr->hi = addr->hi << 8 | b[i];
                    addr->lo = addr->lo << 8 | b[i + 8];
                }
            } else {
                struct in_addr a;
                if (inet_pton(AF_INET, value, &a) != 1) {
                    error = parse_fail(errorp, "failed to parse field %s",
                                       field);
                    break;
                }
                addr->hi = 0;
                addr->lo = ntohl(a.s_addr);
            }
            if (!error) {
                match->has_l3 = true;
                match->ipv6 = v6;
            }
        } else if (!strcmp(field, "ct_nw_proto")) {
            if (!parse_uint(value, 255, &v)) {
                error = parse_fail(errorp, "failed to parse field %s",
                                   field);
            } else if (match->proto && match->proto != v) {
                error = parse_fail(errorp, "%s is set multiple times",
                                   field);
            } else {
                match->proto = (uint8_t) v;
            }
        } else if (!strcmp(field, "ct_tp_src")
                   || !strcmp(field, "ct_tp_dst")) {
            if (!parse_uint(value, 65535, &v)) {
                error = parse_fail(errorp, "failed to parse field %s",
                                   field);
            } else if (field[6] == 's') {
                t->src_port = (uint16_t) v;
            } else {
                t->dst_port = (uint16_t) v;
            }
        } else if (!strcmp(field, "icmp_type") || !strcmp(field, "icmp_code")
                   || !strcmp(field, "icmp_id")) {
            bool id = field[5] == 'i';
            if (!proto_is_icmp(match->proto)) {
                error = parse_fail(errorp, "%s: invalid L4 fields (give "
                                   "ct_nw_proto=1 or 58 before them)",
                                   field);
            } else if (!parse_uint(value, id ? 65535 : 255, &v)) {
                error = parse_fail(errorp, "failed to parse field %s",
                                   field);
            } else if (id) {
                t->icmp_id = (uint16_t) v;
            } else if (field[5] == 't') {
                t->icmp_type = (uint8_t) v;
            } else {
                t->icmp_code = (uint8_t) v;
            }
        } else {
            error = parse_fail(errorp, "invalid conntrack tuple field: %s",
                               field);
        }
    }
    if (!error && !match->proto && (t->src_port || t->dst_port)) {
        error = parse_fail(errorp, "%s", "port is set without protocol");
    }
    if (!error && proto_is_icmp(match->proto) && (t->src_port || t->dst_port)) {
        /* The ports were given before the protocol: Open vSwitch's union
         * would read them as the ICMP id, type and code; refuse rather
         * than guess. */
        error = parse_fail(errorp, "%s", "ct_tp_src and ct_tp_dst do not "
                           "apply to ICMP (give icmp_id, icmp_type, "
                           "icmp_code)");
    }
    free(copy);
    return error;
}

/* ---- Counts, counters, limits ---- */

uint32_t
fdp_dp_ct_count(struct fdp_dp *dp)
{
    return fdp__ct_count(fdp__dp_ct(dp));
}

uint32_t
fdp_dp_ct_zone_count(struct fdp_dp *dp, uint16_t zone)
{
    return fdp__ct_zone_count(fdp__dp_ct(dp), zone);
}

void
fdp_dp_ct_stats(struct fdp_dp *dp, struct fdp_ct_stats *stats)
{
    struct fdp__ct_pmd_stats s;

    fdp__dp_ct_pmd_stats(dp, &s);
    stats->n_packets = s.n_packets;
    stats->n_created = s.n_created;
    stats->n_invalid = s.n_invalid;
    stats->n_full = s.n_full;
}

int
fdp_dp_ct_set_maxconns(struct fdp_dp *dp, uint32_t maxconns)
{
    return fdp__ct_set_limit(fdp__dp_ct(dp), maxconns);
}

uint32_t
fdp_dp_ct_get_maxconns(struct fdp_dp *dp)
{
    return fdp__ct_get_limit(fdp__dp_ct(dp));
}

uint32_t
fdp_dp_ct_get_capacity(struct fdp_dp *dp)
{
    return fdp__ct_get_capacity(fdp__dp_ct(dp));
}

void
fdp_dp_ct_set_default_limit(struct fdp_dp *dp, uint32_t limit)
{
    fdp__ct_set_default_zone_limit(fdp__dp_ct(dp), limit);
}

uint32_t
fdp_dp_ct_get_default_limit(struct fdp_dp *dp)
{
    return fdp__ct_get_default_zone_limit(fdp__dp_ct(dp));
}

void
fdp_dp_ct_set_zone_limit(struct fdp_dp *dp, uint16_t zone, uint32_t limit)
{
    fdp__ct_set_zone_limit(fdp__dp_ct(dp), zone, limit);
}

uint32_t
fdp_dp_ct_get_zone_limit(struct fdp_dp *dp, uint16_t zone)
{
    return fdp__ct_get_zone_limit(fdp__dp_ct(dp), zone);
}

void
fdp_dp_ct_set_tcp_seq_chk(struct fdp_dp *dp, bool on)
{
    fdp__ct_set_tcp_seq_chk(fdp__dp_ct(dp), on);
}

bool
fdp_dp_ct_get_tcp_seq_chk(struct fdp_dp *dp)
{
    return fdp__ct_get_tcp_seq_chk(fdp__dp_ct(dp));
}

/* ---- Timeouts ---- */

/* The attributes in enum order, each with the tracker's class
 * (tm_to_ct_dpif_tp() read backwards). */
static const struct {
    const char *name;
    enum fdp__ct_tm tm;
} tp_attrs[FDP_CT_N_TP_ATTRS] = {
    [FDP_CT_TP_TCP_SYN_SENT] = { "tcp_syn_sent",
                                 FDP__CT_TM_TCP_FIRST_PACKET },
    [FDP_CT_TP_TCP_SYN_RECV] = { "tcp_syn_recv", FDP__CT_TM_TCP_OPENING },
    [FDP_CT_TP_TCP_ESTABLISHED] = { "tcp_established",
                                    FDP__CT_TM_TCP_ESTABLISHED },
    [FDP_CT_TP_TCP_FIN_WAIT] = { "tcp_fin_wait", FDP__CT_TM_TCP_CLOSING },
    [FDP_CT_TP_TCP_TIME_WAIT] = { "tcp_time_wait",
                                  FDP__CT_TM_TCP_FIN_WAIT },
    [FDP_CT_TP_TCP_CLOSE] = { "tcp_close", FDP__CT_TM_TCP_CLOSED },
    [FDP_CT_TP_UDP_FIRST] = { "udp_first", FDP__CT_TM_OTHER_FIRST },
    [FDP_CT_TP_UDP_SINGLE] = { "udp_single", FDP__CT_TM_OTHER_MULTIPLE },
    [FDP_CT_TP_UDP_MULTIPLE] = { "udp_multiple", FDP__CT_TM_OTHER_BIDIR },
    [FDP_CT_TP_ICMP_FIRST] = { "icmp_first", FDP__CT_TM_ICMP_FIRST },
    [FDP_CT_TP_ICMP_REPLY] = { "icmp_reply", FDP__CT_TM_ICMP_REPLY },
};

const char *
fdp_ct_tp_attr_name(enum fdp_ct_tp_attr attr)
{
    return (unsigned int) attr < FDP_CT_N_TP_ATTRS ? tp_attrs[attr].name
                                                   : NULL;
}

enum fdp_ct_tp_attr
fdp_ct_tp_attr_from_name(const char *name)
{
    for (int i = 0; i < FDP_CT_N_TP_ATTRS; i++) {
        if (!strcasecmp(name, tp_attrs[i].name)) {
            return (enum fdp_ct_tp_attr) i;
        }
    }
    return FDP_CT_N_TP_ATTRS;
}

int
fdp_dp_ct_set_timeout(struct fdp_dp *dp, const uint16_t *zone,
                      enum fdp_ct_tp_attr attr, uint32_t seconds)
{
    if ((unsigned int) attr >= FDP_CT_N_TP_ATTRS) {
        return EINVAL;
    }
    struct fdp__ct *ct = fdp__dp_ct(dp);
    return zone ? fdp__ct_set_zone_timeout(ct, *zone, tp_attrs[attr].tm,
                                           seconds)
                : fdp__ct_set_timeout(ct, tp_attrs[attr].tm, seconds);
}

uint32_t
fdp_dp_ct_get_timeout(struct fdp_dp *dp, const uint16_t *zone,
                      enum fdp_ct_tp_attr attr, bool *own)
{
    if (own) {
        *own = false;
    }
    if ((unsigned int) attr >= FDP_CT_N_TP_ATTRS) {
        return 0;
    }
    struct fdp__ct *ct = fdp__dp_ct(dp);
    if (zone) {
        uint32_t s = fdp__ct_get_zone_timeout(ct, *zone, tp_attrs[attr].tm);
        if (s) {
            if (own) {
                *own = true;
            }
            return s;
        }
    }
    return fdp__ct_get_timeout(ct, tp_attrs[attr].tm);
}

/* ---- Formatting (ct_dpif_format_entry()) ---- */

static const char *const tcp_state_names[FDP_CT_N_TCPS] = {
    "CLOSED", "LISTEN", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "CLOSE_WAIT",
    "FIN_WAIT_1", "CLOSING", "LAST_ACK", "FIN_WAIT_2", "TIME_WAIT",
};

const char *
fdp_ct_tcp_state_name(unsigned int state)
{
    return state < FDP_CT_N_TCPS ? tcp_state_names[state] : NULL;
}

unsigned int
fdp_ct_tcp_state_coalesce(uint8_t orig, uint8_t reply)
{
    unsigned int s = orig > reply ? orig : reply;
    return s == FDP_CT_TCPS_FIN_WAIT_2 ? FDP_CT_TCPS_TIME_WAIT
           : s == FDP_CT_TCPS_SYN_RECV ? FDP_CT_TCPS_ESTABLISHED : s;
}

static void
put_tcp_state(struct fdp__ds *ds, const char *title, unsigned int state)
{
    const char *name = fdp_ct_tcp_state_name(state);

    fdp__ds_put(ds, title);
    if (name) {
        fdp__ds_put(ds, name);
    } else {
        fdp__ds_printf(ds, "[%u]", state);
    }
}

static void
put_proto(struct fdp__ds *ds, uint8_t proto)
{
    const char *name = (proto == 1 ? "icmp" : proto == 58 ? "icmpv6"
                        : proto == 6 ? "tcp" : proto == 17 ? "udp"
                        : proto == 132 ? "sctp" : proto == 136 ? "udplite"
                        : proto == 33 ? "dccp" : proto == 2 ? "igmp" : NULL);
    if (name) {
        fdp__ds_put(ds, name);
    } else {
        fdp__ds_printf(ds, "%u", proto);
    }
}

static void
put_addr(struct fdp__ds *ds, bool ipv6, struct fdp_value a)
{
    char buf[INET6_ADDRSTRLEN];

    if (ipv6) {
        uint8_t b[16];
        for (int i = 0; i < 8; i++) {
            b[i] = (uint8_t) (a.hi >> (56 - 8 * i));
            b[i + 8] = (uint8_t) (a.lo >> (56 - 8 * i));
        }
        inet_ntop(AF_INET6, b, buf, sizeof buf);
        fdp__ds_put(ds, buf);
    } else {
        fdp__ds_printf(ds, "%u.%u.%u.%u", (unsigned int) (a.lo >> 24) & 0xff,
                       (unsigned int) (a.lo >> 16) & 0xff,
                       (unsigned int) (a.lo >> 8) & 0xff,
                       (unsigned int) a.lo & 0xff);
    }
}

static void
put_tuple(struct fdp__ds *ds, const struct fdp_ct_tuple *t)
{
    fdp__ds_put(ds, "src=");
    put_addr(ds, t->ipv6, t->src);
    fdp__ds_put(ds, ",dst=");
    put_addr(ds, t->ipv6, t->dst);
    if (proto_is_icmp(t->proto)) {
        fdp__ds_printf(ds, ",id=%u,type=%u,code=%u", t->icmp_id,
                       t->icmp_type, t->icmp_code);
    } else {
        fdp__ds_printf(ds, ",sport=%u,dport=%u", t->src_port, t->dst_port);
    }
}

/* format_flags() with ct_dpif_tcp_flags(): the set flags' names joined by
 * '|', "0" if none. */
static void
put_tcp_flags(struct fdp__ds *ds, const char *title, uint8_t flags)
{
    static const char *const names[8] = {
        "WINDOW_SCALE", "SACK_PERM", "CLOSE_INIT", "BE_LIBERAL",
        "DATA_UNACKNOWLEDGED", "MAXACK_SET", NULL, NULL,
    };
    bool first = true;

    fdp__ds_put(ds, title);
    if (!flags) {
        fdp__ds_putc(ds, '0');
        return;
    }
    for (int i = 0; i < 8; i++) {
        if (flags & (1u << i)) {
            if (!first) {
                fdp__ds_putc(ds, '|');
            }
            first = false;
            if (names[i]) {
                fdp__ds_put(ds, names[i]);
            } else {
                fdp__ds_printf(ds, "0x%x", 1u << i);
            }
        }
    }
}

char *
fdp_ct_entry_format(const struct fdp_ct_entry *e, unsigned int flags)
{
    struct fdp__ds ds = FDP__DS_INIT;
    bool verbose = flags & FDP_CT_FORMAT_VERBOSE;

    put_proto(&ds, e->orig.proto);
    fdp__ds_put(&ds, ",orig=(");
    put_tuple(&ds, &e->orig);
    fdp__ds_put(&ds, "),reply=(");
    put_tuple(&ds, &e->reply);
    fdp__ds_putc(&ds, ')');
    if (verbose) {
        /* The userspace tracker gives no id. */
        fdp__ds_put(&ds, ",id=0");
    }
    if (e->zone) {
        fdp__ds_printf(&ds, ",zone=%u", e->zone);
    }
    if (verbose) {
        /* Nor status flags. */
        fdp__ds_put(&ds, ",status=0");
    }
    if (flags & FDP_CT_FORMAT_STATS) {
        fdp__ds_printf(&ds, ",timeout=%" PRIu32, e->timeout);
    }
    if (e->mark) {
        fdp__ds_printf(&ds, ",mark=%" PRIu32, e->mark);
    }
    if (e->label.hi) {
        /* ds_put_hex() drops the leading zero bytes (and so the high
         * nibble of the first if zero): the number in hexadecimal. */
        fdp__ds_printf(&ds, ",labels=0x%" PRIx64 "%016" PRIx64,
                       e->label.hi, e->label.lo);
    } else if (e->label.lo) {
        fdp__ds_printf(&ds, ",labels=0x%" PRIx64, e->label.lo);
    }
    if (e->orig.proto == FDP_IPPROTO_TCP) {
        fdp__ds_put(&ds, ",protoinfo=(");
        if (verbose) {
            put_tcp_state(&ds, "state_orig=", e->tcp_state[0]);
            put_tcp_state(&ds, ",state_reply=", e->tcp_state[1]);
            if (e->tcp_wscale[0] || e->tcp_wscale[1]) {
                fdp__ds_printf(&ds, ",wscale_orig=%u,wscale_reply=%u",
                               e->tcp_wscale[0], e->tcp_wscale[1]);
            }
            put_tcp_flags(&ds, ",flags_orig=", e->tcp_flags[0]);
            put_tcp_flags(&ds, ",flags_reply=", e->tcp_flags[1]);
        } else {
            put_tcp_state(&ds, "state=",
                          fdp_ct_tcp_state_coalesce(e->tcp_state[0],
                                                    e->tcp_state[1]));
        }
        fdp__ds_putc(&ds, ')');
    }
    return fdp__ds_steal(&ds);
}
