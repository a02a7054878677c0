/*
 * Action lists: the encoding, a builder and an iterator (internal).
 */
#ifndef FDP_ACTIONS_INTERNAL_H
#define FDP_ACTIONS_INTERNAL_H 1

#include <assert.h>
#include <stdint.h>

#include "lib/ct-action.h"
#include "lib/field.h"
#include <flowdp/actions.h>

/* The action kinds, once.  Everything that handles actions by kind is a
 * table indexed by enum fdp_action_type built from this list: the
 * formatter's functions (lib/flow-format.c), the parser's (lib/flow-
 * parse.c) and the prerequisites below, so adding an action is a constant
 * in flowdp/actions.h, a row here and the functions the row names; a
 * kind without them does not compile.  Columns:
 *
 *   ID      the enum constant without FDP_ACT_ (the list follows the
 *           enum's order, which a static_assert in lib/actions.c checks);
 *   FN      the suffix of the parse_ and format_ functions for the kind;
 *   PREREQ  what the kind needs of a flow's match: NONE, IP_ANY, TCP
 *           (fin_timeout, as Open vSwitch's check_FIN_TIMEOUT()), or FIELD
 *           (its field's prerequisite, from the field table). */
#define FDP__ACTION_KINDS(A)                                                \
    A(OUTPUT, output, NONE)                                                 \
    A(IN_PORT, in_port, NONE)                                               \
    A(CONTROLLER, controller, NONE)                                         \
    A(SET_VLAN_VID, vlan_vid, NONE)                                         \
    A(SET_VLAN_PCP, vlan_pcp, NONE)                                         \
    A(STRIP_VLAN, strip_vlan, NONE)                                         \
    A(PUSH_VLAN, push_vlan, NONE)                                           \
    A(SET_FIELD, set_field, FIELD)                                          \
    A(DEC_TTL, dec_ttl, IP_ANY)                                             \
    A(GOTO_TABLE, goto_table, NONE)                                         \
    A(RESUBMIT, resubmit, NONE)                                             \
    A(SET_MASKED, set_masked, FIELD)                                        \
    A(MOVE, move, NONE)                                                     \
    A(CONJUNCTION, conjunction, NONE)                                       \
    A(CT, ct_action, IP_ANY)                                                \
    A(CT_CLEAR, ct_clear, NONE)                                             \
    A(STACK_PUSH, stack_push, NONE)                                         \
    A(STACK_POP, stack_pop, NONE)                                           \
    A(OUTPUT_REG, output_reg, NONE)                                         \
    A(NOTE, note, NONE)                                                     \
    A(SET_QUEUE, set_queue, NONE)                                           \
    A(POP_QUEUE, pop_queue, NONE)                                           \
    A(CLONE, clone, NONE)                                                   \
    A(GROUP, group, NONE)                                                   \
    A(METER, meter, NONE)                                                   \
    A(LEARN, learn, NONE)                                                   \
    A(FIN_TIMEOUT, fin_timeout, TCP)                                        \
    A(RESERVED, reserved, NONE)                                             \
    A(CHECK_PKT_LARGER, check_pkt_larger, NONE)

