/*
 * Tests of the underlay (datapath/underlay.c): the route table's longest
 * prefix match against a brute-force scan of the routes with random
 * addresses and routes; the control functions' errors; the neighbour
 * cache's bound, aging and renewal on a clock the test drives; ARP and ND
 * answers checked byte by byte (the ICMPv6 checksum by a byte-by-byte
 * sum); snooping; the resolver's answers, counters and requests; and
 * readers resolving while a writer changes everything (TSan).
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "datapath/underlay.h"
#include "lib/rcu.h"
#include "lib/util.h"
#include "tests/lib/peer.h"
#include "unit.h"

/* ---- Helpers ---- */

static struct in6_addr
ip(const char *s)
{
    struct in6_addr a;
    struct in_addr a4;

    memset(&a, 0, sizeof a);
    if (inet_pton(AF_INET, s, &a4) == 1) {
        a.s6_addr[10] = a.s6_addr[11] = 0xff;
        memcpy(&a.s6_addr[12], &a4, 4);
    } else {
        ck_assert_int_eq(inet_pton(AF_INET6, s, &a), 1);
    }
    return a;
}

static int
addr_add(struct fdp_dp *dp, uint32_t port, const char *s, unsigned int plen)
{
    struct in6_addr a = ip(s);

    return fdp_dp_addr_add(dp, port, &a, plen);
}

static int64_t test_clock;

static int64_t
test_now(void *aux)
{
    (void) aux;
    return test_clock;
}

#define N_PORTS 2

struct net {
    struct fdp_table *table;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings rings[N_PORTS + 1];
};

/* A datapath of two ring ports whose one flow sends everything from port
 * 1 to port 2, so that what reaches the pipeline shows on port 2. */
