/*
 * Unit tests for lib/ofp-actions.c, the OpenFlow action and instruction
 * codec.
 *
 * The wire vectors are tests/ofp-actions.data, which
 * tests/ofp-actions-gen.py made with Debian's ovs-ofctl 3.1 as the oracle
 * (the bytes ovs-ofctl sends for a flow's actions in OpenFlow 1.0, 1.3 and
 * 1.5, and what it prints for those bytes); no ovs-ofctl is needed here.
 * For each vector: the text through flowdp's flow parser and the encoder
 * gives the same bytes; the bytes through the decoder and flowdp's
 * formatter give the text ovs-ofctl printed; and the decoded list encodes
 * back to the same bytes.  Then hostile input: random bytes and the
 * vectors with random mutations, from the run's printed seed, either
 * decode or return an OpenFlow error, and never read past their buffer
 * (ASan builds check that; here each input is copied into a buffer of
 * exactly its size).  And hand-made malformed actions give the errors
 * Open vSwitch gives.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "lib/actions-internal.h"
#include "lib/ofp-actions.h"
#include "lib/ofp-common.h"
#include "lib/ofp-match.h"
#include "lib/util.h"
#include "unit.h"

/* One line of tests/ofp-actions.data. */
struct vector {
    int line;
    enum fdp_ofp_version v;
    char *match;                /* "" for none. */
    char *actions;              /* The text given to ovs-ofctl. */
    uint8_t *wire;
    size_t wire_size;
    char *printed;              /* What ovs-ofctl printed for 'wire'. */
};

static struct vector *vectors;
static size_t n_vectors;

static int
hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : -1;
}

static enum fdp_ofp_version
version_from_name(const char *s)
{
    return !strcmp(s, "OpenFlow10") ? FDP_OFP10
           : !strcmp(s, "OpenFlow13") ? FDP_OFP13
           : !strcmp(s, "OpenFlow15") ? FDP_OFP15
           : 0;
}

/* Reads the data file once ($FLOWDP_SRCDIR/tests/ofp-actions.data, or
 * the source tree relative to the build directory). */
static void
load_vectors(void)
{
    const char *dir = getenv("FLOWDP_SRCDIR");
    char path[4096];
    char line[16384];

    if (vectors) {
        return;
    }
    snprintf(path, sizeof path, "%s/tests/ofp-actions.data",
             dir ? dir : "..");
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s (set FLOWDP_SRCDIR)", path);
    int lineno = 0;
    size_t alloc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || !line[0]) {
            continue;
        }
        char *cols[5];
        char *save = NULL;
        int n = 0;
        for (char *t = strtok_r(line, "\t", &save); t && n < 5;
             t = strtok_r(NULL, "\t", &save)) {
            cols[n++] = t;
        }
        ck_assert_msg(n == 5, "%s:%d: expected 5 columns", path, lineno);
        if (n_vectors == alloc) {
            alloc = alloc ? 2 * alloc : 64;
            vectors = realloc(vectors, alloc * sizeof *vectors);
            ck_assert_ptr_nonnull(vectors);
        }
        struct vector *vec = &vectors[n_vectors++];
        vec->line = lineno;
        vec->v = version_from_name(cols[0]);
        ck_assert_msg(vec->v, "%s:%d: bad version", path, lineno);
        vec->match = strdup(strcmp(cols[1], "-") ? cols[1] : "");
        vec->actions = strdup(cols[2]);
        vec->printed = strdup(cols[4]);
        size_t hl = strcmp(cols[3], "-") ? strlen(cols[3]) : 0;
        ck_assert_msg(hl % 2 == 0, "%s:%d: odd hex", path, lineno);
        vec->wire_size = hl / 2;
        vec->wire = malloc(vec->wire_size + 1);
        for (size_t i = 0; i < vec->wire_size; i++) {
            int hi = hexval(cols[3][2 * i]), lo = hexval(cols[3][2 * i + 1]);
            ck_assert_msg(hi >= 0 && lo >= 0, "%s:%d: bad hex", path, lineno);
            vec->wire[i] = (uint8_t) (hi << 4 | lo);
        }
    }
    fclose(f);
    ck_assert_uint_gt(n_vectors, 100);
}

/* The error's name (lib/ofp-msgs.c has fdp_ofperr_name(), which this
 * test does not link). */
static const char *
err_name(int error)
{
#define ERR_NAME(NAME) case FDP_##NAME: return #NAME;
    switch (error) {
    FDP_OFPERRS(ERR_NAME)
    default: return "(not an OpenFlow error)";
    }
#undef ERR_NAME
}

static const char *
vname(enum fdp_ofp_version v)
{
    return v == FDP_OFP10 ? "OpenFlow10" : v == FDP_OFP13 ? "OpenFlow13"
                                                          : "OpenFlow15";
}

