/*
 * Formatting flows as ovs-ofctl prints them.
 *
 * The match is printed in the order of Open vSwitch's match_format():
 * priority, pkt_mark, the protocol shorthand, in_port, VLAN, Ethernet
 * addresses and type, network addresses (IPv6, ARP or IPv4 names chosen by
 * dl_type), nw_proto or arp_op, ARP hardware addresses, TOS, ECN, TTL,
 * fragments, then ICMP type/code or transport ports, then TCP flags.  Each
 * field is printed by its syntax from the field table (lib/key.c); ranges,
 * flowdp's extension, print as "field=LO-HI" where the field would be.
 *
 * conj_id follows pkt_mark, then the connection-tracking fields (ct_state
 * ... ct_tp_dst, format_ct()), all before the shorthand; the registers
 * (reg0-reg15; an xreg prints as its two regs), the tunnel fields and
 * metadata come between the shorthand and in_port.
 *
 * Actions use ovs-ofctl's OpenFlow 1.0/NXM spelling (output:2,
 * CONTROLLER:65535, IN_PORT, mod_nw_src:...), except for push_vlan,
 * mod_nw_ttl and set_field, which only exist from OpenFlow 1.1 on and are
 * printed as ovs-ofctl prints them under OpenFlow 1.3 (set_field with OXM
 * field names: ip_src, tcp_dst, eth_src...).  The pipeline's actions keep
 * the spelling they were written in where ovs-ofctl's two modes differ
 * (goto_table, which NXM prints as resubmit(,N); set_field on a register,
 * which NXM prints as load), and are otherwise printed as both modes print
 * them: load and move with NXM names (OXM where a field has no NXM name),
 * resubmit:PORT or resubmit(PORT,TABLE), conjunction(ID,K/N).
 *
 * Each action kind has its formatter in one table indexed by kind
 * (format_fns[], from FDP__ACTION_KINDS in lib/actions-internal.h).
 */
#include <config.h>

#include "lib/flow-text.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/actions-internal.h"
#include "lib/other-actions.h"
#include "lib/learn.h"
#include <flowdp/flow.h>
#include <flowdp/table.h>
#include "lib/util.h"

/* Marks a parameter some functions of a table of functions ignore. */
#define UNUSED_ARG __attribute__((unused))

const char *const fdp__tcp_flag_names[12] = {
    "fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr", "ns",
    "[200]", "[400]", "[800]",
};

const char *const fdp__ct_state_names[8] = {
    "new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat",
};

const char *const fdp__tun_flag_names[1] = { "oam" };
static_assert(FDP_TUN_F_OAM == 1, "fdp__tun_flag_names[] follows tun_flags");
static_assert(FDP_CT_NEW == 1 << 0 && FDP_CT_EST == 1 << 1
              && FDP_CT_REL == 1 << 2 && FDP_CT_RPL == 1 << 3
              && FDP_CT_INV == 1 << 4 && FDP_CT_TRK == 1 << 5
              && FDP_CT_SNAT == 1 << 6 && FDP_CT_DNAT == 1 << 7,
              "fdp__ct_state_names[] follows the ct_state bits");

static void
format_mac(struct fdp__ds *ds, uint64_t mac)
{
    fdp__ds_printf(ds, "%02x:%02x:%02x:%02x:%02x:%02x",
                   (unsigned int) (mac >> 40) & 0xff,
                   (unsigned int) (mac >> 32) & 0xff,
                   (unsigned int) (mac >> 24) & 0xff,
                   (unsigned int) (mac >> 16) & 0xff,
                   (unsigned int) (mac >> 8) & 0xff,
                   (unsigned int) mac & 0xff);
}

static void
format_ipv4(struct fdp__ds *ds, uint32_t ip)
{
    for (int shift = 24; shift >= 0; shift -= 8) {
        fdp__ds_put_uint(ds, (ip >> shift) & 0xff);
        if (shift) {
            fdp__ds_putc(ds, '.');
        }
    }
}

static void
format_ipv6(struct fdp__ds *ds, fdp_u128 ip)
{
    uint8_t bytes[16];
    char buf[INET6_ADDRSTRLEN];

    for (int i = 0; i < 16; i++) {
        bytes[i] = (uint8_t) (ip >> (8 * (15 - i)));
    }
    fdp__ds_put(ds, inet_ntop(AF_INET6, bytes, buf, sizeof buf));
}

/* If 'mask' over 'n_bits' is a prefix mask, returns its length, else -1. */
static int
prefix_len(fdp_u128 mask, unsigned int n_bits)
{
    fdp_u128 host = ~mask & fdp__ones(n_bits);

    if (host & (host + 1)) {
        return -1;
    }
    int len = (int) n_bits;
    for (; host; host >>= 1) {
        len--;
    }
    return len;
}

void
fdp__format_value(struct fdp__ds *ds, enum fdp_field f, fdp_u128 v)
{
    const struct fdp__field *field = fdp__field(f);

    switch (field->syntax) {
    case FDP__S_DEC:
    case FDP__S_VLAN_VID:
    case FDP__S_FRAG:
        fdp__ds_put_uint(ds, (uint64_t) v);
        break;
    case FDP__S_HEX:
        if (v >> 64) {
            /* ct_label: as Open vSwitch's ds_put_hex(), no leading
             * zeros. */
            fdp__ds_printf(ds, "%#" PRIx64 "%016" PRIx64,
                           (uint64_t) (v >> 64), (uint64_t) v);
        } else {
            fdp__ds_printf(ds, "%#" PRIx64, (uint64_t) v);
        }
        break;
    case FDP__S_HEX4:
        fdp__ds_printf(ds, "0x%04" PRIx64, (uint64_t) v);
        break;
    case FDP__S_HEX5:
        fdp__ds_printf(ds, "0x%05" PRIx64, (uint64_t) v);
        break;
    case FDP__S_TCP_FLAGS:
    case FDP__S_CT_STATE:
    case FDP__S_TUN_FLAGS:
        fdp__ds_printf(ds, "%#" PRIx64, (uint64_t) v);
        break;
    case FDP__S_PORT: {
        const char *name = fdp__port_name((uint32_t) v);
        if (name) {
            fdp__ds_put(ds, name);
        } else {
            fdp__ds_put_uint(ds, (uint64_t) v);
        }
        break;
    }
    case FDP__S_MAC:
        format_mac(ds, (uint64_t) v);
        break;
    case FDP__S_IPV4:
        format_ipv4(ds, (uint32_t) v);
        break;
    case FDP__S_IPV6:
        format_ipv6(ds, v);
        break;
    case FDP__S_TOS:
        fdp__ds_put_uint(ds, (uint64_t) v << 2);
        break;
    }
}

/* Appends "/MASK" in the syntax of field 'f' (not called for full masks). */
static void
format_mask(struct fdp__ds *ds, enum fdp_field f, fdp_u128 mask)
{
    const struct fdp__field *field = fdp__field(f);

    fdp__ds_putc(ds, '/');
    switch (field->syntax) {
    case FDP__S_IPV4:
    case FDP__S_IPV6: {
        int len = prefix_len(mask, field->n_bits);
        if (len >= 0) {
            fdp__ds_put_uint(ds, (uint64_t) len);
        } else {
            fdp__format_value(ds, f, mask);
        }
        break;
    }
    case FDP__S_DEC:
        fdp__ds_printf(ds, "0x%" PRIx64, (uint64_t) mask);
        break;
    default:
        fdp__format_value(ds, f, mask);
        break;
    }
}

