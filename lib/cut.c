/*
 * Partitioned range sub-tables: a tree of cuts over the rules, with small
 * leaves.
 *
 * What it is for
 * ==============
 * Firewall and ACL rule sets hold thousands of flows with prefixes, port
 * ranges and distinct priorities.  One pipapo sub-table over all of them
 * (lib/pipapo.c) intersects bitmaps thousands of bits wide in every field
 * and rebuilds whole on a change.  This sub-table cuts the rules into
 * partitions of a few rules each, so that a lookup reaches one or two of
 * them, and a change rebuilds one.
 *
 * Design
 * ======
 * Cuts.  An inner node cuts on the top k bits of one field (a "cut",
 * written field/k: nw_dst/16 is the destination's /16).  A rule "fits" a
 * cut if it is exact on those bits: a prefix at least k long, or a range
 * whose ends share their top k bits.  Fitting rules go to the child for
 * their value, found in a hash map of value -> child; the others go to the
 * node's spill child, which is cut again on something else.  A packet can
 * match only rules of the child its own top k bits select and rules of
 * the spill: so a lookup follows at most two edges per node.
 *
 * Choosing a cut (HiCuts' and CutSplit's idea, without copying rules into
 * several children).  For every field of the sub-table and every width k
 * (4, 8, ... 24, then 32, 40, ... up to 64 bits), the writer counts, in
 * one hash pass, the rules that fit and the largest group of them that
 * shares one value; it takes the cut that minimises
 *     spill + largest child,
 * the rules a packet may still have to look at after the cut, and stops
 * when no cut lowers it below the node's rules.  Nodes of at most
 * fdp__cut_leaf_max (16) rules are leaves.  A rule is never copied: each
 * lives in exactly one leaf, so a change touches one leaf and memory is
 * linear in the rules.
 *
 * Leaves.  A leaf is an immutable, RCU-published lookup form of its rules,
 * best first.  The bits every rule of the leaf matches alike (the cut
 * bits above it, a shared dl_type) are tested once, as (mask, value)
 * pairs of key words; what differs is tested rule by rule: for each key
 * word that differs its mask and value, for each range field its low end
 * and its span (a rule without a range there passes any value).  The
 * usual shape, two differing words and two ranges (a five-tuple with
 * port ranges), is "fixed": the records come in blocks of four rules, one
 * 256-bit vector per record word, that the AVX2 scan (lib/cut-avx2.c)
 * tests four at a time with no branch until a block holds a match, and
 * the generic scan one by one.  Other shapes take records per rule.  Up
 * to 64 rules a leaf is such a list; above (a set no cut separates) it is
 * a pipapo snapshot.  A leaf also keeps its rules' add versions, and the
 * number of its rules being removed (class_removing()): while none is, a
 * match's visibility is read from the leaf, and the lookup loads no rule.
 *
 * Priority bounds.  Every node keeps the best (priority, seq) of the
 * rules below it.  A lookup visits, at each inner node, the child and the
 * spill in the order of their bounds and skips a node that cannot beat
 * the best rule found so far: with rules of distinct priorities (first
 * match), most lookups end after the first leaf that matches.  Bounds
 * rise on insert, before the commit that makes the rule visible (a lookup
 * that loads the new version sees the raised bound); a leaf's bound falls
 * on remove, which the table calls after the grace period that follows
 * the rule's removal, when no lookup can see it any more; inner nodes'
 * bounds are tightened by compact() (fdp_table_run()).
 *
 * Updates.  An insert follows the rule's cut values down to its leaf,
 * creating an empty child or spill where there is none, and adds the rule
 * to the leaf's writer list; publish() rebuilds the lookup form of each
 * leaf changed since the last publish (a few microseconds for 16 rules).
 * A leaf that grows past twice fdp__cut_leaf_max is cut, and its subtree
 * replaces it; a leaf left empty is unhooked, then an inner node left
 * without children.  compact() folds a subtree that has shrunk to a
 * leaf's size back into one leaf.  Lookups never stop: child maps are
 * open-addressed, filled in place (value first, then the child pointer
 * with a release store) and emptied with a tombstone, and copied whole
 * only to grow or to shed tombstones; everything replaced is freed after
 * a grace period.
 *
 * Cost.  A lookup costs, per node on its path, one hash of one key word
 * and one probe: the node's line, whose tagged map word gives the slot,
 * and the slot's line; per leaf its header line (with the common pairs),
 * one line of ranges, and a 256-byte block per four rules scanned.
 * Counted on the ClassBench sets: 3-6 nodes and 1.2-2.2 leaves per
 * lookup, 4.6-9 rules tested (1-3 blocks), trees 3-5 levels deep; so
 * about 12-20 lines, of which the first levels stay in cache, so the
 * tree walk's instructions and the misses on the nodes' and leaves' first
 * lines are the cost (instruction counts and profiles: docs/PERFORMANCE.md,
 * "Figures behind design choices").  The walk is iterative; prefetching
 * every key's path for the whole batch ahead of the walk cost more
 * instructions than it saved misses.
 *
 * Worked example
 * ==============
 * Rules, best first: A "nw_dst=10.1.0.0/16,tp_dst=80", B
 * "nw_dst=10.1.2.0/24,tp_dst=1000-2000", C "nw_dst=10.2.0.0/16", D
 * "nw_src=192.168.0.0/16", with a leaf size of 1.  At the root, the cut
 * nw_dst/16 fits A, B and C (largest group: A and B, in 10.1) and spills D:
 * cost 1 + 2 = 3; nw_dst/24 would fit only B (cost 3 + 1 = 4).  The root
 * cuts nw_dst/16: child 10.1 {A, B}, child 10.2 {C}, spill {D}.  Child 10.1
 * is cut again: tp_dst/16 fits only A (B's range spans many values),
 * nw_dst/24 fits only B; either gives cost 2 and leaves {A} and {B}.  A
 * packet to 10.2.3.4 from 192.168.1.1 follows the root's child 10.2, finds
 * C, and visits the spill only if D's bound beats C: it does not (D comes
 * after C), so the lookup ends after one leaf.
 *
 * References: P. Gupta, N. McKeown, "Packet classification using
 * hierarchical intelligent cuttings" (HiCuts), Hot Interconnects 1999;
 * W. Li et al., "CutSplit: a decision-tree combining cutting and
 * splitting for scalable packet classification", INFOCOM 2018; J. Daly
 * et al., "TupleMerge", IEEE/ACM ToN 2019.
 */
#include <config.h>

#include "lib/cut.h"
#include "lib/cpu-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/cpu.h>
#include <flowdp/hash.h>
#include "lib/field.h"
#include "lib/match-internal.h"
#include "lib/pipapo.h"
#include "lib/rule.h"

uint32_t fdp__cut_leaf_max = CUT_LEAF_MAX;

/* Deepest tree: a path visits at most this many inner nodes. */
#define CUT_DEPTH_MAX 8

/* Largest list leaf. */
#define CUT_LIST_MAX 64

/* Words of a fixed-shape leaf record: two (mask, value) pairs, two
 * (low, span) pairs. */
#define CUT_REC_FIXED 8

/* A leaf's lookup form (immutable once published): see "Leaves". */
struct cut_range {
    uint8_t word, shift;
    uint64_t fmask;             /* The field's bits, shifted down. */
};

struct cut_leaf {
    /* What a lookup reads first, with the first common pair, in the
     * leaf's first cache line (the leaf is 64-byte aligned). */
    uint32_t n;                 /* Rules, best first. */
    uint8_t n_cwords;           /* Words every rule matches alike... */
    uint8_t n_words;            /* ...and those that differ. */
    uint8_t n_ranges;           /* Range fields. */
    uint8_t rec_words;          /* 2 * (n_words + n_ranges). */
    bool slow;                  /* A range on a 128-bit field: each rule's
                                 * compact match is tested too. */
    bool fixed;                 /* Records of CUT_REC_FIXED words. */
    uint16_t rules_off;         /* Words from 'data' to the rules. */
    uint32_t n_removing;        /* Rules of this form given a remove
                                 * version (atomic; see leaf_visible()).
                                 * Here, before the 8-byte map, so that
                                 * nothing pads the header. */
    union {
        uint64_t cword_bits;        /* Bit w: key word w is common. */
        uint8_t fixed_words[4];     /* A fixed-shape leaf's common words
                                     * and differing words, in order,
                                     * unused ones 0 (with mask 0). */
    };
    struct pipapo_snapshot *snap;   /* Non-NULL: more than CUT_LIST_MAX
                                     * rules, looked up by pipapo. */
    struct rcu_head rcu;

