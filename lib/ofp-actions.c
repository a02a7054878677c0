/*
 * The OpenFlow codec's actions and instructions.
 *
 * Theory of operation.  Encoding is driven by the action table: the
 * array 'kind_codecs' below is built from FDP__ACTION_KINDS
 * (lib/actions-internal.h) and names, for every kind, the function that
 * writes it (put_<FN>, FN being the kind's row name), so a kind added
 * without its wire form does not compile.  Each put function chooses the
 * form Open vSwitch 3.1's ofpacts_put_openflow_actions() chooses for the
 * version: OpenFlow 1.0's own actions where it has them (OFPAT10_OUTPUT,
 * OFPAT10_SET_DL_SRC, ...), OpenFlow 1.1+'s (OFPAT11_OUTPUT with 32-bit
 * ports, OFPAT12_SET_FIELD with an OXM entry, DEC_NW_TTL, GROUP, ...),
 * and Nicira's NXAST_* actions for everything OpenFlow lacks (resubmit,
 * registers, ct, learn...).  Fields (set_field, reg_load, move, stack,
 * output:FIELD, ct's zone, learn's specs) go through the field rows of
 * lib/ofp-match.h: their NXM/OXM headers and the conversion of values.
 *
 * Decoding goes the other way through 'wire_actions', a table keyed by
 * (version range, vendor, type or subtype) whose rows name the pull
 * function and the action's fixed or minimum length.  Every action is
 * first cut out of the list by its own length field (a multiple of 8, at
 * least 8, no longer than what is left: else OFPBAC_BAD_LEN), then handed
 * to its pull function as a bounded reader, so that no pull function can
 * read past its action.  Unknown types give OFPBAC_BAD_TYPE, unknown
 * vendors OFPBAC_BAD_VENDOR, unknown Nicira subtypes
 * OFPBAC_BAD_VENDOR_TYPE, as in Open vSwitch.
 *
 * Instructions (OpenFlow 1.1+) wrap the list: meter (1.3, 1.4), then
 * apply_actions, write_metadata and goto_table, in that order, as Open
 * vSwitch writes them.  flowdp keeps one list, so the instruction decoder
 * appends the meter first, then the applied actions, then write_metadata
 * and goto_table, which is the order Open vSwitch runs them.  flowdp has
 * no action set: write_actions is OFPBIC_UNSUP_INST; clear_actions,
 * which only empties that set, is accepted and has nothing to clear.
 *
 * A worked example: "output:1" in OpenFlow 1.0 is the 8 bytes
 * 0000 0008 0001 0000 (OFPAT10_OUTPUT, length 8, port 1, max_len 0); in
 * OpenFlow 1.3 it is 0000 0010 00000001 0000 000000000000 (OFPAT11_OUTPUT,
 * length 16, a 32-bit port, max_len 0, six bytes of padding) inside an
 * apply_actions instruction 0004 0018 00000000.
 *
 * Choices and limits, each where Open vSwitch's own behaviour and
 * flowdp's records meet:
 *   - A decoded write builds only the records flowdp's parser builds
 *     (flowdp_writes()): OXM vlan_vid and vlan_pcp writes become
 *     mod_vlan_vid and mod_vlan_pcp, and fields flowdp does not write
 *     (tcp_flags, tun_metadataN) are refused.
 *   - Open vSwitch remembers which wire form an action came in (reg_load
 *     or set_field, ONF's or Nicira's copy_field, enqueue or its three
 *     actions) and writes it back so; flowdp's records keep only the
 *     spellings its text has (FDP__ACT_LOAD, FDP__ACT_MOD), so a list
 *     decoded from one form may be encoded in another.  The encoding of a
 *     decoded list is a fixed point (tests/unit/test-ofp-actions.c).
 *   - flowdp has no action set (write_actions is OFPBIC_UNSUP_INST), no
 *     ALGs in ct, no controller ids for dec_ttl other than 0, no 128-bit
 *     push, no max_len for output:FIELD, and no OpenFlow 1.1 encoding.
 *   - The meter of an OpenFlow 1.0 list has no wire form and is left out,
 *     as Open vSwitch's encode_METER() leaves it out.
 *   - Errors flowdp's table lacks are replaced by the nearest it has:
 *     OFPBPC_BAD_TYPE (an unknown CONTROLLER2 property) and
 *     NXBAC_BAD_CONJUNCTION by OFPBAC_BAD_ARGUMENT, OFPBIC_BAD_EXPERIMENTER
 *     by OFPBIC_UNKNOWN_INST.
 *
 * The codec never prints and does no I/O (lib/ofp-common.h).
 */
#include <config.h>

#include "lib/ofp-actions.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/actions-internal.h"
#include "lib/ct-action.h"
#include "lib/learn.h"
#include "lib/match-internal.h"
#include "lib/ofp-match.h"
#include "lib/other-actions.h"
#include "lib/util.h"
#include <flowdp/group.h>
#include <flowdp/match.h>
#include <flowdp/meter.h>

#define UNUSED_ARG __attribute__((unused))

/* Vendor ids of experimenter actions. */
#define NX_VENDOR_ID 0x00002320u        /* Nicira. */
#define ONF_VENDOR_ID 0x4f4e4600u       /* ONF ("ONF\0"). */

/* OpenFlow 1.0 action types (ofp_action_type). */
enum {
    OFPAT10_OUTPUT = 0,
    OFPAT10_SET_VLAN_VID = 1,
    OFPAT10_SET_VLAN_PCP = 2,
    OFPAT10_STRIP_VLAN = 3,
    OFPAT10_SET_DL_SRC = 4,
    OFPAT10_SET_DL_DST = 5,
    OFPAT10_SET_NW_SRC = 6,
    OFPAT10_SET_NW_DST = 7,
    OFPAT10_SET_NW_TOS = 8,
    OFPAT10_SET_TP_SRC = 9,
    OFPAT10_SET_TP_DST = 10,
    OFPAT10_ENQUEUE = 11,
};

/* OpenFlow 1.1+ action types. */
enum {
    OFPAT11_OUTPUT = 0,
    OFPAT11_SET_VLAN_VID = 1,       /* 1.1 only. */
    OFPAT11_SET_VLAN_PCP = 2,       /* 1.1 only. */
    OFPAT11_SET_DL_SRC = 3,         /* 1.1 only. */
    OFPAT11_SET_DL_DST = 4,
    OFPAT11_SET_NW_SRC = 5,
    OFPAT11_SET_NW_DST = 6,
    OFPAT11_SET_NW_TOS = 7,
    OFPAT11_SET_NW_ECN = 8,
    OFPAT11_SET_TP_SRC = 9,
    OFPAT11_SET_TP_DST = 10,
    OFPAT11_PUSH_VLAN = 17,
    OFPAT11_POP_VLAN = 18,
    OFPAT11_SET_QUEUE = 21,
    OFPAT11_GROUP = 22,
    OFPAT11_SET_NW_TTL = 23,
    OFPAT11_DEC_NW_TTL = 24,
    OFPAT12_SET_FIELD = 25,
    OFPAT15_COPY_FIELD = 28,
    OFPAT15_METER = 29,
    OFPAT_VENDOR = 0xffff,
};

/* Nicira action subtypes (Open vSwitch's NXAST_RAW_*). */
enum {
    NXAST_RESUBMIT = 1,
    NXAST_SET_QUEUE = 4,
    NXAST_POP_QUEUE = 5,
    NXAST_REG_MOVE = 6,
    NXAST_REG_LOAD = 7,
    NXAST_NOTE = 8,
    NXAST_RESUBMIT_TABLE = 14,
    NXAST_OUTPUT_REG = 15,
    NXAST_LEARN = 16,
    NXAST_DEC_TTL = 18,
    NXAST_FIN_TIMEOUT = 19,
    NXAST_CONTROLLER = 20,
    NXAST_DEC_TTL_CNT_IDS = 21,
    NXAST_WRITE_METADATA = 22,
    NXAST_STACK_PUSH = 27,
    NXAST_STACK_POP = 28,
    NXAST_OUTPUT_REG2 = 32,
    NXAST_REG_LOAD2 = 33,
    NXAST_CONJUNCTION = 34,
    NXAST_CT = 35,
    NXAST_NAT = 36,
    NXAST_CONTROLLER2 = 37,
    NXAST_GROUP = 40,
    NXAST_CLONE = 42,
    NXAST_CT_CLEAR = 43,
    NXAST_RESUBMIT_TABLE_CT = 44,
    NXAST_LEARN2 = 45,
    NXAST_CHECK_PKT_LARGER = 49,
};

/* ONF's experimenter action type for copy_field in OpenFlow 1.3
 * (ONFACT_RAW13_COPY_FIELD). */
#define ONFACT_COPY_FIELD 3200

/* Instruction types (OpenFlow 1.1+). */
enum {
    OFPIT_GOTO_TABLE = 1,
    OFPIT_WRITE_METADATA = 2,
    OFPIT_WRITE_ACTIONS = 3,
    OFPIT_APPLY_ACTIONS = 4,
    OFPIT_CLEAR_ACTIONS = 5,
    OFPIT13_METER = 6,
    OFPIT_EXPERIMENTER = 0xffff,
};

/* NXAST_CONTROLLER2's properties. */
enum {
    NXAC2PT_MAX_LEN = 0,
    NXAC2PT_CONTROLLER_ID = 1,
    NXAC2PT_REASON = 2,
    NXAC2PT_USERDATA = 3,
    NXAC2PT_PAUSE = 4,
    NXAC2PT_METER_ID = 5,
};

/* NXAST_CT's flags and "no recirculation" table; NXAST_NAT's flags and
 * which ranges follow. */
#define NX_CT_F_COMMIT 0x1
#define NX_CT_F_FORCE 0x2
#define NX_CT_RECIRC_NONE 0xff
#define NX_NAT_F_SRC 0x01
#define NX_NAT_F_DST 0x02
#define NX_NAT_F_PERSISTENT 0x04
#define NX_NAT_F_PROTO_HASH 0x08
#define NX_NAT_F_PROTO_RANDOM 0x10
#define NX_NAT_RANGE_IPV4_MIN 0x01
#define NX_NAT_RANGE_IPV4_MAX 0x02
#define NX_NAT_RANGE_IPV6_MIN 0x04
#define NX_NAT_RANGE_IPV6_MAX 0x08
#define NX_NAT_RANGE_PROTO_MIN 0x10
#define NX_NAT_RANGE_PROTO_MAX 0x20

/* OpenFlow 1.1+'s 32-bit reserved ports are the 16-bit ones plus this
 * (OFPP11_OFFSET); ports from OFPP11_MAX up are reserved. */
#define OFPP11_OFFSET 0xffff0000u
#define OFPP11_MAX 0xffffff00u

/* How deep clone() and ct(exec()) may nest in a decoded list: Open
 * vSwitch limits nesting to keep its recursion bounded, and so does this
 * decoder (a hostile message could otherwise nest thousands deep). */
#define MAX_NESTING 8

/* The one "no meter" of NXAST_CONTROLLER2 (NX_CTLR_NO_METER). */
#define NX_CTLR_NO_METER 0

/* ---------------------------------------------------------------------- */
/* Encoding.                                                               */

struct put_ctx {
    struct fdp__ofpbuf *b;
    enum fdp_ofp_version v;
    const struct fdp_tlv_map *tlv;
    const struct fdp_match *match;  /* Chooses among a field's names
                                     * (tp_src: TCP's, UDP's or SCTP's);
                                     * may be NULL. */
    bool has_vlan;              /* The packet has a VLAN tag here, as far
                                 * as the match and the actions so far
                                 * tell (Open vSwitch's flow_has_vlan):
                                 * mod_vlan_vid pushes one in 1.1+ if
                                 * not. */
    int error;                  /* EINVAL: an action has no wire form. */
};

/* Starts an action of OpenFlow type 'type'; returns its offset for
 * end_action(). */
static size_t
start_action(struct put_ctx *c, uint16_t type)
{
    size_t start = c->b->size;

    fdp__ofpbuf_put_be16(c->b, type);
    fdp__ofpbuf_put_be16(c->b, 0);
    return start;
}

/* Starts a Nicira action of subtype 'subtype'. */
static size_t
start_nx(struct put_ctx *c, uint16_t subtype)
{
    size_t start = start_action(c, OFPAT_VENDOR);

    fdp__ofpbuf_put_be32(c->b, NX_VENDOR_ID);
    fdp__ofpbuf_put_be16(c->b, subtype);
    return start;
}

/* Pads the action started at 'start' to a multiple of 8 bytes and writes
 * its length. */
static void
end_action(struct put_ctx *c, size_t start)
{
    fdp__ofpbuf_pad(c->b, start, 8);
    if (!fdp__ofpbuf_failed(c->b)) {
        fdp__ofp_set_be16(c->b->data + start + 2,
                          (uint16_t) (c->b->size - start));
    }
}

static void
put_u8s(struct put_ctx *c, const uint8_t *p, size_t n)
{
    fdp__ofpbuf_put(c->b, p, n);
}

/* A flowdp port as the version writes it. */
static uint32_t
wire_port(const struct put_ctx *c, uint32_t port)
{
    return c->v == FDP_OFP10 || port < FDP_PORT_MAX ? port
                                                    : port + OFPP11_OFFSET;
}

/* An output to 'port' with 'max_len' (OFPAT_OUTPUT, either size). */
static void
put_output_port(struct put_ctx *c, uint32_t port, uint16_t max_len)
{
    size_t start = start_action(c, OFPAT10_OUTPUT);

    if (c->v == FDP_OFP10) {
        fdp__ofpbuf_put_be16(c->b, (uint16_t) port);
    } else {
        fdp__ofpbuf_put_be32(c->b, wire_port(c, port));
    }
    fdp__ofpbuf_put_be16(c->b, max_len);
    end_action(c, start);
}

/* The header of field 'f' as NX actions name it (NXM where the field has
 * an NXM header, as Open vSwitch's nxm_header_from_mff()). */
static uint32_t
nx_header(struct put_ctx *c, enum fdp_field f)
{
    const struct fdp__ofp_field *row = fdp__ofp_field_for_match(f, FDP_OFP10,
                                                                c->match);

    if (!row) {
        c->error = EINVAL;
        return 0;
    }
    return fdp__ofp_field_header(row);
}

/* Writes a field's header (and the experimenter id of an experimenter
 * OXM) as version 'v' names it. */
static const struct fdp__ofp_field *
put_field_header(struct put_ctx *c, enum fdp_field f, enum fdp_ofp_version v,
                 bool masked)
{
    const struct fdp__ofp_field *row = fdp__ofp_field_for_match(f, v,
                                                                c->match);
    const struct fdp__ofp_field *nxm = fdp__ofp_field_for_match(f, FDP_OFP10,
                                                                c->match);
    unsigned int width = fdp__field(f)->n_bits;

    /* Open vSwitch names a field in an action by its own header, which
     * for in_port is NXM_OF_IN_PORT's 16 bits even in 1.5
     * (OXM_OF_IN_PORT's 32 are another field there, for matches): so
     * where the OXM is wider than the key's field and an NXM header of
     * the key's width exists, the NXM one. */
    if (row && nxm && fdp__ofp_field_n_bits(row) > width
        && fdp__ofp_field_n_bits(nxm) == width
        && fdp__ofp_field_header(nxm) >> 16 <= 1) {
        row = nxm;
    }
    if (!row) {
        c->error = EINVAL;
        return NULL;
    }
    uint32_t h = fdp__ofp_field_header(row);
    if (masked) {
        /* The length doubles, but for an experimenter OXM it also holds
         * the 4-byte experimenter id, which does not. */
        h = (h & ~0x1ffu) | 1u << 8
            | (2 * fdp__ofp_field_n_bytes(row)
               + (h >> 16 == 0xffff ? 4 : 0));
    }
    fdp__ofpbuf_put_be32(c->b, h);
    if (h >> 16 == 0xffff) {
        fdp__ofpbuf_put_be32(c->b, fdp__ofp_field_experimenter(row));
    }
    return row;
}

