/*
 * flowdpd's flow operations: the only way flows change.
 *
 * Every change to the flows is one JSON "operation" (add, mod, del,
 * replace, expire).  A request is turned into an operation, applied to a
 * pipeline transaction, written to the journal and synced, and only then
 * committed and acknowledged.  Restarting replays the journal through the
 * same code, so the tables come back exactly: same flows in the same
 * tables, same order of insertion (which decides ties between equal
 * priorities).  Flows are journalled as their canonical text, which names
 * the table ("table=N") of a flow outside table 0; the journal's snapshot
 * (snapshot_op()) is every table as one "add".
 *
 * Idle and hard timeouts are checked once a second (expire_flows()) and
 * the flows they end are removed by an "expire" operation, journalled as
 * any other.
 *
 * OpenFlow's flow mods arrive decoded: apply_flow_changes() applies the
 * decoded flows (struct flow_change) to the transaction directly, and
 * writes them as text only for the journal, where they are the same
 * "add", "mod" and "del" operations flowdp-ctl's texts make (several
 * changes of kinds that differ, a bundle, are one "batch" operation of
 * them, applied all or none).  So a flow is the same flow, journalled the
 * same way, whichever way it arrived, and a bundle of 200,000 flows costs
 * no text at all without a journal.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utilities/flowdpd.h"
#include "lib/actions-internal.h"
#include "lib/learn.h"
#include "lib/match-internal.h"
#include "lib/ofp-msgs.h"
#include "utilities/flowdpd-openflow.h"
#include "utilities/journal.h"
#include "utilities/pipeline-tool.h"
#include "utilities/rpc.h"
#include "utilities/tool.h"

int
op_fail(struct op_result *r, int code, const char *format, ...)
{
    va_list args;

    va_start(args, format);
    if (vasprintf(&r->msg, format, args) < 0) {
        r->msg = NULL;
    }
    va_end(args);
    r->code = code;
    return EINVAL;
}

/* The operation's "flows", which must be an array; NULL with r set
 * if it is not. */
static const json_t *
flows_param(const json_t *op, struct op_result *r)
{
    const json_t *flows = json_object_get(op, "flows");

    if (!json_is_array(flows)) {
        op_fail(r, RPC_INVALID_PARAMS, "\"flows\": expected an array of "
                "flow strings");
        return NULL;
    }
    return flows;
}

/* Parses element 'i' of the string array 'flows'. */
static int
parse_nth(const json_t *flows, size_t i, unsigned int flags,
          struct fdp_flow_spec *spec, struct op_result *r)
{
    const char *text = json_string_value(json_array_get(flows, i));
    char *msg = NULL;

    if (!text) {
        return op_fail(r, RPC_INVALID_PARAMS, "flows[%zu]: not a string", i);
    }
    int error = fdp_flow_parse(text, flags, spec, &msg);
    if (error) {
        op_fail(r, RPC_INVALID_PARAMS, "flows[%zu]: %s", i,
                msg ? msg : strerror(error));
        free(msg);
        return error;
    }
    return 0;
}

/* Walks the action records from 'w' to 'end', nested ones (clone's)
 * included, until 'pred' says true. */
static bool
actions_any__(const uint64_t *w, const uint64_t *end,
              bool (*pred)(const struct fdp__action *, uint32_t arg),
              uint32_t arg)
{
    while (w < end) {
        const struct fdp__action *a = (const struct fdp__action *) w;
        if (!a->n_words) {
            return false;
        }
        if (pred(a, arg)
            || (a->type == FDP_ACT_CLONE
                && actions_any__(w + 1, w + a->n_words, pred, arg))) {
            return true;
        }
        w += a->n_words;
    }
    return false;
}

static bool
actions_any(const struct fdp_actions *acts,
            bool (*pred)(const struct fdp__action *, uint32_t arg),
            uint32_t arg)
{
    return acts && actions_any__(acts->words, acts->words + acts->n_words,
                                 pred, arg);
}

/* 'arg' is a flowdp (OpenFlow 1.0) port number. */
static bool
outputs_to(const struct fdp__action *a, uint32_t port)
{
    switch (a->type) {
    case FDP_ACT_OUTPUT:
        return a->arg == port;
    case FDP_ACT_IN_PORT:
        return port == FDP_PORT_IN_PORT;
    case FDP_ACT_CONTROLLER:
        return port == FDP_PORT_CONTROLLER;
    case FDP_ACT_RESERVED:
        return fdp__action_reserved_port(a) == port;
    default:
        return false;
    }
}

static bool
uses_group(const struct fdp__action *a, uint32_t group)
{
    return a->type == FDP_ACT_GROUP && a->arg == group;
}

bool
actions_output_to_port(const struct fdp_actions *acts, uint32_t port)
{
    /* A 1.1+ port with no 1.0 number becomes OFPP_NONE, which no action
     * outputs to. */
    return (port == FDP_OFPP_ANY
            || actions_any(acts, outputs_to, fdp_ofp_port_to_ofp10(port)));
}

bool
actions_output_to_group(const struct fdp_actions *acts, uint32_t group)
{
    return group == FDP_OFPG_ANY || actions_any(acts, uses_group, group);
}

static bool
may_expire(const struct fdp__action *a, uint32_t arg)
{
    (void) arg;
    return a->type == FDP_ACT_LEARN || a->type == FDP_ACT_FIN_TIMEOUT;
}

static bool
deletes_learned(const struct fdp__action *a, uint32_t arg)
{
    (void) arg;
    return (a->type == FDP_ACT_LEARN
            && (((const struct fdp__learn *) (a + 1))->flags
                & FDP__LEARN_DELETE_LEARNED));
}

/* Notes what a flow with 'spec''s timeouts and 'acts' asks of the periodic
 * work: expiry (expire_flows()) and the learned-cookie rule
 * (delete_learned()).  Once set, the flags stay set. */
static void
note_flow(struct server *s, const struct fdp_flow_spec *spec,
          const struct fdp_actions *acts)
{
    if (!s->flows_may_expire
        && ((spec && (spec->idle_timeout || spec->hard_timeout))
            || actions_any(acts, may_expire, 0))) {
        s->flows_may_expire = true;
    }
    if (!s->delete_learned_armed && actions_any(acts, deletes_learned, 0)) {
        s->delete_learned_armed = true;
    }
}

static int
insert_flow(struct server *s, const struct fdp_flow_spec *spec,
            struct op_result *r, size_t i)
{
    int error = meters_check_flow(s, spec, r, i);

    if (error) {
        r->why = OPW_BAD_METER;
        return error;
    }
    note_flow(s, spec, spec->actions);
    error = fdp_pipeline_insert(s->pipeline, spec, 0);

