/*
 * Tests of NORMAL's learning table (datapath/mac-learning.c) and its
 * switch (datapath/normal.c): the table against a brute-force model
 * with random notes, moves, refreshes and aging on a clock the test
 * drives; the VLAN settings' parser; and the switch's rules through a
 * datapath with ring ports.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "datapath/mac-learning.h"
#include "lib/rcu.h"
#include "lib/util.h"
#include "tests/lib/peer.h"
#include "unit.h"

/* ---- The table against a model ---- */

struct model_entry {
    uint64_t mac;
    uint16_t vlan;
    uint32_t port;
    uint32_t used;
    bool valid;
};

struct model_note {
    uint64_t mac;
    uint16_t vlan;
    uint32_t port;
};

#define POOL 300                /* Addresses: fewer than the table holds,
                                 * so that the model never evicts. */

struct model {
    struct model_entry e[POOL * 3];
    struct model_note notes[4096];
    size_t n_notes;
    uint32_t aging;
    uint32_t last_aged;
};

static struct model_entry *
model_find(struct model *m, uint64_t mac, uint16_t vlan)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(m->e); i++) {
        if (m->e[i].valid && m->e[i].mac == mac && m->e[i].vlan == vlan) {
            return &m->e[i];
        }
    }
    return NULL;
}

/* What fdp__fdb_learn() promises: a known address on its port is
 * refreshed at once, anything else is a note for the writer. */
static bool
model_learn(struct model *m, uint64_t mac, uint16_t vlan, uint32_t port,
            uint32_t now)
{
    struct model_entry *e = model_find(m, mac, vlan);

    if (e && e->port == port) {
        e->used = now;
        return true;
    }
    m->notes[m->n_notes++] = (struct model_note) { mac, vlan, port };
    return false;
}

/* What fdp__fdb_run() promises: the notes in order, then aging when the
 * second changed. */
static void
model_run(struct model *m, uint32_t now)
{
    for (size_t k = 0; k < m->n_notes; k++) {
        struct model_note *n = &m->notes[k];
        struct model_entry *e = model_find(m, n->mac, n->vlan);
        if (!e) {
            for (size_t i = 0; i < FDP_ARRAY_SIZE(m->e); i++) {
                if (!m->e[i].valid) {
                    e = &m->e[i];
                    break;
                }
            }
            ck_assert_ptr_nonnull(e);
            *e = (struct model_entry) { .mac = n->mac, .vlan = n->vlan,
                                        .valid = true };
        }
        e->port = n->port;
        e->used = now;
    }
    m->n_notes = 0;
    if (now != m->last_aged) {
        for (size_t i = 0; i < FDP_ARRAY_SIZE(m->e); i++) {
            if (m->e[i].valid && now >= m->e[i].used + m->aging) {
                m->e[i].valid = false;
            }
        }
        m->last_aged = now;
    }
}

static int
entry_cmp(const void *a_, const void *b_)
{
    const struct fdp__fdb_entry *a = a_, *b = b_;

    if (a->vlan != b->vlan) {
        return a->vlan < b->vlan ? -1 : 1;
    }
    return a->mac < b->mac ? -1 : a->mac > b->mac;
}

/* The table's dump and the model's, sorted by (VLAN, MAC), must agree on
 * every entry, port and age. */
static void
check_same(struct fdp__fdb *fdb, struct model *m, uint32_t now)
{
    struct fdp__fdb_entry got[POOL * 3], want[POOL * 3];
    size_t n_got = fdp__fdb_dump(fdb, got, FDP_ARRAY_SIZE(got));
    size_t n_want = 0;

    for (size_t i = 0; i < FDP_ARRAY_SIZE(m->e); i++) {
        if (m->e[i].valid) {
            want[n_want++] = (struct fdp__fdb_entry) {
                .mac = m->e[i].mac, .vlan = m->e[i].vlan,
                .port = m->e[i].port, .age = now - m->e[i].used,
            };
        }
    }
    ck_assert_uint_eq(n_got, n_want);
    qsort(got, n_got, sizeof *got, entry_cmp);
    qsort(want, n_want, sizeof *want, entry_cmp);
    for (size_t i = 0; i < n_got; i++) {
        ck_assert_uint_eq(got[i].mac, want[i].mac);
        ck_assert_uint_eq(got[i].vlan, want[i].vlan);
        ck_assert_uint_eq(got[i].port, want[i].port);
        ck_assert_uint_eq(got[i].age, want[i].age);
    }
}

