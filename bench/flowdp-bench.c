/*
 * flowdp-bench: flowdp's benchmarks.
 *
 * usage: flowdp-bench [--json] [--quick] [--seconds S] [--cpu N]
 *                     [--thread-time] [--max-masks N]
 *                     [--classbench-dir DIR] [SUITE...]
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
 *          versus 2^16 random ones; megaflow-1000xM (M = 10, 100, 1000)
 *          a megaflow cache's shape: 1000 flows at one priority that
 *          un-wildcard dl_type, nw_proto and random prefixes of the
 *          5-tuple, disjoint by construction (every mask matches the top
 *          10 bits of nw_src with a value of its own) and checked pair by
 *          pair, every packet inside one flow and checked to find it
 *          before timing; -disjoint the same table declared disjoint
 *          (fdp_table_set_disjoint()).  Every table has the default mask
 *          budget, as users run it (or --max-masks).  impl is the fast
 *          hash (crc32c, jhash2).  Bulk insert rates (impl "build", ns
 *          per flow of one transaction into a new table, then
 *          fdp_table_run()): insert-megaflow-1000xM of those flows,
 *          insert-10000x100 of 10000 such flows over 100 masks, and
 *          insert-ranged-1000 of 1000 parsed "udp,nw_dst=A-B,tp_dst=C-D"
 *          flows (distinct priorities; the parse is not timed).  The
 *          goals: 1M masked and 200k ranged flows per second (1000 and
 *          5000 ns per flow).  ranged-1000: lookups of packets inside
 *          random flows of that ranged set (impl: the CPU level).
 *   pipapo the performance workloads of the kernel's nft_concat_range.sh,
 *          built as that script builds them (entries + 1 two-value ranges
 *          of consecutive values per field; proto a single value), looked
 *          up with each implementation (generic, avx2): case TYPE probes
 *          the last entry, TYPE-random random entries; TYPE-insert is the
 *          build rate (ns per entry, all entries in one snapshot).  bytes
 *          is the snapshot's memory.  After each module's cases, the same
 *          entries through the table as a user adds them: flow text
 *          ("priority=P,udp,nw_dst=A-B,tp_dst=C-D,actions=output:1"; net6
 *          is ipv6_dst with udp6, mac dl_src, proto the udp shorthand or
 *          nw_proto=17; entry i has priority entries + 1 - i), parsed with
 *          fdp_flow_parse() (TYPE-table-parse, impl "parse", ns per flow)
 *          and added to one table in one transaction, then
 *          fdp_table_run() (TYPE-table-insert, impl "build", ns per flow,
 *          parse excluded).  TYPE-table and TYPE-table-random look up the
 *          module cases' probes in batches of 32 through
 *          fdp_table_lookup_batch(), each checked first to find its entry;
 *          impl is the CPU level (FLOWDP_CPU).  The parser turns a range
 *          that is a prefix block into a mask, so some shapes end up in
 *          tuple space: that is what a user gets.
 *   table  ClassBench rule sets through the whole table (bench-table.c).
 *   peer-acl  the same through DPDK's rte_acl, with --with-dpdk
 *          (bench-acl.c).
 *   peer-ovs  Open vSwitch 3.1's classifier (as ofproto configures it) and
 *          its userspace datapath's dpcls, with --with-ovs-source=DIR
 *          (bench-ovs.c): the same ovs-ofctl flow texts parsed by each
 *          side's parser and the same packets, flowdp and OVS in one run;
 *          cases exact-1000x1, megaflow-1000xM (M = 10, 100, 1000 masks,
 *          disjoint flows), prio-1000x100 (every flow its own priority)
 *          and insert-CASE (ns per flow to insert them all); then the ct
 *          suite's cases for Open vSwitch's tracker alone (bench-ct.c),
 *          unless the ct suite runs too.
 *   ring, datapath  descriptor rings and the whole datapath (bench-dp.c).
 *   pipeline  multi-table pipelines against one table: EMC hits, misses
 *          (datapath and API), conjunctions against their cross product
 *          (bench-pipeline.c).
 *   extract  the packet parser, alone, followed by the flow hash, and
 *          with the hash computed as it goes (bench-extract.c).
 *   ct     connection trackers on the same packets (bench-ct.c):
 *          established packets over 1, 10k, 1M, 10M connections, new
 *          connections plain and with SNAT, a zone flush and the stall a
 *          busy thread sees meanwhile, bytes per connection.  For now
 *          only Open vSwitch's tracker (with --with-ovs-source=DIR);
 *          peer-ovs runs the same group unless ct runs too.
 *   openflow  the OpenFlow channel: ovs-ofctl --bundle add-flows and
 *          dump-flows of 200k flows into flowdpd and ovs-vswitchd, and
 *          packet-ins to a controller (bench-openflow.c).
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

#include <flowdp/flowdp.h>
#include "bench/bench.h"
#include "tests/lib/rng.h"
#include "utilities/tool.h"
#include "lib/hash-private.h"
#include "lib/actions-internal.h"
#include "lib/match-internal.h"
#include "lib/pipapo.h"
#include "lib/tss.h"
#include "lib/util.h"

const char *program_name = "flowdp-bench";

bool json_output;
bool quick;
double seconds_per_case;            /* --seconds; 0: the default. */
static long max_masks = -1;         /* --max-masks; -1: the default. */
const char *classbench_dir_option;

/* ---------------------------------------------------------------------- */
/* Timing and reporting.                                                   */

/* --thread-time: the benchmark thread's CPU clock instead of the wall
 * clock. */
static clockid_t bench_clock = CLOCK_MONOTONIC;

