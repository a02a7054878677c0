/*
 * Unit tests for datapath/extract.c: hand-built packets of every kind,
 * each parsed whole and cut at every length (run under ASan, a read past
 * the end is caught), against expected keys written in the flow syntax.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "flowdp/datapath.h"
#include "flowdp/flow.h"
#include "lib/field.h"
#include "lib/util.h"
#include "unit.h"

struct pkt {
    uint8_t b[256];
    size_t n;
};

static void
put(struct pkt *p, const void *data, size_t n)
{
    memcpy(p->b + p->n, data, n);
    p->n += n;
}

static void
put8(struct pkt *p, uint8_t v)
{
    put(p, &v, 1);
}

static void
put16(struct pkt *p, uint16_t v)
{
    put8(p, (uint8_t) (v >> 8));
    put8(p, (uint8_t) v);
}

static void
put32(struct pkt *p, uint32_t v)
{
    put16(p, (uint16_t) (v >> 16));
    put16(p, (uint16_t) v);
}

static void
eth(struct pkt *p, uint16_t type)
{
    static const uint8_t dst[6] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 };
    static const uint8_t src[6] = { 0x00, 0xaa, 0xbb, 0xcc, 0xdd, 0xee };

    put(p, dst, 6);
    put(p, src, 6);
    put16(p, type);
}

static void
vlan(struct pkt *p, uint16_t tci, uint16_t type)
{
    put16(p, tci);
    put16(p, type);
}

/* An IPv4 header with 'opt_words' words of options (NOPs). */
static void
ipv4(struct pkt *p, uint8_t proto, uint16_t frag, size_t payload,
     int opt_words)
{
    size_t ihl = 5 + (size_t) opt_words;

    put8(p, (uint8_t) (0x40 | ihl));
    put8(p, 0x41);                          /* DSCP 16, ECN 1. */
    put16(p, (uint16_t) (ihl * 4 + payload));
    put16(p, 0x1234);
    put16(p, frag);
    put8(p, 64);
    put8(p, proto);
    put16(p, 0);
    put32(p, 0x0a000001);
    put32(p, 0x0a000002);
    for (int i = 0; i < opt_words; i++) {
        put32(p, 0x01010101);
    }
}

