/*
 * Action execution: what a flow's actions do to a packet's bytes.
 *
 * Semantics are Open vSwitch's (and OpenFlow 1.0's where the two differ
 * only in spelling):
 *   - Actions apply in order; output sends the packet as modified so far,
 *     so "mod_nw_dst:10.0.0.1,output:1,mod_nw_dst:10.0.0.2,output:2"
 *     sends two different packets.  Output to the input port is dropped
 *     (OpenFlow: only the in_port action sends a packet back).
 *   - mod_vlan_vid and mod_vlan_pcp rewrite the outer tag, or push an
 *     802.1Q tag (the other part zero) on an untagged frame; strip_vlan
 *     pops the outer tag; push_vlan pushes a tag with the given TPID whose
 *     TCI copies the current outer tag's (zero if none), as OpenFlow 1.1+.
 *   - mod_nw_tos sets the DSCP bits and keeps ECN; mod_nw_ecn the reverse.
 *   - dec_ttl on a packet whose TTL (hop limit) is 0 or 1 drops it.
 *   - A set-field on a header the packet does not have (mod_tp_dst on a
 *     later IP fragment, say) does nothing.
 *
 * Checksums.  Rewriting a 16-bit word covered by an Internet checksum
 * updates the checksum incrementally, HC' = ~(~HC + ~m + m') (RFC 1624,
 * equation 3), which is exact even for a packet whose payload was cut
 * short by a capture's snap length.  IPv4 header fields update the IPv4
 * header checksum; addresses (IPv4 and IPv6, part of the pseudo-header)
 * and ports update the TCP and UDP checksums, and IPv6 addresses the
 * ICMPv6 checksum; ICMP type and code update the ICMP checksum.  A UDP
 * checksum of zero over IPv4 means "none" and stays zero; an update that
 * computes zero stores 0xffff instead (RFC 768).  SCTP's CRC32C is not
 * incremental: it is recomputed over the whole SCTP packet.
 *
 * Thread-safety: reentrant; a packet belongs to one thread.
 */
#include <config.h>

#include "datapath/execute.h"

#include <string.h>

#include "datapath/bytes.h"
#include "lib/actions-internal.h"
#include "lib/learn.h"
#include "lib/other-actions.h"
#include "lib/field.h"
#include <flowdp/hash.h>

/* ---------------------------------------------------------------------- */
/* Bytes and checksums.                                                    */

static void
put_be(uint8_t *p, fdp_u128 v, size_t n)
{
    for (size_t i = n; i-- > 0; v >>= 8) {
        p[i] = (uint8_t) v;
    }
}

uint32_t
fdp__csum_add(uint32_t sum, const void *data_, size_t size)
{
    const uint8_t *data = data_;
    uint64_t s = sum;

    for (; size >= 2; data += 2, size -= 2) {
        s += fdp__get16(data);
    }
    if (size) {
        s += (uint32_t) data[0] << 8;
    }
    while (s >> 16) {
        s = (s & 0xffff) + (s >> 16);
    }
    return (uint32_t) s;
}

uint16_t
fdp__csum(uint32_t sum, const void *data, size_t size)
{
    return (uint16_t) ~fdp__csum_add(sum, data, size);
}

/* RFC 1624 equation 3 for the checksum at 'csum' when a 16-bit word of
 * the covered data changes from 'old' to 'new'. */
static void
csum_replace16(uint8_t *csum, uint16_t old, uint16_t new)
{
    uint32_t s = (uint16_t) ~fdp__get16(csum) + (uint32_t) (uint16_t) ~old + new;

    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    fdp__put16(csum, (uint16_t) ~s);
}

/* The same for 'n' bytes (even) changing from 'old' to 'new'. */
static void
csum_replace(uint8_t *csum, const uint8_t *old, const uint8_t *new, size_t n)
{
    for (size_t i = 0; i < n; i += 2) {
        csum_replace16(csum, fdp__get16(old + i), fdp__get16(new + i));
    }
}

/* ---------------------------------------------------------------------- */
/* Where things are.                                                       */

static int
pkt_dl_type(const struct fdp__pkt *pkt)
{
    return (int) fdp__key_get(&pkt->key, FDP_F_DL_TYPE);
}

static int
pkt_nw_proto(const struct fdp__pkt *pkt)
{
    return (int) fdp__key_get(&pkt->key, FDP_F_NW_PROTO);
}

