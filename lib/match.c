/*
 * Matches: value/mask per bit and ranges per field.
 *
 * A match is three keys: 'value' and 'mask' give, bit by bit, what a
 * packet's key must hold (as an Open vSwitch megaflow does), and for the
 * fields listed in 'range_fields', 'value' and 'hi' hold the bounds of a
 * range of values.  Masked bits are tested a word at a time; each range
 * field costs one extraction and two comparisons.
 *
 * Normalisation keeps one representation per set of packets selected the
 * same way: bits outside the mask are zero, and ranges that are a single
 * value, an aligned power-of-two block (a prefix) or the whole field become
 * value/mask.  So equality of matches is equality of their bytes, which is
 * what flow identity (match + priority) in the table relies on.
 */
#include <config.h>

#include "lib/match-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

void
fdp__match_init(struct fdp_match *m)
{
    memset(m, 0, sizeof *m);
}

/* Sets '*bits' to a key whose 1-bits are those of field 'f'. */
static void
field_bits(enum fdp_field f, struct fdp_key *bits)
{
    memset(bits, 0, sizeof *bits);
    fdp__key_set(bits, f, fdp__ones(fdp__field(f)->n_bits));
}

static bool
fields_overlap(enum fdp_field a, enum fdp_field b)
{
    struct fdp_key ka, kb;

    field_bits(a, &ka);
    field_bits(b, &kb);
    for (int i = 0; i < FDP_KEY_WORDS; i++) {
        if (ka.w[i] & kb.w[i]) {
            return true;
        }
    }
    return false;
}

/* Forgets everything 'm' says about the bits of 'f'. */
static void
clear_field(struct fdp_match *m, enum fdp_field f)
{
    fdp__key_set(&m->value, f, 0);
    fdp__key_set(&m->mask, f, 0);
    fdp__key_set(&m->hi, f, 0);
    fdp__field_map_remove(&m->range_fields, f);
}

/* Returns EBUSY if a range on a field other than 'f' shares its bits. */
static int
check_range_overlap(const struct fdp_match *m, enum fdp_field f)
{
    FDP__FIELD_MAP_FOR_EACH (r, &m->range_fields) {
        if (r != f && fields_overlap(r, f)) {
            return EBUSY;
        }
    }
    return 0;
}

/* A constraint on tunnel address 'f' also matches the tunnel's family
 * (lib/field.h, FDP__TUN_IPV6_BIT) when it constrains anything
 * ('constrains'). */
static void
match_tun_family(struct fdp_match *m, enum fdp_field f, bool constrains)
{
    if (fdp__field_is_tun_addr(f) && constrains) {
        m->mask.w[FDP__TUN_IPV6_WORD] |= FDP__TUN_IPV6_BIT;
        m->value.w[FDP__TUN_IPV6_WORD] &= ~FDP__TUN_IPV6_BIT;
        m->value.w[FDP__TUN_IPV6_WORD] |= fdp__field_is_tun_ipv6(f)
                                          ? FDP__TUN_IPV6_BIT : 0;
    }
}

int
fdp__match_set_masked(struct fdp_match *m, enum fdp_field f,
                      fdp_u128 value, fdp_u128 mask)
{
    if ((unsigned int) f >= FDP_N_FIELDS) {
        return EINVAL;
    }
    fdp_u128 ones = fdp__ones(fdp__field(f)->n_bits);
    if ((value & ~ones) || (mask & ~ones)) {
        return EINVAL;
    }
    int error = check_range_overlap(m, f);
    if (error) {
        return error;
    }
    clear_field(m, f);
    fdp__key_set(&m->mask, f, mask);
    fdp__key_set(&m->value, f, value & mask);
    match_tun_family(m, f, mask != 0);
    return 0;
}

