/*
 * Pipapo sub-tables: range and mask matching by bitmap intersection.
 *
 * What it is for
 * ==============
 * Tuple-space search needs one hash table per mask, and a range that is
 * not a prefix needs many masks (tp_dst=1000-2000 is 8 prefixes).  Pipapo
 * (PIle PAcket POlicies, the nftables set back end by Stefano Brivio,
 * net/netfilter/nft_set_pipapo.c) matches any mix of ranges and masks over
 * a fixed set of fields in time that does not depend on the number of
 * masks: a few table loads and bitmap ANDs per field.
 *
 * Design
 * ======
 * A sub-table covers a set of fields (say nw_dst and tp_dst).  Its rules
 * are numbered in priority order (priority descending, then insertion
 * order).  Each field is cut into groups of 4 or 8 bits; for each group
 * and each value the group can take (a bucket), the lookup table holds a
 * bitmap of the field's rules that accept that value:
 *
 *   lt[field][group][bucket] = { rules whose constraint on the field
 *                                allows that bucket in that group }
 *
 * A rule's constraint on a field is a value/mask, or a range, which is
 * first expanded into prefixes (value/mask pairs).  A value/mask sets the
 * rule's bit in every bucket that agrees with the value on the group's
 * masked bits: all 256 buckets of a wildcarded 8-bit group, one bucket of
 * an exact one.  Because a range may expand to several prefixes, each
 * field numbers its own "field rules" (one per prefix); the mapping table
 * mt[field][i] gives the span of field rules of the same rule in the next
 * field, and for the last field the rule itself.
 *
 * Lookup: for the first field, AND the bitmaps of the buckets the packet's
 * groups select; map each surviving field rule to its rule's span in the
 * next field; AND that field's buckets in; and so on.  Where neither of
 * two adjacent fields expanded a range, field rule i is rule i in both and
 * the mapping is skipped: a sub-table of masks alone (the overflow
 * sub-table of lib/table.c) is one long AND.  The set bits left
 * in the last field, in order, are the matching rules in priority order:
 * the first one visible at the lookup's version wins.
 *
 * Group width.  Each field has its own group width: 8 bits while that
 * field's 8-bit lookup table stays under PIPAPO_LT_WIDE_MAX bytes (8-bit
 * groups halve the ANDs; docs/PERFORMANCE.md has the kernel selftest
 * workloads with each width), 4 bits past it (16 buckets instead of 256: 16 times
 * smaller).  The decision is per field because table sizes differ by
 * field: in port,proto with 30001 entries the port field expands ranges
 * and outgrows the threshold while the one-group proto field does not, and
 * keeps its single 8-bit row.  A field goes back to 8 bits only below half
 * the threshold, so that a set hovering at it does not flip on every
 * change.
 *
 * Snapshots.  The bitmaps are rebuilt from the rule list into a new,
 * immutable snapshot that is published with one pointer store and freed
 * after a grace period, so lookups never see a half-built table and a
 * transaction of many flows costs one rebuild.  A build fills each
 * group one 64-bit word of its rows at a time (fill_group()): the 64
 * field rules of the word set their bits in a per-bucket accumulator,
 * a wildcarded group in one word for all buckets, and each row word is
 * stored once, so a build writes every row word once and nothing else.
 *
 * Incremental updates.  Rules are numbered in priority order, so one
 * rule added in the middle renumbers every rule after it in every row:
 * a single change to a sub-table of 10,000 ClassBench rules rebuilt
 * 11 MB of tables.  The kernel's pipapo numbers rules in
 * insertion order and has no priorities; Open vSwitch's classifier has
 * no bitmaps.  Instead, a snapshot is a built part plus a delta (after
 * the log-structured merge: Bentley and Saxe's static-to-dynamic
 * transformation, two levels):
 *   - An added rule goes to the delta, a small snapshot of its own,
 *     rebuilt on each publish from the rules added since the last whole
 *     build (4-bit groups: 512 bytes per group to clear instead of 8 KiB).
 *   - A removed rule of the built part becomes a tombstone: the publish
 *     copies elems (8 bytes per rule) with fdp__pipapo_tombstone, a rule
 *     never visible, in its slot, so lookups pass over it as over any
 *     invisible rule.  A removed delta rule leaves the delta.
 *   - The new snapshot shares the built part's tables with the one it
 *     replaces, which hands them over (owns_tables) before its grace
 *     period; no published byte is ever written.
 *   - A lookup takes the better of the built part's and the delta's
 *     answers (priority, then insertion order).
 * The built part is rebuilt whole when the changes since its build pass
 * fdp__pipapo_incr_bound(n), about 2 sqrt(n) (the delta's rebuild grows
 * with its size and the whole build with n: 2 sqrt(n) roughly balances
 * the two, 200 changes at 10,000 rules), when it has fewer than
 * PIPAPO_INCR_MIN rules (a whole build costs no more than a delta), and
 * in fdp_table_run() (the class's compact()), off the change path, so
 * that lookups pay for a delta only between a change and the next run.
 * A single change then costs mostly the table's commit (grace period for
 * removals, view publish), not the delta build (docs/PERFORMANCE.md,
 * "Figures behind design choices").
 *
 * Constant fields.  Flows written the way users write them carry
 * prerequisites: every "udp,nw_dst=A-B,tp_dst=C-D" flow matches
 * dl_type=0x0800 and nw_proto=17, and the flows of one switch port share
 * an in_port.  Such a field selects nothing, yet intersecting it costs a
 * full-width AND per group.  When a snapshot is published, each field
 * whose value/mask is the same in every rule leaves the intersection and
 * becomes part of one masked compare of the key ('const_words': dl_type
 * and nw_proto share key word 1, so both prerequisites are one compare).
 * A field every rule wildcards (the overflow sub-table's union of fields)
 * disappears altogether.
 *
 * Uniform groups.  The same holds for a group of a field: the rules of an
 * IPv6 set often share a /96 and those of a MAC set a vendor prefix, and
 * ClassBench's /16 prefixes all wildcard the low two bytes.  A group in
 * which every field rule has the same value/mask is checked once with the
 * constant fields; a field intersects only the run of groups from its
 * first to its last non-uniform one (find_group_run()), read from the key
 * as one word where the run fits in one (set_field_position()).
 * net6,port from the kernel selftest (1001 entries in one /112) thus
 * intersects 2 of the address's 16 groups.
 *
 * Field order.  The first field is ANDed in full, the later ones only
 * where survivors remain, so the most selective field should come first.
 * When a snapshot is published the non-constant fields are ordered by an
 * estimate of the rules a packet inside a rule matches on that field
 * alone (field_survivors(): PIPAPO_ORDER_SAMPLES sampled rules against
 * all), fewest first; the order is kept while the field set is the same
 * and the rule count stays within a factor of two, so single changes do
 * not pay for the estimate.
 *
 * Chunk summaries.  A lookup carries, beside its result bitmap, a summary
 * with one bit per 256-bit chunk that may still hold survivors, and each
 * step ANDs only those chunks (lib/pipapo-step.h).  Fields of at least
 * PIPAPO_SUM_MIN_CHUNKS chunks also keep a summary of each row, so that
 * the first field ANDs only the chunks where every selected row has bits:
 * in port,proto (30001 entries, 118 chunks) the port's high byte selects
 * 256 consecutive rules, one or two chunks, and the lookup reads those
 * instead of all 118.
 *
 * Candidate lists.  After the first field, the surviving field rules are
 * usually few (the first field is selective).  If they map to at most
 * PIPAPO_MAX_CANDIDATES field rules of the next field, the lookup stops
 * carrying bitmaps: for each candidate, in order, it tests the
 * candidate's bit in each group's bucket row (one load per group) and
 * keeps it only if every group has it; survivors map to the next field's
 * candidates, and in the last field the first visible survivor wins.  If
 * a later field's ranges widen the list past the bound, the lookup turns
 * that field's candidates into a bitmap and goes on from there on the
 * bitmap path, which has no bound.  Where the numbering
 * carries over between fields the bitmap path is used throughout: with
 * chunk summaries it costs one AND per group per surviving chunk, no more
 * than a candidate, and no branches.
 *
 * CPU levels.  Every field keeps its shape's step function for each
 * implementation (pipapo_field.steps: generic C and AVX2, one function per
 * group width x group count), and the snapshot the index of the one
 * chosen when it was built from the CPU level and FLOWDP_CPU, so nothing
 * on the lookup path asks which CPU this is.  Under FLOWDP_CPU=validate
 * every lookup runs every implementation, with and without candidate
 * lists, and aborts on the first answer that differs from the generic
 * one.
 *
 * Cost of a lookup, on paper.  net,port from the kernel
 * selftest through the table (1001 flows "udp,nw_dst=A-B,tp_dst=C-D"):
 * the const compare (dl_type, nw_proto and the shared high bytes of
 * nw_dst: the key's words, already in L1); nw_dst's run of 2 groups x 4
 * chunks, 2 rows of 128 bytes, 4 cache lines; one or two survivors, their
 * mapping entries (1 line); tp_dst's 2 groups tested for each candidate
 * (2 lines); elems[] (1 line) and the rule's first line (1 line): about
 * 9 lines, of which the 4 row lines and the rule miss in L1 when the
 * probes are spread over the entries.  perf (cpu-clock) puts the time in
 * the step's chunk ANDs, the candidate bit tests and the rule's version
 * check, in that order; docs/PERFORMANCE.md has the figures.
 *
 * Invariants
 * ==========
 * - Rules (snap->elems, p->rules) are sorted best first: priority
 *   descending, then insertion sequence ascending.  Field rules in every
 *   field are numbered in that order too (a rule's prefixes are
 *   consecutive), so scanning set bits upward visits rules best first.
 * - mt[i] of a non-last field is the whole span, in the next field, of
 *   field rule i's rule; the spans of one rule's prefixes are equal, the
 *   spans of different rules are disjoint.  In the last field mt[i].to is
 *   the rule's index in elems and mt[i].n is 1.
 * - Bit i of lt[field][group][bucket] is set exactly when field rule i's
 *   value/mask accepts 'bucket' in that group; bits at or past n_rules
 *   are zero, so they never survive an AND.
 * - A rule matches a key exactly when the key passes the const compare
 *   and, in every intersected field, every group of the field's run
 *   accepts the key's bucket: the groups outside the run are uniform, and
 *   their common value/mask is in the const compare.
 * - Every row is bsize words, bsize a multiple of PIPAPO_ROW_WORDS (one
 *   256-bit AVX2 load), and lt is 32-byte aligned, so every row is too;
 *   the scratch bitmaps have bsize_max words and the same alignment.
 * - Bit c of a row summary is set exactly when chunk c of the row is not
 *   zero; a lookup's summary names every chunk of its result that is not
 *   zero, and the lookup reads no chunk of the result outside it, so
 *   nothing left by a previous lookup, including one that returned early,
 *   is ever read.
 * - A snapshot is immutable once published; the writer builds a new one,
 *   which may share the old one's tables, elems or delta: exactly one
 *   snapshot, the newest that points to a block, owns (frees) it.
 * - The rules a published snapshot holds are the non-tombstone entries of
 *   its elems and those of its delta, disjoint, and the writer's rules:
 *   a rule's owner_slot is its slot in elems, or PIPAPO_IN_DELTA for a
 *   rule added since the last whole build (in delta_rules, unless
 *   'rebuild').
 *
 * Worked example
 * ==============
 * Fields nw_dst (32 bits: 4 groups of 8) and tp_dst (16 bits: 2 groups).
 * Rule 0 (priority 20): nw_dst=10.0.0.0/8, tp_dst=1000-1023.
 * Rule 1 (priority 10): nw_dst=10.1.0.0/16, tp_dst=80.
 * nw_dst has one field rule per rule: 0 and 1.  Its group 0 (first byte)
 * is 10 exact in both, and groups 2 and 3 are wildcarded in both: all
 * three are uniform, so the const compare takes "first byte of nw_dst is
 * 10" and nw_dst's run is group 1 alone: bucket 1 = {0, 1}, other
 * buckets {0} (rule 0 does not care).  tp_dst=1000-1023 expands to
 * 1000-1007 (0x3e8/0xfff8) and 1008-1023 (0x3f0/0xfff0): tp_dst field
 * rules 0 and 1 belong to rule 0, field rule 2 (0x0050/0xffff) to rule 1;
 * its groups differ between rules, so its run is both groups.  Mapping:
 * nw_dst 0 -> tp_dst [0, 2), nw_dst 1 -> [2, 3); tp_dst 0, 1 -> rule 0,
 * 2 -> rule 1.  (Say nw_dst comes first.  The estimate of "Field order"
 * samples both rules: on nw_dst, 10.0.0.0 is accepted by rule 0 alone and
 * 10.1.0.0 by both, 3 in all; on tp_dst, 1000 and 80 each by one rule,
 * 2 in all; so a real build puts tp_dst first.)
 * A packet to 10.1.2.3 port 80 passes the const compare (10); nw_dst's
 * one row, bucket 1, gives {0, 1} in chunk 0, so the summary is {chunk
 * 0}.  These map to tp_dst field rules {0, 1, 2}: three, within
 * PIPAPO_MAX_CANDIDATES, so the candidate path takes over.  Port 80
 * selects bucket 0x00 of tp_dst's group 0 and bucket 0x50 of group 1.
 * Candidate 0: its bit in group 0's bucket 0x00 is clear (its high byte
 * is 0x03): dropped without looking at group 1; candidate 1 likewise;
 * candidate 2: set in both buckets.  tp_dst is the last field, so
 * candidate 2's rule, mt[2].to = rule 1, is the answer if visible at the
 * lookup's version.  Port 1010 would keep candidate 1 and answer rule 0,
 * whose priority is higher; had candidates of both rules survived, the
 * first in order (rule 0) would win.  A packet to 11.1.2.3 fails the
 * const compare and costs no row at all.  With more than
 * PIPAPO_MAX_CANDIDATES, the bitmap path goes on instead: map {0, 1} to
 * the bitmap {0, 1, 2} (map_spans(), which clears and marks chunk 0 of
 * the next bitmap), AND in the two tp_dst rows in chunk 0 ({2} & {2}),
 * and take the first set bit visible: 2, rule 1 again.
 *
 * Thread-safety: writers (add, remove, publish) under the table's mutex;
 * lookups on a snapshot from any thread in an RCU read-side section.
 *
 * References: S. Brivio, nft_set_pipapo.c and nft_set_pipapo_avx2.c, Linux
 * 5.6+ (theory of operation); the nftables selftest nft_concat_range.sh;
 * Open vSwitch's dpcls autovalidator (lib/dpif-netdev-lookup-
 * autovalidator.c), the model of FLOWDP_CPU=validate.
 */
