/*
 * fdp__packet_extract_hash() with the CRC32C flow hash in line.
 *
 * This file alone (of datapath/) is compiled with -msse4.2 -mpclmul; extract.c
 * calls it only when fdp_hash_fast() is the SSE4.2 CRC32C, which the hash
 * dispatch (lib/hash.c) chooses only where CPUID has it.
 *
 * The body is datapath/extract-impl.h, the same as the portable entry
 * points'.  fdp__hash_crc32c_sse42() splits a 12-word key into three lanes
 * joined with carry-less multiplications; a single crc32q chain over the
 * same words gives the same register (the lanes are an evaluation order of
 * the same polynomial arithmetic), and here each crc32q starts as soon as
 * its word is built, overlapping the parse of later layers, where a call
 * after the parse would wait for all of it and reload the words from
 * memory.  The unit test checks it against fdp_hash_fast() on every
 * packet it makes.
 */
#include <config.h>

#include <nmmintrin.h>
#include <wmmintrin.h>

#include "datapath/extract-impl.h"
#include "datapath/extract-internal.h"
#include "lib/hash-private.h"
#include "lib/util.h"

/* clmul(x, K_w), K_w = fdp__crc32c_shift_k[w] (computed by lib/hash.c):
 * crc32q(0, that) is the CRC register 'x' advanced over 'w' zero words
 * (lib/hash-sse42.c explains why).  crc32q(0, .) is linear, so the
 * products of several registers can be XORed and reduced once. */
static inline __m128i
crc_premul(uint64_t x, size_t w)
{
    __m128i a = _mm_cvtsi32_si128((int) (uint32_t) x);
    __m128i k = _mm_cvtsi32_si128((int) fdp__crc32c_shift_k[w]);

    return _mm_clmulepi64_si128(a, k, 0x00);
}

/* The register after feeding words 0 to 4 of 'w' and then seven zero
 * words into 'crc': three short chains (words 0-1 from 'crc', 2-3 and 4
 * from zero) advanced over the words after them and joined, which cuts the
 * dependent crc32q from twelve to two, plus one multiply and one
 * reduction. */
static inline uint32_t
crc_fast_words(uint64_t crc, const uint64_t *w)
{
    enum { ZEROS = FDP_KEY_PACKET_WORDS - FDP__FAST_WORDS };
    static_assert(FDP__FAST_WORDS == 5, "three chains: 2, 2 and 1 words");
    uint64_t a = _mm_crc32_u64(_mm_crc32_u64(crc, w[0]), w[1]);
    uint64_t b = _mm_crc32_u64(_mm_crc32_u64(0, w[2]), w[3]);
    uint64_t c = _mm_crc32_u64(0, w[4]);
    __m128i x = _mm_xor_si128(_mm_xor_si128(crc_premul(a, 3 + ZEROS),
                                            crc_premul(b, 1 + ZEROS)),
                              crc_premul(c, ZEROS));

    return (uint32_t) _mm_crc32_u64(0, (uint64_t) _mm_cvtsi128_si64(x));
}

uint32_t
fdp__packet_extract_hash_sse42(const void *data, size_t size,
                               uint32_t in_port, uint32_t basis,
                               struct fdp_key *key,
                               struct fdp_packet_layout *layout)
{
    struct fdp_packet_layout l;
    uint64_t w[FDP_KEY_PACKET_WORDS];
    uint64_t crc = basis;

    if (fdp__extract_fast(data, size, in_port, w, &l)) {
        /* Words FDP__FAST_WORDS and up are zero. */
#define STORE(i) key->w[i] = i < FDP__FAST_WORDS ? w[i] : 0;
        FDP__FOR_EACH_WORD(STORE)
#undef STORE
        crc = crc_fast_words(crc, w);
    } else {
        fdp__extract_words(data, size, in_port, w, &l);
#define STORE_AND_HASH(i) key->w[i] = w[i]; crc = _mm_crc32_u64(crc, w[i]);
        FDP__FOR_EACH_WORD(STORE_AND_HASH)
#undef STORE_AND_HASH
    }
    fdp__zero_pipeline_words(key);
    if (layout) {
        *layout = l;
    }
    return fdp__fmix32((uint32_t) crc);
}
