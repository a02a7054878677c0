/*
 * The OpenFlow message layer (lib/ofp-msgs.c): which message a byte string
 * is, its headers, and each message's body as a structure, both ways.
 *
 * Theory of operation.  OpenFlow numbers the same message differently in
 * different versions (barrier is type 18 in 1.0 and 20 in 1.1+), puts
 * statistics ("multipart") messages behind a second header whose size
 * depends on the version (12 bytes in 1.0, 16 in 1.1+), and puts vendor
 * extensions (Nicira's NXT_*, ONF's) behind a vendor id and a subtype.
 * One table, FDP_OFPRAWS below, lists every wire form flowdp knows as a
 * "raw" message (Open vSwitch's OFPRAW_* names and numbers): its kind of
 * header, the versions it exists in, its number, the smallest body it may
 * have and how the rest of the body grows.  Several raws mean the same
 * thing (OFPT10_BARRIER_REQUEST, OFPT11_BARRIER_REQUEST): each names its
 * meaning, an enum fdp_ofptype, which is what a connection dispatches on.
 * Decoding a header finds the row whose header matches and checks the
 * length against it, so that every body decoder starts from a body at
 * least as long as its fixed part; encoding starts a message from a row
 * and fills in the length when the body is done.
 *
 * Worked example: the bytes 04 12 00 10 00 00 00 07 00 0d 00 00 00 00 00 00
 * are version 4 (OpenFlow 1.3), type 18 (OFPT_MULTIPART_REQUEST in 1.1+),
 * length 16, xid 7, then the 1.1+ multipart header: type 13
 * (OFPMP_PORT_DESC), flags 0, 4 bytes of padding.  The row
 * OFPST10_PORT_DESC_REQUEST (versions 1.0-1.4, multipart request 13, body
 * "void") matches; its header is 16 bytes and its body must be empty, so
 * fdp_ofp_decode_header() returns 0 with type FDP_OFPTYPE_PORT_DESC_STATS_
 * REQUEST, hdr_len 16.  The same bytes with length 24 would be
 * OFPBRC_BAD_LEN; with multipart type 0x0c (12, OFPMP_TABLE_FEATURES)
 * they are a different row; with 0x0e (14, OFPMP_TABLE_DESC, which only
 * 1.4+ has) or 99, OFPBRC_BAD_STAT.
 *
 * Errors.  Decoders return 0 or an enum fdp_ofperr (lib/ofp-common.h),
 * the error to send back (fdp_ofp_encode_error() writes it in the
 * connection's version: Open vSwitch 3.1's (type, code) per version, with
 * Nicira's vendor error forms where OpenFlow 1.0 and 1.1 lack one, from
 * lib/ofp-errors.inc).  Encoders append to a struct fdp__ofpbuf and return
 * 0, EINVAL (the structure cannot be said in that version), EMSGSIZE (the
 * message would pass OpenFlow's 65535-byte limit) or ENOMEM.
 *
 * Thread-safety: every function here is pure (no state): any number of
 * threads may call them at once on different buffers.
 *
 * Nothing here does I/O or prints (DESIGN.md: lib/ has no I/O).
 */
#ifndef FDP_OFP_MSGS_H
#define FDP_OFP_MSGS_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>              /* EOF, which the pull functions return at
                                 * the end of a list. */
#include "lib/ofp-common.h"

#include <flowdp/flow.h>
#include <flowdp/meter.h>

struct fdp_tlv_map;
struct fdp_match;
struct fdp_actions;

/* ---------------------------------------------------------------------- */
/* The message table.                                                      */

/* Header kinds. */
enum fdp__ofpk {
    FDP__OFPK_OFPT,         /* ofp_header; number = its type. */
    FDP__OFPK_OFPST_REQ,    /* Multipart request; number = its type. */
    FDP__OFPK_OFPST_REP,    /* Multipart reply. */
    FDP__OFPK_NXT,          /* Vendor 0x00002320; number = subtype. */
    FDP__OFPK_ONFT,         /* Vendor 0x4f4e4600 (ONF). */
    FDP__OFPK_NXST_REQ,     /* Multipart OFPST_VENDOR, Nicira subtype. */
    FDP__OFPK_NXST_REP,
    FDP__OFPK_ONFST_REQ,    /* Multipart OFPST_VENDOR, ONF subtype. */
    FDP__OFPK_ONFST_REP,
};

#define FDP_OFP_VENDOR_NX 0x00002320u
#define FDP_OFP_VENDOR_ONF 0x4f4e4600u

/* Every message type flowdp knows, by Open vSwitch's OFPTYPE_* names. */
#define FDP_OFPTYPES(T)                                                     \
    T(HELLO) T(ERROR) T(ECHO_REQUEST) T(ECHO_REPLY)                         \
    T(FEATURES_REQUEST) T(FEATURES_REPLY)                                   \
    T(GET_CONFIG_REQUEST) T(GET_CONFIG_REPLY) T(SET_CONFIG)                 \
    T(PACKET_IN) T(FLOW_REMOVED) T(PORT_STATUS) T(PACKET_OUT) T(FLOW_MOD)   \
    T(GROUP_MOD) T(PORT_MOD) T(TABLE_MOD)                                   \
    T(BARRIER_REQUEST) T(BARRIER_REPLY)                                     \
    T(QUEUE_GET_CONFIG_REQUEST) T(QUEUE_GET_CONFIG_REPLY)                   \
    T(ROLE_REQUEST) T(ROLE_REPLY) T(GET_ASYNC_REQUEST) T(GET_ASYNC_REPLY)   \
    T(SET_ASYNC_CONFIG) T(METER_MOD) T(ROLE_STATUS) T(REQUESTFORWARD)       \
    T(TABLE_STATUS) T(BUNDLE_CONTROL) T(BUNDLE_ADD_MESSAGE)                 \
    T(DESC_STATS_REQUEST) T(DESC_STATS_REPLY)                               \
    T(FLOW_STATS_REQUEST) T(FLOW_STATS_REPLY)                               \
    T(AGGREGATE_STATS_REQUEST) T(AGGREGATE_STATS_REPLY)                     \
    T(TABLE_STATS_REQUEST) T(TABLE_STATS_REPLY)                             \
    T(PORT_STATS_REQUEST) T(PORT_STATS_REPLY)                               \
    T(QUEUE_STATS_REQUEST) T(QUEUE_STATS_REPLY)                             \
    T(GROUP_STATS_REQUEST) T(GROUP_STATS_REPLY)                             \
    T(GROUP_DESC_STATS_REQUEST) T(GROUP_DESC_STATS_REPLY)                   \
    T(GROUP_FEATURES_STATS_REQUEST) T(GROUP_FEATURES_STATS_REPLY)           \
    T(METER_STATS_REQUEST) T(METER_STATS_REPLY)                             \
    T(METER_CONFIG_STATS_REQUEST) T(METER_CONFIG_STATS_REPLY)               \
    T(METER_FEATURES_STATS_REQUEST) T(METER_FEATURES_STATS_REPLY)           \
    T(TABLE_FEATURES_STATS_REQUEST) T(TABLE_FEATURES_STATS_REPLY)           \
    T(TABLE_DESC_REQUEST) T(TABLE_DESC_REPLY)                               \
    T(PORT_DESC_STATS_REQUEST) T(PORT_DESC_STATS_REPLY)                     \
    T(FLOW_MONITOR_STATS_REQUEST) T(FLOW_MONITOR_STATS_REPLY)               \
    T(SET_FLOW_FORMAT) T(FLOW_MOD_TABLE_ID) T(SET_PACKET_IN_FORMAT)         \
    T(FLOW_AGE) T(SET_CONTROLLER_ID)                                        \
    T(NXT_TLV_TABLE_MOD) T(NXT_TLV_TABLE_REQUEST) T(NXT_TLV_TABLE_REPLY)    \
    T(NXT_RESUME)                                                           \
    T(IPFIX_BRIDGE_STATS_REQUEST) T(IPFIX_BRIDGE_STATS_REPLY)               \
    T(IPFIX_FLOW_STATS_REQUEST) T(IPFIX_FLOW_STATS_REPLY)                   \
    T(CT_FLUSH_ZONE) T(CT_FLUSH)                                            \
    T(FLOW_MONITOR_CANCEL) T(FLOW_MONITOR_PAUSED) T(FLOW_MONITOR_RESUMED)

enum fdp_ofptype {
    FDP_OFPTYPE_NONE = 0,
#define FDP__OFPTYPE_ENUM(NAME) FDP_OFPTYPE_##NAME,
    FDP_OFPTYPES(FDP__OFPTYPE_ENUM)
#undef FDP__OFPTYPE_ENUM
    FDP__OFPTYPE_N
};

/* Versions as the table writes them: FDP__OFPV_ALL is every version byte
 * (hello, error and echo must be understood whatever the version, so that
 * negotiation can find a common one). */
#define FDP__OFPV_ALL 0xff

/* Bodies' length rules (the EXTRA column): */
#define FDP__OFPX_EXACT 0       /* The body is exactly MIN_BODY bytes. */
#define FDP__OFPX_ANY 1         /* MIN_BODY bytes or more. */
/* Any other value N: MIN_BODY bytes plus a multiple of N. */

/* The raw wire forms, as Open vSwitch 3.1 lists them
 * (include/openvswitch/ofp-msgs.h there):
 *   R(NAME, TYPE, KIND, MIN_VERSION, MAX_VERSION, NUMBER, MIN_BODY, EXTRA)
 * MIN_BODY counts the bytes after all headers (ofp_header, the multipart
 * header, the vendor header); the sizes are those of the structures the
 * OpenFlow specification and Nicira's extensions define. */
