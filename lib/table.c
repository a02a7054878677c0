/*
 * The flow table.
 *
 * What it is for
 * ==============
 * fdp_table answers "which flow does this packet hit?" for the datapath,
 * at line rate, while the control plane adds and removes flows.  It
 * combines sub-tables, walked in priority order, with versioned rules
 * that make every change atomic.
 *
 * Design
 * ======
 * Sub-tables.  Every sub-table implements one class (lib/subtable.h):
 * tuple space, one hash table per mask (lib/tss.c), and the partitioned
 * sub-table (lib/cut.c, leaves of a few flows under a tree of cuts, with
 * pipapo, lib/pipapo.c, for a leaf no cut can split), one per table, for
 * flows with ranges and for the flows of masks moved out of tuple space:
 * the least hit past the mask budget, and, in a table of at least
 * SPARSE_MIN_FLOWS flows past it, the sparse ones (fewer than
 * TSS_RULES_PER_LEVEL flows per priority level: an ACL's masks, whose
 * every flow has its own priority, which every lookup would otherwise
 * probe one after the other).  This file walks, ranks, fills, counts and
 * describes them through the class alone and never asks a sub-table's
 * kind (its implementation).  Its own policy reads the reason it gave
 * each (lib/subtable.h): the mask budget and the mask index cover the
 * sub-tables it made for one mask, and which sub-table a new flow goes to
 * is its one decision of where (add_rule(), trim_masks()).
 *
 * Priority walk.  The published view is an array of sub-tables sorted by
 * the best rule each may hold: max_priority descending, and among equal
 * max_priority by hits since the last ranking descending (re-ranked by
 * fdp_table_run(), as the Linux datapath sorts its masks by use), then by
 * flow count (the likelier hit while nothing has been counted yet).  A
 * lookup keeps the best rule found; it stops at the first sub-table whose
 * max_priority is below the best rule's priority (no later sub-table can
 * win), and skips a sub-table of equal max_priority whose earliest rule
 * at that priority (min_seq) was added after the best rule, because ties
 * go to the flow added first.  Each view entry copies its sub-table's
 * batch lookup function, so the walk makes one indirect call per
 * sub-table per batch and reads no class.
 *
 * Disjoint tables.  A megaflow cache never holds two flows one packet can
 * match (the slow path builds each megaflow so), and Open vSwitch's dpcls
 * relies on it: its first match ends the lookup.  fdp_table_set_disjoint()
 * declares the same of a table; its lookups end at their first match, in
 * hit order, so a table of non-overlapping flows at one priority probes
 * the sub-table most packets hit and stops.  Without the declaration a
 * match at priority p still visits every later sub-table whose bounds
 * allow a tie at p.
 *
 * Ties.  Within one sub-table, ties are the sub-table's business (a
 * tuple-space group keeps its rules best first; pipapo numbers rules in
 * priority order), so the walk needs to go on after a match at priority
 * p only if another sub-table may hold an overlapping flow at p.  Deciding
 * that on every insert would be quadratic, so inserts only mark the level
 * "may tie", and fdp_table_run() decides the levels that changed since it
 * last looked, off the insert path: it gathers every linked flow of those
 * levels and asks fdp__ties_level_tied() (lib/ties.c: classes of one
 * sub-table and mask, hashed on the bits two classes share) whether two
 * of them in different sub-tables overlap, within a work bound
 * (TIE_WORK_MAX, past which the level stays "may tie").  A removal only
 * marks a level that may tie for another look.  Each view carries a copy
 * of the bitmap of levels that may tie (none at all: no copy), and a
 * lookup whose best match is at a level not in it stops.  The bitmap is
 * conservative for every version a lookup may hold: a level is marked
 * before the view that admits its new flow is published, and a level is
 * cleared only from the flows linked when run looks, which include every
 * flow visible at any version still in use.  Cost: two 8 KB bitmaps per
 * table, an 8 KB copy per view while some level may tie, and at each run
 * with changes one walk of the flows plus the per-level decision
 * (lib/ties.c, "Cost").
 *
 * Indexes.  Writers find a flow's sub-table and an existing flow with the
 * same (match, priority) in hash maps (lib/hmap.c) keyed with a per-table
 * SipHash key, so an insert, a strict modify or a strict delete costs one
 * probe of each whatever the table holds, and flows chosen to collide
 * cannot make them quadratic.  Every linked rule is in the rule index,
 * including a removed or replaced one until it is unlinked; the probe
 * keeps the one visible in the open transaction.
 *
 * Versions (as Open vSwitch's classifier versions rules).  The table has a
 * version number; each rule is visible to lookups at versions
 * [add_version, remove_version).  A change made at version N = current + 1
 * is invisible until commit stores N, with one release store: so a
 * transaction of 100,000 flows is one publication, and a lookup that
 * loaded the version sees each flow before or after the change, never a
 * mixture.  Replacing a flow's actions inserts a new version of the rule
 * (same match, priority and sequence number, same statistics object) and
 * removes the old one at the same version.  Lookups that loaded the old
 * version may still need a removed rule, so it stays linked, invisible,
 * until the writer has waited for a grace period; the writer does so only
 * once REMOVED_PENDING_MAX removed rules have gathered (and in every
 * fdp_table_run()), then unlinks them all and frees them after another
 * grace period.  A grace period lasts about as long as the longest
 * read-side section in progress (lib/rcu.h), tens of microseconds under
 * a busy datapath, so single removals cost a few microseconds each
 * instead of one wait each (figures: docs/PERFORMANCE.md, "Figures behind
 * design choices").
 * abort unlinks what the transaction added and clears remove_version on
 * what it removed: lookups never saw either.
 *
 * Invariants
 * ==========
 * - At any version, at most one visible rule has a given (match,
 *   priority).
 * - Every rule the writer knows is linked in one sub-table (rule->owner)
 *   and in the rule index; every sub-table with rules is in the view; a
 *   tuple-space subtable is in the subtable index under its mask.
 * - view order: max_priority non-increasing, by the bounds copied into
 *   the view's entries, which never change once the view is published.
 * - A published view's bounds are at least the (priority, seq) of every
 *   rule of that entry's sub-table visible at any version a lookup may
 *   still hold: bounds rise (inserts) before the view that admits the
 *   rule is published, and fall (fdp_table_run()) only in a new view.
 *
 * Thread-safety
 * =============
 * See table.h: modifiers serialise on 'mutex'; lookups run lock-free in an
 * RCU read-side section; reclamation goes through fdp__rcu_defer().
 *
 * Worked example
 * ==============
 * Flows A "priority=10,tcp,tp_dst=80" (seq 0) and B
 * "priority=20,tcp,nw_src=10.0.0.0/8" (seq 1) make two subtables: S_B
 * (max_priority 20) then S_A (10).  A packet from 10.1.1.1 to port 80
 * probes S_B first and finds B (20); S_A's max_priority 10 < 20 stops the
 * walk: one probe saved.  Adding C "priority=20,tcp,tp_dst=80" (seq 2)
 * raises S_A to 20; the same packet now probes S_B, finds B (20, seq 1),
 * and skips S_A because its min_seq at priority 20 is 2 > 1: B was added
 * first and wins the tie.
 *
 * References: V. Srinivasan, S. Suri, G. Varghese, "Packet classification
 * using tuple space search", SIGCOMM 1999; B. Pfaff et al., "The Design
 * and Implementation of Open vSwitch", NSDI 2015; P. McKenney, "RCU
 * usage in the Linux kernel", 2019.
 */
#include <config.h>

#include <flowdp/table.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/actions-internal.h"
#include "lib/cut.h"
#include "lib/hmap.h"
#include "lib/lines.h"
#include <flowdp/cpu.h>
#include "lib/pipapo.h"
#include "lib/rcu.h"
#include "lib/subtable.h"
#include "lib/ties.h"
#include "lib/tss.h"
#include "lib/util.h"

/* One sub-table in the priority walk: tuple-space or pipapo.
 *
 * 'max_priority' and 'min_seq' are copies of the sub-table's bounds taken
 * when the view was built, and never change once the view is published.
 * A lookup must use these copies, not the sub-table's live fields:
 * fdp_table_run() tightens the live bounds before it publishes a re-sorted
 * view, and a lookup still walking the old view would otherwise stop at a
 * lowered bound although a later entry of that old view holds a better
 * rule (the old order no longer matches the lowered bounds). */
struct view_entry {
    struct fdp__subtable *st;
    uint64_t (*lookup_batch)(const struct fdp__subtable *,
                             const struct fdp_key *const keys[],
                             uint64_t probe, uint64_t version,
                             const struct fdp_rule *found[]);
                                /* st->class->lookup_batch, copied so
                                 * that the walk reads no class. */
    int max_priority;           /* No rule of the sub-table beats... */
    uint64_t min_seq;           /* ...(max_priority, min_seq). */
};

/* Table statistics that the writer computes when it publishes a view, so
 * that fdp_table_get_stats() reads them without the mutex.  Only these,
 * rather than a whole struct fdp_table_stats, to keep the view's header,
 * which every lookup reads, small. */
struct view_stats {
    uint64_t n_masks;
    uint64_t n_pipapo_tables;
    uint64_t n_pipapo_rules;
    uint64_t n_keyed_subtables;
    uint64_t memory_bytes;      /* Sub-tables, arrays and this view; not
                                 * rules (fdp_table.rule_memory). */
};

/* A published view.  'entry_memory' points into the same allocation,
 * just past 'e': it is a separate array rather than a field of struct
 * view_entry so that the entries the lookup walks stay small (one more
 * word each would cost cache lines on the hot path for a number only
 * fdp_table_get_subtable_stats() reads). */
struct tss_view {
    size_t n;
    struct view_stats stats;
    uint64_t *entry_memory;     /* Bytes of sub-table e[i], as published. */
    const uint64_t *ties;       /* NULL if no priority level may hold a
                                 * tie, else bit p set if level p may
                                 * ('n_tie_words' words, in this
                                 * allocation): see "Ties". */
    uint32_t n_tie_words;
    struct rcu_head rcu;
    struct view_entry e[];
};

/* 'entry_memory' starts right after the last entry: that address must be
 * aligned for uint64_t. */
_Static_assert(sizeof(struct view_entry) % _Alignof(uint64_t) == 0,
               "entry_memory follows the view entries unpadded");

/* One bit per priority level (priorities are 16-bit): at most this many
 * words, but a table's bitmaps reach only as far as its highest priority
 * (a table of priority-10 flows takes one word, not 8 KiB, which in the
 * small tables of a conjunction's clauses was most of their memory). */
#define TIE_WORDS (65536 / 64)

/* The work fdp_table_run() allows fdp__ties_level_tied() per level: about
 * 10 ms at worst, and enough for 10,000 megaflows over a few hundred masks
 * (lib/ties.c measures 0.2 million steps there); a level past it stays
 * "may tie" and keeps the full walk. */
#define TIE_WORK_MAX (UINT64_C(1) << 22)