static void
net_open(struct net *n)
{
    struct fdp_flow_spec spec;
    char *msg = NULL;

    ck_assert_int_eq(fdp_table_create(&n->table), 0);
    ck_assert_int_eq(fdp_flow_parse("in_port=1,actions=output:2", 0, &spec,
                                    &msg), 0);
    ck_assert_int_eq(fdp_table_insert(n->table, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);
    ck_assert_int_eq(fdp_dp_create(n->table, NULL, &n->dp), 0);
    for (uint32_t p = 1; p <= N_PORTS; p++) {
        ck_assert_int_eq(fdp_dp_port_add(n->dp, p, "ring:size=64", NULL), 0);
        ck_assert_int_eq(fdp_dp_port_rings(n->dp, p, &n->rings[p]), 0);
    }
    ck_assert_int_eq(fdp_dp_pmd_create(n->dp, 0, &n->pmd), 0);
    test_clock = 1000000;
    fdp__underlay_set_clock(n->dp, test_now, NULL);
}

static void
net_close(struct net *n)
{
    fdp_dp_pmd_destroy(n->pmd);
    fdp_dp_destroy(n->dp);
    fdp_table_destroy(n->table);
}

struct capture {
    int n;
    uint8_t last[256];
    uint32_t len;
};

static void
capture_cb(void *aux, const uint8_t *pkt, uint32_t len)
{
    struct capture *c = aux;

    c->n++;
    c->len = len < sizeof c->last ? len : (uint32_t) sizeof c->last;
    memcpy(c->last, pkt, c->len);
}

/* Sends 'pkt' in on 'port' (NULL: nothing) and polls; 'out' gets what
 * each port sent. */
static void
net_send(struct net *n, uint32_t port, const uint8_t *pkt, size_t len,
         struct capture out[N_PORTS + 1])
{
    if (pkt) {
        ck_assert(test_peer_send(&n->rings[port], pkt, len));
    }
    fdp_dp_pmd_poll(n->pmd, NULL);
    memset(out, 0, sizeof(struct capture) * (N_PORTS + 1));
    for (uint32_t p = 1; p <= N_PORTS; p++) {
        test_peer_drain(&n->rings[p], capture_cb, &out[p]);
    }
    fdp_dp_pmd_poll(n->pmd, NULL);      /* Frames back to the pool. */
}

static void
put_mac(uint8_t *p, uint64_t m)
{
    for (int i = 5; i >= 0; i--) {
        p[i] = (uint8_t) m;
        m >>= 8;
    }
}

static size_t
arp(uint8_t *p, uint16_t op, uint64_t eth_dst, uint64_t sha, const char *spa,
    uint64_t tha, const char *tpa)
{
    struct in_addr a;

    memset(p, 0, 60);
    put_mac(p, eth_dst);
    put_mac(p + 6, sha);
    p[12] = 0x08;
    p[13] = 0x06;
    uint8_t hdr[8] = { 0, 1, 8, 0, 6, 4, 0, (uint8_t) op };
    memcpy(p + 14, hdr, 8);
    put_mac(p + 22, sha);
    inet_pton(AF_INET, spa, &a);
    memcpy(p + 28, &a, 4);
    put_mac(p + 32, tha);
    inet_pton(AF_INET, tpa, &a);
    memcpy(p + 38, &a, 4);
    return 60;                  /* Padded, as on a wire. */
}

/* The ICMPv6 checksum, byte by byte: the reference. */
static uint16_t
ref_icmp6_csum(const uint8_t *ip6)
{
    uint32_t len = (uint32_t) (ip6[4] << 8 | ip6[5]);
    uint8_t buf[40 + 512];
    uint32_t sum = 0;

    memcpy(buf, ip6 + 8, 32);
    memset(buf + 32, 0, 8);
    buf[34] = (uint8_t) (len >> 8);
    buf[35] = (uint8_t) len;
    buf[39] = 58;
    memcpy(buf + 40, ip6 + 40, len);
    buf[40 + 2] = buf[40 + 3] = 0;
    uint32_t total = 40 + len;
    if (total & 1) {
        buf[total++] = 0;
    }
    for (uint32_t i = 0; i < total; i += 2) {
        sum += (uint32_t) (buf[i] << 8 | buf[i + 1]);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t) ~sum;
}

/* An NS (135) or NA (136) from 'src' to 'dst' for 'target', with a
 * source (1) or target (2) link-layer option of 'lladdr' if nonzero. */
static size_t
nd(uint8_t *p, uint8_t type, uint64_t eth_dst, uint64_t eth_src,
   const char *src, const char *dst, const char *target, uint8_t opt,
   uint64_t lladdr, uint8_t flags)
{
    uint32_t len = 24 + (lladdr ? 8 : 0);

    memset(p, 0, 14 + 40 + len);
    put_mac(p, eth_dst);
    put_mac(p + 6, eth_src);
    p[12] = 0x86;
    p[13] = 0xdd;
    uint8_t *ip6 = p + 14;
    ip6[0] = 0x60;
    ip6[5] = (uint8_t) len;
    ip6[6] = 58;
    ip6[7] = 255;
    inet_pton(AF_INET6, src, ip6 + 8);
    inet_pton(AF_INET6, dst, ip6 + 24);
    uint8_t *icmp = ip6 + 40;
    icmp[0] = type;
    icmp[4] = flags;
    inet_pton(AF_INET6, target, icmp + 8);
    if (lladdr) {
        icmp[24] = opt;
        icmp[25] = 1;
        put_mac(icmp + 26, lladdr);
    }
    uint16_t c = ref_icmp6_csum(ip6);
    icmp[2] = (uint8_t) (c >> 8);
    icmp[3] = (uint8_t) c;
    return 14 + 40 + len;
}

static bool
has_neigh(struct fdp_dp *dp, uint32_t port, const char *addr, uint64_t mac)
{
    struct fdp_dp_neigh v[64];
    size_t n = fdp_dp_neigh_list(dp, v, 64);
    struct in6_addr a = ip(addr);
    uint8_t m[6];

    put_mac(m, mac);
    for (size_t i = 0; i < n && i < 64; i++) {
        if (v[i].port_no == port && !memcmp(&v[i].ip, &a, sizeof a)
            && !memcmp(v[i].mac, m, 6)) {
            return true;
        }
    }
    return false;
}

#define MAC1 0x02fd00000001ULL  /* Port 1's derived MAC. */
#define HOST 0x525400000011ULL  /* A host on port 1's link. */

/* ---- The route table against a brute-force scan ---- */

/* The route to 'dst' by scanning every route: the longest prefix of the
 * family that holds 'dst'; between equal prefixes the user's. */
static const struct fdp_dp_route *
brute_lookup(const struct fdp_dp_route *r, size_t n,
             const struct in6_addr *dst)
{
    const struct fdp_dp_route *best = NULL;
    bool v4 = IN6_IS_ADDR_V4MAPPED(dst);

    for (size_t i = 0; i < n; i++) {
        if (IN6_IS_ADDR_V4MAPPED(&r[i].prefix) != v4) {
            continue;
        }
        unsigned int bits = r[i].plen + (v4 ? 96 : 0);
        bool in = true;
        for (unsigned int b = 0; b < bits; b++) {
            unsigned int byte = b / 8, bit = 7 - b % 8;
            if (((dst->s6_addr[byte] ^ r[i].prefix.s6_addr[byte]) >> bit)
                & 1) {
                in = false;
                break;
            }
        }
        if (!in) {
            continue;
        }
        if (!best || r[i].plen > best->plen
            || (r[i].plen == best->plen && best->connected
                && !r[i].connected)) {
            best = &r[i];
        }
    }
    return best;
}

/* A random address: IPv4 in 10.0.0.0/8 or IPv6 in 2001:db8::/32, with
 * few distinct high bits so that random prefixes overlap. */
static struct in6_addr
random_addr(struct unit_rng *rng, bool v4)
{
    struct in6_addr a;

    memset(&a, 0, sizeof a);
    if (v4) {
        a.s6_addr[10] = a.s6_addr[11] = 0xff;
        a.s6_addr[12] = 10;
        a.s6_addr[13] = (uint8_t) unit_rng_below(rng, 4);
        a.s6_addr[14] = (uint8_t) unit_rng_below(rng, 256);
        a.s6_addr[15] = (uint8_t) (1 + unit_rng_below(rng, 254));
    } else {
        a.s6_addr[0] = 0x20;
        a.s6_addr[1] = 0x01;
        a.s6_addr[2] = 0x0d;
        a.s6_addr[3] = 0xb8;
        a.s6_addr[4] = (uint8_t) unit_rng_below(rng, 4);
        for (int i = 5; i < 16; i++) {
            a.s6_addr[i] = (uint8_t) unit_rng_next(rng);
        }
    }
    return a;
}

START_TEST(lpm_vs_brute_force)
{
    struct unit_rng rng;
    struct net n;
    static struct fdp_dp_route routes[4096];

    unit_rng_init(&rng, 0x1f);
    net_open(&n);
    /* An address of each family on each port, so that routes have
     * sources. */
    ck_assert_int_eq(addr_add(n.dp, 1, "10.0.0.1", 8), 0);
    ck_assert_int_eq(addr_add(n.dp, 2, "10.3.0.1", 16), 0);
    ck_assert_int_eq(addr_add(n.dp, 1, "2001:db8::1", 32), 0);
    ck_assert_int_eq(addr_add(n.dp, 2, "2001:db8:3::1", 48), 0);
    for (int round = 0; round < 600; round++) {
        bool v4 = unit_rng_below(&rng, 2);
        struct in6_addr p = random_addr(&rng, v4);
        unsigned int plen = unit_rng_below(&rng, v4 ? 33 : 129);
        uint32_t port = 1 + unit_rng_below(&rng, 2);
        int op = (int) unit_rng_below(&rng, 4);
        if (op == 0) {
            int e = fdp_dp_route_del(n.dp, &p, plen);
            ck_assert(e == 0 || e == ENOENT);
        } else {
            int e = fdp_dp_route_add(n.dp, &p, plen, port, NULL, NULL);
            ck_assert_msg(e == 0 || e == EEXIST, "route_add: %d", e);
        }
        if (round % 20 != 19) {
            continue;
        }
        size_t nr = fdp_dp_route_list(n.dp, routes, FDP_ARRAY_SIZE(routes));
        ck_assert_uint_le(nr, FDP_ARRAY_SIZE(routes));
        for (int q = 0; q < 300; q++) {
            struct in6_addr dst = random_addr(&rng, unit_rng_below(&rng, 2));
            const struct fdp_dp_route *want = brute_lookup(routes, nr, &dst);
            struct fdp_dp_route got;
            int e = fdp_dp_route_lookup(n.dp, &dst, &got);
            if (!want) {
                ck_assert_int_eq(e, EHOSTUNREACH);
                continue;
            }
            ck_assert_int_eq(e, 0);
            ck_assert_uint_eq(got.plen, want->plen);
            ck_assert(!memcmp(&got.prefix, &want->prefix, 16));
            ck_assert_uint_eq(got.port_no, want->port_no);
            ck_assert_int_eq(got.connected, want->connected);
        }
    }
    net_close(&n);
}
END_TEST

/* ---- Control: errors and consequences ---- */

START_TEST(control_errors)
{
    struct net n;
    struct in6_addr a = ip("192.168.1.1"), b = ip("192.168.1.254");
    struct in6_addr net10 = ip("10.0.0.0"), v6 = ip("2001:db8::1");
    struct fdp_dp_route r[16];
    struct fdp_dp_addr x[16];

    net_open(&n);
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 9, &a, 24), ENOENT);
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &a, 33), EINVAL);
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &v6, 129), EINVAL);
    struct in6_addr bad = ip("224.0.0.1");
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &bad, 24), EINVAL);
    bad = ip("0.0.0.0");
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &bad, 24), EINVAL);
    bad = ip("ff02::1");
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &bad, 64), EINVAL);

    /* No address yet: a route has no source, nor a gateway a way. */
    ck_assert_int_eq(fdp_dp_route_add(n.dp, &net10, 8, 1, NULL, NULL),
                     EADDRNOTAVAIL);
    ck_assert_int_eq(fdp_dp_route_add(n.dp, &net10, 8, 1, &b, NULL),
                     ENETUNREACH);
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &a, 24), 0);
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 2, &a, 24), EEXIST);
    ck_assert_uint_eq(fdp_dp_addr_list(n.dp, x, 16), 1);
    ck_assert_uint_eq(x[0].port_no, 1);
    ck_assert_uint_eq(x[0].plen, 24);

    /* Gateways must be straight out of the port. */
    struct in6_addr far = ip("172.16.0.1");
    ck_assert_int_eq(fdp_dp_route_add(n.dp, &net10, 8, 1, &far, NULL),
                     ENETUNREACH);
    ck_assert_int_eq(fdp_dp_route_add(n.dp, &net10, 8, 2, &b, NULL),
                     ENETUNREACH);
    ck_assert_int_eq(fdp_dp_route_add(n.dp, &net10, 8, 1, &v6, NULL),
                     EAFNOSUPPORT);
    ck_assert_int_eq(fdp_dp_route_add(n.dp, &net10, 8, 1, &b, &far),
                     EADDRNOTAVAIL);
    ck_assert_int_eq(fdp_dp_route_add(n.dp, &net10, 8, 1, &b, NULL), 0);
    ck_assert_int_eq(fdp_dp_route_add(n.dp, &net10, 8, 1, &b, NULL), EEXIST);
    ck_assert_uint_eq(fdp_dp_route_list(n.dp, r, 16), 2);
    ck_assert_uint_eq(r[0].plen, 24);   /* Longest first. */
    ck_assert(r[0].connected);
    ck_assert_uint_eq(r[1].plen, 8);
    ck_assert(!memcmp(&r[1].src, &a, 16));
    ck_assert(!memcmp(&r[1].gw, &b, 16));

    /* A user's route of the connected prefix wins; removing it brings
     * the connected one back. */
    struct in6_addr net192 = ip("192.168.1.0");
    ck_assert_int_eq(fdp_dp_route_add(n.dp, &net192, 24, 1, NULL, NULL), 0);
    struct fdp_dp_route got;
    ck_assert_int_eq(fdp_dp_route_lookup(n.dp, &b, &got), 0);
    ck_assert(!got.connected);
    ck_assert_int_eq(fdp_dp_route_del(n.dp, &net192, 24), 0);
    ck_assert_int_eq(fdp_dp_route_lookup(n.dp, &b, &got), 0);
    ck_assert(got.connected);
    ck_assert_int_eq(fdp_dp_route_del(n.dp, &net192, 24), ENOENT);
    ck_assert_int_eq(fdp_dp_route_del(n.dp, &net192, 40), EINVAL);

    /* Deleting the address takes its routes: connected and sourced. */
    ck_assert_int_eq(fdp_dp_addr_del(n.dp, 1, &a, 16), ENOENT);
    ck_assert_int_eq(fdp_dp_addr_del(n.dp, 2, &a, 24), ENOENT);
    uint64_t v = fdp__underlay_version(n.dp);
    ck_assert_int_eq(fdp_dp_addr_del(n.dp, 1, &a, 24), 0);
    ck_assert_uint_gt(fdp__underlay_version(n.dp), v);
    ck_assert_uint_eq(fdp_dp_route_list(n.dp, r, 16), 0);
    ck_assert(!fdp__underlay_is_local(n.dp, &a));

    /* MACs: derived, set, refused. */
    uint8_t m[6], want[6] = { 0x02, 0xfd, 0, 0, 0, 2 };
    ck_assert_int_eq(fdp_dp_port_get_mac(n.dp, 2, m, NULL), 0);
    ck_assert(!memcmp(m, want, 6));
    uint8_t mc[6] = { 0x01, 0, 0x5e, 0, 0, 1 }, ok[6] = { 0x52, 0x54, 0, 1,
                                                          2, 3 };
    ck_assert_int_eq(fdp_dp_port_set_mac(n.dp, 2, mc), EINVAL);
    ck_assert_int_eq(fdp_dp_port_set_mac(n.dp, 7, ok), ENOENT);
    ck_assert_int_eq(fdp_dp_port_set_mac(n.dp, 2, ok), 0);
    ck_assert_int_eq(fdp_dp_port_get_mac(n.dp, 2, m, NULL), 0);
    ck_assert(!memcmp(m, ok, 6));

    /* Deleting a port takes its addresses, routes and neighbours. */
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 2, &a, 24), 0);
    ck_assert_int_eq(fdp_dp_neigh_set(n.dp, 2, &b, ok), 0);
    ck_assert_int_eq(fdp_dp_port_del(n.dp, 2), 0);
    ck_assert_uint_eq(fdp_dp_addr_list(n.dp, x, 16), 0);
    ck_assert_uint_eq(fdp_dp_route_list(n.dp, r, 16), 0);
    ck_assert_uint_eq(fdp_dp_neigh_list(n.dp, NULL, 0), 0);

    ck_assert_int_eq(fdp_dp_neigh_set_limit(n.dp, 0), EINVAL);
    ck_assert_int_eq(fdp_dp_neigh_set_aging(n.dp, 3601), EINVAL);
    ck_assert_int_eq(fdp_dp_neigh_set(n.dp, 1, &b, mc), EINVAL);
    net_close(&n);
}
END_TEST

