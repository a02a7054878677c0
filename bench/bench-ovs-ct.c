/*
 * flowdp-bench ct cases, Open vSwitch side: its userspace connection
 * tracker (lib/conntrack.c) driven through conntrack_execute().
 *
 * Compiled with the OVS tree's include paths and config.h only (see
 * bench-ovs.h); uses OVS's lib/ API, no OVS code is copied.  The calls
 * are those dpif-netdev makes for a ct() action (dp_execute_cb(),
 * OVS_ACTION_ATTR_CT): one conntrack_execute() per batch of up to
 * NETDEV_MAX_BURST packets of one dl_type, with the zone, the commit
 * flag and the NAT action, and a time in milliseconds; no mark, label,
 * helper or timeout policy.  As OVS's own benchmark (tests/test-conntrack.c
 * "benchmark") does, the packets' connection metadata is cleared before
 * each batch (conntrack_clear()), so each batch is looked up afresh as a
 * batch received from a port is.
 *
 * Packets.  Each thread owns NETDEV_MAX_BURST dp_packets.  The first time
 * it sees frames of some length it writes one into each and runs
 * flow_extract() on it, which sets the layer offsets conntrack reads;
 * every frame of a set has the same layout (bench-ct-packets.h), so later
 * batches only copy each frame's bytes over a packet's (a port's receive
 * writing into a buffer) and keep the offsets.  That copy, 54 or 60
 * bytes, is the one cost in the timed loop that a datapath would not
 * have at this point.
 *
 * RCU.  The tracker frees connections after an RCU grace period
 * (ovsrcu_postpone()), which needs every thread that reads its maps to
 * quiesce now and then; a pmd does so every 1024 iterations of its loop
 * (pmd_thread_main()), and so do these loops, every 1024 batches and at
 * the end of each call.
 */
#include <config.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "conntrack.h"
#include "conntrack-tp.h"
#include "ct-dpif.h"
#include "dp-packet.h"
#include "flow.h"
#include "netdev.h"
#include "openvswitch/util.h"
#include "openvswitch/vlog.h"
#include "ovs-atomic.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "packets.h"
#include "timeval.h"
#include "util.h"

#include "bench/bench-ct-packets.h"
#include "bench/bench-ovs-peer.h"

/* As pmd_thread_main(): quiesce once every this many batches. */
#define QUIESCE_BATCHES 1024

/* The timeouts raised for the benchmark (seconds): an hour, longer than
 * any case runs (see bench_ovs_ct_create()). */
#define LONG_TIMEOUT_S 3600

/* The baseline the flush's stall is compared with: the busy thread's
 * longest batch over this long before the flush starts (ns). */
#define FLUSH_BASELINE_NS 200000000

/* One thread's packets. */
struct ct_runner {
    struct dp_packet *pkts[NETDEV_MAX_BURST];
    size_t len;                 /* Frame length the packets are set for. */
    uint64_t n_batches;         /* For QUIESCE_BATCHES. */
};

struct bench_ovs_ct {
    struct conntrack *ct;
    struct ct_runner runner;    /* The benchmark thread's. */
};

static void
runner_init(struct ct_runner *r)
{
    memset(r, 0, sizeof *r);
}

static void
runner_destroy(struct ct_runner *r)
{
    for (size_t j = 0; j < NETDEV_MAX_BURST; j++) {
        dp_packet_delete(r->pkts[j]);
        r->pkts[j] = NULL;
    }
}

/* Sets the runner's packets for frames of 'len' bytes like 'frame'. */
static void
runner_prepare(struct ct_runner *r, const uint8_t *frame, size_t len)
{
    runner_destroy(r);
    for (size_t j = 0; j < NETDEV_MAX_BURST; j++) {
        struct dp_packet *pkt = dp_packet_new(len);
        struct flow flow;

        dp_packet_put(pkt, frame, len);
        pkt_metadata_init(&pkt->md, u32_to_odp(1));
        flow_extract(pkt, &flow);
        ovs_assert(flow.dl_type == htons(ETH_TYPE_IP));
        r->pkts[j] = pkt;
    }
    r->len = len;
}

static void
count_states(const struct dp_packet_batch *batch,
             struct bench_ct_counts *counts)
{
    struct dp_packet *pkt;

    DP_PACKET_BATCH_FOR_EACH (j, pkt, batch) {
        uint8_t s = pkt->md.ct_state;
        counts->new += (s & CS_NEW) != 0;
        counts->est += (s & CS_ESTABLISHED) != 0;
        counts->inv += (s & CS_INVALID) != 0;
        counts->snat += (s & CS_SRC_NAT) != 0;
    }
}

/* The loop of bench_ovs_ct_execute(), on runner 'r'.  Stores in
 * '*max_batch_ns' (if nonnull) the longest batch. */
static void
run_frames(struct conntrack *ct, struct ct_runner *r, const uint8_t *frames,
           size_t len, size_t n_frames, size_t first, size_t n,
           uint16_t zone, bool commit, const struct nat_action_info_t *nat,
           struct bench_ct_counts *counts)
{
    long long now = time_msec();
    size_t k = first % n_frames;

