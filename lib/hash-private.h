/*
 * Hash implementations, shared with their SIMD files, the unit tests and
 * flowdp-bench so that each can be run and compared directly.
 */
#ifndef FDP_HASH_PRIVATE_H
#define FDP_HASH_PRIVATE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu.h"
#include "hash.h"

/* The functions one implementation provides. */
struct fdp__hash_funcs {
    /* Raw CRC32C register update: no initial or final inversion. */
    uint32_t (*crc32c)(uint32_t crc, const void *data, size_t size);
    /* fdp_hash_crc32c() */
    uint32_t (*hash_crc32c)(const uint64_t *words, size_t n_words,
                            uint32_t basis);
    /* fdp_hash_fast() and its name. */
    uint32_t (*hash_fast)(const uint64_t *words, size_t n_words,
                          uint32_t basis);
    const char *fast_name;
};

/* One row of the dispatch table: an instruction-set level, whether this CPU
 * can run it, and its functions.  Rows run from the best level down to
 * generic, which is always last and always usable. */
struct fdp__hash_impl {
    const char *name;
    enum fdp_cpu_level level;
    bool (*probe)(void);
    struct fdp__hash_funcs funcs;
};

extern const struct fdp__hash_impl fdp__hash_impls[];
extern const size_t fdp__hash_n_impls;

/* The row chosen for this process. */
const struct fdp__hash_impl *fdp__hash_selected(void);

/* For benchmarks only: makes fdp_hash_fast() compute "crc32c" or
 * "jhash2" from now on.  Tables hash with fdp_hash_fast() on every probe,
 * so call it only while no table exists.  Returns 0, or ENOTSUP if this
 * CPU or build cannot run the named hash in hardware (crc32c), EINVAL for
 * an unknown name. */
int fdp__hash_set_fast(const char *name);

/* Portable implementations (lib/hash.c). */
uint32_t fdp__crc32c_sw(uint32_t crc, const void *data, size_t size);
uint32_t fdp__hash_crc32c_sw(const uint64_t *words, size_t n_words,
                             uint32_t basis);
uint64_t fdp__siphash(unsigned int c_rounds, unsigned int d_rounds,
                      const struct fdp_hash_key *key,
                      const void *data, size_t size);

/* Hash flooding, for tests and benchmarks: stores in 'diffs' up to
 * 'max' linearly independent differences d (each 'n_words' words, at
 * most 16) that only flip bits set in 'controlled' and have raw
 * CRC32C(0, d) == 0.  XORing any combination of them into a key leaves
 * fdp_hash_crc32c() unchanged under every basis.  Returns how many. */
size_t fdp__crc32c_null_space(size_t n_words, const uint64_t *controlled,
                              uint64_t (*diffs)[16], size_t max);

/* SSE4.2 + CLMUL implementations (lib/hash-sse42.c). */
uint32_t fdp__crc32c_sse42(uint32_t crc, const void *data, size_t size);
uint32_t fdp__hash_crc32c_sse42(const uint64_t *words, size_t n_words,
                                uint32_t basis);

/* Lane lengths of the interleaved CRC (lib/hash-sse42.c).  Inputs of at
 * least 3 * FDP_CRC_LANE_MIN words are split into three lanes computed in
 * parallel; longer inputs go in blocks of three lanes of at most
 * FDP_CRC_LANE_MAX words. */
#define FDP_CRC_LANE_MIN 3
#define FDP_CRC_LANE_MAX 32

/* fdp__crc32c_shift_k[w] = x^(64w - 33) mod P, bit-reflected, for
 * 1 <= w <= 2 * FDP_CRC_LANE_MAX: multiplying a CRC register by it with
 * PCLMULQDQ and reducing with crc32q advances the register over w zero
 * words.  Filled when the library loads. */
extern uint32_t fdp__crc32c_shift_k[2 * FDP_CRC_LANE_MAX + 1];

#endif /* FDP_HASH_PRIVATE_H */