/* ---- ARP and ND answers ---- */

START_TEST(arp_answer)
{
    struct net n;
    struct capture o[N_PORTS + 1];
    uint8_t p[64];
    struct in6_addr a = ip("192.168.1.1");

    net_open(&n);
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &a, 24), 0);

    /* Who has 192.168.1.1? Answered out of port 1, byte for byte, and
     * the pipeline (which would send it to port 2) never sees it. */
    size_t len = arp(p, 1, 0xffffffffffffULL, HOST, "192.168.1.17", 0,
                     "192.168.1.1");
    net_send(&n, 1, p, len, o);
    ck_assert_int_eq(o[2].n, 0);
    ck_assert_int_eq(o[1].n, 1);
    uint8_t want[60];
    arp(want, 2, HOST, MAC1, "192.168.1.1", HOST, "192.168.1.17");
    ck_assert_uint_eq(o[1].len, 42);
    ck_assert(!memcmp(o[1].last, want, 42));
    /* The asker was learned. */
    ck_assert(has_neigh(n.dp, 1, "192.168.1.17", HOST));

    /* A question for another host goes on to the pipeline, unlearned. */
    len = arp(p, 1, 0xffffffffffffULL, HOST + 1, "192.168.1.18", 0,
              "192.168.1.50");
    net_send(&n, 1, p, len, o);
    ck_assert_int_eq(o[1].n, 0);
    ck_assert_int_eq(o[2].n, 1);
    ck_assert(!has_neigh(n.dp, 1, "192.168.1.18", HOST + 1));

    /* The same question on port 2, which does not have the address. */
    len = arp(p, 1, 0xffffffffffffULL, HOST, "192.168.1.17", 0,
              "192.168.1.1");
    net_send(&n, 2, p, len, o);
    ck_assert_int_eq(o[1].n + o[2].n, 0);

    /* Tagged: not the underlay's. */
    uint8_t t[64];
    memcpy(t, p, 12);
    t[12] = 0x81;
    t[13] = 0x00;
    t[14] = 0;
    t[15] = 5;
    memcpy(t + 16, p + 12, 46);
    net_send(&n, 1, t, 62, o);
    ck_assert_int_eq(o[1].n, 0);
    ck_assert_int_eq(o[2].n, 1);

    /* Truncated: passed on untouched. */
    net_send(&n, 1, p, 30, o);
    ck_assert_int_eq(o[1].n, 0);
    ck_assert_int_eq(o[2].n, 1);
    ck_assert_uint_eq(o[2].len, 30);

    struct fdp_dp_underlay_stats s;
    fdp_dp_underlay_get_stats(n.dp, &s);
    ck_assert_uint_eq(s.n_replies, 1);
    ck_assert_uint_eq(s.n_neighs, 1);
    net_close(&n);
}
END_TEST

