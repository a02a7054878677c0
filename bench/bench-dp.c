/*
 * flowdp-bench ring and datapath suites.
 *
 * ring: descriptor rings (include/flowdp/ring.h), ns per descriptor:
 *   rxdrop-1t  one thread produces batches of 32 and consumes them;
 *   rxdrop-2t  a producer thread and a consumer thread;
 *   l2fwd-2t   a "NIC" thread feeds an rx ring and drains a tx ring while
 *              the forwarding thread moves each descriptor from rx to tx.
 *
 * datapath: 64-byte frames (60 bytes without the FCS: UDP over IPv4)
 *   generated in memory, pushed through a ring port's rx by a peer running
 *   on the same thread as the pmd, forwarded by output and drained from
 *   the output port's tx: ns per packet for the whole path on one core
 *   (the peer's copy of each frame included).  impl says how each cache
 *   is used (on, off, auto) and, where not the default, the EMC's
 *   insertion probability and the SMC's size.
 *   emc-hit        1000 flows (one mask), 1000 distinct packets, every
 *                  result cached (insertion probability 1; warmed up);
 *   emc-hit-p100   the same at Open vSwitch's 1/100;
 *   1000x1-*       the same flows, EMC off, or auto (the pmd decides);
 *   1000x100-*     1000 flows over 100 masks (megaflow-like: nw_src
 *                  prefixes x tp_src masks), EMC off or auto;
 *   ranges         1000 flows with port ranges, EMC off;
 *   100k-*         100,000 such 100-mask flows in a table declared
 *                  disjoint, 100,000 distinct packets: the EMC alone
 *                  (which thrashes), the SMC alone (default size and
 *                  2^18), both, both in auto mode;
 *   emc-hit-Npmd   2000 flows, each of N pmds on its own thread with its
 *                  own ports and half the flows: the aggregate rate.
 *   FLOWDP_BENCH_CASE=NAME runs one case (a profile's target);
 *   FLOWDP_BENCH_VERBOSE prints each case's cache counters.
 *   veth-*         (bench-veth.c) real interfaces in network namespaces.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "bench/bench.h"
#include "utilities/tool.h"

#define BATCH 32
#define RING_SIZE 1024

/* ---------------------------------------------------------------------- */
/* ring                                                                    */

static uint64_t
rxdrop_1t(void *ring_, uint64_t n)
{
    struct fdp_ring *r = ring_;
    uint64_t sum = 0;

    for (uint64_t done = 0; done < n; done += BATCH) {
        uint32_t idx, got;
        got = fdp_ring_reserve(r, BATCH, &idx);
        for (uint32_t i = 0; i < got; i++) {
            fdp_ring_slot(r, idx + i)->addr = done + i;
        }
        fdp_ring_submit(r, got);
        got = fdp_ring_peek(r, BATCH, &idx);
        for (uint32_t i = 0; i < got; i++) {
            sum += fdp_ring_slot(r, idx + i)->addr;
        }
        fdp_ring_release(r, got);
    }
    return sum;
}

struct pair {
    struct fdp_ring *a, *b;     /* rx, and tx for l2fwd. */
    uint64_t n;
};

/* Produces 'n' descriptors on 'a' (and, for l2fwd, drains 'b'). */
static void *
producer_main(void *p_)
{
    struct pair *p = p_;
    uint64_t made = 0, drained = 0;

    while (made < p->n || (p->b && drained < p->n)) {
        uint32_t idx, got = 0;
        if (made < p->n) {
            uint32_t want = p->n - made < BATCH ? (uint32_t) (p->n - made)
                                                : BATCH;
            got = fdp_ring_reserve(p->a, want, &idx);
            for (uint32_t i = 0; i < got; i++) {
                *fdp_ring_slot(p->a, idx + i) = (struct fdp_desc) {
                    .addr = made + i, .len = 60,
                };
            }
            fdp_ring_submit(p->a, got);
            made += got;
        }
        if (p->b) {
            uint32_t k = fdp_ring_peek(p->b, BATCH, &idx);
            fdp_ring_release(p->b, k);
            drained += k;
            got += k;
        }
        if (!got) {
            sched_yield();      /* Shared machines: let the other side run. */
        }
    }
    return NULL;
}

