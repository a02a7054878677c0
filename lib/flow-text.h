/*
 * Shared pieces of the flow text syntax (lib/flow-parse.c,
 * lib/flow-format.c).
 */
#ifndef FDP_FLOW_TEXT_H
#define FDP_FLOW_TEXT_H 1

#include "lib/ds.h"
#include "lib/field.h"
#include "lib/match-internal.h"

/* TCP flag names, bit 0 (FIN) first, as Open vSwitch spells them. */
extern const char *const fdp__tcp_flag_names[12];

/* Appends field 'f''s value 'v' (unmasked) in the field's syntax. */
void fdp__format_value(struct fdp__ds *, enum fdp_field f, fdp_u128 v);

/* Appends "name=VALUE[/MASK]," or "name=LO-HI," for field 'f' of 'm' if
 * the match constrains it, using 'name' (a context-dependent spelling). */
void fdp__format_field(struct fdp__ds *, const struct fdp_match *m,
                       enum fdp_field f, const char *name);

#endif /* FDP_FLOW_TEXT_H */
