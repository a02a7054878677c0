/*
 * The one pseudo-random generator of the unit tests and the benchmarks:
 * xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift
 * generators, scrambled", 2016), a 64-bit state advanced by three
 * shift-xors and scrambled by one multiply.
 *
 * It is chosen for inputs, not for security: small, fast enough to call
 * inside a timed loop, and fully determined by its seed, so that a test
 * failure can be replayed (tests/unit/unit.h prints the seed) and a
 * benchmark measures the same rule sets and packets run after run.  The
 * high bits are the best ones, so test_rng_below() takes those.
 *
 * A state of zero is a fixed point of xorshift; test_rng_next() replaces it
 * with a fixed nonzero one, so that any seed (0 included) gives a sequence.
 */
#ifndef FDP_TESTS_LIB_RNG_H
#define FDP_TESTS_LIB_RNG_H 1

#include <stdint.h>

/* Advances '*state' and returns the next 64 random bits. */
uint64_t test_rng_next(uint64_t *state);

/* A number from 0 to 'bound' - 1 (0 if 'bound' is 0), without the modulo
 * bias of "next % bound": the high 32 bits scaled by 'bound'. */
uint32_t test_rng_below(uint64_t *state, uint32_t bound);

#endif /* FDP_TESTS_LIB_RNG_H */