static bool
is_ipv4(const struct fdp__pkt *pkt)
{
    return pkt->layout.l3 >= 0 && pkt_dl_type(pkt) == FDP_ETH_TYPE_IP;
}

static bool
is_ipv6(const struct fdp__pkt *pkt)
{
    return pkt->layout.l3 >= 0 && pkt_dl_type(pkt) == FDP_ETH_TYPE_IPV6;
}

static bool
is_arp(const struct fdp__pkt *pkt)
{
    int t = pkt_dl_type(pkt);

    return pkt->layout.l3 >= 0
           && (t == FDP_ETH_TYPE_ARP || t == FDP_ETH_TYPE_RARP);
}

static uint8_t *
l3(struct fdp__pkt *pkt)
{
    return pkt->data + pkt->layout.l3;
}

/* The frame's length without the Ethernet padding after an IP packet
 * (the bytes past its total or payload length), as Open vSwitch's
 * check_pkt_len measures it (dp_packet_get_send_len() less
 * dp_packet_l2_pad_size()). */
static uint32_t
unpadded_size(struct fdp__pkt *pkt)
{
    uint32_t end;

    if (is_ipv4(pkt) && pkt->size >= (uint32_t) pkt->layout.l3 + 4) {
        end = (uint32_t) pkt->layout.l3 + fdp__get16(l3(pkt) + 2);
    } else if (is_ipv6(pkt) && pkt->size >= (uint32_t) pkt->layout.l3 + 6) {
        end = (uint32_t) pkt->layout.l3 + 40 + fdp__get16(l3(pkt) + 4);
    } else {
        return pkt->size;
    }
    return end < pkt->size ? end : pkt->size;
}

static uint8_t *
l4(struct fdp__pkt *pkt)
{
    return pkt->layout.l4 >= 0 ? pkt->data + pkt->layout.l4 : NULL;
}

/* The checksum field of the packet's transport header that covers the
 * IP pseudo-header (TCP, UDP, ICMPv6), or NULL: none, absent, or a UDP
 * checksum of zero over IPv4 ("no checksum"). */
static uint8_t *
pseudo_csum(struct fdp__pkt *pkt)
{
    uint8_t *h = l4(pkt);

    if (!h) {
        return NULL;
    }
    switch (pkt_nw_proto(pkt)) {
    case FDP_IPPROTO_TCP:
        return h + 16;
    case FDP_IPPROTO_UDP:
        return is_ipv4(pkt) && !fdp__get16(h + 6) ? NULL : h + 6;
    case FDP_IPPROTO_ICMPV6:
        return is_ipv6(pkt) ? h + 2 : NULL;
    default:
        return NULL;
    }
}

/* After a UDP checksum update, zero means "no checksum": store 0xffff. */
static void
fix_udp_zero(struct fdp__pkt *pkt, uint8_t *csum)
{
    if (csum && pkt_nw_proto(pkt) == FDP_IPPROTO_UDP && !fdp__get16(csum)) {
        fdp__put16(csum, 0xffff);
    }
}

/* Recomputes an SCTP packet's CRC32C (RFC 4960 appendix B: over the whole
 * SCTP packet with the checksum field zero, stored least significant byte
 * first). */
static void
sctp_recompute(struct fdp__pkt *pkt)
{
    uint8_t *h = l4(pkt);
    size_t end;

    if (!h || pkt_nw_proto(pkt) != FDP_IPPROTO_SCTP) {
        return;
    }
    /* The SCTP packet ends where the IP datagram does (not at the
     * Ethernet padding); a fragmented datagram cannot be checked. */
    if (fdp__key_get(&pkt->key, FDP_F_IP_FRAG)) {
        return;
    }
    end = is_ipv4(pkt) ? (size_t) pkt->layout.l3 + fdp__get16(l3(pkt) + 2)
                       : (size_t) pkt->layout.l3 + 40 + fdp__get16(l3(pkt) + 4);
    if (end > pkt->size) {
        end = pkt->size;        /* Cut short by capture: do our best. */
    }
    memset(h + 8, 0, 4);
    uint32_t crc = fdp_crc32c(0, h, end - (size_t) pkt->layout.l4);
    for (int i = 0; i < 4; i++) {
        h[8 + i] = (uint8_t) (crc >> (8 * i));
    }
}

/* ---------------------------------------------------------------------- */
/* Set-field.                                                              */