    if (r->len != len) {
        runner_prepare(r, frames, len);
    }
    for (size_t done = 0; done < n; ) {
        struct dp_packet_batch batch;
        size_t m = MIN(n - done, NETDEV_MAX_BURST);

        dp_packet_batch_init(&batch);
        for (size_t j = 0; j < m; j++) {
            struct dp_packet *pkt = r->pkts[j];
            memcpy(dp_packet_data(pkt), frames + k * BENCH_CT_SLOT_SIZE, len);
            conntrack_clear(pkt);
            dp_packet_batch_add(&batch, pkt);
            if (++k == n_frames) {
                k = 0;
            }
        }
        conntrack_execute(ct, &batch, htons(ETH_TYPE_IP), false, commit,
                          zone, NULL, NULL, 0, 0, NULL, nat, now, 0);
        if (counts) {
            count_states(&batch, counts);
        }
        done += m;
        if (++r->n_batches % QUIESCE_BATCHES == 0) {
            ovsrcu_quiesce();
            now = time_msec();
        }
    }
    ovsrcu_quiesce();
}

/* ---------------------------------------------------------------------- */
/* The interface (bench-ovs.h).                                            */

struct bench_ovs_ct *
bench_ovs_ct_create(uint32_t max_conns)
{
    static const enum ct_dpif_tp_attr raised[] = {
        CT_DPIF_TP_ATTR_TCP_SYN_SENT, CT_DPIF_TP_ATTR_TCP_SYN_RECV,
        CT_DPIF_TP_ATTR_UDP_FIRST, CT_DPIF_TP_ATTR_UDP_SINGLE,
        CT_DPIF_TP_ATTR_UDP_MULTIPLE,
    };
    static const char *const quiet[] = { "timeval", "coverage", "poll_loop" };
    struct bench_ovs_ct *bc = xzalloc(sizeof *bc);
    struct timeout_policy tp;

    /* OVS's RCU thread warns of its "unreasonably long poll interval"
     * (and dumps coverage counters) when a case keeps it waiting for
     * seconds, as opening 10M connections does, and its poll loop logs
     * busy wake-ups while ovsrcu_barrier() waits for 10M frees; that is
     * the benchmark's doing, not news. */
    for (size_t i = 0; i < ARRAY_SIZE(quiet); i++) {
        struct vlog_module *m = vlog_module_from_name(quiet[i]);
        if (m) {
            vlog_set_levels(m, VLF_ANY_DESTINATION, VLL_ERR);
        }
    }

    /* OVS's threads (the tracker's sweeper, and the RCU thread that the
     * first quiescence starts) inherit the creator's CPUs: create them
     * while this thread may run anywhere, so that with --cpu they do not
     * share the benchmark's CPU, as in a switch they do not share a
     * pmd's isolated core. */
    cpu_set_t mine, all;
    bool pinned = !pthread_getaffinity_np(pthread_self(), sizeof mine,
                                          &mine);
    long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
    CPU_ZERO(&all);
    for (long c = 0; c < n_cpus && c < CPU_SETSIZE; c++) {
        CPU_SET(c, &all);
    }
    if (pinned) {
        pthread_setaffinity_np(pthread_self(), sizeof all, &all);
    }
    bc->ct = conntrack_init();
    ovsrcu_quiesce();
    if (pinned) {
        pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
    }
    conntrack_set_maxconns(bc->ct, max_conns);

    /* The default policy (id 0) with the opening and UDP timeouts raised;
     * the rest keep their defaults. */
    memset(&tp, 0, sizeof tp);
    tp.policy.id = DEFAULT_TP_ID;
    for (size_t i = 0; i < ARRAY_SIZE(raised); i++) {
        tp.policy.present |= 1u << raised[i];
        tp.policy.attrs[raised[i]] = LONG_TIMEOUT_S;
    }
    timeout_policy_update(bc->ct, &tp);
    runner_init(&bc->runner);
    return bc;
}

void
bench_ovs_ct_destroy(struct bench_ovs_ct *bc)
{
    if (bc) {
        runner_destroy(&bc->runner);
        conntrack_destroy(bc->ct);
        /* The connections are freed after a grace period, by OVS's RCU
         * thread: wait for it, so that the next case's memory and time
         * are its own. */
        ovsrcu_barrier();
        free(bc);
    }
}

void
bench_ovs_ct_execute(struct bench_ovs_ct *bc,
                     const struct bench_ct_frames *frames, size_t first,
                     size_t n, uint16_t zone, bool commit,
                     const struct bench_ct_nat *nat,
                     struct bench_ct_counts *counts)
{
    struct nat_action_info_t info;

