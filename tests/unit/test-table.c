/*
 * Unit tests for lib/table.c and lib/tss.c.
 *
 * The differential test pits the table against a linear reference
 * classifier (a list scanned for the best match) through thousands of
 * interleaved inserts, replaces, modifies, removes, transactions and batch
 * lookups on random tables.  Other tests cover hash flooding, failed bulk
 * changes and concurrent lookups during churn (also run under TSan).
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/actions-internal.h"
#include "lib/cpu-internal.h"
#include "lib/cut.h"
#include "lib/hash-private.h"
#include "lib/tss.h"
#include "lib/util.h"
#include <flowdp/table.h>
#include "unit.h"
#include "tests/lib/classbench.h"

/* fdp_rule_get_spec() into match storage of the calling thread's (the
 * concurrency tests read specs from several threads). */
static void
get_spec(const struct fdp_rule *rule, struct fdp_flow_spec *spec)
{
    static _Thread_local struct fdp_match match;

    fdp_rule_get_spec(rule, spec, &match);
}

/* ---------------------------------------------------------------------- */
/* The reference classifier.                                               */

struct ref_flow {
    struct fdp_match match;
    uint16_t priority;
    uint64_t seq;
    uint64_t cookie;
    bool live;
};

struct ref {
    struct ref_flow *flows;
    size_t n, alloc;
    uint64_t next_seq;
};

static struct ref_flow *
ref_find(struct ref *ref, const struct fdp_match *m, uint16_t priority)
{
    for (size_t i = 0; i < ref->n; i++) {
        struct ref_flow *f = &ref->flows[i];
        if (f->live && f->priority == priority
            && fdp_match_equal(&f->match, m)) {
            return f;
        }
    }
    return NULL;
}

static void
ref_insert(struct ref *ref, const struct fdp_match *m, uint16_t priority,
           uint64_t cookie)
{
    struct ref_flow *f = ref_find(ref, m, priority);

    if (f) {
        f->cookie = cookie;     /* Replace: keeps its place (seq). */
        return;
    }
    if (ref->n == ref->alloc) {
        ref->alloc = ref->alloc ? 2 * ref->alloc : 64;
        ref->flows = realloc(ref->flows, ref->alloc * sizeof *ref->flows);
    }
    ref->flows[ref->n++] = (struct ref_flow) {
        .match = *m, .priority = priority, .seq = ref->next_seq++,
        .cookie = cookie, .live = true,
    };
}

static const struct ref_flow *
ref_lookup(const struct ref *ref, const struct fdp_key *key)
{
    const struct ref_flow *best = NULL;

    for (size_t i = 0; i < ref->n; i++) {
        const struct ref_flow *f = &ref->flows[i];
        if (f->live && fdp_match_matches(&f->match, key)
            && (!best || f->priority > best->priority
                || (f->priority == best->priority && f->seq < best->seq))) {
            best = f;
        }
    }
    return best;
}

/* ---------------------------------------------------------------------- */
/* Random flows and packets.                                               */

/* Masks to draw from: exact 5-tuples, prefixes, arbitrary masks, and a
 * few per-test random ones to reach hundreds of distinct masks. */
static void
random_mask(struct unit_rng *rng, struct fdp_match *m, unsigned int n_masks)
{
    /* A mask is a function of its number, so that 'n_masks' bounds the
     * number of distinct masks. */
    unsigned int id = unit_rng_below(rng, n_masks);
    struct unit_rng mrng = { .state = id * 0x9e3779b97f4a7c15ull + 1 };

    fdp__match_init(m);
    fdp__match_set_masked(m, FDP_F_DL_TYPE, 0x0800, 0xffff);
    fdp__match_set_masked(m, FDP_F_NW_PROTO, 6, 0xff);
    switch (id % 5) {
    case 0:     /* Exact 5-tuple. */
        fdp__match_set_masked(m, FDP_F_NW_SRC, 0, 0xffffffff);
        fdp__match_set_masked(m, FDP_F_NW_DST, 0, 0xffffffff);
        fdp__match_set_masked(m, FDP_F_TP_SRC, 0, 0xffff);
        fdp__match_set_masked(m, FDP_F_TP_DST, 0, 0xffff);
        break;
    case 1:     /* Prefixes. */
        fdp__match_set_masked(m, FDP_F_NW_SRC, 0,
                              (uint32_t) (0xffffffffull
                                          << unit_rng_below(&mrng, 33)));
        fdp__match_set_masked(m, FDP_F_NW_DST, 0,
                              (uint32_t) (0xffffffffull
                                          << unit_rng_below(&mrng, 33)));
        break;
    case 2:     /* Arbitrary masks on ports and addresses. */
        fdp__match_set_masked(m, FDP_F_TP_DST, 0,
                              unit_rng_below(&mrng, 0x10000));
        fdp__match_set_masked(m, FDP_F_NW_SRC, 0,
                              (uint32_t) unit_rng_next(&mrng) & 0xff0000ff);
        break;
    case 4:     /* Connection tracking: the pipeline-state words 21-28. */
        fdp__match_set_masked(m, FDP_F_CT_STATE, 0,
                              unit_rng_below(&mrng, 0x100) | FDP_CT_TRK);
        fdp__match_set_masked(m, FDP_F_CT_MARK, 0,
                              unit_rng_below(&mrng, 2)
                              ? 0xffffffff : (uint32_t) unit_rng_next(&mrng));
        if (unit_rng_below(&mrng, 2)) {
            fdp__match_set_masked(m, FDP_F_CT_LABEL, 0,
                                  unit_rng_below(&mrng, 2)
                                  ? ~(fdp_u128) 0
                                  : (fdp_u128) unit_rng_next(&mrng) << 64
                                    | unit_rng_next(&mrng));
        }
        if (unit_rng_below(&mrng, 2)) {
            fdp__match_set_masked(m, FDP_F_CT_NW_DST, 0, 0xffffffff);
            fdp__match_set_masked(m, FDP_F_CT_TP_DST, 0,
                                  unit_rng_below(&mrng, 0x10000));
        }
        break;
    default:    /* Other fields. */
        fdp__match_set_masked(m, FDP_F_IN_PORT, 0,
                              unit_rng_below(&mrng, 2) ? 0xffff : 0);
        fdp__match_set_masked(m, FDP_F_PKT_MARK, 0,
                              (uint32_t) unit_rng_next(&mrng));
        fdp__match_set_masked(m, FDP_F_TP_SRC, 0,
                              unit_rng_below(&mrng, 0x10000));
        break;
    }
}

/* Small value ranges so that flows overlap and packets hit them. */
static uint64_t
small_value(struct unit_rng *rng)
{
    return unit_rng_below(rng, 4);
}

/* Flows draw ranges too when set (tests of mixed tables). */
static bool with_ranges;

static void
random_flow(struct unit_rng *rng, struct fdp_match *m, unsigned int n_masks)
{
    random_mask(rng, m, n_masks);
    static const enum fdp_field fields[] = {
        FDP_F_NW_SRC, FDP_F_NW_DST, FDP_F_TP_SRC, FDP_F_TP_DST,
        FDP_F_IN_PORT, FDP_F_PKT_MARK, FDP_F_CT_STATE, FDP_F_CT_MARK,
        FDP_F_CT_LABEL, FDP_F_CT_NW_DST, FDP_F_CT_TP_DST,
    };
    for (size_t i = 0; i < FDP_ARRAY_SIZE(fields); i++) {
        fdp_u128 mask = fdp__match_get_mask(m, fields[i]);
        if (mask) {
            fdp_u128 v = (small_value(rng) * 0x01010101u) | small_value(rng);
            if (fields[i] == FDP_F_CT_LABEL && unit_rng_below(rng, 2)) {
                v |= (fdp_u128) small_value(rng) << 100;
            }
            if (with_ranges && fields[i] != FDP_F_PKT_MARK
                && fields[i] != FDP_F_CT_STATE
                && unit_rng_below(rng, 3) == 0) {
                /* A range around the value (pipapo). */
                fdp_u128 lo = v > 5 ? v - unit_rng_below(rng, 5) : v;
                fdp__match_set_range(m, fields[i], lo,
                                     v + unit_rng_below(rng, 300));
            } else {
                fdp__match_set_masked(m, fields[i], v & mask, mask);
            }
        }
    }
}

static void
random_packet(struct unit_rng *rng, const struct ref *ref,
              struct fdp_key *key)
{
    memset(key, 0, sizeof *key);
    fdp__key_set(key, FDP_F_DL_TYPE, 0x0800);
    fdp__key_set(key, FDP_F_NW_PROTO, 6);
    static const enum fdp_field fields[] = {
        FDP_F_NW_SRC, FDP_F_NW_DST, FDP_F_TP_SRC, FDP_F_TP_DST,
        FDP_F_IN_PORT, FDP_F_PKT_MARK, FDP_F_CT_STATE, FDP_F_CT_MARK,
        FDP_F_CT_LABEL, FDP_F_CT_NW_DST, FDP_F_CT_TP_DST,
    };
    for (size_t i = 0; i < FDP_ARRAY_SIZE(fields); i++) {
        fdp__key_set(key, fields[i],
                     (small_value(rng) * 0x01010101u) | small_value(rng));
    }
    /* Half the packets are aimed inside a flow. */
    if (ref->n && unit_rng_below(rng, 2)) {
        const struct ref_flow *f = &ref->flows[unit_rng_below(rng, ref->n)];
        for (int w = 0; w < FDP_KEY_WORDS; w++) {
            key->w[w] = (key->w[w] & ~f->match.mask.w[w])
                        | (f->match.value.w[w] & f->match.mask.w[w]);
        }
        FDP__FIELD_MAP_FOR_EACH (fld, &f->match.range_fields) {
            fdp_u128 lo = fdp__key_get(&f->match.value, fld);
            fdp_u128 hi = fdp__key_get(&f->match.hi, fld);
            fdp__key_set(key, fld, lo + unit_rng_below(rng,
                                                       (uint32_t) (hi - lo)
                                                       + 2));
        }
    }
}

static struct fdp_actions *
output_action(uint32_t port)
{
    struct fdp__actions_builder b;

    fdp__actions_builder_init(&b);
    fdp__actions_add(&b, FDP_ACT_OUTPUT, port);
    return fdp__actions_finish(&b);
}

static int
table_insert(struct fdp_table *t, const struct fdp_match *m,
             uint16_t priority, uint64_t cookie, unsigned int flags)
{
    struct fdp_flow_spec spec = {
        .match = (struct fdp_match *) m, .priority = priority,
        .cookie = cookie, .actions = output_action(1),
    };
    int error = fdp_table_insert(t, &spec, flags);
    fdp_actions_destroy(spec.actions);
    return error;
}

/* Checks 64 random packets against the reference with one batch lookup
 * and a few single lookups. */
static void
check_lookups(struct unit_rng *rng, struct fdp_table *t,
              const struct ref *ref, int round)
{
    struct fdp_key keys[FDP_TABLE_BATCH_MAX];
    const struct fdp_key *kp[FDP_TABLE_BATCH_MAX];
    const struct fdp_rule *rules[FDP_TABLE_BATCH_MAX];
    size_t n = 1 + unit_rng_below(rng, FDP_TABLE_BATCH_MAX);

    for (size_t i = 0; i < n; i++) {
        random_packet(rng, ref, &keys[i]);
        kp[i] = &keys[i];
    }
    fdp_table_read_lock();
    fdp_table_lookup_batch(t, kp, n, rules);
    for (size_t i = 0; i < n; i++) {
        const struct ref_flow *want = ref_lookup(ref, &keys[i]);
        struct fdp_flow_spec got;
        if (rules[i]) {
            get_spec(rules[i], &got);
        }
        ck_assert_msg(!want == !rules[i]
                      && (!want || (want->cookie == got.cookie
                                    && want->priority == got.priority)),
                      "round %d key %zu: table %s %#llx, reference %s %#llx "
                      "(seed %llu)", round, i, rules[i] ? "hit" : "miss",
                      rules[i] ? (unsigned long long) got.cookie : 0ull,
                      want ? "hit" : "miss",
                      want ? (unsigned long long) want->cookie : 0ull,
                      (unsigned long long) unit_seed());
        /* The rule's compact match expands to the flow's. */
        ck_assert(!want || fdp_match_equal(got.match, &want->match));
        if (i < 4) {
            ck_assert(fdp_table_lookup(t, &keys[i]) == rules[i]);
        }
    }
    fdp_table_read_unlock();
}