struct fdp_table {
    /* Read by lookups. */
    uint64_t version;                   /* Published with release. */
    struct tss_view *view;              /* RCU. */
    bool disjoint;                      /* fdp_table_set_disjoint(). */
    /* fdp__table_set_no_stats(): every rule's 'stats' is 'shared_stats',
     * which no rule owns. */
    bool no_stats;
    struct fdp__rule_counters *shared_stats;

    /* Lookup statistics, on their own cache line. */
    uint64_t n_lookups __attribute__((aligned(64)));
    uint64_t n_hits;
    uint64_t n_visited;

    /* Writer state, under 'mutex'. */
    pthread_mutex_t mutex __attribute__((aligned(64)));
    uint32_t basis;
    struct fdp__subtable **subs;        /* All sub-tables, any order. */
    size_t n_subs, alloc_subs;
    size_t n_tss;                       /* How many are tuple space. */

    /* Writers' indexes (see "Indexes"): subtables by mask, and every
     * linked rule by (match, priority), hashed with a keyed hash so that
     * flows chosen to collide cannot make inserts quadratic. */
    struct fdp__hmap subtable_index;    /* struct subtable_node. */
    struct fdp__hmap rule_index;        /* fdp_rule.index_node. */
    struct fdp_hash_key index_key;
    size_t max_masks;                   /* Tuple-space mask budget. */
    /* fdp__table_set_clock(): the version counter of the owner (the
     * pipeline), which publishes it; NULL: the table's own 'version'. */
    const uint64_t *clock;
    bool overflowed;                    /* A masked flow went past it. */
    uint64_t next_seq;
    uint64_t n_flows;                   /* Atomic: visible at 'version'. */
    uint64_t rule_memory;               /* Atomic: freed on RCU thread.
                                         * Rules, their actions and their
                                         * statistics objects. */
    bool view_dirty;

    /* Ties (see "Ties"), allocated with the first rule: bit p of 'ties'
     * is set if priority level p may hold two overlapping flows in
     * different sub-tables, because fdp__ties_level_tied() said so or
     * because the level changed since it last looked ('ties_dirty'). */
    uint64_t *ties;                     /* 'n_tie_words' words each, */
    uint64_t *ties_dirty;               /* covering the priorities below
                                         * 64 * n_tie_words (the bits of
                                         * higher ones are all zero). */
    uint32_t n_tie_words;
    bool any_ties_dirty;

    /* The open transaction. */
    bool in_txn;
    pthread_t txn_owner;
    struct fdp_rule *txn_added;         /* Linked by txn_next. */
    struct fdp_rule **txn_removed;      /* Array. */
    size_t n_txn_removed, alloc_txn_removed;
    int64_t txn_flows_delta;

    /* Rules removed by committed transactions, invisible but still
     * linked until the writer next waits for a grace period (see
     * "Versions"). */
    struct fdp_rule **removed;
    size_t n_removed, alloc_removed;
};

/* At most this many removed rules stay linked, invisible, after their
 * commits: a commit that would leave more waits for a grace period and
 * unlinks them all, so that a change waits for lookups once per this many
 * removals, not at every one.  Few, because every one of them is a rule
 * its sub-table still holds: a flow added and removed again and again
 * leaves a copy per removal in its partition until they go. */
#define REMOVED_PENDING_MAX 8

static int64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------------- */
/* Rules.                                                                  */

/* The bytes of 'rule' itself (the block fdp__rule_alloc() made). */
static size_t
rule_block_size(const struct fdp_rule *rule)
{
    size_t size = sizeof *rule
                  + (2 * fdp__cmatch_n_words(&rule->match)
                     + (size_t) fdp__popcount64(rule->match.hi_words))
                    * sizeof(uint64_t);

    return (size + 63) / 64 * 64;
}

static void
rule_free(struct fdp_table *table, struct fdp_rule *rule)
{
    if (table) {
        __atomic_fetch_sub(&table->rule_memory, rule_block_size(rule)
                           + fdp_actions_size(rule->actions)
                           + (rule->owns_stats && rule->stats
                              ? sizeof *rule->stats : 0),
                           __ATOMIC_RELAXED);
    }
    if (rule->owns_stats) {
        fdp__lines_free(rule->stats, sizeof *rule->stats);
    }
    fdp_actions_destroy(rule->actions);
    fdp__rule_free_block(rule);
}

static void
rule_free_cb(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    struct fdp_rule *rule = CONTAINER_OF(head, struct fdp_rule, rcu);
    rule_free(rule->table, rule);
    /* fdp_table_destroy() acquires after its barrier. */
    FDP_RCU_TSAN_RELEASE();
}

static void
rule_free_deferred(struct fdp_table *table, struct fdp_rule *rule)
{
    rule->table = table;
    fdp__rcu_defer(&rule->rcu, rule_free_cb);
}

void
fdp__rule_free_block(struct fdp_rule *rule)
{
    if (rule) {
        fdp__lines_free(rule, rule_block_size(rule));
    }
}

size_t
fdp__rule_size(const struct fdp_match *m)
{
    /* A multiple of 64, as aligned_alloc() wants. */
    size_t size = sizeof(struct fdp_rule) + fdp__cmatch_size(m)
                  - sizeof(struct fdp__cmatch);

    return (size + 63) / 64 * 64;
}

struct fdp_rule *
fdp__rule_alloc(const struct fdp_match *m)
{
    /* 64-byte aligned, so that the fields a lookup reads share one cache
     * line (see lib/rule.h). */
    size_t size = fdp__rule_size(m);
    struct fdp_rule *rule = fdp__lines_alloc(size);

    if (!rule) {
        return NULL;
    }
    memset(rule, 0, size);
    fdp__cmatch_pack(&rule->match, m);
    rule->remove_version = FDP_VERSION_NEVER;
    return rule;
}

static struct fdp_rule *
rule_create(struct fdp_table *table, const struct fdp_match *match,
            uint16_t priority, const struct fdp_actions *actions)
{
    struct fdp_rule *rule = fdp__rule_alloc(match);

    if (!rule) {
        return NULL;
    }
    rule->actions = fdp_actions_clone(actions);
    if (!rule->actions) {
        fdp__rule_free_block(rule);
        return NULL;
    }
    rule->priority = priority;
    __atomic_fetch_add(&table->rule_memory, rule_block_size(rule)
                       + fdp_actions_size(rule->actions), __ATOMIC_RELAXED);
    return rule;
}

/* ---------------------------------------------------------------------- */
/* Subtables and the view.                                                 */

/* ---------------------------------------------------------------------- */
/* Indexes.                                                                */

/* An entry of the subtable index. */
struct subtable_node {
    struct fdp__hmap_node node;
    struct tss_subtable *st;
};

static uint32_t
mask_hash(const struct fdp_table *table, const struct fdp_key *mask)
{
    return fdp_hash_keyed(mask->w, FDP_KEY_WORDS, &table->index_key);
}

static struct subtable_node *
find_subtable_node(const struct fdp_table *table, const struct fdp_key *mask)
{
    uint32_t hash = mask_hash(table, mask);

    for (struct fdp__hmap_node *n = fdp__hmap_first_with_hash(
             &table->subtable_index, hash);
         n; n = fdp__hmap_next_with_hash(n->next, hash)) {
        struct subtable_node *sn = CONTAINER_OF(n, struct subtable_node, node);
        if (!memcmp(&sn->st->mask, mask, sizeof *mask)) {
            return sn;
        }
    }
    return NULL;
}

static struct tss_subtable *
find_subtable(const struct fdp_table *table, const struct fdp_key *mask)
{
    struct subtable_node *sn = find_subtable_node(table, mask);

    return sn ? sn->st : NULL;
}

/* The hash of a rule's (match, priority) in the rule index.  Only the key
 * words the match uses (some bit of value, mask or upper bound set: a few
 * of FDP_KEY_WORDS for a typical flow) are hashed, after a map of which
 * they are: equal matches use the same words, and a keyed hash of about
 * 20 words instead of 130 was most of an insert's cost (a bundle of 200k
 * flow adds, docs/PERFORMANCE.md). */
static uint32_t
rule_key_hash(const struct fdp_table *table, const struct fdp_match *m,
              uint16_t priority)
{
    uint64_t w[1 + 3 * FDP_KEY_WORDS + FDP__FIELD_MAP_WORDS + 1];
    uint64_t map = 0;
    size_t n = 1;

    static_assert(FDP_KEY_WORDS <= 64, "the map of used words is one word");
    for (size_t i = 0; i < FDP_KEY_WORDS; i++) {
        if (m->value.w[i] | m->mask.w[i] | m->hi.w[i]) {
            map |= UINT64_C(1) << i;
            w[n++] = m->value.w[i];
            w[n++] = m->mask.w[i];
            w[n++] = m->hi.w[i];
        }
    }
    w[0] = map;
    /* Every word of range_fields: two matches that differ only in which
     * of two overlapping fields is the range must hash apart. */
    memcpy(w + n, m->range_fields.b, sizeof m->range_fields);
    n += FDP__FIELD_MAP_WORDS;
    w[n++] = priority;
    return fdp_hash_keyed(w, n, &table->index_key);
}

/* Adds 'rule', whose (match, priority) hashes to 'hash', to the rule
 * index. */
static int
index_rule(struct fdp_table *table, struct fdp_rule *rule, uint32_t hash)
{
    return fdp__hmap_insert(&table->rule_index, &rule->index_node, hash);
}

/* Adds 'st', just created, to the table's sub-tables.  Returns 0 or
 * ENOMEM. */
static int
add_subtable(struct fdp_table *table, struct fdp__subtable *st)
{
    if (table->n_subs == table->alloc_subs) {
        size_t alloc = table->alloc_subs ? 2 * table->alloc_subs : 16;
        struct fdp__subtable **p = realloc(table->subs, alloc * sizeof *p);
        if (!p) {
            return ENOMEM;
        }
        table->subs = p;
        table->alloc_subs = alloc;
    }
    table->subs[table->n_subs++] = st;
    table->view_dirty = true;
    return 0;
}

/* The tuple-space subtable for 'mask', created if there is none.  NULL if
 * out of memory. */
static struct tss_subtable *
get_subtable(struct fdp_table *table, const struct fdp_key *mask)
{
    struct tss_subtable *st = find_subtable(table, mask);

    if (st) {
        return st;
    }
    struct subtable_node *sn = malloc(sizeof *sn);
    st = fdp__tss_create(mask, table->basis);
    if (!sn || !st
        || fdp__hmap_insert(&table->subtable_index, &sn->node,
                            mask_hash(table, mask))) {
        goto fail;
    }
    sn->st = st;
    if (add_subtable(table, &st->up)) {
        fdp__hmap_remove(&table->subtable_index, &sn->node);
        goto fail;
    }
    table->n_tss++;
    return st;

fail:
    if (st) {
        fdp__tss_destroy_now(st);
    }
    free(sn);
    return NULL;
}

/* Takes empty tuple-space subtable 'st' out of the subtable index. */
static void
unindex_subtable(struct fdp_table *table, struct tss_subtable *st)
{
    struct subtable_node *sn = find_subtable_node(table, &st->mask);

    fdp__hmap_remove(&table->subtable_index, &sn->node);
    free(sn);
}

