/*
 * Tuple-space subtable lookups hashed with the SSE4.2 crc32q instruction,
 * one function per word count (lib/tss.c, "Hashing and dispatch").  This
 * file is compiled with -msse4.2; lib/tss.c only takes the table below when
 * fdp_hash_fast_name() is "crc32c", that is when the CPU has the
 * instruction.
 *
 * The hash is fdp_hash_crc32c() of the gathered words, the same value as
 * lib/hash-sse42.c computes for keys below 3 * FDP_CRC_LANE_MIN words: one
 * dependent chain of crc32q from the basis, then fdp__fmix32().  Keys of
 * 9 words and more gain nothing from lanes at the sizes a mask has (at
 * most 12 words), so the generic entry keeps one chain too.
 */
#include <config.h>

#include "lib/tss-private.h"

#include <nmmintrin.h>

static inline __attribute__((always_inline)) uint32_t
crc_hash(const struct tss_buckets *b, const uint64_t *words, unsigned int n)
{
    uint64_t crc = b->basis;

    for (unsigned int i = 0; i < n; i++) {
        crc = _mm_crc32_u64(crc, words[i]);
    }
    return fdp__fmix32((uint32_t) crc);
}

/* One hash and one batch lookup per word count N (stride: words per key
 * in the batch's scratch array). */
#define TSS_CRC_SPECIALISE(N, STRIDE)                                       \
    static uint32_t                                                         \
    crc_hash_##N(const struct tss_buckets *b, const uint64_t *words,        \
                 unsigned int n)                                            \
    {                                                                       \
        return crc_hash(b, words, (N) ? (N) : n);                           \
    }                                                                       \
                                                                            \
    static uint64_t                                                         \
    crc_batch_##N(const struct tss_subtable *st, const struct tss_buckets *b, \
                  const struct fdp_key *const keys[], uint64_t probe,       \
                  uint64_t version, const struct fdp_rule *found[])         \
    {                                                                       \
        return tss_lookup_batch_inline(st, b, keys, probe, version, found,  \
                                       (N) ? (N) : st->n_words, (STRIDE),   \
                                       crc_hash);                           \
    }

TSS_CRC_SPECIALISE(0, FDP_KEY_WORDS)
TSS_CRC_SPECIALISE(1, 1)
TSS_CRC_SPECIALISE(2, 2)
TSS_CRC_SPECIALISE(3, 3)
TSS_CRC_SPECIALISE(4, 4)

const struct tss_ops fdp__tss_crc32c_ops[TSS_SPECIALISED_WORDS + 1] = {
    { crc_hash_0, crc_batch_0 },
    { crc_hash_1, crc_batch_1 },
    { crc_hash_2, crc_batch_2 },
    { crc_hash_3, crc_batch_3 },
    { crc_hash_4, crc_batch_4 },
};
