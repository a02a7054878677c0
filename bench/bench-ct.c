/*
 * flowdp-bench ct suite: connection trackers on the same packets, in the
 * same run (issue 23's benchmarks).
 *
 * Every tracker is an entry of 'impls' below (struct ct_impl): for now
 * Open vSwitch 3.1's userspace tracker, "ovs-ct", through
 * conntrack_execute() (bench-ovs-ct.c, built with configure
 * --with-ovs-source=DIR); flowdp's tracker joins as a second entry when
 * it exists.  The packets come from bench-ct-packets.c, which both sides
 * share.  Cases (NAME the number of connections: 1, 10k, 1M, 10M; with
 * --quick only 1 and 10k):
 *
 *   est-udp-NAME, est-tcp-NAME  established packets, both directions, of
 *       random connections (bench_ct_est_frames()), through ct in zone 0
 *       without commit, batches of 32, one thread: ns per packet.  The
 *       connections are opened first (UDP: the client's packet, committed,
 *       and the server's reply; TCP: SYN committed, SYN-ACK, ACK), and
 *       every pooled packet is checked to come out +est before and after
 *       the timing.  The pool holds twice as many packets as there are
 *       connections, at least CT_POOL_MIN and at most CT_POOL_MAX, so at
 *       1M and 10M connections each packet's connection is a cache miss
 *       as it would be in a switch.  "bytes" is the memory the process
 *       grew by while the connections were opened, per connection (the
 *       larger of its resident set's growth and malloc's bytes in use,
 *       see mem_grown(); 0 below 10k connections, where it is only
 *       noise).  The packets are generated before, in chunks, and do not
 *       count.  10M is
 *       skipped, with the reason, when the memory the 1M case took per
 *       connection does not fit 1.5 times over in what /proc/meminfo
 *       calls available.
 *   new-udp, new-tcp, new-udp-snat  ns per new connection: the first
 *       packet of CT_NEW connections, committed, into an empty tracker;
 *       -snat with nat(src=192.168.0.1-192.168.0.4:1024-65535).  Every
 *       packet must come out +new (and +snat).  Median of 5 fresh
 *       trackers.
 *   flush-zone-1M  ns per connection to flush zone 1 holding CT_FLUSH
 *       connections while zone 2 holds CT_BUSY more; meanwhile a second
 *       thread runs established packets of zone 2, batch after batch.
 *       The flush is timed on the wall clock, even with --thread-time.
 *   flush-stall-1M  the longest batch that thread took during the flush
 *       (ns/op is that one batch's ns); flush-stall-base the longest it
 *       took in 200 ms before the flush, the noise floor of this machine.
 *       Timed once: no spread.  A line after them says how often the
 *       thread slept (voluntary context switches, from getrusage()):
 *       waits on a lock, which other tenants of a shared machine cannot
 *       fake, as they do a long batch by preempting it.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/bench-ct-packets.h"
#ifdef HAVE_OVS
#include "bench/bench-ovs.h"
#endif
#include "utilities/tool.h"

#define CT_BATCH 32                 /* A datapath burst. */
#define CT_POOL_MIN 4096            /* Packets, for few connections. */
#define CT_POOL_MAX (1u << 20)      /* 64 MB of frames. */
#define CT_SETUP_CHUNK 65536        /* Connections opened per frame set. */
#define CT_NEW 100000               /* Connections per new-* run. */
#define CT_NEW_RUNS 5
#define CT_FLUSH 1000000            /* Connections flushed. */
#define CT_BUSY 10000               /* The busy thread's connections. */
#define CT_MIN_BYTES_CONNS 10000    /* Below: no bytes per connection. */

/* Connection families (bench_ct_conn_get()'s seeds). */
enum { SEED_EST = 1, SEED_NEW = 2, SEED_BUSY = 3 };

/* The trackers' common interface. */
struct ct_impl {
    const char *name;
    void *(*create)(uint32_t max_conns);
    void (*destroy)(void *);
    void (*execute)(void *, const struct bench_ct_frames *, size_t first,
                    size_t n, uint16_t zone, bool commit,
                    const struct bench_ct_nat *, struct bench_ct_counts *);
    uint32_t (*n_conns)(void *);
    void (*flush_zone)(void *, uint16_t zone,
                       const struct bench_ct_frames *busy, uint16_t busy_zone,
                       double *flush_ns, double *stall_ns, double *base_ns,
                       long *blocks, long *base_blocks);
};

