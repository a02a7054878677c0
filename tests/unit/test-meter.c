/*
 * Unit tests for datapath/meter.c and lib/meter-text.c: the token buckets
 * against a brute-force reference (an exact token bucket in 128-bit
 * integers, refilled at every packet, as Open vSwitch's datapath
 * describes its bands) on random meters and random streams under a clock
 * the test moves; the table of meters against a plain array of ids under
 * random churn; threads sharing one bucket neither lose nor double-spend
 * tokens; the text syntax round trip and its refusals.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/meter.h"
#include "lib/rule.h"
#include "unit.h"

/* ---- A clock the test moves ---- */

static uint64_t fake_now;

static uint64_t
fake_clock(void *aux)
{
    (void) aux;
    return __atomic_load_n(&fake_now, __ATOMIC_RELAXED);
}

static struct fdp__meters *
meters_with_fake_clock(uint64_t start)
{
    struct fdp__meters *ms = fdp__meters_create();

    ck_assert_ptr_nonnull(ms);
    fake_now = start;
    fdp__meters_set_clock(ms, fake_clock, NULL);
    return ms;
}

/* ---- The reference: one exact token bucket per band ----
 *
 * Tokens are counted in units (packets, or bits for kbps) times 10^9, so
 * that refilling for 'dt' nanoseconds at R units per second adds exactly
 * dt * R: no rounding anywhere.  The bucket starts full; a packet takes
 * its cost if the bucket holds it, and otherwise fires the band; a packet
 * that fires several bands fires the one with the highest rate (the first
 * of those if rates tie). */
struct ref_band {
    unsigned __int128 tokens, capacity;
    uint64_t units_per_sec;
    uint32_t rate;
};

struct ref_meter {
    bool pktps;
    unsigned int n_bands;
    uint64_t last_ns;
    struct ref_band bands[FDP_METER_MAX_BANDS];
};

static void
ref_init(struct ref_meter *r, const struct fdp_meter_config *c, uint64_t now)
{
    memset(r, 0, sizeof *r);
    r->pktps = (c->flags & FDP_METER_PKTPS) != 0;
    r->n_bands = c->n_bands;
    r->last_ns = now;
    for (unsigned int i = 0; i < c->n_bands; i++) {
        struct ref_band *b = &r->bands[i];
        uint64_t burst = c->bands[i].burst_size ? c->bands[i].burst_size
                                                : c->bands[i].rate;
        uint64_t per = r->pktps ? 1 : 1000;
        b->rate = c->bands[i].rate;
        b->units_per_sec = (uint64_t) c->bands[i].rate * per;
        b->capacity = (unsigned __int128) burst * per * 1000000000u;
        b->tokens = b->capacity;
    }
}

static int
ref_packet(struct ref_meter *r, uint32_t size, uint64_t now)
{
    uint64_t dt = now > r->last_ns ? now - r->last_ns : 0;
    uint64_t units = r->pktps ? 1 : (uint64_t) size * 8;
    unsigned __int128 cost = (unsigned __int128) units * 1000000000u;
    uint32_t best = 0;
    int fired = -1;

    r->last_ns = now > r->last_ns ? now : r->last_ns;
    for (unsigned int i = 0; i < r->n_bands; i++) {
        struct ref_band *b = &r->bands[i];
        b->tokens += (unsigned __int128) dt * b->units_per_sec;
        if (b->tokens > b->capacity) {
            b->tokens = b->capacity;
        }
        if (b->tokens >= cost) {
            b->tokens -= cost;
        } else if (b->rate > best) {
            best = b->rate;
            fired = (int) i;
        }
    }
    return fired;
}

/* A random meter: 1 to 3 bands, pktps or kbps, rates from 1 to 10^7, a
 * burst or none; with 'nice' rates that divide the ticks of a second, so
 * that the implementation's costs are exact and its every decision must
 * equal the reference's. */