/* Consumes 'n' descriptors from 'a', forwarding them to 'b' if set. */
static uint64_t
consume(struct pair *p)
{
    uint64_t got_total = 0, sum = 0;

    while (got_total < p->n) {
        uint32_t idx, tidx = 0, room = BATCH, got;
        if (p->b) {
            /* Take only as many as the tx ring has room for. */
            room = fdp_ring_reserve(p->b, BATCH, &tidx);
            if (!room) {
                sched_yield();
                continue;
            }
        }
        got = fdp_ring_peek(p->a, room, &idx);
        for (uint32_t i = 0; i < got; i++) {
            const struct fdp_desc *d = fdp_ring_slot(p->a, idx + i);
            sum += d->addr;
            if (p->b) {
                *fdp_ring_slot(p->b, tidx + i) = *d;
            }
        }
        if (p->b) {
            fdp_ring_submit(p->b, got);
            fdp_ring_cancel(p->b, room - got);
        }
        fdp_ring_release(p->a, got);
        got_total += got;
        if (!got) {
            sched_yield();
        }
    }
    return sum;
}

static uint64_t
two_threads(struct pair *p, uint64_t n)
{
    pthread_t t;

    p->n = n;
    if (pthread_create(&t, NULL, producer_main, p)) {
        fatal("ring: pthread_create: %s", strerror(errno));
    }
    uint64_t sum = consume(p);
    pthread_join(t, NULL);
    return sum;
}

static uint64_t
rxdrop_2t(void *p_, uint64_t n)
{
    struct pair *p = p_;

    p->b = NULL;
    return two_threads(p, n);
}

static uint64_t
l2fwd_2t(void *p_, uint64_t n)
{
    return two_threads(p_, n);
}

void
suite_ring(void)
{
    struct fdp_ring *a, *b;

    if (fdp_ring_create(RING_SIZE, &a) || fdp_ring_create(RING_SIZE, &b)) {
        fatal("ring: out of memory");
    }
    report_header("ring");
    double ns = measure(rxdrop_1t, a);
    report(&(struct result) { .suite = "ring", .case_name = "rxdrop-1t",
                              .impl = "flowdp", .entries = RING_SIZE,
                              .ns_per_op = ns });
    struct pair p = { a, NULL, 0 };
    ns = measure(rxdrop_2t, &p);
    report(&(struct result) { .suite = "ring", .case_name = "rxdrop-2t",
                              .impl = "flowdp", .entries = RING_SIZE,
                              .ns_per_op = ns });
    struct pair q = { a, b, 0 };
    ns = measure(l2fwd_2t, &q);
    report(&(struct result) { .suite = "ring", .case_name = "l2fwd-2t",
                              .impl = "flowdp", .entries = RING_SIZE,
                              .ns_per_op = ns });
    fdp_ring_destroy(a);
    fdp_ring_destroy(b);
}

/* ---------------------------------------------------------------------- */
/* datapath                                                                */

#define FRAME_LEN 60
#define MAX_PMDS 2

/* One pmd and the ports it forwards between, driven by a peer on the
 * pmd's own thread. */
struct dp_lane {
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings in, out;
    const uint8_t (*packets)[FRAME_LEN];
    unsigned int n_packets;     /* Distinct packets this lane sends. */
    size_t next;
    uint64_t n;                 /* Packets to send (threaded runs). */
};

struct dp_bench {
    struct fdp_table *table;
    struct fdp_dp *dp;
    unsigned int n_lanes;
    struct dp_lane lanes[MAX_PMDS];
    uint8_t (*packets)[FRAME_LEN];
    unsigned int n_flows;
};

/* A UDP/IPv4 frame from 10.1.0.1:1000 to 10.X.Y.Z:5000 for flow 'i'
 * (i < 2^24). */
static void
make_frame(uint8_t *p, unsigned int i)
{
    static const uint8_t head[] = {
        0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00,
        0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0,
        10, 1, 0, 1, 10, 0, 0, 0,
        0x03, 0xe8, 0x13, 0x88, 0, 26, 0, 0,
    };
    memset(p, 0, FRAME_LEN);
    memcpy(p, head, sizeof head);
    p[31] = (uint8_t) (i >> 16);
    p[32] = (uint8_t) (i >> 8);
    p[33] = (uint8_t) i;
}

