/*
 * Unit tests for lib/pipeline.c (and the datapath running a pipeline).
 *
 * The differential test pits fdp_pipeline_classify(), with its tables'
 * lookups and with FDP__PIPELINE_LINEAR, against a reference pipeline
 * written here from include/flowdp/pipeline.h's essay alone: per table a
 * plain list of flows scanned for the best match (highest priority, ties
 * to the flow added first), conjunctions evaluated naively (every clause
 * flow of every priority above the best hard flow, each priority from the
 * top, complete conjunctions by increasing id), and the actions executed
 * one by one (goto_table once the flow's actions are done, resubmit with
 * its port and table forms coming back to the caller's remaining actions,
 * set_masked, move and set_field on registers, metadata and headers, the
 * nesting and total limits).  Both must agree on every lookup (table,
 * flow, kind, depth, conjunction), the composed packet actions, the two
 * ways a classification ends early, and the final key, on random
 * multi-table programs and packets drawn to hit their flows, at every CPU
 * level this machine has and under FLOWDP_CPU=validate (Check forks each
 * test, so each iteration sets FLOWDP_CPU before the library's one-time
 * detection).
 *
 * The same random programs hold ct and ct_clear (the reference resolves
 * ct from ct-action.h alone), and each packet is also resumed, as a
 * ct(table=N) continuation, from a random table with random frozen
 * registers (fdp__pipeline_resume_view() against the reference).
 *
 * Hand-picked cases follow: ovs-fields(7)'s conjunction example, a
 * conjunction hidden by a higher-priority flow, conjunctions at two
 * priorities, a resubmit coming back to its caller, the two limits, the
 * two kinds of miss, registers carried to the next table, and a move from
 * a header to a register.
 *
 * Then the datapath (fdp_dp_create_pipeline() with ring ports): a fixed
 * four-table program and random programs, the EMC on and off, each packet
 * reaching the ports fdp_pipeline_classify() names, every flow hit along
 * the way counted exactly, the tables' misses too, and a change in table
 * 2 retiring cached outcomes.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>

#include "lib/actions-internal.h"
#include "lib/ct-action.h"
#include <flowdp/cpu.h>
#include "lib/field.h"
#include "lib/match-internal.h"
#include "lib/pipeline-private.h"
#include "lib/pipeline-view.h"
#include "lib/util.h"
#include <flowdp/flowdp.h>
#include <flowdp/pipeline.h>
#include "unit.h"

/* Sets FLOWDP_CPU to level 'i' before the library's detection runs (each
 * Check test is a fresh process), or, for i == FDP_CPU_N_LEVELS, to
 * "validate" (the best level, every lookup of pipapo checked against its
 * generic code).  Returns false, after saying so, if this CPU or build
 * lacks the level.  Without fork (CK_FORK=no) the level is whatever the
 * process already has, and only iteration 0 runs. */
static bool
use_cpu_level(int i, const char *test)
{
    const char *ck_fork = getenv("CK_FORK");

    if (ck_fork && !strcmp(ck_fork, "no")) {
        return i == 0;
    }
    if (i == FDP_CPU_N_LEVELS) {
        setenv("FLOWDP_CPU", "validate", 1);
        ck_assert_int_eq(fdp_cpu_init(), 0);
        ck_assert(fdp_cpu_validating());
        return true;
    }
    /* Before anything asks the library about the CPU: detection runs
     * once, and reads FLOWDP_CPU then. */
    setenv("FLOWDP_CPU", fdp_cpu_level_name((enum fdp_cpu_level) i), 1);
    if (fdp_cpu_init() == ENOTSUP) {
        printf("%s: CPU level %s not available here\n", test,
               fdp_cpu_level_name((enum fdp_cpu_level) i));
        return false;
    }
    ck_assert_int_eq(fdp_cpu_level(), i);
    return true;
}

/* ---------------------------------------------------------------------- */
/* The reference pipeline.                                                 */

/* What the differential test's packets did (per the reference), so that
 * the test can check it reached every case it is meant to. */
static struct coverage {
    uint64_t packets, steps[3], resubmit_misses, nested_goto_misses;
    uint64_t table_missed, limit_dropped, conj_hits, state_loaded;
    uint64_t header_rewritten, ct_runs, ct_clears;
} cov;

struct ref_flow {
    struct fdp_match match;
    uint16_t priority;
    uint64_t cookie;
    struct fdp_actions *actions;    /* Owned. */
    bool conjunctive;               /* conjunction() actions only. */
};

/* A table's flows in the order added: the index is the tie-break. */
struct ref_table {
    struct ref_flow *flows;
    size_t n, alloc;
};

struct ref_pipeline {
    struct ref_table tables[FDP_PIPELINE_N_TABLES];
};

struct ref_step {
    const struct ref_flow *flow;    /* NULL: a miss. */
    uint8_t table_id, kind;
    uint16_t depth;
    uint32_t conj_id;
};

struct ref_result {
    struct ref_step *steps;
    size_t n_steps, alloc;
    struct fdp__actions_builder actions;
    bool limit_dropped, table_missed;
    bool stop;                      /* Dropped or missed: nothing more. */
    unsigned int n_resubmits;
    uint32_t packet_in_port;        /* The port the packet came in on. */
    struct fdp_key key;
};

static void
ref_destroy(struct ref_pipeline *ref)
{
    for (size_t t = 0; t < FDP_PIPELINE_N_TABLES; t++) {
        for (size_t i = 0; i < ref->tables[t].n; i++) {
            fdp_actions_destroy(ref->tables[t].flows[i].actions);
        }
        free(ref->tables[t].flows);
    }
    free(ref);
}

/* The best flow of 't' for 'key' that is not a conjunction clause. */
static const struct ref_flow *
ref_best_hard(const struct ref_table *t, const struct fdp_key *key)
{
    const struct ref_flow *best = NULL;

    for (size_t i = 0; i < t->n; i++) {
        const struct ref_flow *f = &t->flows[i];
        if (!f->conjunctive && fdp_match_matches(&f->match, key)
            && (!best || f->priority > best->priority)) {
            best = f;
        }
    }
    return best;
}

/* One table lookup with conjunctions, exactly as pipeline.h states it: the
 * best hard flow H; then for each priority P above H's at which clause
 * flows match, from the highest, each conjunction whose clauses 1..N all
 * have a matching flow at P, lowest id first, looked up again with
 * conj_id = id (clause flows never match): the first such lookup that
 * finds a flow gives the result. */
static const struct ref_flow *
ref_lookup_table(const struct ref_table *t, const struct fdp_key *key,
                 uint32_t *conj_id)
{
    const struct ref_flow *hard = ref_best_hard(t, key);
    int floor = hard ? hard->priority : -1;
    int p = INT32_MAX;

    *conj_id = 0;
    for (;;) {
        /* The next priority below 'p' with a matching clause flow. */
        int next = -1;
        for (size_t i = 0; i < t->n; i++) {
            const struct ref_flow *f = &t->flows[i];
            if (f->conjunctive && f->priority > floor && f->priority < p
                && f->priority > next && fdp_match_matches(&f->match, key)) {
                next = f->priority;
            }
        }
        if (next < 0) {
            return hard;
        }
        p = next;

        /* Candidate ids at 'p', in increasing order: for each, the clauses
         * seen (bit k for clause k) and the clause count. */
        uint32_t ids[256];
        uint64_t seen[256];
        unsigned int ns[256];
        size_t n_ids = 0;
        for (size_t i = 0; i < t->n; i++) {
            const struct ref_flow *f = &t->flows[i];
            if (!f->conjunctive || f->priority != p
                || !fdp_match_matches(&f->match, key)) {
                continue;
            }
            for (const struct fdp__action *a = fdp__actions_first(
                     f->actions); a; a = fdp__actions_next(f->actions, a)) {
                size_t j;
                for (j = 0; j < n_ids && ids[j] != a->arg; j++) {
                    continue;
                }
                if (j == n_ids) {
                    ck_assert_uint_lt(n_ids, 256);
                    ids[n_ids] = a->arg;
                    seen[n_ids] = 0;
                    ns[n_ids] = fdp__action_conj_n(a);
                    n_ids++;
                }
                seen[j] |= UINT64_C(1) << (fdp__action_conj_clause(a) - 1);
            }
        }
        for (;;) {
            /* The lowest complete id not yet tried. */
            size_t best = SIZE_MAX;
            for (size_t j = 0; j < n_ids; j++) {
                uint64_t all = ns[j] >= 64 ? UINT64_MAX
                                           : (UINT64_C(1) << ns[j]) - 1;
                if (seen[j] == all && (best == SIZE_MAX
                                       || ids[j] < ids[best])) {
                    best = j;
                }
            }
            if (best == SIZE_MAX) {
                break;
            }
            struct fdp_key k2 = *key;
            fdp__key_set(&k2, FDP_F_CONJ_ID, ids[best]);
            const struct ref_flow *f = ref_best_hard(t, &k2);
            if (f) {
                *conj_id = ids[best];
                return f;
            }
            seen[best] = 0;     /* Tried. */
        }
    }
}

/* Appends packet action 'a' (not a load or move) to the composed list, as
 * it is. */
static void
ref_compose(struct fdp__actions_builder *b, const struct fdp__action *a)
{
    switch ((enum fdp_action_type) a->type) {
    case FDP_ACT_SET_FIELD:
        ck_assert_int_eq(fdp__actions_add_set_field(b, a->field,
                                                    fdp__action_value(a),
                                                    a->flags), 0);
        break;
    default:
        fdp__actions_add(b, a->type, a->arg);
        break;
    }
}

/* After a load or move wrote field 'f': a header's new value reaches
 * the packet as a set_field of the whole field (the datapath knows no
 * registers, so the value is resolved here).  in_port and pkt_mark are
 * not on the wire: like the registers, only the key has them. */
static void
ref_header_write(struct ref_result *r, enum fdp_field f)
{
    if (fdp__field_is_packet(f) && f != FDP_F_IN_PORT
        && f != FDP_F_PKT_MARK) {
        ck_assert_int_eq(fdp__actions_add_set_field(
                             &r->actions, f, fdp__key_get(&r->key, f), 0), 0);
    }
}

static void ref_lookup_step(const struct ref_pipeline *, struct ref_result *,
                            unsigned int table, unsigned int depth,
                            enum fdp_pipeline_step_kind kind);

/* resubmit([port],[table]) from a flow of 'table' at nesting 'depth'. */
static void
ref_resubmit(const struct ref_pipeline *ref, struct ref_result *r,
             const struct fdp__action *a, unsigned int table,
             unsigned int depth)
{
    if (++r->n_resubmits > FDP_PIPELINE_MAX_RESUBMITS
        || depth + 1 > FDP_PIPELINE_MAX_DEPTH) {
        r->limit_dropped = r->stop = true;
        return;
    }
    unsigned int to = fdp__action_resubmit_table(a);
    uint32_t port = fdp__action_resubmit_port(a);
    fdp_u128 saved_port = fdp__key_get(&r->key, FDP_F_IN_PORT);

    if (to == FDP__RESUBMIT_SAME_TABLE) {
        to = table;
    }
    if (port != FDP_PORT_IN_PORT) {
        fdp__key_set(&r->key, FDP_F_IN_PORT, port);
    }
    ref_lookup_step(ref, r, to, depth + 1, FDP_STEP_RESUBMIT);
    /* As Open vSwitch: the port holds for the nested lookup and what its
     * flow does, then the packet's own comes back. */
    fdp__key_set(&r->key, FDP_F_IN_PORT, saved_port);
}

static void
ref_clear_ct(struct fdp_key *key)
{
    for (size_t i = FDP__WORD_CT_STATE; i < FDP_KEY_WORDS; i++) {
        key->w[i] = 0;
    }
}

/* A ct action, from ct-action.h's and Open vSwitch's words alone: the
 * record every part of which is a constant (the zone read first, exec()'s
 * writes applied in order to a mark and a label of their own, which a
 * move from ct_mark or ct_label then reads), then a packet whose ct
 * fields are clear for the rest of the pass. */
static void
ref_ct(struct ref_result *r, const struct fdp__action *a)
{
    struct {
        struct fdp__action h;
        struct fdp__dp_ct ct;
    } rec;
    const uint64_t *w = (const uint64_t *) a;
    unsigned int flags = a->arg & 0xff;

    memset(&rec, 0, sizeof rec);
    rec.h.type = FDP_ACT_CT;
    rec.h.n_words = (uint8_t) (sizeof rec / 8);
    rec.h.flags = FDP__ACT_CT_RESOLVED;
    rec.ct.flags = (uint8_t) flags;
    rec.ct.zone = (uint16_t) (a->flags & FDP__ACT_CT_ZONE_FIELD
                              ? fdp__key_get(&r->key, a->field)
                                >> (a->arg >> 16)
                              : a->arg >> 16);
    size_t i = 1;
    if (flags & FDP__DPCT_NAT) {
        memcpy(&rec.ct.nat, &w[1], sizeof rec.ct.nat);
        i += sizeof rec.ct.nat / 8;
    }
    fdp_u128 mark = fdp__key_get(&r->key, FDP_F_CT_MARK), mark_mask = 0;
    fdp_u128 label = fdp__key_get(&r->key, FDP_F_CT_LABEL), label_mask = 0;
    while (i < a->n_words) {
        const struct fdp__action *e = (const struct fdp__action *) &w[i];
        fdp_u128 v, m;
        if (e->type == FDP_ACT_MOVE) {
            struct fdp__move mv = fdp__action_move(e);
            fdp_u128 src = mv.src == FDP_F_CT_MARK ? mark
                           : mv.src == FDP_F_CT_LABEL ? label
                           : fdp__key_get(&r->key, mv.src);
            m = fdp__ones(mv.n_bits) << mv.dst_ofs;
            v = ((src >> mv.src_ofs) & fdp__ones(mv.n_bits)) << mv.dst_ofs;
        } else {
            ck_assert_uint_eq(e->type, FDP_ACT_SET_MASKED);
            v = (fdp_u128) w[i + 1] << 64 | w[i + 2];
            m = (fdp_u128) w[i + 3] << 64 | w[i + 4];
        }
        if (e->field == FDP_F_CT_MARK) {
            mark = ((mark & ~m) | (v & m)) & UINT32_MAX;
            mark_mask |= m & UINT32_MAX;
        } else {
            ck_assert_uint_eq(e->field, FDP_F_CT_LABEL);
            label = (label & ~m) | (v & m);
            label_mask |= m;
        }
        i += e->n_words;
    }
    rec.ct.mark = (uint32_t) (mark & mark_mask);
    rec.ct.mark_mask = (uint32_t) mark_mask;
    rec.ct.label = fdp__to_value(label & label_mask);
    rec.ct.label_mask = fdp__to_value(label_mask);
    if (flags & FDP__DPCT_RECIRC) {
        rec.ct.table = (uint8_t) (a->arg >> 8);
        rec.ct.in_port = (uint32_t) fdp__key_get(&r->key, FDP_F_IN_PORT);
        for (size_t k = 0; k < FDP__CT_FROZEN_WORDS; k++) {
            rec.ct.frozen[k] = r->key.w[FDP_KEY_PACKET_WORDS + k];
        }
    }
    fdp__actions_add_record__(&r->actions, &rec.h);
    ref_clear_ct(&r->key);
    cov.ct_runs++;
}

/* Runs the actions of 'f', a flow of 'table' hit at nesting 'depth'. */
static void
ref_run(const struct ref_pipeline *ref, struct ref_result *r,
        const struct ref_flow *f, unsigned int table, unsigned int depth)
{
    int goto_table = -1;

    for (const struct fdp__action *a = fdp__actions_first(f->actions); a;
         a = fdp__actions_next(f->actions, a)) {
        if (r->stop) {
            return;
        }
        switch ((enum fdp_action_type) a->type) {
        case FDP_ACT_GOTO_TABLE:
            goto_table = (int) a->arg;
            break;
        case FDP_ACT_RESUBMIT:
            ref_resubmit(ref, r, a, table, depth);
            break;
        case FDP_ACT_SET_MASKED: {
            fdp_u128 v = fdp__key_get(&r->key, a->field);
            fdp_u128 m = fdp__action_masked_mask(a);
            fdp__key_set(&r->key, a->field,
                         (v & ~m) | fdp__action_masked_value(a));
            ref_header_write(r, a->field);
            break;
        }
        case FDP_ACT_MOVE: {
            struct fdp__move mv = fdp__action_move(a);
            fdp_u128 bits = (fdp__key_get(&r->key, mv.src) >> mv.src_ofs)
                            & fdp__ones(mv.n_bits);
            fdp_u128 m = fdp__ones(mv.n_bits) << mv.dst_ofs;
            fdp_u128 v = fdp__key_get(&r->key, mv.dst);
            fdp__key_set(&r->key, mv.dst, (v & ~m) | (bits << mv.dst_ofs));
            ref_header_write(r, mv.dst);
            break;
        }
        case FDP_ACT_SET_FIELD:
            fdp__key_set(&r->key, a->field, fdp__action_value(a));
            ref_compose(&r->actions, a);
            break;
        case FDP_ACT_DEC_TTL: {
            /* The next tables see the decremented TTL.  An IP packet whose
             * TTL is 0 or 1 dies here (the datapath drops it at this
             * action): nothing after it runs, as in Open vSwitch. */
            fdp_u128 ttl = fdp__key_get(&r->key, FDP_F_NW_TTL);
            fdp_u128 type = fdp__key_get(&r->key, FDP_F_DL_TYPE);
            ref_compose(&r->actions, a);
            if (type == FDP_ETH_TYPE_IP || type == FDP_ETH_TYPE_IPV6) {
                if (ttl <= 1) {
                    r->stop = true;
                    return;
                }
                fdp__key_set(&r->key, FDP_F_NW_TTL, ttl - 1);
            }
            break;
        }
        case FDP_ACT_OUTPUT:
        case FDP_ACT_IN_PORT: {
            /* Open vSwitch's in_port is the one a resubmit set: output
             * to it is skipped, in_port sends to it, and output to the
             * packet's own port (then another) is allowed. */
            uint32_t cur = (uint32_t) fdp__key_get(&r->key, FDP_F_IN_PORT);
            uint32_t to = a->type == FDP_ACT_IN_PORT ? cur : a->arg;
            if (a->type == FDP_ACT_OUTPUT && to == cur) {
                break;
            }
            if (to == r->packet_in_port) {
                fdp__actions_add(&r->actions, FDP_ACT_IN_PORT, 0);
            } else {
                fdp__actions_add(&r->actions, FDP_ACT_OUTPUT, to);
            }
            break;
        }
        case FDP_ACT_CONJUNCTION:
            ck_abort_msg("a clause flow ran");
            break;
        case FDP_ACT_CT:
            ref_ct(r, a);
            break;
        case FDP_ACT_CT_CLEAR:
            /* Open vSwitch clears a tracked packet's ct fields. */
            if (fdp__key_get(&r->key, FDP_F_CT_STATE) & FDP_CT_TRK) {
                ref_clear_ct(&r->key);
                cov.ct_clears++;
            }
            break;
        default:
            ref_compose(&r->actions, a);
            break;
        }
    }
    if (!r->stop && goto_table >= 0) {
        ref_lookup_step(ref, r, (unsigned int) goto_table, depth,
                        FDP_STEP_GOTO);
    }
}

