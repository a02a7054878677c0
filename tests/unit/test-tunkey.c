/*
 * The tunnel fields of the key and TLV maps (lib/key.c, lib/tlv-map.c,
 * lib/tun-md-text.c): random matches on the tunnel fields, written as
 * text, against a brute-force reading of the same text's constraints on
 * random keys; TLV maps against a model of their slot allocation; option
 * bytes in and out of the key; and lookups while a writer changes the map
 * (the "concurrency" case, run under ThreadSanitizer by scripts/test.sh).
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "lib/field.h"
#include "lib/match-internal.h"
#include "lib/rcu.h"
#include "lib/tlv-map.h"
#include "lib/util.h"
#include "tests/unit/unit.h"

/* ---------------------------------------------------------------------- */
/* Matches on the tunnel fields against brute force.                       */

/* One constraint: field 'f' is 'value' under 'mask', or in [lo, hi]. */
struct want {
    enum fdp_field f;
    bool range;
    fdp_u128 value, mask, lo, hi;
};

static fdp_u128
rand128(struct unit_rng *rng)
{
    return ((fdp_u128) unit_rng_next(rng) << 64) | unit_rng_next(rng);
}

/* A random value of field 'f' (often one of a few, so that keys hit). */
static fdp_u128
rand_value(struct unit_rng *rng, enum fdp_field f)
{
    fdp_u128 ones = fdp__ones(fdp__field(f)->n_bits);

    return unit_rng_below(rng, 2) ? rand128(rng) & ones
                                  : unit_rng_below(rng, 3) & ones;
}

static void
put_value(char *buf, size_t size, enum fdp_field f, fdp_u128 v)
{
    if (fdp__field(f)->n_bits == 128) {
        snprintf(buf, size, "%x:%x:%x:%x:%x:%x:%x:%x",
                 (unsigned int) (v >> 112) & 0xffff,
                 (unsigned int) (v >> 96) & 0xffff,
                 (unsigned int) (v >> 80) & 0xffff,
                 (unsigned int) (v >> 64) & 0xffff,
                 (unsigned int) (v >> 48) & 0xffff,
                 (unsigned int) (v >> 32) & 0xffff,
                 (unsigned int) (v >> 16) & 0xffff,
                 (unsigned int) v & 0xffff);
    } else if (fdp__field(f)->syntax == FDP__S_IPV4) {
        uint32_t a = (uint32_t) v;
        snprintf(buf, size, "%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff,
                 (a >> 8) & 0xff, a & 0xff);
    } else {
        snprintf(buf, size, "0x%llx", (unsigned long long) v);
    }
}

/* Builds a random match text on the tunnel fields into 'text' and the
 * constraints it makes into 'w'; returns their number. */
static size_t
random_tunnel_match(struct unit_rng *rng, char *text, size_t size,
                    struct want *w)
{
    static const enum fdp_field fields[] = {
        FDP_F_TUN_ID, FDP_F_TUN_FLAGS, FDP_F_TUN_TOS, FDP_F_TUN_TTL,
        FDP_F_TUN_GBP_ID, FDP_F_TUN_GBP_FLAGS,
    };
    size_t n = 0, len = 0;
    bool v6 = unit_rng_below(rng, 2);

