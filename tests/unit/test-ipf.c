/*
 * Unit tests for fragment reassembly (datapath/ipf.c).
 *
 * Whole UDP packets (IPv4 with and without options, IPv6 with and without
 * a hop-by-hop header before the fragment header) are cut into fragments
 * the way a sender does; the reassembled packet must be the whole packet
 * byte for byte, and the fragments sent on must be the fragments that
 * came, except where the test rewrote the whole packet as NAT would.
 *
 * The reference for random runs is a model that applies Open vSwitch's
 * rules (lib/ipf.c: minimum sizes, the fragment limit, per-list limits,
 * its overlap test, list states, the 64 KiB bound, the 15 s timeout) with
 * a linear scan over plain arrays, and reassembles a completed list byte
 * by byte from each accepted fragment's offset; random streams (several
 * sources, zones and identifications sharing lists' keys, shuffled,
 * duplicated, with overlapping forgeries, undersized pieces, clock jumps
 * past the timeout and limit changes) go through both, and every verdict,
 * every reassembly, every fragment sent on and every counter must agree.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/datapath.h>
#include "datapath/bytes.h"
#include "datapath/conntrack.h"
#include "datapath/execute.h"
#include "datapath/ipf.h"
#include "unit.h"

/* ---- Whole packets and their fragments ---- */

enum { ETH = 14 };

/* An unfragmented UDP packet. */
struct whole {
    bool v6;
    uint8_t *buf;
    size_t size;
    size_t hdr;                 /* Ethernet, IP header, and for IPv6 the
                                 * unfragmentable extension headers. */
    size_t nh;                  /* IPv6: the byte that will name the
                                 * fragment header. */
    uint32_t id;
    uint16_t zone;
};

/* A fragment as a sender makes it, ready for the module. */
struct tfrag {
    uint8_t *buf;
    size_t size;
    struct fdp__pkt pkt;
    int32_t start, end;         /* Data bytes, inclusive. */
    bool first, last;
    size_t l3_size;
    const struct whole *w;      /* Its packet (forgeries too). */
};

static void
put_udp_csum(uint8_t *l3, bool v6, uint8_t *l4, size_t l4_size)
{
    uint8_t ph[40];
    size_t n;

    fdp__put16(l4 + 6, 0);
    if (v6) {
        memcpy(ph, l3 + 8, 32);
        fdp__put32(ph + 32, (uint32_t) l4_size);
        fdp__put32(ph + 36, 17);
        n = 40;
    } else {
        memcpy(ph, l3 + 12, 8);
        ph[8] = 0;
        ph[9] = 17;
        fdp__put16(ph + 10, (uint16_t) l4_size);
        n = 12;
    }
    uint16_t c = fdp__csum(fdp__csum_add(0, ph, n), l4, l4_size);
    fdp__put16(l4 + 6, c ? c : 0xffff);
}

/* Builds a whole UDP packet with 'payload' bytes after the UDP header,
 * from 'src' to 'dst' (IPv4: the address; IPv6: the low 32 bits of
 * 2001:db8::/96), with IP options (IPv4) or a hop-by-hop header (IPv6)
 * if 'ext'. */
static void
whole_build(struct whole *w, bool v6, bool ext, size_t payload, uint32_t src,
            uint32_t dst, uint32_t id, uint16_t zone, uint16_t sport,
            struct unit_rng *rng)
{
    size_t ip = v6 ? 40 + (ext ? 8 : 0) : 20 + (ext ? 8 : 0);
    size_t l4_size = 8 + payload;

    w->v6 = v6;
    w->id = v6 ? id : (id & 0xffff);
    w->zone = zone;
    w->hdr = ETH + ip;
    w->size = w->hdr + l4_size;
    w->buf = calloc(1, w->size);
    ck_assert_ptr_nonnull(w->buf);

    uint8_t *p = w->buf;
    p[0] = 2;
    p[5] = 1;
    p[6] = 2;
    p[11] = 2;
    fdp__put16(p + 12, v6 ? 0x86dd : 0x0800);
    uint8_t *l3 = p + ETH;
    if (v6) {
        l3[0] = 0x60;
        fdp__put16(l3 + 4, (uint16_t) (ip - 40 + l4_size));
        l3[7] = 64;
        fdp__put32(l3 + 8, 0x20010db8);
        fdp__put32(l3 + 20, src);
        fdp__put32(l3 + 24, 0x20010db8);
        fdp__put32(l3 + 36, dst);
        if (ext) {
            l3[6] = 0;                  /* Hop-by-hop. */
            l3[40] = 17;
            l3[41] = 0;
            l3[42] = 1;                 /* PadN over the 6 bytes. */
            l3[43] = 4;
            w->nh = ETH + 40;
        } else {
            l3[6] = 17;
            w->nh = ETH + 6;
        }
    } else {
        l3[0] = (uint8_t) (0x40 | ip / 4);
        fdp__put16(l3 + 2, (uint16_t) (ip + l4_size));
        fdp__put16(l3 + 4, (uint16_t) w->id);
        fdp__put16(l3 + 6, unit_rng_below(rng, 2) ? 0x4000 : 0);  /* DF */
        l3[8] = 64;
        l3[9] = 17;
        fdp__put32(l3 + 12, src);
        fdp__put32(l3 + 16, dst);
        if (ext) {
            memset(l3 + 20, 1, 8);      /* NOP options. */
        }
        fdp__put16(l3 + 10, fdp__csum(0, l3, ip));
    }
    uint8_t *l4 = p + w->hdr;
    fdp__put16(l4, sport);
    fdp__put16(l4 + 2, 53);
    fdp__put16(l4 + 4, (uint16_t) l4_size);
    for (size_t i = 8; i < l4_size; i++) {
        l4[i] = (uint8_t) unit_rng_next(rng);
    }
    put_udp_csum(l3, v6, l4, l4_size);
}

static void
tfrag_extract(struct tfrag *f)
{
    f->pkt.data = f->buf;
    f->pkt.size = (uint32_t) f->size;
    f->pkt.headroom = 0;
    fdp_packet_extract(f->buf, f->size, 3, &f->pkt.key, &f->pkt.layout);
    /* A pipeline word, to check it comes back. */
    f->pkt.key.w[FDP_KEY_PACKET_WORDS] = 0x5eed0000u + (uint32_t) f->start;
}

/* Makes the fragment of 'w' carrying data bytes [start, start + len)
 * (the data after w->hdr), with more-fragments set if 'mf'.  'fill', if
 * nonnull, replaces the data (a forgery). */
