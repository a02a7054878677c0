/*
 * The OpenFlow messages that carry a match (lib/ofp-msgs.h): flow mods,
 * flow statistics requests and replies, flow removed.
 *
 * Theory of operation.  Each message has three wire forms, chosen by its
 * raw (lib/ofp-msgs.h's table): OpenFlow 1.0's fixed 40-byte ofp_match
 * followed by 1.0 actions; OpenFlow 1.1+'s ofp_match (OXM) followed by
 * instructions; and Nicira's NXM form (NXT_FLOW_MOD, NXST_FLOW,
 * NXT_FLOW_REMOVED) with a match_len, NXM entries padded to 8 bytes, then
 * actions.  The match codecs are lib/ofp-match.h's, the action codecs
 * lib/ofp-actions.h's; this file reads and writes the fixed parts and the
 * semantics Open vSwitch gives them (lib/ofp-flow.c there):
 *   - a 1.0 or NX flow mod's command carries the table in its high byte
 *     when the connection enabled NXT_FLOW_MOD_TABLE_ID, else the table
 *     is 0xff ("any": table 0 for adds);
 *   - a 1.1+ flow mod's table 0xff is allowed only in deletes
 *     (OFPFMFC_BAD_TABLE_ID otherwise);
 *   - an add sets the cookie and never selects by one; modify and delete
 *     select by cookie/cookie_mask (1.1+ fields, NXM_NX_COOKIE(_W) entries
 *     in an NXM match; OpenFlow 1.0 cannot select by cookie);
 *   - in 1.0 and 1.1 an add always resets counters (OFPFF_RESET_COUNTS
 *     exists from 1.2); 1.0's OFPFF_EMERG is refused (OFPFMFC_TABLE_FULL);
 *   - importance exists from 1.4, and only adds carry it;
 *   - a 1.0 flow whose match wildcards nothing has priority 0xffff;
 *   - OpenFlow 1.5 describes a flow in a flow stats reply with its
 *     counters as OXS statistics (duration, idle time, packets, bytes:
 *     fdp__ofp_put_oxs_stats()) between the match and the instructions.
 * Decoders return 0 or an enum fdp_ofperr; on error they leave nothing
 * allocated.
 */
#include <config.h>

#include "lib/ofp-msgs.h"

#include <errno.h>
#include <stdio.h>

#include <flowdp/actions.h>
#include <flowdp/match.h>
#include "lib/ofp-actions.h"
#include "lib/ofp-match.h"

/* NXM_NX_COOKIE and NXM_NX_COOKIE_W, the pseudo-fields by which NXM flow
 * mods and flow stats requests select flows by cookie. */
#define NXM_NX_COOKIE FDP_NXM_HEADER(0x0001, 30, 0, 8)
#define NXM_NX_COOKIE_W FDP_NXM_HEADER(0x0001, 30, 1, 16)

/* OpenFlow 1.0 match wildcards: all of them (an exact-match flow has
 * none). */
#define OFPFW10_ALL 0x3fffffu

/* Flow mod flag bits per version (Open vSwitch's ofputil_flow_mod_flags
 * table): 1.0's bit 2 is EMERG, 1.2+'s is RESET_COUNTS; NO_PKT_COUNTS and
 * NO_BYT_COUNTS exist from 1.3. */
#define OFPFF10_EMERG (1 << 2)

static int
decode_flags(uint16_t raw, uint8_t command, uint8_t version, uint16_t *flags)
{
    uint16_t known = FDP_OFPFF_SEND_FLOW_REM | FDP_OFPFF_CHECK_OVERLAP;
    if (version >= FDP_OFP12) {
        known |= FDP_OFPFF_RESET_COUNTS;
    }
    if (version >= FDP_OFP13) {
        known |= FDP_OFPFF_NO_PKT_COUNTS | FDP_OFPFF_NO_BYT_COUNTS;
    }
    if (version == FDP_OFP10 && raw & OFPFF10_EMERG) {
        /* The emergency flow cache, which OpenFlow 1.0.1 dropped. */
        return FDP_OFPFMFC_TABLE_FULL;
    }
    if (raw & ~known) {
        return FDP_OFPFMFC_BAD_FLAGS;
    }
    *flags = raw;
    if (version <= FDP_OFP11 && command == FDP_OFPFC_ADD) {
        *flags |= FDP_OFPFF_RESET_COUNTS;
    }
    return 0;
}

static uint16_t
encode_flags(uint16_t flags, uint8_t version)
{
    uint16_t known = FDP_OFPFF_SEND_FLOW_REM | FDP_OFPFF_CHECK_OVERLAP;
    if (version >= FDP_OFP12) {
        known |= FDP_OFPFF_RESET_COUNTS;
    }
    if (version >= FDP_OFP13) {
        known |= FDP_OFPFF_NO_PKT_COUNTS | FDP_OFPFF_NO_BYT_COUNTS;
    }
    return flags & known;
}

/* 1.1+'s 32-bit ports: reserved ports are 0xffffff00 and above; values
 * between the 16-bit range and those are errors (as Open vSwitch's
 * ofputil_port_from_ofp11()). */
static int
check_port11(uint32_t port)
{
    return port < 0xff00 || port >= 0xffffff00u ? 0 : FDP_OFPBRC_BAD_PORT;
}

/* Reads an NXM match of 'match_len' bytes (then its padding) from 'r' into
 * 'm', taking NXM_NX_COOKIE(_W) entries out into '*cookie' and
 * '*cookie_mask' if those are nonnull (else they are OFPBMC_BAD_FIELD). */
