/*
 * The packet parser's body, inline, shared by datapath/extract.c (the
 * portable entry points) and datapath/extract-sse42.c (the same parse with
 * the CRC32C flow hash computed in line), so that both parse with the very
 * same code.  datapath/extract.c's opening comment describes what it
 * extracts and where it deliberately differs from Open vSwitch.
 *
 * Key words are built in locals at positions fixed at compile time
 * (FDP__WORD_x, FDP__SHIFT_x from FDP__FIELDS in lib/field.h) and each is
 * stored once by the caller; nothing goes through the field table.
 */
#ifndef FDP_EXTRACT_IMPL_H
#define FDP_EXTRACT_IMPL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <flowdp/datapath.h>
#include "lib/field.h"

#define FDP__ETH_TYPE_VLAN 0x8100
#define FDP__ETH_TYPE_VLAN_8021AD 0x88a8
#define FDP__ETH_TYPE_NONE 0x05ff  /* Open vSwitch's FLOW_DL_TYPE_NONE. */
#define FDP__ETH_TYPE_MIN 0x0600   /* Smaller values are 802.3 lengths. */
#define FDP__ETH_HEADER_LEN 14
#define FDP__VLAN_HEADER_LEN 4
#define FDP__MAX_VLANS 2           /* As OVS's FLOW_MAX_VLAN_HEADERS. */
#define FDP__LLC_SNAP_LEN 8        /* DSAP, SSAP, control, OUI, type. */
#define FDP__IPV4_HEADER_LEN 20
#define FDP__IPV6_HEADER_LEN 40
#define FDP__ARP_ETH_LEN 28        /* Ethernet/IPv4 ARP. */
#define FDP__TCP_HEADER_LEN 20
#define FDP__UDP_HEADER_LEN 8
#define FDP__SCTP_HEADER_LEN 12
#define FDP__ICMP_HEADER_LEN 8     /* Type, code, checksum, 4 more bytes:
                                    * OVS wants all 8 for ICMP and ICMPv6. */
#define FDP__IPV6_EXT_MIN 8        /* Every extension header's least size. */
#define FDP__ND_TARGET_END 24      /* ICMPv6 header (8) + target (16). */
#define FDP__ND_OPT_UNIT 8         /* ND option lengths count 8 bytes. */
#define FDP__ND_OPT_SLL 1          /* Source link-layer address option. */
#define FDP__ND_OPT_TLL 2          /* Target link-layer address option. */
#define FDP__IPPROTO_IGMP 2        /* Its header is 8 bytes too. */

/* IPv6 extension headers (RFC 8200) and "no next header". */
#define FDP__IPV6_HOPOPTS 0
#define FDP__IPV6_ROUTING 43
#define FDP__IPV6_FRAGMENT 44
#define FDP__IPV6_AH 51
#define FDP__IPV6_DSTOPTS 60
#define FDP__IPV6_FRAG_OFFSET 0xfff8   /* ip6f_offlg: offset bits. */

static_assert(FDP__WORD_NW_SRC == FDP__WORD_NW_DST
              && FDP__SHIFT_NW_SRC == 32 && FDP__SHIFT_NW_DST == 0,
              "nw_src:nw_dst is one 64-bit word, loaded at once");
static_assert(FDP__WORD_NW_ECN == FDP__WORD_NW_TOS
              && FDP__SHIFT_NW_TOS == FDP__SHIFT_NW_ECN + 2
              && FDP__BITS_NW_TOS + FDP__BITS_NW_ECN == 8,
              "the TOS byte (DSCP:ECN) is stored whole at nw_ecn's bits");
static_assert(FDP__BITS_IPV6_SRC == 128 && FDP__BITS_IPV6_DST == 128,
              "IPv6 addresses take two whole words each");

/* X(0) ... X(13): statements for each of the key's packet words with a
 * constant index, written out so that the compiler keeps the words in
 * registers (a loop over an array index makes it keep them in memory).
 * The pipeline's words (key.h) are zero in every extracted key:
 * fdp__zero_pipeline_words() clears them. */
