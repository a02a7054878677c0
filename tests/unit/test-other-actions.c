/*
 * Unit tests for lib/other-actions.c: the stack against a reference that
 * keeps (value, width) pairs in an array, over random pushes and pops;
 * the records of push, pop, output:FIELD, note, clone and controller read
 * back as built, and the builders refuse what they must; clone's
 * restoring records, applied to the key as the pipeline's tracking
 * applies them, give back the key before the clone, for random pairs of
 * keys and random VLAN pushes and pops; and through the pipeline, a clone
 * leaves the key, the registers and the stack as they were.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "lib/actions-internal.h"
#include "lib/field.h"
#include "lib/other-actions.h"
#include "unit.h"

/* The reference stack: each push's value (its low 'n_bits' bits) and
 * width. */
struct ref_entry {
    uint64_t value;
    unsigned int n_bits;
};

START_TEST(stack_matches_reference)
{
    struct unit_rng r;
    struct fdp__stack s;
    struct ref_entry ref[512];
    size_t n_ref = 0;

    unit_rng_init(&r, 1);
    fdp__stack_init(&s);
    for (int i = 0; i < 20000; i++) {
        if (n_ref < 512 && unit_rng_below(&r, 3)) {
            unsigned int n_bits = 1 + unit_rng_below(&r, 64);
            uint64_t v = unit_rng_next(&r);
            if (n_bits < 64) {
                v &= (UINT64_C(1) << n_bits) - 1;
            }
            ck_assert_int_eq(fdp__stack_push(&s, v, n_bits), 0);
            ref[n_ref++] = (struct ref_entry) { v, n_bits };
        } else {
            uint64_t v = 0;
            bool ok = fdp__stack_pop(&s, &v);
            ck_assert_int_eq(ok, n_ref > 0);
            if (ok) {
                n_ref--;
                ck_assert_uint_eq(v, ref[n_ref].value);
            }
        }
        /* Open vSwitch's accounting: each value's whole bytes and a
         * count byte. */
        size_t size = 0;
        for (size_t k = 0; k < n_ref; k++) {
            size += (ref[k].n_bits + 7) / 8 + 1;
        }
        ck_assert_uint_eq(s.size, size);
    }
    fdp__stack_destroy(&s);
}
END_TEST

