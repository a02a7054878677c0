/*
 * Unit tests for datapath/dp.c and datapath/port.c, through ring ports
 * whose peer (the "NIC" side) the test plays.
 *
 * - Random packets through random flows reach exactly the ports a linear
 *   scan of the flows says, with the exact-match cache on (inserting
 *   always, or 1 in 100) and off; flow and port counters agree.
 * - A table change retires cached results at once (the EMC is keyed by
 *   the table version).
 * - Misses go to the upcall callback; without one they are dropped and
 *   counted.
 * - Frames are conserved: after traffic, every frame is back in the pool
 *   or in the peer's hands; a descriptor the peer forged is refused.
 * - A pmd thread forwards while another thread changes flows and ports.
 * - Connection tracking: a stateful firewall, recirculation with frozen
 *   registers, zones from registers and marks set by exec(), the fork,
 *   the depth limit, the continuation cache against no cache on random
 *   exchanges, expiry by the background sweep, ct in a bare table, and
 *   two pmds tracking while flushes and the sweep run.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <flowdp/flowdp.h>
#include "datapath/conntrack.h"
#include "datapath/dp-private.h"
#include "datapath/ct-sweeper.h"
#include "datapath/execute.h"
#include "datapath/ipf.h"
#include "lib/actions-internal.h"
#include "lib/pipeline-view.h"
#include "unit.h"

#define N_DSTS 64

/* A UDP/IPv4 packet to 10.0.0.'dst' from port 'sport'. */
static size_t
make_packet(uint8_t *p, unsigned int dst, uint16_t sport)
{
    static const uint8_t head[] = {
        0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00,      /* Ethernet */
        0x45, 0, 0, 36, 0, 0, 0, 0, 64, 17, 0, 0,            /* IPv4 */
        10, 0, 0, 1, 10, 0, 0, 0,
        0, 0, 0, 53, 0, 16, 0, 0,                            /* UDP */
    };
    memcpy(p, head, sizeof head);
    p[33] = (uint8_t) dst;
    p[34] = (uint8_t) (sport >> 8);
    p[35] = (uint8_t) sport;
    memset(p + sizeof head, 0xab, 8);
    return sizeof head + 8;
}

/* ---------------------------------------------------------------------- */
/* The peer.                                                               */

/* Counts a packet per 10.0.0.X destination in the array 'aux' (if
 * nonnull). */
static void
count_dst(void *aux, const uint8_t *p, uint32_t len)
{
    uint64_t *per_dst = aux;

    (void) len;
    if (per_dst) {
        per_dst[p[33] % N_DSTS]++;
    }
}

/* Takes every packet from the tx ring, returns the frames, and counts
 * them per 10.0.0.X destination in 'per_dst' (if nonnull). */
static size_t
peer_drain(const struct fdp_port_rings *r, uint64_t *per_dst)
{
    return test_peer_drain(r, count_dst, per_dst);
}

