/*
 * Pipapo field step with AVX2.
 *
 * This file alone is compiled with -mavx2; lib/pipapo.c calls it only when
 * the CPU and the OS support AVX2 (lib/cpu.c) and FLOWDP_CPU allows it.
 *
 * A lookup's work per field is: pick one bucket row per group from the
 * packet's value, then AND the rows (plus the result carried from the
 * previous field).  Rows are 32-byte aligned and a multiple of 256 bits
 * long (lib/pipapo.c), so each step is one aligned 256-bit load and one
 * AND per row.  There is one function per shape, group width x group
 * count, with both constants so that the compiler unrolls the bucket
 * selection (constant shifts and masks) and the AND chain:
 *
 *   lookup_8b_1    nw_proto, nw_ttl, nw_tos     lookup_4b_2    the same
 *   lookup_8b_2    a port, dl_type, in_port     lookup_4b_4    the same
 *   lookup_8b_4    IPv4, pkt_mark               lookup_4b_8    the same
 *   lookup_8b_6    a MAC address                lookup_4b_12   the same
 *   lookup_8b_16   an IPv6 address              lookup_4b_32   the same
 *
 * (left: 8-bit groups while the field's table is small; right: 4-bit
 * groups once it is large, see "Group width" in lib/pipapo.c).  Other
 * shapes (ipv6_label's 20 bits, tcp_flags' 12...) take lookup_slow, the
 * same code with run-time counts.  fdp__pipapo_and_avx2() is the single
 * dispatch ladder.  Nothing needs setting up per lookup: user space may
 * use the YMM registers freely.
 */
#include <config.h>

#include "pipapo.h"

#include <immintrin.h>

/* The row of group 'g' for value 'v' in a field of 'n' groups of 'gb'
 * bits. */
static inline __attribute__((always_inline)) const uint64_t *
bucket_row(const struct pipapo_field *pf, fdp_u128 v, unsigned int gb,
           unsigned int n, unsigned int g)
{
    unsigned int shift = (n - g - 1) * gb;
    uint32_t b = (uint32_t) (v >> shift) & ((1u << gb) - 1);

    return pf->lt + ((size_t) g << gb | b) * pf->bsize;
}

static inline __attribute__((always_inline)) bool
lookup_n(uint64_t *res, const struct pipapo_field *pf, fdp_u128 v,
         unsigned int gb, unsigned int n, bool with_res)
{
    const uint64_t *rows[32];
    __m256i any = _mm256_setzero_si256();

    /* Phase 1: one bucket row per group. */
    for (unsigned int g = 0; g < n; g++) {
        rows[g] = bucket_row(pf, v, gb, n, g);
    }
    /* Phase 2: AND them, 256 bits at a time. */
    for (uint32_t w = 0; w < pf->bsize; w += 4) {
        __m256i x = with_res ? _mm256_load_si256((const __m256i *) &res[w])
                             : _mm256_load_si256((const __m256i *)
                                                 &rows[0][w]);
        for (unsigned int g = with_res ? 0 : 1; g < n; g++) {
            x = _mm256_and_si256(x, _mm256_load_si256(
                                        (const __m256i *) &rows[g][w]));
        }
        _mm256_store_si256((__m256i *) &res[w], x);
        any = _mm256_or_si256(any, x);
    }
    return !_mm256_testz_si256(any, any);
}

#define SHAPE(GB, N)                                                    \
    static bool                                                         \
    lookup_##GB##b_##N(uint64_t *res, const struct pipapo_field *pf,    \
                       fdp_u128 v, bool with_res)                       \
    {                                                                   \
        return lookup_n(res, pf, v, GB, N, with_res);                   \
    }

SHAPE(8, 1)
SHAPE(8, 2)
SHAPE(8, 4)
SHAPE(8, 6)
SHAPE(8, 16)
SHAPE(4, 2)
SHAPE(4, 4)
SHAPE(4, 8)
SHAPE(4, 12)
SHAPE(4, 32)
#undef SHAPE

/* Any other shape: the same steps with run-time counts. */
static bool
lookup_slow(uint64_t *res, const struct pipapo_field *pf, fdp_u128 v,
            bool with_res)
{
    return lookup_n(res, pf, v, pf->group_bits, pf->n_groups, with_res);
}

/* A shape as one number for the dispatch ladder. */
#define SHAPE_KEY(GB, N) ((GB) << 8 | (N))

bool
fdp__pipapo_and_avx2(uint64_t *res, const struct pipapo_field *pf,
                     fdp_u128 v, bool with_res)
{
    switch (SHAPE_KEY(pf->group_bits, pf->n_groups)) {
    case SHAPE_KEY(8, 1):
        return lookup_8b_1(res, pf, v, with_res);
    case SHAPE_KEY(8, 2):
        return lookup_8b_2(res, pf, v, with_res);
    case SHAPE_KEY(8, 4):
        return lookup_8b_4(res, pf, v, with_res);
    case SHAPE_KEY(8, 6):
        return lookup_8b_6(res, pf, v, with_res);
    case SHAPE_KEY(8, 16):
        return lookup_8b_16(res, pf, v, with_res);
    case SHAPE_KEY(4, 2):
        return lookup_4b_2(res, pf, v, with_res);
    case SHAPE_KEY(4, 4):
        return lookup_4b_4(res, pf, v, with_res);
    case SHAPE_KEY(4, 8):
        return lookup_4b_8(res, pf, v, with_res);
    case SHAPE_KEY(4, 12):
        return lookup_4b_12(res, pf, v, with_res);
    case SHAPE_KEY(4, 32):
        return lookup_4b_32(res, pf, v, with_res);
    default:
        return lookup_slow(res, pf, v, with_res);
    }
}
