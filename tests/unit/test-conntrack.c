/*
 * Unit tests for the connection tracker (datapath/conntrack*.c).
 *
 * The reference is a plain list of connections that applies Open
 * vSwitch's rules (process_one(), conn_update(), the other and ICMP state
 * machines, the default timeouts, limits, force) with a linear scan; TCP
 * window tracking in the reference calls the tracker's own pf code on the
 * reference's copy of the peers (the hand-written TCP cases check that
 * code against Open vSwitch's behaviour).  Random packet sequences (TCP
 * handshakes, data, FIN, RST, out-of-window segments and retransmissions,
 * UDP both ways, ICMP echo and errors, "other" protocols, corrupted
 * packets, IPv4 and IPv6, several zones, commits, forces, marks, labels,
 * limit changes, flushes and a fake clock) go through both in batches and
 * are compared packet by packet, then connection by connection.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/datapath.h>
#include "datapath/bytes.h"
#include "datapath/conntrack.h"
#include "datapath/conntrack-private.h"
#include "datapath/execute.h"
#include "lib/field.h"
#include "unit.h"

/* ---- Packets ---- */

enum { P_TCP = 6, P_UDP = 17, P_ICMP = 1, P_ICMP6 = 58, P_GRE = 47,
       P_SCTP = 132 };

struct tpkt {
    uint8_t buf[512];
    struct fdp__pkt pkt;
};

/* One direction of traffic, as the generator sees it. */
struct tflow {
    bool ipv6;
    uint8_t proto;
    struct fdp_value src, dst;
    uint16_t sport, dport;      /* Ports, or for ICMP: id and type. */
};

/* What to build: an IP packet 'f' with a transport header. */
struct tspec {
    struct tflow f;
    uint16_t tcp_flags;
    uint32_t seq, ack;
    uint16_t win;
    uint8_t wscale;             /* TCP option, 0xff none. */
    uint16_t payload;
    uint8_t icmp_type, icmp_code;
    const uint8_t *inner;       /* ICMP error body. */
    size_t inner_size;
    bool bad_csum;
    bool fragment;
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

/* Builds the IP packet (no Ethernet) at 'p'; returns its size. */
static size_t
build_ip(uint8_t *p, const struct tspec *s)
{
    const struct tflow *f = &s->f;
    size_t l3 = f->ipv6 ? 40 : 20;
    uint8_t *l4 = p + l3;
    size_t l4_size;

    switch (f->proto) {
    case P_TCP: {
        size_t hdr = s->wscale != 0xff ? 24 : 20;
        memset(l4, 0, hdr + s->payload);
        fdp__put16(l4, f->sport);
        fdp__put16(l4 + 2, f->dport);
        fdp__put32(l4 + 4, s->seq);
        fdp__put32(l4 + 8, s->ack);
        fdp__put16(l4 + 12, (uint16_t) ((hdr / 4) << 12 | s->tcp_flags));
        fdp__put16(l4 + 14, s->win);
        if (s->wscale != 0xff) {
            l4[20] = 3;
            l4[21] = 3;
            l4[22] = s->wscale;
            l4[23] = 1;
        }
        l4_size = hdr + s->payload;
        break;
    }
    case P_UDP:
        memset(l4, 0, 8 + s->payload);
        fdp__put16(l4, f->sport);
        fdp__put16(l4 + 2, f->dport);
        fdp__put16(l4 + 4, (uint16_t) (8 + s->payload));
        l4_size = 8 + s->payload;
        break;
    case P_ICMP:
    case P_ICMP6:
        memset(l4, 0, 8);
        l4[0] = s->icmp_type;
        l4[1] = s->icmp_code;
        if (s->inner) {
            memcpy(l4 + 8, s->inner, s->inner_size);
            l4_size = 8 + s->inner_size;
        } else {
            fdp__put16(l4 + 4, f->sport);
            fdp__put16(l4 + 6, 1);
            l4_size = 8;
        }
        break;
    default:
        memset(l4, 0xab, 8);
        l4_size = 8;
        break;
    }

    if (f->ipv6) {
        memset(p, 0, 40);
        p[0] = 0x60;
        fdp__put16(p + 4, (uint16_t) l4_size);
        p[6] = f->proto;
        p[7] = 64;
        put_addr(p + 8, true, f->src);
        put_addr(p + 24, true, f->dst);
    } else {
        memset(p, 0, 20);
        p[0] = 0x45;
        fdp__put16(p + 2, (uint16_t) (20 + l4_size));
        if (s->fragment) {
            fdp__put16(p + 6, 0x2000);      /* MF. */
        }
        p[8] = 64;
        p[9] = f->proto;
        put_addr(p + 12, false, f->src);
        put_addr(p + 16, false, f->dst);
        fdp__put16(p + 10, fdp__csum(0, p, 20));
    }

    /* The transport checksum. */
    int csum_off = f->proto == P_TCP ? 16 : f->proto == P_UDP ? 6
                   : (f->proto == P_ICMP || f->proto == P_ICMP6) ? 2 : -1;
    if (csum_off >= 0) {
        uint32_t sum = 0;
        if (f->proto != P_ICMP || f->ipv6) {
            uint8_t ph[40];
            size_t n;
            if (f->ipv6) {
                memcpy(ph, p + 8, 32);
                fdp__put32(ph + 32, (uint32_t) l4_size);
                fdp__put32(ph + 36, f->proto);
                n = 40;
            } else {
                memcpy(ph, p + 12, 8);
                ph[8] = 0;
                ph[9] = f->proto;
                fdp__put16(ph + 10, (uint16_t) l4_size);
                n = 12;
            }
            sum = fdp__csum_add(0, ph, n);
        }
        uint16_t c = fdp__csum(sum, l4, l4_size);
        if (f->proto == P_UDP && !c) {
            c = 0xffff;
        }
        fdp__put16(l4 + csum_off, c ^ (s->bad_csum ? 0x1234 : 0));
    }
    return l3 + l4_size;
}

static void
build(struct tpkt *t, const struct tspec *s)
{
    uint8_t *p = t->buf;
    memset(p, 0, 14);
    p[0] = 2;
    p[6] = 2;
    p[11] = 1;
    fdp__put16(p + 12, s->f.ipv6 ? 0x86dd : 0x0800);
    size_t size = 14 + build_ip(p + 14, s);
    t->pkt.data = t->buf;
    t->pkt.size = (uint32_t) size;
    t->pkt.headroom = 0;
    fdp_packet_extract(t->buf, size, 1, &t->pkt.key, &t->pkt.layout);
}

static struct tspec
spec(const struct tflow *f)
{
    return (struct tspec) { .f = *f, .wscale = 0xff, .win = 1000 };
}

static struct tflow
rev_flow(const struct tflow *f)
{
    struct tflow r = *f;
    r.src = f->dst;
    r.dst = f->src;
    if (f->proto != P_ICMP && f->proto != P_ICMP6) {
        r.sport = f->dport;
        r.dport = f->sport;
    }
    return r;
}

static struct fdp_value
v4(uint32_t a)
{
    return (struct fdp_value) { 0, a };
}

/* ---- Running one packet ---- */

struct env {
    struct fdp__ct *ct;
    struct fdp__ct_pmd *pmd;
    uint64_t now;
};

static void
env_init(struct env *e, uint32_t capacity)
{
    ck_assert_int_eq(fdp__ct_create(capacity, &e->ct), 0);
    ck_assert_int_eq(fdp__ct_pmd_create(e->ct, &e->pmd), 0);
    e->now = 1000000;
}

static void
env_destroy(struct env *e)
{
    fdp__ct_pmd_destroy(e->pmd);
    fdp__ct_destroy(e->ct);
}

static struct fdp__ct_result
run(struct env *e, const struct tspec *s, const struct fdp__ct_args *args)
{
    struct tpkt t;
    struct fdp__pkt *p = &t.pkt;
    struct fdp__ct_result r;

    build(&t, s);
    fdp__ct_execute(e->pmd, &p, 1, args, NULL, e->now, &r);
    ck_assert(r.state & FDP_CT_TRK);
    return r;
}

static const struct fdp__ct_args commit0 = { .commit = true };
static const struct fdp__ct_args lookup0 = { .commit = false };

/* ---- Hand-written cases ---- */

START_TEST(udp_basics)
{
    struct env e;
    env_init(&e, 1024);
    struct tflow f = { false, P_UDP, v4(0x0a000001), v4(0x0a000002), 1000,
                       53 };
    struct tflow r = rev_flow(&f);
    struct tspec sf = spec(&f), sr = spec(&r);

    /* Uncommitted: +new, nothing created. */
    struct fdp__ct_result res = run(&e, &sf, &lookup0);
    ck_assert_uint_eq(res.state, FDP_CT_NEW | FDP_CT_TRK);
    ck_assert(res.has_tuple);
    ck_assert_uint_eq(res.orig.src.lo, 0x0a000001);
    ck_assert_uint_eq(res.orig.dst_port, 53);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 0);

    res = run(&e, &sf, &commit0);
    ck_assert_uint_eq(res.state, FDP_CT_NEW | FDP_CT_TRK);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 1);
    /* Still new until the reply. */
    res = run(&e, &sf, &lookup0);
    ck_assert_uint_eq(res.state, FDP_CT_NEW | FDP_CT_TRK);
    res = run(&e, &sr, &lookup0);
    ck_assert_uint_eq(res.state, FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK);
    ck_assert_uint_eq(res.orig.src.lo, 0x0a000001);   /* Original dir. */
    ck_assert_uint_eq(res.orig.src_port, 1000);
    res = run(&e, &sf, &lookup0);
    ck_assert_uint_eq(res.state, FDP_CT_EST | FDP_CT_TRK);

    /* Another zone does not see it. */
    struct fdp__ct_args z1 = { .zone = 1 };
    res = run(&e, &sr, &z1);
    ck_assert_uint_eq(res.state, FDP_CT_NEW | FDP_CT_TRK);
    ck_assert_uint_eq(res.zone, 1);

    /* Mark and label, under masks. */
    struct fdp__ct_args mk = { .mark = 0x12, .mark_mask = 0xff,
                               .label = { 1, 2 }, .label_mask = { ~0ull, 0 } };
    res = run(&e, &sf, &mk);
    ck_assert_uint_eq(res.mark, 0x12);
    ck_assert_uint_eq(res.label.hi, 1);
    ck_assert_uint_eq(res.label.lo, 0);
    struct fdp__ct_args mk2 = { .mark = 0x3400, .mark_mask = 0xff00 };
    res = run(&e, &sr, &mk2);
    ck_assert_uint_eq(res.mark, 0x3412);

    /* Expiry: bidirectional UDP lives 30 s after its last packet. */
    e.now += 29999;
    res = run(&e, &sf, &lookup0);
    ck_assert_uint_eq(res.state, FDP_CT_EST | FDP_CT_TRK);
    e.now += 30000;
    res = run(&e, &sf, &lookup0);
    ck_assert_uint_eq(res.state, FDP_CT_NEW | FDP_CT_TRK);
    ck_assert_uint_eq(res.mark, 0);
    bool wrapped;
    ck_assert_uint_eq(fdp__ct_sweep(e.ct, e.now, 100, &wrapped), 1);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 0);

    /* Invalid: bad checksum, port 0, a fragment. */
    sf.bad_csum = true;
    res = run(&e, &sf, &commit0);
    ck_assert_uint_eq(res.state, FDP_CT_INV | FDP_CT_TRK);
    ck_assert(!res.has_tuple);
    sf.bad_csum = false;
    sf.fragment = true;
    ck_assert_uint_eq(run(&e, &sf, &commit0).state, FDP_CT_INV | FDP_CT_TRK);
    sf.fragment = false;
    sf.f.sport = 0;
    ck_assert_uint_eq(run(&e, &sf, &commit0).state, FDP_CT_INV | FDP_CT_TRK);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 0);
    env_destroy(&e);
}
END_TEST

