/*
 * Tunnel headers: VXLAN, Geneve and GRE over IPv4 and IPv6.
 *
 * What it is for
 * ==============
 * Native tunnelling as Open vSwitch's userspace datapath does it
 * (lib/netdev-native-tnl.c): the outer header of a tunnel packet is built
 * once, from the tunnel's configuration, the flow's tunnel metadata and
 * the underlay's route and neighbour, and then pushed in front of each
 * packet as one block; an arriving tunnel packet is checked, its tunnel
 * metadata read, and its outer headers stripped.
 *
 * Formats (byte offsets from the start of each header)
 * =====================================================
 * Ethernet: dst(6) src(6) type(2) = 0x0800 or 0x86dd.
 * IPv4: 0x45, tos, total length, id = 0, flags+offset = DF (0x4000) or 0,
 *   ttl, protocol (17 UDP, 47 GRE), checksum, src, dst.  No options.  The
 *   id is 0 as Open vSwitch sends it (the kernel's tunnels pick a fresh
 *   one); with DF set (df_default=true, the default) no one reassembles.
 * IPv6: version 6 | traffic class (the tos) << 20 | flow label 0 (as Open
 *   vSwitch; the kernel puts a hash there), payload length, next header,
 *   hop limit (the ttl), src, dst.  No extension headers.
 * UDP: src port, dst port, length, checksum.  The source port comes from
 *   the inner packet's flow hash as Open vSwitch's
 *   netdev_tnl_get_src_port() picks it, the hash scaled onto its default
 *   range 32768..60999 (fdp__tnl_src_port()): packets of one flow take one
 *   path through an ECMP underlay, different flows spread.  The checksum
 *   is 0 ("none") over IPv4 unless csum=true, and always computed over
 *   IPv6 (RFC 8200 requires it; RFC 6935's zero-checksum exception is
 *   opt-in on both ends).
 * VXLAN (8): flags 0x08 (I: the VNI is valid), 3 reserved bytes, VNI (3),
 *   reserved (1).  With the group policy extension (exts=gbp, as the
 *   kernel's and Open vSwitch's kernel datapath have it; Open vSwitch's
 *   userspace datapath refuses such packets): flags 0x88 (G and I), a
 *   flags byte (D 0x40, A 0x08: tun_gbp_flags) and the 16-bit group
 *   policy id (tun_gbp_id) in the three "reserved" bytes.
 * Geneve (8 + options): version 0 and opt_len (6 bits, in 4-byte words),
 *   O (OAM) and C (a critical option follows) bits, protocol 0x6558, VNI
 *   (3), reserved (1); then options, each class (2), type (1; its top bit
 *   says critical), length (5 bits, in 4-byte words) and data.
 * GRE (4 + 4 per option, RFC 2890): flags C (0x8000, checksum present)
 *   and K (0x2000, key present), protocol 0x6558; then the checksum and a
 *   reserved half word if C, the 32-bit key if K.  A sequence number (S,
 *   0x1000) on an arriving packet is accepted and ignored; routing,
 *   strict source route, recursion or version bits are refused.
 *
 * Popping
 * =======
 * fdp__tnl_pop() follows Open vSwitch's pop functions and the kernel's
 * receive paths where they are stricter: the IPv4 header must have no
 * options, a valid checksum and a total length within the packet, and
 * must not be a fragment; IPv6 must have the tunnel protocol as its first
 * next header; the UDP length must fit the IP payload; a nonzero UDP
 * checksum (and a GRE checksum) must verify; VXLAN's flags must be
 * exactly I (G allowed with exts=gbp) with the reserved bits zero;
 * Geneve's version must be 0 and its protocol Ethernet; GRE's protocol
 * Ethernet.  The inner frame ends where the outer IP length says (any
 * Ethernet padding after it is not the inner packet's).  Geneve options
 * go through the TLV map: an option the map knows with another length,
 * or a TLV that runs past the options, drops the packet (Open vSwitch's
 * tun_metadata_from_geneve_udpif()); an option the map does not know is
 * skipped unless critical (type bit 0x80), which drops the packet.
 *
 * Thread-safety: reentrant.
 */
#include <config.h>

#include "datapath/tnl-header.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

#include "datapath/bytes.h"
#include "datapath/execute.h"