static void
frag_make(struct tfrag *f, const struct whole *w, size_t start, size_t len,
          bool mf, const uint8_t *fill)
{
    size_t fh = w->v6 ? 8 : 0;

    memset(f, 0, sizeof *f);
    f->w = w;
    f->size = w->hdr + fh + len;
    f->buf = malloc(f->size);
    ck_assert_ptr_nonnull(f->buf);
    memcpy(f->buf, w->buf, w->hdr);
    memcpy(f->buf + w->hdr + fh, fill ? fill : w->buf + w->hdr + start, len);
    uint8_t *l3 = f->buf + ETH;
    if (w->v6) {
        uint8_t *h = f->buf + w->hdr;
        h[0] = w->buf[w->nh];
        h[1] = 0;
        fdp__put16(h + 2, (uint16_t) (start | mf));
        fdp__put32(h + 4, w->id);
        f->buf[w->nh] = 44;
        fdp__put16(l3 + 4, (uint16_t) (f->size - ETH - 40));
    } else {
        size_t ihl = w->hdr - ETH;
        fdp__put16(l3 + 2, (uint16_t) (f->size - ETH));
        fdp__put16(l3 + 6, (uint16_t) ((fdp__get16(l3 + 6) & 0x4000)
                                       | (mf ? 0x2000 : 0) | start / 8));
        fdp__put16(l3 + 10, 0);
        fdp__put16(l3 + 10, fdp__csum(0, l3, ihl));
    }
    f->start = (int32_t) start;
    f->end = (int32_t) (start + len) - 1;
    f->first = start == 0 && mf;
    f->last = start && !mf;
    f->l3_size = f->size - ETH;
    tfrag_extract(f);
}

/* Cuts 'w' into fragments of 'step' data bytes (a multiple of 8), the last
 * one shorter.  Returns how many (at most 'max'). */
static size_t
frag_all(const struct whole *w, size_t step, struct tfrag *out, size_t max)
{
    size_t data = w->size - w->hdr;
    size_t n = 0;

    for (size_t at = 0; at < data; at += step) {
        size_t len = data - at < step ? data - at : step;
        ck_assert_uint_lt(n, max);
        frag_make(&out[n++], w, at, len, at + len < data, NULL);
    }
    return n;
}

static void
frags_free(struct tfrag *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].buf);
    }
}

/* ---- Helpers around the module ---- */

static struct fdp__ipf *
ipf_new(void)
{
    struct fdp__ipf *ipf;
    ck_assert_int_eq(fdp__ipf_create(&ipf), 0);
    return ipf;
}

/* Offers 'f' alone; returns whether it was held, and the reassembly if it
 * completed one (else NULL) in '*r'. */
static bool
offer(struct fdp__ipf *ipf, struct tfrag *f, uint16_t zone, uint64_t now,
      struct fdp__ipf_reass **r)
{
    struct fdp__pkt *p = &f->pkt;
    struct fdp__ipf_reass *out[1];
    bool held;

    size_t n = fdp__ipf_preprocess(ipf, &p, 1, NULL, zone, 0, now, &held,
                                   out);
    ck_assert_uint_le(n, 1);
    *r = n ? out[0] : NULL;
    ck_assert(!n || held);
    return held;
}

/* Checks that the fragments 'r' sends on are 'f' (n of them, in offset
 * order) byte for byte, with their keys and layouts. */
static void
check_frags_identical(const struct fdp__ipf_reass *r, struct tfrag *const *f,
                      size_t n)
{
    ck_assert_uint_eq(r->n_frags, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(r->frags[i].size, f[i]->size);
        ck_assert_mem_eq(r->frags[i].data, f[i]->buf, f[i]->size);
        ck_assert_mem_eq(&r->frags[i].key, &f[i]->pkt.key,
                         sizeof f[i]->pkt.key);
        ck_assert_mem_eq(&r->frags[i].layout, &f[i]->pkt.layout,
                         sizeof f[i]->pkt.layout);
    }
}

/* Checks that 'r' is 'w' exactly, parsed as a whole packet. */
static void
check_whole(const struct fdp__ipf_reass *r, const struct whole *w)
{
    ck_assert_uint_eq(r->pkt.size, w->size);
    ck_assert_mem_eq(r->pkt.data, w->buf, w->size);
    struct fdp_key key;
    fdp_packet_extract(w->buf, w->size, 3, &key, NULL);
    ck_assert_mem_eq(r->pkt.key.w, key.w, FDP_KEY_PACKET_WORDS * 8);
    ck_assert_uint_eq(fdp_key_get(&r->pkt.key, FDP_F_IP_FRAG).lo, 0);
    ck_assert_uint_eq(fdp_key_get(&r->pkt.key, FDP_F_TP_SRC).lo,
                      fdp__get16(w->buf + w->hdr));
    ck_assert_int_eq(r->pkt.layout.l4, (int) w->hdr);
}

/* ---- Reassembly in any order ---- */

/* Feeds 'n' fragments in the order 'order' one at a time; the last must
 * complete the packet 'w'. */
static void
feed_and_check(struct fdp__ipf *ipf, const struct whole *w, struct tfrag *f,
               const size_t *order, size_t n)
{
    struct fdp__ipf_reass *r = NULL;

    for (size_t k = 0; k < n; k++) {
        struct fdp__ipf_reass *got;
        ck_assert(offer(ipf, &f[order[k]], w->zone, 1000, &got));
        ck_assert(k + 1 == n ? got != NULL : got == NULL);
        r = got;
    }
    check_whole(r, w);
    ck_assert_uint_eq(r->zone, w->zone);
    ck_assert_uint_eq(r->pkt.key.w[FDP_KEY_PACKET_WORDS], 0x5eed0000u);
    fdp__ipf_postprocess(ipf, r);
    struct tfrag *sorted[64];
    for (size_t i = 0; i < n; i++) {
        sorted[i] = &f[i];
    }
    check_frags_identical(r, sorted, n);
    fdp__ipf_reass_free(ipf, r);
}

START_TEST(orders)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 1);
    struct fdp__ipf *ipf = ipf_new();

    for (int v6 = 0; v6 < 2; v6++) {
        for (int ext = 0; ext < 2; ext++) {
            for (int how = 0; how < 3; how++) {
                struct whole w;
                struct tfrag f[64];
                size_t order[64];
                whole_build(&w, v6, ext, 5000 + 7 * (size_t) how, 0x0a000001,
                            0x0a000002, 100 + (uint32_t) how, 7, 4000, &rng);
                size_t n = frag_all(&w, 1280 + 8 * (size_t) v6, f, 64);
                ck_assert_uint_ge(n, 4);
                for (size_t i = 0; i < n; i++) {
                    order[i] = how == 1 ? n - 1 - i : i;
                }
                if (how == 2) {
                    for (size_t i = n - 1; i > 0; i--) {
                        size_t j = unit_rng_below(&rng, (uint32_t) i + 1);
                        size_t t = order[i];
                        order[i] = order[j];
                        order[j] = t;
                    }
                }
                feed_and_check(ipf, &w, f, order, n);
                frags_free(f, n);
                free(w.buf);
            }
        }
    }

    struct fdp__ipf_status s;
    fdp__ipf_get_status(ipf, &s);
    ck_assert_uint_eq(s.nfrag, 0);
    ck_assert_uint_eq(s.v4.n_accepted, s.v4.n_completed);
    ck_assert_uint_eq(s.v6.n_accepted, s.v6.n_completed);
    ck_assert_uint_gt(s.v4.n_accepted, 0);
    ck_assert_uint_gt(s.v6.n_accepted, 0);
    fdp__ipf_destroy(ipf);
}
END_TEST

/* A whole batch at once: non-fragments pass untouched, the fragments of
 * two packets complete both in one call. */
