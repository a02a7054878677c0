/*
 * flowdp: the flow table.
 *
 * A table holds flows (a match, a priority, actions and OpenFlow
 * bookkeeping) and finds, for a packet's key, the flow with the highest
 * priority whose match the key satisfies; among flows of equal priority
 * that both match, the one added first.  Masked matches live in
 * tuple-space subtables (lib/tss.c), matches with ranges in pipapo
 * sub-tables; lookups walk both in one priority order.
 *
 * Thread-safety
 * =============
 * Modifiers (insert, modify, remove, begin/commit/abort, run, destroy):
 * any thread; they serialise on the table's mutex.  A transaction
 * (fdp_table_begin() .. commit or abort) belongs to the thread that began
 * it and holds the mutex until it ends.
 *
 * Lookups (lookup, lookup_batch, for_each, stats, subtable stats): RCU
 * protected, may run concurrently with each other and with modifiers,
 * never block and never allocate.  A rule pointer they return stays
 * valid until the caller's fdp_table_read_unlock(); the caller must hold
 * fdp_table_read_lock() across the lookup and every use of the result.  A
 * lookup sees each transaction entirely or not at all.
 */
#ifndef FLOWDP_TABLE_H
#define FLOWDP_TABLE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <flowdp/actions.h>
#include <flowdp/common.h>
#include <flowdp/flow.h>
#include <flowdp/key.h>
#include <flowdp/match.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fdp_table;
struct fdp_rule;

/* Largest batch for fdp_table_lookup_batch(). */
#define FDP_TABLE_BATCH_MAX 64

/* Creates an empty table in '*tablep'.  Returns 0, ENOMEM, EIO if the
 * random generator failed to provide the hash seeds, or the error of
 * fdp_cpu_init() (EINVAL, ENOTSUP) when FLOWDP_CPU cannot be honoured. */
FDP_API int fdp_table_create(struct fdp_table **tablep);

/* Destroys 'table' and its rules.  No lookup may be running on it.
 * Accepts NULL. */
FDP_API void fdp_table_destroy(struct fdp_table *table);

/* ---- Modifiers ---- */

/* fdp_table_insert() flags. */
enum {
    FDP_TABLE_NO_REPLACE = 1 << 0,  /* EEXIST instead of replacing. */
};

/* Adds the flow 'spec' (copied; the caller keeps 'spec').  A flow with the
 * same match and priority has its actions and bookkeeping replaced and
 * keeps its statistics, unless 'flags' has FDP_TABLE_NO_REPLACE.  Returns
 * 0, or:
 *   EINVAL   'spec' has no match or no actions, or an action needs what
 *            the match does not guarantee (mod_tp_dst without tcp, udp or
 *            sctp; mod_nw_src without ip...);
 *   EEXIST   FDP_TABLE_NO_REPLACE and the flow exists;
 *   ENOMEM. */
FDP_API int fdp_table_insert(struct fdp_table *table,
                             const struct fdp_flow_spec *spec,
                             unsigned int flags);

/* Which flows a modify or remove applies to. */
struct fdp_table_filter {
    const struct fdp_match *match;  /* NULL: every field wildcarded, so
                                     * all flows, or with 'strict' the
                                     * catch-all flow of 'priority'. */
    bool strict;            /* Same match and priority, not covered by. */
    uint16_t priority;      /* For strict. */
    uint64_t cookie;        /* Flows with (cookie & cookie_mask) equal... */
    uint64_t cookie_mask;   /* ...to (this cookie & mask); 0: any. */
};

/* Replaces the actions of every flow the filter selects by 'actions'
 * (copied), keeping their statistics, priority, timeouts and place among
 * equal-priority flows, as ovs-ofctl mod-flows does.  If 'new_cookie' is
 * nonnull the flows' cookie becomes '*new_cookie' (mod-flows with
 * "cookie=V" and no mask; with "cookie=V/M" the cookie selects flows, in
 * 'filter'), else it stays.  Stores the number of flows changed in '*n'
 * (if nonnull).  Returns 0, or (then nothing changed):
 *   EINVAL   an action needs what a selected flow's match does not
 *            guarantee (as for fdp_table_insert());
 *   ENOMEM. */
FDP_API int fdp_table_modify(struct fdp_table *table,
                             const struct fdp_table_filter *filter,
                             const struct fdp_actions *actions,
                             const uint64_t *new_cookie, size_t *n);

/* Removes every flow the filter selects, as ovs-ofctl del-flows does.
 * Stores the number removed in '*n' (if nonnull).  Returns 0 or ENOMEM. */