START_TEST(records_read_back)
{
    struct fdp__actions_builder b;
    uint8_t note[20];

    for (unsigned int i = 0; i < sizeof note; i++) {
        note[i] = (uint8_t) (i * 7);
    }
    fdp__actions_builder_init(&b);
    ck_assert_int_eq(fdp__actions_add_subfield(&b, FDP_ACT_STACK_PUSH,
                                               FDP_F_REG3, 4, 12), 0);
    ck_assert_int_eq(fdp__actions_add_subfield(&b, FDP_ACT_OUTPUT_REG,
                                               FDP_F_XREG1, 0, 64), 0);
    ck_assert_int_eq(fdp__actions_add_note(&b, note, sizeof note), 0);
    struct fdp__controller c = {
        .max_len = 77, .reason = FDP__CTL_INVALID_TTL, .pause = true,
        .id = 5, .meter_id = 0xdeadbeef, .userdata = note,
        .userdata_size = 9,
    };
    ck_assert_int_eq(fdp__actions_add_controller(&b, &c), 0);
    struct fdp__controller plain = { .max_len = 9,
                                     .reason = FDP__CTL_ACTION };
    ck_assert_int_eq(fdp__actions_add_controller(&b, &plain), 0);
    uint64_t nested[2];
    struct fdp__action out = { .type = FDP_ACT_OUTPUT, .n_words = 1,
                               .arg = 3 };
    memcpy(&nested[0], &out, 8);
    memcpy(&nested[1], &out, 8);
    ck_assert_int_eq(fdp__actions_add_clone(&b, nested, 2), 0);

    struct fdp_actions *acts = fdp__actions_finish(&b);
    ck_assert_ptr_nonnull(acts);
    ck_assert_uint_eq(fdp_actions_count(acts), 6);

    const struct fdp__action *a = fdp__actions_first(acts);
    ck_assert_ptr_nonnull(a);
    struct fdp__subfield sf = fdp__action_subfield(a);
    ck_assert_uint_eq(a->type, FDP_ACT_STACK_PUSH);
    ck_assert_uint_eq(sf.field, FDP_F_REG3);
    ck_assert_uint_eq(sf.ofs, 4);
    ck_assert_uint_eq(sf.n_bits, 12);

    a = fdp__actions_next(acts, a);
    ck_assert_ptr_nonnull(a);
    sf = fdp__action_subfield(a);
    ck_assert_uint_eq(a->type, FDP_ACT_OUTPUT_REG);
    ck_assert_uint_eq(sf.field, FDP_F_XREG1);
    ck_assert_uint_eq(sf.n_bits, 64);

    a = fdp__actions_next(acts, a);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->type, FDP_ACT_NOTE);
    ck_assert_uint_eq(a->arg, sizeof note);
    ck_assert_mem_eq(fdp__action_note_data(a), note, sizeof note);

    a = fdp__actions_next(acts, a);
    ck_assert_ptr_nonnull(a);
    struct fdp__controller got = fdp__action_controller(a);
    ck_assert(!fdp__controller_is_plain(&got));
    ck_assert_uint_eq(got.max_len, 77);
    ck_assert_uint_eq(got.reason, FDP__CTL_INVALID_TTL);
    ck_assert(got.pause);
    ck_assert_uint_eq(got.id, 5);
    ck_assert_uint_eq(got.meter_id, 0xdeadbeef);
    ck_assert_uint_eq(got.userdata_size, 9);
    ck_assert_mem_eq(got.userdata, note, 9);

    a = fdp__actions_next(acts, a);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->n_words, 1);
    got = fdp__action_controller(a);
    ck_assert(fdp__controller_is_plain(&got));
    ck_assert_uint_eq(got.max_len, 9);

    a = fdp__actions_next(acts, a);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->type, FDP_ACT_CLONE);
    ck_assert_uint_eq(a->n_words, 3);
    ck_assert(fdp__clone_is_valid(a));
    ck_assert_ptr_null(fdp__actions_next(acts, a));
    fdp_actions_destroy(acts);
}
END_TEST

START_TEST(builders_refuse)
{
    struct fdp__actions_builder b;
    static uint8_t big[256 * 8];

    fdp__actions_builder_init(&b);
    ck_assert_int_eq(fdp__actions_add_subfield(&b, FDP_ACT_OUTPUT,
                                               FDP_F_REG0, 0, 8), EINVAL);
    ck_assert_int_eq(fdp__actions_add_subfield(&b, FDP_ACT_STACK_POP,
                                               FDP_F_REG0, 30, 8), EINVAL);
    ck_assert_int_eq(fdp__actions_add_subfield(&b, FDP_ACT_STACK_POP,
                                               FDP_F_REG0, 0, 0), EINVAL);
    ck_assert_int_eq(fdp__actions_add_subfield(&b, FDP_ACT_STACK_PUSH,
                                               FDP_F_IPV6_SRC, 0, 128),
                     EINVAL);
    ck_assert_int_eq(fdp__actions_add_note(&b, big, 254 * 8 + 1), EINVAL);
    ck_assert_int_eq(fdp__actions_add_clone(&b, (const uint64_t *) big,
                                            255), EINVAL);
    struct fdp__controller c = { .reason = FDP__CTL_N_REASONS };
    ck_assert_int_eq(fdp__actions_add_controller(&b, &c), EINVAL);
    c = (struct fdp__controller) { .reason = FDP__CTL_ACTION, .id = 1,
                                   .userdata = big,
                                   .userdata_size = 253 * 8 };
    ck_assert_int_eq(fdp__actions_add_controller(&b, &c), EINVAL);
    ck_assert_uint_eq(b.n_words, 0);

    /* A clone that holds what clone() may not. */
    uint64_t nested[1];
    struct fdp__action go = { .type = FDP_ACT_GOTO_TABLE, .n_words = 1,
                              .arg = 3 };
    memcpy(nested, &go, 8);
    ck_assert_int_eq(fdp__actions_add_clone(&b, nested, 1), 0);
    ck_assert(!fdp__clone_is_valid((const struct fdp__action *) b.words));
    fdp__actions_builder_destroy(&b);
}
END_TEST

