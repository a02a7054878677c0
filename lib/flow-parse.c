/*
 * Parsing flows in ovs-ofctl syntax.
 *
 * A flow line is a list of tokens separated by commas or white space:
 * flow attributes (table, priority, cookie, idle_timeout, hard_timeout),
 * protocol shorthands (tcp, ipv6, ...), FIELD=VALUE[/MASK] or FIELD=LO-HI
 * assignments, and finally "actions=" followed by the action list, which
 * runs to the end of the line.
 *
 * Where ovs-ofctl quietly repairs a flow, flowdp refuses it with a message
 * naming the column and the token: a field given twice with different
 * values, a field whose prerequisites the match lacks (tp_dst without
 * tcp/udp/sctp), a mask on a field that takes none, bits outside a field's
 * width, ECN bits in nw_tos, a range whose low end is above its high end,
 * an action inconsistent with the match.  Nothing is silently dropped.
 *
 * Values are parsed by the syntax the field table gives each field
 * (lib/key.c), so adding a field needs no change here.
 *
 * Actions are found by name (action_names[]) and parsed by their kind's
 * function in parse_fns[], a table built from FDP__ACTION_KINDS
 * (lib/actions-internal.h).  Beyond each action's own checks, parse_actions()
 * keeps the order ovs-ofctl requires of OpenFlow 1.1+ instructions for
 * every protocol: write_metadata once and after the other actions,
 * goto_table last and to a later table, conjunction only with
 * conjunction.
 */
#include <config.h>

#include "lib/flow-text.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/actions-internal.h"
#include "lib/other-actions.h"
#include "lib/learn.h"
#include <flowdp/flow.h>
#include <flowdp/group.h>
#include <flowdp/meter.h>
#include "lib/util.h"

/* Longest flow text accepted, in bytes: far above any real flow, low
 * enough that a hostile line cannot make the parser allocate much. */
#define MAX_FLOW_LEN 65536

/* Marks a parameter that some functions of a table of functions ignore. */
#define UNUSED_ARG __attribute__((unused))

/* A flag of our own beside the public FDP_PARSE_* ones (flowdp/flow.h),
 * which use the low bits: the text is a packet (fdp_packet_parse()). */
#define PARSE_PACKET (1u << 31)

/* Every token's hold on the key is recorded as a "claim": the bits of the
 * field it names (all of them, not only those its mask selects) and the
 * constraint it puts there, normalised as the match will hold it.  A later
 * token whose claim overlaps an earlier one is an error unless the two are
 * the same constraint, so "pkt_mark=0x1/0x1,pkt_mark=0x2/0x2" is refused
 * (ovs-ofctl silently keeps the last), "tcp,nw_proto=6" and a repeated
 * "tp_dst=80" are accepted, and the answer does not depend on the order
 * ("tp_dst=1024/0xfc00" and "tp_dst=1024-2047" are the same claim).
 *
 * dl_vlan and dl_vlan_pcp are views of vlan_tci that also imply a tag (the
 * CFI bit).  That implication is a claim of its own, marked 'implied', so
 * that the two views share the bit while an explicit vlan_tci does not.
 *
 * Accepted claims never overlap unless identical, and identical ones are
 * not stored twice, so there is at most one per field plus the implied tag
 * bit. */
struct claim {
    struct fdp_key bits;        /* The claimed bits. */
    struct fdp_key value;       /* Value under 'mask', or a range's low end. */
    struct fdp_key mask;
    struct fdp_key hi;          /* A range's high end; zero otherwise. */
    bool implied;               /* The tag bit that dl_vlan(_pcp) imply. */
    int offset;                 /* Token text, as an offset into the line */
    int len;                    /* and a length, for messages. */
};

#define MAX_CLAIMS (FDP_N_FIELDS + 1)

struct parser {
    const char *line;           /* The whole text, for columns. */
    char *buf;                  /* Modifiable copy of 'line'. */
    char **errorp;
    struct fdp_match *match;
    /* Column (1-based) where each field was set, 0 if not. */
    int field_col[FDP_N_FIELDS];
    size_t n_claims;
    /* The name the user wrote for what is being applied now. */
    const char *cur_name;
    unsigned int flags;         /* FDP_PARSE_*. */
    unsigned int table_id;      /* The flow's table, for goto_table. */
    unsigned int nest;          /* How deep in clone() the parser is. */
    /* What earlier tokens constrain (see struct claim): the first
     * 'n_claims', each written as it is made.  Last, and left out of the
     * parser's initial clearing: at 55 claims of four keys each it is 37
     * KiB, which clearing cost more than the rest of a parse. */
    struct claim claims[MAX_CLAIMS];
};

static int __attribute__((format(printf, 3, 4)))
parse_error(struct parser *p, const char *at, const char *format, ...)
{
    if (p->errorp && !*p->errorp) {
        char msg[512];
        va_list args;
        va_start(args, format);
        vsnprintf(msg, sizeof msg, format, args);
        va_end(args);

        char *s = NULL;
        long col = (long) (at - p->buf) + 1;
        if (asprintf(&s, "column %ld: %s", col, msg) < 0) {
            s = NULL;
        }
        *p->errorp = s;
    }
    return EINVAL;
}

static int
col_of(const struct parser *p, const char *at)
{
    return (int) (at - p->buf) + 1;
}

/* ---------------------------------------------------------------------- */
/* Numbers and addresses.                                                  */

/* Parses all of 's' as an unsigned number in 'base' (10 or 16), or for
 * 'base' 0 the way ovs-ofctl (strtoull with base 0) does: hex after 0x,
 * octal after a leading 0, else decimal.  As strtoull, one leading '+' is
 * allowed ("tp_dst=+80").  Returns false if it is not one or exceeds 'max'
 * (then sets '*overflow'). */
static bool
str_to_uint(const char *s, int base, fdp_u128 max, fdp_u128 *value,
            bool *overflow)
{
    fdp_u128 v = 0;

    *overflow = false;
    if (*s == '+') {
        s++;
    }
    if (base == 0) {
        base = 10;
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
            base = 16;
            s += 2;
        } else if (s[0] == '0' && s[1]) {
            base = 8;
        }
    }
    if (!*s) {
        return false;
    }
    for (; *s; s++) {
        int d;
        if (isdigit((unsigned char) *s) && *s - '0' < base) {
            d = *s - '0';
        } else if (base == 16 && isxdigit((unsigned char) *s)) {
            d = tolower((unsigned char) *s) - 'a' + 10;
        } else {
            return false;
        }
        /* 'd' is checked first: for a field as narrow as nw_ecn a digit
         * can exceed 'max' by itself, and 'max - d' would wrap around. */
        if ((fdp_u128) d > max
            || v > (max - (fdp_u128) d) / (fdp_u128) base) {
            *overflow = true;
            return false;
        }
        v = v * base + d;
    }
    *value = v;
    return true;
}

static bool
str_to_u128(const char *s, fdp_u128 max, fdp_u128 *value, bool *overflow)
{
    return str_to_uint(s, 0, max, value, overflow);
}

/* OpenFlow port numbers are decimal in ovs-ofctl (ofputil_port_from_string
 * uses base 10): "in_port=010" is port 10 and "in_port=0x5" an error. */
static bool
str_to_port(const char *s, fdp_u128 max, fdp_u128 *value, bool *overflow)
{
    return str_to_uint(s, 10, max, value, overflow);
}

static bool
parse_mac(const char *s, fdp_u128 *mac)
{
    uint64_t v = 0;

    for (int i = 0; i < 6; i++) {
        int digits = 0;
        unsigned int byte = 0;
        for (; isxdigit((unsigned char) *s) && digits < 2; s++, digits++) {
            byte = byte * 16 + (unsigned int) (isdigit((unsigned char) *s)
                                               ? *s - '0'
                                               : tolower((unsigned char) *s)
                                                 - 'a' + 10);
        }
        if (!digits || (i < 5 ? *s++ != ':' : *s != '\0')) {
            return false;
        }
        v = (v << 8) | byte;
    }
    *mac = v;
    return true;
}

/* Parses a dotted quad the way ovs-ofctl reads one in a match or a
 * set_field (four "%hhu" conversions): each byte in decimal, leading zeros
 * and a '+' allowed ("010.001.002.003" is 10.1.2.3).  ovs-ofctl wraps a
 * byte above 255 around (256.1.1.1 is 0.1.1.1); flowdp refuses it. */
static bool
parse_ipv4(const char *s, fdp_u128 *ip)
{
    uint32_t v = 0;

    for (int i = 0; i < 4; i++) {
        unsigned int byte = 0;
        int digits = 0;
        if (*s == '+') {
            s++;
        }
        for (; isdigit((unsigned char) *s); s++, digits++) {
            byte = byte * 10 + (unsigned int) (*s - '0');
            if (byte > 255) {
                return false;
            }
        }
        if (!digits || (i < 3 ? *s++ != '.' : *s != '\0')) {
            return false;
        }
        v = (v << 8) | byte;
    }
    *ip = v;
    return true;
}

/* The stricter form ovs-ofctl takes in mod_nw_src and mod_nw_dst
 * (inet_pton: no leading zeros, no sign). */
static bool
parse_ipv4_strict(const char *s)
{
    struct in_addr a;

    return inet_pton(AF_INET, s, &a) == 1;
}

static bool
parse_ipv6(const char *s, fdp_u128 *ip)
{
    uint8_t b[16];

    if (inet_pton(AF_INET6, s, b) != 1) {
        return false;
    }
    fdp_u128 v = 0;
    for (int i = 0; i < 16; i++) {
        v = (v << 8) | b[i];
    }
    *ip = v;
    return true;
}

/* ---------------------------------------------------------------------- */
/* Field values.                                                           */

/* A parsed field constraint. */
struct constraint {
    bool is_range;
    fdp_u128 value;     /* Or the low end of a range. */
    fdp_u128 mask;      /* Unused for ranges. */
    fdp_u128 hi;        /* High end of a range. */
};

static const char *
syntax_hint(const struct fdp__field *f)
{
    switch (f->syntax) {
    case FDP__S_MAC:
        return "an Ethernet address";
    case FDP__S_IPV4:
        return "an IPv4 address";
    case FDP__S_IPV6:
        return "an IPv6 address";
    case FDP__S_PORT:
        return "a port number or name";
    default:
        return "a number";
    }
}

/* Parses one value (no mask, no range) of field 'f' from 's' at 'at'. */
static int
parse_one_value(struct parser *p, enum fdp_field f, const char *s,
                const char *at, fdp_u128 *value)
{
    const struct fdp__field *field = fdp__field(f);
    bool overflow = false;
    bool ok;

    switch (field->syntax) {
    case FDP__S_MAC:
        ok = parse_mac(s, value);
        break;
    case FDP__S_IPV4:
        ok = parse_ipv4(s, value);
        break;
    case FDP__S_IPV6:
        ok = parse_ipv6(s, value);
        break;
    case FDP__S_PORT: {
        uint32_t port;
        if (fdp__port_from_name(s, &port)) {
            *value = port;
            return 0;
        }
        ok = str_to_port(s, field->max, value, &overflow);
        break;
    }
    case FDP__S_TOS: {
        ok = str_to_u128(s, 255, value, &overflow);
        if (ok && (*value & 3)) {
            return parse_error(p, at, "%s: %s has ECN bits set (the low 2 "
                               "bits must be 0; match them with nw_ecn)",
                               field->name, s);
        }
        if (ok) {
            *value >>= 2;
            return 0;
        }
        if (overflow) {
            return parse_error(p, at, "%s: %s is out of range (0..252)",
                               field->name, s);
        }
        break;
    }
    default: {
        /* ovs-ofctl reads a field wider than 64 bits (ct_label) as hex
         * after "0x", and otherwise with strtoull(): 64 bits at most. */
        bool hex = s[*s == '+'] == '0'
                   && (s[(*s == '+') + 1] == 'x' || s[(*s == '+') + 1] == 'X');
        fdp_u128 max = field->n_bits > 64 && !hex ? UINT64_MAX : field->max;
        ok = str_to_u128(s, max, value, &overflow);
        if (!ok && overflow && field->n_bits > 64) {
            return parse_error(p, at, "%s: %s is out of range (%s)",
                               field->name, s,
                               hex ? "at most 128 bits" : "a decimal value "
                               "takes at most 64 bits; write wider ones in "
                               "hex");
        }
        break;
    }
    }
    if (ok) {
        return 0;
    }
    if (overflow) {
        return parse_error(p, at, "%s: %s is out of range (0..%" PRIu64 ")",
                           field->name, s, (uint64_t) field->max);
    }
    return parse_error(p, at, "%s: \"%s\" is not %s", field->name, s,
                       syntax_hint(field));
}

/* Parses a mask for field 'f': a number or address of the field's syntax,
 * or for IP addresses a prefix length "/N", in decimal as ovs-ofctl reads
 * it ("/010" is /10, "/0x8" an error).
 *
 * ovs-ofctl tries the prefix length first, so it refuses an IPv6 mask
 * that starts with a decimal digit ("::1/1::3"), although it prints such
 * masks itself ("ipv6_src=::1/75f2::1").  flowdp reads any IPv6 mask with
 * a ':' as an address, so that every flow it prints parses back. */
static int
parse_mask(struct parser *p, enum fdp_field f, const char *s, const char *at,
           fdp_u128 *mask)
{
    const struct fdp__field *field = fdp__field(f);
    bool prefix = (field->syntax == FDP__S_IPV4 && !strchr(s, '.'))
                  || (field->syntax == FDP__S_IPV6 && !strchr(s, ':'));

    if (prefix) {
        fdp_u128 len;
        bool overflow;
        if (!str_to_uint(s, 10, field->n_bits, &len, &overflow)) {
            return parse_error(p, at, "%s: \"/%s\" is not a prefix length "
                               "(0..%u) or a mask", field->name, s,
                               field->n_bits);
        }
        *mask = len ? fdp__ones(field->n_bits)
                      & ~fdp__ones(field->n_bits - (unsigned int) len) : 0;
        return 0;
    }
    int error = parse_one_value(p, f, s, at, mask);
    if (!error && (*mask & ~fdp__ones(field->n_bits))) {
        return parse_error(p, at, "%s: mask %s is wider than the field",
                           field->name, s);
    }
    return error;
}

/* A field that takes no mask still takes the one that means "exact", as
 * ovs-ofctl does (icmp_type=3/0xff): all ones over the field's OpenFlow
 * width, which is not its width in the key (nw_ecn=1/3 is refused, while
 * nw_ecn=1/0xff is taken). */
static int
parse_exact_mask(struct parser *p, enum fdp_field f, const char *s,
                 const char *at, struct constraint *c)
{
    const struct fdp__field *field = fdp__field(f);
    fdp_u128 mask;
    bool overflow;

    if (!field->exact_mask
        || !str_to_u128(s, field->exact_mask, &mask, &overflow)
        || mask != field->exact_mask) {
        return parse_error(p, at, "%s: takes no mask", field->name);
    }
    c->mask = fdp__ones(field->n_bits);
    return 0;
}

/* A field of flags (tcp_flags, ct_state): "+syn-ack" (the signed flags
 * matched, the others not), "syn|ack" (exactly these set), or a number,
 * which the caller parses (returns -1 then).  Flag names are matched
 * without regard to case for tcp_flags and exactly for ct_state, as
 * ovs-ofctl reads them. */
