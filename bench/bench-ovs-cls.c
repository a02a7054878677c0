/*
 * flowdp-bench peer-ovs suite, Open vSwitch side: flows parsed by OVS's
 * own flow_mod parser and looked up in the classifier as ofproto sets it
 * up for an OpenFlow table.
 *
 * Compiled with the OVS tree's include paths and config.h only (see
 * bench-ovs.h); uses OVS's public and lib/ APIs, no OVS code is copied.
 * Each flow text goes through parse_ofp_flow_mod_str() (what ovs-ofctl
 * add-flow runs) into a struct ofputil_flow_mod, whose match and priority
 * become a struct cls_rule.  The classifier is configured as
 * ofproto/ofproto.c's oftable_init() does: classifier_init() with
 * flow_segment_u64s (staged lookup) and prefix tries on nw_dst and nw_src
 * (ofproto's default_prefix_fields).  Lookups are classifier_lookup() at
 * the latest version without wildcard tracking, one packet at a time.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classifier.h"
#include "flow.h"
#include "openflow/openflow.h"
#include "openvswitch/match.h"
#include "openvswitch/ofp-flow.h"
#include "openvswitch/ofp-protocol.h"
#include "openvswitch/util.h"
#include "ovs-rcu.h"
#include "util.h"
#include "versions.h"

#include "bench/bench-ovs-peer.h"

/* ---------------------------------------------------------------------- */
/* Flows and packets.                                                      */

char *
bench_ovs_flows_parse(const char *const texts[], size_t n,
                      struct bench_ovs_flows **flowsp)
{
    struct bench_ovs_flows *flows = xzalloc(sizeof *flows);

    flows->matches = xcalloc(n ? n : 1, sizeof *flows->matches);
    flows->priorities = xcalloc(n ? n : 1, sizeof *flows->priorities);
    for (size_t i = 0; i < n; i++) {
        struct ofputil_flow_mod fm;
        enum ofputil_protocol usable;
        char *error = parse_ofp_flow_mod_str(&fm, texts[i], NULL, NULL,
                                             OFPFC_ADD, &usable);
        if (error) {
            char *msg = xasprintf("OVS refuses flow %zu \"%s\": %s", i,
                                  texts[i], error);
            free(error);
            bench_ovs_flows_destroy(flows);
            *flowsp = NULL;
            return msg;
        }
        minimatch_expand(&fm.match, &flows->matches[i]);
        flows->priorities[i] = fm.priority;
        minimatch_destroy(&fm.match);
        free(fm.ofpacts);
    }
    flows->n = n;
    *flowsp = flows;
    return NULL;
}

void
bench_ovs_flows_destroy(struct bench_ovs_flows *flows)
{
    if (flows) {
        free(flows->matches);
        free(flows->priorities);
        free(flows);
    }
}

void
bench_ovs_packet_to_flow(const struct bench_ovs_packet *p, struct flow *flow)
{
    memset(flow, 0, sizeof *flow);
    flow->dl_type = htons(ETH_TYPE_IP);
    flow->nw_proto = IPPROTO_TCP;
    flow->nw_src = htonl(p->nw_src);
    flow->nw_dst = htonl(p->nw_dst);
    flow->tp_src = htons(p->tp_src);
    flow->tp_dst = htons(p->tp_dst);
}

double
bench_ovs_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ---------------------------------------------------------------------- */
/* The classifier.                                                         */

struct bench_ovs {
    enum bench_ovs_kind kind;
    struct bench_ovs_dpcls *dpcls;      /* BENCH_OVS_DPCLS. */

    /* BENCH_OVS_CLASSIFIER. */
    struct classifier cls;
    struct cls_rule *rules;             /* One per flow, by flow index. */
    size_t n_rules;
    struct flow *packets;
    size_t n_packets;
};

/* ofproto's default prefix fields (ofproto/ofproto.c). */
static const enum mf_field_id prefix_fields[] = {
    MFF_IPV4_DST, MFF_IPV4_SRC,
};

