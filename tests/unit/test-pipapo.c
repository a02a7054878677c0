/*
 * Unit tests for lib/pipapo.c and lib/pipapo-avx2.c.
 *
 * Every test compares each implementation (generic, and AVX2 where the
 * CPU has it), with 8-bit, 4-bit and mixed groups, against a linear scan of
 * the same rules, on the set types of the kernel's nft_concat_range.sh
 * selftest and on regressions named after bugs the kernel's pipapo had.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/table.h>
#include "lib/actions-internal.h"
#include "lib/match-internal.h"
#include "lib/pipapo.h"
#include "lib/pipapo-step.h"
#include "lib/tss.h"
#include "lib/util.h"
#include "unit.h"

/* The selftest's set types, as flowdp fields. */
static const struct set_type {
    const char *name;
    enum fdp_field fields[5];
    unsigned int n;
} set_types[] = {
    { "net,port", { FDP_F_NW_DST, FDP_F_TP_DST }, 2 },
    { "port,net", { FDP_F_TP_DST, FDP_F_NW_DST }, 2 },
    { "net6,port", { FDP_F_IPV6_DST, FDP_F_TP_DST }, 2 },
    { "port,proto", { FDP_F_TP_DST, FDP_F_NW_PROTO }, 2 },
    { "net6,port,mac", { FDP_F_IPV6_DST, FDP_F_TP_DST, FDP_F_DL_SRC }, 3 },
    { "net6,port,mac,proto", { FDP_F_IPV6_DST, FDP_F_TP_DST, FDP_F_DL_SRC,
                               FDP_F_NW_PROTO }, 4 },
    { "net,mac", { FDP_F_NW_DST, FDP_F_DL_SRC }, 2 },
    { "mac,net", { FDP_F_DL_SRC, FDP_F_NW_DST }, 2 },
    { "net,port,net", { FDP_F_NW_SRC, FDP_F_TP_DST, FDP_F_NW_DST }, 3 },
    { "net6,port,net6,port", { FDP_F_IPV6_SRC, FDP_F_TP_SRC, FDP_F_IPV6_DST,
                               FDP_F_TP_DST }, 4 },
    { "net,port,mac,proto,net", { FDP_F_NW_SRC, FDP_F_TP_DST, FDP_F_DL_SRC,
                                  FDP_F_NW_PROTO, FDP_F_NW_DST }, 5 },
};

static fdp_u128
rand_bits(struct unit_rng *rng, unsigned int n_bits)
{
    fdp_u128 v = ((fdp_u128) unit_rng_next(rng) << 64) | unit_rng_next(rng);
    return v & fdp__ones(n_bits);
}

/* Values drawn near a few centres so that rules overlap. */
static fdp_u128
near_value(struct unit_rng *rng, unsigned int n_bits)
{
    fdp_u128 centre = (fdp_u128) unit_rng_below(rng, 3) << (n_bits - 2);
    return (centre + unit_rng_below(rng, 200)) & fdp__ones(n_bits);
}

/* The tests build a rule's match field by field, as a whole struct
 * fdp_match kept just before the rule in the same block (test_match());
 * a rule keeps its match compact, so seal() packs the whole one into the
 * rule's tail, which has room for every word, before pipapo reads it
 * (build(), build_widths() and add() seal their rules). */
#define MATCH_ROOM ((sizeof(struct fdp_match) + 63) / 64 * 64)
#define RULE_ROOM ((sizeof(struct fdp_rule) \
                    + 3 * FDP_KEY_WORDS * sizeof(uint64_t) + 63) / 64 * 64)

static struct fdp_match *
test_match(struct fdp_rule *r)
{
    return (struct fdp_match *) ((char *) r - MATCH_ROOM);
}

static struct fdp_rule *
new_rule(uint16_t priority, uint64_t seq)
{
    char *block = aligned_alloc(64, MATCH_ROOM + RULE_ROOM);
    struct fdp_rule *r = (struct fdp_rule *) (block + MATCH_ROOM);

    memset(block, 0, MATCH_ROOM + RULE_ROOM);
    fdp__match_init(test_match(r));
    r->priority = priority;
    r->seq = seq;
    r->remove_version = FDP_VERSION_NEVER;
    return r;
}

static void
free_rule(struct fdp_rule *r)
{
    free(test_match(r));
}

/* Frees the 'n' rules of 'rules', and the array. */
static void
free_rules(struct fdp_rule **rules, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        free_rule(rules[i]);
    }
    free(rules);
}

static struct fdp_rule *
seal(struct fdp_rule *r)
{
    fdp__cmatch_pack(&r->match, test_match(r));
    return r;
}

static void
seal_all(struct fdp_rule **rules, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        seal(rules[i]);
    }
}

static struct pipapo_snapshot *
build(const enum fdp_field *fields, unsigned int n_fields,
      struct fdp_rule **rules, uint32_t n, bool wide)
{
    seal_all(rules, n);
    return fdp__pipapo_build(fields, n_fields, rules, n, wide);
}

static struct pipapo_snapshot *
build_widths(const enum fdp_field *fields, unsigned int n_fields,
             struct fdp_rule **rules, uint32_t n, const uint8_t *gb)
{
    seal_all(rules, n);
    return fdp__pipapo_build_widths(fields, n_fields, rules, n, gb);
}

static int
add(struct pipapo *p, struct fdp_rule *r)
{
    return fdp__pipapo_add(p, seal(r));
}

/* A random constraint on 'f': a range (often a two-value one, as the
 * selftest uses), a prefix, an arbitrary mask, or exact. */
static void
random_constraint(struct unit_rng *rng, struct fdp_match *m, enum fdp_field f,
                  bool two_value)
{
    unsigned int n = fdp__field(f)->n_bits;
    fdp_u128 lo = near_value(rng, n);

    if (two_value) {
        fdp_u128 hi = lo == fdp__ones(n) ? lo : lo + 1;
        ck_assert_int_eq(fdp__match_set_range(m, f, lo, hi), 0);
        return;
    }
    switch (unit_rng_below(rng, 4)) {
    case 0: {
        fdp_u128 hi = lo + unit_rng_below(rng, 300);
        hi = hi > fdp__ones(n) ? fdp__ones(n) : hi;
        ck_assert_int_eq(fdp__match_set_range(m, f, lo, hi), 0);
        break;
    }
    case 1: {
        unsigned int len = unit_rng_below(rng, n + 1);
        fdp_u128 mask = fdp__ones(n) & ~fdp__ones(n - len);
        ck_assert_int_eq(fdp__match_set_masked(m, f, lo & mask, mask), 0);
        break;
    }
    case 2: {
        fdp_u128 mask = rand_bits(rng, n);
        ck_assert_int_eq(fdp__match_set_masked(m, f, lo & mask, mask), 0);
        break;
    }
    default:
        ck_assert_int_eq(fdp__match_set_masked(m, f, lo, fdp__ones(n)), 0);
        break;
    }
}

