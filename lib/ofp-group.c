/*
 * The OpenFlow messages of groups, meters, TLV tables and conntrack
 * flushes (lib/ofp-msgs.h): group mods and group desc, stats and features
 * multiparts (OpenFlow 1.1-1.5, and Nicira's forms for 1.0), meter mods
 * and meter config, stats and features (1.3+), NXT_TLV_TABLE_MOD, _REQUEST
 * and _REPLY, NXT_CT_FLUSH.
 *
 * Theory of operation.  Two bucket forms exist.  OpenFlow 1.1-1.4 write a
 * bucket as a fixed 16-byte header (length, weight, watch port, watch
 * group) followed by its actions, and carry no bucket ids: a decoder
 * numbers them 0, 1, ... in order, as Open vSwitch does.  OpenFlow 1.5
 * (and Open vSwitch's NXT_GROUP_MOD and NXST_GROUP_DESC for 1.0, which
 * borrow 1.5's layout) write an 8-byte header (length, actions length,
 * bucket id), the actions, then properties: weight (type 0), watch port
 * (1), watch group (2), each 8 bytes.  A 1.5 group also has properties
 * after its buckets; the only one Open vSwitch knows is Netronome's
 * selection method (experimenter 0x0000154d, type 1): a method name
 * ("hash" or "dp_hash"), a parameter and an array of fields.
 *
 * Worked example (ofp-print.at's "OFPT_GROUP_MOD insert bucket - OF1.5"):
 *   06 0f 00 90 11 22 33 44   version 6, OFPT_GROUP_MOD, length 144
 *   00 03 01 00 87 65 43 21   command 3 (INSERT_BUCKET), type 1 (select),
 *                             group 0x87654321
 *   00 78 00 00 ff ff ff fd   bucket array 120 bytes, command_bucket_id
 *                             FIRST
 *   00 28 00 10 00 00 00 00   bucket: 40 bytes, 16 of actions, id 0
 *   00 00 00 10 00 00 00 01   output:1 (max_len 0)
 *   00 00 00 00 00 00 00 00
 *   00 00 00 08 00 64 00 00   weight 100
 *   00 01 00 08 00 00 00 01   watch_port 1
 *   ... two more buckets (ids 1 and 2)
 * decodes to command INSERT_BUCKET with three buckets; re-encoding writes
 * the same bytes, as Open vSwitch's encoder would.
 *
 * Errors are Open vSwitch 3.1's (lib/ofp-group.c, ofp-meter.c, ofp-ct.c
 * and ofp-match.c's TLV table functions there): every length is checked
 * before it is read, so a message that lies fails with an error and
 * nothing is read past its end.  The semantic checks a switch makes later
 * (a group that exists, a bucket id that does not) are flowdpd's
 * (utilities/flowdpd-ofgroup.c).
 *
 * Thread-safety: pure functions.
 */
#include <config.h>

#include "lib/ofp-msgs.h"

#include <errno.h>
#include <inttypes.h>

#include "lib/ds.h"
#include "lib/field.h"
#include "lib/flow-text.h"
#include "lib/group.h"
#include "lib/ofp-actions.h"
#include "lib/ofp-match.h"
#include "lib/util.h"
#include <flowdp/actions.h>
#include <flowdp/flow.h>
#include <flowdp/tlv-map.h>

/* Bytes of the fixed parts. */
#define OFP11_BUCKET_LEN 16
#define OFP15_BUCKET_LEN 8
#define OFP11_GROUP_DESC_LEN 8
#define OFP15_GROUP_DESC_LEN 16
#define OFP11_GROUP_STATS_LEN 32
#define OFP13_GROUP_STATS_LEN 40
#define BUCKET_COUNTER_LEN 16
#define METER_BAND_LEN 16
#define METER_CONFIG_LEN 8
#define METER_STATS_LEN 40
#define METER_BAND_STATS_LEN 16
#define TLV_MAP_LEN 8

/* OpenFlow 1.5's bucket properties. */
enum {
    OFPGBPT15_WEIGHT = 0,
    OFPGBPT15_WATCH_PORT = 1,
    OFPGBPT15_WATCH_GROUP = 2,
};

/* Netronome's selection method group property: the experimenter
 * property header (12 bytes), 4 bytes of padding, the method's name (16),
 * its parameter (8): 40 bytes, then the fields. */
#define NTR_VENDOR_ID 0x0000154du
#define NTR_COMPAT_VENDOR_ID 0x00001540u
#define NTRT_SELECTION_METHOD 1
#define NTR_SELECTION_METHOD_LEN 40

/* OpenFlow 1.1's reserved ports start here (OFPP_IN_PORT); ports from
 * OFPP_MAX (0xff00) below them are no ports. */
#define OFPP11_FIRST_RESERVED 0xfffffff8u
#define OFPP_MAX 0xff00u

/* A group TLV longer than this cannot be sent (Open vSwitch's
 * TLV_MAX_OPT_SIZE). */
#define TLV_MAX_OPT_SIZE 124

/* Steps over the next 'n' bytes of 'r', which the caller checked are
 * there (the message table checked a fixed part's length, or the caller
 * compared r->left), and returns where they start. */
static const uint8_t *
pull_known(struct fdp__ofp_reader *r, size_t n)
{
    const uint8_t *p = r->p;
    size_t k = n < r->left ? n : r->left;

    r->p += k;
    r->left -= k;
    return p;
}

/* ---------------------------------------------------------------------- */
/* Properties (Open vSwitch's lib/ofp-prop.c conventions).                 */

/* One property: 'type' (for an experimenter property, the experimenter
 * and its type), and a reader over its payload. */
struct prop {
    uint16_t type;
    uint32_t experimenter, exp_type;
    struct fdp__ofp_reader payload;
    const uint8_t *start;       /* The property's first byte. */
    size_t len;                 /* Its length field. */
};

/* Pulls the next property of 'r' (8-byte padding): 0 or OFPBPC_BAD_LEN
 * (fdp's OFPTFFC_BAD_LEN), OFPBPC_BAD_EXPERIMENTER. */
static int
prop_pull(struct fdp__ofp_reader *r, struct prop *p)
{
    if (r->left < 4) {
        return FDP_OFPTFFC_BAD_LEN;
    }
    size_t len = fdp__ofp_get_be16(r->p + 2);
    size_t padded = (len + 7) / 8 * 8;
    if (len < 4 || padded > r->left) {
        return FDP_OFPTFFC_BAD_LEN;
    }
    p->type = fdp__ofp_get_be16(r->p);
    p->start = r->p;
    p->len = len;
    p->experimenter = p->exp_type = 0;
    size_t hdr = 4;
    if (p->type == 0xffff) {
        if (len < 12) {
            return FDP_OFPTFFC_BAD_LEN;
        }
        p->experimenter = fdp__ofp_get_be32(r->p + 4);
        p->exp_type = fdp__ofp_get_be32(r->p + 8);
        if (!p->experimenter) {
            return FDP_OFPBPC_BAD_EXPERIMENTER;
        }
        hdr = 12;
    }
    fdp__ofp_reader_init(&p->payload, r->p + hdr, len - hdr);
    fdp__ofp_pull(r, padded);
    return 0;
}

/* Starts a property of 'type'; fdp__prop_end() fills in its length. */
static size_t
prop_start(struct fdp__ofpbuf *b, uint16_t type)
{
    size_t start = b->size;
    fdp__ofpbuf_put_be16(b, type);
    fdp__ofpbuf_put_be16(b, 4);
    return start;
}

static void
prop_end(struct fdp__ofpbuf *b, size_t start)
{
    if (!fdp__ofpbuf_failed(b)) {
        fdp__ofp_set_be16(b->data + start + 2,
                          (uint16_t) (b->size - start));
        fdp__ofpbuf_pad(b, start, 8);
    }
}

/* A 16-bit or 32-bit property, as Open vSwitch writes them (8 bytes: a
 * 16-bit value is followed by 2 bytes of padding). */
static void
prop_put_be16(struct fdp__ofpbuf *b, uint16_t type, uint16_t v)
{
    size_t start = prop_start(b, type);
    fdp__ofpbuf_put_be16(b, v);
    fdp__ofpbuf_put_be16(b, 0);
    prop_end(b, start);
}

static void
prop_put_be32(struct fdp__ofpbuf *b, uint16_t type, uint32_t v)
{
    size_t start = prop_start(b, type);
    fdp__ofpbuf_put_be32(b, v);
    prop_end(b, start);
}

static void
prop_put_u8(struct fdp__ofpbuf *b, uint16_t type, uint8_t v)
{
    size_t start = prop_start(b, type);
    fdp__ofpbuf_put_u8(b, v);
    prop_end(b, start);
}

/* ---------------------------------------------------------------------- */
/* Hash selection fields.                                                  */

/* The fields a selection hash takes (lib/group.c's names), and the wire
 * fields that carry them: OXM where 1.5 has one, NXM for 1.0. */