static void
ref_lookup_step(const struct ref_pipeline *ref, struct ref_result *r,
                unsigned int table, unsigned int depth,
                enum fdp_pipeline_step_kind kind)
{
    uint32_t conj_id;
    const struct ref_flow *f = ref_lookup_table(&ref->tables[table], &r->key,
                                                &conj_id);

    if (r->n_steps == r->alloc) {
        r->alloc = r->alloc ? 2 * r->alloc : 64;
        r->steps = realloc(r->steps, r->alloc * sizeof *r->steps);
        ck_assert_ptr_nonnull(r->steps);
    }
    r->steps[r->n_steps++] = (struct ref_step) {
        .flow = f, .table_id = (uint8_t) table, .kind = (uint8_t) kind,
        .depth = (uint16_t) depth, .conj_id = conj_id,
    };
    if (!f) {
        /* A resubmit that finds nothing does nothing.  A miss in table 0
         * or through goto_table ends the pipeline; inside a resubmit, a
         * goto_table that misses ends what that resubmit runs, and the
         * caller goes on with its remaining actions, as in Open vSwitch
         * (pipeline.h's "ends the pipeline" reads as if it ended the
         * whole classification; lib/pipeline.c and OVS do this). */
        if (kind != FDP_STEP_RESUBMIT && depth == 0) {
            r->table_missed = r->stop = true;
        }
        return;
    }
    ref_run(ref, r, f, table, depth);
}

static void
ref_classify(const struct ref_pipeline *ref, const struct fdp_key *key,
             struct ref_result *r)
{
    r->n_steps = 0;
    fdp__actions_builder_destroy(&r->actions);
    fdp__actions_builder_init(&r->actions);
    r->limit_dropped = r->table_missed = r->stop = false;
    r->n_resubmits = 0;
    r->key = *key;
    r->packet_in_port = (uint32_t) fdp__key_get(key, FDP_F_IN_PORT);
    ref_lookup_step(ref, r, 0, 0, FDP_STEP_START);
}

/* The continuation of a ct(table=N): from table 'table', with every word
 * of 'key' as given. */
static void
ref_resume(const struct ref_pipeline *ref, const struct fdp_key *key,
           unsigned int table, struct ref_result *r)
{
    r->n_steps = 0;
    fdp__actions_builder_destroy(&r->actions);
    fdp__actions_builder_init(&r->actions);
    r->limit_dropped = r->table_missed = r->stop = false;
    r->n_resubmits = 0;
    r->key = *key;
    r->packet_in_port = (uint32_t) fdp__key_get(key, FDP_F_IN_PORT);
    ref_lookup_step(ref, r, table, 0, FDP_STEP_CT);
}

/* ---------------------------------------------------------------------- */
/* A pipeline and its reference, built together.                           */

struct prog {
    struct fdp_pipeline *p;
    struct ref_pipeline *ref;
    uint8_t tables[8];          /* The tables in use, increasing. */
    size_t n_tables;
};

static void
prog_init(struct prog *g)
{
    memset(g, 0, sizeof *g);
    ck_assert_int_eq(fdp_pipeline_create(&g->p), 0);
    g->ref = calloc(1, sizeof *g->ref);
    ck_assert_ptr_nonnull(g->ref);
}

static void
prog_destroy(struct prog *g)
{
    fdp_pipeline_destroy(g->p);
    ref_destroy(g->ref);
}

/* Adds a flow to both; takes 'm' and 'acts' (the builder's list). */
static void
prog_add(struct prog *g, uint8_t table, uint16_t priority, uint64_t cookie,
         const struct fdp_match *m, struct fdp__actions_builder *b)
{
    struct fdp_actions *acts = fdp__actions_finish(b);
    struct fdp_flow_spec spec = {
        .match = fdp_match_clone(m), .actions = acts, .cookie = cookie,
        .priority = priority, .table_id = table,
    };
    int error = fdp_pipeline_insert(g->p, &spec, FDP_TABLE_NO_REPLACE);

    ck_assert_ptr_nonnull(acts);
    ck_assert_msg(!error, "insert of flow 0x%" PRIx64 " into table %u: %s",
                  cookie, table, strerror(error));
    struct ref_table *t = &g->ref->tables[table];
    if (t->n == t->alloc) {
        t->alloc = t->alloc ? 2 * t->alloc : 16;
        t->flows = realloc(t->flows, t->alloc * sizeof *t->flows);
        ck_assert_ptr_nonnull(t->flows);
    }
    t->flows[t->n++] = (struct ref_flow) {
        .match = *m, .priority = priority, .cookie = cookie,
        .actions = acts, .conjunctive = fdp__actions_is_conjunctive(acts),
    };
    fdp_match_destroy(spec.match);
}

/* True if table 'table' of the reference has a flow with match 'm' and
 * priority 'priority' already. */
static bool
prog_has(const struct prog *g, uint8_t table, uint16_t priority,
         const struct fdp_match *m)
{
    const struct ref_table *t = &g->ref->tables[table];

    for (size_t i = 0; i < t->n; i++) {
        if (t->flows[i].priority == priority
            && fdp_match_equal(&t->flows[i].match, m)) {
            return true;
        }
    }
    return false;
}

/* Prints the program, for a failure. */
static void
prog_dump(const struct prog *g)
{
    for (size_t t = 0; t < FDP_PIPELINE_N_TABLES; t++) {
        const struct ref_table *rt = &g->ref->tables[t];
        for (size_t i = 0; i < rt->n; i++) {
            const struct ref_flow *f = &rt->flows[i];
            struct fdp_flow_spec spec = {
                .match = (struct fdp_match *) &f->match,
                .actions = f->actions, .cookie = f->cookie,
                .priority = f->priority, .table_id = (uint8_t) t,
            };
            char *s = fdp_flow_format(&spec);
            fprintf(stderr, "  %s\n", s ? s : "(out of memory)");
            free(s);
        }
    }
}

static void
print_key(const char *what, const struct fdp_key *key)
{
    fprintf(stderr, "  %s:", what);
    for (size_t i = 0; i < FDP_KEY_WORDS; i++) {
        if (key->w[i]) {
            fprintf(stderr, " w%zu=0x%" PRIx64, i, key->w[i]);
        }
    }
    fprintf(stderr, "\n");
}

/* Why 'r' and 'want' differ, or NULL if they do not.  The composed actions
 * and the final key say nothing once a limit dropped the packet (no action
 * of it runs), so they are compared only when it was not. */
static const char *
result_diff(const struct fdp_pipeline_result *r, const struct ref_result *want,
            struct fdp_actions *want_acts, size_t *at)
{
    *at = 0;
    if (r->limit_dropped != want->limit_dropped) {
        return "limit_dropped";
    }
    if (r->table_missed != want->table_missed) {
        return "table_missed";
    }
    for (size_t i = 0; i < want->n_steps && i < r->n_steps; i++) {
        const struct fdp_pipeline_step *s = &r->steps[i];
        const struct ref_step *w = &want->steps[i];
        *at = i;
        if (s->table_id != w->table_id) {
            return "step table";
        }
        if (s->kind != w->kind) {
            return "step kind";
        }
        if (s->depth != w->depth) {
            return "step depth";
        }
        if (!s->rule != !w->flow) {
            return "step hit or miss";
        }
        if (s->rule && fdp_rule_get_cookie(s->rule) != w->flow->cookie) {
            return "step flow";
        }
        if (s->conj_id != w->conj_id) {
            return "step conj_id";
        }
    }
    if (r->n_steps != want->n_steps) {
        *at = r->n_steps < want->n_steps ? r->n_steps : want->n_steps;
        return "number of steps";
    }
    if (want->limit_dropped) {
        if (fdp_actions_count(r->actions)) {
            return "actions of a dropped packet";
        }
        return NULL;
    }
    if (!fdp_actions_equal(r->actions, want_acts)) {
        return "composed actions";
    }
    if (memcmp(&r->key, &want->key, sizeof r->key)) {
        return "final key";
    }
    return NULL;
}

static void
dump_steps(const struct fdp_pipeline_result *r, const struct ref_result *w,
           size_t at)
{
    size_t lo = at > 5 ? at - 5 : 0;

    for (size_t i = lo; i < at + 3; i++) {
        if (i < r->n_steps) {
            const struct fdp_pipeline_step *s = &r->steps[i];
            fprintf(stderr, "  got  %zu: table %u kind %u depth %u flow "
                    "0x%" PRIx64 " conj %" PRIu32 "\n", i, s->table_id,
                    s->kind, s->depth,
                    s->rule ? fdp_rule_get_cookie(s->rule) : 0, s->conj_id);
        }
        if (i < w->n_steps) {
            const struct ref_step *s = &w->steps[i];
            fprintf(stderr, "  want %zu: table %u kind %u depth %u flow "
                    "0x%" PRIx64 " conj %" PRIu32 "\n", i, s->table_id,
                    s->kind, s->depth, s->flow ? s->flow->cookie : 0,
                    s->conj_id);
        }
    }
    fprintf(stderr, "  got %zu steps, want %zu; limit %d/%d, missed %d/%d\n",
            r->n_steps, w->n_steps, r->limit_dropped, w->limit_dropped,
            r->table_missed, w->table_missed);
    char *a = fdp_actions_format(r->actions, NULL);
    fprintf(stderr, "  got actions: %s\n", a ? a : "?");
    free(a);
    print_key("got key", &r->key);
    print_key("want key", &w->key);
}


static void
cover(const struct ref_result *w, const struct fdp_key *key)
{
    cov.packets++;
    cov.table_missed += w->table_missed;
    cov.limit_dropped += w->limit_dropped;
    for (size_t i = 0; i < w->n_steps; i++) {
        const struct ref_step *s = &w->steps[i];
        cov.steps[s->kind]++;
        cov.resubmit_misses += !s->flow && s->kind == FDP_STEP_RESUBMIT;
        cov.nested_goto_misses += !s->flow && s->kind == FDP_STEP_GOTO
                                  && s->depth;
        cov.conj_hits += s->conj_id != 0;
    }
    if (!w->limit_dropped) {
        bool state = false;
        for (size_t i = FDP__WORD_METADATA; i <= FDP__WORD_XREG7; i++) {
            state |= w->key.w[i] != 0;
        }
        cov.state_loaded += state;
        cov.header_rewritten += memcmp(key->w, w->key.w,
                                       FDP_KEY_PACKET_WORDS * 8) != 0;
    }
}

/* Classifies 'key' with the pipeline both ways and with the reference, and
 * fails, naming 'what' and the seed, unless all three agree. */
static void
check_packet(struct prog *g, const struct fdp_key *key, const char *what)
{
    static const unsigned int flags[] = { 0, FDP__PIPELINE_LINEAR };
    struct ref_result want = { 0 };
    struct fdp_pipeline_result r;

    fdp__actions_builder_init(&want.actions);
    ref_classify(g->ref, key, &want);
    cover(&want, key);
    struct fdp_actions *want_acts = fdp__actions_finish(&want.actions);
    ck_assert_ptr_nonnull(want_acts);

    fdp_pipeline_result_init(&r);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(flags); i++) {
        size_t at;
        fdp_table_read_lock();
        ck_assert_int_eq(fdp_pipeline_classify(g->p, key, flags[i], &r, NULL,
                                               NULL), 0);
        const char *diff = result_diff(&r, &want, want_acts, &at);
        if (diff) {
            fprintf(stderr, "%s (%s): %s differs at step %zu; seed %" PRIu64
                    ", level %s; program:\n", what,
                    flags[i] ? "linear" : "tables", diff, at, unit_seed(),
                    fdp_cpu_level_name(fdp_cpu_level()));
            prog_dump(g);
            print_key("packet", key);
            dump_steps(&r, &want, at);
        }
        fdp_table_read_unlock();
        ck_assert_msg(!diff, "%s (%s): %s differs (seed %" PRIu64
                      ", FLOWDP_TEST_SEED replays it)", what,
                      flags[i] ? "linear" : "tables", diff, unit_seed());
    }
    fdp_pipeline_result_destroy(&r);
    fdp_actions_destroy(want_acts);
    fdp__actions_builder_destroy(&want.actions);
    free(want.steps);
}


/* fdp__pipeline_resume_view() of 'key' from table 'table' against the
 * reference's continuation, as check_packet(). */
static void
check_resume(struct prog *g, const struct fdp_key *key, unsigned int table,
             const char *what)
{
    struct ref_result want = { 0 };
    struct fdp_pipeline_result r;
    size_t at;

    fdp__actions_builder_init(&want.actions);
    ref_resume(g->ref, key, table, &want);
    struct fdp_actions *want_acts = fdp__actions_finish(&want.actions);
    ck_assert_ptr_nonnull(want_acts);

    fdp_pipeline_result_init(&r);
    fdp_table_read_lock();
    ck_assert_int_eq(fdp__pipeline_resume_view(g->p,
                                               fdp__pipeline_view(g->p), key,
                                               table, 0, &r, NULL, NULL), 0);
    const char *diff = result_diff(&r, &want, want_acts, &at);
    if (diff) {
        fprintf(stderr, "%s (resume in table %u): %s differs at step %zu; "
                "seed %" PRIu64 "; program:\n", what, table, diff, at,
                unit_seed());
        prog_dump(g);
        print_key("key", key);
        dump_steps(&r, &want, at);
    }
    fdp_table_read_unlock();
    ck_assert_msg(!diff, "%s (resume in table %u): %s differs (seed %"
                  PRIu64 ", FLOWDP_TEST_SEED replays it)", what, table, diff,
                  unit_seed());
    fdp_pipeline_result_destroy(&r);
    fdp_actions_destroy(want_acts);
    fdp__actions_builder_destroy(&want.actions);
    free(want.steps);
}
/* ---------------------------------------------------------------------- */
/* Random programs.                                                        */

/* The packet fields flows match and packets vary (with the
 * connection-tracking fields a packet brings from the tracker, which the
 * pipeline keeps), and the pipeline state flows match and load. */
static const enum fdp_field packet_fields[] = {
    FDP_F_IN_PORT, FDP_F_PKT_MARK, FDP_F_NW_SRC, FDP_F_NW_DST,
    FDP_F_TP_SRC, FDP_F_TP_DST, FDP_F_NW_TTL, FDP_F_CT_STATE,
    FDP_F_CT_ZONE, FDP_F_CT_MARK, FDP_F_CT_LABEL,
};
static const enum fdp_field state_fields[] = {
    FDP_F_REG0, FDP_F_REG1, FDP_F_REG5, FDP_F_METADATA, FDP_F_XREG3,
};

/* A small value, so that flows overlap and packets hit them: a few low
 * bits and, for wide fields, a bit further up. */
static uint64_t
small_value(struct unit_rng *rng, enum fdp_field f)
{
    uint64_t v = unit_rng_below(rng, 4);

    if (fdp__field(f)->n_bits > 8 && unit_rng_below(rng, 4) == 0) {
        v |= (uint64_t) 1 << (8 + unit_rng_below(rng, 4));
    }
    return v & (uint64_t) fdp__field(f)->max;
}

/* A mask over the bits small_value() varies: exact, the low bits, one
 * bit, or a prefix that keeps those bits. */
static uint64_t
small_mask(struct unit_rng *rng, enum fdp_field f)
{
    uint64_t max = (uint64_t) fdp__field(f)->max;

    switch (unit_rng_below(rng, 4)) {
    case 0:
        return max;
    case 1:
        return 0x3 & max;
    case 2:
        return ((uint64_t) 1 << unit_rng_below(rng, 2)) & max;
    default:
        return (max << unit_rng_below(rng, 2)) & max;
    }
}