static int
compare_rules(const void *a_, const void *b_)
{
    const struct fdp_rule *a = *(const struct fdp_rule *const *) a_;
    const struct fdp_rule *b = *(const struct fdp_rule *const *) b_;

    if (a->priority != b->priority) {
        return a->priority > b->priority ? -1 : 1;
    }
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static const struct fdp_rule *
reference(struct fdp_rule **rules, uint32_t n, const struct fdp_key *key)
{
    for (uint32_t i = 0; i < n; i++) {     /* Sorted best first. */
        if (fdp_match_matches(test_match(rules[i]), key)) {
            return rules[i];
        }
    }
    return NULL;
}

/* Probes: random keys, keys inside rules, and the first, last, one-before
 * and one-past values of every range, the other fields inside the rule. */
static size_t
make_probes(struct unit_rng *rng, const struct set_type *t,
            struct fdp_rule **rules, uint32_t n, struct fdp_key *keys,
            size_t max)
{
    size_t k = 0;

    for (uint32_t i = 0; i < n && k + 4 * t->n + 2 <= max; i++) {
        const struct fdp_match *m = test_match(rules[i]);
        struct fdp_key inside;
        memset(&inside, 0, sizeof inside);
        for (unsigned int j = 0; j < t->n; j++) {
            enum fdp_field f = t->fields[j];
            fdp_u128 v = fdp__key_get(&m->value, f);
            fdp_u128 mask = fdp__key_get(&m->mask, f);
            if (!fdp__match_has_range(m, f)) {
                v = (v & mask) | (rand_bits(rng, fdp__field(f)->n_bits)
                                  & ~mask);
            }
            fdp__key_set(&inside, f, v);
        }
        keys[k++] = inside;
        for (unsigned int j = 0; j < t->n; j++) {
            enum fdp_field f = t->fields[j];
            if (!fdp__match_has_range(m, f)) {
                continue;
            }
            fdp_u128 lo = fdp__key_get(&m->value, f);
            fdp_u128 hi = fdp__key_get(&m->hi, f);
            fdp_u128 probes[4] = { lo, hi, hi + 1, lo - 1 };
            for (int p = 0; p < 4; p++) {
                keys[k] = inside;
                fdp__key_set(&keys[k], f, probes[p]);
                k++;
            }
        }
        if (unit_rng_below(rng, 2)) {
            memset(&keys[k], 0, sizeof keys[k]);
            for (unsigned int j = 0; j < t->n; j++) {
                fdp__key_set(&keys[k], t->fields[j],
                             near_value(rng,
                                        fdp__field(t->fields[j])->n_bits));
            }
            k++;
        }
    }
    return k;
}

/* The reference's answer for each of 'keys'. */
static const struct fdp_rule **
reference_all(struct fdp_rule **rules, uint32_t n, const struct fdp_key *keys,
              size_t n_keys)
{
    const struct fdp_rule **want = malloc((n_keys + 1) * sizeof *want);

    for (size_t k = 0; k < n_keys; k++) {
        want[k] = reference(rules, n, &keys[k]);
    }
    return want;
}

/* Checks every implementation on 'snap' against 'want', probing 'keys' in
 * order (so that one lookup's leftovers meet the next one). */
static void
check_impls(const struct pipapo_snapshot *snap, const struct fdp_key *keys,
            const struct fdp_rule **want, size_t n_keys, const char *what)
{
    for (size_t i = 0; i < fdp__pipapo_n_impls; i++) {
        const struct fdp__pipapo_impl *pi = &fdp__pipapo_impls[i];
        if (!fdp__cpu_impl_runs(&pi->cpu)) {
            continue;
        }
        for (size_t k = 0; k < n_keys; k++) {
            const struct fdp_rule *got
                = fdp__pipapo_lookup_with(snap, &keys[k], 0, pi->and_rows);
            ck_assert_msg(got == want[k], "%s, impl %s, probe %zu: got rule "
                          "%lld, want %lld (seed %llu)", what, pi->cpu.name, k,
                          got ? (long long) got->seq : -1LL,
                          want[k] ? (long long) want[k]->seq : -1LL,
                          (unsigned long long) unit_seed());
        }
    }
}

/* Checks 'snap' against the reference on 'keys' with every
 * implementation, in the given order. */
static void
check_keys_in_order(const struct pipapo_snapshot *snap,
                    struct fdp_rule **rules, uint32_t n,
                    const struct fdp_key *keys, size_t n_keys,
                    const char *what)
{
    const struct fdp_rule **want = reference_all(rules, n, keys, n_keys);

    check_impls(snap, keys, want, n_keys, what);
    free(want);
}

/* Checks every implementation with 4-bit, 8-bit and mixed groups (each
 * field has its own width) against the reference. */
static void
check_snapshots(const struct set_type *t, struct fdp_rule **rules,
                uint32_t n, const struct fdp_key *keys, size_t n_keys,
                const char *what)
{
    static const char *const width_names[] = { "4-bit", "8-bit", "mixed" };
    const struct fdp_rule **want = reference_all(rules, n, keys, n_keys);

    for (int widths = 0; widths < 3; widths++) {
        uint8_t gb[5];
        for (unsigned int j = 0; j < t->n; j++) {
            gb[j] = widths == 2 ? (j % 2 ? 4 : 8) : widths ? 8 : 4;
        }
        struct pipapo_snapshot *snap = build_widths(
            t->fields, t->n, rules, n, gb);
        ck_assert_ptr_nonnull(snap);
        char label[128];
        snprintf(label, sizeof label, "%s %s, %s groups", t->name, what,
                 width_names[widths]);
        check_impls(snap, keys, want, n_keys, label);
        fdp__pipapo_snapshot_free(snap);
    }
    free(want);
}

static void
run_set_type(const struct set_type *t, uint32_t n, bool two_value,
             uint64_t salt)
{
    struct unit_rng rng;
    struct fdp_rule **rules = malloc(n * sizeof *rules);
    size_t max_keys = 4000;
    struct fdp_key *keys = malloc(max_keys * sizeof *keys);

    unit_rng_init(&rng, salt);
    for (uint32_t i = 0; i < n; i++) {
        rules[i] = new_rule((uint16_t) unit_rng_below(&rng, 4), i);
        for (unsigned int j = 0; j < t->n; j++) {
            random_constraint(&rng, test_match(rules[i]), t->fields[j],
                              two_value);
        }
    }
    qsort(rules, n, sizeof *rules, compare_rules);
    size_t n_keys = make_probes(&rng, t, rules, n, keys, max_keys);
    check_snapshots(t, rules, n, keys, n_keys, "all");

    /* Delete every third rule, then check again. */
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i % 3 == 2) {
            free_rule(rules[i]);
        } else {
            rules[m++] = rules[i];
        }
    }
    check_snapshots(t, rules, m, keys, n_keys, "after deletions");
    for (uint32_t i = 0; i < m; i++) {
        free_rule(rules[i]);
    }
    free(rules);
    free(keys);
}

/* A constraint on 'f' near 'base', so that the rules of a set agree on
 * most groups: with 'low_wild', a prefix that leaves the low 16 bits (of
 * fields of 24 bits or more) wildcarded and varies bits 16..18; else a
 * value in the low byte of 'base', as a short range, an exact value or a
 * long prefix. */
