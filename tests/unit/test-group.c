/*
 * Unit tests for groups (lib/group.c): the text (against what ovs-ofctl
 * prints for the same groups), bad texts, the select table's shares
 * against a brute-force apportionment and random keys, and composition
 * in the pipeline (all, indirect, ff with port liveness, select, chains,
 * deletion with the flows that name a group, transactions).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "lib/field.h"
#include "lib/group.h"
#include "lib/pipeline-view.h"
#include "lib/util.h"
#include "unit.h"

static struct fdp_group *
parse_ok(const char *text)
{
    struct fdp_group *g = NULL;
    char *msg = NULL;
    int error = fdp_group_parse(text, &g, &msg);

    ck_assert_msg(!error, "%s: %s", text, msg ? msg : "?");
    free(msg);
    return g;
}

/* Each group and what ovs-ofctl (3.1) dump-groups prints for it: -O
 * OpenFlow13, or -O OpenFlow15 for those with a selection method. */
START_TEST(format_as_ovs_ofctl)
{
    static const char *const cases[][2] = {
        { "group_id=1,type=all,bucket=output:2,bucket=output:3",
          "group_id=1,type=all,bucket=actions=output:2,"
          "bucket=actions=output:3" },
        { "group_id=2,type=select,bucket=weight:100,actions=output:2,"
          "bucket=bucket_id:7,weight=50,actions=output:3",
          "group_id=2,type=select,bucket=weight:100,actions=output:2,"
          "bucket=weight:50,actions=output:3" },
        { "group_id=3,type=select,selection_method=hash,"
          "fields(ip_src,tcp_dst),bucket=output:2,bucket=output:3",
          "group_id=3,type=select,selection_method=hash,"
          "fields(ip_src,tcp_dst),bucket=bucket_id:0,actions=output:2,"
          "bucket=bucket_id:1,actions=output:3" },
        { "group_id=4,type=select,selection_method=dp_hash,bucket=output:2,"
          "bucket=output:3",
          "group_id=4,type=select,selection_method=dp_hash,bucket=bucket_"
          "id:0,actions=output:2,bucket=bucket_id:1,actions=output:3" },
        { "group_id=5,type=fast_failover,bucket=watch_port:2,output:2,"
          "bucket=watch_port:3,actions=output:3",
          "group_id=5,type=ff,bucket=watch_port:2,actions=output:2,"
          "bucket=watch_port:3,actions=output:3" },
        { "group_id=6,type=indirect,bucket=output:2",
          "group_id=6,type=indirect,bucket=actions=output:2" },
        { "group_id=7,type=all,bucket=ct(commit,table=15,zone=NXM_NX_REG11"
          "[0..15],nat(dst=10.0.0.4:80))",
          "group_id=7,type=all,bucket=actions=ct(commit,table=15,zone=NXM_"
          "NX_REG11[0..15],nat(dst=10.0.0.4:80))" },
        { "group_id=8,type=select,bucket=load:0x1->NXM_NX_REG3[],"
          "resubmit(,40)",
          "group_id=8,type=select,bucket=actions=load:0x1->NXM_NX_REG3[],"
          "resubmit(,40)" },
        { "group_id=9,type=select,selection_method=hash,fields=ip_dst,"
          "bucket=output:2",
          "group_id=9,type=select,selection_method=hash,fields=ip_dst,"
          "bucket=bucket_id:0,actions=output:2" },
        { "group_id=10,type=all",
          "group_id=10,type=all" },
    };

    for (size_t i = 0; i < FDP_ARRAY_SIZE(cases); i++) {
        struct fdp_group *g = parse_ok(cases[i][0]);
        char *text = fdp_group_format(g);
        ck_assert_str_eq(text, cases[i][1]);
        /* The printed form parses back to itself. */
        struct fdp_group *again = parse_ok(text);
        char *text2 = fdp_group_format(again);
        ck_assert_str_eq(text2, text);
        free(text);
        free(text2);
        fdp_group_destroy(g);
        fdp_group_destroy(again);
    }
}
END_TEST

