/*
 * Unit tests for datapath/execute.c.
 *
 * The oracle: random packets of every kind (TCP, UDP with and without a
 * checksum, ICMP, SCTP over IPv4 and IPv6, ICMPv6, IPv6 neighbour
 * solicitations and advertisements with their link-layer address option,
 * ARP, later IPv4 fragments; untagged, 802.1Q and QinQ) get random action lists.  A model
 * applies each action to the packet's extracted key; after execution the
 * packet must extract to the model's key (so every rewrite landed in the
 * right bytes and nothing else moved), every checksum must verify when
 * recomputed from scratch, and each output must carry the packet as it
 * was at that point of the list.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/execute.h"
#include <flowdp/datapath.h>
#include "lib/actions-internal.h"
#include "lib/field.h"
#include "lib/util.h"
#include "unit.h"

enum kind {
    K_TCP4, K_UDP4, K_UDP4_NOCSUM, K_ICMP4, K_SCTP4, K_FRAG4,
    K_TCP6, K_UDP6, K_ICMP6, K_SCTP6, K_NS6, K_NA6, K_ARP, N_KINDS
};

#define HEADROOM 64
#define BUF_SIZE 512

/* ---------------------------------------------------------------------- */
/* Reference checksums, written independently of the code under test.     */

static uint32_t
ref_sum(uint32_t sum, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sum += (i & 1) ? p[i] : (uint32_t) p[i] << 8;
    }
    return sum;
}

static uint16_t
ref_fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t) sum;
}

static uint32_t
ref_crc32c(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xffffffff;

    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++) {
            crc = (crc >> 1) ^ (0x82f63b78 & (0u - (crc & 1)));
        }
    }
    return ~crc;
}

/* ---------------------------------------------------------------------- */
/* Packet building.                                                        */

struct builder {
    uint8_t *p;
    size_t n;
};

static void
put8(struct builder *b, uint8_t v)
{
    b->p[b->n++] = v;
}

static void
put16(struct builder *b, uint16_t v)
{
    put8(b, (uint8_t) (v >> 8));
    put8(b, (uint8_t) v);
}

static void
put_random(struct builder *b, struct unit_rng *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        put8(b, (uint8_t) unit_rng_next(r));
    }
}

static uint16_t
get16(const uint8_t *p)
{
    return (uint16_t) (p[0] << 8 | p[1]);
}

static void
set16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

static bool
is_v6(enum kind k)
{
    return k >= K_TCP6 && k <= K_NA6;
}

static uint8_t
kind_proto(enum kind k)
{
    switch (k) {
    case K_TCP4: case K_TCP6: return 6;
    case K_UDP4: case K_UDP4_NOCSUM: case K_UDP6: case K_FRAG4: return 17;
    case K_ICMP4: return 1;
    case K_ICMP6: case K_NS6: case K_NA6: return 58;
    case K_SCTP4: case K_SCTP6: return 132;
    default: return 0;
    }
}

/* Pseudo-header sum (RFC 793, RFC 8200 section 8.1). */
static uint32_t
pseudo_sum(const uint8_t *ip, bool v6, uint8_t proto, size_t l4_len)
{
    uint32_t sum = v6 ? ref_sum(0, ip + 8, 32) : ref_sum(0, ip + 12, 8);

    return sum + proto + (uint32_t) l4_len;
}

/* Fills in the transport checksum of the segment at 'l4' ('len' bytes)
 * after IP header 'ip'. */
static void
finish_l4(enum kind k, const uint8_t *ip, uint8_t *l4, size_t len)
{
    uint8_t proto = kind_proto(k);

    switch (proto) {
    case 6:
    case 17: {
        size_t at = proto == 6 ? 16 : 6;
        if (k == K_UDP4_NOCSUM) {
            return;
        }
        set16(l4 + at, 0);
        uint16_t c = (uint16_t) ~ref_fold(ref_sum(pseudo_sum(ip, is_v6(k),
                                                             proto, len),
                                                  l4, len));
        set16(l4 + at, proto == 17 && !c ? 0xffff : c);
        break;
    }
    case 1:
        set16(l4 + 2, 0);
        set16(l4 + 2, (uint16_t) ~ref_fold(ref_sum(0, l4, len)));
        break;
    case 58:
        set16(l4 + 2, 0);
        set16(l4 + 2, (uint16_t) ~ref_fold(ref_sum(pseudo_sum(ip, true, 58,
                                                              len),
                                                   l4, len)));
        break;
    case 132: {
        memset(l4 + 8, 0, 4);
        uint32_t crc = ref_crc32c(l4, len);
        for (int i = 0; i < 4; i++) {
            l4[8 + i] = (uint8_t) (crc >> (8 * i));
        }
        break;
    }
    }
}

