/*
 * The sub-table class (internal): what lib/table.c knows of a sub-table.
 *
 * A table is a list of sub-tables walked in priority order (lib/table.c).
 * Each sub-table is an implementation of this class, and its kind (enum
 * fdp_subtable_kind) names which: tuple space (one hash table per mask,
 * lib/tss.c), the partitioned sub-table (a tree of cuts with small
 * leaves, lib/cut.c) and pipapo (one pipapo over all its rules,
 * lib/pipapo.c, which tables use only inside the partitioned sub-table's
 * leaves).  Why the table made a sub-table is a separate field, its
 * reason (enum fdp_subtable_reason): the partitioned sub-table serves both
 * flows with ranges and flows moved out of tuple space.  An implementation
 * embeds struct fdp__subtable, fills in the class with its operations, and
 * keeps the common bookkeeping here current: its rule count and its
 * priority bounds.  lib/table.c walks, ranks, counts and changes
 * sub-tables only through these operations and fields, never by kind, and
 * knows nothing of buckets, bitmaps or cuts.
 *
 * Thread-safety: the operations under "Lookups and walks" are RCU
 * protected and may run concurrently with one writer, in a read-side
 * section; the others are modifiers, called with the table's mutex held.
 */
#ifndef FDP_SUBTABLE_H
#define FDP_SUBTABLE_H 1

#include <stdbool.h>
#include <stdint.h>

#include <flowdp/table.h>
#include "lib/rule.h"

struct fdp__subtable;

struct fdp__subtable_class {
    /* Lookups and walks. */

    /* For each key keys[i] with bit i set in 'probe', finds the best rule
     * of the sub-table that matches it and is visible at 'version',
     * stores it in found[i] and sets bit i of the result (found[i] is not
     * written for keys without one). */
    uint64_t (*lookup_batch)(const struct fdp__subtable *,
                             const struct fdp_key *const keys[],
                             uint64_t probe, uint64_t version,
                             const struct fdp_rule *found[]);

    /* Calls 'cb(rule, aux)' for the rules of the sub-table until it
     * returns false; returns false if it did.  With 'published', the
     * rules lookups can reach now (readers, in a read-side section);
     * without, every rule the writer has linked (writers only; 'cb' may
     * free the rule it is given only in fdp_table_destroy()). */
    bool (*for_each_rule)(const struct fdp__subtable *, bool published,
                          bool (*cb)(struct fdp_rule *, void *aux),
                          void *aux);

    /* Fills in what 'out' says of the sub-table's shape: kind, mask or
     * fields, keyed hash, partitions (readers). */
    void (*describe)(const struct fdp__subtable *,
                     struct fdp_subtable_stats *out);

    /* Calls 'cb(p, aux)' for each partition of the published sub-table
     * (readers, in a read-side section) until it returns false; returns
     * false if it did.  NULL for a sub-table that is not partitioned. */
    bool (*for_each_partition)(const struct fdp__subtable *,
                               bool (*cb)(const struct fdp_partition_stats *,
                                          void *aux),
                               void *aux);

    /* Adds the sub-table, holding 'n_flows' flows (its linked rules less
     * those a commit removed), to the shape counts of the table's 'stats':
     * n_masks and n_keyed_subtables for tuple space, n_pipapo_tables and
     * n_pipapo_rules for the others (writer, when it publishes a view). */
    void (*add_stats)(const struct fdp__subtable *, uint64_t n_flows,
                      struct fdp_table_stats *stats);

    /* Modifiers. */

    /* Links 'rule' into the sub-table.  Returns 0 or ENOMEM (then nothing
     * changed). */
    int (*insert)(struct fdp__subtable *, struct fdp_rule *);

    /* Unlinks 'rule'; the caller frees it after a grace period (and, for
     * a sub-table that publishes snapshots, after the next publish). */
    void (*remove)(struct fdp__subtable *, struct fdp_rule *);

    /* Told that 'rule', still linked, has just been given a remove
     * version (it leaves at the open transaction's commit), before that
     * version is published: for a sub-table whose lookups judge
     * visibility without loading the rule while none of its rules is
     * leaving (lib/cut.c).  NULL if not needed. */
    void (*removing)(struct fdp__subtable *, struct fdp_rule *);

    /* Makes the changes since the last call visible to lookups, if the
     * implementation batches them (pipapo rebuilds a snapshot); NULL if
     * every change is visible at once.  Returns 0 or ENOMEM (then lookups
     * keep the old state and the changes stay pending). */
    int (*publish)(struct fdp__subtable *);

    /* Periodic maintenance, from fdp_table_run(), off the change path: if
     * the sub-table took changes in a form that is quick to publish but
     * slower to look up (pipapo's delta and tombstones), marks it dirty
     * so that the next publish folds them in.  NULL if it never does. */
    void (*compact)(struct fdp__subtable *);

    /* Bytes of memory the sub-table uses, not counting its rules. */
    uint64_t (*memory)(const struct fdp__subtable *);

    /* Frees the sub-table (not its rules): at once if no reader can see
     * it, else after a grace period. */
    void (*destroy)(struct fdp__subtable *, bool deferred);
};

/* The part of every sub-table that lib/table.c reads. */
struct fdp__subtable {
    const struct fdp__subtable_class *class;
    enum fdp_subtable_reason reason;    /* Set by its creator. */
    uint32_t n_rules;           /* Writer: rules linked. */
    uint32_t n_leaving;         /* Writer: lib/table.c's count of them that
                                 * a commit removed, taken when it
                                 * publishes a view. */
    bool dirty;                 /* Writer: changed since last publish. */

    /* Bounds on the best rule: no rule beats (max_priority, min_seq).
     * Conservative: may be stale high.  Writer only: lookups read the
     * copies lib/table.c takes into each published view, which never
     * change, because fdp_table_run() lowers these before it publishes the
     * view re-sorted by them. */
    int max_priority;
    uint64_t min_seq;           /* Among rules at max_priority. */

    /* Approximate hit count, on its own cache line (lookups write it). */
    uint64_t hits __attribute__((aligned(64)));
    uint64_t hits_at_rank;      /* Writer: 'hits' at last re-rank. */
};

static inline void
fdp__subtable_init(struct fdp__subtable *st,
                   const struct fdp__subtable_class *class,
                   enum fdp_subtable_reason reason)
{
    st->class = class;
    st->reason = reason;
    st->n_rules = 0;
    st->n_leaving = 0;
    st->dirty = false;
    st->max_priority = -1;
    st->min_seq = UINT64_MAX;
    st->hits = 0;
    st->hits_at_rank = 0;
}

/* Raises the bounds of 'st' to cover 'rule', just linked. */
static inline void
fdp__subtable_raise_bounds(struct fdp__subtable *st,
                           const struct fdp_rule *rule)
{
    if (rule->priority > st->max_priority) {
        __atomic_store_n(&st->max_priority, rule->priority, __ATOMIC_RELAXED);
        __atomic_store_n(&st->min_seq, rule->seq, __ATOMIC_RELAXED);
    } else if (rule->priority == st->max_priority && rule->seq < st->min_seq) {
        __atomic_store_n(&st->min_seq, rule->seq, __ATOMIC_RELAXED);
    }
}

#endif /* FDP_SUBTABLE_H */