bool
fdp__range_to_prefix(fdp_u128 lo, fdp_u128 hi, unsigned int n_bits,
                     fdp_u128 *mask)
{
    fdp_u128 ones = fdp__ones(n_bits);
    fdp_u128 host = lo ^ hi;            /* Must be 0...01...1. */

    if ((host & (host + 1)) || (lo & host) || (hi & host) != host) {
        return false;
    }
    *mask = ones & ~host;
    return true;
}

int
fdp__match_set_range(struct fdp_match *m, enum fdp_field f,
                     fdp_u128 lo, fdp_u128 hi)
{
    if ((unsigned int) f >= FDP_N_FIELDS) {
        return EINVAL;
    }
    const struct fdp__field *field = fdp__field(f);
    if (!(field->flags & FDP__F_RANGE) || lo > hi || hi > field->max) {
        return EINVAL;
    }

    fdp_u128 mask;
    if (lo == 0 && hi == field->max) {
        /* The whole field matches anything.  (For a field narrower than
         * its storage, such as icmp_type in tp_src's 16 bits, the packets
         * that carry the field never hold more than 'max'.) */
        return fdp__match_set_masked(m, f, 0, 0);
    }
    /* A prefix block becomes value/mask, except on fields whose syntax
     * takes no mask (nw_ttl=0-7 stays a range, as it can be written). */
    if (fdp__range_to_prefix(lo, hi, field->n_bits, &mask)
        && (lo == hi || (field->flags & FDP__F_MASKABLE))) {
        return fdp__match_set_masked(m, f, lo, mask);
    }

    int error = check_range_overlap(m, f);
    if (error) {
        return error;
    }
    clear_field(m, f);
    fdp__key_set(&m->value, f, lo);
    fdp__key_set(&m->hi, f, hi);
    fdp__field_map_add(&m->range_fields, f);
    match_tun_family(m, f, true);
    return 0;
}

bool
fdp__match_is_dl_type(const struct fdp_match *m, uint16_t dl_type)
{
    return fdp__match_dl_type(m) == dl_type;
}

int
fdp__match_dl_type(const struct fdp_match *m)
{
    return (fdp__match_get_mask(m, FDP_F_DL_TYPE) == 0xffff
            && !fdp__match_has_range(m, FDP_F_DL_TYPE))
           ? (int) fdp__match_get_value(m, FDP_F_DL_TYPE) : -1;
}

int
fdp__match_nw_proto(const struct fdp_match *m)
{
    return (fdp__match_get_mask(m, FDP_F_NW_PROTO) == 0xff
            && !fdp__match_has_range(m, FDP_F_NW_PROTO))
           ? (int) fdp__match_get_value(m, FDP_F_NW_PROTO) : -1;
}

/* Open vSwitch's "CT" prerequisite (is_ct_valid() on a match): the match
 * says the tracker found a connection, by requiring one of the bits only
 * a connection gives (+new, +est, +rel, +rpl, +snat, +dnat) or by
 * requiring +trk-inv. */
static bool
ct_valid(const struct fdp_match *m)
{
    uint64_t v = (uint64_t) fdp__match_get_value(m, FDP_F_CT_STATE);
    uint64_t mask = (uint64_t) fdp__match_get_mask(m, FDP_F_CT_STATE);
    uint64_t conn = FDP_CT_NEW | FDP_CT_EST | FDP_CT_REL | FDP_CT_RPL
                    | FDP_CT_SNAT | FDP_CT_DNAT;

    return (v & conn)
           || ((v & FDP_CT_TRK) && (mask & FDP_CT_INV) && !(v & FDP_CT_INV));
}

/* 135 or 136 if 'm' is an IPv6 neighbour solicitation or advertisement
 * as Open vSwitch's is_nd() reads a match: ICMPv6, icmp_type exactly 135
 * or 136, and icmp_code's value 0 (so not matched, or matched as 0); else
 * 0.  A range is not exact, and a range on icmp_code starts above 0 or
 * is not one the value 0 can stand for, so neither counts. */