static void
random_field(struct unit_rng *rng, struct fdp_match *m, enum fdp_field f)
{
    uint64_t v = small_value(rng, f);

    if ((fdp__field(f)->flags & FDP__F_RANGE) && f != FDP_F_IN_PORT
        && unit_rng_below(rng, 4) == 0) {
        uint64_t lo = v > 3 ? v - unit_rng_below(rng, 3) : 0;
        uint64_t hi = v + 1 + unit_rng_below(rng, 300);
        if (hi > (uint64_t) fdp__field(f)->max) {
            hi = (uint64_t) fdp__field(f)->max;
        }
        ck_assert_int_eq(fdp__match_set_range(m, f, lo, hi), 0);
    } else if (fdp__field(f)->flags & FDP__F_MASKABLE) {
        uint64_t mask = small_mask(rng, f);
        ck_assert_int_eq(fdp__match_set_masked(m, f, v & mask, mask), 0);
    } else {
        ck_assert_int_eq(fdp__match_set_masked(m, f, v,
                                               fdp__field(f)->max), 0);
    }
}

/* A random match: tcp (so that every packet field may be matched and set)
 * or nothing, then a few packet and state fields. */
static void
random_match(struct unit_rng *rng, struct fdp_match *m, bool *tcp)
{
    fdp__match_init(m);
    *tcp = unit_rng_below(rng, 5) != 0;
    if (*tcp) {
        fdp__match_set_masked(m, FDP_F_DL_TYPE, FDP_ETH_TYPE_IP, 0xffff);
        fdp__match_set_masked(m, FDP_F_NW_PROTO, FDP_IPPROTO_TCP, 0xff);
    }
    /* Few flows match every packet, so that tables without a table-miss
     * flow do miss. */
    unsigned int n = unit_rng_below(rng, 8) ? 1 + unit_rng_below(rng, 3) : 0;
    bool used[FDP_N_FIELDS] = { false };
    for (unsigned int i = 0; i < n; i++) {
        enum fdp_field f;
        if (unit_rng_below(rng, 2)) {
            f = packet_fields[unit_rng_below(rng,
                                            FDP_ARRAY_SIZE(packet_fields))];
            if (!*tcp && fdp__field(f)->prereq != FDP__P_NONE) {
                continue;
            }
        } else {
            f = state_fields[unit_rng_below(rng,
                                           FDP_ARRAY_SIZE(state_fields))];
        }
        if (!used[f]) {
            used[f] = true;
            random_field(rng, m, f);
        }
    }
}

/* The ports random output actions name: 1 to this. */
static unsigned int max_out_port = 8;

/* Set by batch_lookups_agree_with_classify: random_program() makes one
 * table with no resubmit, so that the pipeline is served as a table, and
 * (half the time) no ordinary flow but the table-miss one, so that the
 * conjunction index's shortcuts apply. */
static bool one_table;

/* Appends a random ct action: commit or not, the zone a constant or 16
 * bits of a register, a table of the program (or none), a nat spec, and
 * exec() writes and moves from the state and from ct_mark itself. */
static void
random_ct(struct unit_rng *rng, const struct prog *g,
          struct fdp__actions_builder *b)
{
    struct fdp__actions_builder exec;
    struct fdp__ct_nat nat;
    unsigned int flags = unit_rng_below(rng, 2) ? FDP__DPCT_COMMIT : 0;
    unsigned int table = 0;
    enum fdp_field zf = FDP_N_FIELDS;
    unsigned int zone = unit_rng_below(rng, 4);

    fdp__actions_builder_init(&exec);
    memset(&nat, 0, sizeof nat);
    if (unit_rng_below(rng, 2) && !one_table) {
        flags |= FDP__DPCT_RECIRC;
        table = g->tables[unit_rng_below(rng, (uint32_t) g->n_tables)];
    }
    if (unit_rng_below(rng, 2)) {
        zf = unit_rng_below(rng, 2) ? FDP_F_REG0 : FDP_F_XREG3;
        zone = unit_rng_below(rng, 3);
    }
    if (unit_rng_below(rng, 3) == 0) {
        flags |= FDP__DPCT_NAT;
        nat.flags = FDP__NAT_SRC | FDP__NAT_ADDR | FDP__NAT_PORT;
        nat.addr_min.lo = nat.addr_max.lo = 0x0a000001;
        nat.port_min = 1000;
        nat.port_max = (uint16_t) (1000 + unit_rng_below(rng, 100));
    }
    if (flags & FDP__DPCT_COMMIT) {
        for (unsigned int n = unit_rng_below(rng, 4); n; n--) {
            if (unit_rng_below(rng, 2)) {
                enum fdp_field f = unit_rng_below(rng, 2) ? FDP_F_CT_MARK
                                                          : FDP_F_CT_LABEL;
                fdp_u128 m = (fdp_u128) (1 + unit_rng_below(rng, 15))
                             << (unit_rng_below(rng, 2) ? 0 : 28);
                ck_assert_int_eq(fdp__actions_add_ct_write(
                                     &exec, f, m & unit_rng_next(rng), m,
                                     FDP__ACT_LOAD), 0);
            } else {
                static const enum fdp_field srcs[] = {
                    FDP_F_REG0, FDP_F_REG1, FDP_F_METADATA, FDP_F_CT_MARK,
                    FDP_F_TP_DST,
                };
                enum fdp_field src = srcs[unit_rng_below(
                    rng, FDP_ARRAY_SIZE(srcs))];
                enum fdp_field dst = unit_rng_below(rng, 2) ? FDP_F_CT_MARK
                                                            : FDP_F_CT_LABEL;
                ck_assert_int_eq(fdp__actions_add_move(
                                     &exec, src, unit_rng_below(rng, 3), dst,
                                     unit_rng_below(rng, 20),
                                     1 + unit_rng_below(rng, 8)), 0);
            }
        }
    }
    ck_assert_int_eq(exec.error, 0);
    ck_assert_int_eq(fdp__actions_add_ct(b, flags, table, zf, zone, &nat,
                                         exec.words, exec.n_words), 0);
    fdp__actions_builder_destroy(&exec);
}

/* Appends a random action to 'b' for a flow of table 'g->tables[ti]'. */
static void
random_action(struct unit_rng *rng, const struct prog *g, size_t ti,
              bool tcp, struct fdp__actions_builder *b)
{
    enum fdp_field f;

    switch (unit_rng_below(rng, 14)) {
    case 0:
    case 1:
        fdp__actions_add(b, FDP_ACT_OUTPUT,
                         1 + unit_rng_below(rng, max_out_port));
        break;
    case 13:
        /* Not in a one-table program: a ct keeps a pipeline off the
         * one-table path, which those programs are for. */
        if (one_table) {
            fdp__actions_add(b, FDP_ACT_OUTPUT,
                             1 + unit_rng_below(rng, max_out_port));
        } else if (tcp && unit_rng_below(rng, 3) == 0) {
            fdp__actions_add(b, FDP_ACT_CT_CLEAR, 0);
        } else if (tcp) {
            random_ct(rng, g, b);
        }
        break;
    case 10:
        if (tcp) {
            fdp__actions_add(b, FDP_ACT_DEC_TTL, 0);
        }
        break;
    case 11:
        /* load into a header: a packet action. */
        if (tcp && unit_rng_below(rng, 2)) {
            ck_assert_int_eq(fdp__actions_add_set_masked(
                                 b, FDP_F_TP_DST, small_value(rng, FDP_F_TP_DST)
                                 & 0x3, 0x3, FDP__ACT_LOAD), 0);
        } else {
            ck_assert_int_eq(fdp__actions_add_set_masked(
                                 b, FDP_F_PKT_MARK,
                                 small_value(rng, FDP_F_PKT_MARK) & 0x1, 0x1,
                                 FDP__ACT_LOAD), 0);
        }
        break;
    case 12: {
        /* move from the state into a header. */
        enum fdp_field src = state_fields[unit_rng_below(
            rng, FDP_ARRAY_SIZE(state_fields))];
        f = tcp && unit_rng_below(rng, 2) ? FDP_F_TP_DST : FDP_F_PKT_MARK;
        ck_assert_int_eq(fdp__actions_add_move(b, src, unit_rng_below(rng, 2),
                                               f, unit_rng_below(rng, 2),
                                               1 + unit_rng_below(rng, 4)),
                         0);
        break;
    }
    case 2:
    case 3: {
        /* load/set_field on the pipeline's state. */
        f = state_fields[unit_rng_below(rng, FDP_ARRAY_SIZE(state_fields))];
        uint64_t mask = unit_rng_below(rng, 2) ? (uint64_t) fdp__field(f)->max
                                                : small_mask(rng, f);
        ck_assert_int_eq(fdp__actions_add_set_masked(
                             b, f, small_value(rng, f) & mask, mask,
                             unit_rng_below(rng, 2) ? FDP__ACT_LOAD : 0), 0);
        break;
    }
    case 4: {
        /* move from a header or the state to the state. */
        static const enum fdp_field srcs[] = {
            FDP_F_IN_PORT, FDP_F_PKT_MARK, FDP_F_REG0, FDP_F_REG1,
            FDP_F_METADATA, FDP_F_TP_DST, FDP_F_NW_SRC,
        };
        enum fdp_field src = srcs[unit_rng_below(rng, FDP_ARRAY_SIZE(srcs))];
        f = state_fields[unit_rng_below(rng, FDP_ARRAY_SIZE(state_fields))];
        if (!tcp && (src == FDP_F_TP_DST || src == FDP_F_NW_SRC)) {
            src = FDP_F_PKT_MARK;
        }
        unsigned int n_bits = 1 + unit_rng_below(rng, 8);
        unsigned int src_ofs = unit_rng_below(rng, 3);
        unsigned int dst_ofs = unit_rng_below(rng, 3);
        ck_assert_int_eq(fdp__actions_add_move(b, src, src_ofs, f, dst_ofs,
                                               n_bits), 0);
        break;
    }
    case 5:
        /* set_field on a header a later table matches. */
        if (tcp && unit_rng_below(rng, 2)) {
            ck_assert_int_eq(fdp__actions_add_set_field(
                                 b, FDP_F_TP_DST,
                                 small_value(rng, FDP_F_TP_DST), 0), 0);
        } else {
            ck_assert_int_eq(fdp__actions_add_set_field(
                                 b, FDP_F_PKT_MARK,
                                 small_value(rng, FDP_F_PKT_MARK), 0), 0);
        }
        break;
    case 6: {
        if (one_table) {
            fdp__actions_add(b, FDP_ACT_OUTPUT,
                             1 + unit_rng_below(rng, max_out_port));
            break;
        }
        /* resubmit: mostly to a later table, sometimes to the flow's own
         * or an earlier one (loops, which the limits end), with the
         * packet's port or another. */
        size_t later = ti + 1 < g->n_tables
                       ? ti + 1 + unit_rng_below(rng, (uint32_t) (g->n_tables
                                                                  - ti - 1))
                       : ti;
        unsigned int table = unit_rng_below(rng, 8) == 0
                             ? FDP__RESUBMIT_SAME_TABLE
                             : unit_rng_below(rng, 4) == 0
                             ? g->tables[unit_rng_below(rng,
                                                        (uint32_t) g->n_tables)]
                             : g->tables[later];
        uint32_t port = unit_rng_below(rng, 2) ? FDP_PORT_IN_PORT
                                               : 1 + unit_rng_below(rng, 3);
        fdp__actions_add_resubmit(b, port, table);
        break;
    }
    default:
        fdp__actions_add(b, FDP_ACT_OUTPUT,
                         1 + unit_rng_below(rng, max_out_port));
        break;
    }
}

/* Conjunctions of one table: an id, its clause count, and the two
 * priorities its clause flows use. */
struct conj_def {
    uint32_t id;
    unsigned int n;
    uint16_t prio[2];
};

static uint16_t
random_priority(struct unit_rng *rng)
{
    /* Few levels, so that ties and equal-priority conjunctions happen. */
    return (uint16_t) (1 + unit_rng_below(rng, 6) * 10);
}

/* A random program: 2 to 5 tables starting at 0, 1 to 40 flows each. */
static void
random_program(struct unit_rng *rng, struct prog *g)
{
    prog_init(g);
    ck_assert_int_eq(fdp_pipeline_begin(g->p), 0);
    g->n_tables = 2 + unit_rng_below(rng, 4);
    bool only_conj = false;
    if (one_table) {
        g->n_tables = 1;
        only_conj = unit_rng_below(rng, 2);
    }
    g->tables[0] = 0;
    for (size_t i = 1; i < g->n_tables; i++) {
        g->tables[i] = (uint8_t) (g->tables[i - 1] + 1
                                  + (unit_rng_below(rng, 3) == 0
                                     ? unit_rng_below(rng, 60) : 0));
    }

    for (size_t ti = 0; ti < g->n_tables; ti++) {
        uint8_t table = g->tables[ti];
        struct conj_def conjs[3];
        size_t n_conjs = unit_rng_below(rng, 4);
        for (size_t c = 0; c < n_conjs; c++) {
            conjs[c] = (struct conj_def) {
                .id = 1 + (uint32_t) c * 7 + unit_rng_below(rng, 3),
                .n = 2 + unit_rng_below(rng, 2),
                .prio = { random_priority(rng), random_priority(rng) },
            };
        }
        unsigned int n_flows = 1 + unit_rng_below(rng, 40);
        bool with_miss_flow = unit_rng_below(rng, 3) == 0;
        for (unsigned int i = 0; i < n_flows; i++) {
            struct fdp__actions_builder b;
            struct fdp_match m;
            bool tcp;
            uint16_t priority = random_priority(rng);
            uint64_t cookie = ((uint64_t) table << 32) | (i + 1);
            unsigned int kind = unit_rng_below(rng, 10);
            if (only_conj) {
                /* Clause and conj_id flows, and the table-miss flow. */
                kind = i == n_flows - 1 && with_miss_flow
                       ? 9 : unit_rng_below(rng, 4);
            }

            fdp__actions_builder_init(&b);
            random_match(rng, &m, &tcp);
            if (kind < 3 && n_conjs) {
                /* A clause flow, of one conjunction or of two. */
                struct conj_def *c = &conjs[unit_rng_below(rng,
                                                           (uint32_t) n_conjs)];
                priority = c->prio[unit_rng_below(rng, 4) == 0];
                ck_assert_int_eq(fdp__actions_add_conjunction(
                                     &b, c->id, 1 + unit_rng_below(rng, c->n),
                                     c->n), 0);
                if (n_conjs > 1 && unit_rng_below(rng, 4) == 0) {
                    struct conj_def *d = &conjs[unit_rng_below(
                        rng, (uint32_t) n_conjs)];
                    if (d != c) {
                        ck_assert_int_eq(fdp__actions_add_conjunction(
                                             &b, d->id,
                                             1 + unit_rng_below(rng, d->n),
                                             d->n), 0);
                    }
                }
            } else {
                if (kind == 3 && n_conjs) {
                    /* The flow a conjunction leads to. */
                    struct conj_def *c = &conjs[unit_rng_below(
                        rng, (uint32_t) n_conjs)];
                    fdp__match_set_masked(&m, FDP_F_CONJ_ID, c->id,
                                          0xffffffffu);
                } else if (i == n_flows - 1 && with_miss_flow) {
                    /* A table-miss flow, in a third of the tables. */
                    fdp__match_init(&m);
                    tcp = false;
                    priority = 0;
                }
                unsigned int n_acts = unit_rng_below(rng, 4);
                for (unsigned int k = 0; k < n_acts; k++) {
                    random_action(rng, g, ti, tcp, &b);
                }
                if (ti + 1 < g->n_tables && unit_rng_below(rng, 2)) {
                    /* goto_table forward, at a random place among the
                     * actions (it takes effect after all of them). */
                    size_t to = ti + 1 + unit_rng_below(
                        rng, (uint32_t) (g->n_tables - ti - 1));
                    fdp__actions_add(&b, FDP_ACT_GOTO_TABLE, g->tables[to]);
                    if (unit_rng_below(rng, 2)) {
                        random_action(rng, g, ti, tcp, &b);
                    }
                }
            }
            if (prog_has(g, table, priority, &m)) {
                fdp__actions_builder_destroy(&b);
                continue;
            }
            prog_add(g, table, priority, cookie, &m, &b);
            fdp__actions_builder_destroy(&b);
        }
    }
    ck_assert_int_eq(fdp_pipeline_commit(g->p), 0);
}

/* A packet: tcp with small field values, then, most of the time, the
 * packet fields of a random flow's match made to hold. */
static void
random_packet(struct unit_rng *rng, const struct prog *g, struct fdp_key *key)
{
    memset(key, 0, sizeof *key);
    fdp__key_set(key, FDP_F_DL_TYPE, FDP_ETH_TYPE_IP);
    fdp__key_set(key, FDP_F_NW_PROTO, FDP_IPPROTO_TCP);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(packet_fields); i++) {
        fdp__key_set(key, packet_fields[i],
                     small_value(rng, packet_fields[i]));
    }
    if (unit_rng_below(rng, 4) == 0) {
        return;
    }
    const struct ref_table *t = &g->ref->tables[
        g->tables[unit_rng_below(rng, (uint32_t) g->n_tables)]];
    if (!t->n) {
        return;
    }
    const struct ref_flow *f = &t->flows[unit_rng_below(rng,
                                                        (uint32_t) t->n)];
    for (size_t i = 0; i < FDP_ARRAY_SIZE(packet_fields); i++) {
        enum fdp_field fi = packet_fields[i];
        if (fdp__match_has_range(&f->match, fi)) {
            uint64_t lo = (uint64_t) fdp__match_get_value(&f->match, fi);
            uint64_t hi = (uint64_t) fdp__key_get(&f->match.hi, fi);
            fdp__key_set(key, fi, lo + unit_rng_next(rng) % (hi - lo + 1));
        } else {
            uint64_t mask = (uint64_t) fdp__match_get_mask(&f->match, fi);
            uint64_t v = (uint64_t) fdp__key_get(key, fi);
            fdp__key_set(key, fi, (v & ~mask)
                                  | (uint64_t) fdp__match_get_value(&f->match,
                                                                    fi));
        }
    }
}