static void
shared_constraint(struct unit_rng *rng, struct fdp_match *m, enum fdp_field f,
                  fdp_u128 base, bool low_wild)
{
    unsigned int n = fdp__field(f)->n_bits;

    base &= fdp__ones(n);
    if (low_wild && n >= 24) {
        fdp_u128 mask = fdp__ones(n) & ~fdp__ones(16);
        fdp_u128 v = (base ^ ((fdp_u128) unit_rng_below(rng, 8) << 16))
                     & mask;
        ck_assert_int_eq(fdp__match_set_masked(m, f, v, mask), 0);
        return;
    }
    fdp_u128 lo = (base & ~fdp__ones(8)) | unit_rng_below(rng, 200);
    switch (unit_rng_below(rng, 3)) {
    case 0: {
        fdp_u128 hi = lo + unit_rng_below(rng, 4);
        ck_assert_int_eq(fdp__match_set_range(m, f, lo, hi), 0);
        break;
    }
    case 1: {
        fdp_u128 mask = fdp__ones(n) & ~fdp__ones(unit_rng_below(rng, 6));
        ck_assert_int_eq(fdp__match_set_masked(m, f, lo & mask, mask), 0);
        break;
    }
    default:
        ck_assert_int_eq(fdp__match_set_masked(m, f, lo, fdp__ones(n)), 0);
        break;
    }
}

/* Regression for uniform groups: rule sets whose rules agree on the high
 * groups of a field (a shared IPv6 /96, a MAC vendor prefix) or leave the
 * same low groups wildcarded (ClassBench's /16s), so that the builder
 * checks those groups once instead of intersecting them.  Every
 * implementation, group width and the writer's sub-table against the
 * reference, on probes inside rules, at range edges, and with a bit of a
 * uniform group flipped (which must miss those rules). */
START_TEST(uniform_groups)
{
    for (size_t ti = 0; ti < FDP_ARRAY_SIZE(set_types); ti++) {
        const struct set_type *t = &set_types[ti];
        for (int low_wild = 0; low_wild < 2; low_wild++) {
            struct unit_rng rng;
            enum { N = 300 };
            struct fdp_rule *rules[N];
            fdp_u128 base[5];
            size_t max_keys = 6000;
            struct fdp_key *keys = malloc(max_keys * sizeof *keys);

            unit_rng_init(&rng, 90 + ti * 2 + low_wild);
            for (unsigned int j = 0; j < t->n; j++) {
                base[j] = rand_bits(&rng, 128);
            }
            struct fdp__field_map set = FDP__FIELD_MAP_EMPTY;
            for (unsigned int j = 0; j < t->n; j++) {
                fdp__field_map_add(&set, t->fields[j]);
            }
            struct pipapo *p = fdp__pipapo_create(&set);
            for (uint32_t i = 0; i < N; i++) {
                rules[i] = new_rule((uint16_t) unit_rng_below(&rng, 4), i);
                for (unsigned int j = 0; j < t->n; j++) {
                    shared_constraint(&rng, test_match(rules[i]), t->fields[j],
                                      base[j], low_wild);
                }
                ck_assert_int_eq(add(p, rules[i]), 0);
            }
            qsort(rules, N, sizeof *rules, compare_rules);
            size_t n_keys = make_probes(&rng, t, rules, N, keys,
                                        max_keys - N);
            /* Inside keys with one bit of a high (uniform) group
             * flipped. */
            for (size_t k = 0, n_inside = n_keys; k < n_inside
                 && n_keys < max_keys; k += 7) {
                keys[n_keys] = keys[k];
                enum fdp_field f = t->fields[k % t->n];
                unsigned int bits = fdp__field(f)->n_bits;
                fdp_u128 v = fdp__key_get(&keys[n_keys], f);
                fdp__key_set(&keys[n_keys], f,
                             v ^ ((fdp_u128) 1 << (bits - 1
                                                   - unit_rng_below(&rng, 4))));
                n_keys++;
            }
            check_snapshots(t, rules, N, keys, n_keys,
                            low_wild ? "low groups wildcarded"
                                     : "high groups shared");
            ck_assert_int_eq(fdp__pipapo_publish(p), 0);
            check_keys_in_order(p->snap, rules, N, keys, n_keys, t->name);
            fdp__pipapo_destroy_now(p);
            for (uint32_t i = 0; i < N; i++) {
                free_rule(rules[i]);
            }
            free(keys);
        }
    }
}
END_TEST

/* Regression for the candidate list's overflow: nw_dst leaves a handful
 * of rules, whose tp_src ranges give a handful of candidates, whose
 * tp_dst ranges (about 28 prefixes each) outgrow PIPAPO_MAX_CANDIDATES
 * when mapped, so the lookup must go on with bitmaps from tp_src with the
 * candidates it had, and still find the first matching rule: against the
 * reference with every implementation, on probes inside every rule. */
START_TEST(candidate_overflow_continues)
{
    enum fdp_field fields[3] = { FDP_F_NW_DST, FDP_F_TP_SRC, FDP_F_TP_DST };
    enum { N = 60 };
    struct fdp_rule *rules[N];
    struct fdp_key keys[4 * N];
    size_t n_keys = 0;
    struct unit_rng rng;

    unit_rng_init(&rng, 95);
    for (uint32_t i = 0; i < N; i++) {
        rules[i] = new_rule((uint16_t) (N - i), i);
        uint32_t dst = 0x0a000000 + unit_rng_below(&rng, 4);
        uint32_t sp = 1000 + unit_rng_below(&rng, 6);
        uint32_t dp = 3 + unit_rng_below(&rng, 50);
        fdp__match_set_masked(test_match(rules[i]), FDP_F_NW_DST, dst,
                              0xffffffff);
        fdp__match_set_range(test_match(rules[i]), FDP_F_TP_SRC, sp, sp + 1);
        /* [dp, 60000 - dp]: about 28 prefixes. */
        fdp__match_set_range(test_match(rules[i]), FDP_F_TP_DST, dp,
                             60000 - dp);
        for (int k = 0; k < 4; k++) {
            struct fdp_key *key = &keys[n_keys++];
            memset(key, 0, sizeof *key);
            fdp__key_set(key, FDP_F_NW_DST, dst);
            fdp__key_set(key, FDP_F_TP_SRC, sp + (k & 1));
            fdp__key_set(key, FDP_F_TP_DST, k < 2 ? dp : 60000 - dp - k);
        }
    }
    for (int widths = 0; widths < 2; widths++) {
        struct pipapo_snapshot *snap = build(fields, 3, rules, N,
                                                         widths);
        ck_assert_ptr_nonnull(snap);
        check_keys_in_order(snap, rules, N, keys, n_keys,
                            "candidate overflow");
        fdp__pipapo_snapshot_free(snap);
    }
    for (uint32_t i = 0; i < N; i++) {
        free_rule(rules[i]);
    }
}
END_TEST

START_TEST(selftest_set_types)
{
    const struct set_type *t = &set_types[_i];

    run_set_type(t, 300, false, 40 + (uint64_t) _i);
}
END_TEST

