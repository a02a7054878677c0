/*
 * Tunnel tags: the datapath's exact caches and tunnelled packets.
 *
 * Theory of operation
 * ===================
 * The EMC keeps, per entry, the 12 packet words before nd_target (two
 * cache lines per entry) and the continuation cache every word up to the
 * connection-tracking ones (four lines); neither has room for the ten
 * tunnel words (key.h, words 31-40) that a decapsulated packet, or a
 * continuation whose pipeline set tun_id, carries.  Storing them would
 * add a line to every entry, and comparing them 80 bytes to every probe,
 * for the packets of every port.  Instead each pmd interns them: this
 * table maps a set of tunnel words to a 32-bit tag, and the caches keep
 * and compare the tag, in the low half of key word 5, which is conj_id's
 * and always zero in the keys the caches see (a packet arrives with
 * conj_id zero and a continuation starts with it zero: key.h,
 * lib/ct-action.h).  A packet without tunnel words has tag 0 and costs
 * the caches nothing more than before.
 *
 * Design: 256 sets of two ways, each an entry of the ten words, their
 * tag and hash; a lookup hashes the ten words (two multiply-xor lanes)
 * and compares two entries, about the cost of one EMC probe, once per
 * tunnelled packet.  Tunnels are few (a handful of remote endpoints,
 * VNIs and option values per pmd), so 512 entries hold them; a miss
 * takes the way with the older tag and gives the words the next tag.
 *
 * Invariant: a tag is given once.  Tags only grow, so a tag names at most
 * one set of words for the life of the pmd, and a cache entry keyed by
 * tag T matches only packets whose words were given T: exactly its own.
 * Words evicted and seen again get a new tag; entries with the old one
 * simply never match again.  When the counter would wrap (2^32 - 2 tags),
 * tunnelled packets are no longer cached (FDP__TUN_TAG_UNCACHED), which
 * is slower but never wrong.
 *
 * Thread-safety: one table per pmd, used by that pmd only.
 *
 * Worked example: a VXLAN packet with tun_id 5, tun_src 10.0.0.2,
 * tun_dst 10.0.0.1 arrives first: its words hash to set 17, both ways are
 * empty, so way 0 takes the words and tag 1.  The EMC is probed with the
 * packet's hash mixed with tag 1 and word 5 as (ipv6_label << 32) | 1;
 * it misses, the classifier answers, and the entry keeps word 5 with the
 * tag.  The next packet of the same tunnel and flow finds tag 1 in set 17
 * and hits the EMC entry; one of tun_id 6 gets tag 2 and its own entry.
 */
#include <config.h>

#include "datapath/tun-intern.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/field.h"

#define TUN_SETS 256
#define TUN_WAYS 2

struct tun_entry {
    uint64_t w[FDP__TUN_N_WORDS];
    uint32_t tag;               /* 0: empty. */
    uint32_t hash;
} __attribute__((aligned(32)));
static_assert(sizeof(struct tun_entry) == 96, "an entry is 96 bytes");

struct fdp__tun_intern {
    uint32_t next_tag;
    struct tun_entry e[TUN_SETS][TUN_WAYS];
};

#define TUN_K1 UINT64_C(0x9e3779b97f4a7c15)
#define TUN_K2 UINT64_C(0xc2b2ae3d27d4eb4f)

static uint32_t
tun_hash(const uint64_t *w)
{
    uint64_t a = TUN_K1, b = TUN_K2;

    for (size_t i = 0; i < FDP__TUN_N_WORDS; i += 2) {
        a = (a ^ w[i]) * TUN_K1;
        b = (b ^ w[i + 1]) * TUN_K2;
    }
    uint64_t h = a ^ (b >> 31) ^ (b << 33);
    h ^= h >> 32;
    h *= TUN_K2;
    return (uint32_t) (h >> 32);
}

static bool
words_equal(const uint64_t *a, const uint64_t *b)
{
    uint64_t d = 0;

    for (size_t i = 0; i < FDP__TUN_N_WORDS; i++) {
        d |= a[i] ^ b[i];
    }
    return !d;
}

uint32_t
fdp__tun_intern_tag(struct fdp__tun_intern **tp, const struct fdp_key *key)
{
    struct fdp__tun_intern *t = *tp;
    const uint64_t *w = &key->w[FDP__TUN_FIRST_WORD];

    if (!t) {
        /* aligned_alloc() takes a multiple of the alignment. */
        t = aligned_alloc(64, (sizeof *t + 63) & ~(size_t) 63);
        if (!t) {
            return FDP__TUN_TAG_UNCACHED;
        }
        memset(t, 0, sizeof *t);
        t->next_tag = 1;
        *tp = t;
    }
    uint32_t h = tun_hash(w);
    struct tun_entry *set = t->e[h % TUN_SETS];
    for (unsigned int way = 0; way < TUN_WAYS; way++) {
        if (set[way].tag && set[way].hash == h
            && words_equal(set[way].w, w)) {
            return set[way].tag;
        }
    }
    if (t->next_tag == FDP__TUN_TAG_UNCACHED) {
        return FDP__TUN_TAG_UNCACHED;
    }
    /* The empty way, else the one with the older tag. */
    struct tun_entry *v = !set[0].tag ? &set[0]
                          : !set[1].tag ? &set[1]
                          : set[0].tag < set[1].tag ? &set[0] : &set[1];
    memcpy(v->w, w, sizeof v->w);
    v->hash = h;
    v->tag = t->next_tag++;
    return v->tag;
}

void
fdp__tun_intern_destroy(struct fdp__tun_intern *t)
{
    free(t);
}
