/*
 * flowdp: flows and their text syntax.
 *
 * A flow is a match with a priority, an action list and OpenFlow's
 * bookkeeping (table, cookie, timeouts).  Its text form is ovs-ofctl's:
 *
 *   [table=N,][priority=N,][cookie=0xN,][idle_timeout=N,][hard_timeout=N,]
 *   MATCH,actions=ACTIONS
 *
 * with, beyond ovs-ofctl, ranges FIELD=LO-HI on integer, IPv4, IPv6 and
 * MAC fields.  Formatting is canonical and prints what ovs-ofctl prints
 * for the same flow (field order, normalised masks, shorthands such as
 * "tcp" for dl_type=0x0800,nw_proto=6).
 *
 * Thread-safety: all functions may run concurrently on different flows.
 */
#ifndef FLOWDP_FLOW_H
#define FLOWDP_FLOW_H 1

#include <stdbool.h>
#include <stdint.h>
#include <flowdp/actions.h>
#include <flowdp/common.h>
#include <flowdp/match.h>

#ifdef __cplusplus
extern "C" {
#endif

/* OpenFlow's default priority: not printed. */
#define FDP_DEFAULT_PRIORITY 32768

/* A parsed flow.  The spec owns 'match' and 'actions'. */
struct fdp_flow_spec {
    struct fdp_match *match;
    struct fdp_actions *actions;    /* NULL if parsed with
                                     * FDP_PARSE_MATCH_ONLY. */
    uint64_t cookie;
    uint64_t cookie_mask;           /* "cookie=V/MASK", only with
                                     * FDP_PARSE_COOKIE_MASK: which cookie
                                     * bits select flows; 0 = none. */
    bool cookie_given;              /* The text had "cookie=" (so that
                                     * mod-flows can set cookie 0). */
    uint16_t priority;
    uint16_t idle_timeout;          /* Seconds; 0 = none. */
    uint16_t hard_timeout;          /* Seconds; 0 = none. */
    uint8_t table_id;
    uint16_t flags;                 /* FDP_FLOW_F_*: OpenFlow's flow mod
                                     * flags the flow keeps. */
};

/* The flags a flow keeps (Open vSwitch's OFPUTIL_FF_STATE, in OpenFlow
 * 1.3's bits), written as ovs-ofctl writes them ("send_flow_rem",
 * "check_overlap", "reset_counts", "no_packet_counts", "no_byte_counts").
 * An add sets them; a modify keeps the flow's.  flowdp keeps and prints
 * them; check_overlap is checked by an OpenFlow add; flowdpd sends a flow
 * removed message for a flow with send_flow_rem that times out. */
enum {
    FDP_FLOW_F_SEND_FLOW_REM = 1 << 0,
    FDP_FLOW_F_CHECK_OVERLAP = 1 << 1,
    FDP_FLOW_F_RESET_COUNTS = 1 << 2,
    FDP_FLOW_F_NO_PKT_COUNTS = 1 << 3,
    FDP_FLOW_F_NO_BYT_COUNTS = 1 << 4,
    FDP_FLOW_F_ALL = (1 << 5) - 1
};

/* fdp_flow_parse() flags. */
enum {
    /* The text is a match with optional table/priority/cookie (as
     * del-flows and dump-flows take): "actions=" is an error. */
    FDP_PARSE_MATCH_ONLY = 1 << 0,
    /* "cookie=VALUE/MASK" selects flows (mod-flows, del-flows,
     * dump-flows); without this flag a cookie mask is an error. */
    FDP_PARSE_COOKIE_MASK = 1 << 1,
    /* "cookie=" only selects flows (del-flows, dump-flows,
     * dump-aggregate): "cookie=VALUE/MASK" is taken (this implies
     * FDP_PARSE_COOKIE_MASK) and a plain "cookie=VALUE", which would set a
     * cookie and so select nothing, is an error naming the token, as
     * ovs-ofctl: "cannot set cookie (to match on a cookie, specify a mask,
     * e.g. cookie=0x11/-1)".  Without this flag a plain cookie would be
     * ignored as a selector, and "del-flows cookie=0x11" would delete every
     * flow. */
    FDP_PARSE_COOKIE_SELECT = 1 << 2,
    /* The match of a flow statistics request (dump-flows, dump-aggregate):
     * "priority=", "idle_timeout=" and "hard_timeout=" are errors, "unknown
     * keyword NAME" as ovs-ofctl says (its parser takes only a match,
     * cookie, table and out_port there: OpenFlow's request carries no
     * priority, so a dump cannot select by one). */
    FDP_PARSE_STATS_REQUEST = 1 << 3,
};

/* Parses one flow from 'text'.  On success returns 0 and fills 'flow',
 * which the caller frees with fdp_flow_spec_destroy().  On failure returns
 * EINVAL (bad text) or ENOMEM, leaves 'flow' empty, and, if 'errorp' is
 * nonnull, stores in '*errorp' a message the caller must free(), naming
 * the column and the offending token:
 *   "column 17: tp_dst: 99999 is out of range (0..65535)". */
FDP_API int fdp_flow_parse(const char *text, unsigned int flags,
                           struct fdp_flow_spec *flow, char **errorp);

/* Parses a packet written as exact field assignments in the flow syntax
 * ("in_port=3,tcp,nw_src=10.0.0.1,tp_dst=80"; shorthands allowed,
 * prerequisites required, masks, ranges and flow attributes refused) into
 * 'key'; fields not given are zero.  Returns 0, EINVAL with a message in
 * '*errorp' as fdp_flow_parse(), or ENOMEM. */
FDP_API int fdp_packet_parse(const char *text, struct fdp_key *key,
                             char **errorp);

/* Frees what 'flow' owns (not 'flow' itself).  Accepts an empty spec. */
FDP_API void fdp_flow_spec_destroy(struct fdp_flow_spec *flow);

/* Returns the canonical text of 'flow' in the form of ovs-ofctl
 * dump-flows --no-stats:
 *   [cookie=0xN, ][table=N, ][idle_timeout=N, ][hard_timeout=N, ]MATCH
 *   actions=ACTIONS
 * where MATCH starts with "priority=N," unless the priority is the
 * default.  The caller frees the string; NULL if out of memory. */
FDP_API char *fdp_flow_format(const struct fdp_flow_spec *flow);

struct fdp_rule_stats;

/* Returns the line ovs-ofctl dump-flows prints for 'flow' with statistics
 * 'stats' at monotonic time 'now_ms' (CLOCK_MONOTONIC, milliseconds):
 *   " cookie=0x5, duration=12.345s, table=0, n_packets=10, n_bytes=640,
 *   [idle_timeout=N, ][hard_timeout=N, ]idle_age=3, [hard_age=N, ]MATCH
 *   actions=..."
 * (one line), hard_age (seconds since 'stats->modified_ms') where
 * ovs-ofctl prints it: when it differs from the duration's seconds.  Both
 * ages stop at 65534, as the 16 bits of an NXST_FLOW reply carry them.
 * The caller frees the string; NULL if out of memory. */
FDP_API char *fdp_flow_format_stats(const struct fdp_flow_spec *flow,
                                    const struct fdp_rule_stats *stats,
                                    int64_t now_ms);

/* The canonical text of a match (with "priority=N," first unless
 * 'priority' is FDP_DEFAULT_PRIORITY), or of an action list (whose field
 * names depend on 'match', e.g. set_field to udp_src).  The caller frees
 * the string; NULL if out of memory. */
FDP_API char *fdp_match_format(const struct fdp_match *match, int priority);
FDP_API char *fdp_actions_format(const struct fdp_actions *actions,
                                 const struct fdp_match *match);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_FLOW_H */