/* A field of flags (tcp_flags, ct_state, tun_flags) as match_format()
 * prints it: with every flag matched, the set ones joined by '|' ("0" if
 * none); otherwise each matched flag with its sign, in bit order.
 * tun_flags always takes the signed form in a match
 * (format_flow_tunnel()); 'signed_form' false asks for the other, as a
 * set_field value prints ("oam", "0"). */
static void
format_flags(struct fdp__ds *ds, enum fdp_field f, uint32_t value,
             uint32_t mask, bool signed_form)
{
    unsigned int n;
    const char *const *names = fdp__flag_names(f, &n);

    if (mask == (uint32_t) fdp__ones(n) && !signed_form) {
        if (!value) {
            fdp__ds_putc(ds, '0');
        }
        for (unsigned int i = 0; i < n; i++) {
            if (value & (1u << i)) {
                fdp__ds_put(ds, names[i]);
                value &= ~(1u << i);
                if (value) {
                    fdp__ds_putc(ds, '|');
                }
            }
        }
    } else {
        for (unsigned int i = 0; i < n; i++) {
            if (mask & (1u << i)) {
                fdp__ds_putc(ds, value & (1u << i) ? '+' : '-');
                fdp__ds_put(ds, names[i]);
            }
        }
    }
}

static void
format_frag(struct fdp__ds *ds, unsigned int value, unsigned int mask)
{
    static const char *const names[4][4] = {
        /* Indexed by mask, then value. */
        [FDP_FRAG_ANY] = { "no", "yes", "no", "yes" },
        [FDP_FRAG_LATER] = { "not_later", "not_later", "later", "later" },
        [FDP_FRAG_ANY | FDP_FRAG_LATER] = { "no", "first", "<error>",
                                            "later" },
    };
    fdp__ds_put(ds, names[mask][value]);
}

void
fdp__format_field(struct fdp__ds *ds, const struct fdp_match *m,
                  enum fdp_field f, const char *name)
{
    const struct fdp__field *field = fdp__field(f);
    fdp_u128 value = fdp__match_get_value(m, f);

    if (fdp__match_has_range(m, f)) {
        fdp__ds_put(ds, name);
        fdp__ds_putc(ds, '=');
        fdp__format_value(ds, f, value);
        fdp__ds_putc(ds, '-');
        fdp__format_value(ds, f, fdp__key_get(&m->hi, f));
        fdp__ds_putc(ds, ',');
        return;
    }

    fdp_u128 mask = fdp__match_get_mask(m, f);
    if (!mask) {
        return;
    }
    fdp__ds_put(ds, name);
    fdp__ds_putc(ds, '=');
    if (fdp__is_flag_syntax(f)) {
        format_flags(ds, f, (uint32_t) value, (uint32_t) mask,
                     field->syntax == FDP__S_TUN_FLAGS);
    } else if (field->syntax == FDP__S_FRAG) {
        format_frag(ds, (unsigned int) value, (unsigned int) mask);
    } else if (mask == fdp__ones(field->n_bits)) {
        fdp__format_value(ds, f, value);
    } else {
        /* A masked number prints in hex, as ovs-ofctl does. */
        if (field->syntax == FDP__S_DEC) {
            fdp__ds_printf(ds, "0x%" PRIx64, (uint64_t) value);
        } else {
            fdp__format_value(ds, f, value);
        }
        format_mask(ds, f, mask);
    }
    fdp__ds_putc(ds, ',');
}

/* ---------------------------------------------------------------------- */
/* Matches.                                                                */

static bool
field_present(const struct fdp_match *m, enum fdp_field f)
{
    return fdp__match_get_mask(m, f) || fdp__match_has_range(m, f);
}

/* The shorthand for dl_type and nw_proto, as ovs-ofctl 3.1 picks it (it
 * has no "igmp": IGMP prints as ip,nw_proto=2).
 * Sets '*skip_proto' if the shorthand also says nw_proto. */
static const char *
shorthand(const struct fdp_match *m, bool *skip_proto)
{
    static const struct {
        uint16_t dl_type;
        int nw_proto;           /* -1: any. */
        const char *name;
    } names[] = {
        { FDP_ETH_TYPE_IP, FDP_IPPROTO_ICMP, "icmp" },
        { FDP_ETH_TYPE_IP, FDP_IPPROTO_TCP, "tcp" },
        { FDP_ETH_TYPE_IP, FDP_IPPROTO_UDP, "udp" },
        { FDP_ETH_TYPE_IP, FDP_IPPROTO_SCTP, "sctp" },
        { FDP_ETH_TYPE_IP, -1, "ip" },
        { FDP_ETH_TYPE_IPV6, FDP_IPPROTO_ICMPV6, "icmp6" },
        { FDP_ETH_TYPE_IPV6, FDP_IPPROTO_TCP, "tcp6" },
        { FDP_ETH_TYPE_IPV6, FDP_IPPROTO_UDP, "udp6" },
        { FDP_ETH_TYPE_IPV6, FDP_IPPROTO_SCTP, "sctp6" },
        { FDP_ETH_TYPE_IPV6, -1, "ipv6" },
        { FDP_ETH_TYPE_ARP, -1, "arp" },
        { FDP_ETH_TYPE_RARP, -1, "rarp" },
        { FDP_ETH_TYPE_MPLS, -1, "mpls" },
        { FDP_ETH_TYPE_MPLS_MCAST, -1, "mplsm" },
    };
    int dl_type = fdp__match_dl_type(m);
    int proto = fdp__match_nw_proto(m);

    *skip_proto = false;
    for (size_t i = 0; i < FDP_ARRAY_SIZE(names); i++) {
        if (names[i].dl_type == dl_type
            && (names[i].nw_proto < 0 || names[i].nw_proto == proto)) {
            *skip_proto = names[i].nw_proto >= 0;
            return names[i].name;
        }
    }
    return NULL;
}

static void
format_vlan(struct fdp__ds *ds, const struct fdp_match *m)
{
    uint32_t mask = (uint32_t) fdp__match_get_mask(m, FDP_F_VLAN_TCI);
    uint32_t tci = (uint32_t) fdp__match_get_value(m, FDP_F_VLAN_TCI);
    uint32_t vid_mask = mask & FDP_VLAN_VID_MASK;
    uint32_t pcp_mask = mask & FDP_VLAN_PCP_MASK;
    bool vid_range = fdp__match_has_range(m, FDP_F_DL_VLAN);
    bool pcp_range = fdp__match_has_range(m, FDP_F_DL_VLAN_PCP);

    if (fdp__match_has_range(m, FDP_F_VLAN_TCI)) {
        fdp__format_field(ds, m, FDP_F_VLAN_TCI, "vlan_tci");
    } else if ((mask & FDP_VLAN_CFI) && (tci & FDP_VLAN_CFI)
               && (!vid_mask || vid_mask == FDP_VLAN_VID_MASK)
               && (!pcp_mask || pcp_mask == FDP_VLAN_PCP_MASK)
               && (vid_mask || pcp_mask || vid_range || pcp_range)) {
        if (vid_mask || vid_range) {
            fdp__format_field(ds, m, FDP_F_DL_VLAN, "dl_vlan");
        }
        if (pcp_mask || pcp_range) {
            fdp__format_field(ds, m, FDP_F_DL_VLAN_PCP, "dl_vlan_pcp");
        }
        return;
    } else if (mask) {
        fdp__format_field(ds, m, FDP_F_VLAN_TCI, "vlan_tci");
    }
    /* Ranges on the views that the tci text above did not cover. */
    if (vid_range) {
        fdp__format_field(ds, m, FDP_F_DL_VLAN, "dl_vlan");
    }
    if (pcp_range) {
        fdp__format_field(ds, m, FDP_F_DL_VLAN_PCP, "dl_vlan_pcp");
    }
}