static int
parse_flags(struct parser *p, enum fdp_field f, const char *s,
            const char *at, struct constraint *c)
{
    const char *fname = fdp__field(f)->name;
    bool nocase = fdp__field(f)->syntax == FDP__S_TCP_FLAGS;
    unsigned int n_names;
    const char *const *names = fdp__flag_names(f, &n_names);

    c->value = c->mask = 0;
    /* "syn|ack" and "[200]|fin" list the flags that are set. */
    bool pipes = isalpha((unsigned char) *s) || *s == '[';
    if (*s != '+' && *s != '-' && !pipes) {
        return -1;              /* Numeric: the caller parses it. */
    }
    while (*s) {
        char sign = pipes ? '+' : *s++;
        if (sign != '+' && sign != '-') {
            return parse_error(p, at, "%s: expected '+' or '-' before a "
                               "flag name in \"%s\"", fname, s - 1);
        }
        size_t n = strcspn(s, pipes ? "|" : "+-");
        int bit = -1;
        for (unsigned int i = 0; i < n_names; i++) {
            if (strlen(names[i]) == n
                && !(nocase ? strncasecmp(s, names[i], n)
                     : strncmp(s, names[i], n))) {
                bit = (int) i;
            }
        }
        if (bit < 0) {
            char known[96];
            size_t len = 0;
            for (unsigned int i = 0; i < n_names; i++) {
                len += (size_t) snprintf(known + len, sizeof known - len,
                                         "%s%s", i ? " " : "", names[i]);
            }
            return parse_error(p, at, "%s: unknown flag \"%.*s\" (known: "
                               "%s)", fname, (int) n, s, known);
        }
        if (c->mask & (1u << bit)) {
            return parse_error(p, at, "%s: flag %s given twice", fname,
                               names[bit]);
        }
        c->mask |= 1u << bit;
        if (sign == '+') {
            c->value |= 1u << bit;
        }
        s += n;
        if (pipes && *s == '|') {
            s++;
            if (!*s) {
                return parse_error(p, at, "%s: flag name expected after "
                                   "'|'", fname);
            }
        }
    }
    if (pipes) {
        c->mask = fdp__ones(n_names);
    }
    return 0;
}

static int
parse_frag(struct parser *p, const char *s, const char *at,
           struct constraint *c)
{
    static const struct {
        const char *name;
        unsigned int value, mask;
    } names[] = {
        { "no", 0, FDP_FRAG_ANY },
        { "yes", FDP_FRAG_ANY, FDP_FRAG_ANY },
        { "first", FDP_FRAG_ANY, FDP_FRAG_ANY | FDP_FRAG_LATER },
        { "later", FDP_FRAG_ANY | FDP_FRAG_LATER,
          FDP_FRAG_ANY | FDP_FRAG_LATER },
        { "not_later", 0, FDP_FRAG_LATER },
    };

    for (size_t i = 0; i < FDP_ARRAY_SIZE(names); i++) {
        if (!strcmp(s, names[i].name)) {
            c->value = names[i].value;
            c->mask = names[i].mask;
            return 0;
        }
    }
    return parse_error(p, at, "ip_frag: \"%s\" is not one of no, yes, "
                       "first, later, not_later", s);
}

/* Where a range's '-' is in 's', or NULL.  IPv4, IPv6, MAC and numbers
 * contain no '-' of their own. */
static char *
range_dash(char *s)
{
    return strchr(s, '-');
}

/* Parses the value text 's' (at column 'at') of field 'f'. */
static int
parse_constraint(struct parser *p, enum fdp_field f, char *s, const char *at,
                 struct constraint *c)
{
    const struct fdp__field *field = fdp__field(f);
    int error;

    memset(c, 0, sizeof *c);
    if (!*s) {
        return parse_error(p, at, "%s: missing value", field->name);
    }
    if (field->syntax == FDP__S_FRAG) {
        return parse_frag(p, s, at, c);
    }
    if (fdp__is_flag_syntax(f)) {
        error = parse_flags(p, f, s, at, c);
        if (error >= 0) {
            return error;
        }
    }

    char *dash = range_dash(s);
    char *slash = strchr(s, '/');
    if (dash && slash) {
        return parse_error(p, at, "%s: a value takes a mask or a range, "
                           "not both", field->name);
    }
    if (dash) {
        if (!(field->flags & FDP__F_RANGE)) {
            return parse_error(p, at, "%s: takes no range", field->name);
        }
        *dash = '\0';
        error = parse_one_value(p, f, s, at, &c->value);
        if (!error) {
            error = parse_one_value(p, f, dash + 1, at, &c->hi);
        }
        if (error) {
            return error;
        }
        if (c->value > c->hi) {
            *dash = '-';
            return parse_error(p, at, "%s: range %s is empty (low end above "
                               "high end)", field->name, s);
        }
        c->is_range = true;
        return 0;
    }
    if (slash) {
        *slash = '\0';
        error = parse_one_value(p, f, s, at, &c->value);
        if (error) {
            return error;
        }
        if (!(field->flags & FDP__F_MASKABLE)) {
            return parse_exact_mask(p, f, slash + 1, at, c);
        }
        error = parse_mask(p, f, slash + 1, at, &c->mask);
        if (!error) {
            c->value &= c->mask;
        }
        return error;
    }
    error = parse_one_value(p, f, s, at, &c->value);
    c->mask = fdp__ones(field->n_bits);
    return error;
}

/* ---------------------------------------------------------------------- */
/* Applying constraints.                                                   */

static bool
keys_overlap(const struct fdp_key *a, const struct fdp_key *b)
{
    for (int i = 0; i < FDP_KEY_WORDS; i++) {
        if (a->w[i] & b->w[i]) {
            return true;
        }
    }
    return false;
}

static bool
claims_equal(const struct claim *a, const struct claim *b)
{
    return a->implied == b->implied
           && !memcmp(&a->bits, &b->bits, sizeof a->bits)
           && !memcmp(&a->value, &b->value, sizeof a->value)
           && !memcmp(&a->mask, &b->mask, sizeof a->mask)
           && !memcmp(&a->hi, &b->hi, sizeof a->hi);
}

/* Fills 'cl' with the claim of constraint 'c' on field 'f', normalising a
 * range as fdp__match_set_range() will store it. */
static void
make_claim(enum fdp_field f, const struct constraint *c, struct claim *cl)
{
    const struct fdp__field *field = fdp__field(f);
    fdp_u128 value = c->value;
    fdp_u128 mask = c->mask;
    fdp_u128 hi = 0;

    if (c->is_range) {
        fdp_u128 prefix;
        if (c->value == 0 && c->hi == field->max) {
            value = mask = 0;
        } else if (fdp__range_to_prefix(c->value, c->hi, field->n_bits,
                                        &prefix)
                   && (c->value == c->hi
                       || (field->flags & FDP__F_MASKABLE))) {
            mask = prefix;
        } else {
            mask = 0;
            hi = c->hi;
        }
    }
    memset(cl, 0, sizeof *cl);
    fdp__key_set(&cl->bits, f, fdp__ones(field->n_bits));
    fdp__key_set(&cl->value, f, hi ? value : value & mask);
    fdp__key_set(&cl->mask, f, mask);
    fdp__key_set(&cl->hi, f, hi);
}

/* The claim that dl_vlan and dl_vlan_pcp make on the tag bit. */
static void
make_tag_claim(struct claim *cl)
{
    memset(cl, 0, sizeof *cl);
    fdp__key_set(&cl->bits, FDP_F_VLAN_TCI, FDP_VLAN_CFI);
    fdp__key_set(&cl->value, FDP_F_VLAN_TCI, FDP_VLAN_CFI);
    fdp__key_set(&cl->mask, FDP_F_VLAN_TCI, FDP_VLAN_CFI);
    cl->implied = true;
}

/* The claim that a tunnel address makes on the tunnel's family
 * (lib/field.h, FDP__TUN_IPV6_BIT): tun_src and tun_ipv6_src cannot both
 * be matched, as their storage is shared. */
static void
make_tun_family_claim(enum fdp_field f, struct claim *cl)
{
    memset(cl, 0, sizeof *cl);
    cl->bits.w[FDP__TUN_IPV6_WORD] = FDP__TUN_IPV6_BIT;
    cl->mask.w[FDP__TUN_IPV6_WORD] = FDP__TUN_IPV6_BIT;
    cl->value.w[FDP__TUN_IPV6_WORD] = fdp__field_is_tun_ipv6(f)
                                      ? FDP__TUN_IPV6_BIT : 0;
    cl->implied = true;
}

/* Checks the 'n' claims of the token at 'at' (spelled 'name') against the
 * earlier ones and records those that are new.  Sets '*repeat' if every one
 * of them repeats an earlier claim, so that the match already holds the
 * token's constraint. */
static int
stake_claims(struct parser *p, struct claim *cls, size_t n, const char *at,
             const char *name, bool *repeat)
{
    size_t n_new = 0;

    for (size_t i = 0; i < n; i++) {
        bool same = false;
        for (size_t j = 0; j < p->n_claims; j++) {
            const struct claim *old = &p->claims[j];
            if (!keys_overlap(&cls[i].bits, &old->bits)) {
                continue;
            }
            if (!claims_equal(&cls[i], old)) {
                return parse_error(p, at, "%s: conflicts with %.*s at column "
                                   "%d", name, old->len,
                                   p->line + old->offset, old->offset + 1);
            }
            same = true;
        }
        if (!same) {
            cls[n_new++] = cls[i];
        }
    }
    for (size_t i = 0; i < n_new; i++) {
        cls[i].offset = (int) (at - p->buf);
        cls[i].len = (int) strcspn(p->line + cls[i].offset, ", \t\r\n");
        p->claims[p->n_claims++] = cls[i];
    }
    *repeat = !n_new;
    return 0;
}

/* Adds value/mask on field 'f' to the match.  Only the field's bits that
 * are in 'mask' change: dl_vlan_pcp adds the tag bit and its own bits to a
 * vlan_tci that dl_vlan may have set, and the claims guarantee that any
 * bits both set agree. */
static void
apply_masked(struct parser *p, enum fdp_field f, fdp_u128 value,
             fdp_u128 mask)
{
    fdp__key_or(&p->match->mask, f, mask);
    fdp__key_or(&p->match->value, f, value & mask);
}

static int
apply_range(struct parser *p, enum fdp_field f, fdp_u128 lo, fdp_u128 hi,
            const char *at)
{
    if (fdp__match_set_range(p->match, f, lo, hi)) {
        /* The values were checked against the field's range when parsed
         * and the claims keep ranges apart, so this is a range the match
         * cannot hold; say which. */
        return parse_error(p, at, "%s: range %" PRIu64 "-%" PRIu64 " is "
                           "not valid for this field (0..%" PRIu64 ")",
                           fdp__field(f)->name, (uint64_t) lo,
                           (uint64_t) hi, (uint64_t) fdp__field(f)->max);
    }
    return 0;
}

/* Claims, then applies, constraint 'c' on field 'f'.  dl_vlan and
 * dl_vlan_pcp imply an 802.1Q tag (the CFI bit of vlan_tci), and
 * dl_vlan=0xffff means "no tag", a claim on all of vlan_tci. */
static int
apply_constraint(struct parser *p, enum fdp_field f,
                 const struct constraint *c, const char *at)
{
    struct claim cls[3];
    size_t n = 0;
    bool repeat, family = false;

    if (f == FDP_F_DL_VLAN && !c->is_range && c->value == 0xffff) {
        struct constraint none = { .value = 0, .mask = 0xffff };
        make_claim(FDP_F_VLAN_TCI, &none, &cls[n++]);
    } else {
        if (f == FDP_F_DL_VLAN || f == FDP_F_DL_VLAN_PCP) {
            make_tag_claim(&cls[n++]);
        }
        make_claim(f, c, &cls[n++]);
        family = fdp__field_is_tun_addr(f)
                 && (cls[n - 1].mask.w[fdp__field(f)->word]
                     | cls[n - 1].mask.w[fdp__field(f)->word + 1]
                     | cls[n - 1].hi.w[fdp__field(f)->word]
                     | cls[n - 1].hi.w[fdp__field(f)->word + 1]);
        if (family) {
            make_tun_family_claim(f, &cls[n++]);
        }
    }
    int error = stake_claims(p, cls, n, at, p->cur_name, &repeat);
    if (error || repeat) {
        return error;
    }

    if (f == FDP_F_DL_VLAN && !c->is_range && c->value == 0xffff) {
        apply_masked(p, FDP_F_VLAN_TCI, 0, 0xffff);
        return 0;
    }
    if (f == FDP_F_DL_VLAN || f == FDP_F_DL_VLAN_PCP) {
        apply_masked(p, FDP_F_VLAN_TCI, FDP_VLAN_CFI, FDP_VLAN_CFI);
    }
    if (family) {
        p->match->mask.w[FDP__TUN_IPV6_WORD] |= FDP__TUN_IPV6_BIT;
        p->match->value.w[FDP__TUN_IPV6_WORD] |= fdp__field_is_tun_ipv6(f)
                                                 ? FDP__TUN_IPV6_BIT : 0;
    }
    if (c->is_range) {
        return apply_range(p, f, c->value, c->hi, at);
    }
    apply_masked(p, f, c->value, c->mask);
    return 0;
}

/* Parses and applies "name=value" for field 'f'. */
static int
parse_field(struct parser *p, enum fdp_field f, char *value, const char *at)
{
    struct constraint c;
    const struct fdp__field *field = fdp__field(f);

    /* dl_vlan accepts 0xffff (no tag) beyond its 12 bits, with or without
     * the exact mask, as ovs-ofctl ("dl_vlan=0xffff/0xffff"). */
    if (f == FDP_F_DL_VLAN) {
        char *slash = strchr(value, '/');
        fdp_u128 v, m = field->exact_mask;
        bool overflow;
        if (slash) {
            *slash = '\0';
        }
        bool none = str_to_u128(value, 0xffff, &v, &overflow) && v == 0xffff
                    && (!slash || (str_to_u128(slash + 1, field->exact_mask,
                                               &m, &overflow)
                                   && m == field->exact_mask));
        if (slash) {
            *slash = '/';
        }
        if (none) {
            c = (struct constraint) { .value = 0xffff };
            goto apply;
        }
    }
    int error = parse_constraint(p, f, value, at, &c);
    if (error) {
        return error;
    }
    if (c.is_range && f == FDP_F_DL_VLAN && c.hi > field->max) {
        return parse_error(p, at, "dl_vlan: range ends above 4095");
    }

apply:
    error = apply_constraint(p, f, &c, at);
    if (!error && !p->field_col[f]) {
        p->field_col[f] = col_of(p, at);
    }
    return error;
}

/* ---------------------------------------------------------------------- */
/* Shorthands and flow attributes.                                         */

static const struct {
    const char *name;
    uint16_t dl_type;
    int nw_proto;               /* -1 if the shorthand leaves it open. */
} shorthands[] = {
    { "ip", FDP_ETH_TYPE_IP, -1 },
    { "ipv6", FDP_ETH_TYPE_IPV6, -1 },
    { "icmp", FDP_ETH_TYPE_IP, FDP_IPPROTO_ICMP },
    { "tcp", FDP_ETH_TYPE_IP, FDP_IPPROTO_TCP },
    { "udp", FDP_ETH_TYPE_IP, FDP_IPPROTO_UDP },
    { "sctp", FDP_ETH_TYPE_IP, FDP_IPPROTO_SCTP },
    { "icmp6", FDP_ETH_TYPE_IPV6, FDP_IPPROTO_ICMPV6 },
    { "tcp6", FDP_ETH_TYPE_IPV6, FDP_IPPROTO_TCP },
    { "udp6", FDP_ETH_TYPE_IPV6, FDP_IPPROTO_UDP },
    { "sctp6", FDP_ETH_TYPE_IPV6, FDP_IPPROTO_SCTP },
    { "arp", FDP_ETH_TYPE_ARP, -1 },
    { "rarp", FDP_ETH_TYPE_RARP, -1 },
};

/* A shorthand claims dl_type and, for "tcp" and the like, nw_proto, so
 * "tcp,ip" and "ip,tcp" agree and "tcp,udp" is an error. */
static int
apply_shorthand(struct parser *p, int i, const char *at)
{
    struct constraint type = { .value = shorthands[i].dl_type,
                               .mask = 0xffff };
    struct constraint proto = { .value = (fdp_u128) shorthands[i].nw_proto,
                                .mask = 0xff };
    bool has_proto = shorthands[i].nw_proto >= 0;
    struct claim cls[2];
    bool repeat;

    p->cur_name = shorthands[i].name;
    make_claim(FDP_F_DL_TYPE, &type, &cls[0]);
    if (has_proto) {
        make_claim(FDP_F_NW_PROTO, &proto, &cls[1]);
    }
    int error = stake_claims(p, cls, has_proto ? 2 : 1, at, p->cur_name,
                             &repeat);
    if (error) {
        return error;
    }
    apply_masked(p, FDP_F_DL_TYPE, type.value, type.mask);
    if (!p->field_col[FDP_F_DL_TYPE]) {
        p->field_col[FDP_F_DL_TYPE] = col_of(p, at);
    }
    if (has_proto) {
        apply_masked(p, FDP_F_NW_PROTO, proto.value, proto.mask);
        if (!p->field_col[FDP_F_NW_PROTO]) {
            p->field_col[FDP_F_NW_PROTO] = col_of(p, at);
        }
    }
    return 0;
}