/* The kernel's correctness_large: every set type with enough two-value
 * entries that publishing switches fields to 4-bit groups, through the
 * writer's real path (add, publish, remove every third entry, publish),
 * probed at the first, last, one-before and one-past values of every
 * range, generic and AVX2 against the linear reference.  The kernel needs
 * 16385 entries to pass its threshold; here the test hook lowers
 * fdp__pipapo_lt_wide_max to 128 KiB instead, so that 1500 entries push
 * the address and port fields to 4-bit groups while nw_proto's single
 * row stays 8-bit: the same code paths at a fraction of the run time
 * under ASan.  The sub-table orders its fields by field id, not as the
 * set type names them; check_snapshots() covers the named order. */
START_TEST(selftest_large)
{
    enum { N = 1500 };
    const struct set_type *t = &set_types[_i];
    struct unit_rng rng;
    struct fdp_rule **rules = malloc(N * sizeof *rules);
    size_t max_keys = 3000;
    struct fdp_key *keys = malloc(max_keys * sizeof *keys);
    struct fdp__field_map field_set = FDP__FIELD_MAP_EMPTY;

    unit_rng_init(&rng, 60 + (uint64_t) _i);
    fdp__pipapo_lt_wide_max = 128 << 10;
    for (unsigned int j = 0; j < t->n; j++) {
        fdp__field_map_add(&field_set, t->fields[j]);
    }
    struct pipapo *p = fdp__pipapo_create(&field_set);
    for (uint32_t i = 0; i < N; i++) {
        rules[i] = new_rule((uint16_t) unit_rng_below(&rng, 4), i);
        for (unsigned int j = 0; j < t->n; j++) {
            random_constraint(&rng, test_match(rules[i]), t->fields[j], true);
        }
        ck_assert_int_eq(add(p, rules[i]), 0);
    }
    qsort(rules, N, sizeof *rules, compare_rules);
    size_t n_keys = make_probes(&rng, t, rules, N, keys, max_keys);
    ck_assert_int_eq(fdp__pipapo_publish(p), 0);

    /* Every field wider than 8 bits went to 4-bit groups. */
    for (unsigned int f = 0; f < p->snap->n_fields; f++) {
        const struct pipapo_field *pf = &p->snap->fields[f];
        ck_assert_uint_eq(pf->group_bits,
                          fdp__field(pf->id)->n_bits > 8 ? 4 : 8);
    }
    check_keys_in_order(p->snap, rules, N, keys, n_keys, t->name);

    /* Delete every third entry, publish, check again. */
    struct fdp_rule **kept = malloc(N * sizeof *kept);
    uint32_t m = 0;
    for (uint32_t i = 0; i < N; i++) {
        if (i % 3 == 2) {
            fdp__pipapo_remove(p, rules[i]);
        } else {
            kept[m++] = rules[i];
        }
    }
    ck_assert_int_eq(fdp__pipapo_publish(p), 0);
    ck_assert_uint_eq(p->up.n_rules, m);
    check_keys_in_order(p->snap, kept, m, keys, n_keys, t->name);

    fdp__pipapo_destroy_now(p);
    fdp__pipapo_lt_wide_max = PIPAPO_LT_WIDE_MAX;
    free_rules(rules, N);
    free(kept);
    free(keys);
}
END_TEST

/* The field 'id' of 'snap' (which orders its fields by selectivity), or
 * a failed check. */
static const struct pipapo_field *
snap_field(const struct pipapo_snapshot *snap, enum fdp_field id)
{
    for (unsigned int f = 0; f < snap->n_fields; f++) {
        if (snap->fields[f].id == id) {
            return &snap->fields[f];
        }
    }
    ck_abort_msg("field %d is not intersected", (int) id);
    return NULL;
}

/* The writer's sub-table picks each field's group width from that
 * field's own table: the IPv6 field, whose 8-bit table passes the
 * threshold, goes to 4-bit groups while the port field keeps 8-bit ones;
 * below half the threshold the IPv6 field goes back to 8 bits. */
START_TEST(group_width_switches)
{
    struct unit_rng rng;
    struct fdp__field_map fields = FDP__FIELD_MAP_EMPTY;
    fdp__field_map_add(&fields, FDP_F_IPV6_DST);
    fdp__field_map_add(&fields, FDP_F_TP_DST);
    struct pipapo *p = fdp__pipapo_create(&fields);
    enum { N = 3000 };
    struct fdp_rule *rules[N];

    unit_rng_init(&rng, 62);
    for (uint32_t i = 0; i < N; i++) {
        rules[i] = new_rule(1, i);
        random_constraint(&rng, test_match(rules[i]), FDP_F_IPV6_DST, true);
        random_constraint(&rng, test_match(rules[i]), FDP_F_TP_DST, true);
        ck_assert_int_eq(add(p, rules[i]), 0);
    }
    ck_assert_int_eq(fdp__pipapo_publish(p), 0);
    ck_assert_uint_eq(snap_field(p->snap, FDP_F_IPV6_DST)->group_bits, 4);
    ck_assert_uint_eq(snap_field(p->snap, FDP_F_TP_DST)->group_bits, 8);
    ck_assert_uint_eq(p->group_bits[FDP_F_IPV6_DST], 4);

    /* A little smaller, still above half the threshold: no flip back. */
    for (uint32_t i = 0; i < 300; i++) {
        fdp__pipapo_remove(p, rules[i]);
    }
    ck_assert_int_eq(fdp__pipapo_publish(p), 0);
    ck_assert_uint_eq(snap_field(p->snap, FDP_F_IPV6_DST)->group_bits, 4);

    for (uint32_t i = 300; i < N - 100; i++) {
        fdp__pipapo_remove(p, rules[i]);
    }
    ck_assert_int_eq(fdp__pipapo_publish(p), 0);
    ck_assert_uint_eq(snap_field(p->snap, FDP_F_IPV6_DST)->group_bits, 8);
    ck_assert_uint_eq(snap_field(p->snap, FDP_F_TP_DST)->group_bits, 8);
    fdp__pipapo_destroy_now(p);
    for (uint32_t i = 0; i < N; i++) {
        free_rule(rules[i]);
    }
}
END_TEST

/* Every implementation's step for every shape (4- and 8-bit groups, 1 to
 * 32 groups), with and without row summaries, agrees with a brute-force
 * AND of whole rows on random lookup tables, values and carried results:
 * the same surviving chunks, the same bits in them. */
