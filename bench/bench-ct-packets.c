/*
 * flowdp-bench ct suite: connections and frames (see bench-ct-packets.h
 * for what they are and why).
 */
#include <config.h>

#include "bench/bench-ct-packets.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Frame layout: Ethernet (14 bytes), IPv4 without options (20), then UDP
 * (8) with an 18-byte payload, which makes the 60-byte Ethernet minimum,
 * or TCP without options (20) and no payload. */
enum {
    ETH_LEN = 14,
    IP_LEN = 20,
    UDP_HDR_LEN = 8,
    UDP_PAYLOAD_LEN = 18,
    TCP_HDR_LEN = 20,
    UDP_FRAME_LEN = ETH_LEN + IP_LEN + UDP_HDR_LEN + UDP_PAYLOAD_LEN,
    TCP_FRAME_LEN = ETH_LEN + IP_LEN + TCP_HDR_LEN,
};
_Static_assert(UDP_FRAME_LEN <= BENCH_CT_SLOT_SIZE
               && TCP_FRAME_LEN <= BENCH_CT_SLOT_SIZE,
               "every frame fits its slot");

#define N_SERVERS 16                /* 172.16.0.1 to 172.16.0.16. */
#define CLIENT_BASE 0x0a000000u     /* 10.0.0.0 */
#define SERVER_BASE 0xac100001u     /* 172.16.0.1 */
#define CONNS_PER_CLIENT 8          /* The low 3 bits of the client port. */
#define EPHEMERAL_MIN 32768         /* Linux's ip_local_port_range. */
#define EPHEMERAL_MAX 60999
#define TCP_WINDOW 65535            /* No window scaling: the largest. */

enum tcp_flags { TCP_SYN = 0x02, TCP_ACK = 0x10 };

/* splitmix64's finaliser: a bijective mix of 'x', so distinct (seed, i)
 * give unrelated values. */
static uint64_t
mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

void
bench_ct_conn_get(uint64_t seed, uint64_t i, enum bench_ct_proto proto,
                  struct bench_ct_conn *c)
{
    uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ull + i);
    /* Ports whose low bits are i % 8 in the ephemeral range: (max - min +
     * 1) / 8 choices of the high bits. */
    uint32_t n_high = (EPHEMERAL_MAX - EPHEMERAL_MIN + 1) / CONNS_PER_CLIENT;

    c->client = CLIENT_BASE + (uint32_t) (i / CONNS_PER_CLIENT);
    c->client_port = (uint16_t) (EPHEMERAL_MIN
                                 + (h % n_high) * CONNS_PER_CLIENT
                                 + i % CONNS_PER_CLIENT);
    c->server = SERVER_BASE + (uint32_t) ((h >> 32) % N_SERVERS);
    c->server_port = proto == BENCH_CT_UDP ? 53 : 80;
    uint64_t h2 = mix64(h);
    c->client_isn = (uint32_t) h2;
    c->server_isn = (uint32_t) (h2 >> 32);
}

/* ---------------------------------------------------------------------- */
/* Frames.                                                                 */

static void
put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

static void
put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t) (v >> 16));
    put16(p + 2, (uint16_t) v);
}

/* The ones' complement sum of 'n' bytes at 'p' added to 'sum' (RFC 1071),
 * not yet folded. */
static uint32_t
csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
    for (size_t k = 0; k + 1 < n; k += 2) {
        sum += (uint32_t) p[k] << 8 | p[k + 1];
    }
    if (n & 1) {
        sum += (uint32_t) p[n - 1] << 8;
    }
    return sum;
}

static uint16_t
csum_fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t) ~sum;
}

/* Writes one frame from 'src':'sport' to 'dst':'dport' into 'f'; for TCP
 * 'seq', 'ack' and 'flags' fill the header.  Returns its length. */
static size_t
write_frame(uint8_t *f, enum bench_ct_proto proto, bool reply,
            uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
            uint32_t seq, uint32_t ack, uint8_t flags)
{
    /* Two locally administered MACs, the client's and the server's. */
    static const uint8_t mac_client[6] = { 0x50, 0x54, 0x00, 0x00, 0x00, 0x09 };
    static const uint8_t mac_server[6] = { 0x50, 0x54, 0x00, 0x00, 0x00, 0x0a };
    size_t l4_len = proto == BENCH_CT_UDP ? UDP_HDR_LEN + UDP_PAYLOAD_LEN
                                          : TCP_HDR_LEN;
    uint8_t *ip = f + ETH_LEN, *l4 = ip + IP_LEN;

    memset(f, 0, BENCH_CT_SLOT_SIZE);
    memcpy(f, reply ? mac_client : mac_server, 6);
    memcpy(f + 6, reply ? mac_server : mac_client, 6);
    put16(f + 12, 0x0800);

    ip[0] = 0x45;                       /* IPv4, 5 words of header. */
    put16(ip + 2, (uint16_t) (IP_LEN + l4_len));
    put16(ip + 6, 0x4000);              /* Don't fragment. */
    ip[8] = 64;                         /* TTL. */
    ip[9] = proto == BENCH_CT_UDP ? 17 : 6;
    put32(ip + 12, src);
    put32(ip + 16, dst);
    put16(ip + 10, csum_fold(csum_add(0, ip, IP_LEN)));

    put16(l4, sport);
    put16(l4 + 2, dport);
    if (proto == BENCH_CT_UDP) {
        put16(l4 + 4, (uint16_t) l4_len);
        for (size_t k = 0; k < UDP_PAYLOAD_LEN; k++) {
            l4[UDP_HDR_LEN + k] = (uint8_t) k;
        }
    } else {
        put32(l4 + 4, seq);
        put32(l4 + 8, ack);
        l4[12] = (TCP_HDR_LEN / 4) << 4;
        l4[13] = flags;
        put16(l4 + 14, TCP_WINDOW);
    }
    /* The pseudo-header: addresses, protocol, L4 length. */
    uint32_t sum = csum_add(0, ip + 12, 8) + ip[9] + (uint32_t) l4_len;
    uint16_t csum = csum_fold(csum_add(sum, l4, l4_len));
    if (proto == BENCH_CT_UDP && !csum) {
        csum = 0xffff;                  /* 0 means "none" in UDP. */
    }
    put16(l4 + (proto == BENCH_CT_UDP ? 6 : 16), csum);
    return ETH_LEN + IP_LEN + l4_len;
}

