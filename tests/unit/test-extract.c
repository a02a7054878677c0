/*
 * Unit tests for datapath/extract.c.
 *
 * - Hand-built packets of every kind, each parsed whole and cut at every
 *   length (under ASan a read past the end is caught), against expected
 *   keys written in the flow syntax; odd packets on which flowdp once
 *   disagreed with Open vSwitch's flow_extract().
 * - A reference parser written here byte by byte, in the plainest way,
 *   from Open vSwitch's flow_extract() (lib/flow.c, 3.1), compared with
 *   fdp_packet_extract() and fdp__packet_extract_hash() (key, layout, and
 *   the hash against fdp_hash_fast() of the key) on random packets and
 *   their mutations (random cuts, random bytes in the headers, random
 *   IPv6 extension-header chains) from the printed seed
 *   ($FLOWDP_TEST_SEED replays one).  Both entry points run at the CPU
 *   level FLOWDP_CPU selects; scripts/test.sh runs the unit tests at each.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/extract-internal.h"
#include <flowdp/cpu.h>
#include <flowdp/datapath.h>
#include <flowdp/flow.h>
#include <flowdp/hash.h>
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

/* ---------------------------------------------------------------------- */
/* The reference parser.                                                   */

/* A packet read one byte at a time: byte(i) is -1 past the end. */
struct bytes {
    const uint8_t *p;
    size_t n;
};

static int
byte(const struct bytes *b, size_t i)
{
    return i < b->n ? b->p[i] : -1;
}

/* The big-endian number of 'len' bytes at 'i', or -1 if any is missing. */
static int64_t
number(const struct bytes *b, size_t i, size_t len)
{
    int64_t v = 0;

    for (size_t k = 0; k < len; k++) {
        int c = byte(b, i + k);
        if (c < 0) {
            return -1;
        }
        v = v << 8 | c;
    }
    return v;
}

/* What the reference finds: each field as a number. */
struct ref {
    uint64_t f[FDP_N_FIELDS];
    fdp_u128 ipv6_src, ipv6_dst, nd_target;
    struct fdp_packet_layout layout;
};

/* An IPv6 neighbour solicitation or advertisement from 'at' to 'end'
 * (at least its 8-byte ICMPv6 header), as RFC 4861 lays it out and Open
 * vSwitch's parse_icmpv6() reads it: flags, target, then 8-byte-unit
 * options, of which a link-layer address option (type 1 source, 2 target)
 * of one unit counts once: a second one of a kind whose address is not
 * zero invalidates target and addresses. */
static void
ref_nd(const struct bytes *b, size_t at, size_t end, struct ref *r)
{
    r->f[FDP_F_ND_RESERVED] = (uint64_t) number(b, at + 4, 4);
    if (end - at < 24) {
        return;
    }
    fdp_u128 target = 0;
    for (int i = 0; i < 16; i++) {
        target = target << 8 | (fdp_u128) byte(b, at + 8 + i);
    }
    uint64_t addr[3] = { 0, 0, 0 };     /* By option type: 1 and 2. */
    int first = 0;
    size_t pos = at + 24;
    while (end - pos >= 8) {
        int type = byte(b, pos);
        size_t len = (size_t) byte(b, pos + 1) * 8;
        if (len == 0 || len > end - pos) {
            break;
        }
        if ((type == 1 || type == 2) && len == 8) {
            if (addr[type]) {
                target = 0;
                addr[1] = addr[2] = 0;
                break;
            }
            addr[type] = (uint64_t) number(b, pos + 2, 6);
            first = first ? first : type;
        }
        pos += len;
    }
    r->nd_target = target;
    r->f[FDP_F_ND_SLL] = addr[1];
    r->f[FDP_F_ND_TLL] = addr[2];
    r->f[FDP_F_ND_OPTIONS_TYPE] = (uint64_t) first;
}

