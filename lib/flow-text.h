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

/* ct_state flag names, bit 0 (new) first, as Open vSwitch spells them
 * (ct_state_to_string()). */
extern const char *const fdp__ct_state_names[8];

/* tun_flags flag names: the one flag a flow sees, oam (bit 0), as Open
 * vSwitch spells it (flow_tun_flag_to_string()). */
extern const char *const fdp__tun_flag_names[1];

/* The flag names of a field of flag syntax (tcp_flags, ct_state), bit 0
 * first, one per bit of the field: '*n' of them. */
static inline const char *const *
fdp__flag_names(enum fdp_field f, unsigned int *n)
{
    if (fdp__field(f)->syntax == FDP__S_CT_STATE) {
        *n = 8;
        return fdp__ct_state_names;
    }
    if (fdp__field(f)->syntax == FDP__S_TUN_FLAGS) {
        *n = 1;
        return fdp__tun_flag_names;
    }
    *n = 12;
    return fdp__tcp_flag_names;
}

/* True for the fields written as flags (+syn-ack, +trk+est, +oam). */
static inline bool
fdp__is_flag_syntax(enum fdp_field f)
{
    enum fdp__syntax s = fdp__field(f)->syntax;

    return s == FDP__S_TCP_FLAGS || s == FDP__S_CT_STATE
           || s == FDP__S_TUN_FLAGS;
}

/* tun_metadataN (lib/tun-md-text.c).  fdp__tun_md_text_begin() starts a
 * flow; fdp__tun_md_index() is N for "tun_metadataN", else -1;
 * fdp__tun_md_parse() adds "tun_metadataN=TEXT" to 'm' (returns NULL, or
 * a message to free()); fdp__tun_md_format() appends the match's
 * tun_metadata fields, each with a trailing comma. */
void fdp__tun_md_text_begin(void);
int fdp__tun_md_index(const char *name);
char *fdp__tun_md_parse(struct fdp_match *m, int idx, char *text);
void fdp__tun_md_format(struct fdp__ds *, const struct fdp_match *m);

/* Appends field 'f''s value 'v' (unmasked) in the field's syntax. */
void fdp__format_value(struct fdp__ds *, enum fdp_field f, fdp_u128 v);

/* Appends "name=VALUE[/MASK]," or "name=LO-HI," for field 'f' of 'm' if
 * the match constrains it, using 'name' (a context-dependent spelling). */
void fdp__format_field(struct fdp__ds *, const struct fdp_match *m,
                       enum fdp_field f, const char *name);

/* An internal parse flag: the actions of a group's bucket, which has no
 * match, so that no action's prerequisite is checked when it is parsed:
 * as Open vSwitch does, the pipeline checks them against the packet when
 * it composes the bucket (a set-field whose field the packet lacks does
 * nothing). */
#define FDP__PARSE_BUCKET (1u << 30)

struct fdp_actions;

/* Parses 'text', "actions=ACTIONS" with nothing before it, as a bucket's
 * actions (FDP__PARSE_BUCKET) into '*actsp'.  Returns 0, or EINVAL with a
 * message in '*errorp' (columns counted in 'text'), or ENOMEM. */
int fdp__bucket_actions_parse(const char *text, struct fdp_actions **actsp,
                              char **errorp);

/* The names of the flags a flow keeps (flowdp/flow.h), bit i's at [i], as
 * ovs-ofctl writes them. */
#define FDP__N_FLOW_FLAGS 5
extern const char *const fdp__flow_flag_names[FDP__N_FLOW_FLAGS];

#endif /* FDP_FLOW_TEXT_H */