START_TEST(random_vs_model)
{
    struct unit_rng rng;
    struct fdp__fdb *fdb;
    struct model *m = calloc(1, sizeof *m);
    uint32_t now = 100;

    unit_rng_init(&rng, 1);
    ck_assert_ptr_nonnull(m);
    /* Room for the whole pool in every VLAN: the model never evicts. */
    ck_assert_int_eq(fdp__fdb_create(POOL * 3, 20, &fdb), 0);
    m->aging = 20;
    fdp__fdb_run(fdb, now);
    model_run(m, now);
    for (int step = 0; step < 20000; step++) {
        uint32_t r = unit_rng_below(&rng, 100);
        uint64_t mac = UINT64_C(0x505400000000)
                       | unit_rng_below(&rng, POOL);
        uint16_t vlan = (uint16_t) (unit_rng_below(&rng, 3) * 10);
        if (r < 60) {
            uint32_t port = 1 + unit_rng_below(&rng, 4);
            ck_assert_int_eq(fdp__fdb_learn(fdb, mac, vlan, port, now),
                             model_learn(m, mac, vlan, port, now));
        } else if (r < 80) {
            uint32_t port = 0, want_port = 0;
            struct model_entry *e = model_find(m, mac, vlan);
            bool found = fdp__fdb_lookup(fdb, mac, vlan, &port);
            if (e) {
                want_port = e->port;
            }
            ck_assert_int_eq(found, e != NULL);
            ck_assert_uint_eq(port, found ? want_port : port);
        } else if (r < 97 || m->n_notes > 4000) {
            now += unit_rng_below(&rng, 4);
            fdp__fdb_run(fdb, now);
            model_run(m, now);
            check_same(fdb, m, now);
        } else {
            /* A port goes: its entries with it. */
            uint32_t port = 1 + unit_rng_below(&rng, 4);
            fdp__fdb_run(fdb, now);
            model_run(m, now);
            fdp__fdb_flush(fdb, port);
            for (size_t i = 0; i < FDP_ARRAY_SIZE(m->e); i++) {
                if (m->e[i].port == port) {
                    m->e[i].valid = false;
                }
            }
            check_same(fdb, m, now);
        }
    }
    struct fdp__fdb_stats st;
    fdp__fdb_get_stats(fdb, &st);
    ck_assert_uint_eq(st.n_evicted, 0);
    ck_assert_uint_gt(st.n_learned, 0);
    ck_assert_uint_gt(st.n_moved, 0);
    ck_assert_uint_gt(st.n_expired, 0);
    fdp__fdb_destroy(fdb);
    free(m);
}
END_TEST

/* A full table evicts (least recently seen of a sample) and never holds
 * more than its bound; a bigger bound keeps the most recent. */
START_TEST(bounded_and_resized)
{
    struct fdp__fdb *fdb;
    uint32_t now = 1;

    ck_assert_int_eq(fdp__fdb_create(64, 300, &fdb), 0);
    for (uint64_t i = 0; i < 1000; i++) {
        fdp__fdb_learn(fdb, UINT64_C(0x020000000000) | i, 1, 1, now);
        if (i % 10 == 9) {
            fdp__fdb_run(fdb, ++now);
        }
        struct fdp__fdb_stats st;
        fdp__fdb_get_stats(fdb, &st);
        ck_assert_uint_le(st.n_entries, 64);
    }
    struct fdp__fdb_stats st;
    fdp__fdb_get_stats(fdb, &st);
    ck_assert_uint_eq(st.n_entries, 64);
    ck_assert_uint_eq(st.n_learned, 1000);
    ck_assert_uint_eq(st.n_evicted, 1000 - 64);
    /* The newest address is there. */
    uint32_t port;
    ck_assert(fdp__fdb_lookup(fdb, UINT64_C(0x020000000000) | 999, 1,
                              &port));
    ck_assert_int_eq(fdp__fdb_set_max(fdb, 16), 0);
    fdp__fdb_get_stats(fdb, &st);
    ck_assert_uint_eq(st.n_entries, 16);
    ck_assert(fdp__fdb_lookup(fdb, UINT64_C(0x020000000000) | 999, 1,
                              &port));
    ck_assert_int_eq(fdp__fdb_set_max(fdb, 15), EINVAL);
    ck_assert_int_eq(fdp__fdb_set_aging(fdb, 0), EINVAL);
    ck_assert_int_eq(fdp__fdb_set_aging(fdb, 5), 0);
    fdp__fdb_run(fdb, now + 5);
    fdp__fdb_get_stats(fdb, &st);
    ck_assert_uint_eq(st.n_entries, 0);
    fdp__fdb_destroy(fdb);
    fdp__fdb_destroy(NULL);
}
END_TEST