    if (error) {
        op_fail(r, RPC_FAILED, "flows[%zu]: %s", i,
                error == ENOTSUP ? "ranges need pipapo sub-tables"
                : error == ENOENT ? "group: names a group that "
                                    "does not exist"
                : error == EINVAL
                ? "an action needs what the match does not "
                  "guarantee, or goes to a table not after the "
                  "flow's own"
                : strerror(error));
        r->why = (error == ENOTSUP ? OPW_RANGES
                  : error == ENOENT ? OPW_BAD_GROUP
                  : error == EINVAL ? OPW_INCONSISTENT
                  : error == ENOMEM ? OPW_NOMEM : OPW_OTHER);
        return error;
    }
    return 0;
}

static int
op_add(struct server *s, const json_t *op, struct op_result *r)
{
    const json_t *flows = flows_param(op, r);

    if (!flows) {
        return EINVAL;
    }
    /* A snapshot's TLV map goes first: its flows' tun_metadataN are
     * parsed through it (flowdpd-tlv.c).  Then its meters: its flows may
     * use them; then its groups, which its flows name
     * (flowdpd-groups.c). */
    int terror = tlv_restore(s, json_object_get(op, "tlv"), r);
    if (terror) {
        return terror;
    }
    int merror = meters_restore(s, json_object_get(op, "meters"), r);
    if (!merror) {
        /* The underlay's addresses, routes and static neighbours
         * (flowdpd-underlay.c). */
        merror = underlay_restore(s, json_object_get(op, "underlay"), r);
    }
    if (!merror) {
        /* The controllers and fail mode set at run time
         * (flowdpd-ofconn.c). */
        merror = of_restore(s, json_object_get(op, "openflow"), r);
    }
    if (merror) {
        return merror;
    }
    if (json_object_get(op, "groups")) {
        int error = op_add_groups(s, op, r);
        if (error) {
            return error;
        }
        r->n = 0;
    }
    for (size_t i = 0; i < json_array_size(flows); i++) {
        struct fdp_flow_spec spec;
        int error = parse_nth(flows, i, 0, &spec, r);
        if (!error) {
            error = insert_flow(s, &spec, r, i);
            fdp_flow_spec_destroy(&spec);
        }
        if (error) {
            return error;
        }
        r->n++;
    }
    return 0;
}

/* A filter from "match" (or "flow") text with cookie/mask, and in
 * '*table' the table it names or FDP_TABLE_ALL (as ovs-ofctl: a mod-flows,
 * del-flows or dump-flows without "table=" acts on every table); 'spec'
 * keeps the parsed flow, which the caller destroys. */
int
parse_filter(const json_t *op, const char *key, unsigned int flags,
             struct fdp_flow_spec *spec, struct fdp_table_filter *filter,
             uint8_t *table, struct op_result *r)
{
    const json_t *text = json_object_get(op, key);
    const json_t *strict = json_object_get(op, "strict");
    char *msg = NULL;

    memset(spec, 0, sizeof *spec);
    memset(filter, 0, sizeof *filter);
    if (text && !json_is_null(text) && !json_is_string(text)) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"%s\": expected a string",
                       key);
    }
    if (strict && !json_is_boolean(strict)) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"strict\": expected true "
                       "or false");
    }
    int error = fdp_flow_parse(json_is_string(text) ? json_string_value(text)
                               : "", flags | FDP_PARSE_COOKIE_MASK, spec,
                               &msg);
    if (error) {
        op_fail(r, RPC_INVALID_PARAMS, "%s: %s", key,
                msg ? msg : strerror(error));
        free(msg);
        return error;
    }
    *table = json_is_string(text)
             ? flow_text_table(json_string_value(text), spec)
             : FDP_TABLE_ALL;
    filter->match = spec->match;
    filter->strict = json_is_true(strict);
    filter->priority = spec->priority;
    filter->cookie = spec->cookie;
    filter->cookie_mask = spec->cookie_mask;
    return 0;
}

/* fdp_pipeline_modify() with the error said in 'r'; adds the flows
 * changed to r->n. */
static int
modify_flows(struct server *s, uint8_t table,
             const struct fdp_table_filter *filter,
             const struct fdp_actions *actions, const uint64_t *new_cookie,
             struct op_result *r)
{
    size_t n = 0;

    note_flow(s, NULL, actions);
    int error = fdp_pipeline_modify(s->pipeline, table, filter, actions,
                                    new_cookie, &n);
    if (error == EINVAL) {
        op_fail(r, RPC_FAILED, "nothing changed: an action needs what "
                "the match of a flow selected does not guarantee, or "
                "goes to a table not after its own");
        r->why = OPW_INCONSISTENT;
    } else if (error == ENOENT) {
        op_fail(r, RPC_FAILED, "group: names a group that does not exist");
        r->why = OPW_BAD_GROUP;
    } else if (error) {
        op_fail(r, RPC_FAILED, "%s", strerror(error));
        r->why = error == ENOMEM ? OPW_NOMEM : OPW_OTHER;
    }
    r->n += n;
    return error;
}

/* The flows a delete with OpenFlow's out_port or out_group selects: the
 * filter's, of those that output to the port and the group. */
struct out_select {
    const struct fdp_table_filter *filter;
    const struct fdp_match *match;      /* The filter's, or a catch-all. */
    uint32_t out_port, out_group;
    struct fdp_flow_spec *specs;        /* Match copies; no actions. */
    size_t n, alloc;
    bool failed;
};

static bool
out_select_one(const struct fdp_rule *rule, void *os_)
{
    struct out_select *os = os_;
    const struct fdp_table_filter *f = os->filter;
    struct fdp_flow_spec spec;

    get_spec(rule, &spec);
    if ((spec.cookie & f->cookie_mask) != (f->cookie & f->cookie_mask)
        || (f->strict
            ? spec.priority != f->priority
              || !fdp_match_equal(os->match, spec.match)
            : !fdp_match_covers(os->match, spec.match))
        || !actions_output_to_port(spec.actions, os->out_port)
        || !actions_output_to_group(spec.actions, os->out_group)) {
        return true;
    }
    if (os->n == os->alloc) {
        size_t alloc = os->alloc ? 2 * os->alloc : 16;
        struct fdp_flow_spec *p = realloc(os->specs, alloc * sizeof *p);
        if (!p) {
            os->failed = true;
            return false;
        }
        os->specs = p;
        os->alloc = alloc;
    }
    struct fdp_flow_spec *copy = &os->specs[os->n];
    *copy = spec;
    copy->actions = NULL;
    copy->match = fdp_match_clone(spec.match);
    if (!copy->match) {
        os->failed = true;
        return false;
    }
    os->n++;
    return true;
}

/* fdp_pipeline_remove() of the flows 'filter' selects in 'table' (or
 * every table), restricted to those that output to OpenFlow port
 * 'out_port' and group 'out_group' (FDP_OFPP_ANY, FDP_OFPG_ANY: no
 * restriction), as Open vSwitch's delete selects; adds the flows removed
 * to r->n.  With a restriction the flows are found by a walk of the
 * tables as committed (so not a flow added earlier in the same
 * transaction) and removed one by one. */