#include <config.h>

#include "lib/pipapo.h"
#include "lib/pipapo-step.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/match-internal.h"
#include "lib/tss.h"
#include "lib/util.h"

uint64_t fdp__pipapo_lt_wide_max = PIPAPO_LT_WIDE_MAX;
uint32_t fdp__pipapo_incr_min = PIPAPO_INCR_MIN;
uint32_t fdp__pipapo_incr_max = UINT32_MAX;

/* Never visible: add_version past every version, remove_version 0. */
struct fdp_rule fdp__pipapo_tombstone = {
    .add_version = FDP_VERSION_NEVER,
    .remove_version = 0,
};

uint32_t
fdp__pipapo_incr_bound(uint32_t n_built)
{
    /* About 2 * sqrt(n): see "Incremental updates". */
    uint32_t r = 1;
    while ((uint64_t) r * r < n_built) {
        r++;
    }
    uint32_t bound = 2 * r < 16 ? 16 : 2 * r;
    return bound < fdp__pipapo_incr_max ? bound : fdp__pipapo_incr_max;
}

/* Whole rows are a multiple of the 32 bytes aligned_alloc(32, ...)
 * requires. */
static_assert(PIPAPO_ROW_WORDS * sizeof(uint64_t) == 32,
              "a row chunk is one 32-byte AVX2 load");
/* A field of up to 128 bits in groups of 4 or 8: at most 32 groups (the
 * 'rows' arrays), a padded width that fits pipapo_field.n_bits, and a
 * group count that fits the low byte of lib/pipapo-avx2.c's shape keys. */
static_assert(128 / 4 <= 32, "at most 32 groups per field");
static_assert(128 <= UINT8_MAX, "n_bits fits in a uint8_t");
static_assert(128 / 4 < 256, "a group count fits a shape key's low byte");
static_assert(sizeof(struct pipapo_map) == 8,
              "a mapping entry is two 32-bit words");

/* Fields that partition the key's bits; aliases (icmp_type, arp_spa...)
 * and views (dl_vlan, the 32-bit regs in their xregs) share their
 * storage.  Every word a match may constrain is covered: a word left out
 * is not checked at all by a sub-table built over fields_of(). */
static const enum fdp_field slot_fields[] = {
    FDP_F_IN_PORT, FDP_F_PKT_MARK, FDP_F_DL_SRC, FDP_F_DL_DST,
    FDP_F_DL_TYPE, FDP_F_VLAN_TCI, FDP_F_NW_SRC, FDP_F_NW_DST,
    FDP_F_IPV6_SRC, FDP_F_IPV6_DST, FDP_F_IPV6_LABEL, FDP_F_NW_PROTO,
    FDP_F_NW_TOS, FDP_F_NW_ECN, FDP_F_NW_TTL, FDP_F_IP_FRAG, FDP_F_TP_SRC,
    FDP_F_TP_DST, FDP_F_TCP_FLAGS, FDP_F_ARP_SHA, FDP_F_ARP_THA,
    FDP_F_ND_TARGET, FDP_F_METADATA, FDP_F_XREG0, FDP_F_XREG1, FDP_F_XREG2, FDP_F_XREG3,
    FDP_F_XREG4, FDP_F_XREG5, FDP_F_XREG6, FDP_F_XREG7, FDP_F_CT_STATE, FDP_F_CT_ZONE, FDP_F_CT_MARK, FDP_F_CT_NW_PROTO,
    FDP_F_CT_TP_SRC, FDP_F_CT_TP_DST, FDP_F_CT_LABEL, FDP_F_CT_IPV6_SRC,
    FDP_F_CT_IPV6_DST,
};

struct fdp__field_map
fdp__pipapo_fields_of(const struct fdp_match *m)
{
    struct fdp__field_map set = m->range_fields;

    for (size_t i = 0; i < FDP_ARRAY_SIZE(slot_fields); i++) {
        if (fdp__match_get_mask(m, slot_fields[i])) {
            fdp__field_map_add(&set, slot_fields[i]);
        }
    }
    return set;
}

/* ---------------------------------------------------------------------- */
/* CPU levels.                                                             */

/* Best first, generic last: fdp__cpu_select() (lib/cpu-internal.h) picks
 * the row, as for every dispatched module. */
const struct fdp__pipapo_impl fdp__pipapo_impls[] = {
#ifdef FDP_HAVE_AVX2
    { { "avx2", FDP_CPU_AVX2, NULL }, fdp__pipapo_and_avx2,
      fdp__pipapo_pick_avx2 },
#endif
    { { "generic", FDP_CPU_GENERIC, NULL }, fdp__pipapo_and_generic,
      fdp__pipapo_pick_generic },
};
const size_t fdp__pipapo_n_impls = FDP_ARRAY_SIZE(fdp__pipapo_impls);
static_assert(FDP_ARRAY_SIZE(fdp__pipapo_impls) <= PIPAPO_MAX_IMPLS,
              "every field keeps one step per implementation");

static pthread_once_t select_once = PTHREAD_ONCE_INIT;
static unsigned int selected_impl;

static void
select_impl(void)
{
    selected_impl = (unsigned int) FDP__CPU_SELECT(fdp__pipapo_impls,
                                                   fdp__pipapo_n_impls);
}

/* The implementation a snapshot built now uses, as an index into
 * fdp__pipapo_impls.  Called when a snapshot is built, never on the
 * lookup path: the snapshot keeps it, and each field its step. */
static unsigned int
get_impl(void)
{
    pthread_once(&select_once, select_impl);
    return selected_impl;
}

/* The index of the implementation whose dispatcher is 'and_rows'. */
static unsigned int
impl_index(fdp__pipapo_and_fn *and_rows, unsigned int dflt)
{
    for (size_t i = 0; i < fdp__pipapo_n_impls; i++) {
        if (fdp__pipapo_impls[i].and_rows == and_rows) {
            return (unsigned int) i;
        }
    }
    return dflt;
}

