/*
 * Unit tests for the flow text syntax (lib/flow-parse.c,
 * lib/flow-format.c) and action lists (lib/actions.c).
 *
 * The main test builds random flows through the internal API (every field,
 * masks, ranges, every action), formats them, parses the text back and
 * requires the same flow: parse(format(f)) == f.  Hand-written cases pin
 * the canonical spellings and every error path.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/actions-internal.h"
#include "lib/ds.h"
#include "lib/match-internal.h"
#include "lib/util.h"
#include <flowdp/flow.h>
#include <flowdp/table.h>
#include "unit.h"

/* ---------------------------------------------------------------------- */
/* Random flows.                                                           */

static fdp_u128
random_bits(struct unit_rng *rng, unsigned int n_bits)
{
    fdp_u128 v = ((fdp_u128) unit_rng_next(rng) << 64) | unit_rng_next(rng);
    return v & fdp__ones(n_bits);
}

/* A random value of field 'f' no larger than its maximum, biased towards
 * the extremes. */
static fdp_u128
random_value(struct unit_rng *rng, enum fdp_field f)
{
    const struct fdp__field *field = fdp__field(f);

    switch (unit_rng_below(rng, 8)) {
    case 0:
        return 0;
    case 1:
        return field->max;
    default: {
        fdp_u128 v = random_bits(rng, field->n_bits);
        return v > field->max ? v % (field->max + 1) : v;
    }
    }
}

/* A random mask: all ones, a prefix, or arbitrary bits. */
static fdp_u128
random_mask(struct unit_rng *rng, enum fdp_field f)
{
    const struct fdp__field *field = fdp__field(f);
    unsigned int n = field->n_bits;

    if (!(field->flags & FDP__F_MASKABLE) || unit_rng_below(rng, 3) == 0) {
        return fdp__ones(n);
    }
    if (unit_rng_below(rng, 2)) {
        unsigned int len = unit_rng_below(rng, n) + 1;
        return fdp__ones(n) & ~fdp__ones(n - len);
    }
    fdp_u128 m = random_bits(rng, n);
    return m ? m : 1;
}

static void
set_random_field(struct unit_rng *rng, struct fdp_match *m, enum fdp_field f)
{
    const struct fdp__field *field = fdp__field(f);

    if (f == FDP_F_IP_FRAG) {
        /* The five value/mask pairs that have names (later/later alone
         * prints as "later", which parses as later|first/later|first). */
        static const unsigned int frag[][2] = {
            { 0, 1 }, { 1, 1 }, { 1, 3 }, { 3, 3 }, { 0, 2 },
        };
        unsigned int i = unit_rng_below(rng, FDP_ARRAY_SIZE(frag));
        ck_assert_int_eq(fdp__match_set_masked(m, f, frag[i][0], frag[i][1]),
                         0);
        return;
    }
    if (f == FDP_F_TCP_FLAGS) {
        fdp_u128 mask = unit_rng_below(rng, 3) ? random_bits(rng, 12) : 0xfff;
        ck_assert_int_eq(fdp__match_set_masked(m, f, random_bits(rng, 12)
                                               & mask, mask ? mask : 1), 0);
        return;
    }
    if ((field->flags & FDP__F_RANGE) && unit_rng_below(rng, 4) == 0) {
        fdp_u128 a = random_value(rng, f), b = random_value(rng, f);
        ck_assert_int_eq(fdp__match_set_range(m, f, a < b ? a : b,
                                              a < b ? b : a), 0);
        return;
    }
    fdp_u128 mask = random_mask(rng, f);
    ck_assert_int_eq(fdp__match_set_masked(m, f, random_value(rng, f) & mask,
                                           mask), 0);
}

/* The VLAN forms the text syntax can say: dl_vlan, dl_vlan_pcp (value or
 * range, with the tag bit), "no tag", or any vlan_tci value/mask. */
static void
set_random_vlan(struct unit_rng *rng, struct fdp_match *m)
{
    switch (unit_rng_below(rng, 5)) {
    case 0:
        fdp__match_set_masked(m, FDP_F_VLAN_TCI, 0, 0xffff);
        break;
    case 1: {
        fdp_u128 mask = random_mask(rng, FDP_F_VLAN_TCI);
        fdp__match_set_masked(m, FDP_F_VLAN_TCI,
                              random_value(rng, FDP_F_VLAN_TCI) & mask, mask);
        break;
    }
    default:
        fdp__match_set_masked(m, FDP_F_VLAN_TCI, FDP_VLAN_CFI, FDP_VLAN_CFI);
        if (unit_rng_below(rng, 2)) {
            set_random_field(rng, m, FDP_F_DL_VLAN);
            if (!fdp__match_has_range(m, FDP_F_DL_VLAN)) {
                fdp__match_set_masked(m, FDP_F_DL_VLAN,
                                      fdp__match_get_value(m, FDP_F_DL_VLAN),
                                      0xfff);
            }
        }
        if (unit_rng_below(rng, 2)) {
            set_random_field(rng, m, FDP_F_DL_VLAN_PCP);
            if (!fdp__match_has_range(m, FDP_F_DL_VLAN_PCP)) {
                fdp__match_set_masked(m, FDP_F_DL_VLAN_PCP,
                                      fdp__match_get_value(m,
                                                           FDP_F_DL_VLAN_PCP),
                                      7);
            }
        }
        break;
    }
}

static void
random_match(struct unit_rng *rng, struct fdp_match *m)
{
    static const struct {
        uint16_t dl_type;
        int proto;
    } protos[] = {
        { 0, -1 }, { 0x0800, -1 }, { 0x0800, 6 }, { 0x0800, 17 },
        { 0x0800, 132 }, { 0x0800, 1 }, { 0x0800, 99 }, { 0x86dd, -1 },
        { 0x86dd, 6 }, { 0x86dd, 17 }, { 0x86dd, 58 }, { 0x0806, -1 },
        { 0x8035, -1 }, { 0x1234, -1 },
    };
    unsigned int i = unit_rng_below(rng, FDP_ARRAY_SIZE(protos));

    fdp__match_init(m);
    if (protos[i].dl_type) {
        fdp__match_set_masked(m, FDP_F_DL_TYPE, protos[i].dl_type, 0xffff);
    }
    if (protos[i].proto >= 0) {
        fdp__match_set_masked(m, FDP_F_NW_PROTO, protos[i].proto, 0xff);
    }
    if (unit_rng_below(rng, 3) == 0) {
        set_random_vlan(rng, m);
    }
    for (int f = 0; f < FDP_N_FIELDS; f++) {
        const struct fdp__field *field = fdp__field(f);
        if (f == FDP_F_DL_TYPE || f == FDP_F_NW_PROTO
            || f == FDP_F_VLAN_TCI || field->prereq == FDP__P_VLAN
            || !fdp__match_meets(m, field->prereq)
            || unit_rng_below(rng, 3)) {
            continue;
        }
        /* An xreg is two regs: one name or the other, or a range on the
         * xreg would overlap the halves' constraints. */
        if (f >= FDP_F_XREG0 && f <= FDP_F_XREG7) {
            enum fdp_field hi = FDP_F_REG0 + 2 * (f - FDP_F_XREG0);
            if (fdp__match_get_mask(m, hi) || fdp__match_get_mask(m, hi + 1)
                || fdp__match_has_range(m, hi)
                || fdp__match_has_range(m, hi + 1)) {
                continue;
            }
        }
        /* An xxreg is two xregs, four regs: the same goes. */
        if (f >= FDP_F_XXREG0 && f <= FDP_F_XXREG3) {
            int x = 2 * (f - FDP_F_XXREG0);
            if (fdp__match_get_mask(m, f)
                || fdp__match_has_range(m, FDP_F_XREG0 + x)
                || fdp__match_has_range(m, FDP_F_XREG0 + x + 1)
                || fdp__match_has_range(m, FDP_F_REG0 + 2 * x)
                || fdp__match_has_range(m, FDP_F_REG0 + 2 * x + 1)
                || fdp__match_has_range(m, FDP_F_REG0 + 2 * x + 2)
                || fdp__match_has_range(m, FDP_F_REG0 + 2 * x + 3)) {
                continue;
            }
        }
        /* Fields that share storage: only the one the protocol names. */
        if (fdp__match_is_dl_type(m, FDP_ETH_TYPE_ARP)
            || fdp__match_is_dl_type(m, FDP_ETH_TYPE_RARP)) {
            if (f == FDP_F_NW_SRC || f == FDP_F_NW_DST) {
                continue;
            }
        }
        /* The tunnel addresses of one family only: IPv4's share IPv6's
         * storage, and the family bit tells them apart (lib/field.h). */
        if (fdp__field_is_tun_addr(f)
            && (m->mask.w[FDP__TUN_IPV6_WORD] & FDP__TUN_IPV6_BIT)
            && !(m->value.w[FDP__TUN_IPV6_WORD] & FDP__TUN_IPV6_BIT)
               != !fdp__field_is_tun_ipv6(f)) {
            continue;
        }
        set_random_field(rng, m, f);
        /* ct_nw_proto=0 is refused (ovs-ofctl drops it): no connection
         * has protocol 0. */
        if (f == FDP_F_CT_NW_PROTO && !fdp__match_has_range(m, f)
            && !fdp__match_get_value(m, f)) {
            fdp__match_set_masked(m, f, FDP_IPPROTO_TCP, 0xff);
        }
    }
}

static bool
meets(const void *m, enum fdp__prereq pr)
{
    return fdp__match_meets(m, pr);
}

/* A random NXM field whose prerequisites 'm' meets (and that may be
 * written, if 'dst'), by the name ovs-ofctl prints for it under 'm'. */