START_TEST(icmp_echo_and_errors)
{
    struct env e;
    env_init(&e, 1024);
    for (int ipv6 = 0; ipv6 < 2; ipv6++) {
        struct fdp_value a = ipv6 ? (struct fdp_value) { 0x20010db8ull << 32, 1 }
                             : v4(0x0a000001);
        struct fdp_value b = ipv6 ? (struct fdp_value) { 0x20010db8ull << 32, 2 }
                             : v4(0x0a000002);
        struct fdp_value rtr = ipv6 ? (struct fdp_value) { 0x20010db8ull << 32, 9 }
                               : v4(0x0a0000fe);
        uint8_t icmp = ipv6 ? P_ICMP6 : P_ICMP;
        uint8_t req = ipv6 ? 128 : 8, rep = ipv6 ? 129 : 0;
        struct tflow f = { (bool) ipv6, icmp, a, b, 77, 0 };
        struct tspec s = spec(&f);
        s.icmp_type = req;

        /* A reply with no request is invalid; the request is new. */
        struct tspec sr = spec(&f);
        sr.f = rev_flow(&f);
        sr.icmp_type = rep;
        ck_assert_uint_eq(run(&e, &sr, &commit0).state,
                          FDP_CT_INV | FDP_CT_TRK);
        struct fdp__ct_result res = run(&e, &s, &commit0);
        ck_assert_uint_eq(res.state, FDP_CT_NEW | FDP_CT_TRK);
        ck_assert_uint_eq(res.orig.src_port, req);
        ck_assert_uint_eq(res.orig.dst_port, 0);
        ck_assert_uint_eq(res.orig.icmp_id, 77);
        res = run(&e, &sr, &lookup0);
        ck_assert_uint_eq(res.state, FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK);
        /* Another id is another connection. */
        s.f.sport = 78;
        ck_assert_uint_eq(run(&e, &s, &lookup0).state,
                          FDP_CT_NEW | FDP_CT_TRK);

        /* A UDP connection a -> b, and a router's error about it: +rel;
         * b's error about the reply direction: +rel+rpl. */
        struct tflow u = { (bool) ipv6, P_UDP, a, b, 5000, 6000 };
        struct tspec su = spec(&u);
        ck_assert_uint_eq(run(&e, &su, &commit0).state,
                          FDP_CT_NEW | FDP_CT_TRK);
        struct tpkt inner;
        build(&inner, &su);
        struct tspec err = spec(&(struct tflow) { (bool) ipv6, icmp, rtr, a,
                                                  0, 0 });
        err.icmp_type = ipv6 ? 1 : 3;
        err.inner = inner.buf + 14;
        err.inner_size = (ipv6 ? 40 : 20) + 8;
        res = run(&e, &err, &commit0);
        ck_assert_uint_eq(res.state, FDP_CT_REL | FDP_CT_RPL | FDP_CT_TRK);
        ck_assert_uint_eq(res.orig.src_port, 5000);
        struct tspec sur = spec(&u);
        sur.f = rev_flow(&u);
        build(&inner, &sur);
        err.f.dst = b;
        res = run(&e, &err, &commit0);
        ck_assert_uint_eq(res.state, FDP_CT_REL | FDP_CT_TRK);
        /* The inner source must be the outer destination. */
        err.f.dst = rtr;
        ck_assert_uint_eq(run(&e, &err, &commit0).state,
                          FDP_CT_INV | FDP_CT_TRK);
        /* An error about no connection is invalid. */
        su.f.dport = 6001;
        build(&inner, &su);
        err.f.dst = a;
        ck_assert_uint_eq(run(&e, &err, &commit0).state,
                          FDP_CT_INV | FDP_CT_TRK);
    }
    ck_assert_uint_eq(fdp__ct_count(e.ct), 4);
    env_destroy(&e);
}
END_TEST

/* A dump callback that keeps the last entry. */
static int grabbed;
static bool
grab(const struct fdp__ct_entry *en, void *ent)
{
    *(struct fdp__ct_entry *) ent = *en;
    grabbed++;
    return true;
}

/* TCP through a handshake, data, an out-of-window segment, FIN close and a
 * reopen, with Open vSwitch's ct_state for each. */
START_TEST(tcp_lifecycle)
{
    struct env e;
    env_init(&e, 1024);
    struct tflow c2s = { false, P_TCP, v4(0x0a000001), v4(0x0a000002),
                         40000, 80 };
    struct tflow s2c = rev_flow(&c2s);
    struct tspec s;
    enum { SYN = 2, ACK = 0x10, FIN = 1, RST = 4, PSH = 8 };
    struct fdp__ct_result res;

#define SEG(FLOW, FLAGS, SEQ, ACKN, LEN)                        \
    (s = spec(&(FLOW)), s.tcp_flags = (FLAGS), s.seq = (SEQ),   \
     s.ack = (ACKN), s.payload = (LEN), run(&e, &s, &commit0))

    /* A SYN-ACK cannot open a connection; SYN|FIN is never valid. */
    ck_assert_uint_eq(SEG(c2s, SYN | ACK, 1000, 1, 0).state,
                      FDP_CT_INV | FDP_CT_TRK);
    ck_assert_uint_eq(SEG(c2s, SYN | FIN, 1000, 0, 0).state,
                      FDP_CT_INV | FDP_CT_TRK);
    ck_assert_uint_eq(SEG(c2s, SYN, 1000, 0, 0).state,
                      FDP_CT_NEW | FDP_CT_TRK);
    /* A retransmitted SYN is still new. */
    ck_assert_uint_eq(SEG(c2s, SYN, 1000, 0, 0).state,
                      FDP_CT_NEW | FDP_CT_TRK);
    res = SEG(s2c, SYN | ACK, 5000, 1001, 0);
    ck_assert_uint_eq(res.state, FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK);
    ck_assert_uint_eq(SEG(c2s, ACK, 1001, 5001, 0).state,
                      FDP_CT_EST | FDP_CT_TRK);
    ck_assert_uint_eq(SEG(c2s, ACK | PSH, 1001, 5001, 100).state,
                      FDP_CT_EST | FDP_CT_TRK);
    ck_assert_uint_eq(SEG(s2c, ACK, 5001, 1101, 0).state,
                      FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK);
    /* Far out of window: invalid, unless tcp_seq_chk is off. */
    ck_assert_uint_eq(SEG(c2s, ACK | PSH, 1101 + 1000000, 5001, 10).state,
                      FDP_CT_INV | FDP_CT_TRK);
    fdp__ct_set_tcp_seq_chk(e.ct, false);
    ck_assert_uint_eq(SEG(c2s, ACK | PSH, 1101 + 1000000, 5001, 0).state,
                      FDP_CT_EST | FDP_CT_TRK);
    fdp__ct_set_tcp_seq_chk(e.ct, true);
    /* A retransmission of old data is fine. */
    ck_assert_uint_eq(SEG(c2s, ACK | PSH, 1001, 5001, 100).state,
                      FDP_CT_EST | FDP_CT_TRK);
    /* Established: 24 h. */
    struct fdp__ct_entry ent;
    grabbed = 0;
    fdp__ct_dump(e.ct, NULL, e.now, grab, &ent);
    ck_assert_int_eq(grabbed, 1);
    ck_assert_int_eq(ent.tm, FDP__CT_TM_TCP_ESTABLISHED);
    ck_assert_uint_eq(ent.expiry_ms - e.now, 86400 * 1000);
    ck_assert_uint_eq(ent.tcp_state[0], FDP__CT_TCPS_ESTABLISHED);

    /* Close: FIN both ways, then ACKs. */
    ck_assert_uint_eq(SEG(c2s, FIN | ACK, 1101, 5001, 0).state,
                      FDP_CT_EST | FDP_CT_TRK);
    ck_assert_uint_eq(SEG(s2c, FIN | ACK, 5001, 1102, 0).state,
                      FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK);
    ck_assert_uint_eq(SEG(c2s, ACK, 1102, 5002, 0).state,
                      FDP_CT_EST | FDP_CT_TRK);
    fdp__ct_dump(e.ct, NULL, e.now, grab, &ent);
    ck_assert_int_eq(ent.tm, FDP__CT_TM_TCP_CLOSED);
    ck_assert_uint_eq(ent.tcp_state[0], FDP__CT_TCPS_FIN_WAIT_2);

    /* A new SYN with the same ports ends the old one and starts anew. */
    ck_assert_uint_eq(fdp__ct_count(e.ct), 1);
    res = SEG(c2s, SYN, 9000, 0, 0);
    ck_assert_uint_eq(res.state, FDP_CT_NEW | FDP_CT_TRK);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 1);
    /* RST in window closes it: TIME_WAIT both sides. */
    ck_assert_uint_eq(SEG(s2c, RST | ACK, 0, 9001, 0).state,
                      FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK);
    fdp__ct_dump(e.ct, NULL, e.now, grab, &ent);
    ck_assert_uint_eq(ent.tcp_state[1], FDP__CT_TCPS_TIME_WAIT);
    /* Mid-stream pickup: an ACK with no SYN creates a connection. */
    struct tflow other = c2s;
    other.sport = 40001;
    ck_assert_uint_eq(SEG(other, ACK, 77, 88, 10).state,
                      FDP_CT_NEW | FDP_CT_TRK);
#undef SEG
    env_destroy(&e);
}
END_TEST

START_TEST(force_and_limits)
{
    struct env e;
    env_init(&e, 1024);
    struct tflow f = { false, P_UDP, v4(1), v4(2), 1, 2 };
    struct tflow r = rev_flow(&f);
    struct tspec sf = spec(&f), sr = spec(&r);
    struct fdp__ct_args force = { .commit = true, .force = true,
                                  .mark = 7, .mark_mask = 0xff };

    run(&e, &sf, &commit0);
    /* ct(force) in the original direction keeps the connection. */
    struct fdp__ct_result res = run(&e, &sf, &force);
    ck_assert_uint_eq(res.state, FDP_CT_NEW | FDP_CT_TRK);
    ck_assert_uint_eq(res.mark, 7);
    /* In the reply direction it ends it and starts the reverse one. */
    res = run(&e, &sr, &force);
    ck_assert_uint_eq(res.state, FDP_CT_NEW | FDP_CT_TRK);
    ck_assert_uint_eq(res.orig.src.lo, 2);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 1);
    res = run(&e, &sf, &lookup0);
    ck_assert_uint_eq(res.state, FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK);

    /* Limits: total, per zone, default zone limit. */
    ck_assert_int_eq(fdp__ct_set_limit(e.ct, 0), EINVAL);
    ck_assert_int_eq(fdp__ct_set_limit(e.ct, 2000), EINVAL);
    ck_assert_int_eq(fdp__ct_set_limit(e.ct, 3), 0);
    for (int i = 0; i < 5; i++) {
        sf.f.sport = (uint16_t) (100 + i);
        run(&e, &sf, &commit0);
    }
    ck_assert_uint_eq(fdp__ct_count(e.ct), 3);
    struct fdp__ct_pmd_stats st;
    fdp__ct_pmd_stats(e.pmd, &st);
    ck_assert_uint_eq(st.n_full, 3);
    ck_assert_int_eq(fdp__ct_set_limit(e.ct, 100), 0);
    fdp__ct_set_default_zone_limit(e.ct, 2);
    fdp__ct_set_zone_limit(e.ct, 5, 4);
    struct fdp__ct_args z5 = { .commit = true, .zone = 5 };
    struct fdp__ct_args z6 = { .commit = true, .zone = 6 };
    for (int i = 0; i < 10; i++) {
        sf.f.sport = (uint16_t) (200 + i);
        run(&e, &sf, &z5);
        run(&e, &sf, &z6);
    }
    ck_assert_uint_eq(fdp__ct_zone_count(e.ct, 5), 4);
    ck_assert_uint_eq(fdp__ct_zone_count(e.ct, 6), 2);

    /* Flushes: a tuple, a zone, everything. */
    struct fdp__ct_tuple t = { .src = v4(1), .dst = v4(2), .src_port = 200,
                               .dst_port = 2, .proto = P_UDP };
    uint16_t zone = 5;
    ck_assert_uint_eq(fdp__ct_flush(e.ct, &zone, &t), 1);
    ck_assert_uint_eq(fdp__ct_flush(e.ct, &zone, &t), 0);
    ck_assert_uint_eq(fdp__ct_zone_count(e.ct, 5), 3);
    ck_assert_uint_eq(fdp__ct_flush(e.ct, &zone, NULL), 3);
    ck_assert_uint_eq(fdp__ct_flush(e.ct, NULL, NULL), 5);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 0);

    /* Timeouts. */
    ck_assert_uint_eq(fdp__ct_get_timeout(e.ct, FDP__CT_TM_TCP_CLOSING), 900);
    ck_assert_int_eq(fdp__ct_set_timeout(e.ct, FDP__CT_TM_OTHER_FIRST, 0),
                     EINVAL);
    ck_assert_int_eq(fdp__ct_set_timeout(e.ct, FDP__CT_TM_OTHER_FIRST, 5), 0);
    sf.f.sport = 300;
    run(&e, &sf, &commit0);
    e.now += 5000;
    ck_assert_uint_eq(run(&e, &sf, &lookup0).state, FDP_CT_NEW | FDP_CT_TRK);
    bool wrapped;
    ck_assert_uint_eq(fdp__ct_sweep(e.ct, e.now, 1000, &wrapped), 1);
    env_destroy(&e);
}
END_TEST

/* ---- NAT ---- */

/* From the reference model below. */
static bool tuple_eq(const struct fdp__ct_tuple *,
                     const struct fdp__ct_tuple *);
static struct fdp__ct_tuple m_reverse(const struct fdp__ct_tuple *);

/* Runs 't' (built) through the tracker as it is, rewritten in place. */
static struct fdp__ct_result
run_pkt(struct env *e, struct tpkt *t, const struct fdp__ct_args *args)
{
    struct fdp__pkt *p = &t->pkt;
    struct fdp__ct_result r;

    fdp__ct_execute(e->pmd, &p, 1, args, NULL, e->now, &r);
    ck_assert(r.state & FDP_CT_TRK);
    return r;
}

/* Re-parses a rewritten packet, as the next stage would. */
static void
reparse(struct tpkt *t)
{
    fdp_packet_extract(t->buf, t->pkt.size, 1, &t->pkt.key, &t->pkt.layout);
}

/* The pseudo-header sum of the IP header at 'l3' for 'len' bytes of
 * 'proto'. */
static uint32_t
pseudo(const uint8_t *l3, bool ipv6, uint8_t proto, size_t len)
{
    uint8_t ph[40];
    if (ipv6) {
        memcpy(ph, l3 + 8, 32);
        fdp__put32(ph + 32, (uint32_t) len);
        fdp__put32(ph + 36, proto);
        return fdp__csum_add(0, ph, 40);
    }
    memcpy(ph, l3 + 12, 8);
    ph[8] = 0;
    ph[9] = proto;
    fdp__put16(ph + 10, (uint16_t) len);
    return fdp__csum_add(0, ph, 12);
}