static int
pull_nxm_with_cookie(struct fdp__ofp_reader *r, size_t match_len,
                     const struct fdp_tlv_map *tlv, struct fdp_match *m,
                     uint64_t *cookie, uint64_t *cookie_mask)
{
    struct fdp__ofp_reader whole;
    size_t padded = (match_len + 7) / 8 * 8;
    if (!fdp__ofp_pull_reader(r, padded, &whole)) {
        return FDP_OFPBMC_BAD_LEN;
    }
    uint8_t *rest = malloc(match_len ? match_len : 1);
    if (!rest) {
        return FDP_OFPERR_NOMEM;
    }
    size_t n_rest = 0;
    bool have_cookie = false;
    struct fdp__ofp_reader e;
    fdp__ofp_reader_init(&e, whole.p, match_len);
    int error = 0;
    while (e.left && !error) {
        if (e.left < 4) {
            error = FDP_OFPBMC_BAD_LEN;
            break;
        }
        uint32_t header = fdp__ofp_get_be32(e.p);
        size_t len = 4 + (header & 0xff);
        const uint8_t *entry = fdp__ofp_pull(&e, len);
        if (!entry) {
            error = FDP_OFPBMC_BAD_LEN;
        } else if (header == NXM_NX_COOKIE || header == NXM_NX_COOKIE_W) {
            if (!cookie) {
                error = FDP_OFPBMC_BAD_FIELD;
            } else if (have_cookie) {
                error = FDP_OFPBMC_DUP_FIELD;
            } else {
                have_cookie = true;
                *cookie_mask = (header == NXM_NX_COOKIE_W
                                ? fdp__ofp_get_be64(entry + 12)
                                : UINT64_MAX);
                *cookie = fdp__ofp_get_be64(entry + 4) & *cookie_mask;
            }
        } else {
            memcpy(rest + n_rest, entry, len);
            n_rest += len;
        }
    }
    if (!error) {
        /* The padding after the match must be zeros, as Open vSwitch
         * checks. */
        for (size_t i = match_len; i < padded; i++) {
            if (whole.p[i]) {
                error = FDP_OFPBMC_BAD_LEN;
                break;
            }
        }
    }
    if (!error) {
        struct fdp__ofp_reader rr;
        fdp__ofp_reader_init(&rr, rest, n_rest);
        error = fdp__nx_match_pull(&rr, n_rest, tlv, m);
    }
    free(rest);
    return error;
}

/* Appends 'm' and the cookie selector as NXM entries, padded to 8 bytes;
 * returns the unpadded length or -1. */
static int
put_nxm_with_cookie(struct fdp__ofpbuf *b, const struct fdp_match *m,
                    uint64_t cookie, uint64_t cookie_mask,
                    const struct fdp_tlv_map *tlv)
{
    size_t start = b->size;
    int n = fdp__nx_match_put(b, m, false, FDP_OFP10, tlv);
    if (n < 0) {
        return -1;
    }
    if (cookie_mask) {
        bool masked = cookie_mask != UINT64_MAX;
        fdp__ofpbuf_put_be32(b, masked ? NXM_NX_COOKIE_W : NXM_NX_COOKIE);
        fdp__ofpbuf_put_be64(b, cookie & cookie_mask);
        if (masked) {
            fdp__ofpbuf_put_be64(b, cookie_mask);
        }
    }
    int len = (int) (b->size - start);
    fdp__ofpbuf_pad(b, start, 8);
    return len;
}

/* The actions or instructions that end a message, as 'version' writes
 * them (1.0: actions; 1.1+: instructions, whatever the raw). */
static int
pull_actions(struct fdp__ofp_reader *r, uint8_t version,
             const struct fdp_tlv_map *tlv, struct fdp_actions **actsp)
{
    /* A flow's: in 1.0, an action list whose NX write_metadata and
     * goto_table are instructions (fdp__ofp_instructions_pull() reads it
     * so). */
    return fdp__ofp_instructions_pull(r, r->left, version, tlv, actsp);
}

/* A flow's actions, written for its match: flowdp's one tp_dst is OVS's
 * tcp_dst, udp_dst or sctp_dst by the flow's protocol, and mod_vlan_pcp
 * pushes a tag only where the match does not promise one
 * (fdp__ofp_instructions_put_match()). */
static int
put_actions(struct fdp__ofpbuf *b, const struct fdp_flow_spec *spec,
            uint8_t version, const struct fdp_tlv_map *tlv)
{
    if (!spec->actions) {
        return 0;
    }
    int n = (version == FDP_OFP10
             ? fdp__ofp_actions_put_match(b, spec->actions, version, tlv,
                                          spec->match)
             : fdp__ofp_instructions_put_match(b, spec->actions, version,
                                               tlv, spec->match));
    return n < 0 ? EINVAL : 0;
}

/* ---------------------------------------------------------------------- */
/* Flow mods.                                                              */

void
fdp_ofp_flow_mod_destroy(struct fdp_ofp_flow_mod *fm)
{
    if (fm) {
        fdp_flow_spec_destroy(&fm->spec);
        memset(&fm->spec, 0, sizeof fm->spec);
    }
}

