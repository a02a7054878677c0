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