/* One random change to both the table and the reference. */
static void
random_change(struct unit_rng *rng, struct fdp_table *t, struct ref *ref,
              unsigned int n_masks, uint64_t *next_cookie)
{
    struct fdp_match m;
    unsigned int op = unit_rng_below(rng, 10);

    if (op < 5 || !ref->n) {
        /* Insert, sometimes re-inserting an existing flow (replace). */
        uint16_t priority = (uint16_t) unit_rng_below(rng, 4) * 10;
        if (ref->n && unit_rng_below(rng, 4) == 0) {
            const struct ref_flow *f = &ref->flows[unit_rng_below(rng,
                                                                  ref->n)];
            m = f->match;
            priority = f->priority;
        } else {
            random_flow(rng, &m, n_masks);
        }
        uint64_t cookie = (*next_cookie)++;
        ck_assert_int_eq(table_insert(t, &m, priority, cookie, 0), 0);
        ref_insert(ref, &m, priority, cookie);
    } else if (op < 7) {
        /* Strict remove of an existing flow, or of one that is not. */
        const struct ref_flow *f = &ref->flows[unit_rng_below(rng, ref->n)];
        struct fdp_table_filter filter = {
            .match = &f->match, .strict = true, .priority = f->priority,
        };
        /* A removed entry may share its match with a live one. */
        struct ref_flow *live = ref_find(ref, &f->match, f->priority);
        size_t n, expected = live != NULL;
        ck_assert_int_eq(fdp_table_remove(t, &filter, &n), 0);
        ck_assert_uint_eq(n, expected);
        if (live) {
            live->live = false;
        }
    } else if (op < 8) {
        /* Non-strict remove with a cookie filter. */
        random_flow(rng, &m, n_masks);
        uint64_t cookie_mask = unit_rng_below(rng, 2) ? 1 : 0;
        uint64_t cookie = unit_rng_below(rng, 2);
        struct fdp_table_filter filter = {
            .match = &m, .cookie = cookie, .cookie_mask = cookie_mask,
        };
        size_t n, expected = 0;
        for (size_t i = 0; i < ref->n; i++) {
            struct ref_flow *f = &ref->flows[i];
            if (f->live && fdp_match_covers(&m, &f->match)
                && !((f->cookie ^ cookie) & cookie_mask)) {
                f->live = false;
                expected++;
            }
        }
        ck_assert_int_eq(fdp_table_remove(t, &filter, &n), 0);
        ck_assert_uint_eq(n, expected);
    } else {
        /* Non-strict modify: actions change, flows and cookies stay. */
        random_flow(rng, &m, n_masks);
        struct fdp_table_filter filter = { .match = &m };
        struct fdp_actions *acts = output_action(2);
        size_t n, expected = 0;
        for (size_t i = 0; i < ref->n; i++) {
            expected += ref->flows[i].live
                        && fdp_match_covers(&m, &ref->flows[i].match);
        }
        ck_assert_int_eq(fdp_table_modify(t, &filter, acts, NULL, &n), 0);
        ck_assert_uint_eq(n, expected);
        fdp_actions_destroy(acts);
    }
}

/* 'rounds' rounds of random changes and lookups on a table of up to
 * 'n_masks' masks with mask budget 'max_masks'. */
static void
differential_budget(unsigned int n_masks, int rounds, uint64_t salt,
                    size_t max_masks)
{
    struct unit_rng rng;
    struct fdp_table *t;
    struct ref ref = { NULL, 0, 0, 0 };
    uint64_t next_cookie = 1;

    unit_rng_init(&rng, salt);
    ck_assert_int_eq(fdp_table_create(&t), 0);
    fdp_table_set_max_masks(t, max_masks);
    for (int round = 0; round < rounds; round++) {
        int n_changes = 1 + (int) unit_rng_below(&rng, 8);
        bool txn = unit_rng_below(&rng, 4) == 0;
        bool abort_it = txn && unit_rng_below(&rng, 3) == 0;
        struct ref saved = ref;

        if (abort_it) {
            saved.flows = malloc(ref.alloc * sizeof *ref.flows + 1);
            if (ref.n) {
                memcpy(saved.flows, ref.flows, ref.n * sizeof *ref.flows);
            }
        }
        if (txn) {
            ck_assert_int_eq(fdp_table_begin(t), 0);
            ck_assert_int_eq(fdp_table_begin(t), EBUSY);
        }
        for (int i = 0; i < n_changes; i++) {
            random_change(&rng, t, &ref, n_masks, &next_cookie);
        }
        if (abort_it) {
            fdp_table_abort(t);
            free(ref.flows);
            ref = saved;
        } else if (txn) {
            ck_assert_int_eq(fdp_table_commit(t), 0);
        }
        check_lookups(&rng, t, &ref, round);
        if (round % 64 == 0) {
            fdp_table_run(t);
        }
    }

    size_t live = 0;
    for (size_t i = 0; i < ref.n; i++) {
        live += ref.flows[i].live;
    }
    struct fdp_table_stats stats;
    fdp_table_get_stats(t, &stats);
    ck_assert_uint_eq(stats.n_flows, live);
    ck_assert(stats.n_masks <= n_masks);
    ck_assert_uint_eq(stats.n_lookups, stats.n_hits + stats.n_misses);
    ck_assert(stats.memory_bytes > 0);
    fdp_table_destroy(t);
    free(ref.flows);
}

static void
differential(unsigned int n_masks, int rounds, uint64_t salt)
{
    differential_budget(n_masks, rounds, salt, FDP_TABLE_DEFAULT_MAX_MASKS);
}

/* Pure tuple space (mask budget 0: no flow moves to pipapo) with hundreds
 * of masks, once with each fast hash this CPU can run.  The hash is the
 * only CPU-level choice a table makes that can be switched in-process
 * (fdp__hash_set_fast(), between tables); pipapo's AVX2 path is chosen
 * once per process, so the generic level is covered by "make check" with
 * FLOWDP_CPU=generic (scripts/test.sh). */
START_TEST(differential_pure_tuple_space)
{
    static const char *const hashes[] = { "crc32c", "jhash2" };
    const char *saved = fdp_hash_fast_name();
    int n_run = 0;

    for (size_t i = 0; i < FDP_ARRAY_SIZE(hashes); i++) {
        if (fdp__hash_set_fast(hashes[i])) {
            printf("differential_pure_tuple_space: %s not available here\n",
                   hashes[i]);
            continue;
        }
        differential_budget(300, 600, 36 + i, 0);
        n_run++;
    }
    ck_assert_int_eq(fdp__hash_set_fast(saved), 0);
    ck_assert_int_ge(n_run, 1);
}
END_TEST

START_TEST(differential_few_masks)
{
    differential(4, 3000, 30);
}
END_TEST

START_TEST(differential_many_masks)
{
    differential(300, 800, 31);
}
END_TEST

/* Exact, masked and ranged flows together; 300 masks, so fdp_table_run()
 * also moves the least-hit masks into pipapo. */
START_TEST(differential_mixed_ranges)
{
    with_ranges = true;
    differential(300, 600, 34);
    with_ranges = false;
}
END_TEST

START_TEST(differential_mixed_few_masks)
{
    with_ranges = true;
    differential(40, 600, 35);
    with_ranges = false;
}
END_TEST

/* The partitioned sub-table (lib/cut.c) with leaves of 2 rules, so that
 * random changes split leaves (past 4 rules), unhook emptied leaves and
 * inner nodes, and runs fold shrunk subtrees back into leaves, all
 * checked against the reference after every change; with a mask budget
 * of 1, masked flows go to the partitions too (the ACL case), and with
 * heavy overlap (few distinct values, wide ranges). */
START_TEST(differential_partitions)
{
    uint32_t saved = fdp__cut_leaf_max;

    fdp__cut_leaf_max = 2;
    with_ranges = true;
    differential_budget(40, 1500, 36, 1);
    differential_budget(300, 800, 37, 8);
    fdp__cut_leaf_max = saved;
    differential_budget(40, 800, 38, 1);
    with_ranges = false;
}
END_TEST

/* The leaf form keeps what all its rules share as one test and the rest
 * per rule; rules that differ only in bits the leaf shares must still be
 * told apart (a cut leaves them in one leaf). */
START_TEST(partition_leaf_common_bits)
{
    struct fdp_table *t;
    struct ref ref = { NULL, 0, 0, 0 };
    struct fdp_match m;
    struct unit_rng rng;

    unit_rng_init(&rng, 39);
    ck_assert_int_eq(fdp_table_create(&t), 0);
    fdp_table_set_max_masks(t, 1);
    for (int i = 0; i < 40; i++) {
        /* Same /16, different lengths and port ranges, and a few exact
         * ports (masked flows, past the budget). */
        uint32_t dst = 0x0a0b0000 | (uint32_t) unit_rng_below(&rng, 4) << 8;
        unsigned int len = 16 + 8 * unit_rng_below(&rng, 3);
        uint16_t lo = (uint16_t) unit_rng_below(&rng, 40);
        fdp__match_init(&m);
        fdp__match_set_masked(&m, FDP_F_DL_TYPE, 0x0800, 0xffff);
        fdp__match_set_masked(&m, FDP_F_NW_PROTO, 17, 0xff);
        fdp__match_set_masked(&m, FDP_F_NW_DST, dst & ~fdp__ones(32 - len),
                              fdp__ones(32) & ~fdp__ones(32 - len));
        if (i % 3) {
            fdp__match_set_range(&m, FDP_F_TP_DST, lo,
                                 lo + 1 + unit_rng_below(&rng, 20));
        } else {
            fdp__match_set_masked(&m, FDP_F_TP_DST, lo, 0xffff);
        }
        uint16_t prio = (uint16_t) (100 + unit_rng_below(&rng, 5));
        if (table_insert(t, &m, prio, (uint64_t) i + 1, 0) == 0) {
            ref_insert(&ref, &m, prio, (uint64_t) i + 1);
        }
        if (i % 10 == 9) {
            fdp_table_run(t);
        }
    }
    fdp_table_run(t);

    /* 40 flows are more than a leaf holds: the sub-table is cut. */
    struct fdp_subtable_stats stats[4];
    size_t n_subs, cut = 4;
    ck_assert_int_eq(fdp_table_get_subtable_stats(t, stats, 4, &n_subs), 0);
    for (size_t i = 0; i < n_subs; i++) {
        if (stats[i].kind != FDP_SUBTABLE_TSS) {
            cut = i;
        }
    }
    ck_assert_uint_lt(cut, n_subs);
    ck_assert_uint_gt(stats[cut].n_flows, 2 * CUT_LEAF_MAX);
    ck_assert_uint_gt(stats[cut].n_partitions, 1);
    ck_assert_uint_ge(stats[cut].partition_depth, 1);
    ck_assert_uint_le(stats[cut].largest_partition, 2 * CUT_LEAF_MAX);

    fdp_table_read_lock();
    for (uint32_t x = 0; x < 4; x++) {
        for (uint32_t port = 0; port < 64; port++) {
            struct fdp_key key;
            memset(&key, 0, sizeof key);
            fdp__key_set(&key, FDP_F_DL_TYPE, 0x0800);
            fdp__key_set(&key, FDP_F_NW_PROTO, 17);
            fdp__key_set(&key, FDP_F_NW_DST, 0x0a0b0001 | x << 8);
            fdp__key_set(&key, FDP_F_TP_DST, port);
            const struct ref_flow *want = ref_lookup(&ref, &key);
            const struct fdp_rule *got = fdp_table_lookup(t, &key);
            struct fdp_flow_spec spec = { .cookie = 0 };
            if (got) {
                get_spec(got, &spec);
            }
            ck_assert_msg(!want == !got
                          && (!want || want->cookie == spec.cookie),
                          "dst %u port %u: table %llu, reference %llu", x,
                          port, (unsigned long long) spec.cookie,
                          want ? (unsigned long long) want->cookie : 0ull);
        }
    }
    fdp_table_read_unlock();
    fdp_table_destroy(t);
    free(ref.flows);
}
END_TEST

/* The AVX2 scan of fixed-shape partition leaves against the generic one
 * on the same random blocks: values and ranges near 2^63 (the signed
 * compares' edge), spans of all ones, every start offset, rule counts
 * that do not fill the last block. */
START_TEST(partition_scan_avx2_matches_generic)
{
#ifdef FDP_HAVE_AVX2
    if (!fdp__cpu_supports(FDP_CPU_AVX2)) {
        printf("partition scan: no AVX2 on this CPU, skipped\n");
        return;
    }
    struct unit_rng rng;
    static uint64_t blocks[16 * CUT_BLOCK_WORDS] __attribute__((aligned(32)));
    static const uint64_t edges[] = {
        0, 1, UINT64_C(1) << 63, (UINT64_C(1) << 63) - 1, UINT64_MAX,
        UINT64_MAX - 1, 0xffff, 0x10000,
    };

    unit_rng_init(&rng, 41);
    for (int round = 0; round < 20000; round++) {
        uint32_t n = 1 + unit_rng_below(&rng, 16 * 4);
        for (size_t i = 0; i < FDP_ARRAY_SIZE(blocks); i++) {
            uint64_t v = unit_rng_next(&rng);
            switch (unit_rng_below(&rng, 4)) {
            case 0: v = edges[unit_rng_below(&rng, FDP_ARRAY_SIZE(edges))];
                break;
            case 1: v &= 0xff;
                break;
            default:
                break;
            }
            /* Masks sparse enough that rules match now and then. */
            if ((i % CUT_BLOCK_WORDS) / 4 % 2 == 0
                && (i % CUT_BLOCK_WORDS) < 16) {
                v &= unit_rng_below(&rng, 3) ? 0 : 0xf;
            }
            blocks[i] = v;
        }
        uint64_t k0 = unit_rng_next(&rng) & 0xf, k1 = unit_rng_next(&rng) & 0xf;
        uint64_t r0 = unit_rng_below(&rng, 2)
                      ? edges[unit_rng_below(&rng, FDP_ARRAY_SIZE(edges))]
                      : unit_rng_next(&rng);
        uint64_t r1 = unit_rng_next(&rng) & 0xff;
        uint32_t from = unit_rng_below(&rng, n + 1);
        uint32_t want = fdp__cut_scan_generic(blocks, n, from, k0, k1, r0, r1);
        uint32_t got = fdp__cut_scan_avx2(blocks, n, from, k0, k1, r0, r1);
        ck_assert_msg(got == want, "round %d: n %u from %u: avx2 %u, "
                      "generic %u (seed %llu)", round, n, from, got, want,
                      (unsigned long long) unit_seed());
    }
#else
    printf("partition scan: built without AVX2, skipped\n");
#endif
}
END_TEST

