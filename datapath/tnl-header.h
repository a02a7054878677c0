/*
 * Tunnel headers: building, pushing and popping the outer headers of
 * VXLAN, Geneve and GRE over IPv4 and IPv6 (internal to the datapath).
 *
 * Pure functions on bytes: no ports, no routes, no locks.  The datapath
 * (datapath/port-tunnel.c) builds a header once per (tunnel port,
 * destination, key...) with fdp__tnl_build(), keeps it, and pushes it in
 * front of each packet with fdp__tnl_push(), which fills in what varies
 * per packet (lengths, the IPv4 header checksum, the UDP source port, the
 * UDP or GRE checksum when asked for).  Arriving packets are checked and
 * their tunnel metadata read by fdp__tnl_pop(), which says how many bytes
 * of outer header to strip, or why the packet must be dropped.
 * datapath/tnl-header.c has the formats and Open vSwitch's rules.
 *
 * Thread-safety: every function is reentrant.
 */
#ifndef FDP_TNL_HEADER_H
#define FDP_TNL_HEADER_H 1

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The tunnel protocols. */
enum fdp__tnl_kind {
    FDP__TNL_VXLAN,             /* RFC 7348, UDP port 4789 by default. */
    FDP__TNL_GENEVE,            /* RFC 8926, UDP port 6081 by default. */
    FDP__TNL_GRE,               /* RFC 2784/2890, IP protocol 47, carrying
                                 * Ethernet (0x6558). */
};

/* Tunnel flags, with Open vSwitch's bit values (FLOW_TNL_F_*): OAM is the
 * public one (the tun_flags field); the others say how to build the
 * header and what an arriving one had. */
#define FDP__TNL_F_OAM  (1u << 0)   /* Geneve's O bit. */
#define FDP__TNL_F_DF   (1u << 1)   /* IPv4 don't-fragment. */
#define FDP__TNL_F_CSUM (1u << 2)   /* UDP or GRE checksum. */
#define FDP__TNL_F_KEY  (1u << 3)   /* A key (VNI, GRE key) is present. */

/* The Geneve option space of the flow key: 32 bytes in 8 slots of 4; bit
 * i of the presence byte says that slot i starts an option the packet
 * carried (key.h's tunnel-metadata space). */
#define FDP__TNL_SPACE 32
#define FDP__TNL_SLOTS (FDP__TNL_SPACE / 4)

/* The most bytes of Geneve options a header carries: the 6-bit opt_len
 * counts 4-byte words. */
#define FDP__TNL_OPTS_MAX 252

/* The tunnel metadata of a packet: what decapsulation found, or what
 * encapsulation is to use.  Addresses are IPv6, an IPv4 one v4-mapped
 * (::ffff:a.b.c.d); numbers are in host order. */
struct fdp__tnl_md {
    uint64_t id;                /* tun_id: the VNI (24 bits) or GRE key
                                 * (32 bits). */
    struct in6_addr src, dst;   /* The outer source and destination. */
    uint8_t tos, ttl;           /* The outer TOS (traffic class), TTL. */
    uint16_t flags;             /* FDP__TNL_F_*. */
    uint16_t gbp_id;            /* VXLAN group policy (exts=gbp). */
    uint8_t gbp_flags;
    uint8_t present;            /* Bit i: an option starts at slot i. */
    uint16_t tp_src, tp_dst;    /* Outer UDP ports (0 for GRE). */
    uint8_t space[FDP__TNL_SPACE];  /* Geneve option values, placed by
                                     * the TLV map. */
};

/* One Geneve option of a TLV map: (class, type, len) carried in
 * tun_metadata<index>, whose value lives at byte 'ofs' of the option
 * space (4-byte aligned, 'len' bytes, a multiple of 4). */
struct fdp__tnl_tlv {
    uint16_t opt_class;
    uint8_t type;
    uint8_t len;
    uint8_t ofs;
    uint8_t index;
};

/* A TLV map: its options in increasing order of 'index' (the order
 * Open vSwitch writes options in). */
struct fdp__tnl_tlv_map {
    uint32_t n;
    const struct fdp__tnl_tlv *tlvs;
};

/* Why an arriving tunnel packet, or one to be sent, was dropped.  The
 * names (fdp__tnl_drop_name()) are what "show" prints. */
#define FDP__TNL_DROPS(X)                                               \
    X(TRUNCATED, "truncated")       /* Shorter than its headers. */     \
    X(IP_VERSION, "ip_version")     /* Not IPv4 or IPv6. */             \
    X(IP_OPTIONS, "ip_options")     /* IPv4 options, IPv6 extension
                                     * headers. */                      \
    X(IP_FRAGMENT, "ip_fragment")   /* An IPv4 fragment. */             \
    X(IP_CSUM, "ip_csum")           /* Bad IPv4 header checksum. */     \
    X(IP_LENGTH, "ip_length")       /* IP length beyond the packet. */  \
    X(UDP_LENGTH, "udp_length")     /* UDP length wrong. */             \
    X(UDP_CSUM, "udp_csum")         /* Bad UDP checksum. */             \
    X(BAD_HEADER, "bad_header")     /* VXLAN flags or reserved bits,
                                     * Geneve version, GRE version or
                                     * flags. */                        \
    X(BAD_PROTO, "bad_proto")       /* Not carrying Ethernet. */        \
    X(GRE_CSUM, "gre_csum")         /* Bad GRE checksum. */             \
    X(OPT_LENGTH, "opt_length")     /* Geneve options past their
                                     * header, or a TLV past them. */   \
    X(OPT_MAP, "opt_map")           /* A mapped option whose length is
                                     * not the map's. */                \
    X(CRIT_OPT, "crit_opt")         /* An unknown critical option. */   \
    X(NO_PORT, "no_port")           /* No tunnel port takes it. */      \
    X(ECN, "ecn")                   /* Outer ECN CE over an inner packet
                                     * that is not ECN capable. */      \
    X(NO_DST, "no_dst")             /* Encap: no tun_dst to send to. */ \
    X(NO_ROUTE, "no_route")         /* Encap: no route. */              \
    X(NO_NEIGH, "no_neigh")         /* Encap: neighbour unresolved (a
                                     * request was sent). */            \
    X(NO_ROOM, "no_room")           /* Encap: no room in the frame. */

