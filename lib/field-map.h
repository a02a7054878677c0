/*
 * Field maps: a set of fields, one bit per enum fdp_field.
 *
 * A match's range fields (struct fdp_match's range_fields), a pipapo
 * sub-table's fields and a partitioned sub-table's fields are sets of
 * fields.  They were one 64-bit word while the key had at most 64 fields
 * that take ranges; neighbour discovery and the 128-bit registers passed
 * that, and tunnel metadata will pass it by far, so a map is as many
 * 64-bit words as the fields need (FDP__FIELD_MAP_WORDS, from
 * FDP_N_FIELDS), and code walks it with the helpers below instead of
 * shifting a uint64_t.
 *
 * Cost on the lookup path: none that grows with the map where it matters.
 * A rule's range fields are read at lookup time only when the rule has a
 * range, which its compact match says without the map (a range always
 * has a non-zero upper bound, so 'hi_words' is non-zero exactly when
 * there is a range: lib/match-internal.h); sub-tables read their field
 * sets when they are built, not per lookup.
 *
 * Thread-safety: plain values; the usual rules of whatever holds them.
 */
#ifndef FDP_FIELD_MAP_H
#define FDP_FIELD_MAP_H 1

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include <flowdp/key.h>

#define FDP__FIELD_MAP_WORDS ((FDP_N_FIELDS + 63) / 64)

struct fdp__field_map {
    uint64_t b[FDP__FIELD_MAP_WORDS];   /* Field i is bit i % 64 of b[i / 64]. */
};

static_assert(FDP__FIELD_MAP_WORDS * 64 >= FDP_N_FIELDS,
              "a field map has a bit for every field");
static_assert(sizeof(struct fdp__field_map) == FDP__FIELD_MAP_WORDS * 8,
              "a field map is whole words, no padding");

/* The empty map, as an initialiser. */
#define FDP__FIELD_MAP_EMPTY ((struct fdp__field_map) { { 0 } })

static inline bool
fdp__field_map_has(const struct fdp__field_map *m, enum fdp_field f)
{
    return (m->b[(unsigned int) f / 64] >> ((unsigned int) f % 64)) & 1;
}

static inline void
fdp__field_map_add(struct fdp__field_map *m, enum fdp_field f)
{
    m->b[(unsigned int) f / 64] |= UINT64_C(1) << ((unsigned int) f % 64);
}

static inline void
fdp__field_map_remove(struct fdp__field_map *m, enum fdp_field f)
{
    m->b[(unsigned int) f / 64] &= ~(UINT64_C(1) << ((unsigned int) f % 64));
}

static inline bool
fdp__field_map_is_empty(const struct fdp__field_map *m)
{
    uint64_t any = 0;

    for (unsigned int i = 0; i < FDP__FIELD_MAP_WORDS; i++) {
        any |= m->b[i];
    }
    return !any;
}

static inline bool
fdp__field_map_equal(const struct fdp__field_map *a,
                     const struct fdp__field_map *b)
{
    uint64_t diff = 0;

    for (unsigned int i = 0; i < FDP__FIELD_MAP_WORDS; i++) {
        diff |= a->b[i] ^ b->b[i];
    }
    return !diff;
}

/* Adds every field of 'src' to 'dst'. */
static inline void
fdp__field_map_or(struct fdp__field_map *dst,
                  const struct fdp__field_map *src)
{
    for (unsigned int i = 0; i < FDP__FIELD_MAP_WORDS; i++) {
        dst->b[i] |= src->b[i];
    }
}

/* True if every field of 'a' is in 'b'. */
static inline bool
fdp__field_map_is_subset(const struct fdp__field_map *a,
                         const struct fdp__field_map *b)
{
    uint64_t out = 0;

    for (unsigned int i = 0; i < FDP__FIELD_MAP_WORDS; i++) {
        out |= a->b[i] & ~b->b[i];
    }
    return !out;
}

static inline unsigned int
fdp__field_map_count(const struct fdp__field_map *m)
{
    unsigned int n = 0;

    for (unsigned int i = 0; i < FDP__FIELD_MAP_WORDS; i++) {
        n += (unsigned int) __builtin_popcountll(m->b[i]);
    }
    return n;
}

/* The first field of 'm' at or after 'from', or FDP_N_FIELDS if none. */
static inline unsigned int
fdp__field_map_next(const struct fdp__field_map *m, unsigned int from)
{
    for (unsigned int i = from / 64; i < FDP__FIELD_MAP_WORDS; i++) {
        uint64_t w = m->b[i];
        if (i == from / 64) {
            w &= ~UINT64_C(0) << (from % 64);
        }
        if (w) {
            return i * 64 + (unsigned int) __builtin_ctzll(w);
        }
    }
    return FDP_N_FIELDS;
}

/* Runs the statement that follows for each field F (an enum fdp_field
 * variable declared here) of the map at 'MAP', in increasing order. */
#define FDP__FIELD_MAP_FOR_EACH(F, MAP)                                     \
    for (enum fdp_field F = (enum fdp_field) fdp__field_map_next(MAP, 0);   \
         (unsigned int) F < FDP_N_FIELDS;                                   \
         F = (enum fdp_field) fdp__field_map_next(MAP, (unsigned int) F + 1))

#endif /* FDP_FIELD_MAP_H */