/* Bad texts: refused with a message that says what is wrong. */
START_TEST(bad_texts_refused)
{
    static const char *const cases[][2] = {
        { "type=all,bucket=output:2", "must specify a group_id" },
        { "group_id=1,bucket=output:2", "must specify a type" },
        { "group_id=1,type=foo", "column 12: invalid group type foo" },
        { "group_id=x,type=all", "column 1: group_id=x" },
        { "group_id=1,type=all,colour=red", "unknown keyword colour" },
        { "group_id=1,type=ff,bucket=output:2", "requires watch_port" },
        { "group_id=1,type=all,bucket=weight:2,output:2",
          "Only select groups" },
        { "group_id=1,type=indirect,bucket=output:2,bucket=output:3",
          "at most one bucket" },
        { "group_id=1,type=all,bucket=output:99999", "out of range" },
        { "group_id=1,type=all,bucket=watch_port:2", "must specify actions" },
        { "group_id=1,type=select,fields(ip_src),bucket=output:2",
          "selection_method=hash" },
        { "group_id=1,type=select,selection_method=foo,bucket=output:2",
          "unknown selection method" },
        { "group_id=1,type=select,selection_method=hash,fields(colour),"
          "bucket=output:2", "unknown field colour" },
        { "group_id=1,type=select,selection_method=hash,fields(ip_src,"
          "ip_src),bucket=output:2", "duplicate field" },
        { "group_id=1,type=all,bucket=bucket_id:1,output:2,bucket=bucket_"
          "id:1,output:3", "duplicate bucket_id" },
        { "group_id=1,type=all,selection_method_param=5",
          "only allowed with" },
        { "group_id=1,type=all,bucket=conjunction(1,1/2)", "conjunction" },
        { "group_id=4294967295,type=all", "group_id" },
    };

    for (size_t i = 0; i < FDP_ARRAY_SIZE(cases); i++) {
        struct fdp_group *g = NULL;
        char *msg = NULL;
        int error = fdp_group_parse(cases[i][0], &g, &msg);
        ck_assert_msg(error == EINVAL, "%s: accepted", cases[i][0]);
        ck_assert_ptr_null(g);
        ck_assert_msg(msg && strstr(msg, cases[i][1]), "%s: \"%s\" lacks "
                      "\"%s\"", cases[i][0], msg ? msg : "(none)",
                      cases[i][1]);
        free(msg);
    }
}
END_TEST

/* The select table: slot counts within one of the exact proportional
 * share (Webster's method never strays further), at least eight slots
 * per bucket, and random keys spread within 20 % of the weights. */
START_TEST(select_shares)
{
    struct unit_rng rng;
    struct fdp__group_set set;

    unit_rng_init(&rng, 31);
    memset(&set, 0, sizeof set);
    for (int trial = 0; trial < 200; trial++) {
        uint32_t n = 1 + unit_rng_below(&rng, trial < 100 ? 16 : 64);
        bool equal = trial % 2;
        char text[8192];
        int len = snprintf(text, sizeof text, "group_id=1,type=select");
        uint32_t w[64], total = 0;
        for (uint32_t i = 0; i < n; i++) {
            w[i] = equal ? 1 : 1 + unit_rng_below(&rng, 10);
            total += w[i];
            len += snprintf(text + len, sizeof text - (size_t) len,
                            ",bucket=weight:%u,output:%u", w[i], i + 1);
        }
        struct fdp_group *g = parse_ok(text);
        uint32_t n_slots = g->slot_mask + 1;
        ck_assert_uint_ge(n_slots, 8 * n);
        uint32_t slots[64] = { 0 };
        for (uint32_t s = 0; s < n_slots; s++) {
            slots[g->slots[s]]++;
        }
        for (uint32_t i = 0; i < n; i++) {
            double exact = (double) n_slots * w[i] / total;
            ck_assert_msg(slots[i] + 1.0 > exact && slots[i] < exact + 1.0,
                          "trial %d bucket %u: %u slots for %.2f (seed "
                          "%llu)", trial, i, slots[i], exact,
                          (unsigned long long) unit_seed());
        }
        if (equal && n <= 16) {
            /* Random 5-tuples. */
            uint32_t hits[64] = { 0 };
            const int n_keys = 4000 * (int) n;
            for (int k = 0; k < n_keys; k++) {
                struct fdp_key key;
                memset(&key, 0, sizeof key);
                fdp__key_set(&key, FDP_F_DL_TYPE, FDP_ETH_TYPE_IP);
                fdp__key_set(&key, FDP_F_NW_PROTO, FDP_IPPROTO_TCP);
                fdp__key_set(&key, FDP_F_NW_SRC, unit_rng_next(&rng)
                                                 & 0xffffffff);
                fdp__key_set(&key, FDP_F_NW_DST, 0x0a000001);
                fdp__key_set(&key, FDP_F_TP_SRC, unit_rng_below(&rng,
                                                                65536));
                fdp__key_set(&key, FDP_F_TP_DST, 80);
                const struct fdp__bucket *b
                    = fdp__group_select_bucket(&set, g, &key);
                ck_assert_ptr_nonnull(b);
                hits[b - g->buckets]++;
            }
            for (uint32_t i = 0; i < n; i++) {
                double share = (double) hits[i] / n_keys * n;
                ck_assert_msg(share > 0.8 && share < 1.2, "trial %d: bucket "
                              "%u of %u has %.3f of its share (seed %llu)",
                              trial, i, n, share,
                              (unsigned long long) unit_seed());
            }
        }
        fdp_group_destroy(g);
    }
}
END_TEST

