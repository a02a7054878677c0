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
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utilities/flowdpd.h"
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

static int
insert_flow(struct server *s, const struct fdp_flow_spec *spec,
            struct op_result *r, size_t i)
{
    int error = meters_check_flow(s, spec, r, i);

    if (error) {
        return error;
    }
    error = fdp_pipeline_insert(s->pipeline, spec, 0);

    if (error) {
        return op_fail(r, RPC_FAILED, "flows[%zu]: %s", i,
                       error == ENOTSUP ? "ranges need pipapo sub-tables"
                       : error == ENOENT ? "group: names a group that "
                                           "does not exist"
                       : error == EINVAL
                       ? "an action needs what the match does not "
                         "guarantee, or goes to a table not after the "
                         "flow's own"
                       : strerror(error));
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
    }
    if (!error) {
        error = fdp_pipeline_modify(s->pipeline, table, &filter,
                                    spec.actions,
                                    set_cookie ? &spec.cookie : NULL, &r->n);
        if (error == EINVAL) {
            op_fail(r, RPC_FAILED, "nothing changed: an action needs what "
                    "the match of a flow selected does not guarantee, or "
                    "goes to a table not after its own");
        } else if (error) {
            op_fail(r, RPC_FAILED, "%s", strerror(error));
        }
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
    int error = parse_filter(op, "match", flags, &spec, &filter, &table, r);

    if (!error) {
        error = fdp_pipeline_remove(s->pipeline, table, &filter, &r->n);
        if (error) {
            op_fail(r, RPC_FAILED, "%s", strerror(error));
        }
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

/* 'commit', if any, makes what the datapath keeps outside the pipeline
 * (meters) once the operation is journalled and committed. */
static const struct {
    const char *name;
    int (*apply)(struct server *, const json_t *op, struct op_result *);
    void (*commit)(struct server *, const json_t *op);
} op_kinds[] = {
    { "add", op_add, NULL },
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

/* Applies 'op' in one transaction; with a journal (and not replaying it)
 * the op is on disk before the transaction commits.  Returns 0 or an
 * errno value with r->code and r->msg set. */
/* Open vSwitch's learned-cookie rule after change 'op'
 * (fdp_pipeline_delete_learned()).  Until some change has had a flow with
 * learn(delete_learned) there is nothing to check, and the scan of every
 * flow it takes is saved.  What it deletes follows from the change, so a
 * replayed journal deletes it again: it is not journalled itself. */
static void
delete_learned(struct server *s, const json_t *op)
{
    if (!s->delete_learned_armed) {
        char *text = json_dumps(op, JSON_COMPACT);
        s->delete_learned_armed = !text || strstr(text, "delete_learned");
        free(text);
        if (!s->delete_learned_armed) {
            return;
        }
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
            delete_learned(s, op);
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
};

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
    }
    return true;
}

void
expire_flows(struct server *s)
{
    struct expiry e = { monotonic_ms(), json_array() };

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
        } else {
            vlog(L_WARN, "expiring flows: %s", r.msg ? r.msg : "failed");
        }
        free(r.msg);
        json_decref(op);
    }
    json_decref(e.flows);
}