/* The bits of 'nf' the key keeps: its width, but 8 of the 16 of the
 * arp_op names (lib/actions.c). */
static unsigned int
key_bits(const struct fdp__nxm_field *nf)
{
    unsigned int kw = fdp__field(nf->field)->n_bits;

    return nf->n_bits < kw ? nf->n_bits : kw;
}

static const struct fdp__nxm_field *
random_nxm_field(struct unit_rng *rng, const struct fdp_match *m, bool dst)
{
    for (;;) {
        const struct fdp__nxm_field *nf
            = &fdp__nxm_fields[unit_rng_below(rng, fdp__n_nxm_fields)];
        if (nf->canonical && (!dst || nf->writable)
            && fdp__match_meets(m, nf->prereq)
            && fdp__nxm_field_for(nf->field, meets, m) == nf) {
            return nf;
        }
    }
}

/* A random field of the pipeline's own that set_field writes masked. */
static enum fdp_field
random_register(struct unit_rng *rng)
{
    return (enum fdp_field) (FDP_F_METADATA
                             + unit_rng_below(rng, FDP_F_XREG7
                                                   - FDP_F_METADATA + 1));
}

/* One of the pipeline's actions, in the forms whose text parses back to
 * the same encoding: load with one run of mask bits, set_field over the
 * whole field (a partial one prints as load), resubmit, move. */
static void
random_pipeline_action(struct unit_rng *rng, const struct fdp_match *m,
                       struct fdp__actions_builder *b)
{
    switch (unit_rng_below(rng, 4)) {
    case 0: {
        static const uint32_t ports[] = {
            FDP_PORT_IN_PORT, 1, 0, 65279, FDP_PORT_LOCAL, FDP_PORT_NONE,
        };
        uint32_t port = ports[unit_rng_below(rng, FDP_ARRAY_SIZE(ports))];
        unsigned int table = unit_rng_below(rng, 2)
                             ? FDP__RESUBMIT_SAME_TABLE
                             : unit_rng_below(rng, 255);
        if (port == FDP_PORT_IN_PORT && table == FDP__RESUBMIT_SAME_TABLE) {
            table = 0;
        }
        fdp__actions_add_resubmit(b, port, table);
        break;
    }
    case 1: {
        const struct fdp__nxm_field *nf;
        do {
            nf = random_nxm_field(rng, m, true);
        } while (nf->n_bits > 64);
        unsigned int width = key_bits(nf);
        unsigned int ofs = unit_rng_below(rng, width);
        unsigned int n = 1 + unit_rng_below(rng, width - ofs);
        uint64_t ones = (uint64_t) fdp__ones(n);
        uint64_t v = (uint64_t) random_bits(rng, n);
        ck_assert_int_eq(fdp__actions_add_set_masked(b, nf->field, v << ofs,
                                                     ones << ofs,
                                                     FDP__ACT_LOAD), 0);
        break;
    }
    case 2: {
        enum fdp_field f = random_register(rng);
        fdp_u128 full = fdp__field(f)->max;
        ck_assert_int_eq(fdp__actions_add_set_masked(
                             b, f, (uint64_t) (random_value(rng, f) & full),
                             (uint64_t) full, 0), 0);
        break;
    }
    default: {
        const struct fdp__nxm_field *src = random_nxm_field(rng, m, false);
        const struct fdp__nxm_field *dst = random_nxm_field(rng, m, true);
        unsigned int sw = key_bits(src), dw = key_bits(dst);
        unsigned int max = sw < dw ? sw : dw;
        unsigned int n = 1 + unit_rng_below(rng, max < 64 ? max : 64);
        unsigned int src_ofs = unit_rng_below(rng, sw - n + 1);
        unsigned int dst_ofs = unit_rng_below(rng, dw - n + 1);
        ck_assert_int_eq(fdp__actions_add_move(b, src->field, src_ofs,
                                               dst->field, dst_ofs, n), 0);
        break;
    }
    }
}

/* The actions that end a list, in the order OpenFlow's instructions
 * require: write_metadata, then goto_table to a later table. */
static void
random_instructions(struct unit_rng *rng, unsigned int table_id,
                    struct fdp__actions_builder *b)
{
    if (unit_rng_below(rng, 6) == 0) {
        uint64_t mask = unit_rng_below(rng, 2) ? ~(uint64_t) 0
                                               : unit_rng_next(rng) | 1;
        fdp__actions_add_set_masked(b, FDP_F_METADATA,
                                    unit_rng_next(rng) & mask, mask,
                                    FDP__ACT_WRITE_METADATA);
    }
    if (table_id < 254 && unit_rng_below(rng, 6) == 0) {
        fdp__actions_add(b, FDP_ACT_GOTO_TABLE,
                         table_id + 1 + unit_rng_below(rng, 254 - table_id));
    }
}

static void
random_actions(struct unit_rng *rng, const struct fdp_match *m,
               unsigned int table_id, struct fdp__actions_builder *b)
{
    unsigned int n = unit_rng_below(rng, 6);

    if (unit_rng_below(rng, 10) == 0) {
        /* One clause of one or more conjunctive matches: nothing else. */
        for (unsigned int i = 0; i <= n % 3; i++) {
            unsigned int n_clauses = 2 + unit_rng_below(rng, 63);
            fdp__actions_add_conjunction(b, (uint32_t) unit_rng_next(rng),
                                         1 + unit_rng_below(rng, n_clauses),
                                         n_clauses);
        }
        return;
    }
    for (unsigned int i = 0; i < n; i++) {
        switch (unit_rng_below(rng, 11)) {
        case 9:
        case 10:
            random_pipeline_action(rng, m, b);
            break;
        case 0:
            fdp__actions_add(b, FDP_ACT_OUTPUT,
                             1 + unit_rng_below(rng, FDP_PORT_MAX - 1));
            break;
        case 1:
            fdp__actions_add(b, FDP_ACT_IN_PORT, 0);
            break;
        case 2:
            fdp__actions_add(b, FDP_ACT_CONTROLLER, unit_rng_below(rng, 65536));
            break;
        case 3:
            fdp__actions_add(b, FDP_ACT_SET_VLAN_VID, unit_rng_below(rng, 4096));
            break;
        case 4:
            fdp__actions_add(b, FDP_ACT_SET_VLAN_PCP, unit_rng_below(rng, 8));
            break;
        case 5:
            if (unit_rng_below(rng, 2)) {
                fdp__actions_add(b, FDP_ACT_STRIP_VLAN, 0);
            } else {
                fdp__actions_add(b, FDP_ACT_PUSH_VLAN,
                                 unit_rng_below(rng, 2) ? 0x8100 : 0x88a8);
            }
            break;
        case 6:
            if (fdp__match_meets(m, FDP__P_IP_ANY)) {
                fdp__actions_add(b, FDP_ACT_DEC_TTL, 0);
            }
            break;
        default: {
            /* set_field or mod_xxx on a field the match allows. */
            static const enum fdp_field targets[] = {
                FDP_F_PKT_MARK, FDP_F_DL_SRC, FDP_F_DL_DST, FDP_F_NW_SRC,
                FDP_F_NW_DST, FDP_F_IPV6_SRC, FDP_F_IPV6_DST,
                FDP_F_IPV6_LABEL, FDP_F_NW_TOS, FDP_F_NW_ECN, FDP_F_NW_TTL,
                FDP_F_TP_SRC, FDP_F_TP_DST, FDP_F_ICMP_TYPE,
                FDP_F_ICMP_CODE, FDP_F_ARP_OP, FDP_F_ARP_SPA, FDP_F_ARP_TPA,
                FDP_F_ARP_SHA, FDP_F_ARP_THA,
            };
            enum fdp_field f = targets[unit_rng_below(rng,
                                                      FDP_ARRAY_SIZE(targets))];
            if (fdp__match_meets(m, fdp__field(f)->prereq)) {
                bool mod = unit_rng_below(rng, 2)
                           && (f == FDP_F_DL_SRC || f == FDP_F_DL_DST
                               || f == FDP_F_NW_SRC || f == FDP_F_NW_DST
                               || f == FDP_F_NW_TOS || f == FDP_F_NW_TTL
                               || f == FDP_F_TP_SRC || f == FDP_F_TP_DST);
                fdp__actions_add_set_field(b, f, random_value(rng, f),
                                           mod ? FDP__ACT_MOD : 0);
            }
            break;
        }
        }
    }
    random_instructions(rng, table_id, b);
}