static uint64_t
entry_recent_hits(const struct view_entry *e)
{
    return __atomic_load_n(&e->st->hits, __ATOMIC_RELAXED)
           - e->st->hits_at_rank;
}

static int
compare_entries(const void *a_, const void *b_)
{
    const struct view_entry *a = a_, *b = b_;
    if (a->max_priority != b->max_priority) {
        return a->max_priority > b->max_priority ? -1 : 1;
    }
    /* Hits since the last ranking: recent use, not all-time use. */
    uint64_t ha = entry_recent_hits(a), hb = entry_recent_hits(b);
    if (ha != hb) {
        return ha > hb ? -1 : 1;
    }
    /* No use to tell them apart (a table just built, or sub-tables no
     * lookup reaches): the one with more flows is the likelier hit. */
    uint32_t na = a->st->n_rules, nb = b->st->n_rules;
    return na > nb ? -1 : na < nb;
}

static void
free_view_cb(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    free(CONTAINER_OF(head, struct tss_view, rcu));
}

/* Fills in the statistics of 'view', just built from the writer's
 * state. */
static void
view_stats_compute(const struct fdp_table *table, struct tss_view *view)
{
    struct view_stats *vs = &view->stats;
    struct fdp_table_stats shape;       /* What the sub-tables add. */

    memset(vs, 0, sizeof *vs);
    vs->memory_bytes = sizeof *table
                       + table->alloc_subs * sizeof *table->subs
                       + table->alloc_txn_removed
                         * sizeof *table->txn_removed
                       + (table->rule_index.buckets
                          ? (table->rule_index.mask + 1)
                            * sizeof *table->rule_index.buckets : 0)
                       + (table->subtable_index.buckets
                          ? (table->subtable_index.mask + 1)
                            * sizeof *table->subtable_index.buckets : 0)
                       + table->subtable_index.n
                         * sizeof(struct subtable_node)
                       + 2 * (size_t) table->n_tie_words
                         * sizeof *table->ties
                       + (size_t) view->n_tie_words * sizeof *view->ties
                       + sizeof *view + view->n * (sizeof view->e[0]
                                                   + sizeof
                                                     *view->entry_memory);
    /* Removed flows still linked are not flows any more. */
    for (size_t i = 0; i < table->n_subs; i++) {
        table->subs[i]->n_leaving = 0;
    }
    for (size_t i = 0; i < table->n_removed; i++) {
        table->removed[i]->owner->n_leaving++;
    }
    memset(&shape, 0, sizeof shape);
    for (size_t i = 0; i < view->n; i++) {
        const struct fdp__subtable *st = view->e[i].st;
        st->class->add_stats(st, st->n_rules - st->n_leaving, &shape);
        view->entry_memory[i] = st->class->memory(st);
        vs->memory_bytes += view->entry_memory[i];
    }
    vs->n_masks = shape.n_masks;
    vs->n_pipapo_tables = shape.n_pipapo_tables;
    vs->n_pipapo_rules = shape.n_pipapo_rules;
    vs->n_keyed_subtables = shape.n_keyed_subtables;
    vs->memory_bytes += table->alloc_removed * sizeof *table->removed;
}

/* Publishes a view of the sub-tables that have rules, sorted, after
 * publishing the snapshots of pipapo sub-tables whose rules changed.
 * Returns 0 or ENOMEM (then the old view stays). */
static int
publish_view(struct fdp_table *table)
{
    for (size_t i = 0; i < table->n_subs; i++) {
        struct fdp__subtable *st = table->subs[i];
        if (st->class->publish && st->dirty && st->class->publish(st)) {
            return ENOMEM;
        }
    }

    size_t n_max = table->n_subs;
    bool any_ties = false;
    for (size_t w = 0; w < table->n_tie_words && !any_ties; w++) {
        any_ties = table->ties[w] != 0;
    }
    size_t tie_bytes = any_ties ? table->n_tie_words * sizeof *table->ties
                                : 0;
    struct tss_view *view = malloc(sizeof *view
                                   + n_max * (sizeof view->e[0]
                                              + sizeof *view->entry_memory)
                                   + tie_bytes);
    if (!view) {
        return ENOMEM;
    }
    view->n = 0;
    view->entry_memory = (uint64_t *) &view->e[n_max];
    view->ties = NULL;
    view->n_tie_words = any_ties ? table->n_tie_words : 0;
    if (any_ties) {
        uint64_t *ties = view->entry_memory + n_max;
        memcpy(ties, table->ties, tie_bytes);
        view->ties = ties;
    }
    for (size_t i = 0; i < table->n_subs; i++) {
        struct fdp__subtable *st = table->subs[i];
        if (st->n_rules) {
            view->e[view->n++] = (struct view_entry) {
                .st = st, .lookup_batch = st->class->lookup_batch,
                .max_priority = st->max_priority, .min_seq = st->min_seq,
            };
        }
    }
    qsort(view->e, view->n, sizeof view->e[0], compare_entries);
    view_stats_compute(table, view);
    for (size_t i = 0; i < view->n; i++) {
        struct fdp__subtable *st = view->e[i].st;
        st->hits_at_rank = __atomic_load_n(&st->hits, __ATOMIC_RELAXED);
    }

    struct tss_view *old = table->view;
    FDP_RCU_SET(table->view, view);
    if (old) {
        fdp__rcu_defer(&old->rcu, free_view_cb);
    }
    table->view_dirty = false;
    return 0;
}

/* Frees subtables left without rules (after their rules were unlinked):
 * publishes a view without them, then frees them after a grace period. */
static void
reap_subtables(struct fdp_table *table)
{
    bool any = false;

    for (size_t i = 0; i < table->n_subs; i++) {
        any |= !table->subs[i]->n_rules || table->subs[i]->dirty;
    }
    /* The view omits empty sub-tables; if it cannot be published, keep them
     * (empty, harmless) until a later change succeeds. */
    if ((!any && !table->view_dirty) || publish_view(table)) {
        return;
    }

    size_t n = 0;
    for (size_t i = 0; i < table->n_subs; i++) {
        struct fdp__subtable *st = table->subs[i];
        if (st->n_rules) {
            table->subs[n++] = st;
            continue;
        }
        if (st->reason == FDP_SUBTABLE_FOR_MASK) {
            unindex_subtable(table, fdp__tss_cast(st));
            table->n_tss--;
        }
        st->class->destroy(st, true);
    }
    table->n_subs = n;
}

/* True if a tuple-space subtable has had lookup hits (the ranking that
 * trim_masks() moves subtables out by). */
static bool
any_hits(const struct fdp_table *table)
{
    for (size_t i = 0; i < table->n_subs; i++) {
        const struct fdp__subtable *st = table->subs[i];
        if (st->reason == FDP_SUBTABLE_FOR_MASK
            && __atomic_load_n(&st->hits, __ATOMIC_RELAXED)) {
            return true;
        }
    }
    return false;
}

/* The partitioned sub-table (lib/cut.c), for rules with ranges and for
 * masked flows moved out of tuple space ('overflow'), widened to the
 * fields 'field_set' of the rule to come.  A table has one: a lookup
 * walks one tree for all of them, rather than one per reason.  Its reason
 * is that of the rule that created it (dump-tables shows "pipapo" or
 * "overflow").  It comes after a few tuple-space subtables, so a scan
 * finds it. */
static struct fdp__subtable *
get_partitioned(struct fdp_table *table,
                const struct fdp__field_map *field_set, bool overflow)
{
    for (size_t i = 0; i < table->n_subs; i++) {
        struct fdp__subtable *st = table->subs[i];
        if (st->reason != FDP_SUBTABLE_FOR_MASK) {
            /* A field a rule does not use is a wildcard for it. */
            fdp__field_map_or(&fdp__cut_cast(st)->field_set, field_set);
            return st;
        }
    }
    struct cut *cut = fdp__cut_create(field_set,
                                      overflow ? FDP_SUBTABLE_FOR_OVERFLOW
                                               : FDP_SUBTABLE_FOR_RANGES);
    if (!cut) {
        return NULL;
    }
    struct fdp__subtable *st = &cut->up;
    if (add_subtable(table, st)) {
        st->class->destroy(st, false);
        return NULL;
    }
    return st;
}

/* ---------------------------------------------------------------------- */
/* Ties.                                                                   */

static bool
bit_test(const uint64_t *map, unsigned int i)
{
    return (map[i / 64] >> (i % 64)) & 1;
}

static void
bit_set(uint64_t *map, unsigned int i)
{
    map[i / 64] |= UINT64_C(1) << (i % 64);
}

/* Makes the tie bitmaps reach 'priority'.  Returns 0 or ENOMEM. */
static int
ties_init(struct fdp_table *table, uint16_t priority)
{
    uint32_t need = priority / 64u + 1;

    if (table->n_tie_words < need) {
        uint64_t *ties = calloc(2 * (size_t) need, sizeof *ties);
        if (!ties) {
            return ENOMEM;
        }
        if (table->ties) {
            memcpy(ties, table->ties, table->n_tie_words * sizeof *ties);
            memcpy(ties + need, table->ties_dirty,
                   table->n_tie_words * sizeof *ties);
        }
        free(table->ties);
        table->ties = ties;
        table->ties_dirty = ties + need;
        table->n_tie_words = need;
    }
    return 0;
}

/* A flow at 'priority' is being linked: the level may tie until
 * fdp_table_run() looks again. */
static void
ties_added(struct fdp_table *table, uint16_t priority)
{
    bit_set(table->ties, priority);
    bit_set(table->ties_dirty, priority);
    table->any_ties_dirty = true;
}

/* A flow at 'priority' was unlinked: a level that may tie may no longer;
 * one that could not still cannot. */
static void
ties_removed(struct fdp_table *table, uint16_t priority)
{
    if (priority / 64u < table->n_tie_words
        && bit_test(table->ties, priority)) {
        bit_set(table->ties_dirty, priority);
        table->any_ties_dirty = true;
    }
}

/* for_each_rule() state for update_ties(). */
struct ties_aux {
    const struct fdp_table *table;
    uint32_t *count;            /* Per level: rules seen so far... */
    struct fdp_rule **rules;    /* ...placed from this level's offset,
                                 * when filling. */
    const uint32_t *offset;
};

static bool
ties_count_cb(struct fdp_rule *r, void *aux_)
{
    struct ties_aux *aux = aux_;

    if (bit_test(aux->table->ties_dirty, r->priority)) {
        aux->count[r->priority]++;
    }
    return true;
}

static bool
ties_fill_cb(struct fdp_rule *r, void *aux_)
{
    struct ties_aux *aux = aux_;

    if (bit_test(aux->table->ties_dirty, r->priority)) {
        uint32_t i = aux->offset[r->priority] + aux->count[r->priority]++;
        aux->rules[i] = r;
    }
    return true;
}