/* Open vSwitch's nxm_encode_ofs_nbits(). */
static uint16_t
ofs_nbits(unsigned int ofs, unsigned int n_bits)
{
    return (uint16_t) (ofs << 6 | (n_bits - 1));
}

/* NXAST_REG_LOAD of 'n_bits' bits of 'value' at 'ofs' of field 'f'. */
static void
put_reg_load(struct put_ctx *c, enum fdp_field f, unsigned int ofs,
             unsigned int n_bits, uint64_t value)
{
    size_t start = start_nx(c, NXAST_REG_LOAD);

    fdp__ofpbuf_put_be16(c->b, ofs_nbits(ofs, n_bits));
    fdp__ofpbuf_put_be32(c->b, nx_header(c, f));
    fdp__ofpbuf_put_be64(c->b, value);
    end_action(c, start);
}

static const struct fdp__ofp_field *put_field_header(
    struct put_ctx *, enum fdp_field, enum fdp_ofp_version, bool masked);

/* NXAST_REG_LOAD2: 'value' under 'mask' into 'f' as one NXM/OXM entry
 * (masked unless the mask is the whole field), for a field whose header
 * NXAST_REG_LOAD cannot hold (Open vSwitch's set_field_to_nxast()). */
static void
put_reg_load2(struct put_ctx *c, enum fdp_field f, fdp_u128 value,
              fdp_u128 mask)
{
    unsigned int width = fdp__field(f)->n_bits;
    fdp_u128 all = width >= 128 ? ~(fdp_u128) 0
                                : ((fdp_u128) 1 << width) - 1;
    size_t start = start_nx(c, NXAST_REG_LOAD2);
    const struct fdp__ofp_field *row = put_field_header(c, f, FDP_OFP10,
                                                        mask != all);
    uint8_t wire[32];

    if (row) {
        unsigned int n = fdp__ofp_field_n_bytes(row);
        if (n > 16) {
            c->error = EINVAL;
            return;
        }
        fdp__ofp_field_to_wire(row, value, wire);
        put_u8s(c, wire, n);
        if (mask != all) {
            fdp__ofp_mask_to_wire(row, mask, wire);
            put_u8s(c, wire, n);
        }
    }
    end_action(c, start);
}

/* 'value' under 'mask' into 'f' as reg_loads, one per run of contiguous
 * mask bits of at most 64, lowest first (Open vSwitch's
 * set_field_to_nxast()). */
static void
put_reg_loads(struct put_ctx *c, enum fdp_field f, fdp_u128 value,
              fdp_u128 mask)
{
    unsigned int width = fdp__field(f)->n_bits;
    const struct fdp__ofp_field *row = fdp__ofp_field_for_match(f, FDP_OFP10,
                                                                c->match);
    unsigned int ofs = 0;

    if (row && fdp__ofp_field_header(row) >> 16 == 0xffff) {
        put_reg_load2(c, f, value, mask);
        return;
    }

    /* A write of the whole key field is a load of the whole wire field,
     * which may be wider (NXM_OF_ARP_OP's 16 bits over the key's 8;
     * NXM_NX_ICMPV6_TYPE is narrower than the key's 16-bit icmp_type):
     * Open vSwitch loads the wire field's bits. */
    if (row && mask == (width >= 128 ? ~(fdp_u128) 0
                                     : ((fdp_u128) 1 << width) - 1)) {
        width = fdp__ofp_field_n_bits(row);
        mask = width >= 128 ? ~(fdp_u128) 0 : ((fdp_u128) 1 << width) - 1;
    } else if (row && fdp__ofp_field_n_bits(row) > width) {
        width = fdp__ofp_field_n_bits(row);
    }

    while (ofs < width) {
        while (ofs < width && !((mask >> ofs) & 1)) {
            ofs++;
        }
        if (ofs >= width) {
            break;
        }
        unsigned int n = 0;
        while (ofs + n < width && n < 64 && ((mask >> (ofs + n)) & 1)) {
            n++;
        }
        fdp_u128 bits = value >> ofs;
        if (n < 128) {
            bits &= ((fdp_u128) 1 << n) - 1;
        }
        put_reg_load(c, f, ofs, n, (uint64_t) bits);
        ofs += n;
    }
}

/* An OXM set_field (OFPAT12_SET_FIELD) of 'value', masked by 'mask' if
 * 'masked' (OpenFlow 1.5). */
static void
put_oxm_set_field(struct put_ctx *c, enum fdp_field f, fdp_u128 value,
                  fdp_u128 mask, bool masked)
{
    size_t start = start_action(c, OFPAT12_SET_FIELD);
    const struct fdp__ofp_field *row = put_field_header(c, f, c->v, masked);
    uint8_t wire[32];

    if (row) {
        unsigned int n = fdp__ofp_field_n_bytes(row);
        if (n > 16) {
            c->error = EINVAL;
            return;
        }
        fdp__ofp_field_to_wire(row, value, wire);
        put_u8s(c, wire, n);
        if (masked) {
            fdp__ofp_mask_to_wire(row, mask, wire);
            put_u8s(c, wire, n);
        }
    }
    end_action(c, start);
}

/* True if 1.5's masked set_field can write part of 'f' (its OXM is
 * maskable); else a partial write goes out as reg_loads, which 1.5
 * decoders take too. */
static bool
oxm_maskable(const struct put_ctx *c, enum fdp_field f)
{
    const struct fdp__ofp_field *row = fdp__ofp_field_for_match(f, c->v,
                                                                c->match);
    return row && fdp__ofp_field_maskable(row);
}

/* OpenFlow 1.0's own set actions, by field (OVS's
 * set_field_to_legacy_openflow()): a table, so that no code switches on
 * a field. */
struct legacy_set {
    enum fdp_field field;
    uint8_t type10;             /* OFPAT10_*, or 0xff: none. */
    uint8_t type11;             /* OFPAT11_* that Open vSwitch writes in
                                 * 1.1+ for the mod_ spelling, or 0xff:
                                 * none (set_field then). */
    uint8_t n_bytes;            /* Of the argument: 6 (MAC), 4, 2 or 1. */
    uint8_t shift;              /* The wire value is the key's shifted
                                 * left by this (nw_tos: the key keeps
                                 * the DSCP, the wire the TOS byte). */
};

#define NONE_ 0xff
static const struct legacy_set legacy_sets[] = {
    { FDP_F_DL_SRC, OFPAT10_SET_DL_SRC, NONE_, 6, 0 },
    { FDP_F_DL_DST, OFPAT10_SET_DL_DST, NONE_, 6, 0 },
    { FDP_F_NW_SRC, OFPAT10_SET_NW_SRC, NONE_, 4, 0 },
    { FDP_F_NW_DST, OFPAT10_SET_NW_DST, NONE_, 4, 0 },
    { FDP_F_NW_TOS, OFPAT10_SET_NW_TOS, NONE_, 1, 2 },
    { FDP_F_TP_SRC, OFPAT10_SET_TP_SRC, NONE_, 2, 0 },
    { FDP_F_TP_DST, OFPAT10_SET_TP_DST, NONE_, 2, 0 },
    /* mod_nw_ttl: a reg_load in 1.0, OFPAT11_SET_NW_TTL in 1.1+. */
    { FDP_F_NW_TTL, NONE_, OFPAT11_SET_NW_TTL, 1, 0 },
};
#undef NONE_

/* The row for writing 'f' in version 'v' spelled mod_ ('mod'), if that
 * version has an action of its own for it. */
static const struct legacy_set *
legacy_set_for_field(enum fdp_field f, enum fdp_ofp_version v, bool mod)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(legacy_sets); i++) {
        const struct legacy_set *ls = &legacy_sets[i];
        if (ls->field == f
            && (v == FDP_OFP10 ? ls->type10 != 0xff
                               : mod && ls->type11 != 0xff)) {
            return ls;
        }
    }
    return NULL;
}

static const struct legacy_set *
legacy_set_for_type(uint16_t type)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(legacy_sets); i++) {
        if (legacy_sets[i].type10 == type && type != 0xff) {
            return &legacy_sets[i];
        }
    }
    return NULL;
}

/* The wire form of an OpenFlow 1.0 set action's argument: the OXM row's
 * (nw_tos's TOS byte is the DSCP field shifted by the row). */
static void
put_legacy_set(struct put_ctx *c, const struct legacy_set *ls,
               fdp_u128 value)
{
    size_t start = start_action(c, c->v == FDP_OFP10 ? ls->type10
                                                      : ls->type11);
    uint8_t wire[8] = { 0 };

    value <<= ls->shift;
    for (unsigned int i = 0; i < ls->n_bytes; i++) {
        wire[i] = (uint8_t) (value >> (8 * (ls->n_bytes - 1 - i)));
    }
    put_u8s(c, wire, ls->n_bytes);
    end_action(c, start);
}

/* ---- The put function of each kind (the table's encode column) ---- */

static void
put_output(struct put_ctx *c, const struct fdp__action *a)
{
    put_output_port(c, a->arg, 0);
}

static void
put_in_port(struct put_ctx *c, const struct fdp__action *a UNUSED_ARG)
{
    put_output_port(c, FDP_PORT_IN_PORT, 0);
}

static void
put_reserved(struct put_ctx *c, const struct fdp__action *a)
{
    put_output_port(c, fdp__action_reserved_port(a), 0);
}

/* controller: an output to CONTROLLER when only max_len is given, else
 * NXAST_CONTROLLER, or NXAST_CONTROLLER2 for userdata, pause or a meter,
 * as Open vSwitch's encode_CONTROLLER(). */
static void
put_controller(struct put_ctx *c, const struct fdp__action *a)
{
    struct fdp__controller ctl = fdp__action_controller(a);

    if (fdp__controller_is_plain(&ctl)) {
        put_output_port(c, FDP_PORT_CONTROLLER, ctl.max_len);
        return;
    }
    if (!ctl.userdata_size && !ctl.pause && ctl.meter_id == NX_CTLR_NO_METER) {
        size_t start = start_nx(c, NXAST_CONTROLLER);
        fdp__ofpbuf_put_be16(c->b, ctl.max_len);
        fdp__ofpbuf_put_be16(c->b, ctl.id);
        fdp__ofpbuf_put_u8(c->b, ctl.reason);
        end_action(c, start);
        return;
    }

    size_t start = start_nx(c, NXAST_CONTROLLER2);
    fdp__ofpbuf_put_zeros(c->b, 6);
    if (ctl.max_len != UINT16_MAX) {
        fdp__ofpbuf_put_be16(c->b, NXAC2PT_MAX_LEN);
        fdp__ofpbuf_put_be16(c->b, 8);
        fdp__ofpbuf_put_be16(c->b, ctl.max_len);
        fdp__ofpbuf_put_zeros(c->b, 2);
    }
    if (ctl.id) {
        fdp__ofpbuf_put_be16(c->b, NXAC2PT_CONTROLLER_ID);
        fdp__ofpbuf_put_be16(c->b, 8);
        fdp__ofpbuf_put_be16(c->b, ctl.id);
        fdp__ofpbuf_put_zeros(c->b, 2);
    }
    if (ctl.reason != FDP__CTL_ACTION) {
        fdp__ofpbuf_put_be16(c->b, NXAC2PT_REASON);
        fdp__ofpbuf_put_be16(c->b, 5);
        fdp__ofpbuf_put_u8(c->b, ctl.reason);
        fdp__ofpbuf_put_zeros(c->b, 3);
    }
    if (ctl.userdata_size) {
        size_t p = c->b->size;
        fdp__ofpbuf_put_be16(c->b, NXAC2PT_USERDATA);
        fdp__ofpbuf_put_be16(c->b, (uint16_t) (4 + ctl.userdata_size));
        put_u8s(c, ctl.userdata, ctl.userdata_size);
        fdp__ofpbuf_pad(c->b, p, 8);
    }
    if (ctl.pause) {
        fdp__ofpbuf_put_be16(c->b, NXAC2PT_PAUSE);
        fdp__ofpbuf_put_be16(c->b, 4);
        fdp__ofpbuf_put_zeros(c->b, 4);
    }
    if (ctl.meter_id != NX_CTLR_NO_METER) {
        fdp__ofpbuf_put_be16(c->b, NXAC2PT_METER_ID);
        fdp__ofpbuf_put_be16(c->b, 8);
        fdp__ofpbuf_put_be32(c->b, ctl.meter_id);
    }
    end_action(c, start);
}

/* In 1.1+ OpenFlow's set actions apply only to a tagged packet, so
 * Open vSwitch pushes an 802.1Q tag first unless the match or an earlier
 * action says there is one (encode_SET_VLAN_VID()). */
static void
push_tag_if_needed(struct put_ctx *c)
{
    if (!c->has_vlan) {
        size_t start = start_action(c, OFPAT11_PUSH_VLAN);
        fdp__ofpbuf_put_be16(c->b, 0x8100);
        end_action(c, start);
    }
    c->has_vlan = true;
}

static void
put_vlan_vid(struct put_ctx *c, const struct fdp__action *a)
{
    if (c->v == FDP_OFP10) {
        size_t start = start_action(c, OFPAT10_SET_VLAN_VID);
        fdp__ofpbuf_put_be16(c->b, (uint16_t) a->arg);
        end_action(c, start);
    } else {
        push_tag_if_needed(c);
        put_oxm_set_field(c, FDP_F_DL_VLAN, a->arg, 0, false);
    }
    c->has_vlan = true;
}

static void
put_vlan_pcp(struct put_ctx *c, const struct fdp__action *a)
{
    if (c->v == FDP_OFP10) {
        size_t start = start_action(c, OFPAT10_SET_VLAN_PCP);
        fdp__ofpbuf_put_u8(c->b, (uint8_t) a->arg);
        end_action(c, start);
    } else {
        push_tag_if_needed(c);
        put_oxm_set_field(c, FDP_F_DL_VLAN_PCP, a->arg, 0, false);
    }
    c->has_vlan = true;
}

static void
put_strip_vlan(struct put_ctx *c, const struct fdp__action *a UNUSED_ARG)
{
    size_t start = start_action(c, c->v == FDP_OFP10 ? OFPAT10_STRIP_VLAN
                                                      : OFPAT11_POP_VLAN);
    end_action(c, start);
    c->has_vlan = false;
}

static void
put_push_vlan(struct put_ctx *c, const struct fdp__action *a)
{
    if (c->v == FDP_OFP10) {
        /* OpenFlow 1.0 has no push_vlan, nor has Nicira. */
        c->error = EINVAL;
        return;
    }
    size_t start = start_action(c, OFPAT11_PUSH_VLAN);
    fdp__ofpbuf_put_be16(c->b, (uint16_t) a->arg);
    end_action(c, start);
    c->has_vlan = true;
}

