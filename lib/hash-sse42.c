/*
 * CRC32C with the SSE4.2 CRC32 instruction and PCLMULQDQ.
 *
 * This file alone is compiled with -msse4.2 -mpclmul; lib/hash.c calls it
 * only after CPUID reports both (see lib/cpu.c).
 *
 * Three lanes
 * ===========
 * crc32q has a latency of 3 cycles and a throughput of one per cycle, so a
 * single dependency chain uses a third of the unit.  A key of n >= 9 words
 * is cut into three lanes A, B, C of m = n / 3 words (C also takes the
 * n - 3m words left over); the lanes are three independent chains, with A
 * starting from the caller's register and B and C from zero.  They are
 * joined using linearity of the CRC register:
 *
 *   crc(r, A || B || C) = shift(a, |B| + |C|) ^ shift(b, |C|) ^ c
 *
 * where a, b, c are the lane registers and shift(x, w) is the register
 * after feeding x with w zero words: x * x^(64w) mod P.  The two shifts are
 * independent, each one PCLMULQDQ and one crc32q (below), so the join costs
 * about one multiplication's latency.
 *
 * Shifting with a carry-less multiply
 * ===================================
 * In the bit-reflected representation the CRC uses, bit i of a 32-bit
 * register stands for x^(31 - i).  The 64-bit carry-less product of two
 * such registers then has bit k standing for x^(62 - k): read as a 64-bit
 * reflected value it is a * b * x.  crc32q(0, D) computes D * x^32 mod P.
 * So crc32q(0, clmul(a, K)) = a * K * x^33 mod P, and with
 * K = x^(64w - 33) mod P (fdp__crc32c_shift_k[w], computed in lib/hash.c)
 * it is a * x^(64w) mod P = shift(a, w).
 *
 * Why 9 words: with m words per lane the lanes cost 3m cycles of latency
 * plus about 10 for the join, against 9m for one chain: at m = 2 the join
 * costs about what the lanes save, so lanes start at m = 3, 9 words
 * (timings: docs/PERFORMANCE.md, "Figures behind design choices").  Lanes
 * are capped at FDP_CRC_LANE_MAX words
 * so that the shift table stays at 65 entries; longer inputs loop over
 * blocks of three full lanes.
 */
#include <config.h>

#include "lib/hash-private.h"

#include <nmmintrin.h>
#include <string.h>
#include <wmmintrin.h>

#include "lib/util.h"

static inline uint64_t
load64(const uint8_t *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof v);    /* Unaligned, little-endian (x86). */
    return v;
}

/* shift(x, w): the register 'x' advanced over 'w' zero words. */
static inline uint32_t
crc_shift(uint32_t x, size_t w)
{
    __m128i a = _mm_cvtsi32_si128((int) x);
    __m128i k = _mm_cvtsi32_si128((int) fdp__crc32c_shift_k[w]);
    __m128i p = _mm_clmulepi64_si128(a, k, 0x00);

    return (uint32_t) _mm_crc32_u64(0, (uint64_t) _mm_cvtsi128_si64(p));
}

/* Feeds 3 * m + extra words at 'p' into 'crc' as three lanes: A and B of m
 * words, C of m + extra. */
static inline uint32_t
crc_three_lanes(uint32_t crc, const uint8_t *p, size_t m, size_t extra)
{
    const uint8_t *pb = p + 8 * m;
    const uint8_t *pc = p + 16 * m;
    uint64_t a = crc, b = 0, c = 0;

    for (size_t i = 0; i < m; i++) {
        a = _mm_crc32_u64(a, load64(p + 8 * i));
        b = _mm_crc32_u64(b, load64(pb + 8 * i));
        c = _mm_crc32_u64(c, load64(pc + 8 * i));
    }
    for (size_t i = m; i < m + extra; i++) {
        c = _mm_crc32_u64(c, load64(pc + 8 * i));
    }
    return crc_shift((uint32_t) a, 2 * m + extra)
           ^ crc_shift((uint32_t) b, m + extra) ^ (uint32_t) c;
}

/* Feeds 'n' words at 'p' into 'crc'. */
static inline uint32_t
crc_words(uint32_t crc, const uint8_t *p, size_t n)
{
    const size_t block = 3 * FDP_CRC_LANE_MAX;

    for (; n >= block; p += 8 * block, n -= block) {
        crc = crc_three_lanes(crc, p, FDP_CRC_LANE_MAX, 0);
    }
    if (n >= 3 * FDP_CRC_LANE_MIN) {
        return crc_three_lanes(crc, p, n / 3, n % 3);
    }

    uint64_t c = crc;
    for (size_t i = 0; i < n; i++) {
        c = _mm_crc32_u64(c, load64(p + 8 * i));
    }
    return (uint32_t) c;
}

uint32_t
fdp__crc32c_sse42(uint32_t crc, const void *data, size_t size)
{
    const uint8_t *p = data;
    size_t n_words = size / 8;

    crc = crc_words(crc, p, n_words);
    p += 8 * n_words;
    for (size_t i = 0; i < size % 8; i++) {
        crc = _mm_crc32_u8(crc, p[i]);
    }
    return crc;
}

uint32_t
fdp__hash_crc32c_sse42(const uint64_t *words, size_t n_words, uint32_t basis)
{
    return fdp__fmix32(crc_words(basis, (const uint8_t *) words, n_words));
}