/* Writes the 'n'-byte big-endian 'value' at 'p', updating the checksums
 * at 'c1' and 'c2' (either may be NULL) for the change. */
static void
rewrite(uint8_t *p, fdp_u128 value, size_t n, uint8_t *c1, uint8_t *c2)
{
    uint8_t old[16];

    memcpy(old, p, n);
    put_be(p, value, n);
    if (c1) {
        csum_replace(c1, old, p, n);
    }
    if (c2) {
        csum_replace(c2, old, p, n);
    }
}

static void
set_ip_addr(struct fdp__pkt *pkt, size_t offset, fdp_u128 value, size_t n)
{
    uint8_t *ip_csum = is_ipv4(pkt) ? l3(pkt) + 10 : NULL;
    uint8_t *l4_csum = pseudo_csum(pkt);

    rewrite(l3(pkt) + offset, value, n, ip_csum, l4_csum);
    fix_udp_zero(pkt, l4_csum);
    sctp_recompute(pkt);
}

/* Rewrites the DSCP (shift 2) or ECN (shift 0) bits of the traffic class
 * to 'value'. */
static void
set_tclass(struct fdp__pkt *pkt, unsigned int shift, unsigned int n_bits,
           unsigned int value)
{
    unsigned int mask = ((1u << n_bits) - 1) << shift;

    if (is_ipv4(pkt)) {
        uint8_t *h = l3(pkt);
        uint16_t old = fdp__get16(h);
        h[1] = (uint8_t) ((h[1] & ~mask) | ((value << shift) & mask));
        csum_replace16(h + 10, old, fdp__get16(h));
    } else if (is_ipv6(pkt)) {
        /* Traffic class: bits 27..20 of the first 32-bit word. */
        uint8_t *h = l3(pkt);
        uint32_t w = fdp__get32(h);
        w = (w & ~(mask << 20)) | (((uint32_t) value << shift) & mask) << 20;
        put_be(h, w, 4);
    }
}

static void
set_ttl(struct fdp__pkt *pkt, uint8_t ttl)
{
    if (is_ipv4(pkt)) {
        uint8_t *h = l3(pkt);
        uint16_t old = fdp__get16(h + 8);
        h[8] = ttl;
        csum_replace16(h + 10, old, fdp__get16(h + 8));
    } else if (is_ipv6(pkt)) {
        l3(pkt)[7] = ttl;
    }
}

/* tp_src (offset 0) or tp_dst (2) of TCP, UDP or SCTP. */
static void
set_port(struct fdp__pkt *pkt, size_t offset, uint16_t value)
{
    uint8_t *h = l4(pkt);
    int proto = pkt_nw_proto(pkt);

    if (!h || (proto != FDP_IPPROTO_TCP && proto != FDP_IPPROTO_UDP
               && proto != FDP_IPPROTO_SCTP)) {
        return;
    }
    uint8_t *csum = pseudo_csum(pkt);
    rewrite(h + offset, value, 2, csum, NULL);
    fix_udp_zero(pkt, csum);
    sctp_recompute(pkt);
}

/* ICMP type (offset 0) or code (1), under the ICMP checksum. */
static void
set_icmp(struct fdp__pkt *pkt, size_t offset, uint8_t value)
{
    uint8_t *h = l4(pkt);
    int proto = pkt_nw_proto(pkt);

    if (!h || (proto != FDP_IPPROTO_ICMP && proto != FDP_IPPROTO_ICMPV6)) {
        return;
    }
    uint16_t old = fdp__get16(h);
    h[offset] = value;
    csum_replace16(h + 2, old, fdp__get16(h));
}

/* The ICMPv6 neighbour solicitation or advertisement of 'pkt' (the key
 * says whether it is one), or NULL; '*n' is its length, from its first
 * byte to the end of the IPv6 payload (or of the frame, if shorter). */
static uint8_t *
nd_msg(struct fdp__pkt *pkt, size_t *n)
{
    uint8_t *h = l4(pkt);

    if (!h || !is_ipv6(pkt) || pkt_nw_proto(pkt) != FDP_IPPROTO_ICMPV6
        || fdp__key_get(&pkt->key, FDP_F_ICMP_CODE)
        || (fdp__key_get(&pkt->key, FDP_F_ICMP_TYPE) != FDP_ND_SOLICIT
            && fdp__key_get(&pkt->key, FDP_F_ICMP_TYPE) != FDP_ND_ADVERT)) {
        return NULL;
    }
    size_t end = (size_t) pkt->layout.l3 + 40 + fdp__get16(l3(pkt) + 4);
    if (end > pkt->size) {
        end = pkt->size;
    }
    *n = end - (size_t) pkt->layout.l4;
    return *n >= 24 ? h : NULL;     /* Header (8) and target (16). */
}

