/*
 * Tuple-space subtables: the bucket layout and the inline lookup that
 * lib/tss.c and lib/tss-sse42.c specialise (one function per hash and word
 * count) and that the unit tests inspect.  See lib/tss.c for the design.
 */
#ifndef FDP_TSS_PRIVATE_H
#define FDP_TSS_PRIVATE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/rule.h"
#include "lib/tss.h"
#include "lib/util.h"

/* Entries per bucket: 5 hashes and 5 pointers with the pass count fill 64
 * bytes exactly (5 * 4 + 4 + 5 * 8). */
#define TSS_BUCKET_ENTRIES 5

/* One cache line of the bucket array.  Entry s is free if heads[s] is
 * NULL; otherwise heads[s] is the best rule of a group (the rules with one
 * masked key, chained by 'next' best first) and hashes[s] the hash of that
 * key.  'n_pass' counts the groups stored after this bucket whose home
 * bucket (hash & n_mask) is this one or one before it within the probe
 * window: a probe that finds no match here goes on to the next bucket only
 * if it is nonzero. */
struct tss_bucket {
    uint32_t hashes[TSS_BUCKET_ENTRIES];        /* Atomic, relaxed. */
    uint32_t n_pass;                            /* Atomic, relaxed. */
    struct fdp_rule *heads[TSS_BUCKET_ENTRIES]; /* RCU. */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct tss_bucket) == 64,
               "a bucket is one cache line");

struct tss_buckets;

/* The hash of a subtable's 'n' gathered words under bucket array 'b'. */
typedef uint32_t tss_hash_fn(const struct tss_buckets *b,
                             const uint64_t *words, unsigned int n);

/* fdp__tss_lookup_batch() for one hash and word count. */
typedef uint64_t tss_batch_fn(const struct tss_subtable *,
                              const struct tss_buckets *,
                              const struct fdp_key *const keys[],
                              uint64_t probe, uint64_t version,
                              const struct fdp_rule *found[]);

/* The functions of one (hash, word count) pair.  Both hash the same way,
 * so inserts (which use 'hash') and lookups agree. */
struct tss_ops {
    tss_hash_fn *hash;
    tss_batch_fn *lookup_batch;
};

/* Specialised word counts: ops[n] for n in 1..TSS_SPECIALISED_WORDS,
 * ops[0] the generic loop for every other count (0 or 5..12). */
#define TSS_SPECIALISED_WORDS 4

/* The CRC32C functions, in lib/tss-sse42.c. */
extern const struct tss_ops fdp__tss_crc32c_ops[TSS_SPECIALISED_WORDS + 1];

/* A bucket array, replaced as a whole on resize or rehash. */
struct tss_buckets {
    const struct tss_ops *ops;          /* For this array's hash. */
    uint32_t n_mask;                    /* Buckets - 1 (a power of 2). */
    uint32_t window;                    /* Buckets a probe may read: the
                                         * smaller of TSS_MAX_PROBE and the
                                         * bucket count. */
    uint32_t basis;
    bool keyed;                         /* fdp_hash_keyed, else fast. */
    struct fdp_hash_key key;
    struct rcu_head rcu;
    struct tss_bucket lines[];          /* 64-byte aligned. */
};

/* ---------------------------------------------------------------------- */
/* The lookup, inline so that each specialisation gets its own copy with a
 * constant word count and an inlined hash. */

static inline bool
tss_key_equal(const uint64_t *a, const uint64_t *b, unsigned int n)
{
    uint64_t diff = 0;

    for (unsigned int i = 0; i < n; i++) {
        diff |= a[i] ^ b[i];
    }
    return !diff;
}

static inline const struct tss_bucket *
tss_line(const struct tss_buckets *b, uint32_t index)
{
    return &b->lines[index & b->n_mask];
}

/* The masked key of the group 'r' heads: its compact match's value words
 * (lib/match-internal.h), which are the subtable's words in its order. */
static inline const uint64_t *
tss_rule_key(const struct fdp_rule *r)
{
    return r->match.w;
}

/* The head of the group of 'words' (hash 'hash') in 'b', or NULL: the full
 * probe over the window. */
