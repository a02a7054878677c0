/*
 * Unit tests for datapath/tnl-header.c: tunnel headers.
 *
 * The oracles: hand-built reference headers, field by field, with
 * checksums from an independent byte-by-byte sum (exact bytes for VXLAN,
 * Geneve and GRE over IPv4 and IPv6); round trips of random metadata,
 * options and inner frames through build, push and pop; one mutation per
 * drop reason, each checked to give that reason; and a fuzz loop of random
 * truncations and byte changes of valid packets, which must never read
 * outside the packet (the sanitizer builds check) and, when accepted,
 * give an inner frame inside it.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/datapath.h>
#include <flowdp/flow.h>
#include <flowdp/pipeline.h>
#include <flowdp/table.h>
#include <flowdp/tlv-map.h>

#include "datapath/dp-private.h"
#include "datapath/tnl-header.h"
#include "datapath/tunnel.h"
#include <flowdp/underlay.h>
#include "lib/field.h"
#include "lib/util.h"
#include "unit.h"

#define HEADROOM 400
#define BUF_SIZE 2048

/* ---------------------------------------------------------------------- */
/* Reference bytes, written independently of the code under test.         */

static uint16_t
ref_csum(const uint8_t *p, size_t n, uint32_t sum)
{
    for (size_t i = 0; i < n; i++) {
        sum += (i & 1) ? p[i] : (uint32_t) p[i] << 8;
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t) ~sum;
}

struct ref {
    uint8_t b[BUF_SIZE];
    size_t n;
};

static void
ref_put(struct ref *r, const void *p, size_t n)
{
    memcpy(r->b + r->n, p, n);
    r->n += n;
}

static void
ref_u8(struct ref *r, unsigned int v)
{
    r->b[r->n++] = (uint8_t) v;
}

static void
ref_u16(struct ref *r, unsigned int v)
{
    ref_u8(r, v >> 8);
    ref_u8(r, v & 0xff);
}

static void
ref_u32(struct ref *r, uint32_t v)
{
    ref_u16(r, v >> 16);
    ref_u16(r, v & 0xffff);
}

static void
addr4(struct in6_addr *a, const char *s)
{
    struct in_addr in;
    ck_assert(inet_pton(AF_INET, s, &in) == 1);
    fdp__tnl_addr_from_ipv4(a, ntohl(in.s_addr));
}

static void
addr6(struct in6_addr *a, const char *s)
{
    ck_assert(inet_pton(AF_INET6, s, a) == 1);
}

/* An inner Ethernet frame of 'n' bytes with recognisable contents. */
static void
make_inner(uint8_t *p, size_t n, unsigned int salt)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t) (i * 7 + salt);
    }
}

static const uint64_t SMAC = UINT64_C(0x0a0000000001);
static const uint64_t DMAC = UINT64_C(0x0a0000000002);

static void
ref_eth(struct ref *r, unsigned int type)
{
    static const uint8_t dst[6] = { 0x0a, 0, 0, 0, 0, 0x02 };
    static const uint8_t src[6] = { 0x0a, 0, 0, 0, 0, 0x01 };
    ref_put(r, dst, 6);
    ref_put(r, src, 6);
    ref_u16(r, type);
}

/* An IPv4 header with 'payload' bytes after it, checksum computed. */
static void
ref_ipv4(struct ref *r, unsigned int tos, unsigned int ttl, bool df,
         unsigned int proto, const char *src, const char *dst, size_t payload)
{
    size_t at = r->n;
    struct in_addr s, d;
    ck_assert(inet_pton(AF_INET, src, &s) == 1);
    ck_assert(inet_pton(AF_INET, dst, &d) == 1);
    ref_u8(r, 0x45);
    ref_u8(r, tos);
    ref_u16(r, (unsigned int) (20 + payload));
    ref_u16(r, 0);
    ref_u16(r, df ? 0x4000 : 0);
    ref_u8(r, ttl);
    ref_u8(r, proto);
    ref_u16(r, 0);
    ref_put(r, &s, 4);
    ref_put(r, &d, 4);
    uint16_t c = ref_csum(r->b + at, 20, 0);
    r->b[at + 10] = (uint8_t) (c >> 8);
    r->b[at + 11] = (uint8_t) c;
}

static void
ref_ipv6(struct ref *r, unsigned int tc, unsigned int hlim,
         unsigned int proto, const char *src, const char *dst, size_t payload)
{
    struct in6_addr s, d;
    ck_assert(inet_pton(AF_INET6, src, &s) == 1);
    ck_assert(inet_pton(AF_INET6, dst, &d) == 1);
    ref_u32(r, 6u << 28 | tc << 20);
    ref_u16(r, (unsigned int) payload);
    ref_u8(r, proto);
    ref_u8(r, hlim);
    ref_put(r, &s, 16);
    ref_put(r, &d, 16);
}

/* The UDP checksum of the datagram at 'udp' ('len' bytes) after the IP
 * header at 'ip'. */
static uint16_t
ref_udp_csum(const uint8_t *ip, const uint8_t *udp, size_t len, bool v6)
{
    uint8_t pseudo[40];
    size_t n;
    if (v6) {
        memcpy(pseudo, ip + 8, 32);
        pseudo[32] = pseudo[33] = 0;
        pseudo[34] = (uint8_t) (len >> 8);
        pseudo[35] = (uint8_t) len;
        pseudo[36] = pseudo[37] = pseudo[38] = 0;
        pseudo[39] = 17;
        n = 40;
    } else {
        memcpy(pseudo, ip + 12, 8);
        pseudo[8] = 0;
        pseudo[9] = 17;
        pseudo[10] = (uint8_t) (len >> 8);
        pseudo[11] = (uint8_t) len;
        n = 12;
    }
    uint32_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += (i & 1) ? pseudo[i] : (uint32_t) pseudo[i] << 8;
    }
    uint16_t c = ref_csum(udp, len, sum);
    return c ? c : 0xffff;
}

static void
check_bytes(const uint8_t *got, const struct ref *want, size_t got_n)
{
    ck_assert_uint_eq(got_n, want->n);
    for (size_t i = 0; i < want->n; i++) {
        ck_assert_msg(got[i] == want->b[i], "byte %zu: got %#04x, want %#04x",
                      i, got[i], want->b[i]);
    }
}

/* Builds and pushes a header over 'inner_n' bytes of inner frame; returns
 * the packet's start in 'buf' and its size. */
static uint8_t *
build_push(const struct fdp__tnl_build_params *p, uint8_t *buf,
           size_t inner_n, unsigned int salt, uint16_t sport, size_t *np)
{
    struct fdp__tnl_hdr h;
    ck_assert_int_eq(fdp__tnl_build(p, &h), 0);
    make_inner(buf + HEADROOM, inner_n, salt);
    uint8_t *start = fdp__tnl_push(&h, buf + HEADROOM, (uint32_t) inner_n,
                                   sport);
    ck_assert_ptr_eq(start, buf + HEADROOM - h.len);
    *np = h.len + inner_n;
    return start;
}

/* ---------------------------------------------------------------------- */
/* Exact headers.                                                          */

START_TEST(vxlan_ipv4_exact)
{
    struct fdp__tnl_md md = { .id = 0x123456, .tos = 0x10, .ttl = 64,
                              .flags = FDP__TNL_F_DF | FDP__TNL_F_KEY };
    addr4(&md.src, "192.0.2.1");
    addr4(&md.dst, "192.0.2.2");
    struct fdp__tnl_build_params p = {
        .kind = FDP__TNL_VXLAN, .md = &md, .dst_port = 4789,
        .eth_src = SMAC, .eth_dst = DMAC,
    };
    static uint8_t buf[BUF_SIZE];
    size_t n;
    uint8_t *pkt = build_push(&p, buf, 60, 1, 50000, &n);

    struct ref r = { .n = 0 };
    ref_eth(&r, 0x0800);
    ref_ipv4(&r, 0x10, 64, true, 17, "192.0.2.1", "192.0.2.2", 8 + 8 + 60);
    ref_u16(&r, 50000);
    ref_u16(&r, 4789);
    ref_u16(&r, 8 + 8 + 60);
    ref_u16(&r, 0);             /* No UDP checksum over IPv4. */
    ref_u32(&r, 0x08000000);
    ref_u32(&r, 0x12345600);
    make_inner(r.b + r.n, 60, 1);
    r.n += 60;
    check_bytes(pkt, &r, n);
}
END_TEST