static const struct {
    const char *name;           /* As flowdp's group text says it. */
    const char *nxm, *oxm;      /* Open vSwitch's header names. */
} hash_wire[] = {
    { "in_port", "NXM_OF_IN_PORT", "OXM_OF_IN_PORT" },
    { "eth_src", "NXM_OF_ETH_SRC", "OXM_OF_ETH_SRC" },
    { "eth_dst", "NXM_OF_ETH_DST", "OXM_OF_ETH_DST" },
    { "eth_type", "NXM_OF_ETH_TYPE", "OXM_OF_ETH_TYPE" },
    { "vlan_tci", "NXM_OF_VLAN_TCI", "NXM_OF_VLAN_TCI" },
    { "ip_src", "NXM_OF_IP_SRC", "OXM_OF_IPV4_SRC" },
    { "ip_dst", "NXM_OF_IP_DST", "OXM_OF_IPV4_DST" },
    { "ipv6_src", "NXM_NX_IPV6_SRC", "OXM_OF_IPV6_SRC" },
    { "ipv6_dst", "NXM_NX_IPV6_DST", "OXM_OF_IPV6_DST" },
    { "ipv6_label", "NXM_NX_IPV6_LABEL", "OXM_OF_IPV6_FLABEL" },
    { "nw_proto", "NXM_OF_IP_PROTO", "OXM_OF_IP_PROTO" },
    { "tcp_src", "NXM_OF_TCP_SRC", "OXM_OF_TCP_SRC" },
    { "tcp_dst", "NXM_OF_TCP_DST", "OXM_OF_TCP_DST" },
    { "udp_src", "NXM_OF_UDP_SRC", "OXM_OF_UDP_SRC" },
    { "udp_dst", "NXM_OF_UDP_DST", "OXM_OF_UDP_DST" },
    { "sctp_src", "OXM_OF_SCTP_SRC", "OXM_OF_SCTP_SRC" },
    { "sctp_dst", "OXM_OF_SCTP_DST", "OXM_OF_SCTP_DST" },
    { "arp_spa", "NXM_OF_ARP_SPA", "OXM_OF_ARP_SPA" },
    { "arp_tpa", "NXM_OF_ARP_TPA", "OXM_OF_ARP_TPA" },
    { "pkt_mark", "NXM_NX_PKT_MARK", "NXM_NX_PKT_MARK" },
};

/* The hash_wire entry whose NXM or OXM form is 'row', or -1. */
static int
hash_wire_of_row(const struct fdp__ofp_field *row)
{
    const char *name = fdp__ofp_field_name(row);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(hash_wire); i++) {
        if (!strcmp(name, hash_wire[i].nxm)
            || !strcmp(name, hash_wire[i].oxm)) {
            return (int) i;
        }
    }
    return -1;
}

/* One entry of a field array: its row, its mask bytes. */
struct field_entry {
    const struct fdp__ofp_field *row;
    int hash;                   /* hash_wire index. */
    const uint8_t *mask;        /* fdp__ofp_field_n_bytes() bytes. */
};

/* Pulls the next entry of a field array (Open vSwitch's
 * oxm_pull_field_array()): OFPBMC_BAD_LEN, OFPBMC_BAD_FIELD for a field
 * flowdp does not know or a selection hash does not take. */
static int
field_pull(struct fdp__ofp_reader *r, struct field_entry *e)
{
    const uint8_t *h = fdp__ofp_pull(r, 4);
    if (!h) {
        return FDP_OFPBMC_BAD_LEN;
    }
    uint32_t header = fdp__ofp_get_be32(h);
    uint32_t experimenter = 0;
    size_t len = header & 0xff;
    if (header >> 16 == 0xffff) {
        const uint8_t *x = fdp__ofp_pull(r, 4);
        if (!x || len < 4) {
            return FDP_OFPBMC_BAD_LEN;
        }
        experimenter = fdp__ofp_get_be32(x);
        len -= 4;
    }
    const uint8_t *body = fdp__ofp_pull(r, len);
    if (!body || !len) {
        return FDP_OFPBMC_BAD_LEN;
    }
    e->row = fdp__ofp_field_by_header(header, experimenter);
    if (!e->row) {
        return FDP_OFPBMC_BAD_FIELD;
    }
    size_t n = fdp__ofp_field_n_bytes(e->row);
    bool hasmask = header & 0x100;
    if (len != (hasmask ? 2 * n : n)) {
        return FDP_OFPBMC_BAD_LEN;
    }
    e->hash = hash_wire_of_row(e->row);
    if (e->hash < 0) {
        return FDP_OFPBMC_BAD_FIELD;
    }
    /* A masked entry's value is the field array's (its mask bytes only
     * narrow it): Open vSwitch keeps value & mask. */
    e->mask = body;
    return 0;
}

/* Checks a field array: every entry one flowdp's hash takes, none twice,
 * a mask a field can hold. */
