/*
 * The OpenFlow messages that control a connection rather than the tables
 * (lib/ofp-msgs.h): bundle control and add-message (OpenFlow 1.4 and ONF's
 * extension for 1.3), role requests and replies (1.2+ and Nicira's),
 * asynchronous message configuration (1.3's masks, Nicira's, 1.4's
 * properties) and Nicira's one-value controls.
 *
 * Each decoder takes a whole message, checks its type through
 * fdp_ofp_decode_header() (so the fixed part is there: the table checked
 * the length) and reads what follows with the bounds-checked reader.
 */
#include <config.h>

#include "lib/ofp-msgs.h"

#include <errno.h>

/* Decodes 'msg' as one of the types 'a' or 'b' (b may be NONE). */
static int
decode_body2(const uint8_t *msg, size_t len, enum fdp_ofptype a,
             enum fdp_ofptype b, struct fdp_ofp_header *oh,
             struct fdp__ofp_reader *r)
{
    int error = fdp_ofp_decode_header(msg, len, oh);
    if (error) {
        return error;
    }
    if (oh->type != a && oh->type != b) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    fdp__ofp_reader_init(r, msg + oh->hdr_len, len - oh->hdr_len);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Bundles.                                                                */

int
fdp_ofp_decode_bundle_ctrl(const uint8_t *msg, size_t len,
                           struct fdp_ofp_bundle_ctrl *bc)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body2(msg, len, FDP_OFPTYPE_BUNDLE_CONTROL,
                             FDP_OFPTYPE_NONE, &oh, &r);
    if (error) {
        return error;
    }
    bc->bundle_id = fdp__ofp_get_be32(r.p);
    bc->type = fdp__ofp_get_be16(r.p + 4);
    bc->flags = fdp__ofp_get_be16(r.p + 6);
    return 0;
}

int
fdp_ofp_encode_bundle_ctrl(struct fdp__ofpbuf *b,
                           const struct fdp_ofp_header *request,
                           const struct fdp_ofp_bundle_ctrl *bc)
{
    if (fdp_ofpraw_type(request->raw) != FDP_OFPTYPE_BUNDLE_CONTROL
        || !fdp_ofpraw_in_version(request->raw, request->version)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, request->raw, request->version,
                                 request->xid);
    fdp__ofpbuf_put_be32(b, bc->bundle_id);
    fdp__ofpbuf_put_be16(b, bc->type);
    fdp__ofpbuf_put_be16(b, bc->flags);
    return fdp_ofp_finish(b, start);
}

/* What a bundle may hold (Open vSwitch's ofputil_is_bundlable()). */
static bool
is_bundlable(enum fdp_ofptype type)
{
    return (type == FDP_OFPTYPE_FLOW_MOD || type == FDP_OFPTYPE_GROUP_MOD
            || type == FDP_OFPTYPE_PORT_MOD
            || type == FDP_OFPTYPE_PACKET_OUT);
}

int
fdp_ofp_decode_bundle_add(const uint8_t *msg, size_t len,
                          struct fdp_ofp_bundle_add *ba)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    memset(ba, 0, sizeof *ba);
    int error = decode_body2(msg, len, FDP_OFPTYPE_BUNDLE_ADD_MESSAGE,
                             FDP_OFPTYPE_NONE, &oh, &r);
    if (error) {
        return error;
    }
    const uint8_t *p = fdp__ofp_pull(&r, 8);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    ba->bundle_id = fdp__ofp_get_be32(p);
    ba->flags = fdp__ofp_get_be16(p + 6);
    if (r.left < FDP_OFP_HEADER_LEN) {
        return FDP_OFPBFC_MSG_BAD_LEN;
    }
    const uint8_t *inner = r.p;
    if (inner[0] != oh.version) {
        return FDP_OFPBFC_BAD_VERSION;
    }
    size_t inner_len = fdp__ofp_get_be16(inner + 2);
    if (inner_len < FDP_OFP_HEADER_LEN || inner_len > r.left) {
        return FDP_OFPBFC_MSG_BAD_LEN;
    }
    if (fdp__ofp_get_be32(inner + 4) != oh.xid) {
        return FDP_OFPBFC_MSG_BAD_XID;
    }
    enum fdp_ofptype type;
    if (fdp_ofp_decode_type(inner, inner_len, &type)
        || !is_bundlable(type)) {
        return FDP_OFPBFC_MSG_UNSUP;
    }
    ba->inner_type = type;
    ba->inner = inner;
    ba->inner_len = inner_len;
    return 0;
}

