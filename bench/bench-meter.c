/*
 * flowdp-bench meter suite: what the meter:N instruction costs a packet.
 *
 * The datapath suite's setting (bench-dp.c): 60-byte UDP/IPv4 frames
 * generated in memory, pushed through a ring port by a peer on the pmd's
 * thread, forwarded, drained from the output port; ns per packet for the
 * whole path on one core.  Every case holds FDP_METER_BENCH_METERS
 * (100,000) meters, pktps with a rate far above what one core forwards,
 * so that every packet conforms and each case times the bucket update,
 * not drops.  Cases, each "fwd" without meters and "meter" with one
 * meter:N before the output, the flows otherwise the same:
 *   1-flow        one flow, every packet the same: a batch is one group
 *                 of 32 packets, one bucket update for them all;
 *   1000-own      1000 flows, 1000 distinct packets, each flow its own
 *                 meter among the 100k (ids spread over all of them): a
 *                 batch of 32 packets updates 32 buckets;
 *   1000-shared   the same flows, all using one meter;
 *   100k-own      100,000 flows and packets, each flow its own meter: the
 *                 buckets no longer fit the caches (nor the EMC the
 *                 flows).
 * "cost" reports the difference of each pair, the meter's price per
 * packet (the goal: at most 10 ns at 10 Mpps offered with 100k
 * meters defined).  The offered rate is what the core forwards (above 10
 * Mpps on the machines measured in docs/PERFORMANCE.md): the cost per
 * packet does not depend on the rate offered, only on the batches.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "bench/bench.h"
#include "tests/lib/peer.h"
#include "utilities/tool.h"

#define FRAME_LEN 60
#define RING_SIZE 1024
#define FDP_METER_BENCH_METERS 100000

struct meter_bench {
    struct fdp_table *table;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings in, out;
    uint8_t (*packets)[FRAME_LEN];
    unsigned int n_packets;
    size_t next;
};

/* A UDP/IPv4 frame from 10.1.0.1:1000 to 10.X.Y.Z:5000 for flow 'i'. */
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

static uint64_t
run_packets(void *mb_, uint64_t n)
{
    struct meter_bench *mb = mb_;

    return test_peer_forward(mb->pmd, &mb->in, &mb->out, &mb->packets[0][0],
                             FRAME_LEN, mb->n_packets, &mb->next, RING_SIZE,
                             n);
}

/* The meter flow 'i' uses: its own, spread over every meter's id, or
 * meter 1 for all. */
static uint32_t
meter_of(unsigned int i, unsigned int n_flows, bool shared)
{
    return shared ? 1 : 1 + (uint32_t) ((uint64_t) i * FDP_METER_BENCH_METERS
                                        / n_flows);
}

/* Times 'n_flows' flows and packets, with a meter per flow or one for
 * all ('shared'), or none ('metered' false). */
