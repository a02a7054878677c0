/*
 * Matches: internal layout and helpers shared with the parser, formatter
 * and tables.
 */
#ifndef FDP_MATCH_INTERNAL_H
#define FDP_MATCH_INTERNAL_H 1

#include <stdbool.h>
#include <assert.h>
#include <stdint.h>

#include "field.h"
#include "flowdp/match.h"

/* Invariants (kept by every function that changes a match):
 * - value & ~mask is zero except on the bits of range fields, where
 *   'value' holds the range's lower bound and 'hi' its upper bound;
 * - 'hi' is zero outside range fields;
 * - a range field's bits are zero in 'mask' and belong to no other range
 *   field;
 * - no range is a single value or the whole field, nor a prefix block
 *   on a field that takes masks. */
struct fdp_match {
    struct fdp_key value;
    struct fdp_key mask;
    struct fdp_key hi;
    uint32_t range_fields;      /* Bit i set: field i is a range. */
};

static_assert(FDP_N_FIELDS <= 32, "range_fields is a 32-bit map");

void fdp__match_init(struct fdp_match *);

/* The field's bits of the match's mask, value and (for ranges) upper
 * bound. */
static inline fdp_u128
fdp__match_get_mask(const struct fdp_match *m, enum fdp_field f)
{
    return fdp__key_get(&m->mask, f);
}

static inline fdp_u128
fdp__match_get_value(const struct fdp_match *m, enum fdp_field f)
{
    return fdp__key_get(&m->value, f);
}

static inline bool
fdp__match_has_range(const struct fdp_match *m, enum fdp_field f)
{
    return (m->range_fields >> f) & 1;
}

/* Internal versions of the public setters on 128-bit values. */
int fdp__match_set_masked(struct fdp_match *, enum fdp_field,
                          fdp_u128 value, fdp_u128 mask);
int fdp__match_set_range(struct fdp_match *, enum fdp_field,
                         fdp_u128 lo, fdp_u128 hi);

/* If [lo, hi] over 'n_bits' bits is a prefix block (lo's low k bits 0,
 * hi's low k bits 1, the rest equal), stores its mask and returns true. */
bool fdp__range_to_prefix(fdp_u128 lo, fdp_u128 hi, unsigned int n_bits,
                          fdp_u128 *mask);

/* True if the match's dl_type is exactly 'dl_type'. */
bool fdp__match_is_dl_type(const struct fdp_match *, uint16_t dl_type);

/* The exact dl_type and nw_proto of the match, or -1 where not exact. */
int fdp__match_dl_type(const struct fdp_match *);
int fdp__match_nw_proto(const struct fdp_match *);

/* True if the match meets prerequisite 'p'. */
bool fdp__match_meets(const struct fdp_match *, enum fdp__prereq p);

#endif /* FDP_MATCH_INTERNAL_H */
