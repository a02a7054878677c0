/*
 * flowdp: action lists.
 *
 * A flow's actions are kept in a compact, immutable encoding (a sequence
 * of 8-byte-aligned records) made by the flow parser (flow.h) or by
 * fdp_actions_builder in lib/.  An empty list means "drop".
 *
 * Thread-safety: action lists are immutable once built; any number of
 * threads may read one.
 */
#ifndef FLOWDP_ACTIONS_H
#define FLOWDP_ACTIONS_H 1

#include <stdbool.h>
#include <stddef.h>
#include <flowdp/common.h>
#include <flowdp/key.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fdp_actions;

/* The kinds of action (DESIGN.md, "Flow text syntax"). */
enum fdp_action_type {
    FDP_ACT_OUTPUT,         /* output:N */
    FDP_ACT_IN_PORT,        /* output to the input port (in_port) */
    FDP_ACT_CONTROLLER,     /* controller[:max_len] */
    FDP_ACT_SET_VLAN_VID,   /* mod_vlan_vid:N (pushes a tag if none) */
    FDP_ACT_SET_VLAN_PCP,   /* mod_vlan_pcp:N (pushes a tag if none) */
    FDP_ACT_STRIP_VLAN,     /* strip_vlan: pop the outer tag */
    FDP_ACT_PUSH_VLAN,      /* push_vlan:ETHERTYPE */
    FDP_ACT_SET_FIELD,      /* mod_dl_src..., set_field:V->F */
    FDP_ACT_DEC_TTL,        /* dec_ttl */
    /* The pipeline's actions (pipeline.h). */
    FDP_ACT_GOTO_TABLE,     /* goto_table:N */
    FDP_ACT_RESUBMIT,       /* resubmit:PORT, resubmit([PORT],[TABLE]) */
    FDP_ACT_SET_MASKED,     /* load:V->F[a..b], set_field:V[/M]->F,
                             * write_metadata:V[/M] */
    FDP_ACT_MOVE,           /* move:SRC[a..b]->DST[c..d] */
    FDP_ACT_CONJUNCTION,    /* conjunction(ID,K/N) */
    /* Connection tracking (Open vSwitch's ct and ct_clear). */
    FDP_ACT_CT,             /* ct(commit,zone=Z,table=N,nat(...),exec(...)) */
    FDP_ACT_CT_CLEAR,       /* ct_clear */
    /* The stack, registers as ports, notes, queues and clone
     * (Open vSwitch's push, pop, output:FIELD, note, set_queue,
     * pop_queue, clone). */
    FDP_ACT_STACK_PUSH,     /* push:FIELD[a..b] */
    FDP_ACT_STACK_POP,      /* pop:FIELD[a..b] */
    FDP_ACT_OUTPUT_REG,     /* output:FIELD[a..b] */
    FDP_ACT_NOTE,           /* note:HEX */
    FDP_ACT_SET_QUEUE,      /* set_queue:Q (enqueue:P:Q is three) */
    FDP_ACT_POP_QUEUE,      /* pop_queue */
    FDP_ACT_CLONE,          /* clone(ACTIONS) */
    /* Groups (flowdp/group.h). */
    FDP_ACT_GROUP,          /* group:N */
    /* Meters (flowdp/meter.h). */
    FDP_ACT_METER,          /* meter:N, OpenFlow 1.3's meter instruction */
    /* Learning (Open vSwitch's learn and fin_timeout). */
    FDP_ACT_LEARN,          /* learn(table=N,...,SPEC,...) */
    FDP_ACT_FIN_TIMEOUT,    /* fin_timeout(idle_timeout=N,hard_timeout=N) */
    /* Output to a reserved port other than IN_PORT and CONTROLLER. */
    FDP_ACT_RESERVED,       /* NORMAL, FLOOD, ALL, LOCAL */
    /* Open vSwitch's check_pkt_larger. */
    FDP_ACT_CHECK_PKT_LARGER,   /* check_pkt_larger(N)->FIELD[b] */
    FDP_N_ACTION_TYPES
};

/* Frees 'actions'.  Accepts NULL. */
FDP_API void fdp_actions_destroy(struct fdp_actions *actions);

/* Returns a copy of 'actions', or NULL if out of memory. */
FDP_API struct fdp_actions *fdp_actions_clone(const struct fdp_actions *);

/* True if both lists hold the same actions, spelled the same way. */
FDP_API bool fdp_actions_equal(const struct fdp_actions *a,
                               const struct fdp_actions *b);

/* The number of actions; 0 means drop. */
FDP_API size_t fdp_actions_count(const struct fdp_actions *actions);

/* The encoding's size in bytes. */
FDP_API size_t fdp_actions_size(const struct fdp_actions *actions);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_ACTIONS_H */
