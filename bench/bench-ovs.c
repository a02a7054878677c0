/*
 * flowdp-bench peer-ovs suite: Open vSwitch 3.1's classifiers on the same
 * flows and packets as flowdp, in the same run.
 *
 * Built only with configure --with-ovs-source=DIR.  This file is flowdp's
 * side; the OVS side is behind bench/bench-ovs.h (why there are two
 * sides: see that header).
 *
 * Flows are generated once per case as ovs-ofctl text,
 *   priority=P,cookie=I,tcp,nw_src=A/M,nw_dst=A/M,tp_src=V/M,tp_dst=V/M,
 *   actions=output:1
 * (fields whose mask is zero left out), and each side parses the same
 * strings with its own parser: flowdp with fdp_flow_parse(), OVS with
 * parse_ofp_flow_mod_str().  Cases:
 *   exact-1000x1      1000 exact TCP 5-tuples (one mask); packets are
 *                     the flows;
 *   megaflow-1000xM   1000 disjoint flows at one priority over M = 10,
 *                     100, 1000 masks, as a megaflow cache holds them:
 *                     every mask has dl_type, nw_proto, the top 16 bits of
 *                     nw_src (a tag distinct per mask, which makes flows
 *                     of different masks disjoint) and random prefixes or
 *                     subsets of nw_src, nw_dst, tp_src, tp_dst; packets
 *                     fall inside random flows;
 *   prio-1000x100     1000 flows over 100 random masks, each flow its own
 *                     priority (they may overlap);
 *   insert-CASE       ns per flow to insert all of CASE's flows, parsed
 *                     beforehand: flowdp in one transaction (begin,
 *                     inserts, commit), the OVS classifier with
 *                     cls_rule_init() and classifier_insert() per flow (as
 *                     ofproto does after parsing), dpcls with
 *                     dpcls_insert() per flow (as dp_netdev_flow_add()).
 *                     Timed once per run around the insertions only, the
 *                     median of 5 runs, so no spread is printed.
 * impls: flowdp (fdp_table_lookup_batch, batches of 32), flowdp-disjoint
 * (the same with fdp_table_set_disjoint(), for the disjoint cases),
 * ovs-classifier (classifier_lookup(), one packet at a time: it has no
 * batch API) and ovs-dpcls (dpcls_lookup(), bursts of 32; disjoint cases
 * only, since dpcls has no priorities).  Before any timing every packet is
 * looked up by every impl, which must all find the same flow.
 */
#include <config.h>

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "bench/bench.h"
#include "tests/lib/rng.h"
#include "bench/bench-ovs.h"
#include "utilities/tool.h"

#define OVS_N_FLOWS 1000
#define OVS_N_PACKETS 4096      /* Distinct packets per case. */
#define OVS_BATCH 32            /* flowdp's batch; OVS's NETDEV_MAX_BURST. */
#define OVS_INSERT_RUNS 5       /* As measure(): the median of 5. */

static_assert(OVS_N_PACKETS % OVS_BATCH == 0,
              "the lookup loops wrap at a whole batch");

/* A flow's match on the 5-tuple (host byte order); dl_type and nw_proto
 * are always exact (tcp). */
struct tuple {
    uint32_t nw_src, nw_dst;
    uint16_t tp_src, tp_dst;
};

enum ovs_shape { SHAPE_EXACT, SHAPE_MEGAFLOW, SHAPE_PRIO };

struct ovs_case {
    const char *name;
    enum ovs_shape shape;
    size_t n_masks;
};

/* One case's flows (as text) and packets. */
struct ovs_workload {
    const struct ovs_case *c;
    struct tuple values[OVS_N_FLOWS], masks[OVS_N_FLOWS];
    char *texts[OVS_N_FLOWS];
    struct bench_ovs_packet packets[OVS_N_PACKETS];
    struct fdp_key keys[OVS_N_PACKETS];
};

static bool
shape_disjoint(enum ovs_shape shape)
{
    return shape != SHAPE_PRIO;
}

/* ---------------------------------------------------------------------- */
/* Flows and packets.                                                      */

/* A random mask of 'bits' bits: a prefix of at least 'min_prefix' bits,
 * or (for 'subset') a random subset of at least 'min_prefix' bits. */
static uint32_t
random_mask(uint64_t *seed, unsigned int bits, unsigned int min_prefix,
            bool subset)
{
    uint32_t all = bits == 32 ? UINT32_MAX : (UINT32_C(1) << bits) - 1;

    if (subset) {
        uint32_t m;
        do {
            m = (uint32_t) test_rng_next(seed) & all;
        } while ((unsigned int) __builtin_popcount(m) < min_prefix);
        return m;
    }
    unsigned int len = min_prefix
                       + (unsigned int) (test_rng_next(seed) % (bits - min_prefix
                                                         + 1));
    return len ? all & ~((len == bits ? 0 : all >> len)) : 0;
}