/* The default selection is symmetric: both directions of a connection
 * take the same bucket; hash with fields follows only those fields. */
START_TEST(select_hash_kinds)
{
    struct fdp__group_set set;
    struct fdp_group *sym = parse_ok("group_id=1,type=select,bucket=output:1,"
                                     "bucket=output:2,bucket=output:3,"
                                     "bucket=output:4");
    struct fdp_group *fields = parse_ok(
        "group_id=2,type=select,selection_method=hash,fields(ip_dst),"
        "bucket=output:1,bucket=output:2,bucket=output:3,bucket=output:4");
    struct unit_rng rng;

    memset(&set, 0, sizeof set);
    unit_rng_init(&rng, 32);
    for (int i = 0; i < 1000; i++) {
        struct fdp_key a, b;
        memset(&a, 0, sizeof a);
        fdp__key_set(&a, FDP_F_DL_TYPE, FDP_ETH_TYPE_IP);
        fdp__key_set(&a, FDP_F_NW_PROTO, FDP_IPPROTO_UDP);
        fdp__key_set(&a, FDP_F_NW_SRC, unit_rng_next(&rng) & 0xffffffff);
        fdp__key_set(&a, FDP_F_NW_DST, unit_rng_next(&rng) & 0xffffffff);
        fdp__key_set(&a, FDP_F_TP_SRC, unit_rng_below(&rng, 65536));
        fdp__key_set(&a, FDP_F_TP_DST, unit_rng_below(&rng, 65536));
        b = a;
        fdp__key_set(&b, FDP_F_NW_SRC, fdp__key_get(&a, FDP_F_NW_DST));
        fdp__key_set(&b, FDP_F_NW_DST, fdp__key_get(&a, FDP_F_NW_SRC));
        fdp__key_set(&b, FDP_F_TP_SRC, fdp__key_get(&a, FDP_F_TP_DST));
        fdp__key_set(&b, FDP_F_TP_DST, fdp__key_get(&a, FDP_F_TP_SRC));
        ck_assert_ptr_eq(fdp__group_select_bucket(&set, sym, &a),
                         fdp__group_select_bucket(&set, sym, &b));
        struct fdp_key c = a;
        fdp__key_set(&c, FDP_F_NW_SRC, 1);
        fdp__key_set(&c, FDP_F_TP_SRC, 7);
        ck_assert_ptr_eq(fdp__group_select_bucket(&set, fields, &a),
                         fdp__group_select_bucket(&set, fields, &c));
    }
    fdp_group_destroy(sym);
    fdp_group_destroy(fields);
}
END_TEST

/* ---- Composition ---- */

