/*
 * The learn and fin_timeout actions: records, text, resolution.
 *
 * Theory of operation
 * ===================
 *
 * learn(...) is Open vSwitch's NXAST_LEARN (ovs-actions(7), lib/learn.c):
 * when a packet runs it, a flow made from the packet's fields is added to
 * a table.  Its argument is a list of parameters (table, priority,
 * timeouts, cookie, flags, limit, result_dst) and of specs, each of which
 * says where some bits come from (a subfield of the packet's key, or a
 * constant) and where they go (the new flow's match, a load action of the
 * new flow, or an output action of the new flow).
 *
 * Records.  A learn action is one record (lib/actions-internal.h): the
 * header, struct fdp__learn (four words), then the specs, one word each
 * plus two words of value for the constant kinds.  Fields are named by
 * their index in fdp__nxm_fields[], normalised to the entry ovs-ofctl
 * prints (NXM_OF_TCP_SRC for OXM_OF_TCP_SRC and tcp_src alike), so that a
 * record prints the same whichever spelling made it.  The record a flow
 * keeps is the flow form.  The resolved form, which the pipeline composes
 * for the datapath (FDP__ACT_LEARN_RESOLVED in the header's 'flags'), is
 * the same layout with every source read from the key: a field spec
 * becomes the constant kind of the same destination
 * (FDP__LS_MATCH_FIELD -> FDP__LS_MATCH_IMM, LOAD_FIELD -> LOAD_IMM,
 * OUTPUT -> OUTPUT_IMM).  A resolved record says alone which flow to add,
 * so the datapath can queue a copy of it and the table's writer can build
 * the flow later, on another thread (fdp__learn_materialize()).
 *
 * Worked example.  The flow
 *   actions=learn(table=1,NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],
 *                 output:NXM_OF_IN_PORT[])
 * has a record of 1 + 4 + 2 words: specs (MATCH_FIELD, 48 bits,
 * src ETH_SRC[0], dst ETH_DST[0]) and (OUTPUT, 16 bits, src IN_PORT[0]).
 * A packet from 50:54:00:00:00:05 on port 3 resolves it to 1 + 4 + 3 + 3
 * words: (MATCH_IMM, 48 bits, dst ETH_DST[0], value 0x505400000005) and
 * (OUTPUT_IMM, 16 bits, value 3), which materialises as
 *   table=1,dl_dst=50:54:00:00:00:05 actions=output:3.
 *
 * Text.  ovs-ofctl's parser and printer (learn_parse() and learn_format()
 * in Open vSwitch 3.1), including its checks (learn_check()): a source's
 * prerequisites must be met by the learning flow's match, and a match
 * destination's by the constant match specs before it (eth_type=0x800
 * before ip_src=...).  Where ovs-ofctl reads numbers with atoi() and
 * would take "priority=x" as 0, flowdp refuses, naming the parameter.
 *
 * Thread-safety: every function here is pure; records are immutable.
 */
#include <config.h>

#include "lib/learn.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/field.h"
#include "lib/flow-text.h"
#include "lib/match-internal.h"
#include "lib/rule.h"
#include <flowdp/pipeline.h>
#include <flowdp/table.h>
#include <time.h>
#include "lib/util.h"

/* The largest record: its length is a byte (struct fdp__action). */
#define MAX_RECORD_WORDS 255

/* ---------------------------------------------------------------------- */
/* Field names.                                                            */

static unsigned int
nxm_index(const struct fdp__nxm_field *nf)
{
    return (unsigned int) (nf - fdp__nxm_fields);
}

static const struct fdp__nxm_field *
nxm_at(unsigned int i)
{
    return i < fdp__n_nxm_fields ? &fdp__nxm_fields[i] : NULL;
}

/* The entry ovs-ofctl prints for field 'f' read with prerequisite 'pr':
 * the canonical entry with that prerequisite, else the field's first
 * canonical one. */
static const struct fdp__nxm_field *
canonical_nxm(enum fdp_field f, enum fdp__prereq pr)
{
    const struct fdp__nxm_field *any = NULL;

    for (size_t i = 0; i < fdp__n_nxm_fields; i++) {
        const struct fdp__nxm_field *nf = &fdp__nxm_fields[i];
        if (nf->field == f && nf->canonical) {
            if (nf->prereq == pr) {
                return nf;
            }
            any = any ? any : nf;
        }
    }
    return any;
}

/* Open vSwitch's own name for the field of 'nf' (mf_field's 'name'), which
 * learn prints for a constant over a whole field: "eth_src=...". */
static const char *
mf_name(const struct fdp__nxm_field *nf)
{
    for (size_t i = 0; i < fdp__n_set_field_names; i++) {
        const struct fdp__set_field_name *s = &fdp__set_field_names[i];
        if (s->field == nf->field && s->prereq == nf->prereq) {
            return s->name;
        }
    }
    if (nf->field == FDP_F_DL_TYPE) {
        return "eth_type";
    }
    return fdp__field(nf->field)->name;
}

/* A subfield, as mf_parse_subfield() reads "NAME[]", "NAME[a]",
 * "NAME[a..b]" or "NAME". */
struct sub {
    const struct fdp__nxm_field *nf;   /* Canonical. */
    unsigned int ofs, n_bits;
};

static char * __attribute__((format(printf, 1, 2)))
msgf(const char *format, ...)
{
    char *s;
    va_list args;

    va_start(args, format);
    if (vasprintf(&s, format, args) < 0) {
        s = NULL;
    }
    va_end(args);
    return s;
}

/* Finds the field named 'name': an NXM or OXM name, Open vSwitch's name
 * of the field or an alias (eth_src, dl_src, tcp_src, reg0, eth_type). */
