/*
 * The learn and fin_timeout actions (internal): their records, their text
 * and what a learn action adds for a given key.  See lib/learn.c.
 */
#ifndef FDP_LEARN_H
#define FDP_LEARN_H 1

#include <stdbool.h>
#include <stdint.h>

#include "lib/actions-internal.h"
#include "lib/ds.h"
#include <flowdp/flow.h>
#include <flowdp/key.h>

struct fdp_match;

/* learn(...)'s flags (Open vSwitch's NX_LEARN_F_*), in struct
 * fdp__learn's 'flags'. */
enum {
    FDP__LEARN_SEND_FLOW_REM = 1 << 0,
    FDP__LEARN_DELETE_LEARNED = 1 << 1,
    FDP__LEARN_WRITE_RESULT = 1 << 2,
};

/* A FDP_ACT_LEARN record's 'flags': the resolved form (lib/learn.c,
 * "Records"), what the pipeline composes for the datapath. */
#define FDP__ACT_LEARN_RESOLVED 0x80

/* The kinds of spec: where the bits come from and where they go. */
enum fdp__learn_spec_kind {
    FDP__LS_MATCH_FIELD,    /* DST[a..b]=SRC[c..d], or FIELD[a..b] */
    FDP__LS_MATCH_IMM,      /* DST[a..b]=VALUE */
    FDP__LS_LOAD_FIELD,     /* load:SRC[c..d]->DST[a..b] */
    FDP__LS_LOAD_IMM,       /* load:VALUE->DST[a..b] */
    FDP__LS_OUTPUT,         /* output:SRC[c..d] */
    FDP__LS_OUTPUT_IMM,     /* (resolved form only) output to a port */
};

/* The fixed part of a learn record, after its header. */
struct fdp__learn {
    uint64_t cookie;
    uint32_t limit;             /* 0: none. */
    uint16_t idle_timeout;      /* 0: none (OFP_FLOW_PERMANENT). */
    uint16_t hard_timeout;
    uint16_t fin_idle_timeout;
    uint16_t fin_hard_timeout;
    uint16_t priority;
    uint8_t table_id;
    uint8_t flags;              /* FDP__LEARN_*. */
    uint8_t result_nxm;         /* result_dst: fdp__nxm_fields[] index, */
    uint8_t result_ofs;         /* and bit. */
    uint8_t n_specs;
    uint8_t result;             /* Resolved form: 1 if the flow is learned
                                 * (result_dst's value). */
    uint32_t pad_;
};

#define FDP__LEARN_WORDS 4
static_assert(sizeof(struct fdp__learn) == FDP__LEARN_WORDS * 8,
              "a learn record's fixed part is four words");

/* One spec: one word, then for the immediate kinds two more, the value
 * (high word, low word) in the destination's units, bit 0 being the
 * subfield's first bit. */
struct fdp__learn_spec {
    uint8_t kind;               /* enum fdp__learn_spec_kind */
    uint8_t n_bits;             /* 1..128 */
    uint8_t src_nxm;            /* fdp__nxm_fields[] index of the source, */
    uint8_t src_ofs;            /* its first bit; */
    uint8_t dst_nxm;            /* of the destination, */
    uint8_t dst_ofs;            /* its first bit; */
    uint8_t full_name;          /* MATCH_IMM: printed "name=VALUE". */
    uint8_t pad_;
};

static_assert(sizeof(struct fdp__learn_spec) == 8, "a spec is one word");

static inline bool
fdp__learn_spec_is_imm(const struct fdp__learn_spec *s)
{
    return s->kind == FDP__LS_MATCH_IMM || s->kind == FDP__LS_LOAD_IMM
           || s->kind == FDP__LS_OUTPUT_IMM;
}

static inline const struct fdp__learn *
fdp__learn_of(const struct fdp__action *a)
{
    return (const struct fdp__learn *) (const void *) (a + 1);
}

/* The parser's environment (lib/flow-parse.c): the learning flow's match,
 * for the sources' prerequisites, and a reader of a field's value in the
 * match syntax (true if 's' is one). */
struct fdp__learn_parse_env {
    const struct fdp_match *match;
    bool (*parse_value)(enum fdp_field, const char *s, fdp_u128 *value);
};

/* Parses learn's argument 'arg' (modified; NULL for "learn()") as
 * ovs-ofctl does (learn_parse() in Open vSwitch's lib/learn.c) and appends
 * the record to 'b'.  Returns 0, or EINVAL with '*msg' a malloc()'d
 * message naming what is wrong. */
