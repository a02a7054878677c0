/*
 * The stack, registers as ports, notes, queues, clone and the controller
 * action's arguments (internal: lib/ and datapath/).
 *
 * Theory of operation.  These are Open vSwitch's push, pop, output:FIELD,
 * note, set_queue, pop_queue (enqueue:PORT:Q is the three set_queue:Q,
 * output:PORT, pop_queue, as ovs-ofctl -O OpenFlow13 prints it), clone()
 * and controller(reason=...,id=...,userdata=...,pause,meter_id=...).  Like
 * Open vSwitch's xlate, the pipeline runs all but the controller action
 * when it composes a packet's actions (lib/pipeline.c), so the datapath
 * never sees them and a composed list stays a function of the key alone
 * (what the caches need):
 *
 *   - push and pop work on a stack that lives only while a packet is
 *     composed: push reads the key, pop writes it.  The stack keeps what
 *     Open vSwitch's does, each value in the fewest whole bytes that hold
 *     its bits followed by that count, so that its size limit (64 kB, a
 *     resubmit past it stops the composition) is the same.  A pop on an
 *     empty stack writes nothing (Open vSwitch reports "stack
 *     underflow" and goes on).  A pop of a narrower value zero-extends
 *     it; of a wider one, keeps its low bits.
 *   - output:FIELD reads the port from the key, and composes what output
 *     to that port would; a value above 65535 outputs nothing.
 *   - note does nothing.
 *   - set_queue:Q and pop_queue change the queue of the outputs composed
 *     after them; an output composed under a queue other than the one the
 *     list last set is preceded by a set_queue record (Open vSwitch's
 *     skb_priority, committed lazily).  No flowdp port has queues, so the
 *     executor ignores the id there, as Open vSwitch's userspace datapath
 *     does.
 *   - clone(A) runs A on a copy of the key and of the stack, then puts
 *     both back: what A composes is appended in place, followed by the
 *     records that bring the packet's headers back to what they were
 *     before A (fdp__compose_restore()), which is what Open vSwitch's
 *     xlate_clone() does for "reversible" nested actions (its commit of
 *     the restored flow).  The actions Open vSwitch needs a datapath
 *     clone for (ct, meter, output_trunc) are refused inside clone() by
 *     the parser.
 *
 * The controller action is the datapath's: its record carries the
 * arguments to the upcall (struct fdp_upcall).
 */
#ifndef FDP_OTHER_ACTIONS_H
#define FDP_OTHER_ACTIONS_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/actions-internal.h"

/* ---- Records ----
 *
 *   FDP_ACT_STACK_PUSH, FDP_ACT_STACK_POP, FDP_ACT_OUTPUT_REG: 'field',
 *       'arg' bits 0-7 the subfield's first bit and bits 8-15 its width
 *       (1..64).  One word.
 *   FDP_ACT_NOTE: 'arg' the number of bytes; payload: the bytes, padded
 *       with zeros to whole words.
 *   FDP_ACT_SET_QUEUE: 'arg' the queue.  FDP_ACT_POP_QUEUE: nothing.
 *   FDP_ACT_CLONE: the nested records, to the record's end (at most 255
 *       words in all).
 *   FDP_ACT_CONTROLLER: 'arg' max_len; one word (CONTROLLER:N), or with
 *       any other argument (controller(...)) at least three: word 1 the
 *       reason (bits 0-7), the controller id (bits 16-31) and meter_id
 *       (bits 32-63); word 2 the userdata's length in bytes (bits 0-15)
 *       and pause (bit 16); then the userdata, padded to whole words. */

/* A subfield of a push, pop or output:FIELD record. */
struct fdp__subfield {
    enum fdp_field field;
    unsigned int ofs, n_bits;
};

static inline struct fdp__subfield
fdp__action_subfield(const struct fdp__action *a)
{
    return (struct fdp__subfield) {
        .field = (enum fdp_field) a->field,
        .ofs = a->arg & 0xff,
        .n_bits = (a->arg >> 8) & 0xff,
    };
}

/* Appends push:FIELD[a..b], pop:FIELD[a..b] or output:FIELD[a..b]
 * ('type').  Returns 0, or EINVAL (and appends nothing) for another type,
 * a field out of range, or bits beyond the field or more than 64. */
int fdp__actions_add_subfield(struct fdp__actions_builder *,
                              enum fdp_action_type type, enum fdp_field f,
                              unsigned int ofs, unsigned int n_bits);