static const struct fdp__nxm_field *
find_field(const char *name, bool *known)
{
    const struct fdp__nxm_field *nf = fdp__nxm_field_find(name);
    const struct fdp__set_field_name *sfn;
    enum fdp_field f;

    *known = true;
    if (nf) {
        return canonical_nxm(nf->field, nf->prereq);
    }
    sfn = fdp__set_field_name_find(name);
    if (sfn) {
        return canonical_nxm(sfn->field, sfn->prereq);
    }
    if (!strcmp(name, "eth_type")) {
        return canonical_nxm(FDP_F_DL_TYPE, FDP__P_NONE);
    }
    if (fdp_field_from_name(name, &f)) {
        return canonical_nxm(f, FDP__P_NONE);
    }
    *known = false;
    return NULL;
}

static bool
parse_bit(const char *s, size_t len, unsigned int *v)
{
    unsigned int x = 0;

    if (!len || len > 3) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char) s[i])) {
            return false;
        }
        x = x * 10 + (unsigned int) (s[i] - '0');
    }
    *v = x;
    return true;
}

/* Parses subfield 's'.  Returns NULL, or a message. */
static char *
parse_sub(const char *s, struct sub *sf)
{
    const char *bracket = strchr(s, '[');
    size_t name_len = bracket ? (size_t) (bracket - s) : strlen(s);
    char name[64];
    bool known;

    if (!name_len || name_len >= sizeof name) {
        return msgf("%s: unknown field `%s'", s, s);
    }
    memcpy(name, s, name_len);
    name[name_len] = '\0';
    sf->nf = find_field(name, &known);
    if (!sf->nf) {
        return known ? msgf("field %s is not supported in learn yet", name)
                     : msgf("%s: unknown field `%s'", s, name);
    }
    sf->ofs = 0;
    sf->n_bits = sf->nf->n_bits;
    if (!bracket) {
        return NULL;
    }
    const char *inner = bracket + 1;
    const char *close = strchr(inner, ']');
    if (!close || close[1]) {
        return msgf("%s: syntax error expecting [] or [<bit>] or "
                    "[<start>..<end>]", s);
    }
    if (close == inner) {
        return NULL;
    }
    unsigned int lo = 0, hi = 0;
    const char *dots = strstr(inner, "..");
    bool ok = dots && dots < close
              ? parse_bit(inner, (size_t) (dots - inner), &lo)
                && parse_bit(dots + 2, (size_t) (close - dots - 2), &hi)
              : parse_bit(inner, (size_t) (close - inner), &lo);
    if (!dots) {
        hi = lo;
    }
    if (!ok) {
        return msgf("%s: syntax error expecting [] or [<bit>] or "
                    "[<start>..<end>]", s);
    }
    if (lo > hi) {
        return msgf("%s: starting bit %u is after ending bit %u", s, lo, hi);
    }
    if (hi >= sf->nf->n_bits) {
        return msgf("%s: ending bit %u is not valid because field is only "
                    "%u bits wide", s, hi, sf->nf->n_bits);
    }
    sf->ofs = lo;
    sf->n_bits = hi - lo + 1;
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* Parsing.                                                                */

/* Splits the next item of the comma- or space-separated list at '*sp'
 * (parentheses nest) into its key and value, as ofputil_parse_key_value()
 * does: "key=value", "key:value", "key(value)", or a bare key (value "").
 * Returns false at the end. */
static bool
next_item(char **sp, char **keyp, char **valuep)
{
    char *s = *sp + strspn(*sp, ", \t\r\n");

    if (!*s) {
        *sp = s;
        return false;
    }
    char *key = s;
    size_t key_len = strcspn(s, ":=(, \t\r\n");
    char delim = key[key_len];
    char *value;

    key[key_len] = '\0';
    s = key + key_len + (delim != '\0');
    if (delim == '(') {
        int depth = 1;
        value = s;
        for (; *s && depth; s++) {
            depth += *s == '(' ? 1 : *s == ')' ? -1 : 0;
        }
        if (depth) {
            value = s = (char *) "";
        } else {
            s[-1] = '\0';
        }
    } else if (delim == ':' || delim == '=') {
        value = s;
        s += strcspn(s, ", \t\r\n");
        if (*s) {
            *s++ = '\0';
        }
    } else {
        value = (char *) "";
    }
    *sp = s;
    *keyp = key;
    *valuep = value;
    return true;
}

/* Reads 's' as ovs-ofctl's parse_int_string(): hex after "0x" (up to 128
 * bits), else decimal (up to 64).  '*tailp' is where it stopped.  False if
 * there is no number or it overflows. */
static bool
parse_int(const char *s, fdp_u128 *v, const char **tailp)
{
    fdp_u128 x = 0;
    const char *p = s;

    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        p += 2;
        if (!isxdigit((unsigned char) *p)) {
            return false;
        }
        for (; isxdigit((unsigned char) *p); p++) {
            if (x >> 124) {
                return false;
            }
            int d = isdigit((unsigned char) *p)
                    ? *p - '0' : tolower((unsigned char) *p) - 'a' + 10;
            x = (x << 4) | (unsigned int) d;
        }
    } else {
        if (!isdigit((unsigned char) *p)) {
            return false;
        }
        for (; isdigit((unsigned char) *p); p++) {
            fdp_u128 next = x * 10 + (unsigned int) (*p - '0');
            if (next > UINT64_MAX) {
                return false;
            }
            x = next;
        }
    }
    *v = x;
    *tailp = p;
    return true;
}

/* A number parameter of learn: decimal (or hex after 0x), at most
 * 'max'. */
static char *
parse_param(const char *name, const char *value, uint64_t max, uint64_t *v)
{
    fdp_u128 x;
    const char *tail;

    if (!parse_int(value, &x, &tail) || *tail || x > max) {
        return msgf("%s=%s: expected a number from 0 to %" PRIu64, name,
                    value, max);
    }
    *v = (uint64_t) x;
    return NULL;
}

struct learn_builder {
    uint64_t words[MAX_RECORD_WORDS];
    size_t n_words;
    struct fdp_match dst_match;     /* What constant match specs say, for
                                     * destinations' prerequisites. */
};