#define FDP__FOR_EACH_WORD(X)                                               \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12)  \
    X(13)
static_assert(FDP_KEY_PACKET_WORDS == 14,
              "FDP__FOR_EACH_WORD names every packet word");

/* In three parts, the registers' 9 words, the connection-tracking 8 and
 * the tunnel's 10: each is at most 128 bytes, which GCC stores inline
 * with vector moves; one memset of the 136 bytes became "rep stosq" (25
 * instructions per packet under callgrind, against 10). */
static inline void
fdp__zero_pipeline_words(struct fdp_key *key)
{
    static_assert(FDP__WORD_METADATA == FDP_KEY_PACKET_WORDS
                  && FDP__WORD_CT_STATE == FDP__WORD_XREG7 + 1
                  && FDP__WORD_CT_STATE + 8 == FDP__TUN_FIRST_WORD
                  && FDP__TUN_N_WORDS * 8 <= 128,
                  "the register words, then the connection-tracking words, "
                  "then the tunnel's");
    memset(&key->w[FDP_KEY_PACKET_WORDS], 0,
           (FDP__WORD_CT_STATE - FDP_KEY_PACKET_WORDS) * sizeof key->w[0]);
    memset(&key->w[FDP__WORD_CT_STATE], 0,
           (FDP__TUN_FIRST_WORD - FDP__WORD_CT_STATE) * sizeof key->w[0]);
    memset(&key->w[FDP__TUN_FIRST_WORD], 0,
           FDP__TUN_N_WORDS * sizeof key->w[0]);
}

static inline uint16_t
fdp__be16(const uint8_t *p)
{
    uint16_t v;

    memcpy(&v, p, sizeof v);
    return __builtin_bswap16(v);
}

static inline uint32_t
fdp__be32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof v);
    return __builtin_bswap32(v);
}

static inline uint64_t
fdp__be64(const uint8_t *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof v);
    return __builtin_bswap64(v);
}

static inline uint64_t
fdp__be48(const uint8_t *p)
{
    return (uint64_t) fdp__be32(p) << 16 | fdp__be16(p + 4);
}

static_assert(FDP__WORD_ND_OPTIONS_TYPE == FDP__WORD_TCP_FLAGS
              && FDP__WORD_ND_RESERVED == FDP__WORD_NW_SRC
              && FDP__WORD_ND_SLL == FDP__WORD_ARP_SHA
              && FDP__WORD_ND_TLL == FDP__WORD_ARP_THA
              && FDP__BITS_ND_TARGET == 128,
              "neighbour discovery shares storage as key.h says");

/* The rest of an ICMPv6 neighbour solicitation or advertisement (type 135
 * or 136, code 0) at 'icmp' ('n' >= 8 bytes, bounded by the IP length)
 * into 'w', as Open vSwitch's parse_icmpv6(): the 32 bits after the
 * checksum (the R, S and O flags and the reserved bits) are nd_reserved;
 * a packet too short for the 16-byte target has no target nor options;
 * then the options, 8-byte units each, until one has length 0 or runs
 * past the end: a source (1) or target (2) link-layer option of exactly
 * one unit gives nd_sll or nd_tll, and the type of the first such option
 * is nd_options_type.  A second option of a kind whose address is already
 * set (not zero) makes the packet invalid: target and both addresses are
 * then zero, and nd_options_type stays as it was. */