static int
fields_check(const uint8_t *p, size_t len)
{
    struct fdp__ofp_reader r;
    uint32_t seen = 0;

    fdp__ofp_reader_init(&r, p, len);
    while (r.left) {
        struct field_entry e;
        int error = field_pull(&r, &e);
        if (error) {
            return error;
        }
        if (seen & (1u << e.hash)) {
            return FDP_OFPBMC_DUP_FIELD;
        }
        seen |= 1u << e.hash;
        fdp_u128 mask;
        if (fdp__ofp_mask_from_wire(e.row, e.mask, &mask)) {
            return FDP_OFPBMC_BAD_MASK;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Groups: buckets.                                                        */

void
fdp_ofp_group_destroy(struct fdp_ofp_group *g)
{
    if (!g) {
        return;
    }
    for (size_t i = 0; i < g->n_buckets; i++) {
        fdp_actions_destroy(g->buckets[i].actions);
    }
    free(g->buckets);
    free(g->fields);
    g->buckets = NULL;
    g->n_buckets = 0;
    g->fields = NULL;
    g->fields_len = 0;
}

static void
group_init(struct fdp_ofp_group *g)
{
    memset(g, 0, sizeof *g);
    g->command_bucket_id = FDP_OFPG_BUCKET_ALL;
}

/* Appends an empty bucket to 'g'; NULL if out of memory. */
static struct fdp_ofp_bucket *
group_add_bucket(struct fdp_ofp_group *g)
{
    /* Grows one at a time through powers of two. */
    if (!(g->n_buckets & (g->n_buckets - 1))) {
        size_t n = g->n_buckets ? 2 * g->n_buckets : 1;
        struct fdp_ofp_bucket *b = realloc(g->buckets, n * sizeof *b);
        if (!b) {
            return NULL;
        }
        g->buckets = b;
    }
    struct fdp_ofp_bucket *b = &g->buckets[g->n_buckets++];
    memset(b, 0, sizeof *b);
    b->watch_port = FDP_OFPP_ANY;
    b->watch_group = FDP_OFPG_ANY;
    return b;
}

int
fdp_ofp_group_take_buckets(struct fdp_ofp_group *to,
                           struct fdp_ofp_group *from, size_t at)
{
    size_t n = to->n_buckets + from->n_buckets;
    struct fdp_ofp_bucket *b = malloc((n ? n : 1) * sizeof *b);

    if (!b) {
        return ENOMEM;
    }
    if (at > to->n_buckets) {
        at = to->n_buckets;
    }
    memcpy(b, to->buckets, at * sizeof *b);
    memcpy(b + at, from->buckets, from->n_buckets * sizeof *b);
    memcpy(b + at + from->n_buckets, to->buckets + at,
           (to->n_buckets - at) * sizeof *b);
    free(to->buckets);
    free(from->buckets);
    to->buckets = b;
    to->n_buckets = n;
    from->buckets = NULL;
    from->n_buckets = 0;
    return 0;
}

/* A watch port in 1.1's numbering is a port below OFPP_MAX or a reserved
 * one (Open vSwitch's ofputil_port_from_ofp11()). */
static bool
watch_port_ok(uint32_t port)
{
    return port < OFPP_MAX || port >= OFPP11_FIRST_RESERVED;
}

static bool
bucket_has_liveness(const struct fdp_ofp_bucket *b)
{
    return b->watch_port != FDP_OFPP_ANY || b->watch_group != FDP_OFPG_ANY;
}

/* OpenFlow 1.1-1.4 buckets: 'len' bytes of 'r'. */
static int
pull_ofp11_buckets(struct fdp__ofp_reader *r, size_t len, uint8_t version,
                   const struct fdp_tlv_map *tlv, struct fdp_ofp_group *g)
{
    struct fdp__ofp_reader br;
    uint32_t bucket_id = 0;

    if (!fdp__ofp_pull_reader(r, len, &br)) {
        return FDP_OFPBRC_BAD_LEN;
    }
    while (br.left) {
        if (br.left < OFP11_BUCKET_LEN) {
            return FDP_OFPGMFC_BAD_BUCKET;
        }
        size_t ob_len = fdp__ofp_get_be16(br.p);
        if (ob_len < OFP11_BUCKET_LEN || ob_len > br.left) {
            return FDP_OFPGMFC_BAD_BUCKET;
        }
        const uint8_t *ob = pull_known(&br, OFP11_BUCKET_LEN);
        struct fdp_actions *acts;
        int error = fdp__ofp_actions_pull(&br, ob_len - OFP11_BUCKET_LEN,
                                          version, tlv, &acts);
        if (error) {
            return error;
        }
        struct fdp_ofp_bucket *b = group_add_bucket(g);
        if (!b) {
            fdp_actions_destroy(acts);
            return FDP_OFPERR_NOMEM;
        }
        b->actions = acts;
        b->weight = fdp__ofp_get_be16(ob + 2);
        b->watch_port = fdp__ofp_get_be32(ob + 4);
        b->watch_group = fdp__ofp_get_be32(ob + 8);
        b->bucket_id = bucket_id++;
        if (!watch_port_ok(b->watch_port)) {
            return FDP_OFPGMFC_BAD_WATCH;
        }
    }
    return 0;
}

/* OpenFlow 1.5 (and NX) buckets: 'len' bytes of 'r'. */
static int
pull_ofp15_buckets(struct fdp__ofp_reader *r, size_t len, uint8_t version,
                   const struct fdp_tlv_map *tlv, struct fdp_ofp_group *g)
{
    struct fdp__ofp_reader br;

    if (!fdp__ofp_pull_reader(r, len, &br)) {
        return FDP_OFPBRC_BAD_LEN;
    }
    while (br.left) {
        if (br.left < OFP15_BUCKET_LEN) {
            return FDP_OFPGMFC_BAD_BUCKET;
        }
        size_t ob_len = fdp__ofp_get_be16(br.p);
        size_t acts_len = fdp__ofp_get_be16(br.p + 2);
        if (ob_len < OFP15_BUCKET_LEN || ob_len > br.left
            || acts_len > ob_len - OFP15_BUCKET_LEN) {
            return FDP_OFPGMFC_BAD_BUCKET;
        }
        const uint8_t *ob = pull_known(&br, OFP15_BUCKET_LEN);
        struct fdp_actions *acts;
        int error = fdp__ofp_actions_pull(&br, acts_len, version, tlv, &acts);
        if (error) {
            return error;
        }
        struct fdp_ofp_bucket *b = group_add_bucket(g);
        if (!b) {
            fdp_actions_destroy(acts);
            return FDP_OFPERR_NOMEM;
        }
        b->actions = acts;
        b->bucket_id = fdp__ofp_get_be32(ob + 4);
        b->weight = g->type == FDP_OFPGT_SELECT ? 1 : 0;

        struct fdp__ofp_reader props;
        if (!fdp__ofp_pull_reader(&br, ob_len - OFP15_BUCKET_LEN - acts_len,
                                  &props)) {
            return FDP_OFPGMFC_BAD_BUCKET;
        }
        while (props.left) {
            struct prop p;
            error = prop_pull(&props, &p);
            if (error) {
                return error;
            }
            switch (p.type) {
            case OFPGBPT15_WEIGHT:
                if (p.payload.left < 2) {
                    return FDP_OFPTFFC_BAD_LEN;
                }
                b->weight = fdp__ofp_get_be16(p.payload.p);
                break;
            case OFPGBPT15_WATCH_PORT:
            case OFPGBPT15_WATCH_GROUP:
                if (p.payload.left != 4) {
                    return FDP_OFPTFFC_BAD_LEN;
                }
                *(p.type == OFPGBPT15_WATCH_PORT ? &b->watch_port
                  : &b->watch_group) = fdp__ofp_get_be32(p.payload.p);
                break;
            default:
                return (p.type == 0xffff ? FDP_OFPBPC_BAD_EXP_TYPE
                        : FDP_OFPTFFC_BAD_TYPE);
            }
        }
        if (!watch_port_ok(b->watch_port)) {
            return FDP_OFPGMFC_BAD_WATCH;
        }
        if (b->bucket_id > FDP_OFPG_BUCKET_MAX) {
            return FDP_OFPGMFC_BAD_BUCKET;
        }
    }
    for (size_t i = 0; i < g->n_buckets; i++) {
        for (size_t j = i + 1; j < g->n_buckets; j++) {
            if (g->buckets[i].bucket_id == g->buckets[j].bucket_id) {
                return FDP_OFPGMFC_BAD_BUCKET;
            }
        }
    }
    return 0;
}

/* OpenFlow 1.5's group properties, 'len' bytes of 'r', for a group of
 * 'g->type' and 'command'. */
static int
pull_group_props(struct fdp__ofp_reader *r, size_t len, uint16_t command,
                 struct fdp_ofp_group *g)
{
    struct fdp__ofp_reader props;

    if (!fdp__ofp_pull_reader(r, len, &props)) {
        return FDP_OFPBRC_BAD_LEN;
    }
    while (props.left) {
        struct prop p;
        int error = prop_pull(&props, &p);
        if (error) {
            return error;
        }
        if (p.type != 0xffff
            || (p.experimenter != NTR_VENDOR_ID
                && p.experimenter != NTR_COMPAT_VENDOR_ID)
            || p.exp_type != NTRT_SELECTION_METHOD) {
            return (p.type == 0xffff ? FDP_OFPBPC_BAD_EXP_TYPE
                    : FDP_OFPTFFC_BAD_TYPE);
        }
        /* Open vSwitch's parse_group_prop_ntr_selection_method(). */
        if (g->type != FDP_OFPGT_SELECT) {
            return (g->type <= FDP_OFPGT_FF ? FDP_OFPTFFC_BAD_ARGUMENT
                    : FDP_OFPGMFC_BAD_TYPE);
        }
        switch (command) {
        case FDP_OFPGC_ADD:
        case FDP_OFPGC_MODIFY:
        case FDP_OFPGC_ADD_OR_MOD:
            break;
        case FDP_OFPGC_DELETE:
        case FDP_OFPGC_INSERT_BUCKET:
        case FDP_OFPGC_REMOVE_BUCKET:
            return FDP_OFPTFFC_BAD_ARGUMENT;
        default:
            return FDP_OFPGMFC_BAD_COMMAND;
        }
        /* The payload after the 12-byte header: 4 bytes of padding, the
         * name, the parameter, the fields. */
        if (p.len < NTR_SELECTION_METHOD_LEN) {
            return FDP_OFPTFFC_BAD_LEN;
        }
        const uint8_t *body = p.start;
        const char *method = (const char *) body + 16;
        size_t mlen = strnlen(method, 16);
        if (mlen == 16 || (strcmp(method, "hash")
                           && strcmp(method, "dp_hash"))) {
            return FDP_OFPTFFC_BAD_ARGUMENT;
        }
        memset(g->selection_method, 0, sizeof g->selection_method);
        memcpy(g->selection_method, method, mlen);
        g->selection_method_param = fdp__ofp_get_be64(body + 32);
        g->ntr_experimenter = p.experimenter;
        size_t fields_len = p.len - NTR_SELECTION_METHOD_LEN;
        if (fields_len && strcmp(g->selection_method, "hash")) {
            return FDP_OFPTFFC_BAD_ARGUMENT;
        }
        error = fields_check(body + NTR_SELECTION_METHOD_LEN, fields_len);
        if (error) {
            return error;
        }
        free(g->fields);
        g->fields = NULL;
        g->fields_len = 0;
        if (fields_len) {
            g->fields = malloc(fields_len);
            if (!g->fields) {
                return FDP_OFPERR_NOMEM;
            }
            memcpy(g->fields, body + NTR_SELECTION_METHOD_LEN, fields_len);
            g->fields_len = fields_len;
        }
    }
    return 0;
}

static void
put_ofp11_bucket(struct fdp__ofpbuf *b, const struct fdp_ofp_bucket *bk,
                 uint8_t version, const struct fdp_tlv_map *tlv, int *error)
{
    size_t start = b->size;

    fdp__ofpbuf_put_zeros(b, OFP11_BUCKET_LEN);
    if (fdp__ofp_actions_put(b, bk->actions, version, tlv) < 0) {
        *error = EINVAL;
    }
    if (!fdp__ofpbuf_failed(b)) {
        uint8_t *p = b->data + start;
        fdp__ofp_set_be16(p, (uint16_t) (b->size - start));
        fdp__ofp_set_be16(p + 2, bk->weight);
        fdp__ofp_set_be32(p + 4, bk->watch_port);
        fdp__ofp_set_be32(p + 8, bk->watch_group);
    }
}

static void
put_ofp15_bucket(struct fdp__ofpbuf *b, const struct fdp_ofp_bucket *bk,
                 uint8_t type, uint8_t version,
                 const struct fdp_tlv_map *tlv, int *error)
{
    size_t start = b->size;

    fdp__ofpbuf_put_zeros(b, OFP15_BUCKET_LEN);
    int acts = fdp__ofp_actions_put(b, bk->actions, version, tlv);
    if (acts < 0) {
        *error = EINVAL;
        acts = 0;
    }
    if (type == FDP_OFPGT_SELECT || bk->weight) {
        prop_put_be16(b, OFPGBPT15_WEIGHT, bk->weight);
    }
    if (bk->watch_port != FDP_OFPP_ANY) {
        prop_put_be32(b, OFPGBPT15_WATCH_PORT, bk->watch_port);
    }
    if (bk->watch_group != FDP_OFPG_ANY) {
        prop_put_be32(b, OFPGBPT15_WATCH_GROUP, bk->watch_group);
    }
    if (!fdp__ofpbuf_failed(b)) {
        uint8_t *p = b->data + start;
        fdp__ofp_set_be16(p, (uint16_t) (b->size - start));
        fdp__ofp_set_be16(p + 2, (uint16_t) acts);
        fdp__ofp_set_be32(p + 4, bk->bucket_id);
    }
}

static void
put_selection_method(struct fdp__ofpbuf *b, const struct fdp_ofp_group *g)
{
    size_t start = b->size;

    fdp__ofpbuf_put_be16(b, 0xffff);
    fdp__ofpbuf_put_be16(b, 0);
    fdp__ofpbuf_put_be32(b, (g->ntr_experimenter ? g->ntr_experimenter
                             : NTR_VENDOR_ID));
    fdp__ofpbuf_put_be32(b, NTRT_SELECTION_METHOD);
    fdp__ofpbuf_put_zeros(b, 4);
    uint8_t *name = fdp__ofpbuf_put_zeros(b, 16);
    if (name) {
        memcpy(name, g->selection_method,
               strnlen(g->selection_method, 15));
    }
    fdp__ofpbuf_put_be64(b, g->selection_method_param);
    fdp__ofpbuf_put(b, g->fields, g->fields_len);
    prop_end(b, start);
}

static bool
uses_ofp15_form(uint8_t version)
{
    return version == FDP_OFP10 || version == FDP_OFP15;
}

/* ---------------------------------------------------------------------- */
/* Group mods.                                                             */

/* Open vSwitch's ofputil_check_group_mod(). */
static int
check_group_mod(const struct fdp_ofp_group *g)
{
    switch (g->type) {
    case FDP_OFPGT_INDIRECT:
        if (g->command != FDP_OFPGC_DELETE && g->n_buckets != 1) {
            return FDP_OFPGMFC_INVALID_GROUP;
        }
        break;
    case FDP_OFPGT_ALL:
    case FDP_OFPGT_SELECT:
    case FDP_OFPGT_FF:
        break;
    default:
        return FDP_OFPGMFC_BAD_TYPE;
    }
    switch (g->command) {
    case FDP_OFPGC_ADD:
    case FDP_OFPGC_MODIFY:
    case FDP_OFPGC_ADD_OR_MOD:
    case FDP_OFPGC_DELETE:
    case FDP_OFPGC_INSERT_BUCKET:
        break;
    case FDP_OFPGC_REMOVE_BUCKET:
        if (g->n_buckets) {
            return FDP_OFPGMFC_BAD_BUCKET;
        }
        break;
    default:
        return FDP_OFPGMFC_BAD_COMMAND;
    }
    for (size_t i = 0; i < g->n_buckets; i++) {
        const struct fdp_ofp_bucket *b = &g->buckets[i];
        if (b->weight && g->type != FDP_OFPGT_SELECT
            && g->command != FDP_OFPGC_INSERT_BUCKET) {
            return FDP_OFPGMFC_INVALID_GROUP;
        }
        if ((g->type == FDP_OFPGT_ALL || g->type == FDP_OFPGT_INDIRECT)
            && bucket_has_liveness(b)) {
            return FDP_OFPGMFC_WATCH_UNSUPPORTED;
        }
        if (g->type == FDP_OFPGT_FF && !bucket_has_liveness(b)) {
            return FDP_OFPGMFC_INVALID_GROUP;
        }
    }
    return 0;
}

static int
decode_group_mod__(const uint8_t *msg, size_t len,
                   const struct fdp_tlv_map *tlv, struct fdp_ofp_group *g)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_GROUP_MOD) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    struct fdp__ofp_reader r;
    fdp__ofp_reader_init(&r, msg + oh.hdr_len, len - oh.hdr_len);
    const uint8_t *p = pull_known(&r, 8);
    g->command = fdp__ofp_get_be16(p);
    g->type = p[2];
    g->group_id = fdp__ofp_get_be32(p + 4);

    if (!uses_ofp15_form(oh.version)) {
        error = pull_ofp11_buckets(&r, r.left, oh.version, tlv, g);
        if (!error && oh.version >= FDP_OFP13
            && g->command == FDP_OFPGC_DELETE && g->n_buckets) {
            /* OpenFlow 1.3.5 says a delete carries no buckets. */
            error = FDP_OFPGMFC_INVALID_GROUP;
        }
        return error;
    }

    p = pull_known(&r, 8);
    size_t buckets_len = fdp__ofp_get_be16(p);
    g->command_bucket_id = fdp__ofp_get_be32(p + 4);
    uint32_t cb = g->command_bucket_id;
    bool cb_ok;
    switch (g->command) {
    case FDP_OFPGC_REMOVE_BUCKET:
    case FDP_OFPGC_INSERT_BUCKET:
        cb_ok = (cb <= FDP_OFPG_BUCKET_MAX || cb == FDP_OFPG_BUCKET_FIRST
                 || cb == FDP_OFPG_BUCKET_LAST
                 || (g->command == FDP_OFPGC_REMOVE_BUCKET
                     && cb == FDP_OFPG_BUCKET_ALL));
        break;
    default:
        cb_ok = cb == FDP_OFPG_BUCKET_ALL;
        break;
    }
    if (!cb_ok) {
        return FDP_OFPGMFC_BAD_BUCKET;
    }
    if (buckets_len > r.left) {
        return FDP_OFPBRC_BAD_LEN;
    }
    error = pull_ofp15_buckets(&r, buckets_len, oh.version, tlv, g);
    if (!error) {
        error = pull_group_props(&r, r.left, g->command, g);
    }
    return error;
}

int
fdp_ofp_decode_group_mod(const uint8_t *msg, size_t len,
                         const struct fdp_tlv_map *tlv,
                         struct fdp_ofp_group *g)
{
    group_init(g);
    int error = decode_group_mod__(msg, len, tlv, g);
    if (!error) {
        error = check_group_mod(g);
    }
    if (error) {
        fdp_ofp_group_destroy(g);
    }
    return error;
}

int
fdp_ofp_encode_group_mod(struct fdp__ofpbuf *b, const struct fdp_ofp_group *g,
                         uint8_t version, uint32_t xid,
                         const struct fdp_tlv_map *tlv)
{
    enum fdp_ofpraw raw = fdp_ofpraw_for(FDP_OFPTYPE_GROUP_MOD, version);
    bool of15 = uses_ofp15_form(version);
    int error = 0;

    if (raw == FDP_OFPRAW_NONE
        || (!of15 && (g->command == FDP_OFPGC_INSERT_BUCKET
                      || g->command == FDP_OFPGC_REMOVE_BUCKET))) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    size_t body = b->size;
    fdp__ofpbuf_put_be16(b, g->command);
    fdp__ofpbuf_put_u8(b, g->type);
    fdp__ofpbuf_put_u8(b, 0);
    fdp__ofpbuf_put_be32(b, g->group_id);
    if (of15) {
        fdp__ofpbuf_put_be16(b, 0);     /* bucket_array_len, below. */
        fdp__ofpbuf_put_be16(b, 0);
        fdp__ofpbuf_put_be32(b, g->command_bucket_id);
    }
    size_t buckets = b->size;
    for (size_t i = 0; i < g->n_buckets; i++) {
        if (of15) {
            put_ofp15_bucket(b, &g->buckets[i], g->type, version, tlv,
                             &error);
        } else {
            put_ofp11_bucket(b, &g->buckets[i], version, tlv, &error);
        }
    }
    if (of15) {
        if (!fdp__ofpbuf_failed(b)) {
            fdp__ofp_set_be16(b->data + body + 8,
                              (uint16_t) (b->size - buckets));
        }
        if (g->selection_method[0]) {
            put_selection_method(b, g);
        }
    }
    if (error) {
        b->size = start;
        return error;
    }
    return fdp_ofp_finish(b, start);
}

/* ---------------------------------------------------------------------- */
/* Group statistics, desc and features.                                    */

int
fdp_ofp_decode_group_request(const uint8_t *msg, size_t len,
                             uint32_t *group_id)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_GROUP_STATS_REQUEST
        && oh.type != FDP_OFPTYPE_GROUP_DESC_STATS_REQUEST) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    /* The table checked the body: 8 bytes (group id, padding), or none for
     * 1.1-1.4's desc request. */
    *group_id = (oh.raw == FDP_OFPRAW_OFPST11_GROUP_DESC_REQUEST
                 ? FDP_OFPG_ALL : fdp__ofp_get_be32(msg + oh.hdr_len));
    return 0;
}