#ifdef HAVE_OVS
static void *
ovs_create(uint32_t max_conns)
{
    return bench_ovs_ct_create(max_conns);
}

static void
ovs_destroy(void *t)
{
    bench_ovs_ct_destroy(t);
}

static void
ovs_execute(void *t, const struct bench_ct_frames *f, size_t first,
            size_t n, uint16_t zone, bool commit,
            const struct bench_ct_nat *nat, struct bench_ct_counts *counts)
{
    bench_ovs_ct_execute(t, f, first, n, zone, commit, nat, counts);
}

static uint32_t
ovs_n_conns(void *t)
{
    return bench_ovs_ct_n_conns(t);
}

static void
ovs_flush_zone(void *t, uint16_t zone, const struct bench_ct_frames *busy,
               uint16_t busy_zone, double *flush_ns, double *stall_ns,
               double *base_ns, long *blocks, long *base_blocks)
{
    bench_ovs_ct_flush_zone(t, zone, busy, busy_zone, flush_ns, stall_ns,
                            base_ns, blocks, base_blocks);
}

static const struct ct_impl ovs_impl = {
    "ovs-ct", ovs_create, ovs_destroy, ovs_execute, ovs_n_conns,
    ovs_flush_zone,
};
#endif

/* The largest table any case builds, as the trackers' limit. */
#define CT_MAX_CONNS 12000000
/* Open vSwitch's default limit (conntrack.c, DEFAULT_N_CONN_LIMIT). */
#define CT_DEFAULT_MAX_CONNS 3000000

/* ---------------------------------------------------------------------- */
/* Helpers.                                                                */

static const char *
proto_name(enum bench_ct_proto proto)
{
    return proto == BENCH_CT_UDP ? "udp" : "tcp";
}

static void
frames_or_die(int error, const char *what)
{
    if (error) {
        fatal("ct: %s: %s", what, strerror(error));
    }
}

/* The process's resident memory in bytes (/proc/self/statm), or 0. */
static uint64_t
rss_bytes(void)
{
    unsigned long size, resident;
    FILE *f = fopen("/proc/self/statm", "r");
    int n = f ? fscanf(f, "%lu %lu", &size, &resident) : 0;

    if (f) {
        fclose(f);
    }
    return n == 2 ? (uint64_t) resident * (uint64_t) sysconf(_SC_PAGESIZE)
                  : 0;
}

/* The bytes malloc has handed out and not had back (every arena, and
 * its own mmap()s). */
static uint64_t
heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();

    return (uint64_t) mi.uordblks + (uint64_t) mi.hblkhd;
}

/* The memory a step took: the larger of the growth of the resident set
 * and of malloc's bytes in use.  Each alone can miss some: the resident
 * set does not grow when malloc reuses memory an earlier case freed, and
 * malloc does not see what a tracker maps itself. */
struct mem_mark {
    uint64_t rss, heap;
};

static struct mem_mark
mem_mark(void)
{
    return (struct mem_mark) { rss_bytes(), heap_bytes() };
}

static uint64_t
mem_grown(const struct mem_mark *before)
{
    struct mem_mark now = mem_mark();
    uint64_t rss = now.rss > before->rss ? now.rss - before->rss : 0;
    uint64_t heap = now.heap > before->heap ? now.heap - before->heap : 0;

    return rss > heap ? rss : heap;
}

/* MemAvailable from /proc/meminfo in bytes, or 0 if unknown. */
static uint64_t
mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    uint64_t kb = 0;

    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1) {
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return kb * 1024;
}

static void
ct_report(const char *suite, const char *case_name, const char *impl,
          uint64_t entries, double ns, uint64_t bytes)
{
    report(&(struct result) {
        .suite = suite, .case_name = case_name, .impl = impl,
        .entries = entries, .ns_per_op = ns, .bytes = bytes,
    });
}

/* Opens connections 0 to 'n - 1' of family 'seed' in 'zone', a chunk at
 * a time in 'chunk' (a set of bench_ct_setup_frames() for up to
 * CT_SETUP_CHUNK connections of 'proto'), and checks that each came out
 * +new once and the tracker holds 'n' more. */