static inline void
fdp__extract_nd(const uint8_t *icmp, size_t n, uint64_t *w)
{
    w[FDP__WORD_ND_RESERVED] |= FDP__PUT(ND_RESERVED, fdp__be32(icmp + 4));
    if (n < FDP__ND_TARGET_END) {
        return;
    }

    uint64_t target_hi = fdp__be64(icmp + 8), target_lo = fdp__be64(icmp + 16);
    uint64_t lla[2] = { 0, 0 };         /* nd_sll, nd_tll. */
    unsigned int opt_type = 0;
    for (size_t off = FDP__ND_TARGET_END; n - off >= FDP__ND_OPT_UNIT;) {
        const uint8_t *opt = icmp + off;
        size_t len = (size_t) opt[1] * FDP__ND_OPT_UNIT;
        if (!len || len > n - off) {
            break;
        }
        if ((opt[0] == FDP__ND_OPT_SLL || opt[0] == FDP__ND_OPT_TLL)
            && len == FDP__ND_OPT_UNIT) {
            uint64_t *a = &lla[opt[0] - FDP__ND_OPT_SLL];
            if (*a) {
                target_hi = target_lo = 0;
                lla[0] = lla[1] = 0;
                break;
            }
            *a = fdp__be48(opt + 2);
            if (!opt_type) {
                opt_type = opt[0];
            }
        }
        off += len;
    }
    w[FDP__WORD_ND_TARGET] = target_hi;
    w[FDP__WORD_ND_TARGET + 1] = target_lo;
    w[FDP__WORD_ND_SLL] |= FDP__PUT(ND_SLL, lla[0]);
    w[FDP__WORD_ND_TLL] |= FDP__PUT(ND_TLL, lla[1]);
    w[FDP__WORD_ND_OPTIONS_TYPE] |= FDP__PUT(ND_OPTIONS_TYPE, opt_type);
}

/* Parses the transport header at 'l4' ('n' bytes, bounded by the IP
 * length) for protocol 'proto' into 'w'; 'ipv6' says the network header
 * was IPv6, the only one whose ICMPv6 is read as neighbour discovery
 * (Open vSwitch parses ND behind IPv4 too, but nothing can match or print
 * it there, because every ND field needs dl_type 0x86dd; here nd_reserved
 * shares nw_src's bits, which IPv4 uses).  Returns false if a header that
 * flowdp parses is too short (the layout then has no l4). */
static inline __attribute__((always_inline)) bool
fdp__extract_l4(const uint8_t *l4, size_t n, uint8_t proto, bool ipv6,
                uint64_t *w)
{
    switch (proto) {
    case FDP_IPPROTO_TCP: {
        if (n < FDP__TCP_HEADER_LEN) {
            return false;
        }
        size_t hdr_len = (size_t) (l4[12] >> 4) * 4;
        if (hdr_len < FDP__TCP_HEADER_LEN || n < hdr_len) {
            return false;
        }
        w[FDP__WORD_TP_SRC] |= FDP__PUT(TP_SRC, fdp__be16(l4))
                               | FDP__PUT(TP_DST, fdp__be16(l4 + 2));
        w[FDP__WORD_TCP_FLAGS] |= FDP__PUT(TCP_FLAGS,
                                           fdp__be16(l4 + 12) & 0x0fff);
        return true;
    }
    case FDP_IPPROTO_UDP:
    case FDP_IPPROTO_SCTP:
        if (n < (proto == FDP_IPPROTO_UDP ? FDP__UDP_HEADER_LEN
                 : FDP__SCTP_HEADER_LEN)) {
            return false;
        }
        w[FDP__WORD_TP_SRC] |= FDP__PUT(TP_SRC, fdp__be16(l4))
                               | FDP__PUT(TP_DST, fdp__be16(l4 + 2));
        return true;
    case FDP_IPPROTO_ICMP:
    case FDP_IPPROTO_ICMPV6:
    case FDP__IPPROTO_IGMP:
        /* ICMP, ICMPv6 and (as OVS) IGMP: type and code in tp_src and
         * tp_dst, from a header of at least 8 bytes. */
        if (n < FDP__ICMP_HEADER_LEN) {
            return false;
        }
        w[FDP__WORD_ICMP_TYPE] |= FDP__PUT(ICMP_TYPE, l4[0])
                                  | FDP__PUT(ICMP_CODE, l4[1]);
        if (proto == FDP_IPPROTO_ICMPV6 && ipv6 && !l4[1]
            && (l4[0] == FDP_ND_SOLICIT || l4[0] == FDP_ND_ADVERT)) {
            fdp__extract_nd(l4, n, w);
        }
        return true;
    default:
        return true;
    }
}

