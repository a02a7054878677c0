/*
 * One field's step of a pipapo lookup, as a template that each
 * implementation file (lib/pipapo.c for generic C, lib/pipapo-avx2.c with
 * -mavx2) instantiates once per field shape with its own 256-bit chunk
 * AND.  Internal to those two files.
 *
 * The step works chunk by chunk (PIPAPO_ROW_WORDS words, 256 rules) and
 * only on the chunks that can still hold survivors, which it tracks in a
 * summary bitmap, one bit per chunk (see "Chunk summaries" in
 * lib/pipapo.c):
 *
 *   active = with_res ? sum : every chunk of the field
 *   active &= the chunk summary of each selected row (large fields only)
 *   for each chunk c in active:
 *       res[c] = (with_res ? res[c] : ~0) & row_0[c] & ... & row_n-1[c]
 *   sum = the chunks of 'active' whose result is not zero
 *
 * Chunks outside the new 'sum' are left as they were in 'res': every
 * reader of a step's result reads only the chunks its summary names.
 */
#ifndef FDP_PIPAPO_STEP_H
#define FDP_PIPAPO_STEP_H 1

#include "lib/pipapo.h"

/* ANDs chunk 'w' .. w + PIPAPO_ROW_WORDS - 1 of the 'n' rows (and of 'res'
 * itself if 'with_res') into 'res'; true if the result is not zero. */
typedef bool pipapo_chunk_fn(uint64_t *res, const uint64_t *const *rows,
                             unsigned int n, uint32_t w, bool with_res);

/* The bits of summary word 'sw' for chunks that exist in a field of
 * 'n_chunks' chunks. */
static inline uint64_t
pipapo_chunks_in_word(uint32_t n_chunks, uint32_t sw)
{
    uint32_t left = n_chunks - sw * 64;

    return left >= 64 ? UINT64_MAX : (UINT64_C(1) << left) - 1;
}

/* The step for a field of 'n' groups of 'gb' bits (constants in each
 * instantiation, so that the bucket selection and the AND chain unroll),
 * with 'and_chunk' inlined. */
static inline __attribute__((always_inline)) bool
pipapo_step(uint64_t *res, uint64_t *sum, const struct pipapo_field *pf,
            fdp_u128 v, bool with_res, unsigned int gb, unsigned int n,
            pipapo_chunk_fn *and_chunk)
{
    const uint64_t *rows[32];
    size_t idx[32];
    uint64_t any = 0;

    /* Phase 1: one bucket row per group. */
    for (unsigned int g = 0; g < n; g++) {
        unsigned int shift = (n - g - 1) * gb;
        uint32_t b = (uint32_t) (v >> shift) & ((1u << gb) - 1);
        idx[g] = (size_t) g << gb | b;
        rows[g] = pf->lt + idx[g] * pf->bsize;
    }

    /* Phase 2: the chunks worth ANDing, and their AND. */
    for (uint32_t sw = 0; sw < pf->sum_words; sw++) {
        uint64_t active = with_res ? sum[sw]
                                   : pipapo_chunks_in_word(pf->n_chunks, sw);
        if (pf->sum) {
            for (unsigned int g = 0; g < n && active; g++) {
                active &= pf->sum[idx[g] * pf->sum_words + sw];
            }
        }
        uint64_t out = 0;
        for (; active; active &= active - 1) {
            unsigned int c = (unsigned int) __builtin_ctzll(active);
            uint32_t w = (sw * 64 + c) * PIPAPO_ROW_WORDS;
            if (and_chunk(res, rows, n, w, with_res)) {
                out |= UINT64_C(1) << c;
            }
        }
        sum[sw] = out;
        any |= out;
    }
    return any != 0;
}

/* The shapes with their own instantiation: group width x group count. */
#define PIPAPO_SHAPES(X)                                                \
    X(8, 1)     /* nw_proto, nw_ttl, nw_tos */                          \
    X(8, 2)     /* a port, dl_type, in_port */                          \
    X(8, 3)     /* IPv4 with a uniform first byte, a MAC's low half */  \
    X(8, 4)     /* IPv4, pkt_mark */                                    \
    X(8, 5)     /* a MAC address with a uniform byte */                 \
    X(8, 6)     /* a MAC address */                                     \
    X(8, 8)     /* half an IPv6 address (a shared /64) */               \
    X(8, 16)    /* an IPv6 address */                                   \
    X(4, 2)     /* the same with 4-bit groups, for large tables */      \
    X(4, 4)                                                             \
    X(4, 8)                                                             \
    X(4, 12)                                                            \
    X(4, 32)

/* A shape as one number for a dispatch switch. */
#define PIPAPO_SHAPE_KEY(GB, N) ((GB) << 8 | (N))

/* Defines, in an implementation file that has #defined PIPAPO_CHUNK to
 * its chunk AND, one step function per shape of PIPAPO_SHAPES, a slow
 * step with run-time counts for the others, PICK() (the function for a
 * field's shape, chosen when a snapshot is built) and AND() (any shape:
 * PICK()'s choice, for tests). */
#define PIPAPO_STEP_FN(GB, N)                                           \
    static bool                                                         \
    step_##GB##b_##N(uint64_t *res, uint64_t *sum,                      \
                     const struct pipapo_field *pf, fdp_u128 v,         \
                     bool with_res)                                     \
    {                                                                   \
        return pipapo_step(res, sum, pf, v, with_res, GB, N,            \
                           PIPAPO_CHUNK);                               \
    }
#define PIPAPO_STEP_CASE(GB, N)                                         \
    case PIPAPO_SHAPE_KEY(GB, N):                                       \
        return step_##GB##b_##N;
#define PIPAPO_DEFINE_STEPS(PICK, AND)                                  \
    PIPAPO_SHAPES(PIPAPO_STEP_FN)                                       \
                                                                        \
    static bool                                                         \
    step_slow(uint64_t *res, uint64_t *sum,                             \
              const struct pipapo_field *pf, fdp_u128 v, bool with_res) \
    {                                                                   \
        return pipapo_step(res, sum, pf, v, with_res, pf->group_bits,   \
                           pf->n_groups, PIPAPO_CHUNK);                 \
    }                                                                   \
                                                                        \
    fdp__pipapo_and_fn *                                                \
    PICK(const struct pipapo_field *pf)                                 \
    {                                                                   \
        switch (PIPAPO_SHAPE_KEY(pf->group_bits, pf->n_groups)) {       \
        PIPAPO_SHAPES(PIPAPO_STEP_CASE)                                 \
        default:                                                        \
            return step_slow;                                           \
        }                                                               \
    }                                                                   \
                                                                        \
    bool                                                                \
    AND(uint64_t *res, uint64_t *sum, const struct pipapo_field *pf,    \
        fdp_u128 v, bool with_res)                                      \
    {                                                                   \
        return PICK(pf)(res, sum, pf, v, with_res);                     \
    }

#endif /* FDP_PIPAPO_STEP_H */
