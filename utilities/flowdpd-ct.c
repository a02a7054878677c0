/*
 * flowdpd's JSON-RPC methods for the connection tracker: what
 * "ovs-appctl dpctl/..." does for Open vSwitch's, over the datapath's
 * fdp_dp_ct_*() API (<flowdp/datapath.h>).  flowdp-ctl's commands of the
 * same names print the replies in dpctl's formats.
 *
 * Methods (params -> result); "zone" is always an integer 0..65535, and
 * every other member is checked the same way, with an error that names
 * it:
 *   dump-conntrack   {zone?, verbose:BOOL?, stats:BOOL?, parts:BOOL?}
 *                    -> {text:"LINE\n...", n}  (dpctl's lines; with
 *                    parts, "dump-conntrack.part" notifications first:
 *                    see below)
 *   flush-conntrack  {zone?, orig:TUPLE?, reply:TUPLE?} -> {n}
 *                    (TUPLE in dpctl's syntax; reply needs orig)
 *   ct-stats-show    {zone?} -> {total, tcp, udp, ..., tcp_states:{NAME:
 *                    N}, packets, created, invalid, full}
 *   ct-get-nconns    {} -> {n}
 *   ct-set-maxconns  {maxconns} -> {}
 *   ct-get-maxconns  {} -> {maxconns, capacity}
 *   ct-set-limits    {default?, zones:[{zone, limit}]?} -> {}
 *   ct-del-limits    {zones:[ZONE]} -> {}
 *   ct-get-limits    {zones:[ZONE]?} -> {default, zones:[{zone, limit,
 *                    count}]}  (without zones: those with a limit of
 *                    their own, as dpif-netdev)
 *   ct-set-timeout-policy {zone?, timeouts:{NAME:SECONDS}} -> {}
 *                    (without zone: the global timeouts)
 *   ct-del-timeout-policy {zone} -> {}
 *   ct-get-timeout-policy {zone?} -> {timeouts:{NAME:SECONDS},
 *                    own:[NAME]}
 *   ct-set-tcp-seq-chk {enabled:BOOL} -> {}
 *   ct-get-tcp-seq-chk {} -> {enabled}
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ds.h"
#include "utilities/flowdpd.h"
#include "utilities/rpc.h"

/* Reads optional member 'key' of 'p' as an integer from 0 to 'max' into
 * '*out': returns 1 if present, 0 if absent, -1 (with 'r' set) if
 * malformed. */
static int
opt_uint(const json_t *p, const char *key, uint64_t max, uint64_t *out,
         struct op_result *r)
{
    const json_t *v = json_object_get(p, key);

    if (!v) {
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0
        || (uint64_t) json_integer_value(v) > max) {
        op_fail(r, RPC_INVALID_PARAMS, "\"%s\": expected an integer from 0 "
                "to %" PRIu64, key, max);
        return -1;
    }
    *out = (uint64_t) json_integer_value(v);
    return 1;
}

/* Optional "zone": 1 present (in '*zone'), 0 absent, -1 malformed. */
static int
opt_zone(const json_t *p, uint16_t *zone, struct op_result *r)
{
    uint64_t v;
    int got = opt_uint(p, "zone", UINT16_MAX, &v, r);

    if (got > 0) {
        *zone = (uint16_t) v;
    }
    return got;
}

/* Refuses members of 'p' not in 'known' (NULL-terminated): a misspelt
 * member is an error, not a silent default. */
static bool
only_members(const json_t *p, const char *const *known, struct op_result *r)
{
    const char *key;
    json_t *v;

    json_object_foreach((json_t *) p, key, v) {
        bool ok = false;
        for (const char *const *k = known; *k; k++) {
            ok = ok || !strcmp(key, *k);
        }
        if (!ok) {
            op_fail(r, RPC_INVALID_PARAMS, "\"%s\": unknown parameter", key);
            return false;
        }
    }
    return true;
}

