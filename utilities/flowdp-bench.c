/*
 * flowdp-bench: flowdp's benchmarks.
 *
 * usage: flowdp-bench [--json] [--quick] [--seconds S] [--cpu N] [SUITE...]
 *
 * Each suite prints a table, or with --json one JSON object per result:
 *   {"suite","case","impl","entries","ns_per_op","mops","bytes"}
 * Figures are medians of several timed runs, each long enough to swamp the
 * clock's resolution; compare implementations as ratios within one run,
 * since the machines we measure on are shared and noisy.
 *
 * Suites:
 *   hash   ns per flow hash of 16..512-byte keys for each implementation:
 *          tput-N hashes independent keys (throughput), lat-N feeds each
 *          hash into the next key (latency).
 *   tss    ns per lookup (batches of 32 through fdp_table_lookup_batch)
 *          in tables of FLOWS flows over MASKS masks: FLOWSxMASKS packets
 *          that hit (all flows one priority), -prio (every flow its own
 *          priority), -miss (packets that hit nothing); flood-65536 and
 *          random-65536: 2^16 exact 5-tuples that all collide under CRC32C
 *          versus 2^16 random ones.  impl is the fast hash (crc32c,
 *          jhash2).
 *   pipapo the performance workloads of the kernel's nft_concat_range.sh,
 *          built as that script builds them (entries + 1 two-value ranges
 *          of consecutive values per field; proto a single value), looked
 *          up with each implementation (generic, avx2): case TYPE probes
 *          the last entry, TYPE-random random entries; TYPE-insert is the
 *          build rate (ns per entry, all entries in one snapshot).  bytes
 *          is the snapshot's memory.
 *   table  ClassBench rule sets through the whole table (bench-table.c).
 *   peer-acl  the same through DPDK's rte_acl, with --with-dpdk
 *          (bench-acl.c).
 *   peer-ovs  Open vSwitch 3.1's classifier (as ofproto configures it) and
 *          its userspace datapath's dpcls, with --with-ovs-source=DIR
 *          (bench-ovs.c): the same ovs-ofctl flow texts parsed by each
 *          side's parser and the same packets, flowdp and OVS in one run;
 *          cases exact-1000x1, megaflow-1000xM (M = 10, 100, 1000 masks,
 *          disjoint flows), prio-1000x100 (every flow its own priority)
 *          and insert-CASE (ns per flow to insert them all).
 *   ring, datapath  descriptor rings and the whole datapath (bench-dp.c).
 * Every result also carries "spread": (max - min) / median of its runs.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "flowdp/flowdp.h"
#include "utilities/bench.h"
#include "utilities/tool.h"
#include "lib/hash-private.h"
#include "lib/actions.h"
#include "lib/match.h"
#include "lib/pipapo.h"
#include "lib/tss.h"
#include "lib/util.h"

const char *program_name = "flowdp-bench";

bool json_output;
bool quick;
double seconds_per_case;            /* --seconds; 0: the default. */
static long max_masks = -1;         /* --max-masks; -1: the default. */

/* ---------------------------------------------------------------------- */
/* Timing and reporting.                                                   */

double
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

volatile uint64_t sink;

/* The spread of the last measure(): (max - min) / median of its runs.
 * Every report() follows the measure() it reports (or no_spread()). */
static double last_spread;

void
no_spread(void)
{
    last_spread = 0;
}

void
report_header(const char *suite)
{
    if (!json_output) {
        printf("\n== %s (CPU level %s) ==\n", suite,
               fdp_cpu_level_name(fdp_cpu_level()));
        printf("%-22s %-12s %10s %12s %10s %8s %10s\n",
               "case", "impl", "entries", "ns/op", "Mops/s", "spread",
               "bytes");
    }
}

void
report(const struct result *r)
{
    double mops = r->ns_per_op > 0 ? 1e3 / r->ns_per_op : 0;

    if (json_output) {
        json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:I, s:f}",
                              "suite", r->suite, "case", r->case_name,
                              "impl", r->impl, "entries",
                              (json_int_t) r->entries, "ns_per_op",
                              r->ns_per_op, "mops", mops, "bytes",
                              (json_int_t) r->bytes, "spread", last_spread);
        if (!o) {
            fatal("out of memory formatting JSON");
        }
        char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!s) {
            fatal("out of memory formatting JSON");
        }
        puts(s);
        free(s);
        json_decref(o);
    } else {
        printf("%-22s %-12s %10" PRIu64 " %12.2f %10.2f %7.0f%% %10" PRIu64
               "\n", r->case_name, r->impl, r->entries, r->ns_per_op, mops,
               100 * last_spread, r->bytes);
    }
    fflush(stdout);
}