#define FDP_OFPRAWS(R)                                                      \
    R(OFPT_HELLO, HELLO, OFPT, 1, FDP__OFPV_ALL, 0, 0, 1)                   \
    R(OFPT_ERROR, ERROR, OFPT, 1, FDP__OFPV_ALL, 1, 4, 1)                   \
    R(OFPT_ECHO_REQUEST, ECHO_REQUEST, OFPT, 1, FDP__OFPV_ALL, 2, 0, 1)     \
    R(OFPT_ECHO_REPLY, ECHO_REPLY, OFPT, 1, FDP__OFPV_ALL, 3, 0, 1)         \
    R(OFPT_FEATURES_REQUEST, FEATURES_REQUEST, OFPT, 1, 6, 5, 0, 0)         \
    R(OFPT10_FEATURES_REPLY, FEATURES_REPLY, OFPT, 1, 1, 6, 24, 48)         \
    R(OFPT11_FEATURES_REPLY, FEATURES_REPLY, OFPT, 2, 3, 6, 24, 64)         \
    R(OFPT13_FEATURES_REPLY, FEATURES_REPLY, OFPT, 4, 6, 6, 24, 0)          \
    R(OFPT_GET_CONFIG_REQUEST, GET_CONFIG_REQUEST, OFPT, 1, 6, 7, 0, 0)     \
    R(OFPT_GET_CONFIG_REPLY, GET_CONFIG_REPLY, OFPT, 1, 6, 8, 4, 0)         \
    R(OFPT_SET_CONFIG, SET_CONFIG, OFPT, 1, 6, 9, 4, 0)                     \
    R(OFPT10_PACKET_IN, PACKET_IN, OFPT, 1, 1, 10, 10, 1)                   \
    R(OFPT11_PACKET_IN, PACKET_IN, OFPT, 2, 2, 10, 16, 1)                   \
    R(OFPT12_PACKET_IN, PACKET_IN, OFPT, 3, 3, 10, 8, 1)                    \
    R(OFPT13_PACKET_IN, PACKET_IN, OFPT, 4, 6, 10, 16, 1)                   \
    R(NXT_PACKET_IN, PACKET_IN, NXT, 1, 6, 17, 24, 1)                       \
    R(NXT_PACKET_IN2, PACKET_IN, NXT, 1, 6, 30, 0, 8)                       \
    R(OFPT10_FLOW_REMOVED, FLOW_REMOVED, OFPT, 1, 1, 11, 80, 0)             \
    R(OFPT11_FLOW_REMOVED, FLOW_REMOVED, OFPT, 2, 5, 11, 40, 8)             \
    R(OFPT15_FLOW_REMOVED, FLOW_REMOVED, OFPT, 6, 6, 11, 16, 8)             \
    R(NXT_FLOW_REMOVED, FLOW_REMOVED, NXT, 1, 6, 14, 40, 8)                 \
    R(OFPT10_PORT_STATUS, PORT_STATUS, OFPT, 1, 1, 12, 56, 0)               \
    R(OFPT11_PORT_STATUS, PORT_STATUS, OFPT, 2, 4, 12, 72, 0)               \
    R(OFPT14_PORT_STATUS, PORT_STATUS, OFPT, 5, 6, 12, 48, 8)               \
    R(OFPT10_PACKET_OUT, PACKET_OUT, OFPT, 1, 1, 13, 8, 1)                  \
    R(OFPT11_PACKET_OUT, PACKET_OUT, OFPT, 2, 5, 13, 16, 1)                 \
    R(OFPT15_PACKET_OUT, PACKET_OUT, OFPT, 6, 6, 13, 8, 1)                  \
    R(OFPT10_FLOW_MOD, FLOW_MOD, OFPT, 1, 1, 14, 64, 8)                     \
    R(OFPT11_FLOW_MOD, FLOW_MOD, OFPT, 2, 6, 14, 40, 8)                     \
    R(NXT_FLOW_MOD, FLOW_MOD, NXT, 1, 6, 13, 32, 8)                         \
    R(NXT_GROUP_MOD, GROUP_MOD, NXT, 1, 1, 31, 16, 8)                       \
    R(OFPT11_GROUP_MOD, GROUP_MOD, OFPT, 2, 5, 15, 8, 8)                    \
    R(OFPT15_GROUP_MOD, GROUP_MOD, OFPT, 6, 6, 15, 16, 8)                   \
    R(OFPT10_PORT_MOD, PORT_MOD, OFPT, 1, 1, 15, 24, 0)                     \
    R(OFPT11_PORT_MOD, PORT_MOD, OFPT, 2, 4, 16, 32, 0)                     \
    R(OFPT14_PORT_MOD, PORT_MOD, OFPT, 5, 6, 16, 24, 8)                     \
    R(OFPT11_TABLE_MOD, TABLE_MOD, OFPT, 2, 4, 17, 8, 0)                    \
    R(OFPT14_TABLE_MOD, TABLE_MOD, OFPT, 5, 6, 17, 8, 8)                    \
    R(OFPT10_BARRIER_REQUEST, BARRIER_REQUEST, OFPT, 1, 1, 18, 0, 0)        \
    R(OFPT11_BARRIER_REQUEST, BARRIER_REQUEST, OFPT, 2, 6, 20, 0, 0)        \
    R(OFPT10_BARRIER_REPLY, BARRIER_REPLY, OFPT, 1, 1, 19, 0, 0)            \
    R(OFPT11_BARRIER_REPLY, BARRIER_REPLY, OFPT, 2, 6, 21, 0, 0)            \
    R(OFPT10_QUEUE_GET_CONFIG_REQUEST, QUEUE_GET_CONFIG_REQUEST, OFPT,      \
      1, 1, 20, 4, 0)                                                       \
    R(OFPT11_QUEUE_GET_CONFIG_REQUEST, QUEUE_GET_CONFIG_REQUEST, OFPT,      \
      2, 4, 22, 8, 0)                                                       \
    R(OFPT10_QUEUE_GET_CONFIG_REPLY, QUEUE_GET_CONFIG_REPLY, OFPT,          \
      1, 1, 21, 8, 8)                                                       \
    R(OFPT11_QUEUE_GET_CONFIG_REPLY, QUEUE_GET_CONFIG_REPLY, OFPT,          \
      2, 4, 23, 8, 8)                                                       \
    R(OFPT12_ROLE_REQUEST, ROLE_REQUEST, OFPT, 3, 6, 24, 16, 0)             \
    R(NXT_ROLE_REQUEST, ROLE_REQUEST, NXT, 1, 6, 10, 4, 0)                  \
    R(OFPT12_ROLE_REPLY, ROLE_REPLY, OFPT, 3, 6, 25, 16, 0)                 \
    R(NXT_ROLE_REPLY, ROLE_REPLY, NXT, 1, 6, 11, 4, 0)                      \
    R(OFPT13_GET_ASYNC_REQUEST, GET_ASYNC_REQUEST, OFPT, 4, 4, 26, 0, 0)    \
    R(OFPT14_GET_ASYNC_REQUEST, GET_ASYNC_REQUEST, OFPT, 5, 6, 26, 0, 0)    \
    R(OFPT13_GET_ASYNC_REPLY, GET_ASYNC_REPLY, OFPT, 4, 4, 27, 24, 0)       \
    R(OFPT14_GET_ASYNC_REPLY, GET_ASYNC_REPLY, OFPT, 5, 6, 27, 0, 8)        \
    R(OFPT13_SET_ASYNC, SET_ASYNC_CONFIG, OFPT, 4, 4, 28, 24, 0)            \
    R(NXT_SET_ASYNC_CONFIG, SET_ASYNC_CONFIG, NXT, 1, 6, 19, 24, 0)         \
    R(NXT_SET_ASYNC_CONFIG2, SET_ASYNC_CONFIG, NXT, 1, 4, 27, 0, 8)         \
    R(OFPT14_SET_ASYNC, SET_ASYNC_CONFIG, OFPT, 5, 6, 28, 0, 8)             \
    R(OFPT13_METER_MOD, METER_MOD, OFPT, 4, 6, 29, 8, 8)                    \
    R(ONFT13_ROLE_STATUS, ROLE_STATUS, ONFT, 4, 4, 1911, 16, 8)             \
    R(OFPT14_ROLE_STATUS, ROLE_STATUS, OFPT, 5, 6, 30, 16, 8)               \
    R(OFPT14_TABLE_STATUS, TABLE_STATUS, OFPT, 5, 6, 31, 8, 8)              \
    R(NXT_REQUESTFORWARD, REQUESTFORWARD, NXT, 1, 3, 132, 8, 8)             \
    R(ONFT13_REQUESTFORWARD, REQUESTFORWARD, ONFT, 4, 4, 2350, 8, 8)        \
    R(OFPT14_REQUESTFORWARD, REQUESTFORWARD, OFPT, 5, 6, 32, 8, 8)          \
    R(OFPT14_BUNDLE_CONTROL, BUNDLE_CONTROL, OFPT, 5, 6, 33, 8, 8)          \
    R(ONFT13_BUNDLE_CONTROL, BUNDLE_CONTROL, ONFT, 4, 4, 2300, 8, 8)        \
    R(OFPT14_BUNDLE_ADD_MESSAGE, BUNDLE_ADD_MESSAGE, OFPT, 5, 6, 34, 8, 1)  \
    R(ONFT13_BUNDLE_ADD_MESSAGE, BUNDLE_ADD_MESSAGE, ONFT, 4, 4, 2301, 8, 1)\
    R(OFPST_DESC_REQUEST, DESC_STATS_REQUEST, OFPST_REQ, 1, 6, 0, 0, 0)     \
    R(OFPST_DESC_REPLY, DESC_STATS_REPLY, OFPST_REP, 1, 6, 0, 1056, 0)      \
    R(OFPST10_FLOW_REQUEST, FLOW_STATS_REQUEST, OFPST_REQ, 1, 1, 1, 44, 0)  \
    R(OFPST11_FLOW_REQUEST, FLOW_STATS_REQUEST, OFPST_REQ, 2, 6, 1, 32, 8)  \
    R(NXST_FLOW_REQUEST, FLOW_STATS_REQUEST, NXST_REQ, 1, 1, 0, 8, 8)       \
    R(OFPST10_FLOW_REPLY, FLOW_STATS_REPLY, OFPST_REP, 1, 1, 1, 0, 1)       \
    R(OFPST11_FLOW_REPLY, FLOW_STATS_REPLY, OFPST_REP, 2, 3, 1, 0, 1)       \
    R(OFPST13_FLOW_REPLY, FLOW_STATS_REPLY, OFPST_REP, 4, 5, 1, 0, 1)       \
    R(OFPST15_FLOW_REPLY, FLOW_STATS_REPLY, OFPST_REP, 6, 6, 1, 0, 1)       \
    R(NXST_FLOW_REPLY, FLOW_STATS_REPLY, NXST_REP, 1, 1, 0, 0, 1)           \
    R(OFPST10_AGGREGATE_REQUEST, AGGREGATE_STATS_REQUEST, OFPST_REQ,        \
      1, 1, 2, 44, 0)                                                       \
    R(OFPST11_AGGREGATE_REQUEST, AGGREGATE_STATS_REQUEST, OFPST_REQ,        \
      2, 5, 2, 32, 8)                                                       \
    R(OFPST15_AGGREGATE_REQUEST, AGGREGATE_STATS_REQUEST, OFPST_REQ,        \
      6, 6, 2, 32, 8)                                                       \
    R(NXST_AGGREGATE_REQUEST, AGGREGATE_STATS_REQUEST, NXST_REQ,            \
      1, 1, 1, 8, 8)                                                        \
    R(OFPST_AGGREGATE_REPLY, AGGREGATE_STATS_REPLY, OFPST_REP, 1, 5, 2,     \
      24, 0)                                                                \
    R(OFPST15_AGGREGATE_REPLY, AGGREGATE_STATS_REPLY, OFPST_REP, 6, 6, 2,   \
      0, 1)                                                                 \
    R(NXST_AGGREGATE_REPLY, AGGREGATE_STATS_REPLY, NXST_REP, 1, 1, 1,       \
      24, 0)                                                                \
    R(OFPST_TABLE_REQUEST, TABLE_STATS_REQUEST, OFPST_REQ, 1, 6, 3, 0, 0)   \
    R(OFPST10_TABLE_REPLY, TABLE_STATS_REPLY, OFPST_REP, 1, 1, 3, 0, 64)    \
    R(OFPST11_TABLE_REPLY, TABLE_STATS_REPLY, OFPST_REP, 2, 2, 3, 0, 88)    \
    R(OFPST12_TABLE_REPLY, TABLE_STATS_REPLY, OFPST_REP, 3, 3, 3, 0, 128)   \
    R(OFPST13_TABLE_REPLY, TABLE_STATS_REPLY, OFPST_REP, 4, 6, 3, 0, 24)    \
    R(OFPST10_PORT_REQUEST, PORT_STATS_REQUEST, OFPST_REQ, 1, 1, 4, 8, 0)   \
    R(OFPST11_PORT_REQUEST, PORT_STATS_REQUEST, OFPST_REQ, 2, 6, 4, 8, 0)   \
    R(OFPST10_PORT_REPLY, PORT_STATS_REPLY, OFPST_REP, 1, 1, 4, 0, 104)     \
    R(OFPST11_PORT_REPLY, PORT_STATS_REPLY, OFPST_REP, 2, 3, 4, 0, 104)     \
    R(OFPST13_PORT_REPLY, PORT_STATS_REPLY, OFPST_REP, 4, 4, 4, 0, 112)     \
    R(OFPST14_PORT_REPLY, PORT_STATS_REPLY, OFPST_REP, 5, 6, 4, 0, 8)       \
    R(OFPST10_QUEUE_REQUEST, QUEUE_STATS_REQUEST, OFPST_REQ, 1, 1, 5, 8, 0) \
    R(OFPST11_QUEUE_REQUEST, QUEUE_STATS_REQUEST, OFPST_REQ, 2, 6, 5, 8, 0) \
    R(OFPST10_QUEUE_REPLY, QUEUE_STATS_REPLY, OFPST_REP, 1, 1, 5, 0, 32)    \
    R(OFPST11_QUEUE_REPLY, QUEUE_STATS_REPLY, OFPST_REP, 2, 3, 5, 0, 32)    \
    R(OFPST13_QUEUE_REPLY, QUEUE_STATS_REPLY, OFPST_REP, 4, 4, 5, 0, 40)    \
    R(OFPST14_QUEUE_REPLY, QUEUE_STATS_REPLY, OFPST_REP, 5, 6, 5, 0, 8)     \
    R(NXST_GROUP_REQUEST, GROUP_STATS_REQUEST, NXST_REQ, 1, 1, 7, 8, 0)     \
    R(OFPST11_GROUP_REQUEST, GROUP_STATS_REQUEST, OFPST_REQ, 2, 6, 6, 8, 0) \
    R(NXST_GROUP_REPLY, GROUP_STATS_REPLY, NXST_REP, 1, 1, 7, 0, 8)         \
    R(OFPST11_GROUP_REPLY, GROUP_STATS_REPLY, OFPST_REP, 2, 3, 6, 0, 8)     \
    R(OFPST13_GROUP_REPLY, GROUP_STATS_REPLY, OFPST_REP, 4, 6, 6, 0, 8)     \
    R(NXST_GROUP_DESC_REQUEST, GROUP_DESC_STATS_REQUEST, NXST_REQ,          \
      1, 1, 8, 8, 0)                                                        \
    R(OFPST11_GROUP_DESC_REQUEST, GROUP_DESC_STATS_REQUEST, OFPST_REQ,      \
      2, 5, 7, 0, 0)                                                        \
    R(OFPST15_GROUP_DESC_REQUEST, GROUP_DESC_STATS_REQUEST, OFPST_REQ,      \
      6, 6, 7, 8, 0)                                                        \
    R(NXST_GROUP_DESC_REPLY, GROUP_DESC_STATS_REPLY, NXST_REP, 1, 1, 8,     \
      0, 8)                                                                 \
    R(OFPST11_GROUP_DESC_REPLY, GROUP_DESC_STATS_REPLY, OFPST_REP, 2, 6, 7, \
      0, 8)                                                                 \
    R(NXST_GROUP_FEATURES_REQUEST, GROUP_FEATURES_STATS_REQUEST, NXST_REQ,  \
      1, 2, 9, 0, 0)                                                        \
    R(OFPST12_GROUP_FEATURES_REQUEST, GROUP_FEATURES_STATS_REQUEST,         \
      OFPST_REQ, 3, 6, 8, 0, 0)                                             \
    R(NXST_GROUP_FEATURES_REPLY, GROUP_FEATURES_STATS_REPLY, NXST_REP,      \
      1, 2, 9, 40, 0)                                                       \
    R(OFPST12_GROUP_FEATURES_REPLY, GROUP_FEATURES_STATS_REPLY, OFPST_REP,  \
      3, 6, 8, 40, 0)                                                       \
    R(OFPST13_METER_REQUEST, METER_STATS_REQUEST, OFPST_REQ, 4, 6, 9, 8, 0) \
    R(OFPST13_METER_REPLY, METER_STATS_REPLY, OFPST_REP, 4, 6, 9, 0, 8)     \
    R(OFPST13_METER_CONFIG_REQUEST, METER_CONFIG_STATS_REQUEST, OFPST_REQ,  \
      4, 6, 10, 8, 0)                                                       \
    R(OFPST13_METER_CONFIG_REPLY, METER_CONFIG_STATS_REPLY, OFPST_REP,      \
      4, 6, 10, 0, 8)                                                       \
    R(OFPST13_METER_FEATURES_REQUEST, METER_FEATURES_STATS_REQUEST,         \
      OFPST_REQ, 4, 6, 11, 0, 0)                                            \
    R(OFPST13_METER_FEATURES_REPLY, METER_FEATURES_STATS_REPLY, OFPST_REP,  \
      4, 6, 11, 16, 0)                                                      \
    R(OFPST13_TABLE_FEATURES_REQUEST, TABLE_FEATURES_STATS_REQUEST,         \
      OFPST_REQ, 4, 6, 12, 0, 8)                                            \
    R(OFPST13_TABLE_FEATURES_REPLY, TABLE_FEATURES_STATS_REPLY, OFPST_REP,  \
      4, 6, 12, 64, 8)                                                      \
    R(OFPST14_TABLE_DESC_REQUEST, TABLE_DESC_REQUEST, OFPST_REQ,            \
      5, 6, 14, 0, 0)                                                       \
    R(OFPST14_TABLE_DESC_REPLY, TABLE_DESC_REPLY, OFPST_REP, 5, 6, 14,      \
      8, 8)                                                                 \
    R(OFPST10_PORT_DESC_REQUEST, PORT_DESC_STATS_REQUEST, OFPST_REQ,        \
      1, 5, 13, 0, 0)                                                       \
    R(OFPST15_PORT_DESC_REQUEST, PORT_DESC_STATS_REQUEST, OFPST_REQ,        \
      6, 6, 13, 8, 0)                                                       \
    R(OFPST10_PORT_DESC_REPLY, PORT_DESC_STATS_REPLY, OFPST_REP, 1, 1, 13,  \
      0, 48)                                                                \
    R(OFPST11_PORT_DESC_REPLY, PORT_DESC_STATS_REPLY, OFPST_REP, 2, 4, 13,  \
      0, 64)                                                                \
    R(OFPST14_PORT_DESC_REPLY, PORT_DESC_STATS_REPLY, OFPST_REP, 5, 6, 13,  \
      0, 8)                                                                 \
    R(OFPST14_QUEUE_DESC_REQUEST, QUEUE_GET_CONFIG_REQUEST, OFPST_REQ,      \
      5, 6, 15, 8, 0)                                                       \
    R(OFPST14_QUEUE_DESC_REPLY, QUEUE_GET_CONFIG_REPLY, OFPST_REP, 5, 6,    \
      15, 0, 8)                                                             \
    R(OFPST14_FLOW_MONITOR_REQUEST, FLOW_MONITOR_STATS_REQUEST, OFPST_REQ,  \
      5, 6, 16, 0, 8)                                                       \
    R(ONFST13_FLOW_MONITOR_REQUEST, FLOW_MONITOR_STATS_REQUEST, ONFST_REQ,  \
      4, 4, 1870, 0, 8)                                                     \
    R(NXST_FLOW_MONITOR_REQUEST, FLOW_MONITOR_STATS_REQUEST, NXST_REQ,      \
      1, 3, 2, 0, 8)                                                        \
    R(OFPST14_FLOW_MONITOR_REPLY, FLOW_MONITOR_STATS_REPLY, OFPST_REP,      \
      5, 6, 16, 0, 8)                                                       \
    R(ONFST13_FLOW_MONITOR_REPLY, FLOW_MONITOR_STATS_REPLY, ONFST_REP,      \
      4, 4, 1870, 0, 8)                                                     \
    R(NXST_FLOW_MONITOR_REPLY, FLOW_MONITOR_STATS_REPLY, NXST_REP,          \
      1, 3, 2, 0, 8)                                                        \
    R(ONFT13_FLOW_MONITOR_CANCEL, FLOW_MONITOR_CANCEL, ONFT, 4, 4, 1870,    \
      4, 0)                                                                 \
    R(NXT_FLOW_MONITOR_CANCEL, FLOW_MONITOR_CANCEL, NXT, 1, 3, 21, 4, 0)    \
    R(ONFT13_FLOW_MONITOR_PAUSED, FLOW_MONITOR_PAUSED, ONFT, 4, 4, 1871,    \
      0, 0)                                                                 \
    R(NXT_FLOW_MONITOR_PAUSED, FLOW_MONITOR_PAUSED, NXT, 1, 3, 22, 0, 0)    \
    R(ONFT13_FLOW_MONITOR_RESUMED, FLOW_MONITOR_RESUMED, ONFT, 4, 4, 1872,  \
      0, 0)                                                                 \
    R(NXT_FLOW_MONITOR_RESUMED, FLOW_MONITOR_RESUMED, NXT, 1, 3, 23, 0, 0)  \
    R(NXT_SET_FLOW_FORMAT, SET_FLOW_FORMAT, NXT, 1, 1, 12, 4, 0)            \
    R(NXT_FLOW_MOD_TABLE_ID, FLOW_MOD_TABLE_ID, NXT, 1, 6, 15, 8, 0)        \
    R(NXT_SET_PACKET_IN_FORMAT, SET_PACKET_IN_FORMAT, NXT, 1, 6, 16, 4, 0)  \
    R(NXT_FLOW_AGE, FLOW_AGE, NXT, 1, 6, 18, 0, 0)                          \
    R(NXT_SET_CONTROLLER_ID, SET_CONTROLLER_ID, NXT, 1, 6, 20, 8, 0)        \
    R(NXT_TLV_TABLE_MOD, NXT_TLV_TABLE_MOD, NXT, 1, 6, 24, 8, 8)            \
    R(NXT_TLV_TABLE_REQUEST, NXT_TLV_TABLE_REQUEST, NXT, 1, 6, 25, 0, 0)    \
    R(NXT_TLV_TABLE_REPLY, NXT_TLV_TABLE_REPLY, NXT, 1, 6, 26, 16, 8)       \
    R(NXT_RESUME, NXT_RESUME, NXT, 1, 6, 28, 0, 8)                          \
    R(NXT_CT_FLUSH_ZONE, CT_FLUSH_ZONE, NXT, 1, 6, 29, 8, 0)                \
    R(NXT_CT_FLUSH, CT_FLUSH, NXT, 1, 6, 32, 8, 8)                          \
    R(NXST_IPFIX_BRIDGE_REQUEST, IPFIX_BRIDGE_STATS_REQUEST, NXST_REQ,      \
      1, 6, 3, 0, 0)                                                        \
    R(NXST_IPFIX_BRIDGE_REPLY, IPFIX_BRIDGE_STATS_REPLY, NXST_REP,          \
      1, 6, 3, 88, 0)                                                       \
    R(NXST_IPFIX_FLOW_REQUEST, IPFIX_FLOW_STATS_REQUEST, NXST_REQ,          \
      1, 6, 4, 0, 0)                                                        \
    R(NXST_IPFIX_FLOW_REPLY, IPFIX_FLOW_STATS_REPLY, NXST_REP,              \
      1, 6, 4, 0, 88)