/* The flow attributes seen so far, so that a repeat is accepted when it
 * says the same thing ("priority=5,priority=5", as ovs-ofctl) and refused
 * when it does not (ovs-ofctl silently keeps the last). */
struct attr_state {
    bool seen[5];
    uint64_t value[5];
    uint64_t cookie_mask;
    int offset[5];              /* Offset of the first token in the line. */
};

/* Flow attributes: name, largest value, where it goes. */
enum attr { ATTR_TABLE, ATTR_PRIORITY, ATTR_COOKIE, ATTR_IDLE, ATTR_HARD };

static const struct {
    const char *name;
    uint64_t max;
} attrs[] = {
    [ATTR_TABLE] = { "table", 254 },
    [ATTR_PRIORITY] = { "priority", 65535 },
    [ATTR_COOKIE] = { "cookie", UINT64_MAX },
    [ATTR_IDLE] = { "idle_timeout", 65535 },
    [ATTR_HARD] = { "hard_timeout", 65535 },
};

static int
parse_attr(struct parser *p, enum attr a, const char *value, const char *at,
           struct attr_state *st, struct fdp_flow_spec *flow)
{
    fdp_u128 v;
    bool overflow;

    uint64_t cookie_mask = 0;
    char *slash = a == ATTR_COOKIE ? strchr(value, '/') : NULL;
    if (slash) {
        fdp_u128 mask;
        if (!(p->flags
              & (FDP_PARSE_COOKIE_MASK | FDP_PARSE_COOKIE_SELECT))) {
            return parse_error(p, at, "cookie: a mask selects flows to "
                               "modify, delete or dump; a new flow takes a "
                               "plain cookie");
        }
        *slash = '\0';
        if (!strcmp(slash + 1, "-1")) {
            mask = UINT64_MAX;
        } else if (!str_to_u128(slash + 1, UINT64_MAX, &mask, &overflow)) {
            return parse_error(p, at, "cookie: mask \"%s\" is not a 64-bit "
                               "number", slash + 1);
        }
        cookie_mask = (uint64_t) mask;
    } else if (a == ATTR_COOKIE && p->flags & FDP_PARSE_COOKIE_SELECT) {
        /* A selector without a mask: see FDP_PARSE_COOKIE_SELECT. */
        return parse_error(p, at, "cookie=%s: cannot set cookie (to match on "
                           "a cookie, specify a mask, e.g. cookie=%s/-1)",
                           value, value);
    }
    if (!str_to_u128(value, attrs[a].max, &v, &overflow)) {
        if (overflow) {
            return parse_error(p, at, "%s: %s is out of range (0..%" PRIu64
                               ")", attrs[a].name, value, attrs[a].max);
        }
        return parse_error(p, at, "%s: \"%s\" is not a number",
                           attrs[a].name, value);
    }
    if (st->seen[a]) {
        if (st->value[a] != (uint64_t) v
            || (a == ATTR_COOKIE && st->cookie_mask != cookie_mask)) {
            int off = st->offset[a];
            return parse_error(p, at, "%s: conflicts with %.*s at column %d",
                               attrs[a].name,
                               (int) strcspn(p->line + off, ", \t\r\n"),
                               p->line + off, off + 1);
        }
        return 0;
    }
    st->seen[a] = true;
    st->value[a] = (uint64_t) v;
    st->offset[a] = (int) (at - p->buf);
    if (a == ATTR_COOKIE) {
        st->cookie_mask = cookie_mask;
        flow->cookie_mask = cookie_mask;
    }
    switch (a) {
    case ATTR_TABLE:
        flow->table_id = (uint8_t) v;
        break;
    case ATTR_PRIORITY:
        flow->priority = (uint16_t) v;
        break;
    case ATTR_COOKIE:
        flow->cookie = (uint64_t) v;
        flow->cookie_given = true;
        break;
    case ATTR_IDLE:
        flow->idle_timeout = (uint16_t) v;
        break;
    case ATTR_HARD:
        flow->hard_timeout = (uint16_t) v;
        break;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Prerequisites.                                                          */

static const char *
prereq_text(enum fdp__prereq prereq)
{
    switch (prereq) {
    case FDP__P_IP_ANY:
        return "ip or ipv6";
    case FDP__P_IPV4:
        return "ip (IPv4)";
    case FDP__P_IPV6:
        return "ipv6";
    case FDP__P_ARP:
        return "arp or rarp";
    case FDP__P_L4:
        return "tcp, udp or sctp (or tcp6, udp6, sctp6)";
    case FDP__P_TCP:
        return "tcp or tcp6";
    case FDP__P_ICMP_ANY:
        return "icmp or icmp6";
    case FDP__P_UDP:
        return "udp or udp6";
    case FDP__P_SCTP:
        return "sctp or sctp6";
    case FDP__P_ICMPV4:
        return "icmp";
    case FDP__P_ICMPV6:
        return "icmp6";
    case FDP__P_CT:
        return "a tracked connection (ct_state with one of +new +est +rel "
               "+rpl +snat +dnat, or +trk-inv)";
    case FDP__P_CT_IPV4:
        return "ip (IPv4) and a tracked connection (ct_state with one of "
               "+new +est +rel +rpl +snat +dnat, or +trk-inv)";
    case FDP__P_CT_IPV6:
        return "ipv6 and a tracked connection (ct_state with one of +new "
               "+est +rel +rpl +snat +dnat, or +trk-inv)";
    case FDP__P_CT_L4:
        return "ct_nw_proto (exact, not 0) and a tracked connection";
    case FDP__P_ND:
        return "icmp6 with icmp_type=135 or 136 (and icmp_code 0)";
    case FDP__P_ND_SOLICIT:
        return "icmp6 with icmp_type=135 (and icmp_code 0)";
    case FDP__P_ND_ADVERT:
        return "icmp6 with icmp_type=136 (and icmp_code 0)";
    case FDP__P_NONE:
    case FDP__P_VLAN:
        break;
    }
    return "nothing";
}

/* IPv4 field names that ovs-ofctl also accepts in ARP flows for the ARP
 * fields stored in the same bits. */
static const struct {
    enum fdp_field ip;
    enum fdp_field arp;
} arp_spellings[] = {
    { FDP_F_NW_SRC, FDP_F_ARP_SPA },
    { FDP_F_NW_DST, FDP_F_ARP_TPA },
    { FDP_F_NW_PROTO, FDP_F_ARP_OP },
};

static int
check_prereqs(struct parser *p)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(arp_spellings); i++) {
        enum fdp_field ip = arp_spellings[i].ip;
        enum fdp_field arp = arp_spellings[i].arp;
        if (p->field_col[ip] && fdp__match_meets(p->match, FDP__P_ARP)) {
            /* "arp,nw_src=X,arp_spa=X" names one field twice, which the
             * claims accepted as a repeat. */
            if (!p->field_col[arp]) {
                p->field_col[arp] = p->field_col[ip];
            }
            p->field_col[ip] = 0;
            if (fdp__match_has_range(p->match, ip)) {
                /* A range is kept under its field's name: move it, so
                 * that the ARP field (and its formatting) carries it. */
                fdp_u128 lo = fdp__match_get_value(p->match, ip);
                fdp_u128 hi = fdp__key_get(&p->match->hi, ip);
                fdp__match_set_masked(p->match, ip, 0, 0);
                fdp__match_set_range(p->match, arp, lo, hi);
            }
        }
    }
    /* Open vSwitch encodes ct_nw_proto (and ct_tp_src, ct_tp_dst) only
     * when it is not 0, so ovs-ofctl drops "ct_nw_proto=0" without a
     * word; a tracked connection always has a protocol, so flowdp
     * refuses it rather than match differently. */
    if (p->field_col[FDP_F_CT_NW_PROTO]
        && !fdp__match_has_range(p->match, FDP_F_CT_NW_PROTO)
        && !fdp__match_get_value(p->match, FDP_F_CT_NW_PROTO)) {
        return parse_error(p, p->buf + p->field_col[FDP_F_CT_NW_PROTO] - 1,
                           "ct_nw_proto: 0 is no connection's protocol "
                           "(ovs-ofctl drops the field)");
    }
    for (int f = 0; f < FDP_N_FIELDS; f++) {
        enum fdp__prereq pr = fdp__field(f)->prereq;
        if (p->field_col[f] && !fdp__match_meets(p->match, pr)) {
            return parse_error(p, p->buf + p->field_col[f] - 1,
                               "%s: requires %s in the match",
                               fdp__field(f)->name, prereq_text(pr));
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Actions.                                                                */

/* ct_mark and ct_label: writable only inside ct(exec(...)), as in Open
 * vSwitch; everywhere else a write gets ovs-ofctl's reason. */
static bool
is_ct_exec_field(enum fdp_field f)
{
    return f == FDP_F_CT_MARK || f == FDP_F_CT_LABEL;
}

static int
ct_write_error(struct parser *p, const char *action, const char *name,
               const char *at)
{
    return parse_error(p, at, "%s: %s: cannot set CT fields outside of ct "
                       "action (ct_mark and ct_label are written by "
                       "ct(commit,exec(...)))", action, name);
}

/* True if set_field has a name for field 'f'. */
static bool
settable(enum fdp_field f)
{
    for (size_t i = 0; i < fdp__n_set_field_names; i++) {
        if (fdp__set_field_names[i].field == f) {
            return true;
        }
    }
    return false;
}

static int
require(struct parser *p, enum fdp__prereq pr, const char *action,
        const char *at)
{
    if (!(p->flags & FDP__PARSE_BUCKET) && !fdp__match_meets(p->match, pr)) {
        return parse_error(p, at, "%s: requires %s in the match", action,
                           prereq_text(pr));
    }
    return 0;
}

/* Parses a plain number argument of an action, in 'base' (0: as
 * str_to_uint()). */
static int
action_number_base(struct parser *p, const char *action, const char *arg,
                   int base, uint64_t max, const char *at, uint32_t *out)
{
    fdp_u128 v;
    bool overflow;

    if (!arg || !*arg) {
        return parse_error(p, at, "%s: missing argument", action);
    }
    if (!str_to_uint(arg, base, max, &v, &overflow)) {
        if (overflow) {
            return parse_error(p, at, "%s: %s is out of range (0..%" PRIu64
                               ")", action, arg, max);
        }
        return parse_error(p, at, "%s: \"%s\" is not a number", action, arg);
    }
    *out = (uint32_t) v;
    return 0;
}

static int
action_number(struct parser *p, const char *action, const char *arg,
              uint64_t max, const char *at, uint32_t *out)
{
    return action_number_base(p, action, arg, 0, max, at, out);
}

/* The parser of one action kind (FDP__ACTION_KINDS, lib/actions-internal.h): 'name'
 * is the spelling the user wrote, 'arg' its argument (NULL if none: the
 * text after ':' or inside the parentheses), 'at' the action's text for
 * messages.  Appends to 'b' or returns a parse_error(). */
static int parse_mod_action(struct parser *, const char *name, char *arg,
                            const char *at, struct fdp__actions_builder *);

typedef int parse_action_fn(struct parser *p, const char *name, char *arg,
                            const char *at, struct fdp__actions_builder *b);

static int
no_argument(struct parser *p, const char *name, const char *arg,
            const char *at)
{
    if (arg) {
        return parse_error(p, at, "%s: takes no argument", name);
    }
    return 0;
}

static int parse_output_subfield(struct parser *, char *arg, const char *at,
                                 struct fdp__actions_builder *);
static int check_nested(struct parser *, const struct fdp__action *,
                        const char *at);

/* True for the reserved ports an output can name as flowdp runs them:
 * NORMAL, FLOOD, ALL and LOCAL (FDP_ACT_RESERVED). */
static bool
is_reserved_output(uint32_t port)
{
    return port == FDP_PORT_NORMAL || port == FDP_PORT_FLOOD
           || port == FDP_PORT_ALL || port == FDP_PORT_LOCAL;
}

/* Parses an output port: 1..0xfeff, or a reserved port's name: IN_PORT,
 * CONTROLLER, NORMAL, FLOOD, ALL, LOCAL.  As ovs-ofctl, a reserved port
 * may be given by its OpenFlow 1.0 number too (65530 is NORMAL), which
 * ovs-ofctl accepts with a deprecation warning; or a subfield
 * (output:NXM_NX_REG1[0..15], output_reg). */
static int
parse_output_port(struct parser *p, char *arg, const char *at,
                  struct fdp__actions_builder *b)
{
    uint32_t port;

    bool named = fdp__port_from_name(arg, &port);
    if (!named && !isdigit((unsigned char) arg[0])) {
        return parse_output_subfield(p, arg, at, b);
    }
    if (!named) {
        int error = action_number_base(p, "output", arg, 10, 0xffff, at,
                                       &port);
        if (error) {
            return error;
        }
        named = port == FDP_PORT_IN_PORT || port == FDP_PORT_CONTROLLER
                || is_reserved_output(port);
    }
    if (named) {
        if (port == FDP_PORT_IN_PORT) {
            fdp__actions_add(b, FDP_ACT_IN_PORT, 0);
            return 0;
        }
        if (port == FDP_PORT_CONTROLLER) {
            fdp__actions_add(b, FDP_ACT_CONTROLLER, 65535);
            return 0;
        }
        if (is_reserved_output(port)) {
            fdp__actions_add(b, FDP_ACT_RESERVED, port);
            return 0;
        }
        return parse_error(p, at, "output: port %s is not supported (use a "
                           "port number, IN_PORT, CONTROLLER, NORMAL, FLOOD, "
                           "ALL or LOCAL)", arg);
    }
    if (port == 0 || port >= FDP_PORT_MAX) {
        return parse_error(p, at, "output: port %s is out of range "
                           "(1..%d, IN_PORT, CONTROLLER, NORMAL, FLOOD, ALL, "
                           "LOCAL)", arg, FDP_PORT_MAX - 1);
    }
    fdp__actions_add(b, FDP_ACT_OUTPUT, port);
    return 0;
}

/* "output:N", or a bare port number (the caller passes it as 'arg'). */
static int
parse_output(struct parser *p, const char *name, char *arg, const char *at,
             struct fdp__actions_builder *b)
{
    if (!arg) {
        return parse_error(p, at, "%s: missing port", name);
    }
    return parse_output_port(p, arg, at, b);
}

static int
parse_in_port(struct parser *p, const char *name, char *arg, const char *at,
              struct fdp__actions_builder *b)
{
    int error = no_argument(p, name, arg, at);

    if (!error) {
        fdp__actions_add(b, FDP_ACT_IN_PORT, 0);
    }
    return error;
}

static int
parse_vlan_vid(struct parser *p, const char *name, char *arg, const char *at,
               struct fdp__actions_builder *b)
{
    uint32_t v;
    int error = action_number(p, name, arg, 4095, at, &v);

    if (!error) {
        fdp__actions_add(b, FDP_ACT_SET_VLAN_VID, v);
    }
    return error;
}

static int
parse_vlan_pcp(struct parser *p, const char *name, char *arg, const char *at,
               struct fdp__actions_builder *b)
{
    uint32_t v;
    int error = action_number(p, name, arg, 7, at, &v);

    if (!error) {
        fdp__actions_add(b, FDP_ACT_SET_VLAN_PCP, v);
    }
    return error;
}

static int
parse_strip_vlan(struct parser *p, const char *name, char *arg,
                 const char *at, struct fdp__actions_builder *b)
{
    int error = no_argument(p, name, arg, at);

    if (!error) {
        fdp__actions_add(b, FDP_ACT_STRIP_VLAN, 0);
    }
    return error;
}

static int
parse_push_vlan(struct parser *p, const char *name, char *arg,
                const char *at, struct fdp__actions_builder *b)
{
    uint32_t v;
    int error = action_number(p, name, arg, 0xffff, at, &v);

    if (!error && v != 0x8100 && v != 0x88a8) {
        return parse_error(p, at, "push_vlan: %s is not a VLAN "
                           "ethertype (0x8100 or 0x88a8)", arg);
    }
    if (!error) {
        fdp__actions_add(b, FDP_ACT_PUSH_VLAN, v);
    }
    return error;
}

static int
parse_dec_ttl(struct parser *p, const char *name, char *arg, const char *at,
              struct fdp__actions_builder *b)
{
    int error = no_argument(p, name, arg, at);

    if (!error) {
        error = require(p, FDP__P_IP_ANY, name, at);
    }
    if (!error) {
        fdp__actions_add(b, FDP_ACT_DEC_TTL, 0);
    }
    return error;
}

/* Appends a set-field action, turning the action module's refusal of a
 * value wider than the field into a message. */
static int
add_set_field(struct parser *p, struct fdp__actions_builder *b,
              enum fdp_field f, fdp_u128 value, uint8_t flags, const char *at)
{
    if (fdp__actions_add_set_field(b, f, value, flags)) {
        return parse_error(p, at, "%s: value is out of range (0..%" PRIu64
                           ")", fdp__field(f)->name,
                           (uint64_t) fdp__field(f)->max);
    }
    return 0;
}

/* True for the fields only the pipeline has (registers and metadata),
 * which set_field writes under a mask (FDP_ACT_SET_MASKED). */
static bool
is_pipeline_register(enum fdp_field f)
{
    return f >= FDP_F_METADATA && f <= FDP_F_XXREG3;
}

/* Appends the writes of 'value' under 'mask' (a subset of field 'f''s
 * bits, not empty) as the loads ovs-ofctl prints for them, one
 * FDP_ACT_SET_MASKED record with FDP__ACT_LOAD per run of contiguous mask
 * bits, from the lowest, a run of more than 64 bits cut into pieces of 64
 * (Open vSwitch encodes a masked write as NXAST_REG_LOAD actions, each at
 * most 64 bits: load:1->NXM_NX_XXREG0[] is load:0x1->NXM_NX_XXREG0[0..63],
 * load:0->NXM_NX_XXREG0[64..127]), so that the flow's text parses back
 * to the same records. */
static int
add_loads(struct parser *p, struct fdp__actions_builder *b, enum fdp_field f,
          fdp_u128 value, fdp_u128 mask, const char *action, const char *at)
{
    unsigned int width = fdp__field(f)->n_bits;

    for (unsigned int ofs = 0; ofs < width;) {
        if (!((mask >> ofs) & 1)) {
            ofs++;
            continue;
        }
        unsigned int end = ofs + 1;
        while (end < width && end < ofs + 64 && ((mask >> end) & 1)) {
            end++;
        }
        fdp_u128 piece = fdp__ones(end - ofs) << ofs;
        if (fdp__actions_add_set_masked(b, f, value & piece, piece,
                                        FDP__ACT_LOAD)) {
            return parse_error(p, at, "%s: cannot write %s", action,
                               fdp__field(f)->name);
        }
        ofs = end;
    }
    return 0;
}

/* "set_field:V[/M]->F" on a register or metadata: a masked write, whose
 * value bits outside the mask are dropped as ovs-ofctl drops them.  A
 * mask that is not the whole field is stored as the loads ovs-ofctl
 * prints for it, one per run of mask bits (set_field:5/0xf0f->reg2 is
 * load:0x5->NXM_NX_REG2[0..3],load:0->NXM_NX_REG2[8..11]), so that the
 * flow's text parses back to the same actions. */
static int
parse_set_register(struct parser *p, enum fdp_field f, char *arg,
                   const char *at, struct fdp__actions_builder *b)
{
    const struct fdp__field *field = fdp__field(f);
    fdp_u128 value, mask = field->max;
    char *slash = strchr(arg, '/');
    int error;

    if (slash) {
        *slash = '\0';
        error = parse_mask(p, f, slash + 1, at, &mask);
        if (error) {
            return error;
        }
        if (!mask) {
            return parse_error(p, at, "set_field: a zero mask writes "
                               "nothing (\"%s/%s\")", arg, slash + 1);
        }
    }
    error = parse_one_value(p, f, arg, at, &value);
    if (error) {
        return error;
    }
    if (mask == field->max) {
        if (fdp__actions_add_set_masked(b, f, value, mask, 0)) {
            return parse_error(p, at, "set_field: cannot write %s",
                               field->name);
        }
        return 0;
    }
    return add_loads(p, b, f, value, mask, "set_field", at);
}

/* "set_field:V->tun_flags": V is a match's tun_flags text.  As in Open
 * vSwitch, a value with a mask ("1/1") or signed flags ("+oam", "-oam")
 * is a masked write, printed as a load, even when the mask is the whole
 * (one-bit) field; a plain value ("oam", "0", "1") sets the field. */
static int
parse_set_tun_flags(struct parser *p, char *arg, const char *at,
                    struct fdp__actions_builder *b)
{
    bool masked = strchr(arg, '/') || *arg == '+' || *arg == '-';
    struct constraint c;
    int error = parse_constraint(p, FDP_F_TUN_FLAGS, arg, at, &c);

    if (error) {
        return error;
    }
    if (c.is_range) {
        return parse_error(p, at, "set_field: tun_flags takes no range");
    }
    if (!c.mask) {
        return parse_error(p, at, "set_field: a zero mask writes nothing "
                           "(tun_flags)");
    }
    if (masked) {
        return add_loads(p, b, FDP_F_TUN_FLAGS, c.value & c.mask, c.mask,
                         "set_field", at);
    }
    return add_set_field(p, b, FDP_F_TUN_FLAGS, c.value, 0, at);
}

/* set_field:V->F, and the mod_xxx:V spellings (a row of
 * fdp__mod_actions, passed as 'name'). */
static int
parse_set_field(struct parser *p, const char *name, char *arg,
                const char *at, struct fdp__actions_builder *b)
{
    enum fdp_field f;
    fdp_u128 value;
    int error;

    if (strcasecmp(name, "set_field")) {
        return parse_mod_action(p, name, arg, at, b);
    }
    char *arrow = arg ? strstr(arg, "->") : NULL;
    if (!arrow) {
        return parse_error(p, at, "set_field: expected VALUE->FIELD");
    }
    *arrow = '\0';
    const char *target = arrow + 2;
    const struct fdp__set_field_name *sf = fdp__set_field_name_find(target);
    if (!sf) {
        if (fdp_field_from_name(target, &f) && is_pipeline_register(f)) {
            return parse_set_register(p, f, arg, at, b);
        }
        if (fdp_field_from_name(target, &f) && is_ct_exec_field(f)) {
            return ct_write_error(p, "set_field", target, at);
        }
        if (fdp_field_from_name(target, &f) && !settable(f)) {
            return parse_error(p, at, "set_field: %s is read-only", target);
        }
        return parse_error(p, at, "set_field: unknown field \"%s\"", target);
    }
    f = sf->field;
    if (fdp__field(f)->syntax == FDP__S_TUN_FLAGS) {
        return parse_set_tun_flags(p, arg, at, b);
    }
    char *slash = strchr(arg, '/');
    fdp_u128 mask = fdp__field(f)->max;
    if (slash) {
        /* A masked write to a header: the loads ovs-ofctl prints for it,
         * unless the mask is the whole field. */
        *slash = '\0';
        error = parse_mask(p, f, slash + 1, at, &mask);
        if (!error && !mask) {
            error = parse_error(p, at, "set_field: a zero mask writes "
                                "nothing (\"%s/%s\")", arg, slash + 1);
        }
        if (error) {
            return error;
        }
    }
    error = parse_one_value(p, f, arg, at, &value);
    if (!error) {
        error = require(p, sf->prereq, target, at);
    }
    if (!error && mask != fdp__field(f)->max) {
        return add_loads(p, b, f, value & mask, mask, "set_field", at);
    }
    if (!error) {
        error = add_set_field(p, b, f, value, 0, at);
    }
    return error;
}

static int
parse_mod_action(struct parser *p, const char *name, char *arg,
                 const char *at, struct fdp__actions_builder *b)
{
    const struct fdp__mod_action *mod = NULL;
    fdp_u128 value;
    int error;

    for (size_t i = 0; i < fdp__n_mod_actions && !mod; i++) {
        if (!strcasecmp(name, fdp__mod_actions[i].name)) {
            mod = &fdp__mod_actions[i];
        }
    }
    if (!mod) {
        return parse_error(p, at, "unknown action \"%s\"", name);
    }
    enum fdp_field f = mod->field;
    if (!arg || !*arg) {
        return parse_error(p, at, "%s: missing argument", name);
    }
    if (fdp__field(f)->syntax == FDP__S_IPV4 && !parse_ipv4_strict(arg)) {
        return parse_error(p, at, "%s: \"%s\" is not an IPv4 address", name,
                           arg);
    }
    error = parse_one_value(p, f, arg, at, &value);
    if (!error) {
        error = require(p, fdp__field(f)->prereq, name, at);
    }
    if (!error) {
        error = add_set_field(p, b, f, value, mod->canonical ? FDP__ACT_MOD
                                                             : 0, at);
    }
    return error;
}

/* A table number as ovs-ofctl reads one in goto_table and resubmit:
 * decimal (leading zeros allowed, "0x5" refused), 0..254. */
static int
parse_table_number(struct parser *p, const char *action, const char *s,
                   const char *at, unsigned int *table)
{
    uint32_t v;
    int error = action_number_base(p, action, s, 10, 254, at, &v);

    *table = v;
    return error;
}

/* goto_table:N must be the flow's last action (the ordering checks in
 * parse_actions()) and go to a later table than the flow's, as OpenFlow
 * requires so that a pipeline cannot loop. */
static int
parse_goto_table(struct parser *p, const char *name, char *arg,
                 const char *at, struct fdp__actions_builder *b)
{
    unsigned int table;
    int error = parse_table_number(p, name, arg, at, &table);

    if (error) {
        return error;
    }
    if (table <= p->table_id) {
        return parse_error(p, at, "goto_table: table %u is not after the "
                           "flow's table %u", table, p->table_id);
    }
    fdp__actions_add(b, FDP_ACT_GOTO_TABLE, table);
    return 0;
}

/* The port of a resubmit: empty or in_port for the packet's own, a
 * reserved port's name, or a number below 0xff00 (decimal, as
 * ovs-ofctl's ports). */
static int
parse_resubmit_port(struct parser *p, const char *s, const char *at,
                    uint32_t *port)
{
    if (!*s || !strcasecmp(s, "in_port")) {
        *port = FDP_PORT_IN_PORT;
        return 0;
    }
    if (fdp__port_from_name(s, port)) {
        return 0;
    }
    int error = action_number_base(p, "resubmit", s, 10, 0xffff, at, port);
    if (!error && *port >= FDP_PORT_MAX) {
        return parse_error(p, at, "resubmit: port %s is reserved; use its "
                           "name", s);
    }
    return error;
}

/* resubmit:PORT, or resubmit(PORT,TABLE) with either part empty (not
 * both: that would be a no-op, which ovs-ofctl refuses too). */
static int
parse_resubmit(struct parser *p, const char *name UNUSED_ARG, char *arg,
               const char *at, struct fdp__actions_builder *b)
{
    unsigned int table = FDP__RESUBMIT_SAME_TABLE;
    uint32_t port;
    int error;

    if (!arg) {
        arg = (char *) "";
    }
    char *comma = strchr(arg, ',');
    if (comma) {
        *comma = '\0';
        char *table_text = comma + 1;
        if (strchr(table_text, ',')) {
            return parse_error(p, at, "resubmit: a third argument (\"%s\") "
                               "is not supported", strchr(table_text, ',')
                                                   + 1);
        }
        if (*table_text) {
            error = parse_table_number(p, "resubmit", table_text, at, &table);
            if (error) {
                return error;
            }
        }
    }
    error = parse_resubmit_port(p, arg, at, &port);
    if (error) {
        return error;
    }
    if (port == FDP_PORT_IN_PORT && table == FDP__RESUBMIT_SAME_TABLE) {
        return parse_error(p, at, "resubmit: needs a port or a table "
                           "(resubmit:PORT, resubmit(,TABLE))");
    }
    fdp__actions_add_resubmit(b, port, table);
    return 0;
}

/* A subfield "NAME[]", "NAME[a]", "NAME[a..b]" or "NAME" (all of it), as
 * mf_parse_subfield() reads one: NAME is an NXM or OXM name, or a field
 * name set_field takes (reg0, metadata, eth_src...). */
struct subfield {
    enum fdp_field field;
    unsigned int ofs, n_bits;
    enum fdp__prereq prereq;
    bool writable;
    const char *name;
};

static bool
parse_bit_number(const char *s, size_t len, unsigned int *v)
{
    if (!len || len > 3) {
        return false;
    }
    unsigned int x = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char) s[i])) {
            return false;
        }
        x = x * 10 + (unsigned int) (s[i] - '0');
    }
    *v = x;
    return true;
}