int
fdp_ofp_encode_bundle_add(struct fdp__ofpbuf *b, enum fdp_ofpraw raw,
                          uint8_t version, uint32_t xid,
                          const struct fdp_ofp_bundle_add *ba)
{
    if (fdp_ofpraw_type(raw) != FDP_OFPTYPE_BUNDLE_ADD_MESSAGE
        || !fdp_ofpraw_in_version(raw, version)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    fdp__ofpbuf_put_be32(b, ba->bundle_id);
    fdp__ofpbuf_put_zeros(b, 2);
    fdp__ofpbuf_put_be16(b, ba->flags);
    /* No padding after the inner message: Open vSwitch adds none when no
     * property follows. */
    fdp__ofpbuf_put(b, ba->inner, ba->inner_len);
    return fdp_ofp_finish(b, start);
}

/* ---------------------------------------------------------------------- */
/* Roles.                                                                  */

/* NXT_ROLE_REQUEST's roles. */
enum { NX_ROLE_OTHER = 0, NX_ROLE_MASTER = 1, NX_ROLE_SLAVE = 2 };

int
fdp_ofp_decode_role_request(const uint8_t *msg, size_t len,
                            struct fdp_ofp_role_request *rr)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    memset(rr, 0, sizeof *rr);
    int error = decode_body2(msg, len, FDP_OFPTYPE_ROLE_REQUEST,
                             FDP_OFPTYPE_ROLE_REPLY, &oh, &r);
    if (error) {
        return error;
    }
    uint32_t role = fdp__ofp_get_be32(r.p);
    if (oh.raw == FDP_OFPRAW_NXT_ROLE_REQUEST
        || oh.raw == FDP_OFPRAW_NXT_ROLE_REPLY) {
        if (role > NX_ROLE_SLAVE) {
            return FDP_OFPRRFC_BAD_ROLE;
        }
        rr->role = (role == NX_ROLE_MASTER ? FDP_OFPCR_ROLE_MASTER
                    : role == NX_ROLE_SLAVE ? FDP_OFPCR_ROLE_SLAVE
                    : FDP_OFPCR_ROLE_EQUAL);
        return 0;
    }
    if (role > FDP_OFPCR_ROLE_SLAVE) {
        return FDP_OFPRRFC_BAD_ROLE;
    }
    rr->role = role;
    rr->have_generation_id = (role == FDP_OFPCR_ROLE_MASTER
                              || role == FDP_OFPCR_ROLE_SLAVE);
    /* Kept whatever the role, so that a request encodes back as it came. */
    rr->generation_id = fdp__ofp_get_be64(r.p + 8);
    return 0;
}

/* A reply without a generation id says all-ones, as Open vSwitch's; a
 * request says what 'rr' holds. */