/* One action record: this header, then 'n_words' - 1 more 64-bit words.
 * What each kind keeps:
 *   FDP_ACT_SET_FIELD    'field'; payload: the value, one word for fields
 *                        of up to 64 bits, two (high word first) for IPv6
 *                        addresses.
 *   FDP_ACT_SET_MASKED   'field'; payload: the value, then the mask (the
 *                        bits written; value bits outside it are zero),
 *                        both in the field's own units (bit 0 is the
 *                        field's bit 0): one word each for a field of at
 *                        most 64 bits (3 words in all), two each, high
 *                        word first, for a 128-bit field (5 words: IPv6
 *                        addresses, nd_target, xxreg0-3, ct_label).
 *   FDP_ACT_MOVE         'field' is the destination; 'arg' packs the
 *                        source field (bits 0-7), the source's first bit
 *                        (8-15), the destination's first bit (16-23) and
 *                        the number of bits (24-31, 1..128).
 *   FDP_ACT_GOTO_TABLE   'arg': the table.
 *   FDP_ACT_RESUBMIT     'arg': the table (bits 0-7; 255 means the
 *                        calling flow's table) and the port to look up
 *                        as in_port (bits 8-23; FDP_PORT_IN_PORT means
 *                        the packet's own).
 *   FDP_ACT_CONJUNCTION  'arg': the id; payload: the clause k (bits
 *                        32-39) and the number of clauses n (bits 0-7).
 *   FDP_ACT_CT           Two forms, told apart by FDP__ACT_CT_RESOLVED in
 *                        'flags' (lib/ct-action.h).  Resolved (what the
 *                        pipeline composes for the datapath): the payload
 *                        is one struct fdp__dp_ct.  Flow form (what the
 *                        parser builds and a flow keeps):
 *                          'arg' bits 0-7: FDP__DPCT_COMMIT, _FORCE, _NAT,
 *                            _RECIRC (table=N given);
 *                          'arg' bits 8-15: the table (FDP__DPCT_RECIRC);
 *                          'arg' bits 16-31: the zone, or with
 *                            FDP__ACT_CT_ZONE_FIELD in 'flags' the first
 *                            bit of the 16-bit subfield of field 'field'
 *                            the zone is read from;
 *                          payload, if FDP__DPCT_NAT: a struct fdp__ct_nat
 *                            (5 words), as nat(...) gave it;
 *                          then the exec() actions to the record's end,
 *                            nested records of two kinds only:
 *                            FDP_ACT_MOVE as above (destination ct_mark or
 *                            ct_label), and FDP_ACT_SET_MASKED with
 *                            'field' ct_mark or ct_label and a payload of
 *                            four words, value (high, low) and mask
 *                            (high, low) in the field's units: a 128-bit
 *                            write, which the top-level SET_MASKED (at
 *                            most 64 bits) cannot carry.  Its 'flags' is
 *                            0 for set_field:V->F (the whole field) and
 *                            FDP__ACT_LOAD otherwise (printed as loads).
 *                        A record is at most 255 words (n_words is a
 *                        byte): the parser refuses a longer exec().
 *   FDP_ACT_CT_CLEAR     nothing.
 *   FDP_ACT_GROUP        'arg': the group id (flowdp/group.h).  Only in
 *                        flows and buckets: the pipeline composes a
 *                        group's buckets in its place (lib/group.c).
 *   FDP_ACT_METER        'arg': the meter id, 1..FDP_METER_MAX_ID.
 *   FDP_ACT_LEARN        struct fdp__learn and the specs, flow form or
 *                        resolved (lib/learn.h, lib/learn.c).
 *   FDP_ACT_FIN_TIMEOUT  'arg': the idle timeout (bits 0-15) and the
 *                        hard timeout (16-31).
 *   FDP_ACT_RESERVED     'arg' bits 0-15: the reserved port, FDP_PORT_NORMAL,
 *                        _FLOOD, _ALL or _LOCAL; bits 16-31: 0 in a flow's
 *                        list; in a composed list, the in_port the action
 *                        ran with if a resubmit(PORT) changed it (NORMAL
 *                        learns on it, and no output goes back to it), 0
 *                        for the packet's own (fdp__action_reserved_in()).
 *   FDP_ACT_CHECK_PKT_LARGER  four forms, told apart by 'flags'
 *                        (lib/other-actions.h, "check_pkt_larger"): 0, the
 *                        flow form: 'field' and 'arg' bits 16-23 the
 *                        1-bit destination, 'arg' bits 0-15 the length;
 *                        in composed lists FDP__ACT_CPL_BRANCH ('arg' the
 *                        length, one payload word: the words to skip when
 *                        the packet is not larger), FDP__ACT_CPL_JUMP
 *                        ('arg': the words to skip) and FDP__ACT_CPL_END.
 *   the others           'arg' as the enum says; no payload. */
