/*
 * flowdp-bench pipeline suite: what a multi-table pipeline (pipeline.h)
 * costs next to one table, in the datapath and on the API.
 *
 * Every program is written as flow text and parsed with fdp_flow_parse(),
 * the user's path; the 4-table program is also built with the internal
 * action builders once, and the two must classify every packet alike.
 * Packets are 64-byte UDP/IPv4 frames (bench-dp.c's shape), from
 * 10.1.0.1:1000 to 10.0.X.Y:5000 for flow i = X * 256 + Y.
 *
 *   hit-*      1000 flows; every packet's outcome is in the EMC (on,
 *              insertion probability 1, warmed up); through a datapath
 *              with ring ports, ns per packet for the whole path:
 *                1table   table 0 forwards (udp,nw_dst=...,tp_dst=5000);
 *                4tables  table 0 matches nw_dst and loads reg0, goto 1;
 *                         table 1 matches reg0 and loads reg1, goto 2;
 *                         table 2 matches tp_dst and reg1 and loads reg2,
 *                         goto 3; table 3 matches reg1 and reg2 and
 *                         forwards.  impl "pipeline", or "table" for the
 *                         1-table flows in a plain table's datapath
 *                         (fdp_dp_create()), or "builders" for the
 *                         4-table program built without the parser.
 *              Goal: 4tables within 1.2x of 1table.
 *   miss-*     the same programs with every cache off: the datapath
 *              (emc=off, smc=off), and the API alone: "classify",
 *              fdp_pipeline_classify(), and, for one table, "lookup",
 *              fdp_table_lookup() on a plain table of the same flows.
 *              Goals: through the datapath, 4 tables within 3.5x of one
 *              (issue 22); 4-table classify within 4.5x of the 1-table
 *              lookup (issue 15).
 *   conj-*     one table: 100 source addresses x 100 destination ports as
 *              conjunction(1,1/2) and conjunction(1,2/2) flows and one
 *              conj_id=1 flow ("conjunction"), against the 10,000 flows
 *              of their cross product ("cross"); random packets, half of
 *              them allowed, the rest dropped by a priority-0 flow; the
 *              API's fdp_pipeline_classify() and the datapath with its
 *              caches off.  bytes: the table's memory
 *              (fdp_pipeline_get_table_stats()).  Goals: conjunctions at
 *              least as fast, in at most 1/50 of the memory.
 * In the table output, a "ratio" line after each pair states the goal.
 * FLOWDP_BENCH_CASE=NAME runs the cases of that name only (a profile's
 * target; the programs are still built and checked).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "lib/actions-internal.h"
#include "lib/field.h"
#include "lib/match-internal.h"
#include "bench/bench.h"
#include "tests/lib/peer.h"
#include "tests/lib/rng.h"
#include "utilities/tool.h"

#define BATCH 32
#define RING_SIZE 1024
#define FRAME_LEN 60
#define N_FLOWS 1000
#define N_KEYS 4096             /* Distinct keys of the API cases. */

/* ---------------------------------------------------------------------- */
/* Programs.                                                               */

static void
add_text(struct fdp_pipeline *p, struct fdp_table *t, const char *text)
{
    struct fdp_flow_spec spec;
    char *msg = NULL;

    if (fdp_flow_parse(text, 0, &spec, &msg)) {
        fatal("pipeline: %s: %s", text, msg ? msg : "out of memory");
    }
    int error = p ? fdp_pipeline_insert(p, &spec, 0)
                  : fdp_table_insert(t, &spec, 0);
    if (error) {
        fatal("pipeline: %s: %s", text, strerror(error));
    }
    fdp_flow_spec_destroy(&spec);
}

static struct fdp_pipeline *
pipeline_new(void)
{
    struct fdp_pipeline *p;

    if (fdp_pipeline_create(&p) || fdp_pipeline_begin(p)) {
        fatal("pipeline: out of memory");
    }
    return p;
}

static void
pipeline_done(struct fdp_pipeline *p)
{
    if (fdp_pipeline_commit(p)) {
        fatal("pipeline: commit failed");
    }
    fdp_pipeline_run(p);
}

/* The one-table flows, into pipeline 'p' or table 't'. */
static void
one_table(struct fdp_pipeline *p, struct fdp_table *t)
{
    char text[160];

    for (unsigned int i = 0; i < N_FLOWS; i++) {
        snprintf(text, sizeof text, "udp,nw_dst=10.0.%u.%u,tp_dst=5000,"
                 "actions=output:2", i >> 8, i & 0xff);
        add_text(p, t, text);
    }
}