static int
nd_type(const struct fdp_match *m, int dl_type, int proto)
{
    if (dl_type != FDP_ETH_TYPE_IPV6 || proto != FDP_IPPROTO_ICMPV6
        || fdp__match_has_range(m, FDP_F_ICMP_TYPE)
        || fdp__match_has_range(m, FDP_F_ICMP_CODE)
        || fdp__match_get_mask(m, FDP_F_ICMP_TYPE) != 0xffff
        || fdp__match_get_value(m, FDP_F_ICMP_CODE) != 0) {
        return 0;
    }
    fdp_u128 type = fdp__match_get_value(m, FDP_F_ICMP_TYPE);
    return type == FDP_ND_SOLICIT || type == FDP_ND_ADVERT ? (int) type : 0;
}

bool
fdp__match_meets(const struct fdp_match *m, enum fdp__prereq p)
{
    int dl_type = fdp__match_dl_type(m);
    bool ip = dl_type == FDP_ETH_TYPE_IP || dl_type == FDP_ETH_TYPE_IPV6;
    int proto = ip ? fdp__match_nw_proto(m) : -1;

    switch (p) {
    case FDP__P_NONE:
    case FDP__P_VLAN:
        return true;
    case FDP__P_IP_ANY:
        return ip;
    case FDP__P_IPV4:
        return dl_type == FDP_ETH_TYPE_IP;
    case FDP__P_IPV6:
        return dl_type == FDP_ETH_TYPE_IPV6;
    case FDP__P_ARP:
        return dl_type == FDP_ETH_TYPE_ARP || dl_type == FDP_ETH_TYPE_RARP;
    case FDP__P_L4:
        return proto == FDP_IPPROTO_TCP || proto == FDP_IPPROTO_UDP
               || proto == FDP_IPPROTO_SCTP;
    case FDP__P_TCP:
        return proto == FDP_IPPROTO_TCP;
    case FDP__P_UDP:
        return proto == FDP_IPPROTO_UDP;
    case FDP__P_SCTP:
        return proto == FDP_IPPROTO_SCTP;
    case FDP__P_ICMPV4:
        return dl_type == FDP_ETH_TYPE_IP && proto == FDP_IPPROTO_ICMP;
    case FDP__P_ICMPV6:
        return dl_type == FDP_ETH_TYPE_IPV6 && proto == FDP_IPPROTO_ICMPV6;
    case FDP__P_ICMP_ANY:
        return (dl_type == FDP_ETH_TYPE_IP && proto == FDP_IPPROTO_ICMP)
               || (dl_type == FDP_ETH_TYPE_IPV6
                   && proto == FDP_IPPROTO_ICMPV6);
    case FDP__P_CT:
        return ct_valid(m);
    case FDP__P_CT_IPV4:
        return ct_valid(m) && dl_type == FDP_ETH_TYPE_IP;
    case FDP__P_CT_IPV6:
        return ct_valid(m) && dl_type == FDP_ETH_TYPE_IPV6;
    case FDP__P_CT_L4:
        return ct_valid(m) && !fdp__match_has_range(m, FDP_F_CT_NW_PROTO)
               && fdp__match_get_mask(m, FDP_F_CT_NW_PROTO) == 0xff
               && fdp__match_get_value(m, FDP_F_CT_NW_PROTO) != 0;
    case FDP__P_ND:
        return nd_type(m, dl_type, proto) != 0;
    case FDP__P_ND_SOLICIT:
        return nd_type(m, dl_type, proto) == FDP_ND_SOLICIT;
    case FDP__P_ND_ADVERT:
        return nd_type(m, dl_type, proto) == FDP_ND_ADVERT;
    }
    return false;
}

static bool
matches(const struct fdp_match *m, const struct fdp_key *key)
{
    for (int i = 0; i < FDP_KEY_WORDS; i++) {
        if ((key->w[i] ^ m->value.w[i]) & m->mask.w[i]) {
            return false;
        }
    }
    FDP__FIELD_MAP_FOR_EACH (f, &m->range_fields) {
        fdp_u128 x = fdp__key_get(key, f);
        if (x < fdp__key_get(&m->value, f) || x > fdp__key_get(&m->hi, f)) {
            return false;
        }
    }
    return true;
}