static int
remove_flows(struct server *s, uint8_t table,
             const struct fdp_table_filter *filter, uint32_t out_port,
             uint32_t out_group, struct op_result *r)
{
    size_t n = 0;
    int error = 0;

    if (out_port == FDP_OFPP_ANY && out_group == FDP_OFPG_ANY) {
        error = fdp_pipeline_remove(s->pipeline, table, filter, &n);
    } else {
        struct fdp_match *any = filter->match ? NULL : fdp_match_create();
        struct out_select os = {
            .filter = filter, .match = filter->match ? filter->match : any,
            .out_port = out_port, .out_group = out_group,
        };
        if (os.match) {
            fdp_table_read_lock();
            fdp_pipeline_for_each(s->pipeline, table, out_select_one, &os);
            fdp_table_read_unlock();
        }
        error = os.failed || !os.match ? ENOMEM : 0;
        fdp_match_destroy(any);
        for (size_t i = 0; i < os.n; i++) {
            struct fdp_table_filter one = {
                .match = os.specs[i].match, .strict = true,
                .priority = os.specs[i].priority,
            };
            size_t k = 0;
            if (!error) {
                error = fdp_pipeline_remove(s->pipeline,
                                            os.specs[i].table_id, &one, &k);
                n += k;
            }
            fdp_match_destroy(os.specs[i].match);
        }
        free(os.specs);
    }
    if (error) {
        op_fail(r, RPC_FAILED, "%s", strerror(error));
        r->why = error == ENOMEM ? OPW_NOMEM : OPW_OTHER;
    }
    r->n += n;
    return error;
}

/* An optional OpenFlow port or group number member of 'op' ('*v' stays
 * as it is without one). */
static int
get_out_member(const json_t *op, const char *key, uint32_t *v,
               struct op_result *r)
{
    const json_t *j = json_object_get(op, key);

    if (!j) {
        return 0;
    }
    if (!json_is_integer(j) || json_integer_value(j) < 0
        || json_integer_value(j) > UINT32_MAX) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"%s\": expected an "
                       "OpenFlow number (0 to 4294967295)", key);
    }
    *v = (uint32_t) json_integer_value(j);
    return 0;
}

static int
op_mod(struct server *s, const json_t *op, struct op_result *r)
{
    struct fdp_flow_spec spec;
    struct fdp_table_filter filter;
    uint8_t table;
    int error = parse_filter(op, "flow", 0, &spec, &filter, &table, r);
    bool set_cookie = false;

    if (!error) {
        /* As ovs-ofctl mod-flows: "cookie=V/M" selects flows (the filter
         * has it); "cookie=V" without a mask selects nothing and sets the
         * cookie of the flows modified, "cookie=0" included. */
        set_cookie = spec.cookie_given && !spec.cookie_mask;
        if (set_cookie) {
            filter.cookie = 0;
        }
        error = meters_check_flow(s, &spec, r, 0);
        if (error) {
            r->why = OPW_BAD_METER;
        }
    }
    if (!error) {
        error = modify_flows(s, table, &filter, spec.actions,
                             set_cookie ? &spec.cookie : NULL, r);
    }
    fdp_flow_spec_destroy(&spec);
    return error;
}

static int
op_del(struct server *s, const json_t *op, struct op_result *r)
{
    struct fdp_flow_spec spec;
    struct fdp_table_filter filter;
    uint8_t table;
    /* A plain "cookie=V" selects nothing, so before it was refused
     * "del-flows cookie=0x11" deleted every flow: refused now, as
     * ovs-ofctl refuses it.  A journal written before may hold such a
     * delete, and replaying it does what was done then. */
    unsigned int flags = FDP_PARSE_MATCH_ONLY
                         | (s->replaying ? 0 : FDP_PARSE_COOKIE_SELECT);
    uint32_t out_port = FDP_OFPP_ANY, out_group = FDP_OFPG_ANY;
    int error = parse_filter(op, "match", flags, &spec, &filter, &table, r);

    /* OpenFlow's out_port and out_group selection (a delete from
     * apply_flow_changes() journals them). */
    if (!error) {
        error = get_out_member(op, "out_port", &out_port, r);
    }
    if (!error) {
        error = get_out_member(op, "out_group", &out_group, r);
    }
    if (!error) {
        error = remove_flows(s, table, &filter, out_port, out_group, r);
    }
    fdp_flow_spec_destroy(&spec);
    return error;
}

/* Strict deletes of each flow of 'flows' (match texts with priority and,
 * since the pipeline, "table=N"; a text without one, from a journal
 * written before, names a flow of table 0, the only table then). */
static int
op_expire(struct server *s, const json_t *op, struct op_result *r)
{
    const json_t *flows = flows_param(op, r);

    if (!flows) {
        return EINVAL;
    }
    for (size_t i = 0; i < json_array_size(flows); i++) {
        struct fdp_flow_spec spec;
        size_t n;
        int error = parse_nth(flows, i, FDP_PARSE_MATCH_ONLY, &spec, r);
        if (error) {
            return error;
        }
        struct fdp_table_filter filter = {
            .match = spec.match, .strict = true, .priority = spec.priority,
        };
        error = fdp_pipeline_remove(s->pipeline, spec.table_id, &filter, &n);
        fdp_flow_spec_destroy(&spec);
        if (error) {
            return op_fail(r, RPC_FAILED, "%s", strerror(error));
        }
        r->n += n;
    }
    return 0;
}

/* fdp_rule_get_spec() into match storage of the calling thread's, reused
 * from one call to the next: 'spec->match' is valid until the thread's
 * next call, 'spec->actions' while the read lock is held. */
void
get_spec(const struct fdp_rule *rule, struct fdp_flow_spec *spec)
{
    static _Thread_local struct fdp_match *match;

    if (!match && !(match = fdp_match_create())) {
        fatal("out of memory");
    }
    fdp_rule_get_spec(rule, spec, match);
}

/* The flows of every table, for replace: copies (the list owns each spec's
 * match and actions), because the comparisons and removals run after the
 * read-side section that collected them. */
struct flow_list {
    struct fdp_flow_spec *specs;
    size_t n, alloc;
    bool failed;                /* Out of memory: the list is short. */
};

static bool
collect_spec(const struct fdp_rule *rule, void *list_)
{
    struct flow_list *list = list_;

    if (list->n == list->alloc) {
        size_t alloc = list->alloc ? 2 * list->alloc : 256;
        struct fdp_flow_spec *p = realloc(list->specs,
                                          alloc * sizeof *p);
        if (!p) {
            list->failed = true;
            return false;
        }
        list->specs = p;
        list->alloc = alloc;
    }
    struct fdp_match *match = fdp_match_create();
    struct fdp_flow_spec *spec = &list->specs[list->n];
    if (!match) {
        list->failed = true;
        return false;
    }
    fdp_rule_get_spec(rule, spec, match);
    spec->actions = fdp_actions_clone(spec->actions);
    if (!spec->actions) {
        fdp_match_destroy(match);
        list->failed = true;
        return false;
    }
    list->n++;
    return true;
}