static double
meter_case(unsigned int n_flows, bool metered, bool shared)
{
    struct meter_bench *mb = calloc(1, sizeof *mb);
    struct fdp_dp_options o;
    char text[256];

    if (!mb || fdp_table_create(&mb->table)
        || !(mb->packets = malloc((size_t) n_flows * FRAME_LEN))) {
        fatal("meter: out of memory");
    }
    mb->n_packets = n_flows;
    fdp_table_set_disjoint(mb->table, true);
    fdp_table_begin(mb->table);
    for (unsigned int i = 0; i < n_flows; i++) {
        struct fdp_flow_spec spec;
        char *msg = NULL;
        int len = snprintf(text, sizeof text, "udp,nw_dst=10.%u.%u.%u,"
                           "actions=", i >> 16, (i >> 8) & 0xff, i & 0xff);
        if (metered) {
            len += snprintf(text + len, sizeof text - (size_t) len,
                            "meter:%" PRIu32 ",",
                            meter_of(i, n_flows, shared));
        }
        snprintf(text + len, sizeof text - (size_t) len, "output:2");
        if (fdp_flow_parse(text, 0, &spec, &msg)
            || fdp_table_insert(mb->table, &spec, 0)) {
            fatal("meter: %s: %s", text, msg ? msg : "insert failed");
        }
        fdp_flow_spec_destroy(&spec);
        make_frame(mb->packets[i], i);
    }
    if (fdp_table_commit(mb->table)) {
        fatal("meter: commit failed");
    }
    fdp_table_run(mb->table);
    fdp_dp_options_init(&o);
    o.emc_insert_inv_prob = 1;
    if (fdp_dp_create(mb->table, &o, &mb->dp)) {
        fatal("meter: setting up: out of memory");
    }
    /* 100k meters in every case, used or not. */
    for (uint32_t id = 1; id <= FDP_METER_BENCH_METERS; id++) {
        struct fdp_meter_config c = {
            .id = id, .flags = FDP_METER_PKTPS, .n_bands = 1,
            .bands = { { .type = FDP_METER_BAND_DROP, .rate = 4000000000u } },
        };
        if (fdp_dp_meter_set(mb->dp, &c, true)) {
            fatal("meter: adding meter %" PRIu32 " failed", id);
        }
    }
    if (fdp_dp_port_add(mb->dp, 1, "ring:size=1024", NULL)
        || fdp_dp_port_rings(mb->dp, 1, &mb->in)
        || fdp_dp_port_add(mb->dp, 2, "ring:size=1024", NULL)
        || fdp_dp_port_rings(mb->dp, 2, &mb->out)
        || fdp_dp_pmd_create(mb->dp, 0, &mb->pmd)) {
        fatal("meter: setting up: out of memory");
    }
    sink += run_packets(mb, 4 * (uint64_t) n_flows);
    double ns = measure(run_packets, mb);

    struct fdp_dp_stats st;
    fdp_dp_get_stats(mb->dp, &st);
    if (st.n_missed) {
        fatal("meter: %" PRIu64 " packets missed", st.n_missed);
    }
    if (metered) {
        /* Every packet conformed: no band fired. */
        struct fdp_meter_stats ms;
        uint32_t id = meter_of(0, n_flows, shared);
        if (fdp_dp_meter_get(mb->dp, id, NULL, &ms)
            || !ms.packet_in_count || ms.bands[0].packet_count) {
            fatal("meter: meter %" PRIu32 " saw no packet, or dropped",
                  id);
        }
    }
    fdp_dp_pmd_destroy(mb->pmd);
    fdp_dp_destroy(mb->dp);
    fdp_table_destroy(mb->table);
    free(mb->packets);
    free(mb);
    return ns;
}

void
suite_meter(void)
{
    static const struct {
        const char *name;
        unsigned int n_flows;
        bool shared;
    } cases[] = {
        { "1-flow", 1, false },
        { "1000-own", 1000, false },
        { "1000-shared", 1000, true },
        { "100k-own", 100000, false },
    };
    const char *only = getenv("FLOWDP_BENCH_CASE");

    report_header("meter");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (only && !strstr(cases[i].name, only)) {
            continue;
        }
        char name[64];
        double fwd = meter_case(cases[i].n_flows, false, false);
        snprintf(name, sizeof name, "fwd-%s", cases[i].name);
        report(&(struct result) {
            .suite = "meter", .case_name = name, .impl = "no-meter",
            .entries = FDP_METER_BENCH_METERS, .ns_per_op = fwd,
        });
        double met = meter_case(cases[i].n_flows, true, cases[i].shared);
        snprintf(name, sizeof name, "meter-%s", cases[i].name);
        report(&(struct result) {
            .suite = "meter", .case_name = name, .impl = "meter",
            .entries = FDP_METER_BENCH_METERS, .ns_per_op = met,
        });
        snprintf(name, sizeof name, "cost-%s", cases[i].name);
        report(&(struct result) {
            .suite = "meter", .case_name = name, .impl = "meter-minus-fwd",
            .entries = FDP_METER_BENCH_METERS, .ns_per_op = met - fwd,
        });
    }
}
