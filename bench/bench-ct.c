/*
 * flowdp-bench ct suite: connection trackers on the same packets, in the
 * same run (issue 23's benchmarks).
 *
 * Every tracker is an entry of 'impls' below (struct ct_impl): flowdp's,
 * "fdp-ct" (datapath/conntrack.c), and Open vSwitch 3.1's userspace
 * tracker, "ovs-ct", through conntrack_execute() (bench-ovs-ct.c, built
 * with configure --with-ovs-source=DIR).  A tracker without NAT would
 * skip new-udp-snat, saying so.  The packets come from
 * bench-ct-packets.c, which both sides share.  Cases (NAME the number of connections: 1, 10k, 1M, 10M; with
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
 *
 * FLOWDP_BENCH_CASE=NAME runs only the case NAME (est-udp-10k, new-udp,
 * flush-zone-1M...), for profiles.
 *   dp-ct-10k, dp-noct-10k  through the datapath (flowdp only): ring
 *       ports as the datapath suite uses them, flows written as text in a
 *       pipeline, the EMC on with every result inserted (the pipeline
 *       suite's hit cases do the same: the steady state of a switch
 *       whose traffic repeats, reached within the warm-up; the
 *       continuation cache follows the EMC), the SMC off (a pipeline
 *       does not use it).  dp-ct-10k:
 *       "table=0,udp,actions=ct(table=1)" and "table=1,ct_state=+trk+est,
 *       udp,actions=output:2", on the established packets of 10k UDP
 *       connections opened in the datapath's tracker beforehand (as est-
 *       udp-10k's, both directions, random order); dp-noct-10k the same
 *       pipeline without ct (goto_table:1, and table 1 without the
 *       ct_state match) on the same packets.  ns per packet for the
 *       whole path (peer, rx, extract, classification, ct and the
 *       continuation, tx); every packet must come out.  A ratio line
 *       gives the rate with ct over the rate without (issue 23's goal:
 *       at least 0.5).  FLOWDP_BENCH_CASE=NAME runs only that one, and
 *       no other case of the suite (for a profile).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/bench-ct-packets.h"
#ifdef HAVE_OVS
#include "bench/bench-ovs.h"
#endif
#include "datapath/conntrack.h"
#include "datapath/dp-private.h"
#include "datapath/execute.h"
#include <flowdp/flowdp.h>
#include "tests/lib/peer.h"
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
    bool nat;                   /* Has NAT (the new-udp-snat case). */
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
    "ovs-ct", ovs_create, ovs_destroy, ovs_execute, ovs_n_conns, true,
    ovs_flush_zone,
};
#endif

/* flowdp's tracker (datapath/conntrack.c), "fdp-ct".  Each batch is
 * copied into its own buffers and parsed (fdp_packet_extract()) before the
 * tracker sees it: a datapath has the key and layout from classification,
 * but the copy and the parse are counted here, which Open vSwitch's
 * conntrack_execute() does not pay (its packets keep their offsets), so
 * the comparison leans against flowdp.  Every timeout is an hour, as the
 * peer's, so that nothing expires during a case; the clock is the
 * monotonic one in milliseconds. */
struct fdp_ct_bench {
    struct fdp__ct *ct;
    struct fdp__ct_pmd *pmd;
};

/* A thread's parsing buffers for one batch. */
struct fdp_ct_batch {
    uint8_t data[CT_BATCH][BENCH_CT_SLOT_SIZE];
    struct fdp__pkt pkts[CT_BATCH];
    struct fdp__pkt *ptrs[CT_BATCH];
    struct fdp__ct_result results[CT_BATCH];
};

