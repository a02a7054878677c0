/*
 * Pipapo sub-tables (internal): see lib/pipapo.c.
 */
#ifndef FDP_PIPAPO_H
#define FDP_PIPAPO_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/cpu-internal.h"
#include "lib/field.h"
#include "lib/field-map.h"
#include "lib/rcu.h"
#include "lib/subtable.h"
#include "lib/util.h"

struct fdp_match;
struct fdp_rule;

/* Largest number of fields in one sub-table. */
#define PIPAPO_MAX_FIELDS FDP_N_FIELDS

/* A field whose 8-bit lookup table would pass this many bytes uses 4-bit
 * groups (16 times smaller); it goes back to 8-bit groups once its 8-bit
 * table would fit in half of it.  2 MiB per field is the kernel's
 * NFT_PIPAPO_LT_SIZE_THRESHOLD: the rows one lookup reads stay within
 * L2 plus a slice of L3.  The writer reads the value from
 * fdp__pipapo_lt_wide_max, which tests lower to force 4-bit groups
 * without building tens of thousands of rules. */
#define PIPAPO_LT_WIDE_MAX (UINT64_C(2) << 20)
extern uint64_t fdp__pipapo_lt_wide_max;

/* Bitmap rows are a multiple of this many words, a "chunk": one 256-bit
 * AVX2 load (so lib/pipapo-avx2.c needs no tail loop) and 256 rules. */
#define PIPAPO_ROW_WORDS 4

/* Implementations per snapshot: generic and AVX2 (fdp__pipapo_impls). */
#define PIPAPO_MAX_IMPLS 2

/* One field's step of a lookup (lib/pipapo-step.h): selects the bucket
 * row of each of the field's groups for the field value 'v' and, in each
 * 256-bit chunk that may hold survivors — those whose bit is set in 'sum'
 * (pf->sum_words words) if 'with_res', else every chunk of the field, in
 * both cases narrowed by the rows' chunk summaries where the field has
 * them — stores in 'res' the AND of the rows, and of 'res' itself if
 * 'with_res'.  Then rewrites 'sum' to the chunks whose result is not
 * zero; 'res' is undefined outside them.  Returns true if any bit
 * survives.  'res' is 32-byte aligned.  Implementations: generic
 * (lib/pipapo.c) and AVX2 (lib/pipapo-avx2.c), each with one function
 * per field shape. */
struct pipapo_field;
typedef bool fdp__pipapo_and_fn(uint64_t *res, uint64_t *sum,
                                const struct pipapo_field *pf, fdp_u128 v,
                                bool with_res);

/* One field of a built snapshot. */
struct pipapo_field {
    enum fdp_field id;
    uint8_t key_word;           /* Where the field's value is in the key */
    uint8_t key_shift;          /* (fdp__fields[id].word, .shift and */
    uint8_t key_bits;           /* .n_bits, copied: no table load), for
                                 * the run of groups intersected: 128
                                 * means both words, shifted right by
                                 * 'v_shift'. */
    uint8_t v_shift;
    uint8_t n_bits;             /* Width of the run: n_groups groups. */
    uint8_t group_bits;         /* 4 or 8. */
    uint8_t n_groups;           /* Groups intersected (see "Uniform
                                 * groups" in lib/pipapo.c). */
    uint32_t n_rules;           /* Field rules (after expansion). */
    uint32_t bsize;             /* Words per bitmap row, a multiple of 4. */
    uint32_t n_chunks;          /* bsize / PIPAPO_ROW_WORDS. */
    uint32_t sum_words;         /* Words of a chunk summary. */
    uint64_t *lt;               /* [n_groups][1 << group_bits][bsize]. */
    uint64_t *sum;              /* NULL, or for a field of at least
                                 * PIPAPO_SUM_MIN_CHUNKS chunks, each
                                 * row's summary: [n_groups][1 <<
                                 * group_bits][sum_words], bit c set if
                                 * chunk c of the row is not zero. */
    fdp__pipapo_and_fn *steps[PIPAPO_MAX_IMPLS];    /* This shape's step
                                                     * in each impl. */
    bool identity;              /* mt maps rule i to next field's rule i
                                 * (no range expanded here or there):
                                 * the result carries over unchanged. */
    struct pipapo_map {
        uint32_t to;            /* First rule in the next field (or the
                                 * element, in the last field)... */
        uint32_t n;             /* ...and how many. */
    } *mt;
};

/* The value of field 'pf' in 'key', from the position copied into 'pf'
 * when the snapshot was built. */
static inline fdp_u128
fdp__pipapo_field_value(const struct pipapo_field *pf,
                        const struct fdp_key *key)
{
    if (pf->key_bits == 128) {
        return (((fdp_u128) key->w[pf->key_word] << 64)
                | key->w[pf->key_word + 1]) >> pf->v_shift;
    }
    return (key->w[pf->key_word] >> pf->key_shift)
           & (uint64_t) fdp__ones(pf->key_bits);
}

