/*
 * Packet parsing: Ethernet frames to flow keys.
 *
 * The parser walks the headers with a cursor that never passes the end of
 * the packet: every read goes through pull(), which checks the length
 * first, so a truncated or lying header (an IPv4 IHL past the end, an
 * IPv6 extension header length that overruns) stops parsing at the last
 * complete layer.  Fields follow Open vSwitch's flow_extract():
 *
 *   - 802.3 frames (type < 0x600) without LLC/SNAP get dl_type 0x05ff;
 *   - the outer VLAN tag goes to vlan_tci with the CFI bit set, meaning
 *     "there is a tag"; inner tags are skipped;
 *   - IPv4 and IPv6: nw_tos is the whole traffic-class byte (DSCP and
 *     ECN), ip_frag has FDP_FRAG_ANY for every fragment and FDP_FRAG_LATER
 *     for fragments after the first, which carry no transport header;
 *   - ICMP type and code go to tp_src and tp_dst; the ARP opcode to
 *     nw_proto (if it fits 8 bits), ARP addresses to nw_src, nw_dst,
 *     arp_sha and arp_tha.
 */
#include <config.h>

#include "flowdp/datapath.h"

#include <stdbool.h>
#include <string.h>

#include "datapath/extract-internal.h"
#include "flowdp/hash.h"
#include "lib/field.h"

struct cursor {
    const uint8_t *p;
    size_t left;
    size_t offset;
};

/* Returns the next 'n' bytes and advances, or NULL if fewer are left. */
static const uint8_t *
pull(struct cursor *c, size_t n)
{
    if (n > c->left) {
        return NULL;
    }
    const uint8_t *p = c->p;
    c->p += n;
    c->left -= n;
    c->offset += n;
    return p;
}

/* The next 'n' bytes without advancing, or NULL. */
static const uint8_t *
peek(const struct cursor *c, size_t n)
{
    return n <= c->left ? c->p : NULL;
}

static uint16_t
be16(const uint8_t *p)
{
    return (uint16_t) (p[0] << 8 | p[1]);
}

static uint32_t
be32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16
           | (uint32_t) p[2] << 8 | p[3];
}

static uint64_t
be48(const uint8_t *p)
{
    return (uint64_t) be16(p) << 32 | be32(p + 2);
}

static fdp_u128
be128(const uint8_t *p)
{
    fdp_u128 v = 0;

    for (int i = 0; i < 16; i++) {
        v = v << 8 | p[i];
    }
    return v;
}

#define ETH_TYPE_VLAN 0x8100
#define ETH_TYPE_VLAN_8021AD 0x88a8
#define ETH_TYPE_NONE 0x05ff    /* Open vSwitch's FLOW_DL_TYPE_NONE. */
#define ETH_TYPE_MIN 0x0600     /* Smaller values are 802.3 lengths. */

/* IPv6 extension headers (RFC 8200). */
#define IPV6_HOPOPTS 0
#define IPV6_ROUTING 43
#define IPV6_FRAGMENT 44
#define IPV6_AH 51
#define IPV6_DSTOPTS 60

static void
parse_l4(struct cursor *c, struct fdp_key *key, uint8_t proto,
         struct fdp_packet_layout *layout)
{
    const uint8_t *h;

    layout->l4 = (int32_t) c->offset;
    switch (proto) {
    case FDP_IPPROTO_TCP:
        h = peek(c, 20);
        if (h && (h[12] >> 4) >= 5 && peek(c, (size_t) (h[12] >> 4) * 4)) {
            fdp__key_set(key, FDP_F_TP_SRC, be16(h));
            fdp__key_set(key, FDP_F_TP_DST, be16(h + 2));
            fdp__key_set(key, FDP_F_TCP_FLAGS, be16(h + 12) & 0x0fff);
            return;
        }
        break;
    case FDP_IPPROTO_UDP:
        h = peek(c, 8);
        if (h) {
            fdp__key_set(key, FDP_F_TP_SRC, be16(h));
            fdp__key_set(key, FDP_F_TP_DST, be16(h + 2));
            return;
        }
        break;
    case FDP_IPPROTO_SCTP:
        h = peek(c, 12);
        if (h) {
            fdp__key_set(key, FDP_F_TP_SRC, be16(h));
            fdp__key_set(key, FDP_F_TP_DST, be16(h + 2));
            return;
        }
        break;
    case FDP_IPPROTO_ICMP:
    case FDP_IPPROTO_ICMPV6:
        h = peek(c, 4);
        if (h) {
            fdp__key_set(key, FDP_F_TP_SRC, h[0]);
            fdp__key_set(key, FDP_F_TP_DST, h[1]);
            return;
        }
        break;
    default:
        return;
    }
    layout->l4 = -1;    /* Truncated. */
}