    /* Then, in order: n_cwords pairs (common mask, its value); one word,
     * the map of the key words that differ (bit w: key word w), which a
     * general leaf's records cover ('word_bits', read through
     * leaf_word_bits(); kept out of the header since the key's 41 words
     * made the maps 64 bits, so that the header and the first common pair
     * still share a line; a fixed-shape leaf leaves it 0); n_ranges
     * struct cut_range; n records of rec_words words: for each of
     * 'word_bits' its mask and value (common bits left out), then for
     * each range its low bound and its span (high - low); the n rule
     * pointers; their n add versions.  A fixed-shape leaf (CUT_REC_FIXED)
     * pads every record to two pairs of each. */
    uint64_t data[];
};

static_assert(offsetof(struct cut_leaf, data) + 2 * sizeof(uint64_t) <= 64,
              "a leaf's header and first common pair share one line");

static const uint64_t *
leaf_cpairs(const struct cut_leaf *l)
{
    return l->data;
}

/* The map of the key words a general leaf's records cover. */
static uint64_t
leaf_word_bits(const struct cut_leaf *l)
{
    return l->data[2 * l->n_cwords];
}

static const struct cut_range *
leaf_ranges(const struct cut_leaf *l)
{
    return (const struct cut_range *) (l->data + 2 * l->n_cwords + 1);
}

/* The records: 32-byte aligned, for the AVX2 scan's loads. */
static const uint64_t *
leaf_recs(const struct cut_leaf *l)
{
    return (const uint64_t *) (((uintptr_t) (leaf_ranges(l) + l->n_ranges)
                                + 31) & ~(uintptr_t) 31);
}

/* Words of a leaf's records: whole blocks for a fixed-shape leaf. */
static size_t
leaf_rec_words(uint32_t n, bool fixed, unsigned int rec_words)
{
    return fixed ? (size_t) (n + 3) / 4 * CUT_BLOCK_WORDS
                 : (size_t) n * rec_words;
}

static struct fdp_rule *const *
leaf_rules(const struct cut_leaf *l)
{
    return (struct fdp_rule *const *) (l->data + l->rules_off);
}

static const uint64_t *
leaf_addv(const struct cut_leaf *l)
{
    return l->data + l->rules_off + l->n;
}

/* Bytes of leaf 'l', its pipapo snapshot included. */
static uint64_t
leaf_memory(const struct cut_leaf *l)
{
    return l->snap ? sizeof *l + l->snap->memory
                   : sizeof *l + (l->rules_off + 2 * (uint64_t) l->n)
                                 * sizeof(uint64_t);
}

/* True if rule 'r' of leaf 'l' is visible at 'version'.  Add versions
 * never change, so the leaf keeps a copy; a remove version is set only by
 * a transaction that removes the rule, which first tells the sub-table
 * (class_removing()), and that counts it in the leaf's form before the
 * commit publishes the version.  So while a form counts none, a rule of
 * it is visible from its add version on, and the lookup need not load
 * the rule (a cache miss at the end of every lookup that hits). */
static bool
leaf_visible(const struct cut_leaf *l, uint32_t r, uint64_t version)
{
    if (!__atomic_load_n(&((struct cut_leaf *) l)->n_removing,
                         __ATOMIC_ACQUIRE)) {
        return leaf_addv(l)[r] <= version;
    }
    return fdp__rule_visible(leaf_rules(l)[r], version);
}

/* A child map: open addressing, linear probing. */
struct cut_slot {
    uint64_t value;
    struct cut_node *child;     /* NULL: empty; &tombstone: removed. */
};

struct cut_map {
    uint32_t mask;              /* Slots - 1. */
    uint8_t shift;              /* 64 - log2(slots). */
    uint32_t n;                 /* Children. */
    uint32_t n_tombs;
    uint64_t multiplier;        /* The sub-table's. */
    struct rcu_head rcu;
    struct cut_slot slots[] __attribute__((aligned(64)));
};

/* A node holds its map as one word, the map's address with log2 of its
 * slot count in the low bits (maps are 64-byte aligned), so that a lookup
 * finds a key's slot from the node's line alone, without first loading
 * the map's header. */
static_assert(offsetof(struct cut_map, slots) == 64,
              "a map's slots start one line past its header");
#define CUT_MAP_TAG_BITS 63u

struct cut_node {
    /* Read by lookups. */
    int max_priority;           /* Bounds of the subtree (atomic). */
    uint64_t min_seq;
    bool inner;
    uint8_t word, shift;        /* Inner: the cut value is */
    uint64_t vmask;             /* (key->w[word] >> shift) & vmask. */
    uintptr_t map_tag;          /* Inner, RCU: struct cut_map, tagged. */
    struct cut_node *spill;     /* Inner, RCU; NULL if none. */
    struct cut_leaf *leaf;      /* Leaf, RCU; NULL while empty. */
    enum fdp_field field;       /* Inner: the cut is field/k. */
    uint8_t k;
    uint8_t depth;
    bool is_spill;              /* Where it hangs in 'parent'. */
    uint64_t value;

    /* Writer only. */
    struct cut_node *parent;
    uint32_t n_rules;           /* In the subtree. */
    uint32_t n_kids;            /* Inner: children, spill included. */
    struct fdp_rule **rules;    /* Leaf: best first. */
    uint32_t n, alloc;
    uint32_t uncut_at;          /* Leaf: no cut helped at this size. */
    bool dirty;
    struct cut_node *dirty_next;
    struct rcu_head rcu;

    uint64_t hits __attribute__((aligned(64)));     /* Lossy. */
};

static struct cut_node tombstone;

/* Defines 'name', an RCU callback that passes the 'type' whose 'rcu' member
 * is 'head' to 'free_fn', after acquiring the grace period for
 * ThreadSanitizer (lib/rcu.h). */
#define DEFINE_RCU_FREE(name, type, free_fn)                            \
    static void                                                         \
    name(struct rcu_head *head)                                         \
    {                                                                   \
        FDP_RCU_TSAN_ACQUIRE();                                         \
        free_fn(CONTAINER_OF(head, type, rcu));                         \
    }

/* Node 'n''s map, or NULL (readers and the writer). */
static struct cut_map *
node_map(const struct cut_node *n)
{
    return (struct cut_map *) (__atomic_load_n(&n->map_tag, __ATOMIC_ACQUIRE)
                               & ~(uintptr_t) CUT_MAP_TAG_BITS);
}

/* The child in slot 'i' of 'm', or NULL if the slot is empty or its
 * child was removed. */
static struct cut_node *
slot_child(const struct cut_map *m, uint32_t i)
{
    struct cut_node *c = __atomic_load_n(&m->slots[i].child,
                                         __ATOMIC_ACQUIRE);

    return c == &tombstone ? NULL : c;
}

/* Runs the statement that follows with 'c' set to each child in inner
 * node 'n''s map (not its spill). */
#define FOR_EACH_CHILD(c, n)                                            \
    for (const struct cut_map *m_ = node_map(n); m_; m_ = NULL)         \
        for (uint32_t i_ = 0; i_ <= m_->mask; i_++)                     \
            for (struct cut_node *c = slot_child(m_, i_); c; c = NULL)