START_TEST(differential_random_programs)
{
    if (!use_cpu_level(_i, "differential_random_programs")) {
        return;
    }
    struct unit_rng rng;
    char what[96];

    unit_rng_init(&rng, 1500);
    /* Destroying a program waits for RCU callbacks once per table, which
     * takes milliseconds of wall time: fewer programs, more packets. */
    for (int prog_no = 0; prog_no < 150; prog_no++) {
        struct prog g;
        random_program(&rng, &g);
        for (int pkt = 0; pkt < 200; pkt++) {
            struct fdp_key key;
            random_packet(&rng, &g, &key);
            snprintf(what, sizeof what, "program %d, packet %d", prog_no,
                     pkt);
            check_packet(&g, &key, what);
            /* A continuation from a table of the program, with the
             * registers and metadata a ct(table=N) would have frozen. */
            for (size_t w = FDP__WORD_METADATA; w <= FDP__WORD_XREG7; w++) {
                key.w[w] = unit_rng_below(&rng, 2)
                           ? unit_rng_next(&rng) & 0x30003 : 0;
            }
            /* What the tracker says of a continuation: tracked. */
            fdp__key_set(&key, FDP_F_CT_STATE,
                         FDP_CT_TRK | (unit_rng_below(&rng, 2) ? FDP_CT_NEW
                                                               : FDP_CT_EST));
            check_resume(&g, &key, g.tables[unit_rng_below(
                                     &rng, (uint32_t) g.n_tables)], what);
        }
        prog_destroy(&g);
    }
    printf("differential_random_programs (%s): %" PRIu64 " packets, steps "
           "%" PRIu64 " start / %" PRIu64 " goto / %" PRIu64 " resubmit; "
           "%" PRIu64 " resubmit misses, %" PRIu64 " goto misses inside "
           "resubmits, %" PRIu64 " table misses, %" PRIu64 " limit drops, "
           "%" PRIu64 " conjunction hits, %" PRIu64 " with state, %" PRIu64
           " with headers rewritten\n",
           fdp_cpu_validating() ? "validate"
                                : fdp_cpu_level_name(fdp_cpu_level()),
           cov.packets, cov.steps[0], cov.steps[1], cov.steps[2],
           cov.resubmit_misses, cov.nested_goto_misses, cov.table_missed,
           cov.limit_dropped, cov.conj_hits, cov.state_loaded,
           cov.header_rewritten);
    fflush(stdout);
    /* The programs reach every case (a change to the generator that
     * stopped reaching one would make this test prove less). */
    ck_assert_uint_gt(cov.steps[FDP_STEP_GOTO], cov.packets / 4);
    ck_assert_uint_gt(cov.steps[FDP_STEP_RESUBMIT], cov.packets / 4);
    ck_assert_uint_gt(cov.resubmit_misses, 20);
    ck_assert_uint_gt(cov.table_missed, cov.packets / 50);
    ck_assert_uint_gt(cov.limit_dropped, 10);
    ck_assert_uint_gt(cov.conj_hits, 50);
    /* goto_table misses inside resubmits come from few programs (none
     * under some seeds): goto_miss_inside_resubmit pins them down. */
    ck_assert_uint_gt(cov.state_loaded, cov.packets / 10);
    ck_assert_uint_gt(cov.header_rewritten, cov.packets / 10);
    printf("differential_random_programs: %" PRIu64 " ct actions run, %"
           PRIu64 " ct_clear of a tracked packet (with the resumes)\n",
           cov.ct_runs, cov.ct_clears);
    ck_assert_uint_gt(cov.ct_runs, 1000);
    ck_assert_uint_gt(cov.ct_clears, 50);
}
END_TEST


/* ---------------------------------------------------------------------- */
/* Hand-picked programs.                                                   */

/* Helpers to write flows tersely: a match under construction and the
 * actions' builder. */
struct flow_b {
    struct fdp_match m;
    struct fdp__actions_builder b;
};

static struct flow_b *
fb_new(void)
{
    struct flow_b *fb = calloc(1, sizeof *fb);

    ck_assert_ptr_nonnull(fb);
    fdp__match_init(&fb->m);
    fdp__actions_builder_init(&fb->b);
    return fb;
}

static void
fb_ip(struct flow_b *fb)
{
    fdp__match_set_masked(&fb->m, FDP_F_DL_TYPE, FDP_ETH_TYPE_IP, 0xffff);
}

static void
fb_tcp(struct flow_b *fb)
{
    fb_ip(fb);
    fdp__match_set_masked(&fb->m, FDP_F_NW_PROTO, FDP_IPPROTO_TCP, 0xff);
}

static void
fb_exact(struct flow_b *fb, enum fdp_field f, uint64_t v)
{
    ck_assert_int_eq(fdp__match_set_masked(&fb->m, f, v,
                                           fdp__field(f)->max), 0);
}

static void
fb_add(struct prog *g, struct flow_b *fb, uint8_t table, uint16_t priority,
       uint64_t cookie)
{
    prog_add(g, table, priority, cookie, &fb->m, &fb->b);
    fdp__actions_builder_destroy(&fb->b);
    free(fb);
}

static uint32_t
ip4(unsigned int a, unsigned int b, unsigned int c, unsigned int d)
{
    return (uint32_t) (a << 24 | b << 16 | c << 8 | d);
}

static void
tcp_key(struct fdp_key *key, uint32_t in_port, uint32_t src, uint32_t dst,
        uint16_t sport, uint16_t dport)
{
    memset(key, 0, sizeof *key);
    fdp__key_set(key, FDP_F_IN_PORT, in_port);
    fdp__key_set(key, FDP_F_DL_TYPE, FDP_ETH_TYPE_IP);
    fdp__key_set(key, FDP_F_NW_PROTO, FDP_IPPROTO_TCP);
    fdp__key_set(key, FDP_F_NW_SRC, src);
    fdp__key_set(key, FDP_F_NW_DST, dst);
    fdp__key_set(key, FDP_F_TP_SRC, sport);
    fdp__key_set(key, FDP_F_TP_DST, dport);
}

/* Classifies 'key' through 'g' (checked against the reference) and returns
 * the cookies of the flows hit, 0 for a miss, into 'cookies'; the result
 * stays in '*r' (caller's, read lock released). */
static size_t
run_packet(struct prog *g, const struct fdp_key *key,
           struct fdp_pipeline_result *r, uint64_t *cookies, size_t max,
           const char *what)
{
    check_packet(g, key, what);
    fdp_table_read_lock();
    ck_assert_int_eq(fdp_pipeline_classify(g->p, key, 0, r, NULL, NULL), 0);
    for (size_t i = 0; i < r->n_steps && i < max; i++) {
        cookies[i] = r->steps[i].rule ? fdp_rule_get_cookie(r->steps[i].rule)
                                      : 0;
    }
    fdp_table_read_unlock();
    return r->n_steps;
}

/* The output ports of 'acts', in order, as a number in base 16 (outputs to
 * 1 then 3: 0x13). */
static uint64_t
outputs(const struct fdp_actions *acts)
{
    uint64_t v = 0;

    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a)) {
        if (a->type == FDP_ACT_OUTPUT) {
            v = v << 4 | (a->arg & 0xf);
        }
    }
    return v;
}

/* Parses 'text' into 'p' (table, priority and cookie as it says). */
static void
add_text(struct fdp_pipeline *p, const char *text)
{
    struct fdp_flow_spec spec;
    char *error = NULL;

    ck_assert_msg(!fdp_flow_parse(text, 0, &spec, &error), "%s: %s", text,
                  error);
    ck_assert_int_eq(fdp_pipeline_insert(p, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);
}

/* The resolved record of the 'n'-th ct in 'acts' (0-based). */
static struct fdp__dp_ct
nth_ct(const struct fdp_actions *acts, unsigned int n)
{
    struct fdp__dp_ct ct;

    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a)) {
        if (a->type == FDP_ACT_CT && !n--) {
            ck_assert(a->flags & FDP__ACT_CT_RESOLVED);
            ck_assert_uint_eq(a->n_words, FDP__DPCT_RECORD_WORDS);
            memcpy(&ct, (const uint64_t *) a + 1, sizeof ct);
            return ct;
        }
    }
    ck_abort_msg("no ct record %u", n);
    return ct;
}

/* A ct action composes one resolved record: the zone from a register,
 * exec()'s set_field and a move from a register (and one from ct_mark
 * after the set_field, which reads the new mark), nat copied, and for
 * table=N the table, in_port and the frozen registers.  What follows in
 * the pass sees the packet untracked (Open vSwitch's
 * compose_conntrack_action() clears the ct fields, table or not);
 * ct_clear clears a tracked packet's; a pipeline with ct never takes the
 * one-table path; and the continuation, resumed from table N with the
 * tracker's ct_state, sees the frozen registers. */
START_TEST(ct_composition_and_fork)
{
    struct fdp_pipeline *p;
    struct fdp_pipeline_result r;
    struct fdp_key key;

    ck_assert_int_eq(fdp_pipeline_create(&p), 0);
    add_text(p, "table=0,priority=10,cookie=0x1,ip,ct_state=-trk,"
             "actions=load:0x2a->NXM_NX_REG0[16..31],"
             "load:0x77->NXM_NX_REG1[],"
             "ct(commit,zone=NXM_NX_REG0[16..31],table=3,"
             "nat(src=10.0.0.9:1000-2000),exec(set_field:0x5/0xf->ct_mark,"
             "move:NXM_NX_REG1[0..7]->NXM_NX_CT_LABEL[8..15],"
             "move:NXM_NX_CT_MARK[0..3]->NXM_NX_CT_LABEL[100..103])),"
             "resubmit(,1)");
    /* The rest of the pass: ct fields clear, so -trk matches again. */
    add_text(p, "table=1,priority=10,cookie=0x2,ct_state=-trk,"
             "actions=output:2");
    add_text(p, "table=1,priority=5,cookie=0x3,actions=output:3");
    /* The continuation. */
    add_text(p, "table=3,priority=10,cookie=0x4,ct_state=+trk+new,"
             "reg1=0x77,actions=ct_clear,resubmit(,4)");
    add_text(p, "table=3,priority=1,cookie=0x5,actions=output:5");
    add_text(p, "table=4,priority=10,cookie=0x6,ct_state=-trk,"
             "actions=output:6");
    add_text(p, "table=4,priority=1,cookie=0x7,actions=output:7");

    fdp_table_read_lock();
    const struct fdp__pipeline_view *view = fdp__pipeline_view(p);
    ck_assert_ptr_null(view->single);
    tcp_key(&key, 4, ip4(1, 1, 1, 1), ip4(2, 2, 2, 2), 5, 80);
    fdp__key_set(&key, FDP_F_CT_MARK, 0xf0);
    fdp_pipeline_result_init(&r);
    ck_assert_int_eq(fdp_pipeline_classify(p, &key, 0, &r, NULL, NULL), 0);
    ck_assert_uint_eq(r.n_steps, 2);
    ck_assert_uint_eq(fdp_rule_get_cookie(r.steps[1].rule), 0x2);
    struct fdp__dp_ct ct = nth_ct(r.actions, 0);
    ck_assert_uint_eq(ct.flags, FDP__DPCT_COMMIT | FDP__DPCT_NAT
                                | FDP__DPCT_RECIRC);
    ck_assert_uint_eq(ct.zone, 0x2a);
    ck_assert_uint_eq(ct.table, 3);
    ck_assert_uint_eq(ct.in_port, 4);
    ck_assert_uint_eq(ct.mark, 0x5);
    ck_assert_uint_eq(ct.mark_mask, 0xf);
    /* Label bits 8-15 from reg1; bits 100-103 from the new mark's low
     * nibble, 5. */
    ck_assert_uint_eq(ct.label.lo, 0x7700);
    ck_assert_uint_eq(ct.label_mask.lo, 0xff00);
    ck_assert_uint_eq(ct.label.hi, (uint64_t) 0x5 << 36);
    ck_assert_uint_eq(ct.label_mask.hi, (uint64_t) 0xf << 36);
    ck_assert_uint_eq(ct.nat.flags, FDP__NAT_SRC | FDP__NAT_ADDR
                                    | FDP__NAT_PORT);
    ck_assert_uint_eq(ct.nat.addr_min.lo, ip4(10, 0, 0, 9));
    ck_assert_uint_eq(ct.nat.port_max, 2000);
    /* The frozen words: metadata, then xreg0 (reg0:reg1) first. */
    ck_assert_uint_eq(ct.frozen[1], (uint64_t) 0x2a0000 << 32 | 0x77);
    /* The ct record comes before the output of the rest of the pass. */
    ck_assert_uint_eq(outputs(r.actions), 0x2);
    ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_CT_MARK), 0);

    /* The continuation, as the datapath resumes it. */
    struct fdp_key cont = key;
    memcpy(&cont.w[FDP_KEY_PACKET_WORDS], ct.frozen, sizeof ct.frozen);
    fdp__key_set(&cont, FDP_F_CT_STATE, FDP_CT_TRK | FDP_CT_NEW);
    fdp__key_set(&cont, FDP_F_CT_ZONE, ct.zone);
    ck_assert_int_eq(fdp__pipeline_resume_view(p, view, &cont, ct.table, 0,
                                               &r, NULL, NULL), 0);
    ck_assert_uint_eq(r.n_steps, 2);
    ck_assert_uint_eq(r.steps[0].kind, FDP_STEP_CT);
    ck_assert_uint_eq(fdp_rule_get_cookie(r.steps[0].rule), 0x4);
    /* ct_clear: table 4 sees the packet untracked. */
    ck_assert_uint_eq(fdp_rule_get_cookie(r.steps[1].rule), 0x6);
    ck_assert_uint_eq(outputs(r.actions), 0x6);
    /* Without the frozen reg1, table 3's first flow does not match. */
    fdp__key_set(&cont, FDP_F_REG1, 0);
    ck_assert_int_eq(fdp__pipeline_resume_view(p, view, &cont, 3, 0, &r,
                                               NULL, NULL), 0);
    ck_assert_uint_eq(fdp_rule_get_cookie(r.steps[0].rule), 0x5);
    ck_assert_int_eq(fdp__pipeline_resume_view(p, view, &cont, 255, 0, &r,
                                               NULL, NULL), EINVAL);
    fdp_table_read_unlock();
    fdp_pipeline_result_destroy(&r);
    fdp_pipeline_destroy(p);
}
END_TEST

/* A one-table pipeline with ct (or only ct_clear) is not served as a
 * table: the datapath needs the composed record. */
START_TEST(ct_keeps_off_the_one_table_path)
{
    static const char *const flows[] = {
        "ip,actions=ct(commit),output:1",
        "actions=ct_clear,output:1",
    };

    for (size_t i = 0; i < FDP_ARRAY_SIZE(flows); i++) {
        struct fdp_pipeline *p;
        ck_assert_int_eq(fdp_pipeline_create(&p), 0);
        add_text(p, "priority=1,actions=output:2");
        fdp_table_read_lock();
        ck_assert_ptr_nonnull(fdp__pipeline_view(p)->single);
        fdp_table_read_unlock();
        add_text(p, flows[i]);
        fdp_table_read_lock();
        ck_assert_ptr_null(fdp__pipeline_view(p)->single);
        fdp_table_read_unlock();
        fdp_pipeline_destroy(p);
    }
}
END_TEST

/* ovs-fields(7), "Conjunctive Match Fields": ip_src in {10.0.0.1, .4, .6,
 * .7} and ip_dst in {10.0.0.2, .5, .7, .8} leads to conj_id=1234's flow,
 * which here outputs to port 1; anything else finds the table-miss flow's
 * output to port 2. */
START_TEST(conjunction_ovs_fields_example)
{
    static const unsigned int srcs[] = { 1, 4, 6, 7 };
    static const unsigned int dsts[] = { 2, 5, 7, 8 };
    struct fdp_pipeline_result r;
    struct prog g;
    struct flow_b *fb;
    uint64_t c[4];

    prog_init(&g);
    fb = fb_new();
    fdp__match_set_masked(&fb->m, FDP_F_CONJ_ID, 1234, 0xffffffffu);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 1);
    fb_add(&g, fb, 0, FDP_DEFAULT_PRIORITY, 0x1234);
    for (size_t i = 0; i < 4; i++) {
        fb = fb_new();
        fb_ip(fb);
        fb_exact(fb, FDP_F_NW_SRC, ip4(10, 0, 0, srcs[i]));
        fdp__actions_add_conjunction(&fb->b, 1234, 1, 2);
        fb_add(&g, fb, 0, FDP_DEFAULT_PRIORITY, 0x100 + i);
        fb = fb_new();
        fb_ip(fb);
        fb_exact(fb, FDP_F_NW_DST, ip4(10, 0, 0, dsts[i]));
        fdp__actions_add_conjunction(&fb->b, 1234, 2, 2);
        fb_add(&g, fb, 0, FDP_DEFAULT_PRIORITY, 0x200 + i);
    }
    fb = fb_new();
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 2);
    fb_add(&g, fb, 0, 0, 0xfff);

    fdp_pipeline_result_init(&r);
    for (unsigned int s = 0; s < 10; s++) {
        for (unsigned int d = 0; d < 10; d++) {
            bool in_s = s == 1 || s == 4 || s == 6 || s == 7;
            bool in_d = d == 2 || d == 5 || d == 7 || d == 8;
            struct fdp_key key;
            tcp_key(&key, 15, ip4(10, 0, 0, s), ip4(10, 0, 0, d), 1, 2);
            ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "ovs example"),
                              1);
            ck_assert_uint_eq(c[0], in_s && in_d ? 0x1234 : 0xfff);
            ck_assert_uint_eq(r.steps[0].conj_id, in_s && in_d ? 1234 : 0);
            ck_assert_uint_eq(outputs(r.actions), in_s && in_d ? 1 : 2);
            /* conj_id is pipeline state of the lookup only. */
            ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_CONJ_ID), 0);
        }
    }
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);
}
END_TEST