static void
ref_transport(const struct bytes *b, size_t at, size_t end, int proto,
              bool ipv6, struct ref *r)
{
    size_t have = end - at;     /* Bytes inside the IP length. */

    r->layout.l4 = (int32_t) at;
    if (proto == 6) {
        if (have >= 20 && (size_t) (byte(b, at + 12) >> 4) * 4 >= 20
            && (size_t) (byte(b, at + 12) >> 4) * 4 <= have) {
            r->f[FDP_F_TP_SRC] = (uint64_t) number(b, at, 2);
            r->f[FDP_F_TP_DST] = (uint64_t) number(b, at + 2, 2);
            r->f[FDP_F_TCP_FLAGS] = (uint64_t) number(b, at + 12, 2) & 0xfff;
        } else {
            r->layout.l4 = -1;
        }
    } else if (proto == 17 || proto == 132) {
        if (have >= (proto == 17 ? 8u : 12u)) {
            r->f[FDP_F_TP_SRC] = (uint64_t) number(b, at, 2);
            r->f[FDP_F_TP_DST] = (uint64_t) number(b, at + 2, 2);
        } else {
            r->layout.l4 = -1;
        }
    } else if (proto == 1 || proto == 58 || proto == 2) {
        if (have >= 8) {
            r->f[FDP_F_ICMP_TYPE] = (uint64_t) byte(b, at);
            r->f[FDP_F_ICMP_CODE] = (uint64_t) byte(b, at + 1);
            if (ipv6 && proto == 58 && byte(b, at + 1) == 0
                && (byte(b, at) == 135 || byte(b, at) == 136)) {
                ref_nd(b, at, end, r);
            }
        } else {
            r->layout.l4 = -1;
        }
    }
}

static void
ref_ipv4(const struct bytes *b, size_t at, struct ref *r)
{
    size_t n = b->n - at;

    if (n < 20) {
        return;
    }
    size_t ihl = (size_t) (byte(b, at) & 15) * 4;
    size_t total = (size_t) number(b, at + 2, 2);
    if (ihl < 20 || ihl > n || total > n || ihl > total
        || n - total > 65535) {
        return;
    }
    r->layout.l3 = (int32_t) at;
    r->f[FDP_F_NW_SRC] = (uint64_t) number(b, at + 12, 4);
    r->f[FDP_F_NW_DST] = (uint64_t) number(b, at + 16, 4);
    r->f[FDP_F_NW_TOS] = (uint64_t) byte(b, at + 1) >> 2;
    r->f[FDP_F_NW_ECN] = (uint64_t) byte(b, at + 1) & 3;
    r->f[FDP_F_NW_TTL] = (uint64_t) byte(b, at + 8);
    r->f[FDP_F_NW_PROTO] = (uint64_t) byte(b, at + 9);
    int64_t frag = number(b, at + 6, 2);
    bool more = frag & 0x2000, offset = frag & 0x1fff;
    r->f[FDP_F_IP_FRAG] = (more || offset ? FDP_FRAG_ANY : 0)
                          | (offset ? FDP_FRAG_LATER : 0);
    if (!offset) {
        ref_transport(b, at + ihl, at + total, byte(b, at + 9), false, r);
    }
}

static void
ref_ipv6(const struct bytes *b, size_t at, struct ref *r)
{
    size_t n = b->n - at;

    if (n < 40) {
        return;
    }
    size_t plen = (size_t) number(b, at + 4, 2);
    if (plen + 40 > n || n - (plen + 40) > 65535) {
        return;
    }
    r->layout.l3 = (int32_t) at;
    for (int i = 0; i < 16; i++) {
        r->ipv6_src = r->ipv6_src << 8 | (fdp_u128) byte(b, at + 8 + i);
        r->ipv6_dst = r->ipv6_dst << 8 | (fdp_u128) byte(b, at + 24 + i);
    }

    size_t end = at + 40 + plen;
    size_t pos = at + 40;
    int next = byte(b, at + 6);
    int frag = 0;
    bool later = false;
    while (!later && (next == 0 || next == 43 || next == 60 || next == 51
                      || next == 44)) {
        if (end - pos < 8) {
            return;             /* Only the addresses, as OVS. */
        }
        size_t len = next == 51 ? ((size_t) byte(b, pos + 1) + 2) * 4
                     : next == 44 ? 8
                     : ((size_t) byte(b, pos + 1) + 1) * 8;
        if (len > end - pos) {
            return;
        }
        if (next == 44 && number(b, pos + 2, 2) != 0) {
            frag = FDP_FRAG_ANY;
            if (number(b, pos + 2, 2) & 0xfff8) {
                frag |= FDP_FRAG_LATER;
                later = true;
            }
        }
        next = later ? 44 : byte(b, pos);
        pos += len;
    }
    int64_t vtcfl = number(b, at, 4);
    r->f[FDP_F_IPV6_LABEL] = (uint64_t) vtcfl & 0xfffff;
    r->f[FDP_F_NW_TOS] = ((uint64_t) vtcfl >> 22) & 0x3f;
    r->f[FDP_F_NW_ECN] = ((uint64_t) vtcfl >> 20) & 3;
    r->f[FDP_F_NW_TTL] = (uint64_t) byte(b, at + 7);
    r->f[FDP_F_NW_PROTO] = (uint64_t) next;
    r->f[FDP_F_IP_FRAG] = (uint64_t) frag;
    if (!later) {
        ref_transport(b, pos, end, next, true, r);
    }
}