#define ETH_HLEN 14
#define IPV4_HLEN 20
#define IPV6_HLEN 40
#define UDP_HLEN 8
#define VXLAN_HLEN 8
#define GENEVE_HLEN 8
#define GRE_BASE_HLEN 4
#define GENEVE_OPT_HLEN 4

#define ETH_TYPE_IP 0x0800
#define ETH_TYPE_IPV6 0x86dd
#define ETH_TYPE_TEB 0x6558     /* Transparent Ethernet bridging. */
#define IPPROTO_UDP_ 17
#define IPPROTO_GRE_ 47

#define IP_DF 0x4000
#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

#define VXLAN_F_I 0x08000000u   /* Flags word: the VNI is valid. */
#define VXLAN_F_G 0x80000000u   /* Group policy extension. */
#define VXLAN_GBP_FLAGS 0x00480000u     /* D and A, the only GBP flags. */

#define GENEVE_F_OAM 0x80       /* Second byte. */
#define GENEVE_F_CRIT 0x40
#define GENEVE_OPT_CRIT 0x80    /* In an option's type. */

#define GRE_C 0x8000
#define GRE_K 0x2000
#define GRE_S 0x1000
#define GRE_KNOWN (GRE_C | GRE_K | GRE_S)   /* Everything else (routing,
                                             * strict route, recursion,
                                             * flags, version) refused. */

static_assert(ETH_HLEN + IPV6_HLEN <= UINT8_MAX
              && FDP__TNL_HDR_MAX <= UINT16_MAX,
              "a header's offsets fit struct fdp__tnl_hdr's fields");

const char *
fdp__tnl_drop_name(enum fdp__tnl_drop reason)
{
    static const char *const names[] = {
#define FDP__TNL_DROP_NAME(NAME, STR) STR,
        FDP__TNL_DROPS(FDP__TNL_DROP_NAME)
#undef FDP__TNL_DROP_NAME
    };
    return (unsigned int) reason < FDP__TNL_N_DROPS ? names[reason]
                                                    : "unknown";
}

/* ---------------------------------------------------------------------- */
/* Addresses.                                                              */

void
fdp__tnl_addr_from_ipv4(struct in6_addr *a, uint32_t ip)
{
    memset(a, 0, sizeof *a);
    a->s6_addr[10] = 0xff;
    a->s6_addr[11] = 0xff;
    fdp__put32(&a->s6_addr[12], ip);
}

bool
fdp__tnl_addr_is_ipv4(const struct in6_addr *a)
{
    static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

    return !memcmp(a->s6_addr, prefix, sizeof prefix);
}

uint32_t
fdp__tnl_addr_ipv4(const struct in6_addr *a)
{
    return fdp__get32(&a->s6_addr[12]);
}

/* ---------------------------------------------------------------------- */
/* Building.                                                               */

static void
put_mac(uint8_t *p, uint64_t mac)
{
    for (int i = 5; i >= 0; i--, mac >>= 8) {
        p[i] = (uint8_t) mac;
    }
}

/* Writes the Geneve options of 'md' that 'map' places into 'opts' (room
 * for FDP__TNL_OPTS_MAX bytes), in the map's order: an option is present
 * when the presence bit of its first slot is set.  Returns the bytes
 * written; sets '*crit' if one is critical. */
static size_t
put_geneve_opts(const struct fdp__tnl_md *md,
                const struct fdp__tnl_tlv_map *map, uint8_t *opts, bool *crit)
{
    size_t n = 0;

    *crit = false;
    for (uint32_t i = 0; map && i < map->n; i++) {
        const struct fdp__tnl_tlv *t = &map->tlvs[i];
        if (!t->len || t->ofs + t->len > FDP__TNL_SPACE
            || !(md->present >> (t->ofs / 4) & 1)
            || n + GENEVE_OPT_HLEN + t->len > FDP__TNL_OPTS_MAX) {
            continue;
        }
        fdp__put16(opts + n, t->opt_class);
        opts[n + 2] = t->type;
        opts[n + 3] = (uint8_t) (t->len / 4);
        memcpy(opts + n + GENEVE_OPT_HLEN, md->space + t->ofs, t->len);
        *crit |= (t->type & GENEVE_OPT_CRIT) != 0;
        n += GENEVE_OPT_HLEN + t->len;
    }
    return n;
}