/* fdp__ties_level_tied() for the 'n' rules of one level.  Rules keep
 * their matches compact, and lib/ties.c reads whole ones, so the level's
 * matches are expanded for the call into 'm' (room for 'n' matches,
 * sizeof (struct fdp_match) bytes each, which the caller reuses from one
 * level to the next: a fresh array per level of 40,000 flows was 40 MB of
 * new pages each time) and 'tr' (as many); a level whose rules all live in
 * one sub-table cannot tie and needs none. */
static bool
level_tied(struct fdp_rule **rules, uint32_t n, struct fdp__tie_rule *tr,
           struct fdp_match *m)
{
    uint32_t i = 1;

    while (i < n && rules[i]->owner == rules[0]->owner) {
        i++;
    }
    if (i == n) {
        return false;
    }
    for (i = 0; i < n; i++) {
        fdp__cmatch_expand(&rules[i]->match, &m[i]);
        tr[i] = (struct fdp__tie_rule) {
            .match = &m[i], .subtable = (uintptr_t) rules[i]->owner,
        };
    }
    return fdp__ties_level_tied(tr, n, TIE_WORK_MAX);
}

/* Decides, for every level that changed since the last time, whether two
 * of its linked flows in different sub-tables overlap, and updates
 * 'ties'.  Every rule a lookup may see at any version it can hold is
 * linked, in the sub-table it will be found in, so the answer covers
 * them all (a flow being moved between sub-tables counts in both, which
 * can only make its level "may tie").  Returns true if a bit of 'ties'
 * changed.  Out of memory, the levels stay as they are (conservative). */
static bool
update_ties(struct fdp_table *table)
{
    if (!table->any_ties_dirty) {
        return false;
    }
    uint32_t *count = calloc(2 * 65536, sizeof *count);
    if (!count) {
        return false;
    }
    uint32_t *offset = count + 65536;
    struct ties_aux aux = { .table = table, .count = count };
    for (size_t i = 0; i < table->n_subs; i++) {
        struct fdp__subtable *st = table->subs[i];
        st->class->for_each_rule(st, false, ties_count_cb, &aux);
    }
    uint32_t total = 0;
    for (unsigned int p = 0; p < 65536; p++) {
        offset[p] = total;
        total += count[p];
        count[p] = 0;
    }
    aux.rules = malloc((total + 1) * sizeof *aux.rules);
    aux.offset = offset;
    if (!aux.rules) {
        free(count);
        return false;
    }
    for (size_t i = 0; i < table->n_subs; i++) {
        struct fdp__subtable *st = table->subs[i];
        st->class->for_each_rule(st, false, ties_fill_cb, &aux);
    }

    /* The expanded matches, for the largest dirty level; out of memory,
     * every level is "tied" (conservative). */
    uint32_t most = 0;
    for (unsigned int w = 0; w < table->n_tie_words; w++) {
        for (uint64_t m = table->ties_dirty[w]; m; m &= m - 1) {
            unsigned int p = w * 64 + (unsigned int) __builtin_ctzll(m);
            most = count[p] > most ? count[p] : most;
        }
    }
    struct fdp__tie_rule *tr = malloc((most + 1) * sizeof *tr);
    struct fdp_match *matches = malloc((most + 1) * sizeof *matches);

    bool changed = false;
    for (unsigned int w = 0; w < table->n_tie_words; w++) {
        for (uint64_t m = table->ties_dirty[w]; m; m &= m - 1) {
            unsigned int p = w * 64 + (unsigned int) __builtin_ctzll(m);
            bool tied = count[p] >= 2
                        && (!tr || !matches
                            || level_tied(&aux.rules[offset[p]], count[p],
                                          tr, matches));
            if (!tied) {
                table->ties[w] &= ~(UINT64_C(1) << (p % 64));
                changed = true;
            }
        }
        table->ties_dirty[w] = 0;
    }
    table->any_ties_dirty = false;
    free(tr);
    free(matches);
    free(aux.rules);
    free(count);
    return changed;
}

/* Takes 'rule' out of the rule index and its sub-table (tuple-space or
 * pipapo). */
static void
unlink_rule(struct fdp_table *table, struct fdp_rule *rule)
{
    fdp__hmap_remove(&table->rule_index, &rule->index_node);
    rule->owner->class->remove(rule->owner, rule);
    ties_removed(table, rule->priority);
}

/* True if 'rule' lives in a sub-table that publishes snapshots: it may
 * be freed only after the next publish. */
static bool
rule_in_snapshot(const struct fdp_rule *rule)
{
    return rule->owner->class->publish != NULL;
}

/* ---------------------------------------------------------------------- */
/* Transactions.                                                           */

static bool
txn_is_mine(const struct fdp_table *table)
{
    return table->in_txn && pthread_equal(table->txn_owner, pthread_self());
}

static void
txn_start(struct fdp_table *table)
{
    pthread_mutex_lock(&table->mutex);
    table->in_txn = true;
    table->txn_owner = pthread_self();
    table->txn_added = NULL;
    table->n_txn_removed = 0;
    table->txn_flows_delta = 0;
}

static uint64_t
txn_version(const struct fdp_table *table)
{
    return (table->clock ? __atomic_load_n(table->clock, __ATOMIC_RELAXED)
                         : table->version) + 1;
}

/* Makes room in 'removed' for every rule removed so far, the open
 * transaction's included, and 'extra' more, so that a clocked table's commit never has to
 * reap early for want of memory (see fdp__table_set_clock()). */
static int
reserve_removed(struct fdp_table *table, size_t extra)
{
    size_t need = table->n_removed + table->n_txn_removed + extra;

    if (need > table->alloc_removed) {
        size_t alloc = need > 2 * table->alloc_removed
                       ? need : 2 * table->alloc_removed;
        struct fdp_rule **r = realloc(table->removed, alloc * sizeof *r);
        if (!r) {
            return ENOMEM;
        }
        table->removed = r;
        table->alloc_removed = alloc;
    }
    return 0;
}

/* Marks 'rule' removed at the transaction's version. */
static int
txn_remove(struct fdp_table *table, struct fdp_rule *rule)
{
    if (table->n_txn_removed == table->alloc_txn_removed) {
        size_t alloc = table->alloc_txn_removed
                       ? 2 * table->alloc_txn_removed : 64;
        struct fdp_rule **p = realloc(table->txn_removed, alloc * sizeof *p);
        if (!p) {
            return ENOMEM;
        }
        table->txn_removed = p;
        table->alloc_txn_removed = alloc;
    }
    if (table->clock && reserve_removed(table, 1)) {
        return ENOMEM;
    }
    table->txn_removed[table->n_txn_removed++] = rule;
    __atomic_store_n(&rule->remove_version, txn_version(table),
                     __ATOMIC_RELAXED);
    if (rule->owner->class->removing) {
        rule->owner->class->removing(rule->owner, rule);
    }
    table->txn_flows_delta--;
    return 0;
}

static void
txn_finish(struct fdp_table *table)
{
    table->in_txn = false;
    table->txn_added = NULL;
    table->n_txn_removed = 0;
    pthread_mutex_unlock(&table->mutex);
}

/* Unlinks 'rules' (n), which no lookup can see any more; the caller then
 * republishes and frees them (free_unlinked()). */
static void
unlink_removed(struct fdp_table *table, struct fdp_rule **rules, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unlink_rule(table, rules[i]);
    }
}

/* Frees unlinked 'rules' (n) once no lookup can be walking past them,
 * unless they may still be in a snapshot that the last publish
 * ('republished' false: it failed) could not rebuild: then they stay
 * allocated, and invisible, rather than be freed under a live one. */
static void
free_unlinked(struct fdp_table *table, struct fdp_rule **rules, size_t n,
              bool republished)
{
    for (size_t i = 0; i < n; i++) {
        if (republished || !rule_in_snapshot(rules[i])) {
            rule_free_deferred(table, rules[i]);
        }
    }
}

/* Waits for a grace period, after which no lookup can see the removed
 * rules any more, unlinks them, publishes, and frees them once no lookup
 * can be walking past them.  Writer, with the mutex held. */
static void
reap_removed(struct fdp_table *table)
{
    if (!table->n_removed) {
        return;
    }
    size_t n = table->n_removed;

    fdp__rcu_synchronize();
    table->n_removed = 0;       /* Before the publish counts them. */
    unlink_removed(table, table->removed, n);
    /* Snapshots that still hold removed rules must be rebuilt before the
     * rules can be freed. */
    free_unlinked(table, table->removed, n, !publish_view(table));
}

static void txn_abort(struct fdp_table *);

static int
txn_commit(struct fdp_table *table)
{
    uint64_t version = txn_version(table);

    /* New subtables must be in the view before their rules become
     * visible; if the view cannot be built, nothing becomes visible. */
    if (table->view_dirty && publish_view(table)) {
        txn_abort(table);
        return ENOMEM;
    }
    __atomic_store_n(&table->version, version, __ATOMIC_RELEASE);
    __atomic_store_n(&table->n_flows,
                     table->n_flows + (uint64_t) table->txn_flows_delta,
                     __ATOMIC_RELAXED);

    /* An add that replaced a flow restarts its creation time (as Open
     * vSwitch's, which keeps 'created' only on a modify): its counters are
     * the old version's, so the time is set here, where the change can no
     * longer be aborted, and before any rule of the transaction can be
     * freed below. */
    for (struct fdp_rule *r = table->txn_added; r; r = r->txn_next) {
        if (r->resets_created) {
            __atomic_store_n(&r->stats->created_ms, r->modified_ms,
                             __ATOMIC_RELAXED);
            r->resets_created = false;
        }
    }

    /* Removed rules are invisible from 'version' on, but a lookup that
     * loaded the previous version may still need them: they stay linked
     * until the writer has waited for every such lookup to finish, then
     * are unlinked, and freed once no lookup can still be walking past
     * them.  A commit waits only once REMOVED_PENDING_MAX of them have
     * gathered (or when out of memory to keep them), fdp_table_run()
     * always.  (Adds need no wait: a rule is linked before its version is
     * published.) */
    if (table->n_txn_removed) {
        size_t need = table->n_removed + table->n_txn_removed;
        if (need > table->alloc_removed) {
            size_t alloc = need > 2 * table->alloc_removed
                           ? need : 2 * table->alloc_removed;
            struct fdp_rule **r = realloc(table->removed, alloc * sizeof *r);
            if (r) {
                table->removed = r;
                table->alloc_removed = alloc;
            }
        }
        if (need <= table->alloc_removed) {
            memcpy(&table->removed[table->n_removed], table->txn_removed,
                   table->n_txn_removed * sizeof *table->removed);
            table->n_removed = need;
        } else {
            fdp__rcu_synchronize();
            unlink_removed(table, table->txn_removed, table->n_txn_removed);
            free_unlinked(table, table->txn_removed, table->n_txn_removed,
                          !publish_view(table));
        }
        if (table->n_removed > REMOVED_PENDING_MAX && !table->clock) {
            /* (A clocked table's owner reaps, after it has published the
             * version: fdp__table_reap().) */
            reap_removed(table);
        } else {
            /* The view's statistics count flows, not removed rules. */
            publish_view(table);
        }
    }
    reap_subtables(table);
    txn_finish(table);
    return 0;
}

