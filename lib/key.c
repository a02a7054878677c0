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
    [FDP_F_ICMP_TYPE] = { "icmp_type", { "icmpv4_type", "icmpv6_type", NULL },
                          1, 48, 16, R, FDP__P_ICMP_ANY, FDP__S_DEC, 0xff, 0xff },
    [FDP_F_ICMP_CODE] = { "icmp_code", { "icmpv4_code", "icmpv6_code", NULL },
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