static int
parse_subfield(struct parser *p, const char *action, char *s,
               const char *at, struct subfield *sf)
{
    char *bracket = strchr(s, '[');
    unsigned int width;

    if (bracket) {
        *bracket = '\0';
    }
    const struct fdp__nxm_field *nf = fdp__nxm_field_find(s);
    const struct fdp__set_field_name *sfn = fdp__set_field_name_find(s);
    enum fdp_field f;
    if (nf) {
        sf->field = nf->field;
        sf->prereq = nf->prereq;
        sf->writable = nf->writable;
        width = nf->n_bits;
    } else if (sfn || (fdp_field_from_name(s, &f)
                       && is_pipeline_register(f))) {
        sf->field = sfn ? sfn->field : f;
        sf->prereq = sfn ? sfn->prereq : FDP__P_NONE;
        sf->writable = true;
        nf = fdp__nxm_field_for(sf->field, NULL, NULL);
        if (!nf) {
            return parse_error(p, at, "%s: field %s cannot be %s", action, s,
                               "read or written by bits");
        }
        width = nf->n_bits;
    } else {
        return parse_error(p, at, "%s: unknown field \"%s\"", action, s);
    }
    sf->name = s;
    sf->ofs = 0;
    sf->n_bits = width;
    if (!bracket) {
        return 0;
    }
    char *inner = bracket + 1;
    char *close = strchr(inner, ']');
    if (!close || close[1]) {
        *bracket = '[';
        return parse_error(p, at, "%s: %s: expected [] or [BIT] or "
                           "[START..END]", action, s);
    }
    if (close == inner) {
        *bracket = '[';
        return 0;
    }
    unsigned int lo, hi;
    char *dots = strstr(inner, "..");
    bool ok = dots ? parse_bit_number(inner, (size_t) (dots - inner), &lo)
                     && parse_bit_number(dots + 2,
                                         (size_t) (close - dots - 2), &hi)
                   : parse_bit_number(inner, (size_t) (close - inner), &lo);
    if (!dots) {
        hi = lo;
    }
    *bracket = '[';
    if (!ok) {
        return parse_error(p, at, "%s: %s: expected [] or [BIT] or "
                           "[START..END]", action, s);
    }
    if (lo > hi) {
        return parse_error(p, at, "%s: %s: starting bit %u is after ending "
                           "bit %u", action, s, lo, hi);
    }
    if (hi >= width) {
        return parse_error(p, at, "%s: %s: ending bit %u is not valid "
                           "because the field is only %u bits wide", action,
                           s, hi, width);
    }
    sf->ofs = lo;
    sf->n_bits = hi - lo + 1;
    return 0;
}

/* A subfield of a name wider than the key's field (NXM_OF_ARP_OP, 16
 * bits, over arp_op's 8, as Open vSwitch keeps the opcode in nw_proto's
 * byte).  A load ('shrink') may write "NAME[]" or a slice from bit 0,
 * meaning the key's bits, with a value that fits them.  Anything else
 * reaching above the key's bits is refused: a move would have to read
 * zeros or drop bits there, which its one record cannot say. */
static int
fit_key_width(struct parser *p, const char *action, struct subfield *sf,
              bool shrink, const char *at)
{
    unsigned int kw = fdp__field(sf->field)->n_bits;

    if (sf->ofs + sf->n_bits <= kw) {
        return 0;
    }
    if (shrink && sf->ofs == 0) {
        sf->n_bits = kw;
        return 0;
    }
    return parse_error(p, at, "%s: %s: bits %u..%u are not kept (the key "
                       "holds its low %u bits, as Open vSwitch does)",
                       action, sf->name, kw, sf->ofs + sf->n_bits - 1, kw);
}

/* Checks that subfield 'sf' may be read ('dst' false) or written by an
 * action of the flow being parsed. */