/* ---------------------------------------------------------------------- */
/* Building snapshots.                                                     */

/* A value/mask over a field's (padded) width. */
struct prefix {
    fdp_u128 value;
    fdp_u128 mask;
};

/* Trailing zeros of a 128-bit value that is not zero. */
static unsigned int
ctz128(fdp_u128 v)
{
    uint64_t low = (uint64_t) v;

    return low ? (unsigned int) __builtin_ctzll(low)
               : 64 + (unsigned int) __builtin_ctzll((uint64_t) (v >> 64));
}

/* The index of the highest set bit of a 128-bit value that is not
 * zero. */
static unsigned int
log2_128(fdp_u128 v)
{
    uint64_t high = (uint64_t) (v >> 64);

    return high ? 127 - (unsigned int) __builtin_clzll(high)
                : 63 - (unsigned int) __builtin_clzll((uint64_t) v);
}

/* Splits [lo, hi] over 'n_bits' bits into aligned power-of-two blocks,
 * largest first from 'lo': each block is as large as both the alignment
 * of its start and the rest of the range allow.  Stores them in 'out' if
 * not NULL.  Returns the number of prefixes (at most 2 * n_bits). */
static size_t
range_to_prefixes(fdp_u128 lo, fdp_u128 hi, unsigned int n_bits,
                  struct prefix *out)
{
    fdp_u128 ones = fdp__ones(n_bits);
    size_t n = 0;

    for (;;) {
        fdp_u128 left = hi - lo;        /* Block sizes up to left + 1. */
        unsigned int k = left == ones ? n_bits : log2_128(left + 1);
        if (lo) {
            unsigned int align = ctz128(lo);
            k = align < k ? align : k;
        }
        if (out) {
            out[n].value = lo;
            out[n].mask = ones & ~fdp__ones(k);
        }
        n++;
        fdp_u128 last = lo | fdp__ones(k);
        if (last >= hi) {
            return n;
        }
        lo = last + 1;
    }
}

/* The prefixes of rule 'r''s constraint on field 'f'. */
static size_t
rule_prefixes(const struct fdp_rule *r, enum fdp_field f, struct prefix *out)
{
    const struct fdp__cmatch *m = &r->match;

    if (fdp__cmatch_has_range(m, f)) {
        return range_to_prefixes(fdp__cmatch_get(m, FDP__MATCH_VALUE, f),
                                 fdp__cmatch_get(m, FDP__MATCH_HI, f),
                                 fdp__field(f)->n_bits, out);
    }
    if (out) {
        out[0].value = fdp__cmatch_get(m, FDP__MATCH_VALUE, f);
        out[0].mask = fdp__cmatch_get(m, FDP__MATCH_MASK, f);
    }
    return 1;
}

static void
set_bit(uint64_t *bitmap, uint32_t i)
{
    bitmap[i / 64] |= UINT64_C(1) << (i % 64);
}

/* Sets bits first .. first + n - 1, a word at a time (a rule whose range
 * expands to many prefixes in the next field maps to a long span). */
static void
set_span(uint64_t *bitmap, uint32_t first, uint32_t n)
{
    uint32_t end = first + n;

    while (first < end) {
        uint32_t bit = first % 64;
        uint32_t take = end - first < 64 - bit ? end - first : 64 - bit;
        uint64_t ones = take == 64 ? ~UINT64_C(0)
                                   : ((UINT64_C(1) << take) - 1) << bit;
        bitmap[first / 64] |= ones;
        first += take;
    }
}

void
fdp__pipapo_snapshot_free(struct pipapo_snapshot *snap)
{
    if (snap) {
        for (unsigned int i = 0; snap->owns_tables && i < snap->n_fields;
             i++) {
            free(snap->fields[i].lt);
            free(snap->fields[i].sum);
            free(snap->fields[i].mt);
        }
        if (snap->owns_elems) {
            free(snap->elems);
        }
        if (snap->owns_delta) {
            fdp__pipapo_snapshot_free((struct pipapo_snapshot *) snap->delta);
        }
        free(snap);
    }
}

static uint32_t
round_up(uint32_t x, uint32_t to)
{
    return (x + to - 1) / to * to;
}

/* Bytes the lookup table of a 'n_bits'-bit field with 'n_field_rules'
 * field rules takes with 'group_bits'-bit groups. */
static uint64_t
lt_bytes(unsigned int n_bits, uint32_t n_field_rules, unsigned int group_bits)
{
    uint32_t width = round_up(n_bits, group_bits);
    uint32_t bsize = round_up((n_field_rules + 63) / 64, PIPAPO_ROW_WORDS);

    return (uint64_t) (width / group_bits) * (1u << group_bits) * bsize * 8;
}

/* The group width for a field with 'n_field_rules' field rules that has
 * 'cur' now (0: none yet), with the hysteresis described under "Group
 * width". */
static uint8_t
pick_group_bits(enum fdp_field f, uint32_t n_field_rules, uint8_t cur)
{
    uint64_t wide = lt_bytes(fdp__field(f)->n_bits, n_field_rules, 8);

    if (cur == 4) {
        return wide < fdp__pipapo_lt_wide_max / 2 ? 8 : 4;
    }
    return wide > fdp__pipapo_lt_wide_max ? 4 : 8;
}

/* Counts the field rules (prefixes) of 'rules' in each field. */
static int
count_field_rules(const enum fdp_field *fields, unsigned int n_fields,
                  struct fdp_rule **rules, uint32_t n, uint32_t *counts)
{
    for (unsigned int f = 0; f < n_fields; f++) {
        counts[f] = 0;
        for (uint32_t r = 0; r < n; r++) {
            counts[f] += (uint32_t) rule_prefixes(rules[r], fields[f], NULL);
        }
    }
    return 0;
}

/* One field's constraints of every rule of a build, expanded once: rule
 * r's field rules are pfx[start[r]] .. pfx[start[r + 1] - 1]. */
struct field_prefixes {
    struct prefix *pfx;
    uint32_t *start;            /* n + 1 entries. */
};

/* Expands field 'f' of the 'n' 'rules' into 'fp'.  Returns 0 or
 * ENOMEM. */
static int
expand_field(struct fdp_rule **rules, uint32_t n, enum fdp_field f,
             struct field_prefixes *fp)
{
    uint32_t total = 0;

    fp->start = malloc((n + 1) * sizeof *fp->start);
    if (!fp->start) {
        return ENOMEM;
    }
    for (uint32_t r = 0; r < n; r++) {
        fp->start[r] = total;
        total += (uint32_t) rule_prefixes(rules[r], f, NULL);
    }
    fp->start[n] = total;
    fp->pfx = malloc((total + 1) * sizeof *fp->pfx);
    if (!fp->pfx) {
        return ENOMEM;
    }
    for (uint32_t r = 0; r < n; r++) {
        rule_prefixes(rules[r], f, fp->pfx + fp->start[r]);
    }
    return 0;
}

/* Fields of at least this many chunks get row summaries.  A summary
 * costs one more load per group (in a table of its own), and saves the
 * AND of each chunk no row has bits in; below 8 chunks (2048 field rules)
 * the ANDs it could save are a few 256-bit loads from lines the step
 * reads anyway, above it a selective group (the high byte of a port in
 * port,proto: 256 of 30,000 rules, in one or two of 118 chunks) lets a
 * step skip nearly all of them. */
#define PIPAPO_SUM_MIN_CHUNKS 8

/* Builds the chunk summaries of 'pf''s rows if it is large enough to
 * gain from them.  Returns 0 or ENOMEM. */
static int
build_summaries(struct pipapo_field *pf)
{
    if (pf->n_chunks < PIPAPO_SUM_MIN_CHUNKS) {
        return 0;
    }
    size_t n_rows = (size_t) pf->n_groups << pf->group_bits;
    pf->sum = calloc(n_rows * pf->sum_words, sizeof *pf->sum);
    if (!pf->sum) {
        return ENOMEM;
    }
    for (size_t r = 0; r < n_rows; r++) {
        const uint64_t *row = pf->lt + r * pf->bsize;
        uint64_t *sum = pf->sum + r * pf->sum_words;
        for (uint32_t c = 0; c < pf->n_chunks; c++) {
            const uint64_t *w = row + c * PIPAPO_ROW_WORDS;
            if (w[0] | w[1] | w[2] | w[3]) {
                sum[c / 64] |= UINT64_C(1) << (c % 64);
            }
        }
    }
    return 0;
}

int
fdp__pipapo_choose_widths(const enum fdp_field *fields,
                          unsigned int n_fields, struct fdp_rule **rules,
                          uint32_t n, uint8_t *group_bits)
{
    uint32_t counts[PIPAPO_MAX_FIELDS];
    int error = count_field_rules(fields, n_fields, rules, n, counts);

    for (unsigned int f = 0; !error && f < n_fields; f++) {
        group_bits[f] = pick_group_bits(fields[f], counts[f], 0);
    }
    return error;
}

void
fdp__pipapo_set_const_words(struct pipapo_snapshot *snap)
{
    snap->n_const_words = 0;
    for (unsigned int w = 0; w < FDP_KEY_WORDS; w++) {
        if (snap->const_key_mask.w[w]) {
            unsigned int i = snap->n_const_words++;
            snap->const_words[i] = (uint8_t) w;
            snap->const_mask[i] = snap->const_key_mask.w[w];
            snap->const_value[i] = snap->const_key_value.w[w];
        }
    }
}

/* Fills the rows of group 'g' of field 'pf' (whose run starts at bit
 * 'lsb' of the padded field value) from its field rules 'pfx', one 64-bit
 * word of every row at a time, for the 64 field rules of that word:
 *   - a group value/mask whose free bits are the low ones (a prefix, as
 *     every range's expansion is, and a wildcard) accepts a contiguous
 *     run of buckets: its bit is set in 'start' at the run's first bucket
 *     and in 'stop' past its last;
 *   - any other mask enumerates the buckets it accepts into 'acc';
 * then one sweep over the buckets carries the open runs and stores word
 * w of each row once, clearing the three arrays (2 KiB each, in L1) for
 * the next word as it goes.  Every word of every row is written exactly
 * once, so the table needs no clearing, and a rule costs two bit-sets
 * per group instead of one per accepted bucket, scattered over rows a
 * kilobyte or more apart (8,400 overflow rules: 1 KiB per row). */