/* Checks, from scratch, every checksum of the IP packet at 'l3' ('size'
 * bytes): the IPv4 header's, the transport's (a UDP/IPv4 zero stays
 * allowed), and for an ICMP error the quoted header's and, when the
 * quote holds the whole transport segment, its checksum too. */
static void
check_csums(const uint8_t *l3, size_t size, bool inner)
{
    bool ipv6 = (l3[0] >> 4) == 6;
    size_t ihl = ipv6 ? 40 : (size_t) (l3[0] & 0xf) * 4;
    uint8_t proto = l3[ipv6 ? 6 : 9];
    size_t len = ipv6 ? 40 + fdp__get16(l3 + 4) : fdp__get16(l3 + 2);
    if (!ipv6) {
        ck_assert_msg(fdp__csum(0, l3, ihl) == 0, "IPv4 header checksum");
    }
    if (len > size) {
        ck_assert_msg(inner, "truncated outer packet");
        return;                 /* A quote: only what it holds. */
    }
    const uint8_t *l4 = l3 + ihl;
    size_t l4_len = len - ihl;
    switch (proto) {
    case P_TCP:
        ck_assert_msg(fdp__csum(pseudo(l3, ipv6, proto, l4_len), l4, l4_len)
                      == 0, "TCP checksum");
        break;
    case P_UDP:
        if (ipv6 || fdp__get16(l4 + 6)) {
            ck_assert_msg(fdp__csum(pseudo(l3, ipv6, proto, l4_len), l4,
                                    l4_len) == 0, "UDP checksum");
        }
        break;
    case P_ICMP:
    case P_ICMP6:
        ck_assert_msg(fdp__csum(ipv6 ? pseudo(l3, true, proto, l4_len) : 0,
                                l4, l4_len) == 0, "ICMP checksum");
        if (!inner && l4[0] != 8 && l4[0] != 0 && l4[0] != 128
            && l4[0] != 129) {
            check_csums(l4 + 8, l4_len - 8, true);
        }
        break;
    }
}

/* The addresses and ports of the IP packet at 'l3' (ICMP: the id as the
 * source port). */
struct seen {
    struct fdp_value src, dst;
    uint16_t sport, dport;
};

static struct seen
seen_at(const uint8_t *l3)
{
    bool ipv6 = (l3[0] >> 4) == 6;
    struct seen s;
    memset(&s, 0, sizeof s);
    if (ipv6) {
        s.src.hi = (uint64_t) fdp__get32(l3 + 8) << 32 | fdp__get32(l3 + 12);
        s.src.lo = (uint64_t) fdp__get32(l3 + 16) << 32 | fdp__get32(l3 + 20);
        s.dst.hi = (uint64_t) fdp__get32(l3 + 24) << 32 | fdp__get32(l3 + 28);
        s.dst.lo = (uint64_t) fdp__get32(l3 + 32) << 32 | fdp__get32(l3 + 36);
    } else {
        s.src.lo = fdp__get32(l3 + 12);
        s.dst.lo = fdp__get32(l3 + 16);
    }
    const uint8_t *l4 = l3 + (ipv6 ? 40 : (size_t) (l3[0] & 0xf) * 4);
    uint8_t proto = l3[ipv6 ? 6 : 9];
    if (proto == P_TCP || proto == P_UDP) {
        s.sport = fdp__get16(l4);
        s.dport = fdp__get16(l4 + 2);
    } else if (proto == P_ICMP || proto == P_ICMP6) {
        s.sport = fdp__get16(l4 + 4);
    }
    return s;
}

static struct seen
seen_pkt(const struct tpkt *t)
{
    check_csums(t->buf + 14, t->pkt.size - 14, false);
    return seen_at(t->buf + 14);
}

static bool
val_eq(struct fdp_value a, struct fdp_value b)
{
    return a.hi == b.hi && a.lo == b.lo;
}

static struct fdp__ct_nat
nat_range(uint8_t flags, struct fdp_value lo, struct fdp_value hi,
          uint16_t pmin, uint16_t pmax)
{
    struct fdp__ct_nat n = { .flags = flags, .port_min = pmin,
                             .port_max = pmax, .addr_min = lo,
                             .addr_max = hi };
    return n;
}

/* Many clients SNATed to one address and a port range as large as their
 * number: each gets a distinct (address, port), replies come back to the
 * right client, every checksum verifies; one client more finds the range
 * exhausted (+new, no connection, as Open vSwitch); a flushed
 * connection's tuple is free again. */
START_TEST(nat_snat_many_clients)
{
    enum { N = 100 };
    struct env e;
    env_init(&e, 4096);
    for (int ipv6 = 0; ipv6 < 2; ipv6++) {
        struct fdp_value pub = ipv6
            ? (struct fdp_value) { 0x20010db8ull << 32 | 0xffff, 7 }
            : v4(0xc0a80001);
        struct fdp_value srv = ipv6
            ? (struct fdp_value) { 0x20010db8ull << 32 | 0xeeee, 1 }
            : v4(0x08080808);
        struct fdp__ct_nat nat = nat_range(FDP__NAT_SRC | FDP__NAT_ADDR
                                           | FDP__NAT_PORT
                                           | (ipv6 ? FDP__NAT_IPV6 : 0),
                                           pub, pub, 5000, 5000 + N - 1);
        struct fdp__ct_args snat = { .commit = true, .nat = &nat,
                                     .zone = (uint16_t) (10 + ipv6) };
        struct fdp__ct_nat plain = { .flags = 0 };
        struct fdp__ct_args pnat = { .nat = &plain, .zone = snat.zone };
        static bool used[N];
        memset(used, 0, sizeof used);
        struct seen out[N + 1];
        for (int i = 0; i <= N; i++) {
            /* Half the clients share one source port, so that most must
             * move. */
            struct fdp_value cli = ipv6
                ? (struct fdp_value) { 0x20010db8ull << 32, 100 + i }
                : v4(0x0a000000 | (uint32_t) (100 + i));
            struct tflow f = { (bool) ipv6, P_UDP, cli, srv,
                               (uint16_t) (i % 2 ? 40000 + i : 5000), 53 };
            struct tspec s = spec(&f);
            s.payload = 5;
            struct tpkt t;
            build(&t, &s);
            struct fdp__ct_result r = run_pkt(&e, &t, &snat);
            out[i] = seen_pkt(&t);
            if (i == N) {
                /* Exhausted: +new, untouched, not committed. */
                ck_assert_uint_eq(r.state, FDP_CT_NEW | FDP_CT_TRK);
                ck_assert(val_eq(out[i].src, cli));
                ck_assert_uint_eq(out[i].sport, f.sport);
                struct fdp__ct_pmd_stats st;
                fdp__ct_pmd_stats(e.pmd, &st);
                ck_assert_uint_eq(st.n_nat_exhausted, (uint64_t) ipv6 + 1);
                break;
            }
            ck_assert_uint_eq(r.state, FDP_CT_NEW | FDP_CT_SNAT
                              | FDP_CT_TRK);
            ck_assert(val_eq(r.orig.src, cli));
            ck_assert_uint_eq(r.orig.src_port, f.sport);
            ck_assert(val_eq(out[i].src, pub));
            ck_assert(val_eq(out[i].dst, srv));
            ck_assert_uint_eq(out[i].dport, 53);
            ck_assert_uint_ge(out[i].sport, 5000);
            ck_assert_uint_lt(out[i].sport, 5000 + N);
            ck_assert_msg(!used[out[i].sport - 5000], "port %u twice",
                          out[i].sport);
            used[out[i].sport - 5000] = true;
        }
        ck_assert_uint_eq(fdp__ct_zone_count(e.ct, snat.zone), N);

        /* Replies, to the public address and port: back to the client. */
        for (int i = 0; i < N; i++) {
            struct tflow rf = { (bool) ipv6, P_UDP, srv, pub, 53,
                                out[i].sport };
            struct tspec s = spec(&rf);
            s.payload = 3;
            struct tpkt t;
            build(&t, &s);
            struct fdp__ct_result r = run_pkt(&e, &t, &pnat);
            ck_assert_uint_eq(r.state, FDP_CT_EST | FDP_CT_RPL | FDP_CT_DNAT
                              | FDP_CT_TRK);
            struct seen b = seen_pkt(&t);
            struct fdp_value cli = ipv6
                ? (struct fdp_value) { 0x20010db8ull << 32, 100 + i }
                : v4(0x0a000000 | (uint32_t) (100 + i));
            ck_assert(val_eq(b.dst, cli));
            ck_assert(val_eq(b.src, srv));
            ck_assert_uint_eq(b.dport, i % 2 ? 40000 + i : 5000);
            ck_assert_uint_eq(b.sport, 53);
        }
        /* Without nat the packet is left alone and has no +dnat. */
        struct tflow rf = { (bool) ipv6, P_UDP, srv, pub, 53, out[0].sport };
        struct tspec s = spec(&rf);
        struct tpkt t;
        build(&t, &s);
        struct fdp__ct_args look = { .zone = snat.zone };
        ck_assert_uint_eq(run_pkt(&e, &t, &look).state,
                          FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK);
        ck_assert(val_eq(seen_pkt(&t).dst, pub));

        /* A flush of one connection frees its tuple for the client that
         * found none. */
        struct fdp__ct_tuple rt = { .src = srv, .dst = pub, .src_port = 53,
                                    .dst_port = out[7].sport,
                                    .proto = P_UDP, .ipv6 = (bool) ipv6 };
        ck_assert_uint_eq(fdp__ct_flush(e.ct, &snat.zone, &rt), 1);
        struct fdp_value cli = ipv6
            ? (struct fdp_value) { 0x20010db8ull << 32, 100 + N }
            : v4(0x0a000000 | (uint32_t) (100 + N));
        struct tflow f = { (bool) ipv6, P_UDP, cli, srv, 5000, 53 };
        s = spec(&f);
        build(&t, &s);
        ck_assert_uint_eq(run_pkt(&e, &t, &snat).state,
                          FDP_CT_NEW | FDP_CT_SNAT | FDP_CT_TRK);
        ck_assert_uint_eq(seen_pkt(&t).sport, out[7].sport);
        /* A zone flush frees them all. */
        ck_assert_uint_eq(fdp__ct_flush(e.ct, &snat.zone, NULL), N);
        ck_assert_uint_eq(fdp__ct_zone_count(e.ct, snat.zone), 0);
    }
    env_destroy(&e);
}
END_TEST

/* SNAT without a port range keeps the source port while it is free (and
 * a UDP/IPv4 zero checksum stays zero); with the port taken it moves
 * within the port's class. */
START_TEST(nat_snat_keeps_port)
{
    struct env e;
    env_init(&e, 1024);
    struct fdp__ct_nat nat = nat_range(FDP__NAT_SRC | FDP__NAT_ADDR,
                                       v4(0xc0a80001), v4(0xc0a80001), 0, 0);
    struct fdp__ct_args snat = { .commit = true, .nat = &nat };
    for (int i = 0; i < 3; i++) {
        struct tflow f = { false, P_UDP, v4(0x0a000001 + (uint32_t) i),
                           v4(0x08080808), 700, 53 };
        struct tspec s = spec(&f);
        struct tpkt t;
        build(&t, &s);
        if (i == 0) {
            fdp__put16(t.buf + 14 + 20 + 6, 0);     /* No checksum. */
        }
        ck_assert_uint_eq(run_pkt(&e, &t, &snat).state,
                          FDP_CT_NEW | FDP_CT_SNAT | FDP_CT_TRK);
        struct seen o = seen_pkt(&t);
        ck_assert_uint_eq(o.src.lo, 0xc0a80001);
        if (i == 0) {
            ck_assert_uint_eq(o.sport, 700);
            ck_assert_uint_eq(fdp__get16(t.buf + 14 + 20 + 6), 0);
        } else {
            /* 700 is taken: the next ones of 600-1023. */
            ck_assert_uint_eq(o.sport, 700 + i);
        }
    }
    env_destroy(&e);
}
END_TEST

/* DNAT of a TCP service address to backends (address range, one port):
 * the handshake both ways; plain nat translates later packets; a packet
 * through DNAT in one zone then SNAT in another, and its reply back
 * through both, comes out as it went in. */
