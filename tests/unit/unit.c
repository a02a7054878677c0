/*
 * Helpers shared by the Check unit tests.
 */
#include <config.h>

#include "unit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>

#include <flowdp/datapath.h>
#include <flowdp/ring.h>

/* Default seed: fixed, so that runs are reproducible unless asked. */
#define UNIT_DEFAULT_SEED UINT64_C(20261130)

/* Seconds a test case may take; sanitizer builds run several times slower
 * than Check's default of 4 s allows. */
#define UNIT_TIMEOUT 300

uint64_t
unit_seed(void)
{
    static uint64_t seed;
    static int done;

    if (!done) {
        const char *env = getenv("FLOWDP_TEST_SEED");
        seed = env ? strtoull(env, NULL, 0) : UNIT_DEFAULT_SEED;
        done = 1;
    }
    return seed;
}

void
unit_rng_init(struct unit_rng *rng, uint64_t salt)
{
    rng->state = unit_seed() ^ (salt * 0x9e3779b97f4a7c15ull);
}

uint64_t
unit_rng_next(struct unit_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint32_t
unit_rng_below(struct unit_rng *rng, uint32_t bound)
{
    return (uint32_t) ((unit_rng_next(rng) >> 32) * bound >> 32);
}

TCase *
unit_tcase(Suite *suite, const char *name)
{
    TCase *tc = tcase_create(name);

    tcase_set_timeout(tc, UNIT_TIMEOUT);
    suite_add_tcase(suite, tc);
    return tc;
}

int
unit_run(Suite *suite)
{
    SRunner *sr = srunner_create(suite);

    printf("Random seed: %" PRIu64 " (set FLOWDP_TEST_SEED to replay)\n",
           unit_seed());
    fflush(stdout);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

bool
unit_peer_send(const struct fdp_port_rings *r, const void *pkt, size_t len)
{
    uint32_t fidx, ridx;

    if (!fdp_ring_peek(r->fill, 1, &fidx)) {
        return false;
    }
    struct fdp_desc d = *fdp_ring_slot(r->fill, fidx);
    fdp_ring_release(r->fill, 1);
    ck_assert_uint_ge(d.len, len);
    memcpy((uint8_t *) r->umem + d.addr, pkt, len);
    d.len = (uint32_t) len;
    ck_assert_uint_eq(fdp_ring_reserve(r->rx, 1, &ridx), 1);
    *fdp_ring_slot(r->rx, ridx) = d;
    fdp_ring_submit(r->rx, 1);
    return true;
}

uint32_t
unit_peer_drain(const struct fdp_port_rings *r, unit_peer_cb *cb, void *aux)
{
    uint32_t idx, cidx;
    uint32_t n = fdp_ring_peek(r->tx, UINT32_MAX, &idx);

    for (uint32_t i = 0; i < n; i++) {
        struct fdp_desc d = *fdp_ring_slot(r->tx, idx + i);
        if (cb) {
            cb(aux, (const uint8_t *) r->umem + d.addr, d.len);
        }
        ck_assert_uint_eq(fdp_ring_reserve(r->completion, 1, &cidx), 1);
        *fdp_ring_slot(r->completion, cidx) = d;
        fdp_ring_submit(r->completion, 1);
    }
    fdp_ring_release(r->tx, n);
    return n;
}

void
unit_progress_bump(uint64_t *count)
{
    __atomic_fetch_add(count, 1, __ATOMIC_RELEASE);
}

uint64_t
unit_progress_get(const uint64_t *count)
{
    return __atomic_load_n(count, __ATOMIC_ACQUIRE);
}

/* Seconds on the monotonic clock. */
static double
unit_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

void
unit_progress_wait(const uint64_t *count, uint64_t target, const char *what)
{
    double deadline = 0;

    for (unsigned int spins = 0; unit_progress_get(count) < target;
         spins++) {
        /* Yield first: on a loaded machine the other thread usually only
         * needs the CPU.  Only then look at the clock, then sleep 100 us
         * so that a waiting writer does not starve the thread it waits
         * for on a machine with fewer free CPUs than threads. */
        if (spins < 64) {
            sched_yield();
            continue;
        }
        double now = unit_now();
        if (!deadline) {
            deadline = now + UNIT_WAIT_SECONDS;
        } else if (now > deadline) {
            ck_abort_msg("%s: no progress for %d s (count %llu, waiting "
                         "for %llu)", what, UNIT_WAIT_SECONDS,
                         (unsigned long long) unit_progress_get(count),
                         (unsigned long long) target);
        }
        nanosleep(&(struct timespec) { .tv_nsec = 100 * 1000 }, NULL);
    }
}