static void
add_flow(struct fdp_table *t, const char *text)
{
    struct fdp_flow_spec spec;
    char *error = NULL;

    ck_assert_msg(!fdp_flow_parse(text, 0, &spec, &error), "%s: %s", text,
                  error);
    ck_assert_int_eq(fdp_table_insert(t, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);
}

/* True if the pipeline's current snapshot says it is one table. */
static bool
pipeline_is_single(struct fdp_pipeline *p)
{
    fdp_table_read_lock();
    bool single = fdp__pipeline_view(p)->single != NULL;
    fdp_table_read_unlock();
    return single;
}

struct rig {
    struct fdp_table *table;    /* With a pipeline: its last table. */
    struct fdp_pipeline *pipeline;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings ports[4];     /* Ports 1..3 at [1..3]. */
};

/* A table (or, if 'n_tables' is not 0, a pipeline of that many tables,
 * each but the last sending every packet on to the next), a datapath with
 * 'o', ring ports 1 to 3 and pmd 0. */
static void
rig_create_tables(struct rig *rig, const struct fdp_dp_options *o,
                  unsigned int n_tables)
{
    memset(rig, 0, sizeof *rig);
    if (!n_tables) {
        ck_assert_int_eq(fdp_table_create(&rig->table), 0);
        ck_assert_int_eq(fdp_dp_create(rig->table, o, &rig->dp), 0);
    } else {
        ck_assert_int_eq(fdp_pipeline_create(&rig->pipeline), 0);
        for (unsigned int t = 0; t + 1 < n_tables; t++) {
            struct fdp__actions_builder b;
            struct fdp_flow_spec spec = { .table_id = (uint8_t) t,
                                          .priority = 0 };
            fdp__actions_builder_init(&b);
            fdp__actions_add(&b, FDP_ACT_GOTO_TABLE, t + 1);
            spec.match = fdp_match_create();
            spec.actions = fdp__actions_finish(&b);
            ck_assert_int_eq(fdp_pipeline_insert(rig->pipeline, &spec, 0),
                             0);
            fdp_flow_spec_destroy(&spec);
        }
        /* The last table must exist before a lookup: one flow that
         * matches nothing a test sends makes it. */
        struct fdp_flow_spec spec;
        ck_assert_int_eq(fdp_flow_parse("priority=1,in_port=99,actions=drop",
                                        0, &spec, NULL), 0);
        spec.table_id = (uint8_t) (n_tables - 1);
        ck_assert_int_eq(fdp_pipeline_insert(rig->pipeline, &spec, 0), 0);
        fdp_flow_spec_destroy(&spec);
        rig->table = fdp_pipeline_get_table(rig->pipeline,
                                            (uint8_t) (n_tables - 1));
        ck_assert_int_eq(fdp_dp_create_pipeline(rig->pipeline, o, &rig->dp),
                         0);
    }
    for (uint32_t p = 1; p <= 3; p++) {
        char *error = NULL;
        ck_assert_int_eq(fdp_dp_port_add(rig->dp, p, "ring:size=256",
                                         &error), 0);
        ck_assert_int_eq(fdp_dp_port_rings(rig->dp, p, &rig->ports[p]), 0);
    }
    ck_assert_int_eq(fdp_dp_pmd_create(rig->dp, 0, &rig->pmd), 0);
}

static void
rig_create_with(struct rig *rig, const struct fdp_dp_options *o)
{
    rig_create_tables(rig, o, 0);
}

/* Adds 'text' to the rig's table (with a pipeline, to its last table). */
static void
rig_add_flow(struct rig *rig, const char *text)
{
    if (!rig->pipeline) {
        add_flow(rig->table, text);
        return;
    }
    struct fdp_flow_spec spec;
    char *error = NULL;
    ck_assert_msg(!fdp_flow_parse(text, 0, &spec, &error), "%s: %s", text,
                  error);
    for (uint8_t t = 0; ; t++) {
        if (fdp_pipeline_get_table(rig->pipeline, t) == rig->table) {
            spec.table_id = t;
            break;
        }
    }
    ck_assert_int_eq(fdp_pipeline_insert(rig->pipeline, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);
}

static void
rig_create_n(struct rig *rig, uint32_t emc_inv_prob, uint32_t n_frames,
             unsigned int n_tables)
{
    struct fdp_dp_options o;

    fdp_dp_options_init(&o);
    o.emc_insert_inv_prob = emc_inv_prob;
    /* These tests count the cache's hits: no auto mode deciding to
     * bypass it. */
    o.emc_mode = FDP_DP_CACHE_ON;
    if (n_frames) {
        o.n_frames = n_frames;
    }
    rig_create_tables(rig, &o, n_tables);
}

static void
rig_create(struct rig *rig, uint32_t emc_inv_prob, uint32_t n_frames)
{
    rig_create_n(rig, emc_inv_prob, n_frames, 0);
}

static void
rig_destroy(struct rig *rig)
{
    fdp_dp_pmd_destroy(rig->pmd);
    fdp_dp_destroy(rig->dp);
    if (rig->pipeline) {
        fdp_pipeline_destroy(rig->pipeline);
    } else {
        fdp_table_destroy(rig->table);
    }
}

/* Sends 'rounds' bursts of 1 to 40 packets from port 1 to destinations
 * drawn from 'first' to 'first' + 'n' - 1 (counted in 'sent'), polling
 * after each burst and draining ports 2 and 3 into 'got2' and 'got3', then
 * polls until the datapath is idle.  Returns the packets sent. */
static size_t
send_bursts(struct rig *rig, struct unit_rng *r, int rounds,
            unsigned int first, unsigned int n, uint64_t *sent,
            uint64_t *got2, uint64_t *got3)
{
    uint8_t pkt[128];
    size_t total = 0;

    for (int round = 0; round < rounds; round++) {
        size_t burst = 1 + unit_rng_below(r, 40);
        for (size_t i = 0; i < burst; i++) {
            unsigned int d = first + unit_rng_below(r, n);
            size_t len = make_packet(pkt, d, (uint16_t) unit_rng_below(r, 4));
            if (!test_peer_send(&rig->ports[1], pkt, len)) {
                break;
            }
            sent[d]++;
            total++;
        }
        fdp_dp_pmd_poll(rig->pmd, NULL);
        peer_drain(&rig->ports[2], got2);
        peer_drain(&rig->ports[3], got3);
    }
    for (int i = 0; i < 3; i++) {
        fdp_dp_pmd_poll(rig->pmd, NULL);
        peer_drain(&rig->ports[2], got2);
        peer_drain(&rig->ports[3], got3);
    }
    return total;
}

/* ---------------------------------------------------------------------- */
/* Tests.                                                                  */

/* Flows: destination d goes to port 2 if d is even, port 3 if d % 3 == 0
 * at a higher priority (so 6 goes to 3), both for d % 5 == 0 at the top
 * (output:2,output:3), nothing for d == 7 (a miss), drop for d == 11. */
static void
random_traffic_n(uint32_t emc_inv_prob, unsigned int n_tables)
{
    struct rig rig;
    struct unit_rng r;
    uint64_t sent[N_DSTS] = { 0 }, got2[N_DSTS] = { 0 }, got3[N_DSTS] = { 0 };
    uint8_t pkt[128];
    char flow[128];

    unit_rng_init(&r, emc_inv_prob);
    rig_create_n(&rig, emc_inv_prob, 0, n_tables);
    if (!rig.pipeline) {
        fdp_table_begin(rig.table);
    }
    for (unsigned int d = 0; d < N_DSTS; d++) {
        if (d == 7) {
            continue;
        }
        if (d == 11) {
            snprintf(flow, sizeof flow, "priority=50,udp,nw_dst=10.0.0.%u,"
                     "actions=drop", d);
        } else if (d % 5 == 0) {
            snprintf(flow, sizeof flow, "priority=30,udp,nw_dst=10.0.0.%u,"
                     "actions=output:2,output:3", d);
        } else if (d % 3 == 0) {
            snprintf(flow, sizeof flow, "priority=20,ip,nw_dst=10.0.0.%u,"
                     "actions=output:3", d);
        } else {
            snprintf(flow, sizeof flow, "priority=10,udp,nw_dst=10.0.0.%u,"
                     "actions=output:2", d);
        }
        rig_add_flow(&rig, flow);
    }
    if (!rig.pipeline) {
        ck_assert_int_eq(fdp_table_commit(rig.table), 0);
    }

    /* Few destinations, many repeats: the EMC has work. */
    size_t total = send_bursts(&rig, &r, 2000, 0, N_DSTS, sent, got2, got3);

    uint64_t want2 = 0, want3 = 0, want_drop = 0;
    for (unsigned int d = 0; d < N_DSTS; d++) {
        bool to2 = d != 7 && d != 11 && (d % 5 == 0 || d % 3 != 0);
        bool to3 = d != 7 && d != 11 && (d % 5 == 0 || d % 3 == 0);
        ck_assert_msg(got2[d] == (to2 ? sent[d] : 0) && got3[d] == (to3
                      ? sent[d] : 0), "dst %u: sent %" PRIu64 ", port 2 got %"
                      PRIu64 ", port 3 got %" PRIu64, d, sent[d], got2[d],
                      got3[d]);
        want2 += to2 ? sent[d] : 0;
        want3 += to3 ? sent[d] : 0;
        want_drop += to2 || to3 ? 0 : sent[d];
    }

    struct fdp_port_stats ps;
    ck_assert_int_eq(fdp_dp_port_get_stats(rig.dp, 1, &ps, NULL), 0);
    ck_assert_uint_eq(ps.rx_packets, total);
    ck_assert_uint_eq(ps.rx_dropped, want_drop);
    ck_assert_uint_eq(ps.rx_bytes, total * 50);
    ck_assert_int_eq(fdp_dp_port_get_stats(rig.dp, 2, &ps, NULL), 0);
    ck_assert_uint_eq(ps.tx_packets, want2);
    ck_assert_uint_eq(ps.tx_dropped, 0);
    ck_assert_int_eq(fdp_dp_port_get_stats(rig.dp, 3, &ps, NULL), 0);
    ck_assert_uint_eq(ps.tx_packets, want3);

    struct fdp_dp_stats st;
    fdp_dp_get_stats(rig.dp, &st);
    ck_assert_uint_eq(st.n_packets, total);
    /* In a pipeline, a miss in a later table still hit table 0. */
    ck_assert_uint_eq(st.n_missed, n_tables > 1 ? 0 : sent[7]);
    ck_assert_uint_eq(st.n_emc_hits + st.n_table_hits + st.n_missed, total);
    if (n_tables == 1) {
        /* Served as a table (the snapshot's 'single'), table 0 still
         * counts its misses. */
        struct fdp_pipeline_table_stats ts;
        ck_assert(pipeline_is_single(rig.pipeline));
        ck_assert(fdp_pipeline_get_table_stats(rig.pipeline, 0, &ts));
        ck_assert_uint_eq(ts.n_missed, sent[7]);
        ck_assert_uint_eq(ts.n_matched, total - sent[7]);
    }
    if (n_tables > 1) {
        ck_assert(!pipeline_is_single(rig.pipeline));
        /* Every table before the last counted every packet, and the
         * last one's misses were counted as such. */
        struct fdp_pipeline_table_stats ts;
        for (unsigned int t = 0; t + 1 < n_tables; t++) {
            ck_assert(fdp_pipeline_get_table_stats(rig.pipeline, (uint8_t) t,
                                                   &ts));
            ck_assert_uint_eq(ts.n_matched, total);
        }
        ck_assert(fdp_pipeline_get_table_stats(rig.pipeline,
                                               (uint8_t) (n_tables - 1),
                                               &ts));
        ck_assert_uint_eq(ts.n_missed, sent[7]);
    }
    if (emc_inv_prob == 0) {
        ck_assert_uint_eq(st.n_emc_hits, 0);
    } else {
        /* Inserting 1 in 100, the cache still serves a good share of
         * this traffic of few, repeated keys. */
        ck_assert_uint_gt(st.n_emc_hits, emc_inv_prob == 1 ? total * 9 / 10
                                                             : total / 4);
    }

    /* Flow statistics: each flow counted exactly its packets. */
    for (unsigned int d = 0; d < N_DSTS; d++) {
        struct fdp_key key;
        make_packet(pkt, d, 0);
        fdp_packet_extract(pkt, 50, 1, &key, NULL);
        fdp_table_read_lock();
        const struct fdp_rule *rule = fdp_table_lookup(rig.table, &key);
        if (rule) {
            struct fdp_rule_stats rs;
            fdp_rule_get_stats(rule, &rs);
            ck_assert_uint_eq(rs.n_packets, sent[d]);
            ck_assert_uint_eq(rs.n_bytes, sent[d] * 50);
        } else {
            ck_assert_uint_eq(d, 7);
        }
        fdp_table_read_unlock();
    }
    rig_destroy(&rig);
}

static void
random_traffic(uint32_t emc_inv_prob)
{
    random_traffic_n(emc_inv_prob, 0);
}

START_TEST(traffic_emc_off)
{
    random_traffic(0);
}
END_TEST

/* The same through a pipeline: one table, then four (three goto_table
 * hops before the flows), with the EMC off, always and by default. */
START_TEST(traffic_pipeline)
{
    static const uint32_t probs[] = { 0, 1, 100 };
    random_traffic_n(probs[_i % 3], _i < 3 ? 1 : 4);
}
END_TEST

/* The packets counted by the flow that table 'table_id' of 'p' gives a
 * packet to destination 'd'. */
static uint64_t
flow_packets(struct fdp_pipeline *p, uint8_t table_id, unsigned int d)
{
    uint8_t pkt[128];
    struct fdp_key key;
    struct fdp_rule_stats rs = { .n_packets = 0 };

    make_packet(pkt, d, 0);
    fdp_packet_extract(pkt, 50, 1, &key, NULL);
    fdp_table_read_lock();
    const struct fdp_rule *rule
        = fdp_table_lookup(fdp_pipeline_get_table(p, table_id), &key);
    ck_assert(rule != NULL);
    fdp_rule_get_stats(rule, &rs);
    fdp_table_read_unlock();
    return rs.n_packets;
}

/* In a pipeline of two tables, packets that stop at a flow of table 0
 * (which get that flow's own outcome) and packets that go on to table 1
 * (which get an outcome built for them), mixed in every batch, with the
 * EMC off, always and by default: each goes where its flows say, and
 * every flow counts exactly its packets. */
START_TEST(one_flow_and_built_outcomes_share_batches)
{
    static const uint32_t probs[] = { 0, 1, 100 };
    struct rig rig;
    struct unit_rng r;
    uint64_t sent[N_DSTS] = { 0 }, got2[N_DSTS] = { 0 }, got3[N_DSTS] = { 0 };

    unit_rng_init(&r, probs[_i]);
    rig_create_n(&rig, probs[_i], 0, 2);
    struct fdp_flow_spec spec;
    ck_assert_int_eq(fdp_flow_parse("priority=10,udp,nw_dst=10.0.0.1,"
                                    "actions=output:2", 0, &spec, NULL), 0);
    ck_assert_int_eq(fdp_pipeline_insert(rig.pipeline, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);
    rig_add_flow(&rig, "priority=10,udp,nw_dst=10.0.0.2,actions=output:3");
    ck_assert(!pipeline_is_single(rig.pipeline));

    size_t total = send_bursts(&rig, &r, 500, 1, 2, sent, got2, got3);
    ck_assert_uint_eq(got2[1], sent[1]);
    ck_assert_uint_eq(got3[2], sent[2]);
    ck_assert_uint_eq(got2[2] + got3[1], 0);

    struct fdp_dp_stats st;
    fdp_dp_get_stats(rig.dp, &st);
    ck_assert_uint_eq(st.n_packets, total);
    ck_assert_uint_eq(st.n_missed, 0);
    ck_assert_uint_eq(st.n_emc_hits + st.n_table_hits, total);
    /* The table-0 flow, the goto_table catch-all and the table-1 flow. */
    ck_assert_uint_eq(flow_packets(rig.pipeline, 0, 1), sent[1]);
    ck_assert_uint_eq(flow_packets(rig.pipeline, 0, 2), sent[2]);
    ck_assert_uint_eq(flow_packets(rig.pipeline, 1, 2), sent[2]);
    rig_destroy(&rig);
}
END_TEST

START_TEST(traffic_emc_always)
{
    random_traffic(1);
}
END_TEST

START_TEST(traffic_emc_default)
{
    random_traffic(100);
}
END_TEST

/* Regression: a cached result must not outlive a table change. */
START_TEST(emc_follows_table_changes)
{
    struct rig rig;
    uint8_t pkt[128];
    uint64_t got2[N_DSTS] = { 0 }, got3[N_DSTS] = { 0 };
    size_t len = make_packet(pkt, 9, 0);

    rig_create(&rig, 1, 0);
    add_flow(rig.table, "priority=10,udp,actions=output:2");
    for (int i = 0; i < 10; i++) {
        ck_assert(test_peer_send(&rig.ports[1], pkt, len));
        fdp_dp_pmd_poll(rig.pmd, NULL);
    }
    peer_drain(&rig.ports[2], got2);
    ck_assert_uint_eq(got2[9], 10);

    /* A better flow arrives: the next packet must take it. */
    add_flow(rig.table, "priority=20,udp,nw_dst=10.0.0.9,actions=output:3");
    ck_assert(test_peer_send(&rig.ports[1], pkt, len));
    fdp_dp_pmd_poll(rig.pmd, NULL);
    peer_drain(&rig.ports[3], got3);
    ck_assert_uint_eq(got3[9], 1);

    /* It goes away: back to port 2. */
    struct fdp_flow_spec spec;
    ck_assert_int_eq(fdp_flow_parse("priority=20,udp,nw_dst=10.0.0.9",
                                    FDP_PARSE_MATCH_ONLY, &spec, NULL), 0);
    struct fdp_table_filter filter = {
        .match = spec.match, .strict = true, .priority = 20,
    };
    ck_assert_int_eq(fdp_table_remove(rig.table, &filter, NULL), 0);
    fdp_flow_spec_destroy(&spec);
    ck_assert(test_peer_send(&rig.ports[1], pkt, len));
    fdp_dp_pmd_poll(rig.pmd, NULL);
    peer_drain(&rig.ports[2], got2);
    ck_assert_uint_eq(got2[9], 11);
    rig_destroy(&rig);
}
END_TEST

/* The signature match cache on a disjoint table: flows for even
 * destinations with a masked source port, so that a hit is checked
 * against a masked match; every packet must go where a lookup sends it,
 * through hits, misses, flows removed (a stale entry must not answer)
 * and flows added back.  The EMC is off so that the SMC does the work. */
START_TEST(smc_follows_table)
{
    struct rig rig;
    struct unit_rng r;
    struct fdp_dp_options o;
    uint8_t pkt[128];
    char flow[128];
    unsigned int seed = 1414;

    printf("smc_follows_table: seed %u\n", seed);
    unit_rng_init(&r, seed);
    fdp_dp_options_init(&o);
    o.emc_mode = FDP_DP_CACHE_OFF;
    o.smc_mode = FDP_DP_CACHE_ON;
    o.smc_entries = 64;         /* Small: buckets shared, ways evicted. */
    rig_create_with(&rig, &o);
    fdp_table_set_disjoint(rig.table, true);

    bool present[N_DSTS] = { false };
    for (int phase = 0; phase < 6; phase++) {
        /* Each phase adds or removes a random third of the flows. */
        fdp_table_begin(rig.table);
        for (unsigned int d = 0; d < N_DSTS; d += 2) {
            if (unit_rng_below(&r, 3)) {
                continue;
            }
            int n = snprintf(flow, sizeof flow, "udp,nw_dst=10.0.0.%u,"
                             "tp_src=0/0xfffc", d);
            snprintf(flow + n, sizeof flow - (size_t) n, ",actions=output:%u",
                     2 + d % 4 / 2);
            if (present[d]) {
                struct fdp_flow_spec spec;
                flow[n] = '\0';
                ck_assert_int_eq(fdp_flow_parse(flow, FDP_PARSE_MATCH_ONLY,
                                                &spec, NULL), 0);
                struct fdp_table_filter filter = {
                    .match = spec.match, .strict = true,
                    .priority = spec.priority,
                };
                ck_assert_int_eq(fdp_table_remove(rig.table, &filter,
                                                  NULL), 0);
                fdp_flow_spec_destroy(&spec);
            } else {
                add_flow(rig.table, flow);
            }
            present[d] = !present[d];
        }
        ck_assert_int_eq(fdp_table_commit(rig.table), 0);

        uint64_t want2[N_DSTS] = { 0 }, want3[N_DSTS] = { 0 };
        uint64_t got2[N_DSTS] = { 0 }, got3[N_DSTS] = { 0 };
        for (int round = 0; round < 200; round++) {
            size_t burst = 1 + unit_rng_below(&r, 32);
            for (size_t i = 0; i < burst; i++) {
                unsigned int d = unit_rng_below(&r, N_DSTS);
                /* Source ports 0-3 match the flows' mask, 4 never. */
                uint16_t sport = (uint16_t) unit_rng_below(&r, 5);
                size_t len = make_packet(pkt, d, sport);
                if (!test_peer_send(&rig.ports[1], pkt, len)) {
                    break;
                }
                if (present[d] && sport < 4) {
                    (d % 4 / 2 ? want3 : want2)[d]++;
                }
            }
            fdp_dp_pmd_poll(rig.pmd, NULL);
            peer_drain(&rig.ports[2], got2);
            peer_drain(&rig.ports[3], got3);
        }
        for (unsigned int d = 0; d < N_DSTS; d++) {
            ck_assert_msg(got2[d] == want2[d] && got3[d] == want3[d],
                          "seed %u phase %d dst %u: ports 2/3 got "
                          "%" PRIu64 "/%" PRIu64 ", want %" PRIu64 "/%"
                          PRIu64, seed, phase, d, got2[d], got3[d],
                          want2[d], want3[d]);
        }
    }
    struct fdp_dp_stats st;
    fdp_dp_get_stats(rig.dp, &st);
    ck_assert_uint_gt(st.n_smc_hits, st.n_table_hits);
    ck_assert_uint_eq(st.n_emc_hits, 0);
    rig_destroy(&rig);
}
END_TEST

/* Without fdp_table_set_disjoint() the SMC never answers: a match is not
 * the answer when flows overlap. */
START_TEST(smc_needs_disjoint_table)
{
    struct rig rig;
    struct fdp_dp_options o;
    uint8_t pkt[128];
    uint64_t got2[N_DSTS] = { 0 }, got3[N_DSTS] = { 0 };

    fdp_dp_options_init(&o);
    o.emc_mode = FDP_DP_CACHE_OFF;
    o.smc_mode = FDP_DP_CACHE_ON;
    rig_create_with(&rig, &o);
    add_flow(rig.table, "priority=10,udp,actions=output:2");
    add_flow(rig.table, "priority=20,udp,tp_src=1,actions=output:3");
    for (uint16_t sport = 0; sport < 40; sport++) {
        size_t len = make_packet(pkt, 9, sport % 2);
        ck_assert(test_peer_send(&rig.ports[1], pkt, len));
        fdp_dp_pmd_poll(rig.pmd, NULL);
    }
    peer_drain(&rig.ports[2], got2);
    peer_drain(&rig.ports[3], got3);
    ck_assert_uint_eq(got2[9], 20);
    ck_assert_uint_eq(got3[9], 20);
    struct fdp_dp_stats st;
    fdp_dp_get_stats(rig.dp, &st);
    ck_assert_uint_eq(st.n_smc_hits, 0);
    rig_destroy(&rig);
}
END_TEST

/* Auto mode may keep or bypass the caches; either way every packet goes
 * where the table says and the counters add up. */
START_TEST(cache_auto_mode_is_transparent)
{
    struct rig rig;
    uint8_t pkt[128];
    uint64_t got2[N_DSTS] = { 0 };
    struct fdp_dp_options o;
    size_t total = 0;

    fdp_dp_options_init(&o);
    o.emc_insert_inv_prob = 1;
    rig_create_with(&rig, &o);
    add_flow(rig.table, "priority=10,udp,actions=output:2");
    /* 3000 batches: three periods of the meter, trials included. */
    for (int round = 0; round < 3000; round++) {
        for (unsigned int i = 0; i < 4; i++) {
            size_t len = make_packet(pkt, (round + i) % N_DSTS, 0);
            ck_assert(test_peer_send(&rig.ports[1], pkt, len));
            total++;
        }
        fdp_dp_pmd_poll(rig.pmd, NULL);
        peer_drain(&rig.ports[2], got2);
    }
    uint64_t sum = 0;
    for (unsigned int d = 0; d < N_DSTS; d++) {
        sum += got2[d];
    }
    ck_assert_uint_eq(sum, total);
    struct fdp_dp_stats st;
    fdp_dp_get_stats(rig.dp, &st);
    ck_assert_uint_eq(st.n_emc_hits + st.n_table_hits, total);
    /* The trials alone bypass the cache for 64 of each 1024 batches. */
    ck_assert_uint_gt(st.n_emc_bypassed, 0);
    rig_destroy(&rig);
}
END_TEST

struct upcalls {
    size_t n_miss, n_action;
    uint32_t last_in_port;
    size_t last_size;
};

static void
count_upcall(void *aux, const struct fdp_upcall *up)
{
    struct upcalls *u = aux;

    if (up->reason == FDP_UPCALL_MISS) {
        u->n_miss++;
    } else {
        u->n_action++;
    }
    u->last_in_port = up->in_port;
    u->last_size = up->size;
}

START_TEST(upcalls)
{
    struct rig rig;
    struct upcalls u = { 0 };
    uint8_t pkt[128];
    uint64_t got2[N_DSTS] = { 0 };

    rig_create(&rig, 100, 0);
    add_flow(rig.table, "udp,nw_dst=10.0.0.1,actions=controller:20,"
             "output:2");
    size_t len = make_packet(pkt, 1, 0);
    ck_assert(test_peer_send(&rig.ports[1], pkt, len));
    len = make_packet(pkt, 2, 0);
    ck_assert(test_peer_send(&rig.ports[1], pkt, len));
    fdp_dp_pmd_poll(rig.pmd, NULL);         /* No callback: counted. */
    fdp_dp_set_upcall(rig.dp, count_upcall, &u);
    ck_assert(test_peer_send(&rig.ports[1], pkt, len));
    len = make_packet(pkt, 1, 0);
    ck_assert(test_peer_send(&rig.ports[1], pkt, len));
    fdp_dp_pmd_poll(rig.pmd, NULL);
    ck_assert_uint_eq(u.n_miss, 1);
    ck_assert_uint_eq(u.n_action, 1);
    ck_assert_uint_eq(u.last_size, 20);     /* controller:20 */
    ck_assert_uint_eq(u.last_in_port, 1);
    peer_drain(&rig.ports[2], got2);
    ck_assert_uint_eq(got2[1], 2);          /* The controller action went
                                             * on to output:2. */
    struct fdp_dp_stats st;
    fdp_dp_get_stats(rig.dp, &st);
    ck_assert_uint_eq(st.n_missed, 2);
    ck_assert_uint_eq(st.n_upcalls, 2);
    rig_destroy(&rig);
}
END_TEST

/* What controller(...) says reaches the upcall with the packet. */
struct controller_upcall {
    size_t n, size;
    uint8_t ofp_reason;
    bool pause;
    uint16_t id;
    uint32_t meter_id;
    uint8_t userdata[8];
    size_t userdata_size;
};

static void
record_controller(void *aux, const struct fdp_upcall *up)
{
    struct controller_upcall *c = aux;

    if (up->reason != FDP_UPCALL_ACTION) {
        return;
    }
    c->n++;
    c->size = up->size;
    c->ofp_reason = up->ofp_reason;
    c->pause = up->pause;
    c->id = up->controller_id;
    c->meter_id = up->meter_id;
    c->userdata_size = up->userdata_size;
    ck_assert_uint_le(up->userdata_size, sizeof c->userdata);
    if (up->userdata_size) {
        memcpy(c->userdata, up->userdata, up->userdata_size);
    }
}

START_TEST(controller_arguments_reach_the_upcall)
{
    static const char *const flows[] = {
        /* The one-table path (the flow's own actions)... */
        "udp,nw_dst=10.0.0.1,actions=controller(reason=no_match,id=7,"
        "userdata=01.02.03,pause,max_len=30,meter_id=9),output:2",
        /* ...and a composed one (output:FIELD, in a pipeline). */
        "udp,nw_dst=10.0.0.1,actions=load:2->NXM_NX_REG0[],"
        "controller(reason=no_match,id=7,userdata=01.02.03,pause,"
        "max_len=30,meter_id=9),output:NXM_NX_REG0[]",
        /* Plain controller: reason action, nothing else. */
        "udp,nw_dst=10.0.0.1,actions=controller:25,output:2",
    };

    for (size_t i = 0; i < sizeof flows / sizeof flows[0]; i++) {
        struct rig rig;
        struct controller_upcall c;
        uint8_t pkt[128];
        uint64_t got2[N_DSTS] = { 0 };

        memset(&c, 0, sizeof c);
        /* A bare table runs a flow's actions as they are: the registers
         * of output:FIELD need a pipeline. */
        rig_create_n(&rig, 100, 0, i == 1 ? 1 : 0);
        rig_add_flow(&rig, flows[i]);
        fdp_dp_set_upcall(rig.dp, record_controller, &c);
        size_t len = make_packet(pkt, 1, 0);
        ck_assert(test_peer_send(&rig.ports[1], pkt, len));
        fdp_dp_pmd_poll(rig.pmd, NULL);
        ck_assert_uint_eq(c.n, 1);
        peer_drain(&rig.ports[2], got2);
        ck_assert_uint_eq(got2[1], 1);
        if (i < 2) {
            ck_assert_uint_eq(c.size, 30);
            ck_assert_uint_eq(c.ofp_reason, 0);     /* no_match */
            ck_assert(c.pause);
            ck_assert_uint_eq(c.id, 7);
            ck_assert_uint_eq(c.meter_id, 9);
            ck_assert_uint_eq(c.userdata_size, 3);
            ck_assert_mem_eq(c.userdata, "\x01\x02\x03", 3);
        } else {
            ck_assert_uint_eq(c.size, 25);
            ck_assert_uint_eq(c.ofp_reason, 1);     /* action */
            ck_assert(!c.pause);
            ck_assert_uint_eq(c.id, 0);
            ck_assert_uint_eq(c.meter_id, 0);
            ck_assert_uint_eq(c.userdata_size, 0);
        }
        rig_destroy(&rig);
    }
}
END_TEST

/* Frames are never lost or doubly owned, whatever the peer does. */
START_TEST(frames_conserved)
{
    struct rig rig;
    uint8_t pkt[128];
    struct fdp_dp_stats st;
    enum { N_FRAMES = 2048 };

    rig_create(&rig, 100, N_FRAMES);
    add_flow(rig.table, "udp,actions=output:2,output:3,output:2");
    size_t len = make_packet(pkt, 3, 0);
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < 20; i++) {
            test_peer_send(&rig.ports[1], pkt, len);
        }
        fdp_dp_pmd_poll(rig.pmd, NULL);
        if (round % 20 == 19) {             /* Let tx rings fill up. */
            peer_drain(&rig.ports[2], NULL);
            peer_drain(&rig.ports[3], NULL);
        }
    }
    struct fdp_port_stats ps;
    fdp_dp_port_get_stats(rig.dp, 2, &ps, NULL);
    ck_assert_uint_gt(ps.tx_dropped, 0);    /* The full ring was hit. */

    /* Forged descriptors: a frame the peer does not hold (the last one,
     * still in the pool), an address outside the area, a length past the
     * frame's end. */
    uint32_t idx, fs = rig.ports[1].frame_size;
    uint32_t fidx;
    ck_assert_uint_eq(fdp_ring_peek(rig.ports[1].fill, 1, &fidx), 1);
    uint64_t held = fdp_ring_slot(rig.ports[1].fill, fidx)->addr;
    fdp_ring_release(rig.ports[1].fill, 1);
    const struct fdp_desc forged[] = {
        { .addr = (uint64_t) (N_FRAMES - 1) * fs + FDP_DP_HEADROOM,
          .len = 60 },
        { .addr = (uint64_t) N_FRAMES * fs + FDP_DP_HEADROOM, .len = 60 },
        { .addr = held, .len = fs },
        { .addr = held - held % fs, .len = 60 },   /* Over the metadata. */
    };
    ck_assert_uint_eq(fdp_ring_reserve(rig.ports[1].rx, 4, &idx), 4);
    for (uint32_t i = 0; i < 4; i++) {
        *fdp_ring_slot(rig.ports[1].rx, idx + i) = forged[i];
    }
    fdp_ring_submit(rig.ports[1].rx, 4);
    fdp_dp_pmd_poll(rig.pmd, NULL);
    fdp_dp_port_get_stats(rig.dp, 1, &ps, NULL);
    ck_assert_uint_eq(ps.rx_errors, 4);
    char error[200];
    fdp_dp_port_get_error(rig.dp, 1, error, sizeof error);
    ck_assert_msg(strstr(error, "bad descriptor"), "%s", error);

    /* Deleting the ports takes back what their peers hold; then every
     * frame is free (the pmd's cache goes back when it is destroyed). */
    fdp_dp_pmd_destroy(rig.pmd);
    rig.pmd = NULL;
    for (uint32_t p = 1; p <= 3; p++) {
        ck_assert_int_eq(fdp_dp_port_del(rig.dp, p), 0);
    }
    ck_assert_int_eq(fdp_dp_port_del(rig.dp, 1), ENOENT);
    fdp_dp_get_stats(rig.dp, &st);
    ck_assert_uint_eq(st.n_frames_free, N_FRAMES);
    rig_destroy(&rig);
}
END_TEST

START_TEST(bad_ports)
{
    struct fdp_table *t;
    struct fdp_dp *dp;
    char *error = NULL;
    struct fdp_dp_options o;

    ck_assert_int_eq(fdp_table_create(&t), 0);
    fdp_dp_options_init(&o);
    o.frame_size = 3000;
    ck_assert_int_eq(fdp_dp_create(t, &o, &dp), EINVAL);
    ck_assert_int_eq(fdp_dp_create(t, NULL, &dp), 0);

    static const struct {
        uint32_t port;
        const char *spec;
        int error;
        const char *msg;
    } cases[] = {
        { 0, "ring", EINVAL, "port numbers are 1 to" },
        { 0xff00, "ring", EINVAL, "port numbers are 1 to" },
        { 1, "tap:x", EINVAL, "\"tap\" is not a port type" },
        { 1, "ring:size=3", EINVAL, "not a power of two" },
        { 1, "ring:sz=4", EINVAL, "unknown option \"sz\"" },
        { 1, "ring:size", EINVAL, "is not KEY=VALUE" },
        { 1, "pcap", EINVAL, "needs rx=FILE" },
        { 1, "pcap:rx=/nonexistent/x.pcap", ENOENT, "/nonexistent/x.pcap" },
        { 1, "pcap:rx=a,tx=a", EINVAL, "same file" },
        { 1, "pcap:tx=/nonexistent/dir/y.pcap", ENOENT, "y.pcap" },
        { 1, "pcap:tx=/dev/null,loop=2", EINVAL, "loop=2" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        error = NULL;
        int e = fdp_dp_port_add(dp, cases[i].port, cases[i].spec, &error);
        ck_assert_msg(e == cases[i].error, "%s: %d", cases[i].spec, e);
        ck_assert_msg(error && strstr(error, cases[i].msg), "%s: %s",
                      cases[i].spec, error ? error : "(no message)");
        free(error);
    }
    ck_assert_int_eq(fdp_dp_port_add(dp, 7, "ring", NULL), 0);
    ck_assert_int_eq(fdp_dp_port_add(dp, 7, "ring", NULL), EEXIST);
    struct fdp_port_rings rings;
    ck_assert_int_eq(fdp_dp_port_rings(dp, 8, &rings), ENOENT);
    ck_assert_int_eq(fdp_dp_port_add(dp, 8, "pcap:tx=/dev/null", NULL), 0);
    ck_assert_int_eq(fdp_dp_port_rings(dp, 8, &rings), EINVAL);
    uint32_t list[4];
    ck_assert_uint_eq(fdp_dp_port_list(dp, list, 4), 2);
    ck_assert_uint_eq(list[0], 7);
    ck_assert_uint_eq(list[1], 8);
    fdp_dp_destroy(dp);
    fdp_table_destroy(t);
}
END_TEST

/* A pmd thread forwards (playing its own peer) while the main thread
 * replaces flows and adds and removes a port: nothing crashes, nothing is
 * lost, and under ThreadSanitizer nothing races. */
/* Seconds since 'start' on the monotonic clock. */
static double
seconds_since(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double) (now.tv_sec - start->tv_sec)
           + (double) (now.tv_nsec - start->tv_nsec) / 1e9;
}

/* The concurrency tests make the interleavings they check happen: a
 * thread waits for the other's progress instead of hoping the scheduler
 * runs it.  The wait is bounded (WAIT_MAX_S, far above what a loaded
 * machine needs) so that a stuck thread fails the test rather than hangs
 * it. */
#define WAIT_MAX_S 20.0
#define WAIT_UNTIL(COND, WHAT)                                          \
    do {                                                                \
        struct timespec wait_start_;                                    \
        clock_gettime(CLOCK_MONOTONIC, &wait_start_);                   \
        while (!(COND)) {                                               \
            ck_assert_msg(seconds_since(&wait_start_) < WAIT_MAX_S,     \
                          "waited %.0f s for %s", WAIT_MAX_S, WHAT);    \
            sched_yield();                                              \
        }                                                               \
    } while (0)

struct pmd_thread {
    struct rig *rig;
    bool stop;
    uint64_t n_loops;           /* Atomic: the main thread waits on it. */
    uint64_t n_sent, n_got;
};

static void *
pmd_main(void *t_)
{
    struct pmd_thread *t = t_;
    struct rig *rig = t->rig;
    uint8_t pkt[128];
    uint64_t got[N_DSTS];

    while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
        for (int i = 0; i < 16; i++) {
            size_t len = make_packet(pkt, (unsigned int) (t->n_sent % 4), 0);
            t->n_sent += test_peer_send(&rig->ports[1], pkt, len);
        }
        fdp_dp_pmd_poll(rig->pmd, NULL);
        t->n_got += peer_drain(&rig->ports[2], got);
        __atomic_fetch_add(&t->n_loops, 1, __ATOMIC_RELEASE);
    }
    for (int i = 0; i < 4; i++) {
        fdp_dp_pmd_poll(rig->pmd, NULL);
        t->n_got += peer_drain(&rig->ports[2], got);
    }
    return NULL;
}