/* True if 'a' and 'b' are the same flow: the same table, match and
 * priority (what OpenFlow identifies a flow by). */
static bool
same_flow(const struct fdp_flow_spec *a, const struct fdp_flow_spec *b)
{
    return a->table_id == b->table_id && a->priority == b->priority
           && fdp_match_equal(a->match, b->match);
}

/* Makes the pipeline hold exactly 'flows', in every table: flows not in
 * it are removed, the others added or replaced (an unchanged flow keeps
 * its statistics and its place in insertion order). */
static int
op_replace(struct server *s, const json_t *op, struct op_result *r)
{
    const json_t *flows = flows_param(op, r);
    struct fdp_flow_spec *specs;
    size_t n = json_array_size(flows);
    int error = 0;

    if (!flows) {
        return EINVAL;
    }
    specs = calloc(n ? n : 1, sizeof *specs);
    if (!specs) {
        return op_fail(r, RPC_FAILED, "out of memory");
    }
    size_t parsed = 0;
    for (; parsed < n && !error; parsed++) {
        error = parse_nth(flows, parsed, 0, &specs[parsed], r);
    }
    if (error) {
        parsed--;
    }

    /* Remove what the new set lacks (the table as published: the
     * transaction has changed nothing yet). */
    struct flow_list old = { NULL, 0, 0, false };
    if (!error) {
        fdp_table_read_lock();
        fdp_pipeline_for_each(s->pipeline, FDP_TABLE_ALL, collect_spec,
                              &old);
        fdp_table_read_unlock();
        if (old.failed) {
            error = op_fail(r, RPC_FAILED, "out of memory");
        }
    }
    for (size_t i = 0; !error && i < old.n; i++) {
        bool keep = false;
        for (size_t j = 0; j < n && !keep; j++) {
            keep = same_flow(&specs[j], &old.specs[i]);
        }
        if (!keep) {
            struct fdp_table_filter filter = {
                .match = old.specs[i].match, .strict = true,
                .priority = old.specs[i].priority,
            };
            size_t k;
            error = fdp_pipeline_remove(s->pipeline, old.specs[i].table_id,
                                        &filter, &k);
            r->n_removed += k;
            if (error) {
                op_fail(r, RPC_FAILED, "%s", strerror(error));
            }
        }
    }
    /* Add the rest, leaving identical flows alone.  A flow given more
     * than once is resolved as add-flows resolves it: the last wins, in
     * the place of the first.  (Before, the comparison with the table was
     * made line by line, and the result depended on what the table
     * held.) */
    for (size_t j = 0; !error && j < n; j++) {
        bool seen = false;
        for (size_t i = 0; i < j && !seen; i++) {
            seen = same_flow(&specs[i], &specs[j]);
        }
        if (seen) {
            continue;
        }
        size_t last = j;
        for (size_t k = j + 1; k < n; k++) {
            if (same_flow(&specs[k], &specs[j])) {
                last = k;
            }
        }
        const struct fdp_flow_spec *want = &specs[last];
        bool same = false;
        for (size_t i = 0; i < old.n && !same; i++) {
            const struct fdp_flow_spec *o = &old.specs[i];
            same = same_flow(o, want)
                   && fdp_actions_equal(o->actions, want->actions)
                   && o->cookie == want->cookie
                   && o->idle_timeout == want->idle_timeout
                   && o->hard_timeout == want->hard_timeout;
        }
        if (!same) {
            error = insert_flow(s, want, r, last);
            r->n++;
        }
    }
    for (size_t i = 0; i < old.n; i++) {
        fdp_flow_spec_destroy(&old.specs[i]);
    }
    free(old.specs);
    for (size_t j = 0; j < parsed; j++) {
        fdp_flow_spec_destroy(&specs[j]);
    }
    free(specs);
    return error;
}

/* The flow operations a "batch" holds. */
static const struct {
    const char *name;
    int (*apply)(struct server *, const json_t *op, struct op_result *);
} batch_kinds[] = {
    { "add", op_add },
    { "mod", op_mod },
    { "del", op_del },
};

/* {"op": "batch", "ops": [OP, ...]}: the flow operations "add", "mod" and
 * "del" in order, in the one transaction (an OpenFlow bundle that mixes
 * them, journalled by apply_flow_changes()).  r->n counts the flows of
 * them all; a failure names the operation. */
