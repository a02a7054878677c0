/*
 * The pipeline: tables 0 to 254, goto_table, resubmit, registers and
 * conjunctive matches.  The semantics are in flowdp/pipeline.h; this is
 * how they are built.
 *
 * Theory of operation
 * ===================
 *
 * Storage.  Each table in use is a struct ptable: one fdp_table, 'hard',
 * for its ordinary flows, and one small fdp_table per conjunction clause,
 * a "dim" (for dimension), for the flows of conjunctions.  A dim is the
 * clause k of the N-clause conjunction ID at priority P, and holds every
 * flow with the action conjunction(ID,k/N) at priority P.  A flow of
 * several conjunctions sits in the dim of each; its first conjunction
 * action names its "primary" dim, the one dumps and counts read it from,
 * so that it is listed once.  The flows of a conjunction are stored once
 * (twice only for flows of two conjunctions), and nothing is derived from
 * them at lookup time: a 100 x 100 conjunction is 200 flows in two dims
 * and one conj_id flow in 'hard', against the 10,000 flows of the cross
 * product it replaces.
 *
 * Lookup in one table (table_lookup()):
 *   1. H = the best flow of 'hard' for the key (conj_id zero).
 *   2. For each priority level of the table's conjunction index above H's,
 *      from the highest, each conjunction at it in (ID, N) order: it is
 *      complete if every one of its N dims has a flow matching the key
 *      (a lookup each, stopping at the first that finds none).  For a
 *      complete one, 'hard' is looked up again with conj_id = ID; a flow
 *      found is the result.
 *   3. Otherwise H.
 * A dim's lookup is an ordinary fdp_table lookup (tuple space, or pipapo
 * for ranges: a conjunction clause with a port range stays one flow), and
 * its answer is only "some flow matched"; priorities inside a dim are all
 * P.  The index (struct conj_index), made at commit from the dims, lists
 * the levels in decreasing priority and, per level, the conjunctions
 * whose N dims all hold flows; readers find it under RCU.  A batch of
 * packets (table_lookup_batch(), the datapath's) asks each dim about the
 * packets every earlier dim matched, as a bitmap, and gets the bitmap of
 * those it matches (fdp__table_match_any_batch(): a packet leaves the
 * dim's walk at its first match, since any flow answers).
 *
 * Worked example.  Table 0 holds
 *   priority=10,ip,nw_src=10.0.0.1 actions=conjunction(1,1/2)
 *   priority=10,ip,nw_src=10.0.0.2 actions=conjunction(1,1/2)
 *   priority=10,tcp,tp_dst=80      actions=conjunction(1,2/2)
 *   priority=10,conj_id=1          actions=goto_table:1
 *   priority=1                     actions=drop
 * The dims are (10, 1, 2, k=1) with two flows and (10, 1, 2, k=2) with
 * one; 'hard' has the conj_id flow and the catch-all.  The index has one
 * level, priority 10, with conjunction 1/2.  A TCP packet from 10.0.0.2
 * to port 80: H is the catch-all (priority 1 < 10); dim 1 matches
 * (10.0.0.2), dim 2 matches (port 80), so conjunction 1 is complete;
 * 'hard' with conj_id=1 finds "conj_id=1", whose goto_table:1 goes on.
 * The same packet to port 22 fails at dim 2, and H, the catch-all, drops
 * it.
 *
 * Cost, counted.  A table without conjunctions: one fdp_table lookup.
 * The example's allowed packet, naively: four (hard, two dims, hard
 * again); a denied one, three or two.  With the shortcuts (below), which
 * the example's table allows (its ordinary flows are "conj_id=1" alone
 * and a catch-all), two and two or one: the dims alone.  Each dim lookup
 * of a 100-flow /32 clause is one tuple-space probe of a small,
 * cache-resident hash table; measured (callgrind), a lookup of one key
 * is about 230 instructions, and a whole classification through one
 * table about 750 (docs/PERFORMANCE.md).
 *
 * Classification (run_chain(), run_actions()): a key of the pipeline's
 * own, copied from the packet's with the pipeline words zero, goes from
 * table to table.  Each hit's actions run in order: the packet's actions
 * are appended to the composed list (a load or move into a header becomes
 * a set_field of the whole field, whose value is known because the key
 * is), registers and metadata change the key, a header rewrite changes
 * the key too, resubmit recurses (bounded by depth and by a per-packet
 * total) and returns, goto_table continues after the flow's actions.
 * Every lookup is a step of the result; the datapath keeps the steps and
 * the composed actions as the packet's cached outcome.
 *
 * Modifications run under the pipeline's mutex, in a transaction that
 * begins the fdp_tables it touches (hard or dims) as it reaches them and
 * commits them all at the end; the index of a table whose dims changed is
 * rebuilt then, and a new snapshot is published.
 *
 * Versions and snapshots (Open vSwitch's versioned rules, one version for
 * all tables).  Every fdp_table of the pipeline, hard or dim, takes its
 * versions from the pipeline's clock, p->version
 * (fdp__table_set_clock()): a transaction's changes, in whatever tables,
 * are all made at version V + 1, where V is the published version, and a
 * table's commit only makes them linkable; a lookup sees a rule if the
 * version it looks up at is in [add_version, remove_version).  What
 * readers use is one snapshot, struct view, published with one release
 * store (publish()) after every table has committed: the version V + 1,
 * the shape (whether the pipeline is one table, which the datapath
 * serves with batch lookups), and each table's conjunction index.  The
 * protocol, writer then reader:
 *   writer: commit each table (new rules at V + 1, removed rules marked
 *           removed at V + 1 but left linked), rebuild indexes, publish
 *           the view {V + 1, shape, indexes}, store the clock V + 1, then
 *           let each table reap what it removed (a grace period first) and
 *           free the old view and indexes after another;
 *   reader: in its read-side section, load the view pointer once, and
 *           make every lookup of the packet (of the batch, in the
 *           datapath) at view->version through view's indexes.
 * So a reader that loaded the old view looks every table up at V: it sees
 * none of the transaction, in any table (the removed rules are still
 * linked: a table reaps only when the pipeline says, after the new view is
 * out and a grace period has passed); one that loaded the new view sees
 * all of it.  And since the version and the shape are fields of one
 * object reached by one pointer load, no reader can pair one commit's
 * version with another's shape: a datapath cache entry made at version V
 * is used only by batches that loaded the view of V, hence its shape.
 *
 * Worked example.  Table 0 holds A0 "actions=load:1->reg0,goto_table:1"
 * (added at version 3) and table 1 A1 "reg0=1,actions=output:1" (added
 * at 3); the view says version 3.  A transaction replaces them with B0
 * (load:2) and B1 (reg0=2, output:2): at commit, table 0 gets B0
 * [4, never) and A0 [3, 4), table 1 gets B1 [4, never) and A1 [3, 4),
 * each table committing in turn.  A packet classified between the two
 * tables' commits loads the view of version 3: table 0 gives A0 (B0 is
 * not visible at 3), table 1 gives A1: output:1, all old.  Then the view
 * of version 4 is published; a packet loading it gets B0 then B1:
 * output:2, all new.  Only then do the tables reap A0 and A1, after a
 * grace period in which every reader still at version 3 finishes.  (Under
 * the old protocol, one version per table, that packet would have seen B0
 * and A1: reg0=2 in table 1, a miss.)
 *
 * Thread-safety: see flowdp/pipeline.h.
 */
#include <config.h>

#include <flowdp/pipeline.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/actions-internal.h"
#include "lib/ct-action.h"
#include "lib/other-actions.h"
#include "lib/learn.h"
#include "lib/field.h"
#include "lib/group.h"
#include "lib/match-internal.h"
#include "lib/pipeline-private.h"
#include "lib/pipeline-view.h"
#include "lib/rcu.h"
#include "lib/rule.h"
#include "lib/util.h"
#include <flowdp/tlv-map.h>

/* ---------------------------------------------------------------------- */
/* Definitions.                                                            */

/* One clause of one conjunction at one priority. */
struct dim {
    uint16_t priority;
    uint32_t id;
    uint8_t n, k;
    bool begun;                 /* In the open transaction. */
    struct fdp_table *flows;
};

/* A conjunction as lookups see it: its dims, clause 1 first, and, when
 * it is known without a lookup, the flow it leads to (see "Shortcuts"). */
struct conj {
    uint32_t id;
    uint32_t n;
    bool resolved;              /* The lookup with conj_id = 'id' finds
                                 * the better of 'result' and H. */
    const struct fdp_rule *result;
    struct fdp_table *clauses[];
};

struct conj_level {
    uint16_t priority;
    uint32_t n_conjs;
    struct conj **conjs;
};

/* One dim as readers see it (for dumps). */
struct dim_view {
    uint16_t priority;
    uint32_t id;
    uint8_t n, k;
    struct fdp_table *flows;
};

/* A table's conjunctions, immutable once published: the levels and their
 * complete conjunctions for lookups, every dim for dumps. */
struct conj_index {
    struct rcu_head rcu;
    struct dim_view *dims;
    size_t n_dims;
    bool hard_wild;             /* Some flow of 'hard' matches a key whose
                                 * conj_id is 0... */
    bool hard_const;            /* ...but only catch-alls, the best of
                                 * which is 'hard_best' (see "Shortcuts"). */
    const struct fdp_rule *hard_best;
    uint32_t n_levels;
    struct conj_level *levels;  /* Decreasing priority. */
    struct conj **all;          /* Every conj, for freeing. */
    size_t n_all;
    struct conj_level level_space[];
};

struct ptable {
    uint8_t id;
    const uint64_t *clock;      /* The pipeline's version, which every
                                 * fdp_table of the table follows. */
    struct fdp_table *hard;
    bool hard_begun;
    /* Flows of 'hard' with goto_table or resubmit actions, and the count
     * when the transaction began 'hard' (restored by an abort). */
    size_t n_control, n_control_saved;
    bool dims_changed;          /* In the open transaction. */
    struct dim **dims;          /* Writer only. */
    size_t n_dims, alloc_dims;
    struct conj_index *index;   /* RCU; NULL: no conjunctions. */
    uint64_t n_missed;          /* Atomic. */
};

/* A published snapshot (see "Versions and snapshots"): the public part,
 * then what classification reads of each table.  Immutable once
 * published. */
struct view {
    struct fdp__pipeline_view pub;
    struct rcu_head rcu;
    struct view_table {
        struct ptable *pt;                  /* NULL: not in use. */
        const struct conj_index *index;     /* The table's conjunctions
                                             * at 'pub.version'. */
    } t[FDP_PIPELINE_N_TABLES];
};

struct fdp_pipeline {
    struct view *view;          /* RCU: what readers classify with. */
    pthread_mutex_t mutex;
    pthread_t txn_owner;
    bool in_txn;
    struct ptable *tables[FDP_PIPELINE_N_TABLES];  /* RCU; NULL: unused. */
    uint64_t version;           /* Atomic: the clock of every table
                                 * (fdp__table_set_clock()), equal to
                                 * view->pub.version once published. */
    bool unpublished;           /* The last publish() ran out of
                                 * memory: tables hold changes at
                                 * version + 1 that no snapshot has. */
    uint64_t n_limit_drops;     /* Atomic. */
    struct fdp__group_table groups; /* Writer only (lib/group.h); readers
                                     * find the published groups in the
                                     * view. */
    struct fdp__learn_cookies *learned_cookies;    /* lib/learn.c. */
    struct fdp_tlv_map *tlv_map;    /* Geneve options (lib/tlv-map.c). */
};

/* Classification's working memory (struct fdp_pipeline_result's
 * 'scratch'). */
struct scratch {
    struct fdp__actions_builder composed;
    size_t actions_alloc;       /* Words 'result->actions' has room for. */
    unsigned int n_resubmits;
    bool limit;
    struct fdp__stack stack;    /* push and pop (lib/other-actions.h). */
    /* The counters of the groups and buckets composed (lib/group.c,
     * "Counters"). */
    struct fdp__rule_counters **group_counters;
    size_t n_group_counters, alloc_group_counters;
};

void (*fdp__pipeline_commit_hook)(struct fdp_pipeline *, uint8_t table_id);

/* ---------------------------------------------------------------------- */
/* Life cycle.                                                             */

int
fdp_pipeline_create(struct fdp_pipeline **pp)
{
    struct fdp_pipeline *p = calloc(1, sizeof *p);

    *pp = NULL;
    if (!p) {
        return ENOMEM;
    }
    if (fdp__group_table_init(&p->groups)) {
        free(p);
        return ENOMEM;
    }
    pthread_mutex_init(&p->mutex, NULL);
    p->version = 1;

    /* Table 0 always exists: every packet starts there. */
    struct fdp_table *t;
    int error = fdp_table_create(&t);
    struct ptable *pt = error ? NULL : calloc(1, sizeof *pt);
    struct view *v = pt ? calloc(1, sizeof *v) : NULL;
    if (v && fdp_tlv_map_create(&p->tlv_map)) {
        free(v);
        v = NULL;
    }
    if (!v) {
        free(pt);
        fdp_table_destroy(t);
        fdp__group_table_destroy(&p->groups);
        pthread_mutex_destroy(&p->mutex);
        free(p);
        return error ? error : ENOMEM;
    }
    fdp__table_set_clock(t, &p->version);
    pt->clock = &p->version;
    pt->hard = t;
    p->tables[0] = pt;
    v->pub.version = p->version;
    v->pub.single = t;
    v->pub.groups = p->groups.pub;
    v->t[0].pt = pt;
    p->view = v;
    *pp = p;
    return 0;
}

static void
conj_index_free(struct conj_index *ix)
{
    if (ix) {
        for (size_t i = 0; i < ix->n_all; i++) {
            free(ix->all[i]);
        }
        free(ix->all);
        free(ix->dims);
        for (uint32_t i = 0; i < ix->n_levels; i++) {
            free(ix->levels[i].conjs);
        }
        free(ix);
    }
}

static void
conj_index_free_rcu(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();     /* What readers did happens before. */
    conj_index_free(CONTAINER_OF(head, struct conj_index, rcu));
}

void
fdp_pipeline_destroy(struct fdp_pipeline *p)
{
    if (!p) {
        return;
    }
    /* One wait for the deferred frees of every table (and index). */
    fdp__rcu_barrier();
    fdp__learn_cookies_free(p->learned_cookies);
    for (size_t i = 0; i < FDP_PIPELINE_N_TABLES; i++) {
        struct ptable *pt = p->tables[i];
        if (!pt) {
            continue;
        }
        fdp__table_destroy_after_barrier(pt->hard);
        for (size_t d = 0; d < pt->n_dims; d++) {
            fdp__table_destroy_after_barrier(pt->dims[d]->flows);
            free(pt->dims[d]);
        }
        free(pt->dims);
        conj_index_free(pt->index);
        free(pt);
    }
    free(p->view);
    fdp__group_table_destroy(&p->groups);
    fdp_tlv_map_destroy(p->tlv_map);
    pthread_mutex_destroy(&p->mutex);
    free(p);
}

