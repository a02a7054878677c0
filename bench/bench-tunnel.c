/*
 * flowdp-bench tunnel suite: encapsulation and decapsulation against the
 * same forwarding without a tunnel.
 *
 * Every case pushes 1000 distinct 60-byte inner UDP frames (64 bytes on
 * the wire with the FCS) through a datapath of ring ports on one core,
 * with every result in the exact-match cache (insertion probability 1,
 * warmed up), as the datapath suite's emc-hit:
 *   plain          port 1 -> "actions=output:2": the baseline;
 *   vxlan-decap    VXLAN/IPv4 frames for the datapath's underlay address
 *                  arrive on port 2, are popped and received on tunnel
 *                  port 10, "in_port=10,tun_id=42,actions=output:1";
 *   vxlan-encap    port 1 -> "set_field:10.0.0.2->tun_dst,
 *                  set_field:42->tun_id,output:10": pushed and sent out of
 *                  port 2, the route and neighbour resolved once;
 *   geneve-decap   as vxlan-decap with two 4-byte Geneve options mapped to
 *                  tun_metadata0 and tun_metadata1 and matched;
 *   geneve-encap   as vxlan-encap (without options: flows cannot set
 *                  tun_metadataN yet);
 *   gre-decap, gre-encap   GRE with a key, over IPv4.
 * The goals: VXLAN decap and encap each at most 1.5 times plain's
 * ns per packet, Geneve with two options at most 1.7 times.  The suite
 * prints each ratio as a case "<case>-vs-plain" (ns_per_op the ratio).
 * Then real VXLAN packets on veth pairs (bench-veth.c, as root): the
 * kernel's vxlan device bridged to the far veth, against flowdp
 * decapsulating on afxdp and afpacket ports.
 */
#include <config.h>

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "bench/bench.h"
#include "lib/util.h"
#include "tests/lib/peer.h"
#include "utilities/tool.h"

#define INNER_LEN 60
#define N_FLOWS 1000
#define RING_SIZE 1024
#define MAX_OUTER 66            /* Ethernet, IPv4, UDP, Geneve and two
                                 * 8-byte options. */

/* The underlay: the datapath is 10.0.0.1 on port 2 with MAC
 * 02:00:00:00:00:01, the far endpoint 10.0.0.2 with MAC
 * 02:00:00:00:00:02 (a static neighbour). */
#define LOCAL_IP "10.0.0.1"
#define REMOTE_IP "10.0.0.2"

enum tnl_kind { TNL_NONE, TNL_VXLAN, TNL_GENEVE, TNL_GRE };

struct tb {
    struct fdp_pipeline *pipeline;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings in, out;
    uint8_t *frames;
    size_t frame_len;
    size_t next;
};

/* 'ip' (dotted quad) as an IPv4-mapped address. */
static struct in6_addr
mapped(const char *ip)
{
    struct in6_addr a;

    memset(&a, 0, sizeof a);
    a.s6_addr[10] = a.s6_addr[11] = 0xff;
    inet_pton(AF_INET, ip, &a.s6_addr[12]);
    return a;
}

static void
put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

static uint16_t
ip_csum(const uint8_t *p, size_t n)
{
    uint32_t s = 0;

    for (size_t i = 0; i < n; i += 2) {
        s += (uint32_t) p[i] << 8 | p[i + 1];
    }
    while (s >> 16) {
        s = (s & 0xffff) + (s >> 16);
    }
    return (uint16_t) ~s;
}

/* Inner frame 'i': UDP/IPv4 from 10.1.x.y port 1000 + i to 10.2.0.1. */
static void
make_inner(uint8_t *p, unsigned int i)
{
    static const uint8_t hdr[] = {
        0x50, 0x54, 0x00, 0x00, 0x00, 0x02, 0x50, 0x54, 0x00, 0x00, 0x00,
        0x01, 0x08, 0x00, 0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0,
        10, 1, 0, 0, 10, 2, 0, 1, 0, 0, 0x13, 0x88, 0, 26, 0, 0,
    };
    memset(p, 0, INNER_LEN);
    memcpy(p, hdr, sizeof hdr);
    p[28] = (uint8_t) (i >> 8);
    p[29] = (uint8_t) i;
    put16(p + 34, (uint16_t) (1000 + i));
    put16(p + 24, ip_csum(p + 14, 20));
}

/* The outer headers of 'kind' in front of inner frame 'i', from the far
 * endpoint to the datapath.  Returns the whole frame's length. */