double
now_ns(void)
{
    struct timespec ts;

    clock_gettime(bench_clock, &ts);
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
        printf("%-32s %-10s %8s %12s %10s %8s %10s\n",
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
        printf("%-32s %-10s %8" PRIu64 " %12.2f %10.2f %7.0f%% %10" PRIu64
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
            hb->keys[k][w] = test_rng_next(&seed);
        }
    }
    hb->key.k0 = test_rng_next(&seed);
    hb->key.k1 = test_rng_next(&seed);
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

/* A table and the packets its lookups cycle through: 'n_packets' (a
 * multiple of TSS_BATCH, at most TSS_N_PACKETS) pointers into 'packets',
 * which may repeat a key. */
struct tss_bench {
    struct fdp_table *table;
    struct fdp_key *packets;
    const struct fdp_key *batches[TSS_N_PACKETS];
    size_t n_packets;
};

static uint64_t
tss_lookups(void *arg, uint64_t n)
{
    struct tss_bench *tb = arg;
    const struct fdp_rule *rules[TSS_BATCH];
    uint64_t sum = 0;

    fdp_table_read_lock();
    for (uint64_t i = 0; i < n; i += TSS_BATCH) {
        size_t off = (size_t) (i % tb->n_packets);
        fdp_table_lookup_batch(tb->table, &tb->batches[off], TSS_BATCH, rules);
        sum += rules[0] != NULL;
    }
    fdp_table_read_unlock();
    return sum;
}

/* ---- Shared by the table-level cases (tss megaflow, pipapo -table). ---- */

/* Timed repetitions of a whole bulk operation (an insert of every flow
 * into a fresh table, a parse of every flow): each is one long operation,
 * so it is timed as a whole, not calibrated by measure(). */
#define BULK_RUNS 5

/* Calls 'fn(arg)', which performs one bulk operation and returns the ns
 * its timed part took, BULK_RUNS times (3 with --quick); returns the
 * median and sets the spread as measure() does. */
static double
median_of_runs(double (*fn)(void *arg), void *arg)
{
    double samples[BULK_RUNS];
    int runs = quick ? 3 : BULK_RUNS;

    for (int i = 0; i < runs; i++) {
        samples[i] = fn(arg);
    }
    qsort(samples, runs, sizeof samples[0], cmp_double);
    last_spread = samples[runs / 2] > 0
                  ? (samples[runs - 1] - samples[0]) / samples[runs / 2] : 0;
    return samples[runs / 2];
}

/* A new table with mask budget 'budget' (-1: the library's default) that
 * is declared disjoint if 'disjoint'. */
static struct fdp_table *
bench_table_create(long budget, bool disjoint)
{
    struct fdp_table *table;

    if (fdp_table_create(&table)) {
        fatal("out of memory");
    }
    if (budget >= 0) {
        fdp_table_set_max_masks(table, (size_t) budget);
    }
    fdp_table_set_disjoint(table, disjoint);
    return table;
}

/* Adds the 'n' flows 'specs' to 'table' as a user's bulk change does: one
 * transaction (none may replace another), then fdp_table_run(), the
 * upkeep that follows a change. */
static void
bench_table_fill(struct fdp_table *table, const struct fdp_flow_spec *specs,
                 size_t n, const char *what)
{
    if (fdp_table_begin(table)) {
        fatal("%s: cannot begin a transaction", what);
    }
    for (size_t i = 0; i < n; i++) {
        int error = fdp_table_insert(table, &specs[i], FDP_TABLE_NO_REPLACE);
        if (error) {
            fatal("%s: insert of flow %zu: %s", what, i, strerror(error));
        }
    }
    int error = fdp_table_commit(table);
    if (error) {
        fatal("%s: commit: %s", what, strerror(error));
    }
    fdp_table_run(table);
}

/* What bulk_insert_run() inserts, and the memory of the table it built. */
struct bulk_insert {
    const struct fdp_flow_spec *specs;
    size_t n;
    long budget;
    const char *what;
    uint64_t bytes;
};

static double
bulk_insert_run(void *bi_)
{
    struct bulk_insert *bi = bi_;
    struct fdp_table *table = bench_table_create(bi->budget, false);
    struct fdp_table_stats st;

    double t0 = now_ns();
    bench_table_fill(table, bi->specs, bi->n, bi->what);
    double ns = now_ns() - t0;

    fdp_table_get_stats(table, &st);
    if (st.n_flows != bi->n) {
        fatal("%s: %" PRIu64 " flows, not %zu", bi->what, st.n_flows, bi->n);
    }
    bi->bytes = st.memory_bytes;
    fdp_table_destroy(table);
    return ns;
}

/* Reports, as case 'case_name' of 'suite' with impl "build", the median
 * ns per flow of a bulk insert of the 'n' flows 'specs' into a new table
 * of mask budget 'budget' (see bench_table_fill(); creating and
 * destroying the table are not timed, nor is parsing). */
static void
report_bulk_insert(const char *suite, const char *case_name,
                   const struct fdp_flow_spec *specs, size_t n, long budget)
{
    struct bulk_insert bi = { specs, n, budget, case_name, 0 };
    double ns = median_of_runs(bulk_insert_run, &bi);

    report(&(struct result) {
        .suite = suite, .case_name = case_name, .impl = "build",
        .entries = n, .ns_per_op = ns / n, .bytes = bi.bytes,
    });
}

/* Looks up every packet of 'tb' through fdp_table_lookup_batch(), as the
 * timed loop does, and fatal()s unless packet i finds the flow whose
 * cookie is expected[i]: a benchmark that measures wrong answers is worse
 * than none. */
static void
tss_verify(struct tss_bench *tb, const uint64_t *expected,
           const char *case_name)
{
    const struct fdp_rule *rules[TSS_BATCH];

    fdp_table_read_lock();
    for (size_t off = 0; off < tb->n_packets; off += TSS_BATCH) {
        fdp_table_lookup_batch(tb->table, &tb->batches[off], TSS_BATCH,
                               rules);
        for (size_t j = 0; j < TSS_BATCH; j++) {
            if (!rules[j]) {
                fatal("%s: packet %zu misses, expected flow %" PRIu64,
                      case_name, off + j, expected[off + j]);
            }
            uint64_t cookie = fdp_rule_get_cookie(rules[j]);
            if (cookie != expected[off + j]) {
                fatal("%s: packet %zu finds flow %" PRIu64 ", expected %"
                      PRIu64, case_name, off + j, cookie,
                      expected[off + j]);
            }
        }
    }
    fdp_table_read_unlock();
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
        uint64_t r = test_rng_next(seed);
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
        uint64_t v = test_rng_next(seed);
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
        const struct fdp_match *m = &flows[test_rng_next(&seed) % n_flows];
        for (int w = 0; w < FDP_KEY_WORDS; w++) {
            k->w[w] = (test_rng_next(&seed) & ~m->mask.w[w]) | m->value.w[w];
        }
        if (miss) {
            fdp__key_set(k, FDP_F_NW_PROTO, 17);    /* Every flow is TCP. */
        }
        tb->batches[i] = k;
    }
    tb->n_packets = TSS_N_PACKETS;
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
        uint64_t w0 = test_rng_next(&seed);
        fdp__tss_5tuple_match(&flows[k], w0, test_rng_next(&seed));
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
        tb->packets[i] = flows[test_rng_next(&seed) % N].value;
        tb->batches[i] = &tb->packets[i];
    }
    tb->n_packets = TSS_N_PACKETS;
    free(flows);
}

