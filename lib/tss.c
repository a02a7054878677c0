/*
 * Tuple-space subtables.
 *
 * What it is for
 * ==============
 * Tuple-space search (Srinivasan, Suri, Varghese, SIGCOMM 1999; Open
 * vSwitch's classifier and megaflow cache) keeps one hash table per
 * distinct mask.  A lookup masks the packet's key with each subtable's
 * mask, hashes the words the mask touches and probes that subtable's hash
 * table.  This file is one subtable; lib/table.c orders subtables and
 * walks them.
 *
 * Design
 * ======
 * - A subtable hashes only the words its mask touches (n_words of the 12),
 *   gathered into a small array, with the fast hash (CRC32C or jhash2,
 *   lib/hash.c) and a per-table random basis.
 * - Buckets hold chains of groups; a group is the set of rules whose
 *   masked keys are equal (they differ in priority, or are two versions of
 *   one flow during a change), sorted best first: priority descending,
 *   then insertion sequence ascending.  A probe walks one chain and, in
 *   the group whose key matches, takes the first rule visible at the
 *   lookup's version.
 * - The bucket array is replaced as a whole when it grows (more groups
 *   than buckets), shrinks (fewer than a quarter), or rehashes: the writer
 *   builds a new array with fresh copies of the groups (the rules are
 *   shared), publishes it with one pointer store and frees the old array
 *   and groups after an RCU grace period.  Readers never wait.
 * - Hash flooding: CRC32C is linear, so an attacker can make any number of
 *   keys with one CRC (lib/hash.c).  No chain may pass TSS_MAX_CHAIN (16)
 *   groups: an insert that would pass it rebuilds the subtable with
 *   fdp_hash_keyed() (SipHash-1-3) under a fresh random key.  Re-seeding
 *   the CRC would not help: CRC collisions do not depend on the seed.
 *
 * Invariants
 * ==========
 * - Every group's key is the masked key of all its rules, and each group
 *   is in the chain of hash(key) under the current bucket array.
 * - No two groups in one subtable have the same key.
 * - Group rule lists are sorted best first.
 * - max_priority/min_seq bound every rule of the subtable from above.
 *
 * Thread-safety
 * =============
 * Writers (insert, unlink, find_exact) run under the table's mutex.
 * Lookups may run concurrently: every pointer they follow (buckets, chain
 * links, group rule lists, rule links) is published with a release store
 * after the object it points to is complete, and nothing they may reach is
 * freed before a grace period.
 *
 * Worked example
 * ==============
 * Mask "tcp,nw_dst=255.255.255.0,tp_dst=0xffff" touches word 0 (nw_dst in
 * bits 31..0) and word 1 (tp_dst in 47..32, dl_type in 31..16, nw_proto
 * in 15..8), so n_words = 2, words = {0, 1} and mask_words =
 * {0x00000000ffffff00, 0x0000ffffffffff00}.  The flow
 * "tcp,nw_dst=10.0.0.0/24,tp_dst=80" has masked words {0x000000000a000000,
 * 0x0000005008000600}.  A packet to 10.0.0.7 port 80 masks to the same two
 * words, hashes (two words, one crc32q each) to the same bucket, finds the
 * group by comparing the two words, and takes the group's first rule
 * visible at the lookup's version.
 */
#include <config.h>

#include "tss.h"

#include "hash-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The smallest bucket array, and the size a new subtable starts at: 16
 * heads are 128 bytes, two cache lines, which costs little for the many
 * subtables that hold a handful of flows, and lets a subtable take 16
 * groups (load factor 1) before its first rebuild.  Must be a power of 2
 * (buckets are indexed with 'n_mask'). */
#define TSS_MIN_BUCKETS 16
_Static_assert((TSS_MIN_BUCKETS & (TSS_MIN_BUCKETS - 1)) == 0,
               "bucket counts are powers of 2");

static void
gather(const struct tss_subtable *st, const struct fdp_key *key,
       uint64_t *out)
{
    for (int i = 0; i < st->n_words; i++) {
        out[i] = key->w[st->words[i]] & st->mask_words[i];
    }
}

static uint32_t
hash_words(const struct tss_buckets *b, const uint64_t *words, size_t n)
{
    return b->keyed ? fdp_hash_keyed(words, n, &b->key)
                    : fdp_hash_fast(words, n, b->basis);
}

uint32_t
fdp__tss_hash(const struct tss_subtable *st, const struct tss_buckets *b,
              const struct fdp_key *key, uint64_t *words)
{
    gather(st, key, words);
    return hash_words(b, words, st->n_words);
}