struct fdp__action {
    uint8_t type;       /* enum fdp_action_type */
    uint8_t n_words;    /* Record length in 64-bit words, this one too. */
    uint8_t field;      /* FDP_ACT_SET_FIELD: enum fdp_field */
    uint8_t flags;      /* FDP__ACT_* */
    uint32_t arg;       /* Port, max_len, VID, PCP or ethertype. */
};

static_assert(sizeof(struct fdp__action) == 8, "a record header is 8 bytes");

/* Spellings, in 'flags'; each kind executes the same way whatever its
 * spelling.  FDP_ACT_SET_FIELD: mod_xxx:V (OpenFlow 1.0 / NXM) rather than
 * set_field:V->F.  FDP_ACT_SET_MASKED: load:V->F[a..b] or
 * write_metadata:V[/M] rather than set_field:V[/M]->F. */
#define FDP__ACT_MOD 0x1
#define FDP__ACT_LOAD 0x2
#define FDP__ACT_WRITE_METADATA 0x4

/* FDP_ACT_CT (flow form): the zone is read from a field.  (The resolved
 * form's FDP__ACT_CT_RESOLVED is in lib/ct-action.h.) */
#define FDP__ACT_CT_ZONE_FIELD 0x8

/* The words of a struct fdp__ct_nat in a FDP_ACT_CT record. */
#define FDP__CT_NAT_WORDS 5
static_assert(sizeof(struct fdp__ct_nat) == FDP__CT_NAT_WORDS * 8,
              "a nat spec is five whole words");

/* FDP_ACT_RESERVED's port and the in_port it ran with, 0 for the
 * packet's own. */
static inline uint32_t
fdp__action_reserved_port(const struct fdp__action *a)
{
    return a->arg & 0xffff;
}

static inline uint32_t
fdp__action_reserved_in(const struct fdp__action *a)
{
    return a->arg >> 16;
}

/* FDP_ACT_RESUBMIT's table for "the calling flow's table". */
#define FDP__RESUBMIT_SAME_TABLE 255

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

/* The record 'skip' words after the end of 'a' (a check_pkt_larger
 * branch's jump: lib/other-actions.h), or NULL at the list's end. */
static inline const struct fdp__action *
fdp__actions_skip(const struct fdp_actions *acts, const struct fdp__action *a,
                  uint32_t skip)
{
    const uint64_t *w = (const uint64_t *) a + a->n_words + skip;

    return w < acts->words + acts->n_words
           ? (const struct fdp__action *) w : NULL;
}

/* The value of a FDP_ACT_SET_FIELD record. */
fdp_u128 fdp__action_value(const struct fdp__action *);

/* The value and mask of a FDP_ACT_SET_MASKED record (3 words, or 5 for a
 * 128-bit field). */
static inline fdp_u128
fdp__action_masked_value(const struct fdp__action *a)
{
    const uint64_t *w = (const uint64_t *) a;

    return a->n_words == 5 ? (fdp_u128) w[1] << 64 | w[2] : w[1];
}

static inline fdp_u128
fdp__action_masked_mask(const struct fdp__action *a)
{
    const uint64_t *w = (const uint64_t *) a;

    return a->n_words == 5 ? (fdp_u128) w[3] << 64 | w[4] : w[2];
}

/* The parts of a FDP_ACT_MOVE record. */
struct fdp__move {
    enum fdp_field src, dst;
    unsigned int src_ofs, dst_ofs, n_bits;
};

static inline struct fdp__move
fdp__action_move(const struct fdp__action *a)
{
    return (struct fdp__move) {
        .src = (enum fdp_field) (a->arg & 0xff),
        .dst = (enum fdp_field) a->field,
        .src_ofs = (a->arg >> 8) & 0xff,
        .dst_ofs = (a->arg >> 16) & 0xff,
        .n_bits = a->arg >> 24,
    };
}

/* The parts of a FDP_ACT_RESUBMIT record. */
static inline unsigned int
fdp__action_resubmit_table(const struct fdp__action *a)
{
    return a->arg & 0xff;
}

static inline uint32_t
fdp__action_resubmit_port(const struct fdp__action *a)
{
    return (a->arg >> 8) & 0xffff;
}