static int
op_batch(struct server *s, const json_t *op, struct op_result *r)
{
    const json_t *ops = json_object_get(op, "ops");

    if (!json_is_array(ops)) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"ops\": expected an array "
                       "of operations");
    }
    for (size_t i = 0; i < json_array_size(ops); i++) {
        const json_t *sub = json_array_get(ops, i);
        const char *kind = json_string_value(json_object_get(sub, "op"));
        size_t k = 0;
        while (kind && k < sizeof batch_kinds / sizeof batch_kinds[0]
               && strcmp(kind, batch_kinds[k].name)) {
            k++;
        }
        if (!kind || k == sizeof batch_kinds / sizeof batch_kinds[0]) {
            return op_fail(r, RPC_INVALID_PARAMS, "ops[%zu]: not a flow "
                           "operation (add, mod or del)", i);
        }
        struct op_result sub_r;
        memset(&sub_r, 0, sizeof sub_r);
        int error = batch_kinds[k].apply(s, sub, &sub_r);
        r->n += sub_r.n;
        if (error) {
            op_fail(r, sub_r.code ? sub_r.code : RPC_FAILED, "ops[%zu]: %s",
                    i, sub_r.msg ? sub_r.msg : strerror(error));
            r->why = sub_r.why;
            r->index = i;
            free(sub_r.msg);
            return error;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Decoded flow changes (OpenFlow).                                        */

static void maybe_compact(struct server *);
static void delete_learned(struct server *, const json_t *op);

void
flow_change_destroy(struct flow_change *fc)
{
    if (fc) {
        fdp_flow_spec_destroy(&fc->spec);
        memset(&fc->spec, 0, sizeof fc->spec);
        free(fc->cmatch);
        fc->cmatch = NULL;
    }
}

int
flow_change_pack(struct flow_change *fc)
{
    if (!fc->spec.match) {
        return 0;
    }
    struct fdp__cmatch *c = malloc(fdp__cmatch_size(fc->spec.match));
    if (!c) {
        return ENOMEM;
    }
    fdp__cmatch_pack(c, fc->spec.match);
    fdp_match_destroy(fc->spec.match);
    fc->spec.match = NULL;
    fc->cmatch = c;
    return 0;
}

/* 'fc''s flow with its match whole: 'spec' is fc->spec, its match
 * expanded into 'scratch' if 'fc' keeps it compact. */
static void
change_spec(const struct flow_change *fc, struct fdp_match *scratch,
            struct fdp_flow_spec *spec)
{
    *spec = fc->spec;
    if (!spec->match && fc->cmatch) {
        fdp__cmatch_expand(fc->cmatch, scratch);
        spec->match = scratch;
    }
}

/* Match storage for change_spec(), one per use, made once. */
enum { SCRATCH_CHANGE, SCRATCH_OTHER, N_SCRATCH };

static struct fdp_match *
scratch_match(int which)
{
    static struct fdp_match *m[N_SCRATCH];

    if (!m[which] && !(m[which] = fdp_match_create())) {
        fatal("out of memory");
    }
    return m[which];
}

/* True if a flow of 'spec''s table and priority overlaps 'spec''s match:
 * a committed one, or one added by an earlier change of 'fcs' (before
 * 'spec', which is fcs[i]'s).  As Open vSwitch's check_overlap: a flow
 * with the same match is no overlap (the add replaces it), and when one
 * exists nothing is checked. */
struct overlap_walk {
    const struct fdp_flow_spec *spec;
    bool overlap, identical;
};

static bool
overlap_one(const struct fdp_rule *rule, void *w_)
{
    struct overlap_walk *w = w_;
    struct fdp_flow_spec spec;

    get_spec(rule, &spec);
    if (spec.priority == w->spec->priority
        && fdp_match_intersects(spec.match, w->spec->match)) {
        if (fdp_match_equal(spec.match, w->spec->match)) {
            w->identical = true;
            return false;
        }
        w->overlap = true;
    }
    return true;
}

static bool
overlaps(struct server *s, const struct flow_change *fcs, size_t i,
         const struct fdp_flow_spec *spec)
{
    struct overlap_walk w = { .spec = spec };

    for (size_t j = 0; j < i; j++) {
        struct fdp_flow_spec o;
        if (fcs[j].kind != FC_ADD || fcs[j].spec.table_id != spec->table_id
            || fcs[j].spec.priority != spec->priority) {
            continue;
        }
        change_spec(&fcs[j], scratch_match(SCRATCH_OTHER), &o);
        if (fdp_match_intersects(o.match, spec->match)) {
            if (fdp_match_equal(o.match, spec->match)) {
                return false;
            }
            w.overlap = true;
        }
    }
    fdp_table_read_lock();
    fdp_pipeline_for_each(s->pipeline, spec->table_id, overlap_one, &w);
    fdp_table_read_unlock();
    return w.overlap && !w.identical;
}

/* The flow a modify that selected nothing adds ('fc->may_add'): its
 * match, priority, timeouts and actions, with the new cookie, in table 0
 * if the modify named none. */
static void
modify_added_spec(const struct flow_change *fc,
                  const struct fdp_flow_spec *whole,
                  struct fdp_flow_spec *spec)
{
    *spec = *whole;
    spec->table_id = fc->all_tables ? 0 : whole->table_id;
    spec->cookie = fc->new_cookie;
    spec->cookie_mask = 0;
}

/* Applies change fcs[i] to the open transaction.  '*added' is set if it
 * was a modify that added its flow. */
static int
apply_change(struct server *s, const struct flow_change *fcs, size_t i,
             struct op_result *r, bool *added)
{
    const struct flow_change *fc = &fcs[i];
    struct fdp_flow_spec whole;
    change_spec(fc, scratch_match(SCRATCH_CHANGE), &whole);
    const struct fdp_flow_spec *spec = &whole;
    struct fdp_table_filter filter = {
        .match = spec->match, .strict = fc->strict,
        .priority = spec->priority, .cookie = spec->cookie,
        .cookie_mask = spec->cookie_mask,
    };
    uint8_t table = fc->all_tables ? FDP_TABLE_ALL : spec->table_id;
    int error;

    switch (fc->kind) {
    case FC_ADD:
        if (spec->table_id >= FDP_PIPELINE_N_TABLES) {
            r->why = OPW_BAD_TABLE;
            return op_fail(r, RPC_FAILED, "flows[%zu]: table 255 holds no "
                           "flows", i);
        }
        if (fc->check_overlap && overlaps(s, fcs, i, spec)) {
            r->why = OPW_OVERLAP;
            return op_fail(r, RPC_FAILED, "flows[%zu]: a flow of the same "
                           "priority overlaps it", i);
        }
        error = insert_flow(s, spec, r, i);
        r->n += !error;
        return error;
    case FC_MODIFY: {
        error = meters_check_flow(s, spec, r, i);
        if (error) {
            r->why = OPW_BAD_METER;
            return error;
        }
        size_t before = r->n;
        error = modify_flows(s, table, &filter, spec->actions,
                             fc->set_cookie ? &fc->new_cookie : NULL, r);
        if (!error && r->n == before && fc->may_add) {
            struct fdp_flow_spec add;
            modify_added_spec(fc, spec, &add);
            error = insert_flow(s, &add, r, i);
            r->n += !error;
            *added = !error;
        }
        return error;
    }
    case FC_DELETE:
        return remove_flows(s, table, &filter, fc->out_port, fc->out_group,
                            r);
    }
    return op_fail(r, RPC_FAILED, "flows[%zu]: no such change", i);
}

/* The formatter's "MATCH actions=ACTIONS" for 'spec' without the cookie,
 * table and timeouts, which the caller writes itself; with 'match_only',
 * the match alone.  NULL if out of memory. */
static char *
change_body(const struct fdp_flow_spec *spec, bool match_only)
{
    struct fdp_flow_spec copy = *spec;

    copy.cookie = 0;
    copy.table_id = 0;
    copy.idle_timeout = 0;
    copy.hard_timeout = 0;
    if (match_only) {
        copy.actions = NULL;
    }
    char *text = fdp_flow_format(&copy);
    if (text && match_only) {
        char *acts = strstr(text, "actions=");
        if (acts) {
            *acts = '\0';
            size_t n = strlen(text);
            while (n && (text[n - 1] == ' ' || text[n - 1] == ',')) {
                text[--n] = '\0';
            }
        }
    }
    return text;
}

/* The text of change 'fc' as flowdp-ctl writes it (what the operation's
 * parser reads back to the same flow or selection): the formatter's flow
 * with the table, the cookie (or its selection) and the timeouts in
 * front.  NULL if out of memory. */
static char *
change_text(const struct flow_change *fc, bool as_add)
{
    struct fdp_flow_spec whole, added;
    change_spec(fc, scratch_match(SCRATCH_CHANGE), &whole);
    const struct fdp_flow_spec *spec = &whole;
    if (as_add && fc->kind == FC_MODIFY) {
        modify_added_spec(fc, &whole, &added);
        spec = &added;
    }
    bool is_add = as_add || fc->kind == FC_ADD;
    char *body = change_body(spec, fc->kind == FC_DELETE);
    char table[16] = "";
    char cookie[48] = "";
    char timeouts[48] = "";

    if (!body) {
        return NULL;
    }
    if (is_add || !fc->all_tables) {
        snprintf(table, sizeof table, "table=%u,", spec->table_id);
    }
    if (is_add) {
        if (spec->cookie) {
            snprintf(cookie, sizeof cookie, "cookie=%#" PRIx64 ",",
                     spec->cookie);
        }
        if (spec->idle_timeout || spec->hard_timeout) {
            snprintf(timeouts, sizeof timeouts,
                     "idle_timeout=%u,hard_timeout=%u,",
                     spec->idle_timeout, spec->hard_timeout);
        }
    } else if (spec->cookie_mask) {
        snprintf(cookie, sizeof cookie, "cookie=%#" PRIx64 "/%#" PRIx64 ",",
                 spec->cookie & spec->cookie_mask, spec->cookie_mask);
    } else if (fc->kind == FC_MODIFY && fc->set_cookie) {
        snprintf(cookie, sizeof cookie, "cookie=%#" PRIx64 ",",
                 fc->new_cookie);
    }
    char *text = xasprintf("%s%s%s%s", table, cookie, timeouts, body);
    free(body);
    return text;
}

/* The journal's operation for change 'fc' alone; NULL if out of
 * memory. */
static json_t *
change_op(const struct flow_change *fc, bool as_add)
{
    char *text = change_text(fc, as_add);
    json_t *op = NULL;

    if (!text) {
        return NULL;
    }
    if (as_add || fc->kind == FC_ADD) {
        op = json_pack("{s:s, s:[s]}", "op", "add", "flows", text);
    } else if (fc->kind == FC_MODIFY) {
        op = json_pack("{s:s, s:s, s:b}", "op", "mod", "flow", text,
                       "strict", fc->strict);
    } else {
        op = json_pack("{s:s, s:s, s:b}", "op", "del", "match", text,
                       "strict", fc->strict);
        if (op && fc->out_port != FDP_OFPP_ANY
            && json_object_set_new(op, "out_port",
                                   json_integer(fc->out_port))) {
            json_decref(op);
            op = NULL;
        }
        if (op && fc->out_group != FDP_OFPG_ANY
            && json_object_set_new(op, "out_group",
                                   json_integer(fc->out_group))) {
            json_decref(op);
            op = NULL;
        }
    }
    free(text);
    return op;
}

/* True if change 'i' was a modify that added its flow: 'added' lists
 * those, 'n_added' of them, in increasing order. */
static bool
was_added(const size_t *added, size_t n_added, size_t i)
{
    size_t lo = 0, hi = n_added;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (added[mid] == i) {
            return true;
        }
        if (added[mid] < i) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return false;
}

/* The journal's operation for the 'n' changes 'fcs' (of which the
 * modifies listed in 'added' added their flows): one "add" of their flows
 * if they all add, else a "batch" of their operations, adds in a row
 * merged into one.  NULL if out of memory. */
static json_t *
changes_op(const struct flow_change *fcs, size_t n, const size_t *added,
           size_t n_added)
{
    json_t *ops = json_array();
    json_t *adds = NULL;        /* The flows of the last "add" in 'ops'. */
    bool ok = ops != NULL;

    for (size_t i = 0; ok && i < n; i++) {
        bool as_add = n_added && was_added(added, n_added, i);
        bool is_add = as_add || fcs[i].kind == FC_ADD;
        if (is_add && adds) {
            char *text = change_text(&fcs[i], as_add);
            ok = text && !json_array_append_new(adds, json_string(text));
            free(text);
            continue;
        }
        json_t *op = change_op(&fcs[i], as_add);
        ok = op && !json_array_append_new(ops, op);
        adds = ok && is_add ? json_object_get(op, "flows") : NULL;
    }
    if (!ok) {
        json_decref(ops);
        return NULL;
    }
    if (json_array_size(ops) == 1) {
        json_t *op = json_incref(json_array_get(ops, 0));
        json_decref(ops);
        return op;
    }
    return json_pack("{s:s, s:o}", "op", "batch", "ops", ops);
}

int
apply_flow_changes(struct server *s, const struct flow_change *fcs,
                   size_t n, struct op_result *r)
{
    memset(r, 0, sizeof *r);
    int error = fdp_pipeline_begin(s->pipeline);
    if (error) {
        return op_fail(r, RPC_FAILED, "%s", strerror(error));
    }
    /* The modifies that added their flows, for the journal. */
    size_t *added = NULL;
    size_t n_added = 0, alloc_added = 0;
    for (size_t i = 0; i < n && !error; i++) {
        bool add = false;
        r->index = i;
        error = apply_change(s, fcs, i, r, &add);
        if (add) {
            if (n_added == alloc_added) {
                alloc_added = alloc_added ? 2 * alloc_added : 8;
                size_t *p = realloc(added, alloc_added * sizeof *p);
                if (!p) {
                    r->why = OPW_NOMEM;
                    error = op_fail(r, RPC_FAILED, "out of memory");
                    break;
                }
                added = p;
            }
            added[n_added++] = i;
        }
    }
    if (!error && s->journal && !s->replaying) {
        /* The text, for the journal only. */
        json_t *op = changes_op(fcs, n, added, n_added);
        char *msg = NULL;
        error = op ? journal_append(s->journal, op, &msg) : ENOMEM;
        if (error) {
            vlog(L_ERR, "%s", msg ? msg : strerror(error));
            op_fail(r, RPC_FAILED, "not saved, so not done: %s",
                    msg ? msg : strerror(error));
            r->why = op ? OPW_JOURNAL : OPW_NOMEM;
            free(msg);
        }
        json_decref(op);
    }
    free(added);
    if (error) {
        fdp_pipeline_abort(s->pipeline);
        return error;
    }
    error = fdp_pipeline_commit(s->pipeline);
    if (error) {
        r->why = OPW_NOMEM;
        return op_fail(r, RPC_FAILED, "%s", strerror(error));
    }
    delete_learned(s, NULL);
    if (s->journal && !s->replaying) {
        maybe_compact(s);
    }
    return 0;
}

/* 'commit', if any, makes what the datapath keeps outside the pipeline
 * (meters) once the operation is journalled and committed. */
static int op_batch(struct server *, const json_t *op, struct op_result *);

static const struct {
    const char *name;
    int (*apply)(struct server *, const json_t *op, struct op_result *);
    void (*commit)(struct server *, const json_t *op);
} op_kinds[] = {
    { "add", op_add, NULL },
    { "batch", op_batch, NULL },
    { "mod", op_mod, NULL },
    { "del", op_del, NULL },
    { "replace", op_replace, NULL },
    { "expire", op_expire, NULL },
    { "add-groups", op_add_groups, NULL },
    { "del-groups", op_del_groups, NULL },
    { "meter-add", op_meter_add, meter_commit },
    { "meter-mod", op_meter_mod, meter_commit },
    { "meter-del", op_meter_del, meter_commit },
    { "tlv-add", op_tlv, tlv_commit },
    { "tlv-del", op_tlv, tlv_commit },
    { "addr-add", op_addr_add, NULL },
    { "addr-del", op_addr_del, NULL },
    { "route-add", op_route_add, NULL },
    { "route-del", op_route_del, NULL },
    { "neigh-set", op_neigh_set, NULL },
    { "neigh-del", op_neigh_del, NULL },
    { "neigh-config", op_neigh_config, NULL },
    { "openflow-set", op_of_set, of_set_commit },
};

/* The operations whose 'apply' makes a change outside the pipeline (the
 * underlay, flowdpd-underlay.c) at once, and the function that takes it
 * back when the journal cannot keep the operation. */
static const struct {
    const char *name;
    void (*undo)(struct server *, const json_t *op);
} op_undos[] = {
    { "addr-add", underlay_undo },
    { "addr-del", underlay_undo },
    { "route-add", underlay_undo },
    { "route-del", underlay_undo },
    { "neigh-set", underlay_undo },
    { "neigh-del", underlay_undo },
    { "neigh-config", underlay_undo },
};

static void
undo_op(struct server *s, const char *kind, const json_t *op)
{
    for (size_t i = 0; i < sizeof op_undos / sizeof op_undos[0]; i++) {
        if (!strcmp(kind, op_undos[i].name)) {
            op_undos[i].undo(s, op);
        }
    }
}

static json_t *snapshot_op(struct server *);

/* Compacts the journal when it has grown enough. */
static void
maybe_compact(struct server *s)
{
    size_t size = journal_size(s->journal);
    size_t base = journal_base_size(s->journal);

    if (size < base + s->compact_growth || size < 2 * base) {
        return;
    }
    json_t *snap = snapshot_op(s);
    char *msg = NULL;
    if (snap && !journal_compact(s->journal, snap, &msg)) {
        vlog(L_INFO, "journal compacted: %zu bytes -> %zu", size,
             journal_size(s->journal));
    } else {
        vlog(L_WARN, "%s", msg ? msg : "journal compaction: out of memory");
    }
    free(msg);
    json_decref(snap);
}

/* Open vSwitch's learned-cookie rule after change 'op'
 * (fdp_pipeline_delete_learned()).  Until some change has had a flow with
 * learn(delete_learned) there is nothing to check, and the scan of every
 * flow it takes is saved: the flow operations note such a flow as they
 * add or modify it (note_flow()); the others (groups, whose buckets may
 * learn) are looked at as text ('op', NULL for none).  What it deletes
 * follows from the change, so a replayed journal deletes it again: it is
 * not journalled itself. */
static void
delete_learned(struct server *s, const json_t *op)
{
    if (!s->delete_learned_armed && op) {
        char *text = json_dumps(op, JSON_COMPACT);
        s->delete_learned_armed = !text || strstr(text, "delete_learned");
        free(text);
    }
    if (!s->delete_learned_armed) {
        return;
    }
    size_t n;
    int error = fdp_pipeline_delete_learned(s->pipeline, &n);
    if (error) {
        vlog(L_WARN, "delete_learned: %s", strerror(error));
    } else if (n) {
        vlog(L_INFO, "delete_learned: %zu flows deleted with the flows "
             "that learned them", n);
    }
}

/* True for the operations whose flows note_flow() sees. */
static bool
is_flow_op(const char *kind)
{
    static const char *const kinds[] = {
        "add", "mod", "del", "replace", "expire", "batch",
    };

    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (!strcmp(kind, kinds[i])) {
            return true;
        }
    }
    return false;
}

/* Applies 'op' in one transaction; with a journal (and not replaying it)
 * the op is on disk before the transaction commits.  Returns 0 or an
 * errno value with r->code and r->msg set. */
int
apply_op(struct server *s, const json_t *op, struct op_result *r)
{
    const char *kind = json_string_value(json_object_get(op, "op"));
    int error;

    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < sizeof op_kinds / sizeof op_kinds[0]; i++) {
        if (kind && !strcmp(kind, op_kinds[i].name)) {
            error = fdp_pipeline_begin(s->pipeline);
            if (error) {
                return op_fail(r, RPC_FAILED, "%s", strerror(error));
            }
            error = op_kinds[i].apply(s, op, r);
            bool applied = !error;
            if (!error && s->journal && !s->replaying) {
                char *msg = NULL;
                error = journal_append(s->journal, op, &msg);
                if (error) {
                    vlog(L_ERR, "%s", msg ? msg : strerror(error));
                    op_fail(r, RPC_FAILED, "not saved, so not done: %s",
                            msg ? msg : strerror(error));
                    r->why = OPW_JOURNAL;
                    free(msg);
                }
            }
            if (error) {
                fdp_pipeline_abort(s->pipeline);
                if (applied) {
                    undo_op(s, kind, op);
                }
                return error;
            }
            error = fdp_pipeline_commit(s->pipeline);
            if (error) {
                return op_fail(r, RPC_FAILED, "%s", strerror(error));
            }
            if (op_kinds[i].commit) {
                op_kinds[i].commit(s, op);
            }
            delete_learned(s, is_flow_op(kind) ? NULL : op);
            if (s->journal && !s->replaying) {
                maybe_compact(s);
            }
            return 0;
        }
    }
    return op_fail(r, RPC_INVALID_PARAMS, "unknown operation \"%s\"",
                   kind ? kind : "(none)");
}

