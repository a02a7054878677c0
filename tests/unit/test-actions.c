/*
 * Unit tests for lib/actions.c: action lists built from random sequences
 * of records read back, in order, exactly as added (the reference is the
 * sequence itself); clone, equality, count and size agree with it; bad
 * set-field values are refused without touching the list; ct records
 * (nested exec() and nat) are one record each, and the builder and
 * fdp__ct_resolve() refuse malformed ones.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/actions-internal.h"
#include "lib/field.h"
#include "lib/util.h"
#include "unit.h"

/* One record of the reference: what was added. */
struct ref_action {
    enum fdp_action_type type;
    uint32_t arg;
    enum fdp_field field;
    fdp_u128 value;
    uint8_t flags;
};

#define MAX_REF 40

/* A random field value that fits 'f'. */
static fdp_u128
random_value(struct unit_rng *r, enum fdp_field f)
{
    fdp_u128 v = ((fdp_u128) unit_rng_next(r) << 64) | unit_rng_next(r);
    fdp_u128 max = fdp__field(f)->max;

    return max == ~(fdp_u128) 0 ? v : v % (max + 1);
}

/* Builds a list from 'n' random records into 'ref' and returns it. */
static struct fdp_actions *
build_random(struct unit_rng *r, struct ref_action *ref, size_t n)
{
    static const enum fdp_action_type simple[] = {
        FDP_ACT_OUTPUT, FDP_ACT_IN_PORT, FDP_ACT_CONTROLLER,
        FDP_ACT_SET_VLAN_VID, FDP_ACT_SET_VLAN_PCP, FDP_ACT_STRIP_VLAN,
        FDP_ACT_PUSH_VLAN, FDP_ACT_DEC_TTL,
    };
    struct fdp__actions_builder b;

    fdp__actions_builder_init(&b);
    for (size_t i = 0; i < n; i++) {
        struct ref_action *a = &ref[i];
        memset(a, 0, sizeof *a);
        if (unit_rng_below(r, 3) == 0) {
            a->type = FDP_ACT_SET_FIELD;
            a->field = (enum fdp_field) unit_rng_below(r, FDP_N_FIELDS);
            a->value = random_value(r, a->field);
            a->flags = (uint8_t) unit_rng_below(r, 2);
            ck_assert_int_eq(fdp__actions_add_set_field(&b, a->field,
                                                        a->value, a->flags),
                             0);
        } else {
            a->type = simple[unit_rng_below(r, FDP_ARRAY_SIZE(simple))];
            a->arg = (uint32_t) unit_rng_next(r);
            fdp__actions_add(&b, a->type, a->arg);
        }
    }
    struct fdp_actions *acts = fdp__actions_finish(&b);
    ck_assert_ptr_nonnull(acts);
    return acts;
}

/* Checks that iterating 'acts' gives exactly 'ref'. */
static void
check_against(const struct fdp_actions *acts, const struct ref_action *ref,
              size_t n, uint64_t seed)
{
    size_t i = 0;

    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a), i++) {
        ck_assert_msg(i < n, "seed %" PRIu64 ": more records than added",
                      seed);
        ck_assert_msg(a->type == ref[i].type, "seed %" PRIu64 ": record "
                      "%zu type %u, want %u", seed, i, a->type, ref[i].type);
        if (a->type == FDP_ACT_SET_FIELD) {
            ck_assert_uint_eq(a->field, ref[i].field);
            ck_assert_uint_eq(a->flags, ref[i].flags);
            ck_assert_msg(fdp__action_value(a) == ref[i].value,
                          "seed %" PRIu64 ": record %zu value differs",
                          seed, i);
            ck_assert_uint_eq(a->n_words,
                              fdp__field(ref[i].field)->n_bits > 64 ? 3 : 2);
        } else {
            ck_assert_uint_eq(a->arg, ref[i].arg);
            ck_assert_uint_eq(a->n_words, 1);
        }
    }
    ck_assert_msg(i == n, "seed %" PRIu64 ": %zu records, want %zu", seed,
                  i, n);
    ck_assert_uint_eq(fdp_actions_count(acts), n);
}