/* IPv4 at 'h' ('n' bytes to the end of the frame) into 'w'.  Returns the
 * offset of the transport header from 'h' and sets '*l4_len', '*proto',
 * '*later', or returns 0 if the header fails Open vSwitch's
 * ipv4_sanity_check() (nothing is extracted then). */
static inline __attribute__((always_inline)) size_t
fdp__extract_ipv4(const uint8_t *h, size_t n, uint64_t *w, size_t *l4_len,
                  uint8_t *proto, bool *later)
{
    if (n < FDP__IPV4_HEADER_LEN) {
        return 0;
    }
    size_t ihl = (size_t) (h[0] & 0x0f) * 4;
    size_t tot_len = fdp__be16(h + 2);
    /* As OVS, the version nibble is not checked; a total length past the
     * frame, or shorter than the header, is refused; more than 64 KiB of
     * padding too. */
    if (ihl < FDP__IPV4_HEADER_LEN || n < ihl || tot_len > n
        || ihl > tot_len || n - tot_len > UINT16_MAX) {
        return 0;
    }

    uint16_t frag_off = fdp__be16(h + 6);
    unsigned int frag = 0;
    if (frag_off & 0x3fff) {            /* MF set or offset non-zero. */
        frag = FDP_FRAG_ANY;
        if (frag_off & 0x1fff) {
            frag |= FDP_FRAG_LATER;
        }
    }
    w[FDP__WORD_NW_SRC] = fdp__be64(h + 12);
    w[FDP__WORD_NW_PROTO] |= FDP__PUT(NW_PROTO, h[9])
                             | FDP__PUT(NW_ECN, h[1]);
    w[FDP__WORD_NW_TTL] |= FDP__PUT(NW_TTL, h[8]) | FDP__PUT(IP_FRAG, frag);
    *proto = h[9];
    *later = frag & FDP_FRAG_LATER;
    *l4_len = tot_len - ihl;            /* Never parse the padding. */
    return ihl;
}

/* IPv6 at 'h' ('n' bytes to the end of the frame) into 'w', walking the
 * extension headers as OVS's parse_ipv6_ext_hdrs__().  Returns the offset
 * of the transport header from 'h' and sets '*l4_len', '*proto', '*later';
 * returns 0 if the header fails ipv6_sanity_check() (nothing extracted).
 * An extension header cut short keeps only the addresses, as in OVS,
 * which stores the other fields after the walk: then '*later' is true, so
 * that no transport header is looked for. */
static inline __attribute__((always_inline)) size_t
fdp__extract_ipv6(const uint8_t *h, size_t n, uint64_t *w, size_t *l4_len,
                  uint8_t *protop, bool *later)
{
    if (n < FDP__IPV6_HEADER_LEN) {
        return 0;
    }
    size_t plen = fdp__be16(h + 4);
    if (plen + FDP__IPV6_HEADER_LEN > n
        || n - (plen + FDP__IPV6_HEADER_LEN) > UINT16_MAX) {
        return 0;
    }
    w[FDP__WORD_IPV6_SRC] = fdp__be64(h + 8);
    w[FDP__WORD_IPV6_SRC + 1] = fdp__be64(h + 16);
    w[FDP__WORD_IPV6_DST] = fdp__be64(h + 24);
    w[FDP__WORD_IPV6_DST + 1] = fdp__be64(h + 32);

    /* The extension headers: each takes at least 8 bytes of the payload,
     * so the walk ends within plen / 8 steps. */
    size_t off = FDP__IPV6_HEADER_LEN;
    size_t left = plen;
    uint8_t proto = h[6];
    unsigned int frag = 0;
    *later = true;
    for (;;) {
        size_t len;
        if (proto == FDP__IPV6_HOPOPTS || proto == FDP__IPV6_ROUTING
            || proto == FDP__IPV6_DSTOPTS) {
            if (left < FDP__IPV6_EXT_MIN) {
                return off;
            }
            len = ((size_t) h[off + 1] + 1) * 8;
        } else if (proto == FDP__IPV6_AH) {
            if (left < FDP__IPV6_EXT_MIN) {
                return off;
            }
            len = ((size_t) h[off + 1] + 2) * 4;
        } else if (proto == FDP__IPV6_FRAGMENT) {
            if (left < FDP__IPV6_EXT_MIN) {
                return off;
            }
            len = FDP__IPV6_EXT_MIN;
            uint16_t offlg = fdp__be16(h + off + 2);
            if (offlg) {
                /* An atomic fragment (offset 0, no M bit) is no fragment,
                 * as in OVS. */
                frag = FDP_FRAG_ANY;
                if (offlg & FDP__IPV6_FRAG_OFFSET) {
                    /* A later fragment: its nw_proto is the fragment
                     * header's own number, as OVS has it. */
                    frag |= FDP_FRAG_LATER;
                    off += len;
                    left -= len;
                    break;
                }
            }
        } else {
            break;
        }
        if (len > left) {
            return off;
        }
        proto = h[off];
        off += len;
        left -= len;
    }

    uint32_t vtcfl = fdp__be32(h);
    w[FDP__WORD_IPV6_LABEL] |= FDP__PUT(IPV6_LABEL, vtcfl & 0xfffff);
    w[FDP__WORD_NW_PROTO] |= FDP__PUT(NW_PROTO, proto)
                             | FDP__PUT(NW_ECN, (uint8_t) (vtcfl >> 20));
    w[FDP__WORD_NW_TTL] |= FDP__PUT(NW_TTL, h[7]) | FDP__PUT(IP_FRAG, frag);
    *protop = proto;
    *later = frag & FDP_FRAG_LATER;
    *l4_len = left;
    return off;
}

