/*
 * Tie detection for one priority level.
 *
 * 1. What it is for
 * -----------------
 * The table walks its sub-tables in order of the best priority each may
 * hold.  Among flows of equal priority that overlap, the one added first
 * wins, and each sub-table breaks such ties among its own flows.  So a
 * lookup that has matched at priority p must keep walking only if ANOTHER
 * sub-table may hold a flow of priority p that overlaps the match.
 * fdp__ties_level_tied() answers, for the flows of one level, whether any
 * two of them in different sub-tables overlap (some packet matches both,
 * as fdp_match_intersects() says).  lib/table.c asks it from
 * fdp_table_run(), off the insert path; a level it calls untied lets a
 * lookup stop at its first match there.
 *
 * The answer may err only towards "tied": a wrong "tied" costs a lookup a
 * few sub-tables, a wrong "untied" returns the wrong flow.  So past the
 * caller's work bound, or out of memory, the answer is "tied".
 *
 * 2. Design
 * ---------
 * Brute force tests every pair of rules: n^2 / 2 intersections, 50 million
 * for the 10,000 megaflows of one level.  Instead:
 *
 *  a. Classes.  The rules are sorted by (sub-table id, has ranges, mask),
 *     so that each run of equal keys is a "class": rules of one sub-table
 *     with one mask.  Rules of one class never tie (same sub-table), nor do
 *     two classes of the same sub-table.  A class that holds ranges keeps
 *     them out of its mask (the match invariants in lib/match-internal.h), so its
 *     mask says which bits all its rules match exactly.
 *
 *  b. Summaries.  For each class we compute 'agree', the mask bits on
 *     which all its rules have the same value, and 'common', that value.
 *     For two classes A and B of different sub-tables:
 *       - if common_A and common_B differ on agree_A & agree_B, no rule of A
 *         meets a rule of B: the pair is settled in one pass over the
 *         key's words.  This is what settles megaflow-like levels, where
 *         each mask has its own exact prefix of some field;
 *       - if they do not differ and agree_A & agree_B covers all of
 *         C = mask_A & mask_B, every masked rule of A meets every masked
 *         rule of B: tied;
 *       - otherwise the pair needs a closer look (c or d).
 *
 *  c. Hash join (two masked classes).  Masked rules a and b meet iff
 *     (a.value ^ b.value) & C == 0.  On the bits both classes agree on
 *     they already do (b), so only U = C & ~(agree_A & agree_B) matters.
 *     The smaller class goes into an open-addressing hash set keyed by
 *     value & U (duplicates stored once), the larger probes it with its own
 *     value & U; the first hit is a tie.  O(|A| + |B|) instead of
 *     O(|A| * |B|).
 *
 *  d. Ranges.  A pair of classes at least one of which holds ranges, and
 *     that the summaries did not settle, is tested rule by rule with
 *     fdp_match_intersects().  Range levels are small in practice (pipapo
 *     flows written by hand); a finer join (hash on the masked bits, then
 *     intersect the ranges of the candidates) is left for when one is not.
 *
 * The first tie found ends the search.
 *
 * 3. Work
 * -------
 * Every elementary step counts one unit of work: n * ceil(log2 n) for the
 * sort, one per rule summarised, one per pair of classes compared, one per
 * hash set slot touched (insert or probe) and one per
 * fdp_match_intersects() call.  A step past 'work_max' gives up ("tied").
 * The hash is a fixed multiply-xorshift mix, so a set of keys chosen to
 * collide can lengthen probe chains; the count of slots touched turns such
 * an attack into a conservative answer, never into unbounded time.
 *
 * Cost: O(n log n) + O(K^2 * FDP_KEY_WORDS) for K classes, plus
 * O(|A| + |B|) per masked pair and O(|A| * |B|) per range pair that the
 * summaries leave open.  For example 1,000 megaflow-like rules over 100
 * masks, each mask with its own nw_src /8, take 15,950 units of work and
 * 10,000 take 155,000; when the summaries settle nothing (every rule's
 * nw_src exact and distinct, so no class agrees on it), 10,000 rules over
 * 100 masks take 684,000 units (the hash joins, 99 classes times 100
 * rules each per class).  Timings: docs/PERFORMANCE.md, "Figures behind
 * design choices".
 *
 * 4. Worked example
 * -----------------
 * Six flows of one priority, on nw_src (written as dotted quads; their
 * sub-tables 1, 2 and 3 use masks /16, /8 with tp_dst, and /24):
 *
 *   class A, sub-table 1, mask 255.255.0.0:
 *     r1 nw_src=10.1.0.0/16           r2 nw_src=10.2.0.0/16
 *   class B, sub-table 2, mask 255.0.0.0 and tp_dst:
 *     r3 nw_src=11.0.0.0/8,tp_dst=80  r4 nw_src=11.0.0.0/8,tp_dst=443
 *   class C, sub-table 3, mask 255.255.255.0:
 *     r5 nw_src=10.3.7.0/24           r6 nw_src=10.2.9.0/24
 *
 * Summaries (nw_src bits; tp_dst differs within B, so B does not agree
 * on it):
 *   A: r1 ^ r2 = 0.3.0.0, agree = 255.252.0.0, common = 10.0.0.0
 *   B:                    agree = 255.0.0.0,   common = 11.0.0.0
 *   C: r5 ^ r6 = 0.1.14.0, agree = 255.254.241.0, common = 10.2.1.0
 *
 * A, B: agree_A & agree_B = 255.0.0.0, on which 10 != 11: disjoint.
 * A, C: agree_A & agree_C = 255.252.0.0, on which both commons read
 *   10.0.0.0: open.  C = 255.255.0.0, U = C & ~255.252.0.0 = 0.3.0.0.
 *   A (2 rules; the first on a tie of sizes) builds the set:
 *   r1 -> 0.1.0.0, r2 -> 0.2.0.0.  C probes: r5 -> 0.3.0.0, a miss;
 *   r6 -> 0.2.0.0 hits r2.  Indeed 10.2.9.1 matches both r2 and r6: the
 *   level is tied, and the pair B, C is never looked at.  (It would be
 *   disjoint: 11 != 10 on 255.0.0.0.)
 *
 * 5. Thread-safety and memory
 * ---------------------------
 * No global state: every call allocates its classes and its hash set and
 * frees them before it returns.  It reorders 'rules' and only reads the
 * matches.
 */