static void
add_group(struct fdp_pipeline *p, const char *text, int expect)
{
    int error = fdp_pipeline_group_add(p, parse_ok(text), FDP_GROUP_ADD);

    ck_assert_msg(error == expect, "%s: %d, expected %d", text, error,
                  expect);
}

static int
add_flow(struct fdp_pipeline *p, const char *text)
{
    struct fdp_flow_spec spec;
    char *msg = NULL;

    ck_assert_msg(!fdp_flow_parse(text, 0, &spec, &msg), "%s: %s", text,
                  msg ? msg : "?");
    int error = fdp_pipeline_insert(p, &spec, 0);
    fdp_flow_spec_destroy(&spec);
    return error;
}

/* The composed actions of 'packet', as text. */
static char *
compose(struct fdp_pipeline *p, const char *packet)
{
    struct fdp_pipeline_result r;
    struct fdp_key key;
    char *msg = NULL;

    ck_assert_msg(!fdp_packet_parse(packet, &key, &msg), "%s: %s", packet,
                  msg ? msg : "?");
    fdp_pipeline_result_init(&r);
    fdp_table_read_lock();
    ck_assert_int_eq(fdp_pipeline_classify(p, &key, 0, &r, NULL, NULL), 0);
    fdp_table_read_unlock();
    struct fdp_match *m = fdp_match_create();
    char *text = fdp_actions_format(r.actions, m);
    fdp_match_destroy(m);
    fdp_pipeline_result_destroy(&r);
    return text;
}

static void
expect_actions(struct fdp_pipeline *p, const char *packet, const char *want)
{
    char *got = compose(p, packet);

    ck_assert_msg(!strcmp(got, want), "%s: got %s, expected %s", packet, got,
                  want);
    free(got);
}

#define PKT "in_port=1,udp,dl_src=00:00:00:00:00:01,nw_src=10.0.0.1," \
            "nw_dst=10.0.0.2,tp_src=5,tp_dst=6"