static void
txn_abort(struct fdp_table *table)
{
    uint64_t version = txn_version(table);
    struct fdp_rule *aborted_pipapo = NULL;

    /* Rules removed by the transaction come back, with their statistics,
     * unless the transaction also added them. */
    for (size_t i = 0; i < table->n_txn_removed; i++) {
        struct fdp_rule *rule = table->txn_removed[i];
        if (rule->add_version != version) {
            __atomic_store_n(&rule->remove_version, FDP_VERSION_NEVER,
                             __ATOMIC_RELAXED);
            rule->owns_stats = !table->no_stats;
        }
    }
    for (struct fdp_rule *rule = table->txn_added, *next; rule; rule = next) {
        next = rule->txn_next;
        /* Statistics a rule created die with it (its successors in this
         * transaction go too); inherited ones stay with the restored
         * rule. */
        rule->owns_stats = !rule->stats_shared;
        unlink_rule(table, rule);
        if (!rule_in_snapshot(rule)) {
            rule_free_deferred(table, rule);
        } else {
            rule->txn_next = aborted_pipapo;
            aborted_pipapo = rule;
        }
    }
    /* Aborted pipapo rules were never in a published snapshot (snapshots
     * are rebuilt at commit), so they can go at once after the view. */
    publish_view(table);
    while (aborted_pipapo) {
        struct fdp_rule *rule = aborted_pipapo;
        aborted_pipapo = rule->txn_next;
        rule_free_deferred(table, rule);
    }
    reap_subtables(table);
    txn_finish(table);
}

int
fdp_table_begin(struct fdp_table *table)
{
    if (txn_is_mine(table)) {
        return EBUSY;
    }
    txn_start(table);
    return 0;
}

int
fdp_table_commit(struct fdp_table *table)
{
    return txn_is_mine(table) ? txn_commit(table) : 0;
}

void
fdp_table_abort(struct fdp_table *table)
{
    if (txn_is_mine(table)) {
        txn_abort(table);
    }
}

/* Starts an implicit transaction for a single change unless the caller
 * has one open; returns true if it did. */
static bool
auto_begin(struct fdp_table *table)
{
    if (txn_is_mine(table)) {
        return false;
    }
    txn_start(table);
    return true;
}

static int
auto_end(struct fdp_table *table, bool started, int error)
{
    if (started) {
        if (error) {
            txn_abort(table);
        } else {
            error = txn_commit(table);
        }
    }
    return error;
}

/* ---------------------------------------------------------------------- */
/* Modifiers.                                                              */

/* Links a new rule for (match, priority, actions) at the transaction's
 * version, as a new version of 'old' if nonnull, else as a new flow
 * whose (match, priority) has rule-index hash 'hash' (from
 * find_exact()).  The rule goes to the overflow pipapo sub-table if
 * 'overflow' (fdp_table_run() moving flows out of tuple space), else where
 * its match and the mask budget say. */
static int
add_rule(struct fdp_table *table, const struct fdp_flow_spec *spec,
         const struct fdp_match *match, uint16_t priority,
         const struct fdp_actions *actions, struct fdp_rule *old,
         bool overflow, uint32_t hash)
{
    struct fdp_rule *rule = rule_create(table, match, priority, actions);

    if (!rule) {
        return ENOMEM;
    }
    int64_t now = now_ms();

    /* A new version made by a writer's add or modify is modified now; one
     * moved between sub-tables (no 'spec') is the same version moved. */
    rule->modified_ms = spec || !old ? now : old->modified_ms;
    /* A version moved between sub-tables stays learned; an add or modify
     * makes the flow the writer's (the learner marks its own). */
    rule->learned = !spec && old && old->learned;
    if (old) {
        rule->seq = old->seq;
        rule->cookie = spec ? spec->cookie : old->cookie;
        rule->table_id = spec ? spec->table_id : old->table_id;
        rule->idle_timeout = spec ? spec->idle_timeout : old->idle_timeout;
        rule->hard_timeout = spec ? spec->hard_timeout : old->hard_timeout;
        rule->flags = (uint8_t) (spec ? spec->flags : old->flags);
        rule->stats = old->stats;
        rule->stats_shared = true;
    } else {
        rule->seq = table->next_seq++;
        rule->cookie = spec->cookie;
        rule->table_id = spec->table_id;
        rule->idle_timeout = spec->idle_timeout;
        rule->hard_timeout = spec->hard_timeout;
        rule->flags = (uint8_t) spec->flags;
    }
    if (!old && table->no_stats) {
        rule->stats = table->shared_stats;
        rule->stats_shared = true;
    } else if (!old) {
        rule->stats = fdp__lines_alloc(sizeof *rule->stats);
        if (!rule->stats) {
            rule_free(table, rule);
            return ENOMEM;
        }
        memset(rule->stats, 0, sizeof *rule->stats);
        /* Counted here, uncounted by whichever version of the flow frees
         * it (the one that owns it then). */
        __atomic_fetch_add(&table->rule_memory, sizeof *rule->stats,
                           __ATOMIC_RELAXED);
        rule->stats->created_ms = now;
    }
    /* Its actions and counters are final: the datapath's outcome. */
    fdp__outcome_init_rule(&rule->oc);
    rule->add_version = txn_version(table);

    /* A new version of 'old' has its (match, priority), so its hash; a new
     * flow's was computed by the caller's find_exact(). */
    int error = ties_init(table, rule->priority);
    if (!error) {
        error = index_rule(table, rule, old ? old->index_node.hash : hash);
    }
    if (error) {
        rule_free(table, rule);
        return error;
    }
    bool to_tss = fdp_match_is_masked(match) && !overflow;
    if (to_tss && table->max_masks && !find_subtable(table, &match->mask)
        && table->n_tss >= (any_hits(table) ? 2 : 1) * table->max_masks) {
        /* Past twice the mask budget new masks go straight to the
         * overflow sub-table: an attacker who makes masks faster than
         * fdp_table_run() trims them cannot grow the walk.  Until some
         * subtable has hits there is nothing for fdp_table_run() to rank
         * them by, so past the budget itself: a bulk load into a fresh
         * table would otherwise fill tuple space to twice the budget
         * only for the next run to move half of it, chosen at random,
         * and rebuild the overflow sub-table a second time. */
        to_tss = false;
    }
    struct fdp__subtable *st;
    if (!to_tss && fdp_match_is_masked(match)) {
        table->overflowed = true;
    }
    if (to_tss) {
        struct tss_subtable *tss = get_subtable(table, &match->mask);
        st = tss ? &tss->up : NULL;
    } else {
        struct fdp__field_map fields = fdp__pipapo_fields_of(match);
        st = get_partitioned(table, &fields,
                             overflow || fdp_match_is_masked(match));
    }
    error = st ? st->class->insert(st, rule) : ENOMEM;
    if (error) {
        fdp__hmap_remove(&table->rule_index, &rule->index_node);
    } else {
        ties_added(table, rule->priority);
    }
    if (!error && old) {
        error = txn_remove(table, old);
        if (error) {
            unlink_rule(table, rule);
        }
    }
    if (error) {
        if (old) {
            rule->owns_stats = false;
        }
        rule_free(table, rule);
        return error;
    }

    /* The new version takes over the statistics. */
    if (old) {
        old->owns_stats = false;
    }
    rule->owns_stats = !table->no_stats;
    rule->txn_next = table->txn_added;
    table->txn_added = rule;
    table->txn_flows_delta++;
    table->view_dirty = true;
    return 0;
}

/* The rule with 'match' and 'priority' visible in the open transaction,
 * or NULL: one probe of the rule index, wherever the rule lives. */
static struct fdp_rule *
find_exact(struct fdp_table *table, const struct fdp_match *match,
           uint16_t priority, uint32_t *hashp)
{
    uint32_t hash = rule_key_hash(table, match, priority);

    if (hashp) {
        *hashp = hash;
    }
    uint64_t version = txn_version(table);

    for (struct fdp__hmap_node *n = fdp__hmap_first_with_hash(
             &table->rule_index, hash);
         n; n = fdp__hmap_next_with_hash(n->next, hash)) {
        struct fdp_rule *r = CONTAINER_OF(n, struct fdp_rule, index_node);
        if (r->priority == priority && fdp__rule_visible(r, version)
            && fdp__cmatch_equal(&r->match, match)) {
            return r;
        }
    }
    return NULL;
}

int
fdp_table_insert(struct fdp_table *table, const struct fdp_flow_spec *spec,
                 unsigned int flags)
{
    /* The datapath executes actions trusting their prerequisites (a
     * mod_tp_dst only on TCP, UDP or SCTP), so the table refuses a list the
     * match does not support, however it was built. */
    if (!spec->match || !spec->actions
        || fdp__actions_validate(spec->actions, spec->match, NULL)) {
        return EINVAL;
    }
    bool started = auto_begin(table);
    uint32_t hash;
    struct fdp_rule *old = find_exact(table, spec->match, spec->priority,
                                      &hash);
    int error;
    if (old && (flags & FDP_TABLE_NO_REPLACE)) {
        error = EEXIST;
    } else {
        error = add_rule(table, spec, spec->match,
                         spec->priority, spec->actions, old, false, hash);
        if (!error && old && !table->no_stats) {
            /* add_rule() put the new version at the head of the log.  (A
             * table without counters has one creation time for all.) */
            table->txn_added->resets_created = true;
        }
    }
    return auto_end(table, started, error);
}

/* The match of a filter: its own, or for NULL (table.h: all flows) the
 * match with every field wildcarded, stored in 'any'.  A non-strict filter
 * with it selects every flow; a strict one selects the catch-all flow of
 * the filter's priority, as "ovs-ofctl del-flows --strict" with no match
 * does. */
static const struct fdp_match *
filter_match(const struct fdp_table_filter *filter, struct fdp_match *any)
{
    if (filter->match) {
        return filter->match;
    }
    fdp__match_init(any);
    return any;
}

static bool
filter_selects(const struct fdp_table_filter *filter,
               const struct fdp_match *match, const struct fdp_rule *rule)
{
    if ((rule->cookie ^ filter->cookie) & filter->cookie_mask) {
        return false;
    }
    if (filter->strict) {
        return rule->priority == filter->priority
               && fdp__cmatch_equal(&rule->match, match);
    }
    struct fdp_match m;
    fdp__cmatch_expand(&rule->match, &m);
    return fdp_match_covers(match, &m);
}

/* for_each_rule() state for select_rules(). */
struct select_aux {
    const struct fdp_table_filter *filter;
    const struct fdp_match *match;
    uint64_t version;
    struct fdp_rule **rules;
    size_t n, alloc;
};

/* Adds 'r' to the selection if the filter selects it; false if out of
 * memory. */
