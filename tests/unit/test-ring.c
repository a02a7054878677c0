/*
 * Unit tests for datapath/ring.c: a producer and a consumer thread pass
 * 10 million descriptors in random batches (none lost, none duplicated,
 * order kept), and buffers cycle through fill and rx rings as with an
 * AF_XDP UMEM, with exactly one owner at any time.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <flowdp/ring.h>
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

/* Buffer ownership, as with an AF_XDP UMEM: frames cycle fill ring ->
 * receiver -> rx ring -> datapath -> fill ring; each hand-over swaps the
 * frame's owner atomically and must find the expected previous owner. */
enum { N_FRAMES = 512, N_PASSES = 2 * 1000 * 1000 };
enum { OWNER_FILL = 1, OWNER_RX = 2 };

struct umem {
    struct fdp_ring *fill, *rx;
    uint8_t owner[N_FRAMES];
    uint64_t errors;
};

/* Moves batches from 'from' to 'to' until 'N_PASSES' frames have moved,
 * checking each frame was owned by 'was' and making it 'now''s. */
static void
shuttle(struct umem *u, struct fdp_ring *from, struct fdp_ring *to,
        uint8_t was, uint8_t now)
{
    uint64_t moved = 0;

    while (moved < N_PASSES) {
        uint32_t fi, ti;
        uint32_t n = fdp_ring_peek(from, 16, &fi);
        uint32_t m = fdp_ring_reserve(to, n, &ti);
        if (m != n) {
            __atomic_fetch_add(&u->errors, 1, __ATOMIC_RELAXED);
        }
        for (uint32_t i = 0; i < m; i++) {
            uint64_t f = fdp_ring_slot(from, fi + i)->addr;
            if (__atomic_exchange_n(&u->owner[f], now, __ATOMIC_RELAXED)
                != was) {
                __atomic_fetch_add(&u->errors, 1, __ATOMIC_RELAXED);
            }
            fdp_ring_slot(to, ti + i)->addr = f;
        }
        fdp_ring_submit(to, m);
        fdp_ring_release(from, m);
        moved += m;
    }
}

static void *
receiver_main(void *u_)
{
    struct umem *u = u_;

    shuttle(u, u->fill, u->rx, OWNER_FILL, OWNER_RX);
    return NULL;
}

static void *
datapath_main(void *u_)
{
    struct umem *u = u_;

    shuttle(u, u->rx, u->fill, OWNER_RX, OWNER_FILL);
    return NULL;
}

START_TEST(umem_ownership)
{
    struct umem *u = calloc(1, sizeof *u);
    pthread_t a, b;
    uint32_t idx;

    /* A frame is counted in both rings between the datapath's submit to
     * the fill ring and its release of the rx ring, so rings of twice the
     * frames always have room for a peeked batch. */
    ck_assert_int_eq(fdp_ring_create(2 * N_FRAMES, &u->fill), 0);
    ck_assert_int_eq(fdp_ring_create(2 * N_FRAMES, &u->rx), 0);
    ck_assert_uint_eq(fdp_ring_reserve(u->fill, N_FRAMES, &idx), N_FRAMES);
    for (uint32_t f = 0; f < N_FRAMES; f++) {
        fdp_ring_slot(u->fill, idx + f)->addr = f;
        u->owner[f] = OWNER_FILL;
    }
    fdp_ring_submit(u->fill, N_FRAMES);

    pthread_create(&a, NULL, receiver_main, u);
    pthread_create(&b, NULL, datapath_main, u);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    ck_assert_uint_eq(u->errors, 0);

    /* Every frame is back in the fill ring, exactly once. */
    uint8_t seen[N_FRAMES] = { 0 };
    ck_assert_uint_eq(fdp_ring_peek(u->rx, N_FRAMES, &idx), 0);
    ck_assert_uint_eq(fdp_ring_peek(u->fill, 2 * N_FRAMES, &idx), N_FRAMES);
    for (uint32_t i = 0; i < N_FRAMES; i++) {
        uint64_t f = fdp_ring_slot(u->fill, idx + i)->addr;
        ck_assert(f < N_FRAMES && !seen[f]);
        seen[f] = 1;
        ck_assert_uint_eq(u->owner[f], OWNER_FILL);
    }
    fdp_ring_destroy(u->fill);
    fdp_ring_destroy(u->rx);
    free(u);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ring");
    TCase *tc = unit_tcase(s, "ring");

    tcase_add_test(tc, create_errors);
    tcase_add_test(tc, two_threads_ten_million);
    tcase_add_test(tc, umem_ownership);
    return unit_run(s);
}