int
fdp__tnl_build(const struct fdp__tnl_build_params *p, struct fdp__tnl_hdr *h)
{
    const struct fdp__tnl_md *md = p->md;
    bool ipv6 = !fdp__tnl_addr_is_ipv4(&md->dst);
    uint8_t *b = h->bytes;
    size_t n;

    if (ipv6 == fdp__tnl_addr_is_ipv4(&md->src)) {
        return EINVAL;
    }
    memset(h, 0, sizeof *h);
    h->kind = (uint8_t) p->kind;
    h->ipv6 = ipv6;

    /* Ethernet. */
    put_mac(b, p->eth_dst);
    put_mac(b + 6, p->eth_src);
    fdp__put16(b + 12, ipv6 ? ETH_TYPE_IPV6 : ETH_TYPE_IP);
    n = ETH_HLEN;

    /* IP, its length (and so its checksum) completed by the push. */
    uint8_t proto = p->kind == FDP__TNL_GRE ? IPPROTO_GRE_ : IPPROTO_UDP_;
    if (!ipv6) {
        uint8_t *ip = b + n;
        ip[0] = 0x45;
        ip[1] = md->tos;
        fdp__put16(ip + 6, md->flags & FDP__TNL_F_DF ? IP_DF : 0);
        ip[8] = md->ttl;
        ip[9] = proto;
        memcpy(ip + 12, &md->src.s6_addr[12], 4);
        memcpy(ip + 16, &md->dst.s6_addr[12], 4);
        fdp__put16(ip + 10, fdp__csum(0, ip, IPV4_HLEN));
        n += IPV4_HLEN;
    } else {
        uint8_t *ip = b + n;
        fdp__put32(ip, 6u << 28 | (uint32_t) md->tos << 20);
        ip[6] = proto;
        ip[7] = md->ttl;
        memcpy(ip + 8, md->src.s6_addr, 16);
        memcpy(ip + 24, md->dst.s6_addr, 16);
        n += IPV6_HLEN;
    }
    h->l4_ofs = (uint8_t) n;

    if (p->kind == FDP__TNL_GRE) {
        uint8_t *gre = b + n;
        uint16_t flags = 0;
        size_t o = GRE_BASE_HLEN;
        if (md->flags & FDP__TNL_F_CSUM) {
            flags |= GRE_C;
            o += 4;             /* Checksum and reserved, filled later. */
            h->csum = true;
        }
        if (md->flags & FDP__TNL_F_KEY) {
            flags |= GRE_K;
            fdp__put32(gre + o, (uint32_t) md->id);
            o += 4;
        }
        fdp__put16(gre, flags);
        fdp__put16(gre + 2, ETH_TYPE_TEB);
        h->len = (uint16_t) (n + o);
        return 0;
    }

    /* UDP: source port, length and checksum completed by the push. */
    fdp__put16(b + n + 2, p->dst_port);
    h->csum = ipv6 || (md->flags & FDP__TNL_F_CSUM);
    n += UDP_HLEN;

    uint8_t *t = b + n;
    if (p->kind == FDP__TNL_VXLAN) {
        uint32_t flags = VXLAN_F_I;
        if (p->gbp) {
            flags |= VXLAN_F_G | (uint32_t) (md->gbp_flags & 0x48) << 16
                     | md->gbp_id;
        }
        fdp__put32(t, flags);
        fdp__put32(t + 4, (uint32_t) (md->id & 0xffffff) << 8);
        n += VXLAN_HLEN;
    } else {
        bool crit;
        size_t opts = put_geneve_opts(md, p->map, t + GENEVE_HLEN, &crit);
        t[0] = (uint8_t) (opts / 4);
        t[1] = (uint8_t) ((md->flags & FDP__TNL_F_OAM ? GENEVE_F_OAM : 0)
                          | (crit ? GENEVE_F_CRIT : 0));
        fdp__put16(t + 2, ETH_TYPE_TEB);
        fdp__put32(t + 4, (uint32_t) (md->id & 0xffffff) << 8);
        n += GENEVE_HLEN + opts;
    }
    h->len = (uint16_t) n;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Pushing.                                                                */

/* The pseudo-header sum of an IP header at 'ip' for an upper layer of
 * 'len' bytes of protocol 'proto'. */
static uint32_t
pseudo_sum(const uint8_t *ip, bool ipv6, uint8_t proto, uint32_t len)
{
    uint32_t sum;

    if (ipv6) {
        sum = fdp__csum_add(0, ip + 8, 32);
        sum = fdp__csum_add(sum + (len >> 16) + (len & 0xffff) + proto, "",
                            0);
    } else {
        sum = fdp__csum_add(0, ip + 12, 8);
        sum = fdp__csum_add(sum + len + proto, "", 0);
    }
    return sum;
}

uint8_t *
fdp__tnl_push(const struct fdp__tnl_hdr *h, uint8_t *inner,
              uint32_t inner_size, uint16_t src_port)
{
    uint8_t *b = inner - h->len;
    uint8_t *ip = b + ETH_HLEN;
    uint8_t *l4 = b + h->l4_ofs;
    uint32_t l4_len = h->len - h->l4_ofs + inner_size;

    memcpy(b, h->bytes, h->len);
    if (!h->ipv6) {
        /* The prebuilt checksum covers a zero length: add the length
         * (RFC 1624: HC' = ~(~HC + m')). */
        uint32_t tot = IPV4_HLEN + l4_len;
        uint32_t sum = (uint16_t) ~fdp__get16(ip + 10) + tot;
        sum = (sum & 0xffff) + (sum >> 16);
        sum = (sum & 0xffff) + (sum >> 16);
        fdp__put16(ip + 2, (uint16_t) tot);
        fdp__put16(ip + 10, (uint16_t) ~sum);
    } else {
        fdp__put16(ip + 4, (uint16_t) l4_len);
    }
    if (h->kind == FDP__TNL_GRE) {
        if (h->csum) {
            /* Over the GRE header and the payload (RFC 2784), the
             * checksum field zero (as built). */
            fdp__put16(l4 + 4, fdp__csum(0, l4, l4_len));
        }
        return b;
    }
    fdp__put16(l4, src_port);
    fdp__put16(l4 + 4, (uint16_t) l4_len);
    if (h->csum) {
        uint32_t sum = pseudo_sum(ip, h->ipv6, IPPROTO_UDP_, l4_len);
        uint16_t c = fdp__csum(sum, l4, l4_len);
        /* Zero would mean "no checksum" (RFC 768). */
        fdp__put16(l4 + 6, c ? c : 0xffff);
    }
    return b;
}

/* ---------------------------------------------------------------------- */
/* Popping.                                                                */

/* Reads the Geneve options ('len' bytes at 'opts') into 'md' through
 * 'map'.  Returns true, or false with '*reason'. */
static bool
pop_geneve_opts(const uint8_t *opts, uint32_t len,
                const struct fdp__tnl_tlv_map *map, struct fdp__tnl_md *md,
                enum fdp__tnl_drop *reason)
{
    uint32_t o = 0;

    while (o < len) {
        if (len - o < GENEVE_OPT_HLEN) {
            *reason = FDP__TNL_DROP_OPT_LENGTH;
            return false;
        }
        uint16_t opt_class = fdp__get16(opts + o);
        uint8_t type = opts[o + 2];
        uint32_t data_len = (opts[o + 3] & 0x1fu) * 4;
        if (len - o - GENEVE_OPT_HLEN < data_len) {
            *reason = FDP__TNL_DROP_OPT_LENGTH;
            return false;
        }
        const struct fdp__tnl_tlv *t = NULL;
        for (uint32_t i = 0; map && i < map->n; i++) {
            if (map->tlvs[i].opt_class == opt_class
                && map->tlvs[i].type == type) {
                t = &map->tlvs[i];
                break;
            }
        }
        if (t) {
            if (t->len != data_len || t->ofs + t->len > FDP__TNL_SPACE
                || !data_len) {
                *reason = FDP__TNL_DROP_OPT_MAP;
                return false;
            }
            memcpy(md->space + t->ofs, opts + o + GENEVE_OPT_HLEN, data_len);
            md->present |= (uint8_t) (1u << (t->ofs / 4));
        } else if (type & GENEVE_OPT_CRIT) {
            *reason = FDP__TNL_DROP_CRIT_OPT;
            return false;
        }
        o += GENEVE_OPT_HLEN + data_len;
    }
    return true;
}

/* The IP layer of fdp__tnl_pop(): addresses, tos, ttl into 'md'; the
 * offset of the layer after IP and where the IP packet ends (its length
 * says) into '*l4' and '*end'. */
static bool
pop_ip(const uint8_t *data, uint32_t size, uint32_t l3, uint8_t proto,
       struct fdp__tnl_md *md, uint32_t *l4, uint32_t *end,
       enum fdp__tnl_drop *reason)
{
    if (l3 >= size) {
        *reason = FDP__TNL_DROP_TRUNCATED;
        return false;
    }
    const uint8_t *ip = data + l3;
    uint32_t avail = size - l3;
    unsigned int version = ip[0] >> 4;

    if (version == 4) {
        if (avail < IPV4_HLEN) {
            *reason = FDP__TNL_DROP_TRUNCATED;
            return false;
        }
        uint32_t tot = fdp__get16(ip + 2);
        uint16_t frag = fdp__get16(ip + 6);
        if ((ip[0] & 0xf) != 5) {
            *reason = (ip[0] & 0xf) < 5 ? FDP__TNL_DROP_IP_LENGTH
                                        : FDP__TNL_DROP_IP_OPTIONS;
            return false;
        }
        if (fdp__csum(0, ip, IPV4_HLEN)) {
            *reason = FDP__TNL_DROP_IP_CSUM;
            return false;
        }
        if (tot > avail || tot < IPV4_HLEN) {
            *reason = FDP__TNL_DROP_IP_LENGTH;
            return false;
        }
        if (frag & (IP_MF | IP_OFFSET)) {
            *reason = FDP__TNL_DROP_IP_FRAGMENT;
            return false;
        }
        if (ip[9] != proto) {
            *reason = FDP__TNL_DROP_BAD_PROTO;
            return false;
        }
        fdp__tnl_addr_from_ipv4(&md->src, fdp__get32(ip + 12));
        fdp__tnl_addr_from_ipv4(&md->dst, fdp__get32(ip + 16));
        md->tos = ip[1];
        md->ttl = ip[8];
        *l4 = l3 + IPV4_HLEN;
        *end = l3 + tot;
        return true;
    }
    if (version == 6) {
        if (avail < IPV6_HLEN) {
            *reason = FDP__TNL_DROP_TRUNCATED;
            return false;
        }
        uint32_t plen = fdp__get16(ip + 4);
        if (ip[6] != proto) {
            /* Extension headers (or another protocol): tunnels send
             * none. */
            *reason = FDP__TNL_DROP_IP_OPTIONS;
            return false;
        }
        if (plen > avail - IPV6_HLEN) {
            *reason = FDP__TNL_DROP_IP_LENGTH;
            return false;
        }
        memcpy(md->src.s6_addr, ip + 8, 16);
        memcpy(md->dst.s6_addr, ip + 24, 16);
        md->tos = (uint8_t) (fdp__get32(ip) >> 20);
        md->ttl = ip[7];
        *l4 = l3 + IPV6_HLEN;
        *end = *l4 + plen;
        return true;
    }
    *reason = FDP__TNL_DROP_IP_VERSION;
    return false;
}

/* The UDP layer: ports into 'md', the payload's start into '*l5', and
 * '*end' moved to where UDP says its datagram ends. */
static bool
pop_udp(const uint8_t *data, uint32_t l3, uint32_t l4, uint32_t *end,
        struct fdp__tnl_md *md, uint32_t *l5, enum fdp__tnl_drop *reason)
{
    if (*end - l4 < UDP_HLEN) {
        *reason = FDP__TNL_DROP_TRUNCATED;
        return false;
    }
    const uint8_t *udp = data + l4;
    uint32_t len = fdp__get16(udp + 4);
    bool ipv6 = (data[l3] >> 4) == 6;

    if (len < UDP_HLEN || len > *end - l4) {
        *reason = FDP__TNL_DROP_UDP_LENGTH;
        return false;
    }
    *end = l4 + len;
    if (fdp__get16(udp + 6)) {
        uint32_t sum = pseudo_sum(data + l3, ipv6, IPPROTO_UDP_, len);
        if (fdp__csum(sum, udp, len)) {
            *reason = FDP__TNL_DROP_UDP_CSUM;
            return false;
        }
        md->flags |= FDP__TNL_F_CSUM;
    }
    md->tp_src = fdp__get16(udp);
    md->tp_dst = fdp__get16(udp + 2);
    *l5 = l4 + UDP_HLEN;
    return true;
}

bool
fdp__tnl_pop(const uint8_t *data, uint32_t size, uint32_t l3,
             enum fdp__tnl_kind kind, bool gbp,
             const struct fdp__tnl_tlv_map *map, struct fdp__tnl_md *md,
             uint32_t *inner_ofs, uint32_t *inner_size,
             enum fdp__tnl_drop *reason)
{
    uint8_t proto = kind == FDP__TNL_GRE ? IPPROTO_GRE_ : IPPROTO_UDP_;
    uint32_t l4, end, o;

    memset(md, 0, sizeof *md);
    if (!pop_ip(data, size, l3, proto, md, &l4, &end, reason)) {
        return false;
    }

    if (kind == FDP__TNL_GRE) {
        if (end - l4 < GRE_BASE_HLEN) {
            *reason = FDP__TNL_DROP_TRUNCATED;
            return false;
        }
        const uint8_t *gre = data + l4;
        uint16_t flags = fdp__get16(gre);
        if (flags & ~GRE_KNOWN) {
            *reason = FDP__TNL_DROP_BAD_HEADER;
            return false;
        }
        uint32_t hlen = GRE_BASE_HLEN + 4 * (!!(flags & GRE_C)
                                             + !!(flags & GRE_K)
                                             + !!(flags & GRE_S));
        if (end - l4 < hlen) {
            *reason = FDP__TNL_DROP_TRUNCATED;
            return false;
        }
        if (fdp__get16(gre + 2) != ETH_TYPE_TEB) {
            *reason = FDP__TNL_DROP_BAD_PROTO;
            return false;
        }
        o = GRE_BASE_HLEN;
        if (flags & GRE_C) {
            if (fdp__csum(0, gre, end - l4)) {
                *reason = FDP__TNL_DROP_GRE_CSUM;
                return false;
            }
            md->flags |= FDP__TNL_F_CSUM;
            o += 4;
        }
        if (flags & GRE_K) {
            md->id = fdp__get32(gre + o);
            md->flags |= FDP__TNL_F_KEY;
        }
        o = l4 + hlen;
    } else {
        uint32_t l5;
        if (!pop_udp(data, l3, l4, &end, md, &l5, reason)) {
            return false;
        }
        const uint8_t *t = data + l5;
        if (kind == FDP__TNL_VXLAN) {
            if (end - l5 < VXLAN_HLEN) {
                *reason = FDP__TNL_DROP_TRUNCATED;
                return false;
            }
            uint32_t flags = fdp__get32(t);
            uint32_t vni = fdp__get32(t + 4);
            if (gbp && (flags & VXLAN_F_G)) {
                md->gbp_id = (uint16_t) flags;
                md->gbp_flags = (uint8_t) ((flags & VXLAN_GBP_FLAGS) >> 16);
                flags &= ~(VXLAN_F_G | VXLAN_GBP_FLAGS | 0xffffu);
            }
            if (flags != VXLAN_F_I || (vni & 0xff)) {
                *reason = FDP__TNL_DROP_BAD_HEADER;
                return false;
            }
            md->id = vni >> 8;
            md->flags |= FDP__TNL_F_KEY;
            o = l5 + VXLAN_HLEN;
        } else {
            if (end - l5 < GENEVE_HLEN) {
                *reason = FDP__TNL_DROP_TRUNCATED;
                return false;
            }
            uint32_t opts_len = (t[0] & 0x3fu) * 4;
            if (t[0] >> 6) {
                *reason = FDP__TNL_DROP_BAD_HEADER;
                return false;
            }
            if (fdp__get16(t + 2) != ETH_TYPE_TEB) {
                *reason = FDP__TNL_DROP_BAD_PROTO;
                return false;
            }
            if (end - l5 - GENEVE_HLEN < opts_len) {
                *reason = FDP__TNL_DROP_OPT_LENGTH;
                return false;
            }
            if (!pop_geneve_opts(t + GENEVE_HLEN, opts_len, map, md,
                                 reason)) {
                return false;
            }
            md->flags |= (t[1] & GENEVE_F_OAM ? FDP__TNL_F_OAM : 0)
                         | FDP__TNL_F_KEY;
            md->id = fdp__get32(t + 4) >> 8;
            o = l5 + GENEVE_HLEN + opts_len;
        }
    }
    if (end - o < ETH_HLEN) {
        *reason = FDP__TNL_DROP_TRUNCATED;
        return false;
    }
    *inner_ofs = o;
    *inner_size = end - o;
    return true;
}
