/*
 * Field metadata: the one table that drives parsing, formatting, masking
 * and validation of every field (lib/key.c).
 */
#ifndef FDP_FIELD_H
#define FDP_FIELD_H 1

#include <stdbool.h>
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include <flowdp/key.h>

typedef unsigned __int128 fdp_u128;

/* What a field requires of the rest of the match, as Open vSwitch's
 * prerequisites: dl_type (and nw_proto) must be matched exactly to one of
 * the listed values. */
enum fdp__prereq {
    FDP__P_NONE,
    FDP__P_IP_ANY,      /* dl_type 0x0800 or 0x86dd */
    FDP__P_IPV4,        /* dl_type 0x0800 */
    FDP__P_IPV6,        /* dl_type 0x86dd */
    FDP__P_ARP,         /* dl_type 0x0806 or 0x8035 */
    FDP__P_L4,          /* IP, nw_proto 6, 17 or 132 */
    FDP__P_TCP,         /* IP, nw_proto 6 */
    FDP__P_ICMP_ANY,    /* IPv4 with nw_proto 1, or IPv6 with 58 */
    FDP__P_VLAN,        /* nothing: dl_vlan and dl_vlan_pcp imply a tag */
    FDP__P_UDP,         /* IP, nw_proto 17 */
    FDP__P_SCTP,        /* IP, nw_proto 132 */
    FDP__P_ICMPV4,      /* IPv4, nw_proto 1 */
    FDP__P_ICMPV6,      /* IPv6, nw_proto 58 */
    FDP__P_CT,          /* ct_state says the tracker found a connection:
                         * Open vSwitch's "CT" (is_ct_valid()): one of
                         * +new +est +rel +rpl +snat +dnat, or +trk-inv */
    FDP__P_CT_IPV4,     /* CT and dl_type 0x0800 */
    FDP__P_CT_IPV6,     /* CT and dl_type 0x86dd */
    FDP__P_CT_L4,       /* CT and ct_nw_proto exact and not 0 */
    FDP__P_ND,          /* ICMPv6, icmp_type exactly 135 or 136 and
                         * icmp_code 0 (or not matched), as Open vSwitch's
                         * is_nd() reads a match's values */
    FDP__P_ND_SOLICIT,  /* ND with icmp_type 135 */
    FDP__P_ND_ADVERT,   /* ND with icmp_type 136 */
};

/* How a value is written and read. */
enum fdp__syntax {
    FDP__S_DEC,         /* Decimal (hex accepted); printed decimal. */
    FDP__S_HEX,         /* Printed 0x%x ("pkt_mark=0x5"; 0 as "0"), up
                         * to 128 bits (ct_label); in decimal, at most
                         * 64 bits are read, as ovs-ofctl reads them. */
    FDP__S_HEX4,        /* Printed 0x%04x (dl_type, vlan_tci). */
    FDP__S_HEX5,        /* Printed 0x%05x (ipv6_label). */
    FDP__S_PORT,        /* OpenFlow port: number or LOCAL, CONTROLLER... */
    FDP__S_MAC,         /* xx:xx:xx:xx:xx:xx */
    FDP__S_IPV4,        /* dotted quad; masks as /N or dotted */
    FDP__S_IPV6,        /* RFC 4291 text; masks as /N or address */
    FDP__S_TOS,         /* DSCP as the TOS byte: low 2 bits zero */
    FDP__S_FRAG,        /* no, yes, first, later, not_later */
    FDP__S_TCP_FLAGS,   /* number[/mask] or +syn-ack... */
    FDP__S_CT_STATE,    /* number[/mask] or +trk+est..., as tcp_flags */
    FDP__S_VLAN_VID,    /* 0..4095, or 0xffff for "no tag" */
    FDP__S_TUN_FLAGS,   /* number[/mask] or +oam/-oam, printed signed */
};

enum {
    FDP__F_MASKABLE = 1 << 0,   /* Accepts value/mask. */
    FDP__F_RANGE = 1 << 1,      /* Accepts LO-HI. */
};

