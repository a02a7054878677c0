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
 * walks them, and reaches the buckets only through this file's functions
 * (fdp__tss_lookup_batch(), fdp__tss_for_each_rule()).
 *
 * Design
 * ======
 * - A group is the set of rules whose masked keys are equal (they differ
 *   in priority, or are two versions of one flow during a change), linked
 *   by their 'next' pointers best first: priority descending, then
 *   insertion sequence ascending.  A group has no object of its own: the
 *   bucket entry points to its best rule, the head, and the masked key is
 *   the head's compact match's value words (lib/match-internal.h puts them first,
 *   in the subtable's word order).  A separate 64-byte group object per
 *   masked key, as before, cost 64 bytes and a dependent cache miss per
 *   flow, and nearly every group of a five-tuple table holds one rule.
 * - Buckets are cache lines (struct tss_bucket, lib/tss-private.h): 5
 *   32-bit hashes, a pass count and 5 head pointers, 64 bytes.  Open
 *   vSwitch's cmap is the model: a probe loads one line, compares the
 *   hashes in it, and dereferences only a head whose full 32-bit hash
 *   matches, so a miss usually costs one line and a hit the bucket and
 *   two lines of the head (its key words and its versions, fetched
 *   together).
 * - Hashing and dispatch.  A subtable hashes only the words its mask
 *   touches (n_words of the 12), gathered into a small array, with a
 *   per-table random basis.  The hash is chosen when the subtable is
 *   created: CRC32C with crc32q where fdp_hash_fast_name() says "crc32c"
 *   (the CPU has SSE4.2 and FLOWDP_CPU allows it; the code is in
 *   lib/tss-sse42.c, compiled with -msse4.2), jhash2 elsewhere, and each
 *   bucket array carries the functions (struct tss_ops) for its hash and
 *   the mask's word count: one specialisation per count 1..4 with the
 *   gather, the hash and the key compare unrolled, and a generic loop for
 *   0 and 5..12 words.  Inserts and lookups call the same array's
 *   functions, so their hashes agree; nothing on the lookup path asks
 *   which CPU this is or loops over a run-time word count for those
 *   shapes.  The subtable remembers its fast hash, so a rebuild keeps it
 *   whatever fdp_hash_fast_name() says later.
 * - Batch lookup.  fdp__tss_lookup_batch() takes up to 64 keys and runs
 *   four passes over them (tss_lookup_batch_inline()): gather and hash
 *   every key and prefetch its bucket line; compare the hashes of each
 *   home line and prefetch both lines of the first matching head; compare
 *   the head's key (or take the full probe); then take the first visible
 *   rule.  Each pass issues the loads the next one needs, so the two
 *   dependent cache misses of one key overlap with those of the others
 *   instead of adding up.
 *
 * Overflow and the probe bound
 * ============================
 * A group goes to the first free entry of its probe window: its home
 * bucket (hash & n_mask) and the next TSS_MAX_PROBE - 1 (4 lines, 20
 * entries).  Every bucket between the home and the one that took the group
 * counts it in 'n_pass'; a probe that finds nothing in a line stops there
 * if its n_pass is 0, so a miss in a table without spills reads one line,
 * and no probe reads more than TSS_MAX_PROBE lines.  Entries never move
 * inside a published array (no cuckoo displacement): a reader cannot miss
 * a group that stays in the table while it looks.
 *
 * The array doubles when the groups pass TSS_MAX_LOAD (3) per bucket or an
 * insert finds its window full, and halves below a quarter of that.
 *
 * Hash flooding: CRC32C is linear, so an attacker can make any number of
 * keys with one CRC (lib/hash.c), and those keys share the full 32-bit
 * hash and so one home bucket.  Under the fast hash no more than
 * TSS_MAX_SAME_HASH (4) groups may share a hash: an insert that would make
 * a fifth rebuilds the subtable with fdp_hash_keyed() (SipHash-1-3) under a
 * fresh random key.  By chance, 5 groups sharing a 32-bit hash in one
 * window is below 2^-90 per insert, so only an attack triggers it; a probe
 * under the fast hash dereferences at most 4 groups whose hash matches.
 * Re-seeding the CRC would not help: CRC collisions do not depend on the
 * seed.  Under the keyed hash a full window is bad luck and the array
 * grows instead.
 *
 * Invariants
 * ==========
 * - Every group's key is the masked key of all its rules, and each group
 *   is in exactly one entry of the current bucket array, pointing to its
 *   best rule, in the probe window of its hash under that array, with that
 *   hash beside it.
 * - For every bucket B, n_pass(B) is the number of groups stored past B
 *   whose home is B or a bucket before B within their window.
 * - No two groups in one subtable have the same key.
 * - Group rule lists are sorted best first.
 * - max_priority/min_seq bound every rule of the subtable from above.
 *
 * Thread-safety
 * =============
 * Writers (insert, unlink, find_exact, the walks from the writer) run
 * under the table's mutex.  Lookups and reader walks may run concurrently
 * in an RCU read-side section.  A writer fills an entry by raising the
 * pass counts, storing the hash, and then publishing the head pointer
 * with a release store; the rule is complete before that store, and a
 * reader acquires the pointer and compares the head's key itself, so a
 * stale or new hash beside it can cost a wasted compare but never a wrong
 * answer.  A new best rule of a group is published in the entry after its
 * 'next' points to the old head; removing a head that has a successor
 * stores the successor in the entry, and the removed rule keeps its 'next'
 * (lib/table.c frees it after a grace period), so a reader on it still
 * walks the rest of the group.  Removing a group's last rule clears the
 * entry, then lowers the pass counts.  Resizing and rehashing build a new
 * array (sharing the rules) and publish it with one pointer store; the old
 * array is freed after a grace period.  Rule lists are published as
 * before: each link with a release store after the rule is complete.
 *
 * Cost of a lookup
 * ================
 * For an exact 5-tuple (2 words) under CRC32C, per key: the subtable's
 * first line (bucket pointer, word indices, 2 mask words: shared by the
 * batch), 2 loads from the packet key, 2 crc32q and the finaliser, then
 * line 1: the bucket (5 hash compares, one pointer load), then, fetched
 * together, the head rule's line with its 2 key words (the compact
 * match) and its first line with the versions (and the priority
 * lib/table.c compares).  So 3 cache lines per hit, two dependent misses,
 * which the batch overlaps across keys; a miss reads 1 line when its
 * bucket has not spilled.  With a separate group object the key and the
 * versions were two dependent misses after the bucket; the chained design
 * before that read the bucket head and then the group before it could
 * compare a hash: 2 lines per miss, one more per colliding group.
 *
 * Worked example
 * ==============
 * Mask "tcp,nw_dst=255.255.255.0,tp_dst=0xffff" touches word 0 (nw_dst in
 * bits 31..0) and word 1 (tp_dst in 47..32, dl_type in 31..16, nw_proto
 * in 15..8), so n_words = 2, words = {0, 1}, mask_words =
 * {0x00000000ffffff00, 0x0000ffffffffff00}, and the array's functions are
 * the 2-word CRC32C pair.  The flow "tcp,nw_dst=10.0.0.0/24,tp_dst=80"
 * has masked words {0x000000000a000000, 0x0000005008000600}; with basis
 * 0x12345678 their hash is fdp_hash_crc32c() = 0xb6bb1406.  A new
 * subtable has 2 buckets (window 2), so the group's home is bucket
 * 0xb6bb1406 & 1 = 0; it takes entry 0 there: hashes[0] = 0xb6bb1406,
 * heads[0] = the rule, n_pass stays 0.  A packet to 10.0.0.7 port 80
 * masks to the same two words and the same hash; the probe loads line 0,
 * finds 0xb6bb1406 in entry 0, loads the rule, compares the two words
 * with its match's value words, and takes the first rule of its list
 * visible at the lookup's version.  A
 * packet to port 81 hashes elsewhere; if it lands in bucket 0 it matches
 * no hash there and, n_pass being 0, stops after one line.  Once the
 * subtable passes 6 groups it doubles to 4 buckets and the group moves to
 * bucket 0xb6bb1406 & 3 = 2, with the same hash beside it.
 *
 * References
 * ==========
 * - V. Srinivasan, S. Suri, G. Varghese, "Packet classification using
 *   tuple space search", SIGCOMM 1999.
 * - Open vSwitch lib/cmap.c (cache-line buckets of hashes and pointers
 *   read without locks) and lib/dpif-netdev-lookup-*.c (lookups
 *   specialised by miniflow shape).
 * - Linux lib/rhashtable.c (chain bound and rehash under attack).
 */