/* ---- VLAN settings ---- */

START_TEST(vlan_settings)
{
    static const struct {
        const char *in[3];
        const char *out;        /* NULL: refused. */
    } cases[] = {
        { { NULL }, "vlan_mode=trunk" },
        { { "tag=10" }, "vlan_mode=access tag=10" },
        { { "vlan_mode=native-untagged", "tag=5", "trunks=1-3,7" },
          "vlan_mode=native-untagged tag=5 trunks=1-3,7" },
        { { "trunks=0,4095" }, "vlan_mode=trunk trunks=0,4095" },
        { { "tag=10", "tag=" }, "vlan_mode=trunk" },
        { { "vlan_mode=native-tagged", "vlan_mode=" }, "vlan_mode=trunk" },
        { { "tag=4096" }, NULL },
        { { "tag=-1" }, NULL },
        { { "trunks=1,,2" }, NULL },
        { { "trunks=5-3" }, NULL },
        { { "trunks=1," }, NULL },
        { { "vlan_mode=dot1q-tunnel" }, NULL },
        { { "colour=blue" }, NULL },
        { { "tag" }, NULL },
    };

    for (size_t i = 0; i < FDP_ARRAY_SIZE(cases); i++) {
        struct fdp_port_vlan cfg;
        char buf[256];
        int error = 0;
        fdp_port_vlan_init(&cfg);
        for (int k = 0; k < 3 && cases[i].in[k] && !error; k++) {
            char *msg = NULL;
            error = fdp_port_vlan_parse(&cfg, cases[i].in[k], &msg);
            if (error) {
                /* The message names the setting. */
                ck_assert_ptr_nonnull(msg);
                ck_assert_ptr_nonnull(strstr(msg, cases[i].in[k]));
            }
            free(msg);
        }
        if (!cases[i].out) {
            ck_assert_int_eq(error, EINVAL);
            continue;
        }
        ck_assert_int_eq(error, 0);
        fdp_port_vlan_format(&cfg, buf, sizeof buf);
        ck_assert_str_eq(buf, cases[i].out);
    }
}
END_TEST

/* ---- The switch, through a datapath ---- */

#define N_PORTS 3

struct sw {
    struct fdp_table *table;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings rings[N_PORTS + 1];
};