struct fdp__field {
    const char *name;
    const char *aliases[4];     /* NULL-terminated. */
    uint8_t word;               /* Key word (the high word of 128 bits). */
    uint8_t shift;              /* Position of the field's LSB in 'word'. */
    uint8_t n_bits;             /* Width in the key. */
    uint8_t flags;              /* FDP__F_*. */
    enum fdp__prereq prereq;
    enum fdp__syntax syntax;
    fdp_u128 max;               /* Largest value. */
    /* For a field without FDP__F_MASKABLE, the one mask ovs-ofctl still
     * accepts, meaning "exact": all ones over the field's OpenFlow width
     * in bytes (nw_ecn=1/0xff, arp_op=2/0xffff).  0: no mask at all. */
    fdp_u128 exact_mask;
    uint64_t word_mask;         /* FDP__MASK(): the field's bits in its
                                 * word (all ones for a 128-bit field). */
};

/* The field table, once.  Everything about where a field lives comes from
 * this list: the rows of fdp__fields[] (lib/key.c), the compile-time
 * position constants below (which the packet parser, datapath/extract.c,
 * uses to build whole key words), and the static_asserts in lib/key.c that
 * check the layout.  Columns:
 *
 *   ID       the enum fdp_field constant without FDP_F_ (the public enum in
 *            flowdp/key.h is API; the list must follow its order, which a
 *            static_assert checks);
 *   NAME     the Open vSwitch name;
 *   WORD, SHIFT, BITS  where the field lives (a 128-bit field takes words
 *            WORD and WORD + 1, high half first, SHIFT 0);
 *   FL       flags: MR (masks and ranges), M, R or 0;
 *   BASE     the field whose storage this one shares (itself if none): the
 *            aliases of key.h's comment, which are the only fields allowed
 *            to overlap, and each must lie inside its base;
 *   PREREQ, SYNTAX  FDP__P_ and FDP__S_ without the prefix;
 *   MAX, EXACT  as struct fdp__field's max and exact_mask;
 *   ...      the other names, NULL-terminated.
 *
 * Adding a field: add its FDP_F_ constant to key.h, a row here at the same
 * place, and nothing else. */
