/*
 * The flow key's field table.
 *
 * fdp__fields[] is the single description of every field: its names, its
 * bits in the key, the prerequisites other fields must meet, how its value
 * is written, and whether it takes masks and ranges.  The parser, the
 * formatter, match validation and the datapath's key accessors all read
 * it; nothing else in flowdp knows where a field lives.
 */
#include <config.h>

#include "lib/field.h"

#include <strings.h>
#include <string.h>

#include "lib/util.h"

/* The rows, from FDP__FIELDS (lib/field.h). */
#define FDP__FIELD_ROW(ID, NAME, WORD, SHIFT, BITS, FL, BASE, PREREQ,       \
                       SYNTAX, MAX, EXACT, ...)                             \
    [FDP_F_##ID] = { NAME, { __VA_ARGS__ }, WORD, SHIFT, BITS, FDP__FL_##FL, \
                     FDP__P_##PREREQ, FDP__S_##SYNTAX, MAX, EXACT,          \
                     FDP__MASK(ID) },
const struct fdp__field fdp__fields[FDP_N_FIELDS] = {
    FDP__FIELDS(FDP__FIELD_ROW)
};
#undef FDP__FIELD_ROW

/* Layout checks, all from the same list.
 *
 * Each field fits its word (a 128-bit field takes two whole words), sits
 * in its row of the public enum, and lies inside its BASE (itself, or the
 * field whose storage it shares): in the same word and within its bits,
 * or, for a BASE of 128 bits (xxreg0 for xreg0 and xreg1), in one of its
 * two words. */
#define FDP__INSIDE(ID, WORD, BASE)                                         \
    (FDP__BITS_##BASE == 128                                                \
     ? FDP__BITS_##ID == 128 ? FDP__WORD_##BASE == WORD                     \
       : WORD == FDP__WORD_##BASE || WORD == FDP__WORD_##BASE + 1           \
     : FDP__WORD_##BASE == WORD                                             \
       && (FDP__MASK(ID) & ~FDP__MASK(BASE)) == 0)
