/*
 * flowdpd's JSON-RPC methods (utilities/rpc.h): the dispatch table and
 * the methods with small replies; dump-flows and dump-tables, whose
 * replies are large, are in flowdpd-dump.c.
 *
 * Tables, as ovs-ofctl: an added flow goes to the table its text names
 * (0 if none); mod-flows, del-flows and dump-flows act on the table their
 * text names, or on every table if it names none; replace-flows compares
 * flows by table, match and priority.
 *
 * Methods (params -> result):
 *   add-flows    {flows:[TEXT]}                     -> {n}
 *   mod-flows    {flow:TEXT, strict:BOOL}            -> {n}
 *   del-flows    {match:TEXT?, strict:BOOL}          -> {n}
 *   replace-flows {flows:[TEXT]}                    -> {added, removed}
 *   dump-flows   {match:TEXT?, strict:BOOL, parts:BOOL, text:BOOL,
 *                no_stats:BOOL} -> {flows:[{...}]} or, with text,
 *                {text:"LINE\nLINE\n...", n:N}
 *                (with parts, flows also come before the reply in
 *                "dump-flows.part" notifications: see flowdpd-dump.c)
 *   dump-tables  {partitions:BOOL?}  -> {tables:[{table, ...counters,
 *                                      subtables:[...]}], limit_drops}
 *                (table 0 and every other table in use, in order: its
 *                counters (lookups, matched, missed count packets), then
 *                one object per sub-table in lookup walk
 *                order: kind "tss", "pipapo" or "overflow", flows,
 *                max_priority, hits, memory; tss adds mask (field names,
 *                "/0xMASK" when partial) and keyed; pipapo and overflow
 *                add fields:[NAME] (lookup order), group_bits:[4|8]
 *                and const_fields:[NAME] (matched alike by every flow))
 *   show         {}                                  -> {ports:[...], ...}
 *   add-port     {port:N, spec:TEXT, vlan?:[TEXT]}   -> {}
 *                (vlan: the port's VLAN settings, as set-port's)
 *   del-port     {port:N}                            -> {}
 *   trace        {packet:TEXT, ct_next?:[N...]}      -> {steps:[...],
 *                                                        actions, ...}
 *                (the lookups table by table: see pipeline-tool.h)
 *   vlog/reopen  {}                                  -> {}
 *                (opens --log-file again by its name, for logrotate;
 *                SIGHUP does the same)
 *   dump-conntrack, flush-conntrack, ct-*: the connection tracker's, in
 *                flowdpd-ct.c (ct_methods[]).
 *   ipf-*        fragment reassembly: see flowdpd-ipf.c
 *   add-meter, mod-meter, del-meters, dump-meters, meter-stats,
 *   meter-features: OpenFlow meters, in flowdpd-meters.c
 *   fdb/show, fdb/flush, fdb/stats, fdb/set, fdb/warp, set-port:
 *                NORMAL's learning switch: see flowdpd-normal.c
 *   addr/..., route/..., neigh/..., underlay/stats: the underlay (addresses,
 *                routes, neighbours): see flowdpd-underlay.c
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "utilities/flowdpd.h"
#include "utilities/pipeline-tool.h"
#include "utilities/rpc.h"

/* A method: its result (queued by the caller), or NULL with 'r' set. */
typedef json_t *handler_fn(struct server *, const json_t *params,
                           struct op_result *);

/* add-flows, mod-flows, del-flows, replace-flows: params are the op. */
static json_t *
change_flows(struct server *s, const json_t *params, const char *kind,
             struct op_result *r)
{
    /* A shallow copy: "op" is added to the copy, and the flows (which may
     * be hundreds of thousands of strings) are shared, not duplicated. */
    json_t *op = json_is_object(params) ? json_copy((json_t *) params)
                                        : NULL;

    if (!op) {
        json_decref(op);
        op_fail(r, RPC_INVALID_PARAMS, "params: expected an object");
        return NULL;
    }
    json_object_set_new(op, "op", json_string(kind));
    int error = apply_op(s, op, r);
    json_decref(op);
    if (r->n + r->n_removed >= TRIM_MIN_FLOWS) {
        s->trim_pending = true;
    }
    if (error) {
        return NULL;
    }
    return !strcmp(kind, "replace")
           ? json_pack("{s:I, s:I}", "added", (json_int_t) r->n, "removed",
                       (json_int_t) r->n_removed)
           : json_pack("{s:I}", "n", (json_int_t) r->n);
}

static json_t *
h_add(struct server *s, const json_t *p, struct op_result *r)
{
    return change_flows(s, p, "add", r);
}