#include <config.h>

#include "lib/tss.h"

#include "lib/hash-private.h"
#include "lib/tss-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

/* The smallest bucket array, and the size a new subtable starts at: 2
 * lines, 128 bytes (as much as the 16 chain heads before cache-line
 * buckets), room for TSS_MAX_LOAD * 2 = 6 groups before the first
 * rebuild.  Must be a power of 2 (buckets are indexed with 'n_mask'). */
#define TSS_MIN_BUCKETS 2
_Static_assert((TSS_MIN_BUCKETS & (TSS_MIN_BUCKETS - 1)) == 0,
               "bucket counts are powers of 2");

/* Groups per bucket before the array doubles: 3 of 5 entries (load 60%).
 * With a Poisson(3) number of groups per home bucket about 8% of the
 * buckets receive more than 5 and spill into the next line, and a spill
 * that passes TSS_MAX_PROBE lines needs more than 20 groups homed in 4
 * consecutive buckets (mean 12), which is rare enough that the growth it
 * forces costs nothing on average.  Shrinks below a quarter of that. */
#define TSS_MAX_LOAD 3

/* The largest bucket array: 2^26 lines (4 GiB), far beyond any table we
 * can hold, so that doubling never overflows 'n_mask'. */
#define TSS_MAX_BUCKETS (UINT32_C(1) << 26)

