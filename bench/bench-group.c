/*
 * flowdp-bench's group suite: what a packet through a group costs in the
 * datapath, as the number of buckets grows.
 *
 * One pmd, driven on this thread (tests/lib/peer.h), forwards UDP packets
 * of 1000 distinct flows (destinations 10.0.X.Y) from ring port 1 through
 * a pipeline whose one flow, "udp,actions=group:1", sends them to a
 * group; every bucket outputs to ring port 2, which the peer drains.
 * Cases, each with the exact-match cache on (every packet a cache hit:
 * the outcome counts the flow, the group and the chosen bucket) and off
 * (every packet composed by the pipeline: the select hash and the slot
 * table on each one):
 *   select-1     a select group of one bucket;
 *   select-16    a select group of sixteen buckets (the goal: at most
 *                1.2x select-1's cost);
 *   all-2        an all group of two buckets (two copies out);
 *   indirect     an indirect group.
 * FLOWDP_BENCH_CASE=NAME runs one case.
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

#define N_FLOWS 1000
#define FRAME_LEN 64
#define RING_SIZE 1024

struct group_bench {
    struct fdp_pipeline *pipeline;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings in, out;
    uint8_t (*packets)[FRAME_LEN];
    size_t next;
};

/* A UDP/IPv4 frame from 10.1.0.1:1000 to 10.0.X.Y:5000, Y.X = 'i'. */
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
    p[32] = (uint8_t) (i >> 8);
    p[33] = (uint8_t) i;
}

static uint64_t
forward(void *gb_, uint64_t n)
{
    struct group_bench *gb = gb_;

    return test_peer_forward(gb->pmd, &gb->in, &gb->out, &gb->packets[0][0],
                             FRAME_LEN, N_FLOWS, &gb->next, RING_SIZE, n);
}

static void
group_case(const char *name, const char *group, bool emc)
{
    struct group_bench *gb = calloc(1, sizeof *gb);
    struct fdp_flow_spec spec;
    struct fdp_group *g;
    struct fdp_dp_options o;
    char *msg = NULL;

    if (!gb || fdp_pipeline_create(&gb->pipeline)
        || !(gb->packets = malloc((size_t) N_FLOWS * FRAME_LEN))) {
        fatal("group: out of memory");
    }
    if (fdp_group_parse(group, &g, &msg)
        || fdp_pipeline_group_add(gb->pipeline, g, FDP_GROUP_ADD)
        || fdp_flow_parse("udp,actions=group:1", 0, &spec, &msg)
        || fdp_pipeline_insert(gb->pipeline, &spec, 0)) {
        fatal("group: %s: %s", name, msg ? msg : "setting up failed");
    }
    fdp_flow_spec_destroy(&spec);
    for (unsigned int i = 0; i < N_FLOWS; i++) {
        make_frame(gb->packets[i], i);
    }
    fdp_dp_options_init(&o);
    o.emc_mode = emc ? FDP_DP_CACHE_ON : FDP_DP_CACHE_OFF;
    o.emc_insert_inv_prob = emc ? 1 : 0;
    o.smc_mode = FDP_DP_CACHE_OFF;
    if (fdp_dp_create_pipeline(gb->pipeline, &o, &gb->dp)
        || fdp_dp_port_add(gb->dp, 1, "ring:size=1024", NULL)
        || fdp_dp_port_rings(gb->dp, 1, &gb->in)
        || fdp_dp_port_add(gb->dp, 2, "ring:size=1024", NULL)
        || fdp_dp_port_rings(gb->dp, 2, &gb->out)
        || fdp_dp_pmd_create(gb->dp, 0, &gb->pmd)) {
        fatal("group: %s: setting up the datapath failed", name);
    }
    /* Warm up: every packet through four times (the caches). */
    sink += forward(gb, 4 * N_FLOWS);
    double ns = measure(forward, gb);

    struct fdp_dp_stats st;
    fdp_dp_get_stats(gb->dp, &st);
    if (st.n_missed) {
        fatal("group: %s: %" PRIu64 " packets missed", name, st.n_missed);
    }
    report(&(struct result) {
        .suite = "group", .case_name = name,
        .impl = emc ? "emc=on" : "emc=off", .entries = N_FLOWS,
        .ns_per_op = ns,
    });
    fdp_dp_pmd_destroy(gb->pmd);
    fdp_dp_destroy(gb->dp);
    fdp_pipeline_destroy(gb->pipeline);
    free(gb->packets);
    free(gb);
}

void
suite_group(void)
{
    static const char sixteen[] =
        "group_id=1,type=select,bucket=output:2,bucket=output:2,"
        "bucket=output:2,bucket=output:2,bucket=output:2,bucket=output:2,"
        "bucket=output:2,bucket=output:2,bucket=output:2,bucket=output:2,"
        "bucket=output:2,bucket=output:2,bucket=output:2,bucket=output:2,"
        "bucket=output:2,bucket=output:2";
    static const struct {
        const char *name;
        const char *group;
    } cases[] = {
        { "select-1", "group_id=1,type=select,bucket=output:2" },
        { "select-16", sixteen },
        { "all-2", "group_id=1,type=all,bucket=output:2,bucket=output:2" },
        { "indirect", "group_id=1,type=indirect,bucket=output:2" },
    };
    const char *only = getenv("FLOWDP_BENCH_CASE");

    report_header("group");
    for (int emc = 1; emc >= 0; emc--) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            if (!only || !strcmp(only, cases[i].name)) {
                group_case(cases[i].name, cases[i].group, emc);
            }
        }
    }
}
