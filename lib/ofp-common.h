/*
 * What the OpenFlow codec's parts share (lib/ofp-*.c): protocol versions,
 * a growable byte buffer for encoding, a bounds-checked reader for
 * decoding, and the errors a decoder reports.
 *
 * Theory of operation.  The codec turns bytes into flowdp's own
 * structures (struct fdp_match, struct fdp_actions, struct fdp_flow_spec)
 * and back, and knows nothing of sockets (DESIGN.md: lib/ has no I/O).
 * Every decoder reads through a struct fdp__ofp_reader, whose pulls check
 * the remaining length, so that a message that lies about a length fails
 * with an error naming what was short instead of reading past the end.
 * Every encoder appends to a struct fdp__ofpbuf, which records an
 * allocation failure instead of returning one from each put: the caller
 * checks fdp__ofpbuf_failed() once at the end.
 *
 * Errors.  A decoder returns 0 or an enum fdp_ofperr (never an errno), the
 * error an OpenFlow switch sends back (Open vSwitch's enum ofperr names,
 * lib/ofp-errors.h there): the message layer turns it into the type and
 * code of the connection's version.  The codec never prints.
 *
 * All multi-byte wire values are big-endian; the get/put helpers convert.
 */
#ifndef FDP_OFP_COMMON_H
#define FDP_OFP_COMMON_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* OpenFlow versions, as the header's version byte. */
enum fdp_ofp_version {
    FDP_OFP10 = 0x01,
    FDP_OFP11 = 0x02,
    FDP_OFP12 = 0x03,
    FDP_OFP13 = 0x04,
    FDP_OFP14 = 0x05,
    FDP_OFP15 = 0x06,
};

/* The errors a decoder or the switch reports, by Open vSwitch's names.
 * The message layer (lib/ofp-msgs.c) maps each to the (type, code) pair of
 * each version, as Open vSwitch's ofp-errors table does, and to Nicira's
 * extension error for the ones OpenFlow 1.0 lacks.  The list is the
 * codec's one table of errors: add a row, and its mapping, together. */
