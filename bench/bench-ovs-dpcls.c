/*
 * flowdp-bench peer-ovs suite, Open vSwitch side: dpcls, the megaflow
 * classifier of OVS's userspace datapath (OVS-DPDK, AF_XDP).
 *
 * In OVS 3.1 dpcls_init(), dpcls_insert() and the netdev_flow_key helpers
 * are static functions of lib/dpif-netdev.c, so this file compiles that
 * file of the user's OVS tree (--with-ovs-source=DIR) into itself and
 * calls them from the functions below, which the rest of the benchmark
 * sees.  Nothing of OVS is copied into flowdp: the include reads DIR at
 * build time.  This object then defines every global symbol that
 * dpif-netdev.o of libopenvswitch.a defines, so the archive's copy is
 * never pulled into the link.
 *
 * Flows are inserted as dp_netdev_flow_add() inserts a megaflow: a mask
 * from the match (netdev_flow_mask_init), the rule's key masked by it
 * (netdev_flow_key_init_masked), then dpcls_insert().  Packets become
 * netdev_flow_keys of their struct flow (netdev_flow_key_init), looked up
 * with dpcls_lookup() in bursts of NETDEV_MAX_BURST (32), as
 * fast_path_processing() does after an EMC/SMC miss.
 */
#include "lib/dpif-netdev.c"

#include "bench/bench-ovs-peer.h"

/* dpcls_rule's key must be its last member (dpif-netdev allocates room
 * past it), so a rule's flow index is its place in 'rules'. */
struct bench_ovs_dpcls {
    struct dpcls cls;
    struct dpcls_rule *rules;
    size_t n_rules;
    struct netdev_flow_key *keys;       /* One per packet. */
    const struct netdev_flow_key **key_ptrs;
    size_t n_keys;                      /* A multiple of NETDEV_MAX_BURST. */
    size_t n_packets;
};

struct bench_ovs_dpcls *
bench_ovs_dpcls_create(const struct bench_ovs_flows *flows,
                       const struct bench_ovs_packet *packets,
                       size_t n_packets, double *insert_ns)
{
    struct bench_ovs_dpcls *bd = xzalloc(sizeof *bd);

    dpcls_init(&bd->cls);
    bd->rules = xcalloc(flows->n ? flows->n : 1, sizeof *bd->rules);
    bd->n_rules = flows->n;

    /* Timed: from the parsed match to the inserted rule. */
    double t0 = bench_ovs_now_ns();
    for (size_t i = 0; i < flows->n; i++) {
        struct netdev_flow_key mask;

        netdev_flow_mask_init(&mask, &flows->matches[i]);
        netdev_flow_key_init_masked(&bd->rules[i].flow,
                                    &flows->matches[i].flow, &mask);
        dpcls_insert(&bd->cls, &bd->rules[i], &mask);
    }
    if (insert_ns) {
        *insert_ns = bench_ovs_now_ns() - t0;
    }

    /* Whole bursts only; the packets repeat to fill the last one. */
    bd->n_packets = n_packets;
    bd->n_keys = ROUND_UP(n_packets ? n_packets : 1, NETDEV_MAX_BURST);
    bd->keys = xcalloc(bd->n_keys, sizeof *bd->keys);
    bd->key_ptrs = xcalloc(bd->n_keys, sizeof *bd->key_ptrs);
    for (size_t i = 0; i < bd->n_keys; i++) {
        struct flow flow;

        if (n_packets) {
            bench_ovs_packet_to_flow(&packets[i % n_packets], &flow);
        } else {
            memset(&flow, 0, sizeof flow);
        }
        netdev_flow_key_init(&bd->keys[i], &flow);
        bd->key_ptrs[i] = &bd->keys[i];
    }
    return bd;
}

void
bench_ovs_dpcls_destroy(struct bench_ovs_dpcls *bd)
{
    if (!bd) {
        return;
    }
    for (size_t i = 0; i < bd->n_rules; i++) {
        dpcls_remove(&bd->cls, &bd->rules[i]);
    }
    dpcls_destroy(&bd->cls);
    ovsrcu_quiesce();
    free(bd->rules);
    free(bd->keys);
    free(bd->key_ptrs);
    free(bd);
}

long
bench_ovs_dpcls_lookup(struct bench_ovs_dpcls *bd, size_t i)
{
    struct dpcls_rule *rule = NULL;
    const struct netdev_flow_key *key = &bd->keys[i];
    int n_lookups = 0;

    dpcls_lookup(&bd->cls, &key, &rule, 1, &n_lookups);
    return rule ? (long) (rule - bd->rules) : -1;
}

void
bench_ovs_dpcls_run(struct bench_ovs_dpcls *bd)
{
    dpcls_sort_subtable_vector(&bd->cls);
}

uint64_t
bench_ovs_dpcls_lookups(struct bench_ovs_dpcls *bd, uint64_t n)
{
    struct dpcls_rule *rules[NETDEV_MAX_BURST];
    uint64_t hits = 0;
    size_t off = 0;

    for (uint64_t i = 0; i < n; i += NETDEV_MAX_BURST) {
        int n_lookups = 0;

        dpcls_lookup(&bd->cls, &bd->key_ptrs[off], rules, NETDEV_MAX_BURST,
                     &n_lookups);
        hits += rules[0] != NULL;
        off += NETDEV_MAX_BURST;
        if (off == bd->n_keys) {
            off = 0;
        }
    }
    return hits;
}
