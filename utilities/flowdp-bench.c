/*
 * flowdp-bench: flowdp's benchmarks.
 *
 * usage: flowdp-bench [--json] [--quick] [SUITE...]
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
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "flowdp/flowdp.h"
#include "lib/hash-private.h"
#include "lib/util.h"

static const char *program_name = "flowdp-bench";

static bool json_output;
static bool quick;

static void __attribute__((format(printf, 1, 2), noreturn))
fatal(const char *format, ...)
{
    va_list args;

    fprintf(stderr, "%s: ", program_name);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    exit(EXIT_FAILURE);
}

/* ---------------------------------------------------------------------- */
/* Timing and reporting.                                                   */

static double
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Defeats dead-code elimination of benchmark results. */
static volatile uint64_t sink;

struct result {
    const char *suite;
    const char *case_name;
    const char *impl;
    uint64_t entries;
    double ns_per_op;
    uint64_t bytes;
};

static void
report_header(const char *suite)
{
    if (!json_output) {
        printf("\n== %s (CPU level %s) ==\n", suite,
               fdp_cpu_level_name(fdp_cpu_level()));
        printf("%-14s %-12s %10s %12s %10s %10s\n",
               "case", "impl", "entries", "ns/op", "Mops/s", "bytes");
    }
}

static void
report(const struct result *r)
{
    double mops = r->ns_per_op > 0 ? 1e3 / r->ns_per_op : 0;

    if (json_output) {
        json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:I}",
                              "suite", r->suite, "case", r->case_name,
                              "impl", r->impl, "entries",
                              (json_int_t) r->entries, "ns_per_op",
                              r->ns_per_op, "mops", mops, "bytes",
                              (json_int_t) r->bytes);
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
        printf("%-14s %-12s %10" PRIu64 " %12.2f %10.1f %10" PRIu64 "\n",
               r->case_name, r->impl, r->entries, r->ns_per_op, mops,
               r->bytes);
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
 * ns per operation over several runs.  The operation count is calibrated so
 * that one run lasts about 'run_ns'. */
static double
measure(uint64_t (*fn)(void *arg, uint64_t n), void *arg)
{
    enum { RUNS = 5 };
    const double run_ns = quick ? 2e6 : 20e6;
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
    return samples[RUNS / 2];
}

/* A small, fast, seedable generator (xorshift64*) for benchmark inputs. */
static uint64_t
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

struct suite {
    const char *name;
    void (*run)(void);
};

static const struct suite suites[] = {
    { "hash", suite_hash },
};

static void
usage(void)
{
    printf("%s: flowdp benchmarks\n"
           "usage: %s [--json] [--quick] [SUITE...]\n"
           "Suites (default: all):", program_name, program_name);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(suites); i++) {
        printf(" %s", suites[i].name);
    }
    printf("\n"
           "  --json    one JSON object per result\n"
           "  --quick   short runs (a smoke test; figures are noisier)\n"
           "Environment: FLOWDP_CPU=generic|sse42|avx2 forces a CPU level.\n");
}

int
main(int argc, char *argv[])
{
    static const struct option long_options[] = {
        { "json", no_argument, NULL, 'j' },
        { "quick", no_argument, NULL, 'q' },
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
