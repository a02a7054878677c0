/*
 * OpenFlow groups inside the library (lib/group.c): the group objects,
 * the snapshot of a pipeline's groups that readers compose packets with,
 * and the writer's side of it.  Internal: lib/ and datapath/.
 */
#ifndef FDP_GROUP_INTERNAL_H
#define FDP_GROUP_INTERNAL_H 1

#include <stdbool.h>
#include <stdint.h>

#include <flowdp/group.h>
#include <flowdp/key.h>
#include "lib/rcu.h"

struct fdp__rule_counters;
struct fdp_actions;

enum fdp__group_type {
    FDP__GROUP_ALL,
    FDP__GROUP_SELECT,
    FDP__GROUP_INDIRECT,
    FDP__GROUP_FF,
};

enum fdp__group_method {
    FDP__SEL_DEFAULT,           /* No selection_method given. */
    FDP__SEL_HASH,
    FDP__SEL_DP_HASH,
};

/* No watch_port / watch_group (OpenFlow's OFPP_ANY, OFPG_ANY). */
#define FDP__WATCH_NONE UINT32_MAX

/* At most this many buckets in a group: the select hash table has at
 * least eight slots per bucket (lib/group.c, "Selection") and at most
 * FDP__GROUP_MAX_SLOTS. */
#define FDP__GROUP_MAX_BUCKETS 4096
#define FDP__GROUP_MAX_SLOTS 65536

/* At most this many fields(...) of a hash selection. */
#define FDP__GROUP_MAX_FIELDS 16

/* How deep a group may reach other groups (group:N in a bucket,
 * watch_group): Open vSwitch's MAX_LIVENESS_RECURSION is 32; a bucket's
 * group:N also counts against the pipeline's resubmit depth. */
#define FDP__GROUP_MAX_CHAIN 32

struct fdp__bucket {
    uint32_t bucket_id;
    uint16_t weight;
    uint32_t watch_port;        /* FDP__WATCH_NONE if none. */
    uint32_t watch_group;       /* FDP__WATCH_NONE if none. */
    struct fdp_actions *actions;    /* As given, for printing. */
    struct fdp_actions *set;        /* What runs: the actions in OpenFlow's
                                     * action-set order (lib/group.c,
                                     * "Buckets are action sets"); NULL if
                                     * nothing runs. */
    struct fdp__rule_counters *counters;
};

/* One field of a hash selection method's fields(...). */
struct fdp__hash_field {
    uint8_t name;               /* Index into lib/group.c's field names. */
    bool masked;
    fdp_u128 mask;              /* Meaningful if 'masked'. */
};

struct fdp_group {
    uint32_t group_id;
    uint8_t type;               /* enum fdp__group_type */
    uint8_t method;             /* enum fdp__group_method */
    bool fields_paren;          /* Printed "fields(...)" (2+ fields). */
    uint64_t method_param;
    uint32_t n_fields;
    struct fdp__hash_field fields[FDP__GROUP_MAX_FIELDS];
    uint32_t n_buckets;
    struct fdp__bucket *buckets;
    /* Select groups: bucket index per slot, 'slot_mask' + 1 slots (none
     * if every weight is 0). */
    uint32_t slot_mask;
    uint16_t *slots;
    struct fdp__rule_counters *counters;
    int64_t created_ms;
    struct rcu_head rcu;
};

/* A pipeline's groups at one version, immutable once published: the
 * groups by increasing id and the live ports.  The pipeline's snapshot
 * (lib/pipeline-view.h) points to one. */
struct fdp__group_set {
    struct rcu_head rcu;
    size_t n;
    struct fdp_group **groups;
    uint64_t live[65536 / 64];  /* Bit P: port P is live. */
};

/* The writer's side (under the pipeline's mutex). */
struct fdp__group_table {
    struct fdp__group_set *pub;     /* What the last commit published. */
    struct fdp__group_set *txn;     /* The open transaction's, or NULL if
                                     * it changed no group. */
    struct fdp__group_set *old;     /* Replaced by the last commit: freed
                                     * with what only it held once the new
                                     * snapshot is out. */
};

/* ---- Readers (in the read-side section that loaded 'set') ---- */

/* Group 'id' of 'set', or NULL. */
const struct fdp_group *fdp__group_set_find(const struct fdp__group_set *set,
                                            uint32_t id);

/* The bucket a fast-failover group runs (its first live one), or NULL. */
const struct fdp__bucket *fdp__group_ff_bucket(
    const struct fdp__group_set *set, const struct fdp_group *g);

/* The bucket a select group gives packet 'key', or NULL (no bucket with
 * weight, or none live). */
const struct fdp__bucket *fdp__group_select_bucket(
    const struct fdp__group_set *set, const struct fdp_group *g,
    const struct fdp_key *key);

/* The name flowdp's group text gives hash field 'name' (a struct
 * fdp__hash_field's 'name'), as fdp_group_format() prints it. */
const char *fdp__group_hash_field_name(uint8_t name);

/* ---- The writer ---- */

int fdp__group_table_init(struct fdp__group_table *);
/* After fdp__rcu_barrier(): frees everything. */
void fdp__group_table_destroy(struct fdp__group_table *);

/* The transaction's view of group 'id', or NULL. */
const struct fdp_group *fdp__group_table_find(const struct fdp__group_table *,
                                              uint32_t id);

/* 0 if every group:N in 'acts' names a group the transaction has; else
 * ENOENT. */
int fdp__group_table_check_actions(const struct fdp__group_table *,
                                   const struct fdp_actions *acts);

/* Ends the transaction's group changes: makes them what publish() will
 * publish if 'commit', else drops them.  Returns whether a commit changed
 * something (then the pipeline publishes a new snapshot and calls
 * fdp__group_table_reclaim()). */
bool fdp__group_table_end(struct fdp__group_table *, bool commit);

/* After publish(): frees (after a grace period) the snapshot the commit
 * replaced and the groups only it held. */
void fdp__group_table_reclaim(struct fdp__group_table *);

/* ---- Hooks into the pipeline (lib/pipeline.c) ---- */

struct fdp_pipeline;
struct fdp_pipeline_result;

struct fdp__group_table *fdp__pipeline_groups(struct fdp_pipeline *);

/* Begins a transaction unless the calling thread has one open; returns
 * whether it did.  fdp__pipeline_auto_end() commits it (or aborts it on
 * 'error'), and returns the first error. */
bool fdp__pipeline_auto_begin(struct fdp_pipeline *);
int fdp__pipeline_auto_end(struct fdp_pipeline *, bool started, int error);

/* Removes, in the open transaction, every flow whose actions name group
 * 'group_id' (FDP_GROUP_ALL: any group); '*n' is how many. */
int fdp__pipeline_remove_group_users(struct fdp_pipeline *,
                                     uint32_t group_id, size_t *n);

/* True if 'acts' has a group:N action naming 'group_id' (FDP_GROUP_ALL:
 * any). */
bool fdp__actions_name_group(const struct fdp_actions *acts,
                             uint32_t group_id);

#endif /* FDP_GROUP_INTERNAL_H */