/* An immutable, RCU-published lookup structure for a set of rules.
 *
 * Fields that are the same value/mask in every rule (the dl_type and
 * nw_proto prerequisites of "udp,tp_dst=1000-2000", an in_port all rules
 * share) are not in 'fields': they are checked once per lookup as the
 * masked key words 'const_words' (see "Constant fields" in
 * lib/pipapo.c). */
struct pipapo_snapshot {
    unsigned int impl;          /* fdp__pipapo_impls[] index chosen when
                                 * built (see "CPU levels"). */
    bool validate;              /* FLOWDP_CPU=validate: every lookup runs
                                 * every usable implementation. */
    uint8_t n_const_words;
    uint8_t const_words[FDP_KEY_WORDS];     /* Key word indices... */
    uint64_t const_mask[FDP_KEY_WORDS];     /* ...their mask... */
    uint64_t const_value[FDP_KEY_WORDS];    /* ...and masked value. */
    unsigned int n_const_fields;
    enum fdp_field const_fields[PIPAPO_MAX_FIELDS]; /* For dump-tables. */
    struct fdp_key const_key_mask;  /* Writer: what const_words hold, */
    struct fdp_key const_key_value; /* as whole keys. */
    unsigned int n_fields;
    uint32_t bsize_max;         /* Largest bsize: scratch bitmap size. */
    uint32_t sum_words_max;     /* Largest sum_words. */
    uint32_t n_elems;
    struct fdp_rule **elems;    /* In priority order; a removed rule's
                                 * entry may be fdp__pipapo_tombstone
                                 * (see "Incremental updates"). */
    uint64_t memory;            /* Bytes, without 'delta'. */

    /* The rules added since 'fields' and 'elems' were built, as a small
     * snapshot of their own that has no delta, or NULL: a lookup takes
     * the better of the two answers. */
    const struct pipapo_snapshot *delta;

    /* Writer only: what freeing this snapshot frees.  The published
     * snapshot owns everything it points to; when the writer replaces it
     * by one that shares its tables, elems or delta, it hands those
     * over. */
    bool owns_tables, owns_elems, owns_delta;

    struct rcu_head rcu;
    struct pipapo_field fields[];
};

/* The entry a removed rule leaves in the elems of a snapshot published
 * without a rebuild: never visible, so lookups pass over it. */
extern struct fdp_rule fdp__pipapo_tombstone;

/* A rule whose owner_slot is this is in the writer's delta (or waits for
 * a rebuild), not in the built part. */
#define PIPAPO_IN_DELTA UINT32_MAX

/* Incremental updates: while the built part holds at least
 * fdp__pipapo_incr_min rules, a publish after a few changes builds only
 * the delta and the tombstones; once the changes since the last whole
 * build pass fdp__pipapo_incr_bound() of the built part's size, the next
 * publish rebuilds everything.  Tests lower the minimum and cap the bound
 * (fdp__pipapo_incr_max) to drive every path with few rules. */
#define PIPAPO_INCR_MIN 32
extern uint32_t fdp__pipapo_incr_min;
extern uint32_t fdp__pipapo_incr_max;
uint32_t fdp__pipapo_incr_bound(uint32_t n_built);

/* The writer's side of a sub-table: its fields and its rules in priority
 * order, from which snapshots are built. */
struct pipapo {
    unsigned int n_fields;
    enum fdp_field field_ids[PIPAPO_MAX_FIELDS];
    struct fdp__field_map field_set;    /* The same fields, as a set. */

    struct pipapo_snapshot *snap;   /* RCU. */
    uint8_t group_bits[FDP_N_FIELDS];   /* Per field id: 4 or 8, decided
                                         * from that field's own lookup
                                         * table size (see "Group
                                         * width" in lib/pipapo.c). */

    struct fdp_rule **rules;    /* Best first: priority desc, seq asc;
                                 * up.n_rules of them.  'up.dirty':
                                 * changed since 'snap'. */
    uint32_t alloc_rules;

    /* Changes since the last whole build (see "Incremental updates" in
     * lib/pipapo.c), unless 'rebuild': then the next publish rebuilds
     * whole and these are stale. */
    bool rebuild;
    bool delta_dirty;           /* 'delta_rules' changed since 'snap'. */
    struct fdp_rule **delta_rules;  /* Added since, best first. */
    uint32_t n_delta, alloc_delta;
    uint32_t *pending;          /* Slots of removed built rules that the */
    uint32_t n_pending;         /* next publish turns into tombstones. */
    uint32_t alloc_pending;
    uint32_t n_tombs;           /* Tombstones in snap->elems. */

    /* The order of the intersected fields, most selective first, as last
     * chosen (see "Field order" in lib/pipapo.c): kept while the set of
     * non-constant fields is the same and the rule count stays within a
     * factor of 2 of 'order_n_rules'. */
    enum fdp_field order[PIPAPO_MAX_FIELDS];
    unsigned int n_order;
    struct fdp__field_map order_set;
    uint32_t order_n_rules;

