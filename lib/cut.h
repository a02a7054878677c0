/*
 * Partitioned range sub-tables (internal): see lib/cut.c.
 */
#ifndef FDP_CUT_H
#define FDP_CUT_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/field-map.h"
#include "lib/rcu.h"
#include "lib/subtable.h"
#include "lib/util.h"

struct cut_node;

/* The writer's side of a partitioned sub-table: a tree of cuts over its
 * rules with small leaves (lib/cut.c). */
struct cut {
    struct fdp__field_map field_set;    /* The fields rules match. */
    struct cut_node *root;      /* RCU. */
    uint64_t multiplier;        /* Odd, random: the child maps' hash. */
    struct cut_node *dirty;     /* Leaves changed since the last publish
                                 * (linked by cut_node.dirty_next). */
    uint64_t bytes;             /* Memory of nodes, maps and leaves. */
    uint32_t n_leaves;
    struct rcu_head rcu;
    struct fdp__subtable up;
};

/* The class, kind FDP_SUBTABLE_PARTITIONED.  A table has one such
 * sub-table, for its flows with ranges and those moved out of tuple space:
 * its reason says which of them created it (lib/table.c). */
extern const struct fdp__subtable_class fdp__cut_class;

static inline struct cut *
fdp__cut_cast(const struct fdp__subtable *st)
{
    return CONTAINER_OF(st, struct cut, up);
}

/* A new, empty sub-table for rules over 'field_set', made for 'reason';
 * NULL if out of memory. */
struct cut *fdp__cut_create(const struct fdp__field_map *field_set,
                            enum fdp_subtable_reason reason);

/* Tuning, lowered by tests to drive splits with few rules: a leaf holds
 * up to fdp__cut_leaf_max rules before it is cut (on a bulk build) or
 * once it passes twice that (on single changes). */
#define CUT_LEAF_MAX 16
extern uint32_t fdp__cut_leaf_max;

/* Calls 'cb' for every leaf of the published tree (readers, in a
 * read-side section) until it returns false. */
bool fdp__cut_for_each_partition(const struct fdp__subtable *,
                                 bool (*cb)(const struct fdp_partition_stats *,
                                            void *aux),
                                 void *aux);

/* A fixed-shape leaf (the usual five-tuple shape: two key words that
 * differ by rule, at most two ranges) stores its rules in blocks of four:
 * for each of the eight record words (mask and value of the first word,
 * of the second, low end and span of the first range, of the second), the
 * four rules' values side by side.  A block is 32 words, 256 bytes,
 * 32-byte aligned; lanes past the leaf's last rule are never reported. */
#define CUT_BLOCK_WORDS 32

/* The index of the first rule from 'from' on, among the 'n' of the
 * fixed-shape 'blocks', that key words 'k0', 'k1' and range values 'r0',
 * 'r1' match, or 'n' if none: generic and AVX2 (lib/cut-avx2.c). */
typedef uint32_t fdp__cut_scan_fn(const uint64_t *blocks, uint32_t n,
                                  uint32_t from, uint64_t k0, uint64_t k1,
                                  uint64_t r0, uint64_t r1);
fdp__cut_scan_fn fdp__cut_scan_generic;
fdp__cut_scan_fn fdp__cut_scan_avx2;


#endif /* FDP_CUT_H */
