/*
 * flowdp-ctl commands that talk to flowdpd over the control channel
 * (utilities/rpc.h).  Flows are checked here first, so that a mistake is
 * reported with its file, line and column before anything is sent; the
 * daemon checks them again (it trusts no client).
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flowdp/flowdp.h>
#include "utilities/ctl.h"
#include "utilities/pipeline-tool.h"
#include "utilities/tool.h"

const char *ctl_remote;
struct rpc_tls ctl_tls;
unsigned int ctl_timeout;

/* -t/--timeout.  The whole command is bounded, as ovs-ofctl's -t bounds
 * it, with an alarm rather than a deadline on each read and write: one
 * alarm covers the TLS handshake, a connect() to a listener whose backlog
 * is full, and a daemon that accepts and never answers (one stopped with
 * SIGSTOP, whose socket still takes connections: before -t, "show" waited
 * there forever).  The message is made before the alarm is armed, since a
 * signal handler may only write(). */
static char timeout_msg[512];
static size_t timeout_len;

static void
timeout_expired(int sig)
{
    (void) sig;
    ssize_t n = write(STDERR_FILENO, timeout_msg, timeout_len);
    (void) n;
    _exit(EXIT_FAILURE);
}

/* Arms -t/--timeout when 'command' first talks to the daemon. */
static void
arm_timeout(const char *command)
{
    static bool armed;

    if (!ctl_timeout || armed) {
        return;
    }
    armed = true;
    int n = snprintf(timeout_msg, sizeof timeout_msg, "%s: %s: timeout "
                     "after %u s waiting for flowdpd at %s\n", program_name,
                     command, ctl_timeout, ctl_remote);
    timeout_len = n < 0 ? 0 : (size_t) n < sizeof timeout_msg
                  ? (size_t) n : sizeof timeout_msg - 1;
    struct sigaction sa = { .sa_handler = timeout_expired };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(ctl_timeout);
}

bool
ctl_is_switch_name(const char *name)
{
    /* IFNAMSIZ (16) less the terminating NUL: the longest bridge name Open
     * vSwitch can give a kernel interface. */
    enum { MAX_SWITCH_NAME = 15 };
    size_t len = strlen(name);

    return (len >= 1 && len <= MAX_SWITCH_NAME && name[0] != '-'
            && strspn(name, "abcdefghijklmnopqrstuvwxyz"
                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
               == len);
}

/* Sends one request and returns its result, passing each part of it that
 * comes first to 'raw_part' or 'part' (see rpc_call_parts_raw()); exits
 * with the daemon's message on failure. */
static json_t *
call_parts_raw(const char *command, const char *method, json_t *params,
               int (*part)(const json_t *params, void *aux),
               bool (*raw_part)(const char *rest, size_t len, void *aux),
               void *aux)
{
    struct rpc_conn *conn;
    char *msg = NULL;
    json_t *result;

    arm_timeout(command);
    int error = rpc_connect(ctl_remote, &ctl_tls, &conn, &msg);

    if (error) {
        fatal("%s: %s", command, msg ? msg : strerror(error));
    }
    error = rpc_call_parts_raw(conn, method, params, part, raw_part, aux,
                               &result, &msg);
    rpc_close(conn);
    if (error) {
        fatal("%s: %s", command, msg ? msg : strerror(error));
    }
    return result;
}

/* As call_parts_raw() with 'part' alone. */
static json_t *
call_parts(const char *command, const char *method, json_t *params,
           int (*part)(const json_t *params, void *aux), void *aux)
{
    return call_parts_raw(command, method, params, part, NULL, aux);
}

/* Sends one request and returns its result; exits with the daemon's
 * message on failure. */
static json_t *
call(const char *command, const char *method, json_t *params)
{
    return call_parts(command, method, params, NULL, NULL);
}

json_t *
ctl_call(const char *command, const char *method, json_t *params)
{
    return call(command, method, params);
}

json_t *
ctl_call_parts(const char *command, const char *method, json_t *params,
               int (*part)(const json_t *params, void *aux), void *aux)
{
    return call_parts(command, method, params, part, aux);
}

static void
flush_stdout(const char *command)
{
    if (fflush(stdout) || ferror(stdout)) {
        fatal("%s: write error: %s", command, strerror(errno));
    }
}

/* Checks 'text' as a flow (with 'flags'), exiting with 'where' and the
 * parser's message if it is not one. */
static void
check_flow(const char *where, const char *text, unsigned int flags)
{
    struct fdp_flow_spec spec;
    char *msg = NULL;
    int error = fdp_flow_parse(text, flags, &spec, &msg);

    if (error) {
        fatal("%s: %s", where, msg ? msg : strerror(error));
    }
    fdp_flow_spec_destroy(&spec);
}

/* A file of flows as a JSON array of their lines, each checked. */
struct file_flows {
    const char *command;
    json_t *flows;
};

static void
file_flow_line(const char *shown, unsigned long line_no, char *line,
               void *ff_)
{
    struct file_flows *ff = ff_;
    char where[512];

    snprintf(where, sizeof where, "%s: %s:%lu", ff->command, shown, line_no);
    check_flow(where, line, 0);
    json_array_append_new(ff->flows, json_string(line));
}

static json_t *
read_flows(const char *command, const char *path)
{
    struct file_flows ff = { command, json_array() };

    if (!ff.flows) {
        fatal("out of memory");
    }
    for_each_line(path, file_flow_line, &ff);
    return ff.flows;
}

/* True if 'text' parses as a match (del-flows' and dump-flows'
 * argument). */
static bool
is_match(const char *text)
{
    struct fdp_flow_spec spec;

    if (fdp_flow_parse(text, FDP_PARSE_MATCH_ONLY | FDP_PARSE_COOKIE_MASK,
                       &spec, NULL)) {
        return false;
    }
    fdp_flow_spec_destroy(&spec);
    return true;
}

/* What a lone argument that is a switch name and not a match means. */
enum lone_switch {
    LONE_ARG,                   /* The command's own argument. */
    LONE_SWITCH,                /* The switch ("dump-flows br0"). */
    LONE_REFUSED,               /* Neither: refused with a hint. */
};

/* ovs-ofctl's commands are "COMMAND SWITCH [ARGS]"; flowdpd has one
 * datapath, so here the SWITCH is optional and any name means that one.
 * The arguments of 'command' are argv['first'] on, at most 'max_args' of
 * them without a switch.  The first is taken as a switch name, and
 * skipped, when
 *   - there is one argument more than 'max_args' (and it is a switch
 *     name: "add-flow br0 FLOW", "dump-flows br0 tcp");
 *   - or 'lone' is LONE_SWITCH and it is the only argument, a switch name
 *     and not a match: "dump-flows br0" (but "dump-flows tcp" is a match).
 * With LONE_REFUSED (del-flows) that last case is an error with a hint:
 * a misspelt match ("del-flows tcpp") must not delete every flow.
 * Returns the index of the first argument after a skipped switch name;
 * exits with 'usage' on too many arguments. */
static int
skip_switch(const char *command, const char *usage, int argc, char *argv[],
            int first, int max_args, enum lone_switch lone)
{
    int n = argc - first;

    if (n == max_args + 1) {
        if (!ctl_is_switch_name(argv[first])) {
            fatal("%s: \"%s\": too many arguments, and not a switch name "
                  "(expected %s)", command, argv[first], usage);
        }
        return first + 1;
    }
    if (n > max_args + 1) {
        fatal("%s: too many arguments (expected %s)", command, usage);
    }
    if (n == 1 && lone != LONE_ARG && ctl_is_switch_name(argv[first])
        && !is_match(argv[first])) {
        if (lone == LONE_REFUSED) {
            struct fdp_flow_spec spec;
            char *msg = NULL;
            fdp_flow_parse(argv[first], FDP_PARSE_MATCH_ONLY
                           | FDP_PARSE_COOKIE_SELECT, &spec, &msg);
            fatal("%s: \"%s\" is not a match (%s); if it is a switch name, "
                  "say what to delete: \"%s %s ''\" deletes every flow "
                  "(flowdpd has one datapath)", command, argv[first],
                  msg ? msg : "?", command, argv[first]);
        }
        return first + 1;
    }
    return first;
}

/* Parses the options of mod-flows and del-flows ("--strict", which the
 * global options put first wherever it was given) and returns the index
 * of the first other argument. */
static int
strict_option(const char *command, int argc, char *argv[], bool *strict)
{
    int i = 1;

    *strict = false;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--strict")) {
            *strict = true;
        } else if (!strcmp(argv[i], "--")) {
            return i + 1;
        } else {
            fatal("%s: %s: unknown option (the only one is --strict)",
                  command, argv[i]);
        }
    }
    return i;
}