static json_t *
h_mod(struct server *s, const json_t *p, struct op_result *r)
{
    return change_flows(s, p, "mod", r);
}

static json_t *
h_del(struct server *s, const json_t *p, struct op_result *r)
{
    return change_flows(s, p, "del", r);
}

static json_t *
h_replace(struct server *s, const json_t *p, struct op_result *r)
{
    return change_flows(s, p, "replace", r);
}

static json_t *
h_show(struct server *s, const json_t *p, struct op_result *r)
{
    uint32_t nos[MAX_PORTS];
    size_t n = fdp_dp_port_list(s->dp, nos, MAX_PORTS);
    json_t *ports = json_array();
    struct fdp_dp_stats ds;

    (void) p;
    (void) r;
    for (size_t i = 0; i < n && i < MAX_PORTS; i++) {
        struct fdp_port_stats ps;
        const char *spec = "";
        char error[256], what[256];
        if (fdp_dp_port_get_stats(s->dp, nos[i], &ps, &spec)) {
            continue;           /* Removed meanwhile. */
        }
        fdp_dp_port_get_error(s->dp, nos[i], error, sizeof error);
        /* What the back end set up and did (an afxdp port's XDP program;
         * the offloads a live port finished). */
        fdp_dp_port_describe(s->dp, nos[i], what, sizeof what);
        json_array_append_new(ports, json_pack(
            "{s:i, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
            "port", (int) nos[i], "spec", spec, "error", error,
            "describe", what,
            "rx_packets", (json_int_t) ps.rx_packets,
            "rx_bytes", (json_int_t) ps.rx_bytes,
            "rx_dropped", (json_int_t) ps.rx_dropped,
            "rx_errors", (json_int_t) ps.rx_errors,
            "tx_packets", (json_int_t) ps.tx_packets,
            "tx_bytes", (json_int_t) ps.tx_bytes,
            "tx_dropped", (json_int_t) ps.tx_dropped));
    }
    fdp_dp_get_stats(s->dp, &ds);
    return json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
                     "s:b, s:I}",
                     "ports", ports,
                     "pmds", (json_int_t) s->n_pmds,
                     "packets", (json_int_t) ds.n_packets,
                     "emc_hits", (json_int_t) ds.n_emc_hits,
                     "emc_bypassed", (json_int_t) ds.n_emc_bypassed,
                     "smc_hits", (json_int_t) ds.n_smc_hits,
                     "table_hits", (json_int_t) ds.n_table_hits,
                     "missed", (json_int_t) ds.n_missed,
                     "ttl_expired", (json_int_t) ds.n_ttl_expired,
                     "frames_free", (json_int_t) ds.n_frames_free,
                     "durable", s->journal != NULL,
                     "limit_drops",
                     (json_int_t) fdp_pipeline_n_limit_drops(s->pipeline));
}

static int
port_param(const json_t *p, struct op_result *r, uint32_t *port)
{
    const json_t *v = json_object_get(p, "port");

    if (!json_is_integer(v) || json_integer_value(v) < 1
        || json_integer_value(v) > 0xfeff) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"port\": expected a port "
                       "number from 1 to 65279");
    }
    *port = (uint32_t) json_integer_value(v);
    return 0;
}

/* Logs a new port with what its back end set up (an afxdp port's XDP
 * program and mode). */
void
log_port_added(struct fdp_dp *dp, uint32_t port, const char *spec)
{
    char what[160];

    fdp_dp_port_describe(dp, port, what, sizeof what);
    vlog(L_INFO, "port %" PRIu32 " added: %s%s%s%s", port, spec,
         what[0] ? " (" : "", what, what[0] ? ")" : "");
}

static json_t *
h_add_port(struct server *s, const json_t *p, struct op_result *r)
{
    const char *spec = json_string_value(json_object_get(p, "spec"));
    uint32_t port;
    char *msg = NULL;

    if (port_param(p, r, &port)) {
        return NULL;
    }
    if (!spec) {
        op_fail(r, RPC_INVALID_PARAMS, "\"spec\": expected TYPE:ARGS");
        return NULL;
    }
    /* The VLAN settings are checked before the port exists, so that a
     * bad one adds nothing. */
    const json_t *vlan = json_object_get(p, "vlan");
    struct fdp_port_vlan cfg;
    fdp_port_vlan_init(&cfg);
    if (normal_vlan_params(vlan, &cfg, r)) {
        return NULL;
    }
    /* With settings, the port has them before its first packet. */
    int error = json_array_size(vlan)
                ? fdp_dp_port_add_vlan(s->dp, port, spec, &cfg, &msg)
                : fdp_dp_port_add(s->dp, port, spec, &msg);
    if (error) {
        op_fail(r, RPC_FAILED, "%s", msg ? msg : strerror(error));
        free(msg);
        return NULL;
    }
    log_port_added(s->dp, port, spec);
    groups_port_live(s, port, true);
    of_port_status(s, port, true);
    return json_object();
}