/* A conjunction at priority 100 is complete for the packet, but a hard
 * flow at 200 matches it too: the hard flow wins and no conj_id lookup
 * happens.  With the conjunction at 300 instead, the conj_id lookup
 * happens and finds the conj_id=7 flow. */
START_TEST(conjunction_hidden_by_higher_hard_flow)
{
    struct fdp_pipeline_result r;
    uint64_t c[4];

    for (int top = 0; top < 2; top++) {
        struct prog g;
        struct flow_b *fb;
        uint16_t cp = top ? 300 : 100;

        prog_init(&g);
        fb = fb_new();
        fdp__match_set_masked(&fb->m, FDP_F_CONJ_ID, 7, 0xffffffffu);
        fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 1);
        /* Above the hard flow: the conj_id=7 lookup finds the hard flow
         * too, and must prefer this one. */
        fb_add(&g, fb, 0, 250, 0xc7);
        fb = fb_new();
        fb_tcp(fb);
        fb_exact(fb, FDP_F_TP_SRC, 5);
        fdp__actions_add_conjunction(&fb->b, 7, 1, 2);
        fb_add(&g, fb, 0, cp, 0x71);
        fb = fb_new();
        fb_tcp(fb);
        fb_exact(fb, FDP_F_TP_DST, 6);
        fdp__actions_add_conjunction(&fb->b, 7, 2, 2);
        fb_add(&g, fb, 0, cp, 0x72);
        fb = fb_new();
        fb_tcp(fb);
        fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 2);
        fb_add(&g, fb, 0, 200, 0x200);

        struct fdp_key key;
        tcp_key(&key, 15, 1, 2, 5, 6);
        fdp_pipeline_result_init(&r);
        ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "hidden"), 1);
        ck_assert_uint_eq(c[0], top ? 0xc7 : 0x200);
        ck_assert_uint_eq(r.steps[0].conj_id, top ? 7 : 0);
        ck_assert_uint_eq(outputs(r.actions), top ? 1 : 2);
        fdp_pipeline_result_destroy(&r);
        prog_destroy(&g);
    }
}
END_TEST

/* Conjunction 1 at priority 50 and conjunction 2 at priority 40: when
 * both complete, 1 wins; when only 2 completes, 2.  Without a conj_id=1
 * flow, a complete conjunction 1 finds nothing on its conj_id lookup and
 * the search goes on at priority 40, to conjunction 2 if it completes, or
 * else to a miss (there is no hard flow).  Conjunction 3 has no clause 2
 * flow and never completes. */
START_TEST(conjunction_two_priorities)
{
    struct fdp_pipeline_result r;
    uint64_t c[4];

    for (int with_c1 = 0; with_c1 < 2; with_c1++) {
        struct prog g;
        struct flow_b *fb;

        prog_init(&g);
        if (with_c1) {
            fb = fb_new();
            fdp__match_set_masked(&fb->m, FDP_F_CONJ_ID, 1, 0xffffffffu);
            fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 1);
            fb_add(&g, fb, 0, 5, 0xc1);
        }
        fb = fb_new();
        fdp__match_set_masked(&fb->m, FDP_F_CONJ_ID, 2, 0xffffffffu);
        fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 2);
        fb_add(&g, fb, 0, 5, 0xc2);
        /* Conjunction 1 (prio 50): tp_src=1 and tp_dst in {1, 2}.
         * Conjunction 2 (prio 40): tp_src in {1, 2} and tp_dst=2; the
         * tp_src=1 flow of conjunction 2 is clause 1 of both (at 40 it
         * belongs to conjunction 2 only, so the flows differ). */
        fb = fb_new();
        fb_tcp(fb);
        fb_exact(fb, FDP_F_TP_SRC, 1);
        fdp__actions_add_conjunction(&fb->b, 1, 1, 2);
        fb_add(&g, fb, 0, 50, 0x11);
        for (unsigned int d = 1; d <= 2; d++) {
            fb = fb_new();
            fb_tcp(fb);
            fb_exact(fb, FDP_F_TP_DST, d);
            fdp__actions_add_conjunction(&fb->b, 1, 2, 2);
            fb_add(&g, fb, 0, 50, 0x120 + d);
        }
        for (unsigned int s = 1; s <= 2; s++) {
            fb = fb_new();
            fb_tcp(fb);
            fb_exact(fb, FDP_F_TP_SRC, s);
            fdp__actions_add_conjunction(&fb->b, 2, 1, 2);
            fdp__actions_add_conjunction(&fb->b, 3, 1, 2);
            fb_add(&g, fb, 0, 40, 0x210 + s);
        }
        fb = fb_new();
        fb_tcp(fb);
        fb_exact(fb, FDP_F_TP_DST, 2);
        fdp__actions_add_conjunction(&fb->b, 2, 2, 2);
        fb_add(&g, fb, 0, 40, 0x22);
        static const struct {
            uint16_t s, d;
            uint64_t want[2];       /* Without / with conj_id=1's flow. */
            uint32_t conj[2];
        } cases[] = {
            { 1, 2, { 0xc2, 0xc1 }, { 2, 1 } },   /* Both complete. */
            { 1, 1, { 0, 0xc1 }, { 0, 1 } },      /* Only 1. */
            { 2, 2, { 0xc2, 0xc2 }, { 2, 2 } },   /* Only 2. */
            { 2, 1, { 0, 0 }, { 0, 0 } },         /* Neither. */
            { 3, 2, { 0, 0 }, { 0, 0 } },
        };
        fdp_pipeline_result_init(&r);
        for (size_t i = 0; i < FDP_ARRAY_SIZE(cases); i++) {
            struct fdp_key key;
            tcp_key(&key, 15, 1, 2, cases[i].s, cases[i].d);
            ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "two prios"),
                              1);
            ck_assert_msg(c[0] == cases[i].want[with_c1],
                          "case %zu with_c1 %d: got 0x%" PRIx64, i, with_c1,
                          c[0]);
            ck_assert_uint_eq(r.steps[0].conj_id, cases[i].conj[with_c1]);
            ck_assert(r.table_missed == !cases[i].want[with_c1]);
        }
        fdp_pipeline_result_destroy(&r);
        prog_destroy(&g);
    }
}
END_TEST

/* Conjunctions 2 and 1 (added in that order) both complete at priority
 * 50: the lower id, 1, is tried first.  Without a conj_id=1 flow (and no
 * hard flow), 1's lookup finds nothing and 2's is tried next, at the same
 * priority. */
START_TEST(conjunction_same_priority_lowest_id_first)
{
    struct fdp_pipeline_result r;
    uint64_t c[4];

    for (int with_c1 = 0; with_c1 < 2; with_c1++) {
        struct prog g;
        struct flow_b *fb;

        prog_init(&g);
        for (uint32_t id = 2; id >= 1; id--) {
            for (unsigned int k = 1; k <= 2; k++) {
                fb = fb_new();
                fb_tcp(fb);
                fb_exact(fb, k == 1 ? FDP_F_TP_SRC : FDP_F_TP_DST, 10 * id + k);
                fdp__actions_add_conjunction(&fb->b, id, k, 2);
                fb_add(&g, fb, 0, 50, 0x100 * id + k);
            }
            if (id == 2 || with_c1) {
                fb = fb_new();
                fdp__match_set_masked(&fb->m, FDP_F_CONJ_ID, id, 0xffffffffu);
                fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, id);
                fb_add(&g, fb, 0, 5, 0xc0 + id);
            }
        }
        /* Conjunction 1 is tp_src=11 and tp_dst in {12, 22}; conjunction
         * 2 is tp_src in {21, 11} and tp_dst=22 (the added clause flows
         * also match nw_src, so that their matches are new). */
        fb = fb_new();
        fb_tcp(fb);
        fb_exact(fb, FDP_F_TP_SRC, 11);
        fb_exact(fb, FDP_F_NW_SRC, 1);
        fdp__actions_add_conjunction(&fb->b, 2, 1, 2);
        fb_add(&g, fb, 0, 50, 0x301);
        fb = fb_new();
        fb_tcp(fb);
        fb_exact(fb, FDP_F_TP_DST, 22);
        fb_exact(fb, FDP_F_NW_SRC, 1);
        fdp__actions_add_conjunction(&fb->b, 1, 2, 2);
        fb_add(&g, fb, 0, 50, 0x302);

        struct fdp_key key;
        tcp_key(&key, 15, 1, 2, 11, 22);     /* Both complete. */
        fdp_pipeline_result_init(&r);
        ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "same prio"), 1);
        ck_assert_uint_eq(c[0], with_c1 ? 0xc1 : 0xc2);
        ck_assert_uint_eq(r.steps[0].conj_id, with_c1 ? 1 : 2);
        ck_assert_uint_eq(outputs(r.actions), with_c1 ? 1 : 2);
        fdp_pipeline_result_destroy(&r);
        prog_destroy(&g);
    }
}
END_TEST

/* Table 0: output:1, resubmit(,1), output:3, goto_table:2.  Table 1:
 * load reg0=7, output:2.  Table 2 matches reg0=7: output:4.  The outputs
 * come 1, 2, 3, 4: the resubmit came back to the rest of its caller, and
 * the register it loaded is seen by table 2. */
START_TEST(resubmit_returns_to_caller)
{
    struct fdp_pipeline_result r;
    struct prog g;
    struct flow_b *fb;
    uint64_t c[8];

    prog_init(&g);
    fb = fb_new();
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 1);
    fdp__actions_add(&fb->b, FDP_ACT_GOTO_TABLE, 2);
    fdp__actions_add_resubmit(&fb->b, FDP_PORT_IN_PORT, 1);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 3);
    fb_add(&g, fb, 0, 1, 0xa);
    fb = fb_new();
    fdp__actions_add_set_masked(&fb->b, FDP_F_REG0, 7, 0xffffffffu,
                                FDP__ACT_LOAD);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 2);
    fb_add(&g, fb, 1, 1, 0xb);
    fb = fb_new();
    fb_exact(fb, FDP_F_REG0, 7);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 4);
    fb_add(&g, fb, 2, 1, 0xc);

    struct fdp_key key;
    tcp_key(&key, 15, 1, 2, 3, 4);
    fdp_pipeline_result_init(&r);
    ck_assert_uint_eq(run_packet(&g, &key, &r, c, 8, "returns"), 3);
    ck_assert_uint_eq(c[0], 0xa);
    ck_assert_uint_eq(c[1], 0xb);
    ck_assert_uint_eq(c[2], 0xc);
    ck_assert_uint_eq(r.steps[1].kind, FDP_STEP_RESUBMIT);
    ck_assert_uint_eq(r.steps[1].depth, 1);
    ck_assert_uint_eq(r.steps[2].kind, FDP_STEP_GOTO);
    ck_assert_uint_eq(r.steps[2].depth, 0);
    ck_assert_uint_eq(outputs(r.actions), 0x1234);
    ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_REG0), 7);
    ck_assert(!r.limit_dropped && !r.table_missed);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);
}
END_TEST

/* Table 1 holds a chain: the flow for reg0=i (i < n) loads reg0=i+1 and
 * resubmits to table 1; reg0=n outputs.  Table 0 outputs to port 1 and
 * resubmits into the chain.  n resubmits nest n deep: 64 is allowed, 65
 * is dropped whole (not even table 0's output). */
static void
resubmit_chain(unsigned int n, struct fdp_pipeline_result *r,
               struct prog *g)
{
    struct flow_b *fb;

    prog_init(g);
    fb = fb_new();
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 1);
    fdp__actions_add_resubmit(&fb->b, FDP_PORT_IN_PORT, 1);
    fb_add(g, fb, 0, 1, 0x1);
    for (unsigned int i = 0; i < n; i++) {
        fb = fb_new();
        fb_exact(fb, FDP_F_REG0, i);
        fdp__actions_add_set_masked(&fb->b, FDP_F_REG0, i + 1, 0xffffffffu,
                                    FDP__ACT_LOAD);
        fdp__actions_add_resubmit(&fb->b, FDP_PORT_IN_PORT,
                                  FDP__RESUBMIT_SAME_TABLE);
        fb_add(g, fb, 1, 1, 0x1000 + i);
    }
    fb = fb_new();
    fb_exact(fb, FDP_F_REG0, n);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 2);
    fb_add(g, fb, 1, 1, 0x2000);

    struct fdp_key key;
    uint64_t c[1];
    tcp_key(&key, 15, 1, 2, 3, 4);
    fdp_pipeline_result_init(r);
    run_packet(g, &key, r, c, 1, "chain");
}

START_TEST(resubmit_depth_limit)
{
    struct fdp_pipeline_result r;
    struct prog g;

    /* Table 0's resubmit is the first level: n - 1 more in table 1. */
    resubmit_chain(FDP_PIPELINE_MAX_DEPTH - 1, &r, &g);
    ck_assert(!r.limit_dropped);
    ck_assert_uint_eq(r.n_steps, 1 + FDP_PIPELINE_MAX_DEPTH);
    ck_assert_uint_eq(r.steps[r.n_steps - 1].depth, FDP_PIPELINE_MAX_DEPTH);
    ck_assert_uint_eq(outputs(r.actions), 0x12);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);

    resubmit_chain(FDP_PIPELINE_MAX_DEPTH, &r, &g);
    ck_assert(r.limit_dropped);
    ck_assert(!r.table_missed);
    ck_assert_uint_eq(fdp_actions_count(r.actions), 0);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);
}
END_TEST

/* Table 0's flow resubmits to table 1 'n0' times; table 1's flow resubmits
 * to table 2 'n1' times; table 2 outputs.  n0 * (1 + n1) resubmits, never
 * deeper than 2. */
static void
resubmit_fan(unsigned int n0, unsigned int n1, struct fdp_pipeline_result *r,
             struct prog *g)
{
    struct flow_b *fb;

    prog_init(g);
    fb = fb_new();
    for (unsigned int i = 0; i < n0; i++) {
        fdp__actions_add_resubmit(&fb->b, FDP_PORT_IN_PORT, 1);
    }
    fb_add(g, fb, 0, 1, 0x1);
    fb = fb_new();
    for (unsigned int i = 0; i < n1; i++) {
        fdp__actions_add_resubmit(&fb->b, FDP_PORT_IN_PORT, 2);
    }
    fb_add(g, fb, 1, 1, 0x2);
    fb = fb_new();
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 1);
    fb_add(g, fb, 2, 1, 0x3);

    struct fdp_key key;
    uint64_t c[1];
    tcp_key(&key, 15, 1, 2, 3, 4);
    fdp_pipeline_result_init(r);
    run_packet(g, &key, r, c, 1, "fan");
}

START_TEST(resubmit_total_limit)
{
    struct fdp_pipeline_result r;
    struct prog g;

    /* 64 * (1 + 63) = 4096: at the limit. */
    resubmit_fan(64, 63, &r, &g);
    ck_assert(!r.limit_dropped);
    ck_assert_uint_eq(r.n_steps, 1 + FDP_PIPELINE_MAX_RESUBMITS);
    ck_assert_uint_eq(fdp_actions_count(r.actions), 64 * 63);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);

    resubmit_fan(65, 62, &r, &g);      /* 65 * 63 = 4095 */
    ck_assert(!r.limit_dropped);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);

    resubmit_fan(65, 63, &r, &g);      /* 65 * 64 = 4160: past it. */
    ck_assert(r.limit_dropped);
    ck_assert_uint_eq(fdp_actions_count(r.actions), 0);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);

    resubmit_fan(100, 50, &r, &g);     /* 5100 */
    ck_assert(r.limit_dropped);
    ck_assert_uint_eq(fdp_actions_count(r.actions), 0);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);
}
END_TEST

/* No flow in table 0 matches: a miss, table_missed, nothing output.  A
 * goto_table to a table where no flow matches: what the flow before it
 * output stays output, and the pipeline ends there; a table-miss flow
 * then catches those packets. */
START_TEST(table_misses)
{
    struct fdp_pipeline_result r;
    struct prog g;
    struct flow_b *fb;
    uint64_t c[4];
    struct fdp_key key;

    prog_init(&g);
    fb = fb_new();
    fb_tcp(fb);
    fb_exact(fb, FDP_F_TP_DST, 80);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 1);
    fdp__actions_add(&fb->b, FDP_ACT_GOTO_TABLE, 3);
    fb_add(&g, fb, 0, 1, 0x1);
    fb = fb_new();
    fb_tcp(fb);
    fb_exact(fb, FDP_F_TP_SRC, 9);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 2);
    fb_add(&g, fb, 3, 1, 0x3);

    fdp_pipeline_result_init(&r);
    tcp_key(&key, 15, 1, 2, 3, 4);
    ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "table-0 miss"), 1);
    ck_assert_uint_eq(c[0], 0);
    ck_assert(r.table_missed);
    ck_assert_uint_eq(r.steps[0].table_id, 0);
    ck_assert_uint_eq(fdp_actions_count(r.actions), 0);

    tcp_key(&key, 15, 1, 2, 3, 80);
    ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "goto miss"), 2);
    ck_assert_uint_eq(c[0], 0x1);
    ck_assert_uint_eq(c[1], 0);
    ck_assert_uint_eq(r.steps[1].table_id, 3);
    ck_assert_uint_eq(r.steps[1].kind, FDP_STEP_GOTO);
    ck_assert(r.table_missed);
    ck_assert_uint_eq(outputs(r.actions), 1);

    tcp_key(&key, 15, 1, 2, 9, 80);
    ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "goto hit"), 2);
    ck_assert_uint_eq(c[1], 0x3);
    ck_assert(!r.table_missed);
    ck_assert_uint_eq(outputs(r.actions), 0x12);

    /* A table-miss flow in table 3 catches what missed. */
    fb = fb_new();
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 7);
    fb_add(&g, fb, 3, 0, 0x30);
    tcp_key(&key, 15, 1, 2, 3, 80);
    ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "table-miss flow"), 2);
    ck_assert_uint_eq(c[1], 0x30);
    ck_assert(!r.table_missed);
    ck_assert_uint_eq(outputs(r.actions), 0x17);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);
}
END_TEST

