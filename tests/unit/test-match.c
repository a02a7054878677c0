/*
 * Unit tests for lib/match.c: matching, covering and intersecting, each
 * against brute force over every key of a small field space; the compact
 * form rules store, round trip against the whole match.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/match-internal.h"
#include "lib/util.h"
#include "unit.h"

/* The brute-force space: three fields, 16 bits in all, enumerated by
 * every value of a 16-bit counter. */
static const struct {
    enum fdp_field field;
    unsigned int n_bits;
} space[] = {
    { FDP_F_NW_TTL, 8 },
    { FDP_F_NW_TOS, 6 },
    { FDP_F_IP_FRAG, 2 },
};

static void
key_from_index(uint32_t index, struct fdp_key *key)
{
    memset(key, 0, sizeof *key);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(space); i++) {
        fdp__key_set(key, space[i].field,
                     index & ((1u << space[i].n_bits) - 1));
        index >>= space[i].n_bits;
    }
}

/* A random match over the space's fields: each field wildcarded, masked
 * (random value and mask) or a random range. */
static void
random_match(struct unit_rng *rng, struct fdp_match *m)
{
    fdp__match_init(m);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(space); i++) {
        enum fdp_field f = space[i].field;
        uint32_t ones = (1u << space[i].n_bits) - 1;
        uint32_t a = (uint32_t) unit_rng_next(rng) & ones;
        uint32_t b = (uint32_t) unit_rng_next(rng) & ones;
        switch (unit_rng_below(rng, 4)) {
        case 0:
            break;
        case 1:
            ck_assert_int_eq(fdp__match_set_masked(m, f, a, b), 0);
            break;
        case 2:
            /* A short range is more likely to be interesting. */
            b = a + unit_rng_below(rng, 12);
            b = b > ones ? ones : b;
            /* fall through */
        default:
            if (f != FDP_F_IP_FRAG) {
                ck_assert_int_eq(fdp__match_set_range(m, f, a < b ? a : b,
                                                      a < b ? b : a), 0);
            }
            break;
        }
    }
}

/* Reference: does 'key' match 'm', field by field? */
static bool
ref_matches(const struct fdp_match *m, const struct fdp_key *key)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(space); i++) {
        enum fdp_field f = space[i].field;
        fdp_u128 x = fdp__key_get(key, f);
        if (fdp__match_has_range(m, f)) {
            if (x < fdp__key_get(&m->value, f)
                || x > fdp__key_get(&m->hi, f)) {
                return false;
            }
        } else if ((x ^ fdp__match_get_value(m, f))
                   & fdp__match_get_mask(m, f)) {
            return false;
        }
    }
    return true;
}

START_TEST(differential_against_brute_force)
{
    enum { N_PAIRS = 150, N_KEYS = 1 << 16 };
    struct unit_rng rng;
    static bool in_a[N_KEYS], in_b[N_KEYS];

    unit_rng_init(&rng, 10);
    for (int pair = 0; pair < N_PAIRS; pair++) {
        struct fdp_match a, b;
        random_match(&rng, &a);
        random_match(&rng, &b);

        bool a_covers_b = true, b_covers_a = true, meet = false;
        for (uint32_t i = 0; i < N_KEYS; i++) {
            struct fdp_key key;
            key_from_index(i, &key);
            in_a[i] = fdp_match_matches(&a, &key);
            in_b[i] = fdp_match_matches(&b, &key);
            ck_assert_msg(in_a[i] == ref_matches(&a, &key),
                          "pair %d key %u (seed %llu)", pair, i,
                          (unsigned long long) unit_seed());
            a_covers_b &= !in_b[i] || in_a[i];
            b_covers_a &= !in_a[i] || in_b[i];
            meet |= in_a[i] && in_b[i];
        }
        ck_assert_msg(fdp_match_covers(&a, &b) == a_covers_b,
                      "covers(a, b), pair %d (seed %llu)", pair,
                      (unsigned long long) unit_seed());
        ck_assert_msg(fdp_match_covers(&b, &a) == b_covers_a,
                      "covers(b, a), pair %d (seed %llu)", pair,
                      (unsigned long long) unit_seed());
        ck_assert_msg(fdp_match_intersects(&a, &b) == meet,
                      "intersects, pair %d (seed %llu)", pair,
                      (unsigned long long) unit_seed());
        ck_assert(fdp_match_intersects(&b, &a) == meet);
        ck_assert(fdp_match_covers(&a, &a));
    }
}
END_TEST

