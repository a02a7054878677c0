/*
 * flowdpd: the flowdp daemon.
 *
 * Owns one datapath: a pipeline of flow tables (0 to 254, pipeline.h) and
 * ports.  Poll-mode threads forward packets; the main thread serves JSON-RPC requests (utilities/rpc.h) from
 * any number of clients over a unix socket and, if asked, mutual TLS, and
 * does the upkeep: the table's periodic run, idle and hard timeouts, and
 * (with --db) the journal that makes the flow table survive restarts.
 *
 * Every change to the flows is one JSON "operation" (add, mod, del,
 * replace, expire).  A request is turned into an operation, applied to a
 * table transaction, written to the journal and synced, and only then
 * committed and acknowledged.  Restarting replays the journal through the
 * same code, so the tables come back exactly: same flows in the same
 * tables, same order of insertion (which decides ties between equal
 * priorities).  Flows are journalled as their canonical text, which names
 * the table ("table=N") of a flow outside table 0.
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
 *   dump-flows   {match:TEXT?, strict:BOOL, parts:BOOL} -> {flows:[{...}]}
 *                (with parts, flows also come before the reply in
 *                "dump-flows.part" notifications: see h_dump())
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
 *   add-port     {port:N, spec:TEXT}                 -> {}
 *   del-port     {port:N}                            -> {}
 *   trace        {packet:TEXT}                       -> {steps:[...],
 *                                                        actions, ...}
 *                (the lookups table by table: see pipeline-tool.h)
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "flowdp/flowdp.h"
#include "utilities/journal.h"
#include "utilities/pipeline-tool.h"
#include "utilities/rpc.h"
#include "utilities/tool.h"

const char *program_name = "flowdpd";

#define DEFAULT_MAX_REQUEST (64u << 20)
#define MAX_LISTENERS 8
#define MAX_PORTS 1024
/* Compact the journal once it has grown by this much past its last
 * snapshot (and at least doubled). */
#define COMPACT_MIN_GROWTH (16u << 20)
/* Allocations of this many bytes or more get their own mappings, which go
 * back to the system when freed.  glibc's default threshold moves up to
 * the size of the largest mapped block freed (up to 32 MB), after which
 * the large transient buffers of a bulk request (the request text, its
 * journal record) come from the heap and, freed, stay part of the
 * process among the flows allocated after them. */
#define MMAP_THRESHOLD (256u << 10)
/* A change or restore that handled at least this many flows is followed
 * by malloc_trim(), which gives back the pages its parsed JSON (about
 * 150 bytes a flow, freed by then) occupied in the heap. */
#define TRIM_MIN_FLOWS 1024

/* ---------------------------------------------------------------------- */
/* Logging.                                                                */

enum log_level { L_ERR, L_WARN, L_INFO, L_DBG };
static const char *const level_names[] = { "err", "warn", "info", "dbg" };
static enum log_level log_threshold = L_INFO;
static FILE *log_stream;

