/*
 * The pipeline's test-only entry points: shared with tests/ and the
 * offline classifier's reference mode, never installed.
 */
#ifndef FDP_PIPELINE_PRIVATE_H
#define FDP_PIPELINE_PRIVATE_H 1

#include <stdint.h>

#include <flowdp/pipeline.h>

/* fdp_pipeline_classify() flags, for tests only. */
enum {
    /* Look each table up by a linear scan of its flows (and conjunctions
     * naively, without the shortcuts), the reference the tests compare
     * the real lookups against. */
    FDP__PIPELINE_LINEAR = 1 << 0,
};

/* Tests only: when nonnull, a commit calls it after committing each
 * table it changed (table 'table_id''s ordinary flows and clauses), before
 * the next table's and before the new version is published, on the
 * committing thread, with the pipeline's mutex held: a test classifies
 * there to see what a reader sees in the middle of a commit.  NULL in
 * production. */
extern void (*fdp__pipeline_commit_hook)(struct fdp_pipeline *,
                                         uint8_t table_id);

#endif /* FDP_PIPELINE_PRIVATE_H */
