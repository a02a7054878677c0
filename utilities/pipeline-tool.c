/*
 * The multi-table pipeline as flowdpd and flowdp-ctl present it (see
 * pipeline-tool.h).
 */
#include <config.h>

#include "utilities/pipeline-tool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/actions-internal.h"
#include "utilities/tool.h"

/* ---------------------------------------------------------------------- */
/* Which table a flow text names.                                          */

/* The flow parser (lib/flow-parse.c) splits a flow's text at commas and
 * white space; "actions=" at the start of a token starts the actions,
 * which may hold anything.  fdp_flow_spec says which table a flow is in
 * but not whether the text said so (table 0 is also the default), so the
 * tokens before the actions are looked at here. */
bool
flow_text_names_table(const char *text)
{
    static const char seps[] = ", \t\r\n";
    const char *s = text;

    for (;;) {
        s += strspn(s, seps);
        if (!*s) {
            return false;
        }
        size_t len = strcspn(s, seps);
        if (len >= 8 && !strncmp(s, "actions=", 8)) {
            return false;
        }
        if (len >= 6 && !strncmp(s, "table=", 6)) {
            return true;
        }
        s += len;
    }
}

uint8_t
flow_text_table(const char *text, const struct fdp_flow_spec *spec)
{
    return flow_text_names_table(text) ? spec->table_id : FDP_TABLE_ALL;
}

char *
format_registers(const struct fdp_key *key)
{
    char *text = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&text, &size);
    bool any = false;

    if (!stream) {
        return NULL;
    }
    /* reg0..reg15 and metadata; the xregs are pairs of the same regs. */
    for (int f = FDP_F_REG0; f <= FDP_F_REG15; f++) {
        uint64_t v = fdp_key_get(key, (enum fdp_field) f).lo;
        if (v) {
            fprintf(stream, "%s%s=%#" PRIx64, any ? "," : "",
                    fdp_field_name((enum fdp_field) f), v);
            any = true;
        }
    }
    uint64_t metadata = fdp_key_get(key, FDP_F_METADATA).lo;
    if (metadata) {
        fprintf(stream, "%smetadata=%#" PRIx64, any ? "," : "", metadata);
    }
    if (fclose(stream)) {
        free(text);
        return NULL;
    }
    return text;
}

/* ---------------------------------------------------------------------- */
/* trace: building the object.                                             */

static const char *const step_kinds[] = {
    [FDP_STEP_START] = "start",
    [FDP_STEP_GOTO] = "goto",
    [FDP_STEP_RESUBMIT] = "resubmit",
    [FDP_STEP_CT] = "ct",
};

struct trace_ctx {
    json_t *steps;              /* The lookups, in the order made. */
    size_t *open;               /* Indexes in 'steps' of the hits whose */
    size_t n_open, alloc_open;  /* actions are running, innermost last. */
    struct fdp_match *match;    /* Storage for fdp_rule_get_spec(). */
    bool failed;                /* Out of memory. */
};

/* The flow of 'rule' as a trace shows it: canonical text, without
 * "table=N" (the trace line names the table). */
static int
add_flow_json(json_t *o, const struct fdp_rule *rule,
              struct fdp_match *match)
{
    struct fdp_flow_spec spec;

    fdp_rule_get_spec(rule, &spec, match);
    spec.table_id = 0;
    char *text = fdp_flow_format(&spec);
    int error = (!text
                 || json_object_set_new(o, "flow", json_string(text))
                 || json_object_set_new(o, "cookie",
                                        json_integer((json_int_t)
                                                     spec.cookie)));
    free(text);
    return error ? ENOMEM : 0;
}