/* Ethernet/IPv4 ARP at 'h' ('n' bytes) into 'w'; false if it is not
 * one. */
static inline __attribute__((always_inline)) bool
fdp__extract_arp(const uint8_t *h, size_t n, uint64_t *w)
{
    if (n < FDP__ARP_ETH_LEN || fdp__be16(h) != 1
        || fdp__be16(h + 2) != FDP_ETH_TYPE_IP || h[4] != 6 || h[5] != 4) {
        return false;
    }
    uint16_t op = fdp__be16(h + 6);
    if (op <= 0xff) {                   /* Only 8 bits fit, as in OVS. */
        w[FDP__WORD_ARP_OP] |= FDP__PUT(ARP_OP, op);
    }
    w[FDP__WORD_ARP_SHA] = FDP__PUT(ARP_SHA, fdp__be48(h + 8));
    w[FDP__WORD_ARP_SPA] = FDP__PUT(ARP_SPA, fdp__be32(h + 14))
                           | FDP__PUT(ARP_TPA, fdp__be32(h + 24));
    w[FDP__WORD_ARP_THA] = FDP__PUT(ARP_THA, fdp__be48(h + 18));
    return true;
}

/* The common case, in a straight line: Ethernet with at most one 802.1Q
 * tag, IPv4 without options, not a fragment, UDP or TCP, all whole.  If
 * the packet is one, sets key words 0 to FDP__FAST_WORDS - 1 and
 * '*layout' exactly as fdp__extract_words() would (the others are zero)
 * and returns true; otherwise returns false, having written nothing
 * usable, and the general parser runs.  Its checks imply every check of
 * the general path for the same bytes, so the two cannot disagree; the
 * unit test compares them on every packet it makes. */
#define FDP__FAST_WORDS 5
static_assert(FDP__WORD_NW_SRC < FDP__FAST_WORDS
              && FDP__WORD_TP_SRC < FDP__FAST_WORDS
              && FDP__WORD_IN_PORT < FDP__FAST_WORDS
              && FDP__WORD_DL_SRC < FDP__FAST_WORDS
              && FDP__WORD_DL_DST < FDP__FAST_WORDS
              && FDP__WORD_TCP_FLAGS < FDP__FAST_WORDS
              && FDP__WORD_IPV6_LABEL >= FDP__FAST_WORDS
              && FDP__WORD_IPV6_SRC >= FDP__FAST_WORDS
              && FDP__WORD_ARP_SHA >= FDP__FAST_WORDS,
              "an IPv4 TCP/UDP key lives in the first FDP__FAST_WORDS words");
