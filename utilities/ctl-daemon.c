/*
 * flowdp-ctl commands that talk to flowdpd over the control channel
 * (utilities/rpc.h).  Flows are checked here first, so that a mistake is
 * reported with its file, line and column before anything is sent; the
 * daemon checks them again (it trusts no client).
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
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

/* Sends one request and returns its result, passing each part of it that
 * comes first to 'part' (see rpc_call_parts()); exits with the daemon's
 * message on failure. */
static json_t *
call_parts(const char *command, const char *method, json_t *params,
           int (*part)(const json_t *params, void *aux), void *aux)
{
    struct rpc_conn *conn;
    char *msg = NULL;
    json_t *result;
    int error = rpc_connect(ctl_remote, &ctl_tls, &conn, &msg);

    if (error) {
        fatal("%s: %s", command, msg ? msg : strerror(error));
    }
    error = rpc_call_parts(conn, method, params, part, aux, &result, &msg);
    rpc_close(conn);
    if (error) {
        fatal("%s: %s", command, msg ? msg : strerror(error));
    }
    return result;
}

/* Sends one request and returns its result; exits with the daemon's
 * message on failure. */
static json_t *
call(const char *command, const char *method, json_t *params)
{
    return call_parts(command, method, params, NULL, NULL);
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

/* Parses "[--strict]" and returns the index of the first other
 * argument. */
static int
strict_option(int argc, char *argv[], bool *strict)
{
    int i = 1;

    *strict = false;
    if (i < argc && !strcmp(argv[i], "--strict")) {
        *strict = true;
        i++;
    }
    return i;
}

void
cmd_add_flow(int argc, char *argv[])
{
    if (argc != 2) {
        fatal("add-flow: expected one FLOW");
    }
    check_flow("add-flow", argv[1], 0);
    json_decref(call("add-flow", "add-flows",
                     json_pack("{s:[s]}", "flows", argv[1])));
}

void
cmd_add_flows(int argc, char *argv[])
{
    if (argc != 2) {
        fatal("add-flows: expected FILE (or - for stdin)");
    }
    json_t *flows = read_flows("add-flows", argv[1]);
    json_decref(call("add-flows", "add-flows",
                     json_pack("{s:o}", "flows", flows)));
}

void
cmd_mod_flows(int argc, char *argv[])
{
    bool strict;
    int i = strict_option(argc, argv, &strict);

    if (argc - i != 1) {
        fatal("mod-flows: expected [--strict] FLOW");
    }
    check_flow("mod-flows", argv[i], FDP_PARSE_COOKIE_MASK);
    json_decref(call("mod-flows", "mod-flows",
                     json_pack("{s:s, s:b}", "flow", argv[i], "strict",
                               strict)));
}

void
cmd_del_flows(int argc, char *argv[])
{
    bool strict;
    int i = strict_option(argc, argv, &strict);

    if (argc - i > 1) {
        fatal("del-flows: expected [--strict] [MATCH]");
    }
    const char *match = argc - i == 1 ? argv[i] : "";
    check_flow("del-flows", match,
               FDP_PARSE_MATCH_ONLY | FDP_PARSE_COOKIE_MASK);
    json_decref(call("del-flows", "del-flows",
                     json_pack("{s:s, s:b}", "match", match, "strict",
                               strict)));
}

void
cmd_replace_flows(int argc, char *argv[])
{
    if (argc != 2) {
        fatal("replace-flows: expected FILE (or - for stdin)");
    }
    json_t *flows = read_flows("replace-flows", argv[1]);
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

/* Tables stay in order (a sorted dump sorts the flows of each table);
 * then, as ovs-ofctl: a flow that does not match a sort field comes after
 * every flow that does, in either direction; wildcarded bits count as
 * zero. */
static int
compare_dumped(const void *a_, const void *b_)
{
    const struct dumped *a = a_, *b = b_;

    if (a->spec.table_id != b->spec.table_id) {
        return a->spec.table_id < b->spec.table_id ? -1 : 1;
    }

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
    /* Equal keys: by text, so that a sorted dump is repeatable. */
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

static int
dump_part(const json_t *params, void *out)
{
    take_flows(json_object_get(params, "flows"), out);
    return 0;
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
    if (argc - optind > 1) {
        fatal("dump-flows: expected at most one MATCH");
    }
    json_t *params = json_pack("{s:b}", "strict", strict);
    if (optind < argc) {
        check_flow("dump-flows", argv[optind],
                   FDP_PARSE_MATCH_ONLY | FDP_PARSE_COOKIE_MASK);
        json_object_set_new(params, "match", json_string(argv[optind]));
    }
    json_object_set_new(params, "parts", json_true());
    struct dump_out out = { .no_stats = no_stats, .sort = n_sort_keys > 0 };
    if (!out.sort && !isatty(STDOUT_FILENO)) {
        setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    }
    json_t *r = call_parts("dump-flows", "dump-flows", params, dump_part,
                           &out);
    take_flows(json_object_get(r, "flows"), &out);
    json_decref(r);
    if (out.sort) {
        qsort(out.flows, out.n, sizeof *out.flows, compare_dumped);
    }
    for (size_t i = 0; i < out.n; i++) {
        struct dumped *d = &out.flows[i];
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

/* The flows of a source: a file, or the daemon for "-", in canonical
 * form. */
struct source {
    char **texts;
    struct fdp_flow_spec *specs;
    size_t n, alloc;
};

static void
source_add(struct source *src, const char *text)
{
    if (src->n == src->alloc) {
        src->alloc = src->alloc ? 2 * src->alloc : 64;
        src->texts = realloc(src->texts, src->alloc * sizeof *src->texts);
        src->specs = realloc(src->specs, src->alloc * sizeof *src->specs);
        if (!src->texts || !src->specs) {
            fatal("out of memory");
        }
    }
    struct fdp_flow_spec *spec = &src->specs[src->n];
    if (fdp_flow_parse(text, 0, spec, NULL)) {
        fatal("diff-flows: the daemon sent a flow that does not parse");
    }
    src->texts[src->n] = fdp_flow_format(spec);
    if (!src->texts[src->n]) {
        fatal("out of memory");
    }
    src->n++;
}

/* Adds the flows of one message of a dump. */
static void
source_add_dumped(struct source *src, const json_t *flows)
{
    for (size_t i = 0; i < json_array_size(flows); i++) {
        source_add(src, json_string_value(
                       json_object_get(json_array_get(flows, i), "flow")));
    }
}

static int
source_part(const json_t *params, void *src)
{
    source_add_dumped(src, json_object_get(params, "flows"));
    return 0;
}

static void
load_source(const char *arg, struct source *src)
{
    json_t *flows;
    json_t *r = NULL;

    if (!strcmp(arg, "-")) {
        r = call_parts("diff-flows", "dump-flows",
                       json_pack("{s:b}", "parts", true), source_part, src);
        source_add_dumped(src, json_object_get(r, "flows"));
    } else {
        flows = read_flows("diff-flows", arg);
        for (size_t i = 0; i < json_array_size(flows); i++) {
            source_add(src, json_string_value(json_array_get(flows, i)));
        }
        json_decref(flows);
    }
    json_decref(r);
}

/* The flow of 'src' with the same table, match and priority as 'spec' (a
 * flow's identity), or -1. */
static long
source_find(const struct source *src, const struct fdp_flow_spec *spec)
{
    for (size_t i = 0; i < src->n; i++) {
        if (src->specs[i].table_id == spec->table_id
            && src->specs[i].priority == spec->priority
            && fdp_match_equal(src->specs[i].match, spec->match)) {
            return (long) i;
        }
    }
    return -1;
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
    struct source a = { NULL, NULL, 0, 0 }, b = { NULL, NULL, 0, 0 };

    if (argc != 3) {
        fatal("diff-flows: expected SOURCE1 SOURCE2 (files, or - for the "
              "daemon)");
    }
    load_source(argv[1], &a);
    load_source(argv[2], &b);

    struct diff_line *lines = calloc(a.n + b.n + 1, sizeof *lines);
    size_t n = 0;
    if (!lines) {
        fatal("out of memory");
    }
    for (size_t i = 0; i < a.n; i++) {
        long j = source_find(&b, &a.specs[i]);
        uint8_t t = a.specs[i].table_id;
        if (j < 0 || strcmp(a.texts[i], b.texts[j])) {
            lines[n++] = (struct diff_line) { t, a.texts[i], '-', a.texts[i] };
        }
        if (j >= 0 && strcmp(a.texts[i], b.texts[j])) {
            lines[n++] = (struct diff_line) { t, a.texts[i], '+', b.texts[j] };
        }
    }
    for (size_t j = 0; j < b.n; j++) {
        if (source_find(&a, &b.specs[j]) < 0) {
            lines[n++] = (struct diff_line) { b.specs[j].table_id, b.texts[j],
                                              '+', b.texts[j] };
        }
    }
    qsort(lines, n, sizeof *lines, compare_diff_lines);
    for (size_t i = 0; i < n; i++) {
        printf("%c%s\n", lines[i].sign, lines[i].text);
    }
    flush_stdout("diff-flows");
    free(lines);
    struct source *srcs[] = { &a, &b };
    for (size_t s = 0; s < 2; s++) {
        for (size_t i = 0; i < srcs[s]->n; i++) {
            free(srcs[s]->texts[i]);
            fdp_flow_spec_destroy(&srcs[s]->specs[i]);
        }
        free(srcs[s]->texts);
        free(srcs[s]->specs);
    }
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
    bool partitions = argc == 2 && !strcmp(argv[1], "--partitions");
    if (argc != 1 && !partitions) {
        fatal("dump-tables: %s: unknown argument (the only option is "
              "--partitions)", argv[1]);
    }
    json_t *r = call("dump-tables", "dump-tables",
                     json_pack("{s:b}", "partitions", partitions));
    const json_t *tables = json_object_get(r, "tables");
    if (!json_is_array(tables)) {
        fatal("dump-tables: the daemon's reply has no \"tables\" (an older "
              "flowdpd?)");
    }
    for (size_t i = 0; i < json_array_size(tables); i++) {
        print_table(json_array_get(tables, i));
    }
    json_decref(r);
    flush_stdout("dump-tables");
}

void
cmd_show(int argc, char *argv[])
{
    (void) argv;
    if (argc != 1) {
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
    flush_stdout("show");
}

void
cmd_add_port(int argc, char *argv[])
{
    if (argc != 3) {
        fatal("add-port: expected PORT TYPE:ARGS");
    }
    uint32_t port = (uint32_t) parse_u64(argv[1], 0xfeff, "add-port");
    json_decref(call("add-port", "add-port",
                     json_pack("{s:i, s:s}", "port", (int) port, "spec",
                               argv[2])));
}

void
cmd_del_port(int argc, char *argv[])
{
    if (argc != 2) {
        fatal("del-port: expected PORT");
    }
    uint32_t port = (uint32_t) parse_u64(argv[1], 0xfeff, "del-port");
    json_decref(call("del-port", "del-port",
                     json_pack("{s:i}", "port", (int) port)));
}

/* trace [--flows=FILE] PACKET: with --flows, offline: FILE's flows in a
 * pipeline of this process's own, no daemon. */
void
cmd_trace(int argc, char *argv[])
{
    const char *flows = NULL;
    struct fdp_key key;
    char *msg = NULL;

    if (argc == 3 && !strncmp(argv[1], "--flows=", 8)) {
        flows = argv[1] + 8;
        argv++;
        argc--;
    }
    if (argc != 2 || !strncmp(argv[1], "--", 2)) {
        fatal("trace: expected [--flows=FILE] PACKET (exact fields, e.g. "
              "in_port=1,tcp,nw_dst=10.0.0.1,tp_dst=80)");
    }
    int error = fdp_packet_parse(argv[1], &key, &msg);
    if (error) {
        fatal("trace: %s", msg ? msg : strerror(error));
    }
    json_t *r = (flows ? trace_offline("trace", flows, &key)
                 : call("trace", "trace", json_pack("{s:s}", "packet",
                                                    argv[1])));
    trace_print(stdout, argv[1], r);
    json_decref(r);
    flush_stdout("trace");
}
