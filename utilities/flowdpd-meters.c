/*
 * flowdpd's meters: the JSON-RPC methods of ovs-ofctl's meter commands,
 * their journalled operations, and what meters mean to flows.
 *
 * Methods (params -> result; METER is the text ovs-ofctl takes,
 * flowdp/meter.h):
 *   add-meter       {meter:METER}    -> {}
 *   mod-meter       {meter:METER}    -> {}
 *   del-meters      {meter:METER?}   -> {n}    (no meter, or meter=all:
 *                                               every meter)
 *   dump-meters     {meter:METER?}   -> {text} (ovs-ofctl's reply body)
 *   meter-stats     {meter:METER?}   -> {text}
 *   meter-features  {}               -> {text}
 *
 * Changes are operations like the flows' (flowdpd-flows.c): "meter-add",
 * "meter-mod" and "meter-del", each {op, meter:TEXT}, checked and applied
 * to the pipeline's transaction, journalled, committed, and only then
 * made in the datapath (meter_commit()), so that a meter the journal
 * could not keep is not made either.  The journal's snapshot holds the
 * meters beside the flows ("meters" in its "add", restored first).
 *
 * Meters and flows, as Open vSwitch's ofproto: a flow may name only a
 * meter that exists (add-flow with meter:N refused otherwise, as Open
 * vSwitch refuses it with OFPMMFC_INVALID_METER); deleting a meter
 * deletes the flows that use it, in the same transaction; modifying one
 * keeps them.  meter-stats counts the flows that use each meter
 * (flow_count).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/actions-internal.h"
#include "lib/ds.h"
#include "utilities/flowdpd.h"
#include "utilities/rpc.h"

/* The meter named by the operation's or the params' "meter" text, parsed
 * for 'cmd'; a missing text is every meter (del-meters, dump-meters,
 * meter-stats). */
static int
parse_meter_param(const json_t *params, enum fdp_meter_command cmd,
                  struct fdp_meter_config *c, struct op_result *r)
{
    const json_t *m = json_object_get(params, "meter");
    const char *text = json_is_string(m) ? json_string_value(m) : NULL;
    char *msg = NULL;

    if (m && !text) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"meter\": expected a "
                       "string");
    }
    if (!text && (cmd == FDP_METER_CMD_ADD || cmd == FDP_METER_CMD_MOD)) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"meter\": missing");
    }
    int error = fdp_meter_parse(text ? text : "", cmd, c, &msg);
    if (error) {
        op_fail(r, RPC_INVALID_PARAMS, "%s", msg ? msg : strerror(error));
        free(msg);
    }
    return error;
}

/* ---------------------------------------------------------------------- */
/* Flows that use meters.                                                  */

/* The meter of 'acts' (a meter is at most once in a flow, first), or 0. */
static uint32_t
actions_meter(const struct fdp_actions *acts)
{
    const struct fdp__action *a = fdp__actions_first(acts);

    return a && a->type == FDP_ACT_METER ? a->arg : 0;
}

int
meters_check_flow(struct server *s, const struct fdp_flow_spec *spec,
                  struct op_result *r, size_t i)
{
    uint32_t id = actions_meter(spec->actions);

    if (id && fdp_dp_meter_get(s->dp, id, NULL, NULL)) {
        return op_fail(r, RPC_FAILED, "flows[%zu]: meter:%" PRIu32 ": no "
                       "such meter (OFPMMFC_INVALID_METER)", i, id);
    }
    return 0;
}

/* What a walk over the flows gathers. */
struct meter_walk {
    uint32_t id;                /* The meter deleted, or FDP_METER_ALL. */
    char **texts;               /* Flows that use it, as text. */
    size_t n, alloc;
    const uint32_t *ids;        /* Sorted meter ids, for counting... */
    uint32_t *counts;           /* ...the flows of each. */
    size_t n_ids;
    bool failed;
};