struct fdp_tlv_map *
fdp_pipeline_tlv_map(struct fdp_pipeline *p)
{
    return p->tlv_map;
}

/* ---------------------------------------------------------------------- */
/* Transactions.                                                           */

static bool
txn_is_mine(const struct fdp_pipeline *p)
{
    return p->in_txn && pthread_equal(p->txn_owner, pthread_self());
}

int
fdp_pipeline_begin(struct fdp_pipeline *p)
{
    if (txn_is_mine(p)) {
        return EBUSY;
    }
    pthread_mutex_lock(&p->mutex);
    p->in_txn = true;
    p->txn_owner = pthread_self();
    return 0;
}

/* The table 'id', made if 'create' (then NULL only if out of memory). */
static struct ptable *
get_ptable(struct fdp_pipeline *p, uint8_t id, bool create, int *errorp)
{
    struct ptable *pt = p->tables[id];

    *errorp = 0;
    if (pt || !create) {
        return pt;
    }
    pt = calloc(1, sizeof *pt);
    if (!pt) {
        *errorp = ENOMEM;
        return NULL;
    }
    *errorp = fdp_table_create(&pt->hard);
    if (*errorp) {
        free(pt);
        return NULL;
    }
    fdp__table_set_clock(pt->hard, &p->version);
    pt->clock = &p->version;
    pt->id = id;
    FDP_RCU_SET(p->tables[id], pt);
    return pt;
}

static size_t table_n_flows(const struct fdp_table *);

/* Puts 'pt''s hard table into the transaction. */
static struct fdp_table *
hard_of(struct ptable *pt)
{
    if (!pt->hard_begun) {
        fdp_table_begin(pt->hard);
        pt->hard_begun = true;
        pt->n_control_saved = pt->n_control;
    }
    return pt->hard;
}

/* True if 'acts' can take a packet to another lookup, or holds what only
 * the pipeline's composition can hand the datapath: a ct action, whose
 * resolved record (lib/ct-action.h) depends on the key when it runs, and
 * ct_clear, which composes to nothing.  Either keeps the pipeline off the
 * one-table path (compute_single()), where a flow's own actions would be
 * the outcome. */
static bool
is_control(const struct fdp_actions *acts)
{
    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a)) {
        if (a->type == FDP_ACT_GOTO_TABLE || a->type == FDP_ACT_RESUBMIT
            || a->type == FDP_ACT_CT || a->type == FDP_ACT_CT_CLEAR
            || fdp__action_needs_compose(a) || a->type == FDP_ACT_GROUP
            || a->type == FDP_ACT_LEARN) {
            return true;
        }
    }
    return false;
}

/* The flows among 'rules' that is_control(). */
static size_t
count_control(struct fdp_rule **rules, size_t n)
{
    size_t c = 0;

    for (size_t i = 0; i < n; i++) {
        c += is_control(fdp__rule_actions(rules[i]));
    }
    return c;
}

/* fdp_table_insert() into 'pt''s hard table, keeping 'n_control'. */
static int
hard_insert(struct ptable *pt, const struct fdp_flow_spec *spec,
            unsigned int flags)
{
    const struct fdp_rule *old = fdp__table_find(hard_of(pt), spec->match,
                                                 spec->priority);
    int error = fdp_table_insert(pt->hard, spec, flags);

    if (!error) {
        pt->n_control -= old && is_control(fdp__rule_actions(old));
        pt->n_control += is_control(spec->actions);
    }
    return error;
}

/* True if the committed pipeline is one table: no flow outside table 0,
 * no goto_table or resubmit (table 0 may have conjunctions: its lookup,
 * clauses included, is then the whole classification). */
static bool
compute_single(const struct fdp_pipeline *p)
{
    for (size_t i = 0; i < FDP_PIPELINE_N_TABLES; i++) {
        const struct ptable *pt = p->tables[i];
        if (!pt) {
            continue;
        }
        if ((i && (pt->index || table_n_flows(pt->hard))) || pt->n_control) {
            return false;
        }
    }
    return true;
}

static struct fdp_table *
dim_flows(struct ptable *pt, struct dim *d)
{
    if (!d->begun) {
        fdp_table_begin(d->flows);
        d->begun = true;
        pt->dims_changed = true;
    }
    return d->flows;
}

/* The dim (priority, id, n, k) of 'pt', made if 'create'. */
static struct dim *
find_dim(struct ptable *pt, uint16_t priority, uint32_t id, unsigned int n,
         unsigned int k, bool create, int *errorp)
{
    *errorp = 0;
    for (size_t i = 0; i < pt->n_dims; i++) {
        struct dim *d = pt->dims[i];
        if (d->priority == priority && d->id == id && d->n == n
            && d->k == k) {
            return d;
        }
    }
    if (!create) {
        return NULL;
    }
    if (pt->n_dims == pt->alloc_dims) {
        size_t alloc = pt->alloc_dims ? 2 * pt->alloc_dims : 8;
        struct dim **dims = realloc(pt->dims, alloc * sizeof *dims);
        if (!dims) {
            *errorp = ENOMEM;
            return NULL;
        }
        pt->dims = dims;
        pt->alloc_dims = alloc;
    }
    struct dim *d = calloc(1, sizeof *d);
    if (!d || (*errorp = fdp_table_create(&d->flows)) != 0) {
        free(d);
        *errorp = *errorp ? *errorp : ENOMEM;
        return NULL;
    }
    fdp__table_set_clock(d->flows, pt->clock);
    /* Clauses are never counted (flowdp/pipeline.h). */
    *errorp = fdp__table_set_no_stats(d->flows);
    if (*errorp) {
        fdp_table_destroy(d->flows);
        free(d);
        return NULL;
    }
    d->priority = priority;
    d->id = id;
    d->n = (uint8_t) n;
    d->k = (uint8_t) k;
    pt->dims[pt->n_dims++] = d;
    return d;
}

static int
cmp_dims(const void *a_, const void *b_)
{
    const struct dim *a = *(struct dim *const *) a_;
    const struct dim *b = *(struct dim *const *) b_;

    if (a->priority != b->priority) {
        return a->priority > b->priority ? -1 : 1;
    }
    if (a->id != b->id) {
        return a->id < b->id ? -1 : 1;
    }
    if (a->n != b->n) {
        return a->n < b->n ? -1 : 1;
    }
    return a->k < b->k ? -1 : a->k > b->k;
}

static size_t
table_n_flows(const struct fdp_table *t)
{
    struct fdp_table_stats s;

    fdp_table_get_stats(t, &s);
    return s.n_flows;
}

/* Shortcuts.  In the usual table of conjunctions the ordinary flows that
 * look at conj_id match "conj_id=ID" and nothing else, and the others
 * (a catch-all, say) do not look at it.  Then the lookup of 'hard' with
 * conj_id = ID that a complete conjunction makes finds the better of two
 * flows known without it: the best "conj_id=ID" flow, fixed at commit,
 * and H, the best flow that ignores conj_id, which the first lookup
 * already found.  And if every ordinary flow matches some conj_id, that
 * first lookup, made with conj_id 0, can find nothing and is skipped.
 * And if the flows that ignore conj_id are catch-alls (the table's default
 * flow, as in most tables of conjunctions), that first lookup's answer is
 * known too: the best of them.  find_shortcuts() notes each when it holds,
 * from the committed flows: a packet allowed by a two-clause conjunction
 * then costs two clause lookups and nothing else.  The shortcuts name
 * rules of the new version: readers reach an index only through the
 * snapshot of that version (see "Versions and snapshots"). */
struct shortcut_aux {
    bool wild;                  /* Some flow ignores conj_id... */
    bool wild_matches;          /* ...and matches on something else. */
    const struct fdp_rule *best_catch_all;
    bool mixed;                 /* Some flow tests conj_id otherwise than
                                 * as "conj_id=ID" alone: no shortcuts. */
    struct conj_index *ix;
};

static bool
shortcut_cb(const struct fdp_rule *r, void *aux_)
{
    struct shortcut_aux *aux = aux_;
    const struct fdp__cmatch *c = &r->match;
    uint64_t mask = (uint64_t) fdp__cmatch_get(c, FDP__MATCH_MASK,
                                               FDP_F_CONJ_ID);
    uint32_t id = (uint32_t) fdp__cmatch_get(c, FDP__MATCH_VALUE,
                                             FDP_F_CONJ_ID);

    if (!mask) {
        aux->wild = true;
        if (c->words || c->hi_words) {
            aux->wild_matches = true;
        } else if (fdp__rule_beats(r, aux->best_catch_all)) {
            aux->best_catch_all = r;
        }
        return true;
    }
    /* "conj_id=ID" alone: word 5 holds only conj_id's bits. */
    bool pure = mask == UINT32_MAX && id
                && c->words == UINT64_C(1) << FDP__WORD_CONJ_ID
                && !c->hi_words
                && fdp__cmatch_word(c, FDP__MATCH_MASK, FDP__WORD_CONJ_ID)
                   == FDP__MASK(CONJ_ID);
    if (!pure) {
        aux->mixed = true;
        return false;
    }
    for (size_t i = 0; i < aux->ix->n_all; i++) {
        struct conj *cj = aux->ix->all[i];
        if (cj->id == id && fdp__rule_beats(r, cj->result)) {
            cj->result = r;
        }
    }
    return true;
}

static void
find_shortcuts(struct ptable *pt, struct conj_index *ix)
{
    struct shortcut_aux aux = { .ix = ix };

    for (size_t i = 0; i < ix->n_all; i++) {
        ix->all[i]->result = NULL;
    }
    fdp_table_read_lock();
    fdp_table_for_each(pt->hard, shortcut_cb, &aux);
    fdp_table_read_unlock();
    ix->hard_wild = aux.wild || aux.mixed;
    ix->hard_const = !aux.mixed && !aux.wild_matches;
    ix->hard_best = ix->hard_const ? aux.best_catch_all : NULL;
    for (size_t i = 0; i < ix->n_all; i++) {
        ix->all[i]->resolved = !aux.mixed;
    }
}

/* The index of 'pt''s dims as they are now (committed), or NULL if it has
 * none.  '*errorp' is ENOMEM if it could not be
 * built. */
static struct conj_index *
build_index(struct ptable *pt, int *errorp)
{
    *errorp = 0;
    qsort(pt->dims, pt->n_dims, sizeof *pt->dims, cmp_dims);

    /* Levels: at most one per dim. */
    struct conj_index *ix = calloc(1, sizeof *ix
                                      + pt->n_dims * sizeof ix->levels[0]);
    if (!ix) {
        *errorp = ENOMEM;
        return NULL;
    }
    ix->levels = ix->level_space;
    ix->all = calloc(pt->n_dims + 1, sizeof *ix->all);
    ix->dims = calloc(pt->n_dims + 1, sizeof *ix->dims);
    if (!ix->all || !ix->dims) {
        conj_index_free(ix);
        *errorp = ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < pt->n_dims; i++) {
        const struct dim *d = pt->dims[i];
        ix->dims[ix->n_dims++] = (struct dim_view) {
            .priority = d->priority, .id = d->id, .n = d->n, .k = d->k,
            .flows = d->flows,
        };
    }
    for (size_t i = 0; i < pt->n_dims; ) {
        /* Dims i..j-1 are one conjunction (priority, id, n). */
        const struct dim *d = pt->dims[i];
        size_t j = i;
        while (j < pt->n_dims && pt->dims[j]->priority == d->priority
               && pt->dims[j]->id == d->id && pt->dims[j]->n == d->n) {
            j++;
        }
        /* Complete only if clauses 1..n all have a dim with flows. */
        struct conj *c = calloc(1, sizeof *c + d->n * sizeof c->clauses[0]);
        if (!c) {
            conj_index_free(ix);
            *errorp = ENOMEM;
            return NULL;
        }
        c->id = d->id;
        c->n = d->n;
        for (size_t x = i; x < j; x++) {
            const struct dim *e = pt->dims[x];
            if (table_n_flows(e->flows)) {
                c->clauses[e->k - 1] = e->flows;
            }
        }
        bool complete = true;
        for (uint32_t k = 0; k < c->n; k++) {
            complete &= c->clauses[k] != NULL;
        }
        if (!complete) {
            free(c);
            i = j;
            continue;
        }
        ix->all[ix->n_all++] = c;
        struct conj_level *lv = ix->n_levels
                                ? &ix->levels[ix->n_levels - 1] : NULL;
        if (!lv || lv->priority != d->priority) {
            lv = &ix->levels[ix->n_levels++];
            lv->priority = d->priority;
        }
        struct conj **conjs = realloc(lv->conjs,
                                      (lv->n_conjs + 1) * sizeof *conjs);
        if (!conjs) {
            conj_index_free(ix);
            *errorp = ENOMEM;
            return NULL;
        }
        conjs[lv->n_conjs++] = c;
        lv->conjs = conjs;
        i = j;
    }
    if (!ix->n_dims) {
        conj_index_free(ix);
        return NULL;
    }
    find_shortcuts(pt, ix);
    return ix;
}

static void
view_free_rcu(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();     /* What readers did happens before. */
    free(CONTAINER_OF(head, struct view, rcu));
}

/* Publishes what the tables hold now, committed at version
 * p->version + 1, as that version: a new snapshot, then the clock (see
 * "Versions and snapshots").  Under the mutex.  Returns 0, or ENOMEM if
 * the snapshot could not be made: then the tables' changes stay
 * invisible to classification (they are committed: dumps show them), and
 * no table reaps, until a later commit or run publishes. */
static int
publish(struct fdp_pipeline *p)
{
    struct view *v = malloc(sizeof *v);

    p->unpublished = !v;
    if (!v) {
        return ENOMEM;
    }
    v->pub.version = p->version + 1;
    v->pub.single = compute_single(p) ? p->tables[0]->hard : NULL;
    v->pub.conj = v->pub.single && p->tables[0]->index;
    v->pub.groups = p->groups.pub;
    for (size_t i = 0; i < FDP_PIPELINE_N_TABLES; i++) {
        struct ptable *pt = p->tables[i];
        v->t[i].pt = pt;
        v->t[i].index = pt ? pt->index : NULL;
    }
    struct view *old = p->view;
    FDP_RCU_SET(p->view, v);
    __atomic_store_n(&p->version, v->pub.version, __ATOMIC_RELEASE);
    fdp__rcu_defer(&old->rcu, view_free_rcu);
    return 0;
}