static void vlog(enum log_level, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void
vlog(enum log_level level, const char *format, ...)
{
    struct timespec ts;
    struct tm tm;
    char when[32];
    va_list args;

    if (level > log_threshold) {
        return;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    FILE *f = log_stream ? log_stream : stderr;
    fprintf(f, "%s.%03ldZ|%s|", when, ts.tv_nsec / 1000000,
            level_names[level]);
    va_start(args, format);
    vfprintf(f, format, args);
    va_end(args);
    fputc('\n', f);
    fflush(f);
}

/* ---------------------------------------------------------------------- */
/* State.                                                                  */

struct server {
    struct fdp_pipeline *pipeline;  /* Tables 0..254 (pipeline.h). */
    struct fdp_dp *dp;
    unsigned int n_pmds;        /* --pmds. */
    struct pmd_thread *pmds;    /* [n_pmds]. */
    bool pmd_stop;              /* Atomic. */

    struct journal *journal;    /* NULL without --db. */
    bool replaying;
    size_t compact_growth;      /* Compact after this many new bytes. */

    struct rpc_listener *listeners[MAX_LISTENERS];
    size_t n_listeners;
    struct rpc_conn **conns;
    size_t n_conns, alloc_conns;
    size_t max_request;
    bool trim_pending;          /* malloc_trim() once the request that
                                 * changed many flows is freed. */
};

static int signal_pipe[2] = { -1, -1 };

/* ---------------------------------------------------------------------- */
/* The packet thread.                                                      */

/* One poll-mode thread: pmd 'pmd' of the datapath, polling the ports
 * whose order of addition is its number modulo --pmds. */
struct pmd_thread {
    struct server *server;
    struct fdp_dp_pmd *pmd;
    pthread_t thread;
};

static void *
pmd_main(void *t_)
{
    struct pmd_thread *t = t_;
    struct server *s = t->server;
    unsigned int idle = 0;

    while (!__atomic_load_n(&s->pmd_stop, __ATOMIC_ACQUIRE)) {
        if (fdp_dp_pmd_poll(t->pmd, NULL)) {
            idle = 0;
        } else if (++idle > 64) {
            /* Nothing for a while: nap 50 us rather than spin, so that a
             * small machine keeps a core for control and other work. */
            struct timespec nap = { 0, 50 * 1000 };
            nanosleep(&nap, NULL);
        }
    }
    return NULL;
}

/* Starts the --pmds packet threads. */
static void
start_pmds(struct server *s)
{
    s->pmds = calloc(s->n_pmds, sizeof *s->pmds);
    if (!s->pmds) {
        fatal("starting the packet threads: out of memory");
    }
    for (unsigned int i = 0; i < s->n_pmds; i++) {
        struct pmd_thread *t = &s->pmds[i];
        int error = fdp_dp_pmd_create(s->dp, i, &t->pmd);
        t->server = s;
        if (error || pthread_create(&t->thread, NULL, pmd_main, t)) {
            fatal("starting packet thread %u: %s", i,
                  strerror(error ? error : errno));
        }
    }
}

/* Stops and joins the packet threads. */
static void
stop_pmds(struct server *s)
{
    __atomic_store_n(&s->pmd_stop, true, __ATOMIC_RELEASE);
    for (unsigned int i = 0; i < s->n_pmds; i++) {
        pthread_join(s->pmds[i].thread, NULL);
        fdp_dp_pmd_destroy(s->pmds[i].pmd);
    }
    free(s->pmds);
    s->pmds = NULL;
}

/* ---------------------------------------------------------------------- */
/* Flow operations: the only way flows change.                             */

struct op_result {
    size_t n;                   /* Flows added, changed or removed. */
    size_t n_removed;           /* replace-flows: removed. */
    int code;                   /* RPC error code on failure. */
    char *msg;                  /* Error message on failure. */
};

static int
op_fail(struct op_result *r, int code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static int
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
    int error = fdp_pipeline_insert(s->pipeline, spec, 0);

    if (error) {
        return op_fail(r, RPC_FAILED, "flows[%zu]: %s", i,
                       error == ENOTSUP ? "ranges need pipapo sub-tables"
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
static int
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

    if (!error) {
        /* As ovs-ofctl mod-flows: "cookie=V/M" selects flows (the filter
         * has it); "cookie=V" without a mask selects nothing and sets the
         * cookie of the flows modified, "cookie=0" included. */
        bool set_cookie = spec.cookie_given && !spec.cookie_mask;
        if (set_cookie) {
            filter.cookie = 0;
        }
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
    int error = parse_filter(op, "match", FDP_PARSE_MATCH_ONLY, &spec,
                             &filter, &table, r);

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
static void
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
    /* Add the rest, leaving identical flows alone. */
    for (size_t j = 0; !error && j < n; j++) {
        bool same = false;
        for (size_t i = 0; i < old.n && !same; i++) {
            const struct fdp_flow_spec *o = &old.specs[i];
            same = same_flow(o, &specs[j])
                   && fdp_actions_equal(o->actions, specs[j].actions)
                   && o->cookie == specs[j].cookie
                   && o->idle_timeout == specs[j].idle_timeout
                   && o->hard_timeout == specs[j].hard_timeout;
        }
        if (!same) {
            error = insert_flow(s, &specs[j], r, j);
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

static const struct {
    const char *name;
    int (*apply)(struct server *, const json_t *op, struct op_result *);
} op_kinds[] = {
    { "add", op_add },
    { "mod", op_mod },
    { "del", op_del },
    { "replace", op_replace },
    { "expire", op_expire },
};

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
static int
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
                return error;
            }
            error = fdp_pipeline_commit(s->pipeline);
            if (error) {
                return op_fail(r, RPC_FAILED, "%s", strerror(error));
            }
            if (s->journal && !s->replaying) {
                maybe_compact(s);
            }
            return 0;
        }
    }
    return op_fail(r, RPC_INVALID_PARAMS, "unknown operation \"%s\"",
                   kind ? kind : "(none)");
}

static int
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
    qsort(l.items, l.n, sizeof *l.items, compare_seq);
    for (size_t i = 0; i < l.n; i++) {
        if (flows && !l.failed) {
            json_array_append_new(flows, json_string(l.items[i].text));
        }
        free(l.items[i].text);
    }
    free(l.items);
    if (l.failed || !flows) {
        json_decref(flows);
        return NULL;
    }
    return json_pack("{s:s, s:o}", "op", "add", "flows", flows);
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
         && e->now - st.created_ms >= (int64_t) spec.hard_timeout * 1000)
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

static void
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

/* ---------------------------------------------------------------------- */
/* Requests.                                                               */

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

/* dump-flows writes its reply as JSON text as it walks the table, rather
 * than building a jansson object per flow and encoding the whole array at
 * the end: for 200,000 flows that was 1.2 million objects and a 70 MB
 * string made at once.  A client that asks for "parts" gets the flows in
 * messages of about DUMP_PART_BYTES each, notifications
 *   {"jsonrpc":"2.0","method":"dump-flows.part","params":{"id":ID,
 *    "flows":[...]}}
 * followed by the reply with the last flows, so that no message is
 * longer than a small bound however many flows there are; one that does
 * not gets them all in the reply, as before.  The walk is one read-side
 * critical section either way, so the dump is a snapshot of the table. */
#define DUMP_PART_BYTES (1u << 20)

/* A growable string of JSON text.  Allocation failure is sticky. */
struct jtext {
    char *s;
    size_t len, cap;
    bool failed;
};

static void
jtext_put(struct jtext *t, const char *p, size_t n)
{
    if (t->failed) {
        return;
    }
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1) {
            cap *= 2;
        }
        char *q = realloc(t->s, cap);
        if (!q) {
            t->failed = true;
            return;
        }
        t->s = q;
        t->cap = cap;
    }
    memcpy(t->s + t->len, p, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void
jtext_puts(struct jtext *t, const char *p)
{
    jtext_put(t, p, strlen(p));
}

/* Appends 's' as a JSON string: quoted, with '"', '\\' and control
 * characters escaped (flow text has none, but it costs nothing to be
 * right). */
static void
jtext_string(struct jtext *t, const char *s)
{
    const char *run = s;

    jtext_put(t, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char) *s;
        if (c == '"' || c == '\\' || c < 0x20) {
            char esc[8];
            jtext_put(t, run, (size_t) (s - run));
            if (c == '"' || c == '\\') {
                esc[0] = '\\';
                esc[1] = (char) c;
                esc[2] = '\0';
            } else {
                snprintf(esc, sizeof esc, "\\u%04x", c);
            }
            jtext_puts(t, esc);
            run = s + 1;
        }
    }
    jtext_put(t, run, (size_t) (s - run));
    jtext_put(t, "\"", 1);
}

static void
jtext_u64(struct jtext *t, const char *key, uint64_t v)
{
    char buf[48];
    int n = snprintf(buf, sizeof buf, ",\"%s\":%" PRIu64, key, v);

    jtext_put(t, buf, (size_t) n);
}

struct dump {
    const struct fdp_table_filter *filter;
    int64_t now;
    struct rpc_conn *conn;
    const char *id;             /* The request's id, as JSON text. */
    bool parts;                 /* Send parts of DUMP_PART_BYTES. */
    struct jtext msg;           /* The message being written. */
    size_t n_in_msg;            /* Flows in 'msg'. */
    size_t n_flows;             /* Flows in all messages. */
    size_t prefix_len;          /* Bytes of 'msg' before its first flow. */
    bool failed;                /* Out of memory. */
};

/* Starts the next message of 'd': a part, or the reply when 'last'. */
static void
dump_start_msg(struct dump *d, bool last)
{
    d->msg.len = 0;
    d->n_in_msg = 0;
    if (last) {
        jtext_puts(&d->msg, "{\"jsonrpc\":\"2.0\",\"id\":");
        jtext_puts(&d->msg, d->id);
        jtext_puts(&d->msg, ",\"result\":{\"flows\":[");
    } else {
        jtext_puts(&d->msg, "{\"jsonrpc\":\"2.0\",\"method\":\"dump-flows."
                   "part\",\"params\":{\"id\":");
        jtext_puts(&d->msg, d->id);
        jtext_puts(&d->msg, ",\"flows\":[");
    }
    d->prefix_len = d->msg.len;
}

/* Ends the message of 'd' and queues it. */
static void
dump_send_msg(struct dump *d)
{
    jtext_puts(&d->msg, "]}}");
    if (d->msg.failed
        || rpc_queue_text(d->conn, d->msg.s, d->msg.len)) {
        d->failed = true;
    }
}

static bool
dump_one(const struct fdp_rule *rule, void *d_)
{
    struct dump *d = d_;
    const struct fdp_table_filter *f = d->filter;
    struct fdp_flow_spec spec;
    struct fdp_rule_stats st;

    get_spec(rule, &spec);
    if (f->match && (f->strict
                     ? spec.priority != f->priority
                       || !fdp_match_equal(f->match, spec.match)
                     : !fdp_match_covers(f->match, spec.match))) {
        return true;
    }
    if ((spec.cookie & f->cookie_mask) != (f->cookie & f->cookie_mask)) {
        return true;
    }
    fdp_rule_get_stats(rule, &st);
    char *text = fdp_flow_format(&spec);
    char *line = fdp_flow_format_stats(&spec, &st, d->now);
    if (!text || !line) {
        d->failed = true;
    } else {
        struct jtext *t = &d->msg;
        char priority[32];
        jtext_puts(t, d->n_in_msg++ ? ",{\"flow\":" : "{\"flow\":");
        d->n_flows++;
        jtext_string(t, text);
        jtext_puts(t, ",\"line\":");
        jtext_string(t, line);
        snprintf(priority, sizeof priority, ",\"priority\":%d",
                 spec.priority);
        jtext_puts(t, priority);
        jtext_u64(t, "seq", fdp_rule_get_seq(rule));
        jtext_u64(t, "n_packets", st.n_packets);
        jtext_u64(t, "n_bytes", st.n_bytes);
        jtext_put(t, "}", 1);
        d->failed |= t->failed;
        if (d->parts && !d->failed && t->len >= DUMP_PART_BYTES) {
            dump_send_msg(d);
            dump_start_msg(d, false);
        }
    }
    free(text);
    free(line);
    return !d->failed;
}

/* dump-flows: queues the reply (and its parts) itself.  Returns false
 * with 'r' set if it queued nothing and the caller must reply with the
 * error. */
static bool
h_dump(struct server *s, struct rpc_conn *c, const json_t *req,
       const json_t *p, struct op_result *r)
{
    struct fdp_flow_spec spec;
    struct fdp_table_filter filter;
    uint8_t table;
    const json_t *m = json_object_get(p, "match");
    const json_t *parts = json_object_get(p, "parts");

    if (parts && !json_is_boolean(parts)) {
        op_fail(r, RPC_INVALID_PARAMS, "\"parts\": expected true or false");
        return false;
    }
    if (parse_filter(p, "match", FDP_PARSE_MATCH_ONLY, &spec, &filter,
                     &table, r)) {
        return false;
    }
    if (!m || json_is_null(m)) {
        filter.match = NULL;    /* Everything (cookie filter aside). */
    }
    char *id = rpc_request_id_text(req);
    struct dump d = {
        .filter = &filter, .now = monotonic_ms(), .conn = c,
        .id = id ? id : "null", .parts = json_is_true(parts),
    };
    dump_start_msg(&d, !d.parts);
    fdp_table_read_lock();
    /* Table by table, in order, as ovs-ofctl dump-flows lists them. */
    fdp_pipeline_for_each(s->pipeline, table, dump_one, &d);
    fdp_table_read_unlock();
    fdp_flow_spec_destroy(&spec);
    if (d.parts && !d.failed) {
        /* The flows since the last part go in the reply. */
        struct jtext rest = d.msg;
        size_t n_rest = d.n_in_msg, skip = d.prefix_len;
        d.msg = (struct jtext) { NULL, 0, 0, false };
        dump_start_msg(&d, true);
        if (n_rest) {
            jtext_put(&d.msg, rest.s + skip, rest.len - skip);
        }
        free(rest.s);
    }
    if (!d.failed && id) {
        dump_send_msg(&d);
    }
    free(d.msg.s);
    free(id);
    if (d.n_flows >= TRIM_MIN_FLOWS) {
        s->trim_pending = true;     /* The formatting's garbage. */
    }
    if (d.failed || !id) {
        op_fail(r, RPC_FAILED, "out of memory");
        return false;
    }
    return true;
}

/* The text of a tuple-space subtable's mask: the names of the fields it
 * matches, in field order, each followed by "/0xMASK" unless it matches
 * every bit of the field ("dl_type,nw_dst/0xffff0000,nw_proto").  NULL if
 * out of memory. */
static char *
format_mask(const struct fdp_key *mask)
{
    static const struct fdp_value all_ones = { UINT64_MAX, UINT64_MAX };
    struct fdp_key named = { .w = { 0 } };
    size_t size = 0;
    char *text = NULL;
    FILE *stream = open_memstream(&text, &size);

    if (!stream) {
        return NULL;
    }
    for (int f = 0; f < FDP_N_FIELDS; f++) {
        /* Some fields share bits of the key: dl_vlan is part of vlan_tci,
         * arp_spa is nw_src's place, arp_op nw_proto's, icmp_code
         * tp_dst's.  A field whose masked bits an earlier name already
         * covers is left out, or the same bits would be named twice. */
        struct fdp_value v = fdp_key_get(mask, f);
        struct fdp_value done = fdp_key_get(&named, f);
        if (!(v.hi & ~done.hi) && !(v.lo & ~done.lo)) {
            continue;
        }
        fdp_key_set(&named, f, all_ones);
        unsigned int width = fdp_field_width(f);
        bool full = width >= 128
                    ? !~v.hi && !~v.lo
                    : width > 64
                      ? v.hi == (UINT64_C(1) << (width - 64)) - 1
                        && !~v.lo
                      : !v.hi && v.lo == (width == 64
                                          ? UINT64_MAX
                                          : (UINT64_C(1) << width) - 1);
        fprintf(stream, "%s%s", ftell(stream) ? "," : "", fdp_field_name(f));
        if (full) {
            continue;
        }
        if (v.hi) {
            fprintf(stream, "/0x%" PRIx64 "%016" PRIx64, v.hi, v.lo);
        } else {
            fprintf(stream, "/0x%" PRIx64, v.lo);
        }
    }
    if (fclose(stream)) {
        free(text);
        return NULL;
    }
    return text;
}

/* The JSON form of one sub-table for dump-tables, or NULL if out of
 * memory. */
static json_t *
subtable_json(const struct fdp_subtable_stats *st)
{
    static const char *const kinds[] = {
        [FDP_SUBTABLE_TSS] = "tss",
        [FDP_SUBTABLE_PIPAPO] = "pipapo",
        [FDP_SUBTABLE_OVERFLOW] = "overflow",
    };
    json_t *o = json_pack("{s:s, s:I, s:i, s:I, s:I}",
                          "kind", kinds[st->kind],
                          "flows", (json_int_t) st->n_flows,
                          "max_priority", st->max_priority,
                          "hits", (json_int_t) st->hits,
                          "memory", (json_int_t) st->memory_bytes);
    if (!o) {
        return NULL;
    }
    if (st->kind == FDP_SUBTABLE_TSS) {
        char *mask = format_mask(&st->mask);
        if (!mask || json_object_set_new(o, "mask", json_string(mask))
            || json_object_set_new(o, "keyed", json_boolean(st->keyed_hash))) {
            free(mask);
            json_decref(o);
            return NULL;
        }
        free(mask);
        return o;
    }
    json_t *fields = json_array(), *groups = json_array();
    json_t *consts = json_array();
    if (json_object_set_new(o, "partitions",
                            json_integer(st->n_partitions))
        || json_object_set_new(o, "partition_depth",
                               json_integer(st->partition_depth))
        || json_object_set_new(o, "largest_partition",
                               json_integer(st->largest_partition))
        || json_object_set_new(o, "fields", fields)
        || json_object_set_new(o, "group_bits", groups)
        || json_object_set_new(o, "const_fields", consts)) {
        json_decref(o);
        return NULL;
    }
    for (unsigned int i = 0; i < st->n_const_fields; i++) {
        if (json_array_append_new(
                consts, json_string(fdp_field_name(st->const_fields[i])))) {
            json_decref(o);
            return NULL;
        }
    }
    for (unsigned int i = 0; i < st->n_fields; i++) {
        if (json_array_append_new(fields,
                                  json_string(fdp_field_name(st->fields[i])))
            || json_array_append_new(groups,
                                     json_integer(st->group_bits[i]))) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

/* The "subtables" array of dump-tables: each sub-table in lookup walk
 * order.  NULL if out of memory. */
static json_t *
subtables_json(struct fdp_table *table)
{
    struct fdp_subtable_stats *stats = NULL;
    size_t n_max = 0, n = 0;
    int error;

    /* The number of sub-tables may grow between the call that counts them
     * and the one that fills the array (a flow with a new mask was added
     * meanwhile): then ask again with the new count. */
    while ((error = fdp_table_get_subtable_stats(table, stats, n_max, &n))
           == ENOBUFS) {
        free(stats);
        n_max = n;
        stats = malloc(n_max * sizeof *stats);
        if (!stats) {
            return NULL;
        }
    }

    json_t *array = error ? NULL : json_array();
    for (size_t i = 0; array && i < n; i++) {
        if (json_array_append_new(array, subtable_json(&stats[i]))) {
            json_decref(array);
            array = NULL;
        }
    }
    free(stats);
    return array;
}

/* fdp_table_for_each_partition() callback: appends the partition to a
 * JSON array; stops if out of memory. */
static bool
partition_json_cb(const struct fdp_partition_stats *p, void *array_)
{
    json_t *array = array_;

    return !json_array_append_new(
        array, json_pack("{s:s, s:s, s:I, s:i, s:I, s:I, s:i}",
                         "kind", p->kind, "path", p->path,
                         "flows", (json_int_t) p->n_flows,
                         "max_priority", p->max_priority,
                         "hits", (json_int_t) p->hits,
                         "memory", (json_int_t) p->memory_bytes,
                         "depth", (int) p->depth));
}

/* The counters of table 'id' of 'p', which may be a table no flow was
 * ever added to (then all zero), as dump-tables' JSON; NULL if out of
 * memory.  "lookups", "matched" and "missed" count packets (a packet that
 * a datapath cache served counts as the lookups it stands for), and
 * "memory" includes the table's conjunction clauses
 * (fdp_pipeline_get_table_stats()); the sub-table counts are the
 * table's own (fdp_table_get_stats(), whose lookup counters the pipeline
 * does not feed, so they are not sent). */
static json_t *
table_json(struct fdp_pipeline *p, uint8_t id, bool want_partitions)
{
    struct fdp_table *table = fdp_pipeline_get_table(p, id);
    struct fdp_pipeline_table_stats ps;
    struct fdp_table_stats st;

    memset(&ps, 0, sizeof ps);
    memset(&st, 0, sizeof st);
    if (table) {
        fdp_pipeline_get_table_stats(p, id, &ps);
        fdp_table_get_stats(table, &st);
    }
    json_t *subtables = table ? subtables_json(table) : json_array();
    json_t *partitions = want_partitions ? json_array() : NULL;
    if (!subtables || (want_partitions && !partitions)) {
        json_decref(subtables);
        json_decref(partitions);
        return NULL;
    }
    if (table && partitions) {
        fdp_table_for_each_partition(table, partition_json_cb, partitions);
    }
    json_t *o = json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
                          "s:I, s:o}",
                          "table", (int) id,
                          "flows", (json_int_t) ps.n_flows,
                          "lookups", (json_int_t) (ps.n_matched
                                                   + ps.n_missed),
                          "matched", (json_int_t) ps.n_matched,
                          "missed", (json_int_t) ps.n_missed,
                          "masks", (json_int_t) st.n_masks,
                          "pipapo_tables", (json_int_t) st.n_pipapo_tables,
                          "pipapo_flows", (json_int_t) st.n_pipapo_rules,
                          "keyed_masks", (json_int_t) st.n_keyed_subtables,
                          "memory", (json_int_t) ps.memory_bytes,
                          "subtables", subtables);
    if (o && partitions && json_object_set_new(o, "partitions", partitions)) {
        json_decref(o);
        return NULL;
    }
    if (!o) {
        json_decref(partitions);
    }
    return o;
}

/* dump-tables: table 0, and every other table in use, in table order. */
static json_t *
h_tables(struct server *s, const json_t *p, struct op_result *r)
{
    const json_t *want = json_object_get(p, "partitions");

    if (want && !json_is_boolean(want)) {
        op_fail(r, RPC_INVALID_PARAMS, "\"partitions\": expected true or "
                "false");
        return NULL;
    }
    json_t *tables = json_array();
    for (unsigned int id = 0; tables && id < FDP_PIPELINE_N_TABLES; id++) {
        if (id && !fdp_pipeline_get_table(s->pipeline, (uint8_t) id)) {
            continue;
        }
        if (json_array_append_new(tables,
                                  table_json(s->pipeline, (uint8_t) id,
                                             json_is_true(want)))) {
            json_decref(tables);
            tables = NULL;
        }
    }
    if (!tables) {
        return NULL;
    }
    return json_pack("{s:o, s:I}", "tables", tables, "limit_drops",
                     (json_int_t) fdp_pipeline_n_limit_drops(s->pipeline));
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
static void
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
    int error = fdp_dp_port_add(s->dp, port, spec, &msg);
    if (error) {
        op_fail(r, RPC_FAILED, "%s", msg ? msg : strerror(error));
        free(msg);
        return NULL;
    }
    log_port_added(s->dp, port, spec);
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
    fdp_table_read_lock();
    json_t *result = trace_json(s->pipeline, &key);
    fdp_table_read_unlock();
    if (!result) {
        op_fail(r, RPC_FAILED, "out of memory");
    }
    return result;
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
};

static void
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
    rpc_reply_error(c, req, RPC_METHOD_NOT_FOUND, "unknown method \"%s\"",
                    method);
}

/* ---------------------------------------------------------------------- */
/* The control loop.                                                       */

static void
add_conn(struct server *s, struct rpc_conn *c)
{
    if (s->n_conns == s->alloc_conns) {
        size_t alloc = s->alloc_conns ? 2 * s->alloc_conns : 16;
        struct rpc_conn **p = realloc(s->conns, alloc * sizeof *p);
        if (!p) {
            vlog(L_WARN, "out of memory: refusing %s", rpc_conn_name(c));
            rpc_close(c);
            return;
        }
        s->conns = p;
        s->alloc_conns = alloc;
    }
    s->conns[s->n_conns++] = c;
    vlog(L_DBG, "%s: connected", rpc_conn_name(c));
}

static void
serve(struct server *s)
{
    int64_t next_tick = monotonic_ms() + 1000;

    for (;;) {
        size_t n_fds = 1 + s->n_listeners + s->n_conns;
        struct pollfd *fds = calloc(n_fds, sizeof *fds);
        if (!fds) {
            vlog(L_ERR, "out of memory");
            sleep(1);
            continue;
        }
        fds[0] = (struct pollfd) { .fd = signal_pipe[0], .events = POLLIN };
        for (size_t i = 0; i < s->n_listeners; i++) {
            fds[1 + i] = (struct pollfd) {
                .fd = rpc_listener_fd(s->listeners[i]), .events = POLLIN,
            };
        }
        size_t base = 1 + s->n_listeners;
        for (size_t i = 0; i < s->n_conns; i++) {
            fds[base + i] = (struct pollfd) {
                .fd = rpc_conn_fd(s->conns[i]),
                .events = rpc_conn_events(s->conns[i]),
            };
        }
        int64_t wait = next_tick - monotonic_ms();
        int r = poll(fds, n_fds, wait < 0 ? 0 : (int) wait);
        if (r < 0 && errno != EINTR) {
            vlog(L_ERR, "poll: %s", strerror(errno));
        }
        if (fds[0].revents) {
            int sig = 0;
            if (read(signal_pipe[0], &sig, sizeof sig) > 0) {
                vlog(L_INFO, "signal %d: exiting", sig);
            }
            free(fds);
            return;
        }
        /* Clients first (their fds are indexed by the current array),
         * then new connections. */
        for (size_t i = s->n_conns; i-- > 0; ) {
            struct rpc_conn *c = s->conns[i];
            if (!fds[base + i].revents) {
                continue;
            }
            int error = rpc_conn_run(c, s->max_request, handle_request, s);
            if (s->trim_pending) {
                /* The requests are freed by now, and their JSON with
                 * them. */
                malloc_trim(0);
                s->trim_pending = false;
            }
            if (error) {
                vlog(L_DBG, "%s: %s", rpc_conn_name(c),
                     error == EOF ? "closed" : error == EPROTO
                     ? "TLS handshake or protocol error" : strerror(error));
                if (error == EPROTO) {
                    vlog(L_WARN, "%s: refused (TLS handshake failed: no or "
                         "untrusted client certificate?)", rpc_conn_name(c));
                }
                rpc_close(c);
                s->conns[i] = s->conns[--s->n_conns];
            }
        }
        for (size_t i = 0; i < s->n_listeners; i++) {
            if (fds[1 + i].revents) {
                struct rpc_conn *c;
                while (!rpc_accept(s->listeners[i], &c)) {
                    add_conn(s, c);
                }
            }
        }
        free(fds);
        if (monotonic_ms() >= next_tick) {
            fdp_pipeline_run(s->pipeline);
            expire_flows(s);
            next_tick = monotonic_ms() + 1000;
        }
    }
}

static void
on_signal(int sig)
{
    int saved = errno;
    ssize_t n = write(signal_pipe[1], &sig, sizeof sig);

    (void) n;
    errno = saved;
}

/* ---------------------------------------------------------------------- */
/* Start-up.                                                               */

static void
usage(void)
{
    printf("%s: the flowdp datapath daemon\n"
           "usage: %s [OPTIONS]\n"
           "\n"
           "Control:\n"
           "  --unix=PATH              listen on a unix socket (mode 0600;\n"
           "                           default $FLOWDP_RUNDIR/flowdpd.sock)\n"
           "  --listen=ssl:ADDR:PORT   also listen with mutual TLS\n"
           "  --private-key=FILE --certificate=FILE --ca-cert=FILE\n"
           "                           TLS identity and the CA clients'\n"
           "                           certificates must be signed by\n"
           "  --max-request=BYTES      largest request (default %u)\n"
           "Datapath:\n"
           "  --port=N=TYPE:ARGS       a port (ring[:size=N],\n"
           "                           pcap:rx=FILE[,loop=K][,tx=FILE],\n"
           "                           afxdp:dev=IF[,queue=Q][,mode=auto|copy|zc],\n"
           "                           afpacket:dev=IF); repeatable\n"
           "  --pmds=N                 N packet threads (default 1); ports\n"
           "                           go to them in turn, in order\n"
           "  --emc=auto|on|off        exact-match cache (default auto: used\n"
           "                           while it makes lookups cheaper)\n"
           "  --smc=auto|on|off        signature match cache, for disjoint\n"
           "                           tables only (default auto)\n"
           "  --no-emc                 the same as --emc=off\n"
           "  --db=FILE                keep the flow table in FILE: every\n"
           "                           acknowledged change is on disk first,\n"
           "                           and the table is restored on start\n"
           "  --db-compact=BYTES       rewrite the journal as a snapshot once\n"
           "                           it grew by BYTES (default %u) and\n"
           "                           doubled\n"
           "Daemon:\n"
           "  --detach                 run in the background once ready\n"
           "  --pidfile[=FILE]         write the pid (default\n"
           "                           $FLOWDP_RUNDIR/flowdpd.pid)\n"
           "  --log-file=FILE          log there instead of stderr\n"
           "  -v, --verbose[=LEVEL]    log level: err, warn, info (default),\n"
           "                           dbg; -v alone means dbg\n"
           "  -h, --help, -V, --version\n",
           program_name, program_name, DEFAULT_MAX_REQUEST,
           COMPACT_MIN_GROWTH);
}

static const char *
rundir(void)
{
    const char *d = getenv("FLOWDP_RUNDIR");

    return d && *d ? d : FDP_RUNDIR;
}

static char *
default_path(const char *file)
{
    char *p;

    if (asprintf(&p, "%s/%s", rundir(), file) < 0) {
        fatal("out of memory");
    }
    return p;
}

/* mkdir -p 'path' (mode 0700 for what it creates). */
static void
make_dirs(const char *path)
{
    char *copy = strdup(path);

    if (!copy) {
        fatal("out of memory");
    }
    for (char *p = copy + 1; ; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = '\0';
            if (mkdir(copy, 0700) && errno != EEXIST) {
                fatal("%s: %s", copy, strerror(errno));
            }
            *p = c;
            if (!c) {
                break;
            }
        }
    }
    free(copy);
}

/* Forks: the parent waits until the child says it is ready (a byte on
 * the pipe) and exits 0, or exits 1 if the child dies first. */
static int
detach(void)
{
    int fds[2];

    if (pipe(fds)) {
        fatal("--detach: pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        fatal("--detach: fork: %s", strerror(errno));
    }
    if (pid > 0) {
        char c;
        close(fds[1]);
        exit(read(fds[0], &c, 1) == 1 ? EXIT_SUCCESS : EXIT_FAILURE);
    }
    close(fds[0]);
    setsid();
    return fds[1];
}

static void
write_pidfile(const char *path)
{
    FILE *f = fopen(path, "w");

    if (!f || fprintf(f, "%ld\n", (long) getpid()) < 0 || fclose(f)) {
        fatal("--pidfile: %s: %s", path, strerror(errno));
    }
}

/* Everything the command line says. */
struct options {
    const char *unix_path, *db, *log_file;
    const char *listen_specs[MAX_LISTENERS];
    const char *port_specs[MAX_PORTS];
    size_t n_listen, n_ports;
    char *pidfile;
    bool detach;
    struct rpc_tls tls;
    struct fdp_dp_options dpo;
    size_t max_request;
    size_t compact_growth;
};

/* Parses the command line into 'o'; exits on --help, --version and any
 * error (with a message naming the option). */
static void
parse_options(int argc, char *argv[], struct options *o)
{
    enum {
        OPT_UNIX = 256, OPT_LISTEN, OPT_KEY, OPT_CERT, OPT_CA, OPT_PORT,
        OPT_DB, OPT_DETACH, OPT_PIDFILE, OPT_LOG, OPT_NO_EMC, OPT_MAX_REQ,
        OPT_DB_COMPACT, OPT_PMDS, OPT_EMC, OPT_SMC,
    };
    static const struct option options[] = {
        { "unix", required_argument, NULL, OPT_UNIX },
        { "listen", required_argument, NULL, OPT_LISTEN },
        { "private-key", required_argument, NULL, OPT_KEY },
        { "certificate", required_argument, NULL, OPT_CERT },
        { "ca-cert", required_argument, NULL, OPT_CA },
        { "port", required_argument, NULL, OPT_PORT },
        { "db", required_argument, NULL, OPT_DB },
        { "db-compact", required_argument, NULL, OPT_DB_COMPACT },
        { "detach", no_argument, NULL, OPT_DETACH },
        { "pidfile", optional_argument, NULL, OPT_PIDFILE },
        { "log-file", required_argument, NULL, OPT_LOG },
        { "no-emc", no_argument, NULL, OPT_NO_EMC },
        { "pmds", required_argument, NULL, OPT_PMDS },
        { "emc", required_argument, NULL, OPT_EMC },
        { "smc", required_argument, NULL, OPT_SMC },
        { "max-request", required_argument, NULL, OPT_MAX_REQ },
        { "verbose", optional_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int opt;

    memset(o, 0, sizeof *o);
    o->max_request = DEFAULT_MAX_REQUEST;
    o->compact_growth = COMPACT_MIN_GROWTH;
    fdp_dp_options_init(&o->dpo);
    while ((opt = getopt_long(argc, argv, "hVv::", options, NULL)) != -1) {
        switch (opt) {
        case OPT_UNIX:
            o->unix_path = optarg;
            break;
        case OPT_LISTEN:
            if (o->n_listen == MAX_LISTENERS - 1) {
                fatal("--listen: at most %d", MAX_LISTENERS - 1);
            }
            o->listen_specs[o->n_listen++] = optarg;
            break;
        case OPT_KEY:
            o->tls.private_key = optarg;
            break;
        case OPT_CERT:
            o->tls.certificate = optarg;
            break;
        case OPT_CA:
            o->tls.ca_cert = optarg;
            break;
        case OPT_PORT:
            if (o->n_ports == MAX_PORTS) {
                fatal("--port: at most %d", MAX_PORTS);
            }
            o->port_specs[o->n_ports++] = optarg;
            break;
        case OPT_DB:
            o->db = optarg;
            break;
        case OPT_DB_COMPACT: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || *end || !v) {
                fatal("--db-compact: \"%s\": expected a number of bytes",
                      optarg);
            }
            o->compact_growth = (size_t) v;
            break;
        }
        case OPT_DETACH:
            o->detach = true;
            break;
        case OPT_PIDFILE:
            o->pidfile = optarg ? strdup(optarg) : default_path("flowdpd.pid");
            break;
        case OPT_LOG:
            o->log_file = optarg;
            break;
        case OPT_NO_EMC:
            o->dpo.emc_mode = FDP_DP_CACHE_OFF;
            break;
        case OPT_PMDS: {
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || optarg[0] == '-' || v < 1 || v > 64) {
                fatal("--pmds: \"%s\": expected a number of threads from "
                      "1 to 64", optarg);
            }
            o->dpo.n_pmds = (uint32_t) v;
            break;
        }
        case OPT_EMC:
        case OPT_SMC: {
            static const char *const modes[] = { "auto", "on", "off" };
            size_t m;
            for (m = 0; m < 3 && strcmp(optarg, modes[m]); m++) {
                continue;
            }
            if (m == 3) {
                fatal("--%s: \"%s\": expected auto, on or off",
                      opt == OPT_EMC ? "emc" : "smc", optarg);
            }
            *(opt == OPT_EMC ? &o->dpo.emc_mode : &o->dpo.smc_mode)
                = (enum fdp_dp_cache_mode) m;
            break;
        }
        case OPT_MAX_REQ: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || *end || v < 1024 || v > (1ull << 31)) {
                fatal("--max-request: \"%s\": expected bytes from 1024 to "
                      "2147483648", optarg);
            }
            o->max_request = (size_t) v;
            break;
        }
        case 'v':
            log_threshold = L_DBG;
            if (optarg) {
                size_t i;
                for (i = 0; i < 4 && strcmp(optarg, level_names[i]); i++) {
                    continue;
                }
                if (i == 4) {
                    fatal("--verbose: \"%s\": levels are err, warn, info, "
                          "dbg", optarg);
                }
                log_threshold = (enum log_level) i;
            }
            break;
        case 'h':
            usage();
            exit(EXIT_SUCCESS);
        case 'V':
            printf("flowdpd (flowdp) %s\n", PACKAGE_VERSION);
            exit(EXIT_SUCCESS);
        default:
            fatal("unknown option (see --help)");
        }
    }
    if (optind < argc) {
        fatal("unexpected argument \"%s\" (see --help)", argv[optind]);
    }
}

