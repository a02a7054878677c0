/*
 * The tests' and benchmarks' generator (rng.h).
 */
#include <config.h>

#include "tests/lib/rng.h"

/* The state a zero seed is replaced with: 2^64 divided by the golden ratio,
 * an odd constant with no structure a shift-xor could keep. */
#define TEST_RNG_ZERO_SEED UINT64_C(0x9e3779b97f4a7c15)

/* xorshift64*'s shifts (12, 25, 27) and multiplier, the "A1(12,25,27)"
 * parameters of Vigna's paper (rng.h). */
#define TEST_RNG_MULTIPLIER UINT64_C(0x2545f4914f6cdd1d)

uint64_t
test_rng_next(uint64_t *state)
{
    uint64_t x = *state ? *state : TEST_RNG_ZERO_SEED;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * TEST_RNG_MULTIPLIER;
}

uint32_t
test_rng_below(uint64_t *state, uint32_t bound)
{
    return (uint32_t) ((test_rng_next(state) >> 32) * bound >> 32);
}