static void
fill_group(struct pipapo_field *pf, unsigned int g, unsigned int lsb,
           const struct prefix *pfx)
{
    unsigned int gb = pf->group_bits;
    uint32_t buckets = 1u << gb, gmask = buckets - 1;
    unsigned int shift = lsb + pf->n_bits - (g + 1) * gb;
    uint64_t *rows = pf->lt + (size_t) g * buckets * pf->bsize;
    uint64_t acc[256], start[256], stop[257];

    memset(acc, 0, buckets * sizeof *acc);
    memset(start, 0, buckets * sizeof *start);
    memset(stop, 0, (buckets + 1) * sizeof *stop);
    for (uint32_t w = 0; w < pf->bsize; w++) {
        uint32_t first = w * 64;
        uint32_t end = first + 64 < pf->n_rules ? first + 64 : pf->n_rules;

        for (uint32_t idx = first; idx < end; idx++) {
            uint64_t bit = UINT64_C(1) << (idx % 64);
            uint32_t gm = (uint32_t) (pfx[idx].mask >> shift) & gmask;
            uint32_t gv = (uint32_t) (pfx[idx].value >> shift) & gm;
            uint32_t free_bits = ~gm & gmask;
            if (!(free_bits & (free_bits + 1))) {
                start[gv] |= bit;
                stop[gv + free_bits + 1] |= bit;
                continue;
            }
            for (uint32_t sub = free_bits;; sub = (sub - 1) & free_bits) {
                acc[gv | sub] |= bit;
                if (!sub) {
                    break;
                }
            }
        }
        uint64_t open = 0;
        for (uint32_t b = 0; b < buckets; b++) {
            open = (open & ~stop[b]) | start[b];
            rows[(size_t) b * pf->bsize + w] = acc[b] | open;
            acc[b] = start[b] = stop[b] = 0;
        }
        stop[buckets] = 0;
    }
}

/* The groups of a field that take part in the intersection: a run of
 * consecutive groups, from the first to the last whose field rules do
 * not all agree (see "Uniform groups").  The groups outside it are
 * uniform: every field rule has the same value/mask there. */
struct group_run {
    unsigned int first, n;      /* Group indices, 0 the most significant. */
    unsigned int lsb;           /* Bit position of the run's lowest bit in
                                 * the (padded) field value. */
};

/* Finds the run of field 'f' (groups of 'gb' bits) over its 'n_pfx'
 * field rules 'pfx', and ORs the uniform groups' value/mask outside it
 * into 'cmask' and 'cvalue', the key bits every lookup checks once. */
static void
find_group_run(const struct prefix *pfx, uint32_t n_pfx, enum fdp_field f,
               unsigned int gb, struct group_run *run,
               struct fdp_key *cmask, struct fdp_key *cvalue)
{
    unsigned int n_bits = round_up(fdp__field(f)->n_bits, gb);
    unsigned int n_groups = n_bits / gb;
    uint32_t gmask = (1u << gb) - 1;
    uint32_t first_v[32], first_m[32];
    bool uniform[32], seen = false;

    for (unsigned int g = 0; g < n_groups; g++) {
        uniform[g] = true;
    }
    for (uint32_t j = 0; j < n_pfx; j++) {
        for (unsigned int g = 0; g < n_groups; g++) {
            unsigned int shift = n_bits - (g + 1) * gb;
            uint32_t gv = (uint32_t) (pfx[j].value >> shift) & gmask;
            uint32_t gm = (uint32_t) (pfx[j].mask >> shift) & gmask;
            if (!seen) {
                first_v[g] = gv & gm;
                first_m[g] = gm;
            } else if ((gv & gm) != first_v[g] || gm != first_m[g]) {
                uniform[g] = false;
            }
        }
        seen = true;
    }

    /* The run: from the first non-uniform group to the last; at least the
     * last group, so that a field always has one. */
    unsigned int lo = n_groups - 1, hi = n_groups - 1;
    bool any = false;
    for (unsigned int g = 0; g < n_groups; g++) {
        if (!uniform[g]) {
            hi = g;
            if (!any) {
                lo = g;
            }
            any = true;
        }
    }
    run->first = lo;
    run->n = hi - lo + 1;
    run->lsb = n_bits - (hi + 1) * gb;

    /* Uniform groups outside the run, checked once (none for rules with
     * no rules at all: 'seen' false). */
    fdp_u128 m = 0, v = 0;
    for (unsigned int g = 0; seen && g < n_groups; g++) {
        if (g < lo || g > hi) {
            unsigned int shift = n_bits - (g + 1) * gb;
            m |= (fdp_u128) first_m[g] << shift;
            v |= (fdp_u128) first_v[g] << shift;
        }
    }
    if (m) {
        fdp__key_or(cmask, f, m);
        fdp__key_or(cvalue, f, v);
    }
}

/* Sets where 'pf''s groups are: the run 'run' of a field 'meta' cut in
 * groups of 'gb' bits, read from the key as one 64-bit word where it
 * fits in one (all fields but IPv6 addresses, and those whose run does
 * not straddle the middle of the address), else as 128 bits shifted. */
static void
set_field_position(struct pipapo_field *pf, const struct fdp__field *meta,
                   const struct group_run *run, unsigned int gb)
{
    unsigned int run_bits = run->n * gb;

    pf->n_groups = (uint8_t) run->n;
    pf->n_bits = (uint8_t) run_bits;
    pf->v_shift = 0;
    if (meta->n_bits < 128) {
        pf->key_word = meta->word;
        pf->key_shift = (uint8_t) (meta->shift + run->lsb);
        pf->key_bits = (uint8_t) (run_bits < meta->n_bits - run->lsb
                                  ? run_bits : meta->n_bits - run->lsb);
    } else if (run->lsb >= 64) {
        pf->key_word = meta->word;
        pf->key_shift = (uint8_t) (run->lsb - 64);
        pf->key_bits = (uint8_t) run_bits;
    } else if (run->lsb + run_bits <= 64) {
        pf->key_word = (uint8_t) (meta->word + 1);
        pf->key_shift = (uint8_t) run->lsb;
        pf->key_bits = (uint8_t) run_bits;
    } else {
        pf->key_word = meta->word;
        pf->key_shift = 0;
        pf->key_bits = 128;
        pf->v_shift = (uint8_t) run->lsb;
    }
}

struct pipapo_snapshot *
fdp__pipapo_build(const enum fdp_field *fields, unsigned int n_fields,
                  struct fdp_rule **rules, uint32_t n, bool wide)
{
    uint8_t group_bits[PIPAPO_MAX_FIELDS];

    memset(group_bits, wide ? 8 : 4, sizeof group_bits);
    return fdp__pipapo_build_widths(fields, n_fields, rules, n, group_bits);
}