/* The registers, as match_format() prints them: reg0 to reg15, each with
 * its own value and mask.  An xreg is only a name for two regs (xreg0 is
 * reg0 high, reg1 low), so a masked xreg prints as its two halves, as
 * ovs-ofctl prints it; only a range, flowdp's extension, needs the xreg's
 * own name, because a range over 64 bits is not two ranges over 32.  The
 * parser keeps an xreg range apart from ranges on its halves (they claim
 * the same bits), so at most one of the two forms is present.  The same
 * goes for an xxreg, two xregs, whose range prints under its own name. */
static void
format_regs(struct fdp__ds *ds, const struct fdp_match *m)
{
    static_assert(FDP_F_REG15 - FDP_F_REG0 == 15
                  && FDP_F_XREG7 - FDP_F_XREG0 == 7
                  && FDP_F_XXREG3 - FDP_F_XXREG0 == 3,
                  "the registers are consecutive fields");

    for (int x = 0; x < 8; x++) {
        enum fdp_field xreg = (enum fdp_field) (FDP_F_XREG0 + x);
        enum fdp_field xxreg = (enum fdp_field) (FDP_F_XXREG0 + x / 2);
        if (fdp__match_has_range(m, xxreg)) {
            if (x % 2 == 0) {
                char name[8];
                snprintf(name, sizeof name, "xxreg%d", x / 2);
                fdp__format_field(ds, m, xxreg, name);
            }
            continue;
        }
        if (fdp__match_has_range(m, xreg)) {
            char name[8];
            snprintf(name, sizeof name, "xreg%d", x);
            fdp__format_field(ds, m, xreg, name);
            continue;
        }
        for (int half = 0; half < 2; half++) {
            enum fdp_field reg = (enum fdp_field) (FDP_F_REG0 + 2 * x + half);
            fdp__format_field(ds, m, reg, fdp__field(reg)->name);
        }
    }
}

/* The connection-tracking fields, in match_format()'s order.  The IPv4
 * and IPv6 tuples share storage (key.h): dl_type says which one the match
 * holds, as the prerequisites require. */
static void
format_ct(struct fdp__ds *ds, const struct fdp_match *m, int dl_type)
{
    bool v4 = dl_type == FDP_ETH_TYPE_IP, v6 = dl_type == FDP_ETH_TYPE_IPV6;

    fdp__format_field(ds, m, FDP_F_CT_STATE, "ct_state");
    fdp__format_field(ds, m, FDP_F_CT_ZONE, "ct_zone");
    fdp__format_field(ds, m, FDP_F_CT_MARK, "ct_mark");
    fdp__format_field(ds, m, FDP_F_CT_LABEL, "ct_label");
    if (v4) {
        fdp__format_field(ds, m, FDP_F_CT_NW_SRC, "ct_nw_src");
    } else if (v6) {
        fdp__format_field(ds, m, FDP_F_CT_IPV6_SRC, "ct_ipv6_src");
    }
    if (v4) {
        fdp__format_field(ds, m, FDP_F_CT_NW_DST, "ct_nw_dst");
    } else if (v6) {
        fdp__format_field(ds, m, FDP_F_CT_IPV6_DST, "ct_ipv6_dst");
    }
    fdp__format_field(ds, m, FDP_F_CT_NW_PROTO, "ct_nw_proto");
    fdp__format_field(ds, m, FDP_F_CT_TP_SRC, "ct_tp_src");
    fdp__format_field(ds, m, FDP_F_CT_TP_DST, "ct_tp_dst");
}

/* The tunnel fields, in format_flow_tunnel()'s order: Open vSwitch's
 * match_format() prints them after the registers, before metadata.
 * tun_tos and tun_ttl have no OpenFlow encoding, so ovs-ofctl never
 * prints them; Open vSwitch's datapath flows print tun_tos in hex without
 * "0x", which would not read back: flowdp prints both in decimal. */
static void
format_tunnel(struct fdp__ds *ds, const struct fdp_match *m)
{
    /* The addresses' family bit (lib/field.h) says which names hold
     * them. */
    bool v6 = m->value.w[FDP__TUN_IPV6_WORD] & FDP__TUN_IPV6_BIT;

    fdp__format_field(ds, m, FDP_F_TUN_ID, "tun_id");
    if (!v6) {
        fdp__format_field(ds, m, FDP_F_TUN_SRC, "tun_src");
        fdp__format_field(ds, m, FDP_F_TUN_DST, "tun_dst");
    } else {
        fdp__format_field(ds, m, FDP_F_TUN_IPV6_SRC, "tun_ipv6_src");
        fdp__format_field(ds, m, FDP_F_TUN_IPV6_DST, "tun_ipv6_dst");
    }
    fdp__format_field(ds, m, FDP_F_TUN_GBP_ID, "tun_gbp_id");
    fdp__format_field(ds, m, FDP_F_TUN_GBP_FLAGS, "tun_gbp_flags");
    fdp__format_field(ds, m, FDP_F_TUN_TOS, "tun_tos");
    fdp__format_field(ds, m, FDP_F_TUN_TTL, "tun_ttl");
    fdp__format_field(ds, m, FDP_F_TUN_FLAGS, "tun_flags");
    fdp__tun_md_format(ds, m);
}

/* Neighbour discovery, in an ICMPv6 match, as match_format() prints it
 * after icmp_code.  The parser refuses these fields without the ND
 * prerequisites, so they are present only in an ND match. */
static void
format_nd(struct fdp__ds *ds, const struct fdp_match *m)
{
    fdp__format_field(ds, m, FDP_F_ND_TARGET, "nd_target");
    fdp__format_field(ds, m, FDP_F_ND_SLL, "nd_sll");
    fdp__format_field(ds, m, FDP_F_ND_TLL, "nd_tll");
    fdp__format_field(ds, m, FDP_F_ND_RESERVED, "nd_reserved");
    fdp__format_field(ds, m, FDP_F_ND_OPTIONS_TYPE, "nd_options_type");
}

