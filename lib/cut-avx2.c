/*
 * Partition leaf scan with AVX2 (see "Leaves" in lib/cut.c).
 *
 * This file alone is compiled with -mavx2; lib/cut.c calls it only when
 * the CPU and the OS support AVX2 and FLOWDP_CPU allows it.  A
 * fixed-shape leaf keeps its rules in blocks of four (struct layout in
 * lib/cut.h): each of the eight record words of the four rules is one
 * aligned 256-bit vector, so one block is tested with two masked
 * compares, two range compares and a movemask: about 4 instructions per
 * rule against 17 for the generic loop, and no branch until a block holds
 * a match.
 */
#include <config.h>

#include "lib/cut.h"

#include <immintrin.h>

uint32_t
fdp__cut_scan_avx2(const uint64_t *blocks, uint32_t n, uint32_t from,
                   uint64_t k0, uint64_t k1, uint64_t r0, uint64_t r1)
{
    const __m256i sign = _mm256_set1_epi64x((long long) (UINT64_C(1) << 63));
    const __m256i zero = _mm256_setzero_si256();
    const __m256i vk0 = _mm256_set1_epi64x((long long) k0);
    const __m256i vk1 = _mm256_set1_epi64x((long long) k1);
    const __m256i vr0 = _mm256_set1_epi64x((long long) r0);
    const __m256i vr1 = _mm256_set1_epi64x((long long) r1);

    for (uint32_t b = from / 4; b * 4 < n; b++) {
        const __m256i *v = (const __m256i *) (blocks + b * CUT_BLOCK_WORDS);
        __m256i x = _mm256_or_si256(
            _mm256_and_si256(_mm256_xor_si256(vk0, _mm256_load_si256(&v[1])),
                             _mm256_load_si256(&v[0])),
            _mm256_and_si256(_mm256_xor_si256(vk1, _mm256_load_si256(&v[3])),
                             _mm256_load_si256(&v[2])));
        /* Unsigned (r - lo) > span, as signed compares of the values with
         * their top bit flipped. */
        __m256i d0 = _mm256_xor_si256(
            _mm256_sub_epi64(vr0, _mm256_load_si256(&v[4])), sign);
        __m256i d1 = _mm256_xor_si256(
            _mm256_sub_epi64(vr1, _mm256_load_si256(&v[6])), sign);
        __m256i out = _mm256_or_si256(
            _mm256_cmpgt_epi64(d0, _mm256_xor_si256(_mm256_load_si256(&v[5]),
                                                    sign)),
            _mm256_cmpgt_epi64(d1, _mm256_xor_si256(_mm256_load_si256(&v[7]),
                                                    sign)));
        __m256i hit = _mm256_andnot_si256(out, _mm256_cmpeq_epi64(x, zero));
        unsigned int bits = (unsigned int) _mm256_movemask_pd(
            _mm256_castsi256_pd(hit));
        if (b == from / 4) {
            bits &= ~((1u << (from % 4)) - 1);
        }
        if (bits) {
            uint32_t r = b * 4 + (uint32_t) __builtin_ctz(bits);
            return r < n ? r : n;
        }
    }
    return n;
}