static uint64_t
fdp_ct_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void *
fdp_ct_create(uint32_t max_conns)
{
    struct fdp_ct_bench *b = malloc(sizeof *b);
    /* Room beyond the limit for the pmds' cached ids and the ids that
     * wait for a grace period (conntrack.h). */
    uint32_t capacity = max_conns + max_conns / 16 + 4096;
    int error = b ? fdp__ct_create(capacity, &b->ct) : ENOMEM;

    if (!error) {
        error = fdp__ct_set_limit(b->ct, max_conns);
    }
    if (!error) {
        error = fdp__ct_pmd_create(b->ct, &b->pmd);
    }
    if (error) {
        fatal("ct: fdp-ct: cannot create a tracker for %" PRIu32
              " connections: %s", max_conns, strerror(error));
    }
    for (int tm = 0; tm < FDP__CT_N_TM; tm++) {
        fdp__ct_set_timeout(b->ct, (enum fdp__ct_tm) tm, 3600);
    }
    if (!getenv("FLOWDP_BENCH_CT_COLD")) {
        /* As a daemon does at start, off the packet path (conntrack.h):
         * the index resident, so that the timed packets take no page
         * faults on it.  FLOWDP_BENCH_CT_COLD=1 leaves it cold. */
        fdp__ct_populate(b->ct, SIZE_MAX);
    }
    return b;
}

static void
fdp_ct_destroy(void *b_)
{
    struct fdp_ct_bench *b = b_;

    fdp__ct_pmd_destroy(b->pmd);
    fdp__ct_destroy(b->ct);
    free(b);
}

/* Runs frames 'first' to 'first + n - 1' (cyclically) of 'f' through
 * 'pmd' in batches of CT_BATCH, in zone 'zone', committing if 'commit';
 * adds the outcomes to 'counts' if nonnull. */
static void
fdp_ct_run(struct fdp__ct_pmd *pmd, struct fdp_ct_batch *bb,
           const struct bench_ct_frames *f, size_t first, size_t n,
           uint16_t zone, bool commit, const struct fdp__ct_nat *nat,
           struct bench_ct_counts *counts)
{
    const struct fdp__ct_args args = { .zone = zone, .commit = commit,
                                       .nat = nat };
    uint64_t now = fdp_ct_now_ms();
    size_t k = first % f->n;

    for (size_t done = 0; done < n; ) {
        size_t m = n - done < CT_BATCH ? n - done : CT_BATCH;
        for (size_t j = 0; j < m; j++) {
            struct fdp__pkt *p = &bb->pkts[j];
            memcpy(bb->data[j], bench_ct_frame(f, k), f->len);
            p->data = bb->data[j];
            p->size = (uint32_t) f->len;
            p->headroom = 0;
            fdp_packet_extract(p->data, p->size, 1, &p->key, &p->layout);
            bb->ptrs[j] = p;
            if (++k == f->n) {
                k = 0;
            }
        }
        fdp__ct_execute(pmd, bb->ptrs, m, &args, NULL, now, bb->results);
        if (counts) {
            for (size_t j = 0; j < m; j++) {
                uint8_t st = bb->results[j].state;
                counts->new += (st & FDP_CT_NEW) != 0;
                counts->est += (st & FDP_CT_EST) != 0;
                counts->inv += (st & FDP_CT_INV) != 0;
                counts->snat += (st & FDP_CT_SNAT) != 0;
            }
        }
        done += m;
    }
}

static void
fdp_ct_execute(void *b_, const struct bench_ct_frames *f, size_t first,
               size_t n, uint16_t zone, bool commit,
               const struct bench_ct_nat *nat, struct bench_ct_counts *counts)
{
    static struct fdp_ct_batch bb;
    struct fdp_ct_bench *b = b_;

    struct fdp__ct_nat fnat;

    if (nat) {
        /* nat(src=MIN-MAX:PMIN-PMAX), as bench-ovs-ct.c gives Open
         * vSwitch. */
        memset(&fnat, 0, sizeof fnat);
        fnat.flags = FDP__NAT_SRC | FDP__NAT_ADDR | FDP__NAT_PORT;
        fnat.addr_min.lo = nat->min_addr;
        fnat.addr_max.lo = nat->max_addr;
        fnat.port_min = nat->min_port;
        fnat.port_max = nat->max_port;
    }
    fdp_ct_run(b->pmd, &bb, f, first, n, zone, commit, nat ? &fnat : NULL,
               counts);
}

static uint32_t
fdp_ct_n_conns(void *b_)
{
    struct fdp_ct_bench *b = b_;

    return fdp__ct_count(b->ct);
}