static void
format_match(struct fdp__ds *ds, const struct fdp_match *m, int priority)
{
    int dl_type = fdp__match_dl_type(m);
    int proto = fdp__match_nw_proto(m);
    bool is_arp = dl_type == FDP_ETH_TYPE_ARP || dl_type == FDP_ETH_TYPE_RARP;
    bool skip_proto;
    const char *sh = shorthand(m, &skip_proto);

    if (priority < 0) {
        fdp__ds_printf(ds, "priority=%d,", priority);
    } else if (priority != FDP_DEFAULT_PRIORITY) {
        fdp__ds_put(ds, "priority=");
        fdp__ds_put_uint(ds, (uint64_t) priority);
        fdp__ds_putc(ds, ',');
    }
    fdp__format_field(ds, m, FDP_F_PKT_MARK, "pkt_mark");
    fdp__format_field(ds, m, FDP_F_CONJ_ID, "conj_id");
    format_ct(ds, m, dl_type);
    if (sh) {
        fdp__ds_put(ds, sh);
        fdp__ds_putc(ds, ',');
    }
    format_regs(ds, m);
    format_tunnel(ds, m);
    fdp__format_field(ds, m, FDP_F_METADATA, "metadata");
    fdp__format_field(ds, m, FDP_F_IN_PORT, "in_port");
    format_vlan(ds, m);
    fdp__format_field(ds, m, FDP_F_DL_SRC, "dl_src");
    fdp__format_field(ds, m, FDP_F_DL_DST, "dl_dst");
    if (!sh) {
        fdp__format_field(ds, m, FDP_F_DL_TYPE, "dl_type");
    }
    if (dl_type == FDP_ETH_TYPE_IPV6) {
        fdp__format_field(ds, m, FDP_F_IPV6_SRC, "ipv6_src");
        fdp__format_field(ds, m, FDP_F_IPV6_DST, "ipv6_dst");
        fdp__format_field(ds, m, FDP_F_IPV6_LABEL, "ipv6_label");
    } else if (is_arp) {
        fdp__format_field(ds, m, FDP_F_ARP_SPA, "arp_spa");
        fdp__format_field(ds, m, FDP_F_ARP_TPA, "arp_tpa");
    } else {
        fdp__format_field(ds, m, FDP_F_NW_SRC, "nw_src");
        fdp__format_field(ds, m, FDP_F_NW_DST, "nw_dst");
    }
    if (!skip_proto) {
        fdp__format_field(ds, m, is_arp ? FDP_F_ARP_OP : FDP_F_NW_PROTO,
                          is_arp ? "arp_op" : "nw_proto");
    }
    if (is_arp) {
        fdp__format_field(ds, m, FDP_F_ARP_SHA, "arp_sha");
        fdp__format_field(ds, m, FDP_F_ARP_THA, "arp_tha");
    }
    fdp__format_field(ds, m, FDP_F_NW_TOS, "nw_tos");
    fdp__format_field(ds, m, FDP_F_NW_ECN, "nw_ecn");
    fdp__format_field(ds, m, FDP_F_NW_TTL, "nw_ttl");
    fdp__format_field(ds, m, FDP_F_IP_FRAG, "nw_frag");
    if ((dl_type == FDP_ETH_TYPE_IP && proto == FDP_IPPROTO_ICMP)
        || (dl_type == FDP_ETH_TYPE_IPV6 && proto == FDP_IPPROTO_ICMPV6)) {
        fdp__format_field(ds, m, FDP_F_ICMP_TYPE, "icmp_type");
        fdp__format_field(ds, m, FDP_F_ICMP_CODE, "icmp_code");
        if (dl_type == FDP_ETH_TYPE_IPV6) {
            format_nd(ds, m);
        }
    } else {
        fdp__format_field(ds, m, FDP_F_TP_SRC, "tp_src");
        fdp__format_field(ds, m, FDP_F_TP_DST, "tp_dst");
    }
    if ((dl_type == FDP_ETH_TYPE_IP || dl_type == FDP_ETH_TYPE_IPV6)
        && proto == FDP_IPPROTO_TCP && field_present(m, FDP_F_TCP_FLAGS)) {
        fdp__format_field(ds, m, FDP_F_TCP_FLAGS, "tcp_flags");
    }
    fdp__ds_chomp(ds, ',');
}

char *
fdp_match_format(const struct fdp_match *m, int priority)
{
    struct fdp__ds ds = FDP__DS_INIT;

    format_match(&ds, m, priority);
    return fdp__ds_steal(&ds);
}

/* ---------------------------------------------------------------------- */
/* Actions.                                                                */

/* The OpenFlow 1.3 (OXM) name ovs-ofctl prints for set_field on 'f': the
 * first of the field's set_field names whose prerequisite 'm' meets
 * ("udp_dst" under udp).  The parser only builds set_field actions whose
 * prerequisites the match meets; for others, built through the API, the
 * field's own name is the best there is. */
static const char *
oxm_name(enum fdp_field f, const struct fdp_match *m)
{
    for (size_t i = 0; i < fdp__n_set_field_names; i++) {
        const struct fdp__set_field_name *sf = &fdp__set_field_names[i];
        if (sf->field == f && fdp__match_meets(m, sf->prereq)) {
            return sf->name;
        }
    }
    return fdp__field(f)->name;
}

/* The mod_xxx name ovs-ofctl prints for a set-field action, or NULL. */
static const char *
mod_name(enum fdp_field f)
{
    for (size_t i = 0; i < fdp__n_mod_actions; i++) {
        if (fdp__mod_actions[i].field == f && fdp__mod_actions[i].canonical) {
            return fdp__mod_actions[i].name;
        }
    }
    return NULL;
}

static void
format_set_field_value(struct fdp__ds *ds, enum fdp_field f, fdp_u128 v)
{
    /* ovs-ofctl prints ipv6_label in set_field as plain hex, and
     * tun_flags as its flags ("oam", or "0"). */
    if (fdp__field(f)->syntax == FDP__S_TUN_FLAGS) {
        format_flags(ds, f, (uint32_t) v, 1, false);
    } else if (f == FDP_F_IPV6_LABEL) {
        fdp__ds_printf(ds, "%#" PRIx64, (uint64_t) v);
    } else {
        fdp__format_value(ds, f, v);
    }
}

/* One formatter per action kind, indexed by kind (FDP__ACTION_KINDS in
 * lib/actions-internal.h): each appends the action's text, without a separator. */
typedef void format_action_fn(struct fdp__ds *, const struct fdp__action *,
                              const struct fdp_match *);

static void
format_output(struct fdp__ds *ds, const struct fdp__action *a,
              const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_put(ds, "output:");
    fdp__ds_put_uint(ds, a->arg);
}

static void
format_in_port(struct fdp__ds *ds, const struct fdp__action *a UNUSED_ARG,
               const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_put(ds, "IN_PORT");
}

static void
format_vlan_vid(struct fdp__ds *ds, const struct fdp__action *a,
                const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_printf(ds, "mod_vlan_vid:%" PRIu32, a->arg);
}

static void
format_vlan_pcp(struct fdp__ds *ds, const struct fdp__action *a,
                const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_printf(ds, "mod_vlan_pcp:%" PRIu32, a->arg);
}

static void
format_strip_vlan(struct fdp__ds *ds,
                  const struct fdp__action *a UNUSED_ARG,
                  const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_put(ds, "strip_vlan");
}

static void
format_push_vlan(struct fdp__ds *ds, const struct fdp__action *a,
                 const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_printf(ds, "push_vlan:0x%04" PRIx32, a->arg);
}

static void
format_dec_ttl(struct fdp__ds *ds, const struct fdp__action *a UNUSED_ARG,
               const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_put(ds, "dec_ttl");
}