enum fdp_ofpraw {
    FDP_OFPRAW_NONE = 0,
#define FDP__OFPRAW_ENUM(NAME, TYPE, KIND, VMIN, VMAX, NUM, MIN, EXTRA)     \
    FDP_OFPRAW_##NAME,
    FDP_OFPRAWS(FDP__OFPRAW_ENUM)
#undef FDP__OFPRAW_ENUM
    FDP__OFPRAW_N
};

/* "OFPT_HELLO" for FDP_OFPRAW_OFPT_HELLO, "FLOW_MOD" for
 * FDP_OFPTYPE_FLOW_MOD; "?" for a value out of range. */
const char *fdp_ofpraw_name(enum fdp_ofpraw);
const char *fdp_ofptype_name(enum fdp_ofptype);
enum fdp_ofptype fdp_ofpraw_type(enum fdp_ofpraw);
/* True if 'raw' exists in version 'version'. */
bool fdp_ofpraw_in_version(enum fdp_ofpraw raw, uint8_t version);

/* ---------------------------------------------------------------------- */
/* Framing and classifying.                                                */

#define FDP_OFP_HEADER_LEN 8
#define FDP_OFP_MAX_LEN 65535   /* A message's length is 16 bits. */

/* Multipart (statistics) flags: OFPSF_REPLY_MORE in a reply, and in 1.3+
 * OFPMPF_REQ_MORE in a request, are the same bit. */