/* A make_room() that needs more rebuilds than this gives up with ENOMEM.
 * Each rebuild doubles the array or switches to the keyed hash, so 8 is
 * already 2^7 times the load the insert needed. */
#define TSS_MAX_REBUILDS 8

_Static_assert(offsetof(struct tss_subtable, mask_words)
               + TSS_SPECIALISED_WORDS * sizeof(uint64_t) <= 64
               && TSS_SPECIALISED_WORDS <= TSS_HEAD_WORDS,
               "a lookup of up to 4 words reads one line of the subtable");
_Static_assert(sizeof(struct tss_buckets) % 64 == 0,
               "bucket lines start on a cache line");
_Static_assert(TSS_MAX_PROBE * TSS_BUCKET_ENTRIES <= 255,
               "'n_pass' counts fit easily");

/* ---------------------------------------------------------------------- */
/* Hashing and dispatch.                                                   */

static inline __attribute__((always_inline)) uint32_t
jhash2_hash(const struct tss_buckets *b, const uint64_t *words,
            unsigned int n)
{
    return fdp__jhash2_words(words, n, b->basis);
}

static inline __attribute__((always_inline)) uint32_t
keyed_hash(const struct tss_buckets *b, const uint64_t *words,
           unsigned int n)
{
    return fdp__keyed_words(words, n, &b->key);
}

/* One hash and one batch lookup per word count N; see lib/tss-sse42.c for
 * the CRC32C twin. */
#define TSS_SPECIALISE(HASH, N, STRIDE)                                     \
    static uint32_t                                                         \
    HASH##_##N(const struct tss_buckets *b, const uint64_t *words,          \
               unsigned int n)                                              \
    {                                                                       \
        return HASH(b, words, (N) ? (N) : n);                               \
    }                                                                       \
                                                                            \
    static uint64_t                                                         \
    HASH##_batch_##N(const struct tss_subtable *st,                         \
                     const struct tss_buckets *b,                           \
                     const struct fdp_key *const keys[], uint64_t probe,    \
                     uint64_t version, const struct fdp_rule *found[])      \
    {                                                                       \
        return tss_lookup_batch_inline(st, b, keys, probe, version, found,  \
                                       (N) ? (N) : st->n_words, (STRIDE),   \
                                       HASH);                               \
    }

TSS_SPECIALISE(jhash2_hash, 0, FDP_KEY_WORDS)
TSS_SPECIALISE(jhash2_hash, 1, 1)
TSS_SPECIALISE(jhash2_hash, 2, 2)
TSS_SPECIALISE(jhash2_hash, 3, 3)
TSS_SPECIALISE(jhash2_hash, 4, 4)
TSS_SPECIALISE(keyed_hash, 0, FDP_KEY_WORDS)
TSS_SPECIALISE(keyed_hash, 1, 1)
TSS_SPECIALISE(keyed_hash, 2, 2)
TSS_SPECIALISE(keyed_hash, 3, 3)
TSS_SPECIALISE(keyed_hash, 4, 4)