static void
ref_arp(const struct bytes *b, size_t at, struct ref *r)
{
    if (b->n - at < 28 || number(b, at, 2) != 1
        || number(b, at + 2, 2) != 0x0800 || byte(b, at + 4) != 6
        || byte(b, at + 5) != 4) {
        return;
    }
    r->layout.l3 = (int32_t) at;
    if (number(b, at + 6, 2) <= 255) {
        r->f[FDP_F_ARP_OP] = (uint64_t) number(b, at + 6, 2);
    }
    r->f[FDP_F_ARP_SHA] = (uint64_t) number(b, at + 8, 6);
    r->f[FDP_F_ARP_SPA] = (uint64_t) number(b, at + 14, 4);
    r->f[FDP_F_ARP_THA] = (uint64_t) number(b, at + 18, 6);
    r->f[FDP_F_ARP_TPA] = (uint64_t) number(b, at + 24, 4);
}

static void
ref_parse(const uint8_t *p, size_t n, uint16_t in_port, struct ref *r,
          struct fdp_key *key)
{
    struct bytes b = { p, n };

    memset(r, 0, sizeof *r);
    r->layout = (struct fdp_packet_layout) { -1, -1, -1, -1 };
    r->f[FDP_F_IN_PORT] = in_port;
    if (n >= 14) {
        r->layout.l2 = 0;
        r->f[FDP_F_DL_DST] = (uint64_t) number(&b, 0, 6);
        r->f[FDP_F_DL_SRC] = (uint64_t) number(&b, 6, 6);
        size_t at = 12;
        int64_t type = number(&b, at, 2);
        for (int tags = 0; tags < 2 && (type == 0x8100 || type == 0x88a8)
                           && number(&b, at + 4, 2) >= 0; tags++) {
            if (!tags) {
                r->layout.l2_5 = (int32_t) at;
                r->f[FDP_F_VLAN_TCI] = (uint64_t) number(&b, at + 2, 2)
                                       | 0x1000;
            }
            at += 4;
            type = number(&b, at, 2);
        }
        at += 2;
        if (type < 0x600) {
            if (number(&b, at, 6) == 0xaaaa03000000ll
                && number(&b, at + 6, 2) >= 0x600) {
                type = number(&b, at + 6, 2);
                at += 8;
            } else {
                type = 0x05ff;
            }
        }
        r->f[FDP_F_DL_TYPE] = (uint64_t) type;
        if (type == 0x0800) {
            ref_ipv4(&b, at, r);
        } else if (type == 0x86dd) {
            ref_ipv6(&b, at, r);
        } else if (type == 0x0806 || type == 0x8035) {
            ref_arp(&b, at, r);
        }
    }

    /* Into a key through the field table, one field at a time; the shared
     * fields (icmp_type in tp_src, arp_op in nw_proto...) are ORed so that
     * whichever the packet set shows. */
    memset(key, 0, sizeof *key);
    for (int f = 0; f < FDP_N_FIELDS; f++) {
        if (f != FDP_F_DL_VLAN && f != FDP_F_DL_VLAN_PCP
            && fdp__field(f)->n_bits <= 64) {
            fdp__key_or(key, f, r->f[f]);
        }
    }
    fdp__key_set(key, FDP_F_IPV6_SRC, r->ipv6_src);
    fdp__key_set(key, FDP_F_IPV6_DST, r->ipv6_dst);
    fdp__key_set(key, FDP_F_ND_TARGET, r->nd_target);
}