START_TEST(vxlan_gbp_exact)
{
    struct fdp__tnl_md md = { .id = 0xabcdef12, .ttl = 9, .gbp_id = 0x1234,
                              .gbp_flags = 0x48 | 0x01 };
    addr4(&md.src, "10.0.0.1");
    addr4(&md.dst, "10.0.0.2");
    struct fdp__tnl_build_params p = {
        .kind = FDP__TNL_VXLAN, .md = &md, .dst_port = 4789, .gbp = true,
        .eth_src = SMAC, .eth_dst = DMAC,
    };
    static uint8_t buf[BUF_SIZE];
    size_t n;
    uint8_t *pkt = build_push(&p, buf, 14, 2, 40000, &n);

    /* The VNI is the key's low 24 bits; only D and A of the flags go. */
    ck_assert_uint_eq(pkt[42], 0x88);
    ck_assert_uint_eq(pkt[43], 0x48);
    ck_assert_uint_eq(pkt[44], 0x12);
    ck_assert_uint_eq(pkt[45], 0x34);
    ck_assert_uint_eq(pkt[46], 0xcd);
    ck_assert_uint_eq(pkt[47], 0xef);
    ck_assert_uint_eq(pkt[48], 0x12);
    ck_assert_uint_eq(pkt[49], 0x00);

    struct fdp__tnl_md got;
    uint32_t ofs, size;
    enum fdp__tnl_drop why;
    ck_assert(fdp__tnl_pop(pkt, (uint32_t) n, 14, FDP__TNL_VXLAN, true, NULL,
                           &got, &ofs, &size, &why));
    ck_assert_uint_eq(got.gbp_id, 0x1234);
    ck_assert_uint_eq(got.gbp_flags, 0x48);
    ck_assert_uint_eq(got.id, 0xcdef12);
    /* Without the extension the G bit is a bad header. */
    ck_assert(!fdp__tnl_pop(pkt, (uint32_t) n, 14, FDP__TNL_VXLAN, false,
                            NULL, &got, &ofs, &size, &why));
    ck_assert_int_eq(why, FDP__TNL_DROP_BAD_HEADER);
}
END_TEST

static const struct fdp__tnl_tlv two_opts[] = {
    { .opt_class = 0xffff, .type = 0x80, .len = 4, .ofs = 0, .index = 0 },
    { .opt_class = 0x0102, .type = 0x03, .len = 8, .ofs = 4, .index = 1 },
};

START_TEST(geneve_ipv6_exact)
{
    struct fdp__tnl_md md = { .id = 0x99, .tos = 0xb8, .ttl = 255,
                              .flags = FDP__TNL_F_OAM | FDP__TNL_F_KEY,
                              .present = 0x07 };
    for (int i = 0; i < FDP__TNL_SPACE; i++) {
        md.space[i] = (uint8_t) (0xa0 + i);
    }
    addr6(&md.src, "2001:db8::1");
    addr6(&md.dst, "2001:db8::2");
    struct fdp__tnl_tlv_map map = { 2, two_opts };
    struct fdp__tnl_build_params p = {
        .kind = FDP__TNL_GENEVE, .md = &md, .dst_port = 6081,
        .eth_src = SMAC, .eth_dst = DMAC, .map = &map,
    };
    static uint8_t buf[BUF_SIZE];
    size_t n;
    uint8_t *pkt = build_push(&p, buf, 61, 3, 33333, &n);

    size_t udp_len = 8 + 8 + 4 + 4 + 4 + 8 + 61;
    struct ref r = { .n = 0 };
    ref_eth(&r, 0x86dd);
    ref_ipv6(&r, 0xb8, 255, 17, "2001:db8::1", "2001:db8::2", udp_len);
    size_t udp_at = r.n;
    ref_u16(&r, 33333);
    ref_u16(&r, 6081);
    ref_u16(&r, (unsigned int) udp_len);
    ref_u16(&r, 0);
    ref_u8(&r, 5);              /* Version 0, 20 bytes of options. */
    ref_u8(&r, 0x80 | 0x40);    /* OAM, critical. */
    ref_u16(&r, 0x6558);
    ref_u32(&r, 0x9900);
    ref_u16(&r, 0xffff);
    ref_u8(&r, 0x80);
    ref_u8(&r, 1);
    ref_put(&r, md.space, 4);
    ref_u16(&r, 0x0102);
    ref_u8(&r, 0x03);
    ref_u8(&r, 2);
    ref_put(&r, md.space + 4, 8);
    make_inner(r.b + r.n, 61, 3);
    r.n += 61;
    uint16_t c = ref_udp_csum(r.b + 14, r.b + udp_at, udp_len, true);
    r.b[udp_at + 6] = (uint8_t) (c >> 8);
    r.b[udp_at + 7] = (uint8_t) c;
    check_bytes(pkt, &r, n);

    /* And back. */
    struct fdp__tnl_md got;
    uint32_t ofs, size;
    enum fdp__tnl_drop why;
    ck_assert(fdp__tnl_pop(pkt, (uint32_t) n, 14, FDP__TNL_GENEVE, false,
                           &map, &got, &ofs, &size, &why));
    ck_assert_uint_eq(got.present, 0x03);  /* Options start at 0 and 1. */
    ck_assert(!memcmp(got.space, md.space, 12));
    ck_assert_uint_eq(got.flags, FDP__TNL_F_OAM | FDP__TNL_F_KEY
                                 | FDP__TNL_F_CSUM);
    ck_assert_uint_eq(got.tos, 0xb8);
    ck_assert_uint_eq(got.ttl, 255);
    ck_assert_uint_eq(got.tp_src, 33333);
    ck_assert_uint_eq(got.tp_dst, 6081);
    ck_assert_uint_eq(ofs, n - 61);
    ck_assert_uint_eq(size, 61);
}
END_TEST

START_TEST(gre_ipv4_exact)
{
    struct fdp__tnl_md md = { .id = 0xdeadbeef, .tos = 0, .ttl = 64,
                              .flags = FDP__TNL_F_KEY | FDP__TNL_F_CSUM };
    addr4(&md.src, "172.16.0.1");
    addr4(&md.dst, "172.16.0.2");
    struct fdp__tnl_build_params p = {
        .kind = FDP__TNL_GRE, .md = &md, .eth_src = SMAC, .eth_dst = DMAC,
    };
    static uint8_t buf[BUF_SIZE];
    size_t n;
    uint8_t *pkt = build_push(&p, buf, 73, 4, 0, &n);

    struct ref r = { .n = 0 };
    ref_eth(&r, 0x0800);
    ref_ipv4(&r, 0, 64, false, 47, "172.16.0.1", "172.16.0.2", 12 + 73);
    size_t gre_at = r.n;
    ref_u16(&r, 0xa000);        /* C and K. */
    ref_u16(&r, 0x6558);
    ref_u32(&r, 0);             /* Checksum (below) and reserved. */
    ref_u32(&r, 0xdeadbeef);
    make_inner(r.b + r.n, 73, 4);
    r.n += 73;
    uint16_t c = ref_csum(r.b + gre_at, r.n - gre_at, 0);
    r.b[gre_at + 4] = (uint8_t) (c >> 8);
    r.b[gre_at + 5] = (uint8_t) c;
    check_bytes(pkt, &r, n);

    /* Without key or checksum: the 4-byte base header alone. */
    md.flags = 0;
    pkt = build_push(&p, buf, 73, 4, 0, &n);
    ck_assert_uint_eq(n, 14 + 20 + 4 + 73);
    ck_assert_uint_eq(pkt[34], 0);
    ck_assert_uint_eq(pkt[35], 0);
}
END_TEST

START_TEST(src_port_range)
{
    /* Open vSwitch's scaling: 0 is the bottom, all ones the top. */
    ck_assert_uint_eq(fdp__tnl_src_port(0), 32768);
    ck_assert_uint_eq(fdp__tnl_src_port(UINT32_MAX), 60999);
    ck_assert_uint_eq(fdp__tnl_src_port(0x80000000u), 32768 + 14116);
}
END_TEST

