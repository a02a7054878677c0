/*
 * flowdp: the pipeline: tables 0 to 254 joined by goto_table and resubmit.
 *
 * A pipeline holds up to FDP_PIPELINE_N_TABLES flow tables.  A packet
 * starts in table 0 with its registers (reg0-reg15, xreg0-xreg7),
 * metadata and conj_id zero (key.h); the flow it hits there runs its
 * actions in order:
 *   - packet actions (output, set_field on a header, VLAN, dec_ttl...)
 *     are collected, in order, into the packet's composed actions, which
 *     the datapath then applies to the packet's bytes;
 *   - load, set_field, move and write_metadata on the registers and
 *     metadata change the pipeline's copy of the key, which the next
 *     lookups match (set_field on a header changes it too: a later table
 *     sees the rewritten header, as in Open vSwitch);
 *   - goto_table:N (only to a later table: the parser refuses others)
 *     continues in table N once the flow's actions are done;
 *   - resubmit([PORT],[TABLE]) looks TABLE up (the flow's own table if
 *     not given) with in_port PORT (the packet's own if not given), runs
 *     the actions of the flow it finds (and the goto_tables they lead
 *     to), and comes back to the rest of the calling flow's actions.
 *     While it runs, in_port is PORT for outputs as for matches, as in
 *     Open vSwitch: output:PORT is skipped, in_port sends to PORT, and
 *     output to the packet's own port is allowed.  A resubmit that finds
 *     no flow does nothing;
 *   - dec_ttl on an IP packet whose TTL is 0 or 1 drops the packet there:
 *     nothing after it runs, and no later flow counts it.
 * A lookup in table 0, or through goto_table, that finds no flow ends the
 * pipeline (inside a resubmit, it ends what the resubmit runs, and the
 * caller goes on): the packet is dropped (what its earlier actions output
 * stays output) and the table's miss counter counts it, unless the table
 * has a table-miss flow (priority 0, matching everything), which then
 * hits like any flow.
 *
 * Resubmits nest at most FDP_PIPELINE_MAX_DEPTH deep and number at most
 * FDP_PIPELINE_MAX_RESUBMITS per packet, as Open vSwitch bounds them; a
 * packet that goes past either is dropped whole (no action of it runs)
 * and counted in n_limit_drops.
 *
 * Conjunctive matches, with Open vSwitch's semantics (ovs-fields(7),
 * "Conjunctive Match Fields").  A flow whose actions are
 * conjunction(ID,K/N) actions (nothing else) is clause K of the N-clause
 * conjunction ID; it may be a clause of several conjunctions.  Such a
 * flow never matches by itself.  A lookup in a table first finds the best
 * other flow, H.  Then, for each priority P above H's at which flows of
 * conjunctions match the packet, from the highest: if for some
 * conjunction ID every clause 1..N has a matching flow at P, the table is
 * looked up again with conj_id = ID (which only then is not zero), and
 * the best flow found, typically one matching "conj_id=ID", is the
 * result.  If no conjunction is complete at any such P, or none of the
 * lookups with conj_id finds a flow, the result is H.  A conjunction is
 * its ID and N together, at its priority: flows that say
 * conjunction(7,1/2) and conjunction(7,2/3) belong to two conjunctions,
 * neither complete.  When several conjunctions are complete at one
 * priority, they are tried in order of ID, then N.  Flows of conjunctions
 * keep no statistics (a packet is counted on the flow the conjunction
 * leads to), and changing a flow's actions between conjunction and other
 * actions with a modify resets its statistics.  (A flow of a conjunction
 * reports, as its duration, the time since the first flow of its clause
 * was added.)
 *
 * Versions.  Every commit that changes any table grows the pipeline's
 * version once, so a cache of whole-pipeline outcomes made at one version
 * (the datapath's) is valid while the version stays the same.  Lookups in
 * every table are made at one version, so a commit that spans tables is
 * atomic: a classification sees all of it or none of it.
 *
 * Thread-safety
 * =============
 * Modifiers (insert, modify, remove, begin/commit/abort, run, destroy):
 * any thread; they serialise on the pipeline's mutex.  A transaction
 * belongs to the thread that began it.  A transaction's changes to all its
 * tables become visible to classification at once, when commit publishes
 * the new version.  A modifier that fails inside a transaction may have
 * changed some of its tables: abort the transaction.
 *
 * Lookups (classify, for_each, stats): RCU protected, as fdp_table's:
 * the caller holds fdp_table_read_lock() across the call and every use of
 * the rule pointers it returns.  Many threads may classify at once, each
 * with its own struct fdp_pipeline_result.
 */
#ifndef FLOWDP_PIPELINE_H
#define FLOWDP_PIPELINE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <flowdp/actions.h>
#include <flowdp/common.h>
#include <flowdp/flow.h>
#include <flowdp/key.h>
#include <flowdp/table.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fdp_pipeline;