static struct tss_buckets *
buckets_alloc(uint32_t n_buckets, bool keyed, uint32_t basis)
{
    struct tss_buckets *b = calloc(1, sizeof *b
                                      + n_buckets * sizeof b->heads[0]);
    if (!b) {
        return NULL;
    }
    b->n_mask = n_buckets - 1;
    b->keyed = keyed;
    b->basis = basis;
    if (keyed && fdp_hash_random_key(&b->key)) {
        free(b);
        return NULL;
    }
    return b;
}

struct tss_subtable *
fdp__tss_create(const struct fdp_key *mask, uint32_t basis)
{
    struct tss_subtable *st = aligned_alloc(64, sizeof *st);

    if (!st) {
        return NULL;
    }
    memset(st, 0, sizeof *st);
    st->mask = *mask;
    for (int i = 0; i < FDP_KEY_WORDS; i++) {
        if (mask->w[i]) {
            st->words[st->n_words] = (uint8_t) i;
            st->mask_words[st->n_words++] = mask->w[i];
        }
    }
    st->max_priority = -1;
    st->min_seq = UINT64_MAX;
    st->buckets = buckets_alloc(TSS_MIN_BUCKETS, false, basis);
    if (!st->buckets) {
        free(st);
        return NULL;
    }
    return st;
}

static void
free_group_cb(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    free(CONTAINER_OF(head, struct tss_group, rcu));
}

static void
free_buckets_cb(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    free(CONTAINER_OF(head, struct tss_buckets, rcu));
}

static void
free_subtable_cb(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    struct tss_subtable *st = CONTAINER_OF(head, struct tss_subtable, rcu);
    free(st->buckets);
    free(st);
}

void
fdp__tss_destroy_now(struct tss_subtable *st)
{
    struct tss_buckets *b = st->buckets;

    for (uint32_t i = 0; i <= b->n_mask; i++) {
        for (struct tss_group *g = b->heads[i], *next; g; g = next) {
            next = g->next;
            free(g);
        }
    }
    free(b);
    free(st);
}

void
fdp__tss_destroy_deferred(struct tss_subtable *st)
{
    /* Called only for empty subtables: no groups remain. */
    fdp__rcu_defer(&st->rcu, free_subtable_cb);
}

static size_t
group_size(const struct tss_subtable *st)
{
    return sizeof(struct tss_group) + st->n_words * sizeof(uint64_t);
}

static inline bool
key_equal(const uint64_t *a, const uint64_t *b, unsigned int n)
{
    uint64_t diff = 0;

    for (unsigned int i = 0; i < n; i++) {
        diff |= a[i] ^ b[i];
    }
    return !diff;
}

static struct tss_group *
find_group(const struct tss_subtable *st, const struct tss_buckets *b,
           const uint64_t *words, uint32_t hash)
{
    for (struct tss_group *g = FDP_RCU_GET(b->heads[hash & b->n_mask]); g;
         g = FDP_RCU_GET(g->next)) {
        if (g->hash == hash && key_equal(g->key, words, st->n_words)) {
            return g;
        }
    }
    return NULL;
}

/* Replaces the bucket array by one of 'n_buckets' buckets using the keyed
 * hash if 'keyed', copying every group.  Returns 0 or ENOMEM (then the
 * subtable is unchanged). */
static int
rebuild(struct tss_subtable *st, uint32_t n_buckets, bool keyed)
{
    struct tss_buckets *old = st->buckets;
    struct tss_buckets *b = buckets_alloc(n_buckets, keyed, old->basis);

    if (!b) {
        return ENOMEM;
    }

    /* Copy the groups first; publish nothing until all copies exist. */
    size_t n = 0;
    struct tss_group **copies = malloc((st->n_groups + 1) * sizeof *copies);
    if (!copies) {
        free(b);
        return ENOMEM;
    }
    for (uint32_t i = 0; i <= old->n_mask; i++) {
        for (struct tss_group *g = old->heads[i]; g; g = g->next) {
            struct tss_group *c = malloc(group_size(st));
            if (!c) {
                while (n) {
                    free(copies[--n]);
                }
                free(copies);
                free(b);
                return ENOMEM;
            }
            memcpy(c, g, group_size(st));
            c->hash = hash_words(b, c->key, st->n_words);
            c->next = b->heads[c->hash & b->n_mask];
            b->heads[c->hash & b->n_mask] = c;
            copies[n++] = c;
        }
    }

    FDP_RCU_SET(st->buckets, b);

    /* The writer's back-pointers move to the copies; readers that still
     * walk the old array see the old groups until the grace period. */
    for (size_t i = 0; i < n; i++) {
        for (struct fdp_rule *r = copies[i]->rules; r; r = r->next) {
            r->group = copies[i];
        }
    }
    free(copies);
    for (uint32_t i = 0; i <= old->n_mask; i++) {
        for (struct tss_group *g = old->heads[i], *next; g; g = next) {
            next = g->next;
            fdp__rcu_defer(&g->rcu, free_group_cb);
        }
    }
    fdp__rcu_defer(&old->rcu, free_buckets_cb);
    return 0;
}