static void
four_tables(struct fdp_pipeline *p)
{
    char text[200];

    for (unsigned int i = 0; i < N_FLOWS; i++) {
        snprintf(text, sizeof text, "table=0,udp,nw_dst=10.0.%u.%u,"
                 "actions=load:%u->NXM_NX_REG0[],goto_table:1", i >> 8,
                 i & 0xff, i);
        add_text(p, NULL, text);
        snprintf(text, sizeof text, "table=1,reg0=%u,actions=load:%u->"
                 "NXM_NX_REG1[],goto_table:2", i, i % 4);
        add_text(p, NULL, text);
    }
    for (unsigned int k = 0; k < 4; k++) {
        snprintf(text, sizeof text, "table=2,udp,tp_dst=5000,reg1=%u,"
                 "actions=load:1->NXM_NX_REG2[],goto_table:3", k);
        add_text(p, NULL, text);
        snprintf(text, sizeof text, "table=3,reg1=%u,reg2=1,"
                 "actions=output:2", k);
        add_text(p, NULL, text);
    }
}

/* four_tables() without the parser: matches and action lists built with
 * the internal builders (what tests do). */
static void
four_tables_built(struct fdp_pipeline *p)
{
    for (unsigned int i = 0; i < N_FLOWS + 8; i++) {
        struct fdp__actions_builder b;
        struct fdp_match *m = fdp_match_create();
        struct fdp_flow_spec spec = {
            .match = m, .priority = FDP_DEFAULT_PRIORITY,
        };
        unsigned int k = (i - N_FLOWS) % 4;

        if (!m) {
            fatal("pipeline: out of memory");
        }
        fdp__actions_builder_init(&b);
        if (i < N_FLOWS || (i - N_FLOWS) / 4 == 0) {
            fdp__match_set_masked(m, FDP_F_DL_TYPE, FDP_ETH_TYPE_IP, 0xffff);
            fdp__match_set_masked(m, FDP_F_NW_PROTO, FDP_IPPROTO_UDP, 0xff);
        }
        if (i < N_FLOWS) {
            fdp__match_set_masked(m, FDP_F_NW_DST, (10u << 24) | i,
                                  0xffffffff);
            fdp__actions_add_set_masked(&b, FDP_F_REG0, i, 0xffffffff,
                                        FDP__ACT_LOAD);
            fdp__actions_add(&b, FDP_ACT_GOTO_TABLE, 1);
        } else if ((i - N_FLOWS) / 4 == 0) {
            spec.table_id = 2;
            fdp__match_set_masked(m, FDP_F_TP_DST, 5000, 0xffff);
            fdp__match_set_masked(m, FDP_F_REG1, k, 0xffffffff);
            fdp__actions_add_set_masked(&b, FDP_F_REG2, 1, 0xffffffff,
                                        FDP__ACT_LOAD);
            fdp__actions_add(&b, FDP_ACT_GOTO_TABLE, 3);
        } else {
            spec.table_id = 3;
            fdp__match_set_masked(m, FDP_F_REG1, k, 0xffffffff);
            fdp__match_set_masked(m, FDP_F_REG2, 1, 0xffffffff);
            fdp__actions_add(&b, FDP_ACT_OUTPUT, 2);
        }
        spec.actions = fdp__actions_finish(&b);
        if (!spec.actions || fdp_pipeline_insert(p, &spec, 0)) {
            fatal("pipeline: building flow %u failed", i);
        }
        fdp_actions_destroy(spec.actions);

        if (i < N_FLOWS) {
            /* Table 1's flow for the same i. */
            fdp__match_init(m);
            fdp__match_set_masked(m, FDP_F_REG0, i, 0xffffffff);
            fdp__actions_add_set_masked(&b, FDP_F_REG1, i % 4, 0xffffffff,
                                        FDP__ACT_LOAD);
            fdp__actions_add(&b, FDP_ACT_GOTO_TABLE, 2);
            spec.actions = fdp__actions_finish(&b);
            spec.table_id = 1;
            if (!spec.actions || fdp_pipeline_insert(p, &spec, 0)) {
                fatal("pipeline: building flow %u failed", i);
            }
            fdp_actions_destroy(spec.actions);
        }
        fdp__actions_builder_destroy(&b);
        fdp_match_destroy(m);
    }
}