    /* The sub-table class's part (lib/subtable.h). */
    struct fdp__subtable up;
};

/* The pipapo implementation of the sub-table class. */
extern const struct fdp__subtable_class fdp__pipapo_class;

static inline struct pipapo *
fdp__pipapo_cast(const struct fdp__subtable *st)
{
    return CONTAINER_OF(st, struct pipapo, up);
}

/* The fields a match uses: those with a mask or a range.  Returns a
 * bitmap of enum fdp_field. */
struct fdp__field_map fdp__pipapo_fields_of(const struct fdp_match *);

struct pipapo *fdp__pipapo_create(const struct fdp__field_map *field_set);

/* Widens the sub-table's field set to include 'field_set' (for the
 * overflow sub-table, whose rules use different fields: a field a rule
 * does not use is a wildcard).  The next publish rebuilds. */
void fdp__pipapo_add_fields(struct pipapo *,
                            const struct fdp__field_map *field_set);
void fdp__pipapo_destroy_now(struct pipapo *);
void fdp__pipapo_destroy_deferred(struct pipapo *);

/* Adds or removes 'rule' in the writer's list (snapshot rebuilt by
 * fdp__pipapo_publish()).  Returns 0 or ENOMEM. */
int fdp__pipapo_add(struct pipapo *, struct fdp_rule *);
void fdp__pipapo_remove(struct pipapo *, struct fdp_rule *);

/* Rebuilds the snapshot from the rules if they changed and publishes it.
 * Returns 0 or ENOMEM (then the old snapshot stays). */
int fdp__pipapo_publish(struct pipapo *);

/* The first rule, in priority order, that matches 'key' and is visible at
 * 'version', or NULL. */
const struct fdp_rule *fdp__pipapo_lookup(const struct pipapo_snapshot *,
                                          const struct fdp_key *key,
                                          uint64_t version);

/* The same with the generic bitmap code, whatever the CPU. */
const struct fdp_rule *fdp__pipapo_lookup_generic(
    const struct pipapo_snapshot *, const struct fdp_key *key,
    uint64_t version);

/* Builds a snapshot of 'rules' (n, best first) over 'fields', field i cut
 * into groups of 'group_bits[i]' bits (4 or 8).  NULL if out of memory. */
struct pipapo_snapshot *fdp__pipapo_build_widths(const enum fdp_field *fields,
                                                 unsigned int n_fields,
                                                 struct fdp_rule **rules,
                                                 uint32_t n,
                                                 const uint8_t *group_bits);

/* The same with one width for every field: 8-bit groups if 'wide', else
 * 4-bit (tests and benchmarks). */
struct pipapo_snapshot *fdp__pipapo_build(const enum fdp_field *fields,
                                          unsigned int n_fields,
                                          struct fdp_rule **rules, uint32_t n,
                                          bool wide);

/* Fills 'group_bits' (n_fields) with the widths a fresh sub-table of
 * 'rules' would pick: 8 bits for each field whose 8-bit lookup table stays
 * within PIPAPO_LT_WIDE_MAX bytes, else 4 (benchmarks).  Returns 0 or
 * ENOMEM. */
int fdp__pipapo_choose_widths(const enum fdp_field *fields,
                              unsigned int n_fields, struct fdp_rule **rules,
                              uint32_t n, uint8_t *group_bits);
void fdp__pipapo_snapshot_free(struct pipapo_snapshot *);

/* Compresses the snapshot's const_key_mask/value into its const_words
 * (builders). */
void fdp__pipapo_set_const_words(struct pipapo_snapshot *);


fdp__pipapo_and_fn fdp__pipapo_and_generic;
fdp__pipapo_and_fn fdp__pipapo_and_avx2;
fdp__pipapo_and_fn *fdp__pipapo_pick_generic(const struct pipapo_field *);
fdp__pipapo_and_fn *fdp__pipapo_pick_avx2(const struct pipapo_field *);

/* One row of the dispatch table: {name, level, probe} and the functions,
 * as every dispatched module (STYLE.md 9, lib/cpu-internal.h). */
struct fdp__pipapo_impl {
    struct fdp__cpu_impl cpu;
    fdp__pipapo_and_fn *and_rows;   /* Any shape (dispatches on it). */
    fdp__pipapo_and_fn *(*pick)(const struct pipapo_field *);
                                    /* The function for pf's shape. */
};
extern const struct fdp__pipapo_impl fdp__pipapo_impls[];
extern const size_t fdp__pipapo_n_impls;

/* Lookup with a given implementation (tests and benchmarks). */
const struct fdp_rule *fdp__pipapo_lookup_with(
    const struct pipapo_snapshot *, const struct fdp_key *key,
    uint64_t version, fdp__pipapo_and_fn *and_rows);

#endif /* FDP_PIPAPO_H */