static json_t *
step_json(const struct fdp_pipeline_step *step, struct fdp_match *match)
{
    json_t *o = json_pack("{s:i, s:s, s:i}", "table", (int) step->table_id,
                          "kind", step->kind < sizeof step_kinds
                                               / sizeof *step_kinds
                                  ? step_kinds[step->kind] : "?",
                          "depth", (int) step->depth);
    if (!o) {
        return NULL;
    }
    if (step->rule && add_flow_json(o, step->rule, match)) {
        json_decref(o);
        return NULL;
    }
    if (step->conj_id
        && json_object_set_new(o, "conj_id",
                               json_integer((json_int_t) step->conj_id))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The hit whose actions just ended gets the registers they left. */
static void
trace_done(struct trace_ctx *ctx, const struct fdp_key *key)
{
    if (!ctx->n_open) {
        return;                 /* No hit open: nothing to fill in. */
    }
    json_t *o = json_array_get(ctx->steps, ctx->open[--ctx->n_open]);
    char *regs = format_registers(key);
    if (!regs
        || (*regs && json_object_set_new(o, "registers",
                                         json_string(regs)))) {
        ctx->failed = true;
    }
    free(regs);
}

/* fdp_pipeline_trace_cb: a lookup is listed when it is made (so in the
 * order made, a resubmit's after the flow that made it); a hit's
 * registers are filled in when its actions are done (the resubmits they
 * made come in between, nested). */
static void
trace_cb(void *ctx_, const struct fdp_pipeline_step *step,
         const struct fdp_key *key, bool done)
{
    struct trace_ctx *ctx = ctx_;

    if (ctx->failed) {
        return;
    }
    if (done) {
        trace_done(ctx, key);
        return;
    }
    if (step->rule && ctx->n_open == ctx->alloc_open) {
        size_t alloc = ctx->alloc_open ? 2 * ctx->alloc_open : 16;
        size_t *p = realloc(ctx->open, alloc * sizeof *p);
        if (!p) {
            ctx->failed = true;
            return;
        }
        ctx->open = p;
        ctx->alloc_open = alloc;
    }
    if (json_array_append_new(ctx->steps, step_json(step, ctx->match))) {
        ctx->failed = true;
        return;
    }
    if (step->rule) {
        ctx->open[ctx->n_open++] = json_array_size(ctx->steps) - 1;
    }
}

/* The match the composed actions are printed against: the packet's
 * protocol, so that a set_field shows the name ovs-ofctl gives it. */
static struct fdp_match *
packet_match(const struct fdp_key *key)
{
    static const enum fdp_field fields[] = { FDP_F_DL_TYPE, FDP_F_NW_PROTO };
    struct fdp_match *m = fdp_match_create();

    for (size_t i = 0; m && i < sizeof fields / sizeof *fields; i++) {
        struct fdp_value v = fdp_key_get(key, fields[i]);
        unsigned int width = fdp_field_width(fields[i]);
        struct fdp_value mask = { 0, (UINT64_C(1) << width) - 1 };
        if ((v.lo || v.hi) && fdp_match_set_masked(m, fields[i], v, mask)) {
            fdp_match_destroy(m);
            m = NULL;
        }
    }
    return m;
}

static json_t *
trace_result_json(struct trace_ctx *ctx, const struct fdp_pipeline_result *r,
                  const struct fdp_key *key)
{
    struct fdp_match *m = packet_match(key);
    char *actions = (m && !r->limit_dropped && r->actions
                     && fdp_actions_count(r->actions)
                     ? fdp_actions_format(r->actions, m)
                     : m ? strdup("drop") : NULL);
    fdp_match_destroy(m);
    json_t *o = (actions
                 ? json_pack("{s:O, s:s, s:b, s:b}", "steps", ctx->steps,
                             "actions", actions,
                             "table_missed", r->table_missed,
                             "limit_dropped", r->limit_dropped)
                 : NULL);
    free(actions);
    if (o && r->actions && !r->limit_dropped) {
        /* For the daemon's additions (flowdpd-tunnel.c): the ports the
         * composed actions output to, and the key as they leave it (its
         * words in hex), which say what a tunnel port does. */
        json_t *outs = json_array(), *words = json_array();
        for (const struct fdp__action *a = fdp__actions_first(r->actions);
             a && outs; a = fdp__actions_next(r->actions, a)) {
            if (a->type == FDP_ACT_OUTPUT) {
                json_array_append_new(outs, json_integer(a->arg));
            }
        }
        for (size_t w = 0; w < FDP_KEY_WORDS && words; w++) {
            char hex[17];
            snprintf(hex, sizeof hex, "%016" PRIx64, r->key.w[w]);
            json_array_append_new(words, json_string(hex));
        }
        json_object_set_new(o, "outputs", outs);
        json_object_set_new(o, "final_key", words);
    }
    return o;
}

/* The ct(table=N) continuations a trace has yet to follow, first in first
 * out as ofproto/trace's recirculation queue: where each starts. */
struct ct_resume {
    struct fdp_key key;
    unsigned int table;
};

struct ct_queue {
    struct ct_resume *items;
    size_t n, alloc;
    bool failed;
};

/* fdp_pipeline_ct_cb: queues a continuation. */
static void
trace_ct_cb(void *q_, const struct fdp_key *key, unsigned int table)
{
    struct ct_queue *q = q_;

    if (q->failed) {
        return;
    }
    if (q->n == q->alloc) {
        size_t alloc = q->alloc ? 2 * q->alloc : 4;
        struct ct_resume *items = realloc(q->items, alloc * sizeof *items);
        if (!items) {
            q->failed = true;
            return;
        }
        q->items = items;
        q->alloc = alloc;
    }
    q->items[q->n++] = (struct ct_resume) { .key = *key, .table = table };
}

/* ct_state's flags joined by '|' in bit order ("new|trk"), as Open
 * vSwitch's format_flags() prints them; "0" for none. */
static void
format_ct_state(char *buf, size_t size, unsigned int state)
{
    static const char *const names[] = {
        "new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat",
    };
    size_t len = 0;

    buf[0] = '\0';
    for (unsigned int i = 0; i < 8; i++) {
        if (state & (1u << i) && len < size) {
            len += (size_t) snprintf(buf + len, size - len, "%s%s",
                                     len ? "|" : "", names[i]);
        }
    }
    if (!len) {
        snprintf(buf, size, "0");
    }
}

const char *
parse_ct_next(const char *text, uint8_t *state)
{
    static const char *const names[] = {
        "new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat",
    };
    unsigned int set = 0, cleared = 0;
    const char *s = text;

    if (!*s) {
        return "empty ct_state";
    }
    while (*s) {
        char sign = *s == '+' || *s == '-' ? *s++ : '+';
        size_t len = strcspn(s, "|+-");
        unsigned int bit = 0;
        for (unsigned int i = 0; i < sizeof names / sizeof *names && !bit;
             i++) {
            if (strlen(names[i]) == len && !strncmp(s, names[i], len)) {
                bit = 1u << i;
            }
        }
        if (!bit) {
            return "unknown ct_state flag (new, est, rel, rpl, inv, trk, "
                   "snat, dnat)";
        }
        if ((set | cleared) & bit) {
            return "a ct_state flag given twice";
        }
        if (sign == '+') {
            set |= bit;
        } else {
            cleared |= bit;
        }
        s += len;
        if (*s == '|') {
            s++;
            if (!*s) {
                return "ct_state ends in '|'";
            }
        }
    }
    /* Open vSwitch's validate_ct_state(): a packet the tracker has not
     * seen has no other state, and new excludes est, inv excludes the
     * rest. */
    if (set && !(set & FDP_CT_TRK)) {
        return "ct_state flags other than trk need trk";
    }
    if ((set & FDP_CT_NEW) && (set & (FDP_CT_EST | FDP_CT_REL))) {
        return "ct_state new is inconsistent with est and rel";
    }
    if ((set & FDP_CT_INV) && (set & ~(FDP_CT_INV | FDP_CT_TRK))) {
        return "ct_state inv excludes every flag but trk";
    }
    *state = (uint8_t) set;
    return NULL;
}

/* One pass of a trace (from table 0, or a continuation from 'table'), as
 * the object pipeline-tool.h describes; NULL if out of memory. */
static json_t *
trace_pass(struct fdp_pipeline *p, const struct fdp_key *key, int table,
           struct ct_queue *q)
{
    struct fdp_pipeline_result r;
    struct trace_ctx ctx = {
        .steps = json_array(), .match = fdp_match_create(),
    };
    json_t *o = NULL;

    fdp_pipeline_result_init(&r);
    if (ctx.steps && ctx.match
        && !fdp_pipeline_classify_ct(p, key, table, &r, trace_cb, &ctx,
                                     trace_ct_cb, q)
        && !ctx.failed && !q->failed) {
        o = trace_result_json(&ctx, &r, key);
    }
    json_decref(ctx.steps);
    free(ctx.open);
    fdp_match_destroy(ctx.match);
    fdp_pipeline_result_destroy(&r);
    return o;
}

json_t *
trace_json(struct fdp_pipeline *p, const struct fdp_key *key,
           const uint8_t *ct_next, size_t n_ct_next)
{
    struct ct_queue q = { .items = NULL };
    json_t *o = trace_pass(p, key, -1, &q);
    json_t *resumes = json_array();

    /* Each continuation in turn; one that does ct(table=N) again queues
     * another.  A pipeline that loops through the tracker (ct(table=0)
     * from table 0 for a packet the default state sends back) would go on
     * for ever, which ofproto/trace does; a trace stops after
     * TRACE_MAX_RESUMES and says so. */
    enum { TRACE_MAX_RESUMES = 32 };
    size_t i;
    for (i = 0; o && resumes && i < q.n && i < TRACE_MAX_RESUMES; i++) {
        struct ct_resume c = q.items[i];
        bool dflt = i >= n_ct_next;
        unsigned int state = dflt ? FDP_CT_TRK | FDP_CT_NEW : ct_next[i];
        char text[64];

        fdp_key_set(&c.key, FDP_F_CT_STATE,
                    (struct fdp_value) { 0, state });
        if (dflt) {
            /* ofproto/trace's words for its default. */
            snprintf(text, sizeof text, "trk|new");
        } else {
            format_ct_state(text, sizeof text, state);
        }
        json_t *pass = trace_pass(p, &c.key, (int) c.table, &q);
        if (!pass
            || json_object_set_new(pass, "table", json_integer(c.table))
            || json_object_set_new(pass, "zone", json_integer(
                   (json_int_t) fdp_key_get(&c.key, FDP_F_CT_ZONE).lo))
            || json_object_set_new(pass, "ct_state", json_string(text))
            || json_object_set_new(pass, "default_state",
                                   json_boolean(dflt))
            || json_array_append_new(resumes, pass)) {
            json_decref(o);
            o = NULL;
        }
    }
    if (o && resumes
        && (json_object_set(o, "resumes", resumes)
            || json_object_set_new(o, "resumes_cut",
                                   json_boolean(i < q.n)))) {
        json_decref(o);
        o = NULL;
    }
    json_decref(resumes);
    free(q.items);
    return o;
}

/* ---------------------------------------------------------------------- */
/* trace: printing.                                                        */

static long long
get_int(const json_t *o, const char *key)
{
    return (long long) json_integer_value(json_object_get(o, key));
}

/* How the lookup of 'kind' in 'table' is named on its line. */
static void
print_step_head(FILE *stream, const char *kind, long long table)
{
    if (kind && !strcmp(kind, "goto")) {
        fprintf(stream, "goto_table:%lld: ", table);
    } else if (kind && !strcmp(kind, "resubmit")) {
        fprintf(stream, "resubmit(,%lld): ", table);
    } else {
        fprintf(stream, "table %lld: ", table);
    }
}

static void
print_step(FILE *stream, const json_t *step)
{
    const char *kind = json_string_value(json_object_get(step, "kind"));
    const char *flow = json_string_value(json_object_get(step, "flow"));
    const char *regs = json_string_value(json_object_get(step, "registers"));
    long long depth = get_int(step, "depth");
    int indent = (int) (depth < 0 ? 0 : depth > 64 ? 64 : depth) * 4;

    fprintf(stream, "%*s", indent, "");
    print_step_head(stream, kind, get_int(step, "table"));
    if (!flow) {
        fputs(kind && !strcmp(kind, "resubmit")
              ? "no match: the resubmit does nothing\n"
              : "no match: a table miss ends the pipeline\n", stream);
        return;
    }
    fputs(flow, stream);
    if (get_int(step, "conj_id")) {
        fprintf(stream, " (conjunction %lld)", get_int(step, "conj_id"));
    }
    fputc('\n', stream);
    if (regs) {
        fprintf(stream, "%*s    registers: %s\n", indent, "", regs);
    }
}

/* The steps and actions of one pass. */
static void
print_pass(FILE *stream, const json_t *pass)
{
    const json_t *steps = json_object_get(pass, "steps");
    const char *actions = json_string_value(json_object_get(pass,
                                                            "actions"));

    for (size_t i = 0; i < json_array_size(steps); i++) {
        print_step(stream, json_array_get(steps, i));
    }
    if (json_is_true(json_object_get(pass, "limit_dropped"))) {
        fprintf(stream, "Resubmit limit: more than %d nested or %d in all; "
                "the packet is dropped whole.\n", FDP_PIPELINE_MAX_DEPTH,
                FDP_PIPELINE_MAX_RESUBMITS);
    }
    fprintf(stream, "Actions: %s\n", actions ? actions : "drop");
    const char *normal = json_string_value(json_object_get(pass, "normal"));
    if (normal) {
        fprintf(stream, "NORMAL: %s\n", normal);
    }
    const json_t *tunnels = json_object_get(pass, "tunnels");
    for (size_t i = 0; i < json_array_size(tunnels); i++) {
        fprintf(stream, "Tunnel: %s\n",
                json_string_value(json_array_get(tunnels, i)));
    }
}

void
trace_print(FILE *stream, const char *packet, const json_t *trace)
{
    const json_t *resumes = json_object_get(trace, "resumes");

    fprintf(stream, "Packet: %s\n", packet);
    print_pass(stream, trace);
    for (size_t i = 0; i < json_array_size(resumes); i++) {
        const json_t *r = json_array_get(resumes, i);
        const char *state = json_string_value(json_object_get(r,
                                                              "ct_state"));
        fprintf(stream, "\nct(table=%lld): resume conntrack in zone %lld "
                "with %sct_state=%s%s\n", get_int(r, "table"),
                get_int(r, "zone"),
                json_is_true(json_object_get(r, "default_state"))
                ? "default " : "", state ? state : "?",
                json_is_true(json_object_get(r, "default_state"))
                ? " (use --ct-next to customize)" : "");
        print_pass(stream, r);
    }
    if (json_is_true(json_object_get(trace, "resumes_cut"))) {
        fprintf(stream, "\nThe trace stops here: the continuations of "
                "ct(table=N) go on past %zu.\n", json_array_size(resumes));
    }
}

void
print_classify_result(FILE *stream, const struct fdp_pipeline_result *r)
{
    for (size_t i = 0; i < r->n_steps; i++) {
        const struct fdp_rule *rule = r->steps[i].rule;
        if (i) {
            fputc(',', stream);
        }
        if (rule) {
            fprintf(stream, "%#" PRIx64, fdp_rule_get_cookie(rule));
        } else {
            fputs("miss", stream);
        }
    }
    if (r->limit_dropped) {
        fputs(r->n_steps ? ",limit" : "limit", stream);
    }
    fputc('\n', stream);
}