static void
random_config(struct unit_rng *rng, bool nice, struct fdp_meter_config *c)
{
    static const uint32_t nice_rates[] = {
        1, 10, 100, 1000, 2000, 5000, 10000, 100000, 1000000, 10000000,
    };

    memset(c, 0, sizeof *c);
    c->id = 1 + unit_rng_below(rng, 1000);
    c->flags = unit_rng_below(rng, 2) ? FDP_METER_PKTPS : FDP_METER_KBPS;
    if (unit_rng_below(rng, 2)) {
        c->flags |= FDP_METER_BURST;
    }
    c->n_bands = (uint16_t) (1 + unit_rng_below(rng, 3));
    for (unsigned int i = 0; i < c->n_bands; i++) {
        struct fdp_meter_band *b = &c->bands[i];
        b->type = FDP_METER_BAND_DROP;
        /* A kbps cost is 16e6 / R ticks a bit: exact for every nice
         * rate but 10^7 (1.6 ticks). */
        unsigned int n_nice = c->flags & FDP_METER_PKTPS ? 10 : 9;
        b->rate = nice ? nice_rates[unit_rng_below(rng, n_nice)]
                       : 1 + unit_rng_below(rng, 10000000);
        if (c->flags & FDP_METER_BURST) {
            b->burst_size = 1 + unit_rng_below(rng, 2 * b->rate + 10);
        }
    }
}

/* Offers 'n_batches' batches of random sizes, at random gaps sized to
 * the meter's first band so that buckets go from full to empty and back,
 * to the meter and the reference.  Returns the packets on which they
 * disagree and sets '*max_drift' to the largest gap between their counts
 * of conforming packets along the way. */
static uint64_t
run_stream(struct unit_rng *rng, const struct fdp_meter_config *c,
           unsigned int n_batches, uint64_t *max_drift, uint64_t *n_pktsp,
           uint64_t *n_unitsp)
{
    struct fdp__meters *ms = meters_with_fake_clock(1000000000000ull);
    struct ref_meter ref;
    uint64_t mismatches = 0, n_pkts = 0;
    int64_t drift = 0;

    *n_unitsp = 0;

    ck_assert_int_eq(fdp__meters_set(ms, c, true), 0);
    ref_init(&ref, c, fake_now);
    struct fdp__meter *m = fdp__meters_find(ms, c->id);
    ck_assert_ptr_nonnull(m);
    /* The mean gap between batches: about the time the first band needs
     * to refill what a batch of 16 average packets costs, scaled by a
     * random load from 1/4 to 4 times that. */
    double per_pkt_s = (c->flags & FDP_METER_PKTPS)
                       ? 1.0 / c->bands[0].rate
                       : 600.0 * 8 / (c->bands[0].rate * 1000.0);
    *max_drift = 0;
    for (unsigned int k = 0; k < n_batches; k++) {
        uint32_t sizes[32];
        int8_t fired[32];
        uint32_t n = 1 + unit_rng_below(rng, 32);
        double load = 0.25 * (1 + unit_rng_below(rng, 16));
        uint64_t mean_gap = (uint64_t) (per_pkt_s * 16 * 1e9 / load);
        fake_now += unit_rng_below(rng, (uint32_t) (mean_gap < 4000000000u
                                                    ? 2 * mean_gap + 1
                                                    : 4000000000u));
        for (uint32_t i = 0; i < n; i++) {
            sizes[i] = 60 + unit_rng_below(rng, 1455);
        }
        fdp__meter_run(m, sizes, n, fake_now, FDP__STATS_SHARED, fired);
        for (uint32_t i = 0; i < n; i++) {
            int want = ref_packet(&ref, sizes[i], fake_now);
            mismatches += want != fired[i];
            /* In the bucket's units: packets, or bytes for kbps (a
             * large packet one side took may be several small ones the
             * other takes later). */
            int64_t w = c->flags & FDP_METER_PKTPS ? 1 : sizes[i];
            drift += w * ((fired[i] < 0) - (want < 0));
            uint64_t d = (uint64_t) (drift < 0 ? -drift : drift);
            *max_drift = d > *max_drift ? d : *max_drift;
        }
        n_pkts += n;
        for (uint32_t i = 0; i < n; i++) {
            *n_unitsp += c->flags & FDP_METER_PKTPS ? 1 : sizes[i];
        }
    }
    *n_pktsp = n_pkts;
    fdp__meters_destroy(ms);
    return mismatches;
}