static char *
to_hex(const uint8_t *p, size_t n)
{
    char *s = malloc(2 * n + 2);
    for (size_t i = 0; i < n; i++) {
        sprintf(s + 2 * i, "%02x", p[i]);
    }
    s[2 * n] = '\0';
    if (!n) {
        strcpy(s, "-");
    }
    return s;
}

/* Encodes 'acts' as a flow's list for version 'v' (instructions in
 * 1.1+, as a flow mod carries them). */
static int
encode(struct fdp__ofpbuf *b, const struct fdp_actions *acts,
       enum fdp_ofp_version v, const struct fdp_match *m)
{
    return v == FDP_OFP10
           ? fdp__ofp_actions_put_match(b, acts, v, NULL, m)
           : fdp__ofp_instructions_put_match(b, acts, v, NULL, m);
}

static int
decode(const uint8_t *p, size_t n, enum fdp_ofp_version v,
       struct fdp_actions **actsp)
{
    struct fdp__ofp_reader r;

    fdp__ofp_reader_init(&r, p, n);
    return fdp__ofp_instructions_pull(&r, n, v, NULL, actsp);
}

/* What flowdp cannot say as ovs-ofctl does, with the reason; a vector
 * listed here is checked only for what is named.
 *   ENCODE: flowdp's parser keeps a different record (so the encoding
 *           differs); DECODE: the decoded list prints differently. */
struct known {
    const char *version;        /* NULL: every version. */
    const char *actions;
    bool encode_differs, print_differs;
    const char *why;
};

#define VLAN_PRINT "flowdp keeps OXM vlan_vid/vlan_pcp writes as " \
    "mod_vlan_vid/mod_vlan_pcp (it has no set_field to them) and prints " \
    "pop_vlan as strip_vlan (its formatter has one spelling per record)"
#define MASKED_PRINT "flowdp prints every partial write as loads, as " \
    "ovs-ofctl prints it before 1.5; 1.5's masked set_field spelling is " \
    "not kept in the record"
#define DSCP_PRINT "flowdp prints OXM ip_dscp as nw_tos's TOS byte"
#define ENQUEUE "flowdp's enqueue:P:Q is the three records set_queue, " \
    "output and pop_queue, which encode as three actions"
#define DEC_TTL_IDS "flowdp's dec_ttl has no controller ids (the parser " \
    "refuses dec_ttl(1,2); the decoder refuses ids other than the one 0)"
#define PUSH128 "flowdp's push takes at most 64 bits (the parser " \
    "refuses push:NXM_NX_XXREG0[], the decoder its 128-bit push)"
#define FIN_TCP "flowdp's parser requires tcp for fin_timeout, where " \
    "ovs-ofctl checks it only when the flow is added"
#define TCP_FLAGS "flowdp does not write tcp_flags (its parser says " \
    "read-only; the decoder refuses it)"
static const struct known known[] = {
    { NULL, "set_field:0x10->tcp_flags", true, true, TCP_FLAGS },
    { NULL, "push:NXM_NX_XXREG0[]", true, true, PUSH128 },
    { NULL, "fin_timeout(hard_timeout=7)", true, false, FIN_TCP },
    { "OpenFlow13", "mod_vlan_vid:7", false, true, VLAN_PRINT },
    { "OpenFlow15", "mod_vlan_vid:7", false, true, VLAN_PRINT },
    { "OpenFlow15", "ct(commit,exec(set_field:0x1/0xff->ct_label))", false,
      true, MASKED_PRINT },
    { "OpenFlow15", "load:0x3->NXM_NX_PKT_MARK[4..5]", false, true,
      MASKED_PRINT },
    { NULL, "dec_ttl(1,2)", true, true, DEC_TTL_IDS },
    { NULL, "enqueue:1:2", true, true, ENQUEUE },
    { "OpenFlow13", "mod_vlan_vid:100", false, true, VLAN_PRINT },
    { "OpenFlow15", "mod_vlan_vid:100", false, true, VLAN_PRINT },
    { "OpenFlow13", "mod_vlan_pcp:5", false, true, VLAN_PRINT },
    { "OpenFlow15", "mod_vlan_pcp:5", false, true, VLAN_PRINT },
    { "OpenFlow13", "clone(mod_vlan_vid:10,output:2)", false, true,
      VLAN_PRINT },
    { "OpenFlow15", "clone(mod_vlan_vid:10,output:2)", false, true,
      VLAN_PRINT },
    { "OpenFlow13", "mod_vlan_vid:100,output:2,strip_vlan,mod_nw_ttl:7,"
      "output:3", false, true, VLAN_PRINT },
    { "OpenFlow15", "mod_vlan_vid:100,output:2,strip_vlan,mod_nw_ttl:7,"
      "output:3", false, true, VLAN_PRINT },
    { "OpenFlow13", "mod_vlan_pcp:2,push_vlan:0x88a8,mod_vlan_vid:200,"
      "output:2", false, true, VLAN_PRINT },
    { "OpenFlow15", "mod_vlan_pcp:2,push_vlan:0x88a8,mod_vlan_vid:200,"
      "output:2", false, true, VLAN_PRINT },
    { "OpenFlow13", "mod_nw_tos:48", false, true, DSCP_PRINT },
    { "OpenFlow15", "mod_nw_tos:48", false, true, DSCP_PRINT },
    { "OpenFlow13", "mod_nw_dst:10.9.9.9,mod_tp_dst:5353,mod_nw_tos:40,"
      "output:2,output:3", false, true, DSCP_PRINT },
    { "OpenFlow15", "mod_nw_dst:10.9.9.9,mod_tp_dst:5353,mod_nw_tos:40,"
      "output:2,output:3", false, true, DSCP_PRINT },
    { "OpenFlow15", "set_field:0x1234/0xffff->reg3", false, true,
      MASKED_PRINT },
    { "OpenFlow15", "load:0x5->NXM_NX_REG1[4..7]", false, true,
      MASKED_PRINT },
    { "OpenFlow15", "load:0xffff->NXM_NX_XXREG0[0..15]", false, true,
      MASKED_PRINT },
    { "OpenFlow15", "ct(commit,exec(load:0x1->NXM_NX_CT_LABEL[0..3]))",
      false, true, MASKED_PRINT },
};