static_assert(FDP__SHIFT_TP_SRC == 48 && FDP__SHIFT_TP_DST == 32
              && FDP__WORD_TP_SRC == FDP__WORD_TP_DST,
              "the two ports are one big-endian 32-bit load");
static_assert(FDP__WORD_DL_TYPE == FDP__WORD_TP_SRC
              && FDP__WORD_NW_PROTO == FDP__WORD_TP_SRC
              && FDP__WORD_NW_ECN == FDP__WORD_TP_SRC
              && FDP__WORD_VLAN_TCI == FDP__WORD_IN_PORT
              && FDP__WORD_NW_TTL == FDP__WORD_DL_SRC
              && FDP__WORD_TCP_FLAGS == FDP__WORD_DL_DST,
              "the fast path builds these words from these fields");

static inline __attribute__((always_inline)) bool
fdp__extract_fast(const uint8_t *p, size_t size, uint32_t in_port,
                  uint64_t *w, struct fdp_packet_layout *layout)
{
    size_t off = FDP__ETH_HEADER_LEN;
    uint64_t tci = 0;

    if (size < FDP__ETH_HEADER_LEN + FDP__IPV4_HEADER_LEN
               + FDP__UDP_HEADER_LEN) {
        return false;
    }
    uint16_t type = fdp__be16(p + 12);
    int32_t l2_5 = -1;
    if (type == FDP__ETH_TYPE_VLAN) {
        tci = fdp__be16(p + 14) | FDP_VLAN_CFI;
        type = fdp__be16(p + 16);
        off += FDP__VLAN_HEADER_LEN;
        l2_5 = 12;
    }
    const uint8_t *h = p + off;
    size_t n = size - off;              /* >= 24 with a tag, 28 without. */
    size_t tot_len = fdp__be16(h + 2);
    if (type != FDP_ETH_TYPE_IP || h[0] != 0x45 || (h[6] & 0x3f) || h[7]
        || tot_len > n || n - tot_len > UINT16_MAX) {
        return false;
    }
    uint8_t proto = h[9];
    size_t l4_len = tot_len - FDP__IPV4_HEADER_LEN;  /* May wrap: below. */
    const uint8_t *l4 = h + FDP__IPV4_HEADER_LEN;
    uint64_t flags = 0;
    if (proto == FDP_IPPROTO_UDP) {
        if (tot_len < FDP__IPV4_HEADER_LEN + FDP__UDP_HEADER_LEN) {
            return false;
        }
    } else if (proto == FDP_IPPROTO_TCP) {
        if (tot_len < FDP__IPV4_HEADER_LEN + FDP__TCP_HEADER_LEN
            || (size_t) (l4[12] >> 4) * 4 < FDP__TCP_HEADER_LEN
            || (size_t) (l4[12] >> 4) * 4 > l4_len) {
            return false;
        }
        flags = fdp__be16(l4 + 12) & 0x0fff;
    } else {
        return false;
    }

    w[FDP__WORD_NW_SRC] = fdp__be64(h + 12);
    w[FDP__WORD_TP_SRC] = (uint64_t) fdp__be32(l4) << FDP__SHIFT_TP_DST
                          | FDP__PUT(DL_TYPE, FDP_ETH_TYPE_IP)
                          | FDP__PUT(NW_PROTO, proto)
                          | FDP__PUT(NW_ECN, h[1]);
    w[FDP__WORD_IN_PORT] = FDP__PUT(IN_PORT, (uint16_t) in_port)
                           | FDP__PUT(VLAN_TCI, tci);
    w[FDP__WORD_DL_SRC] = FDP__PUT(DL_SRC, fdp__be64(p + 6) >> 16)
                          | FDP__PUT(NW_TTL, h[8]);
    w[FDP__WORD_DL_DST] = FDP__PUT(DL_DST, fdp__be64(p) >> 16)
                          | FDP__PUT(TCP_FLAGS, flags);
    *layout = (struct fdp_packet_layout) {
        0, l2_5, (int32_t) off, (int32_t) (off + FDP__IPV4_HEADER_LEN)
    };
    return true;
}

