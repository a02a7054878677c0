/*
 * Unit tests for the tracker's control API (datapath/dp-ct.c): the dump
 * format against lines Open vSwitch 3.1's ovs-vswitchd printed for the
 * same connections (recorded with tests/ovs-peer.sh; see
 * tests/ovs-diff.at "dump-conntrack format" for the live comparison),
 * flush-tuple parsing, and dump, flush, counts, limits and per-zone
 * timeouts on a datapath's tracker filled by fdp__ct_execute() with
 * hand-made packets.  Flushes by partial tuples are checked against a
 * brute-force reference (a list of the connections made, filtered by
 * Open vSwitch's matching rules written out independently) on random
 * connections and random matches from the printed seed.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <flowdp/datapath.h>
#include <flowdp/table.h>
#include "datapath/bytes.h"
#include "datapath/conntrack.h"
#include "datapath/dp-private.h"
#include "datapath/execute.h"
#include "unit.h"

/* ---- The format, against Open vSwitch's own lines ---- */

static struct fdp_value
v4(uint32_t a)
{
    return (struct fdp_value) { 0, a };
}

static struct fdp_ct_tuple
t4(uint8_t proto, uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp)
{
    return (struct fdp_ct_tuple) { .proto = proto, .src = v4(src),
                                   .dst = v4(dst), .src_port = sp,
                                   .dst_port = dp };
}

static void
check_format(const struct fdp_ct_entry *e, unsigned int flags,
             const char *want)
{
    char *got = fdp_ct_entry_format(e, flags);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    free(got);
}

/* The four connections of tests/pcapgen.py's "exchange" through the flows
 * of tests/ovs-diff.at's dump-conntrack test, as ovs-vswitchd 3.1 dumped
 * them (plain, -m and -s). */
START_TEST(format_matches_ovs)
{
    const uint32_t c = 0x0a000001, s = 0x0a000002;
    struct fdp_ct_entry udp = { .orig = t4(17, c, s, 5000, 53),
                                .reply = t4(17, s, c, 53, 5000),
                                .timeout = 28 };
    struct fdp_ct_entry tcp = { .orig = t4(6, c, s, 40000, 80),
                                .reply = t4(6, s, c, 80, 40000),
                                .zone = 5, .mark = 1,
                                .label = { 1, 2 }, .timeout = 86399,
                                .tcp_state = { FDP_CT_TCPS_ESTABLISHED,
                                               FDP_CT_TCPS_ESTABLISHED } };
    struct fdp_ct_entry icmp = { .zone = 7, .label = { 0, 0x1234 },
                                 .timeout = 29 };
    icmp.orig = (struct fdp_ct_tuple) { .proto = 1, .src = v4(c),
                                        .dst = v4(s), .icmp_id = 7,
                                        .icmp_type = 8 };
    icmp.reply = (struct fdp_ct_tuple) { .proto = 1, .src = v4(s),
                                         .dst = v4(c), .icmp_id = 7 };
    struct fdp_ct_entry udp6 = { .timeout = 59 };
    udp6.orig = (struct fdp_ct_tuple) { .ipv6 = true, .proto = 17,
                                        .src = { 0xfd00000000000000, 1 },
                                        .dst = { 0xfd00000000000000, 2 },
                                        .src_port = 6000, .dst_port = 53 };
    udp6.reply = (struct fdp_ct_tuple) { .ipv6 = true, .proto = 17,
                                         .src = udp6.orig.dst,
                                         .dst = udp6.orig.src,
                                         .src_port = 53, .dst_port = 6000 };

    check_format(&icmp, 0, "icmp,orig=(src=10.0.0.1,dst=10.0.0.2,id=7,"
                 "type=8,code=0),reply=(src=10.0.0.2,dst=10.0.0.1,id=7,"
                 "type=0,code=0),zone=7,labels=0x1234");
    check_format(&tcp, 0, "tcp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=40000,"
                 "dport=80),reply=(src=10.0.0.2,dst=10.0.0.1,sport=80,"
                 "dport=40000),zone=5,mark=1,labels=0x10000000000000002,"
                 "protoinfo=(state=ESTABLISHED)");
    check_format(&udp, 0, "udp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=5000,"
                 "dport=53),reply=(src=10.0.0.2,dst=10.0.0.1,sport=53,"
                 "dport=5000)");
    check_format(&udp6, 0, "udp,orig=(src=fd00::1,dst=fd00::2,sport=6000,"
                 "dport=53),reply=(src=fd00::2,dst=fd00::1,sport=53,"
                 "dport=6000)");

    check_format(&icmp, FDP_CT_FORMAT_VERBOSE,
                 "icmp,orig=(src=10.0.0.1,dst=10.0.0.2,id=7,type=8,code=0),"
                 "reply=(src=10.0.0.2,dst=10.0.0.1,id=7,type=0,code=0),"
                 "id=0,zone=7,status=0,labels=0x1234");
    check_format(&tcp, FDP_CT_FORMAT_VERBOSE,
                 "tcp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=40000,dport=80),"
                 "reply=(src=10.0.0.2,dst=10.0.0.1,sport=80,dport=40000),"
                 "id=0,zone=5,status=0,mark=1,labels=0x10000000000000002,"
                 "protoinfo=(state_orig=ESTABLISHED,state_reply=ESTABLISHED,"
                 "flags_orig=0,flags_reply=0)");
    check_format(&udp, FDP_CT_FORMAT_VERBOSE,
                 "udp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=5000,dport=53),"
                 "reply=(src=10.0.0.2,dst=10.0.0.1,sport=53,dport=5000),"
                 "id=0,status=0");

    check_format(&icmp, FDP_CT_FORMAT_STATS,
                 "icmp,orig=(src=10.0.0.1,dst=10.0.0.2,id=7,type=8,code=0),"
                 "reply=(src=10.0.0.2,dst=10.0.0.1,id=7,type=0,code=0),"
                 "zone=7,timeout=29,labels=0x1234");
    check_format(&tcp, FDP_CT_FORMAT_STATS,
                 "tcp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=40000,dport=80),"
                 "reply=(src=10.0.0.2,dst=10.0.0.1,sport=80,dport=40000),"
                 "zone=5,timeout=86399,mark=1,labels=0x10000000000000002,"
                 "protoinfo=(state=ESTABLISHED)");
    check_format(&udp6, FDP_CT_FORMAT_STATS,
                 "udp,orig=(src=fd00::1,dst=fd00::2,sport=6000,dport=53),"
                 "reply=(src=fd00::2,dst=fd00::1,sport=53,dport=6000),"
                 "timeout=59");

    /* Coalesced states (coalesce_tcp_state()), window scales and flags
     * in the verbose form, an unnamed protocol. */
    tcp.tcp_state[0] = FDP_CT_TCPS_FIN_WAIT_2;
    tcp.tcp_state[1] = FDP_CT_TCPS_CLOSE_WAIT;
    tcp.zone = 0;
    tcp.mark = 0;
    tcp.label = (struct fdp_value) { 0, 0 };
    check_format(&tcp, 0, "tcp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=40000,"
                 "dport=80),reply=(src=10.0.0.2,dst=10.0.0.1,sport=80,"
                 "dport=40000),protoinfo=(state=TIME_WAIT)");
    tcp.tcp_state[0] = FDP_CT_TCPS_SYN_RECV;
    tcp.tcp_state[1] = FDP_CT_TCPS_SYN_SENT;
    tcp.tcp_wscale[0] = 7;
    tcp.tcp_flags[0] = FDP_CT_TCPF_WINDOW_SCALE;
    tcp.tcp_flags[1] = FDP_CT_TCPF_WINDOW_SCALE | FDP_CT_TCPF_BE_LIBERAL;
    check_format(&tcp, 0, "tcp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=40000,"
                 "dport=80),reply=(src=10.0.0.2,dst=10.0.0.1,sport=80,"
                 "dport=40000),protoinfo=(state=ESTABLISHED)");
    check_format(&tcp, FDP_CT_FORMAT_VERBOSE,
                 "tcp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=40000,dport=80),"
                 "reply=(src=10.0.0.2,dst=10.0.0.1,sport=80,dport=40000),"
                 "id=0,status=0,protoinfo=(state_orig=SYN_RECV,"
                 "state_reply=SYN_SENT,wscale_orig=7,wscale_reply=0,"
                 "flags_orig=WINDOW_SCALE,flags_reply=WINDOW_SCALE|"
                 "BE_LIBERAL)");
    struct fdp_ct_entry gre = { .orig = t4(47, c, s, 0, 0),
                                .reply = t4(47, s, c, 0, 0) };
    check_format(&gre, 0, "47,orig=(src=10.0.0.1,dst=10.0.0.2,sport=0,"
                 "dport=0),reply=(src=10.0.0.2,dst=10.0.0.1,sport=0,"
                 "dport=0)");
}
END_TEST