static const struct known *
find_known(const struct vector *vec)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(known); i++) {
        if (known[i].why && !strcmp(known[i].actions, vec->actions)
            && (!known[i].version
                || !strcmp(known[i].version, vname(vec->v)))) {
            return &known[i];
        }
    }
    return NULL;
}

START_TEST(vectors_encode)
{
    int failures = 0;

    load_vectors();
    for (size_t i = 0; i < n_vectors; i++) {
        const struct vector *vec = &vectors[i];
        const struct known *k = find_known(vec);
        char text[8192];
        struct fdp_flow_spec flow;
        char *err = NULL;

        snprintf(text, sizeof text, "%s%sactions=%s", vec->match,
                 *vec->match ? "," : "", vec->actions);
        memset(&flow, 0, sizeof flow);
        int error = fdp_flow_parse(text, 0, &flow, &err);
        if (error && k && k->encode_differs) {
            free(err);
            continue;
        }
        if (error) {
            printf("line %d: %s: %s: flowdp cannot parse: %s\n", vec->line,
                   vname(vec->v), text, err ? err : "?");
            free(err);
            failures++;
            continue;
        }
        struct fdp__ofpbuf b;
        fdp__ofpbuf_init(&b);
        int n = encode(&b, flow.actions, vec->v, flow.match);
        char *got = n < 0 ? strdup("(no wire form)") : to_hex(b.data, b.size);
        char *want = to_hex(vec->wire, vec->wire_size);
        if (strcmp(got, want) && !(k && k->encode_differs)) {
            printf("line %d: %s: %s:\n  flowdp   %s\n  ovs-ofctl %s\n",
                   vec->line, vname(vec->v), text, got, want);
            failures++;
        }
        free(got);
        free(want);
        fdp__ofpbuf_uninit(&b);
        fdp_flow_spec_destroy(&flow);
    }
    ck_assert_msg(!failures, "%d vectors encode differently", failures);
}
END_TEST

START_TEST(vectors_decode)
{
    int failures = 0;

    load_vectors();
    for (size_t i = 0; i < n_vectors; i++) {
        const struct vector *vec = &vectors[i];
        const struct known *k = find_known(vec);
        struct fdp_flow_spec flow;
        char text[8192];
        char *err = NULL;

        /* The match names fields in the printed text (udp_src). */
        snprintf(text, sizeof text, "%s%sactions=drop", vec->match,
                 *vec->match ? "," : "");
        memset(&flow, 0, sizeof flow);
        ck_assert_int_eq(fdp_flow_parse(text, 0, &flow, &err), 0);

        struct fdp_actions *acts = NULL;
        uint8_t *copy = malloc(vec->wire_size + 1);
        memcpy(copy, vec->wire, vec->wire_size);
        int error = decode(copy, vec->wire_size, vec->v, &acts);
        if (error) {
            if (!(k && k->print_differs && k->encode_differs)) {
                printf("line %d: %s: %s: decode error %s\n", vec->line,
                       vname(vec->v), vec->actions, err_name(error));
                failures++;
            }
        } else {
            char *s = fdp_actions_format(acts, flow.match);
            if (strcmp(s, vec->printed) && !(k && k->print_differs)) {
                printf("line %d: %s: %s: prints\n  flowdp    %s\n"
                       "  ovs-ofctl %s\n", vec->line, vname(vec->v),
                       vec->actions, s, vec->printed);
                failures++;
            }
            free(s);

            /* And the decoded list encodes back to the same bytes. */
            struct fdp__ofpbuf b;
            fdp__ofpbuf_init(&b);
            int n = encode(&b, acts, vec->v, flow.match);
            if ((n < 0 || b.size != vec->wire_size
                 || (b.size && memcmp(b.data, vec->wire, b.size)))
                && !(k && k->encode_differs)) {
                char *got = n < 0 ? strdup("(no wire form)")
                                  : to_hex(b.data, b.size);
                printf("line %d: %s: %s: re-encodes as %s\n", vec->line,
                       vname(vec->v), vec->actions, got);
                free(got);
                failures++;
            }
            fdp__ofpbuf_uninit(&b);
        }
        fdp_actions_destroy(acts);
        free(copy);
        fdp_flow_spec_destroy(&flow);
    }
    ck_assert_msg(!failures, "%d vectors decode differently", failures);
}
END_TEST

