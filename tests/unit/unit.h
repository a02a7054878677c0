/*
 * Helpers shared by the Check unit tests.
 */
#ifndef FDP_TESTS_UNIT_H
#define FDP_TESTS_UNIT_H 1

#include <check.h>
#include <stdint.h>

/* The seed of this run: $FLOWDP_TEST_SEED if set, else a fixed default.
 * Printed once so that a failure can be replayed. */
uint64_t unit_seed(void);

/* A splitmix64 generator for test inputs. */
struct unit_rng {
    uint64_t state;
};
void unit_rng_init(struct unit_rng *, uint64_t salt);
uint64_t unit_rng_next(struct unit_rng *);
uint32_t unit_rng_below(struct unit_rng *, uint32_t bound);

/* Runs 'suite' with Check's normal output and returns the process exit
 * status: 0 if every test passed. */
int unit_run(Suite *suite);

/* Adds a test case named 'name' with a timeout generous enough for
 * sanitizer builds. */
TCase *unit_tcase(Suite *suite, const char *name);

#endif /* FDP_TESTS_UNIT_H */