/* ---- Parsing flush tuples ---- */

static void
parse_bad(const char *s, const char *prior, const char *want)
{
    struct fdp_ct_match m;
    char *msg = NULL;

    memset(&m, 0, sizeof m);
    if (prior) {
        ck_assert_int_eq(fdp_ct_match_parse_tuple(prior, false, &m, NULL), 0);
    }
    ck_assert_int_eq(fdp_ct_match_parse_tuple(s, prior != NULL, &m, &msg),
                     EINVAL);
    ck_assert_ptr_nonnull(msg);
    ck_assert_msg(strstr(msg, want), "\"%s\": got \"%s\", want \"%s\"", s,
                  msg, want);
    free(msg);
}

START_TEST(parse_tuples)
{
    struct fdp_ct_match m;

    memset(&m, 0, sizeof m);
    ck_assert_int_eq(fdp_ct_match_parse_tuple(
        "ct_nw_src=10.0.0.1,ct_nw_dst=10.0.0.2,ct_nw_proto=6,ct_tp_src=1234,"
        "ct_tp_dst=80", false, &m, NULL), 0);
    ck_assert(m.has_l3 && !m.ipv6);
    ck_assert_uint_eq(m.proto, 6);
    ck_assert_uint_eq(m.orig.src.lo, 0x0a000001);
    ck_assert_uint_eq(m.orig.dst.lo, 0x0a000002);
    ck_assert_uint_eq(m.orig.src_port, 1234);
    ck_assert_uint_eq(m.orig.dst_port, 80);
    ck_assert_int_eq(fdp_ct_match_parse_tuple(
        "ct_nw_src=10.0.0.2,ct_tp_dst=1234", true, &m, NULL), 0);
    ck_assert_uint_eq(m.reply.src.lo, 0x0a000002);
    ck_assert_uint_eq(m.reply.dst_port, 1234);

    memset(&m, 0, sizeof m);
    ck_assert_int_eq(fdp_ct_match_parse_tuple(
        "ct_ipv6_src=fd00::1,ct_nw_proto=58,icmp_id=7,icmp_type=128,"
        "icmp_code=0", false, &m, NULL), 0);
    ck_assert(m.has_l3 && m.ipv6);
    ck_assert_uint_eq(m.orig.src.hi, 0xfd00000000000000);
    ck_assert_uint_eq(m.orig.src.lo, 1);
    ck_assert_uint_eq(m.orig.icmp_id, 7);
    ck_assert_uint_eq(m.orig.icmp_type, 128);

    parse_bad("ct_foo=1", NULL, "invalid conntrack tuple field: ct_foo");
    parse_bad("ct_nw_src", NULL, "field ct_nw_src missing value");
    parse_bad("ct_nw_src=", NULL, "missing value");
    parse_bad("ct_nw_src=10.0.0.256", NULL, "failed to parse field "
              "ct_nw_src");
    parse_bad("ct_nw_src=10.0.0.1,ct_nw_src=10.0.0.2", NULL,
              "ct_nw_src is set multiple times");
    parse_bad("ct_nw_src=10.0.0.1,ct_ipv6_dst=::1", NULL,
              "the L3 protocol does not match ::1");
    parse_bad("ct_nw_proto=256", NULL, "failed to parse field ct_nw_proto");
    parse_bad("ct_tp_src=70000,ct_nw_proto=6", NULL,
              "failed to parse field ct_tp_src");
    parse_bad("ct_tp_src=80", NULL, "port is set without protocol");
    parse_bad("icmp_type=8", NULL, "invalid L4 fields");
    parse_bad("ct_nw_proto=1,icmp_type=256", NULL,
              "failed to parse field icmp_type");
    parse_bad("ct_tp_src=1,ct_nw_proto=1", NULL, "do not apply to ICMP");
    parse_bad("ct_nw_proto=17", "ct_nw_proto=6",
              "ct_nw_proto is set multiple times");
    parse_bad("ct_ipv6_src=::1", "ct_nw_src=1.2.3.4",
              "the L3 protocol does not match");
    parse_bad("ct_tp_src=-1,ct_nw_proto=6", NULL, "ct_tp_src");
}
END_TEST