static inline const struct fdp_rule *
tss_probe(const struct tss_buckets *b, const uint64_t *words,
          unsigned int n, uint32_t hash)
{
    for (uint32_t k = 0; k < b->window; k++) {
        const struct tss_bucket *bk = tss_line(b, hash + k);
        for (int s = 0; s < TSS_BUCKET_ENTRIES; s++) {
            if (__atomic_load_n(&bk->hashes[s], __ATOMIC_RELAXED) == hash) {
                const struct fdp_rule *h = FDP_RCU_GET(bk->heads[s]);
                if (h && tss_key_equal(tss_rule_key(h), words, n)) {
                    return h;
                }
            }
        }
        if (!__atomic_load_n(&bk->n_pass, __ATOMIC_RELAXED)) {
            break;
        }
    }
    return NULL;
}

/* The first rule from 'r' on visible at 'version', or NULL. */
static inline const struct fdp_rule *
tss_first_visible(const struct fdp_rule *r, uint64_t version)
{
    for (; r; r = FDP_RCU_GET(r->next)) {
        if (fdp__rule_visible(r, version)) {
            return r;
        }
    }
    return NULL;
}

/* The body of every tss_batch_fn, for 'n' words (a constant in each
 * specialisation) stored 'stride' apart, hashed by 'hash' (a constant
 * function, inlined).  Four passes over the keys, each issuing the loads
 * the next one needs, so that the misses of different keys overlap:
 *   1. gather, hash, prefetch the home bucket line;
 *   2. compare the hashes in the home line, prefetch the group head whose
 *      hash matches (or note a certain miss: no match and n_pass == 0):
 *      both its lines, the key words and the versions;
 *   3. compare the head's key (else take the full probe);
 *   4. take the first visible rule of the group. */
static inline __attribute__((always_inline)) uint64_t
tss_lookup_batch_inline(const struct tss_subtable *st,
                        const struct tss_buckets *b,
                        const struct fdp_key *const keys[], uint64_t probe,
                        uint64_t version, const struct fdp_rule *found[],
                        unsigned int n, unsigned int stride,
                        tss_hash_fn *hash)
{
    uint64_t words[FDP_TABLE_BATCH_MAX * FDP_KEY_WORDS];
    uint32_t hashes[FDP_TABLE_BATCH_MAX];
    const void *next[FDP_TABLE_BATCH_MAX];
    uint64_t maybe = 0, hits = 0;

    /* Pass 1. */
    for (uint64_t m = probe; m; m &= m - 1) {
        size_t i = (size_t) __builtin_ctzll(m);
        uint64_t *w = &words[i * stride];
        for (unsigned int k = 0; k < n; k++) {
            w[k] = keys[i]->w[fdp__tss_word(st, k)] & st->mask_words[k];
        }
        hashes[i] = hash(b, w, n);
        __builtin_prefetch(tss_line(b, hashes[i]));
    }

    /* Pass 2. */
    for (uint64_t m = probe; m; m &= m - 1) {
        size_t i = (size_t) __builtin_ctzll(m);
        const struct tss_bucket *bk = tss_line(b, hashes[i]);
        const struct fdp_rule *h = NULL;
        for (int s = 0; s < TSS_BUCKET_ENTRIES; s++) {
            if (__atomic_load_n(&bk->hashes[s], __ATOMIC_RELAXED)
                == hashes[i]) {
                h = FDP_RCU_GET(bk->heads[s]);
                if (h) {
                    break;
                }
            }
        }
        next[i] = h;
        if (h) {
            __builtin_prefetch(tss_rule_key(h));
            __builtin_prefetch(&h->add_version);
            maybe |= UINT64_C(1) << i;
        } else if (__atomic_load_n(&bk->n_pass, __ATOMIC_RELAXED)) {
            maybe |= UINT64_C(1) << i;
        }
    }

    /* Pass 3. */
    for (uint64_t m = maybe; m; m &= m - 1) {
        size_t i = (size_t) __builtin_ctzll(m);
        const uint64_t *w = &words[i * stride];
        const struct fdp_rule *h = next[i];
        if (!h || !tss_key_equal(tss_rule_key(h), w, n)) {
            h = tss_probe(b, w, n, hashes[i]);
            next[i] = h;
            if (h) {
                __builtin_prefetch(&h->add_version);
            } else {
                maybe &= ~(UINT64_C(1) << i);
            }
        }
    }

    /* Pass 4. */
    for (uint64_t m = maybe; m; m &= m - 1) {
        size_t i = (size_t) __builtin_ctzll(m);
        const struct fdp_rule *r = tss_first_visible(next[i], version);
        if (r) {
            found[i] = r;
            hits |= UINT64_C(1) << i;
        }
    }
    return hits;
}

#endif /* FDP_TSS_PRIVATE_H */
