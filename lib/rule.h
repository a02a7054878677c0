/*
 * A flow in a table (internal): the rule object that sub-tables link and
 * lookups return, shared by lib/table.c, lib/tss.c and lib/pipapo.c.
 */
#ifndef FDP_RULE_H
#define FDP_RULE_H 1

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/table.h>
#include "lib/hmap.h"
#include "lib/match-internal.h"
#include "lib/outcome.h"
#include "lib/util.h"
#include "lib/rcu.h"

struct fdp__subtable;

/* A flow's counters, shared by its versions (a modified flow keeps its
 * counts).  One cache line of shards: each of the first
 * FDP__STATS_SHARDS - 1 belongs to one writer at a time (a pmd takes one
 * with fdp__stats_shard_acquire()), who adds with plain loads and stores;
 * the last is everyone else's (more pmds, fdp_rule_account()), with
 * locked adds.  A reader sums them.  A locked add costs 20 to 40 cycles,
 * a large share of a whole EMC hit (docs/PERFORMANCE.md, "Figures behind
 * design choices"): sharding takes those off the pmds.  Three shards (two owned) make the object a line;
 * a machine with more pmds than owned shards pays locked adds on the
 * rest, and would want more shards or per-pmd copies of the flows, as
 * Open vSwitch's dp_netdev_flow. */
#define FDP__STATS_SHARDS 3
#define FDP__STATS_SHARED (FDP__STATS_SHARDS - 1)

struct fdp__rule_counters {
    int64_t created_ms;             /* Monotonic ms when added, or
                                     * replaced by an add (atomic:
                                     * txn_commit() sets it then). */
    int64_t used_ms;                /* Last packet; 0 never. */
    struct {
        uint64_t n_packets;
        uint64_t n_bytes;
    } shard[FDP__STATS_SHARDS];
} __attribute__((aligned(64)));
static_assert(sizeof(struct fdp__rule_counters) == 64,
              "a flow's counters are one line");

/* Takes an owned shard for a writer that will account on one thread at a
 * time, or FDP__STATS_SHARED if all are taken. */
unsigned int fdp__stats_shard_acquire(void);

/* Gives back a shard from fdp__stats_shard_acquire(). */
void fdp__stats_shard_release(unsigned int shard);

/* A flow in a table.
 *
 * Layout: a lookup that reaches a rule reads its priority and sequence
 * number (to compare it with the best so far), its versions (to see
 * whether it is visible) and, in the datapath, its one-rule outcome (its
 * actions and statistics pointers: lib/outcome.h): those come first, in
 * the rule's first cache line (rules are allocated 64-byte aligned), so
 * that a hit costs one line of the rule, not the fifth and sixth as when
 * the 296-byte match came first.  The match comes
 * last, in its compact form (struct fdp__cmatch, lib/match-internal.h: only the key
 * words it touches), in the same allocation (fdp__rule_alloc()): an exact
 * five-tuple's takes 48 bytes.  Tuple-space lookups compare a packet's
 * masked words with the match's value words, 'match.w', which start at a
 * fixed offset (pinned below) of the rule's third line; writers and dumps
 * read the match through fdp__cmatch_get() or expand it
 * (fdp__cmatch_expand()).
 *
 * 'priority', 'seq', 'cookie', the timeouts, 'modified_ms', 'table_id'
 * and 'match' never change after the rule is inserted.
 *
 * Times: a flow's creation time is its counters' (shared by its
 * versions, as Open vSwitch keeps 'created' across a modify), its
 * modification time each version's own, 'modified_ms' (Open vSwitch's
 * rule->modified: the time of the add or modify that made the version,
 * from which its hard timeout counts).  8 bytes were free here: the match's
 * value words stay within one line (pinned below); the counters' line
 * was full, and a per-version time could not live there anyway. */
struct fdp_rule {
    /* Read by lookups. */
    uint16_t priority;
    uint16_t idle_timeout;
    uint16_t hard_timeout;
    uint8_t table_id;
    bool owns_stats;                    /* Frees 'stats' when freed. */
    uint64_t seq;                       /* Insertion order: lower wins
                                         * ties. */
    /* Visible to lookups at versions [add_version, remove_version). */
    uint64_t add_version;
    uint64_t remove_version;
    struct fdp_rule *next;              /* RCU: next with the same masked
                                         * key in its tuple-space subtable,
                                         * best first. */
    /* The rule's one-rule outcome (lib/outcome.h), what the datapath's
     * caches and batches hold for a packet that hit this flow alone: its
     * actions and counters are the rule's 'actions' and 'stats', which
     * overlay them. */
    union {
        struct fdp__outcome oc;
        struct {
            struct fdp_actions *actions;        /* RCU. */
            uint64_t oc_header_;                /* 'oc''s own fields. */
            struct fdp__rule_counters *stats;   /* Shared by a rule's
                                                 * versions. */
        };
    };