static void
open_conns(const struct ct_impl *impl, void *t, uint64_t seed,
           enum bench_ct_proto proto, size_t n, uint16_t zone,
           struct bench_ct_frames *chunk, const char *case_name)
{
    uint32_t before = impl->n_conns(t);
    struct bench_ct_counts counts = { 0 };

    for (size_t first = 0; first < n; first += CT_SETUP_CHUNK) {
        size_t m = n - first < CT_SETUP_CHUNK ? n - first : CT_SETUP_CHUNK;

        frames_or_die(bench_ct_setup_frames_refill(seed, proto, first, m,
                                                   chunk), case_name);
        impl->execute(t, chunk, 0, chunk->n, zone, true, NULL, &counts);
    }
    uint32_t after = impl->n_conns(t);
    if (counts.new != n || counts.inv || after - before != n) {
        fatal("ct: %s: %s: opening %zu connections gave %" PRIu64 " +new, %"
              PRIu64 " +inv and %" PRIu32 " more connections", case_name,
              impl->name, n, counts.new, counts.inv, after - before);
    }
}

/* A set for open_conns(). */
static void
chunk_create(enum bench_ct_proto proto, struct bench_ct_frames *chunk,
             const char *case_name)
{
    frames_or_die(bench_ct_setup_frames(0, proto, 0, CT_SETUP_CHUNK, chunk),
                  case_name);
}

/* ---------------------------------------------------------------------- */
/* Established packets.                                                    */

struct est_run {
    const struct ct_impl *impl;
    void *t;
    const struct bench_ct_frames *pool;
    size_t next;
};

static uint64_t
est_packets(void *er_, uint64_t n)
{
    struct est_run *er = er_;

    er->impl->execute(er->t, er->pool, er->next, (size_t) n, 0, false, NULL,
                      NULL);
    er->next = (size_t) ((er->next + n) % er->pool->n);
    return n;
}

static void
check_est(const struct est_run *er, const char *case_name, const char *when)
{
    struct bench_ct_counts counts = { 0 };

    er->impl->execute(er->t, er->pool, 0, er->pool->n, 0, false, NULL,
                      &counts);
    if (counts.est != er->pool->n || counts.inv) {
        fatal("ct: %s: %s: %s, %" PRIu64 " of %zu packets are +est (%"
              PRIu64 " +inv)", case_name, er->impl->name, when, counts.est,
              er->pool->n, counts.inv);
    }
}

/* Runs est-PROTO-NAME (of 'n' connections) on 'impl' unless memory
 * would not hold it (see the top of the file).  Returns the bytes per
 * connection, or 0 if not measured or skipped. */
static uint64_t
est_case(const char *suite, const struct ct_impl *impl,
         enum bench_ct_proto proto, size_t n, const char *size_name,
         double bytes_per_at_1m)
{
    char case_name[48];
    snprintf(case_name, sizeof case_name, "est-%s-%s", proto_name(proto),
             size_name);

    if (n > 1000000 && bytes_per_at_1m > 0) {
        uint64_t need = (uint64_t) (bytes_per_at_1m * 1.5 * n);
        uint64_t avail = mem_available();
        if (avail && need > avail) {
            fprintf(stderr, "ct: %s: %s: skipped: needs about %.1f GB "
                    "(1.5 x %.0f bytes per connection at 1M), %.1f GB "
                    "available\n", case_name, impl->name, need / 1e9,
                    bytes_per_at_1m, avail / 1e9);
            return 0;
        }
    }

    size_t n_pool = 2 * n;
    n_pool = n_pool < CT_POOL_MIN ? CT_POOL_MIN
             : n_pool > CT_POOL_MAX ? CT_POOL_MAX : n_pool;
    struct bench_ct_frames pool;
    frames_or_die(bench_ct_est_frames(SEED_EST, proto, n, n_pool, &pool),
                  case_name);

    uint32_t max_conns = n + n / 8 > CT_DEFAULT_MAX_CONNS
                         ? CT_MAX_CONNS : CT_DEFAULT_MAX_CONNS;
    void *t = impl->create(max_conns);
    struct bench_ct_frames chunk;
    chunk_create(proto, &chunk, case_name);
    struct mem_mark mark = mem_mark();
    open_conns(impl, t, SEED_EST, proto, n, 0, &chunk, case_name);
    uint64_t bytes = n >= CT_MIN_BYTES_CONNS ? mem_grown(&mark) / n : 0;

    struct est_run er = { .impl = impl, .t = t, .pool = &pool };
    check_est(&er, case_name, "before timing");
    double ns = measure(est_packets, &er);
    check_est(&er, case_name, "after timing");
    ct_report(suite, case_name, impl->name, n, ns, bytes);

    impl->destroy(t);
    bench_ct_frames_destroy(&chunk);
    bench_ct_frames_destroy(&pool);
    return bytes;
}

