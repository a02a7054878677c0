/*
 * Packet-out and packet-in messages (lib/ofp-msgs.h).
 *
 * Packet-out: OpenFlow 1.0 (buffer_id, 16-bit in_port, actions_len), 1.1
 * to 1.4 (32-bit in_port, 6 bytes of padding) and 1.5 (a match of
 * pipeline metadata instead of in_port), then actions, then the packet.
 *
 * Packet-in: OpenFlow 1.0 (in_port in the header), 1.2 and 1.3+ (an OXM
 * match of the packet's metadata, 1.3 also the cookie, then two bytes of
 * padding that align the packet's IP header), Nicira's NXT_PACKET_IN
 * (an NXM match) and NXT_PACKET_IN2 (properties: packet, full length,
 * buffer id, table, cookie, reason, metadata, userdata), each as Open
 * vSwitch writes it (lib/ofp-packet.c there): 1.4's finer reasons
 * (action_set, group, packet_out) are OFPR_ACTION before 1.4.
 */
#include <config.h>

#include "lib/ofp-msgs.h"

#include <errno.h>

#include <flowdp/actions.h>
#include <flowdp/match.h>
#include "lib/ofp-actions.h"
#include "lib/ofp-match.h"

/* OpenFlow 1.1+'s reserved ports a packet-out may come from. */
#define OFPP11_MAX 0xffffff00u
#define OFPP11_CONTROLLER 0xfffffffdu
#define OFPP11_LOCAL 0xfffffffeu
#define OFPP11_NONE 0xffffffffu

/* NXT_PACKET_IN2's properties (NXPINT_*). */
enum {
    NXPINT_PACKET = 0,
    NXPINT_FULL_LEN = 1,
    NXPINT_BUFFER_ID = 2,
    NXPINT_TABLE_ID = 3,
    NXPINT_COOKIE = 4,
    NXPINT_REASON = 5,
    NXPINT_METADATA = 6,
    NXPINT_USERDATA = 7,
    NXPINT_CONTINUATION = 8,
};

/* ---------------------------------------------------------------------- */
/* Packet-out.                                                             */

void
fdp_ofp_packet_out_destroy(struct fdp_ofp_packet_out *po)
{
    if (po) {
        fdp_match_destroy(po->match);
        fdp_actions_destroy(po->actions);
        po->match = NULL;
        po->actions = NULL;
    }
}

static int
valid_in_port(uint32_t port)
{
    return (port < OFPP11_MAX || port == OFPP11_LOCAL
            || port == OFPP11_NONE || port == OFPP11_CONTROLLER
            ? 0 : FDP_OFPBRC_BAD_PORT);
}

static int
decode_packet_out__(const uint8_t *msg, size_t len,
                    const struct fdp_tlv_map *tlv,
                    struct fdp_ofp_packet_out *po)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_PACKET_OUT) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    struct fdp__ofp_reader r;
    fdp__ofp_reader_init(&r, msg + oh.hdr_len, len - oh.hdr_len);
    size_t actions_len;
    const uint8_t *p;
    switch (oh.raw) {
    case FDP_OFPRAW_OFPT10_PACKET_OUT:
        p = fdp__ofp_pull(&r, 8);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;
        }
        po->buffer_id = fdp__ofp_get_be32(p);
        po->in_port = fdp_ofp_port_from_ofp10(fdp__ofp_get_be16(p + 4));
        actions_len = fdp__ofp_get_be16(p + 6);
        break;
    case FDP_OFPRAW_OFPT11_PACKET_OUT:
        p = fdp__ofp_pull(&r, 16);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;
        }
        po->buffer_id = fdp__ofp_get_be32(p);
        po->in_port = fdp__ofp_get_be32(p + 4);
        if (po->in_port >= 0xff00 && po->in_port < OFPP11_MAX) {
            return FDP_OFPBRC_BAD_PORT;
        }
        actions_len = fdp__ofp_get_be16(p + 8);
        break;
    default: {
        p = fdp__ofp_pull(&r, 8);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;
        }
        po->buffer_id = fdp__ofp_get_be32(p);
        actions_len = fdp__ofp_get_be16(p + 4);
        po->match = fdp_match_create();
        if (!po->match) {
            return FDP_OFPERR_NOMEM;
        }
        error = fdp__ofp11_match_pull(&r, tlv, po->match);
        if (error) {
            return error;
        }
        struct fdp_value v;
        if (!fdp_match_get(po->match, FDP_F_IN_PORT, &v)) {
            return FDP_OFPBRC_BAD_PORT;
        }
        po->in_port = fdp_ofp_port_from_ofp10((uint16_t) v.lo);
        break;
    }
    }
    error = valid_in_port(po->in_port);
    if (error) {
        return error;
    }
    if (actions_len > r.left) {
        return FDP_OFPBRC_BAD_LEN;
    }
    error = fdp__ofp_actions_pull(&r, actions_len, oh.version, tlv,
                                  &po->actions);
    if (error) {
        return error;
    }
    if (po->buffer_id == FDP_OFP_NO_BUFFER) {
        po->packet = r.p;
        po->packet_len = r.left;
    }
    return 0;
}