static void
format_set_field(struct fdp__ds *ds, const struct fdp__action *a,
                 const struct fdp_match *m)
{
    enum fdp_field f = (enum fdp_field) a->field;
    fdp_u128 v = fdp__action_value(a);

    if ((a->flags & FDP__ACT_MOD) && mod_name(f)) {
        fdp__ds_printf(ds, "%s:", mod_name(f));
        fdp__format_value(ds, f, v);
    } else {
        fdp__ds_put(ds, "set_field:");
        format_set_field_value(ds, f, v);
        fdp__ds_printf(ds, "->%s", oxm_name(f, m));
    }
}

/* ovs-ofctl leaves out goto_table under NXM, where it prints the action
 * as resubmit(,N); flowdp keeps the spelling, so a corpus written for NXM
 * spells it resubmit. */
static void
format_goto_table(struct fdp__ds *ds, const struct fdp__action *a,
                  const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_printf(ds, "goto_table:%" PRIu32, a->arg);
}

static void
format_port(struct fdp__ds *ds, uint32_t port)
{
    const char *name = fdp__port_name(port);

    if (name) {
        fdp__ds_put(ds, name);
    } else {
        fdp__ds_printf(ds, "%" PRIu32, port);
    }
}

/* As ovs-ofctl: "resubmit:PORT" when the table is the flow's own, else
 * "resubmit(PORT,TABLE)" with PORT left empty for the packet's own. */
static void
format_resubmit(struct fdp__ds *ds, const struct fdp__action *a,
                const struct fdp_match *m UNUSED_ARG)
{
    uint32_t port = fdp__action_resubmit_port(a);
    unsigned int table = fdp__action_resubmit_table(a);

    if (table == FDP__RESUBMIT_SAME_TABLE && port != FDP_PORT_IN_PORT) {
        fdp__ds_put(ds, "resubmit:");
        format_port(ds, port);
        return;
    }
    fdp__ds_put(ds, "resubmit(");
    if (port != FDP_PORT_IN_PORT) {
        format_port(ds, port);
    }
    fdp__ds_putc(ds, ',');
    if (table != FDP__RESUBMIT_SAME_TABLE) {
        fdp__ds_printf(ds, "%u", table);
    }
    fdp__ds_putc(ds, ')');
}

static bool
match_meets(const void *m, enum fdp__prereq pr)
{
    return fdp__match_meets(m, pr);
}

/* "NAME[]", "NAME[a]" or "NAME[a..b]": bits ofs..ofs+n_bits-1 of field
 * 'f', by the name ovs-ofctl prints under 'm', as mf_format_subfield().
 * For a load ('load' true) of a name wider than the key's field
 * (NXM_OF_ARP_OP's 16 bits over arp_op's 8), all of the key's bits are
 * all of the field, as the parser reads "load:V->NXM_OF_ARP_OP[]"; a move
 * of them prints its bits. */
static void
format_subfield_of(struct fdp__ds *ds, enum fdp_field f, unsigned int ofs,
                   unsigned int n_bits, const struct fdp_match *m, bool load)
{
    const struct fdp__nxm_field *nf = fdp__nxm_field_for(f, match_meets, m);
    unsigned int width = nf ? nf->n_bits : fdp__field(f)->n_bits;

    if (load && width > fdp__field(f)->n_bits) {
        width = fdp__field(f)->n_bits;
    }
    fdp__ds_put(ds, nf ? nf->name : fdp__field(f)->name);
    if (!ofs && n_bits >= width) {
        fdp__ds_put(ds, "[]");
    } else if (n_bits == 1) {
        fdp__ds_printf(ds, "[%u]", ofs);
    } else {
        fdp__ds_printf(ds, "[%u..%u]", ofs, ofs + n_bits - 1);
    }
}

static void
format_subfield(struct fdp__ds *ds, enum fdp_field f, unsigned int ofs,
                unsigned int n_bits, const struct fdp_match *m)
{
    format_subfield_of(ds, f, ofs, n_bits, m, false);
}

/* A 128-bit number in hex, as ovs-ofctl prints ct_label ("0x1", "0"). */
static void
put_hex128(struct fdp__ds *ds, fdp_u128 v)
{
    uint64_t hi = (uint64_t) (v >> 64);

    if (hi) {
        fdp__ds_printf(ds, "%#" PRIx64 "%016" PRIx64, hi, (uint64_t) v);
    } else {
        fdp__ds_printf(ds, "%#" PRIx64, (uint64_t) v);
    }
}

/* The loads Open vSwitch encodes a masked write to 'f' as (NXAST_REG_LOAD),
 * each followed by a comma: one per run of mask bits from the lowest, a
 * run being at most 64 bits, so that a load of all of a 128-bit field
 * prints as [0..63] and [64..127]. */
static void
format_loads(struct fdp__ds *ds, enum fdp_field f, fdp_u128 value,
             fdp_u128 mask, const struct fdp_match *m)
{
    unsigned int width = fdp__field(f)->n_bits;
    unsigned int ofs = 0;

    while (ofs < width) {
        if (!((mask >> ofs) & 1)) {
            ofs++;
            continue;
        }
        unsigned int end = ofs + 1;
        while (end < width && end < ofs + 64 && ((mask >> end) & 1)) {
            end++;
        }
        unsigned int n = end - ofs;
        fdp__ds_printf(ds, "load:%#" PRIx64 "->",
                       (uint64_t) ((value >> ofs) & fdp__ones(n)));
        format_subfield_of(ds, f, ofs, n, m, true);
        fdp__ds_putc(ds, ',');
        ofs = end;
    }
}

/* A masked write, as ovs-ofctl prints it:
 *   write_metadata:V[/M] if written so;
 *   set_field:V->F if written so, over the whole field;
 *   otherwise the loads of format_loads(): ovs-ofctl turns
 *   set_field:5/0xf0f->reg2 into
 *   load:0x5->NXM_NX_REG2[0..3],load:0->NXM_NX_REG2[8..11]. */
static void
format_set_masked(struct fdp__ds *ds, const struct fdp__action *a,
                  const struct fdp_match *m)
{
    enum fdp_field f = (enum fdp_field) a->field;
    fdp_u128 value = fdp__action_masked_value(a);
    fdp_u128 mask = fdp__action_masked_mask(a);
    fdp_u128 full = fdp__ones(fdp__field(f)->n_bits);

    if (a->flags & FDP__ACT_WRITE_METADATA) {
        fdp__ds_printf(ds, "write_metadata:%#" PRIx64, (uint64_t) value);
        if (mask != full) {
            fdp__ds_printf(ds, "/%#" PRIx64, (uint64_t) mask);
        }
        return;
    }
    if (!(a->flags & FDP__ACT_LOAD) && mask == full) {
        fdp__ds_put(ds, "set_field:");
        put_hex128(ds, value);
        fdp__ds_printf(ds, "->%s", fdp__field(f)->name);
        return;
    }
    format_loads(ds, f, value, mask, m);
    fdp__ds_chomp(ds, ',');
}

static void
format_move(struct fdp__ds *ds, const struct fdp__action *a,
            const struct fdp_match *m)
{
    struct fdp__move mv = fdp__action_move(a);

    fdp__ds_put(ds, "move:");
    format_subfield(ds, mv.src, mv.src_ofs, mv.n_bits, m);
    fdp__ds_put(ds, "->");
    format_subfield(ds, mv.dst, mv.dst_ofs, mv.n_bits, m);
}