static bool
opt_bool(const json_t *p, const char *key, bool *out, struct op_result *r)
{
    const json_t *v = json_object_get(p, key);

    *out = false;
    if (v && !json_is_boolean(v)) {
        op_fail(r, RPC_INVALID_PARAMS, "\"%s\": expected true or false",
                key);
        return false;
    }
    *out = v && json_is_true(v);
    return true;
}

/* ---- dump-conntrack ----
 *
 * Written as JSON text while the tracker is walked, as dump-flows does
 * (flowdpd-dump.c), and in parts: a notification
 *   {"jsonrpc":"2.0","method":"dump-conntrack.part","params":{"id":ID,
 *    "text":"LINE\n..."}}
 * every DUMP_PART_BYTES of lines, then the reply {"text":..., "n":N} with
 * the rest, so that no message grows with the table (ten million
 * connections are two gigabytes of lines).  A client that does not ask
 * for "parts" gets every line in the reply. */

/* The size at which a part is sent. */
#define DUMP_PART_BYTES (1u << 20)

struct dump_text {
    struct rpc_conn *conn;
    const char *id;             /* The request's id, as JSON text. */
    bool parts;
    unsigned int flags;
    struct fdp__ds msg;
    size_t prefix_len;          /* Bytes of 'msg' before its lines. */
    size_t n;                   /* Lines in all messages. */
    bool failed;
};

/* Starts the next message: a part, or the reply when 'last'. */
static void
dump_start(struct dump_text *d, bool last)
{
    fdp__ds_clear(&d->msg);
    if (last) {
        fdp__ds_put(&d->msg, "{\"jsonrpc\":\"2.0\",\"id\":");
        fdp__ds_put(&d->msg, d->id);
        fdp__ds_put(&d->msg, ",\"result\":{\"text\":\"");
    } else {
        fdp__ds_put(&d->msg, "{\"jsonrpc\":\"2.0\",\"method\":"
                    "\"dump-conntrack.part\",\"params\":{\"id\":");
        fdp__ds_put(&d->msg, d->id);
        fdp__ds_put(&d->msg, ",\"text\":\"");
    }
    d->prefix_len = d->msg.len;
}

/* Ends the message and queues it. */
static void
dump_send(struct dump_text *d, bool last)
{
    fdp__ds_putc(&d->msg, '"');
    if (last) {
        fdp__ds_printf(&d->msg, ",\"n\":%zu", d->n);
    }
    fdp__ds_put(&d->msg, "}}");
    if (fdp__ds_failed(&d->msg)
        || rpc_queue_text(d->conn, d->msg.s, d->msg.len)) {
        d->failed = true;
    } else if (!last) {
        /* An error here closes the connection in its next run. */
        rpc_flush(d->conn);
    }
}

static bool
dump_line(const struct fdp_ct_entry *e, void *aux)
{
    struct dump_text *d = aux;
    char *line = fdp_ct_entry_format(e, d->flags);

    if (!line) {
        d->failed = true;
        return false;
    }
    fdp__ds_put_json_chars(&d->msg, line);
    fdp__ds_put(&d->msg, "\\n");
    free(line);
    d->n++;
    d->failed |= fdp__ds_failed(&d->msg);
    if (d->parts && !d->failed && d->msg.len >= DUMP_PART_BYTES) {
        dump_send(d, false);
        dump_start(d, false);
    }
    return !d->failed;
}

