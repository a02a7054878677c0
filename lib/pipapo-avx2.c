/*
 * Pipapo bitmap intersection with AVX2.
 *
 * This file alone is compiled with -mavx2; lib/pipapo.c calls it only when
 * the CPU and the OS support AVX2 (lib/cpu.c) and FLOWDP_CPU allows it.
 *
 * A lookup's work per field is ANDing one bitmap row per group (plus the
 * candidates carried from the previous field): rows are 32-byte aligned
 * and a multiple of 256 bits long (lib/pipapo.c), so each step is one
 * aligned 256-bit load per row and one AND per row.  The number of rows is
 * the field's group count, so there is one function per shape, with the
 * count a constant the compiler unrolls:
 *
 *   and_8b_1   an 8-bit field (nw_proto) in 8-bit groups, or...
 *   and_8b_2   a port in 8-bit groups      and_4b_4   a port in 4-bit groups
 *   and_8b_4   IPv4 in 8-bit groups        and_4b_8   IPv4 in 4-bit groups
 *   and_8b_6   a MAC in 8-bit groups       and_4b_12  a MAC in 4-bit groups
 *   and_8b_16  IPv6 in 8-bit groups        and_4b_32  IPv6 in 4-bit groups
 *
 * (and_4b_4 and and_8b_4 do the same work: the row count is what
 * matters.)  Other counts take the loop in and_any.  Nothing needs setting
 * up per lookup: user space may use the YMM registers freely.
 */
#include <config.h>

#include "pipapo.h"

#include <immintrin.h>

static inline __attribute__((always_inline)) bool
and_n(uint64_t *res, const uint64_t *const *rows, unsigned int n,
      uint32_t bsize, bool with_res)
{
    __m256i any = _mm256_setzero_si256();

    for (uint32_t w = 0; w < bsize; w += 4) {
        __m256i x = with_res ? _mm256_load_si256((const __m256i *) &res[w])
                             : _mm256_set1_epi64x(-1);
        for (unsigned int r = 0; r < n; r++) {
            x = _mm256_and_si256(x, _mm256_load_si256(
                                        (const __m256i *) &rows[r][w]));
        }
        _mm256_store_si256((__m256i *) &res[w], x);
        any = _mm256_or_si256(any, x);
    }
    return !_mm256_testz_si256(any, any);
}

#define SHAPE(NAME, N)                                                  \
    static bool                                                         \
    NAME(uint64_t *res, const uint64_t *const *rows, uint32_t bsize,    \
         bool with_res)                                                 \
    {                                                                   \
        return and_n(res, rows, N, bsize, with_res);                    \
    }

SHAPE(and_8b_1, 1)
SHAPE(and_8b_2, 2)
SHAPE(and_8b_4, 4)
SHAPE(and_8b_6, 6)
SHAPE(and_4b_12, 12)
SHAPE(and_8b_16, 16)
SHAPE(and_4b_32, 32)
#undef SHAPE

static bool
and_any(uint64_t *res, const uint64_t *const *rows, unsigned int n,
        uint32_t bsize, bool with_res)
{
    return and_n(res, rows, n, bsize, with_res);
}

bool
fdp__pipapo_and_avx2(uint64_t *res, const uint64_t *const *rows,
                     unsigned int n_rows, uint32_t bsize, bool with_res)
{
    switch (n_rows) {
    case 1:
        return and_8b_1(res, rows, bsize, with_res);
    case 2:
        return and_8b_2(res, rows, bsize, with_res);
    case 4:     /* and_4b_4 too. */
        return and_8b_4(res, rows, bsize, with_res);
    case 6:
        return and_8b_6(res, rows, bsize, with_res);
    case 12:
        return and_4b_12(res, rows, bsize, with_res);
    case 16:
        return and_8b_16(res, rows, bsize, with_res);
    case 32:
        return and_4b_32(res, rows, bsize, with_res);
    default:
        return and_any(res, rows, n_rows, bsize, with_res);
    }
}