/* The hostile-input property: 'p' either fails with an OpenFlow error
 * (never an errno, never a crash) or decodes to a list that encodes, and
 * whose encoding decodes and encodes to the same bytes.  Returns true if it decoded. */
static bool
check_hostile(const uint8_t *p, size_t n, enum fdp_ofp_version v, bool insts)
{
    struct fdp_actions *acts = NULL, *again = NULL;
    struct fdp__ofp_reader r;
    uint8_t *copy = malloc(n ? n : 1);

    memcpy(copy, p, n);
    fdp__ofp_reader_init(&r, copy, n);
    int error = insts ? fdp__ofp_instructions_pull(&r, n, v, NULL, &acts)
                      : fdp__ofp_actions_pull(&r, n, v, NULL, &acts);
    if (error) {
        ck_assert_msg(error > FDP__OFPERR_BASE && error < FDP__OFPERR_END,
                      "decode returned %d, not an OpenFlow error", error);
        ck_assert_ptr_null(acts);
    } else {
        struct fdp__ofpbuf b;
        fdp__ofpbuf_init(&b);
        int len = insts ? fdp__ofp_instructions_put(&b, acts, v, NULL)
                        : fdp__ofp_actions_put(&b, acts, v, NULL);
        char *hex = to_hex(copy, n);
        ck_assert_msg(len >= 0, "%s %s decodes but does not encode",
                      vname(v), hex);
        fdp__ofp_reader_init(&r, b.data, b.size);
        int e2 = insts ? fdp__ofp_instructions_pull(&r, b.size, v, NULL,
                                                    &again)
                       : fdp__ofp_actions_pull(&r, b.size, v, NULL, &again);
        ck_assert_msg(!e2, "%s %s: the re-encoding does not decode (%s)",
                      vname(v), hex, err_name(e2));
        /* The encoding is a fixed point (the lists may differ in
         * spelling: a whole-field reg_load is a set_field in 1.5). */
        struct fdp__ofpbuf b2;
        fdp__ofpbuf_init(&b2);
        len = insts ? fdp__ofp_instructions_put(&b2, again, v, NULL)
                    : fdp__ofp_actions_put(&b2, again, v, NULL);
        ck_assert_msg(len >= 0 && b2.size == b.size
                      && (!b.size || !memcmp(b.data, b2.data, b.size)),
                      "%s %s: the encoding is not a fixed point", vname(v),
                      hex);
        fdp__ofpbuf_uninit(&b2);
        free(hex);
        fdp__ofpbuf_uninit(&b);
    }
    fdp_actions_destroy(acts);
    fdp_actions_destroy(again);
    free(copy);
    return !error;
}

/* Random bytes, and the vectors with random mutations (a byte changed, a
 * length field changed, the list cut short or extended), from the run's
 * seed. */