static int
cmp_double(const void *a_, const void *b_)
{
    double a = *(const double *) a_, b = *(const double *) b_;

    return a < b ? -1 : a > b;
}

/* Runs 'fn(arg, n)', which performs 'n' operations, and returns the median
 * ns per operation over several runs (and sets the spread).  The operation
 * count is calibrated so that one run lasts about 'run_ns'; calibrating
 * also warms caches and branch predictors. */
double
measure(uint64_t (*fn)(void *arg, uint64_t n), void *arg)
{
    enum { RUNS = 5 };
    const double run_ns = seconds_per_case > 0 ? seconds_per_case * 1e9 / RUNS
                          : quick ? 2e6 : 20e6;
    double samples[RUNS];
    uint64_t n = 64;

    /* Calibrate (this also warms caches and branch predictors). */
    for (;;) {
        double t0 = now_ns();
        sink += fn(arg, n);
        double dt = now_ns() - t0;
        if (dt >= run_ns / 4 || n >= (UINT64_C(1) << 40)) {
            n = (uint64_t) (n * (run_ns / (dt > 1 ? dt : 1))) + 1;
            break;
        }
        n *= 4;
    }
    for (int i = 0; i < RUNS; i++) {
        double t0 = now_ns();
        sink += fn(arg, n);
        samples[i] = (now_ns() - t0) / n;
    }
    qsort(samples, RUNS, sizeof samples[0], cmp_double);
    last_spread = samples[RUNS / 2] > 0
                  ? (samples[RUNS - 1] - samples[0]) / samples[RUNS / 2] : 0;
    return samples[RUNS / 2];
}

