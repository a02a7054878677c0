/*
 * Tuple-space subtables (internal): one RCU hash table per distinct mask.
 * See lib/tss.c for the design.
 */
#ifndef FDP_TSS_H
#define FDP_TSS_H 1

#include <stdbool.h>
#include <stdint.h>

#include <flowdp/table.h>
#include "lib/hash-internal.h"
#include "lib/match-internal.h"
#include "lib/rcu.h"
#include "lib/rule.h"
#include "lib/subtable.h"
#include "lib/util.h"


/* Buckets are private to lib/tss.c (lib/tss-private.h). */
struct tss_buckets;

/* The word indices a subtable keeps in its first cache line: the first
 * 7, which with the bucket pointer and the count fill 16 bytes, so that
 * the first 4 mask words follow in the same line.  A mask touches at most
 * FDP_KEY_WORDS words (29 since the connection-tracking fields), too many
 * indices for one line with the mask words; the rest go after them. */
#define TSS_HEAD_WORDS 7

struct tss_subtable {
    /* Read by lookups, first so that a lookup of up to 4 words reads one
     * cache line of the subtable (the bucket array pointer, the word
     * indices and the first 4 mask words, bytes 0..47).  The words are
     * fixed at creation; fdp__tss_word() reads index k. */
    struct tss_buckets *buckets;        /* RCU. */
    uint8_t n_words;                    /* Words the mask touches... */
    uint8_t words[TSS_HEAD_WORDS];      /* ...the first indices... */
    uint64_t mask_words[FDP_KEY_WORDS]; /* ...their mask bits... */
    uint8_t words_tail[FDP_KEY_WORDS - TSS_HEAD_WORDS]; /* ...the rest. */

    struct fdp_key mask;
    uint8_t fast_hash;                  /* enum tss_hash_kind of the fast
                                         * hash, chosen at creation. */

    /* Writer only. */
    uint32_t n_groups;
    struct rcu_head rcu;

    /* The sub-table class's part (lib/subtable.h): rule count, bounds,
     * hits. */
    struct fdp__subtable up;
};

/* The key word index of the subtable's word 'k' (k < n_words).  A
 * lookup specialised for N <= TSS_HEAD_WORDS words resolves the branch at
 * compile time. */
static inline unsigned int
fdp__tss_word(const struct tss_subtable *st, unsigned int k)
{
    return k < TSS_HEAD_WORDS ? st->words[k]
                              : st->words_tail[k - TSS_HEAD_WORDS];
}

/* The tuple-space implementation of the sub-table class. */
extern const struct fdp__subtable_class fdp__tss_class;

static inline struct tss_subtable *
fdp__tss_cast(const struct fdp__subtable *st)
{
    return CONTAINER_OF(st, struct tss_subtable, up);
}

/* Probe bounds (lib/tss.c, "Overflow and the probe bound"): a probe reads
 * at most TSS_MAX_PROBE bucket lines, and under the fast hash no more than
 * TSS_MAX_SAME_HASH groups of a subtable share one 32-bit hash, so a probe
 * dereferences at most that many groups.  An insert that would pass the
 * second bound rehashes the subtable with the keyed hash. */
#define TSS_MAX_PROBE 4
#define TSS_MAX_SAME_HASH 4

/* Modifiers: the caller holds the table's mutex (one writer at a time).
 * ---------------------------------------------------------------------- */

/* Creates an empty subtable for 'mask', hashing with a per-table 'basis'.
 * The hash (CRC32C or jhash2, as fdp_hash_fast_name() says now) and the
 * lookup functions specialised for the mask's word count are chosen here
 * and kept.  Returns NULL if out of memory. */
struct tss_subtable *fdp__tss_create(const struct fdp_key *mask,
                                     uint32_t basis);

/* Frees 'st' now (no reader may still see it); the rules are the
 * caller's. */
void fdp__tss_destroy_now(struct tss_subtable *);

/* Frees 'st', which holds no rule, after a grace period. */
void fdp__tss_destroy_deferred(struct tss_subtable *);

/* Links 'rule' (whose match mask equals the subtable's) into the
 * subtable.  Returns 0 or ENOMEM (then nothing changed). */
int fdp__tss_insert(struct tss_subtable *, struct fdp_rule *);

