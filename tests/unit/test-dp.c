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
#include "datapath/dp-private.h"
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
    tcase_add_test(tc, frames_conserved);
    tcase_add_test(tc, bad_ports);
    TCase *cc = unit_tcase(s, "concurrency");
    tcase_add_test(cc, concurrent_control);
    tcase_add_test(cc, concurrent_pipeline_control);
    tcase_add_test(cc, two_pmds_share_a_flow);
    tcase_add_test(cc, old_version_with_new_mode_loses_no_packet);
    return unit_run(s);
}