/* The transport header, 'payload' random bytes after it. */
static void
build_l4(struct builder *b, struct unit_rng *r, enum kind k, size_t payload)
{
    if (k == K_NS6 || k == K_NA6) {
        /* Type, code 0, checksum, flags, target, then one link-layer
         * address option of the kind the message carries (source in a
         * solicitation, target in an advertisement), its address never
         * zero; nothing after it, which would read as more options. */
        put8(b, k == K_NS6 ? 135 : 136);
        put8(b, 0);
        put_random(b, r, 2 + 4 + 16);
        put8(b, k == K_NS6 ? 1 : 2);
        put8(b, 1);
        put8(b, (uint8_t) (1 | unit_rng_next(r)));
        put_random(b, r, 5);
        return;
    }
    switch (kind_proto(k)) {
    case 6:
        put_random(b, r, 12);               /* Ports, seq, ack. */
        put8(b, 0x50);                      /* Data offset 5. */
        put8(b, (uint8_t) unit_rng_next(r));
        put_random(b, r, 6);                /* Window, csum, urgent. */
        break;
    case 17:
        put_random(b, r, 4);
        put16(b, (uint16_t) (8 + payload));
        put16(b, 0);
        break;
    case 1:
        put_random(b, r, 8);
        break;
    case 58:
        /* A code other than 0: never neighbour discovery, which the ND
         * kinds cover (the model does not follow a message becoming one). */
        put_random(b, r, 1);
        put8(b, (uint8_t) (1 | unit_rng_next(r)));
        put_random(b, r, 6);
        break;
    case 132:
        put_random(b, r, 12);
        break;
    }
    put_random(b, r, payload);
}

/* Builds a packet of kind 'k' with 'n_tags' VLAN tags at b->p. */
static void
build(struct builder *b, struct unit_rng *r, enum kind k, int n_tags)
{
    size_t payload = unit_rng_below(r, 41);

    put_random(b, r, 12);                   /* dl_dst, dl_src. */
    for (int i = 0; i < n_tags; i++) {
        put16(b, i == 0 && n_tags == 2 ? 0x88a8 : 0x8100);
        put16(b, (uint16_t) unit_rng_next(r));
    }
    if (k == K_ARP) {
        put16(b, 0x0806);
        put16(b, 1);
        put16(b, 0x0800);
        put8(b, 6);
        put8(b, 4);
        put16(b, (uint16_t) (1 + unit_rng_below(r, 4)));
        put_random(b, r, 20);
        return;
    }
    if (is_v6(k)) {
        put16(b, 0x86dd);
        size_t ip = b->n;
        put8(b, (uint8_t) (0x60 | unit_rng_below(r, 16)));
        put_random(b, r, 3);                /* Rest of class, label. */
        size_t len_at = b->n;
        put16(b, 0);
        put8(b, kind_proto(k));
        put8(b, (uint8_t) unit_rng_below(r, 4));   /* Hop limit 0..3 too. */
        put_random(b, r, 32);
        size_t l4 = b->n;
        build_l4(b, r, k, payload);
        set16(b->p + len_at, (uint16_t) (b->n - l4));
        finish_l4(k, b->p + ip, b->p + l4, b->n - l4);
        return;
    }
    put16(b, 0x0800);
    size_t ip = b->n;
    bool options = unit_rng_below(r, 4) == 0;
    put8(b, options ? 0x46 : 0x45);
    put8(b, (uint8_t) unit_rng_next(r));    /* TOS with ECN bits. */
    put16(b, 0);                            /* Total length, later. */
    put16(b, (uint16_t) unit_rng_next(r));
    put16(b, k == K_FRAG4 ? 0x2000 | 185 : 0);   /* MF, offset 1480. */
    put8(b, (uint8_t) unit_rng_below(r, 4) == 0
            ? (uint8_t) unit_rng_below(r, 2) : (uint8_t) unit_rng_next(r));
    put8(b, kind_proto(k));
    put16(b, 0);
    put_random(b, r, 8);
    if (options) {
        put8(b, 1);
        put8(b, 1);
        put8(b, 1);
        put8(b, 0);
    }
    size_t l4 = b->n;
    if (k == K_FRAG4) {
        put_random(b, r, 8 + payload);      /* No L4 header here. */
    } else {
        build_l4(b, r, k, payload);
    }
    set16(b->p + ip + 2, (uint16_t) (b->n - ip));
    set16(b->p + ip + 10, (uint16_t) ~ref_fold(ref_sum(0, b->p + ip,
                                                       options ? 24 : 20)));
    if (k != K_FRAG4) {
        finish_l4(k, b->p + ip, b->p + l4, b->n - l4);
    }
}