uint64_t
rnd64(uint64_t *state)
{
    uint64_t x = *state;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* ---------------------------------------------------------------------- */
/* hash suite.                                                             */

/* Independent keys for the throughput cases: enough to defeat any
 * caching of results, few enough to stay in L1. */
#define HASH_N_KEYS 64
#define HASH_MAX_WORDS 64       /* 512 bytes. */

struct hash_bench {
    uint32_t (*fn)(const uint64_t *words, size_t n_words, uint32_t basis);
    struct fdp_hash_key key;
    size_t n_words;
    uint64_t keys[HASH_N_KEYS][HASH_MAX_WORDS];
};

static struct hash_bench *hb_keyed;     /* For keyed_adapter(). */

static uint32_t
keyed_adapter(const uint64_t *words, size_t n_words, uint32_t basis)
{
    return fdp_hash_keyed(words, n_words, &hb_keyed->key) ^ basis;
}

static uint64_t
hash_tput(void *arg, uint64_t n)
{
    struct hash_bench *hb = arg;
    uint64_t sum = 0;

    for (uint64_t i = 0; i < n; i++) {
        sum += hb->fn(hb->keys[i % HASH_N_KEYS], hb->n_words, 0x5bd1e995);
    }
    return sum;
}

static uint64_t
hash_lat(void *arg, uint64_t n)
{
    struct hash_bench *hb = arg;
    uint64_t *key = hb->keys[0];
    uint32_t h = 0;

    for (uint64_t i = 0; i < n; i++) {
        key[0] ^= h;            /* The next key depends on this hash. */
        h = hb->fn(key, hb->n_words, 0x5bd1e995);
    }
    return h;
}

static void
suite_hash(void)
{
    static const size_t sizes[] = { 16, 32, 64, 128, 256, 512 };
    struct impl {
        const char *name;
        uint32_t (*fn)(const uint64_t *, size_t, uint32_t);
    } impls[4];
    size_t n_impls = 0;

    /* CRC32C as the library runs it, then the portable CRC for
     * comparison, then the other two hashes. */
    impls[n_impls++] = (struct impl) { "crc32c", fdp_hash_crc32c };
    if (fdp__hash_selected()->funcs.hash_crc32c != fdp__hash_crc32c_sw) {
        impls[n_impls++] = (struct impl) { "crc32c-sw", fdp__hash_crc32c_sw };
    }
    impls[n_impls++] = (struct impl) { "jhash2", fdp_hash_jhash2 };
    impls[n_impls++] = (struct impl) { "keyed", keyed_adapter };

    struct hash_bench *hb = malloc(sizeof *hb);
    if (!hb) {
        fatal("out of memory");
    }
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (size_t k = 0; k < HASH_N_KEYS; k++) {
        for (size_t w = 0; w < HASH_MAX_WORDS; w++) {
            hb->keys[k][w] = rnd64(&seed);
        }
    }
    hb->key.k0 = rnd64(&seed);
    hb->key.k1 = rnd64(&seed);
    hb_keyed = hb;

    report_header("hash");
    for (size_t s = 0; s < FDP_ARRAY_SIZE(sizes); s++) {
        for (int lat = 0; lat < 2; lat++) {
            for (size_t i = 0; i < n_impls; i++) {
                char case_name[32];
                snprintf(case_name, sizeof case_name, "%s-%zu",
                         lat ? "lat" : "tput", sizes[s]);
                hb->fn = impls[i].fn;
                hb->n_words = sizes[s] / 8;
                struct result r = {
                    .suite = "hash", .case_name = case_name,
                    .impl = impls[i].name, .entries = 1,
                    .ns_per_op = measure(lat ? hash_lat : hash_tput, hb),
                    .bytes = sizes[s],
                };
                report(&r);
            }
        }
    }
    free(hb);
}

/* ---------------------------------------------------------------------- */
/* tss suite.                                                              */

#define TSS_BATCH 32
#define TSS_N_PACKETS 4096          /* Distinct packets per case. */

struct tss_bench {
    struct fdp_table *table;
    struct fdp_key *packets;
    const struct fdp_key *batches[TSS_N_PACKETS];
};

static uint64_t
tss_lookups(void *arg, uint64_t n)
{
    struct tss_bench *tb = arg;
    const struct fdp_rule *rules[TSS_BATCH];
    uint64_t sum = 0;

    fdp_table_read_lock();
    for (uint64_t i = 0; i < n; i += TSS_BATCH) {
        size_t off = (size_t) (i % TSS_N_PACKETS);
        fdp_table_lookup_batch(tb->table, &tb->batches[off], TSS_BATCH, rules);
        sum += rules[0] != NULL;
    }
    fdp_table_read_unlock();
    return sum;
}

/* A random mask over the 5-tuple: each field wildcarded, exact, or a
 * prefix (addresses) / arbitrary mask (ports). */
static void
random_5tuple_mask(uint64_t *seed, struct fdp_match *m)
{
    static const enum fdp_field fields[] = {
        FDP_F_NW_SRC, FDP_F_NW_DST, FDP_F_TP_SRC, FDP_F_TP_DST,
    };
    fdp__match_init(m);
    fdp__match_set_masked(m, FDP_F_DL_TYPE, 0x0800, 0xffff);
    fdp__match_set_masked(m, FDP_F_NW_PROTO, 6, 0xff);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(fields); i++) {
        unsigned int bits = fdp_field_width(fields[i]);
        uint64_t r = rnd64(seed);
        fdp_u128 mask;
        switch (r % 3) {
        case 0:
            mask = 0;
            break;
        case 1:
            mask = fdp__ones(bits);
            break;
        default:
            mask = fdp__ones(bits) & ~fdp__ones((unsigned int) (r >> 8)
                                                % bits);
            break;
        }
        fdp__match_set_masked(m, fields[i], 0, mask);
    }
}

/* Draws the values of flow 'm' of mask 'mask' at random. */
static void
tss_draw_flow(uint64_t *seed, const struct fdp_match *mask,
              struct fdp_match *m)
{
    *m = *mask;
    for (int w = 0; w < FDP_KEY_WORDS; w++) {
        uint64_t v = rnd64(seed);
        if (w == 1) {
            v = (v & ~0xffffff00ull) | 0x08000600ull;
        }
        m->value.w[w] = v & m->mask.w[w];
    }
}