#define FDP__FIELD_CHECK(ID, NAME, WORD, SHIFT, BITS, FL, BASE, ...)        \
    static_assert((int) FDP__ORDER_##ID == (int) FDP_F_##ID,             \
                  #ID ": the list follows enum fdp_field");                 \
    static_assert(BITS == 128                                               \
                  ? SHIFT == 0 && WORD + 1 < FDP_KEY_WORDS                  \
                  : BITS > 0 && SHIFT + BITS <= 64 && WORD < FDP_KEY_WORDS, \
                  #ID " fits its word");                                    \
    static_assert(FDP__INSIDE(ID, WORD, BASE), #ID " lies inside " #BASE);
FDP__FIELDS(FDP__FIELD_CHECK)
#undef FDP__FIELD_CHECK
#undef FDP__INSIDE
static_assert((int) FDP__N_ORDER == (int) FDP_N_FIELDS,
              "one row per enum fdp_field");

/* Fields that are their own base never overlap: for each word, the sum of
 * their masks (in 128 bits, so nothing carries out) equals their union,
 * which holds exactly when no two share a bit.  A 128-bit field counts
 * all of its two words. */
#define FDP__OWN(ID, WORD, BASE, w)                                         \
    (FDP_F_##ID == FDP_F_##BASE                                             \
     && (WORD == (w) || (FDP__BITS_##ID == 128 && WORD + 1 == (w))))
#define FDP__ADD_W(ID, NAME, WORD, SHIFT, BITS, FL, BASE, ...)              \
    + (FDP__OWN(ID, WORD, BASE, FDP__W) ? (fdp_u128) FDP__MASK(ID) : 0)
#define FDP__OR_W(ID, NAME, WORD, SHIFT, BITS, FL, BASE, ...)               \
    | (FDP__OWN(ID, WORD, BASE, FDP__W) ? FDP__MASK(ID) : 0)
#define FDP__CHECK_WORD                                                     \
    static_assert((fdp_u128) 0 FDP__FIELDS(FDP__ADD_W)                      \
                  == (fdp_u128) (0 FDP__FIELDS(FDP__OR_W)),                 \
                  "own fields of a word do not overlap")
/* One check per word: FDP__W names the word each time. */
static_assert(FDP_KEY_WORDS == 41, "one FDP__CHECK_WORD per key word");
#define FDP__W 0
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 1
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 2
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 3
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 4
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 5
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 6
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 7
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 8
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 9
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 10
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 11
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 12
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 13
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 14
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 15
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 16
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 17
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 18
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 19
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 20
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 21
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 22
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 23
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 24
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 25
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 26
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 27
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 28
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 29
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 30
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 31
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 32
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 33
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 34
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 35
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 36
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 37
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 38
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 39
FDP__CHECK_WORD;
#undef FDP__W
#define FDP__W 40
FDP__CHECK_WORD;
#undef FDP__W
#undef FDP__CHECK_WORD
#undef FDP__OR_W
#undef FDP__ADD_W
#undef FDP__OWN

const struct fdp__set_field_name fdp__set_field_names[] = {
    { "pkt_mark", FDP_F_PKT_MARK, FDP__P_NONE },
    { "eth_src", FDP_F_DL_SRC, FDP__P_NONE },
    { "dl_src", FDP_F_DL_SRC, FDP__P_NONE },
    { "eth_dst", FDP_F_DL_DST, FDP__P_NONE },
    { "dl_dst", FDP_F_DL_DST, FDP__P_NONE },
    { "ip_src", FDP_F_NW_SRC, FDP__P_IPV4 },
    { "nw_src", FDP_F_NW_SRC, FDP__P_IPV4 },
    { "ip_dst", FDP_F_NW_DST, FDP__P_IPV4 },
    { "nw_dst", FDP_F_NW_DST, FDP__P_IPV4 },
    { "ipv6_src", FDP_F_IPV6_SRC, FDP__P_IPV6 },
    { "ipv6_dst", FDP_F_IPV6_DST, FDP__P_IPV6 },
    { "ipv6_label", FDP_F_IPV6_LABEL, FDP__P_IPV6 },
    { "nw_tos", FDP_F_NW_TOS, FDP__P_IP_ANY },
    { "nw_ecn", FDP_F_NW_ECN, FDP__P_IP_ANY },
    { "ip_ecn", FDP_F_NW_ECN, FDP__P_IP_ANY },
    { "nw_ttl", FDP_F_NW_TTL, FDP__P_IP_ANY },
    { "tcp_src", FDP_F_TP_SRC, FDP__P_TCP },
    { "tp_src", FDP_F_TP_SRC, FDP__P_TCP },
    { "udp_src", FDP_F_TP_SRC, FDP__P_UDP },
    { "sctp_src", FDP_F_TP_SRC, FDP__P_SCTP },
    { "tcp_dst", FDP_F_TP_DST, FDP__P_TCP },
    { "tp_dst", FDP_F_TP_DST, FDP__P_TCP },
    { "udp_dst", FDP_F_TP_DST, FDP__P_UDP },
    { "sctp_dst", FDP_F_TP_DST, FDP__P_SCTP },
    { "icmp_type", FDP_F_ICMP_TYPE, FDP__P_ICMPV4 },
    { "icmpv6_type", FDP_F_ICMP_TYPE, FDP__P_ICMPV6 },
    { "icmp_code", FDP_F_ICMP_CODE, FDP__P_ICMPV4 },
    { "icmpv6_code", FDP_F_ICMP_CODE, FDP__P_ICMPV6 },
    { "arp_op", FDP_F_ARP_OP, FDP__P_ARP },
    { "arp_spa", FDP_F_ARP_SPA, FDP__P_ARP },
    { "arp_tpa", FDP_F_ARP_TPA, FDP__P_ARP },
    { "arp_sha", FDP_F_ARP_SHA, FDP__P_ARP },
    { "arp_tha", FDP_F_ARP_THA, FDP__P_ARP },
    { "nd_target", FDP_F_ND_TARGET, FDP__P_ND },
    { "nd_sll", FDP_F_ND_SLL, FDP__P_ND_SOLICIT },
    { "nd_tll", FDP_F_ND_TLL, FDP__P_ND_ADVERT },
    { "nd_reserved", FDP_F_ND_RESERVED, FDP__P_ND },
    { "nd_options_type", FDP_F_ND_OPTIONS_TYPE, FDP__P_ND },
    /* The tunnel fields but tun_tos and tun_ttl, which Open vSwitch
     * makes read-only (a tunnel port's options set them). */
    { "tun_id", FDP_F_TUN_ID, FDP__P_NONE },
    { "tunnel_id", FDP_F_TUN_ID, FDP__P_NONE },
    { "tun_src", FDP_F_TUN_SRC, FDP__P_NONE },
    { "tun_dst", FDP_F_TUN_DST, FDP__P_NONE },
    { "tun_ipv6_src", FDP_F_TUN_IPV6_SRC, FDP__P_NONE },
    { "tun_ipv6_dst", FDP_F_TUN_IPV6_DST, FDP__P_NONE },
    { "tun_flags", FDP_F_TUN_FLAGS, FDP__P_NONE },
    { "tun_gbp_id", FDP_F_TUN_GBP_ID, FDP__P_NONE },
    { "tun_gbp_flags", FDP_F_TUN_GBP_FLAGS, FDP__P_NONE },
};

const size_t fdp__n_set_field_names = FDP_ARRAY_SIZE(fdp__set_field_names);

const struct fdp__mod_action fdp__mod_actions[] = {
    { "mod_dl_src", FDP_F_DL_SRC, true },
    { "mod_dl_dst", FDP_F_DL_DST, true },
    { "mod_nw_src", FDP_F_NW_SRC, true },
    { "mod_nw_dst", FDP_F_NW_DST, true },
    { "mod_nw_tos", FDP_F_NW_TOS, true },
    { "mod_nw_ecn", FDP_F_NW_ECN, false },
    { "mod_nw_ttl", FDP_F_NW_TTL, true },
    { "mod_tp_src", FDP_F_TP_SRC, true },
    { "mod_tp_dst", FDP_F_TP_DST, true },
    /* Open vSwitch's NXAST_SET_TUNNEL and NXAST_SET_TUNNEL64, which
     * ovs-ofctl -O OpenFlow13 prints as set_field. */
    { "set_tunnel", FDP_F_TUN_ID, false },
    { "set_tunnel64", FDP_F_TUN_ID, false },
};

const size_t fdp__n_mod_actions = FDP_ARRAY_SIZE(fdp__mod_actions);

const struct fdp__set_field_name *
fdp__set_field_name_find(const char *name)
{
    for (size_t i = 0; i < fdp__n_set_field_names; i++) {
        if (!strcmp(name, fdp__set_field_names[i].name)) {
            return &fdp__set_field_names[i];
        }
    }
    return NULL;
}

/* The packet's words come first, the pipeline's after them (key.h). */
static_assert(FDP__WORD_ND_TARGET + 2 == FDP_KEY_PACKET_WORDS
              && FDP__WORD_METADATA == FDP_KEY_PACKET_WORDS
              && FDP__WORD_XXREG0 == FDP__WORD_XREG0
              && FDP__WORD_XXREG3 + 1 == FDP__WORD_XREG7
              && FDP__WORD_CT_STATE == FDP__WORD_XREG7 + 1
              && FDP__WORD_CT_IPV6_DST + 2 == FDP__WORD_TUN_ID,
              "the pipeline's state follows the packet words, and the "
              "connection-tracking fields the registers");
/* The tunnel words come last, in the order of key.h's table, and the
 * tunnel-metadata space and its presence byte are free of fields. */
static_assert(FDP__WORD_TUN_ID == 31 && FDP__WORD_TUN_FLAGS == 32
              && FDP__WORD_TUN_GBP_FLAGS == 32 && FDP__WORD_TUN_IPV6_SRC == 33
              && FDP__WORD_TUN_IPV6_DST == 35
              && FDP__TUN_MD_WORD == FDP__WORD_TUN_IPV6_DST + 2
              && FDP__TUN_MD_WORD + FDP__TUN_MD_BYTES / 8 == FDP_KEY_WORDS
              && FDP__SHIFT_TUN_GBP_FLAGS == 8
              && FDP__TUN_MD_SLOTS <= FDP__SHIFT_TUN_GBP_FLAGS
              && FDP_F_TUN_GBP_FLAGS + 1 == FDP_N_FIELDS
              && FDP_TUN_F_OAM == 1
              && (FDP__TUN_IPV6_BIT & FDP__MASK(TUN_FLAGS)) == 0
              && FDP__TUN_IPV6_WORD == FDP__WORD_TUN_FLAGS
              && FDP__SHIFT_TUN_FLAGS + 16 == 64,
              "the tunnel words are the key's last ten");

const char *
fdp_field_name(enum fdp_field id)
{
    return (unsigned int) id < FDP_N_FIELDS ? fdp__fields[id].name : NULL;
}

bool
fdp_field_from_name(const char *name, enum fdp_field *id)
{
    for (int i = 0; i < FDP_N_FIELDS; i++) {
        const struct fdp__field *f = &fdp__fields[i];
        if (!strcmp(name, f->name)) {
            *id = (enum fdp_field) i;
            return true;
        }
        for (const char *const *a = f->aliases; *a; a++) {
            if (!strcmp(name, *a)) {
                *id = (enum fdp_field) i;
                return true;
            }
        }
    }
    return false;
}

unsigned int
fdp_field_width(enum fdp_field id)
{
    return (unsigned int) id < FDP_N_FIELDS ? fdp__fields[id].n_bits : 0;
}

struct fdp_value
fdp_key_get(const struct fdp_key *key, enum fdp_field id)
{
    if ((unsigned int) id >= FDP_N_FIELDS) {
        return fdp__to_value(0);
    }
    return fdp__to_value(fdp__key_get(key, id));
}

void
fdp_key_set(struct fdp_key *key, enum fdp_field id, struct fdp_value value)
{
    if ((unsigned int) id < FDP_N_FIELDS) {
        fdp__key_set(key, id, fdp__from_value(value));
    }
}

/* ---------------------------------------------------------------------- */
/* OpenFlow port names.                                                    */

static const struct {
    const char *name;
    uint32_t port;
} port_names[] = {
    /* OpenFlow 1.0 reserved ports, in the order of ofp_port. */
    { "IN_PORT", 0xfff8 },
    { "TABLE", 0xfff9 },
    { "NORMAL", 0xfffa },
    { "FLOOD", 0xfffb },
    { "ALL", 0xfffc },
    { "CONTROLLER", 0xfffd },
    { "LOCAL", 0xfffe },
    { "ANY", 0xffff },
    { "NONE", 0xffff },     /* OpenFlow 1.0's name for ANY; parsed only. */
};

const char *
fdp__port_name(uint32_t port)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(port_names); i++) {
        if (port_names[i].port == port) {
            return port_names[i].name;
        }
    }
    return NULL;
}

bool
fdp__port_from_name(const char *name, uint32_t *port)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(port_names); i++) {
        if (!strcasecmp(port_names[i].name, name)) {
            *port = port_names[i].port;
            return true;
        }
    }
    return false;
}