#define FDP_OFPMPF_MORE 0x0001

/* What fdp_ofp_decode_header() learns. */
struct fdp_ofp_header {
    enum fdp_ofpraw raw;
    enum fdp_ofptype type;
    uint8_t version;
    uint32_t xid;
    uint16_t length;            /* Of the whole message. */
    uint16_t hdr_len;           /* Bytes before the body: 8 (plain), 12 or
                                 * 16 (multipart 1.0, 1.1+), 16 (vendor),
                                 * 24 (vendor multipart). */
    uint16_t mp_flags;          /* Multipart flags; 0 for other messages. */
    uint32_t vendor;            /* Vendor id of an extension, else 0. */
    uint32_t subtype;           /* Its subtype, else 0. */
};

/* The length of the message that starts at 'p', of which 'avail' bytes are
 * at hand: 0 with '*msg_len' set once the 8-byte header is there
 * ('*msg_len' may exceed 'avail': read more), EAGAIN if fewer than 8 bytes
 * are there, OFPBRC_BAD_LEN if the length field is below 8. */
int fdp_ofp_frame(const uint8_t *p, size_t avail, size_t *msg_len);

/* Classifies the message 'msg' of 'len' bytes ('len' must equal the
 * header's length field): the header, the multipart header and the vendor
 * header, then the body's length against the row.  Returns 0 or:
 *   OFPBRC_BAD_LEN      shorter than its headers, a length field that is not
 *                       'len', a body that the row does not allow;
 *   OFPBRC_BAD_VENDOR   a vendor other than Nicira and ONF;
 *   OFPBRC_BAD_SUBTYPE  a vendor subtype flowdp does not know;
 *   OFPBRC_BAD_STAT     an unknown multipart type;
 *   OFPBRC_BAD_TYPE     an unknown type, or one that is not in this version.
 * On error '*h' has the version and xid (for the reply) and raw NONE. */
int fdp_ofp_decode_header(const uint8_t *msg, size_t len,
                          struct fdp_ofp_header *h);

/* The same, for callers that want only the type. */
int fdp_ofp_decode_type(const uint8_t *msg, size_t len,
                        enum fdp_ofptype *type);

/* As fdp_ofp_decode_header() but without the body-length check and with
 * 'len' allowed below the length field: for the copy of a request inside
 * an error message, which is cut at 64 bytes. */
int fdp_ofp_decode_header_partial(const uint8_t *msg, size_t len,
                                  struct fdp_ofp_header *h);

/* ---------------------------------------------------------------------- */
/* Encoding headers.                                                       */

/* The raw that version 'version' uses for 'type': the standard OpenFlow
 * form where there is one, else the extension; FDP_OFPRAW_NONE if none. */
enum fdp_ofpraw fdp_ofpraw_for(enum fdp_ofptype type, uint8_t version);

/* The reply raw for multipart request 'request' (OFPST10_FLOW_REQUEST ->
 * OFPST10_FLOW_REPLY in 1.0, NXST_FLOW_REQUEST -> NXST_FLOW_REPLY) in
 * 'version'; FDP_OFPRAW_NONE if 'request' is no multipart request. */
enum fdp_ofpraw fdp_ofpraw_stats_reply(enum fdp_ofpraw request,
                                       uint8_t version);

/* Appends the headers of 'raw' in 'version' with 'xid' (length 0 until
 * fdp_ofp_finish()) and returns the offset where the message starts.
 * 'raw' must exist in 'version' (an assertion: a programming error). */
size_t fdp_ofp_start(struct fdp__ofpbuf *b, enum fdp_ofpraw raw,
                     uint8_t version, uint32_t xid);

/* Fills in the length of the message that starts at offset 'start' (the
 * rest of 'b').  Returns 0, ENOMEM (an append failed earlier) or EMSGSIZE
 * (longer than 65535 bytes: the message must not be sent). */
int fdp_ofp_finish(struct fdp__ofpbuf *b, size_t start);

/* Multipart replies: a series of replies to one request, split before any
 * reply would pass 64 KiB, each but the last with OFPSF_REPLY_MORE, as
 * Open vSwitch's ofpmp_*() do.  The replies are appended to 'b' one after
 * another, each complete in itself, so the caller sends 'b' as it is. */
struct fdp_ofpmp {
    struct fdp__ofpbuf *b;
    size_t start;               /* Offset of the reply being filled. */
    size_t hdr_len;
    int error;                  /* First EMSGSIZE/ENOMEM, else 0. */
};

/* Starts the replies to the multipart request 'request' (decoded by
 * fdp_ofp_decode_header()) in 'b'. */
void fdp_ofpmp_init(struct fdp_ofpmp *, struct fdp__ofpbuf *b,
                    const struct fdp_ofp_header *request);

/* Call before appending one entry (a flow, a port...); returns the offset
 * to give fdp_ofpmp_entry_end() after the entry was appended to mp->b. */
size_t fdp_ofpmp_entry_start(const struct fdp_ofpmp *);

/* Ends the entry that started at 'entry_start': if the reply would now pass
 * 65535 bytes, the entry moves into a new reply.  An entry too long for any
 * reply is dropped and recorded as EMSGSIZE. */
void fdp_ofpmp_entry_end(struct fdp_ofpmp *, size_t entry_start);

/* Fills in the last reply's length; returns 0, EMSGSIZE or ENOMEM. */
int fdp_ofpmp_finish(struct fdp_ofpmp *);

/* Whether the multipart message 'msg' (of 'len' bytes, decoded) says more
 * parts follow. */
bool fdp_ofpmp_more(const struct fdp_ofp_header *h);

/* ---------------------------------------------------------------------- */
/* Errors.                                                                 */

/* Appends an OFPT_ERROR for 'error' in 'version', with the xid of
 * 'request' and its first 64 bytes (fewer if it is shorter) as data; with
 * 'request' NULL, xid 0 and no data.  Returns 0, EINVAL ('error' is no
 * enum fdp_ofperr) or ENOMEM. */
int fdp_ofp_encode_error(struct fdp__ofpbuf *b, enum fdp_ofperr error,
                         const uint8_t *request, size_t len, uint8_t version);

/* A hello failure: xid 0 and the text 's' as data (OpenFlow says so). */
int fdp_ofp_encode_hello_error(struct fdp__ofpbuf *b, enum fdp_ofperr error,
                               uint8_t version, const char *s);

/* Decodes the OFPT_ERROR 'msg': '*error' is the error it names (0 if
 * flowdp has no name for it, with 'vendor', 'type' and 'code' then the raw
 * values); 'data'/'data_len' point at the payload inside 'msg'. */
struct fdp_ofp_error {
    enum fdp_ofperr error;
    uint32_t vendor;            /* 0 for standard errors. */
    uint16_t type, code;
    const uint8_t *data;
    size_t data_len;
};
int fdp_ofp_decode_error(const uint8_t *msg, size_t len,
                         struct fdp_ofp_error *);

/* The wire form of 'error' in 'version': 0 and the vendor (0 for standard,
 * FDP_OFP_VENDOR_NX/ONF for extension errors), type and code; EINVAL if
 * the version has no form for it (fdp_ofp_encode_error() then sends
 * NXBRC_UNENCODABLE_ERROR as Open vSwitch does). */
int fdp_ofperr_wire(enum fdp_ofperr error, uint8_t version,
                    uint32_t *vendor, uint16_t *type, uint16_t *code);

/* ---------------------------------------------------------------------- */
/* Hello, echo, barrier, features, config.                                 */