/* 100 source addresses x 100 destination ports, allowed. */
#define CONJ_DIM 100

static uint32_t
conj_src(unsigned int s)
{
    return (10u << 24) | (2u << 16) | (s * 3 + 1);
}

static uint16_t
conj_port(unsigned int d)
{
    return (uint16_t) (1000 + d * 7);
}

static void
conj_program(struct fdp_pipeline *p, bool cross)
{
    char text[200];

    for (unsigned int s = 0; s < CONJ_DIM; s++) {
        uint32_t a = conj_src(s);
        if (cross) {
            for (unsigned int d = 0; d < CONJ_DIM; d++) {
                snprintf(text, sizeof text, "priority=10,udp,nw_src=10.2.%u."
                         "%u,tp_dst=%u,actions=output:2", (a >> 8) & 0xff,
                         a & 0xff, conj_port(d));
                add_text(p, NULL, text);
            }
        } else {
            snprintf(text, sizeof text, "priority=10,udp,nw_src=10.2.%u.%u,"
                     "actions=conjunction(1,1/2)", (a >> 8) & 0xff, a & 0xff);
            add_text(p, NULL, text);
            snprintf(text, sizeof text, "priority=10,udp,tp_dst=%u,"
                     "actions=conjunction(1,2/2)", conj_port(s));
            add_text(p, NULL, text);
        }
    }
    if (!cross) {
        add_text(p, NULL, "priority=10,conj_id=1,actions=output:2");
    }
    add_text(p, NULL, "priority=0,actions=drop");
}

/* ---------------------------------------------------------------------- */
/* Packets.                                                                */

static void
put_frame(uint8_t *p, uint32_t src, uint32_t dst, uint16_t dport)
{
    static const uint8_t head[] = {
        0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00,
        0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0,
        0x03, 0xe8, 0, 0, 0, 26, 0, 0,
    };
    memset(p, 0, FRAME_LEN);
    memcpy(p, head, sizeof head);
    for (int i = 0; i < 4; i++) {
        p[26 + i] = (uint8_t) (src >> (24 - 8 * i));
        p[30 + i] = (uint8_t) (dst >> (24 - 8 * i));
    }
    p[36] = (uint8_t) (dport >> 8);
    p[37] = (uint8_t) dport;
}

/* Frame i of the hit and miss cases. */
static void
flow_frame(uint8_t *p, unsigned int i)
{
    put_frame(p, (10u << 24) | (1u << 16) | 1, (10u << 24) | i, 5000);
}

/* Random frames of the conjunction cases: half allowed (a source and a
 * port of the sets), half from a source outside the set. */
static void
conj_frames(uint8_t (*frames)[FRAME_LEN], size_t n)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull;

    for (size_t i = 0; i < n; i++) {
        unsigned int s = (unsigned int) (test_rng_next(&rng) % CONJ_DIM);
        unsigned int d = (unsigned int) (test_rng_next(&rng) % CONJ_DIM);
        uint32_t src = conj_src(s) + (i % 2 ? 0 : 0x10000);
        put_frame(frames[i], src, (10u << 24) | 5, conj_port(d));
    }
}

/* ---------------------------------------------------------------------- */
/* The datapath with ring ports: the peer feeds port 1, drains port 2.    */

struct lane {
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings in, out;
    const uint8_t (*frames)[FRAME_LEN];
    size_t n_frames, next;
};

static void
lane_open(struct lane *l, struct fdp_table *t, struct fdp_pipeline *p,
          enum fdp_dp_cache_mode emc, const uint8_t (*frames)[FRAME_LEN],
          size_t n_frames)
{
    struct fdp_dp_options o;

    memset(l, 0, sizeof *l);
    fdp_dp_options_init(&o);
    o.emc_mode = emc;
    o.emc_insert_inv_prob = emc == FDP_DP_CACHE_OFF ? 0 : 1;
    o.smc_mode = FDP_DP_CACHE_OFF;
    int error = p ? fdp_dp_create_pipeline(p, &o, &l->dp)
                  : fdp_dp_create(t, &o, &l->dp);
    if (error
        || fdp_dp_port_add(l->dp, 1, "ring:size=1024", NULL)
        || fdp_dp_port_add(l->dp, 2, "ring:size=1024", NULL)
        || fdp_dp_port_rings(l->dp, 1, &l->in)
        || fdp_dp_port_rings(l->dp, 2, &l->out)
        || fdp_dp_pmd_create(l->dp, 0, &l->pmd)) {
        fatal("pipeline: setting up a datapath failed");
    }
    l->frames = frames;
    l->n_frames = n_frames;
}