START_TEST(one_batch)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 2);
    struct fdp__ipf *ipf = ipf_new();
    struct whole a, b, plain;
    struct tfrag fa[8], fb[8];

    whole_build(&a, false, false, 3000, 1, 2, 9, 0, 1, &rng);
    whole_build(&b, true, false, 3000, 1, 2, 9, 0, 1, &rng);
    whole_build(&plain, false, false, 100, 1, 2, 9, 0, 1, &rng);
    size_t na = frag_all(&a, 1480, fa, 8), nb = frag_all(&b, 1448, fb, 8);
    struct tfrag pf = { .buf = plain.buf, .size = plain.size };
    tfrag_extract(&pf);

    struct fdp__pkt *pkts[20];
    size_t n = 0;
    pkts[n++] = &pf.pkt;
    for (size_t i = 0; i < 3; i++) {
        pkts[n++] = &fa[2 - i].pkt;
        pkts[n++] = &fb[i].pkt;
    }
    ck_assert_uint_eq(na, 3);
    ck_assert_uint_eq(nb, 3);
    pkts[n++] = &pf.pkt;
    bool held[20];
    struct fdp__ipf_reass *r[20];
    uint16_t zones[20] = { 0 };
    size_t nr = fdp__ipf_preprocess(ipf, pkts, n, zones, 99, 0, 5, held, r);
    ck_assert_uint_eq(nr, 2);
    ck_assert(!held[0] && !held[n - 1]);
    for (size_t i = 1; i < n - 1; i++) {
        ck_assert(held[i]);
    }
    /* IPv4 completes first (its first fragment comes last at index 5),
     * IPv6 at index 6. */
    check_whole(r[0], &a);
    check_whole(r[1], &b);
    for (size_t i = 0; i < nr; i++) {
        fdp__ipf_reass_free(ipf, r[i]);
    }
    struct fdp__ipf_status s;
    fdp__ipf_get_status(ipf, &s);
    ck_assert_uint_eq(s.v4.n_purged, 3);        /* Never postprocessed. */
    ck_assert_uint_eq(s.nfrag, 0);
    frags_free(fa, na);
    frags_free(fb, nb);
    free(a.buf);
    free(b.buf);
    free(plain.buf);
    fdp__ipf_destroy(ipf);
}
END_TEST

/* ---- Refusals ---- */

START_TEST(duplicates_and_overlaps)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 3);
    struct fdp__ipf *ipf = ipf_new();
    struct fdp__ipf_reass *r;
    struct fdp__ipf_status s;

    for (int v6 = 0; v6 < 2; v6++) {
        struct whole w;
        struct tfrag f[8], forged[3];
        whole_build(&w, v6, false, 4500, 5, 6, 77, 0, 1, &rng);
        size_t n = frag_all(&w, 1480, f, 8);     /* 0, 1480, 2960, 4440 */
        ck_assert_uint_eq(n, 4);

        ck_assert(offer(ipf, &f[1], 0, 10, &r) && !r);
        /* The same fragment again: an overlap (Open vSwitch's test). */
        ck_assert(!offer(ipf, &f[1], 0, 10, &r) && !r);
        /* Starting inside a held one. */
        frag_make(&forged[0], &w, 2952, 1480, true, NULL);
        ck_assert(!offer(ipf, &forged[0], 0, 10, &r));
        /* Ending inside a held one. */
        frag_make(&forged[1], &w, 8, 1480, true, NULL);
        ck_assert(!offer(ipf, &forged[1], 0, 10, &r));
        fdp__ipf_get_status(ipf, &s);
        ck_assert_uint_eq(v6 ? s.v6.n_overlap : s.v4.n_overlap, 3);
        /* Containing a held one passes the test, as in Open vSwitch; then
         * its neighbours overlap it and the list can never be complete. */
        frag_make(&forged[2], &w, 1472, 1496, true, NULL);
        ck_assert(offer(ipf, &forged[2], 0, 10, &r));
        ck_assert(offer(ipf, &f[3], 0, 10, &r) && !r);
        ck_assert(!offer(ipf, &f[0], 0, 10, &r));
        ck_assert(!offer(ipf, &f[2], 0, 10, &r));
        fdp__ipf_get_status(ipf, &s);
        ck_assert_uint_eq(s.nfrag, 3);
        ck_assert_uint_eq(v6 ? s.v6.n_overlap : s.v4.n_overlap, 5);
        /* Its time comes 15 s after its first fragment. */
        ck_assert_uint_eq(fdp__ipf_expire(ipf, 10 + 15000, 100), 0);
        ck_assert_uint_eq(fdp__ipf_expire(ipf, 10 + 15001, 100), 1);
        fdp__ipf_get_status(ipf, &s);
        ck_assert_uint_eq(s.nfrag, 0);
        ck_assert_uint_eq(v6 ? s.v6.n_expired : s.v4.n_expired, 3);
        frags_free(f, n);
        frags_free(forged, 3);
        free(w.buf);
    }
    fdp__ipf_destroy(ipf);
}
END_TEST

START_TEST(too_small)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 4);
    struct fdp__ipf *ipf = ipf_new();
    struct fdp__ipf_reass *r;
    struct fdp__ipf_status s;

    ck_assert_int_eq(fdp__ipf_set_min_frag(ipf, false, 399), EINVAL);
    ck_assert_int_eq(fdp__ipf_set_min_frag(ipf, true, 399), EINVAL);
    for (int v6 = 0; v6 < 2; v6++) {
        struct whole w;
        struct tfrag f[16];
        whole_build(&w, v6, false, 2500, 5, 6, 1, 0, 1, &rng);
        /* 1000-byte fragments: under both defaults (1200, 1280). */
        size_t n = frag_all(&w, 1000, f, 16);
        ck_assert_uint_eq(n, 3);
        ck_assert(!offer(ipf, &f[0], 0, 1, &r));
        ck_assert(!offer(ipf, &f[1], 0, 1, &r));
        ck_assert(offer(ipf, &f[2], 0, 1, &r));   /* A last one: any size. */
        fdp__ipf_get_status(ipf, &s);
        ck_assert_uint_eq(v6 ? s.v6.n_too_small : s.v4.n_too_small, 2);
        /* At the lower bound they pass. */
        ck_assert_int_eq(fdp__ipf_set_min_frag(ipf, v6, 400), 0);
        ck_assert(offer(ipf, &f[1], 0, 1, &r) && !r);
        ck_assert(offer(ipf, &f[0], 0, 1, &r) && r);
        check_whole(r, &w);
        fdp__ipf_reass_free(ipf, r);
        frags_free(f, n);
        free(w.buf);
    }
    fdp__ipf_get_status(ipf, &s);
    ck_assert_uint_eq(s.v4.min_frag_size, 400);
    ck_assert_uint_eq(s.v6.min_frag_size, 400);
    fdp__ipf_destroy(ipf);
}
END_TEST