static void
add_flow(struct fdp_table *t, const char *text)
{
    struct fdp_flow_spec spec;
    char *msg = NULL;

    if (fdp_flow_parse(text, 0, &spec, &msg)
        || fdp_table_insert(t, &spec, 0)) {
        fatal("datapath: %s: %s", text, msg ? msg : "insert failed");
    }
    fdp_flow_spec_destroy(&spec);
}

/* Flow 'i' of each shape, sending to port 'out'; every one matches frame
 * 'i' only. */
static void
flow_text(const char *shape, unsigned int i, unsigned int out, char *buf,
          size_t size)
{
    unsigned int a = i >> 16, b = (i >> 8) & 0xff, c = i & 0xff;

    if (!strcmp(shape, "x100")) {
        /* 100 masks: nw_src prefix /26../32 x tp_src mask, as the run
         * measurement in docs/PERFORMANCE.md. */
        unsigned int m = i % 100, plen = 26 + m % 7;
        unsigned int tmask = (0xffffu << (m / 7)) & 0xffff;
        snprintf(buf, size, "udp,nw_src=10.1.0.1/%u,nw_dst=10.%u.%u.%u,"
                 "tp_src=%u/0x%x,actions=output:%u", plen, a, b, c,
                 1000 & tmask, tmask, out);
    } else if (!strcmp(shape, "ranges")) {
        snprintf(buf, size, "udp,nw_dst=10.%u.%u.%u,tp_dst=4000-6000,"
                 "tp_src=1000-1010,actions=output:%u", a, b, c, out);
    } else {
        snprintf(buf, size, "udp,nw_dst=10.%u.%u.%u,actions=output:%u",
                 a, b, c, out);
    }
}

uint64_t
bench_forward(struct fdp_dp_pmd *pmd, const struct fdp_port_rings *in,
              const struct fdp_port_rings *out, const uint8_t *frames,
              size_t frame_len, size_t n_frames, size_t *next,
              uint32_t ring_size, uint64_t n)
{
    uint64_t sent = 0, got = 0;

    while (sent < n) {
        uint32_t fidx, ridx, room = fdp_ring_reserve(in->rx, BATCH, &ridx);
        uint32_t k = fdp_ring_peek(in->fill, room, &fidx);
        fdp_ring_cancel(in->rx, room - k);
        for (uint32_t i = 0; i < k; i++) {
            struct fdp_desc d = *fdp_ring_slot(in->fill, fidx + i);
            memcpy((uint8_t *) in->umem + d.addr, frames + *next * frame_len,
                   frame_len);
            d.len = (uint32_t) frame_len;
            *fdp_ring_slot(in->rx, ridx + i) = d;
            *next = *next + 1 == n_frames ? 0 : *next + 1;
        }
        fdp_ring_release(in->fill, k);
        fdp_ring_submit(in->rx, k);
        sent += k;
        fdp_dp_pmd_poll(pmd, NULL);

        uint32_t tidx, cidx, t = fdp_ring_peek(out->tx, ring_size, &tidx);
        t = fdp_ring_reserve(out->completion, t, &cidx);
        for (uint32_t i = 0; i < t; i++) {
            *fdp_ring_slot(out->completion, cidx + i)
                = *fdp_ring_slot(out->tx, tidx + i);
        }
        fdp_ring_submit(out->completion, t);
        fdp_ring_release(out->tx, t);
        got += t;
    }
    return got;
}

/* The peer sends a batch on the lane's rx port, the pmd forwards it, the
 * peer drains the tx port: 'n' packets in all. */
static uint64_t
lane_run(struct dp_lane *l, uint64_t n)
{
    return bench_forward(l->pmd, &l->in, &l->out, &l->packets[0][0],
                         FRAME_LEN, l->n_packets, &l->next, RING_SIZE, n);
}

static uint64_t
dp_packets(void *db_, uint64_t n)
{
    struct dp_bench *db = db_;

    return lane_run(&db->lanes[0], n);
}

static void *
lane_main(void *l_)
{
    struct dp_lane *l = l_;

    lane_run(l, l->n);
    return NULL;
}