/* Startup, step by step. */

/* The number of flows in all the tables of 'p'. */
static uint64_t
count_flows(struct fdp_pipeline *p)
{
    uint64_t n = 0;

    for (unsigned int id = 0; id < FDP_PIPELINE_N_TABLES; id++) {
        struct fdp_pipeline_table_stats st;
        if (fdp_pipeline_get_table_stats(p, (uint8_t) id, &st)) {
            n += st.n_flows;
        }
    }
    return n;
}

/* The pipeline, restored from --db's journal if given. */
static void
open_pipeline(struct server *s, const struct options *o)
{
    int error = fdp_pipeline_create(&s->pipeline);
    if (error) {
        fatal("creating the pipeline: %s", strerror(error));
    }
    if (o->db) {
        char *msg = NULL, *warning = NULL;
        s->replaying = true;
        error = journal_open(o->db, replay_op, s, &s->journal, &msg,
                             &warning);
        s->replaying = false;
        if (error) {
            fatal("--db: %s", msg ? msg : strerror(error));
        }
        if (warning) {
            vlog(L_WARN, "%s", warning);
            free(warning);
        }
        uint64_t n_flows = count_flows(s->pipeline);
        vlog(L_INFO, "%s: %" PRIu64 " flows restored", o->db, n_flows);
        if (n_flows >= TRIM_MIN_FLOWS) {
            malloc_trim(0);
        }
    }
}