START_TEST(hostile_input)
{
    struct unit_rng rng;
    uint8_t buf[512];
    unsigned int decoded = 0, total = 0;

    load_vectors();
    unit_rng_init(&rng, 0x0fac);
    for (int i = 0; i < 20000; i++) {
        static const enum fdp_ofp_version vs[] = {
            FDP_OFP10, FDP_OFP13, FDP_OFP15,
        };
        enum fdp_ofp_version v = vs[unit_rng_below(&rng, 3)];
        bool insts = unit_rng_below(&rng, 2);
        size_t n;
        if (i % 4 == 0) {
            /* Random actions with plausible headers: a type, a length
             * that is a multiple of 8, and random bytes. */
            n = 8 * (1 + unit_rng_below(&rng, 8));
            for (size_t j = 0; j < n; j++) {
                buf[j] = (uint8_t) unit_rng_next(&rng);
            }
            if (unit_rng_below(&rng, 2)) {
                buf[0] = 0xff;
                buf[1] = 0xff;
                buf[4] = 0;
                buf[5] = 0;
                buf[6] = 0x23;
                buf[7] = 0x20;
                buf[8 % n] = 0;
            }
            buf[2] = (uint8_t) (n >> 8);
            buf[3] = (uint8_t) n;
        } else {
            const struct vector *vec = &vectors[unit_rng_below(
                                                    &rng, (uint32_t) n_vectors)];
            v = vec->v;
            insts = v != FDP_OFP10;
            n = vec->wire_size;
            if (n > sizeof buf - 16) {
                continue;
            }
            memcpy(buf, vec->wire, n);
            unsigned int muts = 1 + unit_rng_below(&rng, 3);
            for (unsigned int m = 0; m < muts && n; m++) {
                switch (unit_rng_below(&rng, 4)) {
                case 0:
                    buf[unit_rng_below(&rng, (uint32_t) n)]
                        = (uint8_t) unit_rng_next(&rng);
                    break;
                case 1:
                    buf[unit_rng_below(&rng, (uint32_t) n)]
                        ^= (uint8_t) (1u << unit_rng_below(&rng, 8));
                    break;
                case 2:
                    n -= unit_rng_below(&rng, (uint32_t) n);
                    break;
                default:
                    for (int k = 0; k < 8; k++) {
                        buf[n++] = (uint8_t) unit_rng_next(&rng);
                    }
                    break;
                }
            }
        }
        total++;
        decoded += check_hostile(buf, n, v, insts);
    }
    printf("hostile_input: %u of %u inputs decoded\n", decoded, total);
}
END_TEST

static void
put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) {
        p[i] = (uint8_t) (v >> (8 * (n - 1 - i)));
    }
}

/* Every wire field row of lib/ofp-match.c in every action that names a
 * field (reg_load, set_field, move both ways, push, output:FIELD,
 * check_pkt_larger, ct's zone, a learn spec), with random offsets and
 * values: each decodes or fails with an OpenFlow error, and what decodes
 * encodes to a fixed point.  (A tun_metadataN row names no key field:
 * the actions must not take it as one.) */
START_TEST(every_field_in_every_action)
{
    struct unit_rng rng;
    unsigned int decoded = 0;

    unit_rng_init(&rng, 0xf1e1d);
    for (size_t i = 0; i < fdp__ofp_n_fields(); i++) {
        const struct fdp__ofp_field *row = fdp__ofp_field_at(i);
        uint32_t h = fdp__ofp_field_header(row);
        bool exp = h >> 16 == 0xffff;
        for (int k = 0; k < 40; k++) {
            uint8_t b[96];
            size_t n;
            unsigned int nb = 1 + unit_rng_below(&rng, 64);
            unsigned int ofs = unit_rng_below(&rng, 4) ? 0
                               : unit_rng_below(&rng, 128);
            uint64_t val = unit_rng_next(&rng);
            if (nb < 64 && unit_rng_below(&rng, 2)) {
                val &= (UINT64_C(1) << nb) - 1;
            }
            memset(b, 0, sizeof b);
            enum fdp_ofp_version v = k % 3 == 0 ? FDP_OFP10
                                     : k % 3 == 1 ? FDP_OFP13 : FDP_OFP15;
            switch (k % 8) {
            case 0:             /* NXAST_REG_LOAD */
                put_be(b, 0xffff0018, 4);
                put_be(b + 4, 0x00002320, 4);
                put_be(b + 8, 7, 2);
                put_be(b + 10, ofs << 6 | (nb - 1), 2);
                put_be(b + 12, h, 4);
                put_be(b + 16, val, 8);
                n = 24;
                break;
            case 1: {           /* OFPAT12_SET_FIELD */
                size_t len = 4 + (exp ? 8 : 4) + (h & 0xff);
                len = (len + 7) / 8 * 8;
                if (len > 48) {
                    continue;
                }
                put_be(b, 25, 2);
                put_be(b + 2, len, 2);
                put_be(b + 4, h, 4);
                if (exp) {
                    put_be(b + 8, fdp__ofp_field_experimenter(row), 4);
                }
                for (size_t j = exp ? 12 : 8; j < 4 + (exp ? 8 : 4)
                                                   + (h & 0xff); j++) {
                    b[j] = (uint8_t) unit_rng_next(&rng);
                }
                n = len;
                v = k & 1 ? FDP_OFP15 : FDP_OFP13;
                break;
            }
            case 2:             /* NXAST_REG_MOVE from the field */
            case 3:             /* and to it */
                put_be(b, 0xffff0018, 4);
                put_be(b + 4, 0x00002320, 4);
                put_be(b + 8, 6, 2);
                put_be(b + 10, nb, 2);
                put_be(b + 12, k % 8 == 2 ? ofs : 0, 2);
                put_be(b + 14, k % 8 == 3 ? ofs : 0, 2);
                put_be(b + 16, k % 8 == 2 ? h : 0x00010004, 4);
                put_be(b + 20, k % 8 == 3 ? h : 0x00010204, 4);
                n = 24;
                break;
            case 4:             /* NXAST_STACK_PUSH */
            case 5:             /* NXAST_OUTPUT_REG */
                put_be(b, 0xffff0018, 4);
                put_be(b + 4, 0x00002320, 4);
                put_be(b + 8, k % 8 == 4 ? 27 : 15, 2);
                if (k % 8 == 4) {
                    put_be(b + 10, ofs, 2);
                    put_be(b + 12, h, 4);
                    put_be(b + 16, nb, 2);
                } else {
                    put_be(b + 10, ofs << 6 | (nb - 1), 2);
                    put_be(b + 12, h, 4);
                    put_be(b + 16, 0xffff, 2);
                }
                n = 24;
                break;
            case 6:             /* NXAST_CHECK_PKT_LARGER, ct's zone */
                put_be(b, 0xffff0018, 4);
                put_be(b + 4, 0x00002320, 4);
                if (k & 1) {
                    put_be(b + 8, 49, 2);
                    put_be(b + 10, 1500, 2);
                    put_be(b + 12, ofs, 2);
                    put_be(b + 14, h, 4);
                } else {
                    put_be(b + 8, 35, 2);
                    put_be(b + 12, h, 4);
                    put_be(b + 16, ofs << 6 | 15, 2);
                    b[18] = 0xff;
                }
                n = 24;
                break;
            default:            /* A learn spec: match the field. */
                put_be(b, 0xffff0030, 4);
                put_be(b + 4, 0x00002320, 4);
                put_be(b + 8, 16, 2);
                b[26] = 1;          /* table */
                put_be(b + 32, nb, 2);
                put_be(b + 34, h, 4);
                put_be(b + 38, ofs, 2);
                put_be(b + 40, h, 4);
                put_be(b + 44, ofs, 2);
                n = 48;
                break;
            }
            decoded += check_hostile(b, n, v, false);
        }
    }
    printf("every_field_in_every_action: %u decoded\n", decoded);
    ck_assert_uint_gt(decoded, 100);
}
END_TEST