/* After a publish: lets every table free what it removed (all of it, and
 * recompute its ties, if 'all'), now that no new lookup can be at the
 * version before.  Under the mutex. */
static void
reap_all(struct fdp_pipeline *p, bool all)
{
    for (size_t i = 0; i < FDP_PIPELINE_N_TABLES; i++) {
        struct ptable *pt = p->tables[i];
        if (!pt) {
            continue;
        }
        fdp__table_reap(pt->hard, all);
        for (size_t d = 0; d < pt->n_dims; d++) {
            fdp__table_reap(pt->dims[d]->flows, all);
        }
    }
}

/* Ends the transaction on 't' if '*begun': commits it if 'commit' and no
 * earlier table failed ('*errorp' is then the first failure), else aborts
 * it.  Returns whether it had begun. */
static bool
table_end(struct fdp_table *t, bool *begun, bool commit, int *errorp)
{
    if (!*begun) {
        return false;
    }
    if (commit && !*errorp) {
        *errorp = fdp_table_commit(t);
    } else {
        fdp_table_abort(t);
    }
    *begun = false;
    /* An aborted table is as it was: nothing to publish (the learner's
     * refreshes end so, and must not make the caches miss). */
    return commit;
}

/* Ends the transaction on every table it began: commits them if 'commit'
 * (returning the first error; the tables committed before it stay so),
 * else aborts them. */
static int
txn_end(struct fdp_pipeline *p, bool commit)
{
    struct conj_index *old_ix[FDP_PIPELINE_N_TABLES];
    size_t n_old_ix = 0;
    bool changed = false;
    int error = 0;

    for (size_t i = 0; i < FDP_PIPELINE_N_TABLES; i++) {
        struct ptable *pt = p->tables[i];
        if (!pt) {
            continue;
        }
        bool hard_changed = pt->hard_begun;
        if (hard_changed && (!commit || error)) {
            pt->n_control = pt->n_control_saved;
        }
        bool table_changed = table_end(pt->hard, &pt->hard_begun, commit,
                                       &error);
        for (size_t d = 0; d < pt->n_dims; d++) {
            struct dim *dm = pt->dims[d];
            table_changed |= table_end(dm->flows, &dm->begun, commit,
                                       &error);
        }
        changed |= table_changed;
        if (table_changed && commit && fdp__pipeline_commit_hook) {
            fdp__pipeline_commit_hook(p, pt->id);
        }
        if (pt->dims_changed || (hard_changed && pt->index)) {
            /* The shortcuts depend on 'hard' too. */
            int ix_error;
            struct conj_index *ix = build_index(pt, &ix_error);
            if (ix_error) {
                /* Lookups keep the old index: the conjunctions as they
                 * were, while the dims' flows are new.  Only reachable
                 * out of memory. */
                error = error ? error : ix_error;
            } else {
                /* Readers classify with the snapshot's index: the old one
                 * goes once the new snapshot is out. */
                if (pt->index) {
                    old_ix[n_old_ix++] = pt->index;
                }
                FDP_RCU_SET(pt->index, ix);
                pt->dims_changed = false;
            }
        }
    }
    /* The groups (and live ports) commit with the tables. */
    changed |= fdp__group_table_end(&p->groups, commit && !error);
    int pub_error = changed || p->unpublished ? publish(p) : 0;
    if (!pub_error) {
        fdp__group_table_reclaim(&p->groups);
    }
    for (size_t i = 0; i < n_old_ix; i++) {
        /* After publish(), which took the old indexes out of what
         * readers see.  If it failed, the published snapshot still uses
         * them: they are left allocated (out of memory only). */
        if (!pub_error) {
            fdp__rcu_defer(&old_ix[i]->rcu, conj_index_free_rcu);
        }
    }
    if (changed && !pub_error) {
        reap_all(p, false);
    }
    return error ? error : pub_error;
}

int
fdp_pipeline_commit(struct fdp_pipeline *p)
{
    if (!txn_is_mine(p)) {
        return 0;
    }
    int error = txn_end(p, true);
    p->in_txn = false;
    pthread_mutex_unlock(&p->mutex);
    return error;
}

void
fdp_pipeline_abort(struct fdp_pipeline *p)
{
    if (txn_is_mine(p)) {
        txn_end(p, false);
        p->in_txn = false;
        pthread_mutex_unlock(&p->mutex);
    }
}

/* A modifier outside a transaction makes its own. */
static bool
auto_begin(struct fdp_pipeline *p)
{
    if (txn_is_mine(p)) {
        return false;
    }
    fdp_pipeline_begin(p);
    return true;
}

static int
auto_end(struct fdp_pipeline *p, bool started, int error)
{
    if (started) {
        if (error) {
            fdp_pipeline_abort(p);
        } else {
            error = fdp_pipeline_commit(p);
        }
    }
    return error;
}

/* ---------------------------------------------------------------------- */
/* Modifiers.                                                              */

/* Checks what the tables need of a flow's actions in table 'table_id':
 * goto_table only forward and to a table that exists, resubmit to a table
 * that exists, conjunction actions alone. */
static int
check_actions(const struct fdp_actions *acts, uint8_t table_id)
{
    const struct fdp__action *first = fdp__actions_first(acts);
    bool conjunctive = first && first->type == FDP_ACT_CONJUNCTION;

    for (const struct fdp__action *a = first; a;
         a = fdp__actions_next(acts, a)) {
        switch ((enum fdp_action_type) a->type) {
        case FDP_ACT_GOTO_TABLE:
            if (a->arg <= table_id || a->arg >= FDP_PIPELINE_N_TABLES) {
                return EINVAL;
            }
            break;
        case FDP_ACT_RESUBMIT:
            if (fdp__action_resubmit_table(a) >= FDP_PIPELINE_N_TABLES
                && fdp__action_resubmit_table(a)
                   != FDP__RESUBMIT_SAME_TABLE) {
                return EINVAL;
            }
            break;
        case FDP_ACT_CONJUNCTION:
            if (!conjunctive) {
                return EINVAL;
            }
            break;
        case FDP_ACT_CT:
            /* A flow holds the flow form; the resolved one is the
             * pipeline's own output. */
            if (conjunctive || a->flags & FDP__ACT_CT_RESOLVED) {
                return EINVAL;
            }
            break;
        case FDP_ACT_CLONE:
            if (conjunctive || !fdp__clone_is_valid(a)) {
                return EINVAL;
            }
            break;
        default:
            if (conjunctive) {
                return EINVAL;
            }
            break;
        }
    }
    return 0;
}

/* Removes the flow (match, priority) from wherever it is in 'pt': 'hard'
 * and every dim at 'priority'.  Returns true if there was one. */
static bool
remove_exact(struct ptable *pt, const struct fdp_match *match,
             uint16_t priority)
{
    struct fdp_table_filter f = {
        .match = match, .strict = true, .priority = priority,
    };
    size_t n, total = 0;

    const struct fdp_rule *old = fdp__table_find(hard_of(pt), match,
                                                 priority);
    if (old) {
        pt->n_control -= is_control(fdp__rule_actions(old));
        fdp_table_remove(pt->hard, &f, &n);
        total += n;
    }
    for (size_t i = 0; i < pt->n_dims; i++) {
        struct dim *d = pt->dims[i];
        if (d->priority == priority
            && fdp__table_find(dim_flows(pt, d), match, priority)) {
            fdp_table_remove(d->flows, &f, &n);
            total += n;
        }
    }
    return total > 0;
}

static bool
exists_exact(struct ptable *pt, const struct fdp_match *match,
             uint16_t priority)
{
    if (fdp__table_find(hard_of(pt), match, priority)) {
        return true;
    }
    for (size_t i = 0; i < pt->n_dims; i++) {
        struct dim *d = pt->dims[i];
        if (d->priority == priority
            && fdp__table_find(dim_flows(pt, d), match, priority)) {
            return true;
        }
    }
    return false;
}

/* Inserts a flow of conjunctions into the dim of each of its
 * conjunction actions. */
static int
insert_soft(struct ptable *pt, const struct fdp_flow_spec *spec)
{
    for (const struct fdp__action *a = fdp__actions_first(spec->actions); a;
         a = fdp__actions_next(spec->actions, a)) {
        int error;
        struct dim *d = find_dim(pt, spec->priority, a->arg,
                                 fdp__action_conj_n(a),
                                 fdp__action_conj_clause(a), true, &error);
        if (!d) {
            return error;
        }
        error = fdp_table_insert(dim_flows(pt, d), spec, 0);
        if (error) {
            return error;
        }
    }
    return 0;
}

static int
insert_flow(struct fdp_pipeline *p, const struct fdp_flow_spec *spec,
            unsigned int flags)
{
    int error;
    struct ptable *pt = get_ptable(p, spec->table_id, true, &error);

    if (!pt) {
        return error;
    }
    /* A flow may name only groups that exist (lib/group.c). */
    error = fdp__group_table_check_actions(&p->groups, spec->actions);
    if (error) {
        return error;
    }
    bool soft = fdp__actions_is_conjunctive(spec->actions);
    if (!soft && !pt->n_dims) {
        /* The common case: fdp_table_insert() replaces as it should. */
        return hard_insert(pt, spec, flags);
    }
    if (exists_exact(pt, spec->match, spec->priority)) {
        if (flags & FDP_TABLE_NO_REPLACE) {
            return EEXIST;
        }
        if (!soft) {
            /* Replacing a hard flow by a hard one keeps its statistics;
             * only a conjunction clause of the same match must go. */
            struct fdp_table_filter f = {
                .match = spec->match, .strict = true,
                .priority = spec->priority,
            };
            for (size_t i = 0; i < pt->n_dims; i++) {
                struct dim *d = pt->dims[i];
                if (d->priority == spec->priority
                    && fdp__table_find(dim_flows(pt, d), spec->match,
                                       spec->priority)) {
                    fdp_table_remove(d->flows, &f, NULL);
                }
            }
            return hard_insert(pt, spec, flags);
        }
        remove_exact(pt, spec->match, spec->priority);
    }
    return soft ? insert_soft(pt, spec) : hard_insert(pt, spec, flags);
}

int
fdp_pipeline_insert(struct fdp_pipeline *p, const struct fdp_flow_spec *spec,
                    unsigned int flags)
{
    if (!spec->match || !spec->actions
        || spec->table_id >= FDP_PIPELINE_N_TABLES
        || check_actions(spec->actions, spec->table_id)) {
        return EINVAL;
    }
    bool started = auto_begin(p);
    return auto_end(p, started, insert_flow(p, spec, flags));
}

/* True if 'r', found in dim 'd', lists 'd' as its primary dim (its first
 * conjunction action is d's). */
static bool
is_primary_of(const struct fdp_rule *r, uint32_t id, unsigned int n,
              unsigned int k)
{
    const struct fdp__action *a = fdp__actions_first(fdp__rule_actions(r));

    return a && a->arg == id && fdp__action_conj_n(a) == n
           && fdp__action_conj_clause(a) == k;
}

static bool
is_primary(const struct fdp_rule *r, const struct dim *d)
{
    return is_primary_of(r, d->id, d->n, d->k);
}

/* The flows of conjunctions in 'pt' that 'filter' selects, each once,
 * into a new array of specs (match owned by each, actions borrowed from
 * the rule: valid in the transaction). */
struct soft_sel {
    struct fdp_flow_spec *specs;
    size_t n;
};

static void
soft_sel_destroy(struct soft_sel *s)
{
    for (size_t i = 0; i < s->n; i++) {
        fdp_match_destroy(s->specs[i].match);
    }
    free(s->specs);
    s->specs = NULL;
    s->n = 0;
}

static int
select_soft(struct ptable *pt, const struct fdp_table_filter *filter,
            struct soft_sel *out)
{
    out->specs = NULL;
    out->n = 0;
    for (size_t i = 0; i < pt->n_dims; i++) {
        struct dim *d = pt->dims[i];
        struct fdp_rule **rules = NULL;
        size_t n = 0;
        int error = fdp__table_select(dim_flows(pt, d), filter, &rules, &n);
        if (error) {
            soft_sel_destroy(out);
            return error;
        }
        for (size_t r = 0; r < n; r++) {
            if (!is_primary(rules[r], d)) {
                continue;
            }
            struct fdp_flow_spec *specs = realloc(
                out->specs, (out->n + 1) * sizeof *specs);
            struct fdp_match *m = fdp_match_create();
            if (specs) {
                out->specs = specs;
            }
            if (!specs || !m) {
                fdp_match_destroy(m);
                free(rules);
                soft_sel_destroy(out);
                return ENOMEM;
            }
            fdp_rule_get_spec(rules[r], &specs[out->n], m);
            specs[out->n].match = m;
            out->n++;
        }
        free(rules);
    }
    return 0;
}

/* mod-flows in one table. */
static int
modify_table(struct ptable *pt, const struct fdp_table_filter *filter,
             const struct fdp_actions *actions, const uint64_t *new_cookie,
             size_t *np)
{
    bool soft = fdp__actions_is_conjunctive(actions);
    size_t n = 0;
    int error;

    *np = 0;
    if (check_actions(actions, pt->id)) {
        return EINVAL;
    }

    /* Flows of conjunctions: taken out, put back with the new actions
     * (into dims, or into 'hard'). */
    struct soft_sel sel;
    error = select_soft(pt, filter, &sel);
    if (error) {
        return error;
    }

    /* Ordinary flows. */
    if (!soft) {
        size_t c_old = 0;
        bool c_new = is_control(actions);
        if (pt->n_control || c_new) {
            struct fdp_rule **rules = NULL;
            size_t n_rules = 0;
            error = fdp__table_select(hard_of(pt), filter, &rules, &n_rules);
            c_old = error ? 0 : count_control(rules, n_rules);
            free(rules);
        }
        if (!error) {
            error = fdp_table_modify(hard_of(pt), filter, actions,
                                     new_cookie, &n);
        }
        if (!error) {
            pt->n_control += (c_new ? n : 0) - c_old;
        }
    } else {
        struct fdp_rule **rules = NULL;
        size_t n_rules = 0;
        error = fdp__table_select(hard_of(pt), filter, &rules, &n_rules);
        for (size_t i = 0; !error && i < n_rules; i++) {
            struct fdp_match m;
            struct fdp_flow_spec spec;
            fdp_rule_get_spec(rules[i], &spec, &m);
            struct fdp_match *mc = fdp_match_clone(&m);
            if (!mc) {
                error = ENOMEM;
                break;
            }
            spec.match = mc;
            spec.actions = (struct fdp_actions *) actions;
            if (new_cookie) {
                spec.cookie = *new_cookie;
            }
            remove_exact(pt, mc, spec.priority);
            error = insert_soft(pt, &spec);
            fdp_match_destroy(mc);
            n++;
        }
        free(rules);
    }
    for (size_t i = 0; !error && i < sel.n; i++) {
        struct fdp_flow_spec spec = sel.specs[i];
        spec.actions = (struct fdp_actions *) actions;
        if (new_cookie) {
            spec.cookie = *new_cookie;
        }
        remove_exact(pt, spec.match, spec.priority);
        error = soft ? insert_soft(pt, &spec) : hard_insert(pt, &spec, 0);
        n++;
    }
    soft_sel_destroy(&sel);
    *np = n;
    return error;
}