static bool
select_rule_cb(struct fdp_rule *r, void *aux_)
{
    struct select_aux *aux = aux_;

    if (!fdp__rule_visible(r, aux->version)
        || !filter_selects(aux->filter, aux->match, r)) {
        return true;
    }
    if (aux->n == aux->alloc) {
        size_t alloc = aux->alloc ? 2 * aux->alloc : 64;
        struct fdp_rule **p = realloc(aux->rules, alloc * sizeof *p);
        if (!p) {
            return false;
        }
        aux->rules = p;
        aux->alloc = alloc;
    }
    aux->rules[aux->n++] = r;
    return true;
}

/* Collects the rules visible in the transaction that 'filter' selects
 * into a new array in '*rulesp'.  Returns 0 or ENOMEM. */
static int
select_rules(struct fdp_table *table, const struct fdp_table_filter *filter,
             struct fdp_rule ***rulesp, size_t *n)
{
    uint64_t version = txn_version(table);
    struct fdp_rule **rules = NULL;
    struct fdp_match any;
    const struct fdp_match *match = filter_match(filter, &any);

    *n = 0;
    if (filter->strict) {
        struct fdp_rule *r = find_exact(table, match, filter->priority,
                                        NULL);
        if (r && filter_selects(filter, match, r)) {
            rules = malloc(sizeof *rules);
            if (!rules) {
                return ENOMEM;
            }
            rules[(*n)++] = r;
        }
        *rulesp = rules;
        return 0;
    }
    struct select_aux aux = {
        .filter = filter, .match = match, .version = version,
    };
    for (size_t i = 0; i < table->n_subs; i++) {
        struct fdp__subtable *st = table->subs[i];
        if (!st->class->for_each_rule(st, false, select_rule_cb, &aux)) {
            free(aux.rules);
            return ENOMEM;
        }
    }
    rules = aux.rules;
    *n = aux.n;
    *rulesp = rules;
    return 0;
}

int
fdp__table_select(struct fdp_table *table,
                  const struct fdp_table_filter *filter,
                  struct fdp_rule ***rulesp, size_t *n)
{
    return select_rules(table, filter, rulesp, n);
}

const struct fdp_rule *
fdp__table_find(struct fdp_table *table, const struct fdp_match *match,
                uint16_t priority)
{
    return find_exact(table, match, priority, NULL);
}

int
fdp_table_modify(struct fdp_table *table,
                 const struct fdp_table_filter *filter,
                 const struct fdp_actions *actions,
                 const uint64_t *new_cookie, size_t *np)
{
    bool started = auto_begin(table);
    struct fdp_rule **rules;
    size_t n;
    int error = select_rules(table, filter, &rules, &n);

    /* Every flow selected must support the actions (see insert), checked
     * before any changes so that a refusal changes nothing. */
    for (size_t i = 0; !error && i < n; i++) {
        struct fdp_match m;
        fdp__cmatch_expand(&rules[i]->match, &m);
        if (fdp__actions_validate(actions, &m, NULL)) {
            error = EINVAL;
        }
    }
    for (size_t i = 0; !error && i < n; i++) {
        const struct fdp_rule *old = rules[i];
        /* The new version keeps the flow's bookkeeping; only the cookie
         * may change. */
        struct fdp_flow_spec spec = {
            .cookie = new_cookie ? *new_cookie : old->cookie,
            .table_id = old->table_id,
            .idle_timeout = old->idle_timeout,
            .hard_timeout = old->hard_timeout,
            .flags = old->flags,
        };
        struct fdp_match m;
        fdp__cmatch_expand(&old->match, &m);
        error = add_rule(table, &spec, &m, old->priority, actions,
                         rules[i], false, 0);
    }
    free(rules);
    if (np) {
        *np = error ? 0 : n;
    }
    return auto_end(table, started, error);
}

int
fdp_table_remove(struct fdp_table *table,
                 const struct fdp_table_filter *filter, size_t *np)
{
    bool started = auto_begin(table);
    struct fdp_rule **rules;
    size_t n;
    int error = select_rules(table, filter, &rules, &n);

    for (size_t i = 0; !error && i < n; i++) {
        error = txn_remove(table, rules[i]);
    }
    free(rules);
    if (np) {
        *np = error ? 0 : n;
    }
    return auto_end(table, started, error);
}

static int
compare_by_hits(const void *a_, const void *b_)
{
    const struct fdp__subtable *a = *(const struct fdp__subtable *const *) a_;
    const struct fdp__subtable *b = *(const struct fdp__subtable *const *) b_;
    uint64_t ha = __atomic_load_n(&a->hits, __ATOMIC_RELAXED) - a->hits_at_rank;
    uint64_t hb = __atomic_load_n(&b->hits, __ATOMIC_RELAXED) - b->hits_at_rank;

    return ha < hb ? -1 : ha > hb;
}

/* for_each_rule() state for trim_masks(). */
struct move_aux {
    struct fdp_table *table;
    uint64_t version;
};

/* Moves 'r' to pipapo (see trim_masks()); false on failure. */
static bool
move_rule_cb(struct fdp_rule *r, void *aux_)
{
    struct move_aux *aux = aux_;

    /* Rules already removed in this transaction leave with its commit; a
     * moved rule is removed, so it is never moved twice. */
    if (!fdp__rule_visible(r, aux->version)) {
        return true;
    }
    struct fdp_match m;
    fdp__cmatch_expand(&r->match, &m);
    return !add_rule(aux->table, NULL, &m, r->priority, r->actions, r, true,
                     0);
}

/* for_each_rule() state for sparse(): priority levels seen. */
struct levels_aux {
    uint64_t *seen;             /* TIE_WORDS words. */
    uint32_t n_levels;
};

static bool
levels_cb(struct fdp_rule *r, void *aux_)
{
    struct levels_aux *aux = aux_;

    if (!bit_test(aux->seen, r->priority)) {
        bit_set(aux->seen, r->priority);
        aux->n_levels++;
    }
    return true;
}

/* True if tuple-space subtable 'st' holds fewer than TSS_RULES_PER_LEVEL
 * flows per priority level: then a probe of it, which every lookup that
 * has not found a better flow pays, finds little, and the partitioned
 * sub-table, whose cuts look at a packet's own bits, serves its flows
 * better.  (Flows of one priority, as megaflows, are what tuple space is
 * for; an ACL whose every flow has its own priority is not.) */
#define TSS_RULES_PER_LEVEL 4

/* Below this many flows a table's walk is short whatever its shape, and
 * only the mask budget moves subtables. */
#define SPARSE_MIN_FLOWS 256

/* 'seen' is scratch of TIE_WORDS words. */
static bool
sparse(struct fdp__subtable *st, uint64_t *seen)
{
    struct levels_aux aux = { .seen = seen, .n_levels = 0 };

    memset(seen, 0, TIE_WORDS * sizeof *seen);
    st->class->for_each_rule(st, false, levels_cb, &aux);
    return st->n_rules < (uint64_t) TSS_RULES_PER_LEVEL * aux.n_levels;
}

/* Moves the flows of the least-hit subtables into the overflow
 * (partitioned) sub-table until at most 'max_masks' subtables remain,
 * and, once the budget has been passed, those of every sparse subtable
 * (see sparse()), within the open transaction.
 *
 * A move is a change like a replace: each flow gets a new rule in the
 * partitioned sub-table (same match, priority, sequence number, cookie, actions and statistics)
 * added at the transaction's version, and its tuple-space rule is removed
 * at that version.  So at every version each flow has exactly one visible
 * rule, and a dump (which walks both structures) or a lookup sees it once:
 * before the commit in tuple space, after it in the partitioned one.  Moving the same
 * rule object instead would leave it reachable through both structures
 * for a grace period, and a dump in that window reported it twice.  The
 * commit then unlinks the old rules after a grace period, which empties
 * the subtables, and reaps them.
 *
 * Stops at the first failure (ENOMEM): the flows moved so far are moved,
 * the rest stay in tuple space, and the table is correct either way. */
static void
trim_masks(struct fdp_table *table)
{
    if (!table->max_masks
        || (table->n_tss <= table->max_masks
            && (!table->overflowed || table->n_flows < SPARSE_MIN_FLOWS))) {
        return;
    }
    size_t n_move = table->n_tss > table->max_masks
                    ? table->n_tss - table->max_masks : 0;
    struct fdp__subtable **order = malloc(table->n_tss * sizeof *order);
    uint64_t *seen = malloc(TIE_WORDS * sizeof *seen);
    if (!order || !seen) {
        free(order);
        free(seen);
        return;
    }
    /* Sparse subtables first (all of them go), then the least hit. */
    size_t n_sparse = 0, n_order = table->n_tss;
    for (size_t i = 0, back = n_order; i < table->n_subs; i++) {
        struct fdp__subtable *st = table->subs[i];
        if (st->reason == FDP_SUBTABLE_FOR_MASK) {
            if (table->n_flows >= SPARSE_MIN_FLOWS && sparse(st, seen)) {
                order[n_sparse++] = st;
            } else {
                order[--back] = st;
            }
        }
    }
    free(seen);
    qsort(order + n_sparse, n_order - n_sparse, sizeof *order,
          compare_by_hits);
    if (n_move < n_sparse) {
        n_move = n_sparse;
    }

    /* add_rule() elsewhere and txn_remove() leave the subtables' chains
     * as they are, so walking them while moving is safe. */
    struct move_aux aux = { .table = table, .version = txn_version(table) };
    for (size_t i = 0; i < n_move && i < n_order; i++) {
        if (!order[i]->class->for_each_rule(order[i], false, move_rule_cb,
                                            &aux)) {
            break;
        }
    }
    free(order);
}

void
fdp_table_set_max_masks(struct fdp_table *table, size_t max_masks)
{
    pthread_mutex_lock(&table->mutex);
    table->max_masks = max_masks;
    pthread_mutex_unlock(&table->mutex);
}

int
fdp__table_set_no_stats(struct fdp_table *table)
{
    if (!table->shared_stats) {
        struct fdp__rule_counters *c = aligned_alloc(64, sizeof *c);
        if (!c) {
            return ENOMEM;
        }
        memset(c, 0, sizeof *c);
        c->created_ms = now_ms();
        table->shared_stats = c;
    }
    table->no_stats = true;
    return 0;
}

void
fdp_table_set_disjoint(struct fdp_table *table, bool disjoint)
{
    pthread_mutex_lock(&table->mutex);
    __atomic_store_n(&table->disjoint, disjoint, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&table->mutex);
}

/* for_each_rule() state for fdp_table_run(): the best rule's
 * priority and, among rules at that priority, the lowest sequence. */
struct bound_aux {
    int max;
    uint64_t min_seq;
};

static bool
bound_rule_cb(struct fdp_rule *r, void *aux_)
{
    struct bound_aux *aux = aux_;

    if (r->priority > aux->max) {
        aux->max = r->priority;
        aux->min_seq = r->seq;
    } else if (r->priority == aux->max && r->seq < aux->min_seq) {
        aux->min_seq = r->seq;
    }
    return true;
}