/* Measures lookups in 'tb', reports them as case 'case_name' of 'suite'
 * with 'impl', and destroys 'tb'.  If 'n_expected' is nonzero the table
 * must hold exactly that many flows. */
static void
table_measure(struct tss_bench *tb, const char *suite, const char *case_name,
              const char *impl, uint64_t n_expected)
{
    struct fdp_table_stats st;

    fdp_table_get_stats(tb->table, &st);
    if (n_expected && st.n_flows != n_expected) {
        fatal("%s: %" PRIu64 " flows, not %" PRIu64, case_name, st.n_flows,
              n_expected);
    }
    struct result r = {
        .suite = suite, .case_name = case_name, .impl = impl,
        .entries = st.n_flows, .ns_per_op = measure(tss_lookups, tb),
        .bytes = st.memory_bytes,
    };
    report(&r);
    tss_destroy(tb);
}

static void
tss_measure(struct tss_bench *tb, const char *case_name, const char *impl,
            uint64_t n_expected)
{
    table_measure(tb, "tss", case_name, impl, n_expected);
}

/* ---- Megaflow-like flows: disjoint, one priority, many masks. ---- */

/* Every megaflow mask matches the top MEGAFLOW_TAG_BITS of nw_src, with a
 * value that is the mask's index (its tag): flows of different masks
 * differ in bits both match, so they never overlap, and flows of one mask
 * are distinct values under it, so no packet can match two flows.  2^10
 * tags cover the 1000 masks of the largest case. */
#define MEGAFLOW_TAG_BITS 10
#define MEGAFLOW_MAX_MASKS (1u << MEGAFLOW_TAG_BITS)

/* The flows of a megaflow case: flow i has mask i % n_masks, priority
 * 100 and cookie i. */
struct megaflow_set {
    size_t n_flows, n_masks;
    struct fdp_match *flows;
    struct fdp_flow_spec *specs;    /* specs[i].match is &flows[i]. */
    struct fdp_actions *actions;    /* Shared by every spec. */
};

static unsigned int
key_popcount(const struct fdp_key *k)
{
    unsigned int n = 0;

    for (int w = 0; w < FDP_KEY_WORDS; w++) {
        n += (unsigned int) __builtin_popcountll(k->w[w]);
    }
    return n;
}

/* A random megaflow mask with tag 'tag': dl_type and nw_proto exact (a
 * megaflow always un-wildcards them), each 5-tuple field wildcarded,
 * exact or a prefix (random_5tuple_mask()), and the tag bits of nw_src,
 * with at least 'min_free' bits beyond the tag, dl_type and nw_proto so
 * that the mask has room for its share of distinct flows. */
static void
megaflow_mask(uint64_t *seed, unsigned int tag, unsigned int min_free,
              struct fdp_match *m)
{
    const fdp_u128 tag_mask = fdp__ones(32)
                              & ~fdp__ones(32 - MEGAFLOW_TAG_BITS);

    do {
        random_5tuple_mask(seed, m);
        fdp__match_set_masked(m, FDP_F_NW_SRC,
                              (fdp_u128) tag << (32 - MEGAFLOW_TAG_BITS),
                              fdp__match_get_mask(m, FDP_F_NW_SRC)
                              | tag_mask);
    } while (key_popcount(&m->mask) < MEGAFLOW_TAG_BITS + 16 + 8 + min_free);
}

/* True if some packet matches both masked flows 'a' and 'b': for every
 * key word, the bits both match agree. */
static bool
megaflow_overlap(const struct fdp_match *a, const struct fdp_match *b,
                 const int *words, size_t n_words)
{
    for (size_t i = 0; i < n_words; i++) {
        int w = words[i];
        if ((a->value.w[w] ^ b->value.w[w]) & a->mask.w[w] & b->mask.w[w]) {
            return false;
        }
    }
    return true;
}

