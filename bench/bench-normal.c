/*
 * flowdp-bench normal suite: the NORMAL action against a plain output.
 *
 * Both cases push 1000 distinct 60-byte UDP frames through a datapath of
 * one flow, on one core, with every result in the exact-match cache
 * (insertion probability 1, warmed up), as the datapath suite's emc-hit:
 *   emc-output   "actions=output:2": an EMC hit and one output;
 *   normal-100k  "actions=NORMAL" with 100,000 addresses learned on
 *                port 2 (mac-table-size 131072) and the 1000 senders on
 *                port 1: an EMC hit, then per packet NORMAL's two table
 *                probes (source, refreshed; destination, one of the
 *                100,000) and an output to port 2.
 * The goal: normal-100k at >= 80 % of emc-output's rate, i.e. its
 * ns per packet at most 1.25 times emc-output's.  The suite prints the
 * ratio as a third line (case "normal-vs-output", ns_per_op the ratio).
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
#define N_SENDERS 1000
#define N_LEARNED 100000
#define RING_SIZE 1024

struct nb {
    struct fdp_table *table;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings p1, p2;
    uint8_t (*frames)[FRAME_LEN];
    size_t next;
};

/* A UDP/IPv4 frame from MAC 'src' to MAC 'dst' (48-bit numbers). */
static void
make_frame(uint8_t *p, uint64_t dst, uint64_t src, unsigned int i)
{
    static const uint8_t ip_udp[] = {
        0x08, 0x00, 0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0,
        10, 1, 0, 1, 10, 0, 0, 0, 0x03, 0xe8, 0x13, 0x88, 0, 26, 0, 0,
    };
    memset(p, 0, FRAME_LEN);
    for (int b = 0; b < 6; b++) {
        p[b] = (uint8_t) (dst >> (40 - 8 * b));
        p[6 + b] = (uint8_t) (src >> (40 - 8 * b));
    }
    memcpy(p + 12, ip_udp, sizeof ip_udp);
    p[31] = (uint8_t) (i >> 16);
    p[32] = (uint8_t) (i >> 8);
    p[33] = (uint8_t) i;
}

/* Stations learned on port 2 are 52:54:00:XX:XX:XX, senders on port 1
 * 50:54:00:00:XX:XX. */
static uint64_t
station(unsigned int k)
{
    return UINT64_C(0x525400000000) | k;
}

static uint64_t
sender(unsigned int j)
{
    return UINT64_C(0x505400000000) | j;
}

static uint64_t
run_packets(void *nb_, uint64_t n)
{
    struct nb *nb = nb_;

    return test_peer_forward(nb->pmd, &nb->p1, &nb->p2, &nb->frames[0][0],
                             FRAME_LEN, N_SENDERS, &nb->next, RING_SIZE, n);
}

/* Teaches the datapath N_LEARNED stations on port 2: broadcasts from each,
 * flooded to port 1, the notes applied every 2048 packets (the queue
 * holds 4096). */
static void
learn_stations(struct nb *nb)
{
    uint8_t (*f)[FRAME_LEN] = malloc(2048 * sizeof *f);
    size_t next = 0;

    if (!f) {
        fatal("normal: out of memory");
    }
    for (unsigned int k = 0; k < N_LEARNED; k += 2048) {
        unsigned int n = N_LEARNED - k < 2048 ? N_LEARNED - k : 2048;
        for (unsigned int i = 0; i < n; i++) {
            make_frame(f[i], UINT64_C(0xffffffffffff), station(k + i), k + i);
        }
        next = 0;
        sink += test_peer_forward(nb->pmd, &nb->p2, &nb->p1, &f[0][0],
                                  FRAME_LEN, n, &next, RING_SIZE, n);
        fdp_dp_fdb_sync(nb->dp);
    }
    free(f);
}

