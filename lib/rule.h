/*
 * A flow in a table (internal): the rule object that sub-tables link and
 * lookups return, shared by lib/table.c, lib/tss.c and lib/pipapo.c.
 */
#ifndef FDP_RULE_H
#define FDP_RULE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flowdp/table.h"
#include "hmap.h"
#include "match.h"
#include "rcu.h"

struct fdp__subtable;
struct tss_group;

/* A flow in a table.
 *
 * Layout: a lookup that reaches a rule reads its priority and sequence
 * number (to compare it with the best so far), its versions (to see
 * whether it is visible) and, in the datapath, its actions and statistics:
 * those come first, in the rule's first cache line (rules are allocated
 * 64-byte aligned), so that a hit costs one line of the rule, not the
 * fifth and sixth as when the 296-byte match came first.  The match, read
 * only by writers and dumps, comes last.
 *
 * 'priority', 'seq', 'cookie', the timeouts, 'table_id' and 'match' never
 * change after the rule is inserted. */
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
    struct fdp_actions *actions;        /* RCU. */
    struct fdp_rule_stats *stats;       /* Shared by a rule's versions. */
    struct fdp_rule *next;              /* RCU: next in group, best first. */
    uint64_t cookie;

    /* Writer only. */
    bool stats_shared;                  /* 'stats' came from an older
                                         * version of this flow. */
    uint32_t owner_slot;                /* Where 'owner' keeps it (pipapo:
                                         * its index in the built part of
                                         * the snapshot, or
                                         * PIPAPO_IN_DELTA). */
    struct tss_group *group;
    struct fdp__subtable *owner;        /* The sub-table it is linked in. */
    struct fdp_rule *txn_next;          /* Transaction log. */
    struct fdp__hmap_node index_node;   /* In the table's (match, priority)
                                         * index. */
    struct fdp_table *table;            /* For memory accounting when the
                                         * rule is freed after a grace
                                         * period. */
    struct rcu_head rcu;

    struct fdp_match match;
};

/* What a lookup reads is in the first cache line. */
static_assert(offsetof(struct fdp_rule, cookie) + sizeof(uint64_t) <= 64,
              "a rule's lookup fields fit its first cache line");

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

/* fdp_rule_account() for 'n_packets' packets at once. */
void fdp__rule_account_n(const struct fdp_rule *, uint64_t n_packets,
                         uint64_t n_bytes, int64_t now_ms);

static inline bool
fdp__rule_visible(const struct fdp_rule *rule, uint64_t version)
{
    return __atomic_load_n(&rule->add_version, __ATOMIC_RELAXED) <= version
           && version < __atomic_load_n(&rule->remove_version,
                                        __ATOMIC_RELAXED);
}

#endif /* FDP_RULE_H */