static int
check_subfield(struct parser *p, const char *action, const struct subfield *sf,
               bool dst, const char *at)
{
    if (dst && !sf->writable && is_ct_exec_field(sf->field)) {
        return ct_write_error(p, action, sf->name, at);
    }
    if (dst && !sf->writable) {
        return parse_error(p, at, "%s: %s is read-only", action, sf->name);
    }
    if (!(p->flags & FDP__PARSE_BUCKET)
        && !fdp__match_meets(p->match, sf->prereq)) {
        return parse_error(p, at, "%s: %s requires %s in the match", action,
                           sf->name, prereq_text(sf->prereq));
    }
    return 0;
}

/* Splits "A->B" at its arrow; false if there is none. */
static bool
split_arrow(char *arg, char **b)
{
    char *arrow = arg ? strstr(arg, "->") : NULL;

    if (!arrow) {
        return false;
    }
    *arrow = '\0';
    *b = arrow + 2;
    return true;
}

/* load:V->DST[a..b] and write_metadata:V[/M]: masked writes. */
static int
parse_set_masked(struct parser *p, const char *name, char *arg,
                 const char *at, struct fdp__actions_builder *b)
{
    fdp_u128 value, mask;
    bool overflow;
    char *dst;

    if (!strcasecmp(name, "write_metadata")) {
        char *slash = arg ? strchr(arg, '/') : NULL;
        mask = ~(uint64_t) 0;
        if (slash) {
            *slash = '\0';
        }
        if (!arg || !str_to_u128(arg, ~(uint64_t) 0, &value, &overflow)) {
            return parse_error(p, at, "write_metadata: \"%s\" is not a 64-bit "
                               "number", arg ? arg : "");
        }
        if (slash && (!str_to_u128(slash + 1, ~(uint64_t) 0, &mask, &overflow)
                      || !mask)) {
            return parse_error(p, at, "write_metadata: mask \"%s\" is not a "
                               "nonzero 64-bit number", slash + 1);
        }
        if (value & ~mask) {
            return parse_error(p, at, "write_metadata: value %s has bits "
                               "outside the mask %s", arg, slash + 1);
        }
        fdp__actions_add_set_masked(b, FDP_F_METADATA, (uint64_t) value,
                                    (uint64_t) mask,
                                    FDP__ACT_WRITE_METADATA);
        return 0;
    }

    /* load */
    struct subfield sf;
    if (!split_arrow(arg, &dst)) {
        return parse_error(p, at, "load: expected VALUE->FIELD[START..END]");
    }
    int error = parse_subfield(p, "load", dst, at, &sf);
    if (!error) {
        error = check_subfield(p, "load", &sf, true, at);
    }
    if (error) {
        return error;
    }
    if (!str_to_u128(arg, ~(fdp_u128) 0, &value, &overflow)) {
        return parse_error(p, at, "load: \"%s\" is not a number (of 128 "
                           "bits at most)", arg);
    }
    if (sf.n_bits < 128 && value >> sf.n_bits) {
        return parse_error(p, at, "load: value %s does not fit in %u bits",
                           arg, sf.n_bits);
    }
    error = fit_key_width(p, "load", &sf, true, at);
    if (!error && sf.n_bits < 128 && value >> sf.n_bits) {
        error = parse_error(p, at, "load: value %s does not fit in the %u "
                            "bits of %s the key keeps", arg, sf.n_bits,
                            sf.name);
    }
    if (error) {
        return error;
    }
    return add_loads(p, b, sf.field, value << sf.ofs,
                     fdp__ones(sf.n_bits) << sf.ofs, "load", at);
}

/* move:SRC[a..b]->DST[c..d]: both of the same width, up to 128 bits. */
static int
parse_move(struct parser *p, const char *name UNUSED_ARG, char *arg,
           const char *at, struct fdp__actions_builder *b)
{
    struct subfield src, dst;
    char *dst_text;

    if (!split_arrow(arg, &dst_text)) {
        return parse_error(p, at, "move: expected SRC[START..END]->"
                           "DST[START..END]");
    }
    int error = parse_subfield(p, "move", arg, at, &src);
    if (!error) {
        error = parse_subfield(p, "move", dst_text, at, &dst);
    }
    if (!error && src.n_bits != dst.n_bits) {
        error = parse_error(p, at, "move: the source is %u bits wide but the "
                            "destination %u", src.n_bits, dst.n_bits);
    }
    if (!error) {
        error = fit_key_width(p, "move", &src, false, at);
    }
    if (!error) {
        error = fit_key_width(p, "move", &dst, false, at);
    }
    if (!error) {
        error = check_subfield(p, "move", &src, false, at);
    }
    if (!error) {
        error = check_subfield(p, "move", &dst, true, at);
    }
    if (!error && fdp__actions_add_move(b, src.field, src.ofs, dst.field,
                                        dst.ofs, src.n_bits)) {
        error = parse_error(p, at, "move: cannot copy %s to %s", src.name,
                            dst.name);
    }
    return error;
}

/* conjunction(ID,K/N): ID a 32-bit number, K and N decimal, as
 * ovs-ofctl's "conjunction(%"SCNi32",%"SCNu8"/%"SCNu8")" reads them. */
static int
parse_conjunction(struct parser *p, const char *name UNUSED_ARG,
                  char *arg, const char *at, struct fdp__actions_builder *b)
{
    static const char syntax[] = "conjunction: the syntax is "
                                 "conjunction(ID,K/N)";
    char *comma = arg ? strchr(arg, ',') : NULL;
    char *slash = comma ? strchr(comma, '/') : NULL;
    fdp_u128 id, k, n;
    bool overflow;

    if (!slash) {
        return parse_error(p, at, syntax);
    }
    *comma = *slash = '\0';
    char *id_text = arg + strspn(arg, " ");
    char *k_text = comma + 1 + strspn(comma + 1, " ");
    if (!str_to_uint(id_text, 0, UINT32_MAX, &id, &overflow)
        || !str_to_uint(k_text, 10, 255, &k, &overflow)
        || !str_to_uint(slash + 1, 10, 255, &n, &overflow)) {
        return parse_error(p, at, overflow ? "conjunction: a number is out "
                           "of range (ID 0..4294967295, K and N 1..64)"
                           : syntax);
    }
    if (n < 2) {
        return parse_error(p, at, "conjunction: must have at least 2 "
                           "clauses");
    }
    if (n > 64) {
        return parse_error(p, at, "conjunction: must have at most 64 "
                           "clauses");
    }
    if (k < 1 || k > n) {
        return parse_error(p, at, "conjunction: clause %u is not in 1..%u",
                           (unsigned int) k, (unsigned int) n);
    }
    fdp__actions_add_conjunction(b, (uint32_t) id, (unsigned int) k,
                                 (unsigned int) n);
    return 0;
}

/* ---- ct and ct_clear ----
 *
 * ct(ARG,...) as ovs-ofctl reads it (parse_CT() and parse_NAT() in Open
 * vSwitch's lib/ofp-actions.c): keys commit, force, table=N, zone=N or
 * zone=SUBFIELD, nat or nat(...), exec(...), split at the commas and
 * spaces outside parentheses.  Where ovs-ofctl keeps the last of a
 * repeated key (zone=1,zone=2) or quietly drops what it cannot encode,
 * flowdp refuses, naming the key and its column. */

/* Splits the next item of the comma- or space-separated list at '*sp'
 * (parentheses nest) into its key and value ("key=value", "key:value" or
 * "key(value)"; NULL value for a bare key).  Returns false at the end. */
static bool
next_key_value(char **sp, char **keyp, char **valuep)
{
    char *s = *sp + strspn(*sp, ", \t\r\n");
    int depth = 0;

    if (!*s) {
        *sp = s;
        return false;
    }
    char *start = s;
    for (; *s && (depth || (*s != ',' && !isspace((unsigned char) *s)));
         s++) {
        depth += *s == '(' ? 1 : *s == ')' ? -1 : 0;
    }
    if (*s) {
        *s++ = '\0';
    }
    *sp = s;
    *keyp = start;
    *valuep = NULL;
    size_t n = strcspn(start, "=:(");
    if (start[n] == '(') {
        /* "key(value)"; without its ')' the whole item stays the key,
         * which the caller then refuses by name. */
        size_t len = strlen(start);
        if (start[len - 1] == ')') {
            start[len - 1] = '\0';
            start[n] = '\0';
            *valuep = start + n + 1;
        }
    } else if (start[n]) {
        start[n] = '\0';
        *valuep = start + n + 1;
    }
    return true;
}

/* A port of a nat range: 1..65535 in decimal (ovs-ofctl's "%hu"; it reads
 * 0 as "no port", which flowdp refuses rather than drops). */