static json_t *
h_del_port(struct server *s, const json_t *p, struct op_result *r)
{
    uint32_t port;

    if (port_param(p, r, &port)) {
        return NULL;
    }
    if (fdp_dp_port_del(s->dp, port)) {
        op_fail(r, RPC_FAILED, "port %" PRIu32 ": no such port", port);
        return NULL;
    }
    vlog(L_INFO, "port %" PRIu32 " removed", port);
    groups_port_live(s, port, false);
    of_port_status(s, port, false);
    return json_object();
}

static json_t *
h_trace(struct server *s, const json_t *p, struct op_result *r)
{
    const char *text = json_string_value(json_object_get(p, "packet"));
    struct fdp_key key;
    char *msg = NULL;

    if (!text) {
        op_fail(r, RPC_INVALID_PARAMS, "\"packet\": expected a string");
        return NULL;
    }
    int error = fdp_packet_parse(text, &key, &msg);
    if (error) {
        op_fail(r, RPC_INVALID_PARAMS, "packet: %s",
                msg ? msg : strerror(error));
        free(msg);
        return NULL;
    }
    /* "ct_next": the ct_state of each ct(table=N) continuation in turn,
     * as numbers (flowdp-ctl trace --ct-next); optional. */
    const json_t *states = json_object_get(p, "ct_next");
    uint8_t ct_next[64];
    size_t n_ct_next = json_array_size(states);
    if (states && (!json_is_array(states)
                   || n_ct_next > (sizeof ct_next / sizeof ct_next[0]))) {
        op_fail(r, RPC_INVALID_PARAMS, "\"ct_next\": expected an array of "
                "at most %zu ct_state values", (sizeof ct_next / sizeof ct_next[0]));
        free(msg);
        return NULL;
    }
    for (size_t i = 0; i < n_ct_next; i++) {
        const json_t *v = json_array_get(states, i);
        json_int_t state = json_integer_value(v);
        if (!json_is_integer(v) || state < 0 || state > 0xff
            || (state && !(state & FDP_CT_TRK))) {
            op_fail(r, RPC_INVALID_PARAMS, "\"ct_next\"[%zu]: expected a "
                    "ct_state (0..255, with trk if nonzero)", i);
            free(msg);
            return NULL;
        }
        ct_next[i] = (uint8_t) state;
    }
    fdp_table_read_lock();
    json_t *result = trace_json(s->pipeline, &key, ct_next, n_ct_next);
    fdp_table_read_unlock();
    if (result) {
        normal_trace(s, &key, result);
        tunnel_trace(s, &key, result);
    }
    if (!result) {
        op_fail(r, RPC_FAILED, "out of memory");
    }
    return result;
}

/* vlog/reopen: as Open vSwitch's "ovs-appctl vlog/reopen". */
static json_t *
h_vlog_reopen(struct server *s, const json_t *p, struct op_result *r)
{
    (void) s;
    (void) p;
    int error = log_reopen();
    if (error) {
        op_fail(r, RPC_FAILED, "reopening the log: %s", strerror(error));
        return NULL;
    }
    return json_object();
}

/* A handler that queues its reply itself (a large one, written as text);
 * false if it queued nothing and 'r' says why. */
typedef bool replier_fn(struct server *, struct rpc_conn *,
                        const json_t *request, const json_t *params,
                        struct op_result *);

