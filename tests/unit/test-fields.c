/*
 * Unit tests for the fields of issue 24 in the field table (lib/key.c,
 * lib/field.h) and for load, move and set_field on fields wider than 64
 * bits, end to end: flow text parsed, run by the pipeline (lib/pipeline.c),
 * the resulting key compared with a bit-by-bit model.
 *
 * The model knows nothing of the field table's words and shifts beyond
 * where one bit of a field lives (model_bit()); it writes and copies one
 * bit at a time, so a wrong chunking of a 128-bit write, a wrong half of
 * a 128-bit field or an overlap between neighbours shows as a bit that
 * differs.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flow.h>
#include <flowdp/pipeline.h>
#include "lib/actions-internal.h"
#include "lib/field-map.h"
#include "lib/field.h"
#include "lib/util.h"
#include "unit.h"

/* ---------------------------------------------------------------------- */
/* The bit model.                                                          */

/* Where bit 'i' (0 is the least significant) of field 'f' lives: word
 * '*w', bit '*b'.  A 128-bit field's high half is its first word. */
static void
model_bit(enum fdp_field f, unsigned int i, unsigned int *w, unsigned int *b)
{
    const struct fdp__field *fd = fdp__field(f);

    if (fd->n_bits == 128) {
        *w = fd->word + (i < 64 ? 1u : 0u);
        *b = i % 64;
    } else {
        *w = fd->word;
        *b = fd->shift + i;
    }
}

static unsigned int
model_get(const struct fdp_key *k, enum fdp_field f, unsigned int i)
{
    unsigned int w, b;

    model_bit(f, i, &w, &b);
    return (unsigned int) (k->w[w] >> b) & 1;
}

static void
model_put(struct fdp_key *k, enum fdp_field f, unsigned int i,
          unsigned int bit)
{
    unsigned int w, b;

    model_bit(f, i, &w, &b);
    k->w[w] = (k->w[w] & ~(UINT64_C(1) << b)) | (uint64_t) bit << b;
}

/* The key bits field 'f' covers, as a key of masks. */
static struct fdp_key
field_bits(enum fdp_field f)
{
    struct fdp_key k;

    memset(&k, 0, sizeof k);
    for (unsigned int i = 0; i < fdp__field(f)->n_bits; i++) {
        model_put(&k, f, i, 1);
    }
    return k;
}

static fdp_u128
rand128(struct unit_rng *rng)
{
    return (fdp_u128) unit_rng_next(rng) << 64 | unit_rng_next(rng);
}

/* ---------------------------------------------------------------------- */
/* The field table.                                                        */

static bool
same_bits(enum fdp_field a, enum fdp_field b)
{
    struct fdp_key x = field_bits(a), y = field_bits(b);

    return !memcmp(&x, &y, sizeof x);
}

/* Bits of 'a' all in 'b'. */
static bool
bits_inside(enum fdp_field a, enum fdp_field b)
{
    struct fdp_key x = field_bits(a), y = field_bits(b);

    for (int w = 0; w < FDP_KEY_WORDS; w++) {
        if (x.w[w] & ~y.w[w]) {
            return false;
        }
    }
    return true;
}

/* Names, widths and storage of the neighbour discovery fields and the
 * xxregs, as key.h describes them, and the accessors against the bit
 * model for every field. */