/* ---------------------------------------------------------------------- */
/* Checking checksums from scratch.                                        */

/* Asserts that every checksum of 'p' verifies; 'udp_zero' says the UDP
 * checksum was zero (none) on input and must still be. */
static void
verify_checksums(const uint8_t *p, size_t size, enum kind k, bool udp_zero,
                 uint64_t seed)
{
    struct fdp_key key;
    struct fdp_packet_layout lay;

    fdp_packet_extract(p, size, 1, &key, &lay);
    if (k == K_ARP) {
        return;
    }
    ck_assert_msg(lay.l3 >= 0, "seed %#" PRIx64 ": IP header lost", seed);
    const uint8_t *ip = p + lay.l3;
    size_t l4_len;
    if (is_v6(k)) {
        l4_len = get16(ip + 4);
    } else {
        size_t ihl = (size_t) (ip[0] & 15) * 4;
        ck_assert_msg(ref_fold(ref_sum(0, ip, ihl)) == 0xffff,
                      "seed %#" PRIx64 ": bad IPv4 header checksum", seed);
        l4_len = get16(ip + 2) - ihl;
    }
    if (k == K_FRAG4) {
        return;
    }
    ck_assert_int_ge(lay.l4, 0);
    const uint8_t *l4 = p + lay.l4;
    uint8_t proto = kind_proto(k);
    uint32_t sum;
    switch (proto) {
    case 17:
        if (udp_zero) {
            ck_assert_msg(get16(l4 + 6) == 0, "seed %#" PRIx64 ": a zero "
                          "UDP checksum must stay zero", seed);
            return;
        }
        ck_assert_msg(get16(l4 + 6) != 0, "seed %#" PRIx64 ": UDP "
                      "checksum became zero", seed);
        /* Fall through. */
    case 6:
    case 58:
        sum = ref_sum(pseudo_sum(ip, is_v6(k), proto, l4_len), l4, l4_len);
        ck_assert_msg(ref_fold(sum) == 0xffff, "seed %#" PRIx64 ": bad "
                      "checksum for protocol %d", seed, proto);
        break;
    case 1:
        ck_assert_msg(ref_fold(ref_sum(0, l4, l4_len)) == 0xffff,
                      "seed %#" PRIx64 ": bad ICMP checksum", seed);
        break;
    case 132: {
        uint8_t copy[BUF_SIZE];
        memcpy(copy, l4, l4_len);
        memset(copy + 8, 0, 4);
        uint32_t crc = ref_crc32c(copy, l4_len);
        uint32_t got = (uint32_t) l4[8] | (uint32_t) l4[9] << 8
                       | (uint32_t) l4[10] << 16 | (uint32_t) l4[11] << 24;
        ck_assert_msg(crc == got, "seed %#" PRIx64 ": bad SCTP CRC32C",
                      seed);
        break;
    }
    }
}

/* ---------------------------------------------------------------------- */
/* The model.                                                              */

struct model {
    struct fdp_key key;
    enum kind kind;
    int n_tags;
    uint16_t tpid[16], tci[16];     /* Outer first. */
};

static void
model_vlan_key(struct model *m)
{
    fdp__key_set(&m->key, FDP_F_VLAN_TCI,
                 m->n_tags ? (uint16_t) (m->tci[0] | FDP_VLAN_CFI) : 0);
}

static void
model_push(struct model *m, uint16_t tpid, uint16_t tci)
{
    memmove(&m->tpid[1], &m->tpid[0], m->n_tags * sizeof m->tpid[0]);
    memmove(&m->tci[1], &m->tci[0], m->n_tags * sizeof m->tci[0]);
    m->tpid[0] = tpid;
    m->tci[0] = tci;
    m->n_tags++;
    model_vlan_key(m);
}