/* ---------------------------------------------------------------------- */
/* New connections.                                                        */

static int
cmp_double(const void *a_, const void *b_)
{
    double a = *(const double *) a_, b = *(const double *) b_;

    return a < b ? -1 : a > b;
}

static void
new_case(const char *suite, const struct ct_impl *impl,
         enum bench_ct_proto proto, const struct bench_ct_nat *nat,
         size_t n)
{
    char case_name[48];
    snprintf(case_name, sizeof case_name, "new-%s%s", proto_name(proto),
             nat ? "-snat" : "");

    struct bench_ct_frames f;
    frames_or_die(bench_ct_new_frames(SEED_NEW, proto, n, &f), case_name);
    double samples[CT_NEW_RUNS];
    for (int r = 0; r < CT_NEW_RUNS; r++) {
        void *t = impl->create(CT_DEFAULT_MAX_CONNS);
        struct bench_ct_counts counts = { 0 };

        double t0 = now_ns();
        impl->execute(t, &f, 0, f.n, 0, true, nat, &counts);
        samples[r] = (now_ns() - t0) / n;
        if (counts.new != n || (nat && counts.snat != n)
            || impl->n_conns(t) != n) {
            fatal("ct: %s: %s: %zu first packets gave %" PRIu64 " +new, %"
                  PRIu64 " +snat, %" PRIu64 " +inv, %" PRIu32
                  " connections", case_name, impl->name, n, counts.new,
                  counts.snat, counts.inv, impl->n_conns(t));
        }
        impl->destroy(t);
    }
    /* Each run is timed once, as a whole: the median, no spread (as the
     * insert cases of peer-ovs). */
    qsort(samples, CT_NEW_RUNS, sizeof samples[0], cmp_double);
    no_spread();
    ct_report(suite, case_name, impl->name, n, samples[CT_NEW_RUNS / 2], 0);
    bench_ct_frames_destroy(&f);
}

/* ---------------------------------------------------------------------- */
/* Zone flush.                                                             */

static void
flush_case(const char *suite, const struct ct_impl *impl, size_t n,
           const char *size_name)
{
    char flush_name[48], stall_name[48];
    snprintf(flush_name, sizeof flush_name, "flush-zone-%s", size_name);
    snprintf(stall_name, sizeof stall_name, "flush-stall-%s", size_name);

    void *t = impl->create(CT_DEFAULT_MAX_CONNS);
    struct bench_ct_frames chunk;
    chunk_create(BENCH_CT_UDP, &chunk, flush_name);
    open_conns(impl, t, SEED_EST, BENCH_CT_UDP, n, 1, &chunk, flush_name);
    open_conns(impl, t, SEED_BUSY, BENCH_CT_UDP, CT_BUSY, 2, &chunk,
               flush_name);
    bench_ct_frames_destroy(&chunk);

    struct bench_ct_frames busy;
    frames_or_die(bench_ct_est_frames(SEED_BUSY, BENCH_CT_UDP, CT_BUSY,
                                      CT_POOL_MIN * 16, &busy), flush_name);
    struct bench_ct_counts counts = { 0 };
    impl->execute(t, &busy, 0, busy.n, 2, false, NULL, &counts);
    if (counts.est != busy.n) {
        fatal("ct: %s: %s: %" PRIu64 " of %zu packets of zone 2 are +est",
              flush_name, impl->name, counts.est, busy.n);
    }

    double flush_ns, stall_ns, base_ns;
    long blocks, base_blocks;
    impl->flush_zone(t, 1, &busy, 2, &flush_ns, &stall_ns, &base_ns,
                     &blocks, &base_blocks);
    if (impl->n_conns(t) != CT_BUSY) {
        fatal("ct: %s: %s: %" PRIu32 " connections after the flush, not "
              "zone 2's %d", flush_name, impl->name, impl->n_conns(t),
              CT_BUSY);
    }
    no_spread();
    ct_report(suite, flush_name, impl->name, n, flush_ns / n, 0);
    ct_report(suite, stall_name, impl->name, n, stall_ns, 0);
    ct_report(suite, "flush-stall-base", impl->name, CT_BUSY, base_ns, 0);
    fprintf(json_output ? stderr : stdout,
            "%s: %s: the busy thread slept %ld times in the %.0f ms of the "
            "flush, %ld times in the 200 ms before\n", flush_name,
            impl->name, blocks, flush_ns / 1e6, base_blocks);

    impl->destroy(t);
    bench_ct_frames_destroy(&busy);
}