START_TEST(table_consistency)
{
    static const struct {
        const char *name;
        enum fdp_field f;
        unsigned int bits;
    } fields[] = {
        { "nd_target", FDP_F_ND_TARGET, 128 },
        { "nd_sll", FDP_F_ND_SLL, 48 },
        { "nd_tll", FDP_F_ND_TLL, 48 },
        { "nd_reserved", FDP_F_ND_RESERVED, 32 },
        { "nd_options_type", FDP_F_ND_OPTIONS_TYPE, 8 },
        { "xxreg0", FDP_F_XXREG0, 128 },
        { "xxreg1", FDP_F_XXREG1, 128 },
        { "xxreg2", FDP_F_XXREG2, 128 },
        { "xxreg3", FDP_F_XXREG3, 128 },
    };
    struct unit_rng rng;

    unit_rng_init(&rng, 1);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(fields); i++) {
        enum fdp_field f;
        ck_assert(fdp_field_from_name(fields[i].name, &f));
        ck_assert_int_eq(f, fields[i].f);
        ck_assert_str_eq(fdp_field_name(f), fields[i].name);
        ck_assert_uint_eq(fdp_field_width(f), fields[i].bits);
    }

    /* Shared storage, as in Open vSwitch (key.h). */
    ck_assert(same_bits(FDP_F_ND_SLL, FDP_F_ARP_SHA));
    ck_assert(same_bits(FDP_F_ND_TLL, FDP_F_ARP_THA));
    ck_assert(same_bits(FDP_F_ND_RESERVED, FDP_F_NW_SRC));
    ck_assert(bits_inside(FDP_F_ND_OPTIONS_TYPE, FDP_F_TCP_FLAGS));
    ck_assert(fdp__field_is_packet(FDP_F_ND_TARGET)
              && fdp__field(FDP_F_ND_TARGET)->word + 1
                 < FDP_KEY_PACKET_WORDS);

    /* xxreg<j> is xreg<2j>:xreg<2j+1> and reg<4j>..reg<4j+3>. */
    for (int j = 0; j < 4; j++) {
        enum fdp_field xx = (enum fdp_field) (FDP_F_XXREG0 + j);
        enum fdp_field hi = (enum fdp_field) (FDP_F_XREG0 + 2 * j);
        ck_assert(fdp__field_is_register(xx));
        ck_assert(bits_inside(hi, xx) && bits_inside(hi + 1, xx));
        for (int r = 0; r < 4; r++) {
            ck_assert(bits_inside((enum fdp_field) (FDP_F_REG0 + 4 * j + r),
                                  xx));
        }
        struct fdp_key k;
        memset(&k, 0, sizeof k);
        fdp_u128 v = rand128(&rng);
        fdp__key_set(&k, xx, v);
        ck_assert(fdp__key_get(&k, hi) == (uint64_t) (v >> 64));
        ck_assert(fdp__key_get(&k, hi + 1) == (uint64_t) v);
        ck_assert(fdp__key_get(&k, FDP_F_REG0 + 4 * j)
                  == (uint32_t) (v >> 96));
    }

    /* Every field's accessors against the model, on random keys: get
     * reads the model's bits, set writes them and nothing else. */
    for (int round = 0; round < 200; round++) {
        for (int f = 0; f < FDP_N_FIELDS; f++) {
            struct fdp_key k, want;
            for (int w = 0; w < FDP_KEY_WORDS; w++) {
                k.w[w] = unit_rng_next(&rng);
            }
            unsigned int n = fdp__field(f)->n_bits;
            fdp_u128 got = fdp__key_get(&k, f), model = 0;
            for (unsigned int i = n; i-- > 0;) {
                model = model << 1 | model_get(&k, f, i);
            }
            ck_assert_msg(got == model, "%s: get", fdp_field_name(f));
            fdp_u128 v = rand128(&rng) & fdp__ones(n);
            want = k;
            for (unsigned int i = 0; i < n; i++) {
                model_put(&want, f, i, (unsigned int) (v >> i) & 1);
            }
            fdp__key_set(&k, f, v);
            ck_assert_msg(!memcmp(&k, &want, sizeof k), "%s: set",
                          fdp_field_name(f));
        }
    }

    /* A field map has room for every field, and walks them in order. */
    struct fdp__field_map m = FDP__FIELD_MAP_EMPTY;
    for (int f = FDP_N_FIELDS - 1; f >= 0; f -= 3) {
        fdp__field_map_add(&m, (enum fdp_field) f);
    }
    int expect = (FDP_N_FIELDS - 1) % 3;
    FDP__FIELD_MAP_FOR_EACH (f, &m) {
        ck_assert_int_eq(f, expect);
        expect += 3;
    }
    ck_assert_int_eq(expect, FDP_N_FIELDS - 1 + 3);
    ck_assert_uint_eq(fdp__field_map_count(&m), (FDP_N_FIELDS + 2) / 3);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Wide load, move and set_field against the model.                        */

/* The fields the random actions use: NXM name, field, whether an action
 * may write it.  The ND packet the test runs has every one. */