START_TEST(exact_rates_match_reference)
{
    struct unit_rng rng;

    unit_rng_init(&rng, 1);
    for (int t = 0; t < 300; t++) {
        struct fdp_meter_config c;
        uint64_t drift, n, units;
        random_config(&rng, true, &c);
        uint64_t bad = run_stream(&rng, &c, 400, &drift, &n, &units);
        if (bad) {
            fprintf(stderr, "meter %s, %u bands, rate %u burst %u: %llu of "
                    "%llu packets differ\n",
                    c.flags & FDP_METER_PKTPS ? "pktps" : "kbps", c.n_bands,
                    c.bands[0].rate, c.bands[0].burst_size,
                    (unsigned long long) bad, (unsigned long long) n);
        }
        ck_assert_uint_eq(bad, 0);
    }
}
END_TEST

START_TEST(random_rates_track_reference)
{
    struct unit_rng rng;
    uint64_t total = 0, total_bad = 0;

    unit_rng_init(&rng, 2);
    for (int t = 0; t < 300; t++) {
        struct fdp_meter_config c;
        uint64_t drift, n, units;
        random_config(&rng, false, &c);
        total_bad += run_stream(&rng, &c, 400, &drift, &n, &units);
        total += n;
        /* A cost rounds down by under a tick (1/16 ns), and the smallest
         * cost here is 60 bytes at 10^7 kbps, 768 ticks: the meter may
         * run ahead of the exact bucket by at most one unit in 768 while
         * the bucket never fills (a full bucket resets both), and by a
         * packet at the edge of a batch (1514 bytes); so much for each
         * band.  (Units: packets, or bytes for kbps.) */
        uint64_t edge = c.flags & FDP_METER_PKTPS ? 2 : 2 * 1514;
        uint64_t bound = c.n_bands * (edge + units / 768);
        if (drift > bound) {
            fprintf(stderr, "meter %s, %u bands, rate %u: drift %llu in "
                    "%llu packets\n",
                    c.flags & FDP_METER_PKTPS ? "pktps" : "kbps", c.n_bands,
                    c.bands[0].rate, (unsigned long long) drift,
                    (unsigned long long) n);
        }
        ck_assert_uint_le(drift, bound);
    }
    /* Rare disagreements, each a packet at the very edge of a bucket. */
    ck_assert_uint_le(total_bad * 1000, total);
}
END_TEST

/* The worked example of datapath/meter.c's comment. */
START_TEST(worked_example)
{
    struct fdp__meters *ms = meters_with_fake_clock(5000000000ull);
    struct fdp_meter_config c = {
        .id = 7, .flags = FDP_METER_PKTPS | FDP_METER_BURST, .n_bands = 1,
        .bands = { { .type = FDP_METER_BAND_DROP, .rate = 1000,
                     .burst_size = 2 } },
    };
    uint32_t sizes[3] = { 64, 64, 64 };
    int8_t fired[3];

    ck_assert_int_eq(fdp__meters_set(ms, &c, true), 0);
    struct fdp__meter *m = fdp__meters_find(ms, 7);
    fdp__meter_run(m, sizes, 3, fake_now, 0, fired);
    ck_assert_int_eq(fired[0], -1);
    ck_assert_int_eq(fired[1], -1);
    ck_assert_int_eq(fired[2], 0);
    fdp__meter_run(m, sizes, 1, fake_now + 500000, 0, fired);
    ck_assert_int_eq(fired[0], 0);
    fdp__meter_run(m, sizes, 1, fake_now + 1000000, 1, fired);
    ck_assert_int_eq(fired[0], -1);

    struct fdp_meter_stats st;
    ck_assert_int_eq(fdp__meters_get(ms, 7, NULL, &st), 0);
    ck_assert_uint_eq(st.packet_in_count, 5);
    ck_assert_uint_eq(st.byte_in_count, 5 * 64);
    ck_assert_uint_eq(st.n_bands, 1);
    ck_assert_uint_eq(st.bands[0].packet_count, 2);
    ck_assert_uint_eq(st.bands[0].byte_count, 128);
    fdp__meters_destroy(ms);
}
END_TEST