/* ---- A datapath's tracker, filled by hand ---- */

struct rig {
    struct fdp_table *table;
    struct fdp_dp *dp;
    struct fdp__ct_pmd *pmd;
};

static void
rig_init(struct rig *r, uint32_t capacity)
{
    struct fdp_dp_options o;

    fdp_dp_options_init(&o);
    o.ct_capacity = capacity;
    ck_assert_int_eq(fdp_table_create(&r->table), 0);
    ck_assert_int_eq(fdp_dp_create(r->table, &o, &r->dp), 0);
    ck_assert_int_eq(fdp__ct_pmd_create(fdp__dp_ct(r->dp), &r->pmd), 0);
}

static void
rig_destroy(struct rig *r)
{
    fdp__ct_pmd_destroy(r->pmd);
    fdp_dp_destroy(r->dp);
    fdp_table_destroy(r->table);
}

/* The datapath's clock (dp-ct.c). */
static uint64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* A connection to make: IPv4 or IPv6 'proto' from 'src' to 'dst'; ports
 * (for ICMP: the echo id in 'sp'). */
struct conn {
    bool ipv6;
    uint8_t proto;
    struct fdp_value src, dst;
    uint16_t sp, dp;
    uint16_t zone;
};

static void
put_addr(uint8_t *p, bool ipv6, struct fdp_value a)
{
    if (ipv6) {
        fdp__put32(p, (uint32_t) (a.hi >> 32));
        fdp__put32(p + 4, (uint32_t) a.hi);
        fdp__put32(p + 8, (uint32_t) (a.lo >> 32));
        fdp__put32(p + 12, (uint32_t) a.lo);
    } else {
        fdp__put32(p, (uint32_t) a.lo);
    }
}

/* Runs the first packet of 'c' (a TCP SYN, a UDP datagram, an echo
 * request) through the tracker as ct(commit) in its zone, with 'mark'
 * set, on packet-thread context 'pmd'. */
static struct fdp__ct_result
exec_first(struct fdp__ct_pmd *pmd, const struct conn *c, uint32_t mark)
{
    uint8_t buf[128];
    struct fdp__pkt pkt = { .data = buf };
    size_t l3 = c->ipv6 ? 40 : 20, l4 = 0;
    uint8_t *ip = buf + 14, *tp = ip + l3;

    memset(buf, 0, sizeof buf);
    buf[0] = 2;
    buf[6] = 2;
    buf[11] = 1;
    fdp__put16(buf + 12, c->ipv6 ? 0x86dd : 0x0800);
    if (c->proto == 6) {
        l4 = 20;
        fdp__put16(tp, c->sp);
        fdp__put16(tp + 2, c->dp);
        fdp__put32(tp + 4, 1000);
        fdp__put16(tp + 12, 5 << 12 | 0x02);
        fdp__put16(tp + 14, 1000);
    } else if (c->proto == 17) {
        l4 = 8;
        fdp__put16(tp, c->sp);
        fdp__put16(tp + 2, c->dp);
        fdp__put16(tp + 4, 8);
    } else {
        l4 = 8;
        tp[0] = c->ipv6 ? 128 : 8;
        fdp__put16(tp + 4, c->sp);
        fdp__put16(tp + 6, 1);
    }
    if (c->ipv6) {
        ip[0] = 0x60;
        fdp__put16(ip + 4, (uint16_t) l4);
        ip[6] = c->proto;
        ip[7] = 64;
        put_addr(ip + 8, true, c->src);
        put_addr(ip + 24, true, c->dst);
    } else {
        ip[0] = 0x45;
        fdp__put16(ip + 2, (uint16_t) (20 + l4));
        ip[8] = 64;
        ip[9] = c->proto;
        put_addr(ip + 12, false, c->src);
        put_addr(ip + 16, false, c->dst);
        fdp__put16(ip + 10, fdp__csum(0, ip, 20));
    }
    int csum_off = c->proto == 6 ? 16 : c->proto == 17 ? 6 : 2;
    uint32_t sum = 0;
    if (c->ipv6 || c->proto != 1) {
        uint8_t ph[40];
        size_t n;
        if (c->ipv6) {
            memcpy(ph, ip + 8, 32);
            fdp__put32(ph + 32, (uint32_t) l4);
            fdp__put32(ph + 36, c->proto);
            n = 40;
        } else {
            memcpy(ph, ip + 12, 8);
            ph[8] = 0;
            ph[9] = c->proto;
            fdp__put16(ph + 10, (uint16_t) l4);
            n = 12;
        }
        sum = fdp__csum_add(0, ph, n);
    }
    uint16_t cs = fdp__csum(sum, tp, l4);
    fdp__put16(tp + csum_off, c->proto == 17 && !cs ? 0xffff : cs);
    pkt.size = (uint32_t) (14 + l3 + l4);
    fdp_packet_extract(buf, pkt.size, 1, &pkt.key, &pkt.layout);

    struct fdp__ct_args args = { .zone = c->zone, .commit = true,
                                 .mark = mark, .mark_mask = mark ? ~0u : 0 };
    struct fdp__ct_result res;
    struct fdp__pkt *p = &pkt;
    fdp__ct_execute(pmd, &p, 1, &args, NULL, now_ms(), &res);
    return res;
}

