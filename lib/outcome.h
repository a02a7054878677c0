/*
 * What the pipeline does with a packet, as the datapath keeps it: an
 * outcome (internal: lib/ and datapath/).
 *
 * An outcome is the flows a packet hit (their counters, to count each
 * packet once in each), the packet actions to run, and, when a lookup
 * missed or a resubmit limit dropped the packet, those lookups (for the
 * tables' miss counters).  It is the one thing the datapath's caches,
 * batches and flow groups hold (datapath/dp.c, "One type"), whatever the
 * pipeline's shape:
 *
 *   - Every rule carries its one-rule outcome, 'oc' in struct fdp_rule
 *     (lib/rule.h): its actions and its counters pointer are the rule's
 *     own fields (the outcome overlays them), n_rules is 1, and its
 *     signature is computed once, when the table links the rule
 *     (fdp__outcome_init_rule()).  A lookup in a one-table pipeline (or a
 *     bare table) that finds rule R gives the packet &R->oc: nothing is
 *     built, and the outcome lives as long as the rule (an RCU grace
 *     period after its table drops it).
 *   - A packet through several tables gets an outcome of its own, with
 *     the counters of each flow hit and the composed actions.  The
 *     datapath allocates one only for a packet its exact-match cache
 *     keeps (which then owns it); the others use per-batch scratch
 *     memory.
 *
 * Layout: 'counters' comes last, so that an allocated outcome extends it
 * with its other flows' counters, then its missed lookups, then (if the
 * datapath's cache keeps it) a copy of its actions; in a rule it is one
 * element, the rule's 'stats'.  24 bytes in a rule, which keep its
 * lookup fields and the outcome in the rule's first cache line.
 */
#ifndef FDP_OUTCOME_H
#define FDP_OUTCOME_H 1

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <flowdp/pipeline.h>
#include "lib/actions-internal.h"

struct fdp__rule_counters;

/* The largest 'n_steps' (a 14-bit field): a packet's missed lookups.  A
 * miss ends its chain, so a packet has at most one per resubmit (up to
 * FDP_PIPELINE_MAX_RESUBMITS) plus one. */
#define FDP__OUTCOME_MAX_STEPS ((1u << 14) - 1)
static_assert(FDP_PIPELINE_MAX_RESUBMITS + 1 <= FDP__OUTCOME_MAX_STEPS,
              "every missed lookup of a packet fits 'n_steps'");

struct fdp__outcome {
    const struct fdp_actions *actions;  /* Packet actions, composed. */
    uint32_t sig;                       /* fdp__outcome_sign(). */
    union {
        struct {
            uint16_t n_rules;           /* Flows hit: 'counters' has as
                                         * many. */
            uint16_t n_steps : 14;      /* Missed lookups kept (only when
                                         * 'missed' or 'limit'): see
                                         * fdp__outcome_steps(). */
            uint16_t missed : 1;        /* Ended by a table miss. */
            uint16_t limit : 1;         /* Dropped at a resubmit limit. */
        };
        uint32_t shape;                 /* The four above at once, for
                                         * fdp__outcome_is_one_flow(). */
    };
    struct fdp__rule_counters *counters[1]; /* 'n_rules' of them: an
                                             * allocated outcome's go on
                                             * past the struct. */
};
static_assert(sizeof(struct fdp__outcome) == 24,
              "a rule's outcome is three words");

/* The bytes of an outcome with 'n_rules' counters and 'n_steps' missed
 * lookups, before any copy of its actions (a multiple of 8). */
static inline size_t
fdp__outcome_size(size_t n_rules, size_t n_steps)
{
    size_t size = offsetof(struct fdp__outcome, counters)
                  + n_rules * sizeof(struct fdp__rule_counters *)
                  + n_steps * sizeof(struct fdp_pipeline_step);

    return size < sizeof(struct fdp__outcome) ? sizeof(struct fdp__outcome)
                                              : size;
}

/* The missed lookups of 'oc' ('n_steps' of them), after its counters. */
static inline const struct fdp_pipeline_step *
fdp__outcome_steps(const struct fdp__outcome *oc)
{
    return (const struct fdp_pipeline_step *) (const void *)
           &oc->counters[oc->n_rules];
}

static inline struct fdp_pipeline_step *
fdp__outcome_steps_mutable(struct fdp__outcome *oc)
{
    return (struct fdp_pipeline_step *) (void *) &oc->counters[oc->n_rules];
}

/* The signature, in steps for a caller that fills the counters in the
 * same pass: fdp__outcome_sig_add() for each counter in order, from 0,
 * then fdp__outcome_sig_end(). */
#define FDP__OUTCOME_SIG_K UINT64_C(0x9e3779b97f4a7c15)   /* 2^64 / phi. */

static inline uint64_t
fdp__outcome_sig_add(uint64_t h, const struct fdp__rule_counters *c)
{
    return (h ^ (uintptr_t) c) * FDP__OUTCOME_SIG_K;
}

static inline uint32_t
fdp__outcome_sig_end(uint64_t h, uint32_t n_rules,
                     const struct fdp_actions *actions)
{
    h = (h ^ n_rules) * FDP__OUTCOME_SIG_K;
    for (uint32_t i = 0; i < actions->n_words; i++) {
        h = (h ^ actions->words[i]) * FDP__OUTCOME_SIG_K;
    }
    return (uint32_t) (h >> 32);
}

/* Sets 'oc->sig' from its counters and actions, so that two outcomes
 * that do the same (fdp__outcome_same()) have the same signature,
 * whether one is a rule's and the other was built for a packet whose
 * classification hit only that rule. */
static inline void
fdp__outcome_sign(struct fdp__outcome *oc)
{
    uint64_t h = 0;

    for (uint32_t i = 0; i < oc->n_rules; i++) {
        h = fdp__outcome_sig_add(h, oc->counters[i]);
    }
    oc->sig = fdp__outcome_sig_end(h, oc->n_rules, oc->actions);
}

/* Makes 'oc' the one-rule outcome of a rule whose 'actions' and
 * 'counters[0]' are set.  Before the rule is linked. */
static inline void
fdp__outcome_init_rule(struct fdp__outcome *oc)
{
    oc->n_rules = 1;
    oc->n_steps = 0;
    oc->missed = 0;
    oc->limit = 0;
    fdp__outcome_sign(oc);
}

/* True if 'oc' is one flow's hit and nothing else (every rule's own
 * outcome is): its one counter is all there is to count.  One compare of
 * 'shape' against the shape of such an outcome, which the compiler
 * folds to a constant. */
static inline bool
fdp__outcome_is_one_flow(const struct fdp__outcome *oc)
{
    static const struct fdp__outcome one_flow = { .n_rules = 1 };

    return oc->shape == one_flow.shape;
}

/* True if 'a' and 'b' do the same: the same flows hit, the same actions,
 * the same misses.  The datapath groups a batch's packets by this, not
 * by pointer, so that equal outcomes from different places (the cache,
 * fresh classifications, a rule) form one group. */
static inline bool
fdp__outcome_same(const struct fdp__outcome *a, const struct fdp__outcome *b)
{
    return a == b
           || (a->sig == b->sig && a->n_rules == b->n_rules
               && a->n_steps == b->n_steps && a->limit == b->limit
               && a->missed == b->missed
               && !memcmp(a->counters, b->counters,
                          a->n_rules * sizeof a->counters[0])
               && fdp_actions_equal(a->actions, b->actions));
}

#endif /* FDP_OUTCOME_H */