/* Wire forms that flowdp decodes but never writes, with what it prints
 * for them (ovs-ofctl prints the same, except where said). */
struct good_case {
    enum fdp_ofp_version v;
    const char *hex;
    const char *printed;
};

static const struct good_case good_cases[] = {
    /* ONF's copy_field in 1.3 (Open vSwitch's ofp-actions.at). */
    { FDP_OFP13, "ffff00204f4e46000c8000000010000000000000"
      "000000020000080200000000",
      "move:NXM_OF_IN_PORT[]->NXM_OF_VLAN_TCI[]" },
    /* NXAST_REG_LOAD2 of a whole register (ovs-ofctl prints it as
     * set_field:0x5->reg0; flowdp keeps the load spelling). */
    { FDP_OFP10, "ffff00180000232000210001000400000005000000000000",
      "load:0x5->NXM_NX_REG0[]" },
    /* NXAST_RESUBMIT, the old resubmit without a table. */
    { FDP_OFP10, "ffff0010000023200001000500000000", "resubmit:5" },
    /* OFPAT10_ENQUEUE, flowdp's three actions. */
    { FDP_OFP10, "000b0010000100000000000000000002",
      "set_queue:2,output:1,pop_queue" },
    /* NXAST_DEC_TTL_CNT_IDS with the one id 0: flowdp's dec_ttl (which
     * ovs-ofctl prints as dec_ttl(0)). */
    { FDP_OFP10, "ffff00180000232000150001000000000000000000000000",
      "dec_ttl" },
    /* NXAST_OUTPUT_REG2 (Open vSwitch writes it for a max_len, or an
     * experimenter field). */
    { FDP_OFP10, "ffff0018000023200020001fffff00010004000000000000",
      "output:NXM_NX_REG0[]" },
    /* The 1.0 output to CONTROLLER with a max_len. */
    { FDP_OFP10, "00000008fffd0080", "CONTROLLER:128" },
};