/* The clause k (1-based) and clause count n of a FDP_ACT_CONJUNCTION. */
static inline unsigned int
fdp__action_conj_clause(const struct fdp__action *a)
{
    return (unsigned int) (((const uint64_t *) a)[1] >> 32) & 0xff;
}

static inline unsigned int
fdp__action_conj_n(const struct fdp__action *a)
{
    return (unsigned int) ((const uint64_t *) a)[1] & 0xff;
}

/* The parts of a flow-form FDP_ACT_CT record. */
static inline unsigned int
fdp__action_ct_flags(const struct fdp__action *a)
{
    return a->arg & 0xff;
}

static inline unsigned int
fdp__action_ct_table(const struct fdp__action *a)
{
    return (a->arg >> 8) & 0xff;
}

/* The constant zone, or with FDP__ACT_CT_ZONE_FIELD the first bit of the
 * subfield of 'a->field' it is read from. */
static inline unsigned int
fdp__action_ct_zone(const struct fdp__action *a)
{
    return a->arg >> 16;
}

/* The first nested exec() record of flow-form ct record 'a', and the
 * word after its last one: for (e = first; e < end; e += e->n_words). */
static inline const uint64_t *
fdp__action_ct_exec(const struct fdp__action *a)
{
    return (const uint64_t *) a + 1
           + ((fdp__action_ct_flags(a) & FDP__DPCT_NAT) ? FDP__CT_NAT_WORDS : 0);
}

static inline const uint64_t *
fdp__action_ct_end(const struct fdp__action *a)
{
    return (const uint64_t *) a + a->n_words;
}

/* True for the actions that change only the pipeline's state (registers,
 * metadata, where the lookup goes next), never the packet's bytes. */
static inline bool
fdp__action_is_pipeline(const struct fdp__action *a)
{
    switch ((enum fdp_action_type) a->type) {
    case FDP_ACT_GOTO_TABLE:
    case FDP_ACT_RESUBMIT:
    case FDP_ACT_CONJUNCTION:
        return true;
    case FDP_ACT_SET_MASKED:
    case FDP_ACT_MOVE:
        /* The tunnel fields reach the datapath, which keeps them with
         * the packet for an output to a tunnel port. */
        return !fdp__field_is_packet(a->field)
               && !fdp__field_is_tunnel(a->field);
    default:
        return false;
    }
}

/* True if 'acts' holds conjunction actions (then it holds nothing else:
 * the flow is one clause of one or more conjunctive matches). */
bool fdp__actions_is_conjunctive(const struct fdp_actions *acts);

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

/* The names of fields in load, move and ovs-ofctl's printing of masked
 * set_field (Open vSwitch's NXM and OXM names).  A field may have several:
 * NXM_OF_TCP_SRC and NXM_OF_UDP_SRC are both tp_src, each with its own
 * prerequisite, and OXM_OF_ETH_SRC is NXM_OF_ETH_SRC's OpenFlow 1.2 name.
 * 'n_bits' is the field's width as Open vSwitch has it, bit 0 being the
 * field's bit 0 in the key (NXM_OF_ICMP_TYPE is 8 bits of a 16-bit key
 * field).  'canonical' marks the names ovs-ofctl prints: for a field the
 * first canonical entry whose prerequisite the match meets. */
struct fdp__nxm_field {
    const char *name;
    enum fdp_field field;
    uint8_t n_bits;
    bool writable;              /* May be a load or move destination. */
    bool canonical;
    enum fdp__prereq prereq;
};

extern const struct fdp__nxm_field fdp__nxm_fields[];
extern const size_t fdp__n_nxm_fields;

/* The entry named 'name' (exactly, as ovs-ofctl compares them), or
 * NULL. */
const struct fdp__nxm_field *fdp__nxm_field_find(const char *name);

/* The entry ovs-ofctl would print for field 'f' under a match that meets
 * prerequisites 'meets' (a callback, so that this header need not know the
 * match; NULL 'meets' takes the first name), or NULL if the field has no
 * NXM or OXM name. */