/* ---------------------------------------------------------------------- */
/* The cases.                                                              */

static void
run_cases(const char *suite, const struct ct_impl *impl)
{
    static const struct {
        const char *name;
        size_t n;
    } sizes[] = {
        { "1", 1 }, { "10k", 10000 }, { "1M", 1000000 },
        { "10M", 10000000 },
    };
    size_t n_sizes = quick ? 2 : sizeof sizes / sizeof sizes[0];
    static const enum bench_ct_proto protos[] = { BENCH_CT_UDP,
                                                  BENCH_CT_TCP };
    /* Four addresses, every port above the well-known ones (those
     * Open vSwitch also picks from when a range names none). */
    static const struct bench_ct_nat snat = {
        0xc0a80001, 0xc0a80004, 1024, 65535,
    };
    size_t n_new = quick ? CT_NEW / 10 : CT_NEW;

    for (size_t p = 0; p < 2; p++) {
        double bytes_per_at_1m = 0;
        for (size_t s = 0; s < n_sizes; s++) {
            uint64_t bytes = est_case(suite, impl, protos[p], sizes[s].n,
                                      sizes[s].name, bytes_per_at_1m);
            if (sizes[s].n == 1000000) {
                bytes_per_at_1m = (double) bytes;
            }
        }
    }
    new_case(suite, impl, BENCH_CT_UDP, NULL, n_new);
    new_case(suite, impl, BENCH_CT_TCP, NULL, n_new);
    new_case(suite, impl, BENCH_CT_UDP, &snat, n_new);
    flush_case(suite, impl, quick ? CT_FLUSH / 10 : CT_FLUSH,
               quick ? "100k" : "1M");
}

/* The trackers this build has. */
static const struct ct_impl *const impls[] = {
#ifdef HAVE_OVS
    &ovs_impl,
#endif
    NULL,
};

/* Without a tracker to measure, the suite still builds every set of
 * packets once (at --quick sizes), so that the generator is exercised. */
static void
generate_only(void)
{
    static const enum bench_ct_proto protos[] = { BENCH_CT_UDP,
                                                  BENCH_CT_TCP };

    for (size_t p = 0; p < 2; p++) {
        struct bench_ct_frames f;

        frames_or_die(bench_ct_setup_frames(SEED_EST, protos[p], 0, 10000,
                                            &f), "generate");
        bench_ct_frames_destroy(&f);
        frames_or_die(bench_ct_est_frames(SEED_EST, protos[p], 10000,
                                          CT_POOL_MIN, &f), "generate");
        bench_ct_frames_destroy(&f);
        frames_or_die(bench_ct_new_frames(SEED_NEW, protos[p], 10000, &f),
                      "generate");
        bench_ct_frames_destroy(&f);
    }
}

void
suite_ct(void)
{
    report_header("ct");
    /* flowdp's tracker (datapath/conntrack*.c, issue 23) joins 'impls'
     * when it exists. */
    fprintf(json_output ? stderr : stdout,
            "flowdp tracker: not built yet\n");
    if (!impls[0]) {
        fprintf(json_output ? stderr : stdout,
                "Open vSwitch's tracker: not built (configure "
                "--with-ovs-source=DIR; scripts/ovs-source.sh DIR makes "
                "one)\n");
        generate_only();
        return;
    }
    for (size_t i = 0; impls[i]; i++) {
        run_cases("ct", impls[i]);
    }
}

#ifdef HAVE_OVS
void
bench_ct_peer_ovs(void)
{
    run_cases("peer-ovs", &ovs_impl);
}
#endif
