/*
 * flowdp: the flow key and its fields.
 *
 * A flow key is a fixed array of FDP_KEY_WORDS 64-bit words that holds the
 * header fields of one packet.  Its layout is part of the API, because
 * hashing and masking work on words: fields are placed so that common
 * masks touch few words (the 5-tuple lives in words 0 and 1):
 *
 *   word  bits 63..48   47..32      31..16     15..8      7..0
 *   0     nw_src (arp_spa, nd_reserved) nw_dst (arp_tpa) ...........
 *   1     tp_src        tp_dst      dl_type    nw_proto   nw_tos|nw_ecn
 *         (icmp_type)   (icmp_code)            (arp_op)
 *   2     in_port       vlan_tci    pkt_mark ......................
 *   3     dl_src .............................. nw_ttl     ip_frag
 *   4     dl_dst .............................. tcp_flags ..........
 *                                               (nd_options_type)
 *   5     ipv6_label (low 20 bits of 63..32)     conj_id
 *   6-7   ipv6_src (word 6 holds the high 64 bits)
 *   8-9   ipv6_dst
 *   10    arp_sha (nd_sll) .................... (unused)
 *   11    arp_tha (nd_tll) .................... (unused)
 *   12-13 nd_target
 *   14    metadata (64 bits)
 *   15-22 xreg0..xreg7: word 15 + i is xreg<i>, whose high half is
 *         reg<2i> and low half reg<2i+1>, as Open vSwitch pairs them;
 *         xxreg<j> is words 15 + 2j (high) and 16 + 2j, that is
 *         xreg<2j>:xreg<2j+1>, reg<4j> its top 32 bits
 *   23    ct_mark ......................... ct_zone   ct_nw_proto ct_state
 *   24    ct_tp_src     ct_tp_dst   (unused)
 *   25-26 ct_label (word 25 holds the high 64 bits)
 *   27-28 ct_ipv6_src; ct_nw_src is bits 63..32 of word 27
 *   29-30 ct_ipv6_dst; ct_nw_dst is bits 63..32 of word 29
 *   31    tun_id (64 bits)
 *   32    tun_flags     tun_tos|tun_ttl tun_gbp_id tun_gbp_flags (internal:
 *         (bit 48: oam)                             tun_metadata presence)
 *   33-34 tun_ipv6_src; tun_src is bits 63..32 of word 33
 *   35-36 tun_ipv6_dst; tun_dst is bits 63..32 of word 35
 *   37-40 the tunnel-metadata space: 32 bytes of Geneve option values
 *
 * Words 0 to FDP_KEY_PACKET_WORDS - 1 hold what a packet's headers say
 * (and in_port, pkt_mark); the words after them are the pipeline's state,
 * the registers and metadata that a multi-table pipeline (pipeline.h)
 * carries from table to table.  conj_id, the conjunction id the pipeline
 * sets while it checks a conjunctive match, is pipeline state too, kept in
 * word 5's spare half.  A packet enters the pipeline with all of them
 * zero, so the datapath's caches key on the packet words alone.
 *
 * IPv6 neighbour discovery (Open vSwitch's parse_icmpv6()) fills the
 * target address, the link-layer address options and the rest of the ND
 * header.  As in Open vSwitch, nd_sll and nd_tll are arp_sha and arp_tha
 * under other names (an ND packet is never ARP), nd_options_type is kept
 * in tcp_flags (an ND packet is never TCP) and nd_reserved, which Open
 * vSwitch keeps in igmp_group_ip4's storage, here takes nw_src's bits (an
 * ND packet is IPv6, whose nw_src is always zero), as arp_spa does.  The
 * 128-bit target has no such partner: a packet that carries it also
 * carries both IPv6 addresses and both link-layer options, and the only
 * packet words free in an ND packet (word 0 and the low 16 bits of words
 * 10 and 11) hold 96 bits, scattered.  So it takes two words of its own,
 * the last packet words (a pair, as the caches hash the packet words two
 * at a time); placed there, the 5-tuple's words and every existing packet
 * word keep their positions, and only the pipeline's words move up by two.
 *
 * Words 23 to 30 hold the connection-tracking fields, Open vSwitch's
 * ct_state, ct_zone, ct_mark, ct_label and the original direction's tuple
 * (ct_nw_src... ct_tp_dst): what the connection tracker says about the
 * packet (FDP_CT_* below for ct_state's bits).  They are not in the
 * packet's headers, so they come after the registers and the caches' key
 * stays the 14 packet words; a packet arrives from a port with them zero,
 * and a pipeline run keeps the values its key brings (a packet the
 * tracker has seen, or one given to trace or classify), clearing only the
 * registers, metadata and conj_id.  The four ct fields that every
 * stateful pipeline matches (ct_state, ct_zone, ct_mark and ct_nw_proto)
 * share one word, so "ct_state=+trk+est,ct_mark=0x1/0x1" touches one.
 * An IPv4 tuple and an IPv6 tuple never occur together (both are the
 * packet's own family), so ct_nw_src and ct_nw_dst live in the top half of
 * ct_ipv6_src's and ct_ipv6_dst's high words, as arp_spa lives in nw_src:
 * eight words where separate storage would take nine.
 *
 * Words 31 to 40 hold the tunnel fields, Open vSwitch's flow_tnl: what
 * the outer header of a packet that arrived through a tunnel said (its
 * key, addresses, TOS, TTL and flags, and the Geneve options that a TLV
 * map places in the tunnel-metadata space), or what an output to a
 * tunnel port will put there (set_field, load, move).  They are packet
 * state, not pipeline state: a packet from a port that is not a tunnel
 * has them zero, a decapsulated one has them set before it is classified,
 * and a pipeline run, a resubmit and a ct(table=N) continuation keep them
 * as they are (Open vSwitch keeps the tunnel metadata across
 * recirculation).  They come last so that no word before them moved when
 * they arrived: the packet words, the registers and the connection-
 * tracking words kept their places, and the datapath's caches, which key
 * on the packet words, pay nothing for packets that did not come through
 * a tunnel.  tun_id, which every overlay pipeline matches, has a word to
 * itself; the small fields share one, so "tun_id=5,tun_flags=+oam" or a
 * GBP match touches two words; the addresses follow the connection-
 * tracking tuple's scheme (an IPv4 underlay and an IPv6 one never occur
 * together).  tun_flags holds one flag, oam (bit 48), the only one Open
 * vSwitch lets a flow match or set; the 15 bits above it stay zero.  The
 * low byte of word 32 is internal: bit i says that slot i of the
 * tunnel-metadata space (four bytes each) starts an option that the
 * packet carried (Open vSwitch's tun_metadata "present" map), so that a
 * match on an option also requires the option to be there.
 *
 * The tunnel-metadata space is 32 bytes, eight 4-byte slots: a TLV map
 * (add-tlv-map {class=...,type=...,len=...}->tun_metadataN) gives each
 * Geneve option it names a run of slots, at most 32 bytes in all.  Open
 * vSwitch allows 256 bytes; the deployments that use options carry a few
 * small ones (OVN's one 4-byte option holds the logical ingress and
 * egress ports; a Geneve header with two 4-byte options is the issue's
 * benchmark), and every 8 bytes more would be another word in every key
 * and mask.  A map that needs more than 32 bytes is refused.
 *
 * As in Open vSwitch, fields that never occur together share storage: the
 * ICMP type and code live in tp_src and tp_dst, the ARP opcode in
 * nw_proto, the ARP protocol addresses in nw_src and nw_dst.  Unused bits
 * are always zero.  Values are numbers in host order (a MAC address is the
 * 48-bit number whose most significant byte is the first on the wire).
 *
 * Thread-safety: all functions are pure and may be called from any thread.
 */