int
fdp_ofp_encode_group_request(struct fdp__ofpbuf *b, enum fdp_ofptype type,
                             uint8_t version, uint32_t xid, uint32_t group_id)
{
    enum fdp_ofpraw raw = fdp_ofpraw_for(type, version);

    if (raw == FDP_OFPRAW_NONE
        || (type != FDP_OFPTYPE_GROUP_STATS_REQUEST
            && type != FDP_OFPTYPE_GROUP_DESC_STATS_REQUEST
            && type != FDP_OFPTYPE_GROUP_FEATURES_STATS_REQUEST)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    if (raw != FDP_OFPRAW_OFPST11_GROUP_DESC_REQUEST
        && type != FDP_OFPTYPE_GROUP_FEATURES_STATS_REQUEST) {
        fdp__ofpbuf_put_be32(b, group_id);
        fdp__ofpbuf_put_zeros(b, 4);
    }
    return fdp_ofp_finish(b, start);
}

/* The version of the replies 'mp' builds. */
static uint8_t
mp_version(const struct fdp_ofpmp *mp)
{
    return mp->b->data[mp->start];
}

int
fdp_ofp_put_group_desc(struct fdp_ofpmp *mp, const struct fdp_ofp_group *g,
                       const struct fdp_tlv_map *tlv)
{
    struct fdp__ofpbuf *b = mp->b;
    if (fdp__ofpbuf_failed(b)) {
        return ENOMEM;
    }
    uint8_t version = mp_version(mp);
    bool of15 = uses_ofp15_form(version);
    size_t start = fdp_ofpmp_entry_start(mp);
    int error = 0;

    fdp__ofpbuf_put_zeros(b, of15 ? OFP15_GROUP_DESC_LEN
                                  : OFP11_GROUP_DESC_LEN);
    size_t buckets = b->size;
    for (size_t i = 0; i < g->n_buckets; i++) {
        if (of15) {
            put_ofp15_bucket(b, &g->buckets[i], g->type, version, tlv,
                             &error);
        } else {
            put_ofp11_bucket(b, &g->buckets[i], version, tlv, &error);
        }
    }
    size_t buckets_len = b->size - buckets;
    if (of15 && g->selection_method[0]) {
        put_selection_method(b, g);
    }
    if (error || fdp__ofpbuf_failed(b)) {
        b->size = start;
        return error ? error : ENOMEM;
    }
    uint8_t *p = b->data + start;
    fdp__ofp_set_be16(p, (uint16_t) (b->size - start));
    p[2] = g->type;
    fdp__ofp_set_be32(p + 4, g->group_id);
    if (of15) {
        fdp__ofp_set_be16(p + 8, (uint16_t) buckets_len);
    }
    fdp_ofpmp_entry_end(mp, start);
    return 0;
}

int
fdp_ofp_pull_group_desc(struct fdp__ofp_reader *r, uint8_t version,
                        const struct fdp_tlv_map *tlv,
                        struct fdp_ofp_group *g)
{
    bool of15 = uses_ofp15_form(version);
    size_t fixed = of15 ? OFP15_GROUP_DESC_LEN : OFP11_GROUP_DESC_LEN;

    group_init(g);
    if (!r->left) {
        return EOF;
    }
    const uint8_t *p = fdp__ofp_pull(r, fixed);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    size_t length = fdp__ofp_get_be16(p);
    g->type = p[2];
    g->group_id = fdp__ofp_get_be32(p + 4);
    if (length < fixed || length - fixed > r->left) {
        return FDP_OFPBRC_BAD_LEN;
    }
    int error;
    if (!of15) {
        error = pull_ofp11_buckets(r, length - fixed, version, tlv, g);
    } else {
        size_t buckets_len = fdp__ofp_get_be16(p + 8);
        if (length < buckets_len + fixed) {
            return FDP_OFPBRC_BAD_LEN;
        }
        error = pull_ofp15_buckets(r, buckets_len, version, tlv, g);
        if (!error) {
            /* As Open vSwitch: a desc reply's properties are read as an
             * add's. */
            error = pull_group_props(r, length - fixed - buckets_len,
                                     FDP_OFPGC_ADD, g);
        }
    }
    if (error) {
        fdp_ofp_group_destroy(g);
    }
    return error;
}

int
fdp_ofp_put_group_stats(struct fdp_ofpmp *mp,
                        const struct fdp_ofp_group_stats *gs)
{
    struct fdp__ofpbuf *b = mp->b;
    if (fdp__ofpbuf_failed(b)) {
        return ENOMEM;
    }
    uint8_t version = mp_version(mp);
    bool of13 = version == FDP_OFP10 || version >= FDP_OFP13;
    size_t start = fdp_ofpmp_entry_start(mp);
    size_t len = ((of13 ? OFP13_GROUP_STATS_LEN : OFP11_GROUP_STATS_LEN)
                  + gs->n_buckets * BUCKET_COUNTER_LEN);

    if (len > FDP_OFP_MAX_LEN) {
        return EMSGSIZE;
    }
    fdp__ofpbuf_put_be16(b, (uint16_t) len);
    fdp__ofpbuf_put_zeros(b, 2);
    fdp__ofpbuf_put_be32(b, gs->group_id);
    fdp__ofpbuf_put_be32(b, gs->ref_count);
    fdp__ofpbuf_put_zeros(b, 4);
    fdp__ofpbuf_put_be64(b, gs->packet_count);
    fdp__ofpbuf_put_be64(b, gs->byte_count);
    if (of13) {
        fdp__ofpbuf_put_be32(b, gs->duration_sec);
        fdp__ofpbuf_put_be32(b, gs->duration_nsec);
    }
    for (size_t i = 0; i < gs->n_buckets; i++) {
        fdp__ofpbuf_put_be64(b, gs->buckets[i].packet_count);
        fdp__ofpbuf_put_be64(b, gs->buckets[i].byte_count);
    }
    if (fdp__ofpbuf_failed(b)) {
        return ENOMEM;
    }
    fdp_ofpmp_entry_end(mp, start);
    return 0;
}

int
fdp_ofp_pull_group_stats(struct fdp__ofp_reader *r, enum fdp_ofpraw raw,
                         struct fdp_ofp_group_stats *gs)
{
    memset(gs, 0, sizeof *gs);
    if (!r->left) {
        return EOF;
    }
    bool of11 = raw == FDP_OFPRAW_OFPST11_GROUP_REPLY;
    size_t base = of11 ? OFP11_GROUP_STATS_LEN : OFP13_GROUP_STATS_LEN;
    const uint8_t *p = fdp__ofp_pull(r, base);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    size_t length = fdp__ofp_get_be16(p);
    if (length < base) {
        return FDP_OFPBRC_BAD_LEN;
    }
    gs->group_id = fdp__ofp_get_be32(p + 4);
    gs->ref_count = fdp__ofp_get_be32(p + 8);
    gs->packet_count = fdp__ofp_get_be64(p + 16);
    gs->byte_count = fdp__ofp_get_be64(p + 24);
    if (of11) {
        gs->duration_sec = gs->duration_nsec = UINT32_MAX;
    } else {
        gs->duration_sec = fdp__ofp_get_be32(p + 32);
        gs->duration_nsec = fdp__ofp_get_be32(p + 36);
    }
    gs->n_buckets = (length - base) / BUCKET_COUNTER_LEN;
    const uint8_t *c = fdp__ofp_pull(r, gs->n_buckets * BUCKET_COUNTER_LEN);
    if (!c) {
        gs->n_buckets = 0;
        return FDP_OFPBRC_BAD_LEN;
    }
    gs->buckets = calloc(gs->n_buckets ? gs->n_buckets : 1,
                         sizeof *gs->buckets);
    if (!gs->buckets) {
        gs->n_buckets = 0;
        return FDP_OFPERR_NOMEM;
    }
    for (size_t i = 0; i < gs->n_buckets; i++) {
        gs->buckets[i].packet_count = fdp__ofp_get_be64(c + 16 * i);
        gs->buckets[i].byte_count = fdp__ofp_get_be64(c + 16 * i + 8);
    }
    return 0;
}

int
fdp_ofp_encode_group_features_reply(struct fdp__ofpbuf *b,
                                    const struct fdp_ofp_header *request,
                                    const struct fdp_ofp_group_features *f)
{
    enum fdp_ofpraw raw = fdp_ofpraw_stats_reply(request->raw,
                                                 request->version);
    if (fdp_ofpraw_type(raw) != FDP_OFPTYPE_GROUP_FEATURES_STATS_REPLY) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, request->version, request->xid);
    fdp__ofpbuf_put_be32(b, f->types);
    fdp__ofpbuf_put_be32(b, f->capabilities);
    for (int i = 0; i < 4; i++) {
        fdp__ofpbuf_put_be32(b, f->max_groups[i]);
    }
    for (int i = 0; i < 4; i++) {
        fdp__ofpbuf_put_be32(b, f->actions[i]);
    }
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_decode_group_features_reply(const uint8_t *msg, size_t len,
                                    struct fdp_ofp_group_features *f)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_GROUP_FEATURES_STATS_REPLY) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    const uint8_t *p = msg + oh.hdr_len;
    f->types = fdp__ofp_get_be32(p);
    f->capabilities = fdp__ofp_get_be32(p + 4);
    for (int i = 0; i < 4; i++) {
        f->max_groups[i] = fdp__ofp_get_be32(p + 8 + 4 * i);
        f->actions[i] = fdp__ofp_get_be32(p + 24 + 4 * i);
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Groups and flowdp's group text.                                         */

static void
format_port(struct fdp__ds *ds, uint32_t port11)
{
    uint16_t port = fdp_ofp_port_to_ofp10(port11);
    const char *name = fdp__port_name(port);

    if (name) {
        fdp__ds_put(ds, name);
    } else {
        fdp__ds_printf(ds, "%" PRIu32, port11);
    }
}

/* Appends ",fields(...)" for 'g''s field array. */
static void
format_fields(struct fdp__ds *ds, const struct fdp_ofp_group *g)
{
    struct fdp__ofp_reader r;
    size_t n = 0;

    fdp__ofp_reader_init(&r, g->fields, g->fields_len);
    fdp__ds_put(ds, ",fields(");
    while (r.left) {
        struct field_entry e;
        fdp_u128 mask;
        if (field_pull(&r, &e)
            || fdp__ofp_mask_from_wire(e.row, e.mask, &mask)) {
            break;              /* Checked when decoded. */
        }
        if (n++) {
            fdp__ds_putc(ds, ',');
        }
        fdp__ds_put(ds, hash_wire[e.hash].name);
        bool exact = true;
        for (size_t i = 0; i < fdp__ofp_field_n_bytes(e.row); i++) {
            exact &= e.mask[i] == 0xff;
        }
        if (!exact) {
            fdp__ds_putc(ds, '=');
            fdp__format_value(ds, fdp__ofp_field_id(e.row), mask);
        }
    }
    fdp__ds_putc(ds, ')');
}

char *
fdp_ofp_group_to_text(const struct fdp_ofp_group *g)
{
    static const char *const types[] = { "all", "select", "indirect", "ff" };
    struct fdp__ds ds = FDP__DS_INIT;
    struct fdp_match *empty = fdp_match_create();

    if (!empty || g->type > FDP_OFPGT_FF) {
        fdp_match_destroy(empty);
        return NULL;
    }
    fdp__ds_printf(&ds, "group_id=%" PRIu32 ",type=%s", g->group_id,
                   types[g->type]);
    if (g->selection_method[0]) {
        fdp__ds_printf(&ds, ",selection_method=%s", g->selection_method);
        if (g->selection_method_param) {
            fdp__ds_printf(&ds, ",selection_method_param=%" PRIu64,
                           g->selection_method_param);
        }
        if (g->fields_len) {
            format_fields(&ds, g);
        }
    }
    for (size_t i = 0; i < g->n_buckets; i++) {
        const struct fdp_ofp_bucket *b = &g->buckets[i];
        fdp__ds_printf(&ds, ",bucket=bucket_id:%" PRIu32, b->bucket_id);
        if (g->type == FDP_OFPGT_SELECT) {
            fdp__ds_printf(&ds, ",weight:%u", b->weight);
        }
        if (b->watch_port != FDP_OFPP_ANY) {
            fdp__ds_put(&ds, ",watch_port:");
            format_port(&ds, b->watch_port);
        }
        if (b->watch_group != FDP_OFPG_ANY) {
            fdp__ds_printf(&ds, ",watch_group:%" PRIu32, b->watch_group);
        }
        char *acts = fdp_actions_format(b->actions, empty);
        if (!acts) {
            fdp__ds_destroy(&ds);
            fdp_match_destroy(empty);
            return NULL;
        }
        fdp__ds_printf(&ds, ",actions=%s", acts);
        free(acts);
    }
    fdp_match_destroy(empty);
    return fdp__ds_steal(&ds);
}

/* Appends the field array entry of hash field 'name' with 'hf''s mask. */
static int
put_hash_field(struct fdp__ofpbuf *b, const char *name, bool masked,
               fdp_u128 mask)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(hash_wire); i++) {
        if (strcmp(name, hash_wire[i].name)) {
            continue;
        }
        const struct fdp__ofp_field *row
            = fdp__ofp_field_by_name(hash_wire[i].oxm);
        if (!row) {
            return EINVAL;
        }
        size_t n = fdp__ofp_field_n_bytes(row);
        uint8_t wire[32];
        if (n > sizeof wire) {
            return EINVAL;
        }
        if (masked) {
            fdp__ofp_mask_to_wire(row, mask, wire);
        } else {
            memset(wire, 0xff, n);
        }
        uint32_t header = fdp__ofp_field_header(row);
        fdp__ofpbuf_put_be32(b, header);
        if (header >> 16 == 0xffff) {
            fdp__ofpbuf_put_be32(b, fdp__ofp_field_experimenter(row));
        }
        fdp__ofpbuf_put(b, wire, n);
        return 0;
    }
    return EINVAL;
}