static void
format_conjunction(struct fdp__ds *ds, const struct fdp__action *a,
                   const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_printf(ds, "conjunction(%" PRIu32 ",%u/%u)", a->arg,
                   fdp__action_conj_clause(a), fdp__action_conj_n(a));
}


/* An exec() write (a nested SET_MASKED record of a ct action): as
 * ovs-ofctl, "set_field:V->F" for a whole-field set_field, otherwise the
 * loads Open vSwitch encodes it as (NXAST_REG_LOAD), one per run of mask
 * bits from the lowest, a run being at most 64 bits: a load of all of
 * ct_label prints as [0..63] and [64..127]. */
static void
format_ct_write(struct fdp__ds *ds, enum fdp_field f, bool load,
                fdp_u128 value, fdp_u128 mask, const struct fdp_match *m)
{
    unsigned int width = fdp__field(f)->n_bits;

    if (!load && mask == fdp__ones(width)) {
        fdp__ds_put(ds, "set_field:");
        put_hex128(ds, value);
        fdp__ds_printf(ds, "->%s,", fdp__field(f)->name);
        return;
    }
    format_loads(ds, f, value, mask, m);
}

/* An IPv6 address of a nat range, in brackets when a port follows (as
 * Open vSwitch's ipv6_format_addr_bracket()). */
static void
put_nat_addr(struct fdp__ds *ds, const struct fdp__ct_nat *nat,
             struct fdp_value v)
{
    if (nat->flags & FDP__NAT_IPV6) {
        bool brackets = nat->flags & FDP__NAT_PORT;
        if (brackets) {
            fdp__ds_putc(ds, '[');
        }
        fdp__format_value(ds, FDP_F_IPV6_SRC, fdp__from_value(v));
        if (brackets) {
            fdp__ds_putc(ds, ']');
        }
    } else {
        fdp__format_value(ds, FDP_F_NW_SRC, fdp__from_value(v));
    }
}

/* nat, or nat(src|dst[=ADDR[-ADDR][:PORT[-PORT]]][,persistent][,hash]
 * [,random]), as Open vSwitch's format_NAT(). */
static void
format_ct_nat(struct fdp__ds *ds, const struct fdp__ct_nat *nat)
{
    fdp__ds_put(ds, "nat");
    if (!(nat->flags & (FDP__NAT_SRC | FDP__NAT_DST))) {
        fdp__ds_putc(ds, ',');
        return;
    }
    fdp__ds_put(ds, nat->flags & FDP__NAT_SRC ? "(src" : "(dst");
    if (nat->flags & FDP__NAT_ADDR) {
        fdp__ds_putc(ds, '=');
        put_nat_addr(ds, nat, nat->addr_min);
        if (memcmp(&nat->addr_min, &nat->addr_max, sizeof nat->addr_min)) {
            fdp__ds_putc(ds, '-');
            put_nat_addr(ds, nat, nat->addr_max);
        }
        if (nat->flags & FDP__NAT_PORT) {
            fdp__ds_printf(ds, ":%u", nat->port_min);
            if (nat->port_max != nat->port_min) {
                fdp__ds_printf(ds, "-%u", nat->port_max);
            }
        }
        if (nat->flags & FDP__NAT_PERSISTENT) {
            fdp__ds_put(ds, ",persistent");
        }
        if (nat->flags & FDP__NAT_HASH) {
            fdp__ds_put(ds, ",hash");
        }
        if (nat->flags & FDP__NAT_RANDOM) {
            fdp__ds_put(ds, ",random");
        }
    }
    fdp__ds_put(ds, "),");
}

/* ct(commit,force,table=N,zone=Z,nat...,exec(...)), in Open vSwitch's
 * order (format_CT()), "ct()" when nothing is given and no zone=0.  A
 * resolved record (the pipeline's composed form, shown by trace) prints
 * the same way with its constants: the zone as a number, exec() as the
 * set_field/load of its mark and label. */
static void
format_ct_action(struct fdp__ds *ds, const struct fdp__action *a,
                 const struct fdp_match *m)
{
    struct fdp__dp_ct dp;
    bool resolved = a->flags & FDP__ACT_CT_RESOLVED;
    unsigned int flags, table, zone;

    if (resolved) {
        if (a->n_words != FDP__DPCT_RECORD_WORDS) {
            fdp__ds_put(ds, "ct(?)");
            return;
        }
        memcpy(&dp, (const uint64_t *) a + 1, sizeof dp);
        flags = dp.flags;
        table = dp.table;
        zone = dp.zone;
    } else {
        flags = fdp__action_ct_flags(a);
        table = fdp__action_ct_table(a);
        zone = fdp__action_ct_zone(a);
    }

    fdp__ds_put(ds, "ct(");
    if (flags & FDP__DPCT_COMMIT) {
        fdp__ds_put(ds, "commit,");
    }
    if (flags & FDP__DPCT_FORCE) {
        fdp__ds_put(ds, "force,");
    }
    if (flags & FDP__DPCT_RECIRC) {
        fdp__ds_printf(ds, "table=%u,", table);
    }
    if (!resolved && a->flags & FDP__ACT_CT_ZONE_FIELD) {
        fdp__ds_put(ds, "zone=");
        format_subfield(ds, (enum fdp_field) a->field, zone, 16, m);
        fdp__ds_putc(ds, ',');
    } else if (zone) {
        fdp__ds_printf(ds, "zone=%u,", zone);
    }
    struct fdp__ct_nat nat;
    unsigned int nat_pos = 0;
    if (flags & FDP__DPCT_NAT) {
        if (resolved) {
            nat = dp.nat;
        } else {
            memcpy(&nat, (const uint64_t *) a + 1, sizeof nat);
        }
        /* A nat given after exec() actions goes inside exec(), where it
         * was (format_CT()); one given first, before it. */
        nat_pos = resolved ? 0 : nat.exec_pos;
        if (!nat_pos) {
            format_ct_nat(ds, &nat);
        }
    }
    if (resolved) {
        if (dp.mark_mask || dp.label_mask.hi || dp.label_mask.lo) {
            fdp__ds_put(ds, "exec(");
            if (dp.mark_mask) {
                format_ct_write(ds, FDP_F_CT_MARK, true, dp.mark,
                                dp.mark_mask, m);
            }
            if (dp.label_mask.hi || dp.label_mask.lo) {
                format_ct_write(ds, FDP_F_CT_LABEL, true,
                                fdp__from_value(dp.label),
                                fdp__from_value(dp.label_mask), m);
            }
            fdp__ds_chomp(ds, ',');
            fdp__ds_put(ds, "),");
        }
    } else if (fdp__action_ct_exec(a) < fdp__action_ct_end(a)) {
        fdp__ds_put(ds, "exec(");
        unsigned int k = 0;
        for (const uint64_t *w = fdp__action_ct_exec(a);
             w < fdp__action_ct_end(a);
             w += ((const struct fdp__action *) w)->n_words) {
            const struct fdp__action *e = (const struct fdp__action *) w;
            if (nat_pos && k++ == nat_pos) {
                format_ct_nat(ds, &nat);
            }
            if (e->type == FDP_ACT_MOVE) {
                format_move(ds, e, m);
                fdp__ds_putc(ds, ',');
            } else if (e->n_words == 5) {
                format_ct_write(ds, (enum fdp_field) e->field,
                                e->flags & FDP__ACT_LOAD,
                                (fdp_u128) w[1] << 64 | w[2],
                                (fdp_u128) w[3] << 64 | w[4], m);
            }
            if (!e->n_words) {
                break;
            }
        }
        if (nat_pos && k <= nat_pos) {
            format_ct_nat(ds, &nat);
        }
        fdp__ds_chomp(ds, ',');
        fdp__ds_put(ds, "),");
    }
    fdp__ds_chomp(ds, ',');
    fdp__ds_putc(ds, ')');
}