static size_t
make_outer(uint8_t *p, enum tnl_kind kind, unsigned int i)
{
    static const uint8_t eth[] = {
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01,     /* The datapath's port 2. */
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x00,
    };
    size_t tnl_len = kind == TNL_VXLAN ? 8 + 8
                     : kind == TNL_GENEVE ? 8 + 8 + 16
                     : 8;                       /* GRE with a key. */
    size_t off = 14 + 20;

    memcpy(p, eth, sizeof eth);
    uint8_t *ip = p + 14;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t) (20 + tnl_len + INNER_LEN));
    ip[6] = 0x40;                               /* DF. */
    ip[8] = 64;
    ip[9] = kind == TNL_GRE ? 47 : 17;
    inet_pton(AF_INET, REMOTE_IP, ip + 12);
    inet_pton(AF_INET, LOCAL_IP, ip + 16);
    put16(ip + 10, ip_csum(ip, 20));

    uint8_t *t = p + off;
    memset(t, 0, tnl_len);
    if (kind == TNL_GRE) {
        t[0] = 0x20;                            /* Key present. */
        put16(t + 2, 0x6558);
        t[7] = 42;
    } else {
        put16(t, (uint16_t) (49152 + i));       /* Source port. */
        put16(t + 2, kind == TNL_VXLAN ? 4789 : 6081);
        put16(t + 4, (uint16_t) (tnl_len + INNER_LEN));
        uint8_t *h = t + 8;
        if (kind == TNL_VXLAN) {
            h[0] = 0x08;
            h[6] = 42;
        } else {
            h[0] = 4;                           /* 16 bytes of options. */
            put16(h + 2, 0x6558);
            h[6] = 42;
            /* Two options of class 0x0102, types 0x80 and 0x81, 4 bytes. */
            for (int o = 0; o < 2; o++) {
                uint8_t *opt = h + 8 + 8 * o;
                put16(opt, 0x0102);
                opt[2] = (uint8_t) (0x80 + o);
                opt[3] = 1;
                opt[7] = (uint8_t) (1 + o);
            }
        }
    }
    make_inner(p + off + tnl_len, i);
    return off + tnl_len + INNER_LEN;
}

static uint64_t
run_packets(void *tb_, uint64_t n)
{
    struct tb *tb = tb_;

    return test_peer_forward(tb->pmd, &tb->in, &tb->out, tb->frames,
                             tb->frame_len, N_FLOWS, &tb->next, RING_SIZE,
                             n);
}

static void
add_flow(struct tb *tb, const char *text)
{
    struct fdp_flow_spec spec;
    char *msg = NULL;

    if (fdp_flow_parse(text, 0, &spec, &msg)
        || fdp_pipeline_insert(tb->pipeline, &spec, 0)) {
        fatal("tunnel: %s: %s", text, msg ? msg : "insert failed");
    }
    fdp_flow_spec_destroy(&spec);
}

/* One case: 'kind' of tunnel (TNL_NONE: plain), 'encap' for the sending
 * direction.  Returns its ns per packet. */