/* Whether set_field on 'f' changes a packet of kind 'k'. */
static bool
applies(enum kind k, enum fdp_field f)
{
    bool ip = k != K_ARP;
    uint8_t proto = kind_proto(k);

    switch (f) {
    case FDP_F_DL_SRC: case FDP_F_DL_DST:
        return true;
    case FDP_F_NW_SRC: case FDP_F_NW_DST:
        return ip && !is_v6(k);
    case FDP_F_IPV6_SRC: case FDP_F_IPV6_DST: case FDP_F_IPV6_LABEL:
        return is_v6(k);
    case FDP_F_NW_TOS: case FDP_F_NW_ECN: case FDP_F_NW_TTL:
        return ip;
    case FDP_F_TP_SRC: case FDP_F_TP_DST:
        return k != K_FRAG4 && (proto == 6 || proto == 17 || proto == 132);
    case FDP_F_ICMP_TYPE: case FDP_F_ICMP_CODE:
        return proto == 1 || proto == 58;
    case FDP_F_ND_TARGET: case FDP_F_ND_RESERVED:
        return k == K_NS6 || k == K_NA6;
    case FDP_F_ND_SLL:
        return k == K_NS6;
    case FDP_F_ND_TLL:
        return k == K_NA6;
    case FDP_F_ARP_OP: case FDP_F_ARP_SPA: case FDP_F_ARP_TPA:
    case FDP_F_ARP_SHA: case FDP_F_ARP_THA:
        return k == K_ARP;
    default:
        return false;
    }
}

static const enum fdp_field settable[] = {
    FDP_F_DL_SRC, FDP_F_DL_DST, FDP_F_NW_SRC, FDP_F_NW_DST,
    FDP_F_IPV6_SRC, FDP_F_IPV6_DST, FDP_F_IPV6_LABEL, FDP_F_NW_TOS,
    FDP_F_NW_ECN, FDP_F_NW_TTL, FDP_F_TP_SRC, FDP_F_TP_DST,
    FDP_F_ICMP_TYPE, FDP_F_ICMP_CODE, FDP_F_ARP_OP, FDP_F_ARP_SPA,
    FDP_F_ARP_TPA, FDP_F_ARP_SHA, FDP_F_ARP_THA, FDP_F_ND_TARGET,
    FDP_F_ND_SLL, FDP_F_ND_TLL, FDP_F_ND_RESERVED,
};

/* ---------------------------------------------------------------------- */
/* Execution with recorded outputs.                                        */

struct sent {
    uint32_t port;
    bool steal;
    size_t size;
    uint8_t data[BUF_SIZE];
};

struct recorder {
    struct sent sent[16];
    size_t n_sent;
    size_t n_controller;
};

static void
rec_output(void *aux, struct fdp__pkt *pkt, uint32_t port, bool steal)
{
    struct recorder *rec = aux;
    struct sent *s = &rec->sent[rec->n_sent++];

    s->port = port;
    s->steal = steal;
    s->size = pkt->size;
    memcpy(s->data, pkt->data, pkt->size);
}

static void
rec_controller(void *aux, const struct fdp__pkt *pkt,
               const struct fdp__action *a)
{
    struct recorder *rec = aux;

    (void) pkt;
    (void) a;
    rec->n_controller++;
}

static const struct fdp__exec_ops rec_ops = {
    .output = rec_output, .controller = rec_controller,
};

static void
pkt_init(struct fdp__pkt *pkt, uint8_t *buf, size_t size, size_t headroom)
{
    pkt->data = buf + headroom;
    pkt->size = (uint32_t) size;
    pkt->headroom = (uint32_t) headroom;
    fdp_packet_extract(pkt->data, pkt->size, 1, &pkt->key, &pkt->layout);
}

/* ---------------------------------------------------------------------- */
/* Tests.                                                                  */