/* Table 0: output:1, resubmit(,1), output:3.  Table 1: output:2,
 * goto_table:2.  Table 2 has a flow for tp_dst=99 only.  For another
 * packet the goto misses inside the resubmit: that ends what the resubmit
 * runs, not the pipeline (as in Open vSwitch, and lib/pipeline.c; the
 * header's "ends the pipeline" is about the top level), so table 0's
 * output:3 still runs and the packet is not table_missed. */
START_TEST(goto_miss_inside_resubmit)
{
    struct fdp_pipeline_result r;
    struct prog g;
    struct flow_b *fb;
    uint64_t c[4];
    struct fdp_key key;

    prog_init(&g);
    fb = fb_new();
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 1);
    fdp__actions_add_resubmit(&fb->b, FDP_PORT_IN_PORT, 1);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 3);
    fb_add(&g, fb, 0, 1, 0x1);
    fb = fb_new();
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 2);
    fdp__actions_add(&fb->b, FDP_ACT_GOTO_TABLE, 2);
    fb_add(&g, fb, 1, 1, 0x2);
    fb = fb_new();
    fb_tcp(fb);
    fb_exact(fb, FDP_F_TP_DST, 99);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 9);
    fb_add(&g, fb, 2, 1, 0x3);

    fdp_pipeline_result_init(&r);
    tcp_key(&key, 15, 1, 2, 3, 4);
    ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "nested goto miss"), 3);
    ck_assert_uint_eq(c[2], 0);
    ck_assert_uint_eq(r.steps[2].kind, FDP_STEP_GOTO);
    ck_assert_uint_eq(r.steps[2].depth, 1);
    ck_assert_uint_eq(outputs(r.actions), 0x123);
    ck_assert(!r.table_missed);

    tcp_key(&key, 15, 1, 2, 3, 99);
    ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "nested goto hit"), 3);
    ck_assert_uint_eq(c[2], 0x3);
    ck_assert_uint_eq(outputs(r.actions), 0x1293);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);
}
END_TEST

/* Registers and metadata loaded in one table are matched by the next;
 * move copies tp_dst's low 8 bits into reg3 and in_port into metadata's
 * bits 16..31, and a later table matches those. */
/* A resubmit(2,1) makes in_port 2 for what table 1 does, outputs
 * included, as in Open vSwitch: output:2 is skipped there, output:1 (the
 * packet's own port) goes out as in_port, and the in_port action sends to
 * 2; back in table 0, in_port is the packet's again. */
START_TEST(resubmit_port_is_in_port_for_outputs)
{
    struct prog g;
    struct flow_b *fb;
    struct fdp_pipeline_result r;
    struct fdp_key key;
    uint64_t c[4];

    prog_init(&g);
    fb = fb_new();
    fdp__actions_add_resubmit(&fb->b, 2, 1);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 2);
    fb_add(&g, fb, 0, 1, 0x1);
    fb = fb_new();
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 2);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 1);
    fdp__actions_add(&fb->b, FDP_ACT_IN_PORT, 0);
    fb_add(&g, fb, 1, 1, 0x2);

    fdp_pipeline_result_init(&r);
    tcp_key(&key, 1, 1, 2, 3, 4);
    ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "resubmit port"), 2);
    ck_assert_uint_eq(fdp_actions_count(r.actions), 3);
    static const uint8_t types[3] = {
        FDP_ACT_IN_PORT, FDP_ACT_OUTPUT, FDP_ACT_OUTPUT,
    };
    size_t i = 0;
    for (const struct fdp__action *a = fdp__actions_first(r.actions);
         a && i < 3; a = fdp__actions_next(r.actions, a), i++) {
        ck_assert_uint_eq(a->type, types[i]);
        if (a->type == FDP_ACT_OUTPUT) {
            ck_assert_uint_eq(a->arg, 2);
        }
    }
    ck_assert_uint_eq(i, 3);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);
}
END_TEST

/* dec_ttl on a TTL of 1 kills the packet there: the goto after it is not
 * taken, and no later flow counts it; a TTL of 5 goes on, decremented. */
START_TEST(dec_ttl_expiry_ends_the_pipeline)
{
    struct prog g;
    struct flow_b *fb;
    struct fdp_pipeline_result r;
    struct fdp_key key;
    uint64_t c[4];

    prog_init(&g);
    fb = fb_new();
    fb_tcp(fb);
    fdp__actions_add(&fb->b, FDP_ACT_DEC_TTL, 0);
    fdp__actions_add(&fb->b, FDP_ACT_GOTO_TABLE, 1);
    fb_add(&g, fb, 0, 1, 0x1);
    fb = fb_new();
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 3);
    fb_add(&g, fb, 1, 1, 0x2);

    fdp_pipeline_result_init(&r);
    tcp_key(&key, 9, 1, 2, 3, 4);
    fdp__key_set(&key, FDP_F_NW_TTL, 1);
    ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "ttl 1"), 1);
    ck_assert_uint_eq(fdp_actions_count(r.actions), 1);
    ck_assert(!r.table_missed && !r.limit_dropped);
    fdp__key_set(&key, FDP_F_NW_TTL, 5);
    ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "ttl 5"), 2);
    ck_assert_uint_eq(outputs(r.actions), 3);
    ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_NW_TTL), 4);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);
}
END_TEST

START_TEST(registers_and_move)
{
    struct fdp_pipeline_result r;
    struct prog g;
    struct flow_b *fb;
    uint64_t c[4];
    struct fdp_key key;

    prog_init(&g);
    fb = fb_new();
    fb_tcp(fb);
    fdp__actions_add_set_masked(&fb->b, FDP_F_REG2, 0x50, 0xf0, 0);
    fdp__actions_add_move(&fb->b, FDP_F_TP_DST, 0, FDP_F_REG3, 0, 8);
    fdp__actions_add_move(&fb->b, FDP_F_IN_PORT, 0, FDP_F_METADATA, 16, 16);
    fdp__actions_add(&fb->b, FDP_ACT_GOTO_TABLE, 1);
    fb_add(&g, fb, 0, 1, 0x1);
    for (unsigned int v = 0; v < 4; v++) {
        fb = fb_new();
        fb_exact(fb, FDP_F_REG3, 0x50 + v);
        fb_exact(fb, FDP_F_REG2, 0x50);
        ck_assert_int_eq(fdp__match_set_masked(&fb->m, FDP_F_METADATA,
                                               (uint64_t) 3 << 16,
                                               0xffff0000), 0);
        fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 5 + v);
        fb_add(&g, fb, 1, 1, 0x10 + v);
    }
    fb = fb_new();
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 9);
    fb_add(&g, fb, 1, 0, 0x1f);

    fdp_pipeline_result_init(&r);
    for (unsigned int v = 0; v < 6; v++) {
        for (uint32_t port = 2; port <= 3; port++) {
            tcp_key(&key, port, 1, 2, 3, (uint16_t) (0x1250 + v));
            ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "move"), 2);
            bool hit = v < 4 && port == 3;
            ck_assert_uint_eq(c[1], hit ? 0x10 + v : 0x1f);
            ck_assert_uint_eq(outputs(r.actions), hit ? 5 + v : 9);
            ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_REG3), 0x50 + v);
            ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_METADATA),
                              (uint64_t) port << 16);
            /* The packet's own fields are untouched. */
            ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_TP_DST),
                              0x1250 + v);
        }
    }
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);
}
END_TEST

/* set_field on a header is a packet action and changes what the next
 * table sees; resubmit(2,1) looks table 1 up as if from port 2. */
START_TEST(header_rewrite_and_resubmit_port)
{
    struct fdp_pipeline_result r;
    struct prog g;
    struct flow_b *fb;
    uint64_t c[4];
    struct fdp_key key;

    prog_init(&g);
    fb = fb_new();
    fb_tcp(fb);
    fdp__actions_add_set_field(&fb->b, FDP_F_TP_DST, 443, 0);
    fdp__actions_add_resubmit(&fb->b, 2, 1);
    fdp__actions_add(&fb->b, FDP_ACT_GOTO_TABLE, 2);
    fb_add(&g, fb, 0, 1, 0x1);
    fb = fb_new();
    fb_exact(fb, FDP_F_IN_PORT, 2);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 5);
    fb_add(&g, fb, 1, 1, 0x2);
    fb = fb_new();
    fb_tcp(fb);
    fb_exact(fb, FDP_F_TP_DST, 443);
    fb_exact(fb, FDP_F_IN_PORT, 1);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 6);
    fb_add(&g, fb, 2, 1, 0x3);

    fdp_pipeline_result_init(&r);
    tcp_key(&key, 1, 1, 2, 3, 80);
    ck_assert_uint_eq(run_packet(&g, &key, &r, c, 4, "rewrite"), 3);
    ck_assert_uint_eq(c[1], 0x2);
    ck_assert_uint_eq(c[2], 0x3);
    ck_assert_uint_eq(outputs(r.actions), 0x56);
    ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_TP_DST), 443);
    ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_IN_PORT), 1);
    ck_assert_uint_eq(fdp_actions_count(r.actions), 3);
    fdp_pipeline_result_destroy(&r);
    prog_destroy(&g);
}
END_TEST


/* ---------------------------------------------------------------------- */
/* A datapath running a pipeline.                                          */

#define N_DSTS 64

/* A UDP/IPv4 packet to 10.0.0.'dst' from 10.0.0.1 port 'sport' (50 bytes
 * on the wire). */
static size_t
make_packet(uint8_t *p, unsigned int dst, uint16_t sport)
{
    static const uint8_t head[] = {
        0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00,      /* Ethernet */
        0x45, 0, 0, 36, 0, 0, 0, 0, 64, 17, 0, 0,            /* IPv4 */
        10, 0, 0, 1, 10, 0, 0, 0,
        0, 0, 0, 53, 0, 16, 0, 0,                            /* UDP */
    };
    memcpy(p, head, sizeof head);
    p[33] = (uint8_t) dst;
    p[34] = (uint8_t) (sport >> 8);
    p[35] = (uint8_t) sport;
    memset(p + sizeof head, 0xab, 8);
    return sizeof head + 8;
}

#define PACKET_LEN 50


static void
count_dst(void *aux, const uint8_t *p, uint32_t len)
{
    uint64_t *per_dst = aux;

    (void) len;
    per_dst[p[33] % N_DSTS]++;
}

/* Takes every packet from the tx ring, gives the frames back, and counts
 * them per destination 10.0.0.X in 'per_dst'. */
static void
peer_drain(const struct fdp_port_rings *r, uint64_t *per_dst)
{
    test_peer_drain(r, count_dst, per_dst);
}

/* The program the datapath runs, in four tables:
 *   table 0  ip: move nw_dst[0..7] -> reg0[0..7], goto_table:1;
 *            anything else: no flow (a table-0 miss).
 *   table 1  reg0 even: load reg1=2; odd: load reg1=3; then goto_table:2
 *            (both at priority 10).  Above them (priority 20), a
 *            conjunction: reg0 in {5, 15, 25} and tp_src in {0, 1} leads
 *            to conj_id=1, which loads reg1=2, resubmits to table 3 and
 *            goes to table 2.
 *   table 2  reg1=2: output:2; reg1=3: output:3 (priority 10); reg0=9
 *            (priority 30) drops; reg0=13 (priority 30) goes to table 4,
 *            which has no flow for it (a goto miss).
 *   table 3  output:3 (the conjunction's resubmit).
 *   table 4  reg0=14 only: output:2 (never reached: only reg0=13 goes
 *            there).
 * The table-0 misses are the non-IP frames the test sends as destination
 * 62 (dl_type changed). */
struct pipe_rig {
    struct fdp_pipeline *p;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings ports[4];
};

static void
pipe_flow(struct fdp_pipeline *p, uint8_t table, uint16_t priority,
          uint64_t cookie, struct flow_b *fb)
{
    struct fdp_actions *acts = fdp__actions_finish(&fb->b);
    struct fdp_flow_spec spec = {
        .match = &fb->m, .actions = acts, .cookie = cookie,
        .priority = priority, .table_id = table,
    };
    ck_assert_ptr_nonnull(acts);
    ck_assert_int_eq(fdp_pipeline_insert(p, &spec, FDP_TABLE_NO_REPLACE), 0);
    fdp_actions_destroy(acts);
    fdp__actions_builder_destroy(&fb->b);
    free(fb);
}

static void
load(struct flow_b *fb, enum fdp_field f, uint64_t v)
{
    ck_assert_int_eq(fdp__actions_add_set_masked(
                         &fb->b, f, v, (uint64_t) fdp__field(f)->max,
                         FDP__ACT_LOAD), 0);
}

static void
pipe_program(struct fdp_pipeline *p)
{
    struct flow_b *fb;

    ck_assert_int_eq(fdp_pipeline_begin(p), 0);
    fb = fb_new();
    fb_ip(fb);
    ck_assert_int_eq(fdp__actions_add_move(&fb->b, FDP_F_NW_DST, 0,
                                           FDP_F_REG0, 0, 8), 0);
    fdp__actions_add(&fb->b, FDP_ACT_GOTO_TABLE, 1);
    pipe_flow(p, 0, 10, 0x01, fb);

    for (unsigned int odd = 0; odd < 2; odd++) {
        fb = fb_new();
        fdp__match_set_masked(&fb->m, FDP_F_REG0, odd, 1);
        load(fb, FDP_F_REG1, odd ? 3 : 2);
        fdp__actions_add(&fb->b, FDP_ACT_GOTO_TABLE, 2);
        pipe_flow(p, 1, 10, 0x10 + odd, fb);
    }
    for (unsigned int i = 0; i < 3; i++) {
        fb = fb_new();
        fb_exact(fb, FDP_F_REG0, 5 + 10 * i);
        fdp__actions_add_conjunction(&fb->b, 1, 1, 2);
        pipe_flow(p, 1, 20, 0x20 + i, fb);
    }
    for (unsigned int i = 0; i < 2; i++) {
        fb = fb_new();
        fb_ip(fb);
        fdp__match_set_masked(&fb->m, FDP_F_NW_PROTO, FDP_IPPROTO_UDP, 0xff);
        fb_exact(fb, FDP_F_TP_SRC, i);
        fdp__actions_add_conjunction(&fb->b, 1, 2, 2);
        pipe_flow(p, 1, 20, 0x28 + i, fb);
    }
    fb = fb_new();
    fdp__match_set_masked(&fb->m, FDP_F_CONJ_ID, 1, 0xffffffffu);
    load(fb, FDP_F_REG1, 2);
    fdp__actions_add_resubmit(&fb->b, FDP_PORT_IN_PORT, 3);
    fdp__actions_add(&fb->b, FDP_ACT_GOTO_TABLE, 2);
    pipe_flow(p, 1, 20, 0x2c, fb);

    for (unsigned int port = 2; port <= 3; port++) {
        fb = fb_new();
        fb_exact(fb, FDP_F_REG1, port);
        fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, port);
        pipe_flow(p, 2, 10, 0x30 + port, fb);
    }
    fb = fb_new();
    fb_exact(fb, FDP_F_REG0, 9);
    pipe_flow(p, 2, 30, 0x39, fb);
    fb = fb_new();
    fb_exact(fb, FDP_F_REG0, 13);
    fdp__actions_add(&fb->b, FDP_ACT_GOTO_TABLE, 4);
    pipe_flow(p, 2, 30, 0x3d, fb);

    fb = fb_new();
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 3);
    pipe_flow(p, 3, 10, 0x40, fb);
    fb = fb_new();
    fb_exact(fb, FDP_F_REG0, 14);
    fdp__actions_add(&fb->b, FDP_ACT_OUTPUT, 2);
    pipe_flow(p, 4, 10, 0x50, fb);
    ck_assert_int_eq(fdp_pipeline_commit(p), 0);
}

static void
pipe_rig_create(struct pipe_rig *rig, enum fdp_dp_cache_mode emc)
{
    struct fdp_dp_options o;

    memset(rig, 0, sizeof *rig);
    ck_assert_int_eq(fdp_pipeline_create(&rig->p), 0);
    pipe_program(rig->p);
    fdp_dp_options_init(&o);
    o.emc_mode = emc;
    o.emc_insert_inv_prob = emc == FDP_DP_CACHE_OFF ? 0 : 1;
    o.smc_mode = FDP_DP_CACHE_OFF;
    ck_assert_int_eq(fdp_dp_create_pipeline(rig->p, &o, &rig->dp), 0);
    for (uint32_t port = 1; port <= 3; port++) {
        ck_assert_int_eq(fdp_dp_port_add(rig->dp, port, "ring:size=256",
                                         NULL), 0);
        ck_assert_int_eq(fdp_dp_port_rings(rig->dp, port,
                                           &rig->ports[port]), 0);
    }
    ck_assert_int_eq(fdp_dp_pmd_create(rig->dp, 0, &rig->pmd), 0);
}

static void
pipe_rig_destroy(struct pipe_rig *rig)
{
    fdp_dp_pmd_destroy(rig->pmd);
    fdp_dp_destroy(rig->dp);
    fdp_pipeline_destroy(rig->p);
}

