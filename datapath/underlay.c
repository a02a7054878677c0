/*
 * The underlay: addresses, routes and the neighbour cache that tunnel
 * ports send encapsulated packets with, and the ARP and ND that fill and
 * serve them.
 *
 * What it is for
 * ==============
 * A tunnel port wraps a packet in an outer IP header to a remote endpoint
 * and sends it out of one of the datapath's own ports (ring, pcap,
 * afpacket, afxdp).  Which port, from which source address, to which MAC:
 * that is the underlay's answer (fdp__underlay_resolve()), given when the
 * tunnel (re)builds the outer header of a destination, not per packet.
 * Open vSwitch's userspace datapath answers with lib/ovs-router.c (routes,
 * copied from the kernel or added with ovs/route/add, on a bridge that has
 * an IP address) and lib/tnl-neigh-cache.c (ARP and ND snooped by the
 * translation of packets on that bridge).  Here the addresses go straight
 * on the datapath's ports, no bridge is needed, the neighbour cache is
 * bounded, and every failed resolution is counted with its reason.
 *
 * Design
 * ======
 * The configuration (ports' MACs, addresses, routes) is one immutable
 * snapshot, struct ul_conf, published under RCU and rebuilt whole by each
 * change (changes are rare: a control command; the snapshot is a few
 * arrays).  Building it also builds its two indexes:
 *   - routes: one open-addressing hash table keyed by (family, prefix
 *     length, prefix), and per family the list of prefix lengths present,
 *     longest first.  A lookup masks the destination to each length in
 *     turn and probes: the first hit is the longest prefix.  With a route
 *     table of a few lengths that is a few probes, cheaper than a trie's
 *     walk of up to 32 (128) nodes, and it needs no rebalancing since the
 *     table is rebuilt.  A user's route and a connected route of the same
 *     prefix are both kept; the index holds the user's.
 *   - local addresses: a hash set, for fdp__underlay_is_local(), which
 *     decapsulation may ask per packet.
 *
 * The neighbour cache is a hash table of chains under RCU (struct
 * ul_neigh_table): readers walk a chain with no lock; writers (learning
 * on a pmd, control) take 'neigh_mutex' -- a pmd only by trylock, so that
 * no packet ever waits: a snooped answer lost to contention is seen
 * again at the next request.  An entry's MAC never changes: a new MAC is a
 * new entry put at the head of the chain before the old one is unlinked,
 * so a reader finds one or the other.  Confirmation of an unchanged entry
 * is one relaxed store of its 'confirmed' time, no lock.  The keys are
 * partly the network's (an ARP sender's address), so chains are hashed
 * with SipHash under a random key.
 *
 * Bounds and aging.  Learned entries are also on a FIFO list, oldest
 * first (under the mutex).  When 'limit' of them exist, a new one evicts,
 * of the 8 oldest, the one confirmed longest ago: an approximation of
 * least recently confirmed that costs O(1) per insertion (a refresh, being
 * lock-free, cannot move an entry in the list), and spares an entry in
 * use that happens to be old among entries that are not.  An entry is stale 'aging'
 * seconds after its last confirmation: lookups treat it as absent.  Aging
 * walks 1/8 of the buckets per second (fdp__underlay_pmd_work(), so a full
 * pass takes 8 seconds): a stale entry is removed (bumping the version,
 * which makes tunnels rebuild their headers); an entry past three quarters
 * of its time gets one unicast request, whose answer renews it before it
 * lapses.  Static entries are exempt from all of this.
 *
 * Requests.  A resolution that misses the cache queues an ARP request or
 * a neighbour solicitation, at most one per (port, destination) per second:
 * a direct-mapped table of 256 (tag, time) pairs remembers the last ones
 * sent (a collision costs at worst an extra request or a second's delay).
 * The queue (64 entries) is drained by whichever pmd polls next, which
 * builds each frame and sends it through the datapath's transmit queues
 * (the resolver may run on any thread and has no pmd of its own).
 *
 * Answers.  A pmd hands the batches of a port with addresses to
 * fdp__underlay_rx() before classification: an ARP request or neighbour
 * solicitation for one of that port's addresses is rewritten in place into
 * its reply and sent back out of the port (it does not reach the
 * pipeline); other ARP and ND go on to the pipeline after the cache has
 * learned what it may from them.  Learning is limited to hosts the route
 * table puts straight out of the port the packet came in on (a route with
 * no gateway), so a port's neighbours are the hosts of its links.
 *
 * Invariants
 * ==========
 * - Every address has its connected route in the snapshot; every route's
 *   source is an address of its port; every route's port has a ul_port
 *   (its MAC).
 * - 'version' grows with every published snapshot and every neighbour
 *   added, changed or removed.
 * - An entry reachable from a bucket is freed only after a grace period.
 *
 * Thread-safety
 * =============
 * Configuration changes: the datapath's mutex.  Neighbour changes:
 * 'neigh_mutex' (taken after the datapath's where both are held).  The
 * request queue: 'req_mutex', held for a copy only.  Lookups: RCU.
 *
 * Worked example
 * ==============
 * Port 1 gets 192.168.1.1/24 (MAC 02:fd:00:00:00:01): the snapshot holds
 * the address and the connected route 192.168.1.0/24 dev 1 SRC
 * 192.168.1.1; the IPv4 length list is {24}.  route/add 10.0.0.0/8 1
 * 192.168.1.254 adds a user route (its gateway is on the /24, straight out
 * of port 1, so it is accepted; its source, chosen by the gateway's
 * subnet, 192.168.1.1); the list becomes {24, 8}.  Resolving 10.1.2.3:
 * /24 probes (v4, 24, 10.1.2.0): nothing; /8 probes (v4, 8, 10.0.0.0):
 * the route, next hop 192.168.1.254.  The cache has no 192.168.1.254 on
 * port 1: EAGAIN, and an ARP request "who-has 192.168.1.254 tell
 * 192.168.1.1" is queued.  The next poll sends it; the router's reply
 * arrives on port 1, its sender 192.168.1.254 lies on the connected /24
 * of port 1, so the cache learns it and the version grows; the tunnel's
 * next resolution returns port 1, source 192.168.1.1, the two MACs.
 */
#include <config.h>

#include "datapath/underlay.h"

#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <flowdp/hash.h>

#include "datapath/bytes.h"
#include "datapath/dp-private.h"
#include "datapath/execute.h"
#include "lib/rcu.h"

/* ---------------------------------------------------------------------- */
/* Limits and constants.                                                   */

#define UL_MAX_ADDRS 4096       /* Far more than any host has: a bound on
                                 * the work of a rebuild. */
#define UL_MAX_ROUTES 65536     /* A full-ish internal table; a rebuild is
                                 * then a few milliseconds. */
#define UL_DEFAULT_LIMIT 8192   /* Learned neighbours (the kernel's
                                 * gc_thresh3 default is 1024 per family;
                                 * a tunnel endpoint talks to every
                                 * hypervisor of a cluster). */
#define UL_MAX_LIMIT (1u << 20)
#define UL_DEFAULT_AGING_S 900  /* Open vSwitch's 15 minutes. */
#define UL_MAX_AGING_S 3600     /* Open vSwitch's tnl/neigh/aging bound. */
#define UL_EVICT_WINDOW 8       /* Oldest entries an eviction compares. */
#define UL_AGE_SLICES 8         /* Aging visits 1/8 of the buckets a
                                 * second. */
#define UL_RATE_SLOTS 256       /* Destinations remembered for the
                                 * one-request-a-second limit. */
#define UL_RATE_MS 1000
#define UL_MAX_REQS 64          /* Requests waiting for a pmd. */

#define ETH_TYPE_ARP 0x0806
#define ETH_TYPE_IPV6 0x86dd
#define ARP_SIZE 42             /* Ethernet + ARP for IPv4 over
                                 * Ethernet. */
#define ND_SIZE 86              /* Ethernet + IPv6 + NS or NA with one
                                 * link-layer address option. */
#define ICMP6_NS 135
#define ICMP6_NA 136
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2

/* ---------------------------------------------------------------------- */
/* The snapshot.                                                           */

struct ul_port {
    uint32_t port_no;
    uint32_t n_addrs;           /* Addresses on it. */
    uint64_t mac;               /* 48 bits, as in the key. */
    bool mac_given;             /* By fdp_dp_port_set_mac(). */
};

struct ul_addr {
    uint32_t port_no;
    struct in6_addr addr;
    uint8_t plen;               /* The family's. */
};

struct ul_route {
    struct in6_addr prefix;     /* Host bits zero. */
    uint8_t plen;               /* The family's. */
    bool v4;
    bool connected;
    uint32_t port_no;
    struct in6_addr gw;         /* Zero: none. */
    struct in6_addr src;
};

struct ul_conf {
    struct rcu_head rcu;
    size_t n_ports, n_addrs, n_routes;
    struct ul_port *ports;      /* By port number. */
    struct ul_addr *addrs;      /* By port, then order of addition. */
    struct ul_route *routes;    /* In no order. */

    /* Indexes (conf_index()). */
    uint32_t route_mask;        /* Slots - 1. */
    int32_t *route_slots;       /* Index in 'routes', or -1. */
    uint8_t n_plens[2];         /* [0] IPv4, [1] IPv6. */
    uint8_t plens[2][129];      /* Lengths present, longest first. */
    uint32_t addr_mask;
    int32_t *addr_slots;        /* Index in 'addrs', or -1. */
};

/* ---------------------------------------------------------------------- */
/* The neighbour cache.                                                    */

struct ul_neigh {
    struct ul_neigh *next;      /* In the bucket: RCU. */
    struct in6_addr ip;
    uint32_t port_no;
    bool is_static;
    uint8_t probed;             /* Atomic: a renewal was asked since the
                                 * last confirmation. */
    uint64_t mac;
    int64_t confirmed;          /* Atomic: ms of the last confirmation. */
    struct ul_neigh *older, *newer;     /* The FIFO (learned only): under
                                         * neigh_mutex. */
    struct rcu_head rcu;
};

struct ul_neigh_table {
    struct rcu_head rcu;
    uint32_t mask;
    struct ul_neigh *buckets[];
};

struct ul_rate {
    uint64_t tag;               /* Atomic. */
    int64_t last;               /* Atomic. */
};

