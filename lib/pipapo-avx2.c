/*
 * Pipapo field step with AVX2.
 *
 * This file alone is compiled with -mavx2; lib/pipapo.c calls it only when
 * the CPU and the OS support AVX2 (lib/cpu.c) and FLOWDP_CPU allows it.
 *
 * A lookup's work per field is: pick one bucket row per group from the
 * packet's value, then AND the rows (plus the result carried from the
 * previous field) in the 256-bit chunks that can still hold survivors
 * (lib/pipapo-step.h).  Rows are 32-byte aligned and a multiple of 256
 * bits long (lib/pipapo.c), so each chunk is one aligned 256-bit load and
 * one AND per row, and one VPTEST says whether it survives.  There is one
 * function per shape, group width x group count, with both constants so
 * that the compiler unrolls the bucket selection (constant shifts and
 * masks) and the AND chain:
 *
 *   step_8b_1    nw_proto, nw_ttl, nw_tos     step_4b_2    the same
 *   step_8b_2    a port, dl_type, in_port     step_4b_4    the same
 *   step_8b_4    IPv4, pkt_mark               step_4b_8    the same
 *   step_8b_6    a MAC address                step_4b_12   the same
 *   step_8b_16   an IPv6 address              step_4b_32   the same
 *
 * (left: 8-bit groups while the field's table is small; right: 4-bit
 * groups once it is large, see "Group width" in lib/pipapo.c).  Other
 * shapes (ipv6_label's 20 bits, tcp_flags' 12...) take step_slow, the
 * same code with run-time counts (all defined by PIPAPO_DEFINE_STEPS() in
 * lib/pipapo-step.h, as for the generic code).  fdp__pipapo_pick_avx2()
 * is the single dispatch ladder, run when a snapshot is built: each
 * field keeps its function (pipapo_field.steps).  Nothing needs setting
 * up per lookup: user space may use the YMM registers freely.
 */
#include <config.h>

#include "lib/pipapo.h"
#include "lib/pipapo-step.h"

#include <immintrin.h>

static inline __attribute__((always_inline)) bool
and_chunk_avx2(uint64_t *res, const uint64_t *const *rows, unsigned int n,
               uint32_t w, bool with_res)
{
    __m256i x = _mm256_load_si256((const __m256i *)
                                  (with_res ? &res[w] : &rows[0][w]));

    for (unsigned int g = with_res ? 0 : 1; g < n; g++) {
        x = _mm256_and_si256(x, _mm256_load_si256(
                                    (const __m256i *) &rows[g][w]));
    }
    _mm256_store_si256((__m256i *) &res[w], x);
    return !_mm256_testz_si256(x, x);
}

#define PIPAPO_CHUNK and_chunk_avx2
PIPAPO_DEFINE_STEPS(fdp__pipapo_pick_avx2, fdp__pipapo_and_avx2)