/* Two pmds on their own threads forward to one port (its tx under the
 * port's mutex) through one flow whose counters they write on their own
 * shards, while this thread counts packets on the shared shard with
 * fdp_rule_account() and drains the port: every packet arrives and the
 * flow counts each one exactly once. */
struct two_pmd_lane {
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings rings;
    uint64_t n_sent;
    unsigned int dst;
    bool *stop;                 /* Atomic: set when all arrived. */
};

static void *
two_pmd_main(void *l_)
{
    struct two_pmd_lane *l = l_;
    uint8_t pkt[128];
    size_t len = make_packet(pkt, l->dst, 0);

    /* Both keep polling to the end: pmd 0 also recycles port 3's
     * completed frames. */
    while (!__atomic_load_n(l->stop, __ATOMIC_ACQUIRE)) {
        for (int i = 0; i < 16 && l->n_sent < 5000
                        && test_peer_send(&l->rings, pkt, len); i++) {
            __atomic_store_n(&l->n_sent, l->n_sent + 1, __ATOMIC_RELEASE);
        }
        if (!fdp_dp_pmd_poll(l->pmd, NULL)) {
            sched_yield();
        }
    }
    return NULL;
}

/* peer_drain() for a port whose completions another thread recycles:
 * moves only as many as the completion ring has room for. */