    /* Read by writers and dumps. */
    uint64_t cookie;
    int64_t modified_ms;                /* Monotonic ms when this version
                                         * was made (see above). */

    /* Writer only. */
    bool stats_shared;                  /* 'stats' came from an older
                                         * version of this flow. */
    bool learned;                       /* Added by a learn action (lib/
                                         * learn.c); flowdpd --db keeps
                                         * no such flow. */
    bool resets_created;                /* Made by an add replacing the
                                         * flow: txn_commit() sets the
                                         * counters' 'created_ms' to
                                         * 'modified_ms' (Open vSwitch's
                                         * add restarts 'created'). */
    uint8_t flags;                      /* FDP_FLOW_F_* (flowdp/flow.h), in
                                         * what was padding. */
    uint32_t owner_slot;                /* Where 'owner' keeps it (pipapo:
                                         * its index in the built part of
                                         * the snapshot, or
                                         * PIPAPO_IN_DELTA). */
    struct fdp__subtable *owner;        /* The sub-table it is linked in. */
    struct fdp_rule *txn_next;          /* Transaction log. */
    struct fdp__hmap_node index_node;   /* In the table's (match, priority)
                                         * index. */
    struct fdp_table *table;            /* For memory accounting when the
                                         * rule is freed after a grace
                                         * period. */
    struct rcu_head rcu;

    struct fdp__cmatch match;           /* Last: its words follow. */
};

/* What a lookup reads, and the datapath's outcome, are in the first
 * cache line. */
static_assert(offsetof(struct fdp_rule, oc) + sizeof(struct fdp__outcome)
              <= 64,
              "a rule's lookup fields and outcome fit its first cache line");
/* The overlay: the outcome's actions and only counter are the rule's. */
static_assert(offsetof(struct fdp_rule, actions)
              == offsetof(struct fdp_rule, oc.actions)
              && offsetof(struct fdp_rule, stats)
                 == offsetof(struct fdp_rule, oc.counters)
              && offsetof(struct fdp_rule, oc_header_)
                 == offsetof(struct fdp_rule, oc.sig)
              && sizeof(struct fdp__outcome) == 3 * sizeof(uint64_t),
              "a rule's 'actions' and 'stats' are its outcome's");

/* True if 'rule' is a table-miss flow: priority 0, matching every
 * packet (Open vSwitch's rule_is_table_miss()). */
static inline bool
fdp__rule_is_table_miss(const struct fdp_rule *rule)
{
    return rule->priority == 0 && !rule->match.words
           && !rule->match.hi_words;
}

/* The rule whose one-rule outcome is 'oc' (an outcome the datapath got
 * from a table lookup or its signature cache, never one it built). */
static inline const struct fdp_rule *
fdp__rule_of_outcome(const struct fdp__outcome *oc)
{
    return (const struct fdp_rule *) (const void *)
           ((const char *) oc - offsetof(struct fdp_rule, oc));
}

/* The compact match is the rule's tail, and the value words a tuple-space
 * lookup compares (up to 4 of them, the specialised shapes) lie in one
 * line other than the first: lib/tss.c prefetches that line beside the
 * first. */
static_assert(offsetof(struct fdp_rule, match) + sizeof(struct fdp__cmatch)
              == sizeof(struct fdp_rule),
              "the compact match's words are the rule's tail");
static_assert(offsetof(struct fdp_rule, match.w) >= 64
              && offsetof(struct fdp_rule, match.w) % 64
                 + 4 * sizeof(uint64_t) <= 64,
              "up to 4 value words share one line, not the first");

/* A rule whose compact match is 'm', zeroed, 64-byte aligned (see the
 * layout above), with 'remove_version' FDP_VERSION_NEVER.  NULL if out of
 * memory.  The caller frees it with fdp__rule_free_block(). */
struct fdp_rule *fdp__rule_alloc(const struct fdp_match *m);

/* Frees the block of 'rule' (fdp__rule_alloc()), not what it points to;
 * NULL is fine.  Rules come from lib/lines.c, so free() must not be
 * used. */
void fdp__rule_free_block(struct fdp_rule *rule);

/* The bytes fdp__rule_alloc() takes for a rule with match 'm'. */
size_t fdp__rule_size(const struct fdp_match *m);

#define FDP_VERSION_NEVER UINT64_MAX

/* True if 'a' wins over 'b' (or 'b' is NULL): higher priority, then, at
 * equal priority, added first.  The one comparison of rules every
 * sub-table and the walk use. */
static inline bool
fdp__rule_beats(const struct fdp_rule *a, const struct fdp_rule *b)
{
    return !b || a->priority > b->priority
           || (a->priority == b->priority && a->seq < b->seq);
}

