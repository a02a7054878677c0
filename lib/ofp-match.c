/*
 * The OpenFlow codec's fields and matches: NXM and OXM entries, OpenFlow
 * 1.1+'s OXM ofp_match, and OpenFlow 1.0's fixed ofp_match.
 *
 * Theory of operation.
 *
 * Wire fields.  Open vSwitch gives every field it can put on the wire an
 * mf_field (lib/meta-flow.h there) and each of those one or more headers:
 * an NXM header (class 0x0000 or 0x0001), OXM headers of class 0x8000
 * (OpenFlow basic) or 0x8001 (packet registers), and experimenter OXMs
 * (class 0xffff followed by a 32-bit experimenter id).  flowdp's key has
 * fewer fields than there are wire fields: one tp_src stands for the TCP,
 * UDP and SCTP source ports, one nw_tos for both NXM_OF_IP_TOS (the TOS
 * byte) and OXM_OF_IP_DSCP (the DSCP in the low 6 bits), one vlan_tci for
 * NXM_OF_VLAN_TCI and OXM_OF_VLAN_VID/OXM_OF_VLAN_PCP.  So this file has
 * two tables, both generated from one X-macro each:
 *
 *   - WIRE_FIELDS: one row per Open vSwitch wire field that flowdp's key
 *     can hold (struct wire_field): the enum fdp_field it reads and
 *     writes, its width on the wire, Open vSwitch's width in bits, how the
 *     wire value maps to the key's (enum conv: most are a plain
 *     big-endian number; a few are not, listed at enum conv), whether it
 *     takes a mask, whether an action may write it, and its prerequisite;
 *
 *   - HEADERS: one row per header (struct fdp__ofp_field, the row the
 *     header lib/ofp-match.h exports), naming its wire field, its class,
 *     field number, experimenter id and the first OpenFlow version whose
 *     OXM it is (0 for NXM headers), with Open vSwitch's name for it.
 *
 * A field with several headers is written as Open vSwitch's
 * nxm_field_by_mf_id() writes it: for version V (0 meaning NXM), the last
 * of its headers (NXM first, then OXM by version) whose version is <= V,
 * or its first header if none is.  So OXM tcp_flags in OpenFlow 1.3 is
 * ONF's experimenter header and in 1.5 OXM_OF_TCP_FLAGS, xreg0 is always
 * OXM_OF_PKT_REG0 (it has no NXM header), and pkt_mark in OXM is still
 * NXM_NX_PKT_MARK (it has no OXM header).
 *
 * tun_metadata0..63 (NXM_NX_TUN_METADATA0..63, class 1, fields 40..103)
 * are wire fields of variable length: a TLV map (lib/tlv-map.c) gives
 * option N its bytes of the key's 32-byte tunnel-metadata space, and the
 * wire value is a big-endian number right-aligned in those bytes (Open
 * vSwitch's tun_metadata_set_match()).  Their rows have no enum
 * fdp_field: the match codec handles them with the map.
 *
 * Matches.  The encoder (fdp__nx_match_put) follows Open vSwitch's
 * nx_put_raw() field by field, so that the bytes equal the ones
 * ovs-vswitchd and ovs-ofctl send for the same match: which fields are
 * written depends on dl_type and nw_proto exactly as there (IPv4
 * addresses only under dl_type 0x0800, the TCP ports only under nw_proto
 * 6...).  Every entry written records the key bits it expresses; a match
 * with a bit the entries do not express (a range, tun_tos, a partial mask
 * on a field whose wire form takes none, a VLAN PCP without a VID in OXM)
 * has no wire form and the encoder returns -1 with nothing appended,
 * rather than sending a different match.
 *
 * The decoder (fdp__nx_match_pull) follows nx_pull_raw() and its checks,
 * in its order, so that a bad entry gets the error ovs-vswitchd sends:
 * OFPBMC_BAD_LEN (truncated header or payload), OFPBMC_BAD_WILDCARDS (a
 * value bit under a 0 mask bit), OFPBMC_BAD_FIELD (unknown header or a
 * length that is not the field's), OFPBMC_BAD_MASK (a mask on a field
 * that takes none, other than all ones or all zeros), OFPBMC_BAD_VALUE (a
 * value the field cannot hold), OFPBMC_BAD_PREREQ (an entry whose
 * prerequisites the entries before it do not meet), OFPBMC_DUP_FIELD (a
 * field, or one sharing its key bits, seen twice).
 *
 * Worked example.  "tcp,nw_src=10.0.0.0/8,tp_dst=80" in OXM for OpenFlow
 * 1.3: dl_type=0x0800 gives 80 00 0a 02 08 00 (OXM_OF_ETH_TYPE, class
 * 0x8000, field 5, length 2); nw_src gives 80 00 17 08 0a 00 00 00 ff 00
 * 00 00 (OXM_OF_IPV4_SRC, field 11, hasmask, length 8: value then mask);
 * nw_proto gives 80 00 14 01 06; and tp_dst, because nw_proto is 6, gives
 * 80 00 1c 02 00 50 (OXM_OF_TCP_DST, field 14).  The entries written cover
 * dl_type, the top 8 bits of nw_src, nw_proto and tp_dst: the match's
 * whole mask, so the encoding is complete.  Decoding the same bytes checks
 * OXM_OF_IPV4_SRC's prerequisite (dl_type 0x0800, already seen) and
 * OXM_OF_TCP_DST's (nw_proto 6) and rebuilds the same match.
 *
 * OpenFlow 1.0's ofp_match has fixed fields and wildcard bits; decoding
 * follows ofputil_match_from_ofp10_match() and then
 * ofputil_normalize_match() (fields whose prerequisites the match does
 * not meet are dropped, as ovs-vswitchd does with a flow mod), encoding
 * ofputil_match_to_ofp10_match().
 *
 * Thread-safety: the tables are constant and every function is pure
 * (fdp__tlv_map_field() enters its own RCU read section), so any thread
 * may call any function.  Nothing here prints or does I/O.
 */
#include <config.h>

#include "lib/ofp-match.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "lib/match-internal.h"
#include "lib/tlv-map.h"

/* ---------------------------------------------------------------------- */
/* The wire fields.                                                         */

/* How a wire value maps to the key's. */
enum conv {
    CONV_PLAIN,     /* A big-endian number: the key's value.  It must not
                     * exceed the key field's largest value (arp_op's 16
                     * wire bits over the key's 8, ct_state's 32 over 8). */
    CONV_PORT_OXM,  /* OXM_OF_IN_PORT: an OpenFlow 1.1+ 32-bit port;
                     * 0xfffffff8 and up are the reserved ports 0xfff8 and
                     * up, 0xff00 to 0xfffffff7 are invalid (Open
                     * vSwitch's ofputil_port_from_ofp11()). */
    CONV_VLAN_VID,  /* OXM_OF_VLAN_VID: vlan_tci's VID bits and its CFI bit
                     * as OFPVID_PRESENT (0x1000). */
    CONV_VLAN_PCP,  /* OXM_OF_VLAN_PCP: vlan_tci's top 3 bits. */
    CONV_TOS,       /* NXM_OF_IP_TOS: the TOS byte with ECN zero, the key's
                     * 6-bit DSCP shifted left by 2. */
    CONV_FRAG,      /* NXM_NX_IP_FRAG: the key's 2 bits; an exact mask is
                     * written 0xff. */
    CONV_NARROW,    /* As CONV_PLAIN, but an exact match keeps its mask as
                     * wide as the key's field (ct_state's 0x000000ff,
                     * tun_flags' 0x0001), where CONV_PLAIN writes an
                     * exact match without a mask (ipv6_label, tcp_flags):
                     * what Open vSwitch's match_set_*() leave in its
                     * masks, so the bytes equal its own. */
    CONV_TUN_MD,    /* tun_metadataN, through a TLV map. */
};

/* Columns of WIRE_FIELDS:
 *   ID      the wire field, WF_<ID>;
 *   F       the key field, FDP_F_<F> (IN_PORT for tun_metadata, unused);
 *   BYTES   the value's bytes on the wire;
 *   BITS    its width as Open vSwitch has it (mf_field's n_bits);
 *   CONV    enum conv without CONV_;
 *   MASK    whether the wire form takes a mask (Open vSwitch's
 *           "Maskable: bitwise");
 *   W       whether an action may write it in flowdp (set_field, load,
 *           move destination): lib/actions.c's fdp__nxm_fields agree, as
 *           tests/unit/test-ofp-match.c checks;
 *   PR      the prerequisite checked when an entry is decoded: Open
 *           vSwitch's, or flowdp's where flowdp's key needs more (the
 *           connection-tracking tuple shares storage between its IPv4 and
 *           IPv6 forms, so the family must be known), FDP__P_ without the
 *           prefix. */