static const struct tss_ops jhash2_ops[TSS_SPECIALISED_WORDS + 1] = {
    { jhash2_hash_0, jhash2_hash_batch_0 },
    { jhash2_hash_1, jhash2_hash_batch_1 },
    { jhash2_hash_2, jhash2_hash_batch_2 },
    { jhash2_hash_3, jhash2_hash_batch_3 },
    { jhash2_hash_4, jhash2_hash_batch_4 },
};

static const struct tss_ops keyed_ops[TSS_SPECIALISED_WORDS + 1] = {
    { keyed_hash_0, keyed_hash_batch_0 },
    { keyed_hash_1, keyed_hash_batch_1 },
    { keyed_hash_2, keyed_hash_batch_2 },
    { keyed_hash_3, keyed_hash_batch_3 },
    { keyed_hash_4, keyed_hash_batch_4 },
};

/* One row per hash a sub-table may use, with the CPU level its code needs
 * (lib/cpu-internal.h).  A sub-table does not select a row by itself: it
 * takes the fast hash lib/hash.c selected (fdp_hash_fast_name()) when it
 * is created, so that its buckets hash as fdp_hash_fast() does, and the
 * keyed row when it is flooded. */
struct tss_hash_impl {
    struct fdp__cpu_impl cpu;
    enum tss_hash_kind kind;
    const struct tss_ops *ops;      /* [TSS_SPECIALISED_WORDS + 1]. */
};
static const struct tss_hash_impl tss_hash_impls[] = {
#ifdef FDP_HAVE_SSE42
    { { "crc32c", FDP_CPU_SSE42, NULL }, TSS_HASH_CRC32C,
      fdp__tss_crc32c_ops },
#endif
    { { "keyed", FDP_CPU_GENERIC, NULL }, TSS_HASH_KEYED, keyed_ops },
    { { "jhash2", FDP_CPU_GENERIC, NULL }, TSS_HASH_JHASH2, jhash2_ops },
};

/* The row of hash 'kind', or NULL if this build has none. */
static const struct tss_hash_impl *
find_hash_impl(enum tss_hash_kind kind)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(tss_hash_impls); i++) {
        if (tss_hash_impls[i].kind == kind) {
            return &tss_hash_impls[i];
        }
    }
    return NULL;
}

/* The functions for hash 'kind' and 'n_words' words. */
static const struct tss_ops *
choose_ops(enum tss_hash_kind kind, unsigned int n_words)
{
    const struct tss_hash_impl *impl = find_hash_impl(kind);
    const struct tss_ops *table = impl ? impl->ops : jhash2_ops;
    unsigned int i = n_words <= TSS_SPECIALISED_WORDS ? n_words : 0;

    return &table[i];
}

static inline void
gather(const struct tss_subtable *st, const struct fdp_key *key,
       uint64_t *out)
{
    for (int i = 0; i < st->n_words; i++) {
        out[i] = key->w[fdp__tss_word(st, (unsigned int) i)]
                 & st->mask_words[i];
    }
}

static inline uint32_t
hash_words(const struct tss_subtable *st, const struct tss_buckets *b,
           const uint64_t *words)
{
    return b->ops->hash(b, words, st->n_words);
}

/* ---------------------------------------------------------------------- */
/* Bucket arrays.                                                          */

static uint32_t
n_buckets(const struct tss_buckets *b)
{
    return b->n_mask + 1;
}

static struct tss_buckets *
buckets_alloc(const struct tss_subtable *st, uint32_t n, bool keyed,
              uint32_t basis)
{
    size_t size = sizeof(struct tss_buckets) + n * sizeof(struct tss_bucket);
    struct tss_buckets *b = aligned_alloc(64, size);

    if (!b) {
        return NULL;
    }
    memset(b, 0, size);
    b->n_mask = n - 1;
    b->window = n < TSS_MAX_PROBE ? n : TSS_MAX_PROBE;
    b->keyed = keyed;
    b->basis = basis;
    b->ops = choose_ops(keyed ? TSS_HASH_KEYED
                              : (enum tss_hash_kind) st->fast_hash,
                        st->n_words);
    if (keyed && fdp_hash_random_key(&b->key)) {
        free(b);
        return NULL;
    }
    return b;
}