/* What the pipeline itself says one packet does: its outputs to ports 2
 * and 3, and the flows (by cookie, < 0x100) and tables it touched. */
struct expect {
    uint64_t to[4][N_DSTS];         /* [port][dst] */
    uint64_t flow_packets[0x100];   /* By cookie. */
    uint64_t table_misses[FDP_PIPELINE_N_TABLES];
    uint64_t dropped;               /* Output nowhere. */
};

static void
expect_packet(struct fdp_pipeline *p, const uint8_t *pkt, size_t len,
              unsigned int dst, struct expect *e)
{
    struct fdp_pipeline_result r;
    struct fdp_key key;
    bool out = false;

    fdp_packet_extract(pkt, len, 1, &key, NULL);
    fdp_pipeline_result_init(&r);
    fdp_table_read_lock();
    ck_assert_int_eq(fdp_pipeline_classify(p, &key, 0, &r, NULL, NULL), 0);
    for (size_t i = 0; i < r.n_steps; i++) {
        if (r.steps[i].rule) {
            uint64_t c = fdp_rule_get_cookie(r.steps[i].rule);
            ck_assert_uint_lt(c, 0x100);
            e->flow_packets[c]++;
        } else {
            e->table_misses[r.steps[i].table_id]++;
        }
    }
    if (!r.limit_dropped) {
        for (const struct fdp__action *a = fdp__actions_first(r.actions); a;
             a = fdp__actions_next(r.actions, a)) {
            if (a->type == FDP_ACT_OUTPUT) {
                ck_assert_uint_lt(a->arg, 4);
                e->to[a->arg][dst]++;
                out = true;
            }
        }
    }
    e->dropped += !out;
    fdp_table_read_unlock();
    fdp_pipeline_result_destroy(&r);
}

static bool
count_flow(const struct fdp_rule *rule, void *e_)
{
    const struct expect *e = e_;
    struct fdp_rule_stats rs;
    uint64_t c = fdp_rule_get_cookie(rule);

    fdp_rule_get_stats(rule, &rs);
    ck_assert_msg(rs.n_packets == e->flow_packets[c],
                  "flow 0x%" PRIx64 ": %" PRIu64 " packets, expected %" PRIu64
                  " (seed %" PRIu64 ")", c, rs.n_packets, e->flow_packets[c],
                  unit_seed());
    ck_assert_uint_eq(rs.n_bytes, e->flow_packets[c] * PACKET_LEN);
    return true;
}

/* Sends 'n' random packets (destinations 0..N_DSTS-1, source ports 0..3;
 * destination 62 as a non-IP frame) through the rig, adding what the
 * pipeline says each does to 'e' and what the ports got to 'got'. */
static void
pipe_traffic(struct pipe_rig *rig, struct unit_rng *rng, size_t n,
             struct expect *e, uint64_t got[4][N_DSTS])
{
    uint8_t pkt[128];
    size_t sent = 0;

    while (sent < n) {
        size_t burst = 1 + unit_rng_below(rng, 40);
        for (size_t i = 0; i < burst && sent < n; i++) {
            unsigned int d = unit_rng_below(rng, N_DSTS);
            size_t len = make_packet(pkt, d, (uint16_t) unit_rng_below(rng,
                                                                       4));
            if (d == 62) {
                pkt[12] = 0x88;     /* dl_type 0x8800: not IP. */
            }
            if (!test_peer_send(&rig->ports[1], pkt, len)) {
                break;
            }
            expect_packet(rig->p, pkt, len, d, e);
            sent++;
        }
        fdp_dp_pmd_poll(rig->pmd, NULL);
        peer_drain(&rig->ports[2], got[2]);
        peer_drain(&rig->ports[3], got[3]);
    }
    for (int i = 0; i < 3; i++) {
        fdp_dp_pmd_poll(rig->pmd, NULL);
        peer_drain(&rig->ports[2], got[2]);
        peer_drain(&rig->ports[3], got[3]);
    }
}

static void
check_traffic(struct pipe_rig *rig, const struct expect *e,
              uint64_t got[4][N_DSTS], uint64_t total)
{
    for (unsigned int port = 2; port <= 3; port++) {
        for (unsigned int d = 0; d < N_DSTS; d++) {
            ck_assert_msg(got[port][d] == e->to[port][d],
                          "port %u dst %u: got %" PRIu64 ", the pipeline "
                          "says %" PRIu64 " (seed %" PRIu64 ")", port, d,
                          got[port][d], e->to[port][d], unit_seed());
        }
    }
    fdp_table_read_lock();
    fdp_pipeline_for_each(rig->p, FDP_TABLE_ALL, count_flow, (void *) e);
    fdp_table_read_unlock();
    for (unsigned int t = 0; t <= 4; t++) {
        struct fdp_pipeline_table_stats ts;
        ck_assert(fdp_pipeline_get_table_stats(rig->p, (uint8_t) t, &ts));
        ck_assert_msg(ts.n_missed == e->table_misses[t],
                      "table %u: %" PRIu64 " misses, expected %" PRIu64, t,
                      ts.n_missed, e->table_misses[t]);
    }
    struct fdp_port_stats ps;
    ck_assert_int_eq(fdp_dp_port_get_stats(rig->dp, 1, &ps, NULL), 0);
    ck_assert_uint_eq(ps.rx_packets, total);
    ck_assert_uint_eq(ps.rx_dropped, e->dropped);
}

/* The datapath forwards as the pipeline says, with the EMC on (every
 * result cached) and off, and the two deliver the same packets to the
 * same ports; every flow hit along the way (conjunction clauses never
 * are) counts exactly its packets, and the tables their misses.  Then a
 * flow of table 2 changes: the cached outcomes must go with it. */
START_TEST(datapath_runs_the_pipeline)
{
    static const enum fdp_dp_cache_mode modes[] = {
        FDP_DP_CACHE_ON, FDP_DP_CACHE_OFF,
    };
    uint64_t got[2][4][N_DSTS];
    struct expect *e[2];

    memset(got, 0, sizeof got);
    for (size_t m = 0; m < FDP_ARRAY_SIZE(modes); m++) {
        struct pipe_rig rig;
        struct unit_rng rng;
        const size_t n = 3000;

        e[m] = calloc(1, sizeof *e[m]);
        ck_assert_ptr_nonnull(e[m]);
        unit_rng_init(&rng, 77);    /* The same packets in both modes. */
        pipe_rig_create(&rig, modes[m]);
        pipe_traffic(&rig, &rng, n, e[m], got[m]);
        check_traffic(&rig, e[m], got[m], n);

        struct fdp_dp_stats st;
        fdp_dp_get_stats(rig.dp, &st);
        ck_assert_uint_eq(st.n_packets, n);
        if (modes[m] == FDP_DP_CACHE_ON) {
            ck_assert_uint_gt(st.n_emc_hits, n / 2);
        } else {
            ck_assert_uint_eq(st.n_emc_hits, 0);
        }
        /* The program reaches what it is meant to: the conjunction's
         * flow and its resubmit, both misses, the drop. */
        ck_assert_uint_gt(e[m]->flow_packets[0x2c], 0);
        ck_assert_uint_gt(e[m]->flow_packets[0x40], 0);
        ck_assert_uint_gt(e[m]->table_misses[0], 0);
        ck_assert_uint_gt(e[m]->table_misses[4], 0);
        ck_assert_uint_gt(e[m]->flow_packets[0x39], 0);
        ck_assert_uint_eq(e[m]->flow_packets[0x20], 0);   /* A clause. */

        /* table 2's reg1=2 flow now outputs to port 3: the version grows,
         * and every packet that went to port 2 through it goes to 3. */
        struct fdp_match *match = fdp_match_create();
        struct fdp_value v = { 0, 2 }, mask = { 0, 0xffffffffu };
        ck_assert_int_eq(fdp_match_set_masked(match, FDP_F_REG1, v, mask), 0);
        struct fdp_table_filter filter = {
            .match = match, .strict = true, .priority = 10,
        };
        struct fdp__actions_builder b;
        fdp__actions_builder_init(&b);
        fdp__actions_add(&b, FDP_ACT_OUTPUT, 3);
        struct fdp_actions *acts = fdp__actions_finish(&b);
        uint64_t version = fdp_pipeline_version(rig.p);
        size_t n_changed;
        ck_assert_int_eq(fdp_pipeline_modify(rig.p, 2, &filter, acts, NULL,
                                             &n_changed), 0);
        ck_assert_uint_eq(n_changed, 1);
        ck_assert_uint_gt(fdp_pipeline_version(rig.p), version);
        fdp_actions_destroy(acts);
        fdp__actions_builder_destroy(&b);
        fdp_match_destroy(match);

        uint64_t after[4][N_DSTS];
        struct expect *e2 = calloc(1, sizeof *e2);
        ck_assert_ptr_nonnull(e2);
        memset(after, 0, sizeof after);
        /* The same packets as before, so every cached key is met. */
        unit_rng_init(&rng, 77);
        pipe_traffic(&rig, &rng, n, e2, after);
        for (unsigned int d = 0; d < N_DSTS; d++) {
            ck_assert_msg(after[2][d] == e2->to[2][d]
                          && after[3][d] == e2->to[3][d],
                          "after the change, dst %u: ports 2/3 got %" PRIu64
                          "/%" PRIu64 ", the pipeline says %" PRIu64 "/%"
                          PRIu64, d, after[2][d], after[3][d], e2->to[2][d],
                          e2->to[3][d]);
            /* Nothing goes to port 2 any more (table 4's flow is never
             * reached: reg0=14 does not take table 2's goto). */
            ck_assert_uint_eq(after[2][d], 0);
            ck_assert_uint_eq(after[3][d], got[m][2][d] + got[m][3][d]);
        }
        free(e2);
        pipe_rig_destroy(&rig);
    }
    /* The cache changed nothing but the speed. */
    ck_assert_int_eq(memcmp(got[0], got[1], sizeof got[0]), 0);
    ck_assert_int_eq(memcmp(e[0], e[1], sizeof *e[0]), 0);
    free(e[0]);
    free(e[1]);
}
END_TEST


/* A TCP/IPv4 frame with the addresses and ports of 'key', TTL 64, and
 * 'tag' as its IP identification (which no flow sees); 54 bytes. */
static size_t
make_tcp_frame(uint8_t *p, const struct fdp_key *key, uint16_t tag)
{
    static const uint8_t head[] = {
        0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00,      /* Ethernet */
        0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0,             /* IPv4 */
        0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0, 0, 1,   /* TCP */
        0, 0, 0, 0,
    };
    uint32_t src = (uint32_t) fdp__key_get(key, FDP_F_NW_SRC);
    uint32_t dst = (uint32_t) fdp__key_get(key, FDP_F_NW_DST);
    uint16_t sport = (uint16_t) fdp__key_get(key, FDP_F_TP_SRC);
    uint16_t dport = (uint16_t) fdp__key_get(key, FDP_F_TP_DST);

    memcpy(p, head, sizeof head);
    p[18] = (uint8_t) (tag >> 8);
    p[19] = (uint8_t) tag;
    for (int i = 0; i < 4; i++) {
        p[26 + i] = (uint8_t) (src >> (24 - 8 * i));
        p[30 + i] = (uint8_t) (dst >> (24 - 8 * i));
    }
    p[34] = (uint8_t) (sport >> 8);
    p[35] = (uint8_t) sport;
    p[36] = (uint8_t) (dport >> 8);
    p[37] = (uint8_t) dport;
    return sizeof head;
}

#define DP_PACKETS 400
#define MAX_COPIES 256          /* Half a tx ring (512). */

static void
count_tag(void *aux, const uint8_t *p, uint32_t len)
{
    uint32_t *per_tag = aux;
    unsigned int tag = (unsigned int) p[18] << 8 | p[19];

    (void) len;
    ck_assert_uint_lt(tag, DP_PACKETS);
    per_tag[tag]++;
}

/* Takes every packet from the tx ring and counts it by tag. */
static void
peer_drain_tags(const struct fdp_port_rings *r, uint32_t *per_tag)
{
    test_peer_drain(r, count_tag, per_tag);
}

/* Copies per port of each packet, and the packets of each flow of a
 * random program by table and index (cookies are table << 32 |
 * (index + 1)). */
struct dp_expect {
    uint32_t out[4][DP_PACKETS];
    uint64_t hits[FDP_PIPELINE_N_TABLES][48];
};

static bool
check_flow_hits(const struct fdp_rule *rule, void *e_)
{
    const struct dp_expect *e = e_;
    uint64_t c = fdp_rule_get_cookie(rule);
    struct fdp_rule_stats rs;

    ck_assert_uint_lt(c >> 32, FDP_PIPELINE_N_TABLES);
    ck_assert_uint_lt((c & 0xffffffff) - 1, 48);
    fdp_rule_get_stats(rule, &rs);
    uint64_t want = e->hits[c >> 32][(c & 0xffffffff) - 1];
    ck_assert_msg(rs.n_packets == want, "flow 0x%" PRIx64 ": %" PRIu64
                  " packets, the pipeline says %" PRIu64 " (seed %" PRIu64
                  ")", c, rs.n_packets, want, unit_seed());
    ck_assert_uint_eq(rs.n_bytes, want * 54);
    return true;
}

/* Random programs through a datapath, with the EMC on and off: every
 * packet reaches exactly the ports its classification's composed actions
 * name, as often as they name them, and every flow hit along the way
 * counts exactly its packets. */
