/*
 * Unit tests for lib/ties.c: fdp__ties_level_tied() against brute force
 * (fdp_match_intersects() on every pair of rules of different sub-tables)
 * on random levels, and its work bound.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "lib/match-internal.h"
#include "lib/ties.h"
#include "lib/util.h"
#include "unit.h"

/* A level: 'n' rules, each pointing at its own match in 'matches'. */
struct level {
    size_t n;
    size_t capacity;
    struct fdp_match *matches;
    struct fdp__tie_rule *rules;
};

static void
level_init(struct level *l, size_t capacity)
{
    l->n = 0;
    l->capacity = capacity;
    l->matches = calloc(capacity, sizeof *l->matches);
    l->rules = calloc(capacity, sizeof *l->rules);
    ck_assert_ptr_nonnull(l->matches);
    ck_assert_ptr_nonnull(l->rules);
}

static void
level_destroy(struct level *l)
{
    free(l->matches);
    free(l->rules);
}

/* Appends a rule of sub-table 'subtable' and returns its match, which the
 * caller fills in. */
static struct fdp_match *
level_add(struct level *l, uintptr_t subtable)
{
    ck_assert_uint_lt(l->n, l->capacity);
    struct fdp_match *m = &l->matches[l->n];
    fdp__match_init(m);
    l->rules[l->n].match = m;
    l->rules[l->n].subtable = subtable;
    l->n++;
    return m;
}

static void
set_masked(struct fdp_match *m, enum fdp_field f, fdp_u128 value,
           fdp_u128 mask)
{
    ck_assert_int_eq(fdp__match_set_masked(m, f, value & mask, mask), 0);
}

/* The reference: some pair of rules of different sub-tables intersects. */
static bool
brute_force_tied(const struct level *l)
{
    for (size_t i = 0; i < l->n; i++) {
        for (size_t j = i + 1; j < l->n; j++) {
            if (l->rules[i].subtable != l->rules[j].subtable
                && fdp_match_intersects(l->rules[i].match,
                                        l->rules[j].match)) {
                return true;
            }
        }
    }
    return false;
}

/* Checks fdp__ties_level_tied() with no work bound against brute force
 * and returns the answer. */
static bool
check_level(struct level *l, const char *what, int trial)
{
    bool expected = brute_force_tied(l);
    bool got = fdp__ties_level_tied(l->rules, l->n, UINT64_MAX);

    ck_assert_msg(got == expected,
                  "%s, trial %d, %zu rules: tied %d, brute force %d "
                  "(seed %llu)", what, trial, l->n, got, expected,
                  (unsigned long long) unit_seed());
    return got;
}

/* A random subset of the low 'n_bits' bits, each in with probability
 * 'percent' / 100. */
static uint64_t
random_bits(struct unit_rng *rng, unsigned int n_bits, uint32_t percent)
{
    uint64_t bits = 0;

    for (unsigned int i = 0; i < n_bits; i++) {
        if (unit_rng_below(rng, 100) < percent) {
            bits |= UINT64_C(1) << i;
        }
    }
    return bits;
}

/* The bits random levels match on: a few of several fields, in the low
 * and high halves of words 0, 1 and 6, few enough that random values of
 * different masks sometimes agree.  tp_dst, the last, is also where rules
 * take ranges. */
static const struct {
    enum fdp_field field;
    unsigned int n_bits;        /* Bits 'shift' to 'shift' + 'n_bits' - 1 of
                                 * the field. */
    unsigned int shift;
} shape_bits[] = {
    { FDP_F_NW_SRC, 5, 0 },
    { FDP_F_NW_DST, 4, 0 },
    { FDP_F_IPV6_SRC, 3, 125 },
    { FDP_F_TP_DST, 4, 0 },
};

enum { SHAPE_RANGE = FDP_ARRAY_SIZE(shape_bits) - 1 };

struct shape {
    uint64_t bits[FDP_ARRAY_SIZE(shape_bits)];
    uintptr_t subtable;
};

static void
random_shape(struct unit_rng *rng, uint32_t percent, struct shape *shape)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(shape_bits); i++) {
        shape->bits[i] = random_bits(rng, shape_bits[i].n_bits, percent);
    }
}

/* A rule of 'shape' with random values; with probability 'range_percent'
 * its tp_dst is a random range instead of its mask (set_range normalises
 * single values and prefix blocks back to masks). */