/* Applies composed record 'a' to 'key' as the pipeline's tracking does
 * (the reference for what the executor does to the packet's headers). */
static void
apply(struct fdp_key *key, const struct fdp__action *a)
{
    uint16_t tci = (uint16_t) fdp__key_get(key, FDP_F_VLAN_TCI);

    switch (a->type) {
    case FDP_ACT_SET_VLAN_VID:
        tci = (uint16_t) ((tci & ~FDP_VLAN_VID_MASK)
                          | (a->arg & FDP_VLAN_VID_MASK) | FDP_VLAN_CFI);
        break;
    case FDP_ACT_SET_VLAN_PCP:
        tci = (uint16_t) ((tci & ~FDP_VLAN_PCP_MASK) | (a->arg & 7) << 13
                          | FDP_VLAN_CFI);
        break;
    case FDP_ACT_STRIP_VLAN:
        tci = 0;
        break;
    case FDP_ACT_PUSH_VLAN:
        tci |= FDP_VLAN_CFI;
        break;
    case FDP_ACT_SET_FIELD:
        fdp__key_set(key, (enum fdp_field) a->field, fdp__action_value(a));
        return;
    default:
        ck_abort_msg("unexpected record kind %u", a->type);
    }
    fdp__key_set(key, FDP_F_VLAN_TCI, tci);
}

static fdp_u128
random_value(struct unit_rng *r, enum fdp_field f)
{
    fdp_u128 v = ((fdp_u128) unit_rng_next(r) << 64) | unit_rng_next(r);
    fdp_u128 max = fdp__field(f)->max;

    return max == ~(fdp_u128) 0 ? v : v % (max + 1);
}

START_TEST(restore_gives_back_the_key)
{
    /* The header fields of a TCP/IPv4 packet (restoring writes only the
     * packet's own headers). */
    static const enum fdp_field header[] = {
        FDP_F_DL_SRC, FDP_F_DL_DST, FDP_F_NW_SRC, FDP_F_NW_DST,
        FDP_F_NW_TOS, FDP_F_NW_ECN, FDP_F_NW_TTL, FDP_F_TP_SRC,
        FDP_F_TP_DST,
    };
    struct unit_rng r;

    unit_rng_init(&r, 2);
    for (int iter = 0; iter < 5000; iter++) {
        struct fdp_key was, now;
        memset(&was, 0, sizeof was);
        fdp__key_set(&was, FDP_F_DL_TYPE, FDP_ETH_TYPE_IP);
        fdp__key_set(&was, FDP_F_NW_PROTO, 6);
        for (size_t i = 0; i < sizeof header / sizeof header[0]; i++) {
            fdp__key_set(&was, header[i], random_value(&r, header[i]));
        }
        uint16_t tci = unit_rng_below(&r, 2)
                       ? (uint16_t) (FDP_VLAN_CFI | unit_rng_below(&r, 4096)
                                     | unit_rng_below(&r, 8) << 13)
                       : 0;
        fdp__key_set(&was, FDP_F_VLAN_TCI, tci);

        /* What a clone's actions might compose: VLAN records, then
         * rewrites of a few fields, applied to 'now'. */
        struct fdp__actions_builder b;
        fdp__actions_builder_init(&b);
        now = was;
        unsigned int n_vlan = unit_rng_below(&r, 4);
        for (unsigned int i = 0; i < n_vlan; i++) {
            switch (unit_rng_below(&r, 4)) {
            case 0:
                fdp__actions_add(&b, FDP_ACT_PUSH_VLAN, 0x8100);
                break;
            case 1:
                fdp__actions_add(&b, FDP_ACT_STRIP_VLAN, 0);
                break;
            case 2:
                fdp__actions_add(&b, FDP_ACT_SET_VLAN_VID,
                                 unit_rng_below(&r, 4096));
                break;
            default:
                fdp__actions_add(&b, FDP_ACT_SET_VLAN_PCP,
                                 unit_rng_below(&r, 8));
                break;
            }
        }
        for (unsigned int i = unit_rng_below(&r, 4); i > 0; i--) {
            enum fdp_field f = header[unit_rng_below(
                &r, sizeof header / sizeof header[0])];
            fdp__actions_add_set_field(&b, f, random_value(&r, f), 0);
        }
        for (uint32_t w = 0; w < b.n_words;
             w += ((const struct fdp__action *) &b.words[w])->n_words) {
            apply(&now, (const struct fdp__action *) &b.words[w]);
        }
        int tags = fdp__composed_tag_delta(b.words, b.words + b.n_words,
                                           tci);

        /* The restoring records, applied after, give 'was' back: the
         * outer tag only when no popped tag has to come back from
         * under another (the key knows only the outer one). */
        uint32_t start = b.n_words;
        fdp__compose_restore(&b, &was, &now, tags);
        for (uint32_t w = start; w < b.n_words;
             w += ((const struct fdp__action *) &b.words[w])->n_words) {
            apply(&now, (const struct fdp__action *) &b.words[w]);
        }
        for (size_t i = 0; i < sizeof header / sizeof header[0]; i++) {
            ck_assert_msg(fdp__key_get(&now, header[i])
                          == fdp__key_get(&was, header[i]),
                          "iteration %d: %s not restored", iter,
                          fdp__field(header[i])->name);
        }
        if (tags >= -1) {
            ck_assert_msg(fdp__key_get(&now, FDP_F_VLAN_TCI) == tci,
                          "iteration %d: tci %#x, was %#x (tags %d)", iter,
                          (unsigned int) fdp__key_get(&now, FDP_F_VLAN_TCI),
                          tci, tags);
        }
        fdp__actions_builder_destroy(&b);
    }
}
END_TEST