START_TEST(nd_answer)
{
    struct net n;
    struct capture o[N_PORTS + 1];
    uint8_t p[128], want[128];
    struct in6_addr a = ip("2001:db8::1");

    net_open(&n);
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &a, 64), 0);

    /* An NS to the solicited-node address, with the asker's MAC. */
    size_t len = nd(p, 135, 0x3333ff000001ULL, HOST, "2001:db8::17",
                    "ff02::1:ff00:1", "2001:db8::1", 1, HOST, 0);
    net_send(&n, 1, p, len, o);
    ck_assert_int_eq(o[2].n, 0);
    ck_assert_int_eq(o[1].n, 1);
    size_t wlen = nd(want, 136, HOST, MAC1, "2001:db8::1", "2001:db8::17",
                     "2001:db8::1", 2, MAC1, 0x60);
    ck_assert_uint_eq(o[1].len, wlen);
    ck_assert(!memcmp(o[1].last, want, wlen));
    ck_assert(has_neigh(n.dp, 1, "2001:db8::17", HOST));

    /* A DAD probe (from ::, no option): answered to all-nodes, not
     * solicited. */
    len = nd(p, 135, 0x3333ff000001ULL, HOST + 2, "::", "ff02::1:ff00:1",
             "2001:db8::1", 0, 0, 0);
    net_send(&n, 1, p, len, o);
    ck_assert_int_eq(o[1].n, 1);
    wlen = nd(want, 136, 0x333300000001ULL, MAC1, "2001:db8::1", "ff02::1",
              "2001:db8::1", 2, MAC1, 0x20);
    ck_assert(!memcmp(o[1].last, want, wlen));

    /* A bad checksum: passed on. */
    len = nd(p, 135, 0x3333ff000001ULL, HOST, "2001:db8::17",
             "ff02::1:ff00:1", "2001:db8::1", 1, HOST, 0);
    p[14 + 40 + 2] ^= 1;
    net_send(&n, 1, p, len, o);
    ck_assert_int_eq(o[1].n, 0);
    ck_assert_int_eq(o[2].n, 1);

    /* An NS for someone else: passed on. */
    len = nd(p, 135, 0x3333ff000002ULL, HOST, "2001:db8::17",
             "ff02::1:ff00:2", "2001:db8::2", 1, HOST, 0);
    net_send(&n, 1, p, len, o);
    ck_assert_int_eq(o[1].n, 0);
    ck_assert_int_eq(o[2].n, 1);

    /* An NA with a target MAC is learned, and goes on. */
    len = nd(p, 136, MAC1, HOST + 5, "2001:db8::5", "2001:db8::1",
             "2001:db8::5", 2, HOST + 5, 0x60);
    net_send(&n, 1, p, len, o);
    ck_assert_int_eq(o[2].n, 1);
    ck_assert(has_neigh(n.dp, 1, "2001:db8::5", HOST + 5));
    /* Off the link (no route straight out of port 1): not learned. */
    len = nd(p, 136, MAC1, HOST + 6, "2001:db9::6", "2001:db8::1",
             "2001:db9::6", 2, HOST + 6, 0x60);
    net_send(&n, 1, p, len, o);
    ck_assert(!has_neigh(n.dp, 1, "2001:db9::6", HOST + 6));
    net_close(&n);
}
END_TEST