/* Publishes 'm' as node 'n''s map. */
static void
set_map(struct cut_node *n, struct cut_map *m)
{
    uintptr_t tag = m ? (uintptr_t) (64 - m->shift) : 0;

    __atomic_store_n(&n->map_tag, (uintptr_t) m | tag, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------------- */
/* Rules and cuts.                                                         */

/* The widths tried for a field of 'n_bits' bits, in 'ks'; returns their
 * number. */
static unsigned int
cut_widths(unsigned int n_bits, uint8_t *ks)
{
    unsigned int n = 0, top = n_bits > 64 ? 64 : n_bits;

    if (n_bits <= 8) {
        ks[n++] = (uint8_t) n_bits;
        return n;
    }
    for (unsigned int k = 4; k <= top; k += k < 24 ? 4 : 8) {
        ks[n++] = (uint8_t) k;
    }
    if (ks[n - 1] != top) {
        ks[n++] = (uint8_t) top;
    }
    return n;
}

/* If 'rule' is exact on the top 'k' bits of field 'f', stores them in
 * '*v' and returns true. */
static bool
rule_cut_value(const struct fdp_rule *rule, enum fdp_field f, unsigned int k,
               uint64_t *v)
{
    const struct fdp__cmatch *c = &rule->match;
    unsigned int top = fdp__field(f)->n_bits - k;
    fdp_u128 lo = fdp__cmatch_get(c, FDP__MATCH_VALUE, f);

    if (fdp__cmatch_has_range(c, f)) {
        fdp_u128 hi = fdp__cmatch_get(c, FDP__MATCH_HI, f);
        if (lo >> top != hi >> top) {
            return false;
        }
    } else {
        fdp_u128 m = fdp__cmatch_get(c, FDP__MATCH_MASK, f) >> top;
        if (m != fdp__ones(k)) {
            return false;
        }
    }
    *v = (uint64_t) (lo >> top);
    return true;
}

/* Sets up 'n' as an inner node cutting on f/k. */
static void
set_cut(struct cut_node *n, enum fdp_field f, unsigned int k)
{
    const struct fdp__field *fd = fdp__field(f);

    n->inner = true;
    n->field = f;
    n->k = (uint8_t) k;
    n->word = fd->word;
    n->shift = (uint8_t) (fd->n_bits == 128 ? 64 - k
                                            : fd->shift + fd->n_bits - k);
    n->vmask = (uint64_t) fdp__ones(k);
}

static uint64_t
key_cut_value(const struct cut_node *n, const struct fdp_key *key)
{
    return (key->w[n->word] >> n->shift) & n->vmask;
}

/* A value -> count table for choose_cut(). */
struct counter {
    uint64_t *values;
    uint32_t *counts;
    uint32_t mask;
};

static uint32_t
counter_slot(const struct counter *ct, uint64_t v)
{
    uint32_t i = (uint32_t) ((v * UINT64_C(0x9e3779b97f4a7c15)) >> 32)
                 & ct->mask;

    while (ct->counts[i] && ct->values[i] != v) {
        i = (i + 1) & ct->mask;
    }
    return i;
}

/* Chooses the cut for 'rules' (n): see "Choosing a cut".  Returns false
 * if no cut helps enough (or out of memory: then the rules stay in one
 * leaf, which is slower but correct). */
static bool
choose_cut(struct fdp_rule **rules, uint32_t n,
           const struct fdp__field_map *field_set,
           enum fdp_field *fp, unsigned int *kp)
{
    struct counter ct;
    uint32_t slots = 16;
    uint64_t best = n;
    bool found = false;

    while (slots < 2 * n) {
        slots *= 2;
    }
    ct.mask = slots - 1;
    ct.values = malloc(slots * sizeof *ct.values);
    ct.counts = malloc(slots * sizeof *ct.counts);
    if (!ct.values || !ct.counts) {
        free(ct.values);
        free(ct.counts);
        return false;
    }
    /* Each rule's field, read once per field rather than once per width:
     * its value (a range's low end) and, for a range, its high end, else
     * its mask. */
    fdp_u128 *lo = malloc(n * sizeof *lo), *hm = malloc(n * sizeof *hm);
    bool *ranged = malloc(n * sizeof *ranged);
    const struct fdp__field_map none = FDP__FIELD_MAP_EMPTY;
    FDP__FIELD_MAP_FOR_EACH (f, lo && hm && ranged ? field_set : &none) {
        unsigned int n_bits = fdp__field(f)->n_bits;
        uint8_t ks[24];
        unsigned int n_ks = cut_widths(n_bits, ks);

        for (uint32_t i = 0; i < n; i++) {
            const struct fdp__cmatch *c = &rules[i]->match;
            ranged[i] = fdp__cmatch_has_range(c, f);
            lo[i] = fdp__cmatch_get(c, FDP__MATCH_VALUE, f);
            hm[i] = fdp__cmatch_get(c, ranged[i] ? FDP__MATCH_HI
                                                  : FDP__MATCH_MASK, f);
        }
        for (unsigned int j = 0; j < n_ks; j++) {
            unsigned int top = n_bits - ks[j];
            fdp_u128 ones = fdp__ones(ks[j]);
            uint32_t n_fit = 0, largest = 0;

            memset(ct.counts, 0, slots * sizeof *ct.counts);
            for (uint32_t i = 0; i < n; i++) {
                /* As rule_cut_value(). */
                if (ranged[i] ? lo[i] >> top != hm[i] >> top
                              : hm[i] >> top != ones) {
                    continue;
                }
                uint64_t v = (uint64_t) (lo[i] >> top);
                uint32_t s = counter_slot(&ct, v);
                ct.values[s] = v;
                if (++ct.counts[s] > largest) {
                    largest = ct.counts[s];
                }
                n_fit++;
            }
            uint64_t cost = (uint64_t) (n - n_fit) + largest;
            if (n_fit && largest < n && cost < best) {
                best = cost;
                *fp = f;
                *kp = ks[j];
                found = true;
            }
        }
    }
    free(lo);
    free(hm);
    free(ranged);
    free(ct.values);
    free(ct.counts);
    return found;
}

/* ---------------------------------------------------------------------- */
/* Leaves.                                                                 */

static uint64_t
leaf_value(const struct cut_range *r, const struct fdp_key *key)
{
    return (key->w[r->word] >> r->shift) & r->fmask;
}

/* True if 'key' matches 'c' (the slow leaves). */
static bool
cmatch_matches(const struct fdp__cmatch *c, const struct fdp_key *key)
{
    unsigned int n = fdp__cmatch_n_words(c), i = 0;

    for (uint64_t ws = c->words; ws; ws &= ws - 1, i++) {
        unsigned int w = fdp__lowest_word(ws);
        if ((key->w[w] ^ c->w[i]) & c->w[n + i]) {
            return false;
        }
    }
    if (!c->hi_words) {
        return true;            /* No range (lib/match-internal.h). */
    }
    FDP__FIELD_MAP_FOR_EACH (f, fdp__cmatch_range_fields(c)) {
        fdp_u128 v = fdp__key_get(key, f);
        if (v < fdp__cmatch_get(c, FDP__MATCH_VALUE, f)
            || v > fdp__cmatch_get(c, FDP__MATCH_HI, f)) {
            return false;
        }
    }
    return true;
}

uint32_t
fdp__cut_scan_generic(const uint64_t *blocks, uint32_t n, uint32_t from,
                      uint64_t k0, uint64_t k1, uint64_t r0, uint64_t r1)
{
    for (uint32_t r = from; r < n; r++) {
        /* Word x of rule r: blocks[r / 4 * CUT_BLOCK_WORDS + x * 4 + r % 4]. */
        const uint64_t *b = blocks + r / 4 * CUT_BLOCK_WORDS + r % 4;
        uint64_t miss = ((k0 ^ b[4]) & b[0]) | ((k1 ^ b[12]) & b[8])
                        | (uint64_t) (r0 - b[16] > b[20])
                        | (uint64_t) (r1 - b[24] > b[28]);
        if (!miss) {
            return r;
        }
    }
    return n;
}

/* The leaf scans, best first, generic last (lib/cpu-internal.h). */
struct cut_scan_impl {
    struct fdp__cpu_impl cpu;
    fdp__cut_scan_fn *scan;
};
static const struct cut_scan_impl scan_impls[] = {
#ifdef FDP_HAVE_AVX2
    { { "avx2", FDP_CPU_AVX2, NULL }, fdp__cut_scan_avx2 },
#endif
    { { "generic", FDP_CPU_GENERIC, NULL }, fdp__cut_scan_generic },
};

/* The scan lookups use: the row fdp__cpu_select() picks, and under
 * FLOWDP_CPU=validate every scan checked against the generic one. */
static fdp__cut_scan_fn *scan_selected = fdp__cut_scan_generic;
static bool scan_validate;
static pthread_once_t scan_once = PTHREAD_ONCE_INIT;

static void
scan_select(void)
{
    scan_selected = scan_impls[FDP__CPU_SELECT(scan_impls,
                                               FDP_ARRAY_SIZE(scan_impls))]
                    .scan;
    scan_validate = fdp_cpu_validating();
}

static uint32_t
leaf_scan(const uint64_t *blocks, uint32_t n, uint32_t from, uint64_t k0,
          uint64_t k1, uint64_t r0, uint64_t r1)
{
    uint32_t r = scan_selected(blocks, n, from, k0, k1, r0, r1);

    if (scan_validate) {
        uint32_t want = fdp__cut_scan_generic(blocks, n, from, k0, k1, r0,
                                              r1);
        if (r != want) {
            fdp__cpu_validate_failed("partition scan found rule %u of %u "
                                     "where generic found %u", r, n, want);
        }
    }
    return r;
}

static const struct fdp_rule *leaf_lookup_records(
    const struct cut_leaf *, const struct fdp_key *, uint64_t version);

/* The first rule of leaf 'l' that matches 'key' and is visible at
 * 'version', or NULL. */
static const struct fdp_rule *
leaf_lookup(const struct cut_leaf *l, const struct fdp_key *key,
            uint64_t version)
{
    if (l->snap) {
        return fdp__pipapo_lookup(l->snap, key, version);
    }
    const uint64_t *cp = leaf_cpairs(l);
    if (l->fixed) {
        /* Two common pairs, two differing words and two ranges, unused
         * ones padded: no loop, no branch until the scan. */
        const uint8_t *fw = l->fixed_words;
        const struct cut_range *rg = leaf_ranges(l);
        if (((key->w[fw[0]] ^ cp[1]) & cp[0])
            | ((key->w[fw[1]] ^ cp[3]) & cp[2])) {
            return NULL;
        }
        uint64_t k0 = key->w[fw[2]], k1 = key->w[fw[3]];
        uint64_t r0 = (key->w[rg[0].word] >> rg[0].shift) & rg[0].fmask;
        uint64_t r1 = (key->w[rg[1].word] >> rg[1].shift) & rg[1].fmask;
        const uint64_t *blocks = leaf_recs(l);
        for (uint32_t r = 0;
             (r = leaf_scan(blocks, l->n, r, k0, k1, r0, r1)) < l->n; r++) {
            if (leaf_visible(l, r, version)) {
                return leaf_rules(l)[r];
            }
        }
        return NULL;
    }
    for (uint64_t ws = l->cword_bits; ws; ws &= ws - 1, cp += 2) {
        if ((key->w[fdp__lowest_word(ws)] ^ cp[1]) & cp[0]) {
            return NULL;
        }
    }
    return leaf_lookup_records(l, key, version);
}

/* leaf_lookup() past the common words of a leaf of general shape.  Out of
 * line: its arrays (a key's words and a value per field, 752 bytes since
 * the connection-tracking fields) kept the fixed-shape path above from
 * being inlined into class_lookup_batch(), which cost the ranges case of
 * the datapath benchmark 13 instructions per packet. */
static __attribute__((noinline)) const struct fdp_rule *
leaf_lookup_records(const struct cut_leaf *l, const struct fdp_key *key,
                    uint64_t version)
{
    uint64_t kw[FDP_KEY_WORDS], kr[PIPAPO_MAX_FIELDS];
    unsigned int nw = 0;
    for (uint64_t ws = leaf_word_bits(l); ws; ws &= ws - 1) {
        kw[nw++] = key->w[fdp__lowest_word(ws)];
    }
    const struct cut_range *ranges = leaf_ranges(l);
    for (unsigned int g = 0; g < l->n_ranges; g++) {
        kr[g] = leaf_value(&ranges[g], key);
    }
    struct fdp_rule *const *rules = leaf_rules(l);
    const uint64_t *rec = leaf_recs(l);
    for (uint32_t r = 0; r < l->n; r++, rec += l->rec_words) {
        uint64_t miss = 0;
        for (unsigned int i = 0; i < l->n_words; i++) {
            miss |= (kw[i] ^ rec[2 * i + 1]) & rec[2 * i];
        }
        const uint64_t *lh = rec + 2 * l->n_words;
        for (unsigned int g = 0; g < l->n_ranges; g++) {
            miss |= (uint64_t) (kr[g] - lh[2 * g] > lh[2 * g + 1]);
        }
        if (!miss && (!l->slow || cmatch_matches(&rules[r]->match, key))
            && leaf_visible(l, r, version)) {
            return rules[r];
        }
    }
    return NULL;
}

static void
leaf_free(struct cut_leaf *l)
{
    if (l) {
        fdp__pipapo_snapshot_free(l->snap);
        free(l);
    }
}

DEFINE_RCU_FREE(leaf_free_cb, struct cut_leaf, leaf_free)

/* Builds the lookup form of 'rules' (n > 0, best first) over the fields
 * of 'field_set'.  NULL if out of memory. */
static struct cut_leaf *
leaf_build(struct fdp_rule **rules, uint32_t n,
           const struct fdp__field_map *field_set)
{
    pthread_once(&scan_once, scan_select);
    if (n > CUT_LIST_MAX) {
        enum fdp_field fields[PIPAPO_MAX_FIELDS];
        uint8_t bits[PIPAPO_MAX_FIELDS];
        unsigned int n_fields = 0;
        FDP__FIELD_MAP_FOR_EACH (f, field_set) {
            fields[n_fields++] = f;
        }
        struct cut_leaf *l = calloc(1, sizeof *l);
        if (!l || fdp__pipapo_choose_widths(fields, n_fields, rules, n,
                                            bits)) {
            free(l);
            return NULL;
        }
        l->snap = fdp__pipapo_build_widths(fields, n_fields, rules, n, bits);
        if (!l->snap) {
            free(l);
            return NULL;
        }
        l->n = n;
        return l;
    }

    /* The bits every rule matches alike, per word: checked once. */
    uint64_t common[FDP_KEY_WORDS], value0[FDP_KEY_WORDS];
    struct fdp__field_map range_fields = FDP__FIELD_MAP_EMPTY;
    for (unsigned int w = 0; w < FDP_KEY_WORDS; w++) {
        common[w] = fdp__cmatch_word(&rules[0]->match, FDP__MATCH_MASK, w);
        value0[w] = fdp__cmatch_word(&rules[0]->match, FDP__MATCH_VALUE, w);
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct fdp__cmatch *c = &rules[i]->match;
        for (uint64_t ws = c->words | rules[0]->match.words; ws;
             ws &= ws - 1) {
            unsigned int w = fdp__lowest_word(ws);
            uint64_t m = fdp__cmatch_word(c, FDP__MATCH_MASK, w);
            uint64_t v = fdp__cmatch_word(c, FDP__MATCH_VALUE, w);
            common[w] &= m & ~(v ^ value0[w]);
        }
        if (c->hi_words) {
            fdp__field_map_or(&range_fields, fdp__cmatch_range_fields(c));
        }
    }
    uint64_t words = 0, cwords = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct fdp__cmatch *c = &rules[i]->match;
        for (uint64_t ws = c->words; ws; ws &= ws - 1) {
            unsigned int w = fdp__lowest_word(ws);
            if (fdp__cmatch_word(c, FDP__MATCH_MASK, w) & ~common[w]) {
                words |= ws & -ws;
            }
        }
    }
    for (unsigned int w = 0; w < FDP_KEY_WORDS; w++) {
        cwords |= common[w] ? UINT64_C(1) << w : 0;
    }
    unsigned int n_words = fdp__popcount64(words);
    unsigned int n_ranges = fdp__field_map_count(&range_fields);
    /* The usual shape (a five-tuple: two key words, two port ranges)
     * takes fixed records, padded: see leaf_lookup(). */
    unsigned int n_cwords = fdp__popcount64(cwords);
    bool wide_range = false;
    FDP__FIELD_MAP_FOR_EACH (f, &range_fields) {
        wide_range |= fdp__field(f)->n_bits > 64;
    }
    bool fixed = n_words <= 2 && n_ranges <= 2 && n_cwords <= 2
                 && !wide_range;
    unsigned int rec_words = fixed ? CUT_REC_FIXED : 2 * (n_words + n_ranges);
    /* A fixed-shape leaf always lays out two common pairs and two ranges,
     * padded (mask 0; a range of the zero bits of word 0 that every
     * record passes), so that its lookup has no loop to set up. */
    if (fixed) {
        n_cwords = n_ranges = 2;
    }
    size_t size = sizeof(struct cut_leaf)
                  + (2 * n_cwords + 1) * sizeof(uint64_t)
                  + n_ranges * sizeof(struct cut_range)
                  + 32 + leaf_rec_words(n, fixed, rec_words)
                         * sizeof(uint64_t)
                  + n * (sizeof(struct fdp_rule *) + sizeof(uint64_t));
    struct cut_leaf *l = aligned_alloc(64, (size + 63) & ~(size_t) 63);
    if (!l) {
        return NULL;
    }
    memset(l, 0, size);
    l->n = n;
    l->n_cwords = (uint8_t) n_cwords;
    l->n_words = (uint8_t) n_words;
    l->n_ranges = (uint8_t) n_ranges;
    l->rec_words = (uint8_t) rec_words;
    l->fixed = fixed;
    /* At most 2 * 21 common words, 54 ranges of 2 words and 64 records
     * of 255 words: far below 65536. */
    static_assert(2 * FDP_KEY_WORDS + 2 * FDP_N_FIELDS + CUT_LIST_MAX * 255
                  < 65536, "rules_off fits 16 bits");
    l->rules_off = (uint16_t) ((leaf_recs(l) - l->data)
                               + leaf_rec_words(n, fixed, rec_words));
    uint64_t *cp = l->data;
    struct cut_range *ranges = (struct cut_range *) leaf_ranges(l);
    uint64_t *recs = (uint64_t *) leaf_recs(l);
    memcpy((void *) leaf_rules(l), rules, n * sizeof *rules);
    uint64_t *addv = (uint64_t *) leaf_addv(l);
    for (uint32_t r = 0; r < n; r++) {
        addv[r] = __atomic_load_n(&rules[r]->add_version, __ATOMIC_RELAXED);
        l->n_removing += __atomic_load_n(&rules[r]->remove_version,
                                         __ATOMIC_RELAXED)
                         != FDP_VERSION_NEVER;
    }

    if (fixed) {
        unsigned int k = 0;
        for (uint64_t ws = cwords; ws; ws &= ws - 1) {
            l->fixed_words[k++] = (uint8_t) fdp__lowest_word(ws);
        }
        k = 2;
        for (uint64_t ws = words; ws; ws &= ws - 1) {
            l->fixed_words[k++] = (uint8_t) fdp__lowest_word(ws);
        }
    } else {
        l->cword_bits = cwords;
        cp[2 * n_cwords] = words;
    }
    unsigned int ci = 0;
    for (uint64_t ws = cwords; ws; ws &= ws - 1, ci++) {
        unsigned int w = fdp__lowest_word(ws);
        cp[2 * ci] = common[w];
        cp[2 * ci + 1] = value0[w] & common[w];
    }
    /* Word x of rule r's record. */
#define REC(r, x) recs[fixed ? (size_t) (r) / 4 * CUT_BLOCK_WORDS        \
                                + (x) * 4 + (r) % 4                     \
                              : (size_t) (r) * rec_words + (x)]
    if (fixed) {
        /* Padded ranges pass every value. */
        for (uint32_t r = 0; r < n; r++) {
            REC(r, 5) = REC(r, 7) = UINT64_MAX;
        }
    }
    unsigned int i = 0;
    for (uint64_t ws = words; ws; ws &= ws - 1, i++) {
        unsigned int w = fdp__lowest_word(ws);
        for (uint32_t r = 0; r < n; r++) {
            const struct fdp__cmatch *c = &rules[r]->match;
            uint64_t m = fdp__cmatch_word(c, FDP__MATCH_MASK, w) & ~common[w];
            REC(r, 2 * i) = m;
            REC(r, 2 * i + 1) = fdp__cmatch_word(c, FDP__MATCH_VALUE, w) & m;
        }
    }
    unsigned int g = 0;
    FDP__FIELD_MAP_FOR_EACH (f, &range_fields) {
        const struct fdp__field *fd = fdp__field(f);
        unsigned int gi = g++;
        unsigned int x = (fixed ? 4 : 2 * n_words) + 2 * gi;
        if (fd->n_bits > 64) {
            /* Compared rule by rule; here every rule passes. */
            l->slow = true;
            ranges[gi] = (struct cut_range) { 0, 0, 0 };
            for (uint32_t r = 0; r < n; r++) {
                REC(r, x) = 0;
                REC(r, x + 1) = UINT64_MAX;
            }
            continue;
        }
        ranges[gi] = (struct cut_range) {
            .word = fd->word, .shift = fd->shift,
            .fmask = (uint64_t) fdp__ones(fd->n_bits),
        };
        for (uint32_t r = 0; r < n; r++) {
            const struct fdp__cmatch *c = &rules[r]->match;
            bool has = fdp__cmatch_has_range(c, f);
            fdp_u128 lo = fdp__cmatch_get(c, FDP__MATCH_VALUE, f);
            REC(r, x) = has ? (uint64_t) lo : 0;
            REC(r, x + 1)
                = has ? (uint64_t) (fdp__cmatch_get(c, FDP__MATCH_HI, f) - lo)
                      : UINT64_MAX;
        }
    }
#undef REC
    return l;
}