static uint64_t
peer_drain_some(const struct fdp_port_rings *r)
{
    uint32_t idx, cidx;
    uint32_t room = fdp_ring_reserve(r->completion, UINT32_MAX, &cidx);
    uint32_t n = fdp_ring_peek(r->tx, room, &idx);

    for (uint32_t i = 0; i < n; i++) {
        *fdp_ring_slot(r->completion, cidx + i) = *fdp_ring_slot(r->tx,
                                                                 idx + i);
    }
    fdp_ring_submit(r->completion, n);
    fdp_ring_cancel(r->completion, room - n);
    fdp_ring_release(r->tx, n);
    return n;
}

START_TEST(two_pmds_share_a_flow)
{
    struct fdp_table *table;
    struct fdp_dp *dp;
    struct fdp_dp_options o;
    struct two_pmd_lane lanes[2];
    struct fdp_port_rings out;
    pthread_t threads[2];
    bool stop = false;

    ck_assert_int_eq(fdp_table_create(&table), 0);
    add_flow(table, "priority=1,udp,actions=output:3");
    fdp_dp_options_init(&o);
    o.n_pmds = 2;
    ck_assert_int_eq(fdp_dp_create(table, &o, &dp), 0);
    /* Ranks 0, 1, 2: port 1 to pmd 0, port 2 to pmd 1, port 3 to pmd 0. */
    for (uint32_t p = 1; p <= 3; p++) {
        ck_assert_int_eq(fdp_dp_port_add(dp, p, "ring:size=1024", NULL), 0);
    }
    ck_assert_int_eq(fdp_dp_port_rings(dp, 3, &out), 0);
    for (unsigned int i = 0; i < 2; i++) {
        lanes[i] = (struct two_pmd_lane) { .dst = 1 + i, .stop = &stop };
        ck_assert_int_eq(fdp_dp_pmd_create(dp, i, &lanes[i].pmd), 0);
        ck_assert_int_eq(fdp_dp_port_rings(dp, 1 + i, &lanes[i].rings), 0);
    }
    for (unsigned int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_create(&threads[i], NULL, two_pmd_main,
                                        &lanes[i]), 0);
    }

    uint64_t got = 0;
    struct fdp_key key;
    uint8_t pkt[128];
    size_t len = make_packet(pkt, 1, 0);
    fdp_packet_extract(pkt, len, 1, &key, NULL);
    /* Count on the shared shard while the pmds count on theirs: each
     * hundred waits until both pmds have forwarded more since the last
     * (or sent all they will), so the three writers really interleave. */
    struct fdp_port_stats ps;
    uint64_t last[2] = { 0, 0 };
    fdp_table_read_lock();
    const struct fdp_rule *rule = fdp_table_lookup(table, &key);
    fdp_table_read_unlock();
    for (int round = 0; round < 10; round++) {
        for (unsigned int i = 0; i < 2; i++) {
            WAIT_UNTIL(__atomic_load_n(&lanes[i].n_sent, __ATOMIC_ACQUIRE)
                       > last[i]
                       || __atomic_load_n(&lanes[i].n_sent, __ATOMIC_ACQUIRE)
                          == 5000
                       || (got += peer_drain_some(&out), false),
                       "a pmd's progress");
            last[i] = __atomic_load_n(&lanes[i].n_sent, __ATOMIC_ACQUIRE);
        }
        fdp_table_read_lock();
        rule = fdp_table_lookup(table, &key);
        for (int i = 0; i < 100; i++) {
            fdp_rule_account(rule, 10, 1);
        }
        fdp_table_read_unlock();
        got += peer_drain_some(&out);
    }
    /* A packet arrives or is dropped for want of room on port 3's tx
     * ring (this thread may be slower than two pmds). */
    WAIT_UNTIL((got += peer_drain_some(&out),
                fdp_dp_port_get_stats(dp, 3, &ps, NULL) == 0
                && got + ps.tx_dropped >= 10000), "every packet");
    __atomic_store_n(&stop, true, __ATOMIC_RELEASE);
    for (unsigned int i = 0; i < 2; i++) {
        pthread_join(threads[i], NULL);
    }

    struct fdp_rule_stats rs;
    fdp_table_read_lock();
    rule = fdp_table_lookup(table, &key);
    fdp_rule_get_stats(rule, &rs);
    fdp_table_read_unlock();
    ck_assert_uint_eq(rs.n_packets, 10000 + 1000);
    ck_assert_uint_eq(rs.n_bytes, 10000 * len + 1000 * 10);
    ck_assert_int_eq(fdp_dp_port_get_stats(dp, 3, &ps, NULL), 0);
    ck_assert_uint_eq(ps.tx_packets, got);
    ck_assert_uint_eq(ps.tx_packets + ps.tx_dropped, 10000);
    for (unsigned int i = 0; i < 2; i++) {
        fdp_dp_pmd_destroy(lanes[i].pmd);
    }
    fdp_dp_destroy(dp);
    fdp_table_destroy(table);
}
END_TEST

START_TEST(concurrent_control)
{
    struct rig rig;
    struct pmd_thread t = { .rig = &rig };
    pthread_t thread;

    rig_create(&rig, 1, 0);
    add_flow(rig.table, "priority=1,actions=output:2");
    ck_assert_int_eq(pthread_create(&thread, NULL, pmd_main, &t), 0);
    for (int i = 0; i < 300; i++) {
        char flow[100];
        /* Let the pmd run between changes, whatever the scheduler. */
        WAIT_UNTIL(__atomic_load_n(&t.n_loops, __ATOMIC_ACQUIRE)
                   >= (uint64_t) i, "the pmd's next poll");
        snprintf(flow, sizeof flow, "priority=%d,udp,nw_dst=10.0.0.%d,"
                 "actions=mod_tp_dst:%d,output:2", 10 + i % 7, i % 4, i);
        add_flow(rig.table, flow);
        if (i % 50 == 0) {
            ck_assert_int_eq(fdp_dp_port_add(rig.dp, 9, "pcap:tx=/dev/null",
                                             NULL), 0);
            ck_assert_int_eq(fdp_dp_port_del(rig.dp, 9), 0);
        }
    }
    __atomic_store_n(&t.stop, true, __ATOMIC_RELEASE);
    pthread_join(thread, NULL);
    ck_assert_uint_gt(t.n_sent, 0);
    ck_assert_uint_eq(t.n_got, t.n_sent);   /* Every packet hits a flow
                                             * that outputs to port 2. */
    rig_destroy(&rig);
}
END_TEST

