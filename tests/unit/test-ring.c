/*
 * Unit tests for datapath/ring.c: a producer and a consumer thread pass
 * 10 million descriptors in random batches (none lost, none duplicated,
 * order kept).
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "flowdp/ring.h"
#include "unit.h"

START_TEST(create_errors)
{
    struct fdp_ring *r;

    ck_assert_int_eq(fdp_ring_create(0, &r), EINVAL);
    ck_assert_int_eq(fdp_ring_create(3, &r), EINVAL);
    ck_assert_int_eq(fdp_ring_create(FDP_RING_MAX_SIZE * 2, &r), EINVAL);
    ck_assert_int_eq(fdp_ring_create(8, &r), 0);
    ck_assert_uint_eq(fdp_ring_size(r), 8);

    /* Full and empty, single-threaded, with wrap-around. */
    uint32_t idx;
    for (int round = 0; round < 5; round++) {
        ck_assert_uint_eq(fdp_ring_reserve(r, 5, &idx), 5);
        ck_assert_uint_eq(fdp_ring_reserve(r, 5, &idx), 3);
        ck_assert_uint_eq(fdp_ring_reserve(r, 1, &idx), 0);
        fdp_ring_submit(r, 8);
        ck_assert_uint_eq(fdp_ring_peek(r, 10, &idx), 8);
        ck_assert_uint_eq(fdp_ring_peek(r, 1, &idx), 0);
        fdp_ring_release(r, 8);
    }
    fdp_ring_destroy(r);
    fdp_ring_destroy(NULL);
}
END_TEST

enum { N_DESCS = 10 * 1000 * 1000 };

struct pass {
    struct fdp_ring *ring;
    uint64_t seed;
    uint64_t errors;
};

static void *
producer_main(void *pass_)
{
    struct pass *p = pass_;
    struct unit_rng rng = { .state = p->seed };
    uint64_t next = 0;

    while (next < N_DESCS) {
        uint32_t want = 1 + unit_rng_below(&rng, 32), idx;
        if (want > N_DESCS - next) {
            want = (uint32_t) (N_DESCS - next);
        }
        uint32_t n = fdp_ring_reserve(p->ring, want, &idx);
        for (uint32_t i = 0; i < n; i++) {
            struct fdp_desc *d = fdp_ring_slot(p->ring, idx + i);
            d->addr = next;
            d->len = (uint32_t) (next * 7);
            d->options = (uint32_t) (next >> 3);
            next++;
        }
        fdp_ring_submit(p->ring, n);
    }
    return NULL;
}

static void *
consumer_main(void *pass_)
{
    struct pass *p = pass_;
    struct unit_rng rng = { .state = p->seed * 3 };
    uint64_t expect = 0;

    while (expect < N_DESCS) {
        uint32_t want = 1 + unit_rng_below(&rng, 48), idx;
        uint32_t n = fdp_ring_peek(p->ring, want, &idx);
        for (uint32_t i = 0; i < n; i++) {
            const struct fdp_desc *d = fdp_ring_slot(p->ring, idx + i);
            if (d->addr != expect || d->len != (uint32_t) (expect * 7)
                || d->options != (uint32_t) (expect >> 3)) {
                p->errors++;
            }
            expect++;
        }
        fdp_ring_release(p->ring, n);
    }
    return NULL;
}

START_TEST(two_threads_ten_million)
{
    struct pass p = { .seed = unit_seed() + 1 };
    pthread_t prod, cons;

    ck_assert_int_eq(fdp_ring_create(256, &p.ring), 0);
    pthread_create(&cons, NULL, consumer_main, &p);
    pthread_create(&prod, NULL, producer_main, &p);
    pthread_join(prod, NULL);
    pthread_join(cons, NULL);
    ck_assert_uint_eq(p.errors, 0);
    uint32_t idx;
    ck_assert_uint_eq(fdp_ring_peek(p.ring, 1, &idx), 0);   /* Drained. */
    fdp_ring_destroy(p.ring);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ring");
    TCase *tc = unit_tcase(s, "ring");

    tcase_add_test(tc, create_errors);
    tcase_add_test(tc, two_threads_ten_million);
    return unit_run(s);
}