struct pipapo_snapshot *
fdp__pipapo_build_widths(const enum fdp_field *fields, unsigned int n_fields,
                         struct fdp_rule **rules, uint32_t n,
                         const uint8_t *group_bits)
{
    struct pipapo_snapshot *snap = calloc(1, sizeof *snap + n_fields
                                             * sizeof snap->fields[0]);
    struct field_prefixes fp[PIPAPO_MAX_FIELDS];

    memset(fp, 0, sizeof fp);
    if (!snap) {
        goto fail;
    }
    snap->n_fields = n_fields;
    snap->n_elems = n;
    snap->owns_tables = snap->owns_elems = true;
    snap->impl = get_impl();
    snap->validate = fdp_cpu_validating();
    snap->elems = malloc((n + 1) * sizeof *snap->elems);
    if (!snap->elems) {
        goto fail;
    }
    memcpy(snap->elems, rules, n * sizeof *rules);
    snap->memory = sizeof *snap + n_fields * sizeof snap->fields[0]
                   + n * sizeof *rules;

    /* Expand every field once and number its field rules: rule r's
     * prefixes in field f are fp[f].start[r] .. fp[f].start[r + 1] - 1. */
    for (unsigned int f = 0; f < n_fields; f++) {
        if (expand_field(rules, n, fields[f], &fp[f])) {
            goto fail;
        }
        snap->fields[f].n_rules = fp[f].start[n];
    }

    struct fdp_key cmask = { { 0 } }, cvalue = { { 0 } };
    for (unsigned int f = 0; f < n_fields; f++) {
        struct pipapo_field *pf = &snap->fields[f];
        unsigned int gb = group_bits[f] == 4 ? 4 : 8;
        struct group_run run;

        pf->id = fields[f];
        pf->group_bits = (uint8_t) gb;
        find_group_run(fp[f].pfx, pf->n_rules, fields[f], gb, &run, &cmask,
                       &cvalue);
        set_field_position(pf, fdp__field(fields[f]), &run, gb);
        pf->bsize = round_up((pf->n_rules + 63) / 64, PIPAPO_ROW_WORDS);
        if (!pf->bsize) {
            pf->bsize = PIPAPO_ROW_WORDS;
        }
        size_t lt_words = (size_t) pf->n_groups * (1u << gb) * pf->bsize;
        pf->lt = aligned_alloc(32, lt_words * sizeof *pf->lt);
        pf->mt = malloc((pf->n_rules + 1) * sizeof *pf->mt);
        if (!pf->lt || !pf->mt) {
            goto fail;
        }
        snap->memory += lt_words * sizeof *pf->lt
                        + pf->n_rules * sizeof *pf->mt;
        pf->n_chunks = pf->bsize / PIPAPO_ROW_WORDS;
        pf->sum_words = (pf->n_chunks + 63) / 64;
        if (pf->bsize > snap->bsize_max) {
            snap->bsize_max = pf->bsize;
        }
        if (pf->sum_words > snap->sum_words_max) {
            snap->sum_words_max = pf->sum_words;
        }
        for (size_t i = 0; i < fdp__pipapo_n_impls; i++) {
            pf->steps[i] = fdp__pipapo_impls[i].pick(pf);
        }

        for (unsigned int g = 0; g < pf->n_groups; g++) {
            fill_group(pf, g, run.lsb, fp[f].pfx);
        }
        for (uint32_t r = 0; r < n; r++) {
            for (uint32_t idx = fp[f].start[r]; idx < fp[f].start[r + 1];
                 idx++) {
                if (f + 1 < n_fields) {
                    pf->mt[idx].to = fp[f + 1].start[r];
                    pf->mt[idx].n = fp[f + 1].start[r + 1]
                                    - fp[f + 1].start[r];
                } else {
                    pf->mt[idx].to = r;
                    pf->mt[idx].n = 1;
                }
            }
        }
    }
    snap->const_key_mask = cmask;
    snap->const_key_value = cvalue;
    fdp__pipapo_set_const_words(snap);
    for (unsigned int f = 0; f < n_fields; f++) {
        if (build_summaries(&snap->fields[f])) {
            goto fail;
        }
        snap->memory += snap->fields[f].sum
                        ? (size_t) snap->fields[f].n_groups
                          * (1u << snap->fields[f].group_bits)
                          * snap->fields[f].sum_words * sizeof(uint64_t)
                        : 0;
    }
    for (unsigned int f = 0; f + 1 < n_fields; f++) {
        struct pipapo_field *pf = &snap->fields[f];
        bool id = pf->n_rules == snap->fields[f + 1].n_rules;
        for (uint32_t i = 0; id && i < pf->n_rules; i++) {
            id = pf->mt[i].to == i && pf->mt[i].n == 1;
        }
        pf->identity = id;
    }
    for (unsigned int f = 0; f < n_fields; f++) {
        free(fp[f].pfx);
        free(fp[f].start);
    }
    return snap;

fail:
    for (unsigned int f = 0; f < n_fields; f++) {
        free(fp[f].pfx);
        free(fp[f].start);
    }
    fdp__pipapo_snapshot_free(snap);
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* The writer's sub-table.                                                 */

struct pipapo *
fdp__pipapo_create(const struct fdp__field_map *field_set)
{
    struct pipapo *p = aligned_alloc(64, sizeof *p);

    if (!p) {
        return NULL;
    }
    memset(p, 0, sizeof *p);
    p->field_set = *field_set;
    FDP__FIELD_MAP_FOR_EACH (f, field_set) {
        p->field_ids[p->n_fields++] = f;
    }
    fdp__subtable_init(&p->up, &fdp__pipapo_class, FDP_SUBTABLE_FOR_RANGES);
    return p;
}

void
fdp__pipapo_add_fields(struct pipapo *p,
                       const struct fdp__field_map *field_set)
{
    if (fdp__field_map_is_subset(field_set, &p->field_set)) {
        return;
    }
    fdp__field_map_or(&p->field_set, field_set);
    p->n_fields = 0;
    FDP__FIELD_MAP_FOR_EACH (f, &p->field_set) {
        p->field_ids[p->n_fields++] = f;
    }
    p->up.dirty = true;
    p->rebuild = true;
}

static void
free_snapshot_cb(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    fdp__pipapo_snapshot_free(CONTAINER_OF(head, struct pipapo_snapshot,
                                           rcu));
}

void
fdp__pipapo_destroy_now(struct pipapo *p)
{
    fdp__pipapo_snapshot_free(p->snap);
    free(p->rules);
    free(p->delta_rules);
    free(p->pending);
    free(p);
}

struct pipapo_free {
    struct rcu_head rcu;
    struct pipapo *p;
};

static void
free_pipapo_cb(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    struct pipapo_free *pf = CONTAINER_OF(head, struct pipapo_free, rcu);
    fdp__pipapo_destroy_now(pf->p);
    free(pf);
}

void
fdp__pipapo_destroy_deferred(struct pipapo *p)
{
    struct pipapo_free *pf = malloc(sizeof *pf);

    if (!pf) {
        /* Cannot defer without memory: wait for readers instead. */
        fdp__rcu_synchronize();
        fdp__pipapo_destroy_now(p);
        return;
    }
    pf->p = p;
    fdp__rcu_defer(&pf->rcu, free_pipapo_cb);
}

/* True if the changes since the last whole build are too many for
 * another incremental publish, or there is no build to add them to. */
static bool
changes_overflow(const struct pipapo *p, uint32_t more)
{
    const struct pipapo_snapshot *snap = p->snap;

    return !snap || snap->n_elems < fdp__pipapo_incr_min
           || (uint64_t) p->n_delta + p->n_tombs + p->n_pending + more
              > fdp__pipapo_incr_bound(snap->n_elems);
}

int
fdp__pipapo_add(struct pipapo *p, struct fdp_rule *rule)
{
    if (fdp__rules_insert(&p->rules, &p->up.n_rules, &p->alloc_rules, rule)) {
        return ENOMEM;
    }
    p->up.dirty = true;
    rule->owner = &p->up;
    rule->owner_slot = PIPAPO_IN_DELTA;
    fdp__subtable_raise_bounds(&p->up, rule);

    /* Into the delta, unless the next publish rebuilds anyway (then the
     * delta is not kept up to date: an out-of-memory here only means a
     * rebuild). */
    if (!p->rebuild) {
        if (changes_overflow(p, 1)
            || fdp__rules_insert(&p->delta_rules, &p->n_delta, &p->alloc_delta,
                            rule)) {
            p->rebuild = true;
        } else {
            p->delta_dirty = true;
        }
    }
    return 0;
}

void
fdp__pipapo_remove(struct pipapo *p, struct fdp_rule *rule)
{
    uint32_t i = fdp__rules_find(p->rules, p->up.n_rules, rule);

    if (i == p->up.n_rules) {
        return;
    }
    memmove(&p->rules[i], &p->rules[i + 1],
            (p->up.n_rules - i - 1) * sizeof *p->rules);
    p->up.n_rules--;
    p->up.dirty = true;
    if (p->rebuild) {
        return;
    }

    if (rule->owner_slot == PIPAPO_IN_DELTA) {
        uint32_t d = fdp__rules_find(p->delta_rules, p->n_delta, rule);
        if (d == p->n_delta) {
            p->rebuild = true;      /* Cannot happen: be safe. */
            return;
        }
        memmove(&p->delta_rules[d], &p->delta_rules[d + 1],
                (p->n_delta - d - 1) * sizeof *p->delta_rules);
        p->n_delta--;
        p->delta_dirty = true;
        return;
    }

    /* A built rule: its slot becomes a tombstone at the next publish. */
    if (changes_overflow(p, 1)) {
        p->rebuild = true;
        return;
    }
    if (p->n_pending == p->alloc_pending) {
        uint32_t grown = p->alloc_pending ? 2 * p->alloc_pending : 16;
        uint32_t *pending = realloc(p->pending, grown * sizeof *pending);
        if (!pending) {
            p->rebuild = true;
            return;
        }
        p->pending = pending;
        p->alloc_pending = grown;
    }
    p->pending[p->n_pending++] = rule->owner_slot;
}

/* True if every one of the 'n' (>= 1) rules constrains field 'f' by the
 * same value/mask (no range). */
static bool
field_is_constant(struct fdp_rule **rules, uint32_t n, enum fdp_field f)
{
    const struct fdp__cmatch *m0 = &rules[0]->match;

    if (fdp__cmatch_has_range(m0, f)) {
        return false;
    }
    fdp_u128 mask = fdp__cmatch_get(m0, FDP__MATCH_MASK, f);
    fdp_u128 value = fdp__cmatch_get(m0, FDP__MATCH_VALUE, f) & mask;
    for (uint32_t i = 1; i < n; i++) {
        const struct fdp__cmatch *m = &rules[i]->match;
        if (fdp__cmatch_has_range(m, f)
            || fdp__cmatch_get(m, FDP__MATCH_MASK, f) != mask
            || (fdp__cmatch_get(m, FDP__MATCH_VALUE, f) & mask) != value) {
            return false;
        }
    }
    return true;
}

/* Records constant field 'f', whose value/mask every rule has (rule
 * 'r''s), in the snapshot's checks. */
static void
add_const_field(struct pipapo_snapshot *snap, const struct fdp_rule *r,
                enum fdp_field f)
{
    fdp_u128 m = fdp__cmatch_get(&r->match, FDP__MATCH_MASK, f);

    snap->const_fields[snap->n_const_fields++] = f;
    fdp__key_or(&snap->const_key_mask, f, m);
    fdp__key_or(&snap->const_key_value, f,
                fdp__cmatch_get(&r->match, FDP__MATCH_VALUE, f) & m);
}

/* One rule's constraint on one field, unpacked for the selectivity
 * estimate: a range [lo, hi], or a value/mask. */
struct field_constraint {
    fdp_u128 lo, hi;            /* Range, if 'range'. */
    fdp_u128 value, mask;       /* Else. */
    bool range;
};

static bool
constraint_accepts(const struct field_constraint *c, fdp_u128 v)
{
    return c->range ? c->lo <= v && v <= c->hi
                    : (v & c->mask) == c->value;
}

/* Rules sampled per field for the selectivity estimate.  16 points give
 * the order of the expected survivors well enough to rank a handful of
 * fields (the estimate only has to separate a field that selects one rule
 * in a thousand from one every rule shares), and keep the estimate at
 * 16 x n_rules compares per field: about 1 ms for 30,000 rules, paid only
 * when the order is re-chosen. */
#define PIPAPO_ORDER_SAMPLES 16

/* Estimates how many of the 'n' rules a packet inside a rule matches on
 * field 'f' alone: the sum, over sampled rules, of the rules that accept
 * the sampled rule's lowest value.  'c' is scratch for n entries. */
static uint64_t
field_survivors(struct fdp_rule **rules, uint32_t n, enum fdp_field f,
                struct field_constraint *c)
{
    for (uint32_t i = 0; i < n; i++) {
        const struct fdp__cmatch *m = &rules[i]->match;
        c[i].range = fdp__cmatch_has_range(m, f);
        c[i].lo = c[i].value = fdp__cmatch_get(m, FDP__MATCH_VALUE, f);
        c[i].hi = fdp__cmatch_get(m, FDP__MATCH_HI, f);
        c[i].mask = fdp__cmatch_get(m, FDP__MATCH_MASK, f);
        c[i].value &= c[i].mask;
    }
    uint32_t samples = n < PIPAPO_ORDER_SAMPLES ? n : PIPAPO_ORDER_SAMPLES;
    uint64_t sum = 0;
    for (uint32_t s = 0; s < samples; s++) {
        fdp_u128 v = c[(uint64_t) s * n / samples].lo;
        for (uint32_t i = 0; i < n; i++) {
            sum += constraint_accepts(&c[i], v);
        }
    }
    return sum;
}

struct field_rank {
    enum fdp_field id;
    uint64_t survivors;
};

static int
compare_ranks(const void *a_, const void *b_)
{
    const struct field_rank *a = a_, *b = b_;

    if (a->survivors != b->survivors) {
        return a->survivors < b->survivors ? -1 : 1;
    }
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Orders 'fields' (n_fields) by their estimated selectivity over the 'n'
 * 'rules', most selective first.  Returns 0 or ENOMEM. */
static int
rank_fields(struct fdp_rule **rules, uint32_t n, enum fdp_field *fields,
            unsigned int n_fields)
{
    if (n_fields < 2) {
        return 0;
    }
    struct field_constraint *c = malloc((n ? n : 1) * sizeof *c);
    struct field_rank rank[PIPAPO_MAX_FIELDS];
    if (!c) {
        return ENOMEM;
    }
    for (unsigned int f = 0; f < n_fields; f++) {
        rank[f].id = fields[f];
        rank[f].survivors = field_survivors(rules, n, fields[f], c);
    }
    free(c);
    qsort(rank, n_fields, sizeof rank[0], compare_ranks);
    for (unsigned int f = 0; f < n_fields; f++) {
        fields[f] = rank[f].id;
    }
    return 0;
}

/* Orders 'fields' (n_fields, the non-constant ones) most selective first
 * over all of the sub-table's rules, reusing the last order while it
 * still applies (see struct pipapo).  Returns 0 or ENOMEM. */
static int
order_fields(struct pipapo *p, enum fdp_field *fields, unsigned int n_fields)
{
    struct fdp__field_map set = FDP__FIELD_MAP_EMPTY;

    for (unsigned int f = 0; f < n_fields; f++) {
        fdp__field_map_add(&set, fields[f]);
    }
    if (fdp__field_map_equal(&set, &p->order_set) && p->n_order == n_fields
        && p->up.n_rules <= 2 * (uint64_t) p->order_n_rules
        && 2 * (uint64_t) p->up.n_rules >= p->order_n_rules) {
        memcpy(fields, p->order, n_fields * sizeof *fields);
        return 0;
    }
    if (rank_fields(p->rules, p->up.n_rules, fields, n_fields)) {
        return ENOMEM;
    }
    memcpy(p->order, fields, n_fields * sizeof *fields);
    p->n_order = n_fields;
    p->order_set = set;
    p->order_n_rules = p->up.n_rules;
    return 0;
}

/* Builds a snapshot of the 'n' 'rules' (best first) over the sub-table's
 * fields: the whole sub-table if 'whole' (p->rules: the field order and
 * group widths are remembered for the next build), else the delta (its
 * own order, and 4-bit groups: a delta holds a few rules, whose 8-bit
 * tables would cost 8 KiB per group to clear and fill on every change).
 * NULL if out of memory. */
static struct pipapo_snapshot *
build_snapshot(struct pipapo *p, struct fdp_rule **rules, uint32_t n,
               bool whole)
{
    /* Phase 1: the constant fields leave the intersection; the others are
     * put in selectivity order. */
    enum fdp_field fields[PIPAPO_MAX_FIELDS], consts[PIPAPO_MAX_FIELDS];
    unsigned int n_fields = 0, n_consts = 0;
    for (unsigned int f = 0; f < p->n_fields; f++) {
        enum fdp_field id = p->field_ids[f];
        if (n && field_is_constant(rules, n, id)) {
            consts[n_consts++] = id;
        } else {
            fields[n_fields++] = id;
        }
    }
    if (whole ? order_fields(p, fields, n_fields)
              : rank_fields(rules, n, fields, n_fields)) {
        return NULL;
    }

    /* Phase 2: each field's group width from its own table size. */
    uint32_t counts[PIPAPO_MAX_FIELDS];
    uint8_t group_bits[PIPAPO_MAX_FIELDS];
    if (count_field_rules(fields, n_fields, rules, n, counts)) {
        return NULL;
    }
    for (unsigned int f = 0; f < n_fields; f++) {
        enum fdp_field id = fields[f];
        group_bits[f] = whole ? pick_group_bits(id, counts[f],
                                                p->group_bits[id])
                              : 4;
    }

    /* Phase 3: build, and add the constant fields' checks. */
    struct pipapo_snapshot *snap = fdp__pipapo_build_widths(
        fields, n_fields, rules, n, group_bits);
    if (!snap) {
        return NULL;
    }
    for (unsigned int f = 0; f < n_consts; f++) {
        add_const_field(snap, rules[0], consts[f]);
    }
    fdp__pipapo_set_const_words(snap);
    for (unsigned int f = 0; whole && f < n_fields; f++) {
        p->group_bits[fields[f]] = group_bits[f];
    }
    return snap;
}

/* Publishes 'snap' in place of the current snapshot, which is freed after
 * a grace period. */
static void
replace_snapshot(struct pipapo *p, struct pipapo_snapshot *snap)
{
    struct pipapo_snapshot *old = p->snap;

    FDP_RCU_SET(p->snap, snap);
    if (old) {
        fdp__rcu_defer(&old->rcu, free_snapshot_cb);
    }
    p->up.dirty = false;
}

/* Rebuilds the whole snapshot from the rules: every rule gets its slot in
 * the new elems, and the delta and tombstones are gone. */
static int
publish_whole(struct pipapo *p)
{
    struct pipapo_snapshot *snap = build_snapshot(p, p->rules,
                                                  p->up.n_rules, true);

    if (!snap) {
        return ENOMEM;
    }
    for (uint32_t i = 0; i < p->up.n_rules; i++) {
        p->rules[i]->owner_slot = i;
    }
    p->rebuild = false;
    p->delta_dirty = false;
    p->n_delta = 0;
    p->n_pending = 0;
    p->n_tombs = 0;
    if (p->alloc_delta > 4 * fdp__pipapo_incr_bound(p->up.n_rules)) {
        free(p->delta_rules);       /* A bulk insert's worth: give it */
        p->delta_rules = NULL;      /* back. */
        p->alloc_delta = 0;
    }
    replace_snapshot(p, snap);
    return 0;
}

/* Publishes the changes since the last whole build without rebuilding it:
 * a new snapshot that shares the built tables, with the pending removals
 * as tombstones in a copy of elems and the delta rebuilt if it changed
 * (see "Incremental updates"). */
static int
publish_changes(struct pipapo *p)
{
    struct pipapo_snapshot *old = p->snap;
    size_t size = sizeof *old + old->n_fields * sizeof old->fields[0];
    struct pipapo_snapshot *snap = malloc(size);
    struct pipapo_snapshot *delta = NULL;
    struct fdp_rule **elems = NULL;

    if (!snap) {
        return ENOMEM;
    }
    if (p->n_pending) {
        elems = malloc((old->n_elems + 1) * sizeof *elems);
        if (!elems) {
            goto nomem;
        }
        memcpy(elems, old->elems, old->n_elems * sizeof *elems);
        for (uint32_t i = 0; i < p->n_pending; i++) {
            elems[p->pending[i]] = &fdp__pipapo_tombstone;
        }
    }
    if (p->delta_dirty && p->n_delta) {
        delta = build_snapshot(p, p->delta_rules, p->n_delta, false);
        if (!delta) {
            goto nomem;
        }
    }

    /* The new snapshot takes over what it shares with the old one. */
    memcpy(snap, old, size);
    memset(&snap->rcu, 0, sizeof snap->rcu);
    old->owns_tables = false;
    if (elems) {
        snap->elems = elems;
    } else {
        old->owns_elems = false;
    }
    if (p->delta_dirty) {
        snap->delta = delta;
        snap->owns_delta = delta != NULL;
    } else {
        old->owns_delta = false;
    }
    p->n_tombs += p->n_pending;
    p->n_pending = 0;
    p->delta_dirty = false;
    replace_snapshot(p, snap);
    return 0;

nomem:
    free(elems);
    free(snap);
    return ENOMEM;
}

int
fdp__pipapo_publish(struct pipapo *p)
{
    if (!p->up.dirty) {
        return 0;
    }
    if (p->rebuild || changes_overflow(p, 0)) {
        return publish_whole(p);
    }
    return publish_changes(p);
}

/* ---------------------------------------------------------------------- */
/* Lookup.                                                                 */

/* Points 'rows' at the bucket row of each of 'pf''s groups for value
 * 'v'. */
static void
select_rows(const struct pipapo_field *pf, fdp_u128 v, const uint64_t **rows)
{
    unsigned int gb = pf->group_bits;

    for (unsigned int g = 0; g < pf->n_groups; g++) {
        unsigned int shift = pf->n_bits - (g + 1) * gb;
        uint32_t b = (uint32_t) (v >> shift) & ((1u << gb) - 1);
        rows[g] = pf->lt + ((size_t) g << gb | b) * pf->bsize;
    }
}

/* The generic chunk AND: four words, each through the group's rows. */
static inline __attribute__((always_inline)) bool
and_chunk_generic(uint64_t *res, const uint64_t *const *rows, unsigned int n,
                  uint32_t w, bool with_res)
{
    uint64_t any = 0;

    for (uint32_t k = w; k < w + PIPAPO_ROW_WORDS; k++) {
        uint64_t x = with_res ? res[k] : UINT64_MAX;
        for (unsigned int g = 0; g < n; g++) {
            x &= rows[g][k];
        }
        res[k] = x;
        any |= x;
    }
    return any != 0;
}

#define PIPAPO_CHUNK and_chunk_generic
PIPAPO_DEFINE_STEPS(fdp__pipapo_pick_generic, fdp__pipapo_and_generic)

/* Per-thread scratch bitmaps, grown on demand (so a thread allocates only
 * the first time it meets a larger sub-table) and freed when the thread
 * exits, through a pthread key's destructor. */
static __thread uint64_t *scratch;
static __thread uint32_t scratch_words;
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void
scratch_key_init(void)
{
    pthread_key_create(&scratch_key, free);
}

static uint64_t *
get_scratch(uint32_t words)
{
    if (words > scratch_words) {
        /* aligned_alloc() takes a multiple of the alignment. */
        words = (words + PIPAPO_ROW_WORDS - 1) / PIPAPO_ROW_WORDS
                * PIPAPO_ROW_WORDS;
        uint64_t *p = aligned_alloc(32, (size_t) words * 8);
        if (!p) {
            return NULL;
        }
        free(scratch);
        scratch = p;
        scratch_words = words;
        pthread_once(&scratch_once, scratch_key_init);
        pthread_setspecific(scratch_key, p);
    }
    return scratch;
}

/* Candidate lists hold at most this many field rules; past it the lookup
 * keeps ANDing bitmaps.  Why 32: testing a candidate costs one dependent
 * load per group, while ANDing a bitmap costs one 256-bit load per group
 * per 256 field rules; the candidate test wins while the list is short
 * next to the bitmap, and a lookup after a selective first field has a
 * handful of candidates.  32 covers a first field that leaves a few rules
 * whose ranges expand to a few prefixes each, and keeps both lists (the
 * current and the next, 128 bytes each) within four cache lines of stack;
 * a longer list would only be reached when the first field was not
 * selective, where the bitmap path is the better one anyway. */
#define PIPAPO_MAX_CANDIDATES 32

/* lookup_candidates() gave up: the list grew past its bound. */
static const char candidates_overflow;
#define CANDIDATES_OVERFLOW ((const struct fdp_rule *) (const void *) \
                             &candidates_overflow)

/* The longest candidate list worth testing after field 'f'.  A candidate
 * costs one scalar load, test and branch per group of each later field;
 * the bitmap path costs one 256-bit AND per group per surviving chunk
 * (the chunk summary skips the others), plus, where the next field
 * numbers its rules differently (a range expanded there), clearing and
 * filling a span map.  So where the numbering carries over (pf->identity,
 * as in the overflow sub-table of arbitrary masks) the bitmap path is
 * never worse: survivors in one chunk cost one AND per group, as one
 * candidate would, without the branches.  Elsewhere up to
 * PIPAPO_MAX_CANDIDATES. */
static uint32_t
candidate_bound(const struct pipapo_snapshot *snap, unsigned int f)
{
    return snap->fields[f].identity ? 0 : PIPAPO_MAX_CANDIDATES;
}

/* Runs the statements given after 'sum_words' with 'i' set to each set
 * bit of 'res' in the chunks 'sum' (sum_words words) names, in ascending
 * order.  A macro so that a 'return' in the statements leaves the
 * caller. */
#define FOR_EACH_SURVIVOR(i, res, sum, sum_words, ...)                   \
    for (uint32_t sw_ = 0; sw_ < (sum_words); sw_++) {                   \
        for (uint64_t cs_ = (sum)[sw_]; cs_; cs_ &= cs_ - 1) {           \
            uint32_t w0_ = (sw_ * 64 + (uint32_t) __builtin_ctzll(cs_))  \
                           * PIPAPO_ROW_WORDS;                           \
            for (uint32_t w_ = w0_; w_ < w0_ + PIPAPO_ROW_WORDS; w_++) { \
                for (uint64_t b_ = (res)[w_]; b_; b_ &= b_ - 1) {        \
                    uint32_t i = w_ * 64 + (uint32_t) __builtin_ctzll(b_); \
                    __VA_ARGS__                                          \
                }                                                        \
            }                                                            \
        }                                                                \
    }

/* Maps the survivors of field 'pf' ('res' in the chunks of 'sum') to the
 * next field's rules in 'cand', in order.  Returns false if there would
 * be more than 'bound' (at most PIPAPO_MAX_CANDIDATES). */
static bool
collect_candidates(const struct pipapo_field *pf, const uint64_t *res,
                   const uint64_t *sum, uint32_t bound, uint32_t *cand,
                   size_t *n_cand)
{
    size_t n = 0;

    FOR_EACH_SURVIVOR(i, res, sum, pf->sum_words, {
        if (n + pf->mt[i].n > bound) {
            return false;
        }
        for (uint32_t k = 0; k < pf->mt[i].n; k++) {
            cand[n++] = pf->mt[i].to + k;
        }
    })
    *n_cand = n;
    return true;
}

/* Finishes a lookup from field '*fp' on with the candidate field rules
 * 'cand' (ascending, so priority order is kept).  If the list would grow
 * past its bound, returns CANDIDATES_OVERFLOW with '*fp' the field it
 * reached and 'cand' (n '*n_candp') that field's candidates, from which
 * the bitmap path goes on. */
static const struct fdp_rule *
lookup_candidates(const struct pipapo_snapshot *snap,
                  const struct fdp_key *key, uint64_t version,
                  unsigned int *fp, uint32_t *cand, size_t *n_candp)
{
    uint32_t next[PIPAPO_MAX_CANDIDATES];
    size_t n_cand = *n_candp;

    for (unsigned int f = *fp; f < snap->n_fields && n_cand; f++) {
        const struct pipapo_field *pf = &snap->fields[f];
        const uint64_t *rows[32];

        select_rows(pf, fdp__pipapo_field_value(pf, key), rows);
        size_t n_next = 0;
        for (size_t c = 0; c < n_cand; c++) {
            uint32_t i = cand[c];
            bool ok = true;
            for (unsigned int g = 0; g < pf->n_groups && ok; g++) {
                ok = (rows[g][i / 64] >> (i % 64)) & 1;
            }
            if (!ok) {
                continue;
            }
            if (f + 1 == snap->n_fields) {
                const struct fdp_rule *r = snap->elems[pf->mt[i].to];
                if (fdp__rule_visible(r, version)) {
                    return r;
                }
                continue;
            }
            /* A range expanded in the next field can widen the list. */
            if (n_next + pf->mt[i].n > PIPAPO_MAX_CANDIDATES) {
                *fp = f;
                *n_candp = n_cand;
                return CANDIDATES_OVERFLOW;
            }
            for (uint32_t k = 0; k < pf->mt[i].n; k++) {
                next[n_next++] = pf->mt[i].to + k;
            }
        }
        memcpy(cand, next, n_next * sizeof *cand);
        n_cand = n_next;
    }
    return NULL;
}

/* The first rule visible at 'version' in priority order: the answer when
 * every field is constant (all rules match the same packets). */
static const struct fdp_rule *
first_visible(const struct pipapo_snapshot *snap, uint64_t version)
{
    for (uint32_t i = 0; i < snap->n_elems; i++) {
        if (fdp__rule_visible(snap->elems[i], version)) {
            return snap->elems[i];
        }
    }
    return NULL;
}

/* The first survivor of the last field 'pf' visible at 'version'. */
static const struct fdp_rule *
first_visible_survivor(const struct pipapo_snapshot *snap,
                       const struct pipapo_field *pf, const uint64_t *res,
                       const uint64_t *sum, uint64_t version)
{
    FOR_EACH_SURVIVOR(i, res, sum, pf->sum_words, {
        const struct fdp_rule *r = snap->elems[pf->mt[i].to];
        if (fdp__rule_visible(r, version)) {
            return r;
        }
    })
    return NULL;
}

/* Maps the survivors of field 'pf' to their spans in field 'npf': fills
 * 'next' and its summary 'nsum', clearing each chunk of 'next' the first
 * time a span reaches it (so that only touched chunks are written). */
static void
map_spans(const struct pipapo_field *pf, const uint64_t *res,
          const uint64_t *sum, const struct pipapo_field *npf,
          uint64_t *next, uint64_t *nsum)
{
    memset(nsum, 0, npf->sum_words * sizeof *nsum);
    FOR_EACH_SURVIVOR(i, res, sum, pf->sum_words, {
        uint32_t to = pf->mt[i].to, n = pf->mt[i].n;
        uint32_t c_end = (to + n - 1) / (64 * PIPAPO_ROW_WORDS);
        for (uint32_t c = to / (64 * PIPAPO_ROW_WORDS); c <= c_end; c++) {
            uint64_t bit = UINT64_C(1) << (c % 64);
            if (!(nsum[c / 64] & bit)) {
                nsum[c / 64] |= bit;
                memset(&next[c * PIPAPO_ROW_WORDS], 0,
                       PIPAPO_ROW_WORDS * sizeof *next);
            }
        }
        set_span(next, to, n);
    })
}

/* Turns the candidates 'cand' (n_cand field rules of field 'pf') into a
 * result bitmap 'res' with its summary 'sum', as if a step had left them:
 * each chunk that holds a candidate is cleared, then gets its bits. */
static void
candidates_to_bitmap(const struct pipapo_field *pf, const uint32_t *cand,
                     size_t n_cand, uint64_t *res, uint64_t *sum)
{
    memset(sum, 0, pf->sum_words * sizeof *sum);
    for (size_t k = 0; k < n_cand; k++) {
        uint32_t i = cand[k], c = i / (64 * PIPAPO_ROW_WORDS);
        uint64_t bit = UINT64_C(1) << (c % 64);
        if (!(sum[c / 64] & bit)) {
            sum[c / 64] |= bit;
            memset(&res[c * PIPAPO_ROW_WORDS], 0,
                   PIPAPO_ROW_WORDS * sizeof *res);
        }
        set_bit(res, i);
    }
}

/* The bitmap lookup with implementation 'impl' (an fdp__pipapo_impls
 * index) from field 'f0' on: from the first field, or (f0 > 0) from a
 * result and summary for field f0's rules already in 'res' and 'sum'.
 * 'next' and 'nsum' are scratch of the same sizes. */
static const struct fdp_rule *
lookup_from(const struct pipapo_snapshot *snap, const struct fdp_key *key,
            uint64_t version, unsigned int impl, bool use_candidates,
            unsigned int f0, uint64_t *res, uint64_t *sum, uint64_t *next,
            uint64_t *nsum)
{
    for (unsigned int f = f0; f < snap->n_fields; f++) {
        const struct pipapo_field *pf = &snap->fields[f];

        /* Phases 1 and 2: the bucket row each group of the packet's value
         * selects, intersected (with the result carried from the previous
         * field) in the chunks that can still hold survivors, by this
         * field's step. */
        if (!pf->steps[impl](res, sum, pf, fdp__pipapo_field_value(pf, key),
                             f > 0)) {
            return NULL;
        }

        /* Phase 3: last field: the first visible rule wins. */
        if (f + 1 == snap->n_fields) {
            return first_visible_survivor(snap, pf, res, sum, version);
        }

        /* Few survivors?  Then test just them in the later fields: a bit
         * test per group beats ANDing whole bitmaps (the first field is
         * usually selective). */
        uint32_t cand[PIPAPO_MAX_CANDIDATES];
        size_t n_cand = 0;
        uint32_t bound = use_candidates ? candidate_bound(snap, f) : 0;
        if (bound && collect_candidates(pf, res, sum, bound, cand, &n_cand)) {
            unsigned int reached = f + 1;
            const struct fdp_rule *r = lookup_candidates(snap, key, version,
                                                         &reached, cand,
                                                         &n_cand);
            if (r != CANDIDATES_OVERFLOW) {
                return r;
            }
            /* The list outgrew its bound in field 'reached': go on with
             * bitmaps from there, not from field 0. */
            candidates_to_bitmap(&snap->fields[reached], cand, n_cand, res,
                                 sum);
            return lookup_from(snap, key, version, impl, false, reached, res,
                               sum, next, nsum);
        }

        /* Phase 4: map the survivors to their spans in the next field
         * (nothing to do when the numbering is the same there: the
         * summary carries over too). */
        if (pf->identity) {
            continue;
        }
        map_spans(pf, res, sum, &snap->fields[f + 1], next, nsum);
        uint64_t *tmp = res;
        res = next;
        next = tmp;
        tmp = sum;
        sum = nsum;
        nsum = tmp;
    }
    return NULL;
}

static const struct fdp_rule *
lookup_bitmaps(const struct pipapo_snapshot *snap, const struct fdp_key *key,
               uint64_t version, unsigned int impl, bool use_candidates)
{
    if (!snap->n_fields) {
        return first_visible(snap, version);
    }
    uint64_t *res = get_scratch(2 * (snap->bsize_max + snap->sum_words_max));
    if (!res) {
        return NULL;
    }
    uint64_t *next = res + snap->bsize_max;
    uint64_t *sum = next + snap->bsize_max;
    uint64_t *nsum = sum + snap->sum_words_max;

    return lookup_from(snap, key, version, impl, use_candidates, 0, res, sum,
                       next, nsum);
}

/* Phase 0: the constant fields, one masked compare per key word they
 * touch (the prerequisites of a range flow are one word: dl_type and
 * nw_proto share word 1). */
static bool
consts_match(const struct pipapo_snapshot *snap, const struct fdp_key *key)
{
    for (unsigned int i = 0; i < snap->n_const_words; i++) {
        if ((key->w[snap->const_words[i]] & snap->const_mask[i])
            != snap->const_value[i]) {
            return false;
        }
    }
    return true;
}

/* The better of 'a' and 'b', either of which may be NULL. */
static const struct fdp_rule *
better(const struct fdp_rule *a, const struct fdp_rule *b)
{
    return a && fdp__rule_beats(a, b) ? a : b;
}

/* A lookup in the built part of 'snap' alone, with implementation
 * 'impl'. */
static const struct fdp_rule *
lookup_part(const struct pipapo_snapshot *snap, const struct fdp_key *key,
            uint64_t version, unsigned int impl, bool use_candidates)
{
    if (!snap->n_elems || !consts_match(snap, key)) {
        return NULL;
    }
    return lookup_bitmaps(snap, key, version, impl, use_candidates);
}

/* A lookup in 'snap' (not NULL): the better of its built part's answer and
 * its delta's, both with implementation 'impl' (a delta is built by the
 * same process, so it has the same implementations). */
static const struct fdp_rule *
lookup_parts(const struct pipapo_snapshot *snap, const struct fdp_key *key,
             uint64_t version, unsigned int impl, bool use_candidates)
{
    const struct fdp_rule *r = lookup_part(snap, key, version, impl,
                                           use_candidates);
    if (snap->delta) {
        r = better(r, lookup_part(snap->delta, key, version, impl,
                                  use_candidates));
    }
    return r;
}

const struct fdp_rule *
fdp__pipapo_lookup_with(const struct pipapo_snapshot *snap,
                        const struct fdp_key *key, uint64_t version,
                        fdp__pipapo_and_fn *and_rows)
{
    return snap ? lookup_parts(snap, key, version,
                               impl_index(and_rows, snap->impl), true)
                : NULL;
}

/* FLOWDP_CPU=validate: every implementation this CPU runs answers the
 * lookup, and any disagreement with the generic one, the specification,
 * aborts with both answers through fdp__cpu_validate_failed(). */
static const struct fdp_rule *
lookup_validate(const struct pipapo_snapshot *snap, const struct fdp_key *key,
                uint64_t version)
{
    const struct fdp_rule *want = fdp__pipapo_lookup_with(
        snap, key, version, fdp__pipapo_and_generic);

    for (size_t i = 0; i < fdp__pipapo_n_impls; i++) {
        const struct fdp__pipapo_impl *impl = &fdp__pipapo_impls[i];
        if (!fdp__cpu_impl_runs(&impl->cpu)) {
            continue;
        }
        for (int cand = 0; cand < 2; cand++) {
            const struct fdp_rule *got = lookup_parts(snap, key, version,
                                                      (unsigned int) i,
                                                      cand);
            if (got != want) {
                fdp__cpu_validate_failed("pipapo %s (%s) found rule %p "
                                         "where generic found %p",
                                         impl->cpu.name,
                                         cand ? "candidates" : "bitmaps",
                                         (const void *) got,
                                         (const void *) want);
            }
        }
    }
    return want;
}

const struct fdp_rule *
fdp__pipapo_lookup(const struct pipapo_snapshot *snap,
                   const struct fdp_key *key, uint64_t version)
{
    if (!snap) {
        return NULL;
    }
    if (snap->validate) {
        return lookup_validate(snap, key, version);
    }
    return lookup_parts(snap, key, version, snap->impl, true);
}

const struct fdp_rule *
fdp__pipapo_lookup_generic(const struct pipapo_snapshot *snap,
                           const struct fdp_key *key, uint64_t version)
{
    return fdp__pipapo_lookup_with(snap, key, version,
                                   fdp__pipapo_and_generic);
}

/* ---------------------------------------------------------------------- */
/* The sub-table class.                                                    */

static uint64_t
class_lookup_batch(const struct fdp__subtable *st,
                   const struct fdp_key *const keys[], uint64_t probe,
                   uint64_t version, const struct fdp_rule *found[])
{
    const struct pipapo_snapshot *snap
        = FDP_RCU_GET(fdp__pipapo_cast(st)->snap);
    uint64_t hits = 0;

    for (uint64_t m = probe; m; m &= m - 1) {
        size_t i = (size_t) __builtin_ctzll(m);
        const struct fdp_rule *r = fdp__pipapo_lookup(snap, keys[i], version);
        if (r) {
            found[i] = r;
            hits |= UINT64_C(1) << i;
        }
    }
    return hits;
}

static bool
class_for_each_rule(const struct fdp__subtable *st, bool published,
                    bool (*cb)(struct fdp_rule *, void *aux), void *aux)
{
    const struct pipapo *p = fdp__pipapo_cast(st);

    if (published) {
        /* Readers: the rules of the published snapshot, best first: its
         * built part without tombstones, merged with its delta. */
        const struct pipapo_snapshot *snap = FDP_RCU_GET(p->snap);
        if (!snap) {
            return true;
        }
        const struct pipapo_snapshot *d = snap->delta;
        uint32_t i = 0, k = 0, n_d = d ? d->n_elems : 0;
        for (;;) {
            while (i < snap->n_elems
                   && snap->elems[i] == &fdp__pipapo_tombstone) {
                i++;
            }
            struct fdp_rule *r;
            if (i < snap->n_elems
                && (k == n_d
                    || fdp__rule_beats(snap->elems[i], d->elems[k]))) {
                r = snap->elems[i++];
            } else if (k < n_d) {
                r = d->elems[k++];
            } else {
                break;
            }
            if (!cb(r, aux)) {
                return false;
            }
        }
        return true;
    }
    for (uint32_t i = 0; i < p->up.n_rules; i++) {
        if (!cb(p->rules[i], aux)) {
            return false;
        }
    }
    return true;
}

static void
class_describe(const struct fdp__subtable *st, struct fdp_subtable_stats *out)
{
    const struct pipapo_snapshot *snap
        = FDP_RCU_GET(fdp__pipapo_cast(st)->snap);

    out->kind = FDP_SUBTABLE_PIPAPO;
    if (!snap) {
        return;
    }
    out->n_fields = snap->n_fields;
    for (unsigned int i = 0; i < snap->n_fields; i++) {
        out->fields[i] = snap->fields[i].id;
        out->group_bits[i] = snap->fields[i].group_bits;
    }
    out->n_const_fields = snap->n_const_fields;
    for (unsigned int i = 0; i < snap->n_const_fields; i++) {
        out->const_fields[i] = snap->const_fields[i];
    }
}

static int
class_insert(struct fdp__subtable *st, struct fdp_rule *rule)
{
    return fdp__pipapo_add(fdp__pipapo_cast(st), rule);
}

static void
class_remove(struct fdp__subtable *st, struct fdp_rule *rule)
{
    fdp__pipapo_remove(fdp__pipapo_cast(st), rule);
}

static int
class_publish(struct fdp__subtable *st)
{
    return fdp__pipapo_publish(fdp__pipapo_cast(st));
}

static void
class_compact(struct fdp__subtable *st)
{
    struct pipapo *p = fdp__pipapo_cast(st);

    if (p->snap && (p->snap->delta || p->n_tombs)) {
        p->rebuild = true;
        p->up.dirty = true;
    }
}

static uint64_t
class_memory(const struct fdp__subtable *st)
{
    const struct pipapo *p = fdp__pipapo_cast(st);

    return sizeof *p + p->alloc_rules * sizeof *p->rules
           + p->alloc_delta * sizeof *p->delta_rules
           + p->alloc_pending * sizeof *p->pending
           + (p->snap ? p->snap->memory : 0)
           + (p->snap && p->snap->delta ? p->snap->delta->memory : 0);
}

static void
class_destroy(struct fdp__subtable *st, bool deferred)
{
    if (deferred) {
        fdp__pipapo_destroy_deferred(fdp__pipapo_cast(st));
    } else {
        fdp__pipapo_destroy_now(fdp__pipapo_cast(st));
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

const struct fdp__subtable_class fdp__pipapo_class = {
    .lookup_batch = class_lookup_batch,
    .for_each_rule = class_for_each_rule,
    .describe = class_describe,
    .for_each_partition = NULL, /* One pipapo, not partitioned. */
    .add_stats = class_add_stats,
    .insert = class_insert,
    .remove = class_remove,
    .publish = class_publish,
    .compact = class_compact,
    .memory = class_memory,
    .destroy = class_destroy,
};