int
replay_op(json_t *op, void *s_)
{
    struct server *s = s_;
    struct op_result r;
    int error = apply_op(s, op, &r);

    if (error) {
        vlog(L_ERR, "journal: %s", r.msg ? r.msg : strerror(error));
    }
    free(r.msg);
    return error;
}

/* Flows by table and insertion order in it, for the snapshot. */
struct seq_text {
    uint8_t table_id;
    uint64_t seq;
    char *text;
};

struct seq_list {
    struct seq_text *items;
    size_t n, alloc;
    bool failed;
};

static bool
collect_text(const struct fdp_rule *rule, void *list_)
{
    struct seq_list *l = list_;
    struct fdp_flow_spec spec;

    /* Learned flows are not kept (Open vSwitch does not keep them
     * either): the learning flows learn them again. */
    if (fdp_rule_is_learned(rule)) {
        return true;
    }
    if (l->n == l->alloc) {
        size_t alloc = l->alloc ? 2 * l->alloc : 256;
        struct seq_text *p = realloc(l->items, alloc * sizeof *p);
        if (!p) {
            l->failed = true;
            return false;
        }
        l->items = p;
        l->alloc = alloc;
    }
    get_spec(rule, &spec);
    l->items[l->n].table_id = spec.table_id;
    l->items[l->n].seq = fdp_rule_get_seq(rule);
    l->items[l->n].text = fdp_flow_format(&spec);
    l->failed |= !l->items[l->n++].text;
    return !l->failed;
}