/* Unlinks 'rule'; its memory must be reclaimed after a grace period. */
void fdp__tss_unlink(struct tss_subtable *, struct fdp_rule *);

/* The rule with the same match and priority as 'match'/'priority' that is
 * visible at 'version', or NULL. */
struct fdp_rule *fdp__tss_find_exact(const struct tss_subtable *,
                                     const struct fdp_match *,
                                     uint16_t priority, uint64_t version);

/* Lookups and walks: RCU protected, may run concurrently with a writer;
 * the caller is inside an RCU read-side section.
 * ---------------------------------------------------------------------- */

/* For each key keys[i] with bit i set in 'probe' (i < FDP_TABLE_BATCH_MAX),
 * finds the best rule of the subtable that matches it and is visible at
 * 'version', stores it in found[i] and sets bit i of the result; found[i]
 * is not written for keys without a match.  Gathers every key's masked
 * words once, hashes them all, prefetches every bucket line, then probes,
 * so that the memory loads of different keys overlap. */
uint64_t fdp__tss_lookup_batch(const struct tss_subtable *,
                               const struct fdp_key *const keys[],
                               uint64_t probe, uint64_t version,
                               const struct fdp_rule *found[]);

/* The best rule of the subtable for 'key' visible at 'version', or
 * NULL: fdp__tss_lookup_batch() for one key. */
const struct fdp_rule *fdp__tss_lookup(const struct tss_subtable *,
                                       const struct fdp_key *key,
                                       uint64_t version);

/* Calls 'cb(rule, aux)' for every rule linked into the subtable, whatever
 * its versions, group by group, each group best first, until 'cb' returns
 * false.  Returns false if 'cb' stopped the walk.  The walk reads the next
 * rule before it calls 'cb', so a writer's 'cb' may free the rule it is
 * given (fdp_table_destroy()), but it must not otherwise change the
 * subtable.  Readers may call it in a read-side section, writers under
 * the mutex. */
bool fdp__tss_for_each_rule(const struct tss_subtable *,
                            bool (*cb)(struct fdp_rule *, void *aux),
                            void *aux);

/* True if the subtable hashes with fdp_hash_keyed() (it was flooded). */
bool fdp__tss_is_keyed(const struct tss_subtable *);

/* Tests and benchmarks.
 * ---------------------------------------------------------------------- */

/* The hash functions a subtable may use, in the order of
 * fdp__tss_hash_name(). */
enum tss_hash_kind {
    TSS_HASH_JHASH2,
    TSS_HASH_CRC32C,                    /* Only if built with SSE4.2. */
    TSS_HASH_KEYED,
};

/* fdp__tss_create() with the fast hash 'kind' (TSS_HASH_JHASH2, or
 * TSS_HASH_CRC32C if fdp__cpu_supports(FDP_CPU_SSE42) and the build has
 * it) or, with TSS_HASH_KEYED, keyed from the start.  Returns NULL if out
 * of memory or 'kind' cannot run here. */
struct tss_subtable *fdp__tss_create_with(const struct fdp_key *mask,
                                          uint32_t basis,
                                          enum tss_hash_kind kind);

/* Writer only: the most bucket lines a probe of 'st' may read (at most
 * TSS_MAX_PROBE) and, in '*same', the most groups that share one 32-bit
 * hash (the groups a probe may dereference). */
unsigned int fdp__tss_longest_probe(const struct tss_subtable *,
                                    unsigned int *same);

/* Sets 'm' to the exact TCP 5-tuple whose subtable words are 'w0' (word 0:
 * nw_src in the high half, nw_dst in the low half) and 'w1' (word 1: the
 * ports in the high half; dl_type and nw_proto are added). */
void fdp__tss_5tuple_match(struct fdp_match *m, uint64_t w0, uint64_t w1);

/* Hash flooding, for tests and benchmarks: fills 'flows' with 'n' (a power
 * of 2, at most 2^30) exact TCP 5-tuples that an attacker who picks nw_src
 * and the ports can send, all with the same CRC32C hash in their subtable
 * under every basis.  Returns 0, or EINVAL if 'n' is not such a count. */
int fdp__tss_flood_flows(struct fdp_match *flows, size_t n);

/* Bytes of memory the subtable uses (writer only). */
uint64_t fdp__tss_memory(const struct tss_subtable *);

#endif /* FDP_TSS_H */
