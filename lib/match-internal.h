/*
 * Matches: internal layout and helpers shared with the parser, formatter
 * and tables.
 */
#ifndef FDP_MATCH_INTERNAL_H
#define FDP_MATCH_INTERNAL_H 1

#include <stdbool.h>
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/field.h"
#include "lib/field-map.h"
#include <flowdp/match.h>

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
    struct fdp__field_map range_fields; /* The fields that are ranges. */
};

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
    return fdp__field_map_has(&m->range_fields, f);
}

/* True if the match has a range on any field. */
static inline bool
fdp__match_has_ranges(const struct fdp_match *m)
{
    return !fdp__field_map_is_empty(&m->range_fields);
}

/* The compact form of a match, as a table's rules store it (lib/rule.h):
 * only the key words the match touches.
 *
 * 'words' has bit i set if word i of the value, mask or hi key is not
 * zero; 'hi_words' (a subset) if word i of 'hi' is not zero, which
 * happens only in words that hold a range field.  'w' holds, for the n
 * words of 'words' in increasing word order, first their n value words,
 * then their n mask words, then the hi words of 'hi_words' in the same
 * order, and then, only if 'hi_words' is not zero, the match's range
 * fields (a struct fdp__field_map, FDP__FIELD_MAP_WORDS words).  A
 * range's upper bound is above its lower bound, so never zero: 'hi_words'
 * is not zero exactly when the match has a range, and a match without one
 * (most) neither stores nor reads a field map.  Every word left out is
 * zero, so expanding gives back the match exactly.  An exact five-tuple
 * ("tcp,nw_src=...,nw_dst=...,tp_src=...,tp_dst=...") touches words 0
 * and 1 (key.h): 16 + 4 * 8 = 48 bytes, against 984 for struct fdp_match.
 *
 * A masked match's value words come first and are its masked key words,
 * in the order a tuple-space subtable with its mask gathers them, so
 * lib/tss.c compares a packet's gathered words against w[0..n-1]
 * directly. */
struct fdp__cmatch {
    uint64_t words;             /* Bit i: word i is stored. */
    uint64_t hi_words;          /* Bit i: hi word i is stored. */
    uint64_t w[];
};

/* A key of up to 64 words fits a 64-bit map; since the tunnel fields
 * (41 words) a 32-bit one no longer did. */
static_assert(FDP_KEY_WORDS <= 64, "'words' is a 64-bit map");
static_assert(sizeof(struct fdp__cmatch) == 16,
              "a compact match's header is its two word maps");

/* The parts of a match. */
enum fdp__match_part {
    FDP__MATCH_VALUE,
    FDP__MATCH_MASK,
    FDP__MATCH_HI,
};

/* The bytes the compact form of 'm' takes (header included). */
size_t fdp__cmatch_size(const struct fdp_match *m);

/* Stores the compact form of 'm' in 'c', which has room for
 * fdp__cmatch_size(m) bytes. */
void fdp__cmatch_pack(struct fdp__cmatch *c, const struct fdp_match *m);

/* Stores in 'm' the match whose compact form is 'c'. */
void fdp__cmatch_expand(const struct fdp__cmatch *c, struct fdp_match *m);

/* True if 'key' is in the set of keys the compact match 'c' matches. */
bool fdp__cmatch_matches(const struct fdp__cmatch *c,
                         const struct fdp_key *key);

/* True if 'c' is the compact form of 'm'. */
bool fdp__cmatch_equal(const struct fdp__cmatch *c,
                       const struct fdp_match *m);

/* The 1-bits of a 64-bit word map.  __builtin_popcountll() is a libgcc
 * call without -mpopcnt (the library targets any x86-64); this is a
 * handful of instructions. */
static inline unsigned int
fdp__popcount64(uint64_t x)
{
    x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
    x = (x & UINT64_C(0x3333333333333333))
        + ((x >> 2) & UINT64_C(0x3333333333333333));
    x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (unsigned int) ((x * UINT64_C(0x0101010101010101)) >> 56);
}

/* The lowest set bit of a non-zero word map. */
static inline unsigned int
fdp__lowest_word(uint64_t map)
{
    return (unsigned int) __builtin_ctzll(map);
}

/* The number of key words 'c' stores. */
static inline unsigned int
fdp__cmatch_n_words(const struct fdp__cmatch *c)
{
    return fdp__popcount64(c->words);
}

/* Word 'w' of part 'part' of the match 'c' is the compact form of. */
static inline uint64_t
fdp__cmatch_word(const struct fdp__cmatch *c, enum fdp__match_part part,
                 unsigned int w)
{
    uint64_t below = (UINT64_C(1) << w) - 1;

    if (part == FDP__MATCH_HI) {
        if (!((c->hi_words >> w) & 1)) {
            return 0;
        }
        return c->w[2 * fdp__cmatch_n_words(c)
                    + fdp__popcount64(c->hi_words & below)];
    }
    if (!((c->words >> w) & 1)) {
        return 0;
    }
    unsigned int i = fdp__popcount64(c->words & below);
    return c->w[part == FDP__MATCH_MASK ? fdp__cmatch_n_words(c) + i : i];
}

/* Field 'f' of part 'part', as fdp__key_get() reads it from a key. */
static inline fdp_u128
fdp__cmatch_get(const struct fdp__cmatch *c, enum fdp__match_part part,
                enum fdp_field f)
{
    const struct fdp__field *fd = fdp__field(f);

    if (fd->n_bits == 128) {
        return ((fdp_u128) fdp__cmatch_word(c, part, fd->word) << 64)
               | fdp__cmatch_word(c, part, fd->word + 1u);
    }
    return (fdp__cmatch_word(c, part, fd->word) >> fd->shift)
           & (uint64_t) fdp__ones(fd->n_bits);
}

/* The range fields of 'c', which has a range (c->hi_words != 0). */
static inline const struct fdp__field_map *
fdp__cmatch_range_fields(const struct fdp__cmatch *c)
{
    return (const struct fdp__field_map *) (const void *)
           &c->w[2 * fdp__cmatch_n_words(c) + fdp__popcount64(c->hi_words)];
}

static inline bool
fdp__cmatch_has_range(const struct fdp__cmatch *c, enum fdp_field f)
{
    return c->hi_words
           && fdp__field_map_has(fdp__cmatch_range_fields(c), f);
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