/* ---------------------------------------------------------------------- */
/* Child maps.                                                             */

static uint32_t
map_index(const struct cut_map *m, uint64_t v)
{
    return (uint32_t) ((v * m->multiplier) >> m->shift) & m->mask;
}

/* The child for value 'v', or NULL (lookups and the writer). */
static struct cut_node *
map_find(const struct cut_map *m, uint64_t v)
{
    if (!m) {
        return NULL;
    }
    for (uint32_t i = map_index(m, v);; i = (i + 1) & m->mask) {
        struct cut_node *c = __atomic_load_n(&m->slots[i].child,
                                             __ATOMIC_ACQUIRE);
        if (!c) {
            return NULL;
        }
        if (c != &tombstone && m->slots[i].value == v) {
            return c;
        }
    }
}

static struct cut_map *
map_alloc(uint32_t n_children, uint64_t multiplier)
{
    uint32_t slots = 8;
    unsigned int bits = 3;

    while (slots < 2 * n_children + 2) {
        slots *= 2;
        bits++;
    }
    struct cut_map *m = aligned_alloc(64, sizeof *m
                                          + slots * sizeof m->slots[0]);
    if (m) {
        memset(m, 0, sizeof *m + slots * sizeof m->slots[0]);
        m->mask = slots - 1;
        m->shift = (uint8_t) (64 - bits);
        m->multiplier = multiplier;
    }
    return m;
}