#define FDP_OFPERRS(E)                                                      \
    E(OFPHFC_INCOMPATIBLE)                                                  \
    E(OFPHFC_EPERM)                                                         \
    E(OFPBRC_BAD_VERSION)                                                   \
    E(OFPBRC_BAD_TYPE)                                                      \
    E(OFPBRC_BAD_STAT)                                                      \
    E(OFPBRC_BAD_VENDOR)                                                    \
    E(OFPBRC_BAD_SUBTYPE)                                                   \
    E(OFPBRC_EPERM)                                                         \
    E(OFPBRC_BAD_LEN)                                                       \
    E(OFPBRC_BUFFER_EMPTY)                                                  \
    E(OFPBRC_BUFFER_UNKNOWN)                                                \
    E(OFPBRC_BAD_TABLE_ID)                                                  \
    E(OFPBRC_IS_SLAVE)                                                      \
    E(OFPBRC_BAD_PORT)                                                      \
    E(OFPBRC_MULTIPART_BUFFER_OVERFLOW)                                     \
    E(OFPBAC_BAD_TYPE)                                                      \
    E(OFPBAC_BAD_LEN)                                                       \
    E(OFPBAC_BAD_VENDOR)                                                    \
    E(OFPBAC_BAD_VENDOR_TYPE)                                               \
    E(OFPBAC_BAD_OUT_PORT)                                                  \
    E(OFPBAC_BAD_ARGUMENT)                                                  \
    E(OFPBAC_EPERM)                                                         \
    E(OFPBAC_TOO_MANY)                                                      \
    E(OFPBAC_BAD_QUEUE)                                                     \
    E(OFPBAC_BAD_OUT_GROUP)                                                 \
    E(OFPBAC_MATCH_INCONSISTENT)                                            \
    E(OFPBAC_UNSUPPORTED_ORDER)                                             \
    E(OFPBAC_BAD_TAG)                                                       \
    E(OFPBAC_BAD_SET_TYPE)                                                  \
    E(OFPBAC_BAD_SET_LEN)                                                   \
    E(OFPBAC_BAD_SET_ARGUMENT)                                              \
    E(OFPBAC_BAD_SET_MASK)                                                  \
    E(OFPBIC_UNKNOWN_INST)                                                  \
    E(OFPBIC_UNSUP_INST)                                                    \
    E(OFPBIC_BAD_TABLE_ID)                                                  \
    E(OFPBIC_UNSUP_METADATA)                                                \
    E(OFPBIC_UNSUP_METADATA_MASK)                                           \
    E(OFPBIC_BAD_LEN)                                                       \
    E(OFPBIC_DUP_INST)                                                      \
    E(OFPBMC_BAD_TYPE)                                                      \
    E(OFPBMC_BAD_LEN)                                                       \
    E(OFPBMC_BAD_TAG)                                                       \
    E(OFPBMC_BAD_DL_ADDR_MASK)                                              \
    E(OFPBMC_BAD_NW_ADDR_MASK)                                              \
    E(OFPBMC_BAD_WILDCARDS)                                                 \
    E(OFPBMC_BAD_FIELD)                                                     \
    E(OFPBMC_BAD_VALUE)                                                     \
    E(OFPBMC_BAD_MASK)                                                      \
    E(OFPBMC_BAD_PREREQ)                                                    \
    E(OFPBMC_DUP_FIELD)                                                     \
    E(OFPFMFC_UNKNOWN)                                                      \
    E(OFPFMFC_TABLE_FULL)                                                   \
    E(OFPFMFC_BAD_TABLE_ID)                                                 \
    E(OFPFMFC_OVERLAP)                                                      \
    E(OFPFMFC_EPERM)                                                        \
    E(OFPFMFC_BAD_TIMEOUT)                                                  \
    E(OFPFMFC_BAD_COMMAND)                                                  \
    E(OFPFMFC_BAD_FLAGS)                                                    \
    E(OFPGMFC_GROUP_EXISTS)                                                 \
    E(OFPGMFC_INVALID_GROUP)                                                \
    E(OFPGMFC_OUT_OF_GROUPS)                                                \
    E(OFPGMFC_BAD_TYPE)                                                     \
    E(OFPGMFC_BAD_COMMAND)                                                  \
    E(OFPGMFC_BAD_BUCKET)                                                   \
    E(OFPGMFC_UNKNOWN_GROUP)                                                \
    E(OFPGMFC_CHAINING_UNSUPPORTED)                                         \
    E(OFPGMFC_WEIGHT_UNSUPPORTED)                                           \
    E(OFPGMFC_OUT_OF_BUCKETS)                                               \
    E(OFPGMFC_WATCH_UNSUPPORTED)                                            \
    E(OFPGMFC_LOOP)                                                         \
    E(OFPGMFC_CHAINED_GROUP)                                                \
    E(OFPGMFC_BAD_WATCH)                                                    \
    E(OFPGMFC_EPERM)                                                        \
    E(OFPGMFC_UNKNOWN_BUCKET)                                               \
    E(OFPGMFC_BUCKET_EXISTS)                                                \
    E(OFPPMFC_BAD_PORT)                                                     \
    E(OFPPMFC_BAD_HW_ADDR)                                                  \
    E(OFPTMFC_BAD_TABLE)                                                    \
    E(OFPTMFC_BAD_CONFIG)                                                   \
    E(OFPQOFC_BAD_PORT)                                                     \
    E(OFPSCFC_BAD_FLAGS)                                                    \
    E(OFPSCFC_BAD_LEN)                                                      \
    E(OFPRRFC_STALE)                                                        \
    E(OFPRRFC_UNSUP)                                                        \
    E(OFPRRFC_BAD_ROLE)                                                     \
    E(OFPMMFC_UNKNOWN)                                                      \
    E(OFPMMFC_METER_EXISTS)                                                 \
    E(OFPMMFC_INVALID_METER)                                                \
    E(OFPMMFC_UNKNOWN_METER)                                                \
    E(OFPMMFC_BAD_COMMAND)                                                  \
    E(OFPMMFC_BAD_FLAGS)                                                    \
    E(OFPMMFC_BAD_RATE)                                                     \
    E(OFPMMFC_BAD_BURST)                                                    \
    E(OFPMMFC_BAD_BAND)                                                     \
    E(OFPMMFC_BAD_BAND_VALUE)                                               \
    E(OFPMMFC_OUT_OF_METERS)                                                \
    E(OFPMMFC_OUT_OF_BANDS)                                                 \
    E(OFPTFFC_BAD_TABLE)                                                    \
    E(OFPTFFC_BAD_TYPE)                                                     \
    E(OFPTFFC_BAD_LEN)                                                      \
    E(OFPTFFC_BAD_ARGUMENT)                                                 \
    E(OFPTFFC_EPERM)                                                        \
    E(OFPBFC_UNKNOWN)                                                       \
    E(OFPBFC_EPERM)                                                         \
    E(OFPBFC_BAD_ID)                                                        \
    E(OFPBFC_BUNDLE_EXIST)                                                  \
    E(OFPBFC_BUNDLE_CLOSED)                                                 \
    E(OFPBFC_OUT_OF_BUNDLES)                                                \
    E(OFPBFC_BAD_TYPE)                                                      \
    E(OFPBFC_BAD_FLAGS)                                                     \
    E(OFPBFC_MSG_BAD_LEN)                                                   \
    E(OFPBFC_MSG_BAD_XID)                                                   \
    E(OFPBFC_MSG_UNSUP)                                                     \
    E(OFPBFC_MSG_CONFLICT)                                                  \
    E(OFPBFC_MSG_TOO_MANY)                                                  \
    E(OFPBFC_MSG_FAILED)                                                    \
    E(OFPBFC_TIMEOUT)                                                       \
    E(OFPBFC_BUNDLE_IN_PROGRESS)                                            \
    E(OFPMOFC_UNKNOWN)                                                      \
    E(OFPMOFC_MONITOR_EXISTS)                                               \
    E(OFPMOFC_UNKNOWN_MONITOR)                                              \
    E(OFPMOFC_BAD_COMMAND)                                                  \
    E(OFPMOFC_BAD_FLAGS)                                                    \
    E(OFPMOFC_BAD_TABLE_ID)                                                 \
    E(OFPMOFC_BAD_OUT)                                                      \
    E(OFPACFC_INVALID)                                                      \
    E(OFPACFC_UNSUPPORTED)                                                  \
    E(OFPBFC_BAD_VERSION)                                                   \
    E(NXBRC_NXM_INVALID)                                                    \
    E(NXBRC_BAD_REASON)                                                     \
    E(NXBRC_MUST_BE_ZERO)                                                   \
    E(NXBAC_MUST_BE_ZERO)                                                   \
    E(NXFMFC_HARDWARE)                                                      \
    E(NXTTMFC_BAD_COMMAND)                                                  \
    E(NXTTMFC_BAD_OPT_LEN)                                                  \
    E(NXTTMFC_ALREADY_MAPPED)                                               \
    E(NXTTMFC_DUP_ENTRY)                                                    \
    E(NXTTMFC_TABLE_FULL)                                                   \
    E(NXTTMFC_INVALID_TLV_DEL)                                              \
    E(NXTTMFC_BAD_FIELD_IDX)                                                \
    E(OFPBPC_BAD_EXPERIMENTER)                                              \
    E(OFPBPC_BAD_EXP_TYPE)                                                  \
    E(NXR_NOT_SUPPORTED)                                                    \
    E(NXR_STALE)                                                            \
    E(OFPERR_NOMEM)

