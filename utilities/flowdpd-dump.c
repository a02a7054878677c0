/*
 * flowdpd's dumps: the methods whose replies grow with the tables,
 * dump-flows and dump-tables.
 *
 * dump-flows writes its reply as JSON text (lib/ds.h) as it walks the
 * tables, rather than building a jansson object per flow and encoding the
 * whole array at the end: for 200,000 flows that was 1.2 million objects
 * and a 70 MB string made at once.  A client that asks for "parts" gets
 * the flows in messages of about DUMP_PART_BYTES each, notifications
 *   {"jsonrpc":"2.0","method":"dump-flows.part","params":{"id":ID,
 *    "flows":[...]}}
 * followed by the reply with the last flows, so that no message is
 * longer than a small bound however many flows there are; one that does
 * not gets them all in the reply, as before.  The walk is one read-side
 * critical section either way, so the dump is a snapshot of the tables.
 * Each part is written to the socket as far as it takes it as soon as it
 * is made, so that the client works on one part while the next is made.
 *
 * A client that only prints the dump asks for "text": then each message
 * carries the lines as one JSON string, "text":"LINE\nLINE\n...", the
 * dump-flows lines (with "no_stats", the flows without statistics), and
 * the reply adds "n", the number of flows.  That is one formatting per
 * flow here, instead of two (the flow and its line) and five members, and
 * one string to decode there instead of an object per flow: it made
 * flowdp-ctl dump-flows of 200,000 flows several times faster (the figures
 * are in docs/PERFORMANCE.md).
 *
 * dump-tables reports each table's counters and its sub-tables in lookup
 * walk order (see flowdpd-methods.c for the reply's members).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ds.h"
#include "utilities/flowdpd.h"
#include "utilities/rpc.h"
#include "utilities/tool.h"

/* The size at which dump-flows sends a part (see above): large enough
 * that the per-message framing is noise, small enough to bound a
 * client's message buffer. */
#define DUMP_PART_BYTES (1u << 20)

/* Appends ',"KEY":V'. */
static void
put_u64(struct fdp__ds *ds, const char *key, uint64_t v)
{
    fdp__ds_printf(ds, ",\"%s\":%" PRIu64, key, v);
}

/* One dump-flows in progress. */
struct dump {
    const struct fdp_table_filter *filter;
    int64_t now;
    struct rpc_conn *conn;
    const char *id;             /* The request's id, as JSON text. */
    bool parts;                 /* Send parts of DUMP_PART_BYTES. */
    bool text;                  /* Lines in one string (see above). */
    bool no_stats;              /* With 'text': flows, not lines. */
    struct fdp__ds msg;         /* The message being written. */
    size_t n_in_msg;            /* Flows in 'msg'. */
    size_t n_flows;             /* Flows in all messages. */
    size_t prefix_len;          /* Bytes of 'msg' before its first flow. */
    bool failed;                /* Out of memory. */
};

/* Starts the next message of 'd': a part, or the reply when 'last'. */
static void
dump_start_msg(struct dump *d, bool last)
{
    fdp__ds_clear(&d->msg);
    d->n_in_msg = 0;
    if (last) {
        fdp__ds_put(&d->msg, "{\"jsonrpc\":\"2.0\",\"id\":");
        fdp__ds_put(&d->msg, d->id);
        fdp__ds_put(&d->msg, ",\"result\":{");
    } else {
        fdp__ds_put(&d->msg, "{\"jsonrpc\":\"2.0\",\"method\":\"dump-flows."
                    "part\",\"params\":{\"id\":");
        fdp__ds_put(&d->msg, d->id);
        fdp__ds_putc(&d->msg, ',');
    }
    fdp__ds_put(&d->msg, d->text ? "\"text\":\"" : "\"flows\":[");
    d->prefix_len = d->msg.len;
}

/* Ends the message of 'd' (the reply when 'last') and queues it. */
static void
dump_send_msg(struct dump *d, bool last)
{
    if (d->text) {
        fdp__ds_putc(&d->msg, '"');
        if (last) {
            fdp__ds_printf(&d->msg, ",\"n\":%zu", d->n_flows);
        }
        fdp__ds_put(&d->msg, "}}");
    } else {
        fdp__ds_put(&d->msg, "]}}");
    }
    if (fdp__ds_failed(&d->msg)
        || rpc_queue_text(d->conn, d->msg.s, d->msg.len)) {
        d->failed = true;
    } else if (!last) {
        /* An error here closes the connection in its next run. */
        rpc_flush(d->conn);
    }
}