START_TEST(nat_dnat_and_both)
{
    struct env e;
    env_init(&e, 1024);
    enum { SYN = 2, ACK = 0x10 };
    struct fdp__ct_nat dnat = nat_range(FDP__NAT_DST | FDP__NAT_ADDR
                                        | FDP__NAT_PORT, v4(0x0a020001),
                                        v4(0x0a020004), 8080, 8080);
    struct fdp__ct_nat snat = nat_range(FDP__NAT_SRC | FDP__NAT_ADDR,
                                        v4(0xc0a80001), v4(0xc0a80001), 0,
                                        0);
    struct fdp__ct_nat plain = { .flags = 0 };
    struct fdp__ct_args d1 = { .commit = true, .nat = &dnat, .zone = 1 };
    struct fdp__ct_args s2 = { .commit = true, .nat = &snat, .zone = 2 };
    struct fdp__ct_args p1 = { .nat = &plain, .zone = 1 };
    struct fdp__ct_args p2 = { .nat = &plain, .zone = 2 };
    const uint32_t vip = 0x0a0a0a0a, cli = 0x0a000001;

    struct tflow f = { false, P_TCP, v4(cli), v4(vip), 33333, 80 };
    struct tspec s = spec(&f);
    s.tcp_flags = SYN;
    s.seq = 100;
    struct tpkt t;
    build(&t, &s);
    ck_assert_uint_eq(run_pkt(&e, &t, &d1).state,
                      FDP_CT_NEW | FDP_CT_DNAT | FDP_CT_TRK);
    struct seen o = seen_pkt(&t);
    ck_assert_uint_ge(o.dst.lo, 0x0a020001);
    ck_assert_uint_le(o.dst.lo, 0x0a020004);
    ck_assert_uint_eq(o.dport, 8080);
    ck_assert_uint_eq(o.src.lo, cli);
    ck_assert_uint_eq(o.sport, 33333);
    reparse(&t);
    ck_assert_uint_eq(run_pkt(&e, &t, &s2).state,
                      FDP_CT_NEW | FDP_CT_SNAT | FDP_CT_TRK);
    struct seen o2 = seen_pkt(&t);
    ck_assert_uint_eq(o2.src.lo, 0xc0a80001);
    ck_assert_uint_eq(o2.sport, 33333);
    ck_assert(val_eq(o2.dst, o.dst));

    /* The backend answers the SNAT address. */
    struct tflow rf = { false, P_TCP, o.dst, o2.src, 8080, o2.sport };
    s = spec(&rf);
    s.tcp_flags = SYN | ACK;
    s.seq = 900;
    s.ack = 101;
    build(&t, &s);
    ck_assert_uint_eq(run_pkt(&e, &t, &p2).state, FDP_CT_EST | FDP_CT_RPL
                      | FDP_CT_DNAT | FDP_CT_TRK);
    reparse(&t);
    ck_assert_uint_eq(run_pkt(&e, &t, &p1).state, FDP_CT_EST | FDP_CT_RPL
                      | FDP_CT_SNAT | FDP_CT_TRK);
    struct seen b = seen_pkt(&t);
    ck_assert_uint_eq(b.src.lo, vip);
    ck_assert_uint_eq(b.sport, 80);
    ck_assert_uint_eq(b.dst.lo, cli);
    ck_assert_uint_eq(b.dport, 33333);

    /* The client's ACK with plain nat in both zones. */
    s = spec(&f);
    s.tcp_flags = ACK;
    s.seq = 101;
    s.ack = 901;
    s.payload = 10;
    build(&t, &s);
    ck_assert_uint_eq(run_pkt(&e, &t, &p1).state,
                      FDP_CT_EST | FDP_CT_DNAT | FDP_CT_TRK);
    reparse(&t);
    ck_assert_uint_eq(run_pkt(&e, &t, &p2).state,
                      FDP_CT_EST | FDP_CT_SNAT | FDP_CT_TRK);
    struct seen o3 = seen_pkt(&t);
    ck_assert(val_eq(o3.src, o2.src) && val_eq(o3.dst, o2.dst));
    ck_assert_uint_eq(o3.sport, o2.sport);
    ck_assert_uint_eq(o3.dport, 8080);

    /* The dump shows the translated reply tuple. */
    struct fdp__ct_entry ent;
    uint16_t z1 = 1;
    grabbed = 0;
    fdp__ct_dump(e.ct, &z1, e.now, grab, &ent);
    ck_assert_int_eq(grabbed, 1);
    ck_assert_uint_eq(ent.orig.dst.lo, vip);
    ck_assert(val_eq(ent.reply.src, o.dst));
    ck_assert_uint_eq(ent.reply.src_port, 8080);
    ck_assert_uint_eq(ent.reply.dst.lo, cli);
    env_destroy(&e);
}
END_TEST

/* ICMP through SNAT: an echo (address only, the id kept) and its reply;
 * errors about a SNATed UDP connection from the far side, whose outer
 * destination and quoted source go back to the client with every
 * checksum recomputed right; IPv4 and IPv6. */
START_TEST(nat_icmp)
{
    struct env e;
    env_init(&e, 1024);
    for (int ipv6 = 0; ipv6 < 2; ipv6++) {
        struct fdp_value cli = ipv6 ? (struct fdp_value) { 1ull << 61, 1 }
                               : v4(0x0a000001);
        struct fdp_value srv = ipv6 ? (struct fdp_value) { 1ull << 62, 2 }
                               : v4(0x08080808);
        struct fdp_value pub = ipv6 ? (struct fdp_value) { 1ull << 60, 3 }
                               : v4(0xc0a80001);
        struct fdp_value rtr = ipv6 ? (struct fdp_value) { 1ull << 59, 4 }
                               : v4(0x09090909);
        uint8_t icmp = ipv6 ? P_ICMP6 : P_ICMP;
        struct fdp__ct_nat nat = nat_range(FDP__NAT_SRC | FDP__NAT_ADDR
                                           | (ipv6 ? FDP__NAT_IPV6 : 0),
                                           pub, pub, 0, 0);
        struct fdp__ct_args snat = { .commit = true, .nat = &nat };
        struct fdp__ct_nat plain = { .flags = 0 };
        struct fdp__ct_args pnat = { .nat = &plain };

        struct tflow f = { (bool) ipv6, icmp, cli, srv, 4321, 0 };
        struct tspec s = spec(&f);
        s.icmp_type = ipv6 ? 128 : 8;
        struct tpkt t;
        build(&t, &s);
        ck_assert_uint_eq(run_pkt(&e, &t, &snat).state,
                          FDP_CT_NEW | FDP_CT_SNAT | FDP_CT_TRK);
        struct seen o = seen_pkt(&t);
        ck_assert(val_eq(o.src, pub));
        ck_assert_uint_eq(o.sport, 4321);
        struct tflow rf = { (bool) ipv6, icmp, srv, pub, 4321, 0 };
        s = spec(&rf);
        s.icmp_type = ipv6 ? 129 : 0;
        build(&t, &s);
        ck_assert_uint_eq(run_pkt(&e, &t, &pnat).state, FDP_CT_EST
                          | FDP_CT_RPL | FDP_CT_DNAT | FDP_CT_TRK);
        ck_assert(val_eq(seen_pkt(&t).dst, cli));

        /* UDP cli:5555 -> srv:53, SNATed to pub:5555. */
        struct tflow u = { (bool) ipv6, P_UDP, cli, srv, 5555, 53 };
        s = spec(&u);
        s.payload = 4;
        build(&t, &s);
        ck_assert_uint_eq(run_pkt(&e, &t, &snat).state,
                          FDP_CT_NEW | FDP_CT_SNAT | FDP_CT_TRK);
        ck_assert_uint_eq(seen_pkt(&t).sport, 5555);
        /* A router past the NAT quotes the translated packet (whole). */
        struct tpkt quoted = t;
        size_t qlen = t.pkt.size - 14;
        struct tspec err = spec(&(struct tflow) { (bool) ipv6, icmp, rtr,
                                                  pub, 0, 0 });
        err.icmp_type = ipv6 ? 1 : 3;
        err.inner = quoted.buf + 14;
        err.inner_size = qlen;
        build(&t, &err);
        ck_assert_uint_eq(run_pkt(&e, &t, &pnat).state, FDP_CT_REL
                          | FDP_CT_RPL | FDP_CT_DNAT | FDP_CT_TRK);
        struct seen eo = seen_pkt(&t);      /* Checks inner sums too. */
        ck_assert(val_eq(eo.src, rtr));
        ck_assert(val_eq(eo.dst, cli));
        size_t l3 = ipv6 ? 40 : 20;
        struct seen in = seen_at(t.buf + 14 + l3 + 8);
        ck_assert(val_eq(in.src, cli));
        ck_assert(val_eq(in.dst, srv));
        ck_assert_uint_eq(in.sport, 5555);
        ck_assert_uint_eq(in.dport, 53);
        /* The quoted UDP checksum is whole and right again. */
        ck_assert_uint_eq(fdp__csum(pseudo(t.buf + 14 + l3 + 8, ipv6, P_UDP,
                                           12), t.buf + 14 + l3 + 8 + l3,
                                    12), 0);
        /* Without nat it is related all the same, and untouched. */
        build(&t, &err);
        struct fdp__ct_args look = { .zone = 0 };
        ck_assert_uint_eq(run_pkt(&e, &t, &look).state,
                          FDP_CT_REL | FDP_CT_RPL | FDP_CT_TRK);
        ck_assert(val_eq(seen_pkt(&t).dst, pub));
    }
    env_destroy(&e);
}
END_TEST

/* DNAT without a port range keeps the destination port; when the backend
 * tuple is taken, the source port moves (Open vSwitch's fallback), and an
 * ICMP connection whose translated tuple is taken is exhausted at once. */
START_TEST(nat_dnat_collisions)
{
    struct env e;
    env_init(&e, 1024);
    struct fdp__ct_nat dnat = nat_range(FDP__NAT_DST | FDP__NAT_ADDR,
                                        v4(0x0a020001), v4(0x0a020001), 0,
                                        0);
    struct fdp__ct_args d = { .commit = true, .nat = &dnat };
    struct fdp__ct_args look = { .zone = 0 };
    /* Someone talks to the backend directly from the client's port. */
    struct tflow direct = { false, P_UDP, v4(0x0a000001), v4(0x0a020001),
                            2000, 53 };
    struct tspec s = spec(&direct);
    struct tpkt t;
    build(&t, &s);
    ck_assert_uint_eq(run_pkt(&e, &t, &commit0).state,
                      FDP_CT_NEW | FDP_CT_TRK);
    struct tflow f = { false, P_UDP, v4(0x0a000001), v4(0x0a0a0a0a), 2000,
                       53 };
    s = spec(&f);
    build(&t, &s);
    ck_assert_uint_eq(run_pkt(&e, &t, &d).state,
                      FDP_CT_NEW | FDP_CT_DNAT | FDP_CT_TRK);
    struct seen o = seen_pkt(&t);
    ck_assert_uint_eq(o.dst.lo, 0x0a020001);
    ck_assert_uint_eq(o.dport, 53);
    ck_assert_uint_eq(o.sport, 2001);
    (void) look;

    /* ICMP: the same echo id to the same backend from the same client. */
    struct tflow ping = { false, P_ICMP, v4(0x0a000001), v4(0x0a020001), 9,
                          0 };
    s = spec(&ping);
    s.icmp_type = 8;
    build(&t, &s);
    run_pkt(&e, &t, &commit0);
    ping.dst = v4(0x0a0a0a0a);
    s = spec(&ping);
    s.icmp_type = 8;
    build(&t, &s);
    ck_assert_uint_eq(run_pkt(&e, &t, &d).state, FDP_CT_NEW | FDP_CT_TRK);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 3);
    struct fdp__ct_pmd_stats st;
    fdp__ct_pmd_stats(e.pmd, &st);
    ck_assert_uint_eq(st.n_nat_exhausted, 1);
    env_destroy(&e);
}
END_TEST

/* Sets the ct_state and ct_zone a packet's key carries, as a pipeline
 * that ran ct() before does. */
static void
set_ct_fields(struct tpkt *t, uint8_t state, uint16_t zone)
{
    uint64_t *w = &t->pkt.key.w[FDP__WORD_CT_STATE];
    *w = (*w & ~FDP__MASK(CT_STATE)) | FDP__PUT(CT_STATE, state);
    w = &t->pkt.key.w[FDP__WORD_CT_ZONE];
    *w = (*w & ~FDP__MASK(CT_ZONE)) | FDP__PUT(CT_ZONE, zone);
}

/* A second ct() of the same zone after NAT finds the connection by the
 * translated packet's reverse, does not translate again, and keeps
 * +snat/+dnat; a ct() of another zone sees the packet as it is. */
START_TEST(nat_second_ct_same_zone)
{
    struct env e;
    env_init(&e, 1024);
    struct fdp__ct_nat nat = nat_range(FDP__NAT_SRC | FDP__NAT_ADDR,
                                       v4(0xc0a80001), v4(0xc0a80001), 0, 0);
    struct fdp__ct_nat plain = { .flags = 0 };
    struct fdp__ct_args snat = { .commit = true, .nat = &nat, .zone = 3 };
    struct fdp__ct_args pnat = { .nat = &plain, .zone = 3 };
    struct fdp__ct_args look = { .zone = 3 };
    struct tflow f = { false, P_UDP, v4(0x0a000001), v4(0x08080808), 4000,
                       53 };
    struct tspec s = spec(&f);
    struct tpkt t;
    build(&t, &s);
    struct fdp__ct_result r = run_pkt(&e, &t, &snat);
    ck_assert_uint_eq(r.state, FDP_CT_NEW | FDP_CT_SNAT | FDP_CT_TRK);
    struct seen o = seen_pkt(&t);
    reparse(&t);
    set_ct_fields(&t, r.state, 3);
    /* Again with the same nat: the same connection, no second
     * translation. */
    r = run_pkt(&e, &t, &snat);
    ck_assert_uint_eq(r.state, FDP_CT_NEW | FDP_CT_SNAT | FDP_CT_TRK);
    ck_assert_uint_eq(r.orig.src.lo, 0x0a000001);
    struct seen o2 = seen_pkt(&t);
    ck_assert(val_eq(o2.src, o.src) && o2.sport == o.sport);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 1);
    /* Without nat, committing: still that connection. */
    r = run_pkt(&e, &t, &snat);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 1);
    r = run_pkt(&e, &t, &(struct fdp__ct_args) { .commit = true,
                                                 .zone = 3 });
    ck_assert_uint_eq(r.state, FDP_CT_NEW | FDP_CT_SNAT | FDP_CT_TRK);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 1);

    /* The reply, translated back, then seen again in the zone. */
    struct tflow rf = { false, P_UDP, v4(0x08080808), o.src, 53, o.sport };
    s = spec(&rf);
    build(&t, &s);
    r = run_pkt(&e, &t, &pnat);
    ck_assert_uint_eq(r.state, FDP_CT_EST | FDP_CT_RPL | FDP_CT_DNAT
                      | FDP_CT_TRK);
    ck_assert_uint_eq(seen_pkt(&t).dst.lo, 0x0a000001);
    reparse(&t);
    set_ct_fields(&t, r.state, 3);
    r = run_pkt(&e, &t, &look);
    ck_assert_uint_eq(r.state, FDP_CT_EST | FDP_CT_RPL | FDP_CT_DNAT
                      | FDP_CT_TRK);
    ck_assert_uint_eq(seen_pkt(&t).dst.lo, 0x0a000001);
    /* In another zone the translated reply is a packet like any other. */
    set_ct_fields(&t, r.state, 3);
    struct fdp__ct_args z4 = { .zone = 4 };
    ck_assert_uint_eq(run_pkt(&e, &t, &z4).state, FDP_CT_NEW | FDP_CT_TRK);
    env_destroy(&e);
}
END_TEST