/* Bitmap of versions: bit V for version byte V (1 << FDP_OFP13...). */
#define FDP_OFP_VERSIONS_ALL ((1u << FDP_OFP10) | (1u << FDP_OFP11)          \
                              | (1u << FDP_OFP12) | (1u << FDP_OFP13)       \
                              | (1u << FDP_OFP14) | (1u << FDP_OFP15))

/* A hello announcing the versions in 'allowed' (header version = the
 * highest; a version-bitmap element when 'allowed' is not every version
 * from 1.0 to the highest), xid 'xid'. */
int fdp_ofp_encode_hello(struct fdp__ofpbuf *b, uint32_t allowed,
                         uint32_t xid);

/* The versions hello 'msg' announces: its bitmap element if it has one,
 * else every version from 1.0 to its header's.  Returns 0, or EPROTO (with
 * '*peer' still set from what could be read) if an element could not be
 * understood: as Open vSwitch, negotiation goes on. */
int fdp_ofp_decode_hello(const uint8_t *msg, size_t len, uint32_t *peer);

/* The highest version in both sets: 0 and '*version', or
 * OFPHFC_INCOMPATIBLE. */
int fdp_ofp_negotiate(uint32_t ours, uint32_t peer, uint8_t *version);

/* An echo reply to echo request 'request' (same xid and payload). */
int fdp_ofp_encode_echo_reply(struct fdp__ofpbuf *b, const uint8_t *request,
                              size_t len);

/* A message of type 'type' with an empty body in 'version' (echo request,
 * barrier request and reply, features request, get-config request, get
 * async request, TLV table request, monitor paused/resumed...).  EINVAL if
 * the type has no empty form in that version. */
int fdp_ofp_encode_empty(struct fdp__ofpbuf *b, enum fdp_ofptype type,
                         uint8_t version, uint32_t xid);

/* A port, as features replies (1.0-1.2), port status and port desc carry
 * it.  Values are in OpenFlow 1.1's bit layout (OFPPF11_*, OFPPC_*,
 * OFPPS11_*); 1.0's features are converted (its bits 7-11 are 1.1's
 * 8-12), and its config and state keep only what both versions share. */
struct fdp_ofp_port {
    uint32_t port_no;           /* 32-bit (1.1+) numbering: 1.0's 0xff00+
                                 * reserved ports become 0xffffff00+. */
    uint8_t hw_addr[6];
    char name[16];              /* NUL-terminated. */
    uint32_t config;            /* OFPPC_*. */
    uint32_t state;             /* OFPPS_*. */
    uint32_t curr, advertised, supported, peer;     /* OFPPF11_*. */
    uint32_t curr_speed, max_speed;                 /* kbps. */
};

/* OpenFlow 1.0 port numbers against 1.1+'s. */
uint32_t fdp_ofp_port_from_ofp10(uint16_t port);
uint16_t fdp_ofp_port_to_ofp10(uint32_t port);

struct fdp_ofp_features {
    uint64_t datapath_id;
    uint32_t n_buffers;
    uint8_t n_tables;
    uint8_t auxiliary_id;       /* 1.3+. */
    uint32_t capabilities;      /* OFPC_* as the version writes them. */
    uint32_t actions;           /* 1.0's supported actions bitmap. */
    size_t n_ports;             /* In the reply of 1.0-1.2 only. */
    struct fdp_ofp_port *ports; /* Decoders allocate; free() it. */
};

int fdp_ofp_encode_features_reply(struct fdp__ofpbuf *b,
                                  const struct fdp_ofp_features *,
                                  uint8_t version, uint32_t xid);
int fdp_ofp_decode_features_reply(const uint8_t *msg, size_t len,
                                  struct fdp_ofp_features *);

/* Switch config (get-config reply, set-config). */
struct fdp_ofp_switch_config {
    uint16_t flags;             /* OFPC_FRAG_* (normal 0, drop 1,
                                 * reasm 2, nx-match 3) and in 1.1-1.2
                                 * OFPC_INVALID_TTL_TO_CONTROLLER (4). */
    uint16_t miss_send_len;
};
int fdp_ofp_encode_switch_config(struct fdp__ofpbuf *b,
                                 enum fdp_ofptype type, /* GET_CONFIG_REPLY
                                                         * or SET_CONFIG */
                                 const struct fdp_ofp_switch_config *,
                                 uint8_t version, uint32_t xid);
int fdp_ofp_decode_switch_config(const uint8_t *msg, size_t len,
                                 struct fdp_ofp_switch_config *);

/* ---------------------------------------------------------------------- */
/* Statistics without matches.                                             */

struct fdp_ofp_desc {
    char mfr_desc[256], hw_desc[256], sw_desc[256];
    char serial_num[32], dp_desc[256];
};
int fdp_ofp_encode_desc_reply(struct fdp__ofpbuf *b,
                              const struct fdp_ofp_header *request,
                              const struct fdp_ofp_desc *);
int fdp_ofp_decode_desc_reply(const uint8_t *msg, size_t len,
                              struct fdp_ofp_desc *);

/* Port desc replies: one entry per port in the request's version. */
int fdp_ofp_put_port(struct fdp__ofpbuf *b, const struct fdp_ofp_port *,
                     uint8_t version);
/* Reads the next port of a port desc reply's body (or a port status's
 * port): 0 and '*port', EOF at the end of 'r', or an error. */
int fdp_ofp_pull_port(struct fdp__ofp_reader *r, uint8_t version,
                      struct fdp_ofp_port *port);
/* A whole port desc reply (split into parts as needed). */
int fdp_ofp_encode_port_desc_reply(struct fdp__ofpbuf *b,
                                   const struct fdp_ofp_header *request,
                                   const struct fdp_ofp_port *ports,
                                   size_t n_ports);
/* The port a port desc request names (1.5 has one; earlier: OFPP_ANY). */
int fdp_ofp_decode_port_desc_request(const uint8_t *msg, size_t len,
                                     uint32_t *port_no);

/* Port status. */
enum { FDP_OFPPR_ADD = 0, FDP_OFPPR_DELETE = 1, FDP_OFPPR_MODIFY = 2 };
int fdp_ofp_encode_port_status(struct fdp__ofpbuf *b, uint8_t reason,
                               const struct fdp_ofp_port *, uint8_t version,
                               uint32_t xid);
int fdp_ofp_decode_port_status(const uint8_t *msg, size_t len,
                               uint8_t *reason, struct fdp_ofp_port *);

/* Port statistics. */
#define FDP_OFPP_ANY 0xffffffffu        /* OFPP_ANY (1.0's OFPP_NONE). */
struct fdp_ofp_port_stats {
    uint32_t port_no;
    uint64_t rx_packets, tx_packets, rx_bytes, tx_bytes;
    uint64_t rx_dropped, tx_dropped, rx_errors, tx_errors;
    uint64_t rx_frame_err, rx_over_err, rx_crc_err, collisions;
    uint32_t duration_sec, duration_nsec;   /* 1.3+; UINT32_MAX unknown. */
};
int fdp_ofp_decode_port_stats_request(const uint8_t *msg, size_t len,
                                      uint32_t *port_no);
int fdp_ofp_encode_port_stats_request(struct fdp__ofpbuf *b, uint32_t port,
                                      uint8_t version, uint32_t xid);
int fdp_ofp_encode_port_stats_reply(struct fdp__ofpbuf *b,
                                    const struct fdp_ofp_header *request,
                                    const struct fdp_ofp_port_stats *,
                                    size_t n);
/* The next entry of a port stats reply body: 0, EOF at the end, or an
 * error. */
int fdp_ofp_pull_port_stats(struct fdp__ofp_reader *r, uint8_t version,
                            struct fdp_ofp_port_stats *);

/* Queue statistics: flowdp has no queues, so a reply is empty. */
int fdp_ofp_encode_queue_stats_reply(struct fdp__ofpbuf *b,
                                     const struct fdp_ofp_header *request);

/* Table statistics (1.3+'s form is all 1.3+ carries: active count, lookups
 * and matches; 1.0-1.2 also name and limits). */
struct fdp_ofp_table_stats {
    uint8_t table_id;
    char name[32];
    uint32_t max_entries;
    uint32_t active_count;
    uint64_t lookup_count;
    uint64_t matched_count;
};
int fdp_ofp_encode_table_stats_reply(struct fdp__ofpbuf *b,
                                     const struct fdp_ofp_header *request,
                                     const struct fdp_ofp_table_stats *,
                                     size_t n);
int fdp_ofp_pull_table_stats(struct fdp__ofp_reader *r, uint8_t version,
                             struct fdp_ofp_table_stats *);

/* Aggregate statistics reply (the request is a flow stats request). */
struct fdp_ofp_aggregate_stats {
    uint64_t packet_count, byte_count;
    uint32_t flow_count;
};
int fdp_ofp_encode_aggregate_reply(struct fdp__ofpbuf *b,
                                   const struct fdp_ofp_header *request,
                                   const struct fdp_ofp_aggregate_stats *);
int fdp_ofp_decode_aggregate_reply(const uint8_t *msg, size_t len,
                                   struct fdp_ofp_aggregate_stats *);

/* ---------------------------------------------------------------------- */
/* Flow mods, flow statistics, flow removed (lib/ofp-flow.c).  These need
 * the match and action codecs (lib/ofp-match.h, lib/ofp-actions.h).       */

enum fdp_ofp_flow_command {
    FDP_OFPFC_ADD = 0,
    FDP_OFPFC_MODIFY = 1,
    FDP_OFPFC_MODIFY_STRICT = 2,
    FDP_OFPFC_DELETE = 3,
    FDP_OFPFC_DELETE_STRICT = 4,
};

/* Flow mod flags, in 1.3's bit layout (1.0's EMERG is refused): the bits
 * a flow keeps (flowdp/flow.h's FDP_FLOW_F_*, the same layout). */
enum {
    FDP_OFPFF_SEND_FLOW_REM = FDP_FLOW_F_SEND_FLOW_REM,
    FDP_OFPFF_CHECK_OVERLAP = FDP_FLOW_F_CHECK_OVERLAP,
    FDP_OFPFF_RESET_COUNTS = FDP_FLOW_F_RESET_COUNTS,
    FDP_OFPFF_NO_PKT_COUNTS = FDP_FLOW_F_NO_PKT_COUNTS,
    FDP_OFPFF_NO_BYT_COUNTS = FDP_FLOW_F_NO_BYT_COUNTS,
};

#define FDP_OFP_NO_BUFFER 0xffffffffu
#define FDP_OFPG_ANY 0xffffffffu
#define FDP_OFPTT_ALL 0xff

/* A flow mod, whatever its wire form.  'spec' holds match, actions (as
 * decoded, an empty list if the message had none: deletes carry them
 * too), cookie and cookie_mask (the selector of modify and delete; for an
 * add, the new cookie and mask 0), priority, timeouts and table_id (0xff:
 * none given, see 'table_given'). */