static void
parse_ipv4(struct cursor *c, struct fdp_key *key,
           struct fdp_packet_layout *layout)
{
    const uint8_t *h = peek(c, 20);
    size_t ihl = h ? (size_t) (h[0] & 0x0f) * 4 : 0;

    /* As Open vSwitch's ipv4_sanity_check(): a header that says it is
     * shorter than itself, or longer than the packet, is not parsed. */
    if (!h || (h[0] >> 4) != 4 || ihl < 20 || be16(h + 2) < ihl
        || be16(h + 2) > c->left || !pull(c, ihl)) {
        return;
    }
    layout->l3 = (int32_t) (c->offset - ihl);
    fdp__key_set(key, FDP_F_NW_SRC, be32(h + 12));
    fdp__key_set(key, FDP_F_NW_DST, be32(h + 16));
    fdp__key_set(key, FDP_F_NW_PROTO, h[9]);
    fdp__key_set(key, FDP_F_NW_TOS, h[1] >> 2);
    fdp__key_set(key, FDP_F_NW_ECN, h[1] & 3);
    fdp__key_set(key, FDP_F_NW_TTL, h[8]);

    uint16_t frag = be16(h + 6);
    unsigned int ip_frag = 0;
    if (frag & 0x3fff) {                /* MF set or offset non-zero. */
        ip_frag = FDP_FRAG_ANY;
        if (frag & 0x1fff) {
            ip_frag |= FDP_FRAG_LATER;
        }
    }
    fdp__key_set(key, FDP_F_IP_FRAG, ip_frag);
    if (!(ip_frag & FDP_FRAG_LATER)) {
        parse_l4(c, key, h[9], layout);
    }
}

static void
parse_ipv6(struct cursor *c, struct fdp_key *key,
           struct fdp_packet_layout *layout)
{
    const uint8_t *h = pull(c, 40);

    if (!h || (h[0] >> 4) != 6) {
        return;
    }
    layout->l3 = (int32_t) (c->offset - 40);
    uint32_t vtcfl = be32(h);
    uint8_t tclass = (uint8_t) (vtcfl >> 20);
    fdp__key_set(key, FDP_F_IPV6_LABEL, vtcfl & 0xfffff);
    fdp__key_set(key, FDP_F_NW_TOS, tclass >> 2);
    fdp__key_set(key, FDP_F_NW_ECN, tclass & 3);
    fdp__key_set(key, FDP_F_NW_TTL, h[7]);
    fdp__key_set(key, FDP_F_IPV6_SRC, be128(h + 8));
    fdp__key_set(key, FDP_F_IPV6_DST, be128(h + 24));

    uint8_t next = h[6];
    unsigned int ip_frag = 0;
    for (;;) {
        const uint8_t *e;
        if (next == IPV6_HOPOPTS || next == IPV6_ROUTING
            || next == IPV6_DSTOPTS) {
            e = peek(c, 8);
            if (!e || !pull(c, ((size_t) e[1] + 1) * 8)) {
                return;         /* Truncated: no transport protocol. */
            }
            next = e[0];
        } else if (next == IPV6_AH) {
            e = peek(c, 8);
            if (!e || !pull(c, ((size_t) e[1] + 2) * 4)) {
                return;
            }
            next = e[0];
        } else if (next == IPV6_FRAGMENT) {
            e = pull(c, 8);
            if (!e) {
                return;
            }
            next = e[0];
            uint16_t off = be16(e + 2);
            ip_frag = FDP_FRAG_ANY;
            if (off & 0xfff8) {
                ip_frag |= FDP_FRAG_LATER;
            }
        } else {
            break;
        }
    }
    fdp__key_set(key, FDP_F_NW_PROTO, next);
    fdp__key_set(key, FDP_F_IP_FRAG, ip_frag);
    if (!(ip_frag & FDP_FRAG_LATER)) {
        parse_l4(c, key, next, layout);
    }
}