/* Carries result 'r' of a ct() of zone 'zone' into the key of 't' (its
 * bytes re-parsed) as the datapath does for the next ct(): ct_state,
 * ct_zone and the cached-connection hint. */
static void
carry(struct tpkt *t, const struct fdp__ct_result *r, uint16_t zone)
{
    reparse(t);
    set_ct_fields(t, r->state, zone);
    t->pkt.key.w[FDP__CT_CACHE_WORD] |= r->cached;
}

/* Open vSwitch's cached connection (pkt->md.conn, process_one_fast()): a
 * ct() without nat caches the packet's connection, and a later ct() of
 * the same zone takes it without a lookup, keeping the ct_state and
 * leaving the connection's state alone, while reading and setting the
 * mark; force, another zone, a ct() with nat (which caches nothing) and
 * no hint go through the full lookup, which adds to the zone's
 * ct_state (conn_update_state()). */
START_TEST(cached_connection)
{
    struct env e;
    env_init(&e, 1024);
    struct tflow f = { false, P_UDP, v4(0x0a000001), v4(0x0a000002), 4000,
                       53 };
    struct tspec s = spec(&f);
    struct tpkt t;
    struct fdp__ct_args commit = { .commit = true, .zone = 3 };
    struct fdp__ct_args look = { .zone = 3, .mark = 7, .mark_mask = 0xff };
    struct fdp__ct_entry ent;

    build(&t, &s);
    struct fdp__ct_result r = run_pkt(&e, &t, &commit);
    ck_assert_uint_eq(r.state, FDP_CT_NEW | FDP_CT_TRK);
    ck_assert_uint_ne(r.cached, 0);
    ck_assert_uint_eq(r.cached & 0x80000000u, 0);
    /* The second ct() of zone 3: no update (the connection stays in its
     * first state, where a lookup would have moved it to "multiple"),
     * +new kept, the mark set and read. */
    carry(&t, &r, 3);
    r = run_pkt(&e, &t, &look);
    ck_assert_uint_eq(r.state, FDP_CT_NEW | FDP_CT_TRK);
    ck_assert_uint_eq(r.mark, 7);
    ck_assert_uint_ne(r.cached, 0);
    grabbed = 0;
    fdp__ct_dump(e.ct, NULL, e.now, grab, &ent);
    ck_assert_int_eq(grabbed, 1);
    ck_assert_int_eq(ent.tm, FDP__CT_TM_OTHER_FIRST);
    /* The same without the hint: a lookup, and the update. */
    carry(&t, &r, 3);
    t.pkt.key.w[FDP__CT_CACHE_WORD] &= ~UINT64_C(0xffffffff);
    r = run_pkt(&e, &t, &look);
    ck_assert_uint_eq(r.state, FDP_CT_NEW | FDP_CT_TRK);
    fdp__ct_dump(e.ct, NULL, e.now, grab, &ent);
    ck_assert_int_eq(ent.tm, FDP__CT_TM_OTHER_MULTIPLE);
    /* Another zone: a lookup there (nothing in zone 4: +new). */
    carry(&t, &r, 3);
    ck_assert_uint_eq(run_pkt(&e, &t, &(struct fdp__ct_args) { .zone = 4 })
                      .state, FDP_CT_NEW | FDP_CT_TRK);

    /* The reply, twice through zone 3 with the hint: +est+rpl both
     * times, the reply direction cached. */
    struct tflow rf = { false, P_UDP, v4(0x0a000002), v4(0x0a000001), 53,
                        4000 };
    s = spec(&rf);
    build(&t, &s);
    r = run_pkt(&e, &t, &look);
    ck_assert_uint_eq(r.state, FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK);
    ck_assert_uint_ne(r.cached & 0x80000000u, 0);
    carry(&t, &r, 3);
    r = run_pkt(&e, &t, &look);
    ck_assert_uint_eq(r.state, FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK);

    /* A ct() with nat caches nothing. */
    struct fdp__ct_nat plain = { .flags = 0 };
    struct fdp__ct_args pnat = { .zone = 3, .nat = &plain };
    build(&t, &s);
    r = run_pkt(&e, &t, &pnat);
    ck_assert_uint_eq(r.cached, 0);

    /* Without a hint the zone's ct_state is added to: a packet the key
     * says is +est in zone 3 that updates a connection to "new again"
     * (its first direction, not yet answered) is +est+new, as Open
     * vSwitch's conn_update_state() ORs CS_NEW in. */
    struct tflow f2 = { false, P_UDP, v4(0x0a000005), v4(0x0a000002), 4001,
                        53 };
    s = spec(&f2);
    build(&t, &s);
    r = run_pkt(&e, &t, &commit);
    build(&t, &s);
    set_ct_fields(&t, FDP_CT_EST | FDP_CT_TRK, 3);
    ck_assert_uint_eq(run_pkt(&e, &t, &look).state,
                      FDP_CT_EST | FDP_CT_NEW | FDP_CT_TRK);
    /* In zone 4 the same key's state is reset first. */
    build(&t, &s);
    set_ct_fields(&t, FDP_CT_EST | FDP_CT_TRK, 4);
    ck_assert_uint_eq(run_pkt(&e, &t, &look).state,
                      FDP_CT_NEW | FDP_CT_TRK);
    env_destroy(&e);
}
END_TEST

/* Random NAT against a brute-force reference: small pools of clients,
 * servers and ports and small ranges, so that candidates collide and
 * ranges run out.  The reference is the list of connections the tracker
 * committed (the test learns each one's translation from the rewritten
 * packet); scanning it checks that every translation lies in its range,
 * that no two live connections of a zone share a tuple, that SNAT
 * without a port range kept the packet's port when it was free, that an
 * exhausted commit had every candidate of some address of its range
 * taken (and only where the candidates are few enough to run out), that
 * replies come back as the original's reverse with the right ct_state,
 * that every checksum verifies from scratch, and that flushed
 * connections free their tuples. */
struct rnat {
    struct fdp__ct_tuple t[2];  /* Original; reply (translated). */
    uint16_t zone;
    bool alive;
};

static bool
rnat_taken(const struct rnat *c, int n, uint16_t zone,
           const struct fdp__ct_tuple *t)
{
    for (int i = 0; i < n; i++) {
        if (c[i].alive && c[i].zone == zone
            && (tuple_eq(&c[i].t[0], t) || tuple_eq(&c[i].t[1], t))) {
            return true;
        }
    }
    return false;
}

static struct fdp_value
rnat_addr(bool ipv6, uint32_t pool, uint32_t i)
{
    return ipv6 ? (struct fdp_value) { 0x20010db8ull << 32 | pool, i }
           : v4(pool << 24 | i);
}

/* The tuple of a packet src:sport -> dst:dport (ICMP: an echo request
 * with id 'sport'). */
static struct fdp__ct_tuple
rnat_tuple(bool ipv6, uint8_t proto, struct fdp_value src,
           struct fdp_value dst, uint16_t sport, uint16_t dport)
{
    struct fdp__ct_tuple t = { .src = src, .dst = dst, .proto = proto,
                               .ipv6 = ipv6 };
    if (proto == P_ICMP || proto == P_ICMP6) {
        t.src_port = ipv6 ? 128 : 8;
        t.icmp_id = sport;
    } else {
        t.src_port = sport;
        t.dst_port = dport;
    }
    return t;
}

START_TEST(nat_random_vs_reference)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 2323);
    struct env e;
    env_init(&e, 8192);
    enum { MAXC = 3000 };
    struct rnat *c = calloc(MAXC, sizeof *c);
    int n = 0, n_exhausted = 0, n_kept = 0, n_replies = 0, n_flushed = 0;

    for (int step = 0; step < 4000 && n < MAXC; step++) {
        bool ipv6 = unit_rng_below(&rng, 3) == 0;
        bool snat = unit_rng_below(&rng, 3) != 0;
        uint16_t zone = (uint16_t) unit_rng_below(&rng, 2);
        uint32_t n_addr = 1 + unit_rng_below(&rng, 2);
        bool ports = unit_rng_below(&rng, 3) != 0;
        uint16_t pmin = (uint16_t) (3000 + unit_rng_below(&rng, 2) * 5);
        uint16_t pmax = (uint16_t) (pmin + unit_rng_below(&rng, 12));
        struct fdp__ct_nat nat = nat_range(
            (snat ? FDP__NAT_SRC : FDP__NAT_DST) | FDP__NAT_ADDR
            | (ports ? FDP__NAT_PORT : 0) | (ipv6 ? FDP__NAT_IPV6 : 0),
            rnat_addr(ipv6, 200, 1), rnat_addr(ipv6, 200, n_addr), pmin,
            pmax);
        uint8_t proto = unit_rng_below(&rng, 8) == 0
                        ? (ipv6 ? P_ICMP6 : P_ICMP)
                        : unit_rng_below(&rng, 2) ? P_UDP : P_TCP;
        bool icmp = proto == P_ICMP || proto == P_ICMP6;
        struct tflow f = {
            ipv6, proto, rnat_addr(ipv6, 10, 1 + unit_rng_below(&rng, 30)),
            rnat_addr(ipv6, 20, 1 + unit_rng_below(&rng, 2)),
            (uint16_t) (icmp ? 1 + unit_rng_below(&rng, 3)
                        : 2000 + unit_rng_below(&rng, 30)),
            (uint16_t) (icmp ? 0 : 80 + unit_rng_below(&rng, 2)),
        };
        struct fdp__ct_tuple ot = rnat_tuple(ipv6, proto, f.src, f.dst,
                                             f.sport, f.dport);
        if (rnat_taken(c, n, zone, &ot)) {
            continue;           /* Not a new connection: see above. */
        }
        struct tspec s = spec(&f);
        s.tcp_flags = 0x02;
        s.seq = 1;
        s.icmp_type = ipv6 ? 128 : 8;
        s.payload = (uint16_t) unit_rng_below(&rng, 5);
        struct tpkt t;
        build(&t, &s);
        struct fdp__ct_pmd_stats before, after;
        fdp__ct_pmd_stats(e.pmd, &before);
        struct fdp__ct_args a = { .commit = true, .nat = &nat,
                                  .zone = zone };
        struct fdp__ct_result r = run_pkt(&e, &t, &a);
        fdp__ct_pmd_stats(e.pmd, &after);
        struct seen o = seen_pkt(&t);

        if (r.state == (FDP_CT_NEW | FDP_CT_TRK)) {
            /* Exhausted: only where every candidate can be taken (a
             * port range of SNAT, or ICMP), and then some address of the
             * range has every candidate taken. */
            ck_assert_uint_eq(after.n_nat_exhausted,
                              before.n_nat_exhausted + 1);
            ck_assert_msg(icmp || (snat && ports), "step %d: exhausted",
                          step);
            bool full = false;
            for (uint32_t ai = 1; ai <= n_addr && !full; ai++) {
                struct fdp_value A = rnat_addr(ipv6, 200, ai);
                full = true;
                for (uint32_t p = pmin; p <= (icmp ? pmin : pmax); p++) {
                    struct fdp__ct_tuple tt
                        = snat ? rnat_tuple(ipv6, proto, A, f.dst,
                                            icmp ? f.sport : (uint16_t) p,
                                            f.dport)
                          : rnat_tuple(ipv6, proto, f.src, A, f.sport,
                                       f.dport);
                    struct fdp__ct_tuple rt = m_reverse(&tt);
                    if (!rnat_taken(c, n, zone, &rt)) {
                        full = false;
                        break;
                    }
                }
            }
            ck_assert_msg(full, "step %d: exhausted with a free tuple",
                          step);
            ck_assert(val_eq(o.src, f.src) && val_eq(o.dst, f.dst));
            n_exhausted++;
            continue;
        }
        ck_assert_uint_eq(r.state, FDP_CT_NEW | FDP_CT_TRK
                          | (snat ? FDP_CT_SNAT : FDP_CT_DNAT));
        ck_assert(tuple_eq(&r.orig, &ot));

        /* The translation, as the packet shows it. */
        struct fdp_value lo = rnat_addr(ipv6, 200, 1);
        struct fdp_value hi = rnat_addr(ipv6, 200, n_addr);
        struct fdp_value moved = snat ? o.src : o.dst;
        ck_assert(moved.hi == lo.hi && moved.lo >= lo.lo
                  && moved.lo <= hi.lo);
        if (snat) {
            ck_assert(val_eq(o.dst, f.dst));
            if (!icmp) {
                ck_assert_uint_eq(o.dport, f.dport);
                if (ports) {
                    ck_assert(o.sport >= pmin && o.sport <= pmax);
                } else {
                    struct fdp__ct_tuple keep = rnat_tuple(
                        ipv6, proto, o.src, f.dst, f.sport, f.dport);
                    struct fdp__ct_tuple rk = m_reverse(&keep);
                    if (!rnat_taken(c, n, zone, &rk)) {
                        ck_assert_uint_eq(o.sport, f.sport);
                        n_kept++;
                    }
                }
            }
        } else {
            ck_assert(val_eq(o.src, f.src));
            if (!icmp) {
                if (ports) {
                    ck_assert(o.dport >= pmin && o.dport <= pmax);
                } else {
                    ck_assert_uint_eq(o.dport, f.dport);
                }
            }
        }
        if (icmp) {
            ck_assert_uint_eq(o.sport, f.sport);    /* The id stays. */
        }
        struct fdp__ct_tuple tt = rnat_tuple(ipv6, proto, o.src, o.dst,
                                             o.sport, o.dport);
        struct fdp__ct_tuple rt = m_reverse(&tt);
        ck_assert_msg(!rnat_taken(c, n, zone, &rt),
                      "step %d: a reply tuple given twice", step);
        c[n++] = (struct rnat) { { ot, rt }, zone, true };

        /* Now and then the reply, with plain nat. */
        if (unit_rng_below(&rng, 2)) {
            struct fdp__ct_nat plain = { .flags = 0 };
            struct fdp__ct_args pa = { .nat = &plain, .zone = zone };
            struct tflow rf = { ipv6, proto, rt.src, rt.dst,
                                icmp ? rt.icmp_id : rt.src_port,
                                icmp ? 0 : rt.dst_port };
            struct tspec rs = spec(&rf);
            rs.tcp_flags = 0x12;
            rs.seq = 500;
            rs.ack = 2;
            rs.icmp_type = ipv6 ? 129 : 0;
            build(&t, &rs);
            r = run_pkt(&e, &t, &pa);
            ck_assert_uint_eq(r.state, FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK
                              | (snat ? FDP_CT_DNAT : FDP_CT_SNAT));
            struct seen b = seen_pkt(&t);
            ck_assert(val_eq(b.src, f.dst) && val_eq(b.dst, f.src));
            if (!icmp) {
                ck_assert(b.sport == f.dport && b.dport == f.sport);
            } else {
                ck_assert_uint_eq(b.sport, f.sport);
            }
            n_replies++;
        }

        /* Now and then a flush of a random live one by its reply. */
        if (unit_rng_below(&rng, 6) == 0) {
            int k = (int) unit_rng_below(&rng, (uint32_t) n);
            if (c[k].alive) {
                ck_assert_uint_eq(fdp__ct_flush(e.ct, &c[k].zone,
                                                &c[k].t[1]), 1);
                c[k].alive = false;
                n_flushed++;
            }
        }
    }

    /* The table is the reference. */
    int live = 0;
    for (int i = 0; i < n; i++) {
        live += c[i].alive;
    }
    ck_assert_uint_eq(fdp__ct_count(e.ct), live);
    struct fdp__ct_entry ent;
    grabbed = 0;
    fdp__ct_dump(e.ct, NULL, e.now, grab, &ent);
    ck_assert_int_eq(grabbed, live);
    /* The workload reached every outcome. */
    ck_assert_msg(n_exhausted > 10 && n_kept > 10 && n_replies > 100
                  && n_flushed > 10, "exhausted %d, kept %d, replies %d, "
                  "flushed %d", n_exhausted, n_kept, n_replies, n_flushed);
    free(c);
    env_destroy(&e);
}
END_TEST