/* The whole-field write, as Open vSwitch's encode_SET_FIELD(). */
static void
put_field_write(struct put_ctx *c, enum fdp_field f, fdp_u128 value, bool mod)
{
    fdp_u128 all = fdp__field(f)->n_bits >= 128
                   ? ~(fdp_u128) 0
                   : ((fdp_u128) 1 << fdp__field(f)->n_bits) - 1;
    const struct legacy_set *ls = legacy_set_for_field(f, c->v, mod);

    if (c->v >= FDP_OFP12 && !ls) {
        put_oxm_set_field(c, f, value, all, false);
        return;
    }
    if (ls) {
        put_legacy_set(c, ls, value);
    } else if (f == FDP_F_DL_VLAN || f == FDP_F_DL_VLAN_PCP) {
        struct fdp__action a = { .arg = (uint32_t) value };
        (f == FDP_F_DL_VLAN ? put_vlan_vid : put_vlan_pcp)(c, &a);
    } else {
        put_reg_loads(c, f, value, all);
    }
}

static void
put_set_field(struct put_ctx *c, const struct fdp__action *a)
{
    put_field_write(c, (enum fdp_field) a->field, fdp__action_value(a),
                    a->flags & FDP__ACT_MOD);
}

/* set_masked: write_metadata is an instruction in 1.1+ (the instruction
 * encoder takes it out of the list) and NXAST_WRITE_METADATA in 1.0; a
 * load goes out as reg_loads before 1.5; 1.5 has only (masked)
 * set_field. */
static void
put_set_masked(struct put_ctx *c, const struct fdp__action *a)
{
    enum fdp_field f = (enum fdp_field) a->field;
    fdp_u128 value = fdp__action_masked_value(a);
    fdp_u128 mask = fdp__action_masked_mask(a);
    unsigned int width = fdp__field(f)->n_bits;
    fdp_u128 all = width >= 128 ? ~(fdp_u128) 0
                                : ((fdp_u128) 1 << width) - 1;

    if (a->flags & FDP__ACT_WRITE_METADATA) {
        if (c->v != FDP_OFP10) {
            c->error = EINVAL;
            return;
        }
        size_t start = start_nx(c, NXAST_WRITE_METADATA);
        fdp__ofpbuf_put_zeros(c->b, 6);
        fdp__ofpbuf_put_be64(c->b, (uint64_t) value);
        fdp__ofpbuf_put_be64(c->b, (uint64_t) mask);
        end_action(c, start);
    } else if (c->v >= FDP_OFP15 && (mask == all || oxm_maskable(c, f))) {
        put_oxm_set_field(c, f, value, mask, mask != all);
    } else if (!(a->flags & FDP__ACT_LOAD) && mask == all) {
        put_field_write(c, f, value, false);
    } else {
        put_reg_loads(c, f, value, mask);
    }
}

static void
put_dec_ttl(struct put_ctx *c, const struct fdp__action *a UNUSED_ARG)
{
    if (c->v == FDP_OFP10) {
        size_t start = start_nx(c, NXAST_DEC_TTL);
        end_action(c, start);
    } else {
        size_t start = start_action(c, OFPAT11_DEC_NW_TTL);
        end_action(c, start);
    }
}

/* resubmit(in_port, table) as NXAST_RESUBMIT_TABLE, which Open vSwitch
 * 3.1 writes for every resubmit it parses. */
static void
put_resubmit_to(struct put_ctx *c, uint32_t port, unsigned int table)
{
    size_t start = start_nx(c, NXAST_RESUBMIT_TABLE);

    fdp__ofpbuf_put_be16(c->b, (uint16_t) port);
    fdp__ofpbuf_put_u8(c->b, (uint8_t) table);
    end_action(c, start);
}

/* goto_table is an instruction in 1.1+ (the instruction encoder takes it
 * out of the list); in 1.0 Open vSwitch writes resubmit(,N). */
static void
put_goto_table(struct put_ctx *c, const struct fdp__action *a)
{
    if (c->v != FDP_OFP10) {
        c->error = EINVAL;
        return;
    }
    put_resubmit_to(c, FDP_PORT_IN_PORT, a->arg);
}

static void
put_resubmit(struct put_ctx *c, const struct fdp__action *a)
{
    put_resubmit_to(c, fdp__action_resubmit_port(a),
                    fdp__action_resubmit_table(a));
}

/* move: NXAST_REG_MOVE before 1.5, OFPAT15_COPY_FIELD in 1.5 (Open
 * vSwitch writes ONF's 1.3 copy_field only for one that came in so). */
static void
put_move(struct put_ctx *c, const struct fdp__action *a)
{
    struct fdp__move m = fdp__action_move(a);

    if (c->v >= FDP_OFP15) {
        size_t start = start_action(c, OFPAT15_COPY_FIELD);
        fdp__ofpbuf_put_be16(c->b, (uint16_t) m.n_bits);
        fdp__ofpbuf_put_be16(c->b, (uint16_t) m.src_ofs);
        fdp__ofpbuf_put_be16(c->b, (uint16_t) m.dst_ofs);
        fdp__ofpbuf_put_zeros(c->b, 2);
        put_field_header(c, m.src, c->v, false);
        put_field_header(c, m.dst, c->v, false);
        end_action(c, start);
        return;
    }
    size_t start = start_nx(c, NXAST_REG_MOVE);
    fdp__ofpbuf_put_be16(c->b, (uint16_t) m.n_bits);
    fdp__ofpbuf_put_be16(c->b, (uint16_t) m.src_ofs);
    fdp__ofpbuf_put_be16(c->b, (uint16_t) m.dst_ofs);
    fdp__ofpbuf_put_be32(c->b, nx_header(c, m.src));
    fdp__ofpbuf_put_be32(c->b, nx_header(c, m.dst));
    end_action(c, start);
}

static void
put_conjunction(struct put_ctx *c, const struct fdp__action *a)
{
    size_t start = start_nx(c, NXAST_CONJUNCTION);

    fdp__ofpbuf_put_u8(c->b, (uint8_t) (fdp__action_conj_clause(a) - 1));
    fdp__ofpbuf_put_u8(c->b, (uint8_t) fdp__action_conj_n(a));
    fdp__ofpbuf_put_be32(c->b, a->arg);
    end_action(c, start);
}

static void put_list(struct put_ctx *c, const uint64_t *first,
                     const uint64_t *end);

/* NXAST_NAT, from a flow-form ct record's nat spec. */
static void
put_nat(struct put_ctx *c, const struct fdp__ct_nat *nat)
{
    size_t start = start_nx(c, NXAST_NAT);
    uint16_t flags = 0, present = 0;

    flags |= nat->flags & FDP__NAT_SRC ? NX_NAT_F_SRC : 0;
    flags |= nat->flags & FDP__NAT_DST ? NX_NAT_F_DST : 0;
    flags |= nat->flags & FDP__NAT_PERSISTENT ? NX_NAT_F_PERSISTENT : 0;
    flags |= nat->flags & FDP__NAT_HASH ? NX_NAT_F_PROTO_HASH : 0;
    flags |= nat->flags & FDP__NAT_RANDOM ? NX_NAT_F_PROTO_RANDOM : 0;

    fdp_u128 lo = fdp__from_value(nat->addr_min);
    fdp_u128 hi = fdp__from_value(nat->addr_max);
    bool v6 = nat->flags & FDP__NAT_IPV6;
    if (nat->flags & FDP__NAT_ADDR) {
        present |= v6 ? NX_NAT_RANGE_IPV6_MIN : NX_NAT_RANGE_IPV4_MIN;
        if (hi != lo) {
            present |= v6 ? NX_NAT_RANGE_IPV6_MAX : NX_NAT_RANGE_IPV4_MAX;
        }
    }
    if (nat->flags & FDP__NAT_PORT) {
        present |= NX_NAT_RANGE_PROTO_MIN;
        if (nat->port_max != nat->port_min) {
            present |= NX_NAT_RANGE_PROTO_MAX;
        }
    }
    fdp__ofpbuf_put_zeros(c->b, 2);
    fdp__ofpbuf_put_be16(c->b, flags);
    fdp__ofpbuf_put_be16(c->b, present);
    if (present & NX_NAT_RANGE_IPV4_MIN) {
        fdp__ofpbuf_put_be32(c->b, (uint32_t) lo);
    }
    if (present & NX_NAT_RANGE_IPV4_MAX) {
        fdp__ofpbuf_put_be32(c->b, (uint32_t) hi);
    }
    if (present & NX_NAT_RANGE_IPV6_MIN) {
        fdp__ofpbuf_put_be64(c->b, (uint64_t) (lo >> 64));
        fdp__ofpbuf_put_be64(c->b, (uint64_t) lo);
    }
    if (present & NX_NAT_RANGE_IPV6_MAX) {
        fdp__ofpbuf_put_be64(c->b, (uint64_t) (hi >> 64));
        fdp__ofpbuf_put_be64(c->b, (uint64_t) hi);
    }
    if (present & NX_NAT_RANGE_PROTO_MIN) {
        fdp__ofpbuf_put_be16(c->b, nat->port_min);
    }
    if (present & NX_NAT_RANGE_PROTO_MAX) {
        fdp__ofpbuf_put_be16(c->b, nat->port_max);
    }
    end_action(c, start);
}

/* One of ct's exec() writes (a SET_MASKED record of four payload words,
 * value and mask of up to 128 bits: see FDP_ACT_CT), as the top-level
 * set_masked would be written. */
static void
put_ct_write(struct put_ctx *c, const struct fdp__action *e)
{
    const uint64_t *w = (const uint64_t *) e;
    enum fdp_field f = (enum fdp_field) e->field;
    fdp_u128 value = (fdp_u128) w[1] << 64 | w[2];
    fdp_u128 mask = (fdp_u128) w[3] << 64 | w[4];
    unsigned int width = fdp__field(f)->n_bits;
    fdp_u128 all = width >= 128 ? ~(fdp_u128) 0
                                : ((fdp_u128) 1 << width) - 1;

    if (c->v >= FDP_OFP15 && (mask == all || oxm_maskable(c, f))) {
        put_oxm_set_field(c, f, value, mask, mask != all);
    } else if (!(e->flags & FDP__ACT_LOAD) && mask == all && c->v >= FDP_OFP12) {
        put_oxm_set_field(c, f, value, all, false);
    } else {
        put_reg_loads(c, f, value, mask);
    }
}

/* ct: NXAST_CT, then its nested actions, nat first where exec_pos says,
 * the rest in order. */
static void
put_ct_action(struct put_ctx *c, const struct fdp__action *a)
{
    if (a->flags & FDP__ACT_CT_RESOLVED) {
        c->error = EINVAL;      /* A composed record is never sent. */
        return;
    }
    unsigned int flags = fdp__action_ct_flags(a);
    size_t start = start_nx(c, NXAST_CT);

    fdp__ofpbuf_put_be16(c->b, (uint16_t) ((flags & FDP__DPCT_COMMIT
                                             ? NX_CT_F_COMMIT : 0)
                                            | (flags & FDP__DPCT_FORCE
                                               ? NX_CT_F_FORCE : 0)));
    if (a->flags & FDP__ACT_CT_ZONE_FIELD) {
        fdp__ofpbuf_put_be32(c->b, nx_header(c, (enum fdp_field) a->field));
        fdp__ofpbuf_put_be16(c->b, ofs_nbits(fdp__action_ct_zone(a), 16));
    } else {
        fdp__ofpbuf_put_be32(c->b, 0);
        fdp__ofpbuf_put_be16(c->b, (uint16_t) fdp__action_ct_zone(a));
    }
    fdp__ofpbuf_put_u8(c->b, flags & FDP__DPCT_RECIRC
                              ? (uint8_t) fdp__action_ct_table(a)
                              : NX_CT_RECIRC_NONE);
    fdp__ofpbuf_put_zeros(c->b, 3);
    fdp__ofpbuf_put_be16(c->b, 0);          /* alg: flowdp has none. */

    const struct fdp__ct_nat *nat = NULL;
    if (flags & FDP__DPCT_NAT) {
        nat = (const struct fdp__ct_nat *) (const void *) (a + 1);
    }
    unsigned int pos = 0;
    for (const uint64_t *e = fdp__action_ct_exec(a); e < fdp__action_ct_end(a);
         e += ((const struct fdp__action *) e)->n_words, pos++) {
        const struct fdp__action *ea = (const struct fdp__action *) e;
        if (nat && pos == nat->exec_pos) {
            put_nat(c, nat);
            nat = NULL;
        }
        if (ea->type == FDP_ACT_SET_MASKED) {
            put_ct_write(c, ea);
        } else {
            put_list(c, e, e + ea->n_words);
        }
        if (!ea->n_words) {
            break;
        }
    }
    if (nat) {
        put_nat(c, nat);
    }
    end_action(c, start);
}

static void
put_ct_clear(struct put_ctx *c, const struct fdp__action *a UNUSED_ARG)
{
    size_t start = start_nx(c, NXAST_CT_CLEAR);
    end_action(c, start);
}

static void
put_stack(struct put_ctx *c, const struct fdp__action *a, uint16_t subtype)
{
    struct fdp__subfield sf = fdp__action_subfield(a);
    size_t start = start_nx(c, subtype);

    fdp__ofpbuf_put_be16(c->b, (uint16_t) sf.ofs);
    fdp__ofpbuf_put_be32(c->b, nx_header(c, sf.field));
    fdp__ofpbuf_put_be16(c->b, (uint16_t) sf.n_bits);
    end_action(c, start);
}

static void
put_stack_push(struct put_ctx *c, const struct fdp__action *a)
{
    put_stack(c, a, NXAST_STACK_PUSH);
}

static void
put_stack_pop(struct put_ctx *c, const struct fdp__action *a)
{
    put_stack(c, a, NXAST_STACK_POP);
}

static void
put_output_reg(struct put_ctx *c, const struct fdp__action *a)
{
    struct fdp__subfield sf = fdp__action_subfield(a);
    size_t start = start_nx(c, NXAST_OUTPUT_REG);

    fdp__ofpbuf_put_be16(c->b, ofs_nbits(sf.ofs, sf.n_bits));
    fdp__ofpbuf_put_be32(c->b, nx_header(c, sf.field));
    fdp__ofpbuf_put_be16(c->b, UINT16_MAX);        /* max_len */
    end_action(c, start);
}

/* note: the bytes, padded with zeros to the action's 8-byte multiple (at
 * least 16 bytes in all), which the decoder then sees as part of the
 * note, as Open vSwitch does. */
static void
put_note(struct put_ctx *c, const struct fdp__action *a)
{
    size_t start = start_nx(c, NXAST_NOTE);

    put_u8s(c, fdp__action_note_data(a), a->arg);
    if (c->b->size - start < 16) {
        fdp__ofpbuf_put_zeros(c->b, 16 - (c->b->size - start));
    }
    end_action(c, start);
}

static void
put_set_queue(struct put_ctx *c, const struct fdp__action *a)
{
    size_t start;

    if (c->v == FDP_OFP10) {
        start = start_nx(c, NXAST_SET_QUEUE);
        fdp__ofpbuf_put_zeros(c->b, 2);
    } else {
        start = start_action(c, OFPAT11_SET_QUEUE);
    }
    fdp__ofpbuf_put_be32(c->b, a->arg);
    end_action(c, start);
}

static void
put_pop_queue(struct put_ctx *c, const struct fdp__action *a UNUSED_ARG)
{
    size_t start = start_nx(c, NXAST_POP_QUEUE);
    end_action(c, start);
}

static void
put_clone(struct put_ctx *c, const struct fdp__action *a)
{
    size_t start = start_nx(c, NXAST_CLONE);

    fdp__ofpbuf_put_zeros(c->b, 6);
    put_list(c, fdp__action_clone_first(a), fdp__action_clone_end(a));
    end_action(c, start);
}