static int
encode_role(struct fdp__ofpbuf *b, enum fdp_ofpraw raw, uint8_t version,
            uint32_t xid, const struct fdp_ofp_role_request *rr)
{
    bool reply = fdp_ofpraw_type(raw) == FDP_OFPTYPE_ROLE_REPLY;
    size_t start = fdp_ofp_start(b, raw, version, xid);
    if (raw == FDP_OFPRAW_NXT_ROLE_REQUEST
        || raw == FDP_OFPRAW_NXT_ROLE_REPLY) {
        fdp__ofpbuf_put_be32(b, (rr->role == FDP_OFPCR_ROLE_MASTER
                                 ? NX_ROLE_MASTER
                                 : rr->role == FDP_OFPCR_ROLE_SLAVE
                                 ? NX_ROLE_SLAVE : NX_ROLE_OTHER));
    } else {
        fdp__ofpbuf_put_be32(b, rr->role);
        fdp__ofpbuf_put_zeros(b, 4);
        fdp__ofpbuf_put_be64(b, (rr->have_generation_id || !reply
                                 ? rr->generation_id : UINT64_MAX));
    }
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_encode_role_reply(struct fdp__ofpbuf *b,
                          const struct fdp_ofp_header *request,
                          const struct fdp_ofp_role_request *rr)
{
    enum fdp_ofpraw raw = (request->raw == FDP_OFPRAW_NXT_ROLE_REQUEST
                           ? FDP_OFPRAW_NXT_ROLE_REPLY
                           : request->raw == FDP_OFPRAW_OFPT12_ROLE_REQUEST
                           ? FDP_OFPRAW_OFPT12_ROLE_REPLY
                           : FDP_OFPRAW_NONE);
    if (!fdp_ofpraw_in_version(raw, request->version)) {
        return EINVAL;
    }
    return encode_role(b, raw, request->version, request->xid, rr);
}

int
fdp_ofp_encode_role_request(struct fdp__ofpbuf *b, enum fdp_ofpraw raw,
                            uint8_t version, uint32_t xid,
                            const struct fdp_ofp_role_request *rr)
{
    if (fdp_ofpraw_type(raw) != FDP_OFPTYPE_ROLE_REQUEST
        || !fdp_ofpraw_in_version(raw, version)) {
        return EINVAL;
    }
    return encode_role(b, raw, version, xid, rr);
}

/* ---------------------------------------------------------------------- */
/* Asynchronous configuration.                                             */

/* 1.4's property types: 2 * kind for slave, 2 * kind + 1 for master
 * (OFPACPT_PACKET_IN_SLAVE 0, OFPACPT_PACKET_IN_MASTER 1, ...). */
#define ASYNC_PROP_LEN 8

/* The reasons each kind has (Open vSwitch's async_props table): packet-in
 * reasons no_match, action, invalid_ttl (1.0-1.3) and action_set, group,
 * packet_out (1.4+); port status add, delete, modify; flow removed idle,
 * hard, delete, group_delete, meter_delete, eviction; role status
 * master_request, config, experimenter; table status vacancy down and up
 * (bits 3, 4); requestforward group_mod, meter_mod. */
static uint32_t
async_allowed(int kind, uint8_t version)
{
    static const uint32_t allowed[FDP_OAK_N] = {
        [FDP_OAK_PACKET_IN] = 0x3f,
        [FDP_OAK_PORT_STATUS] = 0x7,
        [FDP_OAK_FLOW_REMOVED] = 0x3f,
        [FDP_OAK_ROLE_STATUS] = 0x7,
        [FDP_OAK_TABLE_STATUS] = 0x18,
        [FDP_OAK_REQUESTFORWARD] = 0x3,
    };
    if (kind == FDP_OAK_PACKET_IN && version < FDP_OFP14) {
        return 0x7;
    }
    return allowed[kind];
}

int
fdp_ofp_decode_set_async(const uint8_t *msg, size_t len,
                         struct fdp_ofp_async_config *cfg)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body2(msg, len, FDP_OFPTYPE_SET_ASYNC_CONFIG,
                             FDP_OFPTYPE_GET_ASYNC_REPLY, &oh, &r);
    if (error) {
        return error;
    }
    if (oh.raw == FDP_OFPRAW_OFPT13_SET_ASYNC
        || oh.raw == FDP_OFPRAW_NXT_SET_ASYNC_CONFIG
        || oh.raw == FDP_OFPRAW_OFPT13_GET_ASYNC_REPLY) {
        memset(cfg, 0, sizeof *cfg);
        for (int kind = 0; kind < 3; kind++) {
            cfg->master[kind] = fdp__ofp_get_be32(r.p + 8 * kind);
            cfg->slave[kind] = fdp__ofp_get_be32(r.p + 8 * kind + 4);
        }
        return 0;
    }
    struct fdp_ofp_async_config new = *cfg;
    while (r.left) {
        if (r.left < 4) {
            return FDP_OFPBRC_BAD_LEN;
        }
        uint16_t type = fdp__ofp_get_be16(r.p);
        size_t plen = fdp__ofp_get_be16(r.p + 2);
        struct fdp__ofp_reader prop;
        if (plen < 4
            || !fdp__ofp_pull_reader(&r, (plen + 7) / 8 * 8, &prop)) {
            return FDP_OFPTFFC_BAD_LEN;
        }
        if (type >= 2 * FDP_OAK_N) {
            return FDP_OFPACFC_UNSUPPORTED;
        }
        if (plen != ASYNC_PROP_LEN) {
            /* Open vSwitch's OFPBPC_BAD_LEN, whose codes this has. */
            return FDP_OFPTFFC_BAD_LEN;
        }
        uint32_t mask = fdp__ofp_get_be32(prop.p + 4);
        if (mask & ~async_allowed(type / 2, oh.version)) {
            return FDP_OFPACFC_INVALID;
        }
        if (type % 2) {
            new.master[type / 2] = mask;
        } else {
            new.slave[type / 2] = mask;
        }
    }
    *cfg = new;
    return 0;
}

static void
put_async(struct fdp__ofpbuf *b, const struct fdp_ofp_async_config *cfg,
          bool props)
{
    if (!props) {
        for (int kind = 0; kind < 3; kind++) {
            fdp__ofpbuf_put_be32(b, cfg->master[kind]);
            fdp__ofpbuf_put_be32(b, cfg->slave[kind]);
        }
        return;
    }
    for (int kind = 0; kind < FDP_OAK_N; kind++) {
        fdp__ofpbuf_put_be16(b, (uint16_t) (2 * kind));
        fdp__ofpbuf_put_be16(b, ASYNC_PROP_LEN);
        fdp__ofpbuf_put_be32(b, cfg->slave[kind]);
        fdp__ofpbuf_put_be16(b, (uint16_t) (2 * kind + 1));
        fdp__ofpbuf_put_be16(b, ASYNC_PROP_LEN);
        fdp__ofpbuf_put_be32(b, cfg->master[kind]);
    }
}