/* ---- The resolver ---- */

START_TEST(resolve)
{
    struct net n;
    struct capture o[N_PORTS + 1];
    uint8_t p[64], want[128];
    struct fdp__nexthop nh;
    struct fdp_dp_underlay_stats s;
    struct in6_addr a = ip("192.168.1.1"), gw = ip("192.168.1.254");
    struct in6_addr dst = ip("10.1.2.3"), net10 = ip("10.0.0.0");

    net_open(&n);
    ck_assert_int_eq(fdp__underlay_resolve(n.dp, &dst, NULL, &nh),
                     EHOSTUNREACH);
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &a, 24), 0);
    ck_assert_int_eq(fdp_dp_route_add(n.dp, &net10, 8, 1, &gw, NULL), 0);
    ck_assert(fdp__underlay_is_local(n.dp, &a));
    ck_assert(!fdp__underlay_is_local(n.dp, &gw));

    /* The gateway's MAC is unknown: EAGAIN and one request, whatever
     * the number of tries in the second. */
    uint64_t v = fdp__underlay_version(n.dp);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(fdp__underlay_resolve(n.dp, &dst, NULL, &nh),
                         EAGAIN);
    }
    net_send(&n, 0, NULL, 0, o);
    ck_assert_int_eq(o[1].n, 1);
    ck_assert_int_eq(o[2].n, 0);
    arp(want, 1, 0xffffffffffffULL, MAC1, "192.168.1.1", 0,
        "192.168.1.254");
    ck_assert_uint_eq(o[1].len, 42);
    ck_assert(!memcmp(o[1].last, want, 42));
    fdp_dp_underlay_get_stats(n.dp, &s);
    ck_assert_uint_eq(s.n_no_neigh, 5);
    ck_assert_uint_eq(s.n_requests, 1);
    ck_assert_uint_eq(s.n_requests_limited, 4);

    /* A second later, another. */
    test_clock += 1000;
    ck_assert_int_eq(fdp__underlay_resolve(n.dp, &dst, NULL, &nh), EAGAIN);
    net_send(&n, 0, NULL, 0, o);
    ck_assert_int_eq(o[1].n, 1);

    /* The answer: learned, and resolution succeeds. */
    size_t len = arp(p, 2, MAC1, 0x001122334455ULL, "192.168.1.254", MAC1,
                     "192.168.1.1");
    net_send(&n, 1, p, len, o);
    ck_assert_int_eq(o[2].n, 1);        /* Replies go on to the pipeline. */
    ck_assert_uint_gt(fdp__underlay_version(n.dp), v);
    ck_assert_int_eq(fdp__underlay_resolve(n.dp, &dst, NULL, &nh), 0);
    ck_assert_uint_eq(nh.port_no, 1);
    ck_assert(!memcmp(&nh.src, &a, 16));
    ck_assert_uint_eq(nh.src_mac, MAC1);
    ck_assert_uint_eq(nh.dst_mac, 0x001122334455ULL);

    /* A source that is not ours; a destination that is. */
    struct in6_addr other = ip("192.168.1.2");
    ck_assert_int_eq(fdp__underlay_resolve(n.dp, &dst, &other, &nh),
                     EHOSTUNREACH);
    ck_assert_int_eq(fdp__underlay_resolve(n.dp, &a, NULL, &nh),
                     EHOSTUNREACH);
    struct in6_addr v6 = ip("2001:db8::9");
    ck_assert_int_eq(fdp__underlay_resolve(n.dp, &v6, NULL, &nh),
                     EHOSTUNREACH);
    fdp_dp_underlay_get_stats(n.dp, &s);
    ck_assert_uint_eq(s.n_bad_source, 1);
    ck_assert_uint_eq(s.n_no_route, 3);

    /* IPv6: the solicitation goes to the solicited-node group. */
    struct in6_addr a6 = ip("2001:db8::1");
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &a6, 64), 0);
    ck_assert_int_eq(fdp__underlay_resolve(n.dp, &v6, NULL, &nh), EAGAIN);
    net_send(&n, 0, NULL, 0, o);
    ck_assert_int_eq(o[1].n, 1);
    size_t wlen = nd(want, 135, 0x3333ff000009ULL, MAC1, "2001:db8::1",
                     "ff02::1:ff00:9", "2001:db8::9", 1, MAC1, 0);
    ck_assert_uint_eq(o[1].len, wlen);
    ck_assert(!memcmp(o[1].last, want, wlen));
    net_close(&n);
}
END_TEST