static void
parse_arp(struct cursor *c, struct fdp_key *key,
          struct fdp_packet_layout *layout)
{
    const uint8_t *h = pull(c, 28);

    /* Ethernet / IPv4 ARP only, as Open vSwitch. */
    if (!h || be16(h) != 1 || be16(h + 2) != FDP_ETH_TYPE_IP || h[4] != 6
        || h[5] != 4) {
        return;
    }
    layout->l3 = (int32_t) (c->offset - 28);
    uint16_t op = be16(h + 6);
    if (op <= 0xff) {
        fdp__key_set(key, FDP_F_ARP_OP, op);
    }
    fdp__key_set(key, FDP_F_ARP_SHA, be48(h + 8));
    fdp__key_set(key, FDP_F_ARP_SPA, be32(h + 14));
    fdp__key_set(key, FDP_F_ARP_THA, be48(h + 18));
    fdp__key_set(key, FDP_F_ARP_TPA, be32(h + 24));
}

void
fdp_packet_extract(const void *data, size_t size, uint32_t in_port,
                   struct fdp_key *key, struct fdp_packet_layout *layout)
{
    struct cursor c = { data, size, 0 };
    struct fdp_packet_layout dummy;
    const uint8_t *h;

    layout = layout ? layout : &dummy;
    *layout = (struct fdp_packet_layout) { -1, -1, -1, -1 };
    memset(key, 0, sizeof *key);
    fdp__key_set(key, FDP_F_IN_PORT, in_port);

    h = pull(&c, 14);
    if (!h) {
        return;
    }
    layout->l2 = 0;
    fdp__key_set(key, FDP_F_DL_DST, be48(h));
    fdp__key_set(key, FDP_F_DL_SRC, be48(h + 6));
    uint16_t type = be16(h + 12);

    /* VLAN tags: the outer one is the flow's; inner ones are skipped. */
    bool outer = true;
    while (type == ETH_TYPE_VLAN || type == ETH_TYPE_VLAN_8021AD) {
        const uint8_t *tag = pull(&c, 4);
        if (!tag) {
            return;
        }
        if (outer) {
            layout->l2_5 = (int32_t) (c.offset - 6);
            fdp__key_set(key, FDP_F_VLAN_TCI, be16(tag) | FDP_VLAN_CFI);
            outer = false;
        }
        type = be16(tag + 2);
    }

    /* 802.3 frames: LLC/SNAP carries a type; plain LLC has none. */
    if (type < ETH_TYPE_MIN) {
        const uint8_t *llc = peek(&c, 8);
        if (llc && llc[0] == 0xaa && llc[1] == 0xaa && llc[2] == 0x03
            && !llc[3] && !llc[4] && !llc[5]) {
            pull(&c, 8);
            type = be16(llc + 6);
        } else {
            type = ETH_TYPE_NONE;
        }
    }
    fdp__key_set(key, FDP_F_DL_TYPE, type);

    switch (type) {
    case FDP_ETH_TYPE_IP:
        parse_ipv4(&c, key, layout);
        break;
    case FDP_ETH_TYPE_IPV6:
        parse_ipv6(&c, key, layout);
        break;
    case FDP_ETH_TYPE_ARP:
    case FDP_ETH_TYPE_RARP:
        parse_arp(&c, key, layout);
        break;
    default:
        break;
    }
}

uint32_t
fdp__packet_extract_hash(const void *data, size_t size, uint32_t in_port,
                         uint32_t basis, struct fdp_key *key,
                         struct fdp_packet_layout *layout)
{
    fdp_packet_extract(data, size, in_port, key, layout);
    return fdp_hash_fast(key->w, FDP_KEY_WORDS, basis);
}