/* How tss_build() fills its table. */
struct tss_shape {
    size_t n_flows, n_masks;
    bool prio;                  /* Priorities vary (else all 100). */
    bool miss;                  /* Packets hit no flow. */
    bool exact;                 /* Exactly 'n_flows' distinct flows. */
    long budget;                /* Mask budget; -1: --max-masks or the
                                 * default. */
};

/* Builds a table of the shape's flows over its masks and packets that hit
 * them (or, with 'miss', packets that hit none). */
static void
tss_build(struct tss_bench *tb, const struct tss_shape *shape)
{
    size_t n_flows = shape->n_flows, n_masks = shape->n_masks;
    bool prio = shape->prio, miss = shape->miss;
    uint64_t seed = 0x1234567 + n_flows * 31 + n_masks;
    struct fdp_match *masks = malloc(n_masks * sizeof *masks);
    struct fdp_match *flows = malloc(n_flows * sizeof *flows);

    if (fdp_table_create(&tb->table) || !masks || !flows) {
        fatal("out of memory");
    }
    long budget = shape->budget >= 0 ? shape->budget : max_masks;
    if (budget >= 0) {
        fdp_table_set_max_masks(tb->table, (size_t) budget);
    }
    /* Distinct masks. */
    for (size_t i = 0; i < n_masks; i++) {
        bool dup;
        do {
            random_5tuple_mask(&seed, &masks[i]);
            fdp__match_set_masked(&masks[i], FDP_F_IN_PORT, 0,
                                  i >= 256 ? 0xffff : 0);
            dup = false;
            for (size_t j = 0; j < i && !dup; j++) {
                dup = !memcmp(&masks[j].mask, &masks[i].mask,
                              sizeof masks[i].mask);
            }
        } while (dup);
    }
    struct fdp__actions_builder b;
    fdp__actions_builder_init(&b);
    fdp__actions_add(&b, FDP_ACT_OUTPUT, 1);
    struct fdp_actions *acts = fdp__actions_finish(&b);

    fdp_table_begin(tb->table);
    for (size_t i = 0; i < n_flows; i++) {
        struct fdp_match *m = &flows[i];
        tss_draw_flow(&seed, &masks[i % n_masks], m);
        struct fdp_flow_spec spec = {
            .match = m, .actions = acts, .cookie = i,
            .priority = prio ? (uint16_t) (i % 65536) : 100,
        };
        /* Exact shapes never replace: a draw that repeats a flow is
         * redrawn, so the table really holds 'n_flows' flows.  A mask with
         * few bits may have fewer distinct values than its share of flows;
         * after 64 failed redraws (for a mask with 2^b values and k flows
         * already drawn, 64 misses in a row mean k is close to 2^b) the
         * priority rises instead, which makes a new flow of the same
         * match. */
        unsigned int flags = shape->exact ? FDP_TABLE_NO_REPLACE : 0;
        int error;
        for (unsigned int tries = 1;
             (error = fdp_table_insert(tb->table, &spec, flags)) == EEXIST;
             tries++) {
            if (tries < 64) {
                tss_draw_flow(&seed, &masks[i % n_masks], m);
            } else {
                spec.priority++;
            }
        }
        if (error) {
            fatal("insert failed");
        }
    }
    fdp_table_commit(tb->table);
    fdp_table_run(tb->table);
    fdp_actions_destroy(acts);

    tb->packets = malloc(TSS_N_PACKETS * sizeof *tb->packets);
    for (size_t i = 0; i < TSS_N_PACKETS; i++) {
        struct fdp_key *k = &tb->packets[i];
        const struct fdp_match *m = &flows[rnd64(&seed) % n_flows];
        for (int w = 0; w < FDP_KEY_WORDS; w++) {
            k->w[w] = (rnd64(&seed) & ~m->mask.w[w]) | m->value.w[w];
        }
        if (miss) {
            fdp__key_set(k, FDP_F_NW_PROTO, 17);    /* Every flow is TCP. */
        }
        tb->batches[i] = k;
    }
    free(masks);
    free(flows);
}

static void
tss_destroy(struct tss_bench *tb)
{
    fdp_table_destroy(tb->table);
    free(tb->packets);
}