START_TEST(other_wire_forms)
{
    struct fdp_match *m = fdp_match_create();

    for (size_t i = 0; i < FDP_ARRAY_SIZE(good_cases); i++) {
        const struct good_case *gc = &good_cases[i];
        size_t n = strlen(gc->hex) / 2;
        uint8_t *p = malloc(n + 1);
        for (size_t j = 0; j < n; j++) {
            p[j] = (uint8_t) (hexval(gc->hex[2 * j]) << 4
                              | hexval(gc->hex[2 * j + 1]));
        }
        struct fdp__ofp_reader r;
        struct fdp_actions *acts = NULL;
        fdp__ofp_reader_init(&r, p, n);
        int error = fdp__ofp_actions_pull(&r, n, gc->v, NULL, &acts);
        ck_assert_msg(!error, "%s: %s", gc->hex, err_name(error));
        char *s = fdp_actions_format(acts, m);
        ck_assert_str_eq(s, gc->printed);
        free(s);
        ck_assert(check_hostile(p, n, gc->v, false));
        fdp_actions_destroy(acts);
        free(p);
    }
    fdp_match_destroy(m);
}
END_TEST

/* One malformed input and the error Open vSwitch gives for it. */
struct bad_case {
    enum fdp_ofp_version v;
    bool insts;
    const char *hex;
    int error;
    const char *what;
};

static const struct bad_case bad_cases[] = {
    { FDP_OFP10, false, "0000000400010000", FDP_OFPBAC_BAD_LEN,
      "an action shorter than 8 bytes" },
    { FDP_OFP10, false, "00000018000100000000000000000000",
      FDP_OFPBAC_BAD_LEN,
      "a length past the list's end" },
    { FDP_OFP10, false, "00000010000100000000000000000000",
      FDP_OFPBAC_BAD_LEN, "OFPAT10_OUTPUT of 16 bytes" },
    { FDP_OFP10, false, "000000080001000000", FDP_OFPBRC_BAD_LEN,
      "a list that is not a multiple of 8" },
    { FDP_OFP10, false, "00000008ffff0000", FDP_OFPBAC_BAD_OUT_PORT,
      "output to OFPP_NONE" },
    { FDP_OFP13, false, "0000001000ffff000000000000000000",
      FDP_OFPBAC_BAD_OUT_PORT, "a 32-bit port in the unused range" },
    { FDP_OFP10, false, "0063000800000000", FDP_OFPBAC_BAD_TYPE,
      "an unknown OpenFlow 1.0 action type" },
    { FDP_OFP10, false, "ffff001000001234000e000000000000",
      FDP_OFPBAC_BAD_VENDOR, "an unknown vendor" },
    { FDP_OFP10, false, "ffff0010000023200099000000000000",
      FDP_OFPBAC_BAD_VENDOR_TYPE, "an unknown Nicira subtype" },
    { FDP_OFP10, false, "ffff0018000023200014ffff00000000"
      "0000000000000000", FDP_OFPBAC_BAD_LEN,
      "NXAST_CONTROLLER of 24 bytes" },
    { FDP_OFP10, false, "ffff0010000023200014ffff00000001",
      FDP_NXBAC_MUST_BE_ZERO, "NXAST_CONTROLLER's zero byte set" },
    { FDP_OFP10, false, "0001000810000000", FDP_OFPBAC_BAD_ARGUMENT,
      "a VID above 4095" },
    { FDP_OFP10, false, "ffff0018000023200007001f7fff00040000000000000005",
      FDP_OFPBAC_BAD_SET_TYPE, "reg_load into an unknown field" },
    { FDP_OFP10, false, "ffff0018000023200007000f000100040000000000010000",
      FDP_OFPBAC_BAD_ARGUMENT, "reg_load of a value wider than its bits" },
    { FDP_OFP13, false, "001900107fff02040000000500000000",
      FDP_OFPBAC_BAD_SET_TYPE, "set_field of an unknown field" },
    { FDP_OFP13, false, "0019001000010104000000050000000f",
      FDP_OFPBAC_BAD_SET_MASK, "a masked set_field before 1.5" },
    { FDP_OFP13, true, "00010008010000000001000802000000",
      FDP_OFPBIC_DUP_INST, "two goto_table instructions" },
    { FDP_OFP13, true, "0003000800000000", FDP_OFPBIC_UNSUP_INST,
      "write_actions" },
    { FDP_OFP13, true, "0009000800000000", FDP_OFPBIC_UNKNOWN_INST,
      "an unknown instruction" },
    { FDP_OFP13, true, "00010008ff000000", FDP_OFPBIC_BAD_TABLE_ID,
      "goto_table 255" },
    { FDP_OFP13, true, "0004000400000000", FDP_OFPBIC_BAD_LEN,
      "apply_actions of length 4" },
    { FDP_OFP15, true, "0006000800000001", FDP_OFPBIC_UNKNOWN_INST,
      "the meter instruction in 1.5" },
    { FDP_OFP13, false, "ffff0010000023200024000000000000",
      FDP_OFPBAC_BAD_ARGUMENT, "nat outside ct" },
    /* From Open vSwitch 3.1's tests/ofp-actions.at. */
    { FDP_OFP10, false, "00000010fffeffff0000000000000000",
      FDP_OFPBAC_BAD_LEN, "OFPAT10_OUTPUT of 16 bytes (ovs)" },
    { FDP_OFP10, false, "000000f000000000", FDP_OFPBAC_BAD_LEN,
      "a length past the buffer (ovs)" },
    { FDP_OFP10, false, "ffff00200000232000160000000000000000000000000001"
      "ffffffffffffffff", FDP_OFPBIC_UNSUP_INST,
      "write_metadata in an action list" },
    { FDP_OFP10, false, "ffff00180000232000230002000000000000ff0000000000",
      FDP_OFPBAC_BAD_ARGUMENT, "ct(force) without commit" },
    { FDP_OFP10, false, "ffff00180000232000230000000100040007ff0000000000",
      FDP_OFPBAC_BAD_SET_LEN, "an 8-bit zone subfield" },
    { FDP_OFP10, false, "ffff0018000023200023000000010004001fff0000000000",
      FDP_OFPBAC_BAD_SET_LEN, "a 32-bit zone subfield" },
    { FDP_OFP10, false, "ffff0018000023200007001f0001d604000000000000f009",
      FDP_OFPBAC_BAD_SET_ARGUMENT, "ct_mark written outside ct" },
    { FDP_OFP10, false, "ffff00300000232000230001000000000000ff0000000000"
      "ffff0018000023200007000f0001d504000000000000f009",
      FDP_OFPBAC_BAD_SET_ARGUMENT, "ct_zone written inside ct" },
    { FDP_OFP10, false, "ffff00300000232000230001000000000000ff0000000000"
      "ffff00180000232000230000000000000000ff0000000000",
      FDP_OFPBAC_BAD_ARGUMENT, "ct inside ct" },
    { FDP_OFP10, false, "ffff00300000232000230001000000000000ff0000000000"
      "ffff0018000023200007001f000100040000000000000001",
      FDP_OFPBAC_BAD_ARGUMENT, "reg0 written inside ct" },
    { FDP_OFP10, false, "ffff00180000232000250000000500001122334455000005",
      FDP_NXBRC_MUST_BE_ZERO, "NXAST_CONTROLLER2's padding set" },
    { FDP_OFP10, false, "ffff00480000232000230001000000000000ff0000000000"
      "ffff00300000232000240000001100" "0cfe80000000000000020c29fffe88a18b"
      "fe80000000000000020c29fffe880001", FDP_OFPBAC_BAD_ARGUMENT,
      "a nat range whose minimum is above its maximum" },
    { FDP_OFP13, false, "001900088000fe000000001000000001"
      "0000000000000000", FDP_OFPBAC_BAD_SET_TYPE,
      "set_field of an unknown OXM (conformance 430.500)" },
    { FDP_OFP13, false, "0019001080000807000102030405000000000010"
      "00000001", FDP_OFPBAC_BAD_SET_LEN,
      "set_field of eth_dst with length 7 (conformance 430.510)" },
    { FDP_OFP13, false, "ffff00200000232000230000000000000000ff0000000000"
      "0000000800010000", FDP_OFPBAC_BAD_LEN,
      "an OpenFlow 1.0 output inside ct in 1.3" },
    { FDP_OFP13, false, "ffff00280000232000230000000000000000ff0000000000"
      "0000001000000001ffff000000000000", FDP_OFPBAC_BAD_ARGUMENT,
      "an output inside ct" },
};

