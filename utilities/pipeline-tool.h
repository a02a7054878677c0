/*
 * The multi-table pipeline as flowdpd and flowdp-ctl present it: which
 * table a command's flow text names, and "trace", table by table.
 *
 * A trace is a JSON object, made where the pipeline is (the daemon, or
 * flowdp-ctl's offline trace) and printed by the client:
 *   {"steps": [STEP...],       the lookups, in the order made
 *    "actions": TEXT,          the composed packet actions ("drop")
 *    "table_missed": BOOL,     a miss in table 0 or through goto_table
 *                              ended the pipeline
 *    "limit_dropped": BOOL,    resubmits went past a limit: dropped whole
 *    "resumes": [PASS...],     the ct(table=N) continuations, in the
 *                              order followed: each an object as this one
 *                              (steps, actions, table_missed,
 *                              limit_dropped) with "table": N, "zone": N,
 *                              "ct_state": "new|trk" and "default_state":
 *                              BOOL (no --ct-next was left for it)
 *    "resumes_cut": BOOL}      more continuations than a trace follows
 * STEP: {"table": N, "kind": "start"|"goto"|"resubmit"|"ct", "depth": N,
 *        "flow": TEXT (absent for a miss; canonical, without "table="),
 *        "cookie": N, "conj_id": N (found through that conjunction),
 *        "registers": TEXT (the nonzero registers and metadata after the
 *        flow's actions, "reg0=0x1,metadata=0x5"; absent if none)}
 *
 * Thread-safety: as the pipeline's lookups (pipeline.h).
 */
#ifndef FDP_PIPELINE_TOOL_H
#define FDP_PIPELINE_TOOL_H 1

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <flowdp/flowdp.h>

/* True if the flow text 'text' says "table=N" among its match fields (before
 * "actions="): mod-flows, del-flows and dump-flows then act on that table,
 * and otherwise on every table, as ovs-ofctl's do. */
bool flow_text_names_table(const char *text);

/* The table a command's flow 'text' (parsed into 'spec') acts on:
 * spec->table_id if the text names one, else FDP_TABLE_ALL. */
uint8_t flow_text_table(const char *text, const struct fdp_flow_spec *spec);

/* The nonzero registers (reg0..reg15) and metadata of 'key' as
 * "reg0=0x1,metadata=0x5" ("" if all are zero), which the caller frees;
 * NULL if out of memory. */
char *format_registers(const struct fdp_key *key);

/* Runs 'key' through 'p' (the caller holds fdp_table_read_lock()) and
 * returns the trace object described above, or NULL if out of memory.
 * Each ct(table=N) continuation is followed after the pass that made it,
 * as ofproto/trace does, with ct_state ct_next[i] for the i-th (the
 * 'n_ct_next' given, in order; then trk|new). */
json_t *trace_json(struct fdp_pipeline *p, const struct fdp_key *key,
                   const uint8_t *ct_next, size_t n_ct_next);

/* Parses a --ct-next argument, ct_state flags as ofproto/trace takes them
 * ("trk|new", "+trk+est"; a '-' flag is left clear), into '*state'.
 * Returns NULL, or a message (static) saying what is wrong. */
const char *parse_ct_next(const char *text, uint8_t *state);

/* Prints the trace 'trace' of the packet written as 'packet' to
 * 'stream'. */
void trace_print(FILE *stream, const char *packet, const json_t *trace);

/* Prints what classify prints for one result: the cookie of each flow hit
 * ("0x1") or "miss" for each lookup that found none, in the order of the
 * lookups, joined by ',', and ",limit" after them for a packet dropped
 * for going past a resubmit limit. */
void print_classify_result(FILE *stream,
                           const struct fdp_pipeline_result *r);

#endif /* FDP_PIPELINE_TOOL_H */
