/*
 * flowdp: the underlay, the IP network under tunnel ports: addresses on
 * the datapath's own ports, a route table and a neighbour (ARP and ND)
 * cache, as Open vSwitch 3.1's userspace datapath has them
 * (lib/ovs-router.c, lib/tnl-neigh-cache.c, the "tnl/arp" handling of
 * ofproto-dpif-xlate.c), without a bridge of their own: addresses go
 * directly on ring, pcap, afpacket and afxdp ports.
 *
 * Addresses.  IPv4 and IPv6 addresses live in struct in6_addr, IPv4 as
 * IPv4-mapped (::ffff:a.b.c.d), as Open vSwitch keeps them; prefix
 * lengths are those of the family (0..32 for IPv4, 0..128 for IPv6).  A
 * port with an address answers ARP requests and IPv6 neighbour
 * solicitations for it (out of the same port; the request does not reach
 * the pipeline) and uses it as the source of encapsulated packets.
 * Adding an address adds its connected route (the prefix, straight out
 * of the port); deleting it deletes the routes whose source it is.
 *
 * The port's MAC.  Answers and requests carry the port's MAC: for
 * afpacket and afxdp ports, the interface's own (SIOCGIFHWADDR, read when
 * the port gets its first address); for ring and pcap ports,
 * 02:fd:00:00:HH:LL, a locally administered address made from the port
 * number HHLL.  fdp_dp_port_set_mac() overrides either.
 *
 * Routes.  Longest prefix match over each family on its own (an IPv6
 * route never carries IPv4 traffic, whatever its prefix); between a route
 * added by the user and a connected route of the same prefix, the user's.
 * A route has an output port, an optional gateway (which must be
 * reachable straight out of that port: a route without gateway through
 * the same port covers it) and a source address (given, or chosen as
 * Open vSwitch does: the port's address whose subnet holds the prefix,
 * else the one whose subnet holds the gateway, else the port's first
 * address of the family).
 *
 * Neighbours.  An IP -> MAC cache per port, filled by snooping ARP replies
 * and gratuitous ARPs, ARP requests for the port's own addresses, and
 * IPv6 neighbour advertisements with a target link-layer address and
 * solicitations for the port's own addresses, when they come from a host
 * the route table puts straight out of that port; and by asking (an ARP
 * request or a neighbour solicitation, at most one per destination per
 * second) when a tunnel resolves a destination the cache lacks.  Learned
 * entries expire 'aging' seconds after they were last confirmed (900 by
 * default, Open vSwitch's 15 minutes), and are asked for again, unicast,
 * when three quarters of that have passed, so that an entry in use is
 * renewed before it lapses.  At most 'limit' learned entries (8192 by
 * default): a new one then replaces the oldest one not confirmed
 * recently.  Static entries (fdp_dp_neigh_set()) never expire and do not
 * count against the limit.
 *
 * Errors: 0 or a positive errno, as each function lists.
 *
 * Thread-safety: every function here is a control function: any thread,
 * serialised on the datapath's mutex, concurrently with the pmds (which
 * never wait for it).
 */
#ifndef FLOWDP_UNDERLAY_H
#define FLOWDP_UNDERLAY_H 1

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <flowdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fdp_dp;

/* ---- Addresses ---- */

struct fdp_dp_addr {
    uint32_t port_no;
    struct in6_addr addr;       /* IPv4-mapped for IPv4. */
    unsigned int plen;          /* The family's: 0..32 for IPv4. */
};

/* Adds 'addr'/'plen' to port 'port_no', and its connected route.
 * Returns 0; ENOENT (no such port); EINVAL ('plen' out of range for the
 * family; an unspecified, multicast, loopback or IPv4 broadcast address);
 * EOPNOTSUPP (a port type that carries no underlay: only ring, pcap,
 * afpacket and afxdp ports do); EEXIST (the datapath already has that
 * address, on any port); ENOSPC (4096 addresses already); an errno from
 * reading an afpacket or afxdp interface's MAC; ENOMEM. */
FDP_API int fdp_dp_addr_add(struct fdp_dp *dp, uint32_t port_no,
                            const struct in6_addr *addr, unsigned int plen);

/* Removes 'addr'/'plen' from port 'port_no', with its connected route
 * and the routes whose source it is.  Returns 0, ENOENT (no such address
 * with that prefix length on that port) or ENOMEM. */
FDP_API int fdp_dp_addr_del(struct fdp_dp *dp, uint32_t port_no,
                            const struct in6_addr *addr, unsigned int plen);

/* Fills 'addrs' with up to 'max' addresses, by port and then in order of
 * addition, and returns how many there are. */
FDP_API size_t fdp_dp_addr_list(struct fdp_dp *dp, struct fdp_dp_addr *addrs,
                                size_t max);

/* Sets the MAC that port 'port_no''s underlay uses (answers, requests,
 * tunnel headers) to 'mac'.  Returns 0, ENOENT (no such port), EINVAL (a
 * multicast or zero MAC), EOPNOTSUPP (as fdp_dp_addr_add()) or ENOMEM. */
FDP_API int fdp_dp_port_set_mac(struct fdp_dp *dp, uint32_t port_no,
                                const uint8_t mac[6]);

/* The MAC port 'port_no''s underlay uses, set, read from the interface
 * or derived (see above).  Returns 0, ENOENT, EOPNOTSUPP, or an errno
 * from reading the interface's MAC. */
FDP_API int fdp_dp_port_get_mac(struct fdp_dp *dp, uint32_t port_no,
                                uint8_t mac[6]);

/* ---- Routes ---- */