/* 2^16 exact TCP 5-tuples, colliding under CRC32C or random. */
static void
tss_build_flood(struct tss_bench *tb, bool flood)
{
    enum { N = 65536 };
    uint64_t seed = 99;
    struct fdp_match *flows = malloc(N * sizeof *flows);

    if (!flows || fdp_table_create(&tb->table)
        || (flood && fdp__tss_flood_flows(flows, N))) {
        fatal("cannot build the flooding workload");
    }
    for (size_t k = 0; !flood && k < N; k++) {
        uint64_t w0 = rnd64(&seed);
        fdp__tss_5tuple_match(&flows[k], w0, rnd64(&seed));
    }
    struct fdp__actions_builder b;
    fdp__actions_builder_init(&b);
    fdp__actions_add(&b, FDP_ACT_OUTPUT, 1);
    struct fdp_actions *acts = fdp__actions_finish(&b);
    fdp_table_begin(tb->table);
    for (size_t k = 0; k < N; k++) {
        struct fdp_flow_spec spec = { .match = &flows[k], .actions = acts,
                                      .priority = 1 };
        if (fdp_table_insert(tb->table, &spec, FDP_TABLE_NO_REPLACE)) {
            fatal("insert failed");
        }
    }
    fdp_table_commit(tb->table);
    fdp_actions_destroy(acts);
    tb->packets = malloc(TSS_N_PACKETS * sizeof *tb->packets);
    for (size_t i = 0; i < TSS_N_PACKETS; i++) {
        tb->packets[i] = flows[rnd64(&seed) % N].value;
        tb->batches[i] = &tb->packets[i];
    }
    free(flows);
}

/* Measures lookups in 'tb', reports them as 'case_name' with 'impl', and
 * destroys 'tb'.  If 'n_expected' is nonzero the table must hold exactly
 * that many flows. */
static void
tss_measure(struct tss_bench *tb, const char *case_name, const char *impl,
            uint64_t n_expected)
{
    struct fdp_table_stats st;

    fdp_table_get_stats(tb->table, &st);
    if (n_expected && st.n_flows != n_expected) {
        fatal("%s: %" PRIu64 " flows, not %" PRIu64, case_name, st.n_flows,
              n_expected);
    }
    struct result r = {
        .suite = "tss", .case_name = case_name, .impl = impl,
        .entries = st.n_flows, .ns_per_op = measure(tss_lookups, tb),
        .bytes = st.memory_bytes,
    };
    report(&r);
    tss_destroy(tb);
}

static void
suite_tss(void)
{
    static const struct {
        size_t flows, masks;
    } shapes[] = {
        { 1000, 1 }, { 1000, 10 }, { 1000, 100 }, { 1000, 1000 },
        { 10000, 100 },
    };
    static const char *const hashes[] = { "crc32c", "jhash2" };

    report_header("tss");
    for (size_t h = 0; h < FDP_ARRAY_SIZE(hashes); h++) {
        if (fdp__hash_set_fast(hashes[h])) {
            continue;           /* No hardware CRC here. */
        }
        for (size_t s = 0; s < FDP_ARRAY_SIZE(shapes); s++) {
            for (int variant = 0; variant < 3; variant++) {
                static const char *const suffix[] = { "", "-prio", "-miss" };
                struct tss_bench tb;
                char case_name[48];
                struct tss_shape shape = {
                    .n_flows = shapes[s].flows, .n_masks = shapes[s].masks,
                    .prio = variant == 1, .miss = variant == 2,
                    .budget = -1,
                };
                tss_build(&tb, &shape);
                snprintf(case_name, sizeof case_name, "%zux%zu%s",
                         shapes[s].flows, shapes[s].masks, suffix[variant]);
                tss_measure(&tb, case_name, hashes[h], 0);
            }
        }
        /* The figure: exactly 1000 flows (no replaced duplicates)
         * over 1, 10, 100 and 1000 masks, in pure tuple space (budget 0:
         * every mask a subtable, the shape of the Open vSwitch CRC32
         * measurements) and with the default mask budget (past it, flows
         * move to pipapo). */
        static const size_t exact_masks[] = { 1, 10, 100, 1000 };
        static const long budgets[] = { 0, FDP_TABLE_DEFAULT_MAX_MASKS };
        for (size_t bi = 0; bi < FDP_ARRAY_SIZE(budgets); bi++) {
            for (size_t mi = 0; mi < FDP_ARRAY_SIZE(exact_masks); mi++) {
                struct tss_shape shape = {
                    .n_flows = 1000, .n_masks = exact_masks[mi],
                    .exact = true, .budget = budgets[bi],
                };
                struct tss_bench tb;
                char case_name[48];
                tss_build(&tb, &shape);
                snprintf(case_name, sizeof case_name,
                         "exact-1000x%zu-budget%ld", exact_masks[mi],
                         budgets[bi]);
                tss_measure(&tb, case_name, hashes[h], 1000);
            }
        }
        for (int flood = 1; flood >= 0; flood--) {
            struct tss_bench tb;
            tss_build_flood(&tb, flood);
            tss_measure(&tb, flood ? "flood-65536" : "random-65536",
                        hashes[h], 65536);
        }
    }
    fdp__hash_set_fast(strcmp(fdp__hash_selected()->funcs.fast_name,
                              "crc32c") ? "jhash2" : "crc32c");
}

