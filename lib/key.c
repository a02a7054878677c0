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

#include "field.h"

#include <strings.h>
#include <string.h>

#include "util.h"

#define M FDP__F_MASKABLE
#define R FDP__F_RANGE

const struct fdp__field fdp__fields[FDP_N_FIELDS] = {
    [FDP_F_IN_PORT] = { "in_port", { NULL }, 2, 48, 16, R,
                        FDP__P_NONE, FDP__S_PORT, 0xffff },
    [FDP_F_PKT_MARK] = { "pkt_mark", { NULL }, 2, 0, 32, M | R,
                         FDP__P_NONE, FDP__S_HEX, 0xffffffffu },
    [FDP_F_DL_SRC] = { "dl_src", { "eth_src", NULL }, 3, 16, 48, M | R,
                       FDP__P_NONE, FDP__S_MAC, 0xffffffffffffull },
    [FDP_F_DL_DST] = { "dl_dst", { "eth_dst", NULL }, 4, 16, 48, M | R,
                       FDP__P_NONE, FDP__S_MAC, 0xffffffffffffull },
    [FDP_F_DL_TYPE] = { "dl_type", { "eth_type", NULL }, 1, 16, 16, R,
                        FDP__P_NONE, FDP__S_HEX4, 0xffff, 0xffff },
    [FDP_F_VLAN_TCI] = { "vlan_tci", { NULL }, 2, 32, 16, M | R,
                         FDP__P_NONE, FDP__S_HEX4, 0xffff },
    [FDP_F_DL_VLAN] = { "dl_vlan", { NULL }, 2, 32, 12, R,
                        FDP__P_VLAN, FDP__S_VLAN_VID, 0xfff, 0xffff },
    [FDP_F_DL_VLAN_PCP] = { "dl_vlan_pcp", { "vlan_pcp", NULL }, 2, 45, 3, R,
                            FDP__P_VLAN, FDP__S_DEC, 7, 0xff },
    [FDP_F_NW_SRC] = { "nw_src", { "ip_src", NULL }, 0, 32, 32, M | R,
                       FDP__P_IPV4, FDP__S_IPV4, 0xffffffffu },
    [FDP_F_NW_DST] = { "nw_dst", { "ip_dst", NULL }, 0, 0, 32, M | R,
                       FDP__P_IPV4, FDP__S_IPV4, 0xffffffffu },
    [FDP_F_IPV6_SRC] = { "ipv6_src", { NULL }, 6, 0, 128, M | R,
                         FDP__P_IPV6, FDP__S_IPV6, ~(fdp_u128) 0 },
    [FDP_F_IPV6_DST] = { "ipv6_dst", { NULL }, 8, 0, 128, M | R,
                         FDP__P_IPV6, FDP__S_IPV6, ~(fdp_u128) 0 },
    [FDP_F_IPV6_LABEL] = { "ipv6_label", { NULL }, 5, 32, 20, M | R,
                           FDP__P_IPV6, FDP__S_HEX5, 0xfffff },
    [FDP_F_NW_PROTO] = { "nw_proto", { "ip_proto", NULL }, 1, 8, 8, R,
                         FDP__P_IP_ANY, FDP__S_DEC, 0xff, 0xff },
    [FDP_F_NW_TOS] = { "nw_tos", { NULL }, 1, 2, 6, R,
                       FDP__P_IP_ANY, FDP__S_TOS, 0x3f, 0xff },
    [FDP_F_NW_ECN] = { "nw_ecn", { "ip_ecn", NULL }, 1, 0, 2, R,
                       FDP__P_IP_ANY, FDP__S_DEC, 3, 0xff },
    [FDP_F_NW_TTL] = { "nw_ttl", { NULL }, 3, 8, 8, R,
                       FDP__P_IP_ANY, FDP__S_DEC, 0xff, 0xff },
    [FDP_F_IP_FRAG] = { "ip_frag", { "nw_frag", NULL }, 3, 0, 2, M,
                        FDP__P_IP_ANY, FDP__S_FRAG, 3 },
    [FDP_F_TP_SRC] = { "tp_src", { "tcp_src", "udp_src", "sctp_src", NULL },
                       1, 48, 16, M | R, FDP__P_L4, FDP__S_DEC, 0xffff },
    [FDP_F_TP_DST] = { "tp_dst", { "tcp_dst", "udp_dst", "sctp_dst", NULL },
                       1, 32, 16, M | R, FDP__P_L4, FDP__S_DEC, 0xffff },
    [FDP_F_TCP_FLAGS] = { "tcp_flags", { NULL }, 4, 0, 12, M,
                          FDP__P_TCP, FDP__S_TCP_FLAGS, 0xfff },
    [FDP_F_ICMP_TYPE] = { "icmp_type", { "icmpv6_type", NULL },
                          1, 48, 16, R, FDP__P_ICMP_ANY, FDP__S_DEC, 0xff, 0xff },
    [FDP_F_ICMP_CODE] = { "icmp_code", { "icmpv6_code", NULL },
                          1, 32, 16, R, FDP__P_ICMP_ANY, FDP__S_DEC, 0xff, 0xff },
    [FDP_F_ARP_OP] = { "arp_op", { NULL }, 1, 8, 8, R,
                       FDP__P_ARP, FDP__S_DEC, 0xff, 0xffff },
    [FDP_F_ARP_SPA] = { "arp_spa", { NULL }, 0, 32, 32, M | R,
                        FDP__P_ARP, FDP__S_IPV4, 0xffffffffu },
    [FDP_F_ARP_TPA] = { "arp_tpa", { NULL }, 0, 0, 32, M | R,
                        FDP__P_ARP, FDP__S_IPV4, 0xffffffffu },
    [FDP_F_ARP_SHA] = { "arp_sha", { NULL }, 10, 16, 48, M | R,
                        FDP__P_ARP, FDP__S_MAC, 0xffffffffffffull },
    [FDP_F_ARP_THA] = { "arp_tha", { NULL }, 11, 16, 48, M | R,
                        FDP__P_ARP, FDP__S_MAC, 0xffffffffffffull },
};

#undef M
#undef R

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

/* A 128-bit field takes two whole words; every other field fits in one. */
static_assert(FDP_KEY_WORDS * 8 <= 128, "the key is at most 128 bytes");

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