/* Appends note:'data' ('size' bytes).  Returns 0, or EINVAL if the record
 * would pass 255 words. */
int fdp__actions_add_note(struct fdp__actions_builder *, const uint8_t *data,
                          size_t size);

/* The bytes of a FDP_ACT_NOTE record and their number. */
static inline const uint8_t *
fdp__action_note_data(const struct fdp__action *a)
{
    return (const uint8_t *) ((const uint64_t *) a + 1);
}

/* Appends clone() around the 'n_words' words 'nested' of nested records.
 * Returns 0, or EINVAL if the record would pass 255 words. */
int fdp__actions_add_clone(struct fdp__actions_builder *,
                           const uint64_t *nested, size_t n_words);

/* The first nested record of clone record 'a' and the word after the
 * last: for (w = first; w < end; w += ((const struct fdp__action *)
 * w)->n_words). */
static inline const uint64_t *
fdp__action_clone_first(const struct fdp__action *a)
{
    return (const uint64_t *) a + 1;
}

static inline const uint64_t *
fdp__action_clone_end(const struct fdp__action *a)
{
    return (const uint64_t *) a + a->n_words;
}

/* Open vSwitch's packet-in reasons (enum ofp_packet_in_reason). */
enum fdp__ctl_reason {
    FDP__CTL_NO_MATCH,
    FDP__CTL_ACTION,
    FDP__CTL_INVALID_TTL,
    FDP__CTL_ACTION_SET,
    FDP__CTL_GROUP,
    FDP__CTL_PACKET_OUT,
    FDP__CTL_N_REASONS,
    /* A controller action in a table-miss flow (priority 0, matching
     * everything): Open vSwitch's OFPR_EXPLICIT_MISS, which OpenFlow 1.3
     * and later call no_match and earlier versions action.  Only in
     * stamped records (below), never written or parsed. */
    FDP__CTL_EXPLICIT_MISS = FDP__CTL_N_REASONS
};

/* The reason's name as ovs-ofctl writes it ("no_match"...), and back
 * (case-insensitive; false if none). */
const char *fdp__ctl_reason_name(enum fdp__ctl_reason);
bool fdp__ctl_reason_from_name(const char *, enum fdp__ctl_reason *);

/* The arguments of a controller action. */
struct fdp__controller {
    uint16_t max_len;
    uint8_t reason;             /* enum fdp__ctl_reason */
    bool pause;
    uint16_t id;
    uint32_t meter_id;          /* 0: none (Open vSwitch's
                                 * NX_CTLR_NO_METER). */
    const uint8_t *userdata;
    size_t userdata_size;
    /* Stamped by the pipeline's composition (lib/pipeline.c) for the
     * packet-in: the table and the cookie of the flow that held the
     * action (a packet-out's own actions: table 0, cookie all-ones), and
     * the reason as Open vSwitch gives it there (explicit miss, packet
     * out).  A flow's own list is never stamped. */
    bool stamped;
    uint8_t table_id;
    uint64_t cookie;
    /* Stamped too: the pipeline's metadata and registers at the action
     * (key words FDP__WORD_METADATA on): bit i of 'state_map' says word
     * FDP__WORD_METADATA + i is nonzero, and 'state' holds those words in
     * order (pointing into the record once decoded). */
    uint64_t state_map;
    const uint64_t *state;
};

/* True if 'c' is printed and kept as plain CONTROLLER:max_len. */
bool fdp__controller_is_plain(const struct fdp__controller *c);

/* Appends controller action 'c' (one word if plain, else the long form).
 * Returns 0, or EINVAL for a reason out of range or a record that would
 * pass 255 words. */
int fdp__actions_add_controller(struct fdp__actions_builder *,
                                const struct fdp__controller *c);

/* The arguments of FDP_ACT_CONTROLLER record 'a' ('userdata' points into
 * it). */
struct fdp__controller fdp__action_controller(const struct fdp__action *a);

/* ---- Composition (lib/pipeline.c) ---- */

/* True for the kinds only the pipeline's composition runs (push, pop,
 * output:FIELD, clone): a flow that holds one never takes the one-table
 * path, where its own actions would go to the executor. */
static inline bool
fdp__action_needs_compose(const struct fdp__action *a)
{
    return a->type == FDP_ACT_STACK_PUSH || a->type == FDP_ACT_STACK_POP
           || a->type == FDP_ACT_OUTPUT_REG || a->type == FDP_ACT_CLONE;
}