static bool
walk_flow(const struct fdp_rule *rule, void *w_)
{
    struct meter_walk *w = w_;
    struct fdp_flow_spec spec;

    get_spec(rule, &spec);
    uint32_t id = actions_meter(spec.actions);
    if (!id) {
        return true;
    }
    if (w->counts) {
        /* Binary search: ids are sorted. */
        size_t lo = 0, hi = w->n_ids;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (w->ids[mid] < id) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (lo < w->n_ids && w->ids[lo] == id) {
            w->counts[lo]++;
        }
        return true;
    }
    if (w->id != FDP_METER_ALL && id != w->id) {
        return true;
    }
    if (w->n == w->alloc) {
        size_t alloc = w->alloc ? 2 * w->alloc : 16;
        char **p = realloc(w->texts, alloc * sizeof *p);
        if (!p) {
            w->failed = true;
            return false;
        }
        w->texts = p;
        w->alloc = alloc;
    }
    w->texts[w->n] = fdp_flow_format(&spec);
    w->failed |= !w->texts[w->n++];
    return !w->failed;
}

/* Removes the flows that use meter 'id' (every meter: FDP_METER_ALL), in
 * the transaction under way, as Open vSwitch does when a meter goes. */
static int
delete_meter_flows(struct server *s, uint32_t id, struct op_result *r)
{
    struct meter_walk w = { .id = id };
    int error = 0;

    fdp_table_read_lock();
    fdp_pipeline_for_each(s->pipeline, FDP_TABLE_ALL, walk_flow, &w);
    fdp_table_read_unlock();
    if (w.failed) {
        error = op_fail(r, RPC_FAILED, "out of memory");
    }
    for (size_t i = 0; i < w.n; i++) {
        struct fdp_flow_spec spec;
        char *msg = NULL;
        size_t n;
        if (!error && w.texts[i]
            && !fdp_flow_parse(w.texts[i], 0, &spec, &msg)) {
            struct fdp_table_filter filter = {
                .match = spec.match, .strict = true,
                .priority = spec.priority,
            };
            error = fdp_pipeline_remove(s->pipeline, spec.table_id, &filter,
                                        &n);
            fdp_flow_spec_destroy(&spec);
            if (error) {
                op_fail(r, RPC_FAILED, "%s", strerror(error));
            }
        } else if (!error) {
            error = op_fail(r, RPC_FAILED, "a flow of meter %" PRIu32 " did "
                            "not parse back: %s", id, msg ? msg : "?");
        }
        free(msg);
        free(w.texts[i]);
    }
    free(w.texts);
    return error;
}

/* ---------------------------------------------------------------------- */
/* Operations.                                                             */

int
op_meter_add(struct server *s, const json_t *op, struct op_result *r)
{
    struct fdp_meter_config c;
    int error = parse_meter_param(op, FDP_METER_CMD_ADD, &c, r);

    if (error) {
        return error;
    }
    if (!fdp_dp_meter_get(s->dp, c.id, NULL, NULL)) {
        return op_fail(r, RPC_FAILED, "meter %" PRIu32 " exists "
                       "(OFPMMFC_METER_EXISTS)", c.id);
    }
    if (fdp_dp_meter_list(s->dp, NULL, 0) >= FDP_METER_MAX_METERS) {
        return op_fail(r, RPC_FAILED, "%d meters exist already, the most "
                       "there may be (OFPMMFC_OUT_OF_METERS)",
                       FDP_METER_MAX_METERS);
    }
    return 0;
}

int
op_meter_mod(struct server *s, const json_t *op, struct op_result *r)
{
    struct fdp_meter_config c;
    int error = parse_meter_param(op, FDP_METER_CMD_MOD, &c, r);

    if (!error && fdp_dp_meter_get(s->dp, c.id, NULL, NULL)) {
        return op_fail(r, RPC_FAILED, "meter %" PRIu32 ": no such meter "
                       "(OFPMMFC_UNKNOWN_METER)", c.id);
    }
    return error;
}

int
op_meter_del(struct server *s, const json_t *op, struct op_result *r)
{
    struct fdp_meter_config c;
    int error = parse_meter_param(op, FDP_METER_CMD_DEL, &c, r);

    /* Deleting a meter that does not exist is no error (OpenFlow). */
    if (!error && (c.id == FDP_METER_ALL
                   || !fdp_dp_meter_get(s->dp, c.id, NULL, NULL))) {
        error = delete_meter_flows(s, c.id, r);
    }
    return error;
}