/* Neighbour discovery fields, as Open vSwitch's packet_set_nd() and
 * packet_set_nd_ext() write them, the ICMPv6 checksum following: the
 * target in place; nd_sll (nd_tll) into the first link-layer address
 * option of one unit if that option is a source (target) one, nothing if
 * the first such option is of the other kind or there is none (no option
 * is added); nd_reserved, the 32 bits after the checksum; nd_options_type,
 * the first option's type byte, if there is an option. */
static void
set_nd(struct fdp__pkt *pkt, enum fdp_field f, fdp_u128 v)
{
    size_t n;
    uint8_t *h = nd_msg(pkt, &n);

    if (!h) {
        return;
    }
    switch (f) {
    case FDP_F_ND_TARGET:
        rewrite(h + 8, v, 16, h + 2, NULL);
        break;
    case FDP_F_ND_RESERVED:
        rewrite(h + 4, v, 4, h + 2, NULL);
        break;
    case FDP_F_ND_OPTIONS_TYPE:
        if (n >= 24 + 8) {
            uint16_t old = fdp__get16(h + 24);
            h[24] = (uint8_t) v;
            csum_replace16(h + 2, old, fdp__get16(h + 24));
        }
        break;
    default: {
        unsigned int kind = f == FDP_F_ND_SLL ? 1 : 2;
        for (size_t off = 24; n - off >= 8 && h[off + 1];
             off += (size_t) h[off + 1] * 8) {
            if ((h[off] == 1 || h[off] == 2) && h[off + 1] == 1) {
                if (h[off] == kind) {
                    rewrite(h + off + 2, v, 6, h + 2, NULL);
                }
                break;
            }
            if ((size_t) h[off + 1] * 8 > n - off) {
                break;
            }
        }
        break;
    }
    }
}

static void
set_field(struct fdp__pkt *pkt, enum fdp_field f, fdp_u128 v)
{
    uint8_t *eth = pkt->layout.l2 >= 0 ? pkt->data + pkt->layout.l2 : NULL;

    switch (f) {
    case FDP_F_DL_DST:
    case FDP_F_DL_SRC:
        if (eth) {
            put_be(eth + (f == FDP_F_DL_SRC ? 6 : 0), v, 6);
        }
        break;
    case FDP_F_NW_SRC:
    case FDP_F_NW_DST:
        if (is_ipv4(pkt)) {
            set_ip_addr(pkt, f == FDP_F_NW_SRC ? 12 : 16, v, 4);
        }
        break;
    case FDP_F_ARP_SPA:
    case FDP_F_ARP_TPA:
        if (is_arp(pkt)) {
            put_be(l3(pkt) + (f == FDP_F_ARP_SPA ? 14 : 24), v, 4);
        }
        break;
    case FDP_F_IPV6_SRC:
    case FDP_F_IPV6_DST:
        if (is_ipv6(pkt)) {
            set_ip_addr(pkt, f == FDP_F_IPV6_SRC ? 8 : 24, v, 16);
        }
        break;
    case FDP_F_IPV6_LABEL:
        if (is_ipv6(pkt)) {
            uint8_t *h = l3(pkt);
            put_be(h, (fdp__get32(h) & ~UINT32_C(0xfffff)) | (uint32_t) v, 4);
        }
        break;
    case FDP_F_NW_TOS:
        set_tclass(pkt, 2, 6, (unsigned int) v);
        break;
    case FDP_F_NW_ECN:
        set_tclass(pkt, 0, 2, (unsigned int) v);
        break;
    case FDP_F_NW_TTL:
        set_ttl(pkt, (uint8_t) v);
        break;
    case FDP_F_TP_SRC:
    case FDP_F_TP_DST:
        set_port(pkt, f == FDP_F_TP_SRC ? 0 : 2, (uint16_t) v);
        break;
    case FDP_F_ICMP_TYPE:
    case FDP_F_ICMP_CODE:
        set_icmp(pkt, f == FDP_F_ICMP_TYPE ? 0 : 1, (uint8_t) v);
        break;
    case FDP_F_ARP_OP:
        if (is_arp(pkt)) {
            fdp__put16(l3(pkt) + 6, (uint16_t) v);
        }
        break;
    case FDP_F_ARP_SHA:
    case FDP_F_ARP_THA:
        if (is_arp(pkt)) {
            put_be(l3(pkt) + (f == FDP_F_ARP_SHA ? 8 : 18), v, 6);
        }
        break;
    case FDP_F_ND_TARGET:
    case FDP_F_ND_SLL:
    case FDP_F_ND_TLL:
    case FDP_F_ND_RESERVED:
    case FDP_F_ND_OPTIONS_TYPE:
        set_nd(pkt, f, v);
        break;
    default:
        /* The tunnel fields travel with the packet in its key (key.h):
         * an output to a tunnel port reads them there.  pkt_mark is
         * metadata, not packet bytes; the parser accepts no other field
         * for set_field. */
        if (fdp__field_is_tunnel(f)) {
            fdp__key_set_tunnel(&pkt->key, f, v);
        }
        break;
    }
}