/* Commits 'c', a connection the tracker does not have. */
static void
commit(struct rig *r, const struct conn *c, uint32_t mark)
{
    struct fdp__ct_result res = exec_first(r->pmd, c, mark);
    ck_assert_msg(res.state & FDP_CT_NEW, "commit of a new connection: "
                  "state %#x", res.state);
}

/* Dumps 'zone' (or all), formatted and sorted, into one string. */
struct lines {
    char *v[256];
    size_t n;
    unsigned int flags;
};

static bool
take_line(const struct fdp_ct_entry *e, void *aux)
{
    struct lines *l = aux;

    ck_assert_uint_lt(l->n, 256);
    l->v[l->n++] = fdp_ct_entry_format(e, l->flags);
    return true;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

static char *
dump_text(struct rig *r, const uint16_t *zone, unsigned int flags)
{
    struct lines l = { .n = 0, .flags = flags };
    size_t size = 1;

    fdp_dp_ct_dump(r->dp, zone, take_line, &l);
    qsort(l.v, l.n, sizeof l.v[0], cmp_str);
    for (size_t i = 0; i < l.n; i++) {
        size += strlen(l.v[i]) + 1;
    }
    char *out = calloc(1, size);
    for (size_t i = 0; i < l.n; i++) {
        strcat(out, l.v[i]);
        strcat(out, "\n");
        free(l.v[i]);
    }
    return out;
}

static void
check_dump(struct rig *r, const uint16_t *zone, const char *want)
{
    char *got = dump_text(r, zone, 0);
    ck_assert_str_eq(got, want);
    free(got);
}

static const struct conn c_udp = { false, 17, { 0, 0x0a000001 },
                                   { 0, 0x0a000002 }, 5000, 53, 0 };
static const struct conn c_tcp = { false, 6, { 0, 0x0a000001 },
                                   { 0, 0x0a000002 }, 40000, 80, 5 };
static const struct conn c_icmp = { false, 1, { 0, 0x0a000001 },
                                    { 0, 0x0a000002 }, 7, 0, 7 };
static const struct conn c_udp6 = { true, 17, { 0xfd00000000000000, 1 },
                                    { 0xfd00000000000000, 2 }, 6000, 53,
                                    0 };

#define L_UDP "udp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=5000,dport=53)," \
    "reply=(src=10.0.0.2,dst=10.0.0.1,sport=53,dport=5000)\n"
#define L_TCP "tcp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=40000,dport=80)," \
    "reply=(src=10.0.0.2,dst=10.0.0.1,sport=80,dport=40000),zone=5,mark=1," \
    "protoinfo=(state=SYN_SENT)\n"
#define L_ICMP "icmp,orig=(src=10.0.0.1,dst=10.0.0.2,id=7,type=8,code=0)," \
    "reply=(src=10.0.0.2,dst=10.0.0.1,id=7,type=0,code=0),zone=7\n"
#define L_UDP6 "udp,orig=(src=fd00::1,dst=fd00::2,sport=6000,dport=53)," \
    "reply=(src=fd00::2,dst=fd00::1,sport=53,dport=6000)\n"

static void
fill_four(struct rig *r)
{
    commit(r, &c_udp, 0);
    commit(r, &c_tcp, 1);
    commit(r, &c_icmp, 0);
    commit(r, &c_udp6, 0);
}

START_TEST(dump_count_flush)
{
    struct rig r;
    uint16_t z5 = 5, z0 = 0, z9 = 9;
    uint32_t n;

    rig_init(&r, 1000);
    fill_four(&r);
    check_dump(&r, NULL, L_ICMP L_TCP L_UDP L_UDP6);
    check_dump(&r, &z5, L_TCP);
    check_dump(&r, &z0, L_UDP L_UDP6);
    check_dump(&r, &z9, "");
    ck_assert_uint_eq(fdp_dp_ct_count(r.dp), 4);
    ck_assert_uint_eq(fdp_dp_ct_zone_count(r.dp, 0), 2);
    ck_assert_uint_eq(fdp_dp_ct_zone_count(r.dp, 5), 1);

    /* A zone. */
    ck_assert_int_eq(fdp_dp_ct_flush(r.dp, &z5, NULL, &n), 0);
    ck_assert_uint_eq(n, 1);
    check_dump(&r, NULL, L_ICMP L_UDP L_UDP6);

    /* A full original tuple: zone 0 when none is given (so the ICMP
     * connection of zone 7 stays), the given zone otherwise. */
    struct fdp_ct_match m;
    memset(&m, 0, sizeof m);
    ck_assert_int_eq(fdp_ct_match_parse_tuple(
        "ct_nw_src=10.0.0.1,ct_nw_dst=10.0.0.2,ct_nw_proto=1,icmp_id=7,"
        "icmp_type=8", false, &m, NULL), 0);
    ck_assert_int_eq(fdp_dp_ct_flush(r.dp, NULL, &m, &n), 0);
    ck_assert_uint_eq(n, 0);
    uint16_t z7 = 7;
    ck_assert_int_eq(fdp_dp_ct_flush(r.dp, &z7, &m, &n), 0);
    ck_assert_uint_eq(n, 1);
    check_dump(&r, NULL, L_UDP L_UDP6);

    /* The reply direction's tuple names the connection too. */
    memset(&m, 0, sizeof m);
    ck_assert_int_eq(fdp_ct_match_parse_tuple(
        "ct_nw_src=10.0.0.2,ct_nw_dst=10.0.0.1,ct_nw_proto=17,ct_tp_src=53,"
        "ct_tp_dst=5000", false, &m, NULL), 0);
    ck_assert_int_eq(fdp_dp_ct_flush(r.dp, NULL, &m, &n), 0);
    ck_assert_uint_eq(n, 1);
    check_dump(&r, NULL, L_UDP6);

    /* A partial tuple (as the recorded Open vSwitch run: ct_nw_src and
     * ct_nw_proto) over every zone. */
    fill_four(&r);
    memset(&m, 0, sizeof m);
    ck_assert_int_eq(fdp_ct_match_parse_tuple(
        "ct_nw_src=10.0.0.1,ct_nw_proto=17", false, &m, NULL), 0);
    ck_assert_int_eq(fdp_dp_ct_flush(r.dp, NULL, &m, &n), 0);
    ck_assert_uint_eq(n, 1);
    check_dump(&r, NULL, L_ICMP L_TCP L_UDP6);

    /* Everything. */
    ck_assert_int_eq(fdp_dp_ct_flush(r.dp, NULL, NULL, &n), 0);
    ck_assert_uint_eq(n, 3);
    check_dump(&r, NULL, "");
    ck_assert_uint_eq(fdp_dp_ct_count(r.dp), 0);
    rig_destroy(&r);
}
END_TEST

START_TEST(limits_and_maxconns)
{
    struct rig r;

    rig_init(&r, 100);
    ck_assert_uint_eq(fdp_dp_ct_get_capacity(r.dp), 100);
    ck_assert_uint_eq(fdp_dp_ct_get_maxconns(r.dp), 100);
    ck_assert_int_eq(fdp_dp_ct_set_maxconns(r.dp, 101), EINVAL);
    ck_assert_int_eq(fdp_dp_ct_set_maxconns(r.dp, 0), EINVAL);
    ck_assert_int_eq(fdp_dp_ct_set_maxconns(r.dp, 3), 0);
    ck_assert_uint_eq(fdp_dp_ct_get_maxconns(r.dp), 3);

    /* Zone limits: zone 5's own, the default for the others. */
    fdp_dp_ct_set_default_limit(r.dp, 2);
    fdp_dp_ct_set_zone_limit(r.dp, 5, 1);
    ck_assert_uint_eq(fdp_dp_ct_get_default_limit(r.dp), 2);
    ck_assert_uint_eq(fdp_dp_ct_get_zone_limit(r.dp, 5), 1);
    ck_assert_uint_eq(fdp_dp_ct_get_zone_limit(r.dp, 6), 0);
    struct conn c = c_udp;
    c.zone = 5;
    commit(&r, &c, 0);
    c.sp++;
    /* The second commit in zone 5 is refused: still +new, not made. */
    {
        uint8_t before = (uint8_t) fdp_dp_ct_zone_count(r.dp, 5);
        commit(&r, &c, 0);
        ck_assert_uint_eq(fdp_dp_ct_zone_count(r.dp, 5), before);
    }
    fdp_dp_ct_set_zone_limit(r.dp, 5, 0);       /* Back to the default. */
    commit(&r, &c, 0);
    ck_assert_uint_eq(fdp_dp_ct_zone_count(r.dp, 5), 2);
    /* maxconns: 3 in all. */
    c.zone = 6;
    commit(&r, &c, 0);
    ck_assert_uint_eq(fdp_dp_ct_count(r.dp), 3);
    c.sp++;
    commit(&r, &c, 0);
    ck_assert_uint_eq(fdp_dp_ct_count(r.dp), 3);

    fdp_dp_ct_set_tcp_seq_chk(r.dp, false);
    ck_assert(!fdp_dp_ct_get_tcp_seq_chk(r.dp));
    fdp_dp_ct_set_tcp_seq_chk(r.dp, true);
    ck_assert(fdp_dp_ct_get_tcp_seq_chk(r.dp));

    struct fdp_ct_stats st;
    fdp_dp_ct_stats(r.dp, &st);
    ck_assert_uint_eq(st.n_packets, 0);     /* No pmd of the datapath
                                             * ran a packet. */
    rig_destroy(&r);
}
END_TEST

START_TEST(timeouts_per_zone)
{
    struct rig r;
    bool own;
    uint16_t z5 = 5, z6 = 6;

    rig_init(&r, 100);
    for (int a = 0; a < FDP_CT_N_TP_ATTRS; a++) {
        const char *name = fdp_ct_tp_attr_name((enum fdp_ct_tp_attr) a);
        ck_assert_ptr_nonnull(name);
        ck_assert_int_eq(fdp_ct_tp_attr_from_name(name), a);
    }
    ck_assert_int_eq(fdp_ct_tp_attr_from_name("TCP_ESTABLISHED"),
                     FDP_CT_TP_TCP_ESTABLISHED);
    ck_assert_int_eq(fdp_ct_tp_attr_from_name("tcp_unack"),
                     FDP_CT_N_TP_ATTRS);
    ck_assert_ptr_null(fdp_ct_tp_attr_name(FDP_CT_N_TP_ATTRS));

    /* Open vSwitch's defaults. */
    ck_assert_uint_eq(fdp_dp_ct_get_timeout(r.dp, NULL,
                                            FDP_CT_TP_TCP_ESTABLISHED, NULL),
                      86400);
    ck_assert_uint_eq(fdp_dp_ct_get_timeout(r.dp, NULL,
                                            FDP_CT_TP_TCP_FIN_WAIT, NULL),
                      900);
    ck_assert_uint_eq(fdp_dp_ct_get_timeout(r.dp, NULL,
                                            FDP_CT_TP_UDP_MULTIPLE, NULL),
                      30);

    ck_assert_int_eq(fdp_dp_ct_set_timeout(r.dp, &z5, FDP_CT_TP_UDP_FIRST,
                                           7), 0);
    ck_assert_int_eq(fdp_dp_ct_set_timeout(r.dp, NULL, FDP_CT_TP_UDP_FIRST,
                                           0), EINVAL);
    ck_assert_int_eq(fdp_dp_ct_set_timeout(r.dp, NULL, FDP_CT_N_TP_ATTRS,
                                           5), EINVAL);
    ck_assert_int_eq(fdp_dp_ct_set_timeout(r.dp, &z5, FDP_CT_TP_UDP_FIRST,
                                           2147484), EINVAL);
    ck_assert_uint_eq(fdp_dp_ct_get_timeout(r.dp, &z5, FDP_CT_TP_UDP_FIRST,
                                            &own), 7);
    ck_assert(own);
    ck_assert_uint_eq(fdp_dp_ct_get_timeout(r.dp, &z6, FDP_CT_TP_UDP_FIRST,
                                            &own), 60);
    ck_assert(!own);

    struct conn c = c_udp;
    c.zone = 5;
    commit(&r, &c, 0);
    c.zone = 6;
    commit(&r, &c, 0);
    char *got = dump_text(&r, NULL, FDP_CT_FORMAT_STATS);
    /* Whole seconds left, rounded down: 6 or 7 and 59 or 60 by when the
     * dump ran. */
    ck_assert_msg((strstr(got, "zone=5,timeout=6\n")
                   || strstr(got, "zone=5,timeout=7\n"))
                  && (strstr(got, "zone=6,timeout=59\n")
                      || strstr(got, "zone=6,timeout=60\n")), "%s", got);
    free(got);

    /* The global value moves zones without their own. */
    ck_assert_int_eq(fdp_dp_ct_set_timeout(r.dp, NULL, FDP_CT_TP_UDP_FIRST,
                                           100), 0);
    ck_assert_uint_eq(fdp_dp_ct_get_timeout(r.dp, &z6, FDP_CT_TP_UDP_FIRST,
                                            NULL), 100);
    ck_assert_uint_eq(fdp_dp_ct_get_timeout(r.dp, &z5, FDP_CT_TP_UDP_FIRST,
                                            NULL), 7);
    /* Removing the zone's own. */
    ck_assert_int_eq(fdp_dp_ct_set_timeout(r.dp, &z5, FDP_CT_TP_UDP_FIRST,
                                           0), 0);
    ck_assert_uint_eq(fdp_dp_ct_get_timeout(r.dp, &z5, FDP_CT_TP_UDP_FIRST,
                                            &own), 100);
    ck_assert(!own);
    rig_destroy(&r);
}
END_TEST

/* ---- Random flushes against the brute-force reference ---- */

/* Open vSwitch 3.1's ct_dpif_entry_cmp(), written out again over the
 * reference's own list. */
static bool
ref_addr(struct fdp_value want, struct fdp_value have)
{
    return (!want.hi && !want.lo) || (want.hi == have.hi
                                      && want.lo == have.lo);
}

static bool
ref_tuple(const struct fdp_ct_tuple *w, bool ipv6, uint8_t proto,
          struct fdp_value src, struct fdp_value dst, uint16_t sp,
          uint16_t dp, uint16_t id, uint8_t type)
{
    (void) ipv6;
    if (!ref_addr(w->src, src) || !ref_addr(w->dst, dst)) {
        return false;
    }
    if (proto == 1 || proto == 58) {
        return w->icmp_id == id && w->icmp_type == type && !w->icmp_code;
    }
    return (!w->src_port || w->src_port == sp)
           && (!w->dst_port || w->dst_port == dp);
}

static bool
ref_selects(const struct fdp_ct_match *m, const uint16_t *zone,
            const struct conn *c)
{
    bool icmp = c->proto == 1 || c->proto == 58;
    uint8_t req = c->ipv6 ? 128 : 8, rep = c->ipv6 ? 129 : 0;

    if (zone && *zone != c->zone) {
        return false;
    }
    if ((m->has_l3 && m->ipv6 != c->ipv6) || (m->proto && m->proto != c->proto)) {
        return false;
    }
    /* The match's protocol decides how its tuples read (ICMP fields or
     * ports), as in Open vSwitch. */
    uint8_t p = m->proto;
    return ref_tuple(&m->orig, c->ipv6, p, c->src, c->dst, c->sp, c->dp,
                     icmp ? c->sp : 0, icmp ? req : 0)
           && ref_tuple(&m->reply, c->ipv6, p, c->dst, c->src, c->dp, c->sp,
                        icmp ? c->sp : 0, icmp ? rep : 0);
}

/* A flush by a full original tuple alone is one lookup of that tuple in
 * one zone, which finds a connection by either of its directions. */
static bool
ref_exact(const struct fdp_ct_match *m, uint16_t zone, const struct conn *c)
{
    bool icmp = c->proto == 1 || c->proto == 58;
    const struct fdp_ct_tuple *w = &m->orig;

    if (c->zone != zone || c->proto != m->proto || c->ipv6 != m->ipv6) {
        return false;
    }
    for (int dir = 0; dir < 2; dir++) {
        struct fdp_value src = dir ? c->dst : c->src;
        struct fdp_value dst = dir ? c->src : c->dst;
        bool addrs = w->src.hi == src.hi && w->src.lo == src.lo
                     && w->dst.hi == dst.hi && w->dst.lo == dst.lo;
        uint8_t type = (uint8_t) (dir ? (c->ipv6 ? 129 : 0)
                                      : (c->ipv6 ? 128 : 8));
        if (addrs && (icmp ? (w->icmp_id == c->sp && w->icmp_type == type
                              && !w->icmp_code)
                           : (w->src_port == (dir ? c->dp : c->sp)
                              && w->dst_port == (dir ? c->sp : c->dp)))) {
            return true;
        }
    }
    return false;
}

/* The dump agrees with the reference's survivors. */
struct survivors {
    const struct conn *conns;
    const bool *alive;
    size_t n;
    size_t seen;
};

static bool
check_survivor(const struct fdp_ct_entry *e, void *aux)
{
    struct survivors *sv = aux;
    bool found = false;

    for (size_t k = 0; k < sv->n && !found; k++) {
        const struct conn *c = &sv->conns[k];
        found = sv->alive[k] && c->zone == e->zone && c->proto == e->orig.proto
                && c->ipv6 == e->orig.ipv6 && c->src.lo == e->orig.src.lo
                && c->dst.lo == e->orig.dst.lo
                && (c->proto == 1 || c->proto == 58
                    ? c->sp == e->orig.icmp_id
                    : c->sp == e->orig.src_port && c->dp == e->orig.dst_port);
    }
    char *line = fdp_ct_entry_format(e, 0);
    ck_assert_msg(found, "left by the flush, not by the reference: %s",
                  line);
    free(line);
    sv->seen++;
    return true;
}

static struct fdp_value
r_addr(struct unit_rng *rng, bool ipv6)
{
    uint32_t host = 1 + unit_rng_below(rng, 3);
    return ipv6 ? (struct fdp_value) { 0xfd00000000000000, host }
                : v4(0x0a000000 | host);
}

START_TEST(random_flush_vs_reference)
{
    struct unit_rng rng;
    static const uint8_t protos[] = { 6, 17, 1 };

    /* How many rounds took each path and removed something: the random
     * matches must exercise them all. */
    unsigned int n_full = 0, n_partial = 0, n_all = 0, n_removing = 0;

    unit_rng_init(&rng, 0xc7f1);
    for (int round = 0; round < 300; round++) {
        struct rig r;
        struct conn conns[40];
        bool alive[40];
        size_t n = 0;

        rig_init(&r, 1000);
        for (int i = 0; i < 40; i++) {
            struct conn c;
            memset(&c, 0, sizeof c);
            c.ipv6 = unit_rng_below(&rng, 4) == 0;
            c.proto = protos[unit_rng_below(&rng, 3)];
            if (c.ipv6 && c.proto == 1) {
                c.proto = 58;
            }
            c.src = r_addr(&rng, c.ipv6);
            do {
                c.dst = r_addr(&rng, c.ipv6);
            } while (c.dst.lo == c.src.lo);
            c.sp = (uint16_t) (1 + unit_rng_below(&rng, 3));
            c.dp = (uint16_t) (c.proto == 1 || c.proto == 58
                               ? 0 : 80 + unit_rng_below(&rng, 2));
            c.zone = (uint16_t) unit_rng_below(&rng, 3);
            /* Skip duplicates (and a reply of an earlier one, which the
             * tracker would not commit as new). */
            bool dup = false;
            for (size_t k = 0; k < n; k++) {
                const struct conn *o = &conns[k];
                bool same_kind = o->ipv6 == c.ipv6 && o->proto == c.proto
                                 && o->zone == c.zone;
                bool icmp = c.proto == 1 || c.proto == 58;
                dup = dup || (same_kind && ((o->src.lo == c.src.lo
                                             && o->dst.lo == c.dst.lo
                                             && o->sp == c.sp
                                             && o->dp == c.dp)
                                            || (o->src.lo == c.dst.lo
                                                && o->dst.lo == c.src.lo
                                                && (icmp ? o->sp == c.sp
                                                    : (o->sp == c.dp
                                                       && o->dp == c.sp)))));
            }
            if (!dup) {
                conns[n] = c;
                alive[n++] = true;
                commit(&r, &c, 0);
            }
        }

        /* A random match: fields of a random connection, each kept with
         * probability 1/2, sometimes a zone. */
        const struct conn *t = &conns[unit_rng_below(&rng, (uint32_t) n)];
        struct fdp_ct_match m;
        memset(&m, 0, sizeof m);
        char text[256] = "";
        bool icmp = t->proto == 1 || t->proto == 58;
        if (unit_rng_below(&rng, 2) || icmp) {
            snprintf(text + strlen(text), sizeof text - strlen(text),
                     "ct_nw_proto=%u,", t->proto);
        }
        if (unit_rng_below(&rng, 2)) {
            snprintf(text + strlen(text), sizeof text - strlen(text),
                     t->ipv6 ? "ct_ipv6_src=fd00::%u," : "ct_nw_src=10.0.0."
                     "%u,", (unsigned int) t->src.lo & 0xff);
        }
        if (unit_rng_below(&rng, 2)) {
            snprintf(text + strlen(text), sizeof text - strlen(text),
                     t->ipv6 ? "ct_ipv6_dst=fd00::%u," : "ct_nw_dst=10.0.0."
                     "%u,", (unsigned int) t->dst.lo & 0xff);
        }
        if (icmp) {
            snprintf(text + strlen(text), sizeof text - strlen(text),
                     "icmp_id=%u,icmp_type=%u,", t->sp,
                     t->ipv6 ? 128 : 8);
        } else if (strstr(text, "ct_nw_proto")) {
            if (unit_rng_below(&rng, 2)) {
                snprintf(text + strlen(text), sizeof text - strlen(text),
                         "ct_tp_src=%u,", t->sp);
            }
            if (unit_rng_below(&rng, 2)) {
                snprintf(text + strlen(text), sizeof text - strlen(text),
                         "ct_tp_dst=%u,", t->dp);
            }
        }
        size_t len = strlen(text);
        if (len) {
            text[len - 1] = '\0';
            char *msg = NULL;
            ck_assert_msg(!fdp_ct_match_parse_tuple(text, false, &m, &msg),
                          "%s: %s", text, msg);
        }
        uint16_t zone = (uint16_t) unit_rng_below(&rng, 3);
        bool with_zone = unit_rng_below(&rng, 2);

        /* The reference.  A full tuple without a reply tuple is one
         * lookup in one zone (zone 0 without one), as Open vSwitch. */
        bool full = (m.orig.src.lo || m.orig.src.hi)
                    && (m.orig.dst.lo || m.orig.dst.hi)
                    && (icmp || (m.orig.src_port && m.orig.dst_port));
        uint32_t want = 0;
        for (size_t k = 0; k < n; k++) {
            bool sel = full ? ref_exact(&m, with_zone ? zone : 0, &conns[k])
                            : ref_selects(&m, with_zone ? &zone : NULL,
                                          &conns[k]);
            if (sel) {
                alive[k] = false;
                want++;
            }
        }
        n_full += len && full;
        n_partial += len && !full;
        n_all += !len;
        n_removing += want > 0;
        uint32_t got;
        ck_assert_int_eq(fdp_dp_ct_flush(r.dp, with_zone ? &zone : NULL,
                                         len ? &m : NULL, &got), 0);
        if (!len) {
            want = (uint32_t) n;
            if (with_zone) {
                want = 0;
                for (size_t k = 0; k < n; k++) {
                    alive[k] = conns[k].zone != zone;
                    want += !alive[k];
                }
            } else {
                memset(alive, 0, sizeof alive);
            }
        }
        ck_assert_msg(got == want, "round %d: flush [%s]%s%u: removed %u, "
                      "the reference %u", round, text,
                      with_zone ? " zone=" : " ", with_zone ? zone : 0, got,
                      want);
        uint32_t left = 0;
        for (size_t k = 0; k < n; k++) {
            left += alive[k];
        }
        ck_assert_uint_eq(fdp_dp_ct_count(r.dp), left);
        struct survivors sv = { conns, alive, n, 0 };
        fdp_dp_ct_dump(r.dp, NULL, check_survivor, &sv);
        ck_assert_uint_eq(sv.seen, left);
        rig_destroy(&r);
    }
    printf("random flushes: %u full tuples, %u partial, %u without a "
           "tuple; %u removed something\n", n_full, n_partial, n_all,
           n_removing);
    ck_assert(n_full > 10 && n_partial > 10 && n_all > 0
              && n_removing > 100);
}
END_TEST

/* ---- Concurrency (run under ThreadSanitizer by scripts/test.sh) ---- */

struct conc {
    struct rig rig;
    bool stop;
    uint64_t progress;
};

/* A packet thread: commits and refreshes UDP and TCP connections over a
 * small set of tuples in zones 0 to 3, so that its commits meet the
 * control thread's flushes, limit and timeout changes. */
static void *
conc_packets(void *c_)
{
    struct conc *c = c_;
    struct fdp__ct_pmd *pmd;
    struct unit_rng rng;

    unit_rng_init(&rng, 0xc0c0);
    ck_assert_int_eq(fdp__ct_pmd_create(fdp__dp_ct(c->rig.dp), &pmd), 0);
    while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
        for (int i = 0; i < 16; i++) {
            uint32_t n = unit_rng_below(&rng, 256);
            struct conn k = { false, (n & 1) ? 17 : 6,
                              v4(0x0a000000 | (n >> 4)), v4(0x0b000001),
                              (uint16_t) (1000 + (n & 15)), 80,
                              (uint16_t) (n & 3) };
            struct fdp__ct_result res = exec_first(pmd, &k, n & 1);
            ck_assert(res.state & FDP_CT_TRK);
        }
        unit_progress_bump(&c->progress);
    }
    fdp__ct_pmd_destroy(pmd);
    return NULL;
}