void
meter_commit(struct server *s, const json_t *op)
{
    const char *kind = json_string_value(json_object_get(op, "op"));
    struct fdp_meter_config c;
    struct op_result r = { 0 };
    bool add = !strcmp(kind, "meter-add");
    bool del = !strcmp(kind, "meter-del");
    enum fdp_meter_command cmd = add ? FDP_METER_CMD_ADD
                                 : del ? FDP_METER_CMD_DEL
                                 : FDP_METER_CMD_MOD;
    int error = parse_meter_param(op, cmd, &c, &r);

    if (error) {
        /* Checked by the operation before it was journalled. */
    } else if (!del) {
        error = fdp_dp_meter_set(s->dp, &c, add);
    } else if (c.id != FDP_METER_ALL) {
        fdp_dp_meter_del(s->dp, c.id);
    } else {
        size_t n = fdp_dp_meter_list(s->dp, NULL, 0);
        uint32_t *ids = malloc((n + 1) * sizeof *ids);
        n = ids ? fdp_dp_meter_list(s->dp, ids, n) : 0;
        for (size_t i = 0; i < n; i++) {
            fdp_dp_meter_del(s->dp, ids[i]);
        }
        free(ids);
    }
    if (error) {
        vlog(L_ERR, "%s: journalled but not made: %s", kind,
             r.msg ? r.msg : strerror(error));
    }
    free(r.msg);
}

json_t *
meters_snapshot(struct server *s)
{
    size_t n = fdp_dp_meter_list(s->dp, NULL, 0);
    uint32_t *ids = malloc((n + 1) * sizeof *ids);
    json_t *meters = json_array();

    n = ids ? fdp_dp_meter_list(s->dp, ids, n) : 0;
    for (size_t i = 0; ids && meters && i < n; i++) {
        struct fdp_meter_config c;
        if (fdp_dp_meter_get(s->dp, ids[i], &c, NULL)) {
            continue;
        }
        /* The printed form parses back to the same meter once its new
         * lines are separators. */
        char *text = fdp_meter_format_config(&c);
        for (char *p = text; p && *p; p++) {
            *p = *p == '\n' ? ' ' : *p;
        }
        if (!text || json_array_append_new(meters, json_string(text))) {
            json_decref(meters);
            meters = NULL;
        }
        free(text);
    }
    free(ids);
    if (!ids) {
        json_decref(meters);
        return NULL;
    }
    return meters;
}