START_TEST(too_many)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 5);
    struct fdp__ipf *ipf = ipf_new();
    struct fdp__ipf_reass *r;
    struct fdp__ipf_status s;
    struct whole w[8];
    struct tfrag f[8][4];

    ck_assert_int_eq(fdp__ipf_set_max_nfrags(ipf, 5001), EINVAL);
    ck_assert_int_eq(fdp__ipf_set_max_nfrags(ipf, 5), 0);
    for (uint32_t i = 0; i < 3; i++) {
        whole_build(&w[i], i == 1, false, 3000, 1, 2, i, 0, 1, &rng);
        ck_assert_uint_eq(frag_all(&w[i], 1480, f[i], 4), 3);
    }
    /* Two fragments of three packets: the sixth is one too many. */
    for (uint32_t i = 0; i < 3; i++) {
        ck_assert(offer(ipf, &f[i][0], 0, 1, &r) == true);
        ck_assert(offer(ipf, &f[i][1], 0, 1, &r) == (i < 2));
    }
    fdp__ipf_get_status(ipf, &s);
    ck_assert_uint_eq(s.nfrag, 5);
    ck_assert_uint_eq(s.nfrag_max, 5);
    /* Completing one frees room only once its reassembly is freed. */
    ck_assert(!offer(ipf, &f[0][2], 0, 1, &r));
    ck_assert_int_eq(fdp__ipf_set_max_nfrags(ipf, 6), 0);
    ck_assert(offer(ipf, &f[0][2], 0, 1, &r) && r);
    check_whole(r, &w[0]);
    fdp__ipf_reass_free(ipf, r);
    ck_assert(offer(ipf, &f[2][1], 0, 1, &r) && !r);

    /* The per-list bound: with a minimum of 65535, an IPv4 list holds one
     * fragment (ceil((65535 - 60) / (65535 - 60))), and only last
     * fragments are big enough for any. */
    ck_assert_int_eq(fdp__ipf_set_max_nfrags(ipf, 100), 0);
    ck_assert_int_eq(fdp__ipf_set_min_frag(ipf, false, 65535), 0);
    whole_build(&w[3], false, false, 9000, 1, 2, 3, 0, 1, &rng);
    struct tfrag lasts[2];
    frag_make(&lasts[0], &w[3], 2000, 100, false, NULL);
    frag_make(&lasts[1], &w[3], 4000, 100, false, NULL);
    ck_assert(offer(ipf, &lasts[0], 0, 1, &r));
    ck_assert(!offer(ipf, &lasts[1], 0, 1, &r));
    frags_free(lasts, 2);

    for (uint32_t i = 0; i < 3; i++) {
        frags_free(f[i], 3);
        free(w[i].buf);
    }
    free(w[3].buf);
    fdp__ipf_destroy(ipf);      /* Frees what it still holds. */
}
END_TEST

/* A complete list whose whole packet would pass 64 KiB fails and refuses
 * what follows until it expires. */
START_TEST(too_big)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 6);
    struct fdp__ipf *ipf = ipf_new();
    struct fdp__ipf_reass *r;
    struct whole w;
    static struct tfrag f[64];

    /* 65600 data bytes: an IPv4 packet of 65620. */
    whole_build(&w, false, false, 65600 - 8, 1, 2, 3, 0, 1, &rng);
    size_t n = frag_all(&w, 1480, f, 64);
    for (size_t i = 0; i < n; i++) {
        ck_assert(offer(ipf, &f[i], 0, 1, &r) && !r);
    }
    /* Failed, held: a late forgery is refused without an overlap. */
    struct tfrag late;
    frag_make(&late, &w, 65520, 8, false, NULL);
    ck_assert(!offer(ipf, &late, 0, 1, &r));
    struct fdp__ipf_status s;
    fdp__ipf_get_status(ipf, &s);
    ck_assert_uint_eq(s.nfrag, n);
    ck_assert_uint_eq(s.v4.n_overlap, 0);
    ck_assert_uint_eq(fdp__ipf_expire(ipf, 20000, 10), 1);
    free(late.buf);
    frags_free(f, n);
    free(w.buf);

    /* Just under the bound, a packet bigger than any frame reassembles. */
    whole_build(&w, false, false, 65535 - 20 - 8, 1, 2, 4, 0, 1, &rng);
    n = frag_all(&w, 1480, f, 64);
    for (size_t i = 0; i < n; i++) {
        ck_assert(offer(ipf, &f[i], 0, 30000, &r) == true);
        ck_assert(i + 1 < n ? r == NULL : r != NULL);
    }
    check_whole(r, &w);
    fdp__ipf_reass_free(ipf, r);
    frags_free(f, n);
    free(w.buf);
    fdp__ipf_destroy(ipf);
}
END_TEST

START_TEST(expiry_and_disable)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 7);
    struct fdp__ipf *ipf = ipf_new();
    struct fdp__ipf_reass *r;
    struct whole w;
    struct tfrag f[4];

    whole_build(&w, true, true, 3000, 1, 2, 3, 0, 1, &rng);
    ck_assert_uint_eq(frag_all(&w, 1480, f, 4), 3);
    ck_assert(offer(ipf, &f[0], 0, 1000, &r));
    ck_assert(offer(ipf, &f[1], 0, 1000, &r));
    /* Past its time the last one starts a fresh list (the old one is
     * expired on the way). */
    ck_assert(offer(ipf, &f[2], 0, 16001, &r) && !r);
    struct fdp__ipf_status s;
    fdp__ipf_get_status(ipf, &s);
    ck_assert_uint_eq(s.v6.n_expired, 2);
    ck_assert_uint_eq(s.nfrag, 1);
    ck_assert(offer(ipf, &f[0], 0, 16002, &r));
    ck_assert(offer(ipf, &f[1], 0, 16003, &r) && r);
    check_whole(r, &w);
    fdp__ipf_reass_free(ipf, r);

    /* Disabled: fragments are not looked at. */
    fdp__ipf_set_enabled(ipf, true, false);
    ck_assert(fdp__ipf_enabled(ipf));
    ck_assert(!offer(ipf, &f[0], 0, 20000, &r));
    fdp__ipf_set_enabled(ipf, false, false);
    ck_assert(!fdp__ipf_enabled(ipf));
    fdp__ipf_get_status(ipf, &s);
    ck_assert(!s.v4.enabled && !s.v6.enabled);
    ck_assert_uint_eq(s.nfrag, 0);
    frags_free(f, 3);
    free(w.buf);
    fdp__ipf_destroy(ipf);
}
END_TEST

/* Same identification, different source, zone or recirculation id:
 * separate lists, completed separately and interleaved. */