/* Adds 'text', in its own table=, to the rig's pipeline. */
static void
pipeline_add(struct rig *rig, const char *text)
{
    struct fdp_flow_spec spec;
    char *error = NULL;

    ck_assert_msg(!fdp_flow_parse(text, 0, &spec, &error), "%s: %s", text,
                  error);
    ck_assert_int_eq(fdp_pipeline_insert(rig->pipeline, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);
}

/* The same through a pipeline of three tables, whose middle one gains and
 * loses a conjunction while the pmd forwards: every packet still ends in
 * table 2's flows, which all output to port 2, and no reader trips on a
 * table, an index or an outcome being replaced (the TSan job runs this). */
START_TEST(concurrent_pipeline_control)
{
    struct rig rig;
    struct pmd_thread t = { .rig = &rig };
    pthread_t thread;

    rig_create_n(&rig, 1, 0, 3);
    pipeline_add(&rig, "table=2,priority=1,actions=output:2");
    ck_assert_int_eq(pthread_create(&thread, NULL, pmd_main, &t), 0);
    for (int i = 0; i < 300; i++) {
        char flow[160];
        WAIT_UNTIL(__atomic_load_n(&t.n_loops, __ATOMIC_ACQUIRE)
                   >= (uint64_t) i, "the pmd's next poll");
        snprintf(flow, sizeof flow, "table=2,priority=%d,udp,"
                 "nw_dst=10.0.0.%d,actions=mod_tp_dst:%d,output:2",
                 10 + i % 7, i % 4, i);
        pipeline_add(&rig, flow);
        switch (i % 4) {
        case 0:
            snprintf(flow, sizeof flow, "table=1,priority=5,udp,"
                     "nw_dst=10.0.0.%d,actions=conjunction(7,1/2)", i % 8);
            pipeline_add(&rig, flow);
            break;
        case 1:
            pipeline_add(&rig, "table=1,priority=5,udp,tp_src=0,"
                         "actions=conjunction(7,2/2)");
            pipeline_add(&rig, "table=1,priority=5,conj_id=7,"
                         "actions=load:0x1->NXM_NX_REG0[],goto_table:2");
            break;
        case 2: {
            struct fdp_flow_spec spec;
            ck_assert_int_eq(fdp_flow_parse("table=1,conj_id=7",
                                            FDP_PARSE_MATCH_ONLY, &spec,
                                            NULL), 0);
            struct fdp_table_filter f = { .match = spec.match };
            ck_assert_int_eq(fdp_pipeline_remove(rig.pipeline, 1, &f, NULL),
                             0);
            fdp_flow_spec_destroy(&spec);
            break;
        }
        default:
            break;
        }
    }
    __atomic_store_n(&t.stop, true, __ATOMIC_RELEASE);
    pthread_join(thread, NULL);
    ck_assert_uint_gt(t.n_sent, 0);
    ck_assert_uint_eq(t.n_got, t.n_sent);
    rig_destroy(&rig);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Regression: an old version read with a new mode.                        */

/* A pmd used to load the pipeline's version, then, separately, whether the
 * pipeline was one table; a writer stored the second and then bumped the
 * first.  A pmd that read the old version and the new mode looked up EMC
 * entries made at that version in the other mode, and read a rule as a
 * pipeline outcome (an ASan crash in batch_group(), or the packet dropped)
 * or an outcome as a rule.  The hook (fdp__dp_snapshot_hook) makes a
 * writer thread commit exactly between the pmd's read of the snapshot and
 * its use: first the first flow outside table 0, then its removal, each
 * while the EMC is full of entries of the old mode.  Every packet must
 * still reach port 2. */
struct mode_flip {
    struct rig *rig;
    bool add;                   /* Add the flow in table 1, or remove it. */
    bool armed;                 /* The next batch's hook fires. */
    bool go, done;              /* Atomic: hook to writer, and back. */
    bool fired;
};

static struct mode_flip *mode_flip;

/* Waits up to 10 s for '*flag'; returns whether it was set. */
static bool
wait_flag(const bool *flag)
{
    for (int i = 0; i < 10000; i++) {
        if (__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
            return true;
        }
        usleep(1000);
    }
    return false;
}

static void
mode_flip_hook(struct fdp_dp *dp)
{
    struct mode_flip *f = mode_flip;

    (void) dp;
    if (f && f->armed) {
        f->armed = false;
        f->fired = true;
        __atomic_store_n(&f->go, true, __ATOMIC_RELEASE);
        /* The writer's commit needs no grace period (a removal of one
         * flow waits for none), so it cannot wait for this read-side
         * section; the bound is only against a hang. */
        wait_flag(&f->done);
    }
}

static void *
mode_flip_writer(void *f_)
{
    struct mode_flip *f = f_;

    if (!wait_flag(&f->go)) {
        return NULL;
    }
    if (f->add) {
        pipeline_add(f->rig, "table=1,priority=1,actions=drop");
    } else {
        struct fdp_match *m = fdp_match_create();
        struct fdp_table_filter filter = { .match = m };
        ck_assert_int_eq(fdp_pipeline_remove(f->rig->pipeline, 1, &filter,
                                             NULL), 0);
        fdp_match_destroy(m);
    }
    __atomic_store_n(&f->done, true, __ATOMIC_RELEASE);
    return NULL;
}

/* Sends 8 equal packets through one poll; returns how many port 2 got. */
static size_t
mode_flip_batch(struct rig *rig)
{
    uint8_t pkt[128];
    size_t len = make_packet(pkt, 5, 7);

    for (int i = 0; i < 8; i++) {
        ck_assert(test_peer_send(&rig->ports[1], pkt, len));
    }
    fdp_dp_pmd_poll(rig->pmd, NULL);
    return peer_drain(&rig->ports[2], NULL);
}

START_TEST(old_version_with_new_mode_loses_no_packet)
{
    struct rig rig;

    /* Every result enters the EMC. */
    rig_create_n(&rig, 1, 0, 1);
    pipeline_add(&rig, "table=0,priority=10,udp,actions=output:2");
    for (int phase = 0; phase < 2; phase++) {
        bool add = phase == 0;
        ck_assert(pipeline_is_single(rig.pipeline) == add);
        /* The EMC fills at this version, in this mode. */
        ck_assert_uint_eq(mode_flip_batch(&rig), 8);
        ck_assert_uint_eq(mode_flip_batch(&rig), 8);

        struct mode_flip f = { .rig = &rig, .add = add, .armed = true };
        pthread_t writer;
        mode_flip = &f;
        fdp__dp_snapshot_hook = mode_flip_hook;
        ck_assert_int_eq(pthread_create(&writer, NULL, mode_flip_writer, &f),
                         0);
        size_t got = mode_flip_batch(&rig);
        pthread_join(writer, NULL);
        fdp__dp_snapshot_hook = NULL;
        mode_flip = NULL;
        ck_assert(f.fired);
        ck_assert(f.done);
        ck_assert_uint_eq(got, 8);
        ck_assert(pipeline_is_single(rig.pipeline) == !add);
        ck_assert_uint_eq(mode_flip_batch(&rig), 8);
    }
    rig_destroy(&rig);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Connection tracking through the datapath.                               */

static void
put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

static void
put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t) (v >> 16));
    put16(p + 2, (uint16_t) v);
}

/* An IPv4 TCP (proto 6) or UDP (17, 8 bytes of payload) packet from
 * 10.0.0.'src':'sport' to 10.0.0.'dst':'dport' with valid checksums; TCP
 * with 'flags', 'seq' and 'ack'.  Returns its length. */
static size_t
make_l4(uint8_t *p, uint8_t proto, uint8_t src, uint8_t dst, uint16_t sport,
        uint16_t dport, uint8_t flags, uint32_t seq, uint32_t ack)
{
    size_t l4_len = proto == 6 ? 20 : 16;
    size_t ip_len = 20 + l4_len;
    uint8_t *ip = p + 14, *l4 = ip + 20;

    memset(p, 0, 14 + ip_len);
    p[5] = 2;
    p[11] = 1;
    p[12] = 0x08;
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t) ip_len);
    ip[8] = 64;
    ip[9] = proto;
    ip[12] = 10;
    ip[15] = src;
    ip[16] = 10;
    ip[19] = dst;
    put16(ip + 10, fdp__csum(0, ip, 20));
    put16(l4, sport);
    put16(l4 + 2, dport);
    if (proto == 6) {
        put32(l4 + 4, seq);
        put32(l4 + 8, ack);
        l4[12] = 5 << 4;
        l4[13] = flags;
        put16(l4 + 14, 65535);
    } else {
        put16(l4 + 4, (uint16_t) l4_len);
        memset(l4 + 8, 0x5a, 8);
    }
    uint8_t pseudo[4] = { 0, proto, 0, (uint8_t) l4_len };
    uint32_t sum = fdp__csum_add(0, ip + 12, 8);
    sum = fdp__csum_add(sum, pseudo, 4);
    uint16_t csum = fdp__csum(sum, l4, l4_len);
    put16(l4 + (proto == 6 ? 16 : 6), proto == 17 && !csum ? 0xffff : csum);
    return 14 + ip_len;
}

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

/* What came out of a port: how many packets, and a running hash of their
 * bytes in order (so two datapaths can be compared packet for packet). */
struct ct_out {
    uint64_t n;
    uint64_t hash;
    uint8_t last[128];
    uint32_t last_len;
};

static void
ct_out_cb(void *aux, const uint8_t *p, uint32_t len)
{
    struct ct_out *o = aux;

    o->n++;
    for (uint32_t i = 0; i < len; i++) {
        o->hash = (o->hash ^ p[i]) * UINT64_C(0x100000001b3);
    }
    o->hash = (o->hash ^ len) * UINT64_C(0x100000001b3);
    o->last_len = len < sizeof o->last ? len : sizeof o->last;
    memcpy(o->last, p, o->last_len);
}

/* A pipeline rig for ct: 'flows' (text, each with its table=), the EMC
 * (and with it the continuation cache) on, inserting every result, or
 * off. */
static void
ct_rig_create(struct rig *rig, bool emc, const char *const *flows)
{
    struct fdp_dp_options o;

    fdp_dp_options_init(&o);
    o.emc_mode = emc ? FDP_DP_CACHE_ON : FDP_DP_CACHE_OFF;
    o.emc_insert_inv_prob = 1;
    o.smc_mode = FDP_DP_CACHE_OFF;
    memset(rig, 0, sizeof *rig);
    ck_assert_int_eq(fdp_pipeline_create(&rig->pipeline), 0);
    for (const char *const *f = flows; *f; f++) {
        pipeline_add(rig, *f);
    }
    rig->table = fdp_pipeline_get_table(rig->pipeline, 0);
    ck_assert_int_eq(fdp_dp_create_pipeline(rig->pipeline, &o, &rig->dp), 0);
    for (uint32_t p = 1; p <= 3; p++) {
        ck_assert_int_eq(fdp_dp_port_add(rig->dp, p, "ring:size=256", NULL),
                         0);
        ck_assert_int_eq(fdp_dp_port_rings(rig->dp, p, &rig->ports[p]), 0);
    }
    ck_assert_int_eq(fdp_dp_pmd_create(rig->dp, 0, &rig->pmd), 0);
}

/* Destroys 'rig' after checking that every frame came back: the pmd's
 * cache and what the ports' peers hold return to the pool, which must
 * then hold every frame (a fork's copy, a continuation's frame or a
 * dropped recirculation leaks none). */
static void
ct_rig_destroy_checking_frames(struct rig *rig)
{
    struct fdp_dp_stats st;

    fdp_dp_pmd_destroy(rig->pmd);
    rig->pmd = NULL;
    for (uint32_t p = 1; p <= 3; p++) {
        ck_assert_int_eq(fdp_dp_port_del(rig->dp, p), 0);
    }
    fdp_dp_get_stats(rig->dp, &st);
    ck_assert_uint_eq(st.n_frames_free, 16384);     /* The default. */
    rig_destroy(rig);
}

/* Sends the 'len'-byte 'pkt' on port 'in', polls, and drains every port
 * into 'out' (out[1..3]). */
static void
ct_send(struct rig *rig, uint32_t in, const uint8_t *pkt, size_t len,
        struct ct_out out[4])
{
    ck_assert(test_peer_send(&rig->ports[in], pkt, len));
    for (int i = 0; i < 2; i++) {
        fdp_dp_pmd_poll(rig->pmd, NULL);
        for (uint32_t p = 1; p <= 3; p++) {
            test_peer_drain(&rig->ports[p], ct_out_cb, &out[p]);
        }
    }
}

/* Sends one packet and returns the port it came out of (0: none; -1:
 * several). */
static int
ct_send_one(struct rig *rig, uint32_t in, const uint8_t *pkt, size_t len)
{
    struct ct_out out[4];
    int port = 0;

    memset(out, 0, sizeof out);
    ct_send(rig, in, pkt, len, out);
    for (int p = 1; p <= 3; p++) {
        if (out[p].n) {
            port = port ? -1 : p;
            ck_assert_uint_eq(out[p].n, 1);
        }
    }
    return port;
}