struct fdp_ofp_flow_mod {
    struct fdp_flow_spec spec;
    enum fdp_ofp_flow_command command;
    bool table_given;           /* False for table 0xff (every table in a
                                 * delete; for add/modify a 1.0 message
                                 * without NXT_FLOW_MOD_TABLE_ID: table 0). */
    uint64_t new_cookie;        /* Modify: the cookie to set, or
                                 * UINT64_MAX to keep. */
    uint32_t buffer_id;
    uint32_t out_port;          /* FDP_OFPP_ANY: no restriction. */
    uint32_t out_group;         /* FDP_OFPG_ANY: no restriction. */
    uint16_t flags;             /* FDP_OFPFF_*. */
    uint16_t importance;        /* 1.4+. */
};

/* Decodes an OFPT_FLOW_MOD (1.0: ofp_match and 1.0 actions; 1.1+: OXM and
 * instructions) or NXT_FLOW_MOD (NXM and actions).  'table_id_enabled' is
 * the connection's NXT_FLOW_MOD_TABLE_ID state: in 1.0 and NXT_FLOW_MOD the
 * command's high byte is then the table.  The caller frees with
 * fdp_ofp_flow_mod_destroy(). */
int fdp_ofp_decode_flow_mod(const uint8_t *msg, size_t len,
                            const struct fdp_tlv_map *tlv,
                            bool table_id_enabled,
                            struct fdp_ofp_flow_mod *);
void fdp_ofp_flow_mod_destroy(struct fdp_ofp_flow_mod *);

/* Appends 'fm' as 'raw' (OFPT10_FLOW_MOD, OFPT11_FLOW_MOD or NXT_FLOW_MOD)
 * in 'version'. */
int fdp_ofp_encode_flow_mod(struct fdp__ofpbuf *b,
                            const struct fdp_ofp_flow_mod *fm,
                            enum fdp_ofpraw raw, uint8_t version,
                            uint32_t xid, const struct fdp_tlv_map *tlv);

/* Flow statistics and aggregate requests. */
struct fdp_ofp_flow_stats_request {
    struct fdp_match *match;
    uint64_t cookie, cookie_mask;
    uint32_t out_port, out_group;
    uint8_t table_id;           /* FDP_OFPTT_ALL: every table. */
    bool aggregate;
};
int fdp_ofp_decode_flow_stats_request(const uint8_t *msg, size_t len,
                                      const struct fdp_tlv_map *tlv,
                                      struct fdp_ofp_flow_stats_request *);
void fdp_ofp_flow_stats_request_destroy(struct fdp_ofp_flow_stats_request *);
int fdp_ofp_encode_flow_stats_request(struct fdp__ofpbuf *b,
                                      const struct fdp_ofp_flow_stats_request
                                      *, enum fdp_ofpraw raw, uint8_t version,
                                      uint32_t xid,
                                      const struct fdp_tlv_map *tlv);

/* OpenFlow 1.5's OXS statistics (struct ofp_oxs_stat and its entries of
 * class OFPXSC_OPENFLOW_BASIC), as flow descriptions and aggregate
 * replies carry them.  The 'has_' members say which are present. */
struct fdp__oxs_stats {
    bool has_duration, has_idle_time, has_flow_count;
    bool has_packet_count, has_byte_count;
    uint32_t duration_sec, duration_nsec;
    uint32_t idle_time_sec;
    uint32_t flow_count;
    uint64_t packet_count, byte_count;
};
/* Appends 'st' as a struct ofp_oxs_stat padded to 8 bytes. */
void fdp__ofp_put_oxs_stats(struct fdp__ofpbuf *, const struct fdp__oxs_stats *);
/* Reads one from 'r' (its padding too) into '*st'; 0 or an enum
 * fdp_ofperr.  Entries of other classes or fields are skipped. */
int fdp__ofp_pull_oxs_stats(struct fdp__ofp_reader *r,
                            struct fdp__oxs_stats *st);

/* One flow of a flow stats reply. */
struct fdp_ofp_flow_stats {
    const struct fdp_flow_spec *spec;   /* Encoding: the caller's. */
    uint32_t duration_sec, duration_nsec;
    uint16_t idle_age, hard_age;        /* NXST_FLOW only: seconds since
                                         * used, modified; 0xffff none. */
    uint16_t flags;                     /* FDP_OFPFF_* (1.3+). */
    uint16_t importance;                /* 1.4+. */
    uint64_t packet_count, byte_count;
};
/* Appends one flow to the replies of 'mp' (whose request decided the
 * form: 1.0, 1.1+, NXST_FLOW). */
int fdp_ofp_put_flow_stats(struct fdp_ofpmp *mp,
                           const struct fdp_ofp_flow_stats *,
                           const struct fdp_tlv_map *tlv);
/* The next flow of a flow stats reply body: 0 (the caller frees
 * '*spec' with fdp_flow_spec_destroy()), EOF, or an error. */
int fdp_ofp_pull_flow_stats(struct fdp__ofp_reader *r, enum fdp_ofpraw raw,
                            uint8_t version, const struct fdp_tlv_map *tlv,
                            struct fdp_flow_spec *spec,
                            struct fdp_ofp_flow_stats *);

/* Flow removed. */
struct fdp_ofp_flow_removed {
    const struct fdp_match *match;  /* Encoding: the caller's. */
    uint64_t cookie;
    uint16_t priority;
    uint8_t reason;             /* OFPRR_IDLE_TIMEOUT 0, HARD 1, DELETE 2,
                                 * GROUP_DELETE 3, METER_DELETE 4,
                                 * EVICTION 5. */
    uint8_t table_id;
    uint32_t duration_sec, duration_nsec;
    uint16_t idle_timeout, hard_timeout;
    uint64_t packet_count, byte_count;
};
int fdp_ofp_encode_flow_removed(struct fdp__ofpbuf *b,
                                const struct fdp_ofp_flow_removed *,
                                enum fdp_ofpraw raw, uint8_t version,
                                const struct fdp_tlv_map *tlv);

/* ---------------------------------------------------------------------- */
/* Bundles, roles, async config and Nicira's controls (lib/ofp-ctrl.c).    */

enum fdp_ofp_bundle_type {
    FDP_OFPBCT_OPEN_REQUEST = 0,
    FDP_OFPBCT_OPEN_REPLY = 1,
    FDP_OFPBCT_CLOSE_REQUEST = 2,
    FDP_OFPBCT_CLOSE_REPLY = 3,
    FDP_OFPBCT_COMMIT_REQUEST = 4,
    FDP_OFPBCT_COMMIT_REPLY = 5,
    FDP_OFPBCT_DISCARD_REQUEST = 6,
    FDP_OFPBCT_DISCARD_REPLY = 7,
};
enum { FDP_OFPBF_ATOMIC = 1 << 0, FDP_OFPBF_ORDERED = 1 << 1 };

struct fdp_ofp_bundle_ctrl {
    uint32_t bundle_id;
    uint16_t type;              /* enum fdp_ofp_bundle_type. */
    uint16_t flags;             /* FDP_OFPBF_*. */
};
/* A bundle control (OFPT14_BUNDLE_CONTROL or ONFT13_BUNDLE_CONTROL).  Its
 * properties are ignored, as Open vSwitch ignores them. */
int fdp_ofp_decode_bundle_ctrl(const uint8_t *msg, size_t len,
                               struct fdp_ofp_bundle_ctrl *);
/* The reply to bundle control 'request' (decoded header): same raw,
 * version and xid, 'bc' (its type one of the *_REPLY). */
int fdp_ofp_encode_bundle_ctrl(struct fdp__ofpbuf *b,
                               const struct fdp_ofp_header *request,
                               const struct fdp_ofp_bundle_ctrl *bc);

/* A bundle add-message: the inner message is returned as a pointer into
 * 'msg', checked as Open vSwitch checks it: of the outer version
 * (OFPBFC_BAD_VERSION), a whole
 * message inside the outer one (OFPBFC_MSG_BAD_LEN), the outer xid
 * (OFPBFC_MSG_BAD_XID), a type a bundle may hold: flow mod, group mod,
 * port mod, packet out (OFPBFC_MSG_UNSUP, also for one that does not
 * decode). */
struct fdp_ofp_bundle_add {
    uint32_t bundle_id;
    uint16_t flags;
    enum fdp_ofptype inner_type;
    const uint8_t *inner;
    size_t inner_len;
};
int fdp_ofp_decode_bundle_add(const uint8_t *msg, size_t len,
                              struct fdp_ofp_bundle_add *);
int fdp_ofp_encode_bundle_add(struct fdp__ofpbuf *b, enum fdp_ofpraw raw,
                              uint8_t version, uint32_t xid,
                              const struct fdp_ofp_bundle_add *);

/* Controller roles, in OpenFlow 1.2's numbering (NXT_ROLE_REQUEST's
 * other/master/slave are equal/master/slave here). */
enum fdp_ofp_role {
    FDP_OFPCR_ROLE_NOCHANGE = 0,
    FDP_OFPCR_ROLE_EQUAL = 1,
    FDP_OFPCR_ROLE_MASTER = 2,
    FDP_OFPCR_ROLE_SLAVE = 3,
};
struct fdp_ofp_role_request {
    enum fdp_ofp_role role;
    bool have_generation_id;    /* Master and slave requests of 1.2+. */
    uint64_t generation_id;     /* As the wire said, whatever the role. */
};
/* Role requests (OFPT12_ROLE_REQUEST, NXT_ROLE_REQUEST); OFPRRFC_BAD_ROLE
 * for a role outside the table (and NOCHANGE in the NX form). */
int fdp_ofp_decode_role_request(const uint8_t *msg, size_t len,
                                struct fdp_ofp_role_request *);
/* The reply to role request 'request' (decoded header): the same form. */
int fdp_ofp_encode_role_reply(struct fdp__ofpbuf *b,
                              const struct fdp_ofp_header *request,
                              const struct fdp_ofp_role_request *);
int fdp_ofp_encode_role_request(struct fdp__ofpbuf *b, enum fdp_ofpraw raw,
                                uint8_t version, uint32_t xid,
                                const struct fdp_ofp_role_request *);

/* Asynchronous message configuration: per kind of message, a bitmap of
 * reasons for master/equal and one for slave connections, as the wire
 * says them (bit N = reason N of the connection's version).  Open vSwitch
 * also translates 1.4's finer packet-in reasons to 1.0's OFPR_ACTION when
 * it encodes for older versions; this layer does not (the masks pass
 * through as they are). */
