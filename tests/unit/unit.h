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

/* Check's ck_assert_msg(), which every ck_assert*() expands to, records
 * the location of each assertion that passes (_mark_point(): a write() to
 * Check's message file) so that a test that crashes can say where it got
 * to.  The tests that compare millions of values with a reference (every
 * word of every random packet's key, say) spent most of their time, and
 * most of "make check"'s unit-test minutes, in those system calls.  Here a
 * passing assertion costs only its expression; a failing one reports as
 * before, and a crash is reported at the last mark_point() the test made,
 * or its start. */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...)                                           \
    ((expr) ? (void) 0                                                      \
            : _ck_assert_failed(__FILE__, __LINE__,                         \
                                "Assertion '" #expr "' failed",             \
                                ## __VA_ARGS__))

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

/* Progress between threads, for concurrency tests that must make the
 * interleavings they check happen rather than hope for them on an idle
 * machine.  A worker thread calls unit_progress_bump() after each unit of
 * work (a lookup, a dump); the thread driving the test reads the count
 * with unit_progress_get() and waits with unit_progress_wait() until it
 * reaches 'target', so that every round of the test overlaps at least one
 * unit of the worker's work.  The wait is bounded (UNIT_WAIT_SECONDS): if
 * the count does not get there, the test fails with a message naming
 * 'what', the count reached and the target, instead of hanging until
 * Check's timeout.  Counts are read and written atomically. */
#define UNIT_WAIT_SECONDS 60
void unit_progress_bump(uint64_t *count);
uint64_t unit_progress_get(const uint64_t *count);
void unit_progress_wait(const uint64_t *count, uint64_t target,
                        const char *what);

/* The peer side of a ring port (test_peer_send(), test_peer_drain()) is in
 * tests/lib/peer.h, shared with the benchmarks. */

#endif /* FDP_TESTS_UNIT_H */