int
fdp_ofp_decode_packet_out(const uint8_t *msg, size_t len,
                          const struct fdp_tlv_map *tlv,
                          struct fdp_ofp_packet_out *po)
{
    memset(po, 0, sizeof *po);
    int error = decode_packet_out__(msg, len, tlv, po);
    if (error) {
        fdp_ofp_packet_out_destroy(po);
    }
    return error;
}

int
fdp_ofp_encode_packet_out(struct fdp__ofpbuf *b,
                          const struct fdp_ofp_packet_out *po,
                          uint8_t version, uint32_t xid,
                          const struct fdp_tlv_map *tlv)
{
    enum fdp_ofpraw raw = fdp_ofpraw_for(FDP_OFPTYPE_PACKET_OUT, version);
    if (!raw || (raw == FDP_OFPRAW_OFPT15_PACKET_OUT && !po->match)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    size_t actions_len_at;
    int error = 0;
    fdp__ofpbuf_put_be32(b, po->buffer_id);
    if (raw == FDP_OFPRAW_OFPT10_PACKET_OUT) {
        fdp__ofpbuf_put_be16(b, fdp_ofp_port_to_ofp10(po->in_port));
        actions_len_at = b->size;
        fdp__ofpbuf_put_be16(b, 0);
    } else if (raw == FDP_OFPRAW_OFPT11_PACKET_OUT) {
        fdp__ofpbuf_put_be32(b, po->in_port);
        actions_len_at = b->size;
        fdp__ofpbuf_put_be16(b, 0);
        fdp__ofpbuf_put_zeros(b, 6);
    } else {
        actions_len_at = b->size;
        fdp__ofpbuf_put_be16(b, 0);
        fdp__ofpbuf_put_zeros(b, 2);
        if (fdp__ofp11_match_put(b, po->match, version, tlv) < 0) {
            error = EINVAL;
        }
    }
    int n = po->actions ? fdp__ofp_actions_put(b, po->actions, version, tlv)
                        : 0;
    if (n < 0 || n > UINT16_MAX || error) {
        b->size = start;
        return EINVAL;
    }
    if (!fdp__ofpbuf_failed(b)) {
        fdp__ofp_set_be16(b->data + actions_len_at, (uint16_t) n);
    }
    fdp__ofpbuf_put(b, po->packet, po->packet_len);
    return fdp_ofp_finish(b, start);
}

/* ---------------------------------------------------------------------- */
/* Packet-in.                                                              */

static uint8_t
encode_reason(uint8_t reason, uint8_t version)
{
    if (version < FDP_OFP14 && reason >= FDP_OFPR_ACTION_SET) {
        return FDP_OFPR_ACTION;
    }
    return reason;
}

/* A property of NXT_PACKET_IN2: type, length, value, padding to 8. */
static void
put_prop(struct fdp__ofpbuf *b, uint16_t type, const void *value, size_t n)
{
    size_t start = b->size;
    fdp__ofpbuf_put_be16(b, type);
    fdp__ofpbuf_put_be16(b, (uint16_t) (4 + n));
    fdp__ofpbuf_put(b, value, n);
    fdp__ofpbuf_pad(b, start, 8);
}

static void
put_prop_be32(struct fdp__ofpbuf *b, uint16_t type, uint32_t v)
{
    uint8_t w[4];
    fdp__ofp_set_be32(w, v);
    put_prop(b, type, w, 4);
}

int
fdp_ofp_encode_packet_in(struct fdp__ofpbuf *b,
                         const struct fdp_ofp_packet_in *pin,
                         enum fdp_ofpraw raw, uint8_t version,
                         const struct fdp_tlv_map *tlv)
{
    if (!fdp_ofpraw_in_version(raw, version)
        || fdp_ofpraw_type(raw) != FDP_OFPTYPE_PACKET_IN
        || raw == FDP_OFPRAW_OFPT11_PACKET_IN
        || (raw != FDP_OFPRAW_OFPT10_PACKET_IN && !pin->metadata)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, 0);
    uint8_t reason = encode_reason(pin->reason, version);
    uint16_t total_len = (uint16_t) (pin->total_len > UINT16_MAX
                                     ? UINT16_MAX : pin->total_len);
    int error = 0;
    switch (raw) {
    case FDP_OFPRAW_OFPT10_PACKET_IN:
        fdp__ofpbuf_put_be32(b, pin->buffer_id);
        fdp__ofpbuf_put_be16(b, total_len);
        fdp__ofpbuf_put_be16(b, fdp_ofp_port_to_ofp10(pin->in_port));
        fdp__ofpbuf_put_u8(b, reason);
        fdp__ofpbuf_put_u8(b, 0);
        break;
    case FDP_OFPRAW_OFPT12_PACKET_IN:
    case FDP_OFPRAW_OFPT13_PACKET_IN:
        fdp__ofpbuf_put_be32(b, pin->buffer_id);
        fdp__ofpbuf_put_be16(b, total_len);
        fdp__ofpbuf_put_u8(b, reason);
        fdp__ofpbuf_put_u8(b, pin->table_id);
        if (raw == FDP_OFPRAW_OFPT13_PACKET_IN) {
            fdp__ofpbuf_put_be64(b, pin->cookie);
        }
        if (fdp__ofp11_match_put(b, pin->metadata, version, tlv) < 0) {
            error = EINVAL;
        }
        fdp__ofpbuf_put_zeros(b, 2);
        break;
    case FDP_OFPRAW_NXT_PACKET_IN: {
        size_t fixed = b->size;
        fdp__ofpbuf_put_be32(b, pin->buffer_id);
        fdp__ofpbuf_put_be16(b, total_len);
        fdp__ofpbuf_put_u8(b, reason);
        fdp__ofpbuf_put_u8(b, pin->table_id);
        fdp__ofpbuf_put_be64(b, pin->cookie);
        fdp__ofpbuf_put_zeros(b, 8);    /* match_len, padding. */
        size_t m = b->size;
        int match_len = fdp__nx_match_put(b, pin->metadata, false, version,
                                          tlv);
        if (match_len < 0) {
            error = EINVAL;
            break;
        }
        fdp__ofpbuf_pad(b, m, 8);
        fdp__ofpbuf_put_zeros(b, 2);
        if (!fdp__ofpbuf_failed(b)) {
            fdp__ofp_set_be16(b->data + fixed + 16, (uint16_t) match_len);
        }
        break;
    }
    default: {
        /* NXT_PACKET_IN2, in Open vSwitch's order of properties. */
        put_prop(b, NXPINT_PACKET, pin->packet, pin->packet_len);
        if (pin->packet_len != pin->total_len) {
            put_prop_be32(b, NXPINT_FULL_LEN, pin->total_len);
        }
        if (pin->buffer_id != FDP_OFP_NO_BUFFER) {
            put_prop_be32(b, NXPINT_BUFFER_ID, pin->buffer_id);
        }
        put_prop(b, NXPINT_TABLE_ID, &pin->table_id, 1);
        if (pin->cookie != UINT64_MAX) {
            /* A 64-bit property is aligned: 4 bytes of padding first. */
            uint8_t c[12] = { 0 };
            fdp__ofp_set_be32(c + 4, (uint32_t) (pin->cookie >> 32));
            fdp__ofp_set_be32(c + 8, (uint32_t) pin->cookie);
            put_prop(b, NXPINT_COOKIE, c, 12);
        }
        put_prop(b, NXPINT_REASON, &reason, 1);
        size_t prop = b->size;
        fdp__ofpbuf_put_be16(b, NXPINT_METADATA);
        fdp__ofpbuf_put_be16(b, 0);
        int n = fdp__nx_match_put(b, pin->metadata, true, version, tlv);
        if (n < 0) {
            error = EINVAL;
            break;
        }
        if (!fdp__ofpbuf_failed(b)) {
            fdp__ofp_set_be16(b->data + prop + 2, (uint16_t) (4 + n));
        }
        fdp__ofpbuf_pad(b, prop, 8);
        if (pin->userdata_len) {
            put_prop(b, NXPINT_USERDATA, pin->userdata, pin->userdata_len);
        }
        return error ? (b->size = start, error) : fdp_ofp_finish(b, start);
    }
    }
    if (error) {
        b->size = start;
        return error;
    }
    fdp__ofpbuf_put(b, pin->packet, pin->packet_len);
    return fdp_ofp_finish(b, start);
}

void
fdp_ofp_packet_in_destroy(struct fdp_ofp_packet_in *pin)
{
    if (pin) {
        fdp_match_destroy(pin->metadata_owned);
        pin->metadata_owned = NULL;
        pin->metadata = NULL;
    }
}

static int
decode_packet_in2(struct fdp__ofp_reader *r, const struct fdp_tlv_map *tlv,
                  struct fdp_ofp_packet_in *pin)
{
    bool have_full_len = false;
    while (r->left) {
        if (r->left < 4) {
            return FDP_OFPBRC_BAD_LEN;
        }
        uint16_t type = fdp__ofp_get_be16(r->p);
        size_t plen = fdp__ofp_get_be16(r->p + 2);
        struct fdp__ofp_reader prop;
        if (plen < 4
            || !fdp__ofp_pull_reader(r, (plen + 7) / 8 * 8, &prop)) {
            return FDP_OFPBRC_BAD_LEN;
        }
        const uint8_t *v = prop.p + 4;
        size_t n = plen - 4;
        size_t want = (type == NXPINT_FULL_LEN || type == NXPINT_BUFFER_ID
                       ? 4 : type == NXPINT_TABLE_ID || type == NXPINT_REASON
                       ? 1 : type == NXPINT_COOKIE ? 12 : n);
        if (n != want) {
            return FDP_OFPBRC_BAD_LEN;
        }
        switch (type) {
        case NXPINT_PACKET:
            pin->packet = v;
            pin->packet_len = n;
            break;
        case NXPINT_FULL_LEN:
            pin->total_len = fdp__ofp_get_be32(v);
            have_full_len = true;
            break;
        case NXPINT_BUFFER_ID:
            pin->buffer_id = fdp__ofp_get_be32(v);
            break;
        case NXPINT_TABLE_ID:
            pin->table_id = v[0];
            break;
        case NXPINT_COOKIE:
            pin->cookie = fdp__ofp_get_be64(v + 4);
            break;
        case NXPINT_REASON:
            pin->reason = v[0];
            break;
        case NXPINT_METADATA: {
            struct fdp__ofp_reader m;
            fdp__ofp_reader_init(&m, v, n);
            int error = fdp__nx_match_pull(&m, n, tlv, pin->metadata_owned);
            if (error) {
                return error;
            }
            break;
        }
        case NXPINT_USERDATA:
            pin->userdata = v;
            pin->userdata_len = n;
            break;
        default:
            /* Continuations (NXT_RESUME's state) are not kept; unknown
             * properties are refused, as Open vSwitch does when strict. */
            return FDP_OFPBRC_BAD_TYPE;
        }
    }
    if (!have_full_len) {
        pin->total_len = (uint32_t) pin->packet_len;
    }
    return 0;
}

static int
decode_packet_in__(const uint8_t *msg, size_t len,
                   const struct fdp_tlv_map *tlv,
                   struct fdp_ofp_packet_in *pin)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_PACKET_IN) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    pin->metadata_owned = fdp_match_create();
    if (!pin->metadata_owned) {
        return FDP_OFPERR_NOMEM;
    }
    pin->metadata = pin->metadata_owned;
    pin->cookie = UINT64_MAX;
    pin->buffer_id = FDP_OFP_NO_BUFFER;
    struct fdp__ofp_reader r;
    fdp__ofp_reader_init(&r, msg + oh.hdr_len, len - oh.hdr_len);
    const uint8_t *p;
    switch (oh.raw) {
    case FDP_OFPRAW_OFPT10_PACKET_IN:
        p = fdp__ofp_pull(&r, 10);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;
        }
        pin->buffer_id = fdp__ofp_get_be32(p);
        pin->total_len = fdp__ofp_get_be16(p + 4);
        pin->in_port = fdp_ofp_port_from_ofp10(fdp__ofp_get_be16(p + 6));
        pin->reason = p[8];
        break;
    case FDP_OFPRAW_OFPT12_PACKET_IN:
    case FDP_OFPRAW_OFPT13_PACKET_IN:
        p = fdp__ofp_pull(&r, oh.raw == FDP_OFPRAW_OFPT13_PACKET_IN ? 16 : 8);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;
        }
        pin->buffer_id = fdp__ofp_get_be32(p);
        pin->total_len = fdp__ofp_get_be16(p + 4);
        pin->reason = p[6];
        pin->table_id = p[7];
        if (oh.raw == FDP_OFPRAW_OFPT13_PACKET_IN) {
            pin->cookie = fdp__ofp_get_be64(p + 8);
        }
        error = fdp__ofp11_match_pull(&r, tlv, pin->metadata_owned);
        if (error) {
            return error;
        }
        if (!fdp__ofp_pull(&r, 2)) {
            return FDP_OFPBRC_BAD_LEN;
        }
        break;
    case FDP_OFPRAW_NXT_PACKET_IN: {
        p = fdp__ofp_pull(&r, 24);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;
        }
        pin->buffer_id = fdp__ofp_get_be32(p);
        pin->total_len = fdp__ofp_get_be16(p + 4);
        pin->reason = p[6];
        pin->table_id = p[7];
        pin->cookie = fdp__ofp_get_be64(p + 8);
        size_t match_len = fdp__ofp_get_be16(p + 16);
        struct fdp__ofp_reader m;
        if (!fdp__ofp_pull_reader(&r, (match_len + 7) / 8 * 8, &m)) {
            return FDP_OFPBMC_BAD_LEN;
        }
        error = fdp__nx_match_pull(&m, match_len, tlv, pin->metadata_owned);
        if (error) {
            return error;
        }
        if (!fdp__ofp_pull(&r, 2)) {
            return FDP_OFPBRC_BAD_LEN;
        }
        break;
    }
    case FDP_OFPRAW_NXT_PACKET_IN2:
        return decode_packet_in2(&r, tlv, pin);
    default:
        return FDP_OFPBRC_BAD_VERSION;
    }
    if (oh.raw != FDP_OFPRAW_OFPT10_PACKET_IN) {
        struct fdp_value v;
        if (fdp_match_get(pin->metadata, FDP_F_IN_PORT, &v)) {
            pin->in_port = fdp_ofp_port_from_ofp10((uint16_t) v.lo);
        }
    }
    pin->packet = r.p;
    pin->packet_len = r.left;
    return 0;
}

int
fdp_ofp_decode_packet_in(const uint8_t *msg, size_t len,
                         const struct fdp_tlv_map *tlv,
                         struct fdp_ofp_packet_in *pin)
{
    memset(pin, 0, sizeof *pin);
    int error = decode_packet_in__(msg, len, tlv, pin);
    if (error) {
        fdp_ofp_packet_in_destroy(pin);
    }
    return error;
}
