/*
 * flowdp-bench suite "extract": the packet parser, ns per packet.
 *
 * Cases (each over 256 packets of one shape that differ in addresses and
 * ports, walked in order so that the data stays in L1 as it does in a
 * poll batch):
 *   udp4-64      UDP over IPv4, a 64-byte frame;
 *   tcp6         TCP over IPv6, 74 bytes (no options);
 *   vlan-udp4    an 802.1Q tag, then UDP over IPv4, 68 bytes;
 *   arp          an ARP request, 60 bytes (padded).
 * Implementations:
 *   extract       fdp_packet_extract() alone;
 *   extract+hash  fdp_packet_extract() then fdp_hash_fast() over the key,
 *                 the two passes the datapath made before;
 *   extract-hash  fdp__packet_extract_hash(), one pass.
 * Throughput: consecutive packets are independent, as in a batch.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/extract-internal.h"
#include <flowdp/datapath.h>
#include <flowdp/hash.h>
#include "lib/util.h"
#include "bench/bench.h"
#include "utilities/tool.h"

#define N_PKTS 256
#define PKT_ROOM 128

struct extract_bench {
    uint8_t pkts[N_PKTS][PKT_ROOM];
    size_t sizes[N_PKTS];
    uint32_t basis;
};

static size_t
put16(uint8_t *p, size_t o, uint16_t v)
{
    p[o] = (uint8_t) (v >> 8);
    p[o + 1] = (uint8_t) v;
    return o + 2;
}

static size_t
put32(uint8_t *p, size_t o, uint32_t v)
{
    o = put16(p, o, (uint16_t) (v >> 16));
    return put16(p, o, (uint16_t) v);
}

/* Ethernet header with addresses from 'r'; returns the next offset. */
static size_t
eth(uint8_t *p, uint64_t r, uint16_t type)
{
    for (int i = 0; i < 6; i++) {
        p[i] = (uint8_t) (r >> (8 * i));
        p[6 + i] = (uint8_t) (r >> (8 * i + 16));
    }
    p[0] &= 0xfe;
    return put16(p, 12, type);
}

static size_t
ipv4(uint8_t *p, size_t o, uint64_t r, uint8_t proto, uint16_t total)
{
    p[o] = 0x45;
    p[o + 1] = 0;
    put16(p, o + 2, total);
    put32(p, o + 4, 0);
    p[o + 8] = 64;
    p[o + 9] = proto;
    put16(p, o + 10, 0);
    put32(p, o + 12, 0x0a000000u | (uint32_t) (r & 0xffffff));
    put32(p, o + 16, 0x0a000000u | (uint32_t) ((r >> 24) & 0xffffff));
    return o + 20;
}

static size_t
udp(uint8_t *p, size_t o, uint64_t r)
{
    o = put16(p, o, (uint16_t) (r >> 40));
    o = put16(p, o, (uint16_t) (r >> 56));
    o = put16(p, o, 8);
    return put16(p, o, 0);
}

static size_t
build(uint8_t *p, const char *shape, uint64_t r)
{
    size_t o;

    memset(p, 0, PKT_ROOM);
    if (!strcmp(shape, "udp4-64")) {
        o = eth(p, r, 0x0800);
        o = ipv4(p, o, r, 17, 50);
        udp(p, o, r);
        return 64;
    } else if (!strcmp(shape, "vlan-udp4")) {
        o = eth(p, r, 0x8100);
        o = put16(p, o, (uint16_t) (r & 0x0fff));
        o = put16(p, o, 0x0800);
        o = ipv4(p, o, r, 17, 50);
        udp(p, o, r);
        return 68;
    } else if (!strcmp(shape, "tcp6")) {
        o = eth(p, r, 0x86dd);
        o = put32(p, o, 0x60000000u | (uint32_t) (r & 0xfffff));
        o = put16(p, o, 20);
        p[o++] = 6;
        p[o++] = 64;
        for (int i = 0; i < 32; i++) {
            p[o++] = (uint8_t) (r >> (i % 8 * 8)) ^ (uint8_t) i;
        }
        o = put16(p, o, (uint16_t) (r >> 40));
        o = put16(p, o, (uint16_t) (r >> 56));
        o = put32(p, o, 1);
        o = put32(p, o, 0);
        o = put16(p, o, 0x5010);
        put16(p, o, 1000);
        return 74;
    } else {
        o = eth(p, r, 0x0806);
        o = put16(p, o, 1);
        o = put16(p, o, 0x0800);
        p[o++] = 6;
        p[o++] = 4;
        o = put16(p, o, 1);
        memcpy(p + o, p + 6, 6);
        o += 6;
        o = put32(p, o, 0x0a000000u | (uint32_t) (r & 0xffffff));
        o += 6;
        put32(p, o, 0x0a000000u | (uint32_t) ((r >> 24) & 0xffffff));
        return 60;
    }
}

static uint64_t
run_extract(void *arg, uint64_t n)
{
    struct extract_bench *eb = arg;
    struct fdp_key key;
    uint64_t acc = 0;

    for (uint64_t i = 0; i < n; i++) {
        size_t k = i % N_PKTS;
        fdp_packet_extract(eb->pkts[k], eb->sizes[k], 1, &key, NULL);
        acc += key.w[1];
    }
    sink = acc;
    return n;
}

static uint64_t
run_extract_then_hash(void *arg, uint64_t n)
{
    struct extract_bench *eb = arg;
    struct fdp_key key;
    uint64_t acc = 0;

    for (uint64_t i = 0; i < n; i++) {
        size_t k = i % N_PKTS;
        fdp_packet_extract(eb->pkts[k], eb->sizes[k], 1, &key, NULL);
        acc += fdp_hash_fast(key.w, FDP_KEY_PACKET_WORDS, eb->basis);
    }
    sink = acc;
    return n;
}

static uint64_t
run_extract_hash(void *arg, uint64_t n)
{
    struct extract_bench *eb = arg;
    struct fdp_key key;
    uint64_t acc = 0;

    for (uint64_t i = 0; i < n; i++) {
        size_t k = i % N_PKTS;
        acc += fdp__packet_extract_hash(eb->pkts[k], eb->sizes[k], 1,
                                        eb->basis, &key, NULL);
    }
    sink = acc;
    return n;
}

void
suite_extract(void)
{
    static const char *const shapes[] = { "udp4-64", "tcp6", "vlan-udp4",
                                          "arp" };
    static const struct {
        const char *name;
        uint64_t (*fn)(void *, uint64_t);
    } impls[] = {
        { "extract", run_extract },
        { "extract+hash", run_extract_then_hash },
        { "extract-hash", run_extract_hash },
    };
    struct extract_bench *eb = malloc(sizeof *eb);

    if (!eb) {
        fatal("extract: out of memory");
    }
    eb->basis = 0x5bd1e995u;
    report_header("extract");
    for (size_t s = 0; s < FDP_ARRAY_SIZE(shapes); s++) {
        uint64_t seed = 0x2545f4914f6cdd1dull + s;
        for (size_t k = 0; k < N_PKTS; k++) {
            eb->sizes[k] = build(eb->pkts[k], shapes[s], rnd64(&seed));
        }
        for (size_t i = 0; i < FDP_ARRAY_SIZE(impls); i++) {
            struct result r = {
                .suite = "extract", .case_name = shapes[s],
                .impl = impls[i].name, .entries = N_PKTS,
                .ns_per_op = measure(impls[i].fn, eb),
                .bytes = eb->sizes[0],
            };
            report(&r);
        }
    }
    free(eb);
}