/* Checks, pair by pair, that no two flows of 'ms' overlap (the property
 * fdp_table_set_disjoint() relies on), and fatal()s if two do. */
static void
megaflow_check_disjoint(const struct megaflow_set *ms)
{
    /* Only words some mask touches can tell two flows apart. */
    int words[FDP_KEY_WORDS];
    size_t n_words = 0;
    for (int w = 0; w < FDP_KEY_WORDS; w++) {
        uint64_t any = 0;
        for (size_t i = 0; i < ms->n_masks; i++) {
            any |= ms->flows[i].mask.w[w];
        }
        if (any) {
            words[n_words++] = w;
        }
    }
    for (size_t i = 0; i < ms->n_flows; i++) {
        for (size_t j = i + 1; j < ms->n_flows; j++) {
            if (megaflow_overlap(&ms->flows[i], &ms->flows[j], words,
                                 n_words)) {
                fatal("megaflow-%zux%zu: flows %zu and %zu overlap",
                      ms->n_flows, ms->n_masks, i, j);
            }
        }
    }
}

/* Draws the values of flow 'i' of 'ms' (whose mask, that of flow
 * i % n_masks, is already in place) until they differ from every earlier
 * flow of the same mask. */
static void
megaflow_draw(struct megaflow_set *ms, size_t i, uint64_t *seed)
{
    struct fdp_match *m = &ms->flows[i];
    const fdp_u128 tag = fdp__match_get_value(m, FDP_F_NW_SRC)
                         & ~fdp__ones(32 - MEGAFLOW_TAG_BITS);
    bool dup;
    unsigned int tries = 0;

    do {
        if (++tries > 1000) {
            fatal("megaflow-%zux%zu: no room for flow %zu", ms->n_flows,
                  ms->n_masks, i);
        }
        for (int w = 0; w < FDP_KEY_WORDS; w++) {
            m->value.w[w] = test_rng_next(seed) & m->mask.w[w];
        }
        fdp__key_set(&m->value, FDP_F_DL_TYPE, 0x0800);
        fdp__key_set(&m->value, FDP_F_NW_PROTO, test_rng_next(seed) & 1 ? 6 : 17);
        fdp__key_set(&m->value, FDP_F_NW_SRC,
                     (fdp__match_get_value(m, FDP_F_NW_SRC)
                      & fdp__ones(32 - MEGAFLOW_TAG_BITS)) | tag);
        dup = false;
        for (size_t j = i % ms->n_masks; j < i && !dup; j += ms->n_masks) {
            dup = !memcmp(&ms->flows[j].value, &m->value, sizeof m->value);
        }
    } while (dup);
}

/* Builds 'n_flows' megaflow-like flows over 'n_masks' distinct masks and
 * checks that they are disjoint. */
static void
megaflow_set_init(struct megaflow_set *ms, size_t n_flows, size_t n_masks)
{
    uint64_t seed = 0xfeed + n_flows * 31 + n_masks;

    if (n_masks > MEGAFLOW_MAX_MASKS || n_masks > n_flows) {
        fatal("megaflow-%zux%zu: bad shape", n_flows, n_masks);
    }
    ms->n_flows = n_flows;
    ms->n_masks = n_masks;
    ms->flows = calloc(n_flows, sizeof *ms->flows);
    ms->specs = calloc(n_flows, sizeof *ms->specs);
    if (!ms->flows || !ms->specs) {
        fatal("out of memory");
    }

    /* Room for the mask's share of flows, with slack so that redraws of
     * duplicates stay rare: 2^free >= 4 * flows per mask. */
    size_t per_mask = (n_flows + n_masks - 1) / n_masks;
    unsigned int min_free = 2;
    while (((size_t) 1 << min_free) < 4 * per_mask) {
        min_free++;
    }
    for (size_t k = 0; k < n_masks; k++) {
        bool dup;
        do {
            megaflow_mask(&seed, (unsigned int) k, min_free, &ms->flows[k]);
            dup = false;
            for (size_t j = 0; j < k && !dup; j++) {
                dup = !memcmp(&ms->flows[j].mask, &ms->flows[k].mask,
                              sizeof ms->flows[k].mask);
            }
        } while (dup);
    }

    struct fdp__actions_builder b;
    fdp__actions_builder_init(&b);
    fdp__actions_add(&b, FDP_ACT_OUTPUT, 1);
    ms->actions = fdp__actions_finish(&b);
    for (size_t i = 0; i < n_flows; i++) {
        if (i >= n_masks) {
            ms->flows[i] = ms->flows[i % n_masks];
        }
        megaflow_draw(ms, i, &seed);
        ms->specs[i] = (struct fdp_flow_spec) {
            .match = &ms->flows[i], .actions = ms->actions, .cookie = i,
            .priority = 100,
        };
    }
    megaflow_check_disjoint(ms);
}

static void
megaflow_set_destroy(struct megaflow_set *ms)
{
    free(ms->flows);
    free(ms->specs);
    fdp_actions_destroy(ms->actions);
}

/* Builds a table of the flows of 'ms' (declared disjoint if 'disjoint')
 * and TSS_N_PACKETS packets, each inside a random flow, and checks that
 * every packet finds exactly the flow it was drawn from. */