static size_t
map_size(const struct cut_map *m)
{
    return m ? sizeof *m + (m->mask + 1) * sizeof m->slots[0] : 0;
}

/* Stores 'child' for 'v' (absent) in the free slot of its probe
 * sequence: the value first, then the child with a release store, so
 * that a lookup that sees the child sees its value. */
static void
map_put(struct cut_map *m, uint64_t v, struct cut_node *child)
{
    uint32_t i = map_index(m, v);

    while (m->slots[i].child) {
        i = (i + 1) & m->mask;
    }
    m->slots[i].value = v;
    __atomic_store_n(&m->slots[i].child, child, __ATOMIC_RELEASE);
    m->n++;
}

DEFINE_RCU_FREE(map_free_cb, struct cut_map, free)

/* A copy of 'm' without tombstones, with room for 'extra' more. */
static struct cut_map *
map_copy(const struct cut_map *m, uint32_t extra, uint64_t multiplier)
{
    struct cut_map *c = map_alloc((m ? m->n : 0) + extra, multiplier);

    for (uint32_t i = 0; c && m && i <= m->mask; i++) {
        struct cut_node *child = m->slots[i].child;
        if (child && child != &tombstone) {
            map_put(c, m->slots[i].value, child);
        }
    }
    return c;
}

/* Replaces node 'n''s map by 'c' (published) and frees the old one after
 * a grace period. */
static void
map_replace(struct cut *cut, struct cut_node *n, struct cut_map *c)
{
    struct cut_map *old = node_map(n);

    cut->bytes += map_size(c) - map_size(old);
    set_map(n, c);
    if (old) {
        fdp__rcu_defer(&old->rcu, map_free_cb);
    }
}

/* Adds 'child' for 'v' to inner node 'n'.  Returns 0 or ENOMEM. */
static int
map_add(struct cut *cut, struct cut_node *n, uint64_t v,
        struct cut_node *child)
{
    struct cut_map *m = node_map(n);

    if (!m || 2 * (m->n + m->n_tombs + 1) > m->mask + 1) {
        struct cut_map *c = map_copy(m, 1, cut->multiplier);
        if (!c) {
            return ENOMEM;
        }
        map_replace(cut, n, c);
        m = c;
    }
    map_put(m, v, child);
    return 0;
}

/* Removes the child for 'v' from 'n''s map. */
static void
map_remove(struct cut *cut, struct cut_node *n, uint64_t v)
{
    struct cut_map *m = node_map(n);

    for (uint32_t i = map_index(m, v);; i = (i + 1) & m->mask) {
        struct cut_node *c = m->slots[i].child;
        if (c != &tombstone && m->slots[i].value == v) {
            __atomic_store_n(&m->slots[i].child, &tombstone,
                             __ATOMIC_RELEASE);
            m->n--;
            m->n_tombs++;
            break;
        }
    }
    if (m->n_tombs > (m->mask + 1) / 4) {
        struct cut_map *c = map_copy(m, 0, cut->multiplier);
        if (c) {
            map_replace(cut, n, c);
        }
        /* Else: the tombstones stay until a later removal succeeds. */
    }
}

/* ---------------------------------------------------------------------- */
/* Nodes.                                                                  */

static void
set_bounds(struct cut_node *n, int max_priority, uint64_t min_seq)
{
    __atomic_store_n(&n->max_priority, max_priority, __ATOMIC_RELAXED);
    __atomic_store_n(&n->min_seq, min_seq, __ATOMIC_RELAXED);
}

static void
raise_bounds(struct cut_node *n, const struct fdp_rule *rule)
{
    if (rule->priority > n->max_priority
        || (rule->priority == n->max_priority && rule->seq < n->min_seq)) {
        set_bounds(n, rule->priority, rule->seq);
    }
}

/* True if node 'n' may hold a rule that beats 'best' (or 'best' is
 * NULL). */
static bool
node_may_beat(const struct cut_node *n, const struct fdp_rule *best)
{
    int p = __atomic_load_n(&n->max_priority, __ATOMIC_RELAXED);

    return !best || p > best->priority
           || (p == best->priority
               && __atomic_load_n(&n->min_seq, __ATOMIC_RELAXED) < best->seq);
}

/* True if 'a''s bound beats 'b''s. */
static bool
node_bound_beats(const struct cut_node *a, const struct cut_node *b)
{
    int pa = __atomic_load_n(&a->max_priority, __ATOMIC_RELAXED);
    int pb = __atomic_load_n(&b->max_priority, __ATOMIC_RELAXED);

    return pa > pb
           || (pa == pb && __atomic_load_n(&a->min_seq, __ATOMIC_RELAXED)
                           < __atomic_load_n(&b->min_seq, __ATOMIC_RELAXED));
}