static const struct {
    const char *nxm;
    enum fdp_field f;
    bool writable;
} wide_fields[] = {
    { "NXM_NX_XXREG0", FDP_F_XXREG0, true },
    { "NXM_NX_XXREG1", FDP_F_XXREG1, true },
    { "NXM_NX_XXREG2", FDP_F_XXREG2, true },
    { "NXM_NX_XXREG3", FDP_F_XXREG3, true },
    { "OXM_OF_PKT_REG1", FDP_F_XREG1, true },
    { "OXM_OF_PKT_REG6", FDP_F_XREG6, true },
    { "NXM_NX_REG5", FDP_F_REG5, true },
    { "NXM_NX_REG12", FDP_F_REG12, true },
    { "OXM_OF_METADATA", FDP_F_METADATA, true },
    { "NXM_NX_IPV6_SRC", FDP_F_IPV6_SRC, true },
    { "NXM_NX_IPV6_DST", FDP_F_IPV6_DST, true },
    { "NXM_NX_ND_TARGET", FDP_F_ND_TARGET, true },
    { "NXM_NX_ND_SLL", FDP_F_ND_SLL, true },
    { "ERICOXM_OF_ICMPV6_ND_RESERVED", FDP_F_ND_RESERVED, true },
    { "NXM_OF_ETH_SRC", FDP_F_DL_SRC, true },
};

/* Appends "0x..." for the low 'n' bits of 'v' to 'out'. */
static void
put_hex(char *out, size_t size, fdp_u128 v)
{
    size_t len = strlen(out);
    uint64_t hi = (uint64_t) (v >> 64);

    if (hi) {
        snprintf(out + len, size - len, "0x%" PRIx64 "%016" PRIx64, hi,
                 (uint64_t) v);
    } else {
        snprintf(out + len, size - len, "0x%" PRIx64, (uint64_t) v);
    }
}

/* One random action appended to 'text' (after a comma if not first), and
 * applied to the model key 'k'. */
static void
random_action(struct unit_rng *rng, char *text, size_t size,
              struct fdp_key *k)
{
    size_t nf = FDP_ARRAY_SIZE(wide_fields);
    size_t d;
    do {
        d = unit_rng_below(rng, (uint32_t) nf);
    } while (!wide_fields[d].writable);
    enum fdp_field dst = wide_fields[d].f;
    unsigned int width = fdp__field(dst)->n_bits;
    unsigned int n = 1 + unit_rng_below(rng, width);
    unsigned int ofs = unit_rng_below(rng, width - n + 1);
    size_t len = strlen(text);

    if (len) {
        snprintf(text + len, size - len, ",");
    }
    switch (unit_rng_below(rng, 3)) {
    case 0: {
        /* load:V->DST[ofs..ofs+n-1] */
        fdp_u128 v = rand128(rng) & fdp__ones(n);
        snprintf(text + strlen(text), size - strlen(text), "load:");
        put_hex(text, size, v);
        snprintf(text + strlen(text), size - strlen(text), "->%s[%u..%u]",
                 wide_fields[d].nxm, ofs, ofs + n - 1);
        for (unsigned int i = 0; i < n; i++) {
            model_put(k, dst, ofs + i, (unsigned int) (v >> i) & 1);
        }
        break;
    }
    case 1: {
        /* move:SRC[a..]->DST[ofs..], the source read whole first. */
        size_t s = unit_rng_below(rng, (uint32_t) nf);
        enum fdp_field src = wide_fields[s].f;
        unsigned int sw = fdp__field(src)->n_bits;
        if (n > sw) {
            n = 1 + unit_rng_below(rng, sw);
            ofs = unit_rng_below(rng, width - n + 1);
        }
        unsigned int sofs = unit_rng_below(rng, sw - n + 1);
        unsigned int bits[128];
        for (unsigned int i = 0; i < n; i++) {
            bits[i] = model_get(k, src, sofs + i);
        }
        snprintf(text + strlen(text), size - strlen(text),
                 "move:%s[%u..%u]->%s[%u..%u]", wide_fields[s].nxm, sofs,
                 sofs + n - 1, wide_fields[d].nxm, ofs, ofs + n - 1);
        for (unsigned int i = 0; i < n; i++) {
            model_put(k, dst, ofs + i, bits[i]);
        }
        break;
    }
    default: {
        /* set_field:V/M->xxregN, any mask but zero. */
        int j = (int) unit_rng_below(rng, 4);
        enum fdp_field xx = (enum fdp_field) (FDP_F_XXREG0 + j);
        fdp_u128 v = rand128(rng), m = rand128(rng);
        if (unit_rng_below(rng, 3) == 0) {
            m = ~(fdp_u128) 0;
        }
        m = m ? m : 1;
        snprintf(text + strlen(text), size - strlen(text), "set_field:");
        put_hex(text, size, v);
        snprintf(text + strlen(text), size - strlen(text), "/");
        put_hex(text, size, m);
        snprintf(text + strlen(text), size - strlen(text), "->xxreg%d", j);
        for (unsigned int i = 0; i < 128; i++) {
            if ((m >> i) & 1) {
                model_put(k, xx, i, (unsigned int) (v >> i) & 1);
            }
        }
        break;
    }
    }
}