START_TEST(malformed_errors)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(bad_cases); i++) {
        const struct bad_case *bc = &bad_cases[i];
        size_t hl = strlen(bc->hex);
        uint8_t *p = malloc(hl / 2 + 1);
        for (size_t j = 0; j < hl / 2; j++) {
            p[j] = (uint8_t) (hexval(bc->hex[2 * j]) << 4
                              | hexval(bc->hex[2 * j + 1]));
        }
        struct fdp__ofp_reader r;
        struct fdp_actions *acts = NULL;
        fdp__ofp_reader_init(&r, p, hl / 2);
        int error = bc->insts
                    ? fdp__ofp_instructions_pull(&r, hl / 2, bc->v, NULL,
                                                 &acts)
                    : fdp__ofp_actions_pull(&r, hl / 2, bc->v, NULL, &acts);
        ck_assert_msg(error == bc->error, "%s (%s): got %s, expected %s",
                      bc->what, bc->hex, err_name(error),
                      err_name(bc->error));
        ck_assert_ptr_null(acts);
        free(p);
    }
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ofp-actions");
    TCase *tc = unit_tcase(s, "vectors");

    tcase_add_test(tc, vectors_encode);
    tcase_add_test(tc, vectors_decode);
    tcase_add_test(tc, hostile_input);
    tcase_add_test(tc, malformed_errors);
    tcase_add_test(tc, every_field_in_every_action);
    tcase_add_test(tc, other_wire_forms);
    return unit_run(s);
}