/* Through the pipeline: what a clone changes of the key is undone, its
 * outputs stay, and the stack below it is intact. */
START_TEST(clone_in_pipeline)
{
    struct fdp_pipeline *p;
    struct fdp_flow_spec spec;
    char *error = NULL;

    ck_assert_int_eq(fdp_pipeline_create(&p), 0);
    ck_assert_msg(!fdp_flow_parse(
        "ip,actions=load:5->NXM_NX_REG0[],push:NXM_NX_REG0[],"
        "clone(pop:NXM_NX_REG1[],load:9->NXM_NX_REG0[],push:NXM_NX_REG0[],"
        "mod_nw_dst:1.2.3.4,output:NXM_NX_REG1[]),"
        "pop:NXM_NX_REG2[],output:NXM_NX_REG2[]", 0, &spec, &error),
        "%s", error);
    ck_assert_int_eq(fdp_pipeline_insert(p, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);

    struct fdp_key key;
    ck_assert(!fdp_packet_parse("in_port=1,ip,nw_dst=10.0.0.2", &key,
                                &error));
    struct fdp_pipeline_result r;
    fdp_pipeline_result_init(&r);
    fdp_table_read_lock();
    ck_assert_int_eq(fdp_pipeline_classify(p, &key, 0, &r, NULL, NULL), 0);
    fdp_table_read_unlock();
    struct fdp_match *m = fdp_match_create();
    char *text = fdp_actions_format(r.actions, m);
    ck_assert_str_eq(text, "mod_nw_dst:1.2.3.4,output:5,"
                           "set_field:10.0.0.2->nw_dst,output:5");
    free(text);
    fdp_match_destroy(m);
    ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_REG0), 5);
    ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_REG1), 0);
    ck_assert_uint_eq(fdp__key_get(&r.key, FDP_F_REG2), 5);
    fdp_pipeline_result_destroy(&r);
    fdp_pipeline_destroy(p);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("other-actions");
    TCase *tc = unit_tcase(s, "other-actions");

    tcase_add_test(tc, stack_matches_reference);
    tcase_add_test(tc, records_read_back);
    tcase_add_test(tc, builders_refuse);
    tcase_add_test(tc, restore_gives_back_the_key);
    tcase_add_test(tc, clone_in_pipeline);
    return unit_run(s);
}