static void
add_random_rule(struct unit_rng *rng, struct level *l,
                const struct shape *shape, uint32_t range_percent,
                uintptr_t range_subtable)
{
    bool ranged = unit_rng_below(rng, 100) < range_percent;
    struct fdp_match *m = level_add(l, ranged ? range_subtable
                                              : shape->subtable);

    for (size_t i = 0; i < FDP_ARRAY_SIZE(shape_bits); i++) {
        unsigned int shift = shape_bits[i].shift;
        if (ranged && i == SHAPE_RANGE) {
            uint32_t lo = unit_rng_below(rng, 1u << shape_bits[i].n_bits);
            uint32_t hi = lo + unit_rng_below(rng, 4);
            ck_assert_int_eq(fdp__match_set_range(m, shape_bits[i].field,
                                                  lo, hi), 0);
        } else {
            set_masked(m, shape_bits[i].field,
                       (fdp_u128) unit_rng_next(rng) << shift,
                       (fdp_u128) shape->bits[i] << shift);
        }
    }
}

/* A random level: 1 to 6 masks over 1 to 6 sub-tables (several masks may
 * share one, as in a pipapo overflow sub-table), 2 to 120 rules, and
 * 'range_percent' of them with a tp_dst range, in one of two range
 * sub-tables (ids 100 and 101, which no mask uses). */
static void
random_level(struct unit_rng *rng, struct level *l, uint32_t range_percent,
             bool one_subtable)
{
    struct shape shapes[6];
    size_t n_shapes = 1 + unit_rng_below(rng, FDP_ARRAY_SIZE(shapes));
    uint32_t n_subtables = 1 + unit_rng_below(rng, (uint32_t) n_shapes);
    uint32_t percent = 50 + unit_rng_below(rng, 51);
    size_t n_rules = 2 + unit_rng_below(rng, 119);

    for (size_t i = 0; i < n_shapes; i++) {
        random_shape(rng, percent, &shapes[i]);
        shapes[i].subtable = one_subtable ? 7 : i % n_subtables;
    }
    l->n = 0;
    for (size_t i = 0; i < n_rules; i++) {
        add_random_rule(rng, l, &shapes[unit_rng_below(rng,
                                                       (uint32_t) n_shapes)],
                        range_percent,
                        one_subtable ? 7 : 100 + unit_rng_below(rng, 2));
    }
}

/* Runs 'n_trials' random levels and checks that both answers occur often
 * enough for the comparison to mean something. */
static void
differential(uint64_t salt, uint32_t range_percent, const char *what)
{
    enum { N_TRIALS = 600 };
    struct unit_rng rng;
    struct level l;
    int n_tied = 0;

    unit_rng_init(&rng, salt);
    level_init(&l, 128);
    for (int trial = 0; trial < N_TRIALS; trial++) {
        random_level(&rng, &l, range_percent, false);
        n_tied += check_level(&l, what, trial);
    }
    ck_assert_msg(n_tied > N_TRIALS / 10 && n_tied < N_TRIALS * 9 / 10,
                  "%s: %d of %d levels tied, too lopsided to test much "
                  "(seed %llu)", what, n_tied, N_TRIALS,
                  (unsigned long long) unit_seed());
    level_destroy(&l);
}

START_TEST(masked_levels_match_brute_force)
{
    differential(1, 0, "masked");
}
END_TEST

START_TEST(mixed_levels_match_brute_force)
{
    differential(2, 30, "mixed");
}
END_TEST

START_TEST(range_levels_match_brute_force)
{
    differential(3, 100, "ranges");
}
END_TEST

START_TEST(one_subtable_never_ties)
{
    struct unit_rng rng;
    struct level l;

    unit_rng_init(&rng, 4);
    level_init(&l, 128);
    for (int trial = 0; trial < 200; trial++) {
        random_level(&rng, &l, trial % 2 ? 30 : 0, true);
        ck_assert_msg(!check_level(&l, "one sub-table", trial),
                      "trial %d (seed %llu)", trial,
                      (unsigned long long) unit_seed());
    }
    level_destroy(&l);
}
END_TEST

/* A megaflow-like level: 'n_masks' masks, each with nw_src's top byte
 * exact and equal to the mask's number (so rules of different masks never
 * meet), a random longer nw_src prefix, a random nw_dst prefix, tp_dst
 * exact or not and nw_proto exact; 'n_rules' rules spread over the masks.
 * Masks live in their own sub-tables, but one in four is in a shared
 * overflow sub-table (id 1000), as pipapo absorbs masks. */