/* The band fired is the highest-rate band exceeded, not the first. */
START_TEST(highest_rate_band_fires)
{
    struct fdp__meters *ms = meters_with_fake_clock(1000);
    struct fdp_meter_config c = {
        .id = 1, .flags = FDP_METER_PKTPS | FDP_METER_BURST, .n_bands = 2,
        .bands = {
            { .type = FDP_METER_BAND_DROP, .rate = 10, .burst_size = 1 },
            { .type = FDP_METER_BAND_DSCP_REMARK, .rate = 20,
              .burst_size = 2, .prec_level = 1 },
        },
    };
    uint32_t sizes[4] = { 100, 100, 100, 100 };
    int8_t fired[4];

    ck_assert_int_eq(fdp__meters_set(ms, &c, true), 0);
    fdp__meter_run(fdp__meters_find(ms, 1), sizes, 4, fake_now,
                   FDP__STATS_SHARED, fired);
    /* Packet 0 conforms to both; 1 exceeds band 0 only (fires it); 2
     * and 3 exceed both and fire band 1, of the higher rate. */
    ck_assert_int_eq(fired[0], -1);
    ck_assert_int_eq(fired[1], 0);
    ck_assert_int_eq(fired[2], 1);
    ck_assert_int_eq(fired[3], 1);
    fdp__meters_destroy(ms);
}
END_TEST

START_TEST(remark_dscp)
{
    /* AF11 (10) -> AF12 (12) -> AF13 (14), saturating. */
    ck_assert_uint_eq(fdp__meter_remark_dscp(10, 1), 12);
    ck_assert_uint_eq(fdp__meter_remark_dscp(12, 1), 14);
    ck_assert_uint_eq(fdp__meter_remark_dscp(14, 1), 14);
    ck_assert_uint_eq(fdp__meter_remark_dscp(34, 2), 38);
    ck_assert_uint_eq(fdp__meter_remark_dscp(0, 255), 6);
    for (unsigned int d = 0; d < 64; d++) {
        uint8_t r = fdp__meter_remark_dscp((uint8_t) d, 1);
        ck_assert_uint_eq(r & ~6u, d & ~6u);
        ck_assert_uint_ge((r >> 1) & 3, (d >> 1) & 3);
    }
}
END_TEST

/* Random adds, mods and deletes against a plain array of the ids that
 * exist, through enough churn to rebuild the index several times. */
