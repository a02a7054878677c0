/*
 * Action lists.
 *
 * The encoding is a packed sequence of records, each an 8-byte header
 * (struct fdp__action) followed, for set-field actions, by the value in
 * one or two words.  An output action is 8 bytes, a MAC or IPv4 rewrite
 * 16, an IPv6 rewrite 24: a typical flow's actions fit in one cache line,
 * and the datapath walks them front to back without pointer chasing.
 */
#include <config.h>

#include "actions.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"

fdp_u128
fdp__action_value(const struct fdp__action *a)
{
    const uint64_t *w = (const uint64_t *) a + 1;

    return a->n_words == 3 ? ((fdp_u128) w[0] << 64) | w[1] : w[0];
}

enum fdp__prereq
fdp__action_prereq(const struct fdp__action *a)
{
    switch ((enum fdp_action_type) a->type) {
    case FDP_ACT_SET_FIELD:
        return a->field < FDP_N_FIELDS ? fdp__field(a->field)->prereq
                                       : FDP__P_NONE;
    case FDP_ACT_SET_MASKED:
        return a->field < FDP_N_FIELDS ? fdp__field(a->field)->prereq
                                       : FDP__P_NONE;
    case FDP_ACT_DEC_TTL:
        return FDP__P_IP_ANY;
    case FDP_ACT_MOVE:
    case FDP_ACT_GOTO_TABLE:
    case FDP_ACT_RESUBMIT:
    case FDP_ACT_CONJUNCTION:
    case FDP_ACT_OUTPUT:
    case FDP_ACT_IN_PORT:
    case FDP_ACT_CONTROLLER:
    case FDP_ACT_SET_VLAN_VID:
    case FDP_ACT_SET_VLAN_PCP:
    case FDP_ACT_STRIP_VLAN:
    case FDP_ACT_PUSH_VLAN:
    case FDP_N_ACTION_TYPES:
        break;
    }
    return FDP__P_NONE;
}

int
fdp__actions_validate(const struct fdp_actions *acts,
                      const struct fdp_match *match, size_t *bad)
{
    size_t i = 0;

    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a), i++) {
        if (!fdp__match_meets(match, fdp__action_prereq(a))) {
            if (bad) {
                *bad = i;
            }
            return EINVAL;
        }
        if (a->type == FDP_ACT_MOVE) {
            /* Both ends' prerequisites, as Open vSwitch checks them. */
            struct fdp__move mv = fdp__action_move(a);
            if (!fdp__match_meets(match, fdp__field(mv.src)->prereq)
                || !fdp__match_meets(match, fdp__field(mv.dst)->prereq)) {
                if (bad) {
                    *bad = i;
                }
                return EINVAL;
            }
        }
    }
    return 0;
}

bool
fdp__actions_is_conjunctive(const struct fdp_actions *acts)
{
    const struct fdp__action *a = fdp__actions_first(acts);

    return a && a->type == FDP_ACT_CONJUNCTION;
}

void
fdp__actions_builder_init(struct fdp__actions_builder *b)
{
    memset(b, 0, sizeof *b);
}

static uint64_t *
builder_reserve(struct fdp__actions_builder *b, uint32_t n)
{
    if (b->error) {
        return NULL;
    }
    if (b->n_words + n > b->alloc) {
        uint32_t alloc = b->alloc ? 2 * b->alloc : 8;
        while (alloc < b->n_words + n) {
            alloc *= 2;
        }
        uint64_t *words = realloc(b->words, alloc * sizeof *words);
        if (!words) {
            b->error = ENOMEM;
            return NULL;
        }
        b->words = words;
        b->alloc = alloc;
    }
    uint64_t *p = &b->words[b->n_words];
    memset(p, 0, n * sizeof *p);
    b->n_words += n;
    b->n_actions++;
    return p;
}

void
fdp__actions_add(struct fdp__actions_builder *b, enum fdp_action_type type,
                 uint32_t arg)
{
    struct fdp__action *a = (struct fdp__action *) builder_reserve(b, 1);

    if (a) {
        a->type = (uint8_t) type;
        a->n_words = 1;
        a->arg = arg;
    }
}

int
fdp__actions_add_set_field(struct fdp__actions_builder *b, enum fdp_field f,
                           fdp_u128 value, uint8_t flags)
{
    if ((unsigned int) f >= FDP_N_FIELDS || value > fdp__field(f)->max) {
        return EINVAL;
    }

    uint8_t n = fdp__field(f)->n_bits > 64 ? 3 : 2;
    uint64_t *w = builder_reserve(b, n);

    if (w) {
        struct fdp__action *a = (struct fdp__action *) w;
        a->type = FDP_ACT_SET_FIELD;
        a->n_words = n;
        a->field = (uint8_t) f;
        a->flags = flags;
        if (n == 3) {
            w[1] = (uint64_t) (value >> 64);
            w[2] = (uint64_t) value;
        } else {
            w[1] = (uint64_t) value;
        }
    }
    return 0;
}