static void
ipv6(struct pkt *p, uint8_t next, uint16_t payload)
{
    put32(p, 0x6 << 28 | 0x41 << 20 | 0x12345);
    put16(p, payload);
    put8(p, next);
    put8(p, 255);
    static const uint8_t src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
    static const uint8_t dst[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
    put(p, src, 16);
    put(p, dst, 16);
}

static void
tcp(struct pkt *p)
{
    put16(p, 1234);
    put16(p, 80);
    put32(p, 1);
    put32(p, 0);
    put16(p, 0x5012);       /* Data offset 5; SYN|ACK. */
    put16(p, 1000);
    put16(p, 0);
    put16(p, 0);
}

static void
udp(struct pkt *p)
{
    put16(p, 53);
    put16(p, 5353);
    put16(p, 8);
    put16(p, 0);
}

static void
ext(struct pkt *p, uint8_t next, uint8_t len8)
{
    put8(p, next);
    put8(p, len8);
    for (int i = 0; i < 6 + 8 * len8; i++) {
        put8(p, 0);
    }
}

#define ETH_FIELDS "in_port=7,dl_dst=00:11:22:33:44:55,dl_src=00:aa:bb:cc:dd:ee"
#define IP4 "nw_src=10.0.0.1,nw_dst=10.0.0.2,nw_tos=64,nw_ecn=1,nw_ttl=64"
#define IP6 "ipv6_src=2001:db8::1,ipv6_dst=2001:db8::2,ipv6_label=0x12345," \
            "nw_tos=64,nw_ecn=1,nw_ttl=255"

struct packet_case {
    const char *name;
    void (*build)(struct pkt *);
    const char *expected;
};

static void
b_tcp4(struct pkt *p)
{
    eth(p, 0x0800);
    ipv4(p, 6, 0, 20, 0);
    tcp(p);
}

static void
b_vlan_udp4(struct pkt *p)
{
    eth(p, 0x8100);
    vlan(p, 0x6005, 0x0800);
    ipv4(p, 17, 0, 8, 0);
    udp(p);
}

static void
b_qinq_icmp(struct pkt *p)
{
    eth(p, 0x88a8);
    vlan(p, 0x0064, 0x8100);
    vlan(p, 0x00c8, 0x0800);
    ipv4(p, 1, 0, 8, 0);
    put8(p, 8);
    put8(p, 0);
    put16(p, 0);
    put32(p, 0);
}

static void
b_options_sctp(struct pkt *p)
{
    eth(p, 0x0800);
    ipv4(p, 132, 0, 12, 3);
    put16(p, 2905);
    put16(p, 2906);
    put32(p, 0);
    put32(p, 0);
}

static void
b_frag_first(struct pkt *p)
{
    eth(p, 0x0800);
    ipv4(p, 17, 0x2000, 8, 0);
    udp(p);
}

static void
b_frag_later(struct pkt *p)
{
    eth(p, 0x0800);
    ipv4(p, 17, 0x0010, 8, 0);
    udp(p);
}

static void
b_tcp6(struct pkt *p)
{
    eth(p, 0x86dd);
    ipv6(p, 6, 20);
    tcp(p);
}

static void
b_ext6_udp(struct pkt *p)
{
    eth(p, 0x86dd);
    ipv6(p, 0, 8 + 16 + 8 + 8);
    ext(p, 43, 0);          /* Hop-by-hop -> routing. */
    ext(p, 60, 1);          /* Routing (16 bytes) -> destination options. */
    ext(p, 17, 0);          /* Destination options -> UDP. */
    udp(p);
}

static void
b_frag6_icmp(struct pkt *p)
{
    eth(p, 0x86dd);
    ipv6(p, 44, 16);
    put8(p, 58);
    put8(p, 0);
    put16(p, 0x0001);       /* Offset 0, M. */
    put32(p, 42);
    put8(p, 135);
    put8(p, 0);
    put16(p, 0);
    put32(p, 0);
}

static void
b_frag6_later(struct pkt *p)
{
    eth(p, 0x86dd);
    ipv6(p, 44, 16);
    put8(p, 17);
    put8(p, 0);
    put16(p, 0x0100);       /* Offset 32 bytes. */
    put32(p, 42);
    udp(p);
}

static void
b_arp(struct pkt *p)
{
    static const uint8_t sha[6] = { 0x00, 0xaa, 0xbb, 0xcc, 0xdd, 0xee };
    static const uint8_t tha[6] = { 0 };

    eth(p, 0x0806);
    put16(p, 1);
    put16(p, 0x0800);
    put8(p, 6);
    put8(p, 4);
    put16(p, 1);
    put(p, sha, 6);
    put32(p, 0x0a000001);
    put(p, tha, 6);
    put32(p, 0x0a000002);
}

static void
b_llc(struct pkt *p)
{
    eth(p, 46);
    put8(p, 0x42);
    put8(p, 0x42);
    put8(p, 0x03);
    for (int i = 0; i < 43; i++) {
        put8(p, 0);
    }
}

static void
b_snap_ip(struct pkt *p)
{
    static const uint8_t snap[6] = { 0xaa, 0xaa, 0x03, 0, 0, 0 };

    eth(p, 48);
    put(p, snap, 6);
    put16(p, 0x0800);
    ipv4(p, 17, 0, 8, 0);
    udp(p);
}

static void
b_lldp(struct pkt *p)
{
    eth(p, 0x88cc);
    put32(p, 0x02070400);
}

static const struct packet_case cases[] = {
    { "tcp4", b_tcp4, ETH_FIELDS ",tcp," IP4 ",tp_src=1234,tp_dst=80,"
      "tcp_flags=0x12" },
    { "vlan-udp4", b_vlan_udp4, ETH_FIELDS ",dl_vlan=5,dl_vlan_pcp=3,udp,"
      IP4 ",tp_src=53,tp_dst=5353" },
    { "qinq-icmp", b_qinq_icmp, ETH_FIELDS ",dl_vlan=100,dl_vlan_pcp=0,"
      "icmp," IP4 ",icmp_type=8,icmp_code=0" },
    { "ipv4-options-sctp", b_options_sctp, ETH_FIELDS ",sctp," IP4
      ",tp_src=2905,tp_dst=2906" },
    { "frag-first", b_frag_first, ETH_FIELDS ",udp," IP4 ",ip_frag=first,"
      "tp_src=53,tp_dst=5353" },
    { "frag-later", b_frag_later, ETH_FIELDS ",udp," IP4 ",ip_frag=later" },
    { "tcp6", b_tcp6, ETH_FIELDS ",tcp6," IP6 ",tp_src=1234,tp_dst=80,"
      "tcp_flags=0x12" },
    { "ipv6-ext-udp", b_ext6_udp, ETH_FIELDS ",udp6," IP6
      ",tp_src=53,tp_dst=5353" },
    { "ipv6-frag-icmp6", b_frag6_icmp, ETH_FIELDS ",icmp6," IP6
      ",ip_frag=first,icmp_type=135,icmp_code=0" },
    /* As OVS: a later fragment's nw_proto is the fragment header's. */
    { "ipv6-frag-later", b_frag6_later, ETH_FIELDS ",ipv6,nw_proto=44," IP6
      ",ip_frag=later" },
    { "arp", b_arp, ETH_FIELDS ",arp,arp_op=1,arp_spa=10.0.0.1,"
      "arp_tpa=10.0.0.2,arp_sha=00:aa:bb:cc:dd:ee,"
      "arp_tha=00:00:00:00:00:00" },
    { "llc", b_llc, ETH_FIELDS ",dl_type=0x05ff" },
    { "snap-udp4", b_snap_ip, ETH_FIELDS ",udp," IP4
      ",tp_src=53,tp_dst=5353" },
    { "lldp", b_lldp, ETH_FIELDS ",dl_type=0x88cc" },
};

START_TEST(every_kind_whole_and_truncated)
{
    const struct packet_case *pc = &cases[_i];
    struct pkt p = { .n = 0 };
    struct fdp_key want, full, got;
    char *error = NULL;

    pc->build(&p);
    ck_assert_msg(!fdp_packet_parse(pc->expected, &want, &error), "%s: %s",
                  pc->name, error);
    fdp_packet_extract(p.b, p.n, 7, &full, NULL);
    for (int w = 0; w < FDP_KEY_WORDS; w++) {
        ck_assert_msg(full.w[w] == want.w[w], "%s: word %d is %#llx, "
                      "expected %#llx", pc->name, w,
                      (unsigned long long) full.w[w],
                      (unsigned long long) want.w[w]);
    }

    /* Every truncation: an exact-size heap copy, so ASan sees any read
     * past the end; each field either keeps its value or is zero. */
    for (size_t len = 0; len <= p.n; len++) {
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, p.b, len);
        fdp_packet_extract(copy, len, 7, &got, NULL);
        free(copy);
        for (int f = 0; f < FDP_N_FIELDS; f++) {
            fdp_u128 v = fdp__key_get(&got, f);
            /* A frame cut before its LLC/SNAP header is plain 802.3; one
             * cut inside a VLAN tag has the tag's TPID as its type. */
            if (f == FDP_F_DL_TYPE
                && (v == 0x05ff || v == 0x8100 || v == 0x88a8)) {
                continue;
            }
            ck_assert_msg(v == 0 || v == fdp__key_get(&full, f),
                          "%s cut at %zu: %s changed", pc->name, len,
                          fdp_field_name(f));
        }
        ck_assert_uint_eq(fdp__key_get(&got, FDP_F_IN_PORT), 7);
    }
}
END_TEST