/* A stateful firewall: what comes in on port 1 (the client side) may open
 * connections to port 2, which are committed; replies pass back; nothing
 * that starts on port 2 passes.  A TCP handshake and data, then an
 * unsolicited SYN and a stray ACK from outside, with the caches on and
 * off. */
static const char *const firewall_flows[] = {
    "table=0,priority=10,ip,actions=ct(table=1,zone=1)",
    "table=0,priority=0,actions=drop",
    "table=1,priority=20,ct_state=+trk+new,ip,in_port=1,"
    "actions=ct(commit,zone=1),output:2",
    "table=1,priority=20,ct_state=+trk+est-rpl,ip,in_port=1,actions=output:2",
    "table=1,priority=20,ct_state=+trk+est+rpl,ip,in_port=2,actions=output:1",
    "table=1,priority=0,actions=drop",
    NULL
};

START_TEST(ct_stateful_firewall)
{
    struct rig rig;
    uint8_t pkt[128];
    size_t len;
    struct fdp_dp_stats st;

    ct_rig_create(&rig, _i, firewall_flows);
    struct fdp__ct *ct = fdp__dp_ct(rig.dp);

    /* The handshake: SYN out, SYN-ACK back, ACK out. */
    len = make_l4(pkt, 6, 1, 2, 1000, 80, TCP_SYN, 100, 0);
    ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 2);
    ck_assert_uint_eq(fdp__ct_count(ct), 1);
    ck_assert_uint_eq(fdp__ct_zone_count(ct, 1), 1);
    len = make_l4(pkt, 6, 2, 1, 80, 1000, TCP_SYN | TCP_ACK, 500, 101);
    ck_assert_int_eq(ct_send_one(&rig, 2, pkt, len), 1);
    len = make_l4(pkt, 6, 1, 2, 1000, 80, TCP_ACK, 101, 501);
    ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 2);
    /* Data both ways, several times: the continuation cache's entries
     * (with the EMC on) serve the repeats. */
    for (int i = 0; i < 20; i++) {
        len = make_l4(pkt, 6, 1, 2, 1000, 80, TCP_ACK, 101, 501);
        ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 2);
        len = make_l4(pkt, 6, 2, 1, 80, 1000, TCP_ACK, 501, 101);
        ck_assert_int_eq(ct_send_one(&rig, 2, pkt, len), 1);
    }
    /* Unsolicited from outside: a SYN to the client, an ACK of a
     * connection nobody opened, a UDP packet. */
    len = make_l4(pkt, 6, 3, 1, 2000, 22, TCP_SYN, 7, 0);
    ck_assert_int_eq(ct_send_one(&rig, 2, pkt, len), 0);
    len = make_l4(pkt, 6, 4, 1, 2001, 22, TCP_ACK, 7, 9);
    ck_assert_int_eq(ct_send_one(&rig, 2, pkt, len), 0);
    len = make_l4(pkt, 17, 4, 1, 53, 5353, 0, 0, 0);
    ck_assert_int_eq(ct_send_one(&rig, 2, pkt, len), 0);
    ck_assert_uint_eq(fdp__ct_count(ct), 1);

    fdp_dp_get_stats(rig.dp, &st);
    uint64_t n = 3 + 40 + 3;
    /* Every packet went through the tracker once in table 0, and the
     * client's new connection once more for its commit. */
    ck_assert_uint_eq(st.n_ct_packets, n + 1);
    ck_assert_uint_eq(st.n_recirculations, n);
    ck_assert_uint_eq(st.n_recirc_dropped, 0);
    ck_assert_uint_eq(st.n_recirc_missed, 0);
    if (_i) {
        /* The 40 data packets have two keys: all but the first of each
         * come from the cache. */
        ck_assert_uint_ge(st.n_recirc_cache_hits, 38);
    } else {
        ck_assert_uint_eq(st.n_recirc_cache_hits, 0);
    }
    struct fdp_port_stats ps;
    ck_assert_int_eq(fdp_dp_port_get_stats(rig.dp, 2, &ps, NULL), 0);
    ck_assert_uint_eq(ps.rx_packets, 1 + 20 + 3);
    ck_assert_uint_eq(ps.rx_dropped, 3);
    ck_assert_int_eq(fdp_dp_port_get_stats(rig.dp, 1, &ps, NULL), 0);
    ck_assert_uint_eq(ps.rx_dropped, 0);
    ct_rig_destroy_checking_frames(&rig);
}
END_TEST

/* ---- Fragments through ct (datapath/ipf.c) ---- */

/* Builds the fragments of a UDP datagram of 'payload' bytes from
 * 10.0.0.'src':'sport' to 10.0.0.'dst':'dport' (or 2001:db8::'src' to
 * 2001:db8::'dst' if 'v6'), cut at 'step' data bytes (a multiple of 8), in
 * 'frags' (room for 'max' of at most 1600 bytes each).  Returns how
 * many. */
static size_t
make_frags(bool v6, uint8_t src, uint8_t dst, uint16_t sport, uint16_t dport,
           size_t payload, size_t step, uint8_t frags[][1600],
           size_t *lens, size_t max)
{
    size_t ip = v6 ? 40 : 20;
    size_t l4_len = 8 + payload;
    uint8_t *whole = calloc(1, ip + l4_len);
    uint8_t *l4 = whole + ip;

    ck_assert_ptr_nonnull(whole);
    put16(l4, sport);
    put16(l4 + 2, dport);
    put16(l4 + 4, (uint16_t) l4_len);
    for (size_t i = 8; i < l4_len; i++) {
        l4[i] = (uint8_t) (i * 7 + src);
    }
    uint8_t ph[40] = { 0 };
    size_t ph_len;
    if (v6) {
        whole[0] = 0x60;
        whole[7] = 64;
        put32(whole + 8, 0x20010db8);
        whole[23] = src;
        put32(whole + 24, 0x20010db8);
        whole[39] = dst;
        memcpy(ph, whole + 8, 32);
        put32(ph + 32, (uint32_t) l4_len);
        ph[39] = 17;
        ph_len = 40;
    } else {
        whole[0] = 0x45;
        whole[8] = 64;
        whole[9] = 17;
        whole[12] = 10;
        whole[15] = src;
        whole[16] = 10;
        whole[19] = dst;
        memcpy(ph, whole + 12, 8);
        ph[9] = 17;
        put16(ph + 10, (uint16_t) l4_len);
        ph_len = 12;
    }
    uint16_t c = fdp__csum(fdp__csum_add(0, ph, ph_len), l4, l4_len);
    put16(l4 + 6, c ? c : 0xffff);

    size_t n = 0;
    for (size_t at = 0; at < l4_len; at += step, n++) {
        size_t len = l4_len - at < step ? l4_len - at : step;
        bool mf = at + len < l4_len;
        uint8_t *f = frags[n];
        ck_assert_uint_lt(n, max);
        memset(f, 0, 14);
        f[5] = 2;
        f[11] = 1;
        put16(f + 12, v6 ? 0x86dd : 0x0800);
        memcpy(f + 14, whole, ip);
        uint8_t *fip = f + 14;
        if (v6) {
            fip[6] = 44;
            put16(fip + 4, (uint16_t) (8 + len));
            uint8_t *fh = fip + 40;
            fh[0] = 17;
            fh[1] = 0;
            put16(fh + 2, (uint16_t) (at | mf));
            put32(fh + 4, 0x1234u + src);
            memcpy(fh + 8, l4 + at, len);
            lens[n] = 14 + 48 + len;
        } else {
            put16(fip + 2, (uint16_t) (20 + len));
            put16(fip + 4, (uint16_t) (0x1234u + src));
            put16(fip + 6, (uint16_t) ((mf ? 0x2000 : 0) | at / 8));
            put16(fip + 10, fdp__csum(0, fip, 20));
            memcpy(fip + 20, l4 + at, len);
            lens[n] = 14 + 20 + len;
        }
    }
    free(whole);
    return n;
}

/* Every packet that came out of a port, in order. */
struct frag_out {
    size_t n;
    uint8_t pkts[16][1600];
    uint32_t lens[16];
};

static void
frag_out_cb(void *aux, const uint8_t *p, uint32_t len)
{
    struct frag_out *o = aux;

    ck_assert_uint_lt(o->n, 16);
    ck_assert_uint_le(len, 1600);
    memcpy(o->pkts[o->n], p, len);
    o->lens[o->n++] = len;
}

/* Sends the 'n' fragments on port 'in', 'per_poll' of them before each
 * poll, and collects what ports 1 and 2 send. */
static void
frag_send(struct rig *rig, uint32_t in, uint8_t frags[][1600],
          const size_t *lens, const size_t *order, size_t n, size_t per_poll,
          struct frag_out out[3])
{
    memset(out, 0, 3 * sizeof *out);
    for (size_t k = 0; k < n; k++) {
        ck_assert(test_peer_send(&rig->ports[in], frags[order[k]],
                                 lens[order[k]]));
        if ((k + 1) % per_poll && k + 1 < n) {
            continue;
        }
        for (int i = 0; i < 2; i++) {
            fdp_dp_pmd_poll(rig->pmd, NULL);
            for (uint32_t p = 1; p <= 2; p++) {
                test_peer_drain(&rig->ports[p], frag_out_cb, &out[p]);
            }
        }
    }
}

/* Fragmented UDP through the stateful firewall (ct(table=1) in table 0;
 * in table 1 a new connection from port 1 is committed by a second ct
 * and sent to port 2, replies go back): the fragments, sent in reverse
 * order, all or a few per poll, come out byte for byte as they came, in
 * offset order, once the last arrives; the connection exists; the
 * fragmented reply passes back; unsolicited fragments from outside do
 * not.  With reassembly disabled, fragments are +inv and dropped.  _i:
 * bit 0 IPv6, bit 1 the caches on. */
static const char *const firewall6_flows[] = {
    "table=0,priority=10,ipv6,actions=ct(table=1,zone=1)",
    "table=0,priority=0,actions=drop",
    "table=1,priority=20,ct_state=+trk+new,ipv6,in_port=1,"
    "actions=ct(commit,zone=1),output:2",
    "table=1,priority=20,ct_state=+trk+est-rpl,ipv6,in_port=1,"
    "actions=output:2",
    "table=1,priority=20,ct_state=+trk+est+rpl,ipv6,in_port=2,"
    "actions=output:1",
    "table=1,priority=0,actions=drop",
    NULL
};