START_TEST(family_mismatch)
{
    struct fdp__tnl_md md = { .ttl = 1 };
    struct fdp__tnl_hdr h;
    addr4(&md.src, "10.0.0.1");
    addr6(&md.dst, "2001:db8::1");
    struct fdp__tnl_build_params p = { .kind = FDP__TNL_VXLAN, .md = &md };
    ck_assert_int_eq(fdp__tnl_build(&p, &h), EINVAL);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Round trips.                                                            */

/* Random metadata for 'kind' (the fields its header carries). */
static void
random_md(struct unit_rng *rng, enum fdp__tnl_kind kind, bool v6,
          struct fdp__tnl_md *md)
{
    memset(md, 0, sizeof *md);
    if (v6) {
        for (int i = 0; i < 16; i++) {
            md->src.s6_addr[i] = (uint8_t) unit_rng_next(rng);
            md->dst.s6_addr[i] = (uint8_t) unit_rng_next(rng);
        }
        md->src.s6_addr[0] = md->dst.s6_addr[0] = 0x20;
    } else {
        fdp__tnl_addr_from_ipv4(&md->src, (uint32_t) unit_rng_next(rng));
        fdp__tnl_addr_from_ipv4(&md->dst, (uint32_t) unit_rng_next(rng));
    }
    md->tos = (uint8_t) unit_rng_next(rng);
    md->ttl = (uint8_t) unit_rng_next(rng);
    md->flags = (uint16_t) (unit_rng_next(rng) & (FDP__TNL_F_DF
                                                  | FDP__TNL_F_CSUM));
    if (kind == FDP__TNL_GRE) {
        md->id = (uint32_t) unit_rng_next(rng);
        if (unit_rng_below(rng, 4)) {
            md->flags |= FDP__TNL_F_KEY;
        } else {
            md->id = 0;
        }
    } else {
        md->id = unit_rng_next(rng) & 0xffffff;
        md->flags |= FDP__TNL_F_KEY;
    }
    if (kind == FDP__TNL_GENEVE) {
        md->flags |= (uint16_t) (unit_rng_next(rng) & FDP__TNL_F_OAM);
        md->present = (uint8_t) unit_rng_next(rng);
        for (int i = 0; i < FDP__TNL_SPACE; i++) {
            md->space[i] = (uint8_t) unit_rng_next(rng);
        }
    }
    if (kind == FDP__TNL_VXLAN && unit_rng_below(rng, 2)) {
        md->gbp_id = (uint16_t) unit_rng_next(rng);
        md->gbp_flags = (uint8_t) (unit_rng_next(rng) & 0x48);
    }
}

/* A random TLV map over the option space: slots cut into options of
 * random lengths, each with a random class and type. */
static uint32_t
random_map(struct unit_rng *rng, struct fdp__tnl_tlv *tlvs)
{
    uint32_t n = 0;
    unsigned int slot = 0;
    while (slot < FDP__TNL_SLOTS) {
        unsigned int len = 1 + unit_rng_below(rng, FDP__TNL_SLOTS - slot);
        if (unit_rng_below(rng, 4)) {
            tlvs[n] = (struct fdp__tnl_tlv) {
                .opt_class = (uint16_t) (n * 0x101 + 1),
                .type = (uint8_t) (unit_rng_next(rng) & 0xff),
                .len = (uint8_t) (len * 4), .ofs = (uint8_t) (slot * 4),
                .index = (uint8_t) n,
            };
            n++;
        }
        slot += len;
    }
    return n;
}

START_TEST(round_trips)
{
    struct unit_rng rng;
    static uint8_t buf[BUF_SIZE];
    unit_rng_init(&rng, 1);

    for (int iter = 0; iter < 20000; iter++) {
        enum fdp__tnl_kind kind = (enum fdp__tnl_kind) unit_rng_below(&rng, 3);
        bool v6 = unit_rng_below(&rng, 2);
        bool gbp = kind == FDP__TNL_VXLAN && unit_rng_below(&rng, 2);
        struct fdp__tnl_md md, got;
        struct fdp__tnl_tlv tlvs[FDP__TNL_SLOTS];
        struct fdp__tnl_tlv_map map = { random_map(&rng, tlvs), tlvs };
        random_md(&rng, kind, v6, &md);
        struct fdp__tnl_build_params p = {
            .kind = kind, .md = &md,
            .dst_port = (uint16_t) unit_rng_next(&rng), .gbp = gbp,
            .eth_src = SMAC, .eth_dst = DMAC, .map = &map,
        };
        size_t inner_n = 14 + unit_rng_below(&rng, 1400), n;
        uint16_t sport = fdp__tnl_src_port((uint32_t) unit_rng_next(&rng));
        uint8_t *pkt = build_push(&p, buf, inner_n, (unsigned int) iter,
                                  sport, &n);
        uint32_t ofs, size;
        enum fdp__tnl_drop why = FDP__TNL_N_DROPS;
        bool ok = fdp__tnl_pop(pkt, (uint32_t) n, 14, kind, gbp, &map, &got,
                               &ofs, &size, &why);
        ck_assert_msg(ok, "iteration %d: dropped (%s)", iter,
                      fdp__tnl_drop_name(why));
        ck_assert_uint_eq(ofs, n - inner_n);
        ck_assert_uint_eq(size, inner_n);
        ck_assert(!memcmp(&got.src, &md.src, sizeof md.src));
        ck_assert(!memcmp(&got.dst, &md.dst, sizeof md.dst));
        ck_assert_uint_eq(got.tos, md.tos);
        ck_assert_uint_eq(got.ttl, md.ttl);
        ck_assert_uint_eq(got.id, md.id);
        ck_assert_uint_eq(got.flags & FDP__TNL_F_KEY,
                          md.flags & FDP__TNL_F_KEY);
        bool csum = kind != FDP__TNL_GRE && v6;
        ck_assert_uint_eq(!!(got.flags & FDP__TNL_F_CSUM),
                          csum || !!(md.flags & FDP__TNL_F_CSUM));
        if (kind != FDP__TNL_GRE) {
            ck_assert_uint_eq(got.tp_src, sport);
            ck_assert_uint_eq(got.tp_dst, p.dst_port);
        }
        if (gbp) {
            ck_assert_uint_eq(got.gbp_id, md.gbp_id);
            ck_assert_uint_eq(got.gbp_flags, md.gbp_flags);
        }
        if (kind == FDP__TNL_GENEVE) {
            ck_assert_uint_eq(got.flags & FDP__TNL_F_OAM,
                              md.flags & FDP__TNL_F_OAM);
            /* Exactly the mapped options present come back: those whose
             * first slot's bit is set. */
            uint8_t want = 0;
            for (uint32_t i = 0; i < map.n; i++) {
                uint8_t bit = (uint8_t) (1u << (tlvs[i].ofs / 4));
                if (md.present & bit) {
                    want |= bit;
                    ck_assert(!memcmp(got.space + tlvs[i].ofs,
                                      md.space + tlvs[i].ofs, tlvs[i].len));
                }
            }
            ck_assert_uint_eq(got.present, want);
        }
        static uint8_t want[BUF_SIZE];
        make_inner(want, inner_n, (unsigned int) iter);
        ck_assert(!memcmp(pkt + ofs, want, inner_n));
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Malformed packets: each reason.                                         */

struct mal {
    uint8_t b[BUF_SIZE];
    size_t n;
};

/* A valid packet of 'kind' over IPv4 or IPv6, Geneve with the two
 * options of two_opts, copied into 'm'. */
static void
valid_packet(enum fdp__tnl_kind kind, bool v6, bool csum, struct mal *m)
{
    struct fdp__tnl_md md = { .id = 7, .ttl = 64, .present = 0x07,
                              .flags = FDP__TNL_F_KEY
                                       | (csum ? FDP__TNL_F_CSUM : 0) };
    static uint8_t buf[BUF_SIZE];
    struct fdp__tnl_tlv_map map = { 2, two_opts };
    if (v6) {
        addr6(&md.src, "2001:db8::1");
        addr6(&md.dst, "2001:db8::2");
    } else {
        addr4(&md.src, "10.1.1.1");
        addr4(&md.dst, "10.1.1.2");
    }
    struct fdp__tnl_build_params p = {
        .kind = kind, .md = &md, .dst_port = 4789, .eth_src = SMAC,
        .eth_dst = DMAC, .map = &map,
    };
    uint8_t *pkt = build_push(&p, buf, 64, 9, 40000, &m->n);
    memcpy(m->b, pkt, m->n);
}

static void
expect_drop(const struct mal *m, enum fdp__tnl_kind kind,
            enum fdp__tnl_drop want, const char *what)
{
    struct fdp__tnl_tlv_map map = { 2, two_opts };
    struct fdp__tnl_md md;
    uint32_t ofs, size;
    enum fdp__tnl_drop why = FDP__TNL_N_DROPS;
    bool ok = fdp__tnl_pop(m->b, (uint32_t) m->n, 14, kind, false, &map, &md,
                           &ofs, &size, &why);
    ck_assert_msg(!ok, "%s: accepted", what);
    ck_assert_msg(why == want, "%s: dropped as %s, not %s", what,
                  fdp__tnl_drop_name(why), fdp__tnl_drop_name(want));
}

static void
fix_ipv4_csum(struct mal *m)
{
    m->b[24] = m->b[25] = 0;
    uint16_t c = ref_csum(m->b + 14, 20, 0);
    m->b[24] = (uint8_t) (c >> 8);
    m->b[25] = (uint8_t) c;
}

START_TEST(malformed)
{
    struct mal m;

    /* Truncations at each layer. */
    for (enum fdp__tnl_kind k = 0; k <= FDP__TNL_GRE; k++) {
        for (int v6 = 0; v6 < 2; v6++) {
            valid_packet(k, v6, false, &m);
            m.n = 14 + 10;
            expect_drop(&m, k, FDP__TNL_DROP_TRUNCATED, "short IP");
            m.n = 13;
            expect_drop(&m, k, FDP__TNL_DROP_TRUNCATED, "no IP at all");
            /* Cut inside the packet: the IP length now lies. */
            valid_packet(k, v6, false, &m);
            m.n -= 10;
            expect_drop(&m, k, FDP__TNL_DROP_IP_LENGTH, "cut packet");
        }
    }

    valid_packet(FDP__TNL_VXLAN, false, false, &m);
    m.b[14] = 0x35;
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_IP_VERSION, "version 3");

    valid_packet(FDP__TNL_VXLAN, false, false, &m);
    m.b[14] = 0x46;
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_IP_OPTIONS, "IP options");

    valid_packet(FDP__TNL_VXLAN, false, false, &m);
    m.b[24] ^= 1;
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_IP_CSUM, "IP checksum");

    valid_packet(FDP__TNL_VXLAN, false, false, &m);
    m.b[20] = 0x20;             /* More fragments. */
    fix_ipv4_csum(&m);
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_IP_FRAGMENT, "fragment");

    valid_packet(FDP__TNL_VXLAN, false, false, &m);
    m.b[16] = 0;
    m.b[17] = 10;               /* Total length under the header. */
    fix_ipv4_csum(&m);
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_IP_LENGTH, "tot_len 10");

    valid_packet(FDP__TNL_VXLAN, true, false, &m);
    m.b[14 + 6] = 0;            /* A hop-by-hop header first. */
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_IP_OPTIONS, "IPv6 ext");

    valid_packet(FDP__TNL_VXLAN, false, false, &m);
    m.b[38] = 0;
    m.b[39] = 4;                /* UDP length under its header. */
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_UDP_LENGTH, "udp len 4");
    m.b[38] = 0xff;
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_UDP_LENGTH,
                "udp len past IP");

    valid_packet(FDP__TNL_VXLAN, true, false, &m);
    m.b[m.n - 1] ^= 0x55;       /* The payload no longer matches. */
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_UDP_CSUM, "udp csum v6");

    valid_packet(FDP__TNL_VXLAN, false, true, &m);
    m.b[m.n - 1] ^= 0x55;
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_UDP_CSUM, "udp csum v4");

    valid_packet(FDP__TNL_VXLAN, false, false, &m);
    m.b[42] = 0x0c;             /* A flag beyond I. */
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_BAD_HEADER, "vxlan flags");
    valid_packet(FDP__TNL_VXLAN, false, false, &m);
    m.b[49] = 1;                /* Reserved byte after the VNI. */
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_BAD_HEADER, "vxlan rsvd");
    valid_packet(FDP__TNL_VXLAN, false, false, &m);
    m.b[42] = 0;                /* I clear. */
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_BAD_HEADER, "vxlan no I");

    valid_packet(FDP__TNL_GENEVE, false, false, &m);
    m.b[42] |= 0x40;            /* Version 1. */
    expect_drop(&m, FDP__TNL_GENEVE, FDP__TNL_DROP_BAD_HEADER, "geneve v1");
    valid_packet(FDP__TNL_GENEVE, false, false, &m);
    m.b[44] = 0x08;             /* IPv4 inside, not Ethernet. */
    m.b[45] = 0x00;
    expect_drop(&m, FDP__TNL_GENEVE, FDP__TNL_DROP_BAD_PROTO, "geneve proto");
    valid_packet(FDP__TNL_GENEVE, false, false, &m);
    m.b[42] = 0x3f;             /* 252 bytes of options: past the packet. */
    expect_drop(&m, FDP__TNL_GENEVE, FDP__TNL_DROP_OPT_LENGTH, "opt_len");
    valid_packet(FDP__TNL_GENEVE, false, false, &m);
    m.b[50 + 3] = 0x1f;         /* The first TLV's data runs past. */
    expect_drop(&m, FDP__TNL_GENEVE, FDP__TNL_DROP_OPT_LENGTH, "tlv len");
    valid_packet(FDP__TNL_GENEVE, false, false, &m);
    /* The second option (8 bytes in the map) said to be 4 bytes, and a
     * 4-byte unknown non-critical option after it: the lengths add up,
     * the map's does not. */
    m.b[58 + 3] = 1;
    m.b[66] = 0x00;
    m.b[67] = 0x99;
    m.b[68] = 0x01;
    m.b[69] = 0;
    expect_drop(&m, FDP__TNL_GENEVE, FDP__TNL_DROP_OPT_MAP, "opt vs map");
    valid_packet(FDP__TNL_GENEVE, false, false, &m);
    m.b[58 + 2] = 0x83;         /* Critical, and not in the map. */
    expect_drop(&m, FDP__TNL_GENEVE, FDP__TNL_DROP_CRIT_OPT, "critical");

    valid_packet(FDP__TNL_GRE, false, false, &m);
    m.b[34] = 0x40;             /* Routing present. */
    expect_drop(&m, FDP__TNL_GRE, FDP__TNL_DROP_BAD_HEADER, "gre routing");
    valid_packet(FDP__TNL_GRE, false, false, &m);
    m.b[35] = 0x01;             /* Version 1 (PPTP). */
    expect_drop(&m, FDP__TNL_GRE, FDP__TNL_DROP_BAD_HEADER, "gre version");
    valid_packet(FDP__TNL_GRE, false, false, &m);
    m.b[36] = 0x08;             /* IPv4 inside. */
    m.b[37] = 0x00;
    expect_drop(&m, FDP__TNL_GRE, FDP__TNL_DROP_BAD_PROTO, "gre proto");
    valid_packet(FDP__TNL_GRE, false, true, &m);
    m.b[m.n - 2] ^= 0x11;
    expect_drop(&m, FDP__TNL_GRE, FDP__TNL_DROP_GRE_CSUM, "gre csum");

    /* The wrong protocol for the kind asked. */
    valid_packet(FDP__TNL_GRE, false, false, &m);
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_BAD_PROTO, "gre as vxlan");

    /* An inner frame too short to be Ethernet. */
    valid_packet(FDP__TNL_VXLAN, false, false, &m);
    m.b[16] = 0;
    m.b[17] = 20 + 8 + 8 + 10;
    fix_ipv4_csum(&m);
    m.b[38] = 0;
    m.b[39] = 8 + 8 + 10;
    expect_drop(&m, FDP__TNL_VXLAN, FDP__TNL_DROP_TRUNCATED, "inner 10");

    /* Ethernet padding after the IP packet is not the inner frame's. */
    valid_packet(FDP__TNL_VXLAN, false, false, &m);
    m.n += 6;
    struct fdp__tnl_md md;
    uint32_t ofs, size;
    enum fdp__tnl_drop why;
    ck_assert(fdp__tnl_pop(m.b, (uint32_t) m.n, 14, FDP__TNL_VXLAN, false,
                           NULL, &md, &ofs, &size, &why));
    ck_assert_uint_eq(size, 64);
}
END_TEST

