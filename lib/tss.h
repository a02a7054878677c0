/*
 * Tuple-space subtables (internal): one RCU hash table per distinct mask.
 * See lib/tss.c for the design.
 */
#ifndef FDP_TSS_H
#define FDP_TSS_H 1

#include <stdbool.h>
#include <stdint.h>

#include "flowdp/table.h"
#include "hash.h"
#include "hmap.h"
#include "match.h"
#include "rcu.h"

/* A flow in a table.  Fields above 'add_version' never change after the
 * rule is inserted. */
struct fdp_rule {
    struct fdp_match match;
    uint64_t cookie;
    uint64_t seq;               /* Insertion order: lower wins ties. */
    uint16_t priority;
    uint16_t idle_timeout;
    uint16_t hard_timeout;
    uint8_t table_id;

    /* Visible to lookups at versions [add_version, remove_version). */
    uint64_t add_version;
    uint64_t remove_version;

    struct fdp_actions *actions;        /* RCU. */
    struct fdp_rule_stats *stats;       /* Shared by a rule's versions. */
    bool owns_stats;                    /* Frees 'stats' when freed. */
    bool stats_shared;                  /* 'stats' came from an older
                                         * version of this flow. */

    struct fdp_rule *next;              /* RCU: next in group, best first. */
    struct tss_group *group;            /* Writer only. */
    struct tss_subtable *subtable;      /* Writer only (NULL in pipapo). */
    struct pipapo *pipapo;              /* Writer only (NULL in tss). */
    struct fdp_rule *txn_next;          /* Writer only: transaction log. */
    struct fdp__hmap_node index_node;   /* Writer only: in the table's
                                         * (match, priority) index. */
    struct fdp_table *table;            /* For memory accounting when the
                                         * rule is freed after a grace
                                         * period. */
    struct rcu_head rcu;
};

#define FDP_VERSION_NEVER UINT64_MAX

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

/* Rules of one subtable with the same masked key. */
struct tss_group {
    struct tss_group *next;             /* RCU: bucket chain. */
    struct fdp_rule *rules;             /* RCU: best (priority, seq) first. */
    uint32_t hash;
    struct rcu_head rcu;
    uint64_t key[];                     /* The masked words. */
};

/* A bucket array, replaced as a whole on resize or rehash. */
struct tss_buckets {
    uint32_t n_mask;                    /* Buckets - 1 (a power of 2). */
    bool keyed;                         /* fdp_hash_keyed, else fast. */
    uint32_t basis;
    struct fdp_hash_key key;
    struct rcu_head rcu;
    struct tss_group *heads[];
};

struct tss_subtable {
    /* Read by lookups; fixed at creation. */
    struct fdp_key mask;
    uint8_t n_words;                    /* Words the mask touches... */
    uint8_t words[FDP_KEY_WORDS];       /* ...and their indices. */
    uint64_t mask_words[FDP_KEY_WORDS]; /* Their mask bits. */

    struct tss_buckets *buckets;        /* RCU. */

    /* Bounds on the best rule: no rule beats (max_priority, min_seq).
     * Conservative: may be stale high.  Writer only: lookups read the
     * copies lib/table.c takes into each published view, which never
     * change, because fdp_table_run() lowers these before it publishes the
     * view re-sorted by them. */
    int max_priority;
    uint64_t min_seq;                   /* Among rules at max_priority. */

    /* Writer only. */
    uint32_t n_groups;
    uint32_t n_rules;
    struct rcu_head rcu;

    /* Approximate hit count, on its own cache line (lookups write it). */
    uint64_t hits __attribute__((aligned(64)));
    uint64_t hits_at_rank;              /* Writer: 'hits' at last re-rank. */
};

/* Chain bound: a probe never walks more groups than this; an insert that
 * would pass it makes the subtable rehash with the keyed hash (as Linux
 * rhashtable's 16-entry chain limit). */
#define TSS_MAX_CHAIN 16

struct tss_subtable *fdp__tss_create(const struct fdp_key *mask,
                                     uint32_t basis);
void fdp__tss_destroy_now(struct tss_subtable *);
void fdp__tss_destroy_deferred(struct tss_subtable *);

/* Links 'rule' (whose match mask equals the subtable's) into the
 * subtable.  Returns 0 or ENOMEM. */
int fdp__tss_insert(struct tss_subtable *, struct fdp_rule *);

/* Unlinks 'rule'; its memory must be reclaimed after a grace period. */
void fdp__tss_unlink(struct tss_subtable *, struct fdp_rule *);

/* The rule with the same match and priority as 'match'/'priority' that is
 * visible at 'version', or NULL.  Writer only. */
struct fdp_rule *fdp__tss_find_exact(const struct tss_subtable *,
                                     const struct fdp_match *,
                                     uint16_t priority, uint64_t version);

/* Gathers the words of 'key' the subtable's mask touches, masked, into
 * 'words' (FDP_KEY_WORDS long) and returns their hash under the bucket
 * array's hash function. */
uint32_t fdp__tss_hash(const struct tss_subtable *,
                       const struct tss_buckets *, const struct fdp_key *key,
                       uint64_t *words);

/* The best rule visible at 'version' among those whose masked key is
 * 'words' with hash 'hash' (both from fdp__tss_hash()), or NULL. */
const struct fdp_rule *fdp__tss_lookup(const struct tss_subtable *,
                                       const struct tss_buckets *,
                                       const uint64_t *words, uint32_t hash,
                                       uint64_t version);

/* Sets 'm' to the exact TCP 5-tuple whose subtable words are 'w0' (word 0:
 * nw_src in the high half, nw_dst in the low half) and 'w1' (word 1: the
 * ports in the high half; dl_type and nw_proto are added). */
void fdp__tss_5tuple_match(struct fdp_match *m, uint64_t w0, uint64_t w1);

/* Hash flooding, for tests and benchmarks: fills 'flows' with 'n' (a power
 * of 2, at most 2^30) exact TCP 5-tuples that an attacker who picks nw_src
 * and the ports can send, all with the same CRC32C hash in their subtable
 * under every basis.  Returns 0, or EINVAL if 'n' is not such a count. */
int fdp__tss_flood_flows(struct fdp_match *flows, size_t n);

/* The longest bucket chain, in groups (writer only; for tests). */
unsigned int fdp__tss_longest_chain(const struct tss_subtable *);

/* Bytes of memory the subtable uses (writer only). */
uint64_t fdp__tss_memory(const struct tss_subtable *);

#endif /* FDP_TSS_H */