/* Parses 'p' with the reference and both entry points (from an exact-size
 * heap copy) and checks they agree. */
static void
check_packet(const uint8_t *p, size_t n, const char *what, uint64_t id)
{
    uint8_t *copy = malloc(n ? n : 1);
    struct fdp_packet_layout l1, l2;
    struct fdp_key want, k1, k2, k3;
    struct ref r;

    memcpy(copy, p, n);
    ref_parse(p, n, 9, &r, &want);
    fdp_packet_extract(copy, n, 9, &k1, &l1);
    uint32_t basis = (uint32_t) (id * 0x9e3779b9u);
    uint32_t h = fdp__packet_extract_hash(copy, n, 9, basis, &k2, &l2);
    uint32_t h3 = fdp__packet_extract_hash(copy, n, 9, basis, &k3, NULL);
    free(copy);

    for (int w = 0; w < FDP_KEY_WORDS; w++) {
        ck_assert_msg(k1.w[w] == want.w[w] && k2.w[w] == want.w[w]
                      && k3.w[w] == want.w[w],
                      "%s %" PRIu64 " (%zu bytes): word %d is %#" PRIx64
                      " / %#" PRIx64 ", the reference says %#" PRIx64,
                      what, id, n, w, k1.w[w], k2.w[w], want.w[w]);
    }
    ck_assert_msg(!memcmp(&l1, &r.layout, sizeof l1)
                  && !memcmp(&l2, &r.layout, sizeof l2),
                  "%s %" PRIu64 ": layout %d %d %d %d, the reference says "
                  "%d %d %d %d", what, id, l1.l2, l1.l2_5, l1.l3, l1.l4,
                  r.layout.l2, r.layout.l2_5, r.layout.l3, r.layout.l4);
    ck_assert_msg(h == fdp_hash_fast(want.w, FDP_KEY_PACKET_WORDS, basis)
                  && h3 == h,
                  "%s %" PRIu64 ": hash %#x, fdp_hash_fast says %#x", what,
                  id, h, fdp_hash_fast(want.w, FDP_KEY_PACKET_WORDS, basis));
}

/* ---------------------------------------------------------------------- */
/* Random packets.                                                         */

static void
set16(uint8_t *at, uint16_t v)
{
    at[0] = (uint8_t) (v >> 8);
    at[1] = (uint8_t) v;
}

static void
put_random(struct pkt *p, struct unit_rng *rng, size_t n)
{
    for (size_t i = 0; i < n && p->n < sizeof p->b; i++) {
        p->b[p->n++] = (uint8_t) unit_rng_next(rng);
    }
}

static uint32_t
pick(struct unit_rng *rng, uint32_t n)
{
    return unit_rng_below(rng, n);
}

/* A neighbour solicitation or advertisement (sometimes with code 1, so
 * not one) with a random target and 0 to 4 options, mostly link-layer
 * address options of one unit (sometimes zero, repeated, of other
 * lengths, or of other types), sometimes with a length that runs past
 * the end. */
static void
random_nd(struct pkt *p, struct unit_rng *rng)
{
    put8(p, pick(rng, 2) ? 135 : 136);
    put8(p, pick(rng, 5) ? 0 : 1);
    put_random(p, rng, 2 + 4 + 16);         /* Checksum, flags, target. */
    for (uint32_t n = pick(rng, 5); n > 0 && p->n + 8 <= sizeof p->b; n--) {
        static const uint8_t types[] = { 1, 1, 2, 2, 3, 0 };
        static const uint8_t units[] = { 1, 1, 1, 1, 0, 2, 9 };
        put8(p, types[pick(rng, sizeof types)]);
        put8(p, units[pick(rng, sizeof units)]);
        if (pick(rng, 6)) {
            put_random(p, rng, 6);
        } else {
            put32(p, 0);
            put16(p, 0);
        }
    }
}

/* A transport header of protocol 'proto' with random contents: usually
 * a plausible TCP data offset. */