static void
megaflow_build(struct tss_bench *tb, const struct megaflow_set *ms,
               bool disjoint, const char *case_name)
{
    uint64_t seed = 0xbeef + ms->n_masks;
    uint64_t *expected = malloc(TSS_N_PACKETS * sizeof *expected);
    struct fdp_key five_tuple;

    tb->table = bench_table_create(max_masks, disjoint);
    bench_table_fill(tb->table, ms->specs, ms->n_flows, case_name);

    /* A packet takes its flow's matched bits and random 5-tuple bits
     * elsewhere; other fields stay zero, as in a real key. */
    memset(&five_tuple, 0, sizeof five_tuple);
    fdp__key_set(&five_tuple, FDP_F_NW_SRC, fdp__ones(32));
    fdp__key_set(&five_tuple, FDP_F_NW_DST, fdp__ones(32));
    fdp__key_set(&five_tuple, FDP_F_TP_SRC, fdp__ones(16));
    fdp__key_set(&five_tuple, FDP_F_TP_DST, fdp__ones(16));
    tb->packets = malloc(TSS_N_PACKETS * sizeof *tb->packets);
    if (!expected || !tb->packets) {
        fatal("out of memory");
    }
    for (size_t i = 0; i < TSS_N_PACKETS; i++) {
        size_t f = test_rng_next(&seed) % ms->n_flows;
        const struct fdp_match *m = &ms->flows[f];
        for (int w = 0; w < FDP_KEY_WORDS; w++) {
            tb->packets[i].w[w] = m->value.w[w]
                                  | (test_rng_next(&seed) & ~m->mask.w[w]
                                     & five_tuple.w[w]);
        }
        tb->batches[i] = &tb->packets[i];
        expected[i] = f;
    }
    tb->n_packets = TSS_N_PACKETS;
    tss_verify(tb, expected, case_name);
    free(expected);
}

/* Formats the IPv4 address 'a' into 'buf' (at least 16 bytes). */
static void
format_ip4(uint32_t a, char *buf, size_t size)
{
    snprintf(buf, size, "%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff,
             (a >> 8) & 0xff, a & 0xff);
}

/* Parses into 'specs' 'n' ranged flows as a firewall writes them,
 * "udp,nw_dst=A-B,tp_dst=C-D" with distinct priorities.  Every range
 * starts at an odd value and spans at least two, so none is a prefix
 * block that the parser would turn into a mask: all of them are pipapo
 * flows. */
static void
ranged_specs(struct fdp_flow_spec *specs, size_t n)
{
    uint64_t seed = 0xac1;

    if (n > 65535) {
        fatal("ranged: at most 65535 distinct priorities");
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t lo = ((uint32_t) 10 << 24) | (uint32_t) (test_rng_next(&seed)
                                                           & 0xffffff) | 1;
        uint32_t hi = lo + 1 + (uint32_t) (test_rng_next(&seed) % 1000);
        unsigned int plo = (1024 + (unsigned int) (test_rng_next(&seed) % 60000)) | 1;
        unsigned int phi = plo + 1 + (unsigned int) (test_rng_next(&seed) % 100);
        char a[16], b[16], text[160];
        char *error = NULL;

        format_ip4(lo, a, sizeof a);
        format_ip4(hi, b, sizeof b);
        snprintf(text, sizeof text, "priority=%zu,cookie=%#zx,udp,"
                 "nw_dst=%s-%s,tp_dst=%u-%u,actions=output:1", n - i, i, a,
                 b, plo, phi);
        if (fdp_flow_parse(text, 0, &specs[i], &error)) {
            fatal("ranged: \"%s\": %s", text, error ? error : "no memory");
        }
    }
}

/* ranged-1000: lookups in a table of the 'n' ranged flows 'specs' (from
 * ranged_specs(), cookie = index), of packets inside random flows, each
 * checked against a linear scan before timing: the flows users write for
 * a firewall, through the table's pipapo sub-table. */