static unsigned int
longest_chain(const struct tss_buckets *b)
{
    unsigned int longest = 0;

    for (uint32_t i = 0; i <= b->n_mask; i++) {
        unsigned int len = 0;
        for (const struct tss_group *g = b->heads[i]; g; g = g->next) {
            len++;
        }
        longest = len > longest ? len : longest;
    }
    return longest;
}

/* True if rule 'a' beats rule 'b': higher priority, or equal priority and
 * added earlier. */
static bool
better(const struct fdp_rule *a, const struct fdp_rule *b)
{
    return a->priority > b->priority
           || (a->priority == b->priority && a->seq < b->seq);
}

/* The number of groups in the chain of 'hash' in 'b'. */
static unsigned int
chain_length(const struct tss_buckets *b, uint32_t hash)
{
    unsigned int len = 0;

    for (const struct tss_group *g = b->heads[hash & b->n_mask]; g;
         g = g->next) {
        len++;
    }
    return len;
}

/* Makes room for one more group of key 'words', whose hash under the
 * current bucket array is '*hash', and stores in '*hash' its hash under
 * the array the group must go to.  Phase 1 grows the array past load
 * factor 1.  Phase 2 checks the chain bound in the array the group will
 * really join: growing does not shorten a chain of keys that share one
 * full 32-bit hash (a CRC flood), so the check must follow the growth,
 * not replace it.  A chain that would pass TSS_MAX_CHAIN switches the
 * subtable to the keyed hash. */
static int
make_room(struct tss_subtable *st, const uint64_t *words, uint32_t *hash)
{
    struct tss_buckets *b = st->buckets;

    if (st->n_groups + 1 > b->n_mask + 1) {
        int error = rebuild(st, 2 * (b->n_mask + 1), b->keyed);
        if (error) {
            return error;
        }
        b = st->buckets;
        *hash = hash_words(b, words, st->n_words);
    }
    if (chain_length(b, *hash) + 1 > TSS_MAX_CHAIN) {
        /* Under the keyed hash a long chain is bad luck, not an attack
         * (at load factor at most 1, 16 other groups in one bucket has
         * probability about 1/16!, below 2^-44): grow instead. */
        int error = rebuild(st, b->keyed ? 2 * (b->n_mask + 1)
                                         : b->n_mask + 1, true);
        if (error) {
            return error;
        }
        *hash = hash_words(st->buckets, words, st->n_words);
    }
    return 0;
}

int
fdp__tss_insert(struct tss_subtable *st, struct fdp_rule *rule)
{
    uint64_t words[FDP_KEY_WORDS];

    gather(st, &rule->match.value, words);
    uint32_t hash = hash_words(st->buckets, words, st->n_words);
    struct tss_group *g = find_group(st, st->buckets, words, hash);
    if (!g) {
        int error = make_room(st, words, &hash);
        if (error) {
            return error;
        }
        g = malloc(group_size(st));
        if (!g) {
            return ENOMEM;
        }
        g->rules = NULL;
        g->hash = hash;
        memcpy(g->key, words, st->n_words * sizeof *words);
        struct tss_buckets *b = st->buckets;
        g->next = b->heads[hash & b->n_mask];
        FDP_RCU_SET(b->heads[hash & b->n_mask], g);
        st->n_groups++;
    }

    /* Insert into the group's list, best first. */
    struct fdp_rule **prev = &g->rules;
    while (*prev && better(*prev, rule)) {
        prev = &(*prev)->next;
    }
    rule->next = *prev;
    FDP_RCU_SET(*prev, rule);
    rule->group = g;
    rule->subtable = st;
    st->n_rules++;

    if (rule->priority > st->max_priority) {
        __atomic_store_n(&st->max_priority, rule->priority, __ATOMIC_RELAXED);
        __atomic_store_n(&st->min_seq, rule->seq, __ATOMIC_RELAXED);
    } else if (rule->priority == st->max_priority && rule->seq < st->min_seq) {
        __atomic_store_n(&st->min_seq, rule->seq, __ATOMIC_RELAXED);
    }
    return 0;
}