/* ---------------------------------------------------------------------- */
/* VLAN tags.                                                              */

#define ETH_TYPE_VLAN 0x8100
#define ETH_TYPE_VLAN_8021AD 0x88a8
#define VLAN_HEADER_LEN 4
#define ETH_ADDRS_LEN 12        /* dl_dst + dl_src: where tags go. */

static void
shift_layers(struct fdp__pkt *pkt, int delta)
{
    if (pkt->layout.l3 >= 0) {
        pkt->layout.l3 += delta;
    }
    if (pkt->layout.l4 >= 0) {
        pkt->layout.l4 += delta;
    }
}

/* Pushes a tag (TPID 'tpid', TCI 'tci') in front of the frame's tags. */
static bool
push_tag(struct fdp__pkt *pkt, uint16_t tpid, uint16_t tci)
{
    if (pkt->headroom < VLAN_HEADER_LEN) {
        return false;
    }
    pkt->data -= VLAN_HEADER_LEN;
    pkt->size += VLAN_HEADER_LEN;
    pkt->headroom -= VLAN_HEADER_LEN;
    memmove(pkt->data, pkt->data + VLAN_HEADER_LEN, ETH_ADDRS_LEN);
    fdp__put16(pkt->data + ETH_ADDRS_LEN, tpid);
    fdp__put16(pkt->data + ETH_ADDRS_LEN + 2, tci);
    pkt->layout.l2_5 = ETH_ADDRS_LEN;
    shift_layers(pkt, VLAN_HEADER_LEN);
    return true;
}

static void
pop_tag(struct fdp__pkt *pkt)
{
    memmove(pkt->data + VLAN_HEADER_LEN, pkt->data, ETH_ADDRS_LEN);
    pkt->data += VLAN_HEADER_LEN;
    pkt->size -= VLAN_HEADER_LEN;
    pkt->headroom += VLAN_HEADER_LEN;
    shift_layers(pkt, -VLAN_HEADER_LEN);

    /* An inner tag, if whole, becomes the outer one. */
    uint16_t type = fdp__get16(pkt->data + ETH_ADDRS_LEN);
    pkt->layout.l2_5 = (type == ETH_TYPE_VLAN || type == ETH_TYPE_VLAN_8021AD)
                       && pkt->size >= ETH_ADDRS_LEN + 2 * VLAN_HEADER_LEN
                       ? ETH_ADDRS_LEN : -1;
}

/* Sets the bits 'mask' of the outer tag's TCI to 'bits', pushing an
 * 802.1Q tag if the frame has none. */
static bool
set_tci(struct fdp__pkt *pkt, uint16_t mask, uint16_t bits)
{
    if (pkt->layout.l2 < 0) {
        return true;
    }
    if (pkt->layout.l2_5 < 0) {
        return push_tag(pkt, ETH_TYPE_VLAN, bits);
    }
    uint8_t *tci = pkt->data + pkt->layout.l2_5 + 2;
    fdp__put16(tci, (uint16_t) ((fdp__get16(tci) & ~mask) | bits));
    return true;
}

static bool
push_vlan(struct fdp__pkt *pkt, uint16_t tpid)
{
    uint16_t tci = 0;

    if (pkt->layout.l2 < 0) {
        return true;
    }
    if (pkt->layout.l2_5 >= 0) {
        tci = fdp__get16(pkt->data + pkt->layout.l2_5 + 2);
    }
    return push_tag(pkt, tpid, tci);
}