START_TEST(drop_names)
{
    for (int i = 0; i < FDP__TNL_N_DROPS; i++) {
        ck_assert(strcmp(fdp__tnl_drop_name((enum fdp__tnl_drop) i),
                         "unknown"));
    }
    ck_assert_str_eq(fdp__tnl_drop_name(FDP__TNL_N_DROPS), "unknown");
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Fuzzing.                                                                */

START_TEST(fuzz_pop)
{
    struct unit_rng rng;
    struct mal m;
    unit_rng_init(&rng, 2);

    for (int iter = 0; iter < 200000; iter++) {
        enum fdp__tnl_kind kind = (enum fdp__tnl_kind) unit_rng_below(&rng, 3);
        valid_packet(kind, unit_rng_below(&rng, 2), unit_rng_below(&rng, 2),
                     &m);
        int n_changes = (int) unit_rng_below(&rng, 4);
        for (int c = 0; c < n_changes; c++) {
            m.b[unit_rng_below(&rng, (uint32_t) m.n)] =
                (uint8_t) unit_rng_next(&rng);
        }
        if (unit_rng_below(&rng, 2)) {
            m.n = unit_rng_below(&rng, (uint32_t) m.n + 1);
        }
        /* A copy of exactly the packet's size on the heap, so that a read
         * past it is the sanitizer's to see. */
        uint8_t *copy = malloc(m.n ? m.n : 1);
        ck_assert_ptr_nonnull(copy);
        memcpy(copy, m.b, m.n);
        struct fdp__tnl_tlv_map map = { 2, two_opts };
        struct fdp__tnl_md md;
        uint32_t ofs, size;
        enum fdp__tnl_drop why = FDP__TNL_N_DROPS;
        uint32_t l3 = unit_rng_below(&rng, 8) ? 14 : unit_rng_below(&rng, 80);
        if (fdp__tnl_pop(copy, (uint32_t) m.n, l3, kind,
                         unit_rng_below(&rng, 2), &map, &md, &ofs, &size,
                         &why)) {
            ck_assert_uint_le((uint64_t) ofs + size, m.n);
            ck_assert_uint_ge(size, 14);
        } else {
            ck_assert_int_lt(why, FDP__TNL_N_DROPS);
        }
        free(copy);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Through a datapath.                                                     */

static const uint64_t LOCAL_MAC = UINT64_C(0x020000000001);
static const uint64_t GW_MAC = UINT64_C(0x020000000002);

static void
mac_bytes(uint64_t mac, uint8_t b[6])
{
    for (int i = 5; i >= 0; i--, mac >>= 8) {
        b[i] = (uint8_t) mac;
    }
}

struct trig {
    struct fdp_table *table;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings ports[4];     /* Ring ports 1..3. */
};

static void
trig_flow(struct trig *t, const char *text)
{
    struct fdp_flow_spec spec;
    char *error = NULL;
    ck_assert_msg(!fdp_flow_parse(text, 0, &spec, &error), "%s: %s", text,
                  error);
    ck_assert_int_eq(fdp_table_insert(t->table, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);
}

static void
trig_port(struct trig *t, uint32_t port_no, const char *spec)
{
    char *error = NULL;
    ck_assert_msg(!fdp_dp_port_add(t->dp, port_no, spec, &error), "%s: %s",
                  spec, error);
}

static void
trig_neigh(struct trig *t, const char *ip, uint64_t mac)
{
    struct in6_addr a;
    uint8_t b[6];
    if (strchr(ip, ':')) {
        addr6(&a, ip);
    } else {
        addr4(&a, ip);
    }
    mac_bytes(mac, b);
    ck_assert_int_eq(fdp_dp_neigh_set(t->dp, 1, &a, b), 0);
}

/* Underlay port 1 (MAC LOCAL_MAC, addresses 10.0.0.1/24 and
 * 2001:db8::1/64, neighbours 10.0.0.2, 10.0.0.3 and 2001:db8::2 at
 * GW_MAC), plain ports 2 and 3, and the tunnels: 10 VXLAN to
 * 10.0.0.2 with VNI 5, 11 Geneve to 2001:db8::2, 12 GRE with key 77 to
 * 10.0.0.3, 13 VXLAN from anyone (remote_ip=flow) with VNI 9.  Flows:
 * 2 -> 10, 3 -> 11 (or 12 for UDP), tunnels -> 2 (13 -> 3), 1 -> 3. */
static void
trig_create(struct trig *t)
{
    memset(t, 0, sizeof *t);
    ck_assert_int_eq(fdp_table_create(&t->table), 0);
    ck_assert_int_eq(fdp_dp_create(t->table, NULL, &t->dp), 0);
    for (uint32_t p = 1; p <= 3; p++) {
        trig_port(t, p, "ring:size=256");
        ck_assert_int_eq(fdp_dp_port_rings(t->dp, p, &t->ports[p]), 0);
    }
    struct in6_addr a;
    uint8_t mac[6];
    mac_bytes(LOCAL_MAC, mac);
    ck_assert_int_eq(fdp_dp_port_set_mac(t->dp, 1, mac), 0);
    addr4(&a, "10.0.0.1");
    ck_assert_int_eq(fdp_dp_addr_add(t->dp, 1, &a, 24), 0);
    addr6(&a, "2001:db8::1");
    ck_assert_int_eq(fdp_dp_addr_add(t->dp, 1, &a, 64), 0);
    trig_neigh(t, "10.0.0.2", GW_MAC);
    trig_neigh(t, "10.0.0.3", GW_MAC);
    trig_neigh(t, "2001:db8::2", GW_MAC);
    trig_port(t, 10, "vxlan:remote_ip=10.0.0.2,key=5");
    trig_port(t, 11, "geneve:remote_ip=2001:db8::2,ttl=9,tos=inherit");
    trig_port(t, 12, "gre:remote_ip=10.0.0.3,key=77,csum=true");
    trig_port(t, 13, "vxlan:remote_ip=flow,key=9");
    trig_flow(t, "in_port=2,actions=output:10");
    trig_flow(t, "priority=5,in_port=3,actions=output:11");
    trig_flow(t, "priority=6,in_port=3,udp,actions=output:12");
    trig_flow(t, "in_port=10,actions=output:2");
    trig_flow(t, "in_port=11,actions=output:2");
    trig_flow(t, "in_port=12,actions=output:2");
    trig_flow(t, "in_port=13,actions=output:3");
    trig_flow(t, "in_port=1,actions=output:3");
    ck_assert_int_eq(fdp_dp_pmd_create(t->dp, 0, &t->pmd), 0);
}

static void
trig_destroy(struct trig *t)
{
    fdp_dp_pmd_destroy(t->pmd);
    fdp_dp_destroy(t->dp);
    fdp_table_destroy(t->table);
}

static struct fdp__tnl_stats
trig_stats(struct trig *t, uint32_t port_no)
{
    struct fdp__tnl_stats s;
    fdp__dp_lock(t->dp);
    ck_assert(fdp__tnl_port_stats(fdp__dp_port_locked(t->dp, port_no), &s));
    fdp__dp_unlock(t->dp);
    return s;
}

/* A plain UDP/IPv4 frame of 'n' bytes (at least 42) to 192.168.0.X. */
static void
plain_frame(uint8_t *p, size_t n, unsigned int x, unsigned int tos)
{
    memset(p, 0, n);
    static const uint8_t head[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0xbb, 0x00, 0x00, 0x00, 0x00, 0x00, 0xaa,
        0x08, 0x00, 0x45, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x11,
        0x00, 0x00, 192, 168, 0, 1, 192, 168, 0, 0, 0x30, 0x39, 0x00, 0x35,
    };
    memcpy(p, head, sizeof head);
    p[15] = (uint8_t) tos;
    p[16] = (uint8_t) ((n - 14) >> 8);
    p[17] = (uint8_t) (n - 14);
    p[33] = (uint8_t) x;
    p[38] = (uint8_t) ((n - 34) >> 8);
    p[39] = (uint8_t) (n - 34);
    uint16_t c = ref_csum(p + 14, 20, 0);
    p[24] = (uint8_t) (c >> 8);
    p[25] = (uint8_t) c;
}

/* Captures what one port sent. */
struct catch {
    uint32_t n;
    uint8_t pkt[8][BUF_SIZE];
    uint32_t len[8];
};

static void
catch_cb(void *aux, const uint8_t *pkt, uint32_t len)
{
    struct catch *c = aux;
    if (c->n < 8) {
        memcpy(c->pkt[c->n], pkt, len);
        c->len[c->n] = len;
    }
    c->n++;
}

static void
trig_run(struct trig *t, struct catch *out)
{
    for (int i = 0; i < 4; i++) {
        fdp_dp_pmd_poll(t->pmd, NULL);
    }
    for (uint32_t p = 1; p <= 3; p++) {
        test_peer_drain(&t->ports[p], catch_cb, &out[p]);
    }
}

/* An encapsulated frame for this datapath: 'inner' ('n' bytes) in 'kind'
 * from 'src' to 'dst' with key 'id'. */
static size_t
tunnel_frame_tos(uint8_t *dst_buf, enum fdp__tnl_kind kind, const char *src,
                 const char *dst, uint64_t id, const uint8_t *inner,
                 size_t n, uint8_t tos)
{
    static uint8_t buf[BUF_SIZE];
    struct fdp__tnl_md md = { .id = id, .ttl = 64, .tos = tos,
                              .flags = FDP__TNL_F_KEY };
    if (strchr(src, ':')) {
        addr6(&md.src, src);
        addr6(&md.dst, dst);
    } else {
        addr4(&md.src, src);
        addr4(&md.dst, dst);
    }
    struct fdp__tnl_build_params p = {
        .kind = kind, .md = &md,
        .dst_port = kind == FDP__TNL_VXLAN ? 4789 : 6081,
        .eth_src = GW_MAC, .eth_dst = LOCAL_MAC,
    };
    struct fdp__tnl_hdr h;
    ck_assert_int_eq(fdp__tnl_build(&p, &h), 0);
    memcpy(buf + HEADROOM, inner, n);
    uint8_t *start = fdp__tnl_push(&h, buf + HEADROOM, (uint32_t) n, 40000);
    memcpy(dst_buf, start, h.len + n);
    return h.len + n;
}

static size_t
tunnel_frame(uint8_t *dst_buf, enum fdp__tnl_kind kind, const char *src,
             const char *dst, uint64_t id, const uint8_t *inner, size_t n)
{
    return tunnel_frame_tos(dst_buf, kind, src, dst, id, inner, n, 0);
}

START_TEST(dp_encap)
{
    struct trig t;
    struct catch out[4] = { { 0 } };
    uint8_t inner[100], ip6[120];
    trig_create(&t);

    plain_frame(inner, sizeof inner, 7, 0xb9);
    ck_assert(test_peer_send(&t.ports[2], inner, sizeof inner));
    /* A non-UDP frame from port 3 goes to the Geneve tunnel over IPv6. */
    memcpy(ip6, inner, sizeof inner);
    ip6[23] = 6;                /* TCP: the priority-5 flow. */
    ck_assert(test_peer_send(&t.ports[3], ip6, sizeof inner));
    plain_frame(inner, sizeof inner, 8, 0);
    ck_assert(test_peer_send(&t.ports[3], inner, sizeof inner));
    trig_run(&t, out);

    ck_assert_uint_eq(out[1].n, 3);
    ck_assert_uint_eq(out[2].n + out[3].n, 0);
    struct fdp__tnl_md md;
    uint32_t ofs, size;
    enum fdp__tnl_drop why;
    struct in6_addr a;

    /* VXLAN: 10.0.0.1 -> 10.0.0.2, VNI 5, the inner as sent. */
    ck_assert(fdp__tnl_pop(out[1].pkt[0], out[1].len[0], 14, FDP__TNL_VXLAN,
                           false, NULL, &md, &ofs, &size, &why));
    addr4(&a, "10.0.0.1");
    ck_assert(!memcmp(&md.src, &a, sizeof a));
    addr4(&a, "10.0.0.2");
    ck_assert(!memcmp(&md.dst, &a, sizeof a));
    ck_assert_uint_eq(md.id, 5);
    ck_assert_uint_eq(md.ttl, 64);
    /* tos=0 by default; the inner ECN (01) is carried out. */
    ck_assert_uint_eq(md.tos, 0x01);
    ck_assert_uint_ge(md.tp_src, 32768);
    ck_assert_uint_eq(size, sizeof inner);
    plain_frame(inner, sizeof inner, 7, 0xb9);
    ck_assert(!memcmp(out[1].pkt[0] + ofs, inner, size));
    ck_assert_uint_eq(out[1].pkt[0][0], 0x02);  /* The gateway's MAC. */
    ck_assert_uint_eq(out[1].pkt[0][20] & 0x40, 0x40);  /* DF. */

    /* Geneve over IPv6, ttl 9, tos inherited (DSCP and ECN). */
    ck_assert(fdp__tnl_pop(out[1].pkt[1], out[1].len[1], 14, FDP__TNL_GENEVE,
                           false, NULL, &md, &ofs, &size, &why));
    addr6(&a, "2001:db8::2");
    ck_assert(!memcmp(&md.dst, &a, sizeof a));
    ck_assert_uint_eq(md.ttl, 9);
    ck_assert_uint_eq(md.tos, 0xb9);
    ck_assert_uint_eq(md.id, 0);
    ck_assert(md.flags & FDP__TNL_F_CSUM);      /* Mandatory over IPv6. */

    /* GRE with key 77 and a checksum. */
    ck_assert(fdp__tnl_pop(out[1].pkt[2], out[1].len[2], 14, FDP__TNL_GRE,
                           false, NULL, &md, &ofs, &size, &why));
    ck_assert_uint_eq(md.id, 77);
    ck_assert_uint_eq(md.flags, FDP__TNL_F_KEY | FDP__TNL_F_CSUM);
    ck_assert_uint_eq(trig_stats(&t, 10).n_encap, 1);
    ck_assert_uint_eq(trig_stats(&t, 11).n_encap, 1);
    ck_assert_uint_eq(trig_stats(&t, 12).n_encap, 1);

    /* The cached header follows the underlay: a neighbour's new MAC is
     * in the next packet's header. */
    trig_neigh(&t, "10.0.0.2", UINT64_C(0x020000000077));
    plain_frame(inner, sizeof inner, 7, 0xb9);
    ck_assert(test_peer_send(&t.ports[2], inner, sizeof inner));
    memset(out, 0, sizeof out);
    trig_run(&t, out);
    ck_assert_uint_eq(out[1].n, 1);
    ck_assert_uint_eq(out[1].pkt[0][5], 0x77);

    /* No neighbour: dropped and counted, and an ARP request goes out. */
    addr4(&a, "10.0.0.2");
    ck_assert_int_eq(fdp_dp_neigh_del(t.dp, 1, &a), 0);
    ck_assert(test_peer_send(&t.ports[2], inner, sizeof inner));
    memset(out, 0, sizeof out);
    trig_run(&t, out);
    ck_assert_uint_eq(out[1].n, 1);
    ck_assert_uint_eq(out[1].pkt[0][12], 0x08);
    ck_assert_uint_eq(out[1].pkt[0][13], 0x06);
    ck_assert_uint_eq(trig_stats(&t, 10).drops[FDP__TNL_DROP_NO_NEIGH], 1);

    /* No route: dropped and counted. */
    addr4(&a, "10.0.0.1");
    ck_assert_int_eq(fdp_dp_addr_del(t.dp, 1, &a, 24), 0);
    ck_assert(test_peer_send(&t.ports[2], inner, sizeof inner));
    memset(out, 0, sizeof out);
    trig_run(&t, out);
    ck_assert_uint_eq(out[1].n, 0);
    ck_assert_uint_eq(trig_stats(&t, 10).drops[FDP__TNL_DROP_NO_ROUTE], 1);
    trig_destroy(&t);
}
END_TEST

START_TEST(dp_decap)
{
    struct trig t;
    struct catch out[4] = { { 0 } };
    uint8_t inner[100], frame[BUF_SIZE];
    size_t n;
    trig_create(&t);

    /* One batch: VXLAN VNI 5 from 10.0.0.2 (port 10), an unknown VNI, a
     * VXLAN packet from another host with VNI 9 (port 13, flow-based), a
     * plain packet, UDP to 4789 for an address not ours (a plain packet
     * too), and Geneve over IPv6 (port 11). */
    plain_frame(inner, sizeof inner, 1, 0);
    n = tunnel_frame(frame, FDP__TNL_VXLAN, "10.0.0.2", "10.0.0.1", 5, inner,
                     sizeof inner);
    ck_assert(test_peer_send(&t.ports[1], frame, n));
    n = tunnel_frame(frame, FDP__TNL_VXLAN, "10.0.0.2", "10.0.0.1", 6, inner,
                     sizeof inner);
    ck_assert(test_peer_send(&t.ports[1], frame, n));
    plain_frame(inner, sizeof inner, 2, 0);
    n = tunnel_frame(frame, FDP__TNL_VXLAN, "10.9.9.9", "10.0.0.1", 9, inner,
                     sizeof inner);
    ck_assert(test_peer_send(&t.ports[1], frame, n));
    plain_frame(inner, sizeof inner, 3, 0);
    ck_assert(test_peer_send(&t.ports[1], inner, sizeof inner));
    n = tunnel_frame(frame, FDP__TNL_VXLAN, "10.0.0.2", "10.0.0.77", 5,
                     inner, sizeof inner);
    ck_assert(test_peer_send(&t.ports[1], frame, n));
    size_t not_ours = n;
    plain_frame(inner, sizeof inner, 4, 0);
    n = tunnel_frame(frame, FDP__TNL_GENEVE, "2001:db8::2", "2001:db8::1", 0,
                     inner, sizeof inner);
    ck_assert(test_peer_send(&t.ports[1], frame, n));
    trig_run(&t, out);

    /* Port 2: the inner packets of ports 10 and 11. */
    ck_assert_uint_eq(out[2].n, 2);
    plain_frame(inner, sizeof inner, 1, 0);
    ck_assert_uint_eq(out[2].len[0], sizeof inner);
    ck_assert(!memcmp(out[2].pkt[0], inner, sizeof inner));
    plain_frame(inner, sizeof inner, 4, 0);
    ck_assert(!memcmp(out[2].pkt[1], inner, sizeof inner));
    /* Port 3: port 13's inner packet, then the plain ones as they came. */
    ck_assert_uint_eq(out[3].n, 3);
    plain_frame(inner, sizeof inner, 2, 0);
    ck_assert(!memcmp(out[3].pkt[0], inner, sizeof inner));
    plain_frame(inner, sizeof inner, 3, 0);
    ck_assert(!memcmp(out[3].pkt[1], inner, sizeof inner));
    ck_assert_uint_eq(out[3].len[2], not_ours);

    ck_assert_uint_eq(trig_stats(&t, 10).n_decap, 1);
    ck_assert_uint_eq(trig_stats(&t, 11).n_decap, 1);
    ck_assert_uint_eq(trig_stats(&t, 13).n_decap, 1);
    /* The unknown VNI: counted on the endpoint's first port. */
    ck_assert_uint_eq(trig_stats(&t, 10).drops[FDP__TNL_DROP_NO_PORT], 1);
    struct fdp_port_stats ps;
    ck_assert_int_eq(fdp_dp_port_get_stats(t.dp, 10, &ps, NULL), 0);
    ck_assert_uint_eq(ps.rx_packets, 1);
    ck_assert_uint_eq(ps.rx_bytes, sizeof inner);

    /* A whole batch for one tunnel port (no copy), and a bad one. */
    memset(out, 0, sizeof out);
    plain_frame(inner, sizeof inner, 5, 0);
    n = tunnel_frame(frame, FDP__TNL_VXLAN, "10.0.0.2", "10.0.0.1", 5, inner,
                     sizeof inner);
    for (int i = 0; i < 3; i++) {
        ck_assert(test_peer_send(&t.ports[1], frame, n));
    }
    trig_run(&t, out);
    ck_assert_uint_eq(out[2].n, 3);
    frame[42] = 0x0c;
    ck_assert(test_peer_send(&t.ports[1], frame, n));
    memset(out, 0, sizeof out);
    trig_run(&t, out);
    ck_assert_uint_eq(out[2].n + out[3].n, 0);
    ck_assert_uint_eq(trig_stats(&t, 10).drops[FDP__TNL_DROP_BAD_HEADER], 1);

    /* Outer CE: an ECN-capable inner packet is marked CE (its checksum
     * kept right); one that is not is dropped. */
    memset(out, 0, sizeof out);
    plain_frame(inner, sizeof inner, 6, 0x02);
    n = tunnel_frame_tos(frame, FDP__TNL_VXLAN, "10.0.0.2", "10.0.0.1", 5,
                         inner, sizeof inner, 0x03);
    ck_assert(test_peer_send(&t.ports[1], frame, n));
    plain_frame(inner, sizeof inner, 6, 0x00);
    n = tunnel_frame_tos(frame, FDP__TNL_VXLAN, "10.0.0.2", "10.0.0.1", 5,
                         inner, sizeof inner, 0x03);
    ck_assert(test_peer_send(&t.ports[1], frame, n));
    trig_run(&t, out);
    ck_assert_uint_eq(out[2].n, 1);
    plain_frame(inner, sizeof inner, 6, 0x03);
    ck_assert(!memcmp(out[2].pkt[0], inner, sizeof inner));
    ck_assert_uint_eq(trig_stats(&t, 10).drops[FDP__TNL_DROP_ECN], 1);
    trig_destroy(&t);
}
END_TEST

START_TEST(dp_decap_fuzz)
{
    struct trig t;
    struct unit_rng rng;
    uint8_t inner[200], frame[BUF_SIZE];
    unit_rng_init(&rng, 3);
    trig_create(&t);

    for (int iter = 0; iter < 3000; iter++) {
        size_t in_n = 14 + unit_rng_below(&rng, sizeof inner - 14);
        for (size_t i = 0; i < in_n; i++) {
            inner[i] = (uint8_t) unit_rng_next(&rng);
        }
        bool v6 = unit_rng_below(&rng, 2);
        enum fdp__tnl_kind kind = unit_rng_below(&rng, 2) ? FDP__TNL_VXLAN
                                                          : FDP__TNL_GENEVE;
        size_t n = tunnel_frame(frame, kind, v6 ? "2001:db8::2" : "10.0.0.2",
                                v6 ? "2001:db8::1" : "10.0.0.1",
                                unit_rng_below(&rng, 2) ? 5 : 0, inner,
                                in_n);
        for (int c = (int) unit_rng_below(&rng, 4); c > 0; c--) {
            frame[unit_rng_below(&rng, (uint32_t) n)] =
                (uint8_t) unit_rng_next(&rng);
        }
        if (unit_rng_below(&rng, 2)) {
            n = 1 + unit_rng_below(&rng, (uint32_t) n);
        }
        ck_assert(test_peer_send(&t.ports[1], frame, n));
        if (iter % 16 == 15) {
            struct catch out[4] = { { 0 } };
            trig_run(&t, out);
        }
    }
    struct catch out[4] = { { 0 } };
    trig_run(&t, out);
    trig_destroy(&t);
}
END_TEST

/* The tunnel fields through a pipeline: flows match what decapsulation
 * filled (tun_id, tun_ipv6_src, a Geneve option through the TLV map) and
 * set what encapsulation reads (tun_dst, tun_id, tun_metadata0) for
 * flow-based ports. */
START_TEST(dp_tunnel_fields)
{
    struct fdp_pipeline *p;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_port_rings rings[3];
    char *error = NULL;
    struct in6_addr a;
    uint8_t mac[6];

    ck_assert_int_eq(fdp_pipeline_create(&p), 0);
    struct fdp_tlv_map *map = fdp_pipeline_tlv_map(p);
    ck_assert_msg(!fdp_tlv_map_add(map, "{class=0x102,type=0x80,len=4}"
                                   "->tun_metadata0", &error), "%s", error);
    fdp_tlv_map_use_for_text(map);
    static const char *const flows[] = {
        "in_port=11,tun_id=0x99,tun_ipv6_src=2001:db8::2,"
        "tun_metadata0=0xaabbccdd,actions=output:2,"
        "set_field:2001:db8::2->tun_ipv6_dst,output:12",
        "in_port=10,tun_id=0x77,tun_src=10.0.0.2,actions=output:2",
        "in_port=2,udp,actions=set_field:10.0.0.2->tun_dst,"
        "set_field:0x77->tun_id,output:10",
        "in_port=2,tcp,actions=set_field:2001:db8::2->tun_ipv6_dst,"
        "set_field:0x5->tun_id,output:11",
    };
    for (size_t i = 0; i < FDP_ARRAY_SIZE(flows); i++) {
        struct fdp_flow_spec spec;
        ck_assert_msg(!fdp_flow_parse(flows[i], 0, &spec, &error), "%s: %s",
                      flows[i], error);
        ck_assert_int_eq(fdp_pipeline_insert(p, &spec, 0), 0);
        fdp_flow_spec_destroy(&spec);
    }
    fdp_tlv_map_use_for_text(NULL);
    ck_assert_int_eq(fdp_dp_create_pipeline(p, NULL, &dp), 0);
    for (uint32_t i = 1; i <= 2; i++) {
        ck_assert_int_eq(fdp_dp_port_add(dp, i, "ring:size=256", &error), 0);
        ck_assert_int_eq(fdp_dp_port_rings(dp, i, &rings[i]), 0);
    }
    ck_assert_int_eq(fdp_dp_port_add(dp, 10, "vxlan:remote_ip=flow,"
                                     "key=flow", &error), 0);
    ck_assert_int_eq(fdp_dp_port_add(dp, 11, "geneve:remote_ip=flow,"
                                     "key=flow", &error), 0);
    ck_assert_int_eq(fdp_dp_port_add(dp, 12, "geneve:remote_ip=flow,"
                                     "key=flow,dst_port=6082", &error), 0);
    mac_bytes(LOCAL_MAC, mac);
    ck_assert_int_eq(fdp_dp_port_set_mac(dp, 1, mac), 0);
    addr4(&a, "10.0.0.1");
    ck_assert_int_eq(fdp_dp_addr_add(dp, 1, &a, 24), 0);
    addr6(&a, "2001:db8::1");
    ck_assert_int_eq(fdp_dp_addr_add(dp, 1, &a, 64), 0);
    mac_bytes(GW_MAC, mac);
    addr4(&a, "10.0.0.2");
    ck_assert_int_eq(fdp_dp_neigh_set(dp, 1, &a, mac), 0);
    addr6(&a, "2001:db8::2");
    ck_assert_int_eq(fdp_dp_neigh_set(dp, 1, &a, mac), 0);
    ck_assert_int_eq(fdp_dp_pmd_create(dp, 0, &pmd), 0);

    /* In: Geneve with the mapped option (and an unknown one, skipped),
     * the same with another value (no flow), VXLAN VNI 0x77. */
    uint8_t inner[100], frame[BUF_SIZE];
    static const struct fdp__tnl_tlv opts[] = {
        { .opt_class = 0x102, .type = 0x80, .len = 4, .ofs = 0 },
        { .opt_class = 0x999, .type = 0x01, .len = 4, .ofs = 4 },
    };
    struct fdp__tnl_tlv_map omap = { 2, opts };
    struct fdp__tnl_md md = {
        .id = 0x99, .ttl = 64, .present = 0x03, .flags = FDP__TNL_F_KEY,
        .space = { 0xaa, 0xbb, 0xcc, 0xdd, 1, 2, 3, 4 },
    };
    addr6(&md.src, "2001:db8::2");
    addr6(&md.dst, "2001:db8::1");
    struct fdp__tnl_build_params bp = {
        .kind = FDP__TNL_GENEVE, .md = &md, .dst_port = 6081,
        .eth_src = GW_MAC, .eth_dst = LOCAL_MAC, .map = &omap,
    };
    struct fdp__tnl_hdr h;
    static uint8_t buf[BUF_SIZE];
    plain_frame(inner, sizeof inner, 1, 0);
    for (int v = 0; v < 2; v++) {
        md.space[3] = v ? 0xde : 0xdd;
        ck_assert_int_eq(fdp__tnl_build(&bp, &h), 0);
        memcpy(buf + HEADROOM, inner, sizeof inner);
        uint8_t *start = fdp__tnl_push(&h, buf + HEADROOM, sizeof inner, 1);
        ck_assert(test_peer_send(&rings[1], start, h.len + sizeof inner));
    }
    size_t n = tunnel_frame(frame, FDP__TNL_VXLAN, "10.0.0.2", "10.0.0.1",
                            0x77, inner, sizeof inner);
    ck_assert(test_peer_send(&rings[1], frame, n));
    /* Out: UDP into VXLAN to 10.0.0.2, TCP into Geneve to 2001:db8::2. */
    ck_assert(test_peer_send(&rings[2], inner, sizeof inner));
    uint8_t tcp[100];
    memcpy(tcp, inner, sizeof tcp);
    tcp[23] = 6;
    ck_assert(test_peer_send(&rings[2], tcp, sizeof tcp));
    struct catch out[3] = { { 0 } };
    for (int i = 0; i < 4; i++) {
        fdp_dp_pmd_poll(pmd, NULL);
    }
    test_peer_drain(&rings[1], catch_cb, &out[1]);
    test_peer_drain(&rings[2], catch_cb, &out[2]);

    ck_assert_uint_eq(out[2].n, 2);     /* The Geneve match and VXLAN's. */
    ck_assert(!memcmp(out[2].pkt[0], inner, sizeof inner));
    ck_assert(!memcmp(out[2].pkt[1], inner, sizeof inner));
    ck_assert_uint_eq(out[1].n, 3);
    uint32_t ofs, size;
    enum fdp__tnl_drop why;
    struct fdp__tnl_md got;
    /* The Geneve packet again, out of port 12: its key's option (the
     * mapped one only) and VNI, to UDP port 6082. */
    ck_assert(fdp__tnl_pop(out[1].pkt[0], out[1].len[0], 14, FDP__TNL_GENEVE,
                           false, &omap, &got, &ofs, &size, &why));
    ck_assert_uint_eq(got.id, 0x99);
    ck_assert_uint_eq(got.tp_dst, 6082);
    ck_assert_uint_eq(got.present, 0x01);
    ck_assert(!memcmp(got.space, "\xaa\xbb\xcc\xdd", 4));
    ck_assert_uint_eq(out[1].pkt[0][14 + 40 + 8], 2);  /* opt_len: 8 bytes. */
    ck_assert_uint_eq(out[1].pkt[0][14 + 40 + 9], 0x40);   /* Critical. */
    ck_assert(fdp__tnl_pop(out[1].pkt[1], out[1].len[1], 14, FDP__TNL_VXLAN,
                           false, NULL, &got, &ofs, &size, &why));
    ck_assert_uint_eq(got.id, 0x77);
    addr4(&a, "10.0.0.2");
    ck_assert(!memcmp(&got.dst, &a, sizeof a));
    ck_assert(fdp__tnl_pop(out[1].pkt[2], out[1].len[2], 14, FDP__TNL_GENEVE,
                           false, &omap, &got, &ofs, &size, &why));
    ck_assert_uint_eq(got.id, 5);
    addr6(&a, "2001:db8::2");
    ck_assert(!memcmp(&got.dst, &a, sizeof a));
    ck_assert_uint_eq(got.present, 0);
    ck_assert_uint_eq(size, sizeof tcp);

    fdp_dp_pmd_destroy(pmd);
    fdp_dp_destroy(dp);
    fdp_pipeline_destroy(p);
}
END_TEST

START_TEST(md_key_round_trip)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 4);
    for (int iter = 0; iter < 10000; iter++) {
        struct fdp__tnl_md md, back;
        struct fdp_key key;
        memset(&key, 0, sizeof key);
        random_md(&rng, FDP__TNL_GENEVE, unit_rng_below(&rng, 2), &md);
        md.flags &= FDP__TNL_F_OAM;     /* The only flag the key has. */
        md.gbp_id = (uint16_t) unit_rng_next(&rng);
        md.gbp_flags = (uint8_t) unit_rng_next(&rng);
        fdp__tnl_md_to_key(&md, &key);
        fdp__tnl_md_from_key(&key, &back);
        ck_assert(!memcmp(&md, &back, sizeof md));
        /* The fields read back from the key are the same values. */
        ck_assert_uint_eq(fdp__key_get(&key, FDP_F_TUN_ID), md.id);
        ck_assert_uint_eq(fdp__key_get(&key, FDP_F_TUN_TTL), md.ttl);
        ck_assert_uint_eq(fdp__key_get(&key, FDP_F_TUN_TOS), md.tos);
        ck_assert_uint_eq(fdp__key_get(&key, FDP_F_TUN_GBP_ID), md.gbp_id);
        if (fdp__tnl_addr_is_ipv4(&md.dst)) {
            ck_assert_uint_eq(fdp__key_get(&key, FDP_F_TUN_DST),
                              fdp__tnl_addr_ipv4(&md.dst));
        }
    }
}
END_TEST

START_TEST(port_options)
{
    static const struct {
        const char *spec;
        const char *error;      /* NULL: accepted. */
    } cases[] = {
        { "vxlan:remote_ip=10.0.0.2", NULL },
        { "vxlan:remote_ip=flow,key=flow,local_ip=flow", NULL },
        { "geneve:remote_ip=2001:db8::9,local_ip=2001:db8::1", NULL },
        { "gre:remote_ip=10.0.0.2,in_key=1,out_key=flow,csum=true", NULL },
        { "vxlan:remote_ip=10.0.0.2,exts=gbp,dst_port=4790,tos=inherit,"
          "ttl=inherit,df_default=false", NULL },
        { "vxlan", "remote_ip=IP or remote_ip=flow is required" },
        { "vxlan:key=1", "remote_ip=IP or remote_ip=flow is required" },
        { "vxlan:remote_ip=224.0.0.1", "multicast" },
        { "vxlan:remote_ip=0.0.0.0", "not a host address" },
        { "vxlan:remote_ip=10.0.0.300", "not an IP address" },
        { "vxlan:remote_ip=10.0.0.2,local_ip=flow", "needs remote_ip=flow" },
        { "vxlan:remote_ip=10.0.0.2,local_ip=2001:db8::1", "same address" },
        { "vxlan:remote_ip=10.0.0.2,key=16777216", "0 to 16777215" },
        { "gre:remote_ip=10.0.0.2,key=4294967296", "0 to 4294967295" },
        { "gre:remote_ip=10.0.0.2,dst_port=1", "GRE has no UDP port" },
        { "geneve:remote_ip=10.0.0.2,exts=gbp", "VXLAN's only" },
        { "vxlan:remote_ip=10.0.0.2,exts=gpe", "the only extension" },
        { "vxlan:remote_ip=10.0.0.2,tos=3", "ECN" },
        { "vxlan:remote_ip=10.0.0.2,ttl=0", "1 to 255" },
        { "vxlan:remote_ip=10.0.0.2,csum=yes", "true or false" },
        { "vxlan:remote_ip=10.0.0.2,dst_port=0", "1 to 65535" },
        { "vxlan:remote_ip=10.0.0.2,bogus=1", "unknown option" },
    };
    struct fdp_table *table;
    struct fdp_dp *dp;
    ck_assert_int_eq(fdp_table_create(&table), 0);
    ck_assert_int_eq(fdp_dp_create(table, NULL, &dp), 0);
    for (size_t i = 0; i < FDP_ARRAY_SIZE(cases); i++) {
        char *error = NULL;
        int r = fdp_dp_port_add(dp, (uint32_t) (100 + i), cases[i].spec,
                                &error);
        if (!cases[i].error) {
            ck_assert_msg(!r, "%s: %s", cases[i].spec, error);
        } else {
            ck_assert_msg(r == EINVAL && error
                          && strstr(error, cases[i].error),
                          "%s: got %d \"%s\"", cases[i].spec, r,
                          error ? error : "");
        }
        free(error);
    }
    /* Endpoints: one kind per UDP port, GBP or not, at most eight. */
    char *error = NULL;
    ck_assert_int_eq(fdp_dp_port_add(dp, 200, "geneve:remote_ip=10.0.0.9,"
                                     "dst_port=4789", &error), EEXIST);
    ck_assert_str_eq(error, "port 200: UDP port 4789 is vxlan's already");
    free(error);
    error = NULL;
    ck_assert_int_eq(fdp_dp_port_add(dp, 200, "vxlan:remote_ip=10.0.0.9,"
                                     "exts=gbp", &error), EEXIST);
    ck_assert_ptr_nonnull(strstr(error, "with and without exts=gbp"));
    free(error);
    int r = 0;
    for (uint32_t p = 0; p < 8 && !r; p++) {
        char spec[64];
        error = NULL;
        snprintf(spec, sizeof spec, "vxlan:remote_ip=10.0.0.9,dst_port=%u",
                 5000 + p);
        r = fdp_dp_port_add(dp, 300 + p, spec, &error);
    }
    /* 4789 (VXLAN) and 6081 (Geneve) and GRE were three already. */
    ck_assert_int_eq(r, ENOSPC);
    ck_assert_ptr_nonnull(strstr(error, "than the 8 a datapath has"));
    free(error);

    char buf[512];
    ck_assert_int_eq(fdp_dp_port_describe(dp, 101, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "vxlan {key=flow, local_ip=flow, remote_ip=flow}; "
                          "encap 0, decap 0");
    ck_assert_int_eq(fdp_dp_port_describe(dp, 103, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "gre {csum=\"true\", in_key=\"1\", out_key=flow, "
                          "remote_ip=\"10.0.0.2\"}; encap 0, decap 0");
    ck_assert_int_eq(fdp_dp_port_describe(dp, 104, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "vxlan {df_default=\"false\", dst_port=\"4790\", "
                          "exts=\"gbp\", remote_ip=\"10.0.0.2\", "
                          "tos=inherit, ttl=inherit}; encap 0, decap 0");
    fdp_dp_destroy(dp);
    fdp_table_destroy(table);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("tunnel");
    TCase *tc = unit_tcase(s, "headers");

    tcase_add_test(tc, vxlan_ipv4_exact);
    tcase_add_test(tc, vxlan_gbp_exact);
    tcase_add_test(tc, geneve_ipv6_exact);
    tcase_add_test(tc, gre_ipv4_exact);
    tcase_add_test(tc, src_port_range);
    tcase_add_test(tc, family_mismatch);
    tcase_add_test(tc, round_trips);
    tcase_add_test(tc, malformed);
    tcase_add_test(tc, drop_names);
    tcase_add_test(tc, fuzz_pop);
    tc = unit_tcase(s, "datapath");
    tcase_add_test(tc, dp_encap);
    tcase_add_test(tc, dp_decap);
    tcase_add_test(tc, dp_decap_fuzz);
    tcase_add_test(tc, port_options);
    tcase_add_test(tc, dp_tunnel_fields);
    tcase_add_test(tc, md_key_round_trip);
    return unit_run(s);
}