static bool
parse_nat_port(const char *s, size_t len, uint16_t *port)
{
    char buf[8];
    fdp_u128 v;
    bool overflow;

    if (!len || len >= sizeof buf) {
        return false;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (!str_to_uint(buf, 10, 65535, &v, &overflow) || !v) {
        return false;
    }
    *port = (uint16_t) v;
    return true;
}

/* One address of a nat range, IPv4 or IPv6 (in brackets or not) of
 * 'len' bytes at 's'; sets '*ipv6' to its family. */
static bool
parse_nat_addr(const char *s, size_t len, bool *ipv6, fdp_u128 *addr)
{
    char buf[64];

    if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
        s++;
        len -= 2;
        if (len >= sizeof buf) {
            return false;
        }
        memcpy(buf, s, len);
        buf[len] = '\0';
        *ipv6 = true;
        return strchr(buf, ':') && parse_ipv6(buf, addr);
    }
    if (!len || len >= sizeof buf) {
        return false;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    *ipv6 = strchr(buf, ':') != NULL;
    return *ipv6 ? parse_ipv6(buf, addr) : parse_ipv4_strict(buf)
                                           && parse_ipv4(buf, addr);
}

/* src=/dst= of nat(): ADDR[-ADDR][:PORT[-PORT]], an IPv6 address in
 * brackets when a port follows (an unbracketed IPv6 "fe80::1:80" is all
 * address, as ovs-ofctl reads it). */
static int
parse_nat_range(struct parser *p, const char *key, const char *s,
                const char *at, struct fdp__ct_nat *nat)
{
    const char *port = NULL;
    size_t addr_len;

    if (!s || !*s) {
        return 0;               /* nat(src): no range. */
    }
    if (s[0] == '[') {
        /* [A]-[B]:P or [A]:P: the ports follow the last ']'. */
        const char *close = strrchr(s, ']');
        if (!close) {
            return parse_error(p, at, "ct: nat(%s=%s): missing ']'", key, s);
        }
        addr_len = (size_t) (close + 1 - s);
        if (close[1] == ':') {
            port = close + 2;
        } else if (close[1]) {
            return parse_error(p, at, "ct: nat(%s=%s): unexpected \"%s\" "
                               "after the addresses", key, s, close + 1);
        }
    } else if (strspn(s, "0123456789.") == strcspn(s, ":-")
               && memchr(s, '.', strcspn(s, ":-"))) {
        /* An IPv4 address first (Open vSwitch scans for one before
         * IPv6, so "::1.2.3.4" is IPv6): a port may follow its ':'. */
        const char *colon = strchr(s, ':');
        addr_len = colon ? (size_t) (colon - s) : strlen(s);
        port = colon ? colon + 1 : NULL;
    } else {
        addr_len = strlen(s);   /* IPv6 without brackets: no port. */
    }

    /* The addresses: A or A-B. */
    const char *dash = memchr(s, '-', addr_len);
    fdp_u128 lo, hi;
    bool v6_lo, v6_hi;
    size_t lo_len = dash ? (size_t) (dash - s) : addr_len;
    if (!parse_nat_addr(s, lo_len, &v6_lo, &lo)) {
        return parse_error(p, at, "ct: nat(%s=%s): \"%.*s\" is not an IPv4 "
                           "or IPv6 address", key, s, (int) lo_len, s);
    }
    hi = lo;
    v6_hi = v6_lo;
    if (dash && !parse_nat_addr(dash + 1, addr_len - lo_len - 1, &v6_hi,
                                &hi)) {
        return parse_error(p, at, "ct: nat(%s=%s): \"%.*s\" is not an IPv4 "
                           "or IPv6 address", key, s,
                           (int) (addr_len - lo_len - 1), dash + 1);
    }
    if (v6_lo != v6_hi) {
        return parse_error(p, at, "ct: nat(%s=%s): the range mixes IPv4 and "
                           "IPv6", key, s);
    }
    if (hi < lo) {
        return parse_error(p, at, "ct: nat(%s=%s): invalid nat range (the "
                           "last address is below the first)", key, s);
    }
    if (!lo) {
        /* Open vSwitch's encoding takes an all-zero address for "none"
         * and would lose it. */
        return parse_error(p, at, "ct: nat(%s=%s): %s is not a usable nat "
                           "address", key, s, v6_lo ? "::" : "0.0.0.0");
    }
    nat->flags |= FDP__NAT_ADDR | (v6_lo ? FDP__NAT_IPV6 : 0);
    nat->addr_min = fdp__to_value(lo);
    nat->addr_max = fdp__to_value(hi);

    if (port) {
        const char *pdash = strchr(port, '-');
        size_t plen = pdash ? (size_t) (pdash - port) : strlen(port);
        uint16_t pmin, pmax;
        if (!parse_nat_port(port, plen, &pmin)
            || (pdash && !parse_nat_port(pdash + 1, strlen(pdash + 1),
                                         &pmax))) {
            return parse_error(p, at, "ct: nat(%s=%s): \"%s\" is not a port "
                               "or port range (1..65535)", key, s, port);
        }
        if (!pdash) {
            pmax = pmin;
        }
        if (pmax < pmin) {
            return parse_error(p, at, "ct: nat(%s=%s): invalid nat range "
                               "(the last port is below the first)", key, s);
        }
        nat->flags |= FDP__NAT_PORT;
        nat->port_min = pmin;
        nat->port_max = pmax;
    }
    return 0;
}

/* nat or nat(src=...|dst=...[,persistent][,hash|random]). */
static int
parse_ct_nat(struct parser *p, char *arg, const char *at,
             struct fdp__ct_nat *nat)
{
    char *key, *value;

    memset(nat, 0, sizeof *nat);
    while (arg && next_key_value(&arg, &key, &value)) {
        int error = 0;
        if (!strcmp(key, "src") || !strcmp(key, "dst")) {
            if (nat->flags & (FDP__NAT_SRC | FDP__NAT_DST)) {
                return parse_error(p, key, "ct: nat: may only specify one "
                                   "of \"src\" or \"dst\", once");
            }
            nat->flags |= key[0] == 's' ? FDP__NAT_SRC : FDP__NAT_DST;
            error = parse_nat_range(p, key, value, key, nat);
        } else if (!strcmp(key, "persistent") && !value) {
            nat->flags |= FDP__NAT_PERSISTENT;
        } else if (!strcmp(key, "hash") && !value) {
            nat->flags |= FDP__NAT_HASH;
        } else if (!strcmp(key, "random") && !value) {
            nat->flags |= FDP__NAT_RANDOM;
        } else {
            return parse_error(p, key, "ct: nat: invalid key \"%s\" (src=, "
                               "dst=, persistent, hash, random)", key);
        }
        if (error) {
            return error;
        }
    }
    unsigned int extra = nat->flags & (FDP__NAT_PERSISTENT | FDP__NAT_HASH
                                       | FDP__NAT_RANDOM);
    if (extra && !(nat->flags & FDP__NAT_ADDR)) {
        return parse_error(p, at, "ct: nat: persistent, hash and random "
                           "need an address range (src=ADDR or dst=ADDR)");
    }
    if ((nat->flags & FDP__NAT_HASH) && (nat->flags & FDP__NAT_RANDOM)) {
        return parse_error(p, at, "ct: nat: both \"hash\" and \"random\" "
                           "are not allowed");
    }
    return 0;
}

/* One action of ct's exec(): set_field, load or move into ct_mark or
 * ct_label (Open vSwitch allows nothing else there). */
static int
parse_ct_exec_action(struct parser *p, char *name, char *arg,
                     const char *at, struct fdp__actions_builder *b)
{
    enum fdp_field f;
    char *dst;

    if (strcasecmp(name, "set_field") && strcasecmp(name, "load")
        && strcasecmp(name, "move")) {
        return parse_error(p, at, "ct: exec: ct action doesn't support "
                           "nested action %s (only set_field, load and "
                           "move to ct_mark or ct_label)", name);
    }
    if (!split_arrow(arg, &dst)) {
        return parse_error(p, at, "ct: exec: %s: expected SOURCE->FIELD",
                           name);
    }
    if (!strcasecmp(name, "set_field")) {
        if (!fdp_field_from_name(dst, &f) || !is_ct_exec_field(f)) {
            return parse_error(p, at, "ct: exec: ct action doesn't support "
                               "nested modification of %s (only ct_mark "
                               "and ct_label)", dst);
        }
        fdp_u128 value, mask = fdp__field(f)->max;
        char *slash = strchr(arg, '/');
        int error = 0;
        if (slash) {
            *slash = '\0';
            error = parse_mask(p, f, slash + 1, at, &mask);
            if (!error && !mask) {
                error = parse_error(p, at, "ct: exec: set_field: a zero mask "
                                    "writes nothing (\"%s/%s\")", arg,
                                    slash + 1);
            }
        }
        if (!error) {
            error = parse_one_value(p, f, arg, at, &value);
        }
        if (error) {
            return error;
        }
        fdp__actions_add_ct_write(b, f, value & mask, mask,
                                  mask == fdp__field(f)->max
                                  ? 0 : FDP__ACT_LOAD);
        return 0;
    }

    struct subfield d;
    int error = parse_subfield(p, name, dst, at, &d);
    if (error) {
        return error;
    }
    if (!is_ct_exec_field(d.field)) {
        return parse_error(p, at, "ct: exec: ct action doesn't support "
                           "nested modification of %s (only ct_mark and "
                           "ct_label)", d.name);
    }
    if (!strcasecmp(name, "load")) {
        fdp_u128 value;
        bool overflow;
        if (!str_to_u128(arg, fdp__ones(d.n_bits), &value, &overflow)) {
            return parse_error(p, at, overflow
                               ? "ct: exec: load: value %s does not fit in "
                                 "%u bits"
                               : "ct: exec: load: \"%s\" is not a number "
                                 "(of %u bits at most)", arg, d.n_bits);
        }
        fdp__actions_add_ct_write(b, d.field, value << d.ofs,
                                  fdp__ones(d.n_bits) << d.ofs,
                                  FDP__ACT_LOAD);
        return 0;
    }

    /* move */
    struct subfield src;
    error = parse_subfield(p, "move", arg, at, &src);
    if (!error && src.n_bits != d.n_bits) {
        error = parse_error(p, at, "move: the source is %u bits wide but the "
                            "destination %u", src.n_bits, d.n_bits);
    }
    if (!error) {
        error = check_subfield(p, "move", &src, false, at);
    }
    if (!error && fdp__actions_add_move(b, src.field, src.ofs, d.field,
                                        d.ofs, d.n_bits)) {
        error = parse_error(p, at, "move: cannot copy %s to %s", src.name,
                            d.name);
    }
    return error;
}

/* The zone: a 16-bit number (as str_to_u16: decimal, 0x hex, 0 octal), or
 * a 16-bit subfield of the key. */
static int
parse_ct_zone(struct parser *p, char *value, const char *at,
              enum fdp_field *field, unsigned int *zone)
{
    fdp_u128 v;
    bool overflow;

    if (!value || !*value) {
        return parse_error(p, at, "ct: zone: missing value");
    }
    if (str_to_uint(value, 0, UINT16_MAX, &v, &overflow)) {
        *field = FDP_N_FIELDS;
        *zone = (unsigned int) v;
        return 0;
    }
    if (overflow || isdigit((unsigned char) value[0])) {
        return parse_error(p, at, "ct: zone=%s: not a 16-bit number (0..65535) "
                           "or a 16-bit subfield", value);
    }

    struct subfield sf;
    int error = parse_subfield(p, "ct: zone", value, at, &sf);
    if (!error) {
        error = check_subfield(p, "ct: zone", &sf, false, at);
    }
    if (!error && sf.n_bits != 16) {
        error = parse_error(p, at, "ct: zone=%s: the zone subfield must be "
                            "16 bits wide (it is %u)", value, sf.n_bits);
    }
    if (!error) {
        *field = sf.field;
        *zone = sf.ofs;
    }
    return error;
}

static int
parse_ct_action(struct parser *p, const char *name UNUSED_ARG, char *arg,
                const char *at, struct fdp__actions_builder *b)
{
    struct fdp__actions_builder exec;
    struct fdp__ct_nat nat;
    enum fdp_field zone_field = FDP_N_FIELDS;
    unsigned int flags = 0, table = 0, zone = 0;
    const char *seen_zone = NULL, *seen_table = NULL, *seen_nat = NULL;
    const char *seen_exec = NULL;
    unsigned int n_exec = 0;
    char *key, *value;
    int error = 0;

    memset(&nat, 0, sizeof nat);
    fdp__actions_builder_init(&exec);
    while (!error && arg && next_key_value(&arg, &key, &value)) {
        const char **seen = NULL;
        if (!strcmp(key, "commit") && !value) {
            flags |= FDP__DPCT_COMMIT;
        } else if (!strcmp(key, "force") && !value) {
            flags |= FDP__DPCT_FORCE;
        } else if (!strcmp(key, "table")) {
            seen = &seen_table;
            if (!value || !*value) {
                error = parse_error(p, key, "ct: table: missing value");
            } else {
                error = parse_table_number(p, "ct: table", value, key,
                                           &table);
            }
            flags |= FDP__DPCT_RECIRC;
        } else if (!strcmp(key, "zone")) {
            seen = &seen_zone;
            error = parse_ct_zone(p, value, key, &zone_field, &zone);
        } else if (!strcmp(key, "nat")) {
            seen = &seen_nat;
            /* After exec() too, as ovs-ofctl takes it: the record keeps
             * where, for printing. */
            error = parse_ct_nat(p, value, key, &nat);
            nat.exec_pos = (uint8_t) n_exec;
            flags |= FDP__DPCT_NAT;
        } else if (!strcmp(key, "exec")) {
            seen_exec = key;
            char *ea, *ev;
            while (!error && value && next_key_value(&value, &ea, &ev)) {
                /* next_key_value() split "set_field:V->F" at its ':'. */
                error = parse_ct_exec_action(p, ea, ev, ea, &exec);
                n_exec += !error;
            }
        } else if (!strcmp(key, "alg")) {
            error = parse_error(p, key, "ct: alg=%s: connection tracking "
                                "helpers (alg=) are not supported",
                                value ? value : "");
        } else {
            error = parse_error(p, key, "ct: invalid argument to \"ct\" "
                                "action: `%s' (commit, force, table=, zone=, "
                                "nat, exec())", key);
        }
        if (!error && seen) {
            if (*seen) {
                error = parse_error(p, key, "ct: %s given twice (column %d)",
                                    key, col_of(p, *seen));
            }
            *seen = key;
        }
    }
    if (!error && (flags & FDP__DPCT_FORCE) && !(flags & FDP__DPCT_COMMIT)) {
        error = parse_error(p, at, "ct: \"force\" flag requires \"commit\" "
                            "flag");
    }
    if (!error && flags & FDP__DPCT_COMMIT
        && fdp__match_get_value(p->match, FDP_F_CT_STATE)
           & fdp__match_get_mask(p->match, FDP_F_CT_STATE) & FDP_CT_INV) {
        /* Open vSwitch's check_CT(): the tracker would refuse to commit
         * what it found invalid. */
        error = parse_error(p, at, "ct: commit is inconsistent with a match "
                            "on ct_state=+inv (an invalid packet cannot be "
                            "committed)");
    }
    if (!error && exec.n_words && !(flags & FDP__DPCT_COMMIT)) {
        error = parse_error(p, seen_exec, "ct: exec() requires \"commit\" "
                            "(ct_mark and ct_label are set on a committed "
                            "connection)");
    }
    if (!error && (nat.flags & (FDP__NAT_SRC | FDP__NAT_DST))
        && !(flags & FDP__DPCT_COMMIT)) {
        error = parse_error(p, seen_nat, "ct: nat(%s) requires \"commit\" "
                            "(a translation is set up when a connection is "
                            "committed; plain \"nat\" applies an existing "
                            "one)", nat.flags & FDP__NAT_SRC ? "src" : "dst");
    }
    if (!error && nat.flags & FDP__NAT_ADDR) {
        error = require(p, nat.flags & FDP__NAT_IPV6 ? FDP__P_IPV6
                                                     : FDP__P_IPV4,
                        nat.flags & FDP__NAT_IPV6
                        ? "ct: nat with IPv6 addresses"
                        : "ct: nat with IPv4 addresses", seen_nat);
    }
    if (!error && exec.error) {
        error = ENOMEM;
    }
    if (!error && fdp__actions_add_ct(b, flags, table, zone_field, zone,
                                      &nat, exec.words, exec.n_words)) {
        error = parse_error(p, at, "ct: too many exec() actions (a ct action "
                            "takes at most 255 words)");
    }
    fdp__actions_builder_destroy(&exec);
    return error;
}

static int
parse_ct_clear(struct parser *p, const char *name, char *arg,
               const char *at, struct fdp__actions_builder *b)
{
    int error = no_argument(p, name, arg, at);

    if (!error) {
        fdp__actions_add(b, FDP_ACT_CT_CLEAR, 0);
    }
    return error;
}

/* ---- The stack, output:FIELD, note, queues, clone, controller ----
 *
 * As ovs-ofctl reads them (Open vSwitch's parse_STACK_PUSH(),
 * parse_OUTPUT(), parse_NOTE(), parse_ENQUEUE(), parse_SET_QUEUE(),
 * parse_CLONE(), parse_CONTROLLER()); lib/other-actions.h says what
 * each does. */

/* push:FIELD[a..b] and pop:FIELD[a..b]. */
static int
parse_stack(struct parser *p, enum fdp_action_type type, const char *name,
            char *arg, const char *at, struct fdp__actions_builder *b)
{
    struct subfield sf;

    if (!arg || !*arg) {
        return parse_error(p, at, "%s: expected FIELD[START..END]", name);
    }
    int error = parse_subfield(p, name, arg, at, &sf);
    if (!error && sf.n_bits > 64) {
        /* load and move take 128 bits now; a stack entry is one word. */
        error = parse_error(p, at, "%s: %s: %u bits is more than one %s "
                            "takes (64); split it in two", name, sf.name,
                            sf.n_bits, name);
    }
    if (!error) {
        error = check_subfield(p, name, &sf, type == FDP_ACT_STACK_POP, at);
    }
    if (!error && fdp__actions_add_subfield(b, type, sf.field, sf.ofs,
                                            sf.n_bits)) {
        error = parse_error(p, at, "%s: cannot use %s", name, sf.name);
    }
    return error;
}

static int
parse_stack_push(struct parser *p, const char *name, char *arg,
                 const char *at, struct fdp__actions_builder *b)
{
    return parse_stack(p, FDP_ACT_STACK_PUSH, name, arg, at, b);
}

static int
parse_stack_pop(struct parser *p, const char *name, char *arg,
                const char *at, struct fdp__actions_builder *b)
{
    return parse_stack(p, FDP_ACT_STACK_POP, name, arg, at, b);
}

/* output:FIELD[a..b]: the port is read from the subfield when the action
 * runs. */
static int
parse_output_subfield(struct parser *p, char *arg, const char *at,
                      struct fdp__actions_builder *b)
{
    struct subfield sf;
    const char *bracket = strchr(arg, '[');

    /* ovs-ofctl tries a port name first, then a subfield; text that is
     * neither is an unknown port (LOCAL, NORMAL... are ports flowdp does
     * not have yet: parse_output_port() names them). */
    if (!bracket && !fdp__nxm_field_find(arg)
        && !fdp__set_field_name_find(arg)) {
        enum fdp_field f;
        if (!fdp_field_from_name(arg, &f) || !is_pipeline_register(f)) {
            return parse_error(p, at, "output: port %s is not supported (use "
                               "a port number, IN_PORT, CONTROLLER or a "
                               "field such as NXM_NX_REG1[])", arg);
        }
    }
    int error = parse_subfield(p, "output", arg, at, &sf);
    if (!error) {
        error = check_subfield(p, "output", &sf, false, at);
    }
    if (!error && fdp__actions_add_subfield(b, FDP_ACT_OUTPUT_REG, sf.field,
                                            sf.ofs, sf.n_bits)) {
        error = parse_error(p, at, "output: cannot read a port from %s",
                            sf.name);
    }
    return error;
}

/* output_reg:FIELD[a..b], Open vSwitch's name for the same action. */
static int
parse_output_reg(struct parser *p, const char *name, char *arg,
                 const char *at, struct fdp__actions_builder *b)
{
    if (!arg || !*arg) {
        return parse_error(p, at, "%s: expected FIELD[START..END]", name);
    }
    return parse_output_port(p, arg, at, b);
}

/* Hex bytes as Open vSwitch's ofpbuf_put_hex() reads them: pairs of hex
 * digits, with spaces and dots anywhere between pairs.  Returns the
 * number of bytes, or -1 (and '*bad' the offending text) if a pair is
 * not two hex digits or there are more than 'max'. */
static long
parse_hex_bytes(const char *s, uint8_t *out, size_t max, const char **bad)
{
    size_t n = 0;

    for (;;) {
        s += strspn(s, " .\t\r\n");
        if (!*s) {
            return (long) n;
        }
        if (!isxdigit((unsigned char) s[0]) || !isxdigit((unsigned char) s[1])
            || n >= max) {
            *bad = s;
            return -1;
        }
        char pair[3] = { s[0], s[1], '\0' };
        out[n++] = (uint8_t) strtoul(pair, NULL, 16);
        s += 2;
    }
}

/* The most note bytes a record holds (255 words, one the header). */
#define MAX_NOTE_BYTES (254 * 8)

/* note:HEX.  Open vSwitch keeps a note in an action padded to a multiple
 * of 8 bytes with its 10-byte header, so that what it prints back has
 * zeros at the end (note:01 is note:01.00.00.00.00.00): the parser pads
 * the same way, and the formatter prints what it kept. */
static int
parse_note(struct parser *p, const char *name UNUSED_ARG, char *arg,
           const char *at, struct fdp__actions_builder *b)
{
    uint8_t bytes[MAX_NOTE_BYTES];
    const char *bad = NULL;
    long n = parse_hex_bytes(arg ? arg : "", bytes, sizeof bytes, &bad);

    if (n < 0) {
        if (isxdigit((unsigned char) bad[0])
            && isxdigit((unsigned char) bad[1])) {
            return parse_error(p, at, "note: longer than %d bytes",
                               MAX_NOTE_BYTES - 6);
        }
        return parse_error(p, at, "note: bad hex digit in \"%s\" (column %d)",
                           arg, col_of(p, bad));
    }
    size_t padded = (((size_t) n + 10 + 7) / 8) * 8 - 10;
    if (padded > MAX_NOTE_BYTES) {
        return parse_error(p, at, "note: longer than %d bytes",
                           MAX_NOTE_BYTES - 6);
    }
    memset(bytes + n, 0, padded - (size_t) n);
    if (fdp__actions_add_note(b, bytes, padded)) {
        return parse_error(p, at, "note: longer than %d bytes",
                           MAX_NOTE_BYTES - 6);
    }
    return 0;
}

/* set_queue:Q, and enqueue:PORT:Q or enqueue(PORT,Q), which ovs-ofctl -O
 * OpenFlow13 turns into set_queue:Q,output:PORT,pop_queue. */
static int
parse_set_queue(struct parser *p, const char *name, char *arg,
                const char *at, struct fdp__actions_builder *b)
{
    uint32_t queue;

    if (strcasecmp(name, "enqueue")) {
        if (!arg) {
            return parse_error(p, at, "%s: missing queue", name);
        }
        int error = action_number(p, name, arg, UINT32_MAX, at, &queue);
        if (!error) {
            fdp__actions_add(b, FDP_ACT_SET_QUEUE, queue);
        }
        return error;
    }

    char *sep = arg ? arg + strcspn(arg, ":q,") : NULL;
    if (!sep || !*sep || sep == arg || !sep[1]) {
        return parse_error(p, at, "enqueue: the syntax is "
                           "enqueue:PORT:QUEUE or enqueue(PORT,QUEUE)");
    }
    *sep = '\0';
    int error = action_number(p, "enqueue", sep + 1, UINT32_MAX, at, &queue);
    if (!error) {
        fdp__actions_add(b, FDP_ACT_SET_QUEUE, queue);
        uint32_t n_words = b->n_words;
        error = parse_output_port(p, arg, at, b);
        if (!error && !b->error
            && ((const struct fdp__action *) &b->words[n_words])->type
               == FDP_ACT_OUTPUT_REG) {
            error = parse_error(p, at, "enqueue: %s: enqueue to unknown "
                                "port", arg);
        }
        fdp__actions_add(b, FDP_ACT_POP_QUEUE, 0);
    }
    *sep = ':';
    return error;
}

static int
parse_pop_queue(struct parser *p, const char *name, char *arg,
                const char *at, struct fdp__actions_builder *b)
{
    int error = no_argument(p, name, arg, at);

    if (!error) {
        fdp__actions_add(b, FDP_ACT_POP_QUEUE, 0);
    }
    return error;
}

static int parse_actions(struct parser *p, char *s, struct fdp_actions **);

/* Open vSwitch's MAX_OFPACT_PARSE_DEPTH: how deep clone() may nest. */
#define MAX_NEST 100

/* clone(ACTIONS). */
static int
parse_clone(struct parser *p, const char *name UNUSED_ARG, char *arg,
            const char *at, struct fdp__actions_builder *b)
{
    struct fdp_actions *nested = NULL;

    if (p->nest >= MAX_NEST) {
        return parse_error(p, at, "clone: nested more than %d deep",
                           MAX_NEST);
    }
    p->nest++;
    int error = parse_actions(p, arg ? arg : (char *) "", &nested);
    p->nest--;
    if (error) {
        return error;
    }
    if (fdp__actions_add_clone(b, nested->words, nested->n_words)) {
        error = parse_error(p, at, "clone: its actions take more than %d "
                            "bytes", 254 * 8);
    }
    fdp_actions_destroy(nested);
    return error;
}

/* What may not stand inside clone(): the instructions (goto_table,
 * write_metadata), as ovs-ofctl says, and what Open vSwitch runs in a
 * datapath clone, which flowdp does not have yet (lib/other-actions.h). */
static int
check_nested(struct parser *p, const struct fdp__action *a, const char *at)
{
    if (!p->nest) {
        return 0;
    }
    if (a->type == FDP_ACT_GOTO_TABLE) {
        return parse_error(p, at, "goto_table instruction not allowed here "
                           "(inside clone())");
    }
    if (a->type == FDP_ACT_SET_MASKED && a->flags & FDP__ACT_WRITE_METADATA) {
        return parse_error(p, at, "write_metadata instruction not allowed "
                           "here (inside clone())");
    }
    if (a->type == FDP_ACT_CT) {
        return parse_error(p, at, "ct inside clone(): not supported yet");
    }
    if (a->type == FDP_ACT_CONJUNCTION) {
        return parse_error(p, at, "conjunction inside clone(): not "
                           "supported (it would never run)");
    }
    return 0;
}

/* controller, controller:N, controller(N) and controller(KEY=VALUE,...)
 * with keys reason, max_len, id, userdata, pause and meter_id. */
static int
parse_controller(struct parser *p, const char *name UNUSED_ARG,
                 char *arg, const char *at, struct fdp__actions_builder *b)
{
    struct fdp__controller c = { .max_len = UINT16_MAX,
                                 .reason = FDP__CTL_ACTION };
    uint8_t userdata[MAX_NOTE_BYTES];
    uint32_t v;
    int error = 0;

    if (arg && *arg && strspn(arg, "0123456789") == strlen(arg)) {
        error = action_number(p, "controller", arg, UINT16_MAX, at, &v);
        c.max_len = (uint16_t) v;
    } else if (arg) {
        char *key, *value;
        char *sp = arg;
        while (!error && next_key_value(&sp, &key, &value)) {
            if (!strcmp(key, "pause")) {
                c.pause = true;
            } else if (!value) {
                error = parse_error(p, key, "controller: unknown key \"%s\" "
                                    "(reason, max_len, id, userdata, pause, "
                                    "meter_id)", key);
            } else if (!strcmp(key, "reason")) {
                enum fdp__ctl_reason r;
                if (!fdp__ctl_reason_from_name(value, &r)) {
                    error = parse_error(p, value, "controller: unknown "
                                        "reason \"%s\"", value);
                }
                c.reason = (uint8_t) r;
            } else if (!strcmp(key, "max_len")) {
                error = action_number(p, "controller max_len", value,
                                      UINT16_MAX, value, &v);
                c.max_len = (uint16_t) v;
            } else if (!strcmp(key, "id")) {
                error = action_number(p, "controller id", value, UINT16_MAX,
                                      value, &v);
                c.id = (uint16_t) v;
            } else if (!strcmp(key, "meter_id")) {
                error = action_number(p, "controller meter_id", value,
                                      UINT32_MAX, value, &c.meter_id);
            } else if (!strcmp(key, "userdata")) {
                const char *bad = NULL;
                long n = parse_hex_bytes(value, userdata,
                                         MAX_NOTE_BYTES - 16, &bad);
                if (n < 0) {
                    error = parse_error(p, value, "controller: bad hex digit "
                                        "in userdata (column %d), or more "
                                        "than %d bytes", col_of(p, bad),
                                        MAX_NOTE_BYTES - 16);
                }
                c.userdata = userdata;
                c.userdata_size = n < 0 ? 0 : (size_t) n;
            } else {
                error = parse_error(p, key, "controller: unknown key \"%s\" "
                                    "(reason, max_len, id, userdata, pause, "
                                    "meter_id)", key);
            }
        }
    }
    if (!error && fdp__actions_add_controller(b, &c)) {
        error = parse_error(p, at, "controller: arguments too long");
    }
    return error;
}

/* The actions ovs-ofctl knows that flowdp does not run yet (Open vSwitch
 * 3.1's action table, OFPACTS in include/openvswitch/ofp-actions.h, and
 * the other names ofpacts_parse__() takes).  A name that gets an
 * implementation moves to action_names, which parse_action() looks in
 * first. */
static const char *const unsupported_actions[] = {
    "bundle", "bundle_load", "set_mpls_label", "set_mpls_tc",
    "set_mpls_ttl", "dec_mpls_ttl", "push_mpls", "pop_mpls", "dec_nsh_ttl",
    "delete_field", "encap", "decap",
    "multipath", "exit", "sample", "unroll_xlate",
    "nat", "output_trunc", "debug_recirc", "debug_slow",
    "clear_actions", "write_actions", "set_vlan_vid",
    "set_vlan_pcp", "set_nw_ttl",
};

static bool
is_unsupported_action(const char *name)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(unsupported_actions); i++) {
        if (!strcasecmp(name, unsupported_actions[i])) {
            return true;
        }
    }
    return false;
}