struct ul_request {
    uint32_t port_no;
    struct in6_addr src, dst;
    uint64_t src_mac;
    uint64_t dst_mac;           /* 0: broadcast (ARP) or solicited-node
                                 * multicast (ND). */
};

struct fdp__underlay {
    struct ul_conf *conf;       /* RCU. */
    struct ul_neigh_table *neigh;   /* RCU. */
    uint64_t version;           /* Atomic. */
    uint32_t basis;             /* For the configuration's indexes. */
    struct fdp_hash_key key;    /* For the neighbour table. */

    pthread_mutex_t neigh_mutex;
    struct ul_neigh *oldest, *newest;   /* The FIFO of learned entries. */
    uint32_t n_learned;         /* Atomic (written under the mutex). */
    uint32_t n_static;          /* Under the mutex. */
    uint32_t limit;             /* Atomic. */
    uint32_t aging_ms;          /* Atomic. */
    uint32_t age_cursor;        /* Next bucket to age: under the mutex. */
    int64_t next_age;           /* Atomic: ms of the next aging slice. */

    pthread_mutex_t req_mutex;
    uint32_t n_reqs;            /* Atomic (written under req_mutex). */
    struct ul_request reqs[UL_MAX_REQS];
    struct ul_rate rate[UL_RATE_SLOTS];

    int64_t (*now)(void *aux);  /* NULL: the monotonic clock. */
    void *now_aux;

    /* Counters (relaxed atomics). */
    uint64_t n_no_route, n_bad_source, n_no_neigh;
    uint64_t n_requests, n_requests_limited, n_replies;
    uint64_t n_learned_ev, n_confirmed, n_evicted, n_expired;
};

/* ---------------------------------------------------------------------- */
/* Addresses and MACs.                                                     */

static bool
is_v4(const struct in6_addr *a)
{
    return IN6_IS_ADDR_V4MAPPED(a);
}

static uint32_t
v4_of(const struct in6_addr *a)
{
    return fdp__get32(&a->s6_addr[12]);
}

static void
set_v4(struct in6_addr *a, uint32_t ip)
{
    memset(a, 0, sizeof *a);
    a->s6_addr[10] = a->s6_addr[11] = 0xff;
    fdp__put32(&a->s6_addr[12], ip);
}

static bool
addr_is_zero(const struct in6_addr *a)
{
    static const struct in6_addr zero;

    return !memcmp(a, &zero, sizeof zero);
}

static bool
addr_eq(const struct in6_addr *a, const struct in6_addr *b)
{
    return !memcmp(a, b, sizeof *a);
}

/* Unspecified: all zero, or IPv4 0.0.0.0. */
static bool
addr_unspecified(const struct in6_addr *a)
{
    return addr_is_zero(a) || (is_v4(a) && !v4_of(a));
}

static int
addr_cmp(const struct in6_addr *a, const struct in6_addr *b)
{
    return memcmp(a, b, sizeof *a);
}

/* The prefix length over all 128 bits of a family's 'plen'. */
static unsigned int
plen128(bool v4, unsigned int plen)
{
    return v4 ? plen + 96 : plen;
}

/* 'a' with all but its first 'bits' bits cleared. */
static struct in6_addr
addr_mask(const struct in6_addr *a, unsigned int bits)
{
    struct in6_addr m = *a;

    for (unsigned int i = 0; i < 16; i++) {
        if (bits >= 8) {
            bits -= 8;
        } else {
            m.s6_addr[i] &= (uint8_t) (0xff00 >> bits);
            bits = 0;
        }
    }
    return m;
}

static bool
prefix_holds(const struct in6_addr *prefix, bool v4, unsigned int plen,
             const struct in6_addr *a)
{
    if (is_v4(a) != v4) {
        return false;
    }
    struct in6_addr m = addr_mask(a, plen128(v4, plen));
    return addr_eq(&m, prefix);
}

static uint64_t
mac_of(const uint8_t b[6])
{
    uint64_t m = 0;

    for (int i = 0; i < 6; i++) {
        m = m << 8 | b[i];
    }
    return m;
}

static void
mac_put(uint8_t b[6], uint64_t m)
{
    for (int i = 5; i >= 0; i--) {
        b[i] = (uint8_t) m;
        m >>= 8;
    }
}

static bool
mac_is_multicast(uint64_t m)
{
    return (m >> 40) & 1;
}

/* ---------------------------------------------------------------------- */
/* The clock and the counters.                                             */

