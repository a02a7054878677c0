/*
 * What the two Open vSwitch-side files of the peer-ovs suite share
 * (bench-ovs-cls.c, bench-ovs-dpcls.c): compiled with OVS's headers only,
 * never with flowdp's (see bench-ovs.h).
 */
#ifndef FDP_BENCH_OVS_PEER_H
#define FDP_BENCH_OVS_PEER_H 1

#include "flow.h"
#include "openvswitch/match.h"
#include "bench/bench-ovs.h"

struct bench_ovs_flows {
    size_t n;
    struct match *matches;      /* Expanded from the flow_mod's minimatch. */
    int *priorities;
};

/* Fills 'flow' (zeroed first) with packet 'p': an IPv4 TCP packet, every
 * field in network byte order as flow_extract() leaves it. */
void bench_ovs_packet_to_flow(const struct bench_ovs_packet *p,
                              struct flow *flow);

/* The dpcls kind, in bench-ovs-dpcls.c (which compiles lib/dpif-netdev.c
 * of the OVS tree, to reach its static dpcls functions). */
struct bench_ovs_dpcls;
struct bench_ovs_dpcls *bench_ovs_dpcls_create(
    const struct bench_ovs_flows *, const struct bench_ovs_packet *,
    size_t n_packets, double *insert_ns);
void bench_ovs_dpcls_destroy(struct bench_ovs_dpcls *);
long bench_ovs_dpcls_lookup(struct bench_ovs_dpcls *, size_t i);
void bench_ovs_dpcls_run(struct bench_ovs_dpcls *);
uint64_t bench_ovs_dpcls_lookups(struct bench_ovs_dpcls *, uint64_t n);

/* ns since an arbitrary start, CLOCK_MONOTONIC. */
double bench_ovs_now_ns(void);

#endif /* FDP_BENCH_OVS_PEER_H */