/* Every lane on its own thread, 'n' packets in all: the aggregate rate. */
static uint64_t
dp_packets_threaded(void *db_, uint64_t n)
{
    struct dp_bench *db = db_;
    pthread_t threads[MAX_PMDS];

    for (unsigned int i = 0; i < db->n_lanes; i++) {
        db->lanes[i].n = n / db->n_lanes;
        if (pthread_create(&threads[i], NULL, lane_main, &db->lanes[i])) {
            fatal("datapath: pthread_create: %s", strerror(errno));
        }
    }
    for (unsigned int i = 0; i < db->n_lanes; i++) {
        pthread_join(threads[i], NULL);
    }
    return n;
}

struct dp_case_def {
    const char *name;
    const char *shape;          /* "x1", "x100", "ranges". */
    unsigned int n_flows;
    enum fdp_dp_cache_mode emc, smc;
    uint32_t emc_inv_prob;
    bool disjoint;              /* fdp_table_set_disjoint(). */
    unsigned int n_pmds;        /* 0: 1, driven on this thread. */
    uint32_t smc_entries;       /* 0: the default. */
};

static const char *
mode_name(enum fdp_dp_cache_mode m)
{
    return m == FDP_DP_CACHE_ON ? "on" : m == FDP_DP_CACHE_OFF ? "off"
                                                               : "auto";
}

static void
dp_case(const struct dp_case_def *c)
{
    struct dp_bench *db = calloc(1, sizeof *db);
    struct fdp_dp_options o;
    char flow[256];

    if (!db || fdp_table_create(&db->table)
        || !(db->packets = malloc((size_t) c->n_flows * FRAME_LEN))) {
        fatal("datapath: out of memory");
    }
    db->n_flows = c->n_flows;
    db->n_lanes = c->n_pmds ? c->n_pmds : 1;
    fdp_table_set_disjoint(db->table, c->disjoint);
    fdp_table_begin(db->table);
    for (unsigned int i = 0; i < c->n_flows; i++) {
        /* Lane k sends packets [k * n / lanes, (k + 1) * n / lanes) on
         * port 10k + 1; their flows output to port 10k + 2. */
        unsigned int lane = i / (c->n_flows / db->n_lanes);
        flow_text(c->shape, i, 10 * lane + 2, flow, sizeof flow);
        add_flow(db->table, flow);
        make_frame(db->packets[i], i);
    }
    if (fdp_table_commit(db->table)) {
        fatal("datapath: commit failed");
    }
    fdp_table_run(db->table);
    fdp_dp_options_init(&o);
    o.emc_insert_inv_prob = c->emc_inv_prob;
    o.emc_mode = c->emc;
    o.smc_mode = c->smc;
    if (c->smc_entries) {
        o.smc_entries = c->smc_entries;
    }
    o.n_pmds = db->n_lanes;
    o.n_frames = 16384 * db->n_lanes;
    if (fdp_dp_create(db->table, &o, &db->dp)) {
        fatal("datapath: setting up: out of memory");
    }
    /* Ports go to pmds by order of addition modulo n_pmds: every lane's
     * rx port first, so that pmd k polls lane k's. */
    for (unsigned int pass = 0; pass < 2; pass++) {
        for (unsigned int k = 0; k < db->n_lanes; k++) {
            struct dp_lane *l = &db->lanes[k];
            uint32_t port_no = 10 * k + 1 + pass;
            if (fdp_dp_port_add(db->dp, port_no, "ring:size=1024", NULL)
                || fdp_dp_port_rings(db->dp, port_no,
                                     pass ? &l->out : &l->in)) {
                fatal("datapath: setting up: out of memory");
            }
            if (!pass) {
                l->n_packets = c->n_flows / db->n_lanes;
                l->packets = (const uint8_t (*)[FRAME_LEN])
                             db->packets[k * l->n_packets];
                if (fdp_dp_pmd_create(db->dp, k, &l->pmd)) {
                    fatal("datapath: setting up: out of memory");
                }
            }
        }
    }
    /* Warm up: every distinct packet through, four times (the caches). */
    for (unsigned int i = 0; i < db->n_lanes; i++) {
        sink += lane_run(&db->lanes[i], 4 * (uint64_t) db->lanes[i].n_packets);
    }
    double ns = measure(db->n_lanes > 1 ? dp_packets_threaded : dp_packets,
                        db);

    struct fdp_dp_stats st;
    struct fdp_table_stats ts;
    fdp_dp_get_stats(db->dp, &st);
    fdp_table_get_stats(db->table, &ts);
    if (st.n_missed) {
        fatal("datapath: %s: %" PRIu64 " packets missed", c->name,
              st.n_missed);
    }
    char impl[48];
    snprintf(impl, sizeof impl, "emc=%s,smc=%s",
             c->emc_inv_prob ? mode_name(c->emc) : "off", mode_name(c->smc));
    if (c->emc_inv_prob > 1) {
        snprintf(impl + strlen(impl), sizeof impl - strlen(impl), ",1/%u",
                 c->emc_inv_prob);
    }
    if (c->smc_entries) {
        snprintf(impl + strlen(impl), sizeof impl - strlen(impl),
                 ",smc=2^%d", __builtin_ctz(c->smc_entries));
    }
    report(&(struct result) {
        .suite = "datapath", .case_name = c->name, .impl = impl,
        .entries = c->n_flows, .ns_per_op = ns, .bytes = ts.memory_bytes,
    });
    if (getenv("FLOWDP_BENCH_VERBOSE")) {
        printf("  %s: packets %" PRIu64 " emc %" PRIu64 " smc %" PRIu64
               " table %" PRIu64 " emc-bypassed %" PRIu64 "\n", c->name,
               st.n_packets, st.n_emc_hits, st.n_smc_hits, st.n_table_hits,
               st.n_emc_bypassed);
    }
    for (unsigned int i = 0; i < db->n_lanes; i++) {
        fdp_dp_pmd_destroy(db->lanes[i].pmd);
    }
    fdp_dp_destroy(db->dp);
    fdp_table_destroy(db->table);
    free(db->packets);
    free(db);
}