/* Headers that lie about their length stop parsing, never overrun. */
START_TEST(lying_lengths)
{
    struct pkt p = { .n = 0 };
    struct fdp_key key;
    struct fdp_packet_layout layout;

    /* IPv4 total length beyond the packet. */
    eth(&p, 0x0800);
    ipv4(&p, 6, 0, 2000, 0);
    tcp(&p);
    fdp_packet_extract(p.b, p.n, 1, &key, &layout);
    ck_assert_int_eq(layout.l3, -1);
    ck_assert(fdp__key_get(&key, FDP_F_NW_SRC) == 0);
    ck_assert(fdp__key_get(&key, FDP_F_DL_TYPE) == 0x0800);

    /* IHL of 15 words on a 20-byte header. */
    p.n = 0;
    eth(&p, 0x0800);
    ipv4(&p, 6, 0, 0, 0);
    p.b[14] = 0x4f;
    fdp_packet_extract(p.b, p.n, 1, &key, &layout);
    ck_assert_int_eq(layout.l3, -1);

    /* An IPv6 extension header claiming 2 KiB. */
    p.n = 0;
    eth(&p, 0x86dd);
    ipv6(&p, 0, 8);
    put8(&p, 17);
    put8(&p, 255);
    put16(&p, 0);
    put32(&p, 0);
    fdp_packet_extract(p.b, p.n, 1, &key, &layout);
    ck_assert_int_eq(layout.l4, -1);
    ck_assert(fdp__key_get(&key, FDP_F_NW_PROTO) == 0);

    /* TCP data offset below 5. */
    p.n = 0;
    b_tcp4(&p);
    p.b[14 + 20 + 12] = 0x40;
    fdp_packet_extract(p.b, p.n, 1, &key, &layout);
    ck_assert(fdp__key_get(&key, FDP_F_TP_DST) == 0);
    ck_assert(fdp__key_get(&key, FDP_F_NW_PROTO) == 6);

    /* The layout of a good packet. */
    p.n = 0;
    b_vlan_udp4(&p);
    fdp_packet_extract(p.b, p.n, 1, &key, &layout);
    ck_assert_int_eq(layout.l2, 0);
    ck_assert_int_eq(layout.l2_5, 12);
    ck_assert_int_eq(layout.l3, 18);
    ck_assert_int_eq(layout.l4, 38);
}
END_TEST