static void
format_ct_clear(struct fdp__ds *ds, const struct fdp__action *a UNUSED_ARG,
                const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_put(ds, "ct_clear");
}

/* ---- The stack, output:FIELD, note, queues, clone, controller ----
 * (lib/other-actions.h), printed as Open vSwitch's format_STACK_PUSH(),
 * format_OUTPUT_REG(), format_NOTE(), format_SET_QUEUE(),
 * format_CLONE() and format_CONTROLLER() print them. */

static void
format_subfield_action(struct fdp__ds *ds, const char *name,
                       const struct fdp__action *a, const struct fdp_match *m)
{
    struct fdp__subfield sf = fdp__action_subfield(a);

    fdp__ds_put(ds, name);
    format_subfield(ds, sf.field, sf.ofs, sf.n_bits, m);
}

static void
format_stack_push(struct fdp__ds *ds, const struct fdp__action *a,
                  const struct fdp_match *m)
{
    format_subfield_action(ds, "push:", a, m);
}

static void
format_stack_pop(struct fdp__ds *ds, const struct fdp__action *a,
                 const struct fdp_match *m)
{
    format_subfield_action(ds, "pop:", a, m);
}

static void
format_output_reg(struct fdp__ds *ds, const struct fdp__action *a,
                  const struct fdp_match *m)
{
    format_subfield_action(ds, "output:", a, m);
}

/* Bytes as "01.02.0a". */
static void
format_hex_bytes(struct fdp__ds *ds, const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        fdp__ds_printf(ds, i ? ".%02x" : "%02x", data[i]);
    }
}

static void
format_note(struct fdp__ds *ds, const struct fdp__action *a,
            const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_put(ds, "note:");
    format_hex_bytes(ds, fdp__action_note_data(a), a->arg);
}

static void
format_set_queue(struct fdp__ds *ds, const struct fdp__action *a,
                 const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_printf(ds, "set_queue:%" PRIu32, a->arg);
}

static void
format_pop_queue(struct fdp__ds *ds, const struct fdp__action *a UNUSED_ARG,
                 const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_put(ds, "pop_queue");
}

static void format_action_range(struct fdp__ds *, const uint64_t *first,
                                const uint64_t *end,
                                const struct fdp_match *);

static void
format_clone(struct fdp__ds *ds, const struct fdp__action *a,
             const struct fdp_match *m)
{
    fdp__ds_put(ds, "clone(");
    format_action_range(ds, fdp__action_clone_first(a),
                        fdp__action_clone_end(a), m);
    fdp__ds_putc(ds, ')');
}

static void
format_controller(struct fdp__ds *ds, const struct fdp__action *a,
                  const struct fdp_match *m UNUSED_ARG)
{
    struct fdp__controller c = fdp__action_controller(a);

    if (fdp__controller_is_plain(&c)) {
        fdp__ds_printf(ds, "CONTROLLER:%" PRIu16, c.max_len);
        return;
    }
    fdp__ds_put(ds, "controller(");
    if (c.reason != FDP__CTL_ACTION) {
        fdp__ds_printf(ds, "reason=%s,", fdp__ctl_reason_name(c.reason));
    }
    if (c.max_len != UINT16_MAX) {
        fdp__ds_printf(ds, "max_len=%" PRIu16 ",", c.max_len);
    }
    if (c.id) {
        fdp__ds_printf(ds, "id=%" PRIu16 ",", c.id);
    }
    if (c.userdata_size) {
        fdp__ds_put(ds, "userdata=");
        format_hex_bytes(ds, c.userdata, c.userdata_size);
        fdp__ds_putc(ds, ',');
    }
    if (c.pause) {
        fdp__ds_put(ds, "pause,");
    }
    if (c.meter_id) {
        fdp__ds_printf(ds, "meter_id=%" PRIu32 ",", c.meter_id);
    }
    fdp__ds_chomp(ds, ',');
    fdp__ds_putc(ds, ')');
}

static void
format_group(struct fdp__ds *ds, const struct fdp__action *a,
             const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_printf(ds, "group:%"PRIu32, a->arg);
}

static void
format_meter(struct fdp__ds *ds, const struct fdp__action *a,
             const struct fdp_match *m UNUSED_ARG)
{
    fdp__ds_printf(ds, "meter:%" PRIu32, a->arg);
}

static void
format_learn(struct fdp__ds *ds, const struct fdp__action *a,
             const struct fdp_match *m UNUSED_ARG)
{
    fdp__learn_format(ds, a);
}

static void
format_fin_timeout(struct fdp__ds *ds, const struct fdp__action *a,
                   const struct fdp_match *m UNUSED_ARG)
{
    fdp__fin_timeout_format(ds, a);
}

/* NORMAL, FLOOD, ALL or LOCAL: the port's name alone, as ovs-ofctl
 * prints an output to a reserved port. */
static void
format_reserved(struct fdp__ds *ds, const struct fdp__action *a,
                const struct fdp_match *m UNUSED_ARG)
{
    format_port(ds, fdp__action_reserved_port(a));
}

#define FORMAT_FN(ID, FN, PREREQ) [FDP_ACT_##ID] = format_##FN,
/* check_pkt_larger: the flow form as ovs-ofctl prints it; in a composed
 * list (lib/other-actions.h), the branches as Open vSwitch's datapath
 * action check_pkt_len(size=N,gt(...),le(...)) (format_action_range()
 * leaves out the commas inside the parentheses). */
static void
format_check_pkt_larger(struct fdp__ds *ds, const struct fdp__action *a,
                        const struct fdp_match *m)
{
    if (a->flags & FDP__ACT_CPL_BRANCH) {
        fdp__ds_printf(ds, "check_pkt_len(size=%" PRIu16 ",gt(",
                       fdp__action_cpl_len(a));
    } else if (a->flags & FDP__ACT_CPL_JUMP) {
        fdp__ds_put(ds, "),le(");
    } else if (a->flags & FDP__ACT_CPL_END) {
        fdp__ds_put(ds, "))");
    } else {
        fdp__ds_printf(ds, "check_pkt_larger(%" PRIu16 ")->",
                       fdp__action_cpl_len(a));
        format_subfield(ds, (enum fdp_field) a->field,
                        fdp__action_cpl_ofs(a), 1, m);
    }
}

static format_action_fn *const format_fns[] = {
    FDP__ACTION_KINDS(FORMAT_FN)
};
#undef FORMAT_FN
static_assert(sizeof format_fns / sizeof format_fns[0] == FDP_N_ACTION_TYPES,
              "every action kind has a formatter");

/* The records from 'first' to 'end' (nested in a clone), "drop" for
 * none. */