int
fdp__actions_add_set_masked(struct fdp__actions_builder *b, enum fdp_field f,
                            uint64_t value, uint64_t mask, uint8_t flags)
{
    if ((unsigned int) f >= FDP_N_FIELDS || fdp__field(f)->n_bits > 64
        || !mask || mask > fdp__field(f)->max || value & ~mask) {
        return EINVAL;
    }

    uint64_t *w = builder_reserve(b, 3);
    if (w) {
        struct fdp__action *a = (struct fdp__action *) w;
        a->type = FDP_ACT_SET_MASKED;
        a->n_words = 3;
        a->field = (uint8_t) f;
        a->flags = flags;
        w[1] = value;
        w[2] = mask;
    }
    return 0;
}

int
fdp__actions_add_move(struct fdp__actions_builder *b, enum fdp_field src,
                      unsigned int src_ofs, enum fdp_field dst,
                      unsigned int dst_ofs, unsigned int n_bits)
{
    if ((unsigned int) src >= FDP_N_FIELDS
        || (unsigned int) dst >= FDP_N_FIELDS || !n_bits || n_bits > 64
        || src_ofs + n_bits > fdp__field(src)->n_bits
        || dst_ofs + n_bits > fdp__field(dst)->n_bits) {
        return EINVAL;
    }

    struct fdp__action *a = (struct fdp__action *) builder_reserve(b, 1);
    if (a) {
        a->type = FDP_ACT_MOVE;
        a->n_words = 1;
        a->field = (uint8_t) dst;
        a->arg = (uint32_t) src | src_ofs << 8 | dst_ofs << 16
                 | n_bits << 24;
    }
    return 0;
}

int
fdp__actions_add_conjunction(struct fdp__actions_builder *b, uint32_t id,
                             unsigned int k, unsigned int n)
{
    if (n < 2 || n > 64 || k < 1 || k > n) {
        return EINVAL;
    }

    uint64_t *w = builder_reserve(b, 2);
    if (w) {
        struct fdp__action *a = (struct fdp__action *) w;
        a->type = FDP_ACT_CONJUNCTION;
        a->n_words = 2;
        a->arg = id;
        w[1] = (uint64_t) k << 32 | n;
    }
    return 0;
}

void
fdp__actions_add_resubmit(struct fdp__actions_builder *b, uint32_t port,
                          unsigned int table)
{
    fdp__actions_add(b, FDP_ACT_RESUBMIT,
                     (port & 0xffff) << 8 | (table & 0xff));
}

void
fdp__actions_add_record(struct fdp__actions_builder *b,
                        const struct fdp__action *a)
{
    uint64_t *w = builder_reserve(b, a->n_words);

    if (w) {
        memcpy(w, a, a->n_words * sizeof *w);
    }
}

struct fdp_actions *
fdp__actions_finish(struct fdp__actions_builder *b)
{
    struct fdp_actions *acts = NULL;

    if (!b->error) {
        acts = malloc(sizeof *acts + b->n_words * sizeof(uint64_t));
        if (acts) {
            acts->n_words = b->n_words;
            acts->n_actions = b->n_actions;
            if (b->n_words) {
                memcpy(acts->words, b->words, b->n_words * sizeof(uint64_t));
            }
        }
    }
    fdp__actions_builder_destroy(b);
    return acts;
}

void
fdp__actions_builder_destroy(struct fdp__actions_builder *b)
{
    free(b->words);
    fdp__actions_builder_init(b);
}

void
fdp_actions_destroy(struct fdp_actions *acts)
{
    free(acts);
}

struct fdp_actions *
fdp_actions_clone(const struct fdp_actions *acts)
{
    size_t size = fdp_actions_size(acts);
    struct fdp_actions *copy = malloc(size);

    if (copy) {
        memcpy(copy, acts, size);
    }
    return copy;
}

bool
fdp_actions_equal(const struct fdp_actions *a, const struct fdp_actions *b)
{
    return a->n_words == b->n_words
           && !memcmp(a->words, b->words, a->n_words * sizeof(uint64_t));
}

size_t
fdp_actions_count(const struct fdp_actions *acts)
{
    return acts->n_actions;
}

size_t
fdp_actions_size(const struct fdp_actions *acts)
{
    return sizeof *acts + acts->n_words * sizeof(uint64_t);
}