/* ---------------------------------------------------------------------- */
/* pipapo suite.                                                           */

enum perf_fmt { PF_ADDR4, PF_ADDR6, PF_MAC, PF_PORT, PF_PROTO };

static const struct perf_type {
    const char *name;
    enum perf_fmt fmt[4];
    unsigned int n;
    unsigned int first;         /* 'start' of the selftest. */
    unsigned int entries;
} perf_types[] = {
    { "net,port", { PF_ADDR4, PF_PORT }, 2, 1, 1000 },
    { "port,net", { PF_PORT, PF_ADDR4 }, 2, 1, 100 },
    { "net6,port", { PF_ADDR6, PF_PORT }, 2, 10, 1000 },
    { "port,proto", { PF_PORT, PF_PROTO }, 2, 1, 30000 },
    { "net6,port,mac", { PF_ADDR6, PF_PORT, PF_MAC }, 3, 10, 10 },
    { "net6,port,mac,proto", { PF_ADDR6, PF_PORT, PF_MAC, PF_PROTO }, 4, 10,
      1000 },
    { "net,mac", { PF_ADDR4, PF_MAC }, 2, 1, 1000 },
};

static enum fdp_field
perf_field(enum perf_fmt f)
{
    switch (f) {
    case PF_ADDR4:
        return FDP_F_NW_DST;
    case PF_ADDR6:
        return FDP_F_IPV6_DST;
    case PF_MAC:
        return FDP_F_DL_SRC;
    case PF_PORT:
        return FDP_F_TP_DST;
    case PF_PROTO:
    default:
        return FDP_F_NW_PROTO;
    }
}

/* The selftest's formatters, as numbers. */
static fdp_u128
perf_value(enum perf_fmt f, uint64_t n)
{
    switch (f) {
    case PF_ADDR4:
        return (n + (UINT64_C(10) << 24) + 5) & 0xffffffff;
    case PF_ADDR6:
        return ((fdp_u128) 0x20010db8 << 96) | (n & 0xffffffff);
    case PF_MAC:
        return (UINT64_C(0x0001) << 32) | (n & 0xffffffff);
    case PF_PORT:
        return n % 65534 + 1;
    case PF_PROTO:
    default:
        return 17;
    }
}

struct pipapo_bench {
    struct pipapo_snapshot *snap;
    fdp__pipapo_and_fn *and_rows;
    struct fdp_key keys[1024];
    size_t n_keys;
};

static uint64_t
pipapo_lookups(void *arg, uint64_t n)
{
    struct pipapo_bench *pb = arg;
    uint64_t sum = 0;

    for (uint64_t i = 0; i < n; i++) {
        sum += fdp__pipapo_lookup_with(pb->snap, &pb->keys[i % pb->n_keys],
                                       0, pb->and_rows) != NULL;
    }
    return sum;
}

struct pipapo_build_arg {
    const enum fdp_field *fields;
    unsigned int n_fields;
    struct fdp_rule **rules;
    uint32_t n;
};

static uint64_t
pipapo_builds(void *arg_, uint64_t n)
{
    struct pipapo_build_arg *a = arg_;

    for (uint64_t i = 0; i < n; i++) {
        fdp__pipapo_snapshot_free(fdp__pipapo_build(a->fields, a->n_fields,
                                                    a->rules, a->n, true));
    }
    return n;
}

