/*
 * Tests of lib/learn.c: learn's text round trips, resolution against
 * random keys checked bit by bit against a reference, and the writer
 * (add, refresh, replace, limit, delete_learned).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/actions-internal.h"
#include "lib/field.h"
#include "lib/learn.h"
#include "lib/match-internal.h"
#include "lib/util.h"
#include <flowdp/flowdp.h>
#include "tests/unit/unit.h"

static struct fdp_flow_spec
parse_ok(const char *text)
{
    struct fdp_flow_spec spec;
    char *error = NULL;

    if (fdp_flow_parse(text, 0, &spec, &error)) {
        ck_abort_msg("%s: %s", text, error);
    }
    return spec;
}

/* The first learn record of 'spec''s actions. */
static const struct fdp__action *
learn_of(const struct fdp_flow_spec *spec)
{
    for (const struct fdp__action *a = fdp__actions_first(spec->actions); a;
         a = fdp__actions_next(spec->actions, a)) {
        if (a->type == FDP_ACT_LEARN) {
            return a;
        }
    }
    ck_abort_msg("no learn action");
    return NULL;
}

static const char *const round_trips[] = {
    "actions=learn(table=1)",
    "actions=learn(table=2,idle_timeout=10,hard_timeout=20,"
    "fin_idle_timeout=5,fin_hard_timeout=10,priority=10,send_flow_rem,"
    "delete_learned,cookie=0x5,limit=10,result_dst=NXM_NX_REG0[0],"
    "NXM_OF_VLAN_TCI[0..11],NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],"
    "load:NXM_OF_IN_PORT[]->NXM_NX_REG0[0..15],output:NXM_OF_IN_PORT[])",
    "tcp actions=learn(table=1,eth_type=0x800,nw_proto=6,"
    "NXM_OF_IP_SRC[]=NXM_OF_IP_DST[],NXM_OF_TCP_SRC[]=NXM_OF_TCP_DST[])",
    "ipv6 actions=learn(table=1,eth_type=0x86dd,"
    "NXM_NX_IPV6_SRC[]=NXM_NX_IPV6_DST[],ipv6_dst=::1)",
    "actions=learn(table=1,NXM_NX_REG3[3..19]=0x10011,"
    "load:0xa->NXM_NX_REG0[5..10]),resubmit(,1)",
    "tcp actions=fin_timeout(idle_timeout=5,hard_timeout=10)",
    "tcp6 actions=fin_timeout(hard_timeout=10)",
    NULL
};

/* Each text prints as itself, and what it prints parses back to the same
 * actions. */
START_TEST(text_round_trips)
{
    for (const char *const *t = round_trips; *t; t++) {
        struct fdp_flow_spec a = parse_ok(*t);
        char *text = fdp_flow_format(&a);
        ck_assert_str_eq(text, *t);
        struct fdp_flow_spec b = parse_ok(text);
        ck_assert(fdp_actions_equal(a.actions, b.actions));
        free(text);
        fdp_flow_spec_destroy(&a);
        fdp_flow_spec_destroy(&b);
    }
}
END_TEST

/* Bit 'i' of field 'f' of 'key'. */
static unsigned int
key_bit(const struct fdp_key *key, enum fdp_field f, unsigned int i)
{
    return (unsigned int) (fdp__key_get(key, f) >> i) & 1;
}

static void
random_key(struct unit_rng *rng, struct fdp_key *key)
{
    static const enum fdp_field fields[] = {
        FDP_F_DL_SRC, FDP_F_VLAN_TCI, FDP_F_REG1, FDP_F_REG3, FDP_F_REG6,
        FDP_F_IN_PORT,
    };

    memset(key, 0, sizeof *key);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(fields); i++) {
        uint64_t v = unit_rng_next(rng);
        fdp__key_set(key, fields[i],
                     v & (uint64_t) fdp__ones(fdp__field(fields[i])->n_bits));
    }
    /* Output ports: sometimes a port, sometimes one output ignores. */
    uint32_t ports[] = { 1, 2, 0xfeff, 0xff00, 0xfff8, 0 };
    fdp__key_set(key, FDP_F_REG6,
                 (fdp__key_get(key, FDP_F_REG6) & ~(fdp_u128) 0xffff)
                 | ports[unit_rng_below(rng, 6)]);
}