int
fdp_pipeline_modify(struct fdp_pipeline *p, uint8_t table_id,
                    const struct fdp_table_filter *filter,
                    const struct fdp_actions *actions,
                    const uint64_t *new_cookie, size_t *np)
{
    bool started = auto_begin(p);
    size_t total = 0;
    int error = fdp__group_table_check_actions(&p->groups, actions);

    for (size_t i = 0; !error && i < FDP_PIPELINE_N_TABLES; i++) {
        struct ptable *pt = p->tables[i];
        if (pt && (table_id == FDP_TABLE_ALL || table_id == i)) {
            size_t n;
            error = modify_table(pt, filter, actions, new_cookie, &n);
            total += n;
        }
    }
    if (np) {
        *np = error ? 0 : total;
    }
    return auto_end(p, started, error);
}

static int
remove_table(struct ptable *pt, const struct fdp_table_filter *filter,
             size_t *np)
{
    size_t n = 0, primaries = 0, c_old = 0;
    int error = 0;

    if (pt->n_control) {
        struct fdp_rule **rules = NULL;
        size_t n_rules = 0;
        error = fdp__table_select(hard_of(pt), filter, &rules, &n_rules);
        c_old = error ? 0 : count_control(rules, n_rules);
        free(rules);
    }
    if (!error) {
        error = fdp_table_remove(hard_of(pt), filter, &n);
    }
    if (!error) {
        pt->n_control -= c_old;
    }

    for (size_t i = 0; !error && i < pt->n_dims; i++) {
        struct dim *d = pt->dims[i];
        struct fdp_rule **rules = NULL;
        size_t n_sel = 0;
        error = fdp__table_select(dim_flows(pt, d), filter, &rules, &n_sel);
        if (error) {
            break;
        }
        for (size_t r = 0; r < n_sel; r++) {
            primaries += is_primary(rules[r], d);
        }
        free(rules);
        if (n_sel) {
            error = fdp_table_remove(d->flows, filter, NULL);
        }
    }
    *np = n + primaries;
    return error;
}

int
fdp_pipeline_remove(struct fdp_pipeline *p, uint8_t table_id,
                    const struct fdp_table_filter *filter, size_t *np)
{
    bool started = auto_begin(p);
    size_t total = 0;
    int error = 0;

    for (size_t i = 0; !error && i < FDP_PIPELINE_N_TABLES; i++) {
        struct ptable *pt = p->tables[i];
        if (pt && (table_id == FDP_TABLE_ALL || table_id == i)) {
            size_t n;
            error = remove_table(pt, filter, &n);
            total += n;
        }
    }
    if (np) {
        *np = error ? 0 : total;
    }
    return auto_end(p, started, error);
}

void
fdp_pipeline_run(struct fdp_pipeline *p)
{
    bool changed = false;

    pthread_mutex_lock(&p->mutex);
    if (p->unpublished && publish(p)) {
        /* A table's run reaps what earlier commits removed: not while
         * the snapshot that hides it is not out. */
        pthread_mutex_unlock(&p->mutex);
        return;
    }
    for (size_t i = 0; i < FDP_PIPELINE_N_TABLES; i++) {
        struct ptable *pt = p->tables[i];
        if (pt) {
            /* A run that moves flows makes new rule objects, at the next
             * version: cached outcomes that point at the old ones must
             * go, and the old ones stay until that version is out. */
            uint64_t v = fdp_table_version(pt->hard);
            fdp_table_run(pt->hard);
            changed |= fdp_table_version(pt->hard) != v;
        }
    }
    if (changed && !publish(p)) {
        reap_all(p, true);
    }
    pthread_mutex_unlock(&p->mutex);
}

/* ---------------------------------------------------------------------- */
/* Lookups in one table.                                                   */

/* The best flow of 't' at 'version' for 'key' by a scan of all its
 * flows. */
struct scan_aux {
    const struct fdp_key *key;
    const struct fdp_rule *best;
};

static bool
scan_cb(const struct fdp_rule *r, void *aux_)
{
    struct scan_aux *aux = aux_;

    if (fdp__rule_matches(r, aux->key) && fdp__rule_beats(r, aux->best)) {
        aux->best = r;
    }
    return true;
}

static const struct fdp_rule *
scan_lookup(struct fdp_table *t, const struct fdp_key *key, uint64_t version)
{
    struct scan_aux aux = { .key = key, .best = NULL };

    fdp__table_for_each_at(t, version, scan_cb, &aux);
    return aux.best;
}

/* The pipeline's lookups run in its caller's read-side section, at the
 * version of the snapshot it classifies with, and leave the fdp_table's
 * own lookup counters alone: the pipeline counts what its tables did per
 * packet instead (the flows' counters, and the tables' miss counters,
 * which the datapath feeds for cached outcomes too). */
static const struct fdp_rule *
one_lookup(struct fdp_table *t, const struct fdp_key *key, uint64_t version,
           bool linear)
{
    return linear ? scan_lookup(t, key, version)
                  : fdp__table_lookup_at(t, key, version);
}

/* The flow table 'vt' gives 'key' at 'version' (see the essay), and in
 * '*conj_idp' the conjunction that led to it, or 0.  'key' is changed
 * during the call (conj_id) and restored. */
static const struct fdp_rule *
table_lookup(const struct view_table *vt, struct fdp_key *key,
             uint64_t version, bool linear, uint32_t *conj_idp)
{
    struct fdp_table *hard = vt->pt->hard;
    const struct conj_index *ix = vt->index;
    bool shortcuts = ix && !linear;
    const struct fdp_rule *h = shortcuts && ix->hard_const
                               ? ix->hard_best
                               : shortcuts && !ix->hard_wild
                               ? NULL : one_lookup(hard, key, version, linear);

    *conj_idp = 0;
    if (!ix) {
        return h;
    }
    int hard_pri = h ? h->priority : -1;
    for (uint32_t l = 0; l < ix->n_levels; l++) {
        const struct conj_level *lv = &ix->levels[l];
        if (lv->priority <= hard_pri) {
            break;
        }
        for (uint32_t c = 0; c < lv->n_conjs; c++) {
            const struct conj *cj = lv->conjs[c];
            bool complete = true;
            for (uint32_t k = 0; complete && k < cj->n; k++) {
                complete = one_lookup(cj->clauses[k], key, version,
                                      linear) != NULL;
            }
            if (!complete) {
                continue;
            }
            if (shortcuts && cj->resolved) {
                const struct fdp_rule *r = cj->result;
                if (h && fdp__rule_beats(h, r)) {
                    r = h;
                }
                if (r) {
                    *conj_idp = cj->id;
                    return r;
                }
                continue;
            }
            fdp__key_set(key, FDP_F_CONJ_ID, cj->id);
            const struct fdp_rule *r = one_lookup(hard, key, version, linear);
            fdp__key_set(key, FDP_F_CONJ_ID, 0);
            if (r) {
                *conj_idp = cj->id;
                return r;
            }
        }
    }
    return h;
}

/* ---------------------------------------------------------------------- */
/* Classification.                                                         */

void
fdp_pipeline_result_init(struct fdp_pipeline_result *r)
{
    memset(r, 0, sizeof *r);
}

void
fdp_pipeline_result_destroy(struct fdp_pipeline_result *r)
{
    struct scratch *s = r->scratch;

    if (s) {
        fdp__actions_builder_destroy(&s->composed);
        fdp__stack_destroy(&s->stack);
        free(s->group_counters);
        free(s);
    }
    free(r->steps);
    free(r->actions);
    memset(r, 0, sizeof *r);
}

/* push_step() when the array is full. */
static struct fdp_pipeline_step *
push_step_grow(struct fdp_pipeline_result *r)
{
    size_t alloc = r->steps_alloc ? 2 * r->steps_alloc : 16;
    struct fdp_pipeline_step *steps = realloc(r->steps,
                                              alloc * sizeof *steps);

    if (!steps) {
        return NULL;
    }
    r->steps = steps;
    r->steps_alloc = alloc;
    return &r->steps[r->n_steps++];
}

/* A new step at the end of 'r''s, or NULL if out of memory.  Every lookup
 * takes one: the common case is inline. */
static inline struct fdp_pipeline_step *
push_step(struct fdp_pipeline_result *r)
{
    if (FDP_UNLIKELY(r->n_steps == r->steps_alloc)) {
        return push_step_grow(r);
    }
    return &r->steps[r->n_steps++];
}

/* What a flow's actions tell the pipeline to do next. */
enum next {
    NEXT_DONE,                  /* Stop: the flow had no goto_table. */
    NEXT_GOTO,                  /* Continue in table '*gotop'. */
    NEXT_ABORT,                 /* A limit or ENOMEM: stop everything. */
};

struct run {
    struct fdp_pipeline *p;
    const struct view *view;    /* The snapshot it classifies with. */
    struct fdp_pipeline_result *r;
    struct scratch *s;
    uint32_t packet_in_port;    /* The port the packet came in on. */
    bool stop;                  /* A dec_ttl killed the packet. */
    bool linear;
    int error;
    fdp_pipeline_trace_cb *trace;
    void *aux;
    fdp_pipeline_ct_cb *ct_cb;      /* Traces only. */
    void *ct_aux;
    /* set_queue: the queue of the outputs composed now, and the one the
     * composed list last set (lib/other-actions.h); 0 is none. */
    uint32_t queue, dp_queue;
    unsigned int clone_depth;   /* How deep in clone() it runs. */
    bool clone_stop;            /* A dec_ttl ended the innermost clone. */
    /* For the controller actions' stamps (stamp_controller()): the flow
     * whose actions run now (NULL: a packet-out's own), whether they are
     * a packet-out's, and how deep in group buckets they run. */
    const struct fdp_rule *rule;
    bool packet_out;
    unsigned int group_depth;
};

static enum next run_chain(struct run *run, unsigned int table_id,
                           enum fdp_pipeline_step_kind kind,
                           unsigned int depth, bool *missed);

/* True for the fields a header rewrite reaches on the wire (the others,
 * in_port and pkt_mark, live only in the key), and for the tunnel fields,
 * which the datapath keeps with the packet for an output to a tunnel port
 * (key.h): the composed list carries their new values as it carries a
 * header's. */
static bool
is_header(enum fdp_field f)
{
    return (fdp__field_is_packet(f) && f != FDP_F_IN_PORT
            && f != FDP_F_PKT_MARK)
           || fdp__field_is_tunnel(f);
}

/* write_field() for a header: the key, then the set-field that makes the
 * packet agree. */
static void
write_header(struct run *run, enum fdp_field f, fdp_u128 value,
             fdp_u128 mask)
{
    struct fdp_key *key = &run->r->key;
    fdp_u128 old = fdp__key_get(key, f);
    fdp_u128 new = (old & ~mask) | (value & mask);

    fdp__key_set_tunnel(key, f, new);
    fdp__actions_add_set_field(&run->s->composed, f, new, 0);
}

/* Writes 'value' under 'mask' into field 'f' of the key, and, for a
 * header, appends the set-field that makes the packet agree.  Inline: a
 * register load or move, the common case in a multi-table program, is one
 * masked store into the key (two for a 128-bit field) and nothing else. */
static inline void
write_field(struct run *run, enum fdp_field f, fdp_u128 value, fdp_u128 mask)
{
    if (is_header(f)) {
        write_header(run, f, value, mask);
    } else {
        fdp__key_store_masked128(&run->r->key, f, value, mask);
    }
}

/* The key changes that a packet action makes, so that later tables match
 * the packet as it will be. */
static void
track_packet_action(struct fdp_key *key, const struct fdp__action *a)
{
    uint16_t tci = (uint16_t) fdp__key_get(key, FDP_F_VLAN_TCI);

    switch ((enum fdp_action_type) a->type) {
    case FDP_ACT_SET_VLAN_VID:
        tci = (uint16_t) ((tci & ~FDP_VLAN_VID_MASK)
                          | (a->arg & FDP_VLAN_VID_MASK) | FDP_VLAN_CFI);
        fdp__key_set(key, FDP_F_VLAN_TCI, tci);
        break;
    case FDP_ACT_SET_VLAN_PCP:
        tci = (uint16_t) ((tci & ~FDP_VLAN_PCP_MASK) | (a->arg & 7) << 13
                          | FDP_VLAN_CFI);
        fdp__key_set(key, FDP_F_VLAN_TCI, tci);
        break;
    case FDP_ACT_STRIP_VLAN:
        fdp__key_set(key, FDP_F_VLAN_TCI, 0);
        break;
    case FDP_ACT_PUSH_VLAN:
        fdp__key_set(key, FDP_F_VLAN_TCI, tci | FDP_VLAN_CFI);
        break;
    case FDP_ACT_SET_FIELD:
        fdp__key_set_tunnel(key, (enum fdp_field) a->field,
                            fdp__action_value(a));
        break;
    case FDP_ACT_DEC_TTL:
        /* run_actions() decrements: it decides whether the packet dies. */
        break;
    default:
        break;
    }
}

/* Zeroes the connection-tracking words of 'key' (key.h, words 23-30),
 * not the tunnel words after them. */
static void
clear_ct_fields(struct fdp_key *key)
{
    static_assert(FDP__WORD_CT_STATE == FDP__WORD_XREG7 + 1
                  && FDP__WORD_CT_STATE + 8 == FDP__TUN_FIRST_WORD,
                  "the ct fields are the eight words before the tunnel's");
    memset(&key->w[FDP__WORD_CT_STATE], 0,
           (FDP__TUN_FIRST_WORD - FDP__WORD_CT_STATE) * sizeof key->w[0]);
}

/* Composes output to 'to' (FDP_PORT_IN_PORT: the in_port of the key).
 * Open vSwitch's in_port is the one a resubmit(PORT) set: output to it is
 * skipped and in_port sends to it, while the executor knows only the
 * packet's own port.  So output to the current in_port is left out, and
 * what goes to the packet's own port is composed as in_port, the only way
 * there.  Under a queue the list has not set yet, a set_queue record
 * goes first. */
