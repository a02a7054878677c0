/*
 * Action lists: the encoding, a builder and an iterator (internal).
 */
#ifndef FDP_ACTIONS_INTERNAL_H
#define FDP_ACTIONS_INTERNAL_H 1

#include <assert.h>
#include <stdint.h>

#include "field.h"
#include "flowdp/actions.h"

/* One action record: this header, then 'n_words' - 1 more 64-bit words.
 * Only FDP_ACT_SET_FIELD has a payload: the value, one word for fields of
 * up to 64 bits, two (high word first) for IPv6 addresses. */
struct fdp__action {
    uint8_t type;       /* enum fdp_action_type */
    uint8_t n_words;    /* Record length in 64-bit words, this one too. */
    uint8_t field;      /* FDP_ACT_SET_FIELD: enum fdp_field */
    uint8_t flags;      /* FDP__ACT_* */
    uint32_t arg;       /* Port, max_len, VID, PCP or ethertype. */
};

static_assert(sizeof(struct fdp__action) == 8, "a record header is 8 bytes");

/* FDP_ACT_SET_FIELD spelling: mod_xxx:V (OpenFlow 1.0 / NXM) rather than
 * set_field:V->F.  Both execute the same way. */
#define FDP__ACT_MOD 0x1

struct fdp_actions {
    uint32_t n_words;   /* Words in 'words'. */
    uint32_t n_actions;
    uint64_t words[];
};

/* Iteration: for (a = fdp__actions_first(acts); a; a = fdp__actions_next(
 * acts, a)).  Inline: the datapath walks a flow's actions per batch. */
static inline const struct fdp__action *
fdp__actions_first(const struct fdp_actions *acts)
{
    return acts && acts->n_words
           ? (const struct fdp__action *) &acts->words[0] : NULL;
}

static inline const struct fdp__action *
fdp__actions_next(const struct fdp_actions *acts, const struct fdp__action *a)
{
    const uint64_t *w = (const uint64_t *) a + a->n_words;

    return w < acts->words + acts->n_words
           ? (const struct fdp__action *) w : NULL;
}

/* The value of a FDP_ACT_SET_FIELD record. */
fdp_u128 fdp__action_value(const struct fdp__action *);

struct fdp_match;

/* What action 'a' requires of a flow's match, from the field table: a
 * set-field action needs its field's prerequisites (mod_tp_dst needs tcp,
 * udp or sctp; mod_nw_src needs IPv4), dec_ttl needs IP, and the VLAN and
 * output actions need nothing (FDP__P_NONE). */
enum fdp__prereq fdp__action_prereq(const struct fdp__action *a);

/* Checks every action of 'acts' against 'match' (fdp__action_prereq()).
 * Returns 0 if all are fine.  Otherwise returns EINVAL and, if 'bad' is
 * nonnull, sets '*bad' to the 0-based index of the first action whose
 * prerequisite the match does not meet.  The flow parser checks each name's
 * own prerequisites first (set_field:80->udp_src needs udp, not only L4);
 * this is the generic check that a caller building action lists with
 * fdp__actions_builder gets too. */
int fdp__actions_validate(const struct fdp_actions *acts,
                          const struct fdp_match *match, size_t *bad);

/* A growing action list. */
struct fdp__actions_builder {
    uint64_t *words;
    uint32_t n_words;
    uint32_t alloc;
    uint32_t n_actions;
    int error;          /* Sticky ENOMEM. */
};

void fdp__actions_builder_init(struct fdp__actions_builder *);
void fdp__actions_add(struct fdp__actions_builder *, enum fdp_action_type,
                      uint32_t arg);
/* Appends a set-field action.  Returns 0, or EINVAL (and appends nothing)
 * if 'value' is above the field's largest value: the datapath would
 * otherwise write bits that belong to a neighbouring field. */
int fdp__actions_add_set_field(struct fdp__actions_builder *,
                               enum fdp_field, fdp_u128 value,
                               uint8_t flags);
/* Returns the list and resets the builder; NULL if out of memory. */
struct fdp_actions *fdp__actions_finish(struct fdp__actions_builder *);
void fdp__actions_builder_destroy(struct fdp__actions_builder *);

#endif /* FDP_ACTIONS_INTERNAL_H */
