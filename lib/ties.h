/*
 * Tie detection for one priority level (internal).  See lib/ties.c for the
 * design.
 *
 * The table (lib/table.c) asks, for each priority level, whether two of its
 * flows that live in different sub-tables overlap.  A level where none do is
 * "tie-free": a lookup that matches there can stop at its first match,
 * because the sub-table that matched already broke any tie among its own
 * flows.
 *
 * Thread-safety: fdp__ties_level_tied() keeps no state between calls and
 * may run concurrently with itself on different 'rules' arrays.  The
 * matches must not change during a call.
 */
#ifndef FDP_TIES_H
#define FDP_TIES_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fdp_match;

/* One flow of the level being examined. */
struct fdp__tie_rule {
    const struct fdp_match *match;
    uintptr_t subtable;         /* Any id: rules with the same id never
                                 * count as a tie. */
};

/* True if two of the 'n' rules in 'rules' (all at one priority) with
 * different 'subtable' ids overlap, that is, some packet matches both, as
 * fdp_match_intersects() defines it.  Also true, conservatively, if
 * deciding would take more than about 'work_max' elementary steps (a hash
 * probe or insert, an fdp_match_intersects() call, a comparison of two
 * groups' summaries) or if memory runs out: "true" only costs a lookup
 * some sub-tables it could have skipped, "false" must be right.
 *
 * 'rules' may be reordered; the matches are only read.  Never fails
 * otherwise. */
bool fdp__ties_level_tied(struct fdp__tie_rule *rules, size_t n,
                          uint64_t work_max);

#endif /* FDP_TIES_H */