static void
put_group(struct put_ctx *c, const struct fdp__action *a)
{
    size_t start;

    if (c->v == FDP_OFP10) {
        start = start_nx(c, NXAST_GROUP);
        fdp__ofpbuf_put_zeros(c->b, 2);
    } else {
        start = start_action(c, OFPAT11_GROUP);
    }
    fdp__ofpbuf_put_be32(c->b, a->arg);
    end_action(c, start);
}

/* meter: an action only in 1.5; 1.3 and 1.4 have the instruction (which
 * the instruction encoder takes out of the list), and OpenFlow 1.0 has
 * neither: Open vSwitch's encode_METER() then writes nothing, and so
 * does flowdp, so that a dump shows what ovs-vswitchd's would. */
static void
put_meter(struct put_ctx *c, const struct fdp__action *a)
{
    if (c->v >= FDP_OFP15) {
        size_t start = start_action(c, OFPAT15_METER);
        fdp__ofpbuf_put_be32(c->b, a->arg);
        end_action(c, start);
    } else if (c->v != FDP_OFP10) {
        c->error = EINVAL;
    }
}

static void
put_learn(struct put_ctx *c, const struct fdp__action *a);

static void
put_fin_timeout(struct put_ctx *c, const struct fdp__action *a)
{
    size_t start = start_nx(c, NXAST_FIN_TIMEOUT);

    fdp__ofpbuf_put_be16(c->b, (uint16_t) a->arg);
    fdp__ofpbuf_put_be16(c->b, (uint16_t) (a->arg >> 16));
    end_action(c, start);
}

static void
put_check_pkt_larger(struct put_ctx *c, const struct fdp__action *a)
{
    if (a->flags) {
        c->error = EINVAL;      /* A composed branch is never sent. */
        return;
    }
    size_t start = start_nx(c, NXAST_CHECK_PKT_LARGER);

    fdp__ofpbuf_put_be16(c->b, fdp__action_cpl_len(a));
    fdp__ofpbuf_put_be16(c->b, (uint16_t) fdp__action_cpl_ofs(a));
    fdp__ofpbuf_put_be32(c->b, nx_header(c, (enum fdp_field) a->field));
    end_action(c, start);
}

/* The encode column of the action table. */
typedef void put_fn(struct put_ctx *, const struct fdp__action *);

#define KIND_CODEC(ID, FN, PREREQ) [FDP_ACT_##ID] = put_##FN,
static put_fn *const kind_codecs[] = {
    FDP__ACTION_KINDS(KIND_CODEC)
};
#undef KIND_CODEC
static_assert(FDP_ARRAY_SIZE(kind_codecs) == FDP_N_ACTION_TYPES,
              "every action kind has a wire form");

/* Writes the records from 'first' to 'end'. */
static void
put_list(struct put_ctx *c, const uint64_t *first, const uint64_t *end)
{
    for (const uint64_t *w = first; w < end && !c->error; ) {
        const struct fdp__action *a = (const struct fdp__action *) w;
        if (a->type >= FDP_N_ACTION_TYPES || !a->n_words) {
            c->error = EINVAL;
            return;
        }
        kind_codecs[a->type](c, a);
        w += a->n_words;
    }
}

/* True if 'm' says the packet is tagged (Open vSwitch's flow_has_vlan:
 * the TCI's CFI bit, which dl_vlan and dl_vlan_pcp imply). */
static bool
match_has_vlan(const struct fdp_match *m)
{
    struct fdp_value v;

    if (!m) {
        return false;
    }
    if (fdp_match_get(m, FDP_F_DL_VLAN, &v)
        || fdp_match_get(m, FDP_F_DL_VLAN_PCP, &v)) {
        return true;
    }
    return fdp_match_get(m, FDP_F_VLAN_TCI, &v) && (v.lo & 0x1000);
}

static void
put_ctx_init(struct put_ctx *c, struct fdp__ofpbuf *b,
             enum fdp_ofp_version v, const struct fdp_tlv_map *tlv,
             const struct fdp_match *match)
{
    *c = (struct put_ctx) { .b = b, .v = v, .tlv = tlv, .match = match,
                            .has_vlan = match_has_vlan(match) };
    if (v == FDP_OFP11 || v < FDP_OFP10 || v > FDP_OFP15) {
        /* OpenFlow 1.1 has neither 1.0's set actions nor 1.2's
         * set_field, and flowdp does not speak it (ISSUE: 1.0, 1.3, 1.4
         * and 1.5; 1.2 shares 1.3's actions). */
        c->error = EINVAL;
    }
}

/* Ends an encoding begun at 'start': the bytes appended, or -1 with
 * nothing appended. */
static int
put_finish(struct put_ctx *c, size_t start)
{
    if (c->error || fdp__ofpbuf_failed(c->b)
        || c->b->size - start > INT32_MAX) {
        if (!fdp__ofpbuf_failed(c->b)) {
            c->b->size = start;
        }
        return -1;
    }
    return (int) (c->b->size - start);
}

int
fdp__ofp_actions_put_match(struct fdp__ofpbuf *b,
                           const struct fdp_actions *acts,
                           enum fdp_ofp_version v,
                           const struct fdp_tlv_map *tlv,
                           const struct fdp_match *match)
{
    struct put_ctx c;
    size_t start = b->size;

    put_ctx_init(&c, b, v, tlv, match);
    if (acts) {
        put_list(&c, acts->words, acts->words + acts->n_words);
    }
    return put_finish(&c, start);
}

int
fdp__ofp_actions_put(struct fdp__ofpbuf *b, const struct fdp_actions *acts,
                     enum fdp_ofp_version v, const struct fdp_tlv_map *tlv)
{
    return fdp__ofp_actions_put_match(b, acts, v, tlv, NULL);
}

/* True for the records that are instructions of their own in 1.1+. */
static bool
is_instruction(const struct fdp__action *a, enum fdp_ofp_version v)
{
    return a->type == FDP_ACT_GOTO_TABLE
           || (a->type == FDP_ACT_METER && v < FDP_OFP15)
           || (a->type == FDP_ACT_SET_MASKED
               && (a->flags & FDP__ACT_WRITE_METADATA));
}

int
fdp__ofp_instructions_put_match(struct fdp__ofpbuf *b,
                                const struct fdp_actions *acts,
                                enum fdp_ofp_version v,
                                const struct fdp_tlv_map *tlv,
                                const struct fdp_match *match)
{
    struct put_ctx c;
    size_t start = b->size;
    const struct fdp__action *meter = NULL, *goto_table = NULL;
    const struct fdp__action *metadata = NULL;
    bool any_applied = false;

    put_ctx_init(&c, b, v, tlv, match);
    if (v == FDP_OFP10) {
        return fdp__ofp_actions_put_match(b, acts, v, tlv, match);
    }
    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a)) {
        if (!is_instruction(a, v)) {
            any_applied = true;
        } else if (a->type == FDP_ACT_METER) {
            meter = a;
        } else if (a->type == FDP_ACT_GOTO_TABLE) {
            goto_table = a;
        } else {
            metadata = a;
        }
    }

    if (meter) {
        size_t s = start_action(&c, OFPIT13_METER);
        fdp__ofpbuf_put_be32(b, meter->arg);
        end_action(&c, s);
    }
    if (any_applied) {
        size_t s = start_action(&c, OFPIT_APPLY_ACTIONS);
        fdp__ofpbuf_put_zeros(b, 4);
        for (const struct fdp__action *a = fdp__actions_first(acts);
             a && !c.error; a = fdp__actions_next(acts, a)) {
            if (!is_instruction(a, v)) {
                put_list(&c, (const uint64_t *) a,
                         (const uint64_t *) a + a->n_words);
            }
        }
        end_action(&c, s);
    }
    if (metadata) {
        size_t s = start_action(&c, OFPIT_WRITE_METADATA);
        fdp__ofpbuf_put_zeros(b, 4);
        fdp__ofpbuf_put_be64(b, (uint64_t) fdp__action_masked_value(metadata));
        fdp__ofpbuf_put_be64(b, (uint64_t) fdp__action_masked_mask(metadata));
        end_action(&c, s);
    }
    if (goto_table) {
        size_t s = start_action(&c, OFPIT_GOTO_TABLE);
        fdp__ofpbuf_put_u8(b, (uint8_t) goto_table->arg);
        end_action(&c, s);
    }
    return put_finish(&c, start);
}

int
fdp__ofp_instructions_put(struct fdp__ofpbuf *b,
                          const struct fdp_actions *acts,
                          enum fdp_ofp_version v,
                          const struct fdp_tlv_map *tlv)
{
    return fdp__ofp_instructions_put_match(b, acts, v, tlv, NULL);
}

/* ---------------------------------------------------------------------- */
/* Decoding.                                                               */

struct pull_ctx {
    enum fdp_ofp_version v;
    const struct fdp_tlv_map *tlv;
    struct fdp__actions_builder *b;
    unsigned int depth;         /* Of clone() nesting. */
    /* Set by NXAST_NAT, which is valid only inside ct (pull_ct()). */
    struct fdp__ct_nat *nat;
    bool in_ct;
    bool instructions;          /* OpenFlow 1.0's flow list, where
                                 * NXAST_WRITE_METADATA (an instruction)
                                 * may stand; not in a packet-out's or a
                                 * bucket's actions. */
};

static int pull_list(struct pull_ctx *, struct fdp__ofp_reader *);

/* The rest of an action's reader must be zeros (padding). */
static int
check_zeros(const struct fdp__ofp_reader *r, int error)
{
    for (size_t i = 0; i < r->left; i++) {
        if (r->p[i]) {
            return error;
        }
    }
    return 0;
}

static uint16_t
get16(struct fdp__ofp_reader *r)
{
    const uint8_t *p = fdp__ofp_pull(r, 2);
    return p ? fdp__ofp_get_be16(p) : 0;
}

static uint32_t
get32(struct fdp__ofp_reader *r)
{
    const uint8_t *p = fdp__ofp_pull(r, 4);
    return p ? fdp__ofp_get_be32(p) : 0;
}

static uint64_t
get64(struct fdp__ofp_reader *r)
{
    const uint8_t *p = fdp__ofp_pull(r, 8);
    return p ? fdp__ofp_get_be64(p) : 0;
}

static uint8_t
get8(struct fdp__ofp_reader *r)
{
    const uint8_t *p = fdp__ofp_pull(r, 1);
    return p ? p[0] : 0;
}

/* An output to wire port 'port' (already a 16-bit flowdp port) with
 * 'max_len': the kind depends on the port. */
static int
add_output(struct pull_ctx *c, uint32_t port, uint16_t max_len)
{
    switch (port) {
    case FDP_PORT_IN_PORT:
        fdp__actions_add(c->b, FDP_ACT_IN_PORT, 0);
        return 0;
    case FDP_PORT_CONTROLLER: {
        struct fdp__controller ctl = { .max_len = max_len,
                                       .reason = FDP__CTL_ACTION };
        return fdp__actions_add_controller(c->b, &ctl)
               ? FDP_OFPBAC_BAD_ARGUMENT : 0;
    }
    case FDP_PORT_NORMAL:
    case FDP_PORT_FLOOD:
    case FDP_PORT_ALL:
    case FDP_PORT_LOCAL:
        fdp__actions_add(c->b, FDP_ACT_RESERVED, port);
        return 0;
    case FDP_PORT_TABLE:
        /* The tables from table 0, with the packet's in_port: Open
         * vSwitch's xlate_table_action(in_port, 0) is a resubmit(,0).
         * (Meant for packet-outs; a flow may hold it too, as in Open
         * vSwitch, and it re-encodes as that resubmit.) */
        fdp__actions_add_resubmit(c->b, FDP_PORT_IN_PORT, 0);
        return 0;
    default:
        /* OFPP_NONE and the unused reserved range: flowdp outputs to
         * neither (Open vSwitch's ofpact_check_output_port() refuses
         * them). */
        if (port >= FDP_PORT_MAX) {
            return FDP_OFPBAC_BAD_OUT_PORT;
        }
        fdp__actions_add(c->b, FDP_ACT_OUTPUT, port);
        return 0;
    }
}

/* A 32-bit OpenFlow 1.1+ port as flowdp's 16-bit one
 * (ofputil_port_from_ofp11()); false if it has none. */
static bool
port_from_ofp11(uint32_t port, uint32_t *out)
{
    if (port < FDP_PORT_MAX) {
        *out = port;
        return true;
    }
    if (port >= OFPP11_MAX) {
        *out = port - OFPP11_OFFSET;
        return true;
    }
    return false;
}

static int
pull_output10(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint32_t port = get16(r);
    uint16_t max_len = get16(r);

    return add_output(c, port, max_len);
}

static int
pull_output11(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint32_t port;

    if (!port_from_ofp11(get32(r), &port)) {
        return FDP_OFPBAC_BAD_OUT_PORT;
    }
    return add_output(c, port, get16(r));
}

static int
pull_set_vlan_vid(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint16_t vid = get16(r);

    if (vid & ~0xfffu) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    fdp__actions_add(c->b, FDP_ACT_SET_VLAN_VID, vid);
    return 0;
}

static int
pull_set_vlan_pcp(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint8_t pcp = get8(r);

    if (pcp & ~7u) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    fdp__actions_add(c->b, FDP_ACT_SET_VLAN_PCP, pcp);
    return 0;
}

static int
pull_strip_vlan(struct pull_ctx *c, struct fdp__ofp_reader *r UNUSED_ARG)
{
    fdp__actions_add(c->b, FDP_ACT_STRIP_VLAN, 0);
    return 0;
}

static int
pull_push_vlan(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint16_t tpid = get16(r);

    /* Open vSwitch's decode_OFPAT_RAW11_PUSH_VLAN(): only the two TPIDs. */
    if (tpid != 0x8100 && tpid != 0x88a8) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    fdp__actions_add(c->b, FDP_ACT_PUSH_VLAN, tpid);
    return 0;
}

/* OpenFlow 1.0's set actions (OFPAT10_SET_DL_SRC...): the type says the
 * field. */
