/*
 * Unit tests for lib/tss.c and lib/tss-sse42.c: one tuple-space subtable
 * against a brute-force list of the same rules, with every hash a
 * subtable can use (jhash2, CRC32C where the CPU has it, keyed), under
 * random inserts, removals and lookups at random versions; the probe bounds
 * under a CRC32C flood; and the layout the lookup relies on.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cpu-internal.h"
#include "lib/tss-private.h"
#include "lib/tss.h"
#include "lib/util.h"
#include "unit.h"

static const struct {
    const char *name;
    enum tss_hash_kind kind;
} kinds[] = {
    { "jhash2", TSS_HASH_JHASH2 },
    { "crc32c", TSS_HASH_CRC32C },
    { "keyed", TSS_HASH_KEYED },
};

/* Mask shapes by the words they touch: every specialised word count, the
 * generic loop above them, and the empty mask (one group for every key). */
static const struct {
    unsigned int n_words;
    uint8_t words[FDP_KEY_WORDS];
} shapes[] = {
    { 0, { 0 } },
    { 1, { 3 } },
    { 2, { 0, 1 } },
    { 3, { 0, 1, 5 } },
    { 4, { 1, 2, 7, 11 } },
    { 5, { 0, 2, 4, 6, 8 } },
    { 12, { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 } },
};

/* A random value in a small domain under the mask, so that rules share
 * masked keys (several priorities in one group) and lookups hit. */
static uint64_t
small_word(struct unit_rng *rng, uint64_t mask)
{
    uint64_t v = (uint64_t) unit_rng_below(rng, 6) * 0x0101010101010101ull;

    return (v ^ ((uint64_t) unit_rng_below(rng, 3) << 40)) & mask;
}

static void
random_mask(struct fdp_key *mask, size_t shape, struct unit_rng *rng)
{
    memset(mask, 0, sizeof *mask);
    for (unsigned int i = 0; i < shapes[shape].n_words; i++) {
        mask->w[shapes[shape].words[i]] = unit_rng_next(rng) | 1;
    }
}

/* The reference: the best rule of 'rules' (those with 'linked' set, whose
 * matches are 'matches') that matches 'key' and is visible at
 * 'version'. */
/* Frees subtable 'st' once no reader can see it, then its 'n' rules
 * (the subtable does not own them). */
static void
destroy_with_rules(struct tss_subtable *st, struct fdp_rule **rules, size_t n)
{
    fdp__rcu_barrier();
    fdp__tss_destroy_now(st);
    for (size_t i = 0; i < n; i++) {
        fdp__rule_free_block(rules[i]);
    }
}

static const struct fdp_rule *
brute_lookup(struct fdp_rule *const *rules, const struct fdp_match *matches,
             const bool *linked, size_t n, const struct fdp_key *key,
             uint64_t version)
{
    const struct fdp_rule *best = NULL;

    for (size_t i = 0; i < n; i++) {
        const struct fdp_rule *r = rules[i];
        const struct fdp_match *m = &matches[i];
        bool match = true;
        for (int w = 0; w < FDP_KEY_WORDS; w++) {
            match &= (key->w[w] & m->mask.w[w]) == m->value.w[w];
        }
        if (!linked[i] || !match || !fdp__rule_visible(r, version)) {
            continue;
        }
        if (!best || r->priority > best->priority
            || (r->priority == best->priority && r->seq < best->seq)) {
            best = r;
        }
    }
    return best;
}

enum { N_RULES = 300, N_OPS = 1200 };

/* Runs one random sequence of operations (from 'salt') on a subtable of
 * 'shape' hashed with 'kind', checking every lookup against the
 * reference, and stores the index of each lookup's result (or -1) in
 * 'trace'.  Returns false if 'kind' cannot run here. */
