/*
 * The OpenFlow message layer: the message table, headers, errors, and the
 * messages that carry no match or action (lib/ofp-msgs.h has the theory of
 * operation; flow mods and the other messages with matches live in
 * lib/ofp-flow.c).
 *
 * Layout of the headers this file reads and writes (all big-endian):
 *   ofp_header (8):          version, type, length, xid
 *   vendor header (16):      ofp_header, vendor, subtype
 *   1.0 multipart (12):      ofp_header, type, flags
 *   1.1+ multipart (16):     ofp_header, type, flags, 4 bytes of padding
 *   1.0 NX multipart (24):   1.0 multipart, vendor, subtype, 4 bytes pad
 *   1.1+ vendor mp (24):     1.1+ multipart, vendor, subtype
 * A multipart message's type is OFPST_VENDOR (0xffff) for the vendor forms.
 */
#include <config.h>

#include "lib/ofp-msgs.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>

/* OpenFlow header types that frame other messages. */
enum {
    OFPT_VENDOR = 4,
    OFPT10_STATS_REQUEST = 16,
    OFPT10_STATS_REPLY = 17,
    OFPT11_STATS_REQUEST = 18,
    OFPT11_STATS_REPLY = 19,
    OFPST_VENDOR = 0xffff,
};

/* Error types that carry an extension's error. */
enum {
    NXET_VENDOR = 0xb0c2,       /* 1.0 and 1.1: code NXVC_VENDOR_ERROR (0),
                                 * then vendor, type, code. */
    OFPET12_EXPERIMENTER = 0xffff,  /* 1.2+: code = the extension's type,
                                     * then the experimenter id. */
};

/* What an error's copy of the request holds: OpenFlow says at least 64
 * bytes; Open vSwitch's ofperr_encode_reply() echoes the whole request,
 * and so does this, as far as a message's 16-bit length allows (the
 * error's own header, and the experimenter fields of 1.0's vendor
 * errors, take 16 bytes at most). */
#define ERROR_DATA_MAX (65535 - 16)

/* ---------------------------------------------------------------------- */
/* The table.                                                              */

struct raw_info {
    const char *name;
    enum fdp_ofptype type;
    enum fdp__ofpk kind;
    uint8_t min_version, max_version;
    uint16_t number;
    uint16_t min_body;
    uint16_t extra;
};

static const struct raw_info raw_infos[FDP__OFPRAW_N] = {
#define FDP__OFPRAW_ROW(NAME, TYPE, KIND, VMIN, VMAX, NUM, MIN, EXTRA)      \
    [FDP_OFPRAW_##NAME] = { #NAME, FDP_OFPTYPE_##TYPE, FDP__OFPK_##KIND,    \
                            VMIN, VMAX, NUM, MIN, EXTRA },
    FDP_OFPRAWS(FDP__OFPRAW_ROW)
#undef FDP__OFPRAW_ROW
};

static const char *const type_names[FDP__OFPTYPE_N] = {
    [FDP_OFPTYPE_NONE] = "NONE",
#define FDP__OFPTYPE_NAME(NAME) [FDP_OFPTYPE_##NAME] = #NAME,
    FDP_OFPTYPES(FDP__OFPTYPE_NAME)
#undef FDP__OFPTYPE_NAME
};

const char *
fdp_ofpraw_name(enum fdp_ofpraw raw)
{
    return raw > FDP_OFPRAW_NONE && raw < FDP__OFPRAW_N
           ? raw_infos[raw].name : "?";
}

const char *
fdp_ofptype_name(enum fdp_ofptype type)
{
    return type < FDP__OFPTYPE_N ? type_names[type] : "?";
}

enum fdp_ofptype
fdp_ofpraw_type(enum fdp_ofpraw raw)
{
    return raw > FDP_OFPRAW_NONE && raw < FDP__OFPRAW_N
           ? raw_infos[raw].type : FDP_OFPTYPE_NONE;
}

bool
fdp_ofpraw_in_version(enum fdp_ofpraw raw, uint8_t version)
{
    if (raw <= FDP_OFPRAW_NONE || raw >= FDP__OFPRAW_N) {
        return false;
    }
    const struct raw_info *info = &raw_infos[raw];
    return version >= info->min_version && version <= info->max_version;
}

static bool
kind_is_vendor(enum fdp__ofpk kind)
{
    return kind == FDP__OFPK_NXT || kind == FDP__OFPK_ONFT
           || kind == FDP__OFPK_NXST_REQ || kind == FDP__OFPK_NXST_REP
           || kind == FDP__OFPK_ONFST_REQ || kind == FDP__OFPK_ONFST_REP;
}

static bool
kind_is_stats(enum fdp__ofpk kind)
{
    return kind == FDP__OFPK_OFPST_REQ || kind == FDP__OFPK_OFPST_REP
           || kind == FDP__OFPK_NXST_REQ || kind == FDP__OFPK_NXST_REP
           || kind == FDP__OFPK_ONFST_REQ || kind == FDP__OFPK_ONFST_REP;
}

static bool
kind_is_request(enum fdp__ofpk kind)
{
    return kind == FDP__OFPK_OFPST_REQ || kind == FDP__OFPK_NXST_REQ
           || kind == FDP__OFPK_ONFST_REQ;
}

static uint32_t
kind_vendor(enum fdp__ofpk kind)
{
    switch (kind) {
    case FDP__OFPK_NXT:
    case FDP__OFPK_NXST_REQ:
    case FDP__OFPK_NXST_REP:
        return FDP_OFP_VENDOR_NX;
    case FDP__OFPK_ONFT:
    case FDP__OFPK_ONFST_REQ:
    case FDP__OFPK_ONFST_REP:
        return FDP_OFP_VENDOR_ONF;
    case FDP__OFPK_OFPT:
    case FDP__OFPK_OFPST_REQ:
    case FDP__OFPK_OFPST_REP:
        break;
    }
    return 0;
}

/* The header type byte of a multipart message in 'version'. */
static uint8_t
stats_type(uint8_t version, bool request)
{
    if (version == FDP_OFP10) {
        return request ? OFPT10_STATS_REQUEST : OFPT10_STATS_REPLY;
    }
    return request ? OFPT11_STATS_REQUEST : OFPT11_STATS_REPLY;
}

/* The bytes of headers a row has in 'version'. */
static size_t
raw_hdr_len(const struct raw_info *info, uint8_t version)
{
    if (!kind_is_stats(info->kind)) {
        return kind_is_vendor(info->kind) ? 16 : FDP_OFP_HEADER_LEN;
    }
    if (kind_is_vendor(info->kind)) {
        return 24;
    }
    return version == FDP_OFP10 ? 12 : 16;
}

/* The key a message's headers give, before the table is searched. */
struct hdrs {
    uint8_t version;
    uint8_t type;
    bool stats;                 /* A multipart request or reply. */
    bool request;               /* ... a request. */
    uint16_t stat;              /* Its multipart type. */
    uint32_t vendor, subtype;
    uint16_t mp_flags;
    size_t hdr_len;
};