static int
pull_legacy_set(struct pull_ctx *c, struct fdp__ofp_reader *r, uint16_t type)
{
    const struct legacy_set *ls = legacy_set_for_type(type);
    const uint8_t *p = ls ? fdp__ofp_pull(r, ls->n_bytes) : NULL;
    fdp_u128 value = 0;

    if (!ls || !p) {
        return FDP_OFPBAC_BAD_LEN;
    }
    for (unsigned int i = 0; i < ls->n_bytes; i++) {
        value = value << 8 | p[i];
    }
    if (value & ((1u << ls->shift) - 1)) {
        /* nw_tos's ECN bits: Open vSwitch's decode_OFPAT_RAW_SET_NW_TOS()
         * refuses them. */
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    value >>= ls->shift;
    return fdp__actions_add_set_field(c->b, ls->field, value, FDP__ACT_MOD)
           ? FDP_OFPBAC_BAD_ARGUMENT : 0;
}

#define LEGACY_PULL(TYPE)                                                   \
    static int                                                              \
    pull_##TYPE(struct pull_ctx *c, struct fdp__ofp_reader *r)              \
    {                                                                       \
        return pull_legacy_set(c, r, TYPE);                                 \
    }
LEGACY_PULL(OFPAT10_SET_DL_SRC)
LEGACY_PULL(OFPAT10_SET_DL_DST)
LEGACY_PULL(OFPAT10_SET_NW_SRC)
LEGACY_PULL(OFPAT10_SET_NW_DST)
LEGACY_PULL(OFPAT10_SET_NW_TOS)
LEGACY_PULL(OFPAT10_SET_TP_SRC)
LEGACY_PULL(OFPAT10_SET_TP_DST)
#undef LEGACY_PULL

/* OFPAT10_ENQUEUE: flowdp's enqueue is set_queue, output, pop_queue. */
static int
pull_enqueue(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint32_t port = get16(r);
    fdp__ofp_pull(r, 6);
    uint32_t queue = get32(r);

    if (port >= FDP_PORT_MAX && port != FDP_PORT_IN_PORT
        && port != FDP_PORT_LOCAL) {
        return FDP_OFPBAC_BAD_OUT_PORT;
    }
    fdp__actions_add(c->b, FDP_ACT_SET_QUEUE, queue);
    int error = add_output(c, port, 0);
    fdp__actions_add(c->b, FDP_ACT_POP_QUEUE, 0);
    return error;
}

static int
pull_set_nw_ttl(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    return fdp__actions_add_set_field(c->b, FDP_F_NW_TTL, get8(r),
                                      FDP__ACT_MOD)
           ? FDP_OFPBAC_BAD_ARGUMENT : 0;
}

static int
pull_dec_ttl(struct pull_ctx *c, struct fdp__ofp_reader *r UNUSED_ARG)
{
    fdp__actions_add(c->b, FDP_ACT_DEC_TTL, 0);
    return 0;
}

/* NXAST_DEC_TTL_CNT_IDS: flowdp's dec_ttl sends its packet-in to
 * controller id 0 only, which is this action with the one id 0. */
static int
pull_dec_ttl_ids(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint16_t n = get16(r);
    const uint8_t *pad = fdp__ofp_pull(r, 4);

    if (!pad || pad[0] || pad[1] || pad[2] || pad[3]) {
        return FDP_NXBAC_MUST_BE_ZERO;
    }
    if ((size_t) n * 2 > r->left) {
        return FDP_OFPBAC_BAD_LEN;
    }
    if (n != 1 || get16(r) != 0) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    fdp__actions_add(c->b, FDP_ACT_DEC_TTL, 0);
    return 0;
}

static int
pull_set_queue11(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    fdp__actions_add(c->b, FDP_ACT_SET_QUEUE, get32(r));
    return 0;
}

static int
pull_set_queue_nx(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    fdp__ofp_pull(r, 2);
    fdp__actions_add(c->b, FDP_ACT_SET_QUEUE, get32(r));
    return 0;
}

static int
pull_pop_queue(struct pull_ctx *c, struct fdp__ofp_reader *r UNUSED_ARG)
{
    fdp__actions_add(c->b, FDP_ACT_POP_QUEUE, 0);
    return 0;
}

static int
add_group(struct pull_ctx *c, uint32_t id)
{
    if (id > FDP_GROUP_MAX) {
        return FDP_OFPBAC_BAD_OUT_GROUP;
    }
    fdp__actions_add(c->b, FDP_ACT_GROUP, id);
    return 0;
}

static int
pull_group11(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    return add_group(c, get32(r));
}

static int
pull_group_nx(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    fdp__ofp_pull(r, 2);
    return add_group(c, get32(r));
}

static int
add_meter(struct pull_ctx *c, uint32_t id)
{
    if (!id || id > FDP_METER_MAX_ID) {
        return FDP_OFPMMFC_INVALID_METER;
    }
    fdp__actions_add(c->b, FDP_ACT_METER, id);
    return 0;
}

static int
pull_meter15(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    return add_meter(c, get32(r));
}

static int
add_resubmit(struct pull_ctx *c, uint32_t port, unsigned int table)
{
    if (port >= FDP_PORT_MAX && port != FDP_PORT_IN_PORT
        && port != FDP_PORT_LOCAL) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    fdp__actions_add_resubmit(c->b, port, table);
    return 0;
}

static int
pull_resubmit(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    return add_resubmit(c, get16(r), FDP__RESUBMIT_SAME_TABLE);
}

static int
pull_resubmit_table(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint32_t port = get16(r);
    uint8_t table = get8(r);

    if (check_zeros(r, 1)) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    return add_resubmit(c, port, table);
}

static int
pull_conjunction(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    unsigned int clause = get8(r);
    unsigned int n = get8(r);
    uint32_t id = get32(r);

    return fdp__actions_add_conjunction(c->b, id, clause + 1, n)
           ? FDP_OFPBAC_BAD_ARGUMENT : 0;
}

static int
pull_ct_clear(struct pull_ctx *c, struct fdp__ofp_reader *r UNUSED_ARG)
{
    fdp__actions_add(c->b, FDP_ACT_CT_CLEAR, 0);
    return 0;
}

static int
pull_note(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    return fdp__actions_add_note(c->b, r->p, r->left)
           ? FDP_OFPBAC_BAD_LEN : 0;
}

static int
pull_fin_timeout(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint32_t idle = get16(r);
    uint32_t hard = get16(r);

    fdp__actions_add(c->b, FDP_ACT_FIN_TIMEOUT, idle | hard << 16);
    return 0;
}

/* NXAST_CONTROLLER. */
static int
pull_controller(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    struct fdp__controller ctl = { .max_len = get16(r) };

    ctl.id = get16(r);
    ctl.reason = get8(r);
    if (get8(r)) {
        return FDP_NXBAC_MUST_BE_ZERO;
    }
    if (ctl.reason >= FDP__CTL_N_REASONS) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    return fdp__actions_add_controller(c->b, &ctl)
           ? FDP_OFPBAC_BAD_ARGUMENT : 0;
}

/* NXAST_CONTROLLER2: properties, each a type, a length (of the header
 * and the value, not the padding to 8 bytes) and the value. */
static int
pull_controller2(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    struct fdp__controller ctl = { .max_len = UINT16_MAX,
                                   .reason = FDP__CTL_ACTION,
                                   .meter_id = NX_CTLR_NO_METER };
    const uint8_t *pad = fdp__ofp_pull(r, 6);

    if (!pad) {
        return FDP_OFPBAC_BAD_LEN;
    }
    for (int i = 0; i < 6; i++) {
        if (pad[i]) {
            return FDP_NXBRC_MUST_BE_ZERO;
        }
    }
    while (r->left) {
        if (r->left < 4) {
            return FDP_OFPBAC_BAD_LEN;
        }
        uint16_t type = fdp__ofp_get_be16(r->p);
        size_t len = fdp__ofp_get_be16(r->p + 2);
        size_t padded = (len + 7) / 8 * 8;
        struct fdp__ofp_reader pr;
        if (len < 4 || padded > r->left
            || !fdp__ofp_pull_reader(r, padded, &pr)) {
            return FDP_OFPBAC_BAD_LEN;
        }
        fdp__ofp_pull(&pr, 4);
        size_t n = len - 4;
        switch (type) {
        case NXAC2PT_MAX_LEN:
            if (n < 2) {
                return FDP_OFPBAC_BAD_LEN;
            }
            ctl.max_len = get16(&pr);
            break;
        case NXAC2PT_CONTROLLER_ID:
            if (n < 2) {
                return FDP_OFPBAC_BAD_LEN;
            }
            ctl.id = get16(&pr);
            break;
        case NXAC2PT_REASON:
            if (n < 1) {
                return FDP_OFPBAC_BAD_LEN;
            }
            ctl.reason = get8(&pr);
            if (ctl.reason >= FDP__CTL_N_REASONS) {
                return FDP_OFPBAC_BAD_ARGUMENT;
            }
            break;
        case NXAC2PT_USERDATA:
            ctl.userdata = pr.p;
            ctl.userdata_size = n;
            break;
        case NXAC2PT_PAUSE:
            ctl.pause = true;
            break;
        case NXAC2PT_METER_ID:
            if (n < 4) {
                return FDP_OFPBAC_BAD_LEN;
            }
            ctl.meter_id = get32(&pr);
            break;
        default:
            /* Open vSwitch refuses an unknown property
             * (OFPBPC_BAD_TYPE, which flowdp's error table lacks). */
            return FDP_OFPBAC_BAD_ARGUMENT;
        }
    }
    return fdp__actions_add_controller(c->b, &ctl)
           ? FDP_OFPBAC_BAD_ARGUMENT : 0;
}

/* NXAST_CLONE: the nested list, decoded into a builder of its own. */
static int
pull_clone(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    const uint8_t *pad = fdp__ofp_pull(r, 6);

    if (!pad) {
        return FDP_OFPBAC_BAD_LEN;
    }
    if (c->depth >= MAX_NESTING) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }

    struct fdp__actions_builder nb;
    struct pull_ctx nc = *c;
    fdp__actions_builder_init(&nb);
    nc.b = &nb;
    nc.depth++;
    nc.in_ct = false;
    int error = pull_list(&nc, r);
    if (!error && nb.error) {
        error = FDP_OFPERR_NOMEM;
    }
    if (!error && fdp__actions_add_clone(c->b, nb.words, nb.n_words)) {
        error = FDP_OFPBAC_BAD_LEN;
    }
    fdp__actions_builder_destroy(&nb);
    return error;
}

/* ---- Field-based actions (the rows of lib/ofp-match.h) ---- */

/* 'row' if it names a field of the key; NULL for tun_metadataN, whose
 * value a TLV map places (fdp__ofp_field_id() is FDP_N_FIELDS for them)
 * and which flowdp's actions do not write. */
static const struct fdp__ofp_field *
key_row(const struct fdp__ofp_field *row)
{
    return row && (unsigned int) fdp__ofp_field_id(row) < FDP_N_FIELDS
           ? row : NULL;
}

/* Reads an NXM/OXM header (and an experimenter id after class 0xffff);
 * the row, or NULL for a field flowdp lacks.  '*hp' gets the header. */
static const struct fdp__ofp_field *
pull_field_header(struct fdp__ofp_reader *r, uint32_t *hp)
{
    const uint8_t *p = fdp__ofp_pull(r, 4);
    uint32_t exp = 0;

    if (!p) {
        *hp = 0;
        return NULL;
    }
    *hp = fdp__ofp_get_be32(p);
    if (*hp >> 16 == 0xffff) {
        const uint8_t *e = fdp__ofp_pull(r, 4);
        if (!e) {
            return NULL;
        }
        exp = fdp__ofp_get_be32(e);
    }
    return key_row(fdp__ofp_field_by_header(*hp, exp));
}

/* The key's width of the field of 'row'. */
static unsigned int
row_width(const struct fdp__ofp_field *row)
{
    return fdp__field(fdp__ofp_field_id(row))->n_bits;
}

/* Checks that bits ofs..ofs+n_bits-1 are inside the field of 'row' as
 * Open vSwitch numbers them (mf_check_src()/mf_check_dst()). */
static bool
subfield_ok(const struct fdp__ofp_field *row, unsigned int ofs,
            unsigned int n_bits)
{
    return n_bits && ofs + n_bits <= fdp__ofp_field_n_bits(row)
           && ofs + n_bits <= 128;
}

/* True if flowdp's pipeline writes field 'f' with set_field or load
 * (the parser's set_field names and writable NXM names): a decoded write
 * builds only records the parser could have built, which the pipeline
 * and datapath run. */
static bool
flowdp_writes(enum fdp_field f)
{
    for (size_t i = 0; i < fdp__n_set_field_names; i++) {
        if (fdp__set_field_names[i].field == f) {
            return true;
        }
    }
    for (size_t i = 0; i < fdp__n_nxm_fields; i++) {
        if (fdp__nxm_fields[i].field == f && fdp__nxm_fields[i].writable) {
            return true;
        }
    }
    return false;
}

/* A write of 'value' under 'mask' into 'row's field, as a decoded
 * set_field or load: SET_FIELD for a whole-field set_field, else
 * SET_MASKED with 'flags'.  OXM's vlan_vid and vlan_pcp, which flowdp
 * writes only as mod_vlan_vid and mod_vlan_pcp, become those (after the
 * push_vlan Open vSwitch writes before them, or under a match with a
 * tag, they do the same; and they encode back to the same bytes). */
static int
add_write(struct pull_ctx *c, const struct fdp__ofp_field *row,
          fdp_u128 value, fdp_u128 mask, bool whole, uint8_t flags)
{
    enum fdp_field f = fdp__ofp_field_id(row);
    unsigned int width = fdp__field(f)->n_bits;
    fdp_u128 all = width >= 128 ? ~(fdp_u128) 0
                                : ((fdp_u128) 1 << width) - 1;

    if (!fdp__ofp_field_writable(row) || f == FDP_F_CT_MARK
        || f == FDP_F_CT_LABEL) {
        /* ct_mark and ct_label are written only inside ct (Open vSwitch:
         * "cannot set CT fields outside of ct action"). */
        return FDP_OFPBAC_BAD_SET_ARGUMENT;
    }
    mask &= all;
    value &= mask;
    if (!mask) {
        return FDP_OFPBAC_BAD_SET_ARGUMENT;
    }
    if ((f == FDP_F_DL_VLAN || f == FDP_F_DL_VLAN_PCP) && whole
        && mask == all && !flags) {
        fdp__actions_add(c->b, f == FDP_F_DL_VLAN ? FDP_ACT_SET_VLAN_VID
                                                  : FDP_ACT_SET_VLAN_PCP,
                         (uint32_t) value);
        return 0;
    }
    if (!flowdp_writes(f)) {
        return FDP_OFPBAC_BAD_SET_ARGUMENT;
    }
    if (whole && mask == all && !flags) {
        return fdp__actions_add_set_field(c->b, f, value, 0)
               ? FDP_OFPBAC_BAD_SET_ARGUMENT : 0;
    }
    if (width > 64 && fdp__field(f)->n_bits <= 64) {
        return FDP_OFPBAC_BAD_SET_ARGUMENT;
    }
    return fdp__actions_add_set_masked(c->b, f, value, mask, flags)
           ? FDP_OFPBAC_BAD_SET_ARGUMENT : 0;
}

/* Inside ct, a write must be to ct_mark or ct_label (Open vSwitch's
 * errors: an unwritable field, then any other field). */
static int
check_ct_write(const struct fdp__ofp_field *row)
{
    enum fdp_field f = fdp__ofp_field_id(row);

    if (f == FDP_F_CT_MARK || f == FDP_F_CT_LABEL) {
        /* (The field table marks them read-only: only ct writes them.) */
        return 0;
    }
    return fdp__ofp_field_writable(row) ? FDP_OFPBAC_BAD_ARGUMENT
                                        : FDP_OFPBAC_BAD_SET_ARGUMENT;
}

/* OFPAT12_SET_FIELD: one OXM entry, masked only in 1.5, then zeros to
 * the action's end. */