void
fdp__tss_unlink(struct tss_subtable *st, struct fdp_rule *rule)
{
    struct tss_group *g = rule->group;
    struct fdp_rule **prev = &g->rules;

    while (*prev != rule) {
        prev = &(*prev)->next;
    }
    FDP_RCU_SET(*prev, rule->next);
    st->n_rules--;

    if (!g->rules) {
        struct tss_buckets *b = st->buckets;
        struct tss_group **gp = &b->heads[g->hash & b->n_mask];
        while (*gp != g) {
            gp = &(*gp)->next;
        }
        FDP_RCU_SET(*gp, g->next);
        fdp__rcu_defer(&g->rcu, free_group_cb);
        st->n_groups--;

        /* Shrink below load factor 1/4, to half the buckets: the new
         * load factor is below 1/2, so the table can take twice its
         * groups again before it grows, and a subtable whose size
         * hovers around a power of 2 does not rebuild on every insert
         * and removal (the gap between 1/4 and 1 is the hysteresis).
         * Failure to shrink is harmless. */
        if (st->n_groups < (b->n_mask + 1) / 4
            && b->n_mask + 1 > TSS_MIN_BUCKETS) {
            rebuild(st, (b->n_mask + 1) / 2, b->keyed);
        }
    }
}

struct fdp_rule *
fdp__tss_find_exact(const struct tss_subtable *st,
                    const struct fdp_match *match, uint16_t priority,
                    uint64_t version)
{
    uint64_t words[FDP_KEY_WORDS];

    gather(st, &match->value, words);
    uint32_t hash = hash_words(st->buckets, words, st->n_words);
    struct tss_group *g = find_group(st, st->buckets, words, hash);
    if (g) {
        for (struct fdp_rule *r = g->rules; r; r = r->next) {
            if (r->priority == priority && fdp__rule_visible(r, version)) {
                return r;
            }
        }
    }
    return NULL;
}

const struct fdp_rule *
fdp__tss_lookup(const struct tss_subtable *st, const struct tss_buckets *b,
                const uint64_t *words, uint32_t hash, uint64_t version)
{
    const struct tss_group *g = find_group(st, b, words, hash);

    if (g) {
        for (const struct fdp_rule *r = FDP_RCU_GET(g->rules); r;
             r = FDP_RCU_GET(r->next)) {
            if (fdp__rule_visible(r, version)) {
                return r;
            }
        }
    }
    return NULL;
}

uint64_t
fdp__tss_memory(const struct tss_subtable *st)
{
    return sizeof *st + sizeof(struct tss_buckets)
           + (st->buckets->n_mask + 1) * sizeof(struct tss_group *)
           + st->n_groups * group_size(st);
}

unsigned int
fdp__tss_longest_chain(const struct tss_subtable *st)
{
    return longest_chain(st->buckets);
}

void
fdp__tss_5tuple_match(struct fdp_match *m, uint64_t w0, uint64_t w1)
{
    fdp__match_init(m);
    fdp__match_set_masked(m, FDP_F_DL_TYPE, FDP_ETH_TYPE_IP, 0xffff);
    fdp__match_set_masked(m, FDP_F_NW_PROTO, FDP_IPPROTO_TCP, 0xff);
    fdp__match_set_masked(m, FDP_F_NW_SRC, w0 >> 32, 0xffffffff);
    fdp__match_set_masked(m, FDP_F_NW_DST, (uint32_t) w0, 0xffffffff);
    fdp__match_set_masked(m, FDP_F_TP_SRC, w1 >> 48, 0xffff);
    fdp__match_set_masked(m, FDP_F_TP_DST, (w1 >> 32) & 0xffff, 0xffff);
}

int
fdp__tss_flood_flows(struct fdp_match *flows, size_t n)
{
    /* The exact 5-tuple subtable hashes words 0 and 1; the attacker
     * controls nw_src (word 0, bits 63..32) and the ports (word 1, bits
     * 63..32).  Every XOR combination of the CRC's null-space vectors
     * over those bits keeps the hash. */
    const uint64_t controlled[2] = { 0xffffffff00000000ull,
                                     0xffffffff00000000ull };
    uint64_t diffs[32][16];
    size_t bits = 0;

    if (!n || (n & (n - 1)) || n > ((size_t) 1 << 30)) {
        return EINVAL;
    }
    while (((size_t) 1 << bits) < n) {
        bits++;
    }
    if (fdp__crc32c_null_space(2, controlled, diffs, 32) < bits) {
        return EINVAL;
    }
    for (size_t k = 0; k < n; k++) {
        uint64_t w0 = 0x0a0000010a000002ull, w1 = 0;
        for (size_t d = 0; d < bits; d++) {
            if ((k >> d) & 1) {
                w0 ^= diffs[d][0];
                w1 ^= diffs[d][1];
            }
        }
        fdp__tss_5tuple_match(&flows[k], w0, w1);
    }
    return 0;
}