/* Reads the headers of 'msg' (of 'len' readable bytes). */
static int
hdrs_decode(const uint8_t *msg, size_t len, struct hdrs *h)
{
    memset(h, 0, sizeof *h);
    if (len < FDP_OFP_HEADER_LEN) {
        return FDP_OFPBRC_BAD_LEN;
    }
    h->version = msg[0];
    h->type = msg[1];
    h->hdr_len = FDP_OFP_HEADER_LEN;

    if (h->type == OFPT_VENDOR) {
        if (len < 16) {
            return FDP_OFPBRC_BAD_LEN;
        }
        h->vendor = fdp__ofp_get_be32(msg + 8);
        if (h->vendor != FDP_OFP_VENDOR_NX
            && h->vendor != FDP_OFP_VENDOR_ONF) {
            return FDP_OFPBRC_BAD_VENDOR;
        }
        h->subtype = fdp__ofp_get_be32(msg + 12);
        h->hdr_len = 16;
        return 0;
    }

    bool v10 = h->version == FDP_OFP10;
    if (v10 ? h->type == OFPT10_STATS_REQUEST || h->type == OFPT10_STATS_REPLY
        : h->type == OFPT11_STATS_REQUEST || h->type == OFPT11_STATS_REPLY) {
        size_t mp_len = v10 ? 12 : 16;
        if (len < mp_len) {
            return FDP_OFPBRC_BAD_LEN;
        }
        h->stats = true;
        h->request = h->type == (v10 ? OFPT10_STATS_REQUEST
                                 : OFPT11_STATS_REQUEST);
        h->stat = fdp__ofp_get_be16(msg + 8);
        h->mp_flags = fdp__ofp_get_be16(msg + 10);
        h->hdr_len = mp_len;
        if (h->stat == OFPST_VENDOR) {
            if (len < mp_len + 4) {
                return FDP_OFPBRC_BAD_LEN;
            }
            h->vendor = fdp__ofp_get_be32(msg + mp_len);
            /* OpenFlow 1.0 has only Nicira's multipart extensions. */
            if (h->vendor != FDP_OFP_VENDOR_NX
                && (v10 || h->vendor != FDP_OFP_VENDOR_ONF)) {
                return FDP_OFPBRC_BAD_VENDOR;
            }
            if (len < 24) {
                return FDP_OFPBRC_BAD_LEN;
            }
            h->subtype = fdp__ofp_get_be32(msg + mp_len + 4);
            h->hdr_len = 24;
        }
    }
    return 0;
}

/* True if row 'info' describes 'h'. */
static bool
raw_matches(const struct raw_info *info, const struct hdrs *h)
{
    if (h->version < info->min_version || h->version > info->max_version) {
        return false;
    }
    if (h->stats) {
        return (kind_is_stats(info->kind)
                && kind_is_request(info->kind) == h->request
                && (h->stat == OFPST_VENDOR
                    ? (kind_vendor(info->kind) == h->vendor
                       && info->number == h->subtype)
                    : (!kind_is_vendor(info->kind)
                       && info->number == h->stat)));
    } else if (h->vendor) {
        return (!kind_is_stats(info->kind)
                && kind_vendor(info->kind) == h->vendor
                && info->number == h->subtype);
    } else {
        return info->kind == FDP__OFPK_OFPT && info->number == h->type;
    }
}

/* Finds the row for 'h'. */
static int
hdrs_to_raw(const struct hdrs *h, enum fdp_ofpraw *rawp)
{
    /* The raw found last, tried first: a stream of messages is mostly of
     * a few kinds (a bundle's flow mods), and the table has some 165
     * rows to scan.  At most one row matches, so the answer is the
     * scan's. */
    static _Thread_local int last = FDP_OFPRAW_NONE;

    if (last != FDP_OFPRAW_NONE && raw_matches(&raw_infos[last], h)) {
        *rawp = (enum fdp_ofpraw) last;
        return 0;
    }
    for (int raw = FDP_OFPRAW_NONE + 1; raw < FDP__OFPRAW_N; raw++) {
        if (raw_matches(&raw_infos[raw], h)) {
            *rawp = raw;
            last = raw;
            return 0;
        }
    }
    *rawp = FDP_OFPRAW_NONE;
    bool known_version = h->version >= FDP_OFP10 && h->version <= FDP_OFP15;
    return (h->vendor ? FDP_OFPBRC_BAD_SUBTYPE
            : h->stats && known_version ? FDP_OFPBRC_BAD_STAT
            : FDP_OFPBRC_BAD_TYPE);
}

static int
check_length(const struct raw_info *info, size_t hdr_len, size_t len)
{
    size_t min_len = hdr_len + info->min_body;
    switch (info->extra) {
    case FDP__OFPX_EXACT:
        return len == min_len ? 0 : FDP_OFPBRC_BAD_LEN;
    case FDP__OFPX_ANY:
        return len >= min_len ? 0 : FDP_OFPBRC_BAD_LEN;
    default:
        return (len >= min_len && (len - min_len) % info->extra == 0
                ? 0 : FDP_OFPBRC_BAD_LEN);
    }
}

/* ---------------------------------------------------------------------- */
/* Framing and classifying.                                                */

int
fdp_ofp_frame(const uint8_t *p, size_t avail, size_t *msg_len)
{
    if (avail < FDP_OFP_HEADER_LEN) {
        return EAGAIN;
    }
    size_t n = fdp__ofp_get_be16(p + 2);
    if (n < FDP_OFP_HEADER_LEN) {
        return FDP_OFPBRC_BAD_LEN;
    }
    *msg_len = n;
    return 0;
}

static int
decode_header(const uint8_t *msg, size_t len, bool partial,
              struct fdp_ofp_header *oh)
{
    memset(oh, 0, sizeof *oh);
    if (len >= FDP_OFP_HEADER_LEN) {
        oh->version = msg[0];
        oh->length = fdp__ofp_get_be16(msg + 2);
        oh->xid = fdp__ofp_get_be32(msg + 4);
    }
    if (!partial) {
        if (len < FDP_OFP_HEADER_LEN || oh->length != len) {
            return FDP_OFPBRC_BAD_LEN;
        }
    } else if (len > oh->length) {
        len = oh->length;
    }

    struct hdrs h;
    int error = hdrs_decode(msg, len, &h);
    if (error) {
        return error;
    }
    enum fdp_ofpraw raw;
    error = hdrs_to_raw(&h, &raw);
    if (error) {
        return error;
    }
    const struct raw_info *info = &raw_infos[raw];
    if (!partial) {
        error = check_length(info, h.hdr_len, len);
        if (error) {
            return error;
        }
    }
    oh->raw = raw;
    oh->type = info->type;
    oh->hdr_len = (uint16_t) h.hdr_len;
    oh->mp_flags = h.mp_flags;
    oh->vendor = h.vendor;
    oh->subtype = h.subtype;
    return 0;
}

int
fdp_ofp_decode_header(const uint8_t *msg, size_t len,
                      struct fdp_ofp_header *oh)
{
    return decode_header(msg, len, false, oh);
}

int
fdp_ofp_decode_header_partial(const uint8_t *msg, size_t len,
                              struct fdp_ofp_header *oh)
{
    return decode_header(msg, len, true, oh);
}

int
fdp_ofp_decode_type(const uint8_t *msg, size_t len, enum fdp_ofptype *type)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    *type = error ? FDP_OFPTYPE_NONE : oh.type;
    return error;
}

/* ---------------------------------------------------------------------- */
/* Encoding headers.                                                       */

enum fdp_ofpraw
fdp_ofpraw_for(enum fdp_ofptype type, uint8_t version)
{
    enum fdp_ofpraw ext = FDP_OFPRAW_NONE;
    for (int raw = FDP_OFPRAW_NONE + 1; raw < FDP__OFPRAW_N; raw++) {
        const struct raw_info *info = &raw_infos[raw];
        if (info->type == type && version >= info->min_version
            && version <= info->max_version) {
            if (!kind_is_vendor(info->kind)) {
                return raw;
            }
            if (!ext) {
                ext = raw;
            }
        }
    }
    return ext;
}

enum fdp_ofpraw
fdp_ofpraw_stats_reply(enum fdp_ofpraw request, uint8_t version)
{
    if (!fdp_ofpraw_in_version(request, version)) {
        return FDP_OFPRAW_NONE;
    }
    const struct raw_info *rq = &raw_infos[request];
    if (!kind_is_stats(rq->kind) || !kind_is_request(rq->kind)) {
        return FDP_OFPRAW_NONE;
    }
    /* The reply is the row with the request's number, vendor and kind of
     * header, the other direction. */
    for (int raw = FDP_OFPRAW_NONE + 1; raw < FDP__OFPRAW_N; raw++) {
        const struct raw_info *info = &raw_infos[raw];
        if (kind_is_stats(info->kind) && !kind_is_request(info->kind)
            && kind_vendor(info->kind) == kind_vendor(rq->kind)
            && info->number == rq->number
            && version >= info->min_version
            && version <= info->max_version) {
            return raw;
        }
    }
    return FDP_OFPRAW_NONE;
}