START_TEST(datapath_random_programs)
{
    static const enum fdp_dp_cache_mode modes[] = {
        FDP_DP_CACHE_ON, FDP_DP_CACHE_OFF,
    };
    struct unit_rng rng;

    uint64_t n_copies = 0, n_emc_hits = 0;

    unit_rng_init(&rng, 1600);
    max_out_port = 3;
    for (int prog_no = 0; prog_no < 12; prog_no++) {
        struct prog g;
        struct fdp_key keys[DP_PACKETS];
        unsigned int copies[DP_PACKETS];
        uint8_t frames[DP_PACKETS][64];
        size_t lens[DP_PACKETS];

        /* Flow counters add up over both modes' runs. */
        struct dp_expect *counts = calloc(1, sizeof *counts);
        ck_assert_ptr_nonnull(counts);
        random_program(&rng, &g);
        for (unsigned int i = 0; i < DP_PACKETS; i++) {
            /* Repeats, so that the EMC serves some. */
            unsigned int j = i < DP_PACKETS / 4 ? i
                             : unit_rng_below(&rng, DP_PACKETS / 4);
            struct fdp_key k;
            if (j == i) {
                random_packet(&rng, &g, &k);
            } else {
                k = keys[j];
            }
            lens[i] = make_tcp_frame(frames[i], &k, (uint16_t) i);
            fdp_packet_extract(frames[i], lens[i], 1, &keys[i], NULL);
        }
        for (size_t m = 0; m < FDP_ARRAY_SIZE(modes); m++) {
            struct dp_expect *want = calloc(1, sizeof *want);
            struct dp_expect *got = calloc(1, sizeof *got);
            struct fdp_pipeline_result r;
            struct fdp_dp_options o;
            struct fdp_port_rings ports[4];
            struct fdp_dp *dp;
            struct fdp_dp_pmd *pmd;

            ck_assert_ptr_nonnull(want);
            ck_assert_ptr_nonnull(got);
            fdp_dp_options_init(&o);
            o.emc_mode = modes[m];
            o.emc_insert_inv_prob = modes[m] == FDP_DP_CACHE_ON ? 1 : 0;
            o.smc_mode = FDP_DP_CACHE_OFF;
            ck_assert_int_eq(fdp_dp_create_pipeline(g.p, &o, &dp), 0);
            for (uint32_t port = 1; port <= 3; port++) {
                ck_assert_int_eq(fdp_dp_port_add(dp, port, "ring:size=512",
                                                 NULL), 0);
                ck_assert_int_eq(fdp_dp_port_rings(dp, port, &ports[port]),
                                 0);
            }
            ck_assert_int_eq(fdp_dp_pmd_create(dp, 0, &pmd), 0);

            /* What the pipeline says (checked against the reference by
             * the differential test). */
            fdp_pipeline_result_init(&r);
            fdp_table_read_lock();
            for (unsigned int i = 0; i < DP_PACKETS; i++) {
                ck_assert_int_eq(fdp_pipeline_classify(g.p, &keys[i], 0, &r,
                                                       NULL, NULL), 0);
                copies[i] = 0;
                for (const struct fdp__action *a = fdp__actions_first(
                         r.actions); a; a = fdp__actions_next(r.actions, a)) {
                    copies[i] += a->type == FDP_ACT_OUTPUT;
                }
                if (copies[i] > MAX_COPIES) {
                    continue;   /* Not sent: see below. */
                }
                for (size_t k = 0; k < r.n_steps; k++) {
                    if (r.steps[k].rule) {
                        uint64_t c = fdp_rule_get_cookie(r.steps[k].rule);
                        counts->hits[c >> 32][(c & 0xffffffff) - 1]++;
                    }
                }
                for (const struct fdp__action *a = fdp__actions_first(
                         r.actions); a; a = fdp__actions_next(r.actions, a)) {
                    /* OpenFlow: output to the packet's own port (1)
                     * sends nothing (the in_port action does). */
                    if (a->type == FDP_ACT_OUTPUT && a->arg != 1) {
                        want->out[a->arg][i]++;
                    }
                }
            }
            fdp_table_read_unlock();
            fdp_pipeline_result_destroy(&r);

            /* Bursts small enough that the copies they make fit the tx
             * rings (a ring that fills drops what does not fit, which is
             * right but not what this test counts); a packet making more
             * copies than a ring holds is not sent at all. */
            for (unsigned int i = 0; i < DP_PACKETS; ) {
                unsigned int burst_copies = 0;
                for (unsigned int b = 0; b < 16 && i < DP_PACKETS
                     && burst_copies + copies[i] <= MAX_COPIES; b++, i++) {
                    burst_copies += copies[i];
                    ck_assert(test_peer_send(&ports[1], frames[i], lens[i]));
                }
                while (i < DP_PACKETS && copies[i] > MAX_COPIES) {
                    i++;
                }
                fdp_dp_pmd_poll(pmd, NULL);
                for (uint32_t port = 1; port <= 3; port++) {
                    peer_drain_tags(&ports[port], got->out[port]);
                }
            }
            for (int k = 0; k < 3; k++) {
                fdp_dp_pmd_poll(pmd, NULL);
                for (uint32_t port = 1; port <= 3; port++) {
                    peer_drain_tags(&ports[port], got->out[port]);
                }
            }
            for (uint32_t port = 1; port <= 3; port++) {
                for (unsigned int i = 0; i < DP_PACKETS; i++) {
                    if (got->out[port][i] != want->out[port][i]) {
                        fprintf(stderr, "program %d, packet %u, EMC %s: port "
                                "%u got %u copies, the pipeline says %u; "
                                "seed %" PRIu64 "; program:\n", prog_no, i,
                                modes[m] == FDP_DP_CACHE_ON ? "on" : "off",
                                port, got->out[port][i], want->out[port][i],
                                unit_seed());
                        prog_dump(&g);
                        print_key("packet", &keys[i]);
                    }
                    ck_assert_uint_eq(got->out[port][i], want->out[port][i]);
                    n_copies += got->out[port][i];
                }
            }
            struct fdp_dp_stats st;
            fdp_dp_get_stats(dp, &st);
            n_emc_hits += st.n_emc_hits;
            fdp_table_read_lock();
            fdp_pipeline_for_each(g.p, FDP_TABLE_ALL, check_flow_hits,
                                  counts);
            fdp_table_read_unlock();

            fdp_dp_pmd_destroy(pmd);
            fdp_dp_destroy(dp);
            free(got);
            free(want);
        }
        free(counts);
        prog_destroy(&g);
    }
    max_out_port = 8;
    /* The test forwarded packets, some through the EMC. */
    ck_assert_uint_gt(n_copies, 12 * DP_PACKETS / 4);
    ck_assert_uint_gt(n_emc_hits, 12 * DP_PACKETS / 4);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Batch lookups.                                                          */

/* Fails unless 'got', from a batch, is 'want', from one classification:
 * every step, the composed actions, the two ends and the final key. */
static void
check_same_result(const struct fdp_pipeline_result *got,
                  const struct fdp_pipeline_result *want, const char *what)
{
    ck_assert_msg(got->n_steps == want->n_steps, "%s: %zu steps, not %zu "
                  "(seed %" PRIu64 ")", what, got->n_steps, want->n_steps,
                  unit_seed());
    for (size_t k = 0; k < want->n_steps; k++) {
        const struct fdp_pipeline_step *a = &got->steps[k];
        const struct fdp_pipeline_step *b = &want->steps[k];
        ck_assert_msg(a->rule == b->rule && a->table_id == b->table_id
                      && a->kind == b->kind && a->depth == b->depth
                      && a->conj_id == b->conj_id,
                      "%s: step %zu differs: table %u conj %" PRIu32
                      ", not table %u conj %" PRIu32 " (seed %" PRIu64 ")",
                      what, k, a->table_id, a->conj_id, b->table_id,
                      b->conj_id, unit_seed());
    }
    ck_assert_msg(fdp_actions_equal(got->actions, want->actions),
                  "%s: actions differ (seed %" PRIu64 ")", what, unit_seed());
    ck_assert(got->limit_dropped == want->limit_dropped);
    ck_assert(got->table_missed == want->table_missed);
    ck_assert(!memcmp(&got->key, &want->key, sizeof got->key));
}

/* The datapath's two ways to classify a batch, fdp__pipeline_classify_batch()
 * and, for a pipeline served as a table, fdp__pipeline_single_lookup_batch(),
 * against fdp_pipeline_classify() one packet at a time, which check_packet()
 * holds to the reference: random programs, most of one table with
 * conjunctions (with ordinary flows, or only the table-miss flow or none,
 * where the conjunction index's shortcuts answer for H), random packets in
 * batches of random sizes up to FDP_TABLE_BATCH_MAX. */
START_TEST(batch_lookups_agree_with_classify)
{
    if (!use_cpu_level(_i, "batch_lookups_agree_with_classify")) {
        return;
    }
    struct fdp_pipeline_result *res = calloc(FDP_TABLE_BATCH_MAX,
                                             sizeof *res);
    struct fdp_key *keys = calloc(FDP_TABLE_BATCH_MAX, sizeof *keys);
    uint64_t n_single = 0, n_single_conj_hits = 0, n_batch_conj_hits = 0;
    struct fdp_pipeline_result one;
    struct unit_rng rng;
    char what[96];

    ck_assert_ptr_nonnull(res);
    ck_assert_ptr_nonnull(keys);
    unit_rng_init(&rng, 1700);
    fdp_pipeline_result_init(&one);
    for (size_t i = 0; i < FDP_TABLE_BATCH_MAX; i++) {
        fdp_pipeline_result_init(&res[i]);
    }
    for (int prog_no = 0; prog_no < 120; prog_no++) {
        struct prog g;
        one_table = prog_no % 4 != 0;
        random_program(&rng, &g);
        one_table = false;
        for (int round = 0; round < 6; round++) {
            const struct fdp_key *kp[FDP_TABLE_BATCH_MAX];
            struct fdp_pipeline_result *rp[FDP_TABLE_BATCH_MAX];
            const struct fdp_rule *rules[FDP_TABLE_BATCH_MAX];
            size_t n = 1 + unit_rng_below(&rng, FDP_TABLE_BATCH_MAX);
            for (size_t i = 0; i < n; i++) {
                random_packet(&rng, &g, &keys[i]);
                snprintf(what, sizeof what, "program %d, round %d, packet "
                         "%zu", prog_no, round, i);
                check_packet(&g, &keys[i], what);
                kp[i] = &keys[i];
                rp[i] = &res[i];
            }

            fdp_table_read_lock();
            const struct fdp__pipeline_view *view = fdp__pipeline_view(g.p);
            ck_assert_int_eq(fdp__pipeline_classify_batch(g.p, view, kp, n,
                                                          rp), 0);
            if (view->single) {
                n_single++;
                fdp__pipeline_single_lookup_batch(view, kp, n, rules);
            }
            for (size_t i = 0; i < n; i++) {
                snprintf(what, sizeof what, "program %d, round %d, packet "
                         "%zu of %zu", prog_no, round, i, n);
                ck_assert_int_eq(fdp__pipeline_classify_view(
                                     g.p, view, &keys[i], 0, &one, NULL,
                                     NULL), 0);
                check_same_result(&res[i], &one, what);
                n_batch_conj_hits += one.n_steps && one.steps[0].conj_id;
                if (view->single) {
                    /* One table, no goto_table or resubmit: one step. */
                    ck_assert_uint_eq(one.n_steps, 1);
                    ck_assert_msg(rules[i] == one.steps[0].rule,
                                  "%s: the one-table lookup found another "
                                  "flow (seed %" PRIu64 ")", what,
                                  unit_seed());
                    n_single_conj_hits += one.steps[0].conj_id != 0;
                }
            }
            fdp_table_read_unlock();
        }
        prog_destroy(&g);
    }
    printf("batch_lookups_agree_with_classify: %" PRIu64 " one-table "
           "batches, %" PRIu64 " conjunction hits in them, %" PRIu64
           " in all batches\n", n_single, n_single_conj_hits,
           n_batch_conj_hits);
    fflush(stdout);
    /* The programs reach the one-table lookup, and its conjunctions. */
    ck_assert_uint_gt(n_single, 100);
    ck_assert_uint_gt(n_single_conj_hits, 200);
    for (size_t i = 0; i < FDP_TABLE_BATCH_MAX; i++) {
        fdp_pipeline_result_destroy(&res[i]);
    }
    fdp_pipeline_result_destroy(&one);
    free(res);
    free(keys);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Atomic commits across tables.                                           */

/* A two-table program swapped whole in one transaction: A loads reg0=1 in
 * table 0 and outputs to port 1 from table 1's reg0=1 flow; B loads 2 and
 * outputs to port 2 from a reg0=2 flow that replaces A's.  A classification
 * must see A (cookies 0xa0, 0xa1) or B (0xb0, 0xb1), never table 0 of one
 * with table 1 of the other, which would miss in table 1.  Bug: the
 * pipeline's tables became visible one by one at commit, so a reader could
 * see table 0 new and table 1 old. */
static void
torn_add(struct fdp_pipeline *p, const char *text)
{
    struct fdp_flow_spec spec;
    char *error = NULL;

    ck_assert_msg(!fdp_flow_parse(text, 0, &spec, &error), "%s: %s", text,
                  error);
    ck_assert_int_eq(fdp_pipeline_insert(p, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);
}

/* Swaps the installed program for A ('to_a') or B, in one transaction. */
static void
torn_swap(struct fdp_pipeline *p, bool to_a)
{
    struct fdp_flow_spec spec;

    ck_assert_int_eq(fdp_pipeline_begin(p), 0);
    torn_add(p, to_a ? "table=0,priority=1,cookie=0xa0,"
                       "actions=load:1->NXM_NX_REG0[],goto_table:1"
                     : "table=0,priority=1,cookie=0xb0,"
                       "actions=load:2->NXM_NX_REG0[],goto_table:1");
    ck_assert_int_eq(fdp_flow_parse(to_a ? "table=1,priority=1,reg0=2"
                                         : "table=1,priority=1,reg0=1",
                                    FDP_PARSE_MATCH_ONLY, &spec, NULL), 0);
    struct fdp_table_filter f = {
        .match = spec.match, .strict = true, .priority = 1,
    };
    size_t n;
    ck_assert_int_eq(fdp_pipeline_remove(p, 1, &f, &n), 0);
    ck_assert_uint_eq(n, 1);
    fdp_flow_spec_destroy(&spec);
    torn_add(p, to_a ? "table=1,priority=1,cookie=0xa1,reg0=1,"
                       "actions=output:1"
                     : "table=1,priority=1,cookie=0xb1,reg0=2,"
                       "actions=output:2");
    ck_assert_int_eq(fdp_pipeline_commit(p), 0);
}

/* 0 if 'p' classifies 'key' as all of A, 1 as all of B, -1 otherwise. */
static int
torn_classify(struct fdp_pipeline *p, const struct fdp_key *key,
              struct fdp_pipeline_result *r)
{
    int which = -1;

    fdp_table_read_lock();
    ck_assert_int_eq(fdp_pipeline_classify(p, key, 0, r, NULL, NULL), 0);
    if (r->n_steps == 2 && r->steps[0].rule && r->steps[1].rule) {
        uint64_t c0 = fdp_rule_get_cookie(r->steps[0].rule);
        uint64_t c1 = fdp_rule_get_cookie(r->steps[1].rule);
        uint64_t out = outputs(r->actions);
        which = c0 == 0xa0 && c1 == 0xa1 && out == 1 ? 0
                : c0 == 0xb0 && c1 == 0xb1 && out == 2 ? 1 : -1;
    }
    fdp_table_read_unlock();
    return which;
}

struct torn {
    struct fdp_pipeline *p;
    struct fdp_key key;
    struct fdp_pipeline_result r;
    int expect;                 /* The program before the swap. */
    unsigned int n_checked, n_torn;
};

static struct torn *torn_ctx;

/* In the middle of a commit (fdp__pipeline_commit_hook): the reader must
 * still see the whole old program. */
static void
torn_hook(struct fdp_pipeline *p, uint8_t table_id)
{
    struct torn *t = torn_ctx;

    (void) table_id;
    if (t && p == t->p) {
        t->n_checked++;
        t->n_torn += torn_classify(p, &t->key, &t->r) != t->expect;
    }
}

START_TEST(commit_across_tables_is_atomic)
{
    struct torn t;

    memset(&t, 0, sizeof t);
    ck_assert_int_eq(fdp_pipeline_create(&t.p), 0);
    fdp_pipeline_result_init(&t.r);
    tcp_key(&t.key, 3, ip4(10, 0, 0, 1), ip4(10, 0, 0, 2), 1000, 80);
    torn_add(t.p, "table=0,priority=1,cookie=0xa0,"
             "actions=load:1->NXM_NX_REG0[],goto_table:1");
    torn_add(t.p, "table=1,priority=1,cookie=0xa1,reg0=1,actions=output:1");
    ck_assert_int_eq(torn_classify(t.p, &t.key, &t.r), 0);

    /* The hook classifies between one table's commit and the next's, where
     * the old design showed table 0 new and table 1 old. */
    torn_ctx = &t;
    fdp__pipeline_commit_hook = torn_hook;
    for (int i = 0; i < 10; i++) {
        t.expect = i % 2;
        torn_swap(t.p, i % 2);
        ck_assert_int_eq(torn_classify(t.p, &t.key, &t.r), !(i % 2));
    }
    fdp__pipeline_commit_hook = NULL;
    torn_ctx = NULL;
    ck_assert_uint_ge(t.n_checked, 20);    /* Both tables, each swap. */
    ck_assert_uint_eq(t.n_torn, 0);
    fdp_pipeline_result_destroy(&t.r);
    fdp_pipeline_destroy(t.p);
}
END_TEST

/* The same with a reader on its own thread, classifying while this thread
 * swaps: each swap waits (up to 10 s) for the reader to have classified
 * since the last one, so that the two really interleave whatever the
 * load. */
struct torn_reader {
    struct fdp_pipeline *p;
    struct fdp_key key;
    bool stop;                  /* Atomic. */
    uint64_t n_done;            /* Atomic: classifications so far. */
    uint64_t n_torn;
};

static void *
torn_reader_main(void *r_)
{
    struct torn_reader *rd = r_;
    struct fdp_pipeline_result r;

    fdp_pipeline_result_init(&r);
    while (!__atomic_load_n(&rd->stop, __ATOMIC_ACQUIRE)) {
        rd->n_torn += torn_classify(rd->p, &rd->key, &r) < 0;
        __atomic_fetch_add(&rd->n_done, 1, __ATOMIC_RELEASE);
    }
    fdp_pipeline_result_destroy(&r);
    return NULL;
}

START_TEST(commit_across_tables_is_atomic_for_a_reader_thread)
{
    struct torn_reader rd;
    pthread_t thread;

    memset(&rd, 0, sizeof rd);
    ck_assert_int_eq(fdp_pipeline_create(&rd.p), 0);
    tcp_key(&rd.key, 3, ip4(10, 0, 0, 1), ip4(10, 0, 0, 2), 1000, 80);
    torn_add(rd.p, "table=0,priority=1,cookie=0xa0,"
             "actions=load:1->NXM_NX_REG0[],goto_table:1");
    torn_add(rd.p, "table=1,priority=1,cookie=0xa1,reg0=1,actions=output:1");
    ck_assert_int_eq(pthread_create(&thread, NULL, torn_reader_main, &rd),
                     0);
    uint64_t seen = 0;
    for (int i = 0; i < 2000; i++) {
        /* Wait for the reader's progress, 10 s at most. */
        for (int w = 0; w < 1000000; w++) {
            uint64_t done = __atomic_load_n(&rd.n_done, __ATOMIC_ACQUIRE);
            if (done > seen) {
                seen = done;
                break;
            }
            ck_assert_msg(w < 999999, "the reader made no progress in 10 s");
            usleep(10);
        }
        torn_swap(rd.p, i % 2);
    }
    __atomic_store_n(&rd.stop, true, __ATOMIC_RELEASE);
    pthread_join(thread, NULL);
    ck_assert_uint_ge(rd.n_done, 2000);
    ck_assert_uint_eq(rd.n_torn, 0);
    fdp_pipeline_destroy(rd.p);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = unit_tcase(s, "pipeline");

    tcase_add_loop_test(tc, differential_random_programs, 0,
                        FDP_CPU_N_LEVELS + 1);
    tcase_add_test(tc, conjunction_ovs_fields_example);
    tcase_add_test(tc, conjunction_hidden_by_higher_hard_flow);
    tcase_add_test(tc, conjunction_two_priorities);
    tcase_add_test(tc, conjunction_same_priority_lowest_id_first);
    tcase_add_test(tc, resubmit_returns_to_caller);
    tcase_add_test(tc, resubmit_depth_limit);
    tcase_add_test(tc, resubmit_total_limit);
    tcase_add_test(tc, table_misses);
    tcase_add_test(tc, goto_miss_inside_resubmit);
    tcase_add_test(tc, registers_and_move);
    tcase_add_test(tc, resubmit_port_is_in_port_for_outputs);
    tcase_add_test(tc, dec_ttl_expiry_ends_the_pipeline);
    tcase_add_test(tc, header_rewrite_and_resubmit_port);
    tcase_add_test(tc, ct_composition_and_fork);
    tcase_add_test(tc, ct_keeps_off_the_one_table_path);
    tcase_add_test(tc, datapath_runs_the_pipeline);
    tcase_add_test(tc, datapath_random_programs);
    tcase_add_loop_test(tc, batch_lookups_agree_with_classify, 0,
                        FDP_CPU_N_LEVELS + 1);
    tcase_add_test(tc, commit_across_tables_is_atomic);

    /* The threaded case, alone in its TCase so that scripts/test.sh runs
     * it under ThreadSanitizer (CK_RUN_CASE=concurrency). */
    tc = unit_tcase(s, "concurrency");
    tcase_add_test(tc, commit_across_tables_is_atomic_for_a_reader_thread);
    return unit_run(s);
}