/* Parses the 'size' bytes at 'p' into the key words 'w' (all of which it
 * sets) and '*layout' (all of which it sets). */
static inline __attribute__((always_inline)) void
fdp__extract_words(const uint8_t *p, size_t size, uint32_t in_port,
                   uint64_t *w, struct fdp_packet_layout *layout)
{
#define FDP__ZERO_WORD(i) w[i] = 0;
    FDP__FOR_EACH_WORD(FDP__ZERO_WORD)
#undef FDP__ZERO_WORD
    w[FDP__WORD_IN_PORT] = FDP__PUT(IN_PORT, (uint16_t) in_port);
    *layout = (struct fdp_packet_layout) { -1, -1, -1, -1 };

    /* Phase 1: Ethernet, up to two VLAN tags, 802.3 LLC/SNAP. */
    if (size < FDP__ETH_HEADER_LEN) {
        return;
    }
    layout->l2 = 0;
    w[FDP__WORD_DL_DST] = FDP__PUT(DL_DST, fdp__be64(p) >> 16);
    w[FDP__WORD_DL_SRC] = FDP__PUT(DL_SRC, fdp__be64(p + 6) >> 16);

    size_t off = 12;                    /* The first type or TPID. */
    uint16_t type = fdp__be16(p + off);
    /* As OVS's parse_vlan(): a tag counts only if its TCI and the next
     * type are there; the third tag's TPID is the frame's type. */
    for (int n_vlans = 0; (type == FDP__ETH_TYPE_VLAN
                           || type == FDP__ETH_TYPE_VLAN_8021AD)
                          && n_vlans < FDP__MAX_VLANS
                          && size - off >= FDP__VLAN_HEADER_LEN + 2;
         n_vlans++) {
        if (!n_vlans) {
            layout->l2_5 = (int32_t) off;
            w[FDP__WORD_VLAN_TCI] |= FDP__PUT(VLAN_TCI, fdp__be16(p + off + 2)
                                                        | FDP_VLAN_CFI);
        }
        off += FDP__VLAN_HEADER_LEN;
        type = fdp__be16(p + off);
    }
    off += 2;
    if (type < FDP__ETH_TYPE_MIN) {
        const uint8_t *llc = p + off;
        if (size - off >= FDP__LLC_SNAP_LEN && llc[0] == 0xaa
            && llc[1] == 0xaa && llc[2] == 0x03 && !llc[3] && !llc[4]
            && !llc[5]) {
            off += FDP__LLC_SNAP_LEN;
            type = fdp__be16(llc + 6);
            if (type < FDP__ETH_TYPE_MIN) {
                type = FDP__ETH_TYPE_NONE;
            }
        } else {
            type = FDP__ETH_TYPE_NONE;
        }
    }
    w[FDP__WORD_DL_TYPE] |= FDP__PUT(DL_TYPE, type);

    /* Phase 2: the network header. */
    const uint8_t *l3 = p + off;
    size_t l3_left = size - off;
    size_t l4_off, l4_len = 0;
    uint8_t proto = 0;
    bool later = false;
    if (type == FDP_ETH_TYPE_IP) {
        l4_off = fdp__extract_ipv4(l3, l3_left, w, &l4_len, &proto, &later);
    } else if (type == FDP_ETH_TYPE_IPV6) {
        l4_off = fdp__extract_ipv6(l3, l3_left, w, &l4_len, &proto, &later);
    } else {
        if ((type == FDP_ETH_TYPE_ARP || type == FDP_ETH_TYPE_RARP)
            && fdp__extract_arp(l3, l3_left, w)) {
            layout->l3 = (int32_t) off;
        }
        return;
    }
    if (!l4_off) {
        return;
    }
    layout->l3 = (int32_t) off;

    /* Phase 3: the transport header, except in later fragments. */
    if (!later && fdp__extract_l4(l3 + l4_off, l4_len, proto,
                                  type == FDP_ETH_TYPE_IPV6, w)) {
        layout->l4 = (int32_t) (off + l4_off);
    }
}

#endif /* FDP_EXTRACT_IMPL_H */