const struct fdp__nxm_field *fdp__nxm_field_for(
    enum fdp_field f, bool (*meets)(const void *aux, enum fdp__prereq),
    const void *aux);

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
/* Appends the pipeline's actions.  Each returns 0, or EINVAL (and appends
 * nothing) for arguments out of range:
 *   set_masked: a zero mask, bits beyond the field, or value bits outside
 *     the mask;
 *   move: bits beyond either field, or n_bits 0;
 *   conjunction: n outside 2..64 or k outside 1..n. */
int fdp__actions_add_set_masked(struct fdp__actions_builder *,
                                enum fdp_field f, fdp_u128 value,
                                fdp_u128 mask, uint8_t flags);
int fdp__actions_add_move(struct fdp__actions_builder *,
                          enum fdp_field src, unsigned int src_ofs,
                          enum fdp_field dst, unsigned int dst_ofs,
                          unsigned int n_bits);
int fdp__actions_add_conjunction(struct fdp__actions_builder *,
                                 uint32_t id, unsigned int k,
                                 unsigned int n);
void fdp__actions_add_resubmit(struct fdp__actions_builder *,
                               uint32_t port, unsigned int table);

struct fdp__ct_nat;

/* Appends a nested exec() write for a ct record (see FDP_ACT_CT): 'value'
 * under 'mask' into 'f', ct_mark or ct_label, spelled as 'flags' says
 * (0 or FDP__ACT_LOAD).  Returns 0, or EINVAL (and appends nothing) for
 * another field, a zero mask, or bits beyond the field or outside the
 * mask.  (move's records come from fdp__actions_add_move().) */
int fdp__actions_add_ct_write(struct fdp__actions_builder *,
                              enum fdp_field f, fdp_u128 value,
                              fdp_u128 mask, uint8_t flags);

/* Appends a flow-form ct action (see FDP_ACT_CT above): 'flags'
 * FDP__DPCT_*, 'table' (with FDP__DPCT_RECIRC), the zone as a constant
 * ('zone_field' FDP_N_FIELDS) or as the 16 bits of 'zone_field' from bit
 * 'zone', 'nat' (read if FDP__DPCT_NAT is in 'flags') and the 'exec_words'
 * words 'exec' of nested exec() records.  Returns 0, or EINVAL (and
 * appends nothing) if the record would pass 255 words, the zone's
 * subfield is not inside its field, 'table' is above 254 or 'flags' has
 * bits beyond FDP__DPCT_*. */
int fdp__actions_add_ct(struct fdp__actions_builder *, unsigned int flags,
                        unsigned int table, enum fdp_field zone_field,
                        unsigned int zone, const struct fdp__ct_nat *nat,
                        const uint64_t *exec, size_t exec_words);

/* Appends a copy of the record 'a' (from another list).  Inline where
 * the builder has room: the pipeline composes a packet's actions from
 * its flows' records one by one. */
void fdp__actions_add_record__(struct fdp__actions_builder *,
                               const struct fdp__action *a);

static inline void
fdp__actions_add_record(struct fdp__actions_builder *b,
                        const struct fdp__action *a)
{
    if (!b->error && b->n_words + a->n_words <= b->alloc) {
        uint64_t *w = &b->words[b->n_words];
        for (unsigned int i = 0; i < a->n_words; i++) {
            w[i] = ((const uint64_t *) a)[i];
        }
        b->n_words += a->n_words;
        b->n_actions++;
    } else {
        fdp__actions_add_record__(b, a);
    }
}

/* Empties the builder, keeping its memory for the next list. */
static inline void
fdp__actions_builder_clear(struct fdp__actions_builder *b)
{
    b->n_words = 0;
    b->n_actions = 0;
    b->error = 0;
}

/* Returns the list and resets the builder; NULL if out of memory. */
struct fdp_actions *fdp__actions_finish(struct fdp__actions_builder *);
void fdp__actions_builder_destroy(struct fdp__actions_builder *);

#endif /* FDP_ACTIONS_INTERNAL_H */