/* ---- The cache: bound, aging, renewal, static entries ---- */

struct emitted {
    int n;
    uint32_t port;
    uint8_t frame[128];
};

static bool
emit_cb(void *aux, uint32_t port_no, const void *data, size_t size)
{
    struct emitted *e = aux;

    e->n++;
    e->port = port_no;
    memcpy(e->frame, data, size < 128 ? size : 128);
    return true;
}

START_TEST(cache_bound_and_aging)
{
    struct net n;
    struct capture o[N_PORTS + 1];
    uint8_t p[64];
    struct in6_addr a = ip("10.0.0.1");
    struct fdp_dp_underlay_stats s;
    char sip[32];

    net_open(&n);
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &a, 16), 0);
    ck_assert_int_eq(fdp_dp_neigh_set_limit(n.dp, 16), 0);
    ck_assert_int_eq(fdp_dp_neigh_set_aging(n.dp, 100), 0);

    /* 40 hosts answer, a second apart: the cache keeps 16, the newest
     * (the older ones were not confirmed recently). */
    for (int h = 1; h <= 40; h++) {
        snprintf(sip, sizeof sip, "10.0.1.%d", h);
        size_t len = arp(p, 2, MAC1, HOST + (uint64_t) h, sip, MAC1,
                         "10.0.0.1");
        net_send(&n, 1, p, len, o);
        test_clock += 1000;
    }
    fdp_dp_underlay_get_stats(n.dp, &s);
    ck_assert_uint_eq(s.n_neighs, 16);
    ck_assert_uint_eq(s.n_evicted, 24);
    ck_assert(has_neigh(n.dp, 1, "10.0.1.40", HOST + 40));
    ck_assert(has_neigh(n.dp, 1, "10.0.1.25", HOST + 25));
    ck_assert(!has_neigh(n.dp, 1, "10.0.1.24", HOST + 24));

    /* A static entry survives aging and flushing and is not counted. */
    struct in6_addr st = ip("10.0.9.9");
    uint8_t stmac[6] = { 0x52, 0x54, 0, 9, 9, 9 };
    ck_assert_int_eq(fdp_dp_neigh_set(n.dp, 1, &st, stmac), 0);

    /* Three quarters of the aging time after host 40: every entry is
     * asked for again, unicast, once. */
    test_clock += 75 * 1000 - 1000;
    fdp__underlay_age(n.dp);
    struct emitted e = { 0 };
    ck_assert_uint_eq(fdp__underlay_flush_requests(n.dp, emit_cb, &e), 16);
    ck_assert_int_eq(e.n, 16);
    uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    ck_assert(memcmp(e.frame, bcast, 6));       /* Unicast. */
    fdp__underlay_age(n.dp);
    ck_assert_uint_eq(fdp__underlay_flush_requests(n.dp, emit_cb, &e), 0);

    /* Host 40 answers; at 100 s the others lapse. */
    size_t len = arp(p, 2, MAC1, HOST + 40, "10.0.1.40", MAC1, "10.0.0.1");
    net_send(&n, 1, p, len, o);
    test_clock += 25 * 1000 + 1000;
    struct fdp__nexthop nh;
    struct in6_addr h25 = ip("10.0.1.25"), h40 = ip("10.0.1.40");
    ck_assert_int_eq(fdp__underlay_resolve(n.dp, &h25, NULL, &nh), EAGAIN);
    uint64_t v = fdp__underlay_version(n.dp);
    fdp__underlay_age(n.dp);
    ck_assert_uint_gt(fdp__underlay_version(n.dp), v);
    fdp_dp_underlay_get_stats(n.dp, &s);
    ck_assert_uint_eq(s.n_neighs, 1);
    ck_assert_uint_eq(s.n_expired, 15);
    ck_assert_uint_eq(s.n_static, 1);
    ck_assert_int_eq(fdp__underlay_resolve(n.dp, &h40, NULL, &nh), 0);
    ck_assert_int_eq(fdp__underlay_resolve(n.dp, &st, NULL, &nh), 0);
    ck_assert_uint_eq(nh.dst_mac, 0x525400090909ULL);

    /* Flush: learned entries go, static ones stay; raising the limit
     * keeps what is there. */
    ck_assert_int_eq(fdp_dp_neigh_set_limit(n.dp, 5000), 0);
    ck_assert_int_eq(fdp__underlay_resolve(n.dp, &h40, NULL, &nh), 0);
    ck_assert_uint_eq(fdp_dp_neigh_flush(n.dp), 1);
    ck_assert_uint_eq(fdp_dp_neigh_list(n.dp, NULL, 0), 1);
    ck_assert_int_eq(fdp_dp_neigh_del(n.dp, 1, &st), 0);
    ck_assert_int_eq(fdp_dp_neigh_del(n.dp, 1, &st), ENOENT);
    net_close(&n);
}
END_TEST