/* The smallest x >= lo with (x & mask) == value, where value & ~mask == 0
 * and all values fit in 'n_bits'; false if there is none. */
static bool
next_matching(fdp_u128 lo, fdp_u128 mask, fdp_u128 value,
              unsigned int n_bits, fdp_u128 *x)
{
    fdp_u128 diff = (lo ^ value) & mask;

    if (!diff) {
        *x = lo;
        return true;
    }
    int j = 127 - (diff >> 64 ? __builtin_clzll((uint64_t) (diff >> 64))
                              : 64 + __builtin_clzll((uint64_t) diff));
    fdp_u128 below = fdp__ones((unsigned int) j);
    if (!((lo >> j) & 1)) {
        /* lo has 0 where value needs 1: set it, lowest bits minimal. */
        *x = (lo & ~fdp__ones((unsigned int) j + 1))
             | ((fdp_u128) 1 << j) | (value & below);
        return true;
    }
    /* lo has 1 where value needs 0: carry into the lowest free 0 bit
     * above j. */
    for (unsigned int k = (unsigned int) j + 1; k < n_bits; k++) {
        if (!((mask >> k) & 1) && !((lo >> k) & 1)) {
            *x = (lo & ~fdp__ones(k + 1)) | ((fdp_u128) 1 << k)
                 | (value & fdp__ones(k));
            return true;
        }
    }
    return false;
}

/* The interval of values field 'f' can take under 'm', and whether every
 * value in it is allowed (false for a non-prefix mask). */
static void
field_bounds(const struct fdp_match *m, enum fdp_field f,
             fdp_u128 *lo, fdp_u128 *hi)
{
    if (fdp__match_has_range(m, f)) {
        *lo = fdp__key_get(&m->value, f);
        *hi = fdp__key_get(&m->hi, f);
    } else {
        fdp_u128 mask = fdp__key_get(&m->mask, f);
        fdp_u128 ones = fdp__ones(fdp__field(f)->n_bits);
        *lo = fdp__key_get(&m->value, f);
        *hi = *lo | (ones & ~mask);
    }
}

static bool
covers(const struct fdp_match *outer, const struct fdp_match *inner)
{
    /* Bits that 'inner' fixes: its mask, plus the high bits that are
     * constant across each of its ranges (all bits above the highest bit
     * in which lo and hi differ). */
    struct fdp_key fixed = inner->mask;
    struct fdp_key fixed_value = inner->value;
    FDP__FIELD_MAP_FOR_EACH (f, &inner->range_fields) {
        fdp_u128 lo = fdp__key_get(&inner->value, f);
        fdp_u128 d = lo ^ fdp__key_get(&inner->hi, f);
        fdp_u128 varying = d;
        for (unsigned int s = 1; s < 128; s <<= 1) {
            varying |= varying >> s;
        }
        fdp_u128 constant = fdp__ones(fdp__field(f)->n_bits) & ~varying;
        fdp__key_or(&fixed, f, constant);   /* 'value' holds lo's bits. */
    }
    for (int i = 0; i < FDP_KEY_WORDS; i++) {
        if (outer->mask.w[i] & ~fixed.w[i]) {
            return false;
        }
        if ((outer->value.w[i] ^ fixed_value.w[i]) & outer->mask.w[i]) {
            return false;
        }
    }

    /* Each range of 'outer' must contain all of inner's values. */
    FDP__FIELD_MAP_FOR_EACH (f, &outer->range_fields) {
        fdp_u128 lo, hi;
        field_bounds(inner, f, &lo, &hi);
        if (lo < fdp__key_get(&outer->value, f)
            || hi > fdp__key_get(&outer->hi, f)) {
            return false;
        }
    }
    return true;
}