START_TEST(table_matches_reference)
{
    struct fdp__meters *ms = meters_with_fake_clock(1);
    struct unit_rng rng;
    enum { N_IDS = 3000 };
    static bool exists[N_IDS];
    static uint32_t ids[N_IDS];
    size_t n = 0;

    unit_rng_init(&rng, 3);
    memset(exists, 0, sizeof exists);
    for (int op = 0; op < 60000; op++) {
        /* Ids spread over the whole range, so that they hash apart, and a
         * few small ones that collide in the low bits. */
        uint32_t idx = unit_rng_below(&rng, N_IDS);
        uint32_t id = idx < 100 ? idx + 1 : idx * 1431655u + 1;
        struct fdp_meter_config c = {
            .id = id, .flags = FDP_METER_KBPS, .n_bands = 1,
            .bands = { { .type = FDP_METER_BAND_DROP,
                         .rate = 1 + unit_rng_below(&rng, 100000) } },
        };
        switch (unit_rng_below(&rng, 3)) {
        case 0:
            ck_assert_int_eq(fdp__meters_set(ms, &c, true),
                             exists[idx] ? EEXIST : 0);
            n += !exists[idx];
            exists[idx] = true;
            break;
        case 1:
            ck_assert_int_eq(fdp__meters_set(ms, &c, false),
                             exists[idx] ? 0 : ENOENT);
            if (exists[idx]) {
                struct fdp_meter_config got;
                ck_assert_int_eq(fdp__meters_get(ms, id, &got, NULL), 0);
                ck_assert_uint_eq(got.bands[0].rate, c.bands[0].rate);
            }
            break;
        default:
            ck_assert_int_eq(fdp__meters_del(ms, id),
                             exists[idx] ? 0 : ENOENT);
            n -= exists[idx];
            exists[idx] = false;
            break;
        }
        ck_assert_uint_eq(fdp__meters_count(ms), n);
        if (op % 5000 == 0) {
            size_t k = 0;
            for (uint32_t i = 0; i < N_IDS; i++) {
                uint32_t iid = i < 100 ? i + 1 : i * 1431655u + 1;
                struct fdp__meter *m = fdp__meters_find(ms, iid);
                ck_assert(exists[i] == (m != NULL));
                k += exists[i];
            }
            ck_assert_uint_eq(fdp__meters_list(ms, ids, N_IDS), k);
            for (size_t i = 1; i < k; i++) {
                ck_assert_uint_lt(ids[i - 1], ids[i]);
            }
        }
    }
    fdp__meters_destroy(ms);
}
END_TEST

START_TEST(bad_configs_refused)
{
    struct fdp__meters *ms = meters_with_fake_clock(1);
    struct fdp_meter_config c = {
        .id = 1, .flags = FDP_METER_PKTPS, .n_bands = 1,
        .bands = { { .type = FDP_METER_BAND_DROP, .rate = 10 } },
    };

    c.id = 0;
    ck_assert_int_eq(fdp__meters_set(ms, &c, true), EINVAL);
    c.id = FDP_METER_MAX_ID + 1;
    ck_assert_int_eq(fdp__meters_set(ms, &c, true), EINVAL);
    c.id = 1;
    c.bands[0].rate = 0;
    ck_assert_int_eq(fdp__meters_set(ms, &c, true), EINVAL);
    c.bands[0].rate = 10;
    c.n_bands = 0;
    ck_assert_int_eq(fdp__meters_set(ms, &c, true), EINVAL);
    c.n_bands = FDP_METER_MAX_BANDS + 1;
    ck_assert_int_eq(fdp__meters_set(ms, &c, true), EINVAL);
    c.n_bands = 1;
    c.bands[0].type = 9;
    ck_assert_int_eq(fdp__meters_set(ms, &c, true), EINVAL);
    ck_assert_uint_eq(fdp__meters_count(ms), 0);
    fdp__meters_destroy(ms);
}
END_TEST

/* ---- The text syntax ---- */

static void
check_round_trip(const char *text, const char *printed)
{
    struct fdp_meter_config c;
    char *error = NULL;
    int rc = fdp_meter_parse(text, FDP_METER_CMD_ADD, &c, &error);

    if (rc) {
        ck_abort_msg("\"%s\": %s", text, error ? error : "?");
    }
    char *s = fdp_meter_format_config(&c);
    ck_assert_str_eq(s, printed);
    free(s);
}

static void
check_refused(const char *text, enum fdp_meter_command cmd,
              const char *message)
{
    struct fdp_meter_config c;
    char *error = NULL;

    ck_assert_int_eq(fdp_meter_parse(text, cmd, &c, &error), EINVAL);
    ck_assert_ptr_nonnull(error);
    if (!strstr(error, message)) {
        ck_abort_msg("\"%s\": got \"%s\", expected \"%s\"", text, error,
                     message);
    }
    free(error);
}