static bool
h_ct_dump(struct server *s, struct rpc_conn *c, const json_t *req,
          const json_t *p, struct op_result *r)
{
    static const char *const known[] = { "zone", "verbose", "stats",
                                         "parts", NULL };
    uint16_t zone;
    bool verbose, stats, parts;
    int has_zone;

    if (!only_members(p, known, r)
        || (has_zone = opt_zone(p, &zone, r)) < 0
        || !opt_bool(p, "verbose", &verbose, r)
        || !opt_bool(p, "stats", &stats, r)
        || !opt_bool(p, "parts", &parts, r)) {
        return false;
    }
    char *id = rpc_request_id_text(req);
    struct dump_text d = {
        .conn = c, .id = id ? id : "null", .parts = parts,
        .flags = ((verbose ? FDP_CT_FORMAT_VERBOSE : 0)
                  | (stats ? FDP_CT_FORMAT_STATS : 0)),
        .msg = FDP__DS_INIT, .failed = !id,
    };
    /* Parts begin as parts; the reply is started when the walk ends (the
     * lines since the last part are moved into it). */
    dump_start(&d, !parts);
    if (!d.failed) {
        fdp_dp_ct_dump(s->dp, has_zone ? &zone : NULL, dump_line, &d);
    }
    if (parts && !d.failed) {
        struct fdp__ds rest = d.msg;
        size_t skip = d.prefix_len;
        d.msg = (struct fdp__ds) FDP__DS_INIT;
        dump_start(&d, true);
        if (rest.len > skip) {
            fdp__ds_put_buffer(&d.msg, rest.s + skip, rest.len - skip);
        }
        fdp__ds_destroy(&rest);
    }
    if (!d.failed) {
        dump_send(&d, true);
    }
    fdp__ds_destroy(&d.msg);
    free(id);
    if (d.n >= TRIM_MIN_FLOWS) {
        s->trim_pending = true;     /* The formatting's garbage. */
    }
    if (d.failed) {
        op_fail(r, RPC_FAILED, "dump-conntrack: out of memory");
        return false;
    }
    return true;
}

/* ---- flush-conntrack ---- */

static json_t *
h_ct_flush(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { "zone", "orig", "reply", NULL };
    struct fdp_ct_match match;
    uint16_t zone;
    int has_zone;

    memset(&match, 0, sizeof match);
    if (!only_members(p, known, r) || (has_zone = opt_zone(p, &zone, r)) < 0) {
        return NULL;
    }
    const json_t *orig = json_object_get(p, "orig");
    const json_t *reply = json_object_get(p, "reply");
    if ((orig && !json_is_string(orig)) || (reply && !json_is_string(reply))) {
        op_fail(r, RPC_INVALID_PARAMS, "\"%s\": expected a conntrack tuple "
                "string", orig && !json_is_string(orig) ? "orig" : "reply");
        return NULL;
    }
    if (reply && !orig) {
        op_fail(r, RPC_INVALID_PARAMS, "\"reply\": given without \"orig\"");
        return NULL;
    }
    const json_t *tuples[2] = { orig, reply };
    for (int i = 0; i < 2; i++) {
        char *msg = NULL;
        if (tuples[i] && json_string_length(tuples[i])
            && fdp_ct_match_parse_tuple(json_string_value(tuples[i]), i,
                                        &match, &msg)) {
            op_fail(r, RPC_INVALID_PARAMS, "%s tuple: %s",
                    i ? "reply" : "original", msg ? msg : "out of memory");
            free(msg);
            return NULL;
        }
    }
    uint32_t n;
    if (fdp_dp_ct_flush(s->dp, has_zone ? &zone : NULL, &match, &n)) {
        op_fail(r, RPC_FAILED, "flushing conntrack: out of memory (%" PRIu32
                " connections removed)", n);
        return NULL;
    }
    vlog(L_INFO, "flush-conntrack: %" PRIu32 " connections removed", n);
    return json_pack("{s:I}", "n", (json_int_t) n);
}

/* ---- ct-stats-show ---- */

/* The protocols dpctl counts, in the order it prints them. */
static const struct {
    const char *name;
    uint8_t proto;
} stat_protos[] = {
    { "tcp", 6 }, { "udp", 17 }, { "udplite", 136 }, { "sctp", 132 },
    { "icmp", 1 }, { "icmpv6", 58 }, { "dccp", 33 }, { "igmp", 2 },
};
#define N_STAT_PROTOS (sizeof stat_protos / sizeof stat_protos[0])