/* The bound holds whatever arrives: random answers from a /16, random
 * limits, against a count of what the cache may hold. */
START_TEST(cache_bound_random)
{
    struct unit_rng rng;
    struct net n;
    struct capture o[N_PORTS + 1];
    uint8_t p[64];
    struct in6_addr a = ip("10.0.0.1");
    char sip[32];

    unit_rng_init(&rng, 0x2e);
    net_open(&n);
    ck_assert_int_eq(fdp_dp_addr_add(n.dp, 1, &a, 16), 0);
    for (int round = 0; round < 2000; round++) {
        if (round % 500 == 0) {
            ck_assert_int_eq(fdp_dp_neigh_set_limit(
                                 n.dp, 1 + unit_rng_below(&rng, 300)), 0);
        }
        uint32_t h = unit_rng_below(&rng, 1000);
        snprintf(sip, sizeof sip, "10.0.%u.%u", 1 + h / 250, 1 + h % 250);
        size_t len = arp(p, 2, MAC1, HOST + unit_rng_below(&rng, 3), sip,
                         MAC1, "10.0.0.1");
        net_send(&n, 1, p, len, o);
        test_clock += unit_rng_below(&rng, 3000);
        size_t have = fdp_dp_neigh_list(n.dp, NULL, 0);
        ck_assert_uint_le(have, fdp_dp_neigh_get_limit(n.dp));
    }
    net_close(&n);
}
END_TEST

/* ---- Hostile frames ---- */

/* Random mutations of ARP and ND frames, cut at random lengths, on a port
 * with addresses: nothing crashes, and whatever is answered is a
 * well-formed answer of the one size each kind has. */
