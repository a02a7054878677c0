/*
 * flowdp: OpenFlow groups, as Open vSwitch 3.1 has them.
 *
 * A group is a list of buckets, each an action list, that flows reach
 * with the action group:N.  Four types:
 *   all            every bucket runs, each on its own copy of the packet;
 *   indirect       the one bucket runs;
 *   select         one bucket, chosen by a hash of the packet's fields and
 *                  apportioned by the buckets' weights;
 *   fast_failover  (printed "ff") the first live bucket: one whose
 *                  watch_port is a port that exists and is up, or whose
 *                  watch_group has a live bucket.
 * Groups belong to a pipeline (pipeline.h): they change in its
 * transactions, at its versions, beside its flows, and a group that flows
 * use cannot be deleted without them (deleting it deletes them, as
 * OpenFlow does).  lib/group.c explains how groups are composed into a
 * packet's actions.
 *
 * Text syntax: what ovs-ofctl add-group takes and dump-groups prints,
 *   group_id=N,type=all|select|indirect|ff|fast_failover
 *   [,selection_method=hash|dp_hash[,selection_method_param=N]
 *    [,fields(FIELD[=MASK],...)|,fields=FIELD[=MASK]]]
 *   ,bucket=[bucket_id:N,][weight:N,][watch_port:P,][watch_group:G,]
 *    actions=ACTIONS[,bucket=...]
 * (the key=value spellings of the bucket parameters work too).  A group is
 * printed as ovs-ofctl -O OpenFlow13 dump-groups prints it, or, for a
 * group with a selection method (which OpenFlow 1.3 cannot carry), as
 * -O OpenFlow15 prints it (with each bucket's bucket_id).
 *
 * Thread-safety: the parse and format functions are pure.  The pipeline's
 * group functions are modifiers (serialised on the pipeline's mutex, in
 * the caller's transaction if it has one) or, for the readers
 * (fdp_pipeline_group_dump()), RCU readers that may run at any time.
 */
#ifndef FLOWDP_GROUP_H
#define FLOWDP_GROUP_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <flowdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fdp_group;
struct fdp_pipeline;

/* Group ids: 0 to FDP_GROUP_MAX; FDP_GROUP_ALL means every group (as
 * OpenFlow's OFPG_ALL, del-groups without an id). */
#define FDP_GROUP_MAX 0xffffff00u
#define FDP_GROUP_ALL 0xfffffffcu

/* What a group text describes. */
enum fdp_group_command {
    FDP_GROUP_ADD,          /* add-group: a new group (EEXIST if taken). */
    FDP_GROUP_MODIFY,       /* mod-group: replaces an existing group. */
    FDP_GROUP_ADD_OR_MOD,   /* mod-group --may-create. */
};

/* Parses one group text (ovs-ofctl add-group syntax) into '*groupp'.
 * Returns 0; or EINVAL with, if 'errorp' is nonnull, a message the caller
 * frees naming what is wrong and where ("column 12: type=foo: invalid
 * group type foo"); or ENOMEM. */
FDP_API int fdp_group_parse(const char *text, struct fdp_group **groupp,
                            char **errorp);

/* Parses the selector del-groups, dump-groups and dump-group-stats take:
 * empty (every group), "group_id=N", "group_id=all" or "N".  Returns 0
 * with '*group_id' set (FDP_GROUP_ALL for every group), or EINVAL with
 * a message in '*errorp'. */
FDP_API int fdp_group_parse_id(const char *text, uint32_t *group_id,
                               char **errorp);

/* Frees 'group'.  Accepts NULL. */
FDP_API void fdp_group_destroy(struct fdp_group *group);

FDP_API uint32_t fdp_group_get_id(const struct fdp_group *group);

/* The canonical text of 'group', as ovs-ofctl dump-groups prints it
 * (without the leading space).  The caller frees it; NULL if out of
 * memory. */
FDP_API char *fdp_group_format(const struct fdp_group *group);

/* A group's counters, as dump-group-stats prints them. */
struct fdp_group_stats {
    uint32_t group_id;
    uint32_t ref_count;         /* Flows whose actions name the group. */
    int64_t created_ms;         /* Monotonic ms when added or modified. */
    uint64_t n_packets, n_bytes;
    size_t n_buckets;
    struct {
        uint64_t n_packets, n_bytes;
    } *buckets;                 /* 'n_buckets', owned by the stats. */
};

/* Frees what 'stats' owns (not 'stats'). */
FDP_API void fdp_group_stats_destroy(struct fdp_group_stats *stats);

/* The line ovs-ofctl dump-group-stats prints for 'stats' at monotonic
 * time 'now_ms' (without the leading space).  The caller frees it. */
FDP_API char *fdp_group_stats_format(const struct fdp_group_stats *stats,
                                     int64_t now_ms);

/* ---- A pipeline's groups (modifiers) ---- */

/* Adds 'group' (which the pipeline takes, whatever the result) as
 * 'command' says.  Returns 0; EEXIST (FDP_GROUP_ADD of an id in use);
 * ENOENT (FDP_GROUP_MODIFY of an id not in use); ELOOP (a bucket's
 * group:N or watch_group leads back to the group); or ENOMEM.  A bucket
 * may name groups that do not exist (as Open vSwitch accepts). */
FDP_API int fdp_pipeline_group_add(struct fdp_pipeline *p,
                                   struct fdp_group *group,
                                   enum fdp_group_command command);

/* Deletes group 'group_id' (FDP_GROUP_ALL: every group) and every flow
 * whose actions name it; '*n_flows' (if nonnull) is set to the number of
 * flows deleted.  A missing group is no error (as OpenFlow).  Returns 0
 * or ENOMEM. */
FDP_API int fdp_pipeline_group_del(struct fdp_pipeline *p, uint32_t group_id,
                                   size_t *n_flows);

/* Says whether OpenFlow port 'port' is live (exists and is up), for the
 * fast-failover groups' watch_port.  Every port is down until said live.
 * A change publishes a new version (the datapath's cached outcomes
 * follow).  Returns 0, EINVAL (a port above 0xffff) or ENOMEM. */
FDP_API int fdp_pipeline_set_port_live(struct fdp_pipeline *p, uint32_t port,
                                       bool live);

/* ---- Readers ---- */

/* Calls 'cb(aux, group, stats)' for each group, in increasing id order
 * ('group_id' FDP_GROUP_ALL) or only for group 'group_id', as the
 * pipeline's current version has them; 'stats' is NULL unless
 * 'with_stats'.  Stops when 'cb' returns false.  Takes the RCU read lock
 * itself; 'group' and 'stats' are valid during the call only.  Returns 0
 * or ENOMEM. */
typedef bool fdp_group_dump_cb(void *aux, const struct fdp_group *group,
                               const struct fdp_group_stats *stats);
FDP_API int fdp_pipeline_group_dump(struct fdp_pipeline *p, uint32_t group_id,
                                    bool with_stats, fdp_group_dump_cb *cb,
                                    void *aux);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_GROUP_H */