#define FDP__FIELDS(F)                                                      \
    F(IN_PORT, "in_port", 2, 48, 16, R, IN_PORT, NONE, PORT, 0xffff, 0,     \
      NULL)                                                                 \
    F(PKT_MARK, "pkt_mark", 2, 0, 32, MR, PKT_MARK, NONE, HEX,              \
      0xffffffffu, 0, NULL)                                                 \
    F(DL_SRC, "dl_src", 3, 16, 48, MR, DL_SRC, NONE, MAC,                   \
      0xffffffffffffull, 0, "eth_src", NULL)                                \
    F(DL_DST, "dl_dst", 4, 16, 48, MR, DL_DST, NONE, MAC,                   \
      0xffffffffffffull, 0, "eth_dst", NULL)                                \
    F(DL_TYPE, "dl_type", 1, 16, 16, R, DL_TYPE, NONE, HEX4, 0xffff,        \
      0xffff, "eth_type", NULL)                                             \
    F(VLAN_TCI, "vlan_tci", 2, 32, 16, MR, VLAN_TCI, NONE, HEX4, 0xffff, 0, \
      NULL)                                                                 \
    F(DL_VLAN, "dl_vlan", 2, 32, 12, R, VLAN_TCI, VLAN, VLAN_VID, 0xfff,    \
      0xffff, NULL)                                                         \
    F(DL_VLAN_PCP, "dl_vlan_pcp", 2, 45, 3, R, VLAN_TCI, VLAN, DEC, 7,      \
      0xff, "vlan_pcp", NULL)                                               \
    F(NW_SRC, "nw_src", 0, 32, 32, MR, NW_SRC, IPV4, IPV4, 0xffffffffu, 0,  \
      "ip_src", NULL)                                                       \
    F(NW_DST, "nw_dst", 0, 0, 32, MR, NW_DST, IPV4, IPV4, 0xffffffffu, 0,   \
      "ip_dst", NULL)                                                       \
    F(IPV6_SRC, "ipv6_src", 6, 0, 128, MR, IPV6_SRC, IPV6, IPV6,            \
      ~(fdp_u128) 0, 0, NULL)                                               \
    F(IPV6_DST, "ipv6_dst", 8, 0, 128, MR, IPV6_DST, IPV6, IPV6,            \
      ~(fdp_u128) 0, 0, NULL)                                               \
    F(IPV6_LABEL, "ipv6_label", 5, 32, 20, MR, IPV6_LABEL, IPV6, HEX5,      \
      0xfffff, 0, NULL)                                                     \
    F(NW_PROTO, "nw_proto", 1, 8, 8, R, NW_PROTO, IP_ANY, DEC, 0xff, 0xff,  \
      "ip_proto", NULL)                                                     \
    F(NW_TOS, "nw_tos", 1, 2, 6, R, NW_TOS, IP_ANY, TOS, 0x3f, 0xff, NULL)  \
    F(NW_ECN, "nw_ecn", 1, 0, 2, R, NW_ECN, IP_ANY, DEC, 3, 0xff, "ip_ecn", \
      NULL)                                                                 \
    F(NW_TTL, "nw_ttl", 3, 8, 8, R, NW_TTL, IP_ANY, DEC, 0xff, 0xff, NULL)  \
    F(IP_FRAG, "ip_frag", 3, 0, 2, M, IP_FRAG, IP_ANY, FRAG, 3, 0,          \
      "nw_frag", NULL)                                                      \
    F(TP_SRC, "tp_src", 1, 48, 16, MR, TP_SRC, L4, DEC, 0xffff, 0,          \
      "tcp_src", "udp_src", "sctp_src", NULL)                               \
    F(TP_DST, "tp_dst", 1, 32, 16, MR, TP_DST, L4, DEC, 0xffff, 0,          \
      "tcp_dst", "udp_dst", "sctp_dst", NULL)                               \
    F(TCP_FLAGS, "tcp_flags", 4, 0, 12, M, TCP_FLAGS, TCP, TCP_FLAGS,       \
      0xfff, 0, NULL)                                                       \
    F(ICMP_TYPE, "icmp_type", 1, 48, 16, R, TP_SRC, ICMP_ANY, DEC, 0xff,    \
      0xff, "icmpv6_type", NULL)                                            \
    F(ICMP_CODE, "icmp_code", 1, 32, 16, R, TP_DST, ICMP_ANY, DEC, 0xff,    \
      0xff, "icmpv6_code", NULL)                                            \
    F(ARP_OP, "arp_op", 1, 8, 8, R, NW_PROTO, ARP, DEC, 0xff, 0xffff, NULL) \
    F(ARP_SPA, "arp_spa", 0, 32, 32, MR, NW_SRC, ARP, IPV4, 0xffffffffu, 0, \
      NULL)                                                                 \
    F(ARP_TPA, "arp_tpa", 0, 0, 32, MR, NW_DST, ARP, IPV4, 0xffffffffu, 0,  \
      NULL)                                                                 \
    F(ARP_SHA, "arp_sha", 10, 16, 48, MR, ARP_SHA, ARP, MAC,                \
      0xffffffffffffull, 0, NULL)                                           \
    F(ARP_THA, "arp_tha", 11, 16, 48, MR, ARP_THA, ARP, MAC,                \
      0xffffffffffffull, 0, NULL)                                           \
    F(ND_TARGET, "nd_target", 12, 0, 128, MR, ND_TARGET, ND, IPV6,          \
      ~(fdp_u128) 0, 0, NULL)                                               \
    F(ND_SLL, "nd_sll", 10, 16, 48, MR, ARP_SHA, ND_SOLICIT, MAC,           \
      0xffffffffffffull, 0, NULL)                                           \
    F(ND_TLL, "nd_tll", 11, 16, 48, MR, ARP_THA, ND_ADVERT, MAC,            \
      0xffffffffffffull, 0, NULL)                                           \
    F(ND_RESERVED, "nd_reserved", 0, 32, 32, R, NW_SRC, ND, DEC,            \
      0xffffffffu, 0xffffffffu, NULL)                                       \
    F(ND_OPTIONS_TYPE, "nd_options_type", 4, 0, 8, R, TCP_FLAGS, ND, DEC,   \
      0xff, 0xff, NULL)                                                     \
    F(METADATA, "metadata", 14, 0, 64, MR, METADATA, NONE, HEX,             \
      ~(uint64_t) 0, 0, NULL)                                               \
    F(REG0, "reg0", 15, 32, 32, MR, XREG0, NONE, HEX, 0xffffffffu,          \
      0, NULL)                                                              \
    F(REG1, "reg1", 15, 0, 32, MR, XREG0, NONE, HEX, 0xffffffffu,           \
      0, NULL)                                                              \
    F(REG2, "reg2", 16, 32, 32, MR, XREG1, NONE, HEX, 0xffffffffu,          \
      0, NULL)                                                              \
    F(REG3, "reg3", 16, 0, 32, MR, XREG1, NONE, HEX, 0xffffffffu,           \
      0, NULL)                                                              \
    F(REG4, "reg4", 17, 32, 32, MR, XREG2, NONE, HEX, 0xffffffffu,          \
      0, NULL)                                                              \
    F(REG5, "reg5", 17, 0, 32, MR, XREG2, NONE, HEX, 0xffffffffu,           \
      0, NULL)                                                              \
    F(REG6, "reg6", 18, 32, 32, MR, XREG3, NONE, HEX, 0xffffffffu,          \
      0, NULL)                                                              \
    F(REG7, "reg7", 18, 0, 32, MR, XREG3, NONE, HEX, 0xffffffffu,           \
      0, NULL)                                                              \
    F(REG8, "reg8", 19, 32, 32, MR, XREG4, NONE, HEX, 0xffffffffu,          \
      0, NULL)                                                              \
    F(REG9, "reg9", 19, 0, 32, MR, XREG4, NONE, HEX, 0xffffffffu,           \
      0, NULL)                                                              \
    F(REG10, "reg10", 20, 32, 32, MR, XREG5, NONE, HEX, 0xffffffffu,        \
      0, NULL)                                                              \
    F(REG11, "reg11", 20, 0, 32, MR, XREG5, NONE, HEX, 0xffffffffu,         \
      0, NULL)                                                              \
    F(REG12, "reg12", 21, 32, 32, MR, XREG6, NONE, HEX, 0xffffffffu,        \
      0, NULL)                                                              \
    F(REG13, "reg13", 21, 0, 32, MR, XREG6, NONE, HEX, 0xffffffffu,         \
      0, NULL)                                                              \
    F(REG14, "reg14", 22, 32, 32, MR, XREG7, NONE, HEX, 0xffffffffu,        \
      0, NULL)                                                              \
    F(REG15, "reg15", 22, 0, 32, MR, XREG7, NONE, HEX, 0xffffffffu,         \
      0, NULL)                                                              \
    F(XREG0, "xreg0", 15, 0, 64, MR, XXREG0, NONE, HEX, ~(uint64_t) 0,      \
      0, NULL)                                                              \
    F(XREG1, "xreg1", 16, 0, 64, MR, XXREG0, NONE, HEX, ~(uint64_t) 0,      \
      0, NULL)                                                              \
    F(XREG2, "xreg2", 17, 0, 64, MR, XXREG1, NONE, HEX, ~(uint64_t) 0,      \
      0, NULL)                                                              \
    F(XREG3, "xreg3", 18, 0, 64, MR, XXREG1, NONE, HEX, ~(uint64_t) 0,      \
      0, NULL)                                                              \
    F(XREG4, "xreg4", 19, 0, 64, MR, XXREG2, NONE, HEX, ~(uint64_t) 0,      \
      0, NULL)                                                              \
    F(XREG5, "xreg5", 20, 0, 64, MR, XXREG2, NONE, HEX, ~(uint64_t) 0,      \
      0, NULL)                                                              \
    F(XREG6, "xreg6", 21, 0, 64, MR, XXREG3, NONE, HEX, ~(uint64_t) 0,      \
      0, NULL)                                                              \
    F(XREG7, "xreg7", 22, 0, 64, MR, XXREG3, NONE, HEX, ~(uint64_t) 0,      \
      0, NULL)                                                              \
    F(XXREG0, "xxreg0", 15, 0, 128, MR, XXREG0, NONE, HEX,                  \
      ~(fdp_u128) 0, 0, NULL)                                               \
    F(XXREG1, "xxreg1", 17, 0, 128, MR, XXREG1, NONE, HEX,                  \
      ~(fdp_u128) 0, 0, NULL)                                               \
    F(XXREG2, "xxreg2", 19, 0, 128, MR, XXREG2, NONE, HEX,                  \
      ~(fdp_u128) 0, 0, NULL)                                               \
    F(XXREG3, "xxreg3", 21, 0, 128, MR, XXREG3, NONE, HEX,                  \
      ~(fdp_u128) 0, 0, NULL)                                               \
    F(CT_STATE, "ct_state", 23, 0, 8, M, CT_STATE, NONE, CT_STATE, 0xff, 0, \
      NULL)                                                                 \
    F(CT_ZONE, "ct_zone", 23, 16, 16, R, CT_ZONE, NONE, DEC, 0xffff,        \
      0xffff, NULL)                                                         \
    F(CT_MARK, "ct_mark", 23, 32, 32, MR, CT_MARK, NONE, HEX, 0xffffffffu,  \
      0, NULL)                                                              \
    F(CT_LABEL, "ct_label", 25, 0, 128, MR, CT_LABEL, NONE, HEX,            \
      ~(fdp_u128) 0, 0, NULL)                                               \
    F(CT_NW_SRC, "ct_nw_src", 27, 32, 32, MR, CT_IPV6_SRC, CT_IPV4, IPV4,   \
      0xffffffffu, 0, NULL)                                                 \
    F(CT_NW_DST, "ct_nw_dst", 29, 32, 32, MR, CT_IPV6_DST, CT_IPV4, IPV4,   \
      0xffffffffu, 0, NULL)                                                 \
    F(CT_IPV6_SRC, "ct_ipv6_src", 27, 0, 128, MR, CT_IPV6_SRC, CT_IPV6,     \
      IPV6, ~(fdp_u128) 0, 0, NULL)                                         \
    F(CT_IPV6_DST, "ct_ipv6_dst", 29, 0, 128, MR, CT_IPV6_DST, CT_IPV6,     \
      IPV6, ~(fdp_u128) 0, 0, NULL)                                         \
    F(CT_NW_PROTO, "ct_nw_proto", 23, 8, 8, R, CT_NW_PROTO, CT, DEC, 0xff,  \
      0xff, NULL)                                                           \
    F(CT_TP_SRC, "ct_tp_src", 24, 48, 16, MR, CT_TP_SRC, CT_L4, DEC,        \
      0xffff, 0, NULL)                                                      \
    F(CT_TP_DST, "ct_tp_dst", 24, 32, 16, MR, CT_TP_DST, CT_L4, DEC,        \
      0xffff, 0, NULL)                                                      \
    F(CONJ_ID, "conj_id", 5, 0, 32, 0, CONJ_ID, NONE, DEC, 0xffffffffu,     \
      0xffffffffu, NULL)                                                    \
    F(TUN_ID, "tun_id", 31, 0, 64, MR, TUN_ID, NONE, HEX, ~(uint64_t) 0,    \
      0, "tunnel_id", NULL)                                                 \
    F(TUN_SRC, "tun_src", 33, 32, 32, MR, TUN_IPV6_SRC, NONE, IPV4,         \
      0xffffffffu, 0, NULL)                                                 \
    F(TUN_DST, "tun_dst", 35, 32, 32, MR, TUN_IPV6_DST, NONE, IPV4,         \
      0xffffffffu, 0, NULL)                                                 \
    F(TUN_IPV6_SRC, "tun_ipv6_src", 33, 0, 128, MR, TUN_IPV6_SRC, NONE,     \
      IPV6, ~(fdp_u128) 0, 0, NULL)                                         \
    F(TUN_IPV6_DST, "tun_ipv6_dst", 35, 0, 128, MR, TUN_IPV6_DST, NONE,     \
      IPV6, ~(fdp_u128) 0, 0, NULL)                                         \
    F(TUN_FLAGS, "tun_flags", 32, 48, 1, M, TUN_FLAGS, NONE, TUN_FLAGS, 1,  \
      0, NULL)                                                              \
    F(TUN_TOS, "tun_tos", 32, 40, 8, R, TUN_TOS, NONE, DEC, 0xff, 0, NULL)  \
    F(TUN_TTL, "tun_ttl", 32, 32, 8, R, TUN_TTL, NONE, DEC, 0xff, 0, NULL)  \
    F(TUN_GBP_ID, "tun_gbp_id", 32, 16, 16, MR, TUN_GBP_ID, NONE, DEC,      \
      0xffff, 0, NULL)                                                      \
    F(TUN_GBP_FLAGS, "tun_gbp_flags", 32, 8, 8, R, TUN_GBP_FLAGS, NONE,     \
      HEX, 0xff, 0xff, NULL)