START_TEST(shapes_match_reference)
{
    struct unit_rng rng;

    unit_rng_init(&rng, 64);
    for (unsigned int gb = 4; gb <= 8; gb += 4) {
        for (unsigned int n = 1; n * gb <= 128; n++) {
            for (uint32_t bsize = 4; bsize <= 44; bsize += bsize < 12 ? 4 : 32) {
                struct pipapo_field pf = {
                    .id = FDP_F_IPV6_DST, .n_bits = (uint8_t) (n * gb),
                    .group_bits = (uint8_t) gb, .n_groups = (uint8_t) n,
                    .bsize = bsize, .n_chunks = bsize / 4, .sum_words = 1,
                };
                size_t n_rows = (size_t) n << gb;
                size_t words = n_rows * bsize;
                uint64_t *lt = aligned_alloc(32, words * 8);
                uint64_t *want = aligned_alloc(32, bsize * 8);
                uint64_t *got = aligned_alloc(32, bsize * 8);
                uint64_t *carried = aligned_alloc(32, bsize * 8);

                /* Mostly ones, so that ANDs of 32 rows still leave bits;
                 * some chunks all zero, so that summaries skip them. */
                for (size_t w = 0; w < words; w++) {
                    lt[w] = unit_rng_next(&rng) | unit_rng_next(&rng)
                            | unit_rng_next(&rng) | unit_rng_next(&rng)
                            | unit_rng_next(&rng);
                    if ((w / 4) % 7 == 3) {
                        lt[w] = 0;
                    }
                }
                pf.lt = lt;
                /* The big shape gets row summaries, as the builder gives
                 * a field of that many chunks. */
                pf.sum = pf.n_chunks >= 8 ? calloc(n_rows, 8) : NULL;
                for (size_t r = 0; pf.sum && r < n_rows; r++) {
                    for (uint32_t c = 0; c < pf.n_chunks; c++) {
                        const uint64_t *q = lt + r * bsize + c * 4;
                        if (q[0] | q[1] | q[2] | q[3]) {
                            pf.sum[r] |= UINT64_C(1) << c;
                        }
                    }
                }
                for (int k = 0; k < 16; k++) {
                    fdp_u128 v = rand_bits(&rng, n * gb);
                    bool with_res = k % 2;
                    uint64_t carried_sum = unit_rng_next(&rng)
                                           & pipapo_chunks_in_word(
                                               pf.n_chunks, 0);
                    for (uint32_t w = 0; w < bsize; w++) {
                        carried[w] = k % 4 == 3 ? 0 : unit_rng_next(&rng);
                    }

                    /* The reference: whole rows. */
                    const uint64_t *rows[32];
                    for (unsigned int g = 0; g < n; g++) {
                        unsigned int shift = (n - g - 1) * gb;
                        size_t b = (size_t) (v >> shift) & ((1u << gb) - 1);
                        rows[g] = lt + ((size_t) g << gb | b) * bsize;
                    }
                    uint64_t want_sum = 0;
                    for (uint32_t w = 0; w < bsize; w++) {
                        uint64_t x = UINT64_MAX;
                        if (with_res) {
                            x = (carried_sum >> (w / 4)) & 1 ? carried[w] : 0;
                        }
                        for (unsigned int g = 0; g < n; g++) {
                            x &= rows[g][w];
                        }
                        want[w] = x;
                        want_sum |= (uint64_t) (x != 0) << (w / 4);
                    }

                    for (size_t i = 0; i < fdp__pipapo_n_impls; i++) {
                        const struct fdp__pipapo_impl *pi
                            = &fdp__pipapo_impls[i];
                        if (!fdp__cpu_impl_runs(&pi->cpu)) {
                            continue;
                        }
                        memcpy(got, carried, bsize * 8);
                        uint64_t sum = carried_sum;
                        bool got_any = pi->and_rows(got, &sum, &pf, v,
                                                    with_res);
                        bool same = got_any == (want_sum != 0)
                                    && sum == want_sum;
                        for (uint32_t w = 0; same && w < bsize; w++) {
                            same = !((sum >> (w / 4)) & 1)
                                   || got[w] == want[w];
                        }
                        ck_assert_msg(same, "%s: shape %ub_%u, bsize %u, "
                                      "with_res %d differs from the "
                                      "reference", pi->cpu.name, gb, n, bsize,
                                      with_res);
                    }
                }
                free(pf.sum);
                free(lt);
                free(want);
                free(got);
                free(carried);
            }
        }
    }
}
END_TEST

/* Kernel bug: one AVX2 variant ignored an IPv6 byte, so
 * fe80:dead:01ff:: matched an entry for fe80:dead:01fe::. */
START_TEST(avx2_mismatch)
{
    enum fdp_field fields[2] = { FDP_F_IPV6_DST, FDP_F_TP_DST };
    struct fdp_rule *r = new_rule(1, 0);
    fdp_u128 entry = (fdp_u128) 0xfe80dead01fe0000ull << 64;
    fdp_u128 probe = (fdp_u128) 0xfe80dead01ff0000ull << 64;

    fdp__match_set_masked(test_match(r), FDP_F_IPV6_DST, entry, ~(fdp_u128) 0);
    fdp__match_set_range(test_match(r), FDP_F_TP_DST, 20, 30);
    for (int wide = 0; wide < 2; wide++) {
        struct pipapo_snapshot *snap = build(fields, 2, &r, 1,
                                                         wide);
        for (size_t i = 0; i < fdp__pipapo_n_impls; i++) {
            const struct fdp__pipapo_impl *pi = &fdp__pipapo_impls[i];
            if (!fdp__cpu_impl_runs(&pi->cpu)) {
                continue;
            }
            struct fdp_key key;
            memset(&key, 0, sizeof key);
            fdp__key_set(&key, FDP_F_TP_DST, 25);
            /* Every single-byte difference of the address misses. */
            for (int byte = 0; byte < 16; byte++) {
                fdp__key_set(&key, FDP_F_IPV6_DST,
                             entry ^ ((fdp_u128) 1 << (8 * byte)));
                ck_assert_ptr_null(fdp__pipapo_lookup_with(snap, &key, 0,
                                                           pi->and_rows));
            }
            fdp__key_set(&key, FDP_F_IPV6_DST, probe);
            ck_assert_ptr_null(fdp__pipapo_lookup_with(snap, &key, 0,
                                                       pi->and_rows));
            fdp__key_set(&key, FDP_F_IPV6_DST, entry);
            ck_assert(fdp__pipapo_lookup_with(snap, &key, 0, pi->and_rows)
                      == r);
        }
        fdp__pipapo_snapshot_free(snap);
    }
    free_rule(r);
}
END_TEST

/* Kernel bug: the first field's result was initialised for the wrong
 * length when field 0 is narrower (fewer field rules, a shorter bitmap)
 * than a later field.  Here nw_proto has one field rule per rule while
 * the IPv6 ranges expand to many; half the probes fall inside rules. */
START_TEST(narrow_first_field)
{
    enum { N = 200 };
    enum fdp_field fields[2] = { FDP_F_NW_PROTO, FDP_F_IPV6_DST };
    struct fdp_rule *rules[N];
    struct fdp_key keys[1000];
    struct unit_rng rng;

    unit_rng_init(&rng, 63);
    for (int i = 0; i < N; i++) {
        rules[i] = new_rule(1, (uint64_t) i);
        fdp__match_set_masked(test_match(rules[i]), FDP_F_NW_PROTO,
                              i % 2 ? 6 : 17, 0xff);
        fdp_u128 lo = (fdp_u128) (i * 1000 + 3) << 64;
        fdp__match_set_range(test_match(rules[i]), FDP_F_IPV6_DST, lo,
                             lo + ((fdp_u128) 1 << 70) + 12345);
    }
    for (size_t k = 0; k < FDP_ARRAY_SIZE(keys); k++) {
        const struct fdp_match *m = test_match(rules[unit_rng_below(&rng, N)]);
        fdp_u128 lo = fdp__key_get(&m->value, FDP_F_IPV6_DST);
        memset(&keys[k], 0, sizeof keys[k]);
        fdp__key_set(&keys[k], FDP_F_NW_PROTO,
                     fdp__key_get(&m->value, FDP_F_NW_PROTO));
        fdp__key_set(&keys[k], FDP_F_IPV6_DST,
                     k % 2 ? lo + rand_bits(&rng, 70)
                           : rand_bits(&rng, 128));
    }
    for (int widths = 0; widths < 3; widths++) {
        uint8_t gb[2] = { widths ? 8 : 4, widths == 1 ? 8 : 4 };
        struct pipapo_snapshot *snap = build_widths(fields, 2,
                                                                rules, N, gb);
        ck_assert(snap->fields[0].bsize < snap->fields[1].bsize);
        check_keys_in_order(snap, rules, N, keys, FDP_ARRAY_SIZE(keys),
                            "narrow first field");
        fdp__pipapo_snapshot_free(snap);
    }
    for (int i = 0; i < N; i++) {
        free_rule(rules[i]);
    }
}
END_TEST