/* Lowers the bounds of every sub-table to those of its rules. */
static void
tighten_bounds(struct fdp_table *table)
{
    for (size_t i = 0; i < table->n_subs; i++) {
        struct fdp__subtable *st = table->subs[i];
        struct bound_aux bound = { .max = -1, .min_seq = UINT64_MAX };
        st->class->for_each_rule(st, false, bound_rule_cb, &bound);
        __atomic_store_n(&st->max_priority, bound.max, __ATOMIC_RELAXED);
        __atomic_store_n(&st->min_seq, bound.min_seq, __ATOMIC_RELAXED);
    }
}

/* Lets each sub-table fold changes it took in a quick-to-publish form
 * (pipapo's deltas) into its lookup structure: here, where the cost is
 * paid once per run rather than on every change.  The rules stay the
 * same, so the publish that follows changes no lookup's answer. */
static void
compact_subtables(struct fdp_table *table)
{
    for (size_t i = 0; i < table->n_subs; i++) {
        struct fdp__subtable *st = table->subs[i];
        if (st->class->compact) {
            st->class->compact(st);
        }
    }
}

void
fdp_table_run(struct fdp_table *table)
{
    /* Moving flows to pipapo is a change made in a transaction: the
     * caller's, or one of our own. */
    bool started = auto_begin(table);

    /* Rules removed by earlier commits leave first, so that what follows
     * sees the table as lookups do. */
    reap_removed(table);

    /* Move flows out of tuple space, then tighten bounds left stale by
     * removals, and those of the overflow sub-table that the moved flows
     * raised, then re-rank.  Trimming reads no bounds and leaves tuple
     * space's rules linked (removed at the open transaction's version), so
     * one pass after it gives every sub-table the bounds one before it
     * would. */
    trim_masks(table);
    tighten_bounds(table);
    compact_subtables(table);
    publish_view(table);
    if (started) {
        /* Commit only if flows moved: a commit bumps the version, which
         * would needlessly invalidate the datapath's caches every run. */
        if (table->txn_added) {
            txn_commit(table);
        } else {
            txn_finish(table);
        }
        /* Ties after the commit, when the moved flows' old rules are
         * gone (unlinked here, after the grace period), so that a move
         * does not leave its levels "may tie". */
        pthread_mutex_lock(&table->mutex);
        if (!table->clock) {
            /* A clocked table's owner has not published the commit yet:
             * lookups at the version before it still need the moved
             * flows' old rules (fdp__table_reap() comes later). */
            reap_removed(table);
        }
        reap_subtables(table);
    }
    if (update_ties(table)) {
        publish_view(table);
    }
    if (started) {
        pthread_mutex_unlock(&table->mutex);
    }
}

/* ---------------------------------------------------------------------- */
/* Lookups.                                                                */

void
fdp_table_read_lock(void)
{
    fdp__rcu_read_lock();
}

void
fdp_table_read_unlock(void)
{
    fdp__rcu_read_unlock();
}

static void
count_hits(uint64_t *hits, uint64_t n)
{
    /* Lossy on purpose: a plain add, no locked instruction, once per
     * sub-table and batch.  The count only ranks sub-tables. */
    __atomic_store_n(hits, __atomic_load_n(hits, __ATOMIC_RELAXED) + n,
                     __ATOMIC_RELAXED);
}

/* True unless 'view' knows that no two overlapping flows at 'priority'
 * live in different sub-tables: then the first match at that priority is
 * the answer. */
static bool
level_may_tie(const struct tss_view *view, uint16_t priority)
{
    return view->ties && priority / 64u < view->n_tie_words
           && bit_test(view->ties, priority);
}

/* A batch's keys are tracked in one 64-bit bitmap each ('done', 'probe'):
 * bit i for keys[i]. */
_Static_assert(FDP_TABLE_BATCH_MAX <= 64,
               "lookup_batch keeps one bit per key in a uint64_t");

/* The walk of fdp_table_lookup_batch(), in the caller's read-side
 * section, for at most FDP_TABLE_BATCH_MAX keys.  Returns the number of
 * sub-table probes (for the table's counters). */
static inline __attribute__((always_inline)) uint64_t
lookup_walk(struct fdp_table *table, const struct fdp_key *const keys[],
            size_t n, const struct fdp_rule *rules[], uint64_t version)
{
    uint64_t done = 0, visited = 0;
    uint64_t all = n == 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
    const struct tss_view *view = FDP_RCU_GET(table->view);
    bool disjoint = __atomic_load_n(&table->disjoint, __ATOMIC_RELAXED);

    for (size_t i = 0; i < n; i++) {
        rules[i] = NULL;
    }
    for (size_t s = 0; view && s < view->n && done != all; s++) {
        const struct view_entry *e = &view->e[s];
        /* The view's own copies of the bounds: see struct view_entry. */
        int max_priority = e->max_priority;
        uint64_t min_seq = e->min_seq;
        uint64_t probe = 0;

        /* Phase 1: which keys can this sub-table still improve? */
        for (size_t i = 0; i < n; i++) {
            const struct fdp_rule *best = rules[i];
            if (done & (UINT64_C(1) << i)) {
                continue;
            }
            if (best && (best->priority > max_priority || disjoint
                         || (best->priority == max_priority
                             && !level_may_tie(view, best->priority)))) {
                done |= UINT64_C(1) << i;   /* Nothing later can win. */
            } else if (!best || best->priority < max_priority
                       || min_seq < best->seq) {
                probe |= UINT64_C(1) << i;
            }
        }
        if (!probe) {
            continue;
        }

        /* Phase 2: one batch probe of the sub-table (tuple space hashes
         * every key first and overlaps their memory loads; pipapo ANDs a
         * few bitmap rows per field). */
        const struct fdp_rule *found[FDP_TABLE_BATCH_MAX];
        uint64_t hit = e->lookup_batch(e->st, keys, probe, version, found);
        visited += (uint64_t) __builtin_popcountll(probe);
        uint64_t won = 0;
        for (; hit; hit &= hit - 1) {
            size_t i = (size_t) __builtin_ctzll(hit);
            if (fdp__rule_beats(found[i], rules[i])) {
                rules[i] = found[i];
                won++;
            }
        }
        if (won) {
            count_hits(&e->st->hits, won);
        }
    }
    return visited;
}

const struct fdp_rule *
fdp_table_lookup(struct fdp_table *table, const struct fdp_key *key)
{
    const struct fdp_rule *rule;

    fdp_table_lookup_batch(table, &key, 1, &rule);
    return rule;
}

const struct fdp_rule *
fdp__table_lookup_uncounted(struct fdp_table *table,
                            const struct fdp_key *key)
{
    const struct fdp_rule *rule;

    lookup_walk(table, &key, 1, &rule,
                __atomic_load_n(&table->version, __ATOMIC_ACQUIRE));
    return rule;
}

const struct fdp_rule *
fdp__table_lookup_at(struct fdp_table *table, const struct fdp_key *key,
                     uint64_t version)
{
    const struct fdp_rule *rule;

    lookup_walk(table, &key, 1, &rule, version);
    return rule;
}

/* fdp_table_lookup_batch() at 'version', in the caller's read-side
 * section. */
static inline __attribute__((always_inline)) void
lookup_batch_counted(struct fdp_table *table,
                     const struct fdp_key *const keys[], size_t n,
                     const struct fdp_rule *rules[], uint64_t version)
{
    uint64_t hits = 0;
    uint64_t visited = lookup_walk(table, keys, n, rules, version);

    for (size_t i = 0; i < n; i++) {
        hits += rules[i] != NULL;
    }
    __atomic_fetch_add(&table->n_lookups, n, __ATOMIC_RELAXED);
    __atomic_fetch_add(&table->n_hits, hits, __ATOMIC_RELAXED);
    __atomic_fetch_add(&table->n_visited, visited, __ATOMIC_RELAXED);
}

void
fdp__table_lookup_batch_uncounted_at(struct fdp_table *table,
                                     const struct fdp_key *const keys[],
                                     size_t n, const struct fdp_rule *rules[],
                                     uint64_t version)
{
    lookup_walk(table, keys, n, rules, version);
}

uint64_t
fdp__table_match_any_batch(struct fdp_table *table,
                           const struct fdp_key *const keys[], uint64_t probe,
                           uint64_t version)
{
    const struct tss_view *view = FDP_RCU_GET(table->view);
    uint64_t matched = 0;

    /* Any visible flow answers, so a key leaves the walk at its first
     * hit, and the walk needs neither the best rule so far nor the
     * sub-tables' bounds.  Hits still count: they rank the sub-tables, so
     * that the ones that answer most are probed first. */
    for (size_t s = 0; view && s < view->n && probe; s++) {
        const struct view_entry *e = &view->e[s];
        const struct fdp_rule *found[FDP_TABLE_BATCH_MAX];
        uint64_t hit = e->lookup_batch(e->st, keys, probe, version, found);
        if (hit) {
            count_hits(&e->st->hits, (uint64_t) __builtin_popcountll(hit));
            matched |= hit;
            probe &= ~hit;
        }
    }
    return matched;
}

void
fdp__table_lookup_batch_at(struct fdp_table *table,
                           const struct fdp_key *const keys[], size_t n,
                           const struct fdp_rule *rules[], uint64_t version)
{
    if (n > FDP_TABLE_BATCH_MAX) {
        n = FDP_TABLE_BATCH_MAX;
    }
    lookup_batch_counted(table, keys, n, rules, version);
}

void
fdp_table_lookup_batch(struct fdp_table *table,
                       const struct fdp_key *const keys[], size_t n,
                       const struct fdp_rule *rules[])
{
    if (n > FDP_TABLE_BATCH_MAX) {
        n = FDP_TABLE_BATCH_MAX;
    }
    fdp__rcu_read_lock();
    lookup_batch_counted(table, keys, n, rules,
                         __atomic_load_n(&table->version, __ATOMIC_ACQUIRE));
    fdp__rcu_read_unlock();
}

/* for_each_rule() state for fdp_table_for_each(). */
struct for_each_aux {
    bool (*cb)(const struct fdp_rule *, void *aux);
    void *aux;
    uint64_t version;
};

static bool
for_each_rule_cb(struct fdp_rule *r, void *aux_)
{
    struct for_each_aux *fa = aux_;

    return !fdp__rule_visible(r, fa->version) || fa->cb(r, fa->aux);
}

void
fdp_table_for_each(struct fdp_table *table,
                   bool (*cb)(const struct fdp_rule *, void *aux), void *aux)
{
    fdp__table_for_each_at(table, fdp_table_version(table), cb, aux);
}

void
fdp__table_for_each_at(struct fdp_table *table, uint64_t version,
                       bool (*cb)(const struct fdp_rule *, void *aux),
                       void *aux)
{
    fdp__rcu_read_lock();
    const struct tss_view *view = FDP_RCU_GET(table->view);

    for (size_t s = 0; view && s < view->n; s++) {
        const struct fdp__subtable *st = view->e[s].st;
        struct for_each_aux fa = { .cb = cb, .aux = aux, .version = version };
        if (!st->class->for_each_rule(st, true, for_each_rule_cb, &fa)) {
            fdp__rcu_read_unlock();
            return;
        }
    }
    fdp__rcu_read_unlock();
}