#define TUN_MD_WIRE(F, N) \
    F(TUN_MD##N, IN_PORT, 0, 0, TUN_MD, true, true, NONE)
#define TUN_MD_WIRE8(F, A, B, C, D, E, G, H, I) \
    TUN_MD_WIRE(F, A) TUN_MD_WIRE(F, B) TUN_MD_WIRE(F, C) \
    TUN_MD_WIRE(F, D) TUN_MD_WIRE(F, E) TUN_MD_WIRE(F, G) \
    TUN_MD_WIRE(F, H) TUN_MD_WIRE(F, I)
#define WIRE_FIELDS(F)                                                      \
    F(CONJ_ID, CONJ_ID, 4, 32, PLAIN, false, false, NONE)                   \
    F(IN_PORT, IN_PORT, 2, 16, PLAIN, false, true, NONE)                    \
    F(IN_PORT_OXM, IN_PORT, 4, 32, PORT_OXM, false, true, NONE)             \
    F(ETH_SRC, DL_SRC, 6, 48, PLAIN, true, true, NONE)                      \
    F(ETH_DST, DL_DST, 6, 48, PLAIN, true, true, NONE)                      \
    F(ETH_TYPE, DL_TYPE, 2, 16, PLAIN, false, false, NONE)                  \
    F(VLAN_TCI, VLAN_TCI, 2, 16, PLAIN, true, true, NONE)                   \
    F(VLAN_VID, DL_VLAN, 2, 12, VLAN_VID, true, true, NONE)                 \
    F(VLAN_PCP, DL_VLAN_PCP, 1, 3, VLAN_PCP, false, true, VLAN)             \
    F(IPV4_SRC, NW_SRC, 4, 32, PLAIN, true, true, IPV4)                     \
    F(IPV4_DST, NW_DST, 4, 32, PLAIN, true, true, IPV4)                     \
    F(IPV6_SRC, IPV6_SRC, 16, 128, PLAIN, true, true, IPV6)                 \
    F(IPV6_DST, IPV6_DST, 16, 128, PLAIN, true, true, IPV6)                 \
    F(IPV6_LABEL, IPV6_LABEL, 4, 20, PLAIN, true, true, IPV6)               \
    F(IP_PROTO, NW_PROTO, 1, 8, PLAIN, false, false, IP_ANY)                \
    F(IP_DSCP, NW_TOS, 1, 8, TOS, false, true, IP_ANY)                      \
    F(IP_DSCP_SHIFTED, NW_TOS, 1, 6, PLAIN, false, true, IP_ANY)            \
    F(IP_ECN, NW_ECN, 1, 2, PLAIN, false, true, IP_ANY)                     \
    F(IP_TTL, NW_TTL, 1, 8, PLAIN, false, true, IP_ANY)                     \
    F(IP_FRAG, IP_FRAG, 1, 2, FRAG, true, false, IP_ANY)                    \
    F(ARP_OP, ARP_OP, 2, 16, PLAIN, false, true, ARP)                       \
    F(ARP_SPA, ARP_SPA, 4, 32, PLAIN, true, true, ARP)                      \
    F(ARP_TPA, ARP_TPA, 4, 32, PLAIN, true, true, ARP)                      \
    F(ARP_SHA, ARP_SHA, 6, 48, PLAIN, true, true, ARP)                      \
    F(ARP_THA, ARP_THA, 6, 48, PLAIN, true, true, ARP)                      \
    F(TCP_SRC, TP_SRC, 2, 16, PLAIN, true, true, TCP)                       \
    F(TCP_DST, TP_DST, 2, 16, PLAIN, true, true, TCP)                       \
    F(TCP_FLAGS, TCP_FLAGS, 2, 12, PLAIN, true, false, TCP)                 \
    F(UDP_SRC, TP_SRC, 2, 16, PLAIN, true, true, UDP)                       \
    F(UDP_DST, TP_DST, 2, 16, PLAIN, true, true, UDP)                       \
    F(SCTP_SRC, TP_SRC, 2, 16, PLAIN, true, true, SCTP)                     \
    F(SCTP_DST, TP_DST, 2, 16, PLAIN, true, true, SCTP)                     \
    F(ICMPV4_TYPE, ICMP_TYPE, 1, 8, PLAIN, false, true, ICMPV4)             \
    F(ICMPV4_CODE, ICMP_CODE, 1, 8, PLAIN, false, true, ICMPV4)             \
    F(ICMPV6_TYPE, ICMP_TYPE, 1, 8, PLAIN, false, true, ICMPV6)             \
    F(ICMPV6_CODE, ICMP_CODE, 1, 8, PLAIN, false, true, ICMPV6)             \
    F(ND_TARGET, ND_TARGET, 16, 128, PLAIN, true, true, ND)                 \
    F(ND_SLL, ND_SLL, 6, 48, PLAIN, true, true, ND_SOLICIT)                 \
    F(ND_TLL, ND_TLL, 6, 48, PLAIN, true, true, ND_ADVERT)                  \
    F(ND_RESERVED, ND_RESERVED, 4, 32, PLAIN, false, true, ND)              \
    F(ND_OPTIONS_TYPE, ND_OPTIONS_TYPE, 1, 8, PLAIN, false, true, ND)       \
    F(TUN_ID, TUN_ID, 8, 64, PLAIN, true, true, NONE)                       \
    F(TUN_FLAGS, TUN_FLAGS, 2, 1, NARROW, true, true, NONE)                  \
    F(TUN_SRC, TUN_SRC, 4, 32, PLAIN, true, true, NONE)                     \
    F(TUN_DST, TUN_DST, 4, 32, PLAIN, true, true, NONE)                     \
    F(TUN_IPV6_SRC, TUN_IPV6_SRC, 16, 128, PLAIN, true, true, NONE)         \
    F(TUN_IPV6_DST, TUN_IPV6_DST, 16, 128, PLAIN, true, true, NONE)         \
    F(TUN_GBP_ID, TUN_GBP_ID, 2, 16, PLAIN, true, true, NONE)               \
    F(TUN_GBP_FLAGS, TUN_GBP_FLAGS, 1, 8, PLAIN, true, true, NONE)          \
    TUN_MD_WIRE8(F, 0, 1, 2, 3, 4, 5, 6, 7)                                 \
    TUN_MD_WIRE8(F, 8, 9, 10, 11, 12, 13, 14, 15)                           \
    TUN_MD_WIRE8(F, 16, 17, 18, 19, 20, 21, 22, 23)                         \
    TUN_MD_WIRE8(F, 24, 25, 26, 27, 28, 29, 30, 31)                         \
    TUN_MD_WIRE8(F, 32, 33, 34, 35, 36, 37, 38, 39)                         \
    TUN_MD_WIRE8(F, 40, 41, 42, 43, 44, 45, 46, 47)                         \
    TUN_MD_WIRE8(F, 48, 49, 50, 51, 52, 53, 54, 55)                         \
    TUN_MD_WIRE8(F, 56, 57, 58, 59, 60, 61, 62, 63)                         \
    F(REG0, REG0, 4, 32, PLAIN, true, true, NONE)                           \
    F(REG1, REG1, 4, 32, PLAIN, true, true, NONE)                           \
    F(REG2, REG2, 4, 32, PLAIN, true, true, NONE)                           \
    F(REG3, REG3, 4, 32, PLAIN, true, true, NONE)                           \
    F(REG4, REG4, 4, 32, PLAIN, true, true, NONE)                           \
    F(REG5, REG5, 4, 32, PLAIN, true, true, NONE)                           \
    F(REG6, REG6, 4, 32, PLAIN, true, true, NONE)                           \
    F(REG7, REG7, 4, 32, PLAIN, true, true, NONE)                           \
    F(REG8, REG8, 4, 32, PLAIN, true, true, NONE)                           \
    F(REG9, REG9, 4, 32, PLAIN, true, true, NONE)                           \
    F(REG10, REG10, 4, 32, PLAIN, true, true, NONE)                         \
    F(REG11, REG11, 4, 32, PLAIN, true, true, NONE)                         \
    F(REG12, REG12, 4, 32, PLAIN, true, true, NONE)                         \
    F(REG13, REG13, 4, 32, PLAIN, true, true, NONE)                         \
    F(REG14, REG14, 4, 32, PLAIN, true, true, NONE)                         \
    F(REG15, REG15, 4, 32, PLAIN, true, true, NONE)                         \
    F(XREG0, XREG0, 8, 64, PLAIN, true, true, NONE)                         \
    F(XREG1, XREG1, 8, 64, PLAIN, true, true, NONE)                         \
    F(XREG2, XREG2, 8, 64, PLAIN, true, true, NONE)                         \
    F(XREG3, XREG3, 8, 64, PLAIN, true, true, NONE)                         \
    F(XREG4, XREG4, 8, 64, PLAIN, true, true, NONE)                         \
    F(XREG5, XREG5, 8, 64, PLAIN, true, true, NONE)                         \
    F(XREG6, XREG6, 8, 64, PLAIN, true, true, NONE)                         \
    F(XREG7, XREG7, 8, 64, PLAIN, true, true, NONE)                         \
    F(XXREG0, XXREG0, 16, 128, PLAIN, true, true, NONE)                     \
    F(XXREG1, XXREG1, 16, 128, PLAIN, true, true, NONE)                     \
    F(XXREG2, XXREG2, 16, 128, PLAIN, true, true, NONE)                     \
    F(XXREG3, XXREG3, 16, 128, PLAIN, true, true, NONE)                     \
    F(PKT_MARK, PKT_MARK, 4, 32, PLAIN, true, true, NONE)                   \
    F(CT_STATE, CT_STATE, 4, 32, NARROW, true, false, NONE)                  \
    F(CT_ZONE, CT_ZONE, 2, 16, PLAIN, false, false, NONE)                   \
    F(CT_MARK, CT_MARK, 4, 32, PLAIN, true, false, NONE)                    \
    F(CT_LABEL, CT_LABEL, 16, 128, PLAIN, true, false, NONE)                \
    F(CT_NW_SRC, CT_NW_SRC, 4, 32, PLAIN, true, false, CT_IPV4)             \
    F(CT_NW_DST, CT_NW_DST, 4, 32, PLAIN, true, false, CT_IPV4)             \
    F(CT_IPV6_SRC, CT_IPV6_SRC, 16, 128, PLAIN, true, false, CT_IPV6)       \
    F(CT_IPV6_DST, CT_IPV6_DST, 16, 128, PLAIN, true, false, CT_IPV6)       \
    F(CT_NW_PROTO, CT_NW_PROTO, 1, 8, PLAIN, false, false, CT)              \
    F(CT_TP_SRC, CT_TP_SRC, 2, 16, PLAIN, true, false, CT)                  \
    F(CT_TP_DST, CT_TP_DST, 2, 16, PLAIN, true, false, CT)                  \
    F(METADATA, METADATA, 8, 64, PLAIN, true, true, NONE)

enum wire_id {
#define WF_ENUM(ID, ...) WF_##ID,
    WIRE_FIELDS(WF_ENUM)
#undef WF_ENUM
    N_WIRE_FIELDS
};

struct wire_field {
    enum fdp_field field;
    uint8_t n_bytes;
    uint8_t n_bits;
    uint8_t conv;               /* enum conv. */
    bool maskable;
    bool writable;
    enum fdp__prereq prereq;
};

static const struct wire_field wire_fields[N_WIRE_FIELDS] = {
#define WF_ROW(ID, F, BYTES, BITS, CONV, MASK, W, PR)                       \
    [WF_##ID] = { FDP_F_##F, BYTES, BITS, CONV_##CONV, MASK, W,             \
                  FDP__P_##PR },
    WIRE_FIELDS(WF_ROW)
#undef WF_ROW
};

/* The Open vSwitch header classes. */
#define NXM_OF 0x0000u
#define NXM_NX 0x0001u
#define OXM_BASIC 0x8000u
#define OXM_PKT_REGS 0x8001u
#define OXM_ERIC 0x1000u            /* Ericsson's ND extension fields. */
#define OXM_EXPERIMENTER 0xffffu
#define ONF_EXPERIMENTER 0x4f4e4600u /* "ONF\0": ONFOXM_ET_*. */

/* The classes whose headers carry an experimenter id. */
static bool
is_experimenter_class(uint32_t class)
{
    return class == OXM_EXPERIMENTER;
}

/* Columns of HEADERS: Open vSwitch's name, the wire field, class, field
 * number, experimenter id (0 unless the class is 0xffff), and the first
 * OpenFlow version whose OXM the header is (0 for NXM and for the
 * extension classes Open vSwitch gives no version, Ericsson's).  Rows of
 * one wire field are in increasing version order, as Open vSwitch sorts
 * them (nxm_field_by_mf_id() depends on it). */
#define TUN_MD_HDR(H, N) \
    H("NXM_NX_TUN_METADATA" #N, TUN_MD##N, NXM_NX, 40 + N, 0, 0)
#define TUN_MD_HDR8(H, A, B, C, D, E, G, I, J) \
    TUN_MD_HDR(H, A) TUN_MD_HDR(H, B) TUN_MD_HDR(H, C) TUN_MD_HDR(H, D) \
    TUN_MD_HDR(H, E) TUN_MD_HDR(H, G) TUN_MD_HDR(H, I) TUN_MD_HDR(H, J)
#define REG_HDR(H, N) H("NXM_NX_REG" #N, REG##N, NXM_NX, N, 0, 0)
#define XREG_HDR(H, N) \
    H("OXM_OF_PKT_REG" #N, XREG##N, OXM_PKT_REGS, N, 0, 4)
#define XXREG_HDR(H, N) \
    H("NXM_NX_XXREG" #N, XXREG##N, NXM_NX, 111 + N, 0, 0)
#define HEADERS(H)                                                          \
    H("NXM_NX_CONJ_ID", CONJ_ID, NXM_NX, 37, 0, 0)                          \
    H("NXM_OF_IN_PORT", IN_PORT, NXM_OF, 0, 0, 0)                           \
    H("OXM_OF_IN_PORT", IN_PORT_OXM, OXM_BASIC, 0, 0, 3)                    \
    H("NXM_OF_ETH_SRC", ETH_SRC, NXM_OF, 2, 0, 0)                           \
    H("OXM_OF_ETH_SRC", ETH_SRC, OXM_BASIC, 4, 0, 3)                        \
    H("NXM_OF_ETH_DST", ETH_DST, NXM_OF, 1, 0, 0)                           \
    H("OXM_OF_ETH_DST", ETH_DST, OXM_BASIC, 3, 0, 3)                        \
    H("NXM_OF_ETH_TYPE", ETH_TYPE, NXM_OF, 3, 0, 0)                         \
    H("OXM_OF_ETH_TYPE", ETH_TYPE, OXM_BASIC, 5, 0, 3)                      \
    H("NXM_OF_VLAN_TCI", VLAN_TCI, NXM_OF, 4, 0, 0)                         \
    H("OXM_OF_VLAN_VID", VLAN_VID, OXM_BASIC, 6, 0, 3)                      \
    H("OXM_OF_VLAN_PCP", VLAN_PCP, OXM_BASIC, 7, 0, 3)                      \
    H("NXM_OF_IP_SRC", IPV4_SRC, NXM_OF, 7, 0, 0)                           \
    H("OXM_OF_IPV4_SRC", IPV4_SRC, OXM_BASIC, 11, 0, 3)                     \
    H("NXM_OF_IP_DST", IPV4_DST, NXM_OF, 8, 0, 0)                           \
    H("OXM_OF_IPV4_DST", IPV4_DST, OXM_BASIC, 12, 0, 3)                     \
    H("NXM_NX_IPV6_SRC", IPV6_SRC, NXM_NX, 19, 0, 0)                        \
    H("OXM_OF_IPV6_SRC", IPV6_SRC, OXM_BASIC, 26, 0, 3)                     \
    H("NXM_NX_IPV6_DST", IPV6_DST, NXM_NX, 20, 0, 0)                        \
    H("OXM_OF_IPV6_DST", IPV6_DST, OXM_BASIC, 27, 0, 3)                     \
    H("NXM_NX_IPV6_LABEL", IPV6_LABEL, NXM_NX, 27, 0, 0)                    \
    H("OXM_OF_IPV6_FLABEL", IPV6_LABEL, OXM_BASIC, 28, 0, 3)                \
    H("NXM_OF_IP_PROTO", IP_PROTO, NXM_OF, 6, 0, 0)                         \
    H("OXM_OF_IP_PROTO", IP_PROTO, OXM_BASIC, 10, 0, 3)                     \
    H("NXM_OF_IP_TOS", IP_DSCP, NXM_OF, 5, 0, 0)                            \
    H("OXM_OF_IP_DSCP", IP_DSCP_SHIFTED, OXM_BASIC, 8, 0, 3)                \
    H("NXM_NX_IP_ECN", IP_ECN, NXM_NX, 28, 0, 0)                            \
    H("OXM_OF_IP_ECN", IP_ECN, OXM_BASIC, 9, 0, 3)                          \
    H("NXM_NX_IP_TTL", IP_TTL, NXM_NX, 29, 0, 0)                            \
    H("NXM_NX_IP_FRAG", IP_FRAG, NXM_NX, 26, 0, 0)                          \
    H("NXM_OF_ARP_OP", ARP_OP, NXM_OF, 15, 0, 0)                            \
    H("OXM_OF_ARP_OP", ARP_OP, OXM_BASIC, 21, 0, 3)                         \
    H("NXM_OF_ARP_SPA", ARP_SPA, NXM_OF, 16, 0, 0)                          \
    H("OXM_OF_ARP_SPA", ARP_SPA, OXM_BASIC, 22, 0, 3)                       \
    H("NXM_OF_ARP_TPA", ARP_TPA, NXM_OF, 17, 0, 0)                          \
    H("OXM_OF_ARP_TPA", ARP_TPA, OXM_BASIC, 23, 0, 3)                       \
    H("NXM_NX_ARP_SHA", ARP_SHA, NXM_NX, 17, 0, 0)                          \
    H("OXM_OF_ARP_SHA", ARP_SHA, OXM_BASIC, 24, 0, 3)                       \
    H("NXM_NX_ARP_THA", ARP_THA, NXM_NX, 18, 0, 0)                          \
    H("OXM_OF_ARP_THA", ARP_THA, OXM_BASIC, 25, 0, 3)                       \
    H("NXM_OF_TCP_SRC", TCP_SRC, NXM_OF, 9, 0, 0)                           \
    H("OXM_OF_TCP_SRC", TCP_SRC, OXM_BASIC, 13, 0, 3)                       \
    H("NXM_OF_TCP_DST", TCP_DST, NXM_OF, 10, 0, 0)                          \
    H("OXM_OF_TCP_DST", TCP_DST, OXM_BASIC, 14, 0, 3)                       \
    H("NXM_NX_TCP_FLAGS", TCP_FLAGS, NXM_NX, 34, 0, 0)                      \
    H("ONFOXM_ET_TCP_FLAGS", TCP_FLAGS, OXM_EXPERIMENTER, 42,               \
      ONF_EXPERIMENTER, 4)                                                  \
    H("OXM_OF_TCP_FLAGS", TCP_FLAGS, OXM_BASIC, 42, 0, 6)                   \
    H("NXM_OF_UDP_SRC", UDP_SRC, NXM_OF, 11, 0, 0)                          \
    H("OXM_OF_UDP_SRC", UDP_SRC, OXM_BASIC, 15, 0, 3)                       \
    H("NXM_OF_UDP_DST", UDP_DST, NXM_OF, 12, 0, 0)                          \
    H("OXM_OF_UDP_DST", UDP_DST, OXM_BASIC, 16, 0, 3)                       \
    H("OXM_OF_SCTP_SRC", SCTP_SRC, OXM_BASIC, 17, 0, 3)                     \
    H("OXM_OF_SCTP_DST", SCTP_DST, OXM_BASIC, 18, 0, 3)                     \
    H("NXM_OF_ICMP_TYPE", ICMPV4_TYPE, NXM_OF, 13, 0, 0)                    \
    H("OXM_OF_ICMPV4_TYPE", ICMPV4_TYPE, OXM_BASIC, 19, 0, 3)               \
    H("NXM_OF_ICMP_CODE", ICMPV4_CODE, NXM_OF, 14, 0, 0)                    \
    H("OXM_OF_ICMPV4_CODE", ICMPV4_CODE, OXM_BASIC, 20, 0, 3)               \
    H("NXM_NX_ICMPV6_TYPE", ICMPV6_TYPE, NXM_NX, 21, 0, 0)                  \
    H("OXM_OF_ICMPV6_TYPE", ICMPV6_TYPE, OXM_BASIC, 29, 0, 3)               \
    H("NXM_NX_ICMPV6_CODE", ICMPV6_CODE, NXM_NX, 22, 0, 0)                  \
    H("OXM_OF_ICMPV6_CODE", ICMPV6_CODE, OXM_BASIC, 30, 0, 3)               \
    H("NXM_NX_ND_TARGET", ND_TARGET, NXM_NX, 23, 0, 0)                      \
    H("OXM_OF_IPV6_ND_TARGET", ND_TARGET, OXM_BASIC, 31, 0, 3)              \
    H("NXM_NX_ND_SLL", ND_SLL, NXM_NX, 24, 0, 0)                            \
    H("OXM_OF_IPV6_ND_SLL", ND_SLL, OXM_BASIC, 32, 0, 3)                    \
    H("NXM_NX_ND_TLL", ND_TLL, NXM_NX, 25, 0, 0)                            \
    H("OXM_OF_IPV6_ND_TLL", ND_TLL, OXM_BASIC, 33, 0, 3)                    \
    H("ERICOXM_OF_ICMPV6_ND_RESERVED", ND_RESERVED, OXM_ERIC, 1, 0, 0)      \
    H("ERICOXM_OF_ICMPV6_ND_OPTIONS_TYPE", ND_OPTIONS_TYPE, OXM_ERIC, 2,    \
      0, 0)                                                                 \
    H("NXM_NX_TUN_ID", TUN_ID, NXM_NX, 16, 0, 0)                            \
    H("OXM_OF_TUNNEL_ID", TUN_ID, OXM_BASIC, 38, 0, 4)                      \
    H("NXM_NX_TUN_FLAGS", TUN_FLAGS, NXM_NX, 104, 0, 0)                     \
    H("NXM_NX_TUN_IPV4_SRC", TUN_SRC, NXM_NX, 31, 0, 0)                     \
    H("NXM_NX_TUN_IPV4_DST", TUN_DST, NXM_NX, 32, 0, 0)                     \
    H("NXM_NX_TUN_IPV6_SRC", TUN_IPV6_SRC, NXM_NX, 109, 0, 0)               \
    H("NXM_NX_TUN_IPV6_DST", TUN_IPV6_DST, NXM_NX, 110, 0, 0)               \
    H("NXM_NX_TUN_GBP_ID", TUN_GBP_ID, NXM_NX, 38, 0, 0)                    \
    H("NXM_NX_TUN_GBP_FLAGS", TUN_GBP_FLAGS, NXM_NX, 39, 0, 0)              \
    TUN_MD_HDR8(H, 0, 1, 2, 3, 4, 5, 6, 7)                                  \
    TUN_MD_HDR8(H, 8, 9, 10, 11, 12, 13, 14, 15)                            \
    TUN_MD_HDR8(H, 16, 17, 18, 19, 20, 21, 22, 23)                          \
    TUN_MD_HDR8(H, 24, 25, 26, 27, 28, 29, 30, 31)                          \
    TUN_MD_HDR8(H, 32, 33, 34, 35, 36, 37, 38, 39)                          \
    TUN_MD_HDR8(H, 40, 41, 42, 43, 44, 45, 46, 47)                          \
    TUN_MD_HDR8(H, 48, 49, 50, 51, 52, 53, 54, 55)                          \
    TUN_MD_HDR8(H, 56, 57, 58, 59, 60, 61, 62, 63)                          \
    REG_HDR(H, 0) REG_HDR(H, 1) REG_HDR(H, 2) REG_HDR(H, 3)                 \
    REG_HDR(H, 4) REG_HDR(H, 5) REG_HDR(H, 6) REG_HDR(H, 7)                 \
    REG_HDR(H, 8) REG_HDR(H, 9) REG_HDR(H, 10) REG_HDR(H, 11)               \
    REG_HDR(H, 12) REG_HDR(H, 13) REG_HDR(H, 14) REG_HDR(H, 15)             \
    XREG_HDR(H, 0) XREG_HDR(H, 1) XREG_HDR(H, 2) XREG_HDR(H, 3)             \
    XREG_HDR(H, 4) XREG_HDR(H, 5) XREG_HDR(H, 6) XREG_HDR(H, 7)             \
    XXREG_HDR(H, 0) XXREG_HDR(H, 1) XXREG_HDR(H, 2) XXREG_HDR(H, 3)         \
    H("NXM_NX_PKT_MARK", PKT_MARK, NXM_NX, 33, 0, 0)                        \
    H("NXM_NX_CT_STATE", CT_STATE, NXM_NX, 105, 0, 0)                       \
    H("NXM_NX_CT_ZONE", CT_ZONE, NXM_NX, 106, 0, 0)                         \
    H("NXM_NX_CT_MARK", CT_MARK, NXM_NX, 107, 0, 0)                         \
    H("NXM_NX_CT_LABEL", CT_LABEL, NXM_NX, 108, 0, 0)                       \
    H("NXM_NX_CT_NW_PROTO", CT_NW_PROTO, NXM_NX, 119, 0, 0)                 \
    H("NXM_NX_CT_NW_SRC", CT_NW_SRC, NXM_NX, 120, 0, 0)                     \
    H("NXM_NX_CT_NW_DST", CT_NW_DST, NXM_NX, 121, 0, 0)                     \
    H("NXM_NX_CT_IPV6_SRC", CT_IPV6_SRC, NXM_NX, 122, 0, 0)                 \
    H("NXM_NX_CT_IPV6_DST", CT_IPV6_DST, NXM_NX, 123, 0, 0)                 \
    H("NXM_NX_CT_TP_SRC", CT_TP_SRC, NXM_NX, 124, 0, 0)                     \
    H("NXM_NX_CT_TP_DST", CT_TP_DST, NXM_NX, 125, 0, 0)                     \
    H("OXM_OF_METADATA", METADATA, OXM_BASIC, 2, 0, 3)

struct fdp__ofp_field {
    const char *name;           /* Open vSwitch's name: "NXM_OF_TCP_SRC". */
    uint16_t wire;              /* enum wire_id. */
    uint16_t class;
    uint8_t field;              /* 7 bits. */
    uint8_t version;            /* 0 (NXM) or the first OXM version. */
    uint32_t experimenter;
};

static const struct fdp__ofp_field headers[] = {
#define H_ROW(NAME, WIRE, CLASS, FIELD, EXP, VERSION)                       \
    { NAME, WF_##WIRE, CLASS, FIELD, VERSION, EXP },
    HEADERS(H_ROW)
#undef H_ROW
};
#define N_HEADERS (sizeof headers / sizeof headers[0])

/* The first and last header rows of each wire field (its rows are
 * adjacent in HEADERS, so the span is short; header_for() still checks
 * each row's wire field). */
struct header_span {
    uint16_t first;
    uint16_t last;
};

static struct header_span spans[N_WIRE_FIELDS];
static pthread_once_t spans_once = PTHREAD_ONCE_INIT;

static void
spans_init(void)
{
    for (size_t i = N_HEADERS; i-- > 0;) {
        struct header_span *s = &spans[headers[i].wire];
        if (!s->last) {
            s->last = (uint16_t) i;
        }
        s->first = (uint16_t) i;
    }
}

/* The spans, built from the constant table once (pthread_once: any
 * thread may be the first to encode). */
static const struct header_span *
header_spans(void)
{
    pthread_once(&spans_once, spans_init);
    return spans;
}

static const struct wire_field *
wire_of(const struct fdp__ofp_field *h)
{
    return &wire_fields[h->wire];
}

/* The header Open vSwitch writes wire field 'w' with for 'version' (0:
 * NXM): the last of its headers whose version is <= 'version', else its
 * first (nxm_field_by_mf_id()). */
static const struct fdp__ofp_field *
header_for(enum wire_id w, unsigned int version)
{
    const struct header_span *s = &header_spans()[w];
    const struct fdp__ofp_field *best = NULL;

    for (unsigned int i = s->first; i <= s->last; i++) {
        const struct fdp__ofp_field *h = &headers[i];
        if (h->wire != w) {
            continue;
        }
        if (!best || version >= h->version) {
            best = h;
        }
    }
    return best;
}

/* The header's 32-bit form without mask, its length counting the value
 * and (for an experimenter class) the experimenter id. */
static uint32_t
header_bits(const struct fdp__ofp_field *h, unsigned int n_bytes)
{
    unsigned int len = n_bytes + (is_experimenter_class(h->class) ? 4 : 0);
    return FDP_NXM_HEADER(h->class, h->field, 0, len);
}

/* ---------------------------------------------------------------------- */
/* Field rows.                                                              */

const struct fdp__ofp_field *
fdp__ofp_field_by_header(uint32_t header, uint32_t experimenter)
{
    uint16_t class = (uint16_t) (header >> 16);
    uint8_t field = (uint8_t) ((header >> 9) & 0x7f);

    if (!is_experimenter_class(class)) {
        experimenter = 0;
    }
    for (size_t i = 0; i < N_HEADERS; i++) {
        const struct fdp__ofp_field *h = &headers[i];
        if (h->class == class && h->field == field
            && h->experimenter == experimenter) {
            return h;
        }
    }
    return NULL;
}

const struct fdp__ofp_field *
fdp__ofp_field_by_name(const char *name)
{
    for (size_t i = 0; i < N_HEADERS; i++) {
        if (!strcmp(headers[i].name, name)) {
            return &headers[i];
        }
    }
    return NULL;
}

/* The wire fields that stand for key field 'f' when 'oxm' says which
 * encoding: in_port and nw_tos have one wire field for NXM and another
 * for OXM, as Open vSwitch's nx_put_raw() writes them. */
static bool
wire_is_for(enum wire_id w, bool oxm)
{
    switch (w) {
    case WF_IN_PORT:
    case WF_IP_DSCP:
        return !oxm;
    case WF_IN_PORT_OXM:
    case WF_IP_DSCP_SHIFTED:
        return oxm;
    default:
        return true;
    }
}

const struct fdp__ofp_field *
fdp__ofp_field_for_match(enum fdp_field f, enum fdp_ofp_version v,
                         const struct fdp_match *m)
{
    bool oxm = v >= FDP_OFP12;
    enum wire_id any = N_WIRE_FIELDS;

    for (unsigned int w = 0; w < N_WIRE_FIELDS; w++) {
        const struct wire_field *wf = &wire_fields[w];
        if (wf->field != f || wf->conv == CONV_TUN_MD
            || !wire_is_for(w, oxm)) {
            continue;
        }
        if (any == N_WIRE_FIELDS) {
            any = w;
        }
        if (!m || fdp__match_meets(m, wf->prereq)) {
            return header_for(w, oxm ? (unsigned int) v : 0);
        }
    }
    return any == N_WIRE_FIELDS ? NULL
                                : header_for(any, oxm ? (unsigned int) v : 0);
}

const struct fdp__ofp_field *
fdp__ofp_field_for(enum fdp_field f, enum fdp_ofp_version v)
{
    return fdp__ofp_field_for_match(f, v, NULL);
}

enum fdp_field
fdp__ofp_field_id(const struct fdp__ofp_field *h)
{
    return wire_of(h)->conv == CONV_TUN_MD ? FDP_N_FIELDS
                                           : wire_of(h)->field;
}

int
fdp__ofp_field_tun_md_index(const struct fdp__ofp_field *h)
{
    return wire_of(h)->conv == CONV_TUN_MD ? h->field - 40 : -1;
}

const char *
fdp__ofp_field_name(const struct fdp__ofp_field *h)
{
    return h->name;
}

enum fdp__prereq
fdp__ofp_field_prereq(const struct fdp__ofp_field *h)
{
    return wire_of(h)->prereq;
}

uint32_t
fdp__ofp_field_header(const struct fdp__ofp_field *h)
{
    return header_bits(h, fdp__ofp_field_n_bytes(h));
}

uint32_t
fdp__ofp_field_experimenter(const struct fdp__ofp_field *h)
{
    return h->experimenter;
}

unsigned int
fdp__ofp_field_n_bytes(const struct fdp__ofp_field *h)
{
    return wire_of(h)->conv == CONV_TUN_MD ? FDP__TUN_MD_BYTES
                                           : wire_of(h)->n_bytes;
}

unsigned int
fdp__ofp_field_n_bits(const struct fdp__ofp_field *h)
{
    return wire_of(h)->conv == CONV_TUN_MD ? FDP__TUN_MD_BYTES * 8
                                           : wire_of(h)->n_bits;
}

bool
fdp__ofp_field_maskable(const struct fdp__ofp_field *h)
{
    return wire_of(h)->maskable;
}

bool
fdp__ofp_field_writable(const struct fdp__ofp_field *h)
{
    return wire_of(h)->writable;
}

/* ---------------------------------------------------------------------- */
/* Values.                                                                  */

static fdp_u128
get_be(const uint8_t *p, unsigned int n)
{
    fdp_u128 v = 0;

    for (unsigned int i = 0; i < n; i++) {
        v = v << 8 | p[i];
    }
    return v;
}

static void
put_be(fdp_u128 v, unsigned int n, uint8_t *p)
{
    for (unsigned int i = n; i-- > 0;) {
        p[i] = (uint8_t) v;
        v >>= 8;
    }
}

/* OpenFlow 1.1+ port numbers (Open vSwitch's ofputil_port_from_ofp11()):
 * the physical ports below 0xff00 are themselves; the reserved ports
 * 0xffffff00 and up are OpenFlow 1.0's 0xff00 and up. */
#define OFPP11_MAX 0xffffff00u
#define OFPP11_OFFSET 0xffff0000u

static bool
port_from_ofp11(uint32_t port, uint16_t *port16)
{
    if (port < FDP_PORT_MAX) {
        *port16 = (uint16_t) port;
        return true;
    }
    if (port >= OFPP11_MAX) {
        *port16 = (uint16_t) (port - OFPP11_OFFSET);
        return true;
    }
    return false;
}

static uint32_t
port_to_ofp11(uint16_t port)
{
    return port < FDP_PORT_MAX ? port : port + OFPP11_OFFSET;
}

/* The wire's OFPVID_PRESENT bit, vlan_tci's CFI. */
#define OFPVID_PRESENT 0x1000u
#define VLAN_PCP_SHIFT 13

int
fdp__ofp_field_from_wire(const struct fdp__ofp_field *h, const uint8_t *wire,
                         fdp_u128 *value)
{
    const struct wire_field *wf = wire_of(h);
    fdp_u128 v = get_be(wire, wf->n_bytes);
    uint16_t port;

    switch ((enum conv) wf->conv) {
    case CONV_PLAIN:
    case CONV_NARROW:
    case CONV_FRAG:
    case CONV_VLAN_PCP:
        break;
    case CONV_PORT_OXM:
        if (!port_from_ofp11((uint32_t) v, &port)) {
            return FDP_OFPBMC_BAD_VALUE;
        }
        v = port;
        break;
    case CONV_VLAN_VID:
        if (v & FDP_VLAN_PCP_MASK) {
            return FDP_OFPBMC_BAD_VALUE;
        }
        v &= FDP_VLAN_VID_MASK;
        break;
    case CONV_TOS:
        if (v & 3) {
            return FDP_OFPBMC_BAD_VALUE;
        }
        v >>= 2;
        break;
    case CONV_TUN_MD:
        /* 32 bytes do not fit a fdp_u128: the match codec reads these
         * through the TLV map. */
        return FDP_OFPBMC_BAD_FIELD;
    }
    if (v > fdp__field(wf->field)->max) {
        return FDP_OFPBMC_BAD_VALUE;
    }
    *value = v;
    return 0;
}

void
fdp__ofp_field_to_wire(const struct fdp__ofp_field *h, fdp_u128 value,
                       uint8_t *wire)
{
    const struct wire_field *wf = wire_of(h);

    switch ((enum conv) wf->conv) {
    case CONV_PLAIN:
    case CONV_NARROW:
    case CONV_FRAG:
    case CONV_VLAN_PCP:
        break;
    case CONV_PORT_OXM:
        value = port_to_ofp11((uint16_t) value);
        break;
    case CONV_VLAN_VID:
        value = (value & FDP_VLAN_VID_MASK) | OFPVID_PRESENT;
        break;
    case CONV_TOS:
        value = (value & 0x3f) << 2;
        break;
    case CONV_TUN_MD:
        return;
    }
    put_be(value, wf->n_bytes, wire);
}

int
fdp__ofp_mask_from_wire(const struct fdp__ofp_field *h, const uint8_t *wire,
                        fdp_u128 *mask)
{
    const struct wire_field *wf = wire_of(h);
    fdp_u128 m = get_be(wire, wf->n_bytes);
    fdp_u128 wire_ones = fdp__ones(wf->n_bytes * 8u);
    fdp_u128 key_ones = fdp__ones(fdp__field(wf->field)->n_bits);

    if (wf->conv == CONV_TUN_MD) {
        return FDP_OFPBMC_BAD_FIELD;
    }
    if (!wf->maskable) {
        /* Open vSwitch's mf_is_mask_valid(): a field without masks takes
         * all ones or all zeros. */
        if (m != 0 && m != wire_ones) {
            return FDP_OFPBMC_BAD_MASK;
        }
        *mask = m ? key_ones : 0;
        return 0;
    }
    if (wf->conv == CONV_VLAN_VID) {
        m &= FDP_VLAN_VID_MASK;
    }
    *mask = m & key_ones;
    return 0;
}

void
fdp__ofp_mask_to_wire(const struct fdp__ofp_field *h, fdp_u128 mask,
                      uint8_t *wire)
{
    const struct wire_field *wf = wire_of(h);
    fdp_u128 key_ones = fdp__ones(fdp__field(wf->field)->n_bits);

    if (wf->conv == CONV_TUN_MD) {
        return;
    }
    if (!wf->maskable) {
        mask = mask ? fdp__ones(wf->n_bytes * 8u) : 0;
    } else if (wf->conv == CONV_VLAN_VID) {
        mask = mask ? (mask & FDP_VLAN_VID_MASK) | OFPVID_PRESENT : 0;
    } else if (wf->conv != CONV_NARROW && (mask & key_ones) == key_ones) {
        /* An exact match on the whole field is exact on the wire. */
        mask = fdp__ones(wf->n_bytes * 8u);
    }
    put_be(mask, wf->n_bytes, wire);
}

size_t
fdp__ofp_n_fields(void)
{
    return N_HEADERS;
}

const struct fdp__ofp_field *
fdp__ofp_field_at(size_t i)
{
    return i < N_HEADERS ? &headers[i] : NULL;
}

/* ---------------------------------------------------------------------- */
/* NXM and OXM matches: encoding.                                          */

/* NXM_NX_COOKIE: the flow's cookie in an NXT_FLOW_MOD's or NXST_FLOW
 * request's nx_match. */
#define NXM_NX_COOKIE_FIELD 30
#define COOKIE_HEADER FDP_NXM_HEADER(NXM_NX, NXM_NX_COOKIE_FIELD, 0, 8)

struct put_ctx {
    struct fdp__ofpbuf *b;
    const struct fdp_match *m;
    unsigned int version;       /* 0: NXM; else the OXM's version. */
    const struct fdp_tlv_map *tlv;
    struct fdp_key covered;     /* The mask bits the entries express. */
    bool lossy;                 /* Some bit has no wire form. */
};

static bool
all_ones(const uint8_t *p, unsigned int n)
{
    for (unsigned int i = 0; i < n; i++) {
        if (p[i] != 0xff) {
            return false;
        }
    }
    return true;
}

static bool
all_zeros(const uint8_t *p, unsigned int n)
{
    for (unsigned int i = 0; i < n; i++) {
        if (p[i]) {
            return false;
        }
    }
    return true;
}

/* Appends header 'h' for an 'n'-byte value, with the mask if 'mask' is
 * not NULL (hasmask, twice the length). */
static void
put_entry(struct put_ctx *c, const struct fdp__ofp_field *h,
          const uint8_t *value, const uint8_t *mask, unsigned int n)
{
    unsigned int exp_len = is_experimenter_class(h->class) ? 4 : 0;
    unsigned int len = (mask ? 2 * n : n) + exp_len;

    fdp__ofpbuf_put_be32(c->b, FDP_NXM_HEADER(h->class, h->field, mask != NULL,
                                              len));
    if (exp_len) {
        fdp__ofpbuf_put_be32(c->b, h->experimenter);
    }
    fdp__ofpbuf_put(c->b, value, n);
    if (mask) {
        fdp__ofpbuf_put(c->b, mask, n);
    }
}

/* Appends wire field 'w' from the key field it stands for, if the match
 * constrains it (Open vSwitch's nxm_put(): nothing for an all-zero mask,
 * no mask for an all-ones one).  A partial mask on a field whose wire form
 * takes none has no wire form. */
static void
put_field(struct put_ctx *c, enum wire_id w)
{
    const struct wire_field *wf = &wire_fields[w];
    fdp_u128 km = fdp__match_get_mask(c->m, wf->field);

    if (!km) {
        return;
    }
    if (!wf->maskable && km != fdp__ones(fdp__field(wf->field)->n_bits)) {
        c->lossy = true;
        return;
    }

    const struct fdp__ofp_field *h = header_for(w, c->version);
    fdp_u128 kv = fdp__match_get_value(c->m, wf->field);
    fdp_u128 wm = km;
    if (wf->conv == CONV_FRAG && !kv && km == FDP_FRAG_ANY) {
        /* "Not a fragment": the key's canonical mask is the ANY bit alone
         * (a later fragment is a fragment), Open vSwitch's both bits. */
        wm = FDP_FRAG_ANY | FDP_FRAG_LATER;
    }
    uint8_t v[16], mk[16];
    fdp__ofp_field_to_wire(h, kv, v);
    fdp__ofp_mask_to_wire(h, wm, mk);
    put_entry(c, h, v, all_ones(mk, wf->n_bytes) ? NULL : mk, wf->n_bytes);
    fdp__key_or(&c->covered, wf->field, km);
}

/* The 802.1Q tag in OXM (nx_put_raw()): OXM_OF_VLAN_VID from vlan_tci's
 * VID and CFI bits, then OXM_OF_VLAN_PCP, exact, if the VID's value is not
 * zero and some PCP bit is matched.  OXM cannot say the rest (a PCP
 * without a VID, part of a PCP): as Open vSwitch does, those bits are left
 * out, so "vlan_tci=0" (no tag) is sent as OXM_OF_VLAN_VID(0), which
 * decodes as vlan_tci=0x0000/0x1fff, the same packets (an untagged
 * packet's vlan_tci is all zeros). */
static void
put_vlan_oxm(struct put_ctx *c)
{
    uint16_t tci = (uint16_t) fdp__match_get_value(c->m, FDP_F_VLAN_TCI);
    uint16_t mask = (uint16_t) fdp__match_get_mask(c->m, FDP_F_VLAN_TCI);
    uint16_t vid_bits = FDP_VLAN_VID_MASK | FDP_VLAN_CFI;
    uint16_t vid = tci & vid_bits, vid_mask = mask & vid_bits;

    if (vid_mask) {
        const struct fdp__ofp_field *h = header_for(WF_VLAN_VID, c->version);
        uint8_t v[2], mk[2];
        put_be(vid, 2, v);
        put_be(vid_mask, 2, mk);
        put_entry(c, h, v, vid_mask == vid_bits ? NULL : mk, 2);
    }
    if (vid && (mask & FDP_VLAN_PCP_MASK)) {
        const struct fdp__ofp_field *h = header_for(WF_VLAN_PCP, c->version);
        uint8_t v = (uint8_t) (tci >> VLAN_PCP_SHIFT);
        put_entry(c, h, &v, NULL, 1);
    }
    fdp__key_or(&c->covered, FDP_F_VLAN_TCI, 0xffff);
}

/* tun_metadataN, in increasing N (tun_metadata_to_nx_match()): each
 * option of the map whose first slot's presence bit the match requires,
 * with the map's length; masked unless its mask is all ones. */
static void
put_tun_metadata(struct put_ctx *c)
{
    const struct fdp_key *mask = &c->m->mask;
    uint64_t present = (mask->w[FDP__TUN_MD_PRESENT_WORD]
                        >> FDP__TUN_MD_PRESENT_SHIFT) & 0xff;

    if (!present || !c->tlv) {
        return;
    }
    for (unsigned int idx = 0; idx < FDP_TLV_MAP_FIELDS; idx++) {
        unsigned int offset, len;
        if (!fdp__tlv_map_field(c->tlv, idx, &offset, &len)
            || !((present >> (offset / 4)) & 1)
            || offset + len > FDP__TUN_MD_BYTES) {
            continue;
        }
        uint8_t v[FDP__TUN_MD_BYTES], mk[FDP__TUN_MD_BYTES];
        for (unsigned int i = 0; i < len; i++) {
            unsigned int byte = offset + i;
            unsigned int word = FDP__TUN_MD_WORD + byte / 8;
            unsigned int shift = (7 - byte % 8) * 8;
            v[i] = (uint8_t) (c->m->value.w[word] >> shift);
            mk[i] = (uint8_t) (mask->w[word] >> shift);
            c->covered.w[word] |= (uint64_t) 0xff << shift;
        }
        c->covered.w[FDP__TUN_MD_PRESENT_WORD]
            |= (uint64_t) 1 << (FDP__TUN_MD_PRESENT_SHIFT + offset / 4);
        put_entry(c, header_for(WF_TUN_MD0 + idx, 0), v,
                  all_ones(mk, len) ? NULL : mk, len);
    }
}

/* The IPv4 or IPv6 part (nxm_put_ip()). */
static void
put_ip(struct put_ctx *c, int dl_type)
{
    const struct fdp_match *m = c->m;
    bool oxm = c->version != 0;

    if (dl_type == FDP_ETH_TYPE_IP) {
        put_field(c, WF_IPV4_SRC);
        put_field(c, WF_IPV4_DST);
    } else {
        put_field(c, WF_IPV6_SRC);
        put_field(c, WF_IPV6_DST);
    }
    put_field(c, WF_IP_FRAG);
    put_field(c, oxm ? WF_IP_DSCP_SHIFTED : WF_IP_DSCP);
    put_field(c, WF_IP_ECN);
    put_field(c, WF_IP_TTL);
    put_field(c, WF_IPV6_LABEL);

    if (!fdp__match_get_mask(m, FDP_F_NW_PROTO)) {
        return;
    }
    put_field(c, WF_IP_PROTO);

    unsigned int proto = (unsigned int) fdp__match_get_value(m,
                                                             FDP_F_NW_PROTO);
    if (proto == FDP_IPPROTO_TCP) {
        put_field(c, WF_TCP_SRC);
        put_field(c, WF_TCP_DST);
        put_field(c, WF_TCP_FLAGS);
    } else if (proto == FDP_IPPROTO_UDP) {
        put_field(c, WF_UDP_SRC);
        put_field(c, WF_UDP_DST);
    } else if (proto == FDP_IPPROTO_SCTP) {
        put_field(c, WF_SCTP_SRC);
        put_field(c, WF_SCTP_DST);
    } else if (proto == FDP_IPPROTO_ICMP && dl_type == FDP_ETH_TYPE_IP) {
        put_field(c, WF_ICMPV4_TYPE);
        put_field(c, WF_ICMPV4_CODE);
    } else if (proto == FDP_IPPROTO_ICMPV6 && dl_type == FDP_ETH_TYPE_IPV6) {
        put_field(c, WF_ICMPV6_TYPE);
        put_field(c, WF_ICMPV6_CODE);
        /* is_nd() reads the values: type 135 or 136, code 0. */
        fdp_u128 type = fdp__match_get_value(m, FDP_F_ICMP_TYPE);
        if ((type == FDP_ND_SOLICIT || type == FDP_ND_ADVERT)
            && !fdp__match_get_value(m, FDP_F_ICMP_CODE)) {
            put_field(c, WF_ND_RESERVED);
            put_field(c, WF_ND_TARGET);
            put_field(c, WF_ND_OPTIONS_TYPE);
            put_field(c, type == FDP_ND_SOLICIT ? WF_ND_SLL : WF_ND_TLL);
        }
    }
}

/* The whole match, in nx_put_raw()'s order. */
static void
put_match(struct put_ctx *c)
{
    const struct fdp_match *m = c->m;
    bool oxm = c->version != 0;
    int dl_type = (int) fdp__match_get_value(m, FDP_F_DL_TYPE);

    /* Metadata. */
    put_field(c, WF_CONJ_ID);
    put_field(c, oxm ? WF_IN_PORT_OXM : WF_IN_PORT);

    /* Ethernet. */
    put_field(c, WF_ETH_SRC);
    put_field(c, WF_ETH_DST);
    put_field(c, WF_ETH_TYPE);

    /* 802.1Q. */
    if (oxm) {
        put_vlan_oxm(c);
    } else {
        put_field(c, WF_VLAN_TCI);
    }

    /* L3 and L4. */
    if (dl_type == FDP_ETH_TYPE_IP || dl_type == FDP_ETH_TYPE_IPV6) {
        put_ip(c, dl_type);
    } else if (dl_type == FDP_ETH_TYPE_ARP || dl_type == FDP_ETH_TYPE_RARP) {
        put_field(c, WF_ARP_OP);
        put_field(c, WF_ARP_SPA);
        put_field(c, WF_ARP_TPA);
        put_field(c, WF_ARP_SHA);
        put_field(c, WF_ARP_THA);
    }

    /* Tunnel.  The key keeps one pair of address words for both families
     * (key.h): the family bit says which the match means. */
    bool tun_v6 = m->value.w[FDP__TUN_IPV6_WORD] & FDP__TUN_IPV6_BIT;
    put_field(c, WF_TUN_ID);
    put_field(c, WF_TUN_FLAGS);
    if (!tun_v6) {
        put_field(c, WF_TUN_SRC);
        put_field(c, WF_TUN_DST);
    } else {
        put_field(c, WF_TUN_IPV6_SRC);
        put_field(c, WF_TUN_IPV6_DST);
    }
    if (m->mask.w[FDP__TUN_IPV6_WORD] & FDP__TUN_IPV6_BIT) {
        c->covered.w[FDP__TUN_IPV6_WORD] |= FDP__TUN_IPV6_BIT;
    }
    put_field(c, WF_TUN_GBP_ID);
    put_field(c, WF_TUN_GBP_FLAGS);
    put_tun_metadata(c);

    /* Registers: OpenFlow 1.5's OXM has the 64-bit packet registers. */
    if (c->version < FDP_OFP15) {
        for (unsigned int i = 0; i < 16; i++) {
            put_field(c, WF_REG0 + i);
        }
    } else {
        for (unsigned int i = 0; i < 8; i++) {
            put_field(c, WF_XREG0 + i);
        }
    }
    put_field(c, WF_PKT_MARK);

    /* Connection tracking.  The original direction's addresses share
     * storage between the families (key.h): dl_type says which. */
    put_field(c, WF_CT_STATE);
    put_field(c, WF_CT_ZONE);
    put_field(c, WF_CT_MARK);
    put_field(c, WF_CT_LABEL);
    if (dl_type == FDP_ETH_TYPE_IPV6) {
        put_field(c, WF_CT_IPV6_SRC);
        put_field(c, WF_CT_IPV6_DST);
    } else {
        put_field(c, WF_CT_NW_SRC);
        put_field(c, WF_CT_NW_DST);
    }
    if (fdp__match_get_value(m, FDP_F_CT_NW_PROTO)) {
        put_field(c, WF_CT_NW_PROTO);
        put_field(c, WF_CT_TP_SRC);
        put_field(c, WF_CT_TP_DST);
    }

    /* OpenFlow 1.1+ metadata. */
    put_field(c, WF_METADATA);
}

/* Encodes 'm' into 'b' (nothing appended on failure); returns the bytes
 * appended or -1. */
static int
nx_put(struct fdp__ofpbuf *b, const struct fdp_match *m, unsigned int version,
       const struct fdp_tlv_map *tlv, uint64_t cookie, uint64_t cookie_mask)
{
    size_t start = b->size;
    struct put_ctx c = { .b = b, .m = m, .version = version, .tlv = tlv };

    if (fdp__match_has_ranges(m)) {
        return -1;
    }
    memset(&c.covered, 0, sizeof c.covered);
    put_match(&c);
    for (unsigned int i = 0; i < FDP_KEY_WORDS && !c.lossy; i++) {
        if (m->mask.w[i] & ~c.covered.w[i]) {
            c.lossy = true;
        }
    }
    if (!c.lossy && cookie_mask) {
        uint32_t hdr = COOKIE_HEADER;
        bool masked = cookie_mask != UINT64_MAX;
        if (masked) {
            hdr = FDP_NXM_HEADER(NXM_NX, NXM_NX_COOKIE_FIELD, 1, 16);
        }
        fdp__ofpbuf_put_be32(b, hdr);
        fdp__ofpbuf_put_be64(b, cookie & cookie_mask);
        if (masked) {
            fdp__ofpbuf_put_be64(b, cookie_mask);
        }
    }
    if (c.lossy || fdp__ofpbuf_failed(b)) {
        if (!fdp__ofpbuf_failed(b)) {
            b->size = start;
        }
        return -1;
    }
    return (int) (b->size - start);
}

int
fdp__nx_match_put(struct fdp__ofpbuf *b, const struct fdp_match *m, bool oxm,
                  enum fdp_ofp_version v, const struct fdp_tlv_map *tlv)
{
    return nx_put(b, m, oxm ? (unsigned int) v : 0, tlv, 0, 0);
}

int
fdp__nx_match_put_cookie(struct fdp__ofpbuf *b, const struct fdp_match *m,
                         const struct fdp_tlv_map *tlv, uint64_t cookie,
                         uint64_t cookie_mask)
{
    return nx_put(b, m, 0, tlv, cookie, cookie_mask);
}

/* ---------------------------------------------------------------------- */
/* NXM and OXM matches: decoding.                                          */

/* Open vSwitch's prerequisites for one entry against the match decoded so
 * far (mf_are_match_prereqs_ok()): flowdp's fdp__match_meets(), with two
 * things it reads from the values that flowdp's text syntax checks
 * elsewhere: the transport ports need a first fragment or none (a value
 * without FLOW_NW_FRAG_LATER), and OXM_OF_VLAN_PCP needs a VID whose
 * OFPVID_PRESENT bit is set. */
static bool
prereqs_ok(const struct fdp_match *m, enum fdp__prereq pr)
{
    switch (pr) {
    case FDP__P_TCP:
    case FDP__P_UDP:
    case FDP__P_SCTP:
        if (fdp__match_get_value(m, FDP_F_IP_FRAG) & FDP_FRAG_LATER) {
            return false;
        }
        break;
    case FDP__P_VLAN:
        return fdp__match_get_value(m, FDP_F_VLAN_TCI) & FDP_VLAN_CFI;
    default:
        break;
    }
    return fdp__match_meets(m, pr);
}

/* The key bits entry 'w' writes, for the duplicate check: true if 'm'
 * already constrains any of them (Open vSwitch's !mf_is_all_wild()). */
static bool
already_set(const struct fdp_match *m, enum wire_id w)
{
    const struct wire_field *wf = &wire_fields[w];
    fdp_u128 mask = fdp__match_get_mask(m, wf->field);

    switch ((enum conv) wf->conv) {
    case CONV_VLAN_VID:
        mask = fdp__match_get_mask(m, FDP_F_VLAN_TCI)
               & (FDP_VLAN_VID_MASK | FDP_VLAN_CFI);
        break;
    case CONV_VLAN_PCP:
        mask = fdp__match_get_mask(m, FDP_F_VLAN_TCI) & FDP_VLAN_PCP_MASK;
        break;
    case CONV_TUN_MD:
        /* Handled by the caller with the map. */
        return false;
    default:
        break;
    }
    return mask != 0 || fdp__match_has_range(m, wf->field);
}

/* Applies tun_metadata entry 'idx' ('n'-byte value and mask) to 'm'
 * through 'tlv'. */
static int
set_tun_metadata(struct fdp_match *m, const struct fdp_tlv_map *tlv,
                 unsigned int idx, const uint8_t *value, const uint8_t *mask,
                 unsigned int n, bool hasmask)
{
    unsigned int offset, len;

    if (!tlv || !fdp__tlv_map_field(tlv, idx, &offset, &len)
        || offset + len > FDP__TUN_MD_BYTES) {
        return FDP_OFPBMC_BAD_FIELD;
    }
    uint64_t present = (uint64_t) 1 << (FDP__TUN_MD_PRESENT_SHIFT
                                        + offset / 4);
    if (m->mask.w[FDP__TUN_MD_PRESENT_WORD] & present) {
        return FDP_OFPBMC_DUP_FIELD;
    }
    /* The wire value is a number right-aligned in the option's bytes:
     * bytes beyond the option's length must be zero. */
    unsigned int skip = n > len ? n - len : 0;
    if (!all_zeros(value, skip) || !all_zeros(mask, skip)) {
        return FDP_OFPBMC_BAD_VALUE;
    }
    value += skip;
    mask += skip;
    n -= skip;

    m->mask.w[FDP__TUN_MD_PRESENT_WORD] |= present;
    m->value.w[FDP__TUN_MD_PRESENT_WORD] |= present;
    for (unsigned int i = 0; i < len; i++) {
        unsigned int byte = offset + i;
        unsigned int word = FDP__TUN_MD_WORD + byte / 8;
        unsigned int shift = (7 - byte % 8) * 8;
        /* Without a mask the whole option is matched (Open vSwitch's
         * tun_metadata_set_match()), its leading bytes against zero. */
        uint8_t v = 0, mk = hasmask ? 0 : 0xff;
        if (i >= len - n) {
            mk = mask[i - (len - n)];
            v = value[i - (len - n)] & mk;
        }
        m->value.w[word] = (m->value.w[word] & ~((uint64_t) 0xff << shift))
                           | (uint64_t) v << shift;
        m->mask.w[word] = (m->mask.w[word] & ~((uint64_t) 0xff << shift))
                          | (uint64_t) mk << shift;
    }
    return 0;
}

/* Applies a fixed-width entry (its value and mask already checked) to
 * 'm'. */
static int
set_field(struct fdp_match *m, const struct fdp__ofp_field *h,
          const uint8_t *value, const uint8_t *mask)
{
    const struct wire_field *wf = wire_of(h);
    fdp_u128 kv, km;
    int error = fdp__ofp_field_from_wire(h, value, &kv);

    if (!error) {
        error = fdp__ofp_mask_from_wire(h, mask, &km);
    }
    if (error) {
        return error;
    }

    uint16_t tci = (uint16_t) fdp__match_get_value(m, FDP_F_VLAN_TCI);
    uint16_t tci_mask = (uint16_t) fdp__match_get_mask(m, FDP_F_VLAN_TCI);
    switch ((enum conv) wf->conv) {
    case CONV_VLAN_VID: {
        /* match_set_vlan_vid_masked(): the VID and CFI bits, keeping a
         * PCP already matched. */
        uint16_t bits = FDP_VLAN_VID_MASK | FDP_VLAN_CFI;
        uint16_t vid = (uint16_t) get_be(value, 2) & bits;
        uint16_t vmask = (uint16_t) get_be(mask, 2) & bits;
        tci = (uint16_t) ((tci & ~bits) | (vid & vmask));
        tci_mask = (uint16_t) ((tci_mask & FDP_VLAN_PCP_MASK) | vmask);
        return fdp__match_set_masked(m, FDP_F_VLAN_TCI, tci & tci_mask,
                                     tci_mask) ? FDP_OFPBMC_BAD_VALUE : 0;
    }
    case CONV_VLAN_PCP:
        /* match_set_dl_vlan_pcp(): the PCP, and the tag it implies. */
        if (!km) {
            return 0;
        }
        tci = (uint16_t) ((tci & ~FDP_VLAN_PCP_MASK)
                          | (kv << VLAN_PCP_SHIFT) | FDP_VLAN_CFI);
        tci_mask |= FDP_VLAN_PCP_MASK | FDP_VLAN_CFI;
        return fdp__match_set_masked(m, FDP_F_VLAN_TCI, tci & tci_mask,
                                     tci_mask) ? FDP_OFPBMC_BAD_VALUE : 0;
    default:
        break;
    }

    if (!km) {
        return 0;
    }
    if (wf->conv == CONV_FRAG && !(kv & km) && (km & FDP_FRAG_ANY)) {
        /* "Not a fragment" as flowdp's parser keeps it (put_field()). */
        km = FDP_FRAG_ANY;
    }
    /* The tunnel addresses share storage between the families: one
     * family per match (lib/field.h, FDP__TUN_IPV6_BIT). */
    if (fdp__field_is_tun_addr(wf->field)
        && (m->mask.w[FDP__TUN_IPV6_WORD] & FDP__TUN_IPV6_BIT)
        && !(m->value.w[FDP__TUN_IPV6_WORD] & FDP__TUN_IPV6_BIT)
           != !fdp__field_is_tun_ipv6(wf->field)) {
        return FDP_OFPBMC_BAD_VALUE;
    }
    return fdp__match_set_masked(m, wf->field, kv & km, km)
           ? FDP_OFPBMC_BAD_VALUE : 0;
}

/* One entry at 'r' (nx_pull_entry__() and nx_pull_raw()'s checks, in
 * their order). */
static int
pull_entry(struct fdp__ofp_reader *r, const struct fdp_tlv_map *tlv,
           struct fdp_match *m, uint64_t *cookie, uint64_t *cookie_mask)
{
    const uint8_t *p = fdp__ofp_pull(r, 4);
    if (!p) {
        return FDP_OFPBMC_BAD_LEN;
    }
    uint32_t header = fdp__ofp_get_be32(p);
    uint16_t class = (uint16_t) (header >> 16);
    bool hasmask = (header >> 8) & 1;
    unsigned int length = header & 0xff;
    unsigned int exp_len = is_experimenter_class(class) ? 4 : 0;
    uint32_t experimenter = 0;

    if (exp_len) {
        if (r->left < 4) {
            return FDP_OFPBMC_BAD_LEN;
        }
        experimenter = fdp__ofp_get_be32(r->p);
    }
    if (length < exp_len) {
        return FDP_OFPBMC_BAD_LEN;
    }
    fdp__ofp_pull(r, exp_len);

    /* The header names a field only with the field's length (twice it
     * with a mask); tun_metadataN takes any. */
    const struct fdp__ofp_field *h = fdp__ofp_field_by_header(header,
                                                              experimenter);
    unsigned int payload_len = length - exp_len;
    unsigned int width = hasmask ? payload_len / 2 : payload_len;
    bool is_cookie = !exp_len && (header & 0xfffffe00u)
                                 == (COOKIE_HEADER & 0xfffffe00u);
    if (h && wire_of(h)->conv != CONV_TUN_MD
        && width != wire_of(h)->n_bytes) {
        h = NULL;
    }
    if (is_cookie && (width != 8 || !cookie)) {
        is_cookie = false;
    }

    const uint8_t *payload = fdp__ofp_pull(r, payload_len);
    if (!payload) {
        return FDP_OFPBMC_BAD_LEN;
    }
    if (hasmask) {
        for (unsigned int i = 0; i < width; i++) {
            if (payload[i] & ~payload[width + i]) {
                return FDP_OFPBMC_BAD_WILDCARDS;
            }
        }
    }

    if (is_cookie) {
        if (*cookie_mask) {
            return FDP_OFPBMC_DUP_FIELD;
        }
        *cookie = fdp__ofp_get_be64(payload);
        *cookie_mask = hasmask ? fdp__ofp_get_be64(payload + 8) : UINT64_MAX;
        return 0;
    }
    if (!h) {
        return FDP_OFPBMC_BAD_FIELD;
    }

    const struct wire_field *wf = wire_of(h);
    uint8_t ones[128];
    const uint8_t *mask = payload + width;
    if (!hasmask) {
        memset(ones, 0xff, sizeof ones);
        mask = ones;
    }
    if (wf->conv == CONV_TUN_MD) {
        if (width > sizeof ones) {
            /* Open vSwitch's tun_metadata fields are at most 124 bytes. */
            return FDP_OFPBMC_BAD_FIELD;
        }
        if (!prereqs_ok(m, wf->prereq)) {
            return FDP_OFPBMC_BAD_PREREQ;
        }
        return set_tun_metadata(m, tlv, (unsigned int) (h->field - 40),
                                payload, mask, width, hasmask);
    }

    /* mf_is_mask_valid(), then mf_is_value_valid(). */
    fdp_u128 kv, km;
    int error = fdp__ofp_mask_from_wire(h, mask, &km);
    if (!error) {
        error = fdp__ofp_field_from_wire(h, payload, &kv);
    }
    if (error) {
        return error;
    }
    if (!prereqs_ok(m, wf->prereq)) {
        return FDP_OFPBMC_BAD_PREREQ;
    }
    if (already_set(m, h->wire)) {
        return FDP_OFPBMC_DUP_FIELD;
    }
    return set_field(m, h, payload, mask);
}

static int
nx_pull(struct fdp__ofp_reader *r, size_t len, const struct fdp_tlv_map *tlv,
        struct fdp_match *m, uint64_t *cookie, uint64_t *cookie_mask)
{
    struct fdp__ofp_reader sub;

    if (cookie) {
        *cookie = *cookie_mask = 0;
    }
    if (!len) {
        return 0;
    }
    if (!fdp__ofp_pull_reader(r, len, &sub)) {
        return FDP_OFPBMC_BAD_LEN;
    }
    while (sub.left) {
        int error = pull_entry(&sub, tlv, m, cookie, cookie_mask);
        if (error) {
            return error;
        }
    }
    return 0;
}

int
fdp__nx_match_pull(struct fdp__ofp_reader *r, size_t len,
                   const struct fdp_tlv_map *tlv, struct fdp_match *m)
{
    return nx_pull(r, len, tlv, m, NULL, NULL);
}

int
fdp__nx_match_pull_cookie(struct fdp__ofp_reader *r, size_t len,
                          const struct fdp_tlv_map *tlv, struct fdp_match *m,
                          uint64_t *cookie, uint64_t *cookie_mask)
{
    return nx_pull(r, len, tlv, m, cookie, cookie_mask);
}

/* ---------------------------------------------------------------------- */
/* OpenFlow 1.1+'s struct ofp_match (OFPMT_OXM).                           */

#define OFPMT_STANDARD 0
#define OFPMT_OXM 1
#define OFP11_MATCH_HEADER_LEN 4

int
fdp__ofp11_match_pull(struct fdp__ofp_reader *r,
                      const struct fdp_tlv_map *tlv, struct fdp_match *m)
{
    /* oxm_pull_match__(): the header's length counts the 4-byte header
     * and the entries, not the padding to 8 that follows. */
    if (r->left < OFP11_MATCH_HEADER_LEN) {
        return FDP_OFPBMC_BAD_LEN;
    }
    uint16_t type = fdp__ofp_get_be16(r->p);
    uint16_t length = fdp__ofp_get_be16(r->p + 2);
    if (length < OFP11_MATCH_HEADER_LEN) {
        return FDP_OFPBMC_BAD_LEN;
    }
    if (type != OFPMT_OXM) {
        return FDP_OFPBMC_BAD_TYPE;
    }

    size_t padded = ((size_t) length + 7) / 8 * 8;
    struct fdp__ofp_reader whole;
    if (!fdp__ofp_pull_reader(r, padded, &whole)) {
        return FDP_OFPBMC_BAD_LEN;
    }
    fdp__ofp_pull(&whole, OFP11_MATCH_HEADER_LEN);
    return nx_pull(&whole, length - OFP11_MATCH_HEADER_LEN, tlv, m, NULL,
                   NULL);
}

int
fdp__ofp11_match_put(struct fdp__ofpbuf *b, const struct fdp_match *m,
                     enum fdp_ofp_version v, const struct fdp_tlv_map *tlv)
{
    size_t start = b->size;

    fdp__ofpbuf_put_be16(b, OFPMT_OXM);
    fdp__ofpbuf_put_be16(b, 0);
    int n = nx_put(b, m, (unsigned int) v, tlv, 0, 0);
    if (n < 0 || fdp__ofpbuf_failed(b)) {
        if (!fdp__ofpbuf_failed(b)) {
            b->size = start;
        }
        return -1;
    }
    fdp__ofp_set_be16(b->data + start + 2,
                      (uint16_t) (OFP11_MATCH_HEADER_LEN + n));
    fdp__ofpbuf_pad(b, start, 8);
    return fdp__ofpbuf_failed(b) ? -1 : (int) (b->size - start);
}

/* ---------------------------------------------------------------------- */
/* OpenFlow 1.0's struct ofp_match.                                        */

/* The wildcard bits (OpenFlow 1.0, "ofp_flow_wildcards"). */
enum {
    OFPFW10_IN_PORT = 1 << 0,
    OFPFW10_DL_VLAN = 1 << 1,
    OFPFW10_DL_SRC = 1 << 2,
    OFPFW10_DL_DST = 1 << 3,
    OFPFW10_DL_TYPE = 1 << 4,
    OFPFW10_NW_PROTO = 1 << 5,
    OFPFW10_TP_SRC = 1 << 6,
    OFPFW10_TP_DST = 1 << 7,
    OFPFW10_NW_SRC_SHIFT = 8,   /* 6 bits: how many low bits of nw_src */
    OFPFW10_NW_DST_SHIFT = 14,  /* and nw_dst are wildcarded, 32+ all. */
    OFPFW10_DL_VLAN_PCP = 1 << 20,
    OFPFW10_NW_TOS = 1 << 21,
    OFPFW10_ALL = (1 << 22) - 1,
};

/* dl_vlan's value for "no 802.1Q tag". */
#define OFP10_VLAN_NONE 0xffff

/* The byte offsets of struct ofp10_match's members. */
enum {
    OF10_WILDCARDS = 0,
    OF10_IN_PORT = 4,
    OF10_DL_SRC = 6,
    OF10_DL_DST = 12,
    OF10_DL_VLAN = 18,
    OF10_DL_VLAN_PCP = 20,
    OF10_DL_TYPE = 22,
    OF10_NW_TOS = 24,
    OF10_NW_PROTO = 25,
    OF10_NW_SRC = 28,
    OF10_NW_DST = 32,
    OF10_TP_SRC = 36,
    OF10_TP_DST = 38,
};
static_assert(OF10_TP_DST + 2 == FDP_OFP10_MATCH_LEN,
              "ofp10_match is 40 bytes, tp_dst last");

/* The netmask of a 6-bit wildcard count (ofputil_wcbits_to_netmask()). */
static uint32_t
wcbits_to_netmask(unsigned int wcbits)
{
    wcbits &= 0x3f;
    return wcbits < 32 ? ~(uint32_t) 0 << wcbits : 0;
}

/* The wildcard count of a CIDR netmask, or -1 if it is not one. */
static int
netmask_to_wcbits(uint32_t mask)
{
    uint32_t host = ~mask;

    if (host & (host + 1)) {
        return -1;
    }
    return host == UINT32_MAX ? 32 : __builtin_popcount(host);
}

static void
set_exact(struct fdp_match *m, enum fdp_field f, fdp_u128 v)
{
    fdp__match_set_masked(m, f, v, fdp__ones(fdp__field(f)->n_bits));
}

int
fdp__ofp10_match_decode(const uint8_t wire[FDP_OFP10_MATCH_LEN],
                        struct fdp_match *m)
{
    uint32_t wc = fdp__ofp_get_be32(wire + OF10_WILDCARDS) & OFPFW10_ALL;
    uint16_t dl_type = fdp__ofp_get_be16(wire + OF10_DL_TYPE);
    uint8_t nw_proto = wire[OF10_NW_PROTO];

    /* ofputil_normalize_match(): the fields a match may hold follow from
     * its dl_type and nw_proto values (zero when wildcarded); the others
     * are dropped, as ovs-vswitchd drops them from a flow mod. */
    bool dl_type_set = !(wc & OFPFW10_DL_TYPE);
    bool proto_set = !(wc & OFPFW10_NW_PROTO);
    unsigned int type = dl_type_set ? dl_type : 0;
    unsigned int proto = proto_set ? nw_proto : 0;
    bool ip = type == FDP_ETH_TYPE_IP, ipv6 = type == FDP_ETH_TYPE_IPV6;
    bool arp = type == FDP_ETH_TYPE_ARP || type == FDP_ETH_TYPE_RARP;
    bool may_nw_addr = ip || arp;
    bool may_proto = ip || ipv6 || arp;
    bool may_tos = ip || ipv6;
    bool may_tp = ((ip || ipv6) && (proto == FDP_IPPROTO_TCP
                                    || proto == FDP_IPPROTO_UDP
                                    || proto == FDP_IPPROTO_SCTP))
                  || (ip && proto == FDP_IPPROTO_ICMP)
                  || (ipv6 && proto == FDP_IPPROTO_ICMPV6);

    if (!(wc & OFPFW10_IN_PORT)) {
        set_exact(m, FDP_F_IN_PORT, fdp__ofp_get_be16(wire + OF10_IN_PORT));
    }
    if (!(wc & OFPFW10_DL_SRC)) {
        set_exact(m, FDP_F_DL_SRC, get_be(wire + OF10_DL_SRC, 6));
    }
    if (!(wc & OFPFW10_DL_DST)) {
        set_exact(m, FDP_F_DL_DST, get_be(wire + OF10_DL_DST, 6));
    }

    /* The VLAN: dl_vlan 0xffff matches untagged packets (whatever the PCP
     * says, as older Open vSwitch did); otherwise the VID and the PCP each
     * imply a tag. */
    uint16_t dl_vlan = fdp__ofp_get_be16(wire + OF10_DL_VLAN);
    if (!(wc & OFPFW10_DL_VLAN) && dl_vlan == OFP10_VLAN_NONE) {
        fdp__match_set_masked(m, FDP_F_VLAN_TCI, 0, 0xffff);
    } else {
        uint16_t mask = 0;
        if (!(wc & OFPFW10_DL_VLAN_PCP)) {
            mask |= FDP_VLAN_PCP_MASK | FDP_VLAN_CFI;
        }
        if (!(wc & OFPFW10_DL_VLAN)) {
            mask |= FDP_VLAN_VID_MASK | FDP_VLAN_CFI;
        }
        uint16_t tci = (uint16_t) ((dl_vlan & FDP_VLAN_VID_MASK)
                                   | ((wire[OF10_DL_VLAN_PCP]
                                       << VLAN_PCP_SHIFT)
                                      & FDP_VLAN_PCP_MASK)
                                   | FDP_VLAN_CFI);
        if (mask) {
            fdp__match_set_masked(m, FDP_F_VLAN_TCI, tci & mask, mask);
        }
    }

    if (dl_type_set) {
        set_exact(m, FDP_F_DL_TYPE, dl_type);
    }
    if (may_nw_addr) {
        uint32_t src_mask = wcbits_to_netmask(wc >> OFPFW10_NW_SRC_SHIFT);
        uint32_t dst_mask = wcbits_to_netmask(wc >> OFPFW10_NW_DST_SHIFT);
        fdp__match_set_masked(m, FDP_F_NW_SRC,
                              fdp__ofp_get_be32(wire + OF10_NW_SRC)
                              & src_mask, src_mask);
        fdp__match_set_masked(m, FDP_F_NW_DST,
                              fdp__ofp_get_be32(wire + OF10_NW_DST)
                              & dst_mask, dst_mask);
    }
    if (may_tos && !(wc & OFPFW10_NW_TOS)) {
        set_exact(m, FDP_F_NW_TOS, wire[OF10_NW_TOS] >> 2);
    }
    if (may_proto && proto_set) {
        /* nw_proto's byte, the ARP opcode's too (key.h). */
        set_exact(m, FDP_F_NW_PROTO, nw_proto);
    }
    if (may_tp) {
        /* tp_src and tp_dst's storage, the ICMP type and code's too. */
        if (!(wc & OFPFW10_TP_SRC)) {
            set_exact(m, FDP_F_TP_SRC, fdp__ofp_get_be16(wire + OF10_TP_SRC));
        }
        if (!(wc & OFPFW10_TP_DST)) {
            set_exact(m, FDP_F_TP_DST, fdp__ofp_get_be16(wire + OF10_TP_DST));
        }
    }
    return 0;
}

/* True if the match's mask on 'f' is all of it or none of it; sets
 * '*matched' to which. */
static bool
exact_or_wild(const struct fdp_match *m, enum fdp_field f, bool *matched)
{
    fdp_u128 mask = fdp__match_get_mask(m, f);

    *matched = mask != 0;
    return !mask || mask == fdp__ones(fdp__field(f)->n_bits);
}

int
fdp__ofp10_match_encode(const struct fdp_match *m,
                        uint8_t wire[FDP_OFP10_MATCH_LEN])
{
    static const enum fdp_field whole[] = {
        FDP_F_IN_PORT, FDP_F_DL_SRC, FDP_F_DL_DST, FDP_F_DL_TYPE,
        FDP_F_NW_TOS, FDP_F_NW_PROTO, FDP_F_TP_SRC, FDP_F_TP_DST,
    };
    static const uint32_t whole_wc[] = {
        OFPFW10_IN_PORT, OFPFW10_DL_SRC, OFPFW10_DL_DST, OFPFW10_DL_TYPE,
        OFPFW10_NW_TOS, OFPFW10_NW_PROTO, OFPFW10_TP_SRC, OFPFW10_TP_DST,
    };
    struct fdp_key covered;
    uint32_t wc = 0;

    if (fdp__match_has_ranges(m)) {
        return -1;
    }
    memset(&covered, 0, sizeof covered);
    memset(wire, 0, FDP_OFP10_MATCH_LEN);

    /* The fields OpenFlow 1.0 has whole, each matched or wildcarded. */
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        bool matched;
        if (!exact_or_wild(m, whole[i], &matched)) {
            return -1;
        }
        if (matched) {
            fdp__key_or(&covered, whole[i], fdp__match_get_mask(m, whole[i]));
        } else {
            wc |= whole_wc[i];
        }
    }

    /* The addresses, as CIDR prefixes. */
    int src_bits = netmask_to_wcbits((uint32_t)
                                     fdp__match_get_mask(m, FDP_F_NW_SRC));
    int dst_bits = netmask_to_wcbits((uint32_t)
                                     fdp__match_get_mask(m, FDP_F_NW_DST));
    if (src_bits < 0 || dst_bits < 0) {
        return -1;
    }
    wc |= (uint32_t) src_bits << OFPFW10_NW_SRC_SHIFT;
    wc |= (uint32_t) dst_bits << OFPFW10_NW_DST_SHIFT;
    fdp__key_or(&covered, FDP_F_NW_SRC, fdp__match_get_mask(m, FDP_F_NW_SRC));
    fdp__key_or(&covered, FDP_F_NW_DST, fdp__match_get_mask(m, FDP_F_NW_DST));

    /* The VLAN (ofputil_match_to_ofp10_match()): no tag, or a tag with a
     * whole VID, a whole PCP or both.  Other vlan_tci masks have no
     * OpenFlow 1.0 form. */
    uint16_t tci = (uint16_t) fdp__match_get_value(m, FDP_F_VLAN_TCI);
    uint16_t tci_mask = (uint16_t) fdp__match_get_mask(m, FDP_F_VLAN_TCI);
    uint16_t dl_vlan = 0;
    uint8_t pcp = 0;
    if (!tci_mask) {
        wc |= OFPFW10_DL_VLAN | OFPFW10_DL_VLAN_PCP;
    } else if (tci_mask == 0xffff && !(tci & FDP_VLAN_CFI)) {
        /* An exact vlan_tci without the tag bit: "no tag", as Open
         * vSwitch writes it (only the all-zero value, which an untagged
         * packet has, matches any packet). */
        dl_vlan = OFP10_VLAN_NONE;
    } else {
        uint16_t vid_part = tci_mask & FDP_VLAN_VID_MASK;
        uint16_t pcp_part = tci_mask & FDP_VLAN_PCP_MASK;
        if (!(tci & FDP_VLAN_CFI)
            || (vid_part && vid_part != FDP_VLAN_VID_MASK)
            || (pcp_part && pcp_part != FDP_VLAN_PCP_MASK)
            || (!vid_part && !pcp_part)) {
            return -1;
        }
        if (vid_part) {
            dl_vlan = tci & FDP_VLAN_VID_MASK;
        } else {
            wc |= OFPFW10_DL_VLAN;
        }
        if (pcp_part) {
            pcp = (uint8_t) (tci >> VLAN_PCP_SHIFT);
        } else {
            wc |= OFPFW10_DL_VLAN_PCP;
        }
    }
    fdp__key_or(&covered, FDP_F_VLAN_TCI, tci_mask);

    for (unsigned int i = 0; i < FDP_KEY_WORDS; i++) {
        if (m->mask.w[i] & ~covered.w[i]) {
            return -1;
        }
    }

    fdp__ofp_set_be32(wire + OF10_WILDCARDS, wc);
    fdp__ofp_set_be16(wire + OF10_IN_PORT,
                      (uint16_t) fdp__match_get_value(m, FDP_F_IN_PORT));
    put_be(fdp__match_get_value(m, FDP_F_DL_SRC), 6, wire + OF10_DL_SRC);
    put_be(fdp__match_get_value(m, FDP_F_DL_DST), 6, wire + OF10_DL_DST);
    fdp__ofp_set_be16(wire + OF10_DL_VLAN, dl_vlan);
    wire[OF10_DL_VLAN_PCP] = pcp;
    fdp__ofp_set_be16(wire + OF10_DL_TYPE,
                      (uint16_t) fdp__match_get_value(m, FDP_F_DL_TYPE));
    wire[OF10_NW_TOS] = (uint8_t) (fdp__match_get_value(m, FDP_F_NW_TOS)
                                   << 2);
    wire[OF10_NW_PROTO] = (uint8_t) fdp__match_get_value(m, FDP_F_NW_PROTO);
    fdp__ofp_set_be32(wire + OF10_NW_SRC,
                      (uint32_t) fdp__match_get_value(m, FDP_F_NW_SRC));
    fdp__ofp_set_be32(wire + OF10_NW_DST,
                      (uint32_t) fdp__match_get_value(m, FDP_F_NW_DST));
    fdp__ofp_set_be16(wire + OF10_TP_SRC,
                      (uint16_t) fdp__match_get_value(m, FDP_F_TP_SRC));
    fdp__ofp_set_be16(wire + OF10_TP_DST,
                      (uint16_t) fdp__match_get_value(m, FDP_F_TP_DST));
    return 0;
}