enum fdp__tnl_drop {
#define FDP__TNL_DROP_ENUM(NAME, STR) FDP__TNL_DROP_##NAME,
    FDP__TNL_DROPS(FDP__TNL_DROP_ENUM)
#undef FDP__TNL_DROP_ENUM
    FDP__TNL_N_DROPS
};

const char *fdp__tnl_drop_name(enum fdp__tnl_drop);

/* ---- Building and pushing ---- */

/* The longest header: Ethernet, IPv6, UDP, Geneve with every option. */
#define FDP__TNL_HDR_MAX (14 + 40 + 8 + 8 + FDP__TNL_OPTS_MAX)

/* A prebuilt outer header, ready to push. */
struct fdp__tnl_hdr {
    uint16_t len;               /* Bytes of 'bytes' in use. */
    uint8_t l4_ofs;             /* Where UDP or GRE starts. */
    uint8_t kind;               /* enum fdp__tnl_kind. */
    bool ipv6;
    bool csum;                  /* UDP checksum (always over IPv6) or
                                 * GRE checksum to compute per packet. */
    uint8_t bytes[FDP__TNL_HDR_MAX];
};

/* What a header is built from. */
struct fdp__tnl_build_params {
    enum fdp__tnl_kind kind;
    const struct fdp__tnl_md *md;   /* dst, src, id, tos, ttl, flags
                                     * (DF, CSUM, KEY, OAM), gbp, the
                                     * Geneve options. */
    uint16_t dst_port;          /* UDP destination (VXLAN, Geneve). */
    bool gbp;                   /* VXLAN: the group policy extension. */
    uint64_t eth_src, eth_dst;  /* 48-bit MACs, as key.h's numbers. */
    const struct fdp__tnl_tlv_map *map;     /* Geneve: where the options
                                             * are (NULL: none). */
};

/* Builds the outer header 'p' describes into 'h'.  The family is the
 * destination's (v4-mapped: IPv4).  Returns 0, or EINVAL if the source
 * and destination families differ. */
int fdp__tnl_build(const struct fdp__tnl_build_params *p,
                   struct fdp__tnl_hdr *h);

/* The UDP source port for a packet whose flow hash is 'hash', as Open
 * vSwitch's netdev_tnl_get_src_port() picks it: the hash scaled onto
 * 32768..60999. */
static inline uint16_t
fdp__tnl_src_port(uint32_t hash)
{
    return (uint16_t) ((((uint64_t) hash * (61000 - 32768)) >> 32) + 32768);
}

/* Pushes 'h' in front of the 'inner_size' bytes at 'inner', which must
 * have h->len writable bytes before them, and completes it: lengths,
 * IPv4 header checksum, UDP source port 'src_port', checksums.  Returns
 * the new start (inner - h->len). */
uint8_t *fdp__tnl_push(const struct fdp__tnl_hdr *h, uint8_t *inner,
                       uint32_t inner_size, uint16_t src_port);

/* ---- Popping ---- */

/* Checks the tunnel packet of 'size' bytes at 'data', whose IP header
 * starts at 'l3' (after Ethernet and any VLAN tags) and which is 'kind'
 * (the caller chose it from the IP protocol and UDP port), and fills
 * 'md' (zeroed first): addresses, tos, ttl, UDP ports, flags (KEY, CSUM,
 * OAM), id, gbp (with 'gbp'), and the Geneve options the map 'map'
 * (NULL: empty) knows.  Returns true with '*inner_ofs' and '*inner_size'
 * the inner Ethernet frame's place, or false with '*reason' set.  Never
 * reads outside the 'size' bytes. */
bool fdp__tnl_pop(const uint8_t *data, uint32_t size, uint32_t l3,
                  enum fdp__tnl_kind kind, bool gbp,
                  const struct fdp__tnl_tlv_map *map, struct fdp__tnl_md *md,
                  uint32_t *inner_ofs, uint32_t *inner_size,
                  enum fdp__tnl_drop *reason);

/* Puts an IPv4 address (host order) v4-mapped into 'a'. */
void fdp__tnl_addr_from_ipv4(struct in6_addr *a, uint32_t ip);
/* True if 'a' is v4-mapped. */
bool fdp__tnl_addr_is_ipv4(const struct in6_addr *a);
/* The IPv4 address in v4-mapped 'a' (host order). */
uint32_t fdp__tnl_addr_ipv4(const struct in6_addr *a);

#endif /* FDP_TNL_HEADER_H */