enum fdp_ofperr {
    FDP_OFPERR_NONE = 0,
    /* Values start above every errno so that a stray errno is never
     * mistaken for one of these. */
    FDP__OFPERR_BASE = 0x10000,
#define FDP__OFPERR_ENUM(NAME) FDP_##NAME,
    FDP_OFPERRS(FDP__OFPERR_ENUM)
#undef FDP__OFPERR_ENUM
    FDP__OFPERR_END
};

/* "OFPBRC_BAD_LEN" for FDP_OFPBRC_BAD_LEN (lib/ofp-msgs.c). */
const char *fdp_ofperr_name(enum fdp_ofperr);

/* ---------------------------------------------------------------------- */
/* Encoding: a growable buffer.                                            */

struct fdp__ofpbuf {
    uint8_t *data;
    size_t size;                /* Bytes written. */
    size_t alloc;
    bool failed;                /* An allocation failed: the contents are
                                 * incomplete and must not be sent. */
};

static inline void
fdp__ofpbuf_init(struct fdp__ofpbuf *b)
{
    memset(b, 0, sizeof *b);
}

static inline void
fdp__ofpbuf_uninit(struct fdp__ofpbuf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static inline bool
fdp__ofpbuf_failed(const struct fdp__ofpbuf *b)
{
    return b->failed;
}

/* Makes room for 'n' more bytes; false (and 'failed') if it cannot. */
static inline bool
fdp__ofpbuf_reserve(struct fdp__ofpbuf *b, size_t n)
{
    if (b->failed) {
        return false;
    }
    if (n > SIZE_MAX / 2 - b->size) {
        b->failed = true;
        return false;
    }
    if (b->size + n > b->alloc) {
        size_t alloc = b->alloc ? b->alloc : 64;
        while (alloc < b->size + n) {
            alloc *= 2;
        }
        uint8_t *data = realloc(b->data, alloc);
        if (!data) {
            b->failed = true;
            return false;
        }
        b->data = data;
        b->alloc = alloc;
    }
    return true;
}

/* Appends 'n' zero bytes; returns where they start (NULL on failure). */
static inline void *
fdp__ofpbuf_put_zeros(struct fdp__ofpbuf *b, size_t n)
{
    if (!fdp__ofpbuf_reserve(b, n)) {
        return NULL;
    }
    void *p = b->data + b->size;
    memset(p, 0, n);
    b->size += n;
    return p;
}

static inline void
fdp__ofpbuf_put(struct fdp__ofpbuf *b, const void *p, size_t n)
{
    if (n && fdp__ofpbuf_reserve(b, n)) {
        memcpy(b->data + b->size, p, n);
        b->size += n;
    }
}

static inline void
fdp__ofpbuf_put_u8(struct fdp__ofpbuf *b, uint8_t v)
{
    fdp__ofpbuf_put(b, &v, 1);
}

static inline void
fdp__ofpbuf_put_be16(struct fdp__ofpbuf *b, uint16_t v)
{
    uint8_t p[2] = { (uint8_t) (v >> 8), (uint8_t) v };
    fdp__ofpbuf_put(b, p, 2);
}

static inline void
fdp__ofpbuf_put_be32(struct fdp__ofpbuf *b, uint32_t v)
{
    uint8_t p[4] = { (uint8_t) (v >> 24), (uint8_t) (v >> 16),
                     (uint8_t) (v >> 8), (uint8_t) v };
    fdp__ofpbuf_put(b, p, 4);
}

static inline void
fdp__ofpbuf_put_be64(struct fdp__ofpbuf *b, uint64_t v)
{
    fdp__ofpbuf_put_be32(b, (uint32_t) (v >> 32));
    fdp__ofpbuf_put_be32(b, (uint32_t) v);
}

/* Pads with zeros to a multiple of 'align' bytes counted from 'start'. */
static inline void
fdp__ofpbuf_pad(struct fdp__ofpbuf *b, size_t start, size_t align)
{
    size_t len = b->size - start;
    fdp__ofpbuf_put_zeros(b, (align - len % align) % align);
}

/* Big-endian stores at a known offset (lengths filled in afterwards). */
static inline void
fdp__ofp_set_be16(void *p, uint16_t v)
{
    uint8_t *q = p;
    q[0] = (uint8_t) (v >> 8);
    q[1] = (uint8_t) v;
}

static inline void
fdp__ofp_set_be32(void *p, uint32_t v)
{
    uint8_t *q = p;
    q[0] = (uint8_t) (v >> 24);
    q[1] = (uint8_t) (v >> 16);
    q[2] = (uint8_t) (v >> 8);
    q[3] = (uint8_t) v;
}

static inline uint16_t
fdp__ofp_get_be16(const void *p)
{
    const uint8_t *q = p;
    return (uint16_t) (q[0] << 8 | q[1]);
}

static inline uint32_t
fdp__ofp_get_be32(const void *p)
{
    const uint8_t *q = p;
    return (uint32_t) q[0] << 24 | (uint32_t) q[1] << 16
           | (uint32_t) q[2] << 8 | q[3];
}

static inline uint64_t
fdp__ofp_get_be64(const void *p)
{
    const uint8_t *q = p;
    return (uint64_t) fdp__ofp_get_be32(q) << 32 | fdp__ofp_get_be32(q + 4);
}

/* ---------------------------------------------------------------------- */
/* Decoding: a bounds-checked reader.                                      */

struct fdp__ofp_reader {
    const uint8_t *p;
    size_t left;
};

static inline void
fdp__ofp_reader_init(struct fdp__ofp_reader *r, const void *p, size_t n)
{
    r->p = p;
    r->left = n;
}

/* Returns the next 'n' bytes and steps over them, or NULL (reading
 * nothing) if fewer are left. */
static inline const uint8_t *
fdp__ofp_pull(struct fdp__ofp_reader *r, size_t n)
{
    if (n > r->left) {
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    r->left -= n;
    return p;
}

/* A sub-reader over the next 'n' bytes, which 'r' steps over; false if
 * fewer are left. */
static inline bool
fdp__ofp_pull_reader(struct fdp__ofp_reader *r, size_t n,
                     struct fdp__ofp_reader *sub)
{
    const uint8_t *p = fdp__ofp_pull(r, n);
    if (!p) {
        return false;
    }
    fdp__ofp_reader_init(sub, p, n);
    return true;
}

#endif /* FDP_OFP_COMMON_H */