/* Where a group lives in a bucket array. */
struct slot {
    uint32_t k;                         /* Buckets past its home. */
    int s;                              /* Entry in that bucket. */
};

/* Finds the first free entry in the probe window of 'hash' in 'b', and
 * counts in '*same' the groups already there with hash 'hash'.  Returns
 * false if the window is full. */
static bool
find_free(const struct tss_buckets *b, uint32_t hash, struct slot *slot,
          unsigned int *same)
{
    bool found = false;

    *same = 0;
    for (uint32_t k = 0; k < b->window; k++) {
        const struct tss_bucket *bk = tss_line(b, hash + k);
        for (int s = 0; s < TSS_BUCKET_ENTRIES; s++) {
            if (!bk->heads[s]) {
                if (!found) {
                    found = true;
                    slot->k = k;
                    slot->s = s;
                }
            } else if (bk->hashes[s] == hash) {
                (*same)++;
            }
        }
    }
    return found;
}

/* Stores the group headed by 'h' with 'hash' at 'slot' of 'b': the pass
 * counts first, then the hash, then the pointer with a release store, so
 * that a reader that finds the pointer finds a complete rule, and a reader
 * that could reach the entry already continues past the lines before
 * it. */
static void
place(struct tss_buckets *b, struct fdp_rule *h, uint32_t hash,
      struct slot slot)
{
    for (uint32_t k = 0; k < slot.k; k++) {
        struct tss_bucket *bk = &b->lines[(hash + k) & b->n_mask];
        __atomic_store_n(&bk->n_pass, bk->n_pass + 1, __ATOMIC_RELAXED);
    }
    struct tss_bucket *bk = &b->lines[(hash + slot.k) & b->n_mask];
    __atomic_store_n(&bk->hashes[slot.s], hash, __ATOMIC_RELAXED);
    FDP_RCU_SET(bk->heads[slot.s], h);
}

/* Where the group headed by 'h' (hash 'hash' under 'b') is in 'b'. */
static struct slot
find_head(const struct tss_buckets *b, const struct fdp_rule *h,
          uint32_t hash)
{
    for (uint32_t k = 0; k < b->window; k++) {
        const struct tss_bucket *bk = tss_line(b, hash + k);
        for (int s = 0; s < TSS_BUCKET_ENTRIES; s++) {
            if (bk->heads[s] == h) {
                return (struct slot) { k, s };
            }
        }
    }
    /* Every group is in its window (see "Invariants"). */
    abort();
}

/* The entry of 'slot' in the window of 'hash'. */
static struct fdp_rule **
slot_entry(struct tss_buckets *b, uint32_t hash, struct slot slot)
{
    return &b->lines[(hash + slot.k) & b->n_mask].heads[slot.s];
}

/* Removes the group at 'slot' of the window of 'hash' from 'b': the
 * reverse of place(). */