static bool
intersects(const struct fdp_match *a, const struct fdp_match *b)
{
    for (int i = 0; i < FDP_KEY_WORDS; i++) {
        if ((a->value.w[i] ^ b->value.w[i]) & a->mask.w[i] & b->mask.w[i]) {
            return false;
        }
    }
    for (int side = 0; side < 2; side++) {
        const struct fdp_match *r = side ? b : a;   /* Has the range. */
        const struct fdp_match *o = side ? a : b;   /* The other. */
        FDP__FIELD_MAP_FOR_EACH (f, &r->range_fields) {
            fdp_u128 lo = fdp__key_get(&r->value, f);
            fdp_u128 hi = fdp__key_get(&r->hi, f);
            if (fdp__match_has_range(o, f)) {
                if (lo < fdp__key_get(&o->value, f)) {
                    lo = fdp__key_get(&o->value, f);
                }
                if (hi > fdp__key_get(&o->hi, f)) {
                    hi = fdp__key_get(&o->hi, f);
                }
                if (lo > hi) {
                    return false;
                }
                continue;
            }
            /* Ranges on different fields that share bits (dl_vlan and
             * vlan_tci) are not compared: answer "may intersect". */
            fdp_u128 x;
            if (!next_matching(lo, fdp__key_get(&o->mask, f),
                               fdp__key_get(&o->value, f),
                               fdp__field(f)->n_bits, &x) || x > hi) {
                return false;
            }
        }
    }
    return true;
}

/* ---------------------------------------------------------------------- */
/* Public functions.                                                       */

struct fdp_match *
fdp_match_create(void)
{
    return calloc(1, sizeof(struct fdp_match));
}

struct fdp_match *
fdp_match_clone(const struct fdp_match *match)
{
    struct fdp_match *m = malloc(sizeof *m);

    if (m) {
        *m = *match;
    }
    return m;
}

void
fdp_match_destroy(struct fdp_match *match)
{
    free(match);
}

int
fdp_match_set_masked(struct fdp_match *m, enum fdp_field f,
                     struct fdp_value value, struct fdp_value mask)
{
    return fdp__match_set_masked(m, f, fdp__from_value(value),
                                 fdp__from_value(mask));
}

int
fdp_match_set_range(struct fdp_match *m, enum fdp_field f,
                    struct fdp_value lo, struct fdp_value hi)
{
    return fdp__match_set_range(m, f, fdp__from_value(lo),
                                fdp__from_value(hi));
}

bool
fdp_match_matches(const struct fdp_match *m, const struct fdp_key *key)
{
    return matches(m, key);
}

bool
fdp_match_equal(const struct fdp_match *a, const struct fdp_match *b)
{
    return !memcmp(&a->value, &b->value, sizeof a->value)
           && !memcmp(&a->mask, &b->mask, sizeof a->mask)
           && !memcmp(&a->hi, &b->hi, sizeof a->hi)
           && fdp__field_map_equal(&a->range_fields, &b->range_fields);
}

bool
fdp_match_is_masked(const struct fdp_match *m)
{
    return !fdp__match_has_ranges(m);
}

bool
fdp_match_covers(const struct fdp_match *outer, const struct fdp_match *inner)
{
    return covers(outer, inner);
}

bool
fdp_match_intersects(const struct fdp_match *a, const struct fdp_match *b)
{
    return intersects(a, b);
}

bool
fdp_match_get(const struct fdp_match *m, enum fdp_field f,
              struct fdp_value *value)
{
    if ((unsigned int) f >= FDP_N_FIELDS
        || (!fdp__match_get_mask(m, f) && !fdp__match_has_range(m, f))) {
        return false;
    }
    *value = fdp__to_value(fdp__match_get_value(m, f));
    return true;
}

/* ---------------------------------------------------------------------- */
/* The compact form (lib/match-internal.h).                                         */