/* Kernel bug: a lookup that returned early on a match in the last field
 * left bits in the scratch map that the next lookup took for its own.
 * The probes alternate hit, miss in the last field only, hit, miss in the
 * first field, so leftovers of a hit would turn the following miss into
 * a hit.  Many rules share field 0 (the candidate list overflows, so the
 * bitmap path runs) and also few (the candidate path runs). */
START_TEST(stale_bits_last_field)
{
    enum { N = 300 };
    enum fdp_field fields[3] = { FDP_F_NW_PROTO, FDP_F_NW_DST,
                                 FDP_F_TP_DST };
    struct fdp_rule *rules[N];
    struct fdp_key keys[1200];
    struct unit_rng rng;

    unit_rng_init(&rng, 65);
    for (int i = 0; i < N; i++) {
        /* Rules 0-9 have proto 17 to themselves: short candidate lists. */
        rules[i] = new_rule((uint16_t) (i % 3), (uint64_t) i);
        fdp__match_set_masked(test_match(rules[i]), FDP_F_NW_PROTO,
                              i < 10 ? 17 : 6, 0xff);
        fdp__match_set_range(test_match(rules[i]), FDP_F_NW_DST,
                             0x0a000000 + i * 16, 0x0a000000 + i * 16 + 300);
        fdp__match_set_range(test_match(rules[i]), FDP_F_TP_DST,
                             1000 + i * 100, 1000 + i * 100 + 37);
    }
    qsort(rules, N, sizeof *rules, compare_rules);
    for (size_t k = 0; k < FDP_ARRAY_SIZE(keys); k++) {
        const struct fdp_match *m = test_match(rules[unit_rng_below(&rng, N)]);
        fdp_u128 dst = fdp__key_get(&m->value, FDP_F_NW_DST)
                       + unit_rng_below(&rng, 301);
        fdp_u128 port = fdp__key_get(&m->value, FDP_F_TP_DST)
                        + unit_rng_below(&rng, 38);
        fdp_u128 proto = fdp__key_get(&m->value, FDP_F_NW_PROTO);
        if (k % 4 == 1) {
            port = 1000 + unit_rng_below(&rng, N) * 100 + 50;  /* Gap. */
        } else if (k % 4 == 3) {
            proto = 1;
        }
        memset(&keys[k], 0, sizeof keys[k]);
        fdp__key_set(&keys[k], FDP_F_NW_PROTO, proto);
        fdp__key_set(&keys[k], FDP_F_NW_DST, dst);
        fdp__key_set(&keys[k], FDP_F_TP_DST, port);
        bool hit = reference(rules, N, &keys[k]) != NULL;
        ck_assert(hit == (k % 2 == 0));
    }
    for (int wide = 0; wide < 2; wide++) {
        struct pipapo_snapshot *snap = build(fields, 3, rules, N,
                                                         wide);
        check_keys_in_order(snap, rules, N, keys, FDP_ARRAY_SIZE(keys),
                            "stale bits");
        fdp__pipapo_snapshot_free(snap);
    }
    for (int i = 0; i < N; i++) {
        free_rule(rules[i]);
    }
}
END_TEST

/* Kernel bug: deletion read past the end of the mapping and lookup
 * tables.  Rules leave through the writer's real path (remove, then
 * publish a rebuilt snapshot) from the front, the middle and the end,
 * with both group widths, and every implementation looks up every rule's
 * key after each step, so that ASan sees any access out of bounds. */
START_TEST(deletion_out_of_bounds)
{
    enum { N = 70 };
    struct fdp__field_map field_set = FDP__FIELD_MAP_EMPTY;
    fdp__field_map_add(&field_set, FDP_F_IPV6_SRC);
    fdp__field_map_add(&field_set, FDP_F_TP_SRC);
    fdp__field_map_add(&field_set, FDP_F_DL_DST);
    struct fdp_key keys[N];

    for (int narrow = 0; narrow < 2; narrow++) {
        struct pipapo *p = fdp__pipapo_create(&field_set);
        struct fdp_rule *rules[N], *live[N];
        uint32_t n_live = N;

        fdp__pipapo_lt_wide_max = narrow ? 0 : PIPAPO_LT_WIDE_MAX;
        for (int i = 0; i < N; i++) {
            rules[i] = new_rule((uint16_t) (N - i), (uint64_t) i);
            fdp__match_set_masked(test_match(rules[i]), FDP_F_IPV6_SRC,
                                  (fdp_u128) 0x20010db8 << 96
                                  | (unsigned) i % 8, ~(fdp_u128) 0);
            fdp__match_set_range(test_match(rules[i]), FDP_F_TP_SRC,
                                 1000 + i, 2000 + 3 * i);
            fdp__match_set_masked(test_match(rules[i]), FDP_F_DL_DST,
                                  (unsigned) i / 8, fdp__ones(48));
            ck_assert_int_eq(add(p, rules[i]), 0);
            live[i] = rules[i];
            memset(&keys[i], 0, sizeof keys[i]);
            fdp__key_set(&keys[i], FDP_F_IPV6_SRC,
                         (fdp_u128) 0x20010db8 << 96 | (unsigned) i % 8);
            fdp__key_set(&keys[i], FDP_F_TP_SRC, 1500 + i);
            fdp__key_set(&keys[i], FDP_F_DL_DST, (unsigned) i / 8);
        }
        ck_assert_int_eq(fdp__pipapo_publish(p), 0);
        ck_assert_uint_eq(p->snap->fields[0].group_bits, narrow ? 4 : 8);
        check_keys_in_order(p->snap, live, n_live, keys, N, "all rules");
        while (n_live) {
            /* First, middle, last, in turn. */
            uint32_t step = N - n_live;
            uint32_t at = step % 3 == 0 ? 0
                          : step % 3 == 1 ? n_live / 2 : n_live - 1;
            fdp__pipapo_remove(p, live[at]);
            memmove(&live[at], &live[at + 1],
                    (n_live - at - 1) * sizeof *live);
            n_live--;
            ck_assert_int_eq(fdp__pipapo_publish(p), 0);
            ck_assert_uint_eq(p->up.n_rules, n_live);
            check_keys_in_order(p->snap, live, n_live, keys, N,
                                "after a deletion");
        }
        fdp__pipapo_destroy_now(p);
        for (int i = 0; i < N; i++) {
            free_rule(rules[i]);
        }
    }
    fdp__pipapo_lt_wide_max = PIPAPO_LT_WIDE_MAX;
}
END_TEST