static void
compose_output(struct run *run, uint32_t to)
{
    uint32_t cur = (uint32_t) fdp__key_get(&run->r->key, FDP_F_IN_PORT);

    if (to == FDP_PORT_IN_PORT) {
        to = cur;
    } else if (to == cur) {
        return;
    }
    if (FDP_UNLIKELY(run->queue != run->dp_queue)) {
        fdp__actions_add(&run->s->composed, FDP_ACT_SET_QUEUE, run->queue);
        run->dp_queue = run->queue;
    }
    /* The record fdp__actions_add() would build, appended inline (every
     * packet's last flow has one). */
    struct fdp__action out = { .n_words = 1 };
    if (to == run->packet_in_port) {
        out.type = FDP_ACT_IN_PORT;
    } else {
        out.type = FDP_ACT_OUTPUT;
        out.arg = to;
    }
    fdp__actions_add_record(&run->s->composed, &out);
}

/* The start of ct(table=N) continuation 'ct' as fdp_pipeline_ct_cb says
 * it, for the run's ct callback (a trace). */
static void
run_ct_cb(struct run *run, const struct fdp__dp_ct *ct)
{
    struct fdp_key key = run->r->key;
    fdp_u128 mark = fdp__key_get(&key, FDP_F_CT_MARK);
    fdp_u128 label = fdp__key_get(&key, FDP_F_CT_LABEL);
    fdp_u128 lmask = fdp__from_value(ct->label_mask);

    fdp__key_set(&key, FDP_F_CT_ZONE, ct->zone);
    fdp__key_set(&key, FDP_F_CT_MARK,
                 (mark & ~(fdp_u128) ct->mark_mask) | ct->mark);
    fdp__key_set(&key, FDP_F_CT_LABEL,
                 (label & ~lmask) | fdp__from_value(ct->label));
    const struct fdp__ct_nat *nat = &ct->nat;
    if (ct->flags & FDP__DPCT_NAT && nat->flags & FDP__NAT_ADDR) {
        bool src = nat->flags & FDP__NAT_SRC;
        bool v6 = nat->flags & FDP__NAT_IPV6;
        fdp__key_set(&key, v6 ? (src ? FDP_F_IPV6_SRC : FDP_F_IPV6_DST)
                              : (src ? FDP_F_NW_SRC : FDP_F_NW_DST),
                     fdp__from_value(nat->addr_min));
        if (nat->flags & FDP__NAT_PORT) {
            fdp__key_set(&key, src ? FDP_F_TP_SRC : FDP_F_TP_DST,
                         nat->port_min);
        }
    }
    run->ct_cb(run->ct_aux, &key, ct->table);
}

/* Runs ct action 'a' (flow form): appends its resolved record to the
 * composed actions (lib/ct-action.h), then, as Open vSwitch's
 * compose_conntrack_action() does, leaves the rest of the pass an
 * untracked packet: the ct fields are cleared whether or not the action
 * has a table, since what the tracker says is seen only by the
 * continuation of ct(table=N), which the datapath classifies from table N
 * (fdp__pipeline_resume_view()).  exec()'s writes to ct_mark and
 * ct_label reach the connection, not this pass's key. */
static void
run_ct(struct run *run, const struct fdp__action *a)
{
    struct fdp_key *key = &run->r->key;
    struct {
        struct fdp__action h;
        struct fdp__dp_ct ct;
    } rec;
    static_assert(sizeof rec == FDP__DPCT_RECORD_WORDS * 8,
                  "a resolved ct record is its header and its payload");

    if (fdp__ct_resolve(a, key, &rec.ct)) {
        /* Only a record the builder did not make gets here (check_actions()
         * lets only flow-form records into a table): compose nothing. */
        return;
    }
    rec.h = (struct fdp__action) {
        .type = FDP_ACT_CT, .n_words = FDP__DPCT_RECORD_WORDS,
        .flags = FDP__ACT_CT_RESOLVED,
    };
    fdp__actions_add_record(&run->s->composed, &rec.h);
    if (run->ct_cb && rec.ct.flags & FDP__DPCT_RECIRC) {
        run_ct_cb(run, &rec.ct);
    }
    clear_ct_fields(key);
}

static enum next run_clone(struct run *, const struct fdp__action *,
                           unsigned int table_id, unsigned int depth);
static enum next run_check_pkt_larger(struct run *,
                                      const struct fdp__action *,
                                      const uint64_t *rest,
                                      const uint64_t *end,
                                      unsigned int table_id,
                                      unsigned int depth);
static void run_output_reg(struct run *, const struct fdp__action *);
static void run_stack(struct run *, const struct fdp__action *);

static void stamp_controller(struct run *, const struct fdp__action *,
                             unsigned int table_id);
static enum next run_group(struct run *run, uint32_t group_id,
                           unsigned int table_id, unsigned int depth);

/* Runs learn action 'a' (flow form), as Open vSwitch's
 * xlate_learn_action() does, except that the flow is not added here: the
 * record resolved against the key as it is now (lib/learn.c) goes into the
 * composed actions, and the datapath hands it to the table's writer off
 * the packet path (datapath/learner.c), for this packet and for every
 * later one that its cached outcome serves (which refreshes the learned
 * flow, as Open vSwitch's revalidators do).  result_dst says whether the
 * flow will be there: 0 only when limit=N flows with the learned cookie
 * are in the learned table already. */
static void
run_learn(struct run *run, const struct fdp__action *a)
{
    const struct fdp__learn *l = fdp__learn_of(a);
    bool ok = !l->limit
              || fdp__learn_count_cookie(run->p, l->table_id, l->cookie)
                 < l->limit;

    if (ok) {
        fdp__learn_resolve(a, &run->r->key, true, &run->s->composed);
    }
    if (l->flags & FDP__LEARN_WRITE_RESULT
        && l->result_nxm < fdp__n_nxm_fields) {
        uint64_t bit = UINT64_C(1) << l->result_ofs;
        write_field(run, fdp__nxm_fields[l->result_nxm].field,
                    ok ? bit : 0, bit);
    }
}

/* Runs the records from 'first' to 'end' (a flow's actions, those nested
 * in a clone, or a group's bucket's), of a flow found in table 'table_id'
 * (or of a bucket of a group a flow there reached) at resubmit depth
 * 'depth'. */
static enum next
run_records(struct run *run, const uint64_t *first, const uint64_t *end,
            unsigned int table_id, unsigned int depth, unsigned int *gotop)
{
    struct fdp_key *key = &run->r->key;
    enum next next = NEXT_DONE;

    for (const uint64_t *w = first; w < end;
         w += ((const struct fdp__action *) w)->n_words) {
        const struct fdp__action *a = (const struct fdp__action *) w;
        switch ((enum fdp_action_type) a->type) {
        case FDP_ACT_GOTO_TABLE:
            *gotop = a->arg;
            next = NEXT_GOTO;
            break;
        case FDP_ACT_RESUBMIT: {
            if (depth + 1 > FDP_PIPELINE_MAX_DEPTH
                || ++run->s->n_resubmits > FDP_PIPELINE_MAX_RESUBMITS
                || run->s->stack.size >= FDP__STACK_MAX) {
                run->s->limit = true;
                return NEXT_ABORT;
            }
            unsigned int t = fdp__action_resubmit_table(a);
            uint32_t port = fdp__action_resubmit_port(a);
            fdp_u128 in_port = fdp__key_get(key, FDP_F_IN_PORT);
            if (port != FDP_PORT_IN_PORT) {
                fdp__key_set(key, FDP_F_IN_PORT, port);
            }
            bool missed;
            enum next n = run_chain(run, t == FDP__RESUBMIT_SAME_TABLE
                                         ? table_id : t,
                                    FDP_STEP_RESUBMIT, depth + 1, &missed);
            if (port != FDP_PORT_IN_PORT) {
                fdp__key_set(key, FDP_F_IN_PORT, in_port);
            }
            if (n == NEXT_ABORT) {
                return NEXT_ABORT;
            }
            break;
        }
        case FDP_ACT_SET_MASKED:
            write_field(run, (enum fdp_field) a->field,
                        fdp__action_masked_value(a),
                        fdp__action_masked_mask(a));
            break;
        case FDP_ACT_MOVE: {
            struct fdp__move mv = fdp__action_move(a);
            fdp_u128 ones = fdp__ones(mv.n_bits);
            fdp_u128 bits = (fdp__key_get(key, mv.src) >> mv.src_ofs) & ones;
            write_field(run, mv.dst, bits << mv.dst_ofs, ones << mv.dst_ofs);
            break;
        }
        case FDP_ACT_CONJUNCTION:
            /* Never run: such flows are never a lookup's result. */
            break;
        case FDP_ACT_OUTPUT:
            compose_output(run, a->arg);
            break;
        case FDP_ACT_IN_PORT:
            compose_output(run, FDP_PORT_IN_PORT);
            break;
        case FDP_ACT_RESERVED: {
            /* NORMAL, FLOOD, ALL and LOCAL run in the datapath
             * (datapath/normal.c), per packet; what they need of the
             * pipeline is the in_port they ran with, if a resubmit(PORT)
             * made it another than the packet's own. */
            uint32_t cur = (uint32_t) fdp__key_get(key, FDP_F_IN_PORT);
            struct fdp__action out = {
                .type = FDP_ACT_RESERVED, .n_words = 1,
                .arg = fdp__action_reserved_port(a)
                       | (cur != run->packet_in_port ? (cur & 0xffff) << 16
                                                     : 0),
            };
            fdp__actions_add_record(&run->s->composed, &out);
            break;
        }
        case FDP_ACT_DEC_TTL: {
            /* An IP packet whose TTL is 0 or 1 dies at this action (the
             * executor drops it there): nothing after it runs, and no
             * later flow counts it, as in Open vSwitch. */
            fdp__actions_add_record(&run->s->composed, a);
            fdp_u128 type = fdp__key_get(key, FDP_F_DL_TYPE);
            if (type == FDP_ETH_TYPE_IP || type == FDP_ETH_TYPE_IPV6) {
                fdp_u128 ttl = fdp__key_get(key, FDP_F_NW_TTL);
                if (ttl <= 1 && run->clone_depth) {
                    /* Inside clone() the packet that dies is the copy:
                     * the clone's actions end here (Open vSwitch's
                     * compose_dec_ttl() stops the list it is in), so
                     * the record that would drop the packet goes. */
                    run->s->composed.n_words -= a->n_words;
                    run->s->composed.n_actions--;
                    run->clone_stop = true;
                    return NEXT_ABORT;
                }
                if (ttl <= 1) {
                    run->stop = true;
                    return NEXT_ABORT;
                }
                fdp__key_set(key, FDP_F_NW_TTL, ttl - 1);
            }
            break;
        }
        case FDP_ACT_CT:
            run_ct(run, a);
            break;
        case FDP_ACT_LEARN:
            run_learn(run, a);
            break;
        case FDP_ACT_FIN_TIMEOUT:
            /* The datapath's (datapath/execute.c). */
            fdp__actions_add_record(&run->s->composed, a);
            break;
        case FDP_ACT_CT_CLEAR:
            /* Open vSwitch clears the ct fields of a tracked packet
             * (compose_ct_clear_action(), only when the packet is
             * tracked); an untracked packet's are zero already. */
            if (fdp__key_get(key, FDP_F_CT_STATE) & FDP_CT_TRK) {
                clear_ct_fields(key);
            }
            break;
        case FDP_ACT_STACK_PUSH:
        case FDP_ACT_STACK_POP:
            run_stack(run, a);
            break;
        case FDP_ACT_OUTPUT_REG:
            run_output_reg(run, a);
            break;
        case FDP_ACT_NOTE:
            break;
        case FDP_ACT_SET_QUEUE:
            run->queue = a->arg;
            break;
        case FDP_ACT_POP_QUEUE:
            run->queue = 0;
            break;
        case FDP_ACT_CLONE:
            if (run_clone(run, a, table_id, depth) == NEXT_ABORT) {
                return NEXT_ABORT;
            }
            break;
        case FDP_ACT_CHECK_PKT_LARGER:
            if (a->flags) {
                /* A composed record: not in a flow's list. */
                break;
            }
            return run_check_pkt_larger(run, a, w + a->n_words, end,
                                        table_id, depth);
        case FDP_ACT_GROUP: {
            enum next n = run_group(run, a->arg, table_id, depth);
            if (n == NEXT_ABORT) {
                return NEXT_ABORT;
            }
            if (n == NEXT_GOTO) {
                /* A group that does not exist (deleted since the flow's
                 * version cannot be: see run_group()) ends the flow's
                 * actions, as Open vSwitch's xlate_group_action(). */
                return next;
            }
            break;
        }
        case FDP_ACT_CONTROLLER:
            stamp_controller(run, a, table_id);
            break;
        case FDP_ACT_SET_VLAN_VID:
        case FDP_ACT_SET_VLAN_PCP:
        case FDP_ACT_STRIP_VLAN:
        case FDP_ACT_PUSH_VLAN:
        case FDP_ACT_SET_FIELD:
            fdp__actions_add_record(&run->s->composed, a);
            track_packet_action(key, a);
            break;
        case FDP_ACT_METER:
            /* The datapath runs it (datapath/meter.c), by id: a meter
             * changed or removed needs no new composition. */
            fdp__actions_add_record(&run->s->composed, a);
            break;
        case FDP_N_ACTION_TYPES:
            break;
        }
    }
    if (run->s->composed.error) {
        run->error = ENOMEM;
        return NEXT_ABORT;
    }
    return next;
}

/* Composes controller action 'a', run from table 'table_id', stamped
 * with what its packet-in says beside the packet (Open vSwitch's
 * xlate_controller_action()): the table, the cookie of the flow that
 * holds it, and the reason: a plain "action" is "packet_out" in a
 * packet-out's actions (and what they resubmit to), "group" in a group's
 * bucket, and an explicit miss in a table-miss flow. */