    if (nat) {
        memset(&info, 0, sizeof info);
        info.min_addr.ipv4 = htonl(nat->min_addr);
        info.max_addr.ipv4 = htonl(nat->max_addr);
        info.min_port = nat->min_port;
        info.max_port = nat->max_port;
        info.nat_action = NAT_ACTION_SRC | NAT_ACTION_SRC_PORT;
    }
    run_frames(bc->ct, &bc->runner, frames->data, frames->len, frames->n,
               first, n, zone, commit, nat ? &info : NULL, counts);
}

uint32_t
bench_ovs_ct_n_conns(struct bench_ovs_ct *bc)
{
    uint32_t n = 0;

    conntrack_get_nconns(bc->ct, &n);
    return n;
}

/* ---------------------------------------------------------------------- */
/* A flush beside a busy pmd.                                              */

enum busy_phase { BUSY_BASELINE, BUSY_FLUSH, BUSY_STOP };

struct busy {
    struct conntrack *ct;
    const uint8_t *frames;
    size_t len, n_frames;
    uint16_t zone;
    atomic_int phase;           /* enum busy_phase. */
    atomic_bool running;        /* Set by the thread once it runs. */
    double max_ns[2];           /* Longest batch in each phase. */
    long blocks[2];             /* Times it slept in each phase. */
    cpu_set_t main_cpus;        /* The flushing thread's CPUs. */
};

/* Moves the calling thread off the CPUs of 'main_cpus' (those the
 * benchmark thread may run on, one when flowdp-bench runs with --cpu) onto
 * the machine's others, if it has others: a pmd has its own core, and
 * sharing the flushing thread's would measure the scheduler's time
 * slices, not the tracker. */
static void
move_off_cpus(const cpu_set_t *main_cpus)
{
    long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;

    CPU_ZERO(&set);
    for (long c = 0; c < n_cpus && c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, main_cpus)) {
            CPU_SET(c, &set);
        }
    }
    if (CPU_COUNT(&set)) {
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
}

/* The calling thread's voluntary context switches so far: the times it
 * slept, on a lock or otherwise (a busy thread that is only preempted has
 * none).  On a shared machine the longest batch mostly measures the
 * other tenants; this counts what the tracker made the thread wait. */
static long
voluntary_switches(void)
{
    struct rusage ru;

    return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nvcsw;
}

static void *
busy_main(void *b_)
{
    struct busy *b = b_;
    struct ct_runner r;
    size_t k = 0;
    int phase;

    move_off_cpus(&b->main_cpus);
    runner_init(&r);
    atomic_store(&b->running, true);
    for (;;) {
        atomic_read(&b->phase, &phase);
        if (phase == BUSY_STOP) {
            break;
        }
        double t0 = bench_ovs_now_ns();
        long sw0 = voluntary_switches();
        run_frames(b->ct, &r, b->frames, b->len, b->n_frames, k,
                   NETDEV_MAX_BURST, b->zone, false, NULL, NULL);
        double dt = bench_ovs_now_ns() - t0;
        long sw = voluntary_switches() - sw0;
        k = (k + NETDEV_MAX_BURST) % b->n_frames;
        /* The phase when the batch ended: a batch that straddles the
         * flush's start counts to the flush. */
        atomic_read(&b->phase, &phase);
        if (phase < BUSY_STOP) {
            b->max_ns[phase] = MAX(b->max_ns[phase], dt);
            b->blocks[phase] += sw;
        }
    }
    runner_destroy(&r);
    return NULL;
}

void
bench_ovs_ct_flush_zone(struct bench_ovs_ct *bc, uint16_t zone,
                        const struct bench_ct_frames *busy,
                        uint16_t busy_zone, double *flush_ns,
                        double *stall_ns, double *base_ns,
                        long *blocks, long *base_blocks)
{
    struct busy b = {
        .ct = bc->ct, .frames = busy->data, .len = busy->len,
        .n_frames = busy->n, .zone = busy_zone,
    };
    bool running = false;

    if (pthread_getaffinity_np(pthread_self(), sizeof b.main_cpus,
                               &b.main_cpus)) {
        CPU_ZERO(&b.main_cpus);
    }
    atomic_init(&b.phase, BUSY_BASELINE);
    atomic_init(&b.running, false);
    pthread_t thread = ovs_thread_create("ct_busy", busy_main, &b);
    while (!running) {
        atomic_read(&b.running, &running);
    }
    /* Sleeping, so that the busy thread has a core to itself. */
    struct timespec baseline = { 0, FLUSH_BASELINE_NS };
    nanosleep(&baseline, NULL);

    atomic_store(&b.phase, BUSY_FLUSH);
    double t0 = bench_ovs_now_ns();
    conntrack_flush(bc->ct, &zone);
    *flush_ns = bench_ovs_now_ns() - t0;
    atomic_store(&b.phase, BUSY_STOP);
    xpthread_join(thread, NULL);
    ovsrcu_quiesce();
    *stall_ns = b.max_ns[BUSY_FLUSH];
    *base_ns = b.max_ns[BUSY_BASELINE];
    *blocks = b.blocks[BUSY_FLUSH];
    *base_blocks = b.blocks[BUSY_BASELINE];
}