/* The rule's actions, for the datapath (RCU: valid in the read-side
 * section that found the rule). */
static inline const struct fdp_actions *
fdp__rule_actions(const struct fdp_rule *rule)
{
    return __atomic_load_n(&rule->actions, __ATOMIC_CONSUME);
}

/* True if 'key' is in 'rule''s match (not whether the rule is the best
 * one for it). */
static inline bool
fdp__rule_matches(const struct fdp_rule *rule, const struct fdp_key *key)
{
    return fdp__cmatch_matches(&rule->match, key);
}

/* For lib/pipeline.c, which keeps one table's flows in several
 * fdp_tables.  Both need the caller's open transaction on 'table'
 * (fdp_table_begin()).  fdp__table_select() stores in '*rulesp' a new
 * array (the caller frees it; the rules stay the table's) of the flows
 * 'filter' selects, as fdp_table_modify() would; returns 0 or ENOMEM.
 * fdp__table_find() returns the flow with exactly 'match' and 'priority',
 * or NULL. */
struct fdp_table_filter;
int fdp__table_select(struct fdp_table *table,
                      const struct fdp_table_filter *filter,
                      struct fdp_rule ***rulesp, size_t *n);
const struct fdp_rule *fdp__table_find(struct fdp_table *table,
                                       const struct fdp_match *match,
                                       uint16_t priority);

/* fdp_table_lookup() for a caller already in a read-side section, whose
 * lookup the table's lookup, hit and probe counters do not count: the
 * pipeline's lookups of conjunction clauses, and the second lookup that
 * a complete conjunction makes, are parts of one lookup of the table.
 * (It still counts sub-table hits, which rank sub-tables.) */
const struct fdp_rule *fdp__table_lookup_uncounted(struct fdp_table *table,
                                                   const struct fdp_key *key);

/* Lookups at a given version, in the caller's read-side section: what a
 * reader of a clocked table (below) uses, with the version of its
 * owner's published snapshot.  fdp__table_lookup_at() is uncounted, as
 * fdp__table_lookup_uncounted(); fdp__table_lookup_batch_at() counts as
 * fdp_table_lookup_batch(). */
const struct fdp_rule *fdp__table_lookup_at(struct fdp_table *table,
                                            const struct fdp_key *key,
                                            uint64_t version);
/* fdp__table_lookup_batch_at() that counts nothing, for at most
 * FDP_TABLE_BATCH_MAX keys (the pipeline's batches). */
void fdp__table_lookup_batch_uncounted_at(struct fdp_table *table,
                                          const struct fdp_key *const keys[],
                                          size_t n,
                                          const struct fdp_rule *rules[],
                                          uint64_t version);
/* The keys among those of 'probe' (bit i: keys[i], at most
 * FDP_TABLE_BATCH_MAX of them) that some flow of 'table' visible at
 * 'version' matches, as a bitmap of the same form: not which flow, nor
 * the best one.  What a conjunction clause asks (lib/pipeline.c).  Counts
 * only sub-table hits, as fdp__table_lookup_batch_uncounted_at().  In the
 * caller's read-side section. */
uint64_t fdp__table_match_any_batch(struct fdp_table *table,
                                    const struct fdp_key *const keys[],
                                    uint64_t probe, uint64_t version);
void fdp__table_lookup_batch_at(struct fdp_table *table,
                                const struct fdp_key *const keys[], size_t n,
                                const struct fdp_rule *rules[],
                                uint64_t version);

/* fdp_table_for_each() over the flows visible at 'version'. */
void fdp__table_for_each_at(struct fdp_table *table, uint64_t version,
                            bool (*cb)(const struct fdp_rule *, void *aux),
                            void *aux);

/* Makes 'table' take its versions from '*clock', a counter its owner (the
 * pipeline, for all its tables) publishes once after committing every
 * table of a transaction: a transaction's changes to 'table' are made at
 * version *clock + 1, and commit publishes the table's structures but the
 * changes become visible only to lookups at a version the owner has
 * published (Open vSwitch's versioned rules, one version for all
 * tables).  Since a lookup at the old version may still need the rules a
 * commit removed, a clocked table never reaps them on its own: its owner
 * calls fdp__table_reap() after publishing.  Set it on an empty table,
 * before any change. */
void fdp__table_set_clock(struct fdp_table *table, const uint64_t *clock);

/* For a clocked table's owner, after it has published the version of the
 * table's last commit: unlinks and frees (after a grace period) the rules
 * removed by earlier commits, if enough have gathered, or always if
 * 'all' (then also recomputes which priority levels may tie, as
 * fdp_table_run() does).  Takes the table's mutex. */
void fdp__table_reap(struct fdp_table *table, bool all);