static void
format_action_range(struct fdp__ds *ds, const uint64_t *first,
                    const uint64_t *end, const struct fdp_match *m)
{
    if (first >= end) {
        fdp__ds_put(ds, "drop");
        return;
    }
    for (const uint64_t *w = first; w < end;
         w += ((const struct fdp__action *) w)->n_words) {
        const struct fdp__action *a = (const struct fdp__action *) w;
        bool cpl = a->type == FDP_ACT_CHECK_PKT_LARGER;
        if (cpl && a->flags & (FDP__ACT_CPL_JUMP | FDP__ACT_CPL_END)) {
            fdp__ds_chomp(ds, ',');
        }
        if (a->type < FDP_N_ACTION_TYPES) {
            format_fns[a->type](ds, a, m);
            if (!cpl || !(a->flags & (FDP__ACT_CPL_BRANCH
                                      | FDP__ACT_CPL_JUMP))) {
                fdp__ds_putc(ds, ',');
            }
        }
    }
    fdp__ds_chomp(ds, ',');
}

static void
format_actions(struct fdp__ds *ds, const struct fdp_actions *acts,
               const struct fdp_match *m)
{
    const uint64_t *w = acts ? acts->words : NULL;

    format_action_range(ds, w, w ? w + acts->n_words : NULL, m);
}

char *
fdp_actions_format(const struct fdp_actions *acts, const struct fdp_match *m)
{
    struct fdp__ds ds = FDP__DS_INIT;

    format_actions(&ds, acts, m);
    return fdp__ds_steal(&ds);
}

/* ---------------------------------------------------------------------- */
/* Flows.                                                                  */

/* "MATCH actions=ACTIONS", or "MATCH" alone for a flow without actions
 * (a match given to del-flows). */
static void
format_match_actions(struct fdp__ds *ds, const struct fdp_flow_spec *flow)
{
    size_t before = ds->len;

    format_match(ds, flow->match, flow->priority);
    if (ds->len > before) {
        fdp__ds_putc(ds, ' ');
    }
    if (flow->actions) {
        fdp__ds_put(ds, "actions=");
        format_actions(ds, flow->actions, flow->match);
    } else {
        fdp__ds_chomp(ds, ' ');
    }
}

/* Seconds with millisecond precision, as ovs-ofctl: "12s", "12.345s". */
static void
format_duration(struct fdp__ds *ds, int64_t ms)
{
    if (ms < 0) {
        ms = 0;
    }
    fdp__ds_put_uint(ds, (uint64_t) (ms / 1000));
    if (ms % 1000) {
        int frac = (int) (ms % 1000);
        fdp__ds_putc(ds, '.');
        fdp__ds_putc(ds, (char) ('0' + frac / 100));
        fdp__ds_putc(ds, (char) ('0' + frac / 10 % 10));
        fdp__ds_putc(ds, (char) ('0' + frac % 10));
    }
    fdp__ds_putc(ds, 's');
}

/* The seconds from 'then_ms' to 'now_ms' as an NXST_FLOW reply carries
 * them to ovs-ofctl: 16 bits holding the age plus one (0 meaning
 * unknown), so an age of 65534 s (about 18 hours) or more reads as
 * 65534. */
#define NX_AGE_MAX (UINT16_MAX - 1)
static uint64_t
nx_age(int64_t now_ms, int64_t then_ms)
{
    uint64_t s = (uint64_t) (now_ms > then_ms ? now_ms - then_ms : 0) / 1000;

    return s < NX_AGE_MAX ? s : NX_AGE_MAX;
}
/* The flags a flow keeps, as ovs-ofctl prints them
 * (ofputil_flow_mod_flags_format()): each name and a space. */
const char *const fdp__flow_flag_names[FDP__N_FLOW_FLAGS] = {
    "send_flow_rem", "check_overlap", "reset_counts", "no_packet_counts",
    "no_byte_counts",
};
_Static_assert(FDP_FLOW_F_ALL == (1 << FDP__N_FLOW_FLAGS) - 1,
               "a name for each flag");

static void
format_flow_flags(struct fdp__ds *ds, uint16_t flags)
{
    for (size_t i = 0; i < FDP__N_FLOW_FLAGS; i++) {
        if (flags & (1u << i)) {
            fdp__ds_put(ds, fdp__flow_flag_names[i]);
            fdp__ds_put(ds, " ");
        }
    }
}


char *
fdp_flow_format_stats(const struct fdp_flow_spec *flow,
                      const struct fdp_rule_stats *stats, int64_t now_ms)
{
    struct fdp__ds ds = FDP__DS_INIT;
    int64_t last = stats->used_ms ? stats->used_ms : stats->created_ms;

    fdp__ds_put(&ds, " cookie=0x");
    fdp__ds_put_hex(&ds, flow->cookie);
    fdp__ds_put(&ds, ", duration=");
    format_duration(&ds, now_ms - stats->created_ms);
    fdp__ds_put(&ds, ", table=");
    fdp__ds_put_uint(&ds, flow->table_id);
    fdp__ds_put(&ds, ", n_packets=");
    fdp__ds_put_uint(&ds, stats->n_packets);
    fdp__ds_put(&ds, ", n_bytes=");
    fdp__ds_put_uint(&ds, stats->n_bytes);
    fdp__ds_put(&ds, ", ");
    if (flow->idle_timeout) {
        fdp__ds_printf(&ds, "idle_timeout=%u, ", flow->idle_timeout);
    }
    if (flow->hard_timeout) {
        fdp__ds_printf(&ds, "hard_timeout=%u, ", flow->hard_timeout);
    }
    format_flow_flags(&ds, flow->flags);
    /* The ages ovs-ofctl prints from an NXST_FLOW reply: idle_age always,
     * hard_age (since the last add or modify) when it differs from the
     * duration's whole seconds, which it does once the flow has been
     * modified (ofputil_flow_stats_format()). */
    uint64_t duration_s = (uint64_t) (now_ms > stats->created_ms
                                      ? now_ms - stats->created_ms : 0) / 1000;
    uint64_t hard_age = nx_age(now_ms, stats->modified_ms);
    fdp__ds_put(&ds, "idle_age=");
    fdp__ds_put_uint(&ds, nx_age(now_ms, last));
    fdp__ds_put(&ds, ", ");
    if (hard_age != duration_s) {
        fdp__ds_put(&ds, "hard_age=");
        fdp__ds_put_uint(&ds, hard_age);
        fdp__ds_put(&ds, ", ");
    }
    format_match_actions(&ds, flow);
    return fdp__ds_steal(&ds);
}

char *
fdp_flow_format(const struct fdp_flow_spec *flow)
{
    struct fdp__ds ds = FDP__DS_INIT;

    if (flow->cookie) {
        fdp__ds_printf(&ds, "cookie=%#" PRIx64 ", ", flow->cookie);
    }
    if (flow->table_id) {
        fdp__ds_printf(&ds, "table=%u, ", flow->table_id);
    }
    if (flow->idle_timeout) {
        fdp__ds_printf(&ds, "idle_timeout=%u, ", flow->idle_timeout);
    }
    if (flow->hard_timeout) {
        fdp__ds_printf(&ds, "hard_timeout=%u, ", flow->hard_timeout);
    }
    format_flow_flags(&ds, flow->flags);
    format_match_actions(&ds, flow);
    return fdp__ds_steal(&ds);
}