/* group:N, N a group id (0..0xffffff00, as ovs-ofctl's str_to_u32()
 * and OpenFlow's OFPG_MAX).  Whether the group exists is the pipeline's
 * question, asked when the flow is added. */
static int
parse_group(struct parser *p, const char *name, char *arg, const char *at,
            struct fdp__actions_builder *b)
{
    uint32_t id;

    if (!arg || !*arg) {
        return parse_error(p, at, "%s: needs a group id", name);
    }
    int error = action_number_base(p, name, arg, 10, FDP_GROUP_MAX, at, &id);
    if (!error) {
        fdp__actions_add(b, FDP_ACT_GROUP, id);
    }
    return error;
}

/* meter:N, the meter instruction of OpenFlow 1.3: N is a meter id,
 * 1..0xffff0000 (OFPM13_MAX), read as ovs-ofctl reads it (base 0).  Where
 * it may stand is check_order()'s. */
static int
parse_meter(struct parser *p, const char *name, char *arg, const char *at,
            struct fdp__actions_builder *b)
{
    uint32_t id;
    int error = action_number(p, name, arg, UINT32_MAX, at, &id);

    if (error) {
        return error;
    }
    if (!id || id > FDP_METER_MAX_ID) {
        return parse_error(p, at, "%s: %s is not a meter id (1 to %u)",
                           name, arg, FDP_METER_MAX_ID);
    }
    fdp__actions_add(b, FDP_ACT_METER, id);
    return 0;
}

/* ---- learn and fin_timeout (lib/learn.c) ---- */

static bool
learn_parse_value(enum fdp_field f, const char *s, fdp_u128 *value)
{
    char *msg = NULL;
    struct parser p = { .line = s, .buf = (char *) s, .errorp = &msg };
    int error = parse_one_value(&p, f, s, s, value);

    free(msg);
    return !error;
}

static int
parse_learn(struct parser *p, const char *name UNUSED_ARG, char *arg,
            const char *at, struct fdp__actions_builder *b)
{
    struct fdp__learn_parse_env env = {
        .match = p->match, .parse_value = learn_parse_value,
    };
    char *msg;
    int error = fdp__learn_parse(arg, &env, b, &msg);

    if (error) {
        error = parse_error(p, at, "learn: %s", msg ? msg : "out of memory");
    }
    free(msg);
    return error;
}

static int
parse_fin_timeout(struct parser *p, const char *name UNUSED_ARG, char *arg,
                  const char *at, struct fdp__actions_builder *b)
{
    char *msg;
    int error = fdp__fin_timeout_parse(arg, b, &msg);

    if (error) {
        error = parse_error(p, at, "%s", msg ? msg : "out of memory");
    }
    free(msg);
    return error;
}

/* NORMAL, FLOOD, ALL or LOCAL, written as an action of its own.
 * ovs-ofctl ignores an argument to these ("normal:1" is NORMAL), and so
 * does flowdp, so that what one accepts the other does. */
static int
parse_reserved(struct parser *p UNUSED_ARG, const char *name,
               char *arg UNUSED_ARG, const char *at UNUSED_ARG,
               struct fdp__actions_builder *b)
{
    uint32_t port = 0;

    fdp__port_from_name(name, &port);
    fdp__actions_add(b, FDP_ACT_RESERVED, port);
    return 0;
}

/* check_pkt_larger(N)->DST[b], 'arg' all after the '(': N a 16-bit
 * length, DST[b] one writable bit, as ovs-ofctl's
 * parse_CHECK_PKT_LARGER() reads them. */
static int
parse_check_pkt_larger(struct parser *p, const char *name UNUSED_ARG,
                       char *arg, const char *at,
                       struct fdp__actions_builder *b)
{
    static const char syntax[] = "check_pkt_larger: the syntax is "
                                 "check_pkt_larger(LENGTH)->FIELD[BIT]";
    char *close = arg ? strchr(arg, ')') : NULL;
    fdp_u128 len;
    bool overflow;

    if (!close || strncmp(close + 1, "->", 2)) {
        return parse_error(p, at, "%s", syntax);
    }
    *close = '\0';
    bool ok = str_to_u128(arg, UINT16_MAX, &len, &overflow);
    *close = ')';
    if (!ok) {
        return parse_error(p, at, "check_pkt_larger: \"%.*s\" is not a "
                           "length (0 to 65535)", (int) (close - arg), arg);
    }

    struct subfield sf;
    int error = parse_subfield(p, "check_pkt_larger", close + 3, at, &sf);
    if (!error && sf.n_bits != 1) {
        error = parse_error(p, at, "check_pkt_larger: %s: only a 1-bit "
                            "destination is allowed", sf.name);
    }
    if (!error) {
        error = check_subfield(p, "check_pkt_larger", &sf, true, at);
    }
    if (!error && fdp__actions_add_check_pkt_larger(b, (uint16_t) len,
                                                    sf.field, sf.ofs)) {
        error = parse_error(p, at, "check_pkt_larger: %s: not a bit of its "
                            "field", sf.name);
    }
    return error;
}

#define PARSE_FN(ID, FN, PREREQ) [FDP_ACT_##ID] = parse_##FN,
static parse_action_fn *const parse_fns[] = {
    FDP__ACTION_KINDS(PARSE_FN)
};
#undef PARSE_FN
static_assert(sizeof parse_fns / sizeof parse_fns[0] == FDP_N_ACTION_TYPES,
              "every action kind has a parser");

/* The spellings of the actions, each with its kind.  The mod_xxx names
 * (fdp__mod_actions) are set_field's too, found by parse_set_field(). */
static const struct {
    const char *name;
    enum fdp_action_type kind;
} action_names[] = {
    { "output", FDP_ACT_OUTPUT },
    { "in_port", FDP_ACT_IN_PORT },
    { "controller", FDP_ACT_CONTROLLER },
    { "mod_vlan_vid", FDP_ACT_SET_VLAN_VID },
    { "mod_vlan_pcp", FDP_ACT_SET_VLAN_PCP },
    { "strip_vlan", FDP_ACT_STRIP_VLAN },
    { "pop_vlan", FDP_ACT_STRIP_VLAN },     /* OpenFlow 1.1's name. */
    { "push_vlan", FDP_ACT_PUSH_VLAN },
    { "set_field", FDP_ACT_SET_FIELD },
    { "dec_ttl", FDP_ACT_DEC_TTL },
    { "goto_table", FDP_ACT_GOTO_TABLE },
    { "resubmit", FDP_ACT_RESUBMIT },
    { "load", FDP_ACT_SET_MASKED },
    { "write_metadata", FDP_ACT_SET_MASKED },
    { "move", FDP_ACT_MOVE },
    { "conjunction", FDP_ACT_CONJUNCTION },
    { "ct", FDP_ACT_CT },
    { "ct_clear", FDP_ACT_CT_CLEAR },
    { "group", FDP_ACT_GROUP },
    { "push", FDP_ACT_STACK_PUSH },
    { "pop", FDP_ACT_STACK_POP },
    { "output_reg", FDP_ACT_OUTPUT_REG },
    { "note", FDP_ACT_NOTE },
    { "set_queue", FDP_ACT_SET_QUEUE },
    { "enqueue", FDP_ACT_SET_QUEUE },
    { "pop_queue", FDP_ACT_POP_QUEUE },
    { "clone", FDP_ACT_CLONE },
    { "meter", FDP_ACT_METER },
    { "learn", FDP_ACT_LEARN },
    { "fin_timeout", FDP_ACT_FIN_TIMEOUT },
    { "normal", FDP_ACT_RESERVED },
    { "flood", FDP_ACT_RESERVED },
    { "all", FDP_ACT_RESERVED },
    { "local", FDP_ACT_RESERVED },
    { "check_pkt_larger", FDP_ACT_CHECK_PKT_LARGER },
};

/* Parses one action 'name[:arg]' at 'at'. */
static int
parse_action(struct parser *p, char *name, char *arg, const char *at,
             struct fdp__actions_builder *b)
{
    if (isdigit((unsigned char) name[0]) && !arg) {
        return parse_output(p, "output", name, at, b);
    }
    for (size_t i = 0; i < FDP_ARRAY_SIZE(action_names); i++) {
        if (!strcasecmp(name, action_names[i].name)) {
            return parse_fns[action_names[i].kind](p, name, arg, at, b);
        }
    }
    if (is_unsupported_action(name)) {
        return parse_error(p, at, "%s: not supported yet", name);
    }
    return parse_set_field(p, name, arg, at, b);
}

/* Splits the action text 'start' into its name (left in 'start') and its
 * argument, written "name:arg" or, for the parenthesised forms ovs-ofctl
 * has for these actions, "dec_ttl()", "controller(...)", "clone(...)",
 * "enqueue(PORT,Q)", "resubmit(PORT,TABLE)", "conjunction(ID,K/N)" and
 * ct(...), and for the actions flowdp does not support yet (so that the
 * message names them).  Other parenthesised arguments (dec_ttl(1)) ask for
 * more than flowdp's actions do, so they are refused. */