/* The datapath and the --port ports. */
static void
open_datapath(struct server *s, const struct options *o)
{
    s->n_pmds = o->dpo.n_pmds;
    int error = fdp_dp_create_pipeline(s->pipeline, &o->dpo, &s->dp);
    if (error) {
        fatal("creating the datapath: %s", strerror(error));
    }
    for (size_t i = 0; i < o->n_ports; i++) {
        const char *eq = strchr(o->port_specs[i], '=');
        char *end, *msg = NULL;
        unsigned long no = strtoul(o->port_specs[i], &end, 10);
        if (!eq || end != eq) {
            fatal("--port %s: expected N=TYPE:ARGS", o->port_specs[i]);
        }
        error = fdp_dp_port_add(s->dp, (uint32_t) no, eq + 1, &msg);
        if (error) {
            fatal("--port %s: %s", o->port_specs[i],
                  msg ? msg : strerror(error));
        }
        log_port_added(s->dp, (uint32_t) no, eq + 1);
    }
}

/* The unix socket (--unix or the default path) and the --listen ones.
 * Returns the unix listener's spec, which the caller frees; sets
 * '*default_unix' to the default path if that was used (also freed). */
static char *
open_listeners(struct server *s, struct options *o, char **default_unix)
{
    const char *unix_path = o->unix_path;
    char *unix_spec;

    *default_unix = NULL;
    if (!unix_path) {
        unix_path = *default_unix = default_path("flowdpd.sock");
        make_dirs(rundir());
    }
    if (asprintf(&unix_spec, "unix:%s", unix_path) < 0) {
        fatal("out of memory");
    }
    o->listen_specs[o->n_listen++] = unix_spec;
    for (size_t i = 0; i < o->n_listen; i++) {
        char *msg = NULL;
        int error = rpc_listen(o->listen_specs[i], &o->tls, &s->listeners[i],
                               &msg);
        if (error) {
            fatal("%s", msg ? msg : strerror(error));
        }
        s->n_listeners++;
        vlog(L_INFO, "listening on %s",
             rpc_listener_name(s->listeners[i]));
    }
    return unix_spec;
}