void
cmd_add_flow(int argc, char *argv[])
{
    if (argc < 2) {
        fatal("add-flow: expected one FLOW");
    }
    int i = skip_switch("add-flow", "[SWITCH] FLOW", argc, argv, 1, 1,
                        LONE_ARG);
    if (argc - i != 1) {
        fatal("add-flow: expected one FLOW");
    }
    check_flow("add-flow", argv[i], 0);
    json_decref(call("add-flow", "add-flows",
                     json_pack("{s:[s]}", "flows", argv[i])));
}

void
cmd_add_flows(int argc, char *argv[])
{
    int i = skip_switch("add-flows", "[SWITCH] FILE", argc, argv, 1, 1,
                        LONE_ARG);
    if (argc - i != 1) {
        fatal("add-flows: expected FILE (or - for stdin)");
    }
    json_t *flows = read_flows("add-flows", argv[i]);
    json_decref(call("add-flows", "add-flows",
                     json_pack("{s:o}", "flows", flows)));
}

void
cmd_mod_flows(int argc, char *argv[])
{
    bool strict;
    int i = strict_option("mod-flows", argc, argv, &strict);

    i = skip_switch("mod-flows", "[--strict] [SWITCH] FLOW", argc, argv, i,
                    1, LONE_ARG);
    if (argc - i != 1) {
        fatal("mod-flows: expected [--strict] FLOW");
    }
    /* As ovs-ofctl: "cookie=V/M" selects, a plain "cookie=V" sets. */
    check_flow("mod-flows", argv[i], FDP_PARSE_COOKIE_MASK);
    json_decref(call("mod-flows", "mod-flows",
                     json_pack("{s:s, s:b}", "flow", argv[i], "strict",
                               strict)));
}

void
cmd_del_flows(int argc, char *argv[])
{
    bool strict;
    int i = strict_option("del-flows", argc, argv, &strict);

    i = skip_switch("del-flows", "[--strict] [SWITCH] [MATCH]", argc, argv,
                    i, 1, LONE_REFUSED);
    if (argc - i > 1) {
        fatal("del-flows: expected [--strict] [MATCH]");
    }
    const char *match = argc - i == 1 ? argv[i] : "";
    /* A plain "cookie=V" is refused: before, it selected nothing, and
     * "del-flows cookie=0x11" deleted every flow of every table. */
    check_flow("del-flows", match,
               FDP_PARSE_MATCH_ONLY | FDP_PARSE_COOKIE_SELECT);
    json_decref(call("del-flows", "del-flows",
                     json_pack("{s:s, s:b}", "match", match, "strict",
                               strict)));
}

/* A file of flows (replace-flows) or a source of diff-flows, each flow
 * known by its identity: its table, then its match and priority as
 * canonical text. */
struct flow_entry {
    uint8_t table_id;
    char *key;                  /* fdp_match_format(match, priority). */
    char *text;                 /* The flow as diff-flows prints it, or
                                 * the line as given (replace-flows). */
    struct fdp_flow_spec spec;  /* diff-flows only (else empty). */
    size_t pos;                 /* Order of arrival. */
};

struct flow_set {
    const char *command;
    bool canonical;             /* 'text' diff-flows', 'spec' kept. */
    struct flow_entry *entries;
    size_t n, alloc;
};

/* Returns 'flow' as ovs-ofctl diff-flows prints it (its
 * fte_version_format()), which is not the dump-flows form:
 *   [table=N ]MATCH[ cookie=0xN][ idle_timeout=N][ hard_timeout=N]
 *   actions=ACTIONS
 * (one line) where MATCH starts with "priority=N," unless the priority is
 * the default, and an empty match leaves " actions=" first.  The text
 * holds everything diff-flows compares, so two flows of the same identity
 * differ exactly when their texts do.  NULL if out of memory. */
static char *
format_diff_flow(const struct fdp_flow_spec *flow)
{
    char *match = fdp_match_format(flow->match, flow->priority);
    char *actions = fdp_actions_format(flow->actions, flow->match);
    char table[sizeof "table=255 "] = "";
    char cookie[sizeof " cookie=0x" + 16] = "";
    char idle[sizeof " idle_timeout=65535"] = "";
    char hard[sizeof " hard_timeout=65535"] = "";
    char *s = NULL;

    if (flow->table_id) {
        snprintf(table, sizeof table, "table=%u ", flow->table_id);
    }
    if (flow->cookie) {
        snprintf(cookie, sizeof cookie, " cookie=0x%" PRIx64, flow->cookie);
    }
    if (flow->idle_timeout) {
        snprintf(idle, sizeof idle, " idle_timeout=%u", flow->idle_timeout);
    }
    if (flow->hard_timeout) {
        snprintf(hard, sizeof hard, " hard_timeout=%u", flow->hard_timeout);
    }
    if (match && actions
        && asprintf(&s, "%s%s%s%s%s actions=%s", table, match, cookie, idle,
                    hard, actions) < 0) {
        s = NULL;
    }
    free(match);
    free(actions);
    return s;
}