/* Makes every rule 'table' adds from now on share one statistics block
 * instead of owning 64 bytes of counters: for tables whose flows are
 * never counted (the pipeline's conjunction clauses).  Their flows then
 * report no packets and the table's creation time as their own.  Call it
 * on an empty table.  Returns 0 or ENOMEM. */
int fdp__table_set_no_stats(struct fdp_table *table);

/* fdp_table_destroy() for a caller that has waited for deferred frees
 * (fdp__rcu_barrier()) since the table last changed: the pipeline
 * destroys its many tables after one wait, not one each. */
void fdp__table_destroy_after_barrier(struct fdp_table *table);

/* True if 'table' was declared disjoint (fdp_table_set_disjoint()). */
bool fdp__table_is_disjoint(const struct fdp_table *table);

/* fdp_rule_account() for 'n_packets' packets at once, on 'shard' (from
 * fdp__stats_shard_acquire(), or FDP__STATS_SHARED), given the rule's
 * counters (an outcome, lib/outcome.h, keeps those, not the rules: a
 * multi-table outcome counts its flows without a line of each rule). */
static inline void
fdp__counters_account_n(struct fdp__rule_counters *s, uint64_t n_packets,
                        uint64_t n_bytes, int64_t now_ms, unsigned int shard)
{
    if (shard < FDP__STATS_SHARED) {
        uint64_t *p = &s->shard[shard].n_packets;
        uint64_t *b = &s->shard[shard].n_bytes;
        __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n_packets,
                         __ATOMIC_RELAXED);
        __atomic_store_n(b, __atomic_load_n(b, __ATOMIC_RELAXED) + n_bytes,
                         __ATOMIC_RELAXED);
    } else {
        __atomic_fetch_add(&s->shard[FDP__STATS_SHARED].n_packets, n_packets,
                           __ATOMIC_RELAXED);
        __atomic_fetch_add(&s->shard[FDP__STATS_SHARED].n_bytes, n_bytes,
                           __ATOMIC_RELAXED);
    }
    if (__atomic_load_n(&s->used_ms, __ATOMIC_RELAXED) != now_ms) {
        __atomic_store_n(&s->used_ms, now_ms, __ATOMIC_RELAXED);
    }
}

static inline void
fdp__rule_account_n(const struct fdp_rule *rule, uint64_t n_packets,
                    uint64_t n_bytes, int64_t now_ms, unsigned int shard)
{
    fdp__counters_account_n(rule->stats, n_packets, n_bytes, now_ms, shard);
}

static inline bool
fdp__rule_visible(const struct fdp_rule *rule, uint64_t version)
{
    return __atomic_load_n(&rule->add_version, __ATOMIC_RELAXED) <= version
           && version < __atomic_load_n(&rule->remove_version,
                                        __ATOMIC_RELAXED);
}

/* Arrays of rules kept best first (pipapo, partitioned sub-tables). */

/* A binary search of 'rules' (n, best first) for 'rule''s place: the
 * index past every rule that beats it, and with 'past_ties' also past
 * those that tie with it on (priority, seq). */
static inline uint32_t
fdp__rules_bound(struct fdp_rule *const *rules, uint32_t n,
           const struct fdp_rule *rule, bool past_ties)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (past_ties ? !fdp__rule_beats(rule, rules[mid])
                      : fdp__rule_beats(rules[mid], rule)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The index of 'rule' in 'rules' (n, best first), or n if it is not
 * there.  Rules may tie on (priority, seq): a modified flow's new version
 * keeps the old one's sequence number, and both are linked until the
 * commit unlinks the old one.  So the search looks through the run of
 * ties from the first rule that does not beat 'rule'. */
static inline uint32_t
fdp__rules_find(struct fdp_rule *const *rules, uint32_t n,
          const struct fdp_rule *rule)
{
    uint32_t end = fdp__rules_bound(rules, n, rule, true);

    for (uint32_t i = fdp__rules_bound(rules, n, rule, false); i < end; i++) {
        if (rules[i] == rule) {
            return i;
        }
    }
    return n;
}

/* Inserts 'rule' into 'rules' (n of them, room for 'alloc') in order,
 * growing the array if needed.  Returns 0 or ENOMEM. */
static inline int
fdp__rules_insert(struct fdp_rule ***rules, uint32_t *n, uint32_t *alloc,
             struct fdp_rule *rule)
{
    if (*n == *alloc) {
        uint32_t grown = *alloc ? 2 * *alloc : 16;
        struct fdp_rule **r = realloc(*rules, grown * sizeof *r);
        if (!r) {
            return ENOMEM;
        }
        *rules = r;
        *alloc = grown;
    }
    uint32_t at = fdp__rules_bound(*rules, *n, rule, true);
    memmove(&(*rules)[at + 1], &(*rules)[at], (*n - at) * sizeof **rules);
    (*rules)[at] = rule;
    (*n)++;
    return 0;
}

#endif /* FDP_RULE_H */