static int
decode_flow_mod__(const uint8_t *msg, size_t len,
                  const struct fdp_tlv_map *tlv, bool table_id_enabled,
                  struct fdp_ofp_flow_mod *fm)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_FLOW_MOD) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    struct fdp__ofp_reader r;
    fdp__ofp_reader_init(&r, msg + oh.hdr_len, len - oh.hdr_len);
    struct fdp_flow_spec *spec = &fm->spec;
    spec->match = fdp_match_create();
    if (!spec->match) {
        return FDP_OFPERR_NOMEM;
    }

    uint16_t raw_flags;
    uint16_t command;
    if (oh.raw == FDP_OFPRAW_OFPT11_FLOW_MOD) {
        const uint8_t *p = fdp__ofp_pull(&r, 40);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;
        }
        error = fdp__ofp11_match_pull(&r, tlv, spec->match);
        if (error) {
            return error;
        }
        uint64_t cookie = fdp__ofp_get_be64(p);
        uint64_t cookie_mask = fdp__ofp_get_be64(p + 8);
        uint8_t table_id = p[16];
        command = p[17];
        if (command == FDP_OFPFC_ADD
            || (oh.version == FDP_OFP11
                && (command == FDP_OFPFC_MODIFY
                    || command == FDP_OFPFC_MODIFY_STRICT)
                && !cookie_mask)) {
            spec->cookie = cookie;
            spec->cookie_mask = 0;
            fm->new_cookie = cookie;
        } else {
            spec->cookie = cookie;
            spec->cookie_mask = cookie_mask;
            fm->new_cookie = UINT64_MAX;
        }
        if (table_id == FDP_OFPTT_ALL
            && (oh.version == FDP_OFP11
                || (command != FDP_OFPFC_DELETE
                    && command != FDP_OFPFC_DELETE_STRICT))) {
            return FDP_OFPFMFC_BAD_TABLE_ID;
        }
        spec->table_id = table_id;
        spec->idle_timeout = fdp__ofp_get_be16(p + 18);
        spec->hard_timeout = fdp__ofp_get_be16(p + 20);
        spec->priority = fdp__ofp_get_be16(p + 22);
        fm->buffer_id = fdp__ofp_get_be32(p + 24);
        fm->out_port = fdp__ofp_get_be32(p + 28);
        error = check_port11(fm->out_port);
        if (error) {
            return error;
        }
        fm->out_group = (command == FDP_OFPFC_DELETE
                         || command == FDP_OFPFC_DELETE_STRICT
                         ? fdp__ofp_get_be32(p + 32) : FDP_OFPG_ANY);
        raw_flags = fdp__ofp_get_be16(p + 36);
        fm->importance = (oh.version >= FDP_OFP14 && command == FDP_OFPFC_ADD
                          ? fdp__ofp_get_be16(p + 38) : 0);
    } else {
        const uint8_t *p;
        if (oh.raw == FDP_OFPRAW_OFPT10_FLOW_MOD) {
            p = fdp__ofp_pull(&r, 64);
            if (!p) {
                return FDP_OFPBRC_BAD_LEN;
            }
            error = fdp__ofp10_match_decode(p, spec->match);
            if (error) {
                return error;
            }
            uint32_t wildcards = fdp__ofp_get_be32(p);
            p += 40;
            spec->priority = (wildcards & OFPFW10_ALL
                              ? fdp__ofp_get_be16(p + 14) : UINT16_MAX);
            spec->cookie_mask = 0;
            raw_flags = fdp__ofp_get_be16(p + 22);
        } else {
            p = fdp__ofp_pull(&r, 32);
            if (!p) {
                return FDP_OFPBRC_BAD_LEN;
            }
            uint64_t sel = 0, sel_mask = 0;
            error = pull_nxm_with_cookie(&r, fdp__ofp_get_be16(p + 24), tlv,
                                         spec->match, &sel, &sel_mask);
            if (error) {
                return error;
            }
            if ((fdp__ofp_get_be16(p + 8) & 0xff) == FDP_OFPFC_ADD
                && sel_mask) {
                /* An add sets a cookie; it cannot select by one. */
                return FDP_NXBRC_NXM_INVALID;
            }
            spec->priority = fdp__ofp_get_be16(p + 14);
            spec->cookie_mask = sel_mask;
            raw_flags = fdp__ofp_get_be16(p + 22);
            spec->cookie = sel;
        }
        /* The layouts agree from the cookie on: cookie, command, idle,
         * hard, priority, buffer_id, out_port (16 bits), flags. */
        fm->new_cookie = fdp__ofp_get_be64(p);
        command = fdp__ofp_get_be16(p + 8);
        spec->idle_timeout = fdp__ofp_get_be16(p + 10);
        spec->hard_timeout = fdp__ofp_get_be16(p + 12);
        fm->buffer_id = fdp__ofp_get_be32(p + 16);
        fm->out_port = fdp_ofp_port_from_ofp10(fdp__ofp_get_be16(p + 20));
        fm->out_group = FDP_OFPG_ANY;
        fm->importance = 0;
        if (table_id_enabled) {
            spec->table_id = (uint8_t) (command >> 8);
            command &= 0xff;
        } else {
            spec->table_id = FDP_OFPTT_ALL;
        }
        if ((command & 0xff) == FDP_OFPFC_ADD || !spec->cookie_mask) {
            spec->cookie = fm->new_cookie;
        }
    }
    if (command > FDP_OFPFC_DELETE_STRICT) {
        return FDP_OFPFMFC_BAD_COMMAND;
    }
    fm->command = (enum fdp_ofp_flow_command) command;
    fm->table_given = spec->table_id != FDP_OFPTT_ALL;
    spec->cookie_given = true;

    error = pull_actions(&r, oh.version, tlv, &spec->actions);
    if (error) {
        return error;
    }
    error = decode_flags(raw_flags, (uint8_t) command, oh.version,
                         &fm->flags);
    /* The flags the flow keeps (an add's; a modify keeps the flow's). */
    spec->flags = fm->flags & FDP_FLOW_F_ALL;
    return error;
}

int
fdp_ofp_decode_flow_mod(const uint8_t *msg, size_t len,
                        const struct fdp_tlv_map *tlv, bool table_id_enabled,
                        struct fdp_ofp_flow_mod *fm)
{
    memset(fm, 0, sizeof *fm);
    int error = decode_flow_mod__(msg, len, tlv, table_id_enabled, fm);
    if (error) {
        fdp_ofp_flow_mod_destroy(fm);
    }
    return error;
}