static int
pull_oxm_write(struct pull_ctx *c, struct fdp__ofp_reader *r, bool may_mask,
               uint8_t flags)
{
    uint32_t h;
    const struct fdp__ofp_field *row = pull_field_header(r, &h);
    bool masked = (h >> 8) & 1;

    if (!row) {
        return FDP_OFPBAC_BAD_SET_TYPE;
    }
    if (masked && (!may_mask || !fdp__ofp_field_maskable(row))) {
        return FDP_OFPBAC_BAD_SET_MASK;
    }
    unsigned int n = fdp__ofp_field_n_bytes(row);
    if ((h & 0xff) != (masked ? 2 * n : n) + (h >> 16 == 0xffff ? 4 : 0)) {
        return FDP_OFPBAC_BAD_SET_LEN;
    }
    const uint8_t *vp = fdp__ofp_pull(r, n);
    const uint8_t *mp = masked ? fdp__ofp_pull(r, n) : NULL;
    if (!vp || (masked && !mp)) {
        return FDP_OFPBAC_BAD_SET_LEN;
    }
    if (check_zeros(r, 1)) {
        return FDP_OFPBAC_BAD_SET_ARGUMENT;
    }
    for (unsigned int i = 0; masked && i < n; i++) {
        if (vp[i] & ~mp[i]) {
            /* Open vSwitch's nx_pull_entry(): 1-bits the mask leaves
             * out. */
            return FDP_OFPBMC_BAD_WILDCARDS;
        }
    }

    fdp_u128 value, mask = ~(fdp_u128) 0;
    if (fdp__ofp_field_from_wire(row, vp, &value)
        || (mp && fdp__ofp_mask_from_wire(row, mp, &mask))) {
        return FDP_OFPBAC_BAD_SET_ARGUMENT;
    }
    if (c->in_ct) {
        int error = check_ct_write(row);
        if (error) {
            return error;
        }
        /* Inside ct(exec()), a write keeps its 128 bits (FDP_ACT_CT). */
        return fdp__actions_add_ct_write(c->b, fdp__ofp_field_id(row),
                                         value & mask, mask
                                         & (row_width(row) >= 128
                                            ? ~(fdp_u128) 0
                                            : ((fdp_u128) 1
                                               << row_width(row)) - 1),
                                         flags)
               ? FDP_OFPBAC_BAD_SET_ARGUMENT : 0;
    }
    return add_write(c, row, value, mask, !flags, flags);
}

static int
pull_set_field(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    return pull_oxm_write(c, r, c->v >= FDP_OFP15, 0);
}

/* NXAST_REG_LOAD2: one NXM/OXM entry, maybe masked, right after the
 * subtype; what Open vSwitch writes for a field NXAST_REG_LOAD cannot
 * name (an experimenter OXM). */
static int
pull_reg_load2(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    return pull_oxm_write(c, r, true, FDP__ACT_LOAD);
}

/* NXAST_REG_LOAD: 'n_bits' bits at 'ofs' of the destination. */
static int
pull_reg_load(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint16_t on = get16(r);
    uint32_t h;
    const struct fdp__ofp_field *row = pull_field_header(r, &h);
    uint64_t value = get64(r);
    unsigned int ofs = on >> 6, n_bits = (on & 0x3f) + 1;

    if (!row) {
        return FDP_OFPBAC_BAD_SET_TYPE;
    }
    if (!subfield_ok(row, ofs, n_bits)) {
        return FDP_OFPBAC_BAD_SET_ARGUMENT;
    }
    if (n_bits < 64 && value >> n_bits) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    fdp_u128 mask = (n_bits >= 128 ? ~(fdp_u128) 0
                                   : ((fdp_u128) 1 << n_bits) - 1) << ofs;
    if (c->in_ct) {
        int error = check_ct_write(row);
        if (error) {
            return error;
        }
        return fdp__actions_add_ct_write(c->b, fdp__ofp_field_id(row),
                                         (fdp_u128) value << ofs, mask,
                                         FDP__ACT_LOAD)
               ? FDP_OFPBAC_BAD_SET_ARGUMENT : 0;
    }
    return add_write(c, row, (fdp_u128) value << ofs, mask, false,
                     FDP__ACT_LOAD);
}

/* NXAST_REG_MOVE and OFPAT15_COPY_FIELD. */
static int
add_move(struct pull_ctx *c, unsigned int n_bits, unsigned int src_ofs,
         unsigned int dst_ofs, const struct fdp__ofp_field *src,
         const struct fdp__ofp_field *dst)
{
    if (!src || !dst) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    if (!subfield_ok(src, src_ofs, n_bits) || !subfield_ok(dst, dst_ofs, n_bits)
        || src_ofs + n_bits > row_width(src)
        || dst_ofs + n_bits > row_width(dst)) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    enum fdp_field df = fdp__ofp_field_id(dst);
    bool ct_dst = df == FDP_F_CT_MARK || df == FDP_F_CT_LABEL;
    if (c->in_ct ? !ct_dst : !fdp__ofp_field_writable(dst) || ct_dst) {
        /* Inside ct only ct_mark and ct_label (which only ct writes). */
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    return fdp__actions_add_move(c->b, fdp__ofp_field_id(src), src_ofs,
                                 fdp__ofp_field_id(dst), dst_ofs, n_bits)
           ? FDP_OFPBAC_BAD_ARGUMENT : 0;
}

static int
pull_reg_move(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    unsigned int n_bits = get16(r), src_ofs = get16(r), dst_ofs = get16(r);
    uint32_t h;
    const struct fdp__ofp_field *src = pull_field_header(r, &h);
    const struct fdp__ofp_field *dst = pull_field_header(r, &h);

    if (check_zeros(r, 1)) {
        return FDP_NXBAC_MUST_BE_ZERO;
    }
    return add_move(c, n_bits, src_ofs, dst_ofs, src, dst);
}

static int
pull_copy_field(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    unsigned int n_bits = get16(r), src_ofs = get16(r), dst_ofs = get16(r);
    fdp__ofp_pull(r, 2);
    uint32_t h;
    const struct fdp__ofp_field *src = pull_field_header(r, &h);
    const struct fdp__ofp_field *dst = pull_field_header(r, &h);

    if (check_zeros(r, 1)) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    return add_move(c, n_bits, src_ofs, dst_ofs, src, dst);
}

/* ONF's copy_field for 1.3: after the experimenter header its type
 * (3200), two bytes of padding, then OpenFlow 1.5's body. */
static int
pull_onf_copy_field(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    fdp__ofp_pull(r, 2);
    return pull_copy_field(c, r);
}

/* A subfield operand: the row and bits, checked. */
static int
add_subfield(struct pull_ctx *c, enum fdp_action_type type,
             const struct fdp__ofp_field *row, unsigned int ofs,
             unsigned int n_bits)
{
    if (!row || !subfield_ok(row, ofs, n_bits)
        || ofs + n_bits > row_width(row)) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    return fdp__actions_add_subfield(c->b, type, fdp__ofp_field_id(row), ofs,
                                     n_bits)
           ? FDP_OFPBAC_BAD_ARGUMENT : 0;
}

static int
pull_stack(struct pull_ctx *c, struct fdp__ofp_reader *r,
           enum fdp_action_type type)
{
    unsigned int ofs = get16(r);
    uint32_t h;
    const struct fdp__ofp_field *row = pull_field_header(r, &h);
    unsigned int n_bits = get16(r);

    if (check_zeros(r, 1)) {
        return FDP_NXBAC_MUST_BE_ZERO;
    }
    return add_subfield(c, type, row, ofs, n_bits);
}

static int
pull_stack_push(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    return pull_stack(c, r, FDP_ACT_STACK_PUSH);
}

static int
pull_stack_pop(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    return pull_stack(c, r, FDP_ACT_STACK_POP);
}

static int
pull_output_reg(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint16_t on = get16(r);
    uint32_t h;
    const struct fdp__ofp_field *row = pull_field_header(r, &h);
    uint16_t max_len = get16(r);

    if (check_zeros(r, 1)) {
        return FDP_NXBAC_MUST_BE_ZERO;
    }
    /* flowdp's output:FIELD sends whole packets. */
    if (max_len != UINT16_MAX) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    return add_subfield(c, FDP_ACT_OUTPUT_REG, row, on >> 6, (on & 0x3f) + 1);
}

/* NXAST_OUTPUT_REG2: the same, with the field last (so that it may be an
 * experimenter OXM). */
static int
pull_output_reg2(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint16_t on = get16(r);
    uint16_t max_len = get16(r);
    uint32_t h;
    const struct fdp__ofp_field *row = pull_field_header(r, &h);

    if (check_zeros(r, 1)) {
        return FDP_NXBAC_MUST_BE_ZERO;
    }
    if (max_len != UINT16_MAX) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    return add_subfield(c, FDP_ACT_OUTPUT_REG, row, on >> 6, (on & 0x3f) + 1);
}

static int
pull_check_pkt_larger(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint16_t len = get16(r);
    unsigned int ofs = get16(r);
    uint32_t h;
    const struct fdp__ofp_field *row = pull_field_header(r, &h);

    if (check_zeros(r, 1)) {
        return FDP_NXBAC_MUST_BE_ZERO;
    }
    if (!row || !subfield_ok(row, ofs, 1) || ofs >= row_width(row)
        || !fdp__ofp_field_writable(row)) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    return fdp__actions_add_check_pkt_larger(c->b, len,
                                             fdp__ofp_field_id(row), ofs)
           ? FDP_OFPBAC_BAD_ARGUMENT : 0;
}

/* NXAST_WRITE_METADATA (OpenFlow 1.0's write_metadata). */
static int
pull_write_metadata_nx(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    const uint8_t *zeros = fdp__ofp_pull(r, 6);
    uint64_t value = get64(r), mask = get64(r);

    if (!c->instructions || c->depth || c->in_ct) {
        /* Open vSwitch: "write_metadata instruction not allowed here". */
        return FDP_OFPBIC_UNSUP_INST;
    }

    for (int i = 0; zeros && i < 6; i++) {
        if (zeros[i]) {
            return FDP_NXBAC_MUST_BE_ZERO;
        }
    }
    if (!mask) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    return fdp__actions_add_set_masked(c->b, FDP_F_METADATA, value & mask,
                                       mask, FDP__ACT_WRITE_METADATA)
           ? FDP_OFPBAC_BAD_ARGUMENT : 0;
}

/* NXAST_NAT: valid only inside ct, once ('c->nat' is where it goes, and
 * NULL once it has come). */
static int
pull_nat(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    if (!c->in_ct || !c->nat) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    fdp__ofp_pull(r, 2);
    uint16_t flags = get16(r), present = get16(r);
    struct fdp__ct_nat *nat = c->nat;

    if ((flags & NX_NAT_F_SRC && flags & NX_NAT_F_DST)
        || flags & ~0x1fu || present & ~0x3fu
        || (present & (NX_NAT_RANGE_IPV4_MIN | NX_NAT_RANGE_IPV4_MAX)
            && present & (NX_NAT_RANGE_IPV6_MIN | NX_NAT_RANGE_IPV6_MAX))) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    memset(nat, 0, sizeof *nat);
    nat->flags = (uint8_t) ((flags & NX_NAT_F_SRC ? FDP__NAT_SRC : 0)
                            | (flags & NX_NAT_F_DST ? FDP__NAT_DST : 0)
                            | (flags & NX_NAT_F_PERSISTENT
                               ? FDP__NAT_PERSISTENT : 0)
                            | (flags & NX_NAT_F_PROTO_HASH ? FDP__NAT_HASH : 0)
                            | (flags & NX_NAT_F_PROTO_RANDOM
                               ? FDP__NAT_RANDOM : 0));
    nat->exec_pos = (uint8_t) c->b->n_actions;
    fdp_u128 lo = 0, hi = 0;
    if (present & NX_NAT_RANGE_IPV4_MIN) {
        lo = get32(r);
        hi = lo;
    }
    if (present & NX_NAT_RANGE_IPV4_MAX) {
        hi = get32(r);
    }
    if (present & NX_NAT_RANGE_IPV6_MIN) {
        lo = (fdp_u128) get64(r) << 64;
        lo |= get64(r);
        hi = lo;
        nat->flags |= FDP__NAT_IPV6;
    }
    if (present & NX_NAT_RANGE_IPV6_MAX) {
        hi = (fdp_u128) get64(r) << 64;
        hi |= get64(r);
        nat->flags |= FDP__NAT_IPV6;
    }
    if (present & (NX_NAT_RANGE_IPV4_MIN | NX_NAT_RANGE_IPV6_MIN)) {
        nat->flags |= FDP__NAT_ADDR;
    } else if (present & (NX_NAT_RANGE_IPV4_MAX | NX_NAT_RANGE_IPV6_MAX)) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    nat->addr_min = fdp__to_value(lo);
    nat->addr_max = fdp__to_value(hi);
    if (present & NX_NAT_RANGE_PROTO_MIN) {
        nat->port_min = get16(r);
        nat->port_max = nat->port_min;
        nat->flags |= FDP__NAT_PORT;
    }
    if (present & NX_NAT_RANGE_PROTO_MAX) {
        if (!(present & NX_NAT_RANGE_PROTO_MIN)) {
            return FDP_OFPBAC_BAD_ARGUMENT;
        }
        nat->port_max = get16(r);
    }
    if ((nat->flags & (FDP__NAT_ADDR | FDP__NAT_PORT))
        && !(nat->flags & (FDP__NAT_SRC | FDP__NAT_DST))) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    if (nat->port_max < nat->port_min || hi < lo) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    /* ct takes one nat: a second is OFPBAC_BAD_ARGUMENT (above). */
    c->nat = NULL;
    return check_zeros(r, FDP_OFPBAC_BAD_LEN);
}

/* NXAST_CT: the fixed part, then nested actions, of which flowdp (as
 * Open vSwitch) takes only nat and writes to ct_mark and ct_label. */
static int
pull_ct(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint16_t flags = get16(r);
    uint32_t zone_src = get32(r);
    uint16_t zone = get16(r);
    uint8_t table = get8(r);
    const uint8_t *pad = fdp__ofp_pull(r, 3);
    uint16_t alg = get16(r);

    if (!pad) {
        return FDP_OFPBAC_BAD_LEN;
    }
    if (pad[0] || pad[1] || pad[2]) {
        return FDP_NXBAC_MUST_BE_ZERO;
    }
    if (flags & ~(NX_CT_F_COMMIT | NX_CT_F_FORCE)) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    /* Open vSwitch: force implies commit; flowdp's ALGs are none. */
    if ((flags & NX_CT_F_FORCE && !(flags & NX_CT_F_COMMIT)) || alg) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    if (c->in_ct || c->depth >= MAX_NESTING) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }

    enum fdp_field zone_field = FDP_N_FIELDS;
    unsigned int zone_arg = zone;
    if (zone_src) {
        const struct fdp__ofp_field *row
            = key_row(fdp__ofp_field_by_header(zone_src, 0));
        unsigned int ofs = zone >> 6, n_bits = (zone & 0x3f) + 1;
        if (n_bits != 16) {
            /* Open vSwitch: the zone is 16 bits. */
            return FDP_OFPBAC_BAD_SET_LEN;
        }
        if (!row || !subfield_ok(row, ofs, n_bits)
            || ofs + n_bits > row_width(row)) {
            return FDP_OFPBAC_BAD_ARGUMENT;
        }
        zone_field = fdp__ofp_field_id(row);
        zone_arg = ofs;
    }

    struct fdp__ct_nat nat;
    struct fdp__actions_builder nb;
    struct pull_ctx nc = *c;
    memset(&nat, 0, sizeof nat);
    fdp__actions_builder_init(&nb);
    nc.b = &nb;
    nc.in_ct = true;
    nc.nat = &nat;
    nc.depth++;
    int error = pull_list(&nc, r);
    bool has_nat = !nc.nat;
    if (!error && nb.error) {
        error = FDP_OFPERR_NOMEM;
    }
    for (const uint64_t *w = nb.words;
         !error && nb.n_words && w < nb.words + nb.n_words;
         w += ((const struct fdp__action *) w)->n_words) {
        const struct fdp__action *e = (const struct fdp__action *) w;
        if ((e->type != FDP_ACT_SET_MASKED && e->type != FDP_ACT_MOVE)
            || (e->field != FDP_F_CT_MARK && e->field != FDP_F_CT_LABEL)) {
            /* Open vSwitch's ct takes only nat and writes to ct_mark and
             * ct_label (ofpacts_verify_nested()). */
            error = FDP_OFPBAC_BAD_ARGUMENT;
        }
    }
    if (!error) {
        unsigned int dp = (flags & NX_CT_F_COMMIT ? FDP__DPCT_COMMIT : 0)
                          | (flags & NX_CT_F_FORCE ? FDP__DPCT_FORCE : 0)
                          | (has_nat ? FDP__DPCT_NAT : 0)
                          | (table != NX_CT_RECIRC_NONE
                             ? FDP__DPCT_RECIRC : 0);
        if (fdp__actions_add_ct(c->b, dp,
                                table != NX_CT_RECIRC_NONE ? table : 0,
                                zone_field, zone_arg, &nat, nb.words,
                                nb.n_words)) {
            error = FDP_OFPBAC_BAD_ARGUMENT;
        }
    }
    fdp__actions_builder_destroy(&nb);
    return error;
}