FDP_API int fdp_table_remove(struct fdp_table *table,
                             const struct fdp_table_filter *filter,
                             size_t *n);

/* Transactions: changes between begin and commit become visible to
 * lookups all at once; abort undoes them.  begin returns 0, or EBUSY if
 * the calling thread already has a transaction open on 'table'.  commit
 * returns 0 (also when the thread has no transaction open), or:
 *   ENOMEM   the new sub-table order could not be built: the transaction
 *            was aborted, and the table is as it was before begin.
 * Either way the transaction is over. */
FDP_API int fdp_table_begin(struct fdp_table *table);
FDP_API int fdp_table_commit(struct fdp_table *table);
FDP_API void fdp_table_abort(struct fdp_table *table);

/* Periodic upkeep (call every second or so): re-ranks equal-priority
 * sub-tables by their hits, tightens priority bounds, finds the priority
 * levels whose flows in different sub-tables do not overlap (their
 * lookups then stop at the first match; a level changed since is walked
 * in full until the next run), and when there are
 * more than the mask budget of tuple-space subtables, moves the flows of
 * the least-hit ones into a pipapo sub-table, whose cost does not grow
 * with the number of masks (the Tuple Space Explosion defence).  New
 * masks past twice the budget go to pipapo at once, and past the budget
 * itself while no tuple-space subtable has hits yet (a fresh table: there
 * is nothing to rank by, so a bulk load is not put in tuple space only to
 * be moved).  Moving flows is a
 * change like a replace (new rule objects with the same match, priority,
 * sequence number, cookie, actions and statistics): it is committed with
 * the caller's open transaction, or else at once, and so grows the
 * version; a run that moves nothing leaves the version as it is. */
FDP_API void fdp_table_run(struct fdp_table *table);

/* The default mask budget: measured, see docs/PERFORMANCE.md. */
#define FDP_TABLE_DEFAULT_MAX_MASKS 8

/* Sets the mask budget; 0 turns the defence off (tuple space only). */
FDP_API void fdp_table_set_max_masks(struct fdp_table *table,
                                     size_t max_masks);

/* Declares whether the flows of 'table' are disjoint: no packet can match
 * two of them, as in a megaflow cache, where the datapath's slow path
 * builds every flow so that it matches only packets no other flow does
 * (Open vSwitch's dpcls relies on the same guarantee).  A lookup in a
 * disjoint table ends at its first match: sub-tables are visited in hit
 * order, so the common case probes one.  The caller guarantees the
 * property; if two flows do overlap, a lookup returns one of the flows
 * that match, not necessarily the best.  Default: false.  Thread-safety:
 * a modifier; lookups see the change at their next call. */
FDP_API void fdp_table_set_disjoint(struct fdp_table *table, bool disjoint);

/* ---- Lookups ---- */

/* RCU read-side section (liburcu, membarrier flavour: a thread is
 * registered on its first call, so any thread may call these). */
FDP_API void fdp_table_read_lock(void);
FDP_API void fdp_table_read_unlock(void);

/* The best flow for 'key', or NULL. */
FDP_API const struct fdp_rule *fdp_table_lookup(struct fdp_table *table,
                                                const struct fdp_key *key);

/* Looks up 'n' (at most FDP_TABLE_BATCH_MAX) keys: rules[i] is the best
 * flow for keys[i], or NULL. */
FDP_API void fdp_table_lookup_batch(struct fdp_table *table,
                                    const struct fdp_key *const keys[],
                                    size_t n, const struct fdp_rule *rules[]);

/* The table's version: it changes (grows) with every change to the flows
 * lookups see (each commit), and only then.  A cache of lookup results
 * made at one version, such as the datapath's exact-match cache, is valid
 * while the version stays the same; its rule pointers are safe within the
 * read-side section in which the caller loaded the matching version. */
FDP_API uint64_t fdp_table_version(const struct fdp_table *table);

/* Calls 'cb' for each flow, in no particular order, with the flows as
 * they were at one instant.  Stops early if 'cb' returns false. */
FDP_API void fdp_table_for_each(struct fdp_table *table,
                                bool (*cb)(const struct fdp_rule *,
                                           void *aux),
                                void *aux);