static void
random_l4(struct pkt *p, struct unit_rng *rng, uint8_t proto)
{
    size_t start = p->n;

    if (proto == 58 && pick(rng, 2)) {
        random_nd(p, rng);
        return;
    }
    put_random(p, rng, 8 + pick(rng, 40));
    if (proto == 6 && p->n >= start + 13 && pick(rng, 4)) {
        p->b[start + 12] = (uint8_t) ((5 + pick(rng, 3)) << 4
                                      | (p->b[start + 12] & 0x0f));
    }
}

static uint8_t
random_proto(struct unit_rng *rng)
{
    static const uint8_t protos[] = { 6, 17, 132, 1, 58, 2, 59, 0, 43, 44,
                                      51, 60, 47 };

    return protos[pick(rng, sizeof protos)];
}

/* An IPv6 header with a random chain of extension headers, then a
 * transport header; lengths right unless mutated later. */
static void
random_ipv6(struct pkt *p, struct unit_rng *rng)
{
    size_t ip = p->n;
    uint8_t chain[6];
    int n_ext = (int) pick(rng, 5);

    for (int i = 0; i < n_ext; i++) {
        static const uint8_t exts[] = { 0, 43, 60, 51, 44 };
        chain[i] = exts[pick(rng, sizeof exts)];
    }
    uint8_t last = random_proto(rng);
    put32(p, 0x60000000u | (uint32_t) unit_rng_next(rng) >> 4);
    put16(p, 0);
    put8(p, n_ext ? chain[0] : last);
    put_random(p, rng, 33);
    for (int i = 0; i < n_ext; i++) {
        uint8_t next = i + 1 < n_ext ? chain[i + 1] : last;
        size_t len;
        put8(p, next);
        if (chain[i] == 44) {
            put8(p, 0);
            /* Offset 0 or not, M or not, sometimes all zero. */
            uint16_t offlg = (uint16_t) (pick(rng, 3) ? 0
                                         : pick(rng, 50) << 3);
            offlg |= (uint16_t) pick(rng, 2);
            put16(p, offlg);
            put_random(p, rng, 4);
            continue;
        }
        uint8_t hlen = (uint8_t) pick(rng, 3);
        put8(p, hlen);
        len = chain[i] == 51 ? ((size_t) hlen + 2) * 4
              : ((size_t) hlen + 1) * 8;
        put_random(p, rng, len - 2);
    }
    random_l4(p, rng, last);
    set16(p->b + ip + 4, (uint16_t) (p->n - ip - 40));
}

static void
random_ipv4(struct pkt *p, struct unit_rng *rng)
{
    size_t ip = p->n;
    size_t ihl = pick(rng, 4) ? 5 : 5 + pick(rng, 11);
    uint8_t proto = random_proto(rng);

    put8(p, (uint8_t) (0x40 | ihl));
    put_random(p, rng, 1);
    put16(p, 0);
    put16(p, 0x1234);
    put16(p, pick(rng, 2) ? 0 : (uint16_t) unit_rng_next(rng) & 0x3fff);
    put_random(p, rng, 1);
    put8(p, proto);
    put_random(p, rng, 2 + 8 + 4 * (ihl - 5));
    random_l4(p, rng, proto);
    set16(p->b + ip + 2, (uint16_t) (p->n - ip));
}