#define FDP_PIPELINE_N_TABLES 255   /* Tables 0 to 254. */
#define FDP_TABLE_ALL 255           /* In a table argument: every table. */
#define FDP_PIPELINE_MAX_DEPTH 64   /* Nested resubmits. */
#define FDP_PIPELINE_MAX_RESUBMITS 4096     /* Resubmits per packet. */

/* Creates an empty pipeline in '*pp'.  Returns 0, or an error of
 * fdp_table_create(). */
FDP_API int fdp_pipeline_create(struct fdp_pipeline **pp);

/* Destroys 'p' and its tables.  No lookup may be running on it.  Accepts
 * NULL. */
FDP_API void fdp_pipeline_destroy(struct fdp_pipeline *p);

struct fdp_tlv_map;

/* The pipeline's TLV map (flowdp/tlv-map.h): which Geneve option each
 * tun_metadataN names.  It lives as long as the pipeline; changes go
 * through fdp_tlv_map_add() and fdp_tlv_map_del(). */
FDP_API struct fdp_tlv_map *fdp_pipeline_tlv_map(struct fdp_pipeline *p);

/* ---- Modifiers ---- */

/* fdp_table_insert() into table spec->table_id (0..254).  Returns 0,
 * fdp_table_insert()'s errors, or EINVAL for table 255 or an action that
 * goes to table 255 or to a table not after the flow's own
 * (goto_table). */
FDP_API int fdp_pipeline_insert(struct fdp_pipeline *p,
                                const struct fdp_flow_spec *spec,
                                unsigned int flags);

/* fdp_table_modify() and fdp_table_remove() on table 'table_id', or on
 * every table for FDP_TABLE_ALL; '*n' counts the flows of all of them.
 * A modify that fails in one table changes no table. */
FDP_API int fdp_pipeline_modify(struct fdp_pipeline *p, uint8_t table_id,
                                const struct fdp_table_filter *filter,
                                const struct fdp_actions *actions,
                                const uint64_t *new_cookie, size_t *n);
FDP_API int fdp_pipeline_remove(struct fdp_pipeline *p, uint8_t table_id,
                                const struct fdp_table_filter *filter,
                                size_t *n);

/* Transactions over all tables, as fdp_table_begin() and friends: after
 * abort, or a commit that fails (ENOMEM), every table is as it was. */
FDP_API int fdp_pipeline_begin(struct fdp_pipeline *p);
FDP_API int fdp_pipeline_commit(struct fdp_pipeline *p);
FDP_API void fdp_pipeline_abort(struct fdp_pipeline *p);

/* Open vSwitch's learned-cookie rule (ovs-actions(7), learn's
 * delete_learned): once no flow holds a learn(delete_learned,
 * table=T,cookie=C) action any more, every flow of table T with cookie C
 * is deleted, and so on for the learn actions those flows held.  A writer
 * calls this after each change that may have removed or replaced flows;
 * the pipeline remembers which (T, C) pairs the flows held at the
 * previous call.  Stores the number of flows deleted in '*n' and returns
 * 0, ENOMEM (nothing deleted; the pairs are those of the previous call)
 * or an error of fdp_pipeline_remove().  Not within a transaction. */
FDP_API int fdp_pipeline_delete_learned(struct fdp_pipeline *p, size_t *n);

/* fdp_table_run() on every table in use. */
FDP_API void fdp_pipeline_run(struct fdp_pipeline *p);

/* ---- Lookups ---- */

/* One lookup of a classification. */
enum fdp_pipeline_step_kind {
    FDP_STEP_START,             /* Table 0, where every packet starts. */
    FDP_STEP_GOTO,              /* goto_table. */
    FDP_STEP_RESUBMIT,          /* resubmit. */
    FDP_STEP_CT,                /* The first lookup of a ct(table=N)
                                 * continuation, in table N. */
};

struct fdp_pipeline_step {
    const struct fdp_rule *rule;    /* The flow hit; NULL: a miss. */
    uint8_t table_id;
    uint8_t kind;                   /* enum fdp_pipeline_step_kind */
    uint16_t depth;                 /* Resubmit nesting, 0 at the top. */
    uint32_t conj_id;               /* Nonzero: 'rule' was found through
                                     * this conjunction. */
};

/* What a packet's classification found, in memory the caller owns and
 * reuses from packet to packet (so that classification allocates only
 * while the buffers grow). */
struct fdp_pipeline_result {
    struct fdp_pipeline_step *steps;    /* The lookups, in order. */
    size_t n_steps;
    struct fdp_actions *actions;        /* The packet actions, composed. */
    bool limit_dropped;     /* Resubmits went past a limit: drop. */
    bool table_missed;      /* Ended by a miss (table 0 or goto). */
    struct fdp_key key;     /* The pipeline's key at the end: registers,
                             * metadata and rewritten headers. */
    /* Private. */
    size_t steps_alloc;
    void *scratch;
};