struct bench_ovs *
bench_ovs_create(enum bench_ovs_kind kind,
                 const struct bench_ovs_flows *flows,
                 const struct bench_ovs_packet *packets, size_t n_packets,
                 double *insert_ns)
{
    struct bench_ovs *bo = xzalloc(sizeof *bo);

    bo->kind = kind;
    if (kind == BENCH_OVS_DPCLS) {
        bo->dpcls = bench_ovs_dpcls_create(flows, packets, n_packets,
                                           insert_ns);
        return bo;
    }

    classifier_init(&bo->cls, flow_segment_u64s);
    if (!classifier_set_prefix_fields(&bo->cls, prefix_fields,
                                      ARRAY_SIZE(prefix_fields))) {
        ovs_fatal(0, "peer-ovs: classifier_set_prefix_fields failed");
    }
    bo->rules = xcalloc(flows->n ? flows->n : 1, sizeof *bo->rules);
    bo->n_rules = flows->n;

    /* Timed: what ofproto does with a parsed flow_mod, the rule's own copy
     * of the match (cls_rule_init) and the insertion. */
    double t0 = bench_ovs_now_ns();
    for (size_t i = 0; i < flows->n; i++) {
        cls_rule_init(&bo->rules[i], &flows->matches[i],
                      flows->priorities[i]);
        classifier_insert(&bo->cls, &bo->rules[i], OVS_VERSION_MIN, NULL, 0);
    }
    if (insert_ns) {
        *insert_ns = bench_ovs_now_ns() - t0;
    }

    bo->packets = xcalloc(n_packets ? n_packets : 1, sizeof *bo->packets);
    bo->n_packets = n_packets;
    for (size_t i = 0; i < n_packets; i++) {
        bench_ovs_packet_to_flow(&packets[i], &bo->packets[i]);
    }
    return bo;
}

void
bench_ovs_destroy(struct bench_ovs *bo)
{
    if (!bo) {
        return;
    }
    if (bo->kind == BENCH_OVS_DPCLS) {
        bench_ovs_dpcls_destroy(bo->dpcls);
    } else {
        for (size_t i = 0; i < bo->n_rules; i++) {
            classifier_remove_assert(&bo->cls, &bo->rules[i]);
        }
        /* The classifier frees its own parts after an RCU grace period;
         * on this single thread, quiescing ends it. */
        ovsrcu_quiesce();
        for (size_t i = 0; i < bo->n_rules; i++) {
            cls_rule_destroy(&bo->rules[i]);
        }
        classifier_destroy(&bo->cls);
        ovsrcu_quiesce();
        free(bo->rules);
        free(bo->packets);
    }
    free(bo);
}

long
bench_ovs_lookup(struct bench_ovs *bo, size_t i)
{
    if (bo->kind == BENCH_OVS_DPCLS) {
        return bench_ovs_dpcls_lookup(bo->dpcls, i);
    }
    const struct cls_rule *r = classifier_lookup(&bo->cls, OVS_VERSION_MAX,
                                                 &bo->packets[i], NULL);
    return r ? (long) (r - bo->rules) : -1;
}

void
bench_ovs_run(struct bench_ovs *bo)
{
    if (bo->kind == BENCH_OVS_DPCLS) {
        bench_ovs_dpcls_run(bo->dpcls);
    }
}

uint64_t
bench_ovs_lookups(void *bo_, uint64_t n)
{
    struct bench_ovs *bo = bo_;
    uint64_t hits = 0;
    size_t off = 0;

    if (bo->kind == BENCH_OVS_DPCLS) {
        return bench_ovs_dpcls_lookups(bo->dpcls, n);
    }
    for (uint64_t i = 0; i < n; i++) {
        hits += classifier_lookup(&bo->cls, OVS_VERSION_MAX,
                                  &bo->packets[off], NULL) != NULL;
        if (++off == bo->n_packets) {
            off = 0;
        }
    }
    return hits;
}