bool
fdp__pkt_set_vlan(struct fdp__pkt *pkt, uint16_t tci)
{
    if (pkt->layout.l2 < 0) {
        return true;
    }
    if (!tci) {
        if (pkt->layout.l2_5 >= 0) {
            pop_tag(pkt);
        }
        return true;
    }
    return set_tci(pkt, 0xffff, tci);
}

/* ---------------------------------------------------------------------- */
/* The interpreter.                                                        */

/* dec_ttl: false if the packet must be dropped. */
static bool
dec_ttl(struct fdp__pkt *pkt)
{
    uint8_t ttl;

    if (is_ipv4(pkt)) {
        ttl = l3(pkt)[8];
    } else if (is_ipv6(pkt)) {
        ttl = l3(pkt)[7];
    } else {
        return true;            /* Not IP: nothing to decrement. */
    }
    if (ttl <= 1) {
        return false;
    }
    set_ttl(pkt, (uint8_t) (ttl - 1));
    return true;
}

/* load, set_field with a mask, or move into a header field: some bits of
 * the field change.  The field's current value is read back from the
 * bytes (earlier actions may have changed it), by parsing the packet
 * again: these are rare outside a pipeline, whose composed actions turn
 * them into whole set-field actions.  The pipeline's registers are zero
 * here, as a packet's are on arrival. */
static void
write_bits(struct fdp__pkt *pkt, uint32_t in_port, const struct fdp__action *a)
{
    struct fdp_key cur;
    enum fdp_field dst = (enum fdp_field) a->field;
    fdp_u128 value, mask;

    fdp_packet_extract(pkt->data, pkt->size, in_port, &cur, NULL);
    /* The tunnel words are not in the bytes: the packet's key has them. */
    memcpy(&cur.w[FDP__TUN_FIRST_WORD], &pkt->key.w[FDP__TUN_FIRST_WORD],
           FDP__TUN_N_WORDS * sizeof cur.w[0]);
    if (a->type == FDP_ACT_MOVE) {
        struct fdp__move mv = fdp__action_move(a);
        fdp_u128 ones = fdp__ones(mv.n_bits);
        value = ((fdp__key_get(&cur, mv.src) >> mv.src_ofs) & ones)
                << mv.dst_ofs;
        mask = ones << mv.dst_ofs;
    } else {
        value = fdp__action_masked_value(a);
        mask = fdp__action_masked_mask(a);
    }
    fdp_u128 old = fdp__key_get(&cur, dst);
    set_field(pkt, dst, (old & ~mask) | (value & mask));
}

enum fdp__exec_result
fdp__execute(const struct fdp_actions *actions, struct fdp__pkt *pkt,
             uint32_t in_port, const struct fdp__exec_ops *ops, void *aux)
{
    return fdp__execute_from(actions, NULL, pkt, in_port, ops, aux, NULL);
}