size_t
fdp_ofp_start(struct fdp__ofpbuf *b, enum fdp_ofpraw raw, uint8_t version,
              uint32_t xid)
{
    assert(fdp_ofpraw_in_version(raw, version));
    const struct raw_info *info = &raw_infos[raw];
    size_t start = b->size;
    size_t hdr_len = raw_hdr_len(info, version);
    uint8_t *p = fdp__ofpbuf_put_zeros(b, hdr_len);
    if (!p) {
        return start;
    }

    p[0] = version;
    fdp__ofp_set_be32(p + 4, xid);
    if (kind_is_stats(info->kind)) {
        p[1] = stats_type(version, kind_is_request(info->kind));
        if (kind_is_vendor(info->kind)) {
            size_t mp_len = version == FDP_OFP10 ? 12 : 16;
            fdp__ofp_set_be16(p + 8, OFPST_VENDOR);
            fdp__ofp_set_be32(p + mp_len, kind_vendor(info->kind));
            fdp__ofp_set_be32(p + mp_len + 4, info->number);
        } else {
            fdp__ofp_set_be16(p + 8, info->number);
        }
    } else if (kind_is_vendor(info->kind)) {
        p[1] = OFPT_VENDOR;
        fdp__ofp_set_be32(p + 8, kind_vendor(info->kind));
        fdp__ofp_set_be32(p + 12, info->number);
    } else {
        p[1] = (uint8_t) info->number;
    }
    fdp__ofp_set_be16(p + 2, (uint16_t) hdr_len);
    return start;
}

int
fdp_ofp_finish(struct fdp__ofpbuf *b, size_t start)
{
    if (fdp__ofpbuf_failed(b)) {
        return ENOMEM;
    }
    size_t len = b->size - start;
    if (len > FDP_OFP_MAX_LEN) {
        return EMSGSIZE;
    }
    fdp__ofp_set_be16(b->data + start + 2, (uint16_t) len);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Multipart replies.                                                      */

void
fdp_ofpmp_init(struct fdp_ofpmp *mp, struct fdp__ofpbuf *b,
               const struct fdp_ofp_header *request)
{
    enum fdp_ofpraw raw = fdp_ofpraw_stats_reply(request->raw,
                                                 request->version);
    assert(raw != FDP_OFPRAW_NONE);
    mp->b = b;
    mp->error = 0;
    mp->start = fdp_ofp_start(b, raw, request->version, request->xid);
    mp->hdr_len = raw_hdr_len(&raw_infos[raw], request->version);
}

size_t
fdp_ofpmp_entry_start(const struct fdp_ofpmp *mp)
{
    return mp->b->size;
}

void
fdp_ofpmp_entry_end(struct fdp_ofpmp *mp, size_t entry_start)
{
    struct fdp__ofpbuf *b = mp->b;
    if (fdp__ofpbuf_failed(b) || b->size - mp->start <= FDP_OFP_MAX_LEN) {
        return;
    }
    size_t entry_len = b->size - entry_start;
    if (mp->hdr_len + entry_len > FDP_OFP_MAX_LEN) {
        /* No reply can hold it: drop it and say so at the end. */
        b->size = entry_start;
        if (!mp->error) {
            mp->error = EMSGSIZE;
        }
        return;
    }

    /* Close the current reply before the entry, with "more", and move the
     * entry behind a copy of its headers. */
    uint8_t *entry = malloc(entry_len);
    if (!entry) {
        b->failed = true;
        return;
    }
    memcpy(entry, b->data + entry_start, entry_len);
    b->size = entry_start;
    fdp_ofp_finish(b, mp->start);
    uint8_t *flags = b->data + mp->start + 10;
    fdp__ofp_set_be16(flags, fdp__ofp_get_be16(flags) | FDP_OFPMPF_MORE);

    size_t next = b->size;
    if (fdp__ofpbuf_reserve(b, mp->hdr_len + entry_len)) {
        memcpy(b->data + next, b->data + mp->start, mp->hdr_len);
        b->size += mp->hdr_len;
        uint8_t *nflags = b->data + next + 10;
        fdp__ofp_set_be16(nflags, fdp__ofp_get_be16(nflags)
                          & ~FDP_OFPMPF_MORE);
        fdp__ofpbuf_put(b, entry, entry_len);
        mp->start = next;
    }
    free(entry);
}

int
fdp_ofpmp_finish(struct fdp_ofpmp *mp)
{
    int error = fdp_ofp_finish(mp->b, mp->start);
    return error ? error : mp->error;
}

bool
fdp_ofpmp_more(const struct fdp_ofp_header *h)
{
    return (h->mp_flags & FDP_OFPMPF_MORE) != 0;
}

/* ---------------------------------------------------------------------- */
/* Errors.                                                                 */

#define FDP__OFPERR_NONE 0xffffffffu

struct error_wire {
    uint32_t vendor;
    uint16_t type, code;
};

struct error_row {
    const char *name;
    struct error_wire wire[6];  /* OpenFlow 1.0 ... 1.5. */
};

static const struct error_row error_rows[] = {
#define FDP__OFPERR_WIRE(NAME, V0, T0, C0, V1, T1, C1, V2, T2, C2,          \
                         V3, T3, C3, V4, T4, C4, V5, T5, C5)                \
    [FDP_##NAME - FDP__OFPERR_BASE - 1] = {                                 \
        #NAME, { { V0, T0, C0 }, { V1, T1, C1 }, { V2, T2, C2 },            \
                 { V3, T3, C3 }, { V4, T4, C4 }, { V5, T5, C5 } } },
#include "lib/ofp-errors.inc"
#undef FDP__OFPERR_WIRE
};

/* Every error of FDP_OFPERRS has its row (tests/ofp-msgs/gen-errors.sh
 * writes one per name). */
static_assert(sizeof error_rows / sizeof error_rows[0]
              == FDP__OFPERR_END - FDP__OFPERR_BASE - 1,
              "lib/ofp-errors.inc is out of date with FDP_OFPERRS");

static const struct error_row *
error_row(enum fdp_ofperr error)
{
    if (error <= FDP__OFPERR_BASE || error >= FDP__OFPERR_END) {
        return NULL;
    }
    return &error_rows[error - FDP__OFPERR_BASE - 1];
}

const char *
fdp_ofperr_name(enum fdp_ofperr error)
{
    const struct error_row *row = error_row(error);
    return row ? row->name : "<unknown error>";
}

int
fdp_ofperr_wire(enum fdp_ofperr error, uint8_t version, uint32_t *vendor,
                uint16_t *type, uint16_t *code)
{
    const struct error_row *row = error_row(error);
    if (!row || version < FDP_OFP10 || version > FDP_OFP15) {
        return EINVAL;
    }
    const struct error_wire *w = &row->wire[version - FDP_OFP10];
    if (w->vendor == FDP__OFPERR_NONE) {
        return EINVAL;
    }
    *vendor = w->vendor;
    *type = w->type;
    *code = w->code;
    return 0;
}

