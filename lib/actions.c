/*
 * Action lists.
 *
 * The encoding is a packed sequence of records, each an 8-byte header
 * (struct fdp__action) followed, for set-field actions, by the value in
 * one or two words.  An output action is 8 bytes, a MAC or IPv4 rewrite
 * 16, an IPv6 rewrite 24: a typical flow's actions fit in one cache line,
 * and the datapath walks them front to back without pointer chasing.
 */
#include <config.h>

#include "lib/actions-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/match-internal.h"

fdp_u128
fdp__action_value(const struct fdp__action *a)
{
    const uint64_t *w = (const uint64_t *) a + 1;

    return a->n_words == 3 ? ((fdp_u128) w[0] << 64) | w[1] : w[0];
}

/* The kinds list follows the public enum's order, row for row. */
#define CHECK_KIND_ORDER(ID, FN, PREREQ) KIND_ORDER_##ID,
enum { FDP__ACTION_KINDS(CHECK_KIND_ORDER) N_KIND_ROWS };
#undef CHECK_KIND_ORDER
#define CHECK_KIND(ID, FN, PREREQ)                                          \
    static_assert((int) KIND_ORDER_##ID == (int) FDP_ACT_##ID,              \
                  "FDP__ACTION_KINDS follows enum fdp_action_type");
FDP__ACTION_KINDS(CHECK_KIND)
#undef CHECK_KIND
static_assert((int) N_KIND_ROWS == (int) FDP_N_ACTION_TYPES,
              "every action kind has a row in FDP__ACTION_KINDS");

/* What each kind requires: a prerequisite, or FIELD for "the field's". */
#define PREREQ_FIELD ((enum fdp__prereq) -1)
#define PREREQ_NONE FDP__P_NONE
#define PREREQ_IP_ANY FDP__P_IP_ANY
#define PREREQ_TCP FDP__P_TCP
#define KIND_PREREQ(ID, FN, PREREQ) [FDP_ACT_##ID] = PREREQ_##PREREQ,
static const enum fdp__prereq kind_prereqs[FDP_N_ACTION_TYPES] = {
    FDP__ACTION_KINDS(KIND_PREREQ)
};
#undef KIND_PREREQ

enum fdp__prereq
fdp__action_prereq(const struct fdp__action *a)
{
    if (a->type >= FDP_N_ACTION_TYPES) {
        return FDP__P_NONE;
    }
    enum fdp__prereq pr = kind_prereqs[a->type];
    if (pr == PREREQ_FIELD) {
        return a->field < FDP_N_FIELDS ? fdp__field(a->field)->prereq
                                       : FDP__P_NONE;
    }
    return pr;
}

/* NXM and OXM field names.  Open vSwitch prints a field by its NXM name
 * if it has one (NXM_OF_ETH_SRC, even if written OXM_OF_ETH_SRC), else by
 * its OXM name (OXM_OF_METADATA, OXM_OF_PKT_REG0, OXM_OF_SCTP_SRC).
 * NXM_OF_ARP_OP is 16 bits wide, as in Open vSwitch, over the key's 8-bit
 * arp_op: Open vSwitch keeps the opcode in nw_proto's byte too (and reads
 * an opcode above 255 as 0), so a load writes the low 8 bits and a move
 * reads the top 8 as zero, as there.  OVN's ARP responders
 * ("load:0x2->NXM_OF_ARP_OP[]") need it.  Left out: NXM_OF_IP_TOS, whose
 * 8 bits are not the key's (nw_tos keeps the 6 DSCP bits),
 * NXM_NX_CT_STATE for the same reason (32 bits, the key's ct_state 8),
 * and OXM_OF_IN_PORT, a 32-bit port.
 *
 * The connection-tracking fields are read-only here: move reads them
 * into registers.  ct_mark and ct_label are written only by the ct
 * action's exec(), which parses its own actions. */