int
fdp_ofp_group_from_group(const struct fdp_group *g, struct fdp_ofp_group *out)
{
    static const uint8_t types[] = {
        [FDP__GROUP_ALL] = FDP_OFPGT_ALL,
        [FDP__GROUP_SELECT] = FDP_OFPGT_SELECT,
        [FDP__GROUP_INDIRECT] = FDP_OFPGT_INDIRECT,
        [FDP__GROUP_FF] = FDP_OFPGT_FF,
    };

    group_init(out);
    out->group_id = g->group_id;
    out->type = types[g->type];
    for (uint32_t i = 0; i < g->n_buckets; i++) {
        const struct fdp__bucket *gb = &g->buckets[i];
        struct fdp_ofp_bucket *b = group_add_bucket(out);
        if (!b) {
            fdp_ofp_group_destroy(out);
            return ENOMEM;
        }
        b->bucket_id = gb->bucket_id;
        b->weight = gb->weight;
        b->watch_port = (gb->watch_port == FDP__WATCH_NONE ? FDP_OFPP_ANY
                         : fdp_ofp_port_from_ofp10((uint16_t) gb->watch_port));
        b->watch_group = (gb->watch_group == FDP__WATCH_NONE ? FDP_OFPG_ANY
                          : gb->watch_group);
        b->actions = fdp_actions_clone(gb->actions);
        if (!b->actions) {
            fdp_ofp_group_destroy(out);
            return ENOMEM;
        }
    }
    if (g->method != FDP__SEL_DEFAULT) {
        strcpy(out->selection_method,
               g->method == FDP__SEL_HASH ? "hash" : "dp_hash");
        out->selection_method_param = g->method_param;
        struct fdp__ofpbuf fb;
        fdp__ofpbuf_init(&fb);
        for (uint32_t i = 0; i < g->n_fields; i++) {
            const struct fdp__hash_field *hf = &g->fields[i];
            if (put_hash_field(&fb, fdp__group_hash_field_name(hf->name),
                               hf->masked, hf->mask)) {
                fdp__ofpbuf_uninit(&fb);
                fdp_ofp_group_destroy(out);
                return EINVAL;
            }
        }
        if (fdp__ofpbuf_failed(&fb)) {
            fdp__ofpbuf_uninit(&fb);
            fdp_ofp_group_destroy(out);
            return ENOMEM;
        }
        out->fields = fb.data;
        out->fields_len = fb.size;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Meters.                                                                 */

/* 'len' bytes of bands into 'c' (Open vSwitch's ofputil_pull_bands()). */
static int
pull_bands(struct fdp__ofp_reader *r, size_t len, struct fdp_meter_config *c)
{
    struct fdp__ofp_reader br;

    c->n_bands = 0;
    if (!fdp__ofp_pull_reader(r, len, &br)) {
        return FDP_OFPBRC_BAD_LEN;
    }
    while (br.left >= METER_BAND_LEN) {
        const uint8_t *p = pull_known(&br, METER_BAND_LEN);
        if (fdp__ofp_get_be16(p + 2) != METER_BAND_LEN) {
            return FDP_OFPBRC_BAD_LEN;
        }
        uint16_t type = fdp__ofp_get_be16(p);
        if (type != FDP_METER_BAND_DROP
            && type != FDP_METER_BAND_DSCP_REMARK) {
            return FDP_OFPMMFC_BAD_BAND;
        }
        if (c->n_bands == FDP_METER_MAX_BANDS) {
            return FDP_OFPMMFC_OUT_OF_BANDS;
        }
        struct fdp_meter_band *band = &c->bands[c->n_bands++];
        band->type = (uint8_t) type;
        band->rate = fdp__ofp_get_be32(p + 4);
        band->burst_size = fdp__ofp_get_be32(p + 8);
        band->prec_level = type == FDP_METER_BAND_DSCP_REMARK ? p[12] : 0;
    }
    return br.left ? FDP_OFPBRC_BAD_LEN : 0;
}

static void
put_bands(struct fdp__ofpbuf *b, const struct fdp_meter_config *c)
{
    for (uint16_t i = 0; i < c->n_bands; i++) {
        const struct fdp_meter_band *band = &c->bands[i];
        fdp__ofpbuf_put_be16(b, band->type);
        fdp__ofpbuf_put_be16(b, METER_BAND_LEN);
        fdp__ofpbuf_put_be32(b, band->rate);
        fdp__ofpbuf_put_be32(b, band->burst_size);
        fdp__ofpbuf_put_u8(b, band->prec_level);
        fdp__ofpbuf_put_zeros(b, 3);
    }
}

int
fdp_ofp_decode_meter_mod(const uint8_t *msg, size_t len,
                         struct fdp_ofp_meter_mod *mm)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_METER_MOD) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    struct fdp__ofp_reader r;
    fdp__ofp_reader_init(&r, msg + oh.hdr_len, len - oh.hdr_len);
    const uint8_t *p = pull_known(&r, 8);
    memset(mm, 0, sizeof *mm);
    mm->command = fdp__ofp_get_be16(p);
    if (mm->command > FDP_OFPMC_DELETE) {
        return FDP_OFPMMFC_BAD_COMMAND;
    }
    mm->config.id = fdp__ofp_get_be32(p + 4);
    if (mm->command == FDP_OFPMC_DELETE) {
        return 0;
    }
    mm->config.flags = fdp__ofp_get_be16(p + 2);
    if ((mm->config.flags & FDP_METER_KBPS)
        && (mm->config.flags & FDP_METER_PKTPS)) {
        return FDP_OFPMMFC_BAD_FLAGS;
    }
    return pull_bands(&r, r.left, &mm->config);
}