struct fdp_dp_route {
    struct in6_addr prefix;     /* IPv4-mapped for IPv4; host bits zero. */
    unsigned int plen;          /* The family's. */
    uint32_t port_no;
    struct in6_addr gw;         /* All zero: none (the destination is on
                                 * the link). */
    struct in6_addr src;
    bool connected;             /* Added with an address. */
};

/* Adds a route to 'prefix'/'plen' (host bits are cleared) out of port
 * 'port_no', through gateway 'gw' (NULL or unspecified: none), from
 * source 'src' (NULL or unspecified: chosen, see above).  Returns 0;
 * ENOENT (no such port); EINVAL ('plen' out of range, a multicast
 * gateway); EAFNOSUPPORT (the gateway or source is not of the prefix's
 * family); EADDRNOTAVAIL ('src' is not an address of the port, or the
 * port has no address of the family to choose); ENETUNREACH (the gateway
 * is not reachable straight out of the port); EEXIST (a route the user
 * added has that prefix already); ENOSPC (65536 routes already);
 * ENOMEM. */
FDP_API int fdp_dp_route_add(struct fdp_dp *dp, const struct in6_addr *prefix,
                             unsigned int plen, uint32_t port_no,
                             const struct in6_addr *gw,
                             const struct in6_addr *src);

/* Removes the route the user added to 'prefix'/'plen' (connected routes go
 * with their addresses).  Returns 0, EINVAL ('plen' out of range), ENOENT
 * or ENOMEM. */
FDP_API int fdp_dp_route_del(struct fdp_dp *dp, const struct in6_addr *prefix,
                             unsigned int plen);

/* Fills 'routes' with up to 'max' routes (IPv4 first, then by prefix
 * length, longest first, then by prefix) and returns how many there
 * are. */
FDP_API size_t fdp_dp_route_list(struct fdp_dp *dp,
                                 struct fdp_dp_route *routes, size_t max);

/* Where a packet to 'dst' would go: the route's port, gateway and source
 * (Open vSwitch's ovs/route/lookup).  Returns 0 or EHOSTUNREACH. */
FDP_API int fdp_dp_route_lookup(struct fdp_dp *dp, const struct in6_addr *dst,
                                struct fdp_dp_route *route);

/* ---- Neighbours ---- */

struct fdp_dp_neigh {
    uint32_t port_no;
    struct in6_addr ip;
    uint8_t mac[6];
    bool is_static;
    bool stale;                 /* Expired, not yet removed. */
    uint32_t age;               /* Seconds since last confirmed. */
};

/* Sets a static entry: 'ip' on port 'port_no' is 'mac' (replacing a
 * learned one).  Returns 0; ENOENT (no such port); EINVAL (an
 * unspecified or multicast IP, a zero or multicast MAC); EOPNOTSUPP (as
 * fdp_dp_addr_add()); ENOMEM. */
FDP_API int fdp_dp_neigh_set(struct fdp_dp *dp, uint32_t port_no,
                             const struct in6_addr *ip, const uint8_t mac[6]);

/* Removes the entry for 'ip' on port 'port_no', static or learned.
 * Returns 0 or ENOENT. */
FDP_API int fdp_dp_neigh_del(struct fdp_dp *dp, uint32_t port_no,
                             const struct in6_addr *ip);

/* Removes every learned entry (static ones stay).  Returns how many went. */
FDP_API size_t fdp_dp_neigh_flush(struct fdp_dp *dp);

/* Fills 'neighs' with up to 'max' entries (by port, then IPv4 before IPv6,
 * then by address) and returns how many there are. */
FDP_API size_t fdp_dp_neigh_list(struct fdp_dp *dp,
                                 struct fdp_dp_neigh *neighs, size_t max);

/* The most learned entries (1..1048576; default 8192).  Lowering it below
 * the present count evicts the oldest.  Returns 0 or EINVAL. */
FDP_API int fdp_dp_neigh_set_limit(struct fdp_dp *dp, uint32_t limit);
FDP_API uint32_t fdp_dp_neigh_get_limit(struct fdp_dp *dp);

/* Seconds a learned entry lives after it was last confirmed (1..3600, as
 * Open vSwitch's tnl/neigh/aging; default 900).  Returns 0 or EINVAL. */
FDP_API int fdp_dp_neigh_set_aging(struct fdp_dp *dp, uint32_t seconds);
FDP_API uint32_t fdp_dp_neigh_get_aging(struct fdp_dp *dp);

/* ---- Counters ---- */

struct fdp_dp_underlay_stats {
    /* Resolutions that failed, by reason: what a tunnel drops. */
    uint64_t n_no_route;        /* No route to the destination (or the
                                 * destination is the datapath's own). */
    uint64_t n_bad_source;      /* A source asked for that is not one of
                                 * the datapath's addresses. */
    uint64_t n_no_neigh;        /* The next hop's MAC unknown (asked). */
    /* ARP and ND. */
    uint64_t n_requests;        /* ARP requests and solicitations sent. */
    uint64_t n_requests_limited;    /* Not sent: one per destination per
                                     * second, or the queue was full. */
    uint64_t n_replies;         /* Requests for our addresses answered. */
    uint64_t n_learned;         /* Entries learned or changed. */
    uint64_t n_confirmed;       /* Entries confirmed unchanged. */
    uint64_t n_evicted;         /* Removed to make room (the limit). */
    uint64_t n_expired;         /* Removed after their aging time. */
    uint64_t n_neighs;          /* Learned entries now. */
    uint64_t n_static;          /* Static entries now. */
    uint64_t version;           /* Changes with any address, route or
                                 * neighbour. */
};

FDP_API void fdp_dp_underlay_get_stats(struct fdp_dp *dp,
                                       struct fdp_dp_underlay_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_UNDERLAY_H */