#include <config.h>

#include "lib/ties.h"

#include <stdlib.h>
#include <string.h>

#include "lib/match-internal.h"
#include "lib/util.h"

/* A run of the sorted rules: one sub-table, one mask, all masked or all
 * with ranges (section 2a). */
struct tie_class {
    size_t begin;               /* First rule, an index into 'rules'. */
    size_t n;                   /* Rules in the class. */
    uintptr_t subtable;
    bool ranged;                /* Rules have ranges (range_fields != 0). */
    const struct fdp_key *mask; /* Common to every rule of the class. */
    struct fdp_key agree;       /* Mask bits on which all rules agree... */
    struct fdp_key common;      /* ...and their value there, zero
                                 * elsewhere (section 2b). */
};

/* A slot of the hash set of section 2c: 'index' + 1 of the rule whose
 * value & U it holds (0: empty), and that key's hash. */
struct tie_slot {
    uint32_t hash;
    uint32_t index;
};

/* The bits U of section 2c, as the words where they are not zero. */
struct tie_join_key {
    unsigned int n;
    uint8_t word[FDP_KEY_WORDS];
    uint64_t bits[FDP_KEY_WORDS];
};

struct tie_state {
    struct fdp__tie_rule *rules;
    size_t n_rules;
    struct tie_class *classes;
    size_t n_classes;
    struct tie_slot *slots;     /* Sized for the largest class, or NULL. */
    size_t n_slots_max;
    uint64_t work;
    uint64_t work_max;
};