struct fdp_table_stats {
    uint64_t n_flows;           /* Flows in the table. */
    uint64_t n_masks;           /* Tuple-space subtables. */
    uint64_t n_pipapo_tables;   /* Pipapo sub-tables. */
    uint64_t n_pipapo_rules;    /* Flows in pipapo sub-tables. */
    uint64_t n_lookups;
    uint64_t n_hits;
    uint64_t n_misses;
    uint64_t n_subtables_visited;   /* Summed over lookups. */
    uint64_t n_keyed_subtables;     /* Subtables using the keyed hash. */
    uint64_t memory_bytes;          /* The table, its sub-tables and
                                     * lookup structures, its rules with
                                     * their actions and statistics. */
};

/* Stores the table's statistics in '*stats'.  A lookup-class function:
 * lock-free, it never blocks or allocates, and may run concurrently with
 * modifiers and lookups (no read lock needed).  'n_flows' counts the flows
 * visible at the current version; the sub-table counts and
 * 'memory_bytes' describe the table as of its last published change (a
 * transaction in progress shows once committed); the lookup counters are
 * summed without locks, so while lookups run they may be a batch apart. */
FDP_API void fdp_table_get_stats(const struct fdp_table *table,
                                 struct fdp_table_stats *stats);

/* The kinds of sub-table a lookup walks: each kind is one implementation.
 * Why a table put flows in a sub-table is its reason (below). */
enum fdp_subtable_kind {
    FDP_SUBTABLE_TSS,           /* Tuple space: one hash table per mask. */
    FDP_SUBTABLE_PIPAPO,        /* One pipapo over all its flows (a table
                                 * uses pipapo only inside the leaves of
                                 * its partitioned sub-table). */
    FDP_SUBTABLE_PARTITIONED,   /* A tree of cuts over its flows with
                                 * small leaves (see lib/cut.c). */
};

/* Why a table made a sub-table: the flows that made it and that it is
 * for. */
enum fdp_subtable_reason {
    FDP_SUBTABLE_FOR_MASK,      /* Flows of one mask (tuple space). */
    FDP_SUBTABLE_FOR_RANGES,    /* Flows with ranges (dump-tables shows
                                 * "pipapo"). */
    FDP_SUBTABLE_FOR_OVERFLOW,  /* Masked flows moved out of tuple space
                                 * past the mask budget, or sparse ones
                                 * (see fdp_table_run()); later flows with
                                 * ranges join them (dump-tables shows
                                 * "overflow"). */
};

/* One sub-table, as fdp_table_get_subtable_stats() describes it. */
struct fdp_subtable_stats {
    enum fdp_subtable_kind kind;
    enum fdp_subtable_reason reason;
    uint64_t n_flows;           /* Flows visible at the table's version. */
    int max_priority;           /* Highest priority among them; -1 if
                                 * none. */
    uint64_t hits;              /* Lookups this sub-table won since it was
                                 * created (approximate: counted without
                                 * locked instructions, for ranking). */
    uint64_t memory_bytes;      /* The sub-table and its lookup structures,
                                 * as of the last published change; not
                                 * its rules (see fdp_table_stats). */

    /* FDP_SUBTABLE_TSS only. */
    bool keyed_hash;            /* Rehashed with the keyed hash after a
                                 * chain passed its bound (flooding). */
    struct fdp_key mask;        /* The bits of the key its flows match. */

    /* Pipapo and partitioned only: the fields their flows match, and the
     * bits each field's lookup table takes at a time (4 or 8; 0 for a
     * partitioned sub-table, whose small partitions test each flow
     * directly, see lib/cut.c); then the fields every flow of the
     * sub-table matches alike, checked once per lookup instead (none for
     * a partitioned sub-table: each partition finds its own). */
    unsigned int n_fields;
    enum fdp_field fields[FDP_N_FIELDS];
    uint8_t group_bits[FDP_N_FIELDS];
    unsigned int n_const_fields;
    enum fdp_field const_fields[FDP_N_FIELDS];

    /* Partitioned only: the partitions their flows are cut into,
     * each a small leaf a lookup reaches through a tree of cuts (see
     * lib/cut.c): how many, the deepest one's depth, and the most flows
     * one holds. */
    uint32_t n_partitions;
    uint32_t partition_depth;
    uint32_t largest_partition;
};

/* Describes each sub-table a lookup walks, in walk order, in out[0],
 * out[1], ... (at most 'n_max' of them), and stores in '*n' how many there
 * are.  A lookup-class function like fdp_table_get_stats(): lock-free, it
 * never blocks or allocates, and may run concurrently with modifiers and
 * lookups (no read lock needed).  It reads one published view at one
 * version, so the 'n_flows' add up to the flows visible at that version
 * (which is fdp_table_stats.n_flows while no change is being committed).
 * It walks every flow to count them: a control-plane call, not one for
 * the packet path.
 * Returns 0, or:
 *   ENOBUFS  there are more than 'n_max' sub-tables: the first 'n_max'
 *            are stored, '*n' says how many to make room for;
 *   EINVAL   'n' is NULL, or 'out' is NULL and 'n_max' is not 0. */