/* ---- NAT concurrency: two pmds SNAT into one small range ---- */

enum { NC_PORTS = 64 };

struct nconc {
    struct fdp__ct *ct;
    uint64_t progress[2];
    bool stop;                  /* Atomic. */
};

struct nconc_arg {
    struct nconc *c;
    int id;
};

static const struct fdp__ct_nat nconc_nat = {
    .flags = FDP__NAT_SRC | FDP__NAT_ADDR | FDP__NAT_PORT,
    .port_min = 20000, .port_max = 20000 + NC_PORTS - 1,
    .addr_min = { 0, 0xc0a80001 }, .addr_max = { 0, 0xc0a80001 },
};

static void *
nconc_pmd(void *arg_)
{
    struct nconc_arg *arg = arg_;
    struct nconc *c = arg->c;
    struct fdp__ct_pmd *pmd;
    uint32_t next = 0;

    ck_assert_int_eq(fdp__ct_pmd_create(c->ct, &pmd), 0);
    while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
        struct tpkt pk[16];
        struct fdp__pkt *pp[16];
        struct fdp__ct_result res[16];
        for (int i = 0; i < 16; i++) {
            /* A new client each time (per thread), all to one server
             * port, so that every commit competes for the same ports. */
            uint32_t n = next++ % 4096;
            struct tflow f = { false, P_UDP,
                               v4(0x0a000000 | (uint32_t) arg->id << 16 | n),
                               v4(0x0b000001), (uint16_t) (1024 + n), 53 };
            struct tspec s = spec(&f);
            build(&pk[i], &s);
            pp[i] = &pk[i].pkt;
        }
        struct fdp__ct_args a = { .commit = true, .nat = &nconc_nat };
        fdp__ct_execute(pmd, pp, 16, &a, NULL, 1000000, res);
        for (int i = 0; i < 16; i++) {
            if (res[i].state & FDP_CT_SNAT) {
                struct seen o = seen_pkt(&pk[i]);
                ck_assert_uint_eq(o.src.lo, 0xc0a80001);
                ck_assert_uint_ge(o.sport, 20000);
                ck_assert_uint_lt(o.sport, 20000 + NC_PORTS);
            }
        }
        unit_progress_bump(&c->progress[arg->id]);
    }
    fdp__ct_pmd_destroy(pmd);
    return NULL;
}

struct nconc_dump {
    int n;
    uint32_t ports[4096];
};

static bool
nconc_collect(const struct fdp__ct_entry *en, void *aux)
{
    struct nconc_dump *d = aux;
    ck_assert_uint_eq(en->reply.dst.lo, 0xc0a80001);
    ck_assert_int_lt(d->n, 4096);
    d->ports[d->n++] = en->reply.dst_port;
    return true;
}