static void
megaflow_level(struct unit_rng *rng, struct level *l, size_t n_masks,
               size_t n_rules)
{
    struct megaflow_mask {
        unsigned int src_len, dst_len;
        bool tp_dst;
        uintptr_t subtable;
    } *masks = calloc(n_masks, sizeof *masks);

    ck_assert_ptr_nonnull(masks);
    ck_assert_uint_le(n_masks, 256);
    for (size_t k = 0; k < n_masks; k++) {
        masks[k].src_len = 8 + unit_rng_below(rng, 25);
        masks[k].dst_len = unit_rng_below(rng, 33);
        masks[k].tp_dst = unit_rng_below(rng, 2);
        masks[k].subtable = unit_rng_below(rng, 4) ? k : 1000;
    }
    l->n = 0;
    for (size_t i = 0; i < n_rules; i++) {
        size_t k = i % n_masks;
        const struct megaflow_mask *mk = &masks[k];
        struct fdp_match *m = level_add(l, mk->subtable);
        uint32_t src = ((uint32_t) k << 24)
                       | ((uint32_t) unit_rng_next(rng) & 0xffffffu);

        set_masked(m, FDP_F_NW_SRC, src,
                   fdp__ones(32) & ~fdp__ones(32 - mk->src_len));
        set_masked(m, FDP_F_NW_DST, unit_rng_next(rng) & 0xffffffffu,
                   fdp__ones(32) & ~fdp__ones(32 - mk->dst_len));
        if (mk->tp_dst) {
            set_masked(m, FDP_F_TP_DST, unit_rng_below(rng, 65536), 0xffff);
        }
        set_masked(m, FDP_F_NW_PROTO, unit_rng_below(rng, 2) ? 6 : 17,
                   0xff);
    }
    free(masks);
}

START_TEST(megaflows_never_tie)
{
    struct unit_rng rng;
    struct level l;

    unit_rng_init(&rng, 5);
    level_init(&l, 2000);
    for (int trial = 0; trial < 20; trial++) {
        megaflow_level(&rng, &l, 1 + unit_rng_below(&rng, 100),
                       2 + unit_rng_below(&rng, 1999));
        ck_assert_msg(!check_level(&l, "megaflows", trial),
                      "trial %d (seed %llu)", trial,
                      (unsigned long long) unit_seed());
    }
    level_destroy(&l);
}
END_TEST

/* One rule of a megaflow level, loosened, in a new sub-table: it meets the
 * rule it came from and, as loosened, perhaps others.  Kinds: 0, nw_dst
 * wildcarded; 1, nw_src cut to /8 (the hash join has nothing to work on
 * but the rest of the key); 2, a tp_src range added, so the pair goes
 * through fdp_match_intersects(). */
START_TEST(planted_overlap_ties)
{
    struct unit_rng rng;
    struct level l;

    unit_rng_init(&rng, 6);
    level_init(&l, 1001);
    for (int trial = 0; trial < 30; trial++) {
        megaflow_level(&rng, &l, 1 + unit_rng_below(&rng, 100),
                       2 + unit_rng_below(&rng, 999));
        const struct fdp_match *victim
            = l.rules[unit_rng_below(&rng, (uint32_t) l.n)].match;
        struct fdp_match *plant = level_add(&l, 2000);
        *plant = *victim;
        switch (trial % 3) {
        case 0:
            set_masked(plant, FDP_F_NW_DST, 0, 0);
            break;
        case 1:
            set_masked(plant, FDP_F_NW_SRC,
                       fdp__match_get_value(victim, FDP_F_NW_SRC),
                       0xff000000u);
            break;
        default:
            ck_assert_int_eq(fdp__match_set_range(plant, FDP_F_TP_SRC,
                                                  1000, 2000), 0);
            break;
        }
        ck_assert_msg(check_level(&l, "planted", trial),
                      "trial %d (seed %llu)", trial,
                      (unsigned long long) unit_seed());
    }
    level_destroy(&l);
}
END_TEST

/* The worked example of lib/ties.c's theory of operation, and the same
 * with r6 moved to 10.4.9.0/24, where the hash join misses. */