/* Appends the flow of 'spec' to the message of a "text" dump. */
static void
dump_text(struct dump *d, const struct fdp_flow_spec *spec,
          const struct fdp_rule_stats *st)
{
    char *line = (d->no_stats ? fdp_flow_format(spec)
                  : fdp_flow_format_stats(spec, st, d->now));

    if (!line) {
        d->failed = true;
        return;
    }
    fdp__ds_put_json_chars(&d->msg, line);
    fdp__ds_put(&d->msg, "\\n");
    d->n_in_msg++;
    d->n_flows++;
    free(line);
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
    if (d->text) {
        dump_text(d, &spec, &st);
        d->failed |= fdp__ds_failed(&d->msg);
        if (d->parts && !d->failed && d->msg.len >= DUMP_PART_BYTES) {
            dump_send_msg(d, false);
            dump_start_msg(d, false);
        }
        return !d->failed;
    }
    char *text = fdp_flow_format(&spec);
    char *line = fdp_flow_format_stats(&spec, &st, d->now);
    if (!text || !line) {
        d->failed = true;
    } else {
        struct fdp__ds *t = &d->msg;
        fdp__ds_put(t, d->n_in_msg++ ? ",{\"flow\":" : "{\"flow\":");
        d->n_flows++;
        fdp__ds_put_json_string(t, text);
        fdp__ds_put(t, ",\"line\":");
        fdp__ds_put_json_string(t, line);
        fdp__ds_printf(t, ",\"priority\":%d", spec.priority);
        put_u64(t, "seq", fdp_rule_get_seq(rule));
        put_u64(t, "n_packets", st.n_packets);
        put_u64(t, "n_bytes", st.n_bytes);
        fdp__ds_putc(t, '}');
        d->failed |= fdp__ds_failed(t);
        if (d->parts && !d->failed && t->len >= DUMP_PART_BYTES) {
            dump_send_msg(d, false);
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
bool
h_dump(struct server *s, struct rpc_conn *c, const json_t *req,
       const json_t *p, struct op_result *r)
{
    struct fdp_flow_spec spec;
    struct fdp_table_filter filter;
    uint8_t table;
    const json_t *m = json_object_get(p, "match");
    const json_t *parts = json_object_get(p, "parts");
    const json_t *text = json_object_get(p, "text");
    const json_t *no_stats = json_object_get(p, "no_stats");

    if ((parts && !json_is_boolean(parts)) || (text && !json_is_boolean(text))
        || (no_stats && !json_is_boolean(no_stats))) {
        op_fail(r, RPC_INVALID_PARAMS, "\"%s\": expected true or false",
                parts && !json_is_boolean(parts) ? "parts"
                : text && !json_is_boolean(text) ? "text" : "no_stats");
        return false;
    }
    if (parse_filter(p, "match", FDP_PARSE_MATCH_ONLY
                     | FDP_PARSE_COOKIE_SELECT, &spec, &filter,
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
        .text = json_is_true(text), .no_stats = json_is_true(no_stats),
    };
    dump_start_msg(&d, !d.parts);
    fdp_table_read_lock();
    /* Table by table, in order, as ovs-ofctl dump-flows lists them. */
    fdp_pipeline_for_each(s->pipeline, table, dump_one, &d);
    fdp_table_read_unlock();
    fdp_flow_spec_destroy(&spec);
    if (d.parts && !d.failed) {
        /* The flows since the last part go in the reply. */
        struct fdp__ds rest = d.msg;
        size_t n_rest = d.n_in_msg, skip = d.prefix_len;
        d.msg = (struct fdp__ds) FDP__DS_INIT;
        dump_start_msg(&d, true);
        if (n_rest) {
            fdp__ds_put_buffer(&d.msg, rest.s + skip, rest.len - skip);
        }
        fdp__ds_destroy(&rest);
    }
    if (!d.failed && id) {
        dump_send_msg(&d, true);
    }
    fdp__ds_destroy(&d.msg);
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

/* The name dump-tables gives sub-table 'st': "tss" for tuple space;
 * for the others, why the table made it, "pipapo" (flows with ranges) or
 * "overflow" (flows moved out of tuple space), as dump-tables has always
 * shown the partitioned sub-table. */
static const char *
subtable_name(const struct fdp_subtable_stats *st)
{
    if (st->kind == FDP_SUBTABLE_TSS) {
        return "tss";
    }
    return st->reason == FDP_SUBTABLE_FOR_OVERFLOW ? "overflow" : "pipapo";
}

/* The JSON form of one sub-table for dump-tables, or NULL if out of
 * memory. */
static json_t *
subtable_json(const struct fdp_subtable_stats *st)
{
    json_t *o = json_pack("{s:s, s:I, s:i, s:I, s:I}",
                          "kind", subtable_name(st),
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
json_t *
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