static struct cut_node *
node_alloc(struct cut *cut, struct cut_node *parent, bool is_spill,
           uint64_t value)
{
    struct cut_node *n = aligned_alloc(64, sizeof *n);

    if (!n) {
        return NULL;
    }
    memset(n, 0, sizeof *n);
    n->max_priority = -1;
    n->min_seq = UINT64_MAX;
    n->parent = parent;
    n->is_spill = is_spill;
    n->value = value;
    n->depth = parent ? (uint8_t) (parent->depth + 1) : 0;
    cut->bytes += sizeof *n;
    return n;
}

/* Frees 'n' and its subtree now (no reader can reach them). */
static void
node_free_tree(struct cut_node *n)
{
    if (!n) {
        return;
    }
    if (n->inner) {
        FOR_EACH_CHILD (c, n) {
            node_free_tree(c);
        }
        free(node_map(n));
        node_free_tree(n->spill);
    }
    leaf_free(n->leaf);
    free(n->rules);
    free(n);
}

DEFINE_RCU_FREE(node_free_tree_cb, struct cut_node, node_free_tree)

/* Bytes of 'n''s subtree (the writer's accounting). */
static uint64_t
node_bytes(const struct cut_node *n)
{
    uint64_t b = sizeof *n + n->alloc * sizeof *n->rules
                 + (n->leaf ? leaf_memory(n->leaf) : 0);

    if (n->inner) {
        b += map_size(node_map(n));
        FOR_EACH_CHILD (c, n) {
            b += node_bytes(c);
        }
        if (n->spill) {
            b += node_bytes(n->spill);
        }
    }
    return b;
}

static uint32_t
count_leaves(const struct cut_node *n)
{
    uint32_t k = 0;

    if (!n) {
        return 0;
    }
    if (!n->inner) {
        return 1;
    }
    FOR_EACH_CHILD (c, n) {
        k += count_leaves(c);
    }
    return k + count_leaves(n->spill);
}

/* Unlinks subtree 'n' from the tree (its rules moved elsewhere or gone)
 * and frees it after a grace period. */
static void
node_retire(struct cut *cut, struct cut_node *n)
{
    cut->bytes -= node_bytes(n);
    cut->n_leaves -= count_leaves(n);
    fdp__rcu_defer(&n->rcu, node_free_tree_cb);
}

/* Hangs 'n' where 'old' hung (or, with 'old' NULL, nowhere yet: the
 * caller links it), publishing the change. */
static void
node_replace(struct cut *cut, struct cut_node *old, struct cut_node *n)
{
    struct cut_node *parent = old->parent;

    n->parent = parent;
    n->is_spill = old->is_spill;
    n->value = old->value;
    if (!parent) {
        FDP_RCU_SET(cut->root, n);
    } else if (old->is_spill) {
        FDP_RCU_SET(parent->spill, n);
    } else {
        struct cut_map *m = node_map(parent);
        for (uint32_t i = map_index(m, old->value);; i = (i + 1) & m->mask) {
            if (m->slots[i].child == old) {
                __atomic_store_n(&m->slots[i].child, n, __ATOMIC_RELEASE);
                break;
            }
        }
    }
}

/* Publishes leaf 'n''s lookup form, built from its rules; frees the old
 * one after a grace period.  Returns 0 or ENOMEM (then the old form
 * stays, and the leaf stays dirty). */
static int
leaf_publish(struct cut *cut, struct cut_node *n)
{
    struct cut_leaf *l = NULL, *old = n->leaf;

    if (n->n) {
        l = leaf_build(n->rules, n->n, &cut->field_set);
        if (!l) {
            return ENOMEM;
        }
    }
    cut->bytes += (l ? leaf_memory(l) : 0) - (old ? leaf_memory(old) : 0);
    FDP_RCU_SET(n->leaf, l);
    if (old) {
        fdp__rcu_defer(&old->rcu, leaf_free_cb);
    }
    return 0;
}

static int
compare_rules(const void *a_, const void *b_)
{
    const struct fdp_rule *a = *(const struct fdp_rule *const *) a_;
    const struct fdp_rule *b = *(const struct fdp_rule *const *) b_;

    return fdp__rule_beats(a, b) ? -1 : fdp__rule_beats(b, a) ? 1
           : a < b ? -1 : a > b;
}

/* Builds the subtree of 'rules' (n, best first) below 'parent' (not
 * linked into it: the caller does).  NULL if out of memory. */
static struct cut_node *
build_tree(struct cut *cut, struct cut_node *parent, bool is_spill,
           uint64_t value, struct fdp_rule **rules, uint32_t n)
{
    struct cut_node *node = node_alloc(cut, parent, is_spill, value);
    enum fdp_field f;
    unsigned int k;

    if (!node) {
        return NULL;
    }
    node->n_rules = n;
    if (n) {
        set_bounds(node, rules[0]->priority, rules[0]->seq);
    }
    if (n <= fdp__cut_leaf_max || node->depth >= CUT_DEPTH_MAX
        || !choose_cut(rules, n, &cut->field_set, &f, &k)) {
        node->rules = malloc((n ? n : 1) * sizeof *node->rules);
        if (!node->rules) {
            goto nomem;
        }
        memcpy(node->rules, rules, n * sizeof *rules);
        node->n = node->alloc = n;
        cut->bytes += n * sizeof *rules;
        node->uncut_at = n > fdp__cut_leaf_max ? n : 0;
        cut->n_leaves++;
        if (leaf_publish(cut, node)) {
            goto nomem;
        }
        return node;
    }

    /* Group the fitting rules by value (each group stays best first) and
     * gather the spill. */
    set_cut(node, f, k);
    /* Scratch, all at once (there are at most n groups): 'ids' maps a
     * value to its group number + 1, disguised as a child pointer (never
     * dereferenced). */
    struct fdp_rule **sorted = malloc(n * sizeof *sorted);
    uint64_t *values = malloc(n * sizeof *values);
    uint32_t *group = malloc(n * sizeof *group);
    uint32_t *start = calloc(n + 2, sizeof *start);
    uint32_t *fill = calloc(n + 1, sizeof *fill);
    uint64_t *gvalue = malloc((n + 1) * sizeof *gvalue);
    struct cut_map *ids = map_alloc(n, cut->multiplier), *map;
    uint32_t n_groups = 0, n_spill = 0;
    int error = 0;
    if (!sorted || !values || !group || !start || !fill || !gvalue || !ids) {
        error = ENOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!rule_cut_value(rules[i], f, k, &values[i])) {
            group[i] = UINT32_MAX;
            n_spill++;
            continue;
        }
        struct cut_node *id = map_find(ids, values[i]);
        if (!id) {
            id = (struct cut_node *) (uintptr_t) ++n_groups;
            map_put(ids, values[i], id);
        }
        group[i] = (uint32_t) (uintptr_t) id - 1;
    }
    for (uint32_t i = 0; i < n; i++) {
        start[(group[i] == UINT32_MAX ? n_groups : group[i]) + 1]++;
    }
    for (uint32_t g = 0; g <= n_groups; g++) {
        start[g + 1] += start[g];
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = group[i] == UINT32_MAX ? n_groups : group[i];
        sorted[start[g] + fill[g]++] = rules[i];
        if (g < n_groups) {
            gvalue[g] = values[i];
        }
    }

    map = map_alloc(n_groups, cut->multiplier);
    set_map(node, map);
    if (!map) {
        error = ENOMEM;
    } else {
        cut->bytes += map_size(map);
    }
    for (uint32_t g = 0; !error && g < n_groups; g++) {
        struct cut_node *c = build_tree(cut, node, false, gvalue[g],
                                        &sorted[start[g]],
                                        start[g + 1] - start[g]);
        if (!c) {
            error = ENOMEM;
        } else {
            map_put(map, gvalue[g], c);
            node->n_kids++;
        }
    }
    if (!error && n_spill) {
        node->spill = build_tree(cut, node, true, 0, &sorted[start[n_groups]],
                                 n_spill);
        if (!node->spill) {
            error = ENOMEM;
        } else {
            node->n_kids++;
        }
    }
done:
    free(ids);
    free(values);
    free(group);
    free(fill);
    free(gvalue);
    free(start);
    free(sorted);
    if (!error) {
        return node;
    }

nomem:
    cut->bytes -= node_bytes(node);
    cut->n_leaves -= count_leaves(node);
    node_free_tree(node);
    return NULL;
}

/* Gathers the rules of subtree 'n' into 'out' (room for n->n_rules). */
static uint32_t
gather_rules(const struct cut_node *n, struct fdp_rule **out)
{
    uint32_t k = 0;

    if (!n->inner) {
        memcpy(out, n->rules, n->n * sizeof *out);
        return n->n;
    }
    FOR_EACH_CHILD (c, n) {
        k += gather_rules(c, out + k);
    }
    if (n->spill) {
        k += gather_rules(n->spill, out + k);
    }
    return k;
}

/* Rebuilds subtree 'n' from its rules (a leaf grown past its bound, or an
 * inner node shrunk to a leaf's size) and hangs the result in its place.
 * Returns 0 or ENOMEM (then 'n' stays). */