int
fdp_ofp_encode_meter_mod(struct fdp__ofpbuf *b,
                         const struct fdp_ofp_meter_mod *mm, uint8_t version,
                         uint32_t xid)
{
    if (!fdp_ofpraw_in_version(FDP_OFPRAW_OFPT13_METER_MOD, version)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, FDP_OFPRAW_OFPT13_METER_MOD, version,
                                 xid);
    fdp__ofpbuf_put_be16(b, mm->command);
    fdp__ofpbuf_put_be16(b, mm->config.flags);
    fdp__ofpbuf_put_be32(b, mm->config.id);
    put_bands(b, &mm->config);
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_decode_meter_request(const uint8_t *msg, size_t len,
                             uint32_t *meter_id)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_METER_STATS_REQUEST
        && oh.type != FDP_OFPTYPE_METER_CONFIG_STATS_REQUEST) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    *meter_id = fdp__ofp_get_be32(msg + oh.hdr_len);
    return 0;
}

int
fdp_ofp_encode_meter_request(struct fdp__ofpbuf *b, enum fdp_ofptype type,
                             uint8_t version, uint32_t xid, uint32_t meter_id)
{
    enum fdp_ofpraw raw = fdp_ofpraw_for(type, version);

    if (raw == FDP_OFPRAW_NONE
        || (type != FDP_OFPTYPE_METER_STATS_REQUEST
            && type != FDP_OFPTYPE_METER_CONFIG_STATS_REQUEST
            && type != FDP_OFPTYPE_METER_FEATURES_STATS_REQUEST)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    if (type != FDP_OFPTYPE_METER_FEATURES_STATS_REQUEST) {
        fdp__ofpbuf_put_be32(b, meter_id);
        fdp__ofpbuf_put_zeros(b, 4);
    }
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_put_meter_config(struct fdp_ofpmp *mp,
                         const struct fdp_meter_config *c)
{
    struct fdp__ofpbuf *b = mp->b;
    size_t start = fdp_ofpmp_entry_start(mp);

    fdp__ofpbuf_put_be16(b, (uint16_t) (METER_CONFIG_LEN
                                        + c->n_bands * METER_BAND_LEN));
    fdp__ofpbuf_put_be16(b, c->flags);
    fdp__ofpbuf_put_be32(b, c->id);
    put_bands(b, c);
    if (fdp__ofpbuf_failed(b)) {
        return ENOMEM;
    }
    fdp_ofpmp_entry_end(mp, start);
    return 0;
}

int
fdp_ofp_pull_meter_config(struct fdp__ofp_reader *r,
                          struct fdp_meter_config *c)
{
    memset(c, 0, sizeof *c);
    if (!r->left) {
        return EOF;
    }
    const uint8_t *p = fdp__ofp_pull(r, METER_CONFIG_LEN);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    size_t length = fdp__ofp_get_be16(p);
    if (length < METER_CONFIG_LEN) {
        return FDP_OFPBRC_BAD_LEN;
    }
    c->flags = fdp__ofp_get_be16(p + 2);
    c->id = fdp__ofp_get_be32(p + 4);
    return pull_bands(r, length - METER_CONFIG_LEN, c);
}

int
fdp_ofp_put_meter_stats(struct fdp_ofpmp *mp, const struct fdp_meter_stats *s)
{
    struct fdp__ofpbuf *b = mp->b;
    size_t start = fdp_ofpmp_entry_start(mp);

    fdp__ofpbuf_put_be32(b, s->id);
    fdp__ofpbuf_put_be16(b, (uint16_t) (METER_STATS_LEN
                                        + s->n_bands * METER_BAND_STATS_LEN));
    fdp__ofpbuf_put_zeros(b, 6);
    fdp__ofpbuf_put_be32(b, s->flow_count);
    fdp__ofpbuf_put_be64(b, s->packet_in_count);
    fdp__ofpbuf_put_be64(b, s->byte_in_count);
    fdp__ofpbuf_put_be32(b, (uint32_t) (s->duration_ns / 1000000000u));
    fdp__ofpbuf_put_be32(b, (uint32_t) (s->duration_ns % 1000000000u));
    for (uint16_t i = 0; i < s->n_bands; i++) {
        fdp__ofpbuf_put_be64(b, s->bands[i].packet_count);
        fdp__ofpbuf_put_be64(b, s->bands[i].byte_count);
    }
    if (fdp__ofpbuf_failed(b)) {
        return ENOMEM;
    }
    fdp_ofpmp_entry_end(mp, start);
    return 0;
}

int
fdp_ofp_pull_meter_stats(struct fdp__ofp_reader *r, struct fdp_meter_stats *s)
{
    memset(s, 0, sizeof *s);
    if (!r->left) {
        return EOF;
    }
    const uint8_t *p = fdp__ofp_pull(r, METER_STATS_LEN);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    size_t length = fdp__ofp_get_be16(p + 4);
    if (length < METER_STATS_LEN) {
        return FDP_OFPBRC_BAD_LEN;
    }
    s->id = fdp__ofp_get_be32(p);
    s->flow_count = fdp__ofp_get_be32(p + 12);
    s->packet_in_count = fdp__ofp_get_be64(p + 16);
    s->byte_in_count = fdp__ofp_get_be64(p + 24);
    s->duration_ns = ((uint64_t) fdp__ofp_get_be32(p + 32) * 1000000000u
                      + fdp__ofp_get_be32(p + 36));
    struct fdp__ofp_reader br;
    if (!fdp__ofp_pull_reader(r, length - METER_STATS_LEN, &br)) {
        return FDP_OFPBRC_BAD_LEN;
    }
    while (br.left >= METER_BAND_STATS_LEN) {
        if (s->n_bands == FDP_METER_MAX_BANDS) {
            return FDP_OFPMMFC_OUT_OF_BANDS;
        }
        const uint8_t *q = pull_known(&br, METER_BAND_STATS_LEN);
        s->bands[s->n_bands].packet_count = fdp__ofp_get_be64(q);
        s->bands[s->n_bands].byte_count = fdp__ofp_get_be64(q + 8);
        s->n_bands++;
    }
    return br.left ? FDP_OFPBRC_BAD_LEN : 0;
}

int
fdp_ofp_encode_meter_features_reply(struct fdp__ofpbuf *b,
                                    const struct fdp_ofp_header *request,
                                    const struct fdp_ofp_meter_features *f)
{
    enum fdp_ofpraw raw = fdp_ofpraw_stats_reply(request->raw,
                                                 request->version);
    if (fdp_ofpraw_type(raw) != FDP_OFPTYPE_METER_FEATURES_STATS_REPLY) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, request->version, request->xid);
    fdp__ofpbuf_put_be32(b, f->max_meter);
    fdp__ofpbuf_put_be32(b, f->band_types);
    fdp__ofpbuf_put_be32(b, f->capabilities);
    fdp__ofpbuf_put_u8(b, f->max_bands);
    fdp__ofpbuf_put_u8(b, f->max_color);
    fdp__ofpbuf_put_zeros(b, 2);
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_decode_meter_features_reply(const uint8_t *msg, size_t len,
                                    struct fdp_ofp_meter_features *f)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_METER_FEATURES_STATS_REPLY) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    const uint8_t *p = msg + oh.hdr_len;
    f->max_meter = fdp__ofp_get_be32(p);
    f->band_types = fdp__ofp_get_be32(p + 4);
    f->capabilities = fdp__ofp_get_be32(p + 8);
    f->max_bands = p[12];
    f->max_color = p[13];
    return 0;
}