struct proto_count {
    uint64_t total;
    uint64_t by_proto[N_STAT_PROTOS];
    uint64_t other;
    uint64_t tcp_states[FDP_CT_N_TCPS + 1];    /* Last: out of range. */
};

static bool
count_conn(const struct fdp_ct_entry *e, void *aux)
{
    struct proto_count *c = aux;

    c->total++;
    for (size_t i = 0; i < N_STAT_PROTOS; i++) {
        if (e->orig.proto == stat_protos[i].proto) {
            c->by_proto[i]++;
            if (e->orig.proto == 6) {
                unsigned int st = fdp_ct_tcp_state_coalesce(e->tcp_state[0],
                                                            e->tcp_state[1]);
                c->tcp_states[st < FDP_CT_N_TCPS ? st : FDP_CT_N_TCPS]++;
            }
            return true;
        }
    }
    c->other++;
    return true;
}

static json_t *
h_ct_stats(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { "zone", NULL };
    struct proto_count c;
    uint16_t zone;
    int has_zone;

    memset(&c, 0, sizeof c);
    if (!only_members(p, known, r) || (has_zone = opt_zone(p, &zone, r)) < 0) {
        return NULL;
    }
    fdp_dp_ct_dump(s->dp, has_zone ? &zone : NULL, count_conn, &c);

    struct fdp_ct_stats st;
    fdp_dp_ct_stats(s->dp, &st);
    json_t *states = json_object();
    json_t *result = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}",
                               "total", (json_int_t) c.total,
                               "other", (json_int_t) c.other,
                               "packets", (json_int_t) st.n_packets,
                               "created", (json_int_t) st.n_created,
                               "invalid", (json_int_t) st.n_invalid,
                               "full", (json_int_t) st.n_full);
    if (!states || !result) {
        json_decref(states);
        json_decref(result);
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < N_STAT_PROTOS; i++) {
        json_object_set_new(result, stat_protos[i].name,
                            json_integer((json_int_t) c.by_proto[i]));
    }
    for (unsigned int i = 0; i <= FDP_CT_N_TCPS; i++) {
        if (c.tcp_states[i]) {
            const char *name = fdp_ct_tcp_state_name(i);
            json_object_set_new(states, name ? name : "[unknown]",
                                json_integer((json_int_t) c.tcp_states[i]));
        }
    }
    json_object_set_new(result, "tcp_states", states);
    return result;
}

/* ---- Counts and limits ---- */

static json_t *
h_ct_nconns(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { NULL };

    if (!only_members(p, known, r)) {
        return NULL;
    }
    return json_pack("{s:I}", "n", (json_int_t) fdp_dp_ct_count(s->dp));
}

static json_t *
h_ct_set_maxconns(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { "maxconns", NULL };
    uint64_t v;

    if (!only_members(p, known, r)) {
        return NULL;
    }
    int got = opt_uint(p, "maxconns", UINT32_MAX, &v, r);
    if (got < 0) {
        return NULL;
    }
    uint32_t capacity = fdp_dp_ct_get_capacity(s->dp);
    if (!got || !v || v > capacity) {
        op_fail(r, RPC_INVALID_PARAMS, "\"maxconns\": expected a number of "
                "connections from 1 to %" PRIu32 ", the tracker's capacity "
                "(flowdpd --ct-capacity)", capacity);
        return NULL;
    }
    fdp_dp_ct_set_maxconns(s->dp, (uint32_t) v);
    vlog(L_INFO, "ct-set-maxconns: %" PRIu64, v);
    return json_object();
}

static json_t *
h_ct_get_maxconns(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { NULL };

    if (!only_members(p, known, r)) {
        return NULL;
    }
    return json_pack("{s:I, s:I}",
                     "maxconns", (json_int_t) fdp_dp_ct_get_maxconns(s->dp),
                     "capacity", (json_int_t) fdp_dp_ct_get_capacity(s->dp));
}