static int
encode_error(struct fdp__ofpbuf *b, enum fdp_ofperr error, uint8_t version,
             uint32_t xid, const void *data, size_t data_len)
{
    if (!error_row(error)) {
        return EINVAL;
    }
    if (version < FDP_OFP10 || version > FDP_OFP15) {
        /* A version flowdp does not speak: answer in 1.0, as Open vSwitch
         * does, which every peer can read. */
        version = FDP_OFP10;
    }
    uint32_t vendor;
    uint16_t type, code;
    if (fdp_ofperr_wire(error, version, &vendor, &type, &code)) {
        /* As Open vSwitch, an error the version cannot say becomes
         * NXBRC_UNENCODABLE_ERROR, whose form OFPERR_NOMEM's row holds. */
        int e = fdp_ofperr_wire(FDP_OFPERR_NOMEM, version, &vendor, &type,
                                &code);
        assert(!e);
        (void) e;
    }

    size_t start = fdp_ofp_start(b, FDP_OFPRAW_OFPT_ERROR, version, xid);
    if (!vendor) {
        fdp__ofpbuf_put_be16(b, type);
        fdp__ofpbuf_put_be16(b, code);
    } else if (version <= FDP_OFP11) {
        fdp__ofpbuf_put_be16(b, NXET_VENDOR);
        fdp__ofpbuf_put_be16(b, 0);
        fdp__ofpbuf_put_be32(b, vendor);
        fdp__ofpbuf_put_be16(b, type);
        fdp__ofpbuf_put_be16(b, code);
    } else {
        fdp__ofpbuf_put_be16(b, OFPET12_EXPERIMENTER);
        fdp__ofpbuf_put_be16(b, type);
        fdp__ofpbuf_put_be32(b, vendor);
    }
    size_t room = FDP_OFP_MAX_LEN - (b->size - start);
    fdp__ofpbuf_put(b, data, data_len < room ? data_len : room);
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_encode_error(struct fdp__ofpbuf *b, enum fdp_ofperr error,
                     const uint8_t *request, size_t len, uint8_t version)
{
    uint32_t xid = 0;
    if (!request) {
        len = 0;
    } else if (len >= FDP_OFP_HEADER_LEN) {
        xid = fdp__ofp_get_be32(request + 4);
    }
    return encode_error(b, error, version, xid, request,
                        len < ERROR_DATA_MAX ? len : ERROR_DATA_MAX);
}

int
fdp_ofp_encode_hello_error(struct fdp__ofpbuf *b, enum fdp_ofperr error,
                           uint8_t version, const char *s)
{
    return encode_error(b, error, version, 0, s, strlen(s));
}

/* The error whose form in 'version' is (vendor, type, code); 0 if none.
 * Where two errors share a form (OFPBRC_EPERM and OFPBRC_IS_SLAVE in 1.0),
 * the first in the table wins, as in Open vSwitch. */
static enum fdp_ofperr
error_from_wire(uint8_t version, uint32_t vendor, uint16_t type,
                uint16_t code)
{
    if (version < FDP_OFP10 || version > FDP_OFP15) {
        return 0;
    }
    size_t n = sizeof error_rows / sizeof error_rows[0];
    for (size_t i = 0; i < n; i++) {
        const struct error_wire *w = &error_rows[i].wire[version - 1];
        if (w->vendor == vendor && w->type == type && w->code == code) {
            return (enum fdp_ofperr) (FDP__OFPERR_BASE + 1 + i);
        }
    }
    return 0;
}

int
fdp_ofp_decode_error(const uint8_t *msg, size_t len,
                     struct fdp_ofp_error *e)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_ERROR) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    struct fdp__ofp_reader r;
    fdp__ofp_reader_init(&r, msg + oh.hdr_len, len - oh.hdr_len);
    const uint8_t *p = fdp__ofp_pull(&r, 4);
    memset(e, 0, sizeof *e);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    e->type = fdp__ofp_get_be16(p);
    e->code = fdp__ofp_get_be16(p + 2);
    if (oh.version <= FDP_OFP11 && e->type == NXET_VENDOR) {
        const uint8_t *nve = fdp__ofp_pull(&r, 8);
        if (!nve) {
            return FDP_OFPBRC_BAD_LEN;
        }
        e->vendor = fdp__ofp_get_be32(nve);
        e->type = fdp__ofp_get_be16(nve + 4);
        e->code = fdp__ofp_get_be16(nve + 6);
    } else if (oh.version >= FDP_OFP12 && e->type == OFPET12_EXPERIMENTER) {
        const uint8_t *exp = fdp__ofp_pull(&r, 4);
        if (!exp) {
            return FDP_OFPBRC_BAD_LEN;
        }
        e->vendor = fdp__ofp_get_be32(exp);
        e->type = e->code;
        e->code = 0;
    }
    e->error = error_from_wire(oh.version, e->vendor, e->type, e->code);
    e->data = r.p;
    e->data_len = r.left;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Hello, echo, empty messages.                                            */

/* OFPHET_VERSIONBITMAP, the only hello element OpenFlow defines. */
#define OFPHET_VERSIONBITMAP 1

static int
highest_version(uint32_t versions)
{
    for (int v = 31; v > 0; v--) {
        if (versions & (1u << v)) {
            return v;
        }
    }
    return 0;
}

int
fdp_ofp_encode_hello(struct fdp__ofpbuf *b, uint32_t allowed, uint32_t xid)
{
    allowed &= ~1u;             /* There is no version 0. */
    int version = highest_version(allowed);
    if (!version) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, FDP_OFPRAW_OFPT_HELLO, (uint8_t) version,
                                 xid);
    /* A header's version alone says "every version up to this one"; a set
     * with holes needs the bitmap. */
    uint32_t contiguous = ((2u << version) - 1) & ~1u;
    if (allowed != contiguous) {
        fdp__ofpbuf_put_be16(b, OFPHET_VERSIONBITMAP);
        fdp__ofpbuf_put_be16(b, 8);
        fdp__ofpbuf_put_be32(b, allowed);
    }
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_decode_hello(const uint8_t *msg, size_t len, uint32_t *peer)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_HELLO) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    /* Without a bitmap, the peer speaks every version up to its header's
     * (bits 1..version; beyond 31 the map cannot say more). */
    *peer = oh.version >= 31 ? 0xfffffffeu
            : ((2u << oh.version) - 1) & ~1u;

    struct fdp__ofp_reader r;
    fdp__ofp_reader_init(&r, msg + oh.hdr_len, len - oh.hdr_len);
    bool ok = true;
    while (r.left) {
        if (r.left < 4) {
            return EPROTO;
        }
        uint16_t type = fdp__ofp_get_be16(r.p);
        uint16_t elen = fdp__ofp_get_be16(r.p + 2);
        size_t padded = ((size_t) elen + 7) / 8 * 8;
        struct fdp__ofp_reader elem;
        if (elen < 4 || !fdp__ofp_pull_reader(&r, padded, &elem)) {
            return EPROTO;
        }
        size_t bitmap_len = elen - 4u;
        if (type != OFPHET_VERSIONBITMAP || !bitmap_len
            || bitmap_len % 4) {
            ok = false;
            continue;
        }
        /* Only the first 32 bits matter while no version passes 31. */
        uint32_t bitmap = fdp__ofp_get_be32(elem.p + 4) & ~1u;
        if (!bitmap) {
            ok = false;
            continue;
        }
        *peer = bitmap;
    }
    return ok ? 0 : EPROTO;
}

int
fdp_ofp_negotiate(uint32_t ours, uint32_t peer, uint8_t *version)
{
    int v = highest_version(ours & peer & ~1u);
    if (!v) {
        return FDP_OFPHFC_INCOMPATIBLE;
    }
    *version = (uint8_t) v;
    return 0;
}

int
fdp_ofp_encode_echo_reply(struct fdp__ofpbuf *b, const uint8_t *request,
                          size_t len)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(request, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_ECHO_REQUEST) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, FDP_OFPRAW_OFPT_ECHO_REPLY, oh.version,
                                 oh.xid);
    fdp__ofpbuf_put(b, request + oh.hdr_len, len - oh.hdr_len);
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_encode_empty(struct fdp__ofpbuf *b, enum fdp_ofptype type,
                     uint8_t version, uint32_t xid)
{
    enum fdp_ofpraw raw = fdp_ofpraw_for(type, version);
    if (!raw || raw_infos[raw].min_body) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    return fdp_ofp_finish(b, start);
}

/* ---------------------------------------------------------------------- */
/* Ports.                                                                  */

/* OpenFlow 1.0's reserved ports start at 0xff00, 1.1's at 0xffffff00. */
#define OFPP10_MAX 0xff00
#define OFPP11_OFFSET 0xffff0000u

uint32_t
fdp_ofp_port_from_ofp10(uint16_t port)
{
    return port < OFPP10_MAX ? port : port + OFPP11_OFFSET;
}