START_TEST(ct_fragments_through_firewall)
{
    bool v6 = _i & 1;
    struct rig rig;
    static uint8_t frags[8][1600];
    size_t lens[8], order[8];
    static struct frag_out out[3];

    ct_rig_create(&rig, _i & 2, v6 ? firewall6_flows : firewall_flows);
    struct fdp__ct *ct = fdp__dp_ct(rig.dp);
    struct fdp__ipf *ipf = fdp__dp_ipf(rig.dp);

    for (size_t per_poll = 1; per_poll <= 8; per_poll *= 8) {
        uint16_t sport = (uint16_t) (1000 + per_poll);
        size_t n = make_frags(v6, 1, 2, sport, 53, 4000, 1480, frags, lens,
                              8);
        ck_assert_uint_eq(n, 3);
        for (size_t k = 0; k < n; k++) {
            order[k] = n - 1 - k;
        }
        frag_send(&rig, 1, frags, lens, order, n, per_poll, out);
        ck_assert_uint_eq(out[1].n, 0);
        ck_assert_uint_eq(out[2].n, n);
        for (size_t k = 0; k < n; k++) {
            ck_assert_uint_eq(out[2].lens[k], lens[k]);
            ck_assert_mem_eq(out[2].pkts[k], frags[k], lens[k]);
        }
        ck_assert_uint_eq(fdp__ct_zone_count(ct, 1), per_poll == 1 ? 1 : 2);

        /* The reply, fragmented, is +est+rpl and goes back to port 1. */
        n = make_frags(v6, 2, 1, 53, sport, 3000, 1480, frags, lens, 8);
        for (size_t k = 0; k < n; k++) {
            order[k] = k;
        }
        frag_send(&rig, 2, frags, lens, order, n, per_poll, out);
        ck_assert_uint_eq(out[2].n, 0);
        ck_assert_uint_eq(out[1].n, n);
        for (size_t k = 0; k < n; k++) {
            ck_assert_mem_eq(out[1].pkts[k], frags[k], lens[k]);
        }
    }

    /* Unsolicited from outside: reassembled, +new, not from port 1. */
    size_t n = make_frags(v6, 3, 1, 99, 53, 3000, 1480, frags, lens, 8);
    for (size_t k = 0; k < n; k++) {
        order[k] = k;
    }
    frag_send(&rig, 2, frags, lens, order, n, 8, out);
    ck_assert_uint_eq(out[1].n + out[2].n, 0);
    ck_assert_uint_eq(fdp__ct_count(ct), 2);

    struct fdp__ipf_status st;
    fdp__ipf_get_status(ipf, &st);
    ck_assert_uint_eq(st.nfrag, 0);
    const struct fdp__ipf_proto_status *ps = v6 ? &st.v6 : &st.v4;
    /* Each datagram's fragments are gathered twice on the client's side
     * (ct in table 0, then the commit in table 1), once on the other. */
    ck_assert_uint_eq(ps->n_accepted, 2 * (3 + 3) + 2 * 3 + 3);
    ck_assert_uint_eq(ps->n_completed, ps->n_accepted);

    /* Reassembly off: each fragment alone is +inv, and dropped. */
    fdp__ipf_set_enabled(ipf, v6, false);
    n = make_frags(v6, 1, 2, 7777, 53, 3000, 1480, frags, lens, 8);
    frag_send(&rig, 1, frags, lens, order, n, 8, out);
    ck_assert_uint_eq(out[1].n + out[2].n, 0);
    ck_assert_uint_eq(fdp__ct_count(ct), 2);

    /* An incomplete packet's fragments are held, then expire. */
    fdp__ipf_set_enabled(ipf, v6, true);
    frag_send(&rig, 1, frags, lens, order, 2, 8, out);
    ck_assert_uint_eq(out[2].n, 0);
    fdp__ipf_get_status(ipf, &st);
    ck_assert_uint_eq(st.nfrag, 2);
    ck_assert_uint_eq(fdp__ipf_expire(ipf, fdp__ct_clock_ms() + 15001, 8),
                      1);
    ct_rig_destroy_checking_frames(&rig);
}
END_TEST

/* ct(table=N) keeps the registers and metadata of the pass that ran it
 * (frozen in the record), takes its zone from a register, a mark set by
 * exec() is the continuation's ct_mark at once, the original tuple is
 * the continuation's ct_nw_src..., and a packet an action rewrote before
 * the ct continues as rewritten. */
static const char *const frozen_flows[] = {
    "table=0,priority=10,udp,actions=load:0x2a->NXM_NX_REG3[],"
    "set_field:0x77->metadata,load:7->NXM_NX_REG0[0..15],"
    "ct(commit,zone=NXM_NX_REG0[0..15],table=1,"
    "exec(set_field:0x5->ct_mark))",
    "table=1,priority=30,reg3=0x2a,metadata=0x77,reg0=7,ct_zone=7,"
    "ct_mark=0x5,ct_state=+trk+new,ct_nw_proto=17,ct_nw_src=10.0.0.1,"
    "ct_nw_dst=10.0.0.2,ct_tp_dst=53,udp,actions=output:2",
    /* A rewrite before the ct: the continuation sees the new bytes. */
    "table=0,priority=10,tcp,actions=mod_nw_dst:10.0.0.9,ct(table=1)",
    "table=1,priority=30,ct_state=+trk+new,ct_nw_dst=10.0.0.9,"
    "nw_dst=10.0.0.9,tcp,actions=output:2",
    "table=1,priority=0,actions=output:3",
    NULL
};

START_TEST(ct_recirc_keeps_frozen_state)
{
    struct rig rig;
    uint8_t pkt[128];

    ct_rig_create(&rig, _i, frozen_flows);
    for (int i = 0; i < 5; i++) {
        size_t len = make_l4(pkt, 17, 1, 2, (uint16_t) (1000 + i), 53, 0, 0,
                             0);
        ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 2);
        len = make_l4(pkt, 17, 1, 2, (uint16_t) (1000 + i), 53, 0, 0, 0);
        ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 2);
    }
    size_t len = make_l4(pkt, 6, 1, 2, 1000, 80, TCP_SYN, 1, 0);
    ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 2);
    struct fdp__ct *ct = fdp__dp_ct(rig.dp);
    ck_assert_uint_eq(fdp__ct_zone_count(ct, 7), 5);
    ck_assert_uint_eq(fdp__ct_zone_count(ct, 0), 0);
    ct_rig_destroy_checking_frames(&rig);
}
END_TEST

/* ct(table=N) keeps the packet's tunnel fields (Open vSwitch keeps the
 * tunnel metadata across recirculation), and the continuation cache tells
 * apart continuations whose keys differ only there (datapath/
 * tun-intern.c): two packets that an action rewrites to the same headers
 * before the ct, with tun_id 5 and 6, go to ports 2 and 3, each time,
 * with the cache on and off. */
static const char *const tunnel_recirc_flows[] = {
    "table=0,priority=10,udp,tp_src=1000,actions=set_field:5->tun_id,"
    "mod_tp_src:2000,ct(table=1)",
    "table=0,priority=10,udp,tp_src=1001,actions=set_field:6->tun_id,"
    "mod_tp_src:2000,ct(table=1)",
    "table=1,priority=30,tun_id=5,ct_state=+trk,udp,tp_src=2000,"
    "actions=output:2",
    "table=1,priority=30,tun_id=6,ct_state=+trk,udp,tp_src=2000,"
    "actions=output:3",
    "table=1,priority=0,actions=output:1",
    NULL
};

START_TEST(ct_recirc_keeps_tunnel_fields)
{
    struct rig rig;
    uint8_t pkt[128];

    ct_rig_create(&rig, _i, tunnel_recirc_flows);
    for (int i = 0; i < 8; i++) {
        uint16_t sport = (uint16_t) (1000 + i % 2);
        size_t len = make_l4(pkt, 17, 1, 2, sport, 53, 0, 0, 0);
        ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 2 + i % 2);
    }
    ct_rig_destroy_checking_frames(&rig);
}
END_TEST

/* The fork: ct(table=1) followed by output:3 in the same flow.  The
 * packet goes on to port 3, a copy continues in table 1 to port 2: both
 * arrive, identical. */
static const char *const fork_flows[] = {
    "table=0,priority=10,udp,actions=ct(table=1),output:3",
    "table=1,priority=10,ct_state=+trk+new,udp,actions=output:2",
    NULL
};

START_TEST(ct_fork_sends_both_copies)
{
    struct rig rig;
    uint8_t pkt[128];
    struct ct_out out[4];
    struct fdp_dp_stats st;

    ct_rig_create(&rig, _i, fork_flows);
    memset(out, 0, sizeof out);
    for (int i = 0; i < 10; i++) {
        size_t len = make_l4(pkt, 17, 1, 2, (uint16_t) (1000 + i), 53, 0, 0,
                             0);
        ct_send(&rig, 1, pkt, len, out);
        ck_assert_uint_eq(out[2].n, (uint64_t) i + 1);
        ck_assert_uint_eq(out[3].n, (uint64_t) i + 1);
        ck_assert_uint_eq(out[2].last_len, len);
        ck_assert(!memcmp(out[2].last, pkt, len));
        ck_assert(!memcmp(out[3].last, pkt, len));
    }
    ck_assert_uint_eq(out[2].hash, out[3].hash);
    fdp_dp_get_stats(rig.dp, &st);
    ck_assert_uint_eq(st.n_recirculations, 10);
    ck_assert_uint_eq(st.n_ct_packets, 10);
    /* Nothing was committed, and no frame was lost. */
    ck_assert_uint_eq(fdp__ct_count(fdp__dp_ct(rig.dp)), 0);
    ct_rig_destroy_checking_frames(&rig);
}
END_TEST

/* A flow that sends every packet back to its own table through ct: Open
 * vSwitch's depth limit (6 recirculations) ends the loop, and each drop
 * is counted; a fork at the limit still sends the original on. */
static const char *const loop_flows[] = {
    "table=0,priority=10,udp,actions=ct(table=0)",
    "table=0,priority=10,tcp,actions=ct(table=0),output:2",
    NULL
};

START_TEST(ct_recirc_depth_limit)
{
    struct rig rig;
    uint8_t pkt[128];
    struct fdp_dp_stats st;
    struct ct_out out[4];

    ct_rig_create(&rig, _i, loop_flows);
    size_t len = make_l4(pkt, 17, 1, 2, 1000, 53, 0, 0, 0);
    ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 0);
    fdp_dp_get_stats(rig.dp, &st);
    ck_assert_uint_eq(st.n_ct_packets, 7);
    ck_assert_uint_eq(st.n_recirculations, 6);
    ck_assert_uint_eq(st.n_recirc_dropped, 1);

    /* The fork: depth 0 to 6 each output the packet; the copies stop at
     * depth 6. */
    memset(out, 0, sizeof out);
    len = make_l4(pkt, 6, 1, 2, 1000, 80, TCP_SYN, 1, 0);
    ct_send(&rig, 1, pkt, len, out);
    ck_assert_uint_eq(out[2].n, 7);
    fdp_dp_get_stats(rig.dp, &st);
    ck_assert_uint_eq(st.n_recirc_dropped, 2);
    ck_assert_uint_eq(st.n_recirculations, 12);
    ct_rig_destroy_checking_frames(&rig);
}
END_TEST

/* The continuation cache changes no result: random UDP exchanges over a
 * few connections, zones and marks through two datapaths, one with the
 * caches (every result inserted) and one without, give the same packets
 * on the same ports in the same order, and the cached one serves most
 * continuations from its cache. */
static const char *const random_flows[] = {
    "table=0,priority=10,udp,in_port=1,actions=ct(table=1,zone=3)",
    "table=0,priority=10,udp,in_port=2,actions=ct(table=1,zone=3)",
    "table=1,priority=20,ct_state=+trk+new,udp,in_port=1,tp_dst=53,"
    "actions=ct(commit,zone=3,exec(set_field:0x1->ct_mark)),output:2",
    "table=1,priority=20,ct_state=+trk+new,udp,in_port=1,tp_dst=54,"
    "actions=ct(commit,zone=3,exec(set_field:0x2->ct_mark)),output:2",
    "table=1,priority=20,ct_state=+trk+est,ct_mark=0x1,udp,"
    "actions=ct(table=2,zone=4)",
    "table=1,priority=20,ct_state=+trk+est,ct_mark=0x2,udp,in_port=1,"
    "actions=output:2",
    "table=1,priority=20,ct_state=+trk+est,ct_mark=0x2,udp,in_port=2,"
    "actions=output:1",
    "table=1,priority=0,actions=output:3",
    "table=2,priority=10,ct_state=+trk+new,udp,"
    "actions=ct(commit,zone=4),resubmit(,3)",
    "table=2,priority=10,ct_state=+trk+est,udp,actions=resubmit(,3)",
    "table=3,priority=10,in_port=1,actions=output:2",
    "table=3,priority=10,in_port=2,actions=output:1",
    NULL
};

START_TEST(ct_cache_is_transparent)
{
    struct rig rigs[2];
    struct ct_out out[2][4];
    struct unit_rng r = { .state = unit_seed() };
    uint8_t pkt[128];

    memset(out, 0, sizeof out);
    for (int k = 0; k < 2; k++) {
        ct_rig_create(&rigs[k], k == 0, random_flows);
    }
    for (int i = 0; i < 2000; i++) {
        uint8_t client = (uint8_t) (1 + unit_rng_below(&r, 4));
        uint16_t sport = (uint16_t) (1000 + unit_rng_below(&r, 8));
        uint16_t dport = (uint16_t) (53 + unit_rng_below(&r, 3));
        bool reply = unit_rng_below(&r, 2);
        size_t len = reply
                     ? make_l4(pkt, 17, 100, client, dport, sport, 0, 0, 0)
                     : make_l4(pkt, 17, client, 100, sport, dport, 0, 0, 0);
        for (int k = 0; k < 2; k++) {
            ck_assert(test_peer_send(&rigs[k].ports[reply ? 2 : 1], pkt,
                                     len));
        }
        /* Bursts of random length, so that continuations share
         * batches. */
        if (unit_rng_below(&r, 8) == 0 || i == 1999) {
            for (int k = 0; k < 2; k++) {
                for (int j = 0; j < 3; j++) {
                    fdp_dp_pmd_poll(rigs[k].pmd, NULL);
                    for (uint32_t p = 1; p <= 3; p++) {
                        test_peer_drain(&rigs[k].ports[p], ct_out_cb,
                                        &out[k][p]);
                    }
                }
            }
        }
    }
    for (uint32_t p = 1; p <= 3; p++) {
        ck_assert_uint_eq(out[0][p].n, out[1][p].n);
        ck_assert_uint_eq(out[0][p].hash, out[1][p].hash);
    }
    ck_assert_uint_gt(out[0][1].n, 0);
    ck_assert_uint_gt(out[0][2].n, 0);
    struct fdp_dp_stats st[2];
    for (int k = 0; k < 2; k++) {
        fdp_dp_get_stats(rigs[k].dp, &st[k]);
        ck_assert_uint_eq(fdp__ct_count(fdp__dp_ct(rigs[k].dp)),
                          fdp__ct_count(fdp__dp_ct(rigs[0].dp)));
    }
    ck_assert_uint_eq(st[0].n_recirculations, st[1].n_recirculations);
    ck_assert_uint_eq(st[0].n_ct_packets, st[1].n_ct_packets);
    ck_assert_uint_eq(st[1].n_recirc_cache_hits, 0);
    ck_assert_uint_gt(st[0].n_recirc_cache_hits,
                      st[0].n_recirculations / 2);
    for (int k = 0; k < 2; k++) {
        ct_rig_destroy_checking_frames(&rigs[k]);
    }
}
END_TEST

