/*
 * flowdp: matches.
 *
 * A match says which packets a flow applies to: for each field of the key
 * (key.h), either a value under a bit mask, as in Open vSwitch, or a range
 * [lo, hi] of values.  A match with no ranges is "masked" and goes to a
 * tuple-space subtable; one with ranges goes to a pipapo sub-table.
 *
 * Matches are kept canonical: value bits outside the mask are zero, a
 * range that is one value or the whole field, or a prefix block of a field
 * that takes masks, is stored as the equivalent value/mask, so two matches
 * that select the same packets in the same way compare equal.
 *
 * Thread-safety: functions that take a const match may run concurrently;
 * a match being modified must not be used by another thread.
 */
#ifndef FLOWDP_MATCH_H
#define FLOWDP_MATCH_H 1

#include <stdbool.h>
#include <flowdp/common.h>
#include <flowdp/key.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fdp_match;

/* Returns a new match that matches every packet, or NULL if out of
 * memory.  The caller owns it and frees it with fdp_match_destroy(). */
FDP_API struct fdp_match *fdp_match_create(void);

/* Returns a copy of 'match', or NULL if out of memory. */
FDP_API struct fdp_match *fdp_match_clone(const struct fdp_match *match);

/* Frees 'match'.  Accepts NULL. */
FDP_API void fdp_match_destroy(struct fdp_match *match);

/* Matches 'field' against 'value' under 'mask' (bits of 'mask' that are 1
 * must equal in the packet), replacing what the match said about the
 * field's bits.  Returns 0, or:
 *   EINVAL  'field' is out of range, or 'value' or 'mask' exceed its width;
 *   EBUSY   a range on another field covers some of the same bits. */
FDP_API int fdp_match_set_masked(struct fdp_match *match, enum fdp_field,
                                 struct fdp_value value,
                                 struct fdp_value mask);

/* Matches 'field' against the range [lo, hi], normalised to a value/mask
 * when it is one (a single value, the whole field, or a prefix block of a
 * field that takes masks).
 * Returns 0, or:
 *   EINVAL  'field' is out of range or takes no ranges, lo > hi, or a
 *           bound exceeds the field's largest value;
 *   EBUSY   the field's bits are already partly matched by another field. */
FDP_API int fdp_match_set_range(struct fdp_match *match, enum fdp_field,
                                struct fdp_value lo, struct fdp_value hi);

/* True if the packet whose key is 'key' matches 'match'. */
FDP_API bool fdp_match_matches(const struct fdp_match *match,
                               const struct fdp_key *key);

/* True if 'a' and 'b' are the same match (after normalisation). */
FDP_API bool fdp_match_equal(const struct fdp_match *a,
                             const struct fdp_match *b);

/* True if 'match' uses no ranges: tuple-space search can hold it. */
FDP_API bool fdp_match_is_masked(const struct fdp_match *match);

/* If 'match' constrains field 'f' (some bit matched, or a range), stores
 * the value it matches, with wildcarded bits zero (a range's low bound),
 * in '*value' and returns true; otherwise returns false. */
FDP_API bool fdp_match_get(const struct fdp_match *match, enum fdp_field f,
                           struct fdp_value *value);

/* True if every packet that matches 'inner' also matches 'outer' (the test
 * of a non-strict delete or modify). */
FDP_API bool fdp_match_covers(const struct fdp_match *outer,
                              const struct fdp_match *inner);

/* True if some packet matches both 'a' and 'b'. */
FDP_API bool fdp_match_intersects(const struct fdp_match *a,
                                  const struct fdp_match *b);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_MATCH_H */