/* Checks 'p''s published snapshot: what it says it holds (the built
 * part without tombstones, and the delta) are exactly the 'n_live' rules,
 * and every implementation agrees with the reference on 'keys'. */
static void
check_incremental(struct pipapo *p, struct fdp_rule **live, uint32_t n_live,
                  const struct fdp_key *keys, size_t n_keys,
                  const char *what)
{
    const struct pipapo_snapshot *snap = p->snap;
    uint32_t seen = 0;

    ck_assert_ptr_nonnull(snap);
    for (uint32_t i = 0; i < snap->n_elems; i++) {
        seen += snap->elems[i] != &fdp__pipapo_tombstone;
    }
    seen += snap->delta ? snap->delta->n_elems : 0;
    ck_assert_msg(seen == n_live, "%s: snapshot holds %u rules, want %u "
                  "(seed %llu)", what, seen, n_live,
                  (unsigned long long) unit_seed());
    ck_assert_uint_eq(p->up.n_rules, n_live);
    check_keys_in_order(snap, live, n_live, keys, n_keys, what);
}

/* Incremental updates: random adds and removes, one publish after each
 * change or after a few, with the bounds lowered so that the delta, the
 * tombstones, rebuilds on overflow and folds from compact() all happen
 * many times.  After every publish, every implementation against the
 * reference on probes inside the rules ever added (so removed rules are
 * probed too) and at their range edges. */
START_TEST(incremental_updates)
{
    static const unsigned int types[] = { 0, 3, 5, 10 };
    const struct set_type *t = &set_types[types[_i]];
    enum { N_START = 120, N_OPS = 500, N_MAX = N_START + N_OPS };
    struct fdp_rule **all = malloc(N_MAX * sizeof *all);
    struct fdp_rule **live = malloc(N_MAX * sizeof *live);
    size_t max_keys = 6000;
    struct fdp_key *keys = malloc(max_keys * sizeof *keys);
    struct fdp__field_map field_set = FDP__FIELD_MAP_EMPTY;
    uint32_t n_all = 0, n_live = 0;
    struct unit_rng rng;
    char what[160];

    unit_rng_init(&rng, 80 + _i);
    for (unsigned int j = 0; j < t->n; j++) {
        fdp__field_map_add(&field_set, t->fields[j]);
    }
    for (uint32_t i = 0; i < N_MAX; i++) {
        /* Few priorities, so that equal-priority rules overlap and
         * insertion order decides. */
        all[i] = new_rule((uint16_t) unit_rng_below(&rng, 6), i);
        for (unsigned int j = 0; j < t->n; j++) {
            random_constraint(&rng, test_match(all[i]), t->fields[j], false);
        }
    }
    size_t n_keys = make_probes(&rng, t, all, N_MAX, keys, max_keys);

    fdp__pipapo_incr_min = 8;
    struct pipapo *p = fdp__pipapo_create(&field_set);
    for (; n_all < N_START; n_all++) {
        ck_assert_int_eq(fdp__pipapo_add(p, seal(all[n_all])), 0);
        live[n_live++] = all[n_all];
    }
    ck_assert_int_eq(fdp__pipapo_publish(p), 0);
    qsort(live, n_live, sizeof *live, compare_rules);
    check_incremental(p, live, n_live, keys, n_keys, "bulk");

    uint32_t n_incremental = 0, n_whole = 0;
    for (uint32_t op = 0; op < N_OPS; op++) {
        /* A new bound now and then: from 1 (nearly every change
         * rebuilds) to the real one. */
        if (op % 50 == 0) {
            static const uint32_t caps[] = { 1, 3, 10, 40, UINT32_MAX };
            fdp__pipapo_incr_max = caps[unit_rng_below(&rng, 5)];
        }
        unsigned int n_changes = 1 + unit_rng_below(&rng, 3);
        for (unsigned int c = 0; c < n_changes; c++) {
            if (n_live && (n_all == N_MAX || unit_rng_below(&rng, 2))) {
                uint32_t at = unit_rng_below(&rng, n_live);
                fdp__pipapo_remove(p, live[at]);
                memmove(&live[at], &live[at + 1],
                        (n_live - at - 1) * sizeof *live);
                n_live--;
            } else if (n_all < N_MAX) {
                ck_assert_int_eq(fdp__pipapo_add(p, seal(all[n_all])), 0);
                live[n_live++] = all[n_all++];
                qsort(live, n_live, sizeof *live, compare_rules);
            }
        }
        if (unit_rng_below(&rng, 20) == 0) {
            p->up.class->compact(&p->up);
        }
        ck_assert_int_eq(fdp__pipapo_publish(p), 0);
        /* A whole build leaves no delta and no tombstones. */
        if (p->n_delta || p->n_tombs) {
            n_incremental++;
        } else {
            n_whole++;
        }
        snprintf(what, sizeof what, "%s, op %u (%u live, delta %u, "
                 "tombstones %u)", t->name, op, n_live, p->n_delta,
                 p->n_tombs);
        check_incremental(p, live, n_live, keys, n_keys, what);
    }
    /* Both paths ran, many times. */
    ck_assert_uint_gt(n_incremental, 50);
    ck_assert_uint_gt(n_whole, 20);

    fdp__pipapo_incr_min = PIPAPO_INCR_MIN;
    fdp__pipapo_incr_max = UINT32_MAX;
    fdp__pipapo_destroy_now(p);
    fdp__rcu_barrier();
    free_rules(all, N_MAX);
    free(live);
    free(keys);
}
END_TEST

/* Rules that tie on (priority, seq), as the old and new versions of a
 * modified flow do until the commit unlinks the old one: each is found
 * and removed by identity, in any order, on the incremental path and on
 * the whole rebuild. */