int
fdp_ofp_encode_flow_mod(struct fdp__ofpbuf *b,
                        const struct fdp_ofp_flow_mod *fm,
                        enum fdp_ofpraw raw, uint8_t version, uint32_t xid,
                        const struct fdp_tlv_map *tlv)
{
    if (!fdp_ofpraw_in_version(raw, version)
        || fdp_ofpraw_type(raw) != FDP_OFPTYPE_FLOW_MOD) {
        return EINVAL;
    }
    const struct fdp_flow_spec *spec = &fm->spec;
    size_t start = fdp_ofp_start(b, raw, version, xid);
    uint16_t flags = encode_flags(fm->flags, version);
    uint64_t new_cookie = (fm->new_cookie == UINT64_MAX ? spec->cookie
                           : fm->new_cookie);
    /* 1.0 and NX carry the table in the command's high byte; a table of
     * 0xff means none was given. */
    uint16_t tid_command = (uint16_t) (fm->command
                                       | (spec->table_id != FDP_OFPTT_ALL
                                          ? spec->table_id << 8 : 0));
    int error = 0;

    if (raw == FDP_OFPRAW_OFPT11_FLOW_MOD) {
        bool adds = (fm->command == FDP_OFPFC_ADD
                     || (version == FDP_OFP11 && !spec->cookie_mask
                         && (fm->command == FDP_OFPFC_MODIFY
                             || fm->command == FDP_OFPFC_MODIFY_STRICT)));
        fdp__ofpbuf_put_be64(b, adds ? new_cookie
                             : spec->cookie & spec->cookie_mask);
        fdp__ofpbuf_put_be64(b, spec->cookie_mask);
        bool deletes = (fm->command == FDP_OFPFC_DELETE
                        || fm->command == FDP_OFPFC_DELETE_STRICT);
        fdp__ofpbuf_put_u8(b, (spec->table_id != FDP_OFPTT_ALL
                               || (version != FDP_OFP11 && deletes)
                               ? spec->table_id : 0));
        fdp__ofpbuf_put_u8(b, (uint8_t) fm->command);
        fdp__ofpbuf_put_be16(b, spec->idle_timeout);
        fdp__ofpbuf_put_be16(b, spec->hard_timeout);
        fdp__ofpbuf_put_be16(b, spec->priority);
        fdp__ofpbuf_put_be32(b, fm->buffer_id);
        fdp__ofpbuf_put_be32(b, fm->out_port);
        fdp__ofpbuf_put_be32(b, fm->out_group);
        fdp__ofpbuf_put_be16(b, flags);
        fdp__ofpbuf_put_be16(b, (version >= FDP_OFP14
                                 && fm->command == FDP_OFPFC_ADD
                                 ? fm->importance : 0));
        if (fdp__ofp11_match_put(b, spec->match, version, tlv) < 0) {
            error = EINVAL;
        }
    } else if (raw == FDP_OFPRAW_OFPT10_FLOW_MOD) {
        uint8_t *m = fdp__ofpbuf_put_zeros(b, FDP_OFP10_MATCH_LEN);
        if (m && fdp__ofp10_match_encode(spec->match, m) < 0) {
            error = EINVAL;
        }
        fdp__ofpbuf_put_be64(b, new_cookie);
        fdp__ofpbuf_put_be16(b, tid_command);
        fdp__ofpbuf_put_be16(b, spec->idle_timeout);
        fdp__ofpbuf_put_be16(b, spec->hard_timeout);
        fdp__ofpbuf_put_be16(b, spec->priority);
        fdp__ofpbuf_put_be32(b, fm->buffer_id);
        fdp__ofpbuf_put_be16(b, fdp_ofp_port_to_ofp10(fm->out_port));
        fdp__ofpbuf_put_be16(b, flags);
    } else {
        size_t fixed = b->size;
        fdp__ofpbuf_put_be64(b, new_cookie);
        fdp__ofpbuf_put_be16(b, tid_command);
        fdp__ofpbuf_put_be16(b, spec->idle_timeout);
        fdp__ofpbuf_put_be16(b, spec->hard_timeout);
        fdp__ofpbuf_put_be16(b, spec->priority);
        fdp__ofpbuf_put_be32(b, fm->buffer_id);
        fdp__ofpbuf_put_be16(b, fdp_ofp_port_to_ofp10(fm->out_port));
        fdp__ofpbuf_put_be16(b, flags);
        fdp__ofpbuf_put_zeros(b, 8);    /* match_len and padding. */
        int match_len = put_nxm_with_cookie(b, spec->match, spec->cookie,
                                            spec->cookie_mask, tlv);
        if (match_len < 0) {
            error = EINVAL;
        } else if (!fdp__ofpbuf_failed(b)) {
            fdp__ofp_set_be16(b->data + fixed + 24, (uint16_t) match_len);
        }
    }
    if (!error) {
        error = put_actions(b, spec, version, tlv);
    }
    if (error) {
        b->size = start;
        return error;
    }
    return fdp_ofp_finish(b, start);
}

/* ---------------------------------------------------------------------- */
/* Flow statistics requests.                                               */

void
fdp_ofp_flow_stats_request_destroy(struct fdp_ofp_flow_stats_request *fsr)
{
    if (fsr) {
        fdp_match_destroy(fsr->match);
        fsr->match = NULL;
    }
}

static int
decode_flow_stats_request__(const uint8_t *msg, size_t len,
                            const struct fdp_tlv_map *tlv,
                            struct fdp_ofp_flow_stats_request *fsr)
{
    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, len, &oh);
    if (error) {
        return error;
    }
    if (oh.type != FDP_OFPTYPE_FLOW_STATS_REQUEST
        && oh.type != FDP_OFPTYPE_AGGREGATE_STATS_REQUEST) {
        return FDP_OFPBRC_BAD_TYPE;
    }
    fsr->aggregate = oh.type == FDP_OFPTYPE_AGGREGATE_STATS_REQUEST;
    fsr->match = fdp_match_create();
    if (!fsr->match) {
        return FDP_OFPERR_NOMEM;
    }
    struct fdp__ofp_reader r;
    fdp__ofp_reader_init(&r, msg + oh.hdr_len, len - oh.hdr_len);
    switch (oh.raw) {
    case FDP_OFPRAW_OFPST10_FLOW_REQUEST:
    case FDP_OFPRAW_OFPST10_AGGREGATE_REQUEST: {
        const uint8_t *p = fdp__ofp_pull(&r, 44);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;
        }
        error = fdp__ofp10_match_decode(p, fsr->match);
        fsr->table_id = p[40];
        fsr->out_port = fdp_ofp_port_from_ofp10(fdp__ofp_get_be16(p + 42));
        fsr->out_group = FDP_OFPG_ANY;
        fsr->cookie = fsr->cookie_mask = 0;
        return error;
    }
    case FDP_OFPRAW_NXST_FLOW_REQUEST:
    case FDP_OFPRAW_NXST_AGGREGATE_REQUEST: {
        const uint8_t *p = fdp__ofp_pull(&r, 8);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;
        }
        fsr->out_port = fdp_ofp_port_from_ofp10(fdp__ofp_get_be16(p));
        size_t match_len = fdp__ofp_get_be16(p + 2);
        fsr->table_id = p[4];
        fsr->out_group = FDP_OFPG_ANY;
        error = pull_nxm_with_cookie(&r, match_len, tlv, fsr->match,
                                     &fsr->cookie, &fsr->cookie_mask);
        if (!error && r.left) {
            error = FDP_OFPBRC_BAD_LEN;
        }
        return error;
    }
    default: {
        const uint8_t *p = fdp__ofp_pull(&r, 32);
        if (!p) {
            return FDP_OFPBRC_BAD_LEN;
        }
        fsr->table_id = p[0];
        fsr->out_port = fdp__ofp_get_be32(p + 4);
        error = check_port11(fsr->out_port);
        if (error) {
            return error;
        }
        fsr->out_group = fdp__ofp_get_be32(p + 8);
        fsr->cookie = fdp__ofp_get_be64(p + 16);
        fsr->cookie_mask = fdp__ofp_get_be64(p + 24);
        return fdp__ofp11_match_pull(&r, tlv, fsr->match);
    }
    }
}