START_TEST(random_lists_read_back)
{
    uint64_t seed = unit_seed();
    struct unit_rng r;
    struct ref_action ref[MAX_REF];

    unit_rng_init(&r, 0xac7);
    for (int round = 0; round < 2000; round++) {
        size_t n = unit_rng_below(&r, MAX_REF + 1);
        struct fdp_actions *acts = build_random(&r, ref, n);
        check_against(acts, ref, n, seed);

        struct fdp_actions *copy = fdp_actions_clone(acts);
        ck_assert_ptr_nonnull(copy);
        ck_assert(fdp_actions_equal(acts, copy));
        ck_assert_uint_eq(fdp_actions_size(copy), fdp_actions_size(acts));
        check_against(copy, ref, n, seed);
        fdp_actions_destroy(copy);
        fdp_actions_destroy(acts);
    }
}
END_TEST

/* Two lists that differ in one record's argument or value are unequal. */
START_TEST(equality_sees_every_word)
{
    struct fdp__actions_builder b;

    fdp__actions_builder_init(&b);
    fdp__actions_add(&b, FDP_ACT_OUTPUT, 2);
    ck_assert_int_eq(fdp__actions_add_set_field(&b, FDP_F_IPV6_DST, 7, 0), 0);
    struct fdp_actions *a = fdp__actions_finish(&b);

    fdp__actions_builder_init(&b);
    fdp__actions_add(&b, FDP_ACT_OUTPUT, 2);
    ck_assert_int_eq(fdp__actions_add_set_field(&b, FDP_F_IPV6_DST,
                                                (fdp_u128) 7 << 64, 0), 0);
    struct fdp_actions *c = fdp__actions_finish(&b);

    ck_assert(!fdp_actions_equal(a, c));
    ck_assert(fdp_actions_equal(a, a));
    fdp_actions_destroy(a);
    fdp_actions_destroy(c);
}
END_TEST

/* A value wider than its field, or a field that does not exist, is refused
 * and the list is what it was. */
START_TEST(bad_set_field_refused)
{
    struct fdp__actions_builder b;

    fdp__actions_builder_init(&b);
    fdp__actions_add(&b, FDP_ACT_DEC_TTL, 0);
    ck_assert_int_eq(fdp__actions_add_set_field(&b, FDP_F_TP_DST, 65536, 0),
                     EINVAL);
    ck_assert_int_eq(fdp__actions_add_set_field(&b, FDP_N_FIELDS, 1, 0),
                     EINVAL);
    struct fdp_actions *acts = fdp__actions_finish(&b);
    ck_assert_ptr_nonnull(acts);
    ck_assert_uint_eq(fdp_actions_count(acts), 1);
    const struct fdp__action *a = fdp__actions_first(acts);
    ck_assert_ptr_nonnull(a);
    if (a) {
        ck_assert_uint_eq(a->type, FDP_ACT_DEC_TTL);
        ck_assert_ptr_null(fdp__actions_next(acts, a));
    }
    fdp_actions_destroy(acts);
    fdp_actions_destroy(NULL);
}
END_TEST

/* The empty list: no records, and fdp__actions_first() of NULL is NULL. */
static bool
meets_all(const void *aux, enum fdp__prereq pr)
{
    (void) aux;
    (void) pr;
    return true;
}

/* The NXM/OXM names of load and move: each lies inside its key field
 * (but the arp_op names, 16 bits over the key's 8, as Open vSwitch keeps
 * the opcode: lib/actions.c), names are unique, every field with a name
 * has a canonical one, and the canonical name is the one printed. */