static void
random_packet(struct pkt *p, struct unit_rng *rng)
{
    p->n = 0;
    put_random(p, rng, 12);
    for (int tags = (int) pick(rng, 4) - 1; tags > 0; tags--) {
        put16(p, pick(rng, 2) ? 0x8100 : 0x88a8);
        put_random(p, rng, 2);
    }
    switch (pick(rng, 8)) {
    case 0:
    case 1:
        put16(p, 0x0800);
        random_ipv4(p, rng);
        break;
    case 2:
    case 3:
        put16(p, 0x86dd);
        random_ipv6(p, rng);
        break;
    case 4:
        put16(p, pick(rng, 2) ? 0x0806 : 0x8035);
        put16(p, pick(rng, 8) ? 1 : 6);
        put16(p, 0x0800);
        put8(p, pick(rng, 8) ? 6 : 8);
        put8(p, 4);
        put_random(p, rng, 22);
        if (pick(rng, 2)) {
            p->b[p->n - 21] = (uint8_t) pick(rng, 3);   /* Small op. */
            p->b[p->n - 22] = 0;
        }
        break;
    case 5: {
        /* 802.3: LLC, or SNAP with a type (maybe below 0x600). */
        put16(p, (uint16_t) pick(rng, 0x600));
        static const uint8_t snap[6] = { 0xaa, 0xaa, 0x03, 0, 0, 0 };
        put(p, snap, pick(rng, 2) ? 6 : 3);
        put16(p, pick(rng, 2) ? 0x0800 : (uint16_t) pick(rng, 0x700));
        if (pick(rng, 2)) {
            random_ipv4(p, rng);
        }
        break;
    }
    default:
        put16(p, (uint16_t) unit_rng_next(rng));
        put_random(p, rng, pick(rng, 60));
        break;
    }
    if (pick(rng, 4) == 0) {
        put_random(p, rng, pick(rng, 20));      /* Ethernet padding. */
    }
}

/* One of: a cut at a random length, random bytes over a stretch of the
 * headers, one byte changed, a length field made to lie. */
static void
mutate(struct pkt *p, struct unit_rng *rng)
{
    switch (pick(rng, 4)) {
    case 0:
        p->n = pick(rng, (uint32_t) p->n + 1);
        break;
    case 1:
        if (p->n) {
            size_t at = pick(rng, (uint32_t) p->n);
            size_t len = 1 + pick(rng, 8);
            for (size_t i = at; i < at + len && i < p->n; i++) {
                p->b[i] = (uint8_t) unit_rng_next(rng);
            }
        }
        break;
    case 2:
        if (p->n) {
            p->b[pick(rng, (uint32_t) p->n)] ^= (uint8_t) (1 << pick(rng, 8));
        }
        break;
    default:
        if (p->n > 20) {
            size_t at = 14 + pick(rng, (uint32_t) p->n - 14 - 1);
            p->b[at] = (uint8_t) pick(rng, 80);
        }
        break;
    }
}

START_TEST(reference_random)
{
    struct unit_rng rng;
    struct pkt p;

    unit_rng_init(&rng, 14);
    printf("extract: reference_random, seed %#" PRIx64 ", CPU level %s, "
           "fast hash %s\n", unit_seed(),
           fdp_cpu_level_name(fdp_cpu_level()), fdp_hash_fast_name());
    for (uint64_t i = 0; i < 300000; i++) {
        random_packet(&p, &rng);
        check_packet(p.b, p.n, "random", i);
        for (int m = (int) pick(&rng, 4); m > 0; m--) {
            mutate(&p, &rng);
        }
        check_packet(p.b, p.n, "mutated", i);
    }
}
END_TEST

/* The hand-built packets and every cut of each, against the reference. */
START_TEST(reference_cases)
{
    const struct packet_case *pc = &cases[_i];
    struct pkt p = { .n = 0 };

    pc->build(&p);
    for (size_t len = 0; len <= p.n; len++) {
        check_packet(p.b, len, pc->name, len);
    }
}
END_TEST

/* Odd packets on which flowdp once disagreed with Open vSwitch's
 * flow_extract() (the expected keys are what ovs-ofctl parse-pcap gives;
 * tests/parse-pcap.at compares the two programs on the same shapes). */
static void
b_vlan_bare(struct pkt *p)
{
    eth(p, 0x8100);
    put16(p, 0x6005);           /* The TCI, and no type after it. */
}

static void
b_vlan_then_nothing(struct pkt *p)
{
    eth(p, 0x8100);
    vlan(p, 0x6005, 0x0800);
}

static void
b_three_tags(struct pkt *p)
{
    eth(p, 0x8100);
    vlan(p, 0x6005, 0x8100);
    vlan(p, 0x00c8, 0x8100);
    vlan(p, 0x012c, 0x0800);
    ipv4(p, 17, 0, 8, 0);
    udp(p);
}

static void
b_ipv6_no_next(struct pkt *p)
{
    eth(p, 0x86dd);
    ipv6(p, 59, 0);
}