static void
lane_close(struct lane *l)
{
    fdp_dp_pmd_destroy(l->pmd);
    fdp_dp_destroy(l->dp);
}

/* The peer sends batches on port 1, the pmd forwards them, the peer
 * drains port 2: 'n' packets in all.  Returns the packets output. */
static uint64_t
lane_packets(void *l_, uint64_t n)
{
    struct lane *l = l_;

    return test_peer_forward(l->pmd, &l->in, &l->out, &l->frames[0][0],
                         FRAME_LEN, l->n_frames, &l->next, RING_SIZE, n);
}

/* True if FLOWDP_BENCH_CASE names another case. */
static bool
skipped(const char *case_name)
{
    const char *only = getenv("FLOWDP_BENCH_CASE");

    return only && strcmp(only, case_name);
}

/* Times the datapath of 't' or 'p' on 'frames' and reports it (0 if the
 * case is skipped).  With
 * 'all_out', every packet must come out (no miss, no drop). */
static double
dp_case(const char *case_name, const char *impl, struct fdp_table *t,
        struct fdp_pipeline *p, enum fdp_dp_cache_mode emc,
        const uint8_t (*frames)[FRAME_LEN], size_t n_frames,
        uint64_t entries, uint64_t bytes, bool all_out)
{
    struct lane l;

    if (skipped(case_name)) {
        return 0;
    }
    lane_open(&l, t, p, emc, frames, n_frames);
    /* Warm up: every frame through four times (the EMC when on). */
    uint64_t got = lane_packets(&l, 4 * n_frames);
    if (all_out && got != 4 * n_frames) {
        fatal("pipeline: %s (%s): %" PRIu64 " of %zu packets forwarded",
              case_name, impl, got, 4 * n_frames);
    }
    double ns = measure(lane_packets, &l);

    struct fdp_dp_stats st;
    fdp_dp_get_stats(l.dp, &st);
    if (emc == FDP_DP_CACHE_ON && st.n_emc_hits < st.n_packets / 2) {
        fatal("pipeline: %s (%s): the EMC served %" PRIu64 " of %" PRIu64
              " packets", case_name, impl, st.n_emc_hits, st.n_packets);
    }
    report(&(struct result) {
        .suite = "pipeline", .case_name = case_name, .impl = impl,
        .entries = entries, .ns_per_op = ns, .bytes = bytes,
    });
    lane_close(&l);
    return ns;
}

/* ---------------------------------------------------------------------- */
/* The API alone.                                                          */

struct api_bench {
    struct fdp_pipeline *p;
    struct fdp_table *t;
    struct fdp_key *keys;
    size_t n_keys;
    struct fdp_pipeline_result r;
};

static uint64_t
api_classify(void *ab_, uint64_t n)
{
    struct api_bench *ab = ab_;
    uint64_t acc = 0;

    fdp_table_read_lock();
    for (uint64_t i = 0; i < n; i++) {
        if (fdp_pipeline_classify(ab->p, &ab->keys[i % ab->n_keys], 0,
                                  &ab->r, NULL, NULL)) {
            fatal("pipeline: classify: out of memory");
        }
        acc += ab->r.n_steps;
    }
    fdp_table_read_unlock();
    return acc;
}

static uint64_t
api_lookup(void *ab_, uint64_t n)
{
    struct api_bench *ab = ab_;
    uint64_t acc = 0;

    fdp_table_read_lock();
    for (uint64_t i = 0; i < n; i++) {
        acc += fdp_table_lookup(ab->t, &ab->keys[i % ab->n_keys]) != NULL;
    }
    fdp_table_read_unlock();
    return acc;
}

static double
api_case(const char *case_name, const char *impl, struct fdp_pipeline *p,
         struct fdp_table *t, struct fdp_key *keys, size_t n_keys,
         uint64_t entries, uint64_t bytes)
{
    struct api_bench ab = { .p = p, .t = t, .keys = keys, .n_keys = n_keys };

    if (skipped(case_name)) {
        return 0;
    }
    fdp_pipeline_result_init(&ab.r);
    double ns = measure(p ? api_classify : api_lookup, &ab);
    report(&(struct result) {
        .suite = "pipeline", .case_name = case_name, .impl = impl,
        .entries = entries, .ns_per_op = ns, .bytes = bytes,
    });
    fdp_pipeline_result_destroy(&ab.r);
    return ns;
}