static void
sw_open(struct sw *sw, const char *actions)
{
    struct fdp_flow_spec spec;
    char *msg = NULL;
    char text[128];

    snprintf(text, sizeof text, "actions=%s", actions);
    ck_assert_int_eq(fdp_table_create(&sw->table), 0);
    ck_assert_int_eq(fdp_flow_parse(text, 0, &spec, &msg), 0);
    ck_assert_int_eq(fdp_table_insert(sw->table, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);
    ck_assert_int_eq(fdp_dp_create(sw->table, NULL, &sw->dp), 0);
    for (uint32_t p = 1; p <= N_PORTS; p++) {
        ck_assert_int_eq(fdp_dp_port_add(sw->dp, p, "ring:size=64", NULL),
                         0);
        ck_assert_int_eq(fdp_dp_port_rings(sw->dp, p, &sw->rings[p]), 0);
    }
    ck_assert_int_eq(fdp_dp_pmd_create(sw->dp, 0, &sw->pmd), 0);
}

static void
sw_close(struct sw *sw)
{
    fdp_dp_pmd_destroy(sw->pmd);
    fdp_dp_destroy(sw->dp);
    fdp_table_destroy(sw->table);
}

static void
sw_vlan(struct sw *sw, uint32_t port, const char *a, const char *b)
{
    struct fdp_port_vlan cfg;

    fdp_port_vlan_init(&cfg);
    ck_assert_int_eq(fdp_port_vlan_parse(&cfg, a, NULL), 0);
    if (b) {
        ck_assert_int_eq(fdp_port_vlan_parse(&cfg, b, NULL), 0);
    }
    ck_assert_int_eq(fdp_dp_port_set_vlan(sw->dp, port, &cfg), 0);
}

/* A 60-byte frame from station 'src' to 'dst' (last bytes of
 * 50:54:00:00:00:XX, or 0xff for broadcast), tagged with 'tci' if
 * nonzero. */
static size_t
frame(uint8_t *p, int dst, int src, uint16_t tci)
{
    size_t n = 0;

    memset(p, 0, 64);
    for (int b = 0; b < 6; b++) {
        p[n++] = dst == 0xff ? 0xff
                 : (uint8_t) (b == 5 ? dst : (b == 0 ? 0x50 : b == 1 ? 0x54
                                                               : 0));
    }
    for (int b = 0; b < 6; b++) {
        p[n++] = (uint8_t) (b == 5 ? src : (b == 0 ? 0x50 : b == 1 ? 0x54
                                                                : 0));
    }
    if (tci) {
        p[n++] = 0x81;
        p[n++] = 0x00;
        p[n++] = (uint8_t) (tci >> 8);
        p[n++] = (uint8_t) tci;
    }
    p[n++] = 0x88;              /* A local experimental ethertype. */
    p[n++] = 0xb5;
    return 60;
}

struct seen {
    int n;
    uint16_t tci;               /* Of the last one; 0: untagged. */
};

static void
seen_cb(void *aux, const uint8_t *pkt, uint32_t len)
{
    struct seen *s = aux;

    s->n++;
    s->tci = len >= 16 && pkt[12] == 0x81 && pkt[13] == 0x00
             ? (uint16_t) (pkt[14] << 8 | pkt[15]) : 0;
}

/* Sends one frame in on 'in', lets the datapath learn from it, and
 * returns what each port sent. */
static void
sw_send(struct sw *sw, uint32_t in, int dst, int src, uint16_t tci,
        struct seen out[N_PORTS + 1])
{
    uint8_t p[64];
    size_t len = frame(p, dst, src, tci);

    ck_assert(test_peer_send(&sw->rings[in], p, len));
    fdp_dp_pmd_poll(sw->pmd, NULL);
    fdp_dp_fdb_sync(sw->dp);
    memset(out, 0, sizeof(struct seen) * (N_PORTS + 1));
    for (uint32_t port = 1; port <= N_PORTS; port++) {
        test_peer_drain(&sw->rings[port], seen_cb, &out[port]);
    }
    fdp_dp_pmd_poll(sw->pmd, NULL);     /* Frames back to the pool. */
}

START_TEST(learning_switch)
{
    struct sw sw;
    struct seen o[N_PORTS + 1];

    sw_open(&sw, "NORMAL");
    /* Unknown destination: flooded to the other two ports. */
    sw_send(&sw, 1, 2, 1, 0, o);
    ck_assert(o[1].n == 0 && o[2].n == 1 && o[3].n == 1);
    /* The answer goes to port 1 only, where station 1 was learned. */
    sw_send(&sw, 2, 1, 2, 0, o);
    ck_assert(o[1].n == 1 && o[2].n == 0 && o[3].n == 0);
    /* And station 2 is known now. */
    sw_send(&sw, 1, 2, 1, 0, o);
    ck_assert(o[1].n == 0 && o[2].n == 1 && o[3].n == 0);
    /* Station 2 moves to port 3. */
    sw_send(&sw, 3, 0xff, 2, 0, o);
    ck_assert(o[1].n == 1 && o[2].n == 1 && o[3].n == 0);
    sw_send(&sw, 1, 2, 1, 0, o);
    ck_assert(o[1].n == 0 && o[2].n == 0 && o[3].n == 1);
    /* To a station learned on the input port: dropped. */
    sw_send(&sw, 3, 2, 4, 0, o);
    ck_assert(o[1].n == 0 && o[2].n == 0 && o[3].n == 0);

    struct fdp_fdb_entry e[8];
    ck_assert_uint_eq(fdp_dp_fdb_dump(sw.dp, e, 8), 3);
    fdp_dp_fdb_flush(sw.dp);
    ck_assert_uint_eq(fdp_dp_fdb_dump(sw.dp, e, 8), 0);
    /* Aging: 300 s by default; warp past it. */
    sw_send(&sw, 1, 0xff, 1, 0, o);
    ck_assert_uint_eq(fdp_dp_fdb_dump(sw.dp, e, 8), 1);
    fdp_dp_fdb_warp(sw.dp, 299);
    ck_assert_uint_eq(fdp_dp_fdb_dump(sw.dp, e, 8), 1);
    ck_assert_uint_eq(e[0].age, 299);
    fdp_dp_fdb_warp(sw.dp, 1);
    ck_assert_uint_eq(fdp_dp_fdb_dump(sw.dp, e, 8), 0);
    sw_close(&sw);
}
END_TEST

START_TEST(vlans)
{
    struct sw sw;
    struct seen o[N_PORTS + 1];

    sw_open(&sw, "NORMAL");
    sw_vlan(&sw, 1, "tag=10", NULL);
    sw_vlan(&sw, 2, "tag=20", NULL);
    sw_vlan(&sw, 3, "trunks=10,20", NULL);
    /* Access 10: flooded to the trunk only, tagged 10. */
    sw_send(&sw, 1, 0xff, 1, 0, o);
    ck_assert(o[2].n == 0 && o[3].n == 1 && o[3].tci == 10);
    /* Tagged frames on an access port are dropped. */
    sw_send(&sw, 1, 0xff, 1, 10, o);
    ck_assert(o[2].n == 0 && o[3].n == 0);
    /* From the trunk on VLAN 20 (PCP 3 kept): to port 2, untagged. */
    sw_send(&sw, 3, 0xff, 3, 0x6000 | 20, o);
    ck_assert(o[1].n == 0 && o[2].n == 1 && o[2].tci == 0);
    /* VLAN 30 is not trunked: dropped. */
    sw_send(&sw, 3, 0xff, 3, 30, o);
    ck_assert(o[1].n == 0 && o[2].n == 0);
    /* Station 1 is known in VLAN 10 only. */
    sw_send(&sw, 3, 1, 3, 10, o);
    ck_assert(o[1].n == 1 && o[1].tci == 0 && o[2].n == 0);
    /* Native untagged: untagged frames are VLAN 20, sent untagged. */
    sw_vlan(&sw, 3, "vlan_mode=native-untagged", "tag=20");
    sw_send(&sw, 3, 0xff, 5, 0, o);
    ck_assert(o[1].n == 0 && o[2].n == 1 && o[2].tci == 0);
    sw_send(&sw, 2, 0xff, 6, 0, o);
    ck_assert(o[1].n == 0 && o[3].n == 1 && o[3].tci == 0);
    /* Without a trunks list it carries every VLAN: 10 goes out tagged. */
    sw_send(&sw, 1, 0xff, 7, 0, o);
    ck_assert(o[2].n == 0 && o[3].n == 1 && o[3].tci == 10);
    sw_close(&sw);
}
END_TEST

START_TEST(flood_all_local)
{
    struct sw sw;
    struct seen o[N_PORTS + 1];

    sw_open(&sw, "FLOOD");
    sw_vlan(&sw, 2, "tag=20", NULL);    /* FLOOD ignores VLANs. */
    sw_send(&sw, 1, 2, 1, 10, o);
    ck_assert(o[1].n == 0 && o[2].n == 1 && o[3].n == 1);
    ck_assert_uint_eq(o[2].tci, 10);    /* As it came. */
    sw_close(&sw);

    sw_open(&sw, "ALL");
    sw_send(&sw, 2, 2, 1, 0, o);
    ck_assert(o[1].n == 1 && o[2].n == 0 && o[3].n == 1);
    sw_close(&sw);

    sw_open(&sw, "LOCAL");
    sw_send(&sw, 2, 2, 1, 0, o);
    ck_assert(o[1].n == 0 && o[2].n == 0 && o[3].n == 0);
    struct fdp_fdb_stats st;
    fdp_dp_fdb_get_stats(sw.dp, &st);
    ck_assert_uint_eq(st.n_local_dropped, 1);
    sw_close(&sw);
}
END_TEST

/* ---- Readers during writes ---- */

/* Readers look addresses up and refresh them while the writer learns,
 * moves, expires, flushes and resizes: every answer is one of the two
 * ports the address is ever learned on, never a torn mix (the buckets'
 * sequence locks), and resizes free the old table only after the
 * readers left it (RCU).  Under ThreadSanitizer this is the data-race
 * check of the table. */
#define CC_MACS 512

static uint32_t
cc_port(uint64_t mac, bool moved)
{
    return (uint32_t) (mac % 7) + (moved ? 100 : 1);
}

struct cc_reader {
    struct fdp__fdb *fdb;
    bool *stop;
    uint64_t n_found;
    uint64_t n_bad;
};

static void *
cc_read(void *arg_)
{
    struct cc_reader *r = arg_;

    fdp__rcu_register();
    for (uint64_t i = 0; !__atomic_load_n(r->stop, __ATOMIC_RELAXED); i++) {
        uint64_t mac = 0x020000000000ULL + i % CC_MACS;
        uint32_t port;

        fdp__rcu_read_lock();
        if (fdp__fdb_lookup(r->fdb, mac, 0, &port)) {
            r->n_found++;
            if (port != cc_port(mac, false) && port != cc_port(mac, true)) {
                r->n_bad++;
            }
            fdp__fdb_learn(r->fdb, mac, 0, port, fdp__fdb_now(r->fdb));
        }
        fdp__rcu_read_unlock();
    }
    return NULL;
}

START_TEST(readers_during_writes)
{
    struct fdp__fdb *fdb;
    ck_assert_int_eq(fdp__fdb_create(4096, 300, &fdb), 0);

    bool stop = false;
    struct cc_reader r[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        r[i] = (struct cc_reader) { .fdb = fdb, .stop = &stop };
        ck_assert_int_eq(pthread_create(&th[i], NULL, cc_read, &r[i]), 0);
    }

    uint32_t now = 1;
    for (int round = 0; round < 400; round++) {
        fdp__rcu_read_lock();
        for (uint64_t m = 0; m < CC_MACS; m++) {
            uint64_t mac = 0x020000000000ULL + m;
            fdp__fdb_learn(fdb, mac, 0, cc_port(mac, (m + round) & 1), now);
        }
        fdp__rcu_read_unlock();
        fdp__fdb_run(fdb, now);
        if (round % 50 == 49) {
            fdp__fdb_flush(fdb, round % 100 == 49 ? 0 : cc_port(round, 0));
        }
        if (round % 100 == 99) {
            ck_assert_int_eq(fdp__fdb_set_max(fdb, round % 200 == 99
                                                   ? 1024 : 8192), 0);
        }
        if (round % 40 == 39) {
            now += 400;         /* Everything ages out. */
        }
    }
    __atomic_store_n(&stop, true, __ATOMIC_RELAXED);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        ck_assert_uint_eq(r[i].n_bad, 0);
        ck_assert_uint_gt(r[i].n_found, 0);
    }
    fdp__fdb_destroy(fdb);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("normal");
    TCase *tc = unit_tcase(s, "fdb");
    tcase_add_test(tc, random_vs_model);
    tcase_add_test(tc, bounded_and_resized);
    tc = unit_tcase(s, "switch");
    tcase_add_test(tc, vlan_settings);
    tcase_add_test(tc, learning_switch);
    tcase_add_test(tc, vlans);
    tcase_add_test(tc, flood_all_local);
    tc = unit_tcase(s, "concurrency");
    tcase_add_test(tc, readers_during_writes);
    return unit_run(s);
}