START_TEST(ranges_normalise)
{
    struct fdp_match m;

    /* A single value, a prefix block and the whole field become masks. */
    fdp__match_init(&m);
    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_TP_DST, 80, 80), 0);
    ck_assert(fdp_match_is_masked(&m));
    ck_assert(fdp__match_get_mask(&m, FDP_F_TP_DST) == 0xffff);
    ck_assert(fdp__match_get_value(&m, FDP_F_TP_DST) == 80);

    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_TP_DST, 1024, 2047), 0);
    ck_assert(fdp_match_is_masked(&m));
    ck_assert(fdp__match_get_mask(&m, FDP_F_TP_DST) == 0xfc00);

    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_TP_DST, 0, 65535), 0);
    ck_assert(fdp_match_is_masked(&m));
    ck_assert(fdp__match_get_mask(&m, FDP_F_TP_DST) == 0);

    /* 1000-2000 is not a prefix. */
    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_TP_DST, 1000, 2000), 0);
    ck_assert(!fdp_match_is_masked(&m));

    /* IPv6 /64 as a range. */
    fdp_u128 lo = (fdp_u128) 0x20010db800000000ull << 64;
    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_IPV6_SRC, lo,
                                          lo | UINT64_MAX), 0);
    ck_assert(!fdp__match_has_range(&m, FDP_F_IPV6_SRC));
    ck_assert(fdp__match_get_mask(&m, FDP_F_IPV6_SRC)
              == (fdp_u128) UINT64_MAX << 64);

    /* Bad ranges. */
    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_TP_SRC, 5, 4), EINVAL);
    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_TP_SRC, 0, 65536),
                     EINVAL);
    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_TCP_FLAGS, 1, 5),
                     EINVAL);
    ck_assert_int_eq(fdp__match_set_masked(&m, FDP_F_NW_TTL, 256, 0xff),
                     EINVAL);
    /* A range on dl_vlan shares bits with vlan_tci. */
    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_DL_VLAN, 10, 20), 0);
    ck_assert_int_eq(fdp__match_set_masked(&m, FDP_F_VLAN_TCI, 1, 0xffff),
                     EBUSY);
}
END_TEST

START_TEST(public_api)
{
    struct fdp_match *m = fdp_match_create();
    struct fdp_key key;
    struct fdp_value v;

    memset(&key, 0, sizeof key);
    ck_assert_ptr_nonnull(m);
    ck_assert(fdp_match_matches(m, &key));
    ck_assert_int_eq(fdp_match_set_range(m, FDP_F_NW_SRC,
                                         (struct fdp_value) { 0, 0x0a000001 },
                                         (struct fdp_value) { 0, 0x0a000032 }),
                     0);
    fdp_key_set(&key, FDP_F_NW_SRC, (struct fdp_value) { 0, 0x0a000010 });
    ck_assert(fdp_match_matches(m, &key));
    v = fdp_key_get(&key, FDP_F_NW_SRC);
    ck_assert_uint_eq(v.lo, 0x0a000010);
    fdp_key_set(&key, FDP_F_NW_SRC, (struct fdp_value) { 0, 0x0a000033 });
    ck_assert(!fdp_match_matches(m, &key));

    struct fdp_match *c = fdp_match_clone(m);
    ck_assert(fdp_match_equal(m, c));
    ck_assert_int_eq(fdp_match_set_masked(c, FDP_F_TP_DST,
                                          (struct fdp_value) { 0, 80 },
                                          (struct fdp_value) { 0, 0xffff }),
                     0);
    ck_assert(!fdp_match_equal(m, c));
    ck_assert(fdp_match_covers(m, c));
    ck_assert(!fdp_match_covers(c, m));
    ck_assert_int_eq(fdp_match_set_masked(c, FDP_N_FIELDS,
                                          (struct fdp_value) { 0, 0 },
                                          (struct fdp_value) { 0, 0 }),
                     EINVAL);
    fdp_match_destroy(c);
    fdp_match_destroy(m);
    fdp_match_destroy(NULL);
}
END_TEST

START_TEST(field_table)
{
    /* Every field has a name, a width, and round-trips through its name;
     * fields sharing storage agree with the key layout in key.h. */
    for (int f = 0; f < FDP_N_FIELDS; f++) {
        enum fdp_field g;
        ck_assert_ptr_nonnull(fdp_field_name(f));
        ck_assert(fdp_field_from_name(fdp_field_name(f), &g));
        ck_assert_int_eq(g, f);
        unsigned int w = fdp_field_width(f);
        ck_assert(w > 0 && w <= 128);
        ck_assert(fdp__field(f)->max <= fdp__ones(w));
        ck_assert(fdp__field(f)->word_mask
                  == (w >= 64 ? ~(uint64_t) 0
                      : (uint64_t) fdp__ones(w) << fdp__field(f)->shift));
        /* Set all ones, read back, and nothing else changes. */
        struct fdp_key key;
        memset(&key, 0, sizeof key);
        fdp__key_set(&key, f, ~(fdp_u128) 0);
        ck_assert(fdp__key_get(&key, f) == fdp__ones(w));
        fdp__key_set(&key, f, 0);
        for (int i = 0; i < FDP_KEY_WORDS; i++) {
            ck_assert_uint_eq(key.w[i], 0);
        }
    }
    enum fdp_field g;
    ck_assert(fdp_field_from_name("tcp_dst", &g) && g == FDP_F_TP_DST);
    ck_assert(fdp_field_from_name("eth_src", &g) && g == FDP_F_DL_SRC);
    ck_assert(!fdp_field_from_name("tp_dstx", &g));
    ck_assert_ptr_null(fdp_field_name(FDP_N_FIELDS));
}
END_TEST