START_TEST(nxm_names_fit_their_fields)
{
    for (size_t i = 0; i < fdp__n_nxm_fields; i++) {
        const struct fdp__nxm_field *nf = &fdp__nxm_fields[i];
        ck_assert_msg(nf->field < FDP_N_FIELDS, "%s", nf->name);
        ck_assert_msg(nf->n_bits && (nf->n_bits <= fdp__field(nf->field)->n_bits
                                     || nf->field == FDP_F_ARP_OP),
                      "%s is %u bits, its field %u", nf->name, nf->n_bits,
                      fdp__field(nf->field)->n_bits);
        ck_assert_ptr_eq(fdp__nxm_field_find(nf->name), nf);
        const struct fdp__nxm_field *printed
            = fdp__nxm_field_for(nf->field, meets_all, NULL);
        ck_assert_ptr_nonnull(printed);
        ck_assert(printed->canonical && printed->field == nf->field);
    }
    ck_assert_ptr_null(fdp__nxm_field_find("NXM_NX_XREG0"));
    ck_assert_ptr_null(fdp__nxm_field_find("nxm_nx_reg0"));
    ck_assert_ptr_null(fdp__nxm_field_for(FDP_F_CONJ_ID, meets_all, NULL));
}
END_TEST

START_TEST(empty_list)
{
    struct fdp__actions_builder b;

    fdp__actions_builder_init(&b);
    struct fdp_actions *acts = fdp__actions_finish(&b);
    ck_assert_ptr_nonnull(acts);
    ck_assert_ptr_null(fdp__actions_first(acts));
    ck_assert_ptr_null(fdp__actions_first(NULL));
    ck_assert_uint_eq(fdp_actions_count(acts), 0);
    fdp_actions_destroy(acts);
}
END_TEST

/* Builds a ct record: 'n_exec' exec() writes of ct_mark bit i, zone from
 * reg0's high half, table 7, a nat spec. */
static struct fdp_actions *
ct_list(unsigned int n_exec, int *error)
{
    struct fdp__actions_builder b, exec;
    struct fdp__ct_nat nat;

    memset(&nat, 0, sizeof nat);
    nat.flags = FDP__NAT_DST | FDP__NAT_ADDR;
    nat.addr_min.lo = nat.addr_max.lo = 0x0a000001;
    fdp__actions_builder_init(&b);
    fdp__actions_builder_init(&exec);
    for (unsigned int i = 0; i < n_exec; i++) {
        ck_assert_int_eq(fdp__actions_add_ct_write(&exec, FDP_F_CT_MARK,
                                                   0, 1u << (i % 32),
                                                   FDP__ACT_LOAD), 0);
    }
    fdp__actions_add(&b, FDP_ACT_OUTPUT, 1);
    *error = fdp__actions_add_ct(&b, FDP__DPCT_COMMIT | FDP__DPCT_NAT
                                 | FDP__DPCT_RECIRC, 7, FDP_F_REG0, 16,
                                 &nat, exec.words, exec.n_words);
    fdp__actions_add(&b, FDP_ACT_CT_CLEAR, 0);
    fdp__actions_builder_destroy(&exec);
    return fdp__actions_finish(&b);
}

/* A ct record is one record of the list, whatever its exec(): count,
 * size, clone and equality see it whole; the builder refuses one past
 * 255 words, a bad zone subfield, table 255 and unknown flags; and
 * fdp__ct_resolve() refuses what is not a flow-form ct. */