static bool
differential_run(size_t shape, enum tss_hash_kind kind, uint64_t salt,
                 int *trace)
{
    struct unit_rng rng;
    struct fdp_key mask;

    unit_rng_init(&rng, salt);
    random_mask(&mask, shape, &rng);
    struct tss_subtable *st = fdp__tss_create_with(&mask, 0x1234, kind);
    if (!st) {
        return false;
    }
    struct fdp_rule **rules = calloc(N_RULES, sizeof *rules);
    struct fdp_match *matches = calloc(N_RULES, sizeof *matches);
    bool *linked = calloc(N_RULES, sizeof *linked);
    ck_assert_ptr_nonnull(rules);
    ck_assert_ptr_nonnull(matches);
    ck_assert_ptr_nonnull(linked);
    uint64_t seq = 0;
    size_t n_trace = 0;

    for (int op = 0; op < N_OPS; op++) {
        size_t i = unit_rng_below(&rng, N_RULES);
        unsigned int what = unit_rng_below(&rng, 4);
        if (what == 0 && !linked[i]) {
            /* Insert a fresh rule in slot i ('cookie' says which). */
            struct fdp_match *m = &matches[i];
            fdp__match_init(m);
            m->mask = mask;
            for (int w = 0; w < FDP_KEY_WORDS; w++) {
                m->value.w[w] = small_word(&rng, mask.w[w]);
            }
            fdp__rule_free_block(rules[i]);
            struct fdp_rule *r = rules[i] = fdp__rule_alloc(m);
            ck_assert_ptr_nonnull(r);
            r->cookie = i;
            r->priority = (uint16_t) unit_rng_below(&rng, 4);
            r->seq = seq++;
            r->add_version = unit_rng_below(&rng, 3);
            r->remove_version = unit_rng_below(&rng, 4)
                                ? FDP_VERSION_NEVER : 4;
            ck_assert_int_eq(fdp__tss_insert(st, r), 0);
            linked[i] = true;
        } else if (what == 1 && linked[i]) {
            fdp__tss_unlink(st, rules[i]);
            linked[i] = false;
        } else {
            /* A batch of lookups, each also looked up alone. */
            struct fdp_key keys[FDP_TABLE_BATCH_MAX];
            const struct fdp_key *kp[FDP_TABLE_BATCH_MAX];
            const struct fdp_rule *found[FDP_TABLE_BATCH_MAX];
            uint64_t probe = unit_rng_next(&rng);
            uint64_t version = unit_rng_below(&rng, 6);
            for (int k = 0; k < FDP_TABLE_BATCH_MAX; k++) {
                for (int w = 0; w < FDP_KEY_WORDS; w++) {
                    keys[k].w[w] = small_word(&rng, UINT64_MAX)
                                   | (unit_rng_next(&rng) & ~mask.w[w]);
                }
                kp[k] = &keys[k];
                found[k] = NULL;
            }
            fdp__rcu_read_lock();
            uint64_t hits = fdp__tss_lookup_batch(st, kp, probe, version,
                                                  found);
            for (int k = 0; k < FDP_TABLE_BATCH_MAX; k++) {
                const struct fdp_rule *want
                    = brute_lookup(rules, matches, linked, N_RULES,
                                   &keys[k], version);
                const struct fdp_rule *one = fdp__tss_lookup(st, &keys[k],
                                                             version);
                ck_assert_msg(one == want, "seed %llu salt %llu op %d: "
                              "lookup gave %p, brute force %p",
                              (unsigned long long) unit_seed(),
                              (unsigned long long) salt, op,
                              (const void *) one, (const void *) want);
                if ((probe >> k) & 1) {
                    bool hit = (hits >> k) & 1;
                    ck_assert_msg(hit == (want != NULL)
                                  && (!hit || found[k] == want),
                                  "seed %llu salt %llu op %d: batch key %d",
                                  (unsigned long long) unit_seed(),
                                  (unsigned long long) salt, op, k);
                } else {
                    ck_assert_msg(!((hits >> k) & 1) && !found[k],
                                  "batch answered key %d it was not asked",
                                  k);
                }
                trace[n_trace++] = one ? (int) one->cookie : -1;
            }
            fdp__rcu_read_unlock();

            /* find_exact() agrees with the list, too. */
            if (linked[i]) {
                const struct fdp_rule *r = rules[i];
                struct fdp_rule *e = fdp__tss_find_exact(st, &matches[i],
                                                         r->priority,
                                                         r->add_version);
                ck_assert_ptr_nonnull(e);
                ck_assert_uint_eq(e->priority, r->priority);
            }
        }
        unsigned int same;
        ck_assert_uint_le(fdp__tss_longest_probe(st, &same), TSS_MAX_PROBE);
    }
    while (n_trace < (size_t) N_OPS * FDP_TABLE_BATCH_MAX) {
        trace[n_trace++] = -2;
    }
    destroy_with_rules(st, rules, N_RULES);
    free(rules);
    free(matches);
    free(linked);
    return true;
}

/* Every shape, every hash: the same random sequence gives the brute-force
 * answer, so every hash gives the same answers. */
START_TEST(differential)
{
    size_t shape = (size_t) _i;
    size_t n = (size_t) N_OPS * FDP_TABLE_BATCH_MAX;
    int *first = malloc(n * sizeof *first);
    int *trace = malloc(n * sizeof *trace);
    int n_run = 0;

    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_nonnull(trace);
    for (size_t k = 0; k < FDP_ARRAY_SIZE(kinds); k++) {
        if (!differential_run(shape, kinds[k].kind, 100 + shape,
                              n_run ? trace : first)) {
            printf("differential: %s not available here\n", kinds[k].name);
            continue;
        }
        if (n_run++) {
            ck_assert_msg(!memcmp(first, trace, n * sizeof *trace),
                          "%s answers differently from %s", kinds[k].name,
                          kinds[0].name);
        }
    }
    ck_assert_int_ge(n_run, 2);
    free(first);
    free(trace);
}
END_TEST

/* Crafted CRC32C collisions: with each fast hash, after every insert no
 * probe reads more than TSS_MAX_PROBE lines and no more than
 * TSS_MAX_SAME_HASH groups share a hash; under CRC32C the subtable turns
 * keyed; every flow is still found. */