/* ---------------------------------------------------------------------- */
/* TLV tables.                                                             */

int
fdp_ofp_decode_tlv_table(const uint8_t *msg, size_t len,
                         struct fdp_ofp_tlv_table *t)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_NXT_TLV_TABLE_MOD
        && oh.type != FDP_OFPTYPE_NXT_TLV_TABLE_REPLY) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    struct fdp__ofp_reader r;
    fdp__ofp_reader_init(&r, msg + oh.hdr_len, len - oh.hdr_len);
    memset(t, 0, sizeof *t);
    unsigned int max_fields = FDP_TLV_MAP_FIELDS;
    if (oh.type == FDP_OFPTYPE_NXT_TLV_TABLE_MOD) {
        const uint8_t *p = pull_known(&r, 8);
        t->command = fdp__ofp_get_be16(p);
        if (t->command > FDP_NXTTMC_CLEAR) {
            return FDP_NXTTMFC_BAD_COMMAND;
        }
    } else {
        const uint8_t *p = pull_known(&r, 16);
        t->max_option_space = fdp__ofp_get_be32(p);
        t->max_fields = fdp__ofp_get_be16(p + 4);
        max_fields = t->max_fields;
    }
    while (r.left) {
        const uint8_t *p = fdp__ofp_pull(&r, TLV_MAP_LEN);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;  /* The table allows none. */
        }
        struct fdp_ofp_tlv_mapping m = {
            .option_class = fdp__ofp_get_be16(p),
            .option_type = p[2],
            .option_len = p[3],
            .index = fdp__ofp_get_be16(p + 4),
        };
        if (m.option_len % 4 || m.option_len > TLV_MAX_OPT_SIZE) {
            return FDP_NXTTMFC_BAD_OPT_LEN;
        }
        if (m.index >= max_fields) {
            return FDP_NXTTMFC_BAD_FIELD_IDX;
        }
        if (t->n == FDP_OFP_TLV_MAX_MAPPINGS) {
            return FDP_NXTTMFC_TABLE_FULL;
        }
        t->mappings[t->n++] = m;
    }
    return 0;
}