/* Adds the flow 'text' to 'set'; 'where' names it in an error. */
static void
flow_set_add(struct flow_set *set, const char *where, const char *text)
{
    struct fdp_flow_spec spec;
    char *msg = NULL;
    int error = fdp_flow_parse(text, 0, &spec, &msg);

    if (error) {
        fatal("%s: %s", where, msg ? msg : strerror(error));
    }
    if (set->n == set->alloc) {
        set->alloc = set->alloc ? 2 * set->alloc : 256;
        set->entries = realloc(set->entries,
                               set->alloc * sizeof *set->entries);
        if (!set->entries) {
            fatal("out of memory");
        }
    }
    struct flow_entry *e = &set->entries[set->n];
    e->table_id = spec.table_id;
    e->key = fdp_match_format(spec.match, spec.priority);
    e->text = set->canonical ? format_diff_flow(&spec) : strdup(text);
    e->pos = set->n++;
    if (!e->key || !e->text) {
        fatal("out of memory");
    }
    if (set->canonical) {
        e->spec = spec;
    } else {
        fdp_flow_spec_destroy(&spec);
        memset(&e->spec, 0, sizeof e->spec);
    }
}

static void
flow_entry_destroy(struct flow_entry *e)
{
    free(e->key);
    free(e->text);
    fdp_flow_spec_destroy(&e->spec);
}

static void
flow_set_destroy(struct flow_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        flow_entry_destroy(&set->entries[i]);
    }
    free(set->entries);
}

/* Orders flows by identity (table, then match and priority). */
static int
compare_identity(const struct flow_entry *a, const struct flow_entry *b)
{
    if (a->table_id != b->table_id) {
        return a->table_id < b->table_id ? -1 : 1;
    }
    return strcmp(a->key, b->key);
}