void
suite_datapath(void)
{
    static const struct dp_case_def cases[] = {
        { "emc-hit", "x1", 1000, FDP_DP_CACHE_ON, FDP_DP_CACHE_OFF, 1,
          false, 0, 0 },
        { "emc-hit-p100", "x1", 1000, FDP_DP_CACHE_ON, FDP_DP_CACHE_OFF,
          100, false, 0, 0 },
        { "1000x1-noemc", "x1", 1000, FDP_DP_CACHE_OFF, FDP_DP_CACHE_OFF, 0,
          false, 0, 0 },
        { "1000x1-auto", "x1", 1000, FDP_DP_CACHE_AUTO, FDP_DP_CACHE_OFF, 1,
          false, 0, 0 },
        { "1000x100-noemc", "x100", 1000, FDP_DP_CACHE_OFF,
          FDP_DP_CACHE_OFF, 0, false, 0, 0 },
        { "1000x100-auto", "x100", 1000, FDP_DP_CACHE_AUTO,
          FDP_DP_CACHE_OFF, 100, false, 0, 0 },
        { "ranges", "ranges", 1000, FDP_DP_CACHE_OFF, FDP_DP_CACHE_OFF, 0,
          false, 0, 0 },
        { "100k-emc", "x100", 100000, FDP_DP_CACHE_ON, FDP_DP_CACHE_OFF, 1,
          true, 0, 0 },
        { "100k-smc", "x100", 100000, FDP_DP_CACHE_OFF, FDP_DP_CACHE_ON,
          0, true, 0, 0 },
        { "100k-smc-2^18", "x100", 100000, FDP_DP_CACHE_OFF,
          FDP_DP_CACHE_ON, 0, true, 0, 1u << 18 },
        { "100k-emc+smc", "x100", 100000, FDP_DP_CACHE_ON, FDP_DP_CACHE_ON,
          1, true, 0, 0 },
        { "100k-auto", "x100", 100000, FDP_DP_CACHE_AUTO,
          FDP_DP_CACHE_AUTO, 100, true, 0, 0 },
        { "emc-hit-1pmd", "x1", 2000, FDP_DP_CACHE_ON, FDP_DP_CACHE_OFF, 1,
          false, 1, 0 },
        { "emc-hit-2pmd", "x1", 2000, FDP_DP_CACHE_ON, FDP_DP_CACHE_OFF, 1,
          false, 2, 0 },
    };
    const char *only = getenv("FLOWDP_BENCH_CASE");

    report_header("datapath");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!only || !strcmp(only, cases[i].name)) {
            dp_case(&cases[i]);
        }
    }
    if (!only || !strncmp(only, "veth", 4)) {
        suite_datapath_veth();
    }
}