/* Random bytes: no crash, no read past the end (ASan). */
START_TEST(random_bytes)
{
    struct unit_rng rng;
    uint8_t buf[200];
    struct fdp_key key;

    unit_rng_init(&rng, 80);
    for (int i = 0; i < 200000; i++) {
        size_t len = unit_rng_below(&rng, sizeof buf);
        for (size_t j = 0; j < len; j++) {
            buf[j] = (uint8_t) unit_rng_next(&rng);
        }
        /* Often a plausible Ethernet type, so deeper layers get tried. */
        static const uint16_t types[] = { 0x0800, 0x86dd, 0x0806, 0x8100,
                                          0x88a8 };
        if (len >= 14 && unit_rng_below(&rng, 4)) {
            uint16_t t = types[unit_rng_below(&rng, 5)];
            buf[12] = (uint8_t) (t >> 8);
            buf[13] = (uint8_t) t;
            if (len >= 15 && t == 0x0800) {
                buf[14] = (uint8_t) (0x45 + unit_rng_below(&rng, 3));
            }
        }
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, buf, len);
        fdp_packet_extract(copy, len, 1, &key, NULL);
        free(copy);
    }
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("extract");
    TCase *tc = unit_tcase(s, "extract");

    tcase_add_loop_test(tc, every_kind_whole_and_truncated, 0,
                        (int) FDP_ARRAY_SIZE(cases));
    tcase_add_test(tc, lying_lengths);
    tcase_add_test(tc, random_bytes);
    return unit_run(s);
}