static int
compare_identity_pos(const void *a_, const void *b_)
{
    const struct flow_entry *a = a_, *b = b_;
    int c = compare_identity(a, b);

    return c ? c : a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int
compare_pos(const void *a_, const void *b_)
{
    const struct flow_entry *a = a_, *b = b_;

    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Resolves duplicates (flows with one identity) as add-flows does: the
 * last one wins, in the place of the first (a flow replaced keeps its
 * place in insertion order).  Leaves 'set' sorted by identity. */
static void
flow_set_resolve(struct flow_set *set)
{
    struct flow_entry *e = set->entries;
    size_t out = 0;

    qsort(e, set->n, sizeof *e, compare_identity_pos);
    for (size_t i = 0; i < set->n; ) {
        size_t last = i;
        while (last + 1 < set->n && !compare_identity(&e[last + 1], &e[i])) {
            last++;
        }
        struct flow_entry keep = e[last];
        keep.pos = e[i].pos;
        for (size_t k = i; k < last; k++) {
            flow_entry_destroy(&e[k]);
        }
        e[out++] = keep;
        i = last + 1;
    }
    set->n = out;
}

static void
set_flow_line(const char *shown, unsigned long line_no, char *line,
              void *set_)
{
    struct flow_set *set = set_;
    char where[512];

    snprintf(where, sizeof where, "%s: %s:%lu", set->command, shown,
             line_no);
    flow_set_add(set, where, line);
}

void
cmd_replace_flows(int argc, char *argv[])
{
    int i = skip_switch("replace-flows", "[SWITCH] FILE", argc, argv, 1, 1,
                        LONE_ARG);
    if (argc - i != 1) {
        fatal("replace-flows: expected FILE (or - for stdin)");
    }
    struct flow_set set = { .command = "replace-flows" };
    for_each_line(argv[i], set_flow_line, &set);
    /* Duplicate lines resolved here, as add-flows would: the daemon then
     * gets one line per flow, and the result does not depend on what the
     * table held before (the daemon resolves them too, for any client). */
    flow_set_resolve(&set);
    qsort(set.entries, set.n, sizeof *set.entries, compare_pos);
    json_t *flows = json_array();
    if (!flows) {
        fatal("out of memory");
    }
    for (size_t k = 0; k < set.n; k++) {
        if (json_array_append_new(flows,
                                  json_string(set.entries[k].text))) {
            fatal("out of memory");
        }
    }
    flow_set_destroy(&set);
    json_decref(call("replace-flows", "replace-flows",
                     json_pack("{s:o}", "flows", flows)));
}

/* ---------------------------------------------------------------------- */
/* dump-flows                                                              */

/* One sort key: a field (or priority), ascending or descending. */
struct sort_key {
    bool priority;
    enum fdp_field field;
    bool descending;
};

/* A flow of the dump, kept for sorting. */
struct dumped {
    char *flow;                 /* Its text without statistics. */
    char *line;                 /* Its dump-flows line. */
    struct fdp_flow_spec spec;
};

/* What dump-flows does with the flows as they arrive: prints them at once,
 * or keeps them to sort first. */
struct dump_out {
    bool no_stats;
    bool sort;
    struct dumped *flows;
    size_t n, alloc;
};

static struct sort_key sort_keys[16];
static size_t n_sort_keys;

static int
compare_u128(struct fdp_value a, struct fdp_value b)
{
    return a.hi != b.hi ? (a.hi < b.hi ? -1 : 1)
                        : a.lo != b.lo ? (a.lo < b.lo ? -1 : 1) : 0;
}

/* As ovs-ofctl: the keys order every flow of the dump, whatever its
 * table (before, each table was sorted on its own, so "--rsort" put table
 * 1's priority 32768 flows after table 0's priority 0 ones); a flow that
 * does not match a sort field comes after every flow that does, in either
 * direction; wildcarded bits count as zero. */
static int
compare_dumped(const void *a_, const void *b_)
{
    const struct dumped *a = a_, *b = b_;

    for (size_t i = 0; i < n_sort_keys; i++) {
        const struct sort_key *k = &sort_keys[i];
        int c;
        if (k->priority) {
            c = a->spec.priority < b->spec.priority ? -1
                : a->spec.priority > b->spec.priority;
        } else {
            struct fdp_value va, vb;
            bool ha = fdp_match_get(a->spec.match, k->field, &va);
            bool hb = fdp_match_get(b->spec.match, k->field, &vb);
            if (ha != hb) {
                return ha ? -1 : 1;
            }
            c = ha ? compare_u128(va, vb) : 0;
        }
        if (c) {
            return k->descending ? -c : c;
        }
    }
    /* Equal keys: by table, then by text, so that a sorted dump is
     * repeatable (ovs-ofctl leaves their order to qsort()). */
    if (a->spec.table_id != b->spec.table_id) {
        return a->spec.table_id < b->spec.table_id ? -1 : 1;
    }
    return strcmp(a->flow, b->flow);
}

static void
add_sort_key(const char *arg, bool descending)
{
    struct sort_key k = { .descending = descending };

    if (n_sort_keys == sizeof sort_keys / sizeof sort_keys[0]) {
        fatal("dump-flows: too many sort keys");
    }
    if (!arg || !strcmp(arg, "priority")) {
        k.priority = true;
    } else if (!fdp_field_from_name(arg, &k.field)) {
        fatal("dump-flows: --%s=%s: not a field name or \"priority\"",
              descending ? "rsort" : "sort", arg);
    }
    sort_keys[n_sort_keys++] = k;
}

/* Prints or keeps the flows of one message of the dump. */
static void
take_flows(const json_t *flows, struct dump_out *out)
{
    for (size_t i = 0; i < json_array_size(flows); i++) {
        const json_t *item = json_array_get(flows, i);
        const char *flow = json_string_value(json_object_get(item, "flow"));
        const char *line = json_string_value(json_object_get(item, "line"));
        if (!flow || !line) {
            fatal("dump-flows: the daemon sent a flow without its text");
        }
        if (!out->sort) {
            /* Printed as it comes: the flows of a large table need not
             * all be in memory at once. */
            puts(out->no_stats ? flow : line);
            continue;
        }
        if (out->n == out->alloc) {
            out->alloc = out->alloc ? 2 * out->alloc : 256;
            out->flows = realloc(out->flows,
                                 out->alloc * sizeof *out->flows);
            if (!out->flows) {
                fatal("out of memory");
            }
        }
        struct dumped *d = &out->flows[out->n++];
        d->flow = strdup(flow);
        d->line = strdup(line);
        if (!d->flow || !d->line) {
            fatal("out of memory");
        }
        if (fdp_flow_parse(flow, 0, &d->spec, NULL)) {
            fatal("dump-flows: the daemon sent a flow that does not parse");
        }
    }
}

/* Prints or keeps the flows of one message of the dump: the lines of a
 * "text" dump as they are (see flowdpd-dump.c), else each flow. */
static void
take_message(const json_t *msg, struct dump_out *out)
{
    const json_t *text = json_object_get(msg, "text");

    if (json_is_string(text) && !out->sort) {
        fwrite(json_string_value(text), 1, json_string_length(text), stdout);
    } else {
        take_flows(json_object_get(msg, "flows"), out);
    }
}

static int
dump_part(const json_t *params, void *out)
{
    take_message(params, out);
    return 0;
}

/* A "text" part of the dump as it came, 'rest' being what follows the
 * part's prefix (see rpc_call_parts_raw()): "text":"...."}}.  Prints the
 * text, unescaped here rather than by jansson (a third of flowdp-ctl's
 * time for a large dump), and returns true; returns false, to have the
 * part decoded as JSON, for anything else, an escape flowdpd does not
 * write included. */
static bool
dump_raw_part(const char *rest, size_t len, void *out_)
{
    static const char head[] = "\"text\":\"", tail[] = "\"}}";
    const size_t head_len = sizeof head - 1, tail_len = sizeof tail - 1;
    const struct dump_out *out = out_;

    if (out->sort || len < head_len + tail_len
        || memcmp(rest, head, head_len)
        || memcmp(rest + len - tail_len, tail, tail_len)) {
        return false;
    }
    const char *p = rest + head_len, *end = rest + len - tail_len;
    char *text = malloc((size_t) (end - p) + 1);
    size_t n = 0;
    if (!text) {
        fatal("out of memory");
    }
    while (p < end) {
        const char *bs = memchr(p, '\\', (size_t) (end - p));
        const char *run_end = bs ? bs : end;
        if (memchr(p, '"', (size_t) (run_end - p))) {
            break;              /* Not one string: not ours. */
        }
        memcpy(text + n, p, (size_t) (run_end - p));
        n += (size_t) (run_end - p);
        p = run_end;
        if (!bs) {
            break;
        }
        /* flowdpd escapes '"', '\\' and the controls, as \u00XX but
         * for the newline that ends each line. */
        if (end - bs >= 2 && (bs[1] == '"' || bs[1] == '\\')) {
            text[n++] = bs[1];
            p = bs + 2;
        } else if (end - bs >= 2 && bs[1] == 'n') {
            text[n++] = '\n';
            p = bs + 2;
        } else if (end - bs >= 6 && !memcmp(bs + 1, "u00", 3)
                   && strchr("01", bs[4]) && bs[4]
                   && isxdigit((unsigned char) bs[5])) {
            char hex[3] = { bs[4], bs[5], '\0' };
            text[n++] = (char) strtol(hex, NULL, 16);
            p = bs + 6;
        } else {
            break;
        }
    }
    if (p != end) {
        free(text);
        return false;
    }
    fwrite(text, 1, n, stdout);
    free(text);
    return true;
}

void
cmd_dump_flows(int argc, char *argv[])
{
    static const struct option options[] = {
        { "no-stats", no_argument, NULL, 'n' },
        { "sort", optional_argument, NULL, 's' },
        { "rsort", optional_argument, NULL, 'r' },
        { "strict", no_argument, NULL, 't' },
        { NULL, 0, NULL, 0 },
    };
    bool no_stats = false, strict = false;
    int opt;

    optind = 0;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 'n':
            no_stats = true;
            break;
        case 's':
        case 'r':
            add_sort_key(optarg, opt == 'r');
            break;
        case 't':
            strict = true;
            break;
        default:
            fatal("dump-flows: bad option (see --help)");
        }
    }
    int i = skip_switch("dump-flows", "[OPTIONS] [SWITCH] [MATCH]", argc,
                        argv, optind, 1, LONE_SWITCH);
    if (argc - i > 1) {
        fatal("dump-flows: expected at most one MATCH");
    }
    /* --strict is taken and ignored, as ovs-ofctl does in a dump (its
     * flow statistics request is never strict), and the match may not
     * name a priority (FDP_PARSE_STATS_REQUEST). */
    (void) strict;
    json_t *params = json_pack("{s:b}", "strict", false);
    if (i < argc) {
        check_flow("dump-flows", argv[i], FDP_PARSE_MATCH_ONLY
                   | FDP_PARSE_COOKIE_SELECT | FDP_PARSE_STATS_REQUEST);
        json_object_set_new(params, "match", json_string(argv[i]));
    }
    json_object_set_new(params, "parts", json_true());
    struct dump_out out = { .no_stats = no_stats, .sort = n_sort_keys > 0 };
    if (!out.sort) {
        /* Just printed: the lines as text, made by the daemon. */
        json_object_set_new(params, "text", json_true());
        json_object_set_new(params, "no_stats", json_boolean(no_stats));
    }
    if (!out.sort && !isatty(STDOUT_FILENO)) {
        setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    }
    json_t *r = call_parts_raw("dump-flows", "dump-flows", params,
                               dump_part, out.sort ? NULL : dump_raw_part,
                               &out);
    take_message(r, &out);
    json_decref(r);
    if (out.sort) {
        qsort(out.flows, out.n, sizeof *out.flows, compare_dumped);
    }
    for (size_t k = 0; k < out.n; k++) {
        struct dumped *d = &out.flows[k];
        puts(no_stats ? d->flow : d->line);
        free(d->flow);
        free(d->line);
        fdp_flow_spec_destroy(&d->spec);
    }
    free(out.flows);
    flush_stdout("dump-flows");
}

/* ---------------------------------------------------------------------- */
/* diff-flows                                                              */

