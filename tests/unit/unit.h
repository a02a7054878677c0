/*
 * Helpers shared by the Check unit tests.
 */
#ifndef FDP_TESTS_UNIT_H
#define FDP_TESTS_UNIT_H 1

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fdp_port_rings;

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

/* The peer side of a ring port (flowdp/datapath.h), as a NIC would be.
 * unit_peer_send() takes a free frame from the fill ring, copies the
 * 'len' bytes of 'pkt' into it and submits it on the rx ring; false if no
 * frame is free.  unit_peer_drain() takes every packet from the tx ring,
 * calls 'cb' (if nonnull) with each, gives the frames back on the
 * completion ring, and returns how many there were. */
bool unit_peer_send(const struct fdp_port_rings *r, const void *pkt,
                    size_t len);
typedef void unit_peer_cb(void *aux, const uint8_t *pkt, uint32_t len);
uint32_t unit_peer_drain(const struct fdp_port_rings *r, unit_peer_cb *cb,
                         void *aux);

#endif /* FDP_TESTS_UNIT_H */