START_TEST(syntax)
{
    check_round_trip("meter=1,pktps,burst,stats,bands=type=drop,rate=1000,"
                     "burst_size=100",
                     "meter=1 pktps burst stats bands=\n"
                     "type=drop rate=1000 burst_size=100\n");
    check_round_trip("meter=0x10 kbps bands=type=drop rate=5000 "
                     "type=dscp_remark rate=10000 prec_level=2",
                     "meter=16 kbps bands=\ntype=drop rate=5000\n"
                     "type=dscp_remark rate=10000 prec_level=2\n");
    check_refused("meter=1,pktps", FDP_METER_CMD_ADD, "must specify bands");
    check_refused("pktps,bands=type=drop,rate=1", FDP_METER_CMD_ADD,
                  "must specify 'meter'");
    check_refused("meter=1,bands=type=drop,rate=1", FDP_METER_CMD_ADD,
                  "either 'kbps' or 'pktps'");
    check_refused("meter=0,kbps,bands=type=drop,rate=1", FDP_METER_CMD_ADD,
                  "column 7: 0: invalid value for meter");
    check_refused("meter=4294901761,kbps,bands=type=drop,rate=1",
                  FDP_METER_CMD_ADD, "invalid value for meter");
    check_refused("meter=x,kbps,bands=type=drop,rate=1", FDP_METER_CMD_ADD,
                  "x: invalid numeric format x");
    check_refused("meter=1,kbps,bands=type=foo,rate=1", FDP_METER_CMD_ADD,
                  "foo: field type unknown value foo");
    check_refused("meter=1,kbps,bands=rate=1", FDP_METER_CMD_ADD,
                  "band must start with the 'type' keyword");
    check_refused("meter=1,kbps,bands=type=drop", FDP_METER_CMD_ADD,
                  "band must have 'rate'");
    check_refused("meter=1,kbps,bands=type=drop,rate=1,burst_size=2",
                  FDP_METER_CMD_ADD, "only when 'burst' flag is set");
    check_refused("meter=1,kbps,burst,bands=type=drop,rate=1",
                  FDP_METER_CMD_ADD, "band must have 'burst_size'");
    check_refused("meter=1,kbps,bands=type=dscp_remark,rate=1",
                  FDP_METER_CMD_ADD, "must have 'prec_level'");
    check_refused("meter=1,kbps,bands=type=drop,rate=1,prec_level=1",
                  FDP_METER_CMD_ADD, "Only 'dscp_remark' band may have");
    check_refused("meter=1,kbps,bands=type=dscp_remark,rate=1,prec_level=256",
                  FDP_METER_CMD_ADD, "invalid prec_level \"256\"");
    check_refused("meter=1,kbps,pktps,bands=type=drop,rate=1",
                  FDP_METER_CMD_ADD, "not both");
    check_refused("meter=1,kbps,colour=red,bands=type=drop,rate=1",
                  FDP_METER_CMD_ADD, "unknown keyword colour");
    check_refused("meter=1,kbps", FDP_METER_CMD_DEL, "field kbps missing");
    check_refused("meter=all,kbps,bands=type=drop,rate=1", FDP_METER_CMD_ADD,
                  "names every meter");

    struct fdp_meter_config c;
    ck_assert_int_eq(fdp_meter_parse("", FDP_METER_CMD_DUMP, &c, NULL), 0);
    ck_assert_uint_eq(c.id, FDP_METER_ALL);
    ck_assert_int_eq(fdp_meter_parse("meter=all", FDP_METER_CMD_DEL, &c,
                                     NULL), 0);
    ck_assert_uint_eq(c.id, FDP_METER_ALL);
    ck_assert_int_eq(fdp_meter_parse("meter=5", FDP_METER_CMD_DEL, &c,
                                     NULL), 0);
    ck_assert_uint_eq(c.id, 5);

    struct fdp_meter_stats st = {
        .id = 3, .flow_count = 2, .packet_in_count = 10,
        .byte_in_count = 640, .duration_ns = 1500000000, .n_bands = 1,
        .bands = { { 4, 256 } },
    };
    char *s = fdp_meter_format_stats(&st);
    ck_assert_str_eq(s, "meter:3 flow_count:2 packet_in_count:10 "
                     "byte_in_count:640 duration:1.500s bands:\n"
                     "0: packet_count:4 byte_count:256\n");
    free(s);
    st.duration_ns = 2000000000;
    s = fdp_meter_format_stats(&st);
    ck_assert(strstr(s, " duration:2s ") != NULL);
    free(s);
}
END_TEST