int
fdp_ofp_encode_tlv_table(struct fdp__ofpbuf *b, enum fdp_ofpraw raw,
                         const struct fdp_ofp_tlv_table *t, uint8_t version,
                         uint32_t xid)
{
    if ((raw != FDP_OFPRAW_NXT_TLV_TABLE_MOD
         && raw != FDP_OFPRAW_NXT_TLV_TABLE_REPLY)
        || !fdp_ofpraw_in_version(raw, version)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    if (raw == FDP_OFPRAW_NXT_TLV_TABLE_MOD) {
        fdp__ofpbuf_put_be16(b, t->command);
        fdp__ofpbuf_put_zeros(b, 6);
    } else {
        fdp__ofpbuf_put_be32(b, t->max_option_space);
        fdp__ofpbuf_put_be16(b, t->max_fields);
        fdp__ofpbuf_put_zeros(b, 10);
    }
    for (size_t i = 0; i < t->n; i++) {
        const struct fdp_ofp_tlv_mapping *m = &t->mappings[i];
        fdp__ofpbuf_put_be16(b, m->option_class);
        fdp__ofpbuf_put_u8(b, m->option_type);
        fdp__ofpbuf_put_u8(b, m->option_len);
        fdp__ofpbuf_put_be16(b, m->index);
        fdp__ofpbuf_put_zeros(b, 2);
    }
    return fdp_ofp_finish(b, start);
}

char *
fdp_ofp_tlv_table_to_text(const struct fdp_ofp_tlv_table *t)
{
    struct fdp__ds ds = FDP__DS_INIT;

    for (size_t i = 0; i < t->n; i++) {
        const struct fdp_ofp_tlv_mapping *m = &t->mappings[i];
        fdp__ds_printf(&ds, "%s{class=%#x,type=%#x,len=%u}->tun_metadata%u",
                       i ? "," : "", m->option_class, m->option_type,
                       m->option_len, m->index);
    }
    return fdp__ds_steal(&ds);
}

int
fdp_ofp_tlv_table_from_text(const char *text, struct fdp_ofp_tlv_table *t)
{
    t->n = 0;
    for (const char *p = strchr(text, '{'); p; p = strchr(p + 1, '{')) {
        unsigned int cls, type, len, idx;
        if (sscanf(p, "{class=%i,type=%i,len=%i}->tun_metadata%u", &cls,
                   &type, &len, &idx) != 4
            || t->n == FDP_OFP_TLV_MAX_MAPPINGS) {
            return EINVAL;
        }
        t->mappings[t->n++] = (struct fdp_ofp_tlv_mapping) {
            .option_class = (uint16_t) cls, .option_type = (uint8_t) type,
            .option_len = (uint8_t) len, .index = (uint16_t) idx,
        };
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Conntrack flushes.                                                      */

enum {
    NXT_CT_ORIG_TUPLE = 0,
    NXT_CT_REPLY_TUPLE = 1,
    NXT_CT_ZONE_ID = 2,
};
enum {
    NXT_CT_TUPLE_SRC = 0,
    NXT_CT_TUPLE_DST = 1,
    NXT_CT_TUPLE_SRC_PORT = 2,
    NXT_CT_TUPLE_DST_PORT = 3,
    NXT_CT_TUPLE_ICMP_ID = 4,
    NXT_CT_TUPLE_ICMP_TYPE = 5,
    NXT_CT_TUPLE_ICMP_CODE = 6,
};

static bool
is_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i]) {
            return false;
        }
    }
    return true;
}

/* An address property (Open vSwitch's ofpprop_pull_ipv6()). */
static int
pull_ct_addr(const struct prop *p, uint8_t addr[16], uint8_t *l3)
{
    static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        0xff, 0xff };
    if (p->payload.left < 16) {
        return FDP_OFPTFFC_BAD_LEN;
    }
    memcpy(addr, p->payload.p, 16);
    uint8_t l = 0;
    if (!is_zero(addr, 16)) {
        l = memcmp(addr, mapped, 12) ? 6 : 4;
    }
    if (*l3 && l && *l3 != l) {
        return FDP_OFPTFFC_BAD_ARGUMENT;
    }
    *l3 = l;
    return 0;
}

static int
pull_ct_tuple(const struct prop *outer, struct fdp_ofp_ct_tuple *t,
              uint8_t *l3)
{
    /* The nested properties start 8 bytes into the outer one. */
    if (outer->len < 8) {
        return FDP_OFPTFFC_BAD_LEN;
    }
    struct fdp__ofp_reader r;
    fdp__ofp_reader_init(&r, outer->start + 8, outer->len - 8);
    while (r.left) {
        struct prop p;
        int error = prop_pull(&r, &p);
        if (error) {
            return error;
        }
        size_t need = 0;
        switch (p.type) {
        case NXT_CT_TUPLE_SRC:
            error = pull_ct_addr(&p, t->src, l3);
            break;
        case NXT_CT_TUPLE_DST:
            error = pull_ct_addr(&p, t->dst, l3);
            break;
        case NXT_CT_TUPLE_SRC_PORT:
        case NXT_CT_TUPLE_DST_PORT:
        case NXT_CT_TUPLE_ICMP_ID:
            need = 2;
            break;
        case NXT_CT_TUPLE_ICMP_TYPE:
        case NXT_CT_TUPLE_ICMP_CODE:
            need = 1;
            break;
        default:
            break;              /* Ignored, as Open vSwitch does. */
        }
        if (error) {
            return error;
        }
        if (need && p.payload.left < need) {
            return FDP_OFPTFFC_BAD_LEN;
        }
        const uint8_t *v = p.payload.p;
        switch (p.type) {
        case NXT_CT_TUPLE_SRC_PORT:
            t->src_port = fdp__ofp_get_be16(v);
            break;
        case NXT_CT_TUPLE_DST_PORT:
            t->dst_port = fdp__ofp_get_be16(v);
            break;
        case NXT_CT_TUPLE_ICMP_ID:
            t->icmp_id = fdp__ofp_get_be16(v);
            break;
        case NXT_CT_TUPLE_ICMP_TYPE:
            t->icmp_type = v[0];
            break;
        case NXT_CT_TUPLE_ICMP_CODE:
            t->icmp_code = v[0];
            break;
        default:
            break;
        }
    }
    return 0;
}

int
fdp_ofp_decode_ct_flush(const uint8_t *msg, size_t len,
                        struct fdp_ofp_ct_flush *f)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_CT_FLUSH) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    struct fdp__ofp_reader r;
    fdp__ofp_reader_init(&r, msg + oh.hdr_len, len - oh.hdr_len);
    const uint8_t *p = pull_known(&r, 8);
    memset(f, 0, sizeof *f);
    if (!is_zero(p + 1, 7)) {
        return FDP_NXBRC_MUST_BE_ZERO;
    }
    f->ip_proto = p[0];
    while (r.left) {
        struct prop pr;
        error = prop_pull(&r, &pr);
        if (error) {
            return error;
        }
        switch (pr.type) {
        case NXT_CT_ORIG_TUPLE:
            error = pull_ct_tuple(&pr, &f->orig, &f->l3);
            break;
        case NXT_CT_REPLY_TUPLE:
            error = pull_ct_tuple(&pr, &f->reply, &f->l3);
            break;
        case NXT_CT_ZONE_ID:
            if (pr.payload.left < 2) {
                return FDP_OFPTFFC_BAD_LEN;
            }
            f->has_zone = true;
            f->zone = fdp__ofp_get_be16(pr.payload.p);
            break;
        default:
            break;
        }
        if (error) {
            return error;
        }
    }
    return 0;
}

static void
put_ct_tuple(struct fdp__ofpbuf *b, const struct fdp_ofp_ct_tuple *t,
             uint16_t type, uint8_t ip_proto)
{
    size_t start = b->size;

    fdp__ofpbuf_put_be16(b, type);
    fdp__ofpbuf_put_be16(b, 0);
    fdp__ofpbuf_put_zeros(b, 4);
    size_t nested = b->size;
    if (!is_zero(t->src, 16)) {
        size_t s = prop_start(b, NXT_CT_TUPLE_SRC);
        fdp__ofpbuf_put(b, t->src, 16);
        prop_end(b, s);
    }
    if (!is_zero(t->dst, 16)) {
        size_t s = prop_start(b, NXT_CT_TUPLE_DST);
        fdp__ofpbuf_put(b, t->dst, 16);
        prop_end(b, s);
    }
    if (ip_proto == 1 || ip_proto == 58) {      /* ICMP, ICMPv6. */
        prop_put_be16(b, NXT_CT_TUPLE_ICMP_ID, t->icmp_id);
        prop_put_u8(b, NXT_CT_TUPLE_ICMP_TYPE, t->icmp_type);
        prop_put_u8(b, NXT_CT_TUPLE_ICMP_CODE, t->icmp_code);
    } else {
        if (t->src_port) {
            prop_put_be16(b, NXT_CT_TUPLE_SRC_PORT, t->src_port);
        }
        if (t->dst_port) {
            prop_put_be16(b, NXT_CT_TUPLE_DST_PORT, t->dst_port);
        }
    }
    if (b->size == nested) {
        /* Nothing to say: no property at all. */
        b->size = start;
        return;
    }
    prop_end(b, start);
}

int
fdp_ofp_encode_ct_flush(struct fdp__ofpbuf *b,
                        const struct fdp_ofp_ct_flush *f, uint8_t version,
                        uint32_t xid)
{
    if (!fdp_ofpraw_in_version(FDP_OFPRAW_NXT_CT_FLUSH, version)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, FDP_OFPRAW_NXT_CT_FLUSH, version, xid);
    fdp__ofpbuf_put_u8(b, f->ip_proto);
    fdp__ofpbuf_put_zeros(b, 7);
    put_ct_tuple(b, &f->orig, NXT_CT_ORIG_TUPLE, f->ip_proto);
    put_ct_tuple(b, &f->reply, NXT_CT_REPLY_TUPLE, f->ip_proto);
    if (f->has_zone) {
        prop_put_be16(b, NXT_CT_ZONE_ID, f->zone);
    }
    return fdp_ofp_finish(b, start);
}