/* One random case; returns the executor's result. */
static enum fdp__exec_result
random_case(uint64_t seed)
{
    struct unit_rng r = { .state = seed };
    uint8_t buf[BUF_SIZE] = { 0 };
    struct builder b = { buf + HEADROOM, 0 };
    enum kind k = (enum kind) unit_rng_below(&r, N_KINDS);
    int n_tags = (int) unit_rng_below(&r, 3);
    struct model m = { .kind = k, .n_tags = n_tags };
    struct recorder rec = { .n_sent = 0 };
    struct fdp_key at_output[16];   /* The model's key at each output. */
    size_t n_outputs = 0;
    struct fdp__actions_builder ab;
    enum fdp__exec_result expect = FDP__EXEC_DONE;

    build(&b, &r, k, n_tags);
    for (int i = 0; i < n_tags; i++) {
        m.tpid[i] = get16(buf + HEADROOM + 12 + 4 * i);
        m.tci[i] = get16(buf + HEADROOM + 14 + 4 * i);
    }
    bool udp_zero = k == K_UDP4_NOCSUM;

    struct fdp__pkt pkt;
    pkt_init(&pkt, buf, b.n, HEADROOM);
    m.key = pkt.key;

    /* Random actions, modelled as they are added. */
    fdp__actions_builder_init(&ab);
    int n_actions = 1 + (int) unit_rng_below(&r, 8);
    for (int i = 0; i < n_actions && expect == FDP__EXEC_DONE; i++) {
        uint32_t what = unit_rng_below(&r, 20);
        if (what < 9) {
            enum fdp_field f = settable[unit_rng_below(
                &r, FDP_ARRAY_SIZE(settable))];
            fdp_u128 v = ((fdp_u128) unit_rng_next(&r) << 64)
                         | unit_rng_next(&r);
            v &= fdp__ones(fdp__field(f)->n_bits);
            if (f == FDP_F_ICMP_TYPE || f == FDP_F_ICMP_CODE) {
                if (k == K_NS6 || k == K_NA6
                    || (k == K_ICMP6 && f == FDP_F_ICMP_CODE)) {
                    /* Another type or code would make an ND message not
                     * one, code 0 an ICMPv6 message one: the model does
                     * not follow either. */
                    continue;
                }
                v &= 0xff;
            }
            fdp__actions_add_set_field(&ab, f, v, 0);
            if (applies(k, f)) {
                fdp__key_set(&m.key, f, v);
            }
        } else if (what < 11) {
            uint16_t vid = (uint16_t) unit_rng_below(&r, 4096);
            fdp__actions_add(&ab, FDP_ACT_SET_VLAN_VID, vid);
            if (m.n_tags) {
                m.tci[0] = (uint16_t) ((m.tci[0] & ~0x0fff) | vid);
                model_vlan_key(&m);
            } else {
                model_push(&m, 0x8100, vid);
            }
        } else if (what < 12) {
            uint16_t pcp = (uint16_t) unit_rng_below(&r, 8);
            fdp__actions_add(&ab, FDP_ACT_SET_VLAN_PCP, pcp);
            if (m.n_tags) {
                m.tci[0] = (uint16_t) ((m.tci[0] & 0x1fff) | pcp << 13);
                model_vlan_key(&m);
            } else {
                model_push(&m, 0x8100, (uint16_t) (pcp << 13));
            }
        } else if (what < 13) {
            fdp__actions_add(&ab, FDP_ACT_STRIP_VLAN, 0);
            if (m.n_tags) {
                m.n_tags--;
                memmove(&m.tpid[0], &m.tpid[1], m.n_tags * sizeof m.tpid[0]);
                memmove(&m.tci[0], &m.tci[1], m.n_tags * sizeof m.tci[0]);
                model_vlan_key(&m);
            }
        } else if (what < 14 && m.n_tags < 2) {
            /* At most two tags: the parser, as Open vSwitch's, reads two
             * and takes a third TPID for the frame's type. */
            uint16_t tpid = unit_rng_below(&r, 2) ? 0x8100 : 0x88a8;
            fdp__actions_add(&ab, FDP_ACT_PUSH_VLAN, tpid);
            model_push(&m, tpid, m.n_tags ? m.tci[0] : 0);
        } else if (what < 16) {
            fdp__actions_add(&ab, FDP_ACT_DEC_TTL, 0);
            if (k != K_ARP) {
                uint8_t ttl = (uint8_t) fdp__key_get(&m.key, FDP_F_NW_TTL);
                if (ttl <= 1) {
                    expect = FDP__EXEC_TTL_EXPIRED;
                } else {
                    fdp__key_set(&m.key, FDP_F_NW_TTL, ttl - 1u);
                }
            }
        } else if (what < 19) {
            /* Output to 2..4 (never the input port 1) or to in_port. */
            at_output[n_outputs++] = m.key;
            if (unit_rng_below(&r, 4)) {
                fdp__actions_add(&ab, FDP_ACT_OUTPUT,
                                 2 + unit_rng_below(&r, 3));
            } else {
                fdp__actions_add(&ab, FDP_ACT_IN_PORT, 0);
            }
        } else {
            fdp__actions_add(&ab, FDP_ACT_CONTROLLER, 65535);
        }
    }
    struct fdp_actions *acts = fdp__actions_finish(&ab);
    ck_assert_ptr_nonnull(acts);

    enum fdp__exec_result res = fdp__execute(acts, &pkt, 1, &rec_ops, &rec);

    if (res == FDP__EXEC_STOLEN) {
        ck_assert_int_eq(expect, FDP__EXEC_DONE);
        ck_assert(rec.n_sent > 0 && rec.sent[rec.n_sent - 1].steal);
    } else {
        ck_assert_msg(res == expect, "seed %#" PRIx64 ": result %d, "
                      "expected %d", seed, res, expect);
    }
    if (expect == FDP__EXEC_DONE) {
        struct fdp_key got;
        fdp_packet_extract(pkt.data, pkt.size, 1, &got, NULL);
        for (int f = 0; f < FDP_N_FIELDS; f++) {
            if (fdp__key_get(&got, f) != fdp__key_get(&m.key, f)) {
                fprintf(stderr, "seed %#" PRIx64 ": %s is %#" PRIx64
                        ", model says %#" PRIx64 "\n", seed,
                        fdp__field(f)->name,
                        (uint64_t) fdp__key_get(&got, f),
                        (uint64_t) fdp__key_get(&m.key, f));
            }
        }
        ck_assert_msg(!memcmp(&got, &m.key, sizeof got),
                      "seed %#" PRIx64 " (kind %d, %d tags): the packet "
                      "does not extract to the model's key", seed, k,
                      n_tags);
        verify_checksums(pkt.data, pkt.size, k, udp_zero, seed);
        ck_assert_uint_eq(pkt.size,
                          b.n + 4 * (size_t) m.n_tags - 4 * (size_t) n_tags);
    }
    ck_assert_uint_eq(rec.n_sent, n_outputs);
    for (size_t i = 0; i < rec.n_sent; i++) {
        struct fdp_key got;
        fdp_packet_extract(rec.sent[i].data, rec.sent[i].size, 1, &got,
                           NULL);
        ck_assert_msg(!memcmp(&got, &at_output[i], sizeof got),
                      "seed %#" PRIx64 ": output %zu is not the packet as "
                      "modified up to it", seed, i);
        verify_checksums(rec.sent[i].data, rec.sent[i].size, k, udp_zero,
                         seed);
    }
    fdp_actions_destroy(acts);
    return res;
}