/* A large table: 5000 flows in one transaction, then lookups. */
START_TEST(differential_large)
{
    struct unit_rng rng;
    struct fdp_table *t;
    struct ref ref = { NULL, 0, 0, 0 };

    unit_rng_init(&rng, 32);
    ck_assert_int_eq(fdp_table_create(&t), 0);
    ck_assert_int_eq(fdp_table_begin(t), 0);
    for (uint64_t i = 0; i < 5000; i++) {
        struct fdp_match m;
        random_flow(&rng, &m, 200);
        uint16_t priority = (uint16_t) unit_rng_below(&rng, 8);
        ck_assert_int_eq(table_insert(t, &m, priority, i + 1, 0), 0);
        ref_insert(&ref, &m, priority, i + 1);
    }
    ck_assert_int_eq(fdp_table_commit(t), 0);
    for (int round = 0; round < 50; round++) {
        check_lookups(&rng, t, &ref, round);
    }
    fdp_table_destroy(t);
    free(ref.flows);
}
END_TEST

/* ---------------------------------------------------------------------- */

static bool
collect_cb(const struct fdp_rule *rule, void *aux)
{
    struct fdp_flow_spec spec;
    char **out = aux;
    char *s;

    get_spec(rule, &spec);
    s = fdp_flow_format(&spec);
    size_t len = *out ? strlen(*out) : 0;
    *out = realloc(*out, len + strlen(s) + 2);
    strcpy(*out + len, s);
    strcat(*out, "\n");
    free(s);
    return true;
}

static int
compare_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* A sorted dump, to compare table contents. */
static char *
dump(struct fdp_table *t)
{
    char *s = NULL;

    fdp_table_for_each(t, collect_cb, &s);
    if (!s) {
        return strdup("");
    }
    /* Sort lines. */
    size_t total = strlen(s);
    size_t n = 0;
    for (char *p = s; *p; p++) {
        n += *p == '\n';
    }
    char **lines = malloc(n * sizeof *lines);
    char *save;
    size_t i = 0;
    for (char *l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n",
                                                               &save)) {
        lines[i++] = l;
    }
    qsort(lines, n, sizeof *lines, compare_lines);
    char *out = calloc(1, total + n + 2);
    for (i = 0; i < n; i++) {
        strcat(out, lines[i]);
        strcat(out, "\n");
    }
    free(lines);
    free(s);
    return out;
}

static int
insert_text(struct fdp_table *t, const char *text, unsigned int flags)
{
    struct fdp_flow_spec spec;
    char *error;

    ck_assert_msg(!fdp_flow_parse(text, 0, &spec, &error), "%s", error);
    int err = fdp_table_insert(t, &spec, flags);
    fdp_flow_spec_destroy(&spec);
    return err;
}

/* The key of a TCP packet to port 80 (everything else zero). */
static void
tcp80_key(struct fdp_key *key)
{
    memset(key, 0, sizeof *key);
    fdp__key_set(key, FDP_F_DL_TYPE, 0x0800);
    fdp__key_set(key, FDP_F_NW_PROTO, 6);
    fdp__key_set(key, FDP_F_TP_DST, 80);
}