FDP_API int fdp_table_get_subtable_stats(const struct fdp_table *table,
                                         struct fdp_subtable_stats *out,
                                         size_t n_max, size_t *n);

/* One partition of a partitioned sub-table (FDP_SUBTABLE_PARTITIONED:
 * a tree of cuts over their flows with small leaves, see lib/cut.c). */
struct fdp_partition_stats {
    const char *kind;           /* "list": flows tested one by one;
                                 * "pipapo": a leaf no cut could split. */
    char path[160];             /* The cuts that lead to it, root first:
                                 * "nw_dst/16=0xa01,tp_dst/8=*" (a field's
                                 * top bits and their value, or '*' for
                                 * the spill of flows that are not exact
                                 * on them); "" for a sub-table that is
                                 * one leaf. */
    uint64_t n_flows;           /* Flows in it (as of its last publish). */
    int max_priority;           /* Its bound: no flow in it beats this
                                 * priority. */
    uint64_t hits;              /* Lookups it won (approximate). */
    uint64_t memory_bytes;      /* Its node and lookup form. */
    unsigned int depth;         /* Cuts above it. */
};

/* Calls 'cb(p, aux)' for every partition of every partitioned sub-table
 * of 'table', in walk order, until it returns false.  A lookup-class
 * function (no lock needed; it takes its own read-side section); it walks
 * every partition, so it is for the control plane. */
FDP_API void fdp_table_for_each_partition(
    const struct fdp_table *table,
    bool (*cb)(const struct fdp_partition_stats *p, void *aux), void *aux);

/* ---- Rules ---- */

/* A rule's flow: match, priority, cookie, table, timeouts and actions.
 * A table keeps each rule's match in a compact form, so the match is
 * copied into 'match', storage the caller owns (from fdp_match_create(),
 * reusable from one call to the next), and 'spec->match' points to it:
 * it stays valid after the read-side section and after the rule is gone.
 * 'spec->actions' belongs to the rule: valid until the caller's
 * fdp_table_read_unlock().  Neither pointer may be freed through the spec
 * (do not call fdp_flow_spec_destroy() on it).  A lookup-class function:
 * concurrent calls with different 'match' storage are safe. */
FDP_API void fdp_rule_get_spec(const struct fdp_rule *rule,
                               struct fdp_flow_spec *spec,
                               struct fdp_match *match);

/* Copies the rule's match into 'match' (caller's storage, as for
 * fdp_rule_get_spec()).  A lookup-class function. */
FDP_API void fdp_rule_get_match(const struct fdp_rule *rule,
                                struct fdp_match *match);

/* The rule's cookie (as fdp_rule_get_spec() gives it, without copying the
 * match).  A lookup-class function. */
FDP_API uint64_t fdp_rule_get_cookie(const struct fdp_rule *rule);

/* The rule's insertion sequence number: among overlapping flows of equal
 * priority the one with the lowest wins.  Replacing a flow's actions keeps
 * it.  (A program that saves and restores a table adds flows back in this
 * order.) */
FDP_API uint64_t fdp_rule_get_seq(const struct fdp_rule *rule);

/* True if a learn action added the rule and no other writer has changed it
 * since (a program that saves a table leaves such flows out, as Open
 * vSwitch keeps no learned flow across a restart). */
FDP_API bool fdp_rule_is_learned(const struct fdp_rule *rule);

/* Statistics, updated by the datapath without locks. */
struct fdp_rule_stats {
    uint64_t n_packets;
    uint64_t n_bytes;
    int64_t used_ms;            /* Monotonic ms of the last packet; 0 never. */
    int64_t created_ms;         /* Monotonic ms when added (an add that
                                 * replaces the flow restarts it, a modify
                                 * keeps it). */
    int64_t modified_ms;        /* Monotonic ms of the last add or modify
                                 * (created_ms if none since): a hard
                                 * timeout counts from it, as Open
                                 * vSwitch's. */
};

FDP_API void fdp_rule_get_stats(const struct fdp_rule *rule,
                                struct fdp_rule_stats *stats);

/* Counts one packet of 'n_bytes' bytes at monotonic time 'now_ms'. */
FDP_API void fdp_rule_account(const struct fdp_rule *rule, uint64_t n_bytes,
                              int64_t now_ms);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_TABLE_H */