START_TEST(interleaved_keys)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 8);
    struct fdp__ipf *ipf = ipf_new();
    enum { N = 6 };
    struct whole w[N];
    struct tfrag f[N][4];
    /* Each differs from packet 0 in one part of the key: source, zone,
     * recirculation id, zone again, family. */
    uint32_t src[N] = { 1, 2, 1, 1, 1, 1 };
    uint16_t zone[N] = { 0, 0, 1, 0, 2, 0 };
    uint32_t recirc[N] = { 0, 0, 0, 5, 0, 0 };
    for (size_t i = 0; i < N; i++) {
        whole_build(&w[i], i == 5, false, 4000, src[i], 9, 42, zone[i], 1,
                    &rng);
        ck_assert_uint_eq(frag_all(&w[i], 1480, f[i], 4), 3);
    }
    struct fdp__ipf_reass *done[N] = { 0 };
    for (size_t k = 0; k < 3; k++) {
        for (size_t i = 0; i < N; i++) {
            struct fdp__pkt *p = &f[i][(k + i) % 3].pkt;
            struct fdp__ipf_reass *r[1];
            bool held;
            size_t nr = fdp__ipf_preprocess(ipf, &p, 1, &zone[i], 0,
                                            recirc[i], 1, &held, r);
            ck_assert(held);
            ck_assert_uint_eq(nr, k == 2);
            if (nr) {
                done[i] = r[0];
            }
        }
    }
    for (size_t i = 0; i < N; i++) {
        check_whole(done[i], &w[i]);
        ck_assert_uint_eq(done[i]->zone, zone[i]);
        fdp__ipf_postprocess(ipf, done[i]);
        struct tfrag *sorted[3] = { &f[i][0], &f[i][1], &f[i][2] };
        check_frags_identical(done[i], sorted, 3);
        fdp__ipf_reass_free(ipf, done[i]);
        frags_free(f[i], 3);
        free(w[i].buf);
    }
    fdp__ipf_destroy(ipf);
}
END_TEST

/* ---- Sending on after NAT ---- */

/* Rewrites the whole packet as source NAT would: new source address and
 * port, checksums recomputed from scratch. */
static void
nat_whole(uint8_t *buf, size_t size, size_t hdr, bool v6, uint32_t new_src,
          uint16_t new_port)
{
    uint8_t *l3 = buf + ETH;
    if (v6) {
        fdp__put32(l3 + 20, new_src);
    } else {
        fdp__put32(l3 + 12, new_src);
        fdp__put16(l3 + 10, 0);
        fdp__put16(l3 + 10, fdp__csum(0, l3, hdr - ETH));
    }
    fdp__put16(buf + hdr, new_port);
    put_udp_csum(l3, v6, buf + hdr, size - hdr);
}

START_TEST(nat_rewrite)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 9);
    struct fdp__ipf *ipf = ipf_new();

    for (int v6 = 0; v6 < 2; v6++) {
        struct whole w;
        struct tfrag f[8];
        whole_build(&w, v6, v6, 6000, 0x0a000001, 0x0a000002, 5, 0, 1111,
                    &rng);
        size_t n = frag_all(&w, 1480, f, 8);
        struct fdp__ipf_reass *r = NULL;
        for (size_t i = n; i-- > 0;) {
            ck_assert(offer(ipf, &f[i], 0, 1, &r));
        }
        ck_assert_ptr_nonnull(r);
        check_whole(r, &w);
        nat_whole(r->pkt.data, r->pkt.size, w.hdr, v6, 0xc0a80009, 2222);
        /* The reference: the whole packet rewritten the same way, cut
         * the same way. */
        struct whole wn = w;
        wn.buf = malloc(w.size);
        memcpy(wn.buf, w.buf, w.size);
        nat_whole(wn.buf, wn.size, wn.hdr, v6, 0xc0a80009, 2222);
        fdp__ipf_postprocess(ipf, r);
        ck_assert_uint_eq(r->n_frags, n);
        for (size_t i = 0; i < n; i++) {
            struct tfrag e;
            frag_make(&e, &wn, (size_t) f[i].start,
                      (size_t) (f[i].end - f[i].start + 1), i + 1 < n, NULL);
            ck_assert_uint_eq(r->frags[i].size, e.size);
            ck_assert_mem_eq(r->frags[i].data, e.buf, e.size);
            /* Everything else as it came: only the source address, the
             * IPv4 checksum and, in the first, the UDP header differ. */
            for (size_t b = 0; b < e.size; b++) {
                bool nat = v6 ? (b >= ETH + 8 && b < ETH + 24)
                              : (b >= ETH + 10 && b < ETH + 16);
                nat |= i == 0 && b >= w.hdr + (v6 ? 8 : 0)
                       && b < w.hdr + (v6 ? 16 : 8);
                if (!nat) {
                    ck_assert_uint_eq(r->frags[i].data[b], f[i].buf[b]);
                }
            }
            free(e.buf);
        }
        fdp__ipf_reass_free(ipf, r);
        frags_free(f, n);
        free(w.buf);
        free(wn.buf);
    }
    fdp__ipf_destroy(ipf);
}
END_TEST

/* ---- Through the tracker ---- */

START_TEST(through_tracker)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 10);
    struct fdp__ipf *ipf = ipf_new();
    struct fdp__ct *ct;
    struct fdp__ct_pmd *pmd;
    ck_assert_int_eq(fdp__ct_create(1024, &ct), 0);
    ck_assert_int_eq(fdp__ct_pmd_create(ct, &pmd), 0);
    struct fdp__ct_args args = { .zone = 3, .commit = true };

    for (int v6 = 0; v6 < 2; v6++) {
        struct whole w;
        struct tfrag f[8];
        whole_build(&w, v6, false, 4000, 0x0a000001, 0x0a000002, 5, 3, 1111,
                    &rng);
        size_t n = frag_all(&w, 1480, f, 8);
        /* Alone, a fragment is +inv. */
        struct fdp__pkt *p = &f[0].pkt;
        struct fdp__ct_result res;
        fdp__ct_execute(pmd, &p, 1, &args, NULL, 1000, &res);
        ck_assert(res.state & FDP_CT_INV);

        struct fdp__ipf_reass *r = NULL;
        for (size_t i = 0; i < n; i++) {
            ck_assert(offer(ipf, &f[i], 3, 1000, &r));
        }
        ck_assert_ptr_nonnull(r);
        p = &r->pkt;
        fdp__ct_execute(pmd, &p, 1, &args, &r->zone, 1000, &res);
        ck_assert_uint_eq(res.state, FDP_CT_NEW | FDP_CT_TRK);
        ck_assert_uint_eq(res.orig.src_port, 1111);
        ck_assert_uint_eq(res.orig.dst_port, 53);
        ck_assert_uint_eq(fdp__ct_zone_count(ct, 3), (uint32_t) v6 + 1);
        fdp__ipf_postprocess(ipf, r);
        struct tfrag *sorted[8];
        for (size_t i = 0; i < n; i++) {
            sorted[i] = &f[i];
        }
        check_frags_identical(r, sorted, n);
        fdp__ipf_reass_free(ipf, r);
        frags_free(f, n);
        free(w.buf);
    }
    fdp__ct_pmd_destroy(pmd);
    fdp__ct_destroy(ct);
    fdp__ipf_destroy(ipf);
}
END_TEST

/* ---- Random streams against the model ---- */

enum { M_MAX_FRAGS_LIST = 1024, M_MAX_LISTS = 1024 };

struct mlist {
    bool used;
    bool v6;
    uint32_t src, id, recirc;
    uint16_t zone;
    uint64_t expiration;
    struct tfrag *frags[M_MAX_FRAGS_LIST];
    uint32_t n;
    bool first, last, fail;
};

struct model {
    bool enabled[2];
    uint32_t min[2];
    uint32_t nfrag, nfrag_max;
    struct mlist lists[M_MAX_LISTS];
    uint64_t c_accepted[2], c_completed[2], c_expired[2], c_small[2],
             c_overlap[2];
};