uint16_t
fdp_ofp_port_to_ofp10(uint32_t port)
{
    if (port < OFPP10_MAX) {
        return (uint16_t) port;
    }
    if (port >= OFPP10_MAX + OFPP11_OFFSET) {
        return (uint16_t) (port - OFPP11_OFFSET);
    }
    /* No 1.0 number: Open vSwitch writes OFPP_NONE's 1.0 form. */
    return 0xffff;
}

/* Port config and state bits each version has (Open vSwitch's
 * OFPPC10_ALL, OFPPC11_ALL, OFPPS10_ALL, OFPPS11_ALL). */
#define OFPPC10_ALL 0x7fu
#define OFPPC11_ALL 0x65u
#define OFPPS10_ALL 0x301u
#define OFPPS11_ALL 0x7u

/* 1.0's feature bits 7-11 (copper, fiber, autoneg, pause, pause_asym)
 * are 1.1's 11-15; bits 0-6 (the speeds up to 10 Gb/s) are the same. */
static uint32_t
features_from_ofp10(uint32_t f)
{
    return (f & 0x7f) | ((f & 0xf80) << 4);
}

static uint32_t
features_to_ofp10(uint32_t f)
{
    return (f & 0x7f) | ((f >> 4) & 0xf80);
}

/* The fastest speed 'features' names, in kbps (Open vSwitch's
 * netdev_features_to_bps() / 1000), for 1.0 ports that carry no speed. */
static uint32_t
features_speed(uint32_t f)
{
    static const struct { uint32_t bits, kbps; } speeds[] = {
        { 1u << 9, 1000000000u },      /* 1 Tb/s. */
        { 1u << 8, 100000000u },       /* 100 Gb/s. */
        { 1u << 7, 40000000u },        /* 40 Gb/s. */
        { 1u << 6, 10000000u },        /* 10 Gb/s. */
        { 3u << 4, 1000000u },         /* 1 Gb/s. */
        { 3u << 2, 100000u },          /* 100 Mb/s. */
        { 3u << 0, 10000u },           /* 10 Mb/s. */
    };
    for (size_t i = 0; i < sizeof speeds / sizeof speeds[0]; i++) {
        if (f & speeds[i].bits) {
            return speeds[i].kbps;
        }
    }
    return 0;
}

static void
put_name(struct fdp__ofpbuf *b, const char *name, size_t size)
{
    uint8_t *p = fdp__ofpbuf_put_zeros(b, size);
    if (p) {
        size_t n = strnlen(name, size - 1);
        memcpy(p, name, n);
    }
}

static void
get_name(char *dst, const uint8_t *src, size_t size)
{
    memcpy(dst, src, size);
    dst[size - 1] = '\0';
}

/* The 1.4+ port property with Ethernet details (OFPPDPT14_ETHERNET). */
#define OFPPDPT14_ETHERNET 0
#define OFP14_PORT_LEN 40
#define OFP14_PORT_ETHERNET_LEN 32

int
fdp_ofp_put_port(struct fdp__ofpbuf *b, const struct fdp_ofp_port *pp,
                 uint8_t version)
{
    if (version == FDP_OFP10) {
        fdp__ofpbuf_put_be16(b, fdp_ofp_port_to_ofp10(pp->port_no));
        fdp__ofpbuf_put(b, pp->hw_addr, 6);
        put_name(b, pp->name, 16);
        fdp__ofpbuf_put_be32(b, pp->config & OFPPC10_ALL);
        fdp__ofpbuf_put_be32(b, pp->state & OFPPS10_ALL);
        fdp__ofpbuf_put_be32(b, features_to_ofp10(pp->curr));
        fdp__ofpbuf_put_be32(b, features_to_ofp10(pp->advertised));
        fdp__ofpbuf_put_be32(b, features_to_ofp10(pp->supported));
        fdp__ofpbuf_put_be32(b, features_to_ofp10(pp->peer));
    } else if (version <= FDP_OFP13) {
        fdp__ofpbuf_put_be32(b, pp->port_no);
        fdp__ofpbuf_put_zeros(b, 4);
        fdp__ofpbuf_put(b, pp->hw_addr, 6);
        fdp__ofpbuf_put_zeros(b, 2);
        put_name(b, pp->name, 16);
        fdp__ofpbuf_put_be32(b, pp->config & OFPPC11_ALL);
        fdp__ofpbuf_put_be32(b, pp->state & OFPPS11_ALL);
        fdp__ofpbuf_put_be32(b, pp->curr);
        fdp__ofpbuf_put_be32(b, pp->advertised);
        fdp__ofpbuf_put_be32(b, pp->supported);
        fdp__ofpbuf_put_be32(b, pp->peer);
        fdp__ofpbuf_put_be32(b, pp->curr_speed);
        fdp__ofpbuf_put_be32(b, pp->max_speed);
    } else {
        fdp__ofpbuf_put_be32(b, pp->port_no);
        fdp__ofpbuf_put_be16(b, OFP14_PORT_LEN + OFP14_PORT_ETHERNET_LEN);
        fdp__ofpbuf_put_zeros(b, 2);
        fdp__ofpbuf_put(b, pp->hw_addr, 6);
        fdp__ofpbuf_put_zeros(b, 2);
        put_name(b, pp->name, 16);
        fdp__ofpbuf_put_be32(b, pp->config & OFPPC11_ALL);
        fdp__ofpbuf_put_be32(b, pp->state & OFPPS11_ALL);
        fdp__ofpbuf_put_be16(b, OFPPDPT14_ETHERNET);
        fdp__ofpbuf_put_be16(b, OFP14_PORT_ETHERNET_LEN);
        fdp__ofpbuf_put_zeros(b, 4);
        fdp__ofpbuf_put_be32(b, pp->curr);
        fdp__ofpbuf_put_be32(b, pp->advertised);
        fdp__ofpbuf_put_be32(b, pp->supported);
        fdp__ofpbuf_put_be32(b, pp->peer);
        fdp__ofpbuf_put_be32(b, pp->curr_speed);
        fdp__ofpbuf_put_be32(b, pp->max_speed);
    }
    return fdp__ofpbuf_failed(b) ? ENOMEM : 0;
}

static int
pull_port10(struct fdp__ofp_reader *r, struct fdp_ofp_port *pp)
{
    const uint8_t *p = fdp__ofp_pull(r, 48);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    pp->port_no = fdp_ofp_port_from_ofp10(fdp__ofp_get_be16(p));
    memcpy(pp->hw_addr, p + 2, 6);
    get_name(pp->name, p + 8, 16);
    pp->config = fdp__ofp_get_be32(p + 24) & OFPPC10_ALL;
    pp->state = fdp__ofp_get_be32(p + 28) & OFPPS10_ALL;
    pp->curr = features_from_ofp10(fdp__ofp_get_be32(p + 32));
    pp->advertised = features_from_ofp10(fdp__ofp_get_be32(p + 36));
    pp->supported = features_from_ofp10(fdp__ofp_get_be32(p + 40));
    pp->peer = features_from_ofp10(fdp__ofp_get_be32(p + 44));
    pp->curr_speed = features_speed(pp->curr);
    pp->max_speed = features_speed(pp->supported);
    return 0;
}

static int
pull_port11(struct fdp__ofp_reader *r, struct fdp_ofp_port *pp)
{
    const uint8_t *p = fdp__ofp_pull(r, 64);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    pp->port_no = fdp__ofp_get_be32(p);
    memcpy(pp->hw_addr, p + 8, 6);
    get_name(pp->name, p + 16, 16);
    pp->config = fdp__ofp_get_be32(p + 32) & OFPPC11_ALL;
    pp->state = fdp__ofp_get_be32(p + 36) & OFPPS11_ALL;
    pp->curr = fdp__ofp_get_be32(p + 40);
    pp->advertised = fdp__ofp_get_be32(p + 44);
    pp->supported = fdp__ofp_get_be32(p + 48);
    pp->peer = fdp__ofp_get_be32(p + 52);
    pp->curr_speed = fdp__ofp_get_be32(p + 56);
    pp->max_speed = fdp__ofp_get_be32(p + 60);
    return 0;
}