FDP_API void fdp_pipeline_result_init(struct fdp_pipeline_result *r);
FDP_API void fdp_pipeline_result_destroy(struct fdp_pipeline_result *r);

/* Called by fdp_pipeline_classify() for each lookup ('step'): once when
 * the lookup is made, with 'done' false and the key it looked up, and, for
 * a hit, again after the flow's actions have run (those of the resubmits
 * they made included, whose own calls come in between), with 'done' true
 * and the key as the actions left it.  What "trace" prints. */
typedef void fdp_pipeline_trace_cb(void *aux,
                                   const struct fdp_pipeline_step *step,
                                   const struct fdp_key *key, bool done);

/* Runs the packet whose key is 'key' (registers and metadata zero, as
 * extracted) through 'p' into 'r', every table at the pipeline's current
 * version.  'flags' must be 0 (its bits are reserved for the library's
 * tests).  'trace' may be NULL.  Returns 0, or ENOMEM (then 'r' says
 * nothing). */
FDP_API int fdp_pipeline_classify(struct fdp_pipeline *p,
                                  const struct fdp_key *key,
                                  unsigned int flags,
                                  struct fdp_pipeline_result *r,
                                  fdp_pipeline_trace_cb *trace, void *aux);

/* A ct(table=N) continuation, for tools that follow one as Open vSwitch's
 * ofproto/trace does: 'key' is what the pipeline knows of the packet the
 * datapath would resume in table 'table' (the headers as rewritten before
 * the ct action, the registers and metadata it froze, the in_port, ct_zone,
 * and ct_mark and ct_label as its exec() set them; with nat(src=...) or
 * nat(dst=...) the range's first address and port in place of the source
 * or destination, as ofproto/trace simulates NAT).  Its ct_state is the
 * packet's before the action: what the tracker answers is the caller's
 * to choose. */
typedef void fdp_pipeline_ct_cb(void *aux, const struct fdp_key *key,
                                unsigned int table);

/* fdp_pipeline_classify() with no flags, from table 0 ('table' negative)
 * or, for a ct(table=N) continuation, from table 'table' keeping every
 * word of 'key' (its registers and metadata too), calling 'ct_cb' (if
 * nonnull) with 'ct_aux' for each ct(table=N) that runs.  Returns as
 * fdp_pipeline_classify(), or EINVAL for a 'table' above 254.  Lookups:
 * RCU protected, as fdp_pipeline_classify(). */
FDP_API int fdp_pipeline_classify_ct(struct fdp_pipeline *p,
                                     const struct fdp_key *key, int table,
                                     struct fdp_pipeline_result *r,
                                     fdp_pipeline_trace_cb *trace, void *aux,
                                     fdp_pipeline_ct_cb *ct_cb, void *ct_aux);

/* The pipeline's version (see above). */
FDP_API uint64_t fdp_pipeline_version(const struct fdp_pipeline *p);

/* Table 'table_id', or NULL if no flow was ever added to it.  For
 * statistics and lookups only: change flows through the pipeline. */
FDP_API struct fdp_table *fdp_pipeline_get_table(struct fdp_pipeline *p,
                                                 uint8_t table_id);

/* Calls 'cb' for each flow of table 'table_id' (FDP_TABLE_ALL: of every
 * table, in table order), as fdp_table_for_each().  Stops early if 'cb'
 * returns false. */
FDP_API void fdp_pipeline_for_each(struct fdp_pipeline *p, uint8_t table_id,
                                   bool (*cb)(const struct fdp_rule *,
                                              void *aux),
                                   void *aux);

struct fdp_pipeline_table_stats {
    uint64_t n_flows;
    uint64_t n_matched;     /* Packets that hit a flow of the table: the
                             * sum of its flows' n_packets. */
    uint64_t n_missed;      /* Lookups in the table that found no flow. */
    uint64_t memory_bytes;  /* Its fdp_tables (fdp_table_stats'), those of
                             * its conjunctions' clauses included. */
};

/* Statistics of table 'table_id'.  Returns false if the table is not in
 * use (never had a flow).  Takes time in the number of flows. */
FDP_API bool fdp_pipeline_get_table_stats(struct fdp_pipeline *p,
                                          uint8_t table_id,
                                          struct fdp_pipeline_table_stats *);

/* Counts 'n_packets' packets that took the lookups 'steps' (of a result)
 * into the miss counters of the tables where a step missed, and, if
 * 'limit_dropped', into n_limit_drops.  Classification counts nothing by
 * itself: the datapath calls this for every packet, whether a cache or a
 * classification served it, and fdp_rule_account() for the flows. */
FDP_API void fdp_pipeline_account_misses(struct fdp_pipeline *p,
                                         const struct fdp_pipeline_step *steps,
                                         size_t n_steps, bool limit_dropped,
                                         uint64_t n_packets);

/* Packets dropped for going past a resubmit limit. */
FDP_API uint64_t fdp_pipeline_n_limit_drops(const struct fdp_pipeline *p);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_PIPELINE_H */