static void
ranged_lookups(const struct fdp_flow_spec *specs, size_t n)
{
    enum { N_PACKETS = 1024 };
    struct tss_bench tb;
    uint64_t *expected = malloc(N_PACKETS * sizeof *expected);
    uint64_t seed = 0xac2;

    tb.table = bench_table_create(max_masks, false);
    bench_table_fill(tb.table, specs, n, "ranged-1000");
    tb.n_packets = N_PACKETS;
    tb.packets = malloc(N_PACKETS * sizeof *tb.packets);
    if (!tb.packets || !expected) {
        fatal("out of memory");
    }
    for (size_t k = 0; k < N_PACKETS; k++) {
        const struct fdp_match *m = specs[test_rng_next(&seed) % n].match;
        struct fdp_key *key = &tb.packets[k];
        *key = m->value;
        uint32_t lo = (uint32_t) fdp__key_get(&m->value, FDP_F_NW_DST);
        uint32_t hi = (uint32_t) fdp__key_get(&m->hi, FDP_F_NW_DST);
        unsigned int plo = (unsigned int) fdp__key_get(&m->value,
                                                        FDP_F_TP_DST);
        unsigned int phi = (unsigned int) fdp__key_get(&m->hi, FDP_F_TP_DST);
        fdp__key_set(key, FDP_F_NW_DST, lo + test_rng_next(&seed) % (hi - lo + 1));
        fdp__key_set(key, FDP_F_TP_DST,
                     plo + test_rng_next(&seed) % (phi - plo + 1));
        tb.batches[k] = key;
        expected[k] = UINT64_MAX;
        for (size_t i = 0; i < n; i++) {    /* Best first. */
            if (fdp_match_matches(specs[i].match, key)) {
                expected[k] = specs[i].cookie;
                break;
            }
        }
    }
    tss_verify(&tb, expected, "ranged-1000");
    free(expected);
    table_measure(&tb, "tss", "ranged-1000",
                  fdp_cpu_level_name(fdp_cpu_level()), n);
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

    struct megaflow_set megaflows[3];
    megaflow_set_init(&megaflows[0], 1000, 10);
    megaflow_set_init(&megaflows[1], 1000, 100);
    megaflow_set_init(&megaflows[2], 1000, 1000);

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
        /* The issue's figure: exactly 1000 flows (no replaced duplicates)
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
        /* Megaflow-like caches: 1000 disjoint flows at one priority over
         * 10, 100 and 1000 masks, in a default table and in one declared
         * disjoint (a lookup ends at its first match). */
        for (size_t mi = 0; mi < FDP_ARRAY_SIZE(megaflows); mi++) {
            for (int disjoint = 0; disjoint < 2; disjoint++) {
                const struct megaflow_set *ms = &megaflows[mi];
                struct tss_bench tb;
                char case_name[48];
                snprintf(case_name, sizeof case_name, "megaflow-%zux%zu%s",
                         ms->n_flows, ms->n_masks,
                         disjoint ? "-disjoint" : "");
                megaflow_build(&tb, ms, disjoint, case_name);
                tss_measure(&tb, case_name, hashes[h], ms->n_flows);
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

    /* Bulk insert rates (one transaction each), with the library's fast
     * hash: the megaflow sets above, 10000 megaflow-like flows over 100
     * masks, and 1000 ranged flows. */
    for (size_t mi = 0; mi < FDP_ARRAY_SIZE(megaflows); mi++) {
        const struct megaflow_set *ms = &megaflows[mi];
        char case_name[48];
        snprintf(case_name, sizeof case_name, "insert-megaflow-%zux%zu",
                 ms->n_flows, ms->n_masks);
        report_bulk_insert("tss", case_name, ms->specs, ms->n_flows,
                           max_masks);
        megaflow_set_destroy(&megaflows[mi]);
    }
    struct megaflow_set big;
    megaflow_set_init(&big, 10000, 100);
    report_bulk_insert("tss", "insert-10000x100", big.specs, big.n_flows,
                       max_masks);
    megaflow_set_destroy(&big);

    enum { N_RANGED = 1000 };
    struct fdp_flow_spec *ranged = calloc(N_RANGED, sizeof *ranged);
    if (!ranged) {
        fatal("out of memory");
    }
    ranged_specs(ranged, N_RANGED);
    report_bulk_insert("tss", "insert-ranged-1000", ranged, N_RANGED,
                       max_masks);
    ranged_lookups(ranged, N_RANGED);
    for (size_t i = 0; i < N_RANGED; i++) {
        fdp_flow_spec_destroy(&ranged[i]);
    }
    free(ranged);
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

/* ---- The same workloads through the table, as flow text. ---- */

static bool
perf_has(const struct perf_type *pt, enum perf_fmt f)
{
    for (unsigned int i = 0; i < pt->n; i++) {
        if (pt->fmt[i] == f) {
            return true;
        }
    }
    return false;
}

/* Appends to 'buf' (of 'size' bytes, holding 'len') the text of
 * perf_value(f, n) in the flow syntax. */
static size_t
perf_format(char *buf, size_t size, size_t len, enum perf_fmt f, uint64_t n)
{
    fdp_u128 v = perf_value(f, n);

    if (len >= size) {
        return len;
    }
    buf += len;
    size -= len;
    switch (f) {
    case PF_ADDR4:
        format_ip4((uint32_t) v, buf, size);
        break;
    case PF_ADDR6:
        snprintf(buf, size, "%x:%x:%x:%x:%x:%x:%x:%x",
                 (unsigned int) (v >> 112) & 0xffff,
                 (unsigned int) (v >> 96) & 0xffff,
                 (unsigned int) (v >> 80) & 0xffff,
                 (unsigned int) (v >> 64) & 0xffff,
                 (unsigned int) (v >> 48) & 0xffff,
                 (unsigned int) (v >> 32) & 0xffff,
                 (unsigned int) (v >> 16) & 0xffff,
                 (unsigned int) v & 0xffff);
        break;
    case PF_MAC:
        snprintf(buf, size, "%02x:%02x:%02x:%02x:%02x:%02x",
                 (unsigned int) (v >> 40) & 0xff,
                 (unsigned int) (v >> 32) & 0xff,
                 (unsigned int) (v >> 24) & 0xff,
                 (unsigned int) (v >> 16) & 0xff,
                 (unsigned int) (v >> 8) & 0xff, (unsigned int) v & 0xff);
        break;
    case PF_PORT:
    case PF_PROTO:
    default:
        snprintf(buf, size, "%u", (unsigned int) v);
        break;
    }
    return len + strlen(buf);
}

/* Writes into 'buf' entry [lo, lo + 1] of 'pt' as a user writes it:
 * "priority=P,cookie=C,udp,nw_dst=A-B,tp_dst=C-D,actions=output:1".  The
 * protocol the module matches (nw_proto 17) is the "udp"/"udp6" shorthand
 * when there is a port, "nw_proto=17" otherwise; net6 is ipv6_dst, mac
 * dl_src (perf_field()). */
static void
perf_flow_text(const struct perf_type *pt, uint64_t lo, unsigned int priority,
               uint64_t cookie, char *buf, size_t size)
{
    bool v6 = perf_has(pt, PF_ADDR6), port = perf_has(pt, PF_PORT);
    const char *proto = port ? (v6 ? "udp6" : "udp") : (v6 ? "ipv6" : "ip");
    size_t len = (size_t) snprintf(buf, size, "priority=%u,cookie=%#" PRIx64
                                   ",%s", priority, cookie, proto);

    if (!port && perf_has(pt, PF_PROTO) && len < size) {
        len += (size_t) snprintf(buf + len, size - len, ",nw_proto=%u",
                                 (unsigned int) perf_value(PF_PROTO, 0));
    }
    for (unsigned int f = 0; f < pt->n; f++) {
        if (pt->fmt[f] == PF_PROTO) {
            continue;
        }
        if (len < size) {
            len += (size_t) snprintf(buf + len, size - len, ",%s=",
                                     fdp_field_name(perf_field(pt->fmt[f])));
        }
        len = perf_format(buf, size, len, pt->fmt[f], lo);
        if (len < size) {
            buf[len++] = '-';
            buf[len] = '\0';
        }
        len = perf_format(buf, size, len, pt->fmt[f], lo + 1);
    }
    if (len < size) {
        len += (size_t) snprintf(buf + len, size - len, ",actions=output:1");
    }
    if (len >= size) {
        fatal("pipapo %s: flow text too long", pt->name);
    }
}

/* The key of a packet that 'pt''s entries see as 'v' in every field. */
static void
perf_key(const struct perf_type *pt, uint64_t v, struct fdp_key *key)
{
    bool v6 = perf_has(pt, PF_ADDR6);

    memset(key, 0, sizeof *key);
    fdp__key_set(key, FDP_F_DL_TYPE, v6 ? 0x86dd : 0x0800);
    fdp__key_set(key, FDP_F_NW_PROTO, perf_value(PF_PROTO, 0));
    for (unsigned int f = 0; f < pt->n; f++) {
        fdp__key_set(key, perf_field(pt->fmt[f]), perf_value(pt->fmt[f], v));
    }
}

/* What perf_parse_run() parses. */
struct perf_parse {
    char (*texts)[256];
    struct fdp_flow_spec *specs;
    uint32_t n;
    const char *name;
};

/* Parses every text into its spec (freeing what an earlier run parsed
 * first) and returns the ns the parses took. */
static double
perf_parse_run(void *pp_)
{
    struct perf_parse *pp = pp_;

    for (uint32_t i = 0; i < pp->n; i++) {
        fdp_flow_spec_destroy(&pp->specs[i]);
    }
    double t0 = now_ns();
    for (uint32_t i = 0; i < pp->n; i++) {
        char *error = NULL;
        if (fdp_flow_parse(pp->texts[i], 0, &pp->specs[i], &error)) {
            fatal("pipapo %s: \"%s\": %s", pp->name, pp->texts[i],
                  error ? error : "out of memory");
        }
    }
    return now_ns() - t0;
}

/* The best entry for 'key' by brute force: the first (highest-priority)
 * of 'specs' whose match it satisfies, or -1. */
static long
perf_reference(const struct fdp_flow_spec *specs, uint32_t n,
               const struct fdp_key *key)
{
    for (uint32_t i = 0; i < n; i++) {
        if (fdp_match_matches(specs[i].match, key)) {
            return i;
        }
    }
    return -1;
}

/* The table-level cases of 'pt': its 'n' entries, entry i the range
 * [starts[i], starts[i] + 1] in every field, written as flow text with
 * priority n - i (so that entry 0 is the best), parsed (TYPE-table-parse,
 * ns per flow), inserted into one table in one transaction
 * (TYPE-table-insert, ns per flow, parse excluded), then looked up in
 * batches of 32: the module's probes, the last entry (TYPE-table) and
 * random entries (TYPE-table-random). */
static void
perf_table_cases(const struct perf_type *pt, const uint64_t *starts,
                 uint32_t n)
{
    const char *level = fdp_cpu_level_name(fdp_cpu_level());
    struct perf_parse pp = {
        malloc(n * sizeof *pp.texts), calloc(n, sizeof *pp.specs), n,
        pt->name,
    };
    char case_name[48];

    if (!pp.texts || !pp.specs) {
        fatal("out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        perf_flow_text(pt, starts[i], n - i, i, pp.texts[i],
                       sizeof pp.texts[i]);
    }
    snprintf(case_name, sizeof case_name, "%s-table-parse", pt->name);
    double parse_ns = median_of_runs(perf_parse_run, &pp);
    report(&(struct result) {
        .suite = "pipapo", .case_name = case_name, .impl = "parse",
        .entries = n, .ns_per_op = parse_ns / n,
    });

    snprintf(case_name, sizeof case_name, "%s-table-insert", pt->name);
    report_bulk_insert("pipapo", case_name, pp.specs, n, -1);

    for (int random = 0; random < 2; random++) {
        enum { N_RANDOM = 1024, N_REFERENCE = 64 };
        struct tss_bench tb;
        uint64_t *expected = malloc(N_RANDOM * sizeof *expected);
        uint64_t seed = 7;          /* The module cases' probes. */

        snprintf(case_name, sizeof case_name, "%s-table%s", pt->name,
                 random ? "-random" : "");
        tb.table = bench_table_create(-1, false);
        bench_table_fill(tb.table, pp.specs, n, case_name);
        tb.n_packets = random ? N_RANDOM : TSS_BATCH;
        tb.packets = malloc(tb.n_packets * sizeof *tb.packets);
        if (!tb.packets || !expected) {
            fatal("out of memory");
        }
        for (size_t k = 0; k < tb.n_packets; k++) {
            /* The last case repeats one probe, as the module's does. */
            size_t e = random ? (size_t) (test_rng_next(&seed) % n) : n - 1;
            if (!random && k) {
                tb.packets[k] = tb.packets[0];
            } else {
                perf_key(pt, starts[e], &tb.packets[k]);
            }
            tb.batches[k] = &tb.packets[k];
            expected[k] = e;
            if (!fdp_match_matches(pp.specs[e].match, &tb.packets[k])) {
                fatal("%s: probe %zu misses entry %zu", case_name, k, e);
            }
            /* The entries are disjoint (each field's ranges increase with
             * the entry), so the probe's entry is the answer; a linear
             * scan confirms it for the first probes. */
            if (k < N_REFERENCE
                && perf_reference(pp.specs, n, &tb.packets[k]) != (long) e) {
                fatal("%s: probe %zu: entry %zu is not the best match",
                      case_name, k, e);
            }
        }
        tss_verify(&tb, expected, case_name);
        free(expected);
        table_measure(&tb, "pipapo", case_name, level, n);
    }

    for (uint32_t i = 0; i < n; i++) {
        fdp_flow_spec_destroy(&pp.specs[i]);
    }
    free(pp.specs);
    free(pp.texts);
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
            struct fdp_match m;
            fdp__match_init(&m);
            for (unsigned int f = 0; f < pt->n; f++) {
                if (pt->fmt[f] == PF_PROTO) {
                    fdp__match_set_masked(&m, fields[f], 17, 0xff);
                } else {
                    fdp__match_set_range(&m, fields[f],
                                         perf_value(pt->fmt[f], start),
                                         perf_value(pt->fmt[f], end));
                }
            }
            struct fdp_rule *r = fdp__rule_alloc(&m);
            if (!r) {
                fatal("out of memory");
            }
            r->seq = i;
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
            if (!fdp__cpu_impl_allowed(&pi->cpu)) {
                continue;
            }
            pb->and_rows = pi->and_rows;
            for (int random = 0; random < 2; random++) {
                uint64_t seed = 7;
                pb->n_keys = random ? FDP_ARRAY_SIZE(pb->keys) : 1;
                for (size_t k = 0; k < pb->n_keys; k++) {
                    /* The selftest probes end - 1 of the last entry. */
                    uint64_t v = random ? starts[test_rng_next(&seed) % n]
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
                    .impl = pi->cpu.name, .entries = n,
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

        perf_table_cases(pt, starts, n);

        fdp__pipapo_snapshot_free(pb->snap);
        free(pb);
        for (uint32_t i = 0; i < n; i++) {
            fdp__rule_free_block(rules[i]);
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
    { "pipeline", suite_pipeline },
    { "extract", suite_extract },
    { "ct", suite_ct },
    { "group", suite_group },
    { "meter", suite_meter },
    { "learn", suite_learn },
    { "normal", suite_normal },
    { "tunnel", suite_tunnel },
    { "openflow", suite_openflow },
};

/* Which suites the command line named (all false: run every suite). */
static bool run[FDP_ARRAY_SIZE(suites)];
static bool any_named;

bool
suite_named(const char *name)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(suites); i++) {
        if (!strcmp(suites[i].name, name)) {
            return run[i];
        }
    }
    return false;
}

bool
suite_runs(const char *name)
{
    return !any_named || suite_named(name);
}

static void
usage(void)
{
    printf("%s: flowdp benchmarks\n"
           "usage: %s [--json] [--quick] [--seconds S] [--cpu N] [--thread-time]\n"
           "       [--max-masks N] [--classbench-dir DIR] [SUITE...]\n"
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
           "  --thread-time  time with the benchmark thread's CPU clock,\n"
           "            which leaves out the time other tenants of a shared\n"
           "            machine had its CPU; only for work done on that\n"
           "            thread (not the datapath suite's pmds, not the ct\n"
           "            suite's flush stall, timed by the busy thread)\n"
           "  --max-masks N  tss: tuple-space mask budget (0: no pipapo\n"
           "            overflow; default: the library's)\n"
           "  --classbench-dir DIR  table, peer-acl: the ClassBench sets\n"
           "            (default: $FLOWDP_CLASSBENCH_DIR, else the nearest\n"
           "            shared/data/classbench above the current directory\n"
           "            or the executable)\n"
           "Environment: FLOWDP_CPU=generic|sse42|avx2 forces a CPU level;\n"
           "  FLOWDP_CPU=validate checks every implementation on every lookup.\n");
}

/* Makes liburcu start its callback thread now, before --cpu pins this
 * one: a thread inherits its creator's CPUs, and the library's deferred
 * work (freeing, the grace periods after removals) would otherwise
 * compete with the measurements on the pinned CPU, as it does not in a
 * switch whose datapath threads have their own cores. */
static void
start_rcu_thread(void)
{
    struct fdp_table *t;
    struct fdp_flow_spec spec;

    if (fdp_table_create(&t)) {
        return;
    }
    if (!fdp_flow_parse("priority=1,ip,actions=drop", 0, &spec, NULL)) {
        struct fdp_table_filter filter = {
            .match = spec.match, .strict = true, .priority = 1,
        };
        if (!fdp_table_insert(t, &spec, 0)) {
            fdp_table_remove(t, &filter, NULL);
        }
        fdp_flow_spec_destroy(&spec);
    }
    fdp_table_destroy(t);
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
        { "thread-time", no_argument, NULL, 't' },
        { "classbench-dir", required_argument, NULL, 'B' },
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
            start_rcu_thread();
            CPU_SET(cpu, &set);
            if (sched_setaffinity(0, sizeof set, &set)) {
                fatal("--cpu %ld: %s", cpu, strerror(errno));
            }
            break;
        }
        case 'B':
            classbench_dir_option = optarg;
            break;
        case 't':
            bench_clock = CLOCK_THREAD_CPUTIME_ID;
            break;
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

    bool any = false;
    for (int i = optind; i < argc; i++) {
        size_t j;
        for (j = 0; j < FDP_ARRAY_SIZE(suites); j++) {
            if (!strcmp(argv[i], suites[j].name)) {
                run[j] = any = any_named = true;
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