static void
model_expire(struct model *m, uint64_t now)
{
    for (size_t i = 0; i < M_MAX_LISTS; i++) {
        struct mlist *l = &m->lists[i];
        if (l->used && now > l->expiration) {
            m->c_expired[l->v6] += l->n;
            m->nfrag -= l->n;
            l->used = false;
        }
    }
}

static uint32_t
m_max_list(const struct model *m, bool v6)
{
    if (v6) {
        return 65535;
    }
    uint32_t per = m->min[0] - 60;
    return (65535 - 60 + per - 1) / per;
}

/* Open vSwitch's rules, linearly.  Returns whether 'f' is held; fills
 * '*done' (a copy of the list, the list freed) when it completes one. */
static bool
model_offer(struct model *m, struct tfrag *f, uint16_t zone,
            uint32_t recirc, uint64_t now, struct mlist *done, bool *completed)
{
    bool v6 = f->w->v6;
    *completed = false;
    if (!m->enabled[0] && !m->enabled[1]) {
        return false;
    }
    if (!f->last && f->l3_size < m->min[v6]) {
        m->c_small[v6]++;
        return false;
    }
    if (!m->enabled[v6] || m->nfrag >= m->nfrag_max) {
        return false;
    }
    struct mlist *l = NULL, *free_slot = NULL;
    for (size_t i = 0; i < M_MAX_LISTS; i++) {
        struct mlist *c = &m->lists[i];
        if (!c->used) {
            free_slot = free_slot ? free_slot : c;
        } else if (c->v6 == v6 && c->id == f->w->id && c->zone == zone
                   && c->recirc == recirc
                   && c->src == (v6 ? fdp__get32(f->buf + ETH + 20)
                                    : fdp__get32(f->buf + ETH + 12))) {
            l = c;
        }
    }
    if (l && now > l->expiration) {
        m->c_expired[v6] += l->n;
        m->nfrag -= l->n;
        l->used = false;
        free_slot = free_slot ? free_slot : l;
        l = NULL;
    }
    if (!l) {
        ck_assert_ptr_nonnull(free_slot);
        l = free_slot;
        memset(l, 0, sizeof *l);
        l->used = true;
        l->v6 = v6;
        l->src = v6 ? fdp__get32(f->buf + ETH + 20)
                    : fdp__get32(f->buf + ETH + 12);
        l->id = f->w->id;
        l->zone = zone;
        l->recirc = recirc;
        l->expiration = now + 15000;
    } else if (l->fail) {
        return false;
    }
    if (l->n >= m_max_list(m, v6)) {
        return false;
    }
    for (uint32_t i = 0; i < l->n; i++) {
        const struct tfrag *g = l->frags[i];
        if ((f->start >= g->start && f->start <= g->end)
            || (f->end >= g->start && f->end <= g->end)) {
            m->c_overlap[v6]++;
            return false;
        }
    }
    ck_assert_uint_lt(l->n, M_MAX_FRAGS_LIST);
    l->frags[l->n++] = f;
    m->nfrag++;
    m->c_accepted[v6]++;
    l->first |= f->first;
    l->last |= f->last;
    if (l->first && l->last) {
        /* Complete when the ranges, in order, leave no gap: sort a copy
         * by selection. */
        struct tfrag *s[M_MAX_FRAGS_LIST];
        memcpy(s, l->frags, l->n * sizeof *s);
        for (uint32_t i = 0; i < l->n; i++) {
            for (uint32_t j = i + 1; j < l->n; j++) {
                if (s[j]->start < s[i]->start) {
                    struct tfrag *t = s[i];
                    s[i] = s[j];
                    s[j] = t;
                }
            }
        }
        bool complete = true;
        uint64_t total = 0;
        for (uint32_t i = 0; i < l->n; i++) {
            total += (uint64_t) (s[i]->end - s[i]->start + 1);
            if (i && s[i - 1]->end + 1 != s[i]->start) {
                complete = false;
            }
        }
        if (complete) {
            size_t hdr = s[0]->w->hdr - ETH;
            if (hdr + total > 65535 + (v6 ? 40 : 0)) {
                l->fail = true;
            } else {
                *done = *l;
                memcpy(done->frags, s, l->n * sizeof *s);
                *completed = true;
                l->used = false;
            }
        }
    }
    return true;
}

/* The whole packet of a completed model list, byte by byte: the first
 * fragment's headers as they would be unfragmented, then each byte of
 * data from the fragment whose range holds it. */
static uint8_t *
model_reassemble(const struct mlist *l, size_t *sizep)
{
    const struct tfrag *f0 = l->frags[0];
    const struct whole *w = f0->w;
    size_t data = (size_t) (l->frags[l->n - 1]->end + 1);
    size_t size = w->hdr + data;
    uint8_t *p = malloc(size);
    ck_assert_ptr_nonnull(p);

    memcpy(p, f0->buf, w->hdr);
    for (size_t b = 0; b < data; b++) {
        bool found = false;
        for (uint32_t i = 0; i < l->n; i++) {
            const struct tfrag *f = l->frags[i];
            if ((int32_t) b >= f->start && (int32_t) b <= f->end) {
                /* Fragments of packets that share a key may come from
                 * wholes with other headers: each at its own offset. */
                size_t fdata = f->w->hdr + (w->v6 ? 8 : 0);
                p[w->hdr + b] = f->buf[fdata + b - (size_t) f->start];
                found = true;
            }
        }
        ck_assert(found);
    }
    uint8_t *l3 = p + ETH;
    if (w->v6) {
        p[w->nh] = f0->buf[w->hdr];
        fdp__put16(l3 + 4, (uint16_t) (size - ETH - 40));
    } else {
        fdp__put16(l3 + 2, (uint16_t) (size - ETH));
        fdp__put16(l3 + 6, fdp__get16(l3 + 6) & 0x4000);
        fdp__put16(l3 + 10, 0);
        fdp__put16(l3 + 10, fdp__csum(0, l3, w->hdr - ETH));
    }
    *sizep = size;
    return p;
}