static int pull_learn(struct pull_ctx *c, struct fdp__ofp_reader *r);
static int pull_learn2(struct pull_ctx *c, struct fdp__ofp_reader *r);

/* ---- The wire table ---- */

typedef int pull_fn(struct pull_ctx *, struct fdp__ofp_reader *);

/* One wire form: versions 'min_v'..'max_v', vendor 0 for OpenFlow's own
 * actions (then 'type' is the action type) or NX_VENDOR_ID/ONF_VENDOR_ID
 * ('type' the subtype), the length ('var_len': the minimum), and the
 * function that reads the body (after the type, length, vendor and
 * subtype). */
struct wire_action {
    uint8_t min_v, max_v;
    uint32_t vendor;
    uint16_t type;
    uint16_t len;
    bool var_len;
    pull_fn *pull;
};

#define V10 FDP_OFP10, FDP_OFP10
#define V11UP FDP_OFP11, FDP_OFP15
#define V12UP FDP_OFP12, FDP_OFP15
#define V15UP FDP_OFP15, FDP_OFP15
#define VALL FDP_OFP10, FDP_OFP15
#define NX NX_VENDOR_ID
static const struct wire_action wire_actions[] = {
    { V10, 0, OFPAT10_OUTPUT, 8, false, pull_output10 },
    { V10, 0, OFPAT10_SET_VLAN_VID, 8, false, pull_set_vlan_vid },
    { V10, 0, OFPAT10_SET_VLAN_PCP, 8, false, pull_set_vlan_pcp },
    { V10, 0, OFPAT10_STRIP_VLAN, 8, false, pull_strip_vlan },
    { V10, 0, OFPAT10_SET_DL_SRC, 16, false, pull_OFPAT10_SET_DL_SRC },
    { V10, 0, OFPAT10_SET_DL_DST, 16, false, pull_OFPAT10_SET_DL_DST },
    { V10, 0, OFPAT10_SET_NW_SRC, 8, false, pull_OFPAT10_SET_NW_SRC },
    { V10, 0, OFPAT10_SET_NW_DST, 8, false, pull_OFPAT10_SET_NW_DST },
    { V10, 0, OFPAT10_SET_NW_TOS, 8, false, pull_OFPAT10_SET_NW_TOS },
    { V10, 0, OFPAT10_SET_TP_SRC, 8, false, pull_OFPAT10_SET_TP_SRC },
    { V10, 0, OFPAT10_SET_TP_DST, 8, false, pull_OFPAT10_SET_TP_DST },
    { V10, 0, OFPAT10_ENQUEUE, 16, false, pull_enqueue },
    { V11UP, 0, OFPAT11_OUTPUT, 16, false, pull_output11 },
    { V11UP, 0, OFPAT11_PUSH_VLAN, 8, false, pull_push_vlan },
    { V11UP, 0, OFPAT11_POP_VLAN, 8, false, pull_strip_vlan },
    { V11UP, 0, OFPAT11_SET_QUEUE, 8, false, pull_set_queue11 },
    { V11UP, 0, OFPAT11_GROUP, 8, false, pull_group11 },
    { V11UP, 0, OFPAT11_SET_NW_TTL, 8, false, pull_set_nw_ttl },
    { V11UP, 0, OFPAT11_DEC_NW_TTL, 8, false, pull_dec_ttl },
    { V12UP, 0, OFPAT12_SET_FIELD, 8, true, pull_set_field },
    { V15UP, 0, OFPAT15_COPY_FIELD, 16, true, pull_copy_field },
    { V15UP, 0, OFPAT15_METER, 8, false, pull_meter15 },
    { VALL, NX, NXAST_RESUBMIT, 16, false, pull_resubmit },
    { VALL, NX, NXAST_SET_QUEUE, 16, false, pull_set_queue_nx },
    { VALL, NX, NXAST_POP_QUEUE, 16, false, pull_pop_queue },
    { VALL, NX, NXAST_REG_MOVE, 24, false, pull_reg_move },
    { VALL, NX, NXAST_REG_LOAD, 24, false, pull_reg_load },
    { VALL, NX, NXAST_REG_LOAD2, 16, true, pull_reg_load2 },
    { VALL, NX, NXAST_NOTE, 16, true, pull_note },
    { VALL, NX, NXAST_RESUBMIT_TABLE, 16, false, pull_resubmit_table },
    { VALL, NX, NXAST_OUTPUT_REG, 24, false, pull_output_reg },
    { VALL, NX, NXAST_OUTPUT_REG2, 24, true, pull_output_reg2 },
    { VALL, NX, NXAST_LEARN, 32, true, pull_learn },
    { VALL, NX, NXAST_DEC_TTL, 16, false, pull_dec_ttl },
    { VALL, NX, NXAST_FIN_TIMEOUT, 16, false, pull_fin_timeout },
    { VALL, NX, NXAST_CONTROLLER, 16, false, pull_controller },
    { VALL, NX, NXAST_DEC_TTL_CNT_IDS, 16, true, pull_dec_ttl_ids },
    { V10, NX, NXAST_WRITE_METADATA, 32, false, pull_write_metadata_nx },
    { VALL, NX, NXAST_STACK_PUSH, 24, false, pull_stack_push },
    { VALL, NX, NXAST_STACK_POP, 24, false, pull_stack_pop },
    { VALL, NX, NXAST_CONJUNCTION, 16, false, pull_conjunction },
    { VALL, NX, NXAST_CT, 24, true, pull_ct },
    { VALL, NX, NXAST_NAT, 16, true, pull_nat },
    { VALL, NX, NXAST_CONTROLLER2, 16, true, pull_controller2 },
    { FDP_OFP10, FDP_OFP14, NX, NXAST_GROUP, 16, false, pull_group_nx },
    { VALL, NX, NXAST_CLONE, 16, true, pull_clone },
    { VALL, NX, NXAST_CT_CLEAR, 16, false, pull_ct_clear },
    { VALL, NX, NXAST_LEARN2, 40, true, pull_learn2 },
    { VALL, NX, NXAST_CHECK_PKT_LARGER, 24, false, pull_check_pkt_larger },
    { FDP_OFP13, FDP_OFP13, ONF_VENDOR_ID, ONFACT_COPY_FIELD, 24, true,
      pull_onf_copy_field },
};
#undef V10
#undef V11UP
#undef V12UP
#undef V15UP
#undef VALL
#undef NX

/* Decodes one action, 'r' being exactly its bytes. */
static int
pull_action(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    uint16_t type = get16(r);
    uint32_t vendor = 0;
    size_t header = 4;

    get16(r);                   /* The length, which pull_list() checked. */
    if (type == OFPAT_VENDOR) {
        if (r->left < 6) {
            return FDP_OFPBAC_BAD_LEN;
        }
        vendor = get32(r);
        if (vendor != NX_VENDOR_ID && vendor != ONF_VENDOR_ID) {
            return FDP_OFPBAC_BAD_VENDOR;
        }
        type = get16(r);
        header = 10;
    }

    size_t total = r->left + header;
    for (size_t i = 0; i < FDP_ARRAY_SIZE(wire_actions); i++) {
        const struct wire_action *w = &wire_actions[i];
        if (w->vendor != vendor || w->type != type
            || c->v < w->min_v || c->v > w->max_v) {
            continue;
        }
        if (w->var_len ? total < w->len : total != w->len) {
            return FDP_OFPBAC_BAD_LEN;
        }
        return w->pull(c, r);
    }
    return vendor ? FDP_OFPBAC_BAD_VENDOR_TYPE : FDP_OFPBAC_BAD_TYPE;
}

/* Decodes the actions of 'r' to its end. */
static int
pull_list(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    while (r->left) {
        if (r->left < 8) {
            return FDP_OFPBAC_BAD_LEN;
        }
        size_t len = fdp__ofp_get_be16(r->p + 2);
        struct fdp__ofp_reader ar;
        if (len < 8 || len % 8 || !fdp__ofp_pull_reader(r, len, &ar)) {
            return FDP_OFPBAC_BAD_LEN;
        }
        int error = pull_action(c, &ar);
        if (error) {
            return error;
        }
        if (c->b->error) {
            return FDP_OFPERR_NOMEM;
        }
    }
    return 0;
}

/* The instruction an action of a flow's list belongs to, as Open
 * vSwitch's ovs_instruction_type_from_ofpact_type(): meter (before 1.5),
 * apply_actions, write_metadata, goto_table, in this order. */
static int
verify_rank(const struct fdp__action *a, enum fdp_ofp_version v)
{
    if (a->type == FDP_ACT_METER && v < FDP_OFP15) {
        return 0;
    }
    if (a->type == FDP_ACT_SET_MASKED
        && (a->flags & FDP__ACT_WRITE_METADATA)) {
        return 2;
    }
    return a->type == FDP_ACT_GOTO_TABLE ? 3 : 1;
}

/* Open vSwitch's ofpacts_verify() on a decoded flow list: conjunction
 * goes only with conjunction and note (NXBAC_BAD_CONJUNCTION there,
 * which flowdp's error table lacks: OFPBAC_BAD_ARGUMENT), and the
 * actions keep their instructions' order, each instruction but
 * apply_actions once (OFPBAC_UNSUPPORTED_ORDER). */
static int
verify_list(const struct fdp__actions_builder *b, enum fdp_ofp_version v)
{
    bool conj = false, other = false;
    int rank = -1;

    if (!b->n_words) {
        return 0;               /* (And 'words' may be null.) */
    }
    const uint64_t *end = b->words + b->n_words;
    for (const uint64_t *w = b->words; w < end;
         w += ((const struct fdp__action *) w)->n_words) {
        const struct fdp__action *a = (const struct fdp__action *) w;
        if (a->type == FDP_ACT_CONJUNCTION) {
            conj = true;
        } else if (a->type != FDP_ACT_NOTE) {
            other = true;
        }
        int next = verify_rank(a, v);
        if (rank >= 0 && (rank == 1 ? next < rank : next <= rank)) {
            return FDP_OFPBAC_UNSUPPORTED_ORDER;
        }
        rank = next;
    }
    return conj && other ? FDP_OFPBAC_BAD_ARGUMENT : 0;
}

static void
pull_ctx_init(struct pull_ctx *c, enum fdp_ofp_version v,
              const struct fdp_tlv_map *tlv, struct fdp__actions_builder *b)
{
    *c = (struct pull_ctx) { .v = v, .tlv = tlv, .b = b };
}

/* Hands back the built list, or the error (freeing the builder). */
static int
pull_finish(struct fdp__actions_builder *b, int error,
            struct fdp_actions **actsp)
{
    *actsp = NULL;
    if (!error && b->error) {
        error = FDP_OFPERR_NOMEM;
    }
    if (error) {
        fdp__actions_builder_destroy(b);
        return error;
    }
    *actsp = fdp__actions_finish(b);
    return *actsp ? 0 : FDP_OFPERR_NOMEM;
}

static int
actions_pull(struct fdp__ofp_reader *r, size_t len, enum fdp_ofp_version v,
             const struct fdp_tlv_map *tlv, bool instructions,
             struct fdp_actions **actsp)
{
    struct fdp__actions_builder b;
    struct fdp__ofp_reader ar;
    struct pull_ctx c;
    int error;

    *actsp = NULL;
    if (len % 8) {
        return FDP_OFPBRC_BAD_LEN;
    }
    /* (A reader over no bytes may have a null pointer, which
     * fdp__ofp_pull() would take for "too short".) */
    if (!len) {
        fdp__ofp_reader_init(&ar, NULL, 0);
    } else if (!fdp__ofp_pull_reader(r, len, &ar)) {
        return FDP_OFPBRC_BAD_LEN;
    }
    fdp__actions_builder_init(&b);
    pull_ctx_init(&c, v, tlv, &b);
    c.instructions = instructions;
    error = pull_list(&c, &ar);
    if (!error && !b.error) {
        error = verify_list(&b, v);
    }
    return pull_finish(&b, error, actsp);
}

int
fdp__ofp_actions_pull(struct fdp__ofp_reader *r, size_t len,
                      enum fdp_ofp_version v,
                      const struct fdp_tlv_map *tlv,
                      struct fdp_actions **actsp)
{
    return actions_pull(r, len, v, tlv, false, actsp);
}

/* The instructions, in the order Open vSwitch keeps them (its
 * ovs_instruction_type): an instruction's rank. */
static int
instruction_rank(uint16_t type)
{
    switch (type) {
    case OFPIT13_METER: return 0;
    case OFPIT_APPLY_ACTIONS: return 1;
    case OFPIT_CLEAR_ACTIONS: return 2;
    case OFPIT_WRITE_ACTIONS: return 3;
    case OFPIT_WRITE_METADATA: return 4;
    case OFPIT_GOTO_TABLE: return 5;
    default: return -1;
    }
}

int
fdp__ofp_instructions_pull(struct fdp__ofp_reader *r, size_t len,
                           enum fdp_ofp_version v,
                           const struct fdp_tlv_map *tlv,
                           struct fdp_actions **actsp)
{
    struct fdp__ofp_reader ir, insts[6];
    bool seen[6] = { false };
    struct fdp__actions_builder b;
    struct pull_ctx c;
    int error = 0;

    *actsp = NULL;
    if (v == FDP_OFP10) {
        return actions_pull(r, len, v, tlv, true, actsp);
    }
    if (len % 8) {
        return FDP_OFPBRC_BAD_LEN;
    }
    if (!len) {
        fdp__ofp_reader_init(&ir, NULL, 0);
    } else if (!fdp__ofp_pull_reader(r, len, &ir)) {
        return FDP_OFPBRC_BAD_LEN;
    }

    /* First cut the instructions apart, checking each one's length and
     * that none repeats (decode_openflow11_instructions()). */
    while (ir.left) {
        if (ir.left < 8) {
            return FDP_OFPBIC_BAD_LEN;
        }
        uint16_t type = fdp__ofp_get_be16(ir.p);
        size_t ilen = fdp__ofp_get_be16(ir.p + 2);
        struct fdp__ofp_reader one;
        if (ilen < 8 || ilen % 8 || !fdp__ofp_pull_reader(&ir, ilen, &one)) {
            return FDP_OFPBIC_BAD_LEN;
        }
        if (type == OFPIT_EXPERIMENTER) {
            /* Open vSwitch's OFPBIC_BAD_EXPERIMENTER, which flowdp's
             * error table lacks. */
            return FDP_OFPBIC_UNKNOWN_INST;
        }
        int rank = instruction_rank(type);
        if (rank < 0 || (type == OFPIT13_METER
                         && (v < FDP_OFP13 || v >= FDP_OFP15))) {
            return FDP_OFPBIC_UNKNOWN_INST;
        }
        if (seen[rank]) {
            return FDP_OFPBIC_DUP_INST;
        }
        seen[rank] = true;
        insts[rank] = one;
    }

