/*
 * flowdp-bench learn: how many flows a learn action adds per second while
 * the datapath forwards (issue 24's goal: at least 200,000).
 *
 * Case learn-5tuple-N: a pipeline whose table 0 holds
 *   udp actions=learn(table=1,idle_timeout=60,eth_type=0x800,nw_proto=17,
 *                     NXM_OF_IP_SRC[],NXM_OF_IP_DST[],NXM_OF_UDP_SRC[],
 *                     NXM_OF_UDP_DST[],output:NXM_OF_IN_PORT[]),output:2
 * and a datapath with one pmd between two ring ports.  N UDP packets, each
 * of a new five-tuple, go through the pmd (this thread drives it, as
 * bench-ct.c's datapath cases do) while the datapath's learner thread
 * adds the flows (datapath/learner.c); the time is from the first packet
 * to the moment table 1 holds every learned flow.  Reported: ns per
 * learned flow (so mops is millions of learned flows a second), the
 * forwarding rate and what the learner counted.  Every packet must come
 * out of port 2 and every five-tuple must be learned exactly once.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/bench-ct-packets.h"
#include "datapath/dp-private.h"
#include "datapath/learner.h"
#include <flowdp/flowdp.h>
#include "tests/lib/peer.h"
#include "utilities/tool.h"

#define LEARN_RING 1024
#define LEARN_SEED 0x1ea4
#define LEARN_CHUNK 1024
#define LEARN_BACKLOG 16384

static void
learn_case(size_t n_flows)
{
    static const char *const flows[] = {
        "table=0,priority=10,udp,actions=learn(table=1,idle_timeout=60,"
        "eth_type=0x800,nw_proto=17,NXM_OF_IP_SRC[],NXM_OF_IP_DST[],"
        "NXM_OF_UDP_SRC[],NXM_OF_UDP_DST[],output:NXM_OF_IN_PORT[]),"
        "output:2",
        "table=1,priority=0,actions=drop",
        NULL
    };
    char case_name[64];
    struct fdp_pipeline *p;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings in, out;
    struct bench_ct_frames frames;

    snprintf(case_name, sizeof case_name, "learn-5tuple-%zuk",
             n_flows / 1000);
    if (fdp_pipeline_create(&p)) {
        fatal("learn: out of memory");
    }
    for (const char *const *f = flows; *f; f++) {
        struct fdp_flow_spec spec;
        char *error = NULL;
        if (fdp_flow_parse(*f, 0, &spec, &error)
            || fdp_pipeline_insert(p, &spec, 0)) {
            fatal("learn: %s: %s", *f, error ? error : "cannot add");
        }
        fdp_flow_spec_destroy(&spec);
    }
    struct fdp_dp_options o;
    fdp_dp_options_init(&o);
    if (fdp_dp_create_pipeline(p, &o, &dp)
        || fdp_dp_port_add(dp, 1, "ring:size=1024", NULL)
        || fdp_dp_port_add(dp, 2, "ring:size=1024", NULL)
        || fdp_dp_port_rings(dp, 1, &in)
        || fdp_dp_port_rings(dp, 2, &out)
        || fdp_dp_pmd_create(dp, 0, &pmd)) {
        fatal("learn: setting up a datapath failed");
    }
    /* One frame per five-tuple: each a client's first packet. */
    if (bench_ct_new_frames(LEARN_SEED, BENCH_CT_UDP, n_flows, &frames)
        || frames.n != n_flows) {
        fatal("learn: cannot make %zu frames", n_flows);
    }
    uint8_t *packed = malloc(frames.n * frames.len);
    if (!packed) {
        fatal("learn: out of memory");
    }
    for (size_t k = 0; k < frames.n; k++) {
        memcpy(packed + k * frames.len, bench_ct_frame(&frames, k),
               frames.len);
    }

    struct fdp__learner *l = fdp__dp_learner(dp);
    struct fdp__learner_stats st;
    size_t next = 0;
    double t0 = now_ns();
    /* New five-tuples are offered as fast as the learner takes them: a
     * chunk at a time, the next when fewer than LEARN_BACKLOG records
     * wait (a queue holds FDP__LEARN_QUEUE_WORDS words; what finds it
     * full is dropped, which a benchmark of one packet per five-tuple
     * cannot afford). */
    uint64_t got = 0;
    double waited_ns = 0;
    while (got < n_flows) {
        for (;;) {
            fdp__learner_get_stats(l, &st);
            uint64_t done = st.applied.n_added + st.applied.n_replaced
                            + st.applied.n_refreshed + st.applied.n_failed
                            + st.applied.n_over_limit;
            if (st.n_queued - done < LEARN_BACKLOG) {
                break;
            }
            double w0 = now_ns();
            usleep(20);
            waited_ns += now_ns() - w0;
        }
        uint64_t chunk = n_flows - got < LEARN_CHUNK ? n_flows - got
                                                      : LEARN_CHUNK;
        got += test_peer_forward(pmd, &in, &out, packed, frames.len,
                                 frames.n, &next, LEARN_RING, chunk);
    }
    double t_fwd = now_ns();
    /* Wait for the learner (it drains every millisecond) to add them
     * all, a second at most after the last packet. */
    for (int i = 0; i < 10000; i++) {
        fdp__learner_get_stats(l, &st);
        if (st.applied.n_added + st.applied.n_failed + st.n_full
            >= n_flows) {
            break;
        }
        usleep(100);
    }
    double t1 = now_ns();
    if (got != n_flows) {
        fatal("learn: %" PRIu64 " of %zu packets forwarded", got, n_flows);
    }
    if (st.applied.n_added != n_flows) {
        fatal("learn: %" PRIu64 " of %zu flows learned (%" PRIu64 " dropped"
              " at full queues, %" PRIu64 " failed)", st.applied.n_added,
              n_flows, st.n_full, st.applied.n_failed);
    }
    fdp_table_read_lock();
    uint64_t in_table = fdp__learn_count_cookie(p, 1, 0);
    fdp_table_read_unlock();
    if (in_table != n_flows + 1) {
        fatal("learn: table 1 holds %" PRIu64 " flows, not %zu", in_table,
              n_flows + 1);
    }
    no_spread();
    report(&(struct result) {
        .suite = "learn", .case_name = case_name, .impl = "fdp-dp",
        .entries = n_flows, .ns_per_op = (t1 - t0) / (double) n_flows,
    });
    if (!json_output) {
        printf("  %s: the learner's CPU time per learned flow %.2f us "
               "(%.0f flows per CPU second)\n", case_name,
               (double) st.apply_cpu_ns / 1e3 / (double) n_flows,
               (double) n_flows * 1e9 / (double) st.apply_cpu_ns);
        printf("  %s: %.0f learned flows/s sustained (goal: >= 200000); "
               "forwarding %.2f Mpps while learning (time not waiting for the "
               "learner)\n", case_name,
               (double) n_flows * 1e9 / (t1 - t0),
               (double) n_flows * 1e3 / (t_fwd - t0 - waited_ns));
    }
    fdp_dp_pmd_destroy(pmd);
    fdp_dp_destroy(dp);
    fdp_pipeline_destroy(p);
    free(packed);
    bench_ct_frames_destroy(&frames);
}

void
suite_learn(void)
{
    report_header("learn");
    learn_case(quick ? 100000 : 1000000);
}