/* A flush beside a busy pmd, as the peer's (bench-ovs-ct.c): a second
 * thread, on another CPU if there is one, runs established packets of
 * 'busy_zone' batch after batch and notes its longest batch and the times
 * it slept, in the 200 ms before the flush and during it. */
enum { FDP_BUSY_BASELINE, FDP_BUSY_FLUSH, FDP_BUSY_STOP };

struct fdp_ct_busy {
    struct fdp__ct *ct;
    const struct bench_ct_frames *frames;
    uint16_t zone;
    atomic_int phase;
    atomic_bool running;
    double max_ns[2];
    long blocks[2];
    cpu_set_t main_cpus;
};

static long
fdp_ct_sleeps(void)
{
    struct rusage ru;

    return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nvcsw;
}

static void *
fdp_ct_busy_main(void *b_)
{
    struct fdp_ct_busy *b = b_;
    struct fdp_ct_batch *bb = malloc(sizeof *bb);
    struct fdp__ct_pmd *pmd;
    long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    size_t k = 0;

    CPU_ZERO(&set);
    for (long c = 0; c < n_cpus && c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &b->main_cpus)) {
            CPU_SET(c, &set);
        }
    }
    if (CPU_COUNT(&set)) {
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
    if (!bb || fdp__ct_pmd_create(b->ct, &pmd)) {
        fatal("ct: fdp-ct: out of memory");
    }
    atomic_store(&b->running, true);
    for (;;) {
        int phase = atomic_load(&b->phase);
        if (phase == FDP_BUSY_STOP) {
            break;
        }
        double t0 = now_ns();
        long sw0 = fdp_ct_sleeps();
        fdp_ct_run(pmd, bb, b->frames, k, CT_BATCH, b->zone, false, NULL,
                   NULL);
        double dt = now_ns() - t0;
        long sw = fdp_ct_sleeps() - sw0;
        k = (k + CT_BATCH) % b->frames->n;
        phase = atomic_load(&b->phase);
        if (phase < FDP_BUSY_STOP) {
            b->max_ns[phase] = dt > b->max_ns[phase] ? dt : b->max_ns[phase];
            b->blocks[phase] += sw;
        }
    }
    fdp__ct_pmd_destroy(pmd);
    free(bb);
    return NULL;
}

static void
fdp_ct_flush_zone(void *b_, uint16_t zone, const struct bench_ct_frames *busy,
                  uint16_t busy_zone, double *flush_ns, double *stall_ns,
                  double *base_ns, long *blocks, long *base_blocks)
{
    struct fdp_ct_bench *bc = b_;
    struct fdp_ct_busy b = { .ct = bc->ct, .frames = busy,
                             .zone = busy_zone };
    pthread_t thread;

    if (pthread_getaffinity_np(pthread_self(), sizeof b.main_cpus,
                               &b.main_cpus)) {
        CPU_ZERO(&b.main_cpus);
    }
    atomic_init(&b.phase, FDP_BUSY_BASELINE);
    atomic_init(&b.running, false);
    if (pthread_create(&thread, NULL, fdp_ct_busy_main, &b)) {
        fatal("ct: fdp-ct: cannot start the busy thread");
    }
    while (!atomic_load(&b.running)) {
        sched_yield();
    }
    /* Sleeping, so that the busy thread has a core to itself. */
    struct timespec baseline = { 0, 200 * 1000 * 1000 };
    nanosleep(&baseline, NULL);

    atomic_store(&b.phase, FDP_BUSY_FLUSH);
    double t0 = now_ns();
    fdp__ct_flush(bc->ct, &zone, NULL);
    *flush_ns = now_ns() - t0;
    atomic_store(&b.phase, FDP_BUSY_STOP);
    pthread_join(thread, NULL);
    *stall_ns = b.max_ns[FDP_BUSY_FLUSH];
    *base_ns = b.max_ns[FDP_BUSY_BASELINE];
    *blocks = b.blocks[FDP_BUSY_FLUSH];
    *base_blocks = b.blocks[FDP_BUSY_BASELINE];
}

static const struct ct_impl fdp_impl = {
    "fdp-ct", fdp_ct_create, fdp_ct_destroy, fdp_ct_execute, fdp_ct_n_conns,
    true, fdp_ct_flush_zone,
};

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