/* Random lists of wide loads, moves and masked set_fields, run by a
 * one-table pipeline on a random neighbour solicitation: the key the
 * pipeline ends with is the model's, bit for bit, and the flow's text,
 * formatted, parses back to the same text. */
START_TEST(wide_actions_against_model)
{
    struct unit_rng rng;

    unit_rng_init(&rng, 2);
    printf("fields: wide_actions_against_model, seed %#" PRIx64 "\n",
           unit_seed());
    for (int round = 0; round < 300; round++) {
        struct fdp_key key, model;
        memset(&key, 0, sizeof key);
        fdp__key_set(&key, FDP_F_DL_TYPE, FDP_ETH_TYPE_IPV6);
        fdp__key_set(&key, FDP_F_NW_PROTO, FDP_IPPROTO_ICMPV6);
        fdp__key_set(&key, FDP_F_ICMP_TYPE, FDP_ND_SOLICIT);
        fdp__key_set(&key, FDP_F_DL_SRC, unit_rng_next(&rng) & 0xffffffffffff);
        fdp__key_set(&key, FDP_F_IPV6_SRC, rand128(&rng));
        fdp__key_set(&key, FDP_F_IPV6_DST, rand128(&rng));
        fdp__key_set(&key, FDP_F_ND_TARGET, rand128(&rng));
        fdp__key_set(&key, FDP_F_ND_SLL, unit_rng_next(&rng) & 0xffffffffffff);
        fdp__key_set(&key, FDP_F_ND_RESERVED, (uint32_t) unit_rng_next(&rng));
        model = key;

        char actions[8192] = "";
        int n_actions = 1 + (int) unit_rng_below(&rng, 12);
        for (int i = 0; i < n_actions; i++) {
            random_action(&rng, actions, sizeof actions, &model);
        }
        char text[8300];
        snprintf(text, sizeof text, "icmp6,icmp_type=135,actions=%s",
                 actions);

        struct fdp_flow_spec spec;
        char *error = NULL;
        ck_assert_msg(!fdp_flow_parse(text, 0, &spec, &error),
                      "round %d: %s: %s", round, text, error);
        char *back = fdp_flow_format(&spec);
        struct fdp_flow_spec spec2;
        char *text2 = malloc(strlen(back) + 2);
        strcpy(text2, back);
        char *sp = strstr(text2, " actions=");
        ck_assert_ptr_nonnull(sp);
        *sp = ',';
        ck_assert_msg(!fdp_flow_parse(text2, 0, &spec2, &error),
                      "round %d: %s: %s", round, text2, error);
        char *back2 = fdp_flow_format(&spec2);
        ck_assert_str_eq(back, back2);

        struct fdp_pipeline *p;
        struct fdp_pipeline_result r;
        ck_assert_int_eq(fdp_pipeline_create(&p), 0);
        ck_assert_int_eq(fdp_pipeline_insert(p, &spec, 0), 0);
        fdp_pipeline_result_init(&r);
        ck_assert_int_eq(fdp_pipeline_classify(p, &key, 0, &r, NULL, NULL),
                         0);
        for (int w = 0; w < FDP_KEY_WORDS; w++) {
            ck_assert_msg(r.key.w[w] == model.w[w],
                          "round %d: %s: word %d is %#" PRIx64 ", the model "
                          "says %#" PRIx64, round, text, w, r.key.w[w],
                          model.w[w]);
        }
        fdp_pipeline_result_destroy(&r);
        fdp_pipeline_destroy(p);
        fdp_flow_spec_destroy(&spec);
        fdp_flow_spec_destroy(&spec2);
        free(back);
        free(back2);
        free(text2);
    }
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("fields");
    TCase *tc = unit_tcase(s, "fields");

    tcase_add_test(tc, table_consistency);
    tcase_add_test(tc, wide_actions_against_model);
    return unit_run(s);
}