static int64_t
ul_now(const struct fdp__underlay *ul)
{
    if (ul->now) {
        return ul->now(ul->now_aux);
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
count(uint64_t *c)
{
    __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static uint64_t
load64(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void
bump_version(struct fdp__underlay *ul)
{
    __atomic_fetch_add(&ul->version, 1, __ATOMIC_RELEASE);
}

static struct fdp__underlay *
ul_of(const struct fdp_dp *dp)
{
    return fdp__dp_underlay(dp);
}

/* ---------------------------------------------------------------------- */
/* The snapshot: building, indexing, lookups.                              */

static uint32_t
route_hash(const struct fdp__underlay *ul, bool v4, unsigned int plen,
           const struct in6_addr *prefix)
{
    uint64_t w[3];

    memcpy(w, prefix, 16);
    w[2] = (uint64_t) v4 << 8 | plen;
    return fdp_hash_fast(w, 3, ul->basis);
}

static uint32_t
addr_hash(const struct fdp__underlay *ul, const struct in6_addr *a)
{
    uint64_t w[2];

    memcpy(w, a, 16);
    return fdp_hash_fast(w, 2, ul->basis);
}

static void
conf_free(struct ul_conf *c)
{
    if (c) {
        free(c->ports);
        free(c->addrs);
        free(c->routes);
        free(c->route_slots);
        free(c->addr_slots);
        free(c);
    }
}

static void
conf_free_rcu(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    conf_free(caa_container_of(head, struct ul_conf, rcu));
}

/* A copy of 'old' (NULL: empty) with room for one more of each, and no
 * indexes; NULL if out of memory. */
static struct ul_conf *
conf_clone(const struct ul_conf *old)
{
    struct ul_conf *c = calloc(1, sizeof *c);
    size_t np = old ? old->n_ports : 0;
    size_t na = old ? old->n_addrs : 0;
    size_t nr = old ? old->n_routes : 0;

    if (!c) {
        return NULL;
    }
    c->ports = malloc((np + 1) * sizeof *c->ports);
    c->addrs = malloc((na + 1) * sizeof *c->addrs);
    c->routes = malloc((nr + 1) * sizeof *c->routes);
    if (!c->ports || !c->addrs || !c->routes) {
        conf_free(c);
        return NULL;
    }
    if (old) {
        memcpy(c->ports, old->ports, np * sizeof *c->ports);
        memcpy(c->addrs, old->addrs, na * sizeof *c->addrs);
        memcpy(c->routes, old->routes, nr * sizeof *c->routes);
    }
    c->n_ports = np;
    c->n_addrs = na;
    c->n_routes = nr;
    return c;
}

static uint32_t
slots_for(size_t n)
{
    uint32_t s = 16;

    while (s < 2 * n) {
        s *= 2;
    }
    return s;
}

/* True if route 'a' should be the one indexed rather than 'b' of the same
 * prefix: the user's over the connected one. */
static bool
route_wins(const struct ul_route *a, const struct ul_route *b)
{
    return !a->connected && b->connected;
}

static const struct ul_route *
route_find(const struct ul_conf *c, const struct fdp__underlay *ul, bool v4,
           unsigned int plen, const struct in6_addr *prefix)
{
    uint32_t h = route_hash(ul, v4, plen, prefix);

    for (uint32_t i = h & c->route_mask;; i = (i + 1) & c->route_mask) {
        int32_t k = c->route_slots[i];
        if (k < 0) {
            return NULL;
        }
        const struct ul_route *r = &c->routes[k];
        if (r->v4 == v4 && r->plen == plen && addr_eq(&r->prefix, prefix)) {
            return r;
        }
    }
}

/* Builds 'c''s indexes.  Returns 0 or ENOMEM. */
static int
conf_index(struct ul_conf *c, const struct fdp__underlay *ul)
{
    bool present[2][129] = { { false } };

    c->route_mask = slots_for(c->n_routes) - 1;
    c->addr_mask = slots_for(c->n_addrs) - 1;
    c->route_slots = malloc((c->route_mask + 1) * sizeof *c->route_slots);
    c->addr_slots = malloc((c->addr_mask + 1) * sizeof *c->addr_slots);
    if (!c->route_slots || !c->addr_slots) {
        return ENOMEM;
    }
    memset(c->route_slots, 0xff, (c->route_mask + 1) * sizeof *c->route_slots);
    memset(c->addr_slots, 0xff, (c->addr_mask + 1) * sizeof *c->addr_slots);

    for (size_t k = 0; k < c->n_routes; k++) {
        const struct ul_route *r = &c->routes[k];
        uint32_t h = route_hash(ul, r->v4, r->plen, &r->prefix);
        uint32_t i = h & c->route_mask;
        for (;; i = (i + 1) & c->route_mask) {
            int32_t o = c->route_slots[i];
            if (o < 0) {
                c->route_slots[i] = (int32_t) k;
                break;
            }
            const struct ul_route *q = &c->routes[o];
            if (q->v4 == r->v4 && q->plen == r->plen
                && addr_eq(&q->prefix, &r->prefix)) {
                if (route_wins(r, q)) {
                    c->route_slots[i] = (int32_t) k;
                }
                break;
            }
        }
        present[!r->v4][r->plen] = true;
    }
    for (int f = 0; f < 2; f++) {
        c->n_plens[f] = 0;
        for (int p = 128; p >= 0; p--) {
            if (present[f][p]) {
                c->plens[f][c->n_plens[f]++] = (uint8_t) p;
            }
        }
    }
    for (size_t k = 0; k < c->n_addrs; k++) {
        uint32_t i = addr_hash(ul, &c->addrs[k].addr) & c->addr_mask;
        while (c->addr_slots[i] >= 0) {
            i = (i + 1) & c->addr_mask;
        }
        c->addr_slots[i] = (int32_t) k;
    }
    return 0;
}

/* The longest-prefix route to 'dst' in 'c', or NULL. */
static const struct ul_route *
conf_lookup(const struct ul_conf *c, const struct fdp__underlay *ul,
            const struct in6_addr *dst)
{
    bool v4 = is_v4(dst);
    int f = !v4;

    for (unsigned int k = 0; k < c->n_plens[f]; k++) {
        unsigned int plen = c->plens[f][k];
        struct in6_addr m = addr_mask(dst, plen128(v4, plen));
        const struct ul_route *r = route_find(c, ul, v4, plen, &m);
        if (r) {
            return r;
        }
    }
    return NULL;
}

static const struct ul_addr *
conf_local(const struct ul_conf *c, const struct fdp__underlay *ul,
           const struct in6_addr *a)
{
    for (uint32_t i = addr_hash(ul, a) & c->addr_mask;;
         i = (i + 1) & c->addr_mask) {
        int32_t k = c->addr_slots[i];
        if (k < 0) {
            return NULL;
        }
        if (addr_eq(&c->addrs[k].addr, a)) {
            return &c->addrs[k];
        }
    }
}

static const struct ul_port *
conf_port(const struct ul_conf *c, uint32_t port_no)
{
    size_t lo = 0, hi = c->n_ports;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->ports[mid].port_no < port_no) {
            lo = mid + 1;
        } else if (c->ports[mid].port_no > port_no) {
            hi = mid;
        } else {
            return &c->ports[mid];
        }
    }
    return NULL;
}

/* True if the route table puts 'ip' straight out of port 'port_no' (a
 * route without gateway) and 'ip' is not the datapath's own: a host of
 * that port's links, whose MAC the cache may learn. */
static bool
conf_onlink(const struct ul_conf *c, const struct fdp__underlay *ul,
            uint32_t port_no, const struct in6_addr *ip)
{
    const struct ul_route *r = conf_lookup(c, ul, ip);

    return (r && r->port_no == port_no && addr_is_zero(&r->gw)
            && !conf_local(c, ul, ip));
}

/* The address of port 'port_no' of 'ip''s family to speak from: the one
 * whose subnet holds 'ip' (the longest), else the port's first of the
 * family; NULL if it has none. */
static const struct ul_addr *
conf_source(const struct ul_conf *c, uint32_t port_no,
            const struct in6_addr *ip)
{
    const struct ul_addr *best = NULL, *first = NULL;
    bool v4 = is_v4(ip);

    for (size_t k = 0; k < c->n_addrs; k++) {
        const struct ul_addr *a = &c->addrs[k];
        if (a->port_no != port_no || is_v4(&a->addr) != v4) {
            continue;
        }
        if (!first) {
            first = a;
        }
        struct in6_addr net = addr_mask(&a->addr, plen128(v4, a->plen));
        if (prefix_holds(&net, v4, a->plen, ip)
            && (!best || a->plen > best->plen)) {
            best = a;
        }
    }
    return best ? best : first;
}

/* Indexes 'c', publishes it as the snapshot and frees the old one after a
 * grace period.  Returns 0 or ENOMEM ('c' freed). */
static int
conf_publish(struct fdp__underlay *ul, struct ul_conf *c)
{
    if (conf_index(c, ul)) {
        conf_free(c);
        return ENOMEM;
    }
    struct ul_conf *old = ul->conf;
    FDP_RCU_SET(ul->conf, c);
    bump_version(ul);
    if (old) {
        fdp__rcu_defer(&old->rcu, conf_free_rcu);
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Ports.                                                                  */

/* A port's type may carry an underlay. */
static bool
port_type_ok(const struct fdp__port *p)
{
    const char *t = p->class->type;

    return (!strcmp(t, "ring") || !strcmp(t, "pcap")
            || !strcmp(t, "afpacket") || !strcmp(t, "afxdp"));
}

/* The value of option "dev=" in port spec 'spec' ("afpacket:dev=IF,...")
 * into 'dev' of 'size' bytes.  Returns 0 or ENODEV. */
static int
spec_dev(const char *spec, char *dev, size_t size)
{
    const char *args = strchr(spec, ':');

    for (const char *p = args; p; p = strchr(p + 1, ',')) {
        if (!strncmp(p + 1, "dev=", 4)) {
            size_t n = strcspn(p + 5, ",");
            if (!n || n >= size) {
                return ENODEV;
            }
            memcpy(dev, p + 5, n);
            dev[n] = '\0';
            return 0;
        }
    }
    return ENODEV;
}

/* The MAC a port's underlay uses unless told otherwise: the interface's
 * for live ports, else 02:fd:00:00:HH:LL (locally administered, unicast:
 * the 0x02 bit of the first byte; 0xfd for "flowdp"). */
static int
port_default_mac(const struct fdp__port *p, uint64_t *mac)
{
    const char *t = p->class->type;

    if (strcmp(t, "afpacket") && strcmp(t, "afxdp")) {
        *mac = 0x02fd00000000ull | (p->port_no & 0xffff);
        return 0;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    if (spec_dev(p->spec, ifr.ifr_name, sizeof ifr.ifr_name)) {
        return ENODEV;
    }
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return errno;
    }
    int error = ioctl(fd, SIOCGIFHWADDR, &ifr) ? errno : 0;
    close(fd);
    if (!error) {
        *mac = mac_of((const uint8_t *) ifr.ifr_hwaddr.sa_data);
    }
    return error;
}

/* The ul_port of 'port_no' in 'c', added with MAC 'mac' if it has none
 * yet (there is room: conf_clone()). */
static struct ul_port *
conf_add_port(struct ul_conf *c, uint32_t port_no, uint64_t mac)
{
    size_t i = c->n_ports;

    for (size_t k = 0; k < c->n_ports; k++) {
        if (c->ports[k].port_no == port_no) {
            return &c->ports[k];
        }
    }
    while (i > 0 && c->ports[i - 1].port_no > port_no) {
        c->ports[i] = c->ports[i - 1];
        i--;
    }
    c->ports[i] = (struct ul_port) { .port_no = port_no, .mac = mac };
    c->n_ports++;
    return &c->ports[i];
}

/* The ul_port of 'port_no' in 'c', added with its default MAC if it has
 * none yet (there is room: conf_clone()).  Under the datapath's mutex.
 * Returns 0, ENOENT, EOPNOTSUPP or an errno from reading the MAC. */
static int
conf_need_port(struct ul_conf *c, struct fdp_dp *dp, uint32_t port_no,
               struct ul_port **pp)
{
    for (size_t i = 0; i < c->n_ports; i++) {
        if (c->ports[i].port_no == port_no) {
            *pp = &c->ports[i];
            return 0;
        }
    }
    const struct fdp__port *p = fdp__dp_port_locked(dp, port_no);
    if (!p) {
        return ENOENT;
    }
    if (!port_type_ok(p)) {
        return EOPNOTSUPP;
    }
    uint64_t mac;
    int error = port_default_mac(p, &mac);
    if (error) {
        return error;
    }
    *pp = conf_add_port(c, port_no, mac);
    return 0;
}

/* Checks that port 'port_no' exists and may carry an underlay.  Under the
 * datapath's mutex. */
static int
check_port(struct fdp_dp *dp, uint32_t port_no)
{
    const struct fdp__port *p = fdp__dp_port_locked(dp, port_no);

    return !p ? ENOENT : !port_type_ok(p) ? EOPNOTSUPP : 0;
}

/* ---------------------------------------------------------------------- */
/* Control: addresses.                                                     */

static bool
plen_ok(const struct in6_addr *a, unsigned int plen)
{
    return plen <= (is_v4(a) ? 32u : 128u);
}

static bool
addr_assignable(const struct in6_addr *a)
{
    if (addr_unspecified(a)) {
        return false;
    }
    if (is_v4(a)) {
        uint32_t ip = v4_of(a);
        return (ip >> 28) != 0xe && ip != 0xffffffff && (ip >> 24) != 127;
    }
    static const struct in6_addr loopback = IN6ADDR_LOOPBACK_INIT;
    return a->s6_addr[0] != 0xff && !addr_eq(a, &loopback);
}

int
fdp_dp_addr_add(struct fdp_dp *dp, uint32_t port_no,
                const struct in6_addr *addr, unsigned int plen)
{
    struct fdp__underlay *ul = ul_of(dp);
    int error;

    if (!plen_ok(addr, plen) || !addr_assignable(addr)) {
        return EINVAL;
    }
    fdp__dp_lock(dp);
    struct ul_conf *old = ul->conf;
    if (old->n_addrs >= UL_MAX_ADDRS) {
        error = ENOSPC;
        goto out;
    }
    if (conf_local(old, ul, addr)) {
        error = EEXIST;
        goto out;
    }
    struct ul_conf *c = conf_clone(old);
    if (!c) {
        error = ENOMEM;
        goto out;
    }
    struct ul_port *up;
    error = conf_need_port(c, dp, port_no, &up);
    if (error) {
        conf_free(c);
        goto out;
    }
    up->n_addrs++;
    /* After the port's last address, so that the first stays first. */
    size_t i = c->n_addrs;
    while (i > 0 && c->addrs[i - 1].port_no > port_no) {
        c->addrs[i] = c->addrs[i - 1];
        i--;
    }
    c->addrs[i] = (struct ul_addr) {
        .port_no = port_no, .addr = *addr, .plen = (uint8_t) plen,
    };
    c->n_addrs++;
    bool v4 = is_v4(addr);
    c->routes[c->n_routes++] = (struct ul_route) {
        .prefix = addr_mask(addr, plen128(v4, plen)),
        .plen = (uint8_t) plen, .v4 = v4, .connected = true,
        .port_no = port_no, .src = *addr,
    };
    error = conf_publish(ul, c);
out:
    fdp__dp_unlock(dp);
    return error;
}

/* Removes from 'c' the routes that 'gone' (an address) leaves without a
 * source or a way to their gateway: its connected route, the routes it
 * is the source of, and (repeatedly) the user's routes whose gateway is no
 * longer straight out of their port. */
static void
conf_drop_routes(struct ul_conf *c, const struct fdp__underlay *ul,
                 const struct ul_addr *gone)
{
    size_t n = 0;

    for (size_t k = 0; k < c->n_routes; k++) {
        const struct ul_route *r = &c->routes[k];
        bool drop = addr_eq(&r->src, &gone->addr)
                    && (!r->connected || r->plen == gone->plen);
        if (!drop) {
            c->routes[n++] = *r;
        }
    }
    c->n_routes = n;
    /* A gateway reachable only through a route just removed: the indexes
     * are rebuilt to ask the route table as it now stands. */
    for (bool changed = true; changed;) {
        changed = false;
        free(c->route_slots);
        free(c->addr_slots);
        c->route_slots = c->addr_slots = NULL;
        if (conf_index(c, ul)) {
            return;             /* ENOMEM: conf_publish() says so. */
        }
        n = 0;
        for (size_t k = 0; k < c->n_routes; k++) {
            const struct ul_route *r = &c->routes[k];
            if (!addr_is_zero(&r->gw)) {
                const struct ul_route *via = conf_lookup(c, ul, &r->gw);
                if (!via || via->port_no != r->port_no
                    || !addr_is_zero(&via->gw)) {
                    changed = true;
                    continue;
                }
            }
            c->routes[n++] = *r;
        }
        c->n_routes = n;
    }
    free(c->route_slots);
    free(c->addr_slots);
    c->route_slots = c->addr_slots = NULL;
}

int
fdp_dp_addr_del(struct fdp_dp *dp, uint32_t port_no,
                const struct in6_addr *addr, unsigned int plen)
{
    struct fdp__underlay *ul = ul_of(dp);
    int error = ENOENT;

    fdp__dp_lock(dp);
    struct ul_conf *old = ul->conf;
    const struct ul_addr *a = conf_local(old, ul, addr);
    if (!a || a->port_no != port_no || a->plen != plen) {
        goto out;
    }
    struct ul_conf *c = conf_clone(old);
    if (!c) {
        error = ENOMEM;
        goto out;
    }
    struct ul_addr gone = *a;
    size_t n = 0;
    for (size_t k = 0; k < c->n_addrs; k++) {
        if (!addr_eq(&c->addrs[k].addr, addr)) {
            c->addrs[n++] = c->addrs[k];
        }
    }
    c->n_addrs = n;
    for (size_t k = 0; k < c->n_ports; k++) {
        if (c->ports[k].port_no == port_no) {
            c->ports[k].n_addrs--;
        }
    }
    conf_drop_routes(c, ul, &gone);
    error = conf_publish(ul, c);
out:
    fdp__dp_unlock(dp);
    return error;
}

size_t
fdp_dp_addr_list(struct fdp_dp *dp, struct fdp_dp_addr *addrs, size_t max)
{
    struct fdp__underlay *ul = ul_of(dp);

    fdp__dp_lock(dp);
    const struct ul_conf *c = ul->conf;
    for (size_t k = 0; k < c->n_addrs && k < max; k++) {
        addrs[k] = (struct fdp_dp_addr) {
            .port_no = c->addrs[k].port_no, .addr = c->addrs[k].addr,
            .plen = c->addrs[k].plen,
        };
    }
    size_t n = c->n_addrs;
    fdp__dp_unlock(dp);
    return n;
}

int
fdp_dp_port_set_mac(struct fdp_dp *dp, uint32_t port_no, const uint8_t mac[6])
{
    struct fdp__underlay *ul = ul_of(dp);
    uint64_t m = mac_of(mac);
    int error;

    if (!m || mac_is_multicast(m)) {
        return EINVAL;
    }
    fdp__dp_lock(dp);
    error = check_port(dp, port_no);
    if (error) {
        goto out;
    }
    struct ul_conf *c = conf_clone(ul->conf);
    if (!c) {
        error = ENOMEM;
        goto out;
    }
    /* The interface's MAC is not read: the given one replaces it. */
    struct ul_port *up = conf_add_port(c, port_no, m);
    up->mac = m;
    up->mac_given = true;
    error = conf_publish(ul, c);
out:
    fdp__dp_unlock(dp);
    return error;
}

int
fdp_dp_port_get_mac(struct fdp_dp *dp, uint32_t port_no, uint8_t mac[6])
{
    struct fdp__underlay *ul = ul_of(dp);
    int error;

    fdp__dp_lock(dp);
    error = check_port(dp, port_no);
    if (!error) {
        const struct ul_port *up = conf_port(ul->conf, port_no);
        uint64_t m = 0;
        if (up) {
            m = up->mac;
        } else {
            error = port_default_mac(fdp__dp_port_locked(dp, port_no), &m);
        }
        if (!error) {
            mac_put(mac, m);
        }
    }
    fdp__dp_unlock(dp);
    return error;
}

/* ---------------------------------------------------------------------- */
/* Control: routes.                                                        */

int
fdp_dp_route_add(struct fdp_dp *dp, const struct in6_addr *prefix_,
                 unsigned int plen, uint32_t port_no,
                 const struct in6_addr *gw_, const struct in6_addr *src_)
{
    struct fdp__underlay *ul = ul_of(dp);
    bool v4 = is_v4(prefix_);
    struct in6_addr gw = { { { 0 } } }, src = { { { 0 } } };
    int error;

    if (!plen_ok(prefix_, plen)) {
        return EINVAL;
    }
    if (gw_ && !addr_unspecified(gw_)) {
        if (is_v4(gw_) != v4) {
            return EAFNOSUPPORT;
        }
        if (!addr_assignable(gw_)) {
            return EINVAL;
        }
        gw = *gw_;
    }
    if (src_ && !addr_unspecified(src_)) {
        if (is_v4(src_) != v4) {
            return EAFNOSUPPORT;
        }
        src = *src_;
    }
    struct in6_addr prefix = addr_mask(prefix_, plen128(v4, plen));

    fdp__dp_lock(dp);
    const struct ul_conf *old = ul->conf;
    error = check_port(dp, port_no);
    if (error) {
        goto out;
    }
    if (old->n_routes >= UL_MAX_ROUTES) {
        error = ENOSPC;
        goto out;
    }
    const struct ul_route *same = route_find(old, ul, v4, plen, &prefix);
    if (same && !same->connected) {
        error = EEXIST;
        goto out;
    }
    if (!addr_is_zero(&gw)) {
        const struct ul_route *via = conf_lookup(old, ul, &gw);
        if (!via || via->port_no != port_no || !addr_is_zero(&via->gw)
            || conf_local(old, ul, &gw)) {
            error = ENETUNREACH;
            goto out;
        }
    }
    if (!addr_is_zero(&src)) {
        const struct ul_addr *a = conf_local(old, ul, &src);
        if (!a || a->port_no != port_no) {
            error = EADDRNOTAVAIL;
            goto out;
        }
    } else {
        /* As Open vSwitch: the address whose subnet holds the prefix, else
         * the gateway; else (flowdp) the port's first of the family. */
        const struct ul_addr *a = NULL;
        for (size_t k = 0; k < old->n_addrs; k++) {
            const struct ul_addr *x = &old->addrs[k];
            struct in6_addr net = addr_mask(&x->addr, plen128(v4, x->plen));
            if (x->port_no == port_no && prefix_holds(&net, v4, x->plen,
                                                      &prefix)
                && (!a || x->plen > a->plen)) {
                a = x;
            }
        }
        if (!a && !addr_is_zero(&gw)) {
            a = conf_source(old, port_no, &gw);
        }
        if (!a) {
            a = conf_source(old, port_no, &prefix);
        }
        if (!a) {
            error = EADDRNOTAVAIL;
            goto out;
        }
        src = a->addr;
    }
    struct ul_conf *c = conf_clone(old);
    if (!c) {
        error = ENOMEM;
        goto out;
    }
    c->routes[c->n_routes++] = (struct ul_route) {
        .prefix = prefix, .plen = (uint8_t) plen, .v4 = v4,
        .port_no = port_no, .gw = gw, .src = src,
    };
    error = conf_publish(ul, c);
out:
    fdp__dp_unlock(dp);
    return error;
}

int
fdp_dp_route_del(struct fdp_dp *dp, const struct in6_addr *prefix_,
                 unsigned int plen)
{
    struct fdp__underlay *ul = ul_of(dp);
    bool v4 = is_v4(prefix_);
    int error = ENOENT;

    if (!plen_ok(prefix_, plen)) {
        return EINVAL;
    }
    struct in6_addr prefix = addr_mask(prefix_, plen128(v4, plen));
    fdp__dp_lock(dp);
    struct ul_conf *old = ul->conf;
    const struct ul_route *r = route_find(old, ul, v4, plen, &prefix);
    if (!r || r->connected) {
        goto out;
    }
    struct ul_conf *c = conf_clone(old);
    if (!c) {
        error = ENOMEM;
        goto out;
    }
    size_t n = 0;
    for (size_t k = 0; k < c->n_routes; k++) {
        const struct ul_route *q = &c->routes[k];
        if (q->connected || q->v4 != v4 || q->plen != plen
            || !addr_eq(&q->prefix, &prefix)) {
            c->routes[n++] = *q;
        }
    }
    c->n_routes = n;
    error = conf_publish(ul, c);
out:
    fdp__dp_unlock(dp);
    return error;
}

static void
route_export(const struct ul_route *r, struct fdp_dp_route *out)
{
    *out = (struct fdp_dp_route) {
        .prefix = r->prefix, .plen = r->plen, .port_no = r->port_no,
        .gw = r->gw, .src = r->src, .connected = r->connected,
    };
}

static int
route_order(const void *a_, const void *b_)
{
    const struct fdp_dp_route *a = a_, *b = b_;
    bool av4 = is_v4(&a->prefix), bv4 = is_v4(&b->prefix);

    if (av4 != bv4) {
        return av4 ? -1 : 1;
    }
    if (a->plen != b->plen) {
        return a->plen > b->plen ? -1 : 1;
    }
    int c = addr_cmp(&a->prefix, &b->prefix);
    if (c) {
        return c;
    }
    return (int) a->connected - (int) b->connected;
}

size_t
fdp_dp_route_list(struct fdp_dp *dp, struct fdp_dp_route *routes, size_t max)
{
    struct fdp__underlay *ul = ul_of(dp);

    fdp__dp_lock(dp);
    const struct ul_conf *c = ul->conf;
    size_t n = c->n_routes;
    if (n && n <= max) {
        for (size_t k = 0; k < n; k++) {
            route_export(&c->routes[k], &routes[k]);
        }
        qsort(routes, n, sizeof *routes, route_order);
    } else if (n) {
        /* Not all fit: the caller asks again with room for 'n'. */
        for (size_t k = 0; k < max; k++) {
            route_export(&c->routes[k], &routes[k]);
        }
    }
    fdp__dp_unlock(dp);
    return n;
}

int
fdp_dp_route_lookup(struct fdp_dp *dp, const struct in6_addr *dst,
                    struct fdp_dp_route *route)
{
    struct fdp__underlay *ul = ul_of(dp);
    int error = EHOSTUNREACH;

    fdp__rcu_read_lock();
    const struct ul_conf *c = FDP_RCU_GET(ul->conf);
    const struct ul_route *r = conf_lookup(c, ul, dst);
    if (r) {
        route_export(r, route);
        error = 0;
    }
    fdp__rcu_read_unlock();
    return error;
}

/* ---------------------------------------------------------------------- */
/* The neighbour cache.                                                    */

static uint32_t
neigh_hash(const struct fdp__underlay *ul, uint32_t port_no,
           const struct in6_addr *ip)
{
    uint64_t w[3];

    memcpy(w, ip, 16);
    w[2] = port_no;
    return fdp_hash_keyed(w, 3, &ul->key);
}

static struct ul_neigh_table *
neigh_table_create(uint32_t limit)
{
    uint32_t n = 256;

    while (n < limit) {
        n *= 2;
    }
    struct ul_neigh_table *t = calloc(1, sizeof *t + n * sizeof *t->buckets);
    if (t) {
        t->mask = n - 1;
    }
    return t;
}

static struct ul_neigh *
neigh_find(const struct ul_neigh_table *t, uint32_t hash, uint32_t port_no,
           const struct in6_addr *ip)
{
    for (struct ul_neigh *e = FDP_RCU_GET(t->buckets[hash & t->mask]); e;
         e = FDP_RCU_GET(e->next)) {
        if (e->port_no == port_no && addr_eq(&e->ip, ip)) {
            return e;
        }
    }
    return NULL;
}

static int64_t
neigh_confirmed(const struct ul_neigh *e)
{
    return __atomic_load_n(&e->confirmed, __ATOMIC_RELAXED);
}

static bool
neigh_stale(const struct fdp__underlay *ul, const struct ul_neigh *e,
            int64_t now)
{
    uint32_t aging = __atomic_load_n(&ul->aging_ms, __ATOMIC_RELAXED);

    return !e->is_static && now - neigh_confirmed(e) >= aging;
}

static void neigh_free_rcu_table(struct rcu_head *);

static void
neigh_free_rcu(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    free(caa_container_of(head, struct ul_neigh, rcu));
}

static void
fifo_unlink(struct fdp__underlay *ul, struct ul_neigh *e)
{
    if (e->older) {
        e->older->newer = e->newer;
    } else {
        ul->oldest = e->newer;
    }
    if (e->newer) {
        e->newer->older = e->older;
    } else {
        ul->newest = e->older;
    }
    e->older = e->newer = NULL;
}

static void
fifo_append(struct fdp__underlay *ul, struct ul_neigh *e)
{
    e->newer = NULL;
    e->older = ul->newest;
    if (ul->newest) {
        ul->newest->newer = e;
    } else {
        ul->oldest = e;
    }
    ul->newest = e;
}

/* Unlinks 'e' from table 't' and frees it after a grace period.  Under
 * neigh_mutex. */
static void
neigh_remove(struct fdp__underlay *ul, struct ul_neigh_table *t,
             struct ul_neigh *e)
{
    struct ul_neigh **pp = &t->buckets[neigh_hash(ul, e->port_no, &e->ip)
                                       & t->mask];
    while (*pp != e) {
        pp = &(*pp)->next;
    }
    FDP_RCU_SET(*pp, e->next);
    if (e->is_static) {
        ul->n_static--;
    } else {
        fifo_unlink(ul, e);
        __atomic_store_n(&ul->n_learned, ul->n_learned - 1, __ATOMIC_RELAXED);
    }
    fdp__rcu_defer(&e->rcu, neigh_free_rcu);
    bump_version(ul);
}

/* Removes one learned entry to make room: of the UL_EVICT_WINDOW oldest
 * (by insertion), the one confirmed longest ago (see "Bounds and aging"
 * above).  Under neigh_mutex. */
static void
neigh_evict_one(struct fdp__underlay *ul, struct ul_neigh_table *t,
                int64_t now)
{
    struct ul_neigh *victim = NULL;
    int k = 0;

    for (struct ul_neigh *e = ul->oldest; e && k < UL_EVICT_WINDOW;
         e = e->newer, k++) {
        if (!victim || neigh_confirmed(e) < neigh_confirmed(victim)) {
            victim = e;
        }
    }
    if (victim) {
        bool stale = neigh_stale(ul, victim, now);
        neigh_remove(ul, t, victim);
        count(stale ? &ul->n_expired : &ul->n_evicted);
    }
}

/* Sets 'ip' on 'port_no' to 'mac' (static or learned) in the current
 * table.  Under neigh_mutex.  Returns 0 or ENOMEM. */
static int
neigh_set_locked(struct fdp__underlay *ul, uint32_t port_no,
                 const struct in6_addr *ip, uint64_t mac, bool is_static,
                 int64_t now)
{
    struct ul_neigh_table *t = ul->neigh;
    uint32_t hash = neigh_hash(ul, port_no, ip);
    struct ul_neigh *old = neigh_find(t, hash, port_no, ip);

    if (old && !is_static) {
        if (old->is_static) {
            return 0;           /* The user's word stands. */
        }
        if (old->mac == mac) {
            __atomic_store_n(&old->confirmed, now, __ATOMIC_RELAXED);
            __atomic_store_n(&old->probed, 0, __ATOMIC_RELAXED);
            count(&ul->n_confirmed);
            return 0;
        }
    }
    if (old && is_static && old->is_static && old->mac == mac) {
        return 0;
    }
    struct ul_neigh *e = calloc(1, sizeof *e);
    if (!e) {
        return ENOMEM;
    }
    e->ip = *ip;
    e->port_no = port_no;
    e->mac = mac;
    e->is_static = is_static;
    e->confirmed = now;
    if (!is_static && !old) {
        uint32_t limit = __atomic_load_n(&ul->limit, __ATOMIC_RELAXED);
        while (ul->n_learned >= limit && ul->oldest) {
            neigh_evict_one(ul, t, now);
        }
    }
    /* The new entry first, then the old one out: a reader finds one. */
    struct ul_neigh **bucket = &t->buckets[hash & t->mask];
    e->next = *bucket;
    FDP_RCU_SET(*bucket, e);
    if (old) {
        neigh_remove(ul, t, old);
    }
    if (is_static) {
        ul->n_static++;
    } else {
        fifo_append(ul, e);
        __atomic_store_n(&ul->n_learned, ul->n_learned + 1, __ATOMIC_RELAXED);
        count(&ul->n_learned_ev);
    }
    bump_version(ul);
    return 0;
}

/* Learns 'ip' on 'port_no' is 'mac', from a pmd: an unchanged entry is
 * confirmed without the lock; a change waits for no one (trylock). */
static void
neigh_learn(struct fdp__underlay *ul, uint32_t port_no,
            const struct in6_addr *ip, uint64_t mac)
{
    int64_t now = ul_now(ul);
    const struct ul_neigh_table *t = FDP_RCU_GET(ul->neigh);
    struct ul_neigh *e = neigh_find(t, neigh_hash(ul, port_no, ip),
                                    port_no, ip);

    if (e && e->mac == mac) {
        if (!e->is_static) {
            __atomic_store_n(&e->confirmed, now, __ATOMIC_RELAXED);
            __atomic_store_n(&e->probed, 0, __ATOMIC_RELAXED);
            count(&ul->n_confirmed);
        }
        return;
    }
    if (e && e->is_static) {
        return;
    }
    if (!pthread_mutex_trylock(&ul->neigh_mutex)) {
        neigh_set_locked(ul, port_no, ip, mac, false, now);
        pthread_mutex_unlock(&ul->neigh_mutex);
    }
}

/* ---------------------------------------------------------------------- */
/* Requests: ARP and neighbour solicitations.                              */

/* Queues a request for 'dst' on 'port_no' from 'src' unless one went in
 * the last second.  Any thread. */
static void
request_queue(struct fdp__underlay *ul, uint32_t port_no,
              const struct in6_addr *src, const struct in6_addr *dst,
              uint64_t src_mac, uint64_t dst_mac)
{
    uint64_t w[3];
    memcpy(w, dst, 16);
    w[2] = port_no;
    uint32_t h = fdp_hash_keyed(w, 3, &ul->key);
    uint64_t tag = (uint64_t) h << 32 | (uint32_t) (w[0] ^ w[1] ^ port_no);
    struct ul_rate *slot = &ul->rate[h % UL_RATE_SLOTS];
    int64_t now = ul_now(ul);

    if (__atomic_load_n(&slot->tag, __ATOMIC_RELAXED) == tag
        && now - __atomic_load_n(&slot->last, __ATOMIC_RELAXED)
           < UL_RATE_MS) {
        count(&ul->n_requests_limited);
        return;
    }
    __atomic_store_n(&slot->tag, tag, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->last, now, __ATOMIC_RELAXED);

    pthread_mutex_lock(&ul->req_mutex);
    if (ul->n_reqs < UL_MAX_REQS) {
        ul->reqs[ul->n_reqs] = (struct ul_request) {
            .port_no = port_no, .src = *src, .dst = *dst,
            .src_mac = src_mac, .dst_mac = dst_mac,
        };
        __atomic_store_n(&ul->n_reqs, ul->n_reqs + 1, __ATOMIC_RELEASE);
    } else {
        count(&ul->n_requests_limited);
    }
    pthread_mutex_unlock(&ul->req_mutex);
}

static void
put_eth(uint8_t *p, uint64_t dst, uint64_t src, uint16_t type)
{
    mac_put(p, dst);
    mac_put(p + 6, src);
    fdp__put16(p + 12, type);
}

/* The ICMPv6 checksum of the 'len' bytes at 'icmp' between 'src' and
 * 'dst' (RFC 4443 2.3: over the pseudo-header and the message). */
static uint16_t
icmp6_csum(const struct in6_addr *src, const struct in6_addr *dst,
           const uint8_t *icmp, uint32_t len)
{
    uint8_t tail[8] = { 0 };
    uint32_t sum;

    fdp__put32(tail, len);
    tail[7] = 58;
    sum = fdp__csum_add(0, src, 16);
    sum = fdp__csum_add(sum, dst, 16);
    sum = fdp__csum_add(sum, tail, 8);
    return fdp__csum(sum, icmp, len);
}

/* Writes an IPv6 header and an NS or NA with one link-layer address
 * option into 'p' (ND_SIZE bytes); the Ethernet header is the caller's. */
static void
put_nd(uint8_t *p, const struct in6_addr *src, const struct in6_addr *dst,
       uint8_t type, uint8_t flags, const struct in6_addr *target,
       uint8_t opt, uint64_t lladdr)
{
    uint8_t *ip = p + 14, *icmp = ip + 40;

    memset(ip, 0, ND_SIZE - 14);
    ip[0] = 0x60;
    fdp__put16(ip + 4, 32);     /* 24 bytes of message, 8 of option. */
    ip[6] = 58;
    ip[7] = 255;                /* RFC 4861 7.1: hop limit 255. */
    memcpy(ip + 8, src, 16);
    memcpy(ip + 24, dst, 16);
    icmp[0] = type;
    icmp[4] = flags;
    memcpy(icmp + 8, target, 16);
    icmp[24] = opt;
    icmp[25] = 1;               /* 8 bytes. */
    mac_put(icmp + 26, lladdr);
    fdp__put16(icmp + 2, icmp6_csum(src, dst, icmp, 32));
}

/* Builds the frame of request 'r' into 'p' (room for ND_SIZE bytes);
 * returns its size. */
static size_t
request_build(const struct ul_request *r, uint8_t *p)
{
    if (is_v4(&r->dst)) {
        put_eth(p, r->dst_mac ? r->dst_mac : 0xffffffffffffull, r->src_mac,
                ETH_TYPE_ARP);
        uint8_t *a = p + 14;
        fdp__put16(a, 1);               /* Ethernet. */
        fdp__put16(a + 2, 0x0800);      /* IPv4. */
        a[4] = 6;
        a[5] = 4;
        fdp__put16(a + 6, 1);           /* Request. */
        mac_put(a + 8, r->src_mac);
        fdp__put32(a + 14, v4_of(&r->src));
        memset(a + 18, 0, 6);
        fdp__put32(a + 24, v4_of(&r->dst));
        return ARP_SIZE;
    }
    struct in6_addr dst;
    uint64_t eth_dst = r->dst_mac;
    if (eth_dst) {
        dst = r->dst;
    } else {
        /* The solicited-node multicast address (RFC 4291 2.7.1) and its
         * MAC (RFC 2464 7). */
        static const uint8_t sn[13] = { 0xff, 0x02, [11] = 0x01, 0xff };
        memcpy(&dst, sn, 13);
        memcpy(&dst.s6_addr[13], &r->dst.s6_addr[13], 3);
        eth_dst = 0x3333ff000000ull | (uint64_t) r->dst.s6_addr[13] << 16
                  | (uint64_t) r->dst.s6_addr[14] << 8 | r->dst.s6_addr[15];
    }
    put_eth(p, eth_dst, r->src_mac, ETH_TYPE_IPV6);
    put_nd(p, &r->src, &dst, ICMP6_NS, 0, &r->dst, ND_OPT_SLLA, r->src_mac);
    return ND_SIZE;
}

size_t
fdp__underlay_flush_requests(struct fdp_dp *dp, fdp__underlay_emit_fn *emit,
                             void *aux)
{
    struct fdp__underlay *ul = ul_of(dp);
    struct ul_request reqs[UL_MAX_REQS];
    size_t n;

    pthread_mutex_lock(&ul->req_mutex);
    n = ul->n_reqs;
    memcpy(reqs, ul->reqs, n * sizeof *reqs);
    __atomic_store_n(&ul->n_reqs, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&ul->req_mutex);

    for (size_t i = 0; i < n; i++) {
        uint8_t frame[ND_SIZE];
        size_t size = request_build(&reqs[i], frame);
        if (emit(aux, reqs[i].port_no, frame, size)) {
            count(&ul->n_requests);
        } else {
            count(&ul->n_requests_limited);
        }
    }
    return n;
}

/* ---------------------------------------------------------------------- */
/* Aging.                                                                  */

/* Ages buckets [from, from + n) of the current table at 'now': removes
 * stale entries, asks again for those past three quarters of their
 * time.  Under neigh_mutex, in an RCU read-side section. */
static void
age_buckets(struct fdp__underlay *ul, uint32_t from, uint32_t n, int64_t now)
{
    struct ul_neigh_table *t = ul->neigh;
    const struct ul_conf *c = FDP_RCU_GET(ul->conf);
    uint32_t aging = __atomic_load_n(&ul->aging_ms, __ATOMIC_RELAXED);

    for (uint32_t b = from; b < from + n && b <= t->mask; b++) {
        struct ul_neigh *next;
        for (struct ul_neigh *e = t->buckets[b]; e; e = next) {
            next = e->next;
            if (e->is_static) {
                continue;
            }
            int64_t age = now - neigh_confirmed(e);
            if (age >= aging) {
                neigh_remove(ul, t, e);
                count(&ul->n_expired);
            } else if (age >= aging / 4 * 3
                       && !__atomic_load_n(&e->probed, __ATOMIC_RELAXED)) {
                const struct ul_port *up = conf_port(c, e->port_no);
                const struct ul_addr *src = conf_source(c, e->port_no,
                                                        &e->ip);
                __atomic_store_n(&e->probed, 1, __ATOMIC_RELAXED);
                if (up && src) {
                    request_queue(ul, e->port_no, &src->addr, &e->ip,
                                  up->mac, e->mac);
                }
            }
        }
    }
}

void
fdp__underlay_age(struct fdp_dp *dp)
{
    struct fdp__underlay *ul = ul_of(dp);

    fdp__rcu_read_lock();
    pthread_mutex_lock(&ul->neigh_mutex);
    age_buckets(ul, 0, ul->neigh->mask + 1, ul_now(ul));
    pthread_mutex_unlock(&ul->neigh_mutex);
    fdp__rcu_read_unlock();
}

void
fdp__underlay_pmd_work(struct fdp__underlay *ul, fdp__underlay_emit_fn *emit,
                       void *aux, bool tick)
{
    if (__atomic_load_n(&ul->n_reqs, __ATOMIC_ACQUIRE)) {
        struct ul_request reqs[UL_MAX_REQS];
        size_t n = 0;
        if (!pthread_mutex_trylock(&ul->req_mutex)) {
            n = ul->n_reqs;
            memcpy(reqs, ul->reqs, n * sizeof *reqs);
            __atomic_store_n(&ul->n_reqs, 0, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&ul->req_mutex);
        }
        for (size_t i = 0; i < n; i++) {
            uint8_t frame[ND_SIZE];
            size_t size = request_build(&reqs[i], frame);
            count(emit(aux, reqs[i].port_no, frame, size)
                  ? &ul->n_requests : &ul->n_requests_limited);
        }
    }
    if (!tick || !__atomic_load_n(&ul->n_learned, __ATOMIC_RELAXED)) {
        return;                 /* Nothing ages: no clock read. */
    }
    int64_t now = ul_now(ul);
    int64_t next = __atomic_load_n(&ul->next_age, __ATOMIC_RELAXED);
    if (now < next
        || !__atomic_compare_exchange_n(&ul->next_age, &next, now + 1000,
                                        false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
        return;
    }
    if (!pthread_mutex_trylock(&ul->neigh_mutex)) {
        uint32_t n_buckets = ul->neigh->mask + 1;
        uint32_t slice = n_buckets / UL_AGE_SLICES;
        age_buckets(ul, ul->age_cursor, slice, now);
        ul->age_cursor = (ul->age_cursor + slice) & ul->neigh->mask;
        pthread_mutex_unlock(&ul->neigh_mutex);
    }
}

/* ---------------------------------------------------------------------- */
/* Control: neighbours.                                                    */

int
fdp_dp_neigh_set(struct fdp_dp *dp, uint32_t port_no,
                 const struct in6_addr *ip, const uint8_t mac[6])
{
    struct fdp__underlay *ul = ul_of(dp);
    uint64_t m = mac_of(mac);
    int error;

    if (addr_unspecified(ip) || !m || mac_is_multicast(m)
        || (is_v4(ip) ? v4_of(ip) >> 28 == 0xe : ip->s6_addr[0] == 0xff)) {
        return EINVAL;
    }
    fdp__dp_lock(dp);
    error = check_port(dp, port_no);
    if (!error) {
        pthread_mutex_lock(&ul->neigh_mutex);
        error = neigh_set_locked(ul, port_no, ip, m, true, ul_now(ul));
        pthread_mutex_unlock(&ul->neigh_mutex);
    }
    fdp__dp_unlock(dp);
    return error;
}

int
fdp_dp_neigh_del(struct fdp_dp *dp, uint32_t port_no,
                 const struct in6_addr *ip)
{
    struct fdp__underlay *ul = ul_of(dp);
    int error = ENOENT;

    pthread_mutex_lock(&ul->neigh_mutex);
    struct ul_neigh *e = neigh_find(ul->neigh, neigh_hash(ul, port_no, ip),
                                    port_no, ip);
    if (e) {
        neigh_remove(ul, ul->neigh, e);
        error = 0;
    }
    pthread_mutex_unlock(&ul->neigh_mutex);
    return error;
}

/* Removes the entries that 'pred' selects.  Under neigh_mutex. */
static size_t
neigh_remove_if(struct fdp__underlay *ul,
                bool (*pred)(const struct ul_neigh *, uint32_t),
                uint32_t arg)
{
    struct ul_neigh_table *t = ul->neigh;
    size_t n = 0;

    for (uint32_t b = 0; b <= t->mask; b++) {
        struct ul_neigh *next;
        for (struct ul_neigh *e = t->buckets[b]; e; e = next) {
            next = e->next;
            if (pred(e, arg)) {
                neigh_remove(ul, t, e);
                n++;
            }
        }
    }
    return n;
}

static bool
neigh_is_learned(const struct ul_neigh *e, uint32_t arg)
{
    (void) arg;
    return !e->is_static;
}

static bool
neigh_on_port(const struct ul_neigh *e, uint32_t port_no)
{
    return e->port_no == port_no;
}

size_t
fdp_dp_neigh_flush(struct fdp_dp *dp)
{
    struct fdp__underlay *ul = ul_of(dp);

    pthread_mutex_lock(&ul->neigh_mutex);
    size_t n = neigh_remove_if(ul, neigh_is_learned, 0);
    pthread_mutex_unlock(&ul->neigh_mutex);
    return n;
}

static int
neigh_order(const void *a_, const void *b_)
{
    const struct fdp_dp_neigh *a = a_, *b = b_;

    if (a->port_no != b->port_no) {
        return a->port_no < b->port_no ? -1 : 1;
    }
    bool av4 = is_v4(&a->ip), bv4 = is_v4(&b->ip);
    if (av4 != bv4) {
        return av4 ? -1 : 1;
    }
    return addr_cmp(&a->ip, &b->ip);
}

size_t
fdp_dp_neigh_list(struct fdp_dp *dp, struct fdp_dp_neigh *neighs, size_t max)
{
    struct fdp__underlay *ul = ul_of(dp);
    size_t n = 0;

    pthread_mutex_lock(&ul->neigh_mutex);
    const struct ul_neigh_table *t = ul->neigh;
    int64_t now = ul_now(ul);
    for (uint32_t b = 0; b <= t->mask; b++) {
        for (const struct ul_neigh *e = t->buckets[b]; e; e = e->next) {
            if (n < max) {
                struct fdp_dp_neigh *x = &neighs[n];
                int64_t age = now - neigh_confirmed(e);
                x->port_no = e->port_no;
                x->ip = e->ip;
                mac_put(x->mac, e->mac);
                x->is_static = e->is_static;
                x->stale = neigh_stale(ul, e, now);
                x->age = e->is_static || age < 0 ? 0 : (uint32_t) (age / 1000);
            }
            n++;
        }
    }
    pthread_mutex_unlock(&ul->neigh_mutex);
    if (n && n <= max) {
        qsort(neighs, n, sizeof *neighs, neigh_order);
    }
    return n;
}

int
fdp_dp_neigh_set_limit(struct fdp_dp *dp, uint32_t limit)
{
    struct fdp__underlay *ul = ul_of(dp);
    int error = 0;

    if (!limit || limit > UL_MAX_LIMIT) {
        return EINVAL;
    }
    pthread_mutex_lock(&ul->neigh_mutex);
    struct ul_neigh_table *old = ul->neigh;
    if (old->mask + 1 < limit) {
        /* More buckets: a new table of copies, published whole (entries
         * are linked into one chain each, so they cannot move). */
        struct ul_neigh_table *t = neigh_table_create(limit);
        struct ul_neigh *oldest = ul->oldest;
        struct ul_neigh **copies = NULL;
        size_t n_copies = ul->n_learned + ul->n_static, k = 0;
        if (t) {
            copies = calloc(n_copies ? n_copies : 1, sizeof *copies);
        }
        bool ok = t && copies;
        for (uint32_t b = 0; ok && b <= old->mask; b++) {
            for (struct ul_neigh *e = old->buckets[b]; e; e = e->next) {
                struct ul_neigh *x = malloc(sizeof *x);
                if (!x) {
                    ok = false;
                    break;
                }
                *x = *e;
                x->older = x->newer = NULL;
                x->next = t->buckets[neigh_hash(ul, x->port_no, &x->ip)
                                     & t->mask];
                t->buckets[neigh_hash(ul, x->port_no, &x->ip) & t->mask] = x;
                copies[k++] = x;
            }
        }
        if (!ok) {
            for (size_t i = 0; i < k; i++) {
                free(copies[i]);
            }
            free(copies);
            free(t);
            pthread_mutex_unlock(&ul->neigh_mutex);
            return ENOMEM;
        }
        /* The FIFO in the old order: find each old entry's copy. */
        ul->oldest = ul->newest = NULL;
        for (struct ul_neigh *e = oldest; e; e = e->newer) {
            struct ul_neigh *x = neigh_find(t, neigh_hash(ul, e->port_no,
                                                          &e->ip),
                                            e->port_no, &e->ip);
            fifo_append(ul, x);
        }
        FDP_RCU_SET(ul->neigh, t);
        free(copies);
        for (uint32_t b = 0; b <= old->mask; b++) {
            struct ul_neigh *next;
            for (struct ul_neigh *e = old->buckets[b]; e; e = next) {
                next = e->next;
                fdp__rcu_defer(&e->rcu, neigh_free_rcu);
            }
        }
        fdp__rcu_defer(&old->rcu, neigh_free_rcu_table);
        ul->age_cursor = 0;
    }
    __atomic_store_n(&ul->limit, limit, __ATOMIC_RELAXED);
    int64_t now = ul_now(ul);
    while (ul->n_learned > limit && ul->oldest) {
        neigh_evict_one(ul, ul->neigh, now);
    }
    pthread_mutex_unlock(&ul->neigh_mutex);
    return error;
}

uint32_t
fdp_dp_neigh_get_limit(struct fdp_dp *dp)
{
    return __atomic_load_n(&ul_of(dp)->limit, __ATOMIC_RELAXED);
}

int
fdp_dp_neigh_set_aging(struct fdp_dp *dp, uint32_t seconds)
{
    if (!seconds || seconds > UL_MAX_AGING_S) {
        return EINVAL;
    }
    __atomic_store_n(&ul_of(dp)->aging_ms, seconds * 1000, __ATOMIC_RELAXED);
    return 0;
}

uint32_t
fdp_dp_neigh_get_aging(struct fdp_dp *dp)
{
    return __atomic_load_n(&ul_of(dp)->aging_ms, __ATOMIC_RELAXED) / 1000;
}

void
fdp_dp_underlay_get_stats(struct fdp_dp *dp,
                          struct fdp_dp_underlay_stats *s)
{
    struct fdp__underlay *ul = ul_of(dp);

    memset(s, 0, sizeof *s);
    s->n_no_route = load64(&ul->n_no_route);
    s->n_bad_source = load64(&ul->n_bad_source);
    s->n_no_neigh = load64(&ul->n_no_neigh);
    s->n_requests = load64(&ul->n_requests);
    s->n_requests_limited = load64(&ul->n_requests_limited);
    s->n_replies = load64(&ul->n_replies);
    s->n_learned = load64(&ul->n_learned_ev);
    s->n_confirmed = load64(&ul->n_confirmed);
    s->n_evicted = load64(&ul->n_evicted);
    s->n_expired = load64(&ul->n_expired);
    pthread_mutex_lock(&ul->neigh_mutex);
    s->n_neighs = ul->n_learned;
    s->n_static = ul->n_static;
    pthread_mutex_unlock(&ul->neigh_mutex);
    s->version = fdp__underlay_version(dp);
}

/* ---------------------------------------------------------------------- */
/* For tunnel ports.                                                       */

int
fdp__underlay_resolve(struct fdp_dp *dp, const struct in6_addr *dst,
                      const struct in6_addr *src_or_null,
                      struct fdp__nexthop *nh)
{
    struct fdp__underlay *ul = ul_of(dp);
    int error = 0;

    fdp__rcu_read_lock();
    const struct ul_conf *c = FDP_RCU_GET(ul->conf);
    bool given = src_or_null && !addr_unspecified(src_or_null);
    if (given && (is_v4(src_or_null) != is_v4(dst)
                  || !conf_local(c, ul, src_or_null))) {
        count(&ul->n_bad_source);
        error = EHOSTUNREACH;
        goto out;
    }
    const struct ul_route *r = conf_lookup(c, ul, dst);
    if (!r || conf_local(c, ul, dst)) {
        count(&ul->n_no_route);
        error = EHOSTUNREACH;
        goto out;
    }
    const struct ul_port *up = conf_port(c, r->port_no);
    if (!up) {
        /* Not reached: every route's port has its ul_port. */
        count(&ul->n_no_route);
        error = EHOSTUNREACH;
        goto out;
    }
    const struct in6_addr *hop = addr_is_zero(&r->gw) ? dst : &r->gw;
    nh->port_no = r->port_no;
    nh->src = given ? *src_or_null : r->src;
    nh->src_mac = up->mac;

    const struct ul_neigh_table *t = FDP_RCU_GET(ul->neigh);
    const struct ul_neigh *e = neigh_find(t, neigh_hash(ul, r->port_no, hop),
                                          r->port_no, hop);
    if (e && !neigh_stale(ul, e, ul_now(ul))) {
        nh->dst_mac = e->mac;
    } else {
        nh->dst_mac = 0;
        count(&ul->n_no_neigh);
        request_queue(ul, r->port_no, &r->src, hop, up->mac, 0);
        error = EAGAIN;
    }
out:
    fdp__rcu_read_unlock();
    return error;
}

uint64_t
fdp__underlay_version(const struct fdp_dp *dp)
{
    return __atomic_load_n(&ul_of(dp)->version, __ATOMIC_ACQUIRE);
}

bool
fdp__underlay_is_local(const struct fdp_dp *dp, const struct in6_addr *addr)
{
    const struct fdp__underlay *ul = ul_of(dp);

    fdp__rcu_read_lock();
    const struct ul_conf *c = FDP_RCU_GET(ul->conf);
    bool local = c->n_addrs && conf_local(c, ul, addr);
    fdp__rcu_read_unlock();
    return local;
}

/* ---------------------------------------------------------------------- */
/* Receiving: snooping and answering.                                      */

bool
fdp__underlay_rx_wanted(struct fdp__underlay *ul, uint32_t port_no)
{
    const struct ul_conf *c = FDP_RCU_GET(ul->conf);

    if (!c->n_addrs) {
        return false;
    }
    const struct ul_port *up = conf_port(c, port_no);
    return up && up->n_addrs;
}

/* True if 'a' is an address of port 'port_no'. */
static bool
local_on(const struct ul_conf *c, const struct fdp__underlay *ul,
         uint32_t port_no, const struct in6_addr *a)
{
    const struct ul_addr *x = conf_local(c, ul, a);

    return x && x->port_no == port_no;
}

static enum fdp__underlay_verdict
rx_arp(struct fdp__underlay *ul, const struct ul_conf *c, uint32_t port_no,
       struct fdp__pkt *pkt)
{
    uint8_t *p = pkt->data, *a = p + 14;

    if (pkt->size < ARP_SIZE || fdp__get16(a) != 1
        || fdp__get16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4) {
        return FDP__UNDERLAY_PASS;
    }
    uint16_t op = fdp__get16(a + 6);
    uint64_t sha = mac_of(a + 8);
    struct in6_addr spa, tpa;
    set_v4(&spa, fdp__get32(a + 14));
    set_v4(&tpa, fdp__get32(a + 24));
    bool sane = sha && !mac_is_multicast(sha) && v4_of(&spa);
    bool for_us = op == 1 && local_on(c, ul, port_no, &tpa);

    /* Replies, gratuitous ARPs, and requests for us teach the sender's
     * MAC; other requests (anyone asking anyone) do not. */
    if (sane && (op == 2 || addr_eq(&spa, &tpa) || for_us)
        && conf_onlink(c, ul, port_no, &spa)) {
        neigh_learn(ul, port_no, &spa, sha);
    }
    if (!for_us) {
        return FDP__UNDERLAY_PASS;
    }
    if (!sha || mac_is_multicast(sha)) {
        return FDP__UNDERLAY_PASS;  /* No one to answer. */
    }
    const struct ul_port *up = conf_port(c, port_no);
    if (!up) {
        return FDP__UNDERLAY_PASS;  /* Not reached: it has an address. */
    }
    uint64_t mac = up->mac;
    put_eth(p, sha, mac, ETH_TYPE_ARP);
    fdp__put16(a + 6, 2);
    mac_put(a + 18, sha);               /* Target: the asker... */
    memcpy(a + 24, a + 14, 4);
    mac_put(a + 8, mac);                /* ...sender: us. */
    fdp__put32(a + 14, v4_of(&tpa));
    pkt->size = ARP_SIZE;
    count(&ul->n_replies);
    return FDP__UNDERLAY_REPLY;
}

/* The value of the first option of type 'type' in the 'len' bytes of
 * options at 'o' (a link-layer address: 8-byte option), or 0; '*bad' set
 * if the options are malformed (RFC 4861 4.6: length 0). */
static uint64_t
nd_option(const uint8_t *o, uint32_t len, uint8_t type, bool *bad)
{
    uint64_t found = 0;

    *bad = false;
    while (len >= 2) {
        uint32_t olen = o[1] * 8u;
        if (!olen || olen > len) {
            *bad = true;
            return 0;
        }
        if (o[0] == type && olen == 8 && !found) {
            found = mac_of(o + 2);
        }
        o += olen;
        len -= olen;
    }
    return found;
}

static enum fdp__underlay_verdict
rx_nd(struct fdp__underlay *ul, const struct ul_conf *c, uint32_t port_no,
      struct fdp__pkt *pkt, uint32_t room)
{
    uint8_t *p = pkt->data, *ip = p + 14, *icmp = ip + 40;

    if (pkt->size < 14 + 40 + 24 || (ip[0] >> 4) != 6 || ip[6] != 58
        || ip[7] != 255 || (icmp[0] != ICMP6_NS && icmp[0] != ICMP6_NA)
        || icmp[1] != 0) {
        return FDP__UNDERLAY_PASS;
    }
    uint32_t len = fdp__get16(ip + 4);
    if (len < 24 || 14 + 40 + len > pkt->size) {
        return FDP__UNDERLAY_PASS;
    }
    struct in6_addr src, dst, target;
    memcpy(&src, ip + 8, 16);
    memcpy(&dst, ip + 24, 16);
    memcpy(&target, icmp + 8, 16);
    if (icmp6_csum(&src, &dst, icmp, len) != 0 || target.s6_addr[0] == 0xff) {
        return FDP__UNDERLAY_PASS;
    }
    bool bad;
    if (icmp[0] == ICMP6_NA) {
        uint64_t tlla = nd_option(icmp + 24, len - 24, ND_OPT_TLLA, &bad);
        if (!bad && tlla && !mac_is_multicast(tlla)
            && conf_onlink(c, ul, port_no, &target)) {
            neigh_learn(ul, port_no, &target, tlla);
        }
        return FDP__UNDERLAY_PASS;
    }
    uint64_t slla = nd_option(icmp + 24, len - 24, ND_OPT_SLLA, &bad);
    bool dad = addr_is_zero(&src);
    if (bad || !local_on(c, ul, port_no, &target) || (dad && slla)
        || mac_is_multicast(slla) || room < ND_SIZE) {
        return FDP__UNDERLAY_PASS;
    }
    if (!dad && slla && conf_onlink(c, ul, port_no, &src)) {
        neigh_learn(ul, port_no, &src, slla);
    }
    /* RFC 4861 7.2.4: to the solicitation's source (all-nodes for a DAD
     * probe, then not "solicited"), override set. */
    const struct ul_port *up = conf_port(c, port_no);
    if (!up) {
        return FDP__UNDERLAY_PASS;  /* Not reached: it has an address. */
    }
    uint64_t mac = up->mac;
    uint64_t eth_dst = slla ? slla : mac_of(p + 6);
    struct in6_addr to = src;
    uint8_t flags = 0x60;               /* Solicited, override. */
    if (dad) {
        static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
        memcpy(&to, all_nodes, 16);
        eth_dst = 0x333300000001ull;
        flags = 0x20;
    }
    put_eth(p, eth_dst, mac, ETH_TYPE_IPV6);
    put_nd(p, &target, &to, ICMP6_NA, flags, &target, ND_OPT_TLLA, mac);
    pkt->size = ND_SIZE;
    count(&ul->n_replies);
    return FDP__UNDERLAY_REPLY;
}

enum fdp__underlay_verdict
fdp__underlay_rx(struct fdp__underlay *ul, uint32_t port_no,
                 struct fdp__pkt *pkt, uint32_t room)
{
    const struct ul_conf *c = FDP_RCU_GET(ul->conf);

    /* Untagged Ethernet II only: the underlay has no VLANs. */
    if (pkt->layout.l3 != 14 || pkt->layout.l2_5 >= 0) {
        return FDP__UNDERLAY_PASS;
    }
    uint16_t type = fdp__get16(pkt->data + 12);
    if (type == ETH_TYPE_ARP) {
        return rx_arp(ul, c, port_no, pkt);
    }
    if (type == ETH_TYPE_IPV6 && pkt->layout.l4 == 14 + 40) {
        return rx_nd(ul, c, port_no, pkt, room);
    }
    return FDP__UNDERLAY_PASS;
}

/* ---------------------------------------------------------------------- */
/* Life cycle.                                                             */

static void
neigh_free_rcu_table(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    free(caa_container_of(head, struct ul_neigh_table, rcu));
}

int
fdp__underlay_create(struct fdp__underlay **ulp)
{
    struct fdp__underlay *ul = calloc(1, sizeof *ul);

    *ulp = NULL;
    if (!ul) {
        return ENOMEM;
    }
    int error = fdp_hash_random_basis(&ul->basis);
    if (!error) {
        error = fdp_hash_random_key(&ul->key);
    }
    if (error) {
        free(ul);
        return error;
    }
    ul->limit = UL_DEFAULT_LIMIT;
    ul->aging_ms = UL_DEFAULT_AGING_S * 1000;
    ul->conf = conf_clone(NULL);
    ul->neigh = neigh_table_create(ul->limit);
    if (!ul->conf || !ul->neigh || conf_index(ul->conf, ul)) {
        conf_free(ul->conf);
        free(ul->neigh);
        free(ul);
        return ENOMEM;
    }
    pthread_mutex_init(&ul->neigh_mutex, NULL);
    pthread_mutex_init(&ul->req_mutex, NULL);
    *ulp = ul;
    return 0;
}

void
fdp__underlay_destroy(struct fdp__underlay *ul)
{
    if (!ul) {
        return;
    }
    /* No reader is left; entries deferred earlier are freed by the
     * caller's barrier, or here by ours. */
    struct ul_neigh_table *t = ul->neigh;
    for (uint32_t b = 0; b <= t->mask; b++) {
        struct ul_neigh *next;
        for (struct ul_neigh *e = t->buckets[b]; e; e = next) {
            next = e->next;
            free(e);
        }
    }
    free(t);
    conf_free(ul->conf);
    fdp__rcu_barrier();
    pthread_mutex_destroy(&ul->neigh_mutex);
    pthread_mutex_destroy(&ul->req_mutex);
    free(ul);
}

static bool
route_on_port(const struct ul_route *r, uint32_t port_no)
{
    return r->port_no == port_no;
}

void
fdp__underlay_port_deleted(struct fdp__underlay *ul, uint32_t port_no)
{
    const struct ul_conf *old = ul->conf;

    if (conf_port(old, port_no)) {
        struct ul_conf *c = conf_clone(old);
        if (c) {
            size_t n = 0;
            for (size_t k = 0; k < c->n_ports; k++) {
                if (c->ports[k].port_no != port_no) {
                    c->ports[n++] = c->ports[k];
                }
            }
            c->n_ports = n;
            n = 0;
            for (size_t k = 0; k < c->n_addrs; k++) {
                if (c->addrs[k].port_no != port_no) {
                    c->addrs[n++] = c->addrs[k];
                }
            }
            c->n_addrs = n;
            n = 0;
            for (size_t k = 0; k < c->n_routes; k++) {
                if (!route_on_port(&c->routes[k], port_no)) {
                    c->routes[n++] = c->routes[k];
                }
            }
            c->n_routes = n;
            conf_publish(ul, c);
        }
        /* Out of memory, the old snapshot stays: its routes name a port
         * that is gone, which the datapath's output drops. */
    }
    pthread_mutex_lock(&ul->neigh_mutex);
    neigh_remove_if(ul, neigh_on_port, port_no);
    pthread_mutex_unlock(&ul->neigh_mutex);
}

void
fdp__underlay_set_clock(struct fdp_dp *dp, int64_t (*now)(void *aux),
                        void *aux)
{
    struct fdp__underlay *ul = ul_of(dp);

    ul->now = now;
    ul->now_aux = aux;
    __atomic_store_n(&ul->next_age, 0, __ATOMIC_RELAXED);
}