START_TEST(ct_records)
{
    int error;
    struct fdp_actions *a = ct_list(3, &error);

    ck_assert_int_eq(error, 0);
    ck_assert_uint_eq(fdp_actions_count(a), 3);
    /* output 1 + ct (1 + 5 nat + 3 x 5 exec) + ct_clear 1. */
    ck_assert_uint_eq(fdp_actions_size(a), sizeof *a + 8 * (1 + 21 + 1));
    struct fdp_actions *c = fdp_actions_clone(a);
    ck_assert(fdp_actions_equal(a, c));
    struct fdp_actions *d = ct_list(4, &error);
    ck_assert(!fdp_actions_equal(a, d));
    fdp_actions_destroy(d);
    /* One bit of the nat spec makes a difference. */
    c->words[3] ^= 1;
    ck_assert(!fdp_actions_equal(a, c));
    fdp_actions_destroy(c);

    const struct fdp__action *first = fdp__actions_first(a);
    ck_assert_ptr_nonnull(first);
    const struct fdp__action *ct = fdp__actions_next(a, first);
    ck_assert_ptr_nonnull(ct);
    ck_assert_uint_eq(ct->type, FDP_ACT_CT);
    ck_assert_uint_eq(fdp__action_ct_table(ct), 7);
    ck_assert(fdp__action_ct_exec(ct) + 15 == fdp__action_ct_end(ct));
    const struct fdp__action *clear = fdp__actions_next(a, ct);
    ck_assert_ptr_nonnull(clear);
    ck_assert_uint_eq(clear->type, FDP_ACT_CT_CLEAR);

    struct fdp_key key;
    struct fdp__dp_ct dp;
    memset(&key, 0, sizeof key);
    fdp__key_set(&key, FDP_F_REG0, 0x12345678);
    fdp__key_set(&key, FDP_F_IN_PORT, 9);
    fdp__key_set(&key, FDP_F_CT_MARK, 0xff);
    ck_assert_int_eq(fdp__ct_resolve(ct, &key, &dp), 0);
    ck_assert_uint_eq(dp.zone, 0x1234);
    ck_assert_uint_eq(dp.table, 7);
    ck_assert_uint_eq(dp.in_port, 9);
    ck_assert_uint_eq(dp.mark, 0);
    ck_assert_uint_eq(dp.mark_mask, 0x7);
    ck_assert_uint_eq(dp.nat.addr_min.lo, 0x0a000001);
    ck_assert_uint_eq(dp.frozen[1], (uint64_t) 0x12345678 << 32);
    ck_assert_int_eq(fdp__ct_resolve(first, &key, &dp), EINVAL);
    fdp_actions_destroy(a);

    /* 1 + 5 + 49 x 5 = 251 words fit; 50 writes (256) do not. */
    a = ct_list(49, &error);
    ck_assert_int_eq(error, 0);
    fdp_actions_destroy(a);
    a = ct_list(50, &error);
    ck_assert_int_eq(error, EINVAL);
    ck_assert_uint_eq(fdp_actions_count(a), 2);
    fdp_actions_destroy(a);

    struct fdp__actions_builder b;
    fdp__actions_builder_init(&b);
    ck_assert_int_eq(fdp__actions_add_ct(&b, 0, 0, FDP_F_REG0, 17, NULL,
                                         NULL, 0), EINVAL);
    ck_assert_int_eq(fdp__actions_add_ct(&b, FDP__DPCT_RECIRC, 255,
                                         FDP_N_FIELDS, 0, NULL, NULL, 0),
                     EINVAL);
    ck_assert_int_eq(fdp__actions_add_ct(&b, 0x80, 0, FDP_N_FIELDS, 0, NULL,
                                         NULL, 0), EINVAL);
    ck_assert_int_eq(fdp__actions_add_ct(&b, 0, 0, FDP_N_FIELDS, 65536,
                                         NULL, NULL, 0), EINVAL);
    ck_assert_int_eq(fdp__actions_add_ct_write(&b, FDP_F_REG0, 1, 1, 0),
                     EINVAL);
    ck_assert_int_eq(fdp__actions_add_ct_write(&b, FDP_F_CT_MARK, 2, 1, 0),
                     EINVAL);
    ck_assert_int_eq(fdp__actions_add_ct_write(&b, FDP_F_CT_MARK, 0,
                                               (fdp_u128) 1 << 32, 0),
                     EINVAL);
    ck_assert_uint_eq(b.n_words, 0);
    fdp__actions_builder_destroy(&b);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("actions");
    TCase *tc = unit_tcase(s, "actions");

    tcase_add_test(tc, random_lists_read_back);
    tcase_add_test(tc, equality_sees_every_word);
    tcase_add_test(tc, bad_set_field_refused);
    tcase_add_test(tc, empty_list);
    tcase_add_test(tc, ct_records);
    tcase_add_test(tc, nxm_names_fit_their_fields);
    return unit_run(s);
}