/* Resolution and materialisation against random keys, checked against a
 * reference that copies the bits one at a time. */
START_TEST(resolve_vs_reference)
{
    struct fdp_flow_spec spec = parse_ok(
        "actions=learn(table=3,priority=7,idle_timeout=9,hard_timeout=11,"
        "cookie=0x42,NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],"
        "NXM_NX_REG0[3..10]=NXM_NX_REG1[20..27],"
        "NXM_NX_REG2[0..15]=0xbeef,NXM_OF_VLAN_TCI[0..11],"
        "load:NXM_NX_REG3[0..7]->NXM_NX_REG4[8..15],"
        "load:0x5->NXM_NX_REG5[0..3],output:NXM_NX_REG6[0..15])");
    const struct fdp__action *la = learn_of(&spec);
    struct unit_rng rng;

    unit_rng_init(&rng, 0x1ea4);
    printf("resolve_vs_reference: seed %" PRIu64 "\n", unit_seed());
    for (int iter = 0; iter < 2000; iter++) {
        struct fdp_key key;
        random_key(&rng, &key);

        struct fdp__actions_builder b;
        fdp__actions_builder_init(&b);
        ck_assert_int_eq(fdp__learn_resolve(la, &key, true, &b), 0);
        struct fdp_actions *resolved = fdp__actions_finish(&b);
        ck_assert_ptr_nonnull(resolved);
        struct fdp_flow_spec got;
        ck_assert_int_eq(fdp__learn_materialize(
                             fdp__actions_first(resolved), &got), 0);

        /* The reference match, bit by bit. */
        struct fdp_match *want = fdp_match_create();
        struct {
            enum fdp_field dst, src;
            unsigned int dst_ofs, src_ofs, n;
        } copies[] = {
            { FDP_F_DL_DST, FDP_F_DL_SRC, 0, 0, 48 },
            { FDP_F_REG0, FDP_F_REG1, 3, 20, 8 },
            { FDP_F_VLAN_TCI, FDP_F_VLAN_TCI, 0, 0, 12 },
        };
        for (size_t c = 0; c < FDP_ARRAY_SIZE(copies); c++) {
            fdp_u128 v = fdp__match_get_value(want, copies[c].dst);
            fdp_u128 m = fdp__match_get_mask(want, copies[c].dst);
            for (unsigned int i = 0; i < copies[c].n; i++) {
                fdp_u128 bit = (fdp_u128) 1 << (copies[c].dst_ofs + i);
                m |= bit;
                if (key_bit(&key, copies[c].src, copies[c].src_ofs + i)) {
                    v |= bit;
                }
            }
            fdp__match_set_masked(want, copies[c].dst, v, m);
        }
        fdp__match_set_masked(want, FDP_F_REG2, 0xbeef, 0xffff);
        ck_assert(fdp_match_equal(got.match, want));

        /* The reference actions. */
        fdp__actions_builder_init(&b);
        uint64_t r3 = 0;
        for (unsigned int i = 0; i < 8; i++) {
            r3 |= (uint64_t) key_bit(&key, FDP_F_REG3, i) << (8 + i);
        }
        fdp__actions_add_set_masked(&b, FDP_F_REG4, r3, 0xff00,
                                    FDP__ACT_LOAD);
        fdp__actions_add_set_masked(&b, FDP_F_REG5, 5, 0xf, FDP__ACT_LOAD);
        uint32_t port = (uint32_t) fdp__key_get(&key, FDP_F_REG6) & 0xffff;
        if (port == 0xfff8) {
            fdp__actions_add(&b, FDP_ACT_IN_PORT, 0);
        } else if (port && port < 0xff00) {
            fdp__actions_add(&b, FDP_ACT_OUTPUT, port);
        }
        struct fdp_actions *want_acts = fdp__actions_finish(&b);
        ck_assert(fdp_actions_equal(got.actions, want_acts));
        ck_assert_uint_eq(got.table_id, 3);
        ck_assert_uint_eq(got.priority, 7);
        ck_assert_uint_eq(got.idle_timeout, 9);
        ck_assert_uint_eq(got.hard_timeout, 11);
        ck_assert_uint_eq(got.cookie, 0x42);

        fdp_actions_destroy(want_acts);
        fdp_match_destroy(want);
        fdp_flow_spec_destroy(&got);
        fdp_actions_destroy(resolved);
    }
    fdp_flow_spec_destroy(&spec);
}
END_TEST