static int
compare_seq(const void *a_, const void *b_)
{
    const struct seq_text *a = a_, *b = b_;

    if (a->table_id != b->table_id) {
        return a->table_id < b->table_id ? -1 : 1;
    }
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Every table as one "add" operation, in insertion order.  Each flow's
 * text has its "table=N" (fdp_flow_format() prints it for tables other
 * than 0), so that replaying the snapshot puts it back in its table. */
static json_t *
snapshot_op(struct server *s)
{
    struct seq_list l = { NULL, 0, 0, false };
    json_t *flows = json_array();

    fdp_table_read_lock();
    fdp_pipeline_for_each(s->pipeline, FDP_TABLE_ALL, collect_text, &l);
    fdp_table_read_unlock();
    if (l.n) {
        /* (No flows, as when only meters or groups changed: 'items' is
         * NULL, which qsort() may not be given.) */
        qsort(l.items, l.n, sizeof *l.items, compare_seq);
    }
    for (size_t i = 0; i < l.n; i++) {
        if (flows && !l.failed) {
            json_array_append_new(flows, json_string(l.items[i].text));
        }
        free(l.items[i].text);
    }
    free(l.items);
    json_t *groups = flows && !l.failed ? groups_snapshot(s) : NULL;
    if (l.failed || !flows || !groups) {
        json_decref(flows);
        json_decref(groups);
        return NULL;
    }
    /* The meters, which the flows may use, restored before them. */
    json_t *meters = meters_snapshot(s);
    if (!meters) {
        json_decref(flows);
        json_decref(groups);
        return NULL;
    }
    json_t *snap;
    if (!json_array_size(meters)) {
        json_decref(meters);
        snap = json_pack("{s:s, s:o, s:o}", "op", "add", "flows", flows,
                         "groups", groups);
    } else {
        snap = json_pack("{s:s, s:o, s:o, s:o}", "op", "add", "meters",
                         meters, "flows", flows, "groups", groups);
    }
    /* The TLV map, if any (flowdpd-tlv.c). */
    json_t *tlv = snap ? tlv_snapshot(s) : NULL;
    if (snap && (!tlv || (json_string_length(tlv)
                          && json_object_set(snap, "tlv", tlv)))) {
        json_decref(snap);
        snap = NULL;
    }
    json_decref(tlv);
    /* The underlay, when it is not the default (flowdpd-underlay.c). */
    json_t *ul = snap ? underlay_snapshot(s) : NULL;
    if (!ul) {
        json_decref(snap);
        return NULL;
    }
    if (underlay_snapshot_empty(ul)) {
        json_decref(ul);
    } else if (json_object_set_new(snap, "underlay", ul)) {
        json_decref(snap);
        return NULL;
    }
    /* The OpenFlow settings made at run time, if any
     * (flowdpd-ofconn.c). */
    json_t *ofs = of_snapshot(s);
    if (!ofs || (!json_is_null(ofs)
                 && json_object_set(snap, "openflow", ofs))) {
        json_decref(ofs);
        json_decref(snap);
        return NULL;
    }
    json_decref(ofs);
    return snap;
}

/* ---------------------------------------------------------------------- */
/* Timeouts.                                                               */

struct expiry {
    int64_t now;
    json_t *flows;
    /* The expiring flows with send_flow_rem: their flow removed
     * messages, sent once they are gone. */
    struct fdp_ofp_flow_removed *removed;
    size_t n_removed, alloc_removed;
};

/* Keeps the flow removed message of expiring flow 'spec' ('hard': by
 * its hard timeout, else its idle timeout) in 'e'. */
static void
note_removed(struct expiry *e, const struct fdp_flow_spec *spec,
             const struct fdp_rule_stats *st, bool hard)
{
    if (e->n_removed == e->alloc_removed) {
        size_t alloc = e->alloc_removed ? 2 * e->alloc_removed : 16;
        struct fdp_ofp_flow_removed *r = realloc(e->removed,
                                                 alloc * sizeof *r);
        if (!r) {
            return;
        }
        e->removed = r;
        e->alloc_removed = alloc;
    }
    struct fdp_match *m = fdp_match_clone(spec->match);
    if (!m) {
        return;
    }
    int64_t age = e->now - st->created_ms;
    e->removed[e->n_removed++] = (struct fdp_ofp_flow_removed) {
        .match = m,
        .cookie = spec->cookie,
        .priority = spec->priority,
        .reason = hard ? 1 : 0,     /* OFPRR_HARD_TIMEOUT, IDLE_TIMEOUT */
        .table_id = spec->table_id,
        .duration_sec = (uint32_t) (age / 1000),
        .duration_nsec = (uint32_t) (age % 1000) * 1000000u,
        .idle_timeout = spec->idle_timeout,
        .hard_timeout = spec->hard_timeout,
        .packet_count = st->n_packets,
        .byte_count = st->n_bytes,
    };
}

static bool
check_expiry(const struct fdp_rule *rule, void *e_)
{
    struct expiry *e = e_;
    struct fdp_flow_spec spec;
    struct fdp_rule_stats st;

    get_spec(rule, &spec);
    if (!spec.idle_timeout && !spec.hard_timeout) {
        return true;
    }
    fdp_rule_get_stats(rule, &st);
    int64_t last = st.used_ms > st.created_ms ? st.used_ms : st.created_ms;
    if ((spec.hard_timeout
         && e->now - st.modified_ms >= (int64_t) spec.hard_timeout * 1000)
        || (spec.idle_timeout
            && e->now - last >= (int64_t) spec.idle_timeout * 1000)) {
        char *match = fdp_match_format(spec.match, spec.priority);
        char *text = match ? xasprintf("table=%u,%s", spec.table_id, match)
                           : NULL;
        if (text) {
            json_array_append_new(e->flows, json_string(text));
        }
        free(text);
        free(match);
        if (spec.flags & FDP_FLOW_F_SEND_FLOW_REM) {
            note_removed(e, &spec, &st, e->now - st.modified_ms
                                        >= (int64_t) spec.hard_timeout * 1000
                                        && spec.hard_timeout);
        }
    }
    return true;
}

void
expire_flows(struct server *s)
{
    if (!s->flows_may_expire) {
        /* No flow could have a timeout: the walk of every flow each
         * second is saved. */
        return;
    }
    struct expiry e = { monotonic_ms(), json_array(), NULL, 0, 0 };

    if (!e.flows) {
        return;
    }
    fdp_table_read_lock();
    fdp_pipeline_for_each(s->pipeline, FDP_TABLE_ALL, check_expiry, &e);
    fdp_table_read_unlock();
    if (json_array_size(e.flows)) {
        json_t *op = json_pack("{s:s, s:O}", "op", "expire", "flows",
                               e.flows);
        struct op_result r;
        if (op && !apply_op(s, op, &r)) {
            vlog(L_INFO, "%zu flows expired", r.n);
            for (size_t i = 0; i < e.n_removed; i++) {
                of_flow_removed(s, &e.removed[i]);
            }
        } else {
            vlog(L_WARN, "expiring flows: %s", r.msg ? r.msg : "failed");
        }
        free(r.msg);
        json_decref(op);
    }
    json_decref(e.flows);
    for (size_t i = 0; i < e.n_removed; i++) {
        fdp_match_destroy((struct fdp_match *) e.removed[i].match);
    }
    free(e.removed);
}