static int
pull_port14(struct fdp__ofp_reader *r, struct fdp_ofp_port *pp)
{
    if (r->left < OFP14_PORT_LEN) {
        return FDP_OFPBRC_BAD_LEN;
    }
    size_t plen = fdp__ofp_get_be16(r->p + 4);
    struct fdp__ofp_reader port;
    if (plen < OFP14_PORT_LEN || plen % 8
        || !fdp__ofp_pull_reader(r, plen, &port)) {
        return FDP_OFPBRC_BAD_LEN;
    }
    const uint8_t *p = fdp__ofp_pull(&port, OFP14_PORT_LEN);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    pp->port_no = fdp__ofp_get_be32(p);
    memcpy(pp->hw_addr, p + 8, 6);
    get_name(pp->name, p + 16, 16);
    pp->config = fdp__ofp_get_be32(p + 32) & OFPPC11_ALL;
    pp->state = fdp__ofp_get_be32(p + 36) & OFPPS11_ALL;

    /* Properties: Ethernet is read, the rest (optical, experimenter) are
     * skipped after their lengths are checked, as Open vSwitch does. */
    while (port.left) {
        if (port.left < 4) {
            return FDP_OFPBRC_BAD_LEN;
        }
        uint16_t type = fdp__ofp_get_be16(port.p);
        size_t len = fdp__ofp_get_be16(port.p + 2);
        size_t padded = (len + 7) / 8 * 8;
        struct fdp__ofp_reader prop;
        if (len < 4 || !fdp__ofp_pull_reader(&port, padded, &prop)) {
            return FDP_OFPBRC_BAD_LEN;
        }
        if (type == OFPPDPT14_ETHERNET) {
            if (len != OFP14_PORT_ETHERNET_LEN) {
                return FDP_OFPBRC_BAD_LEN;
            }
            const uint8_t *e = prop.p + 8;
            pp->curr = fdp__ofp_get_be32(e);
            pp->advertised = fdp__ofp_get_be32(e + 4);
            pp->supported = fdp__ofp_get_be32(e + 8);
            pp->peer = fdp__ofp_get_be32(e + 12);
            pp->curr_speed = fdp__ofp_get_be32(e + 16);
            pp->max_speed = fdp__ofp_get_be32(e + 20);
        }
    }
    return 0;
}

int
fdp_ofp_pull_port(struct fdp__ofp_reader *r, uint8_t version,
                  struct fdp_ofp_port *pp)
{
    memset(pp, 0, sizeof *pp);
    if (!r->left) {
        return EOF;
    }
    return (version == FDP_OFP10 ? pull_port10(r, pp)
            : version <= FDP_OFP13 ? pull_port11(r, pp)
            : pull_port14(r, pp));
}

int
fdp_ofp_encode_port_desc_reply(struct fdp__ofpbuf *b,
                               const struct fdp_ofp_header *request,
                               const struct fdp_ofp_port *ports,
                               size_t n_ports)
{
    struct fdp_ofpmp mp;
    fdp_ofpmp_init(&mp, b, request);
    for (size_t i = 0; i < n_ports; i++) {
        size_t ofs = fdp_ofpmp_entry_start(&mp);
        fdp_ofp_put_port(b, &ports[i], request->version);
        fdp_ofpmp_entry_end(&mp, ofs);
    }
    return fdp_ofpmp_finish(&mp);
}

/* Decodes 'msg' as a message of type 'type' and returns a reader over its
 * body. */
static int
decode_body(const uint8_t *msg, size_t len, enum fdp_ofptype type,
            struct fdp_ofp_header *oh, struct fdp__ofp_reader *r)
{
    int error = fdp_ofp_decode_header(msg, len, oh);
    if (error) {
        return error;
    }
    if (oh->type != type) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    fdp__ofp_reader_init(r, msg + oh->hdr_len, len - oh->hdr_len);
    return 0;
}

int
fdp_ofp_decode_port_desc_request(const uint8_t *msg, size_t len,
                                 uint32_t *port_no)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body(msg, len, FDP_OFPTYPE_PORT_DESC_STATS_REQUEST,
                            &oh, &r);
    if (error) {
        return error;
    }
    *port_no = FDP_OFPP_ANY;
    if (oh.raw == FDP_OFPRAW_OFPST15_PORT_DESC_REQUEST) {
        *port_no = fdp__ofp_get_be32(r.p);
    }
    return 0;
}

int
fdp_ofp_encode_port_status(struct fdp__ofpbuf *b, uint8_t reason,
                           const struct fdp_ofp_port *pp, uint8_t version,
                           uint32_t xid)
{
    enum fdp_ofpraw raw = fdp_ofpraw_for(FDP_OFPTYPE_PORT_STATUS, version);
    if (!raw) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    fdp__ofpbuf_put_u8(b, reason);
    fdp__ofpbuf_put_zeros(b, 7);
    fdp_ofp_put_port(b, pp, version);
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_decode_port_status(const uint8_t *msg, size_t len, uint8_t *reason,
                           struct fdp_ofp_port *pp)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body(msg, len, FDP_OFPTYPE_PORT_STATUS, &oh, &r);
    if (error) {
        return error;
    }
    const uint8_t *p = fdp__ofp_pull(&r, 8);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    *reason = p[0];
    if (*reason > FDP_OFPPR_MODIFY) {
        return FDP_NXBRC_BAD_REASON;
    }
    error = fdp_ofp_pull_port(&r, oh.version, pp);
    if (!error && r.left) {
        error = FDP_OFPBRC_BAD_LEN;
    }
    return error == EOF ? FDP_OFPBRC_BAD_LEN : error;
}

/* ---------------------------------------------------------------------- */
/* Features and config.                                                    */

int
fdp_ofp_encode_features_reply(struct fdp__ofpbuf *b,
                              const struct fdp_ofp_features *f,
                              uint8_t version, uint32_t xid)
{
    enum fdp_ofpraw raw = fdp_ofpraw_for(FDP_OFPTYPE_FEATURES_REPLY,
                                         version);
    if (!raw) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    fdp__ofpbuf_put_be64(b, f->datapath_id);
    fdp__ofpbuf_put_be32(b, f->n_buffers);
    fdp__ofpbuf_put_u8(b, f->n_tables);
    fdp__ofpbuf_put_u8(b, version >= FDP_OFP13 ? f->auxiliary_id : 0);
    fdp__ofpbuf_put_zeros(b, 2);
    fdp__ofpbuf_put_be32(b, f->capabilities);
    fdp__ofpbuf_put_be32(b, version == FDP_OFP10 ? f->actions : 0);
    if (version <= FDP_OFP12) {
        for (size_t i = 0; i < f->n_ports; i++) {
            fdp_ofp_put_port(b, &f->ports[i], version);
        }
    }
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_decode_features_reply(const uint8_t *msg, size_t len,
                              struct fdp_ofp_features *f)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    memset(f, 0, sizeof *f);
    int error = decode_body(msg, len, FDP_OFPTYPE_FEATURES_REPLY, &oh, &r);
    if (error) {
        return error;
    }
    const uint8_t *p = fdp__ofp_pull(&r, 24);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    f->datapath_id = fdp__ofp_get_be64(p);
    f->n_buffers = fdp__ofp_get_be32(p + 8);
    f->n_tables = p[12];
    f->auxiliary_id = oh.version >= FDP_OFP13 ? p[13] : 0;
    f->capabilities = fdp__ofp_get_be32(p + 16);
    f->actions = oh.version == FDP_OFP10 ? fdp__ofp_get_be32(p + 20) : 0;

    /* The table made the rest a whole number of ports. */
    size_t port_len = oh.version == FDP_OFP10 ? 48 : 64;
    size_t n = r.left / port_len;
    if (n) {
        f->ports = calloc(n, sizeof *f->ports);
        if (!f->ports) {
            return FDP_OFPERR_NOMEM;
        }
    }
    for (size_t i = 0; i < n; i++) {
        error = fdp_ofp_pull_port(&r, oh.version, &f->ports[i]);
        if (error) {
            free(f->ports);
            f->ports = NULL;
            return error == EOF ? FDP_OFPBRC_BAD_LEN : error;
        }
    }
    f->n_ports = n;
    return 0;
}