START_TEST(random_actions)
{
    uint64_t seed = unit_seed();
    size_t results[4] = { 0 };

    for (uint64_t i = 0; i < 200000; i++) {
        results[random_case(seed * 1000003 + i)]++;
    }
    /* The mix exercised every outcome but running out of headroom. */
    ck_assert(results[FDP__EXEC_DONE] && results[FDP__EXEC_STOLEN]
              && results[FDP__EXEC_TTL_EXPIRED]);
}
END_TEST

/* Each output carries the packet as modified so far; later actions do not
 * reach it.  mod_nw_dst, output:2, mod_nw_dst, dec_ttl, output:3. */
START_TEST(output_sends_packet_so_far)
{
    struct unit_rng r = { .state = unit_seed() };
    uint8_t buf[BUF_SIZE] = { 0 };
    struct builder b = { buf + HEADROOM, 0 };
    struct recorder rec = { .n_sent = 0 };
    struct fdp__actions_builder ab;
    struct fdp__pkt pkt;

    build(&b, &r, K_TCP4, 0);
    buf[HEADROOM + 14 + 8] = 64;            /* TTL */
    set16(buf + HEADROOM + 14 + 10, 0);
    set16(buf + HEADROOM + 14 + 10,
          (uint16_t) ~ref_fold(ref_sum(0, buf + HEADROOM + 14,
                                       (size_t) (buf[HEADROOM + 14] & 15)
                                       * 4)));
    pkt_init(&pkt, buf, b.n, HEADROOM);
    fdp__actions_builder_init(&ab);
    fdp__actions_add_set_field(&ab, FDP_F_NW_DST, 0x0a000001, 0);
    fdp__actions_add(&ab, FDP_ACT_OUTPUT, 2);
    fdp__actions_add(&ab, FDP_ACT_OUTPUT, 1);      /* in_port: skipped */
    fdp__actions_add_set_field(&ab, FDP_F_NW_DST, 0x0a000002, 0);
    fdp__actions_add(&ab, FDP_ACT_DEC_TTL, 0);
    fdp__actions_add(&ab, FDP_ACT_OUTPUT, 3);
    struct fdp_actions *acts = fdp__actions_finish(&ab);

    ck_assert_int_eq(fdp__execute(acts, &pkt, 1, &rec_ops, &rec),
                     FDP__EXEC_STOLEN);
    ck_assert_uint_eq(rec.n_sent, 2);
    struct fdp_key k2, k3;
    fdp_packet_extract(rec.sent[0].data, rec.sent[0].size, 1, &k2, NULL);
    fdp_packet_extract(rec.sent[1].data, rec.sent[1].size, 1, &k3, NULL);
    ck_assert_uint_eq(rec.sent[0].port, 2);
    ck_assert(!rec.sent[0].steal);
    ck_assert_uint_eq(rec.sent[1].port, 3);
    ck_assert(rec.sent[1].steal);
    ck_assert(fdp__key_get(&k2, FDP_F_NW_DST) == 0x0a000001);
    ck_assert(fdp__key_get(&k2, FDP_F_NW_TTL) == 64);
    ck_assert(fdp__key_get(&k3, FDP_F_NW_DST) == 0x0a000002);
    ck_assert(fdp__key_get(&k3, FDP_F_NW_TTL) == 63);
    verify_checksums(rec.sent[0].data, rec.sent[0].size, K_TCP4, false, 0);
    verify_checksums(rec.sent[1].data, rec.sent[1].size, K_TCP4, false, 0);
    fdp_actions_destroy(acts);
}
END_TEST