/* Adds the flows of one message of a dump to a diff-flows source. */
static void
source_add_dumped(struct flow_set *src, const json_t *flows)
{
    for (size_t i = 0; i < json_array_size(flows); i++) {
        const char *text = json_string_value(
            json_object_get(json_array_get(flows, i), "flow"));
        if (!text) {
            fatal("diff-flows: the daemon sent a flow without its text");
        }
        flow_set_add(src, "diff-flows: a flow the daemon sent", text);
    }
}

static int
source_part(const json_t *params, void *src)
{
    source_add_dumped(src, json_object_get(params, "flows"));
    return 0;
}

/* Loads the diff-flows source 'arg': the daemon for "-", else a file. */
static void
load_source(const char *arg, struct flow_set *src)
{
    if (!strcmp(arg, "-")) {
        json_t *r = call_parts("diff-flows", "dump-flows",
                               json_pack("{s:b}", "parts", true),
                               source_part, src);
        source_add_dumped(src, json_object_get(r, "flows"));
        json_decref(r);
    } else {
        if (ctl_is_switch_name(arg) && access(arg, F_OK)) {
            fatal("diff-flows: %s: no such file (the daemon's flows are "
                  "\"-\": flowdpd has one datapath)", arg);
        }
        for_each_line(arg, set_flow_line, src);
    }
    /* A file may say one flow twice: the last line is the flow, as
     * add-flows would leave it (before, "diff-flows F F" of such a file
     * reported differences). */
    flow_set_resolve(src);
}

struct diff_line {
    uint8_t table_id;           /* Sort the output, table by table... */
    const char *key;            /* ...then by text. */
    char sign;
    const char *text;
};

static int
compare_diff_lines(const void *a_, const void *b_)
{
    const struct diff_line *a = a_, *b = b_;
    if (a->table_id != b->table_id) {
        return a->table_id < b->table_id ? -1 : 1;
    }
    int c = strcmp(a->key, b->key);

    return c ? c : (a->sign == '-' ? -1 : b->sign == '-');
}

void
cmd_diff_flows(int argc, char *argv[])
{
    struct flow_set a = { .command = "diff-flows", .canonical = true };
    struct flow_set b = a;

    if (argc != 3) {
        fatal("diff-flows: expected SOURCE1 SOURCE2 (files, or - for the "
              "daemon)");
    }
    load_source(argv[1], &a);
    load_source(argv[2], &b);

    /* Both sorted by identity: walk them side by side. */
    struct diff_line *lines = calloc(a.n + b.n + 1, sizeof *lines);
    size_t n = 0;
    if (!lines) {
        fatal("out of memory");
    }
    size_t i = 0, j = 0;
    while (i < a.n || j < b.n) {
        int c = i == a.n ? 1 : j == b.n ? -1
                : compare_identity(&a.entries[i], &b.entries[j]);
        if (c < 0) {
            const struct flow_entry *x = &a.entries[i++];
            lines[n++] = (struct diff_line) { x->table_id, x->text, '-',
                                              x->text };
        } else if (c > 0) {
            const struct flow_entry *y = &b.entries[j++];
            lines[n++] = (struct diff_line) { y->table_id, y->text, '+',
                                              y->text };
        } else {
            const struct flow_entry *x = &a.entries[i++];
            const struct flow_entry *y = &b.entries[j++];
            if (strcmp(x->text, y->text)) {
                lines[n++] = (struct diff_line) { x->table_id, x->text, '-',
                                                  x->text };
                lines[n++] = (struct diff_line) { x->table_id, x->text, '+',
                                                  y->text };
            }
        }
    }
    qsort(lines, n, sizeof *lines, compare_diff_lines);
    for (size_t k = 0; k < n; k++) {
        printf("%c%s\n", lines[k].sign, lines[k].text);
    }
    flush_stdout("diff-flows");
    free(lines);
    flow_set_destroy(&a);
    flow_set_destroy(&b);
    /* As ovs-ofctl diff-flows: 2 when the sources differ. */
    exit(n ? 2 : 0);
}

/* ---------------------------------------------------------------------- */
/* Tables, ports, trace.                                                   */

static uint64_t
get_u64(const json_t *o, const char *key)
{
    return (uint64_t) json_integer_value(json_object_get(o, key));
}

/* Prints the names in JSON array 'names' (strings or integers) joined by
 * commas. */
static void
print_joined(const json_t *names)
{
    for (size_t i = 0; i < json_array_size(names); i++) {
        const json_t *v = json_array_get(names, i);
        if (i) {
            putchar(',');
        }
        if (json_is_integer(v)) {
            printf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
        } else {
            fputs(json_string_value(v) ? json_string_value(v) : "?", stdout);
        }
    }
}

/* Prints one line per sub-table of dump-tables' "subtables", in the order
 * lookups walk them.  A daemon from before the array existed sends none,
 * and then nothing is printed. */
static void
print_subtables(const json_t *subtables)
{
    for (size_t i = 0; i < json_array_size(subtables); i++) {
        const json_t *st = json_array_get(subtables, i);
        const char *kind = json_string_value(json_object_get(st, "kind"));
        json_int_t max_priority = json_integer_value(
            json_object_get(st, "max_priority"));

        printf("  %-8s flows=%" PRIu64 " max_priority=%" JSON_INTEGER_FORMAT
               " hits=%" PRIu64 " mem=%" PRIu64, kind ? kind : "?",
               get_u64(st, "flows"), max_priority, get_u64(st, "hits"),
               get_u64(st, "memory"));
        const json_t *mask = json_object_get(st, "mask");
        if (json_is_string(mask)) {
            printf(" mask=%s", json_string_value(mask));
            if (json_is_true(json_object_get(st, "keyed"))) {
                fputs(" keyed_hash", stdout);
            }
        } else {
            fputs(" fields=", stdout);
            print_joined(json_object_get(st, "fields"));
            /* Partitioned sub-tables' leaves are lists: no groups. */
            const json_t *groups = json_object_get(st, "group_bits");
            bool any_group = false;
            for (size_t g = 0; g < json_array_size(groups); g++) {
                any_group |= json_integer_value(json_array_get(groups, g))
                             != 0;
            }
            if (any_group) {
                fputs(" groups=", stdout);
                print_joined(groups);
            }
            const json_t *consts = json_object_get(st, "const_fields");
            if (json_array_size(consts)) {
                fputs(" const=", stdout);
                print_joined(consts);
            }
            if (json_object_get(st, "partitions")) {
                printf(" partitions=%" PRIu64 " depth=%" PRIu64
                       " largest=%" PRIu64, get_u64(st, "partitions"),
                       get_u64(st, "partition_depth"),
                       get_u64(st, "largest_partition"));
            }
        }
        putchar('\n');
    }
}