/* SIGTERM, SIGINT and SIGHUP end serve() through 'signal_pipe'; SIGPIPE
 * is ignored (a client that went away is an error on its socket). */
static void
install_signals(void)
{
    if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK)) {
        fatal("pipe: %s", strerror(errno));
    }
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* --detach: tells the waiting parent that the daemon is ready and lets go
 * of the terminal. */
static void
finish_detach(int ready_fd)
{
    if (write(ready_fd, "", 1) != 1) {
        vlog(L_WARN, "telling the parent we are ready: %s",
             strerror(errno));
    }
    close(ready_fd);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        if (log_stream) {
            dup2(null, STDERR_FILENO);
        }
        close(null);
    }
}

/* Clean exit: stop packets, close the connections, listeners and ports
 * (completing captures), the table and the journal. */
static void
shut_down(struct server *s)
{
    stop_pmds(s);
    for (size_t i = 0; i < s->n_conns; i++) {
        rpc_close(s->conns[i]);
    }
    free(s->conns);
    for (size_t i = 0; i < s->n_listeners; i++) {
        rpc_listener_close(s->listeners[i]);
    }
    fdp_dp_destroy(s->dp);
    fdp_pipeline_destroy(s->pipeline);
    journal_close(s->journal);
}

int
main(int argc, char *argv[])
{
    struct options o;

    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    parse_options(argc, argv, &o);
    if (fdp_cpu_init()) {
        fatal("%s", fdp_cpu_strerror());
    }
    if (o.log_file && !(log_stream = fopen(o.log_file, "a"))) {
        fatal("--log-file: %s: %s", o.log_file, strerror(errno));
    }

    /* Fork before any thread exists (liburcu's call_rcu worker starts
     * with the first deferred free, during journal replay): a forked
     * child has no threads but the caller.  The parent waits until the
     * child is ready, so errors below still reach the terminal. */
    int ready_fd = o.detach ? detach() : -1;

    struct server s = {
        .max_request = o.max_request,
        .compact_growth = o.compact_growth,
    };
    char *default_unix;
    open_pipeline(&s, &o);
    open_datapath(&s, &o);
    char *unix_spec = open_listeners(&s, &o, &default_unix);
    if (o.pidfile) {
        write_pidfile(o.pidfile);
    }
    install_signals();
    start_pmds(&s);
    vlog(L_INFO, "flowdpd %s started (pid %ld)", PACKAGE_VERSION,
         (long) getpid());
    if (ready_fd >= 0) {
        finish_detach(ready_fd);
    }

    serve(&s);

    shut_down(&s);
    if (o.pidfile) {
        unlink(o.pidfile);
        free(o.pidfile);
    }
    free(unix_spec);
    free(default_unix);
    vlog(L_INFO, "exited");
    if (log_stream) {
        fclose(log_stream);
    }
    return EXIT_SUCCESS;
}