int
fdp_ofp_decode_flow_stats_request(const uint8_t *msg, size_t len,
                                  const struct fdp_tlv_map *tlv,
                                  struct fdp_ofp_flow_stats_request *fsr)
{
    memset(fsr, 0, sizeof *fsr);
    int error = decode_flow_stats_request__(msg, len, tlv, fsr);
    if (error) {
        fdp_ofp_flow_stats_request_destroy(fsr);
    }
    return error;
}

int
fdp_ofp_encode_flow_stats_request(struct fdp__ofpbuf *b,
                                  const struct fdp_ofp_flow_stats_request
                                  *fsr, enum fdp_ofpraw raw, uint8_t version,
                                  uint32_t xid, const struct fdp_tlv_map *tlv)
{
    enum fdp_ofptype type = fdp_ofpraw_type(raw);
    if (!fdp_ofpraw_in_version(raw, version)
        || type != (fsr->aggregate ? FDP_OFPTYPE_AGGREGATE_STATS_REQUEST
                    : FDP_OFPTYPE_FLOW_STATS_REQUEST)) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, xid);
    int error = 0;
    switch (raw) {
    case FDP_OFPRAW_OFPST10_FLOW_REQUEST:
    case FDP_OFPRAW_OFPST10_AGGREGATE_REQUEST: {
        uint8_t *m = fdp__ofpbuf_put_zeros(b, FDP_OFP10_MATCH_LEN);
        if (m && fdp__ofp10_match_encode(fsr->match, m) < 0) {
            error = EINVAL;
        }
        fdp__ofpbuf_put_u8(b, fsr->table_id);
        fdp__ofpbuf_put_u8(b, 0);
        fdp__ofpbuf_put_be16(b, fdp_ofp_port_to_ofp10(fsr->out_port));
        break;
    }
    case FDP_OFPRAW_NXST_FLOW_REQUEST:
    case FDP_OFPRAW_NXST_AGGREGATE_REQUEST: {
        size_t fixed = b->size;
        fdp__ofpbuf_put_be16(b, fdp_ofp_port_to_ofp10(fsr->out_port));
        fdp__ofpbuf_put_be16(b, 0);
        fdp__ofpbuf_put_u8(b, fsr->table_id);
        fdp__ofpbuf_put_zeros(b, 3);
        int match_len = put_nxm_with_cookie(b, fsr->match, fsr->cookie,
                                            fsr->cookie_mask, tlv);
        if (match_len < 0) {
            error = EINVAL;
        } else if (!fdp__ofpbuf_failed(b)) {
            fdp__ofp_set_be16(b->data + fixed + 2, (uint16_t) match_len);
        }
        break;
    }
    default:
        fdp__ofpbuf_put_u8(b, fsr->table_id);
        fdp__ofpbuf_put_zeros(b, 3);
        fdp__ofpbuf_put_be32(b, fsr->out_port);
        fdp__ofpbuf_put_be32(b, fsr->out_group);
        fdp__ofpbuf_put_zeros(b, 4);
        fdp__ofpbuf_put_be64(b, fsr->cookie);
        fdp__ofpbuf_put_be64(b, fsr->cookie_mask);
        if (fdp__ofp11_match_put(b, fsr->match, version, tlv) < 0) {
            error = EINVAL;
        }
        break;
    }
    if (error) {
        b->size = start;
        return error;
    }
    return fdp_ofp_finish(b, start);
}

/* ---------------------------------------------------------------------- */
/* OpenFlow 1.5's OXS statistics.                                          */

/* The basic class and its fields (OpenFlow 1.5, 7.2.4). */
#define OXS_CLASS_BASIC 0x8002
enum {
    OXS_DURATION = 0,
    OXS_IDLE_TIME = 1,
    OXS_FLOW_COUNT = 3,
    OXS_PACKET_COUNT = 4,
    OXS_BYTE_COUNT = 5,
};

/* An entry's 32-bit header: class, field (7 bits), has-mask (0), length of
 * the value in bytes. */
static uint32_t
oxs_header(unsigned int field, unsigned int len)
{
    return (uint32_t) OXS_CLASS_BASIC << 16 | field << 9 | len;
}

void
fdp__ofp_put_oxs_stats(struct fdp__ofpbuf *b, const struct fdp__oxs_stats *st)
{
    size_t start = b->size;

    fdp__ofpbuf_put_be16(b, 0);         /* reserved */
    fdp__ofpbuf_put_be16(b, 0);         /* length, below */
    /* In Open vSwitch's order. */
    if (st->has_duration) {
        fdp__ofpbuf_put_be32(b, oxs_header(OXS_DURATION, 8));
        fdp__ofpbuf_put_be64(b, (uint64_t) st->duration_sec << 32
                                | st->duration_nsec);
    }
    if (st->has_idle_time) {
        fdp__ofpbuf_put_be32(b, oxs_header(OXS_IDLE_TIME, 8));
        fdp__ofpbuf_put_be64(b, (uint64_t) st->idle_time_sec << 32);
    }
    if (st->has_packet_count) {
        fdp__ofpbuf_put_be32(b, oxs_header(OXS_PACKET_COUNT, 8));
        fdp__ofpbuf_put_be64(b, st->packet_count);
    }
    if (st->has_byte_count) {
        fdp__ofpbuf_put_be32(b, oxs_header(OXS_BYTE_COUNT, 8));
        fdp__ofpbuf_put_be64(b, st->byte_count);
    }
    if (st->has_flow_count) {
        fdp__ofpbuf_put_be32(b, oxs_header(OXS_FLOW_COUNT, 4));
        fdp__ofpbuf_put_be32(b, st->flow_count);
    }
    if (!fdp__ofpbuf_failed(b)) {
        fdp__ofp_set_be16(b->data + start + 2, (uint16_t) (b->size - start));
    }
    fdp__ofpbuf_pad(b, start, 8);
}

