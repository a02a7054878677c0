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
 * local to it (bench/automake.mk).
 *
 * All functions run on the benchmark's one thread.  Failures that leave
 * nothing to measure (a flow OVS cannot parse) return a message; the
 * others abort, as benchmarks do.
 */
#ifndef FDP_BENCH_OVS_H
#define FDP_BENCH_OVS_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/bench-ct-packets.h"

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

/* ---------------------------------------------------------------------- */
/* Connection tracking (bench-ovs-ct.c): Open vSwitch's userspace tracker,
 * lib/conntrack.c, driven through conntrack_execute() as dpif-netdev
 * drives it for a ct() action: batches of up to 32 packets, all IPv4,
 * on one thread.  Frames are plain bytes (bench-ct-packets.h, which
 * needs nothing but the C library, so both sides include it), copied
 * into the tracker's own dp_packets batch by batch as a port's receive
 * would write them. */

struct bench_ovs_ct;

/* A tracker (conntrack_init()) that holds up to 'max_conns' connections
 * (conntrack_set_maxconns()), with the UDP and TCP opening timeouts of
 * its default policy raised to an hour, so that its sweeper never expires
 * a connection a case still uses, however long the case runs. */
struct bench_ovs_ct *bench_ovs_ct_create(uint32_t max_conns);
void bench_ovs_ct_destroy(struct bench_ovs_ct *);

/* Runs frames 'first' to 'first + n - 1' of 'frames' (modulo their
 * number) through the tracker in zone 'zone', committing if 'commit',
 * with source NAT if 'nat' is nonnull, in batches of 32 (the last may be
 * shorter); adds the states to '*counts' if nonnull.  The frames must all
 * be IPv4 of one layout, as every set of bench-ct-packets.h is (the
 * dp_packets' offsets are set from the first frame the tracker sees of
 * each length). */
void bench_ovs_ct_execute(struct bench_ovs_ct *,
                          const struct bench_ct_frames *, size_t first,
                          size_t n, uint16_t zone, bool commit,
                          const struct bench_ct_nat *nat,
                          struct bench_ct_counts *counts);

/* The number of connections the tracker holds (conntrack_get_nconns()). */
uint32_t bench_ovs_ct_n_conns(struct bench_ovs_ct *);

/* Flushes zone 'zone' (conntrack_flush(), what ovs-appctl
 * dpctl/flush-conntrack zone=N runs) while a second thread runs 'busy'
 * in zone 'busy_zone' without commit, batch after batch, as a pmd would.
 * Stores the flush's duration (wall clock) in '*flush_ns', the longest
 * batch the other thread took during the flush in '*stall_ns' and the
 * longest it took in the 200 ms before the flush in '*base_ns', and how
 * often that thread slept (voluntary
 * context switches: it waited on a lock) during the flush in '*blocks'
 * and before it in '*base_blocks'. */
void bench_ovs_ct_flush_zone(struct bench_ovs_ct *, uint16_t zone,
                             const struct bench_ct_frames *busy,
                             uint16_t busy_zone,
                             double *flush_ns, double *stall_ns,
                             double *base_ns, long *blocks,
                             long *base_blocks);

#endif /* FDP_BENCH_OVS_H */