/* Prints the partitions of dump-tables --partitions of one table. */
static void
print_partitions(const json_t *parts)
{
    for (size_t i = 0; i < json_array_size(parts); i++) {
        const json_t *pt = json_array_get(parts, i);
        const char *kind = json_string_value(json_object_get(pt, "kind"));
        const char *path = json_string_value(json_object_get(pt, "path"));
        printf("    partition %s flows=%" PRIu64 " max_priority=%"
               JSON_INTEGER_FORMAT " hits=%" PRIu64 " mem=%" PRIu64
               " cuts=%s\n", kind ? kind : "?", get_u64(pt, "flows"),
               json_integer_value(json_object_get(pt, "max_priority")),
               get_u64(pt, "hits"), get_u64(pt, "memory"),
               path && *path ? path : "none");
    }
}

/* Prints one table of dump-tables: ovs-ofctl's "table N: active=..."
 * line (lookups, matched and missed count packets), then the table's own
 * structure. */
static void
print_table(const json_t *t)
{
    uint64_t flows = get_u64(t, "flows"), pp = get_u64(t, "pipapo_flows");

    printf("  table %" PRIu64 ": active=%" PRIu64 ", lookups=%" PRIu64
           ", matched=%" PRIu64 ", missed=%" PRIu64 "\n", get_u64(t, "table"),
           flows, get_u64(t, "lookups"), get_u64(t, "matched"),
           get_u64(t, "missed"));
    printf("           tuple space: %" PRIu64 " flows in %" PRIu64
           " masks (%" PRIu64 " on the keyed hash); pipapo: %" PRIu64
           " flows in %" PRIu64 " sub-tables\n", flows - pp,
           get_u64(t, "masks"), get_u64(t, "keyed_masks"), pp,
           get_u64(t, "pipapo_tables"));
    printf("           memory=%" PRIu64 " bytes\n", get_u64(t, "memory"));
    print_subtables(json_object_get(t, "subtables"));
    print_partitions(json_object_get(t, "partitions"));
}

void
cmd_dump_tables(int argc, char *argv[])
{
    bool partitions = argc >= 2 && !strcmp(argv[1], "--partitions");
    int i = 1 + partitions;
    if (i >= argc || strncmp(argv[i], "--", 2)) {
        i = skip_switch("dump-tables", "[--partitions] [SWITCH]", argc, argv,
                        i, 0, LONE_ARG);
    }
    if (i != argc) {
        fatal("dump-tables: %s: unknown argument (the only option is "
              "--partitions)", argv[i]);
    }
    json_t *r = call("dump-tables", "dump-tables",
                     json_pack("{s:b}", "partitions", partitions));
    const json_t *tables = json_object_get(r, "tables");
    if (!json_is_array(tables)) {
        fatal("dump-tables: the daemon's reply has no \"tables\" (an older "
              "flowdpd?)");
    }
    for (size_t k = 0; k < json_array_size(tables); k++) {
        print_table(json_array_get(tables, k));
    }
    json_decref(r);
    flush_stdout("dump-tables");
}

void
cmd_show(int argc, char *argv[])
{
    if (skip_switch("show", "[SWITCH]", argc, argv, 1, 0, LONE_ARG)
        != argc) {
        fatal("show: takes no arguments");
    }
    json_t *r = call("show", "show", json_object());
    json_t *ports = json_object_get(r, "ports");
    printf("flowdpd: %zu port%s, flow table %s\n", json_array_size(ports),
           json_array_size(ports) == 1 ? "" : "s",
           json_is_true(json_object_get(r, "durable")) ? "durable (--db)"
                                                       : "in memory");
    for (size_t i = 0; i < json_array_size(ports); i++) {
        json_t *p = json_array_get(ports, i);
        const char *error = json_string_value(json_object_get(p, "error"));
        printf("  port %2" PRIu64 ": %s\n", get_u64(p, "port"),
               json_string_value(json_object_get(p, "spec")));
        printf("           rx pkts=%" PRIu64 ", bytes=%" PRIu64 ", drop=%"
               PRIu64 ", errs=%" PRIu64 "\n", get_u64(p, "rx_packets"),
               get_u64(p, "rx_bytes"), get_u64(p, "rx_dropped"),
               get_u64(p, "rx_errors"));
        printf("           tx pkts=%" PRIu64 ", bytes=%" PRIu64 ", drop=%"
               PRIu64 "\n", get_u64(p, "tx_packets"), get_u64(p, "tx_bytes"),
               get_u64(p, "tx_dropped"));
        const char *what = json_string_value(json_object_get(p,
                                                             "describe"));
        if (what && *what) {
            printf("           %s\n", what);
        }
        if (error && *error) {
            printf("           error: %s\n", error);
        }
    }
    printf("  datapath: packets=%" PRIu64 ", emc_hits=%" PRIu64
           ", table_hits=%" PRIu64 ", missed=%" PRIu64 ", ttl_expired=%"
           PRIu64 "\n", get_u64(r, "packets"), get_u64(r, "emc_hits"),
           get_u64(r, "table_hits"), get_u64(r, "missed"),
           get_u64(r, "ttl_expired"));
    printf("  pipeline: resubmit_limit_drops=%" PRIu64 "\n",
           get_u64(r, "limit_drops"));
    json_decref(r);
    ctl_show_openflow();
    flush_stdout("show");
}

/* Prints one counter of dump-ports, "?" for one flowdpd does not keep,
 * as ovs-ofctl prints a counter the switch does not report. */
static void
print_port_counter(const char *name, const json_t *port, const char *key,
                   const char *end)
{
    const json_t *v = key ? json_object_get(port, key) : NULL;

    if (json_is_integer(v)) {
        printf("%s=%" JSON_INTEGER_FORMAT "%s", name, json_integer_value(v),
               end);
    } else {
        printf("%s=?%s", name, end);
    }
}

/* dump-ports [SWITCH] [PORT]: the port counters of "show" in the format of
 * ovs-ofctl dump-ports (OpenFlow 1.0, its default: no duration line).
 * The xid is the one ovs-ofctl's first request gets. */
void
cmd_dump_ports(int argc, char *argv[])
{
    int i = skip_switch("dump-ports", "[SWITCH] [PORT]", argc, argv, 1, 1,
                        LONE_ARG);

    /* Alone, "br0" names the switch and "1" (a number) a port. */
    if (i == 1 && argc == 2 && ctl_is_switch_name(argv[1])
        && strspn(argv[1], "0123456789") != strlen(argv[1])) {
        i++;
    }
    if (argc - i > 1) {
        fatal("dump-ports: expected [SWITCH] [PORT]");
    }
    bool one = argc - i == 1;
    uint32_t port_no = one ? (uint32_t) parse_u64(argv[i], 0xfeff,
                                                  "dump-ports: PORT") : 0;
    json_t *r = call("dump-ports", "show", json_object());
    const json_t *ports = json_object_get(r, "ports");
    size_t n = 0;
    for (size_t k = 0; k < json_array_size(ports); k++) {
        n += !one || get_u64(json_array_get(ports, k), "port") == port_no;
    }
    printf("OFPST_PORT reply (xid=0x2): %zu ports\n", n);
    for (size_t k = 0; k < json_array_size(ports); k++) {
        const json_t *p = json_array_get(ports, k);
        uint64_t no = get_u64(p, "port");
        if (one && no != port_no) {
            continue;
        }
        printf("  port %s%" PRIu64 ": rx ", no < 10 ? " " : "", no);
        print_port_counter("pkts", p, "rx_packets", ", ");
        print_port_counter("bytes", p, "rx_bytes", ", ");
        print_port_counter("drop", p, "rx_dropped", ", ");
        print_port_counter("errs", p, "rx_errors", ", ");
        print_port_counter("frame", p, NULL, ", ");
        print_port_counter("over", p, NULL, ", ");
        print_port_counter("crc", p, NULL, "\n");
        fputs("           tx ", stdout);
        print_port_counter("pkts", p, "tx_packets", ", ");
        print_port_counter("bytes", p, "tx_bytes", ", ");
        print_port_counter("drop", p, "tx_dropped", ", ");
        print_port_counter("errs", p, NULL, ", ");
        print_port_counter("coll", p, NULL, "\n");
    }
    json_decref(r);
    flush_stdout("dump-ports");
}