/* The FL column's values. */
enum {
    FDP__FL_0 = 0,
    FDP__FL_M = FDP__F_MASKABLE,
    FDP__FL_R = FDP__F_RANGE,
    FDP__FL_MR = FDP__F_MASKABLE | FDP__F_RANGE,
};

/* Compile-time positions: FDP__WORD_TP_DST is tp_dst's key word,
 * FDP__SHIFT_TP_DST the bit of its LSB there, FDP__BITS_TP_DST its width,
 * and FDP__ORDER_TP_DST its row in the list (checked against FDP_F_TP_DST).
 * (Not FDP__S_: that prefix is the syntax's.) */
#define FDP__FIELD_POS(ID, NAME, WORD, SHIFT, BITS, ...)                    \
    FDP__WORD_##ID = (WORD), FDP__SHIFT_##ID = (SHIFT),                     \
    FDP__BITS_##ID = (BITS),
enum { FDP__FIELDS(FDP__FIELD_POS) };
#undef FDP__FIELD_POS

#define FDP__FIELD_ORDER(ID, ...) FDP__ORDER_##ID,
enum fdp__field_order { FDP__FIELDS(FDP__FIELD_ORDER) FDP__N_ORDER };
#undef FDP__FIELD_ORDER

/* The bits field ID occupies in its word, as a 64-bit mask (all ones for
 * each word of a 128-bit field). */