static void
b_ipv6_atomic_frag(struct pkt *p)
{
    eth(p, 0x86dd);
    ipv6(p, 44, 16);
    put8(p, 17);
    put8(p, 0);
    put16(p, 0);                /* Offset 0, no M: not a fragment. */
    put32(p, 7);
    udp(p);
}

static void
b_ipv6_ext_cut(struct pkt *p)
{
    eth(p, 0x86dd);
    ipv6(p, 0, 8);              /* A 16-byte hop-by-hop in 8 bytes. */
    put8(p, 6);
    put8(p, 1);
    put16(p, 0);
    put32(p, 0);
    tcp(p);
}

static void
b_icmp4_short(struct pkt *p)
{
    eth(p, 0x0800);
    ipv4(p, 1, 0, 4, 0);        /* 4 of ICMP's 8 bytes. */
    put8(p, 8);
    put8(p, 0);
    put16(p, 0);
}

static void
b_ipv4_length_cuts_tcp(struct pkt *p)
{
    eth(p, 0x0800);
    ipv4(p, 6, 0, 8, 0);        /* The TCP header runs into padding. */
    tcp(p);
}

static void
b_snap_small_type(struct pkt *p)
{
    static const uint8_t snap[6] = { 0xaa, 0xaa, 0x03, 0, 0, 0 };

    eth(p, 48);
    put(p, snap, 6);
    put16(p, 0x0100);
    for (int i = 0; i < 40; i++) {
        put8(p, 0);
    }
}

static void
b_ipv4_version_6(struct pkt *p)
{
    b_tcp4(p);
    p->b[14] = 0x65;            /* OVS does not check the version. */
}

static const struct packet_case odd_cases[] = {
    { "vlan-bare", b_vlan_bare, ETH_FIELDS ",dl_type=0x8100" },
    { "vlan-then-nothing", b_vlan_then_nothing,
      ETH_FIELDS ",dl_vlan=5,dl_vlan_pcp=3,ip" },
    { "three-tags", b_three_tags,
      ETH_FIELDS ",dl_vlan=5,dl_vlan_pcp=3,dl_type=0x8100" },
    { "ipv6-no-next-header", b_ipv6_no_next,
      ETH_FIELDS ",ipv6,nw_proto=59," IP6 },
    { "ipv6-atomic-fragment", b_ipv6_atomic_frag,
      ETH_FIELDS ",udp6," IP6 ",tp_src=53,tp_dst=5353" },
    { "ipv6-extension-cut", b_ipv6_ext_cut,
      ETH_FIELDS ",ipv6,ipv6_src=2001:db8::1,ipv6_dst=2001:db8::2" },
    { "icmp4-short", b_icmp4_short, ETH_FIELDS ",icmp," IP4 },
    { "ipv4-length-cuts-tcp", b_ipv4_length_cuts_tcp,
      ETH_FIELDS ",tcp," IP4 },
    { "snap-small-type", b_snap_small_type, ETH_FIELDS ",dl_type=0x05ff" },
    { "ipv4-version-6", b_ipv4_version_6, ETH_FIELDS ",tcp," IP4
      ",tp_src=1234,tp_dst=80,tcp_flags=0x12" },
};

START_TEST(odd_packets)
{
    const struct packet_case *pc = &odd_cases[_i];
    struct pkt p = { .n = 0 };
    struct fdp_key want, got;
    char *error = NULL;

    pc->build(&p);
    ck_assert_msg(!fdp_packet_parse(pc->expected, &want, &error), "%s: %s",
                  pc->name, error);
    fdp_packet_extract(p.b, p.n, 7, &got, NULL);
    for (int w = 0; w < FDP_KEY_WORDS; w++) {
        ck_assert_msg(got.w[w] == want.w[w], "%s: word %d is %#llx, "
                      "expected %#llx", pc->name, w,
                      (unsigned long long) got.w[w],
                      (unsigned long long) want.w[w]);
    }
    check_packet(p.b, p.n, pc->name, 0);
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
    tcase_add_loop_test(tc, reference_cases, 0, (int) FDP_ARRAY_SIZE(cases));
    tcase_add_loop_test(tc, odd_packets, 0, (int) FDP_ARRAY_SIZE(odd_cases));
    tcase_add_test(tc, reference_random);
    return unit_run(s);
}