START_TEST(failed_bulk_change_leaves_table_unchanged)
{
    struct fdp_table *t;

    ck_assert_int_eq(fdp_table_create(&t), 0);
    ck_assert_int_eq(insert_text(t, "priority=5,tcp,tp_dst=80,actions=1", 0),
                     0);
    ck_assert_int_eq(insert_text(t, "ip,nw_src=10.0.0.0/8,actions=2", 0), 0);
    char *before = dump(t);

    /* A batch that adds, replaces and removes, then fails on a
     * duplicate. */
    ck_assert_int_eq(fdp_table_begin(t), 0);
    ck_assert_int_eq(insert_text(t, "udp,tp_dst=53,actions=3", 0), 0);
    ck_assert_int_eq(insert_text(t, "priority=5,tcp,tp_dst=80,actions=9",
                                 0), 0);
    struct fdp_table_filter all = { NULL, false, 0, 0, 0 };
    size_t n;
    ck_assert_int_eq(fdp_table_remove(t, &all, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(insert_text(t, "udp,tp_dst=53,actions=4", 0), 0);
    ck_assert_int_eq(insert_text(t, "udp,tp_dst=53,actions=5",
                                 FDP_TABLE_NO_REPLACE), EEXIST);
    fdp_table_abort(t);

    char *after = dump(t);
    ck_assert_str_eq(before, after);
    struct fdp_table_stats stats;
    fdp_table_get_stats(t, &stats);
    ck_assert_uint_eq(stats.n_flows, 2);
    ck_assert_uint_eq(stats.n_masks, 2);
    free(before);
    free(after);

    /* Replace keeps statistics. */
    struct fdp_key key;
    tcp80_key(&key);
    fdp_table_read_lock();
    const struct fdp_rule *r = fdp_table_lookup(t, &key);
    ck_assert_ptr_nonnull(r);
    fdp_rule_account(r, 100, 1);
    fdp_table_read_unlock();
    ck_assert_int_eq(insert_text(t, "priority=5,tcp,tp_dst=80,actions=7", 0),
                     0);
    fdp_table_read_lock();
    r = fdp_table_lookup(t, &key);
    struct fdp_rule_stats rs;
    fdp_rule_get_stats(r, &rs);
    ck_assert_uint_eq(rs.n_packets, 1);
    ck_assert_uint_eq(rs.n_bytes, 100);
    struct fdp_flow_spec spec;
    get_spec(r, &spec);
    char *text = fdp_actions_format(spec.actions, spec.match);
    ck_assert_str_eq(text, "output:7");
    free(text);
    fdp_table_read_unlock();
    ck_assert_int_eq(insert_text(t, "priority=5,tcp,tp_dst=80,actions=8",
                                 FDP_TABLE_NO_REPLACE), EEXIST);

    /* Ranges go to a pipapo sub-table. */
    ck_assert_int_eq(insert_text(t, "tcp,tp_dst=1000-2000,actions=1", 0),
                     0);
    fdp_table_get_stats(t, &stats);
    ck_assert_uint_eq(stats.n_pipapo_rules, 1);
    ck_assert_uint_eq(stats.n_pipapo_tables, 1);
    fdp_table_destroy(t);
}
END_TEST

START_TEST(equal_priority_first_added_wins)
{
    struct fdp_table *t;
    struct fdp_key key;

    ck_assert_int_eq(fdp_table_create(&t), 0);
    /* B overlaps A at equal priority and was added later. */
    ck_assert_int_eq(insert_text(t, "cookie=0xa,tcp,tp_dst=80,actions=1", 0),
                     0);
    ck_assert_int_eq(insert_text(t, "cookie=0xb,tcp,nw_src=10.0.0.0/8,"
                                 "actions=2", 0), 0);
    memset(&key, 0, sizeof key);
    fdp__key_set(&key, FDP_F_DL_TYPE, 0x0800);
    fdp__key_set(&key, FDP_F_NW_PROTO, 6);
    fdp__key_set(&key, FDP_F_NW_SRC, 0x0a010101);
    fdp__key_set(&key, FDP_F_TP_DST, 80);
    for (int i = 0; i < 3; i++) {
        fdp_table_read_lock();
        const struct fdp_rule *r = fdp_table_lookup(t, &key);
        struct fdp_flow_spec spec;
        get_spec(r, &spec);
        ck_assert_uint_eq(spec.cookie, 0xa);
        fdp_table_read_unlock();
        /* However the subtables are ranked. */
        fdp_table_run(t);
    }
    fdp_table_destroy(t);
}
END_TEST

/* Finds 'field' among the fields of pipapo sub-table stats 's'. */
static bool
subtable_has_field(const struct fdp_subtable_stats *s, enum fdp_field field)
{
    for (unsigned int i = 0; i < s->n_fields; i++) {
        if (s->fields[i] == field) {
            /* 0: the partitions are lists (lib/cut.c). */
            ck_assert(s->group_bits[i] == 0 || s->group_bits[i] == 4
                      || s->group_bits[i] == 8);
            ck_assert_uint_ge(s->n_partitions, 1);
            ck_assert_uint_ge(s->largest_partition, 1);
            return true;
        }
    }
    return false;
}

/* Checks that the per-sub-table flow counts of 't' add up to its flow
 * count, and returns the number of sub-tables, described in 'out'. */
static size_t
subtable_stats_checked(struct fdp_table *t, struct fdp_subtable_stats *out,
                       size_t n_max)
{
    struct fdp_table_stats stats;
    uint64_t sum = 0;
    size_t n;

    ck_assert_int_eq(fdp_table_get_subtable_stats(t, out, n_max, &n), 0);
    fdp_table_get_stats(t, &stats);
    for (size_t i = 0; i < n; i++) {
        sum += out[i].n_flows;
        ck_assert_uint_gt(out[i].memory_bytes, 0);
    }
    ck_assert_uint_eq(sum, stats.n_flows);
    return n;
}

/* Per-sub-table statistics: exact flows over three masks, ranged flows
 * in the partitioned sub-table, then a mask budget of 1 that moves the
 * flows of the two least-hit masks there too. */
START_TEST(subtable_stats_per_structure)
{
    static const char *const flows[] = {
        /* Mask A (4 flows, priority 100): the one the lookups below hit. */
        "priority=100,tcp,nw_src=10.0.0.1,tp_dst=80,actions=1",
        "priority=100,tcp,nw_src=10.0.0.2,tp_dst=80,actions=1",
        "priority=100,tcp,nw_src=10.0.0.3,tp_dst=80,actions=1",
        "priority=90,tcp,nw_src=10.0.0.4,tp_dst=80,actions=1",
        /* Mask B (3 flows, priority 50). */
        "priority=50,udp,nw_dst=10.1.0.0/16,actions=2",
        "priority=50,udp,nw_dst=10.2.0.0/16,actions=2",
        "priority=40,udp,nw_dst=10.3.0.0/16,actions=2",
        /* Mask C (2 flows, priority 10). */
        "priority=10,ip,nw_src=192.168.1.0/24,actions=3",
        "priority=10,ip,nw_src=192.168.2.0/24,actions=3",
        /* Non-prefix ranges on nw_src and tp_dst: one pipapo sub-table. */
        "priority=200,tcp,nw_src=10.9.0.1-10.9.0.5,tp_dst=1000-2000,"
        "actions=4",
        "priority=150,tcp,nw_src=10.9.1.1-10.9.1.9,tp_dst=3-7,actions=4",
    };
    struct fdp_subtable_stats out[8];
    struct fdp_table *t;
    struct fdp_key key;
    size_t n;

    ck_assert_int_eq(fdp_table_create(&t), 0);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(flows); i++) {
        ck_assert_int_eq(insert_text(t, flows[i], 0), 0);
    }

    /* Walk order: by highest priority. */
    ck_assert_uint_eq(subtable_stats_checked(t, out, FDP_ARRAY_SIZE(out)), 4);
    ck_assert_int_eq(out[0].kind, FDP_SUBTABLE_PARTITIONED);
    ck_assert_int_eq(out[0].reason, FDP_SUBTABLE_FOR_RANGES);
    ck_assert_uint_eq(out[0].n_flows, 2);
    ck_assert_int_eq(out[0].max_priority, 200);
    ck_assert(subtable_has_field(&out[0], FDP_F_NW_SRC));
    ck_assert(subtable_has_field(&out[0], FDP_F_TP_DST));
    ck_assert(!subtable_has_field(&out[0], FDP_F_NW_DST));
    ck_assert_int_eq(out[1].kind, FDP_SUBTABLE_TSS);
    ck_assert_int_eq(out[1].reason, FDP_SUBTABLE_FOR_MASK);
    ck_assert_uint_eq(out[1].n_flows, 4);
    ck_assert_int_eq(out[1].max_priority, 100);
    ck_assert(!out[1].keyed_hash);
    ck_assert_uint_eq(fdp_key_get(&out[1].mask, FDP_F_NW_SRC).lo,
                      0xffffffff);
    ck_assert_uint_eq(fdp_key_get(&out[1].mask, FDP_F_TP_DST).lo, 0xffff);
    ck_assert_uint_eq(fdp_key_get(&out[1].mask, FDP_F_NW_DST).lo, 0);
    ck_assert_int_eq(out[2].kind, FDP_SUBTABLE_TSS);
    ck_assert_uint_eq(out[2].n_flows, 3);
    ck_assert_int_eq(out[2].max_priority, 50);
    ck_assert_uint_eq(fdp_key_get(&out[2].mask, FDP_F_NW_DST).lo,
                      0xffff0000);
    ck_assert_int_eq(out[3].kind, FDP_SUBTABLE_TSS);
    ck_assert_uint_eq(out[3].n_flows, 2);
    ck_assert_int_eq(out[3].max_priority, 10);
    ck_assert_uint_eq(fdp_key_get(&out[3].mask, FDP_F_NW_SRC).lo,
                      0xffffff00);

    /* A short array: the first entries and the count needed. */
    ck_assert_int_eq(fdp_table_get_subtable_stats(t, out, 1, &n), ENOBUFS);
    ck_assert_uint_eq(n, 4);
    ck_assert_int_eq(out[0].kind, FDP_SUBTABLE_PARTITIONED);
    ck_assert_int_eq(fdp_table_get_subtable_stats(t, NULL, 0, &n), ENOBUFS);
    ck_assert_int_eq(fdp_table_get_subtable_stats(t, out, 8, NULL), EINVAL);
    ck_assert_int_eq(fdp_table_get_subtable_stats(t, NULL, 1, &n), EINVAL);

    /* Hit mask A 5 times so that it is the mask the budget keeps. */
    memset(&key, 0, sizeof key);
    fdp__key_set(&key, FDP_F_DL_TYPE, 0x0800);
    fdp__key_set(&key, FDP_F_NW_PROTO, 6);
    fdp__key_set(&key, FDP_F_NW_SRC, 0x0a000001);
    fdp__key_set(&key, FDP_F_TP_DST, 80);
    for (int i = 0; i < 5; i++) {
        fdp_table_read_lock();
        ck_assert_ptr_nonnull(fdp_table_lookup(t, &key));
        fdp_table_read_unlock();
    }
    ck_assert_int_eq(fdp_table_get_subtable_stats(t, out, 8, &n), 0);
    ck_assert_uint_eq(out[1].hits, 5);

    /* A budget of one mask: B and C move to the partitioned sub-table,
     * which the ranged flows share (one tree for both, lib/cut.c). */
    fdp_table_set_max_masks(t, 1);
    fdp_table_run(t);
    ck_assert_uint_eq(subtable_stats_checked(t, out, FDP_ARRAY_SIZE(out)), 2);
    ck_assert_int_eq(out[0].kind, FDP_SUBTABLE_PARTITIONED);
    /* Made for the ranged flows, which came first. */
    ck_assert_int_eq(out[0].reason, FDP_SUBTABLE_FOR_RANGES);
    ck_assert_uint_eq(out[0].n_flows, 7);
    ck_assert_int_eq(out[0].max_priority, 200);
    ck_assert(subtable_has_field(&out[0], FDP_F_NW_DST));
    ck_assert(subtable_has_field(&out[0], FDP_F_NW_SRC));
    ck_assert_int_eq(out[1].kind, FDP_SUBTABLE_TSS);
    ck_assert_uint_eq(out[1].n_flows, 4);
    ck_assert_uint_eq(out[1].hits, 5);

    /* Removing flows shows in the counts at once. */
    struct fdp_match *m = fdp_match_create();
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(fdp_match_set_masked(m, FDP_F_DL_TYPE,
                                          (struct fdp_value) { 0, 0x0800 },
                                          (struct fdp_value) { 0, 0xffff }),
                     0);
    ck_assert_int_eq(fdp_match_set_masked(m, FDP_F_NW_PROTO,
                                          (struct fdp_value) { 0, 17 },
                                          (struct fdp_value) { 0, 0xff }),
                     0);
    struct fdp_table_filter filter = { .match = m };
    ck_assert_int_eq(fdp_table_remove(t, &filter, &n), 0);
    ck_assert_uint_eq(n, 3);
    fdp_match_destroy(m);
    ck_assert_uint_eq(subtable_stats_checked(t, out, FDP_ARRAY_SIZE(out)), 2);
    ck_assert_int_eq(out[0].kind, FDP_SUBTABLE_PARTITIONED);
    ck_assert_uint_eq(out[0].n_flows, 4);
    ck_assert_int_eq(out[0].max_priority, 200);
    /* The table's own count too, although the removed rules stay linked
     * until a grace period. */
    struct fdp_table_stats ts;
    fdp_table_get_stats(t, &ts);
    ck_assert_uint_eq(ts.n_pipapo_rules, 4);
    ck_assert_uint_eq(ts.n_flows, 8);
    fdp_table_destroy(t);
}
END_TEST

/* A flow "tcp,nw_src=(10+i).i.0.0/LEN": one mask per prefix length,
 * no two flows of different 'i' overlapping. */
static void
prefix_flow(struct fdp_match *m, unsigned int i, unsigned int len)
{
    uint32_t mask = (uint32_t) (0xffffffffull << (32 - len));

    fdp__match_init(m);
    fdp__match_set_masked(m, FDP_F_DL_TYPE, 0x0800, 0xffff);
    fdp__match_set_masked(m, FDP_F_NW_PROTO, 6, 0xff);
    fdp__match_set_masked(m, FDP_F_NW_SRC, ((10 + i) << 24 | i << 16) & mask,
                          mask);
}

/* The mask budget at insert time: in a table whose subtables have no
 * hits yet, masks past the budget go straight to the overflow sub-table
 * (there is nothing for fdp_table_run() to rank them by); once lookups
 * have hit, new masks may take tuple space up to twice the budget, and
 * the run trims back to the budget by hits.  Lookups find every flow
 * throughout. */
START_TEST(mask_budget_at_insert)
{
    struct fdp_table *t;
    struct fdp_table_stats st;
    struct fdp_match m;

    ck_assert_int_eq(fdp_table_create(&t), 0);
    fdp_table_set_max_masks(t, 2);
    fdp_table_begin(t);
    for (unsigned int len = 8; len < 14; len++) {
        prefix_flow(&m, len, len);
        ck_assert_int_eq(table_insert(t, &m, 10, len, 0), 0);
    }
    ck_assert_int_eq(fdp_table_commit(t), 0);
    fdp_table_get_stats(t, &st);
    ck_assert_uint_eq(st.n_masks, 2);
    ck_assert_uint_eq(st.n_pipapo_rules, 4);

    /* Moved flows made the partitioned sub-table: its reason says so. */
    struct fdp_subtable_stats subs[4];
    size_t n_subs, n_partitioned = 0;
    ck_assert_int_eq(fdp_table_get_subtable_stats(t, subs, 4, &n_subs), 0);
    for (size_t i = 0; i < n_subs; i++) {
        if (subs[i].kind == FDP_SUBTABLE_PARTITIONED) {
            ck_assert_int_eq(subs[i].reason, FDP_SUBTABLE_FOR_OVERFLOW);
            n_partitioned++;
        } else {
            ck_assert_int_eq(subs[i].kind, FDP_SUBTABLE_TSS);
            ck_assert_int_eq(subs[i].reason, FDP_SUBTABLE_FOR_MASK);
        }
    }
    ck_assert_uint_eq(n_partitioned, 1);

    /* A hit, then four more masks: up to twice the budget in tuple
     * space until the run. */
    for (unsigned int len = 8; len < 20; len++) {
        if (len == 14) {
            fdp_table_begin(t);
        }
        if (len >= 14) {
            prefix_flow(&m, len, len);
            ck_assert_int_eq(table_insert(t, &m, 10, len, 0), 0);
        }
        if (len == 8) {
            struct fdp_key key;
            memset(&key, 0, sizeof key);
            fdp__key_set(&key, FDP_F_DL_TYPE, 0x0800);
            fdp__key_set(&key, FDP_F_NW_PROTO, 6);
            fdp__key_set(&key, FDP_F_NW_SRC, 18u << 24 | 8u << 16);
            fdp_table_read_lock();
            ck_assert_ptr_nonnull(fdp_table_lookup(t, &key));
            fdp_table_read_unlock();
        }
    }
    ck_assert_int_eq(fdp_table_commit(t), 0);
    fdp_table_get_stats(t, &st);
    ck_assert_uint_eq(st.n_masks, 4);
    fdp_table_run(t);
    fdp_table_get_stats(t, &st);
    ck_assert_uint_eq(st.n_masks, 2);
    ck_assert_uint_eq(st.n_flows, 12);
    for (unsigned int len = 8; len < 20; len++) {
        struct fdp_key key;
        memset(&key, 0, sizeof key);
        fdp__key_set(&key, FDP_F_DL_TYPE, 0x0800);
        fdp__key_set(&key, FDP_F_NW_PROTO, 6);
        fdp__key_set(&key, FDP_F_NW_SRC, (10 + len) << 24 | len << 16);
        fdp_table_read_lock();
        const struct fdp_rule *r = fdp_table_lookup(t, &key);
        ck_assert_ptr_nonnull(r);
        ck_assert_uint_eq(fdp_rule_get_cookie(r), len);
        fdp_table_read_unlock();
    }
    fdp_table_destroy(t);
}
END_TEST

/* Regression: a strict filter with match NULL (table.h: all flows)
 * crashed in fdp_match_equal(NULL, ...).  NULL is the all-wildcard match:
 * strict, it selects the catch-all flow of the filter's priority. */
START_TEST(strict_filter_null_match_selects_catch_all)
{
    struct fdp_table *t;
    size_t n;

    ck_assert_int_eq(fdp_table_create(&t), 0);
    ck_assert_int_eq(insert_text(t, "cookie=0x1,priority=7,actions=1", 0), 0);
    ck_assert_int_eq(insert_text(t, "cookie=0x2,priority=7,tcp,actions=1", 0),
                     0);
    ck_assert_int_eq(insert_text(t, "cookie=0x3,priority=8,actions=1", 0), 0);

    struct fdp_table_filter strict = {
        .match = NULL, .strict = true, .priority = 7,
    };
    struct fdp_actions *acts = output_action(5);
    ck_assert_int_eq(fdp_table_modify(t, &strict, acts, NULL, &n), 0);
    ck_assert_uint_eq(n, 1);
    fdp_actions_destroy(acts);
    char *text = dump(t);
    ck_assert_str_eq(text, "cookie=0x1, priority=7 actions=output:5\n"
                     "cookie=0x2, priority=7,tcp actions=output:1\n"
                     "cookie=0x3, priority=8 actions=output:1\n");
    free(text);

    /* A strict filter on a priority with no catch-all flow selects
     * nothing. */
    strict.priority = 9;
    ck_assert_int_eq(fdp_table_remove(t, &strict, &n), 0);
    ck_assert_uint_eq(n, 0);
    strict.priority = 7;
    ck_assert_int_eq(fdp_table_remove(t, &strict, &n), 0);
    ck_assert_uint_eq(n, 1);

    /* Non-strict, NULL still selects every flow. */
    struct fdp_table_filter all = { .match = NULL };
    ck_assert_int_eq(fdp_table_remove(t, &all, &n), 0);
    ck_assert_uint_eq(n, 2);
    fdp_table_destroy(t);
}
END_TEST

/* Modify with a new cookie (mod-flows "cookie=V"): strict reaches one
 * flow, non-strict every covered one; actions and cookie really change,
 * and the flow keeps its statistics. */
START_TEST(modify_sets_new_cookie_and_actions)
{
    struct fdp_table *t;
    struct fdp_flow_spec spec;
    char *error;
    size_t n;

    ck_assert_int_eq(fdp_table_create(&t), 0);
    ck_assert_int_eq(insert_text(t, "cookie=0x1,priority=5,tcp,tp_dst=80,"
                                 "actions=1", 0), 0);
    ck_assert_int_eq(insert_text(t, "cookie=0x2,priority=6,tcp,tp_dst=80,"
                                 "actions=1", 0), 0);
    ck_assert_int_eq(fdp_flow_parse("priority=5,tcp,tp_dst=80",
                                    FDP_PARSE_MATCH_ONLY, &spec, &error), 0);
    struct fdp_table_filter filter = {
        .match = spec.match, .strict = true, .priority = 5,
    };
    struct fdp_actions *acts = output_action(4);
    uint64_t cookie = 0x5;
    ck_assert_int_eq(fdp_table_modify(t, &filter, acts, &cookie, &n), 0);
    ck_assert_uint_eq(n, 1);
    char *text = dump(t);
    ck_assert_str_eq(text, "cookie=0x2, priority=6,tcp,tp_dst=80 "
                     "actions=output:1\n"
                     "cookie=0x5, priority=5,tcp,tp_dst=80 "
                     "actions=output:4\n");
    free(text);
    filter.strict = false;
    cookie = 0x7;
    ck_assert_int_eq(fdp_table_modify(t, &filter, acts, &cookie, &n), 0);
    ck_assert_uint_eq(n, 2);
    text = dump(t);
    ck_assert_str_eq(text, "cookie=0x7, priority=5,tcp,tp_dst=80 "
                     "actions=output:4\n"
                     "cookie=0x7, priority=6,tcp,tp_dst=80 "
                     "actions=output:4\n");
    free(text);
    fdp_actions_destroy(acts);
    fdp_flow_spec_destroy(&spec);
    fdp_table_destroy(t);
}
END_TEST

/* Regression, "hard timeout counted from creation, not from the last
 * modification": Open vSwitch's hard_timeout counts from the flow's
 * rule->modified, which a modify and an add replacing the flow both set;
 * a modify keeps 'created', an add restarts it (ofproto.c,
 * replace_rule_start()).  Each keeps the counters.  An aborted add
 * changes neither time. */
static struct fdp_rule_stats
tcp80_stats(struct fdp_table *t)
{
    struct fdp_key key;
    struct fdp_rule_stats rs;

    tcp80_key(&key);
    fdp_table_read_lock();
    const struct fdp_rule *r = fdp_table_lookup(t, &key);
    ck_assert_ptr_nonnull(r);
    fdp_rule_get_stats(r, &rs);
    fdp_table_read_unlock();
    return rs;
}

/* Sleeps long enough for CLOCK_MONOTONIC milliseconds to move on. */
static void
sleep_some_ms(void)
{
    struct timespec ts = { 0, 20 * 1000 * 1000 };

    nanosleep(&ts, NULL);
}

START_TEST(hard_timeout_counted_from_creation_not_last_modification)
{
    struct fdp_table *t;
    struct fdp_flow_spec spec;
    char *error;
    size_t n;

    ck_assert_int_eq(fdp_table_create(&t), 0);
    ck_assert_int_eq(insert_text(t, "hard_timeout=6,tcp,tp_dst=80,"
                                 "actions=1", 0), 0);
    struct fdp_rule_stats a = tcp80_stats(t);
    ck_assert_int_gt(a.created_ms, 0);
    ck_assert_int_eq(a.modified_ms, a.created_ms);

    /* A modify: 'created' stays, the version is modified now. */
    sleep_some_ms();
    ck_assert_int_eq(fdp_flow_parse("tcp,tp_dst=80", FDP_PARSE_MATCH_ONLY,
                                    &spec, &error), 0);
    struct fdp_table_filter filter = { .match = spec.match };
    struct fdp_actions *acts = output_action(2);
    ck_assert_int_eq(fdp_table_modify(t, &filter, acts, NULL, &n), 0);
    ck_assert_uint_eq(n, 1);
    struct fdp_rule_stats b = tcp80_stats(t);
    ck_assert_int_eq(b.created_ms, a.created_ms);
    ck_assert_int_ge(b.modified_ms, a.modified_ms + 20);

    /* Counters are kept by the add below; count a packet to see it. */
    {
        struct fdp_key key;
        tcp80_key(&key);
        fdp_table_read_lock();
        fdp_rule_account(fdp_table_lookup(t, &key), 60, b.modified_ms);
        fdp_table_read_unlock();
    }

    /* An aborted add replacing it changes neither time. */
    sleep_some_ms();
    ck_assert(fdp_table_begin(t) == 0);
    ck_assert_int_eq(insert_text(t, "hard_timeout=6,tcp,tp_dst=80,"
                                 "actions=3", 0), 0);
    fdp_table_abort(t);
    struct fdp_rule_stats c = tcp80_stats(t);
    ck_assert_int_eq(c.created_ms, b.created_ms);
    ck_assert_int_eq(c.modified_ms, b.modified_ms);

    /* A committed one restarts both, and keeps the counters. */
    ck_assert_int_eq(insert_text(t, "hard_timeout=6,tcp,tp_dst=80,"
                                 "actions=3", 0), 0);
    struct fdp_rule_stats d = tcp80_stats(t);
    ck_assert_int_ge(d.modified_ms, b.modified_ms + 20);
    ck_assert_int_eq(d.created_ms, d.modified_ms);
    ck_assert_uint_eq(d.n_packets, 1);
    ck_assert_uint_eq(d.n_bytes, 60);

    fdp_actions_destroy(acts);
    fdp_flow_spec_destroy(&spec);
    fdp_table_destroy(t);
}
END_TEST

/* The table refuses actions a flow's match does not support (mod_tp_dst
 * on a flow that is not TCP, UDP or SCTP), on insert and on modify, however
 * the list was built (the parser refuses them first), and the refusal
 * changes nothing. */
START_TEST(actions_must_suit_the_match)
{
    struct fdp_table *t;
    struct fdp_flow_spec spec;
    char *error;
    size_t n = 99;

    ck_assert_int_eq(fdp_table_create(&t), 0);
    struct fdp__actions_builder b;
    fdp__actions_builder_init(&b);
    ck_assert_int_eq(fdp__actions_add_set_field(&b, FDP_F_TP_DST, 8080, 0),
                     0);
    fdp__actions_add(&b, FDP_ACT_OUTPUT, 2);
    struct fdp_actions *set_port = fdp__actions_finish(&b);

    ck_assert_int_eq(fdp_flow_parse("ip,nw_dst=10.0.0.1",
                                    FDP_PARSE_MATCH_ONLY, &spec, &error), 0);
    spec.actions = set_port;
    ck_assert_int_eq(fdp_table_insert(t, &spec, 0), EINVAL);
    spec.actions = NULL;
    fdp_flow_spec_destroy(&spec);
    char *text = dump(t);
    ck_assert_str_eq(text, "");
    free(text);

    ck_assert_int_eq(insert_text(t, "ip,nw_dst=10.0.0.1,actions=1", 0), 0);
    ck_assert_int_eq(insert_text(t, "tcp,tp_dst=80,actions=1", 0), 0);
    /* Every flow: the ip one cannot take the port rewrite, so neither
     * changes. */
    struct fdp_table_filter all = { .match = NULL };
    ck_assert_int_eq(fdp_table_modify(t, &all, set_port, NULL, &n), EINVAL);
    ck_assert_uint_eq(n, 0);
    const char *before = "ip,nw_dst=10.0.0.1 actions=output:1\n"
                         "tcp,tp_dst=80 actions=output:1\n";
    text = dump(t);
    ck_assert_str_eq(text, before);
    free(text);
    /* The tcp flows can. */
    ck_assert_int_eq(fdp_flow_parse("tcp", FDP_PARSE_MATCH_ONLY, &spec,
                                    &error), 0);
    struct fdp_table_filter tcp = { .match = spec.match };
    ck_assert_int_eq(fdp_table_modify(t, &tcp, set_port, NULL, &n), 0);
    ck_assert_uint_eq(n, 1);
    text = dump(t);
    ck_assert_str_eq(text, "ip,nw_dst=10.0.0.1 actions=output:1\n"
                     "tcp,tp_dst=80 actions=set_field:8080->tcp_dst,output:2\n");
    free(text);
    fdp_flow_spec_destroy(&spec);
    fdp_actions_destroy(set_port);
    fdp_table_destroy(t);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Hash flooding.                                                          */

START_TEST(hash_flooding)
{
    enum { N = 4096 };
    struct fdp_match *flows = malloc(N * sizeof *flows);
    struct fdp_table *t;

    ck_assert_int_eq(fdp__tss_flood_flows(flows, N), 0);
    /* They really collide: one CRC32C hash for all. */
    uint32_t h0 = 0;
    for (size_t k = 0; k < N; k++) {
        uint64_t words[2] = { flows[k].value.w[0], flows[k].value.w[1] };
        uint32_t h = fdp_hash_crc32c(words, 2, 12345);
        if (k == 0) {
            h0 = h;
        }
        ck_assert_uint_eq(h, h0);
    }

    ck_assert_int_eq(fdp_table_create(&t), 0);
    for (size_t k = 0; k < N; k++) {
        ck_assert_int_eq(table_insert(t, &flows[k], 1, k + 1, 0), 0);
    }
    struct fdp_table_stats stats;
    fdp_table_get_stats(t, &stats);
    ck_assert_uint_eq(stats.n_flows, N);
    ck_assert_uint_eq(stats.n_masks, 1);
    if (!strcmp(fdp_hash_fast_name(), "crc32c")) {
        /* The subtable noticed the flood and switched hash. */
        ck_assert_uint_eq(stats.n_keyed_subtables, 1);
    }
    fdp_table_read_lock();
    for (size_t k = 0; k < N; k++) {
        const struct fdp_rule *r = fdp_table_lookup(t, &flows[k].value);
        ck_assert_ptr_nonnull(r);
        struct fdp_flow_spec spec;
        get_spec(r, &spec);
        ck_assert_uint_eq(spec.cookie, k + 1);
    }
    fdp_table_read_unlock();
    fdp_table_destroy(t);

    /* The subtable itself, after every insert: no probe passes the
     * bounds.  Regression: make_room() grew the array on the 17th colliding
     * group without re-checking the chain, which left it at 17. */
    struct tss_subtable *st = fdp__tss_create(&flows[0].mask, 12345);
    struct fdp_rule **rules = calloc(N, sizeof *rules);
    ck_assert_ptr_nonnull(st);
    for (size_t k = 0; k < N; k++) {
        rules[k] = fdp__rule_alloc(&flows[k]);
        ck_assert_ptr_nonnull(rules[k]);
        rules[k]->priority = 1;
        rules[k]->seq = k;
        ck_assert_int_eq(fdp__tss_insert(st, rules[k]), 0);
        unsigned int same;
        unsigned int lines = fdp__tss_longest_probe(st, &same);
        ck_assert_msg(lines <= TSS_MAX_PROBE && same <= TSS_MAX_SAME_HASH,
                      "after %zu groups: probe of %u lines, %u groups with "
                      "one hash", k + 1, lines, same);
    }
    fdp__tss_destroy_now(st);
    for (size_t k = 0; k < N; k++) {
        fdp__rule_free_block(rules[k]);
    }
    free(rules);
    free(flows);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Concurrency.                                                            */

enum { N_STABLE = 64, N_READERS = 2 };

/* The progress of a test's worker threads (readers or a dumper), so that
 * the writer makes every round overlap their work instead of hoping the
 * scheduler interleaves them: on a loaded machine a writer could finish
 * all its rounds before a worker first ran (tests/unit/unit.h, "Progress
 * between threads"). */
struct workers {
    uint64_t n_started;         /* Atomic: hands out indices into 'done'. */
    uint64_t done[N_READERS];   /* Units of work finished, per worker. */
    uint64_t seen[N_READERS];   /* Writer only: 'done' at its last wait. */
};

/* Called once by a worker thread: its index in 'w'. */
static int
workers_join(struct workers *w)
{
    uint64_t idx = __atomic_fetch_add(&w->n_started, 1, __ATOMIC_RELAXED);

    ck_assert_uint_lt(idx, N_READERS);
    return (int) idx;
}

/* Waits (bounded) until each of the first 'n' workers of 'w' has finished
 * a unit of work since the writer's last wait, so that the change the
 * writer made in 'round' overlapped work of every worker. */
static void
workers_wait(struct workers *w, int n, int round)
{
    for (int i = 0; i < n; i++) {
        char what[64];
        snprintf(what, sizeof what, "round %d: worker %d", round, i);
        unit_progress_wait(&w->done[i], w->seen[i] + 1, what);
        w->seen[i] = unit_progress_get(&w->done[i]);
    }
}

struct conc {
    struct fdp_table *table;
    struct fdp_key keys[N_STABLE];
    bool stop;                  /* Atomic. */
    uint64_t lookups;           /* Atomic: summed over readers. */
    uint64_t n_wrong;           /* Atomic: wrong answers, all readers. */
    struct workers workers;
};

static void *
reader_main(void *conc_)
{
    struct conc *c = conc_;
    int idx = workers_join(&c->workers);
    uint64_t n = 0;

    while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
        const struct fdp_key *kp[N_STABLE];
        const struct fdp_rule *rules[N_STABLE];
        for (int i = 0; i < N_STABLE; i++) {
            kp[i] = &c->keys[i];
        }
        fdp_table_read_lock();
        fdp_table_lookup_batch(c->table, kp, N_STABLE, rules);
        for (int i = 0; i < N_STABLE; i++) {
            /* The stable flow for key i always wins: cookie i + 1.  A
             * wrong answer is counted and the reader goes on, so that the
             * writer waiting for its progress is not left waiting. */
            struct fdp_flow_spec spec;
            if (!rules[i]) {
                if (!__atomic_fetch_add(&c->n_wrong, 1, __ATOMIC_RELAXED)) {
                    fprintf(stderr, "key %d: miss\n", i);
                }
                continue;
            }
            get_spec(rules[i], &spec);
            if (spec.cookie != (uint64_t) i + 1
                || fdp_actions_count(spec.actions) != 1) {
                if (!__atomic_fetch_add(&c->n_wrong, 1, __ATOMIC_RELAXED)) {
                    fprintf(stderr, "key %d: cookie %llu priority %u\n", i,
                            (unsigned long long) spec.cookie, spec.priority);
                }
            }
        }
        fdp_table_read_unlock();
        n++;
        unit_progress_bump(&c->workers.done[idx]);
    }
    __atomic_fetch_add(&c->lookups, n, __ATOMIC_RELAXED);
    return NULL;
}

/* Stops the reader_main() threads 'readers' of 'c', checks that they
 * saw only right answers and that they looked up at all, and destroys
 * the table. */
static void
stop_readers(struct conc *c, pthread_t readers[N_READERS])
{
    __atomic_store_n(&c->stop, true, __ATOMIC_RELAXED);
    for (int i = 0; i < N_READERS; i++) {
        pthread_join(readers[i], NULL);
    }
    ck_assert_msg(c->n_wrong == 0, "readers saw %llu wrong answers in %llu "
                  "batches", (unsigned long long) c->n_wrong,
                  (unsigned long long) c->lookups);
    ck_assert(c->lookups > 0);
    fdp_table_destroy(c->table);
}

START_TEST(concurrent_lookups_during_churn)
{
    struct conc c;
    struct unit_rng rng;
    pthread_t readers[N_READERS];

    memset(&c, 0, sizeof c);
    unit_rng_init(&rng, 33);
    ck_assert_int_eq(fdp_table_create(&c.table), 0);

    /* Stable flows: exact 5-tuples at priority 1000, cookie i + 1. */
    for (int i = 0; i < N_STABLE; i++) {
        struct fdp_match m;
        fdp__match_init(&m);
        fdp__match_set_masked(&m, FDP_F_DL_TYPE, 0x0800, 0xffff);
        fdp__match_set_masked(&m, FDP_F_NW_PROTO, 6, 0xff);
        fdp__match_set_masked(&m, FDP_F_NW_SRC, 0x0a000000 + i, 0xffffffff);
        fdp__match_set_masked(&m, FDP_F_TP_DST, 80, 0xffff);
        c.keys[i] = m.value;
        ck_assert_int_eq(table_insert(c.table, &m, 1000, i + 1, 0), 0);
    }
    for (int i = 0; i < N_READERS; i++) {
        pthread_create(&readers[i], NULL, reader_main, &c);
    }

    /* Churn: lower-priority flows that overlap the stable ones come and
     * go in transactions and one by one; the stable flows' actions are
     * replaced (same cookie); subtables appear and disappear. */
    for (int round = 0; round < 400; round++) {
        struct fdp_match m;
        bool txn = round % 3 == 0;
        if (txn) {
            fdp_table_begin(c.table);
        }
        for (int j = 0; j < 20; j++) {
            random_flow(&rng, &m, 40);
            table_insert(c.table, &m, (uint16_t) unit_rng_below(&rng, 999),
                         1000 + round, 0);
        }
        int i = (int) unit_rng_below(&rng, N_STABLE);
        struct fdp_match sm;
        fdp__match_init(&sm);
        fdp__match_set_masked(&sm, FDP_F_DL_TYPE, 0x0800, 0xffff);
        fdp__match_set_masked(&sm, FDP_F_NW_PROTO, 6, 0xff);
        fdp__match_set_masked(&sm, FDP_F_NW_SRC, 0x0a000000 + i, 0xffffffff);
        fdp__match_set_masked(&sm, FDP_F_TP_DST, 80, 0xffff);
        ck_assert_int_eq(table_insert(c.table, &sm, 1000, i + 1, 0), 0);
        if (txn && round % 2) {
            fdp_table_abort(c.table);
        } else if (txn) {
            fdp_table_commit(c.table);
        }
        if (round % 5 == 4) {
            /* Remove every churn flow: cookies 1000 and up, selected by
             * cookie bits 10..15 (the stable cookies are 1..64). */
            struct fdp_table_filter churn = { NULL, false, 0, 1024, 0xfc00 };
            size_t n;
            ck_assert_int_eq(fdp_table_remove(c.table, &churn, &n), 0);
        }
        if (round % 50 == 0) {
            fdp_table_run(c.table);
        }
        fdp_table_read_lock();
        for (int k = 0; k < N_STABLE; k++) {
            const struct fdp_rule *r = fdp_table_lookup(c.table, &c.keys[k]);
            ck_assert_msg(r != NULL, "round %d: key %d misses", round, k);
        }
        fdp_table_read_unlock();
        workers_wait(&c.workers, N_READERS, round);
    }
    stop_readers(&c, readers);
}
END_TEST

/* The winner of one key, and lookups of it that readers count while a
 * writer makes fdp_table_run() re-sort the view. */
struct known_answer {
    struct fdp_table *table;
    struct fdp_key key;
    uint64_t cookie;            /* The flow that must win, always. */
    bool stop;                  /* Atomic. */
    uint64_t n_lookups;         /* Atomic: summed over readers. */
    uint64_t n_wrong;           /* Atomic: answers other than 'cookie'. */
    struct workers workers;
};

static void *
known_answer_reader(void *ka_)
{
    struct known_answer *ka = ka_;
    int idx = workers_join(&ka->workers);
    uint64_t n = 0, wrong = 0;

    while (!__atomic_load_n(&ka->stop, __ATOMIC_RELAXED)) {
        fdp_table_read_lock();
        const struct fdp_rule *r = fdp_table_lookup(ka->table, &ka->key);
        struct fdp_flow_spec spec = { .cookie = 0 };
        if (r) {
            get_spec(r, &spec);
        }
        fdp_table_read_unlock();
        wrong += spec.cookie != ka->cookie;
        n++;
        unit_progress_bump(&ka->workers.done[idx]);
    }
    __atomic_fetch_add(&ka->n_lookups, n, __ATOMIC_RELAXED);
    __atomic_fetch_add(&ka->n_wrong, wrong, __ATOMIC_RELAXED);
    return NULL;
}

static void
remove_strict_text(struct fdp_table *t, const char *text)
{
    struct fdp_flow_spec spec;
    char *error;

    ck_assert_msg(!fdp_flow_parse(text, FDP_PARSE_MATCH_ONLY, &spec, &error),
                  "%s", error);
    struct fdp_table_filter filter = {
        .match = spec.match, .strict = true, .priority = spec.priority,
    };
    size_t n;
    ck_assert_int_eq(fdp_table_remove(t, &filter, &n), 0);
    ck_assert_uint_eq(n, 1);
    fdp_flow_spec_destroy(&spec);
}

/* Regression: fdp_table_run() lowered a subtable's max_priority before it
 * published the view re-sorted by it, so a lookup still walking the old
 * view stopped early at the lowered bound and missed a better flow in a
 * later subtable.  Here the key's winner C (priority 10, subtable
 * tp_dst) sits below subtable nw_dst, whose priority-15 flow comes and
 * goes; subtable nw_src (bound 20) first gives the key its priority-5
 * flow, and a stale-order walk that trusts nw_dst's tightened bound of 3
 * stops there and answers 0xa2 instead of 0xc1. */
START_TEST(run_lowers_bound_under_old_view)
{
    /* Filler flows make each fdp_table_run() walk long enough for readers
     * to land in the window between the bound store and the new view. */
    enum { N_FILLER = 4000, N_ROUNDS = 300, N_KA_READERS = N_READERS };
    struct known_answer ka = { .cookie = 0xc1 };
    pthread_t readers[N_KA_READERS];
    char *error;

    ck_assert_int_eq(fdp_table_create(&ka.table), 0);
    /* Tuple space only: the test is about the order of subtables. */
    fdp_table_set_max_masks(ka.table, 0);
    ck_assert_int_eq(fdp_table_begin(ka.table), 0);
    static const char *const flows[] = {
        "cookie=0xa1,priority=20,tcp,nw_src=9.9.9.9,actions=1",
        "cookie=0xa2,priority=5,tcp,nw_src=10.0.0.1,actions=1",
        "cookie=0xb1,priority=15,tcp,nw_dst=9.9.9.9,actions=1",
        "cookie=0xb2,priority=3,tcp,nw_dst=8.8.8.8,actions=1",
        "cookie=0xc1,priority=10,tcp,tp_dst=80,actions=1",
    };
    for (size_t i = 0; i < FDP_ARRAY_SIZE(flows); i++) {
        ck_assert_int_eq(insert_text(ka.table, flows[i], 0), 0);
    }
    for (int i = 0; i < N_FILLER; i++) {
        char text[96];
        snprintf(text, sizeof text, "priority=1,udp,nw_src=172.16.%d.%d,"
                 "actions=1", (i >> 8) & 255, i & 255);
        ck_assert_int_eq(insert_text(ka.table, text, 0), 0);
    }
    ck_assert_int_eq(fdp_table_commit(ka.table), 0);
    ck_assert_int_eq(fdp_packet_parse("tcp,nw_src=10.0.0.1,nw_dst=10.0.0.2,"
                                      "tp_src=1,tp_dst=80", &ka.key, &error),
                     0);

    for (int i = 0; i < N_KA_READERS; i++) {
        pthread_create(&readers[i], NULL, known_answer_reader, &ka);
    }
    for (int round = 0; round < N_ROUNDS; round++) {
        remove_strict_text(ka.table, "priority=15,tcp,nw_dst=9.9.9.9");
        fdp_table_run(ka.table);
        ck_assert_int_eq(insert_text(ka.table, flows[2], 0), 0);
        fdp_table_run(ka.table);
        workers_wait(&ka.workers, N_KA_READERS, round);
    }
    __atomic_store_n(&ka.stop, true, __ATOMIC_RELAXED);
    for (int i = 0; i < N_KA_READERS; i++) {
        pthread_join(readers[i], NULL);
    }
    ck_assert(ka.n_lookups > 0);
    ck_assert_msg(ka.n_wrong == 0, "%llu of %llu lookups missed flow 0xc1",
                  (unsigned long long) ka.n_wrong,
                  (unsigned long long) ka.n_lookups);
    fdp_table_destroy(ka.table);
}
END_TEST

/* A dumper counting the flows of every dump while a writer changes how
 * they are stored, never how many there are. */
struct dump_counter {
    struct fdp_table *table;
    size_t expected;
    bool stop;                  /* Atomic. */
    uint64_t n_dumps;           /* Written by the dumper, read after join. */
    uint64_t n_wrong;
    size_t last_wrong;
    struct workers workers;     /* One worker: the dumper. */
};

static bool
count_flow_cb(const struct fdp_rule *rule, void *n_)
{
    size_t *n = n_;

    (void) rule;
    (*n)++;
    return true;
}

static void *
dump_counter_main(void *dc_)
{
    struct dump_counter *dc = dc_;
    int idx = workers_join(&dc->workers);

    while (!__atomic_load_n(&dc->stop, __ATOMIC_RELAXED)) {
        size_t n = 0;
        fdp_table_read_lock();
        fdp_table_for_each(dc->table, count_flow_cb, &n);
        fdp_table_read_unlock();
        if (n != dc->expected) {
            dc->n_wrong++;
            dc->last_wrong = n;
        }
        dc->n_dumps++;
        unit_progress_bump(&dc->workers.done[idx]);
    }
    return NULL;
}

/* 12 flows over 12 masks (nw_src prefixes /8 to /19): past the default
 * budget of 8, so fdp_table_run() moves 4 masks' flows to pipapo. */
static void
load_twelve_masks(struct fdp_table *t)
{
    for (int i = 0; i < 12; i++) {
        char text[96];
        snprintf(text, sizeof text, "priority=%d,tcp,nw_src=10.0.0.0/%d,"
                 "actions=1", i, i + 8);
        ck_assert_int_eq(insert_text(t, text, 0), 0);
    }
}

/* Regression: when fdp_table_run() moved flows from tuple space to pipapo
 * it published the pipapo snapshot holding them but unlinked them from
 * tuple space only after a grace period, and a dump in between, walking
 * both, reported them twice (16 flows of 12).
 *
 * Regression: on a loaded machine the writer finished its rounds before
 * the dumper ran once (n_dumps == 0); each round now waits until the
 * dumper has finished a dump since the round before. */
START_TEST(dump_during_mask_trim_sees_each_flow_once)
{
    enum { N_ROUNDS = 200 };
    struct dump_counter dc = { .expected = 12 };
    pthread_t dumper;

    ck_assert_int_eq(fdp_table_create(&dc.table), 0);
    load_twelve_masks(dc.table);
    pthread_create(&dumper, NULL, dump_counter_main, &dc);
    for (int round = 0; round < N_ROUNDS; round++) {
        fdp_table_run(dc.table);
        /* Put every flow back in tuple space for the next run, in one
         * transaction so that dumps still see 12. */
        struct fdp_table_filter all = { .match = NULL };
        size_t n;
        ck_assert_int_eq(fdp_table_begin(dc.table), 0);
        ck_assert_int_eq(fdp_table_remove(dc.table, &all, &n), 0);
        ck_assert_uint_eq(n, 12);
        load_twelve_masks(dc.table);
        ck_assert_int_eq(fdp_table_commit(dc.table), 0);
        workers_wait(&dc.workers, 1, round);
    }
    __atomic_store_n(&dc.stop, true, __ATOMIC_RELAXED);
    pthread_join(dumper, NULL);

    struct fdp_table_stats stats;
    fdp_table_run(dc.table);
    fdp_table_get_stats(dc.table, &stats);
    ck_assert_uint_eq(stats.n_flows, 12);
    ck_assert_uint_eq(stats.n_pipapo_rules, 4);
    ck_assert_uint_ge(dc.n_dumps, N_ROUNDS);
    ck_assert_msg(dc.n_wrong == 0, "%llu of %llu dumps were wrong (last: %zu "
                  "flows)", (unsigned long long) dc.n_wrong,
                  (unsigned long long) dc.n_dumps, dc.last_wrong);
    fdp_table_destroy(dc.table);
}
END_TEST

/* A thread that holds a transaction open until told to commit. */
struct open_txn {
    struct fdp_table *table;
    uint64_t open;              /* Atomic: 1 once the transaction began. */
    uint64_t release;           /* Atomic: 1 to commit now. */
};

static void *
open_txn_main(void *ot_)
{
    struct open_txn *ot = ot_;

    ck_assert_int_eq(fdp_table_begin(ot->table), 0);
    ck_assert_int_eq(insert_text(ot->table, "udp,nw_src=1.2.3.4,actions=1",
                                 0), 0);
    unit_progress_bump(&ot->open);
    unit_progress_wait(&ot->release, 1, "transaction thread: release");
    ck_assert_int_eq(fdp_table_commit(ot->table), 0);
    return NULL;
}

/* Regression: fdp_table_get_stats() took the table's mutex, so it waited
 * for another thread's open transaction although table.h says stats never
 * block.  If it blocks here the test deadlocks and times out. */
START_TEST(get_stats_does_not_wait_for_open_transaction)
{
    struct open_txn ot = { .open = 0 };
    struct fdp_table_stats before, during, after;
    pthread_t thread;

    ck_assert_int_eq(fdp_table_create(&ot.table), 0);
    ck_assert_int_eq(insert_text(ot.table, "tcp,tp_dst=80,actions=1", 0), 0);
    fdp_table_get_stats(ot.table, &before);
    pthread_create(&thread, NULL, open_txn_main, &ot);
    unit_progress_wait(&ot.open, 1, "transaction thread: begin");
    fdp_table_get_stats(ot.table, &during);
    unit_progress_bump(&ot.release);
    pthread_join(thread, NULL);
    fdp_table_get_stats(ot.table, &after);

    /* The open transaction does not show; its commit does. */
    ck_assert_uint_eq(before.n_flows, 1);
    ck_assert_uint_eq(during.n_flows, 1);
    ck_assert_uint_eq(during.n_masks, 1);
    ck_assert_uint_eq(after.n_flows, 2);
    ck_assert_uint_eq(after.n_masks, 2);
    /* Memory counts each rule with its statistics object, and the new
     * subtable. */
    ck_assert_uint_ge(after.memory_bytes - before.memory_bytes,
                      sizeof(struct fdp_rule) + sizeof(struct fdp__rule_counters)
                      + sizeof(struct tss_subtable));
    fdp_table_destroy(ot.table);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* ClassBench.                                                             */

/* The ClassBench rule sets (file order is priority order) against the
 * reference, on their traces and on headers drawn inside each rule. */
START_TEST(classbench)
{
    static const char *const sets[] = {
        "acl_1k", "fw_1k", "ipc_1k", "acl_10k", "fw_10k", "ipc_10k",
    };
    /* The 10k sets take a sample, so that the brute-force reference stays
     * within seconds (the whole of them takes 10 s here): the first 10,000
     * trace headers, and headers inside every 2nd rule. */
    bool sampled = _i >= 3;
    const char *dir = getenv("FLOWDP_CLASSBENCH_DIR");
    char path[4096];

    if (!dir) {
        printf("classbench: FLOWDP_CLASSBENCH_DIR unset, skipped\n");
        return;
    }
    snprintf(path, sizeof path, "%s/%s", dir, sets[_i]);
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("classbench: %s missing, skipped\n", path);
        return;
    }

    struct unit_rng rng;
    struct fdp_table *t;
    struct ref ref = { NULL, 0, 0, 0 };
    char line[512];
    unit_rng_init(&rng, 70 + (uint64_t) _i);
    ck_assert_int_eq(fdp_table_create(&t), 0);
    ck_assert_int_eq(fdp_table_begin(t), 0);
    size_t n_rules = 0;
    struct fdp_match *rules = malloc(20000 * sizeof *rules);
    while (fgets(line, sizeof line, f) && n_rules < 20000) {
        fdp__match_init(&rules[n_rules]);
        ck_assert_msg(classbench_parse_rule(line, &rules[n_rules]),
                      "%s: bad rule \"%s\"", path, line);
        uint16_t priority = (uint16_t) (60000 - n_rules);
        ck_assert_int_eq(table_insert(t, &rules[n_rules], priority,
                                      n_rules + 1, 0), 0);
        ref_insert(&ref, &rules[n_rules], priority, n_rules + 1);
        n_rules++;
    }
    fclose(f);
    ck_assert_int_eq(fdp_table_commit(t), 0);
    fdp_table_run(t);

    /* The trace. */
    snprintf(path, sizeof path, "%s/%s_trace", dir, sets[_i]);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n_trace = 0;
    fdp_table_read_lock();
    while (fgets(line, sizeof line, f) && (!sampled || n_trace < 10000)) {
        struct fdp_key key;
        if (!classbench_parse_header(line, &key)) {
            continue;
        }
        const struct ref_flow *want = ref_lookup(&ref, &key);
        const struct fdp_rule *got = fdp_table_lookup(t, &key);
        struct fdp_flow_spec spec = { .cookie = 0 };
        if (got) {
            get_spec(got, &spec);
        }
        ck_assert_msg(!want == !got && (!want || want->cookie == spec.cookie),
                      "%s line %zu: table %llu, reference %llu", path,
                      n_trace + 1, (unsigned long long) spec.cookie,
                      want ? (unsigned long long) want->cookie : 0ull);
        n_trace++;
    }
    fclose(f);

    /* Headers inside every rule (every 2nd of a sampled set). */
    for (size_t i = 0; i < n_rules; i += sampled ? 2 : 1) {
        const struct fdp_match *m = &rules[i];
        struct fdp_key key;
        classbench_key(&key, 0, 0, 0, 0, 0);
        static const enum fdp_field fields[] = {
            FDP_F_NW_SRC, FDP_F_NW_DST, FDP_F_TP_SRC, FDP_F_TP_DST,
            FDP_F_NW_PROTO,
        };
        for (size_t j = 0; j < FDP_ARRAY_SIZE(fields); j++) {
            fdp_u128 v = fdp__key_get(&m->value, fields[j]);
            if (fdp__match_has_range(m, fields[j])) {
                fdp_u128 hi = fdp__key_get(&m->hi, fields[j]);
                v += unit_rng_below(&rng, (uint32_t) (hi - v) + 1);
            } else {
                fdp_u128 mask = fdp__key_get(&m->mask, fields[j]);
                v |= (fdp_u128) unit_rng_next(&rng)
                     & ~mask & fdp__ones(fdp__field(fields[j])->n_bits);
            }
            fdp__key_set(&key, fields[j], v);
        }
        const struct ref_flow *want = ref_lookup(&ref, &key);
        const struct fdp_rule *got = fdp_table_lookup(t, &key);
        ck_assert_ptr_nonnull(want);
        ck_assert_ptr_nonnull(got);
        struct fdp_flow_spec spec;
        get_spec(got, &spec);
        ck_assert_uint_eq(spec.cookie, want->cookie);
    }
    fdp_table_read_unlock();
    ck_assert(n_trace > 1000);
    fdp_table_destroy(t);
    free(rules);
    free(ref.flows);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Ties.                                                                   */

/* A megaflow-like flow of mask class 'cls' (0..n): nw_src's top byte is
 * 'top' exact, and per class one of nw_dst /24, tp_src or tp_dst exact
 * with random values; 'i' varies the value within the class. */
static void
megaflow(struct fdp_match *m, unsigned int cls, uint32_t top, uint32_t i)
{
    fdp__match_init(m);
    fdp__match_set_masked(m, FDP_F_DL_TYPE, 0x0800, 0xffff);
    fdp__match_set_masked(m, FDP_F_NW_PROTO, 6, 0xff);
    fdp__match_set_masked(m, FDP_F_NW_SRC, (top << 24) | (i << 8),
                          0xffffff00u);
    switch (cls % 3) {
    case 0:
        fdp__match_set_masked(m, FDP_F_NW_DST, 0xc0a80000u | (i << 8),
                              0xffffff00u);
        break;
    case 1:
        fdp__match_set_masked(m, FDP_F_TP_SRC, 1000 + i, 0xffff);
        break;
    default:
        fdp__match_set_masked(m, FDP_F_TP_DST, 2000 + i, 0xffff);
        break;
    }
    if (cls >= 3) {
        /* More classes: a different prefix length of nw_src. */
        fdp__match_set_masked(m, FDP_F_NW_SRC, (top << 24) | (i << 8),
                              ~((UINT32_C(1) << (cls % 8)) - 1) << 8);
    }
}

/* The subtables visited by the lookups of 'keys' (n of them). */
static uint64_t
visits(struct fdp_table *t, const struct fdp_key *keys, size_t n)
{
    struct fdp_table_stats before, after;

    fdp_table_get_stats(t, &before);
    fdp_table_read_lock();
    for (size_t i = 0; i < n; i++) {
        fdp_table_lookup(t, &keys[i]);
    }
    fdp_table_read_unlock();
    fdp_table_get_stats(t, &after);
    return after.n_subtables_visited - before.n_subtables_visited;
}

/* A level whose flows in different sub-tables cannot overlap is tie-free
 * once fdp_table_run() has looked, and a match there ends the walk; an
 * overlapping flow added at that level makes it "may tie" at once (the
 * flow added first keeps winning), and removing it makes the level
 * tie-free again at the next run.  Lookups are checked against the
 * reference throughout. */
START_TEST(tie_free_levels_end_the_walk)
{
    struct fdp_table *t;
    struct ref ref = { NULL, 0, 0, 0 };
    struct fdp_key keys[30];
    uint64_t cookie = 1;

    ck_assert_int_eq(fdp_table_create(&t), 0);
    fdp_table_set_max_masks(t, 0);          /* Tuple space only. */
    /* 6 masks, disjoint by nw_src's top byte (one per class); class 0 has
     * the most flows, so that a run ranks it first (no hits yet), and is
     * added last, so that the other subtables' earliest flows (min_seq)
     * are older than its flows and only tie-freedom ends the walk. */
    for (unsigned int c = 0; c < 6; c++) {
        unsigned int cls = (c + 1) % 6;
        for (uint32_t i = 0; i < (cls ? 10u : 30u); i++) {
            struct fdp_match m;
            megaflow(&m, cls, 10 + cls, i);
            ck_assert_int_eq(table_insert(t, &m, 100, cookie, 0), 0);
            ref_insert(&ref, &m, 100, cookie++);
            if (!cls) {
                keys[i] = m.value;
            }
        }
    }
    struct unit_rng rng;
    unit_rng_init(&rng, 71);
    check_lookups(&rng, t, &ref, 0);
    /* Not yet looked at: every lookup walks all 6. */
    ck_assert_uint_eq(visits(t, keys, 30), 30 * 6);
    fdp_table_run(t);
    ck_assert_uint_eq(visits(t, keys, 30), 30);
    check_lookups(&rng, t, &ref, 1);

    /* An overlapping flow at the same level, in a new mask: nw_dst
     * 192.168.0.0/24 and nothing else (so it overlaps class 0's flow
     * i = 0, cookie 51), added last, so the class-0 flow still wins. */
    struct fdp_match x;
    fdp__match_init(&x);
    fdp__match_set_masked(&x, FDP_F_DL_TYPE, 0x0800, 0xffff);
    fdp__match_set_masked(&x, FDP_F_NW_PROTO, 6, 0xff);
    fdp__match_set_masked(&x, FDP_F_NW_DST, 0xc0a80000u, 0xffffff00u);
    uint64_t x_cookie = cookie++;
    ck_assert_int_eq(table_insert(t, &x, 100, x_cookie, 0), 0);
    ref_insert(&ref, &x, 100, x_cookie);
    for (int pass = 0; pass < 2; pass++) {
        fdp_table_read_lock();
        const struct fdp_rule *r = fdp_table_lookup(t, &keys[0]);
        struct fdp_flow_spec spec;
        ck_assert_ptr_nonnull(r);
        get_spec(r, &spec);
        ck_assert_uint_eq(spec.cookie, 51);
        fdp_table_read_unlock();
        check_lookups(&rng, t, &ref, 2 + pass);
        ck_assert_uint_gt(visits(t, keys, 30), 30);
        fdp_table_run(t);       /* The overlap is real: still a tie. */
    }

    /* Remove it: tie-free again after the next run. */
    struct fdp_table_filter filter = {
        .match = &x, .strict = true, .priority = 100,
    };
    size_t n;
    ck_assert_int_eq(fdp_table_remove(t, &filter, &n), 0);
    ck_assert_uint_eq(n, 1);
    struct ref_flow *xf = ref_find(&ref, &x, 100);
    ck_assert_ptr_nonnull(xf);
    xf->live = false;
    fdp_table_run(t);
    ck_assert_uint_eq(visits(t, keys, 30), 30);
    check_lookups(&rng, t, &ref, 4);
    fdp_table_destroy(t);
    free(ref.flows);
}
END_TEST

/* Random megaflow-like flows at two priorities over a few masks, where
 * overlaps across masks come and go (nw_src top bytes from a small set,
 * some flows wildcarding it), with fdp_table_run() at random points:
 * every lookup against the reference after every change. */
START_TEST(ties_differential)
{
    struct unit_rng rng;
    struct fdp_table *t;
    struct ref ref = { NULL, 0, 0, 0 };
    uint64_t cookie = 1;

    unit_rng_init(&rng, 72);
    ck_assert_int_eq(fdp_table_create(&t), 0);
    for (int round = 0; round < 1500; round++) {
        unsigned int op = unit_rng_below(&rng, 10);
        if (op < 6 || !ref.n) {
            struct fdp_match m;
            unsigned int cls = unit_rng_below(&rng, 12);
            megaflow(&m, cls, 10 + unit_rng_below(&rng, 4),
                     unit_rng_below(&rng, 8));
            if (unit_rng_below(&rng, 8) == 0) {
                /* Wildcard nw_src: overlaps other classes. */
                fdp__match_set_masked(&m, FDP_F_NW_SRC, 0, 0);
            }
            uint16_t priority = unit_rng_below(&rng, 2) ? 100 : 200;
            ck_assert_int_eq(table_insert(t, &m, priority, cookie, 0), 0);
            ref_insert(&ref, &m, priority, cookie++);
        } else if (op < 9) {
            /* A flow removed earlier may have been added again: the live
             * entry with its match is the one the table removes. */
            struct ref_flow *f = &ref.flows[unit_rng_below(&rng, ref.n)];
            struct ref_flow *live = ref_find(&ref, &f->match, f->priority);
            struct fdp_table_filter filter = {
                .match = &f->match, .strict = true, .priority = f->priority,
            };
            size_t n;
            ck_assert_int_eq(fdp_table_remove(t, &filter, &n), 0);
            ck_assert_uint_eq(n, live != NULL);
            if (live) {
                live->live = false;
            }
        } else {
            fdp_table_run(t);
        }
        check_lookups(&rng, t, &ref, round);
    }
    fdp_table_destroy(t);
    free(ref.flows);
}
END_TEST

/* Readers look up a key whose winner A (priority 100, exact 5-tuple)
 * never changes, while a writer adds and removes B, an overlapping flow
 * at the same priority added after A, in a subtable that ranks first (it
 * holds 50 other flows), and runs fdp_table_run() in between: a stale
 * "tie-free" would let the walk stop at B. */
struct tie_race {
    struct fdp_table *table;
    struct fdp_key key;
    bool stop;                  /* Atomic. */
    uint64_t n_wrong;           /* Atomic. */
    uint64_t n_lookups;         /* Atomic. */
    struct workers workers;
};

static void *
tie_race_reader(void *tr_)
{
    struct tie_race *tr = tr_;
    int idx = workers_join(&tr->workers);
    uint64_t n = 0, wrong = 0;

    while (!__atomic_load_n(&tr->stop, __ATOMIC_RELAXED)) {
        fdp_table_read_lock();
        const struct fdp_rule *r = fdp_table_lookup(tr->table, &tr->key);
        struct fdp_flow_spec spec = { .cookie = 0 };
        if (r) {
            get_spec(r, &spec);
        }
        fdp_table_read_unlock();
        wrong += spec.cookie != 1;
        n++;
        unit_progress_bump(&tr->workers.done[idx]);
    }
    __atomic_fetch_add(&tr->n_wrong, wrong, __ATOMIC_RELAXED);
    __atomic_fetch_add(&tr->n_lookups, n, __ATOMIC_RELAXED);
    return NULL;
}

START_TEST(tie_bookkeeping_under_concurrent_lookups)
{
    struct tie_race tr;
    pthread_t readers[N_READERS];
    struct fdp_match a, b;

    memset(&tr, 0, sizeof tr);
    ck_assert_int_eq(fdp_table_create(&tr.table), 0);
    fdp_table_set_max_masks(tr.table, 0);
    fdp__match_init(&a);
    fdp__match_set_masked(&a, FDP_F_DL_TYPE, 0x0800, 0xffff);
    fdp__match_set_masked(&a, FDP_F_NW_PROTO, 6, 0xff);
    fdp__match_set_masked(&a, FDP_F_NW_SRC, 0x0a000001, 0xffffffff);
    fdp__match_set_masked(&a, FDP_F_NW_DST, 0x0a000002, 0xffffffff);
    fdp__match_set_masked(&a, FDP_F_TP_DST, 80, 0xffff);
    tr.key = a.value;
    ck_assert_int_eq(table_insert(tr.table, &a, 100, 1, 0), 0);
    /* B's subtable: tp_dst exact; 50 flows that miss the key. */
    for (uint32_t i = 0; i < 50; i++) {
        struct fdp_match m;
        fdp__match_init(&m);
        fdp__match_set_masked(&m, FDP_F_DL_TYPE, 0x0800, 0xffff);
        fdp__match_set_masked(&m, FDP_F_NW_PROTO, 6, 0xff);
        fdp__match_set_masked(&m, FDP_F_TP_DST, 1000 + i, 0xffff);
        ck_assert_int_eq(table_insert(tr.table, &m, 100, 100 + i, 0), 0);
    }
    b = a;
    fdp__match_init(&b);
    fdp__match_set_masked(&b, FDP_F_DL_TYPE, 0x0800, 0xffff);
    fdp__match_set_masked(&b, FDP_F_NW_PROTO, 6, 0xff);
    fdp__match_set_masked(&b, FDP_F_TP_DST, 80, 0xffff);
    fdp_table_run(tr.table);
    for (int i = 0; i < N_READERS; i++) {
        pthread_create(&readers[i], NULL, tie_race_reader, &tr);
    }
    for (int round = 0; round < 300; round++) {
        ck_assert_int_eq(table_insert(tr.table, &b, 100, 2, 0), 0);
        if (round % 2) {
            fdp_table_run(tr.table);
        }
        struct fdp_table_filter filter = {
            .match = &b, .strict = true, .priority = 100,
        };
        size_t n;
        ck_assert_int_eq(fdp_table_remove(tr.table, &filter, &n), 0);
        ck_assert_uint_eq(n, 1);
        fdp_table_run(tr.table);
        workers_wait(&tr.workers, N_READERS, round);
    }
    __atomic_store_n(&tr.stop, true, __ATOMIC_RELAXED);
    for (int i = 0; i < N_READERS; i++) {
        pthread_join(readers[i], NULL);
    }
    ck_assert(tr.n_lookups > 0);
    ck_assert_uint_eq(tr.n_wrong, 0);
    fdp_table_destroy(tr.table);
}
END_TEST

/* A range flow "udp,nw_dst=LO-HI,tp_dst=PLO-PHI" in 'm'. */
static void
range_flow(struct fdp_match *m, uint32_t nw_lo, uint32_t nw_hi,
           uint16_t tp_lo, uint16_t tp_hi)
{
    fdp__match_init(m);
    fdp__match_set_masked(m, FDP_F_DL_TYPE, 0x0800, 0xffff);
    fdp__match_set_masked(m, FDP_F_NW_PROTO, 17, 0xff);
    ck_assert_int_eq(fdp__match_set_range(m, FDP_F_NW_DST, nw_lo, nw_hi), 0);
    ck_assert_int_eq(fdp__match_set_range(m, FDP_F_TP_DST, tp_lo, tp_hi), 0);
}

/* Readers of stable keys in a pipapo sub-table of range flows, while a
 * writer adds and removes other range flows one at a time (each change
 * published as a delta or tombstone, lib/pipapo.c "Incremental updates")
 * and fdp_table_run() folds them in now and then: every reader answer is
 * the stable flow, and after every change the writer's own lookups match
 * the reference.  Under ThreadSanitizer (the "concurrency" case) this
 * checks the hand-over of shared tables between snapshots. */
START_TEST(incremental_pipapo_under_concurrent_lookups)
{
    /* Loop 1: leaves of 2 rules, so that partitions split, empty and fold
     * back while the readers look up (lib/cut.c). */
    uint32_t saved_leaf_max = fdp__cut_leaf_max;
    if (_i == 1) {
        fdp__cut_leaf_max = 2;
    }
    struct conc c;
    struct unit_rng rng;
    pthread_t readers[N_READERS];
    struct ref ref = { NULL, 0, 0, 0 };
    struct fdp_match m;
    uint64_t cookie = 1000;

    memset(&c, 0, sizeof c);
    unit_rng_init(&rng, 90);
    ck_assert_int_eq(fdp_table_create(&c.table), 0);

    /* Stable flows: 10.1.i.0-10.1.i.99, ports 5000-5099, priority 1000,
     * cookie i + 1; no other flow at 1000 or above matches their keys. */
    for (int i = 0; i < N_STABLE; i++) {
        uint32_t base = 0x0a010000 + ((uint32_t) i << 8);
        range_flow(&m, base, base + 99, 5000, 5099);
        ck_assert_int_eq(table_insert(c.table, &m, 1000, i + 1, 0), 0);
        ref_insert(&ref, &m, 1000, i + 1);
        memset(&c.keys[i], 0, sizeof c.keys[i]);
        fdp__key_set(&c.keys[i], FDP_F_DL_TYPE, 0x0800);
        fdp__key_set(&c.keys[i], FDP_F_NW_PROTO, 17);
        fdp__key_set(&c.keys[i], FDP_F_NW_DST, base + 7 + (uint32_t) i);
        fdp__key_set(&c.keys[i], FDP_F_TP_DST, 5000 + i);
    }
    /* A body of other range flows, so that the sub-table takes changes
     * incrementally. */
    for (int i = 0; i < 200; i++) {
        uint32_t lo = 0x0a020000 + (uint32_t) unit_rng_below(&rng, 0x10000);
        uint16_t plo = (uint16_t) unit_rng_below(&rng, 60000);
        range_flow(&m, lo, lo + unit_rng_below(&rng, 500), plo,
                   (uint16_t) (plo + unit_rng_below(&rng, 3000)));
        uint16_t prio = (uint16_t) unit_rng_below(&rng, 3000);
        ck_assert_int_eq(table_insert(c.table, &m, prio, cookie, 0), 0);
        ref_insert(&ref, &m, prio, cookie++);
    }
    fdp_table_run(c.table);
    for (int i = 0; i < N_READERS; i++) {
        pthread_create(&readers[i], NULL, reader_main, &c);
    }

    for (int round = 0; round < 600; round++) {
        if (unit_rng_below(&rng, 2) || ref.n <= N_STABLE + 200) {
            /* Add: below the stable flows where it may overlap them,
             * anywhere in priority where it cannot. */
            bool overlap = unit_rng_below(&rng, 2);
            uint32_t lo = overlap
                          ? 0x0a010000 + (uint32_t) unit_rng_below(&rng,
                                                                   0x4000)
                          : 0x0a020000 + (uint32_t) unit_rng_below(&rng,
                                                                   0x10000);
            uint16_t plo = (uint16_t) unit_rng_below(&rng, 60000);
            range_flow(&m, lo, lo + unit_rng_below(&rng, 2000), plo,
                       (uint16_t) (plo + unit_rng_below(&rng, 5000)));
            uint16_t prio = overlap ? (uint16_t) unit_rng_below(&rng, 1000)
                                    : (uint16_t) unit_rng_below(&rng, 3000);
            ck_assert_int_eq(table_insert(c.table, &m, prio, cookie, 0), 0);
            ref_insert(&ref, &m, prio, cookie++);
        } else {
            /* Remove a live flow that is not a stable one. */
            struct ref_flow *f;
            do {
                f = &ref.flows[N_STABLE + unit_rng_below(&rng,
                                                         ref.n - N_STABLE)];
            } while (!f->live);
            struct fdp_table_filter filter = {
                .match = &f->match, .strict = true, .priority = f->priority,
            };
            size_t n;
            ck_assert_int_eq(fdp_table_remove(c.table, &filter, &n), 0);
            ck_assert_uint_eq(n, 1);
            f->live = false;
        }
        if (round % 40 == 39) {
            fdp_table_run(c.table);
        }

        /* The writer's view: keys inside random live flows. */
        fdp_table_read_lock();
        for (int k = 0; k < 8; k++) {
            const struct ref_flow *f = &ref.flows[unit_rng_below(&rng,
                                                                 ref.n)];
            struct fdp_key key;
            memset(&key, 0, sizeof key);
            fdp__key_set(&key, FDP_F_DL_TYPE, 0x0800);
            fdp__key_set(&key, FDP_F_NW_PROTO, 17);
            fdp__key_set(&key, FDP_F_NW_DST,
                         fdp__key_get(&f->match.hi, FDP_F_NW_DST));
            fdp__key_set(&key, FDP_F_TP_DST,
                         fdp__key_get(&f->match.value, FDP_F_TP_DST));
            const struct ref_flow *want = ref_lookup(&ref, &key);
            const struct fdp_rule *got = fdp_table_lookup(c.table, &key);
            struct fdp_flow_spec spec = { .cookie = 0 };
            if (got) {
                get_spec(got, &spec);
            }
            ck_assert_msg(!want == !got && (!want || want->cookie
                                                     == spec.cookie),
                          "round %d: table %#llx, reference %#llx (seed "
                          "%llu)", round, (unsigned long long) spec.cookie,
                          want ? (unsigned long long) want->cookie : 0ull,
                          (unsigned long long) unit_seed());
        }
        fdp_table_read_unlock();
        workers_wait(&c.workers, N_READERS, round);
    }
    stop_readers(&c, readers);
    free(ref.flows);
    fdp__cut_leaf_max = saved_leaf_max;
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("table");
    TCase *tc = unit_tcase(s, "table");

    tcase_add_test(tc, differential_few_masks);
    tcase_add_test(tc, differential_many_masks);
    tcase_add_test(tc, differential_mixed_ranges);
    tcase_add_test(tc, differential_mixed_few_masks);
    tcase_add_test(tc, differential_large);
    tcase_add_test(tc, differential_partitions);
    tcase_add_test(tc, partition_leaf_common_bits);
    tcase_add_test(tc, partition_scan_avx2_matches_generic);
    tcase_add_test(tc, differential_pure_tuple_space);
    tcase_add_test(tc, failed_bulk_change_leaves_table_unchanged);
    tcase_add_test(tc, equal_priority_first_added_wins);
    tcase_add_test(tc, strict_filter_null_match_selects_catch_all);
    tcase_add_test(tc, modify_sets_new_cookie_and_actions);
    tcase_add_test(tc, hard_timeout_counted_from_creation_not_last_modification);
    tcase_add_test(tc, actions_must_suit_the_match);
    tcase_add_test(tc, hash_flooding);
    tcase_add_test(tc, subtable_stats_per_structure);
    tcase_add_test(tc, tie_free_levels_end_the_walk);
    tcase_add_test(tc, ties_differential);
    tcase_add_test(tc, mask_budget_at_insert);
    /* Its own case, so that the TSan job can run it alone
     * (CK_RUN_CASE=concurrency). */
    tc = unit_tcase(s, "concurrency");
    tcase_add_test(tc, concurrent_lookups_during_churn);
    tcase_add_test(tc, run_lowers_bound_under_old_view);
    tcase_add_test(tc, dump_during_mask_trim_sees_each_flow_once);
    tcase_add_test(tc, get_stats_does_not_wait_for_open_transaction);
    tcase_add_test(tc, tie_bookkeeping_under_concurrent_lookups);
    tcase_add_loop_test(tc, incremental_pipapo_under_concurrent_lookups, 0,
                        2);
    tc = unit_tcase(s, "classbench");
    tcase_add_loop_test(tc, classbench, 0, 6);
    return unit_run(s);
}