/* The executor stops at a ct record (the datapath runs the tracker on a
 * batch) and goes on from the action after it: dec_ttl, output:2,
 * ct(...), mod_nw_dst, output:3.  An output before the ct copies; the
 * last output after it steals.  A packet dec_ttl drops never reaches
 * the ct. */
START_TEST(stops_at_ct_and_resumes)
{
    struct unit_rng r = { .state = unit_seed() };
    struct fdp__actions_builder ab;
    uint64_t ct_rec[FDP__DPCT_RECORD_WORDS];
    struct fdp__action hdr = {
        .type = FDP_ACT_CT,
        .n_words = FDP__DPCT_RECORD_WORDS,
        .flags = FDP__ACT_CT_RESOLVED,
    };
    struct fdp__dp_ct dc = { .flags = FDP__DPCT_COMMIT, .zone = 7 };

    memcpy(&ct_rec[0], &hdr, sizeof hdr);
    memcpy(&ct_rec[1], &dc, sizeof dc);
    fdp__actions_builder_init(&ab);
    fdp__actions_add(&ab, FDP_ACT_DEC_TTL, 0);
    fdp__actions_add(&ab, FDP_ACT_OUTPUT, 2);
    fdp__actions_add_record(&ab, (const struct fdp__action *) ct_rec);
    fdp__actions_add_set_field(&ab, FDP_F_NW_DST, 0x0a000009, 0);
    fdp__actions_add(&ab, FDP_ACT_OUTPUT, 3);
    struct fdp_actions *acts = fdp__actions_finish(&ab);
    ck_assert_ptr_nonnull(acts);

    for (unsigned int ttl = 1; ttl <= 2; ttl++) {
        uint8_t buf[BUF_SIZE] = { 0 };
        struct builder b = { buf + HEADROOM, 0 };
        struct recorder rec = { .n_sent = 0 };
        struct fdp__pkt pkt;
        const struct fdp__action *ct = NULL;

        build(&b, &r, K_UDP4, 0);
        buf[HEADROOM + 14 + 8] = (uint8_t) ttl;
        uint8_t buf2[BUF_SIZE];
        memcpy(buf2, buf, sizeof buf2);
        pkt_init(&pkt, buf, b.n, HEADROOM);
        enum fdp__exec_result res;
        res = fdp__execute_from(acts, NULL, &pkt, 1, &rec_ops, &rec, &ct);
        if (ttl == 1) {
            ck_assert_int_eq(res, FDP__EXEC_TTL_EXPIRED);
            ck_assert_ptr_null(ct);
            ck_assert_uint_eq(rec.n_sent, 0);
            continue;
        }
        ck_assert_int_eq(res, FDP__EXEC_CT);
        ck_assert_ptr_nonnull(ct);
        ck_assert_uint_eq(ct->type, FDP_ACT_CT);
        ck_assert_uint_eq(rec.n_sent, 1);
        ck_assert(!rec.sent[0].steal);
        /* fdp__execute() stops at the same place. */
        struct recorder rec2 = { .n_sent = 0 };
        struct fdp__pkt pkt2;
        pkt_init(&pkt2, buf2, b.n, HEADROOM);
        ck_assert_int_eq(fdp__execute(acts, &pkt2, 1, &rec_ops, &rec2),
                         FDP__EXEC_CT);

        res = fdp__execute_from(acts, fdp__actions_next(acts, ct), &pkt, 1,
                                &rec_ops, &rec, &ct);
        ck_assert_int_eq(res, FDP__EXEC_STOLEN);
        ck_assert_uint_eq(rec.n_sent, 2);
        ck_assert_uint_eq(rec.sent[1].port, 3);
        ck_assert(rec.sent[1].steal);
        struct fdp_key k;
        fdp_packet_extract(rec.sent[1].data, rec.sent[1].size, 1, &k, NULL);
        ck_assert(fdp__key_get(&k, FDP_F_NW_DST) == 0x0a000009);
        ck_assert(fdp__key_get(&k, FDP_F_NW_TTL) == ttl - 1);
    }
    fdp_actions_destroy(acts);
}
END_TEST