static const struct {
    const char *method;
    handler_fn *fn;
    replier_fn *reply;
} handlers[] = {
    { "add-flows", h_add, NULL },
    { "mod-flows", h_mod, NULL },
    { "del-flows", h_del, NULL },
    { "replace-flows", h_replace, NULL },
    { "dump-flows", NULL, h_dump },
    { "dump-tables", h_tables, NULL },
    { "show", h_show, NULL },
    { "add-port", h_add_port, NULL },
    { "del-port", h_del_port, NULL },
    { "trace", h_trace, NULL },
    { "vlog/reopen", h_vlog_reopen, NULL },
    /* Groups (flowdpd-groups.c). */
    { "add-groups", h_add_groups, NULL },
    { "del-groups", h_del_groups, NULL },
    { "dump-groups", h_dump_groups, NULL },
    { "mod-port", h_mod_port, NULL },
    /* Fragment reassembly (flowdpd-ipf.c). */
    { "ipf-set-enabled", h_ipf_set_enabled, NULL },
    { "ipf-set-min-frag", h_ipf_set_min_frag, NULL },
    { "ipf-set-max-nfrags", h_ipf_set_max_nfrags, NULL },
    { "ipf-get-status", h_ipf_get_status, NULL },
    /* Meters (flowdpd-meters.c). */
    { "add-meter", h_add_meter, NULL },
    { "mod-meter", h_mod_meter, NULL },
    { "del-meters", h_del_meters, NULL },
    { "dump-meters", h_dump_meters, NULL },
    { "meter-stats", h_meter_stats, NULL },
    { "meter-features", h_meter_features, NULL },
    /* The TLV map (flowdpd-tlv.c). */
    { "add-tlv-map", h_add_tlv_map, NULL },
    { "del-tlv-map", h_del_tlv_map, NULL },
    { "dump-tlv-map", h_dump_tlv_map, NULL },
    /* NORMAL's learning switch (flowdpd-normal.c). */
    { "fdb/show", h_fdb_show, NULL },
    { "fdb/flush", h_fdb_flush, NULL },
    { "fdb/stats", h_fdb_stats, NULL },
    { "fdb/set", h_fdb_set, NULL },
    { "fdb/warp", h_fdb_warp, NULL },
    { "set-port", h_set_port, NULL },
    /* The underlay (flowdpd-underlay.c). */
    { "addr/add", h_addr_add, NULL },
    { "addr/del", h_addr_del, NULL },
    { "addr/show", h_addr_show, NULL },
    { "route/add", h_route_add, NULL },
    { "route/del", h_route_del, NULL },
    { "route/show", h_route_show, NULL },
    { "route/lookup", h_route_lookup, NULL },
    { "route/resolve", h_route_resolve, NULL },
    { "neigh/set", h_neigh_set, NULL },
    { "neigh/del", h_neigh_del, NULL },
    { "neigh/show", h_neigh_show, NULL },
    { "neigh/flush", h_neigh_flush, NULL },
    { "neigh/config", h_neigh_config, NULL },
    { "underlay/stats", h_underlay_stats, NULL },
    /* The OpenFlow channel (flowdpd-ofconn.c). */
    { "set-controller", h_set_controller, NULL },
    { "del-controller", h_del_controller, NULL },
    { "get-controller", h_get_controller, NULL },
    { "set-fail-mode", h_set_fail_mode, NULL },
};

void
handle_request(struct rpc_conn *c, json_t *req, void *s_)
{
    struct server *s = s_;
    const char *method = json_string_value(json_object_get(req, "method"));
    json_t *params = json_object_get(req, "params");

    if (params && !json_is_object(params)) {
        rpc_reply_error(c, req, RPC_INVALID_PARAMS,
                        "params: expected an object");
        return;
    }
    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++) {
        if (!strcmp(method, handlers[i].method)) {
            struct op_result r = { 0 };
            json_t *empty = params ? NULL : json_object();
            const json_t *pp = params ? params : empty;
            json_t *result = NULL;
            bool replied = false;
            if (handlers[i].reply) {
                replied = handlers[i].reply(s, c, req, pp, &r);
            } else {
                result = handlers[i].fn(s, pp, &r);
            }
            json_decref(empty);
            if (replied) {
                /* Queued by the handler. */
            } else if (result) {
                rpc_reply(c, req, result);
            } else {
                rpc_reply_error(c, req, r.code ? r.code : RPC_FAILED, "%s",
                                r.msg ? r.msg : "out of memory");
                vlog(L_DBG, "%s: %s: %s", rpc_conn_name(c), method,
                     r.msg ? r.msg : "failed");
            }
            free(r.msg);
            return;
        }
    }
    for (const struct ct_method *m = ct_methods; m->method; m++) {
        if (!strcmp(method, m->method)) {
            struct op_result r = { 0 };
            json_t *empty = params ? NULL : json_object();
            const json_t *pp = params ? params : empty;
            json_t *result = NULL;
            bool replied = (m->reply ? m->reply(s, c, req, pp, &r)
                            : (result = m->fn(s, pp, &r)) != NULL);
            json_decref(empty);
            if (replied && !result) {
                /* Queued by the method. */
            } else if (result) {
                rpc_reply(c, req, result);
            } else {
                rpc_reply_error(c, req, r.code ? r.code : RPC_FAILED, "%s",
                                r.msg ? r.msg : "out of memory");
                vlog(L_DBG, "%s: %s: %s", rpc_conn_name(c), method,
                     r.msg ? r.msg : "failed");
            }
            free(r.msg);
            return;
        }
    }
    rpc_reply_error(c, req, RPC_METHOD_NOT_FOUND, "unknown method \"%s\"",
                    method);
}