/* Resolves 'la' against a key whose dl_src is 'mac' and applies it. */
static void
learn_mac(struct fdp_pipeline *p, const struct fdp__action *la, uint64_t mac,
          struct fdp__learn_stats *st)
{
    struct fdp_key key;
    struct fdp__actions_builder b;

    memset(&key, 0, sizeof key);
    fdp__key_set(&key, FDP_F_DL_SRC, mac);
    fdp__key_set(&key, FDP_F_IN_PORT, 7);
    fdp__actions_builder_init(&b);
    ck_assert_int_eq(fdp__learn_resolve(la, &key, true, &b), 0);
    struct fdp_actions *acts = fdp__actions_finish(&b);
    const struct fdp__action *rec = fdp__actions_first(acts);
    ck_assert_int_eq(fdp__learn_apply(p, &rec, 1, st), 0);
    fdp_actions_destroy(acts);
}

static uint64_t
count(struct fdp_pipeline *p, uint8_t table, uint64_t cookie)
{
    fdp_table_read_lock();
    uint64_t n = fdp__learn_count_cookie(p, table, cookie);
    fdp_table_read_unlock();
    return n;
}

/* The writer: a new flow, the same one again (a refresh, no new version),
 * limit=N, and delete_learned. */
START_TEST(apply_add_refresh_limit_delete)
{
    struct fdp_pipeline *p;
    struct fdp__learn_stats st = { 0 };
    struct fdp_flow_spec learning = parse_ok(
        "actions=learn(table=1,limit=2,delete_learned,cookie=0x9,"
        "NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],output:NXM_OF_IN_PORT[])");
    const struct fdp__action *la = learn_of(&learning);

    ck_assert_int_eq(fdp_pipeline_create(&p), 0);
    ck_assert_int_eq(fdp_pipeline_insert(p, &learning, 0), 0);
    size_t n;
    ck_assert_int_eq(fdp_pipeline_delete_learned(p, &n), 0);
    ck_assert_uint_eq(n, 0);

    learn_mac(p, la, 0x505400000005, &st);
    ck_assert_uint_eq(st.n_added, 1);
    ck_assert_uint_eq(count(p, 1, 0x9), 1);

    uint64_t version = fdp_pipeline_version(p);
    learn_mac(p, la, 0x505400000005, &st);
    ck_assert_uint_eq(st.n_refreshed, 1);
    ck_assert_uint_eq(fdp_pipeline_version(p), version);
    ck_assert_uint_eq(count(p, 1, 0x9), 1);

    learn_mac(p, la, 0x505400000006, &st);
    learn_mac(p, la, 0x505400000007, &st);
    ck_assert_uint_eq(st.n_added, 2);
    ck_assert_uint_eq(st.n_over_limit, 1);
    ck_assert_uint_eq(count(p, 1, 0x9), 2);

    /* The learning flow goes: its learned flows go with it. */
    struct fdp_table_filter f = { .match = NULL };
    ck_assert_int_eq(fdp_pipeline_remove(p, 0, &f, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(fdp_pipeline_delete_learned(p, &n), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(count(p, 1, 0x9), 0);

    fdp_flow_spec_destroy(&learning);
    fdp_pipeline_destroy(p);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("learn");
    TCase *tc = unit_tcase(s, "text");
    tcase_add_test(tc, text_round_trips);
    tc = unit_tcase(s, "reference");
    tcase_add_test(tc, resolve_vs_reference);
    tc = unit_tcase(s, "writer");
    tcase_add_test(tc, apply_add_refresh_limit_delete);
    return unit_run(s);
}