START_TEST(random_vs_model)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 11);
    struct fdp__ipf *ipf = ipf_new();
    struct model *m = calloc(1, sizeof *m);
    ck_assert_ptr_nonnull(m);
    m->enabled[0] = m->enabled[1] = true;
    m->min[0] = m->min[1] = 400;
    m->nfrag_max = 1000;
    ck_assert_int_eq(fdp__ipf_set_min_frag(ipf, false, 400), 0);
    ck_assert_int_eq(fdp__ipf_set_min_frag(ipf, true, 400), 0);

    enum { N_WHOLE = 600, MAX_STREAM = 12000 };
    struct whole *w = calloc(N_WHOLE, sizeof *w);
    struct tfrag *stream = calloc(MAX_STREAM, sizeof *stream);
    uint16_t *zones = calloc(MAX_STREAM, sizeof *zones);
    size_t n_stream = 0;
    uint64_t now = 1000;
    size_t n_completed = 0;

    /* Packets with keys drawn from small sets, so that lists collide on
     * identification and differ by source or zone; the fragments of each
     * are cut at random multiples of 8, with duplicates, overlapping
     * forgeries and undersized pieces mixed in. */
    for (size_t i = 0; i < N_WHOLE && n_stream + 40 < MAX_STREAM; i++) {
        bool v6 = unit_rng_below(&rng, 2);
        size_t payload = 600 + unit_rng_below(&rng, 6000);
        whole_build(&w[i], v6, unit_rng_below(&rng, 3) == 0, payload,
                    1 + unit_rng_below(&rng, 6), 9,
                    unit_rng_below(&rng, 8), (uint16_t) unit_rng_below(&rng,
                                                                       2),
                    (uint16_t) (1 + i), &rng);
        size_t data = w[i].size - w[i].hdr;
        size_t first = n_stream;
        for (size_t at = 0; at < data;) {
            size_t len = 8 * (48 + unit_rng_below(&rng, 150));
            if (unit_rng_below(&rng, 20) == 0) {
                len = 8 * (1 + unit_rng_below(&rng, 40));   /* Undersized. */
            }
            len = len < data - at ? len : data - at;
            if (at == 0 && len == data) {
                len = data / 16 * 8;    /* At least two fragments. */
            }
            frag_make(&stream[n_stream], &w[i], at, len, at + len < data,
                      NULL);
            zones[n_stream++] = w[i].zone;
            at += len;
        }
        size_t n = n_stream - first;
        if (unit_rng_below(&rng, 6) == 0) {
            /* A duplicate of one of them. */
            struct tfrag *d = &stream[first + unit_rng_below(&rng,
                                                             (uint32_t) n)];
            frag_make(&stream[n_stream], &w[i], (size_t) d->start,
                      (size_t) (d->end - d->start + 1),
                      (size_t) (d->end + 1) < data, NULL);
            zones[n_stream++] = w[i].zone;
        }
        if (unit_rng_below(&rng, 6) == 0) {
            /* A forgery over some of the data, with other bytes. */
            uint8_t junk[1600];
            for (size_t b = 0; b < sizeof junk; b++) {
                junk[b] = (uint8_t) unit_rng_next(&rng);
            }
            size_t at = 8 * unit_rng_below(&rng, (uint32_t) (data / 8));
            size_t len = 8 * (50 + unit_rng_below(&rng, 150));
            len = len < data - at ? len : data - at;
            if (len && !(at == 0 && len == data)) {   /* Not unfragmented. */
                frag_make(&stream[n_stream], &w[i], at, len,
                          at + len < data, junk);
                zones[n_stream++] = w[i].zone;
            }
        }
        /* Shuffle this packet's pieces among the last few packets'. */
        size_t lo = first > 30 ? first - 30 : 0;
        for (size_t k = n_stream - 1; k > lo; k--) {
            size_t j = lo + unit_rng_below(&rng, (uint32_t) (k - lo + 1));
            struct tfrag t = stream[k];
            stream[k] = stream[j];
            stream[j] = t;
            uint16_t z = zones[k];
            zones[k] = zones[j];
            zones[j] = z;
        }
    }

    /* In batches, with the clock moving (now and then past a timeout) and
     * the limit changing. */
    for (size_t at = 0; at < n_stream;) {
        size_t n = 1 + unit_rng_below(&rng, 32);
        n = n < n_stream - at ? n : n_stream - at;
        now += unit_rng_below(&rng, 50) == 0 ? 16000 : unit_rng_below(&rng, 40);
        if (unit_rng_below(&rng, 40) == 0) {
            uint32_t max = unit_rng_below(&rng, 6) ? 1000
                                                   : unit_rng_below(&rng, 60);
            m->nfrag_max = max;
            ck_assert_int_eq(fdp__ipf_set_max_nfrags(ipf, max), 0);
        }
        fdp__ipf_expire(ipf, now, UINT32_MAX);
        model_expire(m, now);

        struct fdp__pkt *pkts[32];
        bool held[32];
        struct fdp__ipf_reass *r[32];
        for (size_t k = 0; k < n; k++) {
            pkts[k] = &stream[at + k].pkt;
        }
        size_t nr = fdp__ipf_preprocess(ipf, pkts, n, &zones[at], 0, 0, now,
                                        held, r);
        size_t next_r = 0;
        uint32_t pending = 0;
        for (size_t k = 0; k < n; k++) {
            struct mlist done;
            bool completed;
            bool mh = model_offer(m, &stream[at + k], zones[at + k], 0, now,
                                  &done, &completed);
            ck_assert_msg(mh == held[k], "fragment %zu of the stream (IPv%d,"
                          " id %u, zone %u, [%d, %d], l3 %zu bytes): model "
                          "%d, module %d", at + k, stream[at + k].w->v6 ? 6 : 4,
                          stream[at + k].w->id, zones[at + k],
                          stream[at + k].start, stream[at + k].end,
                          stream[at + k].l3_size, mh, held[k]);
            if (!completed) {
                continue;
            }
            ck_assert_uint_lt(next_r, nr);
            struct fdp__ipf_reass *got = r[next_r++];
            size_t size;
            uint8_t *expect = model_reassemble(&done, &size);
            ck_assert_uint_eq(got->pkt.size, size);
            ck_assert_mem_eq(got->pkt.data, expect, size);
            ck_assert_uint_eq(got->zone, done.zone);
            free(expect);
            fdp__ipf_postprocess(ipf, got);
            check_frags_identical(got, done.frags, done.n);
            fdp__ipf_reass_free(ipf, got);
            m->c_completed[done.v6] += done.n;
            pending += done.n;
            n_completed++;
        }
        /* As in Open vSwitch, a completed list's fragments count against
         * the limit until they are sent on: after the batch. */
        m->nfrag -= pending;
        ck_assert_uint_eq(next_r, nr);
        struct fdp__ipf_status bs;
        fdp__ipf_get_status(ipf, &bs);
        ck_assert_msg(bs.nfrag == m->nfrag, "after fragment %zu: %u held, "
                      "the model %u", at + n - 1, bs.nfrag, m->nfrag);
        at += n;
    }

    /* Whatever is left expires. */
    now += 15001;
    fdp__ipf_expire(ipf, now, UINT32_MAX);
    model_expire(m, now);
    ck_assert_uint_eq(m->nfrag, 0);

    struct fdp__ipf_status s;
    fdp__ipf_get_status(ipf, &s);
    ck_assert_uint_eq(s.nfrag, m->nfrag);
    const struct fdp__ipf_proto_status *ps[2] = { &s.v4, &s.v6 };
    for (int v6 = 0; v6 < 2; v6++) {
        ck_assert_uint_eq(ps[v6]->n_accepted, m->c_accepted[v6]);
        ck_assert_uint_eq(ps[v6]->n_completed, m->c_completed[v6]);
        ck_assert_uint_eq(ps[v6]->n_expired, m->c_expired[v6]);
        ck_assert_uint_eq(ps[v6]->n_too_small, m->c_small[v6]);
        ck_assert_uint_eq(ps[v6]->n_overlap, m->c_overlap[v6]);
    }
    /* The run must have exercised what it claims to. */
    ck_assert_uint_gt(n_completed, N_WHOLE / 8);
    ck_assert_uint_gt(m->c_overlap[0] + m->c_overlap[1], 0);
    ck_assert_uint_gt(m->c_small[0] + m->c_small[1], 0);
    ck_assert_uint_gt(m->c_expired[0] + m->c_expired[1], 0);
    printf("ipf model: %zu fragments, %zu packets reassembled\n", n_stream,
           n_completed);

    frags_free(stream, n_stream);
    for (size_t i = 0; i < N_WHOLE; i++) {
        free(w[i].buf);
    }
    free(w);
    free(stream);
    free(zones);
    free(m);
    fdp__ipf_destroy(ipf);
}
END_TEST