START_TEST(hostile_frames)
{
    struct unit_rng rng;
    struct net n;
    struct capture o[N_PORTS + 1];
    uint8_t base[128], p[128];

    unit_rng_init(&rng, 0x3d);
    net_open(&n);
    ck_assert_int_eq(addr_add(n.dp, 1, "192.168.1.1", 24), 0);
    ck_assert_int_eq(addr_add(n.dp, 1, "2001:db8::1", 64), 0);
    for (int round = 0; round < 3000; round++) {
        size_t len;
        switch (unit_rng_below(&rng, 3)) {
        case 0:
            len = arp(base, 1, 0xffffffffffffULL, HOST, "192.168.1.17", 0,
                      "192.168.1.1");
            break;
        case 1:
            len = nd(base, 135, 0x3333ff000001ULL, HOST, "2001:db8::17",
                     "ff02::1:ff00:1", "2001:db8::1", 1, HOST, 0);
            break;
        default:
            len = nd(base, 136, MAC1, HOST + 5, "2001:db8::5", "2001:db8::1",
                     "2001:db8::5", 2, HOST + 5, 0x60);
            break;
        }
        memcpy(p, base, sizeof p);
        int flips = (int) unit_rng_below(&rng, 4);
        for (int f = 0; f < flips; f++) {
            p[unit_rng_below(&rng, (uint32_t) len)]
                = (uint8_t) unit_rng_next(&rng);
        }
        if (unit_rng_below(&rng, 4) == 0) {
            len = 14 + unit_rng_below(&rng, (uint32_t) len - 13);
        }
        net_send(&n, 1, p, len, o);
        if (o[1].n) {
            ck_assert_int_eq(o[1].n, 1);
            ck_assert(o[1].len == 42 || o[1].len == 86);
            if (o[1].len == 86) {
                ck_assert_uint_eq(ref_icmp6_csum(o[1].last + 14),
                                  (uint16_t) (o[1].last[14 + 40 + 2] << 8
                                              | o[1].last[14 + 40 + 3]));
            }
        }
        ck_assert_uint_le(fdp_dp_neigh_list(n.dp, NULL, 0), 8192);
    }
    net_close(&n);
}
END_TEST

/* ---- Readers during writes ---- */

struct cc_reader {
    struct fdp_dp *dp;
    bool *stop;
    uint64_t n_ok, n_bad;
};

static void *
cc_read(void *r_)
{
    struct cc_reader *r = r_;
    struct in6_addr dst = ip("10.0.0.77");

    while (!__atomic_load_n(r->stop, __ATOMIC_RELAXED)) {
        struct fdp__nexthop nh;
        int e = fdp__underlay_resolve(r->dp, &dst, NULL, &nh);
        if (e == 0) {
            /* Only ever the MACs the writer sets. */
            if (nh.dst_mac != 0x525400000077ULL
                && nh.dst_mac != 0x525400000078ULL) {
                r->n_bad++;
            }
            r->n_ok++;
        } else if (e != EAGAIN && e != EHOSTUNREACH) {
            r->n_bad++;
        }
        fdp__underlay_version(r->dp);
    }
    return NULL;
}

START_TEST(readers_during_writes)
{
    struct fdp_table *table;
    struct fdp_dp *dp;

    ck_assert_int_eq(fdp_table_create(&table), 0);
    ck_assert_int_eq(fdp_dp_create(table, NULL, &dp), 0);
    ck_assert_int_eq(fdp_dp_port_add(dp, 1, "ring:size=64", NULL), 0);

    bool stop = false;
    struct cc_reader r[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        r[i] = (struct cc_reader) { .dp = dp, .stop = &stop };
        ck_assert_int_eq(pthread_create(&th[i], NULL, cc_read, &r[i]), 0);
    }
    struct in6_addr a = ip("10.0.0.1"), h = ip("10.0.0.77");
    uint8_t m1[6] = { 0x52, 0x54, 0, 0, 0, 0x77 };
    uint8_t m2[6] = { 0x52, 0x54, 0, 0, 0, 0x78 };
    for (int round = 0; round < 300; round++) {
        ck_assert_int_eq(fdp_dp_addr_add(dp, 1, &a, 24), 0);
        ck_assert_int_eq(fdp_dp_neigh_set(dp, 1, &h, round & 1 ? m1 : m2),
                         0);
        if (round % 50 == 0) {
            ck_assert_int_eq(fdp_dp_neigh_set_limit(dp, round % 100 ? 300
                                                                    : 9000),
                             0);
        }
        ck_assert_int_eq(fdp_dp_addr_del(dp, 1, &a, 24), 0);
        if (round % 3 == 0) {
            fdp_dp_neigh_flush(dp);
            ck_assert_int_eq(fdp_dp_neigh_del(dp, 1, &h), 0);
        }
    }
    ck_assert_int_eq(fdp_dp_addr_add(dp, 1, &a, 24), 0);
    for (int i = 0; i < 1000; i++) {
        ck_assert_int_eq(fdp_dp_neigh_set(dp, 1, &h, i & 1 ? m1 : m2), 0);
    }
    __atomic_store_n(&stop, true, __ATOMIC_RELAXED);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        ck_assert_uint_eq(r[i].n_bad, 0);
    }
    fdp_dp_destroy(dp);
    fdp_table_destroy(table);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("underlay");
    TCase *tc = unit_tcase(s, "routes");
    tcase_add_test(tc, lpm_vs_brute_force);
    tcase_add_test(tc, control_errors);
    tc = unit_tcase(s, "arp-nd");
    tcase_add_test(tc, arp_answer);
    tcase_add_test(tc, nd_answer);
    tcase_add_test(tc, resolve);
    tcase_add_test(tc, hostile_frames);
    tc = unit_tcase(s, "cache");
    tcase_add_test(tc, cache_bound_and_aging);
    tcase_add_test(tc, cache_bound_random);
    tc = unit_tcase(s, "concurrency");
    tcase_add_test(tc, readers_during_writes);
    return unit_run(s);
}