static void
stamp_controller(struct run *run, const struct fdp__action *a,
                 unsigned int table_id)
{
    struct fdp__controller c = fdp__action_controller(a);

    if (c.reason == FDP__CTL_ACTION) {
        if (run->packet_out) {
            c.reason = FDP__CTL_PACKET_OUT;
        } else if (run->group_depth) {
            c.reason = FDP__CTL_GROUP;
        } else if (run->rule && fdp__rule_is_table_miss(run->rule)) {
            c.reason = FDP__CTL_EXPLICIT_MISS;
        }
    }
    c.stamped = true;
    c.table_id = (uint8_t) table_id;
    c.cookie = run->rule ? run->rule->cookie : UINT64_MAX;
    /* The metadata and registers now, for the packet-in's metadata. */
    uint64_t state[FDP__WORD_XREG7 + 1 - FDP__WORD_METADATA];
    size_t n_state = 0;
    c.state_map = 0;
    for (size_t i = 0; i < sizeof state / sizeof state[0]; i++) {
        uint64_t w = run->r->key.w[FDP__WORD_METADATA + i];
        if (w) {
            c.state_map |= UINT64_C(1) << i;
            state[n_state++] = w;
        }
    }
    c.state = state;
    if (fdp__actions_add_controller(&run->s->composed, &c)) {
        run->s->composed.error = ENOMEM;
    }
}

/* Runs the action list 'acts' (run_records()). */
static enum next
run_list(struct run *run, const struct fdp_actions *acts,
         unsigned int table_id, unsigned int depth, unsigned int *gotop)
{
    return run_records(run, acts->words, acts->words + acts->n_words,
                       table_id, depth, gotop);
}

/* Runs the actions of 'rule', found in table 'table_id' at resubmit
 * depth 'depth'. */
static enum next
run_actions(struct run *run, const struct fdp_rule *rule,
            unsigned int table_id, unsigned int depth, unsigned int *gotop)
{
    const struct fdp_actions *acts = fdp__rule_actions(rule);
    const struct fdp_rule *outer = run->rule;

    run->rule = rule;
    enum next next = run_records(run, acts->words,
                                 acts->words + acts->n_words, table_id,
                                 depth, gotop);
    run->rule = outer;
    return next;
}

/* push:FIELD[a..b] and pop:FIELD[a..b] (lib/other-actions.h). */
static void
run_stack(struct run *run, const struct fdp__action *a)
{
    struct fdp__subfield sf = fdp__action_subfield(a);
    uint64_t ones = sf.n_bits >= 64 ? UINT64_MAX
                                    : (UINT64_C(1) << sf.n_bits) - 1;
    uint64_t v;

    if (a->type == FDP_ACT_STACK_PUSH) {
        v = (uint64_t) (fdp__key_get(&run->r->key, sf.field) >> sf.ofs);
        if (fdp__stack_push(&run->s->stack, v & ones, sf.n_bits)) {
            run->error = ENOMEM;
        }
    } else if (fdp__stack_pop(&run->s->stack, &v)) {
        write_field(run, sf.field, (v & ones) << sf.ofs, ones << sf.ofs);
    }
    /* An empty stack: Open vSwitch reports "stack underflow" and writes
     * nothing. */
}

/* output:FIELD[a..b]: output to the port the subfield holds, as
 * Open vSwitch's xlate_output_reg_action() (nothing above 65535). */
static void
run_output_reg(struct run *run, const struct fdp__action *a)
{
    struct fdp__subfield sf = fdp__action_subfield(a);
    uint64_t ones = sf.n_bits >= 64 ? UINT64_MAX
                                    : (UINT64_C(1) << sf.n_bits) - 1;
    uint64_t port = (uint64_t) (fdp__key_get(&run->r->key, sf.field)
                                >> sf.ofs) & ones;

    if (port == FDP_PORT_CONTROLLER) {
        struct fdp__action ctl = { .type = FDP_ACT_CONTROLLER, .n_words = 1,
                                   .arg = UINT16_MAX };
        fdp__actions_add_record(&run->s->composed, &ctl);
    } else if (port == FDP_PORT_IN_PORT
               || (port && port < FDP_PORT_MAX)) {
        compose_output(run, (uint32_t) port);
    }
    /* Other values name no port flowdp has (0, the reserved ports it does
     * not implement yet, above 65535): Open vSwitch outputs nothing to a
     * port that does not exist. */
}

/* What a clone() or a check_pkt_larger branch puts back after it: the
 * key, the stack and the queue. */
struct saved_run {
    struct fdp_key key;
    uint32_t queue;
    size_t stack_size;
    uint8_t *stack_copy;        /* NULL if the stack was empty. */
};

/* Saves 'run''s key, stack and queue into 'sv'.  Returns false (with
 * run->error ENOMEM) if out of memory. */
static bool
save_run(struct run *run, struct saved_run *sv)
{
    struct fdp__stack *stack = &run->s->stack;

    sv->key = run->r->key;
    sv->queue = run->queue;
    sv->stack_size = stack->size;
    sv->stack_copy = NULL;
    if (stack->size) {
        sv->stack_copy = malloc(stack->size);
        if (!sv->stack_copy) {
            run->error = ENOMEM;
            return false;
        }
        memcpy(sv->stack_copy, stack->bytes, stack->size);
    }
    return true;
}

/* Puts back the stack and the queue 'sv' saved. */
static void
restore_stack_queue(struct run *run, const struct saved_run *sv)
{
    struct fdp__stack *stack = &run->s->stack;

    if (sv->stack_copy) {
        /* A pop inside may have let a push overwrite what was below. */
        memcpy(stack->bytes, sv->stack_copy, sv->stack_size);
    }
    stack->size = sv->stack_size;
    run->queue = sv->queue;
}

/* Puts back the key 'sv' saved, after appending the records that turn the
 * packet's headers back to it from what the records composed since word
 * 'start' made of them. */
static void
restore_saved_packet(struct run *run, const struct saved_run *sv,
                     uint32_t start)
{
    const uint64_t *words = run->s->composed.words;
    int tags = fdp__composed_tag_delta(
        words + start, words + run->s->composed.n_words,
        (uint16_t) fdp__key_get(&sv->key, FDP_F_VLAN_TCI));

    fdp__compose_restore(&run->s->composed, &sv->key, &run->r->key, tags);
    run->r->key = sv->key;
}

/* clone(A) (lib/other-actions.h): A runs on a copy of the key, the stack
 * and the queue, which are put back after it; what A composed stays, and
 * records that turn the packet's headers back follow.  Returns NEXT_ABORT
 * only for what stops the whole composition (a limit, ENOMEM). */
static enum next
run_clone(struct run *run, const struct fdp__action *a,
          unsigned int table_id, unsigned int depth)
{
    struct saved_run sv;
    uint32_t start = run->s->composed.n_words;
    unsigned int gotop = 0;

    if (!save_run(run, &sv)) {
        return NEXT_ABORT;
    }
    run->clone_depth++;
    enum next n = run_records(run, fdp__action_clone_first(a),
                              fdp__action_clone_end(a), table_id, depth,
                              &gotop);
    run->clone_depth--;
    if (n == NEXT_ABORT && run->clone_stop) {
        run->clone_stop = false;
        n = NEXT_DONE;
    }
    restore_stack_queue(run, &sv);
    free(sv.stack_copy);
    if (n == NEXT_ABORT || run->s->composed.error) {
        return NEXT_ABORT;
    }
    restore_saved_packet(run, &sv, start);
    return NEXT_DONE;
}

/* One branch of check_pkt_larger 'a' (lib/other-actions.h): from the
 * state 'sv' saved before it, with the destination bit 'larger', the
 * records from 'rest' to 'end' (the rest of the flow's actions) and the
 * tables they go on to, then the records that turn the packet back.  A
 * dec_ttl that kills the packet ends the branch (as in a clone), a table
 * that misses ends it with nothing more. */
static enum next
run_cpl_branch(struct run *run, const struct fdp__action *a, bool larger,
               const uint64_t *rest, const uint64_t *end,
               unsigned int table_id, unsigned int depth,
               const struct saved_run *sv)
{
    uint32_t start = run->s->composed.n_words;
    fdp_u128 bit = (fdp_u128) 1 << fdp__action_cpl_ofs(a);
    unsigned int gotop = 0;

    run->r->key = sv->key;
    restore_stack_queue(run, sv);
    write_field(run, (enum fdp_field) a->field, larger ? bit : 0, bit);
    run->clone_depth++;
    enum next n = run_records(run, rest, end, table_id, depth, &gotop);
    if (n == NEXT_GOTO) {
        bool missed = false;
        n = run_chain(run, gotop, FDP_STEP_GOTO, depth, &missed);
    }
    run->clone_depth--;
    if (n == NEXT_ABORT && run->clone_stop) {
        run->clone_stop = false;
        n = NEXT_DONE;
    }
    if (n == NEXT_ABORT || run->s->composed.error) {
        return NEXT_ABORT;
    }
    restore_saved_packet(run, sv, start);
    return NEXT_DONE;
}

/* check_pkt_larger(N)->DST[b] 'a', with the rest of its flow's records
 * from 'rest' to 'end': composes both branches (lib/other-actions.h,
 * "check_pkt_larger"), as Open vSwitch's xlate_check_pkt_larger() does,
 * and leaves the key, stack and queue as they were before it.  The rest
 * of the flow's actions are the branches': the caller runs none of them
 * again.  Returns NEXT_DONE, or NEXT_ABORT for what stops the whole
 * composition (a limit, ENOMEM). */
static enum next
run_check_pkt_larger(struct run *run, const struct fdp__action *a,
                     const uint64_t *rest, const uint64_t *end,
                     unsigned int table_id, unsigned int depth)
{
    struct fdp__actions_builder *b = &run->s->composed;
    struct saved_run sv;
    const struct fdp__action branch_h = {
        .type = FDP_ACT_CHECK_PKT_LARGER, .n_words = 2,
        .flags = FDP__ACT_CPL_BRANCH, .arg = fdp__action_cpl_len(a),
    };
    /* The record as the words it is copied as (the header by memcpy():
     * the builder reads records as words). */
    uint64_t branch[2] = { 0, 0 };
    memcpy(&branch[0], &branch_h, sizeof branch_h);
    struct fdp__action jump = {
        .type = FDP_ACT_CHECK_PKT_LARGER, .n_words = 1,
        .flags = FDP__ACT_CPL_JUMP,
    };
    struct fdp__action done = {
        .type = FDP_ACT_CHECK_PKT_LARGER, .n_words = 1,
        .flags = FDP__ACT_CPL_END,
    };
    if (!save_run(run, &sv)) {
        return NEXT_ABORT;
    }
    uint32_t branch_at = b->n_words;
    fdp__actions_add_record(b, (const struct fdp__action *) branch);
    enum next n = run_cpl_branch(run, a, true, rest, end, table_id, depth,
                                 &sv);
    uint32_t jump_at = b->n_words;
    if (n != NEXT_ABORT) {
        fdp__actions_add_record(b, &jump);
        n = run_cpl_branch(run, a, false, rest, end, table_id, depth, &sv);
    }
    if (n != NEXT_ABORT) {
        fdp__actions_add_record(b, &done);
    }
    restore_stack_queue(run, &sv);
    free(sv.stack_copy);
    run->r->key = sv.key;
    if (n == NEXT_ABORT || b->error) {
        return NEXT_ABORT;
    }
    /* The skips, now that the branches' lengths are known (the builder's
     * words may have moved: indices, not pointers). */
    b->words[branch_at + 1] = jump_at + jump.n_words
                              - (branch_at + branch_h.n_words);
    ((struct fdp__action *) &b->words[jump_at])->arg
        = b->n_words - done.n_words - (jump_at + jump.n_words);
    return NEXT_DONE;
}

/* ---------------------------------------------------------------------- */
/* Groups (lib/group.c, "Where groups live").                              */

/* Keeps counters 'c' for the datapath to count the packet on. */
static void
note_group_counters(struct run *run, struct fdp__rule_counters *c)
{
    struct scratch *s = run->s;

    if (s->n_group_counters == s->alloc_group_counters) {
        size_t alloc = s->alloc_group_counters ? 2 * s->alloc_group_counters
                                               : 8;
        struct fdp__rule_counters **p = realloc(s->group_counters,
                                                alloc * sizeof *p);
        if (!p) {
            run->error = ENOMEM;
            return;
        }
        s->group_counters = p;
        s->alloc_group_counters = alloc;
    }
    s->group_counters[s->n_group_counters++] = c;
}

/* The header fields a bucket may have rewritten, for a packet of the
 * saved key's kind: what restore_packet() compares. */
static size_t
restorable_fields(const struct fdp_key *key, enum fdp_field *f)
{
    fdp_u128 type = fdp__key_get(key, FDP_F_DL_TYPE);
    size_t n = 0;

    f[n++] = FDP_F_DL_DST;
    f[n++] = FDP_F_DL_SRC;
    if (type == FDP_ETH_TYPE_ARP || type == FDP_ETH_TYPE_RARP) {
        f[n++] = FDP_F_ARP_OP;
        f[n++] = FDP_F_ARP_SPA;
        f[n++] = FDP_F_ARP_TPA;
        f[n++] = FDP_F_ARP_SHA;
        f[n++] = FDP_F_ARP_THA;
        return n;
    }
    if (type == FDP_ETH_TYPE_IP) {
        f[n++] = FDP_F_NW_SRC;
        f[n++] = FDP_F_NW_DST;
    } else if (type == FDP_ETH_TYPE_IPV6) {
        f[n++] = FDP_F_IPV6_SRC;
        f[n++] = FDP_F_IPV6_DST;
        f[n++] = FDP_F_IPV6_LABEL;
    } else {
        return n;
    }
    f[n++] = FDP_F_NW_TOS;
    f[n++] = FDP_F_NW_ECN;
    f[n++] = FDP_F_NW_TTL;
    fdp_u128 proto = fdp__key_get(key, FDP_F_NW_PROTO);
    if (proto == FDP_IPPROTO_ICMP || proto == FDP_IPPROTO_ICMPV6) {
        f[n++] = FDP_F_ICMP_TYPE;
        f[n++] = FDP_F_ICMP_CODE;
    } else {
        f[n++] = FDP_F_TP_SRC;
        f[n++] = FDP_F_TP_DST;
    }
    return n;
}

/* After a bucket: the key goes back to 'saved' (registers and metadata
 * too, as Open vSwitch's xlate_group_bucket() restores its flow), and the
 * packet too, by the actions that undo what the bucket's composed actions
 * did to its headers, so that the next bucket, and the flow's actions
 * after the group, see the packet the group got. */