int
fdp_ofp_encode_get_async_reply(struct fdp__ofpbuf *b,
                               const struct fdp_ofp_header *request,
                               const struct fdp_ofp_async_config *cfg)
{
    enum fdp_ofpraw raw = (request->version < FDP_OFP14
                           ? FDP_OFPRAW_OFPT13_GET_ASYNC_REPLY
                           : FDP_OFPRAW_OFPT14_GET_ASYNC_REPLY);
    if (!fdp_ofpraw_in_version(raw, request->version)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, request->version, request->xid);
    put_async(b, cfg, raw == FDP_OFPRAW_OFPT14_GET_ASYNC_REPLY);
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_encode_set_async(struct fdp__ofpbuf *b, enum fdp_ofpraw raw,
                         uint8_t version, uint32_t xid,
                         const struct fdp_ofp_async_config *cfg)
{
    if (fdp_ofpraw_type(raw) != FDP_OFPTYPE_SET_ASYNC_CONFIG
        || !fdp_ofpraw_in_version(raw, version)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    put_async(b, cfg, (raw == FDP_OFPRAW_OFPT14_SET_ASYNC
                       || raw == FDP_OFPRAW_NXT_SET_ASYNC_CONFIG2));
    return fdp_ofp_finish(b, start);
}

/* ---------------------------------------------------------------------- */
/* Nicira's controls.                                                      */

int
fdp_ofp_decode_nx_u32(const uint8_t *msg, size_t len, uint32_t *value)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body2(msg, len, FDP_OFPTYPE_SET_FLOW_FORMAT,
                             FDP_OFPTYPE_SET_PACKET_IN_FORMAT, &oh, &r);
    if (error) {
        return error;
    }
    *value = fdp__ofp_get_be32(r.p);
    if (oh.type == FDP_OFPTYPE_SET_FLOW_FORMAT) {
        return (*value == FDP_NXFF_OPENFLOW10 || *value == FDP_NXFF_NXM
                ? 0 : FDP_OFPBRC_EPERM);
    }
    return *value <= FDP_NXPIF_NXT_PACKET_IN2 ? 0 : FDP_OFPBRC_EPERM;
}

int
fdp_ofp_decode_flow_mod_table_id(const uint8_t *msg, size_t len,
                                 bool *enable)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body2(msg, len, FDP_OFPTYPE_FLOW_MOD_TABLE_ID,
                             FDP_OFPTYPE_NONE, &oh, &r);
    if (!error) {
        *enable = r.p[0] != 0;
    }
    return error;
}

int
fdp_ofp_decode_controller_id(const uint8_t *msg, size_t len, uint16_t *id)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body2(msg, len, FDP_OFPTYPE_SET_CONTROLLER_ID,
                             FDP_OFPTYPE_NONE, &oh, &r);
    if (!error) {
        *id = fdp__ofp_get_be16(r.p + 6);
    }
    return error;
}

int
fdp_ofp_decode_ct_flush_zone(const uint8_t *msg, size_t len, uint16_t *zone)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body2(msg, len, FDP_OFPTYPE_CT_FLUSH_ZONE,
                             FDP_OFPTYPE_NONE, &oh, &r);
    if (!error) {
        *zone = fdp__ofp_get_be16(r.p + 6);
    }
    return error;
}

int
fdp_ofp_decode_flow_monitor_cancel(const uint8_t *msg, size_t len,
                                   uint32_t *id)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body2(msg, len, FDP_OFPTYPE_FLOW_MONITOR_CANCEL,
                             FDP_OFPTYPE_NONE, &oh, &r);
    if (!error) {
        *id = fdp__ofp_get_be32(r.p);
    }
    return error;
}

int
fdp_ofp_encode_nx_value(struct fdp__ofpbuf *b, enum fdp_ofpraw raw,
                        uint8_t version, uint32_t xid, uint32_t value)
{
    if (!fdp_ofpraw_in_version(raw, version)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    switch (raw) {
    case FDP_OFPRAW_NXT_SET_FLOW_FORMAT:
    case FDP_OFPRAW_NXT_SET_PACKET_IN_FORMAT:
    case FDP_OFPRAW_NXT_FLOW_MONITOR_CANCEL:
    case FDP_OFPRAW_ONFT13_FLOW_MONITOR_CANCEL:
        fdp__ofpbuf_put_be32(b, value);
        break;
    case FDP_OFPRAW_NXT_FLOW_MOD_TABLE_ID:
        fdp__ofpbuf_put_u8(b, value != 0);
        fdp__ofpbuf_put_zeros(b, 7);
        break;
    case FDP_OFPRAW_NXT_SET_CONTROLLER_ID:
    case FDP_OFPRAW_NXT_CT_FLUSH_ZONE:
        fdp__ofpbuf_put_zeros(b, 6);
        fdp__ofpbuf_put_be16(b, (uint16_t) value);
        break;
    default:
        b->size = start;
        return EINVAL;
    }
    return fdp_ofp_finish(b, start);
}