/* The maps of the words 'm' touches and of its nonzero hi words. */
static void
cmatch_maps(const struct fdp_match *m, uint64_t *words, uint64_t *hi_words)
{
    *words = *hi_words = 0;
    for (int i = 0; i < FDP_KEY_WORDS; i++) {
        if (m->value.w[i] | m->mask.w[i] | m->hi.w[i]) {
            *words |= UINT64_C(1) << i;
        }
        if (m->hi.w[i]) {
            *hi_words |= UINT64_C(1) << i;
        }
    }
}

size_t
fdp__cmatch_size(const struct fdp_match *m)
{
    uint64_t words, hi_words;

    cmatch_maps(m, &words, &hi_words);
    return sizeof(struct fdp__cmatch)
           + (2 * (size_t) fdp__popcount64(words)
              + (size_t) fdp__popcount64(hi_words)) * sizeof(uint64_t)
           + (hi_words ? sizeof(struct fdp__field_map) : 0);
}

void
fdp__cmatch_pack(struct fdp__cmatch *c, const struct fdp_match *m)
{
    cmatch_maps(m, &c->words, &c->hi_words);

    unsigned int n = fdp__cmatch_n_words(c), i = 0, h = 2 * n;
    for (int w = 0; w < FDP_KEY_WORDS; w++) {
        if ((c->words >> w) & 1) {
            c->w[i] = m->value.w[w];
            c->w[n + i] = m->mask.w[w];
            i++;
        }
        if ((c->hi_words >> w) & 1) {
            c->w[h++] = m->hi.w[w];
        }
    }
    if (c->hi_words) {
        memcpy(&c->w[h], &m->range_fields, sizeof m->range_fields);
    }
}

void
fdp__cmatch_expand(const struct fdp__cmatch *c, struct fdp_match *m)
{
    unsigned int n = fdp__cmatch_n_words(c), i = 0, h = 2 * n;

    memset(m, 0, sizeof *m);
    if (c->hi_words) {
        m->range_fields = *fdp__cmatch_range_fields(c);
    }
    for (int w = 0; w < FDP_KEY_WORDS; w++) {
        if ((c->words >> w) & 1) {
            m->value.w[w] = c->w[i];
            m->mask.w[w] = c->w[n + i];
            i++;
        }
        if ((c->hi_words >> w) & 1) {
            m->hi.w[w] = c->w[h++];
        }
    }
}

bool
fdp__cmatch_equal(const struct fdp__cmatch *c, const struct fdp_match *m)
{
    uint64_t words, hi_words;

    cmatch_maps(m, &words, &hi_words);
    if (words != c->words || hi_words != c->hi_words
        || (hi_words
            && !fdp__field_map_equal(&m->range_fields,
                                     fdp__cmatch_range_fields(c)))) {
        return false;
    }

    unsigned int n = fdp__cmatch_n_words(c), i = 0, h = 2 * n;
    uint64_t diff = 0;
    for (int w = 0; w < FDP_KEY_WORDS; w++) {
        if ((words >> w) & 1) {
            diff |= (c->w[i] ^ m->value.w[w]) | (c->w[n + i] ^ m->mask.w[w]);
            i++;
        }
        if ((hi_words >> w) & 1) {
            diff |= c->w[h++] ^ m->hi.w[w];
        }
    }
    return !diff;
}

bool
fdp__cmatch_matches(const struct fdp__cmatch *c, const struct fdp_key *key)
{
    unsigned int n = fdp__cmatch_n_words(c), i = 0;
    uint64_t diff = 0;

    /* Masked bits: the value holds range bounds outside the mask, so the
     * difference is masked before it counts. */
    for (uint64_t words = c->words; words; words &= words - 1, i++) {
        unsigned int w = fdp__lowest_word(words);
        diff |= (key->w[w] ^ c->w[i]) & c->w[n + i];
    }
    if (diff) {
        return false;
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