static bool
conc_format(const struct fdp_ct_entry *e, void *aux)
{
    char *line = fdp_ct_entry_format(e, FDP_CT_FORMAT_VERBOSE
                                        | FDP_CT_FORMAT_STATS);
    ck_assert_ptr_nonnull(line);
    ck_assert(!strncmp(line, "udp,orig=(src=10.", 17)
              || !strncmp(line, "tcp,orig=(src=10.", 17));
    free(line);
    (*(size_t *) aux)++;
    return true;
}

START_TEST(concurrency)
{
    struct conc c = { .stop = false };
    pthread_t th;

    rig_init(&c.rig, 4096);
    pthread_create(&th, NULL, conc_packets, &c);
    for (int round = 0; round < 160; round++) {
        uint64_t t0 = unit_progress_get(&c.progress);
        uint16_t zone = (uint16_t) (round & 3);
        struct fdp_ct_match m;
        size_t n = 0;

        memset(&m, 0, sizeof m);
        switch (round % 8) {
        case 0:
            /* The first per-zone timeout allocates the zones' table
             * while the packet thread reads it. */
            ck_assert_int_eq(fdp_dp_ct_set_timeout(
                c.rig.dp, &zone, (enum fdp_ct_tp_attr) (round % 11),
                (uint32_t) (1 + round)), 0);
            break;
        case 1:
            ck_assert_int_eq(fdp_ct_match_parse_tuple(
                "ct_nw_proto=17,ct_tp_dst=80", false, &m, NULL), 0);
            ck_assert_int_eq(fdp_dp_ct_flush(c.rig.dp, NULL, &m, NULL), 0);
            break;
        case 2:
            ck_assert_int_eq(fdp_dp_ct_flush(c.rig.dp, &zone, NULL, NULL),
                             0);
            break;
        case 3:
            fdp_dp_ct_dump(c.rig.dp, NULL, conc_format, &n);
            ck_assert_uint_le(n, 4096);
            break;
        case 4:
            fdp_dp_ct_set_zone_limit(c.rig.dp, zone, (uint32_t) round % 7);
            fdp_dp_ct_set_default_limit(c.rig.dp, (uint32_t) round % 5);
            break;
        case 5:
            ck_assert_int_eq(fdp_dp_ct_set_maxconns(c.rig.dp,
                                                    100 + (uint32_t) round),
                             0);
            fdp_dp_ct_set_tcp_seq_chk(c.rig.dp, round & 1);
            break;
        case 6: {
            struct fdp_ct_stats st;
            fdp_dp_ct_stats(c.rig.dp, &st);
            (void) fdp_dp_ct_get_timeout(c.rig.dp, &zone,
                                         FDP_CT_TP_UDP_FIRST, NULL);
            ck_assert_uint_le(fdp_dp_ct_zone_count(c.rig.dp, zone),
                              fdp_dp_ct_count(c.rig.dp) + 1);
            break;
        }
        case 7:
            ck_assert_int_eq(fdp_dp_ct_set_timeout(c.rig.dp, &zone,
                                                   FDP_CT_TP_UDP_FIRST, 0),
                             0);
            ck_assert_int_eq(fdp_dp_ct_set_timeout(c.rig.dp, NULL,
                                                   FDP_CT_TP_TCP_SYN_SENT,
                                                   (uint32_t) (10 + round)),
                             0);
            break;
        }
        unit_progress_wait(&c.progress, t0 + 2, "packet thread");
    }
    __atomic_store_n(&c.stop, true, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    /* What is left is consistent: a flush removes exactly the count. */
    uint32_t count = fdp_dp_ct_count(c.rig.dp), n;
    ck_assert_int_eq(fdp_dp_ct_flush(c.rig.dp, NULL, NULL, &n), 0);
    ck_assert_uint_eq(n, count);
    rig_destroy(&c.rig);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("dp-ct");
    TCase *tc = unit_tcase(s, "control");
    tcase_add_test(tc, format_matches_ovs);
    tcase_add_test(tc, parse_tuples);
    tcase_add_test(tc, dump_count_flush);
    tcase_add_test(tc, limits_and_maxconns);
    tcase_add_test(tc, timeouts_per_zone);
    tc = unit_tcase(s, "reference");
    tcase_add_test(tc, random_flush_vs_reference);
    tc = unit_tcase(s, "concurrency");
    tcase_add_test(tc, concurrency);
    return unit_run(s);
}
