/*
 * flowdp-bench peer-ovs suite: the Open vSwitch side.
 *
 * bench-ovs.c (the suite, flowdp's side) builds flows as ovs-ofctl text
 * and packets as field values, then hands both to Open vSwitch through
 * this interface of plain C types.  The two sides never share a file:
 * OVS's headers need OVS's own config.h and define names flowdp's
 * programs define too (program_name, xasprintf, json_object...).  So the
 * OVS side (bench-ovs-cls.c, bench-ovs-dpcls.c) is compiled with OVS's
 * include paths alone, linked with libopenvswitch.a into one relocatable
 * object, and every symbol but the bench_ovs_ functions below is made
 * local to it (utilities/automake.mk).
 *
 * All functions run on the benchmark's one thread.  Failures that leave
 * nothing to measure (a flow OVS cannot parse) return a message; the
 * others abort, as benchmarks do.
 */
#ifndef FDP_BENCH_OVS_H
#define FDP_BENCH_OVS_H 1

#include <stddef.h>
#include <stdint.h>

/* A TCP packet's 5-tuple, in host byte order. */
struct bench_ovs_packet {
    uint32_t nw_src;
    uint32_t nw_dst;
    uint16_t tp_src;
    uint16_t tp_dst;
};

/* Flows parsed by OVS's parse_ofp_flow_mod_str() (as ovs-ofctl add-flow
 * parses them), kept as 'struct match' and priority. */
struct bench_ovs_flows;

/* Parses the 'n' flows 'texts' into '*flowsp'.  Returns NULL, or a
 * message naming the flow OVS refused (the caller frees it). */
char *bench_ovs_flows_parse(const char *const texts[], size_t n,
                            struct bench_ovs_flows **flowsp);
void bench_ovs_flows_destroy(struct bench_ovs_flows *);

/* One OVS lookup structure over one set of flows and packets: the
 * classifier ofproto uses for OpenFlow tables (lib/classifier.c), or the
 * megaflow classifier of the userspace datapath (dpcls, in
 * lib/dpif-netdev.c; only for flows that never overlap, since it has no
 * priorities). */
enum bench_ovs_kind {
    BENCH_OVS_CLASSIFIER,
    BENCH_OVS_DPCLS,
};

struct bench_ovs;

/* Builds a 'kind' structure holding every flow of 'flows' and prepares
 * 'packets' for it (copied).  Stores in '*insert_ns' (if nonnull) the ns
 * the insertions took, from the empty structure to the last insert. */
struct bench_ovs *bench_ovs_create(enum bench_ovs_kind,
                                   const struct bench_ovs_flows *,
                                   const struct bench_ovs_packet *packets,
                                   size_t n_packets, double *insert_ns);
void bench_ovs_destroy(struct bench_ovs *);

/* The index (in bench_ovs_flows_parse()'s 'texts') of the flow packet
 * 'i' matches, or -1 if none. */
long bench_ovs_lookup(struct bench_ovs *, size_t i);

/* Upkeep a running switch does between batches: dpcls re-sorts its
 * subtables by hits (as a pmd thread does every second); the classifier
 * has none. */
void bench_ovs_run(struct bench_ovs *);

/* 'n' lookups of the packets in turn, for measure(): the classifier one
 * packet at a time (it has no batch API), dpcls in batches of 32 (a
 * datapath burst).  Returns the number of hits. */
uint64_t bench_ovs_lookups(void *bench_ovs, uint64_t n);

#endif /* FDP_BENCH_OVS_H */