int
fdp_ofp_encode_switch_config(struct fdp__ofpbuf *b, enum fdp_ofptype type,
                             const struct fdp_ofp_switch_config *c,
                             uint8_t version, uint32_t xid)
{
    if (type != FDP_OFPTYPE_GET_CONFIG_REPLY
        && type != FDP_OFPTYPE_SET_CONFIG) {
        return EINVAL;
    }
    enum fdp_ofpraw raw = fdp_ofpraw_for(type, version);
    if (!raw) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    fdp__ofpbuf_put_be16(b, c->flags);
    fdp__ofpbuf_put_be16(b, c->miss_send_len);
    return fdp_ofp_finish(b, start);
}

int
fdp_ofp_decode_switch_config(const uint8_t *msg, size_t len,
                             struct fdp_ofp_switch_config *c)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_GET_CONFIG_REPLY
        && oh.type != FDP_OFPTYPE_SET_CONFIG) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    const uint8_t *p = msg + oh.hdr_len;
    c->flags = fdp__ofp_get_be16(p);
    c->miss_send_len = fdp__ofp_get_be16(p + 2);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Statistics without matches.                                             */

#define DESC_STR_LEN 256
#define SERIAL_NUM_LEN 32

int
fdp_ofp_encode_desc_reply(struct fdp__ofpbuf *b,
                          const struct fdp_ofp_header *request,
                          const struct fdp_ofp_desc *d)
{
    struct fdp_ofpmp mp;
    fdp_ofpmp_init(&mp, b, request);
    put_name(b, d->mfr_desc, DESC_STR_LEN);
    put_name(b, d->hw_desc, DESC_STR_LEN);
    put_name(b, d->sw_desc, DESC_STR_LEN);
    put_name(b, d->serial_num, SERIAL_NUM_LEN);
    put_name(b, d->dp_desc, DESC_STR_LEN);
    return fdp_ofpmp_finish(&mp);
}

int
fdp_ofp_decode_desc_reply(const uint8_t *msg, size_t len,
                          struct fdp_ofp_desc *d)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body(msg, len, FDP_OFPTYPE_DESC_STATS_REPLY, &oh, &r);
    if (error) {
        return error;
    }
    const uint8_t *p = r.p;
    get_name(d->mfr_desc, p, DESC_STR_LEN);
    get_name(d->hw_desc, p + 256, DESC_STR_LEN);
    get_name(d->sw_desc, p + 512, DESC_STR_LEN);
    get_name(d->serial_num, p + 768, SERIAL_NUM_LEN);
    get_name(d->dp_desc, p + 800, DESC_STR_LEN);
    return 0;
}

int
fdp_ofp_decode_port_stats_request(const uint8_t *msg, size_t len,
                                  uint32_t *port_no)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body(msg, len, FDP_OFPTYPE_PORT_STATS_REQUEST, &oh,
                            &r);
    if (error) {
        return error;
    }
    *port_no = (oh.version == FDP_OFP10
                ? fdp_ofp_port_from_ofp10(fdp__ofp_get_be16(r.p))
                : fdp__ofp_get_be32(r.p));
    /* 1.0's OFPP_NONE (0xffff) asks for every port, as 1.1's OFPP_ANY. */
    return 0;
}

int
fdp_ofp_encode_port_stats_request(struct fdp__ofpbuf *b, uint32_t port,
                                  uint8_t version, uint32_t xid)
{
    enum fdp_ofpraw raw = fdp_ofpraw_for(FDP_OFPTYPE_PORT_STATS_REQUEST,
                                         version);
    if (!raw) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    if (version == FDP_OFP10) {
        fdp__ofpbuf_put_be16(b, fdp_ofp_port_to_ofp10(port));
        fdp__ofpbuf_put_zeros(b, 6);
    } else {
        fdp__ofpbuf_put_be32(b, port);
        fdp__ofpbuf_put_zeros(b, 4);
    }
    return fdp_ofp_finish(b, start);
}

/* The 1.4+ port stats property with Ethernet counters. */
#define OFPPSPT14_ETHERNET 0
#define OFP14_PORT_STATS_LEN 80
#define OFP14_PORT_STATS_ETHERNET_LEN 40

static void
put_port_stats(struct fdp__ofpbuf *b, const struct fdp_ofp_port_stats *ps,
               uint8_t version)
{
    if (version >= FDP_OFP14) {
        fdp__ofpbuf_put_be16(b, OFP14_PORT_STATS_LEN
                             + OFP14_PORT_STATS_ETHERNET_LEN);
        fdp__ofpbuf_put_zeros(b, 2);
        fdp__ofpbuf_put_be32(b, ps->port_no);
        fdp__ofpbuf_put_be32(b, ps->duration_sec);
        fdp__ofpbuf_put_be32(b, ps->duration_nsec);
        const uint64_t c[] = {
            ps->rx_packets, ps->tx_packets, ps->rx_bytes, ps->tx_bytes,
            ps->rx_dropped, ps->tx_dropped, ps->rx_errors, ps->tx_errors,
        };
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            fdp__ofpbuf_put_be64(b, c[i]);
        }
        fdp__ofpbuf_put_be16(b, OFPPSPT14_ETHERNET);
        fdp__ofpbuf_put_be16(b, OFP14_PORT_STATS_ETHERNET_LEN);
        fdp__ofpbuf_put_zeros(b, 4);
        fdp__ofpbuf_put_be64(b, ps->rx_frame_err);
        fdp__ofpbuf_put_be64(b, ps->rx_over_err);
        fdp__ofpbuf_put_be64(b, ps->rx_crc_err);
        fdp__ofpbuf_put_be64(b, ps->collisions);
        return;
    }
    if (version == FDP_OFP10) {
        fdp__ofpbuf_put_be16(b, fdp_ofp_port_to_ofp10(ps->port_no));
        fdp__ofpbuf_put_zeros(b, 6);
    } else {
        fdp__ofpbuf_put_be32(b, ps->port_no);
        fdp__ofpbuf_put_zeros(b, 4);
    }
    const uint64_t c[] = {
        ps->rx_packets, ps->tx_packets, ps->rx_bytes, ps->tx_bytes,
        ps->rx_dropped, ps->tx_dropped, ps->rx_errors, ps->tx_errors,
        ps->rx_frame_err, ps->rx_over_err, ps->rx_crc_err, ps->collisions,
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        fdp__ofpbuf_put_be64(b, c[i]);
    }
    if (version == FDP_OFP13) {
        fdp__ofpbuf_put_be32(b, ps->duration_sec);
        fdp__ofpbuf_put_be32(b, ps->duration_nsec);
    }
}

int
fdp_ofp_encode_port_stats_reply(struct fdp__ofpbuf *b,
                                const struct fdp_ofp_header *request,
                                const struct fdp_ofp_port_stats *ps,
                                size_t n)
{
    struct fdp_ofpmp mp;
    fdp_ofpmp_init(&mp, b, request);
    for (size_t i = 0; i < n; i++) {
        size_t ofs = fdp_ofpmp_entry_start(&mp);
        put_port_stats(b, &ps[i], request->version);
        fdp_ofpmp_entry_end(&mp, ofs);
    }
    return fdp_ofpmp_finish(&mp);
}

static void
get_counters(const uint8_t *p, uint64_t *const c[], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        *c[i] = fdp__ofp_get_be64(p + 8 * i);
    }
}