#ifndef FLOWDP_KEY_H
#define FLOWDP_KEY_H 1

#include <stdbool.h>
#include <stdint.h>
#include <flowdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FDP_KEY_WORDS 41

/* The words a packet's headers fill (see above). */
#define FDP_KEY_PACKET_WORDS 14

struct fdp_key {
    uint64_t w[FDP_KEY_WORDS];
};

/* The fields, by their Open vSwitch names.  dl_vlan and dl_vlan_pcp are
 * views of vlan_tci; nw_ecn shares nw_tos's byte. */
enum fdp_field {
    FDP_F_IN_PORT,
    FDP_F_PKT_MARK,
    FDP_F_DL_SRC,
    FDP_F_DL_DST,
    FDP_F_DL_TYPE,
    FDP_F_VLAN_TCI,
    FDP_F_DL_VLAN,
    FDP_F_DL_VLAN_PCP,
    FDP_F_NW_SRC,
    FDP_F_NW_DST,
    FDP_F_IPV6_SRC,
    FDP_F_IPV6_DST,
    FDP_F_IPV6_LABEL,
    FDP_F_NW_PROTO,
    FDP_F_NW_TOS,
    FDP_F_NW_ECN,
    FDP_F_NW_TTL,
    FDP_F_IP_FRAG,
    FDP_F_TP_SRC,
    FDP_F_TP_DST,
    FDP_F_TCP_FLAGS,
    FDP_F_ICMP_TYPE,
    FDP_F_ICMP_CODE,
    FDP_F_ARP_OP,
    FDP_F_ARP_SPA,
    FDP_F_ARP_TPA,
    FDP_F_ARP_SHA,
    FDP_F_ARP_THA,
    FDP_F_ND_TARGET,        /* IPv6 neighbour discovery (see above). */
    FDP_F_ND_SLL,
    FDP_F_ND_TLL,
    FDP_F_ND_RESERVED,
    FDP_F_ND_OPTIONS_TYPE,
    FDP_F_METADATA,         /* Pipeline state (see above). */
    FDP_F_REG0,
    FDP_F_REG1,
    FDP_F_REG2,
    FDP_F_REG3,
    FDP_F_REG4,
    FDP_F_REG5,
    FDP_F_REG6,
    FDP_F_REG7,
    FDP_F_REG8,
    FDP_F_REG9,
    FDP_F_REG10,
    FDP_F_REG11,
    FDP_F_REG12,
    FDP_F_REG13,
    FDP_F_REG14,
    FDP_F_REG15,
    FDP_F_XREG0,
    FDP_F_XREG1,
    FDP_F_XREG2,
    FDP_F_XREG3,
    FDP_F_XREG4,
    FDP_F_XREG5,
    FDP_F_XREG6,
    FDP_F_XREG7,
    FDP_F_XXREG0,           /* 128 bits: xreg0:xreg1 (see above). */
    FDP_F_XXREG1,
    FDP_F_XXREG2,
    FDP_F_XXREG3,
    FDP_F_CT_STATE,         /* Connection tracking (see above). */
    FDP_F_CT_ZONE,
    FDP_F_CT_MARK,
    FDP_F_CT_LABEL,
    FDP_F_CT_NW_SRC,
    FDP_F_CT_NW_DST,
    FDP_F_CT_IPV6_SRC,
    FDP_F_CT_IPV6_DST,
    FDP_F_CT_NW_PROTO,
    FDP_F_CT_TP_SRC,
    FDP_F_CT_TP_DST,
    FDP_F_CONJ_ID,          /* Pipeline state (see above). */
    FDP_F_TUN_ID,           /* Tunnel metadata (see above). */
    FDP_F_TUN_SRC,
    FDP_F_TUN_DST,
    FDP_F_TUN_IPV6_SRC,
    FDP_F_TUN_IPV6_DST,
    FDP_F_TUN_FLAGS,
    FDP_F_TUN_TOS,
    FDP_F_TUN_TTL,
    FDP_F_TUN_GBP_ID,
    FDP_F_TUN_GBP_FLAGS,
    FDP_N_FIELDS
};