#define NXM(NAME, F, BITS, W, C, PR)                                        \
    { NAME, FDP_F_##F, BITS, W, C, FDP__P_##PR }
#define NXM_REG(N)                                                          \
    NXM("NXM_NX_REG" #N, REG##N, 32, true, true, NONE)
#define NXM_XREG(N)                                                         \
    NXM("OXM_OF_PKT_REG" #N, XREG##N, 64, true, true, NONE)
#define NXM_XXREG(N)                                                        \
    NXM("NXM_NX_XXREG" #N, XXREG##N, 128, true, true, NONE)
const struct fdp__nxm_field fdp__nxm_fields[] = {
    NXM("NXM_OF_IN_PORT", IN_PORT, 16, true, true, NONE),
    NXM("NXM_NX_PKT_MARK", PKT_MARK, 32, true, true, NONE),
    NXM("NXM_OF_ETH_SRC", DL_SRC, 48, true, true, NONE),
    NXM("OXM_OF_ETH_SRC", DL_SRC, 48, true, false, NONE),
    NXM("NXM_OF_ETH_DST", DL_DST, 48, true, true, NONE),
    NXM("OXM_OF_ETH_DST", DL_DST, 48, true, false, NONE),
    NXM("NXM_OF_ETH_TYPE", DL_TYPE, 16, false, true, NONE),
    NXM("OXM_OF_ETH_TYPE", DL_TYPE, 16, false, false, NONE),
    NXM("NXM_OF_VLAN_TCI", VLAN_TCI, 16, true, true, NONE),
    /* OpenFlow 1.2's VID and PCP: Open vSwitch's vlan_vid and vlan_pcp,
     * which have no NXM name, so these print. */
    NXM("OXM_OF_VLAN_VID", DL_VLAN, 12, true, true, NONE),
    NXM("OXM_OF_VLAN_PCP", DL_VLAN_PCP, 3, true, true, NONE),
    NXM("NXM_OF_IP_SRC", NW_SRC, 32, true, true, IPV4),
    NXM("OXM_OF_IPV4_SRC", NW_SRC, 32, true, false, IPV4),
    NXM("NXM_OF_IP_DST", NW_DST, 32, true, true, IPV4),
    NXM("OXM_OF_IPV4_DST", NW_DST, 32, true, false, IPV4),
    NXM("NXM_OF_IP_PROTO", NW_PROTO, 8, false, true, IP_ANY),
    NXM("OXM_OF_IP_PROTO", NW_PROTO, 8, false, false, IP_ANY),
    NXM("NXM_NX_IP_TTL", NW_TTL, 8, true, true, IP_ANY),
    /* What ovs-ofctl prints for an OpenFlow 1.0 mod_nw_ecn, a reg_load
     * there (lib/ofp-actions.c). */
    NXM("NXM_NX_IP_ECN", NW_ECN, 2, true, true, IP_ANY),
    NXM("NXM_OF_TCP_SRC", TP_SRC, 16, true, true, TCP),
    NXM("OXM_OF_TCP_SRC", TP_SRC, 16, true, false, TCP),
    NXM("NXM_OF_TCP_DST", TP_DST, 16, true, true, TCP),
    NXM("OXM_OF_TCP_DST", TP_DST, 16, true, false, TCP),
    NXM("NXM_OF_UDP_SRC", TP_SRC, 16, true, true, UDP),
    NXM("OXM_OF_UDP_SRC", TP_SRC, 16, true, false, UDP),
    NXM("NXM_OF_UDP_DST", TP_DST, 16, true, true, UDP),
    NXM("OXM_OF_UDP_DST", TP_DST, 16, true, false, UDP),
    NXM("OXM_OF_SCTP_SRC", TP_SRC, 16, true, true, SCTP),
    NXM("OXM_OF_SCTP_DST", TP_DST, 16, true, true, SCTP),
    NXM("NXM_OF_ICMP_TYPE", ICMP_TYPE, 8, true, true, ICMPV4),
    NXM("OXM_OF_ICMPV4_TYPE", ICMP_TYPE, 8, true, false, ICMPV4),
    NXM("NXM_OF_ICMP_CODE", ICMP_CODE, 8, true, true, ICMPV4),
    NXM("OXM_OF_ICMPV4_CODE", ICMP_CODE, 8, true, false, ICMPV4),
    NXM("NXM_NX_ICMPV6_TYPE", ICMP_TYPE, 8, true, true, ICMPV6),
    NXM("OXM_OF_ICMPV6_TYPE", ICMP_TYPE, 8, true, false, ICMPV6),
    NXM("NXM_NX_ICMPV6_CODE", ICMP_CODE, 8, true, true, ICMPV6),
    NXM("OXM_OF_ICMPV6_CODE", ICMP_CODE, 8, true, false, ICMPV6),
    NXM("NXM_OF_ARP_OP", ARP_OP, 16, true, true, ARP),
    NXM("OXM_OF_ARP_OP", ARP_OP, 16, true, false, ARP),
    NXM("NXM_OF_ARP_SPA", ARP_SPA, 32, true, true, ARP),
    NXM("OXM_OF_ARP_SPA", ARP_SPA, 32, true, false, ARP),
    NXM("NXM_OF_ARP_TPA", ARP_TPA, 32, true, true, ARP),
    NXM("OXM_OF_ARP_TPA", ARP_TPA, 32, true, false, ARP),
    NXM("NXM_NX_ARP_SHA", ARP_SHA, 48, true, true, ARP),
    NXM("OXM_OF_ARP_SHA", ARP_SHA, 48, true, false, ARP),
    NXM("NXM_NX_ARP_THA", ARP_THA, 48, true, true, ARP),
    NXM("OXM_OF_ARP_THA", ARP_THA, 48, true, false, ARP),
    NXM("NXM_NX_IPV6_SRC", IPV6_SRC, 128, true, true, IPV6),
    NXM("OXM_OF_IPV6_SRC", IPV6_SRC, 128, true, false, IPV6),
    NXM("NXM_NX_IPV6_DST", IPV6_DST, 128, true, true, IPV6),
    NXM("OXM_OF_IPV6_DST", IPV6_DST, 128, true, false, IPV6),
    NXM("NXM_NX_IPV6_LABEL", IPV6_LABEL, 20, true, true, IPV6),
    NXM("OXM_OF_IPV6_FLABEL", IPV6_LABEL, 20, true, false, IPV6),
    NXM("NXM_NX_ND_TARGET", ND_TARGET, 128, true, true, ND),
    NXM("OXM_OF_IPV6_ND_TARGET", ND_TARGET, 128, true, false, ND),
    NXM("NXM_NX_ND_SLL", ND_SLL, 48, true, true, ND_SOLICIT),
    NXM("OXM_OF_IPV6_ND_SLL", ND_SLL, 48, true, false, ND_SOLICIT),
    NXM("NXM_NX_ND_TLL", ND_TLL, 48, true, true, ND_ADVERT),
    NXM("OXM_OF_IPV6_ND_TLL", ND_TLL, 48, true, false, ND_ADVERT),
    NXM("ERICOXM_OF_ICMPV6_ND_RESERVED", ND_RESERVED, 32, true, true, ND),
    NXM("ERICOXM_OF_ICMPV6_ND_OPTIONS_TYPE", ND_OPTIONS_TYPE, 8, true, true,
        ND),
    NXM("OXM_OF_METADATA", METADATA, 64, true, true, NONE),
    NXM_REG(0), NXM_REG(1), NXM_REG(2), NXM_REG(3),
    NXM_REG(4), NXM_REG(5), NXM_REG(6), NXM_REG(7),
    NXM_REG(8), NXM_REG(9), NXM_REG(10), NXM_REG(11),
    NXM_REG(12), NXM_REG(13), NXM_REG(14), NXM_REG(15),
    NXM_XREG(0), NXM_XREG(1), NXM_XREG(2), NXM_XREG(3),
    NXM_XREG(4), NXM_XREG(5), NXM_XREG(6), NXM_XREG(7),
    NXM_XXREG(0), NXM_XXREG(1), NXM_XXREG(2), NXM_XXREG(3),
    NXM("NXM_NX_CT_ZONE", CT_ZONE, 16, false, true, NONE),
    NXM("NXM_NX_CT_MARK", CT_MARK, 32, false, true, NONE),
    NXM("NXM_NX_CT_LABEL", CT_LABEL, 128, false, true, NONE),
    NXM("NXM_NX_CT_NW_PROTO", CT_NW_PROTO, 8, false, true, CT),
    NXM("NXM_NX_CT_NW_SRC", CT_NW_SRC, 32, false, true, CT_IPV4),
    NXM("NXM_NX_CT_NW_DST", CT_NW_DST, 32, false, true, CT_IPV4),
    NXM("NXM_NX_CT_IPV6_SRC", CT_IPV6_SRC, 128, false, true, CT_IPV6),
    NXM("NXM_NX_CT_IPV6_DST", CT_IPV6_DST, 128, false, true, CT_IPV6),
    NXM("NXM_NX_CT_TP_SRC", CT_TP_SRC, 16, false, true, CT_L4),
    NXM("NXM_NX_CT_TP_DST", CT_TP_DST, 16, false, true, CT_L4),
    NXM("NXM_NX_TUN_ID", TUN_ID, 64, true, true, NONE),
    NXM("OXM_OF_TUNNEL_ID", TUN_ID, 64, true, false, NONE),
    NXM("NXM_NX_TUN_IPV4_SRC", TUN_SRC, 32, true, true, NONE),
    NXM("NXM_NX_TUN_IPV4_DST", TUN_DST, 32, true, true, NONE),
    NXM("NXM_NX_TUN_IPV6_SRC", TUN_IPV6_SRC, 128, true, true, NONE),
    NXM("NXM_NX_TUN_IPV6_DST", TUN_IPV6_DST, 128, true, true, NONE),
    NXM("NXM_NX_TUN_FLAGS", TUN_FLAGS, 1, true, true, NONE),
    NXM("NXM_NX_TUN_GBP_ID", TUN_GBP_ID, 16, true, true, NONE),
    NXM("NXM_NX_TUN_GBP_FLAGS", TUN_GBP_FLAGS, 8, true, true, NONE),
};
#undef NXM
#undef NXM_REG
#undef NXM_XREG
#undef NXM_XXREG

const size_t fdp__n_nxm_fields = sizeof fdp__nxm_fields
                                 / sizeof fdp__nxm_fields[0];

const struct fdp__nxm_field *
fdp__nxm_field_find(const char *name)
{
    for (size_t i = 0; i < fdp__n_nxm_fields; i++) {
        if (!strcmp(name, fdp__nxm_fields[i].name)) {
            return &fdp__nxm_fields[i];
        }
    }
    return NULL;
}

const struct fdp__nxm_field *
fdp__nxm_field_for(enum fdp_field f,
                   bool (*meets)(const void *aux, enum fdp__prereq),
                   const void *aux)
{
    const struct fdp__nxm_field *any = NULL;

    for (size_t i = 0; i < fdp__n_nxm_fields; i++) {
        const struct fdp__nxm_field *nf = &fdp__nxm_fields[i];
        if (nf->field == f && nf->canonical) {
            if (!meets || meets(aux, nf->prereq)) {
                return nf;
            }
            any = any ? any : nf;
        }
    }
    /* An action built through the API on a match without the field's
     * prerequisites: the first name is the best there is. */
    return any;
}

/* What a flow-form ct action needs beyond IP: addresses of the match's
 * family in nat(), the prerequisites of what exec()'s moves read and of
 * the zone's field, and no commit of what the match says is invalid
 * (Open vSwitch's check_CT() and check_NAT()). */
static bool
ct_meets(const struct fdp_match *match, const struct fdp__action *a)
{
    if (fdp__action_ct_flags(a) & FDP__DPCT_NAT) {
        struct fdp__ct_nat nat;
        memcpy(&nat, (const uint64_t *) a + 1, sizeof nat);
        if (nat.flags & FDP__NAT_ADDR
            && !fdp__match_meets(match, nat.flags & FDP__NAT_IPV6
                                        ? FDP__P_IPV6 : FDP__P_IPV4)) {
            return false;
        }
    }
    if (a->flags & FDP__ACT_CT_ZONE_FIELD
        && !fdp__match_meets(match, fdp__field(a->field)->prereq)) {
        return false;
    }
    if (fdp__action_ct_flags(a) & FDP__DPCT_COMMIT
        && fdp__match_get_value(match, FDP_F_CT_STATE)
           & fdp__match_get_mask(match, FDP_F_CT_STATE) & FDP_CT_INV) {
        return false;           /* Committing an invalid packet. */
    }
    for (const uint64_t *w = fdp__action_ct_exec(a);
         w < fdp__action_ct_end(a);
         w += ((const struct fdp__action *) w)->n_words) {
        const struct fdp__action *e = (const struct fdp__action *) w;
        if (e->type == FDP_ACT_MOVE
            && !fdp__match_meets(match,
                                 fdp__field(fdp__action_move(e).src)->prereq)) {
            return false;
        }
    }
    return true;
}

/* The check of one record 'a' (fdp__actions_validate()); clone()'s nested
 * records are checked as if they stood in its place. */
static bool
action_valid(const struct fdp__action *a, const struct fdp_match *match)
{
    if (!fdp__match_meets(match, fdp__action_prereq(a))) {
        return false;
    }
    if (a->type == FDP_ACT_CT && !(a->flags & FDP__ACT_CT_RESOLVED)
        && !ct_meets(match, a)) {
        return false;
    }
    if (a->type == FDP_ACT_MOVE) {
        /* Both ends' prerequisites, as Open vSwitch checks them. */
        struct fdp__move mv = fdp__action_move(a);
        if (!fdp__match_meets(match, fdp__field(mv.src)->prereq)
            || !fdp__match_meets(match, fdp__field(mv.dst)->prereq)) {
            return false;
        }
    }
    if (a->type == FDP_ACT_CLONE) {
        const uint64_t *end = (const uint64_t *) a + a->n_words;
        for (const uint64_t *w = (const uint64_t *) a + 1; w < end;
             w += ((const struct fdp__action *) w)->n_words) {
            const struct fdp__action *n = (const struct fdp__action *) w;
            if (!n->n_words || !action_valid(n, match)) {
                return false;
            }
        }
    }
    return true;
}

int
fdp__actions_validate(const struct fdp_actions *acts,
                      const struct fdp_match *match, size_t *bad)
{
    size_t i = 0;

    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a), i++) {
        if (!action_valid(a, match)) {
            if (bad) {
                *bad = i;
            }
            return EINVAL;
        }
    }
    return 0;
}

bool
fdp__actions_is_conjunctive(const struct fdp_actions *acts)
{
    const struct fdp__action *a = fdp__actions_first(acts);

    return a && a->type == FDP_ACT_CONJUNCTION;
}

void
fdp__actions_builder_init(struct fdp__actions_builder *b)
{
    memset(b, 0, sizeof *b);
}

static uint64_t *
builder_reserve(struct fdp__actions_builder *b, uint32_t n)
{
    if (b->error) {
        return NULL;
    }
    if (b->n_words + n > b->alloc) {
        uint32_t alloc = b->alloc ? 2 * b->alloc : 8;
        while (alloc < b->n_words + n) {
            alloc *= 2;
        }
        uint64_t *words = realloc(b->words, alloc * sizeof *words);
        if (!words) {
            b->error = ENOMEM;
            return NULL;
        }
        b->words = words;
        b->alloc = alloc;
    }
    uint64_t *p = &b->words[b->n_words];
    memset(p, 0, n * sizeof *p);
    b->n_words += n;
    b->n_actions++;
    return p;
}

void
fdp__actions_add(struct fdp__actions_builder *b, enum fdp_action_type type,
                 uint32_t arg)
{
    struct fdp__action *a = (struct fdp__action *) builder_reserve(b, 1);

    if (a) {
        a->type = (uint8_t) type;
        a->n_words = 1;
        a->arg = arg;
    }
}

int
fdp__actions_add_set_field(struct fdp__actions_builder *b, enum fdp_field f,
                           fdp_u128 value, uint8_t flags)
{
    if ((unsigned int) f >= FDP_N_FIELDS || value > fdp__field(f)->max) {
        return EINVAL;
    }

    uint8_t n = fdp__field(f)->n_bits > 64 ? 3 : 2;
    uint64_t *w = builder_reserve(b, n);

    if (w) {
        struct fdp__action *a = (struct fdp__action *) w;
        a->type = FDP_ACT_SET_FIELD;
        a->n_words = n;
        a->field = (uint8_t) f;
        a->flags = flags;
        if (n == 3) {
            w[1] = (uint64_t) (value >> 64);
            w[2] = (uint64_t) value;
        } else {
            w[1] = (uint64_t) value;
        }
    }
    return 0;
}

int
fdp__actions_add_set_masked(struct fdp__actions_builder *b, enum fdp_field f,
                            fdp_u128 value, fdp_u128 mask, uint8_t flags)
{
    if ((unsigned int) f >= FDP_N_FIELDS || !mask
        || mask > fdp__field(f)->max || value & ~mask) {
        return EINVAL;
    }

    bool wide = fdp__field(f)->n_bits > 64;
    uint8_t n = wide ? 5 : 3;
    uint64_t *w = builder_reserve(b, n);
    if (w) {
        struct fdp__action *a = (struct fdp__action *) w;
        a->type = FDP_ACT_SET_MASKED;
        a->n_words = n;
        a->field = (uint8_t) f;
        a->flags = flags;
        if (wide) {
            w[1] = (uint64_t) (value >> 64);
            w[2] = (uint64_t) value;
            w[3] = (uint64_t) (mask >> 64);
            w[4] = (uint64_t) mask;
        } else {
            w[1] = (uint64_t) value;
            w[2] = (uint64_t) mask;
        }
    }
    return 0;
}

int
fdp__actions_add_move(struct fdp__actions_builder *b, enum fdp_field src,
                      unsigned int src_ofs, enum fdp_field dst,
                      unsigned int dst_ofs, unsigned int n_bits)
{
    if ((unsigned int) src >= FDP_N_FIELDS
        || (unsigned int) dst >= FDP_N_FIELDS || !n_bits || n_bits > 128
        || src_ofs + n_bits > fdp__field(src)->n_bits
        || dst_ofs + n_bits > fdp__field(dst)->n_bits) {
        return EINVAL;
    }

    struct fdp__action *a = (struct fdp__action *) builder_reserve(b, 1);
    if (a) {
        a->type = FDP_ACT_MOVE;
        a->n_words = 1;
        a->field = (uint8_t) dst;
        a->arg = (uint32_t) src | src_ofs << 8 | dst_ofs << 16
                 | n_bits << 24;
    }
    return 0;
}

int
fdp__actions_add_conjunction(struct fdp__actions_builder *b, uint32_t id,
                             unsigned int k, unsigned int n)
{
    if (n < 2 || n > 64 || k < 1 || k > n) {
        return EINVAL;
    }

    uint64_t *w = builder_reserve(b, 2);
    if (w) {
        struct fdp__action *a = (struct fdp__action *) w;
        a->type = FDP_ACT_CONJUNCTION;
        a->n_words = 2;
        a->arg = id;
        w[1] = (uint64_t) k << 32 | n;
    }
    return 0;
}

void
fdp__actions_add_resubmit(struct fdp__actions_builder *b, uint32_t port,
                          unsigned int table)
{
    fdp__actions_add(b, FDP_ACT_RESUBMIT,
                     (port & 0xffff) << 8 | (table & 0xff));
}

int
fdp__actions_add_ct_write(struct fdp__actions_builder *b, enum fdp_field f,
                          fdp_u128 value, fdp_u128 mask, uint8_t flags)
{
    if ((f != FDP_F_CT_MARK && f != FDP_F_CT_LABEL) || !mask
        || mask > fdp__field(f)->max || value & ~mask) {
        return EINVAL;
    }

    uint64_t *w = builder_reserve(b, 5);
    if (w) {
        struct fdp__action *a = (struct fdp__action *) w;
        a->type = FDP_ACT_SET_MASKED;
        a->n_words = 5;
        a->field = (uint8_t) f;
        a->flags = flags;
        w[1] = (uint64_t) (value >> 64);
        w[2] = (uint64_t) value;
        w[3] = (uint64_t) (mask >> 64);
        w[4] = (uint64_t) mask;
    }
    return 0;
}

int
fdp__actions_add_ct(struct fdp__actions_builder *b, unsigned int flags,
                    unsigned int table, enum fdp_field zone_field,
                    unsigned int zone, const struct fdp__ct_nat *nat,
                    const uint64_t *exec, size_t exec_words)
{
    const unsigned int all = FDP__DPCT_COMMIT | FDP__DPCT_FORCE
                             | FDP__DPCT_NAT | FDP__DPCT_RECIRC;
    bool by_field = zone_field != FDP_N_FIELDS;
    size_t n = 1 + (flags & FDP__DPCT_NAT ? FDP__CT_NAT_WORDS : 0)
               + exec_words;

    if (flags & ~all || table > 254 || n > UINT8_MAX
        || (by_field ? (unsigned int) zone_field >= FDP_N_FIELDS
                       || zone + 16 > fdp__field(zone_field)->n_bits
                     : zone > UINT16_MAX)) {
        return EINVAL;
    }

    uint64_t *w = builder_reserve(b, (uint32_t) n);
    if (w) {
        struct fdp__action *a = (struct fdp__action *) w;
        a->type = FDP_ACT_CT;
        a->n_words = (uint8_t) n;
        a->field = by_field ? (uint8_t) zone_field : 0;
        a->flags = by_field ? FDP__ACT_CT_ZONE_FIELD : 0;
        a->arg = flags | table << 8 | zone << 16;
        w++;
        if (flags & FDP__DPCT_NAT) {
            memcpy(w, nat, sizeof *nat);
            w += FDP__CT_NAT_WORDS;
        }
        if (exec_words) {
            memcpy(w, exec, exec_words * sizeof *w);
        }
    }
    return 0;
}

void
fdp__actions_add_record__(struct fdp__actions_builder *b,
                          const struct fdp__action *a)
{
    uint64_t *w = builder_reserve(b, a->n_words);

    if (w) {
        memcpy(w, a, a->n_words * sizeof *w);
    }
}

struct fdp_actions *
fdp__actions_finish(struct fdp__actions_builder *b)
{
    struct fdp_actions *acts = NULL;

    if (!b->error) {
        acts = malloc(sizeof *acts + b->n_words * sizeof(uint64_t));
        if (acts) {
            acts->n_words = b->n_words;
            acts->n_actions = b->n_actions;
            if (b->n_words) {
                memcpy(acts->words, b->words, b->n_words * sizeof(uint64_t));
            }
        }
    }
    fdp__actions_builder_destroy(b);
    return acts;
}

void
fdp__actions_builder_destroy(struct fdp__actions_builder *b)
{
    free(b->words);
    fdp__actions_builder_init(b);
}

void
fdp_actions_destroy(struct fdp_actions *acts)
{
    free(acts);
}

struct fdp_actions *
fdp_actions_clone(const struct fdp_actions *acts)
{
    size_t size = fdp_actions_size(acts);
    struct fdp_actions *copy = malloc(size);

    if (copy) {
        memcpy(copy, acts, size);
    }
    return copy;
}

bool
fdp_actions_equal(const struct fdp_actions *a, const struct fdp_actions *b)
{
    return a->n_words == b->n_words
           && !memcmp(a->words, b->words, a->n_words * sizeof(uint64_t));
}

size_t
fdp_actions_count(const struct fdp_actions *acts)
{
    return acts->n_actions;
}

size_t
fdp_actions_size(const struct fdp_actions *acts)
{
    return sizeof *acts + acts->n_words * sizeof(uint64_t);
}
