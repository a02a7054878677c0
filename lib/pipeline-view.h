/*
 * The pipeline's published snapshot, for readers that classify many
 * packets at one version (the datapath).  Internal: lib/ and datapath/.
 *
 * Everything a reader needs to classify consistently is in one object,
 * published with one release store at the end of every commit: the
 * version every table is looked up at, and the pipeline's shape (whether
 * it is one table).  A reader loads the snapshot pointer once, in its
 * read-side section, and uses nothing else: it cannot pair one commit's
 * version with another's shape, and it sees every table as of one
 * commit (lib/pipeline.c, "Versions and snapshots").
 */
#ifndef FDP_PIPELINE_VIEW_H
#define FDP_PIPELINE_VIEW_H 1

#include <stdint.h>

#include <flowdp/pipeline.h>

struct fdp__pipeline_view {
    uint64_t version;           /* Every lookup through this snapshot is
                                 * made at this version. */
    struct fdp_table *single;   /* Nonnull if the pipeline is this one
                                 * table (no flow outside table 0, no
                                 * goto_table or resubmit; conjunctions in table 0 allowed):
                                 * its lookup at 'version' is then the
                                 * whole classification.  Else NULL. */
    bool conj;                  /* 'single' has conjunctions: look it up
                                 * with fdp__pipeline_single_lookup_batch()
                                 * rather than as a plain table. */
    const struct fdp__group_set *groups;    /* The groups and live ports
                                             * at 'version' (lib/group.h). */
};

struct fdp__rule_counters;

/* The counters of the groups and buckets the classification that filled
 * 'r' went through ('*n' of them, in order; lib/group.c, "Counters"),
 * which the datapath counts beside the flows' counters.  Valid until 'r'
 * is used again. */
struct fdp__rule_counters *const *
fdp__pipeline_result_group_counters(const struct fdp_pipeline_result *r,
                                    size_t *n);

/* The flows the one-table pipeline of 'view' ('single' nonnull) gives the
 * 'n' (at most FDP_TABLE_BATCH_MAX) keys 'keys' at view->version, its
 * conjunctions included, into 'rules' (NULL: a miss).  Counts nothing.
 * In the read-side section that loaded 'view'. */
void fdp__pipeline_single_lookup_batch(const struct fdp__pipeline_view *view,
                                       const struct fdp_key *const keys[],
                                       size_t n,
                                       const struct fdp_rule *rules[]);

/* The current snapshot.  The caller must be in a read-side section
 * (fdp_table_read_lock()) and keeps using the snapshot, and what it
 * leads to, only inside it. */
const struct fdp__pipeline_view *
fdp__pipeline_view(const struct fdp_pipeline *p);

/* fdp_pipeline_classify() through snapshot 'view' (from
 * fdp__pipeline_view(), in the same read-side section). */
int fdp__pipeline_classify_view(struct fdp_pipeline *p,
                                const struct fdp__pipeline_view *view,
                                const struct fdp_key *key,
                                unsigned int flags,
                                struct fdp_pipeline_result *r,
                                fdp_pipeline_trace_cb *trace, void *aux);

/* Classifies the 'n' (at most FDP_TABLE_BATCH_MAX) packets 'keys' through
 * snapshot 'view' into 'results' (one each, as fdp_pipeline_classify()
 * fills it, with no trace), table by table: one batch lookup per table
 * (and per conjunction clause) for the packets that reach it together.
 * Returns 0, or ENOMEM (then the results say nothing), or EINVAL if 'n'
 * is too large. */
int fdp__pipeline_classify_batch(struct fdp_pipeline *p,
                                 const struct fdp__pipeline_view *view,
                                 const struct fdp_key *const keys[], size_t n,
                                 struct fdp_pipeline_result *const results[]);

/* The continuation of a ct(table=N) (lib/ct-action.h): classifies 'key'
 * through snapshot 'view' from table 'table', keeping every word of the
 * key as given (packet words, the frozen metadata and registers, the ct
 * fields the tracker set; conj_id must be zero), as
 * fdp__pipeline_classify_view() otherwise.  A miss in 'table' ends the
 * pipeline as a miss in table 0 does. */
int fdp__pipeline_resume_view(struct fdp_pipeline *p,
                              const struct fdp__pipeline_view *view,
                              const struct fdp_key *key, unsigned int table,
                              unsigned int flags,
                              struct fdp_pipeline_result *r,
                              fdp_pipeline_trace_cb *trace, void *aux);

/* A packet-out (datapath.h, fdp_dp_packet_out()): composes the action
 * list 'actions' for 'key' through snapshot 'view' as a flow's actions in
 * table 0 would be (a resubmit looks its table up, a group runs its
 * buckets), with every word of 'key' as given (the packet-out may set
 * registers, metadata and tunnel fields; conj_id must be zero).  The result has a step for every lookup the actions made and
 * no other: none at all for actions without a resubmit.  A goto_table
 * (which a packet-out cannot hold: it is an instruction) ends the list.
 * Returns 0 or ENOMEM. */
int fdp__pipeline_compose_view(struct fdp_pipeline *p,
                               const struct fdp__pipeline_view *view,
                               const struct fdp_key *key,
                               const struct fdp_actions *actions,
                               struct fdp_pipeline_result *r);

#endif /* FDP_PIPELINE_VIEW_H */
