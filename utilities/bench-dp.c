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
 *   on the same thread as the pmd, forwarded by output:2 and drained from
 *   port 2's tx: ns per packet for the whole path on one core.
 *   emc-hit        1000 flows, 1000 distinct packets, every result cached
 *                  (insertion probability 1; warmed up);
 *   1000x1-noemc   1000 flows over 1 mask, EMC off;
 *   1000x100-noemc 1000 flows over 100 masks, EMC off;
 *   ranges         1000 flows with port ranges (pipapo), EMC off.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flowdp/flowdp.h"
#include "utilities/bench.h"
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

#define N_FLOWS 1000
#define FRAME_LEN 60

struct dp_bench {
    struct fdp_table *table;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings in, out;
    uint8_t packets[N_FLOWS][FRAME_LEN];
};

/* A UDP/IPv4 frame from 10.1.0.1:1000 to 10.0.X.Y:5000 for flow 'i'. */
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
    p[32] = (uint8_t) (i / 250);
    p[33] = (uint8_t) (i % 250);
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

/* Flow 'i' of each shape; every one matches frame 'i' only. */
static void
flow_text(const char *shape, unsigned int i, char *buf, size_t size)
{
    unsigned int a = i / 250, b = i % 250;

    if (!strcmp(shape, "1000x100")) {
        /* 100 masks: nw_src prefix /26../32 x tp_src mask, as the run
         * measurement in docs/PERFORMANCE.md. */
        unsigned int m = i % 100, plen = 26 + m % 7;
        unsigned int tmask = (0xffffu << (m / 7)) & 0xffff;
        snprintf(buf, size, "udp,nw_src=10.1.0.1/%u,nw_dst=10.0.%u.%u,"
                 "tp_src=%u/0x%x,actions=output:2", plen, a, b,
                 1000 & tmask, tmask);
    } else if (!strcmp(shape, "ranges")) {
        snprintf(buf, size, "udp,nw_dst=10.0.%u.%u,tp_dst=4000-6000,"
                 "tp_src=1000-1010,actions=output:2", a, b);
    } else {
        snprintf(buf, size, "udp,nw_dst=10.0.%u.%u,actions=output:2", a, b);
    }
}

/* The peer sends a batch on port 1, the pmd forwards it, the peer drains
 * port 2: 'n' packets in all. */
static uint64_t
dp_packets(void *db_, uint64_t n)
{
    struct dp_bench *db = db_;
    uint64_t sent = 0, got = 0;
    unsigned int next = 0;

    while (sent < n) {
        uint32_t fidx, ridx, room = fdp_ring_reserve(db->in.rx, BATCH, &ridx);
        uint32_t k = fdp_ring_peek(db->in.fill, room, &fidx);
        fdp_ring_cancel(db->in.rx, room - k);
        for (uint32_t i = 0; i < k; i++) {
            struct fdp_desc d = *fdp_ring_slot(db->in.fill, fidx + i);
            memcpy((uint8_t *) db->in.umem + d.addr, db->packets[next],
                   FRAME_LEN);
            d.len = FRAME_LEN;
            *fdp_ring_slot(db->in.rx, ridx + i) = d;
            next = next + 1 == N_FLOWS ? 0 : next + 1;
        }
        fdp_ring_release(db->in.fill, k);
        fdp_ring_submit(db->in.rx, k);
        sent += k;
        fdp_dp_pmd_poll(db->pmd, NULL);

        uint32_t tidx, cidx, t = fdp_ring_peek(db->out.tx, RING_SIZE, &tidx);
        t = fdp_ring_reserve(db->out.completion, t, &cidx);
        for (uint32_t i = 0; i < t; i++) {
            *fdp_ring_slot(db->out.completion, cidx + i)
                = *fdp_ring_slot(db->out.tx, tidx + i);
        }
        fdp_ring_submit(db->out.completion, t);
        fdp_ring_release(db->out.tx, t);
        got += t;
    }
    return got;
}

static void
dp_case(const char *name, const char *shape, uint32_t emc_inv_prob)
{
    struct dp_bench *db = calloc(1, sizeof *db);
    struct fdp_dp_options o;
    char flow[256];

    if (!db || fdp_table_create(&db->table)) {
        fatal("datapath: out of memory");
    }
    fdp_table_begin(db->table);
    for (unsigned int i = 0; i < N_FLOWS; i++) {
        flow_text(shape, i, flow, sizeof flow);
        add_flow(db->table, flow);
        make_frame(db->packets[i], i);
    }
    if (fdp_table_commit(db->table)) {
        fatal("datapath: commit failed");
    }
    fdp_table_run(db->table);
    fdp_dp_options_init(&o);
    o.emc_insert_inv_prob = emc_inv_prob;
    if (fdp_dp_create(db->table, &o, &db->dp)
        || fdp_dp_port_add(db->dp, 1, "ring:size=1024", NULL)
        || fdp_dp_port_add(db->dp, 2, "ring:size=1024", NULL)
        || fdp_dp_port_rings(db->dp, 1, &db->in)
        || fdp_dp_port_rings(db->dp, 2, &db->out)
        || fdp_dp_pmd_create(db->dp, 0, &db->pmd)) {
        fatal("datapath: setting up: out of memory");
    }
    sink += dp_packets(db, 4 * N_FLOWS);     /* Warm up (and the EMC). */
    double ns = measure(dp_packets, db);

    struct fdp_dp_stats st;
    struct fdp_table_stats ts;
    fdp_dp_get_stats(db->dp, &st);
    fdp_table_get_stats(db->table, &ts);
    if (st.n_missed) {
        fatal("datapath: %s: %" PRIu64 " packets missed", name, st.n_missed);
    }
    report(&(struct result) {
        .suite = "datapath", .case_name = name,
        .impl = emc_inv_prob ? "emc" : "noemc", .entries = N_FLOWS,
        .ns_per_op = ns, .bytes = ts.memory_bytes,
    });
    fdp_dp_pmd_destroy(db->pmd);
    fdp_dp_destroy(db->dp);
    fdp_table_destroy(db->table);
    free(db);
}

void
suite_datapath(void)
{
    report_header("datapath");
    dp_case("emc-hit", "1000x1", 1);
    dp_case("1000x1-noemc", "1000x1", 0);
    dp_case("1000x100-noemc", "1000x100", 0);
    dp_case("ranges", "ranges", 0);
    suite_datapath_veth();
}