static double
normal_case(bool normal)
{
    struct nb nb = { 0 };
    struct fdp_dp_options o;
    struct fdp_flow_spec spec;
    char *msg = NULL;

    nb.frames = malloc((size_t) N_SENDERS * FRAME_LEN);
    if (!nb.frames || fdp_table_create(&nb.table)) {
        fatal("normal: out of memory");
    }
    if (fdp_flow_parse(normal ? "actions=NORMAL" : "actions=output:2", 0,
                       &spec, &msg)
        || fdp_table_insert(nb.table, &spec, 0)) {
        fatal("normal: %s", msg ? msg : "insert failed");
    }
    fdp_flow_spec_destroy(&spec);
    fdp_dp_options_init(&o);
    o.emc_insert_inv_prob = 1;
    o.emc_mode = FDP_DP_CACHE_ON;
    o.smc_mode = FDP_DP_CACHE_OFF;
    o.n_frames = 16384;
    if (fdp_dp_create(nb.table, &o, &nb.dp)
        || fdp_dp_port_add(nb.dp, 1, "ring:size=1024", NULL)
        || fdp_dp_port_add(nb.dp, 2, "ring:size=1024", NULL)
        || fdp_dp_port_rings(nb.dp, 1, &nb.p1)
        || fdp_dp_port_rings(nb.dp, 2, &nb.p2)
        || fdp_dp_pmd_create(nb.dp, 0, &nb.pmd)
        || fdp_dp_fdb_set_size(nb.dp, 131072)) {
        fatal("normal: setting up: out of memory");
    }
    if (normal) {
        learn_stations(&nb);
        struct fdp_fdb_stats st;
        fdp_dp_fdb_get_stats(nb.dp, &st);
        /* A station whose two buckets were full evicts another (mac-
         * learning.c, "Layout"): a few in 100,000 at most. */
        if (st.n_entries < N_LEARNED - N_LEARNED / 1000) {
            fatal("normal: only %" PRIu64 " of %d stations learned (%"
                  PRIu64 " evicted, %" PRIu64 " notes lost)", st.n_entries,
                  N_LEARNED, st.n_evicted, st.n_notes_dropped);
        }
    }
    /* Sender j sends to station j * 97 (spread over the table). */
    for (unsigned int j = 0; j < N_SENDERS; j++) {
        make_frame(nb.frames[j], station((j * 97) % N_LEARNED), sender(j),
                   j);
    }
    /* Warm up: every frame through four times; the senders' addresses
     * are learned on the way. */
    nb.next = 0;
    sink += run_packets(&nb, 4 * N_SENDERS);
    fdp_dp_fdb_sync(nb.dp);
    sink += run_packets(&nb, 4 * N_SENDERS);
    struct fdp_port_stats ps0, ps;
    struct fdp_dp_stats ds0, ds;
    fdp_dp_port_get_stats(nb.dp, 2, &ps0, NULL);
    fdp_dp_get_stats(nb.dp, &ds0);
    double ns = measure(run_packets, &nb);
    fdp_dp_port_get_stats(nb.dp, 2, &ps, NULL);
    fdp_dp_get_stats(nb.dp, &ds);
    /* Every packet measured went to port 2, none flooded elsewhere or
     * dropped (a few may wait in the tx ring). */
    if (ps.tx_packets - ps0.tx_packets
        < (ds.n_packets - ds0.n_packets) - RING_SIZE) {
        fatal("normal: port 2 sent %" PRIu64 " of %" PRIu64 " packets",
              ps.tx_packets - ps0.tx_packets, ds.n_packets - ds0.n_packets);
    }
    report(&(struct result) {
        .suite = "normal", .case_name = normal ? "normal-100k"
                                               : "emc-output",
        .impl = "emc=on", .entries = normal ? N_LEARNED : 1,
        .ns_per_op = ns,
    });
    fdp_dp_pmd_destroy(nb.pmd);
    fdp_dp_destroy(nb.dp);
    fdp_table_destroy(nb.table);
    free(nb.frames);
    return ns;
}

void
suite_normal(void)
{
    report_header("normal");
    double out = normal_case(false);
    double normal = normal_case(true);
    report(&(struct result) {
        .suite = "normal", .case_name = "normal-vs-output", .impl = "ratio",
        .entries = N_LEARNED, .ns_per_op = normal / out,
    });
}