int
meters_restore(struct server *s, const json_t *meters, struct op_result *r)
{
    if (!meters) {
        return 0;
    }
    if (!json_is_array(meters) || !s->replaying) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"meters\": only a journal's "
                       "snapshot holds meters beside flows");
    }
    for (size_t i = 0; i < json_array_size(meters); i++) {
        const char *text = json_string_value(json_array_get(meters, i));
        struct fdp_meter_config c;
        char *msg = NULL;
        int error = text ? fdp_meter_parse(text, FDP_METER_CMD_ADD, &c, &msg)
                         : EINVAL;
        if (!error) {
            error = fdp_dp_meter_set(s->dp, &c, true);
        }
        if (error) {
            op_fail(r, RPC_FAILED, "meters[%zu]: %s", i,
                    msg ? msg : strerror(error));
            free(msg);
            return error;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Methods.                                                                */

/* Applies the operation 'kind' made of 'params'. */
static json_t *
change_meter(struct server *s, const json_t *params, const char *kind,
             struct op_result *r)
{
    const json_t *m = json_object_get(params, "meter");
    json_t *op = json_pack("{s:s}", "op", kind);

    if (!op) {
        return NULL;
    }
    if (m) {
        json_object_set(op, "meter", (json_t *) m);
    }
    int error = apply_op(s, op, r);
    json_decref(op);
    return error ? NULL : json_pack("{s:I}", "n", (json_int_t) r->n);
}

json_t *
h_add_meter(struct server *s, const json_t *params, struct op_result *r)
{
    return change_meter(s, params, "meter-add", r);
}

json_t *
h_mod_meter(struct server *s, const json_t *params, struct op_result *r)
{
    return change_meter(s, params, "meter-mod", r);
}

json_t *
h_del_meters(struct server *s, const json_t *params, struct op_result *r)
{
    return change_meter(s, params, "meter-del", r);
}

/* The ids a dump or stats request names: one, or every meter in order.
 * Returns how many, or -1 (with 'r' set) on failure; '*idsp' is the
 * caller's to free. */
static ssize_t
requested_ids(struct server *s, const json_t *params, uint32_t **idsp,
              struct op_result *r)
{
    struct fdp_meter_config c;

    *idsp = NULL;
    if (parse_meter_param(params, FDP_METER_CMD_DUMP, &c, r)) {
        return -1;
    }
    size_t n = c.id == FDP_METER_ALL ? fdp_dp_meter_list(s->dp, NULL, 0) : 1;
    uint32_t *ids = malloc((n + 1) * sizeof *ids);
    if (!ids) {
        op_fail(r, RPC_FAILED, "out of memory");
        return -1;
    }
    if (c.id == FDP_METER_ALL) {
        n = fdp_dp_meter_list(s->dp, ids, n);
    } else if (fdp_dp_meter_get(s->dp, c.id, NULL, NULL)) {
        free(ids);
        op_fail(r, RPC_FAILED, "meter %" PRIu32 ": no such meter "
                "(OFPMMFC_UNKNOWN_METER)", c.id);
        return -1;
    } else {
        ids[0] = c.id;
    }
    *idsp = ids;
    return (ssize_t) n;
}

/* Each meter's text after "\n", as ovs-ofctl prints a multipart reply's
 * parts; 'stats' for meter-stats. */
static json_t *
dump(struct server *s, const json_t *params, bool stats, struct op_result *r)
{
    uint32_t *ids;
    ssize_t n = requested_ids(s, params, &ids, r);
    struct fdp__ds ds = FDP__DS_INIT;
    uint32_t *counts = NULL;

    if (n < 0) {
        return NULL;
    }
    if (stats && n) {
        counts = calloc((size_t) n, sizeof *counts);
        struct meter_walk w = { .ids = ids, .counts = counts,
                                .n_ids = (size_t) n };
        if (counts) {
            fdp_table_read_lock();
            fdp_pipeline_for_each(s->pipeline, FDP_TABLE_ALL, walk_flow, &w);
            fdp_table_read_unlock();
        }
    }
    for (ssize_t i = 0; i < n; i++) {
        struct fdp_meter_config c;
        struct fdp_meter_stats st;
        char *text = NULL;
        if (fdp_dp_meter_get(s->dp, ids[i], &c, &st)) {
            continue;
        }
        st.flow_count = counts ? counts[i] : 0;
        text = stats ? fdp_meter_format_stats(&st)
                     : fdp_meter_format_config(&c);
        fdp__ds_putc(&ds, '\n');
        fdp__ds_put(&ds, text ? text : "");
        ds.failed |= !text;
        free(text);
    }
    free(counts);
    free(ids);
    char *text = fdp__ds_steal(&ds);
    json_t *result = json_pack("{s:s}", "text", text ? text : "");
    if (!text && n) {
        json_decref(result);
        op_fail(r, RPC_FAILED, "out of memory");
        result = NULL;
    }
    free(text);
    return result;
}

json_t *
h_dump_meters(struct server *s, const json_t *params, struct op_result *r)
{
    return dump(s, params, false, r);
}

json_t *
h_meter_stats(struct server *s, const json_t *params, struct op_result *r)
{
    return dump(s, params, true, r);
}

json_t *
h_meter_features(struct server *s, const json_t *params, struct op_result *r)
{
    char *text = fdp_meter_format_features();

    (void) s;
    (void) params;
    if (!text) {
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    json_t *result = json_pack("{s:s}", "text", text);
    free(text);
    return result;
}