static struct fdp__learn *
lb_learn(struct learn_builder *lb)
{
    return (struct fdp__learn *) (void *) &lb->words[1];
}

static char *
lb_add_spec(struct learn_builder *lb, const struct fdp__learn_spec *spec,
            fdp_u128 value)
{
    size_t need = 1 + (fdp__learn_spec_is_imm(spec) ? 2 : 0);

    if (lb->n_words + need > MAX_RECORD_WORDS || lb_learn(lb)->n_specs == 255) {
        return msgf("too many specs: a learn action holds at most %d words",
                    MAX_RECORD_WORDS);
    }
    memcpy(&lb->words[lb->n_words], spec, sizeof *spec);
    lb->n_words++;
    if (need > 1) {
        lb->words[lb->n_words++] = (uint64_t) (value >> 64);
        lb->words[lb->n_words++] = (uint64_t) value;
    }
    lb_learn(lb)->n_specs++;
    return NULL;
}

/* Writes 'value' into bits ofs.. of field 'f' of 'm', keeping its other
 * bits (mf_write_subfield() on a match). */
static void
match_write_bits(struct fdp_match *m, enum fdp_field f, unsigned int ofs,
                 unsigned int n_bits, fdp_u128 value)
{
    fdp_u128 bits = fdp__ones(n_bits) << ofs;
    fdp_u128 old_v = fdp__match_get_value(m, f);
    fdp_u128 old_m = fdp__match_get_mask(m, f);

    fdp__match_set_masked(m, f, (old_v & old_m & ~bits) | ((value << ofs)
                                                           & bits),
                          old_m | bits);
}

static const char *
prereq_name(enum fdp__prereq pr)
{
    (void) pr;
    return "its prerequisites";
}

static char *
check_src(const struct fdp__learn_parse_env *env, const struct sub *sf,
          const char *text)
{
    if (env && env->match && !fdp__match_meets(env->match, sf->nf->prereq)) {
        return msgf("source field %s lacks correct prerequisites (the "
                    "learning flow's match must have %s)", text,
                    prereq_name(sf->nf->prereq));
    }
    return NULL;
}

static char *
check_dst(struct learn_builder *lb, const struct sub *sf, const char *text,
          bool write)
{
    if (write && !sf->nf->writable) {
        return msgf("destination field %s is not writable", text);
    }
    if (!fdp__match_meets(&lb->dst_match, sf->nf->prereq)) {
        return msgf("destination field %s lacks correct prerequisites "
                    "(earlier match specs of the learned flow must give "
                    "them, e.g. eth_type=0x800 before an IPv4 field)", text);
    }
    return NULL;
}

/* "DST[a..b]=SRC[c..d]", "DST[a..b]" or "DST[a..b]=VALUE". */
static char *
parse_match_spec(struct learn_builder *lb,
                 const struct fdp__learn_parse_env *env, const char *orig,
                 const char *name, const char *value, const struct sub *dst)
{
    struct fdp__learn_spec spec = {
        .n_bits = (uint8_t) dst->n_bits,
        .dst_nxm = (uint8_t) nxm_index(dst->nf),
        .dst_ofs = (uint8_t) dst->ofs,
    };
    fdp_u128 imm = 0;
    char *err = check_dst(lb, dst, name, false);

    if (err) {
        return err;
    }
    if (!*value) {
        spec.kind = FDP__LS_MATCH_FIELD;
        spec.src_nxm = spec.dst_nxm;
        spec.src_ofs = spec.dst_ofs;
        err = check_src(env, dst, name);
        return err ? err : lb_add_spec(lb, &spec, 0);
    }

    struct sub src;
    char *sub_err = parse_sub(value, &src);
    if (!sub_err) {
        if (src.n_bits != dst->n_bits) {
            return msgf("%s: bit widths of %s (%u) and %s (%u) differ", orig,
                        name, dst->n_bits, value, src.n_bits);
        }
        spec.kind = FDP__LS_MATCH_FIELD;
        spec.src_nxm = (uint8_t) nxm_index(src.nf);
        spec.src_ofs = (uint8_t) src.ofs;
        err = check_src(env, &src, value);
        return err ? err : lb_add_spec(lb, &spec, 0);
    }

    /* Not a subfield: a constant, in the field's syntax over the whole
     * field, else a number. */
    enum fdp_field f = dst->nf->field;
    bool ok;
    if (!dst->ofs && dst->n_bits == dst->nf->n_bits) {
        ok = env && env->parse_value && env->parse_value(f, value, &imm)
             && imm <= fdp__ones(dst->n_bits);
    } else {
        const char *tail;
        ok = parse_int(value, &imm, &tail) && !*tail;
        if (ok && imm > fdp__ones(dst->n_bits)) {
            free(sub_err);
            return msgf("%s: value %s does not fit into %u bits", orig, value,
                        dst->n_bits);
        }
    }
    if (!ok) {
        err = msgf("%s: %s value %s cannot be parsed as a subfield (%s) or "
                   "an immediate value", orig, name, value, sub_err);
        free(sub_err);
        return err;
    }
    free(sub_err);
    spec.kind = FDP__LS_MATCH_IMM;
    match_write_bits(&lb->dst_match, f, dst->ofs, dst->n_bits, imm);
    return lb_add_spec(lb, &spec, imm);
}