static void
restore_packet(struct run *run, const struct fdp_key *saved)
{
    struct fdp_key *key = &run->r->key;
    struct fdp__actions_builder *b = &run->s->composed;
    uint16_t was = (uint16_t) fdp__key_get(saved, FDP_F_VLAN_TCI);
    uint16_t now = (uint16_t) fdp__key_get(key, FDP_F_VLAN_TCI);

    if (was != now) {
        if (!(was & FDP_VLAN_CFI)) {
            fdp__actions_add(b, FDP_ACT_STRIP_VLAN, 0);
        } else {
            if (!(now & FDP_VLAN_CFI)) {
                fdp__actions_add(b, FDP_ACT_PUSH_VLAN, 0x8100);
            }
            fdp__actions_add(b, FDP_ACT_SET_VLAN_VID, was & FDP_VLAN_VID_MASK);
            fdp__actions_add(b, FDP_ACT_SET_VLAN_PCP, was >> 13);
        }
    }
    enum fdp_field fields[16];
    size_t n = restorable_fields(saved, fields);
    for (size_t i = 0; i < n; i++) {
        fdp_u128 v = fdp__key_get(saved, fields[i]);
        if (fdp__key_get(key, fields[i]) != v) {
            fdp__actions_add_set_field(b, fields[i], v, 0);
        }
    }
    *key = *saved;
}

/* Runs bucket 'b' of a group reached from table 'table_id'. */
static enum next
run_bucket(struct run *run, const struct fdp__bucket *b,
           unsigned int table_id, unsigned int depth)
{
    struct fdp_key saved = run->r->key;
    unsigned int ignored;

    note_group_counters(run, b->counters);
    if (!b->set) {
        return NEXT_DONE;
    }
    run->group_depth++;
    enum next n = run_list(run, b->set, table_id, depth, &ignored);
    run->group_depth--;
    if (n == NEXT_ABORT) {
        return NEXT_ABORT;
    }
    restore_packet(run, &saved);
    return NEXT_DONE;
}

/* Runs group 'group_id' (Open vSwitch's xlate_group_action()): NEXT_DONE
 * when it ran, NEXT_GOTO when there is no such group (the caller ends its
 * flow's actions), NEXT_ABORT at a limit.  A group counts as a resubmit
 * against the pipeline's limits, as xlate_resubmit_resource_check() has
 * it, which also bounds chains of groups. */
static enum next
run_group(struct run *run, uint32_t group_id, unsigned int table_id,
          unsigned int depth)
{
    if (depth + 1 > FDP_PIPELINE_MAX_DEPTH
        || ++run->s->n_resubmits > FDP_PIPELINE_MAX_RESUBMITS) {
        run->s->limit = true;
        return NEXT_ABORT;
    }
    const struct fdp__group_set *set = run->view->pub.groups;
    const struct fdp_group *g = fdp__group_set_find(set, group_id);
    if (!g) {
        return NEXT_GOTO;
    }
    note_group_counters(run, g->counters);
    switch ((enum fdp__group_type) g->type) {
    case FDP__GROUP_ALL:
    case FDP__GROUP_INDIRECT:
        for (uint32_t i = 0; i < g->n_buckets; i++) {
            if (run_bucket(run, &g->buckets[i], table_id, depth + 1)
                == NEXT_ABORT) {
                return NEXT_ABORT;
            }
        }
        break;
    case FDP__GROUP_SELECT:
    case FDP__GROUP_FF: {
        const struct fdp__bucket *b
            = g->type == FDP__GROUP_SELECT
              ? fdp__group_select_bucket(set, g, &run->r->key)
              : fdp__group_ff_bucket(set, g);
        if (b && run_bucket(run, b, table_id, depth + 1) == NEXT_ABORT) {
            return NEXT_ABORT;
        }
        break;
    }
    }
    return run->error ? NEXT_ABORT : NEXT_DONE;
}

/* Looks table 'table_id' up and runs what it finds. */
static enum next
run_lookup(struct run *run, unsigned int table_id,
           enum fdp_pipeline_step_kind kind, unsigned int depth,
           bool *missed, unsigned int *gotop)
{
    const struct view_table *vt = table_id < FDP_PIPELINE_N_TABLES
                                  ? &run->view->t[table_id] : NULL;
    uint32_t conj_id = 0;
    const struct fdp_rule *rule = vt && vt->pt
                                  ? table_lookup(vt, &run->r->key,
                                                 run->view->pub.version,
                                                 run->linear, &conj_id)
                                  : NULL;
    struct fdp_pipeline_step *st = push_step(run->r);

    if (!st) {
        run->error = ENOMEM;
        return NEXT_ABORT;
    }
    *st = (struct fdp_pipeline_step) {
        .rule = rule, .table_id = (uint8_t) table_id, .kind = (uint8_t) kind,
        .depth = (uint16_t) depth, .conj_id = conj_id,
    };
    size_t step_index = run->r->n_steps - 1;
    if (run->trace) {
        run->trace(run->aux, st, &run->r->key, false);
    }
    *missed = !rule;
    if (!rule) {
        return NEXT_DONE;
    }
    enum next next = run_actions(run, rule, table_id, depth, gotop);
    if (run->trace && (next != NEXT_ABORT || run->stop)) {
        /* 'st' may have moved as nested lookups grew the array. */
        run->trace(run->aux, &run->r->steps[step_index], &run->r->key, true);
    }
    return next;
}

/* Looks table 'table_id' up, runs what it finds, and follows its
 * goto_table actions to the end: the whole pipeline at depth 0, what a
 * resubmit runs at deeper ones.  '*missed' says whether the chain ended
 * at a lookup that found no flow. */
static enum next
run_chain(struct run *run, unsigned int table_id,
          enum fdp_pipeline_step_kind kind, unsigned int depth, bool *missed)
{
    for (;;) {
        unsigned int next_table = 0;
        enum next next = run_lookup(run, table_id, kind, depth, missed,
                                    &next_table);
        if (next != NEXT_GOTO || *missed) {
            return next;
        }
        table_id = next_table;
        kind = FDP_STEP_GOTO;
    }
}

int
fdp_pipeline_classify(struct fdp_pipeline *p, const struct fdp_key *key,
                      unsigned int flags, struct fdp_pipeline_result *r,
                      fdp_pipeline_trace_cb *trace, void *aux)
{
    return fdp__pipeline_classify_view(p, fdp__pipeline_view(p), key, flags,
                                       r, trace, aux);
}

/* Readies 'r' (and its scratch) for a classification of 'key' and fills
 * in '*run'.  Returns 0 or ENOMEM. */
static int
run_start(struct run *run, struct fdp_pipeline *p, const struct view *view,
          const struct fdp_key *key, unsigned int flags,
          struct fdp_pipeline_result *r)
{
    struct scratch *s = r->scratch;

    if (!s) {
        s = r->scratch = calloc(1, sizeof *s);
        if (!s) {
            return ENOMEM;
        }
        fdp__actions_builder_init(&s->composed);
    }
    fdp__actions_builder_clear(&s->composed);
    s->n_resubmits = 0;
    s->limit = false;
    s->stack.size = 0;
    s->n_group_counters = 0;
    r->n_steps = 0;
    r->limit_dropped = false;
    r->table_missed = false;
    r->key = *key;
    /* The registers, metadata and conj_id start at zero; the
     * connection-tracking words keep what the key says (key.h). */
    static_assert(FDP__WORD_METADATA == FDP_KEY_PACKET_WORDS
                  && FDP__WORD_XREG7 + 1 == FDP__WORD_CT_STATE,
                  "the register words are 12 to the ct words");
    memset(&r->key.w[FDP__WORD_METADATA], 0,
           (FDP__WORD_XREG7 + 1 - FDP__WORD_METADATA) * sizeof r->key.w[0]);
    r->key.w[FDP__WORD_CONJ_ID] &= ~FDP__MASK(CONJ_ID);
    *run = (struct run) {
        .p = p, .view = view, .r = r, .s = s,
        .linear = flags & FDP__PIPELINE_LINEAR,
        .packet_in_port = (uint32_t) fdp__key_get(key, FDP_F_IN_PORT),
    };
    return 0;
}

/* Finishes 'run''s result once its chain is done ('missed': it ended at a
 * lookup that found nothing).  Returns 0 or ENOMEM. */
static int
run_finish(struct run *run, bool missed)
{
    struct fdp_pipeline_result *r = run->r;
    struct scratch *s = run->s;

    r->table_missed = missed && !s->limit;
    if (run->error) {
        return run->error;
    }
    r->limit_dropped = s->limit;
    if (s->limit) {
        fdp__actions_builder_clear(&s->composed);
        s->n_group_counters = 0;
    }

    /* The composed list, in the result's reusable buffer. */
    uint32_t n_words = s->composed.n_words;
    if (!r->actions || s->actions_alloc < n_words) {
        size_t alloc = n_words > 8 ? n_words : 8;
        struct fdp_actions *acts = realloc(r->actions,
                                           sizeof *acts
                                           + alloc * sizeof(uint64_t));
        if (!acts) {
            return ENOMEM;
        }
        r->actions = acts;
        s->actions_alloc = alloc;
    }
    r->actions->n_words = n_words;
    r->actions->n_actions = s->composed.n_actions;
    if (n_words) {
        memcpy(r->actions->words, s->composed.words,
               n_words * sizeof(uint64_t));
    }
    return 0;
}

int
fdp__pipeline_classify_view(struct fdp_pipeline *p,
                            const struct fdp__pipeline_view *pub,
                            const struct fdp_key *key, unsigned int flags,
                            struct fdp_pipeline_result *r,
                            fdp_pipeline_trace_cb *trace, void *aux)
{
    struct run run;
    int error = run_start(&run, p, CONTAINER_OF(pub, struct view, pub), key,
                          flags, r);

    if (error) {
        return error;
    }
    run.trace = trace;
    run.aux = aux;
    bool missed = false;
    run_chain(&run, 0, FDP_STEP_START, 0, &missed);
    return run_finish(&run, missed);
}

static int
classify_ct(struct fdp_pipeline *p, const struct fdp__pipeline_view *pub,
            const struct fdp_key *key, int table, unsigned int flags,
            struct fdp_pipeline_result *r, fdp_pipeline_trace_cb *trace,
            void *aux, fdp_pipeline_ct_cb *ct_cb, void *ct_aux)
{
    if (table >= FDP_PIPELINE_N_TABLES) {
        return EINVAL;
    }

    struct run run;
    int error = run_start(&run, p, CONTAINER_OF(pub, struct view, pub), key,
                          flags, r);
    if (error) {
        return error;
    }
    if (table >= 0) {
        /* run_start() zeroed the registers and metadata, as a packet from
         * a port starts; a continuation keeps the ones its ct froze
         * (conj_id, which only a conjunction's own lookup sets, stays
         * zero). */
        memcpy(&r->key.w[FDP__WORD_METADATA], &key->w[FDP__WORD_METADATA],
               (FDP__WORD_XREG7 + 1 - FDP__WORD_METADATA)
               * sizeof key->w[0]);
    }
    run.trace = trace;
    run.aux = aux;
    run.ct_cb = ct_cb;
    run.ct_aux = ct_aux;
    bool missed = false;
    run_chain(&run, table >= 0 ? (unsigned int) table : 0,
              table >= 0 ? FDP_STEP_CT : FDP_STEP_START, 0, &missed);
    return run_finish(&run, missed);
}

int
fdp__pipeline_resume_view(struct fdp_pipeline *p,
                          const struct fdp__pipeline_view *pub,
                          const struct fdp_key *key, unsigned int table,
                          unsigned int flags, struct fdp_pipeline_result *r,
                          fdp_pipeline_trace_cb *trace, void *aux)
{
    if (table >= FDP_PIPELINE_N_TABLES) {
        return EINVAL;
    }
    return classify_ct(p, pub, key, (int) table, flags, r, trace, aux, NULL,
                       NULL);
}

int
fdp__pipeline_compose_view(struct fdp_pipeline *p,
                           const struct fdp__pipeline_view *pub,
                           const struct fdp_key *key,
                           const struct fdp_actions *actions,
                           struct fdp_pipeline_result *r)
{
    struct run run;
    int error = run_start(&run, p, CONTAINER_OF(pub, struct view, pub), key,
                          0, r);

    if (error) {
        return error;
    }
    /* The registers and metadata the packet-out gave (run_start() zeroed
     * them). */
    memcpy(&r->key.w[FDP__WORD_METADATA], &key->w[FDP__WORD_METADATA],
           (FDP__WORD_XREG7 + 1 - FDP__WORD_METADATA) * sizeof key->w[0]);
    unsigned int next_table = 0;
    run.packet_out = true;
    run_list(&run, actions, 0, 0, &next_table);
    return run_finish(&run, false);
}

int
fdp_pipeline_classify_ct(struct fdp_pipeline *p, const struct fdp_key *key,
                         int table, struct fdp_pipeline_result *r,
                         fdp_pipeline_trace_cb *trace, void *aux,
                         fdp_pipeline_ct_cb *ct_cb, void *ct_aux)
{
    return classify_ct(p, fdp__pipeline_view(p), key, table, 0, r, trace,
                       aux, ct_cb, ct_aux);
}

/* Batch lookups.  fdp__pipeline_classify_batch() takes a batch through the
 * pipeline table by table: the packets whose next lookup is in table T
 * (table 0 for all at first, then wherever their goto_tables sent them;
 * goto_table only goes forward, so taking the lowest T each round visits
 * each table once) are looked up together, one batch lookup of T's flows
 * per round (and one per clause of T's conjunctions, for the packets still
 * undecided), and each then runs its flow's actions as a lone
 * classification would.  A resubmit runs its lookups there, one packet at
 * a time: it is rarer, and its lookups nest.  The results are the lone
 * classification's, step for step. */

/* The best flows of 'vt' for the 'n' keys 'keys' at 'version' (see
 * table_lookup(), which this does for a batch), into 'rules' and
 * 'conj_ids'.
 *
 * The packets still undecided, and those a conjunction is still possible
 * for, are bitmaps over 'keys' (bit i: keys[i]), which is also what a
 * clause lookup takes and returns (fdp__table_match_any_batch()): a
 * clause is asked only about the packets every earlier clause matched,
 * with no list to compact or copy between the clauses.  'conj_ids' may be
 * NULL (the datapath's one-table lookups need only the flows). */
_Static_assert(FDP_TABLE_BATCH_MAX <= 64,
               "a batch's packets are bits of one uint64_t");