/* True if the records nested in clone record 'a' are well formed (each
 * inside the clone, none empty) and none is what clone() may not hold:
 * goto_table, write_metadata, ct, conjunction (the parser's rules, for
 * lists built another way). */
bool fdp__clone_is_valid(const struct fdp__action *a);

/* The stack of push and pop, as Open vSwitch keeps it. */
struct fdp__stack {
    uint8_t *bytes;
    size_t size, alloc;
};

#define FDP__STACK_MAX 65536    /* Open vSwitch's limit, in bytes, checked
                                 * at each resubmit. */

void fdp__stack_init(struct fdp__stack *);
void fdp__stack_destroy(struct fdp__stack *);

/* Pushes the 'n_bits' (1..64) low bits of 'value'.  Returns 0 or
 * ENOMEM. */
int fdp__stack_push(struct fdp__stack *, uint64_t value, unsigned int n_bits);

/* Pops the top value into '*value'.  Returns false if the stack is
 * empty. */
bool fdp__stack_pop(struct fdp__stack *, uint64_t *value);

/* Appends to 'b' the records that turn a packet whose key is 'now' back
 * into one whose key is 'was' (header fields only): set-field records for
 * the fields that differ, and for the outer VLAN tag 'tags_pushed' (what
 * the actions between pushed, less what they popped) strip_vlan records,
 * or one push_vlan, then the tag's VID and PCP. */
void fdp__compose_restore(struct fdp__actions_builder *b,
                          const struct fdp_key *was,
                          const struct fdp_key *now, int tags_pushed);

/* The net number of VLAN tags the composed records 'first' to 'end' push
 * on a packet whose outer TCI (0: none) is 'tci' (push_vlan one, strip_vlan
 * of a tagged packet minus one, mod_vlan_vid and mod_vlan_pcp of an
 * untagged one one). */
int fdp__composed_tag_delta(const uint64_t *first, const uint64_t *end,
                            uint16_t tci);

/* ---- check_pkt_larger ----
 *
 * check_pkt_larger(N)->DST[b] (Open vSwitch's OFPACT_CHECK_PKT_LARGER)
 * writes 1 to the one bit DST[b] if the packet is longer than N bytes (the
 * whole frame as it is at that point), else 0, and the rest of the flow's
 * actions (and the tables they go on to) run on that.  The length is the
 * packet's, not the key's, so the pipeline composes the rest twice, as
 * Open vSwitch's xlate_check_pkt_larger() translates it into a datapath
 * check_pkt_len(size=N,gt(...),le(...)): in a composed list
 *
 *     BRANCH(N, skip)  the actions for a larger packet ... JUMP(skip')
 *     the actions for the others ... END
 *
 * where the executor runs on into the first branch if the packet is longer
 * than N and skips 'skip' words (past the JUMP) otherwise, and JUMP skips
 * the second branch.  Each branch ends with the records that turn the
 * packet's headers back (as after a clone), since what follows END (the
 * rest of a resubmitting flow's actions, which Open vSwitch runs after the
 * check_pkt_len with the flow as it was before it) sees the packet as it
 * was before BRANCH.  A branch is the rest of a flow's actions: a flow's
 * records after check_pkt_larger are not run again after END. */
#define FDP__ACT_CPL_BRANCH 0x10
#define FDP__ACT_CPL_JUMP 0x20
#define FDP__ACT_CPL_END 0x40

/* Appends check_pkt_larger('pkt_len')->'f'['ofs'] (flow form).  Returns 0,
 * or EINVAL (and appends nothing) for a field out of range or a bit beyond
 * it. */
int fdp__actions_add_check_pkt_larger(struct fdp__actions_builder *,
                                      uint16_t pkt_len, enum fdp_field f,
                                      unsigned int ofs);

/* The flow form's parts. */
static inline uint16_t
fdp__action_cpl_len(const struct fdp__action *a)
{
    return (uint16_t) a->arg;
}

static inline unsigned int
fdp__action_cpl_ofs(const struct fdp__action *a)
{
    return (a->arg >> 16) & 0xff;
}

/* The words a BRANCH or JUMP record skips. */
static inline uint32_t
fdp__action_cpl_skip(const struct fdp__action *a)
{
    return a->flags & FDP__ACT_CPL_BRANCH
           ? (uint32_t) ((const uint64_t *) a)[1] : a->arg;
}

#endif /* FDP_OTHER_ACTIONS_H */