enum fdp__exec_result
fdp__execute_from(const struct fdp_actions *actions,
                  const struct fdp__action *from, struct fdp__pkt *pkt,
                  uint32_t in_port, const struct fdp__exec_ops *ops,
                  void *aux, const struct fdp__action **ct)
{
    for (const struct fdp__action *a = from ? from
                                            : fdp__actions_first(actions),
         *next;
         a; a = next) {
        next = fdp__actions_next(actions, a);
        switch ((enum fdp_action_type) a->type) {
        case FDP_ACT_OUTPUT:
        case FDP_ACT_IN_PORT: {
            uint32_t port = a->type == FDP_ACT_IN_PORT ? in_port : a->arg;
            if (a->type == FDP_ACT_OUTPUT && port == in_port) {
                break;          /* OpenFlow: use in_port to send back. */
            }
            ops->output(aux, pkt, port, !next);
            if (!next) {
                return FDP__EXEC_STOLEN;
            }
            break;
        }
        case FDP_ACT_RESERVED: {
            uint32_t in = fdp__action_reserved_in(a);
            if (ops->reserved
                && ops->reserved(aux, pkt, fdp__action_reserved_port(a),
                                 in ? in : in_port, !next)) {
                return FDP__EXEC_STOLEN;
            }
            break;
        }
        case FDP_ACT_CONTROLLER:
            ops->controller(aux, pkt, a);
            break;
        case FDP_ACT_SET_VLAN_VID:
            if (!set_tci(pkt, FDP_VLAN_VID_MASK,
                         (uint16_t) (a->arg & FDP_VLAN_VID_MASK))) {
                return FDP__EXEC_NO_ROOM;
            }
            break;
        case FDP_ACT_SET_VLAN_PCP:
            if (!set_tci(pkt, FDP_VLAN_PCP_MASK,
                         (uint16_t) ((a->arg & 7) << 13))) {
                return FDP__EXEC_NO_ROOM;
            }
            break;
        case FDP_ACT_STRIP_VLAN:
            if (pkt->layout.l2_5 >= 0) {
                pop_tag(pkt);
            }
            break;
        case FDP_ACT_PUSH_VLAN:
            if (!push_vlan(pkt, (uint16_t) a->arg)) {
                return FDP__EXEC_NO_ROOM;
            }
            break;
        case FDP_ACT_SET_FIELD:
            set_field(pkt, (enum fdp_field) a->field, fdp__action_value(a));
            break;
        case FDP_ACT_DEC_TTL:
            if (!dec_ttl(pkt)) {
                return FDP__EXEC_TTL_EXPIRED;
            }
            break;
        case FDP_ACT_SET_MASKED:
        case FDP_ACT_MOVE:
            if (!fdp__action_is_pipeline(a)) {
                write_bits(pkt, in_port, a);
            }
            break;
        case FDP_ACT_LEARN:
            /* Only the pipeline's resolved form says what to add; a
             * flow-form record reaches here only from a caller that runs
             * a flow's actions without the pipeline, which cannot know
             * the key it would be resolved against. */
            if (ops->learn && a->flags & FDP__ACT_LEARN_RESOLVED) {
                ops->learn(aux, a);
            }
            break;
        case FDP_ACT_CHECK_PKT_LARGER:
            /* A composed branch (lib/other-actions.h): on into the first
             * branch if the frame is longer than the length, else past
             * its jump; a jump skips the second branch.  The flow form
             * writes a pipeline register, which a packet outside a
             * pipeline does not have. */
            if (a->flags & FDP__ACT_CPL_BRANCH) {
                if (unpadded_size(pkt) <= fdp__action_cpl_len(a)) {
                    next = fdp__actions_skip(actions, a,
                                             fdp__action_cpl_skip(a));
                }
            } else if (a->flags & FDP__ACT_CPL_JUMP) {
                next = fdp__actions_skip(actions, a, fdp__action_cpl_skip(a));
            }
            break;
        case FDP_ACT_FIN_TIMEOUT:
            /* Open vSwitch shortens the timeouts of the flow that holds
             * it when a TCP FIN or RST passes; flowdp does not do that
             * yet (see the issue note): it does nothing. */
            break;
        case FDP_ACT_CT:
        case FDP_ACT_METER:
            /* The caller runs it, for all the packets that reach it
             * together (datapath/dp.c, "Connection tracking"; a meter
             * takes one bucket update per batch: datapath/meter.c). */
            if (ct) {
                *ct = a;
            }
            return FDP__EXEC_CT;
        case FDP_ACT_GOTO_TABLE:
        case FDP_ACT_RESUBMIT:
        case FDP_ACT_CONJUNCTION:
        case FDP_ACT_CT_CLEAR:
        case FDP_ACT_GROUP:
            /* The pipeline's (lib/pipeline.c), which runs them before the
             * packet gets here: what reaches the executor from a
             * pipeline has none, and a single table has nowhere to go
             * (ct_clear: the ct fields are the pipeline key's; the packet
             * has none). */
            break;
        case FDP_ACT_SET_QUEUE:
        case FDP_ACT_POP_QUEUE:
            /* The queue of the outputs that follow: no flowdp port has
             * queues, so it goes no further, as in Open vSwitch's
             * userspace datapath (lib/other-actions.h). */
            break;
        case FDP_ACT_STACK_PUSH:
        case FDP_ACT_STACK_POP:
        case FDP_ACT_OUTPUT_REG:
        case FDP_ACT_CLONE:
        case FDP_ACT_NOTE:
            /* The pipeline's composition runs these (a flow that holds
             * one never reaches the executor as it is); a note does
             * nothing. */
            break;
        case FDP_N_ACTION_TYPES:
            break;
        }
    }
    return FDP__EXEC_DONE;
}