/* Whether case 'name' runs: all do, unless FLOWDP_BENCH_CASE names one
 * (a profile's target, as in the dp and pipeline suites). */
static bool
case_wanted(const char *name)
{
    const char *only = getenv("FLOWDP_BENCH_CASE");

    return !only || !*only || !strcmp(only, name);
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
    if (!case_wanted(case_name)) {
        return 0;
    }

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
    if (!case_wanted(case_name)) {
        return;
    }

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
    if (!case_wanted(flush_name)) {
        return;
    }

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
/* Through the datapath.                                                   */

#define DP_CONNS 10000
#define DP_RING 1024

struct dp_lane {
    struct fdp_pipeline *p;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings in, out;
    uint8_t *frames;            /* Back to back, 'len' bytes each. */
    size_t len, n, next;
};

static uint64_t
dp_lane_packets(void *l_, uint64_t n)
{
    struct dp_lane *l = l_;

    return test_peer_forward(l->pmd, &l->in, &l->out, l->frames, l->len,
                             l->n, &l->next, DP_RING, n);
}

/* Times 'flows' (text, NULL-terminated) in a pipeline's datapath on the
 * frames 'est' of connections that 'setup' opens first in the datapath's
 * tracker (NULL: none).  Returns ns per packet, or 0 if skipped. */
static double
dp_case(const char *case_name, const char *const *flows,
        const struct bench_ct_frames *setup,
        const struct bench_ct_frames *est)
{
    const char *only = getenv("FLOWDP_BENCH_CASE");
    struct dp_lane l;

    if (only && strcmp(only, case_name)) {
        return 0;
    }
    memset(&l, 0, sizeof l);
    if (fdp_pipeline_create(&l.p)) {
        fatal("ct: %s: out of memory", case_name);
    }
    for (const char *const *f = flows; *f; f++) {
        struct fdp_flow_spec spec;
        char *error = NULL;
        if (fdp_flow_parse(*f, 0, &spec, &error)) {
            fatal("ct: %s: %s: %s", case_name, *f, error);
        }
        if (fdp_pipeline_insert(l.p, &spec, 0)) {
            fatal("ct: %s: %s: cannot add", case_name, *f);
        }
        fdp_flow_spec_destroy(&spec);
    }
    struct fdp_dp_options o;
    fdp_dp_options_init(&o);
    o.emc_mode = FDP_DP_CACHE_ON;
    o.emc_insert_inv_prob = 1;
    o.smc_mode = FDP_DP_CACHE_OFF;
    if (fdp_dp_create_pipeline(l.p, &o, &l.dp)
        || fdp_dp_port_add(l.dp, 1, "ring:size=1024", NULL)
        || fdp_dp_port_add(l.dp, 2, "ring:size=1024", NULL)
        || fdp_dp_port_rings(l.dp, 1, &l.in)
        || fdp_dp_port_rings(l.dp, 2, &l.out)
        || fdp_dp_pmd_create(l.dp, 0, &l.pmd)) {
        fatal("ct: %s: setting up a datapath failed", case_name);
    }
    struct fdp__ct *ct = fdp__dp_ct(l.dp);
    for (int tm = 0; tm < FDP__CT_N_TM; tm++) {
        fdp__ct_set_timeout(ct, (enum fdp__ct_tm) tm, 3600);
    }
    if (setup) {
        static struct fdp_ct_batch bb;
        struct fdp__ct_pmd *cp;
        struct bench_ct_counts counts = { 0 };
        if (fdp__ct_pmd_create(ct, &cp)) {
            fatal("ct: %s: out of memory", case_name);
        }
        fdp_ct_run(cp, &bb, setup, 0, setup->n, 0, true, NULL, &counts);
        fdp__ct_pmd_destroy(cp);
        if (counts.new != DP_CONNS || fdp__ct_count(ct) != DP_CONNS) {
            fatal("ct: %s: opening %d connections gave %" PRIu64 " +new "
                  "and %" PRIu32 " connections", case_name, DP_CONNS,
                  counts.new, fdp__ct_count(ct));
        }
    }
    /* The frames back to back, as the peer sends them. */
    l.len = est->len;
    l.n = est->n;
    l.frames = malloc(l.n * l.len);
    if (!l.frames) {
        fatal("ct: %s: out of memory", case_name);
    }
    for (size_t k = 0; k < l.n; k++) {
        memcpy(l.frames + k * l.len, bench_ct_frame(est, k), l.len);
    }
    /* Warm up: every frame through four times; all must come out. */
    uint64_t got = dp_lane_packets(&l, 4 * l.n);
    if (got != 4 * l.n) {
        fatal("ct: %s: %" PRIu64 " of %zu packets forwarded", case_name,
              got, 4 * l.n);
    }
    double ns = measure(dp_lane_packets, &l);
    struct fdp_dp_stats st;
    fdp_dp_get_stats(l.dp, &st);
    if (st.n_missed || st.n_recirc_missed || st.n_recirc_dropped) {
        fatal("ct: %s: %" PRIu64 " misses, %" PRIu64 " continuation misses,"
              " %" PRIu64 " continuations dropped", case_name, st.n_missed,
              st.n_recirc_missed, st.n_recirc_dropped);
    }
    report(&(struct result) {
        .suite = "ct", .case_name = case_name, .impl = "fdp-dp",
        .entries = DP_CONNS, .ns_per_op = ns,
    });
    fdp_dp_pmd_destroy(l.pmd);
    fdp_dp_destroy(l.dp);
    fdp_pipeline_destroy(l.p);
    free(l.frames);
    return ns;
}

static void
dp_cases(void)
{
    static const char *const ct_flows[] = {
        "table=0,priority=10,udp,actions=ct(table=1)",
        "table=1,priority=10,ct_state=+trk+est,udp,actions=output:2",
        NULL
    };
    static const char *const noct_flows[] = {
        "table=0,priority=10,udp,actions=goto_table:1",
        "table=1,priority=10,udp,actions=output:2",
        NULL
    };
    struct bench_ct_frames setup, est;

    frames_or_die(bench_ct_setup_frames(SEED_EST, BENCH_CT_UDP, 0, DP_CONNS,
                                        &setup), "dp-ct-10k");
    frames_or_die(bench_ct_est_frames(SEED_EST, BENCH_CT_UDP, DP_CONNS,
                                      2 * DP_CONNS, &est), "dp-ct-10k");
    double with = dp_case("dp-ct-10k", ct_flows, &setup, &est);
    double without = dp_case("dp-noct-10k", noct_flows, NULL, &est);
    if (!json_output && with > 0 && without > 0) {
        printf("  ratio dp-ct-10k/dp-noct-10k packet rate: %.3gx (goal: "
               ">= 0.5x)\n", without / with);
    }
    bench_ct_frames_destroy(&setup);
    bench_ct_frames_destroy(&est);
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
    if (impl->nat) {
        new_case(suite, impl, BENCH_CT_UDP, &snat, n_new);
    } else {
        fprintf(stderr, "ct: new-udp-snat: %s: skipped: no NAT\n",
                impl->name);
    }
    flush_case(suite, impl, quick ? CT_FLUSH / 10 : CT_FLUSH,
               quick ? "100k" : "1M");
}

/* The trackers this build has. */
static const struct ct_impl *const impls[] = {
    &fdp_impl,
#ifdef HAVE_OVS
    &ovs_impl,
#endif
    NULL,
};

void
suite_ct(void)
{
    report_header("ct");
#ifndef HAVE_OVS
    fprintf(json_output ? stderr : stdout,
            "Open vSwitch's tracker: not built (configure "
            "--with-ovs-source=DIR; scripts/ovs-source.sh DIR makes one)\n");
#endif
    /* FLOWDP_BENCH_CASE=dp-... runs that datapath case alone. */
    const char *only = getenv("FLOWDP_BENCH_CASE");
    for (size_t i = 0; impls[i] && !(only && !strncmp(only, "dp-", 3));
         i++) {
        run_cases("ct", impls[i]);
    }
    dp_cases();
}

#ifdef HAVE_OVS
void
bench_ct_peer_ovs(void)
{
    run_cases("peer-ovs", &ovs_impl);
}
#endif