static void
table_lookup_batch(const struct view_table *vt,
                   const struct fdp_key *const keys[], size_t n,
                   uint64_t version, const struct fdp_rule *rules[],
                   uint32_t conj_ids[])
{
    struct fdp_table *hard = vt->pt->hard;
    const struct conj_index *ix = vt->index;

    for (size_t i = 0; conj_ids && i < n; i++) {
        conj_ids[i] = 0;
    }
    if (!ix) {
        fdp__table_lookup_batch_uncounted_at(hard, keys, n, rules, version);
        return;
    }

    /* H for every packet: one flow for all of them when the shortcuts
     * know it ("Shortcuts"), else a lookup of 'hard'. */
    bool uniform = !ix->hard_wild || ix->hard_const;
    const struct fdp_rule *h_all = ix->hard_const ? ix->hard_best : NULL;
    if (uniform) {
        for (size_t i = 0; i < n; i++) {
            rules[i] = h_all;
        }
    } else {
        fdp__table_lookup_batch_uncounted_at(hard, keys, n, rules, version);
    }

    uint64_t open = n == 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
    for (uint32_t l = 0; l < ix->n_levels && open; l++) {
        const struct conj_level *lv = &ix->levels[l];
        /* Those whose H is at this level or above are decided: H. */
        if (uniform) {
            if (h_all && h_all->priority >= lv->priority) {
                break;
            }
        } else {
            for (uint64_t m = open; m; m &= m - 1) {
                size_t i = (size_t) __builtin_ctzll(m);
                if (rules[i] && rules[i]->priority >= lv->priority) {
                    open &= ~(UINT64_C(1) << i);
                }
            }
        }
        for (uint32_t c = 0; c < lv->n_conjs && open; c++) {
            const struct conj *cj = lv->conjs[c];
            uint64_t cand = open;
            for (uint32_t q = 0; q < cj->n && cand; q++) {
                cand = fdp__table_match_any_batch(cj->clauses[q], keys, cand,
                                                  version);
            }
            /* 'cand' completes the conjunction: resolve each (the same
             * way for all when H and the result are known). */
            if (uniform && cj->resolved && cand) {
                const struct fdp_rule *r = cj->result;
                if (h_all && fdp__rule_beats(h_all, r)) {
                    r = h_all;
                }
                if (r) {
                    open &= ~cand;
                    for (; cand; cand &= cand - 1) {
                        size_t i = (size_t) __builtin_ctzll(cand);
                        rules[i] = r;
                        if (conj_ids) {
                            conj_ids[i] = cj->id;
                        }
                    }
                }
                continue;
            }
            for (; cand; cand &= cand - 1) {
                size_t i = (size_t) __builtin_ctzll(cand);
                const struct fdp_rule *h = rules[i], *r;
                if (cj->resolved) {
                    r = cj->result;
                    if (h && fdp__rule_beats(h, r)) {
                        r = h;
                    }
                } else {
                    struct fdp_key k2 = *keys[i];
                    fdp__key_set(&k2, FDP_F_CONJ_ID, cj->id);
                    r = fdp__table_lookup_at(hard, &k2, version);
                }
                if (r) {
                    rules[i] = r;
                    if (conj_ids) {
                        conj_ids[i] = cj->id;
                    }
                    open &= ~(UINT64_C(1) << i);
                }
            }
        }
    }
}

void
fdp__pipeline_single_lookup_batch(const struct fdp__pipeline_view *pub,
                                  const struct fdp_key *const keys[],
                                  size_t n, const struct fdp_rule *rules[])
{
    const struct view *view = CONTAINER_OF(pub, struct view, pub);

    table_lookup_batch(&view->t[0], keys, n, pub->version, rules, NULL);
}

int
fdp__pipeline_classify_batch(struct fdp_pipeline *p,
                             const struct fdp__pipeline_view *pub,
                             const struct fdp_key *const keys[], size_t n,
                             struct fdp_pipeline_result *const results[])
{
    const struct view *view = CONTAINER_OF(pub, struct view, pub);
    struct run runs[FDP_TABLE_BATCH_MAX];
    uint8_t next[FDP_TABLE_BATCH_MAX];      /* Table of the next lookup. */
    bool missed[FDP_TABLE_BATCH_MAX];
    uint64_t active = 0;                    /* Bit i: packet i goes on. */
    int error = 0;

    if (n > FDP_TABLE_BATCH_MAX) {
        return EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        error = run_start(&runs[i], p, view, keys[i], 0, results[i]);
        if (error) {
            return error;
        }
        next[i] = 0;
        missed[i] = false;
        active |= UINT64_C(1) << i;
    }
    while (active) {
        /* The lowest table a packet waits for, and who waits there. */
        unsigned int t = FDP_PIPELINE_N_TABLES;
        for (uint64_t a = active; a; a &= a - 1) {
            size_t i = (size_t) __builtin_ctzll(a);
            t = next[i] < t ? next[i] : t;
        }
        uint8_t idx[FDP_TABLE_BATCH_MAX];
        const struct fdp_key *bk[FDP_TABLE_BATCH_MAX];
        const struct fdp_rule *rules[FDP_TABLE_BATCH_MAX];
        uint32_t conj_ids[FDP_TABLE_BATCH_MAX];
        size_t m = 0;
        for (uint64_t a = active; a; a &= a - 1) {
            size_t i = (size_t) __builtin_ctzll(a);
            if (next[i] == t) {
                idx[m] = (uint8_t) i;
                bk[m++] = &results[i]->key;
            }
        }
        const struct view_table *vt = &view->t[t];
        if (vt->pt) {
            table_lookup_batch(vt, bk, m, pub->version, rules, conj_ids);
        } else {
            memset(rules, 0, m * sizeof rules[0]);
            memset(conj_ids, 0, m * sizeof conj_ids[0]);
        }

        /* Each packet runs what it found, as run_lookup() does. */
        for (size_t j = 0; j < m; j++) {
            size_t i = idx[j];
            struct run *run = &runs[i];
            struct fdp_pipeline_step *st = push_step(run->r);
            enum next nx = NEXT_DONE;
            unsigned int go = 0;
            if (!st) {
                run->error = ENOMEM;
            } else {
                *st = (struct fdp_pipeline_step) {
                    .rule = rules[j], .table_id = (uint8_t) t,
                    /* Table 0 only at the start: goto_table goes
                     * forward. */
                    .kind = (uint8_t) (next[i] ? FDP_STEP_GOTO
                                               : FDP_STEP_START),
                    .depth = 0, .conj_id = conj_ids[j],
                };
                missed[i] = !rules[j];
                if (rules[j]) {
                    nx = run_actions(run, rules[j], t, 0, &go);
                }
            }
            if (nx == NEXT_GOTO) {
                next[i] = (uint8_t) go;
            } else {
                active &= ~(UINT64_C(1) << i);
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        int e = run_finish(&runs[i], missed[i]);
        error = error ? error : e;
    }
    return error;
}

/* ---------------------------------------------------------------------- */
/* Reading.                                                                */

const struct fdp__pipeline_view *
fdp__pipeline_view(const struct fdp_pipeline *p)
{
    return &FDP_RCU_GET(p->view)->pub;
}

uint64_t
fdp_pipeline_version(const struct fdp_pipeline *p)
{
    return __atomic_load_n(&p->version, __ATOMIC_ACQUIRE);
}

struct fdp_table *
fdp_pipeline_get_table(struct fdp_pipeline *p, uint8_t table_id)
{
    struct ptable *pt = table_id < FDP_PIPELINE_N_TABLES
                        ? FDP_RCU_GET(p->tables[table_id]) : NULL;

    return pt ? pt->hard : NULL;
}

/* fdp_pipeline_for_each() over one dim: its primary flows only. */
struct dim_each_aux {
    const struct dim_view *d;
    bool (*cb)(const struct fdp_rule *, void *aux);
    void *aux;
    bool stopped;
};

static bool
dim_each_cb(const struct fdp_rule *r, void *aux_)
{
    struct dim_each_aux *aux = aux_;

    if (is_primary_of(r, aux->d->id, aux->d->n, aux->d->k)
        && !aux->cb(r, aux->aux)) {
        aux->stopped = true;
        return false;
    }
    return true;
}

/* fdp_table_for_each() over 'hard', noting whether 'cb' stopped it. */
static bool
hard_each_cb(const struct fdp_rule *r, void *aux_)
{
    struct dim_each_aux *aux = aux_;

    if (!aux->cb(r, aux->aux)) {
        aux->stopped = true;
        return false;
    }
    return true;
}

/* Calls 'cb' for each flow of 'pt'; false if 'cb' stopped it. */
static bool
table_for_each(struct ptable *pt,
               bool (*cb)(const struct fdp_rule *, void *aux), void *aux)
{
    struct dim_each_aux da = { .cb = cb, .aux = aux };

    fdp_table_for_each(pt->hard, hard_each_cb, &da);
    if (da.stopped) {
        return false;
    }

    /* The dims are the writer's list; a reader walks the published
     * index's. */
    const struct conj_index *ix = FDP_RCU_GET(pt->index);
    for (size_t i = 0; ix && i < ix->n_dims; i++) {
        da.d = &ix->dims[i];
        fdp_table_for_each(ix->dims[i].flows, dim_each_cb, &da);
        if (da.stopped) {
            return false;
        }
    }
    return true;
}

struct fdp__learn_cookies **
fdp__pipeline_learned_cookies(struct fdp_pipeline *p)
{
    return &p->learned_cookies;
}

const struct fdp_rule *
fdp__pipeline_find(struct fdp_pipeline *p, uint8_t table_id,
                   const struct fdp_match *match, uint16_t priority)
{
    int error;
    struct ptable *pt = table_id < FDP_PIPELINE_N_TABLES
                        ? get_ptable(p, table_id, false, &error) : NULL;

    return pt ? fdp__table_find(hard_of(pt), match, priority) : NULL;
}

void
fdp_pipeline_for_each(struct fdp_pipeline *p, uint8_t table_id,
                      bool (*cb)(const struct fdp_rule *, void *aux),
                      void *aux)
{
    for (size_t i = 0; i < FDP_PIPELINE_N_TABLES; i++) {
        struct ptable *pt = FDP_RCU_GET(p->tables[i]);
        if (pt && (table_id == FDP_TABLE_ALL || table_id == i)
            && !table_for_each(pt, cb, aux)) {
            return;
        }
    }
}

struct stats_aux {
    uint64_t n_flows;
    uint64_t n_packets;
};

static bool
stats_cb(const struct fdp_rule *r, void *aux_)
{
    struct stats_aux *aux = aux_;
    struct fdp_rule_stats s;

    fdp_rule_get_stats(r, &s);
    aux->n_flows++;
    aux->n_packets += s.n_packets;
    return true;
}

bool
fdp_pipeline_get_table_stats(struct fdp_pipeline *p, uint8_t table_id,
                             struct fdp_pipeline_table_stats *stats)
{
    struct ptable *pt = table_id < FDP_PIPELINE_N_TABLES
                        ? FDP_RCU_GET(p->tables[table_id]) : NULL;

    memset(stats, 0, sizeof *stats);
    if (!pt) {
        return false;
    }
    struct stats_aux aux = { 0, 0 };
    fdp_table_read_lock();
    table_for_each(pt, stats_cb, &aux);
    fdp_table_read_unlock();
    stats->n_flows = aux.n_flows;
    stats->n_matched = aux.n_packets;
    struct fdp_table_stats ts;
    fdp_table_get_stats(pt->hard, &ts);
    stats->memory_bytes = ts.memory_bytes;
    fdp_table_read_lock();
    const struct conj_index *ix = FDP_RCU_GET(pt->index);
    for (size_t i = 0; ix && i < ix->n_dims; i++) {
        fdp_table_get_stats(ix->dims[i].flows, &ts);
        stats->memory_bytes += ts.memory_bytes;
    }
    if (ix) {
        stats->memory_bytes += sizeof *ix
                               + ix->n_dims * (sizeof *ix->dims
                                               + sizeof *ix->all
                                               + sizeof ix->levels[0]);
    }
    fdp_table_read_unlock();
    stats->n_missed = __atomic_load_n(&pt->n_missed, __ATOMIC_RELAXED);
    return true;
}

void
fdp_pipeline_account_misses(struct fdp_pipeline *p,
                            const struct fdp_pipeline_step *steps,
                            size_t n_steps, bool limit_dropped,
                            uint64_t n_packets)
{
    for (size_t i = 0; i < n_steps; i++) {
        if (!steps[i].rule) {
            struct ptable *pt = steps[i].table_id < FDP_PIPELINE_N_TABLES
                                ? FDP_RCU_GET(p->tables[steps[i].table_id])
                                : NULL;
            if (pt) {
                __atomic_add_fetch(&pt->n_missed, n_packets,
                                   __ATOMIC_RELAXED);
            }
        }
    }
    if (limit_dropped) {
        __atomic_add_fetch(&p->n_limit_drops, n_packets, __ATOMIC_RELAXED);
    }
}

uint64_t
fdp_pipeline_n_limit_drops(const struct fdp_pipeline *p)
{
    return __atomic_load_n(&p->n_limit_drops, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------- */
/* Groups: the hooks of lib/group.c.                                       */

struct fdp__group_table *
fdp__pipeline_groups(struct fdp_pipeline *p)
{
    return &p->groups;
}

bool
fdp__pipeline_auto_begin(struct fdp_pipeline *p)
{
    return auto_begin(p);
}

int
fdp__pipeline_auto_end(struct fdp_pipeline *p, bool started, int error)
{
    return auto_end(p, started, error);
}

struct fdp__rule_counters *const *
fdp__pipeline_result_group_counters(const struct fdp_pipeline_result *r,
                                    size_t *n)
{
    const struct scratch *s = r->scratch;

    *n = s ? s->n_group_counters : 0;
    return s ? s->group_counters : NULL;
}

int
fdp__pipeline_remove_group_users(struct fdp_pipeline *p, uint32_t group_id,
                                 size_t *np)
{
    struct fdp_match *all = fdp_match_create();
    size_t total = 0;
    int error = all ? 0 : ENOMEM;

    /* Flows of conjunctions hold conjunction actions only: only 'hard'
     * can hold a group action. */
    for (size_t i = 0; !error && i < FDP_PIPELINE_N_TABLES; i++) {
        struct ptable *pt = p->tables[i];
        if (!pt) {
            continue;
        }
        struct fdp_table_filter f = { .match = all };
        struct fdp_rule **rules = NULL;
        size_t n = 0;
        error = fdp__table_select(hard_of(pt), &f, &rules, &n);
        for (size_t k = 0; !error && k < n; k++) {
            if (!fdp__actions_name_group(fdp__rule_actions(rules[k]),
                                         group_id)) {
                continue;
            }
            struct fdp_flow_spec spec;
            struct fdp_match m;
            fdp_rule_get_spec(rules[k], &spec, &m);
            struct fdp_match *mc = fdp_match_clone(&m);
            if (!mc) {
                error = ENOMEM;
                break;
            }
            total += remove_exact(pt, mc, spec.priority);
            fdp_match_destroy(mc);
        }
        free(rules);
    }
    fdp_match_destroy(all);
    *np = error ? 0 : total;
    return error;
}