/* Reads member 'key' of 'p', an array of zones (or, with 'with_limit', of
 * {zone, limit} objects), checking every element before anything is
 * applied.  Returns the array's length, or -1 with 'r' set. */
static long
zone_list(const json_t *p, const char *key, bool with_limit,
          uint16_t *zones, uint32_t *limits, size_t max, struct op_result *r)
{
    const json_t *a = json_object_get(p, key);

    if (!a) {
        return 0;
    }
    if (!json_is_array(a) || json_array_size(a) > max) {
        op_fail(r, RPC_INVALID_PARAMS, "\"%s\": expected an array of at "
                "most %zu %s", key, max, with_limit ? "{zone, limit}"
                                                    : "zones");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *e = json_array_get(a, i);
        const json_t *z = with_limit ? json_object_get(e, "zone") : e;
        const json_t *l = with_limit ? json_object_get(e, "limit") : NULL;
        if (!json_is_integer(z) || json_integer_value(z) < 0
            || json_integer_value(z) > UINT16_MAX) {
            op_fail(r, RPC_INVALID_PARAMS, "\"%s\"[%zu]: expected a zone "
                    "from 0 to 65535", key, i);
            return -1;
        }
        zones[i] = (uint16_t) json_integer_value(z);
        if (with_limit) {
            if (!json_is_integer(l) || json_integer_value(l) < 0
                || json_integer_value(l) > UINT32_MAX
                || json_object_size(e) != 2) {
                op_fail(r, RPC_INVALID_PARAMS, "\"%s\"[%zu]: expected "
                        "{\"zone\": 0..65535, \"limit\": 0..4294967295}",
                        key, i);
                return -1;
            }
            limits[i] = (uint32_t) json_integer_value(l);
        }
    }
    return (long) json_array_size(a);
}

/* At most this many zones in one request (all of them). */
#define MAX_ZONE_LIST 65536

static json_t *
h_ct_set_limits(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { "default", "zones", NULL };
    uint16_t *zones = malloc(MAX_ZONE_LIST * sizeof *zones);
    uint32_t *limits = malloc(MAX_ZONE_LIST * sizeof *limits);
    json_t *result = NULL;
    uint64_t def;
    int has_def;
    long n;

    if (!zones || !limits) {
        op_fail(r, RPC_FAILED, "out of memory");
    } else if (only_members(p, known, r)
               && (has_def = opt_uint(p, "default", UINT32_MAX, &def, r)) >= 0
               && (n = zone_list(p, "zones", true, zones, limits,
                                 MAX_ZONE_LIST, r)) >= 0) {
        if (!has_def && !n) {
            op_fail(r, RPC_INVALID_PARAMS, "expected \"default\" or "
                    "\"zones\"");
        } else {
            if (has_def) {
                fdp_dp_ct_set_default_limit(s->dp, (uint32_t) def);
            }
            for (long i = 0; i < n; i++) {
                fdp_dp_ct_set_zone_limit(s->dp, zones[i], limits[i]);
            }
            result = json_object();
        }
    }
    free(zones);
    free(limits);
    return result;
}

static json_t *
h_ct_del_limits(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { "zones", NULL };
    uint16_t *zones = malloc(MAX_ZONE_LIST * sizeof *zones);
    json_t *result = NULL;
    long n;

    if (!zones) {
        op_fail(r, RPC_FAILED, "out of memory");
    } else if (only_members(p, known, r)
               && (n = zone_list(p, "zones", false, zones, NULL,
                                 MAX_ZONE_LIST, r)) >= 0) {
        if (!n) {
            op_fail(r, RPC_INVALID_PARAMS, "\"zones\": expected at least "
                    "one zone");
        } else {
            for (long i = 0; i < n; i++) {
                fdp_dp_ct_set_zone_limit(s->dp, zones[i], 0);
            }
            result = json_object();
        }
    }
    free(zones);
    return result;
}