#define FDP__MASK(ID)                                                       \
    (FDP__BITS_##ID >= 64 ? ~(uint64_t) 0                                   \
     : (((uint64_t) 1 << FDP__BITS_##ID) - 1) << FDP__SHIFT_##ID)

/* 'value' placed at field ID's bits of its word: for building whole key
 * words at compile-time-fixed positions.  The value must fit the field. */
#define FDP__PUT(ID, value) ((uint64_t) (value) << FDP__SHIFT_##ID)

extern const struct fdp__field fdp__fields[FDP_N_FIELDS];

static inline const struct fdp__field *
fdp__field(enum fdp_field id)
{
    return &fdp__fields[id];
}

/* True for the fields of a packet's headers, with in_port and pkt_mark:
 * the packet words of key.h. */
static inline bool
fdp__field_is_packet(enum fdp_field id)
{
    return id < FDP_F_METADATA;
}

/* True for the state the pipeline keeps for itself, which a packet
 * enters with zero: metadata, the registers and conj_id (not the
 * connection-tracking fields, which the tracker gives a packet). */
static inline bool
fdp__field_is_register(enum fdp_field id)
{
    return (id >= FDP_F_METADATA && id <= FDP_F_XXREG3)
           || id == FDP_F_CONJ_ID;
}

/* True for the tunnel fields (key.h, words 31-40): packet state that is
 * not in the packet's headers, kept across resubmits and continuations,
 * and read by an output to a tunnel port. */
static inline bool
fdp__field_is_tunnel(enum fdp_field id)
{
    return id >= FDP_F_TUN_ID && id <= FDP_F_TUN_GBP_FLAGS;
}

/* The first of the tunnel words and their number (key.h): words 31 to
 * 40, zero for a packet that did not come through a tunnel. */
#define FDP__TUN_FIRST_WORD FDP__WORD_TUN_ID
#define FDP__TUN_N_WORDS (FDP_KEY_WORDS - FDP__WORD_TUN_ID)

/* The tunnel-metadata space (key.h): 32 bytes in words 37-40, eight
 * 4-byte slots, and the byte of word 32 whose bit i says that slot i
 * starts an option the packet carried. */
#define FDP__TUN_MD_WORD 37
#define FDP__TUN_MD_BYTES 32
#define FDP__TUN_MD_SLOTS (FDP__TUN_MD_BYTES / 4)
#define FDP__TUN_MD_PRESENT_WORD 32
#define FDP__TUN_MD_PRESENT_SHIFT 0

/* The tunnel's address family (key.h): bit 63 of word 32, one of the
 * bits tun_flags' storage keeps free, is 1 when the tunnel addresses are
 * IPv6.  tun_src and tun_dst share tun_ipv6_src's and tun_ipv6_dst's
 * storage, so a match on "tun_src=32.1.13.184" and one on
 * "tun_ipv6_src=2001:db8::/32" have the same address bits: the family bit,
 * which a match on any tunnel address also matches (0 for tun_src and
 * tun_dst, 1 for the IPv6 ones), tells them apart, as Open vSwitch's
 * separate fields do (an IPv6 tunnel's packet never matches tun_src, and
 * an IPv4 one's never tun_ipv6_src).  A decapsulated packet has it set
 * when its outer header was IPv6; fdp__key_set_tunnel() keeps it right
 * when an action writes an address. */
#define FDP__TUN_IPV6_WORD 32
#define FDP__TUN_IPV6_BIT (UINT64_C(1) << 63)

/* True for the four tunnel addresses. */
static inline bool
fdp__field_is_tun_addr(enum fdp_field id)
{
    return id >= FDP_F_TUN_SRC && id <= FDP_F_TUN_IPV6_DST;
}

/* True for tun_ipv6_src and tun_ipv6_dst. */
static inline bool
fdp__field_is_tun_ipv6(enum fdp_field id)
{
    return id == FDP_F_TUN_IPV6_SRC || id == FDP_F_TUN_IPV6_DST;
}

/* All-ones of 'n_bits' bits (n_bits <= 128). */
static inline fdp_u128
fdp__ones(unsigned int n_bits)
{
    return n_bits >= 128 ? ~(fdp_u128) 0 : ((fdp_u128) 1 << n_bits) - 1;
}

/* Field access, inline: the datapath's packet parser sets a dozen fields
 * per packet.  128-bit fields take two whole words (high word first). */

/* The field's bits of 'key', as a number. */
static inline fdp_u128
fdp__key_get(const struct fdp_key *key, enum fdp_field id)
{
    const struct fdp__field *f = &fdp__fields[id];

    if (f->n_bits == 128) {
        return ((fdp_u128) key->w[f->word] << 64) | key->w[f->word + 1];
    }
    return (key->w[f->word] >> f->shift) & (uint64_t) fdp__ones(f->n_bits);
}

/* Replaces the field's bits of 'key' by 'value' (truncated to the width). */
static inline void
fdp__key_set(struct fdp_key *key, enum fdp_field id, fdp_u128 value)
{
    const struct fdp__field *f = &fdp__fields[id];

    if (f->n_bits == 128) {
        key->w[f->word] = (uint64_t) (value >> 64);
        key->w[f->word + 1] = (uint64_t) value;
    } else {
        uint64_t m = (uint64_t) fdp__ones(f->n_bits) << f->shift;
        key->w[f->word] = (key->w[f->word] & ~m)
                          | (((uint64_t) value << f->shift) & m);
    }
}

/* fdp__key_set() for a packet's key, which keeps the tunnel's address
 * family right: writing a tunnel address of the other family than the
 * key's first clears both addresses (an IPv4 address left in an IPv6
 * one's storage would read as part of it) and flips the family bit. */
static inline void
fdp__key_set_tunnel(struct fdp_key *key, enum fdp_field id, fdp_u128 value)
{
    if (fdp__field_is_tun_addr(id)) {
        bool v6 = fdp__field_is_tun_ipv6(id);
        uint64_t *fw = &key->w[FDP__TUN_IPV6_WORD];
        if (!(*fw & FDP__TUN_IPV6_BIT) != !v6) {
            for (unsigned int w = FDP__WORD_TUN_IPV6_SRC;
                 w < FDP__WORD_TUN_IPV6_DST + 2; w++) {
                key->w[w] = 0;
            }
            *fw ^= FDP__TUN_IPV6_BIT;
        }
    }
    fdp__key_set(key, id, value);
}

/* ORs the field's bits of 'value' into 'key' without clearing first. */
static inline void
fdp__key_or(struct fdp_key *key, enum fdp_field id, fdp_u128 value)
{
    const struct fdp__field *f = &fdp__fields[id];

    if (f->n_bits == 128) {
        key->w[f->word] |= (uint64_t) (value >> 64);
        key->w[f->word + 1] |= (uint64_t) value;
    } else {
        uint64_t m = (uint64_t) fdp__ones(f->n_bits) << f->shift;
        key->w[f->word] |= ((uint64_t) value << f->shift) & m;
    }
}

/* Writes the bits of 'value' under 'mask' (both in the field's own units:
 * bit 0 is the field's bit 0) into field 'id' of 'key', leaving its other
 * bits as they were: one masked store into the field's one word, what a
 * register load or move does.  For fields of at most 64 bits; mask bits
 * beyond the field are ignored, as fdp__key_set() truncates, so a
 * neighbour is never touched. */
static inline void
fdp__key_store_masked(struct fdp_key *key, enum fdp_field id, uint64_t value,
                      uint64_t mask)
{
    const struct fdp__field *f = &fdp__fields[id];
    uint64_t m = (mask << f->shift) & f->word_mask;

    key->w[f->word] = (key->w[f->word] & ~m) | ((value << f->shift) & m);
}

/* fdp__key_store_masked() for a field of any width: a 128-bit field takes
 * two masked stores, one per word (high word first). */
static inline void
fdp__key_store_masked128(struct fdp_key *key, enum fdp_field id,
                         fdp_u128 value, fdp_u128 mask)
{
    const struct fdp__field *f = &fdp__fields[id];

    if (f->n_bits == 128) {
        uint64_t mh = (uint64_t) (mask >> 64), ml = (uint64_t) mask;
        key->w[f->word] = (key->w[f->word] & ~mh)
                          | ((uint64_t) (value >> 64) & mh);
        key->w[f->word + 1] = (key->w[f->word + 1] & ~ml)
                              | ((uint64_t) value & ml);
    } else {
        fdp__key_store_masked(key, id, (uint64_t) value, (uint64_t) mask);
    }
}

static inline struct fdp_value
fdp__to_value(fdp_u128 v)
{
    return (struct fdp_value) { (uint64_t) (v >> 64), (uint64_t) v };
}

static inline fdp_u128
fdp__from_value(struct fdp_value v)
{
    return ((fdp_u128) v.hi << 64) | v.lo;
}

/* The names set_field takes, as ovs-ofctl's OXM and legacy names.  Unlike
 * match fields, each name has its own prerequisite: "udp_src" writes the
 * UDP source port and needs udp, and "tp_src" is ovs-ofctl's alias for
 * "tcp_src".  A field with no entry cannot be set.  The first name of a
 * field whose prerequisite a match meets is the one printed. */
struct fdp__set_field_name {
    const char *name;
    enum fdp_field field;
    enum fdp__prereq prereq;
};

extern const struct fdp__set_field_name fdp__set_field_names[];
extern const size_t fdp__n_set_field_names;

/* The set_field entry for 'name', or NULL. */
const struct fdp__set_field_name *fdp__set_field_name_find(const char *name);

/* The actions spelled mod_xxx:VALUE, each setting one field.  'canonical'
 * says whether ovs-ofctl prints the action under this name (mod_nw_ecn is
 * printed as set_field). */
struct fdp__mod_action {
    const char *name;
    enum fdp_field field;
    bool canonical;
};

extern const struct fdp__mod_action fdp__mod_actions[];
extern const size_t fdp__n_mod_actions;

/* Well-known values. */
#define FDP_ETH_TYPE_IP 0x0800
#define FDP_ETH_TYPE_ARP 0x0806
#define FDP_ETH_TYPE_RARP 0x8035
#define FDP_ETH_TYPE_IPV6 0x86dd
#define FDP_ETH_TYPE_MPLS 0x8847
#define FDP_ETH_TYPE_MPLS_MCAST 0x8848
#define FDP_IPPROTO_ICMP 1
#define FDP_IPPROTO_TCP 6
#define FDP_IPPROTO_UDP 17
#define FDP_IPPROTO_ICMPV6 58
#define FDP_IPPROTO_SCTP 132
#define FDP_ND_SOLICIT 135         /* ICMPv6 neighbour solicitation. */
#define FDP_ND_ADVERT 136          /* ICMPv6 neighbour advertisement. */
#define FDP_VLAN_CFI 0x1000
#define FDP_VLAN_VID_MASK 0x0fff
#define FDP_VLAN_PCP_MASK 0xe000

/* OpenFlow 1.0 port numbers with names (OpenFlow 1.0, "ofp_port"). */
#define FDP_PORT_MAX 0xff00         /* Largest physical port + 1. */
#define FDP_PORT_IN_PORT 0xfff8
#define FDP_PORT_TABLE 0xfff9
#define FDP_PORT_NORMAL 0xfffa
#define FDP_PORT_FLOOD 0xfffb
#define FDP_PORT_ALL 0xfffc
#define FDP_PORT_CONTROLLER 0xfffd
#define FDP_PORT_LOCAL 0xfffe
#define FDP_PORT_NONE 0xffff

/* Port name for a reserved port number, or NULL. */
const char *fdp__port_name(uint32_t port);

/* Parses a reserved port name (case-insensitive); true if it is one. */
bool fdp__port_from_name(const char *name, uint32_t *port);

#endif /* FDP_FIELD_H */