/* The frames of connection 'c' (see bench-ct-packets.h).  'step' 0 is the
 * client's first packet, 1 the server's answer, 2 (TCP) the client's ACK;
 * 3 an established packet from the client, 4 one from the server. */
static size_t
conn_frame(uint8_t *f, enum bench_ct_proto proto,
           const struct bench_ct_conn *c, int step)
{
    uint32_t cseq = c->client_isn, sseq = c->server_isn;
    bool from_server = step == 1 || step == 4;
    uint32_t seq = 0, ack = 0;
    uint8_t flags = TCP_ACK;

    switch (step) {
    case 0:
        seq = cseq;
        flags = TCP_SYN;
        break;
    case 1:
        seq = sseq;
        ack = cseq + 1;
        flags = TCP_SYN | TCP_ACK;
        break;
    case 2:
    case 3:
        seq = cseq + 1;
        ack = sseq + 1;
        break;
    default:
        seq = sseq + 1;
        ack = cseq + 1;
        break;
    }
    return from_server
           ? write_frame(f, proto, true, c->server, c->server_port, c->client,
                         c->client_port, seq, ack, flags)
           : write_frame(f, proto, false, c->client, c->client_port,
                         c->server, c->server_port, seq, ack, flags);
}

static int
frames_alloc(struct bench_ct_frames *f, size_t n, enum bench_ct_proto proto)
{
    /* Cache-line aligned, so that each frame is one line. */
    f->data = NULL;
    if (posix_memalign((void **) &f->data, BENCH_CT_SLOT_SIZE,
                       (n ? n : 1) * BENCH_CT_SLOT_SIZE)) {
        return ENOMEM;
    }
    f->n = f->capacity = n;
    f->len = proto == BENCH_CT_UDP ? UDP_FRAME_LEN : TCP_FRAME_LEN;
    return 0;
}

size_t
bench_ct_setup_frames_per_conn(enum bench_ct_proto proto)
{
    return proto == BENCH_CT_UDP ? 2 : 3;
}

int
bench_ct_setup_frames(uint64_t seed, enum bench_ct_proto proto,
                      size_t first, size_t n_conns, struct bench_ct_frames *f)
{
    size_t per = bench_ct_setup_frames_per_conn(proto);

    if (frames_alloc(f, n_conns * per, proto)) {
        return ENOMEM;
    }
    return bench_ct_setup_frames_refill(seed, proto, first, n_conns, f);
}

int
bench_ct_setup_frames_refill(uint64_t seed, enum bench_ct_proto proto,
                             size_t first, size_t n_conns,
                             struct bench_ct_frames *f)
{
    size_t per = bench_ct_setup_frames_per_conn(proto);

    if (n_conns * per > f->capacity) {
        return EINVAL;
    }
    f->n = n_conns * per;
    f->len = proto == BENCH_CT_UDP ? UDP_FRAME_LEN : TCP_FRAME_LEN;
    for (size_t i = 0; i < n_conns; i++) {
        struct bench_ct_conn c;
        bench_ct_conn_get(seed, first + i, proto, &c);
        for (size_t s = 0; s < per; s++) {
            conn_frame(f->data + (i * per + s) * BENCH_CT_SLOT_SIZE, proto,
                       &c, (int) s);
        }
    }
    return 0;
}

int
bench_ct_est_frames(uint64_t seed, enum bench_ct_proto proto, size_t n_conns,
                    size_t n_frames, struct bench_ct_frames *f)
{
    if (frames_alloc(f, n_frames, proto)) {
        return ENOMEM;
    }
    for (size_t k = 0; k < n_frames; k++) {
        /* Which connection and direction: a hash of k in another family
         * than the connections'. */
        uint64_t r = mix64(~seed * 0x9e3779b97f4a7c15ull + k);
        struct bench_ct_conn c;
        bench_ct_conn_get(seed, (r >> 1) % (n_conns ? n_conns : 1), proto,
                          &c);
        conn_frame(f->data + k * BENCH_CT_SLOT_SIZE, proto, &c,
                   r & 1 ? 4 : 3);
    }
    return 0;
}

int
bench_ct_new_frames(uint64_t seed, enum bench_ct_proto proto, size_t n_conns,
                    struct bench_ct_frames *f)
{
    if (frames_alloc(f, n_conns, proto)) {
        return ENOMEM;
    }
    for (size_t i = 0; i < n_conns; i++) {
        struct bench_ct_conn c;
        bench_ct_conn_get(seed, i, proto, &c);
        conn_frame(f->data + i * BENCH_CT_SLOT_SIZE, proto, &c, 0);
    }
    return 0;
}

void
bench_ct_frames_destroy(struct bench_ct_frames *f)
{
    if (f) {
        free(f->data);
        f->data = NULL;
        f->n = f->capacity = 0;
    }
}
