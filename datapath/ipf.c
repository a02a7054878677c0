/*
 * IP fragment reassembly before connection tracking.
 *
 * Theory of operation
 * ===================
 *
 * What it is for
 * --------------
 * The tracker keys a connection by addresses and ports, but only the first
 * fragment of a fragmented packet carries the ports, and the tracker
 * refuses to guess: a fragment alone is +inv.  Open vSwitch's userspace
 * datapath (lib/ipf.c) therefore collects the fragments of a packet before
 * the ct action, reassembles the whole packet when all have arrived, runs
 * the tracker on it, and then sends the original fragments on, each with
 * the whole packet's ct result and with what NAT did to the whole packet
 * done to its headers.  This module does the same, with the same limits
 * and the same counters, for flowdp's datapath (datapath/ipf.h says how
 * the datapath calls it).
 *
 * Lists
 * -----
 * Fragments gather in lists keyed as Open vSwitch keys them: source and
 * destination address, IP identification (16 bits for IPv4, the 32-bit
 * identification of the IPv6 fragment header), Ethernet type, zone, the
 * caller's recirculation id, and for IPv4 the protocol (Open vSwitch
 * leaves it out for IPv6, whose later fragments do not say it).  A list
 * holds its fragments sorted by offset, each as [start, end] inclusive
 * byte offsets of the data it carries in the original packet.  A list is
 * complete when it has seen its first fragment (offset 0, more-fragments
 * set) and its last (offset > 0, more-fragments clear) and the sorted
 * ranges leave no gap (each end + 1 is the next start).
 *
 * What is refused (the fragment goes on to the tracker, which marks it
 * +inv, as Open vSwitch's does):
 *   - Malformed fragments: an IPv4 header under 20 bytes, a total length
 *     beyond the bytes there are, a bad header checksum; an IPv6 payload
 *     length beyond the bytes there are.
 *   - Too small: any fragment but the last whose IP packet (header
 *     included) is under the family's minimum (1200 bytes for IPv4, 1280
 *     for IPv6 by default, settable down to 400); counted "too small".
 *     Legitimate senders fragment at the path MTU, so tiny fragments are
 *     attacks (overlapping-fragment evasion, resource exhaustion).
 *   - Overlap: a fragment whose first or last data byte falls inside a
 *     fragment the list already holds (Open vSwitch's exact test, so a
 *     duplicate is an overlap too); counted "overlapped".  A fragment that
 *     strictly contains a held one passes that test, as in Open vSwitch,
 *     and then keeps the list from ever being complete: it expires.
 *   - Limits: when the module holds the maximum number of fragments (1000
 *     by default, at most 5000), or the list holds the most an IPv4 packet
 *     can have at the minimum size (ceil((65535 - 60) / (min - 60)), 58 by
 *     default; IPv6 lists are bounded by the total alone), or the family
 *     is disabled.
 *   - A list whose complete reassembly would exceed 65535 bytes of IPv4
 *     packet (or IPv6 payload) fails: it stays, refusing further
 *     fragments, until it expires.
 *
 * Lists expire 15 seconds after their first fragment; their fragments are
 * freed and counted "expired".  Open vSwitch instead sends them on marked
 * +inv through whichever ct action runs next, where any policy drops
 * them; flowdp's held fragments have left their batch and their place in
 * the pipeline, so it frees them.
 *
 * Reassembly
 * ----------
 * The whole packet lives in memory of its own (malloc), never in a
 * datapath frame: it can reach 64 KiB plus headers.  It is the first
 * fragment's Ethernet and IP headers followed by all the data.  For IPv4
 * the total length is set, more-fragments cleared and the header checksum
 * recomputed.  For IPv6 the fragment header is removed (the header before
 * it names what it named, the payload length shrinks by 8), which is what
 * RFC 8200 reassembly gives; Open vSwitch keeps the header with its
 * offset zeroed, which only its own parser reads.  The packet is then
 * parsed (fdp_packet_extract()) so that the tracker sees its key and
 * layout as for any packet.
 *
 * Sending on: after the tracker, each fragment takes the whole packet's
 * addresses (IPv4 header checksum updated incrementally, RFC 1624) and
 * the first fragment takes the first fragment's worth of the whole
 * packet's data: its transport header, with the ports and the checksum
 * NAT rewrote (the transport checksum covers the whole packet and lives in
 * the first fragment only).  Without NAT every byte is as it came.
 * Fragments go out in offset order, as Open vSwitch sends them.
 *
 * Memory
 * ------
 * A fragment the module holds is copied into a block of its own (its
 * bytes, key and layout) and the caller recycles the frame at once.  The
 * alternative, holding the datapath's frames, would tie up the port
 * pools' frames for up to 15 seconds (1000 fragments could starve a small
 * AF_XDP ring) and make expiry depend on the datapath's frame cache;
 * copying costs one copy in and one out per fragment, which Open vSwitch
 * pays too (dp_packet_clone()).  Memory is bounded by the fragment limit:
 * at most 5000 fragments of at most one frame each, plus their lists.
 *
 * Thread-safety
 * -------------
 * Open vSwitch takes one ipf_lock for everything, on every batch that
 * reaches a ct action.  Here a packet that is not a fragment reads its
 * key's ip_frag bits and nothing shared.  Lists live in 64 shards chosen
 * by a keyed hash (SipHash-1-3 under a random key, so that nobody can
 * aim all lists at one shard or one hash chain), each with its own mutex,
 * hash map and expiry queue: two pmds contend only when their fragments
 * hash to one shard.  The counters and the number of fragments held are
 * relaxed atomics; the settings are relaxed atomics read once per
 * fragment.  A completed list leaves its shard under the shard's lock and
 * belongs to the caller alone, with its reassembly, until freed.
 *
 * The copy of a fragment is made before its shard is locked, and the
 * reassembly (up to 64 KiB of copying) after the list has left the
 * shard, so that a shard's lock covers only list bookkeeping.
 *
 * Expiry: each shard keeps its lists in creation order; since every list
 * lives 15 seconds, that is expiry order.  A thread that locks a shard for
 * a fragment first frees the oldest list there if it has expired, and a
 * list that is found expired when a fragment arrives for it is freed and
 * started again; fdp__ipf_expire() walks all shards for the datapath's
 * background thread.
 *
 * Worked example
 * --------------
 * A 3000-byte UDP datagram (8-byte header, 2992 data) from 10.0.0.1 to
 * 10.0.0.2, IP id 7, sent over a 1500-byte MTU: three IPv4 fragments of
 * 1480, 1480 and 48 data bytes, at offsets 0 (more-fragments), 1480
 * (more-fragments) and 2960 (last).  Say the last comes first, in zone 5:
 * it is valid (a last fragment has no minimum size), its key (10.0.0.1,
 * 10.0.0.2, id 7, 0x0800, zone 5, proto 17) selects a shard, no list
 * exists, so one is made, state "last frag", ranges [2960, 3007].  The
 * first fragment (1500 bytes, over the 1200 minimum) adds [0, 1479]:
 * state "first/last frag", but 1479 + 1 != 2960, not complete.  The
 * middle one adds [1480, 2959]: the ranges meet, the list leaves its
 * shard, and the whole packet is 14 + 20 + 3008 bytes with total length
 * 3028.  The tracker sees a UDP packet, commits the connection and, with
 * nat(src=192.168.0.9), rewrites its source address and UDP checksum.
 * Postprocess writes 192.168.0.9 into all three fragments (each IPv4
 * checksum adjusted for the two changed words) and the first 1480 data
 * bytes of the whole packet into the first fragment (the UDP header with
 * its new checksum, and the unchanged data after it); the three go out in
 * the order 0, 1480, 2960 with ct_state=+new+trk+snat.
 *
 * References: Open vSwitch 3.1 lib/ipf.c; RFC 791, RFC 8200 section 4.5;
 * RFC 1624 (incremental checksum update).
 */