/* Mask 'i' of case 'c'. */
static struct tuple
draw_mask(const struct ovs_case *c, uint64_t *seed)
{
    struct tuple m;
    uint64_t r = test_rng_next(seed);

    switch (c->shape) {
    case SHAPE_EXACT:
        m = (struct tuple) { UINT32_MAX, UINT32_MAX, UINT16_MAX,
                             UINT16_MAX };
        break;
    case SHAPE_MEGAFLOW:
        /* The top 16 bits of nw_src carry the mask's tag; nw_dst has at
         * least 8 bits so that a mask has room for its share of flows
         * (1000 / 10 masks = 100 < 2^8). */
        m.nw_src = 0xffff0000u | random_mask(seed, 16, 0, r & 1);
        m.nw_dst = random_mask(seed, 32, 8, r & 2);
        m.tp_src = (uint16_t) (r & 4 ? random_mask(seed, 16, 0, r & 8) : 0);
        m.tp_dst = (uint16_t) random_mask(seed, 16, 0, r & 16);
        break;
    case SHAPE_PRIO:
    default:
        /* Each field wildcarded, exact or a prefix (addresses) or an
         * arbitrary mask (ports), like the tss suite's masks. */
        m.nw_src = (r & 3) == 0 ? 0 : random_mask(seed, 32, 1, false);
        m.nw_dst = (r & 12) == 0 ? 0 : random_mask(seed, 32, 1, false);
        m.tp_src = (uint16_t) ((r & 48) == 0 ? 0
                               : random_mask(seed, 16, 1, r & 64));
        m.tp_dst = (uint16_t) ((r & 384) == 0 ? 0
                               : random_mask(seed, 16, 1, r & 512));
        break;
    }
    return m;
}

static bool
tuple_equal(const struct tuple *a, const struct tuple *b)
{
    return a->nw_src == b->nw_src && a->nw_dst == b->nw_dst
           && a->tp_src == b->tp_src && a->tp_dst == b->tp_dst;
}

/* Whether some packet matches both flows: no bit both masks care about
 * differs, (v1 ^ v2) & m1 & m2 == 0 in every field. */
static bool
flows_overlap(const struct tuple *v1, const struct tuple *m1,
              const struct tuple *v2, const struct tuple *m2)
{
    return !((v1->nw_src ^ v2->nw_src) & m1->nw_src & m2->nw_src)
           && !((v1->nw_dst ^ v2->nw_dst) & m1->nw_dst & m2->nw_dst)
           && !((v1->tp_src ^ v2->tp_src) & m1->tp_src & m2->tp_src)
           && !((v1->tp_dst ^ v2->tp_dst) & m1->tp_dst & m2->tp_dst);
}