/* What the summaries of two classes say about them (section 2b). */
enum tie_verdict {
    TIE_DISJOINT,               /* No rule of one meets a rule of the
                                 * other. */
    TIE_MASKS_MEET,             /* Every rule of one agrees with every rule
                                 * of the other on their common mask. */
    TIE_OPEN,                   /* Look closer. */
};

static bool tie_charge(struct tie_state *, uint64_t steps);
static int tie_compare_rules(const void *, const void *);
static bool tie_make_classes(struct tie_state *);
static bool tie_class_pair(struct tie_state *, const struct tie_class *,
                           const struct tie_class *);
static enum tie_verdict tie_compare_summaries(const struct tie_class *,
                                              const struct tie_class *,
                                              struct tie_join_key *);
static bool tie_hash_join(struct tie_state *, const struct tie_class *build,
                          const struct tie_class *probe,
                          const struct tie_join_key *);
static bool tie_pairwise(struct tie_state *, const struct tie_class *,
                         const struct tie_class *);

bool
fdp__ties_level_tied(struct fdp__tie_rule *rules, size_t n,
                     uint64_t work_max)
{
    struct tie_state s = {
        .rules = rules,
        .n_rules = n,
        .work_max = work_max,
    };
    bool tied = true;

    if (n < 2) {
        return false;
    }
    /* The hash set stores 32-bit rule indices. */
    if (n >= UINT32_MAX) {
        return true;
    }

    /* Phase 1: sort into classes (section 2a). */
    uint64_t log2_n = 64 - (uint64_t) __builtin_clzll((uint64_t) n - 1);
    if (tie_charge(&s, (uint64_t) n * log2_n)) {
        return true;
    }
    qsort(rules, n, sizeof *rules, tie_compare_rules);
    if (tie_make_classes(&s)) {
        goto out;
    }

    /* Phase 2: every pair of classes of different sub-tables.  Classes of
     * one sub-table are adjacent, so the inner loop starts past them. */
    size_t next_subtable = 0;
    for (size_t i = 0; i < s.n_classes; i++) {
        const struct tie_class *a = &s.classes[i];

        if (next_subtable <= i) {
            for (next_subtable = i + 1;
                 next_subtable < s.n_classes
                 && s.classes[next_subtable].subtable == a->subtable;
                 next_subtable++) {
                continue;
            }
        }
        for (size_t j = next_subtable; j < s.n_classes; j++) {
            if (tie_class_pair(&s, a, &s.classes[j])) {
                goto out;
            }
        }
    }
    tied = false;

out:
    free(s.slots);
    free(s.classes);
    return tied;
}

/* Adds 'steps' to the work done; true if that passes the bound. */
static bool
tie_charge(struct tie_state *s, uint64_t steps)
{
    s->work = steps > UINT64_MAX - s->work ? UINT64_MAX : s->work + steps;
    return s->work > s->work_max;
}

/* Orders rules by sub-table, then masked before ranged, then mask. */
static int
tie_compare_rules(const void *a_, const void *b_)
{
    const struct fdp__tie_rule *a = a_;
    const struct fdp__tie_rule *b = b_;

    if (a->subtable != b->subtable) {
        return a->subtable < b->subtable ? -1 : 1;
    }
    bool a_ranged = fdp__match_has_ranges(a->match);
    bool b_ranged = fdp__match_has_ranges(b->match);
    if (a_ranged != b_ranged) {
        return a_ranged ? 1 : -1;
    }
    return memcmp(&a->match->mask, &b->match->mask, sizeof a->match->mask);
}

static bool
tie_same_class(const struct fdp__tie_rule *a, const struct fdp__tie_rule *b)
{
    return tie_compare_rules(a, b) == 0;
}