static void
unplace(struct tss_buckets *b, uint32_t hash, struct slot slot)
{
    FDP_RCU_SET(*slot_entry(b, hash, slot), NULL);
    for (uint32_t j = 0; j < slot.k; j++) {
        struct tss_bucket *p = &b->lines[(hash + j) & b->n_mask];
        __atomic_store_n(&p->n_pass, p->n_pass - 1, __ATOMIC_RELAXED);
    }
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

/* Replaces the bucket array by one of 'n' buckets, using the keyed hash
 * (under a fresh key) if 'keyed'.  The rules themselves are shared by
 * both arrays: only their entries move.  Returns 0, ENOMEM, or ENOSPC if
 * some probe window of the new array overflowed (try a bigger one); on
 * error the subtable is unchanged. */
static int
rebuild(struct tss_subtable *st, uint32_t n, bool keyed)
{
    struct tss_buckets *old = st->buckets;

    if (n > TSS_MAX_BUCKETS) {
        return ENOMEM;
    }
    struct tss_buckets *b = buckets_alloc(st, n, keyed, old->basis);
    int error = b ? 0 : ENOMEM;

    /* Fill the new array, unpublished; nothing changes if it fails.  The
     * fast hash keeps its basis, so a group's hash carries over. */
    for (uint32_t j = 0; !error && j < n_buckets(old); j++) {
        for (int s = 0; !error && s < TSS_BUCKET_ENTRIES; s++) {
            struct fdp_rule *h = old->lines[j].heads[s];
            if (!h) {
                continue;
            }
            uint32_t hash = !keyed && !old->keyed
                            ? old->lines[j].hashes[s]
                            : hash_words(st, b, tss_rule_key(h));
            struct slot slot;
            unsigned int same;
            if (!find_free(b, hash, &slot, &same)) {
                error = ENOSPC;
                break;
            }
            place(b, h, hash, slot);
        }
    }
    if (!error) {
        FDP_RCU_SET(st->buckets, b);
        fdp__rcu_defer(&old->rcu, free_buckets_cb);
    } else {
        free(b);
    }
    return error;
}

/* Finds room for a new group with key 'words' (whose hash under the
 * current array is '*hash') and stores in '*hash' and '*slot' where it
 * goes.  Rebuilds the array as needed: twice the buckets past the load
 * bound or when the probe window is full, or the keyed hash when the new
 * group would be the (TSS_MAX_SAME_HASH + 1)th with one fast hash, which
 * only an attack produces (see "Overflow and the probe bound"). */
static int
make_room(struct tss_subtable *st, const uint64_t *words, uint32_t *hash,
          struct slot *slot)
{
    uint32_t n = n_buckets(st->buckets);
    bool keyed = st->buckets->keyed;

    for (int i = 0; i < TSS_MAX_REBUILDS; i++) {
        struct tss_buckets *b = st->buckets;
        if (n == n_buckets(b) && keyed == b->keyed) {
            unsigned int same;
            if (st->n_groups + 1 > TSS_MAX_LOAD * n) {
                n *= 2;
            } else if (find_free(b, *hash, slot, &same)
                       && (keyed || same < TSS_MAX_SAME_HASH)) {
                return 0;
            } else if (!keyed && same >= TSS_MAX_SAME_HASH) {
                keyed = true;
            } else {
                n *= 2;
            }
        }
        int error = rebuild(st, n, keyed);
        if (error == ENOSPC) {
            n *= 2;
        } else if (error) {
            return error;
        } else {
            *hash = hash_words(st, st->buckets, words);
        }
    }
    return ENOMEM;
}

/* ---------------------------------------------------------------------- */
/* Modifiers.                                                              */

struct tss_subtable *
fdp__tss_create_with(const struct fdp_key *mask, uint32_t basis,
                     enum tss_hash_kind kind)
{
    const struct tss_hash_impl *impl = find_hash_impl(kind);
    if (!impl || !fdp__cpu_impl_runs(&impl->cpu)) {
        return NULL;
    }

    struct tss_subtable *st = aligned_alloc(64, sizeof *st);
    if (!st) {
        return NULL;
    }
    memset(st, 0, sizeof *st);
    st->mask = *mask;
    for (int i = 0; i < FDP_KEY_WORDS; i++) {
        if (mask->w[i]) {
            if (st->n_words < TSS_HEAD_WORDS) {
                st->words[st->n_words] = (uint8_t) i;
            } else {
                st->words_tail[st->n_words - TSS_HEAD_WORDS] = (uint8_t) i;
            }
            st->mask_words[st->n_words++] = mask->w[i];
        }
    }
    st->fast_hash = kind == TSS_HASH_KEYED ? TSS_HASH_JHASH2 : kind;
    fdp__subtable_init(&st->up, &fdp__tss_class, FDP_SUBTABLE_FOR_MASK);
    st->buckets = buckets_alloc(st, TSS_MIN_BUCKETS, kind == TSS_HASH_KEYED,
                                basis);
    if (!st->buckets) {
        free(st);
        return NULL;
    }
    return st;
}

struct tss_subtable *
fdp__tss_create(const struct fdp_key *mask, uint32_t basis)
{
    /* fdp_hash_fast_name() follows FLOWDP_CPU and says "crc32c" only where
     * the CPU has the instruction (and flowdp-bench's override). */
    bool crc = !strcmp(fdp_hash_fast_name(), "crc32c");

    return fdp__tss_create_with(mask, basis,
                                crc ? TSS_HASH_CRC32C : TSS_HASH_JHASH2);
}

void
fdp__tss_destroy_now(struct tss_subtable *st)
{
    /* The rules belong to the table. */
    free(st->buckets);
    free(st);
}

void
fdp__tss_destroy_deferred(struct tss_subtable *st)
{
    /* Called only for empty subtables: no groups remain. */
    fdp__rcu_defer(&st->rcu, free_subtable_cb);
}

int
fdp__tss_insert(struct tss_subtable *st, struct fdp_rule *rule)
{
    const uint64_t *words = tss_rule_key(rule);
    uint32_t hash = hash_words(st, st->buckets, words);
    /* The writer may change the group the probe returns. */
    struct fdp_rule *h = (struct fdp_rule *) tss_probe(st->buckets, words,
                                                       st->n_words, hash);
    if (!h) {
        struct slot slot;
        int error = make_room(st, words, &hash, &slot);
        if (error) {
            return error;
        }
        rule->next = NULL;
        place(st->buckets, rule, hash, slot);
        st->n_groups++;
    } else {
        /* Into the group's list, best first: a new best becomes the head,
         * published in the entry (its 'next' first). */
        struct fdp_rule **prev = slot_entry(st->buckets, hash,
                                            find_head(st->buckets, h, hash));
        while (*prev && fdp__rule_beats(*prev, rule)) {
            prev = &(*prev)->next;
        }
        rule->next = *prev;
        FDP_RCU_SET(*prev, rule);
    }
    rule->owner = &st->up;
    st->up.n_rules++;
    fdp__subtable_raise_bounds(&st->up, rule);
    return 0;
}

void
fdp__tss_unlink(struct tss_subtable *st, struct fdp_rule *rule)
{
    struct tss_buckets *b = st->buckets;
    const uint64_t *words = tss_rule_key(rule);
    uint32_t hash = hash_words(st, b, words);
    const struct fdp_rule *h = tss_probe(b, words, st->n_words, hash);
    struct slot slot = find_head(b, h, hash);
    struct fdp_rule **prev = slot_entry(b, hash, slot);

    /* 'rule' keeps its 'next', so a reader on it goes on down the list. */
    if (*prev == rule && !rule->next) {
        unplace(b, hash, slot);
        st->n_groups--;
        st->up.n_rules--;

        /* Shrink below a quarter of the load bound, to half the buckets:
         * the new load is below half the bound, so the table can take
         * twice its groups again before it grows, and a subtable whose
         * size hovers around a power of 2 does not rebuild on every
         * insert and removal (the gap is the hysteresis).  Failure to
         * shrink is harmless. */
        if (st->n_groups < TSS_MAX_LOAD * n_buckets(b) / 4
            && n_buckets(b) > TSS_MIN_BUCKETS) {
            rebuild(st, n_buckets(b) / 2, b->keyed);
        }
        return;
    }
    while (*prev != rule) {
        prev = &(*prev)->next;
    }
    FDP_RCU_SET(*prev, rule->next);
    st->up.n_rules--;
}

struct fdp_rule *
fdp__tss_find_exact(const struct tss_subtable *st,
                    const struct fdp_match *match, uint16_t priority,
                    uint64_t version)
{
    uint64_t words[FDP_KEY_WORDS];

    gather(st, &match->value, words);
    const struct fdp_rule *h = tss_probe(st->buckets, words, st->n_words,
                                         hash_words(st, st->buckets, words));
    for (const struct fdp_rule *r = h; r; r = r->next) {
        if (r->priority == priority && fdp__rule_visible(r, version)) {
            return (struct fdp_rule *) r;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* Lookups and walks.                                                      */

uint64_t
fdp__tss_lookup_batch(const struct tss_subtable *st,
                      const struct fdp_key *const keys[], uint64_t probe,
                      uint64_t version, const struct fdp_rule *found[])
{
    const struct tss_buckets *b = FDP_RCU_GET(st->buckets);

    return b->ops->lookup_batch(st, b, keys, probe, version, found);
}

const struct fdp_rule *
fdp__tss_lookup(const struct tss_subtable *st, const struct fdp_key *key,
                uint64_t version)
{
    const struct fdp_rule *found[1];

    return fdp__tss_lookup_batch(st, &key, 1, version, found)
           ? found[0] : NULL;
}

bool
fdp__tss_for_each_rule(const struct tss_subtable *st,
                       bool (*cb)(struct fdp_rule *, void *aux), void *aux)
{
    const struct tss_buckets *b = FDP_RCU_GET(st->buckets);

    for (uint32_t j = 0; j < n_buckets(b); j++) {
        for (int s = 0; s < TSS_BUCKET_ENTRIES; s++) {
            for (struct fdp_rule *r = FDP_RCU_GET(b->lines[j].heads[s]),
                                 *next; r; r = next) {
                next = FDP_RCU_GET(r->next);
                if (!cb(r, aux)) {
                    return false;
                }
            }
        }
    }
    return true;
}

bool
fdp__tss_is_keyed(const struct tss_subtable *st)
{
    return FDP_RCU_GET(st->buckets)->keyed;
}

uint64_t
fdp__tss_memory(const struct tss_subtable *st)
{
    return sizeof *st + sizeof(struct tss_buckets)
           + n_buckets(st->buckets) * sizeof(struct tss_bucket);
}

unsigned int
fdp__tss_longest_probe(const struct tss_subtable *st, unsigned int *same)
{
    const struct tss_buckets *b = st->buckets;
    unsigned int longest = 0;

    *same = 0;
    for (uint32_t j = 0; j < n_buckets(b); j++) {
        for (int s = 0; s < TSS_BUCKET_ENTRIES; s++) {
            if (!b->lines[j].heads[s]) {
                continue;
            }
            /* Lines from the group's home to its bucket, and the groups
             * in its window with its hash. */
            uint32_t hash = b->lines[j].hashes[s];
            unsigned int lines = ((j - hash) & b->n_mask) + 1;
            longest = lines > longest ? lines : longest;
            unsigned int n_same = 0;
            for (uint32_t k = 0; k < b->window; k++) {
                const struct tss_bucket *bk = tss_line(b, hash + k);
                for (int t = 0; t < TSS_BUCKET_ENTRIES; t++) {
                    n_same += bk->heads[t] && bk->hashes[t] == hash;
                }
            }
            *same = n_same > *same ? n_same : *same;
        }
    }
    return longest;
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

/* ---------------------------------------------------------------------- */
/* The sub-table class.                                                    */

static uint64_t
class_lookup_batch(const struct fdp__subtable *st,
                   const struct fdp_key *const keys[], uint64_t probe,
                   uint64_t version, const struct fdp_rule *found[])
{
    return fdp__tss_lookup_batch(fdp__tss_cast(st), keys, probe, version,
                                 found);
}

static bool
class_for_each_rule(const struct fdp__subtable *st, bool published,
                    bool (*cb)(struct fdp_rule *, void *aux), void *aux)
{
    /* Every linked rule is reachable by lookups: one walk serves both. */
    (void) published;
    return fdp__tss_for_each_rule(fdp__tss_cast(st), cb, aux);
}

static void
class_describe(const struct fdp__subtable *st_, struct fdp_subtable_stats *out)
{
    const struct tss_subtable *st = fdp__tss_cast(st_);

    out->kind = FDP_SUBTABLE_TSS;
    out->keyed_hash = fdp__tss_is_keyed(st);
    out->mask = st->mask;
}

static void
class_add_stats(const struct fdp__subtable *st, uint64_t n_flows,
                struct fdp_table_stats *stats)
{
    (void) n_flows;
    stats->n_masks++;
    stats->n_keyed_subtables += fdp__tss_is_keyed(fdp__tss_cast(st));
}

static int
class_insert(struct fdp__subtable *st, struct fdp_rule *rule)
{
    return fdp__tss_insert(fdp__tss_cast(st), rule);
}

static void
class_remove(struct fdp__subtable *st, struct fdp_rule *rule)
{
    fdp__tss_unlink(fdp__tss_cast(st), rule);
}

static uint64_t
class_memory(const struct fdp__subtable *st)
{
    return fdp__tss_memory(fdp__tss_cast(st));
}

static void
class_destroy(struct fdp__subtable *st, bool deferred)
{
    if (deferred) {
        fdp__tss_destroy_deferred(fdp__tss_cast(st));
    } else {
        fdp__tss_destroy_now(fdp__tss_cast(st));
    }
}

const struct fdp__subtable_class fdp__tss_class = {
    .lookup_batch = class_lookup_batch,
    .for_each_rule = class_for_each_rule,
    .describe = class_describe,
    .for_each_partition = NULL, /* Not partitioned. */
    .add_stats = class_add_stats,
    .insert = class_insert,
    .remove = class_remove,
    .publish = NULL,            /* Every change is visible at once. */
    .memory = class_memory,
    .destroy = class_destroy,
};