enum fdp_ofp_async_kind {
    FDP_OAK_PACKET_IN,          /* Bits: OFPR_* reasons. */
    FDP_OAK_PORT_STATUS,        /* OFPPR_*. */
    FDP_OAK_FLOW_REMOVED,       /* OFPRR_*. */
    FDP_OAK_ROLE_STATUS,        /* 1.4+. */
    FDP_OAK_TABLE_STATUS,
    FDP_OAK_REQUESTFORWARD,
    FDP_OAK_N
};
struct fdp_ofp_async_config {
    uint32_t master[FDP_OAK_N];
    uint32_t slave[FDP_OAK_N];
};
/* A set-async (OFPT13_SET_ASYNC, NXT_SET_ASYNC_CONFIG, OFPT14_SET_ASYNC,
 * NXT_SET_ASYNC_CONFIG2), applied on top of 'cfg' (1.4's properties may
 * name only some kinds).  Properties: OFPACFC_UNSUPPORTED for an unknown
 * one, OFPACFC_INVALID for a reason the kind lacks, OFPTFFC_BAD_LEN (Open
 * vSwitch's OFPBPC_BAD_LEN, whose codes it has) for a bad length. */
int fdp_ofp_decode_set_async(const uint8_t *msg, size_t len,
                             struct fdp_ofp_async_config *cfg);
/* The get-async reply to 'request' (decoded header). */
int fdp_ofp_encode_get_async_reply(struct fdp__ofpbuf *b,
                                   const struct fdp_ofp_header *request,
                                   const struct fdp_ofp_async_config *);
/* A set-async in 'version' (1.3 and NX: the 24-byte form; 1.4+:
 * properties). */
int fdp_ofp_encode_set_async(struct fdp__ofpbuf *b, enum fdp_ofpraw raw,
                             uint8_t version, uint32_t xid,
                             const struct fdp_ofp_async_config *);

/* Nicira's one-value controls. */
enum {
    FDP_NXFF_OPENFLOW10 = 0,    /* NXT_SET_FLOW_FORMAT. */
    FDP_NXFF_NXM = 2,
    FDP_NXPIF_STANDARD = 0,     /* NXT_SET_PACKET_IN_FORMAT. */
    FDP_NXPIF_NXT_PACKET_IN = 1,
    FDP_NXPIF_NXT_PACKET_IN2 = 2,
};
/* The 32-bit value of NXT_SET_FLOW_FORMAT (OFPBRC_EPERM for a format
 * other than OpenFlow 1.0 and NXM, as Open vSwitch) or
 * NXT_SET_PACKET_IN_FORMAT (OFPBRC_EPERM for an unknown format). */
int fdp_ofp_decode_nx_u32(const uint8_t *msg, size_t len, uint32_t *value);
/* NXT_FLOW_MOD_TABLE_ID: 'enable' is its first byte (nonzero: on). */
int fdp_ofp_decode_flow_mod_table_id(const uint8_t *msg, size_t len,
                                     bool *enable);
/* NXT_SET_CONTROLLER_ID. */
int fdp_ofp_decode_controller_id(const uint8_t *msg, size_t len,
                                 uint16_t *id);
/* NXT_CT_FLUSH_ZONE. */
int fdp_ofp_decode_ct_flush_zone(const uint8_t *msg, size_t len,
                                 uint16_t *zone);
/* NXT_FLOW_MONITOR_CANCEL / ONFT13_FLOW_MONITOR_CANCEL. */
int fdp_ofp_decode_flow_monitor_cancel(const uint8_t *msg, size_t len,
                                       uint32_t *id);
/* Encoders of the same, for tests and clients: 'raw' with the value. */
int fdp_ofp_encode_nx_value(struct fdp__ofpbuf *b, enum fdp_ofpraw raw,
                            uint8_t version, uint32_t xid, uint32_t value);

/* ---------------------------------------------------------------------- */
/* Packet-out and packet-in (lib/ofp-packet.c).                            */

/* A packet-out.  'in_port' is in 1.1+'s 32-bit numbering (OFPP_CONTROLLER
 * 0xfffffffd, OFPP_LOCAL 0xfffffffe, OFPP_NONE/ANY 0xffffffff); 'match' is
 * 1.5's pipeline metadata (NULL before 1.5); 'packet' points into the
 * message, and is empty when 'buffer_id' names a buffer. */
struct fdp_ofp_packet_out {
    uint32_t buffer_id;
    uint32_t in_port;
    struct fdp_match *match;
    struct fdp_actions *actions;
    const uint8_t *packet;
    size_t packet_len;
};
/* Decodes OFPT_PACKET_OUT of any version; OFPBRC_BAD_PORT for an input
 * port that is no port (as Open vSwitch: below OFPP_MAX, or LOCAL, NONE,
 * CONTROLLER; in 1.5 the match must name it).  The caller frees with
 * fdp_ofp_packet_out_destroy(). */
int fdp_ofp_decode_packet_out(const uint8_t *msg, size_t len,
                              const struct fdp_tlv_map *tlv,
                              struct fdp_ofp_packet_out *);
void fdp_ofp_packet_out_destroy(struct fdp_ofp_packet_out *);
int fdp_ofp_encode_packet_out(struct fdp__ofpbuf *b,
                              const struct fdp_ofp_packet_out *,
                              uint8_t version, uint32_t xid,
                              const struct fdp_tlv_map *tlv);

/* Packet-in reasons (OFPR_*). */
enum {
    FDP_OFPR_NO_MATCH = 0,
    FDP_OFPR_ACTION = 1,
    FDP_OFPR_INVALID_TTL = 2,
    FDP_OFPR_ACTION_SET = 3,    /* 1.4+. */
    FDP_OFPR_GROUP = 4,
    FDP_OFPR_PACKET_OUT = 5,
};

/* A packet-in.  'metadata' is the match of the packet's pipeline fields
 * (in_port, registers, tunnel and ct fields...) that 1.2+ and NX forms
 * carry; 1.0's carries only 'in_port' (16-bit numbering there).
 * 'userdata' is NXT_PACKET_IN2's (controller(userdata=...)). */
struct fdp_ofp_packet_in {
    const uint8_t *packet;
    size_t packet_len;          /* Bytes of 'packet' sent. */
    uint32_t total_len;         /* The whole packet's length. */
    uint32_t buffer_id;         /* FDP_OFP_NO_BUFFER: flowdp buffers none. */
    uint32_t in_port;           /* 1.1+ numbering. */
    uint8_t reason;
    uint8_t table_id;
    uint64_t cookie;
    const struct fdp_match *metadata;   /* Encoding: the caller's. */
    struct fdp_match *metadata_owned;   /* Decoding: free with destroy. */
    const uint8_t *userdata;
    size_t userdata_len;
};
/* Appends a packet-in as 'raw' (OFPT10/12/13_PACKET_IN, NXT_PACKET_IN,
 * NXT_PACKET_IN2; fdp_ofpraw_for(PACKET_IN, version) gives the standard
 * one) in 'version', xid 0. */
int fdp_ofp_encode_packet_in(struct fdp__ofpbuf *b,
                             const struct fdp_ofp_packet_in *pin,
                             enum fdp_ofpraw raw, uint8_t version,
                             const struct fdp_tlv_map *tlv);
/* Decodes one (for tests and clients); pointers point into 'msg'. */
int fdp_ofp_decode_packet_in(const uint8_t *msg, size_t len,
                             const struct fdp_tlv_map *tlv,
                             struct fdp_ofp_packet_in *pin);
void fdp_ofp_packet_in_destroy(struct fdp_ofp_packet_in *pin);

/* ---------------------------------------------------------------------- */
/* Groups, meters, TLV tables and conntrack flushes (lib/ofp-group.c).     */

/* Group types (OFPGT11_*) and group mod commands (OFPGC11_*, OFPGC15_*,
 * and Open vSwitch's ADD_OR_MOD). */
enum {
    FDP_OFPGT_ALL = 0,
    FDP_OFPGT_SELECT = 1,
    FDP_OFPGT_INDIRECT = 2,
    FDP_OFPGT_FF = 3,
};
enum {
    FDP_OFPGC_ADD = 0,
    FDP_OFPGC_MODIFY = 1,
    FDP_OFPGC_DELETE = 2,
    FDP_OFPGC_INSERT_BUCKET = 3,        /* 1.5 and NXT_GROUP_MOD. */
    FDP_OFPGC_REMOVE_BUCKET = 5,        /* 1.5 and NXT_GROUP_MOD (4 is
                                         * unused). */
    FDP_OFPGC_ADD_OR_MOD = 0x8000,      /* Open vSwitch's extension. */
};
#define FDP_OFPG_MAX 0xffffff00u        /* The last real group id. */
#define FDP_OFPG_ALL 0xfffffffcu        /* Every group (deletes, stats). */
/* Bucket ids of 1.5 (command_bucket_id, and a bucket's own id up to
 * FDP_OFPG_BUCKET_MAX). */
#define FDP_OFPG_BUCKET_MAX 0xffffff00u
#define FDP_OFPG_BUCKET_FIRST 0xfffffffdu
#define FDP_OFPG_BUCKET_LAST 0xfffffffeu
#define FDP_OFPG_BUCKET_ALL 0xffffffffu

/* One bucket.  'watch_port' is in 1.1+'s 32-bit numbering (FDP_OFPP_ANY:
 * none), 'watch_group' FDP_OFPG_ANY if none.  1.1-1.4 buckets carry no id:
 * decoding numbers them 0, 1, ... as Open vSwitch does. */
struct fdp_ofp_bucket {
    uint32_t bucket_id;
    uint16_t weight;
    uint32_t watch_port;
    uint32_t watch_group;
    struct fdp_actions *actions;        /* Owned; never NULL once decoded. */
};

/* A group mod, or one group of a group desc reply.  The selection method
 * (1.5 and NXT_GROUP_MOD's Netronome property) is "" if none; 'fields'
 * are its OXM/NXM entries as the wire has them, each a header without
 * mask followed by the field's width of mask bytes (Open vSwitch's field
 * array), checked when decoded: fields a selection hash takes, each once. */
struct fdp_ofp_group {
    uint16_t command;           /* FDP_OFPGC_* (group mods only). */
    uint8_t type;               /* FDP_OFPGT_*. */
    uint32_t group_id;
    uint32_t command_bucket_id; /* FDP_OFPG_BUCKET_ALL before 1.5. */
    size_t n_buckets;
    struct fdp_ofp_bucket *buckets;
    char selection_method[16];  /* "hash", "dp_hash" or "". */
    uint64_t selection_method_param;
    uint32_t ntr_experimenter;  /* The property's experimenter id as
                                 * decoded (Netronome's 0x154d or its older
                                 * 0x1540); 0 writes 0x154d. */
    uint8_t *fields;            /* Owned. */
    size_t fields_len;
};