void
fdp_table_get_stats(const struct fdp_table *table,
                    struct fdp_table_stats *stats)
{
    struct fdp_table *t = (struct fdp_table *) table;

    /* Lock-free, as table.h promises: the shape and memory of the table
     * as of its last published view, the rest from atomic counters.  The
     * read-side section keeps the view alive while we copy from it. */
    memset(stats, 0, sizeof *stats);
    fdp__rcu_read_lock();
    const struct tss_view *view = FDP_RCU_GET(t->view);
    stats->n_masks = view->stats.n_masks;
    stats->n_pipapo_tables = view->stats.n_pipapo_tables;
    stats->n_pipapo_rules = view->stats.n_pipapo_rules;
    stats->n_keyed_subtables = view->stats.n_keyed_subtables;
    stats->memory_bytes = view->stats.memory_bytes;
    fdp__rcu_read_unlock();

    stats->n_flows = __atomic_load_n(&t->n_flows, __ATOMIC_RELAXED);
    stats->memory_bytes += __atomic_load_n(&t->rule_memory, __ATOMIC_RELAXED);
    stats->n_lookups = __atomic_load_n(&t->n_lookups, __ATOMIC_RELAXED);
    stats->n_hits = __atomic_load_n(&t->n_hits, __ATOMIC_RELAXED);
    /* Lookups add to 'n_lookups' and 'n_hits' separately: a concurrent
     * batch may have counted its hits first. */
    stats->n_misses = stats->n_lookups > stats->n_hits
                      ? stats->n_lookups - stats->n_hits : 0;
    stats->n_subtables_visited = __atomic_load_n(&t->n_visited,
                                                 __ATOMIC_RELAXED);
}

/* for_each_rule() state for entry_stats(). */
struct entry_stats_aux {
    struct fdp_subtable_stats *out;
    uint64_t version;
};

static bool
entry_stats_rule_cb(struct fdp_rule *r, void *aux_)
{
    struct entry_stats_aux *aux = aux_;

    if (fdp__rule_visible(r, aux->version)) {
        aux->out->n_flows++;
        if (r->priority > aux->out->max_priority) {
            aux->out->max_priority = r->priority;
        }
    }
    return true;
}

/* Describes sub-table 'st': its shape (the class's describe()), why the
 * table made it, and the flows visible at 'version' and the highest
 * priority among them, as fdp_table_for_each() walks them.  Caller holds
 * an RCU read-side section. */
static void
entry_stats(const struct fdp__subtable *st, uint64_t version,
            struct fdp_subtable_stats *out)
{
    struct entry_stats_aux aux = { .out = out, .version = version };

    st->class->describe(st, out);
    out->reason = st->reason;
    out->hits = __atomic_load_n(&st->hits, __ATOMIC_RELAXED);
    st->class->for_each_rule(st, true, entry_stats_rule_cb, &aux);
}

int
fdp_table_get_subtable_stats(const struct fdp_table *table,
                             struct fdp_subtable_stats *out, size_t n_max,
                             size_t *n)
{
    struct fdp_table *t = (struct fdp_table *) table;

    if (!n || (n_max && !out)) {
        return EINVAL;
    }

    /* One read-side section and one version for the whole walk, as
     * fdp_table_for_each() does: every flow visible at that version is in
     * exactly one sub-table of the view (a flow being moved to the overflow
     * sub-table is visible in only one of its two places at any version),
     * so the counts add up to the flows visible at that version. */
    fdp__rcu_read_lock();
    uint64_t version = __atomic_load_n(&t->version, __ATOMIC_ACQUIRE);
    const struct tss_view *view = FDP_RCU_GET(t->view);

    *n = view->n;
    for (size_t i = 0; i < view->n && i < n_max; i++) {
        const struct view_entry *e = &view->e[i];
        struct fdp_subtable_stats *s = &out[i];

        memset(s, 0, sizeof *s);
        s->max_priority = -1;
        s->memory_bytes = view->entry_memory[i];
        entry_stats(e->st, version, s);
    }
    fdp__rcu_read_unlock();
    return *n > n_max ? ENOBUFS : 0;
}

void
fdp_table_for_each_partition(const struct fdp_table *table,
                             bool (*cb)(const struct fdp_partition_stats *,
                                        void *aux),
                             void *aux)
{
    fdp__rcu_read_lock();
    const struct tss_view *view = FDP_RCU_GET(table->view);
    for (size_t i = 0; view && i < view->n; i++) {
        const struct fdp__subtable *st = view->e[i].st;
        if (st->class->for_each_partition
            && !st->class->for_each_partition(st, cb, aux)) {
            break;
        }
    }
    fdp__rcu_read_unlock();
}

/* ---------------------------------------------------------------------- */
/* Rules.                                                                  */

void
fdp_rule_get_match(const struct fdp_rule *rule, struct fdp_match *match)
{
    fdp__cmatch_expand(&rule->match, match);
}

void
fdp_rule_get_spec(const struct fdp_rule *rule, struct fdp_flow_spec *spec,
                  struct fdp_match *match)
{
    fdp__cmatch_expand(&rule->match, match);
    spec->match = match;
    spec->actions = FDP_RCU_GET(((struct fdp_rule *) rule)->actions);
    spec->cookie = rule->cookie;
    spec->priority = rule->priority;
    spec->idle_timeout = rule->idle_timeout;
    spec->hard_timeout = rule->hard_timeout;
    spec->table_id = rule->table_id;
    spec->flags = rule->flags;
}

void
fdp_rule_get_stats(const struct fdp_rule *rule, struct fdp_rule_stats *stats)
{
    const struct fdp__rule_counters *s = rule->stats;

    stats->n_packets = 0;
    stats->n_bytes = 0;
    for (unsigned int i = 0; i < FDP__STATS_SHARDS; i++) {
        stats->n_packets += __atomic_load_n(&s->shard[i].n_packets,
                                            __ATOMIC_RELAXED);
        stats->n_bytes += __atomic_load_n(&s->shard[i].n_bytes,
                                          __ATOMIC_RELAXED);
    }
    stats->used_ms = __atomic_load_n(&s->used_ms, __ATOMIC_RELAXED);
    stats->created_ms = __atomic_load_n(&s->created_ms, __ATOMIC_RELAXED);
    stats->modified_ms = rule->modified_ms;
}

void
fdp_rule_account(const struct fdp_rule *rule, uint64_t n_bytes,
                 int64_t now)
{
    fdp__rule_account_n(rule, 1, n_bytes, now, FDP__STATS_SHARED);
}

/* Owned shards in use: bit i for shard i. */
static uint32_t stats_shards_taken;

unsigned int
fdp__stats_shard_acquire(void)
{
    uint32_t taken = __atomic_load_n(&stats_shards_taken, __ATOMIC_RELAXED);

    for (;;) {
        unsigned int i = (unsigned int) __builtin_ctz(~taken);
        if (i >= FDP__STATS_SHARED) {
            return FDP__STATS_SHARED;
        }
        if (__atomic_compare_exchange_n(&stats_shards_taken, &taken,
                                        taken | (UINT32_C(1) << i), false,
                                        __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED)) {
            return i;
        }
    }
}

void
fdp__stats_shard_release(unsigned int shard)
{
    if (shard < FDP__STATS_SHARED) {
        __atomic_fetch_and(&stats_shards_taken, ~(UINT32_C(1) << shard),
                           __ATOMIC_ACQ_REL);
    }
}

uint64_t
fdp_rule_get_cookie(const struct fdp_rule *rule)
{
    return rule->cookie;
}

uint64_t
fdp_rule_get_seq(const struct fdp_rule *rule)
{
    return rule->seq;
}

bool
fdp__table_is_disjoint(const struct fdp_table *table)
{
    return __atomic_load_n(&table->disjoint, __ATOMIC_RELAXED);
}

void
fdp__table_set_clock(struct fdp_table *table, const uint64_t *clock)
{
    table->clock = clock;
}

void
fdp__table_reap(struct fdp_table *table, bool all)
{
    pthread_mutex_lock(&table->mutex);
    if (all || table->n_removed > REMOVED_PENDING_MAX) {
        reap_removed(table);
        reap_subtables(table);
        if (all && update_ties(table)) {
            publish_view(table);
        }
    }
    pthread_mutex_unlock(&table->mutex);
}

uint64_t
fdp_table_version(const struct fdp_table *table)
{
    return __atomic_load_n(&table->version, __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------------- */
/* Creation and destruction.                                               */

int
fdp_table_create(struct fdp_table **tablep)
{
    struct fdp_table *table;
    int error;

    *tablep = NULL;
    /* A FLOWDP_CPU the machine cannot honour is refused here rather than
     * silently running generic code (see flowdp/cpu.h). */
    error = fdp_cpu_init();
    if (error) {
        return error;
    }
    table = aligned_alloc(64, sizeof *table);
    if (!table) {
        return ENOMEM;
    }
    memset(table, 0, sizeof *table);
    error = fdp_hash_random_basis(&table->basis);
    if (!error) {
        error = fdp_hash_random_key(&table->index_key);
    }
    if (error) {
        free(table);
        return error;
    }
    fdp__hmap_init(&table->subtable_index);
    fdp__hmap_init(&table->rule_index);
    pthread_mutex_init(&table->mutex, NULL);
    table->max_masks = FDP_TABLE_DEFAULT_MAX_MASKS;
    table->view = calloc(1, sizeof *table->view);
    if (!table->view) {
        free(table);
        return ENOMEM;
    }
    table->view->stats.memory_bytes = sizeof *table + sizeof *table->view;
    *tablep = table;
    return 0;
}

/* Frees 'r' now (fdp_table_destroy(): no reader remains). */
static bool
free_rule_cb(struct fdp_rule *r, void *aux)
{
    rule_free(NULL, r);
    return true;
}

void
fdp_table_destroy(struct fdp_table *table)
{
    if (table) {
        /* Let deferred frees that reference the table finish first. */
        fdp__rcu_barrier();
        fdp__table_destroy_after_barrier(table);
    }
}

void
fdp__table_destroy_after_barrier(struct fdp_table *table)
{
    /* Removed rules not yet unlinked are freed below with the rest. */
    FDP_RCU_TSAN_ACQUIRE();
    free(table->removed);
    for (size_t i = 0; i < table->n_subs; i++) {
        struct fdp__subtable *st = table->subs[i];
        st->class->for_each_rule(st, false, free_rule_cb, NULL);
        st->class->destroy(st, false);
    }
    free(table->subs);
    free(table->ties);
    free(table->shared_stats);
    free(table->txn_removed);
    for (size_t i = 0; table->subtable_index.buckets
                       && i <= table->subtable_index.mask; i++) {
        for (struct fdp__hmap_node *n = table->subtable_index.buckets[i],
                                   *next; n; n = next) {
            next = n->next;
            free(CONTAINER_OF(n, struct subtable_node, node));
        }
    }
    fdp__hmap_destroy(&table->subtable_index);
    fdp__hmap_destroy(&table->rule_index);
    free(table->view);
    pthread_mutex_destroy(&table->mutex);
    free(table);
}