START_TEST(round_trip_random_flows)
{
    enum { N_FLOWS = 20000 };
    struct unit_rng rng;

    unit_rng_init(&rng, 20);
    for (int i = 0; i < N_FLOWS; i++) {
        struct fdp_flow_spec flow = {
            .match = fdp_match_create(),
            .priority = unit_rng_below(&rng, 3) ? unit_rng_below(&rng, 65536)
                                                : FDP_DEFAULT_PRIORITY,
            .cookie = unit_rng_below(&rng, 2) ? unit_rng_next(&rng) : 0,
            .table_id = unit_rng_below(&rng, 2) ? unit_rng_below(&rng, 255) : 0,
            .idle_timeout = unit_rng_below(&rng, 2)
                            ? unit_rng_below(&rng, 65536) : 0,
            .hard_timeout = unit_rng_below(&rng, 2)
                            ? unit_rng_below(&rng, 65536) : 0,
        };
        random_match(&rng, flow.match);
        struct fdp__actions_builder b;
        fdp__actions_builder_init(&b);
        random_actions(&rng, flow.match, flow.table_id, &b);
        flow.actions = fdp__actions_finish(&b);

        char *text = fdp_flow_format(&flow);
        ck_assert_ptr_nonnull(text);

        struct fdp_flow_spec back;
        char *error;
        int err = fdp_flow_parse(text, 0, &back, &error);
        ck_assert_msg(!err, "flow %d (seed %llu): \"%s\" does not parse: %s",
                      i, (unsigned long long) unit_seed(), text, error);
        char *again = fdp_flow_format(&back);
        ck_assert_msg(fdp_match_equal(flow.match, back.match),
                      "flow %d (seed %llu): match changed: \"%s\" -> \"%s\"",
                      i, (unsigned long long) unit_seed(), text, again);
        ck_assert_msg(fdp_actions_equal(flow.actions, back.actions),
                      "flow %d (seed %llu): actions changed: \"%s\" -> \"%s\"",
                      i, (unsigned long long) unit_seed(), text, again);
        ck_assert_str_eq(text, again);
        ck_assert(flow.priority == back.priority
                  && flow.cookie == back.cookie
                  && flow.table_id == back.table_id
                  && flow.idle_timeout == back.idle_timeout
                  && flow.hard_timeout == back.hard_timeout);
        free(text);
        free(again);
        fdp_flow_spec_destroy(&flow);
        fdp_flow_spec_destroy(&back);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Canonical spellings.                                                    */

static void
check_canonical(const char *in, const char *expected)
{
    struct fdp_flow_spec flow;
    char *error;

    int err = fdp_flow_parse(in, 0, &flow, &error);
    ck_assert_msg(!err, "\"%s\": %s", in, error);
    char *out = fdp_flow_format(&flow);
    ck_assert_msg(!strcmp(out, expected), "\"%s\" printed \"%s\", not \"%s\"",
                  in, out, expected);
    free(out);
    fdp_flow_spec_destroy(&flow);
}

START_TEST(canonical_forms)
{
    /* Each expectation was checked against ovs-ofctl 3.1 parse-flows,
     * except ranges, which ovs-ofctl lacks. */
    check_canonical("priority=100,tcp,nw_src=10.1.2.3/8,tp_dst=80/0xffff,"
                    "actions=2,3",
                    "priority=100,tcp,nw_src=10.0.0.0/8,tp_dst=80 "
                    "actions=output:2,output:3");
    check_canonical("table=1,cookie=0x5,idle_timeout=10,hard_timeout=20,"
                    "in_port=1,dl_src=AA:bb:cc:dd:ee:ff/ff:ff:ff:00:00:00,"
                    "actions=output:2,controller,in_port",
                    "cookie=0x5, table=1, idle_timeout=10, hard_timeout=20, "
                    "in_port=1,dl_src=aa:bb:cc:00:00:00/ff:ff:ff:00:00:00 "
                    "actions=output:2,CONTROLLER:65535,IN_PORT");
    check_canonical("pkt_mark=0x5/0xff,icmp6,icmp_type=135,icmp_code=0,"
                    "actions=drop",
                    "pkt_mark=0x5/0xff,icmp6,icmp_type=135,icmp_code=0 "
                    "actions=drop");
    check_canonical("tcp6,ipv6_src=2001:db8::/32,ipv6_label=0x12345,"
                    "tcp_flags=+syn-ack,actions=set_field:5->tp_dst",
                    "tcp6,ipv6_src=2001:db8::/32,ipv6_label=0x12345,"
                    "tcp_flags=+syn-ack actions=set_field:5->tcp_dst");
    check_canonical("arp,arp_op=1,arp_spa=1.2.3.0/24,actions=drop",
                    "arp,arp_spa=1.2.3.0/24,arp_op=1 actions=drop");
    check_canonical("vlan_tci=0x1005/0x1fff,actions=drop",
                    "dl_vlan=5 actions=drop");
    check_canonical("vlan_tci=0x7005,actions=drop",
                    "dl_vlan=5,dl_vlan_pcp=3 actions=drop");
    check_canonical("dl_vlan=0xffff,actions=drop", "vlan_tci=0x0000 actions=drop");
    check_canonical("dl_type=0x0800,nw_proto=17,tp_dst=5,actions=drop",
                    "udp,tp_dst=5 actions=drop");
    check_canonical("ip,ip_proto=99,actions=drop",
                    "ip,nw_proto=99 actions=drop");
    check_canonical("tcp,tcp_flags=0x12/0xfff,actions=drop",
                    "tcp,tcp_flags=syn|ack actions=drop");
    check_canonical("tcp,tcp_flags=+syn+ack-fin,actions=drop",
                    "tcp,tcp_flags=-fin+syn+ack actions=drop");
    check_canonical("ip,nw_src=10.0.0.1/255.0.255.0,actions=drop",
                    "ip,nw_src=10.0.0.0/255.0.255.0 actions=drop");
    check_canonical("ip,nw_frag=not_later,actions=drop",
                    "ip,nw_frag=not_later actions=drop");
    check_canonical("in_port=65534,actions=drop",
                    "in_port=LOCAL actions=drop");
    check_canonical("pkt_mark=0,actions=drop", "pkt_mark=0 actions=drop");
    check_canonical("priority=32768,cookie=0,actions=", "actions=drop");
    check_canonical("cookie=0x10,actions=drop", "cookie=0x10, actions=drop");
    check_canonical("ip,actions=mod_nw_tos:8,mod_nw_ttl:9,dec_ttl,"
                    "push_vlan:0x8100,set_field:10.0.0.1->nw_dst",
                    "ip actions=mod_nw_tos:8,mod_nw_ttl:9,dec_ttl,"
                    "push_vlan:0x8100,set_field:10.0.0.1->ip_dst");
    check_canonical("ip,actions=output:65533,output:65528",
                    "ip actions=CONTROLLER:65535,IN_PORT");
    check_canonical("arp,nw_src=1.2.3.4,actions=drop",
                    "arp,arp_spa=1.2.3.4 actions=drop");
    /* set_field prints under the name of the match's protocol, and
     * mod_nw_ecn as set_field, as ovs-ofctl -O OpenFlow13. */
    check_canonical("udp,actions=set_field:80->udp_src,mod_tp_dst:5",
                    "udp actions=set_field:80->udp_src,mod_tp_dst:5");
    check_canonical("tcp,actions=set_field:80->tp_dst",
                    "tcp actions=set_field:80->tcp_dst");
    check_canonical("icmp6,actions=set_field:1->icmpv6_type",
                    "icmp6 actions=set_field:1->icmpv6_type");
    check_canonical("ip,actions=mod_nw_ecn:1,set_field:2->ip_ecn",
                    "ip actions=set_field:1->nw_ecn,set_field:2->nw_ecn");
    /* Action spellings ovs-ofctl also takes: any case, pop_vlan,
     * parentheses, empty actions, a trailing comment. */
    check_canonical("ip,actions=DROP,", "ip actions=drop");
    check_canonical("ip,actions=STRIP_VLAN,pop_vlan,DEC_TTL(),MOD_NW_TOS:4,"
                    "SET_FIELD:5->pkt_mark,PUSH_VLAN:0x8100,Output:1,,2,"
                    "CONTROLLER(max_len=100),controller() # comment",
                    "ip actions=strip_vlan,strip_vlan,dec_ttl,mod_nw_tos:4,"
                    "set_field:0x5->pkt_mark,push_vlan:0x8100,output:1,"
                    "output:2,CONTROLLER:100,CONTROLLER:65535");
    /* Identical repeats are accepted, in either order and spelling. */
    check_canonical("tcp,tp_dst=1024/0xfc00,tp_dst=1024-2047,actions=drop",
                    "tcp,tp_dst=0x400/0xfc00 actions=drop");
    check_canonical("tcp,tp_dst=1024-2047,tp_dst=1024/0xfc00,actions=drop",
                    "tcp,tp_dst=0x400/0xfc00 actions=drop");
    check_canonical("tcp,ip,nw_proto=6,actions=drop", "tcp actions=drop");
    check_canonical("dl_vlan=5,dl_vlan_pcp=3,dl_vlan=5,actions=drop",
                    "dl_vlan=5,dl_vlan_pcp=3 actions=drop");
    check_canonical("arp,nw_src=1.2.3.4,arp_spa=1.2.3.4,actions=drop",
                    "arp,arp_spa=1.2.3.4 actions=drop");
    check_canonical("ip,nw_ecn=3,nw_ecn=3,actions=drop",
                    "ip,nw_ecn=3 actions=drop");
    /* The one mask a maskless field takes: all ones over its OpenFlow
     * width, as ovs-ofctl. */
    check_canonical("dl_vlan=5/0xffff,dl_vlan_pcp=3/0xff,actions=drop",
                    "dl_vlan=5,dl_vlan_pcp=3 actions=drop");
    check_canonical("ip,nw_tos=16/255,nw_ecn=1/0xff,nw_ttl=5/0xff,"
                    "actions=drop", "ip,nw_tos=16,nw_ecn=1,nw_ttl=5 "
                    "actions=drop");
    check_canonical("arp,arp_op=2/0xffff,actions=drop",
                    "arp,arp_op=2 actions=drop");
    check_canonical("icmp,icmp_type=3/0xff,actions=drop",
                    "icmp,icmp_type=3 actions=drop");
    /* Regression: number spellings ovs-ofctl takes that flowdp refused or
     * read differently. */
    check_canonical("dl_vlan=0xffff/0xffff,actions=drop",
                    "vlan_tci=0x0000 actions=drop");
    check_canonical("dl_vlan=65535/65535,actions=drop",
                    "vlan_tci=0x0000 actions=drop");
    check_canonical("ip,nw_src=010.001.002.003,"
                    "nw_dst=10.1.2.3/255.000.255.0,actions=drop",
                    "ip,nw_src=10.1.2.3,nw_dst=10.0.2.0/255.0.255.0 "
                    "actions=drop");
    check_canonical("ip,nw_src=10.1.2.3/010,nw_dst=+1.2.3.4/+16,"
                    "actions=drop",
                    "ip,nw_src=10.0.0.0/10,nw_dst=1.2.0.0/16 actions=drop");
    check_canonical("ipv6,ipv6_src=::1/010,actions=drop",
                    "ipv6,ipv6_src=::/10 actions=drop");
    check_canonical("priority=+5,tcp,tp_dst=+80,tp_src=+0x50,"
                    "actions=mod_vlan_vid:+5",
                    "priority=5,tcp,tp_src=80,tp_dst=80 "
                    "actions=mod_vlan_vid:5");
    check_canonical("in_port=010,actions=output:010,011",
                    "in_port=10 actions=output:10,output:11");
    check_canonical("priority=5,cookie=1,priority=5,cookie=0x1,"
                    "actions=drop", "cookie=0x1, priority=5 actions=drop");
    check_canonical("ip,actions=set_field:010.1.2.3->nw_src",
                    "ip actions=set_field:10.1.2.3->ip_src");
}
END_TEST

START_TEST(ranges)
{
    check_canonical("tcp,tp_dst=1000-2000,actions=drop",
                    "tcp,tp_dst=1000-2000 actions=drop");
    check_canonical("ip,nw_src=10.0.0.1-10.0.0.50,actions=drop",
                    "ip,nw_src=10.0.0.1-10.0.0.50 actions=drop");
    check_canonical("dl_src=00:00:00:00:00:01-00:00:00:00:00:ff,actions=drop",
                    "dl_src=00:00:00:00:00:01-00:00:00:00:00:ff "
                    "actions=drop");
    check_canonical("ipv6,ipv6_dst=2001:db8::1-2001:db8::ff,actions=drop",
                    "ipv6,ipv6_dst=2001:db8::1-2001:db8::ff actions=drop");
    /* Ranges that are prefixes, single values or everything. */
    check_canonical("tcp,tp_dst=1024-2047,actions=drop",
                    "tcp,tp_dst=0x400/0xfc00 actions=drop");
    check_canonical("ip,nw_src=10.0.0.0-10.255.255.255,actions=drop",
                    "ip,nw_src=10.0.0.0/8 actions=drop");
    check_canonical("tcp,tp_src=80-80,actions=drop",
                    "tcp,tp_src=80 actions=drop");
    check_canonical("tcp,tp_src=0-65535,actions=drop", "tcp actions=drop");
    check_canonical("icmp,icmp_type=0-255,actions=drop", "icmp actions=drop");
    check_canonical("dl_vlan=10-20,actions=drop", "dl_vlan=10-20 actions=drop");
    check_canonical("dl_vlan=10-20,dl_vlan_pcp=3,actions=drop",
                    "dl_vlan=10-20,dl_vlan_pcp=3 actions=drop");
    check_canonical("ip,nw_tos=16-32,actions=drop",
                    "ip,nw_tos=16-32 actions=drop");
    check_canonical("in_port=1-10,pkt_mark=0x10-0x1f0,actions=drop",
                    "pkt_mark=0x10-0x1f0,in_port=1-10 actions=drop");
}
END_TEST

START_TEST(field_extremes)
{
    /* Every numeric field at its minimum and maximum. */
    check_canonical("in_port=0,actions=drop", "in_port=0 actions=drop");
    check_canonical("in_port=65279,actions=drop",
                    "in_port=65279 actions=drop");
    check_canonical("pkt_mark=0xffffffff,actions=drop",
                    "pkt_mark=0xffffffff actions=drop");
    check_canonical("dl_src=ff:ff:ff:ff:ff:ff,dl_dst=00:00:00:00:00:00,"
                    "actions=drop",
                    "dl_src=ff:ff:ff:ff:ff:ff,dl_dst=00:00:00:00:00:00 "
                    "actions=drop");
    check_canonical("dl_type=0,actions=drop", "dl_type=0x0000 actions=drop");
    check_canonical("dl_type=0xffff,actions=drop",
                    "dl_type=0xffff actions=drop");
    check_canonical("dl_vlan=4095,dl_vlan_pcp=7,actions=drop",
                    "dl_vlan=4095,dl_vlan_pcp=7 actions=drop");
    check_canonical("dl_vlan=0,dl_vlan_pcp=0,actions=drop",
                    "dl_vlan=0,dl_vlan_pcp=0 actions=drop");
    check_canonical("ip,nw_src=255.255.255.255,nw_dst=0.0.0.0,actions=drop",
                    "ip,nw_src=255.255.255.255,nw_dst=0.0.0.0 actions=drop");
    check_canonical("ipv6,ipv6_src=ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff,"
                    "ipv6_dst=::,ipv6_label=0xfffff,actions=drop",
                    "ipv6,ipv6_src=ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff,"
                    "ipv6_dst=::,ipv6_label=0xfffff actions=drop");
    check_canonical("ip,nw_proto=255,nw_tos=252,nw_ecn=3,nw_ttl=255,"
                    "actions=drop",
                    "ip,nw_proto=255,nw_tos=252,nw_ecn=3,nw_ttl=255 "
                    "actions=drop");
    check_canonical("ip,nw_proto=0,nw_tos=0,nw_ecn=0,nw_ttl=0,actions=drop",
                    "ip,nw_proto=0,nw_tos=0,nw_ecn=0,nw_ttl=0 actions=drop");
    check_canonical("udp,tp_src=0,tp_dst=65535,actions=drop",
                    "udp,tp_src=0,tp_dst=65535 actions=drop");
    check_canonical("tcp,tcp_flags=0,actions=drop",
                    "tcp,tcp_flags=0 actions=drop");
    check_canonical("icmp,icmp_type=255,icmp_code=0,actions=drop",
                    "icmp,icmp_type=255,icmp_code=0 actions=drop");
    check_canonical("arp,arp_op=255,arp_tpa=0.0.0.0,actions=drop",
                    "arp,arp_tpa=0.0.0.0,arp_op=255 actions=drop");
    check_canonical("table=254,priority=65535,cookie=0xffffffffffffffff,"
                    "idle_timeout=65535,hard_timeout=65535,actions=drop",
                    "cookie=0xffffffffffffffff, table=254, "
                    "idle_timeout=65535, hard_timeout=65535, "
                    "priority=65535 actions=drop");
    check_canonical("priority=0,actions=drop", "priority=0 actions=drop");
    /* The fields the first list missed; checked against ovs-ofctl 3.1. */
    check_canonical("arp,arp_spa=255.255.255.255,arp_sha=ff:ff:ff:ff:ff:ff,"
                    "arp_tha=00:00:00:00:00:00,arp_op=0,actions=drop",
                    "arp,arp_spa=255.255.255.255,arp_op=0,"
                    "arp_sha=ff:ff:ff:ff:ff:ff,arp_tha=00:00:00:00:00:00 "
                    "actions=drop");
    check_canonical("pkt_mark=0,in_port=65535,actions=drop",
                    "pkt_mark=0,in_port=ANY actions=drop");
    check_canonical("ipv6,ipv6_label=0,actions=drop",
                    "ipv6,ipv6_label=0x00000 actions=drop");
    check_canonical("tcp,tcp_flags=0xfff,tp_src=65535,tp_dst=0,actions=drop",
                    "tcp,tp_src=65535,tp_dst=0,tcp_flags=fin|syn|rst|psh|"
                    "ack|urg|ece|cwr|ns|[200]|[400]|[800] actions=drop");
    check_canonical("icmp,icmp_code=255,icmp_type=0,actions=drop",
                    "icmp,icmp_type=0,icmp_code=255 actions=drop");
    check_canonical("vlan_tci=0,actions=drop", "vlan_tci=0x0000 actions=drop");
    check_canonical("vlan_tci=0xffff,actions=drop",
                    "dl_vlan=4095,dl_vlan_pcp=7 actions=drop");

    /* One above the maximum is an error for every numeric field. */
    static const struct {
        const char *in;
        const char *error;
    } above[] = {
        { "in_port=65536,actions=drop",
          "column 1: in_port: 65536 is out of range (0..65535)" },
        { "pkt_mark=0x100000000,actions=drop",
          "column 1: pkt_mark: 0x100000000 is out of range (0..4294967295)" },
        { "dl_type=0x10000,actions=drop",
          "column 1: dl_type: 0x10000 is out of range (0..65535)" },
        { "vlan_tci=0x10000,actions=drop",
          "column 1: vlan_tci: 0x10000 is out of range (0..65535)" },
        { "dl_vlan_pcp=8,actions=drop",
          "column 1: dl_vlan_pcp: 8 is out of range (0..7)" },
        { "ipv6,ipv6_label=0x100000,actions=drop",
          "column 6: ipv6_label: 0x100000 is out of range (0..1048575)" },
        { "ip,nw_proto=256,actions=drop",
          "column 4: nw_proto: 256 is out of range (0..255)" },
        { "ip,nw_tos=256,actions=drop",
          "column 4: nw_tos: 256 is out of range (0..252)" },
        { "ip,nw_ecn=4,actions=drop",
          "column 4: nw_ecn: 4 is out of range (0..3)" },
        { "ip,nw_ttl=256,actions=drop",
          "column 4: nw_ttl: 256 is out of range (0..255)" },
        { "tcp,tp_src=65536,actions=drop",
          "column 5: tp_src: 65536 is out of range (0..65535)" },
        { "tcp,tcp_flags=0x1000,actions=drop",
          "column 5: tcp_flags: 0x1000 is out of range (0..4095)" },
        { "icmp,icmp_type=256,actions=drop",
          "column 6: icmp_type: 256 is out of range (0..255)" },
        { "icmp,icmp_code=256,actions=drop",
          "column 6: icmp_code: 256 is out of range (0..255)" },
        { "arp,arp_op=256,actions=drop",
          "column 5: arp_op: 256 is out of range (0..255)" },
    };
    for (size_t i = 0; i < FDP_ARRAY_SIZE(above); i++) {
        struct fdp_flow_spec flow;
        char *error = NULL;
        ck_assert_int_eq(fdp_flow_parse(above[i].in, 0, &flow, &error),
                         EINVAL);
        ck_assert_msg(error && !strcmp(error, above[i].error),
                      "\"%s\": got \"%s\"", above[i].in, error);
        free(error);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Errors.                                                                 */

START_TEST(errors)
{
    static const struct {
        const char *in;
        const char *error;
    } cases[] = {
        { "priority=5,tcp,tp_dst=99999,actions=drop",
          "column 16: tp_dst: 99999 is out of range (0..65535)" },
        { "tp_dst=80,actions=drop",
          "column 1: tp_dst: requires tcp, udp or sctp (or tcp6, udp6, "
          "sctp6) in the match" },
        { "tcp,tp_dst=80,tp_dst=81,actions=drop",
          "column 15: tp_dst: conflicts with tp_dst=80 at column 5" },
        { "tcp,udp,actions=drop",
          "column 5: udp: conflicts with tcp at column 1" },
        { "dl_type=0x0800,tcp6,actions=drop",
          "column 16: tcp6: conflicts with dl_type=0x0800 at column 1" },
        { "ip,nw_ttl=5/0xf0,actions=drop", "column 4: nw_ttl: takes no mask" },
        { "tcp,tp_dst=2000-1000,actions=drop",
          "column 5: tp_dst: range 2000-1000 is empty (low end above high "
          "end)" },
        { "tcp,tcp_flags=1-5,actions=drop",
          "column 5: tcp_flags: takes no range" },
        { "ip,nw_tos=17,actions=drop",
          "column 4: nw_tos: 17 has ECN bits set (the low 2 bits must be 0; "
          "match them with nw_ecn)" },
        { "ip,nw_src=10.0.0.256,actions=drop",
          "column 4: nw_src: \"10.0.0.256\" is not an IPv4 address" },
        { "ip,nw_src=10.0.0.1/33,actions=drop",
          "column 4: nw_src: \"/33\" is not a prefix length (0..32) or a "
          "mask" },
        { "dl_src=00:11:22:33:44,actions=drop",
          "column 1: dl_src: \"00:11:22:33:44\" is not an Ethernet address" },
        { "dl_src=00:11:22:33:44:55:66,actions=drop",
          "column 1: dl_src: \"00:11:22:33:44:55:66\" is not an Ethernet "
          "address" },
        { "ipv6,ipv6_src=2001:db8:::1,actions=drop",
          "column 6: ipv6_src: \"2001:db8:::1\" is not an IPv6 address" },
        { "tcp,tp_dst=80x,actions=drop",
          "column 5: tp_dst: \"80x\" is not a number" },
        { "tcp,tp_dst=,actions=drop", "column 5: tp_dst: missing value" },
        { "tcp,tp_dst,actions=drop",
          "column 5: tp_dst: missing value (tp_dst=VALUE)" },
        { "tcp,frobnicate=1,actions=drop",
          "column 5: unknown field or keyword \"frobnicate\"" },
        { "tcp=1,actions=drop",
          "column 1: tcp: a protocol shorthand takes no value" },
        { "priority=65536,actions=drop",
          "column 1: priority: 65536 is out of range (0..65535)" },
        { "icmp,icmpv4_type=3,actions=drop",
          "column 6: unknown field or keyword \"icmpv4_type\"" },
        { "icmp,icmpv4_code=3,actions=drop",
          "column 6: unknown field or keyword \"icmpv4_code\"" },
        { "dl_vlan=0xffff/0xfff,actions=drop",
          "column 1: dl_vlan: 0xffff is out of range (0..4095)" },
        { "ip,nw_src=256.1.1.1,actions=drop",
          "column 4: nw_src: \"256.1.1.1\" is not an IPv4 address" },
        { "ip,nw_src=1.2.3.4/0x8,actions=drop",
          "column 4: nw_src: \"/0x8\" is not a prefix length (0..32) or a "
          "mask" },
        { "ip,actions=mod_nw_src:010.1.2.3",
          "column 12: mod_nw_src: \"010.1.2.3\" is not an IPv4 address" },
        { "in_port=0x5,actions=drop",
          "column 1: in_port: \"0x5\" is not a port number or name" },
        { "actions=output:0x5",
          "column 9: output: \"0x5\" is not a number" },
        { "tcp,tp_dst=++80,actions=drop",
          "column 5: tp_dst: \"++80\" is not a number" },
        { "priority=1,priority=2,actions=drop",
          "column 12: priority: conflicts with priority=1 at column 1" },
        { "cookie=0x5/-1,cookie=5/0xff,actions=drop",
          "column 1: cookie: a mask selects flows to modify, delete or "
          "dump; a new flow takes a plain cookie" },
        { "table=255,actions=drop",
          "column 1: table: 255 is out of range (0..254)" },
        { "cookie=0x10000000000000000,actions=drop",
          "column 1: cookie: 0x10000000000000000 is out of range "
          "(0..18446744073709551615)" },
        { "tcp,tp_dst=80", "column 14: missing \"actions=\"" },
        { "ip,actions=drop,output:1",
          "column 12: \"drop\" must not be accompanied by any other action" },
        { "ip,actions=output:0", "column 12: output: port 0 is out of range "
          "(1..65279, IN_PORT, CONTROLLER, NORMAL, FLOOD, ALL, LOCAL)" },
        { "ip,actions=output:TABLE",
          "column 12: output: port TABLE is not supported (use a port number, "
          "IN_PORT, CONTROLLER, NORMAL, FLOOD, ALL or LOCAL)" },
        { "ip,actions=mod_tp_dst:80",
          "column 12: mod_tp_dst: requires tcp, udp or sctp (or tcp6, udp6, "
          "sctp6) in the match" },
        { "ipv6,actions=mod_nw_src:1.2.3.4",
          "column 14: mod_nw_src: requires ip (IPv4) in the match" },
        { "actions=dec_ttl", "column 9: dec_ttl: requires ip or ipv6 in the "
          "match" },
        { "ip,actions=mod_vlan_vid:4096",
          "column 12: mod_vlan_vid: 4096 is out of range (0..4095)" },
        { "ip,actions=push_vlan:0x0800",
          "column 12: push_vlan: 0x0800 is not a VLAN ethertype (0x8100 or "
          "0x88a8)" },
        { "ip,actions=set_field:6->nw_proto",
          "column 12: set_field: nw_proto is read-only" },
        { "ip,actions=set_field:6",
          "column 12: set_field: expected VALUE->FIELD" },
        { "ip,actions=set_field:1->nosuch",
          "column 12: set_field: unknown field \"nosuch\"" },
        { "ip,actions=frob", "column 12: unknown action \"frob\"" },
        { "ip,actions=dec_ttl(1)", "column 12: action \"dec_ttl(1)\": "
          "arguments in parentheses are not supported" },
        { "actions=controller(max_len=5", "column 9: action "
          "\"controller(max_len=5\": missing ')'" },
        { "ip,nw_frag=maybe,actions=drop",
          "column 4: ip_frag: \"maybe\" is not one of no, yes, first, later, "
          "not_later" },
        { "tcp,tcp_flags=+syn-bogus,actions=drop",
          "column 5: tcp_flags: unknown flag \"bogus\" (known: fin syn rst "
          "psh ack urg ece cwr ns [200] [400] [800])" },
        { "dl_vlan=0xffff,dl_vlan_pcp=3,actions=drop",
          "column 16: dl_vlan_pcp: conflicts with dl_vlan=0xffff at "
          "column 1" },
        { "dl_vlan=4096,actions=drop",
          "column 1: dl_vlan: 4096 is out of range (0..4095)" },
        { "icmp,icmp_code=1/0xf,actions=drop",
          "column 6: icmp_code: takes no mask" },
        { "tcp,tp_dst=1-5/3,actions=drop",
          "column 5: tp_dst: a value takes a mask or a range, not both" },
        /* Regression: a digit above a narrow field's maximum wrapped the
         * overflow test around (nw_ecn=9 became nw_ecn=1). */
        { "ip,nw_ecn=9,actions=drop",
          "column 4: nw_ecn: 9 is out of range (0..3)" },
        { "dl_vlan_pcp=9,actions=drop",
          "column 1: dl_vlan_pcp: 9 is out of range (0..7)" },
        { "actions=mod_vlan_pcp:8",
          "column 9: mod_vlan_pcp: 8 is out of range (0..7)" },
        { "ip,actions=set_field:256->nw_ecn",
          "column 12: nw_ecn: 256 is out of range (0..3)" },
        { "ip,actions=mod_nw_ecn:4",
          "column 12: nw_ecn: 4 is out of range (0..3)" },
        /* Regression: masks on fields that take none were dropped when
         * all ones over the key's width; ovs-ofctl refuses them. */
        { "dl_vlan=5/0xfff,actions=drop", "column 1: dl_vlan: takes no mask" },
        { "dl_vlan_pcp=3/7,actions=drop",
          "column 1: dl_vlan_pcp: takes no mask" },
        { "ip,nw_tos=16/0xfc,actions=drop", "column 4: nw_tos: takes no mask" },
        { "ip,nw_ecn=1/3,actions=drop", "column 4: nw_ecn: takes no mask" },
        { "arp,arp_op=2/0xff,actions=drop", "column 5: arp_op: takes no mask" },
        { "in_port=1/0xffff,actions=drop", "column 1: in_port: takes no mask" },
        { "dl_type=0x800/0xff,actions=drop",
          "column 1: dl_type: takes no mask" },
        /* Regression: repeated fields were merged (ovs-ofctl keeps the
         * last); a different constraint on claimed bits is an error, and
         * the message quotes the whole earlier token. */
        { "ip,nw_src=10.1.0.0/16,nw_src=10.0.0.0/8,actions=drop",
          "column 23: nw_src: conflicts with nw_src=10.1.0.0/16 at "
          "column 4" },
        { "pkt_mark=0x1/0x1,pkt_mark=0x2/0x2,actions=drop",
          "column 18: pkt_mark: conflicts with pkt_mark=0x1/0x1 at "
          "column 1" },
        { "tcp,tcp_flags=+syn,tcp_flags=-ack,actions=drop",
          "column 20: tcp_flags: conflicts with tcp_flags=+syn at column 5" },
        { "ip,ip_frag=yes,ip_frag=not_later,actions=drop",
          "column 16: ip_frag: conflicts with ip_frag=yes at column 4" },
        { "dl_vlan=5,vlan_tci=0x1000/0x1000,actions=drop",
          "column 11: vlan_tci: conflicts with dl_vlan=5 at column 1" },
        { "ip,nw_src=10.0.0.1-10.0.0.5,nw_src=10.0.0.1-10.0.0.6,actions=drop",
          "column 29: nw_src: conflicts with nw_src=10.0.0.1-10.0.0.5 at "
          "column 4" },
        { "tcp,tp_src=0-65535,tp_src=80,actions=drop",
          "column 20: tp_src: conflicts with tp_src=0-65535 at column 5" },
        /* Regression: set_field quietly swapped the field for the one the
         * match allows (udp_src became tcp_src); ovs-ofctl refuses. */
        { "tcp,actions=set_field:80->udp_src",
          "column 13: udp_src: requires udp or udp6 in the match" },
        { "udp,actions=set_field:80->tp_dst",
          "column 13: tp_dst: requires tcp or tcp6 in the match" },
        { "icmp6,actions=set_field:1->icmp_type",
          "column 15: icmp_type: requires icmp in the match" },
        { "icmp,actions=set_field:1->icmpv6_code",
          "column 14: icmpv6_code: requires icmp6 in the match" },
        { "tcp6,actions=set_field:1->sctp_src",
          "column 14: sctp_src: requires sctp or sctp6 in the match" },
        { "icmp,actions=set_field:1->icmpv4_type",
          "column 14: set_field: unknown field \"icmpv4_type\"" },
        /* Regression: range errors had no column ("Invalid argument"). */
        { "ip,nw_ecn=0-9,actions=drop",
          "column 4: nw_ecn: 9 is out of range (0..3)" },
        { "dl_vlan_pcp=0-9,actions=drop",
          "column 1: dl_vlan_pcp: 9 is out of range (0..7)" },
        /* Every message of lib/flow-parse.c that text can reach. */
        { "tcp,tcp_flags=+syn-ack+syn,actions=drop",
          "column 5: tcp_flags: flag syn given twice" },
        { "tcp,tcp_flags=syn|,actions=drop",
          "column 5: tcp_flags: flag name expected after '|'" },
        { "actions=mod_vlan_vid",
          "column 9: mod_vlan_vid: missing argument" },
        /* "controller:" is plain controller, as ovs-ofctl reads it. */
        { "actions=controller:x",
          "column 20: controller: unknown key \"x\" (reason, max_len, id, "
          "userdata, pause, meter_id)" },
        { "actions=1,mod_dl_src",
          "column 11: mod_dl_src: missing argument" },
        { "ip,actions=mod_nw_ttl:",
          "column 12: mod_nw_ttl: missing argument" },
        { "actions=output", "column 9: output: missing port" },
        { "ip,actions=dec_ttl:1",
          "column 12: dec_ttl: takes no argument" },
        { "actions=set_field:1/0->pkt_mark",
          "column 9: set_field: a zero mask writes nothing (\"1/0\")" },
        /* The pipeline's syntax, each refused as ovs-ofctl refuses it
         * (or, last, where ovs-ofctl repairs it silently). */
        { "conj_id=5/0xff,actions=drop", "column 1: conj_id: takes no mask" },
        { "conj_id=1-2,actions=drop", "column 1: conj_id: takes no range" },
        { "reg16=1,actions=drop",
          "column 1: unknown field or keyword \"reg16\"" },
        { "reg0=0x100000000,actions=drop",
          "column 1: reg0: 0x100000000 is out of range (0..4294967295)" },
        { "xreg1=1,reg3=1,actions=drop",
          "column 9: reg3: conflicts with xreg1=1 at column 1" },
        { "table=3,actions=goto_table:3",
          "column 17: goto_table: table 3 is not after the flow's table 3" },
        { "actions=goto_table:255",
          "column 9: goto_table: 255 is out of range (0..254)" },
        { "actions=goto_table:0x5",
          "column 9: goto_table: \"0x5\" is not a number" },
        { "actions=goto_table:1,goto_table:2",
          "column 22: goto_table: goto_table (column 9) must be the last "
          "action" },
        { "actions=write_metadata:1,output:2",
          "column 26: output: write_metadata (column 9) must come after "
          "every action but goto_table" },
        { "actions=write_metadata:0x15/0xf",
          "column 9: write_metadata: value 0x15 has bits outside the mask "
          "0xf" },
        { "actions=write_metadata:5/0",
          "column 9: write_metadata: mask \"0\" is not a nonzero 64-bit "
          "number" },
        { "actions=resubmit()",
          "column 9: resubmit: needs a port or a table (resubmit:PORT, "
          "resubmit(,TABLE))" },
        { "actions=resubmit(,255)",
          "column 9: resubmit: 255 is out of range (0..254)" },
        { "actions=resubmit(0xff00,1)",
          "column 9: resubmit: \"0xff00\" is not a number" },
        { "actions=resubmit(65280,1)",
          "column 9: resubmit: port 65280 is reserved; use its name" },
        { "actions=resubmit(1,2,ct)",
          "column 9: resubmit: a third argument (\"ct\") is not supported" },
        { "actions=load:5->NXM_NX_REG0[7..0]",
          "column 9: load: NXM_NX_REG0[7..0]: starting bit 7 is after ending "
          "bit 0" },
        { "actions=load:5->NXM_NX_REG0[0..32]",
          "column 9: load: NXM_NX_REG0[0..32]: ending bit 32 is not valid "
          "because the field is only 32 bits wide" },
        { "actions=load:5->NXM_NX_REG0[0..0x7]",
          "column 9: load: NXM_NX_REG0[0..0x7]: expected [] or [BIT] or "
          "[START..END]" },
        { "actions=load:5->NXM_NX_REG0[1",
          "column 9: load: NXM_NX_REG0[1: expected [] or [BIT] or "
          "[START..END]" },
        { "actions=load:5->NXM_NX_REG0[5]",
          "column 9: load: value 5 does not fit in 1 bits" },
        { "actions=load:5",
          "column 9: load: expected VALUE->FIELD[START..END]" },
        { "actions=load:-1->NXM_NX_REG0[]",
          "column 9: load: \"-1\" is not a number (of 128 bits at most)" },
        { "actions=load:1->NXM_NX_XREG0[]",
          "column 9: load: unknown field \"NXM_NX_XREG0\"" },
        { "actions=load:1->NXM_OF_IP_SRC[]",
          "column 9: load: NXM_OF_IP_SRC[] requires ip (IPv4) in the match" },
        { "ipv6,actions=load:0x10->NXM_NX_IPV6_SRC[0..3]",
          "column 14: load: value 0x10 does not fit in 4 bits" },
        { "ip,actions=move:NXM_OF_IP_SRC[]->NXM_OF_IP_PROTO[0..7]",
          "column 12: move: the source is 32 bits wide but the destination "
          "8" },
        { "ip,actions=move:NXM_OF_IP_SRC[0..7]->NXM_OF_IP_PROTO[]",
          "column 12: move: NXM_OF_IP_PROTO[] is read-only" },
        { "tcp,actions=move:NXM_OF_UDP_SRC[]->NXM_NX_REG0[0..15]",
          "column 13: move: NXM_OF_UDP_SRC[] requires udp or udp6 in the "
          "match" },
        { "actions=move:NXM_NX_REG0[]",
          "column 9: move: expected SRC[START..END]->DST[START..END]" },
        { "actions=conjunction(1,0/2)",
          "column 9: conjunction: clause 0 is not in 1..2" },
        { "actions=conjunction(1,1/65)",
          "column 9: conjunction: must have at most 64 clauses" },
        { "actions=conjunction(1,0x1/2)",
          "column 9: conjunction: the syntax is conjunction(ID,K/N)" },
        { "actions=conjunction(4294967296,1/2)",
          "column 9: conjunction: a number is out of range (ID "
          "0..4294967295, K and N 1..64)" },
        { "actions=conjunction",
          "column 9: conjunction: the syntax is conjunction(ID,K/N)" },
        { "actions=conjunction(1,1/2),resubmit(,3)",
          "column 28: resubmit: conjunction actions may not be mixed with "
          "other actions (column 9)" },
        { "actions=set_field:5/0->reg0",
          "column 9: set_field: a zero mask writes nothing (\"5/0\")" },
        { "actions=set_field:0x100000000->reg0",
          "column 9: reg0: 0x100000000 is out of range (0..4294967295)" },
    };

    for (size_t i = 0; i < FDP_ARRAY_SIZE(cases); i++) {
        struct fdp_flow_spec flow;
        char *error = NULL;
        int err = fdp_flow_parse(cases[i].in, 0, &flow, &error);
        ck_assert_msg(err == EINVAL, "\"%s\" parsed", cases[i].in);
        ck_assert_ptr_null(flow.match);
        ck_assert_msg(error && !strcmp(error, cases[i].error),
                      "\"%s\": got \"%s\", expected \"%s\"", cases[i].in,
                      error, cases[i].error);
        free(error);
    }

    /* Match-only parsing (for del-flows). */
    struct fdp_flow_spec flow;
    char *error;
    ck_assert_int_eq(fdp_flow_parse("tcp,tp_dst=80", FDP_PARSE_MATCH_ONLY,
                                    &flow, &error), 0);
    ck_assert_ptr_null(flow.actions);
    fdp_flow_spec_destroy(&flow);
    ck_assert_int_eq(fdp_flow_parse("tcp,actions=drop", FDP_PARSE_MATCH_ONLY,
                                    &flow, &error), EINVAL);
    ck_assert_str_eq(error, "column 5: actions are not allowed here");
    free(error);

    /* Cookie masks, where a caller selects flows with them. */
    ck_assert_int_eq(fdp_flow_parse("cookie=0x5/0xf0,tcp", FDP_PARSE_MATCH_ONLY
                                    | FDP_PARSE_COOKIE_MASK, &flow, &error),
                     0);
    ck_assert_uint_eq(flow.cookie_mask, 0xf0);
    fdp_flow_spec_destroy(&flow);
    ck_assert_int_eq(fdp_flow_parse("tcp,cookie=0x5/xyz", FDP_PARSE_MATCH_ONLY
                                    | FDP_PARSE_COOKIE_MASK, &flow, &error),
                     EINVAL);
    ck_assert_str_eq(error, "column 5: cookie: mask \"xyz\" is not a 64-bit "
                     "number");
    free(error);

    /* Regression: "del-flows cookie=0x11" (no mask) deleted every flow,
     * since a plain cookie selected nothing.  Where a cookie only selects
     * (del-flows, dump-flows, dump-aggregate), a plain one is refused as
     * ovs-ofctl refuses it; a masked one, a mask of 0 included, is taken. */
    ck_assert_int_eq(fdp_flow_parse("tcp,cookie=0x11", FDP_PARSE_MATCH_ONLY
                                    | FDP_PARSE_COOKIE_SELECT, &flow, &error),
                     EINVAL);
    ck_assert_str_eq(error, "column 5: cookie=0x11: cannot set cookie (to "
                     "match on a cookie, specify a mask, e.g. "
                     "cookie=0x11/-1)");
    free(error);
    ck_assert_int_eq(fdp_flow_parse("cookie=0x11/-1", FDP_PARSE_MATCH_ONLY
                                    | FDP_PARSE_COOKIE_SELECT, &flow, &error),
                     0);
    ck_assert_uint_eq(flow.cookie, 0x11);
    ck_assert_uint_eq(flow.cookie_mask, UINT64_MAX);
    fdp_flow_spec_destroy(&flow);
    ck_assert_int_eq(fdp_flow_parse("cookie=0x11/0", FDP_PARSE_MATCH_ONLY
                                    | FDP_PARSE_COOKIE_SELECT, &flow, &error),
                     0);
    ck_assert_uint_eq(flow.cookie_mask, 0);
    fdp_flow_spec_destroy(&flow);

    /* Regression, "a dump takes priority= and --strict": the match of a
     * statistics request takes no priority or timeouts, as ovs-ofctl
     * ("unknown keyword priority"); table and a cookie selector it
     * takes. */
    static const char *const not_in_dump[][2] = {
        { "tcp,priority=5", "column 5: priority=5: unknown keyword "
                            "priority" },
        { "priority", "column 1: priority: unknown keyword priority" },
        { "idle_timeout=5", "column 1: idle_timeout=5: unknown keyword "
                            "idle_timeout" },
        { "udp,hard_timeout=9", "column 5: hard_timeout=9: unknown keyword "
                                "hard_timeout" },
    };
    for (size_t i = 0; i < FDP_ARRAY_SIZE(not_in_dump); i++) {
        ck_assert_int_eq(fdp_flow_parse(not_in_dump[i][0],
                                        FDP_PARSE_MATCH_ONLY
                                        | FDP_PARSE_COOKIE_SELECT
                                        | FDP_PARSE_STATS_REQUEST, &flow,
                                        &error), EINVAL);
        ck_assert_str_eq(error, not_in_dump[i][1]);
        free(error);
        /* Elsewhere they are taken. */
        ck_assert_int_eq(fdp_flow_parse(not_in_dump[i][0],
                                        FDP_PARSE_MATCH_ONLY, &flow,
                                        &error), i == 1 ? EINVAL : 0);
        if (i == 1) {
            free(error);
        } else {
            fdp_flow_spec_destroy(&flow);
        }
    }
    ck_assert_int_eq(fdp_flow_parse("table=2,cookie=0x1/-1,tcp",
                                    FDP_PARSE_MATCH_ONLY
                                    | FDP_PARSE_COOKIE_SELECT
                                    | FDP_PARSE_STATS_REQUEST, &flow, &error),
                     0);
    ck_assert_uint_eq(flow.table_id, 2);
    fdp_flow_spec_destroy(&flow);

    /* A packet enters the pipeline with its registers, metadata and
     * conj_id zero, so a packet's text takes none of them. */
    struct fdp_key key;
    ck_assert_int_eq(fdp_packet_parse("tcp,reg0=1", &key, &error), EINVAL);
    ck_assert_str_eq(error, "column 5: reg0: a packet starts with conj_id, "
                     "metadata and the registers zero, so it takes none of "
                     "them");
    free(error);
    ck_assert_int_eq(fdp_packet_parse("metadata=0,ip", &key, &error), EINVAL);
    free(error);
    ck_assert_int_eq(fdp_packet_parse("ip,nw_src=1.2.3.4", &key, &error), 0);
    ck_assert(!fdp__key_get(&key, FDP_F_METADATA));

    /* A huge line is refused before any allocation proportional to it. */
    size_t n = 70000;
    char *huge = malloc(n + 1);
    memset(huge, ',', n);
    huge[n] = '\0';
    ck_assert_int_eq(fdp_flow_parse(huge, 0, &flow, &error), EINVAL);
    ck_assert_str_eq(error, "column 65537: flow is longer than 65536 "
                     "bytes");
    free(error);
    free(huge);
}
END_TEST

/* Regression: the action builder took set-field values wider than the
 * field, which the datapath would write into the neighbouring field. */
START_TEST(set_field_out_of_range)
{
    struct fdp__actions_builder b;

    fdp__actions_builder_init(&b);
    for (int f = 0; f < FDP_N_FIELDS; f++) {
        fdp_u128 max = fdp__field(f)->max;
        ck_assert_int_eq(fdp__actions_add_set_field(&b, f, max, 0), 0);
        if (max != ~(fdp_u128) 0) {
            ck_assert_int_eq(fdp__actions_add_set_field(&b, f, max + 1, 0),
                             EINVAL);
        }
    }
    ck_assert_int_eq(fdp__actions_add_set_field(&b, FDP_N_FIELDS, 0, 0),
                     EINVAL);
    ck_assert_uint_eq(b.n_actions, FDP_N_FIELDS);
    fdp__actions_builder_destroy(&b);
}
END_TEST

/* fdp__actions_validate() on lists built without the parser: each
 * action's generic prerequisite against matches of each kind. */
static struct fdp_match *
match_of(const char *text)
{
    struct fdp_flow_spec flow;
    char *error = NULL;

    ck_assert_msg(!fdp_flow_parse(text, FDP_PARSE_MATCH_ONLY, &flow, &error),
                  "\"%s\": %s", text, error);
    fdp_actions_destroy(flow.actions);
    return flow.match;
}

static int
validate_one(const char *match_text, enum fdp_action_type type,
             enum fdp_field f, size_t *bad)
{
    struct fdp__actions_builder b;

    fdp__actions_builder_init(&b);
    fdp__actions_add(&b, FDP_ACT_OUTPUT, 1);
    if (type == FDP_ACT_SET_FIELD) {
        ck_assert_int_eq(fdp__actions_add_set_field(&b, f, 1, 0), 0);
    } else {
        fdp__actions_add(&b, type, 1);
    }
    struct fdp_actions *acts = fdp__actions_finish(&b);
    struct fdp_match *m = match_of(match_text);
    int error = fdp__actions_validate(acts, m, bad);
    fdp_match_destroy(m);
    fdp_actions_destroy(acts);
    return error;
}

START_TEST(actions_validate)
{
    static const struct {
        const char *match;
        enum fdp_action_type type;
        enum fdp_field field;
        int error;
    } cases[] = {
        { "tcp", FDP_ACT_SET_FIELD, FDP_F_TP_DST, 0 },
        { "udp6", FDP_ACT_SET_FIELD, FDP_F_TP_DST, 0 },
        { "sctp", FDP_ACT_SET_FIELD, FDP_F_TP_SRC, 0 },
        { "ip", FDP_ACT_SET_FIELD, FDP_F_TP_DST, EINVAL },
        { "icmp", FDP_ACT_SET_FIELD, FDP_F_TP_SRC, EINVAL },
        { "", FDP_ACT_SET_FIELD, FDP_F_TP_DST, EINVAL },
        { "ip", FDP_ACT_SET_FIELD, FDP_F_NW_SRC, 0 },
        { "ipv6", FDP_ACT_SET_FIELD, FDP_F_NW_SRC, EINVAL },
        { "arp", FDP_ACT_SET_FIELD, FDP_F_NW_DST, EINVAL },
        { "ipv6", FDP_ACT_SET_FIELD, FDP_F_IPV6_DST, 0 },
        { "ip", FDP_ACT_SET_FIELD, FDP_F_IPV6_SRC, EINVAL },
        { "ipv6", FDP_ACT_SET_FIELD, FDP_F_NW_TTL, 0 },
        { "arp", FDP_ACT_SET_FIELD, FDP_F_NW_TOS, EINVAL },
        { "arp", FDP_ACT_SET_FIELD, FDP_F_ARP_SHA, 0 },
        { "tcp", FDP_ACT_SET_FIELD, FDP_F_ARP_SPA, EINVAL },
        { "icmp6", FDP_ACT_SET_FIELD, FDP_F_ICMP_TYPE, 0 },
        { "tcp", FDP_ACT_SET_FIELD, FDP_F_ICMP_CODE, EINVAL },
        { "", FDP_ACT_SET_FIELD, FDP_F_DL_SRC, 0 },
        { "", FDP_ACT_SET_FIELD, FDP_F_PKT_MARK, 0 },
        { "ip", FDP_ACT_DEC_TTL, 0, 0 },
        { "ipv6", FDP_ACT_DEC_TTL, 0, 0 },
        { "arp", FDP_ACT_DEC_TTL, 0, EINVAL },
        { "", FDP_ACT_SET_VLAN_VID, 0, 0 },
        { "arp", FDP_ACT_SET_VLAN_PCP, 0, 0 },
        { "", FDP_ACT_STRIP_VLAN, 0, 0 },
        { "", FDP_ACT_PUSH_VLAN, 0, 0 },
        { "", FDP_ACT_CONTROLLER, 0, 0 },
        { "", FDP_ACT_IN_PORT, 0, 0 },
    };

    for (size_t i = 0; i < FDP_ARRAY_SIZE(cases); i++) {
        size_t bad = 99;
        int error = validate_one(cases[i].match, cases[i].type,
                                 cases[i].field, &bad);
        ck_assert_msg(error == cases[i].error, "case %zu (\"%s\"): got %d",
                      i, cases[i].match, error);
        /* The output action comes first and is always fine. */
        ck_assert_uint_eq(bad, error ? 1 : 99);
    }
    ck_assert_int_eq(validate_one("ip", FDP_ACT_DEC_TTL, 0, NULL), 0);
    ck_assert_int_eq(validate_one("arp", FDP_ACT_DEC_TTL, 0, NULL), EINVAL);

    /* Every list the parser accepts passes, and the parser refuses what
     * fails (the generic check backs up the name-specific ones). */
    struct fdp_flow_spec flow;
    char *error = NULL;
    ck_assert_int_eq(fdp_flow_parse("udp,actions=mod_tp_dst:5,dec_ttl,"
                                    "set_field:5->udp_src", 0, &flow,
                                    &error), 0);
    ck_assert_int_eq(fdp__actions_validate(flow.actions, flow.match, NULL),
                     0);
    fdp_flow_spec_destroy(&flow);
    ck_assert_int_eq(fdp_flow_parse("arp,actions=1,dec_ttl", 0, &flow,
                                    &error), EINVAL);
    ck_assert_str_eq(error, "column 15: dec_ttl: requires ip or ipv6 in the "
                     "match");
    free(error);
}
END_TEST

/* Random garbage never crashes the parser and always gets a message. */
/* Regression, "hard timeout counted from creation, not from the last
 * modification": the stats line prints hard_age (seconds since the last
 * add or modify) exactly where ovs-ofctl does over its default protocol
 * (ofputil_flow_stats_format()): when it differs from the duration's
 * whole seconds; both ages stop at 65534 (an NXST_FLOW reply's 16 bits). */
START_TEST(hard_timeout_counted_from_creation_not_last_modification)
{
    static const struct {
        int64_t created, modified, used, now;
        const char *ages;       /* What follows "hard_timeout=6, ". */
    } cases[] = {
        /* Never modified: no hard_age, whatever the moment. */
        { 1000, 1000, 0, 5999, "idle_age=4, tcp" },
        { 1000, 1000, 0, 6000, "idle_age=5, tcp" },
        /* Modified within the duration's second: none either. */
        { 1000, 1400, 0, 5500, "idle_age=4, tcp" },
        /* Modified a second or more later, or across a second. */
        { 1000, 1100, 0, 5000, "idle_age=4, hard_age=3, tcp" },
        { 1000, 3000, 4000, 5000, "idle_age=1, hard_age=2, tcp" },
        /* A clock behind a time counts as age 0. */
        { 1000, 3000, 0, 2500, "idle_age=1, hard_age=0, tcp" },
        /* 18 hours and more: 65534 s, where the duration goes on, so a
         * flow never modified shows hard_age too, as with ovs-ofctl. */
        { 0, 0, 0, 65535000, "idle_age=65534, hard_age=65534, tcp" },
        { 0, 0, 0, 65534999, "idle_age=65534, tcp" },
    };
    struct fdp_flow_spec spec;
    char *error;

    ck_assert_msg(!fdp_flow_parse("hard_timeout=6,tcp,actions=drop", 0,
                                  &spec, &error), "%s", error);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fdp_rule_stats st = {
            .created_ms = cases[i].created,
            .modified_ms = cases[i].modified,
            .used_ms = cases[i].used,
        };
        char *line = fdp_flow_format_stats(&spec, &st, cases[i].now);
        const char *ages = strstr(line, "hard_timeout=6, ");
        ck_assert_ptr_nonnull(ages);
        ages += strlen("hard_timeout=6, ");
        ck_assert_msg(!strncmp(ages, cases[i].ages, strlen(cases[i].ages))
                      && !strcmp(ages + strlen(cases[i].ages),
                                 " actions=drop"),
                      "case %zu: %s", i, line);
        free(line);
    }
    fdp_flow_spec_destroy(&spec);
}
END_TEST

START_TEST(random_garbage)
{
    static const char alphabet[] = "=,/-:>.0123456789abcdefx ipvtcpud_";
    struct unit_rng rng;
    char buf[80];

    unit_rng_init(&rng, 21);
    for (int i = 0; i < 20000; i++) {
        size_t len = unit_rng_below(&rng, sizeof buf - 1);
        for (size_t j = 0; j < len; j++) {
            buf[j] = alphabet[unit_rng_below(&rng, sizeof alphabet - 1)];
        }
        buf[len] = '\0';
        if (unit_rng_below(&rng, 2)) {
            strncat(buf, ",actions=", sizeof buf - strlen(buf) - 1);
        }
        struct fdp_flow_spec flow;
        char *error = NULL;
        int err = fdp_flow_parse(buf, 0, &flow, &error);
        if (err) {
            ck_assert_msg(error && !strncmp(error, "column ", 7), "\"%s\"",
                          buf);
            free(error);
        } else {
            fdp_flow_spec_destroy(&flow);
        }
    }
}
END_TEST

/* The numbers and JSON strings dump-flows writes without printf (lib/ds.c)
 * against printf and a byte-by-byte escaper, on random values. */
START_TEST(ds_numbers_and_json_chars)
{
    struct unit_rng rng;

    unit_rng_init(&rng, 22);
    for (int i = 0; i < 20000; i++) {
        /* Random widths, so that short numbers are as common as long. */
        uint64_t v = unit_rng_next(&rng) >> unit_rng_below(&rng, 64);
        struct fdp__ds ds = FDP__DS_INIT;
        char want[64];

        fdp__ds_put_uint(&ds, v);
        fdp__ds_putc(&ds, ' ');
        fdp__ds_put_hex(&ds, v);
        snprintf(want, sizeof want, "%" PRIu64 " %" PRIx64, v, v);
        ck_assert_str_eq(fdp__ds_cstr(&ds), want);
        fdp__ds_destroy(&ds);

        char text[16], expect[128] = "";
        size_t n = 0, len = unit_rng_below(&rng, sizeof text);
        for (size_t k = 0; k < len; k++) {
            /* Mostly bytes JSON escapes, and some it copies. */
            static const char pool[] = "\"\\\x01\x1f\naz~\x7f\xc3";
            text[k] = pool[unit_rng_below(&rng, sizeof pool - 1)];
        }
        text[len] = '\0';
        for (size_t k = 0; k < len; k++) {
            unsigned char c = (unsigned char) text[k];
            n += (size_t) (c == '"' || c == '\\'
                           ? snprintf(expect + n, sizeof expect - n, "\\%c", c)
                           : c < 0x20
                           ? snprintf(expect + n, sizeof expect - n,
                                      "\\u%04x", c)
                           : snprintf(expect + n, sizeof expect - n, "%c", c));
        }
        struct fdp__ds json = FDP__DS_INIT;
        fdp__ds_put_json_chars(&json, text);
        ck_assert_str_eq(fdp__ds_cstr(&json), expect);
        fdp__ds_destroy(&json);
    }
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("flow");
    TCase *tc = unit_tcase(s, "flow");

    tcase_add_test(tc, round_trip_random_flows);
    tcase_add_test(tc, ds_numbers_and_json_chars);
    tcase_add_test(tc, canonical_forms);
    tcase_add_test(tc, ranges);
    tcase_add_test(tc, field_extremes);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, set_field_out_of_range);
    tcase_add_test(tc, actions_validate);
    tcase_add_test(tc, random_garbage);
    tcase_add_test(tc, hard_timeout_counted_from_creation_not_last_modification);
    return unit_run(s);
}