/* mod_nw_tos keeps ECN, mod_nw_ecn keeps DSCP (IPv4 and IPv6). */
START_TEST(tos_keeps_ecn)
{
    static const enum kind kinds[] = { K_UDP4, K_UDP6 };

    for (size_t i = 0; i < 2; i++) {
        struct unit_rng r = { .state = unit_seed() + i };
        uint8_t buf[BUF_SIZE] = { 0 };
        struct builder b = { buf + HEADROOM, 0 };
        struct recorder rec = { .n_sent = 0 };
        struct fdp__actions_builder ab;
        struct fdp__pkt pkt;

        build(&b, &r, kinds[i], 0);
        pkt_init(&pkt, buf, b.n, HEADROOM);
        uint64_t ecn = (uint64_t) fdp__key_get(&pkt.key, FDP_F_NW_ECN);
        fdp__actions_builder_init(&ab);
        fdp__actions_add_set_field(&ab, FDP_F_NW_TOS, 46, 0);  /* EF */
        struct fdp_actions *acts = fdp__actions_finish(&ab);
        fdp__execute(acts, &pkt, 1, &rec_ops, &rec);
        struct fdp_key got;
        fdp_packet_extract(pkt.data, pkt.size, 1, &got, NULL);
        ck_assert(fdp__key_get(&got, FDP_F_NW_TOS) == 46);
        ck_assert(fdp__key_get(&got, FDP_F_NW_ECN) == ecn);
        verify_checksums(pkt.data, pkt.size, kinds[i], false, 0);
        fdp_actions_destroy(acts);
    }
}
END_TEST

/* Pushing a tag without headroom fails cleanly, leaving the packet. */
START_TEST(no_headroom)
{
    struct unit_rng r = { .state = unit_seed() };
    uint8_t buf[BUF_SIZE] = { 0 };
    struct builder b = { buf, 0 };
    struct recorder rec = { .n_sent = 0 };
    struct fdp__actions_builder ab;
    struct fdp__pkt pkt;

    build(&b, &r, K_TCP4, 0);
    uint8_t before[BUF_SIZE];
    memcpy(before, buf, b.n);
    pkt_init(&pkt, buf, b.n, 0);
    fdp__actions_builder_init(&ab);
    fdp__actions_add(&ab, FDP_ACT_PUSH_VLAN, 0x8100);
    struct fdp_actions *acts = fdp__actions_finish(&ab);
    ck_assert_int_eq(fdp__execute(acts, &pkt, 1, &rec_ops, &rec),
                     FDP__EXEC_NO_ROOM);
    ck_assert(!memcmp(before, pkt.data, b.n));
    fdp_actions_destroy(acts);
}
END_TEST

/* The full checksum against RFC 1071's worked example (section 3). */
START_TEST(rfc1071_example)
{
    static const uint8_t rfc1071[] = { 0x00, 0x01, 0xf2, 0x03,
                                       0xf4, 0xf5, 0xf6, 0xf7 };
    ck_assert_uint_eq(fdp__csum_add(0, rfc1071, sizeof rfc1071), 0xddf2);
    ck_assert_uint_eq(fdp__csum(0, rfc1071, sizeof rfc1071),
                      (uint16_t) ~0xddf2);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("execute");
    TCase *tc = unit_tcase(s, "execute");

    tcase_add_test(tc, random_actions);
    tcase_add_test(tc, output_sends_packet_so_far);
    tcase_add_test(tc, stops_at_ct_and_resumes);
    tcase_add_test(tc, tos_keeps_ecn);
    tcase_add_test(tc, no_headroom);
    tcase_add_test(tc, rfc1071_example);
    return unit_run(s);
}