int fdp__learn_parse(char *arg, const struct fdp__learn_parse_env *,
                     struct fdp__actions_builder *b, char **msg);

/* fin_timeout(idle_timeout=N,hard_timeout=N): the same contract. */
int fdp__fin_timeout_parse(char *arg, struct fdp__actions_builder *b,
                           char **msg);

/* Appends learn record 'a' (either form) as ovs-ofctl prints it. */
void fdp__learn_format(struct fdp__ds *, const struct fdp__action *a);
void fdp__fin_timeout_format(struct fdp__ds *, const struct fdp__action *a);

/* The parts of a FDP_ACT_FIN_TIMEOUT record. */
static inline uint16_t
fdp__fin_idle(const struct fdp__action *a)
{
    return (uint16_t) (a->arg & 0xffff);
}

static inline uint16_t
fdp__fin_hard(const struct fdp__action *a)
{
    return (uint16_t) (a->arg >> 16);
}

/* Resolution, at composition time (lib/pipeline.c).  Appends to 'b' the
 * resolved form of flow-form learn record 'a' for key 'key': every
 * source read from the key, so that the record says alone what flow to
 * add (fdp__learn_materialize()).  'result' is stored as the record's
 * result.  Returns 0 or ENOMEM (the builder's error). */
int fdp__learn_resolve(const struct fdp__action *a, const struct fdp_key *key,
                       bool result, struct fdp__actions_builder *b);

/* Builds the flow that resolved learn record 'a' adds into '*spec' (which
 * the caller destroys with fdp_flow_spec_destroy()).  Returns 0, ENOMEM,
 * or EINVAL if 'a' is not a well-formed resolved record. */
int fdp__learn_materialize(const struct fdp__action *a,
                           struct fdp_flow_spec *spec);

struct fdp_pipeline;
struct fdp_rule;

/* What fdp__learn_apply() did, added to the counters. */
struct fdp__learn_stats {
    uint64_t n_added;       /* New flows. */
    uint64_t n_replaced;    /* Same match and priority, other actions,
                             * cookie or timeouts: replaced. */
    uint64_t n_refreshed;   /* The same flow: its timeouts restarted. */
    uint64_t n_over_limit;  /* Not added: limit=N reached. */
    uint64_t n_failed;      /* Malformed records, or the table refused. */
};

/* The table's writer: adds the flows of the 'n' resolved learn records
 * 'recs' to 'p' in one transaction (one new version, so the datapath's
 * caches see them together), or refreshes those already there, as Open
 * vSwitch's ofproto_flow_mod_learn() does.  A batch of refreshes only
 * publishes nothing.  Returns 0 or the pipeline's commit error;
 * per-record outcomes are counted in '*st'.
 *
 * Thread-safety: a modifier (takes the pipeline's mutex); the caller must
 * not be in a transaction of 'p'. */
int fdp__learn_apply(struct fdp_pipeline *p,
                     const struct fdp__action *const *recs, size_t n,
                     struct fdp__learn_stats *st);

/* The flows of table 'table_id' whose cookie is 'cookie' (what limit=N
 * counts).  A reader: the caller is in a read-side section. */
uint64_t fdp__learn_count_cookie(struct fdp_pipeline *p, uint8_t table_id,
                                 uint64_t cookie);

/* Open vSwitch's learned cookies: the (table, cookie) pairs of the
 * learn(delete_learned) actions of a pipeline's flows, as last seen by
 * fdp_pipeline_delete_learned(), kept in the pipeline (lib/pipeline.c
 * holds the pointer and frees it with this). */
struct fdp__learn_cookies;
void fdp__learn_cookies_free(struct fdp__learn_cookies *);
struct fdp__learn_cookies **fdp__pipeline_learned_cookies(
    struct fdp_pipeline *);

/* Defined in lib/pipeline.c for the writer here: the ordinary flow
 * (match, priority) of table 'table_id', within the caller's transaction
 * of 'p', or NULL. */
const struct fdp_rule *fdp__pipeline_find(struct fdp_pipeline *p,
                                          uint8_t table_id,
                                          const struct fdp_match *match,
                                          uint16_t priority);

/* The record's size in words: the header, the fixed part and the
 * specs. */
size_t fdp__learn_record_words(const struct fdp__action *a);

#endif /* FDP_LEARN_H */