    fdp__actions_builder_init(&b);
    pull_ctx_init(&c, v, tlv, &b);
    if (seen[3]) {
        /* flowdp has no action set to write to. */
        error = FDP_OFPBIC_UNSUP_INST;
    }
    if (!error && seen[0]) {
        struct fdp__ofp_reader *m = &insts[0];
        fdp__ofp_pull(m, 4);
        if (m->left != 4) {
            error = FDP_OFPBIC_BAD_LEN;
        } else {
            error = add_meter(&c, get32(m));
        }
    }
    if (!error && seen[1]) {
        struct fdp__ofp_reader *a = &insts[1];
        fdp__ofp_pull(a, 4);
        const uint8_t *pad = fdp__ofp_pull(a, 4);
        error = pad && (pad[0] | pad[1] | pad[2] | pad[3])
                ? FDP_OFPBIC_BAD_LEN : pull_list(&c, a);
    }
    if (!error && seen[2] && insts[2].left != 8) {
        error = FDP_OFPBIC_BAD_LEN;
    }
    if (!error && seen[4]) {
        struct fdp__ofp_reader *m = &insts[4];
        fdp__ofp_pull(m, 8);
        if (m->left != 16) {
            error = FDP_OFPBIC_BAD_LEN;
        } else {
            uint64_t value = get64(m), mask = get64(m);
            /* Open vSwitch: metadata bits outside the mask are an error
             * (OFPBIC_UNSUP_METADATA). */
            if (value & ~mask) {
                error = FDP_OFPBIC_UNSUP_METADATA;
            } else if (mask && fdp__actions_add_set_masked(
                           &b, FDP_F_METADATA, value, mask,
                           FDP__ACT_WRITE_METADATA)) {
                error = FDP_OFPBIC_UNSUP_METADATA_MASK;
            }
        }
    }
    if (!error && seen[5]) {
        struct fdp__ofp_reader *g = &insts[5];
        fdp__ofp_pull(g, 4);
        if (g->left != 4) {
            error = FDP_OFPBIC_BAD_LEN;
        } else {
            uint8_t table = get8(g);
            if (table == 0xff) {
                error = FDP_OFPBIC_BAD_TABLE_ID;
            } else {
                fdp__actions_add(&b, FDP_ACT_GOTO_TABLE, table);
            }
        }
    }
    if (!error && !b.error) {
        error = verify_list(&b, v);
    }
    return pull_finish(&b, error, actsp);
}

/* ---- learn (NXAST_LEARN, NXAST_LEARN2) ---- */

/* Open vSwitch's NX_LEARN_* spec header bits and flags. */
#define NX_LEARN_N_BITS_MASK 0x3ff
#define NX_LEARN_SRC_IMMEDIATE 0x2000
#define NX_LEARN_DST_MASK 0x1800
#define NX_LEARN_DST_MATCH 0x0000
#define NX_LEARN_DST_LOAD 0x0800
#define NX_LEARN_DST_OUTPUT 0x1000
#define NX_LEARN_F_SEND_FLOW_REM 1
#define NX_LEARN_F_DELETE_LEARNED 2
#define NX_LEARN_F_WRITE_RESULT 4

/* The wire row of fdp__nxm_fields[] entry 'i' (learn keeps its fields by
 * NXM name, which chooses the header: NXM_OF_UDP_SRC, not TCP's). */
static const struct fdp__ofp_field *
learn_row(unsigned int i)
{
    return i < fdp__n_nxm_fields
           ? fdp__ofp_field_by_name(fdp__nxm_fields[i].name) : NULL;
}

static void
put_learn_sub(struct put_ctx *c, unsigned int nxm, unsigned int ofs)
{
    const struct fdp__ofp_field *row = learn_row(nxm);

    if (!row) {
        c->error = EINVAL;
        return;
    }
    fdp__ofpbuf_put_be32(c->b, fdp__ofp_field_header(row));
    if (fdp__ofp_field_header(row) >> 16 == 0xffff) {
        fdp__ofpbuf_put_be32(c->b, fdp__ofp_field_experimenter(row));
    }
    fdp__ofpbuf_put_be16(c->b, (uint16_t) ofs);
}

/* learn: NXAST_LEARN, or NXAST_LEARN2 when a limit or result_dst needs
 * it (Open vSwitch's encode_LEARN()). */
static void
put_learn(struct put_ctx *c, const struct fdp__action *a)
{
    const struct fdp__learn *l = fdp__learn_of(a);
    bool learn2 = l->limit || (l->flags & FDP__LEARN_WRITE_RESULT);

    if (a->flags & FDP__ACT_LEARN_RESOLVED) {
        c->error = EINVAL;      /* A composed record is never sent. */
        return;
    }
    size_t start = start_nx(c, learn2 ? NXAST_LEARN2 : NXAST_LEARN);
    fdp__ofpbuf_put_be16(c->b, l->idle_timeout);
    fdp__ofpbuf_put_be16(c->b, l->hard_timeout);
    fdp__ofpbuf_put_be16(c->b, l->priority);
    fdp__ofpbuf_put_be64(c->b, l->cookie);
    fdp__ofpbuf_put_be16(c->b, (uint16_t) (
                             (l->flags & FDP__LEARN_SEND_FLOW_REM
                              ? NX_LEARN_F_SEND_FLOW_REM : 0)
                             | (l->flags & FDP__LEARN_DELETE_LEARNED
                                ? NX_LEARN_F_DELETE_LEARNED : 0)
                             | (l->flags & FDP__LEARN_WRITE_RESULT
                                ? NX_LEARN_F_WRITE_RESULT : 0)));
    fdp__ofpbuf_put_u8(c->b, l->table_id);
    fdp__ofpbuf_put_u8(c->b, 0);
    fdp__ofpbuf_put_be16(c->b, l->fin_idle_timeout);
    fdp__ofpbuf_put_be16(c->b, l->fin_hard_timeout);
    if (learn2) {
        fdp__ofpbuf_put_be32(c->b, l->limit);
        fdp__ofpbuf_put_be16(c->b, l->result_ofs);
        fdp__ofpbuf_put_zeros(c->b, 2);
        if (l->flags & FDP__LEARN_WRITE_RESULT) {
            const struct fdp__ofp_field *row = learn_row(l->result_nxm);
            if (!row) {
                c->error = EINVAL;
                return;
            }
            fdp__ofpbuf_put_be32(c->b, fdp__ofp_field_header(row));
            if (fdp__ofp_field_header(row) >> 16 == 0xffff) {
                fdp__ofpbuf_put_be32(c->b, fdp__ofp_field_experimenter(row));
            }
        }
    }

    const uint64_t *w = (const uint64_t *) a + 1 + FDP__LEARN_WORDS;
    for (unsigned int i = 0; i < l->n_specs && !c->error; i++) {
        const struct fdp__learn_spec *s = (const void *) w;
        bool imm = fdp__learn_spec_is_imm(s);
        uint16_t h = s->n_bits;
        switch ((enum fdp__learn_spec_kind) s->kind) {
        case FDP__LS_MATCH_FIELD: h |= NX_LEARN_DST_MATCH; break;
        case FDP__LS_MATCH_IMM: h |= NX_LEARN_SRC_IMMEDIATE; break;
        case FDP__LS_LOAD_FIELD: h |= NX_LEARN_DST_LOAD; break;
        case FDP__LS_LOAD_IMM:
            h |= NX_LEARN_SRC_IMMEDIATE | NX_LEARN_DST_LOAD;
            break;
        case FDP__LS_OUTPUT: h |= NX_LEARN_DST_OUTPUT; break;
        case FDP__LS_OUTPUT_IMM:
        default:
            c->error = EINVAL;
            return;
        }
        fdp__ofpbuf_put_be16(c->b, h);
        if (imm) {
            fdp_u128 v = (fdp_u128) w[1] << 64 | w[2];
            unsigned int n = (s->n_bits + 15) / 16 * 2;
            for (unsigned int k = 0; k < n; k++) {
                fdp__ofpbuf_put_u8(c->b, (uint8_t) (v >> (8 * (n - 1 - k))));
            }
        } else {
            put_learn_sub(c, s->src_nxm, s->src_ofs);
        }
        if (s->kind != FDP__LS_OUTPUT) {
            put_learn_sub(c, s->dst_nxm, s->dst_ofs);
        }
        w += 1 + (imm ? 2 : 0);
    }
    end_action(c, start);
}

/* A learn operand: the fdp__nxm_fields[] index of the field a wire
 * header names, with its bits checked; -1 if flowdp has no such name. */
static int
pull_learn_sub(struct fdp__ofp_reader *r, unsigned int n_bits,
               unsigned int *ofsp)
{
    uint32_t h;
    const struct fdp__ofp_field *row = pull_field_header(r, &h);
    const uint8_t *p = fdp__ofp_pull(r, 2);

    if (!row || !p) {
        return -1;
    }
    const struct fdp__nxm_field *nf
        = fdp__nxm_field_find(fdp__ofp_field_name(row));
    *ofsp = fdp__ofp_get_be16(p);
    if (!nf || *ofsp + n_bits > nf->n_bits) {
        return -1;
    }
    return (int) (nf - fdp__nxm_fields);
}

static int
pull_learn__(struct pull_ctx *c, struct fdp__ofp_reader *r, bool learn2)
{
    uint64_t words[255];
    struct fdp__action *hdr = (struct fdp__action *) (void *) words;
    struct fdp__learn *l = (struct fdp__learn *) (void *) &words[1];
    size_t n_words = 1 + FDP__LEARN_WORDS;

    memset(words, 0, sizeof words);
    l->idle_timeout = get16(r);
    l->hard_timeout = get16(r);
    l->priority = get16(r);
    l->cookie = get64(r);
    uint16_t flags = get16(r);
    l->table_id = get8(r);
    uint8_t pad = get8(r);
    l->fin_idle_timeout = get16(r);
    l->fin_hard_timeout = get16(r);
    if (pad) {
        return FDP_NXBAC_MUST_BE_ZERO;
    }
    if (flags & ~(NX_LEARN_F_SEND_FLOW_REM | NX_LEARN_F_DELETE_LEARNED
                  | (learn2 ? NX_LEARN_F_WRITE_RESULT : 0))
        || l->table_id == 0xff) {
        return FDP_OFPBAC_BAD_ARGUMENT;
    }
    l->flags = (uint8_t) ((flags & NX_LEARN_F_SEND_FLOW_REM
                           ? FDP__LEARN_SEND_FLOW_REM : 0)
                          | (flags & NX_LEARN_F_DELETE_LEARNED
                             ? FDP__LEARN_DELETE_LEARNED : 0)
                          | (flags & NX_LEARN_F_WRITE_RESULT
                             ? FDP__LEARN_WRITE_RESULT : 0));
    if (learn2) {
        l->limit = get32(r);
        unsigned int ofs = get16(r);
        const uint8_t *pad2 = fdp__ofp_pull(r, 2);
        if (!pad2 || pad2[0] || pad2[1]) {
            return FDP_NXBAC_MUST_BE_ZERO;
        }
        if (flags & NX_LEARN_F_WRITE_RESULT) {
            uint32_t h;
            const struct fdp__ofp_field *row = pull_field_header(r, &h);
            const struct fdp__nxm_field *nf
                = row ? fdp__nxm_field_find(fdp__ofp_field_name(row)) : NULL;
            if (!nf || ofs >= nf->n_bits || !nf->writable) {
                return FDP_OFPBAC_BAD_ARGUMENT;
            }
            l->result_nxm = (uint8_t) (nf - fdp__nxm_fields);
            l->result_ofs = (uint8_t) ofs;
        }
    }

    while (r->left >= 2) {
        uint16_t h = fdp__ofp_get_be16(r->p);
        if (!h) {
            break;
        }
        fdp__ofp_pull(r, 2);
        struct fdp__learn_spec s = { .n_bits = 0 };
        unsigned int n_bits = h & NX_LEARN_N_BITS_MASK;
        bool imm = h & NX_LEARN_SRC_IMMEDIATE;
        unsigned int dst = h & NX_LEARN_DST_MASK;
        fdp_u128 value = 0;
        if (!n_bits || n_bits > 128 || (h & ~0x3bffu)
            || dst == NX_LEARN_DST_MASK || (imm && dst == NX_LEARN_DST_OUTPUT)) {
            return FDP_OFPBAC_BAD_ARGUMENT;
        }
        s.n_bits = (uint8_t) n_bits;
        if (imm) {
            unsigned int n = (n_bits + 15) / 16 * 2;
            const uint8_t *p = fdp__ofp_pull(r, n);
            if (!p) {
                return FDP_OFPBAC_BAD_LEN;
            }
            for (unsigned int k = 0; k < n; k++) {
                if (n - k > 16 ? p[k] : 0) {
                    return FDP_OFPBAC_BAD_ARGUMENT;
                }
                if (n - k <= 16) {
                    value = value << 8 | p[k];
                }
            }
            if (n_bits < 128 && value >> n_bits) {
                return FDP_OFPBAC_BAD_ARGUMENT;
            }
        } else {
            unsigned int ofs;
            int i = pull_learn_sub(r, n_bits, &ofs);
            if (i < 0) {
                return FDP_OFPBAC_BAD_ARGUMENT;
            }
            s.src_nxm = (uint8_t) i;
            s.src_ofs = (uint8_t) ofs;
        }
        if (dst != NX_LEARN_DST_OUTPUT) {
            unsigned int ofs;
            int i = pull_learn_sub(r, n_bits, &ofs);
            if (i < 0 || (dst == NX_LEARN_DST_LOAD
                          && !fdp__nxm_fields[i].writable)) {
                return FDP_OFPBAC_BAD_ARGUMENT;
            }
            s.dst_nxm = (uint8_t) i;
            s.dst_ofs = (uint8_t) ofs;
        }
        s.kind = (uint8_t) (dst == NX_LEARN_DST_OUTPUT ? FDP__LS_OUTPUT
                            : dst == NX_LEARN_DST_LOAD
                            ? (imm ? FDP__LS_LOAD_IMM : FDP__LS_LOAD_FIELD)
                            : (imm ? FDP__LS_MATCH_IMM
                                   : FDP__LS_MATCH_FIELD));
        size_t need = 1 + (imm ? 2 : 0);
        if (n_words + need > 255 || l->n_specs == 255) {
            return FDP_OFPBAC_BAD_LEN;
        }
        memcpy(&words[n_words], &s, sizeof s);
        if (imm) {
            words[n_words + 1] = (uint64_t) (value >> 64);
            words[n_words + 2] = (uint64_t) value;
        }
        n_words += need;
        l->n_specs++;
    }
    if (check_zeros(r, 1)) {
        return FDP_NXBAC_MUST_BE_ZERO;
    }
    *hdr = (struct fdp__action) { .type = FDP_ACT_LEARN,
                                  .n_words = (uint8_t) n_words };
    fdp__actions_add_record(c->b, hdr);
    return 0;
}

static int
pull_learn(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    return pull_learn__(c, r, false);
}

static int
pull_learn2(struct pull_ctx *c, struct fdp__ofp_reader *r)
{
    return pull_learn__(c, r, true);
}