static int
rebuild_subtree(struct cut *cut, struct cut_node *n)
{
    struct fdp_rule **rules = malloc((n->n_rules ? n->n_rules : 1)
                                     * sizeof *rules);

    if (!rules) {
        return ENOMEM;
    }
    uint32_t k = gather_rules(n, rules);
    if (n->inner) {
        qsort(rules, k, sizeof *rules, compare_rules);
    }
    struct cut_node *t = build_tree(cut, n->parent, n->is_spill, n->value,
                                    rules, k);
    free(rules);
    if (!t) {
        return ENOMEM;
    }
    t->depth = n->depth;
    node_replace(cut, n, t);
    node_retire(cut, n);
    return 0;
}

/* Unhooks empty node 'n' from its parent, and the parent if it is left
 * without children; frees them after a grace period. */
static void
unhook_empty(struct cut *cut, struct cut_node *n)
{
    while (n) {
        struct cut_node *parent = n->parent;
        if (!parent) {
            FDP_RCU_SET(cut->root, NULL);
        } else if (n->is_spill) {
            FDP_RCU_SET(parent->spill, NULL);
        } else {
            map_remove(cut, parent, n->value);
        }
        node_retire(cut, n);
        if (!parent || --parent->n_kids) {
            return;
        }
        n = parent;
    }
}

/* ---------------------------------------------------------------------- */
/* Writer operations.                                                      */

static void
mark_dirty(struct cut *cut, struct cut_node *leaf)
{
    if (!leaf->dirty) {
        leaf->dirty = true;
        leaf->dirty_next = cut->dirty;
        cut->dirty = leaf;
    }
    cut->up.dirty = true;
}

/* The leaf 'rule' belongs in, creating the nodes on the way ('create'),
 * or NULL (out of memory, or not found without 'create'). */
static struct cut_node *
find_leaf(struct cut *cut, const struct fdp_rule *rule, bool create)
{
    struct cut_node *n = cut->root;

    if (!n) {
        if (!create) {
            return NULL;
        }
        n = node_alloc(cut, NULL, false, 0);
        if (!n) {
            return NULL;
        }
        cut->n_leaves++;
        FDP_RCU_SET(cut->root, n);
    }
    while (n->inner) {
        uint64_t v;
        struct cut_node *c;
        bool fits = rule_cut_value(rule, n->field, n->k, &v);

        c = fits ? map_find(node_map(n), v) : n->spill;
        if (!c && create) {
            c = node_alloc(cut, n, !fits, fits ? v : 0);
            if (!c) {
                return NULL;
            }
            if (!fits) {
                FDP_RCU_SET(n->spill, c);
            } else if (map_add(cut, n, v, c)) {
                cut->bytes -= sizeof *c;
                free(c);
                return NULL;
            }
            n->n_kids++;
            cut->n_leaves++;
        }
        if (!c) {
            return NULL;
        }
        n = c;
    }
    return n;
}

static int
class_insert(struct fdp__subtable *st, struct fdp_rule *rule)
{
    struct cut *cut = fdp__cut_cast(st);
    struct cut_node *leaf = find_leaf(cut, rule, true);
    uint32_t alloc;

    if (!leaf) {
        return ENOMEM;
    }
    alloc = leaf->alloc;
    if (fdp__rules_insert(&leaf->rules, &leaf->n, &leaf->alloc, rule)) {
        /* An empty leaf just made stays until publish unhooks it. */
        mark_dirty(cut, leaf);
        return ENOMEM;
    }
    cut->bytes += (leaf->alloc - alloc) * sizeof *leaf->rules;
    for (struct cut_node *n = leaf; n; n = n->parent) {
        raise_bounds(n, rule);
        n->n_rules++;
    }
    mark_dirty(cut, leaf);
    rule->owner = st;
    st->n_rules++;
    fdp__subtable_raise_bounds(st, rule);
    return 0;
}

static void
class_remove(struct fdp__subtable *st, struct fdp_rule *rule)
{
    struct cut *cut = fdp__cut_cast(st);
    struct cut_node *leaf = find_leaf(cut, rule, false);
    uint32_t i = leaf ? fdp__rules_find(leaf->rules, leaf->n, rule) : 0;

    if (!leaf || i == leaf->n) {
        return;                 /* Not linked here: nothing to do. */
    }
    memmove(&leaf->rules[i], &leaf->rules[i + 1],
            (leaf->n - i - 1) * sizeof *leaf->rules);
    leaf->n--;
    for (struct cut_node *n = leaf; n; n = n->parent) {
        n->n_rules--;
    }
    /* No lookup can see 'rule' any more (see "Priority bounds"). */
    if (leaf->n) {
        set_bounds(leaf, leaf->rules[0]->priority, leaf->rules[0]->seq);
    } else {
        set_bounds(leaf, -1, UINT64_MAX);
    }
    mark_dirty(cut, leaf);
    st->n_rules--;
}

static void
class_removing(struct fdp__subtable *st, struct fdp_rule *rule)
{
    struct cut_node *leaf = find_leaf(fdp__cut_cast(st), rule, false);
    struct cut_leaf *l = leaf ? leaf->leaf : NULL;

    /* The form lookups use now; a form built later counts the rule
     * itself (leaf_build()).  An abort leaves the count high, which only
     * sends lookups of this leaf to the rules until its next build. */
    if (l) {
        __atomic_fetch_add(&l->n_removing, 1, __ATOMIC_RELEASE);
    }
}

static int
class_publish(struct fdp__subtable *st)
{
    struct cut *cut = fdp__cut_cast(st);
    struct cut_node *empty = NULL, *failed = NULL;
    int error = 0;

    /* Non-empty leaves first: unhooking an empty one may free its
     * parent, which no other dirty leaf can be below (it has no other
     * children). */
    while (cut->dirty) {
        struct cut_node *n = cut->dirty;
        cut->dirty = n->dirty_next;
        n->dirty = false;
        if (!n->n) {
            n->dirty_next = empty;
            empty = n;
            continue;
        }
        int e;
        if (n->n > 2 * fdp__cut_leaf_max && n->depth < CUT_DEPTH_MAX
            && n->n >= 2 * n->uncut_at) {
            e = rebuild_subtree(cut, n);
        } else {
            e = leaf_publish(cut, n);
        }
        if (e) {
            error = e;
            n->dirty = true;
            n->dirty_next = failed;
            failed = n;
        }
    }
    while (empty) {
        struct cut_node *n = empty;
        empty = n->dirty_next;
        unhook_empty(cut, n);
    }
    cut->dirty = failed;
    st->dirty = failed != NULL;
    return error;
}

/* Raises (*max, *min_seq) to node 'c''s bound. */
static void
take_bound(const struct cut_node *c, int *max, uint64_t *min_seq)
{
    if (c->max_priority > *max
        || (c->max_priority == *max && c->min_seq < *min_seq)) {
        *max = c->max_priority;
        *min_seq = c->min_seq;
    }
}

/* Tightens inner bounds and folds small subtrees into leaves (from
 * fdp_table_run(), off the change path).  'n' may be replaced. */
static void
compact_node(struct cut *cut, struct cut_node *n)
{
    if (!n->inner) {
        return;
    }
    if (n->n_rules <= fdp__cut_leaf_max / 2) {
        if (!rebuild_subtree(cut, n)) {
            return;
        }
    }
    int max = -1;
    uint64_t min_seq = UINT64_MAX;
    FOR_EACH_CHILD (c, n) {
        compact_node(cut, c);
        c = slot_child(m_, i_);         /* It may have been rebuilt. */
        if (c) {
            take_bound(c, &max, &min_seq);
        }
    }
    if (n->spill) {
        compact_node(cut, n->spill);
        take_bound(n->spill, &max, &min_seq);
    }
    set_bounds(n, max, min_seq);
}

static void
class_compact(struct fdp__subtable *st)
{
    struct cut *cut = fdp__cut_cast(st);

    /* Only with every change published: a dirty leaf's bounds and lists
     * are ahead of its lookup form, which a rebuild would skip over. */
    if (cut->root && !cut->dirty) {
        compact_node(cut, cut->root);
    }
}

/* ---------------------------------------------------------------------- */
/* Lookups.                                                                */

/* The better of 'best' and the best rule of subtree 'n' that matches
 * 'key' at 'version'.  At an inner node with both a child for the key and
 * a spill, the walk goes on with the one whose bound is better and keeps
 * the other on a stack (at most one per inner node of the path, so
 * CUT_DEPTH_MAX deep), to visit once the first is done if it can still
 * win: iteration rather than recursion, as every lookup takes this path
 * a few times. */