#include <config.h>

#include "datapath/ipf.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/datapath.h>
#include <flowdp/hash.h>

#include "datapath/bytes.h"
#include "lib/field.h"
#include "lib/hmap.h"
#include "lib/util.h"

/* IPv6 next-header values of the extension headers walked to find the
 * fragment header. */
enum {
    IPF_NH_HOPOPT = 0,
    IPF_NH_ROUTING = 43,
    IPF_NH_FRAGMENT = 44,
    IPF_NH_AH = 51,
    IPF_NH_DSTOPTS = 60,
};

enum {
    /* 64 shards: with two to a few dozen pmds, two of them meet on a
     * shard only when their fragments do, and the array (64 cache lines)
     * costs nothing next to the fragments. */
    IPF_N_SHARDS = 64,
    IPF_SHARD_SHIFT = 26,       /* 32 - log2(IPF_N_SHARDS). */

    IPV4_MAX_HDR = 60,
    IPV4_MAX_SIZE = 65535,      /* Total length's range. */
    IPV6_MAX_PAYLOAD = 65535,   /* Payload length's range. */

    /* Open vSwitch's IPF_IPV6_MAX_FRAG_LIST_SIZE: IPv6 lists are bounded
     * by the total number of fragments alone. */
    IPF_V6_MAX_LIST = 65535,

    /* Lists a thread frees from the head of a shard each time it locks it
     * for a fragment (Open vSwitch sends at most one expired list per
     * batch: bounded work on the packet path). */
    IPF_EXPIRE_PER_LOCK = 1,
};

static_assert(1u << (32 - IPF_SHARD_SHIFT) == IPF_N_SHARDS,
              "the shard index is the hash's top bits");

/* Open vSwitch's list states, with its names (ipf_state_name[]). */
enum ipf_state {
    IPF_UNUSED,
    IPF_REASS_FAIL,
    IPF_OTHER_SEEN,
    IPF_FIRST_SEEN,
    IPF_LAST_SEEN,
    IPF_FIRST_LAST_SEEN,
    IPF_COMPLETED,
    IPF_N_STATES
};

static const char *const ipf_state_names[IPF_N_STATES] = {
    "unused", "reassemble fail", "other frag", "first frag", "last frag",
    "first/last frag", "complete",
};

enum ipf_counter {
    IPF_C_ACCEPTED,
    IPF_C_COMPLETED,
    IPF_C_EXPIRED,
    IPF_C_TOO_SMALL,
    IPF_C_OVERLAP,
    IPF_C_PURGED,
    IPF_N_COUNTERS
};

/* A list's key, as words for the keyed hash and for comparison:
 *   0-1  source address (IPv4 in the low 32 bits of word 1)
 *   2-3  destination address
 *   4    recirc_id << 32 | identification
 *   5    dl_type << 32 | zone << 16 | nw_proto (0 for IPv6) */
struct ipf_key {
    uint64_t w[6];
};

/* One held fragment: a copy of the packet with its key and layout, and
 * where its parts are.  Offsets are from the start of the bytes. */
struct ipf_frag {
    struct fdp__pkt pkt;        /* 'data' points at 'bytes'. */
    int32_t start, end;         /* Data bytes carried, inclusive (end may
                                 * be start - 1 for an empty fragment). */
    uint32_t l3;                /* IP header. */
    uint32_t hdr_end;           /* IPv4: end of header; IPv6: the
                                 * fragment header. */
    uint32_t data;              /* First data byte. */
    uint32_t data_size;         /* Data bytes (without any padding). */
    uint32_t nh;                /* IPv6: the byte naming the fragment
                                 * header (the IPv6 header's next header
                                 * or an extension header's). */
    bool first, last;           /* Open vSwitch's ff and lf. */
    uint8_t bytes[];
};