/* ns per entry for building a snapshot of all entries. */
static uint64_t
pipapo_build_once(void *arg, uint64_t n)
{
    return pipapo_builds(arg, (n + 63) / 64);
}

static void
suite_pipapo(void)
{
    report_header("pipapo");
    for (size_t t = 0; t < FDP_ARRAY_SIZE(perf_types); t++) {
        const struct perf_type *pt = &perf_types[t];
        enum fdp_field fields[4];
        uint32_t n = pt->entries + 1;
        struct fdp_rule **rules = malloc(n * sizeof *rules);
        uint64_t *starts = malloc(n * sizeof *starts);

        for (unsigned int f = 0; f < pt->n; f++) {
            fields[f] = perf_field(pt->fmt[f]);
        }
        /* The selftest's loop: entries + 1 ranges [start, start + 1]. */
        uint64_t start = pt->first, end = 0;
        for (uint32_t i = 0; i < n; i++) {
            end = start + 1;
            if (end / 65534 > start / 65534) {
                start = end;
                end = end + 1;
            }
            struct fdp_rule *r = calloc(1, sizeof *r);
            fdp__match_init(&r->match);
            r->seq = i;
            r->remove_version = FDP_VERSION_NEVER;
            for (unsigned int f = 0; f < pt->n; f++) {
                if (pt->fmt[f] == PF_PROTO) {
                    fdp__match_set_masked(&r->match, fields[f], 17, 0xff);
                } else {
                    fdp__match_set_range(&r->match, fields[f],
                                         perf_value(pt->fmt[f], start),
                                         perf_value(pt->fmt[f], end));
                }
            }
            rules[i] = r;
            starts[i] = start;
            start = end + 1;
        }

        struct pipapo_bench *pb = malloc(sizeof *pb);
        /* Group widths as the table would choose them, field by field. */
        uint8_t group_bits[FDP_ARRAY_SIZE(fields)];
        if (fdp__pipapo_choose_widths(fields, pt->n, rules, n, group_bits)) {
            fatal("out of memory");
        }
        pb->snap = fdp__pipapo_build_widths(fields, pt->n, rules, n,
                                            group_bits);
        if (!pb->snap) {
            fatal("out of memory");
        }
        for (size_t impl = 0; impl < fdp__pipapo_n_impls; impl++) {
            const struct fdp__pipapo_impl *pi = &fdp__pipapo_impls[impl];
            if (!pi->probe() || !fdp__cpu_allows(pi->level)) {
                continue;
            }
            pb->and_rows = pi->and_rows;
            for (int random = 0; random < 2; random++) {
                uint64_t seed = 7;
                pb->n_keys = random ? FDP_ARRAY_SIZE(pb->keys) : 1;
                for (size_t k = 0; k < pb->n_keys; k++) {
                    /* The selftest probes end - 1 of the last entry. */
                    uint64_t v = random ? starts[rnd64(&seed) % n]
                                        : end - 1;
                    memset(&pb->keys[k], 0, sizeof pb->keys[k]);
                    for (unsigned int f = 0; f < pt->n; f++) {
                        fdp__key_set(&pb->keys[k], fields[f],
                                     perf_value(pt->fmt[f], v));
                    }
                }
                if (!fdp__pipapo_lookup_with(pb->snap, &pb->keys[0], 0,
                                             pb->and_rows)) {
                    fatal("pipapo %s: the probe misses", pt->name);
                }
                char case_name[48];
                snprintf(case_name, sizeof case_name, "%s%s", pt->name,
                         random ? "-random" : "");
                struct result r = {
                    .suite = "pipapo", .case_name = case_name,
                    .impl = pi->name, .entries = n,
                    .ns_per_op = measure(pipapo_lookups, pb),
                    .bytes = pb->snap->memory,
                };
                report(&r);
            }
        }

        struct pipapo_build_arg ba = { fields, pt->n, rules, n };
        char case_name[48];
        snprintf(case_name, sizeof case_name, "%s-insert", pt->name);
        double ns_per_build_per_64 = measure(pipapo_build_once, &ba);
        struct result r = {
            .suite = "pipapo", .case_name = case_name, .impl = "build",
            .entries = n,
            .ns_per_op = ns_per_build_per_64 * 64 / n,
            .bytes = pb->snap->memory,
        };
        report(&r);

        fdp__pipapo_snapshot_free(pb->snap);
        free(pb);
        for (uint32_t i = 0; i < n; i++) {
            free(rules[i]);
        }
        free(rules);
        free(starts);
    }
}