START_TEST(nat_concurrency)
{
    struct nconc c = { 0 };
    ck_assert_int_eq(fdp__ct_create(8192, &c.ct), 0);
    pthread_t th[2];
    struct nconc_arg args[2] = { { &c, 0 }, { &c, 1 } };
    for (int i = 0; i < 2; i++) {
        pthread_create(&th[i], NULL, nconc_pmd, &args[i]);
    }
    static struct nconc_dump d;
    for (int round = 0; round < 60; round++) {
        uint64_t t0 = unit_progress_get(&c.progress[0]);
        uint64_t t1 = unit_progress_get(&c.progress[1]);
        unit_progress_wait(&c.progress[0], t0 + 2, "pmd 0");
        unit_progress_wait(&c.progress[1], t1 + 2, "pmd 1");
        /* No two live connections share a reply tuple: they differ only
         * in the translated port. */
        d.n = 0;
        fdp__ct_dump(c.ct, NULL, 1000000, nconc_collect, &d);
        ck_assert_int_le(d.n, NC_PORTS);
        bool seen_port[NC_PORTS] = { false };
        for (int i = 0; i < d.n; i++) {
            ck_assert_uint_ge(d.ports[i], 20000);
            ck_assert_uint_lt(d.ports[i], 20000 + NC_PORTS);
            ck_assert_msg(!seen_port[d.ports[i] - 20000],
                          "reply port %u twice", d.ports[i]);
            seen_port[d.ports[i] - 20000] = true;
        }
        if (round % 3 == 2) {
            fdp__ct_flush(c.ct, NULL, NULL);
        }
    }
    __atomic_store_n(&c.stop, true, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    uint32_t n = fdp__ct_count(c.ct);
    ck_assert_uint_le(n, NC_PORTS);
    ck_assert_uint_eq(fdp__ct_flush(c.ct, NULL, NULL), n);
    fdp__ct_destroy(c.ct);
}
END_TEST

/* ---- The reference model ---- */

struct mconn {
    struct fdp__ct_tuple t[2];
    uint16_t zone;
    uint8_t l4_state;
    struct fdp__ct_conn tcp;    /* Only 'peer' is used. */
    uint64_t expiry;
    uint32_t mark;
    struct fdp_value label;
    bool alive;
};

#define M_MAX 4096
struct model {
    struct mconn c[M_MAX];
    int n;
    uint32_t limit, default_zone_limit, zone_limit[8];
    bool seq_chk;
};

static const uint32_t m_timeouts[FDP__CT_N_TM] = {
    30, 30, 86400, 900, 45, 30, 60, 60, 30, 60, 30
};

static bool
tuple_eq(const struct fdp__ct_tuple *a, const struct fdp__ct_tuple *b)
{
    return a->src.hi == b->src.hi && a->src.lo == b->src.lo
           && a->dst.hi == b->dst.hi && a->dst.lo == b->dst.lo
           && a->src_port == b->src_port && a->dst_port == b->dst_port
           && a->icmp_id == b->icmp_id && a->proto == b->proto
           && a->ipv6 == b->ipv6;
}

static int
m_rev_type(bool ipv6, int type)
{
    static const int pairs4[][2] = { { 8, 0 }, { 13, 14 }, { 15, 16 } };
    if (ipv6) {
        return type == 128 ? 129 : type == 129 ? 128 : -1;
    }
    for (int i = 0; i < 3; i++) {
        if (type == pairs4[i][0]) {
            return pairs4[i][1];
        } else if (type == pairs4[i][1]) {
            return pairs4[i][0];
        }
    }
    return -1;
}

static struct fdp__ct_tuple
m_reverse(const struct fdp__ct_tuple *t)
{
    struct fdp__ct_tuple r = *t;
    r.src = t->dst;
    r.dst = t->src;
    if (t->proto == (t->ipv6 ? P_ICMP6 : P_ICMP)) {
        r.src_port = (uint16_t) m_rev_type(t->ipv6, t->src_port);
    } else {
        r.src_port = t->dst_port;
        r.dst_port = t->src_port;
    }
    return r;
}

static int
m_count(const struct model *m, const uint16_t *zone)
{
    int n = 0;
    for (int i = 0; i < m->n; i++) {
        n += m->c[i].alive && (!zone || m->c[i].zone == *zone);
    }
    return n;
}

static int
m_find(struct model *m, const struct fdp__ct_tuple *t, uint16_t zone,
       uint64_t now, bool *reply)
{
    for (int i = 0; i < m->n; i++) {
        struct mconn *c = &m->c[i];
        if (!c->alive || c->zone != zone || now >= c->expiry) {
            continue;
        }
        for (int d = 0; d < 2; d++) {
            if (tuple_eq(&c->t[d], t)) {
                *reply = d;
                return i;
            }
        }
    }
    return -1;
}

/* A generated packet as the model sees it. */
struct mpkt {
    bool ok;                    /* Parses (else +inv, no tuple). */
    bool related;
    struct fdp__ct_tuple t;     /* Lookup tuple. */
    bool valid_new;
    const uint8_t *tcp;         /* TCP header and size, for updates. */
    size_t tcp_size;
};

static void
m_refresh(struct mconn *c, enum fdp__ct_tm tm, uint64_t now)
{
    c->expiry = now + (uint64_t) m_timeouts[tm] * 1000;
}

static struct fdp__ct_result
m_process(struct model *m, const struct mpkt *p, uint16_t zone,
          const struct fdp__ct_args *a, uint64_t now)
{
    struct fdp__ct_result r;
    memset(&r, 0, sizeof r);
    r.zone = zone;
    if (!p->ok) {
        r.state = FDP_CT_INV | FDP_CT_TRK;
        return r;
    }
    bool reply = false;
    int i = m_find(m, &p->t, zone, now, &reply);
    uint8_t state = 0;
    bool create = false;
    if (i >= 0 && a->force && reply) {
        m->c[i].alive = false;
        i = -1;
    }
    if (i >= 0) {
        struct mconn *c = &m->c[i];
        bool icmp = p->t.proto == (p->t.ipv6 ? P_ICMP6 : P_ICMP);
        if (p->related) {
            state = FDP_CT_REL | (reply ? FDP_CT_RPL : 0);
        } else if (p->t.proto == P_TCP) {
            enum fdp__ct_tm tm;
            switch (fdp__ct_tcp_update(&c->tcp, p->tcp, p->tcp_size, reply,
                                       m->seq_chk, &tm)) {
            case FDP__CT_UPDATE_VALID:
                state = FDP_CT_EST | (reply ? FDP_CT_RPL : 0);
                break;
            case FDP__CT_UPDATE_INVALID:
                state = FDP_CT_INV;
                break;
            case FDP__CT_UPDATE_NEW:
                c->alive = false;
                i = -1;
                create = true;
                break;
            case FDP__CT_UPDATE_VALID_NEW:
                state = FDP_CT_NEW;
                break;
            }
            if (tm != FDP__CT_N_TM && i >= 0) {
                m_refresh(c, tm, now);
            }
        } else if (icmp) {
            if (reply && c->l4_state == 0) {
                c->l4_state = 1;
            }
            state = c->l4_state ? FDP_CT_EST | (reply ? FDP_CT_RPL : 0)
                    : FDP_CT_NEW;
            m_refresh(c, c->l4_state ? FDP__CT_TM_ICMP_REPLY
                      : FDP__CT_TM_ICMP_FIRST, now);
        } else {
            if (reply) {
                c->l4_state = 2;
            } else if (c->l4_state == 0) {
                c->l4_state = 1;
            }
            state = c->l4_state == 2 ? FDP_CT_EST | (reply ? FDP_CT_RPL : 0)
                    : FDP_CT_NEW;
            m_refresh(c, c->l4_state == 2 ? FDP__CT_TM_OTHER_BIDIR
                      : c->l4_state == 1 ? FDP__CT_TM_OTHER_MULTIPLE
                      : FDP__CT_TM_OTHER_FIRST, now);
        }
    } else if (p->related) {
        state = FDP_CT_INV;
    } else {
        create = true;
    }
    if (create) {
        if (!p->valid_new) {
            state = FDP_CT_INV;
        } else {
            state = FDP_CT_NEW;
            uint32_t zl = zone < 8 ? m->zone_limit[zone] : 0;
            if (!zl) {
                zl = m->default_zone_limit;
            }
            if ((a->commit || a->force)
                && !(zl && m_count(m, &zone) >= (int) zl)
                && m_count(m, NULL) < (int) m->limit) {
                ck_assert_int_lt(m->n, M_MAX);
                i = m->n++;
                struct mconn *c = &m->c[i];
                memset(c, 0, sizeof *c);
                c->alive = true;
                c->zone = zone;
                c->t[0] = p->t;
                c->t[1] = m_reverse(&p->t);
                enum fdp__ct_tm tm;
                if (p->t.proto == P_TCP) {
                    fdp__ct_tcp_new_conn(&c->tcp, p->tcp, p->tcp_size, &tm);
                } else if (p->t.proto == (p->t.ipv6 ? P_ICMP6 : P_ICMP)) {
                    tm = FDP__CT_TM_ICMP_FIRST;
                } else {
                    tm = FDP__CT_TM_OTHER_FIRST;
                }
                m_refresh(c, tm, now);
            }
        }
    }
    r.state = state | FDP_CT_TRK;
    r.has_tuple = true;
    if (i >= 0) {
        struct mconn *c = &m->c[i];
        c->mark = (c->mark & ~a->mark_mask) | (a->mark & a->mark_mask);
        c->label.hi = (c->label.hi & ~a->label_mask.hi)
                      | (a->label.hi & a->label_mask.hi);
        c->label.lo = (c->label.lo & ~a->label_mask.lo)
                      | (a->label.lo & a->label_mask.lo);
        r.mark = c->mark;
        r.label = c->label;
        r.orig = c->t[0];
    } else {
        r.orig = p->t;
    }
    return r;
}

/* ---- The random generator ---- */

/* A flow of the workload: endpoints and, for TCP, each side's next
 * sequence number. */
struct gflow {
    struct tflow f;
    uint32_t seq[2];
    bool syn_done[2];
};

#define N_GFLOWS 48

static struct fdp_value
g_addr(struct unit_rng *rng, bool ipv6)
{
    uint32_t n = 1 + unit_rng_below(rng, 4);
    return ipv6 ? (struct fdp_value) { 0x20010db800000000ull, n }
           : v4(0x0a000000 | n);
}

static void
g_flow(struct unit_rng *rng, struct gflow *g)
{
    static const uint8_t protos[] = { P_TCP, P_TCP, P_UDP, P_UDP, P_ICMP,
                                      P_GRE, P_SCTP };
    memset(g, 0, sizeof *g);
    g->f.ipv6 = unit_rng_below(rng, 3) == 0;
    g->f.proto = protos[unit_rng_below(rng, sizeof protos)];
    if (g->f.proto == P_ICMP && g->f.ipv6) {
        g->f.proto = P_ICMP6;
    }
    g->f.src = g_addr(rng, g->f.ipv6);
    g->f.dst = g_addr(rng, g->f.ipv6);
    g->f.sport = (uint16_t) (1 + unit_rng_below(rng, 3));
    g->f.dport = (uint16_t) (1 + unit_rng_below(rng, 3));
    g->seq[0] = (uint32_t) unit_rng_next(rng);
    g->seq[1] = (uint32_t) unit_rng_next(rng);
}

/* Generates one packet of 'g' into 't' and what the model needs into
 * 'mp'. */
static void
g_packet(struct unit_rng *rng, struct gflow *g, struct gflow *flows,
         struct tpkt *t, struct mpkt *mp)
{
    int dir = (int) unit_rng_below(rng, 2);
    struct tflow f = dir ? rev_flow(&g->f) : g->f;
    struct tspec s = spec(&f);
    bool icmp = f.proto == P_ICMP || f.proto == P_ICMP6;
    struct tpkt inner;

    memset(mp, 0, sizeof *mp);
    mp->ok = true;
    mp->valid_new = true;
    mp->t = (struct fdp__ct_tuple) { .src = f.src, .dst = f.dst,
                                     .proto = f.proto, .ipv6 = f.ipv6 };
    if (f.proto == P_TCP || f.proto == P_UDP) {
        mp->t.src_port = f.sport;
        mp->t.dst_port = f.dport;
    }

    if (f.proto == P_TCP) {
        static const uint16_t flag_sets[] = {
            0x02, 0x12, 0x10, 0x10, 0x18, 0x18, 0x11, 0x14, 0x04, 0x03,
            0x01, 0x00,
        };
        s.tcp_flags = flag_sets[unit_rng_below(rng, sizeof flag_sets / 2)];
        s.seq = g->seq[dir];
        s.ack = g->seq[!dir];
        s.win = (uint16_t) (1 + unit_rng_below(rng, 65535));
        if (s.tcp_flags & 0x02 && unit_rng_below(rng, 2)) {
            s.wscale = (uint8_t) unit_rng_below(rng, 16);
        }
        s.payload = (s.tcp_flags & 0x02) ? 0
                    : (uint16_t) (unit_rng_below(rng, 3) * 100);
        switch (unit_rng_below(rng, 8)) {
        case 0:                 /* Retransmission. */
            s.seq -= 100;
            break;
        case 1:                 /* Far out of window. */
            s.seq += 3000000;
            break;
        default:                /* In order. */
            g->seq[dir] += s.payload + !!(s.tcp_flags & 0x03);
            break;
        }
        mp->valid_new = !(s.tcp_flags & 0x02 ? (s.tcp_flags & 0x05)
                          : !(s.tcp_flags & 0x14))
                        && !(!(s.tcp_flags & 0x10) && (s.tcp_flags & 0x29))
                        && (s.tcp_flags & 0x12) != 0x12;
    } else if (icmp) {
        uint32_t kind = unit_rng_below(rng, 4);
        bool v6 = f.ipv6;
        if (kind < 3) {
            /* Echo request (original direction) or reply. */
            s.icmp_type = (uint8_t) (dir ? (v6 ? 129 : 0) : (v6 ? 128 : 8));
            s.f.sport = g->f.sport;
            mp->t.icmp_id = g->f.sport;
            mp->t.src_port = s.icmp_type;
            mp->valid_new = !dir;
        } else {
            /* An error about a packet of another flow of this family. */
            struct gflow *o = &flows[unit_rng_below(rng, N_GFLOWS)];
            int od = (int) unit_rng_below(rng, 2);
            struct tflow of = od ? rev_flow(&o->f) : o->f;
            if (of.ipv6 != v6 || of.proto == P_TCP) {
                s.icmp_type = v6 ? 128 : 8;     /* Just an echo then. */
                s.f.sport = g->f.sport;
                s.f.src = g->f.src;
                s.f.dst = g->f.dst;
                mp->t = (struct fdp__ct_tuple) { .src = g->f.src,
                    .dst = g->f.dst, .proto = f.proto, .ipv6 = v6,
                    .src_port = s.icmp_type, .icmp_id = g->f.sport };
            } else {
                struct tspec is = spec(&of);
                bool oicmp = of.proto == P_ICMP || of.proto == P_ICMP6;
                if (oicmp) {
                    is.icmp_type = (uint8_t) (od ? (v6 ? 129 : 0)
                                              : (v6 ? 128 : 8));
                    is.f.sport = o->f.sport;
                }
                build(&inner, &is);
                s.icmp_type = v6 ? 1 : 3;
                s.inner = inner.buf + 14;
                s.inner_size = (v6 ? 40 : 20) + 8;
                s.f.src = g_addr(rng, v6);
                s.f.dst = of.src;
                s.f.proto = v6 ? P_ICMP6 : P_ICMP;
                struct fdp__ct_tuple it = { .src = of.src, .dst = of.dst,
                                            .proto = of.proto, .ipv6 = v6 };
                if (oicmp) {
                    it.src_port = is.icmp_type;
                    it.icmp_id = o->f.sport;
                } else if (of.proto == P_UDP) {
                    it.src_port = of.sport;
                    it.dst_port = of.dport;
                }
                mp->t = m_reverse(&it);
                mp->related = true;
            }
        }
    }

    /* Now and then a packet that does not parse. */
    if (unit_rng_below(rng, 40) == 0
        && (f.proto == P_TCP || f.proto == P_UDP || icmp)) {
        s.bad_csum = true;
        mp->ok = false;
    } else if (!f.ipv6 && unit_rng_below(rng, 60) == 0) {
        s.fragment = true;
        mp->ok = false;
    }
    build(t, &s);
    if (f.proto == P_TCP) {
        mp->tcp = t->pkt.data + t->pkt.layout.l4;
        mp->tcp_size = t->pkt.size - (size_t) t->pkt.layout.l4;
    }
}

static void
check_result(const struct fdp__ct_result *got,
             const struct fdp__ct_result *exp, int step)
{
    ck_assert_msg(got->state == exp->state,
                  "step %d: ct_state 0x%x, expected 0x%x", step, got->state,
                  exp->state);
    ck_assert_msg(got->zone == exp->zone, "step %d: zone", step);
    ck_assert_msg(got->mark == exp->mark, "step %d: mark %u, expected %u",
                  step, got->mark, exp->mark);
    ck_assert_msg(got->label.hi == exp->label.hi
                  && got->label.lo == exp->label.lo, "step %d: label", step);
    ck_assert_msg(got->has_tuple == exp->has_tuple, "step %d: tuple", step);
    if (exp->has_tuple) {
        ck_assert_msg(tuple_eq(&got->orig, &exp->orig),
                      "step %d: original tuple differs", step);
    }
}

struct dump_ctx {
    struct model *m;
    int n;
};

static bool
dump_check(const struct fdp__ct_entry *e, void *aux)
{
    struct dump_ctx *d = aux;
    bool found = false;
    for (int i = 0; i < d->m->n; i++) {
        const struct mconn *c = &d->m->c[i];
        if (c->alive && c->zone == e->zone && tuple_eq(&c->t[0], &e->orig)) {
            ck_assert(tuple_eq(&c->t[1], &e->reply));
            ck_assert_uint_eq(c->mark, e->mark);
            ck_assert_uint_eq(c->expiry, e->expiry_ms);
            found = true;
        }
    }
    ck_assert_msg(found, "dumped connection not in the model");
    d->n++;
    return true;
}

static void
sweep_all(struct fdp__ct *ct, uint64_t now)
{
    bool wrapped;
    for (int pass = 0; pass < 2; pass++) {
        do {
            fdp__ct_sweep(ct, now, 100, &wrapped);
        } while (!wrapped);
    }
}

START_TEST(random_vs_model)
{
    struct unit_rng rng;
    unit_rng_init(&rng, 23);
    struct env e;
    env_init(&e, 8192);
    struct model *m = calloc(1, sizeof *m);
    m->limit = 200;
    m->seq_chk = true;
    ck_assert_int_eq(fdp__ct_set_limit(e.ct, m->limit), 0);
    struct gflow flows[N_GFLOWS];
    for (int i = 0; i < N_GFLOWS; i++) {
        g_flow(&rng, &flows[i]);
    }

    int step = 0;
    int seen[32] = { 0 };
    for (int round = 0; round < 1500; round++) {
        /* Control changes between batches. */
        switch (unit_rng_below(&rng, 40)) {
        case 0:
            e.now += unit_rng_below(&rng, 40000);
            sweep_all(e.ct, e.now);
            for (int i = 0; i < m->n; i++) {
                if (e.now >= m->c[i].expiry) {
                    m->c[i].alive = false;
                }
            }
            break;
        case 1:
            m->limit = 5 + unit_rng_below(&rng, 300);
            ck_assert_int_eq(fdp__ct_set_limit(e.ct, m->limit), 0);
            break;
        case 2: {
            uint16_t z = (uint16_t) unit_rng_below(&rng, 3);
            m->zone_limit[z] = unit_rng_below(&rng, 2) ? 0
                               : 1 + unit_rng_below(&rng, 20);
            fdp__ct_set_zone_limit(e.ct, z, m->zone_limit[z]);
            m->default_zone_limit = unit_rng_below(&rng, 3) ? 0 : 30;
            fdp__ct_set_default_zone_limit(e.ct, m->default_zone_limit);
            break;
        }
        case 3: {
            uint16_t z = (uint16_t) unit_rng_below(&rng, 3);
            int exp = 0;
            bool all = unit_rng_below(&rng, 4) == 0;
            for (int i = 0; i < m->n; i++) {
                if (m->c[i].alive && (all || m->c[i].zone == z)) {
                    m->c[i].alive = false;
                    exp++;
                }
            }
            ck_assert_uint_eq(fdp__ct_flush(e.ct, all ? NULL : &z, NULL),
                              exp);
            break;
        }
        case 4: {
            /* Flush one connection by its reply tuple. */
            for (int i = m->n - 1; i >= 0; i--) {
                if (m->c[i].alive && e.now < m->c[i].expiry) {
                    m->c[i].alive = false;
                    ck_assert_uint_eq(fdp__ct_flush(e.ct, &m->c[i].zone,
                                                    &m->c[i].t[1]), 1);
                    break;
                }
            }
            break;
        }
        case 5:
            m->seq_chk = !m->seq_chk;
            fdp__ct_set_tcp_seq_chk(e.ct, m->seq_chk);
            break;
        }

        /* A batch with one set of arguments. */
        struct fdp__ct_args a = { .commit = unit_rng_below(&rng, 10) < 7 };
        a.force = unit_rng_below(&rng, 20) == 0;
        /* Plain nat changes nothing for connections committed without a
         * translation (the NAT cases above cover the others). */
        static const struct fdp__ct_nat plain_nat = { .flags = 0 };
        if (unit_rng_below(&rng, 4) == 0) {
            a.nat = &plain_nat;
        }
        if (unit_rng_below(&rng, 5) == 0) {
            a.mark = (uint32_t) unit_rng_next(&rng);
            a.mark_mask = unit_rng_below(&rng, 2) ? ~0u : 0xff;
        }
        if (unit_rng_below(&rng, 10) == 0) {
            a.label = (struct fdp_value) { unit_rng_next(&rng),
                                           unit_rng_next(&rng) };
            a.label_mask = (struct fdp_value) { ~0ull,
                                                unit_rng_next(&rng) };
        }
        size_t n = 1 + unit_rng_below(&rng, 12);
        struct tpkt pk[12];
        struct mpkt mp[12];
        struct fdp__pkt *pp[12];
        uint16_t zones[12];
        struct fdp__ct_result res[12];
        for (size_t i = 0; i < n; i++) {
            g_packet(&rng, &flows[unit_rng_below(&rng, N_GFLOWS)], flows,
                     &pk[i], &mp[i]);
            pp[i] = &pk[i].pkt;
            zones[i] = (uint16_t) unit_rng_below(&rng, 3);
        }
        fdp__ct_execute(e.pmd, pp, n, &a, zones, e.now, res);
        for (size_t i = 0; i < n; i++, step++) {
            struct fdp__ct_result exp = m_process(m, &mp[i], zones[i], &a,
                                                  e.now);
            if (res[i].state != exp.state) {
                fprintf(stderr, "step %d: proto %d v6 %d related %d ok %d "
                        "l3 %d l4 %d size %u\n", step, mp[i].t.proto,
                        mp[i].t.ipv6, mp[i].related, mp[i].ok,
                        pk[i].pkt.layout.l3, pk[i].pkt.layout.l4,
                        pk[i].pkt.size);
            }
            check_result(&res[i], &exp, step);
            seen[exp.state & 0x1f]++;
        }

        /* Counts every round, the whole table now and then. */
        ck_assert_uint_eq(fdp__ct_count(e.ct), m_count(m, NULL));
        for (uint16_t z = 0; z < 3; z++) {
            ck_assert_uint_eq(fdp__ct_zone_count(e.ct, z), m_count(m, &z));
        }
        if (round % 50 == 0) {
            struct dump_ctx d = { m, 0 };
            fdp__ct_dump(e.ct, NULL, e.now, dump_check, &d);
            int live = 0;
            for (int i = 0; i < m->n; i++) {
                live += m->c[i].alive && e.now < m->c[i].expiry;
            }
            ck_assert_int_eq(d.n, live);
        }
        /* Keep the model's list short. */
        if (m->n > M_MAX - 64) {
            int k = 0;
            for (int i = 0; i < m->n; i++) {
                if (m->c[i].alive) {
                    m->c[k++] = m->c[i];
                }
            }
            m->n = k;
        }
    }
    /* The workload reached every outcome. */
    static const uint8_t outcomes[] = {
        FDP_CT_NEW, FDP_CT_EST, FDP_CT_EST | FDP_CT_RPL, FDP_CT_REL,
        FDP_CT_REL | FDP_CT_RPL, FDP_CT_INV,
    };
    for (size_t i = 0; i < sizeof outcomes; i++) {
        ck_assert_msg(seen[outcomes[i]] > 0, "ct_state 0x%x seen %d times",
                      outcomes[i], seen[outcomes[i]]);
    }
    free(m);
    env_destroy(&e);
}
END_TEST

START_TEST(memory_per_connection)
{
    /* The plan's budget: 128 bytes per IPv4 connection, index
     * included. */
    ck_assert_uint_le(fdp__ct_bytes_per_conn(false), 128);
    ck_assert_uint_le(fdp__ct_bytes_per_conn(true), 192);
    struct fdp__ct *ct;
    ck_assert_int_eq(fdp__ct_create(0, &ct), EINVAL);
    ck_assert_int_eq(fdp__ct_create(FDP__CT_MAX_CAPACITY + 1, &ct), EINVAL);
    fdp__ct_destroy(NULL);
}
END_TEST

/* A table filled to its capacity: every committed connection is found
 * again in both directions, commits beyond the capacity are refused, and
 * bounded sweeps remove them all, never more per call than asked. */
START_TEST(fill_and_sweep_in_slices)
{
    enum { CAP = 5000 };
    struct env e;
    env_init(&e, CAP);
    struct fdp__ct_args a = { .commit = true };
    static bool committed[CAP + 100];
    int n = 0;
    for (int i = 0; i < CAP + 100; i++) {
        struct tflow f = { false, P_UDP, v4(0x0a000000 | (uint32_t) i),
                           v4(0x0b000001), (uint16_t) (1 + (i & 7)), 53 };
        struct tspec s = spec(&f);
        struct fdp__ct_result r = run(&e, &s, &a);
        ck_assert_uint_eq(r.state, FDP_CT_NEW | FDP_CT_TRK);
        committed[i] = fdp__ct_count(e.ct) > (uint32_t) n;
        n = (int) fdp__ct_count(e.ct);
    }
    ck_assert_uint_le(n, CAP);
    /* A few may find no room within the probe bound; no more than 1%. */
    ck_assert_uint_ge(n, CAP - CAP / 100);
    for (int i = 0; i < CAP + 100; i++) {
        struct tflow f = { false, P_UDP, v4(0x0a000000 | (uint32_t) i),
                           v4(0x0b000001), (uint16_t) (1 + (i & 7)), 53 };
        struct tflow r = rev_flow(&f);
        struct tspec s = spec(&r);
        ck_assert_uint_eq(run(&e, &s, &lookup0).state,
                          committed[i] ? FDP_CT_EST | FDP_CT_RPL | FDP_CT_TRK
                          : FDP_CT_NEW | FDP_CT_TRK);
    }
    e.now += 31000;
    uint32_t removed = 0;
    bool wrapped = false;
    int calls = 0;
    while (!wrapped) {
        uint32_t k = fdp__ct_sweep(e.ct, e.now, 97, &wrapped);
        ck_assert_uint_le(k, 97);
        removed += k;
        calls++;
    }
    ck_assert_uint_eq(removed, n);
    ck_assert_uint_eq(fdp__ct_count(e.ct), 0);
    ck_assert_int_ge(calls, CAP / 97);
    env_destroy(&e);
}
END_TEST

/* ---- Concurrency ---- */

struct conc {
    struct fdp__ct *ct;
    uint64_t progress[2];
    uint64_t now;               /* Atomic: the shared fake clock. */
    bool stop;                  /* Atomic. */
};

struct conc_arg {
    struct conc *c;
    int id;
};

static void *
conc_pmd(void *arg_)
{
    struct conc_arg *arg = arg_;
    struct conc *c = arg->c;
    struct fdp__ct_pmd *pmd;
    struct unit_rng rng;

    unit_rng_init(&rng, 100 + (uint64_t) arg->id);
    ck_assert_int_eq(fdp__ct_pmd_create(c->ct, &pmd), 0);
    while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
        struct tpkt pk[16];
        struct fdp__pkt *pp[16];
        struct fdp__ct_result res[16];
        for (int i = 0; i < 16; i++) {
            /* Both threads use the same 512 UDP and TCP flows, each in
             * either direction, so that they share connections. */
            uint32_t n = unit_rng_below(&rng, 512);
            struct tflow f = { false, (n & 1) ? P_UDP : P_TCP,
                               v4(0x0a000000 | (n >> 4)), v4(0x0b000000),
                               (uint16_t) (1000 + (n & 15)), 80 };
            if (unit_rng_below(&rng, 2)) {
                f = rev_flow(&f);
            }
            struct tspec s = spec(&f);
            s.tcp_flags = unit_rng_below(&rng, 4) ? 0x10 : 0x02;
            s.seq = 1000;
            s.ack = 1000;
            build(&pk[i], &s);
            pp[i] = &pk[i].pkt;
        }
        struct fdp__ct_args a = { .commit = true, .mark = 1,
                                  .mark_mask = 1 };
        fdp__ct_execute(pmd, pp, 16, &a, NULL,
                        __atomic_load_n(&c->now, __ATOMIC_RELAXED), res);
        for (int i = 0; i < 16; i++) {
            ck_assert(res[i].state & FDP_CT_TRK);
        }
        unit_progress_bump(&c->progress[arg->id]);
    }
    fdp__ct_pmd_destroy(pmd);
    return NULL;
}