    text[0] = '\0';
    for (size_t i = 0; i < FDP_ARRAY_SIZE(fields) + 2; i++) {
        if (unit_rng_below(rng, 2)) {
            continue;
        }
        enum fdp_field f = i < FDP_ARRAY_SIZE(fields) ? fields[i]
                           : v6 ? (i == FDP_ARRAY_SIZE(fields)
                                   ? FDP_F_TUN_IPV6_SRC : FDP_F_TUN_IPV6_DST)
                           : (i == FDP_ARRAY_SIZE(fields)
                              ? FDP_F_TUN_SRC : FDP_F_TUN_DST);
        const struct fdp__field *fd = fdp__field(f);
        struct want *x = &w[n];
        char a[64], b[64];
        memset(x, 0, sizeof *x);
        x->f = f;
        if ((fd->flags & FDP__F_RANGE) && unit_rng_below(rng, 4) == 0) {
            fdp_u128 p = rand_value(rng, f), q = rand_value(rng, f);
            x->range = true;
            x->lo = p < q ? p : q;
            x->hi = p < q ? q : p;
            put_value(a, sizeof a, f, x->lo);
            put_value(b, sizeof b, f, x->hi);
            len += (size_t) snprintf(text + len, size - len, "%s=%s-%s,",
                                     fd->name, a, b);
        } else if ((fd->flags & FDP__F_MASKABLE) && unit_rng_below(rng, 2)) {
            x->mask = rand_value(rng, f);
            x->value = rand_value(rng, f) & x->mask;
            put_value(a, sizeof a, f, x->value);
            put_value(b, sizeof b, f, x->mask);
            len += (size_t) snprintf(text + len, size - len, "%s=%s/%s,",
                                     fd->name, a, b);
        } else {
            x->mask = fdp__ones(fd->n_bits);
            x->value = rand_value(rng, f);
            put_value(a, sizeof a, f, x->value);
            len += (size_t) snprintf(text + len, size - len, "%s=%s,",
                                     fd->name, a);
        }
        n++;
    }
    len += (size_t) snprintf(text + len, size - len, "actions=drop");
    return n;
}

/* A random key whose tunnel words are random, with the family bit set at
 * random, often close to the constraints 'w' (so that some keys match). */
static void
random_key(struct unit_rng *rng, const struct want *w, size_t n,
           struct fdp_key *key)
{
    memset(key, 0, sizeof *key);
    for (unsigned int i = FDP__TUN_FIRST_WORD; i < FDP_KEY_WORDS; i++) {
        key->w[i] = unit_rng_below(rng, 4) ? 0 : unit_rng_next(rng);
    }
    key->w[FDP__TUN_IPV6_WORD] &= ~FDP__TUN_IPV6_BIT;
    for (size_t i = 0; i < n; i++) {
        if (unit_rng_below(rng, 4)) {
            fdp_u128 v = w[i].range ? w[i].lo + (w[i].hi - w[i].lo) / 2
                                    : w[i].value
                                      | (rand128(rng) & ~w[i].mask);
            fdp__key_set(key, w[i].f, v);
        }
        if (fdp__field_is_tun_addr(w[i].f) && unit_rng_below(rng, 8)
            && fdp__field_is_tun_ipv6(w[i].f)) {
            key->w[FDP__TUN_IPV6_WORD] |= FDP__TUN_IPV6_BIT;
        }
    }
    if (unit_rng_below(rng, 16) == 0) {
        key->w[FDP__TUN_IPV6_WORD] ^= FDP__TUN_IPV6_BIT;
    }
}

/* The brute force: every constraint holds on the field as the key has
 * it, and a tunnel address's family is the key's. */
static bool
brute_matches(const struct want *w, size_t n, const struct fdp_key *key)
{
    bool v6 = key->w[FDP__TUN_IPV6_WORD] & FDP__TUN_IPV6_BIT;

    for (size_t i = 0; i < n; i++) {
        fdp_u128 v = fdp__key_get(key, w[i].f);
        bool addr = fdp__field_is_tun_addr(w[i].f);
        bool constrains = w[i].range || w[i].mask;
        if (addr && constrains && v6 != fdp__field_is_tun_ipv6(w[i].f)) {
            return false;
        }
        if (w[i].range ? v < w[i].lo || v > w[i].hi
            : (v & w[i].mask) != w[i].value) {
            return false;
        }
    }
    return true;
}