/* Decodes a group mod (NXT_GROUP_MOD in 1.0, OFPT11_GROUP_MOD in 1.1-1.4,
 * OFPT15_GROUP_MOD in 1.5) with Open vSwitch 3.1's checks
 * (ofputil_decode_group_mod(): bucket lengths and ids OFPGMFC_BAD_BUCKET,
 * watch ports OFPGMFC_BAD_WATCH, properties OFPBPC_*, a delete with
 * buckets in 1.3+ OFPGMFC_INVALID_GROUP, then the type, command, weights
 * and liveness against the type).  The caller frees with
 * fdp_ofp_group_destroy(). */
int fdp_ofp_decode_group_mod(const uint8_t *msg, size_t len,
                             const struct fdp_tlv_map *tlv,
                             struct fdp_ofp_group *);
/* Appends 'g' as a group mod of 'version' (insert and remove bucket only in
 * 1.0 and 1.5: EINVAL elsewhere). */
int fdp_ofp_encode_group_mod(struct fdp__ofpbuf *b,
                             const struct fdp_ofp_group *g, uint8_t version,
                             uint32_t xid, const struct fdp_tlv_map *tlv);
void fdp_ofp_group_destroy(struct fdp_ofp_group *);
/* Moves the buckets of 'from' (which keeps none) to the end of 'to'.
 * Returns 0 or ENOMEM. */
int fdp_ofp_group_take_buckets(struct fdp_ofp_group *to,
                               struct fdp_ofp_group *from, size_t at);

/* The group a group stats or group desc request names (FDP_OFPG_ALL for
 * every group; 1.1-1.4's desc request names none, so every group). */
int fdp_ofp_decode_group_request(const uint8_t *msg, size_t len,
                                  uint32_t *group_id);
/* A group stats, desc or features request ('type') of 'version'. */
int fdp_ofp_encode_group_request(struct fdp__ofpbuf *b, enum fdp_ofptype type,
                                 uint8_t version, uint32_t xid,
                                 uint32_t group_id);

/* Group desc replies: one entry per group, in the reply's form (1.1-1.4's
 * ofp11_group_desc_stats, 1.0 and 1.5's with bucket ids and properties). */
int fdp_ofp_put_group_desc(struct fdp_ofpmp *mp, const struct fdp_ofp_group *,
                           const struct fdp_tlv_map *tlv);
/* The next group of a desc reply body: 0 (free it with
 * fdp_ofp_group_destroy()), EOF, or an error. */
int fdp_ofp_pull_group_desc(struct fdp__ofp_reader *r, uint8_t version,
                            const struct fdp_tlv_map *tlv,
                            struct fdp_ofp_group *);

/* Group statistics (1.1 and 1.2 without the duration). */
struct fdp_ofp_group_stats {
    uint32_t group_id;
    uint32_t ref_count;
    uint64_t packet_count, byte_count;
    uint32_t duration_sec, duration_nsec;
    size_t n_buckets;
    struct fdp_ofp_bucket_counter {
        uint64_t packet_count, byte_count;
    } *buckets;                 /* Decoding: the caller free()s them. */
};
int fdp_ofp_put_group_stats(struct fdp_ofpmp *mp,
                            const struct fdp_ofp_group_stats *);
int fdp_ofp_pull_group_stats(struct fdp__ofp_reader *r, enum fdp_ofpraw raw,
                             struct fdp_ofp_group_stats *);

/* Group features: the bitmaps as the reply's version writes them. */
struct fdp_ofp_group_features {
    uint32_t types;             /* Bit N: group type N. */
    uint32_t capabilities;      /* OFPGFC_*. */
    uint32_t max_groups[4];
    uint32_t actions[4];        /* Bit N: action type N of the version. */
};
int fdp_ofp_encode_group_features_reply(struct fdp__ofpbuf *b,
                                        const struct fdp_ofp_header *request,
                                        const struct fdp_ofp_group_features *);
int fdp_ofp_decode_group_features_reply(const uint8_t *msg, size_t len,
                                        struct fdp_ofp_group_features *);

/* The text flowdp's group parser reads (flowdp/group.h) for 'g': what
 * ovs-ofctl add-group would take for it, every bucket with its bucket_id.
 * NULL if out of memory; the caller frees it. */
char *fdp_ofp_group_to_text(const struct fdp_ofp_group *g);

/* 'g' (a pipeline's group) as a desc reply entry: the caller frees 'out'
 * with fdp_ofp_group_destroy().  Returns 0 or ENOMEM. */
struct fdp_group;
int fdp_ofp_group_from_group(const struct fdp_group *g,
                             struct fdp_ofp_group *out);

/* Meter mod commands (OFPMC13_*). */
enum {
    FDP_OFPMC_ADD = 0,
    FDP_OFPMC_MODIFY = 1,
    FDP_OFPMC_DELETE = 2,
};
/* A meter mod: a delete carries no flags or bands. */
struct fdp_ofp_meter_mod {
    uint16_t command;
    struct fdp_meter_config config;
};
/* Decodes OFPT13_METER_MOD as Open vSwitch 3.1 does: OFPMMFC_BAD_COMMAND,
 * OFPMMFC_BAD_FLAGS (kbps and pktps), OFPMMFC_BAD_BAND (a band neither
 * drop nor dscp_remark), OFPBRC_BAD_LEN (a band not 16 bytes), and, past
 * flowdp's FDP_METER_MAX_BANDS, OFPMMFC_OUT_OF_BANDS. */
int fdp_ofp_decode_meter_mod(const uint8_t *msg, size_t len,
                             struct fdp_ofp_meter_mod *);
int fdp_ofp_encode_meter_mod(struct fdp__ofpbuf *b,
                             const struct fdp_ofp_meter_mod *,
                             uint8_t version, uint32_t xid);
/* The meter a meter stats or config request names (FDP_METER_ALL). */
int fdp_ofp_decode_meter_request(const uint8_t *msg, size_t len,
                                 uint32_t *meter_id);
int fdp_ofp_encode_meter_request(struct fdp__ofpbuf *b, enum fdp_ofptype type,
                                 uint8_t version, uint32_t xid,
                                 uint32_t meter_id);
int fdp_ofp_put_meter_config(struct fdp_ofpmp *mp,
                             const struct fdp_meter_config *);
int fdp_ofp_pull_meter_config(struct fdp__ofp_reader *r,
                              struct fdp_meter_config *);
/* Meter statistics: 'duration_ns' is sent as seconds and nanoseconds. */
int fdp_ofp_put_meter_stats(struct fdp_ofpmp *mp,
                            const struct fdp_meter_stats *);
int fdp_ofp_pull_meter_stats(struct fdp__ofp_reader *r,
                             struct fdp_meter_stats *);
struct fdp_ofp_meter_features {
    uint32_t max_meter;
    uint32_t band_types;        /* Bit N: band type N. */
    uint32_t capabilities;      /* FDP_METER_* flags. */
    uint8_t max_bands;
    uint8_t max_color;
};
int fdp_ofp_encode_meter_features_reply(struct fdp__ofpbuf *b,
                                        const struct fdp_ofp_header *request,
                                        const struct fdp_ofp_meter_features *);
int fdp_ofp_decode_meter_features_reply(const uint8_t *msg, size_t len,
                                        struct fdp_ofp_meter_features *);

/* NXT_TLV_TABLE_MOD and NXT_TLV_TABLE_REPLY's mappings. */
enum {
    FDP_NXTTMC_ADD = 0,
    FDP_NXTTMC_DELETE = 1,
    FDP_NXTTMC_CLEAR = 2,
};
struct fdp_ofp_tlv_mapping {
    uint16_t option_class;
    uint8_t option_type;
    uint8_t option_len;         /* Bytes, a multiple of 4 up to 124. */
    uint16_t index;             /* tun_metadataN's N, below 64. */
};
#define FDP_OFP_TLV_MAX_MAPPINGS 64
struct fdp_ofp_tlv_table {
    uint16_t command;           /* Mods only: FDP_NXTTMC_*. */
    uint32_t max_option_space;  /* Replies only. */
    uint16_t max_fields;        /* Replies only. */
    size_t n;
    struct fdp_ofp_tlv_mapping mappings[FDP_OFP_TLV_MAX_MAPPINGS];
};
/* Decodes NXT_TLV_TABLE_MOD (NXTTMFC_BAD_COMMAND, NXTTMFC_BAD_OPT_LEN,
 * NXTTMFC_BAD_FIELD_IDX, as Open vSwitch; more than 64 mappings are
 * NXTTMFC_TABLE_FULL) or NXT_TLV_TABLE_REPLY. */
int fdp_ofp_decode_tlv_table(const uint8_t *msg, size_t len,
                             struct fdp_ofp_tlv_table *);
/* Appends 'raw' (NXT_TLV_TABLE_MOD or NXT_TLV_TABLE_REPLY). */
int fdp_ofp_encode_tlv_table(struct fdp__ofpbuf *b, enum fdp_ofpraw raw,
                             const struct fdp_ofp_tlv_table *,
                             uint8_t version, uint32_t xid);
/* The mappings as flowdp's TLV map text (flowdp/tlv-map.h); NULL if out
 * of memory. */
char *fdp_ofp_tlv_table_to_text(const struct fdp_ofp_tlv_table *);
/* Reads the mappings of TLV map text 'text' (fdp_tlv_map_to_text()'s)
 * into 't'.  Returns 0 or EINVAL. */
int fdp_ofp_tlv_table_from_text(const char *text, struct fdp_ofp_tlv_table *t);

/* NXT_CT_FLUSH (Open vSwitch 3.1's ofp_ct_match): addresses are 16 bytes,
 * IPv4 as IPv4-mapped IPv6; 'l3' is 0 (no address given), 4 or 6. */
struct fdp_ofp_ct_tuple {
    uint8_t src[16], dst[16];
    uint16_t src_port, dst_port;
    uint16_t icmp_id;
    uint8_t icmp_type, icmp_code;
};
struct fdp_ofp_ct_flush {
    uint8_t ip_proto;
    uint8_t l3;
    struct fdp_ofp_ct_tuple orig, reply;
    bool has_zone;
    uint16_t zone;
};
/* Decodes NXT_CT_FLUSH (properties in any order; the encoder writes
 * Open vSwitch's order: tuples, then zone): NXBRC_MUST_BE_ZERO for padding that is not,
 * OFPBPC_BAD_LEN for a property that does not fit, OFPBPC_BAD_VALUE
 * (flowdp's OFPTFFC_BAD_ARGUMENT) for IPv4 and IPv6 addresses mixed.
 * Unknown properties are ignored, as Open vSwitch ignores them. */
int fdp_ofp_decode_ct_flush(const uint8_t *msg, size_t len,
                            struct fdp_ofp_ct_flush *);
int fdp_ofp_encode_ct_flush(struct fdp__ofpbuf *b,
                            const struct fdp_ofp_ct_flush *,
                            uint8_t version, uint32_t xid);

#endif /* FDP_OFP_MSGS_H */