static void
ratio(const char *what, double num, double den, const char *goal)
{
    if (!json_output && num > 0 && den > 0) {
        printf("  ratio %s: %.3gx (goal: %s)\n", what, num / den, goal);
    }
}

/* The output port of 'key' through 'p' (0: dropped), and the cookies of
 * the flows hit, for comparing two programs. */
static uint64_t
outcome(struct fdp_pipeline *p, const struct fdp_key *key,
        struct fdp_pipeline_result *r)
{
    uint64_t v = 0;

    if (fdp_pipeline_classify(p, key, 0, r, NULL, NULL)) {
        fatal("pipeline: classify: out of memory");
    }
    for (const struct fdp__action *a = fdp__actions_first(r->actions); a;
         a = fdp__actions_next(r->actions, a)) {
        if (a->type == FDP_ACT_OUTPUT) {
            v = v * 65536 + a->arg;
        }
    }
    return v;
}

static uint64_t
table_memory(struct fdp_pipeline *p, unsigned int n_tables)
{
    uint64_t bytes = 0;

    for (unsigned int i = 0; i < n_tables; i++) {
        struct fdp_pipeline_table_stats ts;
        if (fdp_pipeline_get_table_stats(p, (uint8_t) i, &ts)) {
            bytes += ts.memory_bytes;
        }
    }
    return bytes;
}

/* ---------------------------------------------------------------------- */