/* ---------------------------------------------------------------------- */

struct suite {
    const char *name;
    void (*run)(void);
};

static const struct suite suites[] = {
    { "hash", suite_hash },
    { "tss", suite_tss },
    { "pipapo", suite_pipapo },
    { "table", suite_table },
#ifdef HAVE_DPDK
    { "peer-acl", suite_peer_acl },
#endif
#ifdef HAVE_OVS
    { "peer-ovs", suite_peer_ovs },
#endif
    { "ring", suite_ring },
    { "datapath", suite_datapath },
};

static void
usage(void)
{
    printf("%s: flowdp benchmarks\n"
           "usage: %s [--json] [--quick] [--seconds S] [--cpu N] [SUITE...]\n"
           "Suites (default: all):", program_name, program_name);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(suites); i++) {
        printf(" %s", suites[i].name);
    }
    printf("\n"
           "  --json    one JSON object per result\n"
           "  --quick   short runs (a smoke test; figures are noisier)\n"
           "  --seconds S  time each case for about S seconds (5 runs; the\n"
           "            median is reported with the spread, max-min/median)\n"
           "  --cpu N   pin the benchmark thread to CPU N\n"
           "  --max-masks N  tss: tuple-space mask budget (0: no pipapo\n"
           "            overflow; default: the library's)\n"
           "Environment: FLOWDP_CPU=generic|sse42|avx2 forces a CPU level.\n");
}

int
main(int argc, char *argv[])
{
    static const struct option long_options[] = {
        { "json", no_argument, NULL, 'j' },
        { "quick", no_argument, NULL, 'q' },
        { "max-masks", required_argument, NULL, 'm' },
        { "seconds", required_argument, NULL, 's' },
        { "cpu", required_argument, NULL, 'c' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        switch (c) {
        case 'j':
            json_output = true;
            break;
        case 'q':
            quick = true;
            break;
        case 'm': {
            char *end;
            max_masks = strtol(optarg, &end, 10);
            if (*end || max_masks < 0) {
                fatal("--max-masks: \"%s\" is not a count", optarg);
            }
            break;
        }
        case 's': {
            char *end;
            seconds_per_case = strtod(optarg, &end);
            if (*end || !(seconds_per_case > 0 && seconds_per_case <= 3600)) {
                fatal("--seconds: \"%s\": expected seconds from 0 to 3600",
                      optarg);
            }
            break;
        }
        case 'c': {
            char *end;
            long cpu = strtol(optarg, &end, 10);
            cpu_set_t set;
            CPU_ZERO(&set);
            if (*end || cpu < 0 || cpu >= CPU_SETSIZE) {
                fatal("--cpu: \"%s\" is not a CPU number", optarg);
            }
            CPU_SET(cpu, &set);
            if (sched_setaffinity(0, sizeof set, &set)) {
                fatal("--cpu %ld: %s", cpu, strerror(errno));
            }
            break;
        }
        case 'h':
            usage();
            return EXIT_SUCCESS;
        default:
            fatal("unknown option (see --help)");
        }
    }
    if (fdp_cpu_init()) {
        fatal("%s", fdp_cpu_strerror());
    }

    bool run[FDP_ARRAY_SIZE(suites)] = { false };
    bool any = false;
    for (int i = optind; i < argc; i++) {
        size_t j;
        for (j = 0; j < FDP_ARRAY_SIZE(suites); j++) {
            if (!strcmp(argv[i], suites[j].name)) {
                run[j] = any = true;
                break;
            }
        }
        if (j == FDP_ARRAY_SIZE(suites)) {
            fatal("unknown suite '%s' (see --help)", argv[i]);
        }
    }
    for (size_t j = 0; j < FDP_ARRAY_SIZE(suites); j++) {
        if (run[j] || !any) {
            suites[j].run();
        }
    }
    return EXIT_SUCCESS;
}