/* A field value of up to 128 bits. */
struct fdp_value {
    uint64_t hi;
    uint64_t lo;
};

/* ct_state bits, as in Open vSwitch (lib/packets.h CS_*). */
#define FDP_CT_NEW 0x01         /* Starts a new connection. */
#define FDP_CT_EST 0x02         /* Part of an established connection. */
#define FDP_CT_REL 0x04         /* Related to an established connection. */
#define FDP_CT_RPL 0x08         /* In the reply direction. */
#define FDP_CT_INV 0x10         /* Invalid: the tracker could not place it. */
#define FDP_CT_TRK 0x20         /* Has been through the tracker. */
#define FDP_CT_SNAT 0x40        /* Its source was translated. */
#define FDP_CT_DNAT 0x80        /* Its destination was translated. */

/* tun_flags bits, as in Open vSwitch (FLOW_TNL_F_OAM): the only one a
 * flow matches or sets. */
#define FDP_TUN_F_OAM 0x1

/* ip_frag bits, as in Open vSwitch. */
#define FDP_FRAG_ANY 0x1        /* Set for every fragment. */
#define FDP_FRAG_LATER 0x2      /* Set for fragments after the first. */

/* The field's Open vSwitch name ("tp_dst"), or NULL if out of range. */
FDP_API const char *fdp_field_name(enum fdp_field);

/* Looks a field up by name or alias ("tcp_dst" finds FDP_F_TP_DST).
 * Returns true and sets '*field' if found. */
FDP_API bool fdp_field_from_name(const char *name, enum fdp_field *field);

/* The field's width in bits (the largest value is 2^width - 1, except for
 * fields with a smaller range such as icmp_type). */
FDP_API unsigned int fdp_field_width(enum fdp_field);

/* Reads or writes one field of a key.  fdp_key_set() ignores value bits
 * beyond the field's width. */
FDP_API struct fdp_value fdp_key_get(const struct fdp_key *, enum fdp_field);
FDP_API void fdp_key_set(struct fdp_key *, enum fdp_field, struct fdp_value);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_KEY_H */
