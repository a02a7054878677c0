/*
 * Unit tests for meters in the datapath (datapath/meter.c through
 * datapath/dp.c): packets through a pipeline whose flows use meters,
 * sent on ring ports whose peer the test plays, under a meter clock the
 * test moves, so that a stream's rate is exact and the results are not
 * timing-dependent.
 *
 * - Rate accuracy: streams at known rates (pktps and kbps, from twice to
 *   ten times the band) pass the band's share within 2 %.
 * - A meter that is the flow's last action (nothing after it), a meter in
 *   a table reached by resubmit, and two meters in a row.
 * - dscp_remark raises the drop precedence of the packets above the rate
 *   (IPv4 with a correct header checksum, and IPv6) and lets them go.
 * - A meter removed under a flow passes its packets (as Open vSwitch);
 *   modifying one refills it.
 * - Frames are conserved: every dropped packet's frame comes back.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "datapath/execute.h"
#include "datapath/meter.h"
#include "unit.h"

static uint64_t fake_now;

static uint64_t
fake_clock(void *aux)
{
    (void) aux;
    return fake_now;
}

struct rig {
    struct fdp_pipeline *pipeline;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings ports[4];     /* Ports 1..3 at [1..3]. */
};

static void
add(struct rig *rig, const char *text)
{
    struct fdp_flow_spec spec;
    char *error = NULL;

    ck_assert_msg(!fdp_flow_parse(text, 0, &spec, &error), "%s: %s", text,
                  error);
    ck_assert_int_eq(fdp_pipeline_insert(rig->pipeline, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);
}

static void
meter(struct rig *rig, const char *text, bool create)
{
    struct fdp_meter_config c;
    char *error = NULL;

    ck_assert_msg(!fdp_meter_parse(text, FDP_METER_CMD_ADD, &c, &error),
                  "%s: %s", text, error);
    ck_assert_int_eq(fdp_dp_meter_set(rig->dp, &c, create), 0);
}

/* A pipeline with 'flows' (ended by NULL), the datapath with its caches
 * on, ring ports 1 to 3, pmd 0, and the meter clock at 'fake_now'. */
static void
rig_create(struct rig *rig, const char *const *flows)
{
    struct fdp_dp_options o;

    memset(rig, 0, sizeof *rig);
    fdp_dp_options_init(&o);
    o.emc_mode = FDP_DP_CACHE_ON;
    o.emc_insert_inv_prob = 1;
    ck_assert_int_eq(fdp_pipeline_create(&rig->pipeline), 0);
    for (const char *const *f = flows; *f; f++) {
        add(rig, *f);
    }
    ck_assert_int_eq(fdp_dp_create_pipeline(rig->pipeline, &o, &rig->dp), 0);
    fake_now = 1000000000;
    fdp__meters_set_clock(fdp__dp_meters(rig->dp), fake_clock, NULL);
    for (uint32_t p = 1; p <= 3; p++) {
        ck_assert_int_eq(fdp_dp_port_add(rig->dp, p, "ring:size=256", NULL),
                         0);
        ck_assert_int_eq(fdp_dp_port_rings(rig->dp, p, &rig->ports[p]), 0);
    }
    ck_assert_int_eq(fdp_dp_pmd_create(rig->dp, 0, &rig->pmd), 0);
}

/* Destroys 'rig' after checking that every frame came back. */
static void
rig_destroy(struct rig *rig)
{
    struct fdp_dp_stats st;

    fdp_dp_pmd_destroy(rig->pmd);
    for (uint32_t p = 1; p <= 3; p++) {
        ck_assert_int_eq(fdp_dp_port_del(rig->dp, p), 0);
    }
    fdp_dp_get_stats(rig->dp, &st);
    ck_assert_uint_eq(st.n_frames_free, 16384);     /* The default. */
    fdp_dp_destroy(rig->dp);
    fdp_pipeline_destroy(rig->pipeline);
}

/* An IPv4 UDP packet of 'size' bytes (at least 42) with DSCP 'dscp' and a
 * correct header checksum; or IPv6 if 'v6'. */
static size_t
make_packet(uint8_t *p, size_t size, uint8_t dscp, bool v6)
{
    memset(p, 0, size);
    p[5] = 2;
    p[11] = 1;
    if (!v6) {
        p[12] = 0x08;
        p[14] = 0x45;
        p[15] = (uint8_t) (dscp << 2);
        p[16] = (uint8_t) ((size - 14) >> 8);
        p[17] = (uint8_t) (size - 14);
        p[22] = 64;
        p[23] = 17;
        p[26] = 10, p[29] = 1, p[30] = 10, p[33] = 2;
        uint16_t sum = fdp__csum(0, p + 14, 20);
        p[24] = (uint8_t) (sum >> 8);
        p[25] = (uint8_t) sum;
        p[35] = 9, p[37] = 53;
        p[38] = (uint8_t) ((size - 34) >> 8);
        p[39] = (uint8_t) (size - 34);
    } else {
        p[12] = 0x86, p[13] = 0xdd;
        p[14] = (uint8_t) (0x60 | dscp >> 2);
        p[15] = (uint8_t) ((dscp & 3) << 6);
        p[18] = (uint8_t) ((size - 54) >> 8);
        p[19] = (uint8_t) (size - 54);
        p[20] = 17;
        p[21] = 64;
        p[22] = 0x20, p[37] = 1, p[38] = 0x20, p[53] = 2;
        p[55] = 9, p[57] = 53;
        p[58] = (uint8_t) ((size - 54) >> 8);
        p[59] = (uint8_t) (size - 54);
    }
    return size;
}

/* What came out of a port. */
struct out {
    uint64_t n, bytes;
    uint64_t dscp[64];          /* Packets per DSCP. */
    bool bad_csum;
};

static void
out_cb(void *aux, const uint8_t *p, uint32_t len)
{
    struct out *o = aux;

    o->n++;
    o->bytes += len;
    if (len >= 34 && p[12] == 0x08 && p[13] == 0) {
        o->dscp[p[15] >> 2]++;
        o->bad_csum |= fdp__csum(0, p + 14, 20) != 0;
    } else if (len >= 54 && p[12] == 0x86) {
        o->dscp[((p[14] & 0xf) << 2) | p[15] >> 6]++;
    }
}

/* Sends 'n_batches' batches of 'batch' packets of 'size' bytes on port 1,
 * the meter clock moving 'gap_ns' before each, and counts what port 2
 * sends into 'o'. */
static void
stream(struct rig *rig, unsigned int n_batches, unsigned int batch,
       size_t size, uint64_t gap_ns, uint8_t dscp, bool v6, struct out *o)
{
    uint8_t pkt[1600];

    make_packet(pkt, size, dscp, v6);
    for (unsigned int k = 0; k < n_batches; k++) {
        fake_now += gap_ns;
        for (unsigned int i = 0; i < batch; i++) {
            ck_assert(test_peer_send(&rig->ports[1], pkt, size));
        }
        fdp_dp_pmd_poll(rig->pmd, NULL);
        test_peer_drain(&rig->ports[2], out_cb, o);
    }
    for (int i = 0; i < 2; i++) {
        fdp_dp_pmd_poll(rig->pmd, NULL);
        test_peer_drain(&rig->ports[2], out_cb, o);
    }
}

/* One stream: a meter of 'rate' (pktps, or kbps), burst 'burst', offered
 * 'load' times its rate in 'batch'-packet batches of 'size'-byte packets
 * for 'seconds' of meter time.  The share passed, after the burst, must
 * be 1/load within 2 % of the band's. */
static void
check_rate(bool pktps, uint32_t rate, uint32_t burst, double load,
           unsigned int batch, size_t size, double seconds)
{
    static const char *const flows[] = {
        "in_port=1,actions=meter:1,output:2", NULL,
    };
    struct rig rig;
    struct out o;
    char text[200];

    rig_create(&rig, flows);
    snprintf(text, sizeof text, "meter=1,%s,burst,bands=type=drop,rate=%u,"
             "burst_size=%u", pktps ? "pktps" : "kbps", rate, burst);
    meter(&rig, text, true);
    memset(&o, 0, sizeof o);
    /* Packets (or bits) per second offered, and the gap between batches
     * that makes it. */
    double units_per_pkt = pktps ? 1 : size * 8.0 / 1000;
    double pps = load * rate / units_per_pkt;
    uint64_t gap = (uint64_t) (batch * 1e9 / pps);
    unsigned int n_batches = (unsigned int) (seconds * 1e9 / gap);
    stream(&rig, n_batches, batch, size, gap, 0, false, &o);

    uint64_t offered = (uint64_t) n_batches * batch;
    double elapsed = (double) n_batches * gap / 1e9;
    /* The band lets through its rate over the stream, plus the burst it
     * held at the start (one batch's gap of refill before the first). */
    double expected = (rate * elapsed + burst) / units_per_pkt;
    double err = (o.n - expected) / (rate * elapsed / units_per_pkt);
    if (err > 0.02 || err < -0.02) {
        ck_abort_msg("%s rate %u, load %.1f, batch %u, %zu bytes: %llu of "
                     "%llu passed, expected %.0f (%.2f %% off)",
                     pktps ? "pktps" : "kbps", rate, load, batch, size,
                     (unsigned long long) o.n, (unsigned long long) offered,
                     expected, err * 100);
    }
    struct fdp_meter_stats st;
    ck_assert_int_eq(fdp_dp_meter_get(rig.dp, 1, NULL, &st), 0);
    ck_assert_uint_eq(st.packet_in_count, offered);
    ck_assert_uint_eq(st.byte_in_count, offered * size);
    ck_assert_uint_eq(st.bands[0].packet_count, offered - o.n);
    rig_destroy(&rig);
}

START_TEST(rate_accuracy)
{
    /* 10 Mpps offered to a 5 Mpps band, in full batches. */
    check_rate(true, 5000000, 100, 2.0, 32, 64, 0.05);
    /* A 1 Mpps band at ten times its rate, in small batches. */
    check_rate(true, 1000000, 10, 10.0, 3, 64, 0.05);
    /* 100 pps at 3 times, one packet at a time, for 100 s.  (With a
     * burst of 1 a bucket that refills 1 ns after the third packet's
     * arrival waits for the fourth: a burst of a few packets absorbs the
     * phase of arrivals against the rate.) */
    check_rate(true, 100, 3, 3.0, 1, 100, 100);
    /* 1 Gbps of 1500-byte packets offered to a 400 Mbps band, whose
     * burst holds more than refills between two batches (a smaller
     * bucket would overflow and waste the rest). */
    check_rate(false, 400000, 1000, 2.5, 32, 1500, 0.2);
    /* 10 Gbps of 64-byte packets offered to a 1 Gbps band. */
    check_rate(false, 1000000, 64, 10.0, 32, 64, 0.01);
}
END_TEST

START_TEST(meter_as_last_action_and_after_resubmit)
{
    static const char *const flows[] = {
        /* Port 1: only a meter, nothing sent. */
        "in_port=1,actions=meter:1",
        /* Port 3: meter 1, then table 1's meter 2, then out. */
        "in_port=3,actions=meter:1,resubmit(,1)",
        "table=1,actions=meter:2,output:2",
        NULL,
    };
    struct rig rig;
    struct out o;
    uint8_t pkt[64];

    rig_create(&rig, flows);
    meter(&rig, "meter=1,pktps,burst,bands=type=drop,rate=1,burst_size=20",
          true);
    meter(&rig, "meter=2,pktps,burst,bands=type=drop,rate=1,burst_size=5",
          true);
    memset(&o, 0, sizeof o);
    stream(&rig, 1, 8, 64, 0, 0, false, &o);
    ck_assert_uint_eq(o.n, 0);

    /* Meter 1 has 12 tokens left: 12 of 20 pass it, then 5 meter 2. */
    make_packet(pkt, 64, 0, false);
    for (int i = 0; i < 20; i++) {
        ck_assert(test_peer_send(&rig.ports[3], pkt, 64));
    }
    for (int i = 0; i < 2; i++) {
        fdp_dp_pmd_poll(rig.pmd, NULL);
        test_peer_drain(&rig.ports[2], out_cb, &o);
    }
    ck_assert_uint_eq(o.n, 5);
    struct fdp_meter_stats st;
    ck_assert_int_eq(fdp_dp_meter_get(rig.dp, 1, NULL, &st), 0);
    ck_assert_uint_eq(st.packet_in_count, 28);
    ck_assert_uint_eq(st.bands[0].packet_count, 8);
    ck_assert_int_eq(fdp_dp_meter_get(rig.dp, 2, NULL, &st), 0);
    ck_assert_uint_eq(st.packet_in_count, 12);
    ck_assert_uint_eq(st.bands[0].packet_count, 7);
    rig_destroy(&rig);
}
END_TEST

START_TEST(dscp_remark)
{
    static const char *const flows[] = {
        "in_port=1,actions=meter:1,output:2", NULL,
    };

    for (int v6 = 0; v6 < 2; v6++) {
        struct rig rig;
        struct out o;

        rig_create(&rig, flows);
        meter(&rig, "meter=1,pktps,burst,bands=type=dscp_remark,rate=1,"
              "burst_size=10,prec_level=1", true);
        memset(&o, 0, sizeof o);
        /* AF21 (18): ten keep it, the rest become AF22 (20). */
        stream(&rig, 1, 30, 100, 0, 18, v6, &o);
        ck_assert_uint_eq(o.n, 30);
        ck_assert_uint_eq(o.dscp[18], 10);
        ck_assert_uint_eq(o.dscp[20], 20);
        ck_assert(!o.bad_csum);
        rig_destroy(&rig);
    }
}
END_TEST

START_TEST(removed_meter_passes_and_modified_meter_refills)
{
    static const char *const flows[] = {
        "in_port=1,actions=meter:1,output:2", NULL,
    };
    struct rig rig;
    struct out o;

    rig_create(&rig, flows);
    meter(&rig, "meter=1,pktps,burst,bands=type=drop,rate=1,burst_size=4",
          true);
    memset(&o, 0, sizeof o);
    stream(&rig, 1, 10, 64, 0, 0, false, &o);
    ck_assert_uint_eq(o.n, 4);
    /* Modified: full again, counters at zero. */
    meter(&rig, "meter=1,pktps,burst,bands=type=drop,rate=1,burst_size=6",
          false);
    stream(&rig, 1, 10, 64, 0, 0, false, &o);
    ck_assert_uint_eq(o.n, 4 + 6);
    struct fdp_meter_stats st;
    ck_assert_int_eq(fdp_dp_meter_get(rig.dp, 1, NULL, &st), 0);
    ck_assert_uint_eq(st.packet_in_count, 10);
    /* Removed (the daemon removes its flows too; the datapath alone
     * passes what comes). */
    ck_assert_int_eq(fdp_dp_meter_del(rig.dp, 1), 0);
    ck_assert_int_eq(fdp_dp_meter_del(rig.dp, 1), ENOENT);
    stream(&rig, 1, 10, 64, 0, 0, false, &o);
    ck_assert_uint_eq(o.n, 4 + 6 + 10);
    rig_destroy(&rig);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("dp-meter");
    TCase *tc = unit_tcase(s, "dp-meter");

    tcase_add_test(tc, rate_accuracy);
    tcase_add_test(tc, meter_as_last_action_and_after_resubmit);
    tcase_add_test(tc, dscp_remark);
    tcase_add_test(tc, removed_meter_passes_and_modified_meter_refills);
    return unit_run(s);
}