static void
append_field(char *buf, size_t size, const char *name, uint32_t value,
             uint32_t mask, bool ip)
{
    size_t len = strlen(buf);

    if (!mask) {
        return;
    }
    if (ip) {
        snprintf(buf + len, size - len,
                 ",%s=%u.%u.%u.%u/%u.%u.%u.%u", name, value >> 24,
                 (value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff,
                 mask >> 24, (mask >> 16) & 0xff, (mask >> 8) & 0xff,
                 mask & 0xff);
    } else {
        snprintf(buf + len, size - len, ",%s=0x%x/0x%x", name, value, mask);
    }
}

/* Flow 'i' as ovs-ofctl text. */
static char *
flow_text(const struct tuple *v, const struct tuple *m, int priority,
          size_t i)
{
    char buf[256];

    snprintf(buf, sizeof buf, "priority=%d,cookie=%zu,tcp", priority, i);
    append_field(buf, sizeof buf, "nw_src", v->nw_src, m->nw_src, true);
    append_field(buf, sizeof buf, "nw_dst", v->nw_dst, m->nw_dst, true);
    append_field(buf, sizeof buf, "tp_src", v->tp_src, m->tp_src, false);
    append_field(buf, sizeof buf, "tp_dst", v->tp_dst, m->tp_dst, false);
    size_t len = strlen(buf);
    snprintf(buf + len, sizeof buf - len, ",actions=output:1");
    char *s = strdup(buf);
    if (!s) {
        fatal("out of memory");
    }
    return s;
}

static int
flow_priority(const struct ovs_case *c, size_t i)
{
    return c->shape == SHAPE_PRIO ? (int) i + 1 : 100;
}

/* Builds case 'c': its masks, its flows (disjoint ones verified pairwise)
 * and packets inside random flows. */
static void
workload_build(struct ovs_workload *w, const struct ovs_case *c)
{
    uint64_t seed = 0x5eed0 + c->n_masks * 7 + c->shape;
    struct tuple *mask_set = calloc(c->n_masks, sizeof *mask_set);

    if (!mask_set) {
        fatal("out of memory");
    }
    w->c = c;
    for (size_t i = 0; i < c->n_masks; i++) {
        bool dup;
        do {
            mask_set[i] = draw_mask(c, &seed);
            dup = false;
            for (size_t j = 0; j < i && !dup; j++) {
                dup = tuple_equal(&mask_set[i], &mask_set[j]);
            }
        } while (dup);
    }
    for (size_t i = 0; i < OVS_N_FLOWS; i++) {
        size_t mi = i % c->n_masks;
        const struct tuple *m = &mask_set[mi];
        struct tuple *v = &w->values[i];
        unsigned int tries = 0;
        bool clash;

        w->masks[i] = *m;
        do {
            if (++tries > 1000) {
                fatal("peer-ovs: %s: mask %zu has no room for flow %zu",
                      c->name, mi, i);
            }
            uint64_t r1 = test_rng_next(&seed), r2 = test_rng_next(&seed);
            v->nw_src = (uint32_t) r1 & m->nw_src;
            v->nw_dst = (uint32_t) (r1 >> 32) & m->nw_dst;
            v->tp_src = (uint16_t) r2 & m->tp_src;
            v->tp_dst = (uint16_t) (r2 >> 16) & m->tp_dst;
            if (c->shape == SHAPE_MEGAFLOW) {
                /* The mask's tag: 10.0.0.0 plus its index. */
                v->nw_src = (v->nw_src & 0xffff) | (uint32_t) (0x0a00 + mi)
                                                   << 16;
            }
            /* Disjoint shapes redraw overlapping flows; the others only
             * identical ones (which would replace each other). */
            clash = false;
            for (size_t j = 0; j < i && !clash; j++) {
                clash = shape_disjoint(c->shape)
                        ? flows_overlap(v, m, &w->values[j], &w->masks[j])
                        : tuple_equal(m, &w->masks[j])
                          && tuple_equal(v, &w->values[j]);
            }
        } while (clash);
        w->texts[i] = flow_text(v, m, flow_priority(c, i), i);
    }
    /* The build-time check the brief asks for, independent of the
     * drawing loop above: no two flows of a disjoint case overlap. */
    for (size_t i = 0; shape_disjoint(c->shape) && i < OVS_N_FLOWS; i++) {
        for (size_t j = i + 1; j < OVS_N_FLOWS; j++) {
            if (flows_overlap(&w->values[i], &w->masks[i], &w->values[j],
                              &w->masks[j])) {
                fatal("peer-ovs: %s: flows %zu and %zu overlap", c->name,
                      i, j);
            }
        }
    }
    free(mask_set);

    for (size_t k = 0; k < OVS_N_PACKETS; k++) {
        size_t i = (size_t) (test_rng_next(&seed) % OVS_N_FLOWS);
        const struct tuple *v = &w->values[i], *m = &w->masks[i];
        uint64_t r1 = test_rng_next(&seed), r2 = test_rng_next(&seed);
        struct bench_ovs_packet *p = &w->packets[k];

        p->nw_src = v->nw_src | ((uint32_t) r1 & ~m->nw_src);
        p->nw_dst = v->nw_dst | ((uint32_t) (r1 >> 32) & ~m->nw_dst);
        p->tp_src = (uint16_t) (v->tp_src | ((uint16_t) r2 & ~m->tp_src));
        p->tp_dst = (uint16_t) (v->tp_dst
                                | ((uint16_t) (r2 >> 16) & ~m->tp_dst));

        char text[160], *error = NULL;
        snprintf(text, sizeof text,
                 "tcp,nw_src=%u.%u.%u.%u,nw_dst=%u.%u.%u.%u,tp_src=%u,"
                 "tp_dst=%u", p->nw_src >> 24, (p->nw_src >> 16) & 0xff,
                 (p->nw_src >> 8) & 0xff, p->nw_src & 0xff, p->nw_dst >> 24,
                 (p->nw_dst >> 16) & 0xff, (p->nw_dst >> 8) & 0xff,
                 p->nw_dst & 0xff, p->tp_src, p->tp_dst);
        if (fdp_packet_parse(text, &w->keys[k], &error)) {
            fatal("peer-ovs: packet \"%s\": %s", text,
                  error ? error : "out of memory");
        }
    }
}

static void
workload_destroy(struct ovs_workload *w)
{
    for (size_t i = 0; i < OVS_N_FLOWS; i++) {
        free(w->texts[i]);
    }
}

/* ---------------------------------------------------------------------- */
/* flowdp's side.                                                          */

struct fdp_side {
    struct fdp_flow_spec specs[OVS_N_FLOWS];
    struct fdp_table *table;
    const struct fdp_key *batches[OVS_N_PACKETS];
};

static void
fdp_side_parse(struct fdp_side *fs, const struct ovs_workload *w)
{
    for (size_t i = 0; i < OVS_N_FLOWS; i++) {
        char *error = NULL;
        if (fdp_flow_parse(w->texts[i], 0, &fs->specs[i], &error)) {
            fatal("peer-ovs: flowdp refuses \"%s\": %s", w->texts[i],
                  error ? error : "out of memory");
        }
    }
    for (size_t k = 0; k < OVS_N_PACKETS; k++) {
        fs->batches[k] = &w->keys[k];
    }
}

/* Builds fs->table from the parsed flows; returns the ns the transaction
 * took (begin, inserts, commit). */
static double
fdp_side_build(struct fdp_side *fs, bool disjoint)
{
    if (fdp_table_create(&fs->table)) {
        fatal("out of memory");
    }
    fdp_table_set_disjoint(fs->table, disjoint);
    double t0 = now_ns();
    fdp_table_begin(fs->table);
    for (size_t i = 0; i < OVS_N_FLOWS; i++) {
        if (fdp_table_insert(fs->table, &fs->specs[i], 0)) {
            fatal("peer-ovs: flowdp insert failed");
        }
    }
    if (fdp_table_commit(fs->table)) {
        fatal("peer-ovs: flowdp commit failed");
    }
    return now_ns() - t0;
}

static long
fdp_side_lookup(struct fdp_side *fs, size_t k)
{
    const struct fdp_rule *r = fdp_table_lookup(fs->table, fs->batches[k]);

    return r ? (long) fdp_rule_get_cookie(r) : -1;
}

static uint64_t
fdp_side_lookups(void *fs_, uint64_t n)
{
    struct fdp_side *fs = fs_;
    const struct fdp_rule *rules[OVS_BATCH];
    uint64_t sum = 0;

    fdp_table_read_lock();
    for (uint64_t i = 0; i < n; i += OVS_BATCH) {
        size_t off = (size_t) (i % OVS_N_PACKETS);
        fdp_table_lookup_batch(fs->table, &fs->batches[off], OVS_BATCH,
                               rules);
        sum += rules[0] != NULL;
    }
    fdp_table_read_unlock();
    return sum;
}

/* ---------------------------------------------------------------------- */
/* The suite.                                                              */

static int
cmp_double(const void *a_, const void *b_)
{
    double a = *(const double *) a_, b = *(const double *) b_;

    return a < b ? -1 : a > b;
}

static double
median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

static void
report_ovs(const char *case_name, const char *impl, double ns,
           uint64_t bytes)
{
    report(&(struct result) {
        .suite = "peer-ovs", .case_name = case_name, .impl = impl,
        .entries = OVS_N_FLOWS, .ns_per_op = ns, .bytes = bytes,
    });
}

/* Every impl must find, for every packet, the same flow (and, in the
 * disjoint cases, some flow: every packet was drawn inside one). */
static void
check_agreement(const struct ovs_workload *w, struct fdp_side *fs,
                struct bench_ovs *const ovs[], const char *const names[],
                size_t n_ovs)
{
    fdp_table_read_lock();
    for (size_t k = 0; k < OVS_N_PACKETS; k++) {
        long want = fdp_side_lookup(fs, k);
        if (want < 0 && shape_disjoint(w->c->shape)) {
            fatal("peer-ovs: %s: flowdp finds no flow for packet %zu",
                  w->c->name, k);
        }
        for (size_t o = 0; o < n_ovs; o++) {
            long got = bench_ovs_lookup(ovs[o], k);
            if (got != want) {
                fatal("peer-ovs: %s: packet %zu: flowdp finds flow %ld "
                      "(%s), %s finds flow %ld (%s)", w->c->name, k, want,
                      want >= 0 ? w->texts[want] : "none", names[o], got,
                      got >= 0 && got < OVS_N_FLOWS ? w->texts[got]
                                                    : "none");
            }
        }
    }
    fdp_table_read_unlock();
}

static void
run_case(const struct ovs_case *c)
{
    struct ovs_workload *w = calloc(1, sizeof *w);
    struct fdp_side *fs = calloc(1, sizeof *fs);
    struct bench_ovs_flows *flows;
    char insert_name[48];

    if (!w || !fs) {
        fatal("out of memory");
    }
    workload_build(w, c);
    fdp_side_parse(fs, w);
    char *error = bench_ovs_flows_parse((const char *const *) w->texts,
                                        OVS_N_FLOWS, &flows);
    if (error) {
        fatal("peer-ovs: %s: %s", c->name, error);
    }

    /* The OVS structures this case compares with. */
    bool disjoint = shape_disjoint(c->shape);
    struct bench_ovs *ovs[2];
    const char *names[2] = { "ovs-classifier", "ovs-dpcls" };
    size_t n_ovs = disjoint ? 2 : 1;
    ovs[0] = bench_ovs_create(BENCH_OVS_CLASSIFIER, flows, w->packets,
                              OVS_N_PACKETS, NULL);
    if (disjoint) {
        ovs[1] = bench_ovs_create(BENCH_OVS_DPCLS, flows, w->packets,
                                  OVS_N_PACKETS, NULL);
    }

    /* Lookups: flowdp, then flowdp-disjoint, against the OVS impls. */
    for (int d = 0; d <= (int) disjoint; d++) {
        struct fdp_table_stats st;

        fdp_side_build(fs, d);
        check_agreement(w, fs, ovs, names, n_ovs);
        fdp_table_run(fs->table);       /* Rank sub-tables by those hits. */
        fdp_table_get_stats(fs->table, &st);
        if (st.n_flows != OVS_N_FLOWS) {
            fatal("peer-ovs: %s: flowdp holds %" PRIu64 " flows", c->name,
                  st.n_flows);
        }
        report_ovs(c->name, d ? "flowdp-disjoint" : "flowdp",
                   measure(fdp_side_lookups, fs), st.memory_bytes);
        fdp_table_destroy(fs->table);
    }
    for (size_t o = 0; o < n_ovs; o++) {
        bench_ovs_run(ovs[o]);      /* dpcls: sort subtables by hits. */
        report_ovs(c->name, names[o], measure(bench_ovs_lookups, ovs[o]),
                   0);
        bench_ovs_destroy(ovs[o]);
    }

    /* Insertions, from parsed flows to a table that holds them all. */
    snprintf(insert_name, sizeof insert_name, "insert-%s", c->name);
    double samples[OVS_INSERT_RUNS];
    for (int r = 0; r < OVS_INSERT_RUNS; r++) {
        samples[r] = fdp_side_build(fs, false) / OVS_N_FLOWS;
        fdp_table_destroy(fs->table);
    }
    no_spread();
    report_ovs(insert_name, "flowdp", median(samples, OVS_INSERT_RUNS), 0);
    for (size_t o = 0; o < n_ovs; o++) {
        for (int r = 0; r < OVS_INSERT_RUNS; r++) {
            double ns;
            struct bench_ovs *bo = bench_ovs_create(
                o ? BENCH_OVS_DPCLS : BENCH_OVS_CLASSIFIER, flows,
                w->packets, 0, &ns);
            samples[r] = ns / OVS_N_FLOWS;
            bench_ovs_destroy(bo);
        }
        no_spread();
        report_ovs(insert_name, names[o], median(samples, OVS_INSERT_RUNS),
                   0);
    }

    bench_ovs_flows_destroy(flows);
    for (size_t i = 0; i < OVS_N_FLOWS; i++) {
        fdp_flow_spec_destroy(&fs->specs[i]);
    }
    workload_destroy(w);
    free(fs);
    free(w);
}

void
suite_peer_ovs(void)
{
    static const struct ovs_case cases[] = {
        { "exact-1000x1", SHAPE_EXACT, 1 },
        { "megaflow-1000x10", SHAPE_MEGAFLOW, 10 },
        { "megaflow-1000x100", SHAPE_MEGAFLOW, 100 },
        { "megaflow-1000x1000", SHAPE_MEGAFLOW, 1000 },
        { "prio-1000x100", SHAPE_PRIO, 100 },
    };

    report_header("peer-ovs");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i]);
    }
    /* Connection tracking: here unless the ct suite runs in this
     * invocation too, which then measures the same rows beside flowdp's
     * tracker. */
    if (!suite_runs("ct")) {
        bench_ct_peer_ovs();
    }
}
