/*
 * Helpers shared by the Check unit tests.
 */
#ifndef FDP_TESTS_UNIT_H
#define FDP_TESTS_UNIT_H 1

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/lib/peer.h"
#include "tests/lib/rng.h"

/* The seed of this run: $FLOWDP_TEST_SEED if set, else a fixed default.
 * Printed once so that a failure can be replayed. */
uint64_t unit_seed(void);

/* The generator of test inputs (tests/lib/rng.h), seeded from this run's
 * seed by unit_rng_init() so that a failure replays with FLOWDP_TEST_SEED. */
struct unit_rng {
    uint64_t state;
};
void unit_rng_init(struct unit_rng *, uint64_t salt);

static inline uint64_t
unit_rng_next(struct unit_rng *rng)
{
    return test_rng_next(&rng->state);
}

static inline uint32_t
unit_rng_below(struct unit_rng *rng, uint32_t bound)
{
    return test_rng_below(&rng->state, bound);
}

/* Runs 'suite' with Check's normal output and returns the process exit
 * status: 0 if every test passed. */
int unit_run(Suite *suite);

/* Adds a test case named 'name' with a timeout generous enough for
 * sanitizer builds. */
TCase *unit_tcase(Suite *suite, const char *name);

/* The peer side of a ring port (test_peer_send(), test_peer_drain()) is in
 * tests/lib/peer.h, shared with the benchmarks. */

#endif /* FDP_TESTS_UNIT_H */