int
fdp_ofp_pull_port_stats(struct fdp__ofp_reader *r, uint8_t version,
                        struct fdp_ofp_port_stats *ps)
{
    memset(ps, 0, sizeof *ps);
    if (!r->left) {
        return EOF;
    }
    uint64_t *const c8[] = {
        &ps->rx_packets, &ps->tx_packets, &ps->rx_bytes, &ps->tx_bytes,
        &ps->rx_dropped, &ps->tx_dropped, &ps->rx_errors, &ps->tx_errors,
    };
    uint64_t *const c12[] = {
        &ps->rx_packets, &ps->tx_packets, &ps->rx_bytes, &ps->tx_bytes,
        &ps->rx_dropped, &ps->tx_dropped, &ps->rx_errors, &ps->tx_errors,
        &ps->rx_frame_err, &ps->rx_over_err, &ps->rx_crc_err,
        &ps->collisions,
    };
    if (version >= FDP_OFP14) {
        if (r->left < OFP14_PORT_STATS_LEN) {
            return FDP_OFPBRC_BAD_LEN;
        }
        size_t elen = fdp__ofp_get_be16(r->p);
        struct fdp__ofp_reader e;
        if (elen < OFP14_PORT_STATS_LEN || elen % 8
            || !fdp__ofp_pull_reader(r, elen, &e)) {
            return FDP_OFPBRC_BAD_LEN;
        }
        const uint8_t *p = fdp__ofp_pull(&e, OFP14_PORT_STATS_LEN);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;
        }
        ps->port_no = fdp__ofp_get_be32(p + 4);
        ps->duration_sec = fdp__ofp_get_be32(p + 8);
        ps->duration_nsec = fdp__ofp_get_be32(p + 12);
        get_counters(p + 16, c8, 8);
        while (e.left) {
            if (e.left < 4) {
                return FDP_OFPBRC_BAD_LEN;
            }
            uint16_t type = fdp__ofp_get_be16(e.p);
            size_t plen = fdp__ofp_get_be16(e.p + 2);
            struct fdp__ofp_reader prop;
            if (plen < 4
                || !fdp__ofp_pull_reader(&e, (plen + 7) / 8 * 8, &prop)) {
                return FDP_OFPBRC_BAD_LEN;
            }
            if (type == OFPPSPT14_ETHERNET) {
                if (plen != OFP14_PORT_STATS_ETHERNET_LEN) {
                    return FDP_OFPBRC_BAD_LEN;
                }
                get_counters(prop.p + 8, c12 + 8, 4);
            }
        }
        return 0;
    }
    size_t elen = version == FDP_OFP13 ? 112 : 104;
    const uint8_t *p = fdp__ofp_pull(r, elen);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    ps->port_no = (version == FDP_OFP10
                   ? fdp_ofp_port_from_ofp10(fdp__ofp_get_be16(p))
                   : fdp__ofp_get_be32(p));
    get_counters(p + 8, c12, 12);
    if (version == FDP_OFP13) {
        ps->duration_sec = fdp__ofp_get_be32(p + 104);
        ps->duration_nsec = fdp__ofp_get_be32(p + 108);
    } else {
        ps->duration_sec = ps->duration_nsec = UINT32_MAX;
    }
    return 0;
}

int
fdp_ofp_encode_queue_stats_reply(struct fdp__ofpbuf *b,
                                 const struct fdp_ofp_header *request)
{
    struct fdp_ofpmp mp;
    fdp_ofpmp_init(&mp, b, request);
    return fdp_ofpmp_finish(&mp);
}

/* OpenFlow 1.0's table stats say which fields a table can wildcard: all
 * of them (OFPFW10_ALL), as Open vSwitch says. */
#define OFPFW10_ALL 0x3fffffu
#define OFP_MAX_TABLE_NAME_LEN 32

int
fdp_ofp_encode_table_stats_reply(struct fdp__ofpbuf *b,
                                 const struct fdp_ofp_header *request,
                                 const struct fdp_ofp_table_stats *ts,
                                 size_t n)
{
    /* 1.1 and 1.2's forms list match and action capabilities flowdp does
     * not keep per table; they are not spoken (see the report). */
    if (request->version == FDP_OFP11 || request->version == FDP_OFP12) {
        return EINVAL;
    }
    struct fdp_ofpmp mp;
    fdp_ofpmp_init(&mp, b, request);
    for (size_t i = 0; i < n; i++) {
        size_t ofs = fdp_ofpmp_entry_start(&mp);
        fdp__ofpbuf_put_u8(b, ts[i].table_id);
        fdp__ofpbuf_put_zeros(b, 3);
        if (request->version == FDP_OFP10) {
            put_name(b, ts[i].name, OFP_MAX_TABLE_NAME_LEN);
            fdp__ofpbuf_put_be32(b, OFPFW10_ALL);
            fdp__ofpbuf_put_be32(b, ts[i].max_entries);
        }
        fdp__ofpbuf_put_be32(b, ts[i].active_count);
        fdp__ofpbuf_put_be64(b, ts[i].lookup_count);
        fdp__ofpbuf_put_be64(b, ts[i].matched_count);
        fdp_ofpmp_entry_end(&mp, ofs);
    }
    return fdp_ofpmp_finish(&mp);
}

int
fdp_ofp_pull_table_stats(struct fdp__ofp_reader *r, uint8_t version,
                         struct fdp_ofp_table_stats *ts)
{
    memset(ts, 0, sizeof *ts);
    if (!r->left) {
        return EOF;
    }
    if (version == FDP_OFP11 || version == FDP_OFP12) {
        return FDP_OFPBRC_BAD_VERSION;
    }
    const uint8_t *p = fdp__ofp_pull(r, version == FDP_OFP10 ? 64 : 24);
    if (!p) {
        return FDP_OFPBRC_BAD_LEN;
    }
    ts->table_id = p[0];
    if (version == FDP_OFP10) {
        get_name(ts->name, p + 4, OFP_MAX_TABLE_NAME_LEN);
        ts->max_entries = fdp__ofp_get_be32(p + 40);
        p += 40;
    }
    ts->active_count = fdp__ofp_get_be32(p + 4);
    ts->lookup_count = fdp__ofp_get_be64(p + 8);
    ts->matched_count = fdp__ofp_get_be64(p + 16);
    return 0;
}

int
fdp_ofp_encode_aggregate_reply(struct fdp__ofpbuf *b,
                               const struct fdp_ofp_header *request,
                               const struct fdp_ofp_aggregate_stats *as)
{
    struct fdp_ofpmp mp;
    fdp_ofpmp_init(&mp, b, request);
    if (request->version >= FDP_OFP15) {
        /* OpenFlow 1.5's reply is OXS statistics. */
        struct fdp__oxs_stats st = {
            .has_packet_count = true, .packet_count = as->packet_count,
            .has_byte_count = true, .byte_count = as->byte_count,
            .has_flow_count = true, .flow_count = as->flow_count,
        };
        fdp__ofp_put_oxs_stats(b, &st);
        return fdp_ofpmp_finish(&mp);
    }
    fdp__ofpbuf_put_be64(b, as->packet_count);
    fdp__ofpbuf_put_be64(b, as->byte_count);
    fdp__ofpbuf_put_be32(b, as->flow_count);
    fdp__ofpbuf_put_zeros(b, 4);
    return fdp_ofpmp_finish(&mp);
}

int
fdp_ofp_decode_aggregate_reply(const uint8_t *msg, size_t len,
                               struct fdp_ofp_aggregate_stats *as)
{
    struct fdp_ofp_header oh;
    struct fdp__ofp_reader r;
    int error = decode_body(msg, len, FDP_OFPTYPE_AGGREGATE_STATS_REPLY,
                            &oh, &r);
    if (error) {
        return error;
    }
    if (oh.raw == FDP_OFPRAW_OFPST15_AGGREGATE_REPLY) {
        struct fdp__oxs_stats st;
        error = fdp__ofp_pull_oxs_stats(&r, &st);
        if (!error) {
            as->packet_count = st.packet_count;
            as->byte_count = st.byte_count;
            as->flow_count = st.flow_count;
        }
        return error;
    }
    as->packet_count = fdp__ofp_get_be64(r.p);
    as->byte_count = fdp__ofp_get_be64(r.p + 8);
    as->flow_count = fdp__ofp_get_be32(r.p + 16);
    return 0;
}