static double
tunnel_case(const char *name, enum tnl_kind kind, bool encap)
{
    static const char *const specs[] = {
        [TNL_VXLAN] = "vxlan:remote_ip=flow,key=flow",
        [TNL_GENEVE] = "geneve:remote_ip=flow,key=flow",
        [TNL_GRE] = "gre:remote_ip=flow,key=flow",
    };
    struct tb tb = { 0 };
    struct fdp_dp_options o;
    char *msg = NULL;

    if (fdp_pipeline_create(&tb.pipeline)) {
        fatal("tunnel: out of memory");
    }
    struct fdp_tlv_map *map = fdp_pipeline_tlv_map(tb.pipeline);
    if (kind == TNL_GENEVE
        && fdp_tlv_map_add(map, "{class=0x0102,type=0x80,len=4}"
                           "->tun_metadata0,{class=0x0102,type=0x81,len=4}"
                           "->tun_metadata1", &msg)) {
        fatal("tunnel: tlv map: %s", msg);
    }
    fdp_tlv_map_use_for_text(map);
    fdp_dp_options_init(&o);
    o.emc_insert_inv_prob = 1;
    o.emc_mode = FDP_DP_CACHE_ON;
    o.smc_mode = FDP_DP_CACHE_OFF;
    o.n_frames = 16384;
    if (fdp_dp_create_pipeline(tb.pipeline, &o, &tb.dp)
        || fdp_dp_port_add(tb.dp, 1, "ring:size=1024", NULL)
        || fdp_dp_port_add(tb.dp, 2, "ring:size=1024", NULL)
        || (kind != TNL_NONE
            && fdp_dp_port_add(tb.dp, 10, specs[kind], &msg))
        || fdp_dp_pmd_create(tb.dp, 0, &tb.pmd)) {
        fatal("tunnel: setting up: %s", msg ? msg : "out of memory");
    }
    if (kind != TNL_NONE) {
        static const uint8_t remote_mac[6] = { 2, 0, 0, 0, 0, 2 };
        static const uint8_t local_mac[6] = { 2, 0, 0, 0, 0, 1 };
        struct in6_addr local = mapped(LOCAL_IP), remote = mapped(REMOTE_IP);
        int error = fdp_dp_port_set_mac(tb.dp, 2, local_mac);
        if (!error) {
            error = fdp_dp_addr_add(tb.dp, 2, &local, 24);
        }
        if (!error) {
            error = fdp_dp_neigh_set(tb.dp, 2, &remote, remote_mac);
        }
        if (error) {
            fatal("tunnel: setting up the underlay: %s", strerror(error));
        }
    }

    bool decap = kind != TNL_NONE && !encap;
    fdp_dp_port_rings(tb.dp, decap ? 2 : 1, &tb.in);
    fdp_dp_port_rings(tb.dp, decap ? 1 : 2, &tb.out);
    if (kind == TNL_NONE) {
        add_flow(&tb, "in_port=1,actions=output:2");
    } else if (decap) {
        add_flow(&tb, kind == TNL_GENEVE
                      ? "in_port=10,tun_id=42,tun_metadata0=0x1,"
                        "tun_metadata1=0x2,actions=output:1"
                      : "in_port=10,tun_id=42,actions=output:1");
    } else {
        add_flow(&tb, "in_port=1,actions=set_field:" REMOTE_IP "->tun_dst,"
                      "set_field:42->tun_id,output:10");
    }

    uint8_t one[INNER_LEN + MAX_OUTER];
    tb.frame_len = decap ? make_outer(one, kind, 0) : INNER_LEN;
    tb.frames = malloc((size_t) N_FLOWS * tb.frame_len);
    if (!tb.frames) {
        fatal("tunnel: out of memory");
    }
    for (unsigned int i = 0; i < N_FLOWS; i++) {
        uint8_t *f = tb.frames + (size_t) i * tb.frame_len;
        if (decap) {
            make_outer(f, kind, i);
        } else {
            make_inner(f, i);
        }
    }

    /* Warm up (the first packets resolve the route and neighbour and
     * build the outer header), then check that every packet came out. */
    sink += run_packets(&tb, 4 * N_FLOWS);
    struct fdp_dp_stats ds0, ds;
    struct fdp_port_stats ps0, ps;
    uint32_t out_no = decap ? 1 : 2;
    fdp_dp_get_stats(tb.dp, &ds0);
    fdp_dp_port_get_stats(tb.dp, out_no, &ps0, NULL);
    double ns = measure(run_packets, &tb);
    fdp_dp_get_stats(tb.dp, &ds);
    fdp_dp_port_get_stats(tb.dp, out_no, &ps, NULL);
    if (ps.tx_packets - ps0.tx_packets + RING_SIZE
        < ds.n_packets - ds0.n_packets) {
        fatal("tunnel: %s: port %" PRIu32 " sent %" PRIu64 " of %" PRIu64
              " packets", name, out_no, ps.tx_packets - ps0.tx_packets,
              ds.n_packets - ds0.n_packets);
    }
    report(&(struct result) {
        .suite = "tunnel", .case_name = name, .impl = "emc=on",
        .entries = N_FLOWS, .ns_per_op = ns,
    });
    fdp_dp_pmd_destroy(tb.pmd);
    fdp_dp_destroy(tb.dp);
    fdp_tlv_map_use_for_text(NULL);
    fdp_pipeline_destroy(tb.pipeline);
    free(tb.frames);
    return ns;
}

void
suite_tunnel(void)
{
    static const struct {
        const char *name;
        enum tnl_kind kind;
        bool encap;
    } cases[] = {
        { "vxlan-decap", TNL_VXLAN, false },
        { "vxlan-encap", TNL_VXLAN, true },
        { "geneve-decap", TNL_GENEVE, false },
        { "geneve-encap", TNL_GENEVE, true },
        { "gre-decap", TNL_GRE, false },
        { "gre-encap", TNL_GRE, true },
    };
    double ns[FDP_ARRAY_SIZE(cases)];

    report_header("tunnel");
    double plain = tunnel_case("plain", TNL_NONE, false);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(cases); i++) {
        ns[i] = tunnel_case(cases[i].name, cases[i].kind, cases[i].encap);
    }
    for (size_t i = 0; i < FDP_ARRAY_SIZE(cases); i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-vs-plain", cases[i].name);
        report(&(struct result) {
            .suite = "tunnel", .case_name = name, .impl = "ratio",
            .entries = N_FLOWS, .ns_per_op = ns[i] / plain,
        });
    }
    suite_tunnel_veth();
}