/* Cuts the sorted rules into classes and summarises each (sections 2a and
 * 2b).  Returns true to give up: out of memory or of work. */
static bool
tie_make_classes(struct tie_state *s)
{
    const struct fdp__tie_rule *rules = s->rules;
    size_t n_classes = 1;

    for (size_t i = 1; i < s->n_rules; i++) {
        n_classes += !tie_same_class(&rules[i - 1], &rules[i]);
    }
    if (tie_charge(s, s->n_rules)) {
        return true;
    }
    s->classes = malloc(n_classes * sizeof *s->classes);
    if (!s->classes) {
        return true;
    }

    size_t largest_masked = 0;
    size_t begin = 0;
    for (size_t c = 0; c < n_classes; c++) {
        struct tie_class *class = &s->classes[c];
        const struct fdp_match *first = rules[begin].match;
        size_t end = begin + 1;

        while (end < s->n_rules
               && tie_same_class(&rules[begin], &rules[end])) {
            end++;
        }
        class->begin = begin;
        class->n = end - begin;
        class->subtable = rules[begin].subtable;
        class->ranged = fdp__match_has_ranges(first);
        class->mask = &first->mask;
        /* Bits of 'value' outside the mask (a range's low bound) never
         * reach 'agree', which starts as the mask and only loses bits. */
        class->agree = first->mask;
        for (size_t r = begin + 1; r < end; r++) {
            const struct fdp_key *v = &rules[r].match->value;
            for (int w = 0; w < FDP_KEY_WORDS; w++) {
                class->agree.w[w] &= ~(v->w[w] ^ first->value.w[w]);
            }
        }
        for (int w = 0; w < FDP_KEY_WORDS; w++) {
            class->common.w[w] = first->value.w[w] & class->agree.w[w];
        }
        if (!class->ranged && class->n > largest_masked) {
            largest_masked = class->n;
        }
        begin = end;
    }
    s->n_classes = n_classes;

    /* The hash set holds at most the smaller class of a pair, at a load of
     * at most 1/2, so that a miss ends after a couple of slots. */
    size_t n_slots = 2;
    while (n_slots < 2 * largest_masked) {
        n_slots *= 2;
    }
    s->n_slots_max = n_slots;
    return false;
}

/* Decides classes 'a' and 'b' of different sub-tables.  True if they tie
 * or the work ran out. */
static bool
tie_class_pair(struct tie_state *s, const struct tie_class *a,
               const struct tie_class *b)
{
    struct tie_join_key key;

    if (tie_charge(s, 1)) {
        return true;
    }
    enum tie_verdict verdict = tie_compare_summaries(a, b, &key);
    if (verdict == TIE_DISJOINT) {
        return false;
    }
    if (!a->ranged && !b->ranged) {
        if (verdict == TIE_MASKS_MEET) {
            return true;
        }
        return a->n <= b->n ? tie_hash_join(s, a, b, &key)
                            : tie_hash_join(s, b, a, &key);
    }
    return tie_pairwise(s, a, b);
}

/* Section 2b; on TIE_OPEN also stores the join bits U in '*key'. */
static enum tie_verdict
tie_compare_summaries(const struct tie_class *a, const struct tie_class *b,
                      struct tie_join_key *key)
{
    key->n = 0;
    for (int w = 0; w < FDP_KEY_WORDS; w++) {
        uint64_t both = a->agree.w[w] & b->agree.w[w];
        if ((a->common.w[w] ^ b->common.w[w]) & both) {
            return TIE_DISJOINT;
        }
        uint64_t open = a->mask->w[w] & b->mask->w[w] & ~both;
        if (open) {
            key->word[key->n] = (uint8_t) w;
            key->bits[key->n] = open;
            key->n++;
        }
    }
    return key->n ? TIE_OPEN : TIE_MASKS_MEET;
}