START_TEST(concurrency)
{
    struct conc c = { .now = 1000000 };
    ck_assert_int_eq(fdp__ct_create(4096, &c.ct), 0);
    pthread_t th[2];
    struct conc_arg args[2] = { { &c, 0 }, { &c, 1 } };
    for (int i = 0; i < 2; i++) {
        pthread_create(&th[i], NULL, conc_pmd, &args[i]);
    }
    for (int round = 0; round < 120; round++) {
        uint64_t t0 = unit_progress_get(&c.progress[0]);
        uint64_t t1 = unit_progress_get(&c.progress[1]);
        switch (round % 4) {
        case 0:
            fdp__ct_flush(c.ct, NULL, NULL);
            break;
        case 1:
            ck_assert_int_eq(fdp__ct_set_limit(c.ct, 50 + round * 10), 0);
            break;
        case 2: {
            /* Time passes: everything not refreshed expires. */
            __atomic_fetch_add(&c.now, 61000, __ATOMIC_RELAXED);
            bool wrapped;
            do {
                fdp__ct_sweep(c.ct, __atomic_load_n(&c.now, __ATOMIC_RELAXED),
                              64, &wrapped);
            } while (!wrapped);
            break;
        }
        case 3: {
            uint16_t z = 0;
            fdp__ct_flush(c.ct, &z, NULL);
            break;
        }
        }
        unit_progress_wait(&c.progress[0], t0 + 3, "pmd 0");
        unit_progress_wait(&c.progress[1], t1 + 3, "pmd 1");
        ck_assert_uint_le(fdp__ct_count(c.ct), 4096);
    }
    __atomic_store_n(&c.stop, true, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    /* Everything left is consistent: a flush finds exactly the count. */
    uint32_t n = fdp__ct_count(c.ct);
    ck_assert_uint_eq(fdp__ct_flush(c.ct, NULL, NULL), n);
    ck_assert_uint_eq(fdp__ct_count(c.ct), 0);
    fdp__ct_destroy(c.ct);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("conntrack");
    TCase *tc = unit_tcase(s, "semantics");
    tcase_add_test(tc, udp_basics);
    tcase_add_test(tc, icmp_echo_and_errors);
    tcase_add_test(tc, tcp_lifecycle);
    tcase_add_test(tc, force_and_limits);
    tcase_add_test(tc, memory_per_connection);
    tcase_add_test(tc, fill_and_sweep_in_slices);
    tc = unit_tcase(s, "nat");
    tcase_add_test(tc, nat_snat_many_clients);
    tcase_add_test(tc, nat_snat_keeps_port);
    tcase_add_test(tc, nat_dnat_and_both);
    tcase_add_test(tc, nat_icmp);
    tcase_add_test(tc, nat_dnat_collisions);
    tcase_add_test(tc, nat_second_ct_same_zone);
    tcase_add_test(tc, cached_connection);
    tcase_add_test(tc, nat_random_vs_reference);
    tc = unit_tcase(s, "model");
    tcase_add_test(tc, random_vs_model);
    tc = unit_tcase(s, "concurrency");
    tcase_add_test(tc, concurrency);
    tcase_add_test(tc, nat_concurrency);
    return unit_run(s);
}