/* The background sweep expires connections with nobody polling: short
 * timeouts, connections committed, then the table empties on its own. */
START_TEST(ct_expiry_in_background)
{
    struct rig rig;
    uint8_t pkt[128];

    ct_rig_create(&rig, true, firewall_flows);
    struct fdp__ct *ct = fdp__dp_ct(rig.dp);
    ck_assert_int_eq(fdp__ct_set_timeout(ct, FDP__CT_TM_OTHER_FIRST, 1), 0);
    ck_assert_int_eq(fdp__ct_set_timeout(ct, FDP__CT_TM_TCP_FIRST_PACKET, 1),
                     0);
    for (int i = 0; i < 50; i++) {
        size_t len = make_l4(pkt, 17, 1, 2, (uint16_t) (1000 + i), 53, 0, 0,
                             0);
        ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 2);
    }
    size_t len = make_l4(pkt, 6, 1, 2, 999, 80, TCP_SYN, 1, 0);
    ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 2);
    ck_assert_uint_eq(fdp__ct_count(ct), 51);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* 1 s of timeout, then at most the sweeper's pause (1 s) and a
     * pass. */
    while (fdp__ct_count(ct)) {
        ck_assert_msg(seconds_since(&start) < 10,
                      "%u connections left after 10 s", fdp__ct_count(ct));
        usleep(20000);
    }
    ck_assert(seconds_since(&start) >= 0.5);
    /* A new packet of an expired connection is new again. */
    len = make_l4(pkt, 17, 1, 2, 1000, 53, 0, 0, 0);
    ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 2);
    ck_assert_uint_eq(fdp__ct_count(ct), 1);
    rig_destroy(&rig);
}
END_TEST

/* A bare table's flows keep the flow form of ct, resolved per packet:
 * commit in the zone a register... of a bare table is always zero, so a
 * constant zone here; ct(table=N) has nowhere to go and runs as ct
 * without table, counted. */
START_TEST(ct_in_bare_table)
{
    struct rig rig;
    uint8_t pkt[128];
    struct fdp_dp_stats st;

    rig_create(&rig, 1, 0);
    rig_add_flow(&rig, "priority=10,udp,tp_dst=53,"
                 "actions=ct(commit,zone=9),output:2");
    rig_add_flow(&rig, "priority=10,udp,tp_dst=54,"
                 "actions=ct(commit,zone=10,table=1),output:3");
    for (int i = 0; i < 4; i++) {
        size_t len = make_l4(pkt, 17, 1, 2, (uint16_t) (1000 + i), 53, 0, 0,
                             0);
        ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 2);
        len = make_l4(pkt, 17, 1, 2, (uint16_t) (1000 + i), 54, 0, 0, 0);
        ck_assert_int_eq(ct_send_one(&rig, 1, pkt, len), 3);
    }
    struct fdp__ct *ct = fdp__dp_ct(rig.dp);
    ck_assert_uint_eq(fdp__ct_zone_count(ct, 9), 4);
    ck_assert_uint_eq(fdp__ct_zone_count(ct, 10), 4);
    fdp_dp_get_stats(rig.dp, &st);
    ck_assert_uint_eq(st.n_ct_packets, 8);
    ck_assert_uint_eq(st.n_ct_table_ignored, 4);
    ck_assert_uint_eq(st.n_recirculations, 0);
    rig_destroy(&rig);
}
END_TEST

/* Concurrency: two pmds each run their own client's UDP connections
 * through the firewall (commit, then replies and data), while this
 * thread flushes the tracker and changes the timeouts and the
 * datapath's sweeper expires connections: nothing races (the TSan job
 * runs this) and every packet is accounted for. */
struct ct_lane {
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings in, out;
    uint8_t client;
    uint64_t n_sent;
    uint64_t n_got;
    bool *stop;
};

static void *
ct_lane_main(void *l_)
{
    struct ct_lane *l = l_;
    uint8_t pkt[128];
    uint32_t i = 0;

    while (!__atomic_load_n(l->stop, __ATOMIC_ACQUIRE)) {
        for (int k = 0; k < 16 && l->n_sent < 20000; k++, i++) {
            size_t len = make_l4(pkt, 17, l->client, 2,
                                 (uint16_t) (1000 + i % 64), 53, 0, 0, 0);
            if (!test_peer_send(&l->in, pkt, len)) {
                break;
            }
            __atomic_store_n(&l->n_sent, l->n_sent + 1, __ATOMIC_RELEASE);
        }
        if (!fdp_dp_pmd_poll(l->pmd, NULL)) {
            sched_yield();
        }
        __atomic_store_n(&l->n_got,
                         l->n_got + test_peer_drain(&l->out, NULL, NULL),
                         __ATOMIC_RELEASE);
    }
    return NULL;
}

START_TEST(ct_two_pmds_with_flush_and_sweep)
{
    struct fdp_pipeline *p;
    struct fdp_dp *dp;
    struct fdp_dp_options o;
    struct ct_lane lanes[2];
    pthread_t threads[2];
    bool stop = false;
    static const char *const flows[] = {
        "table=0,priority=10,udp,actions=ct(table=1,zone=1)",
        "table=1,priority=10,ct_state=+trk+new,udp,in_port=1,"
        "actions=ct(commit,zone=1),output:3",
        "table=1,priority=10,ct_state=+trk+new,udp,in_port=2,"
        "actions=ct(commit,zone=1),output:4",
        "table=1,priority=10,ct_state=+trk+est,udp,in_port=1,"
        "actions=output:3",
        "table=1,priority=10,ct_state=+trk+est,udp,in_port=2,"
        "actions=output:4",
        NULL
    };

    ck_assert_int_eq(fdp_pipeline_create(&p), 0);
    for (const char *const *f = flows; *f; f++) {
        struct fdp_flow_spec spec;
        ck_assert_int_eq(fdp_flow_parse(*f, 0, &spec, NULL), 0);
        ck_assert_int_eq(fdp_pipeline_insert(p, &spec, 0), 0);
        fdp_flow_spec_destroy(&spec);
    }
    fdp_dp_options_init(&o);
    o.n_pmds = 2;
    o.emc_insert_inv_prob = 1;
    ck_assert_int_eq(fdp_dp_create_pipeline(p, &o, &dp), 0);
    /* Ranks 0-3: ports 1 and 3 to pmd 0, ports 2 and 4 to pmd 1: each
     * lane's thread plays the peer of its own ports only. */
    for (uint32_t port = 1; port <= 4; port++) {
        ck_assert_int_eq(fdp_dp_port_add(dp, port, "ring:size=1024", NULL),
                         0);
    }
    struct fdp__ct *ct = fdp__dp_ct(dp);
    ck_assert_int_eq(fdp__ct_set_timeout(ct, FDP__CT_TM_OTHER_FIRST, 1), 0);
    for (unsigned int i = 0; i < 2; i++) {
        lanes[i] = (struct ct_lane) { .client = (uint8_t) (1 + i),
                                      .stop = &stop };
        ck_assert_int_eq(fdp_dp_pmd_create(dp, i, &lanes[i].pmd), 0);
        ck_assert_int_eq(fdp_dp_port_rings(dp, 1 + i, &lanes[i].in), 0);
        ck_assert_int_eq(fdp_dp_port_rings(dp, 3 + i, &lanes[i].out), 0);
    }
    for (unsigned int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_create(&threads[i], NULL, ct_lane_main,
                                        &lanes[i]), 0);
    }
    /* Flushes and timeout changes while both lanes run. */
    for (int round = 0;
         __atomic_load_n(&lanes[0].n_sent, __ATOMIC_ACQUIRE) < 20000
         || __atomic_load_n(&lanes[1].n_sent, __ATOMIC_ACQUIRE) < 20000;
         round++) {
        uint16_t zone = 1;
        fdp__ct_flush(ct, round % 2 ? &zone : NULL, NULL);
        ck_assert_int_eq(fdp__ct_set_timeout(ct, FDP__CT_TM_OTHER_MULTIPLE,
                                             1 + round % 3), 0);
        usleep(1000);
    }
    struct fdp_port_stats ps[5];
    WAIT_UNTIL((fdp_dp_port_get_stats(dp, 3, &ps[3], NULL) == 0
                && fdp_dp_port_get_stats(dp, 4, &ps[4], NULL) == 0
                && __atomic_load_n(&lanes[0].n_got, __ATOMIC_ACQUIRE)
                   + ps[3].tx_dropped >= 20000
                && __atomic_load_n(&lanes[1].n_got, __ATOMIC_ACQUIRE)
                   + ps[4].tx_dropped >= 20000),
               "every packet");
    __atomic_store_n(&stop, true, __ATOMIC_RELEASE);
    for (unsigned int i = 0; i < 2; i++) {
        pthread_join(threads[i], NULL);
    }
    struct fdp_dp_stats st;
    fdp_dp_get_stats(dp, &st);
    ck_assert_uint_eq(st.n_packets, 40000);
    ck_assert_uint_eq(st.n_recirculations, 40000);
    ck_assert_uint_eq(st.n_recirc_missed, 0);
    for (unsigned int i = 0; i < 2; i++) {
        fdp_dp_pmd_destroy(lanes[i].pmd);
    }
    fdp_dp_destroy(dp);
    fdp_pipeline_destroy(p);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("dp");
    TCase *tc = unit_tcase(s, "dp");

    tcase_add_test(tc, traffic_emc_off);
    tcase_add_test(tc, traffic_emc_always);
    tcase_add_test(tc, traffic_emc_default);
    tcase_add_loop_test(tc, traffic_pipeline, 0, 6);
    tcase_add_loop_test(tc, one_flow_and_built_outcomes_share_batches, 0, 3);
    tcase_add_test(tc, emc_follows_table_changes);
    tcase_add_test(tc, smc_follows_table);
    tcase_add_test(tc, smc_needs_disjoint_table);
    tcase_add_test(tc, cache_auto_mode_is_transparent);
    tcase_add_test(tc, upcalls);
    tcase_add_test(tc, controller_arguments_reach_the_upcall);
    tcase_add_test(tc, frames_conserved);
    tcase_add_test(tc, bad_ports);
    TCase *ct = unit_tcase(s, "ct");
    tcase_add_loop_test(ct, ct_stateful_firewall, 0, 2);
    tcase_add_loop_test(ct, ct_fragments_through_firewall, 0, 4);
    tcase_add_loop_test(ct, ct_recirc_keeps_frozen_state, 0, 2);
    tcase_add_loop_test(ct, ct_recirc_keeps_tunnel_fields, 0, 2);
    tcase_add_loop_test(ct, ct_fork_sends_both_copies, 0, 2);
    tcase_add_loop_test(ct, ct_recirc_depth_limit, 0, 2);
    tcase_add_test(ct, ct_cache_is_transparent);
    tcase_add_test(ct, ct_expiry_in_background);
    tcase_add_test(ct, ct_in_bare_table);
    TCase *cc = unit_tcase(s, "concurrency");
    tcase_add_test(cc, concurrent_control);
    tcase_add_test(cc, concurrent_pipeline_control);
    tcase_add_test(cc, two_pmds_share_a_flow);
    tcase_add_test(cc, old_version_with_new_mode_loses_no_packet);
    tcase_add_test(cc, ct_two_pmds_with_flush_and_sweep);
    return unit_run(s);
}