/* The hash of 'v' & U.  Each word is folded in with a multiplication by
 * 2^64 / phi (odd, Knuth's multiplicative constant) and an xorshift that
 * brings the well-mixed high half down; fdp__fmix32() finishes it so that
 * the low bits index slots. */
static uint32_t
tie_hash(const struct fdp_key *v, const struct tie_join_key *key)
{
    uint64_t h = 0;

    for (unsigned int i = 0; i < key->n; i++) {
        h = (h ^ (v->w[key->word[i]] & key->bits[i]))
            * UINT64_C(0x9e3779b97f4a7c15);
        h ^= h >> 32;
    }
    return fdp__fmix32((uint32_t) h);
}

static bool
tie_equal(const struct fdp_key *a, const struct fdp_key *b,
          const struct tie_join_key *key)
{
    for (unsigned int i = 0; i < key->n; i++) {
        if ((a->w[key->word[i]] ^ b->w[key->word[i]]) & key->bits[i]) {
            return false;
        }
    }
    return true;
}

/* The slot that holds the key of 'v' under 'key', or the empty slot where
 * it would go.  NULL if the work ran out first. */
static struct tie_slot *
tie_find_slot(struct tie_state *s, size_t n_slots, const struct fdp_key *v,
              uint32_t hash, const struct tie_join_key *key)
{
    for (size_t i = hash & (n_slots - 1); ; i = (i + 1) & (n_slots - 1)) {
        struct tie_slot *slot = &s->slots[i];

        if (tie_charge(s, 1)) {
            return NULL;
        }
        if (!slot->index
            || (slot->hash == hash
                && tie_equal(&s->rules[slot->index - 1].match->value, v,
                             key))) {
            return slot;
        }
    }
}

/* Section 2c: true if a rule of 'build' and one of 'probe' (both masked)
 * agree on 'key', or the work or memory ran out. */
static bool
tie_hash_join(struct tie_state *s, const struct tie_class *build,
              const struct tie_class *probe, const struct tie_join_key *key)
{
    size_t n_slots = 2;

    while (n_slots < 2 * build->n) {
        n_slots *= 2;
    }
    /* Every rule of both classes costs at least one slot: give up now
     * rather than after the work. */
    if (tie_charge(s, n_slots / 2)
        || s->work_max - s->work < build->n + probe->n) {
        return true;
    }
    if (!s->slots) {
        s->slots = malloc(s->n_slots_max * sizeof *s->slots);
        if (!s->slots) {
            return true;
        }
    }
    memset(s->slots, 0, n_slots * sizeof *s->slots);

    for (size_t r = build->begin; r < build->begin + build->n; r++) {
        const struct fdp_key *v = &s->rules[r].match->value;
        uint32_t hash = tie_hash(v, key);
        struct tie_slot *slot = tie_find_slot(s, n_slots, v, hash, key);
        if (!slot) {
            return true;
        }
        if (!slot->index) {
            slot->hash = hash;
            slot->index = (uint32_t) r + 1;
        }
    }
    for (size_t r = probe->begin; r < probe->begin + probe->n; r++) {
        const struct fdp_key *v = &s->rules[r].match->value;
        struct tie_slot *slot = tie_find_slot(s, n_slots, v,
                                              tie_hash(v, key), key);
        if (!slot || slot->index) {
            return true;
        }
    }
    return false;
}

/* Section 2d: true if a rule of 'a' meets a rule of 'b', or the work ran
 * out. */
static bool
tie_pairwise(struct tie_state *s, const struct tie_class *a,
             const struct tie_class *b)
{
    /* Giving up after the last pair or now is the same answer. */
    if (s->work_max - s->work < (uint64_t) a->n * b->n) {
        return true;
    }
    for (size_t i = a->begin; i < a->begin + a->n; i++) {
        for (size_t j = b->begin; j < b->begin + b->n; j++) {
            s->work++;
            if (fdp_match_intersects(s->rules[i].match, s->rules[j].match)) {
                return true;
            }
        }
    }
    return false;
}