/* "load:VALUE->DST[a..b]" or "load:SRC[c..d]->DST[a..b]". */
static char *
parse_load_spec(struct learn_builder *lb,
                const struct fdp__learn_parse_env *env, const char *orig,
                char *value)
{
    char *arrow = strstr(value, "->");
    struct fdp__learn_spec spec = { .kind = FDP__LS_LOAD_IMM };
    struct sub dst, src;
    fdp_u128 imm = 0;
    const char *tail;
    char *err;

    if (arrow == value) {
        return msgf("load: missing source before `->' in `%s'", value);
    }
    if (!arrow) {
        return msgf("load: missing `->' in `%s'", value);
    }
    *arrow = '\0';
    const char *dst_text = arrow + 2;
    bool is_imm = parse_int(value, &imm, &tail);
    if (is_imm && *tail) {
        *arrow = '-';
        return msgf("load: garbage before `->' in `%s'", value);
    }
    err = parse_sub(dst_text, &dst);
    if (!err && fdp__field(dst.nf->field)->n_bits > 64) {
        err = msgf("load: %s: learn cannot load into a field wider than 64 "
                   "bits yet", dst_text);
    }
    if (!err) {
        err = check_dst(lb, &dst, dst_text, true);
    }
    if (err) {
        return err;
    }
    if (is_imm) {
        if (imm > fdp__ones(dst.n_bits)) {
            return msgf("%s->%s: value does not fit into %u bits", value,
                        dst_text, dst.n_bits);
        }
    } else {
        err = parse_sub(value, &src);
        if (!err && src.n_bits != dst.n_bits) {
            err = msgf("%s: source field is %u bits wide but destination is "
                       "%u bits wide", orig, src.n_bits, dst.n_bits);
        }
        if (!err) {
            err = check_src(env, &src, value);
        }
        if (err) {
            return err;
        }
        spec.kind = FDP__LS_LOAD_FIELD;
        spec.src_nxm = (uint8_t) nxm_index(src.nf);
        spec.src_ofs = (uint8_t) src.ofs;
    }
    spec.n_bits = (uint8_t) dst.n_bits;
    spec.dst_nxm = (uint8_t) nxm_index(dst.nf);
    spec.dst_ofs = (uint8_t) dst.ofs;
    return lb_add_spec(lb, &spec, imm);
}

static char *
parse_learn__(char *orig, char *arg, const struct fdp__learn_parse_env *env,
              struct learn_builder *lb)
{
    struct fdp__learn *l = lb_learn(lb);
    char *name, *value, *err = NULL;
    uint64_t v;

    l->priority = FDP_DEFAULT_PRIORITY;
    l->table_id = 1;
    while (!err && arg && next_item(&arg, &name, &value)) {
        if (!strcmp(name, "table")) {
            err = parse_param(name, value, 254, &v);
            if (!err) {
                l->table_id = (uint8_t) v;
            } else if (!strcmp(value, "255")) {
                free(err);
                err = msgf("%s: table id 255 not valid for `learn' action",
                           orig);
            }
        } else if (!strcmp(name, "priority")) {
            err = parse_param(name, value, UINT16_MAX, &v);
            l->priority = (uint16_t) v;
        } else if (!strcmp(name, "idle_timeout")) {
            err = parse_param(name, value, UINT16_MAX, &v);
            l->idle_timeout = (uint16_t) v;
        } else if (!strcmp(name, "hard_timeout")) {
            err = parse_param(name, value, UINT16_MAX, &v);
            l->hard_timeout = (uint16_t) v;
        } else if (!strcmp(name, "fin_idle_timeout")) {
            err = parse_param(name, value, UINT16_MAX, &v);
            l->fin_idle_timeout = (uint16_t) v;
        } else if (!strcmp(name, "fin_hard_timeout")) {
            err = parse_param(name, value, UINT16_MAX, &v);
            l->fin_hard_timeout = (uint16_t) v;
        } else if (!strcmp(name, "cookie")) {
            err = parse_param(name, value, UINT64_MAX, &v);
            l->cookie = v;
        } else if (!strcmp(name, "send_flow_rem")) {
            l->flags |= FDP__LEARN_SEND_FLOW_REM;
        } else if (!strcmp(name, "delete_learned")) {
            l->flags |= FDP__LEARN_DELETE_LEARNED;
        } else if (!strcmp(name, "limit")) {
            err = parse_param(name, value, UINT32_MAX, &v);
            l->limit = (uint32_t) v;
        } else if (!strcmp(name, "result_dst")) {
            struct sub sf;
            err = parse_sub(value, &sf);
            if (!err && !sf.nf->writable) {
                err = msgf("%s is read-only", value);
            }
            if (!err && sf.n_bits != 1) {
                err = msgf("result_dst in 'learn' action must be a single "
                           "bit");
            }
            if (!err && env && env->match
                && !fdp__match_meets(env->match, sf.nf->prereq)) {
                err = msgf("result_dst %s lacks correct prerequisites",
                           value);
            }
            if (!err) {
                l->flags |= FDP__LEARN_WRITE_RESULT;
                l->result_nxm = (uint8_t) nxm_index(sf.nf);
                l->result_ofs = (uint8_t) sf.ofs;
            }
        } else if (!strcmp(name, "load")) {
            err = parse_load_spec(lb, env, orig, value);
        } else if (!strcmp(name, "output")) {
            struct sub src;
            err = parse_sub(value, &src);
            if (!err) {
                err = check_src(env, &src, value);
            }
            if (!err) {
                struct fdp__learn_spec spec = {
                    .kind = FDP__LS_OUTPUT, .n_bits = (uint8_t) src.n_bits,
                    .src_nxm = (uint8_t) nxm_index(src.nf),
                    .src_ofs = (uint8_t) src.ofs,
                };
                err = lb_add_spec(lb, &spec, 0);
            }
        } else {
            struct sub dst;
            char *sub_err = parse_sub(name, &dst);
            if (sub_err) {
                bool known;
                char base[64];
                size_t n = strcspn(name, "[");
                snprintf(base, sizeof base, "%.*s", (int) (n < 63 ? n : 63),
                         name);
                if (find_field(base, &known) || known) {
                    err = sub_err;
                } else {
                    free(sub_err);
                    err = msgf("%s: unknown keyword %s", orig, name);
                }
            } else {
                err = parse_match_spec(lb, env, orig, name, value, &dst);
            }
        }
    }
    return err;
}