START_TEST(tied_rules_removed_by_identity)
{
    static const int orders[][3] = { { 0, 1, 2 }, { 2, 1, 0 }, { 1, 2, 0 } };
    struct fdp__field_map field_set = FDP__FIELD_MAP_EMPTY;
    fdp__field_map_add(&field_set, FDP_F_NW_DST);
    fdp__field_map_add(&field_set, FDP_F_TP_DST);

    for (int o = 0; o < 3; o++) {
        for (int incr = 0; incr < 2; incr++) {
            enum { N_BODY = 40, N = N_BODY + 3 };
            struct fdp_rule *rules[N];
            struct fdp_key keys[N];
            struct pipapo *p = fdp__pipapo_create(&field_set);

            fdp__pipapo_incr_min = incr ? 8 : UINT32_MAX;
            for (uint32_t i = 0; i < N; i++) {
                bool tied = i >= N_BODY;
                rules[i] = new_rule(tied ? 5 : (uint16_t) (10 + i % 3),
                                    tied ? 7 : 100 + i);
                struct fdp_match *m = test_match(rules[i]);
                ck_assert_int_eq(fdp__match_set_range(m, FDP_F_NW_DST,
                                                      0x0a000000 + i * 16,
                                                      0x0a000000 + i * 16
                                                      + 9), 0);
                ck_assert_int_eq(fdp__match_set_range(m, FDP_F_TP_DST,
                                                      1000, 2000 + i), 0);
                memset(&keys[i], 0, sizeof keys[i]);
                fdp__key_set(&keys[i], FDP_F_NW_DST, 0x0a000000 + i * 16 + 3);
                fdp__key_set(&keys[i], FDP_F_TP_DST, 1500);
                ck_assert_int_eq(add(p, rules[i]), 0);
            }
            ck_assert_int_eq(fdp__pipapo_publish(p), 0);
            for (int k = 0; k < 3; k++) {
                struct fdp_rule *gone = rules[N_BODY + orders[o][k]];
                fdp__pipapo_remove(p, gone);
                ck_assert_int_eq(fdp__pipapo_publish(p), 0);
                ck_assert_uint_eq(p->up.n_rules, N - 1 - (uint32_t) k);
                for (uint32_t i = 0; i < N; i++) {
                    bool removed = false;
                    for (int j = 0; j <= k; j++) {
                        removed |= rules[i] == rules[N_BODY + orders[o][j]];
                    }
                    const struct fdp_rule *got
                        = fdp__pipapo_lookup(p->snap, &keys[i], 0);
                    ck_assert_msg(got == (removed ? NULL : rules[i]),
                                  "order %d, %s, removal %d: key %u found "
                                  "%p", o, incr ? "incremental" : "whole",
                                  k, i, (const void *) got);
                }
            }
            fdp__pipapo_destroy_now(p);
            fdp__rcu_barrier();
            for (uint32_t i = 0; i < N; i++) {
                free_rule(rules[i]);
            }
        }
    }
    fdp__pipapo_incr_min = PIPAPO_INCR_MIN;
}
END_TEST

/* A table of the flows matching 'matches', priority 5, cookies 1, 2...,
 * inserted with NO_REPLACE: each insert must succeed. */
static struct fdp_table *
table_of(struct fdp_match *matches, size_t n)
{
    struct fdp_table *table;
    struct fdp__actions_builder b;

    ck_assert_int_eq(fdp_table_create(&table), 0);
    fdp__actions_builder_init(&b);
    fdp__actions_add(&b, FDP_ACT_OUTPUT, 1);
    struct fdp_actions *acts = fdp__actions_finish(&b);
    for (size_t i = 0; i < n; i++) {
        struct fdp_flow_spec spec = { .match = &matches[i], .actions = acts,
                                      .cookie = i + 1, .priority = 5 };
        ck_assert_int_eq(fdp_table_insert(table, &spec,
                                          FDP_TABLE_NO_REPLACE), 0);
    }
    fdp_actions_destroy(acts);
    return table;
}

/* Kernel bug: the overlap check on insertion compared only part of the
 * key, so an entry differing from another only at the end of the last
 * field was refused as a duplicate.  Two range rules that differ only in
 * the last byte of the last field are distinct: both insert (in the
 * sub-table and in the table, with NO_REPLACE), and each probe finds its
 * own. */
START_TEST(overlap_full_key)
{
    enum fdp_field fields[3] = { FDP_F_NW_DST, FDP_F_TP_DST, FDP_F_DL_DST };
    struct fdp_match m[2];
    struct fdp_rule *rules[2];

    for (int i = 0; i < 2; i++) {
        fdp__match_init(&m[i]);
        fdp__match_set_masked(&m[i], FDP_F_DL_TYPE, 0x0800, 0xffff);
        fdp__match_set_masked(&m[i], FDP_F_NW_PROTO, 6, 0xff);
        fdp__match_set_range(&m[i], FDP_F_NW_DST, 0x0a000001, 0x0a0000fe);
        fdp__match_set_range(&m[i], FDP_F_TP_DST, 1000, 2000);
        /* 02:00:00:00:00:10-1f and 02:00:00:00:00:20-2f. */
        fdp_u128 lo = ((fdp_u128) 0x02 << 40) | (0x10u * (i + 1));
        fdp__match_set_range(&m[i], FDP_F_DL_DST, lo, lo + 0xf);
        rules[i] = new_rule(5, (uint64_t) i);
        *test_match(rules[i]) = m[i];
    }

    /* The sub-table: both rules, each found by its own probes. */
    struct pipapo_snapshot *snap = build(fields, 3, rules, 2,
                                                     true);
    struct fdp_key keys[6];
    for (int k = 0; k < 6; k++) {
        memset(&keys[k], 0, sizeof keys[k]);
        fdp__key_set(&keys[k], FDP_F_DL_TYPE, 0x0800);
        fdp__key_set(&keys[k], FDP_F_NW_PROTO, 6);
        fdp__key_set(&keys[k], FDP_F_NW_DST, 0x0a000005);
        fdp__key_set(&keys[k], FDP_F_TP_DST, 1500);
        /* Last byte 0x10, 0x1f, 0x20, 0x2f, then 0x0f and 0x30 miss. */
        static const unsigned int last[6] = { 0x10, 0x1f, 0x20, 0x2f,
                                              0x0f, 0x30 };
        fdp__key_set(&keys[k], FDP_F_DL_DST, ((fdp_u128) 0x02 << 40)
                                             | last[k]);
    }
    check_keys_in_order(snap, rules, 2, keys, 6, "overlap");
    ck_assert(fdp__pipapo_lookup(snap, &keys[0], 0) == rules[0]);
    ck_assert(fdp__pipapo_lookup(snap, &keys[3], 0) == rules[1]);
    fdp__pipapo_snapshot_free(snap);

    /* The table: NO_REPLACE accepts both; lookups find each. */
    struct fdp_table *table = table_of(m, 2);
    for (int k = 0; k < 6; k++) {
        fdp_table_read_lock();
        const struct fdp_rule *r = fdp_table_lookup(table, &keys[k]);
        uint64_t cookie = r ? fdp_rule_get_cookie(r) : 0;
        fdp_table_read_unlock();
        ck_assert_uint_eq(cookie, k < 2 ? 1 : k < 4 ? 2 : 0);
    }
    fdp_table_destroy(table);
    free_rule(rules[0]);
    free_rule(rules[1]);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("pipapo");
    TCase *tc = unit_tcase(s, "pipapo");

    tcase_add_loop_test(tc, selftest_set_types, 0,
                        (int) FDP_ARRAY_SIZE(set_types));
    tcase_add_loop_test(tc, selftest_large, 0,
                        (int) FDP_ARRAY_SIZE(set_types));
    tcase_add_test(tc, group_width_switches);
    tcase_add_test(tc, shapes_match_reference);
    tcase_add_test(tc, uniform_groups);
    tcase_add_test(tc, candidate_overflow_continues);
    tcase_add_test(tc, avx2_mismatch);
    tcase_add_test(tc, narrow_first_field);
    tcase_add_test(tc, stale_bits_last_field);
    tcase_add_test(tc, deletion_out_of_bounds);
    tcase_add_loop_test(tc, incremental_updates, 0, 4);
    tcase_add_test(tc, tied_rules_removed_by_identity);
    tcase_add_test(tc, overlap_full_key);
    return unit_run(s);
}