/* fdp__key_store_masked(), the pipeline's register load, against the
 * generic get, merge and set it replaces: every field of at most 64 bits,
 * random keys, values and masks, mask and value bits beyond the field
 * too. */
START_TEST(store_masked_against_get_merge_set)
{
    struct unit_rng rng;

    unit_rng_init(&rng, 13);
    for (int f = 0; f < FDP_N_FIELDS; f++) {
        if (fdp__field(f)->n_bits > 64) {
            continue;
        }
        for (int round = 0; round < 200; round++) {
            struct fdp_key a, b;
            for (int i = 0; i < FDP_KEY_WORDS; i++) {
                a.w[i] = unit_rng_next(&rng);
            }
            b = a;
            uint64_t value = unit_rng_next(&rng);
            uint64_t mask = round % 4 == 0 ? ~(uint64_t) 0
                            : unit_rng_next(&rng);
            uint64_t old = (uint64_t) fdp__key_get(&a, f);
            fdp__key_set(&a, f, (old & ~mask) | (value & mask));
            fdp__key_store_masked(&b, f, value, mask);
            ck_assert_msg(!memcmp(&a, &b, sizeof a), "field %s, round %d",
                          fdp_field_name(f), round);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The compact form (struct fdp__cmatch).                                  */

/* A random value of 'n_bits' bits: all ones, all zeros or random, so that
 * words come out zero and nonzero. */
static fdp_u128
random_bits(struct unit_rng *rng, unsigned int n_bits)
{
    fdp_u128 v = ((fdp_u128) unit_rng_next(rng) << 64) | unit_rng_next(rng);

    switch (unit_rng_below(rng, 4)) {
    case 0:
        v = 0;
        break;
    case 1:
        v = ~(fdp_u128) 0;
        break;
    default:
        break;
    }
    return v & fdp__ones(n_bits);
}

/* A random match over every field: each wildcarded, masked, exact or a
 * range (refused where the field takes none or its bits are taken). */
static void
random_wide_match(struct unit_rng *rng, struct fdp_match *m)
{
    fdp__match_init(m);
    for (int f = 0; f < FDP_N_FIELDS; f++) {
        unsigned int n = fdp__field(f)->n_bits;
        fdp_u128 a = random_bits(rng, n), b = random_bits(rng, n);
        switch (unit_rng_below(rng, 5)) {
        case 0:
        case 1:
            break;
        case 2:
            fdp__match_set_masked(m, f, a & b, b);
            break;
        case 3:
            fdp__match_set_masked(m, f, a, fdp__ones(n));
            break;
        default:
            fdp__match_set_range(m, f, a < b ? a : b, a < b ? b : a);
            break;
        }
    }
}

/* Packs 'm' into a block of exactly its compact size (so that ASan sees
 * an overrun) and checks everything read back against 'm'. */
static void
check_compact(const struct fdp_match *m, uint64_t seed, int round)
{
    size_t size = fdp__cmatch_size(m);
    struct fdp__cmatch *c = malloc(size);
    struct fdp_match back;

    ck_assert_ptr_nonnull(c);
    fdp__cmatch_pack(c, m);
    ck_assert_uint_eq(size, sizeof *c
                            + (2 * fdp__cmatch_n_words(c)
                               + (size_t) fdp__popcount64(c->hi_words))
                              * sizeof(uint64_t)
                            + (c->hi_words ? sizeof(struct fdp__field_map)
                                           : 0));
    fdp__cmatch_expand(c, &back);
    ck_assert_msg(!memcmp(&back, m, sizeof back),
                  "round %d: expanded match differs (seed %llu)", round,
                  (unsigned long long) seed);
    ck_assert(fdp__cmatch_equal(c, m));
    ck_assert(fdp_match_equal(&back, m));
    for (unsigned int w = 0; w < FDP_KEY_WORDS; w++) {
        ck_assert(fdp__cmatch_word(c, FDP__MATCH_VALUE, w) == m->value.w[w]);
        ck_assert(fdp__cmatch_word(c, FDP__MATCH_MASK, w) == m->mask.w[w]);
        ck_assert(fdp__cmatch_word(c, FDP__MATCH_HI, w) == m->hi.w[w]);
    }
    for (int f = 0; f < FDP_N_FIELDS; f++) {
        ck_assert(fdp__cmatch_get(c, FDP__MATCH_VALUE, f)
                  == fdp__key_get(&m->value, f));
        ck_assert(fdp__cmatch_get(c, FDP__MATCH_MASK, f)
                  == fdp__key_get(&m->mask, f));
        ck_assert(fdp__cmatch_get(c, FDP__MATCH_HI, f)
                  == fdp__key_get(&m->hi, f));
        ck_assert(fdp__cmatch_has_range(c, f) == fdp__match_has_range(m, f));
    }

    /* A match that differs in one bit of one part is not equal. */
    struct fdp_match other = *m;
    struct fdp_key *parts[] = { &other.value, &other.mask, &other.hi };
    parts[round % 3]->w[(round / 3) % FDP_KEY_WORDS]
        ^= UINT64_C(1) << (round % 64);
    ck_assert(!fdp__cmatch_equal(c, &other));
    free(c);
}

/* Random matches over every field, with ranges, survive the compact form
 * bit for bit, and every field reads back as from the whole match. */
START_TEST(compact_round_trip)
{
    struct unit_rng rng;
    uint64_t seed = unit_seed();

    unit_rng_init(&rng, 12);
    int n_ranged = 0, n_two_word_hi = 0;

    for (int round = 0; round < 20000; round++) {
        struct fdp_match m;
        random_wide_match(&rng, &m);
        n_ranged += fdp__match_has_ranges(&m);
        n_two_word_hi += m.hi.w[6] && m.hi.w[7];
        check_compact(&m, seed, round);
    }
    /* The generator reached ranges, and 128-bit ones. */
    ck_assert_int_gt(n_ranged, 1000);
    ck_assert_int_gt(n_two_word_hi, 10);
}
END_TEST

/* The sizes the memory budget rests on (docs/PERFORMANCE.md). */
START_TEST(compact_sizes)
{
    struct fdp_match m;

    fdp__match_init(&m);
    ck_assert_uint_eq(fdp__cmatch_size(&m), 16);
    check_compact(&m, 0, 0);

    /* An exact five-tuple: words 0 and 1, value and mask. */
    fdp__match_set_masked(&m, FDP_F_DL_TYPE, 0x0800, 0xffff);
    fdp__match_set_masked(&m, FDP_F_NW_PROTO, 6, 0xff);
    fdp__match_set_masked(&m, FDP_F_NW_SRC, 0x0a000001, 0xffffffff);
    fdp__match_set_masked(&m, FDP_F_NW_DST, 0x0a000002, 0xffffffff);
    fdp__match_set_masked(&m, FDP_F_TP_SRC, 1234, 0xffff);
    fdp__match_set_masked(&m, FDP_F_TP_DST, 80, 0xffff);
    ck_assert_uint_eq(fdp__cmatch_size(&m), 16 + 4 * 8);
    check_compact(&m, 0, 1);

    /* A port range adds one hi word (word 1's) and the range field map,
     * which only a match with a range stores. */
    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_TP_DST, 1000, 2000), 0);
    ck_assert_uint_eq(fdp__cmatch_size(&m),
                      16 + 5 * 8 + sizeof(struct fdp__field_map));
    check_compact(&m, 0, 2);

    /* An IPv6 range whose bounds differ only in the low word stores no
     * word 6 of 'hi' if its high word is zero... */
    fdp__match_init(&m);
    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_IPV6_SRC, 3, 5), 0);
    ck_assert_uint_eq(fdp__cmatch_size(&m),
                      16 + 3 * 8 + sizeof(struct fdp__field_map));
    check_compact(&m, 0, 3);
    /* ...and both where both are set. */
    fdp_u128 lo = (fdp_u128) 0x20010db8 << 96;
    ck_assert_int_eq(fdp__match_set_range(&m, FDP_F_IPV6_SRC, lo + 3,
                                          lo + ((fdp_u128) 1 << 70) + 7),
                     0);
    ck_assert_uint_eq(fdp__cmatch_size(&m),
                      16 + 6 * 8 + sizeof(struct fdp__field_map));
    check_compact(&m, 0, 4);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("match");
    TCase *tc = unit_tcase(s, "match");

    tcase_add_test(tc, differential_against_brute_force);
    tcase_add_test(tc, ranges_normalise);
    tcase_add_test(tc, public_api);
    tcase_add_test(tc, field_table);
    tcase_add_test(tc, store_masked_against_get_merge_set);
    tcase_add_test(tc, compact_round_trip);
    tcase_add_test(tc, compact_sizes);
    return unit_run(s);
}