/* dump-aggregate's sums. */
struct aggregate {
    uint64_t packets, bytes, flows;
};

/* The value of "NAME=" in a dump-flows line. */
static uint64_t
line_counter(const char *line, const char *name)
{
    const char *p = strstr(line, name);

    if (!p) {
        fatal("dump-aggregate: the daemon sent a line without %s", name);
    }
    return strtoull(p + strlen(name), NULL, 10);
}

static void
aggregate_flows(const json_t *flows, struct aggregate *agg)
{
    for (size_t i = 0; i < json_array_size(flows); i++) {
        const char *line = json_string_value(
            json_object_get(json_array_get(flows, i), "line"));
        if (!line) {
            fatal("dump-aggregate: the daemon sent a flow without its text");
        }
        agg->packets += line_counter(line, " n_packets=");
        agg->bytes += line_counter(line, " n_bytes=");
        agg->flows++;
    }
}

static int
aggregate_part(const json_t *params, void *agg)
{
    aggregate_flows(json_object_get(params, "flows"), agg);
    return 0;
}

/* dump-aggregate [--strict] [SWITCH] [MATCH]: the sums of the flows
 * dump-flows would list (--strict ignored, as ovs-ofctl), in the format of ovs-ofctl dump-aggregate (its
 * default protocol, OpenFlow 1.0 with Nicira extensions, and the xid its
 * request gets). */
void
cmd_dump_aggregate(int argc, char *argv[])
{
    bool strict;
    int i = strict_option("dump-aggregate", argc, argv, &strict);

    i = skip_switch("dump-aggregate", "[--strict] [SWITCH] [MATCH]", argc,
                    argv, i, 1, LONE_SWITCH);
    if (argc - i > 1) {
        fatal("dump-aggregate: expected at most one MATCH");
    }
    /* --strict ignored, no priority: as dump-flows. */
    (void) strict;
    json_t *params = json_pack("{s:b, s:b}", "strict", false, "parts", true);
    if (i < argc) {
        check_flow("dump-aggregate", argv[i], FDP_PARSE_MATCH_ONLY
                   | FDP_PARSE_COOKIE_SELECT | FDP_PARSE_STATS_REQUEST);
        json_object_set_new(params, "match", json_string(argv[i]));
    }
    struct aggregate agg = { 0, 0, 0 };
    json_t *r = call_parts("dump-aggregate", "dump-flows", params,
                           aggregate_part, &agg);
    aggregate_flows(json_object_get(r, "flows"), &agg);
    json_decref(r);
    printf("NXST_AGGREGATE reply (xid=0x4): packet_count=%" PRIu64
           " byte_count=%" PRIu64 " flow_count=%" PRIu64 "\n", agg.packets,
           agg.bytes, agg.flows);
    flush_stdout("dump-aggregate");
}

void
cmd_add_port(int argc, char *argv[])
{
    /* VLAN settings (ctl-normal.c) may follow the spec: they have an
     * '=' and the switch name does not. */
    int n_vlan = 0;
    while (n_vlan < argc - 1 && strchr(argv[argc - 1 - n_vlan], '=')
           && strchr(argv[argc - 1 - n_vlan], ':') == NULL) {
        n_vlan++;
    }
    int i = skip_switch("add-port", "[SWITCH] PORT TYPE:ARGS [VLAN...]",
                        argc - n_vlan, argv, 1, 2, LONE_ARG);
    if (argc - n_vlan - i != 2) {
        fatal("add-port: expected PORT TYPE:ARGS [vlan_mode=MODE] "
              "[tag=VLAN] [trunks=VLAN[,VLAN...]]");
    }
    uint32_t port = (uint32_t) parse_u64(argv[i], 0xfeff, "add-port");
    json_t *vlan = ctl_vlan_settings("add-port", argc - n_vlan, argc, argv);
    json_decref(call("add-port", "add-port",
                     json_pack("{s:i, s:s, s:o}", "port", (int) port, "spec",
                               argv[i + 1], "vlan", vlan)));
}

void
cmd_del_port(int argc, char *argv[])
{
    int i = skip_switch("del-port", "[SWITCH] PORT", argc, argv, 1, 1,
                        LONE_ARG);
    if (argc - i != 1) {
        fatal("del-port: expected PORT");
    }
    uint32_t port = (uint32_t) parse_u64(argv[i], 0xfeff, "del-port");
    json_decref(call("del-port", "del-port",
                     json_pack("{s:i}", "port", (int) port)));
}

/* trace [--flows=FILE] [--ct-next=FLAGS]... PACKET: with --flows,
 * offline: FILE's flows in a pipeline of this process's own, no daemon.
 * Each --ct-next (also "--ct-next FLAGS") gives the ct_state of the next
 * ct(table=N) continuation, as ofproto/trace's. */