/* ---- Concurrency ---- */

enum { C_PACKETS = 300, C_FRAGS = 4 };

struct cshared {
    struct fdp__ipf *ipf;
    struct whole w[C_PACKETS];
    struct tfrag f[C_PACKETS][C_FRAGS];
    uint64_t progress;
    uint32_t completed[C_PACKETS];
};

struct cthread {
    struct cshared *sh;
    int parity;
    size_t n_done;
};

/* Feeds the fragments of every packet whose index in the packet has the
 * thread's parity, in batches of 8; the other thread feeds the rest, so
 * that lists fill from two threads at once. */
static void *
cworker(void *arg_)
{
    struct cthread *t = arg_;
    struct cshared *sh = t->sh;
    struct fdp__pkt *pkts[8];
    size_t n = 0;

    for (size_t p = 0; p < C_PACKETS; p++) {
        for (size_t k = (size_t) t->parity; k < C_FRAGS; k += 2) {
            pkts[n++] = &sh->f[p][k].pkt;
            if (n < 8 && !(p + 1 == C_PACKETS && k + 2 >= C_FRAGS)) {
                continue;
            }
            bool held[8];
            struct fdp__ipf_reass *r[8];
            size_t nr = fdp__ipf_preprocess(sh->ipf, pkts, n, NULL, 0, 0,
                                            100, held, r);
            for (size_t i = 0; i < n; i++) {
                ck_assert(held[i]);
            }
            for (size_t i = 0; i < nr; i++) {
                /* Which packet: by its UDP source port (1 + index). */
                size_t which = fdp__get16(r[i]->pkt.data
                                          + r[i]->pkt.layout.l4) - 1u;
                ck_assert_uint_lt(which, C_PACKETS);
                check_whole(r[i], &sh->w[which]);
                fdp__ipf_postprocess(sh->ipf, r[i]);
                ck_assert_uint_eq(r[i]->n_frags, C_FRAGS);
                fdp__ipf_reass_free(sh->ipf, r[i]);
                __atomic_fetch_add(&sh->completed[which], 1,
                                   __ATOMIC_RELAXED);
                t->n_done++;
            }
            n = 0;
            fdp__ipf_expire(sh->ipf, 100, 4);
            struct fdp__ipf_status s;
            fdp__ipf_get_status(sh->ipf, &s);
            ck_assert_uint_le(s.nfrag, C_PACKETS * C_FRAGS);
            unit_progress_bump(&sh->progress);
        }
    }
    return NULL;
}

static bool
count_list(const struct fdp__ipf_list_info *info, void *aux)
{
    (void) info;
    ++*(size_t *) aux;
    return true;
}

START_TEST(concurrency)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 12);
    struct cshared *sh = calloc(1, sizeof *sh);
    ck_assert_ptr_nonnull(sh);
    sh->ipf = ipf_new();
    ck_assert_int_eq(fdp__ipf_set_max_nfrags(sh->ipf, 5000), 0);
    for (size_t p = 0; p < C_PACKETS; p++) {
        whole_build(&sh->w[p], p % 2, false, 4000, (uint32_t) p, 9,
                    (uint32_t) p, 0, (uint16_t) (1 + p), &rng);
        ck_assert_uint_eq(frag_all(&sh->w[p], 1296, sh->f[p], C_FRAGS),
                          C_FRAGS);
    }
    struct cthread t[2] = { { sh, 0, 0 }, { sh, 1, 0 } };
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_create(&th[i], NULL, cworker, &t[i]), 0);
    }
    /* A dump meanwhile, for the locks' sake. */
    unit_progress_wait(&sh->progress, 10, "fragment batches");
    size_t n_lists = 0;
    fdp__ipf_dump(sh->ipf, count_list, &n_lists);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    ck_assert_uint_eq(t[0].n_done + t[1].n_done, C_PACKETS);
    for (size_t p = 0; p < C_PACKETS; p++) {
        ck_assert_uint_eq(sh->completed[p], 1);
        frags_free(sh->f[p], C_FRAGS);
        free(sh->w[p].buf);
    }
    struct fdp__ipf_status s;
    fdp__ipf_get_status(sh->ipf, &s);
    ck_assert_uint_eq(s.nfrag, 0);
    ck_assert_uint_eq(s.v4.n_completed + s.v6.n_completed,
                      C_PACKETS * C_FRAGS);
    fdp__ipf_destroy(sh->ipf);
    free(sh);
}
END_TEST

/* ---- Dump ---- */

static bool
collect(const struct fdp__ipf_list_info *info, void *aux)
{
    struct fdp__ipf_list_info *out = aux;
    *out = *info;
    return false;
}

START_TEST(dump)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 13);
    struct fdp__ipf *ipf = ipf_new();
    struct fdp__ipf_reass *r;
    struct whole w;
    struct tfrag f[4];

    whole_build(&w, false, false, 3000, 0x0a000001, 0x0a000002, 0x1234, 4,
                1, &rng);
    frag_all(&w, 1480, f, 4);
    ck_assert(offer(ipf, &f[2], 4, 1, &r));
    struct fdp__ipf_list_info info;
    memset(&info, 0, sizeof info);
    fdp__ipf_dump(ipf, collect, &info);
    ck_assert(!info.ipv6);
    ck_assert_uint_eq(fdp__get32(info.src), 0x0a000001);
    ck_assert_uint_eq(fdp__get32(info.dst), 0x0a000002);
    ck_assert_uint_eq(info.ip_id, 0x1234);
    ck_assert_uint_eq(info.zone, 4);
    ck_assert_uint_eq(info.nw_proto, 17);
    ck_assert_uint_eq(info.n_frags, 1);
    ck_assert_str_eq(info.state, "last frag");
    frags_free(f, 3);
    free(w.buf);
    fdp__ipf_destroy(ipf);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ipf");
    TCase *tc = unit_tcase(s, "reassembly");
    tcase_add_test(tc, orders);
    tcase_add_test(tc, one_batch);
    tcase_add_test(tc, duplicates_and_overlaps);
    tcase_add_test(tc, too_small);
    tcase_add_test(tc, too_many);
    tcase_add_test(tc, too_big);
    tcase_add_test(tc, expiry_and_disable);
    tcase_add_test(tc, interleaved_keys);
    tcase_add_test(tc, nat_rewrite);
    tcase_add_test(tc, through_tracker);
    tcase_add_test(tc, dump);
    tc = unit_tcase(s, "model");
    tcase_add_test(tc, random_vs_model);
    tc = unit_tcase(s, "concurrency");
    tcase_add_test(tc, concurrency);
    return unit_run(s);
}