START_TEST(tunnel_matches_against_brute_force)
{
    struct unit_rng rng;
    int n_hits = 0, n_flows = 0;

    unit_rng_init(&rng, 251);
    for (int round = 0; round < 3000; round++) {
        char text[1024];
        struct want w[16];
        size_t n = random_tunnel_match(&rng, text, sizeof text, w);
        struct fdp_flow_spec flow;
        char *error = NULL;
        int err = fdp_flow_parse(text, 0, &flow, &error);
        /* A range that is one value or the whole field, and prefix
         * blocks, parse as value/mask: the brute force reads them as
         * written, which is the same set. */
        ck_assert_msg(!err, "seed %llu: \"%s\": %s",
                      (unsigned long long) unit_seed(), text, error);
        n_flows++;
        /* The text printed parses back to the same match. */
        char *again = fdp_flow_format(&flow);
        struct fdp_flow_spec back;
        ck_assert_msg(!fdp_flow_parse(again, 0, &back, &error),
                      "seed %llu: \"%s\" printed as \"%s\": %s",
                      (unsigned long long) unit_seed(), text, again, error);
        ck_assert_msg(fdp_match_equal(flow.match, back.match),
                      "seed %llu: \"%s\" printed as \"%s\" reads back "
                      "differently", (unsigned long long) unit_seed(), text,
                      again);
        for (int k = 0; k < 40; k++) {
            struct fdp_key key;
            random_key(&rng, w, n, &key);
            bool want = brute_matches(w, n, &key);
            bool got = fdp_match_matches(flow.match, &key);
            ck_assert_msg(want == got, "seed %llu: \"%s\" (printed \"%s\"): "
                          "key %d: brute force %d, match %d",
                          (unsigned long long) unit_seed(), text, again, k,
                          want, got);
            n_hits += got;
        }
        free(again);
        fdp_flow_spec_destroy(&back);
        fdp_flow_spec_destroy(&flow);
    }
    ck_assert_int_gt(n_hits, n_flows);
}
END_TEST

/* tun_src and tun_ipv6_src share storage: a flow names one family, and a
 * packet of the other never matches it. */