START_TEST(worked_example)
{
    static const struct {
        uintptr_t subtable;
        uint32_t nw_src;
        unsigned int len;
        int tp_dst;             /* -1: wildcarded. */
    } rules[] = {
        { 1, 0x0a010000, 16, -1 },      /* r1 */
        { 1, 0x0a020000, 16, -1 },      /* r2 */
        { 2, 0x0b000000, 8, 80 },       /* r3 */
        { 2, 0x0b000000, 8, 443 },      /* r4 */
        { 3, 0x0a030700, 24, -1 },      /* r5 */
        { 3, 0x0a020900, 24, -1 },      /* r6 */
    };
    struct level l;

    level_init(&l, FDP_ARRAY_SIZE(rules));
    for (int variant = 0; variant < 2; variant++) {
        l.n = 0;
        for (size_t i = 0; i < FDP_ARRAY_SIZE(rules); i++) {
            struct fdp_match *m = level_add(&l, rules[i].subtable);
            uint32_t nw_src = variant && i == 5 ? 0x0a040900
                                          : rules[i].nw_src;
            set_masked(m, FDP_F_NW_SRC, nw_src,
                       fdp__ones(32) & ~fdp__ones(32 - rules[i].len));
            if (rules[i].tp_dst >= 0) {
                set_masked(m, FDP_F_TP_DST, (fdp_u128) rules[i].tp_dst,
                           0xffff);
            }
        }
        ck_assert(check_level(&l, "worked example", variant) == !variant);
    }
    level_destroy(&l);
}
END_TEST

START_TEST(small_levels)
{
    struct level l;

    level_init(&l, 4);
    ck_assert(!fdp__ties_level_tied(l.rules, 0, 0));

    /* One rule cannot tie, whatever the bound. */
    level_add(&l, 1);
    ck_assert(!fdp__ties_level_tied(l.rules, 1, 0));

    /* Two catch-alls meet, unless they share a sub-table. */
    level_add(&l, 1);
    ck_assert(!check_level(&l, "two catch-alls, one sub-table", 0));
    l.rules[1].subtable = 2;
    ck_assert(check_level(&l, "two catch-alls", 0));

    /* Exact on tp_dst 80 and 81 never meet; a range 81-90 meets 81. */
    l.n = 0;
    set_masked(level_add(&l, 1), FDP_F_TP_DST, 80, 0xffff);
    set_masked(level_add(&l, 2), FDP_F_TP_DST, 81, 0xffff);
    ck_assert(!check_level(&l, "80, 81", 0));
    ck_assert_int_eq(fdp__match_set_range(level_add(&l, 3), FDP_F_TP_DST,
                                          82, 90), 0);
    ck_assert(!check_level(&l, "80, 81, 82-90", 0));
    ck_assert_int_eq(fdp__match_set_range(&l.matches[2], FDP_F_TP_DST,
                                          81, 90), 0);
    ck_assert(check_level(&l, "80, 81, 81-90", 0));
    level_destroy(&l);
}
END_TEST

/* A bound too small to decide gives "tied"; any bound gives "tied" or the
 * right answer, never a wrong "untied". */
START_TEST(work_bound)
{
    struct unit_rng rng;
    struct level l;

    unit_rng_init(&rng, 7);
    level_init(&l, 1000);
    megaflow_level(&rng, &l, 50, 1000);
    ck_assert(!check_level(&l, "megaflows", 0));
    for (uint64_t work_max = 0; work_max < 100; work_max++) {
        ck_assert_msg(fdp__ties_level_tied(l.rules, l.n, work_max),
                      "work_max %llu", (unsigned long long) work_max);
    }

    for (int trial = 0; trial < 300; trial++) {
        uint64_t work_max = UINT64_C(1) << unit_rng_below(&rng, 16);
        random_level(&rng, &l, trial % 3 ? 0 : 30, false);
        bool expected = brute_force_tied(&l);
        bool got = fdp__ties_level_tied(l.rules, l.n, work_max);
        ck_assert_msg(got || !expected,
                      "trial %d, work_max %llu: untied, but brute force "
                      "finds a tie (seed %llu)", trial,
                      (unsigned long long) work_max,
                      (unsigned long long) unit_seed());
    }
    level_destroy(&l);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ties");
    TCase *tc = unit_tcase(s, "ties");

    tcase_add_test(tc, masked_levels_match_brute_force);
    tcase_add_test(tc, mixed_levels_match_brute_force);
    tcase_add_test(tc, range_levels_match_brute_force);
    tcase_add_test(tc, one_subtable_never_ties);
    tcase_add_test(tc, megaflows_never_tie);
    tcase_add_test(tc, planted_overlap_ties);
    tcase_add_test(tc, worked_example);
    tcase_add_test(tc, small_levels);
    tcase_add_test(tc, work_bound);
    return unit_run(s);
}