START_TEST(compose_groups)
{
    struct fdp_pipeline *p;

    ck_assert_int_eq(fdp_pipeline_create(&p), 0);
    /* A flow may not name a missing group. */
    ck_assert_int_eq(add_flow(p, "actions=group:1"), ENOENT);

    /* all: each bucket on the packet the group got; the action set's
     * order (set-field before output; one output only). */
    add_group(p, "group_id=1,type=all,bucket=output:2,mod_dl_src:00:00:00:"
              "00:00:09,bucket=output:3,output:4", 0);
    ck_assert_int_eq(add_flow(p, "priority=1,actions=group:1,output:5"), 0);
    expect_actions(p, PKT, "mod_dl_src:00:00:00:00:00:09,output:2,"
                   "set_field:00:00:00:00:00:01->eth_src,output:4,output:5");

    /* A bucket's registers do not outlive it; resubmit runs in it. */
    add_group(p, "group_id=2,type=indirect,bucket=load:0x7->NXM_NX_REG0[],"
              "resubmit(,1)", 0);
    ck_assert_int_eq(add_flow(p, "priority=2,udp,actions=group:2,"
                              "resubmit(,2)"), 0);
    ck_assert_int_eq(add_flow(p, "table=1,reg0=7,actions=output:7"), 0);
    ck_assert_int_eq(add_flow(p, "table=2,reg0=0,actions=output:8"), 0);
    expect_actions(p, PKT, "output:7,output:8");

    /* ff: the first live bucket, as the ports' liveness changes. */
    add_group(p, "group_id=3,type=ff,bucket=watch_port:2,output:2,"
              "bucket=watch_port:3,output:3", 0);
    ck_assert_int_eq(add_flow(p, "priority=3,udp,actions=group:3"), 0);
    expect_actions(p, PKT, "drop");
    uint64_t v = fdp_pipeline_version(p);
    ck_assert_int_eq(fdp_pipeline_set_port_live(p, 3, true), 0);
    ck_assert_uint_gt(fdp_pipeline_version(p), v);
    expect_actions(p, PKT, "output:3");
    ck_assert_int_eq(fdp_pipeline_set_port_live(p, 2, true), 0);
    expect_actions(p, PKT, "output:2");
    ck_assert_int_eq(fdp_pipeline_set_port_live(p, 2, false), 0);
    expect_actions(p, PKT, "output:3");

    /* Chains: watch_group, group:N in a bucket; loops refused. */
    add_group(p, "group_id=4,type=ff,bucket=watch_group:3,group:3,"
              "bucket=watch_port:9,output:9", 0);
    ck_assert_int_eq(add_flow(p, "priority=4,udp,actions=group:4"), 0);
    expect_actions(p, PKT, "output:3");
    add_group(p, "group_id=5,type=all,bucket=group:6", 0);
    add_group(p, "group_id=6,type=all,bucket=group:5", ELOOP);
    add_group(p, "group_id=7,type=all,bucket=group:7", ELOOP);

    /* Deleting a group deletes the flows naming it, atomically. */
    size_t n = 0;
    ck_assert_int_eq(fdp_pipeline_group_del(p, 3, &n), 0);
    ck_assert_uint_eq(n, 1);
    /* Group 4's bucket names 3, now gone: ends there; no live bucket. */
    expect_actions(p, PKT, "drop");
    ck_assert_int_eq(fdp_pipeline_group_del(p, 1234, &n), 0);
    ck_assert_uint_eq(n, 0);

    /* An aborted transaction leaves no group behind. */
    ck_assert_int_eq(fdp_pipeline_begin(p), 0);
    add_group(p, "group_id=20,type=all,bucket=output:2", 0);
    fdp_pipeline_abort(p);
    ck_assert_int_eq(add_flow(p, "priority=9,actions=group:20"), ENOENT);

    /* mod: replaces; modify of a missing group is ENOENT. */
    ck_assert_int_eq(fdp_pipeline_group_add(
                         p, parse_ok("group_id=4,type=indirect,bucket="
                                     "output:6"), FDP_GROUP_MODIFY), 0);
    expect_actions(p, PKT, "output:6");
    ck_assert_int_eq(fdp_pipeline_group_add(
                         p, parse_ok("group_id=40,type=indirect,bucket="
                                     "output:6"), FDP_GROUP_MODIFY), ENOENT);

    ck_assert_int_eq(fdp_pipeline_group_del(p, FDP_GROUP_ALL, &n), 0);
    ck_assert_uint_eq(n, 3);
    expect_actions(p, PKT, "drop");
    fdp_pipeline_destroy(p);
}
END_TEST

/* A select group through the pipeline: every 5-tuple composes to one of
 * its buckets, always the same one for the same key. */
START_TEST(compose_select)
{
    struct fdp_pipeline *p;

    ck_assert_int_eq(fdp_pipeline_create(&p), 0);
    add_group(p, "group_id=1,type=select,bucket=output:2,bucket=output:3,"
              "bucket=weight:0,output:4", 0);
    ck_assert_int_eq(add_flow(p, "actions=group:1"), 0);
    unsigned int seen[5] = { 0 };
    for (int i = 0; i < 400; i++) {
        char pkt[200];
        snprintf(pkt, sizeof pkt, "in_port=1,tcp,nw_src=10.0.%d.%d,"
                 "nw_dst=10.1.0.1,tp_src=%d,tp_dst=80", i / 200, i % 200,
                 1000 + i);
        char *a = compose(p, pkt);
        char *b = compose(p, pkt);
        ck_assert_str_eq(a, b);
        ck_assert(!strcmp(a, "output:2") || !strcmp(a, "output:3"));
        seen[a[7] - '0']++;
        free(a);
        free(b);
    }
    ck_assert_uint_gt(seen[2], 140);
    ck_assert_uint_gt(seen[3], 140);
    fdp_pipeline_destroy(p);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("group");
    TCase *tc = unit_tcase(s, "group");

    tcase_add_test(tc, format_as_ovs_ofctl);
    tcase_add_test(tc, bad_texts_refused);
    tcase_add_test(tc, select_shares);
    tcase_add_test(tc, select_hash_kinds);
    tcase_add_test(tc, compose_groups);
    tcase_add_test(tc, compose_select);
    return unit_run(s);
}