/* ---- Threads sharing a bucket ----
 *
 * With the clock stopped a bucket only empties: however the threads'
 * compare-and-swaps interleave, exactly its burst must pass, no packet
 * more (tokens spent twice) and none less (tokens lost).  Then a second
 * of refill lets exactly the rate through. */
#define N_THREADS 4

struct worker {
    struct fdp__meter *m;
    uint64_t passed;
    uint64_t *progress;
};

static void *
worker_main(void *w_)
{
    struct worker *w = w_;
    uint32_t sizes[8] = { 64, 64, 64, 64, 64, 64, 64, 64 };
    int8_t fired[8];

    for (int k = 0; k < 20000; k++) {
        fdp__meter_run(w->m, sizes, 8, fake_clock(NULL), FDP__STATS_SHARED,
                       fired);
        for (int i = 0; i < 8; i++) {
            w->passed += fired[i] < 0;
        }
        unit_progress_bump(w->progress);
    }
    return NULL;
}

static uint64_t
run_workers(struct fdp__meter *m)
{
    pthread_t threads[N_THREADS];
    struct worker w[N_THREADS];
    uint64_t progress = 0, passed = 0;

    for (int t = 0; t < N_THREADS; t++) {
        w[t] = (struct worker) { m, 0, &progress };
        ck_assert_int_eq(pthread_create(&threads[t], NULL, worker_main,
                                        &w[t]), 0);
    }
    for (int t = 0; t < N_THREADS; t++) {
        pthread_join(threads[t], NULL);
        passed += w[t].passed;
    }
    return passed;
}

START_TEST(threads_share_a_bucket_exactly)
{
    struct fdp__meters *ms = meters_with_fake_clock(1000000000);
    struct fdp_meter_config c = {
        .id = 42, .flags = FDP_METER_PKTPS | FDP_METER_BURST, .n_bands = 1,
        .bands = { { .type = FDP_METER_BAND_DROP, .rate = 5000,
                     .burst_size = 30000 } },
    };

    ck_assert_int_eq(fdp__meters_set(ms, &c, true), 0);
    struct fdp__meter *m = fdp__meters_find(ms, 42);
    ck_assert_uint_eq(run_workers(m), 30000);
    __atomic_store_n(&fake_now, fake_now + 1000000000, __ATOMIC_RELAXED);
    ck_assert_uint_eq(run_workers(m), 5000);

    struct fdp_meter_stats st;
    ck_assert_int_eq(fdp__meters_get(ms, 42, NULL, &st), 0);
    ck_assert_uint_eq(st.packet_in_count, 2 * N_THREADS * 20000 * 8);
    ck_assert_uint_eq(st.bands[0].packet_count,
                      2 * N_THREADS * 20000 * 8 - 35000);
    fdp__meters_destroy(ms);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("meter");
    TCase *tc = unit_tcase(s, "meter");
    TCase *cc = unit_tcase(s, "concurrency");

    tcase_add_test(tc, exact_rates_match_reference);
    tcase_add_test(tc, random_rates_track_reference);
    tcase_add_test(tc, worked_example);
    tcase_add_test(tc, highest_rate_band_fires);
    tcase_add_test(tc, remark_dscp);
    tcase_add_test(tc, table_matches_reference);
    tcase_add_test(tc, bad_configs_refused);
    tcase_add_test(tc, syntax);
    tcase_add_test(cc, threads_share_a_bucket_exactly);
    return unit_run(s);
}