START_TEST(tunnel_address_families)
{
    struct fdp_flow_spec f4, f6;
    struct fdp_key k;
    char *error = NULL;

    ck_assert_int_eq(fdp_flow_parse("tun_src=32.1.13.184,actions=drop", 0,
                                    &f4, &error), 0);
    ck_assert_int_eq(fdp_flow_parse("tun_ipv6_src=2001:db8::/32,"
                                    "actions=drop", 0, &f6, &error), 0);
    ck_assert_int_eq(fdp_packet_parse("tun_src=32.1.13.184", &k, &error), 0);
    ck_assert(fdp_match_matches(f4.match, &k));
    ck_assert(!fdp_match_matches(f6.match, &k));
    ck_assert_int_eq(fdp_packet_parse("tun_ipv6_src=2001:db8::1", &k,
                                      &error), 0);
    ck_assert(!fdp_match_matches(f4.match, &k));
    ck_assert(fdp_match_matches(f6.match, &k));
    fdp_flow_spec_destroy(&f4);
    fdp_flow_spec_destroy(&f6);

    struct fdp_flow_spec both;
    ck_assert_int_eq(fdp_flow_parse("tun_src=1.2.3.4,tun_ipv6_dst=::1,"
                                    "actions=drop", 0, &both, &error),
                     EINVAL);
    ck_assert_msg(error && strstr(error, "conflicts with tun_src"), "%s",
                  error);
    free(error);

    /* Writing an address of the other family clears the old one. */
    memset(&k, 0, sizeof k);
    fdp__key_set_tunnel(&k, FDP_F_TUN_IPV6_DST, ~(fdp_u128) 0);
    ck_assert(k.w[FDP__TUN_IPV6_WORD] & FDP__TUN_IPV6_BIT);
    fdp__key_set_tunnel(&k, FDP_F_TUN_DST, 0x0a000001);
    ck_assert(!(k.w[FDP__TUN_IPV6_WORD] & FDP__TUN_IPV6_BIT));
    ck_assert_uint_eq((uint64_t) fdp__key_get(&k, FDP_F_TUN_IPV6_DST),
                      0);
    ck_assert_uint_eq((uint64_t) (fdp__key_get(&k, FDP_F_TUN_IPV6_DST) >> 96),
                      0x0a000001);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* TLV maps against a model.                                               */

struct model {
    bool mapped[FDP_TLV_MAP_FIELDS];
    uint16_t cls[FDP_TLV_MAP_FIELDS];
    uint8_t type[FDP_TLV_MAP_FIELDS], len[FDP_TLV_MAP_FIELDS];
    uint8_t offset[FDP_TLV_MAP_FIELDS];
    uint8_t used;
};

static unsigned int
model_bytes(const struct model *m)
{
    unsigned int n = 0;

    for (int i = 0; i < FDP_TLV_MAP_FIELDS; i++) {
        n += m->mapped[i] ? m->len[i] : 0;
    }
    return n;
}

START_TEST(tlv_map_against_model)
{
    struct unit_rng rng;
    struct fdp_tlv_map *map;
    struct model m;

    unit_rng_init(&rng, 252);
    ck_assert_int_eq(fdp_tlv_map_create(&map), 0);
    memset(&m, 0, sizeof m);
    for (int round = 0; round < 20000; round++) {
        unsigned int idx = unit_rng_below(&rng, 8) * 9 % FDP_TLV_MAP_FIELDS;
        uint16_t cls = (uint16_t) unit_rng_below(&rng, 3);
        uint8_t type = (uint8_t) unit_rng_below(&rng, 3);
        uint8_t len = (uint8_t) (4 * (1 + unit_rng_below(&rng, 4)));
        char text[96], *msg = NULL;
        snprintf(text, sizeof text, "{class=%u,type=%#x,len=%u}->"
                 "tun_metadata%u", cls, type, len, idx);
        if (unit_rng_below(&rng, 3)) {
            /* The model's verdict: index free, option new, room for it as
             * one run of slots, first fit. */
            bool dup = false;
            for (int i = 0; i < FDP_TLV_MAP_FIELDS; i++) {
                dup |= m.mapped[i] && m.cls[i] == cls && m.type[i] == type;
            }
            int slot = -1;
            unsigned int k = len / 4u, run = (1u << k) - 1;
            for (unsigned int s = 0; s + k <= 8 && slot < 0; s++) {
                if (!(m.used & (run << s))) {
                    slot = (int) s;
                }
            }
            bool ok = !m.mapped[idx] && !dup
                      && model_bytes(&m) + len <= FDP_TLV_MAP_SPACE
                      && slot >= 0;
            int err = fdp_tlv_map_add(map, text, &msg);
            ck_assert_msg(ok == !err, "seed %llu round %d: add %s: model "
                          "%d, map %d (%s)", (unsigned long long) unit_seed(),
                          round, text, ok, err, msg ? msg : "");
            if (!ok && model_bytes(&m) + len > FDP_TLV_MAP_SPACE
                && !m.mapped[idx] && !dup) {
                char want[64];
                snprintf(want, sizeof want, "tun_metadata space is 32 bytes; "
                         "map needs %u", model_bytes(&m) + len);
                ck_assert_msg(msg && strstr(msg, want), "%s", msg);
            }
            if (ok) {
                m.mapped[idx] = true;
                m.cls[idx] = cls;
                m.type[idx] = type;
                m.len[idx] = len;
                m.offset[idx] = (uint8_t) (slot * 4);
                m.used |= (uint8_t) (run << slot);
            }
        } else {
            bool ok = m.mapped[idx] && m.cls[idx] == cls
                      && m.type[idx] == type && m.len[idx] == len;
            int err = fdp_tlv_map_del(map, text, &msg);
            ck_assert_msg(ok == !err, "seed %llu round %d: del %s: model %d",
                          (unsigned long long) unit_seed(), round, text, ok);
            if (ok) {
                m.mapped[idx] = false;
                m.used &= (uint8_t) ~(((1u << (len / 4u)) - 1)
                                      << (m.offset[idx] / 4u));
            }
        }
        free(msg);
        /* Every lookup agrees with the model. */
        fdp__rcu_read_lock();
        for (int i = 0; i < FDP_TLV_MAP_FIELDS; i++) {
            unsigned int off, l;
            bool found = fdp__tlv_map_field(map, (unsigned int) i, &off, &l);
            ck_assert_int_eq(found, m.mapped[i]);
            if (found) {
                ck_assert_uint_eq(off, m.offset[i]);
                ck_assert_uint_eq(l, m.len[i]);
                ck_assert_int_eq(fdp__tlv_map_lookup(map, m.cls[i],
                                                     m.type[i], &off, &l),
                                 0);
                ck_assert_uint_eq(off, m.offset[i]);
                uint16_t c;
                uint8_t ty;
                ck_assert_int_eq(fdp__tlv_map_at(map, m.offset[i] / 4u, &c,
                                                 &ty, &l), 0);
                ck_assert(c == m.cls[i] && ty == m.type[i]
                          && l == m.len[i]);
            }
        }
        unsigned int off, l;
        ck_assert_int_eq(fdp__tlv_map_lookup(map, 77, 77, &off, &l), ENOENT);
        fdp__rcu_read_unlock();
        if (unit_rng_below(&rng, 500) == 0) {
            ck_assert_int_eq(fdp_tlv_map_del(map, NULL, NULL), 0);
            memset(&m, 0, sizeof m);
        }
    }
    /* The journal's text of a map builds the same map. */
    char *text = fdp_tlv_map_to_text(map);
    struct fdp_tlv_map *copy;
    ck_assert_int_eq(fdp_tlv_map_create(&copy), 0);
    ck_assert_int_eq(fdp_tlv_map_add(copy, text, NULL), 0);
    char *d1 = fdp_tlv_map_dump(map), *d2 = fdp_tlv_map_dump(copy);
    ck_assert_str_eq(d1, d2);
    free(d1);
    free(d2);
    free(text);
    fdp_tlv_map_destroy(copy);
    fdp_tlv_map_destroy(map);
}
END_TEST

START_TEST(tlv_map_text_errors)
{
    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        { "{class=1,type=1,len=3}->tun_metadata0", "not a multiple of 4" },
        { "{class=1,type=1,len=36}->tun_metadata0", "not a multiple of 4" },
        { "{class=1,type=1,len=4}->tun_metadata64", "at most 63" },
        { "{class=1,type=1,len=4}->tun_metadata", "invalid tlv mapping" },
        { "{class=0x10000,type=1,len=4}->tun_metadata0",
          "invalid tlv mapping" },
        { "{class=1,type=1,len=4}->tun_metadata0,"
          "{class=1,type=1,len=4}->tun_metadata1", "already mapped" },
        { "{class=1,type=1,len=4}->tun_metadata0,"
          "{class=1,type=2,len=4}->tun_metadata0", "already mapped" },
        { "{class=1,type=1,len=16}->tun_metadata0,"
          "{class=1,type=2,len=20}->tun_metadata1",
          "tun_metadata space is 32 bytes; map needs 36" },
    };
    struct fdp_tlv_map *map;

    ck_assert_int_eq(fdp_tlv_map_create(&map), 0);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(bad); i++) {
        char *msg = NULL;
        ck_assert_int_eq(fdp_tlv_map_add(map, bad[i].text, &msg), EINVAL);
        ck_assert_msg(msg && strstr(msg, bad[i].msg), "%s: \"%s\"",
                      bad[i].text, msg ? msg : "(none)");
        free(msg);
        /* All or none: nothing was added. */
        char *t = fdp_tlv_map_to_text(map);
        ck_assert_str_eq(t, "");
        free(t);
    }
    fdp_tlv_map_destroy(map);
}
END_TEST

