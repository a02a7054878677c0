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

#include "flowdp/key.h"

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
};

/* How a value is written and read. */
enum fdp__syntax {
    FDP__S_DEC,         /* Decimal (hex accepted); printed decimal. */
    FDP__S_HEX,         /* Printed 0x%x ("pkt_mark=0x5"; 0 as "0"). */
    FDP__S_HEX4,        /* Printed 0x%04x (dl_type, vlan_tci). */
    FDP__S_HEX5,        /* Printed 0x%05x (ipv6_label). */
    FDP__S_PORT,        /* OpenFlow port: number or LOCAL, CONTROLLER... */
    FDP__S_MAC,         /* xx:xx:xx:xx:xx:xx */
    FDP__S_IPV4,        /* dotted quad; masks as /N or dotted */
    FDP__S_IPV6,        /* RFC 4291 text; masks as /N or address */
    FDP__S_TOS,         /* DSCP as the TOS byte: low 2 bits zero */
    FDP__S_FRAG,        /* no, yes, first, later, not_later */
    FDP__S_TCP_FLAGS,   /* number[/mask] or +syn-ack... */
    FDP__S_VLAN_VID,    /* 0..4095, or 0xffff for "no tag" */
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
};

extern const struct fdp__field fdp__fields[FDP_N_FIELDS];

static inline const struct fdp__field *
fdp__field(enum fdp_field id)
{
    return &fdp__fields[id];
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
#define FDP_VLAN_CFI 0x1000
#define FDP_VLAN_VID_MASK 0x0fff
#define FDP_VLAN_PCP_MASK 0xe000

/* OpenFlow 1.0 port numbers with names (OpenFlow 1.0, "ofp_port"). */
#define FDP_PORT_MAX 0xff00         /* Largest physical port + 1. */
#define FDP_PORT_IN_PORT 0xfff8
#define FDP_PORT_CONTROLLER 0xfffd
#define FDP_PORT_LOCAL 0xfffe
#define FDP_PORT_NONE 0xffff

/* Port name for a reserved port number, or NULL. */
const char *fdp__port_name(uint32_t port);

/* Parses a reserved port name (case-insensitive); true if it is one. */
bool fdp__port_from_name(const char *name, uint32_t *port);

#endif /* FDP_FIELD_H */