void
cmd_trace(int argc, char *argv[])
{
    const char *flows = NULL;
    uint8_t ct_next[64];
    size_t n_ct_next = 0;
    struct fdp_key key;
    char *msg = NULL;

    for (;;) {
        const char *arg = argc >= 2 ? argv[1] : "";
        const char *flags = NULL;
        if (!strncmp(arg, "--flows=", 8)) {
            flows = arg + 8;
        } else if (!strncmp(arg, "--ct-next=", 10)) {
            flags = arg + 10;
        } else if (!strcmp(arg, "--ct-next")) {
            if (argc < 3) {
                fatal("trace: --ct-next: missing ct_state flags (e.g. "
                      "trk|est)");
            }
            flags = argv[2];
            argv++;
            argc--;
        } else {
            break;
        }
        if (flags) {
            const char *why = parse_ct_next(flags, &ct_next[n_ct_next]);
            if (why) {
                fatal("trace: --ct-next=%s: %s", flags, why);
            }
            if (++n_ct_next == (sizeof ct_next / sizeof ct_next[0])) {
                fatal("trace: more than %zu --ct-next",
                      (sizeof ct_next / sizeof ct_next[0]) - 1);
            }
        }
        argv++;
        argc--;
    }
    if (argc == 3 && ctl_is_switch_name(argv[1])) {
        /* "trace br0 PACKET", as ovs-appctl ofproto/trace. */
        argv++;
        argc--;
    }
    if (argc != 2 || !strncmp(argv[1], "--", 2)) {
        fatal("trace: expected [--flows=FILE] [--ct-next=FLAGS]... PACKET "
              "(exact fields, e.g. in_port=1,tcp,nw_dst=10.0.0.1,"
              "tp_dst=80)");
    }
    int error = fdp_packet_parse(argv[1], &key, &msg);
    if (error) {
        fatal("trace: %s", msg ? msg : strerror(error));
    }
    json_t *r;
    if (flows) {
        r = trace_offline("trace", flows, &key, ct_next, n_ct_next);
    } else {
        json_t *states = json_array();
        for (size_t i = 0; states && i < n_ct_next; i++) {
            if (json_array_append_new(states, json_integer(ct_next[i]))) {
                json_decref(states);
                states = NULL;
            }
        }
        if (!states) {
            fatal("trace: out of memory");
        }
        r = call("trace", "trace", json_pack("{s:s, s:o}", "packet",
                                             argv[1], "ct_next", states));
    }
    trace_print(stdout, argv[1], r);
    json_decref(r);
    flush_stdout("trace");
}

/* ---- Fragment reassembly (ipf-*), as ovs-appctl dpctl/ipf-* ---- */

/* "v4" or "v6" (Open vSwitch reads the first two characters). */
static bool
ipf_family(const char *command, const char *arg)
{
    if (!strncmp(arg, "v4", 2) || !strncmp(arg, "v6", 2)) {
        return arg[1] == '6';
    }
    fatal("%s: \"%s\": parameter missing: 'v4' for IPv4 or 'v6' for IPv6",
          command, arg);
}

static void
ipf_set_enabled(const char *command, int argc, char *argv[], bool enabled)
{
    int i = skip_switch(command, "[SWITCH] v4|v6", argc, argv, 1, 1,
                        LONE_ARG);
    if (argc - i != 1) {
        fatal("%s: expected v4 or v6", command);
    }
    bool v6 = ipf_family(command, argv[i]);
    json_decref(call(command, "ipf-set-enabled",
                     json_pack("{s:b, s:b}", "v6", v6, "enabled", enabled)));
    printf("%s fragmentation reassembly successful\n",
           enabled ? "enabling" : "disabling");
    flush_stdout(command);
}

/* ipf-set-enabled [SWITCH] v4|v6 */
void
cmd_ipf_set_enabled(int argc, char *argv[])
{
    ipf_set_enabled("ipf-set-enabled", argc, argv, true);
}

/* ipf-set-disabled [SWITCH] v4|v6 */
void
cmd_ipf_set_disabled(int argc, char *argv[])
{
    ipf_set_enabled("ipf-set-disabled", argc, argv, false);
}

/* ipf-set-min-frag [SWITCH] v4|v6 MINFRAG */
void
cmd_ipf_set_min_frag(int argc, char *argv[])
{
    const char *command = "ipf-set-min-frag";
    int i = skip_switch(command, "[SWITCH] v4|v6 MINFRAG", argc, argv, 1, 2,
                        LONE_ARG);
    if (argc - i != 2) {
        fatal("%s: expected v4|v6 MINFRAG", command);
    }
    bool v6 = ipf_family(command, argv[i]);
    uint32_t size = (uint32_t) parse_u64(argv[i + 1], UINT32_MAX, command);
    json_decref(call(command, "ipf-set-min-frag",
                     json_pack("{s:b, s:I}", "v6", v6, "size",
                               (json_int_t) size)));
    printf("setting minimum fragment size successful\n");
    flush_stdout(command);
}

/* ipf-set-max-nfrags [SWITCH] MAXFRAGS */
void
cmd_ipf_set_max_nfrags(int argc, char *argv[])
{
    const char *command = "ipf-set-max-nfrags";
    int i = skip_switch(command, "[SWITCH] MAXFRAGS", argc, argv, 1, 1,
                        LONE_ARG);
    if (argc - i != 1) {
        fatal("%s: expected MAXFRAGS", command);
    }
    uint32_t n = (uint32_t) parse_u64(argv[i], UINT32_MAX, command);
    json_decref(call(command, "ipf-set-max-nfrags",
                     json_pack("{s:I}", "n", (json_int_t) n)));
    printf("setting maximum fragments successful\n");
    flush_stdout(command);
}

/* A counter of the daemon's ipf-get-status reply; exits if missing. */
static json_int_t
ipf_number(const json_t *obj, const char *name)
{
    const json_t *v = json_object_get(obj, name);

    if (json_is_boolean(v)) {
        return json_is_true(v);
    }
    if (!json_is_integer(v)) {
        fatal("ipf-get-status: the daemon's reply has no \"%s\"", name);
    }
    return json_integer_value(v);
}

static void
ipf_print_family(const json_t *r, const char *family)
{
    static const struct {
        const char *key, *label;
    } counters[] = {
        { "accepted", "accepted" },
        { "completed", "completed" },
        { "expired", "expired" },
        { "too_small", "too small" },
        { "overlapped", "overlapped" },
        { "purged", "purged" },
    };
    const json_t *f = json_object_get(r, family);

    printf("        min %s frag size: %" JSON_INTEGER_FORMAT "\n", family,
           ipf_number(f, "min_frag_size"));
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
        printf("        %s frags %s: %" JSON_INTEGER_FORMAT "\n", family,
               counters[i].label, ipf_number(f, counters[i].key));
    }
}

/* ipf-get-status [SWITCH]: in the format of ovs-appctl
 * dpctl/ipf-get-status. */
void
cmd_ipf_get_status(int argc, char *argv[])
{
    const char *command = "ipf-get-status";
    int i = skip_switch(command, "[SWITCH]", argc, argv, 1, 0, LONE_SWITCH);
    if (argc - i != 0) {
        fatal("%s: expected no arguments but a switch name", command);
    }
    json_t *r = call(command, "ipf-get-status", json_object());
    printf("        Fragmentation Module Status\n");
    printf("        ---------------------------\n");
    printf("        v4 enabled: %" JSON_INTEGER_FORMAT "\n",
           ipf_number(json_object_get(r, "v4"), "enabled"));
    printf("        v6 enabled: %" JSON_INTEGER_FORMAT "\n",
           ipf_number(json_object_get(r, "v6"), "enabled"));
    printf("        max num frags (v4/v6): %" JSON_INTEGER_FORMAT "\n",
           ipf_number(r, "nfrag_max"));
    printf("        num frag: %" JSON_INTEGER_FORMAT "\n",
           ipf_number(r, "nfrag"));
    ipf_print_family(r, "v4");
    ipf_print_family(r, "v6");
    json_decref(r);
    flush_stdout(command);
}