static const struct fdp_rule *
node_lookup(const struct cut_node *n, const struct fdp_key *key,
            uint64_t version, const struct fdp_rule *best)
{
    const struct cut_node *stack[CUT_DEPTH_MAX + 1];
    unsigned int sp = 0;

    for (;;) {
        if (n && node_may_beat(n, best)) {
            if (n->inner) {
                const struct cut_node *c = map_find(node_map(n),
                                                    key_cut_value(n, key));
                const struct cut_node *s = FDP_RCU_GET(n->spill);
                if (c && s && sp < FDP_ARRAY_SIZE(stack)) {
                    bool spill_first = node_bound_beats(s, c);
                    stack[sp++] = spill_first ? c : s;
                    n = spill_first ? s : c;
                } else {
                    n = c ? c : s;
                }
                continue;
            }
            const struct cut_leaf *l = FDP_RCU_GET(n->leaf);
            const struct fdp_rule *r = l ? leaf_lookup(l, key, version)
                                         : NULL;
            if (r && fdp__rule_beats(r, best)) {
                struct cut_node *w = (struct cut_node *) n;
                __atomic_store_n(&w->hits, __atomic_load_n(
                                     &w->hits, __ATOMIC_RELAXED) + 1,
                                 __ATOMIC_RELAXED);
                best = r;
            }
        }
        if (!sp) {
            return best;
        }
        n = stack[--sp];
    }
}

static uint64_t
class_lookup_batch(const struct fdp__subtable *st,
                   const struct fdp_key *const keys[], uint64_t probe,
                   uint64_t version, const struct fdp_rule *found[])
{
    const struct cut *cut = fdp__cut_cast(st);
    const struct cut_node *root = FDP_RCU_GET(cut->root);
    uint64_t hits = 0;

    if (!root) {
        return 0;
    }
    for (uint64_t m = probe; m; m &= m - 1) {
        size_t i = (size_t) __builtin_ctzll(m);
        const struct fdp_rule *r = node_lookup(root, keys[i], version, NULL);
        if (r) {
            found[i] = r;
            hits |= UINT64_C(1) << i;
        }
    }
    return hits;
}

/* ---------------------------------------------------------------------- */
/* Walks.                                                                  */

struct walk {
    bool published;
    bool (*rule_cb)(struct fdp_rule *, void *aux);
    bool (*part_cb)(const struct fdp_partition_stats *, void *aux);
    void *aux;
    char path[160];
};

static bool
walk_node(const struct cut_node *n, struct walk *w, size_t len,
          unsigned int depth)
{
    if (!n) {
        return true;
    }
    if (!n->inner) {
        const struct cut_leaf *l = w->published ? FDP_RCU_GET(n->leaf)
                                                : NULL;
        if (w->part_cb) {
            struct fdp_partition_stats p = {
                .kind = l && l->snap ? "pipapo" : "list",
                .n_flows = l ? l->n : 0,
                .max_priority = __atomic_load_n(&n->max_priority,
                                                __ATOMIC_RELAXED),
                .hits = __atomic_load_n(&n->hits, __ATOMIC_RELAXED),
                .memory_bytes = sizeof *n + (l ? leaf_memory(l) : 0),
                .depth = depth,
            };
            memcpy(p.path, w->path, len + 1);
            return w->part_cb(&p, w->aux);
        }
        if (!w->published) {
            for (uint32_t i = 0; i < n->n; i++) {
                if (!w->rule_cb(n->rules[i], w->aux)) {
                    return false;
                }
            }
            return true;
        }
        for (uint32_t i = 0; l && i < l->n; i++) {
            struct fdp_rule *r = l->snap ? l->snap->elems[i] : leaf_rules(l)[i];
            if (!w->rule_cb(r, w->aux)) {
                return false;
            }
        }
        return true;
    }
    const struct cut_map *m = w->published ? node_map(n) : node_map(n);
    const char *name = fdp_field_name(n->field);
    for (uint32_t i = 0; m && i <= m->mask; i++) {
        const struct cut_node *c = __atomic_load_n(&m->slots[i].child,
                                                   __ATOMIC_ACQUIRE);
        if (!c || c == &tombstone) {
            continue;
        }
        int k = !w->part_cb ? 0
                : snprintf(w->path + len, sizeof w->path - len,
                           "%s%s/%u=0x%" PRIx64, len ? "," : "", name,
                           n->k, m->slots[i].value);
        size_t l2 = k < 0 ? len : len + (size_t) k;
        if (l2 >= sizeof w->path) {
            l2 = sizeof w->path - 1;
        }
        if (!walk_node(c, w, l2, depth + 1)) {
            return false;
        }
        w->path[len] = '\0';
    }
    const struct cut_node *s = w->published ? FDP_RCU_GET(n->spill)
                                            : n->spill;
    if (s) {
        int k = !w->part_cb ? 0
                : snprintf(w->path + len, sizeof w->path - len, "%s%s/%u=*",
                           len ? "," : "", name, n->k);
        size_t l2 = k < 0 ? len : len + (size_t) k;
        if (l2 >= sizeof w->path) {
            l2 = sizeof w->path - 1;
        }
        if (!walk_node(s, w, l2, depth + 1)) {
            return false;
        }
        w->path[len] = '\0';
    }
    return true;
}

static bool
class_for_each_rule(const struct fdp__subtable *st, bool published,
                    bool (*cb)(struct fdp_rule *, void *aux), void *aux)
{
    const struct cut *cut = fdp__cut_cast(st);
    struct walk w = { .published = published, .rule_cb = cb, .aux = aux };

    w.path[0] = '\0';
    return walk_node(published ? FDP_RCU_GET(cut->root) : cut->root, &w, 0,
                     0);
}

bool
fdp__cut_for_each_partition(const struct fdp__subtable *st,
                            bool (*cb)(const struct fdp_partition_stats *,
                                       void *aux),
                            void *aux)
{
    const struct cut *cut = fdp__cut_cast(st);
    struct walk w = { .published = true, .part_cb = cb, .aux = aux };

    w.path[0] = '\0';
    return walk_node(FDP_RCU_GET(cut->root), &w, 0, 0);
}

static bool
describe_cb(const struct fdp_partition_stats *p, void *out_)
{
    struct fdp_subtable_stats *out = out_;

    out->n_partitions++;
    if (p->depth > out->partition_depth) {
        out->partition_depth = p->depth;
    }
    if (p->n_flows > out->largest_partition) {
        out->largest_partition = (uint32_t) p->n_flows;
    }
    return true;
}

static void
class_describe(const struct fdp__subtable *st, struct fdp_subtable_stats *out)
{
    const struct cut *cut = fdp__cut_cast(st);

    out->kind = FDP_SUBTABLE_PARTITIONED;
    out->n_fields = 0;
    FDP__FIELD_MAP_FOR_EACH (f, &cut->field_set) {
        out->fields[out->n_fields] = f;
        out->group_bits[out->n_fields++] = 0;   /* Leaves are lists. */
    }
    out->n_const_fields = 0;
    out->n_partitions = 0;
    out->partition_depth = 0;
    out->largest_partition = 0;
    fdp__cut_for_each_partition(st, describe_cb, out);
}

static uint64_t
class_memory(const struct fdp__subtable *st)
{
    const struct cut *cut = fdp__cut_cast(st);

    return sizeof *cut + cut->bytes;
}

static void
free_cut(struct cut *cut)
{
    node_free_tree(cut->root);
    free(cut);
}

DEFINE_RCU_FREE(free_cut_cb, struct cut, free_cut)

static void
class_destroy(struct fdp__subtable *st, bool deferred)
{
    struct cut *cut = fdp__cut_cast(st);

    if (deferred) {
        fdp__rcu_defer(&cut->rcu, free_cut_cb);
    } else {
        free_cut(cut);
    }
}

static void
class_add_stats(const struct fdp__subtable *st, uint64_t n_flows,
                struct fdp_table_stats *stats)
{
    (void) st;
    stats->n_pipapo_tables++;
    stats->n_pipapo_rules += n_flows;
}

const struct fdp__subtable_class fdp__cut_class = {
    .lookup_batch = class_lookup_batch,
    .for_each_rule = class_for_each_rule,
    .describe = class_describe,
    .for_each_partition = fdp__cut_for_each_partition,
    .add_stats = class_add_stats,
    .insert = class_insert,
    .remove = class_remove,
    .removing = class_removing,
    .publish = class_publish,
    .compact = class_compact,
    .memory = class_memory,
    .destroy = class_destroy,
};

struct cut *
fdp__cut_create(const struct fdp__field_map *field_set,
                enum fdp_subtable_reason reason)
{
    struct cut *cut = aligned_alloc(64, sizeof *cut);
    uint32_t a, b;

    if (!cut) {
        return NULL;
    }
    memset(cut, 0, sizeof *cut);
    if (fdp_hash_random_basis(&a) || fdp_hash_random_basis(&b)) {
        a = 0x7f4a7c15;
        b = 0x9e3779b9;
    }
    cut->multiplier = ((uint64_t) a << 32 | b) | 1;
    cut->field_set = *field_set;
    fdp__subtable_init(&cut->up, &fdp__cut_class, reason);
    return cut;
}