static json_t *
zone_limit_json(struct server *s, uint16_t zone, uint32_t def)
{
    uint32_t own = fdp_dp_ct_get_zone_limit(s->dp, zone);

    return json_pack("{s:i, s:I, s:I}", "zone", (int) zone,
                     "limit", (json_int_t) (own ? own : def),
                     "count", (json_int_t) fdp_dp_ct_zone_count(s->dp, zone));
}

static json_t *
h_ct_get_limits(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { "zones", NULL };
    uint16_t *zones = malloc(MAX_ZONE_LIST * sizeof *zones);
    json_t *list = json_array();
    json_t *result = NULL;
    long n;

    if (!zones || !list) {
        op_fail(r, RPC_FAILED, "out of memory");
    } else if (only_members(p, known, r)
               && (n = zone_list(p, "zones", false, zones, NULL,
                                 MAX_ZONE_LIST, r)) >= 0) {
        uint32_t def = fdp_dp_ct_get_default_limit(s->dp);
        if (n) {
            for (long i = 0; i < n; i++) {
                json_array_append_new(list, zone_limit_json(s, zones[i],
                                                            def));
            }
        } else {
            for (uint32_t z = 0; z <= UINT16_MAX; z++) {
                if (fdp_dp_ct_get_zone_limit(s->dp, (uint16_t) z)) {
                    json_array_append_new(list,
                                          zone_limit_json(s, (uint16_t) z,
                                                          def));
                }
            }
        }
        result = json_pack("{s:I, s:O}", "default", (json_int_t) def,
                           "zones", list);
    }
    json_decref(list);
    free(zones);
    return result;
}

/* ---- Timeout policies ---- */

static json_t *
h_ct_set_tp(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { "zone", "timeouts", NULL };
    uint32_t values[FDP_CT_N_TP_ATTRS];
    bool given[FDP_CT_N_TP_ATTRS] = { false };
    const json_t *t = json_object_get(p, "timeouts");
    uint16_t zone;
    int has_zone;
    const char *key;
    json_t *v;

    if (!only_members(p, known, r) || (has_zone = opt_zone(p, &zone, r)) < 0) {
        return NULL;
    }
    if (!json_is_object(t) || !json_object_size(t)) {
        op_fail(r, RPC_INVALID_PARAMS, "\"timeouts\": expected an object "
                "of NAME: SECONDS, e.g. {\"tcp_established\": 3600}");
        return NULL;
    }
    /* Every attribute is checked before any is set: all or nothing. */
    json_object_foreach((json_t *) t, key, v) {
        enum fdp_ct_tp_attr a = fdp_ct_tp_attr_from_name(key);
        if (a == FDP_CT_N_TP_ATTRS) {
            op_fail(r, RPC_INVALID_PARAMS, "\"timeouts\": %s: unknown "
                    "timeout (the userspace tracker has tcp_syn_sent, "
                    "tcp_syn_recv, tcp_established, tcp_fin_wait, "
                    "tcp_time_wait, tcp_close, udp_first, udp_single, "
                    "udp_multiple, icmp_first, icmp_reply)", key);
            return NULL;
        }
        if (!json_is_integer(v) || json_integer_value(v) < 1
            || json_integer_value(v) > 2147483) {
            op_fail(r, RPC_INVALID_PARAMS, "\"timeouts\": %s: expected "
                    "seconds from 1 to 2147483", key);
            return NULL;
        }
        values[a] = (uint32_t) json_integer_value(v);
        given[a] = true;
    }
    for (int a = 0; a < FDP_CT_N_TP_ATTRS; a++) {
        if (given[a]
            && fdp_dp_ct_set_timeout(s->dp, has_zone ? &zone : NULL,
                                     (enum fdp_ct_tp_attr) a, values[a])) {
            op_fail(r, RPC_FAILED, "setting %s: out of memory",
                    fdp_ct_tp_attr_name((enum fdp_ct_tp_attr) a));
            return NULL;
        }
    }
    return json_object();
}