/* Option bytes in and out of a key, and tun_metadataN matches through a
 * map: a flow matches the option's bytes and its presence. */
START_TEST(tun_metadata_matches)
{
    struct fdp_tlv_map *map;
    struct unit_rng rng;

    unit_rng_init(&rng, 253);
    ck_assert_int_eq(fdp_tlv_map_create(&map), 0);
    ck_assert_int_eq(fdp_tlv_map_add(map, "{class=0xffff,type=0,len=4}->"
                                     "tun_metadata0,{class=0x102,type=0x80,"
                                     "len=8}->tun_metadata5", NULL), 0);
    fdp_tlv_map_use_for_text(map);

    struct fdp_flow_spec f0, f5;
    char *error = NULL;
    ck_assert_int_eq(fdp_flow_parse("tun_metadata0=0x1234,actions=drop", 0,
                                    &f0, &error), 0);
    ck_assert_int_eq(fdp_flow_parse("tun_metadata5=0x11/0xff,actions=drop",
                                    0, &f5, &error), 0);
    for (int round = 0; round < 2000; round++) {
        struct fdp_key k;
        uint8_t o0[4], o5[8], back[8];
        memset(&k, 0, sizeof k);
        uint32_t v0 = unit_rng_below(&rng, 2) ? 0x1234 : unit_rng_next(&rng);
        for (int i = 0; i < 4; i++) {
            o0[i] = (uint8_t) (v0 >> (24 - 8 * i));
        }
        for (int i = 0; i < 8; i++) {
            o5[i] = (uint8_t) unit_rng_next(&rng);
        }
        bool has0 = unit_rng_below(&rng, 3), has5 = unit_rng_below(&rng, 3);
        if (has0) {
            fdp__tun_md_put(&k, 0, o0, 4);
        }
        if (has5) {
            fdp__tun_md_put(&k, 4, o5, 8);
            ck_assert(fdp__tun_md_get(&k, 4, back, 8));
            ck_assert_mem_eq(back, o5, 8);
        }
        ck_assert_int_eq(fdp_match_matches(f0.match, &k),
                         has0 && v0 == 0x1234);
        ck_assert_int_eq(fdp_match_matches(f5.match, &k),
                         has5 && o5[7] == 0x11);
    }
    /* A field the map does not name is refused. */
    struct fdp_flow_spec bad;
    ck_assert_int_eq(fdp_flow_parse("tun_metadata1=1,actions=drop", 0, &bad,
                                    &error), EINVAL);
    ck_assert_msg(strstr(error, "tun_metadata1: not mapped"), "%s", error);
    free(error);
    /* Printed through the map. */
    char *t = fdp_flow_format(&f5);
    ck_assert_str_eq(t, "tun_metadata5=0x11/0xff actions=drop");
    free(t);
    fdp_flow_spec_destroy(&f0);
    fdp_flow_spec_destroy(&f5);
    fdp_tlv_map_use_for_text(NULL);
    fdp_tlv_map_destroy(map);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Concurrency: lookups while the map changes.                             */

struct reader {
    struct fdp_tlv_map *map;
    int stop;                   /* Atomic. */
    uint64_t lookups;
    uint64_t bad;               /* Versions seen torn (must stay 0). */
    uint64_t progress;
};

static void *
reader_main(void *r_)
{
    struct reader *r = r_;

    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        fdp__rcu_read_lock();
        for (unsigned int c = 0; c < 4; c++) {
            unsigned int off, len;
            if (!fdp__tlv_map_lookup(r->map, (uint16_t) c, 1, &off, &len)) {
                /* Whatever version it found is whole. */
                r->bad += !(len >= 4 && len % 4 == 0
                            && off + len <= FDP_TLV_MAP_SPACE);
            }
            r->lookups++;
        }
        fdp__rcu_read_unlock();
        unit_progress_bump(&r->progress);
    }
    return NULL;
}