START_TEST(flood_bound)
{
    enum { N = 2048 };
    struct fdp_match *flows = malloc(N * sizeof *flows);
    struct fdp_rule **rules = calloc(N, sizeof *rules);

    ck_assert_int_eq(fdp__tss_flood_flows(flows, N), 0);
    for (size_t k = 0; k < FDP_ARRAY_SIZE(kinds); k++) {
        struct tss_subtable *st = fdp__tss_create_with(&flows[0].mask, 7,
                                                       kinds[k].kind);
        if (!st) {
            continue;
        }
        for (size_t i = 0; i < N; i++) {
            rules[i] = fdp__rule_alloc(&flows[i]);
            ck_assert_ptr_nonnull(rules[i]);
            rules[i]->seq = i;
            ck_assert_int_eq(fdp__tss_insert(st, rules[i]), 0);
            unsigned int same;
            unsigned int lines = fdp__tss_longest_probe(st, &same);
            ck_assert_msg(lines <= TSS_MAX_PROBE
                          && same <= TSS_MAX_SAME_HASH,
                          "%s after %zu flows: %u lines, %u with one hash",
                          kinds[k].name, i + 1, lines, same);
        }
        ck_assert_int_eq(fdp__tss_is_keyed(st),
                         kinds[k].kind != TSS_HASH_JHASH2);
        fdp__rcu_read_lock();
        for (size_t i = 0; i < N; i++) {
            ck_assert_ptr_eq(fdp__tss_lookup(st, &flows[i].value, 0),
                             rules[i]);
        }
        fdp__rcu_read_unlock();
        for (size_t i = 0; i < N; i++) {
            fdp__tss_unlink(st, rules[i]);
        }
        destroy_with_rules(st, rules, N);
    }
    free(rules);
    free(flows);
}
END_TEST

/* The walk sees every linked rule once and stops when asked. */
static bool
count_cb(struct fdp_rule *r, void *aux)
{
    size_t *n = aux;

    (*n)++;
    return *n < 1000;
}

START_TEST(for_each_rule)
{
    enum { N = 1500 };
    struct fdp_match *flows = malloc(N * sizeof *flows);
    struct fdp_rule **rules = calloc(N, sizeof *rules);
    struct tss_subtable *st;
    size_t n = 0;

    for (size_t i = 0; i < N; i++) {
        fdp__tss_5tuple_match(&flows[i], i * 0x9e3779b97f4a7c15ull, i << 32);
    }
    st = fdp__tss_create(&flows[0].mask, 1);
    ck_assert_ptr_nonnull(st);
    for (size_t i = 0; i < N; i++) {
        rules[i] = fdp__rule_alloc(&flows[i]);
        ck_assert_ptr_nonnull(rules[i]);
        ck_assert_int_eq(fdp__tss_insert(st, rules[i]), 0);
    }
    ck_assert(!fdp__tss_for_each_rule(st, count_cb, &n));
    ck_assert_uint_eq(n, 1000);
    for (size_t i = 0; i < N / 2; i++) {
        fdp__tss_unlink(st, rules[i]);
    }
    n = 0;
    ck_assert(fdp__tss_for_each_rule(st, count_cb, &n));
    ck_assert_uint_eq(n, N - N / 2);
    destroy_with_rules(st, rules, N);
    free(rules);
    free(flows);
}
END_TEST

/* The layout the lookup's cache-line count depends on (lib/tss.c,
 * "Cost of a lookup"). */
START_TEST(layout)
{
    struct fdp_key mask = { .w = { 0xffffffffffffffffull, 0xffff } };
    struct tss_subtable *st = fdp__tss_create(&mask, 0);

    ck_assert_uint_eq(sizeof(struct tss_bucket), 64);
    ck_assert_uint_eq(_Alignof(struct tss_bucket), 64);
    ck_assert_uint_eq(offsetof(struct tss_bucket, heads), 24);
    ck_assert_uint_eq(sizeof(struct tss_buckets) % 64, 0);
    ck_assert_uint_le(offsetof(struct tss_subtable, mask_words)
                      + 4 * sizeof(uint64_t), 64);
    /* A group head's key words share one line, not its first. */
    ck_assert_uint_le(offsetof(struct fdp_rule, match.w) % 64
                      + 4 * sizeof(uint64_t), 64);
    ck_assert_uint_ge(offsetof(struct fdp_rule, match.w), 64);
    ck_assert_ptr_nonnull(st);
    ck_assert_uint_eq((uintptr_t) st % 64, 0);
    ck_assert_uint_eq((uintptr_t) st->buckets % 64, 0);
    fdp__tss_destroy_now(st);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("tss");
    TCase *tc = unit_tcase(s, "tss");

    tcase_add_loop_test(tc, differential, 0, (int) FDP_ARRAY_SIZE(shapes));
    tcase_add_test(tc, flood_bound);
    tcase_add_test(tc, for_each_rule);
    tcase_add_test(tc, layout);
    return unit_run(s);
}