int
fdp__learn_parse(char *arg, const struct fdp__learn_parse_env *env,
                 struct fdp__actions_builder *b, char **msg)
{
    struct learn_builder *lb = calloc(1, sizeof *lb);
    char *orig = strdup(arg ? arg : "");

    *msg = NULL;
    if (!lb || !orig) {
        free(lb);
        free(orig);
        return ENOMEM;
    }
    fdp__match_init(&lb->dst_match);
    lb->n_words = 1 + FDP__LEARN_WORDS;
    *msg = parse_learn__(orig, arg, env, lb);
    if (!*msg) {
        struct fdp__action *h = (struct fdp__action *) (void *) lb->words;
        *h = (struct fdp__action) {
            .type = FDP_ACT_LEARN, .n_words = (uint8_t) lb->n_words,
        };
        fdp__actions_add_record(b, h);
    }
    free(orig);
    free(lb);
    if (*msg) {
        return EINVAL;
    }
    return 0;
}

int
fdp__fin_timeout_parse(char *arg, struct fdp__actions_builder *b, char **msg)
{
    uint64_t idle = 0, hard = 0;
    char *name, *value;

    *msg = NULL;
    while (!*msg && arg && next_item(&arg, &name, &value)) {
        if (!strcmp(name, "idle_timeout")) {
            *msg = parse_param("fin_timeout: idle_timeout", value,
                               UINT16_MAX, &idle);
        } else if (!strcmp(name, "hard_timeout")) {
            *msg = parse_param("fin_timeout: hard_timeout", value,
                               UINT16_MAX, &hard);
        } else {
            *msg = msgf("invalid key '%s' in 'fin_timeout' argument", name);
        }
    }
    if (*msg) {
        return EINVAL;
    }
    fdp__actions_add(b, FDP_ACT_FIN_TIMEOUT,
                     (uint32_t) (idle | (hard << 16)));
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Printing.                                                               */

/* A spec's value: two words after it. */
static fdp_u128
spec_value(const struct fdp__learn_spec *s)
{
    const uint64_t *w = (const uint64_t *) (const void *) s;

    return ((fdp_u128) w[1] << 64) | w[2];
}

static const struct fdp__learn_spec *
spec_next(const struct fdp__learn_spec *s)
{
    return s + 1 + (fdp__learn_spec_is_imm(s) ? 2 : 0);
}

static const struct fdp__learn_spec *
specs_of(const struct fdp__action *a)
{
    return (const struct fdp__learn_spec *) (const void *)
           ((const uint64_t *) a + 1 + FDP__LEARN_WORDS);
}

/* Open vSwitch's ds_put_hex() of a value: "0x" and no leading zeros, or
 * "0". */
static void
put_hex(struct fdp__ds *ds, fdp_u128 v)
{
    if (v >> 64) {
        fdp__ds_printf(ds, "%#" PRIx64 "%016" PRIx64, (uint64_t) (v >> 64),
                       (uint64_t) v);
    } else {
        fdp__ds_printf(ds, "%#" PRIx64, (uint64_t) v);
    }
}

static void
put_sub(struct fdp__ds *ds, unsigned int nxm, unsigned int ofs,
        unsigned int n_bits)
{
    const struct fdp__nxm_field *nf = nxm_at(nxm);

    if (!nf) {
        fdp__ds_put(ds, "<unknown>");
        return;
    }
    fdp__ds_put(ds, nf->name);
    if (!ofs && n_bits == nf->n_bits) {
        fdp__ds_put(ds, "[]");
    } else if (n_bits == 1) {
        fdp__ds_printf(ds, "[%u]", ofs);
    } else {
        fdp__ds_printf(ds, "[%u..%u]", ofs, ofs + n_bits - 1);
    }
}

/* A whole field's constant as mf_format() prints it. */
static void
put_field_value(struct fdp__ds *ds, const struct fdp__nxm_field *nf,
                fdp_u128 v)
{
    /* Open vSwitch prints ct_zone in hex (MFS_HEXADECIMAL), where
     * flowdp's match syntax, as ovs-ofctl's match printer, uses decimal. */
    if (nf->field == FDP_F_CT_ZONE) {
        put_hex(ds, v);
        return;
    }
    switch (fdp__field(nf->field)->syntax) {
    case FDP__S_HEX:
    case FDP__S_HEX4:
    case FDP__S_HEX5:
    case FDP__S_TCP_FLAGS:
    case FDP__S_CT_STATE:
    case FDP__S_TUN_FLAGS:
        put_hex(ds, v);
        break;
    case FDP__S_DEC:
    case FDP__S_VLAN_VID:
    case FDP__S_FRAG:
    case FDP__S_TOS:
        fdp__ds_put_uint(ds, (uint64_t) v);
        break;
    default:
        fdp__format_value(ds, nf->field, v);
        break;
    }
}

static void
format_spec(struct fdp__ds *ds, const struct fdp__learn_spec *s)
{
    const struct fdp__nxm_field *dst = nxm_at(s->dst_nxm);

    fdp__ds_putc(ds, ',');
    switch ((enum fdp__learn_spec_kind) s->kind) {
    case FDP__LS_MATCH_IMM:
        if (dst && !s->dst_ofs && s->n_bits == dst->n_bits) {
            fdp__ds_printf(ds, "%s=", mf_name(dst));
            put_field_value(ds, dst, spec_value(s));
        } else {
            put_sub(ds, s->dst_nxm, s->dst_ofs, s->n_bits);
            fdp__ds_putc(ds, '=');
            put_hex(ds, spec_value(s));
        }
        break;
    case FDP__LS_MATCH_FIELD:
        put_sub(ds, s->dst_nxm, s->dst_ofs, s->n_bits);
        if (s->src_nxm != s->dst_nxm || s->src_ofs != s->dst_ofs) {
            fdp__ds_putc(ds, '=');
            put_sub(ds, s->src_nxm, s->src_ofs, s->n_bits);
        }
        break;
    case FDP__LS_LOAD_IMM:
        fdp__ds_put(ds, "load:");
        put_hex(ds, spec_value(s));
        fdp__ds_put(ds, "->");
        put_sub(ds, s->dst_nxm, s->dst_ofs, s->n_bits);
        break;
    case FDP__LS_LOAD_FIELD:
        fdp__ds_put(ds, "load:");
        put_sub(ds, s->src_nxm, s->src_ofs, s->n_bits);
        fdp__ds_put(ds, "->");
        put_sub(ds, s->dst_nxm, s->dst_ofs, s->n_bits);
        break;
    case FDP__LS_OUTPUT:
        fdp__ds_put(ds, "output:");
        put_sub(ds, s->src_nxm, s->src_ofs, s->n_bits);
        break;
    case FDP__LS_OUTPUT_IMM:
        /* Only a resolved record has it (trace prints those). */
        fdp__ds_put(ds, "output:");
        put_hex(ds, spec_value(s));
        break;
    }
}

void
fdp__learn_format(struct fdp__ds *ds, const struct fdp__action *a)
{
    const struct fdp__learn *l = fdp__learn_of(a);

    fdp__ds_printf(ds, "learn(table=%u", l->table_id);
    if (l->idle_timeout) {
        fdp__ds_printf(ds, ",idle_timeout=%u", l->idle_timeout);
    }
    if (l->hard_timeout) {
        fdp__ds_printf(ds, ",hard_timeout=%u", l->hard_timeout);
    }
    if (l->fin_idle_timeout) {
        fdp__ds_printf(ds, ",fin_idle_timeout=%u", l->fin_idle_timeout);
    }
    if (l->fin_hard_timeout) {
        fdp__ds_printf(ds, ",fin_hard_timeout=%u", l->fin_hard_timeout);
    }
    if (l->priority != FDP_DEFAULT_PRIORITY) {
        fdp__ds_printf(ds, ",priority=%u", l->priority);
    }
    if (l->flags & FDP__LEARN_SEND_FLOW_REM) {
        fdp__ds_put(ds, ",send_flow_rem");
    }
    if (l->flags & FDP__LEARN_DELETE_LEARNED) {
        fdp__ds_put(ds, ",delete_learned");
    }
    if (l->cookie) {
        fdp__ds_printf(ds, ",cookie=%#" PRIx64, l->cookie);
    }
    if (l->limit) {
        fdp__ds_printf(ds, ",limit=%" PRIu32, l->limit);
    }
    if (l->flags & FDP__LEARN_WRITE_RESULT) {
        fdp__ds_put(ds, ",result_dst=");
        put_sub(ds, l->result_nxm, l->result_ofs, 1);
    }
    const struct fdp__learn_spec *s = specs_of(a);
    for (unsigned int i = 0; i < l->n_specs; i++, s = spec_next(s)) {
        format_spec(ds, s);
    }
    fdp__ds_putc(ds, ')');
}

void
fdp__fin_timeout_format(struct fdp__ds *ds, const struct fdp__action *a)
{
    fdp__ds_put(ds, "fin_timeout(");
    if (fdp__fin_idle(a)) {
        fdp__ds_printf(ds, "idle_timeout=%u,", fdp__fin_idle(a));
    }
    if (fdp__fin_hard(a)) {
        fdp__ds_printf(ds, "hard_timeout=%u,", fdp__fin_hard(a));
    }
    fdp__ds_chomp(ds, ',');
    fdp__ds_putc(ds, ')');
}

/* ---------------------------------------------------------------------- */
/* Resolution and materialisation.                                         */

size_t
fdp__learn_record_words(const struct fdp__action *a)
{
    return a->n_words;
}

static fdp_u128
read_sub(const struct fdp_key *key, unsigned int nxm, unsigned int ofs,
         unsigned int n_bits)
{
    const struct fdp__nxm_field *nf = nxm_at(nxm);

    return nf ? (fdp__key_get(key, nf->field) >> ofs) & fdp__ones(n_bits)
              : 0;
}

int
fdp__learn_resolve(const struct fdp__action *a, const struct fdp_key *key,
                   bool result, struct fdp__actions_builder *b)
{
    uint64_t words[MAX_RECORD_WORDS];
    size_t n = 1 + FDP__LEARN_WORDS;
    const struct fdp__learn *l = fdp__learn_of(a);
    const struct fdp__learn_spec *s = specs_of(a);

    memcpy(words, a, n * 8);
    for (unsigned int i = 0; i < l->n_specs; i++, s = spec_next(s)) {
        struct fdp__learn_spec r = *s;
        fdp_u128 v;
        switch ((enum fdp__learn_spec_kind) s->kind) {
        case FDP__LS_MATCH_FIELD:
            r.kind = FDP__LS_MATCH_IMM;
            v = read_sub(key, s->src_nxm, s->src_ofs, s->n_bits);
            break;
        case FDP__LS_LOAD_FIELD:
            r.kind = FDP__LS_LOAD_IMM;
            v = read_sub(key, s->src_nxm, s->src_ofs, s->n_bits);
            break;
        case FDP__LS_OUTPUT:
            r.kind = FDP__LS_OUTPUT_IMM;
            v = read_sub(key, s->src_nxm, s->src_ofs, s->n_bits);
            break;
        default:
            v = spec_value(s);
            break;
        }
        /* Every spec grows by at most two words and the flow form fits
         * in 255, but a resolved record may not: refuse rather than
         * overrun. */
        if (n + 3 > MAX_RECORD_WORDS) {
            return EINVAL;
        }
        memcpy(&words[n++], &r, sizeof r);
        words[n++] = (uint64_t) (v >> 64);
        words[n++] = (uint64_t) v;
    }
    struct fdp__action *h = (struct fdp__action *) (void *) words;
    h->n_words = (uint8_t) n;
    h->flags |= FDP__ACT_LEARN_RESOLVED;
    ((struct fdp__learn *) (void *) (h + 1))->result = result;
    fdp__actions_add_record(b, h);
    return b->error;
}

/* OVS's learn_execute(): which ports output:SRC may send to. */
static void
add_output(struct fdp__actions_builder *b, fdp_u128 v, unsigned int n_bits)
{
    if (n_bits > 16 && v >> 16) {
        return;
    }
    uint32_t port = (uint32_t) v & 0xffff;
    if (port == FDP_PORT_IN_PORT) {
        fdp__actions_add(b, FDP_ACT_IN_PORT, 0);
    } else if (port && port < FDP_PORT_MAX) {
        fdp__actions_add(b, FDP_ACT_OUTPUT, port);
    }
    /* FLOOD, ALL and LOCAL, which Open vSwitch also takes, have no
     * action in flowdp yet (NORMAL and its ports are another part of
     * issue 24); such a spec adds no output. */
}

int
fdp__learn_materialize(const struct fdp__action *a,
                       struct fdp_flow_spec *spec)
{
    const struct fdp__learn *l = fdp__learn_of(a);
    const struct fdp__learn_spec *s = specs_of(a);
    const uint64_t *end = (const uint64_t *) a + a->n_words;
    struct fdp__actions_builder b;
    int error = 0;

    memset(spec, 0, sizeof *spec);
    if (a->type != FDP_ACT_LEARN || !(a->flags & FDP__ACT_LEARN_RESOLVED)) {
        return EINVAL;
    }
    spec->match = fdp_match_create();
    if (!spec->match) {
        return ENOMEM;
    }
    fdp__actions_builder_init(&b);
    if (l->fin_idle_timeout || l->fin_hard_timeout) {
        fdp__actions_add(&b, FDP_ACT_FIN_TIMEOUT,
                         l->fin_idle_timeout
                         | ((uint32_t) l->fin_hard_timeout << 16));
    }
    for (unsigned int i = 0; !error && i < l->n_specs; i++, s = spec_next(s)) {
        const struct fdp__nxm_field *dst = nxm_at(s->dst_nxm);
        if ((const uint64_t *) (const void *) spec_next(s) > end
            || !fdp__learn_spec_is_imm(s)
            || (s->kind != FDP__LS_OUTPUT_IMM && !dst)) {
            error = EINVAL;
            break;
        }
        fdp_u128 v = spec_value(s);
        switch ((enum fdp__learn_spec_kind) s->kind) {
        case FDP__LS_MATCH_IMM:
            match_write_bits(spec->match, dst->field, s->dst_ofs, s->n_bits,
                             v);
            break;
        case FDP__LS_LOAD_IMM: {
            uint64_t mask = (uint64_t) (fdp__ones(s->n_bits) << s->dst_ofs);
            error = fdp__actions_add_set_masked(&b, dst->field,
                                                (uint64_t) (v << s->dst_ofs)
                                                & mask, mask, FDP__ACT_LOAD);
            break;
        }
        case FDP__LS_OUTPUT_IMM:
            add_output(&b, v, s->n_bits);
            break;
        default:
            error = EINVAL;
            break;
        }
    }
    if (error) {
        fdp__actions_builder_destroy(&b);
    } else {
        spec->actions = fdp__actions_finish(&b);
    }
    if (!error && !spec->actions) {
        error = ENOMEM;
    }
    if (error) {
        fdp_flow_spec_destroy(spec);
        memset(spec, 0, sizeof *spec);
        return error;
    }
    spec->cookie = l->cookie;
    spec->cookie_given = true;
    spec->priority = l->priority;
    spec->idle_timeout = l->idle_timeout;
    spec->hard_timeout = l->hard_timeout;
    spec->table_id = l->table_id;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Adding learned flows (the table's writer).                              */

static int64_t
monotonic_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Open vSwitch's ofproto_flow_mod_learn_refresh() on a flow that is
 * there: its hard timeout counts again from now, and so does its idle
 * timeout (a refresh is what a packet through the learning flow says
 * about the learned one).  Only the writer stores 'modified_ms'; readers
 * load it atomically. */
static void
refresh(const struct fdp_rule *r_, int64_t now)
{
    struct fdp_rule *r = (struct fdp_rule *) r_;

    __atomic_store_n(&r->modified_ms, now, __ATOMIC_RELAXED);
    if (r->stats) {
        __atomic_store_n(&r->stats->used_ms, now, __ATOMIC_RELAXED);
    }
}

static bool
same_flow(const struct fdp_rule *r, const struct fdp_flow_spec *spec)
{
    return r->cookie == spec->cookie
           && r->idle_timeout == spec->idle_timeout
           && r->hard_timeout == spec->hard_timeout
           && fdp_actions_equal(fdp__rule_actions(r), spec->actions);
}

/* Marks the flow just inserted as learned (a writer-only field, set in
 * the transaction that adds it). */
static void
mark_learned(struct fdp_pipeline *p, const struct fdp_flow_spec *spec)
{
    struct fdp_rule *r = (struct fdp_rule *) fdp__pipeline_find(
        p, spec->table_id, spec->match, spec->priority);

    if (r) {
        r->learned = true;
    }
}

bool
fdp_rule_is_learned(const struct fdp_rule *r)
{
    return r->learned;
}

struct cookie_count {
    uint64_t cookie;
    uint8_t table_id;
    uint64_t n;
};

struct count_aux {
    uint64_t cookie;
    uint64_t n;
};

static bool
count_cookie(const struct fdp_rule *r, void *aux_)
{
    struct count_aux *aux = aux_;

    aux->n += r->cookie == aux->cookie;
    return true;
}

uint64_t
fdp__learn_count_cookie(struct fdp_pipeline *p, uint8_t table_id,
                        uint64_t cookie)
{
    struct count_aux aux = { .cookie = cookie };

    fdp_pipeline_for_each(p, table_id, count_cookie, &aux);
    return aux.n;
}

/* The flows of (table, cookie) now, counted once per batch and then kept
 * up to date as the batch adds: limit=N is checked without a scan per
 * flow. */
static uint64_t *
batch_count(struct cookie_count *cc, size_t *n_cc, size_t max,
            struct fdp_pipeline *p, uint8_t table_id, uint64_t cookie)
{
    for (size_t i = 0; i < *n_cc; i++) {
        if (cc[i].table_id == table_id && cc[i].cookie == cookie) {
            return &cc[i].n;
        }
    }
    if (*n_cc == max) {
        return NULL;
    }
    cc[*n_cc] = (struct cookie_count) {
        .cookie = cookie, .table_id = table_id,
        .n = fdp__learn_count_cookie(p, table_id, cookie),
    };
    return &cc[(*n_cc)++].n;
}

int
fdp__learn_apply(struct fdp_pipeline *p, const struct fdp__action *const *recs,
                 size_t n, struct fdp__learn_stats *st)
{
    enum { MAX_COUNTS = 16 };
    struct cookie_count cc[MAX_COUNTS];
    size_t n_cc = 0;
    int64_t now = monotonic_ms();
    bool changed = false;
    int error = fdp_pipeline_begin(p);

    if (error) {
        return error;
    }
    for (size_t i = 0; i < n; i++) {
        const struct fdp__action *a = recs[i];
        const struct fdp__learn *l = fdp__learn_of(a);
        struct fdp_flow_spec spec;

        if (fdp__learn_materialize(a, &spec)) {
            st->n_failed++;
            continue;
        }
        const struct fdp_rule *old = fdp__pipeline_find(p, spec.table_id,
                                                        spec.match,
                                                        spec.priority);
        if (old && same_flow(old, &spec)) {
            refresh(old, now);
            st->n_refreshed++;
        } else {
            uint64_t *count = !old && l->limit
                              ? batch_count(cc, &n_cc, MAX_COUNTS, p,
                                            spec.table_id, spec.cookie)
                              : NULL;
            if (count && *count >= l->limit) {
                st->n_over_limit++;
            } else if (!fdp_pipeline_insert(p, &spec, 0)) {
                mark_learned(p, &spec);
                st->n_added += !old;
                st->n_replaced += old != NULL;
                changed = true;
                if (count) {
                    ++*count;
                }
            } else {
                st->n_failed++;
            }
        }
        fdp_flow_spec_destroy(&spec);
    }
    if (changed) {
        error = fdp_pipeline_commit(p);
    } else {
        /* Refreshes only: nothing to publish, no new version for the
         * caches to miss on. */
        fdp_pipeline_abort(p);
    }
    return error;
}

/* ---------------------------------------------------------------------- */
/* delete_learned.                                                         */

struct learn_cookie {
    uint64_t cookie;
    uint8_t table_id;
};

struct fdp__learn_cookies {
    struct learn_cookie *pairs;
    size_t n, alloc;
    bool failed;
};

void
fdp__learn_cookies_free(struct fdp__learn_cookies *lc)
{
    if (lc) {
        free(lc->pairs);
        free(lc);
    }
}

static bool
has_pair(const struct fdp__learn_cookies *lc, uint8_t table_id,
         uint64_t cookie)
{
    for (size_t i = 0; lc && i < lc->n; i++) {
        if (lc->pairs[i].table_id == table_id
            && lc->pairs[i].cookie == cookie) {
            return true;
        }
    }
    return false;
}

static bool
collect_pairs(const struct fdp_rule *r, void *lc_)
{
    struct fdp__learn_cookies *lc = lc_;
    const struct fdp_actions *acts = fdp__rule_actions(r);

    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a)) {
        const struct fdp__learn *l = fdp__learn_of(a);
        if (a->type != FDP_ACT_LEARN
            || !(l->flags & FDP__LEARN_DELETE_LEARNED)
            || has_pair(lc, l->table_id, l->cookie)) {
            continue;
        }
        if (lc->n == lc->alloc) {
            size_t alloc = lc->alloc ? 2 * lc->alloc : 8;
            struct learn_cookie *p = realloc(lc->pairs, alloc * sizeof *p);
            if (!p) {
                lc->failed = true;
                return false;
            }
            lc->pairs = p;
            lc->alloc = alloc;
        }
        lc->pairs[lc->n++] = (struct learn_cookie) {
            .cookie = l->cookie, .table_id = l->table_id,
        };
    }
    return true;
}

int
fdp_pipeline_delete_learned(struct fdp_pipeline *p, size_t *n)
{
    struct fdp__learn_cookies **slot = fdp__pipeline_learned_cookies(p);

    *n = 0;
    /* Each round deletes the flows of the pairs that went away; those
     * flows may hold pairs of their own, which the next round finds gone.
     * Every round that deletes removes flows, so the rounds end. */
    for (;;) {
        struct fdp__learn_cookies *now = calloc(1, sizeof *now);
        if (!now) {
            return ENOMEM;
        }
        fdp_table_read_lock();
        fdp_pipeline_for_each(p, FDP_TABLE_ALL, collect_pairs, now);
        fdp_table_read_unlock();
        if (now->failed) {
            fdp__learn_cookies_free(now);
            return ENOMEM;
        }
        struct fdp__learn_cookies *before = *slot;
        *slot = now;
        size_t deleted = 0;
        for (size_t i = 0; before && i < before->n; i++) {
            const struct learn_cookie *lc = &before->pairs[i];
            if (has_pair(now, lc->table_id, lc->cookie)) {
                continue;
            }
            struct fdp_table_filter f = {
                .cookie = lc->cookie, .cookie_mask = UINT64_MAX,
            };
            size_t k = 0;
            int error = fdp_pipeline_remove(p, lc->table_id, &f, &k);
            if (error) {
                fdp__learn_cookies_free(before);
                return error;
            }
            deleted += k;
        }
        fdp__learn_cookies_free(before);
        *n += deleted;
        if (!deleted) {
            return 0;
        }
    }
}