static json_t *
h_ct_del_tp(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { "zone", NULL };
    uint16_t zone;
    int has_zone;

    if (!only_members(p, known, r) || (has_zone = opt_zone(p, &zone, r)) < 0) {
        return NULL;
    }
    if (!has_zone) {
        op_fail(r, RPC_INVALID_PARAMS, "\"zone\": expected a zone from 0 "
                "to 65535 (the global timeouts cannot be deleted)");
        return NULL;
    }
    for (int a = 0; a < FDP_CT_N_TP_ATTRS; a++) {
        fdp_dp_ct_set_timeout(s->dp, &zone, (enum fdp_ct_tp_attr) a, 0);
    }
    return json_object();
}

static json_t *
h_ct_get_tp(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { "zone", NULL };
    uint16_t zone;
    int has_zone;

    if (!only_members(p, known, r) || (has_zone = opt_zone(p, &zone, r)) < 0) {
        return NULL;
    }
    json_t *t = json_object();
    json_t *own = json_array();
    if (!t || !own) {
        json_decref(t);
        json_decref(own);
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    for (int a = 0; a < FDP_CT_N_TP_ATTRS; a++) {
        bool is_own;
        uint32_t v = fdp_dp_ct_get_timeout(s->dp, has_zone ? &zone : NULL,
                                           (enum fdp_ct_tp_attr) a, &is_own);
        const char *name = fdp_ct_tp_attr_name((enum fdp_ct_tp_attr) a);
        json_object_set_new(t, name, json_integer((json_int_t) v));
        if (is_own) {
            json_array_append_new(own, json_string(name));
        }
    }
    return json_pack("{s:o, s:o}", "timeouts", t, "own", own);
}

/* ---- TCP sequence checking ---- */

static json_t *
h_ct_set_seq_chk(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { "enabled", NULL };
    const json_t *v = json_object_get(p, "enabled");

    if (!only_members(p, known, r)) {
        return NULL;
    }
    if (!json_is_boolean(v)) {
        op_fail(r, RPC_INVALID_PARAMS, "\"enabled\": expected true or "
                "false");
        return NULL;
    }
    fdp_dp_ct_set_tcp_seq_chk(s->dp, json_is_true(v));
    return json_object();
}

static json_t *
h_ct_get_seq_chk(struct server *s, const json_t *p, struct op_result *r)
{
    static const char *const known[] = { NULL };

    if (!only_members(p, known, r)) {
        return NULL;
    }
    return json_pack("{s:b}", "enabled", fdp_dp_ct_get_tcp_seq_chk(s->dp));
}

const struct ct_method ct_methods[] = {
    { "dump-conntrack", NULL, h_ct_dump },
    { "flush-conntrack", h_ct_flush, NULL },
    { "ct-stats-show", h_ct_stats, NULL },
    { "ct-get-nconns", h_ct_nconns, NULL },
    { "ct-set-maxconns", h_ct_set_maxconns, NULL },
    { "ct-get-maxconns", h_ct_get_maxconns, NULL },
    { "ct-set-limits", h_ct_set_limits, NULL },
    { "ct-del-limits", h_ct_del_limits, NULL },
    { "ct-get-limits", h_ct_get_limits, NULL },
    { "ct-set-timeout-policy", h_ct_set_tp, NULL },
    { "ct-del-timeout-policy", h_ct_del_tp, NULL },
    { "ct-get-timeout-policy", h_ct_get_tp, NULL },
    { "ct-set-tcp-seq-chk", h_ct_set_seq_chk, NULL },
    { "ct-get-tcp-seq-chk", h_ct_get_seq_chk, NULL },
    { NULL, NULL, NULL },
};