int
fdp__ofp_pull_oxs_stats(struct fdp__ofp_reader *r, struct fdp__oxs_stats *st)
{
    memset(st, 0, sizeof *st);
    if (r->left < 4) {
        return FDP_OFPBRC_BAD_LEN;
    }
    size_t len = fdp__ofp_get_be16(r->p + 2);
    struct fdp__ofp_reader e;
    if (len < 4 || !fdp__ofp_pull_reader(r, (len + 7) / 8 * 8, &e)) {
        return FDP_OFPBRC_BAD_LEN;
    }
    e.left = len;
    fdp__ofp_pull(&e, 4);
    while (e.left) {
        const uint8_t *h = fdp__ofp_pull(&e, 4);
        if (!h) {
            return FDP_OFPBRC_BAD_LEN;
        }
        uint32_t header = fdp__ofp_get_be32(h);
        unsigned int n = header & 0xff;
        const uint8_t *v = fdp__ofp_pull(&e, n);
        if (!v) {
            return FDP_OFPBRC_BAD_LEN;
        }
        if (header >> 16 != OXS_CLASS_BASIC || header & 0x100) {
            continue;
        }
        unsigned int field = header >> 9 & 0x7f;
        if (field == OXS_FLOW_COUNT && n == 4) {
            st->has_flow_count = true;
            st->flow_count = fdp__ofp_get_be32(v);
        } else if (n != 8) {
            continue;
        } else if (field == OXS_DURATION) {
            st->has_duration = true;
            st->duration_sec = fdp__ofp_get_be32(v);
            st->duration_nsec = fdp__ofp_get_be32(v + 4);
        } else if (field == OXS_IDLE_TIME) {
            st->has_idle_time = true;
            st->idle_time_sec = fdp__ofp_get_be32(v);
        } else if (field == OXS_PACKET_COUNT) {
            st->has_packet_count = true;
            st->packet_count = fdp__ofp_get_be64(v);
        } else if (field == OXS_BYTE_COUNT) {
            st->has_byte_count = true;
            st->byte_count = fdp__ofp_get_be64(v);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Flow statistics replies.                                                */

/* NXST_FLOW's ages are seconds plus one, 0 meaning unknown (UINT16_MAX in
 * struct fdp_ofp_flow_stats). */
static uint16_t
age_to_wire(uint16_t age)
{
    return age == UINT16_MAX ? 0 : (uint16_t) (age + 1);
}

static uint16_t
age_from_wire(uint16_t wire)
{
    return wire ? (uint16_t) (wire - 1) : UINT16_MAX;
}

/* The raw of the replies 'mp' is filling. */
static enum fdp_ofpraw
mp_raw(const struct fdp_ofpmp *mp, uint8_t *version)
{
    struct fdp_ofp_header oh;
    const uint8_t *p = mp->b->data + mp->start;
    if (fdp_ofp_decode_header_partial(p, mp->b->size - mp->start, &oh)) {
        return FDP_OFPRAW_NONE;
    }
    *version = oh.version;
    return oh.raw;
}

int
fdp_ofp_put_flow_stats(struct fdp_ofpmp *mp,
                       const struct fdp_ofp_flow_stats *fs,
                       const struct fdp_tlv_map *tlv)
{
    struct fdp__ofpbuf *b = mp->b;
    uint8_t version = 0;
    enum fdp_ofpraw raw = mp_raw(mp, &version);
    const struct fdp_flow_spec *spec = fs->spec;
    size_t ofs = fdp_ofpmp_entry_start(mp);
    int error = 0;

    switch (raw) {
    case FDP_OFPRAW_OFPST10_FLOW_REPLY: {
        fdp__ofpbuf_put_be16(b, 0);     /* Length, below. */
        fdp__ofpbuf_put_u8(b, spec->table_id);
        fdp__ofpbuf_put_u8(b, 0);
        uint8_t *m = fdp__ofpbuf_put_zeros(b, FDP_OFP10_MATCH_LEN);
        if (m && fdp__ofp10_match_encode(spec->match, m) < 0) {
            error = EINVAL;
        }
        fdp__ofpbuf_put_be32(b, fs->duration_sec);
        fdp__ofpbuf_put_be32(b, fs->duration_nsec);
        fdp__ofpbuf_put_be16(b, spec->priority);
        fdp__ofpbuf_put_be16(b, spec->idle_timeout);
        fdp__ofpbuf_put_be16(b, spec->hard_timeout);
        fdp__ofpbuf_put_zeros(b, 6);
        fdp__ofpbuf_put_be64(b, spec->cookie);
        fdp__ofpbuf_put_be64(b, fs->packet_count);
        fdp__ofpbuf_put_be64(b, fs->byte_count);
        break;
    }
    case FDP_OFPRAW_NXST_FLOW_REPLY: {
        fdp__ofpbuf_put_be16(b, 0);
        fdp__ofpbuf_put_u8(b, spec->table_id);
        fdp__ofpbuf_put_u8(b, 0);
        fdp__ofpbuf_put_be32(b, fs->duration_sec);
        fdp__ofpbuf_put_be32(b, fs->duration_nsec);
        fdp__ofpbuf_put_be16(b, spec->priority);
        fdp__ofpbuf_put_be16(b, spec->idle_timeout);
        fdp__ofpbuf_put_be16(b, spec->hard_timeout);
        size_t match_len_at = b->size;
        fdp__ofpbuf_put_be16(b, 0);
        fdp__ofpbuf_put_be16(b, age_to_wire(fs->idle_age));
        fdp__ofpbuf_put_be16(b, age_to_wire(fs->hard_age));
        fdp__ofpbuf_put_be64(b, spec->cookie);
        fdp__ofpbuf_put_be64(b, fs->packet_count);
        fdp__ofpbuf_put_be64(b, fs->byte_count);
        int match_len = put_nxm_with_cookie(b, spec->match, 0, 0, tlv);
        if (match_len < 0) {
            error = EINVAL;
        } else if (!fdp__ofpbuf_failed(b)) {
            fdp__ofp_set_be16(b->data + match_len_at, (uint16_t) match_len);
        }
        break;
    }
    case FDP_OFPRAW_OFPST11_FLOW_REPLY:
    case FDP_OFPRAW_OFPST13_FLOW_REPLY:
        fdp__ofpbuf_put_be16(b, 0);
        fdp__ofpbuf_put_u8(b, spec->table_id);
        fdp__ofpbuf_put_u8(b, 0);
        fdp__ofpbuf_put_be32(b, fs->duration_sec);
        fdp__ofpbuf_put_be32(b, fs->duration_nsec);
        fdp__ofpbuf_put_be16(b, spec->priority);
        fdp__ofpbuf_put_be16(b, spec->idle_timeout);
        fdp__ofpbuf_put_be16(b, spec->hard_timeout);
        fdp__ofpbuf_put_be16(b, (version >= FDP_OFP13
                                 ? encode_flags(fs->flags, version) : 0));
        fdp__ofpbuf_put_be16(b, version >= FDP_OFP14 ? fs->importance : 0);
        fdp__ofpbuf_put_zeros(b, 2);
        fdp__ofpbuf_put_be64(b, spec->cookie);
        fdp__ofpbuf_put_be64(b, fs->packet_count);
        fdp__ofpbuf_put_be64(b, fs->byte_count);
        if (fdp__ofp11_match_put(b, spec->match, version, tlv) < 0) {
            error = EINVAL;
        }
        break;
    case FDP_OFPRAW_OFPST15_FLOW_REPLY: {
        /* struct ofp15_flow_desc, the match, the statistics. */
        fdp__ofpbuf_put_be16(b, 0);
        fdp__ofpbuf_put_zeros(b, 2);
        fdp__ofpbuf_put_u8(b, spec->table_id);
        fdp__ofpbuf_put_u8(b, 0);
        fdp__ofpbuf_put_be16(b, spec->priority);
        fdp__ofpbuf_put_be16(b, spec->idle_timeout);
        fdp__ofpbuf_put_be16(b, spec->hard_timeout);
        fdp__ofpbuf_put_be16(b, encode_flags(fs->flags, version));
        fdp__ofpbuf_put_be16(b, fs->importance);
        fdp__ofpbuf_put_be64(b, spec->cookie);
        if (fdp__ofp11_match_put(b, spec->match, version, tlv) < 0) {
            error = EINVAL;
            break;
        }
        struct fdp__oxs_stats st = {
            .has_duration = true, .duration_sec = fs->duration_sec,
            .duration_nsec = fs->duration_nsec,
            .has_idle_time = fs->idle_age != UINT16_MAX,
            .idle_time_sec = fs->idle_age,
            .has_packet_count = true, .packet_count = fs->packet_count,
            .has_byte_count = true, .byte_count = fs->byte_count,
        };
        fdp__ofp_put_oxs_stats(b, &st);
        break;
    }
    default:
        error = EINVAL;
        break;
    }
    if (!error) {
        error = put_actions(b, spec, version, tlv);
    }
    if (error || fdp__ofpbuf_failed(b)) {
        b->size = ofs;
        return error ? error : ENOMEM;
    }
    size_t entry_len = b->size - ofs;
    if (entry_len > UINT16_MAX) {
        b->size = ofs;
        return EMSGSIZE;
    }
    fdp__ofp_set_be16(b->data + ofs, (uint16_t) entry_len);
    fdp_ofpmp_entry_end(mp, ofs);
    return 0;
}

int
fdp_ofp_pull_flow_stats(struct fdp__ofp_reader *r, enum fdp_ofpraw raw,
                        uint8_t version, const struct fdp_tlv_map *tlv,
                        struct fdp_flow_spec *spec,
                        struct fdp_ofp_flow_stats *fs)
{
    memset(spec, 0, sizeof *spec);
    memset(fs, 0, sizeof *fs);
    if (!r->left) {
        return EOF;
    }
    if (r->left < 2) {
        return FDP_OFPBRC_BAD_LEN;
    }
    size_t len = fdp__ofp_get_be16(r->p);
    struct fdp__ofp_reader e;
    if (!fdp__ofp_pull_reader(r, len, &e)) {
        return FDP_OFPBRC_BAD_LEN;
    }
    spec->match = fdp_match_create();
    if (!spec->match) {
        return FDP_OFPERR_NOMEM;
    }
    fs->spec = spec;
    int error = 0;
    const uint8_t *p;
    switch (raw) {
    case FDP_OFPRAW_OFPST10_FLOW_REPLY:
        p = fdp__ofp_pull(&e, 88);
        if (!p) {
            error = FDP_OFPBRC_BAD_LEN;
            break;
        }
        spec->table_id = p[2];
        error = fdp__ofp10_match_decode(p + 4, spec->match);
        p += 44;
        fs->duration_sec = fdp__ofp_get_be32(p);
        fs->duration_nsec = fdp__ofp_get_be32(p + 4);
        spec->priority = fdp__ofp_get_be16(p + 8);
        spec->idle_timeout = fdp__ofp_get_be16(p + 10);
        spec->hard_timeout = fdp__ofp_get_be16(p + 12);
        spec->cookie = fdp__ofp_get_be64(p + 20);
        fs->packet_count = fdp__ofp_get_be64(p + 28);
        fs->byte_count = fdp__ofp_get_be64(p + 36);
        fs->idle_age = fs->hard_age = UINT16_MAX;
        break;
    case FDP_OFPRAW_NXST_FLOW_REPLY:
        p = fdp__ofp_pull(&e, 48);
        if (!p) {
            error = FDP_OFPBRC_BAD_LEN;
            break;
        }
        spec->table_id = p[2];
        fs->duration_sec = fdp__ofp_get_be32(p + 4);
        fs->duration_nsec = fdp__ofp_get_be32(p + 8);
        spec->priority = fdp__ofp_get_be16(p + 12);
        spec->idle_timeout = fdp__ofp_get_be16(p + 14);
        spec->hard_timeout = fdp__ofp_get_be16(p + 16);
        fs->idle_age = age_from_wire(fdp__ofp_get_be16(p + 20));
        fs->hard_age = age_from_wire(fdp__ofp_get_be16(p + 22));
        spec->cookie = fdp__ofp_get_be64(p + 24);
        fs->packet_count = fdp__ofp_get_be64(p + 32);
        fs->byte_count = fdp__ofp_get_be64(p + 40);
        error = pull_nxm_with_cookie(&e, fdp__ofp_get_be16(p + 18), tlv,
                                     spec->match, NULL, NULL);
        break;
    case FDP_OFPRAW_OFPST11_FLOW_REPLY:
    case FDP_OFPRAW_OFPST13_FLOW_REPLY:
        p = fdp__ofp_pull(&e, 48);
        if (!p) {
            error = FDP_OFPBRC_BAD_LEN;
            break;
        }
        spec->table_id = p[2];
        fs->duration_sec = fdp__ofp_get_be32(p + 4);
        fs->duration_nsec = fdp__ofp_get_be32(p + 8);
        spec->priority = fdp__ofp_get_be16(p + 12);
        spec->idle_timeout = fdp__ofp_get_be16(p + 14);
        spec->hard_timeout = fdp__ofp_get_be16(p + 16);
        fs->flags = version >= FDP_OFP13 ? fdp__ofp_get_be16(p + 18) : 0;
        fs->importance = version >= FDP_OFP14 ? fdp__ofp_get_be16(p + 20) : 0;
        spec->cookie = fdp__ofp_get_be64(p + 24);
        fs->packet_count = fdp__ofp_get_be64(p + 32);
        fs->byte_count = fdp__ofp_get_be64(p + 40);
        fs->idle_age = fs->hard_age = UINT16_MAX;
        error = fdp__ofp11_match_pull(&e, tlv, spec->match);
        break;
    case FDP_OFPRAW_OFPST15_FLOW_REPLY: {
        p = fdp__ofp_pull(&e, 24);
        if (!p) {
            error = FDP_OFPBRC_BAD_LEN;
            break;
        }
        spec->table_id = p[4];
        spec->priority = fdp__ofp_get_be16(p + 6);
        spec->idle_timeout = fdp__ofp_get_be16(p + 8);
        spec->hard_timeout = fdp__ofp_get_be16(p + 10);
        fs->flags = fdp__ofp_get_be16(p + 12);
        fs->importance = fdp__ofp_get_be16(p + 14);
        spec->cookie = fdp__ofp_get_be64(p + 16);
        error = fdp__ofp11_match_pull(&e, tlv, spec->match);
        struct fdp__oxs_stats st;
        if (!error) {
            error = fdp__ofp_pull_oxs_stats(&e, &st);
        }
        if (!error) {
            fs->duration_sec = st.duration_sec;
            fs->duration_nsec = st.duration_nsec;
            fs->idle_age = (st.has_idle_time
                            ? (st.idle_time_sec > 0xfffe ? 0xfffe
                               : (uint16_t) st.idle_time_sec)
                            : UINT16_MAX);
            fs->hard_age = UINT16_MAX;
            fs->packet_count = st.packet_count;
            fs->byte_count = st.byte_count;
        }
        break;
    }
    default:
        error = FDP_OFPBRC_BAD_VERSION;
        break;
    }
    if (!error) {
        error = pull_actions(&e, version, tlv, &spec->actions);
    }
    if (error) {
        fdp_flow_spec_destroy(spec);
        memset(spec, 0, sizeof *spec);
    }
    return error;
}

/* ---------------------------------------------------------------------- */
/* Flow removed.                                                           */

int
fdp_ofp_encode_flow_removed(struct fdp__ofpbuf *b,
                            const struct fdp_ofp_flow_removed *fr,
                            enum fdp_ofpraw raw, uint8_t version,
                            const struct fdp_tlv_map *tlv)
{
    if (!fdp_ofpraw_in_version(raw, version)
        || fdp_ofpraw_type(raw) != FDP_OFPTYPE_FLOW_REMOVED) {
        return EINVAL;
    }
    size_t start = fdp_ofp_start(b, raw, version, 0);
    int error = 0;
    switch (raw) {
    case FDP_OFPRAW_OFPT10_FLOW_REMOVED: {
        uint8_t *m = fdp__ofpbuf_put_zeros(b, FDP_OFP10_MATCH_LEN);
        if (m && fdp__ofp10_match_encode(fr->match, m) < 0) {
            error = EINVAL;
        }
        fdp__ofpbuf_put_be64(b, fr->cookie);
        fdp__ofpbuf_put_be16(b, fr->priority);
        fdp__ofpbuf_put_u8(b, fr->reason);
        fdp__ofpbuf_put_u8(b, 0);
        fdp__ofpbuf_put_be32(b, fr->duration_sec);
        fdp__ofpbuf_put_be32(b, fr->duration_nsec);
        fdp__ofpbuf_put_be16(b, fr->idle_timeout);
        fdp__ofpbuf_put_zeros(b, 2);
        fdp__ofpbuf_put_be64(b, fr->packet_count);
        fdp__ofpbuf_put_be64(b, fr->byte_count);
        break;
    }
    case FDP_OFPRAW_OFPT11_FLOW_REMOVED:
        fdp__ofpbuf_put_be64(b, fr->cookie);
        fdp__ofpbuf_put_be16(b, fr->priority);
        fdp__ofpbuf_put_u8(b, fr->reason);
        fdp__ofpbuf_put_u8(b, fr->table_id);
        fdp__ofpbuf_put_be32(b, fr->duration_sec);
        fdp__ofpbuf_put_be32(b, fr->duration_nsec);
        fdp__ofpbuf_put_be16(b, fr->idle_timeout);
        fdp__ofpbuf_put_be16(b, fr->hard_timeout);
        fdp__ofpbuf_put_be64(b, fr->packet_count);
        fdp__ofpbuf_put_be64(b, fr->byte_count);
        if (fdp__ofp11_match_put(b, fr->match, version, tlv) < 0) {
            error = EINVAL;
        }
        break;
    case FDP_OFPRAW_NXT_FLOW_REMOVED: {
        fdp__ofpbuf_put_be64(b, fr->cookie);
        fdp__ofpbuf_put_be16(b, fr->priority);
        fdp__ofpbuf_put_u8(b, fr->reason);
        /* Nicira's table_id is the table plus one (0: unknown). */
        fdp__ofpbuf_put_u8(b, (uint8_t) (fr->table_id + 1));
        fdp__ofpbuf_put_be32(b, fr->duration_sec);
        fdp__ofpbuf_put_be32(b, fr->duration_nsec);
        fdp__ofpbuf_put_be16(b, fr->idle_timeout);
        size_t match_len_at = b->size;
        fdp__ofpbuf_put_be16(b, 0);
        fdp__ofpbuf_put_be64(b, fr->packet_count);
        fdp__ofpbuf_put_be64(b, fr->byte_count);
        int match_len = put_nxm_with_cookie(b, fr->match, 0, 0, tlv);
        if (match_len < 0) {
            error = EINVAL;
        } else if (!fdp__ofpbuf_failed(b)) {
            fdp__ofp_set_be16(b->data + match_len_at, (uint16_t) match_len);
        }
        break;
    }
    default:
        /* OpenFlow 1.5's form carries OXS statistics: not spoken. */
        error = EINVAL;
        break;
    }
    if (error) {
        b->size = start;
        return error;
    }
    return fdp_ofp_finish(b, start);
}