struct fdp__ipf_list {
    struct fdp__hmap_node node;         /* In its shard's 'lists'. */
    struct fdp__ipf_list *older, *newer;  /* Its shard's expiry queue. */
    struct ipf_key key;
    uint64_t expiration;
    struct ipf_frag **frags;            /* Sorted by 'start'. */
    uint32_t n, cap;
    uint8_t state;                      /* enum ipf_state. */
    bool ipv6;
    bool postprocessed;
};

struct ipf_shard {
    pthread_mutex_t mutex;
    struct fdp__hmap lists;
    struct fdp__ipf_list *oldest, *newest;
} __attribute__((aligned(64)));

struct fdp__ipf {
    struct ipf_shard shards[IPF_N_SHARDS];
    struct fdp_hash_key hash_key;

    /* Settings: relaxed atomics, [0] IPv4 and [1] IPv6. */
    bool enabled[2];
    uint32_t min_frag[2];
    uint32_t max_v4_list;       /* From min_frag[0]. */
    uint32_t nfrag_max;

    /* Fragments held, in lists and in reassemblies not yet freed. */
    uint32_t nfrag;

    uint64_t counters[2][IPF_N_COUNTERS];
};

/* ---- Small helpers ---- */

static inline uint32_t
ld32(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void
st32(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline void
count(struct fdp__ipf *ipf, bool v6, enum ipf_counter c, uint64_t n)
{
    /* Many threads add: a locked add.  Fragments are rare enough that
     * per-thread counters would cost more memory than they save. */
    __atomic_fetch_add(&ipf->counters[v6][c], n, __ATOMIC_RELAXED);
}

static inline void
nfrag_sub(struct fdp__ipf *ipf, uint32_t n)
{
    __atomic_fetch_sub(&ipf->nfrag, n, __ATOMIC_RELAXED);
}

/* Reserves room for one more fragment under the limit, as Open vSwitch's
 * "nfrag >= nfrag_max: refuse" check, made atomic. */
static bool
nfrag_reserve(struct fdp__ipf *ipf)
{
    uint32_t max = ld32(&ipf->nfrag_max);
    uint32_t cur = ld32(&ipf->nfrag);

    do {
        if (cur >= max) {
            return false;
        }
    } while (!__atomic_compare_exchange_n(&ipf->nfrag, &cur, cur + 1, true,
                                          __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return true;
}

/* The most fragments an IPv4 list may hold at minimum size 'min': Open
 * vSwitch's max_v4_frag_list_size, the number of minimum-size fragments
 * with the largest header that make a 64 KiB packet. */
static uint32_t
max_v4_list(uint32_t min)
{
    uint32_t per = min > IPV4_MAX_HDR ? min - IPV4_MAX_HDR : 1;
    return (IPV4_MAX_SIZE - IPV4_MAX_HDR + per - 1) / per;
}

/* RFC 1624 equation 3: the checksum 'hc' after a 16-bit word changed from
 * 'old' to 'new' (Open vSwitch's recalc_csum16()). */
static uint16_t
csum_update16(uint16_t hc, uint16_t old, uint16_t new)
{
    uint32_t sum = (uint16_t) ~hc;

    sum += (uint16_t) ~old;
    sum += new;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t) ~sum;
}

/* ---- Life cycle ---- */

int
fdp__ipf_create(struct fdp__ipf **ipfp)
{
    struct fdp__ipf *ipf;

    *ipfp = NULL;
    if (posix_memalign((void **) &ipf, 64, sizeof *ipf)) {
        return ENOMEM;
    }
    memset(ipf, 0, sizeof *ipf);
    if (fdp_hash_random_key(&ipf->hash_key)) {
        free(ipf);
        return EIO;
    }
    for (size_t i = 0; i < IPF_N_SHARDS; i++) {
        pthread_mutex_init(&ipf->shards[i].mutex, NULL);
        fdp__hmap_init(&ipf->shards[i].lists);
    }
    ipf->enabled[0] = ipf->enabled[1] = true;
    ipf->min_frag[0] = FDP__IPF_V4_MIN_FRAG_DEFAULT;
    ipf->min_frag[1] = FDP__IPF_V6_MIN_FRAG_DEFAULT;
    ipf->max_v4_list = max_v4_list(FDP__IPF_V4_MIN_FRAG_DEFAULT);
    ipf->nfrag_max = FDP__IPF_MAX_FRAGS_DEFAULT;
    *ipfp = ipf;
    return 0;
}

static void
list_free_frags(struct fdp__ipf_list *list)
{
    for (uint32_t i = 0; i < list->n; i++) {
        free(list->frags[i]);
    }
    free(list->frags);
    free(list);
}

void
fdp__ipf_destroy(struct fdp__ipf *ipf)
{
    if (!ipf) {
        return;
    }
    for (size_t i = 0; i < IPF_N_SHARDS; i++) {
        struct ipf_shard *sh = &ipf->shards[i];
        struct fdp__ipf_list *list = sh->oldest;
        while (list) {
            struct fdp__ipf_list *next = list->newer;
            list_free_frags(list);
            list = next;
        }
        fdp__hmap_destroy(&sh->lists);
        pthread_mutex_destroy(&sh->mutex);
    }
    free(ipf);
}

/* ---- Parsing a fragment ---- */

/* What a fragment says about itself. */
struct frag_info {
    bool v6;
    bool first, last;
    int32_t start, end;
    uint32_t l3, hdr_end, data, data_size, nh;
    struct ipf_key key;
};

enum frag_class {
    FRAG_NOT,                   /* Not a fragment: the tracker's. */
    FRAG_BAD,                   /* A fragment the module refuses. */
    FRAG_OK,
};

/* Open vSwitch's ipf_is_valid_v4_frag() and ipf_v4_key_extract(). */
static enum frag_class
parse_v4(struct fdp__ipf *ipf, const struct fdp__pkt *pkt,
         struct frag_info *fi)
{
    const uint8_t *l3 = pkt->data + pkt->layout.l3;
    size_t l3_size = pkt->size - (size_t) pkt->layout.l3;

    if (l3_size < 20) {
        return FRAG_BAD;
    }
    uint16_t frag_off = fdp__get16(l3 + 6);
    if (!(frag_off & 0x3fff)) {
        return FRAG_NOT;        /* Neither more-fragments nor an offset. */
    }
    size_t tot_len = fdp__get16(l3 + 2);
    size_t ihl = (size_t) (l3[0] & 0xf) * 4;
    /* Open vSwitch requires the total length to be the bytes after the
     * Ethernet padding it strips, that is, at most the bytes there are. */
    if (tot_len > l3_size || ihl < 20 || ihl > tot_len) {
        return FRAG_BAD;
    }
    if (fdp__csum(0, l3, ihl) != 0) {
        return FRAG_BAD;
    }
    fi->v6 = false;
    fi->first = !(frag_off & 0x1fff) && (frag_off & 0x2000);
    fi->last = (frag_off & 0x1fff) && !(frag_off & 0x2000);
    if (!fi->last && tot_len < ld32(&ipf->min_frag[0])) {
        count(ipf, false, IPF_C_TOO_SMALL, 1);
        return FRAG_BAD;
    }
    fi->start = (int32_t) (frag_off & 0x1fff) * 8;
    fi->end = fi->start + (int32_t) (tot_len - ihl) - 1;
    fi->l3 = (uint32_t) pkt->layout.l3;
    fi->hdr_end = fi->data = fi->l3 + (uint32_t) ihl;
    fi->data_size = (uint32_t) (tot_len - ihl);
    fi->nh = 0;

    memset(&fi->key, 0, sizeof fi->key);
    fi->key.w[1] = fdp__get32(l3 + 12);
    fi->key.w[3] = fdp__get32(l3 + 16);
    fi->key.w[5] = (uint64_t) FDP_ETH_TYPE_IP << 32 | l3[9];
    fi->key.w[4] = fdp__get16(l3 + 4);
    return FRAG_OK;
}

/* Walks the IPv6 extension headers at 'l3' ('size' bytes) to the fragment
 * header: sets '*frag' to its offset and '*nh' to that of the byte naming
 * it.  False if there is none (or the chain is cut short before it).  The
 * headers that may precede a fragment header are hop-by-hop, routing,
 * destination options and AH (Open vSwitch's parse_ipv6_ext_hdrs()). */
static bool
v6_find_frag(const uint8_t *l3, size_t size, size_t *frag, size_t *nh)
{
    size_t ofs = 40;

    *nh = 6;
    for (;;) {
        uint8_t next = l3[*nh];
        size_t len;

        if (next == IPF_NH_FRAGMENT) {
            if (size - ofs < 8) {
                return false;
            }
            *frag = ofs;
            return true;
        }
        if (next != IPF_NH_HOPOPT && next != IPF_NH_ROUTING
            && next != IPF_NH_DSTOPTS && next != IPF_NH_AH) {
            return false;
        }
        if (size - ofs < 8) {
            return false;
        }
        len = next == IPF_NH_AH ? ((size_t) l3[ofs + 1] + 2) * 4
                                : ((size_t) l3[ofs + 1] + 1) * 8;
        if (len > size - ofs) {
            return false;
        }
        *nh = ofs;
        ofs += len;
    }
}

/* Open vSwitch's ipf_is_valid_v6_frag() and ipf_v6_key_extract(). */
static enum frag_class
parse_v6(struct fdp__ipf *ipf, const struct fdp__pkt *pkt,
         struct frag_info *fi)
{
    const uint8_t *l3 = pkt->data + pkt->layout.l3;
    size_t l3_size = pkt->size - (size_t) pkt->layout.l3;
    size_t frag, nh;

    if (l3_size < 40) {
        return FRAG_BAD;
    }
    size_t ip_size = 40 + (size_t) fdp__get16(l3 + 4);
    if (ip_size > l3_size) {
        return FRAG_BAD;
    }
    if (!v6_find_frag(l3, ip_size, &frag, &nh)) {
        return FRAG_NOT;
    }
    uint16_t offlg = fdp__get16(l3 + frag + 2);
    if (!(offlg & 0xfff9)) {
        return FRAG_NOT;        /* An atomic fragment: offset 0, no M. */
    }
    fi->v6 = true;
    fi->first = !(offlg & 0xfff8) && (offlg & 1);
    fi->last = (offlg & 0xfff8) && !(offlg & 1);
    if (!fi->last && ip_size < ld32(&ipf->min_frag[1])) {
        count(ipf, true, IPF_C_TOO_SMALL, 1);
        return FRAG_BAD;
    }
    fi->l3 = (uint32_t) pkt->layout.l3;
    fi->hdr_end = fi->l3 + (uint32_t) frag;
    fi->data = fi->hdr_end + 8;
    fi->data_size = (uint32_t) (ip_size - frag - 8);
    fi->nh = fi->l3 + (uint32_t) nh;
    fi->start = offlg & 0xfff8;
    fi->end = fi->start + (int32_t) fi->data_size - 1;

    memset(&fi->key, 0, sizeof fi->key);
    for (size_t i = 0; i < 2; i++) {
        fi->key.w[i] = (uint64_t) fdp__get32(l3 + 8 + 8 * i) << 32
                       | fdp__get32(l3 + 12 + 8 * i);
        fi->key.w[2 + i] = (uint64_t) fdp__get32(l3 + 24 + 8 * i) << 32
                           | fdp__get32(l3 + 28 + 8 * i);
    }
    fi->key.w[5] = (uint64_t) FDP_ETH_TYPE_IPV6 << 32;
    fi->key.w[4] = fdp__get32(l3 + frag + 4);
    return FRAG_OK;
}

/* ---- Lists (under their shard's mutex) ---- */

/* Sets the head of the shard's queue.  fdp__ipf_expire() peeks at it
 * without the lock, hence the atomic store. */
static inline void
set_oldest(struct ipf_shard *sh, struct fdp__ipf_list *list)
{
    __atomic_store_n(&sh->oldest, list, __ATOMIC_RELAXED);
}

static void
queue_remove(struct ipf_shard *sh, struct fdp__ipf_list *list)
{
    if (list->older) {
        list->older->newer = list->newer;
    } else {
        set_oldest(sh, list->newer);
    }
    if (list->newer) {
        list->newer->older = list->older;
    } else {
        sh->newest = list->older;
    }
    list->older = list->newer = NULL;
}

static void
queue_append(struct ipf_shard *sh, struct fdp__ipf_list *list)
{
    list->older = sh->newest;
    list->newer = NULL;
    if (sh->newest) {
        sh->newest->newer = list;
    } else {
        set_oldest(sh, list);
    }
    sh->newest = list;
}

/* Takes 'list' out of its shard. */
static void
list_detach(struct ipf_shard *sh, struct fdp__ipf_list *list)
{
    queue_remove(sh, list);
    fdp__hmap_remove(&sh->lists, &list->node);
}

/* Frees an expired list and its fragments, counting them. */
static void
list_expire(struct fdp__ipf *ipf, struct ipf_shard *sh,
            struct fdp__ipf_list *list)
{
    list_detach(sh, list);
    count(ipf, list->ipv6, IPF_C_EXPIRED, list->n);
    nfrag_sub(ipf, list->n);
    list_free_frags(list);
}

/* Frees up to 'budget' expired lists from the head of 'sh'. */
static uint32_t
shard_expire(struct fdp__ipf *ipf, struct ipf_shard *sh, uint64_t now,
             uint32_t budget)
{
    uint32_t n = 0;

    while (n < budget && sh->oldest && now > sh->oldest->expiration) {
        list_expire(ipf, sh, sh->oldest);
        n++;
    }
    return n;
}

static struct fdp__ipf_list *
list_find(struct ipf_shard *sh, const struct ipf_key *key, uint32_t hash)
{
    for (struct fdp__hmap_node *node
             = fdp__hmap_first_with_hash(&sh->lists, hash);
         node; node = fdp__hmap_next_with_hash(node->next, hash)) {
        struct fdp__ipf_list *list = CONTAINER_OF(node, struct fdp__ipf_list,
                                                  node);
        if (!memcmp(&list->key, key, sizeof *key)) {
            return list;
        }
    }
    return NULL;
}

/* Open vSwitch's ipf_is_frag_duped(): the new range's first or last byte
 * inside a held fragment's range. */
static bool
list_overlaps(const struct fdp__ipf_list *list, int32_t start, int32_t end)
{
    for (uint32_t i = 0; i < list->n; i++) {
        const struct ipf_frag *f = list->frags[i];
        if ((start >= f->start && start <= f->end)
            || (end >= f->start && end <= f->end)) {
            return true;
        }
    }
    return false;
}

/* Inserts 'f' in offset order; the array has room. */
static void
list_insert(struct fdp__ipf_list *list, struct ipf_frag *f)
{
    uint32_t i = list->n;

    while (i > 0 && list->frags[i - 1]->start > f->start) {
        list->frags[i] = list->frags[i - 1];
        i--;
    }
    list->frags[i] = f;
    list->n++;
}

/* Open vSwitch's ipf_list_state_transition(), without the reassembly. */
static enum ipf_state
next_state(enum ipf_state cur, bool first, bool last)
{
    switch (cur) {
    case IPF_UNUSED:
    case IPF_OTHER_SEEN:
        return first ? IPF_FIRST_SEEN : last ? IPF_LAST_SEEN
                                             : IPF_OTHER_SEEN;
    case IPF_FIRST_SEEN:
        return last ? IPF_FIRST_LAST_SEEN : IPF_FIRST_SEEN;
    case IPF_LAST_SEEN:
        return first ? IPF_FIRST_LAST_SEEN : IPF_LAST_SEEN;
    default:
        return cur;
    }
}

/* Open vSwitch's ipf_list_complete() on the sorted list. */
static bool
list_complete(const struct fdp__ipf_list *list)
{
    for (uint32_t i = 1; i < list->n; i++) {
        if (list->frags[i - 1]->end + 1 != list->frags[i]->start) {
            return false;
        }
    }
    return true;
}

/* Whether the complete list's whole packet fits its family's length
 * field (Open vSwitch's "unsupported big reassembled packet"). */
static bool
list_fits(const struct fdp__ipf_list *list)
{
    const struct ipf_frag *f0 = list->frags[0];
    uint64_t total = 0;

    for (uint32_t i = 0; i < list->n; i++) {
        total += list->frags[i]->data_size;
    }
    if (list->ipv6) {
        /* The unfragmentable extension headers, then the data. */
        return (f0->hdr_end - f0->l3 - 40) + total <= IPV6_MAX_PAYLOAD;
    }
    return (f0->hdr_end - f0->l3) + total <= IPV4_MAX_SIZE;
}

/* ---- Reassembly (the caller's, outside any lock) ---- */

/* Builds the whole packet of the complete 'list'.  NULL without memory. */
static struct fdp__ipf_reass *
reassemble(struct fdp__ipf_list *list, uint16_t zone)
{
    const struct ipf_frag *f0 = list->frags[0];
    size_t hdr = list->ipv6 ? f0->hdr_end : f0->data;
    size_t total = 0;

    for (uint32_t i = 0; i < list->n; i++) {
        total += list->frags[i]->data_size;
    }
    size_t size = hdr + total;
    size_t frags_size = list->n * sizeof(struct fdp__pkt);
    struct fdp__ipf_reass *r = malloc(sizeof *r + frags_size + size);
    if (!r) {
        return NULL;
    }
    memset(r, 0, sizeof *r);
    r->frags = (struct fdp__pkt *) (r + 1);
    r->list = list;
    r->zone = zone;
    r->ipv6 = list->ipv6;

    /* The first fragment's headers, then every fragment's data. */
    uint8_t *p = (uint8_t *) r->frags + frags_size;
    memcpy(p, f0->bytes, hdr);
    size_t at = hdr;
    for (uint32_t i = 0; i < list->n; i++) {
        const struct ipf_frag *f = list->frags[i];
        memcpy(p + at, f->bytes + f->data, f->data_size);
        at += f->data_size;
    }

    uint8_t *l3 = p + f0->l3;
    if (list->ipv6) {
        /* The header before the fragment header names what it named. */
        p[f0->nh] = f0->bytes[f0->hdr_end];
        fdp__put16(l3 + 4, (uint16_t) (size - f0->l3 - 40));
    } else {
        size_t ihl = f0->data - f0->l3;
        fdp__put16(l3 + 2, (uint16_t) (size - f0->l3));
        /* Keep DF and the reserved bit; no more fragments, offset 0. */
        fdp__put16(l3 + 6, fdp__get16(l3 + 6) & 0xc000);
        fdp__put16(l3 + 10, 0);
        fdp__put16(l3 + 10, fdp__csum(0, l3, ihl));
    }

    r->pkt.data = p;
    r->pkt.size = (uint32_t) size;
    r->pkt.headroom = 0;
    const struct fdp_key *k0 = &f0->pkt.key;
    fdp_packet_extract(p, size,
                       (uint32_t) fdp_key_get(k0, FDP_F_IN_PORT).lo,
                       &r->pkt.key, &r->pkt.layout);
    fdp_key_set(&r->pkt.key, FDP_F_PKT_MARK, fdp_key_get(k0, FDP_F_PKT_MARK));
    for (size_t w = FDP_KEY_PACKET_WORDS; w < FDP_KEY_WORDS; w++) {
        r->pkt.key.w[w] = k0->w[w];
    }
    return r;
}

/* Copies 'pkt' and what 'fi' says into a new block.  NULL without
 * memory. */
static struct ipf_frag *
frag_copy(const struct fdp__pkt *pkt, const struct frag_info *fi)
{
    struct ipf_frag *f = malloc(sizeof *f + pkt->size);

    if (!f) {
        return NULL;
    }
    memcpy(f->bytes, pkt->data, pkt->size);
    f->pkt = *pkt;
    f->pkt.data = f->bytes;
    f->pkt.headroom = 0;
    f->start = fi->start;
    f->end = fi->end;
    f->l3 = fi->l3;
    f->hdr_end = fi->hdr_end;
    f->data = fi->data;
    f->data_size = fi->data_size;
    f->nh = fi->nh;
    f->first = fi->first;
    f->last = fi->last;
    return f;
}

/* ---- Packet path ---- */

bool
fdp__ipf_enabled(const struct fdp__ipf *ipf)
{
    return __atomic_load_n(&ipf->enabled[0], __ATOMIC_RELAXED)
           || __atomic_load_n(&ipf->enabled[1], __ATOMIC_RELAXED);
}

/* Adds the fragment 'f' to its list in 'sh' (locked).  Returns true if it
 * is held (then '*done' is its list if the list is now complete and has
 * left the shard), false if refused ('f' is the caller's to free). */
static bool
shard_add(struct fdp__ipf *ipf, struct ipf_shard *sh, uint32_t hash,
          const struct frag_info *fi, struct ipf_frag *f, uint64_t now,
          struct fdp__ipf_list **done)
{
    struct fdp__ipf_list *list = list_find(sh, &fi->key, hash);

    *done = NULL;
    if (list && now > list->expiration) {
        /* Its time is up: the new fragment starts afresh. */
        list_expire(ipf, sh, list);
        list = NULL;
    }
    if (!list) {
        list = calloc(1, sizeof *list);
        if (!list) {
            return false;
        }
        /* Open vSwitch grows a list 4 fragments at a time. */
        list->cap = 4;
        list->frags = malloc(list->cap * sizeof *list->frags);
        if (!list->frags || fdp__hmap_insert(&sh->lists, &list->node, hash)) {
            free(list->frags);
            free(list);
            return false;
        }
        list->key = fi->key;
        list->ipv6 = fi->v6;
        list->state = IPF_UNUSED;
        list->expiration = now + FDP__IPF_LIST_TIMEOUT_MS;
        queue_append(sh, list);
    } else if (list->state == IPF_REASS_FAIL) {
        return false;
    }

    uint32_t max = fi->v6 ? IPF_V6_MAX_LIST : ld32(&ipf->max_v4_list);
    if (list->n >= max) {
        return false;
    }
    if (list_overlaps(list, fi->start, fi->end)) {
        count(ipf, fi->v6, IPF_C_OVERLAP, 1);
        return false;
    }
    if (list->n == list->cap) {
        uint32_t cap = list->cap * 2 < max ? list->cap * 2 : max;
        struct ipf_frag **frags = realloc(list->frags,
                                          cap * sizeof *frags);
        if (!frags) {
            return false;
        }
        list->frags = frags;
        list->cap = cap;
    }
    list_insert(list, f);
    count(ipf, fi->v6, IPF_C_ACCEPTED, 1);
    list->state = next_state(list->state, fi->first, fi->last);
    if (list->state == IPF_FIRST_LAST_SEEN && list_complete(list)) {
        if (list_fits(list)) {
            list->state = IPF_COMPLETED;
            list_detach(sh, list);
            *done = list;
        } else {
            list->state = IPF_REASS_FAIL;
        }
    }
    return true;
}

/* Offers one fragment to the module.  Returns true if held, with '*done'
 * as in shard_add(). */
static bool
take_fragment(struct fdp__ipf *ipf, const struct fdp__pkt *pkt,
              uint16_t zone, uint32_t recirc_id, uint64_t now,
              struct fdp__ipf_list **done)
{
    uint16_t dl_type = (uint16_t) fdp_key_get(&pkt->key, FDP_F_DL_TYPE).lo;
    struct frag_info fi;
    enum frag_class c;

    *done = NULL;
    if (pkt->layout.l3 < 0 || (size_t) pkt->layout.l3 >= pkt->size) {
        return false;
    }
    if (dl_type == FDP_ETH_TYPE_IP) {
        c = parse_v4(ipf, pkt, &fi);
    } else if (dl_type == FDP_ETH_TYPE_IPV6) {
        c = parse_v6(ipf, pkt, &fi);
    } else {
        return false;
    }
    if (c != FRAG_OK
        || !__atomic_load_n(&ipf->enabled[fi.v6], __ATOMIC_RELAXED)) {
        return false;
    }
    fi.key.w[4] |= (uint64_t) recirc_id << 32;
    fi.key.w[5] |= (uint64_t) zone << 16;

    if (!nfrag_reserve(ipf)) {
        return false;
    }
    struct ipf_frag *f = frag_copy(pkt, &fi);
    if (!f) {
        nfrag_sub(ipf, 1);
        return false;
    }

    uint32_t hash = fdp_hash_keyed(fi.key.w, FDP_ARRAY_SIZE(fi.key.w),
                                   &ipf->hash_key);
    struct ipf_shard *sh = &ipf->shards[hash >> IPF_SHARD_SHIFT];
    pthread_mutex_lock(&sh->mutex);
    shard_expire(ipf, sh, now, IPF_EXPIRE_PER_LOCK);
    bool held = shard_add(ipf, sh, hash, &fi, f, now, done);
    pthread_mutex_unlock(&sh->mutex);
    if (!held) {
        free(f);
        nfrag_sub(ipf, 1);
    }
    return held;
}

size_t
fdp__ipf_preprocess(struct fdp__ipf *ipf, struct fdp__pkt *const *pkts,
                    size_t n, const uint16_t *zones, uint16_t zone,
                    uint32_t recirc_id, uint64_t now_ms, bool *held,
                    struct fdp__ipf_reass **reass)
{
    size_t n_reass = 0;
    int enabled = -1;           /* Read at the first fragment. */

    for (size_t i = 0; i < n; i++) {
        const struct fdp__pkt *pkt = pkts[i];
        struct fdp__ipf_list *done;

        held[i] = false;
        /* The only test a packet that is not a fragment pays. */
        if (FDP_LIKELY(!(pkt->key.w[FDP__WORD_IP_FRAG]
                         & FDP__PUT(IP_FRAG, FDP_FRAG_ANY)))) {
            continue;
        }
        if (enabled < 0) {
            enabled = fdp__ipf_enabled(ipf);
        }
        if (!enabled) {
            /* As Open vSwitch: with both families off, fragments are not
             * even looked at (nor counted). */
            continue;
        }
        uint16_t z = zones ? zones[i] : zone;
        held[i] = take_fragment(ipf, pkt, z, recirc_id, now_ms, &done);
        if (done) {
            struct fdp__ipf_reass *r = reassemble(done, z);
            if (r) {
                reass[n_reass++] = r;
            } else {
                /* No memory for the whole packet: its fragments are
                 * lost, as if dropped after reassembly. */
                count(ipf, done->ipv6, IPF_C_PURGED, done->n);
                nfrag_sub(ipf, done->n);
                list_free_frags(done);
            }
        }
    }
    return n_reass;
}

void
fdp__ipf_postprocess(struct fdp__ipf *ipf, struct fdp__ipf_reass *r)
{
    struct fdp__ipf_list *list = r->list;
    const uint8_t *whole = r->pkt.data;
    const struct ipf_frag *f0 = list->frags[0];
    const uint8_t *wl3 = whole + f0->l3;
    /* Where the whole packet's data starts: after the first fragment's
     * headers, without the IPv6 fragment header. */
    uint32_t wdata = list->ipv6 ? f0->hdr_end : f0->data;

    for (uint32_t i = 0; i < list->n; i++) {
        struct ipf_frag *f = list->frags[i];
        uint8_t *l3 = f->bytes + f->l3;

        if (list->ipv6) {
            memcpy(l3 + 8, wl3 + 8, 32);
        } else {
            uint16_t csum = fdp__get16(l3 + 10);
            for (size_t w = 12; w < 20; w += 2) {
                uint16_t old = fdp__get16(l3 + w), new = fdp__get16(wl3 + w);
                if (old != new) {
                    csum = csum_update16(csum, old, new);
                    fdp__put16(l3 + w, new);
                }
            }
            fdp__put16(l3 + 10, csum);
        }
        if (f->start == 0) {
            memcpy(f->bytes + f->data, whole + wdata, f->data_size);
        }
        r->frags[i] = f->pkt;
    }
    r->n_frags = list->n;
    list->postprocessed = true;
    count(ipf, list->ipv6, IPF_C_COMPLETED, list->n);
}

void
fdp__ipf_reass_free(struct fdp__ipf *ipf, struct fdp__ipf_reass *r)
{
    if (!r) {
        return;
    }
    struct fdp__ipf_list *list = r->list;
    if (!list->postprocessed) {
        count(ipf, list->ipv6, IPF_C_PURGED, list->n);
    }
    nfrag_sub(ipf, list->n);
    list_free_frags(list);
    free(r);
}

/* ---- Expiry ---- */

uint32_t
fdp__ipf_expire(struct fdp__ipf *ipf, uint64_t now_ms, uint32_t budget)
{
    uint32_t n = 0;

    for (size_t i = 0; i < IPF_N_SHARDS && n < budget; i++) {
        struct ipf_shard *sh = &ipf->shards[i];
        /* An unlocked peek: a list appended meanwhile is not yet due. */
        if (!__atomic_load_n(&sh->oldest, __ATOMIC_RELAXED)) {
            continue;
        }
        pthread_mutex_lock(&sh->mutex);
        n += shard_expire(ipf, sh, now_ms, budget - n);
        pthread_mutex_unlock(&sh->mutex);
    }
    return n;
}

/* ---- Control ---- */

void
fdp__ipf_set_enabled(struct fdp__ipf *ipf, bool ipv6, bool enabled)
{
    __atomic_store_n(&ipf->enabled[ipv6], enabled, __ATOMIC_RELAXED);
}

int
fdp__ipf_set_min_frag(struct fdp__ipf *ipf, bool ipv6, uint32_t size)
{
    if (size < FDP__IPF_MIN_FRAG_LBOUND) {
        return EINVAL;
    }
    st32(&ipf->min_frag[ipv6], size);
    if (!ipv6) {
        st32(&ipf->max_v4_list, max_v4_list(size));
    }
    return 0;
}

int
fdp__ipf_set_max_nfrags(struct fdp__ipf *ipf, uint32_t n)
{
    if (n > FDP__IPF_MAX_FRAGS_UBOUND) {
        return EINVAL;
    }
    st32(&ipf->nfrag_max, n);
    return 0;
}

static void
proto_status(const struct fdp__ipf *ipf, bool v6,
             struct fdp__ipf_proto_status *s)
{
    const uint64_t *c = ipf->counters[v6];

    s->enabled = __atomic_load_n(&ipf->enabled[v6], __ATOMIC_RELAXED);
    s->min_frag_size = ld32(&ipf->min_frag[v6]);
    s->n_accepted = __atomic_load_n(&c[IPF_C_ACCEPTED], __ATOMIC_RELAXED);
    s->n_completed = __atomic_load_n(&c[IPF_C_COMPLETED], __ATOMIC_RELAXED);
    s->n_expired = __atomic_load_n(&c[IPF_C_EXPIRED], __ATOMIC_RELAXED);
    s->n_too_small = __atomic_load_n(&c[IPF_C_TOO_SMALL], __ATOMIC_RELAXED);
    s->n_overlap = __atomic_load_n(&c[IPF_C_OVERLAP], __ATOMIC_RELAXED);
    s->n_purged = __atomic_load_n(&c[IPF_C_PURGED], __ATOMIC_RELAXED);
}

void
fdp__ipf_get_status(const struct fdp__ipf *ipf, struct fdp__ipf_status *s)
{
    proto_status(ipf, false, &s->v4);
    proto_status(ipf, true, &s->v6);
    s->nfrag = ld32(&ipf->nfrag);
    s->nfrag_max = ld32(&ipf->nfrag_max);
}

void
fdp__ipf_dump(struct fdp__ipf *ipf,
              bool (*cb)(const struct fdp__ipf_list_info *, void *aux),
              void *aux)
{
    for (size_t i = 0; i < IPF_N_SHARDS; i++) {
        struct ipf_shard *sh = &ipf->shards[i];
        struct fdp__ipf_list_info *infos = NULL;
        size_t n = 0;

        /* Copied under the lock, reported after it, so that a callback
         * never runs with a shard locked. */
        pthread_mutex_lock(&sh->mutex);
        if (sh->lists.n) {
            infos = malloc(sh->lists.n * sizeof *infos);
        }
        for (struct fdp__ipf_list *l = sh->oldest; l && infos;
             l = l->newer) {
            struct fdp__ipf_list_info *in = &infos[n++];
            memset(in, 0, sizeof *in);
            in->ipv6 = l->ipv6;
            for (size_t k = 0; k < 2; k++) {
                for (size_t b = 0; b < 8; b++) {
                    in->src[8 * k + b] = (uint8_t) (l->key.w[k] >> (56 - 8 * b));
                    in->dst[8 * k + b]
                        = (uint8_t) (l->key.w[2 + k] >> (56 - 8 * b));
                }
            }
            if (!l->ipv6) {
                /* The IPv4 address is the low half of word 1. */
                memmove(in->src, in->src + 12, 4);
                memmove(in->dst, in->dst + 12, 4);
                memset(in->src + 4, 0, 12);
                memset(in->dst + 4, 0, 12);
            }
            in->recirc_id = (uint32_t) (l->key.w[4] >> 32);
            in->ip_id = (uint32_t) l->key.w[4];
            in->zone = (uint16_t) (l->key.w[5] >> 16);
            in->nw_proto = (uint8_t) l->key.w[5];
            in->n_frags = l->n;
            in->state = ipf_state_names[l->state];
        }
        pthread_mutex_unlock(&sh->mutex);
        for (size_t k = 0; k < n; k++) {
            if (!cb(&infos[k], aux)) {
                free(infos);
                return;
            }
        }
        free(infos);
    }
}