START_TEST(lookups_while_changing)
{
    struct reader r = { .stop = 0 };
    pthread_t t;

    ck_assert_int_eq(fdp_tlv_map_create(&r.map), 0);
    ck_assert_int_eq(pthread_create(&t, NULL, reader_main, &r), 0);
    for (int round = 0; round < 2000; round++) {
        char text[64];
        snprintf(text, sizeof text, "{class=%d,type=1,len=%d}->"
                 "tun_metadata%d", round % 4, 4 * (1 + round % 3), round % 4);
        if (fdp_tlv_map_add(r.map, text, NULL)) {
            ck_assert_int_eq(fdp_tlv_map_del(r.map, NULL, NULL), 0);
        }
    }
    unit_progress_wait(&r.progress, unit_progress_get(&r.progress) + 10,
                       "TLV map reader");
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    fdp__rcu_barrier();
    fdp_tlv_map_destroy(r.map);
    ck_assert_uint_gt(r.lookups, 0);
    ck_assert_uint_eq(r.bad, 0);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("tunkey");
    TCase *tc = unit_tcase(s, "tunkey");

    tcase_add_test(tc, tunnel_matches_against_brute_force);
    tcase_add_test(tc, tunnel_address_families);
    tcase_add_test(tc, tlv_map_against_model);
    tcase_add_test(tc, tlv_map_text_errors);
    tcase_add_test(tc, tun_metadata_matches);
    TCase *cc = unit_tcase(s, "concurrency");
    tcase_add_test(cc, lookups_while_changing);
    return unit_run(s);
}