void
suite_pipeline(void)
{
    uint8_t (*frames)[FRAME_LEN] = malloc(N_KEYS * sizeof *frames);
    struct fdp_key *keys = malloc(N_KEYS * sizeof *keys);
    struct fdp_pipeline *p1 = pipeline_new(), *p4 = pipeline_new();
    struct fdp_pipeline *p4b = pipeline_new();
    struct fdp_table *t1;

    if (!frames || !keys || fdp_table_create(&t1)) {
        fatal("pipeline: out of memory");
    }
    report_header("pipeline");
    one_table(p1, NULL);
    one_table(NULL, t1);
    four_tables(p4);
    four_tables_built(p4b);
    pipeline_done(p1);
    pipeline_done(p4);
    pipeline_done(p4b);
    fdp_table_run(t1);
    struct fdp_table_stats t1s;
    fdp_table_get_stats(t1, &t1s);
    for (unsigned int i = 0; i < N_FLOWS; i++) {
        flow_frame(frames[i], i);
        fdp_packet_extract(frames[i], FRAME_LEN, 1, &keys[i], NULL);
    }

    /* The programs agree: every packet out of port 2, the text and the
     * builders' 4-table programs hitting the same flows. */
    struct fdp_pipeline_result r1, r4;
    fdp_pipeline_result_init(&r1);
    fdp_pipeline_result_init(&r4);
    fdp_table_read_lock();
    for (unsigned int i = 0; i < N_FLOWS; i++) {
        if (outcome(p1, &keys[i], &r1) != 2 || outcome(p4, &keys[i], &r4) != 2
            || r4.n_steps != 4 || outcome(p4b, &keys[i], &r1) != 2
            || r1.n_steps != 4
            || memcmp(&r1.key, &r4.key, sizeof r1.key)) {
            fatal("pipeline: the programs disagree on packet %u", i);
        }
    }
    fdp_table_read_unlock();

    /* a. EMC hits. */
    uint64_t m1 = table_memory(p1, 1), m4 = table_memory(p4, 4);
    double hit1 = dp_case("hit-1table", "pipeline", NULL, p1,
                          FDP_DP_CACHE_ON, (const uint8_t (*)[FRAME_LEN])
                          frames, N_FLOWS, N_FLOWS, m1, true);
    dp_case("hit-1table", "table", t1, NULL, FDP_DP_CACHE_ON,
            (const uint8_t (*)[FRAME_LEN]) frames, N_FLOWS, N_FLOWS,
            t1s.memory_bytes, true);
    double hit4 = dp_case("hit-4tables", "pipeline", NULL, p4,
                          FDP_DP_CACHE_ON, (const uint8_t (*)[FRAME_LEN])
                          frames, N_FLOWS, N_FLOWS, m4, true);
    dp_case("hit-4tables", "builders", NULL, p4b, FDP_DP_CACHE_ON,
            (const uint8_t (*)[FRAME_LEN]) frames, N_FLOWS, N_FLOWS,
            table_memory(p4b, 4), true);
    ratio("hit 4tables/1table", hit4, hit1, "<= 1.2x");

    /* b. Misses: every cache off, then the API. */
    double dmiss1 = dp_case("miss-1table", "pipeline", NULL, p1,
                            FDP_DP_CACHE_OFF, (const uint8_t (*)[FRAME_LEN])
                            frames, N_FLOWS, N_FLOWS, m1, true);
    double dmiss4 = dp_case("miss-4tables", "pipeline", NULL, p4,
                            FDP_DP_CACHE_OFF, (const uint8_t (*)[FRAME_LEN])
                            frames, N_FLOWS, N_FLOWS, m4, true);
    dp_case("miss-1table", "table", t1, NULL, FDP_DP_CACHE_OFF,
            (const uint8_t (*)[FRAME_LEN]) frames, N_FLOWS, N_FLOWS,
            t1s.memory_bytes, true);
    ratio("datapath miss 4tables/1table", dmiss4, dmiss1, "<= 3.5x");
    double lookup1 = api_case("miss-1table", "lookup", NULL, t1, keys,
                              N_FLOWS, N_FLOWS, t1s.memory_bytes);
    double api1 = api_case("miss-1table", "classify", p1, NULL, keys,
                           N_FLOWS, N_FLOWS, m1);
    double api4 = api_case("miss-4tables", "classify", p4, NULL, keys,
                           N_FLOWS, N_FLOWS, m4);
    ratio("classify 4tables / lookup 1table", api4, lookup1, "<= 4.5x");
    ratio("classify 4tables / classify 1table", api4, api1, "<= 4.5x");

    /* c. Conjunctions against their cross product. */
    struct fdp_pipeline *pc = pipeline_new(), *px = pipeline_new();
    conj_program(pc, false);
    conj_program(px, true);
    pipeline_done(pc);
    pipeline_done(px);
    conj_frames(frames, N_KEYS);
    size_t n_allowed = 0;
    fdp_table_read_lock();
    for (size_t i = 0; i < N_KEYS; i++) {
        fdp_packet_extract(frames[i], FRAME_LEN, 1, &keys[i], NULL);
        uint64_t oc = outcome(pc, &keys[i], &r1);
        if (oc != outcome(px, &keys[i], &r4)) {
            fatal("pipeline: conjunction and cross product disagree on "
                  "packet %zu", i);
        }
        n_allowed += oc == 2;
    }
    fdp_table_read_unlock();
    if (n_allowed < N_KEYS / 3 || n_allowed > 2 * N_KEYS / 3) {
        fatal("pipeline: %zu of %d conjunction packets allowed", n_allowed,
              N_KEYS);
    }
    uint64_t mc = table_memory(pc, 1), mx = table_memory(px, 1);
    uint64_t nc = 2 * CONJ_DIM + 2, nx = CONJ_DIM * CONJ_DIM + 1;
    double ac = api_case("conj-api", "conjunction", pc, NULL, keys, N_KEYS,
                         nc, mc);
    double ax = api_case("conj-api", "cross", px, NULL, keys, N_KEYS, nx,
                         mx);
    ratio("conj-api conjunction/cross", ac, ax, "<= 1x");
    double dc = dp_case("conj-dp", "conjunction", NULL, pc, FDP_DP_CACHE_OFF,
                        (const uint8_t (*)[FRAME_LEN]) frames, N_KEYS, nc,
                        mc, false);
    double dx = dp_case("conj-dp", "cross", NULL, px, FDP_DP_CACHE_OFF,
                        (const uint8_t (*)[FRAME_LEN]) frames, N_KEYS, nx,
                        mx, false);
    ratio("conj-dp conjunction/cross", dc, dx, "<= 1x");
    ratio("memory conjunction/cross", (double) mc, (double) mx,
          "<= 0.02x (1/50)");

    fdp_pipeline_result_destroy(&r1);
    fdp_pipeline_result_destroy(&r4);
    fdp_pipeline_destroy(pc);
    fdp_pipeline_destroy(px);
    fdp_pipeline_destroy(p1);
    fdp_pipeline_destroy(p4);
    fdp_pipeline_destroy(p4b);
    fdp_table_destroy(t1);
    free(frames);
    free(keys);
}