static int
split_action(struct parser *p, char *start, char **argp)
{
    char *paren = strchr(start, '(');
    char *colon = strchr(start, ':');

    if (colon && (!paren || colon < paren)) {
        *colon = '\0';
        *argp = colon + 1;
        return 0;
    }
    if (!paren) {
        *argp = NULL;
        return 0;
    }

    /* check_pkt_larger(N)->F does not end in ')': its parser takes all
     * after the '('.  A name flowdp does not run yet is refused by name,
     * whatever its arguments look like, and so is
     * output(port=...,max_len=...), Open vSwitch's output_trunc. */
    *paren = '\0';
    if (!strcasecmp(start, "check_pkt_larger")) {
        *argp = paren + 1;
        return 0;
    }
    if (is_unsupported_action(start)) {
        *argp = NULL;
        return 0;
    }
    if (!strcasecmp(start, "output")) {
        return parse_error(p, start, "output(port=...,max_len=...): "
                           "not supported yet");
    }
    *paren = '(';

    size_t len = strlen(paren);
    if (paren[len - 1] != ')') {
        return parse_error(p, start, "action \"%s\": missing ')'", start);
    }
    paren[len - 1] = '\0';
    *paren = '\0';
    char *inner = paren + 1;
    if (!strcasecmp(start, "resubmit") || !strcasecmp(start, "conjunction")
        || !strcasecmp(start, "ct") || !strcasecmp(start, "clone")
        || !strcasecmp(start, "controller") || !strcasecmp(start, "enqueue")
        || !strcasecmp(start, "learn") || !strcasecmp(start, "fin_timeout")
        || is_unsupported_action(start)) {
        *argp = *inner ? inner : NULL;
        return 0;
    }
    if (!*inner) {
        *argp = NULL;
        return 0;
    }
    *paren = '(';
    paren[len - 1] = ')';
    return parse_error(p, start, "action \"%s\": arguments in parentheses "
                       "are not supported", start);
}

/* The generic check of the action just parsed (named 'name', at 'name')
 * against the match, as fdp__actions_validate() makes it for any list.
 * parse_action() has checked the name's own prerequisites, which can be
 * narrower (set_field:80->udp_src needs udp), so this only fires if the
 * two disagree: it keeps the parser and the library honest together. */
static int
check_action(struct parser *p, const struct fdp__action *a, const char *name)
{
    enum fdp__prereq pr = fdp__action_prereq(a);

    return require(p, pr, name, name);
}

/* Where an action may stand, as OpenFlow 1.1+ instructions order them and
 * ovs-ofctl checks for all protocols: the actions applied at once first,
 * then at most one write_metadata, then at most one goto_table; and
 * conjunction actions only among themselves (a flow that is a clause of a
 * conjunctive match does nothing else). */
struct action_order {
    const char *write_metadata;     /* The write_metadata seen, or NULL. */
    const char *goto_table;         /* The goto_table seen, or NULL. */
    const char *conjunction;        /* The first conjunction, or NULL. */
    const char *other;              /* The first other action, or NULL. */
    const char *meter;              /* The meter seen, or NULL. */
};

static int
check_order(struct parser *p, const struct fdp__action *a, const char *at,
            struct action_order *o)
{
    bool is_wm = a->type == FDP_ACT_SET_MASKED
                 && (a->flags & FDP__ACT_WRITE_METADATA);
    bool is_goto = a->type == FDP_ACT_GOTO_TABLE;
    bool is_conj = a->type == FDP_ACT_CONJUNCTION;

    if (o->goto_table) {
        return parse_error(p, at, "%s: goto_table (column %d) must be the "
                           "last action", at, col_of(p, o->goto_table));
    }
    /* A meter is OpenFlow 1.3's first instruction: once, before all. */
    if (a->type == FDP_ACT_METER && o->meter) {
        return parse_error(p, at, "%s: a meter is given already (column "
                           "%d)", at, col_of(p, o->meter));
    }
    if (a->type == FDP_ACT_METER && (o->other || o->conjunction)) {
        return parse_error(p, at, "%s: the meter instruction must come "
                           "before every action (column %d)", at,
                           col_of(p, o->other ? o->other : o->conjunction));
    }
    if (a->type == FDP_ACT_METER) {
        o->meter = at;
    }
    if (o->write_metadata && is_wm) {
        return parse_error(p, at, "write_metadata: given twice (column %d)",
                           col_of(p, o->write_metadata));
    }
    if (o->write_metadata && !is_goto) {
        return parse_error(p, at, "%s: write_metadata (column %d) must come "
                           "after every action but goto_table", at,
                           col_of(p, o->write_metadata));
    }
    if (is_conj ? o->other != NULL : o->conjunction != NULL) {
        return parse_error(p, at, "%s: conjunction actions may not be mixed "
                           "with other actions (column %d)", at,
                           col_of(p, is_conj ? o->other : o->conjunction));
    }
    if (is_wm) {
        o->write_metadata = at;
    } else if (is_goto) {
        o->goto_table = at;
    }
    if (is_conj) {
        o->conjunction = o->conjunction ? o->conjunction : at;
    } else {
        o->other = o->other ? o->other : at;
    }
    return 0;
}

static int
parse_actions(struct parser *p, char *s, struct fdp_actions **actsp)
{
    struct fdp__actions_builder b;
    struct action_order order;
    bool drop = false;
    const char *drop_at = NULL;
    int error = 0;

    memset(&order, 0, sizeof order);
    fdp__actions_builder_init(&b);
    while (!error) {
        s += strspn(s, " \t\r\n");
        if (!*s) {
            break;
        }
        char *start = s;
        int depth = 0;
        for (; *s && (depth || (*s != ',' && !isspace((unsigned char) *s)));
             s++) {
            depth += *s == '(' ? 1 : *s == ')' ? -1 : 0;
        }
        char *end = s;
        s += strspn(s, " \t\r\n");
        /* ovs-ofctl skips empty actions: "drop," and "1,,2" are fine. */
        if (*s == ',') {
            s++;
        }
        *end = '\0';
        if (start == end) {
            continue;
        }

        if (!strcasecmp(start, "drop")) {
            drop = true;
            drop_at = start;
            continue;
        }
        char *arg = NULL;
        uint32_t n_words = b.n_words;
        error = split_action(p, start, &arg);
        if (!error) {
            error = parse_action(p, start, arg, start, &b);
        }
        if (!error && !b.error && b.n_words > n_words) {
            const struct fdp__action *a
                = (const struct fdp__action *) &b.words[n_words];
            error = check_action(p, a, start);
            if (!error) {
                error = check_order(p, a, start, &order);
            }
            if (!error) {
                error = check_nested(p, a, start);
            }
        }
    }
    if (!error && drop && b.n_actions) {
        error = parse_error(p, drop_at, "\"drop\" must not be accompanied "
                            "by any other action");
    }
    if (error) {
        fdp__actions_builder_destroy(&b);
        return error;
    }
    *actsp = fdp__actions_finish(&b);
    return *actsp ? 0 : ENOMEM;
}

/* ---------------------------------------------------------------------- */
/* Flows.                                                                  */

/* Finds "actions=" at the start of a token, or NULL. */
static char *
find_actions(char *s)
{
    for (char *a = strstr(s, "actions="); a; a = strstr(a + 1, "actions=")) {
        if (a == s || strchr(", \t\r\n", a[-1])) {
            return a;
        }
    }
    return NULL;
}

static int
parse_match_tokens(struct parser *p, char *s, struct fdp_flow_spec *flow)
{
    struct attr_state st;

    memset(&st, 0, sizeof st);

    for (;;) {
        s += strspn(s, ", \t\r\n");
        if (!*s) {
            return 0;
        }
        char *token = s;
        s += strcspn(s, ", \t\r\n");
        if (*s) {
            *s++ = '\0';
        }

        char *eq = strchr(token, '=');
        char *value = NULL;
        if (eq) {
            *eq = '\0';
            value = eq + 1;
        }

        bool found = false;
        for (size_t i = 0; i < FDP_ARRAY_SIZE(attrs); i++) {
            if (!strcmp(token, attrs[i].name)) {
                if (p->flags & FDP_PARSE_STATS_REQUEST
                    && (i == ATTR_PRIORITY || i == ATTR_IDLE
                        || i == ATTR_HARD)) {
                    /* ovs-ofctl's words, after the token. */
                    return parse_error(p, token, "%s%s%s: unknown keyword %s",
                                       token, value ? "=" : "",
                                       value ? value : "", token);
                }
                if (!value) {
                    return parse_error(p, token, "%s: missing value", token);
                }
                int error = parse_attr(p, (enum attr) i, value, token, &st,
                                       flow);
                if (error) {
                    return error;
                }
                found = true;
            }
        }
        /* The flags a flow keeps (flowdp/flow.h), for a flow that is
         * added or modified: ovs-ofctl's words. */
        for (size_t i = 0; !found && i < FDP__N_FLOW_FLAGS; i++) {
            if (!strcmp(token, fdp__flow_flag_names[i])) {
                if (value
                    || p->flags & (FDP_PARSE_MATCH_ONLY
                                   | FDP_PARSE_STATS_REQUEST)) {
                    return parse_error(p, token, "%s%s%s: unknown keyword "
                                       "%s", token, value ? "=" : "",
                                       value ? value : "", token);
                }
                flow->flags |= (uint16_t) (1u << i);
                found = true;
            }
        }
        for (size_t i = 0; !found && i < FDP_ARRAY_SIZE(shorthands); i++) {
            if (!strcmp(token, shorthands[i].name)) {
                if (value) {
                    return parse_error(p, token, "%s: a protocol shorthand "
                                       "takes no value", token);
                }
                int error = apply_shorthand(p, (int) i, token);
                if (error) {
                    return error;
                }
                found = true;
            }
        }
        if (found) {
            continue;
        }

        enum fdp_field f;
        int md = fdp__tun_md_index(token);
        if (md >= 0) {
            if (!value) {
                return parse_error(p, token, "%s: missing value (%s=VALUE)",
                                   token, token);
            }
            char *msg = fdp__tun_md_parse(p->match, md, value);
            if (msg) {
                parse_error(p, token, "%s", msg);
                free(msg);
                return EINVAL;
            }
            continue;
        }
        if (!fdp_field_from_name(token, &f)) {
            return parse_error(p, token, "unknown field or keyword \"%s\"",
                               token);
        }
        if (!value) {
            return parse_error(p, token, "%s: missing value (%s=VALUE)",
                               token, token);
        }
        /* The pipeline's fields are not part of a packet: every packet
         * enters table 0 with them zero, and only actions change them. */
        if ((p->flags & PARSE_PACKET) && fdp__field_is_register(f)) {
            return parse_error(p, token, "%s: a packet starts with conj_id, "
                               "metadata and the registers zero, so it "
                               "takes none of them", token);
        }
        /* Keep the token text for conflict messages: "tp_dst=80". */
        if (eq) {
            *eq = '=';
        }
        p->cur_name = fdp__field(f)->name;
        int error = parse_field(p, f, value, token);
        if (error) {
            return error;
        }
    }
}

static int flow_parse(const char *text, unsigned int flags,
                      struct fdp_flow_spec *flow, char **errorp);

int
fdp_flow_parse(const char *text, unsigned int flags,
               struct fdp_flow_spec *flow, char **errorp)
{
    return flow_parse(text, flags & ~(PARSE_PACKET | FDP__PARSE_BUCKET), flow,
                      errorp);
}

static int
flow_parse(const char *text, unsigned int flags,
           struct fdp_flow_spec *flow, char **errorp)
{
    struct parser p;
    int error;

    memset(flow, 0, sizeof *flow);
    flow->priority = FDP_DEFAULT_PRIORITY;
    if (errorp) {
        *errorp = NULL;
    }

    fdp__tun_md_text_begin();
    size_t len = strlen(text);
    memset(&p, 0, offsetof(struct parser, claims));
    p.line = text;
    p.errorp = errorp;
    p.flags = flags;
    if (len > MAX_FLOW_LEN) {
        p.buf = (char *) text;
        return parse_error(&p, text + MAX_FLOW_LEN, "flow is longer than "
                           "%d bytes", MAX_FLOW_LEN);
    }
    p.buf = strdup(text);
    p.match = fdp_match_create();
    if (!p.buf || !p.match) {
        error = ENOMEM;
        goto out;
    }

    /* As ovs-ofctl, "#" starts a comment that runs to the end of the line,
     * after a flow too; no flow syntax uses the character. */
    char *hash = strchr(p.buf, '#');
    if (hash) {
        *hash = '\0';
        len = (size_t) (hash - p.buf);
    }

    char *acts = find_actions(p.buf);
    if (acts) {
        if (flags & FDP_PARSE_MATCH_ONLY) {
            error = parse_error(&p, acts, "actions are not allowed here");
            goto out;
        }
        *acts = '\0';
        acts += strlen("actions=");
    } else if (!(flags & FDP_PARSE_MATCH_ONLY)) {
        error = parse_error(&p, p.buf + len, "missing \"actions=\"");
        goto out;
    }

    error = parse_match_tokens(&p, p.buf, flow);
    if (!error) {
        error = check_prereqs(&p);
    }
    if (!error && acts) {
        p.table_id = flow->table_id;
        error = parse_actions(&p, acts, &flow->actions);
    }

out:
    if (error) {
        fdp_match_destroy(p.match);
        fdp_actions_destroy(flow->actions);
        memset(flow, 0, sizeof *flow);
    } else {
        flow->match = p.match;
    }
    if (p.buf != text) {
        free(p.buf);
    }
    return error;
}

void
fdp_flow_spec_destroy(struct fdp_flow_spec *flow)
{
    if (flow) {
        fdp_match_destroy(flow->match);
        fdp_actions_destroy(flow->actions);
        flow->match = NULL;
        flow->actions = NULL;
    }
}

/* True if the mask of field 'f' in 'm' is exactly the bits of a
 * narrower field stored inside it that 'm' matches exactly: ct_ipv6_src
 * holding ct_nw_src (key.h). */
static bool
is_alias_exact(const struct fdp_match *m, enum fdp_field f)
{
    const struct fdp__field *fd = fdp__field(f);
    fdp_u128 mask = fdp__match_get_mask(m, f);

    for (int g = 0; g < FDP_N_FIELDS; g++) {
        const struct fdp__field *gd = fdp__field(g);
        if (g == (int) f || gd->word != fd->word || gd->n_bits >= fd->n_bits
            || fdp__match_get_mask(m, g) != fdp__ones(gd->n_bits)) {
            continue;
        }
        unsigned int offset = fd->n_bits == 128 ? 64u + gd->shift
                                                : (unsigned int) (gd->shift - fd->shift);
        if (mask == fdp__ones(gd->n_bits) << offset) {
            return true;
        }
    }
    return false;
}

int
fdp__bucket_actions_parse(const char *text, struct fdp_actions **actsp,
                          char **errorp)
{
    struct fdp_flow_spec flow;
    int error = flow_parse(text, FDP__PARSE_BUCKET, &flow, errorp);

    *actsp = NULL;
    if (!error) {
        *actsp = flow.actions;
        flow.actions = NULL;
        fdp_flow_spec_destroy(&flow);
    }
    return error;
}

int
fdp_packet_parse(const char *text, struct fdp_key *key, char **errorp)
{
    struct fdp_flow_spec flow;
    int error = flow_parse(text, FDP_PARSE_MATCH_ONLY | PARSE_PACKET, &flow,
                           errorp);

    if (error) {
        return error;
    }
    const struct fdp_match *m = flow.match;
    char problem[128] = "";
    if (flow.priority != FDP_DEFAULT_PRIORITY || flow.cookie
        || flow.table_id || flow.idle_timeout || flow.hard_timeout) {
        snprintf(problem, sizeof problem, "a packet takes no priority, "
                 "cookie, table or timeouts");
    } else if (fdp__match_has_ranges(m)) {
        snprintf(problem, sizeof problem, "a packet's fields take exact "
                 "values, not ranges");
    }
    /* Masks written with '/' (the implicit ones of dl_vlan, dl_vlan_pcp
     * and ip_frag names leave the other bits zero, which is exact; so do
     * flags, as ofproto/trace reads them: "ct_state=+trk+est" is a packet
     * with exactly trk and est set). */
    for (int f = 0; f < FDP_N_FIELDS && !problem[0]; f++) {
        fdp_u128 mask = fdp__match_get_mask(m, f);
        if (mask && mask != fdp__ones(fdp__field(f)->n_bits)
            && f != FDP_F_VLAN_TCI && f != FDP_F_IP_FRAG
            && !fdp__is_flag_syntax((enum fdp_field) f)
            && !is_alias_exact(m, (enum fdp_field) f)) {
            snprintf(problem, sizeof problem, "%s: a packet's fields take "
                     "exact values, not masks", fdp__field(f)->name);
        }
    }
    if (problem[0]) {
        if (errorp) {
            *errorp = strdup(problem);
        }
        fdp_flow_spec_destroy(&flow);
        return EINVAL;
    }
    *key = m->value;
    fdp_flow_spec_destroy(&flow);
    return 0;
}
